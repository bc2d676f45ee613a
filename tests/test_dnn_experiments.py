"""gcc.dnn.experiments: runners on a tiny model, the GPU script's CPU smoke test, and the ci results."""
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

from gcc.dnn import data, experiments as ex, inference, models  # noqa: E402

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
    res, lam = ex.straggler_sweep(f, "lenet5", digits, {"low": (12, 8)}, {"low": [0, 3]}, trials=3, seed=0,
                                  lam_enc_grid=[0.0, 1e-9], lam_dec_grid=[0.0, 1e-9], tune_trials=2)
    assert set(COLUMNS) <= set(res.columns) and list(res.columns[:3]) == ["model", "regime", "scheme"]
    assert set(res["scheme"]) == {"gcc", "bacc", "bspline"}
    assert len(res) == 3 * 2 * 3
    # S = 0: every scheme decodes from all workers; accuracy_base (uncoded model on the batch)
    # identical across schemes and S for a given trial: same input batch
    base = res.pivot_table(index="trial", columns=["stragglers", "scheme"], values="accuracy_base")
    assert np.all(base.to_numpy() == base.to_numpy()[:, :1])
    assert set(lam.columns) >= {"lam_enc", "lam_dec", "mean", "rank", "regime"}
    cmp = ex.compare_schemes(res)
    assert {"below", "better", "significant", "improvement_pct"} <= set(cmp.columns)
    assert len(cmp) == 2


def test_compare_schemes_paired_difference():
    rows = []
    for t in range(4):
        rows += [{"model": "m", "regime": "r", "n_workers": 5, "n_inputs": 2, "stragglers": 1, "trial": t,
                  "scheme": "gcc", "loss": 1.0 + t, "relacc": 1.0},
                 {"model": "m", "regime": "r", "n_workers": 5, "n_inputs": 2, "stragglers": 1, "trial": t,
                  "scheme": "bacc", "loss": 2.0 + t, "relacc": 0.5}]
    df = pd.DataFrame(rows)
    c = ex.compare_schemes(df).iloc[0]
    assert c["diff_mean"] == -1.0 and c["diff_low"] == -1.0 and c["better"] and c["significant"]
    assert np.isclose(c["improvement_pct"], 100 * (3.5 - 2.5) / 3.5)
    r = ex.compare_schemes(df, metric="relacc").iloc[0]
    assert r["better"] and not r["below"] and np.isclose(r["improvement_pct"], 100.0)


def test_table_runs_and_improvement_table(f, digits):
    res, lam = ex.table_runs(f, "lenet5", digits, [[12, 8, 10]], trials=2, seed=0, lam_enc_grid=[0.0],
                             lam_dec_grid=[0.0], tune_trials=1)
    assert set(res["received"]) == {10} and set(res["stragglers"]) == {2}
    imp = ex.improvement_table(res)
    assert {"rmse_norms_pct", "rmse_rms_pct", "relacc_pct", "paper_rmse_pct"} <= set(imp.columns)
    assert imp["paper_rmse_pct"].iloc[0] == 15.0  # LeNet5's paper average
    assert list(imp["n_workers"])[-1] == "mean"
    summ = ex.summary_table(res)
    assert {"loss", "rmse_norms", "rmse_rms", "relacc", "relacc_ci"} <= set(summ.columns)


def test_paper_family():
    assert ex.paper_family("vit_base_patch16_224") == "vit"
    assert ex.paper_family("vit_large") == "vit"
    assert ex.paper_family("lenet5") == "lenet5"
    assert ex.paper_family("resnet18") == ""


def test_coded_samples_roundtrip_and_interpolation(digits):
    x = digits.x_test[:6]
    table = ex.coded_samples(x, 10, labels=digits.y_test[:6])
    imgs, alphas = ex.stack_images(table, "input")
    np.testing.assert_allclose(imgs, x, rtol=0, atol=1e-6)
    gcc_imgs, betas = ex.stack_images(table, "gcc")
    assert gcc_imgs.shape == (10, 1, 16, 16) and np.all(np.diff(betas) > 0)
    rough = ex.coded_roughness(table).set_index("scheme")
    assert rough.loc["input", "spatial_hf"] == 1.0


def test_coding_cost_columns(f, digits):
    t = ex.coding_cost(f, digits.x_test[:6], 10, 2, repeats=2, warmup=1)
    assert len(t) == 4 and (t["forward_s"] > 0).all()
    np.testing.assert_allclose(t["overhead"], (t["encode_s"] + t["decode_s"]) / t["forward_s"])
    s = ex.cost_summary(t)
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
    assert (folder / "hardware.json").exists()
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
