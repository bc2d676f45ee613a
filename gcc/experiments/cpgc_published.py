"""The numbers the CPGC authors published, and the comparison of a measured table with them.

Source: Ozfatura, Ulukus and Gündüz, "Distributed Gradient Descent with Coding and Partial
Recovery" (the journal draft extending arXiv 1811.09271), Sec. VII, Tables I, III and IV (K = 40,
mu = 10, alpha = 0.01). A measured number agrees when the whole 95 % interval of
``measured / published - 1`` lies within +-:data:`AGREEMENT` (2 %: the draft's numbers are Monte
Carlo estimates of one random code themselves).
"""
from __future__ import annotations

import pandas as pd

from gcc.validation import invalid

from .verdicts import band_verdict

__all__ = ["TABLE_I", "TABLE_III", "TABLE_IV", "AGREEMENT", "agreement_verdict", "published_table",
           "compare_with_draft", "comparison_display", "page_values"]

#: Table I: (N2, N1, N0) -> recoverable score vectors for (MDS (2, 4), UC-MMC, CCPR example), full recovery.
TABLE_I = {(4, 0, 0): (1, 1, 1), (3, 1, 0): (4, 4, 4), (3, 0, 1): (4, 4, 4), (2, 2, 0): (6, 6, 6),
           (2, 1, 1): (12, 8, 12), (2, 0, 2): (6, 2, 6), (1, 3, 0): (0, 4, 4), (1, 2, 1): (0, 4, 8),
           (0, 4, 0): (0, 1, 1)}

#: Table III, coded computation: (scheme, q) -> (mean time, mean messages per iteration).
TABLE_III = {("rcsc", 0.0): (0.1582, 63.94), ("rcsc", 0.15): (0.0935, 42.80), ("rcsc", 0.3): (0.0755, 34.51),
             ("uc-mmc", 0.0): (0.2424, 81.29), ("uc-mmc", 0.15): (0.1170, 51.16), ("uc-mmc", 0.3): (0.0799, 36.70),
             ("mds", 0.0): (0.1572, 14.0)}

#: Table IV, coded communication (load 6): (scheme, q) -> (mean time, mean messages per iteration).
TABLE_IV = {("rcsc", 0.0): (0.2219, 62.56), ("rcsc", 0.15): (0.1231, 41.55), ("rcsc", 0.3): (0.0940, 32.37),
            ("uc-mmc", 0.0): (0.1874, 99.63), ("uc-mmc", 0.15): (0.0986, 55.06), ("uc-mmc", 0.3): (0.0736, 38.30),
            ("gc", 0.0): (1.2575, 35.0)}

#: half-width of the agreement band, as a fraction of the published value (see the module docstring)
AGREEMENT = 0.02


def agreement_verdict(gap_low: float, gap_high: float, band: float = AGREEMENT) -> str:
    """Verdict on the 95 % interval of a relative gap ``measured / published - 1``.

    Parameters
    ----------
    gap_low, gap_high : float
        The interval of the relative gap (a point when equal).
    band : float
        Half-width of the agreement band (:data:`AGREEMENT`).

    Returns
    -------
    str
        ``"agrees within 2%"`` (the band's percentage), ``"above the draft"``, ``"below the draft"``,
        ``"undecided"`` or ``"not measured"``.

    Examples
    --------
    >>> from gcc.experiments.cpgc_published import agreement_verdict
    >>> agreement_verdict(0.004, 0.012), agreement_verdict(0.013, 0.021), agreement_verdict(-0.05, -0.03)
    ('agrees within 2%', 'undecided', 'below the draft')
    """
    where = band_verdict(gap_low, gap_high, -band, band)
    return {"inside": f"agrees within {100 * band:g}%", "above": "above the draft",
            "below": "below the draft"}.get(where, where)


def published_table():
    """Every number of Tables III and IV as a tidy row.

    Returns
    -------
    pandas.DataFrame
        ``table`` (``"III"``, ``"IV"``), ``setting`` (``"computation"``, ``"communication"``),
        ``scheme`` (keys of :data:`gcc.cpgc.SCHEMES`), ``tolerance``, ``metric`` (``"time"``,
        ``"messages"``), ``published``: 28 rows.

    Examples
    --------
    >>> from gcc.experiments.cpgc_published import published_table
    >>> t = published_table()
    >>> len(t), t.groupby("table").size().tolist()
    (28, [14, 14])
    """
    rows = []
    for name, setting, table in (("III", "computation", TABLE_III), ("IV", "communication", TABLE_IV)):
        for (scheme, q), values in table.items():
            for metric, value in zip(("time", "messages"), values):
                rows.append({"table": name, "setting": setting, "scheme": scheme, "tolerance": q,
                             "metric": metric, "published": value})
    return pd.DataFrame(rows)


