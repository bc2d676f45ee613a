"""SplineCode's direct decode of a received set (no K x |F| operator) against the operator and scipy.

The direct path: the spline through all N worker points with the stragglers' outputs imputed
(gcc.codes.spline._FullSpline, 5 <= N <= 256, S <= 64, well conditioned, real outputs with m < K
columns); everything else is the operator, ``decoder_matrix(F) @ Y``. The two must agree to
~1e-12 relative, and a decode must not depend on which sets were decoded before.
"""
import pickle

import numpy as np
import pytest
from scipy.interpolate import make_interp_spline, make_smoothing_spline

import gcc
from gcc.codes import spline as spline_module
from gcc._reinsch import green_silverman_alpha

LAMS = [0.0, 1e-8, 1e-6, 1e-4]


def _sets(rng, N, count, max_s):
    out = [np.arange(N), np.arange(1, N), np.arange(N - 1), np.r_[0:3, 8:N]]
    for _ in range(count):
        S = int(rng.integers(1, max_s + 1))
        out.append(np.sort(rng.choice(N, N - S, replace=False)))
    return out


def _rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


@pytest.mark.parametrize("lam", LAMS + [1e-2])
@pytest.mark.parametrize("K,N", [(6, 12), (20, 50), (60, 100), (40, 300)])
@pytest.mark.parametrize("points", ["chebyshev", "equispaced"])
def test_direct_decode_equals_operator(lam, K, N, points):
    rng = np.random.default_rng(int(1e6 * lam) + N)
    code = gcc.SplineCode(K, N, lam_enc=lam, lam_dec=lam, points=points)
    ref_code = gcc.SplineCode(K, N, lam_enc=lam, lam_dec=lam, points=points)
    tol = 1e-12 if lam <= 1e-4 else 3e-12   # the operator itself is ~1e-12 accurate at 1e-2 (mpmath)
    for F in _sets(rng, N, 25, min(N // 3, 70)):
        m = int(rng.integers(1, K))
        Y = rng.normal(size=(F.size, m))
        est = code.decode(Y, F)
        ref = ref_code.decoder_matrix(F) @ Y
        assert est.shape == (K, m) and est.dtype == np.float64
        assert _rel(est, ref) < tol
    if N <= spline_module._MAX_WORKERS and lam * N ** 3 <= 100:
        assert code._full and not code._decoders   # the spline on all N points, no operator


@pytest.mark.parametrize("lam", [0.0, 1e-5])
def test_direct_decode_matches_scipy(lam):
    """Independent reference: scipy's interpolating / smoothing spline through the received points."""
    rng = np.random.default_rng(3)
    K, N = 30, 80
    code = gcc.SplineCode(K, N, lam_dec=lam, points="equispaced")
    for F in _sets(rng, N, 10, 20):
        Y = rng.normal(size=(F.size, 3))
        x = code.betas[F]
        inside = (code.alphas >= x[0]) & (code.alphas <= x[-1])
        if lam == 0.0:
            ref = make_interp_spline(x, Y, k=3, bc_type="natural")(code.alphas[inside])
        else:
            ref = np.stack([make_smoothing_spline(x, Y[:, j], lam=F.size * lam)(code.alphas[inside])
                            for j in range(3)], axis=1)
        np.testing.assert_allclose(code.decode(Y, F)[inside], ref, rtol=1e-9, atol=1e-9 * np.abs(ref).max())


def test_ill_conditioned_sets_fall_back_to_the_operator(monkeypatch):
    rng = np.random.default_rng(4)
    code = gcc.SplineCode(20, 60)
    F = np.r_[0, 4:60]                 # adjacent stragglers at the dense Chebyshev end
    Y = rng.normal(size=(F.size, 4))
    full = spline_module._FullSpline(code.betas, code.alphas, 0.0)
    assert _rel(full.decode(Y, tuple(F.tolist())), code.decoder_matrix(F) @ Y) < 1e-12
    monkeypatch.setattr(spline_module, "_MAX_COND", 1.0)      # every system is "ill-conditioned"
    assert full.decode(Y, tuple(F.tolist())) is None
    code.clear_cache()
    np.testing.assert_array_equal(code.decode(Y, F), code.decoder_matrix(F) @ Y)


def test_decode_does_not_depend_on_history():
    """Same bits whether a set is new, recurs, or its operator is cached; and after pickling."""
    rng = np.random.default_rng(5)
    for lam in (0.0, 1e-4):
        code = gcc.SplineCode(10, 40, lam_dec=lam)
        sets = _sets(rng, 40, 6, 12)
        Ys = [rng.normal(size=(F.size, 3)) for F in sets]
        first = [code.decode(Y, F) for Y, F in zip(Ys, sets)]
        for Y, F, e in zip(Ys, sets, first):
            np.testing.assert_array_equal(code.decode(Y, F), e)
        fresh = gcc.SplineCode(10, 40, lam_dec=lam)
        for Y, F, e in zip(Ys[::-1], sets[::-1], first[::-1]):
            fresh.decoder_matrix(F)                         # an operator in the cache changes nothing
            np.testing.assert_array_equal(fresh.decode(Y, F), e)
        code.clear_cache()
        assert code._full                                   # the per-size splines stay
        np.testing.assert_array_equal(code.decode(Ys[0], sets[0]), first[0])
        clone = pickle.loads(pickle.dumps(code))
        assert not clone._full
        np.testing.assert_array_equal(clone.decode(Ys[1], sets[1]), first[1])


def test_when_the_operator_is_used():
    rng = np.random.default_rng(6)
    code = gcc.SplineCode(5, 20, lam_dec=1e-3)
    F = np.sort(rng.choice(20, 16, replace=False))
    Y = rng.normal(size=(16, 5))                            # m = K: the operator
    np.testing.assert_array_equal(code.decode(Y, F), code.decoder_matrix(F) @ Y)
    Yc = rng.normal(size=(16, 2)) + 1j * rng.normal(size=(16, 2))     # complex: the operator
    np.testing.assert_allclose(code.decode(Yc, F), code.decoder_matrix(F) @ Yc, rtol=1e-15)
    small = code.decode(Y[:, :2], list(F))                  # list received, m < K: direct
    assert _rel(small, code.decoder_matrix(F) @ Y[:, :2]) < 1e-12
    two = code.decode(Y[:2, :2], [3, 9])                    # fewer than 3 received: the operator
    np.testing.assert_array_equal(two, code.decoder_matrix([3, 9]) @ Y[:2, :2])


def test_dtypes_and_shapes():
    rng = np.random.default_rng(7)
    code = gcc.SplineCode(12, 30, lam_dec=1e-5)
    F = np.sort(rng.choice(30, 24, replace=False))
    D = code.decoder_matrix(F)
    Y = rng.normal(size=(24, 2, 3))
    est = code.decode(Y, F)
    assert est.shape == (12, 2, 3)
    assert _rel(est, np.einsum("kf,fab->kab", D, Y)) < 1e-12
    e32 = code.decode(Y.astype(np.float32), F)
    assert e32.dtype == np.float32
    np.testing.assert_allclose(e32, est, rtol=1e-5, atol=1e-5)
    ints = rng.integers(-5, 5, size=(24, 4))
    ei = code.decode(ints, F)
    assert ei.dtype == np.float64 and _rel(ei, D @ ints) < 1e-12
    mask = np.zeros(30, bool)
    mask[F] = True
    np.testing.assert_array_equal(code.decode(Y, mask), est)


def test_torch_tensors():
    """A CPU tensor is fitted as its numpy view (same bits); bfloat16 and gradients take the operator."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    for lam in (0.0, 1e-4):
        code = gcc.SplineCode(16, 40, lam_dec=lam)
        for F in _sets(rng, 40, 5, 15):
            Y = rng.normal(size=(F.size, 3))
            ref = code.decoder_matrix(F) @ Y
            t = code.decode(torch.from_numpy(Y), F)
            assert isinstance(t, torch.Tensor) and t.dtype == torch.float64
            np.testing.assert_array_equal(t.numpy(), code.decode(Y, F))
            assert _rel(t.numpy(), ref) < 1e-12
            t32 = code.decode(torch.from_numpy(Y).float(), F)
            assert t32.dtype == torch.float32 and _rel(t32.double().numpy(), ref) < 1e-6
            ti = code.decode(torch.from_numpy(np.round(4 * Y).astype(np.int64)), F)
            assert ti.dtype == torch.float64 and _rel(ti.numpy(), code.decoder_matrix(F) @ np.round(4 * Y)) < 1e-12
            bf = code.decode(torch.from_numpy(Y).to(torch.bfloat16), F)
            assert bf.dtype == torch.bfloat16
            np.testing.assert_allclose(bf.double().numpy(), ref, atol=0.05 * np.abs(ref).max())
        F = np.arange(2, 38)                                # the gradient through a decode is D^T
        Yg = torch.from_numpy(rng.normal(size=(F.size, 2))).requires_grad_()
        code.decode(Yg, F).sum().backward()
        D = code.decoder_matrix(F)
        np.testing.assert_allclose(Yg.grad.numpy(), np.repeat(D.sum(axis=0)[:, None], 2, axis=1), atol=1e-10)


def test_full_splines_kept_per_size_are_bounded():
    code = gcc.SplineCode(8, 60, lam_dec=1e-4)
    rng = np.random.default_rng(9)
    for S in range(1, spline_module._KEPT_SIZES + 3):
        F = np.sort(rng.choice(60, 60 - S, replace=False))
        code.decode(rng.normal(size=(F.size, 2)), F)
    assert len(code._full) == spline_module._KEPT_SIZES
    assert list(code._full) == [60 - S for S in range(3, spline_module._KEPT_SIZES + 3)]
    lam0 = gcc.SplineCode(8, 60)                            # lam_dec = 0: one for every size
    for S in (1, 5, 9):
        lam0.decode(rng.normal(size=(60 - S, 2)), np.arange(S, 60))
    assert list(lam0._full) == [0]
    full = lam0._full[0]
    np.testing.assert_allclose(full.P, lam0.decoder_matrix(None), rtol=0, atol=1e-13)
    assert green_silverman_alpha(60, 0.0) == 0.0
