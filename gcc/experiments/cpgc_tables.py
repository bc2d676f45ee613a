"""The experiments of the CPGC chapter: completion-time tables, convergence runs, decoding cost.

One section per notebook (``cpgc_completion_time``, ``cpgc_convergence``, ``cpgc_decoding_cost``);
statistics in the vocabulary of :func:`gcc.summary.summarize`, pivoted by ``*_wide`` and ``*_display``.
"""
from __future__ import annotations

import time
from numbers import Integral

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from gcc.cpgc import ALIASES, LABELS, Master, make_code, simulate, worker_speeds
from gcc.cpgc.closed_forms import gc_mean_time, mds_mean_time
from gcc.cpgc.codes import SCHEME
from gcc.cpgc.master import TOLERANCE
from gcc.cpgc.regression import gradient_descent, synthetic_regression
from gcc.summary import summarize
from gcc.validation import Interval, ListOf, validate_params

from .plotting import figure, finish, legend_outside, scheme_color, scheme_kw
from .cpgc_published import TABLE_III, TABLE_IV, agreement_verdict

__all__ = [
    "COMPUTATION_SCHEMES", "COMMUNICATION_SCHEMES", "CLOSED_FORM_BAND", "completion_time_table",
    "completion_time_wide", "code_variability_table", "plot_completion_time",
    "convergence_experiment", "convergence_curves", "convergence_summary", "time_to_target",
    "plot_convergence",
    "measure_decoding", "decoding_sweep", "decoding_summary", "decoding_display", "plot_decoding_cost",
]

#: Schemes of the coded-computation table (r = len(degrees) task units per worker).
COMPUTATION_SCHEMES = ("rcsc", "icassp-mds", "uc-mmc", "uc-smc", "mds")
#: Schemes of the coded-communication table (load sum(degrees) partial gradients per worker).
COMMUNICATION_SCHEMES = ("rcsc", "uc-mmc", "uc-smc", "gc")

_COUNT = Interval(Integral, 1, None)


# -- completion time -------------------------------------------------------------------------------

def _closed_form(code, n_workers: int, mu: float, alpha: float) -> tuple[float, float, str]:
    """Exact E[T], messages and the formula's words of a threshold code (MDS, GC); NaN otherwise."""
    if code.name == "mds":
        return (mds_mean_time(n_workers, code.load, code.n_blocks, mu, alpha), float(code.n_blocks),
                "closed form r(a + (H_K - H_{K-k})/mu)")
    if code.name == "gc":
        return (gc_mean_time(n_workers, code.load, mu, alpha), float(n_workers - code.load + 1),
                "closed form r(a + (H_K - H_{r-1})/mu)")
    return np.nan, np.nan, ""


#: agreement band of a Monte Carlo mean with an exact closed form (relative)
CLOSED_FORM_BAND = 0.01


