"""LCC: Lagrange coded computing (polynomial encoder, polynomial interpolation decoder)."""
from __future__ import annotations

import math
from numbers import Integral

import numpy as np
from numpy.polynomial import chebyshev as C

from ..splines import KNOTS
from ..validation import ArrayLike, Interval, check_int, invalid, validate_params
from .base import Code, parameter

__all__ = ["LagrangeCode", "lagrange_matrix"]

#: up to this many received workers the least-squares decoder solves with an |F| x |F| identity
DENSE_MAX_RECEIVED = 2048
#: the node-distance sums are formed in row blocks of about this many entries (O(n) memory)
CHUNK_ELEMENTS = 2 ** 18
#: beyond this many received workers (and fewer stragglers) the interpolating decoder corrects
#: the weights of all N workers for the S stragglers, O(|F| S) instead of O(|F|^2)
DIRECT_MAX_RECEIVED = 2048
_POINTS = ArrayLike(ndim=1, dtype=np.float64, finite=True)


@validate_params({"nodes": KNOTS, "z": _POINTS})
def lagrange_matrix(nodes: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Polynomial interpolation operator, shape (len(z), len(nodes)): row r holds l_j(z_r).

    Parameters
    ----------
    nodes : array_like, shape (n,)
        Strictly increasing finite real nodes, at least 1e-12 of their range apart.
    z : array_like, shape (p,)
        Finite real evaluation points.

    Returns
    -------
    ndarray, shape (p, n)
        Rows at a node are exact unit vectors; entries beyond ~1e308 are inf.

    Notes
    -----
    The first ("modified Lagrange") barycentric form
    l_j(z) = prod_k (z - t_k) * w_j / (z - t_j), w_j = 1 / prod_{k != j} (t_j - t_k), products
    accumulated as sums of logarithms and signs: backward stable for every node set [2]_, unlike
    the second form, whose denominator cancels when stragglers leave large gaps.

    References
    ----------
    .. [1] J.-P. Berrut, L. N. Trefethen, "Barycentric Lagrange interpolation", SIAM Review 46(3), 2004.
    .. [2] N. J. Higham, "The numerical stability of barycentric Lagrange ...", IMA J. Numer. Anal. 24, 2004.

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.codes.lagrange import lagrange_matrix
    >>> lagrange_matrix(np.array([-1.0, 0.0, 1.0]), np.array([0.5]))
    array([[-0.125,  0.75 ,  0.375]])
    """
    return _lagrange_weights(np.asarray(nodes, dtype=np.float64), np.asarray(z, dtype=np.float64))


def _log_weights(nodes):
    """``log|w_j| = -sum_{k != j} log|t_j - t_k|`` of distinct nodes, O(n^2) time, O(n) memory."""
    n = nodes.shape[0]
    logw = np.empty(n)
    rows = max(1, CHUNK_ELEMENTS // n)
    for lo in range(0, n, rows):
        hi = min(n, lo + rows)
        dn = nodes[lo:hi, None] - nodes[None, :]
        dn[np.arange(hi - lo), np.arange(lo, hi)] = 1.0
        logw[lo:hi] = -np.log(np.abs(dn)).sum(axis=1)
    return logw


def _closed_form_log_weights(n, points):
    """``log|w_j|`` of the default worker points in O(n) (Berrut & Trefethen 2004, Sec. 5)."""
    if n == 1:
        return np.zeros(1)
    if points == "chebyshev":
        logw = np.full(n, (n - 2) * math.log(2.0) - math.log(n - 1))
        logw[[0, -1]] -= math.log(2.0)
        return logw
    j = np.arange(n)
    lgamma = np.vectorize(math.lgamma, otypes=[float])
    return -lgamma(j + 1.0) - lgamma(n - j + 0.0) - (n - 1) * math.log(2.0 / (n - 1))


def _straggler_log_weights(nodes, logw_all, received):
    """``log|w_j|`` of the received nodes from those of all nodes (times ``prod_s (t_j - t_s)``), O(|F| S)."""
    keep = np.zeros(nodes.shape[0], dtype=bool)
    keep[received] = True
    t, gone = nodes[received], nodes[~keep]
    logw = logw_all[received]            # a copy (fancy indexing)
    rows = max(1, CHUNK_ELEMENTS // max(1, gone.shape[0]))
    for lo in range(0, t.shape[0], rows):
        logw[lo:lo + rows] += np.log(np.abs(t[lo:lo + rows, None] - gone[None, :])).sum(axis=1)
    return logw


def _lagrange_weights(nodes, z, logw=None):
    """:func:`lagrange_matrix` of checked float64 nodes and points (``logw``: their log|w_j| if known)."""
    n = nodes.shape[0]
    if n == 1:
        return np.ones((z.shape[0], 1))
    if logw is None:
        logw = _log_weights(nodes)
    signw = np.where((n - 1 - np.arange(n)) % 2 == 0, 1.0, -1.0)  # ascending nodes
    dz = z[:, None] - nodes[None, :]
    hit = dz == 0.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):   # the codes check overflow
        logdz = np.log(np.abs(dz))
        logl = logdz.sum(axis=1, keepdims=True)
        sgn = np.sign(dz)
        sgnl = np.prod(np.where(hit, 1.0, sgn), axis=1, keepdims=True)
        W = (sgnl * sgn * signw) * np.exp(logl - logdz + logw)
    rows = hit.any(axis=1)
    if rows.any():
        W[rows] = hit[rows].astype(np.float64)
    return W


class LagrangeCode(Code):
    """Lagrange coded computing (LCC).

    Parameters
    ----------
    n_inputs, n_workers, alphas, betas, points
        See :class:`gcc.codes.base.Code`; ``N >= K``.
    degree : int or None
        None: interpolate the received outputs (classic LCC; fewer than K received is an error).
        d >= 0: least-squares polynomial of degree ``min(d, |F| - 1)``, the paper's "adapted LCC"
        below the recovery threshold for d = (K-1) deg f (App. D).

    Notes
    -----
    Encoder: the Lagrange polynomial of (alpha_k, X_k) at the betas, shape (N, K). A polynomial
    f makes f(u_enc(z)) of degree (K-1) deg f: :meth:`recovery_threshold` workers decode it
    exactly. Over the reals LCC is ill-conditioned once (K-1) deg f exceeds about 25.

    References
    ----------
    .. [1] Q. Yu, S. Li, N. Raviv, S. M. M. Kalan, M. Soltanolkotabi, S. Avestimehr, AISTATS 2019.
    .. [2] J.-P. Berrut and L. N. Trefethen, SIAM Review 46(3), 2004.

    Examples
    --------
    >>> import numpy as np
    >>> import gcc
    >>> code = gcc.LagrangeCode(n_inputs=3, n_workers=7)
    >>> code.recovery_threshold(deg_f=2, stragglers=1)
    6
    >>> X, f = np.array([1.0, 2.0, 4.0]), np.square
    >>> received = [0, 1, 3, 4, 6]              # (K-1) deg f + 1 = 5 workers: exact
    >>> np.round(code.decode(f(code.encode(X))[received], received), 10)
    array([ 1.,  4., 16.])
    """

    _needs_n_workers_ge_n_inputs = True
    _operators_may_overflow = True
    degree = parameter("degree")

    def __init__(self, n_inputs, n_workers, degree=None, alphas=None, betas=None,
                 points="chebyshev"):
        super().__init__(n_inputs, n_workers, alphas=alphas, betas=betas, points=points)
        self._degree = None if degree is None else check_int(
            degree, "degree", "LagrangeCode", minimum=0, constraint="None or an int >= 0")
        self._params["degree"] = self._degree

    @validate_params({"deg_f": Interval(Integral, 0, None), "stragglers": Interval(Integral, 0, None)})
    def recovery_threshold(self, deg_f, stragglers=0) -> int:
        """Workers needed for exact recovery of a polynomial f: ``(K-1) * deg_f + stragglers + 1``.

        Parameters
        ----------
        deg_f : int
            Degree of f, ``>= 0``.
        stragglers : int
            S, ``>= 0``.
        """
        return (self._n_inputs - 1) * deg_f + stragglers + 1

    def _received(self, received, owner):
        key = super()._received(received, owner)
        if self._degree is None and len(key) < self._n_inputs:
            K = self._n_inputs
            raise invalid("received", owner, f"at least n_inputs = {K} worker indices (LCC's recovery "
                          f"threshold (K-1) deg f + 1 is {K} already for a linear f; LagrangeCode(degree=d) "
                          "fits a least-squares polynomial below it)", received, f"it has {len(key)}")
        return key

    def _worker_log_weights(self):
        """``log|w_j|`` of all N worker points (closed form for the default points), kept."""
        logw = getattr(self, "_logw_workers", None)
        if logw is None:
            logw = (_closed_form_log_weights(self._n_workers, self._points) if self._params["betas"] is None
                    else _log_weights(self._betas))
            self._logw_workers = logw
        return logw

    def _build_encoder(self):
        return _lagrange_weights(self._alphas, self._betas)

    def _build_decoder(self, received):
        nodes = self._betas[np.fromiter(received, dtype=np.intp, count=len(received))]
        n = nodes.shape[0]
        if self._degree is None or self._degree >= n - 1:
            n_stragglers = self._n_workers - n
            if n <= DIRECT_MAX_RECEIVED or n_stragglers >= n:
                return _lagrange_weights(nodes, self._alphas)
            index = np.fromiter(received, dtype=np.intp, count=n)
            logw = _straggler_log_weights(self._betas, self._worker_log_weights(), index)
            return _lagrange_weights(nodes, self._alphas, logw)
        V = C.chebvander(nodes, self._degree)             # (n, d+1)
        if n <= DENSE_MAX_RECEIVED:
            coef = np.linalg.lstsq(V, np.eye(n), rcond=None)[0]  # (d+1, n): pseudo-inverse
        else:                                              # the same operator without n x n arrays
            coef = np.linalg.pinv(V)
        return C.chebvander(self._alphas, self._degree) @ coef
