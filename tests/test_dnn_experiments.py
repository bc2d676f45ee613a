"""The DNN experiments (gcc.experiments.dnn_*, coded_samples, coding_cost): runners on an untrained
LeNet-5 (nothing is trained here beyond a few hundred images), the table contract, the verdicts,
and the ci batch's saved results."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
torch = pytest.importorskip("torch")
pytest.importorskip("timm")
pd = pytest.importorskip("pandas")

from gcc.dnn import data, inference, models  # noqa: E402
from gcc.experiments import coded_samples as cs  # noqa: E402
from gcc.experiments import coding_cost as cc  # noqa: E402
from gcc.experiments import dnn_claims, dnn_lambda, dnn_models, dnn_probabilistic  # noqa: E402
from gcc.experiments import dnn_stragglers as ds  # noqa: E402
from gcc.experiments import dnn_summary as dsum  # noqa: E402
from gcc.experiments.claims import CLAIM_COLUMNS  # noqa: E402
from gcc.summary import SUMMARY_COLUMNS  # noqa: E402

torch.set_num_threads(1)
REPO = Path(__file__).resolve().parent.parent
COLUMNS = ["model", "dataset", "scheme", "n_workers", "n_inputs", "stragglers", "trial", "loss", "relacc"]
SCHEME_KEYS = {"gcc", "bacc", "bspline"}


@pytest.fixture(scope="module")
def digits():
    return data.load_digits16(size=28)


@pytest.fixture(scope="module")
def f():
    torch.manual_seed(0)
    return inference.SoftmaxFunction(models.LeNet5(), device="cpu")


def _prepared(f, splits, dataset="digits"):
    return {"lenet5": {"f": f, "splits": splits, "info": {"dataset": dataset}}}


def test_per_s_sweep_tunes_every_s_and_shares_inputs(f, digits):
    res, lam, grid = ds.run_sweeps(_prepared(f, digits), {"low": (12, 8)}, {"low": [0, 2, 3]}, trials=3, seed=0,
                                   lam_grid=[0.0, 1e-9], tune_trials=2)
    assert list(res.columns[:3]) == ["model", "dataset", "regime"] and set(COLUMNS) <= set(res.columns)
    assert set(res["scheme"]) == SCHEME_KEYS and set(res["dataset"]) == {"digits"}
    assert len(res) == 3 * 3 * 3
    # accuracy_base (uncoded model on the batch) is the same for every scheme and S of a trial
    base = res.pivot_table(index="trial", columns=["stragglers", "scheme"], values="accuracy_base")
    assert np.all(base.to_numpy() == base.to_numpy()[:, :1])
    assert list(lam.columns) == ds.LAMBDA_COLUMNS
    assert list(lam["stragglers"]) == [0, 2, 3] and list(lam["tuned_at"]) == [0, 2, 3]
    assert set(grid["stragglers"]) == {0, 2, 3} and len(grid) >= 3 * 4  # the grid may be extended
    # issue 22: every choice is inside its (extended) grid, and the check says so
    assert set(lam["lam_enc_edge"]) | set(lam["lam_dec_edge"]) <= {"zero", "interior", "plateau"}
    assert (lam["grid_points"] >= 4).all() and (lam["lam_dec_tol"] >= lam["lam_dec"]).all()
    ds.require_interior(lam)
    for _, g in grid.groupby("stragglers"):  # the grid of each tuning: its choice is the rank-1 row
        best = g[g["rank"] == 1].iloc[0]
        row = lam[lam["stragglers"] == best["stragglers"]].iloc[0]
        assert (best["lam_enc"], best["lam_dec"]) == (row["lam_enc"], row["lam_dec"])
    bad = lam.copy()
    bad.loc[1, "lam_dec_edge"] = "top"
    with pytest.raises(ValueError, match=r"'lambdas' parameter of require_interior.*row 1: lam_dec_edge = 'top'"):
        ds.require_interior(bad)
    gcc_rows = res[res["scheme"] == "gcc"].groupby("stragglers")[["lam_enc", "lam_dec"]].first()
    np.testing.assert_array_equal(gcc_rows.to_numpy(), lam.set_index("stragglers")[["lam_enc", "lam_dec"]].to_numpy())


def test_single_tuning_and_run_sweeps(f, digits):
    prepared = _prepared(f, digits)
    res, lam, grid = ds.run_sweeps(prepared, {"low": [12, 8]}, {"low": [0, 2, 4, 11]}, trials=2, seed=0,
                                   lam_grid=[0.0, 1e-9], tune_trials=2, tuning="single")
    assert sorted(set(res["stragglers"])) == [0, 2, 4]  # N - S < 2 is dropped
    assert set(lam["tuned_at"]) == {4} and len(grid) >= 4  # the middle of the positive S (2, 4); grid may grow
    assert lam[["lam_enc", "lam_dec"]].nunique().max() == 1
    with pytest.raises(ValueError, match="'tuning' parameter of run_sweeps"):
        ds.run_sweeps(prepared, {"low": (12, 8)}, {"low": [0]}, 1, 0, tuning="every")


def test_compare_schemes_paired_difference():
    rows = []
    for t in range(4):
        for scheme, loss, acc in (("gcc", 1.0 + t, 1.0), ("bacc", 2.0 + t, 0.5)):
            rows.append({"model": "m", "dataset": "d", "regime": "r", "n_workers": 5, "n_inputs": 2,
                         "stragglers": 1, "trial": t, "scheme": scheme, "loss": loss, "relacc": acc})
    df = pd.DataFrame(rows)
    c = ds.compare_schemes(df).iloc[0]
    assert c["diff_mean"] == -1.0 and c["diff_ci_low"] == -1.0 and c["better"] and c["significant"]
    assert (c["scheme_mean"], c["baseline_mean"], c["n"], c["dataset"]) == (2.5, 3.5, 4, "d")
    assert np.isclose(c["improvement_pct"], 100 * (3.5 - 2.5) / 3.5)
    r = ds.compare_schemes(df, metric="relacc", scheme="GCC", baseline="Berrut").iloc[0]
    assert r["better"] and not r["below"] and np.isclose(r["improvement_pct"], 100.0)
    assert (r["scheme"], r["baseline"]) == ("gcc", "bacc")  # aliases give the registry's keys
    both = ds.compare_schemes(df, ["loss", "relacc"])
    assert list(both["metric"]) == ["loss", "relacc"]


def test_run_tables_and_summary(f, digits):
    prepared = _prepared(f, digits)
    res, lam = dsum.run_tables(prepared, [[12, 8, 10]], trials=2, seed=0, lam_grid=[0.0], tune_trials=1)
    assert set(res["received"]) == {10} and set(res["stragglers"]) == {2}
    assert list(lam.columns) == ds.LAMBDA_COLUMNS + ["reused"] and lam["regime"].iloc[0] == "N=12,K=8"
    reuse = pd.DataFrame([{"model": "lenet5", "n_workers": 12, "n_inputs": 8, "stragglers": 2, "lam_enc": 1e-9,
                           "lam_dec": 1e-7}])
    _, lam2 = dsum.run_tables(prepared, [[12, 8, 10], [12, 8, 9]], trials=1, seed=0, lam_grid=[0.0], tune_trials=1,
                              lambdas=reuse)
    assert lam2["reused"].tolist() == [True, False] and lam2["lam_dec"].tolist() == [1e-7, 0.0]
    _, by_family = dsum.run_tables(prepared, {"lenet5": [[12, 8, 9]]}, trials=1, seed=0, lam_grid=[0.0],
                                   tune_trials=1)
    assert by_family["received"].tolist() == [9]
    summ = dsum.summary_table(res)
    assert list(summ.columns) == [*dsum.CONFIG_COLUMNS, "scheme", "metric", *SUMMARY_COLUMNS]
    assert set(summ["metric"]) == {"loss", "rmse_norms", "rmse_rms", "relacc", "relacc_literal"}
    direct = res.groupby("scheme")["rmse_norms"].mean()
    got = summ[summ["metric"] == "rmse_norms"].set_index("scheme")["mean"]
    np.testing.assert_allclose(got[direct.index], direct, rtol=1e-12)
    expected = 100 * (direct["bacc"] - direct["gcc"]) / direct["bacc"]
    imp = dsum.improvement_intervals(res, ["rmse_norms"], n_boot=100)
    assert np.isclose(imp["improvement_pct"].iloc[0], expected, rtol=1e-12)
    assert imp["paper_pct"].iloc[-1] == 15.0 and list(imp["n_workers"])[-1] == "mean"  # LeNet5's average
    wide = dsum.wide_summary(summ, metrics=["loss", "relacc"])
    assert list(wide.columns) == [*dsum.CONFIG_COLUMNS, "scheme", "loss", "loss ±", "relacc", "relacc ±"]
    with pytest.raises(ValueError, match="The 'configs' parameter of run_tables must be"):
        dsum.run_tables(prepared, [[12, 8, 13]], trials=1, seed=0)


def test_improvement_intervals_against_the_means_and_the_paper():
    rng = np.random.default_rng(0)
    rows = []
    for n_workers, gain in ((10, 0.85), (12, 0.80)):
        for t in range(30):
            b = 1.0 + 0.1 * rng.standard_normal()
            for scheme, v in (("gcc", gain * b + 0.01 * rng.standard_normal()), ("bacc", b)):
                rows.append({"model": "lenet5", "dataset": "d", "n_workers": n_workers, "n_inputs": 5,
                             "received": 8, "trial": t, "scheme": scheme, "rmse_norms": v, "relacc": 1.0,
                             "rmse_rms": v, "loss": v ** 2})
    df = pd.DataFrame(rows)
    out = dsum.improvement_intervals(df, ["rmse_norms"])
    per = out[out["n_workers"] != "mean"].set_index("n_workers")
    means = df.groupby(["n_workers", "scheme"])["rmse_norms"].mean().unstack()  # the means, computed apart
    ref = 100 * (means["bacc"] - means["gcc"]) / means["bacc"]
    for n in (10, 12):
        assert np.isclose(per.loc[n, "improvement_pct"], ref[n], rtol=1e-12)
        assert per.loc[n, "ci_low"] < per.loc[n, "improvement_pct"] < per.loc[n, "ci_high"]
        assert per.loc[n, "verdict"] == "GCC better"
    avg = out[out["n_workers"] == "mean"].iloc[0]
    assert np.isclose(avg["improvement_pct"], per["improvement_pct"].mean()) and avg["n"] == 2
    assert avg["paper_pct"] == 15.0 and avg["ci_low"] < 17.5 < avg["ci_high"]
    # about 17.5% with a tight interval: 15% lies outside it, below, so ours is above the paper's figure
    assert avg["ci_low"] > 15.0 and avg["verdict"] == "above the paper's figure"
    same = df.assign(rmse_norms=np.where(df["scheme"] == "gcc", df["rmse_norms"] * 0 + 1.0, 1.0))
    flat = dsum.improvement_intervals(same, ["rmse_norms"])
    assert (flat["improvement_pct"] == 0).all() and flat["verdict"].iloc[-1] == "below the paper's figure"


def test_family_of():
    assert dnn_models.family_of("vit_base_patch16_224") == "vit"
    assert dnn_models.family_of("vit_large") == "vit" and dnn_models.family_of("repvgg_a0") == "repvgg"
    assert dnn_models.family_of("lenet5") == "lenet5" and dnn_models.family_of("resnet18") == ""


def test_coded_samples_roundtrip_and_interpolation(digits):
    x = digits.x_test[:6]
    table = cs.coded_samples(x, 10, labels=digits.y_test[:6], dataset="digits")
    assert list(table.columns[:3]) == ["model", "dataset", "scheme"] and set(table["model"]) == {cs.NO_MODEL}
    imgs, _ = cs.stack_images(table, "input")
    np.testing.assert_allclose(imgs, x, rtol=0, atol=1e-6)
    gcc_imgs, betas = cs.stack_images(table, "gcc")
    assert gcc_imgs.shape == (10, 1, 28, 28) and np.all(np.diff(betas) > 0)
    rough = cs.coded_roughness(table).set_index("scheme")
    assert rough.loc["input", "spatial_hf"] == 1.0 and set(rough["dataset"]) == {"digits"}
    with pytest.raises(ValueError, match="The 'scheme' parameter of stack_images must be one of"):
        cs.stack_images(table, "lcc")
    with pytest.raises(ValueError, match=r"The 'x' parameter of coded_samples must be an array of shape \(K, C, H, W\)"):
        cs.coded_samples(x[0], 10)


def test_roughness_batches_match_the_single_batch_and_the_verdict(digits):
    from gcc.dnn.data import image_batches

    x = digits.x_test[:40]
    b = cs.roughness_batches(x, 12, 6, 8, seed=3, dataset="digits")
    assert len(b) == 8 and np.allclose(b["diff"], b["bacc"] - b["gcc"])
    idx = image_batches(len(x), 6, 8, seed=3)[2]  # an independent path: the pixel table of batch 2
    rough = cs.coded_roughness(cs.coded_samples(x[idx], 12)).set_index("scheme")
    np.testing.assert_allclose(b.loc[2, ["gcc", "bacc"]].to_numpy(float), rough.loc[["gcc", "bacc"], "spatial_hf"],
                               rtol=1e-10)
    v = cs.noisier_verdict(b)
    assert list(v["quantity"]) == ["gcc", "bacc", "diff"] and v["n"].tolist() == [8, 8, 8]
    expected = ("BACC noisier (as the paper)" if v["ci_low"].iloc[2] > 0 else
                "GCC noisier (against the paper)" if v["ci_high"].iloc[2] < 0 else "undecided")
    assert v["verdict"].iloc[2] == expected
    flipped = b.assign(gcc=b["bacc"], bacc=b["gcc"], diff=-b["diff"])
    swap = {"BACC noisier (as the paper)": "GCC noisier (against the paper)",
            "GCC noisier (against the paper)": "BACC noisier (as the paper)", "undecided": "undecided"}
    assert cs.noisier_verdict(flipped)["verdict"].iloc[2] == swap[expected]


def test_coding_cost_columns(f, digits):
    t = cc.coding_cost(f, digits.x_test[:6], 10, 2, repeats=2, warmup=1, model="lenet5", dataset="digits")
    assert len(t) == 4 and (t["forward_s"] > 0).all() and set(t["dataset"]) == {"digits"}
    np.testing.assert_allclose(t["overhead"], (t["encode_s"] + t["decode_s"]) / t["forward_s"])
    s = cc.cost_summary(t)
    assert set(s["scheme"]) == {"gcc", "bacc"} and (s["overhead_of_medians"] > 0).all()
    assert list(s.columns[:2]) == ["model", "dataset"]


def test_run_study_sensitivity_is_paired_and_recovery_pairs_gcc_twice_and_bacc(f, digits):
    lambdas = pd.DataFrame({"model": "lenet5", "dataset": "digits", "regime": "low", "n_workers": 12, "n_inputs": 8,
                            "stragglers": [2, 3, 4], "lam_enc": [1e-9, 0.0, 0.0], "lam_dec": [0.0, 1e-9, 0.0]})
    t, rec = dnn_lambda.run_study(_prepared(f, digits), lambdas, trials=3, seed=0, configs={"lenet5": (12, 8, 2)},
                                  factors=(0.0, 0.1, 1.0, 10.0), recovery_offsets=[1, 0])
    assert set(t["scheme"]) == {"gcc"} and set(t["parameter"]) == {"lam_enc", "lam_dec"}
    opt = t[t["factor"] == 1.0]
    assert set(opt["lam_enc"]) == {1e-9} and set(opt["lam_dec"]) == {0.0}
    # a zero optimum is probed around the grid's smallest positive value
    assert set(t[(t["parameter"] == "lam_dec") & (t["factor"] == 10.0)]["lam_dec"]) == {1e-11}
    summary = dnn_lambda.sensitivity_summary(t)
    at_one = summary[summary["factor"] == 1.0]
    assert (at_one["change_pct"] == 0).all() and (at_one["ci_low"] == 0).all()
    x10 = dnn_lambda.x10_verdicts(summary)
    assert set(x10["factor"]) == {0.1, 10.0} and len(x10) == 4
    # near the recovery limit: S = N - K - offset = 3, 4; the single pair is the one tuned at the middle S, 3
    assert sorted(set(rec["stragglers"])) == [3, 4]
    assert set(rec["tuning"]) == {"per_s", "single", "none"} and set(rec["scheme"]) == {"gcc", "bacc"}
    cmp = dnn_lambda.recovery_comparison(rec)
    assert set(cmp["comparison"]) == {"gcc per-S - bacc", "gcc single - bacc", "gcc per-S - gcc single"}
    same = cmp[(cmp["comparison"] == "gcc per-S - gcc single") & (cmp["stragglers"] == 3)].iloc[0]
    assert same["diff_mean"] == 0 and same["verdict"] == "no significant difference"  # the same pair


def test_band_verdict_is_two_sided():
    summary = pd.DataFrame({"model": "m", "dataset": "d", "n_workers": 10, "n_inputs": 5, "stragglers": 2,
                            "parameter": "lam_dec", "factor": [10.0, 0.1, 10.0], "metric": "rmse_rms",
                            "change_pct": [0.2, 3.0, 20.0], "ci_low": [0.0, 2.0, 12.0],
                            "ci_high": [0.5, 5.0, 30.0]})
    got = dnn_lambda.x10_verdicts(summary)["verdict"].tolist()
    assert got == ["less sensitive than the paper", "consistent", "more sensitive than the paper"]
    # issue 22: an interval that merely meets the band is undecided (RepVGG lam_dec x10: -2.1% [-9.7, 5.6])
    touching = summary.iloc[:2].assign(change_pct=[-2.1, 1.8], ci_low=[-9.7, 1.0], ci_high=[5.6, 2.5])
    assert dnn_lambda.x10_verdicts(touching)["verdict"].tolist() == ["undecided", "undecided"]


def test_lambda_movement_and_verdict_rows():
    lam = pd.DataFrame({"model": "m", "dataset": "d", "regime": "low", "n_workers": 10, "n_inputs": 5,
                        "stragglers": [0, 1, 2, 3], "lam_enc": [1e-6, 1e-10, 1e-10, 1e-9],
                        "lam_dec": [0.0, 0.0, 1e-12, 1e-12]})
    mv = dnn_lambda.lambda_movement(lam).set_index("parameter")
    assert mv.loc["lam_enc", "span_steps"] == 1.0 and mv.loc["lam_enc", "n_s"] == 3  # S = 0 left out
    assert set(mv["definition"]) == {"argmin"}
    # issue 22: with the tolerant optimum (largest lambda within 0.1% of the best) a plateau is no swing,
    # and values below the starting grid (an extended grid) keep their order
    tol = lam.assign(lam_enc_tol=[1e-6, 1e-9, 1e-9, 1e-9], lam_dec_tol=[0.0, 1e-14, 1e-12, 1e-12])
    mt = dnn_lambda.lambda_movement(tol).set_index("parameter")
    assert mt.loc["lam_enc", "span_steps"] == 0.0 and set(mt["definition"]) == {"within 0.1% of the best"}
    assert mt.loc["lam_dec", "span_steps"] == 2.0 and mt.loc["lam_dec", "verdict"] == "moves with S"
    assert mv.loc["lam_dec", "span_steps"] == 1.0 and mv.loc["lam_dec", "verdict"] == "consistent"
    x10 = pd.DataFrame({"model": "m", "dataset": "d", "n_workers": 10, "n_inputs": 5, "stragglers": 2,
                        "parameter": "lam_dec", "factor": [10.0], "metric": "rmse_rms", "change_pct": [3.0],
                        "ci_low": [1.0], "ci_high": [5.0], "verdict": ["consistent"]})
    rows = dnn_lambda.verdict_rows(mv.reset_index(), x10)
    assert list(rows.columns) == CLAIM_COLUMNS
    assert list(rows["claim"]) == ["dnn-lambda-vs-S", "dnn-lambda-vs-S", "dnn-lambda-x10"]


def test_bernoulli_sweep_contract_and_verdicts(f, digits):
    t = dnn_probabilistic.run_sweeps(_prepared(f, digits), ["lenet5"], 4, [8, 12, 16], [0.1, 0.3], trials=2, seed=0,
                                     lam_grid=[0.0, 1e-9], tune_trials=1)
    assert list(t.columns[:6]) == dnn_probabilistic.SWEEP_COLUMNS
    assert set(t["p"]) == {0.1, 0.3} and set(t["scheme"]) == {"gcc", "bacc"} and set(t["dataset"]) == {"digits"}
    slopes = dnn_probabilistic.sweep_slopes(dnn_probabilistic.sweep_summary(t))
    assert len(slopes) == 4 and (slopes["n_points"] == 3).all()
    verdicts = dnn_probabilistic.convergence_verdicts(slopes)
    assert len(verdicts) == 2
    s = pd.DataFrame({"model": "m", "dataset": "d", "p": 0.1, "scheme": ["gcc", "bacc"], "slope": [-2.0, -3.0],
                      "ci_low": [-2.2, -3.3], "ci_high": [-1.8, -2.7]})
    assert dnn_probabilistic.convergence_verdicts(s)["verdict"].tolist() == ["BACC faster"]
    assert list(dnn_probabilistic.verdict_rows(verdicts).columns) == CLAIM_COLUMNS


def test_dnn_claims_table_reads_saved_verdicts(tmp_path):
    empty = dnn_claims.dnn_claims_table(tmp_path)
    assert list(empty.columns) == CLAIM_COLUMNS and set(empty["claim"]) == set(dnn_claims.DNN_CLAIMS)
    folder = tmp_path / "dnn_probabilistic"
    folder.mkdir()
    rows = pd.DataFrame({"claim": ["dnn-isit-faster"], "verdict": ["GCC faster"], "measured": [-3.1]})
    rows.to_csv(folder / "claims.csv", index=False)
    table = dnn_claims.dnn_claims_table(tmp_path)
    assert table.set_index("claim").loc["dnn-isit-faster", "verdict"] == "GCC faster"


def test_prepare_models_header_and_fallback_banner(monkeypatch, tmp_path):
    monkeypatch.setenv("GCC_MODEL_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("GCC_FASHION_MNIST", raising=False)
    monkeypatch.setattr(data, "FASHION_MNIST_DIRS", ("/nonexistent/fashion-mnist",))
    quick = {"epochs": 1, "train_images": 128, "warmup_epochs": 0}
    prepared = dnn_models.prepare_models(["lenet5"], recipes={"lenet5": quick})
    table = prepared.table()
    assert list(table.columns[:4]) == dnn_models.MODEL_COLUMNS and table["dataset"].iloc[0] == "digits"
    header = prepared.header()
    assert header.startswith("> **Warning.** Fallback data") and "61,706 parameters" in header
    assert "Hardware." in header and "LeNet5 on MNIST" in header
    assert prepared.banners and prepared.summary()["banners"] == prepared.banners


def test_prepare_models_paper_path_offline(tmp_path):
    from PIL import Image

    rng = np.random.default_rng(0)
    for c in range(2):
        (tmp_path / "val" / f"c{c}").mkdir(parents=True)
        for i in range(3):
            Image.fromarray(rng.integers(0, 256, (40, 40, 3), dtype=np.uint8)).save(tmp_path / "val" / f"c{c}" / f"{i}.png")
    prepared = dnn_models.prepare_models([], paper_model="vit_tiny_patch16_224", paper_data=str(tmp_path / "val"),
                                         paper_kwargs={"img_size": 32, "num_classes": 2, "depth": 1})
    table = prepared.table()
    assert table["model"].tolist() == ["vit_tiny_patch16_224"] and table["dataset"].tolist() == ["val"]
    splits = prepared["vit_tiny_patch16_224"]["splits"]
    assert splits["x_val"].shape[1:] == (3, 32, 32) and len(splits["y_test"]) == 3
    with pytest.raises(ValueError, match="'paper_data' parameter of prepare_models"):
        dnn_models.prepare_models([], paper_model="vit_tiny_patch16_224")


def test_from_run_needs_the_models_notebook(tmp_path):
    with pytest.raises(FileNotFoundError, match="dnn_models has not run"):
        dnn_models.from_run(root=tmp_path)


def test_gcc_dnn_keeps_the_torch_side_only():
    import gcc.dnn

    assert gcc.dnn.__all__ == ["formats", "data", "models", "training", "inference"]
    assert not hasattr(gcc.dnn, "experiments")


def test_import_gcc_dnn_without_torch_names_the_extra():
    # sys.modules[name] = None makes the import system treat torch as absent.
    code = "import sys; sys.modules['torch'] = None; import gcc.dnn"
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode != 0
    assert "ImportError" in proc.stderr and "pip install gcc-companion[dnn]" in proc.stderr


DNN_NOTEBOOKS = ("dnn_models", "dnn_stragglers", "dnn_summary", "dnn_lambda", "dnn_probabilistic",
                 "coded_samples", "coding_cost")


def test_ci_results_table_contract(ci_results):
    """Every DNN table has model and dataset columns; the models, lambda and N-sweep tables their
    contract's columns; schemes are the registry's lower-case keys."""
    for notebook in DNN_NOTEBOOKS:
        tables = sorted((ci_results / notebook).glob("*.csv"))
        assert tables, notebook
        for path in tables:
            cols = list(pd.read_csv(path, nrows=1).columns)
            assert {"model", "dataset"} <= set(cols) or "claim" in cols, f"{notebook}/{path.name}: {cols}"
    models_table = pd.read_csv(ci_results / "dnn_models" / "models.csv")
    assert list(models_table.columns[:4]) == ["model", "dataset", "n_parameters", "test_accuracy"]
    assert {"lenet5", "repvgg", "vit"} <= set(models_table["model"])
    for notebook in ("dnn_stragglers", "dnn_summary"):
        lam = pd.read_csv(ci_results / notebook / "lambdas.csv")
        assert list(lam.columns[:2]) == ["model", "dataset"]
        assert {"model", "regime", "stragglers", "lam_enc", "lam_dec"} <= set(lam.columns)
    sweep = pd.read_csv(ci_results / "dnn_probabilistic" / "results.csv")
    assert list(sweep.columns[:6]) == ["model", "dataset", "p", "n_workers", "scheme", "loss"]
    for notebook, table in (("dnn_stragglers", "results"), ("dnn_summary", "results"),
                            ("dnn_probabilistic", "results"), ("coding_cost", "timings")):
        assert set(pd.read_csv(ci_results / notebook / f"{table}.csv")["scheme"]) <= SCHEME_KEYS


def test_ci_results_record_gcc_vs_bacc(ci_results):
    """A paired verdict for every (model, regime, S > 0); per-S lambdas; the App. E verdicts."""
    res = pd.read_csv(ci_results / "dnn_stragglers" / "results.csv")
    cmp = pd.read_csv(ci_results / "dnn_stragglers" / "comparison.csv")
    loss = cmp[cmp["stragglers"] > 0]
    assert len(loss) == res[res["stragglers"] > 0].groupby(["model", "regime", "stragglers"]).ngroups
    assert loss["better"].notna().all()
    lam = pd.read_csv(ci_results / "dnn_stragglers" / "lambdas.csv")
    assert (lam["tuned_at"] == lam["stragglers"]).all()  # tuned at every S
    verdicts = pd.read_csv(ci_results / "dnn_lambda" / "verdicts.csv")
    assert {"dnn-lambda-vs-S", "dnn-lambda-x10"} <= set(verdicts["claim"])
    assert set(verdicts["verdict"]) <= {"consistent", "moves with S", "less sensitive than the paper",
                                         "more sensitive than the paper", "undecided", "not measured"}
    for notebook in ("dnn_stragglers", "dnn_summary"):  # issue 22: no tuned lambda on an edge of its grid
        lam = pd.read_csv(ci_results / notebook / "lambdas.csv")
        assert not (set(lam["lam_enc_edge"]) | set(lam["lam_dec_edge"])) & {"top", "bottom"}, notebook
    near = pd.read_csv(ci_results / "dnn_lambda" / "recovery_comparison.csv")
    assert {"ci_low", "ci_high", "verdict"} <= set(near.columns) and len(near) > 0
    for notebook, table in (("dnn_summary", "improvement"), ("coding_cost", "summary"),
                            ("coded_samples", "roughness"), ("dnn_probabilistic", "verdicts")):
        assert (ci_results / notebook / f"{table}.csv").exists()


# --- arguments are checked before anything runs (issue 15) --------------------------------------

def test_prepare_models_checks_everything_before_training(monkeypatch, tmp_path):
    monkeypatch.setenv("GCC_MODEL_CACHE", str(tmp_path / "cache"))
    cases = [
        (dict(recipes={"vit": {"epochs": 1}}), "'recipes' parameter of prepare_models .*networks of names"),
        (dict(names=["lenet5", "resnet"], recipes=None), "'names' parameter of prepare_models .*'resnet' is none"),
        (dict(paper_data="/data/val"), "'paper_data' parameter of prepare_models must be None when 'paper_model'"),
        (dict(device="gpu"), "'device' parameter of prepare_models must be a torch device"),
        (dict(threads=0), "'threads' parameter of prepare_models must be an int >= 1"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            dnn_models.prepare_models(**{"names": ["lenet5"], **kwargs})
    assert not (tmp_path / "cache").exists()                    # nothing was trained


def test_sweeps_check_regimes_and_stragglers_first(digits):
    def never(x):
        raise AssertionError("f must not run for a malformed argument")

    prepared = _prepared(never, digits)
    with pytest.raises(ValueError, match=r"'stragglers' parameter of run_sweeps .*stragglers\[1\] = 12"):
        ds.run_sweeps(prepared, {"low": (12, 8)}, {"low": [0, 12]}, 1, 0)
    with pytest.raises(ValueError, match=r"'stragglers' parameter of run_sweeps .*stragglers\[0\] = 2.5"):
        ds.run_sweeps(prepared, {"low": (12, 8)}, {"low": [2.5]}, 1, 0)
    with pytest.raises(ValueError, match="'stragglers' parameter of run_sweeps must be a mapping regime"):
        ds.run_sweeps(prepared, {"low": (12, 8)}, {"low": [0], "high": [1]}, 1, 0)
    with pytest.raises(ValueError, match="'regimes' parameter of run_sweeps must be a non-empty mapping"):
        ds.run_sweeps(prepared, {"low": (8, 12)}, {"low": [0]}, 1, 0)
    with pytest.raises(ValueError, match="'regimes' parameter of run_sweeps .*K <= the images in x_val"):
        ds.run_sweeps(prepared, {"low": (9999, 9000)}, {"low": [0]}, 1, 0)
    bad_labels = _prepared(never, {"x_val": digits.x_val, "y_val": digits.y_val + 0.5, "x_test": digits.x_test,
                                   "y_test": digits.y_test})
    with pytest.raises(ValueError, match="'prepared' parameter of run_sweeps .*y_val is not"):
        ds.run_sweeps(bad_labels, {"low": (12, 8)}, {"low": [0]}, 1, 0)
    with pytest.raises(ValueError, match="'configs' parameter of run_tables .*is not three ints"):
        dsum.run_tables(prepared, [(12, 8)], 1, 0)
    with pytest.raises(ValueError, match="'p_values' parameter of run_sweeps"):
        dnn_probabilistic.run_sweeps(prepared, ["lenet5"], 4, [8], [1.0], 1, 0)
    with pytest.raises(ValueError, match="'models' parameter of run_sweeps must be a non-empty sequence of networks"):
        dnn_probabilistic.run_sweeps(prepared, ["vit"], 4, [8], [0.1], 1, 0)
    lambdas = pd.DataFrame({"model": "lenet5", "dataset": "d", "regime": "low", "n_workers": 12, "n_inputs": 8,
                            "stragglers": [2], "lam_enc": [0.0], "lam_dec": [0.0]})
    with pytest.raises(ValueError, match="'factors' parameter of run_study"):
        dnn_lambda.run_study(prepared, lambdas, 1, 0, factors=(1.0, 1.0))


def test_schemes_given_by_alias_use_the_tuned_lambdas(f, digits):
    """schemes=("GCC", ...) used to skip the cross-validated lambdas (the check compared the alias)."""
    res, _, _ = ds.run_sweeps(_prepared(f, digits), {"low": (8, 4)}, {"low": [1]}, trials=1, seed=0,
                              lam_grid=[1e-9], tune_trials=1, schemes=("GCC", "bacc"))
    assert (res.loc[res["scheme"] == "gcc", "lam_enc"] == 1e-9).all()


def test_tables_are_checked(f, digits):
    res, _, _ = ds.run_sweeps(_prepared(f, digits), {"low": (8, 4)}, {"low": [1]}, trials=2, seed=0,
                              lam_grid=[0.0], tune_trials=1, schemes=("gcc", "bacc"))
    with pytest.raises(ValueError, match="'scheme' parameter of compare_schemes must be a scheme of results"):
        ds.compare_schemes(res, scheme="bspline", by=["stragglers"])
    with pytest.raises(ValueError, match="'metric' parameter of compare_schemes must be columns of results"):
        ds.compare_schemes(res, metric="los", by=["stragglers"])
    with pytest.raises(ValueError, match="'results' parameter of compare_schemes must be a pandas.DataFrame"):
        ds.compare_schemes(res.to_dict())
    table = cs.coded_samples(np.ones((3, 1, 4, 4)), 5)
    with pytest.raises(ValueError, match="'table' parameter of coded_roughness .*inputs that are not constant"):
        cs.coded_roughness(table)
    with pytest.raises(ValueError, match="'x' parameter of coded_samples .*it holds complex values"):
        cs.coded_samples(np.ones((3, 1, 4, 4)) + 1j, 5)
    with pytest.raises(ValueError, match="'timings' parameter of cost_summary .*no column 'decode_s'"):
        cc.cost_summary(pd.DataFrame({"scheme": ["gcc"], "encode_s": [1.0]}))
