"""Linear-regression gradient descent with partial recovery (the authors' synthetic experiment).

Per iteration the distributed work is ``W theta`` with ``W = X^T X`` split row-wise into K blocks; the
gradient is ``g = (W theta - X^T y) / n_train`` and the update ``theta <- theta - eta g``. With
tolerance q the master stops once ``ceil(K (1 - q))`` blocks of ``W theta`` are recoverable; only the
recovered coordinate blocks of theta are updated (the others get zero gradient: no rescaling, no
memory). Which blocks are recovered, and when, comes from :func:`gcc.cpgc.simulate`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._checks import check_int, check_positive, check_tolerance, invalid
from .codes import canonical_scheme

__all__ = ["RegressionProblem", "synthetic_regression", "block_slices", "gradient_descent",
           "convergence_experiment"]


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


def synthetic_regression(n_train: int = 2000, n_test: int = 400, dim: int = 1000, seed=0) -> RegressionProblem:
    """The authors' generator: ``theta* ~ U[0, 1]^d``, ``x = N(1.5 theta*/d, I) + N(-1.5 theta*/d, I)``.

    The sum of the two Gaussians is ``N(0, 2 I)``; it is built as the sum, as in the authors' MATLAB
    code, so that the random stream is the same kind. ``y = X theta*`` without noise.
    """
    owner = "synthetic_regression"
    n_train = check_int(n_train, "n_train", owner, minimum=1)
    n_test = check_int(n_test, "n_test", owner, minimum=1)
    d = check_int(dim, "dim", owner, minimum=1)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    theta = rng.uniform(0.0, 1.0, d)
    shift = 1.5 * theta / d

    def draw(n):
        return (shift + rng.standard_normal((n, d))) + (-shift + rng.standard_normal((n, d)))

    X_train, X_test = draw(n_train), draw(n_test)
    return RegressionProblem(X_train, X_train @ theta, X_test, X_test @ theta, theta)


def block_slices(dim: int, n_blocks: int) -> list[slice]:
    """Row blocks of W (and coordinate blocks of theta): ``numpy.array_split`` sizes, in order."""
    sizes = [len(a) for a in np.array_split(np.arange(dim), n_blocks)]
    edges = np.concatenate([[0], np.cumsum(sizes)])
    return [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]


def gradient_descent(problem: RegressionProblem, masks: np.ndarray, eta: float = 0.1,
                     theta0: float = 0.1) -> np.ndarray:
    """Run gradient descent with partial recovery for several recovery sequences at once.

    Parameters
    ----------
    problem : RegressionProblem
    masks : ndarray of bool, shape (n_sequences, iterations, n_blocks)
        ``masks[s, t, k]``: block k of ``W theta`` was recovered at iteration t of sequence s.
    eta : float
        Step size.
    theta0 : float
        Initial value of every coordinate.

    Returns
    -------
    ndarray, shape (n_sequences, iterations + 1)
        Test error ``sum (y_test - X_test theta)^2 / n_test`` before the first and after every update.

    Notes
    -----
    All sequences share ``W = X^T X`` and advance together as the columns of one (d, n_sequences)
    matrix, so each iteration is a single matrix product.
    """
    masks = np.asarray(masks, dtype=bool)
    if masks.ndim != 3:
        raise invalid("masks", "gradient_descent", "a boolean array of shape (n_sequences, iterations, n_blocks)",
                      masks.shape)
    eta = check_positive(eta, "eta", "gradient_descent")
    S, iters, K = masks.shape
    X, y = problem.X_train, problem.y_train
    n, d = X.shape
    W = X.T @ X
    b = X.T @ y
    slices = block_slices(d, K)
    coord_block = np.concatenate([np.full(sl.stop - sl.start, k) for k, sl in enumerate(slices)])
    theta = np.full((d, S), float(theta0))
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


def convergence_experiment(schemes=("rcsc", "uc-mmc", "mds"), tolerances=(0.0, 0.15, 0.3), n_runs: int = 10,
                           iterations: int = 80, dim: int = 1000, n_train: int = 2000, n_test: int = 400,
                           n_workers: int = 40, eta: float = 0.1, mu: float = 10.0, alpha: float = 0.01,
                           degrees=(1, 2, 3), seed: int = 0) -> list[dict]:
    """Test error against iteration and cumulative simulated time, per scheme, tolerance and run.

    Each run draws a fresh data set and a fresh code; every (scheme, tolerance) pair gets its own
    delays (``trials = iterations`` independent iterations of :func:`gcc.cpgc.simulate`). Schemes
    without partial recovery (MDS, GC) always update every block.

    Returns
    -------
    list of dict
        Tidy rows: ``scheme, tolerance, run, iteration, time, test_error, blocks_recovered`` (iteration 0
        is the starting point, at time 0).
    """
    from .simulate import simulate

    owner = "convergence_experiment"
    n_runs = check_int(n_runs, "n_runs", owner, minimum=1)
    iterations = check_int(iterations, "iterations", owner, minimum=1)
    tolerances = [check_tolerance(q, owner, "tolerances") for q in tolerances]
    schemes = [canonical_scheme(s, owner) for s in schemes]
    rows = []
    root = np.random.SeedSequence(seed)
    for run, run_ss in enumerate(root.spawn(n_runs)):
        data_ss, delay_ss = run_ss.spawn(2)
        problem = synthetic_regression(n_train, n_test, dim, np.random.default_rng(data_ss))
        pairs = [(s, q) for s in schemes for q in tolerances]
        masks, times, counts = [], [], []
        for (scheme, q), ss in zip(pairs, delay_ss.spawn(len(pairs))):
            res = simulate(scheme, n_workers=n_workers, tolerance=q, trials=iterations,
                           seed=int(ss.generate_state(1)[0]), mu=mu, alpha=alpha, degrees=degrees,
                           code_seed=int(run_ss.generate_state(1)[0]), return_recovered=True)
            rec = res.recovered
            if not res.code.partial or rec.shape[1] != n_workers:
                rec = np.ones((iterations, n_workers), dtype=bool)
            masks.append(rec)
            times.append(np.concatenate([[0.0], np.cumsum(res.times)]))
            counts.append(np.concatenate([[n_workers], rec.sum(axis=1)]))
        errors = gradient_descent(problem, np.array(masks), eta=eta)
        for p, (scheme, q) in enumerate(pairs):
            for it in range(iterations + 1):
                rows.append({"scheme": scheme, "tolerance": q, "run": run, "iteration": it,
                             "time": float(times[p][it]), "test_error": float(errors[p, it]),
                             "blocks_recovered": int(counts[p][it])})
    return rows
