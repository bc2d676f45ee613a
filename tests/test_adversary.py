"""The worst-case search (gcc.adversary) and the batched block decoders of the codes.

Independent references: one ``code.decode`` per block, exhaustive enumeration of every
straggler set, one smoothing-spline fit per block, scipy's splines and Berrut's formula
written as a loop.
"""
import itertools
import math

import numpy as np
import pytest
from scipy.interpolate import make_interp_spline, make_smoothing_spline

import gcc
from gcc.adversary import SEARCHES, block_losses, worst_case_stragglers
from gcc.codes.base import block_received


def f_scalar(x):
    return x * np.sin(x)


def f_vector(x):
    x = np.asarray(x)
    return np.stack([np.sin(x), np.tanh(2 * x), x ** 2], axis=-1)


def _brute_block_losses(code, f, X, S):
    true = f(X).reshape(len(X), -1)
    Y = f(code.encode(X))
    N = code.n_workers
    out = []
    for s in range(N - S + 1):
        r = np.array([j for j in range(N) if not s <= j < s + S])
        est = code.decode(Y[r], r).reshape(true.shape)
        out.append(np.mean(np.sum((est - true) ** 2, axis=1)))
    return np.array(out)


def _without_block(N, S, s):
    return np.r_[0:s, s + S:N]


# --------------------------------------------------------------------------- block losses
@pytest.mark.parametrize("make", [
    lambda N: gcc.SplineCode(6, N), lambda N: gcc.SplineCode(6, N, lam_dec=1e-3),
    lambda N: gcc.BerrutCode(6, N), lambda N: gcc.BSplineCode(6, N)])
@pytest.mark.parametrize("N,S", [(30, 4), (200, 5), (200, 17)])
def test_block_losses_fast_equals_loop(make, N, S):
    code = make(N)
    X = np.linspace(-2.5, 2.0, 6)
    for f in (f_scalar, f_vector):
        fast = block_losses(code, f, X, S)
        ref = _brute_block_losses(code, f, X, S)
        np.testing.assert_allclose(fast, ref, rtol=1e-7, atol=1e-12 * ref.max())
        assert np.argmax(fast) == np.argmax(ref) or fast[np.argmax(ref)] == pytest.approx(
            fast.max(), rel=1e-9)


def test_block_received_against_a_loop():
    for N, S in ((1, 0), (7, 0), (7, 3), (9, 8)):
        for s in range(N - S + 1):
            np.testing.assert_array_equal(block_received(N, S, s), _without_block(N, S, s))
    for bad, name in (((5, 5, 0), "'stragglers'"), ((5, 2, 4), "'start'"),
                      ((5, 2, 1.0), "'start'"), ((0, 0, 0), "'n_workers'")):
        with pytest.raises(ValueError, match=name):
            block_received(*bad)


# ----------------------------------------------------------------- batched block decoders
@pytest.mark.parametrize("lam", [0.0, 1e-9, 1e-5, 1e-1])
@pytest.mark.parametrize("N,S", [(100, 6), (150, 6), (150, 0)])
def test_spline_block_estimates_against_independent_fits(lam, N, S):
    """Every path against one gcc.smoothing_spline fit per block: windowed (lam = 0,
    N = 150), Woodbury (lam > 0, S > 0), lock step (lam = 0 and N = 100; lam > 0 and S = 0)."""
    rng = np.random.default_rng(7)
    K = 9
    for betas in (gcc.chebyshev_points(N, 2), np.sort(rng.uniform(-1, 1, N))):
        alphas = np.r_[-1.0, gcc.chebyshev_points(K - 2, 1), 1.0]  # beyond the hull too
        code = gcc.SplineCode(K, N, lam_dec=lam, alphas=alphas, betas=betas)
        Y = rng.normal(size=(N, 2))
        ref = np.stack([gcc.smoothing_spline(betas[_without_block(N, S, s)],
                                             Y[_without_block(N, S, s)], lam, alphas)
                        for s in range(N - S + 1)])
        # large lam: the Reinsch form is ill-conditioned (scipy's B-spline fit differs by ~1e-7)
        tol = (1e-9 if lam <= 1e-5 else 1e-5) * np.abs(ref).max()
        np.testing.assert_allclose(code.block_estimates(Y, S), ref, atol=tol)


