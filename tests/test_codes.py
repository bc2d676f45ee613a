"""The four codes against independent references (closed forms, scipy, explicit loops)."""
import pickle

import numpy as np
import pytest
from scipy.interpolate import make_interp_spline, make_smoothing_spline

import gcc

ALL_CODES = [gcc.SplineCode, gcc.BerrutCode, gcc.LagrangeCode, gcc.BSplineCode]


def _random_received(rng, n_workers, n_stragglers):
    return np.sort(rng.choice(n_workers, n_workers - n_stragglers, replace=False))


# ---------------------------------------------------------------------------- SplineCode
@pytest.mark.parametrize("lam_enc,lam_dec", [(0.0, 0.0), (1e-4, 1e-3), (1e-1, 1.0)])
@pytest.mark.parametrize("points", ["chebyshev", "equispaced"])
def test_spline_code_exact_for_affine_f_on_affine_data(lam_enc, lam_dec, points):
    """Exact statement: smoothing splines reproduce affine functions for every lam.

    If X_k = a + b alpha_k (data on a line in R^d), the encoder gives a + b beta_n; an affine
    f keeps the worker outputs affine in beta, which the decoder reproduces, so
    decode(f(encode(X)), F) = f(X_k) for every received set F (S = 0 and S > 0, incl.
    stragglers at the ends, where the decoder extrapolates linearly).
    """
    rng = np.random.default_rng(0)
    K, N, d, m = 12, 30, 7, 4
    code = gcc.SplineCode(K, N, lam_enc=lam_enc, lam_dec=lam_dec, points=points)
    a, b = rng.normal(size=d), rng.normal(size=d)
    X = a + np.outer(code.alphas, b)
    W, c = rng.normal(size=(d, m)), rng.normal(size=m)
    f = lambda Z: Z @ W + c
    for received in [np.arange(N), _random_received(rng, N, 5), np.arange(3, N - 4)]:
        coded = code.encode(X)
        est = code.decode(f(coded[received]), received)
        np.testing.assert_allclose(est, f(X), rtol=0, atol=1e-10 * np.abs(f(X)).max())


def test_spline_code_general_data_is_approximate_and_converges():
    # With generic (non-affine) data the end-to-end map is not the identity even for affine f
    # (f o u_enc is a spline with knots at the alphas, re-interpolated at the betas); its
    # error must shrink fast as N grows (O(N^-2) or better for smooth data).
    K = 8
    x = np.sin(2 * gcc.chebyshev_points(K, 1))[:, None]
    errs = []
    for N in (20, 40, 80, 160):
        code = gcc.SplineCode(K, N)
        errs.append(np.abs(code.decode(code.encode(x)) - x).max())
    errs = np.array(errs)
    assert np.all(np.diff(errs) < 0)
    assert errs[-1] < errs[0] / 16


def test_spline_code_operators_match_scipy():
    K, N = 10, 25
    code = gcc.SplineCode(K, N, lam_enc=0.0, lam_dec=1e-3)
    # encoder (lam=0): natural interpolant of the alphas, continued linearly beyond them
    eye = np.eye(K)
    spl = make_interp_spline(code.alphas, eye, k=3, bc_type="natural")
    d = spl.derivative()
    a0, a1 = code.alphas[0], code.alphas[-1]
    ref = spl(np.clip(code.betas, a0, a1))
    lo, hi = code.betas < a0, code.betas > a1
    ref[lo] = spl(a0) + np.outer(code.betas[lo] - a0, d(a0))
    ref[hi] = spl(a1) + np.outer(code.betas[hi] - a1, d(a1))
    np.testing.assert_allclose(code.encoder_matrix(), ref, atol=1e-12)
    # decoder: scipy's make_smoothing_spline with lam = |F| * lam_dec (alphas inside the hull)
    received = np.array([0, 2, 3, 5, 8, 9, 11, 12, 15, 17, 20, 24])
    nodes = code.betas[received]
    ref = make_smoothing_spline(nodes, np.eye(len(received)), lam=len(received) * 1e-3)(code.alphas)
    np.testing.assert_allclose(code.decoder_matrix(received), ref, atol=1e-9)


