"""gcc.dnn data and models: the IDX / CIFAR-10 / folder readers and their errors, the digits
fallback, the three networks (sizes, RepVGG deployment), checkpoints, the offline paper path."""
import gzip
import os
import pickle

import numpy as np
import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
torch = pytest.importorskip("torch")
pytest.importorskip("timm")
pytest.importorskip("sklearn")

from gcc.dnn import data, formats, models  # noqa: E402

torch.set_num_threads(1)


def _idx_bytes(array: np.ndarray) -> bytes:
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in array.shape)
    return header + array.astype(np.uint8).tobytes()


def _mnist_folder(root, n_train=60, n_test=20, gz=True, side=28):
    rng = np.random.default_rng(0)
    root.mkdir(parents=True, exist_ok=True)
    arrays = {
        "train-images-idx3-ubyte": rng.integers(0, 256, (n_train, side, side)),
        "train-labels-idx1-ubyte": np.arange(n_train) % 10,
        "t10k-images-idx3-ubyte": rng.integers(0, 256, (n_test, side, side)),
        "t10k-labels-idx1-ubyte": np.arange(n_test) % 10,
    }
    for stem, arr in arrays.items():
        raw = _idx_bytes(arr)
        if gz:
            with gzip.open(root / f"{stem}.gz", "wb") as fh:
                fh.write(raw)
        else:
            (root / stem).write_bytes(raw)
    return root


# --- IDX -------------------------------------------------------------------------------------

@pytest.mark.parametrize("gz", [True, False])
def test_read_idx_plain_and_gzip(tmp_path, gz):
    folder = _mnist_folder(tmp_path / "m", gz=gz)
    files = formats.find_idx_files(folder)
    images = formats.read_idx(files[("train", "images")], ndim=3)
    labels = formats.read_idx(files[("train", "labels")], ndim=1)
    assert images.shape == (60, 28, 28) and images.dtype == np.uint8
    np.testing.assert_array_equal(labels, np.arange(60) % 10)


def test_read_idx_errors_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope-idx1-ubyte"):
        formats.read_idx(tmp_path / "nope-idx1-ubyte")
    bad = tmp_path / "bad-magic"
    bad.write_bytes(b"\x12\x34\x56\x78" + bytes(20))
    with pytest.raises(ValueError, match=r"magic number is 0x12345678.*bad-magic|bad-magic.*magic number is 0x12345678"):
        formats.read_idx(bad)
    good = _idx_bytes(np.zeros((10, 4, 4)))
    cut = tmp_path / "cut-idx3-ubyte"
    cut.write_bytes(good[:-7])
    with pytest.raises(ValueError, match=r"truncated") as err:
        formats.read_idx(cut)
    assert "cut-idx3-ubyte" in str(err.value) and "(10, 4, 4)" in str(err.value)
    labels = tmp_path / "labels-idx1-ubyte"
    labels.write_bytes(_idx_bytes(np.arange(5)))
    with pytest.raises(ValueError, match="an IDX file with 3 dimension"):
        formats.read_idx(labels, ndim=3)
    broken_gz = tmp_path / "broken.gz"
    with gzip.open(broken_gz, "wb") as fh:
        fh.write(good)
    broken_gz.write_bytes(broken_gz.read_bytes()[:-30])
    with pytest.raises(ValueError, match="broken.gz"):
        formats.read_idx(broken_gz)


