"""Smoothing splines and point sets against independent references.

References: scipy.interpolate.make_smoothing_spline / make_interp_spline, an mpmath
(40 digits) dense Reinsch solve, and closed forms for n = 1, 2, 3.
"""
import numpy as np
import pytest
from scipy.interpolate import make_interp_spline, make_smoothing_spline

import gcc
from gcc.gcv import GCV_GRID

LAMS = [1e-8, 1e-6, 1e-4, 1e-2, 1e0, 1e2]


def _jittered(rng, n, lo=-1.0, hi=1.0):
    """Random, well-separated knots: a uniform grid with each point moved by up to 30% of h.

    Plain sorted uniform draws create gaps of ~1e-4 where scipy's B-spline solve itself
    loses ~1e-8 at large lam (checked against mpmath in test_large_lambda_against_mpmath),
    so the scipy comparison uses separated knots; the mpmath test uses raw uniform ones.
    """
    grid = np.linspace(lo, hi, n)
    h = (hi - lo) / (n - 1)
    return grid + rng.uniform(-0.3 * h, 0.3 * h, n)


def _linear_continuation(spl, x0, x1, xe):
    """Independent linear extension of a scipy spline beyond [x0, x1] (value + slope)."""
    d = spl.derivative()
    out = spl(np.clip(xe, x0, x1))
    left, right = xe < x0, xe > x1
    col = (-1,) + (1,) * (out.ndim - 1)
    out[left] = spl(x0) + d(x0) * (xe[left] - x0).reshape(col)
    out[right] = spl(x1) + d(x1) * (xe[right] - x1).reshape(col)
    return out


@pytest.mark.parametrize("n", [5, 7, 12, 20, 33])
@pytest.mark.parametrize("lam", LAMS)
def test_matches_scipy_make_smoothing_spline(n, lam):
    rng = np.random.default_rng(1000 * n + int(-np.log10(lam) + 10))
    x = _jittered(rng, n)
    y = rng.normal(size=n)
    spl = make_smoothing_spline(x, y, lam=n * lam)
    xe = np.concatenate([np.linspace(-1.5, 1.5, 101), x])
    ref = _linear_continuation(spl, x[0], x[-1], xe)
    scale = np.abs(ref).max()
    S = gcc.smoother_matrix(x, lam, xe)
    assert S.shape == (xe.size, n)
    np.testing.assert_allclose(S @ y, ref, rtol=0, atol=1e-8 * scale)
    np.testing.assert_allclose(gcc.smoothing_spline(x, y, lam, xe), ref, rtol=0, atol=1e-8 * scale)


@pytest.mark.parametrize("lam", [1e-6, 1e-4, 1e-2])
def test_matches_scipy_on_chebyshev_workers_n100(lam):
    # (at lam = 1 scipy's own error is ~1.5e-7 here; that case is checked against mpmath)
    # The companion's real use: 100 Chebyshev-2 worker points evaluated at 60 Chebyshev-1 points.
    x = gcc.chebyshev_points(100, kind=2)
    xe = gcc.chebyshev_points(60, kind=1)
    y = np.random.default_rng(3).normal(size=(100, 4))
    ref = make_smoothing_spline(x, y, lam=100 * lam)(xe)
    np.testing.assert_allclose(gcc.smoothing_spline(x, y, lam, xe), ref, rtol=0,
                               atol=1e-8 * np.abs(ref).max())


@pytest.mark.parametrize("n,lam,knots", [(20, 100.0, "uniform"), (33, 1.0, "uniform"),
                                         (40, 1e-3, "uniform"), (50, 1.0, "chebyshev")])
def test_against_mpmath_on_clustered_knots(n, lam, knots):
    # Sorted uniform knots have tiny gaps where scipy loses ~1e-8 (at n=100, lam=100: ~1e-6);
    # check against a 40-digit dense solve instead.
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    rng = np.random.default_rng(n)
    x = np.sort(rng.uniform(-1, 1, n)) if knots == "uniform" else gcc.chebyshev_points(n, 2)
    y = rng.normal(size=n)
    a = n * lam
    X = [mp.mpf(float(v)) for v in x]
    h = [X[i + 1] - X[i] for i in range(n - 1)]
    Q = mp.zeros(n, n - 2)
    R = mp.zeros(n - 2, n - 2)
    for j in range(n - 2):
        Q[j, j], Q[j + 1, j], Q[j + 2, j] = 1 / h[j], -(1 / h[j] + 1 / h[j + 1]), 1 / h[j + 1]
        R[j, j] = (h[j] + h[j + 1]) / 3
        if j < n - 3:
            R[j, j + 1] = R[j + 1, j] = h[j + 1] / 6
    Y = mp.matrix([mp.mpf(float(v)) for v in y])
    # Dense formula g = (I + a Q R^-1 Q^T)^-1 y (Green & Silverman Thm 2.1), not Reinsch's.
    A = mp.eye(n) + a * Q * mp.inverse(R) * Q.T
    g = mp.lu_solve(A, Y)
    ref = np.array([float(v) for v in g])
    np.testing.assert_allclose(gcc.smoothing_spline(x, y, lam, x), ref, rtol=0,
                               atol=1e-9 * np.abs(ref).max())


