"""The verdicts a notebook page's result box quotes: the claims table's
(:func:`gcc.experiments.claims.build_claims_table`), restricted to the notebook's rows, so the page
and the claims page cannot disagree.
"""
from __future__ import annotations

__all__ = ["verdict_text", "record_verdicts"]

#: Verdict words in the order a page lists them (the rate verdicts first, then the networks' words).
_ORDER = ("tight", "loose", "violated", "undecided", "consistent", "moves with S", "GCC faster", "BACC faster",
          "not distinguishable", "less sensitive than the paper", "more sensitive than the paper")


def verdict_text(verdicts) -> str:
    """``"8 tight, 2 undecided"``: how many of the ``verdicts`` (an iterable of str) say what, in book order."""
    verdicts = [str(v) for v in verdicts]
    order = [v for v in _ORDER if v in verdicts] + sorted(set(verdicts) - set(_ORDER))
    return ", ".join(f"{verdicts.count(v)} {v}" for v in order) or "none"


def record_verdicts(run, claims: dict | None = None) -> None:
    """Record in ``run`` the counted verdicts of its notebook's rows in the claims table, for its result box.

    Parameters
    ----------
    run : gcc.results.RunContext
        The notebook's run, its tables saved first: the notebook is ``run.folder.name``, the results root
        ``run.folder.parent``.
    claims : dict, optional
        ``{key: claim id}``: also quote these claims one by one, as ``verdicts_<key>``.

    Notes
    -----
    Records ``verdicts`` (e.g. ``"36 loose, 6 undecided"``) and one ``verdicts_<key>`` per claim (``"none"``
    without a row).
    """
    from gcc.experiments.claims import build_claims_table
    from gcc.experiments.claims_page import claim_words

    notebook = run.folder.name
    table = build_claims_table(run.folder.parent, include_dnn=notebook.startswith("dnn_"))
    rows = table[(table["notebook"] == notebook) & table["counted"].astype(bool)]
    run.value("verdicts", verdict_text(rows["verdict"]),
              note=f"counted verdicts of the claims table's rows from {notebook}")
    for key, claim in (claims or {}).items():
        run.value(f"verdicts_{key}", verdict_text(rows.loc[rows["claim"] == claim, "verdict"]),
                  note=f"counted verdicts of: {claim_words(claim)}")
