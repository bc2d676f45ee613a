"""Coded partial gradient computation on Dask: one message per partial product.

Gradient descent on ``W theta``, ``W = X^T X`` split row-wise into K blocks (Ozfatura, Ulukus,
Gunduz, ICASSP 2019, arXiv 1811.09271), on real Dask workers: each worker holds its coded
sub-matrices and sends each product as an event tagged with the run and the iteration, no earlier
than ``time_scale * j (alpha + X_i)`` (the delay model, acted out); the master decodes with
:class:`gcc.cpgc.Master` and drops late messages by their tag.
"""
from __future__ import annotations

import dataclasses
import queue
import time
import uuid
from numbers import Integral, Real

import numpy as np

from gcc.cpgc.codes import CPGCCode
from gcc.cpgc.delay import ALPHA, MU
from gcc.cpgc.master import TOLERANCE
from gcc.cpgc.regression import RegressionProblem
from gcc.distributed.cluster import SECONDS, check_client, coded_workers
from gcc.distributed.inject import interruptible_sleep
from gcc.validation import BOOL, SEED, InstanceOf, Interval, invalid, validate_params

__all__ = ["CPGCRun", "run_cpgc", "LateMessages"]


@dataclasses.dataclass
class CPGCRun:
    """Outcome of a distributed CPGC run.

    Attributes
    ----------
    theta : numpy.ndarray, shape (d,)
        Final parameters.
    test_error : numpy.ndarray, shape (iterations + 1,)
        ``sum (y_test - X_test theta)^2 / n_test`` before the first and after every update.
    masks : numpy.ndarray of bool, shape (iterations, n_blocks)
        Blocks recovered (and updated) at each iteration.
    iterations : list of dict
        Per iteration: ``iteration``, ``time_s`` (submit to decision), ``simulated_s`` (same delays,
        :func:`gcc.cpgc.completion`), ``messages`` used, ``dropped`` (late ones), ``recovered``, ``decode_s``.
    dropped_total : int
        Late messages dropped by their iteration tag over the whole run.
    """

    theta: np.ndarray
    test_error: np.ndarray
    masks: np.ndarray
    iterations: list
    dropped_total: int

    def table(self):
        """The per-iteration records as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.iterations)


class LateMessages(TimeoutError):
    """An iteration did not become decodable within its timeout."""


def _coded_blocks(W: np.ndarray, code) -> list[np.ndarray]:
    """Per worker, its coded sub-matrices, shape (n_rows, d/K, d): pre-summed once, before the run."""
    K = code.n_blocks
    blocks = W.reshape(K, W.shape[0] // K, W.shape[1])
    return [np.tensordot(code.coefficients[i], blocks, axes=1) for i in range(code.n_workers)]


def _cpgc_task(blocks, theta, worker: int, iteration: int, unit_s: float, row_units, row_messages,
               channel: str, run_id: str):
    """Worker i's iteration: compute its products in order, send each message once it is due."""
    from distributed import get_worker

    log = get_worker().log_event      # fire and forget on the worker's batched stream
    t0 = time.perf_counter()
    sent = 0
    for m in range(int(row_messages.max()) + 1):
        rows = np.flatnonzero(row_messages == m)
        value = np.stack([blocks[j] @ theta for j in rows])
        due = float(row_units[rows[0]]) * unit_s          # the delay model: row_units * (alpha + X_i)
        _, cancelled = interruptible_sleep(max(due - (time.perf_counter() - t0), 0.0), interruptible=True)
        if cancelled:
            break
        log(channel, {"run": run_id, "iter": iteration, "coded_worker": worker, "msg": m,
                      "shape": list(value.shape), "value": value.astype(np.float64).tobytes()})
        sent += 1
    return sent


@validate_params({"problem": InstanceOf(RegressionProblem, "a RegressionProblem (synthetic_regression(...))"),
                  "code": InstanceOf(CPGCCode, "a CPGCCode (gcc.cpgc.make_code(...))"),
                  "tolerance": TOLERANCE, "iterations": Interval(Integral, 1, None),
                  "eta": Interval(Real, 0, None, closed="neither"), "theta0": Interval(Real), "mu": MU,
                  "alpha": ALPHA, "time_scale": SECONDS, "timeout": SECONDS, "seed": SEED,
                  "cancel_stragglers": BOOL})
