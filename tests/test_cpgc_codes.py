"""CPGC codes: structure of the constructions and the digest's exact K = 4, r = 2 counting table."""
import numpy as np
import pytest

from gcc import cpgc
from gcc.cpgc import enumeration as en

# The digest's table (Section 4): number of recoverable score vectors per type (N2, N1, N0),
# full recovery, for MDS / UC-MMC / CCPR. Types absent from the digest have 0 recoverable vectors.
DIGEST_TABLE = {
    (4, 0, 0): (1, 1, 1), (3, 1, 0): (4, 4, 4), (3, 0, 1): (4, 4, 4), (2, 2, 0): (6, 6, 6),
    (2, 1, 1): (12, 8, 12), (2, 0, 2): (6, 2, 6), (1, 3, 0): (0, 4, 4), (1, 2, 1): (0, 4, 8),
    (0, 4, 0): (0, 1, 1),
}


def test_counting_table_k4_r2_matches_digest_by_enumeration():
    codes = [cpgc.mds_code(4, n_tasks=2), cpgc.uncoded_cyclic_code(4, 2), cpgc.example_code_k4()]
    tables = [en.type_counts(c) for c in codes]
    # 15 types of 4 workers over scores {0, 1, 2}; 3^4 = 81 vectors in all.
    assert all(len(t) == 15 and sum(tot for _, tot in t.values()) == 81 for t in tables)
    for key in tables[0]:
        got = tuple(t[key][0] for t in tables)
        assert got == DIGEST_TABLE.get(key, (0, 0, 0)), key


def test_exact_mean_time_of_mds_k4_equals_closed_form():
    code = cpgc.mds_code(4, n_tasks=2)
    assert en.exact_mean_time(code, mu=10.0, alpha=0.01) == pytest.approx(
        cpgc.closed_forms.mds_mean_time(4, 2, mu=10.0, alpha=0.01), rel=1e-8)


@pytest.mark.parametrize("K,degrees", [(40, (1, 2, 3)), (12, (1, 1, 2, 4)), (7, (1, 2))])
def test_rcsc_structure(K, degrees):
    code = cpgc.rcsc_code(K, degrees, seed=3)
    assert code.coefficients.shape == (K, len(degrees), K)
    assert set(np.unique(code.coefficients)) <= {0.0, 1.0}
    np.testing.assert_array_equal(code.degrees, np.tile(degrees, (K, 1)))
    # A worker's messages share no block: every block at most once per worker.
    assert code.coefficients.sum(axis=1).max() == 1
    # Every block appears equally often at each message position: m_j times in message j.
    np.testing.assert_array_equal(code.coefficients.sum(axis=0), np.tile(np.array(degrees)[:, None], (1, K)))
    np.testing.assert_array_equal(code.row_units, np.arange(1, len(degrees) + 1))
    comm = cpgc.rcsc_code(K, degrees, seed=3, setting="communication")
    np.testing.assert_array_equal(comm.row_units, np.cumsum(degrees))
    np.testing.assert_array_equal(comm.coefficients, code.coefficients)


def test_uncoded_and_threshold_codes():
    mmc = cpgc.uncoded_cyclic_code(5, 3)
    assert mmc.is_uncoded() and mmc.n_messages == 3
    np.testing.assert_array_equal(np.argmax(mmc.coefficients[4], axis=1), [4, 0, 1])
    smc = cpgc.uncoded_cyclic_code(5, 3, multi_message=False)
    assert smc.n_messages == 1 and np.all(smc.row_units == 3)
    mds = cpgc.mds_code(40, 3)
    assert mds.any_k == 14 and mds.n_blocks == 14 and not mds.partial
    gc = cpgc.gradient_code(40, 6)
    assert gc.any_k == 35 and gc.setting == "communication"
    icassp = cpgc.icassp_mds_code(10, 3, seed=0)
    np.testing.assert_array_equal(icassp.coefficients[:, 0], np.eye(10))
    assert cpgc.canonical_scheme("CCPR") == "rcsc" and cpgc.canonical_scheme("mcc") == "mds"


def test_prob_tasks_done_is_a_distribution_and_matches_sampling():
    rng = np.random.default_rng(0)
    Y = 0.01 + rng.exponential(0.1, 200_000)
    for t in (0.005, 0.015, 0.05, 0.2, 0.7):
        p = np.array([cpgc.prob_tasks_done(s, t, 10.0, 0.01, 3) for s in range(4)])
        assert p.sum() == pytest.approx(1.0, abs=1e-12) and np.all(p >= -1e-15)
        emp = np.bincount(np.minimum(3, np.floor(t / Y).astype(int)), minlength=4) / Y.size
        np.testing.assert_allclose(p, emp, atol=5e-3)
