"""Linear-regression gradient descent with partial recovery (the authors' synthetic experiment).

The gradient is ``g = (W theta - X^T y) / n_train``, ``W = X^T X`` split row-wise into K blocks;
only the recovered coordinate blocks of theta are updated (no rescaling, no memory).
"""
from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from ..validation import (SEED_OR_GENERATOR, ArrayLike, InstanceOf, Interval, invalid, validate,
                          validate_params)

__all__ = ["RegressionProblem", "synthetic_regression", "gradient_descent"]

_COUNT = Interval(Integral, 1, None)
_MATRIX = ArrayLike(ndim=2, dtype=float, finite=True, description="a real array of shape (n_train, d)")
#: the masks of :func:`gradient_descent`
MASKS = ArrayLike(ndim=3, dtype=bool, description="a boolean array of shape (n_sequences, iterations, n_blocks)")


@dataclass(frozen=True, eq=False)
class RegressionProblem:
    """Training and test data of a noiseless linear model.

    Attributes
    ----------
    X_train : ndarray, shape (n_train, d)
    y_train : ndarray, shape (n_train,)
    X_test : ndarray, shape (n_test, d)
    y_test : ndarray, shape (n_test,)
    theta_star : ndarray, shape (d,)
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    theta_star: np.ndarray

    def __post_init__(self):
        # Real finite arrays of matching shapes (d features, n_train and n_test samples).
        n, d = validate(self.X_train, _MATRIX, "X_train", "RegressionProblem").shape
        m = validate(self.X_test, ArrayLike(shape=(None, d), dtype=float, finite=True),
                     "X_test", "RegressionProblem").shape[0]
        for name, shape in (("X_train", (n, d)), ("X_test", (m, d)), ("y_train", (n,)), ("y_test", (m,)),
                            ("theta_star", (d,))):
            value = validate(getattr(self, name), ArrayLike(shape=shape, dtype=float, finite=True), name,
                             "RegressionProblem")
            object.__setattr__(self, name, value)


@validate_params({"n_train": _COUNT, "n_test": _COUNT, "dim": _COUNT, "seed": SEED_OR_GENERATOR})
def synthetic_regression(n_train: int = 2000, n_test: int = 400, dim: int = 1000, seed=0) -> RegressionProblem:
    """The authors' generator: ``theta* ~ U[0, 1]^d``, ``x = N(1.5 theta*/d, I) + N(-1.5 theta*/d, I)``.

    The sum of the two Gaussians is ``N(0, 2 I)``; it is built as the sum, as in the authors' MATLAB
    code, so that the random stream is the same kind. ``y = X theta*`` without noise.

    Parameters
    ----------
    n_train, n_test : int
        Samples of the training and the test set.
    dim : int
        d, the number of features.
    seed : int or numpy.random.Generator

    Returns
    -------
    RegressionProblem

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.cpgc.regression import synthetic_regression
    >>> p = synthetic_regression(n_train=100, n_test=10, dim=5, seed=0)
    >>> p.X_train.shape, p.X_test.shape, bool(np.allclose(p.y_train, p.X_train @ p.theta_star))
    ((100, 5), (10, 5), True)
    """
    d = dim
    rng = np.random.default_rng(seed)
    theta = rng.uniform(0.0, 1.0, d)
    shift = 1.5 * theta / d

    def draw(n):
        return (shift + rng.standard_normal((n, d))) + (-shift + rng.standard_normal((n, d)))

    X_train, X_test = draw(n_train), draw(n_test)
    return RegressionProblem(X_train, X_train @ theta, X_test, X_test @ theta, theta)


@validate_params({"problem": InstanceOf(RegressionProblem, "a RegressionProblem (synthetic_regression(...))"),
                  "masks": MASKS, "eta": Interval(Real, 0, None, closed="neither")})
def gradient_descent(problem: RegressionProblem, masks: np.ndarray, eta: float = 0.1) -> np.ndarray:
    """Run gradient descent with partial recovery for several recovery sequences at once, from theta = 0.1.

    Parameters
    ----------
    problem : RegressionProblem
    masks : ndarray of bool, shape (n_sequences, iterations, n_blocks)
        ``masks[s, t, k]``: block k of ``W theta`` was recovered at iteration t of sequence s
        (booleans or 0/1; ``n_blocks <= d``).
    eta : float > 0
        Step size (too large a step diverges: the errors grow to inf or NaN, as they should).

    Returns
    -------
    ndarray, shape (n_sequences, iterations + 1)
        Test error ``sum (y_test - X_test theta)^2 / n_test`` before the first and after every update.

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.cpgc.regression import gradient_descent, synthetic_regression
    >>> p = synthetic_regression(n_train=200, n_test=50, dim=8, seed=1)
    >>> masks = np.ones((2, 30, 4), dtype=bool)
    >>> masks[1, :, 0] = False                    # sequence 1 never recovers block 0
    >>> err = gradient_descent(p, masks, eta=0.1)
    >>> err.shape, bool(err[0, -1] < err[1, -1] < err[1, 0])
    ((2, 31), True)
    """
    S, iters, K = masks.shape
    X, y = problem.X_train, problem.y_train
    n, d = X.shape
    if K > d:
        raise invalid("masks", "gradient_descent", f"a boolean array of shape (n_sequences, iterations, "
                      f"n_blocks) with n_blocks <= d = {d}", masks, f"it has shape {masks.shape}")
    W = X.T @ X
    b = X.T @ y
    # the block of each coordinate: numpy.array_split's K blocks (the first d mod K one row longer)
    coord_block = np.concatenate([np.full(len(rows), k) for k, rows in enumerate(np.array_split(np.arange(d), K))])
    theta = np.full((d, S), 0.1)
    errors = np.empty((S, iters + 1))

    def test_error(th):
        res = problem.y_test[:, None] - problem.X_test @ th
        return (res ** 2).sum(axis=0) / problem.X_test.shape[0]

    errors[:, 0] = test_error(theta)
    for t in range(iters):
        grad = (W @ theta - b[:, None]) / n
        theta -= eta * grad * masks[:, t, coord_block].T
        errors[:, t + 1] = test_error(theta)
    return errors
