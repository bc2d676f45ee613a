"""Argument constraints of the DNN experiments (the contract of :mod:`gcc.validation`).

The runners of :mod:`~gcc.experiments.dnn_stragglers`, :mod:`~gcc.experiments.dnn_summary`,
:mod:`~gcc.experiments.dnn_lambda`, :mod:`~gcc.experiments.dnn_probabilistic`,
:mod:`~gcc.experiments.coded_samples` and :mod:`~gcc.experiments.coding_cost` take the same
kinds of arguments: the workers' function, the data splits, the prepared networks, scheme
names, grids of smoothing parameters, sequences of worker or straggler counts and result
tables. The constraints here check them *before* anything is tuned or simulated, so that a bad
argument fails at once with the library's message, named after the runner the user called,
instead of deep inside the harness (or after an hour of training). They check and never
rewrite a value in a way that could change a number: sequences of counts come back as lists of
Python ints, grids and arrays as they were given.

Imports the core only (numpy, pandas inside the functions; never torch).
"""
from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np

from ..codes import canonical
from ..validation import (NAME, ArrayLike, Callable, Constraint, InstanceOf, Interval, NoneOr, Rejected, check_int, invalid,
                          validate)

__all__ = ["F", "LEVEL", "LAM", "TRIALS", "COUNT", "TEXT", "NAME", "FLAG_COLUMNS", "Frame", "IntList", "RealList", "Grid",
           "Schemes", "Splits", "Prepared", "Columns", "SPLITS", "PREPARED", "GRID", "SCHEMES", "COLUMNS",
           "TUNING_METRICS", "TEST_SPLITS", "is_int", "check_pool", "check_sizes", "check_regimes", "check_per_regime",
           "check_stragglers", "check_sweep", "validate_model", "check_band", "check_grid", "check_metric",
           "check_straggler_list", "check_lambda_pairs", "check_family_triples", "check_columns",
           "check_lambda_columns", "Names", "NAMES", "check_scheme_pair"]

#: The criteria of :func:`gcc.tuning.select_lambdas`.
TUNING_METRICS = ("loss", "rmse_norms", "rmse_rms", "relacc", "relacc_literal", "accuracy")

#: the workers' function
F = Callable()
#: a confidence level
LEVEL = Interval(numbers.Real, 0, 1, closed="neither")
#: a smoothing parameter
LAM = Interval(numbers.Real, 0, None)
#: trials, repeats, draws per grid point
TRIALS = Interval(numbers.Integral, 1, None)
#: a count (K, N)
COUNT = Interval(numbers.Integral, 1, None)
#: a name stored in a column (model, dataset, regime)
TEXT = InstanceOf(str, "a str")


#: flag columns that are not metrics
FLAG_COLUMNS = ("too_few_survivors",)


def is_int(v) -> bool:
    """An int (Python or numpy), never a bool."""
    return isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))


def _sequence(value) -> bool:
    return not isinstance(value, (str, bytes, Mapping)) and np.ndim(value) == 1


class Frame(Constraint):
    """A pandas DataFrame with the given columns (returned as it is).

    Examples
    --------
    >>> import pandas as pd
    >>> from gcc.experiments.dnn_checks import Frame
    >>> Frame(("scheme", "loss")).description
    'a pandas.DataFrame with columns scheme, loss'
    >>> Frame(("scheme",)).is_satisfied_by(pd.DataFrame({"loss": [1.0]}))
    False
    """

    def __init__(self, columns=(), description: str | None = None):
        super().__init__(description)
        self.columns = tuple(columns)

    def describe(self) -> str:
        return "a pandas.DataFrame" + (f" with columns {', '.join(self.columns)}" if self.columns else "")

    def convert(self, value, name: str = "value"):
        import pandas as pd

        if not isinstance(value, pd.DataFrame):
            raise Rejected()
        missing = [c for c in self.columns if c not in value.columns]
        if missing:
            raise Rejected(f"it has no column {', '.join(map(repr, missing))}")
        return value


