"""gcc.dnn.training: same seed => same weights; cache hits; a stale cache entry is an error; the
accuracies the ci batch's networks reach (read from its saved models table, never retrained)."""
import json
import os

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
torch = pytest.importorskip("torch")
pytest.importorskip("timm")
pytest.importorskip("sklearn")

from gcc.dnn import data, models, training  # noqa: E402

torch.set_num_threads(1)
FAST = {"epochs": 1, "train_images": 256, "warmup_epochs": 0}


@pytest.fixture(scope="module")
def digits():
    return data.load_digits16(size=28)


def _same(a, b):
    sa, sb = a.model.state_dict(), b.model.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


@pytest.mark.parametrize("name", ["lenet5", "repvgg", "vit"])
def test_same_seed_same_weights(digits, name):
    a = training.train_embedded_model(name, data=digits, seed=3, recipe=FAST, use_cache=False, threads=1)
    b = training.train_embedded_model(name, data=digits, seed=3, recipe=FAST, use_cache=False, threads=1)
    c = training.train_embedded_model(name, data=digits, seed=4, recipe=FAST, use_cache=False, threads=1)
    assert _same(a, b) and not _same(a, c)
    assert a.test_accuracy == b.test_accuracy
    assert not a.model.training


def test_repvgg_is_deployed_after_training(digits):
    from timm.models.byobnet import RepVggBlock

    t = training.train_embedded_model("repvgg", data=digits, recipe=FAST, use_cache=False, threads=1)
    blocks = [m for m in t.model.modules() if isinstance(m, RepVggBlock)]
    assert blocks and all(b.reparam_conv is not None for b in blocks)
    assert t.n_parameters == models.n_parameters(t.model) < t.extra["n_parameters_train"]


def test_cache_hit_returns_identical_model(digits, tmp_path, monkeypatch):
    monkeypatch.setenv("GCC_MODEL_CACHE", str(tmp_path))
    first = training.train_embedded_model("repvgg", data=digits, recipe=FAST, threads=1)
    assert not first.cache_hit
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".json", ".pt"]
    meta = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert meta["test_accuracy"] == first.test_accuracy and meta["n_parameters"] == first.n_parameters
    second = training.train_embedded_model("repvgg", data=digits, recipe=FAST, threads=1)
    assert second.cache_hit and second.key == first.key and _same(first, second)
    assert second.test_accuracy == first.test_accuracy and second.summary()["dataset"] == "digits"


def test_cached_checkpoint_for_another_architecture(digits, tmp_path, monkeypatch):
    monkeypatch.setenv("GCC_MODEL_CACHE", str(tmp_path))
    first = training.train_embedded_model("lenet5", data=digits, recipe=FAST, threads=1)
    torch.save(models.small_vit().state_dict(), tmp_path / f"{first.key}.pt")  # a foreign file under the key
    with pytest.raises(ValueError, match=rf"another architecture.*{first.key}\.pt"):
        training.train_embedded_model("lenet5", data=digits, recipe=FAST, threads=1)


def test_cache_key_depends_on_config_recipe_data_seed():
    base = training.cache_key({"arch": "vit"}, {"epochs": 1}, "d", 0)
    assert base == training.cache_key({"arch": "vit"}, {"epochs": 1}, "d", 0)
    assert base != training.cache_key({"arch": "vit", "depth": 2}, {"epochs": 1}, "d", 0)
    assert base != training.cache_key({"arch": "vit"}, {"epochs": 2}, "d", 0)
    assert base != training.cache_key({"arch": "vit"}, {"epochs": 1}, "d", 1)
    assert base != training.cache_key({"arch": "vit"}, {"epochs": 1}, "e", 0)


def test_training_restores_global_torch_state(digits):
    threads, det = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.manual_seed(123)
    expected = torch.rand(1)
    torch.manual_seed(123)
    training.train_embedded_model("lenet5", data=digits, recipe=FAST, use_cache=False, threads=1)
    assert torch.equal(torch.rand(1), expected)  # the caller's RNG stream is untouched
    assert torch.get_num_threads() == threads and torch.are_deterministic_algorithms_enabled() == det


def test_unknown_model_name_and_bad_recipe(digits):
    with pytest.raises(ValueError, match="'name' parameter of train_embedded_model"):
        training.train_embedded_model("resnet", data=digits)
    with pytest.raises(ValueError, match="'recipe' parameter of train_model.*epochs = -1 is not an int >= 0"):
        training.train_embedded_model("lenet5", data=digits, recipe={"epochs": -1}, use_cache=False)


#: What the ci profile's short training (one epoch of 30,000 images, seed 0, one thread) reaches on
#: the Fashion-MNIST test set, less a margin for another CPU's rounding: measured LeNet-5 80.9%,
#: RepVGG 86.0%, ViT 76.7%. The default profile's floors (89 / 90 / 87%) are those of its own run
#: (DEFAULT_FLOORS), checked when the results root holds a default run.
CI_FLOORS = {"lenet5": 0.78, "repvgg": 0.83, "vit": 0.73}
DEFAULT_FLOORS = {"lenet5": 0.89, "repvgg": 0.90, "vit": 0.87}


def test_ci_models_reach_accuracy(ci_results):
    """From the ci batch's saved models table (no training here)."""
    import pandas as pd

    table = pd.read_csv(ci_results / "dnn_models" / "models.csv").set_index("model")
    assert list(table.reset_index().columns[:4]) == ["model", "dataset", "n_parameters", "test_accuracy"]
    if set(table["dataset"]) != {"fashion-mnist"}:
        pytest.skip("the ci batch ran on the fallback digits (Fashion-MNIST not installed)")
    for name, floor in CI_FLOORS.items():
        assert table.loc[name, "test_accuracy"] >= floor, name
    assert table.loc["lenet5", "n_parameters"] == 61706


def test_default_models_reach_the_floors():
    """The default profile's networks on Fashion-MNIST, read from the book's results root when the
    last dnn_models run there was a default one (skipped otherwise: the suite never trains them)."""
    import pandas as pd

    from gcc import results

    folder = results.results_dir("dnn_models", create=False)
    record = results.read_run_record(folder)
    if record.get("profile") != "default" or not (folder / "models.csv").exists():
        pytest.skip("no default-profile run of dnn_models in the results root")
    table = pd.read_csv(folder / "models.csv").set_index("model")
    if set(table["dataset"]) != {"fashion-mnist"}:
        pytest.skip("the default run used the fallback digits")
    for name, floor in DEFAULT_FLOORS.items():
        assert table.loc[name, "test_accuracy"] >= floor, (name, table.loc[name, "test_accuracy"])
