"""The test problems of the rate experiments: functions, inputs, per-cell seeds, exact noisy loss.

Every rate notebook draws its data and test function from here, so one ``seed`` gives the same
problem in every notebook.
"""
from __future__ import annotations

import numpy as np

from gcc.validation import check_int, invalid

__all__ = ["xsinx", "TanhNetwork", "Polynomial", "scalar_inputs", "child_seed", "as_matrix", "exact_noisy_loss"]


def xsinx(x):
    """The scalar test function of the ISIT paper, ``f(x) = x sin x``, elementwise (same shape as `x`)."""
    x = np.asarray(x, dtype=float)
    return x * np.sin(x)


class TanhNetwork:
    """A small fixed tanh network ``R^d -> R^m``: ``f(x) = W2 tanh(W1 x + b1) + b2``, smooth and Lipschitz.

    Parameters
    ----------
    d, m, hidden : int >= 1
        Input dimension, output dimension, hidden width; calling it maps ``(n, d) -> (n, m)``.
    seed : int
        Seed of the Gaussian weights (``W1 ~ N(0, 1/d)``, ``W2 ~ N(0, 1/hidden)``).
    """

    def __init__(self, d: int = 4, m: int = 3, hidden: int = 16, seed: int = 0):
        d, m, hidden = (check_int(v, name, "TanhNetwork", minimum=1)
                        for v, name in ((d, "d"), (m, "m"), (hidden, "hidden")))
        self.d, self.m, self.hidden, self.seed = d, m, hidden, int(seed)
        rng = np.random.default_rng(seed)
        self.W1 = rng.normal(0.0, 1.0 / np.sqrt(d), size=(hidden, d))
        self.b1 = rng.normal(0.0, 0.5, size=hidden)
        self.W2 = rng.normal(0.0, 1.0 / np.sqrt(hidden), size=(m, hidden))
        self.b2 = rng.normal(0.0, 0.1, size=m)

    def __call__(self, X):
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.d:
            raise invalid("X", "TanhNetwork", f"an array of shape (n, {self.d})", X, f"its shape is {X.shape}")
        return np.tanh(X @ self.W1.T + self.b1) @ self.W2.T + self.b2

    def __repr__(self) -> str:
        return f"TanhNetwork(d={self.d}, m={self.m}, hidden={self.hidden}, seed={self.seed})"


class Polynomial:
    """A fixed scalar polynomial ``f(x) = sum_j c_j x^j`` (App. D's test functions).

    Parameters
    ----------
    degree : int >= 1
    seed : int
        Seed of the coefficients ``c_j ~ N(0, 1)`` (the leading one at least 0.5 in size).
    """

    def __init__(self, degree: int, seed: int = 0):
        self.degree, self.seed = check_int(degree, "degree", "Polynomial", minimum=1), int(seed)
        rng = np.random.default_rng(seed)
        coef = rng.normal(size=self.degree + 1)
        coef[-1] = np.sign(coef[-1]) * max(abs(coef[-1]), 0.5)
        self.coef = coef

    def __call__(self, x):
        return np.polynomial.polynomial.polyval(np.asarray(x, dtype=float), self.coef)

    def __repr__(self) -> str:
        return f"Polynomial(degree={self.degree}, seed={self.seed})"


def scalar_inputs(n_inputs: int, low: float = -3.0, high: float = 3.0, seed: int = 0) -> np.ndarray:
    """K scalar data points drawn once, uniform in ``[low, high]``.

    Returns
    -------
    ndarray, shape (n_inputs,)
        In drawing order (not sorted).
    """
    return np.random.default_rng(seed).uniform(low, high, size=int(n_inputs))


def child_seed(seed: int, *keys: int) -> int:
    """A seed for one cell of a sweep: ``SeedSequence([seed, *keys])``'s first 32-bit word.

    Adding a grid point never changes the numbers of the others.
    """
    return int(np.random.SeedSequence([int(seed), *[int(k) for k in keys]]).generate_state(1)[0])


def as_matrix(a) -> np.ndarray:
    """Outputs ``(n, *out)`` as a float matrix ``(n, m)``, ``m = prod(out)`` (1 for scalars)."""
    a = np.asarray(a, dtype=float)
    return a.reshape(a.shape[0], -1)


def exact_noisy_loss(D: np.ndarray, Y_received: np.ndarray, true: np.ndarray, sigma: float):
    """Loss (eq. 1) of a linear decoder averaged exactly over i.i.d. worker noise of variance ``sigma^2``.

    ``E ||D (Y + eps) - f||^2 / K = ||D Y - f||_F^2 / K + sigma^2 m ||D||_F^2 / K`` (bias^2 + variance).

    Parameters
    ----------
    D : ndarray, shape (K, |F|)
        Decoder matrix of the received set F.
    Y_received : ndarray, shape (|F|, m)
        Noiseless outputs of the received workers.
    true : ndarray, shape (K, m)
        ``f(x_k)``.
    sigma : float
        Noise standard deviation.

    Returns
    -------
    loss, bias2, variance : float
    """
    K, m = true.shape
    bias2 = float(np.sum((D @ Y_received - true) ** 2) / K)
    variance = float(sigma ** 2 * m * np.sum(D ** 2) / K)
    return bias2 + variance, bias2, variance
