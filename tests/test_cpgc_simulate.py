"""Monte Carlo of gcc.cpgc.simulate against closed forms, exact enumeration, and its input checks."""
import numpy as np
import pytest

from gcc import cpgc
from gcc.cpgc import closed_forms as cf
from gcc.cpgc import enumeration as en


def test_harmonic_numbers():
    assert cf.harmonic(0) == 0.0
    assert cf.harmonic(40) == pytest.approx(sum(1.0 / i for i in range(1, 41)), rel=1e-13)


def test_mds_and_gc_monte_carlo_match_closed_forms_within_one_percent():
    mds = cpgc.simulate("mds", n_workers=40, trials=20000, seed=1)
    assert mds.mean_time == pytest.approx(cf.mds_mean_time(40, 3, mu=10.0, alpha=0.01), rel=0.01)
    assert mds.code.any_k == 14 and np.all(mds.messages == 14)
    gc = cpgc.simulate("gc", n_workers=40, trials=20000, seed=2)
    assert gc.mean_time == pytest.approx(cf.gc_mean_time(40, 6, mu=10.0, alpha=0.01), rel=0.01)
    assert np.all(gc.messages == 35)
    # Partial recovery does not apply to them.
    assert cpgc.simulate("mds", trials=500, tolerance=0.3, seed=3).mean_time == pytest.approx(
        cpgc.simulate("mds", trials=500, tolerance=0.0, seed=3).mean_time)


def test_elimination_engine_on_an_mds_code_equals_its_order_statistic():
    """The generic null-space path (threshold rule switched off) times a Gaussian MDS code as any_k does."""
    code = cpgc.mds_code(12, 3, seed=0)
    generic = cpgc.CPGCCode("mds", code.coefficients, code.row_units, code.row_messages, None, False,
                        "computation", 3)
    speeds = cpgc.worker_speeds(np.random.default_rng(5), 500, 12)
    t1, m1, _ = cpgc.completion(code, speeds)
    t2, m2, _ = cpgc.completion(generic, speeds)
    np.testing.assert_array_equal(t1, t2)
    np.testing.assert_array_equal(m1, m2)


@pytest.mark.parametrize("code,q", [
    (cpgc.example_code_k4(), 0.0),
    (cpgc.uncoded_cyclic_code(4, 2), 0.0),
    (cpgc.uncoded_cyclic_code(4, 2, multi_message=False), 0.0),
    (cpgc.rcsc_code(6, (1, 2), seed=4), 0.0),
    (cpgc.rcsc_code(6, (1, 2), seed=4), 0.3),
    (cpgc.icassp_mds_code(5, 2, seed=1), 0.0),
])
def test_monte_carlo_matches_exact_enumeration(code, q):
    exact = en.exact_mean_time(code, q, mu=10.0, alpha=0.01)
    res = cpgc.simulate(code=code, n_workers=code.n_workers, tolerance=q, trials=40000, seed=11)
    lo, hi = res.time_ci
    half = (hi - lo) / 2
    assert abs(res.mean_time - exact) < 2.0 * half, (res.mean_time, exact, half)


def test_result_object_and_reproducibility():
    a = cpgc.simulate("rcsc", n_workers=40, tolerance=0.15, trials=300, seed=7)
    b = cpgc.simulate("ccpr", n_workers=40, tolerance=0.15, trials=300, seed=7)
    np.testing.assert_array_equal(a.times, b.times)
    assert a.times.shape == (300,) and a.messages.shape == (300,)
    lo, hi = a.time_ci
    assert lo < a.mean_time < hi
    summary = a.summary()
    assert list(summary["metric"]) == ["time", "messages"]
    assert (summary["scheme"] == "rcsc").all() and (summary["tolerance"] == 0.15).all()
    assert (summary["trials"] == 300).all() and (summary["n"] == 300).all()
    time_row = summary.iloc[0]
    assert time_row["mean"] == a.mean_time
    assert (time_row["ci_low"], time_row["ci_high"]) == pytest.approx(a.time_ci, rel=1e-12)
    assert summary.iloc[1]["mean"] == a.mean_messages
    assert summary.iloc[1]["ci_low"] < a.mean_messages < summary.iloc[1]["ci_high"]
    # Tolerance can only shorten an iteration; RCSC with m = (1, 2, 3) beats UC-MMC at q = 0.
    full = cpgc.simulate("rcsc", trials=300, seed=7)
    assert np.all(a.times <= full.times)
    assert full.mean_time < cpgc.simulate("uc-mmc", trials=300, seed=7).mean_time


@pytest.mark.parametrize("kwargs,name,value", [
    ({"tolerance": 1.2}, "tolerance", "1.2"),
    ({"tolerance": -0.1}, "tolerance", "-0.1"),
    ({"tolerance": 1.0}, "tolerance", "1.0"),
    ({"mu": 0.0}, "mu", "0.0"),
    ({"mu": -2}, "mu", "-2"),
    ({"alpha": -0.01}, "alpha", "-0.01"),
    ({"degrees": (2, 3)}, "degrees", "(2, 3)"),
    ({"degrees": (1, 3, 2)}, "degrees", "(1, 3, 2)"),
    ({"degrees": (1, 2, 3), "n_workers": 5}, "degrees", "(1, 2, 3)"),
    ({"n_workers": 0}, "n_workers", "0"),
    ({"trials": 0}, "trials", "0"),
    ({"scheme": "lt-code"}, "scheme", "'lt-code'"),
])
def test_invalid_parameters_raise_value_error_naming_argument_and_value(kwargs, name, value):
    args = {"scheme": "rcsc", "trials": 10}
    args.update(kwargs)
    with pytest.raises(ValueError) as err:
        cpgc.simulate(**args)
    msg = str(err.value)
    assert f"'{name}' parameter of simulate" in msg and f"Got {value} instead." in msg


