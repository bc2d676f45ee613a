"""LCC: Lagrange coded computing (polynomial encoder, polynomial interpolation decoder)."""
from __future__ import annotations

import numpy as np
from numpy.polynomial import chebyshev as C

from ..validation import check_int, raise_invalid
from .base import Code

__all__ = ["LagrangeCode", "lagrange_matrix"]


def _barycentric_weights(nodes: np.ndarray) -> np.ndarray:
    """Second-form barycentric weights 1/prod_{k!=j}(t_j - t_k), up to a common factor.

    Computed as sign * exp(-sum log|t_j - t_k|) with the largest scaled to 1, so that they
    neither overflow nor underflow for hundreds of nodes (only ratios matter).
    """
    n = nodes.shape[0]
    if n == 1:
        return np.ones(1)
    diff = nodes[:, None] - nodes[None, :]
    np.fill_diagonal(diff, 1.0)
    logw = -np.log(np.abs(diff)).sum(axis=1)
    signs = np.where((n - 1 - np.arange(n)) % 2 == 0, 1.0, -1.0)  # ascending nodes
    return signs * np.exp(logw - logw.max())


def lagrange_matrix(nodes: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Polynomial interpolation operator, shape (len(z), len(nodes)).

    Row r holds the Lagrange basis polynomials l_j(z_r) of the (ascending, distinct)
    ``nodes``, computed with the second (true) barycentric formula; rows at a node are
    exact unit vectors.

    References
    ----------
    .. [1] J.-P. Berrut and L. N. Trefethen, "Barycentric Lagrange interpolation",
       SIAM Review 46(3), 2004.
    """
    w = _barycentric_weights(nodes)
    diff = z[:, None] - nodes[None, :]
    hit = diff == 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        W = w / diff
    rows = hit.any(axis=1)
    if rows.any():
        W[rows] = hit[rows].astype(np.float64)
    W /= W.sum(axis=1, keepdims=True)
    return W


class LagrangeCode(Code):
    """Lagrange coded computing (LCC).

    Parameters
    ----------
    n_inputs : int
        K, ``>= 1``.
    n_workers : int
        N, ``>= n_inputs`` (fewer workers than inputs cannot even recover a linear f).
    degree : int or None
        Degree of the polynomial fitted by the decoder. None: interpolate the received
        outputs with the polynomial of degree ``len(received) - 1`` (classic LCC). An int
        d >= 0: least-squares polynomial of degree ``min(d, len(received) - 1)`` -- set
        d = (K-1) deg f to decode exactly at and above the recovery threshold and to get
        the paper's "adapted LCC" below it (App. D: fit a lower-degree polynomial to the
        available outputs).
    alphas, betas, points
        See :class:`gcc.codes.base.Code`.

    Notes
    -----
    Encoder: the Lagrange interpolation polynomial of (alpha_k, X_k), degree K-1,
    evaluated at the betas (barycentric form, shape (N, K)). A polynomial f of degree
    deg f makes f(u_enc(z)) a polynomial of degree (K-1) deg f, so any
    :meth:`recovery_threshold` = (K-1) deg f + S + 1 workers decode it exactly when S
    stragglers are tolerated. The least-squares fit uses a Chebyshev basis (well
    conditioned on [-1, 1]). Over the reals the scheme is ill-conditioned once
    (K-1) deg f exceeds about 25 with equispaced points.

    References
    ----------
    .. [1] Q. Yu, S. Li, N. Raviv, S. M. M. Kalan, M. Soltanolkotabi, S. Avestimehr,
       "Lagrange Coded Computing: Optimal Design for Resiliency, Security and Privacy",
       AISTATS 2019.
    .. [2] J.-P. Berrut and L. N. Trefethen, SIAM Review 46(3), 2004.
    """

    _needs_n_workers_ge_n_inputs = True

    def __init__(self, n_inputs, n_workers, degree=None, alphas=None, betas=None,
                 points="chebyshev"):
        super().__init__(n_inputs, n_workers, alphas=alphas, betas=betas, points=points)
        self._degree = None if degree is None else check_int(
            degree, "degree", "LagrangeCode", minimum=0, constraint="None or an int >= 0")

    @property
    def degree(self):
        return self._degree

    def _extra_params(self):
        return {"degree": self._degree}

    def recovery_threshold(self, deg_f, n_stragglers=0) -> int:
        """Workers needed for exact recovery: ``(K-1) * deg_f + n_stragglers + 1``.

        Parameters
        ----------
        deg_f : int
            Degree of the polynomial f, ``>= 0``.
        n_stragglers : int
            S, ``>= 0``.
        """
        owner = "LagrangeCode.recovery_threshold"
        deg_f = check_int(deg_f, "deg_f", owner, minimum=0)
        s = check_int(n_stragglers, "n_stragglers", owner, minimum=0)
        return (self._n_inputs - 1) * deg_f + s + 1

    def _build_encoder(self):
        return lagrange_matrix(self._alphas, self._betas)

    def _build_decoder(self, received):
        nodes = self._betas[np.fromiter(received, dtype=np.intp, count=len(received))]
        n = nodes.shape[0]
        if self._degree is None or self._degree >= n - 1:
            return lagrange_matrix(nodes, self._alphas)
        V = C.chebvander(nodes, self._degree)             # (n, d+1)
        coef = np.linalg.lstsq(V, np.eye(n), rcond=None)[0]  # (d+1, n): pseudo-inverse
        return C.chebvander(self._alphas, self._degree) @ coef
