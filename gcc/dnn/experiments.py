"""Runners for the DNN figures and tables (the paper's Figs. 3, 4, 7 and Tables 1, 2).

Every runner returns a tidy :class:`pandas.DataFrame` (one row per measurement) that a notebook
saves with :func:`gcc.results.save_table` and plots from. The simulations themselves are done by
:func:`gcc.harness.simulate` (identical inputs and straggler sets for every scheme in a trial);
(lambda_enc, lambda_dec) are chosen by :func:`gcc.tuning.select_lambdas` on held-out batches.

Runners
-------
schemes_for
    The compared codes for one (N, K): GCC (SplineCode), BACC (BerrutCode), B-spline.
tune_regime
    Cross-validated (lambda_enc, lambda_dec) for GCC on validation batches.
straggler_sweep
    RelAcc and loss against the number of stragglers S (Figs. 3 and 4).
summary_table
    Mean loss, both RMSE readings and RelAcc per (model, N, K, |F|, scheme), and GCC's
    improvement over BACC in percent (Table 1).
coded_samples
    The coded images x̃_n the workers receive (Fig. 7) and their roughness.
coding_cost
    Encode / decode time per batch next to the workers' forward time (App. C.2, Table 2).

References
----------
.. [1] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, "Coded Computing for Resilient Distributed
   Computing: A Learning-Theoretic Framework", NeurIPS 2024, arXiv:2406.00300, Sec. 5 and
   App. C-E.
.. [2] T. Jahani-Nezhad, M. A. Maddah-Ali, "Berrut Approximated Coded Computing: Straggler
   Resistance Beyond Polynomial Computing", IEEE TPAMI 45(1), 2022.
"""
from __future__ import annotations

import os
import time
from typing import Any, Callable, Mapping, Sequence

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

__all__ = ["PAPER_IMPROVEMENT", "SCHEME_LABELS", "schemes_for", "coded_samples", "coded_roughness",
           "coding_cost", "stack_images"]

#: The paper's average improvement of LeTCC over BACC (NeurIPS 2024, Sec. 5), in percent.
PAPER_IMPROVEMENT = {
    "lenet5": {"paper_model": "LeNet5 / MNIST", "rmse": 15.0, "relacc": 2.0},
    "repvgg": {"paper_model": "RepVGG / CIFAR-10", "rmse": 17.0, "relacc": 5.0},
    "vit": {"paper_model": "ViT-B/16 / ImageNet-1K", "rmse": 9.0, "relacc": 4.0},
}

#: Display names of the schemes (result tables use the short keys).
SCHEME_LABELS = {"gcc": "GCC (LeTCC)", "bacc": "BACC (Berrut)", "bspline": "B-spline"}


def schemes_for(n_inputs: int, n_workers: int, lam_enc: float = 0.0, lam_dec: float = 0.0,
                include: Sequence[str] = ("gcc", "bacc", "bspline")) -> dict:
    """The compared codes for one (N, K), with the paper's Chebyshev points.

    Parameters
    ----------
    n_inputs, n_workers : int
        K and N.
    lam_enc, lam_dec : float
        GCC's smoothing parameters (eq. (4) convention).
    include : sequence of {"gcc", "bacc", "bspline", "lcc"}
        Which schemes, in this order.

    Returns
    -------
    dict
        scheme key -> :class:`gcc.Code`.
    """
    import gcc

    makers = {
        "gcc": lambda: gcc.SplineCode(n_inputs, n_workers, lam_enc=lam_enc, lam_dec=lam_dec),
        "bacc": lambda: gcc.BerrutCode(n_inputs, n_workers),
        "bspline": lambda: gcc.BSplineCode(n_inputs, n_workers),
        "lcc": lambda: gcc.LagrangeCode(n_inputs, n_workers),
    }
    unknown = [s for s in include if s not in makers]
    if unknown:
        raise ValueError(
            f"The 'include' parameter of schemes_for must list schemes from {sorted(makers)}. Got {unknown[0]!r} instead."
        )
    return {s: makers[s]() for s in include}