@validate_params({"trials": Interval(Integral, 2, None), "n_workers": _COUNT})
def completion_time_table(tolerances=(0.0, 0.15, 0.3), trials: int = 2000, seed: int = 0, n_workers: int = 40,
                          mu: float = 10.0, alpha: float = 0.01, degrees=(1, 2, 3),
                          computation=COMPUTATION_SCHEMES, communication=COMMUNICATION_SCHEMES):
    """Mean completion time and messages per iteration for both settings and every tolerance.

    One code per scheme (``code_seed=seed``), its own delays per (scheme, setting, q).

    Returns
    -------
    pandas.DataFrame
        Rows ``metric`` = ``"time"`` and ``"messages"`` per (scheme, setting, tolerance): the columns of
        :meth:`gcc.cpgc.SimulationResult.summary` plus ``published`` (Tables III and IV at the paper's
        setup, else NaN), ``closed_form`` (MDS, GC), ``reference`` (published, else closed form) and its
        ``reference_source``, ``relative_gap`` and ``verdict`` (:mod:`~gcc.experiments.cpgc_published`'s
        ``agreement_verdict``: within 2 % of a published number, 1 % of a closed form; or ``"not compared"``).

    Examples
    --------
    >>> from gcc.experiments.cpgc_tables import completion_time_table
    >>> t = completion_time_table(tolerances=(0.0,), trials=3000, computation=("mds",), communication=())
    >>> t[["scheme", "metric", "published", "verdict"]]
      scheme    metric  published           verdict
    0    mds      time     0.1572  agrees within 2%
    1    mds  messages    14.0000  agrees within 2%
    """
    paper_setup = (n_workers, mu, alpha, tuple(degrees)) == (40, 10.0, 0.01, (1, 2, 3))
    tables = {"computation": ("draft Table III", TABLE_III), "communication": ("draft Table IV", TABLE_IV)}
    parts = []
    jobs = [(s, "computation") for s in computation] + [(s, "communication") for s in communication]
    for n, (scheme, setting) in enumerate(jobs):
        for m, q in enumerate(tolerances):
            res = simulate(scheme, n_workers=n_workers, tolerance=q, trials=trials, seed=seed + 1000 * n + m,
                           mu=mu, alpha=alpha, degrees=degrees, setting=setting, code_seed=seed)
            part = res.summary()
            label, table = tables[setting]
            pub = table.get((res.scheme, float(q))) if paper_setup else None
            cf_time, cf_msgs, formula = _closed_form(res.code, n_workers, mu, alpha)
            is_time = (part["metric"] == "time").to_numpy()
            part["published"] = np.nan if pub is None else np.where(is_time, pub[0], pub[1])
            part["closed_form"] = np.where(is_time, cf_time, cf_msgs)
            use_pub = part["published"].notna()
            part["reference"] = np.where(use_pub, part["published"], part["closed_form"])
            part["reference_source"] = np.where(use_pub, label, formula or "not in the draft's tables")
            part["relative_gap"] = part["mean"] / part["reference"] - 1.0
            verdicts = []
            for ok_pub, ref, lo, hi in zip(use_pub, part["reference"], part["ci_low"], part["ci_high"]):
                band = 0.02 if ok_pub else CLOSED_FORM_BAND
                verdicts.append("not compared" if not np.isfinite(ref) else
                                agreement_verdict(lo / ref - 1.0, hi / ref - 1.0, band))
            part["verdict"] = verdicts
            parts.append(part)
    return pd.concat(parts, ignore_index=True)


def completion_time_wide(table):
    """One row per (scheme, setting, tolerance) for printing: ``mean_time``, ``time_half_width``,
    ``mean_messages``, ``messages_half_width``, ``reference`` and ``verdict`` (of the time),
    ``published_messages`` and ``messages_verdict`` (order of ``table``)."""
    t, m = (table[table["metric"] == metric].set_index(["scheme", "setting", "tolerance"])
            for metric in ("time", "messages"))
    return pd.DataFrame({"mean_time": t["mean"], "time_half_width": t["half_width"], "mean_messages": m["mean"],
                         "messages_half_width": m["half_width"], "reference": t["reference"], "verdict": t["verdict"],
                         "published_messages": m["published"], "messages_verdict": m["verdict"]}).reset_index()


@validate_params({"n_codes": _COUNT})
def code_variability_table(n_codes: int = 10, tolerances=(0.0, 0.15, 0.3), trials: int = 2000, seed: int = 0,
                           n_workers: int = 40, mu: float = 10.0, alpha: float = 0.01, degrees=(1, 2, 3)):
    """E[T] of RCSC for several independently drawn codes (ambiguity 3: one code per run or per trial).

    The same delays (``seed``) are used for every code, so the spread across codes is the effect of
    the code alone.

    Returns
    -------
    pandas.DataFrame
        :meth:`gcc.cpgc.SimulationResult.summary` rows plus ``code_draw`` (0 .. n_codes - 1, drawn
        with ``code_seed = 10000 + code_draw``) and ``shifts``.
    """
    parts = []
    for c in range(n_codes):
        for q in tolerances:
            res = simulate("rcsc", n_workers=n_workers, tolerance=q, trials=trials, seed=seed, mu=mu,
                           alpha=alpha, degrees=degrees, code_seed=10_000 + c)
            part = res.summary()
            part["code_draw"] = c
            part["shifts"] = " ".join(map(str, res.code.params["shifts"]))
            parts.append(part)
    return pd.concat(parts, ignore_index=True)