def test_spline_block_estimates_against_scipy():
    N, S, K = 160, 5, 10
    code = gcc.SplineCode(K, N)
    Y = np.cos(3 * code.betas) + 0.1 * code.betas ** 3
    est = code.block_estimates(Y, S)
    for s in (0, 1, 40, 77, N - S):
        r = _without_block(N, S, s)
        nodes = code.betas[r]
        inside = (code.alphas >= nodes[0]) & (code.alphas <= nodes[-1])
        spl = make_interp_spline(nodes, Y[r], k=3, bc_type="natural")
        np.testing.assert_allclose(est[s][inside], spl(code.alphas[inside]), atol=1e-12)
    lam = 1e-4
    smooth = gcc.SplineCode(K, N, lam_dec=lam).block_estimates(Y, S)
    for s in (0, 80, N - S):
        r = _without_block(N, S, s)
        spl = make_smoothing_spline(code.betas[r], Y[r], lam=(N - S) * lam)
        inside = (code.alphas >= code.betas[r][0]) & (code.alphas <= code.betas[r][-1])
        np.testing.assert_allclose(smooth[s][inside], spl(code.alphas[inside]), atol=1e-8)


def _berrut_loop(nodes, values, z):
    out = []
    for zz in z:
        w = np.array([(-1) ** j / (zz - t) for j, t in enumerate(nodes)])
        out.append(w @ values / w.sum())
    return np.array(out)


def test_berrut_block_estimates_against_the_formula():
    N, S, K = 40, 3, 5
    code = gcc.BerrutCode(K, N)
    Y = np.random.default_rng(1).normal(size=(N, 2, 2))
    est = code.block_estimates(Y, S)
    assert est.shape == (N - S + 1, K, 2, 2)
    for s in range(N - S + 1):
        r = _without_block(N, S, s)
        ref = _berrut_loop(code.betas[r], Y[r].reshape(len(r), -1), code.alphas)
        np.testing.assert_allclose(est[s].reshape(K, -1), ref, rtol=1e-12, atol=1e-12)
    # a data point on a worker point (K = 2, N = 5): no batched formula
    assert gcc.BerrutCode(3, 5).block_estimates(np.ones(5), 1) is None


def test_block_estimates_contract():
    Y = np.ones(8)
    for cls in (gcc.LagrangeCode, gcc.BSplineCode):  # no batched decoder: block by block
        assert cls(3, 8).block_estimates(Y, 2) is None
    code = gcc.SplineCode(3, 8)
    assert code.block_estimates(Y, 0).shape == (9, 3)  # N - S + 1 (all equal) blocks
    with pytest.raises(ValueError, match="'stragglers'"):
        code.block_estimates(Y, 8)
    with pytest.raises(ValueError, match="'Y'"):
        code.block_estimates(np.ones(7), 2)
    with pytest.raises(ValueError, match="'Y'"):
        code.block_estimates(np.r_[np.ones(7), np.nan], 2)


def test_a_wrong_batched_decoder_is_caught():
    class Wrong(gcc.SplineCode):
        def _block_estimates(self, Y, S):
            return super()._block_estimates(Y, S) + 1.0

    code, X = Wrong(4, 20), np.linspace(-1, 1.5, 4)
    with pytest.warns(RuntimeWarning, match="disagrees with code.decode"):
        losses = block_losses(code, f_scalar, X, 3)
    np.testing.assert_allclose(losses, _brute_block_losses(code, f_scalar, X, 3), rtol=1e-12)


# --------------------------------------------------------------------------- searches
def test_worst_case_ordering_against_exhaustive():
    X = np.linspace(-2.0, 2.5, 4)
    for code in (gcc.SplineCode(4, 9), gcc.BerrutCode(4, 9)):
        for S in (1, 2, 3):
            Y = f_scalar(code.encode(X))
            true = f_scalar(X)
            # independent brute force over every S-subset
            brute = max(np.mean((code.decode(Y[list(r)], list(r)) - true) ** 2)
                        for r in itertools.combinations(range(9), 9 - S))
            r_ex, l_ex = worst_case_stragglers(code, f_scalar, X, S, "exhaustive", return_loss=True)
            r_gr, l_gr = worst_case_stragglers(code, f_scalar, X, S, "greedy", return_loss=True)
            r_co, l_co = worst_case_stragglers(code, f_scalar, X, S, "contiguous", return_loss=True)
            assert l_ex == pytest.approx(brute, rel=1e-12)
            assert l_co <= l_gr * (1 + 1e-12) and l_gr <= l_ex * (1 + 1e-12)
            assert l_co == pytest.approx(_brute_block_losses(code, f_scalar, X, S).max(), rel=1e-9)
            for r, l in ((r_ex, l_ex), (r_gr, l_gr), (r_co, l_co)):
                assert r.size == 9 - S and np.all(np.diff(r) > 0)
                assert np.mean((code.decode(Y[r], r) - true) ** 2) == pytest.approx(l, rel=1e-12)
            r0 = worst_case_stragglers(code, f_scalar, X, S)
            np.testing.assert_array_equal(r0, r_co)


