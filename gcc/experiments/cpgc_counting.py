"""The exact K = 4, r = 2 check of the CPGC chapter: recoverable score vectors and exact E[T].

The authors' journal draft ("Distributed Gradient Descent with Coding and Partial Recovery",
Ozfatura, Ulukus and Gündüz, the extension of the ICASSP 2019 paper arXiv 1811.09271) tabulates,
for K = 4 workers with r = 2 tasks each, how many score vectors of each type (N2, N1, N0) -- the
number of workers that finished 2, 1 and 0 tasks -- let the master recover every block, for MDS
(2, 4), UC-MMC and its CCPR example code. :data:`DRAFT_COUNTS` holds that table;
:func:`counting_table` recounts it by brute force (:mod:`gcc.cpgc.enumeration`), and
:func:`exact_table` puts the exact E[T] of the three codes beside a Monte Carlo estimate.
"""
from __future__ import annotations

from gcc.cpgc import enumeration, example_code_k4, mds_code, simulate, uncoded_cyclic_code

__all__ = ["DRAFT_COUNTS", "k4_codes", "counting_table", "exact_table"]

#: (N2, N1, N0) -> recoverable vectors for (MDS (2, 4), UC-MMC, CCPR example), from the authors' draft.
DRAFT_COUNTS = {(4, 0, 0): (1, 1, 1), (3, 1, 0): (4, 4, 4), (3, 0, 1): (4, 4, 4), (2, 2, 0): (6, 6, 6),
                (2, 1, 1): (12, 8, 12), (2, 0, 2): (6, 2, 6), (1, 3, 0): (0, 4, 4), (1, 2, 1): (0, 4, 8),
                (0, 4, 0): (0, 1, 1)}


def k4_codes() -> dict:
    """The three K = 4, r = 2 codes of the draft's table, keyed ``"mds"``, ``"uc-mmc"``, ``"ccpr"``."""
    return {"mds": mds_code(4, n_tasks=2), "uc-mmc": uncoded_cyclic_code(4, 2), "ccpr": example_code_k4()}


def counting_table():
    """Recoverable score vectors per type and code, recounted, beside the draft's counts.

    Returns
    -------
    pandas.DataFrame
        Columns ``N2, N1, N0, scheme, vectors, recoverable, draft, verdict`` (``"agrees"`` or
        ``"differs"``); one row per (type, code), types in the order of the enumeration.

    Examples
    --------
    >>> from gcc.experiments.cpgc_counting import counting_table
    >>> table = counting_table()
    >>> len(table), set(table.verdict)
    (45, {'agrees'})
    """
    import pandas as pd

    codes = k4_codes()
    counts = {name: enumeration.type_counts(code) for name, code in codes.items()}
    rows = []
    for key, (_, total) in counts["mds"].items():
        ref = DRAFT_COUNTS.get(key, (0, 0, 0))
        for n, name in enumerate(codes):
            found = counts[name][key][0]
            rows.append({"N2": key[0], "N1": key[1], "N0": key[2], "scheme": name, "vectors": total,
                         "recoverable": found, "draft": ref[n],
                         "verdict": "agrees" if found == ref[n] else "differs"})
    return pd.DataFrame(rows)


def exact_table(trials: int, seed: int = 0, mu: float = 10.0, alpha: float = 0.01):
    """Exact E[T] of the three K = 4 codes (enumeration) beside a Monte Carlo estimate.

    Returns
    -------
    pandas.DataFrame
        Columns ``scheme, exact_mean_time, monte_carlo``.
    """
    import pandas as pd

    return pd.DataFrame([
        {"scheme": name, "exact_mean_time": enumeration.exact_mean_time(code, 0.0, mu, alpha),
         "monte_carlo": simulate(code=code, n_workers=4, trials=trials, seed=seed, mu=mu, alpha=alpha).mean_time}
        for name, code in k4_codes().items()])
