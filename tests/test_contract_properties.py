"""The argument contract of gcc's public API: one table of representative bad inputs per entry point.

Every public entry point (the core, the CPGC core, the distributed, dnn, results and machine helpers
and the runner's command line) is called with one argument replaced by one representative malformed
value per constraint of that argument (the wrong type, each bound crossed, NaN, a complex or string
entry, a wrong shape, a float, repeated or out-of-range worker index...). The contract: an
:class:`~gcc.validation.InvalidParameterError` whose message names the argument, the constraint and
the value (``The 'x' parameter of f must be ... Got ... instead.``), never a silent NaN, truncation,
another exception or a result; a ``ComplexWarning`` is an error here. Entries with ``mine=False``
(errors of other libraries' APIs) need only a ``ValueError``/``TypeError`` that names the argument.

The valid calls and a few laws of valid inputs (hypothesis, derandomized) are checked too. A known
gap may be listed in an entry's ``gaps`` (argument -> reason): ``xfail(strict=True)``. The number of
inputs tried is printed at the end of the module (``contract inputs tried: ...``).
"""
from __future__ import annotations

import dataclasses
import numbers
import re
import warnings
from collections import Counter
from typing import Any, Callable

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst

import contract_table as st

import gcc
from gcc import cpgc, harness, straggler_runs, stragglers, summary, tuning
from gcc.adversary import block_losses, worst_case_stragglers
from gcc.cpgc import closed_forms as cf
from gcc.cpgc import enumeration as en
from gcc.cpgc import regression as rg
from gcc.points import code_points
from gcc.validation import InvalidParameterError

ComplexWarning = getattr(np, "exceptions", np).ComplexWarning

#: the library's one message form
CONTRACT = re.compile(r"^The '[^']+' parameter of \S.* must be .+ Got .* instead\.$", re.S)
#: inputs tried, per kind of test (printed at the end of the module)
TRIED: Counter = Counter()
SETTINGS = dict(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                       HealthCheck.data_too_large])


@pytest.fixture(scope="module", autouse=True)
def _report_inputs(request):
    yield
    line = (f"contract inputs tried: {sum(TRIED.values())} "
            f"({', '.join(f'{k} {v}' for k, v in sorted(TRIED.items()))})")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():       # shown even under capture and -q
            reporter.write_line("\n" + line)


# --------------------------------------------------------------------------- malformed values
# One representative value per constraint of an argument: the wrong type (a float for an int,
# a complex number for a real, ...), each bound crossed, NaN where finiteness is required, each
# shape or index rule broken. The same values every run.

def ints(lo=None, hi=None, none_ok=False):
    """An int in [lo, hi]: a float (an integral one: never truncated), a bool, each bound crossed (below
    ``lo``: 0 or less, a value no relation to another argument rejects first)."""
    below = [min(lo - 1, 0)] if lo is not None else []
    return st.sampled_from([float(lo if lo is not None else 2), True] + below + ([hi + 1] if hi is not None else []))


def reals(lo=None, hi=None, lo_open=False, hi_open=False, none_ok=False):
    """A finite real in the interval: a complex number, NaN and each bound crossed."""
    return st.sampled_from([0.5j, float("nan")] + ([lo if lo_open else lo - 1.0] if lo is not None else [])
                           + ([hi if hi_open else hi + 1.0] if hi is not None else []))


def choices(options, case_sensitive=True, none_ok=False):
    """One of ``options``: a value that is none of them."""
    numeric = [o for o in options if isinstance(o, (int, float)) and not isinstance(o, bool)]
    return st.sampled_from([max(numeric) + 1 if numeric else "nope"])


FLAGS = st.sampled_from([1])            # a bool: an int is not one
FUNCS = st.sampled_from(["f"])          # a callable
RNGS = st.sampled_from([0])             # a Generator: a seed is not one


def seeds(generator_ok=False):
    """A seed (an int >= 0): a float and a negative int."""
    return st.sampled_from([1.5, -1])


def real_arrays(shape, finite=True, complex_ok=False, extra_axis=False, wrong_len=True, none_ok=False):
    """A real (finite) array of ``shape``: strings, a NaN entry, a complex entry, a wrong shape.

    ``extra_axis``: an additional trailing axis is malformed (not for arrays with ``*out`` axes);
    ``wrong_len``: so is a leading axis one longer.
    """
    shape = tuple(shape)
    size = int(np.prod(shape))
    base = np.linspace(0.1, 0.9, size).reshape(shape)
    values = [np.full(shape, "a")]
    if size and finite:
        values.append(np.where(np.arange(size).reshape(shape) == size // 2, np.nan, base))
    if size and not complex_ok:
        values.append(base + 1j * (np.arange(size).reshape(shape) == 0))
    if extra_axis:
        values.append(np.zeros(shape + (2,)))
    elif wrong_len and shape:
        values.append(np.zeros((shape[0] + 1,) + shape[1:]))
    return st.sampled_from(values)


def index_arrays(n, size, ordered=True, distinct=True, none_ok=False):
    """``size`` worker indices (or labels) in [0, n): floats, one out of range, repeated, unordered, 2-D."""
    base = np.arange(size) % n
    bad = [base.astype(float) + 0.5, np.r_[base[:-1], n], np.stack([base, base])]
    if size > 1 and distinct:
        bad.append(np.r_[base[:-1], base[-2]])              # a repeated index
        if ordered:
            bad.append(base[::-1].copy())
    return st.sampled_from(bad)


_LABELS = index_arrays(2, K := 3, ordered=False, distinct=False, none_ok=True)


def masks(shape):
    """A boolean array: a NaN entry (never read as True) and strings."""
    a = np.ones(int(np.prod(shape)))
    a[0] = np.nan
    return st.sampled_from([a.reshape(shape), np.full(shape, "a")])


def frames():
    return st.sampled_from([[1, 2]])


# --------------------------------------------------------------------------- entry points
@dataclasses.dataclass
class Entry:
    """One public entry point: a valid call and, per argument, its malformed values."""

    name: str
    call: Callable[..., Any]
    defaults: dict
    args: dict
    gaps: dict = dataclasses.field(default_factory=dict)     # {arg: reason}: known, xfail(strict)
    names: dict = dataclasses.field(default_factory=dict)    # {arg: name in the message}
    mine: bool = True                                        # message must be in the contract's form
    run_valid: bool = True
    shows_value: bool = True                                 # the message shows the value passed


def _finite(out) -> bool:
    """Every number in a result is finite (NaN-free tables, arrays, scalars, containers)."""
    if isinstance(out, (bool, np.bool_, str, type(None))):
        return True
    if isinstance(out, pd.DataFrame):
        return all(_finite(out[c].to_numpy()) for c in out.columns
                   if pd.api.types.is_numeric_dtype(out[c]) and not pd.api.types.is_bool_dtype(out[c]))
    if isinstance(out, np.ndarray):
        return out.dtype.kind not in "fc" or bool(np.isfinite(out).all())
    if isinstance(out, (int, float, complex, np.number)):
        return bool(np.isfinite(out))
    if isinstance(out, dict):
        return all(_finite(v) for v in out.values())
    if isinstance(out, (list, tuple)):
        return all(_finite(v) for v in out)
    return True                                    # objects (codes, models, generators)


N = 8
X3 = np.linspace(-1.0, 1.0, K)
CODES = {"gcc": gcc.SplineCode(K, N), "bacc": gcc.BerrutCode(K, N)}
BERRUT = gcc.BerrutCode(K, N)
SCORES = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])
TABLE = pd.DataFrame({"scheme": ["gcc"] * 4, "N": [16, 32, 64, 128], "loss": 5.0 * np.array([16, 32, 64, 128.]) ** -3})
TABLE["mean"] = TABLE["loss"]
K4 = cpgc.example_code_k4()
PROBLEM = rg.synthetic_regression(20, 5, 4, seed=0)
RNG = np.random.default_rng


