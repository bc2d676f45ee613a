"""Seeded, deterministic training with an on-disk weight cache.

A trained model is identified by its *cache key*: the SHA-256 of the model configuration,
the training recipe, the data set, the seed, the ``gcc`` version and the torch version.
Training the same key twice gives bit-identical weights on the same machine and thread count
(every random draw -- initialisation, batch order, augmentation -- comes from the seed, and
torch's deterministic algorithms are switched on for the run); the second call loads the
cached weights instead of training.

The cache lives in ``$GCC_MODEL_CACHE`` if set, else ``<repo>/_build/cache/models``. Each entry
is ``<key>.pt`` (the state dict) plus ``<key>.json`` (configuration, recipe, accuracies and
training time), so notebooks can report accuracy without re-evaluating.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
from torch import nn  # noqa: E402

from ..validation import check_choice, invalid  # noqa: E402
from .models import LENET_DIGITS_CONFIG, VIT_DIGITS_CONFIG, build_model, n_parameters  # noqa: E402

__all__ = ["TrainedModel", "train_model", "train_digits_model", "evaluate_accuracy", "cache_dir",
           "cache_key", "DEFAULT_RECIPES", "MODEL_RECIPES", "EMBEDDED_MODELS"]

#: Training recipes per architecture (AdamW + cosine schedule + one-pixel random shifts).
DEFAULT_RECIPES: dict[str, dict[str, Any]] = {
    "vit": {"epochs": 50, "lr": 3e-3, "batch_size": 64, "weight_decay": 0.05, "label_smoothing": 0.0,
            "shift": 1, "warmup_epochs": 2},
    "lenet5": {"epochs": 40, "lr": 3e-3, "batch_size": 64, "weight_decay": 1e-4, "label_smoothing": 0.0,
               "shift": 1, "warmup_epochs": 1},
}

#: The embedded digits models: name -> model configuration. "vit" and "lenet5" are the default
#: experiments' models (seconds on a CPU); "vit_large" (patch 4, width 192, depth 6, ~2.7M
#: parameters) is the larger ViT that scripts/gpu_paper_run.py trains when a GPU is present.
EMBEDDED_MODELS: dict[str, dict[str, Any]] = {
    "vit": dict(VIT_DIGITS_CONFIG),
    "lenet5": dict(LENET_DIGITS_CONFIG),
    "vit_large": {**VIT_DIGITS_CONFIG, "embed_dim": 192, "depth": 6, "num_heads": 6,
                  "mlp_ratio": 4.0},
}

#: Recipe changes per embedded model on top of :data:`DEFAULT_RECIPES` of its architecture.
MODEL_RECIPES: dict[str, dict[str, Any]] = {
    "vit_large": {"epochs": 100, "lr": 1e-3, "batch_size": 128, "warmup_epochs": 5, "label_smoothing": 0.1},
}


@dataclass
class TrainedModel:
    """A trained model in eval mode and what is known about it.

    Attributes
    ----------
    model : torch.nn.Module
        The network, in eval mode, on the CPU.
    name : str
        Short name used in result tables (``"vit"``, ``"lenet5"``, a timm name ...).
    config, recipe : dict
        Model configuration and training recipe.
    seed : int
        Training seed.
    key : str
        Cache key (SHA-256 hex digest).
    test_accuracy, val_accuracy, train_accuracy : float
        Top-1 accuracies of the uncoded model on the three splits.
    train_seconds : float
        Wall-clock training time when the weights were produced (not of a cache hit).
    cache_hit : bool
        True when the weights came from the cache.
    n_parameters : int
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
        return {"model": self.name, "n_parameters": self.n_parameters, "test_accuracy": self.test_accuracy,
                "val_accuracy": self.val_accuracy, "train_accuracy": self.train_accuracy,
                "train_seconds": self.train_seconds, "cache_hit": self.cache_hit, "seed": self.seed,
                "key": self.key[:16]}


def cache_dir() -> Path:
    """Folder of cached weights: ``$GCC_MODEL_CACHE`` or ``<repo>/_build/cache/models``."""
    env = os.environ.get("GCC_MODEL_CACHE")
    if env:
        return Path(env)
    from gcc.results import repo_root

    return repo_root() / "_build" / "cache" / "models"


def cache_key(config: Mapping[str, Any], recipe: Mapping[str, Any], data_id: str, seed: int) -> str:
    """SHA-256 of everything that determines the trained weights.

    Parameters
    ----------
    config, recipe : mapping
        Model configuration and training recipe.
    data_id : str
        Identifies the training data (e.g. ``"digits16-split0"``).
    seed : int
        Training seed.

    Returns
    -------
    str
        Hex digest. It also covers the ``gcc`` version and torch's major.minor version, so a new
        release (which may change the recipe's code) never reuses stale weights.
    """
    from gcc import __version__

    payload = {"config": dict(config), "recipe": dict(recipe), "data": data_id, "seed": int(seed),
               "gcc": __version__, "torch": ".".join(torch.__version__.split(".")[:2])}
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


