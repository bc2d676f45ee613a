"""Choosing the smoothing parameters (lambda_enc, lambda_dec) by grid search on held-out batches.

The paper determines them "using cross-validation and grid search" [1]_ without giving the grid;
here every grid point is scored on the same draws (batches, straggler sets, noise): a paired
comparison.

References
----------
.. [1] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, NeurIPS 2024, arXiv:2406.00300, Sec. 5, App. E.
"""
from __future__ import annotations

from numbers import Integral, Real
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from .harness import CODE, TrialContext, run_trials, scores
from .stragglers import WorstCase
from .summary import summarize
from .validation import (TEXT, ArrayLike, Frame, Interval, Options, Rejected, caller, entry, invalid, validate,
                         validate_params)

_EDGES = ("lam_enc_edge", "lam_dec_edge")
_GRID = ArrayLike(ndim=1, dtype=float, finite=True,
                  description="a non-empty sequence of finite floats >= 0")

__all__ = ["select_lambdas", "DEFAULT_LAMBDA_GRID", "LambdaSelection", "grid_edge", "require_interior",
           "tolerant_optimum"]

#: a bottom choice within this relative distance of the score at lambda = 0 is a ``"plateau"``
_PLATEAU_RTOL = 1e-3

_MAXIMISE = ("relacc", "accuracy")
_NEEDS_LABELS = ("relacc", "relacc_literal", "accuracy")
_METRICS = ("loss", "rmse_norms", "rmse_rms", "relacc", "relacc_literal", "accuracy")


#: the default grid of each lambda: zero (interpolation) and one point per decade, 1e-8 .. 1
DEFAULT_LAMBDA_GRID = np.concatenate([[0.0], np.logspace(-8, 0, 9)])
DEFAULT_LAMBDA_GRID.flags.writeable = False


class LambdaSelection(NamedTuple):
    """Result of :func:`select_lambdas` (``*_edge``: :func:`grid_edge` on the final ``*_grid``)."""

    lam_enc: float
    lam_dec: float
    score: float
    table: Any  # pandas.DataFrame
    enc_edge: str = "interior"
    dec_edge: str = "interior"
    lam_enc_grid: tuple = ()
    lam_dec_grid: tuple = ()

    @property
    def on_edge(self) -> bool:
        """True when a choice sits on the top or the bottom edge of its grid."""
        return self.enc_edge in ("top", "bottom") or self.dec_edge in ("top", "bottom")


def grid_edge(value: float, grid: Sequence[float]) -> str:
    """Where a chosen lambda lies on its grid: ``"zero"``, ``"interior"``, ``"fixed"``, ``"top"`` or ``"bottom"``.

    0 (interpolation) is the domain's boundary, not an edge; the smallest *positive* value is the
    ``"bottom"`` edge; a grid of one value is ``"fixed"``.

    Parameters
    ----------
    value : float
        The chosen lambda (a value of ``grid``).
    grid : sequence of float >= 0

    Returns
    -------
    str

    Examples
    --------
    >>> from gcc.tuning import grid_edge
    >>> g = [0.0, 1e-3, 1e-2, 1e-1]
    >>> [grid_edge(v, g) for v in g]
    ['zero', 'bottom', 'interior', 'top']
    """
    g = np.asarray(grid, dtype=float)
    value = float(value)
    if value == 0:
        return "zero"
    if g.size < 2:
        return "fixed"
    if value >= g.max():
        return "top"
    if value <= g[g > 0].min():
        return "bottom"
    return "interior"


def _step_beyond(grid: Sequence[float], edge: str) -> float:
    """The next value beyond the ``edge`` of a grid: one outermost ratio (10 if undefined) further."""
    positive = np.sort(np.asarray([g for g in grid if g > 0], dtype=float))
    if edge == "top":
        ratio = positive[-1] / positive[-2] if positive.size >= 2 else 10.0
        return float(f"{positive[-1] * ratio:.12g}")  # 1e-5, not 9.999999999999999e-06
    ratio = positive[1] / positive[0] if positive.size >= 2 else 10.0
    return float(f"{positive[0] / ratio:.12g}")


