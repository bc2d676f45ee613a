"""The DNN experiments at paper-like scale, on a GPU when one is present (issue 5, item 6).

One prepared script: it trains (or loads from the weight cache) the embedded digits models plus a
larger ViT on the GPU, optionally sets up a timm model with local pretrained weights on an
ImageNet-style folder (the paper's ViT-B/16 setting), and runs

1. the straggler sweep (Figs. 3-4: RelAcc and loss against S, two regimes, 20 repetitions,
   lambdas cross-validated on held-out batches),
2. the Table-1 configurations (loss, both RMSE readings, RelAcc, improvement over BACC),
3. the coding cost (encode + decode next to the forward pass) on the CPU and on the GPU,

writing tidy CSV, figures and a ``hardware.json`` (device name, driver, versions, the exact
command) into ``<results root>/gpu_paper_run/`` (``$GCC_RESULTS_ROOT`` or ``_build/results``;
``--out`` overrides it). The book shows that folder beside the CPU results, labelled with the
hardware.

Commands
--------
Smoke test on any CPU in about a minute (what the test suite runs)::

    python scripts/gpu_paper_run.py --tiny --out /tmp/gpu_tiny

Paper-like run on a GPU machine (about 5-10 minutes on one recent GPU)::

    HF_HUB_OFFLINE=1 python scripts/gpu_paper_run.py

adding, when the ImageNet-1K validation folder and ViT-B/16 weights are on disk::

    --paper-model vit_base_patch16_224.augreg2_in21k_ft_in1k \\
    --paper-weights /data/weights/vit_base_patch16_224.augreg2_in21k_ft_in1k.safetensors \\
    --paper-data /data/imagenet/val --paper-images 2000

Nothing is downloaded (``HF_HUB_OFFLINE=1`` is forced): weights must already be local files.
Exit status is 0 when everything ran; the GCC-vs-BACC outcome is printed and saved, not asserted.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

NOTEBOOK = "gpu_paper_run"

FULL = {
    "models": ["vit", "lenet5", "vit_large"],
    "regimes": {"low": (100, 60), "high": (60, 20)},
    "stragglers": {"low": [0, 5, 10, 15, 20, 25, 30, 35, 40], "high": [0, 5, 10, 15, 20, 25, 30, 35, 40]},
    "configs": [[100, 60, 90], [100, 60, 80], [100, 60, 70], [60, 20, 50], [60, 20, 40], [70, 30, 55]],
    "trials": 20, "tune_trials": 20, "repeats": 50,
    "lam_grid": [0.0, 1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6],
    "recipes": {}, "model_configs": {}, "paper_regimes": {"low": (100, 60), "high": (60, 20)},
}
TINY = {
    "models": ["vit", "lenet5", "vit_large"],
    "regimes": {"low": (12, 8), "high": (12, 4)},
    "stragglers": {"low": [0, 3], "high": [0, 3]},
    "configs": [[12, 8, 9]],
    "trials": 2, "tune_trials": 2, "repeats": 2,
    "lam_grid": [0.0, 1e-9],
    # One epoch and a narrow "large" ViT: the smoke test checks the plumbing, not the accuracy.
    "recipes": {"vit": {"epochs": 1}, "lenet5": {"epochs": 1}, "vit_large": {"epochs": 1, "warmup_epochs": 0}},
    "model_configs": {"vit_large": {"embed_dim": 32, "depth": 1, "num_heads": 2}},
    "paper_regimes": {"low": (6, 4), "high": (8, 2)},
}


def _tiny_image_folder(root: Path, n_classes: int = 3, per_class: int = 8, size: int = 40) -> Path:
    # A generated ImageFolder so that --tiny also exercises the paper path offline.
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    for c in range(n_classes):
        folder = root / f"class_{c}"
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(per_class):
            Image.fromarray(rng.integers(0, 256, size=(size, size, 3), dtype=np.uint8)).save(folder / f"{i}.png")
    return root


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="DNN experiments at paper-like scale (GPU when present)")
    parser.add_argument("--tiny", action="store_true", help="CPU smoke test at a tiny size")
    parser.add_argument("--out", default=None, help="results root (default $GCC_RESULTS_ROOT or _build/results)")
    parser.add_argument("--device", default="auto", help="auto (GPU if present), cpu, cuda, cuda:1 ...")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--trials", type=int, default=None)
    parser.add_argument("--models", nargs="*", default=None, help="embedded models (vit lenet5 vit_large)")
    parser.add_argument("--paper-model", default=None, help="timm model name (weights from a local file)")
    parser.add_argument("--paper-weights", default=None, help="local pretrained weights for timm (file=)")
    parser.add_argument("--paper-checkpoint", default=None, help="local state-dict checkpoint")
    parser.add_argument("--paper-data", default=None, help="ImageFolder root (e.g. ImageNet-1K val)")
    parser.add_argument("--paper-images", type=int, default=2000)
    args = parser.parse_args(argv)

    cfg = dict(TINY if args.tiny else FULL)
    if args.out:
        os.environ["GCC_RESULTS_ROOT"] = str(Path(args.out).resolve())
    if args.trials:
        cfg["trials"] = args.trials
    if args.models is not None:
        cfg["models"] = args.models

    import pandas as pd
    import torch

    from gcc.dnn.inference import SoftmaxFunction, best_device
    from gcc.experiments.coding_cost import coding_cost, cost_summary
    from gcc.experiments.dnn_stragglers import compare_schemes, plot_sweep, prepare_models, straggler_sweep
    from gcc.experiments.dnn_summary import improvement_table, summary_table, table_runs
    from gcc.machine import describe
    from gcc.results import save_figure, save_json, save_table

    device = best_device(args.device)
    if device.type == "cpu":
        torch.set_num_threads(1 if args.tiny else min(4, os.cpu_count() or 1))
    hw = {"command": " ".join(shlex.quote(a) for a in [sys.executable] + sys.argv),
          **describe(device=device), "torch": torch.__version__}
    print(json.dumps(hw, indent=1))
    t_start = time.perf_counter()

    paper_model, paper_data, paper_kwargs = args.paper_model, args.paper_data, {}
    if args.tiny and not paper_model:
        # Exercise the paper path offline: a tiny timm ViT (random weights) on a generated folder.
        out_root = Path(os.environ.get("GCC_RESULTS_ROOT", "_build/results"))
        paper_model = "vit_tiny_patch16_224"
        paper_data = str(_tiny_image_folder(out_root / NOTEBOOK / "tiny_image_folder"))
        paper_kwargs = {"img_size": 32, "num_classes": 3, "depth": 2}
    prepared = prepare_models(cfg["models"], seed=args.seed, device=str(device), train_device=str(device),
                              recipes=cfg["recipes"], configs=cfg["model_configs"], paper_model=paper_model,
                              paper_weights=args.paper_weights, paper_checkpoint=args.paper_checkpoint,
                              paper_data=paper_data, paper_images=args.paper_images, paper_kwargs=paper_kwargs)
    params = {k: v for k, v in cfg.items() if k not in ("recipes",)}
    params.update(tiny=args.tiny, device=str(device), paper_model=paper_model, paper_data=paper_data)
    infos = pd.DataFrame([p["info"] for p in prepared.values()])
    infos["device"] = str(device)
    save_table(infos, NOTEBOOK, "models", params=params, seed=args.seed, hardware=hw)
    print(infos[["model", "n_parameters", "test_accuracy", "train_seconds", "cache_hit"]].to_string(index=False))

    # 1. Figs. 3-4: the sweep.
    frames, tunings = [], []
    for name, p in prepared.items():
        regimes = cfg["paper_regimes"] if name == paper_model else cfg["regimes"]
        stragglers = {r: [s for s in cfg["stragglers"][r] if s < regimes[r][0] - 1] for r in regimes}
        t0 = time.perf_counter()
        res, lam = straggler_sweep(p["f"], name, p["splits"], regimes, stragglers, trials=cfg["trials"],
                                   seed=args.seed, lam_enc_grid=cfg["lam_grid"], lam_dec_grid=cfg["lam_grid"],
                                   tune_trials=cfg["tune_trials"])
        print(f"sweep {name}: {time.perf_counter() - t0:.1f} s")
        frames.append(res)
        tunings.append(lam)
    results = pd.concat(frames, ignore_index=True)
    save_table(results, NOTEBOOK, "results", params=params, seed=args.seed)
    save_table(pd.concat(tunings, ignore_index=True), NOTEBOOK, "lambdas", params=params, seed=args.seed)
    comparison = pd.concat([compare_schemes(results, m) for m in ("loss", "relacc", "rmse_norms")],
                           ignore_index=True)
    save_table(comparison, NOTEBOOK, "comparison", params=params, seed=args.seed)
    for regime in results["regime"].unique():
        fig = plot_sweep(results, regime)
        fig.suptitle(f"{regime} redundancy ({hw.get('gpu_name', 'CPU')})", y=1.02)
        save_figure(fig, NOTEBOOK, f"sweep_{regime}")

    # 2. Table 1.
    frames = []
    for name, p in prepared.items():
        configs = cfg["configs"] if name != paper_model else [
            [n, k, n - s] for r, (n, k) in cfg["paper_regimes"].items() for s in cfg["stragglers"][r][1:2]]
        res, _ = table_runs(p["f"], name, p["splits"], configs, trials=cfg["trials"], seed=args.seed,
                            lam_enc_grid=cfg["lam_grid"], lam_dec_grid=cfg["lam_grid"],
                            tune_trials=cfg["tune_trials"])
        frames.append(res)
    table = pd.concat(frames, ignore_index=True)
    save_table(table, NOTEBOOK, "table_results", params=params, seed=args.seed)
    save_table(summary_table(table), NOTEBOOK, "table_summary", params=params, seed=args.seed)
    improvement = improvement_table(table)
    save_table(improvement, NOTEBOOK, "improvement", params=params, seed=args.seed)

    # 3. Table 2: coding cost on the CPU and on the GPU.
    devices = ["cpu"] + ([str(device)] if device.type != "cpu" else [])
    frames = []
    for name, p in prepared.items():
        n, k = cfg["regimes"]["low"] if name != paper_model else cfg["paper_regimes"]["low"]
        s = n - k - (n - k) // 2 if n > k else 0
        for dev in devices:
            f = SoftmaxFunction(p["f"].model, device=dev, max_batch=256)
            frames.append(coding_cost(f, p["splits"]["x_test"][:k], n, s, repeats=cfg["repeats"],
                                      seed=args.seed, model=name))
        p["f"].model.to(device)
    timings = pd.concat(frames, ignore_index=True)
    save_table(timings, NOTEBOOK, "timings", params=params, seed=args.seed)
    cost = cost_summary(timings)
    save_table(cost, NOTEBOOK, "cost", params=params, seed=args.seed)

    hw["seconds"] = time.perf_counter() - t_start
    save_json(hw, NOTEBOOK, "hardware")
    loss = comparison[(comparison["metric"] == "loss") & (comparison["stragglers"] > 0)]
    print(loss[["model", "regime", "stragglers", "scheme", "baseline", "scheme_mean", "baseline_mean",
                "improvement_pct", "better", "significant"]].to_string(index=False))
    print(improvement.round(2).to_string(index=False))
    print(cost[["model", "device", "scheme", "encode_decode_ms", "forward_ms", "overhead_of_medians"]]
          .round(4).to_string(index=False))
    print(f"done in {hw['seconds']:.0f} s; results in {Path(os.environ.get('GCC_RESULTS_ROOT', '_build/results')) / NOTEBOOK}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
