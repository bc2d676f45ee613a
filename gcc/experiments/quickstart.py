"""The quickstart: GCC against BACC on ``f(x) = x sin x``, loss against the number of workers.

:func:`loss_trials` (one row per scheme, N and trial; both codes see the same inputs and straggler
sets) and :func:`plot_loss_vs_n`.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from gcc.codes import LABELS, make_many
from gcc.metrics import mse_loss
from gcc.stragglers import FixedCount

from .plotting import REFERENCE, band, figure, finish, log_ticks, scheme_color, scheme_marker
from .problems import xsinx

__all__ = ["SCHEMES", "loss_trials", "plot_loss_vs_n"]

#: The two codes of the quickstart (registry keys of :mod:`gcc.codes`).
SCHEMES = ("gcc", "bacc")


def loss_trials(n_inputs: int, n_stragglers: int, n_workers_grid: Sequence[int], n_trials: int,
                input_low: float = -3.0, input_high: float = 3.0, seed: int = 0):
    """End-to-end loss of GCC and BACC on ``x sin x`` for every N of a grid and every trial.

    Per N the S-straggler sets of all `n_trials` trials are drawn first (:class:`gcc.FixedCount`), then
    per trial the K = `n_inputs` inputs uniformly from ``[input_low, input_high]``; `seed` seeds the one
    generator of the whole sweep.

    Returns
    -------
    pandas.DataFrame
        One row per (scheme, N, trial): ``scheme, n_workers, n_inputs, n_stragglers, trial, loss``.
    """
    rng = np.random.default_rng(seed)
    stragglers = FixedCount(n_stragglers)
    rows = []
    for n_workers in n_workers_grid:
        codes = make_many(SCHEMES, n_inputs, n_workers)
        masks = stragglers.sample_many(rng, n_workers, n_trials)       # (trials, N), True = received
        for trial, mask in enumerate(masks):
            x = rng.uniform(input_low, input_high, size=n_inputs)
            received = np.flatnonzero(mask)
            for scheme, code in codes.items():
                estimate = code.decode(xsinx(code.encode(x)[received]), received)
                rows.append(dict(scheme=scheme, n_workers=n_workers, n_inputs=n_inputs,
                                 n_stragglers=n_stragglers, trial=trial,
                                 loss=float(mse_loss(estimate, xsinx(x)))))
    return pd.DataFrame(rows)


def plot_loss_vs_n(summary, slopes, title: str = ""):
    """Mean loss against N (log-log) per scheme, its 95% band, a reference slope -3 through GCC's first point.

    `summary` is :func:`gcc.summarize` of the loss by ``scheme, n_workers``; `slopes` its
    :func:`gcc.slope_table` by ``scheme`` (the legend shows each slope).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, (ax,) = figure(1)
    fitted = slopes.set_index("scheme")["slope"]
    for scheme, g in summary.groupby("scheme"):
        g = g.sort_values("n_workers")
        color = scheme_color(scheme)
        ax.loglog(g["n_workers"], g["mean"], "-", marker=scheme_marker(scheme), color=color,
                  label=f"{LABELS[scheme]}: fitted slope {fitted[scheme]:.2f}")
        band(ax, g["n_workers"], g, color)
    n = np.sort(summary["n_workers"].unique()).astype(float)
    first = summary[summary.scheme == "gcc"].sort_values("n_workers")["mean"].iloc[0]
    ax.loglog(n, first * (n / n[0]) ** -3.0, **REFERENCE, label="reference slope $\u22123$")
    log_ticks(ax, n)
    ax.set_xlabel("number of workers $N$")
    ax.set_ylabel("mean end-to-end loss")
    ax.set_title(title)
    ax.legend()
    return finish(fig)
