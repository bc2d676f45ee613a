"""Deep networks as the workers' function: data, models, training, inference (the paper's Section 4).

Needs the ``dnn`` extra (torch, torchvision, timm, scikit-learn), so ``import gcc`` does not load it.
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
