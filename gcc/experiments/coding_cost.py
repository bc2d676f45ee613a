"""The cost of coding (App. C.2, Table 2): encode and decode time per batch beside the workers' forward.

A GPU is synchronised around every timed interval; :func:`cost_summary` needs no torch.
"""
from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..codes import canonical, make_many
from ..validation import SEED, AnyOf, HasAttributes, Interval, ListOf, Options, check_int, invalid, validate_params
from ..dnn._checks import COUNT, DEVICE, LAM, PREPARED, SCHEMES, TEXT, TRIALS, Frame, Splits, check_images

__all__ = ["coding_cost", "run_costs", "cost_summary", "WORKER_FUNCTION", "TIMING_COLUMNS"]


def _clock(device) -> float:
    """``time.perf_counter()`` once the device has finished its work."""
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter()


#: what :func:`coding_cost` needs of f (a :class:`gcc.dnn.inference.SoftmaxFunction`)
WORKER_FUNCTION = HasAttributes(("device", "forward_tensor"), callables=("forward_tensor",),
                                description="a gcc.dnn.inference.SoftmaxFunction (with device and forward_tensor())")

#: the timing columns of :func:`coding_cost`
TIMING_COLUMNS = ("encode_s", "decode_s", "decode_apply_s", "forward_s", "forward_workers_s", "overhead",
                  "overhead_workers")


@validate_params({"f": WORKER_FUNCTION, "n_workers": COUNT, "schemes": SCHEMES, "lam_enc": LAM, "lam_dec": LAM,
                  "repeats": TRIALS, "warmup": Interval(int, 0, None), "seed": SEED, "model": TEXT, "dataset": TEXT})
def coding_cost(f, x, n_workers: int, stragglers: int, schemes: Sequence[str] = ("gcc", "bacc"),
                lam_enc: float = 1e-4, lam_dec: float = 1e-4, repeats: int = 20, warmup: int = 3,
                seed: int = 0, model: str = "vit", dataset: str = "") -> Any:
    """Time encoding and decoding per batch next to the workers' forward passes.

    One round: encode K inputs for N workers, run f on the N coded inputs, decode from N - S
    survivors; each repeat draws a fresh straggler set (`seed`), so the decoder is built as well as
    applied. The encoder is built once, untimed; `warmup` untimed rounds precede the `repeats`.

    Parameters
    ----------
    f : gcc.dnn.inference.SoftmaxFunction
        The workers' function; everything runs on its ``device``.
    x : array_like, shape (K, C, H, W)
    n_workers, stragglers : int
    schemes : sequence of str
    lam_enc, lam_dec : float
        GCC's smoothing parameters (any positive value is representative).
    repeats, warmup, seed : int
    model, dataset : str
        The ``model`` and ``dataset`` columns.

    Returns
    -------
    pandas.DataFrame
        One row per (scheme, repeat): ``model, dataset, device, scheme, n_workers, n_inputs,
        stragglers, repeat, encode_s, decode_s`` (build + apply), ``decode_apply_s``, ``forward_s`` (one
        batched call), ``forward_workers_s`` (N single-image passes), ``overhead`` (encode + decode over
        forward_s) and ``overhead_workers`` (over forward_workers_s).
    """
    import torch

    owner = "coding_cost"
    x = check_images(x, "x", owner)
    stragglers = check_int(stragglers, "stragglers", owner, 0, n_workers - 1)
    device = f.device
    xt = torch.as_tensor(x, dtype=torch.float32).to(device)
    k = xt.shape[0]
    rng = np.random.default_rng(seed)
    # make_many rejects a parameter that no listed code takes: GCC's lambdas go with GCC only.
    lams = {"lam_enc": lam_enc, "lam_dec": lam_dec} if "gcc" in map(canonical, schemes) else {}
    rows = []
    for scheme, code in make_many(schemes, k, n_workers, **lams).items():
        for r in range(warmup + repeats):
            received = np.sort(rng.choice(n_workers, n_workers - stragglers, replace=False))
            # Drop the cached decoders (a new F must be built, as for a master that never sees
            # the same straggler set twice) but rebuild the encoder untimed: a deployed master
            # builds it once for its fixed (N, K).
            code.clear_cache()
            code.encode(xt, check_finite=False)
            t0 = _clock(device)
            coded = code.encode(xt, check_finite=False)
            t1 = _clock(device)
            y = f.forward_tensor(coded)
            t2 = _clock(device)
            est = code.decode(y[torch.as_tensor(received, device=device)], received, check_finite=False)
            t3 = _clock(device)
            code.decode(y[torch.as_tensor(received, device=device)], received, check_finite=False)
            t4 = _clock(device)
            # What one worker really computes: the forward pass of its own single coded input.
            n = r % n_workers
            f.forward_tensor(coded[n:n + 1])
            t5 = _clock(device)
            del est
            if r >= warmup:
                rows.append({"model": model, "dataset": dataset, "device": str(device.type), "scheme": scheme,
                             "n_workers": n_workers, "n_inputs": k, "stragglers": stragglers,
                             "repeat": r - warmup, "encode_s": t1 - t0, "decode_s": t3 - t2,
                             "decode_apply_s": t4 - t3, "forward_s": t2 - t1,
                             "forward_workers_s": n_workers * (t5 - t4)})
    out = pd.DataFrame(rows)
    out["overhead"] = (out["encode_s"] + out["decode_s"]) / out["forward_s"]
    out["overhead_workers"] = (out["encode_s"] + out["decode_s"]) / out["forward_workers_s"]
    return out


