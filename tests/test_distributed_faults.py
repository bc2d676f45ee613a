"""Faults on a real Dask LocalCluster: workers lost mid-batch or between batches, a failed start.

A worker that disappears is a straggler: the batch decodes from the others, or raises the
clear :class:`DeadlineError` within its bound. A 4-worker cluster keeps this module short
(well under 60 s on a loaded 2-core machine); every wait is bounded.
"""
from __future__ import annotations

import os
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from gcc.distributed import DeadlineError, Injection, coded_compute, open_cluster, worker_addresses  # noqa: E402
from gcc.distributed import cluster as cluster_mod  # noqa: E402
from gcc.distributed.cluster import LOADED_MACHINE_CONFIG, await_workers, wait_for_workers  # noqa: E402

N = 4
CLUSTER_WORKERS = N   # the shared cluster fixture of conftest.py


class MeanCode:
    """Replicate the inputs' mean to every worker; any one result decodes an affine f of the mean."""

    n_inputs, n_workers = 2, N

    def encode(self, X):
        return np.repeat(X.mean(axis=0, keepdims=True), N, axis=0)

    def decode(self, Y, received):
        return np.repeat(Y.mean(axis=0, keepdims=True), self.n_inputs, axis=0)


@pytest.mark.timeout(60)
def test_settings_are_applied_to_the_workers(client):
    import dask

    key = "distributed.scheduler.worker-ttl"
    assert client.run_on_scheduler(lambda: dask.config.get(key)) == LOADED_MACHINE_CONFIG[key]
    terminate = client.run(lambda: dask.config.get("distributed.worker.memory.terminate"))
    assert set(terminate.values()) == {False}


@pytest.mark.timeout(60)
def test_worker_killed_mid_batch_is_a_straggler(client):
    X = np.array([[1.0, -2.0], [3.0, 0.5]])
    t0 = time.monotonic()
    res = coded_compute(client, MeanCode(), X, np.negative, n_stragglers=2, seed=0, timeout=30,
                        injection=Injection(base_s=0.05, kill=[1, 2], kill_after_s=0.01))
    assert time.monotonic() - t0 < 30
    assert list(res.received) == [0, 3]
    np.testing.assert_allclose(res.estimates, -np.repeat(X.mean(0, keepdims=True), 2, 0))


@pytest.mark.timeout(60)
def test_too_many_killed_raises_deadline_error_within_the_bound(client):
    X = np.ones((2, 3))
    t0 = time.monotonic()
    with pytest.raises(DeadlineError, match="decoding needs 3"):
        coded_compute(client, MeanCode(), X, np.negative, n_stragglers=1, seed=0, timeout=8,
                      injection=Injection(base_s=0.05, kill=[0, 1], kill_after_s=0.01))
    assert time.monotonic() - t0 < 20


@pytest.mark.timeout(60)
def test_lost_worker_is_awaited_or_a_straggler(client):
    X = np.ones((2, 3))
    lost = worker_addresses(client)[0]
    client.run(os._exit, 1, workers=[lost], on_error="ignore")
    # No wait: whichever workers are connected run the batch; the lost one is a straggler.
    res = coded_compute(client, MeanCode(), X, np.negative, n_stragglers=1, seed=0, timeout=20,
                        replacement_wait=0.0)
    assert len(res.received) >= N - 1
    # A bounded wait gives the nanny's replacement time to join; then all N answer.
    wait_for_workers(client, N, timeout=45, gone=(lost,))
    assert len(await_workers(client, N, wait=1.0)) == N
    res = coded_compute(client, MeanCode(), X, np.negative, seed=0, timeout=20)
    assert len(res.received) == N and lost not in res.workers_used


@pytest.mark.timeout(60)
def test_open_cluster_retries_a_failed_start(monkeypatch):
    calls = []
    real = distributed.LocalCluster

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise TimeoutError("worker failed to start")
        return real(*args, **kwargs)

    monkeypatch.setattr(distributed, "LocalCluster", flaky)
    monkeypatch.setattr(cluster_mod.time, "sleep", lambda s: None)
    with open_cluster(n_workers=1, processes=False, timeout=30) as c:
        assert len(worker_addresses(c)) == 1
    assert len(calls) == 2


@pytest.mark.timeout(30)
def test_open_cluster_gives_up_after_its_attempts(monkeypatch):
    def broken(*args, **kwargs):
        raise OSError("no ports")

    monkeypatch.setattr(distributed, "LocalCluster", broken)
    monkeypatch.setattr(cluster_mod.time, "sleep", lambda s: None)
    with pytest.raises(RuntimeError, match=f"did not start in {cluster_mod.START_ATTEMPTS} attempts"):
        with open_cluster(n_workers=1, processes=False, timeout=5):
            pass