CORE = [
    Entry("chebyshev_points", gcc.chebyshev_points, dict(n=4, kind=1), dict(n=ints(1), kind=choices((1, 2)))),
    Entry("equispaced_points", gcc.equispaced_points, dict(n=4, endpoints=True), dict(n=ints(1), endpoints=FLAGS)),
    Entry("code_points", code_points, dict(n_inputs=3, n_workers=5, points="chebyshev"),
          dict(n_inputs=ints(1), n_workers=ints(1), points=choices(("chebyshev", "equispaced")))),
    *[Entry(f.__name__, f, dict(est=np.ones((K, 2)), true=np.zeros((K, 2))),
            dict(est=real_arrays((K, 2), finite=False, complex_ok=True),
                 true=real_arrays((K, 2), finite=False, complex_ok=True)), names={"est": ("est", "true")})
      for f in (gcc.mse_loss, gcc.rmse_mean_of_norms, gcc.rmse_root_mean_square)],
    Entry("accuracy", gcc.accuracy, dict(scores=SCORES, labels=np.array([0, 1, 1])),
          dict(scores=real_arrays((K, 2), finite=False), labels=_LABELS), names={"scores": ("scores", "labels")}),
    Entry("relacc", gcc.relacc, dict(est=SCORES, true_outputs=SCORES, labels=np.array([0, 1, 1])),
          names={"est": ("est", "labels"), "true_outputs": ("true_outputs", "labels")},
          args=dict(est=real_arrays((K, 2), finite=False), true_outputs=real_arrays((K, 2), finite=False),
               labels=_LABELS)),
    Entry("mean_ci", gcc.mean_ci, dict(values=[1.0, 2.0, 4.0], level=0.9),
          dict(values=st.one_of(real_arrays((3,), finite=False, wrong_len=False), st.just([1.0, np.inf]),
                                st.just([np.nan, np.nan]), st.just([])),
               level=reals(0, 1, True, True))),
    Entry("loglog_slope", gcc.loglog_slope, dict(x=[1.0, 2.0, 4.0], y=[1.0, 0.5, 0.2], level=0.9),
          dict(x=st.one_of(real_arrays((3,)), st.just([1.0, -2.0, 3.0]), st.just([2.0, 2.0, 2.0]), st.just([1, 2])),
               y=st.one_of(real_arrays((3,)), st.just([1.0, 0.0, 3.0])), level=reals(0, 1, True, True)),
          names={"x": ("x", "y")}),
    Entry("FixedCount", gcc.FixedCount, dict(stragglers=2), dict(stragglers=ints(0))),
    Entry("Bernoulli", gcc.Bernoulli, dict(p=0.2, min_survivors=2),
          dict(p=reals(0, 1, hi_open=True), min_survivors=ints(1))),
    Entry("ContiguousBlock", gcc.ContiguousBlock, dict(stragglers=2, start=1),
          dict(stragglers=ints(0), start=ints(0, none_ok=True))),
    Entry("WorstCase", gcc.WorstCase, dict(stragglers=2, search="greedy", against="gcc"),
          dict(stragglers=ints(0), search=choices(("contiguous", "greedy", "exhaustive")),
               against=st.sampled_from([3, b"gcc", ["gcc"], 1.5]))),
    Entry("ShiftedExponential", gcc.ShiftedExponential, dict(shift=1.0, rate=2.0, stragglers=1),
          dict(shift=reals(0), rate=reals(0, lo_open=True), stragglers=ints(0))),
    Entry("SlowWorkers", gcc.SlowWorkers, dict(slow=[0, 2], factor=5.0, shift=0.5, rate=2.0, stragglers=1),
          dict(slow=st.sampled_from([-1, [1, 1], [0.5], [-1, 2], "ab", None, [True]]), factor=reals(1),
               shift=reals(0), rate=reals(0, lo_open=True), stragglers=ints(0))),
    Entry("FixedCount.sample_many", lambda rng, n_workers, trials: gcc.FixedCount(2).sample_many(rng, n_workers, trials),
          dict(rng=RNG(0), n_workers=6, trials=3), dict(rng=RNGS, n_workers=ints(3), trials=ints(1))),
    Entry("ShiftedExponential.sample_many_with_time",
          lambda rng, n_workers, n_wait: gcc.ShiftedExponential().sample_many_with_time(rng, n_workers, n_wait, 1),
          dict(rng=RNG(0), n_workers=6, n_wait=3), dict(rng=RNGS, n_workers=ints(3), n_wait=ints(1, 6))),
    Entry("ShiftedExponential.expected_time",
          lambda n_workers, n_wait: gcc.ShiftedExponential().expected_time(n_workers, n_wait),
          dict(n_workers=6, n_wait=3), dict(n_workers=ints(3), n_wait=ints(1, 6))),
    Entry("longest_run", straggler_runs.longest_run, dict(mask=np.array([1, 1, 0, 1]), axis=0),
          dict(mask=masks((4,)), axis=ints(-1, 0))),
    Entry("longest_straggler_run", straggler_runs.longest_straggler_run, dict(received_mask=np.ones((2, 4), bool), axis=1),
          dict(received_mask=masks((2, 4)), axis=ints(-2, 1))),
    Entry("expected_longest_run", straggler_runs.expected_longest_run, dict(n_workers=100, p=0.3),
          dict(n_workers=st.sampled_from([1.4, "100", np.inf]),
               p=reals(0, 1, True, True))),
    Entry("worst_case_stragglers", worst_case_stragglers,
          dict(code=BERRUT, f=np.sin, X=X3, stragglers=2, search="greedy", return_loss=True, max_sets=100,
               outputs=None),
          dict(code=st.sampled_from([3, None, "gcc", object()]), f=FUNCS, stragglers=ints(0, N - 1),
               search=choices(("contiguous", "greedy", "exhaustive")), return_loss=FLAGS, max_sets=ints(1),
               outputs=st.sampled_from([3, (np.zeros(K),), (np.zeros(K), np.zeros(N - 1)),
                                        (np.zeros((K, 2)), np.zeros((N, 3))), (np.zeros(K), np.full(N, "a"))]))),
    Entry("block_losses", block_losses, dict(code=BERRUT, f=np.sin, X=X3, stragglers=2, fast=False),
          dict(code=st.sampled_from([3, None, object()]), f=FUNCS, stragglers=ints(0, N - 1), fast=FLAGS)),
    Entry("run_trials", harness.run_trials,
          dict(codes=CODES, f=np.sin, X=X3, straggler_model=gcc.FixedCount(2), trials=2, seed=0, labels=None,
               noise_std=0.1, extra_columns={"run": 1}, on_trial=None, return_received=False),
          dict(codes=st.sampled_from([{}, {"a": 3}, {1: BERRUT}, [BERRUT], {"a": BERRUT, "b": gcc.BerrutCode(K, N + 1)}]),
               f=st.one_of(FUNCS, st.sampled_from([lambda x: np.zeros(2), lambda x: "s", lambda x: np.full(len(x), "a")])),
               X=st.sampled_from([np.ones(K + 1), "x", None, lambda rng, t: np.ones(2), lambda rng, t: (X3, 1, 2)]),
               straggler_model=st.sampled_from([3, "random", None, gcc.FixedCount(N), gcc.WorstCase(2, against="x")]),
               trials=ints(1), seed=seeds(), labels=_LABELS,
               noise_std=reals(0), extra_columns=st.sampled_from([{"loss": 1}, {"trial": 0}, 3, "x"]),
               on_trial=st.sampled_from([3, "f", lambda ctx: {"loss": 1.0}, lambda ctx: 3]),
               return_received=FLAGS)),
    Entry("evaluate", harness.evaluate, dict(code=BERRUT, f=np.sin, X=X3, received=list(range(6))),
          dict(code=st.sampled_from([3, None, object()]), f=st.one_of(FUNCS, st.just(lambda x: x[:1])),
               received=index_arrays(N, 6))),
    Entry("trial_rngs", harness.trial_rngs, dict(seed=0, trial=1), dict(seed=seeds(), trial=ints(0))),
    Entry("scores", harness.scores, dict(est=SCORES, true=SCORES, labels=np.array([0, 1, 1])),
          dict(est=st.sampled_from([np.full((K, 2), "a"), None, [[1.0], [1.0, 2.0]], np.zeros((K, 3))]),
               labels=_LABELS), names={"est": ("est", "true")}),
    Entry("summarize", summary.summarize, dict(df=TABLE, value="loss", by=("scheme",), level=0.9),
          dict(df=frames(), value=st.sampled_from(["nope", ["loss", "nope"], [], [["loss"]], 3]),
               by=st.sampled_from([["nope"], [["scheme"]], 3]), level=reals(0, 1, True, True))),
    Entry("slope_table", summary.slope_table,
          dict(summary=TABLE, x="N", by=["scheme"], y="mean", shift=0.0, x_min=None, y_floor=0.0, level=0.9),
          dict(summary=frames(), x=st.sampled_from(["nope", ["N"], "scheme"]), by=st.sampled_from([["nope"], 3]),
               y=st.sampled_from(["nope", "scheme", ["mean"]]), shift=st.one_of(reals(), st.just(-1000.0)),
               x_min=st.sampled_from(["8", [8], lambda g: "8", lambda g: np.nan, 1j]),
               y_floor=reals(), level=reals(0, 1, True, True))),
    Entry("select_lambdas", tuning.select_lambdas,
          dict(make_code=gcc.SplineCode(K, N), f=np.sin, batches=[X3], straggler_model=gcc.FixedCount(2),
               lam_enc_grid=[0.0], lam_dec_grid=[0.0, 1e-3], trials=2, seed=0, labels=None, noise_std=0.1,
               metric="loss", level=0.9),
          dict(make_code=st.sampled_from([3, None, lambda le, ld: 3]), f=FUNCS,
               batches=st.sampled_from([[], "x", [np.ones(K + 1)], 3]),
               straggler_model=st.sampled_from([gcc.WorstCase(2), 3, None]),
               lam_enc_grid=st.one_of(real_arrays((2,), extra_axis=True, wrong_len=False, none_ok=True), st.sampled_from([[-1.0], [0.0, 0.0], "0", [[0.0]]])),
               lam_dec_grid=st.one_of(real_arrays((2,), extra_axis=True, wrong_len=False, none_ok=True), st.sampled_from([[-1.0], [0.0, 0.0], [], "0"])),
               trials=ints(1), seed=seeds(), noise_std=reals(0),
               metric=choices(("loss", "rmse_norms", "rmse_rms", "relacc", "relacc_literal", "accuracy")),
               level=reals(0, 1, True, True)),
          shows_value=False),     # tuning.select_lambdas names the type of a batch, not its value
]

