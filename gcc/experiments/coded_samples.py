"""What the workers receive: the coded images of GCC and BACC (the paper's Fig. 7).

A tidy pixel table (the figure is redrawn from it alone), their roughness, and the verdict on the
paper's "BACC's coded images are noisier".
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..codes import LABELS, make_many
from ..summary import summarize
from ..validation import SEED, ArrayLike, Options, check_labels, invalid, validate, validate_params
from ..dnn._checks import COUNT, LAM, TEXT, Frame

from .plotting import figure, finish
from .verdicts import band_verdict

__all__ = ["NO_MODEL", "PIXEL_COLUMNS", "coded_samples", "stack_images", "coded_roughness", "plot_coded_samples",
           "roughness_batches", "noisier_verdict"]

#: ``scheme`` of the rows holding the original inputs x_k (not a code).
INPUT = "input"

#: The ``model`` column of these tables: the encoder involves no network.
NO_MODEL = "none"

#: the columns of a coded-samples table
PIXEL_COLUMNS = ("scheme", "index", "point", "label", "channel", "row", "col", "value")


@validate_params({"n_workers": COUNT, "lam_enc": LAM, "dataset": TEXT})
def coded_samples(x, n_workers: int, lam_enc: float = 0.0, labels=None, dataset: str = ""):
    """The coded images the workers receive (GCC's and BACC's), as a tidy pixel table.

    Parameters
    ----------
    x : array_like, shape (K, C, H, W)
    n_workers : int
    lam_enc : float
        GCC's encoder smoothing.
    labels : array_like of int, shape (K,), optional
        Stored with the ``"input"`` rows.
    dataset : str

    Returns
    -------
    pandas.DataFrame
        One row per pixel: ``model`` (:data:`NO_MODEL`), ``dataset``, ``scheme`` (``"input"`` for the
        originals), ``index`` (k or n), ``point`` (alpha_k or beta_n), ``label, channel, row, col, value``.

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.experiments.coded_samples import coded_samples
    >>> x = np.random.default_rng(0).random((4, 1, 3, 3))
    >>> table = coded_samples(x, 6)
    >>> table.groupby("scheme", sort=False).size().to_dict()
    {'input': 36, 'gcc': 54, 'bacc': 54}
    >>> list(table.columns[:3])
    ['model', 'dataset', 'scheme']
    """
    x = validate(x, ArrayLike(ndim=4, dtype=np.float64, finite=True,
                              description="an array of shape (K, C, H, W) of finite real numbers"), "x", "coded_samples")
    k = x.shape[0]
    if k == 0:
        raise invalid("x", "coded_samples", "an array of shape (K, C, H, W) with K >= 1", x, "it holds no image")
    if labels is not None:
        labels = check_labels(labels, k, "labels", "coded_samples")
    codes = make_many(("gcc", "bacc"), k, n_workers, lam_enc=lam_enc)
    frames = [_pixel_frame(x, INPUT, next(iter(codes.values())).alphas,
                           labels if labels is not None else np.full(k, -1))]
    for name, code in codes.items():
        frames.append(_pixel_frame(code.encode(x), name, code.betas, np.full(n_workers, -1)))
    table = pd.concat(frames, ignore_index=True)
    table.insert(0, "model", NO_MODEL)
    table.insert(1, "dataset", dataset)
    return table


def _pixel_frame(images: np.ndarray, scheme: str, points: np.ndarray, labels) -> Any:
    """One row per pixel of `images` (n, C, H, W)."""
    n, c, h, w = images.shape
    idx, ch, row, col = np.meshgrid(np.arange(n), np.arange(c), np.arange(h), np.arange(w), indexing="ij")
    return pd.DataFrame({
        "scheme": scheme, "index": idx.ravel(), "point": np.asarray(points)[idx.ravel()],
        "label": np.asarray(labels)[idx.ravel()], "channel": ch.ravel(), "row": row.ravel(),
        "col": col.ravel(), "value": images.ravel(),
    })


@validate_params({"table": Frame(PIXEL_COLUMNS)})
def stack_images(table, scheme: str) -> tuple[np.ndarray, np.ndarray]:
    """Rebuild the image stack of one scheme (``"input"`` or a code) from a :func:`coded_samples` table.

    Returns
    -------
    images : numpy.ndarray, shape (n, C, H, W)
    points : numpy.ndarray, shape (n,)
        alpha_k for ``"input"``, beta_n for a code.
    """
    validate(scheme, Options(sorted(table["scheme"].unique())), "scheme", "stack_images")
    sub = table[table["scheme"] == scheme].sort_values(["index", "channel", "row", "col"])
    n, c, h, w = (int(sub[a].max()) + 1 for a in ("index", "channel", "row", "col"))
    points = sub.groupby("index")["point"].first().to_numpy()
    return sub["value"].to_numpy().reshape(n, c, h, w), points


def _lap_energy(img) -> float:
    """Mean squared 5-point discrete Laplacian over the interior pixels (high spatial frequencies)."""
    lap = (-4 * img[..., 1:-1, 1:-1] + img[..., :-2, 1:-1] + img[..., 2:, 1:-1]
           + img[..., 1:-1, :-2] + img[..., 1:-1, 2:])
    return float(np.mean(lap ** 2))


@validate_params({"table": Frame(PIXEL_COLUMNS)})
def coded_roughness(table) -> Any:
    """How rough the coded images of a :func:`coded_samples` table are, per scheme, relative to the inputs.

    ``spatial_hf``: mean squared discrete Laplacian (high spatial frequencies) over the inputs';
    ``range_ratio``: the pixel range over the inputs' (over- or under-shoot between data points).

    Returns
    -------
    pandas.DataFrame
        ``model, dataset`` (the table's), ``scheme`` (``"input"`` first), ``spatial_hf, range_ratio, min,
        max``.
    """
    if INPUT not in set(table["scheme"]):
        raise invalid("table", "coded_roughness", "a coded_samples() table with the 'input' rows", table)
    base, _ = stack_images(table, INPUT)
    base_hf, base_range = _lap_energy(base), float(base.max() - base.min())
    if not (base_hf > 0 and base_range > 0):       # the ratios would be NaN or inf
        raise invalid("table", "coded_roughness", "a coded_samples() table of inputs that are not constant "
                      "(at least 3x3 pixels, not all equal)", table)
    rows = []
    for scheme in table["scheme"].unique():
        imgs, _ = stack_images(table, scheme)
        rows.append({"model": table["model"].iloc[0] if "model" in table else NO_MODEL,
                     "dataset": table["dataset"].iloc[0] if "dataset" in table else "",
                     "scheme": scheme, "spatial_hf": _lap_energy(imgs) / base_hf,
                     "range_ratio": float(imgs.max() - imgs.min()) / base_range,
                     "min": float(imgs.min()), "max": float(imgs.max())})
    return pd.DataFrame(rows)


@validate_params({"table": Frame(PIXEL_COLUMNS), "n_show": COUNT})
def plot_coded_samples(table, n_show: int = 10):
    """Fig. 7-like grid of a :func:`coded_samples` table: `n_show` inputs, then `n_show` images per scheme.

    The workers shown are those nearest evenly spaced points of [-1, 1].

    Returns
    -------
    matplotlib.figure.Figure
    """
    if INPUT not in set(table["scheme"]):
        raise invalid("table", "plot_coded_samples", "a coded_samples() table with the 'input' rows", table)
    rows = [INPUT] + [s for s in table["scheme"].unique() if s != INPUT]
    # One panel per row: the row's images side by side in one strip (readable labels, one axis each).
    fig, axes = figure(len(rows), ncols=1, height=0.95 * len(rows) + 0.5)
    base, _ = stack_images(table, INPUT)
    vmin, vmax = float(base.min()), float(base.max())
    for ax, scheme in zip(axes, rows):
        imgs, points = stack_images(table, scheme)
        picks = np.unique([int(np.argmin(np.abs(points - t))) for t in np.linspace(points.min(), points.max(), n_show)])
        size = imgs.shape[-1]
        gap = max(1, size // 8)
        strip = np.full((imgs.shape[-2], len(picks) * (size + gap) - gap), np.nan)
        for j, k in enumerate(picks):
            strip[:, j * (size + gap):j * (size + gap) + size] = imgs[k, 0]
        ax.imshow(strip, cmap="gray_r", vmin=vmin, vmax=vmax)
        ax.grid(False)
        for side in ("left", "bottom"):
            ax.spines[side].set_visible(False)
        sym = "α" if scheme == INPUT else "β"
        ax.set_xticks([j * (size + gap) + size / 2 - 0.5 for j in range(len(picks))],
                      [f"{points[k]:+.2f}" for k in picks])
        ax.tick_params(axis="x", length=0)
        ax.set_yticks([])
        ax.set_ylabel(LABELS.get(scheme, "inputs"), rotation=0, ha="right", va="center")
        ax.set_title(f"{'inputs x_k at' if scheme == INPUT else 'coded images at'} {sym} =", loc="left", fontsize=9)
    return finish(fig)


@validate_params({"n_workers": COUNT, "n_inputs": COUNT, "n_batches": COUNT, "lam_enc": LAM, "dataset": TEXT,
                  "seed": SEED})
def roughness_batches(x, n_workers: int, n_inputs: int, n_batches: int, seed: int = 0, lam_enc: float = 0.0,
                      dataset: str = ""):
    """``spatial_hf`` of GCC's and BACC's coded images for `n_batches` batches of K distinct images (paired).

    `x` is the image pool, shape (n, C, H, W); the batches are :func:`gcc.dnn.data.image_batches`
    (`seed`).

    Returns
    -------
    pandas.DataFrame
        ``model`` (:data:`NO_MODEL`), ``dataset``, ``batch``, ``gcc``, ``bacc`` (the two ratios) and
        ``diff`` (``bacc - gcc``).
    """
    from ..dnn.data import image_batches

    x = validate(x, ArrayLike(ndim=4, dtype=np.float64, finite=True,
                              description="an array of shape (n, C, H, W) of finite real numbers"), "x",
                 "roughness_batches")
    if n_inputs > len(x):
        raise invalid("n_inputs", "roughness_batches", f"an int <= the pool size ({len(x)})", n_inputs)
    codes = make_many(("gcc", "bacc"), n_inputs, n_workers, lam_enc=lam_enc)
    rows = []
    for b, idx in enumerate(image_batches(len(x), n_inputs, n_batches, seed=seed)):
        xb = x[idx]
        base = _lap_energy(xb)
        if not base > 0:
            raise invalid("x", "roughness_batches", "images that are not constant", x, f"batch {b} is")
        hf = {name: _lap_energy(code.encode(xb)) / base for name, code in codes.items()}
        rows.append({"model": NO_MODEL, "dataset": dataset, "batch": b, "gcc": hf["gcc"], "bacc": hf["bacc"],
                     "diff": hf["bacc"] - hf["gcc"]})
    return pd.DataFrame(rows)


@validate_params({"batches": Frame(("gcc", "bacc", "diff"))})
def noisier_verdict(batches):
    """Paired verdict on "BACC's coded images are noisier than GCC's" over :func:`roughness_batches`.

    The 95% t-interval of the mean ``bacc - gcc`` against 0 (:func:`gcc.experiments.verdicts.band_verdict`):
    ``"BACC noisier (as the paper)"`` above, ``"GCC noisier (against the paper)"`` below, else
    ``"undecided"``.

    Returns
    -------
    pandas.DataFrame
        One row per quantity (``gcc``, ``bacc``, ``diff``): ``quantity``, ``mean``, ``ci_low``,
        ``ci_high``, ``n``, and ``verdict`` on the ``diff`` row (empty on the others).

    Examples
    --------
    >>> import pandas as pd
    >>> from gcc.experiments.coded_samples import noisier_verdict
    >>> b = pd.DataFrame({"gcc": [0.9, 0.92, 0.88], "bacc": [1.0, 1.05, 0.99]})
    >>> b["diff"] = b["bacc"] - b["gcc"]
    >>> noisier_verdict(b)["verdict"].tolist()
    ['', '', 'BACC noisier (as the paper)']
    """
    long = batches[["gcc", "bacc", "diff"]].melt(var_name="quantity", value_name="value")
    table = summarize(long, "value", by=["quantity"]).set_index("quantity").loc[["gcc", "bacc", "diff"]]
    table = table.reset_index()[["quantity", "mean", "ci_low", "ci_high", "n"]]
    where = band_verdict(table["ci_low"].iloc[2], table["ci_high"].iloc[2], 0.0, 0.0)
    words = {"above": "BACC noisier (as the paper)", "below": "GCC noisier (against the paper)"}
    table["verdict"] = ["", "", words.get(where, "undecided" if where != "not measured" else where)]
    return table
