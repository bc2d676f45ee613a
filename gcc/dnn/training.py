"""Seeded, deterministic training with an on-disk weight cache.

A model is identified by :func:`cache_key`; the cache (``$GCC_MODEL_CACHE``, else
``<repo>/_build/cache/models``) holds per key ``<key>.pt`` (the state dict), ``<key>.pt.sha256``
(its checksum, verified before every load) and ``<key>.json`` (accuracies and training time).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from numbers import Integral, Real
from pathlib import Path
from typing import Any, Mapping

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
from torch import nn  # noqa: E402

from ..atomic import PARTIAL_MARK, replacing, write_text  # noqa: E402
from ..validation import (BOOL, SEED, InstanceOf, Interval, NoneOr, Options, check_finite, check_labels,  # noqa: E402
                          invalid, validate_params)
from ._checks import DEVICE, MAPPING, MODULE, NAME, Device, check_images, check_keys  # noqa: E402
from .data import ImageData, load_images  # noqa: E402
from .models import build_model, deploy, load_checkpoint, n_parameters  # noqa: E402

__all__ = ["TrainedModel", "train_model", "train_embedded_model", "evaluate_accuracy", "cache_dir",
           "cache_key", "DEFAULT_RECIPES", "MODEL_RECIPES", "EMBEDDED_MODELS", "TRAIN_ACCURACY_IMAGES", "RECIPE_ENTRIES",
           "STALE_PARTIAL_S"]

#: Training recipes per architecture (AdamW, warm-up then cosine decay, no augmentation);
#: ``train_images``: images per epoch (a fresh seeded subset each epoch; None = all).
DEFAULT_RECIPES: dict[str, dict[str, Any]] = {
    "lenet5": {"epochs": 6, "lr": 3e-3, "batch_size": 128, "weight_decay": 1e-4, "label_smoothing": 0.0,
               "warmup_epochs": 1, "train_images": None},
    "repvgg": {"epochs": 3, "lr": 3e-3, "batch_size": 128, "weight_decay": 1e-4, "label_smoothing": 0.0,
               "warmup_epochs": 0, "train_images": None},
    "vit": {"epochs": 5, "lr": 3e-3, "batch_size": 128, "weight_decay": 0.05, "label_smoothing": 0.0,
            "warmup_epochs": 1, "train_images": None},
}

#: The embedded models: name -> model configuration (the input geometry is set from the data);
#: "repvgg_a0" (timm's RepVGG-A0) and "vit_large" are the paper profile's, meant for a GPU.
EMBEDDED_MODELS: dict[str, dict[str, Any]] = {
    "lenet5": {"arch": "lenet5", "img_size": 28, "in_chans": 1, "num_classes": 10},
    "repvgg": {"arch": "repvgg", "in_chans": 1, "num_classes": 10, "stem_chs": 16, "widths": [16, 32, 64, 256],
               "depths": [1, 2, 2, 1], "strides": [1, 2, 2, 2]},
    "vit": {"arch": "vit", "img_size": 28, "patch_size": 7, "in_chans": 1, "num_classes": 10, "embed_dim": 64,
            "depth": 4, "num_heads": 4, "mlp_ratio": 2.0},
    "repvgg_a0": {"arch": "repvgg", "in_chans": 1, "num_classes": 10, "stem_chs": 48,
                  "widths": [48, 96, 192, 1280], "depths": [2, 4, 14, 1], "strides": [2, 2, 2, 2]},
    "vit_large": {"arch": "vit", "img_size": 28, "patch_size": 4, "in_chans": 1, "num_classes": 10,
                  "embed_dim": 192, "depth": 6, "num_heads": 6, "mlp_ratio": 4.0},
}

#: Recipe changes per embedded model on top of :data:`DEFAULT_RECIPES` of its architecture.
MODEL_RECIPES: dict[str, dict[str, Any]] = {
    "repvgg_a0": {"epochs": 20, "lr": 1e-3, "batch_size": 256, "warmup_epochs": 1},
    "vit_large": {"epochs": 30, "lr": 1e-3, "batch_size": 256, "warmup_epochs": 3, "label_smoothing": 0.1},
}

#: Training images on which ``train_accuracy`` is measured (the first ones of the split).
TRAIN_ACCURACY_IMAGES = 5000

#: What each recipe entry must be (:func:`train_model` refuses any other key: a misspelt one would
#: be ignored by the training, yet change the cache key).
RECIPE_ENTRIES = {
    "epochs": Interval(Integral, 1, None), "lr": Interval(Real, 0, None, closed="neither"),
    "batch_size": Interval(Integral, 1, None), "weight_decay": Interval(Real, 0, None),
    "label_smoothing": Interval(Real, 0, 1, closed="left"), "warmup_epochs": Interval(Integral, 0, None),
    "train_images": NoneOr(Interval(Integral, 1, None)), "threads": Interval(Integral, 1, None),
}


@dataclass(frozen=True)
class TrainedModel:
    """A trained model in eval mode and what is known about it.

    Attributes
    ----------
    model : torch.nn.Module
        The network in its inference form (RepVGG deployed), in eval mode, on the CPU.
    test_accuracy, val_accuracy, train_accuracy : float
        Top-1 accuracies (train: on the first :data:`TRAIN_ACCURACY_IMAGES` images).
    train_seconds : float
        Wall-clock training time when the weights were produced (not of a cache hit).
    extra : dict
        ``data``, ``threads``, ``device``, ``n_parameters_train``.
    """

    model: nn.Module
    name: str
    config: dict
    recipe: dict
    seed: int
    key: str
    test_accuracy: float
    val_accuracy: float
    train_accuracy: float
    train_seconds: float
    cache_hit: bool
    n_parameters: int
    extra: dict = field(default_factory=dict)

    def summary(self) -> dict:
        """A flat dict for a results table (no tensors)."""
        return {"model": self.name, "dataset": self.extra.get("data", ""), "n_parameters": self.n_parameters,
                "test_accuracy": self.test_accuracy, "val_accuracy": self.val_accuracy,
                "train_accuracy": self.train_accuracy, "epochs": self.recipe.get("epochs"),
                "train_images": self.recipe.get("train_images"), "train_seconds": self.train_seconds,
                "cache_hit": self.cache_hit, "seed": self.seed, "threads": self.extra.get("threads"),
                "key": self.key[:16]}


def _cache_folder(owner: str) -> Path:
    """:func:`cache_dir`, checked to be (or to be creatable as) a folder, before any training."""
    folder = cache_dir()
    probe = folder
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    if not probe.is_dir():
        where = "GCC_MODEL_CACHE" if os.environ.get("GCC_MODEL_CACHE") else "the model cache folder"
        raise invalid("GCC_MODEL_CACHE", owner, "a folder for the model cache (or a path where one can be "
                      "created)", str(folder), f"{where} leads to {probe}, which is not a folder")
    return folder


def cache_dir() -> Path:
    """Folder of cached weights: ``$GCC_MODEL_CACHE`` or ``<repo>/_build/cache/models``."""
    env = os.environ.get("GCC_MODEL_CACHE")
    if env:
        return Path(env)
    from gcc.provenance import repo_root

    return repo_root() / "_build" / "cache" / "models"


@validate_params({"config": MAPPING, "recipe": MAPPING, "data_id": InstanceOf(str, "a str"), "seed": SEED})
def cache_key(config: Mapping[str, Any], recipe: Mapping[str, Any], data_id: str, seed: int) -> str:
    """SHA-256 of everything that determines the trained weights, with the ``gcc`` and torch versions.

    Parameters
    ----------
    config, recipe : mapping
        Model configuration and training recipe.
    data_id : str
        Identifies the training data.
    seed : int
        Training seed.

    Returns
    -------
    str
    """
    from gcc import __version__

    # The cached metadata holds train_accuracy too: its image count is part of the key, so a change
    # of TRAIN_ACCURACY_IMAGES never reports an accuracy measured on another number of images.
    payload = {"config": dict(config), "recipe": dict(recipe), "data": data_id, "seed": int(seed),
               "gcc": __version__, "torch": ".".join(torch.__version__.split(".")[:2]),
               "train_accuracy_images": TRAIN_ACCURACY_IMAGES}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


@contextlib.contextmanager
def _deterministic(seed: int, threads: int | None):
    # Deterministic kernels + fixed thread count: float reductions are then reproducible
    # bit for bit on one machine. Restore the caller's settings afterwards.
    old_det = torch.are_deterministic_algorithms_enabled()
    old_threads = torch.get_num_threads()
    torch.use_deterministic_algorithms(True, warn_only=True)
    if threads is not None:
        torch.set_num_threads(int(threads))
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            yield
    finally:
        torch.use_deterministic_algorithms(old_det)
        torch.set_num_threads(old_threads)


@torch.no_grad()
@validate_params({"model": MODULE, "batch_size": Interval(Integral, 1, None)})
def evaluate_accuracy(model: nn.Module, x, y, batch_size: int = 512) -> float:
    """Top-1 accuracy of ``model`` on images ``x`` with labels ``y`` (NaN when a logit is not finite).

    Parameters
    ----------
    model : torch.nn.Module
        A classifier returning logits of shape (B, m).
    x : array_like or torch.Tensor, shape (n, C, H, W)
        Images.
    y : array_like of int, shape (n,)
        Labels in [0, m).
    batch_size : int
        Images per forward pass.

    Returns
    -------
    float

    Examples
    --------
    >>> import torch
    >>> from gcc.dnn.models import LeNet5
    >>> from gcc.dnn.training import evaluate_accuracy
    >>> _ = torch.manual_seed(0)
    >>> acc = evaluate_accuracy(LeNet5(num_classes=3, img_size=16), torch.zeros(4, 1, 16, 16), [0, 1, 2, 0])
    >>> 0.0 <= acc <= 1.0
    True
    """
    owner = "evaluate_accuracy"
    x = check_finite(check_images(x, "x", owner), "x", owner)
    labels = check_labels(y, len(x), "y", owner)
    model.eval()
    try:
        param = next(model.parameters())
        device, dtype = param.device, param.dtype
    except StopIteration:
        device, dtype = torch.device("cpu"), torch.float32
    x = torch.as_tensor(x)
    y = torch.as_tensor(labels)
    correct, finite = 0, True
    for start in range(0, len(x), batch_size):
        try:
            logits = model(x[start:start + batch_size].to(device=device, dtype=dtype))
        except torch.OutOfMemoryError:
            raise
        except RuntimeError as err:      # a shape or channel count the network does not take
            raise invalid("x", owner, f"images that {type(model).__name__} takes", x,
                          str(err).strip().splitlines()[0][:300]) from None
        if start == 0:
            check_labels(labels, len(labels), "y", owner, n_classes=int(logits.shape[-1]))
        finite = finite and bool(torch.isfinite(logits).all())
        correct += int((logits.argmax(1).cpu() == y[start:start + batch_size]).sum())
    return correct / len(x) if finite else float("nan")


def _fit(model: nn.Module, x: torch.Tensor, y: torch.Tensor, recipe: Mapping[str, Any],
         rng: np.random.Generator, device: torch.device) -> None:
    epochs, bs = int(recipe["epochs"]), int(recipe["batch_size"])
    per_epoch = min(len(x), int(recipe.get("train_images") or len(x)))
    opt = torch.optim.AdamW(model.parameters(), lr=float(recipe["lr"]), weight_decay=float(recipe["weight_decay"]))
    steps_per_epoch = int(np.ceil(per_epoch / bs))
    total = epochs * steps_per_epoch
    warm = max(1, int(recipe.get("warmup_epochs", 0)) * steps_per_epoch)

    def lr_factor(step: int) -> float:
        # Linear warm-up then cosine decay to zero: the standard ViT recipe, which makes
        # a small transformer train reliably without tuning.
        if step < warm:
            return (step + 1) / warm
        return 0.5 * (1 + np.cos(np.pi * (step - warm) / max(1, total - warm)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_factor)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=float(recipe.get("label_smoothing", 0.0)))
    model.train()
    for _ in range(epochs):
        order = rng.permutation(len(x))[:per_epoch]
        for start in range(0, per_epoch, bs):
            idx = torch.as_tensor(order[start:start + bs])
            xb, yb = x[idx].to(device), y[idx].to(device)
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            sched.step()
    model.eval()


def _inference_form(model: nn.Module, config: Mapping[str, Any]) -> nn.Module:
    # The paper runs RepVGG re-parameterised (single-branch); the other networks as trained.
    return deploy(model) if config.get("arch") == "repvgg" else model.eval()


@validate_params({"config": MAPPING, "name": NoneOr(NAME), "recipe": NoneOr(MAPPING), "seed": SEED,
                  "data_id": InstanceOf(str, "a str"), "use_cache": BOOL, "threads": NoneOr(Interval(Integral, 1, None)),
                  "device": NoneOr(DEVICE)})
def train_model(config: Mapping[str, Any], x_train, y_train, x_val, y_val, x_test, y_test, *,
                name: str | None = None, recipe: Mapping[str, Any] | None = None, seed: int = 0,
                data_id: str = "custom", use_cache: bool = True, threads: int | None = None,
                device: str | torch.device | None = None) -> TrainedModel:
    """Train (or load from the cache) a classifier, deterministically from ``seed``.

    Parameters
    ----------
    config : mapping
        Model configuration for :func:`gcc.dnn.models.build_model`.
    x_train, y_train, x_val, y_val, x_test, y_test : array_like
        Images (n, C, H, W) and labels (n,) of the three splits.
    name : str, optional
        Name in result tables; default ``config["arch"]``.
    recipe : mapping, optional
        Entries of :data:`RECIPE_ENTRIES`; missing ones from :data:`DEFAULT_RECIPES`, :data:`MODEL_RECIPES`.
    seed : int
        Seeds the initialisation, batch order and the images of each epoch.
    data_id : str
        Identifies the data in the cache key; two data sets must not share an id.
    use_cache : bool
        Load the weights when cached and store them after training.
    threads : int, optional
        Torch CPU threads (default the recipe's, 1); part of the cache key.
    device : str or torch.device, optional
        Training device; default CPU.

    Returns
    -------
    TrainedModel
    """
    owner = "train_model"
    images = {}
    for split, x, y in (("train", x_train, y_train), ("val", x_val, y_val), ("test", x_test, y_test)):
        images[split] = check_finite(check_images(x, f"x_{split}", owner), f"x_{split}", owner)
        n_classes = config.get("num_classes")
        n_classes = n_classes if isinstance(n_classes, Integral) and not isinstance(n_classes, bool) else None
        check_labels(y, len(images[split]), f"y_{split}", owner, n_classes=n_classes)
    if recipe is not None:
        check_keys(recipe, tuple(RECIPE_ENTRIES), "recipe", owner, "training recipe entries")
    config = dict(config)
    arch = config.get("arch")
    full_recipe = dict(DEFAULT_RECIPES.get(arch, DEFAULT_RECIPES["vit"]))
    full_recipe.update(MODEL_RECIPES.get(name, {}) if name else {})
    full_recipe.update(recipe or {})
    for entry, value in full_recipe.items():
        # Checked, never rewritten: the recipe as given is part of the cache key.
        if not RECIPE_ENTRIES[entry].is_satisfied_by(value):
            raise invalid("recipe", owner, "a training recipe whose entries are in their ranges", dict(recipe or {}),
                          f"{entry} = {value!r} is not {RECIPE_ENTRIES[entry].description}")
    dev = torch.device(device) if device is not None else torch.device("cpu")
    if threads is None:
        # One CPU thread by default: float reductions, hence the weights, depend on the thread
        # count, and on a shared machine one thread is also the fastest (no spin-waiting).
        threads = int(full_recipe.get("threads", 1))
    # The thread count changes CPU-trained weights, so it is part of the key (not on a GPU).
    keyed = dict(full_recipe, threads=threads) if dev.type == "cpu" else dict(full_recipe, device=dev.type)
    key = cache_key(config, keyed, data_id, seed)
    folder = _cache_folder(owner) if use_cache else cache_dir()
    weights, meta_path = folder / f"{key}.pt", folder / f"{key}.json"
    name = name or str(arch)
    data_name = data_id.split("-")[0] if data_id else ""
    extra = {"data": data_name, "threads": threads, "device": str(dev)}

    with _deterministic(seed, threads):
        model = build_model(config)
    # The images the network takes (RepVGG: any size), checked before any training.
    want = (config.get("in_chans", 1),) + ((config.get("img_size", 28),) * 2 if arch != "repvgg" else ())
    for split, x in images.items():
        if tuple(x.shape[1:1 + len(want)]) != want:
            raise invalid(f"x_{split}", owner, f"images of shape (n, {', '.join(map(str, want))}"
                          f"{', H, W' * (len(want) == 1)}) for the configuration {config}", x,
                          f"its images are {tuple(x.shape[1:])}")
    n_train = n_parameters(model)
    meta = _cached_meta(meta_path) if use_cache and weights.exists() else None
    hit = meta is not None
    if hit:
        _verify_weights(weights, owner)
        load_checkpoint(model, weights, architecture=f"{name} {config}")
        model = _inference_form(model, config)
    else:
        x_tr = torch.as_tensor(np.asarray(x_train, dtype=np.float32))
        y_tr = torch.as_tensor(np.asarray(y_train, dtype=np.int64))
        t0 = time.perf_counter()
        with _deterministic(seed + 1, threads):
            model.to(dev)
            _fit(model, x_tr, y_tr, full_recipe, np.random.default_rng(seed), dev)
            model.to("cpu")
        seconds = time.perf_counter() - t0
        state = model.state_dict()
        model = _inference_form(model, config)
        with _deterministic(seed, threads):
            acc = {split: evaluate_accuracy(model, xs, ys) for split, xs, ys in
                   (("train", x_train[:TRAIN_ACCURACY_IMAGES], y_train[:TRAIN_ACCURACY_IMAGES]),
                    ("val", x_val, y_val), ("test", x_test, y_test))}
        meta = {"config": config, "recipe": full_recipe, "data": data_id, "data_name": data_name, "seed": seed,
                "name": name, "test_accuracy": acc["test"], "val_accuracy": acc["val"],
                "train_accuracy": acc["train"], "train_seconds": seconds, "threads": threads, "device": str(dev),
                "n_parameters": n_parameters(model), "n_parameters_train": n_train}
        if use_cache:
            _store(folder, key, state, meta)
    return TrainedModel(model=model, name=name, config=config, recipe=full_recipe, seed=seed, key=key,
                        test_accuracy=meta["test_accuracy"], val_accuracy=meta["val_accuracy"],
                        train_accuracy=meta["train_accuracy"], train_seconds=meta["train_seconds"], cache_hit=hit,
                        n_parameters=int(meta.get("n_parameters", n_train)),
                        extra={**extra, "n_parameters_train": n_train, "data": meta.get("data_name", data_name)})


#: A cache write's temporary file older than this (seconds) is the leftover of a killed process
#: (a torch.save of a few MB takes well under a second); a younger one may be another process's
#: write in progress, and is left alone.
STALE_PARTIAL_S = 120.0


def _store(folder: Path, key: str, state: Mapping[str, torch.Tensor], meta: Mapping[str, Any]) -> None:
    """Write one cache entry atomically (weights, checksum, then metadata); stale partial writes go."""
    folder.mkdir(parents=True, exist_ok=True)
    now = time.time()
    for leftover in folder.glob(f".{key}.*{PARTIAL_MARK}*"):
        with contextlib.suppress(OSError):
            if now - leftover.stat().st_mtime > STALE_PARTIAL_S:
                leftover.unlink()
    # Saved through a file object: torch then names the archive's records "archive/" instead of
    # after the (random) temporary file name, so that the same weights give the same bytes.
    with replacing(folder / f"{key}.pt") as tmp, open(tmp, "wb") as fh:
        torch.save(state, fh)
    weights = folder / f"{key}.pt"
    write_text(_checksum_path(weights), _sha256(weights) + "\n")
    write_text(folder / f"{key}.json", json.dumps(meta, indent=2, default=str))


def _checksum_path(weights: Path) -> Path:
    return weights.with_name(weights.name + ".sha256")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _verify_weights(weights: Path, owner: str) -> None:
    """Check cached weights against their checksum (one without gets it); a mismatch names the file."""
    digest, sums = _sha256(weights), _checksum_path(weights)
    try:
        recorded = sums.read_text().split()
    except FileNotFoundError:
        with contextlib.suppress(OSError):
            write_text(sums, digest + "\n")
        return
    if not recorded or recorded[0] != digest:
        raise invalid("GCC_MODEL_CACHE", owner, "a model cache whose weights match their checksums", str(weights),
                      f"the file's sha256 is {digest[:16]}..., {sums.name} records "
                      f"{(recorded or ['nothing'])[0][:16]}...: the file is damaged; delete {weights.name}, "
                      f"{sums.name} and {weights.stem}.json to retrain")


def _cached_meta(path: Path) -> dict | None:
    """A cache entry's metadata, None when missing or unreadable; a value out of its domain names the file."""
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError):      # absent, or half-written by an older version
        return None
    needed = ("test_accuracy", "val_accuracy", "train_accuracy", "train_seconds")
    if not (isinstance(meta, dict) and all(k in meta for k in needed)):
        return None
    for entry in needed:
        value = meta[entry]
        fraction = entry != "train_seconds"
        ok = isinstance(value, Real) and not isinstance(value, bool) and (
            (value != value or 0 <= value <= 1) if fraction else 0 <= value < float("inf"))
        if not ok:
            want = "a fraction in [0, 1] or NaN" if fraction else "a finite number of seconds >= 0"
            raise invalid(str(path), "train_model", f"a model cache entry whose '{entry}' is {want}", value,
                          "the file is damaged; delete it and the .pt of its key to retrain")
    return meta