class IntList(Constraint):
    """A sequence of ints in [low, high], returned as a list of Python ints.

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.experiments.dnn_checks import IntList
    >>> IntList(0).convert(np.array([0, 20, 35]))
    [0, 20, 35]
    >>> IntList(0).is_satisfied_by([0, 1.5]), IntList(0).is_satisfied_by([]), IntList(0).is_satisfied_by(3)
    (False, False, False)
    """

    def __init__(self, low=None, high=None, min_len: int = 1, distinct: bool = False,
                 description: str | None = None):
        super().__init__(description)
        self.low, self.high, self.min_len, self.distinct = low, high, min_len, distinct

    def describe(self) -> str:
        bounds = (f" in [{self.low}, {self.high}]" if self.low is not None and self.high is not None else
                  f" >= {self.low}" if self.low is not None else f" <= {self.high}" if self.high is not None else "")
        size = "a non-empty sequence" if self.min_len == 1 else "a sequence" if self.min_len == 0 else \
            f"a sequence of at least {self.min_len}"
        return f"{size} of {'distinct ' if self.distinct else ''}ints{bounds}"

    def convert(self, value, name: str = "value"):
        if not _sequence(value):
            raise Rejected()
        out = []
        for i, v in enumerate(value):
            if not is_int(v):
                raise Rejected(f"{name}[{i}] = {v!r} is not an int")
            if (self.low is not None and v < self.low) or (self.high is not None and v > self.high):
                raise Rejected(f"{name}[{i}] = {v!r}")
            out.append(int(v))
        if len(out) < self.min_len:
            raise Rejected(f"it has {len(out)} entries")
        if self.distinct and len(set(out)) != len(out):
            raise Rejected("it repeats an entry")
        return out


class RealList(Constraint):
    """A sequence of finite reals in an interval, returned as a list of Python floats.

    Examples
    --------
    >>> from gcc.experiments.dnn_checks import RealList
    >>> RealList(0, 1, closed="left").convert([0, 0.5])
    [0.0, 0.5]
    >>> RealList(0, 1, closed="left").is_satisfied_by([0.2, 1.0])
    False
    """

    def __init__(self, low=None, high=None, closed: str = "both", min_len: int = 1, distinct: bool = False,
                 description: str | None = None):
        super().__init__(description)
        self.entry = Interval(numbers.Real, low, high, closed=closed)
        self.min_len, self.distinct = min_len, distinct

    def describe(self) -> str:
        entry = self.entry.description.replace("a finite real number", "finite reals").replace("a float", "floats")
        return f"a non-empty sequence of {'distinct ' if self.distinct else ''}{entry}"

    def convert(self, value, name: str = "value"):
        if not _sequence(value):
            raise Rejected()
        out = []
        for i, v in enumerate(value):
            if not self.entry.is_satisfied_by(v):
                raise Rejected(f"{name}[{i}] = {v!r}")
            out.append(float(v))
        if len(out) < self.min_len:
            raise Rejected(f"it has {len(out)} entries")
        if self.distinct and len(set(out)) != len(out):
            raise Rejected("it repeats an entry")
        return out


class Grid(Constraint):
    """A grid of smoothing parameters: a non-empty sequence of distinct finite reals >= 0 (returned as given)."""

    def describe(self) -> str:
        return "a non-empty sequence of distinct finite reals >= 0"

    def convert(self, value, name: str = "value"):
        RealList(0, None, distinct=True).convert(value, name)
        return value


#: a lambda grid or None (the default grid)
GRID = NoneOr(Grid())


class Schemes(Constraint):
    """A non-empty sequence of distinct scheme names (keys or aliases of :data:`gcc.codes.SCHEMES`); returned as given."""

    def describe(self) -> str:
        return "a non-empty sequence of distinct scheme names (gcc, bacc, bspline, lcc)"

    def convert(self, value, name: str = "value"):
        if not _sequence(value) or len(value) == 0:
            raise Rejected()
        keys = []
        for i, v in enumerate(value):
            try:
                keys.append(canonical(v))
            except ValueError:
                raise Rejected(f"{name}[{i}] = {v!r} is no scheme") from None
        if len(set(keys)) != len(keys):
            raise Rejected("it names a scheme twice")
        return value