_MU, _ALPHA = reals(0, lo_open=True), reals(0)
_TOL = reals(0, 1, hi_open=True)
_CPGC_CODE = st.sampled_from([3, None, "rcsc", object(), np.zeros((4, 2, 4))])
CPGC = [
    Entry("cpgc.make_code", cpgc.make_code, dict(scheme="rcsc", n_workers=6, degrees=(1, 2), load=None,
                                                  setting=None, seed=0),
          dict(scheme=choices(cpgc.SCHEMES + tuple(cpgc.ALIASES), case_sensitive=False), n_workers=ints(1),
               degrees=st.sampled_from([(2, 3), (1, 3, 2), (), (1, 1.5), 3, "12", (1, 9)]),
               load=ints(1, 6, none_ok=True), setting=choices(("computation", "communication"), none_ok=True),
               seed=seeds(generator_ok=True))),
    Entry("cpgc.rcsc_code", cpgc.rcsc_code, dict(n_workers=6, degrees=(1, 2), seed=0, setting="computation"),
          dict(n_workers=ints(3), degrees=st.sampled_from([(2,), (1, 9), ()]), seed=seeds(generator_ok=True),
               setting=choices(("computation", "communication")))),
    Entry("cpgc.icassp_mds_code", cpgc.icassp_mds_code, dict(n_workers=5, n_tasks=2, seed=1),
          dict(n_workers=ints(1), n_tasks=ints(1), seed=seeds(generator_ok=True))),
    Entry("cpgc.uncoded_cyclic_code", cpgc.uncoded_cyclic_code,
          dict(n_workers=4, n_tasks=2, multi_message=False, setting="computation"),
          dict(n_workers=ints(2), n_tasks=ints(1, 4), multi_message=FLAGS,
               setting=choices(("computation", "communication")))),
    Entry("cpgc.mds_code", cpgc.mds_code, dict(n_workers=6, n_tasks=2, k_bar=None, seed=0),
          dict(n_workers=ints(1), n_tasks=ints(1), k_bar=ints(1, 6, none_ok=True), seed=seeds(generator_ok=True))),
    Entry("cpgc.gradient_code", cpgc.gradient_code, dict(n_workers=6, load=2),
          dict(n_workers=ints(2), load=ints(1, 6))),
    Entry("cpgc.canonical_scheme", cpgc.canonical_scheme, dict(scheme="CCPR"),
          dict(scheme=choices(cpgc.SCHEMES + tuple(cpgc.ALIASES), case_sensitive=False))),
    Entry("cpgc.CPGCCode", cpgc.CPGCCode, dict(name="x", coefficients=np.ones((2, 1, 2)), row_units=np.ones(1),
                                               row_messages=np.zeros(1, int), any_k=1, partial=False,
                                               setting="computation", load=1),
          dict(coefficients=real_arrays((2, 1, 2), extra_axis=True, wrong_len=False),
               row_units=st.one_of(real_arrays((1,), extra_axis=True), st.just(np.zeros(1))),
               row_messages=st.sampled_from([np.ones(1, int), np.array([0.5]), np.zeros(2, int), None]),
               any_k=ints(1, 2, none_ok=True), partial=FLAGS, setting=choices(("computation", "communication")),
               load=ints(1))),
    Entry("cpgc.worker_speeds", cpgc.worker_speeds, dict(rng=RNG(0), trials=3, n_workers=4, mu=10.0, alpha=0.01),
          dict(rng=RNGS, trials=ints(1), n_workers=ints(1), mu=_MU, alpha=_ALPHA)),
    Entry("cpgc.arrival_times", cpgc.arrival_times, dict(code=K4, speeds=np.full((2, 4), 0.1)),
          dict(code=_CPGC_CODE, speeds=st.one_of(real_arrays((2, 4), extra_axis=True, wrong_len=False),
                                                 st.just(-np.ones((2, 4)))))),
    Entry("cpgc.prob_tasks_done", cpgc.prob_tasks_done, dict(s=1, t=np.array([0.0, 0.2]), mu=10.0, alpha=0.01, r=3),
          dict(s=ints(0, 3), t=st.sampled_from([np.nan, [0.1, np.nan], 1j, "0.1", None, [[0.1], [0.1, 0.2]]]),
               mu=_MU, alpha=_ALPHA, r=ints(1))),
    Entry("cpgc.closed_forms.harmonic", cf.harmonic, dict(n=4), dict(n=ints(0))),
    Entry("cpgc.closed_forms.threshold_mean_time", cf.threshold_mean_time,
          dict(n_workers=4, k=2, units=3, mu=2.0, alpha=0.1),
          dict(n_workers=ints(2), k=ints(1, 4), units=reals(0, lo_open=True), mu=_MU, alpha=_ALPHA)),
    Entry("cpgc.closed_forms.mds_mean_time", cf.mds_mean_time,
          dict(n_workers=6, n_tasks=2, k_bar=3, mu=2.0, alpha=0.1),
          dict(n_workers=ints(3), n_tasks=ints(1), k_bar=ints(1, 6, none_ok=True), mu=_MU, alpha=_ALPHA)),
    Entry("cpgc.closed_forms.gc_mean_time", cf.gc_mean_time, dict(n_workers=6, load=2, mu=2.0, alpha=0.1),
          dict(n_workers=ints(2), load=ints(1, 6), mu=_MU, alpha=_ALPHA)),
    Entry("cpgc.enumeration.type_counts", en.type_counts, dict(code=cpgc.mds_code(3, 2), tolerance=0.0),
          dict(code=_CPGC_CODE, tolerance=_TOL)),
    Entry("cpgc.enumeration.exact_mean_time", en.exact_mean_time,
          dict(code=cpgc.mds_code(3, 2), tolerance=0.0, mu=10.0, alpha=0.01),
          dict(code=_CPGC_CODE, tolerance=_TOL, mu=_MU, alpha=_ALPHA)),
    Entry("cpgc.regression.synthetic_regression", rg.synthetic_regression, dict(n_train=10, n_test=4, dim=3, seed=0),
          dict(n_train=ints(1), n_test=ints(1), dim=ints(1), seed=seeds(generator_ok=True))),
    Entry("cpgc.regression.gradient_descent", rg.gradient_descent,
          dict(problem=PROBLEM, masks=np.ones((2, 3, 2), bool), eta=0.1),
          dict(problem=st.sampled_from([3, None, "p", (PROBLEM.X_train, PROBLEM.y_train)]),
               masks=st.one_of(masks((2, 3, 2)), st.just(np.ones((2, 3, 9), bool)), st.just(np.ones((2, 3), bool))),
               eta=reals(0, lo_open=True))),
    Entry("cpgc.regression.RegressionProblem", rg.RegressionProblem,
          dict(X_train=PROBLEM.X_train, y_train=PROBLEM.y_train, X_test=PROBLEM.X_test, y_test=PROBLEM.y_test,
               theta_star=PROBLEM.theta_star),
          dict(X_train=real_arrays((20, 4), extra_axis=True), y_train=real_arrays((20,), extra_axis=True),
               X_test=real_arrays((5, 4), extra_axis=True), y_test=real_arrays((5,), extra_axis=True),
               theta_star=real_arrays((4,), extra_axis=True)),
          names={"X_train": ("X_train", "y_train", "X_test"), "X_test": ("X_test", "y_test")}),
]

