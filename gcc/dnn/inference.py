"""f = the softmax output of a trained classifier, as a batched function on coded inputs.

In the paper's experiments every worker n applies the same network to its coded image
x̃_n = u_enc(β_n) and returns "the output of the last softmax layer", so f: R^{C×H×W} → R^m with
m the number of classes. :class:`SoftmaxFunction` evaluates f on a whole batch of coded inputs at
once (one forward pass per chunk, ``torch.no_grad``, eval mode), which simulates N workers in one
call.

The function is type-preserving: a numpy array gives a numpy array of the same float dtype, a
torch tensor gives a tensor of the same dtype on the same device. The network itself runs on
the best available device (CUDA, then Apple MPS, then CPU) in its own dtype (float32).
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
from torch import nn  # noqa: E402

from ..backend import to_numpy  # noqa: E402
from ..validation import check_int  # noqa: E402

__all__ = ["best_device", "SoftmaxFunction"]


def best_device(prefer: str | torch.device | None = None) -> torch.device:
    """The device to run a model on: ``prefer`` if given, else CUDA, MPS, CPU (first available).

    Parameters
    ----------
    prefer : str or torch.device, optional
        ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"`` or ``"auto"``/None for the automatic choice.
        The environment variable ``GCC_DEVICE`` overrides the automatic choice.
    """
    if prefer is None or str(prefer) == "auto":
        prefer = os.environ.get("GCC_DEVICE") or None
    if prefer is not None and str(prefer) != "auto":
        return torch.device(prefer)
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
        A classifier returning logits of shape (B, m). It is moved to ``device`` and put in
        eval mode (dropout off, batch-norm statistics frozen).
    device : str or torch.device, optional
        Where the forward pass runs; default :func:`best_device`.
    input_shape : tuple of int, optional
        Shape of one image, e.g. (1, 28, 28). When given, inputs of shape (B, prod(input_shape))
        are reshaped to (B, *input_shape), so flattened coded vectors work too.
    max_batch : int
        Largest chunk per forward pass (bounds memory for large N on a GPU).

    Notes
    -----
    Calling ``f(X)`` with X of shape (B, *input_shape) returns an array of shape (B, m) whose rows
    are probability vectors (non-negative, summing to one). The forward pass runs under
    ``torch.no_grad`` in the model's dtype; the result is cast back to the input's dtype and
    device, so a float64 numpy encoder output gives float64 numpy probabilities.

    Examples
    --------
    >>> f = SoftmaxFunction(model, input_shape=(1, 28, 28))      # doctest: +SKIP
    >>> f(np.zeros((5, 1, 28, 28))).sum(axis=1)                 # doctest: +SKIP
    array([1., 1., 1., 1., 1.])
    """

    def __init__(self, model: nn.Module, device: str | torch.device | None = None,
                 input_shape: tuple[int, ...] | None = None, max_batch: int = 1024):
        max_batch = check_int(max_batch, "max_batch", "SoftmaxFunction", minimum=1)
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

    @torch.no_grad()
    def forward_tensor(self, x: torch.Tensor) -> torch.Tensor:
        """Softmax probabilities (B, m) of a tensor already on ``self.device`` in the model's dtype."""
        if self.input_shape is not None and x.ndim == 2:
            x = x.reshape(x.shape[0], *self.input_shape)
        outs = [torch.softmax(self.model(x[s:s + self.max_batch]), dim=-1) for s in range(0, x.shape[0], self.max_batch)]
        return torch.cat(outs) if outs else x.new_zeros((0,))

    def __call__(self, x: Any):
        """Evaluate f on a batch.

        Parameters
        ----------
        x : numpy.ndarray or torch.Tensor, shape (B, *input_shape) or (B, prod(input_shape))

        Returns
        -------
        Same type as ``x``, shape (B, m)
            Probabilities; dtype (and device, for tensors) as ``x`` when ``x`` is floating point,
            else float32.
        """
        if isinstance(x, torch.Tensor):
            out = self.forward_tensor(x.detach().to(device=self.device, dtype=self.dtype))
            dtype = x.dtype if x.is_floating_point() else torch.float32
            return out.to(device=x.device, dtype=dtype)
        arr = np.asarray(x)
        out = to_numpy(self.forward_tensor(torch.as_tensor(arr, dtype=self.dtype).to(self.device)))
        dtype = arr.dtype if np.issubdtype(arr.dtype, np.floating) else np.float32
        return out.astype(dtype, copy=False)
