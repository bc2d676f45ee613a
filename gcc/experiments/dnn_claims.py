"""The DNN rows of the claims table: the paper's statements about its networks, measured on ours.

``dnn-lambda-vs-S`` and ``dnn-lambda-x10`` (App. E, from ``dnn_lambda``) and ``dnn-isit-faster``
(ISIT 2025, from ``dnn_probabilistic``); :func:`dnn_claims_table` collects them, with a ``not measured``
row per claim whose notebook has not run. "About 3%" is the band :data:`X10_BAND`, judged by
:func:`gcc.experiments.verdicts.band_verdict` on each row's own 95% interval.
"""
from __future__ import annotations

import os

import numpy as np
import pandas as pd

from gcc import results

from ..validation import InstanceOf, NoneOr, validate_params
from .claims import CLAIM_COLUMNS
from .verdicts import band_verdict

__all__ = ["DNN_CLAIMS", "X10_BAND", "X10_WORDS", "x10_verdict", "claim_rows", "dnn_claims_table"]

#: "about 3%" (App. E, Fig. 6) read as a band of RMSE changes in percent: a factor 2 either way
X10_BAND = (1.5, 6.0)

#: the words of :func:`x10_verdict` for each outcome of :func:`gcc.experiments.verdicts.band_verdict`
X10_WORDS = {"inside": "consistent", "below": "less sensitive than the paper",
             "above": "more sensitive than the paper", "undecided": "undecided", "not measured": "not measured"}


def x10_verdict(low: float, high: float, band: tuple = X10_BAND) -> str:
    """The verdict of one measured RMSE change (95% interval, %) against "about 3%".

    Examples
    --------
    >>> from gcc.experiments.dnn_claims import x10_verdict
    >>> x10_verdict(2.0, 4.0), x10_verdict(-9.7, 5.6), x10_verdict(0.1, 0.9), x10_verdict(7.0, 9.0)
    ('consistent', 'undecided', 'less sensitive than the paper', 'more sensitive than the paper')
    """
    return X10_WORDS[band_verdict(low, high, *band)]


def claim_rows(rows, notebook: str):
    """Verdict rows (dicts with ``model``) as claims-table rows: ``claim``'s source and statement
    (:data:`DNN_CLAIMS`), GCC's scheme and code, ``counted``, ``notebook``; the claims table's columns."""
    out = [{"claim": r["claim"], "source": DNN_CLAIMS[r["claim"]][2], "function": f"softmax of {r['model']}",
            "code": "gcc", "counted": True, "statement": DNN_CLAIMS[r["claim"]][3], "scheme": "gcc",
            **{k: v for k, v in r.items() if k not in ("claim", "model")}, "notebook": notebook} for r in rows]
    # reindex: the claims table's columns, whatever the rows fill (the others stay empty)
    return pd.DataFrame(out).reindex(columns=CLAIM_COLUMNS)


#: claim id -> (notebook, saved table, source, statement) of the DNN claims.
DNN_CLAIMS = {
    "dnn-lambda-vs-S": ("dnn_lambda", "verdicts", "NeurIPS'24 App. E, Table 3",
                        "the optimal lambdas barely move with S"),
    "dnn-lambda-x10": ("dnn_lambda", "verdicts", "NeurIPS'24 App. E, Fig. 6",
                       "the RMSE rises by about 3% when a lambda is off by x10"),
    "dnn-isit-faster": ("dnn_probabilistic", "claims", "ISIT'25 (LeNet-5 experiment); 2608.28910 abstract",
                        "GCC's loss decays faster in N than BACC's under Bernoulli(p) stragglers"),
}


@validate_params({"root": NoneOr(InstanceOf((str, os.PathLike), "a path (str or os.PathLike)"))})
def dnn_claims_table(root=None):
    """The DNN claims' rows (:data:`~gcc.experiments.claims.CLAIM_COLUMNS`) from the DNN notebooks' results.

    Parameters
    ----------
    root : path-like or None
        Results root (default :func:`gcc.results.results_root`).

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> import tempfile
    >>> from gcc.experiments.dnn_claims import dnn_claims_table
    >>> dnn_claims_table(tempfile.mkdtemp())["verdict"].unique().tolist()
    ['not measured (notebook not run)']
    """
    frames, loaded = [], {}
    for claim, (notebook, table, source, statement) in DNN_CLAIMS.items():
        key = (notebook, table)
        if key not in loaded:
            try:
                loaded[key] = results.load_table(notebook, table, root=root)
            except FileNotFoundError:
                loaded[key] = None
        rows = loaded[key]
        rows = rows[rows["claim"] == claim] if rows is not None and "claim" in rows else None
        if rows is None or rows.empty:
            rows = pd.DataFrame([{"claim": claim, "source": source, "statement": statement, "scheme": "gcc",
                                  "code": "gcc", "quantity": "", "context": "", "claimed": np.nan,
                                  "measured": np.nan, "ci_low": np.nan, "ci_high": np.nan, "n_points": 0,
                                  "verdict": "not measured (notebook not run)", "counted": False, "note": "",
                                  "notebook": notebook}])
        # reindex: rows saved under an older column list still fit the current claims table
        rows = rows.reindex(columns=CLAIM_COLUMNS)
        if claim == "dnn-lambda-x10":
            rows = _x10_rows(rows)
        frames.append(rows)
    return pd.concat(frames, ignore_index=True)


def _x10_rows(rows):
    """``dnn-lambda-x10`` rows with the verdict of their own interval against :data:`X10_BAND`."""
    rows = rows.copy()
    for col in ("verdict", "reason", "note", "sense"):
        rows[col] = rows[col].astype(object)
    measured = rows["ci_low"].notna() & rows["ci_high"].notna()
    lo, hi = rows["ci_low"].astype(float), rows["ci_high"].astype(float)
    rows.loc[measured, "verdict"] = [x10_verdict(a, b) for a, b in zip(lo[measured], hi[measured])]
    rows.loc[measured, "reason"] = [f"interval [{a:.3g}, {b:.3g}] % {_where(a, b)} the band "
                                    f"[{X10_BAND[0]:g}, {X10_BAND[1]:g}] %" for a, b in zip(lo[measured], hi[measured])]
    rows.loc[measured, "note"] = (f"'about 3%' read as {X10_BAND[0]:g}-{X10_BAND[1]:g}%: consistent only when the whole "
                                  "95% interval lies inside the band")
    rows["sense"], rows["delta"] = "upper", np.nan
    return rows


def _where(low: float, high: float) -> str:
    where = band_verdict(low, high, *X10_BAND)
    return {"inside": "lies inside", "below": "lies wholly below", "above": "lies wholly above"}.get(
        where, "straddles an edge of")
