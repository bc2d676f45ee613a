"""Decoding a received set through the spline on all N worker points (SplineCode's direct decode).

Fill in the output of each straggling worker (the set E, S of them) with the value there of the
decoder's own spline, the one fitted to the received outputs y_F. The spline through all N worker
points of the completed outputs u is then the decoder's spline again: for interpolation
(lam_dec = 0) because that spline is a natural cubic spline with knots at all N points; for
smoothing (lam_dec > 0, ``alpha = |F| lam_dec``) because a smoother at all N points reproduces the
values imputed from its own fit (the fixed point of imputing missing data). The S imputed values
solve

``Mp_EE u_E = -Mp_EF y_F``,  ``Mp = Q R^-1 Q^T`` (interpolation) or ``Mp = I - H`` (smoothing),

where ``u^T Q R^-1 Q^T u`` is the roughness of the interpolant through all N points (Green &
Silverman 1994, Sec. 2.1) and ``H`` the N x N smoother at alpha (``I - H`` is formed as
``alpha Q (R + alpha Q^T Q)^-1 Q^T``, the two cases in one), and the estimates are ``P u``,
``P`` the spline through all N points evaluated at the data points. ``Mp`` and ``P`` depend on the
code and |F| only; per received set that is one (S, N) gather, an S x S Cholesky solve and one
(K, N) product, far fewer operations than fitting the |F| knots anew. The Jacobi-scaled condition
number of ``Mp_EE`` is checked (LAPACK ``dpocon``); above :data:`MAX_COND` (e.g. adjacent
stragglers near the ends of Chebyshev points at lam_dec = 0) the caller fits the knots instead
(:func:`gcc._reinsch.reinsch_predict`).

A private module (the decode's hot path): its classes and functions trust the validated arguments
of :meth:`gcc.SplineCode.decode`.

References
----------
.. [1] P. J. Green, B. W. Silverman, "Nonparametric Regression and Generalized Linear Models",
   Chapman & Hall, 1994.
"""
from __future__ import annotations

import sys

import numpy as np
from scipy.linalg.lapack import dpocon, dposv, dpotrf, dpotrs

from ..backend import LinearOperator
from .._reinsch import reinsch_smoother, reinsch_solve, spline_eval_weights

__all__ = ["FullSpline", "StragglerSystem", "MAX_COND", "predict_tensor"]

#: largest Jacobi-scaled condition number of the S x S system the decode accepts: the result is
#: then within ~1e-12 (relative) of the operator path; random stragglers stay well below it
MAX_COND = 1e4


class StragglerSystem:
    """The S x S system of one received set: stragglers, ``Mp_E:``, Cholesky factor of ``Mp_EE``.

    Returned by :meth:`FullSpline.decode`; kept by the code, so the set's later decodes skip the
    factorisation (with the same arithmetic, hence the same bits).
    """

    __slots__ = ("received", "E", "ME", "U", "_dev")

    def __init__(self, received, E, ME, U):
        self.received, self.E, self.ME, self.U = np.array(received), E, ME, U
        self._dev = {}

    @property
    def nbytes(self) -> int:
        return self.received.nbytes + self.E.nbytes + self.ME.nbytes + self.U.nbytes

    def device_parts(self, device):
        """Indices ``[F, E]`` and ``Mp_EE^-1`` as tensors on ``device`` (computed once)."""
        parts = self._dev.get(device)
        if parts is None:
            torch = sys.modules["torch"]
            C_inv = dpotrs(self.U, np.eye(self.E.size))[0]
            parts = self._dev[device] = (
                torch.from_numpy(np.concatenate([self.received, self.E])).to(device),
                torch.from_numpy(np.ascontiguousarray(C_inv)).to(device))
        return parts


