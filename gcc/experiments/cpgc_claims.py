"""The CPGC journal draft's own claims (Sec. VII; source: :mod:`.cpgc_published`), each measured.

Each claim becomes rows: a measured quantity with its 95 % interval (ratios of independent means
by the delta method), the band that counts as "the claim holds" and :func:`claim_verdict`;
``draft`` is the same reading of the draft's own Tables III and IV. Readings: "about x %" is x +- 5
points; "about as fast" a ratio in 1 +- 0.05; "faster", "more", "fewest" the whole interval on the
claimed side of 0; "slightly faster" by more than 0 and at most 25 %; "far slower" at least twice
as slow; for convergence, ``rho_q`` (the log-reduction of the test error at q over that at q = 0,
paired by run) "barely slows" in [0.9, 1.05] and "visibly slows" in [0, 0.9].
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from gcc.cpgc import Master, make_code, worker_speeds
from gcc.metrics import mean_ci

from .cpgc_published import TABLE_III, TABLE_IV
from .verdicts import band_verdict

__all__ = ["CLAIM_VERDICTS", "claim_verdict", "early_decoding", "completion_claims", "convergence_claims"]

#: every verdict :func:`claim_verdict` can return
CLAIM_VERDICTS = ("agrees", "disagrees", "undecided", "not measured")

_BIG = 1e6     # the upper end of one-sided bands ("more", "far slower"), shown as inf


def claim_verdict(low: float, high: float, band_low: float, band_high: float) -> str:
    """``"agrees"`` when ``[low, high]`` lies inside the band, ``"disagrees"`` when wholly outside.

    Examples
    --------
    >>> from gcc.experiments.cpgc_claims import claim_verdict
    >>> claim_verdict(0.33, 0.36, 0.30, 0.40), claim_verdict(0.2, 0.25, 0.30, 0.40), claim_verdict(0.28, 0.32, 0.3, 0.4)
    ('agrees', 'disagrees', 'undecided')
    """
    where = band_verdict(low, high, band_low, band_high)
    return {"inside": "agrees", "below": "disagrees", "above": "disagrees"}.get(where, where)


def _row(claim, quantity, value, half, band, draft, detail=""):
    low, high = value - half, value + half
    return {"claim": claim, "quantity": quantity, "detail": detail, "measured": value, "ci_low": low,
            "ci_high": high, "band_low": band[0], "band_high": band[1] if band[1] < _BIG else np.inf, "draft": draft,
            "draft_verdict": claim_verdict(draft, draft, *band) if np.isfinite(draft) else "n/a",
            "verdict": claim_verdict(low, high, *band)}


def early_decoding(scheme: str = "rcsc", trials: int = 200, seed: int = 0, n_workers: int = 40,
                   mu: float = 10.0, alpha: float = 0.01, degrees=(1, 2, 3)):
    """Fraction of the blocks the master has decoded before the message that completes the iteration.

    Replays ``trials`` iterations (q = 0) one message at a time through :class:`gcc.cpgc.Master`.
    RCSC decodes uncoded and peelable results as they arrive; an MDS code decodes nothing before
    its k-th message.

    Returns
    -------
    ndarray, shape (trials,)

    Examples
    --------
    >>> from gcc.experiments.cpgc_claims import early_decoding
    >>> float(early_decoding("mds", trials=5, n_workers=12).max())
    0.0
    """
    rng = np.random.default_rng(seed)
    code = make_code(scheme, n_workers, degrees, seed=rng)
    speeds = worker_speeds(rng, trials, n_workers, mu, alpha)
    units = code.message_units()
    out = np.empty(trials)
    for t in range(trials):
        master, before = Master(code, 0.0), 0
        for flat in np.argsort(speeds[t][:, None] * units, axis=None, kind="stable"):
            i, j = divmod(int(flat), code.n_messages)
            if master.receive(i, j):
                break
            before = master.n_recovered
        out[t] = before / code.n_blocks
    return out


def completion_claims(wide, early=None):
    """The draft's claims on Tables III and IV, measured on a wide completion-time table.

    ``wide`` is :func:`gcc.experiments.cpgc_tables.completion_time_wide` of the draft's schemes and q;
    ``early`` the :func:`early_decoding` of RCSC (without it that claim is left out). Returns one row
    per measured quantity: ``claim, quantity, detail, measured, ci_low, ci_high, band_low, band_high,
    draft, draft_verdict, verdict`` (:func:`claim_verdict`).
    """
    c = wide.set_index(["scheme", "setting", "tolerance"])
    t3, t4 = ({k: v[0] for k, v in table.items()} for table in (TABLE_III, TABLE_IV))
    m3, m4 = ({k: v[1] for k, v in table.items()} for table in (TABLE_III, TABLE_IV))

    def cell(scheme, q, setting, col):
        row = c.loc[(scheme, setting, q)]
        half = "time_half_width" if col == "mean_time" else "messages_half_width"
        return float(row[col]), float(row[half])

    def ratio(a, b, setting, col="mean_time"):
        """x / y with the delta-method 95 % half-width of the independent cells x +- hx, y +- hy."""
        (x, hx), (y, hy) = cell(*a, setting, col), cell(*b, setting, col)
        return x / y, abs(x / y) * float(np.hypot(hx / x, hy / y))

    rows = []
    text = "At q = 0, RCSC is about as fast as MCC"
    r, h = ratio(("rcsc", 0.0), ("mds", 0.0), "computation")
    rows.append(_row(text, "E[T] RCSC / MCC, q = 0", r, h, (0.95, 1.05), t3["rcsc", 0.0] / t3["mds", 0.0]))
    text = "At q = 0, RCSC is about 35% faster than UC-MMC"
    r, h = ratio(("rcsc", 0.0), ("uc-mmc", 0.0), "computation")
    rows.append(_row(text, "1 - E[T] RCSC / UC-MMC, q = 0", 1 - r, h, (0.30, 0.40),
                     1 - t3["rcsc", 0.0] / t3["uc-mmc", 0.0]))
    for q, about in ((0.15, 0.40), (0.3, 0.50)):
        text = f"Partial recovery cuts RCSC's time by about {round(100 * about)}% at q = {q}"
        r, h = ratio(("rcsc", q), ("rcsc", 0.0), "computation")
        rows.append(_row(text, f"1 - E[T] at q = {q} / at q = 0", 1 - r, h, (about - 0.05, about + 0.05),
                         1 - t3["rcsc", q] / t3["rcsc", 0.0]))
    gaps = {}
    for q in (0.0, 0.15, 0.3):
        r, h = ratio(("rcsc", q), ("uc-mmc", q), "computation")
        gaps[q] = (1 - r, h)
        rows.append(_row("RCSC is faster than UC-MMC at every q (coded computation)",
                         f"1 - E[T] RCSC / UC-MMC, q = {q}", 1 - r, h, (0.0, 1.0),
                         1 - t3["rcsc", q] / t3["uc-mmc", q]))
    for qa, qb in ((0.0, 0.15), (0.15, 0.3)):
        d = gaps[qa][0] - gaps[qb][0]
        draft = t3["rcsc", qb] / t3["uc-mmc", qb] - t3["rcsc", qa] / t3["uc-mmc", qa]
        rows.append(_row("The gap between RCSC and UC-MMC shrinks as q grows",
                         f"relative gap at q = {qa} minus at q = {qb}", d, float(np.hypot(gaps[qa][1], gaps[qb][1])),
                         (0.0, 1.0), draft))
    r, h = ratio(("uc-mmc", 0.0), ("rcsc", 0.0), "computation", "mean_messages")
    rows.append(_row("At q = 0, UC-MMC needs about 28% more messages than RCSC",
                     "messages UC-MMC / RCSC - 1, q = 0", r - 1, h, (0.23, 0.33),
                     m3["uc-mmc", 0.0] / m3["rcsc", 0.0] - 1))
    for q in (0.0, 0.15, 0.3):
        r, h = min(ratio((s, q), ("mds", q), "computation", "mean_messages") for s in ("rcsc", "uc-mmc"))
        draft = min(m3[s, q] for s in ("rcsc", "uc-mmc")) / m3["mds", 0.0] - 1
        rows.append(_row("MCC uses the fewest messages", f"fewest other messages / MCC's - 1, q = {q}",
                         r - 1, h, (0.0, _BIG), draft))
    if early is not None:
        ci = mean_ci(np.asarray(early, dtype=float))
        rows.append(_row("RCSC decodes while computations are still arriving (MCC cannot)",
                         "share of blocks decoded before the last message, q = 0", ci.mean, ci.half_width,
                         (1e-9, 1.0), np.nan, detail=f"{ci.n} replayed iterations; MCC: 0 by construction"))
    for q in (0.0, 0.15, 0.3):
        r, h = ratio(("uc-mmc", q), ("rcsc", q), "communication")
        rows.append(_row("Coded communication: UC-MMC is slightly faster than RCSC",
                         f"1 - E[T] UC-MMC / RCSC, q = {q}", 1 - r, h, (1e-9, 0.25),
                         1 - t4["uc-mmc", q] / t4["rcsc", q]))
    for q in (0.0, 0.15, 0.3):
        r, h = ratio(("uc-mmc", q), ("rcsc", q), "communication", "mean_messages")
        rows.append(_row("Coded communication: UC-MMC sends more messages than RCSC",
                         f"messages UC-MMC / RCSC - 1, q = {q}", r - 1, h, (1e-9, _BIG),
                         m4["uc-mmc", q] / m4["rcsc", q] - 1))
    r, h = ratio(("gc", 0.0), ("rcsc", 0.0), "communication")
    rows.append(_row("Coded communication: GC is far slower", "E[T] GC / RCSC, q = 0", r, h, (2.0, _BIG),
                     t4["gc", 0.0] / t4["rcsc", 0.0]))
    return pd.DataFrame(rows)


def convergence_claims(data, scheme: str = "rcsc"):
    """The draft's convergence claims (Figs. 8 and 9), measured per ``dim`` on runs of gradient descent.

    ``data``: :func:`gcc.experiments.cpgc_tables.convergence_experiment` rows with a ``dim`` column and
    q = 0, 0.15, 0.3. Returns the columns of :func:`completion_claims` (``draft`` NaN: the claim is about
    the draft's figures), one row per (dim, q).
    """
    rows = []
    last = data["iteration"].max()
    for dim, sub in data[data["scheme"] == scheme].groupby("dim"):
        e = sub.pivot_table(index=["run", "tolerance"], columns="iteration", values="test_error")
        red = np.log(e[0] / e[last]).unstack("tolerance")
        for q, text, band in ((0.15, "q = 0.15 barely slows convergence per iteration", (0.9, 1.05)),
                              (0.3, "q = 0.3 visibly slows convergence per iteration", (0.0, 0.9))):
            ci = mean_ci((red[q] / red[0.0]).to_numpy())
            rows.append(_row(text, f"rho at q = {q}: log-reduction over {last} iterations / at q = 0",
                             ci.mean, ci.half_width, band, np.nan,
                             detail=f"d = {dim}, {ci.n} runs (paired)"))
    return pd.DataFrame(rows)
