"""Coded computation on a real Dask LocalCluster (processes, loopback only).

One 8-worker cluster serves the whole module; every wait is bounded and the
cluster is shut down by the fixture's finaliser even when a test fails.
"""
from __future__ import annotations

import functools
import socket
import time

import numpy as np
import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")

from gcc.distributed import (  # noqa: E402
    DeadlineError, Injection, ModelPlugin, ModelRef, Replication, Uncoded, coded_compute, open_cluster,
    worker_addresses,
)
from gcc.distributed.cluster import wait_for_workers  # noqa: E402
from gcc.distributed.coded import demo_mlp, model_load_counts  # noqa: E402

N_CLUSTER = 8
CLUSTER_WORKERS = N_CLUSTER   # the shared cluster fixture of conftest.py


class PolyCode:
    """Tiny linear stand-in code: polynomial (Lagrange) encoding, least-squares decoding.

    Exact for any f that is affine, so the decode can also be checked against f itself.
    """

    def __init__(self, n_inputs: int, n_workers: int):
        self.n_inputs, self.n_workers = n_inputs, n_workers
        self.alphas = np.linspace(-0.9, 0.9, n_inputs)
        self.betas = np.linspace(-1.0, 1.0, n_workers)
        vander = functools.partial(np.vander, N=n_inputs, increasing=True)
        self._enc = vander(self.betas) @ np.linalg.inv(vander(self.alphas))

    def encode(self, X):
        return np.tensordot(self._enc, X, axes=1)

    def decode(self, Y, received):
        received = np.asarray(received)
        vander = functools.partial(np.vander, N=self.n_inputs, increasing=True)
        dec = vander(self.alphas) @ np.linalg.pinv(vander(self.betas[received]))
        return np.tensordot(dec, Y, axes=1)


def _codes():
    """The stand-in and the real gcc codes."""
    import gcc

    return [("poly", lambda K, N: PolyCode(K, N))] + [
        (name, lambda K, N, cls=getattr(gcc, name): cls(n_inputs=K, n_workers=N))
        for name in ("SplineCode", "BerrutCode", "LagrangeCode", "BSplineCode")]


def _in_process(code, X, f, received):
    coded = code.encode(X)
    Y = np.stack([f(coded[i]) for i in received])
    return code.decode(Y, received)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name,make", _codes(), ids=[c[0] for c in _codes()])
def test_decode_equals_in_process_decode(client, name, make):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(4, 5))
    code = make(4, 8)
    res = coded_compute(client, code, X, np.tanh, n_stragglers=2, timeout=60)
    assert len(res.received) == 6
    assert np.all(np.diff(res.received) > 0)
    expected = _in_process(code, X, np.tanh, res.received)
    np.testing.assert_allclose(np.asarray(res.estimates), np.asarray(expected), rtol=1e-12, atol=1e-14)


@pytest.mark.timeout(120)
def test_torch_inputs_decode_like_in_process(client):
    torch = pytest.importorskip("torch")
    import gcc

    code = gcc.SplineCode(n_inputs=4, n_workers=8)
    X = torch.linspace(-1, 1, 12, dtype=torch.float64).reshape(4, 3)
    res = coded_compute(client, code, X, torch.tanh, n_stragglers=2, timeout=60)
    assert isinstance(res.estimates, torch.Tensor) and res.estimates.dtype == torch.float64
    coded = code.encode(X)
    expected = code.decode(torch.tanh(coded[torch.as_tensor(res.received)]), res.received)
    torch.testing.assert_close(res.estimates, expected, rtol=1e-12, atol=1e-14)


@pytest.mark.timeout(60)
def test_tasks_are_pinned_to_distinct_workers_and_timed(client):
    X = np.random.default_rng(1).normal(size=(3, 2))
    res = coded_compute(client, PolyCode(3, 8), X, np.negative, timeout=30)
    addresses = worker_addresses(client)
    assert res.workers_used == addresses[:8]          # task i ran on worker i
    assert len(set(res.workers_used)) == 8
    table = pd.DataFrame(res.timings)
    assert table["used"].all() and table["arrived"].all()
    assert (table["busy_s"] >= table["compute_s"]).all()
    assert res.latency_s >= res.slowest_used_busy_s
    # An affine f is decoded exactly by the stand-in code.
    np.testing.assert_allclose(res.estimates, -X, atol=1e-12)