@validate_params({"prepared": PREPARED, "n_workers": COUNT, "n_inputs": COUNT, "repeats": TRIALS, "seed": SEED,
                  "devices": AnyOf(Options(("auto",)), ListOf(DEVICE), description="'auto' or a non-empty "
                                   "sequence of device names of this machine ('cpu', 'cuda:1', ...)"),
                  "schemes": SCHEMES})
def run_costs(prepared, n_workers: int, n_inputs: int, stragglers: int, repeats: int, seed: int = 0,
              devices="auto", schemes: Sequence[str] = ("gcc", "bacc")):
    """:func:`coding_cost` for every prepared network (its first `n_inputs` test images) on every device.

    `prepared` is a :class:`gcc.experiments.dnn_models.PreparedModels`, `devices` ``"auto"`` (the CPU,
    and CUDA when torch sees a GPU) or a list of device names; the rest as in :func:`coding_cost`.
    Returns the rows of every (network, device).
    """
    import torch

    from ..dnn.inference import SoftmaxFunction

    owner = "run_costs"
    stragglers = check_int(stragglers, "stragglers", owner, 0, n_workers - 1)
    if devices == "auto":
        devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for name, p in prepared.items():
        if not hasattr(p["f"], "model"):
            raise invalid("prepared", owner, "networks whose f is a SoftmaxFunction (with a model)", dict(prepared),
                          f"prepared[{name!r}]['f'] has no model")
        size = len(Splits.of(p["splits"]).x_test)
        if n_inputs > size:
            raise invalid("n_inputs", owner, f"an int in [1, {size}] (the test images of {name})", n_inputs)
    frames = []
    for name, p in prepared.items():
        x = Splits.of(p["splits"]).x_test[:n_inputs]
        for dev in devices:
            f = SoftmaxFunction(p["f"].model, device=dev)
            frames.append(coding_cost(f, x, n_workers, stragglers, schemes=schemes, repeats=repeats, seed=seed,
                                      model=name, dataset=p["info"].get("dataset", "")))
        p["f"].model.to(p["f"].device)  # back where the prepared f runs
    return pd.concat(frames, ignore_index=True)


@validate_params({"timings": Frame(("scheme",) + TIMING_COLUMNS)})
def cost_summary(timings):
    """Mean and standard deviation of the times of :func:`coding_cost` per (model, dataset, device, scheme).

    Parameters
    ----------
    timings : pandas.DataFrame
        Output of :func:`coding_cost` (several may be concatenated).

    Returns
    -------
    pandas.DataFrame
        ``model, dataset, device, scheme, n_workers, n_inputs, stragglers``, ``encode_ms``, ``decode_ms``,
        ``encode_decode_ms`` (mean and ``_std``), ``decode_apply_ms``, ``forward_ms``, ``forward_workers_ms``,
        ``overhead`` (mean of per-batch ratios), ``overhead_of_medians`` (median encode + decode over the
        median batched forward: robust to load), ``overhead_workers`` (the same over N single-image
        passes) and ``repeats``. Spreads are standard deviations, not intervals.
    """
    rows = []
    keys = [c for c in ("model", "dataset", "device", "scheme", "n_workers", "n_inputs", "stragglers")
            if c in timings.columns]
    for key, g in timings.groupby(keys, sort=False):
        ed = (g["encode_s"] + g["decode_s"]) * 1e3
        rows.append({**dict(zip(keys, key)),
                     "encode_ms": 1e3 * g["encode_s"].mean(), "encode_ms_std": 1e3 * g["encode_s"].std(),
                     "decode_ms": 1e3 * g["decode_s"].mean(), "decode_ms_std": 1e3 * g["decode_s"].std(),
                     "decode_apply_ms": 1e3 * g["decode_apply_s"].mean(),
                     "encode_decode_ms": ed.mean(), "encode_decode_ms_std": ed.std(),
                     "forward_ms": 1e3 * g["forward_s"].mean(), "forward_ms_std": 1e3 * g["forward_s"].std(),
                     "forward_workers_ms": 1e3 * g["forward_workers_s"].mean(),
                     "overhead": g["overhead"].mean(),
                     "overhead_of_medians": float((g["encode_s"].median() + g["decode_s"].median())
                                                  / g["forward_s"].median()),
                     "overhead_workers": float((g["encode_s"].median() + g["decode_s"].median())
                                               / g["forward_workers_s"].median()),
                     "repeats": len(g)})
    return pd.DataFrame(rows)
