"""The verdicts a notebook page's result box quotes: the claims table's
(:func:`gcc.experiments.claims.build_claims_table`), restricted to the notebook's rows, so the page
and the claims page cannot disagree.
"""
from __future__ import annotations

from gcc.validation import invalid

__all__ = ["verdict_values", "verdict_text", "record_verdicts"]

#: Verdict words in the order a page lists them (the rate verdicts first, then the networks' words).
_ORDER = ("tight", "loose", "violated", "undecided", "consistent", "moves with S", "GCC faster", "BACC faster",
          "not distinguishable", "less sensitive than the paper", "more sensitive than the paper")


def verdict_text(verdicts) -> str:
    """``"8 tight, 2 undecided"``: how many of the ``verdicts`` (an iterable of str) say what, in book order."""
    verdicts = [str(v) for v in verdicts]
    order = [v for v in _ORDER if v in verdicts] + sorted(set(verdicts) - set(_ORDER))
    return ", ".join(f"{verdicts.count(v)} {v}" for v in order) or "none"


def verdict_values(notebook: str, root=None, claims: dict | None = None) -> list[dict]:
    """The counted verdicts of ``notebook``'s rows in the claims table, as ``RunContext.value`` arguments.

    Parameters
    ----------
    notebook : str
        Its saved tables must be in ``root``, the results root (a run context's ``run.folder.parent``).
    root : path-like, optional
    claims : dict, optional
        ``{key: claim id}``: also quote these claims one by one, as ``verdicts_<key>``.

    Returns
    -------
    list of dict
        ``verdicts`` (e.g. ``"36 loose, 6 undecided"``) and one ``verdicts_<key>`` per claim (``"none"``
        without a row).
    """
    if not isinstance(notebook, str) or not notebook.isidentifier():
        raise invalid("notebook", "verdict_values", "a notebook name (a Python identifier)", notebook)
    from gcc.experiments.claims import build_claims_table
    from gcc.experiments.claims_page import claim_words

    table = build_claims_table(root, include_dnn=notebook.startswith("dnn_"))
    rows = table[(table["notebook"] == notebook) & table["counted"].astype(bool)]
    out = [{"key": "verdicts", "number": verdict_text(rows["verdict"]),
            "note": f"counted verdicts of the claims table's rows from {notebook}"}]
    for key, claim in (claims or {}).items():  # a key that is no identifier: RunContext.value refuses it
        out.append({"key": f"verdicts_{key}", "number": verdict_text(rows.loc[rows["claim"] == claim, "verdict"]),
                    "note": f"counted verdicts of: {claim_words(claim)}"})
    return out


def record_verdicts(run, claims: dict | None = None) -> None:
    """Record :func:`verdict_values` of the ``run``'s notebook (its tables saved first) in the run, for its box."""
    for value in verdict_values(run.folder.name, run.folder.parent, claims):
        run.value(**value)