@pytest.mark.timeout(60)
def test_injected_slow_worker_is_ignored(client):
    X = np.random.default_rng(2).normal(size=(3, 2))
    inj = Injection(base_s=0.02, slow_workers=[5], slowdown=100)   # worker 5 takes ~2 s
    t0 = time.perf_counter()
    res = coded_compute(client, PolyCode(3, 8), X, np.negative, n_stragglers=1, injection=inj, seed=0, timeout=30)
    assert 5 not in res.received
    assert res.latency_s < 1.0 and time.perf_counter() - t0 < 1.5
    np.testing.assert_allclose(res.estimates, -X, atol=1e-12)


def _fail_on_worker(address, x):
    from distributed import get_worker

    if get_worker().address == address:
        raise RuntimeError("injected failure")
    return np.tanh(x)


@pytest.mark.timeout(60)
def test_task_that_raises_is_a_straggler(client):
    import sys

    import cloudpickle

    # The workers cannot import this test module: ship the function by value.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        X = np.random.default_rng(9).normal(size=(3, 2))
        code = PolyCode(3, 8)
        f = functools.partial(_fail_on_worker, worker_addresses(client)[4])
        res = coded_compute(client, code, X, f, n_stragglers=1, timeout=30)
        assert list(res.received) == [0, 1, 2, 3, 5, 6, 7]
        assert not res.timings[4]["used"]      # its error may arrive before or after the 7th result
        np.testing.assert_allclose(res.estimates, _in_process(code, X, np.tanh, res.received), rtol=1e-12)
        # Every task fails: decoding is impossible, said at once rather than after the timeout.
        t0 = time.perf_counter()
        with pytest.raises(DeadlineError, match=r"Only 0 of 8 workers answered and [2-8] failed, well before the "
                           r"timeout of 30 s; decoding needs 7\. The first failure: RuntimeError\('injected failure'\)"
                           ) as err:
            coded_compute(client, code, X, _always_fail, n_stragglers=1, timeout=30)
        assert err.value.error == "RuntimeError('injected failure')"     # why the workers failed
        assert time.perf_counter() - t0 < 10
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def _always_fail(x):
    raise RuntimeError("injected failure")


@pytest.mark.timeout(60)
def test_replication_and_uncoded_decode_exactly(client):
    X = np.random.default_rng(3).normal(size=(4, 3))
    inj = Injection(base_s=0.01, slow_workers=[1], slowdown=50)
    rep = coded_compute(client, Replication(4, 8), X, np.sin, injection=inj, seed=0, timeout=30)
    assert 1 not in rep.received                       # its copy on worker 5 was used instead
    np.testing.assert_allclose(rep.estimates, np.sin(X), rtol=1e-15)
    unc = coded_compute(client, Uncoded(4), X, np.sin, timeout=30)
    np.testing.assert_allclose(unc.estimates, np.sin(X), rtol=1e-15)
    assert list(unc.received) == [0, 1, 2, 3]


@pytest.mark.timeout(60)
def test_too_few_before_deadline_raises_clear_error(client):
    X = np.random.default_rng(4).normal(size=(3, 2))
    inj = Injection(base_s=0.01, slow_workers=[0, 1, 2, 3, 4], slowdown=300)   # 5 of 8 take ~3 s
    t0 = time.perf_counter()
    with pytest.raises(DeadlineError) as info:
        coded_compute(client, PolyCode(3, 8), X, np.negative, n_stragglers=2, deadline=0.5,
                      min_results=6, injection=inj, seed=0)
    elapsed = time.perf_counter() - t0
    assert isinstance(info.value, TimeoutError)
    assert elapsed < 2.0
    msg = str(info.value)
    assert "deadline of 0.5 s" in msg and "3 of 8 workers answered" in msg and "needs 6" in msg
    assert (info.value.answered, info.value.needed) == (3, 6)


@pytest.mark.timeout(60)
def test_timeout_without_deadline_raises(client):
    X = np.random.default_rng(5).normal(size=(3, 2))
    inj = Injection(base_s=0.01, slow_workers=[6, 7], slowdown=300)
    with pytest.raises(DeadlineError, match="timeout of 0.5 s.*needs 8"):
        coded_compute(client, PolyCode(3, 8), X, np.negative, injection=inj, seed=0, timeout=0.5)


@pytest.mark.timeout(60)
def test_deadline_decodes_with_everything_that_arrived(client):
    X = np.random.default_rng(6).normal(size=(3, 2))
    inj = Injection(base_s=0.01, slow_workers=[2, 6], slowdown=300)
    res = coded_compute(client, PolyCode(3, 8), X, np.negative, deadline=0.6, injection=inj, seed=0)
    assert res.stopped_by == "deadline"
    assert list(res.received) == [0, 1, 3, 4, 5, 7]
    assert res.latency_s < 1.5
    np.testing.assert_allclose(res.estimates, -X, atol=1e-12)