def plot_completion_time(table, title: str = ""):
    """E[T] (with its 95 % interval) and messages against q, one column per setting.

    Returns
    -------
    matplotlib.figure.Figure
    """
    wide = completion_time_wide(table)
    fig, axes = figure(4, ncols=2, height=5.4, sharex=True)
    axes = axes.reshape(2, 2)
    for col, setting in enumerate(("computation", "communication")):
        sub = wide[wide["setting"] == setting]
        for scheme, grp in sub.groupby("scheme", sort=False):
            kw = dict(label=LABELS[scheme], ls="-", **scheme_kw(scheme))
            axes[0, col].errorbar(grp["tolerance"], grp["mean_time"], yerr=grp["time_half_width"], capsize=3, **kw)
            axes[1, col].plot(grp["tolerance"], grp["mean_messages"], **kw)
        axes[0, col].set_title(f"coded {setting}")
        axes[0, col].set_yscale("log")
        axes[1, col].set_xlabel("tolerance q")
        axes[0, col].legend(loc="best")
    axes[0, 0].set_ylabel("mean completion time E[T]")
    axes[1, 0].set_ylabel("messages per iteration")
    fig.suptitle(title)
    return finish(fig)


# -- convergence of gradient descent ---------------------------------------------------------------

@validate_params({"schemes": ListOf(SCHEME), "tolerances": ListOf(TOLERANCE), "n_runs": _COUNT,
                  "iterations": _COUNT})
def convergence_experiment(schemes=("rcsc", "uc-mmc", "mds"), tolerances=(0.0, 0.15, 0.3), n_runs: int = 10,
                           iterations: int = 80, dim: int = 1000, n_train: int = 2000, n_test: int = 400,
                           n_workers: int = 40, eta: float = 0.1, mu: float = 10.0, alpha: float = 0.01,
                           degrees=(1, 2, 3), seed: int = 0):
    """Test error against iteration and cumulative simulated time, per scheme, tolerance and run.

    Each run draws a fresh data set and a fresh code; every (scheme, tolerance) pair gets its own
    delays (``trials = iterations`` independent iterations of :func:`gcc.cpgc.simulate`). Schemes
    without partial recovery (MDS, GC) always update every block.

    Returns
    -------
    pandas.DataFrame
        Tidy rows: ``scheme, tolerance, run, iteration, time, test_error, blocks_recovered``
        (iteration 0 is the starting point, at time 0).

    Examples
    --------
    >>> from gcc.experiments.cpgc_tables import convergence_experiment
    >>> rows = convergence_experiment(schemes=("rcsc",), tolerances=(0.3,), n_runs=1, iterations=3,
    ...                               dim=40, n_train=80, n_test=20, n_workers=8)
    >>> rows[["iteration", "blocks_recovered"]].to_numpy().T.tolist()     # at least ceil(8 * 0.7) = 6
    [[0, 1, 2, 3], [8, 6, 6, 8]]
    """
    schemes = [ALIASES.get(s, s) for s in schemes]
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
        steps = np.arange(iterations + 1)
        rows += [pd.DataFrame({"scheme": scheme, "tolerance": q, "run": run, "iteration": steps,
                               "time": times[p], "test_error": errors[p], "blocks_recovered": counts[p]})
                 for p, (scheme, q) in enumerate(pairs)]
    return pd.concat(rows, ignore_index=True)


_CONVERGENCE_METRICS = ["test_error", "time", "blocks_recovered"]


def convergence_curves(data, by=("dim", "scheme", "tolerance")):
    """Mean (and interval) over the runs of the error, the time and the blocks at every iteration.

    Returns
    -------
    pandas.DataFrame
        :func:`gcc.summary.summarize` of ``test_error``, ``time``, ``blocks_recovered`` by
        ``by + ("iteration",)`` (long: one row per metric).
    """
    return summarize(data, _CONVERGENCE_METRICS, by=[*by, "iteration"])


def convergence_summary(data, by=("dim", "scheme", "tolerance")):
    """The same statistics after the last iteration (:func:`gcc.summary.summarize`, long)."""
    last = data[data["iteration"] == data["iteration"].max()]
    return summarize(last, _CONVERGENCE_METRICS, by=list(by))


def _mean_curves(curves, by):
    wide = curves.pivot_table(index=[*by, "iteration"], columns="metric", values="mean")
    return wide.reset_index()


