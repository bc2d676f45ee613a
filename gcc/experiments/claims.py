"""The claims table: every rate the papers state, beside the rate measured here.

Each rate notebook saves a ``slopes`` table (least-squares log-log slopes with
confidence intervals, :func:`gcc.summary.slope_table`, columns
:data:`gcc.experiments.slopes.RATE_SLOPE_COLUMNS`); this module reads them
from the results root, matches each paper claim with the measurements that test
it and gives a verdict. The ``claims_table`` notebook saves the result as
``_build/results/claims_table/results.csv`` and renders it on the
Reproducibility page.

Verdicts
--------
The papers' rates are *upper bounds*, ``loss <= C x^r``; a measured log-log
slope ``b`` with interval ``[lo, hi]`` is

* ``consistent`` when ``lo <= r <= hi`` (the bound is tight here);
* ``steeper (bound holds)`` for a decay in N with ``hi < r`` (faster decay);
* ``slower growth (bound holds)`` for a growth in S with ``hi < r``;
* ``violated`` for a decay in N with ``lo > r`` (slower decay than claimed);
* for a growth in S with ``lo > r``: faster growth at fixed N does not by
  itself break a joint bound ``C ((S+1)/N)^r`` while ``S + 1 <= N``; the verdict
  is ``steeper in S (joint bound holds)`` when the joint ratio
  ``max_S loss / ((S+1)^r N^-q)`` over the N sweep (cells with
  ``N >= 4 (S + 1)``) decreases with N (the upper end of its slope's interval
  is <= 0), ``steeper in S (joint ratio flat: consistent)`` when the interval
  contains 0, and ``violated`` when it grows (interval above 0);
* ``bounded`` / ``decays (bound holds)`` / ``violated`` for a normalised ratio
  (probabilistic rates) whose slope in N must not be positive;
* for LCC's recovery threshold, ``consistent`` when the largest S recovered
  exactly equals ``N - (K - 1) deg f - 1``.

Imports numpy, the core (:mod:`gcc.results`, :func:`gcc.metrics.loglog_slope`) and
:func:`gcc.experiments.plotting.finish`; pandas and matplotlib inside the functions.

References
----------
.. [1] Moradi, Tahmasebi, Maddah-Ali, NeurIPS 2024, arXiv:2406.00300 (Thm 1, 2, 4; App. C.1, D).
.. [2] Moradi, Maddah-Ali, ISIT 2025, arXiv:2502.00645.
.. [3] Moradi, Tahmasebi, Maddah-Ali, arXiv:2608.28910 (abstract).
.. [4] Jahani-Nezhad, Maddah-Ali, BACC, arXiv:2009.08327.
.. [5] Yu et al., Lagrange coded computing, AISTATS 2019.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from gcc import results
from gcc.metrics import loglog_slope

from .plotting import finish

__all__ = ["Claim", "CLAIMS", "exponent_verdict", "ratio_verdict", "build_claims_table",
           "CLAIM_COLUMNS", "plot_claims", "verdict_counts"]

#: The joint-ratio check uses cells with N >= JOINT_MIN_RATIO (S + 1), the window of the N-slopes.
JOINT_MIN_RATIO = 4.0

#: Column order of the saved claims table.
CLAIM_COLUMNS = ["claim", "source", "statement", "scheme", "quantity", "context", "claimed",
                 "measured", "ci_low", "ci_high", "n_points", "verdict", "note", "notebook"]


@dataclass(frozen=True)
class Claim:
    """One rate a paper states, and where its measurement lives.

    Attributes
    ----------
    id : str
        Short key, e.g. ``"thm4-noiseless-N"``.
    source : str
        Paper and place, e.g. ``"NeurIPS'24 Thm 1, Thm 4; 2608.28910"``.
    statement : str
        The rate as the paper states it.
    scheme : str
        The scheme it is about, a key of :mod:`gcc.codes` (``"gcc"``, ``"bacc"``, ``"lcc"``).
    quantity : str
        What is measured, e.g. ``"slope of log loss vs log N"``.
    kind : {"decay", "growth", "ratio", "threshold", "untested"}
    claimed : float
        The exponent (or threshold) the claim implies.
    notebook : str
        The rate notebook whose saved results hold the measurement.
    select : dict
        Column filters applied to that notebook's ``slopes`` table.
    joint : tuple or None
        ``(r_S, q_N)`` of a joint bound ``(S+1)^r_S N^-q_N``, for growth claims.
    note : str
        Ambiguity or caveat shown beside the verdict.
    """

    id: str
    source: str
    statement: str
    scheme: str
    quantity: str
    kind: str
    claimed: float
    notebook: str
    select: dict = field(default_factory=dict)
    joint: tuple | None = None
    note: str = ""


CLAIMS: tuple[Claim, ...] = (
    Claim("thm4-noiseless-N", "NeurIPS'24 Thm 1 & 4; 2608.28910 abstract",
          "R = O(S^3 N^-3), noiseless, worst case", "gcc", "slope of log loss vs log N at fixed S",
          "decay", -3.0, "worst_case_rate",
          {"scheme": "gcc", "variable": "N", "straggler": "worst"}),
    Claim("thm4-noiseless-S", "NeurIPS'24 Thm 1 & 4", "R = O(S^3 N^-3), noiseless, worst case", "gcc",
          "slope of log loss vs log(S+1) at fixed N", "growth", 3.0, "worst_case_rate",
          {"scheme": "gcc", "variable": "S+1", "straggler": "worst"}, joint=(3.0, 3.0)),
    Claim("bacc-N", "NeurIPS'24 App. C.1 (quoting BACC)", "R_BACC = O(S^4 N^-2)", "bacc",
          "slope of log loss vs log N at fixed S", "decay", -2.0, "worst_case_rate",
          {"scheme": "bacc", "variable": "N", "straggler": "worst"}),
    Claim("bacc-S4", "NeurIPS'24 App. C.1 (as stated)", "R_BACC = O(S^4 N^-2)", "bacc",
          "slope of log loss vs log(S+1) at fixed N", "growth", 4.0, "worst_case_rate",
          {"scheme": "bacc", "variable": "S+1", "straggler": "worst"}, joint=(4.0, 2.0),
          note="Ambiguity (f): the quoted sup-norm bound squared gives S^6 N^-2; see bacc-S6."),
    Claim("bacc-S6", "BACC bound of App. C.1, squared literally", "R_BACC = O(S^6 N^-2)", "bacc",
          "slope of log loss vs log(S+1) at fixed N", "growth", 6.0, "worst_case_rate",
          {"scheme": "bacc", "variable": "S+1", "straggler": "worst"}, joint=(6.0, 2.0),
          note="Ambiguity (f): (1+R) sin((S+1)pi/2N) with R ~ S^2 squares to S^6/N^2."),
    Claim("thm4-noisy-N", "NeurIPS'24 Thm 2 & 4 (proof B.2)", "R = O(S^{8/5} N^{-3/5}), noisy workers",
          "gcc", "slope of log loss vs log N at fixed S", "decay", -0.6, "noisy_rate",
          {"scheme": "gcc", "variable": "N", "rule": ["theory", "cv"], "straggler": "worst"},
          note="Ambiguity (e): Thm 2 as extracted reads (sigma^2/(N-S))^{3/8}; the proof gives 3/5."),
    Claim("thm2-noisy-N-3/8", "NeurIPS'24 Thm 2 (statement as extracted)", "R = O(N^{-3/8}), noisy workers",
          "gcc", "slope of log loss vs log N at fixed S", "decay", -0.375, "noisy_rate",
          {"scheme": "gcc", "variable": "N", "rule": ["theory", "cv"], "straggler": "worst"},
          note="Ambiguity (e): the weaker reading; any slope <= -3/5 also satisfies it."),
    Claim("thm4-noisy-S", "NeurIPS'24 Thm 2 & 4", "R = O(S^{8/5} N^{-3/5}), noisy workers", "gcc",
          "slope of log loss vs log(S+1) at fixed N", "growth", 1.6, "noisy_rate",
          {"scheme": "gcc", "variable": "S+1", "rule": ["theory", "cv"], "straggler": "worst"}, joint=(1.6, 0.6)),
    Claim("isit-gcc", "ISIT'25; 2608.28910 abstract", "E[R] = O(log^3_{1/p}(N) N^-3), Bernoulli(p)", "gcc",
          "slope of log(E[loss] N^3 / log^3_{1/p} N) vs log N", "ratio", 0.0, "probabilistic_rate",
          {"scheme": "gcc", "variable": "N"},
          note="Ambiguity (g): the ISIT abstract's 'respectively' swaps the two rates; "
               "GCC = log^3/N^3 follows the 2608 abstract."),
    Claim("isit-bacc", "ISIT'25", "E[R_BACC] = O(log^4_{1/p}(N) N^-2), Bernoulli(p)", "bacc",
          "slope of log(E[loss] N^2 / log^4_{1/p} N) vs log N", "ratio", 0.0, "probabilistic_rate",
          {"scheme": "bacc", "variable": "N"}),
    Claim("lcc-threshold", "LCC (AISTATS'19) as used in NeurIPS'24 App. D",
          "exact recovery iff N - S >= (K-1) deg f + 1", "lcc",
          "largest S with exact recovery (loss <= 1e-20 x mean f(x_k)^2)", "threshold", float("nan"), "polynomial_lcc",
          {"scheme": "lcc"}),
    Claim("adversarial", "Adversarial GCC, arXiv 2502.08058 (abstract)",
          "error ~ N^{(6/5)(a-1)} with O(N^a) adversaries", "gcc", "--", "untested", float("nan"), "",
          note="Not tested: adversarial servers are outside the straggler setting of this companion."),
)


def exponent_verdict(kind: str, claimed: float, slope: float, lo: float, hi: float,
                     joint_slope_ci: tuple | None = None) -> str:
    """Verdict of one measured log-log slope against a claimed upper-bound exponent.

    Parameters
    ----------
    kind : {"decay", "growth"}
        A decay in N (claimed < 0) or a growth in S (claimed > 0).
    claimed : float
    slope, lo, hi : float
        Measured slope and its interval.
    joint_slope_ci : (float, float) or None
        Interval of the slope in N of the joint ratio (growth claims only, see
        the module notes).

    Returns
    -------
    str
    """
    if not np.all(np.isfinite([slope, lo, hi])):
        return "not measured"
    if lo <= claimed <= hi:
        return "consistent"
    if hi < claimed:
        return "steeper (bound holds)" if kind == "decay" else "slower growth (bound holds)"
    if kind == "decay":
        return "violated"
    if joint_slope_ci is None or not np.all(np.isfinite(joint_slope_ci)):
        return "steeper in S (joint bound not checked)"
    j_lo, j_hi = joint_slope_ci
    if j_hi <= 0.0:
        return "steeper in S (joint bound holds)"
    if j_lo > 0.0:
        return "violated"
    return "steeper in S (joint ratio flat: consistent)"


def ratio_verdict(slope: float, lo: float, hi: float) -> str:
    """Verdict for a normalised ratio that must stay bounded (slope in N <= 0)."""
    if not np.all(np.isfinite([slope, lo, hi])):
        return "not measured"
    if hi < 0.0:
        return "decays (bound holds)"
    if lo <= 0.0:
        return "bounded (consistent)"
    return "violated"


def _select(df, filters: dict):
    mask = np.ones(len(df), dtype=bool)
    for key, value in filters.items():
        if key in df.columns:
            values = list(value) if isinstance(value, (list, tuple, set)) else [value]
            mask &= df[key].isin(values).to_numpy()
    return df[mask]


def _context(row, skip) -> str:
    keys = ["function", "straggler", "rule", "fixed", "degree"]
    parts = []
    for key in keys:
        if key in row and key not in skip and row[key] == row[key] and str(row[key]) != "":
            parts.append(f"{key}={row[key]}")
    return ", ".join(parts)


def _joint_slope_ci(claim: Claim) -> dict:
    """Interval of the N-slope of ``max_S loss N^q / (S+1)^r``, per (function, straggler[, rule])."""
    try:
        summary = results.load_table(claim.notebook, "summary")
    except FileNotFoundError:
        return {}
    r_s, q_n = claim.joint
    sub = summary[summary["scheme"] == claim.scheme].copy()
    if "sweep" in sub.columns:
        sub = sub[sub["sweep"] == "N"]
    # The same asymptotic window as the slopes (N >= 4 (S + 1)): near S + 1 = N no rate is visible.
    sub = sub[sub["N"] >= JOINT_MIN_RATIO * (sub["S"] + 1)]
    sub["ratio"] = sub["mean"] * sub["N"].astype(float) ** q_n / (sub["S"].astype(float) + 1.0) ** r_s
    out = {}
    group_cols = [c for c in ("function", "straggler", "rule") if c in sub.columns]
    for key, g in sub.groupby(group_cols):
        key = key if isinstance(key, tuple) else (key,)
        per_n = g.groupby("N")["ratio"].max()
        per_n = per_n[np.isfinite(per_n) & (per_n > 0)]
        if len(per_n) >= 3:
            fit = loglog_slope(per_n.index.to_numpy(float), per_n.to_numpy(float), level=0.95)
            out[key] = ((float(fit.low), float(fit.high)), group_cols)
    return out


def build_claims_table(root=None):
    """Assemble the claims table from the saved results of the rate notebooks.

    Parameters
    ----------
    root : path-like or None
        Results root (default :func:`gcc.results.results_root`, i.e.
        ``$GCC_RESULTS_ROOT`` or ``_build/results``).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`CLAIM_COLUMNS`; one row per (claim, measured context), and
        one ``not measured`` row for a claim whose notebook has not run.
    """
    import pandas as pd

    old = os.environ.get("GCC_RESULTS_ROOT")
    if root is not None:
        os.environ["GCC_RESULTS_ROOT"] = str(root)
    try:
        rows = []
        for claim in CLAIMS:
            base = {"claim": claim.id, "source": claim.source, "statement": claim.statement,
                    "scheme": claim.scheme, "quantity": claim.quantity, "claimed": claim.claimed,
                    "notebook": claim.notebook, "note": claim.note}
            if claim.kind == "untested":
                rows.append({**base, "context": "", "measured": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                             "n_points": 0, "verdict": "not tested"})
                continue
            if claim.kind == "threshold":
                rows.extend(_threshold_rows(claim, base))
                continue
            try:
                slopes = results.load_table(claim.notebook, "slopes")
            except FileNotFoundError:
                rows.append({**base, "context": "", "measured": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                             "n_points": 0, "verdict": "not measured (notebook not run)"})
                continue
            sel = _select(slopes, claim.select)
            joint = _joint_slope_ci(claim) if claim.joint else {}
            for _, row in sel.iterrows():
                slope, lo, hi = float(row["slope"]), float(row["ci_low"]), float(row["ci_high"])
                if claim.kind == "ratio":
                    verdict = ratio_verdict(slope, lo, hi)
                else:
                    jci = None
                    for key, (value, cols) in joint.items():
                        if all(str(row.get(c)) == str(k) for c, k in zip(cols, key)):
                            jci = value
                    verdict = exponent_verdict(claim.kind, claim.claimed, slope, lo, hi, jci)
                scalar_keys = {k for k, v in claim.select.items() if not isinstance(v, (list, tuple, set))}
                rows.append({**base, "context": _context(row, scalar_keys), "measured": slope,
                             "ci_low": lo, "ci_high": hi, "n_points": int(row.get("n_points", 0)),
                             "verdict": verdict})
        table = pd.DataFrame(rows)
        return table[CLAIM_COLUMNS]
    finally:
        if root is not None:
            if old is None:
                os.environ.pop("GCC_RESULTS_ROOT", None)
            else:
                os.environ["GCC_RESULTS_ROOT"] = old


def _threshold_rows(claim: Claim, base: dict) -> list[dict]:
    """LCC's exactness threshold: largest S whose every trial is exact, against N - (K-1) deg - 1."""
    try:
        summary = results.load_table(claim.notebook, "summary")
    except FileNotFoundError:
        return [{**base, "context": "", "measured": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                 "n_points": 0, "verdict": "not measured (notebook not run)"}]
    rows = []
    for degree, g in summary[summary["scheme"] == "lcc"].groupby("degree"):
        N, K = int(g["N"].iloc[0]), int(g["K"].iloc[0])
        predicted = N - (K - 1) * int(degree) - 1
        exact = g[g["max_loss"] <= g["exact_tol"]]["S"]
        # The largest S such that every S' <= S on the grid is exact.
        measured = -1
        for s in sorted(g["S"]):
            if s in set(exact):
                measured = int(s)
            else:
                break
        tested_up_to = int(g["S"].max())
        if predicted < 0:
            verdict = "consistent" if measured < 0 else "consistent (near-exact below threshold)"
            context_note = "N is below the threshold for every S."
        elif measured == predicted:
            verdict, context_note = "consistent", ""
        elif measured > predicted:
            # Past the threshold the adapted (least-squares) LCC fits a lower degree; when
            # f o u_enc is numerically of lower degree that is still exact to round-off.
            verdict = "consistent (near-exact beyond threshold)"
            context_note = "Beyond the threshold f o u_enc is numerically of lower degree."
        else:
            verdict, context_note = "not exact below threshold (round-off)", ""
        rows.append({**base, "claimed": float(predicted), "context": f"deg f={degree}, K={K}, N={N}",
                     "measured": float(measured), "ci_low": np.nan, "ci_high": np.nan,
                     "n_points": int(len(g)), "verdict": verdict,
                     "note": (base["note"] + " " + context_note +
                              f" (S tested 0..{tested_up_to}; -1 = never exact)").strip()})
    return rows


