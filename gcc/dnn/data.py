"""Data sets for the DNN experiments: Fashion-MNIST by default, the digits as the fallback.

:func:`load_images` reads Fashion-MNIST, MNIST-format folders, CIFAR-10 or scikit-learn's digits
(the fallback, shown by :func:`data_banner`) into three fixed splits (test, a seeded validation
split held out of training, train), normalised with the training split's per-channel statistics.
"""
from __future__ import annotations

import hashlib
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..backend import to_numpy
from ..validation import (BOOL, SEED, InstanceOf, Interval, NoneOr, Options, check_int, check_labels, invalid,
                          validate, validate_params)
from ._checks import NAME, PATH
from .formats import find_idx_files, image_folder, read_cifar10, read_idx

__all__ = ["ImageData", "FallbackDataWarning", "load_images", "load_mnist_format", "load_cifar10", "load_digits16",
           "fashion_mnist_folder", "data_banner", "image_batches", "image_folder", "DIGITS_SPLITS",
           "FASHION_MNIST_DIRS", "FASHION_MNIST_CLASSES", "DATASETS", "DISPLAY_NAMES"]

#: Fractions of the 1797 digits in the train / validation / test splits.
DIGITS_SPLITS = (0.6, 0.15, 0.25)

#: Where :func:`fashion_mnist_folder` looks, in order (``$GCC_FASHION_MNIST`` comes first).
FASHION_MNIST_DIRS = ("/usr/share/datasets/fashion-mnist",)

#: Fashion-MNIST's class names, labels 0..9.
FASHION_MNIST_CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker",
                         "Bag", "Ankle boot")

#: Names :func:`load_images` accepts (besides a folder path).
DATASETS = ("auto", "fashion-mnist", "mnist", "digits", "cifar10")

#: How a page names each data set.
DISPLAY_NAMES = {"fashion-mnist": "Fashion-MNIST", "mnist": "MNIST", "digits": "digits", "cifar10": "CIFAR-10"}


class FallbackDataWarning(UserWarning):
    """Fashion-MNIST was not found and the digits stand in for it (:func:`load_images`)."""


@dataclass(frozen=True)
class ImageData:
    """Normalised images in three fixed splits.

    Attributes
    ----------
    name : str
        The ``dataset`` column of every DNN table.
    x_train, x_val, x_test : numpy.ndarray, shape (n, C, H, W), float32
        Images, normalised with the training split's per-channel mean and standard deviation.
    y_train, y_val, y_test : numpy.ndarray, shape (n,), int64
        Labels.
    mean, std : tuple of float
        The per-channel normalisation constants (of images scaled to [0, 1]).
    classes : tuple of str
        Class names in label order.
    source : str
        Where the images came from.
    fallback : bool
        True when these are the digits because Fashion-MNIST was not found.
    """

    name: str
    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    mean: tuple
    std: tuple
    classes: tuple
    source: str
    fallback: bool = False

    def __post_init__(self):
        owner = "ImageData"
        validate(self.name, NAME, "name", owner)
        validate(self.source, InstanceOf(str, "a str"), "source", owner)
        validate(self.fallback, BOOL, "fallback", owner)
        if not isinstance(self.classes, tuple) or not self.classes or not all(isinstance(c, str) for c in self.classes):
            raise invalid("classes", owner, "a non-empty tuple of class names (str)", self.classes)
        top = max(int(np.max(y)) if isinstance(y, np.ndarray) and y.size and y.dtype.kind in "iu" else -1
                  for y in (self.y_train, self.y_val, self.y_test))
        if top >= len(self.classes):
            raise invalid("classes", owner, f"a tuple of at least {top + 1} class names (the labels go up to {top})",
                          self.classes)
        shape = None
        for split in ("train", "val", "test"):
            x = getattr(self, f"x_{split}")
            if not isinstance(x, np.ndarray) or x.ndim != 4 or x.dtype.kind != "f" or len(x) == 0:
                raise invalid(f"x_{split}", owner, "a float array of shape (n, C, H, W) with n >= 1", x,
                              f"its shape is {getattr(x, 'shape', None)}" if isinstance(x, np.ndarray) else None)
            if shape is not None and x.shape[1:] != shape:
                raise invalid(f"x_{split}", owner, f"images of the training split's shape {shape}", x,
                              f"its images are {x.shape[1:]}")
            shape = x.shape[1:]
            check_labels(getattr(self, f"y_{split}"), len(x), f"y_{split}", owner, n_classes=len(self.classes))
        for stat in ("mean", "std"):
            values = getattr(self, stat)
            if not isinstance(values, tuple) or len(values) != shape[0] or not all(
                    isinstance(v, float) and np.isfinite(v) and (stat == "mean" or v > 0) for v in values):
                what = "finite floats" if stat == "mean" else "finite floats > 0 (a constant channel cannot be normalised)"
                raise invalid(stat, owner, f"a tuple of {shape[0]} {what}, one per channel", values)

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def size(self) -> int:
        """Side of the square images."""
        return int(self.x_train.shape[-1])

    @property
    def channels(self) -> int:
        return int(self.x_train.shape[1])

    @property
    def data_id(self) -> str:
        """Identifies the training data in a model's cache key (split sizes plus a content hash)."""
        digest = hashlib.sha256(self.y_train.tobytes() + self.x_train[:64].tobytes()).hexdigest()[:16]
        return (f"{self.name}-{self.channels}x{self.size}-{len(self.y_train)}/{len(self.y_val)}/"
                f"{len(self.y_test)}-{digest}")

    def describe(self) -> str:
        """One line: the data set, its size and splits, and where it came from."""
        n = len(self.y_train) + len(self.y_val) + len(self.y_test)
        colour = "grey" if self.channels == 1 else "colour"
        kind = f"{self.size}x{self.size} {colour} images, {self.n_classes} classes"
        return (f"{DISPLAY_NAMES.get(self.name, self.name)}: {n:,} {kind} ({len(self.y_train):,} train / "
                f"{len(self.y_val):,} validation / {len(self.y_test):,} test), from {_source_text(self.source)}")


