"""The master's incremental decision (peeling, then rank test) against a brute-force rank test."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gcc import cpgc
from gcc.cpgc import CPGCCode
from cpgc_reference import brute_force_recoverable


def _random_binary_code(rng, K, R, max_deg):
    coef = np.zeros((K, R, K))
    for i in range(K):
        for j in range(R):
            coef[i, j, rng.choice(K, size=rng.integers(1, max_deg + 1), replace=False)] = 1.0
    return CPGCCode("rcsc", coef, np.arange(1.0, R + 1), np.arange(R), None, True, "computation", R)


def _codes(seed):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(3, 13))
    kind = seed % 4
    if kind == 0:
        L = int(rng.integers(1, min(K, 6) + 1))
        degrees = [1] + sorted(int(x) for x in rng.integers(1, 3, size=0))
        while sum(degrees) < L:
            degrees.append(max(degrees[-1], int(rng.integers(1, 3))))
        if sum(degrees) > K:
            degrees = [1]
        return cpgc.rcsc_code(K, degrees, seed=rng)
    if kind == 1:
        return cpgc.icassp_mds_code(K, int(rng.integers(1, 4)), seed=rng)
    if kind == 2:
        return cpgc.uncoded_cyclic_code(K, int(rng.integers(1, K + 1)), multi_message=bool(rng.integers(2)))
    return _random_binary_code(rng, K, int(rng.integers(1, 4)), 3)


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 10_000), frac=st.floats(0.0, 1.0))
def test_incremental_decision_equals_brute_force_rank(seed, frac):
    code = _codes(seed)
    rng = np.random.default_rng(seed + 1)
    msgs = [(i, j) for i in range(code.n_workers) for j in range(code.n_messages)]
    order = rng.permutation(len(msgs))[: int(round(frac * len(msgs)))]
    master = cpgc.Master(code, tolerance=0.0)
    rows = []
    for n in order:
        i, j = msgs[n]
        master.receive(i, j)
        rows.extend(code.coefficients[i, code.message_rows(j)])
        # The decision after every single message equals the brute-force rank test.
        np.testing.assert_array_equal(master.recovered, brute_force_recoverable(np.array(rows)))


@pytest.mark.parametrize("seed", range(6))
def test_decoded_values_equal_the_true_block_products(seed):
    rng = np.random.default_rng(seed)
    code = cpgc.rcsc_code(12, (1, 2, 3), seed=seed) if seed % 2 == 0 else cpgc.icassp_mds_code(12, 3, seed)
    blocks = rng.standard_normal((code.n_blocks, 5))          # W_k theta, block length 5
    master = cpgc.Master(code, tolerance=0.0)
    msgs = [(i, j) for i in range(code.n_workers) for j in range(code.n_messages)]
    for n in rng.permutation(len(msgs)):
        i, j = msgs[n]
        value = code.coefficients[i, code.message_rows(j)] @ blocks
        if master.receive(i, j, value):
            break
    assert master.complete
    out = master.decode()
    np.testing.assert_allclose(out[master.recovered], blocks[master.recovered], atol=1e-9)


def test_mds_master_decodes_after_k_bar_messages():
    rng = np.random.default_rng(0)
    code = cpgc.mds_code(10, 3, seed=1)                        # k_bar = 4
    blocks = rng.standard_normal((4, 6))
    master = cpgc.Master(code)
    for n, i in enumerate(rng.permutation(10)[:4]):
        done = master.receive(int(i), 0, code.coefficients[i, 0] @ blocks)
        assert done == (n == 3)
    np.testing.assert_allclose(master.decode(), blocks, atol=1e-10)


def test_tolerance_stops_early_and_counts_messages():
    code = cpgc.uncoded_cyclic_code(10, 2)
    master = cpgc.Master(code, tolerance=0.3)                  # needs ceil(7) = 7 blocks
    for i in range(6):
        assert not master.receive(i, 0)
    assert master.receive(6, 0) and master.n_recovered == 7 and master.n_messages == 7
    assert cpgc.required_blocks(40, 0.15) == 34 and cpgc.required_blocks(40, 0.3) == 28
    assert cpgc.required_blocks(40, 0.7) == 12 and cpgc.required_blocks(10, 0.15) == 9


def test_vectorised_engine_equals_master_replay():
    """simulate()'s batched null-space elimination makes the same decision as the master."""
    for seed, (scheme, q) in enumerate([("rcsc", 0.0), ("rcsc", 0.15), ("rcsc", 0.3),
                                         ("icassp-mds", 0.0), ("icassp-mds", 0.3), ("uc-mmc", 0.15),
                                         ("uc-smc", 0.0)]):
        res = cpgc.simulate(scheme, n_workers=16, tolerance=q, trials=40, seed=seed, return_recovered=True)
        code = res.code
        speeds = cpgc.worker_speeds(np.random.default_rng(np.random.SeedSequence(seed).spawn(2)[1]), 40, 16)
        for t in range(40):
            times = speeds[t][:, None] * code.message_units()
            master = cpgc.Master(code, q)
            for flat in np.argsort(times, axis=None, kind="stable"):
                i, j = divmod(int(flat), code.n_messages)
                if master.receive(i, j):
                    break
            assert times[i, j] == res.times[t]
            assert master.n_messages == res.messages[t]
            np.testing.assert_array_equal(master.recovered, res.recovered[t])
