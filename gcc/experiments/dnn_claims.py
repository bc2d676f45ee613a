"""The DNN rows of the claims table: the paper's statements about its networks, measured on ours.

Three claims, each measured by a DNN notebook that saves its verdicts as rows with the claims
table's columns (:data:`gcc.experiments.claims.CLAIM_COLUMNS`):

* ``dnn-lambda-vs-S`` -- NeurIPS 2024, App. E, Table 3: the optimal (lambda_enc, lambda_dec)
  "barely move" with S (``dnn_lambda``'s ``verdicts``);
* ``dnn-lambda-x10`` -- App. E, Fig. 6: the RMSE rises "by about 3%" when a lambda is off by a
  factor of ten (``dnn_lambda``'s ``verdicts``);
* ``dnn-isit-faster`` -- ISIT 2025 and the 2608.28910 abstract: GCC's loss decays faster in N
  than BACC's under Bernoulli(p) stragglers (``dnn_probabilistic``'s ``claims``).

:func:`dnn_claims_table` collects them from the results root, with one ``not measured`` row per
claim whose notebook has not run, so that the claims notebook can append them to
:func:`gcc.experiments.claims.build_claims_table`'s table.

Imports the core (:mod:`gcc.results`) and :data:`gcc.experiments.claims.CLAIM_COLUMNS`.
"""
from __future__ import annotations

import numpy as np

import os

from gcc import results

from ..validation import InstanceOf, NoneOr, validate_params
from .claims import CLAIM_COLUMNS

__all__ = ["DNN_CLAIMS", "dnn_claims_table"]

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
    """The DNN claims' rows from the saved results of the DNN notebooks.

    Parameters
    ----------
    root : path-like or None
        Results root (default :func:`gcc.results.results_root`).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`~gcc.experiments.claims.CLAIM_COLUMNS`; the notebooks' verdict rows, and
        one ``not measured (notebook not run)`` row per claim without any.

    Examples
    --------
    >>> import tempfile
    >>> from gcc.experiments.dnn_claims import dnn_claims_table
    >>> dnn_claims_table(tempfile.mkdtemp())["verdict"].unique().tolist()
    ['not measured (notebook not run)']
    """
    import pandas as pd

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
        frames.append(rows.reindex(columns=CLAIM_COLUMNS))
    return pd.concat(frames, ignore_index=True)
