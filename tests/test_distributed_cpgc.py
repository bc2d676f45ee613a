"""Coded partial gradient computation on a real LocalCluster: one message per partial product."""
from __future__ import annotations

import time

import numpy as np
import pytest

pytest.importorskip("distributed")

import gcc.cpgc as cpgc  # noqa: E402
from gcc.cpgc.regression import gradient_descent, synthetic_regression  # noqa: E402
from gcc.distributed.cpgc import LateMessages, run_cpgc  # noqa: E402

K = 8
CLUSTER_WORKERS = K   # the shared cluster fixture of conftest.py


@pytest.fixture(scope="module")
def problem():
    return synthetic_regression(n_train=400, n_test=100, dim=80, seed=0)


@pytest.mark.timeout(120)
def test_full_recovery_is_plain_gradient_descent(client, problem):
    code = cpgc.make_code("rcsc", n_workers=K, seed=0)
    run = run_cpgc(client, problem, code, tolerance=0.0, iterations=6, time_scale=0.3, seed=1, timeout=30)
    assert run.masks.shape == (6, K) and run.masks.all()
    # Centralised gradient descent on the same data: the decoded W theta is exact.
    reference = gradient_descent(problem, np.ones((1, 6, K), dtype=bool), eta=0.1)[0]
    np.testing.assert_allclose(run.test_error, reference, rtol=1e-9)
    assert run.test_error[-1] < run.test_error[0]
    table = run.table()
    # Real arrivals are never earlier than the delay model says (same draws).
    assert (table["time_s"] >= table["simulated_s"] - 1e-3).all()


@pytest.mark.timeout(120)
def test_partial_recovery_updates_recovered_blocks_and_drops_late_messages(client, problem):
    code = cpgc.make_code("rcsc", n_workers=K, seed=0)
    run = run_cpgc(client, problem, code, tolerance=0.3, iterations=6, time_scale=0.3, seed=2,
                   cancel_stragglers=False, timeout=30)
    need = cpgc.required_blocks(K, 0.3)
    assert (run.masks.sum(axis=1) >= need).all()
    # The same update rule, replayed on the recorded masks, gives the same trajectory.
    replay = gradient_descent(problem, run.masks[None], eta=0.1)[0]
    np.testing.assert_allclose(run.test_error, replay, rtol=1e-9)
    # Stragglers ran to the end; their answers to decided iterations were dropped by tag.
    assert run.dropped_total > 0
    assert run.table()["messages"].max() < K * code.n_messages


@pytest.mark.timeout(60)
def test_undecodable_iteration_times_out(client, problem):
    code = cpgc.make_code("uc-mmc", n_workers=K, seed=0)
    t0 = time.perf_counter()
    with pytest.raises(LateMessages, match="Iteration 0 was not decodable within the timeout of 1.0 s"):
        run_cpgc(client, problem, code, iterations=2, time_scale=100.0, timeout=1.0)
    assert time.perf_counter() - t0 < 10
    assert issubclass(LateMessages, TimeoutError)


def test_bad_dimension_is_named(client):
    prob = synthetic_regression(n_train=50, n_test=10, dim=81, seed=0)
    with pytest.raises(ValueError, match="'problem' parameter of run_cpgc must be .*divisible by the code's 8 blocks \\(X_train has d=81 columns\\)"):
        run_cpgc(client, prob, cpgc.make_code("rcsc", n_workers=K), iterations=1)


@pytest.mark.timeout(60)
def test_a_code_for_more_workers_than_the_cluster_is_refused_at_once(client, problem):
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"'client' parameter of run_cpgc must be a client of a cluster with at least "
                                         r"n_workers=16 distinct Dask workers \(it has 8; start one"):
        run_cpgc(client, problem, cpgc.make_code("rcsc", n_workers=16), iterations=1, timeout=5)
    assert time.perf_counter() - t0 < 5       # no wait for workers that will never come
