"""Deep networks as the workers' function: data, models, training, inference (the paper's Section 4).

This subpackage needs the ``dnn`` extra (torch, torchvision, timm, scikit-learn,
``pip install gcc-companion[dnn]``) and is therefore *not* imported by ``import gcc``: import it
explicitly, ``import gcc.dnn``. The experiments built on it (straggler sweeps, Table 1, coded
samples, coding cost) are in :mod:`gcc.experiments` (``dnn_stragglers``, ``dnn_summary``,
``coded_samples``, ``coding_cost``).

Modules
-------
data
    scikit-learn digits upscaled to 16x16 (offline, deterministic splits) and an
    ImageFolder loader for the paper profile (ImageNet-style validation folders).
models
    A small timm Vision Transformer, a LeNet-5-style CNN and any timm model by name
    (pretrained weights only from local files).
training
    Seeded, deterministic training with an on-disk weight cache.
inference
    ``f`` = the softmax output of a model as a batched function on coded inputs.
"""
import importlib.util as _util
import os as _os

# Never let timm / huggingface_hub reach the network: weights must already be on disk.
_os.environ.setdefault("HF_HUB_OFFLINE", "1")

_missing = [m for m in ("torch", "torchvision", "timm", "sklearn") if _util.find_spec(m) is None]
if _missing:
    raise ImportError(f"gcc.dnn needs the 'dnn' extra ({', '.join(_missing)} not installed): "
                      "pip install gcc-companion[dnn]")

from . import data, models, training, inference  # noqa: E402

__all__ = ["data", "models", "training", "inference"]
