"""Image files on disk: MNIST's IDX format, CIFAR-10's python batches and ImageNet-style folders.

A missing, truncated or wrong file raises an error naming the file and what was expected.

References
----------
.. [1] Y. LeCun, C. Cortes, C. J. C. Burges, "The MNIST database of handwritten digits" (IDX).
.. [2] A. Krizhevsky, "Learning multiple layers of features from tiny images", 2009 (CIFAR-10).
"""
from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import numpy as np

from ..validation import SEED, Interval, NoneOr, invalid, validate_params
from ._checks import MODULE, PATH

__all__ = ["read_idx", "find_idx_files", "read_cifar10", "image_folder", "IDX_SPLITS", "IMAGE_SUFFIXES"]

#: IDX type codes (third byte of the magic number) -> numpy big-endian dtype.
_IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}

#: (split, kind) -> the file stem in MNIST's naming; ``train-images.idx3-ubyte`` (a dot instead
#: of the dash, as some mirrors write it) and a ``.gz`` suffix are accepted too.
IDX_SPLITS = {
    ("train", "images"): "train-images-idx3-ubyte", ("train", "labels"): "train-labels-idx1-ubyte",
    ("test", "images"): "t10k-images-idx3-ubyte", ("test", "labels"): "t10k-labels-idx1-ubyte",
}

#: File suffixes counted as images in an ImageNet-style folder (torchvision's list).
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def _open(path: Path):
    with open(path, "rb") as fh:
        gzipped = fh.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gzipped else open(path, "rb")


@validate_params({"path": PATH, "ndim": NoneOr(Interval(int, 1, 255))})
def read_idx(path, ndim: int | None = None) -> np.ndarray:
    """Read one IDX file (gzip-compressed or not) into an array.

    Parameters
    ----------
    path : str or pathlib.Path
        The file, e.g. ``train-images-idx3-ubyte.gz``.
    ndim : int, optional
        Expected number of dimensions (3 for images, 1 for labels).

    Returns
    -------
    numpy.ndarray
        Shape and dtype as the header says, in native byte order.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.

    Examples
    --------
    >>> import gzip, os, tempfile
    >>> import numpy as np
    >>> from gcc.dnn.formats import read_idx
    >>> path = os.path.join(tempfile.mkdtemp(), "labels-idx1-ubyte.gz")
    >>> with gzip.open(path, "wb") as fh:
    ...     _ = fh.write(bytes([0, 0, 8, 1, 0, 0, 0, 3, 7, 2, 9]))
    >>> read_idx(path, ndim=1)
    array([7, 2, 9], dtype=uint8)
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"IDX file not found: {path} (expected an MNIST-format IDX file"
                                f"{f' with {ndim} dimension(s)' if ndim else ''})")
    try:
        with _open(path) as fh:
            raw = fh.read()
    except (OSError, EOFError) as err:  # a cut-off gzip stream raises EOFError
        raise invalid("path", "read_idx", "a readable IDX file (plain or gzip)", str(path),
                      f"reading it failed: {err}") from None
    expected = "an IDX file whose magic number is 0x0000TTDD (TT a type code, DD the dimensions)"
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_TYPES or raw[3] == 0:
        magic = "0x" + raw[:4].hex() if len(raw) >= 4 else f"only {len(raw)} bytes"
        raise invalid("path", "read_idx", expected, str(path), f"its magic number is {magic}")
    dims = raw[3]
    if ndim is not None and dims != ndim:
        raise invalid("path", "read_idx", f"an IDX file with {ndim} dimension(s)", str(path),
                      f"its header has {dims} (magic 0x{raw[:4].hex()})")
    header = 4 + 4 * dims
    if len(raw) < header:
        raise invalid("path", "read_idx", "a complete IDX file", str(path),
                      f"the header needs {header} bytes, the file has {len(raw)}: truncated")
    shape = tuple(int(v) for v in np.frombuffer(raw, ">i4", count=dims, offset=4))
    dtype = np.dtype(_IDX_TYPES[raw[2]])
    size = int(np.prod(shape)) * dtype.itemsize
    if len(raw) - header != size:
        what = "truncated" if len(raw) - header < size else "longer than its header says"
        raise invalid("path", "read_idx", f"an IDX file of shape {shape} ({header + size} bytes)",
                      str(path), f"it has {len(raw)} bytes: {what}")
    return np.frombuffer(raw, dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))


@validate_params({"folder": PATH})
def find_idx_files(folder) -> dict[tuple[str, str], Path]:
    """The four IDX files (``train``/``t10k`` images and labels, optionally ``.gz``) of a folder.

    Parameters
    ----------
    folder : str or pathlib.Path

    Returns
    -------
    dict (split, kind) -> pathlib.Path
        Keys as :data:`IDX_SPLITS`.

    Raises
    ------
    FileNotFoundError
        If the folder or one of the four files is missing.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"MNIST-format folder not found: {folder} (expected a folder holding "
                                f"{', '.join(IDX_SPLITS.values())}, each optionally .gz)")
    found, missing = {}, []
    for key, stem in IDX_SPLITS.items():
        dotted = stem.replace("-idx", ".idx")
        candidates = [folder / f"{s}{gz}" for s in (stem, dotted) for gz in (".gz", "")]
        hit = next((c for c in candidates if c.is_file()), None)
        if hit is None:
            missing.append(f"{stem}[.gz]")
        else:
            found[key] = hit
    if missing:
        raise FileNotFoundError(f"{folder} is not a complete MNIST-format folder: missing {', '.join(missing)}")
    return found