def _second_message(worker, message, value):
    """Master.receive once the block shape is known: a first message of shape (1, 3) came from worker 0."""
    master = cpgc.Master(cpgc.uncoded_cyclic_code(4, 2))
    master.receive(0, 0, np.ones((1, 3)))
    return master.receive(worker, message, value)


CPGC_OTHERS = [
    Entry("cpgc.required_blocks", cpgc.required_blocks, dict(n_blocks=40, tolerance=0.15),
          dict(n_blocks=ints(1), tolerance=_TOL)),
    Entry("cpgc.rref_recoverable", cpgc.rref_recoverable, dict(matrix=np.eye(2), values=None, tol=1e-9),
          dict(matrix=real_arrays((2, 2), extra_axis=True, wrong_len=False), values=real_arrays((2, 1), none_ok=True),
               tol=reals(0, lo_open=True)),
          names={"matrix": ("matrix", "values")}),
    Entry("cpgc.Master", cpgc.Master, dict(code=K4, tolerance=0.0), dict(code=_CPGC_CODE, tolerance=_TOL)),
    Entry("cpgc.Master.receive", _second_message, dict(worker=1, message=0, value=np.ones((1, 3))),
          dict(worker=ints(0, 3), message=ints(0, 1),
               value=st.sampled_from([np.ones((1, 3)) * 1j, np.full((1, 3), np.nan), "v", np.ones((2, 3)),
                                      np.ones((1, 4)), np.ones((1, 3, 1)), [[1.0, np.inf, 0.0]], np.array(2.0)]))),
    Entry("cpgc.completion", cpgc.completion, dict(code=K4, speeds=np.full((2, 4), 0.1), tolerance=0.0,
                                                   return_recovered=False),
          dict(code=_CPGC_CODE, speeds=st.one_of(real_arrays((2, 4), extra_axis=True, wrong_len=False),
                                                 st.just(-np.ones((2, 4))), st.just(np.zeros((2, 4)))),
               tolerance=_TOL, return_recovered=FLAGS)),
    Entry("cpgc.simulate", cpgc.simulate, dict(scheme="uc-mmc", n_workers=6, tolerance=0.0, trials=20, seed=0,
                                               mu=10.0, alpha=0.01, degrees=(1, 2), return_recovered=False),
          dict(scheme=choices(cpgc.SCHEMES + tuple(cpgc.ALIASES), case_sensitive=False), n_workers=ints(3),
               tolerance=_TOL, trials=ints(1), seed=seeds(), mu=_MU, alpha=_ALPHA,
               degrees=st.sampled_from([(2, 3), (), 3, (1, 1.5)]), return_recovered=FLAGS)),
]

_POINTS = st.sampled_from([[-0.5, 0.2, 0.1], [0.0, 0.0, 0.5], [0.0, 1e-300, 0.5], [-0.5, -0.5 + 1e-14, 0.5], [-2.0, 0.0, 0.5], [-0.5, 0.5j, 0.9], [np.nan, 0, 1],
                           "abc", [[0.1, 0.2, 0.3]], [0.1, 0.2]])
