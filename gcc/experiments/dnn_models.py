"""The networks of the DNN experiments and what every DNN page says about its scale.

:func:`prepare_models` trains (or loads from the weight cache) the embedded networks and, in the
paper profile, a timm model with local weights; :func:`from_run` does it with the models notebook's
parameters; :func:`page_header` gives the lines every DNN page opens with.
"""
from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .. import results
from ..backend import to_numpy
from ..machine import summary_line
from ..validation import SEED, InstanceOf, Interval, ListOf, NoneOr, Satisfies, invalid, validate_params
from ..dnn._checks import NAME, TEXT, Device, Frame, check_keys

# Never let timm / huggingface_hub reach the network: weights must already be on disk.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

__all__ = ["PAPER_MODELS", "DEFAULT_MODELS", "MODEL_COLUMNS", "MODELS_NOTEBOOK", "PREPARE_PARAMETERS",
           "PreparedModels", "prepare_models", "from_run", "data_from_run", "header_from_run", "show_markdown",
           "page_header", "family_of"]

#: The notebook that trains the networks; the other DNN notebooks load them with its parameters.
MODELS_NOTEBOOK = "dnn_models"

#: The parameters of that notebook that :func:`prepare_models` takes.
PREPARE_PARAMETERS = ("models", "seed", "dataset", "data_folder", "datasets", "threads", "train_device", "recipes",
                      "configs", "paper_model", "paper_weights", "paper_checkpoint", "paper_data", "paper_images")

#: The default profile's networks (keys of :data:`gcc.dnn.training.EMBEDDED_MODELS`).
DEFAULT_MODELS = ("lenet5", "repvgg", "vit")

#: The paper's networks (NeurIPS 2024, Sec. 5), by family: what ours stand in for.
PAPER_MODELS = {
    "lenet5": {"paper_model": "LeNet5", "paper_dataset": "MNIST", "paper_parameters": "about 6e4"},
    "repvgg": {"paper_model": "RepVGG (A2, likely)", "paper_dataset": "CIFAR-10", "paper_parameters": "about 26M"},
    "vit": {"paper_model": "ViT-Base/16", "paper_dataset": "ImageNet-1K", "paper_parameters": "over 80M"},
}

#: The first columns of the models table (the table contract).
MODEL_COLUMNS = ["model", "dataset", "n_parameters", "test_accuracy"]


@validate_params({"model": TEXT})
def family_of(model: str) -> str:
    """The paper network a model of ours stands in for: ``"lenet5"``, ``"repvgg"``, ``"vit"`` or ``""``.

    Examples
    --------
    >>> from gcc.experiments.dnn_models import family_of
    >>> family_of("vit_base_patch16_224"), family_of("repvgg_a0"), family_of("lenet5"), family_of("resnet18")
    ('vit', 'repvgg', 'lenet5', '')
    """
    name = str(model).lower()
    for key, family in (("lenet", "lenet5"), ("repvgg", "repvgg"), ("vit", "vit")):
        if key in name:
            return family
    return ""


class PreparedModels(dict):
    """``{name: {"f", "splits", "info"}}`` of the prepared networks, with ``datasets`` and ``banners``."""

    def __init__(self, *args, datasets: Mapping[str, str] | None = None, banners: Sequence[str] = (), **kwargs):
        super().__init__(*args, **kwargs)
        self.datasets = dict(datasets or {})
        self.banners = [b for b in dict.fromkeys(banners) if b]

    def header(self) -> str:
        """:func:`page_header` of these models (Markdown)."""
        return page_header(self.table(), self.datasets, self.banners)

    def show_header(self) -> None:
        """Display :meth:`header` as Markdown (in a notebook; printed elsewhere)."""
        show_markdown(self.header())

    def data_label(self) -> str:
        """The networks' data sets as a page names them ("Fashion‑MNIST", with non-breaking hyphens)."""
        from ..dnn.data import DISPLAY_NAMES

        names = dict.fromkeys(str(entry["info"].get("dataset", "")) for entry in self.values())
        return ", ".join(DISPLAY_NAMES.get(n, n) for n in names).replace("-", "\u2011")

    def summary(self) -> dict:
        """``datasets`` and ``banners``: what :func:`header_from_run` needs besides the models table."""
        return {"datasets": self.datasets, "banners": self.banners}

    def table(self):
        """The models table: ``model, dataset, n_parameters, test_accuracy`` first, one row per model."""
        rows = [{**entry["info"], "device": str(entry["f"].device), **PAPER_MODELS.get(family_of(name), {})}
                for name, entry in self.items()]
        table = pd.DataFrame(rows)
        return table[MODEL_COLUMNS + [c for c in table.columns if c not in MODEL_COLUMNS]]


