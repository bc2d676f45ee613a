"""gcc.dnn.inference: f = softmax(model(x)) keeps type, dtype and device; rows are distributions."""
import os

import numpy as np
import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
torch = pytest.importorskip("torch")
pytest.importorskip("timm")

from gcc.dnn import inference, models  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def f():
    torch.manual_seed(0)
    return inference.SoftmaxFunction(models.small_vit(), device="cpu", input_shape=(1, 28, 28))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_in_numpy_out_rows_sum_to_one(f, dtype):
    x = np.random.default_rng(0).standard_normal((7, 1, 28, 28)).astype(dtype)
    p = f(x)
    assert isinstance(p, np.ndarray) and p.dtype == dtype and p.shape == (7, 10)
    assert np.all(p >= 0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_torch_in_torch_out_dtype_device_kept(f, dtype):
    x = torch.randn(5, 1, 28, 28, dtype=dtype)
    p = f(x)
    assert isinstance(p, torch.Tensor) and p.dtype == dtype and p.device == x.device
    torch.testing.assert_close(p.sum(1), torch.ones(5, dtype=dtype), rtol=0, atol=1e-6)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_tensor_stays_on_cuda(f):
    x = torch.randn(4, 1, 28, 28, device="cuda")
    assert f(x).device == x.device


def test_flattened_inputs_and_chunking_agree(f):
    x = np.random.default_rng(1).standard_normal((9, 1, 28, 28)).astype(np.float32)
    chunked = inference.SoftmaxFunction(f.model, device="cpu", input_shape=(1, 28, 28), max_batch=2)
    np.testing.assert_allclose(chunked(x.reshape(9, -1)), f(x), rtol=1e-5, atol=1e-6)


def test_model_is_in_eval_mode_and_no_grad(f):
    assert not f.model.training
    x = torch.randn(2, 1, 28, 28, requires_grad=True)
    assert not f(x).requires_grad


def test_best_device_auto_and_override(monkeypatch):
    monkeypatch.delenv("GCC_DEVICE", raising=False)
    expected = "cuda" if torch.cuda.is_available() else ("mps" if torch.backends.mps.is_available() else "cpu")
    assert inference.best_device().type == expected
    monkeypatch.setenv("GCC_DEVICE", "cpu")
    assert inference.best_device().type == "cpu"
    assert inference.best_device("cpu").type == "cpu"


def test_max_batch_validated():
    with pytest.raises(ValueError, match="'max_batch' parameter of SoftmaxFunction"):
        inference.SoftmaxFunction(models.LeNet5(), max_batch=0)


def test_inputs_the_network_cannot_take_are_named(f):
    """Complex, empty, misshapen batches and unknown devices: the library's error, never a torch one (issue 15)."""
    with pytest.raises(ValueError, match="'x' parameter of SoftmaxFunction .*it holds complex values"):
        f(np.zeros((2, 1, 28, 28)) + 1j)
    with pytest.raises(ValueError, match="'x' parameter of SoftmaxFunction .*it holds complex values"):
        f(torch.zeros(2, 1, 28, 28, dtype=torch.complex64))
    with pytest.raises(ValueError, match=r"'x' parameter of SoftmaxFunction must be a batch of shape \(B, \*\(1, 28, 28\)\)"):
        f(np.zeros((2, 1, 16, 16)))
    with pytest.raises(ValueError, match="'x' parameter of SoftmaxFunction must be a non-empty batch"):
        f(np.zeros((0, 1, 28, 28)))
    x = np.zeros((2, 1, 28, 28))
    x[1, 0, 3, 4] = np.nan
    with pytest.raises(ValueError, match=r"'x' parameter of SoftmaxFunction must be free of NaN and inf "
                                         r"\(x\[1, 0, 3, 4\] = nan"):
        f(x)
    with pytest.raises(ValueError, match="'x' parameter of SoftmaxFunction.forward_tensor must be free of NaN"):
        f.forward_tensor(torch.full((2, 1, 28, 28), float("inf")))
    bare = inference.SoftmaxFunction(models.LeNet5(), device="cpu")
    with pytest.raises(ValueError, match="'x' parameter of SoftmaxFunction must be a batch that LeNet5 takes"):
        bare(np.zeros((2, 3, 28, 28), np.float32))
    with pytest.raises(ValueError, match="'x' parameter of SoftmaxFunction.forward_tensor must be a floating-point"):
        f.forward_tensor(np.zeros((2, 1, 28, 28)))
    with pytest.raises(ValueError, match="'device' parameter of SoftmaxFunction must be a torch device of this machine"):
        inference.SoftmaxFunction(models.LeNet5(), device="gpu")
    with pytest.raises(ValueError, match="'model' parameter of SoftmaxFunction must be a torch.nn.Module"):
        inference.SoftmaxFunction(np.sin)
    with pytest.raises(ValueError, match=r"'input_shape' parameter of SoftmaxFunction .*input_shape\[0\] = 0"):
        inference.SoftmaxFunction(models.LeNet5(), input_shape=(0, 28))


def test_a_bad_gcc_device_is_named(monkeypatch):
    monkeypatch.setenv("GCC_DEVICE", "tpu")
    with pytest.raises(ValueError, match=r"'\$GCC_DEVICE' parameter of best_device"):
        inference.best_device()
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    with pytest.raises(ValueError, match=rf"a torch device of this machine \(cpu.*\)\. Got 'cuda:{count}' instead"):
        inference.best_device(f"cuda:{count}")
