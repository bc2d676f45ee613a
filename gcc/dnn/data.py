"""Data sets for the DNN experiments: embedded digits (offline) and ImageFolder (paper profile).

The embedded default is scikit-learn's ``load_digits`` (1797 handwritten digits, 8x8 grey
levels 0..16, shipped with scikit-learn, so nothing is downloaded). The images are upscaled to
16x16 so that a patch-4 Vision Transformer sees a 4x4 grid of patches, normalised to zero mean
and unit variance with the *training* split's statistics, and split deterministically into
train / validation / test.

The validation split is never used for training: it supplies the held-out batches on which
the coding parameters (lambda_enc, lambda_dec) are chosen by cross-validation, while the test
split supplies the batches of the reported figures.

For the paper profile, :func:`image_folder` reads an ImageNet-style folder
(``root/<class>/<image>``) with the transform that timm's pretrained configuration prescribes.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..backend import to_numpy
from ..validation import check_choice, check_int, invalid

__all__ = ["DigitsData", "load_digits16", "image_folder", "image_batches", "DIGITS_SPLITS"]

#: Fractions of the 1797 digits in the train / validation / test splits.
DIGITS_SPLITS = (0.6, 0.15, 0.25)


@dataclass(frozen=True)
class DigitsData:
    """Normalised 16x16 digits in three fixed splits.

    Attributes
    ----------
    x_train, x_val, x_test : numpy.ndarray, shape (n, 1, 16, 16), float32
        Images, normalised with the training split's mean and standard deviation.
    y_train, y_val, y_test : numpy.ndarray, shape (n,), int64
        Labels 0..9.
    mean, std : float
        The normalisation constants (of the upscaled training images in [0, 1]).
    size : int
        Side of the square images.
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    mean: float
    std: float
    size: int

    @property
    def n_classes(self) -> int:
        return 10

    def split(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """``(x, y)`` of the split ``'train'``, ``'val'`` or ``'test'``."""
        check_choice(name, "name", "DigitsData.split", ("train", "val", "test"))
        return getattr(self, f"x_{name}"), getattr(self, f"y_{name}")


def _upscale(images: np.ndarray, size: int) -> np.ndarray:
    # Bilinear resampling keeps the strokes smooth; align_corners=False is torch's default
    # and matches PIL's resize, so the images look like ordinary low-resolution digits.
    import torch
    import torch.nn.functional as F

    t = torch.from_numpy(images.astype(np.float32))[:, None]
    if size != t.shape[-1]:
        t = F.interpolate(t, size=(size, size), mode="bilinear", align_corners=False)
    return to_numpy(t)


def load_digits16(size: int = 16, split_seed: int = 0,
                  splits: tuple[float, float, float] = DIGITS_SPLITS) -> DigitsData:
    """scikit-learn's digits upscaled to ``size`` x ``size``, normalised and split.

    Parameters
    ----------
    size : int
        Side of the output images (8 keeps the original resolution).
    split_seed : int
        Seed of the stratified train / validation / test split. The split is fixed by it,
        so every model and every notebook sees the same test images.
    splits : tuple of three floats
        Fractions (train, validation, test), summing to 1.

    Returns
    -------
    DigitsData
        Images of shape (n, 1, size, size), float32, and int64 labels.

    References
    ----------
    .. [1] E. Alpaydin and C. Kaynak, "Optical Recognition of Handwritten Digits", UCI
       Machine Learning Repository, 1998 (the data of ``sklearn.datasets.load_digits``).
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    size = check_int(size, "size", "load_digits16", minimum=8)
    if len(splits) != 3 or min(splits) <= 0 or abs(sum(splits) - 1.0) > 1e-9:
        raise invalid("splits", "load_digits16", "three positive fractions summing to 1", splits)
    digits = load_digits()
    images = digits.images / 16.0  # grey levels 0..16 -> [0, 1]
    labels = digits.target.astype(np.int64)
    idx = np.arange(len(labels))
    train_frac, val_frac, test_frac = splits
    idx_rest, idx_test = train_test_split(idx, test_size=test_frac, stratify=labels, random_state=split_seed)
    idx_train, idx_val = train_test_split(
        idx_rest, test_size=val_frac / (train_frac + val_frac), stratify=labels[idx_rest],
        random_state=split_seed,
    )
    up = _upscale(images, int(size))
    mean = float(up[idx_train].mean())
    std = float(up[idx_train].std())
    norm = ((up - mean) / std).astype(np.float32)
    return DigitsData(
        x_train=norm[idx_train], y_train=labels[idx_train],
        x_val=norm[idx_val], y_val=labels[idx_val],
        x_test=norm[idx_test], y_test=labels[idx_test],
        mean=mean, std=std, size=int(size),
    )


def image_folder(root, model=None, transform=None, max_images: int | None = None, seed: int = 0):
    """An ImageNet-style ``root/<class>/<image>`` folder as ``(x, y)`` arrays.

    Parameters
    ----------
    root : str or pathlib.Path
        Folder in torchvision's ``ImageFolder`` layout (e.g. the ImageNet-1K validation set
        sorted into one sub-folder per class, the class folders sorted as the model's labels).
    model : torch.nn.Module, optional
        A timm model; its ``pretrained_cfg`` gives the evaluation transform (resize, centre crop,
        normalisation). Ignored when ``transform`` is given.
    transform : callable, optional
        A torchvision transform from PIL image to tensor of shape (C, H, W).
    max_images : int, optional
        Keep a random subset of this many images (seeded), for a quicker run.
    seed : int
        Seed of that subset.

    Returns
    -------
    x : torch.Tensor, shape (n, C, H, W), float32
    y : numpy.ndarray, shape (n,), int64
    classes : list of str
        Class-folder names in label order.
    """
    import torch
    from torchvision.datasets import ImageFolder

    root = Path(root)
    if not root.is_dir():
        raise invalid("root", "image_folder", "an existing folder", str(root))
    if transform is None:
        if model is None:
            raise invalid("model", "image_folder", "a timm model when 'transform' is None", model)
        import timm.data

        config = timm.data.resolve_data_config({}, model=model)
        transform = timm.data.create_transform(**config, is_training=False)
    dataset = ImageFolder(str(root), transform=transform)
    indices = np.arange(len(dataset))
    if max_images is not None and max_images < len(indices):
        indices = np.sort(np.random.default_rng(seed).choice(indices, size=max_images, replace=False))
    xs, ys = [], []
    for i in indices:
        img, label = dataset[int(i)]
        xs.append(img)
        ys.append(label)
    return torch.stack(xs).float(), np.asarray(ys, dtype=np.int64), list(dataset.classes)


def image_batches(n_images: int, batch_size: int, n_batches: int, seed: int) -> np.ndarray:
    """Indices of ``n_batches`` batches of ``batch_size`` distinct images each.

    Each batch is one coded-computing round: the K inputs x_1..x_K the master encodes.
    Images are drawn without replacement inside a batch (a batch never holds a duplicate,
    which would make two data points identical) and independently across batches.

    Parameters
    ----------
    n_images : int
        Size of the pool (e.g. the test split).
    batch_size : int
        K, the number of inputs per round.
    n_batches : int
        Number of rounds.
    seed : int
        Seed of ``np.random.default_rng``.

    Returns
    -------
    numpy.ndarray, shape (n_batches, batch_size), int64
    """
    check_int(batch_size, "batch_size", "image_batches", maximum=n_images,
              constraint=f"an int <= n_images={n_images}")
    rng = np.random.default_rng(seed)
    return np.stack([rng.choice(n_images, size=batch_size, replace=False) for _ in range(n_batches)]).astype(np.int64)