@pytest.mark.timeout(90)
def test_torch_model_is_loaded_once_per_worker(client):
    torch = pytest.importorskip("torch")
    ref = ModelRef("demo-mlp-test", functools.partial(demo_mlp, 5, 16, 3, 7), torch_io=True)
    client.register_plugin(ModelPlugin(ref))
    X = np.random.default_rng(7).uniform(-1, 1, size=(3, 5)).astype(np.float32)
    code = PolyCode(3, 4)          # 4 workers are enough to see "once per worker", and import torch faster
    for _ in range(3):
        res = coded_compute(client, code, X, ref, n_stragglers=1, timeout=60)
    counts = client.run(model_load_counts)
    assert all(c.get("demo-mlp-test", 0) == 1 for c in counts.values())   # the plugin loaded it everywhere
    # Same network in-process gives the same decode for the same received set.
    model = demo_mlp(5, 16, 3, 7)
    with torch.no_grad():
        expected = _in_process(code, X, lambda x: model(torch.as_tensor(x, dtype=torch.float32)).numpy(),
                               res.received)
    np.testing.assert_allclose(res.estimates, expected, rtol=1e-5, atol=1e-6)


def test_bad_arguments_name_themselves(client):
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match="n_workers=9 distinct Dask workers.*has 8"):
        coded_compute(client, PolyCode(3, 9), X, np.negative, timeout=5)
    with pytest.raises(ValueError, match="'n_stragglers' parameter of coded_compute.*Got 8"):
        coded_compute(client, PolyCode(3, 8), X, np.negative, n_stragglers=8)
    with pytest.raises(ValueError, match="'deadline' parameter.*Got -1"):
        coded_compute(client, PolyCode(3, 8), X, np.negative, deadline=-1)
    with pytest.raises(ValueError, match="'slowdown' parameter of Injection.*Got 0.5"):
        Injection(slowdown=0.5).plan(8, np.random.default_rng(0))


@pytest.mark.timeout(150)
def test_killed_worker_process_mid_run_still_decodes(client):
    # Runs last in the module: the killed worker is restarted by its Nanny under a new address.
    X = np.random.default_rng(8).normal(size=(3, 2))
    code = PolyCode(3, 8)
    before = worker_addresses(client)
    inj = Injection(base_s=0.05, kill=[3], kill_after_s=0.02)
    res = coded_compute(client, code, X, np.tanh, n_stragglers=1, injection=inj, seed=0, timeout=60)
    # Nothing lost: every surviving worker's result was used, and the decode is right.
    assert list(res.received) == [0, 1, 2, 4, 5, 6, 7]
    np.testing.assert_allclose(res.estimates, _in_process(code, X, np.tanh, res.received), rtol=1e-12)
    assert before[3] not in res.workers_used
    # The cluster heals; the next batch runs on the restarted worker.
    after = wait_for_workers(client, N_CLUSTER, timeout=90, gone=(before[3],))
    assert before[3] not in after
    res2 = coded_compute(client, code, X, np.negative, timeout=60)
    np.testing.assert_allclose(res2.estimates, -X, atol=1e-12)


@pytest.mark.timeout(90)
def test_cluster_is_shut_down():
    psutil = pytest.importorskip("psutil")
    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    with open_cluster(n_workers=2, timeout=60) as c:
        address = c.scheduler.address
        pids = set(c.run(lambda: __import__("os").getpid()).values())
        assert len(pids) == 2
        host, port = address.removeprefix("tcp://").rsplit(":", 1)
        assert host == "127.0.0.1"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"
                                              for p in pids):
        time.sleep(0.1)
    assert not any(psutil.pid_exists(p) and psutil.Process(p).status() != "zombie" for p in pids)
    assert {p.pid for p in me.children(recursive=True) if p.status() != "zombie"} <= before
    with socket.socket() as s:
        s.settimeout(2)
        assert s.connect_ex((host, int(port))) != 0   # the scheduler's port is closed


def test_no_client_and_no_scheduler_are_named_at_once():
    with pytest.raises(ValueError, match=r"'client' parameter of coded_compute must be a distributed.Client "
                                         r".*Got None instead"):
        coded_compute(None, PolyCode(3, 8), np.zeros((3, 2)), np.negative)
    with socket.socket() as s:       # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{s.getsockname()[1]}"
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"'address' parameter of open_cluster must be the address of a running "
                                         r"Dask scheduler.*nothing answers there"):
        with open_cluster(n_workers=2, address=address, timeout=30):
            pass
    assert time.perf_counter() - t0 < 10          # refused at once, not after the timeout
    with pytest.raises(ValueError, match="'address' parameter of open_cluster.*Got 'foo' instead"):
        with open_cluster(address="foo"):
            pass


