"""GCC / LeTCC: natural cubic smoothing splines for both encoder and decoder.

A new received set F is decoded without building its K x |F| operator when the outputs have
fewer columns than K (:meth:`SplineCode._decode_direct`): through the spline on all N worker
points with the stragglers' outputs imputed (:class:`gcc.codes._full_spline.FullSpline`, one
S x S solve; its N x N matrices are kept per |F|), else by one banded solve
with m right-hand sides over the received knots (:func:`gcc._reinsch.reinsch_predict`). numpy
arrays and CPU tensors take the numpy path (a CPU tensor is viewed, not copied); a tensor on an
accelerator is decoded there with torch operations, the host computing only what does not
depend on the outputs. A decoded set keeps its S x S factorisation for its next decodes.

Besides the operators, :class:`SplineCode` decodes every contiguous straggler block at once
(:meth:`SplineCode.block_estimates`, used by the worst-case search), with the batched
Reinsch kernels of :mod:`gcc._reinsch`:

* lam_dec = 0 (interpolation): each block re-solves only a window of the tridiagonal
  system around its gap, with the no-straggler solution outside (exact to rounding);
* lam_dec > 0: a rank-S (Woodbury) update of the full smoother per block;
* otherwise (small N, or an ill-conditioned update): the ``N - S + 1`` banded systems are
  solved in lock step.

References
----------
.. [1] P. J. Green, B. W. Silverman, "Nonparametric Regression and Generalized Linear
   Models", Chapman & Hall, 1994, Sec. 2.3 (Reinsch algorithm).
"""
from __future__ import annotations

import sys
from collections import OrderedDict
from math import prod

import numpy as np

from ..backend import is_torch
from .._reinsch import (green_silverman_alpha, reinsch_fit, reinsch_fit_many, reinsch_predict, reinsch_smoother,
                        smoother_band, spline_eval)
from ..validation import check_lam
from .base import Code, block_received_many
from ._full_spline import FullSpline, predict_tensor

__all__ = ["SplineCode"]

# Half-width (in knots) of the window re-solved around each gap; see _blocks_windowed for
# why 64 suffices.
_WINDOW = 64
# The direct decode through all N points solves an S x S system per received set: worth it
# up to this many stragglers (beyond, one banded solve over the received knots is cheaper).
_MAX_STRAGGLERS = 64
# Its rounding error relative to the operator path grows like alpha N^2 (alpha = |F| lam_dec;
# measured, N = 30..256, both point sets): up to this bound it stays below ~5e-13.
_MAX_ALPHA_N2 = 100.0


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
    .. [3] P. J. Green and B. W. Silverman, "Nonparametric Regression and Generalized Linear
       Models", Chapman & Hall, 1994.
    .. [4] G. Wahba, "Spline Models for Observational Data", SIAM, 1990.

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

    def __init__(self, n_inputs, n_workers, lam_enc=0.0, lam_dec=0.0, alphas=None, betas=None,
                 points="chebyshev"):
        super().__init__(n_inputs, n_workers, alphas=alphas, betas=betas, points=points)
        self._lam_enc = check_lam(lam_enc, "lam_enc", "SplineCode")
        self._lam_dec = check_lam(lam_dec, "lam_dec", "SplineCode")
        self._full = OrderedDict()    # |F| (0 for lam_dec = 0) -> FullSpline

    #: largest N whose N x N :class:`~gcc.codes._full_spline.FullSpline` the direct decode uses
    full_spline_max_workers = 256
    #: memory the kept FullSplines (one per received-set size |F| when lam_dec > 0) may hold
    full_spline_cache_bytes = 16 * 2 ** 20

    @property
    def lam_enc(self) -> float:
        return self._lam_enc

    @property
    def lam_dec(self) -> float:
        return self._lam_dec

    def _extra_params(self):
        return {"lam_enc": self._lam_enc, "lam_dec": self._lam_dec}

    def _build_encoder(self):
        return reinsch_smoother(self._alphas, green_silverman_alpha(self._n_inputs, self._lam_enc), self._betas)

    def _build_decoder(self, received):
        nodes = self._betas[np.fromiter(received, dtype=np.intp, count=len(received))]
        return reinsch_smoother(nodes, green_silverman_alpha(len(received), self._lam_dec), self._alphas)

    def __getstate__(self):
        state = super().__getstate__()
        state["_full"] = OrderedDict()  # may hold device tensors
        return state

    # ------------------------------------------------------------------ direct decode
    _decodes_directly = True

    def _decode_direct(self, Y, key, received):
        """Fit the m = prod(out) output columns of the received set directly (m < K).

        numpy arrays (floating or integer; float64 inside, the input's float dtype out) and
        CPU tensors (viewed as numpy) go through :meth:`_fit`'s numpy path; tensors on another
        device, or that need a gradient, through its torch path. None (the operator) for
        complex outputs, m >= K or fewer than 3 received workers.
        """
        K, n = self._n_inputs, len(key)
        m = prod(Y.shape[1:])
        if not 0 < m < K or n < 3:
            return None
        rec = (received if isinstance(received, np.ndarray) and received.dtype.kind in "iu"
               else np.fromiter(key, dtype=np.intp, count=n))
        if is_torch(Y):
            torch = sys.modules["torch"]
            if Y.is_complex():
                return None
            dtype = Y.dtype if Y.is_floating_point() else torch.float64
            if Y.device.type != "cpu" or Y.requires_grad:
                est = self._fit(Y.reshape(n, m).to(torch.float64), key, rec, tensor=True)
                return est.to(dtype).reshape((K,) + Y.shape[1:])
            # A CPU tensor: numpy on a view of it (no copy, and fewer torch calls).
            Yn = (Y.float() if Y.dtype == torch.bfloat16 else Y).numpy().reshape(n, m)
            est = self._fit(Yn.astype(np.float64, copy=False), key, rec)
            if dtype in (torch.float32, torch.float16):
                est = est.astype(Yn.dtype)
            out = torch.from_numpy(est) if dtype != torch.bfloat16 else torch.from_numpy(est).to(dtype)
            return out if Y.ndim == 2 else out.reshape((K,) + Y.shape[1:])
        if Y.dtype == np.float64 and Y.ndim == 2:  # the common case, without conversions
            return self._fit(Y, key, rec)
        if Y.dtype.kind not in "biuf" or Y.dtype == np.longdouble:
            return None
        est = self._fit(np.asarray(Y, dtype=np.float64).reshape(n, m), key, rec)
        return est.astype(Y.dtype if Y.dtype.kind == "f" else np.float64, copy=False).reshape(
            (K,) + Y.shape[1:])

    def _full_spline(self, n):
        """The :class:`~gcc.codes._full_spline.FullSpline` for received sets of size n, or None.

        For 5 <= N <= :attr:`full_spline_max_workers`, at most _MAX_STRAGGLERS stragglers and
        ``|F| lam_dec N^2 <= _MAX_ALPHA_N2`` (accuracy); lam_dec = 0 shares one for every size.
        Built on first use and kept (least recently used out first, within
        :attr:`full_spline_cache_bytes`); a rebuilt one is identical.
        """
        N = self._n_workers
        if (not 5 <= N <= self.full_spline_max_workers or N - n > _MAX_STRAGGLERS
                or n * self._lam_dec * N * N > _MAX_ALPHA_N2):
            return None
        key = n if self._lam_dec > 0.0 else 0
        full = self._full.get(key)
        if full is not None:
            self._full.move_to_end(key)
            return full
        full = self._full[key] = FullSpline(self._betas, self._alphas, green_silverman_alpha(n, self._lam_dec))
        while len(self._full) > 1 and sum(f.nbytes for f in self._full.values()) > \
                self.full_spline_cache_bytes:
            self._full.popitem(last=False)
        return full

    def _fit(self, Y, key, received, tensor=False):
        """Estimates (K, m) from float64 outputs Y (n, m), numpy, or torch on any device (tensor)."""
        n = received.shape[0]
        full = self._full_spline(n)
        est = None
        if full is not None:
            est, system = (full.decode_tensor if tensor else full.decode)(
                Y, received, self._direct.get(key), key=key, keep=True)
            if system is not None:                     # kept: the set's next decodes reuse it
                self._remember(key, system)
        if est is None:
            est = (predict_tensor if tensor else reinsch_predict)(
                self._betas[received], Y, green_silverman_alpha(n, self._lam_dec), self._alphas)
        return est

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
    """Piece of each alpha among the received points of each block, shape (K, b).

    From its interval among all workers: removing a block only shifts indices (an alpha
    in the gap falls in the piece that spans it, one before the block's start).
    """
    pos = np.searchsorted(betas, alphas, side="right")[:, None] - 1      # (K, 1)
    s = starts[None, :]
    return np.where(pos < s, pos, np.where(pos >= s + S, pos - S, s - 1))


