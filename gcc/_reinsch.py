"""The unchecked Reinsch kernels of the natural cubic smoothing spline.

The fit minimises ``sum (y_i - u(x_i))^2 + alpha int u''^2`` (Green & Silverman 1994, Sec. 2.3;
``alpha = n lam`` in the paper's eq. (4) convention) over natural cubic splines with knots at the
x_i, in O(n). The callers pass float64 knots, strictly increasing and at least :data:`KNOT_GAP` of
their range apart, ``0 <= alpha <= ALPHA_MAX`` and finite data.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import sparse
from scipy.linalg import cholesky_banded, solve_banded
from scipy.linalg.lapack import dpbsv, dptsv

__all__ = ["ALPHA_MAX", "KNOT_GAP", "green_silverman_alpha", "unit_scale", "reinsch_smoother",
           "reinsch_fit", "reinsch_fit_many", "spline_eval", "reinsch_solve", "smoother_band"]

#: largest ``alpha = n lam`` computed with: a larger alpha moves the fit (then the least-squares
#: line) by at most 1/(1 + alpha d), d ~ 1/(n r^3) the smallest nonzero eigenvalue of the roughness
ALPHA_MAX = 1e100
#: consecutive knots closer than this fraction of their range are near-coincident
KNOT_GAP = 1e-12
#: knot ranges beyond [2^-SCALE_BITS, 2^SCALE_BITS] are rescaled by a power of two (exact)
SCALE_BITS = 60


def green_silverman_alpha(n, lam, scale_exp=0):
    """``alpha = n lam`` for knots rescaled by ``2**-scale_exp``, at most :data:`ALPHA_MAX`, without overflow.

    Examples
    --------
    >>> from gcc._reinsch import green_silverman_alpha
    >>> green_silverman_alpha(8, 1e-3), green_silverman_alpha(8, 1e306), green_silverman_alpha(8, 1e-3, 1)
    (0.008, 1e+100, 0.001)
    """
    if lam == 0.0:
        return 0.0
    if scale_exp == 0:
        alpha = n * lam
        if alpha <= ALPHA_MAX:        # the common case: n lam itself
            return alpha
    if math.log2(lam) + math.log2(n) - 3 * scale_exp >= math.log2(ALPHA_MAX):
        return ALPHA_MAX
    alpha = n * lam
    return alpha if scale_exp == 0 else math.ldexp(alpha, -3 * scale_exp)


def unit_scale(x):
    """Exponent e such that the knots ``x * 2**-e`` have a range within 2**+-SCALE_BITS (0 if they do).

    The smoother's weights do not depend on the scale (``int u''^2`` scales by ``2**-3e``).

    Examples
    --------
    >>> import numpy as np
    >>> from gcc._reinsch import unit_scale
    >>> unit_scale(np.array([0.0, 1.0])), unit_scale(np.array([0.0, 1e-200]))
    (0, -664)
    """
    if x.shape[0] < 2:
        return 0
    r = float(x[-1] - x[0])
    e = math.frexp(r)[1]
    return 0 if -SCALE_BITS <= e <= SCALE_BITS else e


# Reinsch algorithm, Q (n, n-2) and R (n-2, n-2) as in Green & Silverman. The helpers take
# spacings h (n-1, *batch), trailing axes indexing independent knot sets, and y (n, *batch, m).
def _qt_apply(h, y):
    """Q^T y (second divided differences): y (n, *batch, m) -> (n-2, *batch, m)."""
    inv = (1.0 / h)[..., None]
    return inv[:-1] * y[:-2] - (inv[:-1] + inv[1:]) * y[1:-1] + inv[1:] * y[2:]


def _q_apply(h, gamma):
    """Q gamma: gamma (n-2, *batch, m) -> (n, *batch, m)."""
    inv = (1.0 / h)[..., None]
    out = np.zeros((gamma.shape[0] + 2,) + gamma.shape[1:])
    out[:-2] += inv[:-1] * gamma
    out[1:-1] -= (inv[:-1] + inv[1:]) * gamma
    out[2:] += inv[1:] * gamma
    return out


def _reinsch_bands(h, alpha):
    """Bands of R + alpha Q^T Q: diagonal (n-2, ...), super-diagonals (n-3, ...), (n-4, ...) or None."""
    diag = (h[:-1] + h[1:]) / 3.0
    off1 = h[1:-1] / 6.0
    if alpha == 0.0:
        return diag, off1, None
    inv = 1.0 / h
    qa, qb, qc = inv[:-1], -(inv[:-1] + inv[1:]), inv[1:]   # Q[j, j], Q[j+1, j], Q[j+2, j]
    return (diag + alpha * (qa * qa + qb * qb + qc * qc),
            off1 + alpha * (qb[:-1] * qa[1:] + qc[:-1] * qb[1:]),
            alpha * (qc[:-2] * qa[2:]))


def _upper_band(h, alpha):
    """R + alpha Q^T Q (alpha > 0) of one knot set in LAPACK's upper band storage (3, n-2)."""
    diag, off1, off2 = _reinsch_bands(h, alpha)
    ab = np.zeros((3, diag.shape[0]))
    ab[2], ab[1, 1:], ab[0, 2:] = diag, off1, off2
    return ab


