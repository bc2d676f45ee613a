"""gcc.dnn.training: same seed => same weights; cache hits; accuracy of the embedded models."""
import json
import os

import numpy as np
import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
torch = pytest.importorskip("torch")
pytest.importorskip("timm")
pytest.importorskip("sklearn")

from gcc.dnn import data, training  # noqa: E402

torch.set_num_threads(1)
FAST = {"epochs": 1}


@pytest.fixture(scope="module")
def digits():
    return data.load_digits16()


def _same(a, b):
    sa, sb = a.model.state_dict(), b.model.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


@pytest.mark.parametrize("name", ["lenet5", "vit"])
def test_same_seed_same_weights(digits, name):
    a = training.train_digits_model(name, seed=3, recipe=FAST, data=digits, use_cache=False, threads=1)
    b = training.train_digits_model(name, seed=3, recipe=FAST, data=digits, use_cache=False, threads=1)
    c = training.train_digits_model(name, seed=4, recipe=FAST, data=digits, use_cache=False, threads=1)
    assert _same(a, b)
    assert not _same(a, c)
    assert a.test_accuracy == b.test_accuracy


def test_cache_hit_returns_identical_model(digits, tmp_path, monkeypatch):
    monkeypatch.setenv("GCC_MODEL_CACHE", str(tmp_path))
    first = training.train_digits_model("lenet5", seed=0, recipe=FAST, data=digits, threads=1)
    assert not first.cache_hit
    files = sorted(p.suffix for p in tmp_path.iterdir())
    assert files == [".json", ".pt"]
    meta = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert meta["test_accuracy"] == first.test_accuracy
    second = training.train_digits_model("lenet5", seed=0, recipe=FAST, data=digits, threads=1)
    assert second.cache_hit and second.key == first.key
    assert _same(first, second)
    assert second.test_accuracy == first.test_accuracy
    assert not second.model.training


def test_cache_key_depends_on_config_recipe_seed():
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
    training.train_digits_model("lenet5", seed=0, recipe=FAST, data=digits, use_cache=False, threads=1)
    assert torch.equal(torch.rand(1), expected)  # the caller's RNG stream is untouched
    assert torch.get_num_threads() == threads and torch.are_deterministic_algorithms_enabled() == det


def test_unknown_model_name():
    with pytest.raises(ValueError, match="'name' parameter of train_digits_model"):
        training.train_digits_model("resnet")


def test_ci_models_reach_accuracy(ci_results):
    """From the ci batch's saved results: ViT >= 97% and LeNet-5 >= 95% test accuracy on digits."""
    import pandas as pd

    table = pd.read_csv(ci_results / "dnn_stragglers" / "models.csv").set_index("model")
    assert table.loc["vit", "test_accuracy"] >= 0.97
    assert table.loc["lenet5", "test_accuracy"] >= 0.95