# ---------------------------------------------------------------------------------- Fig. 7
def coded_samples(x, n_workers: int, lam_enc: float = 0.0, schemes: Sequence[str] = ("gcc", "bacc"),
                  labels=None):
    """The coded images the workers receive, as a tidy pixel table.

    Parameters
    ----------
    x : array_like, shape (K, C, H, W)
        The K input images of one round.
    n_workers : int
        N.
    lam_enc : float
        GCC's encoder smoothing parameter (BACC has none).
    schemes : sequence of str
        Schemes to encode with (see :func:`schemes_for`).
    labels : array_like of int, shape (K,), optional
        Labels of the inputs, stored with the ``"input"`` rows.

    Returns
    -------
    pandas.DataFrame
        Columns ``scheme`` (``"input"`` for the originals), ``index`` (k or n), ``point``
        (alpha_k or beta_n), ``label``, ``channel``, ``row``, ``col``, ``value``: one row per pixel,
        so the figure can be redrawn from the saved table alone.
    """
    import pandas as pd

    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 4:
        raise ValueError(f"The 'x' parameter of coded_samples must have shape (K, C, H, W). Got shape {x.shape} instead.")
    k = x.shape[0]
    codes = schemes_for(k, n_workers, lam_enc=lam_enc, include=schemes)
    frames = [_pixel_frame(x, "input", next(iter(codes.values())).alphas,
                           labels if labels is not None else np.full(k, -1))]
    for name, code in codes.items():
        frames.append(_pixel_frame(code.encode(x), name, code.betas, np.full(n_workers, -1)))
    return pd.concat(frames, ignore_index=True)


def _pixel_frame(images: np.ndarray, scheme: str, points: np.ndarray, labels) -> "Any":
    import pandas as pd

    n, c, h, w = images.shape
    idx, ch, row, col = np.meshgrid(np.arange(n), np.arange(c), np.arange(h), np.arange(w), indexing="ij")
    return pd.DataFrame({
        "scheme": scheme, "index": idx.ravel(), "point": np.asarray(points)[idx.ravel()],
        "label": np.asarray(labels)[idx.ravel()], "channel": ch.ravel(), "row": row.ravel(),
        "col": col.ravel(), "value": images.ravel(),
    })


def stack_images(table, scheme: str) -> tuple[np.ndarray, np.ndarray]:
    """Rebuild the image stack of one scheme from a :func:`coded_samples` table.

    Returns
    -------
    images : numpy.ndarray, shape (n, C, H, W)
    points : numpy.ndarray, shape (n,)
        alpha_k for ``"input"``, beta_n for a code.
    """
    sub = table[table["scheme"] == scheme].sort_values(["index", "channel", "row", "col"])
    if sub.empty:
        raise ValueError(f"The 'scheme' parameter of stack_images must be one of {sorted(table['scheme'].unique())}. Got {scheme!r} instead.")
    n, c, h, w = (int(sub[a].max()) + 1 for a in ("index", "channel", "row", "col"))
    points = sub.groupby("index")["point"].first().to_numpy()
    return sub["value"].to_numpy().reshape(n, c, h, w), points


def coded_roughness(table) -> "Any":
    """How rough the coded images are, per scheme (quantifies Fig. 7's visual impression).

    Two numbers per scheme, both relative to the inputs so that they are scale-free:

    ``spatial_hf``
        Mean squared discrete Laplacian of the images (high spatial frequencies: the
        "high-frequency noise" the paper sees in BACC's coded images) divided by that of the
        inputs.
    ``range_ratio``
        (max - min) of the coded pixel values over that of the inputs: values far outside the
        inputs' range mean the encoder over- or under-shoots between data points.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`coded_samples`.

    Returns
    -------
    pandas.DataFrame
        Columns ``scheme``, ``spatial_hf``, ``range_ratio``, ``min``, ``max``.
    """
    import pandas as pd

    def lap_energy(img):
        lap = (-4 * img[..., 1:-1, 1:-1] + img[..., :-2, 1:-1] + img[..., 2:, 1:-1]
               + img[..., 1:-1, :-2] + img[..., 1:-1, 2:])
        return float(np.mean(lap ** 2))

    base, _ = stack_images(table, "input")
    base_hf, base_range = lap_energy(base), float(base.max() - base.min())
    rows = []
    for scheme in table["scheme"].unique():
        imgs, _ = stack_images(table, scheme)
        rows.append({"scheme": scheme, "spatial_hf": lap_energy(imgs) / base_hf,
                     "range_ratio": float(imgs.max() - imgs.min()) / base_range,
                     "min": float(imgs.min()), "max": float(imgs.max())})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------- Table 2