def compare_with_draft(table):
    """A measured completion-time table beside every number of Tables III and IV.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`gcc.experiments.cpgc_tables.completion_time_table`, with every row of :func:`published_table`.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`published_table` plus ``measured, ci_low, ci_high, gap_pct, gap_low_pct,
        gap_high_pct`` (``100 (measured / published - 1)`` and its interval) and ``verdict``
        (:func:`agreement_verdict`).

    Examples
    --------
    >>> from gcc.experiments.cpgc_published import compare_with_draft
    >>> from gcc.experiments.cpgc_tables import completion_time_table
    >>> t = completion_time_table(trials=4000, computation=("rcsc", "uc-mmc", "mds"),
    ...                           communication=("rcsc", "uc-mmc", "gc"))
    >>> c = compare_with_draft(t)
    >>> len(c), bool(c.gap_pct.abs().max() < 3)
    (28, True)
    """
    keys = ["setting", "scheme", "tolerance", "metric"]
    pub = published_table()
    measured = table.set_index(keys)[["mean", "ci_low", "ci_high"]]
    missing = [k for k in pub.set_index(keys).index if k not in measured.index]
    if missing:
        raise invalid("table", "compare_with_draft", "a completion-time table with every scheme, setting and q "
                      "of Tables III and IV", f"a table without {missing[:3]}")
    out = pub.join(measured.rename(columns={"mean": "measured"}), on=keys)
    for col, src in (("gap_pct", "measured"), ("gap_low_pct", "ci_low"), ("gap_high_pct", "ci_high")):
        out[col] = 100.0 * (out[src] / out["published"] - 1.0)
    out["verdict"] = [agreement_verdict(lo / 100.0, hi / 100.0)
                      for lo, hi in zip(out["gap_low_pct"], out["gap_high_pct"])]
    return out.reset_index(drop=True)


def comparison_display(comparison, table: str):
    """The rows of one published table (``"III"`` or ``"IV"``) for a page: 14 rows, 3 significant digits.

    Returns
    -------
    pandas.DataFrame
        ``scheme, q, metric, published, measured, 95% interval, gap %, verdict``.
    """
    sub = comparison[comparison["table"] == table]
    out = sub[["scheme", "tolerance", "metric", "published", "measured"]].rename(columns={"tolerance": "q"})
    out["95% interval"] = [f"[{lo:.4g}, {hi:.4g}]" for lo, hi in zip(sub["ci_low"], sub["ci_high"])]
    out["gap %"] = sub["gap_pct"].round(2)
    out["verdict"] = sub["verdict"]
    return out.reset_index(drop=True)


def page_values(comparison, claims, counting, table_ii) -> list[dict]:
    """The numbers the CPGC chapter quotes, as keyword arguments of :meth:`gcc.results.RunContext.value`.

    From :func:`compare_with_draft`, :func:`gcc.experiments.cpgc_claims.completion_claims` and
    :mod:`gcc.experiments.cpgc_counting`'s ``counting_table`` and ``recovery_table``.
    """
    worst = comparison.loc[comparison["gap_pct"].abs().idxmax()]
    return [
        dict(key="worst_gap_pct", number=float(abs(worst["gap_pct"])), unit="%", digits=2,
             note=f"largest |gap| to Tables III and IV ({worst['scheme']}, {worst['metric']}, q = {worst['tolerance']:g})"),
        dict(key="worst_gap_where", note="where the largest gap is",
             number=f"{worst['scheme']}, {worst['metric']}, q = {worst['tolerance']:g}, "
                    f"Table {worst['table']}"),
        dict(key="published_rows", number=len(comparison), note="published numbers compared (Tables III and IV)"),
        dict(key="agreeing_rows", number=int(comparison["verdict"].str.startswith("agrees").sum()),
             note="of which agree within 2%"),
        dict(key="claims_agree", number=int((claims["verdict"] == "agrees").sum()), note="claim readings that agree"),
        dict(key="claims_rows", number=len(claims), note="claim readings measured"),
        dict(key="claims_disagree", number=int((claims["verdict"] == "disagrees").sum()),
             note="claim readings that disagree"),
        dict(key="k4_agreeing", number=int((counting["verdict"] == "agrees").sum()), note="entries of Table I that agree"),
        dict(key="k4_entries", number=len(counting), note="entries of Table I"),
        dict(key="table_ii_same", number=int(table_ii["same"].sum()), note="types of Table II where UC-MMC and CCPR agree"),
        dict(key="table_ii_types", number=len(table_ii), note="types of Table II"),
    ]