def verdict_counts(table):
    """Number of rows per (claim, verdict): the one-glance summary of the table."""
    return table.groupby(["claim", "verdict"]).size().rename("rows").reset_index()


def plot_claims(table):
    """Forest plot: each measured slope with its interval beside the claimed exponent.

    Exponent claims only (decay, growth, ratio); one row per measurement, the
    claimed value as a red tick.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    t = table[np.isfinite(table["measured"].astype(float)) & np.isfinite(table["ci_low"].astype(float))]
    t = t.reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(8.5, 0.22 * len(t) + 1.2))
    y = np.arange(len(t))[::-1]
    colors = {"violated": "C3"}
    for yi, (_, row) in zip(y, t.iterrows()):
        color = colors.get(row["verdict"], "C0" if "holds" in row["verdict"] else "C2")
        ax.errorbar(row["measured"], yi, xerr=[[row["measured"] - row["ci_low"]], [row["ci_high"] - row["measured"]]],
                    fmt="o", ms=3, color=color, lw=1)
        ax.plot([row["claimed"]], [yi], "|", color="red", ms=9, mew=2)
    ax.set_yticks(y, [f"{r['claim']}: {r['context']}"[:70] for _, r in t.iterrows()], fontsize=6)
    ax.set_xlabel("slope (measured, 95% CI); red tick: claimed exponent")
    ax.axvline(0, color="k", lw=0.5)
    ax.grid(True, axis="x", alpha=0.3)
    return finish(fig)
