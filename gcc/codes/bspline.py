"""B-spline coded computing (BSCC): Berrut encoder, cubic B-spline interpolation decoder."""
from __future__ import annotations

import numpy as np
from scipy.interpolate import BSpline, make_interp_spline
from scipy.sparse import csc_matrix
from scipy.sparse.linalg import splu

from ..validation import ArrayLike, Points, validate_params
from .base import Code
from .berrut import berrut_matrix

__all__ = ["BSplineCode", "banded_decoder"]

#: up to this many received workers scipy interpolates the |F| unit vectors; beyond, banded_decoder
DENSE_MAX_RECEIVED = 2048


@validate_params({"nodes": Points(low=None, high=None, min_size=4),
                  "alphas": ArrayLike(ndim=1, dtype=np.float64, finite=True)})
def banded_decoder(nodes, alphas):
    """The cubic (not-a-knot) B-spline interpolation operator from ``nodes`` to ``alphas``, in O(n K) memory.

    ``make_interp_spline(nodes, eye(n), k=3)(alphas)`` without the n x n arrays: Z^T,
    ``A^T Z = B^T`` (A the banded collocation matrix, B the basis at the alphas), by sparse LU.

    Parameters
    ----------
    nodes : array_like, shape (n,)
        Strictly increasing finite real nodes, n >= 4.
    alphas : array_like, shape (K,)
        Finite real evaluation points (cubic end pieces beyond the nodes, as scipy).

    Returns
    -------
    ndarray, shape (K, n)

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.interpolate import make_interp_spline
    >>> from gcc.codes.bspline import banded_decoder
    >>> x, a = np.linspace(-1.0, 1.0, 9), np.array([-1.2, 0.1, 0.7])
    >>> np.allclose(banded_decoder(x, a), make_interp_spline(x, np.eye(9), k=3)(a))
    True
    """
    nodes, alphas, k = np.asarray(nodes, dtype=np.float64), np.asarray(alphas, dtype=np.float64), 3
    t = np.r_[(nodes[0],) * 4, nodes[2:-2], (nodes[-1],) * 4]           # scipy's not-a-knot knots
    A = BSpline.design_matrix(nodes, t, k)
    B = BSpline.design_matrix(alphas, t, k, extrapolate=True).toarray()   # (K, nt)
    Z = splu(csc_matrix(A.T), permc_spec="NATURAL").solve(np.asfortranarray(B.T))
    return np.ascontiguousarray(Z.T)


class BSplineCode(Code):
    """Coded computing with a cubic B-spline interpolation decoder (arXiv 2601.10616).

    Parameters
    ----------
    n_inputs, n_workers, alphas, betas, points
        See :class:`gcc.codes.base.Code`.

    Notes
    -----
    Encoder: Berrut's, as :class:`BerrutCode` (the reference allows Lagrange's too), so that
    the comparison with BACC differs only in the decoder: the cubic interpolating B-spline of
    the received outputs (scipy's, not-a-knot: O(h^4) up to the ends), below 4 received points
    the interpolating polynomial.

    References
    ----------
    .. [1] R. Borah, J. Harshan, V. Lalitha, "B-spline based coded computing", arXiv:2601.10616, 2026.
    .. [2] C. de Boor, "A Practical Guide to Splines", Springer, 1978.
    .. [3] J.-P. Berrut, Comput. Math. Appl. 15(1), 1988.

    Examples
    --------
    >>> import numpy as np
    >>> import gcc
    >>> code = gcc.BSplineCode(n_inputs=3, n_workers=8)
    >>> np.round(code.decode(code.encode(np.array([1.0, 2.0, 4.0]))), 3)
    array([1.   , 2.01 , 4.001])
    """

    def _build_encoder(self):
        return berrut_matrix(self._alphas, self._betas)

    def _build_decoder(self, received):
        nodes = self._betas[np.fromiter(received, dtype=np.intp, count=len(received))]
        n = nodes.shape[0]
        if n == 1:
            return np.ones((self._n_inputs, 1))
        k = min(3, n - 1)
        if n > DENSE_MAX_RECEIVED and k == 3:
            return banded_decoder(nodes, self._alphas)
        return make_interp_spline(nodes, np.eye(n), k=k)(self._alphas)