def _source_text(source: str) -> str:
    # Pages show no absolute paths: Debian's folder by its package, any other by its name.
    if source in FASHION_MNIST_DIRS:
        return "Debian's package dataset-fashion-mnist"
    return f"the folder {Path(source).name}" if Path(source).is_absolute() else source


def _normalised(name, x_train, y_train, x_val, y_val, x_test, y_test, classes, source, fallback=False) -> ImageData:
    """Scale to [0, 1] by the caller; normalise per channel with the training split's statistics."""
    mean = x_train.mean(axis=(0, 2, 3), dtype=np.float64)
    std = x_train.std(axis=(0, 2, 3), dtype=np.float64)

    def norm(x):
        return ((x - mean[None, :, None, None]) / std[None, :, None, None]).astype(np.float32)

    return ImageData(name=name, x_train=norm(x_train), y_train=y_train.astype(np.int64), x_val=norm(x_val),
                     y_val=y_val.astype(np.int64), x_test=norm(x_test), y_test=y_test.astype(np.int64),
                     mean=tuple(float(m) for m in mean), std=tuple(float(s) for s in std),
                     classes=tuple(classes), source=str(source), fallback=fallback)


def _hold_out(n: int, val_size: int, split_seed: int, owner: str) -> tuple[np.ndarray, np.ndarray]:
    val_size = check_int(val_size, "val_size", owner, minimum=1, maximum=n - 1,
                         constraint=f"an int in [1, {n - 1}] (the training set has {n} images)")
    perm = np.random.default_rng(split_seed).permutation(n)
    return np.sort(perm[val_size:]), np.sort(perm[:val_size])


def fashion_mnist_folder() -> Path | None:
    """Fashion-MNIST's folder: ``$GCC_FASHION_MNIST`` (as given), else the first existing default."""
    env = os.environ.get("GCC_FASHION_MNIST")
    if env:
        return Path(env)
    return next((Path(folder) for folder in FASHION_MNIST_DIRS if Path(folder).is_dir()), None)


def _looked() -> str:
    """Where :func:`fashion_mnist_folder` looked."""
    env = os.environ.get("GCC_FASHION_MNIST")
    return ", ".join(([env] if env else []) + list(FASHION_MNIST_DIRS))


_VAL_SIZE = Interval(int, 1, None)


