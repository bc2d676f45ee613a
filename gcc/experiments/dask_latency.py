"""The "Distributed execution" chapter: measured latency under stragglers on Dask, CPGC per iteration.

The notebook runs :func:`latency_experiment` and :func:`cpgc_experiment` on one cluster and shows
:func:`latency_summary`, :func:`cpgc_summary` and the figures. Scheme keys: ``"uncoded"``,
``"replication"`` (:mod:`gcc.distributed.baselines`), ``"gcc"``, ``"bacc"`` (:func:`gcc.codes.make`)
and the CPGC code's name; figures show :data:`LABELS`.
"""
from __future__ import annotations

import functools

import numpy as np

from gcc.codes import LABELS as CODE_LABELS
from gcc.codes import make_many
from gcc.distributed.baselines import Replication, Uncoded
from gcc.distributed.coded import ModelRef, demo_mlp
from gcc.distributed.inject import Injection
from gcc.distributed.latency import run_requests, summarize_latency
from gcc.summary import summarize
from gcc.validation import Options, validate, validate_params

__all__ = [
    "SCHEMES", "LABELS", "CPGC_ATTEMPTS", "standard_schemes", "make_function", "straggler_injection",
    "latency_experiment", "cpgc_experiment", "latency_summary", "cpgc_summary",
    "plot_latency_cdf", "plot_measured_vs_simulated", "plot_cpgc_times",
]

#: the schemes of the latency comparison, in the order of the tables and figures
SCHEMES = ("uncoded", "replication", "gcc", "bacc")
#: runs of one CPGC tolerance before :func:`cpgc_experiment` gives up (a lost worker stalls a run)
CPGC_ATTEMPTS = 2
#: scheme key -> display name in figures
LABELS = {"uncoded": "Uncoded", "replication": "Replication", **CODE_LABELS}


def standard_schemes(n_inputs: int, n_workers: int, stragglers: int) -> dict:
    """The four schemes at K inputs, N workers: :data:`SCHEMES` -> arguments of :func:`~gcc.distributed.coded_compute`.

    ``uncoded`` (K workers, all awaited), ``replication`` (first copy of each input), ``gcc`` and
    ``bacc`` (:func:`gcc.codes.make`, the fastest ``N - stragglers``).
    """
    codes = make_many(["gcc", "bacc"], n_inputs, n_workers)
    return {
        "uncoded": {"code": Uncoded(n_inputs)},
        "replication": {"code": Replication(n_inputs, n_workers)},
        **{key: {"code": code, "n_stragglers": stragglers} for key, code in codes.items()},
    }


@validate_params({"name": Options(("tanh", "mlp"))})
def make_function(name: str, dim: int, seed: int = 0):
    """The function the workers compute on a batch (K, dim).

    ``"tanh"``: ``numpy.tanh``; ``"mlp"``: a fixed-weight torch MLP ``dim -> 32 -> 10`` with softmax
    output (weights from ``seed``), loaded once per worker through a :class:`~gcc.distributed.ModelRef`.
    """
    if name == "tanh":
        return np.tanh
    return ModelRef(f"demo-mlp-{dim}-{seed}", functools.partial(demo_mlp, dim, 32, 10, seed), torch_io=True)


def straggler_injection(base_ms: float, slowdown: float, n_slow: int, jitter_ms: float) -> Injection:
    """``n_slow`` workers drawn per request slowed ``slowdown`` times, plus exponential jitter.

    Every task takes ``base_ms`` of emulated compute plus an ``Exp`` delay of mean ``jitter_ms``
    (:class:`gcc.stragglers.ShiftedExponential` with shift 0); the slow ones take ``slowdown`` times
    the compute.

    Returns
    -------
    Injection
    """
    from gcc.stragglers import ShiftedExponential

    return Injection(base_s=base_ms / 1e3, n_random_slow=int(n_slow), slowdown=float(slowdown),
                     delay=ShiftedExponential(shift=0.0, rate=1.0) if jitter_ms > 0 else None,
                     delay_scale=jitter_ms / 1e3)