#: scheme names
SCHEMES = Schemes()


class Names(Constraint):
    """A non-empty sequence of names (str), returned as a list.

    Examples
    --------
    >>> from gcc.experiments.dnn_checks import NAMES
    >>> NAMES.convert(("lenet5", "vit")), NAMES.is_satisfied_by("lenet5"), NAMES.is_satisfied_by([])
    (['lenet5', 'vit'], False, False)
    """

    def __init__(self, min_len: int = 1, description: str | None = None):
        super().__init__(description)
        self.min_len = min_len

    def describe(self) -> str:
        return f"a {'non-empty ' if self.min_len else ''}sequence of names (str)"

    def convert(self, value, name: str = "value"):
        if not _sequence(value) or len(value) < self.min_len:
            raise Rejected()
        out = list(value)
        for i, v in enumerate(out):
            if not isinstance(v, str):
                raise Rejected(f"{name}[{i}] = {v!r} is not a str")
        return out


#: names (of networks, schemes)
NAMES = Names()


class Columns(Constraint):
    """A column name or a list/tuple of them, returned as a list."""

    def describe(self) -> str:
        return "a column name or a list of column names"

    def convert(self, value, name: str = "value"):
        if isinstance(value, str):
            return [value]
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise Rejected()
        return list(value)


#: column names
COLUMNS = Columns()


_SPLIT_KEYS = ("x_val", "y_val", "x_test", "y_test")


def _get(value, key):
    if isinstance(value, Mapping):
        return value[key]
    return getattr(value, key)


class Splits(Constraint):
    """The data of a network: a :class:`gcc.dnn.data.ImageData` or a mapping with ``x_val, y_val, x_test, y_test``.

    Each ``x`` must hold at least one image and its ``y`` as many int labels >= 0. Returned as it is.
    """

    def __init__(self, keys=_SPLIT_KEYS, description: str | None = None):
        super().__init__(description)
        self.keys = tuple(keys)

    def describe(self) -> str:
        return f"an ImageData or a mapping with {', '.join(self.keys)} (images and their int labels)"

    def convert(self, value, name: str = "value"):
        for key in self.keys:
            try:
                _get(value, key)
            except (KeyError, AttributeError, TypeError):
                raise Rejected(f"it has no {key!r}") from None
        for split in ("val", "test"):
            if f"x_{split}" not in self.keys:
                continue
            x, y = _get(value, f"x_{split}"), _get(value, f"y_{split}")
            n = len(x) if hasattr(x, "__len__") and np.ndim(x) >= 1 else None
            if not n:
                raise Rejected(f"its x_{split} holds no image")
            labels = np.asarray(y)
            if labels.ndim != 1 or len(labels) != n or labels.dtype.kind not in "iu" or (
                    labels.size and labels.min() < 0):
                raise Rejected(f"its y_{split} is not {n} int labels >= 0")
        return value


#: the splits of a network
SPLITS = Splits()
#: splits that hold the test images (what an evaluation run needs)
TEST_SPLITS = Splits(("x_test", "y_test"))