@validate_params({"folder": PATH, "name": NoneOr(NAME), "val_size": _VAL_SIZE, "split_seed": SEED})
def load_mnist_format(folder, name: str | None = None, val_size: int = 5000, split_seed: int = 0) -> ImageData:
    """An MNIST-format folder (MNIST, Fashion-MNIST, ...) as normalised splits.

    Parameters
    ----------
    folder : str or pathlib.Path
        Holds the four IDX files (:func:`gcc.dnn.formats.find_idx_files`).
    name : str, optional
        The ``dataset`` name; default the folder's name.
    val_size : int
        Training images held out (seeded) as the validation split.
    split_seed : int
        Seed of that hold-out.

    Returns
    -------
    ImageData
        Images (n, 1, 28, 28) float32.

    Raises
    ------
    FileNotFoundError
        For a missing file (named in the message).
    """
    files = find_idx_files(folder)
    arrays = {key: read_idx(path, ndim=3 if key[1] == "images" else 1) for key, path in files.items()}
    for key, arr in arrays.items():
        # IDX type 0x08 (uint8) only: other types (float64 images, signed labels) are not pixels in [0, 255]
        if arr.dtype != np.uint8:
            raise invalid("folder", "load_mnist_format", "IDX files of uint8 images and labels (type code 0x08)",
                          str(folder), f"{files[key].name} holds {arr.dtype} {key[1]}")
    for split in ("train", "test"):
        x, y = arrays[(split, "images")], arrays[(split, "labels")]
        if len(x) != len(y):
            raise invalid("folder", "load_mnist_format", "IDX files whose images and labels agree in number",
                          str(folder), f"{files[(split, 'images')].name} has {len(x)} images, "
                          f"{files[(split, 'labels')].name} {len(y)} labels")
    x_all = arrays[("train", "images")][:, None].astype(np.float32) / 255.0
    y_all = arrays[("train", "labels")]
    train, val = _hold_out(len(y_all), val_size, split_seed, "load_mnist_format")
    name = name or Path(folder).name
    n_classes = int(max(y_all.max(), arrays[("test", "labels")].max())) + 1
    classes = FASHION_MNIST_CLASSES if name == "fashion-mnist" else [str(c) for c in range(n_classes)]
    return _normalised(name, x_all[train], y_all[train], x_all[val], y_all[val],
                       arrays[("test", "images")][:, None].astype(np.float32) / 255.0, arrays[("test", "labels")],
                       classes, Path(folder))


@validate_params({"folder": PATH, "val_size": _VAL_SIZE, "split_seed": SEED})
def load_cifar10(folder, val_size: int = 5000, split_seed: int = 0) -> ImageData:
    """CIFAR-10's python batches as normalised splits, ``val_size`` training images held out."""
    raw = read_cifar10(folder)
    x_all = raw["x_train"].astype(np.float32) / 255.0
    train, val = _hold_out(len(raw["y_train"]), val_size, split_seed, "load_cifar10")
    classes = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
    return _normalised("cifar10", x_all[train], raw["y_train"][train], x_all[val], raw["y_train"][val],
                       raw["x_test"].astype(np.float32) / 255.0, raw["y_test"], classes, Path(folder))


def _upscale(images: np.ndarray, size: int) -> np.ndarray:
    # Bilinear resampling keeps the strokes smooth; align_corners=False is torch's default
    # and matches PIL's resize, so the images look like ordinary low-resolution digits.
    import torch
    import torch.nn.functional as F

    t = torch.from_numpy(images.astype(np.float32))[:, None]
    if size != t.shape[-1]:
        t = F.interpolate(t, size=(size, size), mode="bilinear", align_corners=False)
    return to_numpy(t)


