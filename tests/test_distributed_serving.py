"""Coded serving of a network on Dask: against the direct computation, baselines, table, a CLI-started cluster.

A tiny LeNet-5 with seeded random weights is written as a weight-cache entry in a temporary
folder (nothing is trained); a LocalCluster of 4 workers (loopback) serves it. The last test
starts a scheduler and two workers with Dask's own command-line tools on 127.0.0.1, kills one
mid-batch, and cleans up its processes whatever happens.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
torch = pytest.importorskip("torch")

import gcc.codes as codes  # noqa: E402
from gcc.distributed import Injection, Replication, Uncoded, coded_compute, open_cluster  # noqa: E402
from gcc.distributed.cluster import wait_for_workers  # noqa: E402
from gcc.distributed.coded import model_load_counts  # noqa: E402
from gcc.distributed.latency import run_requests  # noqa: E402
from gcc.distributed.serving import (SERVING_SUMMARY_COLUMNS, checkpoint_file, load_network,  # noqa: E402
                                     load_on_workers, network_ref, serve_requests, summarize_serving)
from gcc.experiments import dnn_serving  # noqa: E402

N_CLUSTER = 4
CLUSTER_WORKERS = N_CLUSTER   # the shared cluster fixture of conftest.py
K, N = 2, 4
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    """A cache entry ``<key>.pt`` + ``<key>.json`` of a LeNet-5 with seeded random weights."""
    from gcc.dnn.models import LeNet5

    folder = tmp_path_factory.mktemp("models")
    torch.manual_seed(0)
    model = LeNet5(img_size=28)
    key = "ab" * 32
    torch.save(model.state_dict(), folder / f"{key}.pt")
    config = {"arch": "lenet5", "img_size": 28, "in_chans": 1, "num_classes": 10}
    (folder / f"{key}.json").write_text(json.dumps({"config": config, "name": "lenet5"}))
    return folder / f"{key}.pt"


@pytest.fixture(scope="module")
def pool(weights):
    """40 noise images labelled by the network itself, every third label changed (accuracy 2/3)."""
    rng = np.random.default_rng(0)
    images = rng.normal(size=(40, 1, 28, 28)).astype(np.float32)
    labels = load_network(str(weights), device="cpu")(images).argmax(axis=1)
    labels[::3] = (labels[::3] + 1) % 10
    return images, labels


def _direct(code, X, f, received):
    """Encode, forward each coded image alone, decode: the same computation in this process."""
    coded = code.encode(X)
    return code.decode(np.stack([f(coded[i]) for i in received]), received)


def test_served_network_decodes_like_the_direct_computation(client, weights, pool):
    ref, local = network_ref(weights, device="cpu"), load_network(str(weights), device="cpu")
    X = pool[0][:K]
    for name in ("gcc", "bacc"):
        code = codes.make(name, K, N)
        res = coded_compute(client, code, X, ref, n_stragglers=1, seed=0, timeout=60)
        assert len(res.received) == N - 1
        np.testing.assert_allclose(res.estimates, _direct(code, X, local, res.received), rtol=1e-5, atol=1e-6)
        # float32 images in, float32 probabilities out (the codes keep the dtype)
        assert res.bytes_sent == N * 784 * 4 and res.bytes_received == (N - 1) * 10 * 4


def test_network_is_loaded_once_per_worker_on_its_device(client, weights, pool):
    ref = network_ref(weights, device="cpu")
    devices = load_on_workers(client, [ref])
    assert len(devices) == N_CLUSTER and all(per[ref.name] == "cpu" for per in devices.values())
    for seed in range(3):
        coded_compute(client, codes.make("gcc", K, N), pool[0][:K], ref, n_stragglers=1, seed=seed)
    counts = client.run(model_load_counts)
    assert all(c.get(ref.name) == 1 for c in counts.values()), counts


def test_baselines_and_the_table_contract(client, weights, pool):
    ref, local = network_ref(weights, device="cpu"), load_network(str(weights), device="cpu")
    images, labels = pool
    schemes = dnn_serving.serving_schemes(K, N, stragglers=[1])
    assert list(schemes) == ["uncoded", "replication", "gcc_s1", "bacc_s1"]
    injections = dnn_serving.serving_injections(2.0, slowdown=5.0)
    networks = {"tiny": {"ref": ref, "exact": local, "images": images, "labels": labels, "dataset": "noise"}}
    requests = dnn_serving.serving_experiment(client, networks, schemes, injections, n_inputs=K, n_requests=4,
                                              seed=1, warmup=1)
    assert len(requests) == 2 * 4 * len(schemes) and requests["error"].eq("").all()
    # Exact schemes score exactly the uncoded network on the same images.
    exact = requests[requests.scheme.isin(["uncoded", "replication"])]
    assert (exact["correct"] == exact["base_correct"]).all() and np.allclose(exact["loss"], 0, atol=1e-10)
    # The same requests (images) for every scheme and both scenarios.
    assert requests.groupby("request")["base_correct"].nunique().eq(1).all()
    table = dnn_serving.serving_table(requests)
    assert list(table.columns[:13]) == dnn_serving.TABLE_COLUMNS
    assert len(table) == 2 * len(schemes)
    assert table["accuracy"].between(0, 1).all() and (table["requests"] == 4).all()
    assert (table["p50_ms"] <= table["p99_ms"]).all() and (table["p99_ms"] <= table["p999_ms"]).all()
    rows = table.set_index(["injection", "scheme"])
    assert rows.loc[("none", "uncoded"), "relacc"] == 1.0 and rows.loc[("none", "uncoded"), "n_workers"] == K
    assert rows.loc[("none", "gcc_s1"), "stragglers"] == 1 and rows.loc[("none", "replication"), "stragglers"] == N - K
    assert rows.loc[("none", "gcc_s1"), "workers_used"] == N - 1
    assert rows.loc[("none", "uncoded"), "bytes_per_request"] == K * (784 + 10) * 4


def test_pareto_front_is_the_undominated_points():
    import pandas as pd

    table = pd.DataFrame({"model": ["m"] * 5 + ["n"], "injection": ["s"] * 6,
                          "p99_ms": [100.0, 50.0, 60.0, 40.0, 50.0, 500.0],
                          "accuracy": [0.90, 0.85, 0.80, 0.70, 0.85, 0.1]})
    # (60, .80) is beaten by (50, .85); the tie (50, .85) twice: neither strictly beats the other.
    assert dnn_serving.pareto_front(table).tolist() == [True, True, False, True, True, True]


def _paired(ratio: float, drop_images: int, n: int = 200):
    """Synthetic requests: uncoded's latency 0.1-0.3 s, the coded scheme's ``ratio`` times it."""
    import pandas as pd

    rng = np.random.default_rng(0)
    base = rng.uniform(0.1, 0.3, size=n)
    rows = []
    for r in range(n):
        lost = 1 if r < drop_images else 0
        rows.append({"model": "m", "injection": "straggler", "scheme": "uncoded", "request": r, "latency_s": base[r],
                     "correct": 4, "n_inputs": 4})
        rows.append({"model": "m", "injection": "straggler", "scheme": "gcc_s1", "request": r,
                     "latency_s": ratio * base[r], "correct": 4 - lost, "n_inputs": 4})
    return pd.DataFrame(rows)


def test_tail_verdicts_can_support_and_refute():
    good = dnn_serving.tail_verdicts(_paired(0.2, drop_images=8))        # p99 x0.2, accuracy -0.01
    assert good.loc[0, "verdict"] == "supported"
    assert good.loc[0, "p99_ratio"] == pytest.approx(0.2) and good.loc[0, "accuracy_drop"] == pytest.approx(0.01)
    slow = dnn_serving.tail_verdicts(_paired(0.9, drop_images=0))
    assert slow.loc[0, "tail_verdict"] == "above" and slow.loc[0, "verdict"] == "refuted"
    wrong = dnn_serving.tail_verdicts(_paired(0.2, drop_images=200))     # every request loses one of 4
    assert wrong.loc[0, "accuracy_verdict"] == "above" and wrong.loc[0, "verdict"] == "refuted"
    assert dnn_serving.overall_verdict(good) == "undecided"              # one network of the two needed
    assert dnn_serving.overall_verdict(good.loc[[0, 0]]) == "supported"


def test_run_requests_score_needs_labelled_batches(client):
    with pytest.raises(ValueError, match="'make_batch' parameter of run_requests must be a callable returning"):
        run_requests(client, {"u": {"code": Uncoded(2)}}, lambda rng: np.zeros((2, 3)), np.sin, n_requests=1,
                     score=lambda est, true, y: {}, warmup=0)


@pytest.mark.parametrize("call, match", [
    (lambda w: network_ref(w.with_suffix(".json")), "'path' parameter of network_ref"),
    (lambda w: network_ref(3), "'path' parameter of network_ref must be a path"),
    (lambda w: checkpoint_file("ffff", folder=w.parent), "'key' parameter of checkpoint_file.*0 entries match"),
    (lambda w: network_ref(w, device=1), "'device' parameter of network_ref"),
    (lambda w: serve_requests(None, {}, np.sin, np.zeros((3, 1, 2, 2)), [0, 1], n_inputs=1, n_requests=1),
     "'labels' parameter of serve_requests must be one label per image"),
    (lambda w: serve_requests(None, {}, np.sin, np.zeros((3, 1, 2, 2)), [0, 1, 2], n_inputs=4, n_requests=1),
     "'n_inputs' parameter of serve_requests"),
    (lambda w: serve_requests(None, {}, np.sin, np.zeros((3, 4)), [0, 1, 2], n_inputs=1, n_requests=1),
     "'images' parameter of serve_requests"),
    (lambda w: serve_requests(None, {}, np.sin, np.zeros((3, 1, 2, 2)), [0, 1, 2], n_inputs=1, n_requests=0),
     "'n_requests' parameter of serve_requests"),
    (lambda w: summarize_serving(3), "'table' parameter of summarize_serving"),
    (lambda w: dnn_serving.serving_schemes(4, 4), "'n_workers' parameter of serving_schemes must be an int > n_inputs"),
    (lambda w: dnn_serving.serving_schemes(4, 8, stragglers=[8]), "'stragglers' parameter of serving_schemes"),
    (lambda w: dnn_serving.serving_schemes(4, 8, stragglers=[1, 1]), "'stragglers'.*distinct"),
    (lambda w: dnn_serving.serving_injections(5.0, slowdown=0.5), "'slowdown' parameter of serving_injections"),
    (lambda w: dnn_serving.scheme_label("lcc_s1"), "'key' parameter of scheme_label"),
    (lambda w: dnn_serving.tail_verdicts(_paired(0.5, 0), scheme="gcc_s9"), "'scheme' parameter of tail_verdicts"),
    (lambda w: dnn_serving.tail_verdicts(_paired(0.5, 0), ratio_goal=0), "'ratio_goal' parameter of tail_verdicts"),
    (lambda w: dnn_serving.serving_experiment(None, {}, {}, {}, n_inputs=1, n_requests=1),
     "'networks' parameter of serving_experiment"),
])
def test_bad_arguments_get_the_contract_message(weights, call, match):
    with pytest.raises(ValueError, match=match):
        call(weights)


def test_summary_columns_are_documented(client, weights, pool):
    ref = network_ref(weights, device="cpu")
    requests = serve_requests(client, {"u": {"code": Uncoded(K)}}, ref, *pool, n_inputs=K,
                              n_requests=2, warmup=0)
    summary = summarize_serving(requests)
    assert list(summary.columns) == ["scheme", *SERVING_SUMMARY_COLUMNS]
    assert np.isnan(summary.loc[0, "simulated_p50_ms"])   # no injection: nothing to simulate


# ---------------------------------------------------------------------------
# A cluster started with Dask's command-line tools (loopback only)
# ---------------------------------------------------------------------------

def _dask_cli() -> str:
    exe = Path(sys.executable).parent / "dask"
    if not exe.exists():
        pytest.skip("the dask command-line tool is not installed beside this Python")
    return str(exe)


@pytest.fixture
def cli_cluster(tmp_path):
    """``dask scheduler`` + two ``dask worker`` processes on 127.0.0.1; all stopped at the end."""
    dask = _dask_cli()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
               OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    scheduler_file = tmp_path / "scheduler.json"
    procs = []

    def start(*args):
        log = open(tmp_path / f"{len(procs)}.log", "wb")
        procs.append(subprocess.Popen([dask, *args], stdout=log, stderr=subprocess.STDOUT, env=env,
                                      start_new_session=True))

    try:
        # The scheduler stops itself after 5 idle minutes and the workers 60 s after losing it,
        # should this process die before its finaliser runs.
        start("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--idle-timeout", "300s",
              "--scheduler-file", str(scheduler_file))
        end = time.monotonic() + 90
        while not scheduler_file.exists() and time.monotonic() < end and procs[0].poll() is None:
            time.sleep(0.2)
        if not scheduler_file.exists():
            pytest.fail("dask scheduler did not write its scheduler file: "
                        + (tmp_path / "0.log").read_text(errors="replace")[-2000:])
        address = json.loads(scheduler_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        for i in range(2):
            start("worker", "--scheduler-file", str(scheduler_file), "--host", "127.0.0.1", "--nthreads", "1",
                  "--no-nanny", "--no-dashboard", "--death-timeout", "60", "--name", f"cli-{i}")
        yield address, procs[1:]
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in reversed(procs):
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


def test_cli_cluster_survives_a_worker_killed_mid_batch(cli_cluster):
    address, workers = cli_cluster
    code = codes.make("gcc", 2, 2)
    X = np.random.default_rng(0).uniform(-1, 1, size=(2, 5))
    with open_cluster(n_workers=2, address=address, timeout=90) as client:
        pids = client.run(os.getpid)                         # {address: pid}, sorted below
        addresses = sorted(pids)
        victim = next(p for p in workers if p.pid == pids[addresses[0]])
        # Worker 0 would answer first (0.6 s); worker 1 takes 4 x 0.6 s. Worker 0 dies at 0.3 s.
        injection = Injection(base_s=0.6, slow_workers=(1,), slowdown=4.0)
        out = {}
        batch = threading.Thread(target=lambda: out.update(res=coded_compute(
            client, code, X, np.tanh, n_stragglers=1, injection=injection, seed=0, timeout=60)))
        t0 = time.perf_counter()
        batch.start()
        time.sleep(0.3)
        victim.kill()
        victim.wait(timeout=10)
        batch.join(timeout=90)
        assert not batch.is_alive(), "the coded batch did not finish within its bound"
        res = out["res"]
        # Decoded from the survivor alone, as the direct decode of that worker's output.
        assert res.received.tolist() == [1] and res.workers_used == [addresses[1]]
        np.testing.assert_allclose(res.estimates, code.decode(np.tanh(code.encode(X)[[1]]), [1]), atol=1e-12)
        assert time.perf_counter() - t0 >= 2.0
        # Without the lost worker, a batch that needs both is refused with a message naming the cluster.
        wait_for_workers(client, 1, timeout=60)
        with pytest.raises(ValueError, match="at least n_workers=2 distinct Dask workers"):
            coded_compute(client, code, X, np.tanh, timeout=10, replacement_wait=0)
