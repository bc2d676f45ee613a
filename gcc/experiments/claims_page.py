"""The claims page a referee reads: the papers' statements in words, the result box's numbers, a forest plot;
and the verdicts a notebook page's result box quotes (:func:`record_verdicts`: the claims table's rows of
that notebook, so the page and the claims page cannot disagree).

:data:`STATEMENTS` holds every statement of the papers, the claims of :mod:`gcc.experiments.claims`
that test it and the page with the evidence; the functions turn the claims table into the page.
"""
from __future__ import annotations

from dataclasses import dataclass
from html import escape

import numpy as np
import pandas as pd

from .claims import CLAIMS, EXPONENT_KINDS, build_claims_table
from .plotting import figure
from ..validation import Options, validate

__all__ = ["Statement", "STATEMENTS", "headline_table", "glossary", "box_values", "plot_forest", "readable",
           "claim_words", "verdict_text", "record_verdicts"]


@dataclass(frozen=True)
class Statement:
    """One statement of a paper in words (`words`, `source`), the ids of the `claims` that test it, the
    notebook with the `evidence`, and its `panel` title in :func:`plot_forest` (empty: no exponent)."""

    words: str
    source: str
    claims: tuple
    evidence: str
    panel: str = ""


STATEMENTS: tuple[Statement, ...] = (
    Statement("GCC's worst-case loss falls like (S+1)^3 / N^3 (noiseless workers)",
              "NeurIPS 2024, Theorems 1 and 4", ("thm1-N", "thm1-N-joint", "thm1-S", "thm1-path"),
              "worst_case_rate", "Theorem 1: GCC, (S+1)^3 N^-3"),
    Statement("BACC's worst-case loss falls like S^4 / N^2", "NeurIPS 2024, App. C.1 (quoting BACC)",
              ("bacc-N", "bacc-S4", "bacc-S4-l2", "bacc-path"), "worst_case_extremal",
              "App. C.1: BACC, S^4 N^-2 (and S^6)"),
    Statement("BACC's bound of App. C.1 squared literally: S^6 / N^2", "NeurIPS 2024, App. C.1 (ambiguity f)",
              ("bacc-S6",), "worst_case_extremal", "App. C.1: BACC, S^4 N^-2 (and S^6)"),
    Statement("The worst straggler set is S consecutive workers", "this book's exhaustive worst-case search",
              ("contiguous-worst",), "worst_case_extremal"),
    Statement("With noisy workers GCC's loss falls like S^(8/5) N^(-3/5)", "NeurIPS 2024, Theorems 2 and 4",
              ("thm4-noisy-N", "thm4-noisy-S"), "noisy_rate", "Theorem 2: noisy workers"),
    Statement("Theorem 2 as printed: the noisy loss falls like N^(-3/8)", "NeurIPS 2024, Theorem 2 (ambiguity e)",
              ("thm2-noisy-N-3/8",), "noisy_rate", "Theorem 2: noisy workers"),
    Statement("Under random (Bernoulli p) stragglers GCC's expected loss falls like log^3(N) / N^3",
              "ISIT 2025; arXiv 2608.28910, abstract", ("isit-gcc",), "probabilistic_rate",
              "ISIT 2025: random stragglers"),
    Statement("Under random stragglers BACC's expected loss falls like log^4(N) / N^2", "ISIT 2025",
              ("isit-bacc",), "probabilistic_rate", "ISIT 2025: random stragglers"),
    Statement("The ISIT abstract read literally (the two rates swapped between GCC and BACC)",
              "ISIT 2025, abstract (ambiguity g)", ("isit-gcc-swapped", "isit-bacc-swapped"), "probabilistic_rate",
              "ISIT 2025: random stragglers"),
    Statement("The longest run of stragglers grows like log_(1/p) N (Erdos-Renyi law)",
              "Erdos-Renyi law of runs, as used by ISIT 2025", ("erdos-renyi",), "probabilistic_rate",
              "ISIT 2025: random stragglers"),
    Statement("LCC recovers f exactly once N - S >= (K-1) deg f + 1", "LCC (AISTATS 2019), NeurIPS 2024 App. D",
              ("lcc-threshold",), "polynomial_lcc"),
    Statement("The optimal smoothing parameters barely move with S", "NeurIPS 2024, App. E, Table 3",
              ("appE-lambda-S", "dnn-lambda-vs-S"), "lambda_sensitivity"),
    Statement("The error rises by about 3% when a smoothing parameter is off by a factor 10",
              "NeurIPS 2024, App. E, Fig. 6", ("appE-lambda-x10", "dnn-lambda-x10"), "lambda_sensitivity"),
    Statement("On the networks, GCC's loss falls faster in N than BACC's under random stragglers",
              "ISIT 2025 (LeNet-5 experiment)", ("dnn-isit-faster",), "dnn_probabilistic"),
    Statement("With O(N^a) adversarial workers the error is about N^((6/5)(a-1))", "arXiv 2502.08058, abstract",
              ("adversarial",), ""),
)