_XS = st.sampled_from([[-0.5, 0.2, 0.1], [0.0, 0.0, 0.5], [0.0, 1e-300, 0.5], [-0.5, 0.5j, 0.9], [np.nan, 0, 1], "abc",
                       [[0.1, 0.2, 0.3]], []])
_CODE_ARGS = dict(n_inputs=ints(1), n_workers=ints(K), alphas=_POINTS, betas=_POINTS,
                  points=choices(("chebyshev", "equispaced")))
XN = np.linspace(-1.0, 1.0, N)
_YN = np.sin(XN)


def _code_entries():
    out = []
    for cls, extra, bad in ((gcc.SplineCode, dict(lam_enc=0.0, lam_dec=1e-3),
                             dict(lam_enc=reals(0), lam_dec=reals(0))),
                            (gcc.BerrutCode, {}, {}), (gcc.LagrangeCode, dict(degree=None), dict(degree=ints(0, none_ok=True))),
                            (gcc.BSplineCode, {}, {})):
        name = cls.__name__
        args = {**_CODE_ARGS, **bad}
        out.append(Entry(name, cls, dict(n_inputs=K, n_workers=N, **extra), args))
        code = cls(K, N, **extra)
        out.append(Entry(f"{name}.encode", lambda X, code=code: code.encode(X), dict(X=np.ones((K, 2))),
                         dict(X=real_arrays((K, 2), complex_ok=True))))
        out.append(Entry(f"{name}.decode", lambda Y, received, code=code: code.decode(Y, received),
                         dict(Y=np.ones((N - 1, 2)), received=list(range(N - 1))),
                         dict(Y=real_arrays((N - 1, 2), complex_ok=True), received=index_arrays(N, N - 1)),
                         names={"Y": ("Y", "received"), "received": ("received", "Y")}))
    return out


CODE_ENTRIES = [
    *_code_entries(),
    Entry("codes.make", gcc.codes.make, dict(name="gcc", n_inputs=K, n_workers=N),
          dict(name=choices(tuple(gcc.codes.SCHEMES) + tuple(gcc.codes.ALIASES), case_sensitive=False), n_inputs=ints(1),
               n_workers=ints(K))),
    Entry("codes.make_many", gcc.codes.make_many, dict(names=["gcc", "lcc"], n_inputs=K, n_workers=N),
          dict(names=st.sampled_from([["gcc", "nope"], "nope", 3, None, [3], [], ["gcc", "GCC"]]), n_inputs=ints(1),
               n_workers=ints(K))),
    Entry("codes.canonical", gcc.codes.canonical, dict(name="GCC"),
          dict(name=choices(tuple(gcc.codes.SCHEMES) + tuple(gcc.codes.ALIASES), case_sensitive=False))),
    Entry("codes.label", gcc.codes.label, dict(name="gcc"),
          dict(name=choices(tuple(gcc.codes.SCHEMES) + tuple(gcc.codes.ALIASES), case_sensitive=False))),
    Entry("codes.block_received", gcc.codes.base.block_received, dict(n_workers=N, stragglers=2, start=1),
          dict(n_workers=ints(3), stragglers=ints(0, N - 1), start=ints(0, N - 2)),
          ),
    Entry("LagrangeCode.recovery_threshold", lambda deg_f, stragglers: gcc.LagrangeCode(K, N).recovery_threshold(
        deg_f, stragglers), dict(deg_f=2, stragglers=1), dict(deg_f=ints(0), stragglers=ints(0))),
    Entry("SplineCode.block_estimates", lambda Y, stragglers: gcc.SplineCode(K, N).block_estimates(Y, stragglers),
          dict(Y=np.ones((N, 2)), stragglers=2),
          dict(Y=real_arrays((N, 2), complex_ok=True), stragglers=ints(0, N - 1))),
    Entry("smoother_matrix", gcc.smoother_matrix, dict(x=XN, lam=1e-3, x_eval=X3),
          dict(x=_XS, lam=reals(0), x_eval=real_arrays((K,), extra_axis=True, wrong_len=False))),
    Entry("smoothing_spline", gcc.smoothing_spline, dict(x=XN, y=_YN, lam=1e-3, x_eval=X3),
          dict(x=_XS, y=real_arrays((N,), complex_ok=True), lam=reals(0),
               x_eval=real_arrays((K,), extra_axis=True, wrong_len=False)), names={"x": ("x", "y")}),
    Entry("gcv_lambda", gcc.gcv_lambda, dict(x=XN, y=_YN), dict(x=_XS, y=real_arrays((N,), complex_ok=True)),
          names={"x": ("x", "y")}),
]

# --------------------------------------------------------------------------- optional parts
from gcc import results as gresults  # noqa: E402
from gcc.distributed import baselines, coded_compute, inject, latency  # noqa: E402
from gcc.distributed.cpgc import run_cpgc  # noqa: E402

