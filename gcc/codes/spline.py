"""GCC / LeTCC: natural cubic smoothing splines for both encoder and decoder.

Real outputs with fewer columns than K are decoded directly through the spline on all N worker
points (:class:`_FullSpline`), which keeps a new set's decode as cheap as BACC's; all contiguous
straggler blocks are decoded at once for the worst-case search (:meth:`SplineCode.block_estimates`).
"""
from __future__ import annotations

import sys
from math import prod

import numpy as np
from scipy.linalg.lapack import dpocon, dposv

from ..backend import is_torch
from .._reinsch import (green_silverman_alpha, reinsch_fit, reinsch_fit_many, reinsch_smoother,
                        reinsch_solve, smoother_band, spline_eval)
from ..validation import LAM, validate_params
from .base import Code, parameter

__all__ = ["SplineCode"]

_WINDOW = 64            # half-width (knots) of the window re-solved around each gap (lam_dec = 0)
_MAX_WORKERS = 256      # the direct fit (_FullSpline) is used up to N workers ...
_MAX_STRAGGLERS = 64    # ... and S stragglers
_MAX_ALPHA_N2 = 100.0   # ... and |F| lam_dec N^2 (its error relative to the operator is then < 5e-13)
_MAX_COND = 1e4         # largest (Jacobi-scaled) condition number of its S x S system
_KEPT_SIZES = 8         # _FullSplines kept per code (one per received-set size when lam_dec > 0)


class _FullSpline:
    """The spline through all N worker points, which decodes every received set of one size.

    Imputing the stragglers' outputs u_E by ``Mp_EE u_E = -Mp_EF y_F``, ``Mp = Q (R + alpha Q^T Q)^-1 Q^T``,
    gives ``D_F y_F = P u`` (P the smoother of all N points): an S x S solve per set.
    """

    __slots__ = ("Mp", "P", "_scale", "_anorm", "_all")

    def __init__(self, betas, alphas, alpha):
        # Formed so, not as I - H (which cancels for small alpha), and without the factor alpha.
        N = betas.shape[0]
        inv = 1.0 / np.diff(betas)
        Qt = np.zeros((N - 2, N))                          # second divided differences
        r = np.arange(N - 2)
        Qt[r, r], Qt[r, r + 1], Qt[r, r + 2] = inv[:-1], -(inv[:-1] + inv[1:]), inv[1:]
        Mp = Qt.T @ reinsch_solve(betas, alpha, Qt)
        self.Mp = (Mp + Mp.T) / 2.0                        # symmetric to rounding
        self.P = reinsch_smoother(betas, alpha, alphas)
        # The condition check: on Mp_EE itself when its diagonal is nearly constant (the 1-norm
        # of every Mp_EE is at most the largest column sum of |Mp|), else Jacobi-scaled.
        diag = np.diagonal(self.Mp)
        self._scale = None if diag.max() <= 4.0 * diag.min() else 1.0 / np.sqrt(diag)
        self._anorm = float(np.abs(self.Mp).sum(axis=0).max())
        self._all = frozenset(range(N))

    def decode(self, Y, key):
        """Estimates (K, m) from float64 Y (|F|, m) of the set ``key``; None if Mp_EE is ill-conditioned."""
        N = self.P.shape[1]
        if len(key) == N:
            return self.P @ Y
        F = np.fromiter(key, dtype=np.intp, count=len(key))
        E = np.fromiter(sorted(self._all.difference(key)), dtype=np.intp, count=N - len(key))
        u = np.zeros((N, Y.shape[1]))
        u[F] = Y
        ME = self.Mp[E]
        # Mp_EE symmetric: its transpose is the Fortran-ordered copy LAPACK factors in place.
        U, x, info = dposv(ME[:, E].T, ME @ u, overwrite_a=1, overwrite_b=1)
        if info != 0:
            return None
        if self._scale is None:
            ok = dpocon(U, self._anorm)[0] * _MAX_COND >= 1.0
        else:    # D C D = (U D)^T (U D) has a unit diagonal, so its 1-norm is at most S
            ok = dpocon(U * self._scale[E], float(E.size))[0] * E.size * _MAX_COND >= 1.0
        if not ok:
            return None
        u[E] = -x
        return self.P @ u


