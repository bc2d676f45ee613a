"""Coded inference of deep networks under stragglers (the paper's Section 4 experiments).

This subpackage needs the ``dnn`` extra (torch, torchvision, timm, scikit-learn) and is
therefore *not* imported by ``import gcc``: import it explicitly, ``import gcc.dnn``.

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
experiments
    Runners for the figures and tables (stragglers sweep, summary table, coded samples,
    coding cost), built on :func:`gcc.harness.simulate`.
"""
import os as _os

# Never let timm / huggingface_hub reach the network: weights must already be on disk.
_os.environ.setdefault("HF_HUB_OFFLINE", "1")

from . import data, models, training, inference  # noqa: E402

__all__ = ["data", "models", "training", "inference", "experiments"]


def __getattr__(name):
    # experiments pulls in gcc.harness/tuning and pandas; load it on first use.
    if name == "experiments":
        import importlib

        return importlib.import_module(".experiments", __name__)
    raise AttributeError(name)