_LAT = pd.DataFrame({"scheme": ["a", "a"], "latency_s": [0.1, 0.2], "loss": [0.0, 0.1]})
_SEC0 = reals(0)
DISTRIBUTED = [
    Entry("distributed.Injection", inject.Injection,
          dict(base_s=0.01, delay=None, delay_scale=1.0, slow_workers=(1,), n_random_slow=1, slowdown=2.0,
               sleep_prob=0.1, sleep_s=0.006, kill=(), kill_after_s=0.0, interruptible=True),
          dict(base_s=_SEC0, delay=st.sampled_from(["fast", 3, [0.1]]), delay_scale=_SEC0,
               slow_workers=st.sampled_from([[1.5], [1, 1], [-1], 3, "01", [True]]), n_random_slow=ints(0),
               slowdown=reals(1), sleep_prob=reals(0, 1), sleep_s=_SEC0, kill=st.sampled_from([[0.5], [2, 2], 1]),
               kill_after_s=_SEC0, interruptible=FLAGS)),
    Entry("distributed.Injection.plan", lambda n_tasks, rng: inject.Injection(slow_workers=(1,)).plan(n_tasks, rng),
          dict(n_tasks=4, rng=RNG(0)), dict(n_tasks=ints(2), rng=RNGS)),
    Entry("distributed.Injection.expected_task_s",
          lambda n_tasks, rng: inject.Injection().expected_task_s(n_tasks, rng),
          dict(n_tasks=4, rng=RNG(0)), dict(n_tasks=ints(1), rng=RNGS)),
    Entry("distributed.sample_delays", inject.sample_delays,
          dict(model=gcc.ShiftedExponential(), n=3, rng=RNG(0)),
          dict(model=st.sampled_from(["x", 3, None, lambda rng, n: np.ones(n) * 1j, lambda rng, n: -np.ones(n),
                                      lambda rng, n: np.ones(n + 1)]), n=ints(0), rng=RNGS),
          names={"model": "delay"}),
    Entry("distributed.interruptible_sleep", inject.interruptible_sleep, dict(seconds=0.0, interruptible=True),
          dict(seconds=st.sampled_from([np.inf, np.nan, "1", None, 1j, [0.1]]), interruptible=FLAGS)),
    Entry("distributed.Replication", baselines.Replication, dict(n_inputs=3, n_workers=7),
          dict(n_inputs=ints(1), n_workers=ints(3))),
    Entry("distributed.Uncoded", baselines.Uncoded, dict(n_inputs=3), dict(n_inputs=ints(1))),
    Entry("distributed.Replication.is_decodable", lambda received: baselines.Replication(3, 7).is_decodable(received),
          dict(received=[4, 0, 2]), dict(received=st.sampled_from([[0, 1.5], [0, 7], [-1], [2, 2], "01", None,
                                                                   [True, False], np.zeros((2, 2), int)]))),
    Entry("distributed.Replication.decode",
          lambda Y, received: baselines.Replication(3, 7).decode(Y, received),
          dict(Y=np.arange(3.0), received=[0, 1, 2]),
          dict(Y=st.sampled_from([np.arange(2.0), None, 3]), received=index_arrays(7, 3))),
    Entry("distributed.simulated_completion", latency.simulated_completion,
          dict(code=baselines.Uncoded(3), task_s=[0.1, 0.3, 0.2], n_wait=None),
          dict(task_s=st.sampled_from([[0.1, np.nan], [0.1, -1.0], [0.1j], "1", None, [[0.1]]]),
               n_wait=ints(1, 3, none_ok=True))),
    Entry("distributed.run_requests", latency.run_requests,
          dict(client=None, schemes={"a": {"code": baselines.Uncoded(2)}}, make_batch=lambda rng: np.ones(2),
               f=np.sin, n_requests=1, injection=None, seed=0, warmup=0, timeout=1.0, exact=None),
          dict(schemes=st.sampled_from([{}, {"a": {}}, {1: {"code": 3}}, 3, None]), make_batch=FUNCS, f=FUNCS,
               n_requests=ints(1), injection=st.sampled_from([3, "x", {"slowdown": 2}]), seed=seeds(),
               warmup=ints(0), timeout=reals(0, lo_open=True), exact=st.sampled_from([3, "f"])),
          run_valid=False),
    Entry("distributed.summarize_latency", latency.summarize_latency, dict(table=_LAT, by=("scheme",), level=0.9),
          dict(table=frames(), by=st.sampled_from([["nope"], [3]]), level=reals(0, 1, True, True))),
    Entry("distributed.run_cpgc", run_cpgc,
          dict(client=None, problem=PROBLEM, code=cpgc.make_code("rcsc", 4, degrees=(1, 2)), tolerance=0.0,
               iterations=2, eta=0.1, theta0=0.1, mu=10.0, alpha=0.01, time_scale=1.0, seed=0,
               cancel_stragglers=True, timeout=5.0),
          dict(problem=st.sampled_from([3, None, "p"]), code=_CPGC_CODE, tolerance=_TOL, iterations=ints(1),
               eta=reals(0, lo_open=True), theta0=reals(), mu=_MU, alpha=_ALPHA, time_scale=reals(0, lo_open=True),
               seed=seeds(), cancel_stragglers=FLAGS, timeout=reals(0, lo_open=True)),
          run_valid=False),
]

DISTRIBUTED_OTHERS = [
    Entry("distributed.coded_compute", coded_compute,
          dict(client=None, code=BERRUT, X=X3, f=np.sin, n_stragglers=1, n_wait=None, deadline=None, timeout=1.0),
          dict(deadline=reals(0, lo_open=True, none_ok=True), timeout=reals(0, lo_open=True),
               n_stragglers=ints(0, N - 1, none_ok=True), f=FUNCS, code=st.sampled_from([3, None, object()]),
               n_wait=ints(1, N, none_ok=True), min_results=ints(1, N, none_ok=True),
               injection=st.sampled_from(["slow", 3, {"slowdown": 2.0}]),
               seed=st.sampled_from([-1, 1.5]),
               replacement_wait=reals(0)),
          mine=False, run_valid=False),
]


def _in_results(func):
    """Call a results function with GCC_RESULTS_ROOT in a temporary folder (never the book's)."""
    import os
    import tempfile
    from unittest import mock

    def call(**kwargs):
        with tempfile.TemporaryDirectory() as root, mock.patch.dict(os.environ, GCC_RESULTS_ROOT=root):
            return func(**kwargs)
    return call


RESULTS = [
    Entry("results.results_dir", _in_results(gresults.results_dir),
          dict(notebook="demo", create=True),
          dict(notebook=st.sampled_from(["", "../x", ".hidden", "a/b", 3, None])), mine=False),
    Entry("results.RunContext", _in_results(gresults.RunContext), dict(notebook="demo", parameters={"seed": 0}),
          dict(notebook=st.sampled_from(["", "../x", 3]), parameters=st.sampled_from([[1], 3, "x"])), mine=False),
    Entry("machine.summary_line", gcc.machine.summary_line, dict(info=None),
          dict(info=st.sampled_from([3, "x", [1], {}])), mine=False),
]

try:
    # The DNN cases (gcc.dnn and the DNN experiments) are built in tests/contract_dnn.py.
    import contract_dnn

    DNN = contract_dnn.entries(globals())
    DNN_IMPORT_ERROR = None
except Exception as exc:     # gcc.dnn broken: reported by test_dnn_imports, its cases left out
    DNN, DNN_IMPORT_ERROR = [], exc

# More core cases (splines, codes, the CPGC master) are built in tests/contract_core.py.
import contract_core  # noqa: E402

from gcc.assignments import feedback, variants  # noqa: E402
from gcc.validation import check_received  # noqa: E402

TOOLS = [
    Entry("validation.check_received", check_received, dict(received=[0, 2, 5], n_workers=N, owner="f"),
          dict(received=index_arrays(N, 3))),
    Entry("SlowWorkers.sample_times", lambda rng, n_workers, trials: gcc.SlowWorkers(1).sample_times(
        rng, n_workers, trials), dict(rng=RNG(0), n_workers=4, trials=2),
          dict(rng=RNGS, n_workers=ints(1), trials=ints(1))),
    Entry("ContiguousBlock.sample_many", lambda rng, n_workers, trials: gcc.ContiguousBlock(2).sample_many(
        rng, n_workers, trials), dict(rng=RNG(0), n_workers=6, trials=2),
          dict(rng=RNGS, n_workers=ints(3), trials=ints(1))),
    Entry("WorstCase.resolve", lambda code, f, X: gcc.WorstCase(2).resolve(code, f, X),
          dict(code=BERRUT, f=np.sin, X=X3), dict(code=st.sampled_from([3, None]), f=FUNCS)),
    Entry("assignments.variant", variants.variant, dict(assignment="01_berrut", seed=3, n_workers=12),
          dict(assignment=choices(tuple(variants.ASSIGNMENTS)), seed=seeds(), n_workers=ints(0, none_ok=True))),
    Entry("assignments.Variant.rng", lambda stream: variants.variant("01_berrut", 0).rng(stream),
          dict(stream="data"), dict(stream=st.sampled_from([3, None, b"data", ["data"]]))),
    Entry("assignments.problem", variants.problem, dict(v=variants.variant("01_berrut", 0)),
          dict(v=st.sampled_from([3, None, "01_berrut", {"assignment": "01_berrut"}]))),
    Entry("assignments.compare_arrays", feedback.compare_arrays,
          dict(answer=np.ones(3), reference=np.ones(3), name="y", rtol=1e-8, atol=0.0),
          dict(reference=st.sampled_from([np.full(3, "a"), None, object()]), rtol=reals(0), atol=reals(0))),
    Entry("assignments.compare_scalar", feedback.compare_scalar,
          dict(answer=1.0, reference=1.0, name="y", rtol=1e-8, atol=0.0), dict(rtol=reals(0), atol=reals(0))),
]