@pytest.mark.parametrize("n", [2, 3, 4, 5, 9, 30, 100])
def test_lam_zero_is_natural_interpolant(n):
    rng = np.random.default_rng(n)
    x = np.sort(rng.uniform(-1, 1, n))
    y = rng.normal(size=(n, 3))
    spl = make_interp_spline(x, y, k=3, bc_type="natural")
    xe = np.linspace(-1.3, 1.3, 257)
    ref = _linear_continuation(spl, x[0], x[-1], xe)
    got = gcc.smoothing_spline(x, y, 0.0, xe)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-11 * np.abs(ref).max())
    np.testing.assert_allclose(gcc.smoother_matrix(x, 0.0, xe) @ y, ref, rtol=0,
                               atol=1e-11 * np.abs(ref).max())
    # interpolation: exact at the knots
    np.testing.assert_allclose(gcc.smoother_matrix(x, 0.0, x), np.eye(n), atol=1e-12)


def test_batched_equals_loop_over_columns():
    rng = np.random.default_rng(7)
    n = 23
    x = np.sort(rng.uniform(-2, 3, n))
    y = rng.normal(size=(n, 4, 5))
    xe = np.linspace(-3, 4, 50)
    batched = gcc.smoothing_spline(x, y, 1e-3, xe)
    assert batched.shape == (50, 4, 5)
    for i in range(4):
        for j in range(5):
            np.testing.assert_allclose(batched[:, i, j], gcc.smoothing_spline(x, y[:, i, j], 1e-3, xe),
                                       rtol=1e-13, atol=1e-13)


def test_scalar_x_eval_and_1d_y():
    x = np.linspace(0, 1, 6)
    y = x ** 2
    v = gcc.smoothing_spline(x, y, 0.0, 0.5)
    assert np.ndim(v) == 0
    assert gcc.smoother_matrix(x, 0.0, 0.5).shape == (1, 6)


def test_n1_constant_n2_line():
    xe = np.array([-5.0, 0.0, 0.3, 7.0])
    np.testing.assert_allclose(gcc.smoothing_spline([0.2], [3.0], 1.0, xe), 3.0)
    for lam in (0.0, 1e-3, 10.0):
        got = gcc.smoothing_spline([0.0, 2.0], [1.0, 5.0], lam, xe)
        np.testing.assert_allclose(got, 1.0 + 2.0 * xe, rtol=1e-14)


def test_n3_closed_form():
    # Natural interpolant through 3 points: M_1 from R M_1 = Q^T y (closed form).
    x = np.array([-1.0, 0.2, 1.0])
    y = np.array([0.5, -1.0, 2.0])
    h0, h1 = 1.2, 0.8
    m1 = ((y[2] - y[1]) / h1 - (y[1] - y[0]) / h0) / ((h0 + h1) / 3)
    t = np.array([-0.4, 0.6])

    def piece(tt):
        if tt <= x[1]:
            A = (x[1] - tt) / h0
            B = 1 - A
            return A * y[0] + B * y[1] + (B ** 3 - B) * m1 * h0 ** 2 / 6
        A = (x[2] - tt) / h1
        B = 1 - A
        return A * y[1] + B * y[2] + (A ** 3 - A) * m1 * h1 ** 2 / 6

    ref = np.array([piece(v) for v in t])
    np.testing.assert_allclose(gcc.smoothing_spline(x, y, 0.0, t), ref, rtol=1e-14)
    # scipy agrees for n = 3 as well
    spl = make_interp_spline(x, y, k=3, bc_type="natural")
    np.testing.assert_allclose(gcc.smoothing_spline(x, y, 0.0, t), spl(t), rtol=1e-13)


@pytest.mark.parametrize("n", [3, 4])
def test_small_n_smoothing_limits(n):
    # lam -> infinity tends to the least-squares line; every lam reproduces lines exactly.
    x = np.linspace(-1, 1, n) + np.array([0, 0.1, -0.05, 0][:n])
    y = np.random.default_rng(n).normal(size=n)
    line = np.polyval(np.polyfit(x, y, 1), x)
    np.testing.assert_allclose(gcc.smoothing_spline(x, y, 1e9, x), line, atol=1e-6)
    for lam in (0.0, 0.1, 10.0):
        np.testing.assert_allclose(gcc.smoothing_spline(x, 2 * x - 1, lam, x + 0.3), 2 * (x + 0.3) - 1,
                                   atol=1e-12)


def test_rows_sum_to_one_and_reproduce_lines():
    x = gcc.chebyshev_points(50, 2)
    xe = np.linspace(-2, 2, 41)
    for lam in (0.0, 1e-5, 1.0):
        S = gcc.smoother_matrix(x, lam, xe)
        np.testing.assert_allclose(S.sum(axis=1), 1.0, atol=1e-11)
        np.testing.assert_allclose(S @ x, xe, atol=1e-11)