def run_cpgc(client, problem, code, *, tolerance: float = 0.0, iterations: int = 20, eta: float = 0.1,
             theta0: float = 0.1, mu: float = 10.0, alpha: float = 0.01, time_scale: float = 1.0,
             seed: int = 0, cancel_stragglers: bool = True, timeout: float = 60.0) -> CPGCRun:
    """Distributed gradient descent with coded partial gradient computation on a Dask cluster.

    Parameters
    ----------
    client : distributed.Client
        At least ``code.n_workers`` workers; coded worker i runs on the i-th (sorted addresses).
    problem : gcc.cpgc.regression.RegressionProblem
        Training and test data; ``d`` must be a multiple of ``code.n_blocks``.
    code : gcc.cpgc.CPGCCode
        Task assignment (:func:`gcc.cpgc.make_code`).
    tolerance : float
        q in [0, 1): the master updates once ``ceil(K (1 - q))`` blocks are recoverable.
    iterations : int
        Gradient steps.
    eta, theta0 : float
        Step size (> 0) and initial value of every coordinate.
    mu, alpha : float
        Delay model ``t_{i,j} = j (alpha + X_i)``, ``X_i ~ Exp(mu)``, in task units.
    time_scale : float
        Seconds per task unit of the delay model.
    seed : int
        Seed of the delay draws (one ``X_i`` per worker and iteration).
    cancel_stragglers : bool
        Cancel an iteration's tasks once it is decided (else their messages arrive late and are dropped).
    timeout : float
        Bound in seconds on each iteration.

    Returns
    -------
    CPGCRun

    Raises
    ------
    LateMessages
        An iteration was not decodable within ``timeout`` seconds.
    """
    from distributed import wait

    from gcc.cpgc import Master, completion

    X, y = problem.X_train, problem.y_train
    n, d = X.shape
    K = code.n_blocks
    owner = "run_cpgc"
    if d % K:
        raise invalid("problem", owner, f"a problem whose dimension d is divisible by the code's {K} blocks",
                      X, f"X_train has d={d} columns")
    # A worker lost earlier is being restarted by its nanny: wait (bounded) for its replacement.
    addresses = coded_workers(check_client(client, owner), code.n_workers, owner)
    if len(addresses) < code.n_workers:
        raise invalid("client", owner, f"a cluster of at least n_workers={code.n_workers} Dask workers", client,
                      f"it has {len(addresses)}")
    addresses = addresses[: code.n_workers]

    W = X.T @ X
    b = X.T @ y
    bs = d // K
    # Each worker's coded matrices travel once and stay on that worker.
    stored = [client.scatter(blk, workers=[addresses[i]], broadcast=False, hash=False)
              for i, blk in enumerate(_coded_blocks(W, code))]
    wait(stored, timeout=timeout)

    run_id = uuid.uuid4().hex[:12]
    channel = f"gcc-cpgc-{run_id}"
    inbox = queue.Queue()
    # Runs on the client's event loop thread for every event the scheduler pushes.
    client.subscribe_topic(channel, lambda event: inbox.put(event[1]))
    # One untimed round (iteration -1, no delays) pays for deserialising the task
    # function and first touching the scattered blocks; its messages are drained.
    warm = [client.submit(_cpgc_task, stored[i], np.zeros(d), i, -1, 0.0, code.row_units, code.row_messages,
                          channel, run_id, workers=[addresses[i]], allow_other_workers=False, pure=False)
            for i in range(code.n_workers)]
    for _ in range(sum(client.gather(warm))):
        inbox.get(timeout=timeout)
    rng = np.random.default_rng(seed)
    theta = np.full(d, float(theta0))

    def test_error(th):
        return float(((problem.y_test - problem.X_test @ th) ** 2).sum() / problem.X_test.shape[0])

    errors, masks, records, dropped_total = [test_error(theta)], [], [], 0
    futures = []
    try:
        for t in range(iterations):
            speeds = alpha + rng.exponential(1.0 / mu, size=code.n_workers)     # alpha + X_i, task units
            sim_times, _, _ = completion(code, speeds[None, :], tolerance)
            master = Master(code, tolerance)
            t0 = time.perf_counter()
            futures = [client.submit(_cpgc_task, stored[i], theta, i, t, float(speeds[i] * time_scale),
                                     code.row_units, code.row_messages, channel, run_id,
                                     workers=[addresses[i]], allow_other_workers=False, pure=False,
                                     key=f"gcc-cpgc-{run_id}-{t}-{i}")
                       for i in range(code.n_workers)]
            used = dropped = 0
            done = False
            while not done:
                remaining = timeout - (time.perf_counter() - t0)
                if remaining <= 0:
                    raise LateMessages(
                        f"Iteration {t} was not decodable within the timeout of {timeout} s: "
                        f"{master.n_recovered} of the {master.need} blocks needed after {used} messages."
                    )
                try:
                    item = inbox.get(timeout=remaining)
                except queue.Empty:
                    continue
                if item["run"] != run_id or item["iter"] != t:
                    dropped += 1      # a straggler's answer to an iteration already decided
                    continue
                value = np.frombuffer(item["value"], dtype=np.float64).reshape(item["shape"])
                used += 1
                done = master.receive(int(item["coded_worker"]), int(item["msg"]), value)
            elapsed = time.perf_counter() - t0
            t_dec = time.perf_counter()
            decoded = master.decode()                       # (K, bs), NaN where unrecovered
            recovered = np.asarray(master.recovered, dtype=bool).copy()
            decode_s = time.perf_counter() - t_dec
            if cancel_stragglers:
                client.cancel([f for f in futures if not f.done()])
            # Partial update: recovered coordinate blocks only, no rescaling, no memory.
            grad = (decoded.reshape(K, bs) - b.reshape(K, bs)) / n
            step = np.where(recovered[:, None], grad, 0.0).reshape(d)
            theta = theta - eta * step
            errors.append(test_error(theta))
            masks.append(recovered)
            dropped_total += dropped
            records.append({"iteration": t, "time_s": elapsed, "simulated_s": float(sim_times[0]) * time_scale,
                            "messages": used, "dropped": dropped, "recovered": int(recovered.sum()),
                            "decode_s": decode_s})
    finally:
        # Stop whatever still runs (also after a timeout) and free the stored blocks.
        client.cancel([f for f in futures if not f.done()] + stored)
        client.unsubscribe_topic(channel)
    return CPGCRun(theta=theta, test_error=np.array(errors), masks=np.array(masks), iterations=records,
                   dropped_total=dropped_total)
