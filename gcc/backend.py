"""numpy / torch array helpers: apply a fixed linear operator along axis 0.

torch is optional: it is never imported here. A tensor can only exist if the caller
already imported torch, so ``sys.modules`` tells whether an argument may be one.
"""
from __future__ import annotations

import sys

import numpy as np

from .validation import BOOL, ArrayLike, validate

__all__ = ["is_torch", "to_numpy", "DenseOperator"]


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


#: a linear operator's matrix
MATRIX = ArrayLike(ndim=2, dtype=np.float64, description="a 2-D array of real numbers")


class DenseOperator:
    """A dense (p, n) matrix applied along axis 0 of numpy arrays or torch tensors.

    Converted copies (numpy float32, torch dtype/device) are cached, so repeated calls
    on the same device cost one matrix product each; :attr:`nbytes` counts them. (Named so that it
    is not taken for :class:`scipy.sparse.linalg.LinearOperator`, a matrix-free operator.)

    Parameters
    ----------
    matrix : array_like, shape (p, n)
        Real operator (complex is rejected: the operators of the codes are real and act on the
        real and imaginary parts of complex data alike); stored as float64, read-only.
    check_finite : bool
        Reject NaN and inf entries (one reduction; the codes check their operators themselves).

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.backend import DenseOperator
    >>> op = DenseOperator([[1.0, 1.0], [0.0, 2.0]])
    >>> op.apply(np.array([1.0, 2.0])), op.apply(np.array([1j, 1.0])), op.nbytes
    (array([3., 4.]), array([1.+1.j, 2.+0.j]), 32)
    """

    __slots__ = ("matrix", "_cache", "nbytes")

    def __init__(self, matrix, check_finite=True):
        if not (isinstance(matrix, np.ndarray) and matrix.dtype == np.float64 and matrix.ndim == 2):
            matrix = validate(matrix, MATRIX, "matrix", "DenseOperator")
        if check_finite is not True and check_finite is not False:
            check_finite = validate(check_finite, BOOL, "check_finite", "DenseOperator")
        if check_finite and not np.isfinite(matrix).all():
            validate(matrix, ArrayLike(ndim=2, dtype=np.float64, finite=True), "matrix", "DenseOperator")
        matrix = np.ascontiguousarray(matrix, dtype=np.float64)
        matrix.flags.writeable = False
        self.matrix = matrix
        self._cache = {}
        #: bytes held: the matrix and its converted copies
        self.nbytes = matrix.nbytes

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
            if real is np.float64:          # complex128 data: the matrix itself, no copy
                return self.matrix
            op = self._cache[key] = self.matrix.astype(real)
            self.nbytes += op.nbytes
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
            self.nbytes += op.element_size() * op.nelement()
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

