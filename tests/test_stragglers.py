"""Straggler models and run lengths, against brute force and closed forms.

The worst-case search (gcc.adversary) is tested in test_adversary.py.
"""
import numpy as np
import pytest
from scipy import stats

import gcc
from gcc.straggler_runs import expected_longest_run, longest_run, longest_straggler_run
from gcc.stragglers import Bernoulli, ContiguousBlock, FixedCount, ShiftedExponential, SlowWorkers, WorstCase


def f_scalar(x):
    return x * np.sin(x)


# --------------------------------------------------------------------------- random models
def test_fixed_count_exact_size_and_uniform():
    rng = np.random.default_rng(0)
    N, S, T = 12, 4, 6000
    mask = FixedCount(S).sample_many(rng, N, T)
    assert mask.shape == (T, N) and mask.dtype == bool
    assert np.all(mask.sum(axis=1) == N - S)
    # every worker straggles with probability S/N: each count inside a 99.99% binomial interval
    counts = (~mask).sum(axis=0)
    lo, hi = stats.binom.interval(0.9999, T, S / N)
    assert np.all((counts >= lo) & (counts <= hi))
    received = FixedCount(S).sample(rng, N)
    assert received.dtype.kind == "i" and np.all(np.diff(received) > 0) and received.size == N - S


def test_bernoulli_rate_in_binomial_ci():
    for i, p in enumerate((0.0, 0.1, 0.3)):
        T, N = 2000, 50
        mask = Bernoulli(p).sample_many(np.random.default_rng([11, i]), N, T)
        n_strag = int((~mask).sum())
        lo, hi = stats.binom.interval(0.999, T * N, p)
        assert lo <= n_strag <= hi
    model = Bernoulli(0.9, min_survivors=3)
    assert "p=0.9" in repr(model) and "min_survivors=3" in repr(model)


def test_contiguous_block_fixed_and_random():
    rng = np.random.default_rng(2)
    mask = ContiguousBlock(3, start=4).sample_many(rng, 10, 2)
    np.testing.assert_array_equal(np.flatnonzero(~mask[0]), [4, 5, 6])
    np.testing.assert_array_equal(ContiguousBlock(3, start=4).sample(rng, 10),
                                  [0, 1, 2, 3, 7, 8, 9])
    mask = ContiguousBlock(3).sample_many(rng, 10, 4000)
    starts = np.argmax(~mask, axis=1)
    assert np.all(longest_straggler_run(mask) == 3) and np.all((~mask).sum(1) == 3)
    assert set(np.unique(starts)) == set(range(8))
    assert ContiguousBlock(0).sample(rng, 5).tolist() == [0, 1, 2, 3, 4]


def _longest_run_loop(row):
    best = cur = 0
    for v in row:
        cur = cur + 1 if v else 0
        best = max(best, cur)
    return best


@pytest.mark.parametrize("shape", [(1,), (7,), (40, 23), (3, 4, 17)])
def test_longest_run_against_loop(shape):
    rng = np.random.default_rng(sum(shape))
    for p in (0.2, 0.5, 0.9):
        m = rng.random(shape) < p
        expected = np.apply_along_axis(_longest_run_loop, -1, m)
        np.testing.assert_array_equal(longest_run(m), expected)
        np.testing.assert_array_equal(longest_straggler_run(~m), expected)
    m = rng.random((5, 9)) < 0.5
    np.testing.assert_array_equal(longest_run(m, axis=0),
                                  np.apply_along_axis(_longest_run_loop, 0, m))
    assert longest_run(np.ones(6, bool)) == 6 and longest_run(np.zeros(6, bool)) == 0


def test_longest_run_follows_erdos_renyi():
    rng = np.random.default_rng(3)
    p, N = 0.3, 20000
    runs = longest_straggler_run(Bernoulli(p).sample_many(rng, N, 200))
    # E[L_N] = log_{1/p}(N(1-p)) + gamma/ln(1/p) - 1/2 + o(1) (Schilling 1990)
    mean_expected = expected_longest_run(N, p) + np.euler_gamma / np.log(1 / p) - 0.5
    assert abs(runs.mean() - mean_expected) < 0.5