def _solve_reinsch(h, alpha, rhs):
    """Solve (R + alpha Q^T Q) gamma = rhs (n-2, m) for one knot set (LAPACK)."""
    if h.shape[0] == 2:  # one interior knot: a scalar equation (LAPACK rejects the empty band)
        inv = 1.0 / h
        q = np.array([inv[0], -(inv[0] + inv[1]), inv[1]])
        return rhs / ((h[0] + h[1]) / 3.0 + alpha * float(q @ q))
    if alpha == 0.0:
        diag, off1, _ = _reinsch_bands(h, 0.0)
        _, _, gamma, info = dptsv(diag, off1, rhs, overwrite_b=1)
    else:
        _, gamma, info = dpbsv(_upper_band(h, alpha), rhs, lower=0, overwrite_b=1)
        if info > 0:    # not SPD to rounding when alpha / h^2 dwarfs R: LU with pivoting (rhs untouched)
            diag, off1, off2 = _reinsch_bands(h, alpha)
            ab = np.zeros((5, diag.shape[0]))
            ab[0, 2:], ab[1, 1:], ab[2], ab[3, :-1], ab[4, :-2] = off2, off1, diag, off1, off2
            return solve_banded((2, 2), ab, rhs)
    if info != 0:  # pragma: no cover - LAPACK rejected an argument
        raise np.linalg.LinAlgError(f"banded solve failed (info={info})")
    return gamma


def _solve_many(diag, off1, off2, rhs):
    """Solve b SPD systems (bands diag, off1, off2 or None; rhs (r, b, m)) by LDL^T in lock step."""
    r = diag.shape[0]
    D, L1, L2 = np.empty_like(diag), np.zeros_like(diag), np.zeros_like(diag)
    z = np.array(rhs, dtype=np.float64)
    D[0] = diag[0]
    for i in range(1, r):
        if off2 is not None and i >= 2:
            L2[i] = off2[i - 2] / D[i - 2]
            L1[i] = (off1[i - 1] - L2[i] * L1[i - 1] * D[i - 2]) / D[i - 1]
            D[i] = diag[i] - L1[i] * L1[i] * D[i - 1] - L2[i] * L2[i] * D[i - 2]
            z[i] = z[i] - L1[i][:, None] * z[i - 1] - L2[i][:, None] * z[i - 2]
        else:
            L1[i] = off1[i - 1] / D[i - 1]
            D[i] = diag[i] - L1[i] * off1[i - 1]
            z[i] -= L1[i][:, None] * z[i - 1]
    z /= D[:, :, None]
    for i in range(r - 2, -1, -1):
        if off2 is not None and i + 2 < r:
            z[i] -= L1[i + 1][:, None] * z[i + 1] + L2[i + 2][:, None] * z[i + 2]
        else:
            z[i] -= L1[i + 1][:, None] * z[i + 1]
    return z