@validate_params({"lambdas": Frame(_EDGES), "name": TEXT})
def require_interior(lambdas: Any, name: str = "lambdas") -> None:
    """Raise InvalidParameterError when a tuned lambda of ``lambdas`` sits on an edge of its grid.

    Parameters
    ----------
    lambdas : pandas.DataFrame
        Tuned values with the edge columns ``lam_enc_edge`` and ``lam_dec_edge`` (values of
        :func:`grid_edge`).
    name : str
        The table named in the message.

    Examples
    --------
    >>> import pandas as pd
    >>> from gcc.tuning import require_interior
    >>> require_interior(pd.DataFrame({"lam_enc_edge": ["zero"], "lam_dec_edge": ["interior"]}))
    >>> require_interior(pd.DataFrame({"lam_enc_edge": ["zero"], "lam_dec_edge": ["top"]}))
    Traceback (most recent call last):
    ...
    gcc.validation.InvalidParameterError: The 'lambdas' parameter of require_interior must be a table of tuned lambdas none of which sits on an edge of its grid (top, or smallest positive value) (row 0: lam_dec_edge = 'top'). Got 'a table with 1 rows' instead.
    """
    bad = [(i, c, v) for c in _EDGES for i, v in zip(range(len(lambdas)), lambdas[c]) if v in ("top", "bottom")]
    if bad:
        shown = "; ".join(f"row {i}: {c} = {v!r}" for i, c, v in bad[:5])
        more = f"; {len(bad) - 5} more" if len(bad) > 5 else ""
        raise invalid(name, caller("require_interior"), "a table of tuned lambdas none of which sits on an edge of its grid "
                      "(top, or smallest positive value)", f"a table with {len(lambdas)} rows",
                      shown + more)


def _check_grid(grid: Any, name: str) -> np.ndarray:
    """The grid (default :data:`DEFAULT_LAMBDA_GRID`): non-empty, values >= 0, no duplicates."""
    if grid is None:
        return DEFAULT_LAMBDA_GRID
    g = validate(grid, _GRID, name, "select_lambdas")
    if g.size == 0 or np.any(g < 0):
        raise invalid(name, "select_lambdas", _GRID, grid)
    if np.unique(g).size != g.size:
        raise invalid(name, "select_lambdas", "a sequence without duplicates", grid)
    return g


def _grid_codes(make_code: Any, ge, gd) -> dict:
    """``{(lam_enc, lam_dec): code}`` over the grid, all with the same (K, N)."""
    codes = {(le, ld): make_code(float(le), float(ld)) for le in ge for ld in gd}
    for (le, ld), code in codes.items():
        try:
            CODE.convert(code)
        except Rejected as err:
            raise invalid("make_code", "select_lambdas", "a factory of codes (with n_inputs, n_workers, "
                          "encode() and decode())", make_code,
                          f"make_code({le:g}, {ld:g}) gave a {type(code).__name__}: {err.detail}") from None
    sizes = {(int(c.n_inputs), int(c.n_workers)) for c in codes.values()}
    if len(sizes) != 1:
        raise invalid("make_code", "select_lambdas", "a factory whose codes share n_inputs and n_workers",
                      sorted(sizes))
    return codes


@validate_params({"metric": Options(_METRICS), "level": Interval(Real, 0, 1, closed="neither"),
                  "extend": Interval(Integral, 0, None)})