EXACT_MESSAGES = [
    (lambda: cpgc.simulate("rcsc", tolerance=1.2),
     "The 'tolerance' parameter of simulate must be a float in [0, 1). Got 1.2 instead."),
    (lambda: cpgc.simulate("rcsc", mu=0.0),
     "The 'mu' parameter of simulate must be a finite real number > 0. Got 0.0 instead."),
    (lambda: cpgc.simulate("rcsc", alpha=-0.01),
     "The 'alpha' parameter of simulate must be a finite real number >= 0. Got -0.01 instead."),
    (lambda: cpgc.simulate("rcsc", seed=-1),
     "The 'seed' parameter of simulate must be an int >= 0. Got -1 instead."),
    (lambda: cpgc.simulate("lt-code"),
     "The 'scheme' parameter of simulate must be one of 'rcsc', 'icassp-mds', 'uc-mmc', 'uc-smc', 'mds', "
     "'gc', 'ccpr', 'cpgc', 'mcc', 'cpgc-icassp'. Got 'lt-code' instead."),
    (lambda: cpgc.simulate("rcsc", degrees=(2, 3)),
     "The 'degrees' parameter of simulate must be a non-empty, non-decreasing sequence of ints starting at 1 "
     "(the first task is uncoded). Got (2, 3) instead."),
    (lambda: cpgc.simulate("rcsc", degrees=(1, 3, 2)),
     "The 'degrees' parameter of simulate must be a non-empty, non-decreasing sequence of ints starting at 1 "
     "(the first task is uncoded). Got (1, 3, 2) instead."),
    (lambda: cpgc.simulate("rcsc", n_workers=5),
     "The 'degrees' parameter of simulate must be a degree vector whose sum (the number of distinct shifts, 6) "
     "is at most n_workers=5. Got (1, 2, 3) instead."),
    (lambda: cpgc.simulate("uc-mmc", setting="Computation"),
     "The 'setting' parameter of simulate must be one of 'computation', 'communication' or None. "
     "Got 'Computation' instead."),
    (lambda: cpgc.simulate(code=cpgc.mds_code(12), n_workers=40),
     "The 'n_workers' parameter of simulate must be equal to code.n_workers=12. Got 40 instead."),
    (lambda: cpgc.simulate(code="mds"),
     "The 'code' parameter of simulate must be a gcc.cpgc.CPGCCode or None. Got 'mds' instead."),
    (lambda: cpgc.Master(cpgc.mds_code(4), tolerance=1),
     "The 'tolerance' parameter of Master must be a float in [0, 1). Got 1 instead."),
    (lambda: cpgc.Master(cpgc.mds_code(4)).receive(4, 0),
     "The 'worker' parameter of Master.receive must be an int in [0, 3]. Got 4 instead."),
    (lambda: cpgc.uncoded_cyclic_code(4, n_tasks=5),
     "The 'n_tasks' parameter of uncoded_cyclic_code must be an int in [1, 4]. Got 5 instead."),
    (lambda: cpgc.completion(cpgc.mds_code(4), np.ones((2, 3))),
     "The 'speeds' parameter of completion must be an array of shape (trials, 4) of finite times > 0 (it has shape (2, 3)). "
     "Got array([[1., 1., 1.],\n       [1., 1., 1.]]) instead."),
]


@pytest.mark.parametrize("call,message", EXACT_MESSAGES)
def test_exact_error_messages(call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert str(err.value) == message


def test_scheme_names_are_case_insensitive_and_options_exact():
    """A scheme is a name (any case, like gcc.codes.canonical); a setting is an option (exact)."""
    a = cpgc.simulate("RCSC", trials=50, seed=3)
    b = cpgc.simulate("rcsc", trials=50, seed=3)
    np.testing.assert_array_equal(a.times, b.times)
    assert cpgc.canonical_scheme("UC-MMC") == "uc-mmc" and cpgc.make_code("Mcc").name == "mds"


def test_more_distinct_shifts_than_workers():
    with pytest.raises(ValueError, match="'degrees' parameter of rcsc_code"):
        cpgc.rcsc_code(4, (1, 2, 3))
    with pytest.raises(ValueError, match="'setting' parameter of simulate"):
        cpgc.simulate("mds", setting="communication", trials=5)


def test_communication_setting_table_shape():
    """Coded communication with load 6: RCSC sends at cumulative counts 1, 3, 6."""
    res = cpgc.simulate("rcsc", setting="communication", trials=200, seed=0)
    assert res.code.setting == "communication" and res.code.load == 6
    np.testing.assert_array_equal(res.code.row_units, [1, 3, 6])
    mmc = cpgc.simulate("uc-mmc", setting="communication", trials=200, seed=0)
    assert mmc.code.load == 6 and mmc.code.n_messages == 6