def test_worst_case_s_zero_and_numpy_torch():
    code = gcc.SplineCode(5, 12)
    X = np.linspace(-1, 1.7, 5)  # asymmetric: no tied blocks
    np.testing.assert_array_equal(worst_case_stragglers(code, f_scalar, X, 0), np.arange(12))
    torch = pytest.importorskip("torch")
    r_np = worst_case_stragglers(code, f_scalar, X, 3)
    r_t = worst_case_stragglers(code, lambda x: x * torch.sin(x), torch.tensor(X), 3)
    np.testing.assert_array_equal(r_np, r_t)


def test_searches_keep_the_encoder_and_the_top_level_names():
    code = gcc.SplineCode(4, 10)
    X = np.linspace(-1, 1.3, 4)
    encoder = code.encoder_matrix()
    worst_case_stragglers(code, f_scalar, X, 2, "greedy")
    assert code.encoder_matrix() is encoder
    assert gcc.worst_case_stragglers is worst_case_stragglers and gcc.block_losses is block_losses
    assert SEARCHES == ("contiguous", "greedy", "exhaustive")


def test_bad_search_arguments():
    code = gcc.SplineCode(4, 8)
    X = np.linspace(-1, 1, 4)
    with pytest.raises(ValueError, match="'stragglers'.*< n_workers"):
        worst_case_stragglers(code, f_scalar, X, 8)
    with pytest.raises(ValueError, match="'stragglers'"):
        worst_case_stragglers(code, f_scalar, X, -1)
    with pytest.raises(ValueError, match="'stragglers'"):
        block_losses(code, f_scalar, X, 8)
    with pytest.raises(ValueError, match="'search'"):
        worst_case_stragglers(code, f_scalar, X, 2, search="smart")
    with pytest.raises(ValueError, match="max_sets"):
        worst_case_stragglers(gcc.SplineCode(4, 60), f_scalar, X, 10, search="exhaustive")
    assert math.comb(60, 10) > 200_000


@pytest.mark.parametrize("call,name", [
    (lambda c, X: worst_case_stragglers(c, 3, X, 2), r"'f' parameter of worst_case_stragglers must be a callable"),
    (lambda c, X: block_losses(c, lambda x: np.zeros(3), X, 2), r"'f'.*f\(X\) has shape \(3,\)"),
    (lambda c, X: block_losses(c, lambda x: np.array(["a"] * len(x)), X, 2), "'f'"),
    (lambda c, X: worst_case_stragglers(object(), f_scalar, X, 2), r"'code'.*it has no 'n_workers'"),
    (lambda c, X: worst_case_stragglers(c, f_scalar, X, 2, return_loss="yes"), "'return_loss'"),
    (lambda c, X: block_losses(c, f_scalar, X, 2, fast=None), "'fast'"),
    (lambda c, X: block_losses(c, f_scalar, X, 2, outputs=np.zeros(4)), "'outputs'"),
    (lambda c, X: block_losses(c, f_scalar, X, 2, outputs=(np.zeros(4), np.zeros(7))), r"'outputs'.*\(10, \.\.\.\)"),
    (lambda c, X: block_losses(c, f_scalar, X, 2, outputs=(np.zeros((4, 2)), np.zeros((10, 3)))), "'outputs'"),
])
def test_searches_check_callables_codes_and_outputs(call, name):
    with pytest.raises(ValueError, match=name):
        call(gcc.BerrutCode(4, 10), np.linspace(-1, 1, 4))


def test_complex_data_are_searched_by_modulus():
    # Berrut decodes complex data linearly: the loss of X + iY is the loss of X plus that of Y
    code = gcc.BerrutCode(4, 12)
    Xr, Xi = np.linspace(-1, 1, 4), np.linspace(0.5, -0.2, 4)
    lin = lambda x: 3.0 * x  # noqa: E731
    losses = block_losses(code, lin, Xr + 1j * Xi, 3, fast=False)
    np.testing.assert_allclose(losses, block_losses(code, lin, Xr, 3, fast=False)
                               + block_losses(code, lin, Xi, 3, fast=False), rtol=1e-10)
    received, loss = worst_case_stragglers(code, lin, Xr + 1j * Xi, 3, "greedy", return_loss=True)
    assert received.size == 9 and np.isfinite(loss) and loss >= losses.max() - 1e-15