def _shift_batch(x: torch.Tensor, shifts: np.ndarray) -> torch.Tensor:
    # Random translation by whole pixels (zero = background after normalisation is the
    # minimum value, so pad with each image's own minimum): the cheapest augmentation that
    # buys digits ~1% accuracy without any randomness outside `rng`.
    if not np.any(shifts):
        return x
    pad = int(np.abs(shifts).max())
    fill = x.amin(dim=(1, 2, 3), keepdim=True)
    h, w = x.shape[-2:]
    big = fill.expand(x.shape[0], x.shape[1], h + 2 * pad, w + 2 * pad).clone()
    big[..., pad:pad + h, pad:pad + w] = x
    out = torch.empty_like(x)
    for i, (dy, dx) in enumerate(shifts):
        out[i] = big[i, :, pad + dy:pad + dy + h, pad + dx:pad + dx + w]
    return out


@torch.no_grad()
def evaluate_accuracy(model: nn.Module, x, y, batch_size: int = 512) -> float:
    """Top-1 accuracy of ``model`` on images ``x`` (n, C, H, W) with labels ``y`` (n,)."""
    model.eval()
    x = torch.as_tensor(x)
    y = torch.as_tensor(np.asarray(y))
    device = next(model.parameters()).device
    correct = 0
    for start in range(0, len(x), batch_size):
        logits = model(x[start:start + batch_size].to(device))
        correct += int((logits.argmax(1).cpu() == y[start:start + batch_size]).sum())
    return correct / max(len(x), 1)


def _fit(model: nn.Module, x: torch.Tensor, y: torch.Tensor, recipe: Mapping[str, Any],
         rng: np.random.Generator, device: torch.device, verbose: bool) -> None:
    epochs, bs = int(recipe["epochs"]), int(recipe["batch_size"])
    opt = torch.optim.AdamW(model.parameters(), lr=float(recipe["lr"]), weight_decay=float(recipe["weight_decay"]))
    steps_per_epoch = int(np.ceil(len(x) / bs))
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
    shift = int(recipe.get("shift", 0))
    model.train()
    for epoch in range(epochs):
        order = rng.permutation(len(x))
        running = 0.0
        for start in range(0, len(x), bs):
            idx = order[start:start + bs]
            xb = x[idx]
            if shift:
                xb = _shift_batch(xb, rng.integers(-shift, shift + 1, size=(len(idx), 2)))
            xb, yb = xb.to(device), y[idx].to(device)
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            sched.step()
            running += float(loss.detach()) * len(idx)
        if verbose:
            print(f"epoch {epoch + 1}/{epochs} loss {running / len(x):.4f}")
    model.eval()


