"""Repeated requests on a cluster: tidy latency tables, and the matching simulation.

Request r draws its K inputs and its injection plan from ``default_rng([seed, r, ...])`` and runs every
scheme on them in turn (the same inputs, straggler draws and load drift). The simulation replays the
same plans with the waits added up (no Dask): measured minus simulated is what the real system adds.
"""
from __future__ import annotations

from numbers import Integral, Real
from typing import Any, Callable, Mapping

import numpy as np

from gcc.backend import to_numpy
from gcc.distributed.cluster import SECONDS, check_client, worker_addresses
from gcc.distributed.coded import CODE, DeadlineError, coded_compute
from gcc.distributed.inject import Injection
from gcc.metrics import mse_loss
from gcc.validation import (COLUMNS, SEED, ArrayLike, Callable as CallableC, Frame, InstanceOf, Interval, NoneOr,
                            Satisfies, check_int, invalid, validate, validate_params)

#: busy times of the tasks: real, never NaN (``inf`` marks a worker that dies)
_TASK_S = ArrayLike(ndim=1, dtype=float, description="a 1-D array of task times in seconds (>= 0, inf "
                                                    "for a worker that dies)")

#: what :func:`run_requests` runs
_SCHEMES = Satisfies(lambda v: isinstance(v, Mapping) and bool(v) and all(
    isinstance(k, str) and isinstance(a, Mapping) and "code" in a for k, a in v.items()),
    "a non-empty dict {scheme name (str): {'code': code, ...}} of coded_compute's keyword arguments")

__all__ = ["run_requests", "simulated_completion", "summarize_latency", "LATENCY_COLUMNS",
           "LATENCY_SUMMARY_COLUMNS"]

#: columns every table of :func:`run_requests` has
LATENCY_COLUMNS = ("scheme", "n_workers", "n_inputs", "request", "latency_s", "workers_used", "loss")
#: columns :func:`summarize_latency` adds to the grouping columns (the ``simulated_*`` and
#: ``overhead_*`` ones only when the table has ``simulated_s`` and ``overhead_s``)
LATENCY_SUMMARY_COLUMNS = ("n_requests", "n_failed", "latency_p50_ms", "latency_p99_ms", "latency_mean_ms",
                           "simulated_p50_ms", "simulated_p99_ms", "overhead_p50_ms",
                           "loss_mean", "loss_ci_low", "loss_ci_high")


def _loss(est, true) -> float:
    # Eq. (1) on the host in float64, whatever the workers computed in (torch float32 for a DNN).
    return float(mse_loss(np.asarray(to_numpy(est), dtype=float), np.asarray(to_numpy(true), dtype=float)))


def simulated_completion(code, task_s: np.ndarray, n_wait: int | None = None) -> float:
    """The first arrival time (``inf`` if none) at which ``code`` could decode, the tasks taking ``task_s``.

    ``task_s``, shape (N,): busy seconds per task (``inf``: the worker dies). The condition is the
    code's ``is_decodable`` if it has one, else ``n_wait`` results (default N; at least the code's K).
    """
    owner = "simulated_completion"
    code = validate(code, CODE, "code", owner)
    task_s = validate(task_s, _TASK_S, "task_s", owner)
    if np.isnan(task_s).any() or (task_s < 0).any():
        raise invalid("task_s", owner, _TASK_S, task_s)
    n = code.n_workers
    if len(task_s) != n:
        raise invalid("task_s", owner, f"one time per worker of the code (n_workers = {n})", task_s,
                      f"it has {len(task_s)}")
    k = getattr(code, "n_inputs", 1)
    need = n if n_wait is None else check_int(n_wait, "n_wait", owner, k, n,
                                              constraint=f"an int in [n_inputs, n_workers] = [{k}, {n}]")
    decodable = getattr(code, "is_decodable", None)
    order = np.argsort(task_s, kind="stable")
    for m in range(1, len(order) + 1):
        if not np.isfinite(task_s[order[m - 1]]):
            break
        if decodable(np.sort(order[:m])) if decodable is not None else m >= need:
            return float(task_s[order[m - 1]])
    return float("inf")


