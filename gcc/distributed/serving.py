"""Coded serving of trained networks: each Dask worker holds the network, the master codes the requests.

A request is K labelled images, coded (GCC, BACC, or a baseline of :mod:`gcc.distributed.baselines`)
for N workers (:func:`gcc.distributed.coded_compute`); the decoded softmax outputs are scored. Every
worker loads the network once, from the weight cache of :mod:`gcc.dnn.training` (the same path on
every machine), on its best device (:func:`network_ref`, :func:`load_on_workers`).
"""
from __future__ import annotations

import functools
import json
from numbers import Integral
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from gcc.distributed.cluster import SECONDS
from gcc.distributed.coded import ModelPlugin, ModelRef, loaded_model
from gcc.distributed.inject import Injection
from gcc.distributed.latency import run_requests, summarize_latency
from gcc.validation import (COLUMNS, SEED, ArrayLike, Callable as CallableC, Frame, InstanceOf, Interval, ListOf,
                            NoneOr, invalid, validate, validate_params)

__all__ = ["ImageFunction", "checkpoint_file", "load_network", "network_ref", "load_on_workers", "worker_devices",
           "serve_requests", "summarize_serving", "SERVING_COLUMNS", "SERVING_SUMMARY_COLUMNS"]

#: columns :func:`serve_requests` adds to those of :func:`gcc.distributed.run_requests`
SERVING_COLUMNS = ("correct", "base_correct", "accuracy", "accuracy_base")
#: columns of :func:`summarize_serving` after its grouping columns
SERVING_SUMMARY_COLUMNS = ("requests", "p50_ms", "p99_ms", "p999_ms", "accuracy", "relacc", "accuracy_base",
                           "n_failed", "workers_used", "n_coded", "bytes_per_request", "simulated_p50_ms",
                           "simulated_p99_ms", "overhead_p50_ms", "mean_ms")

_PATH = InstanceOf((str, Path), "a path (str or pathlib.Path)")
_DEVICE = NoneOr(InstanceOf(str, "a device name (str, e.g. 'cpu', 'cuda')"))


class ImageFunction:
    """f = the softmax output of a network on one coded image (or a batch), numpy in, numpy out.

    Parameters
    ----------
    softmax : gcc.dnn.inference.SoftmaxFunction
        The network, on its device, with its ``input_shape`` set.
    """

    def __init__(self, softmax):
        self.softmax, self.input_shape = softmax, tuple(softmax.input_shape)

    @property
    def device(self) -> str:
        """Where the network runs (``"cpu"``, ``"cuda"``, ``"cuda:0"`` ...)."""
        return str(self.softmax.device)

    def __call__(self, x):
        if tuple(np.shape(x)) == self.input_shape:
            return self.softmax(x[None])[0]
        return self.softmax(x)


@validate_params({"key": InstanceOf(str, "a cache key or its prefix (str)"), "folder": NoneOr(_PATH)})
def checkpoint_file(key: str, folder=None) -> Path:
    """The weight file ``<folder>/<key>.pt`` (absolute; its ``.json`` beside it) of a cached network.

    ``key`` is :attr:`gcc.dnn.training.TrainedModel.key` or a unique prefix of it (a models table's
    ``key`` column); ``folder`` defaults to :func:`gcc.dnn.training.cache_dir`. No match, or several:
    ValueError.
    """
    if folder is None:
        from gcc.dnn.training import cache_dir

        folder = cache_dir()
    folder = Path(folder).resolve()
    hits = sorted(p for p in folder.glob(f"{key}*.pt") if p.with_suffix(".json").exists()) if key else []
    if len(hits) != 1:
        raise invalid("key", "checkpoint_file", f"the key (or a unique prefix) of one cached network in {folder}", key,
                      f"{len(hits)} entries match")
    return hits[0]