def _piece_weights(x0, x1, t, first, last):
    """Weights of (g0, g1, M0, M1) in the natural cubic spline at t on the piece [x0, x1].

    Inside: ``A g0 + B g1 + ((A^3-A) M0 + (B^3-B) M1) h^2/6``, A = (x1-t)/h, B = 1-A; beyond
    ``first``/``last`` the tangent line, slopes (g1-g0)/h -+ h M_inner/6 (left / right).
    """
    hi = x1 - x0
    A = (x1 - t) / hi
    B = 1.0 - A
    w = (A, B, (A * A * A - A) * hi * hi / 6.0, (B * B * B - B) * hi * hi / 6.0)
    left, right = t < first, t > last
    if left.any():  # rare: only then pay for the tangent-line branches
        tl = t - x0
        w = [np.where(left, v, u) for v, u in zip((1.0 - tl / hi, tl / hi, 0.0, -tl * hi / 6.0), w)]
    if right.any():
        tr = t - x1
        w = [np.where(right, v, u) for v, u in zip((-tr / hi, 1.0 + tr / hi, tr * hi / 6.0, 0.0), w)]
    return w


def reinsch_fit(x, y, alpha):
    """Values g and second derivatives M (n, m) of the smoothing spline of knots x (n >= 2), data y (n, m).

    ``g = y - alpha Q gamma``, ``M = [0, gamma, 0]``, ``(R + alpha Q^T Q) gamma = Q^T y``.

    Examples
    --------
    >>> import numpy as np
    >>> from gcc._reinsch import reinsch_fit
    >>> x = np.array([0.0, 1.0, 2.0, 3.0])
    >>> g, M = reinsch_fit(x, (x ** 2)[:, None], 0.0)   # interpolation: g = y
    >>> M[:, 0]
    array([0. , 2.4, 2.4, 0. ])
    """
    M = np.zeros(y.shape)
    if x.shape[0] < 3:
        return y, M
    h = np.diff(x)
    gamma = _solve_reinsch(h, alpha, _qt_apply(h, y))
    M[1:-1] = gamma
    return (y - alpha * _q_apply(h, gamma) if alpha != 0.0 else y), M


def reinsch_fit_many(x, y, alpha, ends=None):
    """:func:`reinsch_fit` of b knot sets x (n, b), n >= 3, and data y (n, b, m) at once: g, M (n, b, m).

    ``ends``: second derivatives (b, m) at the end knots instead of 0 (a window of a spline, alpha = 0).

    Examples
    --------
    >>> import numpy as np
    >>> from gcc._reinsch import reinsch_fit, reinsch_fit_many
    >>> x = np.array([[0.0, 0.0], [1.0, 0.5], [2.0, 1.5], [3.0, 3.0], [4.0, 3.5]])
    >>> g, M = reinsch_fit_many(x, np.sin(x)[:, :, None], 0.1)   # two knot sets at once
    >>> np.allclose(M[:, 1], reinsch_fit(x[:, 1], np.sin(x[:, 1:]), 0.1)[1])
    True
    """
    h = np.diff(x, axis=0)
    rhs = _qt_apply(h, y)
    M = np.zeros(y.shape)
    if ends is not None:
        M[0], M[-1] = ends
        rhs[0] -= (h[0] / 6.0)[:, None] * M[0]
        rhs[-1] -= (h[-1] / 6.0)[:, None] * M[-1]
    M[1:-1] = _solve_many(*_reinsch_bands(h, alpha), rhs)
    return (y - alpha * _q_apply(h, M[1:-1]) if alpha != 0.0 else y), M


