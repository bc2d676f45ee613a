"""The DNN experiments (gcc.experiments.dnn_stragglers, dnn_summary, coded_samples, coding_cost):
runners on a tiny model, the GPU script's CPU smoke test, and the ci results."""
import json
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
from gcc.experiments import dnn_stragglers as ds  # noqa: E402
from gcc.experiments import dnn_summary as dsum  # noqa: E402
from gcc.summary import SUMMARY_COLUMNS  # noqa: E402

torch.set_num_threads(1)
REPO = Path(__file__).resolve().parent.parent
COLUMNS = ["model", "scheme", "n_workers", "n_inputs", "stragglers", "trial", "loss", "relacc"]


@pytest.fixture(scope="module")
def digits():
    return data.load_digits16()


@pytest.fixture(scope="module")
def f():
    torch.manual_seed(0)
    return inference.SoftmaxFunction(models.LeNet5(), device="cpu")


def test_straggler_sweep_shares_inputs_and_stragglers(f, digits):
    res, lam = ds.straggler_sweep(f, "lenet5", digits, {"low": (12, 8)}, {"low": [0, 3]}, trials=3, seed=0,
                                  lam_enc_grid=[0.0, 1e-9], lam_dec_grid=[0.0, 1e-9], tune_trials=2)
    assert set(COLUMNS) <= set(res.columns) and list(res.columns[:3]) == ["model", "regime", "scheme"]
    assert set(res["scheme"]) == {"gcc", "bacc", "bspline"}
    assert len(res) == 3 * 2 * 3
    # S = 0: every scheme decodes from all workers; accuracy_base (uncoded model on the batch)
    # identical across schemes and S for a given trial: same input batch
    base = res.pivot_table(index="trial", columns=["stragglers", "scheme"], values="accuracy_base")
    assert np.all(base.to_numpy() == base.to_numpy()[:, :1])
    assert set(lam.columns) >= {"lam_enc", "lam_dec", "mean", "rank", "regime"}
    cmp = ds.compare_schemes(res)
    assert {"scheme", "baseline", "below", "better", "significant", "improvement_pct"} <= set(cmp.columns)
    assert len(cmp) == 2 and set(cmp["scheme"]) == {"gcc"} and set(cmp["baseline"]) == {"bacc"}


def test_compare_schemes_paired_difference():
    rows = []
    for t in range(4):
        rows += [{"model": "m", "regime": "r", "n_workers": 5, "n_inputs": 2, "stragglers": 1, "trial": t,
                  "scheme": "gcc", "loss": 1.0 + t, "relacc": 1.0},
                 {"model": "m", "regime": "r", "n_workers": 5, "n_inputs": 2, "stragglers": 1, "trial": t,
                  "scheme": "bacc", "loss": 2.0 + t, "relacc": 0.5}]
    df = pd.DataFrame(rows)
    c = ds.compare_schemes(df).iloc[0]
    assert c["diff_mean"] == -1.0 and c["diff_ci_low"] == -1.0 and c["better"] and c["significant"]
    assert (c["scheme_mean"], c["baseline_mean"], c["n"]) == (2.5, 3.5, 4)
    assert np.isclose(c["improvement_pct"], 100 * (3.5 - 2.5) / 3.5)
    r = ds.compare_schemes(df, metric="relacc", scheme="GCC", baseline="Berrut").iloc[0]
    assert r["better"] and not r["below"] and np.isclose(r["improvement_pct"], 100.0)
    assert (r["scheme"], r["baseline"]) == ("gcc", "bacc")  # aliases give the registry's keys


def test_table_runs_and_improvement_table(f, digits):
    res, lam = dsum.table_runs(f, "lenet5", digits, [[12, 8, 10]], trials=2, seed=0, lam_enc_grid=[0.0],
                               lam_dec_grid=[0.0], tune_trials=1)
    assert set(res["received"]) == {10} and set(res["stragglers"]) == {2}
    imp = dsum.improvement_table(res)
    assert {"scheme", "baseline", "rmse_norms_pct", "rmse_rms_pct", "relacc_pct", "paper_rmse_pct"} <= set(imp.columns)
    assert imp["paper_rmse_pct"].iloc[0] == 15.0  # LeNet5's paper average
    assert list(imp["n_workers"])[-1] == "mean"
    summ = dsum.summary_table(res)
    assert list(summ.columns) == ["model", "n_workers", "n_inputs", "received", "scheme", "metric",
                                  *SUMMARY_COLUMNS]
    assert set(summ["metric"]) == {"loss", "rmse_norms", "rmse_rms", "relacc", "relacc_literal"}
    # the means are those of the trials (an independent groupby), the improvement follows from them
    direct = res.groupby("scheme")["rmse_norms"].mean()
    got = summ[summ["metric"] == "rmse_norms"].set_index("scheme")["mean"]
    np.testing.assert_allclose(got[direct.index], direct, rtol=1e-12)
    expected = 100 * (direct["bacc"] - direct["gcc"]) / direct["bacc"]
    assert np.isclose(imp["rmse_norms_pct"].iloc[0], expected, rtol=1e-12)
    wide = dsum.wide_summary(summ, metrics=["loss", "relacc"])
    assert list(wide.columns) == ["model", "n_workers", "n_inputs", "received", "scheme", "loss",
                                  "loss ±", "relacc", "relacc ±"]
    assert len(wide) == 3