def load_network(path: str, device: str | None = None) -> ImageFunction:
    """Build a cached network from its weight file on ``device``, one torch thread: what a worker runs once.

    ``path`` is a ``<key>.pt`` of the weight cache (:func:`checkpoint_file`), its configuration in
    ``<key>.json``; a RepVGG is deployed (re-parameterised). ``device`` defaults to
    :func:`gcc.dnn.inference.best_device` of the loading machine.
    """
    import torch

    from gcc.dnn.inference import SoftmaxFunction
    from gcc.dnn.models import build_model, deploy, load_checkpoint

    path = Path(path)
    meta = json.loads(path.with_suffix(".json").read_text())
    config = dict(meta["config"])
    torch.set_num_threads(1)     # one coded task at a time per worker
    model = load_checkpoint(build_model(config), path, architecture=f"{meta.get('name', '')} {config}")
    model = deploy(model) if config.get("arch") == "repvgg" else model.eval()
    side = int(config.get("img_size", 28))
    return ImageFunction(SoftmaxFunction(model, device=device, input_shape=(int(config.get("in_chans", 1)), side, side)))


@validate_params({"path": _PATH, "device": _DEVICE})
def network_ref(path, device: str | None = None) -> ModelRef:
    """A :class:`~gcc.distributed.ModelRef` ``gcc-net-<file stem>-<device or auto>`` of a cached network.

    The weight file (:func:`checkpoint_file`) must be readable at ``path`` on the workers; only the
    path and the device (default: each worker's best) travel with a task.
    """
    path = Path(path)
    if path.suffix != ".pt" or not path.with_suffix(".json").exists():
        raise invalid("path", "network_ref", "a <key>.pt file of the weight cache with its <key>.json", str(path))
    return ModelRef(f"gcc-net-{path.stem}-{device or 'auto'}", functools.partial(load_network, str(path.resolve()),
                                                                             device))


def _loaded_devices(names: Sequence[str]) -> dict:
    """On a worker: the device of each loaded network of ``names`` (``""`` if not loaded)."""
    return {name: getattr(loaded_model(name), "device", "") for name in names}


def worker_devices(client, refs: Sequence[ModelRef]) -> dict:
    """Where each worker runs each network: ``{worker address: {ref name: device}}`` (``""``: not loaded)."""
    return dict(sorted(client.run(_loaded_devices, [ref.name for ref in refs]).items()))


@validate_params({"refs": ListOf(InstanceOf(ModelRef, "a gcc.distributed.ModelRef"))})
def load_on_workers(client, refs: Sequence[ModelRef]) -> dict:
    """Load every network on every worker now and on any that joins later (a :class:`~gcc.distributed.ModelPlugin`
    each); returns :func:`worker_devices`."""
    for ref in refs:
        client.register_plugin(ModelPlugin(ref))
    return worker_devices(client, refs)


_IMAGES = ArrayLike(ndim=4, dtype=np.float32, finite=True, description="a finite array of images (n, C, H, W)")
_LABELS = ArrayLike(ndim=1, dtype=np.int64, description="a 1-D array of int labels")


@validate_params({"f": CallableC(), "n_inputs": Interval(Integral, 1, None), "n_requests": Interval(Integral, 1, None),
                  "injection": NoneOr(InstanceOf(Injection, "an Injection")), "seed": SEED,
                  "exact": NoneOr(CallableC()), "warmup": Interval(Integral, 0, None), "timeout": SECONDS})