def train_model(config: Mapping[str, Any], x_train, y_train, x_val, y_val, x_test, y_test, *,
                name: str | None = None, recipe: Mapping[str, Any] | None = None, seed: int = 0,
                data_id: str = "custom", use_cache: bool = True, threads: int | None = None,
                device: str | torch.device | None = None, verbose: bool = False) -> TrainedModel:
    """Train (or load from the cache) a classifier, deterministically from ``seed``.

    Parameters
    ----------
    config : mapping
        Model configuration for :func:`gcc.dnn.models.build_model`.
    x_train, y_train, x_val, y_val, x_test, y_test : array_like
        Images (n, C, H, W) and labels (n,) of the three splits.
    name : str, optional
        Name in result tables; defaults to ``config["arch"]``.
    recipe : mapping, optional
        Training recipe (``epochs``, ``lr``, ``batch_size``, ``weight_decay``, ``label_smoothing``,
        ``shift``, ``warmup_epochs``); missing keys come from :data:`DEFAULT_RECIPES`.
    seed : int
        Seeds the initialisation, batch order and augmentation.
    data_id : str
        Identifies the data in the cache key; two data sets must not share an id.
    use_cache : bool
        Load the weights when cached and store them after training.
    threads : int, optional
        Torch CPU threads during training; default the recipe's ``threads`` (1). CPU-trained
        weights are bit-identical only for the same count, so it is part of the cache key.
    device : str or torch.device, optional
        Training device; default CPU (the embedded models train in seconds there and CPU
        training is reproducible across machines of the same kind).
    verbose : bool
        Print the loss per epoch.

    Returns
    -------
    TrainedModel
        With the model in eval mode on the CPU.
    """
    config = dict(config)
    arch = config.get("arch")
    full_recipe = dict(DEFAULT_RECIPES.get(arch, DEFAULT_RECIPES["vit"]))
    full_recipe.update(MODEL_RECIPES.get(name, {}) if name else {})
    full_recipe.update(recipe or {})
    if int(full_recipe["epochs"]) < 0:
        raise invalid("recipe", "train_model", "a recipe whose 'epochs' is an int >= 0", full_recipe["epochs"])
    dev = torch.device(device) if device is not None else torch.device("cpu")
    if threads is None:
        # One CPU thread by default: float reductions, hence the weights, depend on the thread
        # count, and on a shared machine one thread is also the fastest (no spin-waiting).
        threads = int(full_recipe.get("threads", 1))
    # The thread count changes CPU-trained weights, so it is part of the key (not on a GPU).
    keyed = dict(full_recipe, threads=threads) if dev.type == "cpu" else dict(full_recipe, device=dev.type)
    key = cache_key(config, keyed, data_id, seed)
    folder = cache_dir()
    weights, meta_path = folder / f"{key}.pt", folder / f"{key}.json"
    name = name or str(arch)

    with _deterministic(seed, threads):
        model = build_model(config)
    if use_cache and weights.exists() and meta_path.exists():
        model.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
        model.eval()
        meta = json.loads(meta_path.read_text())
        return TrainedModel(model=model, name=name, config=config, recipe=full_recipe, seed=seed, key=key,
                            test_accuracy=meta["test_accuracy"], val_accuracy=meta["val_accuracy"],
                            train_accuracy=meta["train_accuracy"], train_seconds=meta["train_seconds"],
                            cache_hit=True, n_parameters=n_parameters(model))

    x_tr = torch.as_tensor(np.asarray(x_train, dtype=np.float32))
    y_tr = torch.as_tensor(np.asarray(y_train, dtype=np.int64))
    t0 = time.perf_counter()
    with _deterministic(seed + 1, threads):
        model.to(dev)
        _fit(model, x_tr, y_tr, full_recipe, np.random.default_rng(seed), dev, verbose)
        model.to("cpu")
    seconds = time.perf_counter() - t0
    acc = {split: evaluate_accuracy(model, xs, ys) for split, xs, ys in
           (("train", x_train, y_train), ("val", x_val, y_val), ("test", x_test, y_test))}
    if use_cache:
        folder.mkdir(parents=True, exist_ok=True)
        # Write to a temporary name and rename: two notebooks training the same key at
        # once must never leave a half-written file behind.
        tmp = weights.with_suffix(f".tmp{os.getpid()}")
        torch.save(model.state_dict(), tmp)
        os.replace(tmp, weights)
        meta = {"config": config, "recipe": full_recipe, "data": data_id, "seed": seed, "name": name,
                "test_accuracy": acc["test"], "val_accuracy": acc["val"], "train_accuracy": acc["train"],
                "train_seconds": seconds, "threads": threads, "device": str(dev)}
        meta_path.write_text(json.dumps(meta, indent=2, default=str))
    return TrainedModel(model=model, name=name, config=config, recipe=full_recipe, seed=seed, key=key,
                        test_accuracy=acc["test"], val_accuracy=acc["val"], train_accuracy=acc["train"],
                        train_seconds=seconds, cache_hit=False, n_parameters=n_parameters(model))


def train_digits_model(name: str = "vit", seed: int = 0, recipe: Mapping[str, Any] | None = None,
                       config: Mapping[str, Any] | None = None, data=None, use_cache: bool = True,
                       threads: int | None = None, verbose: bool = False,
                       device: str | None = None) -> TrainedModel:
    """Train one of the embedded models on the 16x16 digits (or load it from the cache).

    Parameters
    ----------
    name : {"vit", "lenet5", "vit_large"}
        Which embedded model (see :data:`EMBEDDED_MODELS`; its recipe adds :data:`MODEL_RECIPES`).
    seed : int
        Training seed.
    recipe, config : mapping, optional
        Overrides of the default recipe / model configuration.
    data : DigitsData, optional
        Defaults to :func:`gcc.dnn.data.load_digits16` ``()``.
    use_cache, threads, verbose, device
        See :func:`train_model` (``device="auto"`` trains on the GPU when there is one).

    Returns
    -------
    TrainedModel
    """
    from .data import load_digits16
    from .inference import best_device

    check_choice(name, "name", "train_digits_model", sorted(EMBEDDED_MODELS))
    data = data if data is not None else load_digits16()
    cfg = dict(EMBEDDED_MODELS[name])
    cfg.update(config or {})
    cfg["img_size"] = data.size
    data_id = f"digits{data.size}-{len(data.y_train)}/{len(data.y_val)}/{len(data.y_test)}-{data.mean:.6f}"
    return train_model(cfg, data.x_train, data.y_train, data.x_val, data.y_val, data.x_test, data.y_test,
                       name=name, recipe=recipe, seed=seed, data_id=data_id, use_cache=use_cache,
                       threads=threads, verbose=verbose,
                       device=best_device() if device == "auto" else device)
