"""Experiment runners for the theorem checks: the rates of GCC / LeTCC, measured.

This module turns the paper's rate statements into tidy tables that the rate
notebooks save and plot, and that :mod:`gcc.claims` compares with the claims.

* :func:`straggler_sweep` -- end-to-end loss over an (N, S) grid with the
  worst-case (contiguous block) or random straggler sets, for GCC, BACC,
  B-spline and LCC (Thm 1 / Thm 4 of the NeurIPS paper, O(S^3 N^-3)).
* :func:`probabilistic_sweep` -- i.i.d. Bernoulli(p) stragglers over an N grid
  (ISIT 2025: GCC O(log^3_{1/p}(N) N^-3), BACC O(log^4_{1/p}(N) N^-2)).
* :func:`noisy_sweep` and :func:`noisy_lambda_curve` -- noisy workers with the
  theory's lambda_dec schedule (:func:`theory_lambda_dec`) or cross-validation
  (Thm 2 / Thm 4, O(S^{8/5} N^{-3/5})).
* :func:`polynomial_comparison` -- LCC against GCC on polynomials (App. D).
* :func:`lambda_sensitivity` -- loss over a (lambda_enc, lambda_dec) grid (App. E).
* reference curves (:func:`worst_case_reference`, :func:`log_rate_reference`),
  :func:`anchor_constant` and :func:`slope_table` (least-squares log-log slopes
  with confidence intervals, from :func:`gcc.metrics.loglog_slope`).

Everything that codes, straggles, simulates and measures is the core's
(:mod:`gcc.codes`, :mod:`gcc.stragglers`, :mod:`gcc.harness`, :mod:`gcc.metrics`);
this module only arranges the experiments.

Conventions
-----------
lambda is in the paper's eq. (4) convention,
``(1/|F|) sum_v (y_v - u(beta_v))^2 + lambda * int u''^2``.
The loss is eq. (1): ``(1/K) sum_k ||f_hat(x_k) - f(x_k)||_2^2``.

References
----------
.. [1] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, "Coded Computing for Resilient
   Distributed Computing: A Learning-Theoretic Framework", NeurIPS 2024,
   arXiv:2406.00300.
.. [2] P. Moradi, M. A. Maddah-Ali, "General Coded Computing in a Probabilistic
   Straggler Regime", ISIT 2025, arXiv:2502.00645.
.. [3] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, "Learning-Theoretic Foundation
   for General Coded Computing: The Straggler Setting", arXiv:2608.28910.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import numpy as np

__all__ = [
    "CODE_NAMES",
    "SLOPE_COLUMNS",
    "xsinx",
    "TanhNetwork",
    "Polynomial",
    "scalar_inputs",
    "vector_inputs",
    "make_code",
    "make_codes",
    "child_seed",
    "straggler_sweep",
    "probabilistic_sweep",
    "curvature_energy",
    "theory_lambda_dec",
    "calibrate_theory_constant",
    "noisy_sweep",
    "noisy_lambda_curve",
    "polynomial_comparison",
    "lambda_sensitivity",
    "lambda_optimum",
    "worst_case_reference",
    "log_rate_reference",
    "anchor_constant",
    "normalised_ratio",
    "log_base",
    "summarise",
    "slope_table",
    "worst_case_slopes",
    "probabilistic_summary",
    "probabilistic_slopes",
    "ratio_growth",
    "noisy_slopes",
    "polynomial_summary",
    "plot_n_sweep",
    "plot_s_sweep",
    "plot_probabilistic",
    "plot_noisy",
    "plot_polynomial",
    "plot_lambda_sensitivity",
    "slope_view",
]

#: Names of the codes the runners know, in plotting order.
CODE_NAMES = ("GCC", "BACC", "BSpline", "LCC")


# --------------------------------------------------------------------------- #
# Test functions and inputs
# --------------------------------------------------------------------------- #
def xsinx(x):
    """The scalar test function of the ISIT paper, ``f(x) = x sin x``, elementwise.

    Parameters
    ----------
    x : ndarray, shape (n, ...)

    Returns
    -------
    ndarray, same shape as `x`
    """
    x = np.asarray(x, dtype=float)
    return x * np.sin(x)


class TanhNetwork:
    """A small fixed tanh network ``R^d -> R^m``, a smooth vector-valued test function.

    ``f(x) = W2 tanh(W1 x + b1) + b2`` with Gaussian weights drawn once from
    `seed` (``W1 ~ N(0, 1/d)``, ``W2 ~ N(0, 1/hidden)``), so ``f`` is smooth
    (``C^infinity``) and Lipschitz, as Theorems 1-2 assume, unlike ReLU networks.

    Parameters
    ----------
    d, m, hidden : int
        Input dimension, output dimension, hidden width.
    seed : int
        Seed of the weights.

    Notes
    -----
    Calling it maps ``(n, d) -> (n, m)``; the theory of App. F treats each output
    coordinate with its own spline and a shared lambda, which is what the codes do.
    """

    def __init__(self, d: int = 4, m: int = 3, hidden: int = 16, seed: int = 0):
        for name, value in (("d", d), ("m", m), ("hidden", hidden)):
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(
                    f"The '{name}' parameter of TanhNetwork must be an int >= 1. Got {value!r} instead."
                )
        self.d, self.m, self.hidden, self.seed = int(d), int(m), int(hidden), int(seed)
        rng = np.random.default_rng(seed)
        self.W1 = rng.normal(0.0, 1.0 / np.sqrt(d), size=(hidden, d))
        self.b1 = rng.normal(0.0, 0.5, size=hidden)
        self.W2 = rng.normal(0.0, 1.0 / np.sqrt(hidden), size=(m, hidden))
        self.b2 = rng.normal(0.0, 0.1, size=m)

    def __call__(self, X):
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.d:
            raise ValueError(
                f"The 'X' parameter of TanhNetwork must have shape (n, {self.d}). Got {X.shape} instead."
            )
        return np.tanh(X @ self.W1.T + self.b1) @ self.W2.T + self.b2

    def __repr__(self) -> str:
        return f"TanhNetwork(d={self.d}, m={self.m}, hidden={self.hidden}, seed={self.seed})"


class Polynomial:
    """A fixed scalar polynomial ``f(x) = sum_j c_j x^j`` (App. D's test functions).

    Parameters
    ----------
    degree : int
        Degree of the polynomial.
    seed : int
        The coefficients are ``c_j ~ N(0, 1) / j!``-scaled so that high degrees
        stay of order one on [-1, 1]; the leading one is kept away from zero so the
        degree is exact.
    """

    def __init__(self, degree: int, seed: int = 0):
        if not isinstance(degree, (int, np.integer)) or degree < 1:
            raise ValueError(f"The 'degree' parameter of Polynomial must be an int >= 1. Got {degree!r} instead.")
        self.degree, self.seed = int(degree), int(seed)
        rng = np.random.default_rng(seed)
        coef = rng.normal(size=degree + 1)
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
        In drawing order (not sorted): the data x_k are arbitrary; only the
        points alpha_k they are attached to are ordered.
    """
    return np.random.default_rng(seed).uniform(low, high, size=int(n_inputs))


def vector_inputs(n_inputs: int, d: int, seed: int = 0) -> np.ndarray:
    """K standard-normal data points in ``R^d``; shape ``(n_inputs, d)``."""
    return np.random.default_rng(seed).normal(size=(int(n_inputs), int(d)))


# --------------------------------------------------------------------------- #
# Codes and seeds
# --------------------------------------------------------------------------- #
def make_code(name: str, n_inputs: int, n_workers: int, *, lam_enc: float = 0.0, lam_dec: float = 0.0,
              points: str = "chebyshev", poly_degree: int | None = None):
    """Build one of the core's codes by its short name.

    Parameters
    ----------
    name : {"GCC", "BACC", "BSpline", "LCC"}
        :class:`gcc.SplineCode`, :class:`gcc.BerrutCode`, :class:`gcc.BSplineCode`,
        :class:`gcc.LagrangeCode`.
    n_inputs, n_workers : int
        K and N.
    lam_enc, lam_dec : float
        Smoothing parameters of GCC (ignored by the others).
    points : {"chebyshev", "equispaced"}
        Point sets (alpha Chebyshev-1 / beta Chebyshev-2, or equispaced).
    poly_degree : int or None
        Degree of a polynomial f. LCC then decodes with a polynomial of degree
        ``(K - 1) * poly_degree`` (exact at and above the recovery threshold,
        least squares below it: App. D's adapted LCC); None interpolates all
        received outputs (classic LCC, for non-polynomial f).
    """
    import gcc

    if name == "GCC":
        return gcc.SplineCode(n_inputs, n_workers, lam_enc=lam_enc, lam_dec=lam_dec, points=points)
    if name == "BACC":
        return gcc.BerrutCode(n_inputs, n_workers, points=points)
    if name == "BSpline":
        return gcc.BSplineCode(n_inputs, n_workers, points=points)
    if name == "LCC":
        degree = None if poly_degree is None else (int(n_inputs) - 1) * int(poly_degree)
        return gcc.LagrangeCode(n_inputs, n_workers, points=points, degree=degree)
    raise ValueError(f"The 'name' parameter of make_code must be one of {CODE_NAMES}. Got {name!r} instead.")


def make_codes(names: Iterable[str], n_inputs: int, n_workers: int, **kwargs) -> dict:
    """``{name: make_code(name, n_inputs, n_workers, **kwargs)}`` in the given order."""
    return {name: make_code(name, n_inputs, n_workers, **kwargs) for name in names}


def child_seed(seed: int, *keys: int) -> int:
    """A seed for one cell of a sweep, derived from the run's `seed` and integer `keys`.

    Every (N, S, p, ...) cell gets its own independent stream, so adding a grid
    point never changes the numbers of the others.
    """
    return int(np.random.SeedSequence([int(seed), *[int(k) for k in keys]]).generate_state(1)[0])


# --------------------------------------------------------------------------- #
# Reference curves of the theorems
# --------------------------------------------------------------------------- #
def log_base(x, p: float):
    """``log_{1/p}(x)``, the logarithm the probabilistic rates are written in.

    Parameters
    ----------
    x : array_like
    p : float in (0, 1)
        Straggling probability of each worker.
    """
    if not 0.0 < float(p) < 1.0:
        raise ValueError(f"The 'p' parameter of log_base must be a float in (0, 1). Got {p!r} instead.")
    return np.log(np.asarray(x, dtype=float)) / np.log(1.0 / float(p))


def worst_case_reference(n_workers, n_stragglers, const: float = 1.0, power: float = 3.0):
    """The worst-case bound's shape ``C ((S + 1) / N)^power`` (Thm 1 / Thm 4: power 3).

    Parameters
    ----------
    n_workers, n_stragglers : array_like
        N and S (broadcast together).
    const : float
        C, e.g. from :func:`anchor_constant`.
    power : float
        3 for the noiseless GCC bound.

    Returns
    -------
    ndarray
    """
    N = np.asarray(n_workers, dtype=float)
    S = np.asarray(n_stragglers, dtype=float)
    return const * ((S + 1.0) / N) ** power


def log_rate_reference(n_workers, p: float, log_power: float, n_power: float, const: float = 1.0):
    """The probabilistic bounds' shape ``C log_{1/p}(N)^log_power / N^n_power``.

    ISIT 2025 [2]_: GCC ``(log_power, n_power) = (3, 3)``; BACC ``(4, 2)``.

    Parameters
    ----------
    n_workers : array_like
        N (> 1).
    p : float in (0, 1)
    log_power, n_power : float
    const : float

    Returns
    -------
    ndarray
    """
    N = np.asarray(n_workers, dtype=float)
    return const * log_base(N, p) ** log_power / N ** n_power


def anchor_constant(measured, reference, quantile: float = 1.0) -> float:
    """The constant C that puts ``C * reference`` on or above the measured data.

    The theorems are upper bounds, so a reference line is drawn through the
    highest ratio ``measured / reference`` (``quantile=1``): every point then lies
    on or below it, and whether the data decay *at least as fast* is seen by eye.

    Parameters
    ----------
    measured, reference : array_like, same shape
        Positive values (non-positive or non-finite pairs are ignored).
    quantile : float in (0, 1]
        Use a lower quantile of the ratios to draw a line through the bulk instead.

    Returns
    -------
    float
    """
    m = np.asarray(measured, dtype=float).ravel()
    r = np.asarray(reference, dtype=float).ravel()
    ok = np.isfinite(m) & np.isfinite(r) & (m > 0) & (r > 0)
    if not ok.any():
        return float("nan")
    return float(np.quantile(m[ok] / r[ok], quantile))


def normalised_ratio(mean_loss, n_workers, p: float, log_power: float = 3.0, n_power: float = 3.0):
    """``E[loss] * N^n_power / log_{1/p}(N)^log_power``: bounded iff the rate holds.

    Returns
    -------
    ndarray, same shape as `mean_loss`
    """
    N = np.asarray(n_workers, dtype=float)
    return np.asarray(mean_loss, dtype=float) * N ** n_power / log_base(N, p) ** log_power


# --------------------------------------------------------------------------- #
# Aggregation and slopes
# --------------------------------------------------------------------------- #
def summarise(df, by: Sequence[str], value: str = "loss", confidence: float = 0.95):
    """Mean of `value` with a confidence interval per group (via :func:`gcc.metrics.mean_ci`).

    Parameters
    ----------
    df : pandas.DataFrame
        Tidy table, one row per trial.
    by : sequence of str
        Grouping columns.
    value : str
        Column to average.

    Returns
    -------
    pandas.DataFrame
        `by` columns plus ``mean``, ``ci_low``, ``ci_high``, ``n``.
    """
    import pandas as pd

    from gcc.metrics import mean_ci

    rows = []
    for key, group in df.groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        values = group[value].to_numpy(dtype=float)
        mean, lo, hi = _mean_ci(mean_ci, values, confidence)
        rows.append({**dict(zip(by, key)), "mean": mean, "ci_low": lo, "ci_high": hi, "n": len(values)})
    return pd.DataFrame(rows)


def _mean_ci(mean_ci, values, confidence):
    # A single trial (the deterministic worst case) has no interval: report the value itself.
    values = np.asarray(values, dtype=float)
    if values.size == 1:
        return float(values[0]), float(values[0]), float(values[0])
    ci = mean_ci(values, level=confidence)
    return float(ci.mean), float(ci.low), float(ci.high)


def slope_table(summary, x: str, by: Sequence[str], y: str = "mean", shift: float = 0.0,
                x_min=None, y_floor: float = 0.0, confidence: float = 0.95):
    """Least-squares slope of ``log y`` against ``log(x + shift)`` per group, with CI.

    Parameters
    ----------
    summary : pandas.DataFrame
        One row per (group, x), e.g. the output of :func:`summarise`.
    x : str
        Column of the abscissa (``"N"`` or ``"S"``).
    by : sequence of str
        Grouping columns; one slope per group.
    y : str
        Column of the ordinate (``"mean"`` loss).
    shift : float
        Added to x before the log (``1`` for ``log(S + 1)``).
    x_min : float, callable or None
        Keep only rows with ``x >= x_min``; a callable gets the group's row (a
        dict of the `by` values) and returns the threshold, e.g. ``N >= 8 (S+1)``
        to fit the asymptotic regime only.
    y_floor : float
        Drop points with ``y <= y_floor`` (round-off plateau of an exact decoder).
    confidence : float

    Returns
    -------
    pandas.DataFrame
        `by` plus ``variable``, ``slope``, ``ci_low``, ``ci_high``, ``n_points``,
        ``x_lo``, ``x_hi`` (fit window). Groups with fewer than 3 usable points get
        NaN slopes (no interval is possible with 2).

    Notes
    -----
    The fit is :func:`gcc.metrics.loglog_slope` (ordinary least squares on log-log
    axes, Student-t interval of the slope).
    """
    import pandas as pd

    from gcc.metrics import loglog_slope

    rows = []
    for key, group in summary.groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        labels = dict(zip(by, key))
        lo_x = x_min(labels) if callable(x_min) else x_min
        g = group
        if lo_x is not None:
            g = g[g[x] >= lo_x]
        g = g[np.isfinite(g[y]) & (g[y] > y_floor)]
        row = {**labels, "variable": x if not shift else f"{x}+{shift:g}", "n_points": len(g),
               "x_lo": float(g[x].min()) if len(g) else np.nan,
               "x_hi": float(g[x].max()) if len(g) else np.nan}
        if len(g) >= 3:
            slope, lo, hi = _loglog(loglog_slope, g[x].to_numpy(float) + shift, g[y].to_numpy(float), confidence)
        else:
            slope = lo = hi = np.nan
        row.update(slope=slope, ci_low=lo, ci_high=hi)
        rows.append(row)
    columns = [*by, "variable", "n_points", "x_lo", "x_hi", "slope", "ci_low", "ci_high"]
    return pd.DataFrame(rows, columns=columns)


def _loglog(loglog_slope, x, y, confidence):
    fit = loglog_slope(x, y, level=confidence)
    return float(fit.slope), float(fit.low), float(fit.high)


# --------------------------------------------------------------------------- #
# Adapters to the core (one place to follow its API)
# --------------------------------------------------------------------------- #
def _simulate(codes: Mapping, f, X, model, trials: int, seed: int, noise_std: float = 0.0):
    """:func:`gcc.harness.simulate` with its columns named ``code``, ``trial``, ``loss``."""
    from gcc.harness import simulate

    df = simulate(dict(codes), f, X, model, trials=int(trials), seed=int(seed), noise_std=noise_std)
    return df.rename(columns={"scheme": "code", "too_few_survivors": "too_few", "received": "n_received"})


def _as_2d(a) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    return a.reshape(a.shape[0], -1)


def _exact_noisy_loss(D: np.ndarray, Y_received: np.ndarray, true: np.ndarray, sigma: float):
    """Loss (eq. 1) of a linear decoder, averaged *exactly* over worker noise.

    With ``f_hat = D (Y + eps)``, ``eps`` i.i.d. with variance ``sigma^2`` in each
    of the m output coordinates,
    ``E ||f_hat - f||^2 / K = ||D Y - f||_F^2 / K + sigma^2 m ||D||_F^2 / K``:
    bias squared plus variance, with no Monte-Carlo error over the noise.

    Parameters
    ----------
    D : ndarray, shape (K, |F|)
    Y_received : ndarray, shape (|F|, m)
    true : ndarray, shape (K, m)
    sigma : float

    Returns
    -------
    loss, bias2, variance : float
    """
    K, m = true.shape
    bias2 = float(np.sum((D @ Y_received - true) ** 2) / K)
    variance = float(sigma ** 2 * m * np.sum(D ** 2) / K)
    return bias2 + variance, bias2, variance


# --------------------------------------------------------------------------- #
# Worst-case and random stragglers: (N, S) sweeps
# --------------------------------------------------------------------------- #
def straggler_sweep(f, X, n_grid: Sequence[int], s_grid: Sequence[int], *,
                    codes: Sequence[str] = ("GCC", "BACC", "BSpline"), adversary: str = "worst",
                    trials: int = 1, seed: int = 0, points: str = "chebyshev",
                    max_workers: Mapping[str, int] | None = None, function: str = "f",
                    search: str = "contiguous"):
    """End-to-end loss over an (N, S) grid, worst-case or random stragglers (Thm 1 / Thm 4).

    Parameters
    ----------
    f : callable
        Vectorised ``(n, *in) -> (n, *out)``.
    X : ndarray, shape (K, *in)
        Data points, identical for every code and cell.
    n_grid, s_grid : sequences of int
        Workers N and stragglers S; cells with ``N - S < K`` are skipped (fewer
        survivors than data points is outside the regime of the theorems).
    codes : sequence of {"GCC", "BACC", "BSpline", "LCC"}
        GCC at lambda = 0 (the theorems' interpolating encoder and decoder).
    adversary : {"worst", "random"}
        ``"worst"``: for every code its own worst received set, exact over the
        ``N - S + 1`` contiguous blocks (:func:`gcc.stragglers.worst_case_stragglers`,
        ``search``); one deterministic row per cell. ``"random"``: `trials` sets of
        S stragglers drawn uniformly (:class:`gcc.stragglers.FixedCount`), the same
        sets for every code (:func:`gcc.harness.simulate`).
    trials : int
        Random sets per cell (ignored for ``"worst"``).
    seed : int
        Each cell uses ``child_seed(seed, N, S)``.
    points : {"chebyshev", "equispaced"}
    max_workers : mapping of str to int, optional
        Run a code only for ``N <= max_workers[code]``. Default
        ``{"LCC": 40, "BSpline": 256}``: LCC, for a non-polynomial f, interpolates a
        polynomial through all received points, which is ill-conditioned on gappy
        received sets beyond that (it is shown where it "applies", small N); the
        worst-case search of :class:`gcc.BSplineCode` decodes every block
        separately (no batched path in the core), which costs seconds per cell
        beyond N = 256.
    function : str
        Label stored in the ``function`` column.
    search : {"contiguous", "greedy", "exhaustive"}
        Adversary of the worst case.

    Returns
    -------
    pandas.DataFrame
        Columns ``function, code, straggler, N, S, K, trial, loss`` (plus
        ``block_start`` for the worst case: the first straggler of the worst block).
    """
    import pandas as pd

    from gcc.stragglers import FixedCount, worst_case_stragglers

    if adversary not in ("worst", "random"):
        raise ValueError(
            f"The 'adversary' parameter of straggler_sweep must be 'worst' or 'random'. Got {adversary!r} instead."
        )
    K = len(X)
    max_workers = {"LCC": 40, "BSpline": 256} if max_workers is None else dict(max_workers)
    frames = []
    for N in n_grid:
        names = [c for c in codes if N <= max_workers.get(c, np.inf)]
        for S in s_grid:
            if N - S < K:
                continue
            cell = make_codes(names, K, int(N), points=points)
            if adversary == "worst":
                rows = []
                for name, code in cell.items():
                    received, loss = worst_case_stragglers(code, f, X, int(S), search=search, return_loss=True)
                    missing = np.setdiff1d(np.arange(N), received)
                    rows.append({"code": name, "trial": 0, "loss": float(loss),
                                 "block_start": int(missing[0]) if missing.size else -1})
                df = pd.DataFrame(rows)
            else:
                df = _simulate(cell, f, X, FixedCount(int(S)), trials, child_seed(seed, N, S))
                df = df[["code", "trial", "loss"]]
            df = df.assign(function=function, straggler=adversary, N=int(N), S=int(S), K=K)
            frames.append(df)
    cols = ["function", "code", "straggler", "N", "S", "K", "trial", "loss"]
    out = pd.concat(frames, ignore_index=True)
    return out[cols + [c for c in out.columns if c not in cols]]


# --------------------------------------------------------------------------- #
# Probabilistic stragglers
# --------------------------------------------------------------------------- #
def probabilistic_sweep(f, X, n_grid: Sequence[int], p_values: Sequence[float], *, draws: int = 200,
                        codes: Sequence[str] = ("GCC", "BACC"), seed: int = 0,
                        points: str = "chebyshev", function: str = "f", min_survivors: int | None = None):
    """Loss under i.i.d. Bernoulli(p) stragglers over an N grid (ISIT 2025 [2]_).

    Parameters
    ----------
    f, X
        As in :func:`straggler_sweep`.
    n_grid : sequence of int
    p_values : sequence of float in (0, 1)
    draws : int
        Monte-Carlo draws of the received set per (N, p); every code sees the same draws.
    codes : sequence of str
    seed : int
        Each cell uses ``child_seed(seed, N, round(1000 p))``.
    min_survivors : int or None
        Draws with fewer received workers are counted (``too_few``) and get a NaN
        loss, never silently dropped or redrawn. Default: K (an interpolating
        decoder with fewer points than data cannot be in the theorems' regime).

    Returns
    -------
    pandas.DataFrame
        One row per (code, N, p, draw): ``function, code, p, N, K, trial, loss,
        n_received, longest_run, too_few``.
    """
    import pandas as pd

    from gcc.harness import trial_rngs
    from gcc.stragglers import Bernoulli, longest_straggler_run

    K = len(X)
    min_survivors = K if min_survivors is None else int(min_survivors)
    frames = []
    for p in p_values:
        for N in n_grid:
            cell = make_codes(codes, K, int(N), points=points)
            model = Bernoulli(float(p), min_survivors=min_survivors)
            cell_seed = child_seed(seed, N, round(1000 * p))
            df = _simulate(cell, f, X, model, draws, cell_seed)
            # The harness draws trial t's received set from trial_rngs(seed, t)[1]; redraw the
            # same masks to measure their longest straggler run.
            runs = np.array([longest_straggler_run(model.sample_many(trial_rngs(cell_seed, t)[1], int(N), 1)[0])
                             for t in range(int(draws))])
            df["longest_run"] = runs[df["trial"].to_numpy()]
            frames.append(df.assign(function=function, p=float(p), N=int(N), K=K))
    out = pd.concat(frames, ignore_index=True)
    cols = ["function", "code", "p", "N", "K", "trial", "loss", "n_received", "longest_run", "too_few"]
    return out[[c for c in cols if c in out.columns] + [c for c in out.columns if c not in cols]]


# --------------------------------------------------------------------------- #
# Noisy workers (Theorem 2)
# --------------------------------------------------------------------------- #
def curvature_energy(f, X, code, n_grid: int = 4001) -> float:
    """``||(f o u_enc)''||^2_{L^2(Omega)}``, the smoothness term of Theorems 1-2.

    Parameters
    ----------
    f : callable
    X : ndarray, shape (K, *in)
    code : SplineCode
        Its encoder ``u_enc`` (smoothing spline through ``(alpha_k, x_k)`` with its
        ``lam_enc``) is evaluated on a uniform grid of [-1, 1].
    n_grid : int
        Grid size; ``(f o u)''`` is taken by second differences and integrated by
        the trapezoidal rule, summed over output coordinates (App. F).

    Returns
    -------
    float
    """
    import gcc

    t = np.linspace(-1.0, 1.0, int(n_grid))
    lam_enc = float(getattr(code, "lam_enc", 0.0))
    U = gcc.smoothing_spline(np.asarray(code.alphas), np.asarray(X, dtype=float), lam_enc, t)
    G = _as_2d(f(U))
    h = t[1] - t[0]
    g2 = (G[2:] - 2 * G[1:-1] + G[:-2]) / h ** 2
    # Second differences live on the interior points; the ends take their neighbours' values.
    g2 = np.concatenate([g2[:1], g2, g2[-1:]])
    return float(np.sum(np.trapezoid(g2 ** 2, dx=h, axis=0)))


def theory_lambda_dec(n_workers, n_stragglers, sigma: float, energy: float = 1.0, const: float = 1.0,
                      lam_max: float = 1.0, clip: bool = True):
    """The theory's decoder smoothing parameter for noisy workers (App. B.2 of [1]_).

    ``lambda_d* = const * (sigma^2 / ((N - S) * (S + 1)^4 * energy))^(4/5)``,
    clipped to the theorem's range ``[(N - S)^-4, lam_max]``.

    Parameters
    ----------
    n_workers, n_stragglers : int or array_like
        N and S.
    sigma : float
        Noise standard deviation of each worker output.
    energy : float
        ``||(f o u_enc)''||^2`` (:func:`curvature_energy`).
    const : float
        The proof's constant ``[3 H_max / (4 w_max)]^(-4/5) [...]^(-4/5)`` involves
        Ragozin's and Utreras's constants, which are not numeric; it is a free
        constant here (``1`` by default), documented in each run's parameters.
    lam_max : float
        The theorem's ``lambda_0``.
    clip : bool
        Clip to the theorem's range (False: the raw schedule).

    Returns
    -------
    float or ndarray

    Notes
    -----
    The proof's degree-4 polynomial ``p~_4(S)`` (positive coefficients, ~ S^4) is
    taken as ``(S + 1)^4`` so that S = 0 stays finite. The schedule minimises
    ``lambda^{3/4} p4(S) energy + lambda^{-1/2} sigma^2 / (N - S)``, whose minimum is
    ``O((sigma^2 / (N - S))^{3/5} p4(S)^{2/5})``: the O(S^{8/5} N^{-3/5}) of Thm 4.
    """
    N = np.asarray(n_workers, dtype=float)
    S = np.asarray(n_stragglers, dtype=float)
    lam = const * (sigma ** 2 / ((N - S) * (S + 1.0) ** 4 * energy)) ** 0.8
    if clip:
        lam = np.clip(lam, (N - S) ** -4.0, lam_max)
    return float(lam) if lam.ndim == 0 else lam


def _cv_lambda_dec(f, X, N, S, sigma, lam_grid, seed, points, trials):
    """lambda_dec chosen by the core's grid search on held-out draws (:func:`gcc.tuning.select_lambdas`).

    The held-out draws are fresh straggler sets and fresh worker noise on the
    same data (`seed` differs from the reported runs'): the data are fixed in
    these experiments, the randomness is in F and in the noise.
    """
    import gcc
    from gcc.stragglers import FixedCount
    from gcc.tuning import select_lambdas

    K = len(X)
    sel = select_lambdas(lambda le, ld: gcc.SplineCode(K, int(N), lam_enc=le, lam_dec=ld, points=points),
                         f, [X], FixedCount(int(S)), lam_enc_grid=[0.0], lam_dec_grid=list(lam_grid),
                         trials=int(trials), seed=int(seed), noise_std=float(sigma))
    return float(sel.lam_dec)


def noisy_sweep(f, X, n_grid: Sequence[int], s_grid: Sequence[int], *, sigma: float = 0.1,
                rules: Sequence[str] = ("theory",), const: float = 1.0, trials: int = 20, seed: int = 0,
                points: str = "equispaced", lam_grid: Sequence[float] | None = None, cv_trials: int = 20,
                adversary: str = "random", function: str = "f"):
    """GCC loss with noisy workers over an (N, S) grid, lambda_dec by rule (Thm 2 / Thm 4).

    Parameters
    ----------
    f, X
        As in :func:`straggler_sweep`.
    n_grid, s_grid : sequences of int
    sigma : float
        Worker noise standard deviation.
    rules : sequence of {"theory", "cv", "zero"}
        How lambda_dec is set per (N, S): the schedule :func:`theory_lambda_dec`
        (constant `const`, energy :func:`curvature_energy`), cross-validation
        over `lam_grid` (:func:`gcc.tuning.select_lambdas`), or 0 (interpolation).
    const : float
        Constant of the theory schedule.
    trials : int
        Random straggler sets (S uniform, :class:`gcc.stragglers.FixedCount`) per cell.
    seed : int
    adversary : {"random", "worst"}
        ``"random"``: `trials` uniform S-sets per cell. ``"worst"``: one set per
        (cell, rule), the worst contiguous block for that rule's decoder on the
        noiseless outputs (:func:`gcc.stragglers.worst_case_stragglers`; the
        adversary does not see the noise), then the noise is averaged exactly.
    points : {"equispaced", "chebyshev"}
        Equispaced by default: Theorem 2 needs ``Delta_max / Delta_min <= B``,
        which Chebyshev points break (the ratio grows like N).
    lam_grid : sequence of float
        Grid of the CV rule (default ``logspace(-10, 0, 21)``).
    cv_trials : int
        Held-out draws (straggler sets and noise, independent of the reported
        ones) per grid point of the CV rule.

    Returns
    -------
    pandas.DataFrame
        One row per (rule, N, S, trial): ``function, code, rule, straggler, sigma, N,
        S, K, lam_dec, trial, loss, bias2, variance``. The loss is averaged exactly over
        the worker noise (a linear decoder: bias squared + ``sigma^2 ||D||_F^2 m / K``),
        and by Monte Carlo over the straggler sets.
    """
    import pandas as pd

    from gcc.stragglers import FixedCount, worst_case_stragglers

    if adversary not in ("worst", "random"):
        raise ValueError(
            f"The 'adversary' parameter of noisy_sweep must be 'worst' or 'random'. Got {adversary!r} instead."
        )
    K = len(X)
    lam_grid = np.logspace(-10, 0, 21) if lam_grid is None else np.asarray(lam_grid, dtype=float)
    true = _as_2d(f(X))
    rows = []
    for N in n_grid:
        base = make_code("GCC", K, int(N), points=points)
        Y = _as_2d(f(base.encode(X)))
        energy = curvature_energy(f, X, base)
        for S in s_grid:
            if N - S < K:
                continue
            rng = np.random.default_rng(child_seed(seed, N, S))
            masks = FixedCount(int(S)).sample_many(rng, int(N), int(trials))
            for rule in rules:
                if rule == "theory":
                    lam = theory_lambda_dec(N, S, sigma, energy=energy, const=const)
                elif rule == "cv":
                    lam = _cv_lambda_dec(f, X, N, S, sigma, lam_grid, child_seed(seed, N, S, 1), points,
                                         cv_trials)
                elif rule == "zero":
                    lam = 0.0
                else:
                    raise ValueError(
                        f"The 'rules' parameter of noisy_sweep must hold 'theory', 'cv' or 'zero'. Got {rule!r} instead."
                    )
                code = make_code("GCC", K, int(N), lam_dec=lam, points=points)
                if adversary == "worst":
                    sets = [worst_case_stragglers(code, f, X, int(S), search="contiguous")]
                else:
                    sets = [np.flatnonzero(mask) for mask in masks]
                for t, received in enumerate(sets):
                    D = np.asarray(code.decoder_matrix(received), dtype=float)
                    loss, b2, var = _exact_noisy_loss(D, Y[received], true, sigma)
                    rows.append({"function": function, "code": "GCC", "rule": rule, "straggler": adversary,
                                 "sigma": sigma, "N": int(N), "S": int(S), "K": K, "lam_dec": lam, "trial": t,
                                 "loss": loss, "bias2": b2, "variance": var})
    return pd.DataFrame(rows)


def noisy_lambda_curve(f, X, n_workers: int, n_stragglers: int, lam_grid: Sequence[float], *,
                       sigma: float = 0.1, trials: int = 20, seed: int = 0, points: str = "equispaced",
                       function: str = "f"):
    """Bias-variance trade-off of the decoder's lambda at fixed (N, S).

    Parameters
    ----------
    f, X
    n_workers, n_stragglers : int
    lam_grid : sequence of float
        lambda_dec values (0 allowed: interpolation).
    sigma, trials, seed, points, function
        As in :func:`noisy_sweep`; the same `trials` straggler sets for every lambda.

    Returns
    -------
    pandas.DataFrame
        One row per (lambda, trial): ``function, N, S, sigma, lam_dec, trial, loss, bias2, variance``.
    """
    import pandas as pd

    from gcc.stragglers import FixedCount

    K, N, S = len(X), int(n_workers), int(n_stragglers)
    true = _as_2d(f(X))
    base = make_code("GCC", K, N, points=points)
    Y = _as_2d(f(base.encode(X)))
    masks = FixedCount(S).sample_many(np.random.default_rng(child_seed(seed, N, S)), N, int(trials))
    rows = []
    for lam in lam_grid:
        code = make_code("GCC", K, N, lam_dec=float(lam), points=points)
        for t, mask in enumerate(masks):
            received = np.flatnonzero(mask)
            D = np.asarray(code.decoder_matrix(received), dtype=float)
            loss, b2, var = _exact_noisy_loss(D, Y[received], true, sigma)
            rows.append({"function": function, "N": N, "S": S, "sigma": sigma, "lam_dec": float(lam),
                         "trial": t, "loss": loss, "bias2": b2, "variance": var})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- #
# LCC against GCC on polynomials (App. D)
# --------------------------------------------------------------------------- #
def polynomial_comparison(degree: int, n_inputs: int, n_workers: int, s_grid: Sequence[int], *,
                          trials: int = 20, seed: int = 0, points: str = "chebyshev"):
    """Loss against the number of stragglers for LCC and GCC on a fixed polynomial.

    Parameters
    ----------
    degree : int
        Degree of f (:class:`Polynomial` with seed `seed`).
    n_inputs, n_workers : int
        K and N. LCC recovers exactly iff ``N - S >= (K - 1) deg + 1``; below that
        threshold :class:`gcc.LagrangeCode` fits a lower-degree polynomial to the
        received outputs (App. D's adaptation).
    s_grid : sequence of int
    trials : int
        Random straggler sets per S (20 in App. D), identical for both codes.
    seed : int
        Seeds f, the data (``scalar_inputs(K, -1, 1)``) and the straggler draws.

    Returns
    -------
    pandas.DataFrame
        One row per (code, S, trial): ``function, degree, code, N, S, K, trial, loss, lcc_exact``
        (``lcc_exact``: S is within LCC's threshold).
    """
    import pandas as pd

    from gcc.stragglers import FixedCount

    f = Polynomial(degree, seed=seed)
    X = scalar_inputs(n_inputs, -1.0, 1.0, seed=seed)
    K, N = int(n_inputs), int(n_workers)
    codes = {"GCC": make_code("GCC", K, N, points=points),
             "LCC": make_code("LCC", K, N, points=points, poly_degree=degree)}
    # The loss of the zero estimator, so that "exact" can be judged relative to f's size.
    scale = float(np.mean(np.asarray(f(X), dtype=float) ** 2))
    frames = []
    for S in s_grid:
        if N - S < 2:
            continue
        df = _simulate(codes, f, X, FixedCount(int(S)), trials, child_seed(seed, degree, S))
        frames.append(df[["code", "trial", "loss"]].assign(
            function=repr(f), degree=int(degree), N=N, S=int(S), K=K, scale=scale,
            lcc_exact=bool(N - S >= (K - 1) * degree + 1)))
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------- #
# Sensitivity to (lambda_enc, lambda_dec) (App. E)
# --------------------------------------------------------------------------- #
def lambda_sensitivity(f, X, n_workers: int, s_values: Sequence[int], lam_enc_grid: Sequence[float],
                       lam_dec_grid: Sequence[float], *, sigma: float = 0.0, trials: int = 10, seed: int = 0,
                       points: str = "chebyshev", function: str = "f"):
    """GCC loss over a (lambda_enc, lambda_dec) grid, for several S.

    Parameters
    ----------
    f, X
    n_workers : int
    s_values : sequence of int
    lam_enc_grid, lam_dec_grid : sequences of float
    sigma : float
        Worker noise (averaged exactly, as in :func:`noisy_sweep`).
    trials : int
        Random straggler sets per S, shared by every (lambda_enc, lambda_dec).
    seed, points, function

    Returns
    -------
    pandas.DataFrame
        One row per (S, lambda_enc, lambda_dec, trial): ``function, N, S, K, sigma,
        lam_enc, lam_dec, trial, loss, bias2, variance``.

    Notes
    -----
    The decoder matrix depends on (lambda_dec, F) only and the worker outputs on
    lambda_enc only, so each is built once and combined.
    """
    import pandas as pd

    from gcc.stragglers import FixedCount

    K, N = len(X), int(n_workers)
    true = _as_2d(f(X))
    outputs = {float(le): _as_2d(f(make_code("GCC", K, N, lam_enc=float(le), points=points).encode(X)))
               for le in lam_enc_grid}
    rows = []
    for S in s_values:
        masks = FixedCount(int(S)).sample_many(np.random.default_rng(child_seed(seed, N, S)), N, int(trials))
        for ld in lam_dec_grid:
            code = make_code("GCC", K, N, lam_dec=float(ld), points=points)
            for t, mask in enumerate(masks):
                received = np.flatnonzero(mask)
                D = np.asarray(code.decoder_matrix(received), dtype=float)
                for le, Y in outputs.items():
                    loss, b2, var = _exact_noisy_loss(D, Y[received], true, sigma)
                    rows.append({"function": function, "N": N, "S": int(S), "K": K, "sigma": sigma,
                                 "lam_enc": le, "lam_dec": float(ld), "trial": t,
                                 "loss": loss, "bias2": b2, "variance": var})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- #
# Per-notebook summaries and slope tables (the saved shapes gcc.claims reads)
# --------------------------------------------------------------------------- #
#: Columns of every saved ``slopes`` table.
SLOPE_COLUMNS = ["function", "code", "straggler", "rule", "p", "fixed", "variable", "slope", "ci_low",
                 "ci_high", "n_points", "x_lo", "x_hi"]


def _finish_slopes(df):
    for col in SLOPE_COLUMNS:
        if col not in df.columns:
            df[col] = ""
    return df[SLOPE_COLUMNS + [c for c in df.columns if c not in SLOPE_COLUMNS]]


def worst_case_slopes(summary, fit_min_ratio: float = 4.0, y_floor: float = 1e-26, s_fit_max_ratio=0.25):
    """N-slopes at fixed S and (S+1)-slopes at fixed N of a worst-case / random sweep.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`summarise` of :func:`straggler_sweep` results with a ``sweep``
        column (``"N"`` rows: N grid at fixed S; ``"S"`` rows: S grid at fixed N).
    fit_min_ratio : float
        N-slopes use only ``N >= fit_min_ratio * (S + 1)``: the bounds are
        asymptotic, and for ``(S + 1) / N`` near 1 no rate is visible.
    y_floor : float
        Losses at or below this are round-off (an exact spline interpolant in
        float64) and left out of the fit.
    s_fit_max_ratio : float
        S-slopes use only ``S + 1 <= s_fit_max_ratio * N``.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SLOPE_COLUMNS`; ``fixed`` is ``"S=<s>"`` or ``"N=<n>"``.
    """
    import pandas as pd

    keys = ["function", "code", "straggler"]
    n_rows = summary[summary["sweep"] == "N"]
    s_rows = summary[summary["sweep"] == "S"]
    a = slope_table(n_rows, "N", keys + ["S"], x_min=lambda g: fit_min_ratio * (g["S"] + 1), y_floor=y_floor)
    a["fixed"] = "S=" + a.pop("S").astype(int).astype(str)
    s_rows = s_rows[(s_rows["S"] + 1) <= s_fit_max_ratio * s_rows["N"]]
    b = slope_table(s_rows, "S", keys + ["N"], shift=1.0, y_floor=y_floor)
    b["fixed"] = "N=" + b.pop("N").astype(int).astype(str)
    return _finish_slopes(pd.concat([a, b], ignore_index=True))


def probabilistic_summary(df, confidence: float = 0.95):
    """Per (code, p, N): E[loss] with CI, draws used and too-few counts, runs and normalised ratios.

    Parameters
    ----------
    df : pandas.DataFrame
        :func:`probabilistic_sweep` results.

    Returns
    -------
    pandas.DataFrame
        ``function, code, p, N, mean, ci_low, ci_high, n, too_few, longest_run_mean,
        longest_run_erdos_renyi, log_N, ratio_gcc_rate (E N^3 / log^3), ratio_bacc_rate
        (E N^2 / log^4), ratio`` (the ratio of the code's own claimed rate).
    """
    from gcc.stragglers import expected_longest_run

    valid = df[np.isfinite(df["loss"])]
    out = summarise(valid, ["function", "code", "p", "N"], confidence=confidence)
    counts = df.groupby(["function", "code", "p", "N"]).agg(
        draws=("loss", "size"), too_few=("loss", lambda s: int((~np.isfinite(s)).sum())),
        longest_run_mean=("longest_run", "mean"), longest_run_max=("longest_run", "max")).reset_index()
    out = out.merge(counts, on=["function", "code", "p", "N"], how="right")
    out["longest_run_erdos_renyi"] = [expected_longest_run(n, p) for n, p in zip(out["N"], out["p"])]
    out["log_N"] = [float(log_base(n, p)) for n, p in zip(out["N"], out["p"])]
    out["ratio_gcc_rate"] = out["mean"] * out["N"].astype(float) ** 3 / out["log_N"] ** 3
    out["ratio_bacc_rate"] = out["mean"] * out["N"].astype(float) ** 2 / out["log_N"] ** 4
    out["ratio"] = np.where(out["code"] == "BACC", out["ratio_bacc_rate"], out["ratio_gcc_rate"])
    return out


def probabilistic_slopes(summary, y_floor: float = 1e-26):
    """Slopes in N of each code's normalised ratio (claimed bounded: slope <= 0), per p.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SLOPE_COLUMNS` (``variable = "N"``, ``fixed = "p=<p>"``) plus
        the raw ``loss_slope`` of E[loss] against N.
    """
    a = slope_table(summary, "N", ["function", "code", "p"], y="ratio", y_floor=0.0)
    raw = slope_table(summary, "N", ["function", "code", "p"], y="mean", y_floor=y_floor)
    a["loss_slope"] = raw["slope"].to_numpy()
    a["loss_slope_ci_low"] = raw["ci_low"].to_numpy()
    a["loss_slope_ci_high"] = raw["ci_high"].to_numpy()
    a["fixed"] = "p=" + a["p"].astype(str)
    a["straggler"] = "bernoulli"
    return _finish_slopes(a)


def ratio_growth(summary, code: str = "GCC") -> "pandas.DataFrame":
    """The acceptance statistic of the probabilistic notebook, per (function, p).

    ``max(ratio over the upper half of the N grid) / ratio at the grid's middle``
    (the middle is the median grid point, the upper half the points above it).
    A value <= 2 means the normalised ratio does not grow.

    Returns
    -------
    pandas.DataFrame
        ``function, code, p, N_mid, ratio_mid, ratio_upper_max, growth``.
    """
    import pandas as pd

    rows = []
    for (function, p), g in summary[summary["code"] == code].groupby(["function", "p"]):
        g = g.sort_values("N")
        n_values = g["N"].to_numpy()
        mid = len(n_values) // 2
        ratio = g["ratio"].to_numpy(dtype=float)
        upper = ratio[mid + 1:] if mid + 1 < len(ratio) else ratio[mid:]
        rows.append({"function": function, "code": code, "p": p, "N_mid": int(n_values[mid]),
                     "ratio_mid": ratio[mid], "ratio_upper_max": float(np.nanmax(upper)),
                     "growth": float(np.nanmax(upper) / ratio[mid])})
    return pd.DataFrame(rows)


def noisy_slopes(summary, s_fit_max_ratio: float = 0.25):
    """N-slopes at fixed S and (S+1)-slopes at fixed N, per lambda rule, of :func:`noisy_sweep`.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`summarise` of :func:`noisy_sweep` results with a ``sweep`` column.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SLOPE_COLUMNS`.
    """
    import pandas as pd

    keys = ["function", "code", "rule", "straggler"]
    a = slope_table(summary[summary["sweep"] == "N"], "N", keys + ["S"])
    a["fixed"] = "S=" + a.pop("S").astype(int).astype(str)
    s_rows = summary[(summary["sweep"] == "S") & ((summary["S"] + 1) <= s_fit_max_ratio * summary["N"])]
    b = slope_table(s_rows, "S", keys + ["N"], shift=1.0)
    b["fixed"] = "N=" + b.pop("N").astype(int).astype(str)
    return _finish_slopes(pd.concat([a, b], ignore_index=True))


def polynomial_summary(df, exact_rtol: float = 1e-20, confidence: float = 0.95):
    """Per (degree, code, S): mean loss with CI, max over trials, and the exactness tolerance.

    Parameters
    ----------
    df : pandas.DataFrame
        :func:`polynomial_comparison` results (with its ``scale`` column,
        ``mean_k f(x_k)^2``, the loss of the zero estimator).
    exact_rtol : float
        A set counts as recovered exactly when its loss is at most
        ``exact_rtol * scale`` (1e-20: a relative RMS error of 1e-10, above the
        float64 round-off of LCC's interpolation at these degrees, ~1e-12, and far
        below GCC's approximation error).

    Returns
    -------
    pandas.DataFrame
        ``function, degree, code, N, K, S, mean, ci_low, ci_high, n, max_loss, exact_tol``.
    """
    out = summarise(df, ["function", "degree", "code", "N", "K", "S"], confidence=confidence)
    mx = df.groupby(["degree", "code", "S"])["loss"].max().rename("max_loss").reset_index()
    out = out.merge(mx, on=["degree", "code", "S"])
    scale = df.groupby("degree")["scale"].first()
    out["exact_tol"] = [exact_rtol * float(scale[d]) for d in out["degree"]]
    return out


# --------------------------------------------------------------------------- #
# Figures (drawn from saved summaries; matplotlib imported lazily)
# --------------------------------------------------------------------------- #
_COLORS = {"GCC": "C0", "BACC": "C3", "BSpline": "C2", "LCC": "C4"}


def _finish(fig):
    # Minor tick labels of log axes (2x10^1, 3x10^1, ...) overlap on short ranges.
    from matplotlib.ticker import NullFormatter

    for ax in fig.axes:
        if ax.get_xscale() == "log":
            ax.xaxis.set_minor_formatter(NullFormatter())
    fig.tight_layout()
    return fig


def _band(ax, x, g, color):
    # A t interval of a heavy-tailed loss can reach below 0; on log axes the band then
    # shows its upper half only (mean to upper end) instead of running off the axis.
    if {"ci_low", "ci_high"} <= set(g.columns):
        mean = g["mean"].to_numpy(float)
        lo = g["ci_low"].to_numpy(float)
        lo = np.where(np.isfinite(lo) & (lo > 0), lo, mean)
        hi = g["ci_high"].to_numpy(float)
        if np.all(np.isfinite(hi)) and np.any(hi > lo):
            ax.fill_between(x, lo, hi, color=color, alpha=0.15, lw=0)


def plot_n_sweep(summary, function: str, codes: Sequence[str], stragglers: Sequence[str] = ("worst", "random"),
                 power: float = 3.0):
    """Loss against N (log-log), one row per straggler model and one panel per code,
    one line per S, with the reference ``C ((S+1)/N)^power`` dashed.

    One constant C for every S, row and panel: the smallest that puts all GCC
    points on or below the reference (:func:`anchor_constant`), the theorem's
    form (a single C, uniform in N and S).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    sub = summary[(summary["sweep"] == "N") & (summary["function"] == function)]
    codes = [c for c in codes if c in set(sub["code"])]
    gcc_rows = sub[sub["code"] == "GCC"]
    C = anchor_constant(gcc_rows["mean"], worst_case_reference(gcc_rows["N"], gcc_rows["S"], power=power))
    s_values = sorted(sub["S"].unique())
    fig, axes = plt.subplots(len(stragglers), len(codes), figsize=(3.4 * len(codes), 3.0 * len(stragglers)),
                             sharey=True, squeeze=False)
    for row, straggler in enumerate(stragglers):
        part = sub[sub["straggler"] == straggler]
        for ax, code in zip(axes[row], codes):
            for i, S in enumerate(s_values):
                g = part[(part["code"] == code) & (part["S"] == S)].sort_values("N")
                color = plt.cm.viridis(i / max(1, len(s_values) - 1))
                if len(g):
                    ax.loglog(g["N"], g["mean"], "o-", ms=3, color=color, label=f"S={S}")
                    _band(ax, g["N"], g, color)
                n = np.array(sorted(sub[sub["S"] == S]["N"].unique()), dtype=float)
                ax.loglog(n, worst_case_reference(n, S, C, power), "--", color=color, lw=0.8)
            ax.set_title(f"{code}, {straggler} stragglers", fontsize=9)
            ax.grid(True, which="major", alpha=0.3)
            if row == len(stragglers) - 1:
                ax.set_xlabel("N (workers)")
        axes[row, 0].set_ylabel("loss")
    positive = sub["mean"][sub["mean"] > 0]
    if len(positive):
        axes[0, 0].set_ylim(positive.min() / 10, positive.max() * 10)
    axes[0, 0].legend(fontsize=7, title=f"dashed: C((S+1)/N)^{power:g}", title_fontsize=7)
    fig.suptitle(f"{function}: loss against N", fontsize=10)
    return _finish(fig)


def plot_s_sweep(summary, codes: Sequence[str], power: float = 3.0):
    """Loss against S + 1 at fixed N (one row per function, one column per straggler
    model), with ``C (S+1)^power`` fitted to GCC."""
    import matplotlib.pyplot as plt

    sub = summary[summary["sweep"] == "S"]
    functions = list(dict.fromkeys(sub["function"]))
    stragglers = sorted(sub["straggler"].unique(), reverse=True)
    fig, axes = plt.subplots(len(functions), len(stragglers), figsize=(4.2 * len(stragglers), 3.2 * len(functions)),
                             squeeze=False)
    for i, function in enumerate(functions):
        for ax, straggler in zip(axes[i], stragglers):
            part = sub[(sub["straggler"] == straggler) & (sub["function"] == function)]
            for code in codes:
                g = part[part["code"] == code].sort_values("S")
                if not len(g):
                    continue
                x = g["S"].to_numpy(float) + 1
                ax.loglog(x, g["mean"], "o-", ms=3, color=_COLORS.get(code), label=code)
                _band(ax, x, g, _COLORS.get(code))
            g = part[part["code"] == "GCC"]
            if len(g):
                x = np.sort(g["S"].unique()).astype(float) + 1
                C = anchor_constant(g["mean"], (g["S"].to_numpy(float) + 1) ** power)
                ax.loglog(x, C * x ** power, "k--", lw=0.8, label=f"C (S+1)^{power:g}")
            N = int(part["N"].iloc[0]) if len(part) else 0
            ax.set_title(f"{function[:24]}: {straggler}, N={N}", fontsize=9)
            ax.set_xlabel("S + 1")
            ax.grid(True, alpha=0.3)
        axes[i, 0].set_ylabel("loss")
    axes[0, 0].legend(fontsize=7)
    return _finish(fig)


def plot_probabilistic(summary, function: str):
    """E[loss] against N per p (GCC, BACC) with ``c log^3/N^3`` and ``c log^4/N^2``;
    the normalised ratio; the longest straggler run against ``log_{1/p} N``."""
    import matplotlib.pyplot as plt

    sub = summary[summary["function"] == function]
    p_values = sorted(sub["p"].unique())
    fig, axes = plt.subplots(3, len(p_values), figsize=(3.8 * len(p_values), 9.0), squeeze=False)
    for j, p in enumerate(p_values):
        part = sub[sub["p"] == p]
        ax = axes[0, j]
        for code in sorted(part["code"].unique()):
            g = part[part["code"] == code].sort_values("N")
            ax.loglog(g["N"], g["mean"], "o-", ms=3, color=_COLORS.get(code), label=code)
            _band(ax, g["N"], g, _COLORS.get(code))
        n = np.array(sorted(part["N"].unique()), dtype=float)
        for code, (lp, npow), style in (("GCC", (3, 3), "--"), ("BACC", (4, 2), ":")):
            g = part[part["code"] == code]
            if len(g):
                C = anchor_constant(g["mean"], log_rate_reference(g["N"], p, lp, npow))
                ax.loglog(n, log_rate_reference(n, p, lp, npow, C), "k" + style, lw=0.8,
                          label=f"c log^{lp}/N^{npow}")
        ax.set_title(f"p = {p:g}")
        ax.set_xlabel("N")
        ax.grid(True, alpha=0.3)
        ax = axes[1, j]
        for code in sorted(part["code"].unique()):
            g = part[part["code"] == code].sort_values("N")
            label = "E[loss] N^3/log^3" if code != "BACC" else "E[loss] N^2/log^4"
            ax.loglog(g["N"], g["ratio"], "o-", ms=3, color=_COLORS.get(code), label=f"{code}: {label}")
        ax.set_xlabel("N")
        ax.grid(True, alpha=0.3)
        ax = axes[2, j]
        g = part[part["code"] == part["code"].iloc[0]].sort_values("N")
        ax.plot(g["log_N"], g["longest_run_mean"], "o-", ms=3, label="mean longest run")
        ax.plot(g["log_N"], g["longest_run_max"], "s", ms=3, mfc="none", label="max over draws")
        ax.plot(g["log_N"], g["longest_run_erdos_renyi"], "k--", lw=0.8, label="log_{1/p}(N(1-p))")
        ax.set_xlabel("log_{1/p} N")
        ax.grid(True, alpha=0.3)
    axes[0, 0].set_ylabel("E[loss]")
    axes[1, 0].set_ylabel("normalised ratio")
    axes[2, 0].set_ylabel("longest straggler run")
    for row in range(3):
        axes[row, 0].legend(fontsize=7)
    fig.suptitle(f"{function}: Bernoulli(p) stragglers", fontsize=10)
    return _finish(fig)


def plot_noisy(summary, curve_summary, lam_marks: Mapping[str, float] | None = None):
    """Noisy workers: loss against N and S + 1 per rule, with ``N^{-3/5}`` and
    ``(S+1)^{8/5}`` references; the bias-variance curve over lambda_dec."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    styles = {"theory": ("C0", "o-"), "cv": ("C1", "s-"), "zero": ("C7", "^-")}
    ax = axes[0]
    nrows = summary[summary["sweep"] == "N"]
    for (rule, S), g in nrows.groupby(["rule", "S"]):
        color, style = styles.get(rule, ("k", "o-"))
        g = g.sort_values("N")
        alpha = 0.35 + 0.65 * (S == nrows["S"].max())
        ax.loglog(g["N"], g["mean"], style, ms=3, color=color, alpha=alpha, label=f"{rule}, S={S}")
    g = nrows[nrows["rule"] == "theory"]
    n = np.array(sorted(nrows["N"].unique()), dtype=float)
    C = anchor_constant(g["mean"], g["N"].to_numpy(float) ** -0.6 * (g["S"].to_numpy(float) + 1) ** 1.6)
    for S in sorted(g["S"].unique()):
        ax.loglog(n, C * n ** -0.6 * (S + 1) ** 1.6, "k--", lw=0.6)
    ax.set_xlabel("N")
    ax.set_ylabel("loss (noise-averaged)")
    ax.set_title("loss vs N; dashed: C (S+1)^{8/5} N^{-3/5}", fontsize=9)
    ax.legend(fontsize=6, ncol=2)
    ax.grid(True, alpha=0.3)
    ax = axes[1]
    srows = summary[summary["sweep"] == "S"]
    for rule, g in srows.groupby("rule"):
        color, style = styles.get(rule, ("k", "o-"))
        g = g.sort_values("S")
        ax.loglog(g["S"] + 1, g["mean"], style, ms=3, color=color, label=rule)
        _band(ax, g["S"] + 1, g, color)
    g = srows[srows["rule"] == "theory"]
    if len(g):
        x = np.sort(g["S"].unique()).astype(float) + 1
        C = anchor_constant(g["mean"], (g["S"].to_numpy(float) + 1) ** 1.6)
        ax.loglog(x, C * x ** 1.6, "k--", lw=0.8, label="C (S+1)^{8/5}")
        ax.set_title(f"loss vs S + 1, N = {int(g['N'].iloc[0])}", fontsize=9)
    ax.set_xlabel("S + 1")
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.3)
    ax = axes[2]
    c = curve_summary.sort_values("lam_dec")
    pos = c[c["lam_dec"] > 0]
    ax.loglog(pos["lam_dec"], pos["loss"], "k-", label="loss")
    ax.loglog(pos["lam_dec"], pos["bias2"], "C3--", label="bias^2")
    ax.loglog(pos["lam_dec"], pos["variance"], "C0:", label="variance")
    zero = c[c["lam_dec"] == 0]
    if len(zero):
        ax.axhline(float(zero["loss"].iloc[0]), color="y", lw=1, label="lambda = 0")
    for (name, lam), color in zip((lam_marks or {}).items(), ("C0", "C1", "C2")):
        ax.axvline(lam, color=color, lw=0.8, ls="-.", label=f"{name}: {lam:.1e}")
    ax.set_xlabel("lambda_dec")
    ax.set_title(f"bias-variance, N={int(c['N'].iloc[0])}, S={int(c['S'].iloc[0])}", fontsize=9)
    ax.legend(fontsize=6)
    ax.grid(True, alpha=0.3)
    return _finish(fig)