ALL = (CORE + TOOLS + CPGC + CPGC_OTHERS + CODE_ENTRIES + contract_core.entries(globals()) + DISTRIBUTED
       + DISTRIBUTED_OTHERS + RESULTS + DNN)


# --------------------------------------------------------------------------- the contract
def _cases():
    for entry in ALL:
        for arg in entry.args:
            marks = [pytest.mark.xfail(strict=True, reason=entry.gaps[arg])] if arg in entry.gaps else []
            yield pytest.param(entry, arg, id=f"{entry.name}-{arg}", marks=marks)


def _call(entry: Entry, kwargs: dict):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ComplexWarning)       # a dropped imaginary part is no result
        warnings.simplefilter("ignore", RuntimeWarning)      # e.g. run_trials' too-few-survivors notice
        return entry.call(**kwargs)


def _shows(message: str, value) -> bool:
    """The message shows a number or a str passed as it was given (arrays and objects may be described)."""
    if not isinstance(value, (numbers.Number, str)):
        return True
    got = message[message.rfind(" Got "):]
    return any(text[:150] in got for text in {repr(value), str(value)})


@pytest.mark.parametrize("entry", [pytest.param(e, id=e.name) for e in ALL if e.run_valid])
def test_valid_call_gives_a_finite_result(entry):
    TRIED["valid calls"] += 1
    assert _finite(_call(entry, dict(entry.defaults)))


@pytest.mark.parametrize("entry,arg", list(_cases()))
def test_malformed_argument_gets_the_contract_error(entry, arg):
    """One value per constraint of the argument: the error class, the argument's name, the constraint
    (``must be ...``) and the value, never a result."""
    names = entry.names.get(arg, arg)
    names = (names,) if isinstance(names, str) else names
    for value in entry.args[arg]:
        TRIED["malformed"] += 1
        try:
            out = _call(entry, {**entry.defaults, arg: value})
        except (ValueError, TypeError) as err:
            message = str(err)
            assert any(f"'{n}'" in message for n in names), \
                f"{entry.name}({arg}={value!r}): the message names no {names}: {message}"
            if entry.mine:
                assert isinstance(err, InvalidParameterError), f"{type(err).__name__}: {message}"
                assert CONTRACT.match(message), f"not in the contract's form: {message}"
                assert not entry.shows_value or _shows(message, value), f"the value is not shown: {message}"
            continue
        pytest.fail(f"{entry.name}({arg}={value!r}) accepted a malformed value and returned {out!r:.300}")


def test_dnn_imports():
    assert DNN_IMPORT_ERROR is None, f"gcc.dnn does not import: {DNN_IMPORT_ERROR!r}"


# --------------------------------------------------------------------------- laws of valid inputs
from hypothesis.extra import numpy as hnp  # noqa: E402

_FLOATS = hst.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
_MATS = hnp.arrays(np.float64, hst.tuples(hst.integers(1, 5), hst.integers(1, 3)), elements=_FLOATS)


@settings(max_examples=20, **SETTINGS)
@given(data=hst.data())
def test_losses_of_complex_errors_are_those_of_their_parts(data):
    re_ = data.draw(_MATS)
    im = data.draw(hnp.arrays(np.float64, re_.shape, elements=_FLOATS))
    true = data.draw(hnp.arrays(np.float64, re_.shape, elements=_FLOATS))
    TRIED["laws"] += 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", ComplexWarning)
        loss = gcc.mse_loss(re_ + 1j * im, true)
        parts = gcc.mse_loss(re_, true) + gcc.mse_loss(im, np.zeros_like(true))
        assert np.isfinite(loss) and loss >= 0 and loss == pytest.approx(parts, rel=1e-12, abs=1e-9)
        assert gcc.rmse_root_mean_square(re_ + 1j * im, true) == pytest.approx(np.sqrt(loss), rel=1e-12, abs=1e-9)
        assert gcc.rmse_mean_of_norms(re_ + 1j * im, true) <= gcc.rmse_root_mean_square(re_ + 1j * im, true) + 1e-9


@settings(max_examples=20, **SETTINGS)
@given(scores=hnp.arrays(np.float64, hst.tuples(hst.integers(1, 6), hst.integers(1, 4)),
                         elements=hst.one_of(_FLOATS, hst.just(np.nan))), data=hst.data())
def test_accuracy_is_a_fraction_or_nan_when_undefined(scores, data):
    labels = data.draw(hnp.arrays(np.int64, (scores.shape[0],), elements=hst.integers(0, scores.shape[1] - 1)))
    TRIED["laws"] += 1
    acc = gcc.accuracy(scores, labels)
    assert np.isnan(acc) == bool(np.isnan(scores).any())
    assert np.isnan(acc) or 0.0 <= acc <= 1.0


_LINEAR_GAPS = {}     # {code class: reason}: codes whose decoders are not linear in complex data


@pytest.mark.parametrize("cls", [gcc.SplineCode, gcc.BerrutCode, gcc.LagrangeCode, gcc.BSplineCode],
                         ids=lambda c: c.__name__)
def test_codes_are_linear_in_complex_data(cls):
    """The decision of gcc.validation: codes carry complex data (encode and decode are linear)."""
    code = cls(4, 11)

    @settings(max_examples=8, **SETTINGS)
    @given(data=hst.data())
    def check(data):
        Xr, Xi = (data.draw(hnp.arrays(np.float64, (4, 2), elements=hst.floats(-2, 2))) for _ in range(2))
        n = data.draw(hst.integers(6, 11))
        received = np.sort(data.draw(hst.permutations(range(11)))[:n])
        TRIED["laws"] += 1
        with warnings.catch_warnings():
            warnings.simplefilter("error", ComplexWarning)
            Y = code.encode(Xr + 1j * Xi)
            np.testing.assert_allclose(Y, code.encode(Xr) + 1j * code.encode(Xi), atol=1e-9)
            Yr, Yi = np.real(Y)[received], np.imag(Y)[received]
            est = code.decode(Y[received], received)
            np.testing.assert_allclose(est, code.decode(Yr, received) + 1j * code.decode(Yi, received), atol=1e-9)

    check()


@settings(max_examples=20, **SETTINGS)
@given(mask=hnp.arrays(np.bool_, hst.tuples(hst.integers(1, 4), hst.integers(1, 12))))
def test_masks_runs_and_received_sets_agree(mask):
    TRIED["laws"] += 1
    N_ = mask.shape[1]
    brute = [max((len(r) for r in "".join("1" if v else "0" for v in row).split("0")), default=0) for row in mask]
    np.testing.assert_array_equal(straggler_runs.longest_run(mask), brute)
    assert (straggler_runs.longest_straggler_run(mask) <= N_ - mask.sum(axis=1)).all()


@settings(max_examples=20, **SETTINGS)
@given(r=hst.integers(1, 5), mu=hst.floats(0.01, 100), alpha=hst.floats(0, 1),
       t=hnp.arrays(np.float64, hst.integers(1, 6), elements=hst.floats(-1, 50)))
