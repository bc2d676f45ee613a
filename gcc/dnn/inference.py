"""f = the softmax output of a trained classifier, as a batched function on coded inputs.

:class:`SoftmaxFunction` evaluates f: R^{C×H×W} → R^m on a batch of coded inputs at once,
numpy in, numpy out (a tensor stays on its device), on :func:`best_device`.
"""
from __future__ import annotations

import os
from numbers import Integral
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
from torch import nn  # noqa: E402

from ..backend import to_numpy  # noqa: E402
from ..validation import Interval, NoneOr, check_finite, invalid, validate, validate_params  # noqa: E402
from ._checks import DEVICE, INT_TUPLE, MODULE, Device, real_tensor  # noqa: E402

__all__ = ["best_device", "SoftmaxFunction"]


def best_device(prefer: str | torch.device | None = None) -> torch.device:
    """The device to run a model on: ``prefer``, else ``$GCC_DEVICE``, else CUDA, MPS, CPU (first available).

    Parameters
    ----------
    prefer : str or torch.device, optional
        ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"`` or ``"auto"``/None; one this machine has.

    Returns
    -------
    torch.device

    Examples
    --------
    >>> from gcc.dnn.inference import best_device
    >>> best_device("cpu")
    device(type='cpu')
    """
    if prefer is None or (isinstance(prefer, str) and prefer == "auto"):
        env = os.environ.get("GCC_DEVICE") or None
        if env is not None and env != "auto":
            return torch.device(validate(env, DEVICE, "$GCC_DEVICE", "best_device"))
        prefer = None
    if prefer is not None:
        return torch.device(validate(prefer, DEVICE, "prefer", "best_device"))
    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


class SoftmaxFunction:
    """The worker function f(x) = softmax(model(x)), vectorised over a batch.

    Parameters
    ----------
    model : torch.nn.Module
        A classifier returning logits (B, m); moved to ``device`` and put in eval mode.
    device : str or torch.device, optional
        Where the forward pass runs; default :func:`best_device`.
    input_shape : tuple of int, optional
        Shape of one image; inputs (B, prod(input_shape)) are reshaped to (B, *input_shape).
    max_batch : int
        Largest chunk per forward pass.

    Examples
    --------
    >>> f = SoftmaxFunction(model, input_shape=(1, 28, 28))      # doctest: +SKIP
    >>> f(np.zeros((5, 1, 28, 28))).sum(axis=1)                 # doctest: +SKIP
    array([1., 1., 1., 1., 1.])
    """

    @validate_params({"model": MODULE, "device": NoneOr(Device(auto=True)), "input_shape": NoneOr(INT_TUPLE),
                      "max_batch": Interval(Integral, 1, None)})
    def __init__(self, model: nn.Module, device: str | torch.device | None = None,
                 input_shape: tuple[int, ...] | None = None, max_batch: int = 1024):
        self.device = best_device(device)
        self.model = model.to(self.device).eval()
        self.input_shape = tuple(input_shape) if input_shape is not None else None
        self.max_batch = int(max_batch)
        try:
            self.dtype = next(self.model.parameters()).dtype
        except StopIteration:
            self.dtype = torch.float32

    def __repr__(self) -> str:
        return f"SoftmaxFunction({type(self.model).__name__}, device={self.device}, input_shape={self.input_shape})"

    def _check_batch(self, x, owner: str) -> None:
        """A non-empty, finite batch of the model's input shape (flattened when ``input_shape`` is known)."""
        shape = tuple(x.shape)
        if self.input_shape is not None:
            flat = int(np.prod(self.input_shape))
            if not (shape[1:] == self.input_shape or shape[1:] == (flat,)):
                raise invalid("x", owner, f"a batch of shape (B, *{self.input_shape}) or (B, {flat})", x,
                              f"its shape is {shape}")
        if shape[0] == 0:
            raise invalid("x", owner, "a non-empty batch", x, f"its shape is {shape}")
        check_finite(x, "x", owner)     # softmax of NaN is NaN: the error would surface only in the decode

    @torch.no_grad()
    def forward_tensor(self, x: torch.Tensor) -> torch.Tensor:
        """Softmax probabilities (B, m) of a tensor already on ``self.device`` in the model's dtype."""
        owner = "SoftmaxFunction.forward_tensor"
        if not isinstance(x, torch.Tensor) or not x.is_floating_point():
            raise invalid("x", owner, "a floating-point torch.Tensor (use SoftmaxFunction(x) for arrays)", x)
        real_tensor(x, "x", owner, min_ndim=2 if self.input_shape is not None else 1)
        self._check_batch(x, owner)
        return self._forward(x, owner)

    @torch.no_grad()
    def _forward(self, x: torch.Tensor, owner: str) -> torch.Tensor:
        if self.input_shape is not None and x.ndim == 2:
            x = x.reshape(x.shape[0], *self.input_shape)
        try:
            outs = [torch.softmax(self.model(x[s:s + self.max_batch]), dim=-1)
                    for s in range(0, x.shape[0], self.max_batch)]
        except torch.cuda.OutOfMemoryError:
            raise
        except RuntimeError as err:      # a shape or channel count the network does not take
            raise invalid("x", owner, f"a batch that {type(self.model).__name__} takes", x,
                          str(err).strip().splitlines()[0][:300]) from None
        out = torch.cat(outs)
        if out.ndim != 2:
            raise invalid("model", "SoftmaxFunction", "a classifier returning logits of shape (B, m)",
                          type(self.model).__name__, f"it returned shape {tuple(out.shape)}")
        return out

    def __call__(self, x: Any):
        """Evaluate f on a real batch (B, *input_shape) or (B, prod(input_shape)).

        Parameters
        ----------
        x : numpy.ndarray or torch.Tensor

        Returns
        -------
        Same type as ``x``, shape (B, m)
            Probabilities; dtype and device as ``x`` when it is floating point, else float32.
        """
        owner = "SoftmaxFunction"
        arr = real_tensor(x, "x", owner, min_ndim=2 if self.input_shape is not None else 1)
        self._check_batch(arr, owner)
        if isinstance(arr, torch.Tensor):
            out = self._forward(arr.detach().to(device=self.device, dtype=self.dtype), owner)
            dtype = arr.dtype if arr.is_floating_point() else torch.float32
            return out.to(device=arr.device, dtype=dtype)
        out = to_numpy(self._forward(torch.as_tensor(arr, dtype=self.dtype).to(self.device), owner))
        dtype = arr.dtype if np.issubdtype(arr.dtype, np.floating) else np.float32
        return out.astype(dtype, copy=False)
