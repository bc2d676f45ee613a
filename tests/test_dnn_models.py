"""gcc.dnn models and data: shapes, the digits split, and the offline paper-profile path."""
import os

import numpy as np
import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
torch = pytest.importorskip("torch")
pytest.importorskip("timm")
pytest.importorskip("sklearn")

from gcc.dnn import data, models  # noqa: E402

torch.set_num_threads(1)


def test_digits16_split_is_fixed_and_normalised():
    d1, d2 = data.load_digits16(), data.load_digits16()
    assert d1.x_train.shape[1:] == (1, 16, 16) and d1.x_train.dtype == np.float32
    n = len(d1.y_train) + len(d1.y_val) + len(d1.y_test)
    assert n == 1797
    np.testing.assert_array_equal(d1.x_test, d2.x_test)
    np.testing.assert_array_equal(d1.y_val, d2.y_val)
    # normalised with the training split's statistics
    assert abs(float(d1.x_train.mean())) < 1e-5 and abs(float(d1.x_train.std()) - 1) < 1e-4
    # every class in every split (stratified)
    for y in (d1.y_train, d1.y_val, d1.y_test):
        assert set(np.unique(y)) == set(range(10))


def test_digits16_rejects_bad_size():
    with pytest.raises(ValueError, match="'size' parameter of load_digits16"):
        data.load_digits16(size=4)


def test_image_batches_distinct_and_seeded():
    b = data.image_batches(50, 10, 4, seed=3)
    assert b.shape == (4, 10)
    assert all(len(set(row)) == 10 for row in b)
    np.testing.assert_array_equal(b, data.image_batches(50, 10, 4, seed=3))


@pytest.mark.parametrize("config", [models.VIT_DIGITS_CONFIG, models.LENET_DIGITS_CONFIG])
def test_embedded_models_shapes(config):
    model = models.build_model(config).eval()
    with torch.no_grad():
        out = model(torch.zeros(3, 1, 16, 16))
    assert out.shape == (3, 10)


def test_vit_digits_is_a_timm_vit_with_16_patches():
    from timm.models.vision_transformer import VisionTransformer

    model = models.vit_digits()
    assert isinstance(model, VisionTransformer)
    assert model.patch_embed.num_patches == 16


def test_build_model_rejects_unknown_arch():
    with pytest.raises(ValueError, match="'arch' key"):
        models.build_model({"arch": "resnet"})


def _tiny_image_folder(root, n_classes=2, per_class=3, size=40):
    from PIL import Image

    rng = np.random.default_rng(0)
    for c in range(n_classes):
        folder = root / f"class_{c}"
        folder.mkdir(parents=True)
        for i in range(per_class):
            arr = rng.integers(0, 256, size=(size, size + 5, 3), dtype=np.uint8)
            Image.fromarray(arr).save(folder / f"img_{i}.png")
    return root


def test_paper_path_offline_timm_model_on_image_folder(tmp_path):
    """The paper profile's path: timm model by name + ImageFolder + f, all offline."""
    from gcc.dnn.inference import SoftmaxFunction

    root = _tiny_image_folder(tmp_path / "val")
    model = models.timm_model("vit_tiny_patch16_224", pretrained=False, num_classes=2, img_size=32)
    assert model.pretrained_cfg["input_size"] == (3, 32, 32)
    x, y, classes = data.image_folder(root, model=model)
    assert x.shape == (6, 3, 32, 32) and x.dtype == torch.float32
    assert classes == ["class_0", "class_1"]
    np.testing.assert_array_equal(y, [0, 0, 0, 1, 1, 1])
    f = SoftmaxFunction(model, device="cpu")
    probs = f(x)
    assert probs.shape == (6, 2)
    torch.testing.assert_close(probs.sum(1), torch.ones(6))
    # subset selection is seeded
    x2, y2, _ = data.image_folder(root, model=model, max_images=4, seed=1)
    assert len(y2) == 4


def test_paper_path_pretrained_weights_from_local_file(tmp_path):
    """pretrained=True reads a local weights file (timm pretrained_cfg_overlay file=), no download."""
    src = models.timm_model("vit_tiny_patch16_224", pretrained=False, img_size=32)
    path = tmp_path / "weights.pth"
    torch.save(src.state_dict(), path)
    loaded = models.timm_model("vit_tiny_patch16_224", pretrained=True, weights_file=path, img_size=32)
    via_ckpt = models.build_model({"arch": "timm", "name": "vit_tiny_patch16_224", "checkpoint_path": str(path),
                                   "img_size": 32})
    for a, b, c in zip(src.state_dict().values(), loaded.state_dict().values(), via_ckpt.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
        torch.testing.assert_close(a, c, rtol=0, atol=0)


def test_timm_model_rejects_missing_file(tmp_path):
    with pytest.raises(ValueError, match="'weights_file' parameter of timm_model"):
        models.timm_model("vit_tiny_patch16_224", pretrained=True, weights_file=tmp_path / "nope.pth")
