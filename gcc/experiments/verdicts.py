"""Two-sided verdicts: is a measured exponent at, beyond or short of the exponent a paper claims?

A rate theorem is an upper bound, ``loss <= C x^r``; a log-log slope ``b`` measured with a
confidence interval ``[lo, hi]`` can fall on either side of ``r``, and a check is only worth
running if both sides can happen. :func:`verdict` is the one rule every rate experiment of the
book uses (the claims table, :mod:`gcc.experiments.claims`, calls nothing else):

``tight``
    The interval contains the claimed exponent: the data decay exactly as fast as the bound
    (the bound is attained, up to its constant).
``loose``
    The data decay faster (grow slower) than the bound: it holds, with room to spare.
``violated``
    The data decay slower (grow faster) than the bound: it fails where it was measured.
``undecided``
    The interval contains the claim but is too wide to tell ``tight`` from the other two
    (half-width above ``max_half_width``): more points, or a longer sweep, are needed.
``not measured``
    No finite slope (fewer than three usable points).

The slope is always taken with the abscissa *increasing* (N, S + 1, or a log factor), so "the
bound holds" is ``b <= r`` for every upper bound; ``sense="lower"`` flips the roles for a claim
that is a lower bound (a recovery threshold), ``sense="equal"`` makes both sides ``violated`` for
an asymptotic law (the Erdős–Rényi longest run).

Imports numpy and the core's validators only.
"""
from __future__ import annotations

import numpy as np

from gcc.validation import check_choice, check_real

__all__ = ["VERDICTS", "SENSES", "verdict", "path_exponent"]

#: every verdict :func:`verdict` can return, the decisive three first
VERDICTS = ("tight", "loose", "violated", "undecided", "not measured")

#: the kinds of claim :func:`verdict` understands
SENSES = ("upper", "lower", "equal")


def verdict(claimed: float, low: float, high: float, *, sense: str = "upper", margin: float = 0.0,
            max_half_width: float | None = 0.5) -> str:
    """The two-sided verdict of one measured exponent against a claimed one.

    Parameters
    ----------
    claimed : float
        The exponent the claim implies (e.g. -3 for ``O(N^-3)``, 0 for a bounded ratio).
    low, high : float
        The measured interval (a point measurement: ``low == high``).
    sense : {"upper", "lower", "equal"}
        ``"upper"``: the claim bounds the measured exponent from above (a rate theorem:
        ``loss <= C x^claimed``). ``"lower"``: from below (a sufficient condition such as a
        recovery threshold: the measured value must reach ``claimed``). ``"equal"``: an
        asymptotic law, off on either side is ``violated``.
    margin : float >= 0
        A practical-equivalence margin: the interval is widened by `margin` on each side
        before it is compared with `claimed`. The worst cases are deterministic, so their
        intervals measure only how far the points bend away from a straight line (often a few
        hundredths); a pre-asymptotic bend of 0.1 is not a different rate.
    max_half_width : float or None
        An interval of half-width above this that contains `claimed` is ``undecided``
        rather than ``tight`` (None: never). An interval that excludes the claim is decisive
        whatever its width.

    Returns
    -------
    str
        One of :data:`VERDICTS`.

    Examples
    --------
    >>> from gcc.experiments.verdicts import verdict
    >>> verdict(-3.0, -3.2, -2.8), verdict(-3.0, -6.5, -5.5), verdict(-3.0, -2.4, -2.0)
    ('tight', 'loose', 'violated')
    >>> verdict(-3.0, -4.5, -1.5), verdict(4.0, 6.0, 6.0, sense="lower"), verdict(3.0, 2.86, 2.94, margin=0.2)
    ('undecided', 'loose', 'tight')
    """
    check_choice(sense, "sense", "verdict", SENSES)
    if max_half_width is not None:
        max_half_width = check_real(max_half_width, "max_half_width", "verdict", minimum=0.0)
    values = np.array([claimed, low, high], dtype=float)
    if not np.all(np.isfinite(values)):
        return "not measured"
    margin = check_real(margin, "margin", "verdict", minimum=0.0)
    claimed, low, high = (float(v) for v in values)
    low, high = min(low, high) - margin, max(low, high) + margin
    if low <= claimed <= high:
        if max_half_width is not None and (high - low) / 2 - margin > max_half_width:
            return "undecided"
        return "tight"
    above = low > claimed  # the whole interval lies above the claimed value
    if sense == "equal":
        return "violated"
    if sense == "upper":
        return "violated" if above else "loose"
    return "loose" if above else "violated"


def path_exponent(n_workers, n_stragglers, s_power: float, n_power: float) -> float:
    """The slope in N that ``(S+1)^s_power N^-n_power`` has along a sweep path ``(N_i, S_i)``.

    A joint sweep lets S grow with N (``S = c N^gamma``); the bound's claimed slope along it is
    the least-squares slope of the bound itself on the path's points, so rounding of S and the
    ``+1`` are accounted for exactly (it is ``s_power gamma - n_power`` only asymptotically).

    Parameters
    ----------
    n_workers, n_stragglers : array_like, shape (n,), n >= 2
        The path's N and S.
    s_power, n_power : float
        The bound's exponents, e.g. (3, 3) for ``O(S^3 N^-3)``.

    Returns
    -------
    float

    Examples
    --------
    >>> from gcc.experiments.verdicts import path_exponent
    >>> round(path_exponent([64, 256, 1024], [7, 15, 31], 3.0, 3.0), 6)  # S + 1 = sqrt(N)
    -1.5
    """
    N = np.asarray(n_workers, dtype=float)
    S = np.asarray(n_stragglers, dtype=float)
    y = s_power * np.log(S + 1.0) - n_power * np.log(N)
    return float(np.polyfit(np.log(N), y, 1)[0])