#: Verdict words in the order a page lists them (the rate verdicts first, then the networks' words).
_ORDER = ("tight", "loose", "violated", "undecided", "consistent", "moves with S", "GCC faster", "BACC faster",
          "not distinguishable", "less sensitive than the paper", "more sensitive than the paper")


def verdict_text(verdicts) -> str:
    """``"8 tight, 2 undecided"``: how many of the ``verdicts`` (an iterable of str) say what, in book order."""
    verdicts = [str(v) for v in verdicts]
    order = [v for v in _ORDER if v in verdicts] + sorted(set(verdicts) - set(_ORDER))
    return ", ".join(f"{verdicts.count(v)} {v}" for v in order) or "none"


def record_verdicts(run, claims: dict | None = None) -> None:
    """Record in ``run`` the counted verdicts of its notebook's rows in the claims table, for its result box:
    ``verdicts`` (e.g. ``"36 loose, 6 undecided"``).

    Parameters
    ----------
    run : gcc.results.RunContext
        The notebook's run, its tables saved first: the notebook is ``run.folder.name``, the results root
        ``run.folder.parent``.
    claims : dict, optional
        ``{key: claim id}``: also quote these claims one by one, as ``verdicts_<key>`` (``"none"`` without a row).
    """
    notebook = run.folder.name
    table = build_claims_table(run.folder.parent, include_dnn=notebook.startswith("dnn_"))
    rows = table[(table["notebook"] == notebook) & table["counted"].astype(bool)]
    run.value("verdicts", verdict_text(rows["verdict"]),
              note=f"counted verdicts of the claims table's rows from {notebook}")
    for key, claim in (claims or {}).items():
        run.value(f"verdicts_{key}", verdict_text(rows.loc[rows["claim"] == claim, "verdict"]),
                  note=f"counted verdicts of: {claim_words(claim)}")


#: the test functions by role: "family" (attains the bound), "decoder" (tests the decoder), else "typical"
_FAMILY_WORDS = {"bump (lower bound)": "family", "bump (extremal)": "family", "bump (decoder test)": "decoder"}


def claim_words(claim: str) -> str:
    """A claim id in words: its statement and, where it has one, its test (``"... (N slope at fixed S)"``)."""
    s = _statement_of(claim)
    if s is None:
        return str(claim)
    return f"{s.words} ({_TEST_WORDS[claim]})" if claim in _TEST_WORDS else s.words


def _statement_of(claim: str) -> Statement | None:
    """The :class:`Statement` a claim id belongs to (None for an unknown id)."""
    return next((s for s in STATEMENTS if claim in s.claims), None)


def _summary(rows) -> str:
    """``"5 tight, 1 undecided"`` over the counted rows, ``"; 2 shown, not counted"`` for the others."""
    counted = rows["counted"].astype(bool)
    text = verdict_text(rows.loc[counted, "verdict"]) if counted.any() else ""
    shown = int((~counted & ~rows["verdict"].astype(str).str.startswith("not ")).sum())
    if shown:
        text = (text + "; " if text else "") + f"{shown} shown, not counted"
    return text or ", ".join(sorted(set(rows["verdict"].astype(str)))) or "-"


def headline_table(table, link: str = "html"):
    """One row per paper statement: its source, the verdicts per kind of test function, the evidence.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`gcc.experiments.claims.build_claims_table`.
    link : {"html", "doc"}
        ``evidence`` as an HTML link (a notebook page) or a MyST ``{doc}`` link (a chapter).

    Returns
    -------
    pandas.DataFrame
        ``statement, source, lower-bound family, decoder test, typical functions, evidence``; each
        verdict cell counts the counted rows per verdict and the rows shown but not counted.
    """
    validate(link, Options(("html", "doc")), "link", "headline_table")
    out = []
    for s in STATEMENTS:
        rows = table[table["claim"].isin(s.claims)]
        role = rows["function"].map(lambda f: _FAMILY_WORDS.get(str(f), "typical"))
        cells = {name: (_summary(rows[role == key]) if (role == key).any() else "-")
                 for key, name in (("family", "lower-bound family"), ("decoder", "decoder test"))}
        typical = rows[role == "typical"]
        nets = typical["function"].astype(str).str.startswith("softmax of")
        parts = [f"{label}{_summary(typical[mask])}" for label, mask in
                 (("x sin x: " if nets.any() else "", ~nets), ("networks: ", nets)) if mask.any()]
        cells["typical functions"] = "; ".join(parts) if parts else "-"
        if not s.evidence:
            evidence = "not tested"
        elif link == "html":
            evidence = f'<a href="{s.evidence}.html">{escape(s.evidence.replace("_", " "))}</a>'
        else:
            evidence = f"{{doc}}`{s.evidence.replace('_', ' ')} </book/generated/{s.evidence}>`"
        out.append({"statement": s.words, "source": s.source, **cells, "evidence": evidence})
    return pd.DataFrame(out)