def select_lambdas(make_code: Callable[[float, float], Any] | Any, f: Callable,
                   batches: Sequence[Any] | Callable, straggler_model,
                   lam_enc_grid: Sequence[float] | None = None,
                   lam_dec_grid: Sequence[float] | None = None,
                   trials: int = 20, seed: int = 0, *, labels: Any = None,
                   noise_std: float = 0.0, metric: str = "loss",
                   level: float = 0.95, extend: int = 0) -> LambdaSelection:
    """Grid search of (lambda_enc, lambda_dec) scored on held-out batches.

    Every grid point is scored on the draws of :func:`gcc.harness.run_trials` with ``seed``; each
    trial decodes the same outputs with every ``lambda_dec`` (one forward pass per ``lambda_enc``).

    Parameters
    ----------
    make_code : callable ``(lam_enc, lam_dec) -> code``, or a code with ``with_params``
        Builds the scheme of one grid point (a ``SplineCode`` is used through ``with_params``).
    f : callable
        Vectorised over the leading axis (numpy or torch).
    batches : sequence of arrays (K, *in) or of ``(array, labels)``, or callable ``(rng, trial)``
        Held-out batches; trial ``t`` uses ``batches[t % len(batches)]``.
    straggler_model : a random model of :mod:`gcc.stragglers` (not ``WorstCase``)
    lam_enc_grid, lam_dec_grid : sequence of float >= 0, optional
        Default :data:`DEFAULT_LAMBDA_GRID`.
    trials : int >= 1
        Draws per grid point.
    seed : int >= 0
    labels : int array (K,), optional
        Labels of a fixed batch (``metric="relacc"`` or ``"accuracy"``).
    noise_std : float >= 0
        Worker noise (Theorem 2 setting).
    metric : {"loss", "rmse_norms", "rmse_rms", "relacc", "relacc_literal", "accuracy"}
        Score; accuracies and ``relacc`` are maximised, the others minimised.
    level : float in (0, 1)
        Level of the intervals in the table.
    extend : int >= 0
        Most steps added beyond each edge of each grid while a choice sits on it (only the new
        points are scored, on the same draws).

    Returns
    -------
    LambdaSelection
        The best pair, its mean ``score``, the final grids, their ``enc_edge`` / ``dec_edge``
        (:func:`grid_edge`), and ``table``: one row per grid point with the columns of
        :func:`gcc.summary.summarize`, ``rank`` (1 = best, ties to the first) and the edges.

    Examples
    --------
    With noisy workers, a smoothing decoder beats interpolation (Theorem 2):

    >>> import numpy as np, gcc
    >>> from gcc.tuning import select_lambdas
    >>> code = gcc.SplineCode(8, 200, points="equispaced")
    >>> sel = select_lambdas(code, np.sin, [np.linspace(-2, 2, 8)], gcc.FixedCount(10),
    ...                      [0.0], [0.0, 1e-4, 1e-2], trials=8, seed=0, noise_std=0.1)
    >>> sel.lam_dec > 0, list(sel.table["rank"])
    (True, [2, 1, 3])
    """
    import pandas as pd

    owner = "select_lambdas"
    ge, gd = _check_grid(lam_enc_grid, "lam_enc_grid"), _check_grid(lam_dec_grid, "lam_dec_grid")
    if isinstance(straggler_model, WorstCase) or not hasattr(straggler_model, "sample_many"):
        raise invalid("straggler_model", owner, "a random straggler model (FixedCount, "
                      "Bernoulli, ContiguousBlock, ShiftedExponential, SlowWorkers)", straggler_model)
    if hasattr(make_code, "with_params") and not callable(make_code):
        template = make_code
        make_code = lambda le, ld: template.with_params(lam_enc=le, lam_dec=ld)  # noqa: E731
    elif not callable(make_code):
        raise invalid("make_code", owner, "a callable (lam_enc, lam_dec) -> code, or a code "
                      "with with_params", make_code)
    K = next(iter(_grid_codes(make_code, ge[:1], gd[:1]).values())).n_inputs
    if callable(batches):
        source = batches
    elif isinstance(batches, (str, bytes)) or not isinstance(batches, Sequence) or len(batches) == 0:
        raise invalid("batches", owner, "a non-empty sequence of arrays (K, ...) or a "
                      "callable (rng, trial) -> array", type(batches).__name__)
    else:
        for j, batch in enumerate(batches):
            data = batch[0] if isinstance(batch, tuple) and len(batch) == 2 else batch
            shape = tuple(getattr(data, "shape", ()))
            if not shape or shape[0] != K:
                raise invalid("batches", owner, f"a sequence of arrays of shape (n_inputs={K}, ...) (or of "
                              "(array, labels))", type(batches).__name__, f"batches[{j}] has shape {shape}")
        source = lambda rng, t: batches[t % len(batches)]  # noqa: E731

    def evaluate(ge_sub, gd_sub) -> list:
        """(lam_enc, lam_dec, value) over ge_sub x gd_sub, on the draws of ``seed``."""
        codes = _grid_codes(make_code, ge_sub, gd_sub)
        records = []

        def decode_grid(ctx: TrialContext) -> None:
            """Score every lambda_dec on the outputs of scheme ``lam_enc`` (same draws)."""
            if metric in _NEEDS_LABELS and ctx.labels is None:
                raise invalid("labels", owner, f"given (metric={metric!r} needs labels)", None)
            le = ge_sub[int(ctx.scheme)]
            if ctx.estimate is None:  # too few survivors: a NaN for every grid point
                records.extend((le, ld, np.nan) for ld in gd_sub)
                return None
            Yr = ctx.outputs[ctx.received]
            for j, ld in enumerate(gd_sub):
                # the scheme's own code is (le, gd_sub[0]): its decode is already in the row
                value = ctx.row[metric] if j == 0 else scores(
                    codes[(le, ld)].decode(Yr, ctx.received), ctx.true, ctx.labels)[metric]
                records.append((le, ld, value))
            return None

        with entry(owner):
            run_trials({str(i): codes[(le, gd_sub[0])] for i, le in enumerate(ge_sub)}, f, source,
                       straggler_model, trials, seed, labels=labels, noise_std=noise_std,
                       on_trial=decode_grid)
        return records

    def rank(records, ge_all, gd_all):
        long = pd.DataFrame(records, columns=["lam_enc", "lam_dec", "value"])
        table = summarize(long, "value", by=["lam_enc", "lam_dec"], level=level)
        order = pd.MultiIndex.from_tuples([(float(le), float(ld)) for le in ge_all for ld in gd_all])
        table = table.set_index(["lam_enc", "lam_dec"]).loc[order].reset_index(names=["lam_enc", "lam_dec"])
        table.insert(2, "metric", metric)
        key = -table["mean"] if metric in _MAXIMISE else table["mean"]
        table["rank"] = key.rank(method="first", na_option="bottom").astype(int)
        return table, table.loc[table["rank"] == 1].iloc[0]

    ge_all, gd_all = [float(v) for v in ge], [float(v) for v in gd]
    records = evaluate(ge_all, gd_all)
    used = {"enc": {"top": 0, "bottom": 0}, "dec": {"top": 0, "bottom": 0}}
    def edge_of(table, best, which, grid):
        edge = grid_edge(best[f"lam_{which}"], grid)
        if edge == "bottom" and 0.0 in grid:  # as good as interpolation: a plateau down to 0
            other = "dec" if which == "enc" else "enc"
            at0 = table[(table[f"lam_{which}"] == 0.0) & (table[f"lam_{other}"] == best[f"lam_{other}"])]["mean"]
            if len(at0) and abs(float(at0.iloc[0]) - best["mean"]) <= _PLATEAU_RTOL * abs(float(at0.iloc[0])):
                edge = "plateau"
        return edge

    while True:
        table, best = rank(records, ge_all, gd_all)
        edges = {"enc": edge_of(table, best, "enc", ge_all), "dec": edge_of(table, best, "dec", gd_all)}
        new = {"enc": [], "dec": []}
        for which, grid in (("enc", ge_all), ("dec", gd_all)):
            edge = edges[which]
            if edge in ("top", "bottom") and used[which][edge] < extend:
                used[which][edge] += 1
                new[which].append(_step_beyond(grid, edge))
        if not new["enc"] and not new["dec"]:
            break
        if new["enc"]:
            records += evaluate(new["enc"], gd_all + new["dec"])
        if new["dec"]:
            records += evaluate(ge_all, new["dec"])
        ge_all, gd_all = ge_all + new["enc"], gd_all + new["dec"]
    table["enc_edge"] = [grid_edge(v, ge_all) for v in table["lam_enc"]]
    table["dec_edge"] = [grid_edge(v, gd_all) for v in table["lam_dec"]]
    table.loc[table["rank"] == 1, ["enc_edge", "dec_edge"]] = [edges["enc"], edges["dec"]]
    return LambdaSelection(float(best["lam_enc"]), float(best["lam_dec"]), float(best["mean"]), table,
                           edges["enc"], edges["dec"], tuple(ge_all), tuple(gd_all))