@validate_params({"name": Options(sorted(EMBEDDED_MODELS)),
                  "data": NoneOr(InstanceOf(ImageData, "a gcc.dnn.data.ImageData (load_images())")), "seed": SEED,
                  "recipe": NoneOr(MAPPING), "config": NoneOr(MAPPING), "use_cache": BOOL,
                  "threads": NoneOr(Interval(Integral, 1, None)), "device": NoneOr(Device(auto=True))})
def train_embedded_model(name: str = "lenet5", data=None, seed: int = 0, recipe: Mapping[str, Any] | None = None,
                         config: Mapping[str, Any] | None = None, use_cache: bool = True,
                         threads: int | None = None, device: str | None = None) -> TrainedModel:
    """Train one of the embedded models on ``data`` (or load it from the cache).

    Parameters
    ----------
    name : str
        A key of :data:`EMBEDDED_MODELS`.
    data : gcc.dnn.data.ImageData, optional
        Default :func:`gcc.dnn.data.load_images` ``()``.
    seed : int
        Training seed.
    recipe, config : mapping, optional
        Overrides of the default recipe / model configuration.
    use_cache, threads, device
        As :func:`train_model` (``device="auto"``: the GPU when there is one).

    Returns
    -------
    TrainedModel
    """
    from .inference import best_device

    data = data if data is not None else load_images()
    cfg = dict(EMBEDDED_MODELS[name])
    cfg.update(config or {})
    # The input geometry follows the data (28x28 grey for Fashion-MNIST, 32x32 colour for CIFAR-10).
    cfg["in_chans"], cfg["num_classes"] = data.channels, data.n_classes
    if "img_size" in cfg:
        cfg["img_size"] = data.size
    return train_model(cfg, data.x_train, data.y_train, data.x_val, data.y_val, data.x_test, data.y_test,
                       name=name, recipe=recipe, seed=seed, data_id=data.data_id, use_cache=use_cache,
                       threads=threads, device=best_device() if device == "auto" else device)
