"""numpy / torch helpers: a fixed real matrix applied along axis 0 of an array or a tensor.

torch is optional and never imported here: a tensor can only exist if the caller imported
torch, so ``sys.modules`` tells whether an argument may be one.
"""
from __future__ import annotations

import sys

import numpy as np

__all__ = ["is_torch", "to_numpy", "form_of", "convert", "matmul"]


def is_torch(x) -> bool:
    """True if ``x`` is a torch tensor (without importing torch)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def to_numpy(x) -> np.ndarray:
    """numpy view/copy of a numpy array, array-like or torch tensor (moved to the CPU)."""
    if is_torch(x):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def form_of(X):
    """Key of the float64 matrix's copy that multiplies ``X``: X's real dtype and device (None: float64)."""
    if is_torch(X):
        torch = sys.modules["torch"]
        real = X.real if X.is_complex() else X
        return ("torch", real.dtype if real.is_floating_point() else torch.float64, X.device)
    dtype = X.dtype
    if dtype.kind == "c":
        dtype = np.dtype({"F": np.float32, "D": np.float64, "G": np.longdouble}.get(dtype.char, np.float64))
    return None if dtype.kind != "f" or dtype == np.float64 else ("numpy", dtype.str)


def convert(matrix, form):
    """The float64 ``matrix`` in the form :func:`form_of` names."""
    if form[0] == "torch":
        torch = sys.modules["torch"]
        return torch.tensor(matrix, dtype=torch.float64).to(device=form[2], dtype=form[1])
    return matrix.astype(form[1])


def matmul(op, X):
    """``op @ X`` along axis 0: X (n, *shape) -> (p, *shape), ``op`` in ``form_of(X)``.

    Floating and complex dtypes (and torch's device) are kept; integers and bools give float64.

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.backend import matmul
    >>> matmul(np.array([[1.0, 1.0], [0.0, 2.0]]), np.array([1j, 1.0]))
    array([1.+1.j, 2.+0.j])
    """
    p = op.shape[0]
    if is_torch(X):
        torch = sys.modules["torch"]
        if not (X.is_floating_point() or X.is_complex()):
            X = X.to(torch.float64)
        X2 = X.reshape(X.shape[0], -1)
        out = torch.complex(op @ X2.real, op @ X2.imag) if X.is_complex() else op @ X2
        return out.reshape((p,) + tuple(X.shape[1:]))
    if X.dtype.kind not in "fc":
        X = X.astype(np.float64)
    return (op @ X.reshape(X.shape[0], -1)).reshape((p,) + X.shape[1:])
