"""Shared figure helpers of the experiments: one colour per scheme, interval bands, finishing a figure.

Every experiments module (and :mod:`gcc.dnn`) draws with these three, so a scheme has the same
colour and the same label (:data:`gcc.codes.LABELS`) in every figure of the book:

* :func:`scheme_color` -- the colour of a scheme key (``"gcc"`` -> ``"C0"``);
* :func:`band` -- the confidence band of a summary table (:func:`gcc.summary.summarize` columns);
* :func:`finish` -- tidy the axes and the layout of a finished figure.

matplotlib is imported inside the functions (figures are drawn only by notebooks).
"""
from __future__ import annotations

import numpy as np

from gcc.codes import canonical

__all__ = ["SCHEME_COLORS", "scheme_color", "band", "finish"]

#: scheme key -> matplotlib colour, the same in every figure
SCHEME_COLORS = {"gcc": "C0", "bacc": "C3", "bspline": "C2", "lcc": "C4"}


def scheme_color(name):
    """The colour of a scheme in every figure.

    Parameters
    ----------
    name : str
        A scheme key or alias of :mod:`gcc.codes` (any case).

    Returns
    -------
    str or None
        A matplotlib colour; None for a name outside the registry (e.g. ``"uncoded"``), so that
        matplotlib takes the next colour of its cycle.

    Examples
    --------
    >>> from gcc.experiments.plotting import scheme_color
    >>> scheme_color("GCC"), scheme_color("bacc"), scheme_color("uncoded")
    ('C0', 'C3', None)
    """
    try:
        return SCHEME_COLORS[canonical(name)]
    except ValueError:
        return None


def band(ax, x, summary_rows, color, alpha: float = 0.15):
    """Shade the confidence interval of a summary table's rows around their mean.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    x : array_like, shape (n,)
        Abscissae of the rows.
    summary_rows : pandas.DataFrame, n rows
        With ``mean``, ``ci_low``, ``ci_high`` (:func:`gcc.summary.summarize`); nothing is drawn
        without these columns.
    color : matplotlib colour
    alpha : float
        Opacity of the band.

    Notes
    -----
    A group of one measurement (the deterministic worst case) has a NaN interval: no band is
    drawn for the line then. A t interval of a heavy-tailed loss can reach below 0; on log axes
    the band then shows its upper half only (mean to upper end) instead of running off the axis.
    """
    if not {"mean", "ci_low", "ci_high"} <= set(summary_rows.columns):
        return
    mean = summary_rows["mean"].to_numpy(float)
    lo = summary_rows["ci_low"].to_numpy(float)
    lo = np.where(np.isfinite(lo) & (lo > 0), lo, mean)
    hi = summary_rows["ci_high"].to_numpy(float)
    if np.all(np.isfinite(hi)) and np.any(hi > lo):
        ax.fill_between(x, lo, hi, color=color, alpha=alpha, lw=0)


def finish(fig):
    """Tidy a finished figure: no minor tick labels on log x axes, tight layout.

    Minor tick labels of log axes (2x10^1, 3x10^1, ...) overlap on short ranges.

    Parameters
    ----------
    fig : matplotlib.figure.Figure

    Returns
    -------
    matplotlib.figure.Figure
        The same figure, for ``return finish(fig)``.
    """
    from matplotlib.ticker import NullFormatter

    for ax in fig.axes:
        if ax.get_xscale() == "log":
            ax.xaxis.set_minor_formatter(NullFormatter())
    fig.tight_layout()
    return fig
