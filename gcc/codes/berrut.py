"""BACC: Berrut's first-form rational interpolant for encoder and decoder."""
from __future__ import annotations

import numpy as np

from ..splines import KNOTS
from ..validation import ArrayLike, validate_params
from .base import Code

__all__ = ["BerrutCode", "berrut_matrix"]

_POINTS = ArrayLike(ndim=1, dtype=np.float64, finite=True)


@validate_params({"nodes": KNOTS, "z": _POINTS})
def berrut_matrix(nodes: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Berrut's rational interpolation operator, shape (len(z), len(nodes)).

    Row r holds the weights of the node values in
    ``r(z) = sum_j [(-1)^j / (z - t_j)] y_j / sum_j (-1)^j / (z - t_j)``, with the signs
    alternating along the (ascending) ``nodes``. Where ``z`` equals a node exactly, the row
    is that node's unit vector (the interpolant's limit).

    Parameters
    ----------
    nodes : array_like, shape (n,)
        Strictly increasing finite real interpolation nodes, no two within 1e-12 of their range
        (:class:`gcc.splines.Knots`).
    z : array_like, shape (p,)
        Finite real evaluation points.

    Notes
    -----
    The first-form barycentric interpolant has no real poles for any distinct nodes, and
    is exact for constants; a single node gives the constant.

    References
    ----------
    .. [1] J.-P. Berrut, "Rational functions for guaranteed and experimentally
       well-conditioned global interpolation", Comput. Math. Appl. 15(1), 1988.

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.codes.berrut import berrut_matrix
    >>> berrut_matrix(np.array([0.0, 1.0]), np.array([0.5, 1.0]))
    array([[0.5, 0.5],
           [0. , 1. ]])
    """
    return _berrut_weights(np.asarray(nodes, dtype=np.float64), np.asarray(z, dtype=np.float64))


def _berrut_weights(nodes, z):
    """:func:`berrut_matrix` of checked float64 nodes and points (the codes' call)."""
    n = nodes.shape[0]
    signs = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    diff = z[:, None] - nodes[None, :]
    hit = diff == 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        W = signs / diff
    rows = hit.any(axis=1)
    if rows.any():
        W[rows] = hit[rows].astype(np.float64)
    W /= W.sum(axis=1, keepdims=True)
    return W


class BerrutCode(Code):
    """Berrut approximate coded computing (BACC).

    Parameters
    ----------
    n_inputs : int
        K, ``>= 1``.
    n_workers : int
        N, ``>= 1`` (any N works; BACC is approximate and needs no recovery threshold).
    alphas, betas, points
        See :class:`gcc.codes.base.Code` (default: Chebyshev first kind / second kind).

    Notes
    -----
    Encoder: Berrut's interpolant through (alpha_k, X_k), signs (-1)^k along the alphas,
    evaluated at the betas, shape (N, K). Decoder: the received workers are sorted,
    z_1 < ... < z_|F|, and Berrut's interpolant with signs (-1)^j alternating along the
    **received** points is evaluated at the alphas, shape (K, |F|). When an evaluation point
    coincides with a node (e.g. K = 2, N = 5 with Chebyshev points), that node's value is
    returned exactly.

    References
    ----------
    .. [1] T. Jahani-Nezhad and M. A. Maddah-Ali, "Berrut Approximated Coded Computing:
       Straggler Resistance Beyond Polynomial Computing", IEEE TPAMI 45(1), 2022,
       arXiv:2009.08327.
    .. [2] J.-P. Berrut, Comput. Math. Appl. 15(1), 1988.

    Examples
    --------
    >>> import numpy as np
    >>> import gcc
    >>> code = gcc.BerrutCode(n_inputs=3, n_workers=6)
    >>> np.round(code.decode(code.encode(np.array([1.0, 2.0, 4.0]))), 4)  # approximate
    array([1.0602, 2.1203, 3.9699])
    """

    def _build_encoder(self):
        return _berrut_weights(self._alphas, self._betas)

    def _build_decoder(self, received):
        nodes = self._betas[np.fromiter(received, dtype=np.intp, count=len(received))]
        return _berrut_weights(nodes, self._alphas)

    def _block_estimates(self, Y, S):
        # Signs alternate along the received points, so skipping a block of S workers shifts
        # the parity after it: numerators and denominators of every block are one product
        # each with a (blocks, N) sign matrix.
        betas, alphas = self._betas, self._alphas
        N, K, m = betas.size, alphas.size, Y.shape[1]
        diff = alphas[None, :] - betas[:, None]                 # (N, K)
        if np.any(diff == 0.0):
            return None  # a data point on a worker point: the decoder copies that output
        C = 1.0 / diff
        CY = (C[:, :, None] * Y[:, None, :]).reshape(N, -1)
        j = np.arange(N)[None, :]
        out = np.empty((N - S + 1, K, m))
        chunk = max(1, self.block_chunk_elements // N)
        for lo in range(0, N - S + 1, chunk):
            s = np.arange(lo, min(N - S + 1, lo + chunk))[:, None]
            parity = np.where(j < s, j, j - S)
            sign = np.where((j >= s) & (j < s + S), 0.0, 1.0 - 2.0 * (parity % 2))
            out[lo: lo + len(s)] = (sign @ CY).reshape(len(s), K, m) / (sign @ C)[:, :, None]
        return out