class Prepared(Constraint):
    """Networks as :func:`gcc.experiments.dnn_models.prepare_models` gives them: a non-empty mapping
    name -> ``{"f": callable, "splits": ..., "info": mapping}``. Returned as it is."""

    def __init__(self, splits: Splits = SPLITS, description: str | None = None):
        super().__init__(description)
        self.splits = splits

    def describe(self) -> str:
        return "a non-empty mapping name -> {'f', 'splits', 'info'} (prepare_models())"

    def convert(self, value, name: str = "value"):
        if not isinstance(value, Mapping) or not value:
            raise Rejected()
        for net, entry in value.items():
            if not isinstance(entry, Mapping) or not {"f", "splits", "info"} <= set(entry):
                raise Rejected(f"{name}[{net!r}] has no 'f', 'splits' and 'info'")
            if not callable(entry["f"]):
                raise Rejected(f"{name}[{net!r}]['f'] is not callable")
            if not isinstance(entry["info"], Mapping):
                raise Rejected(f"{name}[{net!r}]['info'] is not a mapping")
            try:
                self.splits.convert(entry["splits"], "splits")
            except Rejected as err:
                raise Rejected(f"{name}[{net!r}]['splits']: {err.detail}") from None
        return value


#: prepared networks
PREPARED = Prepared()


def check_pool(x, y, owner: str, x_name: str = "x", y_name: str = "y") -> tuple[np.ndarray, np.ndarray]:
    """A pool of inputs and their labels: ``x`` with n >= 1 rows (dtype kept), ``y`` n ints >= 0 (int64)."""
    if isinstance(x, (str, bytes)) or x is None:
        raise invalid(x_name, owner, "an array of inputs, shape (n, ...) with n >= 1", x)
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError, RuntimeError):
        raise invalid(x_name, owner, "an array of inputs, shape (n, ...) with n >= 1", x) from None
    if arr.ndim == 0 or len(arr) == 0 or arr.dtype.kind not in "biuf":
        raise invalid(x_name, owner, "an array of real inputs, shape (n, ...) with n >= 1", x,
                      f"its shape is {arr.shape} and dtype {arr.dtype}")
    n = len(arr)
    requirement = f"a 1-D array of {n} int labels >= 0 (one per row of {x_name})"
    labels = validate(y, ArrayLike(dtype=np.int64, description=requirement), y_name, owner)
    if labels.shape != (n,):
        raise invalid(y_name, owner, requirement, y, f"its shape is {labels.shape}")
    if labels.size and labels.min() < 0:
        i = int(np.argmin(labels))
        raise invalid(y_name, owner, requirement, y, f"{y_name}[{i}] = {int(labels[i])}")
    return arr, labels


def check_stragglers(stragglers, n_workers: int, owner: str, name: str = "stragglers") -> int:
    """A number of stragglers S in [0, N - 1] (at least one worker returns)."""
    return validate(stragglers, Interval(numbers.Integral, 0, n_workers - 1,
                                         description=f"an int in [0, n_workers - 1] with n_workers = {n_workers}"),
                    name, owner)


def check_regimes(regimes, owner: str, name: str = "regimes") -> dict:
    """``{name: (N, K)}`` with ints 1 <= K <= N, as a dict of int pairs."""
    requirement = "a non-empty mapping name -> (N, K) with ints 1 <= K <= N"
    if not isinstance(regimes, Mapping) or not regimes:
        raise invalid(name, owner, requirement, regimes)
    out = {}
    for key, pair in regimes.items():
        if not _sequence(pair) or len(pair) != 2 or not all(is_int(v) for v in pair) \
                or not 1 <= pair[1] <= pair[0]:
            raise invalid(name, owner, requirement, dict(regimes), f"{name}[{key!r}] = {pair!r}")
        out[key] = (int(pair[0]), int(pair[1]))
    return out


def check_per_regime(values, regimes: Mapping, owner: str, name: str, entry: Constraint, required: bool = True) -> dict:
    """A mapping with one entry per regime (every one when ``required``, no other), each checked by ``entry``."""
    keys = ", ".join(map(repr, regimes))
    requirement = f"a mapping with an entry for {'every' if required else 'some'} regime of 'regimes' ({keys})"
    if not isinstance(values, Mapping):
        raise invalid(name, owner, requirement, values)
    unknown = [k for k in values if k not in regimes]
    if unknown:
        raise invalid(name, owner, requirement, dict(values), f"{unknown[0]!r} is no regime")
    missing = [k for k in regimes if k not in values] if required else []
    if missing:
        raise invalid(name, owner, requirement, dict(values), f"{missing[0]!r} is missing")
    out = {}
    for key, value in values.items():
        try:
            out[key] = entry.convert(value, f"{name}[{key!r}]")
        except Rejected as err:
            raise invalid(name, owner, f"a mapping regime -> {entry.description}", dict(values),
                          err.detail or f"{name}[{key!r}] = {value!r}") from None
    return out


