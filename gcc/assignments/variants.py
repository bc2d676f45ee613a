"""Per-student variants: sizes and data drawn from a seed.

The seed (a notebook's first cell; the autograder sets the student's) fixes the sizes and the data,
so students with different seeds get different answers while a check, given the same variant,
recomputes the reference exactly. Explicit sizes (``variant("01_berrut", seed, n_workers=12)``) win.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from numbers import Integral, Real
from types import SimpleNamespace
from typing import Any, Callable

import numpy as np

from gcc.validation import InstanceOf, Interval, Options, check_int, invalid, validate

__all__ = ["Variant", "variant", "problem", "ASSIGNMENTS"]


@dataclass(frozen=True)
class Variant:
    """One student's copy of an `assignment` (``"01_berrut"``): their `seed` and the `params` drawn from
    it (also readable as attributes: ``v.n_workers``)."""

    assignment: str
    seed: int
    params: dict = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        params = object.__getattribute__(self, "params")
        if name in params:
            return params[name]
        raise AttributeError(f"Variant of {self.assignment!r} has no parameter {name!r}; "
                             f"it has {sorted(params)}.")

    def __hash__(self) -> int:  # frozen, but its params are a dict: cached references key on the values
        return hash((self.assignment, self.seed, repr(sorted(self.params.items()))))

    def rng(self, stream: str) -> np.random.Generator:
        """An independent generator for one named use (``"data"``, ...), unshifted by other uses."""
        stream = validate(stream, InstanceOf(str, "a stream name (str)"), "stream", "Variant.rng")
        key = [int(self.seed), zlib.crc32(self.assignment.encode()), zlib.crc32(stream.encode())]
        return np.random.default_rng(key)

    def __str__(self) -> str:
        sizes = ", ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.assignment} (seed {self.seed}): {sizes}"


def _sizes_berrut(rng: np.random.Generator) -> dict:
    k = int(rng.integers(5, 9))
    return {"n_inputs": k, "n_workers": k + int(rng.integers(5, 10)), "dim": int(rng.integers(2, 4)),
            "n_stragglers": int(rng.integers(1, 4))}


def _sizes_rate(rng: np.random.Generator) -> dict:
    k = int(rng.integers(6, 10))
    start = int(rng.choice([12, 16, 20]))
    return {"n_inputs": k, "n_stragglers": int(rng.integers(1, 4)),
            "n_workers_grid": [start, 2 * start, 4 * start, 8 * start],
            "input_half_width": float(rng.choice([2.0, 2.5, 3.0]))}


def _sizes_tuning(rng: np.random.Generator) -> dict:
    k = int(rng.integers(6, 10))
    return {"n_inputs": k, "n_workers": 3 * k + int(rng.integers(0, 6)), "n_stragglers": int(rng.integers(1, 4)),
            "noise_std": float(rng.choice([0.1, 0.2, 0.3])), "n_trials": 10,
            "lam_enc_grid": [0.0, 1e-6, 1e-4],
            "lam_dec_grid": [0.0, 1e-8, 1e-7, 1e-6, 1e-5]}


def _sizes_peeling(rng: np.random.Generator) -> dict:
    return {"n_workers": int(rng.integers(6, 11)), "block_rows": int(rng.integers(2, 4)),
            "n_cols": int(rng.integers(4, 8)), "tolerance": float(rng.choice([0.0, 0.15, 0.3]))}


def _sizes_service(rng: np.random.Generator) -> dict:
    return {"n_inputs": int(rng.integers(6, 10)), "n_workers_grid": [16, 24, 32, 40],
            "straggler_grid": [0, 2, 4, 6, 8], "latency_budget": float(rng.choice([0.25, 0.30, 0.35])),
            "loss_target": float(rng.choice([3e-4, 1e-3, 3e-3])), "confidence": 0.95,
            "n_trials": 60, "mu": 10.0, "shift": 0.05,
            "slow_workers": int(rng.integers(2, 5)), "slow_factor": 5.0}


#: Assignment ids, in book order, with their titles and how each draws its sizes from a seed.
ASSIGNMENTS: dict[str, tuple[str, Callable[[np.random.Generator], dict]]] = {
    "01_berrut": ("Berrut's encoder and decoder", _sizes_berrut),
    "02_rate_slope": ("Measuring a rate slope", _sizes_rate),
    "03_lambda_cv": ("Tuning the smoothing parameters by cross-validation", _sizes_tuning),
    "04_cpgc_peeling": ("Decoding a CPGC iteration by peeling", _sizes_peeling),
    "05_inference_service": ("A straggler-robust inference service", _sizes_service),
}


def variant(assignment: str, seed: int = 0, **overrides: Any) -> Variant:
    """The variant of ``assignment`` for ``seed``.

    Parameters
    ----------
    assignment : str
        One of :data:`ASSIGNMENTS`.
    seed : int
        The student's seed (any non-negative int).
    **overrides
        Sizes to set explicitly; ``None`` values keep the seed's choice.

    Returns
    -------
    Variant
    """
    validate(assignment, Options(tuple(ASSIGNMENTS)), "assignment", "variant")
    seed = check_int(seed, "seed", "variant", minimum=0)
    draw = ASSIGNMENTS[assignment][1]
    probe = Variant(assignment, int(seed))
    params = draw(probe.rng("sizes"))
    unknown = set(overrides) - set(params)
    if unknown:
        raise invalid("overrides", "variant", f"sizes of {assignment!r} (among {sorted(params)})", sorted(unknown))
    params.update({k: _override(k, v, params[k]) for k, v in overrides.items() if v is not None})
    return Variant(assignment, int(seed), params)


def _override(name: str, value: Any, drawn: Any) -> Any:
    """An explicit size, of the kind the seed would have drawn (an int >= 0, a float or a list)."""
    if isinstance(drawn, int):   # no stragglers or slow workers is a case; no inputs, workers, rows is not
        least = 0 if name in ("n_stragglers", "slow_workers") else 1
        return validate(value, Interval(Integral, least, None), name, "variant")
    if isinstance(drawn, float):
        return validate(value, Interval(Real), name, "variant")
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):  # the sizes drawn as a list
        raise invalid(name, "variant", "a sequence (like the drawn one)", value)
    return list(value)


def _f_smooth(x: np.ndarray) -> np.ndarray:
    """The function the workers of assignments 01 and 05 compute: smooth, elementwise, non-polynomial."""
    return np.tanh(x) + 0.1 * x ** 2


def _f_xsinx(x: np.ndarray) -> np.ndarray:
    """``f(x) = x sin x``, the one-dimensional example of the ISIT 2025 paper."""
    return x * np.sin(x)


def problem(v: Variant):
    """The data of a variant ``v``, what its notebook works on and the checks recompute: a
    ``types.SimpleNamespace`` whose fields (``X``, ``f``, ``received``, ...) depend on the assignment."""
    validate(v, InstanceOf(Variant, "a Variant (gcc.assignments.variant(assignment, seed))"), "v", "problem")
    p, rng = SimpleNamespace(), v.rng("data")
    if v.assignment == "01_berrut":
        p.f = _f_smooth
        p.X = rng.normal(size=(v.n_inputs, v.dim))
        p.received = np.sort(rng.choice(v.n_workers, v.n_workers - v.n_stragglers, replace=False))
    elif v.assignment == "02_rate_slope":
        p.f = _f_xsinx
        p.X = np.sort(rng.uniform(-v.input_half_width, v.input_half_width, size=v.n_inputs))
    elif v.assignment == "03_lambda_cv":
        p.f = _f_xsinx
        half_width = float(rng.choice([2.0, 2.5, 3.0]))

        def draw_batch(batch_rng: np.random.Generator, trial: int) -> np.ndarray:
            """A fresh batch of K inputs per trial, from the harness's data generator."""
            return batch_rng.uniform(-half_width, half_width, size=v.n_inputs)

        p.draw_batch = draw_batch
        # Distinct seeds: tuning and testing must not share draws.
        p.tune_seed, p.test_seed = (int(s) for s in rng.choice(10 ** 6, size=2, replace=False))
    elif v.assignment == "04_cpgc_peeling":
        p.code_seed = int(rng.integers(0, 2 ** 31 - 1))
        p.theta = rng.normal(size=v.n_cols)
        p.W = rng.normal(size=(v.n_workers * v.block_rows, v.n_cols))
        p.arrival_seed = int(rng.integers(0, 2 ** 31 - 1))
    elif v.assignment == "05_inference_service":
        p.f = _f_smooth
        p.X = rng.normal(size=(v.n_inputs, 2))
        p.delay_seed = int(rng.integers(0, 10 ** 6))
    return p