def _blocks_windowed(betas, alphas, Y, S, W=_WINDOW):
    """Natural cubic interpolation (lambda = 0) for every block, re-solving near the gap.

    Removing a block changes only the rows of the tridiagonal system ``R M = Q^T y`` next
    to the gap. Its rows have diagonal ``(h_{j-1} + h_j)/3`` and off-diagonals
    ``h_{j-1}/6, h_j/6``, so the matrix is diagonally dominant by a factor 2 and the
    elimination multipliers are at most 1/2: a change at the gap reaches knots ``W`` rows
    away damped by at least ``2^-W``. Each block therefore re-fits the ``2W + 2`` received
    knots around its gap, with the no-straggler spline's second derivatives at the window's
    ends (0 at the natural ends), and keeps the no-straggler spline on pieces outside its
    window. With ``W = 64`` the neglected terms are below ``2^-64 ~ 5e-20`` relative, under
    float64 rounding; the tests compare with one full decode per block.
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

    Dropping the workers of a block is giving them weight 0 in the full problem
    ``min (y - g)^T W (y - g) + a g^T K g`` over natural splines with knots at all ``N``
    worker points (the block's optimum is such a spline), so
    ``g_s = (A - E E^T)^{-1} (y - E y_E)`` with ``A = I + a K`` and ``E`` the block's columns
    of the identity. With the full smoother ``H = A^{-1}`` (symmetric) the Woodbury
    identity gives

    ``g_s = H y' + H E (I - H_EE)^{-1} E^T H y'``,  ``y' = y - E y_E``,

    and the estimate is ``G g_s`` with ``G`` the natural interpolating spline from all
    worker points to the data points. Needed: ``H y`` and ``G H`` (banded solves), the band
    ``|i - j| < S`` of ``H`` (:func:`gcc._reinsch.smoother_band`) and one ``S x S`` solve per
    block. ``I - H_EE`` degenerates as ``a -> 0`` (``H -> I``); above ``max_cond`` this
    returns None and the caller solves every block instead.
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

