"""The exact K = 4, r = 2 checks of the CPGC chapter: the draft's Tables I and II, and exact E[T].

The draft counts the score vectors of each type (N2, N1, N0) that let the master recover every
block (Table I) or at least 3 of 4 (Table II); recounted by brute force (:mod:`gcc.cpgc.enumeration`).
"""
from __future__ import annotations

import pandas as pd

from gcc.cpgc import enumeration, example_code_k4, mds_code, simulate, uncoded_cyclic_code

from .cpgc_published import TABLE_I

__all__ = ["k4_codes", "counting_table", "counting_display", "recovery_table", "exact_table"]


def k4_codes() -> dict:
    """The three K = 4, r = 2 codes of the draft's tables, keyed ``"mds"``, ``"uc-mmc"``, ``"ccpr"``."""
    return {"mds": mds_code(4, n_tasks=2), "uc-mmc": uncoded_cyclic_code(4, 2), "ccpr": example_code_k4()}


def counting_table():
    """Table I: recoverable score vectors per type and code (full recovery), recounted, beside the draft's.

    Returns
    -------
    pandas.DataFrame
        Columns ``N2, N1, N0, scheme, vectors, recoverable, draft, verdict`` (``"agrees"`` or
        ``"differs"``); one row per (type, code), types in the order of the enumeration (the
        draft lists only the types with a nonzero count; the others count 0).

    Examples
    --------
    >>> from gcc.experiments.cpgc_counting import counting_table
    >>> table = counting_table()
    >>> len(table), set(table.verdict)
    (45, {'agrees'})
    """
    codes = k4_codes()
    counts = {name: enumeration.type_counts(code) for name, code in codes.items()}
    rows = []
    for key, (_, total) in counts["mds"].items():
        ref = TABLE_I.get(key, (0, 0, 0))
        for n, name in enumerate(codes):
            found = counts[name][key][0]
            rows.append({"N2": key[0], "N1": key[1], "N0": key[2], "scheme": name, "vectors": total,
                         "recoverable": found, "draft": ref[n],
                         "verdict": "agrees" if found == ref[n] else "differs"})
    return pd.DataFrame(rows)


def counting_display(counting):
    """:func:`counting_table` pivoted for a page: one row per type, ``recoverable`` and ``draft`` per code."""
    return counting.pivot_table(index=["N2", "N1", "N0", "vectors"], columns="scheme",
                                values=["recoverable", "draft"]).sort_index(ascending=False)


def recovery_table(blocks: int = 3):
    """Table II: score vectors per type from which at least ``blocks`` of the 4 blocks are recoverable.

    For UC-MMC and the CCPR example (the schemes with partial recovery), by exhaustive enumeration
    of all 3^4 score vectors (``tolerance = 1 - blocks / 4``).

    Returns
    -------
    pandas.DataFrame
        ``N2, N1, N0, vectors, uc-mmc, ccpr, full_uc-mmc, full_ccpr`` (the Table I counts beside)
        and ``same`` (whether UC-MMC and CCPR agree on this type: the draft's statement).

    Examples
    --------
    >>> from gcc.experiments.cpgc_counting import recovery_table
    >>> t = recovery_table()
    >>> len(t), bool(t["same"].all()), int(t["ccpr"].sum())
    (15, True, 62)
    """
    codes = {k: v for k, v in k4_codes().items() if k != "mds"}
    tolerance = 1.0 - blocks / 4.0
    part = {name: enumeration.type_counts(code, tolerance) for name, code in codes.items()}
    full = {name: enumeration.type_counts(code) for name, code in codes.items()}
    rows = []
    for key, (_, total) in part["ccpr"].items():
        row = {"N2": key[0], "N1": key[1], "N0": key[2], "vectors": total}
        row.update({name: part[name][key][0] for name in codes})
        row.update({f"full_{name}": full[name][key][0] for name in codes})
        row["same"] = row["uc-mmc"] == row["ccpr"]
        rows.append(row)
    return pd.DataFrame(rows)


def exact_table(trials: int, seed: int = 0, mu: float = 10.0, alpha: float = 0.01):
    """Exact E[T] of the three K = 4 codes (enumeration) beside a Monte Carlo estimate.

    Returns
    -------
    pandas.DataFrame
        Columns ``scheme, exact_mean_time, monte_carlo``.
    """
    return pd.DataFrame([
        {"scheme": name, "exact_mean_time": enumeration.exact_mean_time(code, 0.0, mu, alpha),
         "monte_carlo": simulate(code=code, n_workers=4, trials=trials, seed=seed, mu=mu, alpha=alpha).mean_time}
        for name, code in k4_codes().items()])