class SplineCode(Code):
    """General coded computing with smoothing-spline encoder and decoder (GCC / LeTCC).

    Parameters
    ----------
    n_inputs, n_workers, alphas, betas, points
        See :class:`gcc.codes.base.Code` (N < K is allowed, though not useful).
    lam_enc : float
        Encoder smoothing parameter ``>= 0`` (eq. (4)); 0 interpolates (Theorem 4's encoder).
    lam_dec : float
        Decoder smoothing parameter ``>= 0`` (eq. (4): scipy's ``lam = |F| * lam_dec``).

    Notes
    -----
    Encoder E = S(alphas, lam_enc -> betas), shape (N, K); decoder
    D_F = S(betas[F], lam_dec -> alphas), shape (K, |F|), with S :func:`gcc.smoother_matrix`
    (linear beyond the end knots). Any |F| >= 1 decodes. With lam_enc = lam_dec = 0 both
    reproduce affine functions, so affine data and an affine f are decoded exactly.

    References
    ----------
    .. [1] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, NeurIPS 2024, arXiv:2406.00300.
    .. [2] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, arXiv:2608.28910 (the straggler setting).

    Examples
    --------
    >>> import numpy as np
    >>> import gcc
    >>> code = gcc.SplineCode(n_inputs=4, n_workers=10)
    >>> X = 1.0 + 2.0 * code.alphas             # data on a line: decoded exactly (Notes)
    >>> f = lambda x: 3.0 * x - 1.0
    >>> received = [0, 1, 2, 5, 6, 9]           # workers 3, 4, 7 and 8 straggle
    >>> np.allclose(code.decode(f(code.encode(X))[received], received), f(X))
    True
    """

    lam_enc = parameter("lam_enc")
    lam_dec = parameter("lam_dec")

    @validate_params({"lam_enc": LAM, "lam_dec": LAM})
    def __init__(self, n_inputs, n_workers, lam_enc=0.0, lam_dec=0.0, alphas=None, betas=None,
                 points="chebyshev"):
        super().__init__(n_inputs, n_workers, alphas=alphas, betas=betas, points=points)
        self._lam_enc, self._lam_dec = float(lam_enc), float(lam_dec)
        self._params.update(lam_enc=self._lam_enc, lam_dec=self._lam_dec)
        self._full = {}    # |F| (0 for lam_dec = 0) -> _FullSpline

    def _build_encoder(self):
        return reinsch_smoother(self._alphas, green_silverman_alpha(self._n_inputs, self._lam_enc), self._betas)

    def __getstate__(self):
        state = super().__getstate__()
        state["_full"] = {}    # rebuilt on use: keeps a pickled code (shipped to Dask workers) small
        return state

    def _build_decoder(self, received):
        nodes = self._betas[np.fromiter(received, dtype=np.intp, count=len(received))]
        return reinsch_smoother(nodes, green_silverman_alpha(len(received), self._lam_dec), self._alphas)

    def _decode_direct(self, Y, key):
        """Real outputs with m < K columns fitted through :class:`_FullSpline`, or None (the operator)."""
        if is_torch(Y):    # a CPU tensor is fitted as its numpy view (3-4x faster than the operator)
            torch = sys.modules["torch"]
            if Y.device.type != "cpu" or Y.requires_grad or Y.dtype == torch.bfloat16:
                return None
            est = self._decode_direct(Y.numpy(), key)
            return None if est is None else torch.from_numpy(est)
        K, n, m = self._n_inputs, len(key), prod(Y.shape[1:])
        if Y.dtype.kind not in "biuf" or Y.dtype == np.longdouble or not 0 < m < K:
            return None
        full = self._full_spline(n)
        if full is None or (Y.dtype == np.float64 and Y.ndim == 2):     # the common case: no copies
            return None if full is None else full.decode(Y, key)
        est = full.decode(np.asarray(Y, dtype=np.float64).reshape(n, m), key)
        if est is None:
            return None
        return est.astype(Y.dtype if Y.dtype.kind == "f" else np.float64, copy=False).reshape((K,) + Y.shape[1:])

    def _full_spline(self, n):
        """The :class:`_FullSpline` for sets of size n (one for all sizes at lam_dec = 0), or None."""
        N = self._n_workers
        if (not 5 <= N <= _MAX_WORKERS or n < 3 or N - n > _MAX_STRAGGLERS
                or n * self._lam_dec * N * N > _MAX_ALPHA_N2):
            return None
        key = n if self._lam_dec > 0.0 else 0
        full = self._full.get(key)
        if full is None:
            if len(self._full) >= _KEPT_SIZES:
                del self._full[next(iter(self._full))]
            full = self._full[key] = _FullSpline(self._betas, self._alphas, green_silverman_alpha(n, self._lam_dec))
        return full

    def _block_estimates(self, Y, S):
        """All blocks at once (see the module docstring); None below 3 received workers."""
        lam, n = self._lam_dec, self._n_workers - S
        if n < 3:
            return None
        if lam == 0.0 and n - 2 > 2 * _WINDOW + 2:
            return _blocks_windowed(self._betas, self._alphas, Y, S)
        if lam > 0.0 and S > 0:
            est = _blocks_woodbury(self._betas, self._alphas, Y, S, green_silverman_alpha(n, lam))
            if est is not None:
                return est
        return _blocks_lockstep(self._betas, self._alphas, Y, S, green_silverman_alpha(n, lam),
                                self.block_chunk_elements)