def test_table_runs_rejects_bad_config(f, digits):
    with pytest.raises(ValueError, match="The 'configs' parameter of table_runs must be"):
        dsum.table_runs(f, "lenet5", digits, [[12, 8, 13]], trials=1, seed=0)


def test_paper_family():
    assert dsum.paper_family("vit_base_patch16_224") == "vit"
    assert dsum.paper_family("vit_large") == "vit"
    assert dsum.paper_family("lenet5") == "lenet5"
    assert dsum.paper_family("resnet18") == ""


def test_coded_samples_roundtrip_and_interpolation(digits):
    x = digits.x_test[:6]
    table = cs.coded_samples(x, 10, labels=digits.y_test[:6])
    imgs, alphas = cs.stack_images(table, "input")
    np.testing.assert_allclose(imgs, x, rtol=0, atol=1e-6)
    gcc_imgs, betas = cs.stack_images(table, "gcc")
    assert gcc_imgs.shape == (10, 1, 16, 16) and np.all(np.diff(betas) > 0)
    rough = cs.coded_roughness(table).set_index("scheme")
    assert rough.loc["input", "spatial_hf"] == 1.0
    assert list(cs.coded_samples(x, 10, schemes=["Berrut"], lam_enc=0.0)["scheme"].unique()) == ["input", "bacc"]
    with pytest.raises(ValueError, match="The 'scheme' parameter of stack_images must be one of"):
        cs.stack_images(table, "lcc")
    with pytest.raises(ValueError, match=r"The 'x' parameter of coded_samples must be an array of shape \(K, C, H, W\)"):
        cs.coded_samples(x[0], 10)


def test_coding_cost_columns(f, digits):
    t = cc.coding_cost(f, digits.x_test[:6], 10, 2, repeats=2, warmup=1)
    assert len(t) == 4 and (t["forward_s"] > 0).all()
    np.testing.assert_allclose(t["overhead"], (t["encode_s"] + t["decode_s"]) / t["forward_s"])
    s = cc.cost_summary(t)
    assert set(s["scheme"]) == {"gcc", "bacc"} and (s["overhead_of_medians"] > 0).all()


def test_gpu_script_tiny_runs_on_cpu(tmp_path):
    """scripts/gpu_paper_run.py --tiny: the prepared paper-scale script, at a tiny size, offline, on the CPU."""
    env = dict(os.environ, GCC_MODEL_CACHE=str(tmp_path / "cache"), HF_HUB_OFFLINE="1", GCC_DEVICE="cpu")
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "gpu_paper_run.py"), "--tiny", "--out",
                           str(tmp_path / "results")], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    folder = tmp_path / "results" / "gpu_paper_run"
    for name in ("models", "results", "comparison", "improvement", "cost", "timings"):
        assert (folder / f"{name}.csv").exists(), name
    hardware = json.loads((folder / "hardware.json").read_text())
    assert {"command", "platform", "cpu_count", "device", "torch"} <= set(hardware)  # gcc.machine.describe + command
    results = pd.read_csv(folder / "results.csv")
    assert set(COLUMNS) <= set(results.columns)
    assert "vit_tiny_patch16_224" in set(results["model"])  # the paper path ran (offline, tiny folder)


def test_ci_results_record_gcc_vs_bacc(ci_results):
    """The ci figures' data: tidy columns, 95% CIs possible, and a verdict for every S > 0."""
    res = pd.read_csv(ci_results / "dnn_stragglers" / "results.csv")
    assert set(COLUMNS) <= set(res.columns)
    assert {"vit", "lenet5"} <= set(res["model"]) and {"gcc", "bacc", "bspline"} <= set(res["scheme"])
    cmp = pd.read_csv(ci_results / "dnn_stragglers" / "comparison.csv")
    loss = cmp[(cmp["metric"] == "loss") & (cmp["stragglers"] > 0)]
    expected = res[res["stragglers"] > 0].groupby(["model", "regime", "stragglers"]).ngroups
    assert len(loss) == expected and loss["better"].notna().all()
    for notebook, table in (("dnn_summary", "improvement"), ("coding_cost", "summary"),
                            ("coded_samples", "roughness")):
        assert (ci_results / notebook / f"{table}.csv").exists()


def test_gcc_dnn_keeps_the_torch_side_only():
    import gcc.dnn

    assert gcc.dnn.__all__ == ["data", "models", "training", "inference"]
    assert not hasattr(gcc.dnn, "experiments")
    assert not hasattr(inference, "softmax_function")


def test_import_gcc_dnn_without_torch_names_the_extra():
    # sys.modules[name] = None makes the import system treat torch as absent.
    code = "import sys; sys.modules['torch'] = None; import gcc.dnn"
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode != 0
    assert "ImportError" in proc.stderr and "pip install gcc-companion[dnn]" in proc.stderr
    assert "torch" in proc.stderr.splitlines()[-1]