@validate_params({"text": TEXT})
def show_markdown(text: str) -> None:
    """Display ``text`` as Markdown in a notebook (print it elsewhere)."""
    try:
        from IPython.display import Markdown, display
    except ImportError:  # pragma: no cover - IPython comes with the notebook extra
        print(text)
        return
    display(Markdown(text))


_PATH = NoneOr(InstanceOf((str, os.PathLike), "a path (str or os.PathLike)"))
_MAPPING = NoneOr(InstanceOf(Mapping, "a mapping"))
_DEVICE = NoneOr(Device(auto=True))
#: the data lines of a page header, and its banners
_DATASETS = NoneOr(Satisfies(lambda v: isinstance(v, Mapping) and all(isinstance(k, str) and isinstance(x, str)
                                                                        for k, x in v.items()),
                             "a mapping data set name -> its description (str -> str)"))
_BANNERS = ListOf(TEXT, 0, description="a list of banner texts (str)")


@validate_params({
    "names": ListOf(TEXT, 0, distinct=True, description="a sequence of distinct names (str)"), "seed": SEED,
    "dataset": InstanceOf((str, os.PathLike), "a data set name or a folder"), "data_folder": _PATH,
    "datasets": _MAPPING, "threads": NoneOr(Interval(int, 1, None)), "device": _DEVICE, "train_device": _DEVICE,
    "recipes": _MAPPING, "configs": _MAPPING,
    "paper_model": NoneOr(NAME), "paper_weights": _PATH, "paper_checkpoint": _PATH, "paper_data": _PATH,
    "paper_images": NoneOr(Interval(int, 1, None)), "paper_kwargs": _MAPPING})
