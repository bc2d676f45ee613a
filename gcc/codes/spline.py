"""GCC / LeTCC: natural cubic smoothing splines for both encoder and decoder."""
from __future__ import annotations

import numpy as np

from ..splines import _smoother
from ..validation import check_lam
from .base import Code

__all__ = ["SplineCode"]


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
        scipy's ``lam = |F| * lam_dec``). 0: interpolation, optimal without noise.
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
    """

    def __init__(self, n_inputs, n_workers, lam_enc=0.0, lam_dec=0.0, alphas=None, betas=None,
                 points="chebyshev"):
        super().__init__(n_inputs, n_workers, alphas=alphas, betas=betas, points=points)
        self._lam_enc = check_lam(lam_enc, "lam_enc", "SplineCode")
        self._lam_dec = check_lam(lam_dec, "lam_dec", "SplineCode")

    @property
    def lam_enc(self) -> float:
        return self._lam_enc

    @property
    def lam_dec(self) -> float:
        return self._lam_dec

    def _extra_params(self):
        return {"lam_enc": self._lam_enc, "lam_dec": self._lam_dec}

    def _build_encoder(self):
        return _smoother(self._alphas, self._n_inputs * self._lam_enc, self._betas)

    def _build_decoder(self, received):
        nodes = self._betas[np.fromiter(received, dtype=np.intp, count=len(received))]
        return _smoother(nodes, len(received) * self._lam_dec, self._alphas)
