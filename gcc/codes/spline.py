"""GCC / LeTCC: natural cubic smoothing splines for both encoder and decoder.

A received set F is decoded by its cached K x |F| decoder ``D_F = S(betas[F], lam_dec -> alphas)``
(the banded Reinsch smoother, :func:`gcc._reinsch.reinsch_smoother`), except for real outputs with
m < K columns on 5..:data:`_MAX_WORKERS` workers with at most :data:`_MAX_STRAGGLERS` stragglers:
those are fitted directly through the spline on all N worker points (:class:`_FullSpline`), which
keeps a new set's decode as cheap as BACC's (``benchmarks/bench_codes.py --decode-only``).
:meth:`SplineCode.block_estimates` (the worst-case search) decodes every contiguous straggler block
at once: lam_dec = 0 re-solves a window around each gap, lam_dec > 0 a rank-S (Woodbury) update of
the full smoother, otherwise the banded systems are solved in lock step.

References
----------
.. [1] P. J. Green, B. W. Silverman, "Nonparametric Regression and Generalized Linear
   Models", Chapman & Hall, 1994, Sec. 2.1 and 2.3 (roughness matrix, Reinsch algorithm).
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
from .base import Code, block_received_many, parameter

__all__ = ["SplineCode"]

#: half-width (in knots) of the window re-solved around each gap (_blocks_windowed)
_WINDOW = 64
#: the direct fit (_FullSpline: N x N matrices, an S x S solve per set) is used up to these sizes
_MAX_WORKERS = 256
_MAX_STRAGGLERS = 64
#: its error relative to the operator grows like alpha N^2 (alpha = |F| lam_dec): below ~5e-13 up
#: to this bound (measured, N = 30..256, both point sets)
_MAX_ALPHA_N2 = 100.0
#: largest (Jacobi-scaled) condition number of the S x S system accepted (then within ~1e-12)
_MAX_COND = 1e4
#: _FullSplines kept per code (one per received-set size when lam_dec > 0; oldest dropped)
_KEPT_SIZES = 8


class _FullSpline:
    """The spline through all N worker points, which decodes every received set of one size.

    The stragglers' outputs u_E imputed from the decoder's own fit make the spline through all N
    points that fit again: ``Mp_EE u_E = -Mp_EF y_F``, ``Mp = Q (R + alpha Q^T Q)^-1 Q^T``, and the
    estimates are ``P u`` (``D_F = P_F - P_E Mp_EE^-1 Mp_EF``), P the spline through all N points
    at the data points. Per set: an S x S Cholesky solve with m right-hand sides, one (K, N) product.
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
    n_inputs : int
        K, number of data points, ``>= 1``.
    n_workers : int
        N, number of workers, ``>= 1``. ``N < K`` is allowed (the spline still fits), though
        coded computing needs ``N >= K`` to be useful.
    lam_enc : float
        Encoder smoothing parameter ``>= 0`` (eq. (4) convention, 1/K-normalised fit term).
        0: natural-spline interpolation of the data (the encoder of Theorem 4).
    lam_dec : float
        Decoder smoothing parameter ``>= 0`` (eq. (4), 1/|F|-normalised fit term, so that
        scipy's ``lam = |F| * lam_dec``). 0: interpolation, optimal without noise. Any finite
        lam is computed without overflow: beyond ``|F| lam = 1e100`` (likewise ``K lam_enc``)
        the fit is the least-squares line (:data:`gcc._reinsch.ALPHA_MAX`).
    alphas, betas, points
        See :class:`gcc.codes.base.Code`.

    Notes
    -----
    Encoder E = S(alphas, lam_enc -> betas), shape (N, K); decoder
    D_F = S(betas[F], lam_dec -> alphas), shape (K, |F|), where S is
    :func:`gcc.smoother_matrix`: the natural cubic smoothing spline with linear extrapolation,
    so alphas outside the hull of the received betas (end workers straggling) are estimated
    on the spline's tangent line. Any |F| >= 1 decodes (|F| = 1: constant, 2: line).

    Exactness: with lam_enc = lam_dec = 0, E reproduces affine functions of alpha and
    D_F reproduces affine functions of beta, so if X_k = a + b alpha_k and f is affine,
    decode(f(encode(X)), F) = f(X) exactly for every F.

    References
    ----------
    .. [1] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, "Coded Computing for Resilient
       Distributed Computing: A Learning-Theoretic Framework", NeurIPS 2024,
       arXiv:2406.00300.
    .. [2] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, "Learning-Theoretic Foundation for
       General Coded Computing: The Straggler Setting", arXiv:2608.28910.

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
    """Natural cubic interpolation (lambda = 0) for every block, re-solving near the gap.

    The tridiagonal system ``R M = Q^T y`` is diagonally dominant by a factor 2, so a change at
    the gap reaches knots W rows away damped by at least ``2^-W``: each block re-fits the 2W + 2
    received knots around its gap (the full spline's M at the window's ends) and keeps the full
    spline outside it. W = 64: the neglected terms are below 2^-64, under float64 rounding.
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
    """Smoothing spline (a > 0) for every block by a rank-S update of the full fit.

    A block's workers get weight 0 in the fit on all N points; with the full smoother H the
    Woodbury identity gives ``g_s = H y' + H E (I - H_EE)^-1 E^T H y'``, ``y' = y - E y_E``, and the
    estimate ``G g_s`` (G the interpolating spline to the data points): the band ``|i - j| < S`` of
    H (:func:`gcc._reinsch.smoother_band`) and one S x S solve per block. None (the caller solves
    every block) when ``I - H_EE`` is worse conditioned than ``max_cond`` (as a -> 0).
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
    for lo in range(0, n + 1, chunk):
        starts = np.arange(lo, min(n + 1, lo + chunk))
        idx = block_received_many(N, S, starts).T                             # (n, b)
        x, y = betas[idx], Y[idx]
        est = spline_eval(x, *reinsch_fit_many(x, y, a), alphas,
                          _block_intervals(betas, alphas, S, starts))
        out[starts] = est.transpose(1, 0, 2)
    return out