def check_sizes(x, y, n_inputs, n_workers, owner: str, x_name: str, y_name: str) -> int:
    """The pool of a run (:func:`check_pool`), K in [1, its size] and N >= 1 (the codes check the rest); returns N."""
    x, y = check_pool(x, y, owner, x_name, y_name)
    check_int(n_inputs, "n_inputs", owner, minimum=1, maximum=len(x),
              constraint=f"an int in [1, {len(x)}] (the images in {x_name})")
    return check_int(n_workers, "n_workers", owner, minimum=1)


def validate_model(model, owner: str):
    """A straggler model of :mod:`gcc.stragglers` or None; returned as it is."""
    from ..stragglers import StragglerModel

    constraint = NoneOr(InstanceOf(StragglerModel, "a gcc.stragglers model (FixedCount, Bernoulli, ...)"))
    return validate(model, constraint, "straggler_model", owner)


def check_sweep(regimes, stragglers, splits, owner: str) -> dict:
    """``regimes`` as ``{name: (N, K)}`` with K within the validation and test pools of ``splits``
    (skipped when it is None) and ``stragglers`` holding S values in [0, N - 1] for every regime."""
    regimes = check_regimes(regimes, owner)
    for regime, (n_workers, n_inputs) in regimes.items():
        for key in (("x_val", "x_test") if splits is not None else ()):
            size = len(_get(splits, key))
            if n_inputs > size:
                raise invalid("regimes", owner, f"a mapping name -> (N, K) with K <= the images in {key} ({size})",
                              dict(regimes), f"regimes[{regime!r}] has K = {n_inputs}")
    values = check_per_regime(stragglers, regimes, owner, "stragglers", IntList(0))
    for regime, s_values in values.items():
        n_workers = regimes[regime][0]
        bad = [s for s in s_values if s > n_workers - 1]
        if bad:
            raise invalid("stragglers", owner, "a mapping regime -> numbers of stragglers in [0, N - 1]",
                          dict(stragglers), f"stragglers[{regime!r}] has {bad[0]} with N = {n_workers}")
    return regimes


_BAND = RealList(None, None, min_len=2, description="a pair (low, high) of finite reals with low < high")


def check_band(band, owner: str) -> tuple[float, float]:
    """A band ``(low, high)`` of finite reals with low < high, as a pair of floats."""
    lo_hi = validate(band, _BAND, "band", owner)
    if len(lo_hi) != 2 or not lo_hi[0] < lo_hi[1]:
        raise invalid("band", owner, _BAND, band)
    return lo_hi[0], lo_hi[1]


def check_grid(grid, owner: str, needed: bool = True, name: str = "grid") -> list:
    """A lambda grid (:class:`Grid`) as a list; with ``needed``, it must hold a positive value."""
    values = RealList(0, None, distinct=True, description=Grid().description).convert(grid, name) \
        if Grid().is_satisfied_by(grid) else validate(grid, Grid(), name, owner)
    if needed and not any(g > 0 for g in values):
        raise invalid(name, owner, "a grid with a positive value (the reference of a lambda of 0)", grid)
    return values


def check_metric(table, metric: str, owner: str, table_name: str = "summary") -> None:
    """``metric`` is one of the values of ``table["metric"]``."""
    present = sorted(map(str, set(table["metric"])))
    if metric not in present:
        raise invalid("metric", owner, f"a metric of {table_name} ({', '.join(present)})", metric)


