"""BACC: Berrut's first-form rational interpolant for encoder and decoder."""
from __future__ import annotations

import numpy as np

from .base import Code

__all__ = ["BerrutCode", "berrut_matrix"]


def berrut_matrix(nodes: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Berrut's rational interpolation operator, shape (len(z), len(nodes)).

    Row r holds the weights of the node values in
    ``r(z) = sum_j [(-1)^j / (z - t_j)] y_j / sum_j (-1)^j / (z - t_j)``, with the signs
    alternating along the (ascending) ``nodes``. Where ``z`` equals a node exactly, the row
    is that node's unit vector (the interpolant's limit).

    Parameters
    ----------
    nodes : ndarray, shape (n,)
        Strictly increasing interpolation nodes.
    z : ndarray, shape (p,)
        Evaluation points.

    Notes
    -----
    The first-form barycentric interpolant has no real poles for any distinct nodes, and
    is exact for constants; a single node gives the constant.

    References
    ----------
    .. [1] J.-P. Berrut, "Rational functions for guaranteed and experimentally
       well-conditioned global interpolation", Comput. Math. Appl. 15(1), 1988.
    """
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
    """

    def _build_encoder(self):
        return berrut_matrix(self._alphas, self._betas)

    def _build_decoder(self, received):
        nodes = self._betas[np.fromiter(received, dtype=np.intp, count=len(received))]
        return berrut_matrix(nodes, self._alphas)