@validate_params({"which": Options(("enc", "dec")), "rtol": Interval(Real, 0, None)})
def tolerant_optimum(table: Any, which: str, rtol: float = 1e-3) -> float:
    """The largest ``lam_<which>`` whose score is within ``rtol`` of the best, the other lambda at its choice.

    On a flat score the argmin is decided by noise; the most smoothing that costs nothing is stable.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`select_lambdas`' table.
    which : {"enc", "dec"}
    rtol : float >= 0

    Returns
    -------
    float

    Examples
    --------
    >>> import pandas as pd
    >>> from gcc.tuning import tolerant_optimum
    >>> t = pd.DataFrame({"lam_enc": 0.0, "lam_dec": [0.0, 1e-9, 1e-8, 1e-7], "metric": "loss",
    ...                   "mean": [1.0, 0.9995, 0.9999, 1.2], "rank": [3, 1, 2, 4]})
    >>> tolerant_optimum(t, "dec")
    1e-08
    """
    best = table.loc[table["rank"] == 1].iloc[0]
    other = "dec" if which == "enc" else "enc"
    line = table[table[f"lam_{other}"] == best[f"lam_{other}"]]
    sign = -1.0 if str(best["metric"]) in _MAXIMISE else 1.0
    ok = line[sign * (line["mean"] - best["mean"]) <= rtol * abs(best["mean"])]
    return float(ok[f"lam_{which}"].max())