def prepare_models(names: Sequence[str] = DEFAULT_MODELS, seed: int = 0, dataset: str = "auto",
                   data_folder: str | None = None, datasets: Mapping[str, str] | None = None,
                   threads: int | None = None, device: str | None = None, train_device: str | None = None,
                   recipes: Mapping[str, Mapping[str, Any]] | None = None,
                   configs: Mapping[str, Mapping[str, Any]] | None = None, paper_model: str | None = None,
                   paper_weights: str | None = None, paper_checkpoint: str | None = None,
                   paper_data: str | None = None, paper_images: int | None = 2000,
                   paper_kwargs: Mapping[str, Any] | None = None) -> PreparedModels:
    """Train (or load from the cache) the embedded networks and, optionally, set up a paper-scale model.

    Parameters
    ----------
    names : sequence of str
        Keys of :data:`gcc.dnn.training.EMBEDDED_MODELS`.
    seed : int
        Training seed.
    dataset : str
        Data of every embedded network (:func:`gcc.dnn.data.load_images`).
    data_folder : str, optional
        The folder of ``dataset`` (MNIST, CIFAR-10).
    datasets : dict name -> str, optional
        Per-network data (a name or a folder), e.g. ``{"repvgg": "/data/cifar-10-batches-py"}``.
    threads : int, optional
        Torch CPU threads for training (bit-identical weights need the same count).
    device : str, optional
        Device of f; default :func:`gcc.dnn.inference.best_device`.
    train_device : str, optional
        Training device (default CPU; ``"auto"``: the GPU when there is one).
    recipes, configs : dict name -> mapping, optional
        Per-network overrides of the training recipe / model configuration.
    paper_model : str, optional
        A timm model name; needs ``paper_data`` and ``paper_weights`` or ``paper_checkpoint``.
    paper_data : str, optional
        ImageFolder root, split in half into validation and test images.
    paper_images : int, optional
        Use this many images of the folder (seeded subset).
    paper_kwargs : mapping, optional
        Extra ``timm.create_model`` arguments.

    Returns
    -------
    PreparedModels
    """
    from ..dnn.data import FallbackDataWarning, data_banner, image_folder, load_images
    from ..dnn.inference import SoftmaxFunction
    from ..dnn.models import n_parameters, timm_model
    from ..dnn.training import evaluate_accuracy, train_embedded_model

    _check_prepare(names, datasets, recipes, configs, paper_model,
                   {"paper_weights": paper_weights, "paper_checkpoint": paper_checkpoint, "paper_data": paper_data,
                    "paper_kwargs": paper_kwargs})
    out, described, banners, loaded = {}, {}, [], {}
    for name in names:
        spec = (datasets or {}).get(name, dataset)
        folder = data_folder if spec == dataset else None
        key = (str(spec), str(folder))
        if key not in loaded:
            with warnings.catch_warnings():
                # The fallback is reported by the banner of every page (header()), not as a warning.
                warnings.simplefilter("ignore", FallbackDataWarning)
                loaded[key] = load_images(spec, folder=folder)
        data = loaded[key]
        described[data.name] = data.describe()
        banners.append(data_banner(data))
        trained = train_embedded_model(name, data=data, seed=seed, threads=threads, device=train_device,
                                       recipe=(recipes or {}).get(name), config=(configs or {}).get(name))
        info = trained.summary()
        info["dataset"] = data.name
        out[name] = {"f": SoftmaxFunction(trained.model, device=device), "splits": data, "info": info}
    if paper_model:
        model = timm_model(paper_model, pretrained=paper_weights is not None, weights_file=paper_weights,
                           checkpoint_path=paper_checkpoint, **dict(paper_kwargs or {}))
        x, y, _ = image_folder(paper_data, model=model, max_images=paper_images, seed=seed)
        x = to_numpy(x)
        half = len(y) // 2
        perm = np.random.default_rng(seed).permutation(len(y))
        val, test = perm[:half], perm[half:]
        splits = {"x_val": x[val], "y_val": y[val], "x_test": x[test], "y_test": y[test]}
        f = SoftmaxFunction(model, device=device, max_batch=256)
        name = os.path.basename(os.path.normpath(str(paper_data)))
        described[name] = f"{name}: {len(y):,} images of the folder {paper_data} (half validation, half test)"
        info = {"model": paper_model, "dataset": name, "n_parameters": n_parameters(model),
                "test_accuracy": evaluate_accuracy(f.model, x[test], y[test], batch_size=128),
                "val_accuracy": evaluate_accuracy(f.model, x[val], y[val], batch_size=128),
                "train_accuracy": np.nan, "epochs": np.nan, "train_images": np.nan, "train_seconds": np.nan,
                "cache_hit": True, "seed": seed, "threads": threads, "key": ""}
        out[paper_model] = {"f": f, "splits": splits, "info": info}
    return PreparedModels(out, datasets=described, banners=banners)


def _check_prepare(names, datasets, recipes, configs, paper_model, paper_args) -> None:
    """What :func:`prepare_models` checks in its body, before it loads or trains anything."""
    from ..dnn.training import EMBEDDED_MODELS

    owner = "prepare_models"
    unknown = [name for name in names if name not in EMBEDDED_MODELS]
    if unknown:
        raise invalid("names", owner, f"a sequence of embedded networks ({', '.join(EMBEDDED_MODELS)})", names,
                      f"{unknown[0]!r} is none")
    for arg, mapping in (("datasets", datasets), ("recipes", recipes), ("configs", configs)):
        # An entry for a network that is not prepared would be ignored without a word.
        check_keys(mapping or {}, tuple(names), arg, owner, "networks of names")
        kind, words = ((str, os.PathLike), "data set name or folder") if arg == "datasets" else (Mapping, "overrides")
        for key, value in (mapping or {}).items():
            if not isinstance(value, kind):
                raise invalid(arg, owner, f"a mapping network -> {words}", dict(mapping), f"{arg}[{key!r}] = {value!r}")
    if paper_model and not paper_args["paper_data"]:
        raise invalid("paper_data", owner, "an ImageFolder root when 'paper_model' is set", paper_args["paper_data"])
    if paper_model is None:
        for arg, value in paper_args.items():
            if value is not None:
                raise invalid(arg, owner, "None when 'paper_model' is None (it would be ignored)", value)


