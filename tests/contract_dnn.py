"""The DNN entry points of the contract test (tests/test_contract_properties.py): gcc.dnn and the DNN experiments.

:func:`entries` builds one :class:`Entry` per public function or class of :mod:`gcc.dnn` (formats,
data, models, training, inference) and of the DNN experiments (dnn_models, dnn_stragglers,
dnn_summary, dnn_lambda, dnn_probabilistic, dnn_claims, coded_samples, coding_cost), each with a
valid call on tiny inputs and malformed values per argument. The runners get a numpy "network"
(a fixed linear map and a softmax, the labels its own argmax, so every accuracy is defined) and
4x4 images; the torch entry points an untrained LeNet-5 on 16x16 images. Tiny data files (IDX,
CIFAR-10 batches, an image folder) are written to a temporary folder. Everything malformed must
fail in the validation, before any training, tuning or simulation.

Kept apart from the shared module so that the DNN cases can change without touching the others.
"""
from __future__ import annotations

import gzip
import os
import pickle
import tempfile
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _toy_files(root: Path) -> dict:
    """An MNIST-format folder (20 train / 10 test 8x8 images), CIFAR-10 batches (4 images each), an image folder."""
    from PIL import Image

    rng = np.random.default_rng(0)
    mnist = root / "mnist"
    mnist.mkdir()
    arrays = {"train-images-idx3-ubyte": rng.integers(0, 256, (20, 8, 8)), "train-labels-idx1-ubyte": np.arange(20) % 3,
              "t10k-images-idx3-ubyte": rng.integers(0, 256, (10, 8, 8)), "t10k-labels-idx1-ubyte": np.arange(10) % 3}
    for stem, arr in arrays.items():
        header = bytes([0, 0, 0x08, arr.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in arr.shape)
        with gzip.open(mnist / f"{stem}.gz", "wb") as fh:
            fh.write(header + arr.astype(np.uint8).tobytes())
    cifar = root / "cifar"
    cifar.mkdir()
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        batch = {b"data": rng.integers(0, 256, (4, 3072)).astype(np.uint8), b"labels": [0, 1, 2, 3]}
        (cifar / name).write_bytes(pickle.dumps(batch))
    images = root / "images"
    for c in range(2):
        (images / f"c{c}").mkdir(parents=True)
        for i in range(2):
            Image.fromarray(rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)).save(images / f"c{c}" / f"{i}.png")
    (root / "junk.pt").write_bytes(b"junk")
    return {"mnist": mnist, "labels": mnist / "t10k-labels-idx1-ubyte.gz", "cifar": cifar, "images": images,
            "junk": root / "junk.pt"}


def _in_cache(func, folder: Path):
    """Call ``func`` with the weights cache in ``folder``: a case that trained by mistake never writes the book's."""
    from unittest import mock

    def call(**kwargs):
        with mock.patch.dict(os.environ, GCC_MODEL_CACHE=str(folder)):
            return func(**kwargs)
    call.__name__ = func.__name__
    return call