def test_import_gcc_does_not_import_dask():
    import subprocess
    import sys

    code = "import gcc, sys; bad = [m for m in ('dask', 'distributed', 'gcc.distributed') if m in sys.modules]; print(bad)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.timeout(90)
def test_scheduler_address_connects_and_leaves_the_cluster_running():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, host="127.0.0.1", protocol="tcp://",
                      dashboard_address="127.0.0.1:0", silence_logs=50) as cluster:
        with open_cluster(n_workers=2, address=cluster.scheduler_address, timeout=30) as c:
            X = np.random.default_rng(10).normal(size=(2, 3))
            res = coded_compute(c, PolyCode(2, 2), X, np.negative, timeout=30)
            np.testing.assert_allclose(res.estimates, -X, atol=1e-12)
        # Only our client was closed: the cluster still serves others.
        assert len(cluster.scheduler.workers) == 2


# ----------------------------------------------------------------------------- the actors
@pytest.mark.timeout(120)
@pytest.mark.parametrize("name,make", _codes()[:3], ids=[c[0] for c in _codes()[:3]])
def test_engine_decodes_like_in_process(client, name, make):
    X = np.random.default_rng(21).normal(size=(4, 3))
    code = make(4, 8)
    for S in (0, 2):
        res = coded_compute(client, code, X, np.tanh, n_stragglers=S, timeout=60)
        assert len(res.received) == 8 - S and res.stopped_by == "condition"
        np.testing.assert_allclose(res.estimates, _in_process(code, X, np.tanh, res.received), rtol=1e-12,
                                   atol=1e-14)
        assert len(set(res.workers_used)) == 8 - S
        table = pd.DataFrame(res.timings)
        assert (table.loc[table["used"], "busy_s"] >= table.loc[table["used"], "compute_s"]).all()


@pytest.mark.timeout(90)
def test_engine_interrupts_stragglers_and_keeps_its_actors(client):
    from gcc.distributed.coded import actor_pool

    X = np.random.default_rng(22).normal(size=(3, 2))
    code = PolyCode(3, 8)
    slow = Injection(base_s=0.01, slow_workers=[1, 6], slowdown=200)      # workers 1, 6 take ~2 s
    res = coded_compute(client, code, X, np.negative, n_stragglers=2, injection=slow, seed=0, timeout=30)
    assert 1 not in res.received and 6 not in res.received
    t0 = time.perf_counter()
    # Their sleeps were interrupted: the next batch, which needs all 8, is not held up by them.
    res2 = coded_compute(client, code, X, np.negative, timeout=30)
    assert time.perf_counter() - t0 < 1.0 and res2.received.tolist() == list(range(8))
    np.testing.assert_allclose(res2.estimates, -X, atol=1e-12)
    addresses = worker_addresses(client)[:8]
    assert actor_pool(client, addresses) is actor_pool(client, addresses)   # made once


def _count_relayed(dask_scheduler):
    """On the scheduler: count the messages it relays to workers (its ``proxy`` handler)."""
    original = dask_scheduler.gcc_proxy = dask_scheduler.handlers["proxy"]
    dask_scheduler.gcc_relayed = 0

    async def counting(**msg):
        dask_scheduler.gcc_relayed += 1
        return await original(**msg)

    dask_scheduler.handlers["proxy"] = counting


def _restore_relay(dask_scheduler):
    dask_scheduler.handlers["proxy"] = dask_scheduler.gcc_proxy


@pytest.mark.timeout(90)
def test_engine_calls_the_workers_without_the_scheduler_unless_told(client):
    X = np.random.default_rng(23).normal(size=(3, 2))
    code = PolyCode(3, 8)
    client.run_on_scheduler(_count_relayed)
    saved = client.direct_to_workers
    try:
        res = coded_compute(client, code, X, np.negative, timeout=30)
        assert client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.gcc_relayed) == 0
        # With Dask's direct-to-workers switched off the same calls are relayed by the scheduler.
        client.direct_to_workers = False
        relayed = coded_compute(client, code, X, np.negative, timeout=30)
        assert client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.gcc_relayed) == 8
    finally:
        client.direct_to_workers = saved
        client.run_on_scheduler(_restore_relay)
    assert res.received.tolist() == relayed.received.tolist() == list(range(8))
    np.testing.assert_allclose(relayed.estimates, res.estimates, rtol=0, atol=0)
    np.testing.assert_allclose(res.estimates, -X, atol=1e-12)