@validate_params({"schemes": _SCHEMES, "n_requests": Interval(Integral, 1, None), "warmup": Interval(Integral, 0, None),
                  "timeout": SECONDS, "make_batch": CallableC(), "f": CallableC(), "seed": SEED,
                  "injection": NoneOr(InstanceOf(Injection, "an Injection")), "exact": NoneOr(CallableC()),
                  "score": NoneOr(CallableC())})
def run_requests(client, schemes: Mapping[str, Mapping[str, Any]], make_batch: Callable[[np.random.Generator], Any],
                 f: Callable, *, n_requests: int, injection: Injection | None = None, seed: int = 0,
                 warmup: int = 1, timeout: float = 60.0, exact: Callable | None = None,
                 score: Callable | None = None):
    """Run ``n_requests`` requests of every scheme; one tidy row per (scheme, request).

    Parameters
    ----------
    client : distributed.Client
    schemes : mapping of str to mapping
        Scheme name to keyword arguments of :func:`~gcc.distributed.coded_compute` (with ``code``).
    make_batch : callable
        ``make_batch(rng) -> X`` of shape (K, ...): the inputs of one request.
    f : callable
        What the workers compute (numpy, torch, or a :class:`~gcc.distributed.ModelRef`).
    n_requests : int
        Measured requests per scheme.
    injection : Injection, optional
        Straggler scenario; its worker positions refer to the sorted cluster workers.
    seed : int
        Request ``r`` uses ``default_rng([seed, r])`` for its batch and its plan.
    warmup : int
        Unrecorded requests first (imports, first connections, worker clients).
    timeout : float
        Per-request bound when the scheme has no deadline.
    exact : callable, optional
        Computes the exact ``f(X)`` at the master for the loss (default ``f``).
    score : callable, optional
        ``score(estimates, exact_outputs, labels) -> dict`` of extra columns per decoded request (NaN
        if it failed); ``make_batch(rng)`` then returns ``(X, labels)``.

    Returns
    -------
    pandas.DataFrame
        :data:`LATENCY_COLUMNS`, ``n_coded`` (N), ``simulated_s``, the timings and byte counts of
        :class:`~gcc.distributed.CodedResult`, ``received``, ``error`` (a :class:`DeadlineError`'s
        message) and the columns of ``score``.
    """
    import pandas as pd

    owner = "run_requests"
    exact = exact or f
    addresses = worker_addresses(check_client(client, owner))
    n_cluster = len(addresses)
    # The workers are looked up once per run, not once per request (a scheduler round trip each
    # time, outside the latency but not outside the run's wall time). With process deaths in the
    # plan, or once a worker was lost, coded_compute looks them up itself and waits for replacements.
    pinned = addresses if injection is None or not injection.kill else None
    rows, score_keys = [], []
    for r in range(-warmup, n_requests):
        batch_rng = np.random.default_rng([seed, max(r, 0) + 10**6 * (r < 0), 0])
        X = make_batch(batch_rng)
        labels = None
        if score is not None:
            if not (isinstance(X, tuple) and len(X) == 2):
                raise invalid("make_batch", owner, "a callable returning (X, labels) when 'score' is given",
                              make_batch, f"it returned {type(X).__name__}")
            X, labels = X
        true = exact(X)
        for name, kwargs in schemes.items():
            kwargs = dict(kwargs)
            code = kwargs.pop("code")
            plan_seed = [seed, max(r, 0) + 10**6 * (r < 0), 1]
            row = {"scheme": name, "n_workers": n_cluster, "n_inputs": int(len(X)), "request": r,
                   "n_coded": int(getattr(code, "n_workers", 0))}
            if pinned is not None and "workers" not in kwargs:
                kwargs["workers"] = pinned
            try:
                res = coded_compute(client, code, X, f, injection=injection, seed=np.random.default_rng(plan_seed),
                                    timeout=timeout, **kwargs)
            except DeadlineError as err:
                pinned = None
                row.update(latency_s=np.nan, workers_used=0, loss=np.nan, error=str(err),
                           **{key: np.nan for key in score_keys})
            else:
                if any(t["failed"] for t in res.timings):
                    pinned = None
                row.update(
                    latency_s=res.latency_s, workers_used=len(res.received), loss=_loss(res.estimates, true),
                    overhead_s=res.overhead_s, encode_s=res.encode_s, decode_s=res.decode_s,
                    slowest_used_s=res.slowest_used_busy_s, stopped_by=res.stopped_by,
                    received=" ".join(map(str, res.received)), bytes_sent=res.bytes_sent,
                    bytes_received=res.bytes_received, error="",
                )
                if score is not None:
                    extra = dict(score(res.estimates, true, labels))
                    score_keys = list(dict.fromkeys([*score_keys, *extra]))
                    row.update(extra)
            if injection is not None:
                n = row["n_coded"]
                plan = injection.expected_task_s(n_cluster, np.random.default_rng(plan_seed))[:n]
                n_wait = kwargs.get("n_wait") or n - (kwargs.get("n_stragglers") or 0)
                row["simulated_s"] = simulated_completion(code, plan, n_wait)
            if r >= 0:
                rows.append(row)
    return pd.DataFrame(rows)


