"""Deep networks as the workers' function: data, models, training, inference (the paper's Section 4).

This subpackage needs the ``dnn`` extra (torch, torchvision, timm, scikit-learn,
``pip install gcc-companion[dnn]``) and is therefore *not* imported by ``import gcc``: import it
explicitly, ``import gcc.dnn``. The experiments built on it are in :mod:`gcc.experiments`:
``dnn_models`` (the trained networks and every DNN page's header), ``dnn_stragglers`` (Figs. 3-4),
``dnn_summary`` (Table 1), ``dnn_lambda`` (App. E and the recovery limit), ``dnn_probabilistic``
(loss against N under Bernoulli stragglers), ``coded_samples`` (Fig. 7), ``coding_cost`` (Table 2).

Modules
-------
formats
    Readers of image files: MNIST's IDX format, CIFAR-10's python batches, ImageNet-style
    folders, each with errors that name the file and what was expected.
data
    Fashion-MNIST (the default; Debian's ``dataset-fashion-mnist``), MNIST-format folders,
    CIFAR-10, and scikit-learn's digits as the fallback, in fixed normalised splits.
models
    LeNet-5 at the paper's size, a RepVGG of timm's family (deployed re-parameterised), a
    timm ViT sized for CPU training and any timm model by name (weights only from local files).
training
    Seeded, deterministic training with an on-disk weight cache.
inference
    ``f`` = the softmax output of a model as a batched function on coded inputs.
"""
import importlib.util as _util
import os as _os
import warnings as _warnings

# Never let timm / huggingface_hub reach the network: weights must already be on disk.
_os.environ.setdefault("HF_HUB_OFFLINE", "1")
# timm imports tqdm.auto, which warns in a kernel without ipywidgets: noise on every DNN page.
_warnings.filterwarnings("ignore", message="IProgress not found")

_missing = [m for m in ("torch", "torchvision", "timm", "sklearn") if _util.find_spec(m) is None]
if _missing:
    raise ImportError(f"gcc.dnn needs the 'dnn' extra ({', '.join(_missing)} not installed): "
                      "pip install gcc-companion[dnn]")
__all__ = ["formats", "data", "models", "training", "inference"]


def __getattr__(name):
    """The submodules load on first use: the experiments import ``gcc.dnn._checks`` without loading torch."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return importlib.import_module(f"{__name__}.{name}")