def latency_experiment(client, *, n_inputs: int, n_workers: int, dim: int, stragglers: int, n_requests: int,
                       injection: Injection, function: str = "tanh", seed: int = 0, timeout: float = 60.0):
    """Latency and loss per request of uncoded, replication, GCC and BACC on one cluster.

    Each request draws K fresh inputs ``x_k ~ U[-1, 1]^dim``; the loss is eq. (1) against ``f``
    computed at the master.

    Returns
    -------
    pandas.DataFrame
        One row per (scheme, request); see :func:`~gcc.distributed.latency.run_requests`.
    """
    f = make_function(function, dim, seed)
    schemes = standard_schemes(n_inputs, n_workers, stragglers)

    def batch(rng):
        X = rng.uniform(-1.0, 1.0, size=(n_inputs, dim))
        return X.astype(np.float32) if function == "mlp" else X

    return run_requests(client, schemes, batch, f, n_requests=n_requests, injection=injection, seed=seed,
                        timeout=timeout)


def cpgc_experiment(client, *, n_workers: int, tolerances=(0.0, 0.3), iterations: int = 10, dim: int = 80,
                    time_scale: float = 1.0, seed: int = 0):
    """Distributed CPGC runs of the RCSC code, one per tolerance: measured and simulated time per iteration.

    The problem: :func:`gcc.cpgc.regression.synthetic_regression` with 400 training and 100 test points.

    Returns
    -------
    pandas.DataFrame
        Columns ``scheme`` (the CPGC code's canonical name), ``n_workers``, ``tolerance``,
        ``iteration``, ``time_s``, ``simulated_s``, ``messages``, ``dropped``, ``recovered``,
        ``decode_s``, ``test_error``.
    """
    import pandas as pd

    import gcc.cpgc as cpgc
    from gcc.cpgc.regression import synthetic_regression
    from gcc.distributed.cpgc import LateMessages, run_cpgc

    problem = synthetic_regression(n_train=400, n_test=100, dim=dim, seed=seed)
    code = cpgc.make_code("rcsc", n_workers=n_workers, seed=seed)
    frames = []
    for q in tolerances:
        # A worker lost mid-run takes its scattered blocks with it and the run stalls
        # (LateMessages); the rerun, on the nanny's replacement, uses the same seeds.
        for attempt in range(CPGC_ATTEMPTS):
            try:
                run = run_cpgc(client, problem, code, tolerance=float(q), iterations=iterations,
                               time_scale=time_scale, seed=seed + 1)
                break
            except LateMessages:
                if attempt == CPGC_ATTEMPTS - 1:
                    raise
        table = run.table()
        table.insert(0, "tolerance", float(q))
        table.insert(0, "n_workers", n_workers)
        table.insert(0, "scheme", code.name)
        table["test_error"] = run.test_error[1:]
        frames.append(table)
    return pd.DataFrame(pd.concat(frames, ignore_index=True))


def latency_summary(table, baseline: str = "uncoded"):
    """:func:`~gcc.distributed.latency.summarize_latency` of :func:`latency_experiment`'s table, plus
    ``latency_p99_vs_baseline`` (each p99 over the ``baseline`` scheme's)."""
    summary = summarize_latency(table)
    validate(baseline, Options(tuple(summary["scheme"])), "baseline", "latency_summary")
    ref = float(summary.loc[summary.scheme == baseline, "latency_p99_ms"].iloc[0])
    summary["latency_p99_vs_baseline"] = summary["latency_p99_ms"] / ref
    return summary


def cpgc_summary(table, level: float = 0.95):
    """Per tolerance: mean measured and simulated time per iteration (with intervals), messages, drops.

    ``table`` is :func:`cpgc_experiment`'s; the intervals are :func:`gcc.summary.summarize`'s at ``level``.

    Returns
    -------
    pandas.DataFrame
        ``scheme``, ``n_workers``, ``tolerance``, ``n_iterations``, ``time_mean_ms``,
        ``time_ci_low_ms``, ``time_ci_high_ms``, the same three for ``simulated``,
        ``messages_mean`` (used per iteration), ``dropped_total`` (late messages) and
        ``final_test_error``.
    """
    import pandas as pd

    by = ["scheme", "n_workers", "tolerance"]
    stats = summarize(table, ["time_s", "simulated_s", "messages"], by=by, level=level)
    wide = None
    for metric, stem, scale, unit in (("time_s", "time", 1e3, "_ms"), ("simulated_s", "simulated", 1e3, "_ms"),
                                      ("messages", "messages", 1.0, "")):
        part = stats.loc[stats.metric == metric, [*by, "mean", "ci_low", "ci_high"]].set_index(by)
        cols = ["mean"] if metric == "messages" else ["mean", "ci_low", "ci_high"]
        part = (part[cols] * scale).rename(columns={c: f"{stem}_{c}{unit}" for c in cols})
        wide = part if wide is None else wide.join(part)
    rest = table.groupby(by, sort=True).agg(n_iterations=("iteration", "size"), dropped_total=("dropped", "sum"),
                                            final_test_error=("test_error", "last"))
    out = rest[["n_iterations"]].join(wide).join(rest[["dropped_total", "final_test_error"]])
    return pd.DataFrame(out.reset_index())