@validate_params({"notebook": NAME, "root": _PATH})
def from_run(notebook: str = MODELS_NOTEBOOK, root=None, device: str | None = None) -> PreparedModels:
    """The networks of the models notebook's last run, with its parameters (weights from the cache).

    Parameters
    ----------
    notebook : str
        The models notebook.
    root : path, optional
        Results root (default :func:`gcc.results.results_root`).
    device : str, optional
        Device of f (default automatic).

    Returns
    -------
    PreparedModels

    Raises
    ------
    FileNotFoundError
        When that notebook has not run.
    """
    params, _ = _run_parameters(notebook, root)
    kwargs = {k: params[k] for k in PREPARE_PARAMETERS if k in params}
    kwargs["names"] = kwargs.pop("models", DEFAULT_MODELS)
    if params.get("threads"):
        _set_threads(int(params["threads"]))
    return prepare_models(device=device, **kwargs)


def _run_parameters(notebook: str, root) -> tuple[dict, "object"]:
    folder = (Path(root) / notebook) if root is not None else results.results_dir(notebook, create=False)
    params = results.read_run_record(folder).get("parameters")
    if not params:
        raise FileNotFoundError(f"{notebook} has not run (no parameters in {Path(folder).name}/run.json): "
                                f"python -m gcc.reproduce --only {notebook}")
    return params, folder


@validate_params({"notebook": NAME, "root": _PATH})
def data_from_run(notebook: str = MODELS_NOTEBOOK, root=None):
    """The data set of the models notebook's last run (for a page that needs no network)."""
    from ..dnn.data import FallbackDataWarning, load_images

    params, _ = _run_parameters(notebook, root)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackDataWarning)  # the page header shows the banner
        return load_images(params.get("dataset", "auto"), folder=params.get("data_folder"))


@validate_params({"notebook": NAME, "root": _PATH})
def header_from_run(notebook: str = MODELS_NOTEBOOK, root=None) -> str:
    """:func:`page_header` from the models notebook's saved ``models`` table and ``data`` file (no model loaded)."""
    _, folder = _run_parameters(notebook, root)
    info = json.loads((folder / "data.json").read_text()) if (folder / "data.json").exists() else {}
    return page_header(pd.read_csv(folder / "models.csv"), info.get("datasets"), info.get("banners", ()))


def _set_threads(threads: int) -> None:
    """``threads`` CPU threads in torch and numpy's BLAS for the process."""
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(int(threads))
    threadpool_limits(limits=int(threads))


def _pct(value) -> str:
    return "n/a" if value is None or value != value else f"{100 * float(value):.1f}%"


@validate_params({"models_table": Frame(("model", "dataset", "n_parameters", "test_accuracy")),
                  "datasets": _DATASETS, "banners": _BANNERS})
def page_header(models_table, datasets: Mapping[str, str] | None = None, banners: Sequence[str] = ()) -> str:
    """The Markdown every DNN page opens with: data, networks (beside the paper's), hardware.

    Parameters
    ----------
    models_table : pandas.DataFrame
        :meth:`PreparedModels.table` (or the saved copy).
    datasets : dict name -> str, optional
        :attr:`PreparedModels.datasets`.
    banners : sequence of str
        :attr:`PreparedModels.banners`, shown first.

    Returns
    -------
    str
    """
    lines = [f"> **Warning.** {b}\n" for b in banners if b]
    data_lines = list((datasets or {}).values()) or sorted(set(models_table["dataset"].astype(str)))
    lines.append(f"* **Data.** {'; '.join(data_lines)}.")
    for _, row in models_table.iterrows():
        paper = PAPER_MODELS.get(family_of(row["model"]))
        versus = (f" (stands in for the paper's {paper['paper_model']} on {paper['paper_dataset']}, "
                  f"{paper['paper_parameters']} parameters)") if paper else ""
        lines.append(f"* **{row['model']}** on {row['dataset']}: {int(row['n_parameters']):,} parameters, "
                     f"test accuracy {_pct(row['test_accuracy'])}{versus}.")
    lines.append(f"* **Hardware.** {summary_line()}.")
    return "\n".join(lines)