def glossary(table):
    """The claim ids of `table` in words: ``short name, statement, test`` (the test, else the quantity)."""
    rows = []
    for claim, group in table.groupby("claim", sort=False):
        s = _statement_of(claim)
        rows.append({"short name": claim, "statement": s.words if s else str(group["statement"].iloc[0]),
                     "test": _TEST_WORDS.get(claim, str(group["quantity"].iloc[0]))})
    return pd.DataFrame(rows)


def readable(frame):
    """`frame` (:func:`~gcc.experiments.claims.open_rows`) with ``statement, test`` in words first for
    ``claim``, ``code`` dropped."""
    out = frame.drop(columns=["claim", "code"]).rename(columns={"measured_ci": "measured (95% CI)"})
    out.insert(0, "test", [_TEST_WORDS.get(c, "") for c in frame["claim"]])
    out.insert(0, "statement", [getattr(_statement_of(c), "words", str(c)) for c in frame["claim"]])
    return out


def box_values(table) -> list[dict]:
    """The numbers the claims page's result box quotes, as ``RunContext.value`` arguments.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`gcc.experiments.claims.build_claims_table`.

    Returns
    -------
    list of dict
        ``{"key", "number", "note"}``: ``n_<verdict>``, ``n_counted``, ``n_rows``, ``n_not_counted``,
        ``n_claims``, ``n_statements``, ``thm1_family[_tight]``, ``thm1_typical[_loose]``,
        ``violated_where``, ``n_notebooks``, ``n_points``.
    """
    rate = table["claim"].isin([c.id for c in CLAIMS])
    counted = table[rate & table["counted"].astype(bool)]
    totals = {f"n_{v}": (int((counted["verdict"] == v).sum()), f"counted rows with verdict {v}")
              for v in ("tight", "loose", "violated", "undecided")}
    thm1 = counted[counted["claim"].isin(STATEMENTS[0].claims)]
    role = thm1["function"].map(lambda f: _FAMILY_WORDS.get(str(f), "typical"))
    family, typical = thm1[role == "family"], thm1[role == "typical"]
    violated = counted.loc[counted["verdict"] == "violated", "claim"].value_counts()
    where = "; ".join(f"{n} on \u201c{_statement_of(c).words}\u201d" for c, n in violated.items()
                      if _statement_of(c) is not None)
    notebooks = {nb for s in table["notebook"].dropna().astype(str) for nb in s.split(",") if nb}
    points = np.asarray(table.loc[rate, "n_points"], dtype=float)
    numbers = {**totals,
               "n_counted": (sum(n for n, _ in totals.values()),
                             "counted rows of the rate claims with one of the four verdicts"),
               "n_rows": (len(table), "rows of the claims table"),
               "n_not_counted": (int((~table["counted"].astype(bool)).sum()), "rows shown but not counted"),
               "n_claims": (int(table["claim"].nunique()), "claims in the table"),
               "n_statements": (len(STATEMENTS), "statements of the papers"),
               "thm1_family": (len(family), "Theorem 1's counted rows on the lower-bound family"),
               "thm1_family_tight": (int((family["verdict"] == "tight").sum()), "of them tight"),
               "thm1_typical": (len(typical), "Theorem 1's counted rows on the typical functions"),
               "thm1_typical_loose": (int((typical["verdict"] == "loose").sum()), "of them loose"),
               "violated_where": (where or "none", "counted violated rows per statement"),
               "n_notebooks": (len(notebooks), "notebooks the table reads"),
               "n_points": (int(points[np.isfinite(points)].sum()), "fitted points of the rate claims")}
    return [{"key": key, "number": number, "note": note} for key, (number, note) in numbers.items()]


_VERDICT_STYLE = {"tight": ("#1b9e77", "o"), "loose": ("#377eb8", "s"), "violated": ("#d62728", "^"),
                  "undecided": ("#7f7f7f", "D")}