# --------------------------------------------------------------------------- delay models
def test_shifted_exponential_order_statistic_mean():
    rng = np.random.default_rng(4)
    shift, rate, N, S = 0.5, 2.0, 20, 5
    model = ShiftedExponential(shift, rate)
    mask, times = model.sample_many_with_time(rng, N, N - S, 40000)
    closed = shift + (sum(1 / i for i in range(1, N + 1)) - sum(1 / i for i in range(1, S + 1))) / rate
    assert model.expected_time(N, N - S) == pytest.approx(closed)
    se = times.std(ddof=1) / np.sqrt(times.size)
    assert abs(times.mean() - closed) < 4 * se
    assert np.all(mask.sum(1) == N - S)


def test_delay_models_received_are_the_fastest():
    N, n_wait = 15, 11
    for model in (ShiftedExponential(1.0, 1.0), SlowWorkers(3, factor=5.0)):
        times = model.sample_times(np.random.default_rng(5), N, 1)[0]
        mask, waited = model.sample_many_with_time(np.random.default_rng(5), N, n_wait, 1)
        np.testing.assert_array_equal(np.flatnonzero(mask[0]), np.sort(np.argsort(times)[:n_wait]))
        assert waited[0] == pytest.approx(np.sort(times)[n_wait - 1])


def test_slow_workers_fixed_indices_never_received():
    model = SlowWorkers([1, 4, 7], factor=1e6, shift=1.0, rate=1.0, stragglers=3)
    mask = model.sample_many(np.random.default_rng(6), 10, 500)
    assert np.all(~mask[:, [1, 4, 7]]) and np.all(mask.sum(1) == 7)
    assert "SlowWorkers(slow=[1, 4, 7]" in repr(model)


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("build,name", [
    (lambda: Bernoulli(1.0), "'p'"), (lambda: Bernoulli(-0.1), "'p'"),
    (lambda: Bernoulli(float("nan")), "'p'"), (lambda: Bernoulli(0.1, min_survivors=0), "'min_survivors'"),
    (lambda: FixedCount(-1), "'stragglers'"), (lambda: FixedCount(2.5), "'stragglers'"),
    (lambda: ContiguousBlock(-2), "'stragglers'"), (lambda: ContiguousBlock(2, start=-1), "'start'"),
    (lambda: ShiftedExponential(rate=0.0), "'rate'"), (lambda: ShiftedExponential(shift=-1), "'shift'"),
    (lambda: SlowWorkers(2, factor=0.5), "'factor'"), (lambda: SlowWorkers([1, 1]), "'slow'"),
    (lambda: SlowWorkers([-1, 2]), "'slow'"), (lambda: WorstCase(2, search="random"), "'search'"),
    (lambda: expected_longest_run(100, 1.0), "'p'"),
    (lambda: WorstCase(2, against=3), "'against'"),
])
def test_bad_constructor_arguments(build, name):
    with pytest.raises(ValueError, match=name):
        build()


def test_bad_sampling_arguments():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="'stragglers'.*< n_workers"):
        FixedCount(5).sample(rng, 5)
    with pytest.raises(ValueError, match="'stragglers'"):
        ContiguousBlock(6).sample(rng, 5)
    with pytest.raises(ValueError, match="'start'"):
        ContiguousBlock(2, start=4).sample(rng, 5)
    with pytest.raises(ValueError, match="'trials'"):
        FixedCount(1).sample_many(rng, 5, 0)
    with pytest.raises(ValueError, match="'n_workers'"):
        Bernoulli(0.1).sample(rng, 0)
    with pytest.raises(ValueError, match="'rng'"):
        Bernoulli(0.1).sample(0, 5)
    with pytest.raises(ValueError, match="'n_wait'"):
        ShiftedExponential().sample_many_with_time(rng, 5, 6, 1)
    with pytest.raises(ValueError, match="'slow'"):
        SlowWorkers([9]).sample_many_with_time(rng, 5, 3, 1)
    with pytest.raises(ValueError, match="^The 'code' parameter of WorstCase.sample_many must be given"):
        WorstCase(2).sample(rng, 5)
    with pytest.raises(ValueError, match="'n_workers' parameter of WorstCase.sample_many"):
        WorstCase(2).sample(rng, 5, code=gcc.BerrutCode(3, 6), f=np.sin, X=np.zeros(3))