class FullSpline:
    """The spline through all N worker points that decodes every received set of one size.

    Parameters
    ----------
    betas : ndarray, shape (N,)
        Worker points, N >= 5.
    alphas : ndarray, shape (K,)
        Data points.
    alpha : float
        Green-Silverman parameter of the decoder, ``|F| lam_dec`` (0: interpolation).

    Attributes
    ----------
    Mp : ndarray, shape (N, N)
        ``Q (R + alpha Q^T Q)^-1 Q^T``: the roughness ``Q R^-1 Q^T`` (alpha = 0), else
        ``(I - H) / alpha``; symmetric positive semi-definite.
    P : ndarray, shape (K, N)
        The spline through all N points evaluated at the alphas.
    nbytes : int
        Memory held.

    Examples
    --------
    >>> import numpy as np
    >>> import gcc
    >>> from gcc.codes._full_spline import FullSpline
    >>> code = gcc.SplineCode(n_inputs=4, n_workers=12)
    >>> received = np.array([0, 1, 2, 4, 5, 7, 8, 9, 10, 11])     # workers 3 and 6 straggle
    >>> Y = np.sin(3 * code.betas[received])[:, None]
    >>> est, system = FullSpline(code.betas, code.alphas, 0.0).decode(Y, received, keep=True)
    >>> np.allclose(est, code.decoder_matrix(received) @ Y), system.E.tolist()
    (True, [3, 6])
    """

    __slots__ = ("Mp", "P", "_scale", "_anorm", "_all", "_ops")

    def __init__(self, betas, alphas, alpha):
        # I - H = alpha Q (R + alpha Q^T Q)^-1 Q^T: formed so, not as I - H (which cancels for
        # small alpha), and without the factor alpha, which the imputation does not see.
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
        self._ops = None

    @property
    def nbytes(self) -> int:
        return self.Mp.nbytes + self.P.nbytes

    def _stragglers(self, received, key):
        if key is None:
            keep = np.ones(self.P.shape[1], dtype=bool)
            keep[received] = False
            E = np.flatnonzero(keep)
        else:  # Python's set difference: fewer numpy calls (cheaper with cold caches)
            E = np.fromiter(sorted(self._all.difference(key)), dtype=np.intp,
                            count=len(self._all) - len(key))
        return E, self.Mp[E]

    def _conditioned(self, U, E):
        """Whether the (scaled) condition number of ``Mp_EE = U^T U`` is at most MAX_COND."""
        if self._scale is None:
            return dpocon(U, self._anorm)[0] * MAX_COND >= 1.0
        # D C D = (U D)^T (U D) has a unit diagonal, so its 1-norm is at most S.
        S = float(E.size)
        return dpocon(U * self._scale[E], S)[0] * S * MAX_COND >= 1.0

    def decode(self, Y, received, system=None, key=None, keep=False):
        """Estimates (K, m) from float64 outputs Y (n, m) of ``received``, and its system.

        Parameters
        ----------
        Y : ndarray, shape (n, m)
        received : ndarray of int, shape (n,)
            Ascending.
        system : StragglerSystem, optional
            The one this method returned before for ``received``: reused (same bits).
        key : tuple of int, optional
            ``received`` as a tuple, when the caller has it.
        keep : bool
            Return the system (to keep it); otherwise None.

        Returns
        -------
        est : ndarray, shape (K, m), or None
            None when ``Mp_EE``'s (scaled) condition number exceeds :data:`MAX_COND`.
        system : StragglerSystem or None
        """
        N = self.P.shape[1]
        if received.shape[0] == N:
            return self.P @ Y, None
        u = np.zeros((N, Y.shape[1]))
        u[received] = Y
        if system is None:
            E, ME = self._stragglers(received, key)
            # Mp_EE symmetric: its transpose is the Fortran-ordered copy LAPACK factors in place.
            U, x, info = dposv(ME[:, E].T, ME @ u, overwrite_a=1, overwrite_b=1)
            if info != 0 or not self._conditioned(U, E):
                return None, None
            u[E] = -x
            return self.P @ u, (StragglerSystem(received, E, ME, U) if keep else None)
        u[system.E] = -dpotrs(system.U, system.ME @ u)[0]   # dposv = dpotrf + dpotrs: same bits
        return self.P @ u, system

    def decode_tensor(self, Y, received, system=None, key=None, keep=False):
        """:meth:`decode` for a torch tensor Y (n, m), float64, on any device.

        The host factors ``Mp_EE`` (it does not depend on Y) and sends its inverse with the
        indices, once per received set and device; the products run on Y's device.
        """
        if self._ops is None:
            self._ops = (LinearOperator(self.Mp), LinearOperator(self.P))
        Mp, P = self._ops[0].tensor(Y), self._ops[1].tensor(Y)
        N, n = self.P.shape[1], received.shape[0]
        if n == N:
            return P @ Y, None
        if system is None:
            E, ME = self._stragglers(received, key)
            U, info = dpotrf(ME[:, E].T, clean=0, overwrite_a=1)
            if info != 0 or not self._conditioned(U, E):
                return None, None
            system = StragglerSystem(received, E, ME, U)
        idx, C_inv = system.device_parts(Y.device)
        F_t, E_t = idx[:n], idx[n:]
        u = Y.new_zeros((N, Y.shape[1])).index_copy(0, F_t, Y)
        est = P @ u.index_copy(0, E_t, -(C_inv @ (Mp.index_select(0, E_t) @ u)))
        return est, (system if keep else None)


def predict_tensor(x, Y, alpha, x_eval):
    """:func:`gcc._reinsch.reinsch_predict` with torch operations on Y's device.

    There is no banded solver on a GPU, so the host inverts the (n-2) x (n-2) Reinsch matrix
    and computes the evaluation weights (neither depends on Y) and sends them in one transfer.

    Parameters
    ----------
    x : ndarray, shape (n,)
        Knots (host), n >= 3.
    Y : torch.Tensor, shape (n, m), float64
    alpha : float
    x_eval : ndarray, shape (p,)

    Returns
    -------
    torch.Tensor, shape (p, m), on Y's device

    Examples
    --------
    >>> import numpy as np, torch
    >>> from gcc.codes._full_spline import predict_tensor
    >>> from gcc._reinsch import reinsch_predict
    >>> x, t = np.linspace(0.0, 1.0, 6), np.array([0.1, 0.5, 1.2])
    >>> y = np.cos(np.outer(x, [1.0, 2.0]))
    >>> np.allclose(predict_tensor(x, torch.from_numpy(y), 0.01, t).numpy(), reinsch_predict(x, y, 0.01, t))
    True
    """
    torch = sys.modules["torch"]
    n, m = Y.shape
    r = n - 2
    pack = np.concatenate([1.0 / np.diff(x), reinsch_solve(x, alpha, np.eye(r)).ravel(),
                           spline_eval_weights(x, x_eval).ravel()])
    pk = torch.from_numpy(pack).to(Y.device)
    inv, A_inv, W = pk[: n - 1, None], pk[n - 1: n - 1 + r * r].view(r, r), pk[n - 1 + r * r:].view(-1, 2 * n)
    d = (Y[1:] - Y[:-1]) * inv                                       # slopes
    zero = Y.new_zeros((1, m))
    M = torch.cat((zero, A_inv @ (d[1:] - d[:-1]), zero))             # second derivatives
    g = Y
    if alpha != 0.0:  # fitted values y - alpha Q gamma: Q gamma is the slope change of M
        s = torch.cat((zero, (M[1:] - M[:-1]) * inv, zero))
        g = Y - alpha * (s[1:] - s[:-1])
    return W @ torch.cat((g, M))