def test_cpgc_probabilities_are_a_distribution(r, mu, alpha, t):
    TRIED["laws"] += 1
    p = np.stack([cpgc.prob_tasks_done(s, t, mu, alpha, r) for s in range(r + 1)])
    assert p.min() >= 0 and p.max() <= 1 + 1e-12 and np.allclose(p.sum(axis=0), 1.0)


@settings(max_examples=20, **SETTINGS)
@given(K_=hst.integers(1, 30), data=hst.data(), mu=hst.floats(0.01, 100), alpha=hst.floats(0, 1))
def test_closed_forms_and_speeds_are_positive_and_finite(K_, data, mu, alpha):
    k = data.draw(hst.integers(1, K_))
    TRIED["laws"] += 1
    for value in (cf.threshold_mean_time(K_, k, 1, mu, alpha), cf.threshold_mean_time(K_, k, 2, mu, alpha),
                  cf.mds_mean_time(K_, 1, mu=mu, alpha=alpha), cf.gc_mean_time(K_, k, mu, alpha)):
        assert np.isfinite(value) and value > 0
    speeds = cpgc.worker_speeds(RNG(0), 3, K_, mu, alpha)
    assert np.isfinite(speeds).all() and speeds.min() >= alpha


@settings(max_examples=20, **SETTINGS)
@given(p=hst.floats(1e-6, 1 - 1e-6), n=hst.floats(1, 1e9))
def test_expected_longest_run_is_a_length(p, n):
    TRIED["laws"] += 1
    if n * (1 - p) >= 1:
        assert 0 <= straggler_runs.expected_longest_run(n, p) < np.inf
    else:
        with pytest.raises(ValueError, match="'n_workers' parameter of expected_longest_run"):
            straggler_runs.expected_longest_run(n, p)


# --------------------------------------------------------------------------- the runner
def _runner(tmp_path, argv):
    """``python -m gcc.reproduce ...`` into ``tmp_path`` (the book's folders untouched): (exit status, stderr).

    The cases list (``--list``) or stop at a bad argument: none runs a notebook of the book.
    """
    import contextlib
    import io

    from gcc.reproduce.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = main(["--results-root", str(tmp_path / "results"), "--output-dir", str(tmp_path / "out"), *argv])
        except SystemExit as exc:          # argparse's own errors
            rc = exc.code
    return rc, err.getvalue()


def _notebook(folder, name="demo", card="profiles:\n  ci: {n_trials: 3}\n", source=None):
    import nbformat

    folder.mkdir(parents=True, exist_ok=True)
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("n_trials = 10\nseed = 0")
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell]
    (folder / f"{name}.ipynb").write_text(source if source is not None else nbformat.writes(nb))
    if card is not None:
        (folder / f"{name}.yaml").write_text(card)
    return folder


RUNNER_CASES = [
    pytest.param(lambda tmp: ["--list", "--notebooks-dir", str(tmp / "nowhere")], ("notebooks-dir", "notebooks_dir"),
                 id="notebooks-dir-missing"),
    pytest.param(lambda tmp: ["--notebooks-dir", str(_notebook(tmp / "nb")), "--timeout", "-5"], ("timeout",),
                 id="timeout-negative"),
    pytest.param(lambda tmp: ["--list", "--profile", "ci", "--notebooks-dir",
                              str(_notebook(tmp / "nb", card="profiles:\n  ci: {n_trails: 3}\n"))],
                 ("n_trails",), id="card-key-typo"),
    pytest.param(lambda tmp: ["--list", "--notebooks-dir", str(_notebook(tmp / "nb", card="order: first\n"))],
                 ("order",), id="card-order-not-a-number"),
    pytest.param(lambda tmp: ["--list", "--notebooks-dir", str(_notebook(tmp / "nb", card="profiles: [ci\n"))],
                 ("demo.yaml",), id="card-yaml-error"),
    pytest.param(lambda tmp: ["--list", "--notebooks-dir", str(_notebook(tmp / "nb", source="{not json"))],
                 ("demo.ipynb",), id="corrupt-notebook"),
]


@pytest.mark.parametrize("argv,names", RUNNER_CASES)
def test_the_runner_names_what_is_wrong(tmp_path, argv, names):
    TRIED["runner"] += 1
    rc, err = _runner(tmp_path, argv(tmp_path))
    assert rc == 2, f"exit status {rc} (expected 2); stderr: {err[-500:]}"
    assert any(n in err for n in names), err[-800:]


# --------------------------------------------------------------------------- inputs the validator accepts
def _error_or_finite(call, name):
    try:
        out = call()
    except ValueError as err:
        assert f"'{name}'" in str(err), str(err)
        return
    assert _finite(out), f"a silent NaN/inf: {out!r:.300}"


def test_knots_a_tiny_step_apart_give_an_error_or_a_finite_operator():
    TRIED["accepted inputs"] += 3
    x = np.array([0.0, 1e-300, 1.0])
    _error_or_finite(lambda: gcc.smoother_matrix(x, 1e-3, x), "x")
    _error_or_finite(lambda: gcc.smoothing_spline(x, np.sin(x), 1e-3, x), "x")
    _error_or_finite(lambda: gcc.SplineCode(3, 3, betas=x).encode(X3), "betas")


def test_a_huge_smoothing_parameter_gives_an_error_or_a_finite_decoder():
    TRIED["accepted inputs"] += 1
    _error_or_finite(lambda: gcc.SplineCode(K, N, lam_dec=1e306).decode(np.ones(N), range(N)), "lam_dec")


@pytest.mark.parametrize("lam", [1e306, 1.7e308])
def test_a_huge_smoothing_parameter_gives_the_least_squares_line(lam):
    """lam -> infinity: the smoothing spline tends to the least-squares line (computed without overflow)."""
    TRIED["accepted inputs"] += 3
    V = np.stack([np.ones(N), XN], axis=1)
    line = V @ np.linalg.pinv(V)
    np.testing.assert_allclose(gcc.smoother_matrix(XN, lam, XN), line, atol=1e-10)
    np.testing.assert_allclose(gcc.smoothing_spline(XN, _YN, lam, XN), line @ _YN, atol=1e-10)
    code = gcc.SplineCode(K, N, lam_enc=lam, lam_dec=lam)
    assert np.isfinite(code.encoder_matrix()).all() and np.isfinite(code.decoder_matrix()).all()


def test_lcc_with_fewer_than_k_results_is_an_error():
    TRIED["accepted inputs"] += 1
    code = gcc.LagrangeCode(4, 10)
    Y = code.encode(np.linspace(-1, 1, 4))
    with pytest.raises(ValueError, match="'received'"):
        code.decode(Y[:3], [0, 1, 2])


def test_extra_columns_never_overwrite_what_was_measured():
    TRIED["accepted inputs"] += 1
    with pytest.raises(ValueError, match="'extra_columns'"):
        harness.run_trials(CODES, np.sin, X3, gcc.FixedCount(2), 2, 0, extra_columns={"loss": 0.0})


def test_cpgc_simulate_with_too_few_workers_names_n_workers():
    TRIED["accepted inputs"] += 1
    with pytest.raises(ValueError, match="'n_workers'"):
        cpgc.simulate("uc-mmc", n_workers=2, trials=5)