def check_straggler_list(stragglers, n_workers: int, owner: str, name: str = "stragglers") -> list:
    """A non-empty sequence of numbers of stragglers in [0, N - 1], as a list of ints."""
    return validate(stragglers, IntList(0, n_workers - 1, description="a non-empty sequence of ints in "
                                        f"[0, n_workers - 1] with n_workers = {n_workers}"), name, owner)


_PAIR = RealList(0, None, min_len=2, description="a pair (lam_enc, lam_dec) of finite reals >= 0")


def check_lambda_pairs(per_s, single, stragglers, owner: str) -> tuple[float, float]:
    """``per_s``: S -> (lam_enc, lam_dec) for every S of ``stragglers``; ``single`` one such pair (returned)."""
    pair = validate(single, _PAIR, "single", owner)
    if len(pair) != 2:
        raise invalid("single", owner, _PAIR, single)
    if not isinstance(per_s, Mapping):
        raise invalid("per_s", owner, "a mapping S -> (lam_enc, lam_dec)", per_s)
    for s in stragglers:
        if s not in per_s:
            raise invalid("per_s", owner, "a mapping with an entry for every S", dict(per_s), f"S = {s} is missing")
        if not _PAIR.is_satisfied_by(per_s[s]) or len(per_s[s]) != 2:
            raise invalid("per_s", owner, "a mapping S -> (lam_enc, lam_dec) of finite reals >= 0", dict(per_s),
                          f"per_s[{s}] = {per_s[s]!r}")
    return pair[0], pair[1]


def check_family_triples(configs, families, owner: str, name: str = "configs") -> dict:
    """None or ``{family: (N, K, S)}`` with families among ``families``, ints 1 <= K <= N, 0 <= S < N."""
    requirement = f"a mapping family ({', '.join(families)}) -> (N, K, S) with 1 <= K <= N and 0 <= S < N"
    if configs is None:
        return {}
    if not isinstance(configs, Mapping):
        raise invalid(name, owner, requirement, configs)
    for family, triple in configs.items():
        ok = family in families and _sequence(triple) and len(triple) == 3 and all(is_int(v) for v in triple)
        if not ok or not (1 <= triple[1] <= triple[0] and 0 <= triple[2] < triple[0]):
            raise invalid(name, owner, requirement, dict(configs), f"{name}[{family!r}] = {triple!r}")
    return dict(configs)


def check_columns(table, arguments: Mapping, owner: str, table_name: str) -> None:
    """Every argument ``{name: column or list of columns}`` names columns of ``table``."""
    for arg, names in arguments.items():
        listed = [names] if isinstance(names, str) else list(names)
        if [c for c in listed if c not in table.columns]:
            raise invalid(arg, owner, f"columns of {table_name} ({', '.join(map(str, table.columns))})", names)


def check_lambda_columns(lambdas, owner: str, name: str = "lambdas") -> None:
    """The ``lam_enc`` and ``lam_dec`` columns of a lambdas table hold finite reals >= 0."""
    for column in ("lam_enc", "lam_dec"):
        values = lambdas[column].to_numpy()
        if values.dtype.kind not in "iuf" or not (np.isfinite(values) & (values >= 0)).all():
            raise invalid(name, owner, f"a lambdas table whose {column} are finite reals >= 0", values)


def check_scheme_pair(table, scheme, baseline, owner: str, table_name: str = "results") -> tuple[str, str]:
    """Two different schemes (keys or aliases) of ``table["scheme"]``, as their canonical keys."""
    scheme, baseline = canonical(scheme, owner, "scheme"), canonical(baseline, owner, "baseline")
    present = set(table["scheme"])
    for arg, key in (("scheme", scheme), ("baseline", baseline)):
        if key not in present:
            raise invalid(arg, owner, f"a scheme of {table_name} ({', '.join(sorted(map(str, present)))})", key)
    if scheme == baseline:
        raise invalid("baseline", owner, f"a scheme other than scheme={scheme!r}", baseline)
    return scheme, baseline