def _block_intervals(betas, alphas, S, starts):
    """Piece of each alpha among the received points of each block, shape (K, b) (indices shift)."""
    pos = np.searchsorted(betas, alphas, side="right")[:, None] - 1      # (K, 1)
    s = starts[None, :]
    return np.where(pos < s, pos, np.where(pos >= s + S, pos - S, s - 1))


def _blocks_windowed(betas, alphas, Y, S, W=_WINDOW):
    """Interpolation (lambda = 0) of every block, re-fitting 2W + 2 knots around the gap.

    ``R M = Q^T y`` is diagonally dominant by a factor 2: a change at the gap is damped by 2^-W
    W knots away, below float64 rounding for W = 64.
    """
    N = betas.size
    n = N - S
    s = np.arange(n + 1)
    M_full = reinsch_fit(betas, Y, 0.0)[1]                               # (N, m)
    lo = np.clip(s - W - 1, 0, n - 2 * W - 2)                            # first window row
    rows = lo[None, :] + np.arange(2 * W + 2)[:, None]                   # (2W+2, B)
    workers = np.where(rows < s, rows, rows + S)
    x, y = betas[workers], Y[workers]
    ends = [np.where(((r == 0) | (r == n - 1))[:, None], 0.0, M_full[w])
            for r, w in ((rows[0], workers[0]), (rows[-1], workers[-1]))]
    M = reinsch_fit_many(x, y, 0.0, ends=ends)[1]
    q = np.clip(_block_intervals(betas, alphas, S, s), 0, n - 2)         # (K, B)
    inside = (q >= lo) & (q <= lo + 2 * W)
    est = np.where(inside[..., None], spline_eval(x, y, M, alphas, q - lo),
                   spline_eval(betas, Y, M_full, alphas)[:, None, :])
    return est.transpose(1, 0, 2)


def _blocks_woodbury(betas, alphas, Y, S, a, max_cond=1e6):
    """Smoothing (a > 0) of every block by a rank-S (Woodbury) update of the full smoother H.

    Weight 0 on the block E: ``g_s = H y' + H E (I - H_EE)^-1 E^T H y'``, ``y' = y - E y_E``; None
    when ``I - H_EE`` is worse conditioned than ``max_cond``.
    """
    N = betas.size
    if N < 5:
        return None
    G = reinsch_smoother(betas, 0.0, alphas)                             # (K, N)
    GH = reinsch_fit(betas, G.T, a)[0].T                                 # (K, N), H symmetric
    Hy = reinsch_fit(betas, Y, a)[0]                                     # (N, m)
    try:
        band = smoother_band(betas, a, S)                                # H[i, i+t]
    except np.linalg.LinAlgError:     # not positive definite to rounding: solve every block
        return None
    idx = np.arange(N - S + 1)[:, None] + np.arange(S)[None, :]          # (B, S) stragglers
    rows, cols = idx[:, :, None], idx[:, None, :]
    HEE = band[np.minimum(rows, cols), np.abs(rows - cols)]              # (B, S, S)
    C = np.eye(S)[None] - HEE
    if not np.all(np.isfinite(C)) or np.linalg.cond(C).max() > max_cond:
        return None
    yE = Y[idx]                                                          # (B, S, m)
    sol = np.linalg.solve(C, Hy[idx] - HEE @ yE)                         # (B, S, m)
    GHE = GH[:, idx].transpose(1, 0, 2)                                  # (B, K, S)
    return (G @ Hy)[None] + GHE @ (sol - yE)


def _blocks_lockstep(betas, alphas, Y, S, a, chunk_elements):
    """Every block's own smoothing spline (parameter ``a``), the fits in lock step."""
    N = betas.size
    n = N - S
    out = np.empty((n + 1, alphas.size, Y.shape[1]))
    chunk = max(1, chunk_elements // (n * max(Y.shape[1], 1)))
    j = np.arange(n)[:, None]
    for lo in range(0, n + 1, chunk):
        starts = np.arange(lo, min(n + 1, lo + chunk))
        idx = j + np.where(j >= starts, S, 0)                                 # (n, b): block_received
        x, y = betas[idx], Y[idx]
        est = spline_eval(x, *reinsch_fit_many(x, y, a), alphas,
                          _block_intervals(betas, alphas, S, starts))
        out[starts] = est.transpose(1, 0, 2)
    return out

