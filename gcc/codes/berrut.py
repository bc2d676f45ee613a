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
    ``r(z) = sum_j [(-1)^j / (z - t_j)] y_j / sum_j (-1)^j / (z - t_j)``, signs alternating
    along the ascending ``nodes``: no real poles, exact for constants; at a node, its unit vector.

    Parameters
    ----------
    nodes : array_like, shape (n,)
        Strictly increasing finite real nodes, at least 1e-12 of their range apart.
    z : array_like, shape (p,)
        Finite real evaluation points.

    References
    ----------
    .. [1] J.-P. Berrut, "Rational functions for guaranteed ... interpolation", Comput. Math. Appl. 1988.

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
    """:func:`berrut_matrix` of checked float64 nodes and points."""
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
    n_inputs, n_workers, alphas, betas, points
        See :class:`gcc.codes.base.Code` (any N: BACC has no recovery threshold).

    Notes
    -----
    Encoder: :func:`berrut_matrix` of the alphas at the betas, shape (N, K). Decoder: that of
    the received betas (signs alternating along the **received** points) at the alphas.

    References
    ----------
    .. [1] T. Jahani-Nezhad, M. A. Maddah-Ali, "Berrut Approximated Coded Computing", arXiv:2009.08327.
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