def test_spline_code_small_received_sets():
    code = gcc.SplineCode(5, 9)
    Y = np.array([[2.0], [4.0]])
    np.testing.assert_allclose(code.decode(Y[:1], [4]), 2.0)
    # two received workers: the straight line through them
    b = code.betas[[2, 6]]
    slope = (4.0 - 2.0) / (b[1] - b[0])
    np.testing.assert_allclose(code.decode(Y, [2, 6])[:, 0], 2.0 + slope * (code.alphas - b[0]))


# -------------------------------------------------------------------------- LagrangeCode
def test_lagrange_exact_for_cubic_above_threshold():
    K, N, deg = 5, 20, 3
    code = gcc.LagrangeCode(K, N)
    assert code.recovery_threshold(deg, 7) == 20
    assert code.recovery_threshold(deg, 0) == 13
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(K, 6))
    f = lambda Z: Z ** 3 - 2 * Z ** 2 + 0.5 * Z + 1  # elementwise cubic
    coded = code.encode(X)
    for S in range(0, 8):
        received = _random_received(rng, N, S)
        est = code.decode(f(coded[received]), received)
        np.testing.assert_allclose(est, f(X), rtol=0, atol=1e-9)
    # below the threshold (S = 9: 11 < 13 points) plain interpolation is no longer exact
    received = _random_received(rng, N, 9)
    assert np.abs(code.decode(f(coded[received]), received) - f(X)).max() > 1e-6


def test_lagrange_degree_least_squares():
    K, N, deg = 4, 16, 2
    fit_degree = (K - 1) * deg
    code = gcc.LagrangeCode(K, N, degree=fit_degree)
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(K, 3))
    f = lambda Z: 3 * Z ** 2 - Z
    coded = code.encode(X)
    received = _random_received(rng, N, 5)  # 11 > 7 = fit_degree + 1 points
    np.testing.assert_allclose(code.decode(f(coded[received]), received), f(X), atol=1e-10)
    # the LS fit of degree d equals numpy's polyfit at the received points
    y = rng.normal(size=len(received))
    ref = np.polyval(np.polyfit(code.betas[received], y, fit_degree), code.alphas)
    np.testing.assert_allclose(code.decode(y, received), ref, atol=1e-10)
    # with fewer points than fit_degree + 1 it interpolates (degree |F| - 1)
    few = np.array([1, 5, 9, 14])
    ref = np.polyval(np.polyfit(code.betas[few], y[:4], 3), code.alphas)
    np.testing.assert_allclose(code.decode(y[:4], few), ref, atol=1e-10)


def test_lagrange_encoder_is_polynomial_interpolation():
    code = gcc.LagrangeCode(6, 11, points="equispaced")
    X = np.random.default_rng(3).normal(size=6)
    ref = np.polyval(np.polyfit(code.alphas, X, 5), code.betas)
    np.testing.assert_allclose(code.encode(X), ref, atol=1e-11)


# ---------------------------------------------------------------------------- BerrutCode
def _berrut_loop(nodes, values, z):
    """Closed-form Berrut interpolant, written as an explicit double loop."""
    out = []
    for t in z:
        num = den = 0.0
        hit = None
        for j, (tj, yj) in enumerate(zip(nodes, values)):
            if t == tj:
                hit = yj
                break
            w = (-1.0) ** j / (t - tj)
            num += w * yj
            den += w
        out.append(hit if hit is not None else num / den)
    return np.array(out)


@pytest.mark.parametrize("K,N,S", [(5, 12, 0), (8, 20, 3), (15, 40, 11), (2, 5, 1)])
def test_berrut_matches_closed_form(K, N, S):
    code = gcc.BerrutCode(K, N)
    rng = np.random.default_rng(K * N + S)
    X = rng.normal(size=K)
    np.testing.assert_allclose(code.encode(X), _berrut_loop(code.alphas, X, code.betas), rtol=1e-12,
                               atol=1e-12)
    received = _random_received(rng, N, S)
    Y = rng.normal(size=len(received))
    ref = _berrut_loop(code.betas[received], Y, code.alphas)
    np.testing.assert_allclose(code.decode(Y, received), ref, rtol=1e-12, atol=1e-12)