def time_to_target(curves, by=("dim", "scheme", "tolerance"), reference: str = "mds"):
    """First cumulative (mean) time at which the mean error falls below a target.

    The target of each ``dim`` is the largest mean error that ``reference`` (full gradient
    descent for MDS) reaches after half the iterations, over its tolerances.

    Returns
    -------
    pandas.DataFrame
        ``by`` plus ``target`` and ``time_to_target`` (NaN when never reached within the run).
    """
    by = list(by)
    mean = _mean_curves(curves, by)
    half = mean["iteration"].max() // 2
    target = (mean[(mean["scheme"] == reference) & (mean["iteration"] == half)]
              .groupby("dim")["test_error"].max().rename("target"))
    mean = mean.merge(target, on="dim", how="left")
    reached = mean[mean["test_error"] <= mean["target"]].groupby(by)["time"].min().rename("time_to_target")
    out = mean.groupby(by)["target"].first().to_frame().join(reached)
    return out.reset_index()


def plot_convergence(curves, dim: int, title: str = "", ylabel: str = "mean test error"):
    """Mean test error against the iteration and against cumulative simulated time, for one ``dim``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    mean = _mean_curves(curves[curves["dim"] == dim], ["scheme", "tolerance"])
    styles = {q: ls for q, ls in zip(sorted(mean["tolerance"].unique()), ["-", "--", ":", "-."])}
    fig, axes = figure(2, height=3.3, sharey=True)
    for (scheme, q), grp in mean.groupby(["scheme", "tolerance"], sort=False):
        kw = dict(color=scheme_color(scheme), ls=styles[q])
        axes[0].plot(grp["iteration"], grp["test_error"], **kw)
        axes[1].plot(grp["time"], grp["test_error"], **kw)
    axes[0].set_xlabel("iteration")
    axes[1].set_xlabel("cumulative simulated time")
    axes[0].set_ylabel(ylabel)
    for ax in axes:
        ax.set_yscale("log")
    # Two short legends (colour: scheme, line style: tolerance) instead of one entry per pair.
    schemes = list(dict.fromkeys(mean["scheme"]))
    handles = [Line2D([], [], color=scheme_color(c), label=LABELS[c]) for c in schemes]
    handles += [Line2D([], [], color="0.3", ls=ls, label=f"q = {q:g}") for q, ls in styles.items()]
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles))
    fig.suptitle(title)
    return finish(fig)


# -- decoding cost ---------------------------------------------------------------------------------

@validate_params({"n_workers": _COUNT, "dim": _COUNT, "tolerance": TOLERANCE, "trials": _COUNT})
def measure_decoding(scheme: str = "rcsc", n_workers: int = 40, dim: int = 1000, tolerance: float = 0.0,
                     trials: int = 5, seed: int = 0):
    """Measured decoding time and operation count of one iteration, per trial (the paper's delays and degrees).

    The master receives the actual block products (length ``b = ceil(d / n_blocks)``) in the arrival
    order of the trial's speeds until complete, then decodes; only the master's work is timed.

    Parameters
    ----------
    scheme : str
        Any scheme of :func:`gcc.cpgc.make_code` but ``"gc"`` (it decodes a sum, not per-block values).
    n_workers, dim : int
        K and d, the length of ``W theta``.
    tolerance, trials, seed
        As in :func:`gcc.cpgc.simulate` (``mu = 10``, ``alpha = 0.01``, ``degrees = (1, 2, 3)``).

    Returns
    -------
    pandas.DataFrame
        Rows ``scheme, n_workers, dim, trial, decode_seconds, ops, ops_peel, ops_rank, messages,
        blocks_recovered, max_abs_error`` (error of the decoded blocks against the true products).

    Examples
    --------
    >>> from gcc.experiments.cpgc_tables import measure_decoding
    >>> t = measure_decoding("mds", n_workers=12, dim=1200, trials=1)
    >>> int(t["ops"][0]), bool(t["max_abs_error"][0] < 1e-10)     # 2 k^3 / 3 + 2 k^2 (d / k), k = 4
    (9643, True)
    """
    K, d, q = n_workers, dim, float(tolerance)
    rng = np.random.default_rng(seed)
    code = make_code(scheme, K, seed=rng)
    b = -(-d // code.n_blocks)
    rows = []
    for trial in range(trials):
        truth = rng.standard_normal((code.n_blocks, b))
        speeds = worker_speeds(rng, 1, K)[0]
        times = speeds[:, None] * code.message_units()
        # Results are computed outside the timed region: only the master's work is measured.
        arrivals = []
        for flat in np.argsort(times, axis=None, kind="stable"):
            i, j = divmod(int(flat), code.n_messages)
            rows_j = code.message_rows(j)
            arrivals.append((i, j, code.coefficients[i, rows_j] @ truth))
        master = Master(code, q)
        start = time.perf_counter()
        for i, j, value in arrivals:
            if master.receive(i, j, value):
                break
        decoded = master.decode()
        elapsed = time.perf_counter() - start
        rec = master.recovered
        err = float(np.max(np.abs(decoded[rec] - truth[rec]))) if rec.any() else float("nan")
        rows.append({"scheme": code.name, "n_workers": K, "dim": d, "trial": trial, "decode_seconds": elapsed,
                     "ops": master.ops["peel"] + master.ops["rank"], "ops_peel": master.ops["peel"],
                     "ops_rank": master.ops["rank"], "messages": master.n_messages,
                     "blocks_recovered": int(rec.sum()), "max_abs_error": err})
    return pd.DataFrame(rows)


def decoding_sweep(schemes, dims, n_workers_grid, fixed_dim: int, fixed_workers: int, trials: int = 5,
                   tolerance: float = 0.0, seed: int = 0):
    """:func:`measure_decoding` over d at K = ``fixed_workers`` (``sweep = "d"``) and over K at
    d = ``fixed_dim`` (``sweep = "K"``), every point with the same ``seed``."""
    points = [(fixed_workers, d, "d") for d in dims] + [(K, fixed_dim, "K") for K in n_workers_grid]
    parts = []
    for scheme in schemes:
        for K, d, sweep in points:
            part = measure_decoding(scheme, n_workers=K, dim=d, tolerance=tolerance, trials=trials, seed=seed)
            part["sweep"] = sweep
            parts.append(part)
    return pd.concat(parts, ignore_index=True)


_DECODING_METRICS = ["ops", "ops_peel", "ops_rank", "decode_seconds", "messages", "max_abs_error"]
_DECODING_KEYS = ["sweep", "scheme", "n_workers", "dim"]


def decoding_summary(data):
    """:func:`gcc.summary.summarize` of the decoding measurements, plus ``median`` and ``max``.

    Returns
    -------
    pandas.DataFrame
        ``sweep, scheme, n_workers, dim, metric``, the summary columns, ``median`` and ``max``.
    """
    summary = summarize(data, _DECODING_METRICS, by=_DECODING_KEYS)
    groups = data.groupby(_DECODING_KEYS)[_DECODING_METRICS]
    extra = groups.median().stack().rename("median").to_frame().join(groups.max().stack().rename("max"))
    extra.index = extra.index.set_names("metric", level=-1)
    return summary.merge(extra.reset_index(), on=[*_DECODING_KEYS, "metric"], how="left")


def decoding_display(summary):
    """One row per point for printing: mean ``ops``, ``ops_peel``, ``ops_rank``, ``messages``, median
    ``seconds`` and the largest ``max_abs_error``."""
    wide = summary.pivot_table(index=_DECODING_KEYS, columns="metric", values=["mean", "median", "max"])
    out = wide["mean"][["ops", "ops_peel", "ops_rank"]].copy()
    out["seconds"] = wide["median"]["decode_seconds"]
    out["messages"] = wide["mean"]["messages"]
    out["max_abs_error"] = wide["max"]["max_abs_error"]
    out.columns.name = None
    return out.reset_index()


def plot_decoding_cost(summary, fixed_workers: int, fixed_dim: int):
    """Operations (mean) and master time (median) against d and against K, log-log.

    Returns
    -------
    matplotlib.figure.Figure
    """
    table = decoding_display(summary)
    fig, axes = figure(4, ncols=2, height=5.4)
    axes = axes.reshape(2, 2)
    for col, (sweep, xcol, label) in enumerate([("d", "dim", f"d (K = {fixed_workers})"),
                                                 ("K", "n_workers", f"K (d = {fixed_dim})")]):
        sub = table[table["sweep"] == sweep]
        for scheme, grp in sub.groupby("scheme", sort=False):
            grp = grp.sort_values(xcol)
            kw = dict(label=LABELS[scheme], ls="-", **scheme_kw(scheme))
            axes[0, col].plot(grp[xcol], grp["ops"], **kw)
            axes[1, col].plot(grp[xcol], grp["seconds"], **kw)
        for row, ylabel in enumerate(["multiply-adds", "master time (s, median)"]):
            ax = axes[row, col]
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(label)
            if col == 0:
                ax.set_ylabel(ylabel)
    legend_outside(fig, axes[0, :1])
    fig.suptitle("Decoding cost of one iteration (q = 0)")
    return finish(fig)