def spline_eval(x, g, M, x_eval, interval=None):
    """Natural cubic splines of knots x (n,) or (n, b), values and second derivatives g, M at x_eval (p,).

    ``interval`` (p,) or (p, b): index of the last knot <= each x_eval. Returns (p, m) or (p, b, m).

    Examples
    --------
    >>> import numpy as np
    >>> from gcc._reinsch import reinsch_fit, spline_eval
    >>> x = np.array([0.0, 1.0, 2.0, 3.0])
    >>> g, M = reinsch_fit(x, (2 * x + 1)[:, None], 0.0)
    >>> spline_eval(x, g, M, np.array([-1.0, 1.5, 4.0]))[:, 0]
    array([-1.,  4.,  9.])
    """
    if interval is None:
        interval = (np.searchsorted(x, x_eval, side="right") - 1 if x.ndim == 1 else
                    np.stack([(x <= v).sum(axis=0) - 1 for v in x_eval]))  # p is small
    idx = np.clip(interval, 0, x.shape[0] - 2)
    at, t = ((idx,), x_eval) if x.ndim == 1 else ((idx, np.arange(x.shape[1])), x_eval[:, None])
    nxt = (idx + 1,) + at[1:]
    c = _piece_weights(x[at], x[nxt], t, x[0], x[-1])
    return (c[0][..., None] * g[at] + c[1][..., None] * g[nxt]) + (c[2][..., None] * M[at]
                                                                  + c[3][..., None] * M[nxt])


def reinsch_solve(x, alpha, rhs):
    """``gamma`` (n-2, m) solving the Reinsch system ``(R + alpha Q^T Q) gamma = rhs`` for knots x (n >= 3).

    Examples
    --------
    >>> import numpy as np
    >>> from gcc._reinsch import reinsch_solve
    >>> reinsch_solve(np.array([0.0, 1.0, 2.0, 3.0]), 0.0, np.eye(2)) * 15   # R^-1, R tridiagonal
    array([[24., -6.],
           [-6., 24.]])
    """
    return _solve_reinsch(np.diff(x), alpha, np.array(rhs, dtype=np.float64, order="F"))


def reinsch_smoother(x, alpha, x_eval):
    """Smoother matrix (p, n) of the natural smoothing spline of knots x (n >= 1) at x_eval (p,).

    Notes
    -----
    With W_g, W_M the sparse evaluation weights of the values g and second derivatives M
    and A = R + alpha Q^T Q, ``S = W_g + (W_M' - alpha W_g Q) A^-1 Q^T``, so
    ``S^T = W_g^T + Q A^-1 (W_M'^T - alpha Q^T W_g^T)``: one banded solve with p (not n)
    right-hand sides, and banded products around it.

    Examples
    --------
    >>> import numpy as np
    >>> from gcc._reinsch import reinsch_smoother
    >>> x = np.array([-1.0, 0.0, 1.0])
    >>> reinsch_smoother(x, 0.0, np.array([0.0, 2.0]))
    array([[ 0.  ,  1.  ,  0.  ],
           [ 0.25, -1.5 ,  2.25]])
    """
    n, p = x.shape[0], x_eval.shape[0]
    if n == 1:
        return np.ones((p, 1))
    h = np.diff(x)
    idx = np.clip(np.searchsorted(x, x_eval, side="right") - 1, 0, n - 2)
    cg0, cg1, cm0, cm1 = _piece_weights(x[idx], x[idx + 1], x_eval, x[0], x[-1])
    cols = np.arange(p)
    WgT = np.zeros((n, p))
    WgT[idx, cols] = cg0
    WgT[idx + 1, cols] = cg1
    if n == 2:
        return WgT.T.copy()
    WmT = np.zeros((n, p))
    WmT[idx, cols] = cm0
    WmT[idx + 1, cols] = cm1
    rhs = WmT[1:-1]                               # second derivatives vanish at the ends
    if alpha != 0.0:
        rhs = rhs - alpha * _qt_apply(h, WgT)
    Z = _solve_reinsch(h, alpha, np.asfortranarray(rhs))   # (n-2, p)
    inv = 1.0 / h                                 # S^T = W_g^T + Q Z, Q's bands in place
    WgT[:-2] += inv[:-1, None] * Z
    WgT[1:-1] -= (inv[:-1] + inv[1:])[:, None] * Z
    WgT[2:] += inv[1:, None] * Z
    return np.ascontiguousarray(WgT.T)