def entries(ns: dict) -> list:
    """The DNN entries; ``ns`` is the contract module's namespace (Entry and the strategies)."""
    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd
    import torch
    import contract_table as st

    from gcc.dnn import data, formats, inference, models, training
    from gcc.experiments import coded_samples as cs
    from gcc.experiments import coding_cost as cc
    from gcc.experiments import dnn_claims
    from gcc.experiments import dnn_lambda as dl
    from gcc.experiments import dnn_models as dm
    from gcc.experiments import dnn_probabilistic as dp
    from gcc.experiments import dnn_stragglers as ds
    from gcc.experiments import dnn_summary as dsum

    Entry, ints, reals, choices, FLAGS, FUNCS, seeds, frames = (
        ns[k] for k in ("Entry", "ints", "reals", "choices", "FLAGS", "FUNCS", "seeds", "frames"))
    one = st.sampled_from

    def bad(*values):
        return st.sampled_from(list(values))

    def tables(*extra):
        return st.one_of(frames(), st.sampled_from(list(extra))) if extra else frames()

    root = Path(tempfile.mkdtemp(prefix="gcc-contract-dnn-"))
    files = _toy_files(root)
    PATHS = bad(3, None, "", b"x", object(), ["a"])
    MODULES = bad(3, None, "x", np.sin, {})
    DEVICES = bad("gpu", 3, "cuda:99", "", b"cpu")
    TEXTS = bad(3, None, b"x")
    GRIDS = bad(3, "x", [], [-1.0], [0.0, 0.0], [np.nan], [1e-9, 1j], {"a": 1})
    SCHEMES = bad(3, "gcc", [], ["nope"], ["gcc", "GCC"], [3])

    # ---------------------------------------------------------------- fixtures
    torch.manual_seed(0)
    lenet = models.LeNet5(in_chans=1, num_classes=3, img_size=16)
    rng = np.random.default_rng(0)
    x16 = rng.normal(size=(12, 1, 16, 16)).astype(np.float32)
    y16 = np.arange(12) % 3
    sf = inference.SoftmaxFunction(lenet, device="cpu", input_shape=(1, 16, 16), max_batch=8)
    weights = np.random.default_rng(1).normal(size=(16, 3))

    def toy_f(x):
        z = np.asarray(x).reshape(len(x), -1) @ weights
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    xt = np.random.default_rng(2).normal(size=(30, 1, 4, 4))
    yt = toy_f(xt).argmax(axis=1)
    splits = {"x_val": xt[:15], "y_val": yt[:15], "x_test": xt[15:], "y_test": yt[15:]}
    prep = {"toy": {"f": toy_f, "splits": splits, "info": {"dataset": "toy"}}}
    prep_torch = {"lenet": {"f": sf, "splits": {"x_val": x16[:4], "y_val": y16[:4], "x_test": x16[4:8],
                                                 "y_test": y16[4:8]}, "info": {"dataset": "toy"}}}
    digits = data.load_digits16(size=16)
    grid = [0.0, 1e-9]
    sweep = ds.run_sweeps(prep, {"r": (8, 3)}, {"r": [1, 2]}, trials=2, seed=0, lam_grid=grid, tune_trials=2,
                          schemes=("gcc", "bacc"))
    results = sweep[0]
    study = dl.run_study(prep, sweep[1], 2, 0, {"lenet5": (8, 3, 2)}, factors=(0.1, 1.0, 10.0), recovery_offsets=(3,),
                         lam_grid=grid, tune_trials=2)
    sens_summary = dl.sensitivity_summary(study[0])
    x10 = dl.x10_verdicts(sens_summary)
    movement = dl.lambda_movement(sweep[1], grid=grid)
    recovery = study[1]
    bern = dp.run_sweeps(prep, ["toy"], 3, [6, 8, 12], [0.0], trials=2, seed=0, lam_grid=grid, tune_trials=2)
    bern_summary = dp.sweep_summary(bern)
    slopes = dp.sweep_slopes(bern_summary)
    verdicts = dp.convergence_verdicts(slopes)
    table1 = dsum.run_tables(prep, [(8, 3, 6)], trials=2, seed=0, lam_grid=grid, tune_trials=2)[0]
    summary = dsum.summary_table(results, by=("model", "scheme", "stragglers"))
    coded = cs.coded_samples(np.random.default_rng(3).random((4, 1, 3, 3)), 6)
    timings = cc.coding_cost(sf, x16[:3], 6, 1, repeats=2, warmup=0)
    models_table = pd.DataFrame({"model": ["lenet5"], "dataset": ["toy"], "n_parameters": [10], "test_accuracy": [0.5]})
    checkpoint = root / "lenet.pt"
    torch.save(models.LeNet5(num_classes=3, img_size=16).state_dict(), checkpoint)
    cfg16 = {"arch": "lenet5", "img_size": 16, "in_chans": 1, "num_classes": 3}
    tiny = {"epochs": 1, "train_images": 12, "warmup_epochs": 0, "batch_size": 4}
    image_data = {f: getattr(digits, f) for f in ("name", "x_train", "y_train", "x_val", "y_val", "x_test", "y_test",
                                                  "mean", "std", "classes", "source", "fallback")}
    REGIMES = bad(3, {}, {"r": (8,)}, {"r": (3, 8)}, {"r": (8, 3.0)}, {"r": (40, 20)}, {"r": [8, 0]})
    STRAGGLERS = bad(3, {}, {"q": [1]}, {"r": [1.5]}, {"r": [8]}, {"r": []}, {"r": 1})
    SPLITS = bad(3, None, {"x_test": xt}, {**splits, "y_test": yt[15:] + 0.5}, {**splits, "x_val": xt[:0]})
    PREPARED = bad(3, {}, {"toy": 3}, {"toy": {"f": 3, "splits": splits, "info": {}}},
                   {"toy": {"f": toy_f, "splits": {"x_test": xt}, "info": {}}})
    INT_LISTS = bad(3, "12", [], [1.5], [-1], [99], None)

    out = [
        # ------------------------------------------------------------ gcc.dnn.formats
        Entry("dnn.read_idx", formats.read_idx, dict(path=files["labels"], ndim=1),
              dict(path=PATHS, ndim=ints(1, 255, none_ok=True))),
        Entry("dnn.find_idx_files", formats.find_idx_files, dict(folder=files["mnist"]), dict(folder=PATHS)),
        Entry("dnn.read_cifar10", formats.read_cifar10, dict(folder=files["cifar"]), dict(folder=PATHS)),
        Entry("dnn.image_folder", formats.image_folder,
              dict(root=files["images"], model=lenet, max_images=3, seed=0),
              dict(root=PATHS, model=bad(3, "x", np.sin, None), max_images=ints(1, none_ok=True), seed=seeds())),
        # ------------------------------------------------------------ gcc.dnn.data
        Entry("dnn.load_images", data.load_images, dict(dataset="digits", folder=None, val_size=5000, split_seed=0),
              dict(dataset=bad(3, None, b"x", "", "no-such-data-set", object()), folder=bad(3, b"x", "", "/tmp"),
                   val_size=ints(1), split_seed=seeds())),
        Entry("dnn.load_mnist_format", data.load_mnist_format,
              dict(folder=files["mnist"], name=None, val_size=5, split_seed=0),
              dict(folder=PATHS, name=bad(3, "", b"x"), val_size=ints(1, 19), split_seed=seeds())),
        Entry("dnn.load_cifar10", data.load_cifar10, dict(folder=files["cifar"], val_size=2, split_seed=0),
              dict(folder=PATHS, val_size=ints(1, 19), split_seed=seeds())),
        Entry("dnn.load_digits16", data.load_digits16,
              dict(size=8, split_seed=0, fallback=False), dict(size=ints(8), split_seed=seeds(), fallback=FLAGS)),
        Entry("dnn.data_banner", data.data_banner, dict(data=digits), dict(data=bad(3, None, "digits", {}))),
        Entry("dnn.image_batches", data.image_batches, dict(n_images=20, batch_size=4, n_batches=2, seed=0),
              dict(n_images=ints(4), batch_size=ints(1, 20), n_batches=ints(1), seed=seeds())),
        Entry("dnn.ImageData", data.ImageData, image_data,
              dict(name=bad("", 3, None), x_train=bad(digits.x_train[0], digits.x_train.astype(int), "x", None),
                   y_train=bad(digits.y_train[:-1], digits.y_train + 0.5, -digits.y_train - 1, "y"),
                   classes=bad(["a"] * 10, ("a",), "0123456789", (1,) * 10), mean=bad((0.1, 0.2), "x", (np.nan,), 0.1),
                   std=bad((0.0,), (-1.0,), (np.inf,)), source=bad(3, None), fallback=FLAGS)),
        # ------------------------------------------------------------ gcc.dnn.models
        Entry("dnn.LeNet5", models.LeNet5, dict(in_chans=1, num_classes=3, img_size=16),
              dict(in_chans=ints(1), num_classes=ints(1), img_size=ints(12))),
        Entry("dnn.small_vit", models.small_vit,
              dict(img_size=8, patch_size=4, in_chans=1, num_classes=3, embed_dim=8, depth=1, num_heads=2, mlp_ratio=1.0),
              dict(img_size=ints(1), patch_size=st.one_of(ints(1), one([3, 5])), in_chans=ints(1), num_classes=ints(1),
                   embed_dim=ints(1), depth=ints(1), num_heads=st.one_of(ints(1), one([3])),
                   mlp_ratio=st.one_of(reals(0, lo_open=True), one([0.01])))),
        Entry("dnn.repvgg", models.repvgg,
              dict(in_chans=1, num_classes=3, stem_chs=4, widths=(4, 8), depths=(1, 1), strides=(1, 2)),
              dict(in_chans=ints(1), num_classes=ints(1), stem_chs=ints(1),
                   widths=bad((), (4,), (4, 0), (4, 8.0), "48", 4, (4, True)), depths=bad((), (1, 0), (1, 1.5), "11"),
                   strides=bad((), (1, 0), (1, 2.0), None))),
        Entry("dnn.deploy", models.deploy, dict(model=lenet), dict(model=MODULES)),
        Entry("dnn.timm_model", models.timm_model,
              dict(name="vit_tiny_patch16_224", pretrained=False, checkpoint_path=None, weights_file=None, img_size=32,
                   depth=1, num_classes=2),
              dict(name=bad("", 3, None, "not_a_timm_model", b"vit"), pretrained=FLAGS,
                   checkpoint_path=bad(3, "", b"x", str(root / "absent.pth")),
                   weights_file=bad(3, "", b"x", str(root / "absent.pth")))),
        Entry("dnn.load_checkpoint", models.load_checkpoint,
              dict(model=models.LeNet5(num_classes=3, img_size=16), path=checkpoint, architecture=None),
              dict(model=MODULES, path=bad(3, "", b"x", files["junk"]), architecture=bad(3, ""))),
        Entry("dnn.build_model", models.build_model, dict(config=cfg16),
              dict(config=bad(3, None, {"arch": "resnet"}, {"arch": "lenet5", "img_sise": 16}, {"img_size": 16},
                              "lenet5", {"arch": "lenet5", "img_size": 8}, {"arch": "timm"})),
              names={"config": ("config", "img_size", "config['kwargs']")}),
        Entry("dnn.n_parameters", models.n_parameters, dict(model=lenet), dict(model=MODULES)),
        # ------------------------------------------------------------ gcc.dnn.training
        Entry("dnn.evaluate_accuracy", training.evaluate_accuracy,
              dict(model=lenet, x=x16[:4], y=np.array([0, 1, 2, 0]), batch_size=2),
              dict(model=MODULES, x=bad(np.zeros((4, 16, 16)), "x", None, np.zeros((0, 1, 16, 16)),
                                        np.zeros((4, 1, 16, 16)) + 1j, np.zeros((4, 3, 16, 16)), np.full((4, 1, 16, 16), "a")),
                   y=bad(np.array([0, 1, 2]), np.array([0, 1, 2, 5]), np.array([0.5, 1, 2, 0]), np.array([-1, 0, 1, 2]),
                         "0120"),
                   batch_size=ints(1))),
        Entry("dnn.train_model", _in_cache(training.train_model, root / "cache"),
              dict(config=cfg16, x_train=x16, y_train=y16, x_val=x16[:4], y_val=y16[:4], x_test=x16[:4],
                   y_test=y16[:4], name="lenet16", recipe=tiny, seed=0, data_id="toy", use_cache=False, threads=1,
                   device="cpu"),
              dict(config=bad(3, None, "lenet5", {"arch": "x"}), x_train=bad(x16[0], "x", x16 + 1j),
                   y_train=bad(y16[:-1], y16 + 0.5, y16 + 3), x_val=bad(x16[:0], None), y_test=bad(y16[:3], "y"),
                   recipe=bad(3, "fast", {"epoch": 1}, {"epochs": -1}, {"lr": 0}, {"batch_size": 1.5}),
                   seed=seeds(), data_id=bad(3, None), use_cache=FLAGS, threads=ints(1, none_ok=True), device=DEVICES),
              names={"config": ("config",)}),
        Entry("dnn.train_embedded_model", _in_cache(training.train_embedded_model, root / "cache"),
              dict(name="lenet5", data=digits, seed=0, recipe=tiny, config=None, use_cache=False, threads=1,
                   device=None),
              dict(name=choices(tuple(training.EMBEDDED_MODELS)), data=bad(3, "digits", {}), seed=seeds(),
                   recipe=bad(3, {"epoch": 1}), config=bad(3, {"img_sise": 3}), use_cache=FLAGS,
                   threads=ints(1, none_ok=True), device=DEVICES)),
        Entry("dnn.cache_key", training.cache_key, dict(config={"arch": "vit"}, recipe={"epochs": 1}, data_id="d", seed=0),
              dict(config=bad(3, None, "x"), recipe=bad(3, None), data_id=bad(3, None, b"d"), seed=seeds())),
        # ------------------------------------------------------------ gcc.dnn.inference
        Entry("dnn.best_device", inference.best_device, dict(prefer="cpu"), dict(prefer=DEVICES)),
        Entry("dnn.SoftmaxFunction", inference.SoftmaxFunction,
              dict(model=lenet, device="cpu", input_shape=(1, 16, 16), max_batch=8),
              dict(model=bad(3, None, np.sin), device=DEVICES, input_shape=bad((0, 16), (1.5,), "x", 3, ()),
                   max_batch=ints(1))),
        Entry("dnn.SoftmaxFunction.__call__", lambda x: sf(x), dict(x=x16[:2]),
              dict(x=bad(np.zeros((2, 1, 8, 8)), "x", None, np.zeros((0, 1, 16, 16)), np.zeros((2, 1, 16, 16)) + 1j,
                         np.zeros(3), torch.zeros(2, 1, 16, 16, dtype=torch.complex64)))),
        Entry("dnn.SoftmaxFunction.forward_tensor", lambda x: sf.forward_tensor(x), dict(x=torch.zeros(2, 1, 16, 16)),
              dict(x=bad(np.zeros((2, 1, 16, 16)), torch.zeros(2, 1, 16, 16, dtype=torch.int64),
                         torch.zeros(0, 1, 16, 16), torch.zeros(2, 1, 8, 8)))),
        # ------------------------------------------------------------ gcc.experiments.dnn_models
        Entry("dnn_models.family_of", dm.family_of, dict(model="vit_base"), dict(model=TEXTS)),
        Entry("dnn_models.show_markdown", dm.show_markdown, dict(text="x"), dict(text=TEXTS), run_valid=False),
        Entry("dnn_models.prepare_models", _in_cache(dm.prepare_models, root / "cache"), dict(names=["lenet5"], recipes={"lenet5": tiny}),
              dict(names=bad(3, "lenet5", ["resnet"], ["lenet5", "lenet5"], [3]), seed=seeds(), dataset=bad(3, None),
                   data_folder=bad(3, b"x"), datasets=bad(3, {"vit": "digits"}, {"lenet5": 3}),
                   threads=ints(1, none_ok=True), device=DEVICES, train_device=DEVICES,
                   recipes=bad(3, {"vit": {}}, {"lenet5": 3}), configs=bad(3, {"vit": {}}), paper_model=bad(3, "", " "),
                   paper_weights=bad(3, "/x"), paper_checkpoint=bad(3, "/x"), paper_data=bad(3, "/x"),
                   paper_images=ints(1, none_ok=True), paper_kwargs=bad(3, {"a": 1})), run_valid=False),
        *[Entry(f"dnn_models.{func.__name__}", func, dict(notebook="dnn_models", root=root),
                dict(notebook=bad(3, "", None), root=bad(3, b"x")), run_valid=False)
          for func in (dm.from_run, dm.data_from_run, dm.header_from_run)],
        Entry("dnn_models.page_header", dm.page_header,
              dict(models_table=models_table, datasets=None, banners=()),
              dict(models_table=tables(models_table.drop(columns="test_accuracy")), datasets=bad(3, {"a": 3}),
                   banners=bad("warn", 3, [3]))),
        # ------------------------------------------------------------ gcc.experiments.dnn_stragglers
        Entry("dnn_stragglers.run_sweeps", ds.run_sweeps,
              dict(prepared=prep, regimes={"r": (8, 3)}, stragglers={"r": [1, 2]}, trials=2, seed=0, lam_grid=grid,
                   tune_trials=2, tuning="per_s", schemes=("gcc",)),
              dict(prepared=PREPARED, regimes=REGIMES, stragglers=STRAGGLERS, trials=ints(1), seed=seeds(),
                   lam_grid=GRIDS, tune_trials=ints(1), tuning=choices(("per_s", "single")), schemes=SCHEMES)),
        Entry("dnn_stragglers.compare_schemes", ds.compare_schemes,
              dict(results=results, metric="loss", scheme="gcc", baseline="bacc", by=("model", "stragglers"),
                   level=0.95),
              dict(results=tables(results.drop(columns="trial")), metric=bad(3, "nope", ["loss", "nope"], []),
                   scheme=bad("nope", 3, "bspline"), baseline=bad("gcc", "nope"), by=bad(3, [3]),
                   level=reals(0, 1, lo_open=True, hi_open=True))),
        Entry("dnn_stragglers.plot_sweep", ds.plot_sweep, dict(results=sweep[0], regime="r"),
              dict(results=tables(), regime=bad("nope", 3), metrics=bad("nope", 3, []),
                   level=reals(0, 1, lo_open=True, hi_open=True)), run_valid=False),
        # ------------------------------------------------------------ gcc.experiments.dnn_summary
        Entry("dnn_summary.run_tables", dsum.run_tables,
              dict(prepared=prep, configs=[(8, 3, 6)], trials=2, seed=0, lam_grid=grid, tune_trials=2,
                   schemes=("gcc",), lambdas=None),
              dict(prepared=PREPARED,
                   configs=bad(3, [], [(8, 3)], [(8, 3, 9)], [(8, 0, 6)], [(8, 3.5, 6)], [(40, 20, 30)], "836",
                               {"vit": [(8, 3, 6)]}), trials=ints(1), seed=seeds(), lam_grid=GRIDS,
                   tune_trials=ints(1), schemes=SCHEMES, lambdas=bad(3, pd.DataFrame()))),
        Entry("dnn_summary.summary_table", dsum.summary_table,
              dict(results=results, by=("model", "scheme", "stragglers"), level=0.95),
              dict(results=tables(results[["scheme", "trial"]]), by=bad(3, ["nope"], [3]),
                   level=reals(0, 1, lo_open=True, hi_open=True))),
        Entry("dnn_summary.wide_summary", dsum.wide_summary,
              dict(summary=summary, metrics=None),
              dict(summary=tables(summary.drop(columns="metric")), metrics=bad("nope", 3, ["loss", "nope"]))),
        Entry("dnn_summary.improvement_intervals", dsum.improvement_intervals,
              dict(results=table1, metrics=["rmse_norms"], by=("model", "dataset", "n_workers", "n_inputs"), n_boot=100,
                   level=0.95, seed=0),
              dict(results=tables(table1.drop(columns="trial")), metrics=bad("nope", 3, [], ["nope"]),
                   by=bad(3, ["scheme"], ["model", "nope"]),
                   n_boot=ints(100), level=reals(0, 1, lo_open=True, hi_open=True), seed=seeds()),
              run_valid=False),
        # ------------------------------------------------------------ gcc.experiments.dnn_lambda
        Entry("dnn_lambda.lambda_movement", dl.lambda_movement,
              dict(lambdas=sweep[1], grid=grid),
              dict(lambdas=tables(sweep[1].assign(lam_enc=-1.0), sweep[1].drop(columns="regime")),
                   grid=st.one_of(GRIDS, one([[0.0]])))),
        Entry("dnn_lambda.sensitivity_summary", dl.sensitivity_summary, dict(table=study[0], metrics=("loss",),
                                                                             level=0.95),
              dict(table=tables(study[0].drop(columns="factor")), metrics=bad("nope", 3, ["loss", "nope"]),
                   level=reals(0, 1, lo_open=True, hi_open=True))),
        Entry("dnn_lambda.x10_verdicts", dl.x10_verdicts, dict(summary=sens_summary, metric="rmse_rms"),
              dict(summary=tables(sens_summary.drop(columns="ci_low")), metric=bad("nope", 3))),
        Entry("dnn_lambda.recovery_comparison", dl.recovery_comparison, dict(table=recovery, metric="loss", level=0.95),
              dict(table=tables(recovery[recovery["tuning"] != "none"], recovery.drop(columns="tuning")),
                   metric=choices(("loss", "rmse_norms", "rmse_rms", "relacc")),
                   level=reals(0, 1, lo_open=True, hi_open=True))),
        Entry("dnn_lambda.plot_sensitivity", dl.plot_sensitivity, dict(summary=sens_summary, metric="rmse_rms"),
              dict(summary=tables(), metric=bad("nope", 3)), run_valid=False),
        Entry("dnn_lambda.run_study", dl.run_study,
              dict(prepared=prep, lambdas=sweep[1], trials=2, seed=0, configs={"lenet5": (8, 3, 2)},
                   factors=(0.1, 1.0, 10.0), recovery_offsets=(0,), lam_grid=grid, tune_trials=2),
              dict(prepared=PREPARED, lambdas=tables(), trials=ints(1), seed=seeds(),
                   configs=bad(3, {"resnet": (8, 3, 2)}, {"lenet5": (8, 3)}, {"lenet5": (3, 8, 2)}, {"lenet5": (8, 3, 8)}),
                   factors=bad([], [1.0, 1.0], [-1], "x", [np.nan], [1.0, 1.0000001]),
                   recovery_offsets=bad([-1], [1.5], 3, []), lam_grid=GRIDS,
                   tune_trials=ints(1)), run_valid=False),
        Entry("dnn_lambda.verdict_rows", dl.verdict_rows, dict(movement=movement, x10=x10),
              dict(movement=tables(movement.drop(columns="verdict")), x10=tables(x10.drop(columns="verdict"))),
              run_valid=False),
        # ------------------------------------------------------------ gcc.experiments.dnn_probabilistic
        Entry("dnn_probabilistic.run_sweeps", dp.run_sweeps,
              dict(prepared=prep, models=["toy"], n_inputs=3, n_workers=[6, 8], p_values=[0.0], trials=2, seed=0,
                   lam_grid=grid, tune_trials=2),
              dict(prepared=PREPARED, models=bad(["vit"], "toy", [3], []), n_inputs=ints(1, 15),
                   n_workers=bad([], [0], [6, 6], [6.5], 3), p_values=bad([1.0], [-0.1], [0.1, 0.1], [np.nan], "p"),
                   trials=ints(1), seed=seeds(), lam_grid=GRIDS,
                   tune_trials=ints(1)), run_valid=False),
        Entry("dnn_probabilistic.sweep_summary", dp.sweep_summary, dict(table=bern, level=0.95),
              dict(table=tables(bern.drop(columns="p")), level=reals(0, 1, lo_open=True, hi_open=True))),
        Entry("dnn_probabilistic.sweep_slopes", dp.sweep_slopes, dict(summary=bern_summary, level=0.95),
              dict(summary=tables(bern_summary.drop(columns="mean")), level=reals(0, 1, lo_open=True, hi_open=True))),
        Entry("dnn_probabilistic.convergence_verdicts", dp.convergence_verdicts,
              dict(slopes=slopes, scheme="gcc", baseline="bacc"),
              dict(slopes=tables(slopes.drop(columns="slope")), scheme=bad("nope", 3), baseline=bad("gcc", "nope"))),
        Entry("dnn_probabilistic.verdict_rows", dp.verdict_rows, dict(verdicts=verdicts),
              dict(verdicts=tables(verdicts.drop(columns="verdict"))), run_valid=False),
        Entry("dnn_probabilistic.plot_bernoulli", dp.plot_bernoulli, dict(summary=bern_summary, slopes=slopes),
              dict(summary=tables(), slopes=bad(3, pd.DataFrame())), run_valid=False),
        Entry("dnn_claims.dnn_claims_table", dnn_claims.dnn_claims_table, dict(root=root),
              dict(root=bad(3, b"x", object())), run_valid=False),
        # ------------------------------------------------------------ coded_samples, coding_cost
        Entry("coded_samples.coded_samples", cs.coded_samples,
              dict(x=np.random.default_rng(3).random((4, 1, 3, 3)), n_workers=6, lam_enc=0.0, labels=None, dataset=""),
              dict(x=bad(np.zeros((4, 3, 3)), np.full((4, 1, 3, 3), np.nan), np.zeros((4, 1, 3, 3)) + 1j, "x",
                         np.zeros((0, 1, 3, 3))),
                   n_workers=ints(1), lam_enc=reals(0),
                   labels=bad([0, 1, 2], [0.5, 1, 2, 3], [-1, 0, 1, 2], "0123"), dataset=TEXTS)),
        Entry("coded_samples.stack_images", cs.stack_images, dict(table=coded, scheme="gcc"),
              dict(table=tables(coded.drop(columns="value")), scheme=bad("nope", 3))),
        Entry("coded_samples.coded_roughness", cs.coded_roughness, dict(table=coded),
              dict(table=tables(coded[coded["scheme"] != "input"], coded.assign(value=1.0)))),
        Entry("coded_samples.plot_coded_samples", cs.plot_coded_samples, dict(table=coded),
              dict(table=tables(), n_show=ints(1)), run_valid=False),
        Entry("coding_cost.coding_cost", cc.coding_cost,
              dict(f=sf, x=x16[:3], n_workers=6, stragglers=1, schemes=("gcc", "bacc"), lam_enc=1e-4, lam_dec=1e-4,
                   repeats=2, warmup=0, seed=0, model="lenet", dataset="toy"),
              dict(f=bad(3, toy_f, None), x=bad("x", np.zeros((3, 16, 16)), np.zeros((0, 1, 16, 16)),
                                                np.zeros((3, 1, 16, 16)) + 1j),
                   n_workers=ints(1), stragglers=ints(0, 5), schemes=SCHEMES, lam_enc=reals(0), repeats=ints(1),
                   warmup=ints(0), seed=seeds(), model=TEXTS, dataset=TEXTS)),
        Entry("coding_cost.run_costs", cc.run_costs,
              dict(prepared=prep_torch, n_workers=6, n_inputs=3, stragglers=1, repeats=2, seed=0, devices=["cpu"],
                   schemes=("gcc", "bacc")),
              dict(prepared=st.one_of(PREPARED, one([prep])), n_workers=ints(1), n_inputs=ints(1, 4),
                   stragglers=ints(0, 5), repeats=ints(1), seed=seeds(), devices=bad("gpu", 3, [3], ["gpu"], [], "cuda:99"),
                   schemes=SCHEMES)),
        Entry("coding_cost.cost_summary", cc.cost_summary, dict(timings=timings),
              dict(timings=tables(timings.drop(columns="scheme"), timings.drop(columns="forward_s")))),
    ]
    return out