def test_find_idx_files_lists_what_is_missing(tmp_path):
    folder = _mnist_folder(tmp_path / "m")
    (folder / "t10k-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(FileNotFoundError, match=r"missing t10k-labels-idx1-ubyte\[\.gz\]"):
        formats.find_idx_files(folder)
    with pytest.raises(FileNotFoundError, match="MNIST-format folder not found"):
        formats.find_idx_files(tmp_path / "absent")


def test_load_mnist_format_splits_and_normalises(tmp_path):
    folder = _mnist_folder(tmp_path / "fashion", n_train=60, n_test=20)
    d = data.load_mnist_format(folder, name="fashion-mnist", val_size=10)
    assert (len(d.y_train), len(d.y_val), len(d.y_test)) == (50, 10, 20)
    assert d.x_train.shape == (50, 1, 28, 28) and d.x_train.dtype == np.float32
    assert abs(float(d.x_train.mean())) < 1e-4 and abs(float(d.x_train.std()) - 1) < 1e-3
    assert d.classes[0] == "T-shirt/top" and d.n_classes == 10
    assert set(d.y_val) | set(d.y_train) <= set(range(10))
    again = data.load_mnist_format(folder, name="fashion-mnist", val_size=10)
    np.testing.assert_array_equal(d.y_val, again.y_val)  # the hold-out is seeded
    assert d.data_id == again.data_id and d.data_id.startswith("fashion-mnist-1x28-50/10/20")
    assert "the folder fashion" in d.describe()  # no absolute path on a page


def test_mnist_format_count_mismatch(tmp_path):
    folder = _mnist_folder(tmp_path / "m")
    with gzip.open(folder / "t10k-labels-idx1-ubyte.gz", "wb") as fh:
        fh.write(_idx_bytes(np.arange(19)))
    with pytest.raises(ValueError, match="t10k-images-idx3-ubyte.gz has 20 images, t10k-labels-idx1-ubyte.gz 19"):
        data.load_mnist_format(folder)


# --- CIFAR-10 and folders ----------------------------------------------------------------------

def _cifar_folder(root, per_batch=4):
    root.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        batch = {b"data": rng.integers(0, 256, (per_batch, 3072), dtype=np.uint8),
                 b"labels": list(range(per_batch))}
        with open(root / name, "wb") as fh:
            pickle.dump(batch, fh)
    return root


def test_cifar10_reader_and_errors(tmp_path):
    folder = _cifar_folder(tmp_path / "cifar-10-batches-py")
    d = data.load_images(str(folder), val_size=5)
    assert d.name == "cifar10" and d.x_train.shape == (15, 3, 32, 32) and len(d.y_test) == 4
    assert len(d.mean) == 3
    (folder / "data_batch_3").write_bytes(b"not a pickle")
    with pytest.raises(ValueError, match="data_batch_3"):
        formats.read_cifar10(folder)
    (folder / "test_batch").unlink()
    with pytest.raises(FileNotFoundError, match="missing test_batch"):
        formats.read_cifar10(folder)


def test_image_folder_without_images(tmp_path):
    (tmp_path / "val" / "class_0").mkdir(parents=True)
    (tmp_path / "val" / "class_0" / "readme.txt").write_text("no image here")
    with pytest.raises(FileNotFoundError, match="holds no images"):
        data.image_folder(tmp_path / "val", models.LeNet5())
    with pytest.raises(FileNotFoundError, match="image folder not found"):
        data.image_folder(tmp_path / "absent", models.LeNet5())


# --- fallback --------------------------------------------------------------------------------

def test_auto_falls_back_to_digits_with_a_banner(monkeypatch):
    monkeypatch.delenv("GCC_FASHION_MNIST", raising=False)
    monkeypatch.setattr(data, "FASHION_MNIST_DIRS", ("/nonexistent/fashion-mnist",))
    with pytest.warns(data.FallbackDataWarning, match="Fallback data: Fashion-MNIST was not found"):
        d = data.load_images("auto")
    assert d.fallback and d.name == "digits" and d.x_train.shape[1:] == (1, 28, 28)
    assert "1,797 handwritten 8x8 digits" in data.data_banner(d)
    with pytest.raises(FileNotFoundError, match="Fashion-MNIST not found"):
        data.load_images("fashion-mnist")


def test_a_named_folder_never_falls_back(monkeypatch, tmp_path):
    monkeypatch.setenv("GCC_FASHION_MNIST", str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError, match="missing"):
        data.load_images("auto")


def test_load_images_rejects_unknown_names():
    with pytest.raises(ValueError, match="'dataset' parameter of load_images"):
        data.load_images("imagenet")
    with pytest.raises(ValueError, match="'folder' parameter of load_images"):
        data.load_images("mnist")


def test_digits_split_is_fixed_and_normalised():
    d1, d2 = data.load_digits16(), data.load_digits16()
    assert d1.x_train.shape[1:] == (1, 16, 16) and d1.x_train.dtype == np.float32
    assert len(d1.y_train) + len(d1.y_val) + len(d1.y_test) == 1797
    np.testing.assert_array_equal(d1.x_test, d2.x_test)
    assert abs(float(d1.x_train.mean())) < 1e-5 and abs(float(d1.x_train.std()) - 1) < 1e-4
    for y in (d1.y_train, d1.y_val, d1.y_test):
        assert set(np.unique(y)) == set(range(10))
    assert not d1.fallback and data.data_banner(d1) == ""
    with pytest.raises(ValueError, match="'size' parameter of load_digits16"):
        data.load_digits16(size=4)


def test_image_batches_distinct_and_seeded():
    b = data.image_batches(50, 10, 4, seed=3)
    assert b.shape == (4, 10) and all(len(set(row)) == 10 for row in b)
    np.testing.assert_array_equal(b, data.image_batches(50, 10, 4, seed=3))


# --- models ----------------------------------------------------------------------------------

def test_lenet5_at_the_papers_size():
    net = models.build_model({"arch": "lenet5", "img_size": 28})
    assert models.n_parameters(net) == 61706  # the paper: "about 6e4"
    assert net(torch.zeros(2, 1, 28, 28)).shape == (2, 10)


def test_repvgg_is_timms_and_deploys_to_single_branch():
    from timm.models.byobnet import ByobNet, RepVggBlock

    net = models.build_model({"arch": "repvgg"}).eval()
    assert isinstance(net, ByobNet)
    blocks = [m for m in net.modules() if isinstance(m, RepVggBlock)]
    assert blocks and all(b.reparam_conv is None for b in blocks)
    fused = models.deploy(net)
    fused_blocks = [m for m in fused.modules() if isinstance(m, RepVggBlock)]
    assert all(b.reparam_conv is not None and not hasattr(b, "conv_1x1") for b in fused_blocks)
    x = torch.randn(3, 1, 28, 28)
    with torch.no_grad():
        torch.testing.assert_close(fused(x), net(x), rtol=1e-4, atol=1e-4)
    assert models.n_parameters(fused) < models.n_parameters(net)
    assert blocks[0].reparam_conv is None  # deploy works on a copy


def test_small_vit_tokens():
    from timm.models.vision_transformer import VisionTransformer

    vit = models.small_vit()
    assert isinstance(vit, VisionTransformer) and vit.patch_embed.num_patches == 16
    assert vit(torch.zeros(1, 1, 28, 28)).shape == (1, 10)


def test_build_model_rejects_unknown_arch():
    with pytest.raises(ValueError, match="'arch' key is one of"):
        models.build_model({"arch": "resnet"})


def test_checkpoint_of_another_architecture(tmp_path):
    path = tmp_path / "lenet.pt"
    torch.save(models.LeNet5().state_dict(), path)
    with pytest.raises(ValueError, match=r"another architecture.*missing.*lenet\.pt") as err:
        models.load_checkpoint(models.small_vit(), path, architecture="vit")
    assert "checkpoint of the architecture vit" in str(err.value)
    (tmp_path / "junk.pt").write_bytes(b"junk")
    with pytest.raises(ValueError, match="junk.pt"):
        models.load_checkpoint(models.LeNet5(), tmp_path / "junk.pt")
    with pytest.raises(FileNotFoundError, match="absent.pt"):
        models.load_checkpoint(models.LeNet5(), tmp_path / "absent.pt")
    loaded = models.load_checkpoint(models.LeNet5(), path)
    assert isinstance(loaded, models.LeNet5)


# --- the paper profile's path, offline -------------------------------------------------------

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
    probs = SoftmaxFunction(model, device="cpu")(x)
    torch.testing.assert_close(probs.sum(1), torch.ones(6))
    x2, y2, _ = data.image_folder(root, model=model, max_images=4, seed=1)
    assert len(y2) == 4


def test_paper_path_pretrained_weights_from_local_file(tmp_path):
    """pretrained=True reads a local weights file (timm pretrained_cfg_overlay file=), no download."""
    src = models.timm_model("vit_tiny_patch16_224", pretrained=False, img_size=32)
    path = tmp_path / "weights.pth"
    torch.save(src.state_dict(), path)
    loaded = models.timm_model("vit_tiny_patch16_224", pretrained=True, weights_file=path, img_size=32)
    via_ckpt = models.timm_model("vit_tiny_patch16_224", checkpoint_path=path, img_size=32)
    for a, b, c in zip(src.state_dict().values(), loaded.state_dict().values(), via_ckpt.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
        torch.testing.assert_close(a, c, rtol=0, atol=0)
    with pytest.raises(ValueError, match=r"another architecture.*weights.pth"):
        models.timm_model("vit_small_patch16_224", checkpoint_path=path, img_size=32)


def test_timm_model_rejects_missing_file(tmp_path):
    with pytest.raises(ValueError, match="'weights_file' parameter of timm_model"):
        models.timm_model("vit_tiny_patch16_224", pretrained=True, weights_file=tmp_path / "nope.pth")


def test_timm_model_weights_need_pretrained_and_are_never_downloaded(tmp_path):
    path = tmp_path / "weights.pth"
    path.write_bytes(b"")
    with pytest.raises(ValueError, match=r"'weights_file' parameter of timm_model must be None when "
                                         r"pretrained=False .*weights.pth"):
        models.timm_model("vit_tiny_patch16_224", weights_file=path)
    # test_vit's weights are on the Hub only, never in this offline cache
    with pytest.raises(ValueError, match=r"'pretrained' parameter of timm_model must be False, or True with "
                                         r"weights_file=.*not downloaded.*'test_vit'.*Got True"):
        models.timm_model("test_vit", pretrained=True)


# --- arguments (issue 15) ----------------------------------------------------------------------

def test_build_model_refuses_keys_it_would_ignore():
    with pytest.raises(ValueError, match="'config' parameter of build_model .*did you mean 'img_size'"):
        models.build_model({"arch": "lenet5", "img_sise": 28})
    with pytest.raises(ValueError, match="'config' parameter of build_model .*'arch' key is one of"):
        models.build_model({"img_size": 28})
    with pytest.raises(ValueError, match="'name' parameter of timm_model must be the name of a timm architecture"):
        models.timm_model("no_such_net")


def test_architectures_refuse_shapes_they_would_truncate():
    with pytest.raises(ValueError, match="'patch_size' parameter of small_vit must be a divisor of img_size = 28"):
        models.small_vit(patch_size=5)
    with pytest.raises(ValueError, match="'num_heads' parameter of small_vit must be a divisor of embed_dim = 64"):
        models.small_vit(num_heads=3)
    with pytest.raises(ValueError, match="'widths' parameter of repvgg .*2 widths, 1 depths, 2 strides"):
        models.repvgg(widths=(8, 16), depths=(1,), strides=(1, 2))
    with pytest.raises(ValueError, match=r"'depths' parameter of repvgg .*depths\[1\] = 0"):
        models.repvgg(widths=(8, 16), depths=(1, 0), strides=(1, 2))
    with pytest.raises(ValueError, match="'num_classes' parameter of LeNet5 must be an int >= 1. Got 0"):
        models.LeNet5(num_classes=0)


def test_data_arguments_are_checked(tmp_path):
    with pytest.raises(ValueError, match="'folder' parameter of load_images must be None when dataset='digits'"):
        data.load_images("digits", folder=tmp_path)
    with pytest.raises(ValueError, match="'dataset' parameter of load_images .*when 'folder' is given"):
        data.load_images(str(tmp_path / "elsewhere"), folder=tmp_path)
    with pytest.raises(ValueError, match="'split_seed' parameter of load_digits16 must be an int >= 0. Got None"):
        data.load_digits16(split_seed=None)
    with pytest.raises(ValueError, match="'path' parameter of read_idx must be a path"):
        formats.read_idx(3)
    with pytest.raises(ValueError, match="'batch_size' parameter of image_batches must be an int in"):
        data.image_batches(10, 2.0, 3, seed=0)
    with pytest.raises(ValueError, match="'seed' parameter of image_batches must be an int >= 0. Got None"):
        data.image_batches(10, 2, 3, seed=None)


def test_image_data_checks_its_fields():
    d = data.load_digits16(size=8)
    fields = {f: getattr(d, f) for f in ("name", "x_train", "y_train", "x_val", "y_val", "x_test", "y_test", "mean",
                                         "std", "classes", "source", "fallback")}
    with pytest.raises(ValueError, match="'std' parameter of ImageData .*a constant channel cannot be normalised"):
        data.ImageData(**{**fields, "std": (0.0,)})
    with pytest.raises(ValueError, match="'classes' parameter of ImageData must be a tuple of at least 10 class names"):
        data.ImageData(**{**fields, "classes": ("a", "b")})
    with pytest.raises(ValueError, match="'y_val' parameter of ImageData"):
        data.ImageData(**{**fields, "y_val": d.y_val[:-1]})
