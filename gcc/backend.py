"""numpy / torch array helpers: apply a fixed linear operator along axis 0.

torch is optional: it is never imported here. A tensor can only exist if the caller
already imported torch, so ``sys.modules`` tells whether an argument may be one.
"""
from __future__ import annotations

import sys

import numpy as np

__all__ = ["is_torch", "to_numpy", "LinearOperator"]


def is_torch(x) -> bool:
    """True if ``x`` is a torch tensor (without importing torch)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def to_numpy(x) -> np.ndarray:
    """numpy view/copy of a numpy array, array-like or torch tensor (moved to the CPU)."""
    if is_torch(x):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def _numpy_compute_dtype(dtype):
    """Result dtype of op @ X for a numpy X: floats/complex keep theirs, the rest -> float64."""
    if dtype.kind in "fc":
        return dtype
    return np.dtype(np.float64)


class LinearOperator:
    """A dense (p, n) matrix applied along axis 0 of numpy arrays or torch tensors.

    Converted copies (numpy float32, torch dtype/device) are cached, so repeated calls
    on the same device cost one matrix product each.

    Parameters
    ----------
    matrix : ndarray, shape (p, n)
        float64 operator; stored read-only.
    """

    __slots__ = ("matrix", "_cache")

    def __init__(self, matrix: np.ndarray):
        matrix = np.ascontiguousarray(matrix, dtype=np.float64)
        matrix.flags.writeable = False
        self.matrix = matrix
        self._cache = {}

    @property
    def shape(self):
        return self.matrix.shape

    def _numpy(self, dtype):
        if dtype == np.float64:
            return self.matrix
        key = ("numpy", dtype.str)
        op = self._cache.get(key)
        if op is None:
            # complex data: a real operator of matching precision (numpy promotes the product)
            real = {"F": np.float32, "D": np.float64, "G": np.longdouble}.get(dtype.char, dtype)
            op = self._cache[key] = self.matrix.astype(real)
        return op

    def tensor(self, like):
        """The matrix as a torch tensor of ``like``'s dtype and device (converted once, cached)."""
        torch = sys.modules["torch"]
        dtype = like.dtype
        key = ("torch", dtype, like.device)
        op = self._cache.get(key)
        if op is None:
            op = torch.tensor(self.matrix, dtype=torch.float64).to(
                device=like.device, dtype=dtype)
            self._cache[key] = op
        return op

    def apply(self, X):
        """Return ``matrix @ X`` along axis 0: X (n, *shape) -> (p, *shape), one matmul.

        numpy: floating/complex dtypes are preserved, integer and bool inputs give float64.
        torch: dtype and device are preserved (integer tensors are promoted to float64).
        """
        p, n = self.matrix.shape
        if is_torch(X):
            torch = sys.modules["torch"]
            if not (X.is_floating_point() or X.is_complex()):
                X = X.to(torch.float64)
            trailing = tuple(X.shape[1:])
            X2 = X.reshape(n, -1)
            if X.is_complex():
                op = self.tensor(X.real)
                out = torch.complex(op @ X2.real, op @ X2.imag)
            else:
                out = self.tensor(X) @ X2
            return out.reshape((p,) + trailing)
        X = np.asarray(X)
        dtype = _numpy_compute_dtype(X.dtype)
        if X.dtype != dtype:
            X = X.astype(dtype)
        trailing = X.shape[1:]
        out = self._numpy(dtype) @ X.reshape(n, -1)
        return out.reshape((p,) + trailing)