def test_gcv_lambda_scale_free_and_sensible():
    rng = np.random.default_rng(5)
    n = 80
    x = np.sort(rng.uniform(-1, 1, n))
    y = np.sin(3 * x) + 0.2 * rng.normal(size=n)
    lam, scores = gcc.gcv_lambda(x, y)
    grid = GCV_GRID * (x[-1] - x[0]) ** 3
    assert scores.shape == grid.shape and lam in grid
    assert grid[0] < lam < grid[-1]
    # Rescaling x by c rescales the chosen lam by c^3 (scale-free grid).
    lam2, scores2 = gcc.gcv_lambda(3.0 * x, y)
    np.testing.assert_allclose(lam2, 27.0 * lam, rtol=1e-12)
    np.testing.assert_allclose(scores2, scores, rtol=1e-6)
    # The GCV choice fits better than both extremes.
    truth = np.sin(3 * x)
    err = lambda l: np.mean((gcc.smoothing_spline(x, y, l, x) - truth) ** 2)
    assert err(lam) < err(grid[0]) and err(lam) < err(grid[-1])
    # lam="gcv" uses it
    np.testing.assert_allclose(gcc.smoothing_spline(x, y, "gcv", x), gcc.smoothing_spline(x, y, lam, x))


def test_gcv_matches_scipy_gcv_criterion():
    # scipy minimises the same GCV criterion over a continuous lam; ours is on a grid, so the
    # scipy optimum's score must not be much below our best grid score.
    rng = np.random.default_rng(11)
    n = 40
    x = np.sort(rng.uniform(-1, 1, n))
    y = np.cos(2 * x) + 0.1 * rng.normal(size=n)
    grid = np.logspace(-9, 1, 201)
    lam, scores = gcc.gcv_lambda(x, y, grid=grid)
    fit_scipy = make_smoothing_spline(x, y)(x)  # GCV-chosen by scipy
    fit_ours = gcc.smoothing_spline(x, y, lam, x)
    np.testing.assert_allclose(fit_ours, fit_scipy, atol=2e-2)



def test_gcv_lambda_rejects_a_grid_whose_every_score_is_infinite():
    # Every lam = 0 interpolates (n - tr S = 0): GCV is undefined, not a choice of 0.
    x = np.linspace(-1.0, 1.0, 6)
    with pytest.raises(ValueError, match=r"^The 'grid' parameter of gcv_lambda must be a grid with at least "
                                         r"one lam whose GCV score is defined .*every score is infinite"):
        gcc.gcv_lambda(x, np.sin(x), grid=np.zeros(6))
    lam, scores = gcc.gcv_lambda(x, np.sin(x), grid=[0.0, 1e-3])
    assert lam == 1e-3 and np.isinf(scores[0]) and np.isfinite(scores[1])


# ------------------------------------------------------------------------------ points
def test_chebyshev_points_closed_forms():
    for n in (1, 2, 5, 60):
        k = np.arange(1, n + 1)
        ref1 = np.sort(np.cos((2 * k - 1) * np.pi / (2 * n)))
        np.testing.assert_allclose(gcc.chebyshev_points(n, 1), ref1, atol=1e-15)
    for n in (2, 3, 100):
        k = np.arange(1, n + 1)
        ref2 = np.sort(np.cos((k - 1) * np.pi / (n - 1)))
        p = gcc.chebyshev_points(n, kind=2)
        np.testing.assert_allclose(p, ref2, atol=1e-15)
        assert p[0] == -1.0 and p[-1] == 1.0
    np.testing.assert_array_equal(gcc.chebyshev_points(1, kind=2), [0.0])
    p = gcc.chebyshev_points(7, 1)
    assert np.all(np.diff(p) > 0) and p[3] == 0.0 and np.array_equal(p, -p[::-1])


def test_equispaced_points():
    np.testing.assert_allclose(gcc.equispaced_points(5), [-1, -0.5, 0, 0.5, 1])
    np.testing.assert_allclose(gcc.equispaced_points(4, endpoints=False), [-0.75, -0.25, 0.25, 0.75])
    np.testing.assert_array_equal(gcc.equispaced_points(1), [0.0])


# ------------------------------------------------------------------ properties (hypothesis)
from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 40), lam=st.floats(1e-8, 10.0), seed=st.integers(0, 2 ** 31 - 1))
def test_hat_matrix_is_symmetric_shrinking_and_reproduces_lines(n, lam, seed):
    # At the knots S = (I + a Q R^-1 Q^T)^-1: symmetric, eigenvalues in (0, 1], exactly two
    # equal to 1 (constants and lines pass unchanged).
    rng = np.random.default_rng(seed)
    x = np.cumsum(rng.uniform(0.2, 1.0, n))
    S = gcc.smoother_matrix(x, lam, x)
    np.testing.assert_allclose(S, S.T, atol=1e-9)
    ev = np.linalg.eigvalsh((S + S.T) / 2)
    assert ev.min() > -1e-9 and ev.max() < 1 + 1e-9
    assert np.sum(ev > 1 - 1e-7) >= 2
    np.testing.assert_allclose(S @ (3 * x - 1), 3 * x - 1, atol=1e-8 * np.abs(x).max())