@validate_params({"folder": PATH})
def read_cifar10(folder) -> dict[str, np.ndarray]:
    """CIFAR-10's python version: 50,000 training and 10,000 test images.

    Parameters
    ----------
    folder : str or pathlib.Path
        The ``cifar-10-batches-py`` folder.

    Returns
    -------
    dict
        ``x_train`` (50000, 3, 32, 32) uint8, ``y_train`` (50000,) int64, ``x_test``, ``y_test``.

    Raises
    ------
    FileNotFoundError
        If the folder or a batch file is missing.
    """
    folder = Path(folder)
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    if not folder.is_dir():
        raise FileNotFoundError(f"CIFAR-10 folder not found: {folder} (expected cifar-10-batches-py with "
                                f"{', '.join(names)})")
    missing = [n for n in names if not (folder / n).is_file()]
    if missing:
        raise FileNotFoundError(f"{folder} is not a CIFAR-10 python folder: missing {', '.join(missing)}")
    parts = {}
    for name in names:
        path = folder / name
        try:
            with open(path, "rb") as fh:
                batch = pickle.load(fh, encoding="bytes")
            data = np.asarray(batch[b"data"], dtype=np.uint8)
            labels = np.asarray(batch[b"labels"], dtype=np.int64)
        except Exception as err:  # unpickling a wrong file can raise almost anything
            raise invalid("folder", "read_cifar10", "a CIFAR-10 python folder whose batches are pickled dicts "
                          "with b'data' and b'labels'", str(folder), f"{path.name}: {err!r}") from None
        if data.ndim != 2 or data.shape[1] != 3072 or len(labels) != len(data):
            raise invalid("folder", "read_cifar10", "CIFAR-10 batches of shape (n, 3072) with n labels",
                          str(folder), f"{path.name} has data {data.shape} and {len(labels)} labels")
        parts[name] = (data.reshape(-1, 3, 32, 32), labels)
    train = [parts[n] for n in names[:-1]]
    return {"x_train": np.concatenate([d for d, _ in train]), "y_train": np.concatenate([y for _, y in train]),
            "x_test": parts["test_batch"][0], "y_test": parts["test_batch"][1]}


@validate_params({"root": PATH, "model": MODULE, "max_images": NoneOr(Interval(int, 1, None)), "seed": SEED})
def image_folder(root, model, max_images: int | None = None, seed: int = 0):
    """An ImageNet-style ``root/<class>/<image>`` folder as ``(x, y, classes)``.

    Parameters
    ----------
    root : str or pathlib.Path
        Folder in torchvision's ``ImageFolder`` layout.
    model : torch.nn.Module
        A timm model whose ``pretrained_cfg`` gives the evaluation transform.
    max_images : int, optional
        Keep a seeded random subset of this many images.
    seed : int
        Seed of that subset.

    Returns
    -------
    x : torch.Tensor, shape (n, C, H, W), float32
    y : numpy.ndarray, shape (n,), int64
    classes : list of str

    Raises
    ------
    FileNotFoundError
        If ``root`` is not a folder or holds no class folder with an image.
    """
    import torch
    from torchvision.datasets import ImageFolder

    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"image folder not found: {root} (expected root/<class>/<image>)")
    classes = [d for d in sorted(root.iterdir()) if d.is_dir()]
    if not any(p.suffix.lower() in IMAGE_SUFFIXES for d in classes for p in d.iterdir()):
        raise FileNotFoundError(f"{root} holds no images: expected class folders root/<class>/ with "
                                f"{'/'.join(IMAGE_SUFFIXES)} files ({len(classes)} sub-folders found)")
    import timm.data

    transform = timm.data.create_transform(**timm.data.resolve_data_config({}, model=model), is_training=False)
    # allow_empty: a class folder without images is skipped rather than an error (checked above
    # that the folder as a whole has some).
    dataset = ImageFolder(str(root), transform=transform, allow_empty=True)
    indices = np.arange(len(dataset))
    if max_images is not None and max_images < len(indices):
        indices = np.sort(np.random.default_rng(seed).choice(indices, size=max_images, replace=False))
    xs, ys = [], []
    for i in indices:
        img, label = dataset[int(i)]
        xs.append(img)
        ys.append(label)
    return torch.stack(xs).float(), np.asarray(ys, dtype=np.int64), list(dataset.classes)