# --------------------------------------------------------------------------- the interface
MODELS = [FixedCount(2), Bernoulli(0.3), ContiguousBlock(2), ContiguousBlock(1, start=3), WorstCase(2),
          WorstCase(2, search="greedy"), ShiftedExponential(stragglers=2), SlowWorkers(2, stragglers=1),
          SlowWorkers([0, 4], stragglers=2)]


@pytest.mark.parametrize("model", MODELS, ids=repr)
def test_every_model_honours_the_interface(model):
    """sample_many -> (trials, N) bool masks; sample -> ascending indices, sample_many's one row."""
    N, trials = 9, 6
    code = gcc.SplineCode(3, N)
    data = dict(code=code, f=f_scalar, X=np.array([-1.0, 0.3, 0.8])) if model.adaptive else {}
    assert model.adaptive == isinstance(model, WorstCase)
    masks = model.sample_many(np.random.default_rng(0), N, trials, **data)
    assert masks.shape == (trials, N) and masks.dtype == bool
    received = model.sample(np.random.default_rng(0), N, **data)
    assert received.dtype.kind == "i" and np.all(np.diff(received) > 0)
    np.testing.assert_array_equal(received, np.flatnonzero(model.sample_many(np.random.default_rng(0), N, 1,
                                                                             **data)[0]))
    assert received.size == 0 or 0 <= received[0] <= received[-1] < N
    if isinstance(model, WorstCase):      # the adversary's set, on every row
        np.testing.assert_array_equal(masks, np.tile(np.isin(
            np.arange(N), model.resolve(code, f_scalar, data["X"])), (trials, 1)))
    elif not isinstance(model, Bernoulli):
        assert np.all(masks.sum(axis=1) == N - model.stragglers)   # exactly S stragglers


def test_worst_case_model_resolves_with_the_adversary():
    code = gcc.BerrutCode(4, 11)
    X = np.linspace(-2.0, 2.5, 4)
    for search in ("contiguous", "greedy"):
        model = WorstCase(3, search=search)
        received, loss = model.resolve(code, f_scalar, X, return_loss=True)
        ref = gcc.adversary.worst_case_stragglers(code, f_scalar, X, 3, search, return_loss=True)
        np.testing.assert_array_equal(received, ref[0])
        assert loss == ref[1] and "search=" in repr(model)


# --------------------------------------------------------------------------- masks and runs
@pytest.mark.parametrize("call,message", [
    # a NaN or a 2 is not a received worker (numpy would read both as True)
    (lambda: longest_run([np.nan, 1.0, 0.0]), r"'mask' parameter of longest_run .*mask\[0\] = nan"),
    (lambda: longest_run([2, 1, 0]), r"'mask'.*mask\[0\] = 2 is not a bool"),
    (lambda: longest_straggler_run([1.0, np.nan]), r"'received_mask'.*received_mask\[1\] = nan"),
    (lambda: longest_run([1, 1, 0], axis=1), r"'axis' parameter of longest_run must be an int in \[-1, 0\]"),
    (lambda: longest_run([1, 1, 0], axis=0.0), "'axis'"),
    (lambda: longest_run(True), "'mask'"),
    # the Erdos-Renyi expansion is negative (or -inf) below N (1 - p) = 1
    (lambda: expected_longest_run(0, 0.5), r"'n_workers'.*N \(1 - p\) >= 1"),
    (lambda: expected_longest_run([100, 1], 0.5), "'n_workers'"),
    (lambda: expected_longest_run(np.nan, 0.5), "'n_workers'"),
    (lambda: expected_longest_run("100", 0.5), "'n_workers'"),
])
def test_masks_and_runs_reject_what_they_would_misread(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_masks_and_runs_accept_zero_one_arrays():
    assert longest_run([1.0, 1.0, 0.0]) == 2 and longest_straggler_run(np.array([1, 0, 0])) == 2
    assert expected_longest_run(2, 0.5) == 0.0
    assert gcc.straggler_runs.longest_run is gcc.longest_run


def test_sample_times_checks_its_arguments():
    with pytest.raises(ValueError, match="'rng' parameter of ShiftedExponential"):
        ShiftedExponential().sample_times(None, 4, 1)
    with pytest.raises(ValueError, match="'trials' parameter of SlowWorkers"):
        SlowWorkers(1).sample_times(np.random.default_rng(0), 4, 0)
