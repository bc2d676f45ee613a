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
    assert (mmc.degrees == 1).all() and set(np.unique(mmc.coefficients)) == {0.0, 1.0} and mmc.n_messages == 3
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


# --------------------------------------------------------------------------- issue 15: the contract
_K4 = cpgc.example_code_k4()


@pytest.mark.parametrize("call,name", [
    # probabilities, speeds and times outside their domain: errors, never negative values
    (lambda: cpgc.prob_tasks_done(1, 1.0, mu=-1.0), "'mu' parameter of prob_tasks_done"),
    (lambda: cpgc.prob_tasks_done(1, 1.0, alpha=-1.0), "'alpha' parameter of prob_tasks_done"),
    (lambda: cpgc.prob_tasks_done(-1, 1.0), r"'s' parameter of prob_tasks_done must be an int in \[0, r\]"),
    (lambda: cpgc.prob_tasks_done(4, 1.0, r=3), "'s'"), (lambda: cpgc.prob_tasks_done(1.5, 1.0), "'s'"),
    (lambda: cpgc.prob_tasks_done(0, 1.0, r=0), "'r'"), (lambda: cpgc.prob_tasks_done(0, np.nan), "'t'"),
    (lambda: cpgc.prob_tasks_done(0, 1j), r"'t'.*complex"),
    (lambda: cpgc.worker_speeds(None, 2, 3), "'rng' parameter of worker_speeds"),
    (lambda: cpgc.worker_speeds(0, 2, 3), "'rng'"),
    (lambda: cpgc.worker_speeds(np.random.default_rng(0), 2, 3, mu=0), "'mu'"),
    (lambda: cpgc.arrival_times(_K4, np.array([[-0.1, 0.3, 0.2, 0.1]])), "'speeds' parameter of arrival_times"),
    (lambda: cpgc.arrival_times(_K4, np.array([[0.1, 0.3]])), r"'speeds'.*\(trials, 4\)"),
    (lambda: cpgc.arrival_times(_K4, np.array([[0.1j, 0.3, 0.2, 0.1]])), r"'speeds'.*complex"),
    (lambda: cpgc.arrival_times(3, np.ones((1, 4))), "'code' parameter of arrival_times"),
    # the closed forms name their own arguments
    (lambda: cpgc.closed_forms.threshold_mean_time(3, 1, -1), "'units' parameter of threshold_mean_time"),
    (lambda: cpgc.closed_forms.threshold_mean_time(3, 4, 1), "'k' parameter of threshold_mean_time"),
    (lambda: cpgc.closed_forms.mds_mean_time(4, 2, k_bar=0), "'k_bar' parameter of mds_mean_time"),
    (lambda: cpgc.closed_forms.mds_mean_time(4, 2, mu=0), "'mu' parameter of mds_mean_time"),
    (lambda: cpgc.closed_forms.gc_mean_time(4, 2, mu=0), "'mu' parameter of gc_mean_time"),
    # enumeration
    (lambda: en.type_counts(3), "'code' parameter of type_counts"),
    (lambda: en.exact_mean_time(_K4, tolerance=2), "'tolerance' parameter of exact_mean_time"),
    # codes: seeds, shifts, flags and hand-made codes
    (lambda: cpgc.rcsc_code(4, (1, 2), seed="a"), "'seed' parameter of rcsc_code"),
    (lambda: cpgc.rcsc_code(4, (1, 2), seed=-1), "'seed'"),
    (lambda: cpgc.icassp_mds_code(4, 2, seed=None), "'seed' parameter of icassp_mds_code"),
    (lambda: cpgc.mds_code(4, 2, seed=1.0), "'seed' parameter of mds_code"),
    (lambda: cpgc.uncoded_cyclic_code(4, 2, multi_message="no"), "'multi_message'"),
    (lambda: cpgc.make_code("rcsc", 4, degrees=(1, 2), seed="x"), "'seed' parameter of make_code"),
    (lambda: cpgc.CPGCCode("x", np.ones((2, 1, 2)) * 1j, np.ones(1), np.zeros(1, int)), "'coefficients'"),
    (lambda: cpgc.CPGCCode("x", np.ones((2, 1, 2)), np.zeros(1), np.zeros(1, int)), "'row_units'"),
    (lambda: cpgc.CPGCCode("x", np.ones((2, 2, 2)), np.ones(2), np.array([0, 2])), "'row_messages'"),
    (lambda: cpgc.CPGCCode("x", np.ones((2, 2, 2)), np.array([1.0, 2.0]), np.zeros(2, int)), "'row_units'"),
    (lambda: cpgc.CPGCCode("x", np.ones((2, 1, 2)), np.ones(1), np.zeros(1, int), any_k=3), "'any_k'"),
    (lambda: cpgc.CPGCCode("x", np.ones((2, 1, 2)), np.ones(1), np.zeros(1, int), setting="x"), "'setting'"),
])
def test_cpgc_helpers_reject_values_outside_their_domain(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_generators_are_accepted_as_seeds_and_probabilities_stay_in_range():
    a = cpgc.rcsc_code(6, (1, 2), seed=np.random.default_rng(3))
    assert a.coefficients.shape == (6, 2, 6)
    t = np.linspace(-1.0, 2.0, 31)
    p = np.stack([cpgc.prob_tasks_done(s, t, 10.0, 0.01, 3) for s in range(4)])
    assert p.min() >= 0 and p.max() <= 1 and np.allclose(p.sum(axis=0), 1.0)
    assert cpgc.prob_tasks_done(0, -1.0) == 1.0          # nothing is done before time 0


def test_make_code_refuses_a_worker_count_whose_dense_code_cannot_be_held():
    """10**7 workers was a MemoryError for a 2 PiB array; now the bound is named before any allocation."""
    with pytest.raises(ValueError, match=r"'n_workers' parameter of make_code must be an int in \[1, 4096\]"):
        cpgc.make_code("rcsc", 10**7)
    assert cpgc.make_code("uc-mmc", cpgc.codes.MAX_WORKERS, load=1).n_workers == cpgc.codes.MAX_WORKERS