def serve_requests(client, schemes: Mapping[str, Mapping[str, Any]], f, images, labels, *, n_inputs: int,
                   n_requests: int, injection: Injection | None = None, seed: int = 0, exact=None,
                   warmup: int = 1, timeout: float = 60.0):
    """Serve ``n_requests`` requests of K labelled images with every scheme; one row per (scheme, request).

    Request ``r`` draws K distinct images of the pool from ``default_rng([seed, r, 0])``: every scheme
    serves the same images under the same straggler draws (:func:`gcc.distributed.run_requests`,
    whose arguments these are).

    Parameters
    ----------
    f : callable
        What the workers compute on one coded image: a :func:`network_ref`.
    images : array_like, shape (n, C, H, W)
        The pool (e.g. the test split).
    labels : array_like of int, shape (n,)
    n_inputs : int
        K, at most n.
    exact : callable, optional
        The uncoded network at the master (default ``f``): the reference of ``loss`` and ``accuracy_base``.

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`gcc.distributed.run_requests` plus :data:`SERVING_COLUMNS` (decoded and
        uncoded predictions right, of K, and their fractions) and ``bytes_moved``.
    """
    owner = "serve_requests"
    images = validate(images, _IMAGES, "images", owner)
    labels = validate(labels, _LABELS, "labels", owner)
    if len(labels) != len(images):
        raise invalid("labels", owner, f"one label per image ({len(images)})", labels, f"it has {len(labels)}")
    if n_inputs > len(images):
        raise invalid("n_inputs", owner, f"an int in [1, {len(images)}] (the pool size)", n_inputs)

    def batch(rng):
        idx = rng.choice(len(images), size=n_inputs, replace=False)
        return images[idx], labels[idx]

    def score(est, true, y):
        correct = int((np.asarray(est).argmax(axis=-1) == y).sum())
        base = int((np.asarray(true).argmax(axis=-1) == y).sum())
        return {"correct": correct, "base_correct": base, "accuracy": correct / len(y), "accuracy_base": base / len(y)}

    table = run_requests(client, schemes, batch, f, n_requests=n_requests, injection=injection, seed=seed,
                         warmup=warmup, timeout=timeout, exact=exact, score=score)
    if "bytes_sent" in table:
        table["bytes_moved"] = table["bytes_sent"] + table["bytes_received"]
    return table


@validate_params({"table": Frame(("latency_s", "loss", *SERVING_COLUMNS[:2]), "a pandas.DataFrame of serve_requests"),
                  "by": COLUMNS})
def summarize_serving(table, by: Sequence[str] = ("scheme",)):
    """Latency quantiles, accuracy and RelAcc per group of :func:`serve_requests`' rows.

    Returns ``by`` (groups in order of first appearance) plus :data:`SERVING_SUMMARY_COLUMNS`: latency
    quantiles of the answered requests, ``accuracy`` (pooled over their images), ``relacc`` (right
    over the uncoded network's right), ``n_failed``, mean ``workers_used`` and bytes per request; the
    ``simulated_*`` columns are NaN without an injection.
    """
    import pandas as pd

    by = list(by)      # a list, or the default tuple
    base = summarize_latency(table, by=by).set_index(by)
    rows = []
    for key, g in table.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        lat = g["latency_s"].dropna().to_numpy(dtype=float)
        ok = g[g["latency_s"].notna()]
        n_images = float(len(ok) * g["n_inputs"].iloc[0])
        right, base_right = float(ok["correct"].sum()), float(ok["base_correct"].sum())
        summary = base.loc[key if len(key) > 1 else key[0]]
        rows.append({
            **dict(zip(by, key)), "requests": len(g),
            "p50_ms": summary["latency_p50_ms"], "p99_ms": summary["latency_p99_ms"],
            "p999_ms": float(1e3 * np.percentile(lat, 99.9)) if lat.size else np.nan,
            "accuracy": right / n_images if n_images else np.nan,
            "relacc": right / base_right if base_right else np.nan,
            "accuracy_base": base_right / n_images if n_images else np.nan,
            "n_failed": int(summary["n_failed"]), "workers_used": float(ok["workers_used"].mean()),
            "n_coded": int(g["n_coded"].iloc[0]),
            "bytes_per_request": int(round(ok["bytes_moved"].mean())) if len(ok) else np.nan,
            **{c: float(summary.get(c, np.nan))
               for c in ("simulated_p50_ms", "simulated_p99_ms", "overhead_p50_ms")},
            "mean_ms": summary["latency_mean_ms"]})
    return pd.DataFrame(rows, columns=[*by, *SERVING_SUMMARY_COLUMNS])
