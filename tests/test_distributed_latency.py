"""Latency under injected stragglers on a real LocalCluster, and the simulation beside it."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("distributed")

import gcc  # noqa: E402
from gcc.distributed import Injection, Replication, Uncoded  # noqa: E402
from gcc.distributed.latency import (  # noqa: E402
    LATENCY_COLUMNS, LATENCY_SUMMARY_COLUMNS, run_requests, simulated_completion, summarize_latency,
)
from gcc.stragglers import ShiftedExponential  # noqa: E402

K, N = 4, 8
CLUSTER_WORKERS = N   # the shared cluster fixture of conftest.py


def test_simulated_completion_matches_order_statistics():
    times = np.array([0.3, 0.1, np.inf, 0.2, 0.5, 0.4, 0.05, 0.6])
    code = gcc.SplineCode(n_inputs=K, n_workers=N)
    assert simulated_completion(code, times, n_wait=6) == 0.5       # 6th smallest finite time
    assert simulated_completion(code, times, n_wait=8) == np.inf    # a dead worker never answers
    assert simulated_completion(Uncoded(K), times[:4]) == np.inf
    # Replication: max over inputs of the first copy; input 0 (workers 0, 4) is last at 0.3.
    assert simulated_completion(Replication(K, N), times) == 0.3


@pytest.mark.timeout(170)
def test_gcc_p99_at_most_half_of_uncoded_under_one_slow_worker(client):
    """1 worker in 8 (drawn per request) slowed 10x: GCC waits for the fastest 7."""
    schemes = {
        "uncoded": {"code": Uncoded(K)},
        "replication": {"code": Replication(K, N)},
        "gcc": {"code": gcc.SplineCode(n_inputs=K, n_workers=N), "n_stragglers": 1},
        "bacc": {"code": gcc.BerrutCode(n_inputs=K, n_workers=N), "n_stragglers": 1},
    }
    # Long enough tasks (150 ms, the slow one 1.5 s) that scheduling noise on a
    # busy 2-core machine cannot blur the comparison.
    inj = Injection(base_s=0.15, n_random_slow=1, slowdown=10,
                    delay=ShiftedExponential(shift=0.0, rate=1.0), delay_scale=0.005)
    table = run_requests(client, schemes, lambda rng: rng.uniform(-1, 1, size=(K, 6)), np.tanh,
                         n_requests=16, injection=inj, seed=0, timeout=30, warmup=1)
    assert set(LATENCY_COLUMNS) <= set(table.columns)
    assert len(table) == 4 * 16 and table["latency_s"].notna().all()
    summary = summarize_latency(table)
    assert list(summary.columns) == ["scheme", *LATENCY_SUMMARY_COLUMNS]
    assert list(summary["scheme"]) == list(schemes)          # the order the schemes ran in
    summary = summary.set_index("scheme")
    print(summary.round(4).to_string())
    assert (summary["n_requests"] == 16).all() and (summary["n_failed"] == 0).all()
    assert summary.loc["gcc", "latency_p99_ms"] <= 0.5 * summary.loc["uncoded", "latency_p99_ms"]
    assert summary.loc["bacc", "latency_p99_ms"] <= 0.5 * summary.loc["uncoded", "latency_p99_ms"]
    # Uncoded and replication are exact; the coded estimates cost some accuracy, reported beside it.
    assert summary.loc["uncoded", "loss_mean"] == 0 and summary.loc["replication", "loss_mean"] == 0
    assert 0 < summary.loc["gcc", "loss_mean"] < 1e-2
    assert (summary["loss_ci_low"] <= summary["loss_mean"]).all()
    assert (summary["loss_mean"] <= summary["loss_ci_high"]).all()
    # Measured latency is never below the simulated completion of the same plan.
    assert (table["latency_s"] >= table["simulated_s"] - 1e-3).all()
    assert (table.loc[table.scheme == "gcc", "workers_used"] == N - 1).all()