#: what each claim measures, in a few words (the forest plot's labels, the glossary)
_TEST_WORDS = {
    "thm1-N": "N slope at fixed S", "thm1-N-joint": "N exponent, joint fit", "thm1-S": "S+1 slope",
    "thm1-path": "slope along S = cN^g", "bacc-N": "N slope at fixed S", "bacc-S4": "S+1 slope vs 4",
    "bacc-S4-l2": "S+1 vs 4 (Thm 1's norm)", "bacc-S6": "S+1 slope vs 6", "bacc-path": "slope along S = cN^g",
    "thm4-noisy-N": "N slope vs -3/5", "thm2-noisy-N-3/8": "N slope vs -3/8", "thm4-noisy-S": "S+1 slope vs 8/5",
    "isit-gcc": "GCC / (log^3 N / N^3)", "isit-bacc": "BACC / (log^4 N / N^2)",
    "isit-gcc-swapped": "GCC / (log^4 N / N^2)", "isit-bacc-swapped": "BACC / (log^3 N / N^3)",
    "erdos-renyi": "longest run vs log N",
    "contiguous-worst": "exhaustive worst loss / the block's", "lcc-threshold": "largest S with exact recovery",
    "appE-lambda-S": "span of the optimal lambda over S", "appE-lambda-x10": "RMSE rise one decade from the optimum",
    "dnn-lambda-vs-S": "span of the optimal lambda over S", "dnn-lambda-x10": "RMSE change, decoder lambda x0.1",
    "dnn-isit-faster": "GCC's N slope against BACC's", "adversarial": "not tested",
}
_FUNCTION_WORDS = {"tanh net R^4->R^3 (h=16)": "tanh net", "bump (lower bound)": "bumps: lower bound",
                   "bump (decoder test)": "bumps: decoder test", "bump (extremal)": "bumps"}


def plot_forest(table):
    """The measured exponents against the claimed ones: one panel per theorem, one row per test and function.

    A row's points are its measured contexts; the claimed value is a black tick in its grey band;
    one colour and marker per verdict, open markers for rows shown but not counted.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`gcc.experiments.claims.build_claims_table`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    t = table[np.isfinite(table["ci_low"].astype(float)) & (table["ci_low"] != table["ci_high"])]
    t = t[t["claim"].isin([c.id for c in CLAIMS if c.kind in EXPONENT_KINDS])]
    panels = list(dict.fromkeys(s.panel for s in STATEMENTS if s.panel))
    groups = [(p, t[t["claim"].map(lambda c: getattr(_statement_of(c), "panel", "") == p)]) for p in panels]
    groups = [(p, g, list(dict.fromkeys(zip(g["claim"], g["function"].astype(str))))) for p, g in groups if len(g)]
    heights = [len(keys) for _, _, keys in groups]
    fig, axes = figure(len(groups), ncols=1, height=0.27 * sum(heights) + 0.7 * len(groups) + 0.6,
                       gridspec_kw={"height_ratios": [h + 0.8 for h in heights]})
    for ax, (title, g, keys) in zip(axes, groups):
        for i, (claim, function) in enumerate(keys):
            yi = len(keys) - 1 - i
            rows = g[(g["claim"] == claim) & (g["function"].astype(str) == function)]
            for claimed, delta in sorted(set(zip(rows["claimed"], rows["delta"]))):
                ax.plot([claimed - delta, claimed + delta], [yi, yi], "-", color="0.85", lw=9, solid_capstyle="butt",
                        zorder=1)
                ax.plot([claimed], [yi], "|", color="k", ms=11, mew=1.5, zorder=2)
            offsets = np.linspace(-0.28, 0.28, len(rows)) if len(rows) > 1 else [0.0]
            for dy, (_, row) in zip(offsets, rows.iterrows()):
                color, marker = _VERDICT_STYLE.get(row["verdict"], ("k", "o"))
                ax.errorbar(row["measured"], yi + dy, xerr=[[row["measured"] - row["ci_low"]],
                                                            [row["ci_high"] - row["measured"]]],
                            fmt=marker, ms=4, color=color, lw=1, mfc=color if row["counted"] else "white", zorder=3)
        ax.set_yticks(np.arange(len(keys))[::-1],
                      [f"{_TEST_WORDS.get(c, c)}, {_FUNCTION_WORDS.get(f, f)}" for c, f in keys], fontsize=9)
        ax.set_title(title, fontsize=10, loc="left")
        ax.tick_params(axis="x", labelsize=9)
        ax.grid(True, axis="x", alpha=0.3)
        ax.set_ylim(-0.6, len(keys) - 0.4)
    axes[-1].set_xlabel("exponent (95% CI); black tick: claimed, grey: +-0.25",
                           fontsize=9)
    handles = [plt.Line2D([], [], color=c, marker=m, ls="", label=v) for v, (c, m) in _VERDICT_STYLE.items()]
    handles.append(plt.Line2D([], [], color="k", marker="o", mfc="white", ls="", label="not counted"))
    fig.legend(handles=handles, loc="outside lower center", ncol=5, fontsize=9, frameon=False)
    return fig