def plot_polynomial(summary):
    """Loss against S for GCC and LCC, one panel per degree, with LCC's threshold marked."""
    import matplotlib.pyplot as plt

    degrees = sorted(summary["degree"].unique())
    fig, axes = plt.subplots(1, len(degrees), figsize=(5 * len(degrees), 3.6), squeeze=False)
    for ax, degree in zip(axes[0], degrees):
        part = summary[summary["degree"] == degree]
        for code in ("GCC", "LCC"):
            g = part[part["code"] == code].sort_values("S")
            y = np.clip(g["mean"].to_numpy(float), 1e-32, None)
            ax.semilogy(g["S"], y, "o-", ms=3, color=_COLORS[code], label=code)
            _band(ax, g["S"], g, _COLORS[code])
        N, K = int(part["N"].iloc[0]), int(part["K"].iloc[0])
        s_star = N - (K - 1) * int(degree) - 1
        if s_star >= 0:
            ax.axvline(s_star + 0.5, color="k", ls="--", lw=0.8, label=f"LCC threshold: S <= {s_star}")
        ax.set_title(f"deg f = {degree}, K = {K}, N = {N}")
        ax.set_xlabel("S (stragglers)")
        ax.set_ylabel("loss (95% CI)")
        ax.legend(fontsize=7)
        ax.grid(True, alpha=0.3)
    return _finish(fig)


