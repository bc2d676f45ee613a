"""The incremental decoders of gcc.cpgc.simulate (sparse RREF, dense null space) against the
previous implementation (tests/cpgc_reference.py), against each other and against brute force."""
import importlib

import numpy as np
import pytest

from gcc import cpgc
from gcc.cpgc import elimination
from gcc.cpgc.master import IncrementalRREF

from cpgc_reference import brute_force_recoverable, reference_completion

sim = importlib.import_module("gcc.cpgc.simulate")           # the module (gcc.cpgc.simulate is the function)


def _codes():
    for K in (4, 7, 12, 40):
        for seed in range(3):
            for degrees in ((1, 2, 3), (1, 2), (1, 3), (1, 2, 2, 3), (1, 1, 2)):
                if sum(degrees) <= K:
                    for setting in ("computation", "communication"):
                        yield cpgc.make_code("rcsc", K, degrees, setting=setting, seed=seed)
    yield cpgc.example_code_k4()
    yield cpgc.icassp_mds_code(12, 3, seed=1)
    yield cpgc.uncoded_cyclic_code(10, 3)
    yield cpgc.uncoded_cyclic_code(10, 3, multi_message=False)


@pytest.mark.parametrize("q", [0.0, 0.15, 0.3, 0.6])
def test_completion_equals_the_previous_implementation(q):
    """Seeded: identical times, messages and recovered sets, trial by trial, on many codes."""
    for n, code in enumerate(_codes()):
        speeds = cpgc.worker_speeds(np.random.default_rng(n), 200, code.n_workers)
        ref = reference_completion(code, speeds, q, return_recovered=True)
        new = cpgc.completion(code, speeds, q, return_recovered=True)
        for a, b in zip(ref, new):
            np.testing.assert_array_equal(a, b)


def test_large_k_equals_the_previous_implementation():
    code = cpgc.make_code("rcsc", 400, (1, 2, 3), seed=5)
    speeds = cpgc.worker_speeds(np.random.default_rng(8), 6, 400)
    for q in (0.0, 0.3):
        for a, b in zip(reference_completion(code, speeds, q, True), cpgc.completion(code, speeds, q, True)):
            np.testing.assert_array_equal(a, b)


def _brute_force_completion(code, speeds, q):
    """Arrival by arrival, the brute-force rank test of all rows received so far."""
    K, R = code.n_workers, code.n_rows
    need = cpgc.required_blocks(code.n_blocks, q)
    rows = code.coefficients.reshape(K * R, code.n_blocks)
    last = np.r_[code.row_messages[1:] != code.row_messages[:-1], True]
    times = []
    for sp in speeds:
        rt = (sp[:, None] * code.row_units).reshape(-1)
        order = np.argsort(rt, kind="stable")
        t = np.inf
        for s in range(len(order)):
            if last[order[s] % R] and brute_force_recoverable(rows[order[: s + 1]]).sum() >= need:
                t = rt[order[s]]
                break
        times.append(t)
    return np.array(times)


@pytest.mark.parametrize("K,degrees,q", [(5, (1, 2), 0.0), (6, (1, 2, 3), 0.0), (6, (1, 2, 3), 0.3),
                                         (8, (1, 2, 2), 0.15), (9, (1, 3, 3), 0.5)])
def test_completion_equals_brute_force(K, degrees, q):
    code = cpgc.rcsc_code(K, degrees, seed=K)
    speeds = cpgc.worker_speeds(np.random.default_rng(K + 1), 40, K)
    np.testing.assert_array_equal(cpgc.completion(code, speeds, q)[0], _brute_force_completion(code, speeds, q))


def test_both_decoders_and_the_hand_over_agree(monkeypatch):
    code = cpgc.make_code("rcsc", 60, (1, 2, 3), seed=2)
    speeds = cpgc.worker_speeds(np.random.default_rng(3), 300, 60)
    expected = cpgc.completion(code, speeds, 0.2, return_recovered=True)
    calls = []
    dense = elimination.dense_recovery

    def counting(order, ids, *args, **kwargs):
        calls.append(len(ids))
        return dense(order, ids, *args, **kwargs)

    monkeypatch.setattr(sim, "dense_recovery", counting)
    monkeypatch.setattr(elimination, "ROW_WIDTH", 1)            # rows outgrow it: handed over
    handed = cpgc.completion(code, speeds, 0.2, return_recovered=True)
    assert calls and calls[0] > 0
    monkeypatch.setattr(sim, "MAX_SPARSE_DEGREE", 0)           # everything dense
    dense_only = cpgc.completion(code, speeds, 0.2, return_recovered=True)
    for a, b, c in zip(expected, handed, dense_only):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize("sparse", [True, False])
def test_incremental_rref_equals_brute_force(sparse):
    rng = np.random.default_rng(4)
    for trial in range(30):
        B = int(rng.integers(2, 12))
        rows = []
        rref = IncrementalRREF(B, sparse=sparse, scale=2.0)
        for _ in range(int(rng.integers(1, 2 * B))):
            row = np.zeros(B)
            idx = rng.choice(B, size=int(rng.integers(1, min(B, 4) + 1)), replace=False)
            row[idx] = rng.choice([1.0, -1.0, 2.0], size=idx.size) if trial % 2 else 1.0
            rows.append(row)
            raised = rref.add(row)
            np.testing.assert_array_equal(rref.determined(), brute_force_recoverable(np.array(rows)))
            assert rref.rank == np.linalg.matrix_rank(np.array(rows))
            assert raised == (rref.rank == np.linalg.matrix_rank(np.array(rows[:-1])) + 1 if len(rows) > 1
                              else rref.rank == 1)


def test_simulate_results_unchanged():
    """The seeded numbers of the CPGC chapter's default settings (Examples of simulate)."""
    res = cpgc.simulate("rcsc", n_workers=40, tolerance=0.0, trials=2000, seed=0)
    assert (round(res.mean_time, 4), round(res.mean_messages, 2)) == (0.1585, 64.29)
    assert round(cpgc.simulate("rcsc", tolerance=0.3, trials=2000, seed=0).mean_time, 4) == 0.075