def test_berrut_exact_at_coinciding_points():
    # K = 2, N = 5 Chebyshev: alpha_2 = beta_4 = sin(pi/4) exactly
    code = gcc.BerrutCode(2, 5)
    assert code.alphas[1] == code.betas[3]
    X = np.array([[1.0, 2.0], [3.0, -1.0]])
    coded = code.encode(X)
    np.testing.assert_array_equal(coded[3], X[1])
    np.testing.assert_array_equal(code.decode(coded), np.vstack([code.decode(coded)[0], X[1]]))


# --------------------------------------------------------------------------- BSplineCode
def test_bspline_matches_scipy_per_column():
    K, N = 9, 30
    code = gcc.BSplineCode(K, N)
    rng = np.random.default_rng(4)
    X = rng.normal(size=(K, 3))
    np.testing.assert_allclose(code.encode(X), gcc.BerrutCode(K, N).encode(X), atol=1e-14)
    received = _random_received(rng, N, 6)
    Y = rng.normal(size=(len(received), 3))
    est = code.decode(Y, received)
    for j in range(3):
        ref = make_interp_spline(code.betas[received], Y[:, j], k=3)(code.alphas)
        np.testing.assert_allclose(est[:, j], ref, atol=1e-11)


def test_bspline_exact_for_cubics_and_small_sets():
    code = gcc.BSplineCode(6, 25)
    received = np.arange(0, 25, 2)
    g = lambda z: 2 * z ** 3 - z + 0.5
    np.testing.assert_allclose(code.decode(g(code.betas[received]), received), g(code.alphas), atol=1e-12)
    # 3 received points: the parabola through them
    few = np.array([3, 10, 20])
    y = np.array([1.0, -2.0, 0.5])
    ref = np.polyval(np.polyfit(code.betas[few], y, 2), code.alphas)
    np.testing.assert_allclose(code.decode(y, few), ref, atol=1e-12)


# ----------------------------------------------------------------------- shared behaviour
@pytest.mark.parametrize("cls", ALL_CODES)
def test_interface_shapes_and_constants(cls):
    K, N = 7, 19
    code = cls(K, N)
    assert code.alphas.shape == (K,) and code.betas.shape == (N,)
    assert np.all(np.diff(code.alphas) > 0) and np.all(np.diff(code.betas) > 0)
    assert code.encoder_matrix().shape == (N, K)
    X = np.full((K, 2, 3), 2.5)
    coded = code.encode(X)
    assert coded.shape == (N, 2, 3)
    np.testing.assert_allclose(coded, 2.5, atol=1e-12)      # constants are reproduced
    received = [0, 3, 4, 8, 9, 12, 15, 16, 18]
    assert code.decoder_matrix(received).shape == (K, len(received))
    est = code.decode(coded[received], received)
    assert est.shape == (K, 2, 3)
    np.testing.assert_allclose(est, 2.5, atol=1e-10)


@pytest.mark.parametrize("cls", ALL_CODES)
def test_decoder_cache_and_read_only(cls):
    code = cls(5, 12)
    D1 = code.decoder_matrix([0, 2, 5, 7, 9, 11])
    D2 = code.decoder_matrix(np.array([0, 2, 5, 7, 9, 11]))
    assert D1 is D2
    mask = np.zeros(12, bool)
    mask[[0, 2, 5, 7, 9, 11]] = True
    assert code.decoder_matrix(mask) is D1
    with pytest.raises(ValueError):
        D1[0, 0] = 1.0
    code.clear_cache()
    assert code.decoder_matrix([0, 2, 5, 7, 9, 11]) is not D1
    np.testing.assert_array_equal(code.decoder_matrix([0, 2, 5, 7, 9, 11]), D1)