def plot_lambda_sensitivity(mean_table, best_table, s_show: int):
    """Heat map of log10 loss over (lambda_enc, lambda_dec) at ``S = s_show``; optimal lambdas vs S."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    part = mean_table[mean_table["S"] == s_show]
    grid = part.pivot(index="lam_enc", columns="lam_dec", values="loss")
    im = axes[0].imshow(np.log10(grid.to_numpy()), origin="lower", aspect="auto", cmap="viridis")
    axes[0].set_xticks(range(grid.shape[1]), [f"{v:.0e}" if v else "0" for v in grid.columns], rotation=60,
                       fontsize=7)
    axes[0].set_yticks(range(grid.shape[0]), [f"{v:.0e}" if v else "0" for v in grid.index], fontsize=7)
    axes[0].set_xlabel("lambda_dec")
    axes[0].set_ylabel("lambda_enc")
    axes[0].set_title(f"log10 loss, S = {s_show}")
    fig.colorbar(im, ax=axes[0])
    ax = axes[1]
    b = best_table.sort_values("S")
    ax.semilogy(b["S"], np.clip(b["lam_enc"], 1e-12, None), "o-", label="best lambda_enc (0 shown at 1e-12)")
    ax.semilogy(b["S"], np.clip(b["lam_dec"], 1e-12, None), "s-", label="best lambda_dec (0 shown at 1e-12)")
    ax.set_xlabel("S")
    ax.set_ylabel("optimal lambda (grid)")
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.3)
    return _finish(fig)


def lambda_optimum(sens):
    """Per S: the grid optimum and the loss increase when one lambda moves one grid step.

    Parameters
    ----------
    sens : pandas.DataFrame
        :func:`lambda_sensitivity` results (one sigma).

    Returns
    -------
    mean_table, best_table : pandas.DataFrame
        ``mean_table``: mean loss per (S, lam_enc, lam_dec). ``best_table``: per S
        the best pair, its loss, the loss at (0, 0), and ``worst_increase_x10``: the
        largest relative loss increase over the four grid neighbours of the optimum
        (one step of lam_enc or of lam_dec; on a grid of decades a step is a
        factor 10, and 0 neighbours the smallest positive value). App. E reports
        about 3% RMSE for a factor 10.
    """
    import pandas as pd

    mean_table = sens.groupby(["function", "N", "S", "sigma", "lam_enc", "lam_dec"], as_index=False)["loss"].mean()
    enc_values = np.sort(mean_table["lam_enc"].unique())
    dec_values = np.sort(mean_table["lam_dec"].unique())
    rows = []
    for S, g in mean_table.groupby("S"):
        best = g.loc[g["loss"].idxmin()]
        le, ld, loss = float(best["lam_enc"]), float(best["lam_dec"]), float(best["loss"])
        i, j = int(np.searchsorted(enc_values, le)), int(np.searchsorted(dec_values, ld))
        neighbours = [(enc_values[k], ld) for k in (i - 1, i + 1) if 0 <= k < len(enc_values)]
        neighbours += [(le, dec_values[k]) for k in (j - 1, j + 1) if 0 <= k < len(dec_values)]
        increases = []
        for le2, ld2 in neighbours:
            hit = g[(g["lam_enc"] == le2) & (g["lam_dec"] == ld2)]
            if len(hit):
                increases.append(float(hit["loss"].iloc[0]) / loss - 1.0)
        zero = g[(g["lam_enc"] == 0) & (g["lam_dec"] == 0)]
        rows.append({"S": int(S), "lam_enc": le, "lam_dec": ld, "loss": loss,
                     "loss_at_zero": float(zero["loss"].iloc[0]) if len(zero) else np.nan,
                     "worst_increase_x10": max(increases) if increases else np.nan})
    return mean_table, pd.DataFrame(rows)


def calibrate_theory_constant(f, X, n_workers: int, n_stragglers: int, lam_grid: Sequence[float], *,
                              sigma: float, trials: int = 20, seed: int = 0, points: str = "equispaced"):
    """The constant of :func:`theory_lambda_dec` that matches the best lambda at one pilot (N, S).

    The proof's constant is not numeric; the schedule's *shape* in (N, S, sigma)
    is the theory's, and this fixes its scale once, at the smallest N of a sweep,
    by the grid optimum of :func:`noisy_lambda_curve`. The same constant is then
    used at every (N, S).

    Returns
    -------
    const : float
    curve : pandas.DataFrame
        The pilot's :func:`noisy_lambda_curve` (for plotting).
    """
    curve = noisy_lambda_curve(f, X, n_workers, n_stragglers, [l for l in lam_grid if l > 0], sigma=sigma,
                               trials=trials, seed=seed, points=points)
    mean = curve.groupby("lam_dec")["loss"].mean()
    lam_best = float(mean.idxmin())
    energy = curvature_energy(f, X, make_code("GCC", len(X), int(n_workers), points=points))
    unit = theory_lambda_dec(n_workers, n_stragglers, sigma, energy=energy, const=1.0, clip=False)
    return lam_best / unit, curve


def slope_view(slopes, index: Sequence[str], columns: str = "code"):
    """A slopes table as ``"slope [low, high]"`` strings, pivoted for display.

    Parameters
    ----------
    slopes : pandas.DataFrame
        A saved ``slopes`` table (:data:`SLOPE_COLUMNS`).
    index : sequence of str
        Row keys, e.g. ``["function", "straggler", "fixed"]``; ``fixed`` labels
        (``"S=10"``) sort by their number, not as text.
    columns : str
        Column key.

    Returns
    -------
    pandas.DataFrame
    """
    text = [f"{s:.2f} [{lo:.2f}, {hi:.2f}]" if s == s else "-"
            for s, lo, hi in zip(slopes["slope"], slopes["ci_low"], slopes["ci_high"])]
    table = slopes.assign(slope_ci=text).pivot_table(index=list(index), columns=columns, values="slope_ci",
                                                     aggfunc="first")

    def key(level):
        if level.name == "fixed":
            return level.map(lambda v: (str(v).split("=")[0], float(str(v).split("=")[1]) if "=" in str(v) else 0.0))
        return level

    return table.sort_index(key=key)