def plot_latency_cdf(table, schemes=SCHEMES):
    """Empirical CDFs of the measured latency and of the simulated completion time of ``schemes``, side by side.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from .plotting import figure, finish, legend_outside, log_axis, scheme_kw

    fig, axes = figure(2, height=3.2, sharey=True)
    for name in schemes:
        sel = table.loc[table.scheme == name]
        lat = np.sort(sel["latency_s"].dropna().to_numpy()) * 1e3
        sim = np.sort(sel["simulated_s"].to_numpy()) * 1e3
        color = scheme_kw(name).get("color")
        axes[0].step(lat, np.arange(1, len(lat) + 1) / len(lat), where="post", color=color, ls="-", label=LABELS[name])
        axes[1].step(sim, np.arange(1, len(sim) + 1) / len(sim), where="post", color=color, ls="-", label=LABELS[name])
    for ax, title in zip(axes, ["measured on the cluster", "simulated (same delays)"]):
        ax.set_xscale("log")
        log_axis(ax)
        ax.set_xlabel("latency per request (ms)")
        ax.set_title(title)
        ax.axhline(0.99, color="0.5", lw=0.7, ls=":")
    axes[0].set_ylabel("fraction of requests")
    legend_outside(fig, axes[:1])
    return finish(fig)


def plot_measured_vs_simulated(table, schemes=SCHEMES):
    """Measured latency against simulated completion, one point per (scheme, request).

    The distance above the diagonal is the coordination overhead of Dask and the master.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from .plotting import figure, finish, log_axis, scheme_kw

    fig, (ax,) = figure(1, height=3.6)
    for name in schemes:
        sel = table[table.scheme == name]
        style = scheme_kw(name)
        ax.scatter(sel["simulated_s"] * 1e3, sel["latency_s"] * 1e3, s=14, label=LABELS[name], alpha=0.7,
                   color=style.get("color"), marker=style.get("marker", "o"))
    _diagonal(ax, table["simulated_s"], table["latency_s"])
    ax.set_xscale("log")
    ax.set_yscale("log")
    log_axis(ax, "x")
    log_axis(ax, "y")
    ax.set_xlabel("simulated completion (ms)")
    ax.set_ylabel("measured latency (ms)")
    ax.legend(loc="upper left")
    return finish(fig)


def plot_cpgc_times(table):
    """Measured against simulated time of each CPGC iteration, one colour per tolerance.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from .plotting import figure, finish, scheme_shades

    fig, (ax,) = figure(1, height=3.6)
    scheme = str(table["scheme"].iloc[0]) if "scheme" in table and table["scheme"].nunique() == 1 else ""
    groups = list(table.groupby("tolerance"))
    # one scheme (RCSC): its colour, lighter for a smaller tolerance
    for (q, sel), color, marker in zip(groups, scheme_shades(scheme, len(groups)), ("o", "s", "^", "D", "v")):
        ax.scatter(sel["simulated_s"] * 1e3, sel["time_s"] * 1e3, s=16, color=color, marker=marker,
                   label=f"q = {q:g}")
    _diagonal(ax, table["simulated_s"], table["time_s"])
    ax.set_xlabel("simulated time of the iteration (ms)")
    ax.set_ylabel("measured time (ms)")
    ax.set_title(f"CPGC ({scheme.upper() or 'all schemes'}) on Dask, one point per iteration")
    ax.legend(title="tolerance", loc="upper left")
    return finish(fig)


def _diagonal(ax, simulated_s, measured_s) -> None:
    """The line measured = simulated, over the range of the points (in ms)."""
    lims = [simulated_s.min() * 1e3 * 0.8, measured_s.max() * 1e3 * 1.2]
    ax.plot(lims, lims, color="0.35", lw=0.9, ls="--", label="measured = simulated")