def _sync(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def coding_cost(f, x, n_workers: int, stragglers: int, schemes: Sequence[str] = ("gcc", "bacc"),
                lam_enc: float = 1e-4, lam_dec: float = 1e-4, repeats: int = 20, warmup: int = 3,
                seed: int = 0, model: str = "vit") -> "Any":
    """Time encoding and decoding per batch next to the workers' forward passes.

    One batch = one round: encode the K inputs for N workers, run f on the N coded inputs (the
    workers' compute, simulated as one batched forward pass), decode from N - S survivors.
    Each repeat draws a fresh straggler set, so the decoder is *built* for it (its spline or
    Berrut weights computed) as well as applied: the cost a master pays for a new set F.

    Parameters
    ----------
    f : gcc.dnn.inference.SoftmaxFunction
        The workers' function; its ``device`` is where everything runs (the inputs are moved
        there, as a master on that device would hold them).
    x : array_like, shape (K, C, H, W)
        One batch of inputs.
    n_workers, stragglers : int
        N and S.
    schemes : sequence of str
        Schemes to time.
    lam_enc, lam_dec : float
        GCC's smoothing parameters (the cost does not depend on their values, but 0 and > 0
        take the same code path, so any positive value is representative).
    repeats, warmup : int
        Timed and untimed rounds per scheme.
    seed : int
        Seed of the straggler sets.
    model : str
        Model name stored in the table.

    Returns
    -------
    pandas.DataFrame
        One row per (scheme, repeat): ``model``, ``device``, ``scheme``, ``n_workers``,
        ``n_inputs``, ``stragglers``, ``repeat``, ``encode_s``, ``decode_s`` (build + apply),
        ``decode_apply_s`` (apply only, decoder cached), ``forward_s`` (f on the N coded
        inputs), ``overhead`` = (encode_s + decode_s) / forward_s.

    Notes
    -----
    The encoder matrix depends only on (N, K, lambda_enc) and is built once, before timing (a
    deployed master builds it once). On a GPU every timed interval ends with
    ``torch.cuda.synchronize``.
    """
    import pandas as pd
    import torch

    device = f.device
    xt = torch.as_tensor(np.asarray(x), dtype=torch.float32).to(device)
    k = xt.shape[0]
    rng = np.random.default_rng(seed)
    rows = []
    for scheme, code in schemes_for(k, n_workers, lam_enc, lam_dec, include=schemes).items():
        code.encode(xt)  # build the encoder once, as a deployed master would
        for r in range(warmup + repeats):
            received = np.sort(rng.choice(n_workers, n_workers - stragglers, replace=False))
            _sync(device)
            t0 = time.perf_counter()
            coded = code.encode(xt, check_finite=False)
            _sync(device)
            t1 = time.perf_counter()
            y = f.forward_tensor(coded)
            _sync(device)
            t2 = time.perf_counter()
            code._decoders.pop(tuple(received.tolist()), None)  # a new F: the decoder must be built
            est = code.decode(y[torch.as_tensor(received, device=device)], received, check_finite=False)
            _sync(device)
            t3 = time.perf_counter()
            code.decode(y[torch.as_tensor(received, device=device)], received, check_finite=False)
            _sync(device)
            t4 = time.perf_counter()
            del est
            if r >= warmup:
                rows.append({"model": model, "device": str(device.type), "scheme": scheme,
                             "n_workers": n_workers, "n_inputs": k, "stragglers": stragglers,
                             "repeat": r - warmup, "encode_s": t1 - t0, "decode_s": t3 - t2,
                             "decode_apply_s": t4 - t3, "forward_s": t2 - t1})
    out = pd.DataFrame(rows)
    out["overhead"] = (out["encode_s"] + out["decode_s"]) / out["forward_s"]
    return out
