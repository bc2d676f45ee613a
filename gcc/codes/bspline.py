"""B-spline coded computing (BSCC): Berrut encoder, cubic B-spline interpolation decoder."""
from __future__ import annotations

import numpy as np
from scipy.interpolate import make_interp_spline

from ..validation import check_choice
from .base import Code
from .berrut import berrut_matrix

__all__ = ["BSplineCode"]


class BSplineCode(Code):
    """Coded computing with a cubic B-spline interpolation decoder (arXiv 2601.10616).

    Parameters
    ----------
    n_inputs : int
        K, ``>= 1``.
    n_workers : int
        N, ``>= 1``.
    bc_type : {"not-a-knot", "natural"}
        End conditions of the decoder's cubic interpolant. Default "not-a-knot": O(h^4)
        accurate up to the ends for smooth f (natural end conditions degrade to O(h^2)
        there).
    alphas, betas, points
        See :class:`gcc.codes.base.Code`.

    Notes
    -----
    Encoder: the reference allows a Lagrange or a Berrut basis, u(z) = sum_j X_j Phi_j(z);
    this implementation uses **Berrut's** basis (as :class:`BerrutCode`), which is
    well-conditioned for any K and N and makes the comparison with BACC differ only in the
    decoder. Decoder: cubic interpolating B-spline of the received (beta_v, Y_v), built by
    ``scipy.interpolate.make_interp_spline`` on the |F| unit vectors at once and evaluated
    at the alphas; alphas outside the hull of the received betas use the end cubic pieces
    (scipy's default extrapolation). Fewer than 4 received points: the interpolating
    polynomial of degree |F| - 1 (constant, line, parabola).

    References
    ----------
    .. [1] R. Borah, J. Harshan, V. Lalitha, "B-spline based coded computing",
       arXiv:2601.10616, 2026.
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

    def __init__(self, n_inputs, n_workers, bc_type="not-a-knot", alphas=None, betas=None,
                 points="chebyshev"):
        super().__init__(n_inputs, n_workers, alphas=alphas, betas=betas, points=points)
        self._bc_type = check_choice(bc_type, "bc_type", "BSplineCode", ("not-a-knot", "natural"))

    @property
    def bc_type(self) -> str:
        return self._bc_type

    def _extra_params(self):
        return {"bc_type": self._bc_type}

    def _build_encoder(self):
        return berrut_matrix(self._alphas, self._betas)

    def _build_decoder(self, received):
        nodes = self._betas[np.fromiter(received, dtype=np.intp, count=len(received))]
        n = nodes.shape[0]
        if n == 1:
            return np.ones((self._n_inputs, 1))
        k = min(3, n - 1)
        bc = "natural" if (self._bc_type == "natural" and k == 3) else None
        spl = make_interp_spline(nodes, np.eye(n), k=k, bc_type=bc)
        return spl(self._alphas)