@validate_params({"table": Frame(("latency_s", "loss"), "a pandas.DataFrame of run_requests (latency_s, loss)"),
                  "by": COLUMNS, "level": Interval(Real, 0, 1, closed="neither")})
def summarize_latency(table, by=("scheme",), level: float = 0.95):
    """Latency quantiles, simulated quantiles, overhead and mean loss (with interval) per scheme.

    Parameters
    ----------
    table : pandas.DataFrame
        As returned by :func:`run_requests` (or read back from its CSV).
    by : sequence of str
        Grouping columns; groups keep the order of their first row (the order the schemes ran in).
    level : float
        Confidence level of the loss interval.

    Returns
    -------
    pandas.DataFrame
        ``by`` plus :data:`LATENCY_SUMMARY_COLUMNS` (latency of the answered requests; ``n_failed``:
        no decode in time; the loss by :func:`gcc.summary.summarize`).
    """
    import pandas as pd

    from gcc.summary import summarize

    by = list(by)      # a list, or the default tuple
    absent = [c for c in by if c not in table.columns]
    if absent:
        raise invalid("by", "summarize_latency", f"columns of table ({list(table.columns)})", absent)
    loss = {tuple(row[c] for c in by): row for row in summarize(table, "loss", by=by, level=level).to_dict("records")}
    out = []
    for key, g in table.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        lat = g["latency_s"].dropna().to_numpy()
        rec = dict(zip(by, key))
        rec.update(
            n_requests=len(g), n_failed=int(g["latency_s"].isna().sum()),
            latency_p50_ms=1e3 * np.percentile(lat, 50) if lat.size else np.nan,
            latency_p99_ms=1e3 * np.percentile(lat, 99) if lat.size else np.nan,
            latency_mean_ms=1e3 * lat.mean() if lat.size else np.nan,
        )
        if "simulated_s" in g:
            sim = g["simulated_s"].to_numpy(dtype=float)
            rec.update(simulated_p50_ms=1e3 * np.percentile(sim, 50), simulated_p99_ms=1e3 * np.percentile(sim, 99))
        if "overhead_s" in g:
            rec["overhead_p50_ms"] = 1e3 * float(g["overhead_s"].median())
        stats = loss[key]
        rec.update(loss_mean=stats["mean"], loss_ci_low=stats["ci_low"], loss_ci_high=stats["ci_high"])
        out.append(rec)
    return pd.DataFrame(out)
