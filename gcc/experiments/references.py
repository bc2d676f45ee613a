"""The constants that anchor the theorems' reference curves, and the noisy-worker schedule.

The logarithm of the rates of [2]_, the constant C of a curve such as ``C ((S + 1) / N)^3`` of [1]_,
``||(f o u_enc)''||^2`` and the decoder's smoothing parameter of the noisy proof (App. B.2 of [1]_,
lambda as in eq. (4)).

References
----------
.. [1] Moradi, Tahmasebi, Maddah-Ali, NeurIPS 2024, arXiv:2406.00300.
.. [2] Moradi, Maddah-Ali, ISIT 2025, arXiv:2502.00645.
"""
from __future__ import annotations

import numpy as np

from gcc.splines import smoothing_spline
from gcc.validation import check_real

from .problems import as_matrix

__all__ = ["LAMBDA_0", "log_base", "anchor_constant", "curvature_energy", "theory_lambda_dec"]

#: the upper end lambda_0 of Theorem 2's range used here
LAMBDA_0 = 1.0


def log_base(x, p: float):
    """``log_{1/p}(x)``, the logarithm the probabilistic rates are written in.

    Parameters
    ----------
    x : array_like
    p : float in (0, 1)
        Straggling probability of each worker.

    Returns
    -------
    ndarray, same shape as `x`
    """
    p = check_real(p, "p", "log_base", minimum=0.0, maximum=1.0, include_min=False, include_max=False,
                   constraint="a float in (0, 1)")
    return np.log(np.asarray(x, dtype=float)) / np.log(1.0 / p)


def anchor_constant(measured, reference) -> float:
    """The constant C that puts ``C * reference`` on or above the measured data (the highest ratio).

    Parameters
    ----------
    measured, reference : array_like, same shape
        Positive values (non-positive or non-finite pairs are ignored).

    Returns
    -------
    float
        NaN when no pair is usable.
    """
    m = np.asarray(measured, dtype=float).ravel()
    r = np.asarray(reference, dtype=float).ravel()
    ok = np.isfinite(m) & np.isfinite(r) & (m > 0) & (r > 0)
    return float(np.max(m[ok] / r[ok])) if ok.any() else float("nan")


def curvature_energy(f, X, code) -> float:
    """``||(f o u_enc)''||^2_{L^2(Omega)}``, the smoothness term of Theorems 1-2.

    Parameters
    ----------
    f, X
        As in :func:`~gcc.experiments.worst_case.straggler_sweep`.
    code : SplineCode
        Its encoder ``u_enc`` is evaluated on 4001 points of [-1, 1] (second differences, trapezoids).

    Returns
    -------
    float
    """
    t = np.linspace(-1.0, 1.0, 4001)
    lam_enc = float(getattr(code, "lam_enc", 0.0))
    U = smoothing_spline(np.asarray(code.alphas), np.asarray(X, dtype=float), lam_enc, t)
    G = as_matrix(f(U))
    h = t[1] - t[0]
    g2 = (G[2:] - 2 * G[1:-1] + G[:-2]) / h ** 2
    # Second differences live on the interior points; the ends take their neighbours' values.
    g2 = np.concatenate([g2[:1], g2, g2[-1:]])
    return float(np.sum(np.trapezoid(g2 ** 2, dx=h, axis=0)))


def theory_lambda_dec(n_workers, n_stragglers, sigma: float, energy: float = 1.0, const: float = 1.0,
                      clip: bool = True):
    """The decoder smoothing parameter for noisy workers (App. B.2 of [1]_), in ``[(N - S)^-4, LAMBDA_0]``.

    Parameters
    ----------
    n_workers, n_stragglers : int or array_like
        N and S.
    sigma : float
        Noise standard deviation of each worker output.
    energy : float
        ``||(f o u_enc)''||^2`` (:func:`curvature_energy`).
    const : float
        The proof's constant (Ragozin's and Utreras's, not numeric): free, recorded in each run.
    clip : bool
        Clip to the theorem's range (False: the raw schedule).

    Returns
    -------
    float or ndarray (the broadcast shape of N and S)

    Notes
    -----
    ``lambda_d* = const (sigma^2 / ((N - S) (S + 1)^4 energy))^(4/5)`` minimises
    ``lambda^{3/4} (S+1)^4 energy + lambda^{-1/2} sigma^2 / (N - S)`` (the proof's ``p~_4(S)``
    taken as ``(S + 1)^4``); its minimum is the O(S^{8/5} N^{-3/5}) of Thm 4.
    """
    N = np.asarray(n_workers, dtype=float)
    S = np.asarray(n_stragglers, dtype=float)
    lam = const * (sigma ** 2 / ((N - S) * (S + 1.0) ** 4 * energy)) ** 0.8
    if clip:
        lam = np.clip(lam, (N - S) ** -4.0, LAMBDA_0)
    return float(lam) if lam.ndim == 0 else lam
