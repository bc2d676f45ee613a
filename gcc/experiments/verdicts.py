"""Two-sided verdicts: is a measured exponent at, beyond or short of the exponent a paper claims?

:func:`verdict` is the book's one rule, an equivalence test (two one-sided tests [1]_) of a
measured 95% interval against the band ``claimed +- delta``. :data:`DELTA` = 0.25 for exponents:
below every distinction the papers draw (their exponents differ by at least 1/2), above the
pre-asymptotic bend of a log-log fit over one or two decades.

References
----------
.. [1] Schuirmann, "A comparison of the two one-sided tests procedure and the power approach for
   assessing the equivalence of average bioavailability", J. Pharmacokin. Biopharm. 15 (1987).
"""
from __future__ import annotations

import numpy as np

from gcc.validation import Options, check_real, validate

__all__ = ["VERDICTS", "BAND_VERDICTS", "DELTA", "verdict", "band_verdict", "verdict_reason"]

#: every verdict :func:`verdict` can return, the decisive three first
VERDICTS = ("tight", "loose", "violated", "undecided", "not measured")

#: every outcome of :func:`band_verdict`
BAND_VERDICTS = ("inside", "below", "above", "undecided", "not measured")

#: half-width of the equivalence band of an exponent
DELTA = 0.25


def band_verdict(low: float, high: float, band_low: float, band_high: float) -> str:
    """Where a measured interval lies against a band: wholly inside, below, above, or neither.

    Parameters
    ----------
    low, high : float
        The measured 95% interval (a point measurement: ``low == high``).
    band_low, band_high : float
        The band of values that count as agreeing with the claim, ``band_low <= band_high``.

    Returns
    -------
    str
        One of :data:`BAND_VERDICTS` (``"not measured"``: a bound of the interval is not finite).
    """
    band_low = check_real(band_low, "band_low", "band_verdict")
    band_high = check_real(band_high, "band_high", "band_verdict", minimum=band_low)
    values = np.array([low, high], dtype=float)
    if not np.all(np.isfinite(values)):
        return "not measured"
    low, high = float(values.min()), float(values.max())
    if band_low <= low and high <= band_high:
        return "inside"
    if high < band_low:
        return "below"
    if low > band_high:
        return "above"
    return "undecided"


def verdict(claimed: float, low: float, high: float, *, sense: str = "upper", delta: float = DELTA) -> str:
    """The two-sided verdict of one measured exponent against a claimed one (an equivalence test).

    Parameters
    ----------
    claimed : float
        The exponent the claim implies (e.g. -3 for ``O(N^-3)``, 0 for a bounded ratio).
    low, high : float
        The measured 95% interval (a point measurement: ``low == high``).
    sense : {"upper", "lower", "equal"}
        The claim bounds the exponent from above (a rate), from below (a threshold), or is a law.
    delta : float >= 0
        Half-width of the band ``[claimed - delta, claimed + delta]`` (0 for an exact count).

    Returns
    -------
    str
        One of :data:`VERDICTS`: ``tight`` (inside the band), ``loose`` / ``violated`` (wholly
        beyond it where the claim holds with room / fails; both sides violate a law), ``undecided``.
    """
    validate(sense, Options(("upper", "lower", "equal")), "sense", "verdict")
    delta = check_real(delta, "delta", "verdict", minimum=0.0)
    claimed = float(claimed)
    if not np.isfinite(claimed):
        return "not measured"
    where = band_verdict(low, high, claimed - delta, claimed + delta)
    if where == "inside":
        return "tight"
    if where in ("undecided", "not measured"):
        return where
    if sense == "equal":
        return "violated"
    above = where == "above"  # the whole interval lies above the band
    if sense == "upper":
        return "violated" if above else "loose"
    return "loose" if above else "violated"


def verdict_reason(claimed: float, low: float, high: float, *, sense: str = "upper", delta: float = DELTA) -> str:
    """What the data show, in one line: why :func:`verdict` says what it says.

    Parameters
    ----------
    claimed, low, high, sense, delta
        As in :func:`verdict`.

    Returns
    -------
    str
    """
    v = verdict(claimed, low, high, sense=sense, delta=delta)
    if v == "not measured":
        return "no finite measurement"
    lo, hi = sorted((float(low), float(high)))
    a, b = float(claimed) - float(delta), float(claimed) + float(delta)
    band = f"the band [{a:.3g}, {b:.3g}]"
    what = f"measured {lo:.3g}" if lo == hi else f"interval [{lo:.3g}, {hi:.3g}]"
    if v == "tight":
        return f"{what} lies inside {band}"
    if v in ("loose", "violated"):
        side = "above" if lo > b else "below"
        return f"{what} lies {'wholly ' if lo != hi else ''}{side} {band}"
    if hi - lo > b - a:
        return f"{what} (width {hi - lo:.3g}) wider than {band}"
    edge = ("lower", a) if lo < a else ("upper", b)
    return f"{what} straddles the band's {edge[0]} edge {edge[1]:.3g}"