@pytest.mark.parametrize("cls", ALL_CODES)
def test_numpy_and_torch_agree(cls):
    torch = pytest.importorskip("torch")
    K, N = 6, 15
    code = cls(K, N)
    rng = np.random.default_rng(5)
    X = rng.normal(size=(K, 4, 5))
    received = [1, 2, 4, 6, 7, 9, 10, 13, 14]
    Y = rng.normal(size=(len(received), 3))
    Xt = torch.from_numpy(X)
    enc_t = code.encode(Xt)
    assert isinstance(enc_t, torch.Tensor) and enc_t.dtype == torch.float64
    assert enc_t.device == Xt.device
    np.testing.assert_allclose(enc_t.numpy(), code.encode(X), rtol=1e-12, atol=1e-12)
    dec_t = code.decode(torch.from_numpy(Y), received)
    np.testing.assert_allclose(dec_t.numpy(), code.decode(Y, received), rtol=1e-12, atol=1e-12)
    # float32 stays float32 (torch and numpy), values close to float64
    enc32 = code.encode(Xt.float())
    assert enc32.dtype == torch.float32 and enc32.device.type == "cpu"
    np.testing.assert_allclose(enc32.numpy(), code.encode(X), rtol=1e-4, atol=1e-5)
    assert code.encode(X.astype(np.float32)).dtype == np.float32
    assert code.decode(torch.from_numpy(Y).float(), received).dtype == torch.float32
    # non-contiguous input
    Xnc = torch.from_numpy(rng.normal(size=(5, K))).T
    np.testing.assert_allclose(code.encode(Xnc).numpy(), code.encode(Xnc.numpy()), atol=1e-12)


def test_integer_inputs_promote_to_float64():
    code = gcc.SplineCode(3, 6)
    out = code.encode(np.arange(6).reshape(3, 2))
    assert out.dtype == np.float64


@pytest.mark.parametrize("cls", ALL_CODES)
def test_with_params_and_pickle(cls):
    code = cls(4, 10, points="equispaced")
    other = code.with_params(n_workers=12)
    assert type(other) is cls and other.n_workers == 12 and other.points == "equispaced"
    np.testing.assert_allclose(other.alphas, code.alphas)
    code.decoder_matrix([0, 1, 2, 3, 9])
    clone = pickle.loads(pickle.dumps(code))
    np.testing.assert_array_equal(clone.decoder_matrix([0, 1, 2, 3, 9]),
                                  code.decoder_matrix([0, 1, 2, 3, 9]))
    assert repr(code).startswith(cls.__name__ + "(n_inputs=4, n_workers=10")


def test_user_points_and_default_point_sets():
    a = np.array([-0.5, 0.0, 0.5])
    b = np.linspace(-1, 1, 7)
    code = gcc.SplineCode(3, 7, alphas=a, betas=b)
    np.testing.assert_array_equal(code.alphas, a)
    np.testing.assert_array_equal(code.betas, b)
    cheb = gcc.BerrutCode(4, 9)
    np.testing.assert_allclose(cheb.alphas, np.sort(np.cos((2 * np.arange(1, 5) - 1) * np.pi / 8)))
    np.testing.assert_allclose(cheb.betas, np.sort(np.cos(np.arange(9) * np.pi / 8)), atol=1e-15)
    eq = gcc.BerrutCode(4, 9, points="equispaced")
    np.testing.assert_allclose(eq.alphas, [-0.75, -0.25, 0.25, 0.75])
    np.testing.assert_allclose(eq.betas, np.linspace(-1, 1, 9))


def test_spline_code_accepts_fewer_workers_than_inputs():
    code = gcc.SplineCode(10, 4)   # documented: allowed, though not useful
    assert code.encode(np.ones((10, 2))).shape == (4, 2)


@pytest.mark.parametrize("cls", ALL_CODES)
def test_torch_cuda_stays_on_device(cls):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    code = cls(5, 12)
    X = torch.randn(5, 7, dtype=torch.float64, device="cuda")
    coded = code.encode(X)
    assert coded.device == X.device and coded.dtype == torch.float64
    np.testing.assert_allclose(coded.cpu().numpy(), code.encode(X.cpu().numpy()), atol=1e-12)
    est = code.decode(coded[[0, 2, 3, 5, 8, 11]], [0, 2, 3, 5, 8, 11])
    assert est.device == X.device