@validate_params({"size": Interval(int, 8, 256), "split_seed": SEED, "fallback": BOOL})
def load_digits16(size: int = 16, split_seed: int = 0, fallback: bool = False) -> ImageData:
    """scikit-learn's digits upscaled to ``size`` x ``size``, normalised and split.

    Parameters
    ----------
    size : int
        Side of the output images, 8 to 256 (28 matches Fashion-MNIST).
    split_seed : int
        Seed of the stratified train / validation / test split (:data:`DIGITS_SPLITS`).
    fallback : bool
        Mark the data as the fallback for a missing Fashion-MNIST (:func:`data_banner`).

    Returns
    -------
    ImageData
        ``name="digits"``, images (n, 1, size, size) float32.

    References
    ----------
    .. [1] E. Alpaydin, C. Kaynak, "Optical Recognition of Handwritten Digits", UCI repository, 1998.
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    images = digits.images / 16.0  # grey levels 0..16 -> [0, 1]
    labels = digits.target.astype(np.int64)
    idx = np.arange(len(labels))
    train_frac, val_frac, test_frac = DIGITS_SPLITS
    idx_rest, idx_test = train_test_split(idx, test_size=test_frac, stratify=labels, random_state=split_seed)
    idx_train, idx_val = train_test_split(
        idx_rest, test_size=val_frac / (train_frac + val_frac), stratify=labels[idx_rest],
        random_state=split_seed,
    )
    up = _upscale(images, int(size))  # (n, 1, size, size)
    return _normalised("digits", up[idx_train], labels[idx_train], up[idx_val], labels[idx_val], up[idx_test],
                       labels[idx_test], [str(c) for c in range(10)], "scikit-learn's load_digits (8x8, upscaled)",
                       fallback=fallback)


@validate_params({"data": InstanceOf(ImageData, "a gcc.dnn.data.ImageData")})
def data_banner(data: ImageData) -> str:
    """The warning every DNN page shows when it ran on the fallback digits ('' otherwise).

    Examples
    --------
    >>> from gcc.dnn.data import data_banner, load_digits16
    >>> data_banner(load_digits16())
    ''
    >>> data_banner(load_digits16(size=28, fallback=True)).startswith("Fallback data")
    True
    """
    if not data.fallback:
        return ""
    return (f"Fallback data: Fashion-MNIST was not found (looked in {_looked()}), so this page ran on "
            f"scikit-learn's 1,797 handwritten 8x8 digits upscaled to {data.size}x{data.size}, not on the "
            "intended 70,000 Fashion-MNIST images; its accuracies and losses are not those the text describes. "
            "Install the data with `make fashion-mnist` (Debian: `apt-get install dataset-fashion-mnist`) "
            "or set GCC_FASHION_MNIST to an MNIST-format folder, then rerun.")


@validate_params({"dataset": PATH, "folder": NoneOr(PATH), "val_size": _VAL_SIZE, "split_seed": SEED})
def load_images(dataset: str = "auto", folder=None, val_size: int = 5000, split_seed: int = 0) -> ImageData:
    """The images of the DNN experiments.

    Parameters
    ----------
    dataset : {"auto", "fashion-mnist", "mnist", "digits", "cifar10"} or a folder path
        ``"auto"``: Fashion-MNIST when present, else the digits at 28x28 with a warning.
    folder : str or pathlib.Path, optional
        The folder of ``"mnist"`` and ``"cifar10"`` (or of ``"fashion-mnist"``).
    val_size : int
        Training images held out as the validation split (MNIST format and CIFAR-10).
    split_seed : int
        Seed of the splits.

    Returns
    -------
    ImageData

    Raises
    ------
    FileNotFoundError
        If a named data set or folder is missing (nothing falls back then).
    """
    if dataset not in DATASETS and (folder is None and Path(dataset).is_dir()):
        dataset, folder = "folder", dataset
    elif dataset not in DATASETS and folder is not None:
        raise invalid("dataset", "load_images", f"one of {', '.join(map(repr, DATASETS))} when 'folder' is given",
                      dataset)
    if dataset == "folder":
        if (Path(folder) / "data_batch_1").exists():
            return load_cifar10(folder, val_size=val_size, split_seed=split_seed)
        return load_mnist_format(folder, val_size=val_size, split_seed=split_seed)
    validate(dataset, Options(DATASETS + ("an existing folder",)), "dataset", "load_images")
    if dataset == "digits":
        if folder is not None:
            raise invalid("folder", "load_images", "None when dataset='digits' (scikit-learn holds them)", folder)
        return load_digits16(size=28, split_seed=split_seed)
    if dataset in ("mnist", "cifar10"):
        if folder is None:
            raise invalid("folder", "load_images", f"the {DISPLAY_NAMES[dataset]} folder when dataset={dataset!r}", folder)
        if dataset == "cifar10":
            return load_cifar10(folder, val_size=val_size, split_seed=split_seed)
        return load_mnist_format(folder, name="mnist", val_size=val_size, split_seed=split_seed)
    found = Path(folder) if folder is not None else fashion_mnist_folder()
    if found is None and dataset == "auto":
        data = load_digits16(size=28, split_seed=split_seed, fallback=True)
        warnings.warn(data_banner(data), FallbackDataWarning, stacklevel=2)
        return data
    if found is None:
        raise FileNotFoundError(f"Fashion-MNIST not found: looked in {_looked()} (install Debian's "
                                "dataset-fashion-mnist with `make fashion-mnist`, or set GCC_FASHION_MNIST)")
    return load_mnist_format(found, name="fashion-mnist", val_size=val_size, split_seed=split_seed)


@validate_params({"n_images": Interval(int, 1, None),
                  "batch_size": Interval(int, 1, None, description="an int in [1, n_images]"),
                  "n_batches": Interval(int, 1, 10**6), "seed": SEED})
def image_batches(n_images: int, batch_size: int, n_batches: int, seed: int) -> np.ndarray:
    """Indices of ``n_batches`` batches of ``batch_size`` distinct images each (one coded round each).

    Parameters
    ----------
    n_images : int
        Size of the pool (e.g. the test split).
    batch_size : int
        K, the inputs per round, at most ``n_images``.
    n_batches : int
        Number of rounds, at most 10**6.
    seed : int
        Seed of ``np.random.default_rng``.

    Returns
    -------
    numpy.ndarray, shape (n_batches, batch_size), int64

    Examples
    --------
    >>> from gcc.dnn.data import image_batches
    >>> image_batches(10, 3, 2, seed=0).shape
    (2, 3)
    >>> image_batches(10, 11, 2, seed=0)
    Traceback (most recent call last):
    ...
    gcc.validation.InvalidParameterError: The 'batch_size' parameter of image_batches must be an int in [1, n_images] with n_images = 10. Got 11 instead.
    """
    check_int(batch_size, "batch_size", "image_batches", minimum=1, maximum=n_images,
              constraint=f"an int in [1, n_images] with n_images = {n_images}")
    rng = np.random.default_rng(seed)
    return np.stack([rng.choice(n_images, size=batch_size, replace=False) for _ in range(n_batches)]).astype(np.int64)
