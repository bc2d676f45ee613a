"""Figure helpers of the experiments: every plot function makes its figure with :func:`figure` (the
book's style and width, at most three panels per row, the drawing function recorded for the page's
source link) and draws a scheme in its colour and marker (:func:`scheme_color`, :func:`scheme_kw`).
"""
from __future__ import annotations

import sys

import numpy as np

from gcc.figures import (FIGURE_WIDTH_IN, MAX_PANELS_PER_ROW, REFERENCE, SCHEME_STYLES, scheme_style,
                         use_book_style)
from gcc.validation import Interval, validate

__all__ = ["SCHEME_STYLES", "REFERENCE", "figure", "scheme_color", "scheme_marker", "scheme_kw", "scheme_shades",
           "band", "finish", "log_ticks", "log_axis", "legend_outside"]


def figure(n_panels: int = 1, ncols: int | None = None, height: float | None = None, wide_last: bool = False,
           **subplots):
    """A new figure in the book's style: ``n_panels`` axes, at most three per row, the column's width.

    Parameters
    ----------
    n_panels : int
    ncols : int, optional
        Panels per row (at most 3; default ``min(n_panels, 3)``).
    height : float, optional
        In inches (default 2.35 in per row, 3.0 in for a single panel).
    wide_last : bool
        The last panel spans the whole last row.
    **subplots
        Passed to :func:`matplotlib.pyplot.subplots` (``sharex``, ``sharey``, ...).

    Returns
    -------
    fig : matplotlib.figure.Figure
        6.7 in wide, constrained layout; ``fig.gcc_drawn_by`` names the function that called :func:`figure`.
    axes : numpy.ndarray of Axes, shape (n_panels,)
        Flat, in reading order.
    """
    import matplotlib.pyplot as plt

    n_panels = validate(n_panels, Interval(int, 1, None), "n_panels", "figure")
    ncols = min(n_panels, MAX_PANELS_PER_ROW) if ncols is None else validate(
        ncols, Interval(int, 1, MAX_PANELS_PER_ROW), "ncols", "figure")
    nrows = -(-n_panels // ncols)
    if height is None:
        height = 3.0 if n_panels == 1 else 2.35 * nrows + 0.4
    use_book_style()
    fig, axes = plt.subplots(nrows, ncols, figsize=(FIGURE_WIDTH_IN, height), squeeze=False,
                             layout="constrained", **subplots)
    axes = axes.ravel()
    for ax in axes[n_panels - 1 if wide_last else n_panels:]:
        ax.remove()
    if wide_last:
        axes = np.append(axes[:n_panels - 1], fig.add_subplot(axes[0].get_gridspec()[nrows - 1, :]))
    caller = sys._getframe(1)
    fig.gcc_drawn_by = f"{caller.f_globals.get('__name__')}.{caller.f_code.co_name}"
    return fig, axes[:n_panels]


def scheme_color(name):
    """The colour of a scheme (a key or alias of :func:`gcc.figures.scheme_style`) in every figure (None: no scheme)."""
    style = scheme_style(name)
    return None if style is None else style[0]


def scheme_marker(name) -> str:
    """The marker of a scheme in every figure (``"o"`` for a name that is no scheme)."""
    style = scheme_style(name)
    return "o" if style is None else style[1]


def scheme_kw(name) -> dict:
    """``color`` and ``marker`` keywords of a scheme for :meth:`~matplotlib.axes.Axes.plot`."""
    style = scheme_style(name)
    return {} if style is None else {"color": style[0], "marker": style[1]}


def scheme_shades(name, n: int) -> list:
    """``n`` shades of a scheme's colour, light to dark, the darkest the colour itself (greys for no scheme)."""
    import matplotlib.colors as mcolors

    base = np.array(mcolors.to_rgb(scheme_color(name) or "0.25"))
    mix = np.linspace(0.7, 0.0, n) if n > 1 else np.zeros(1)
    return [tuple(base * (1 - m) + m) for m in mix]


def band(ax, x, summary_rows, color, alpha: float = 0.15):
    """Shade the confidence interval of ``summary_rows`` (``mean``, ``ci_low``, ``ci_high``; else nothing)
    around their mean at abscissae ``x``, in ``color``.

    A group of one measurement has a NaN interval: no band. A lower end at or below 0 (a t interval
    of a heavy-tailed loss) is drawn from the mean, so that a log axis shows the upper half.
    """
    if not {"mean", "ci_low", "ci_high"} <= set(summary_rows.columns):
        return
    mean = summary_rows["mean"].to_numpy(float)
    lo = summary_rows["ci_low"].to_numpy(float)
    lo = np.where(np.isfinite(lo) & (lo > 0), lo, mean)
    hi = summary_rows["ci_high"].to_numpy(float)
    if np.all(np.isfinite(hi)) and np.any(hi > lo):
        ax.fill_between(x, lo, hi, color=color, alpha=alpha, lw=0)


def log_ticks(ax, values) -> None:
    """Label a log x axis at ``values`` (the grid of N: matplotlib labels only decades), plain numbers."""
    from matplotlib.ticker import FixedLocator, NullFormatter, ScalarFormatter

    values = sorted({float(v) for v in np.asarray(values, float).ravel() if np.isfinite(v) and v > 0})
    if len(values) > 7:  # every other value keeps the labels apart
        values = values[::-(-len(values) // 7)]
    ax.xaxis.set_major_locator(FixedLocator(values))
    formatter = ScalarFormatter()
    formatter.set_scientific(False)
    ax.xaxis.set_major_formatter(formatter)
    ax.xaxis.set_minor_formatter(NullFormatter())


def log_axis(ax, axis: str = "x") -> None:
    """Label a log axis of under two decades at 1, 2 and 5 times the powers of ten (more on a shorter
    range), plain numbers, where matplotlib's minor labels collide; call it after the data are drawn."""
    from matplotlib.ticker import LogLocator, NullFormatter, StrMethodFormatter

    target = ax.xaxis if axis == "x" else ax.yaxis
    lo, hi = sorted(ax.get_xlim() if axis == "x" else ax.get_ylim())  # call after the data are drawn
    decades = np.log10(hi / lo) if lo > 0 and hi > lo else 3.0
    subs = ((1.0, 2.0, 5.0) if decades >= 1.5 else (1.0, 1.5, 2.0, 3.0, 4.0, 6.0) if decades < 0.8
            else (1.0, 2.0, 3.0, 5.0))
    target.set_major_locator(LogLocator(base=10, subs=subs))
    target.set_major_formatter(StrMethodFormatter("{x:g}"))
    target.set_minor_formatter(NullFormatter())


def legend_outside(fig, axes=None, ncol: int | None = None, **kw):
    """One legend below the panels of ``fig`` (made by :func:`figure`), each label of ``axes`` (default
    all) once, in ``ncol`` columns (default up to 4)."""
    handles, labels = {}, []
    for ax in fig.axes if axes is None else axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label not in handles and not label.startswith("_"):
                handles[label] = handle
                labels.append(label)
    if not labels:
        return None
    return fig.legend([handles[k] for k in labels], labels, loc="outside lower center",
                      ncol=ncol or min(len(labels), 4), **kw)


def finish(fig):
    """Tidy a finished figure: no minor labels on log axes, :func:`log_axis` on those under two decades,
    tight layout unless it has a layout; returns ``fig``."""
    from matplotlib.ticker import FixedLocator, NullFormatter

    for ax in fig.axes:
        for axis, scale, limits in (("x", ax.get_xscale(), ax.get_xlim()), ("y", ax.get_yscale(), ax.get_ylim())):
            if scale != "log":
                continue
            lo, hi = sorted(limits)
            target = ax.xaxis if axis == "x" else ax.yaxis
            if lo > 0 and np.log10(hi / lo) < 2 and not isinstance(target.get_major_locator(), FixedLocator):
                log_axis(ax, axis)  # under two decades a log axis would show one label, or none
            target.set_minor_formatter(NullFormatter())
    if fig.get_layout_engine() is None:
        fig.tight_layout()
    return fig