def smoother_band(x, alpha, width):
    """Band ``H[i, i + t]``, ``t = 0 .. width-1``, of the smoother at the knots, alpha > 0.

    ``H = (I + alpha Q R^-1 Q^T)^-1 = I - alpha Q Z Q^T``, ``Z = (R + alpha Q^T Q)^-1``: a
    band of H needs only a band of Z, which selected inversion of the banded Cholesky factor
    gives in O(n width) (Takahashi et al. 1973; Hutchinson & de Hoog 1985).

    Returns (n, width) for knots x (n >= 5); entries past the last column are 0.

    Examples
    --------
    >>> import numpy as np
    >>> from gcc._reinsch import reinsch_smoother, smoother_band
    >>> x = np.linspace(0.0, 1.0, 8)
    >>> H, band = reinsch_smoother(x, 1e-3, x), smoother_band(x, 1e-3, 2)
    >>> np.allclose(band[:, 0], np.diag(H)) and np.allclose(band[:-1, 1], np.diag(H, 1))
    True
    """
    n, r, h = x.shape[0], x.shape[0] - 2, np.diff(x)
    U = cholesky_banded(_upper_band(h, alpha), lower=False)  # R + alpha Q^T Q = U^T U
    u = U[2]
    # LDL^T factors, scalars on Python floats (fastest for the row recurrence below):
    # l1[i] = L[i+1, i], l2[i] = L[i+2, i], D[i] = u[i]^2.
    l1 = (np.r_[U[1, 1:], 0.0] / u).tolist()
    l2 = (np.r_[U[0, 2:], 0.0, 0.0] / u).tolist()
    inv_d = (1.0 / (u * u)).tolist()
    w = width + 2
    Zb = np.zeros((r + 3, w + 1))                 # Zb[i, t] = Z[i, i + t], backwards over i
    for i in range(r - 1, -1, -1):
        a1, a2 = l1[i], l2[i]
        v = np.empty(w + 1)
        # Z[i, i+t] = -(L[i+1,i] Z[i+1, i+t] + L[i+2,i] Z[i+2, i+t]) for t >= 1
        second = np.empty(w)
        second[0] = Zb[i + 1, 1]                  # Z[i+2, i+1]
        second[1:] = Zb[i + 2, : w - 1]           # Z[i+2, i+t], t >= 2
        v[1:] = -(a1 * Zb[i + 1, :w] + a2 * second)
        v[0] = inv_d[i] - (a1 * v[1] + a2 * v[2])
        Zb[i] = v

    # H = I - alpha Q Z Q^T on the band; Z outside |k - l| <= w does not reach it.
    inv = 1.0 / h
    Q = sparse.diags([inv[:-1], -(inv[:-1] + inv[1:]), inv[1:]], [0, -1, -2], shape=(n, r))
    offsets = range(1, min(w, r - 1) + 1)
    Z = sparse.diags([Zb[:r, 0]] + [Zb[: r - t, t] for t in offsets] * 2,
                     [0] + list(offsets) + [-t for t in offsets], shape=(r, r))
    P = Q @ Z @ Q.T
    band = np.zeros((n, width))
    for t in range(min(width, n)):
        band[: n - t, t] = (1.0 if t == 0 else 0.0) - alpha * P.diagonal(t)
    return band
