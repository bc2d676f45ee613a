"""Uncoded and replication schemes with the codes' interface, for latency comparisons.

Both decode exactly but need specific workers: uncoded needs all K, replication
needs one copy of every input. They expose ``is_decodable(received)`` so that
:func:`gcc.distributed.coded_compute` waits for exactly that instead of a count.
"""
from __future__ import annotations

import numpy as np

from gcc.validation import ArrayLike, check_int, check_received, invalid, validate

#: worker indices of a received set (ints; 1.7 is no worker)
_INDICES = ArrayLike(ndim=1, dtype=np.int64, description="a 1-D sequence of int worker indices")

__all__ = ["Uncoded", "Replication"]


class Replication:
    """Input k is sent to workers k, k + K, k + 2K, ...; decode from the first copy of each.

    Parameters
    ----------
    n_inputs : int
        K.
    n_workers : int
        N >= K. With N a multiple of K every input has N/K copies; otherwise the
        first ``N mod K`` inputs get one more.
    """

    def __init__(self, n_inputs: int, n_workers: int):
        self.n_inputs = n_inputs
        self.n_workers = n_workers
        self.n_inputs, self.n_workers = self._validate()

    def _validate(self) -> tuple[int, int]:
        owner = type(self).__name__
        k = check_int(self.n_inputs, "n_inputs", owner, minimum=1)
        n = check_int(self.n_workers, "n_workers", owner, minimum=k, constraint="an int >= n_inputs")
        return k, n

    @property
    def assignment(self) -> np.ndarray:
        """(N,) index of the input each worker holds."""
        k, n = self._validate()
        return np.arange(n) % k

    def encode(self, X):
        """(K, ...) -> (N, ...): the copies."""
        k, n = self._validate()
        if not hasattr(X, "__len__") or len(X) != k:
            raise invalid("X", f"{type(self).__name__}.encode", f"an array of n_inputs = {k} rows", X,
                          f"it has {len(X) if hasattr(X, '__len__') else 'none'}")
        return X[self.assignment]

    def _received(self, received, owner: str) -> np.ndarray:
        """Distinct worker indices in [0, N) (any order; empty allowed) as an int array."""
        _, n = self._validate()
        idx = validate(received, _INDICES, "received", owner)
        if idx.size and (idx.min() < 0 or idx.max() >= n or np.unique(idx).size != idx.size):
            raise invalid("received", owner, f"distinct worker indices in [0, {n})", received)
        return idx

    def is_decodable(self, received) -> bool:
        """True when every input has at least one received copy.

        ``received``: distinct worker indices in ``[0, n_workers)``, in any order (may be empty).
        """
        k, _ = self._validate()
        idx = self._received(received, f"{type(self).__name__}.is_decodable")
        return len(set(self.assignment[idx].tolist())) == k

    def decode(self, Y, received):
        """(len(received), ...) -> (K, ...): the first received copy of each input."""
        k, n = self._validate()
        owner = f"{type(self).__name__}.decode"
        received = np.asarray(check_received(received, n, owner), dtype=int)
        if not hasattr(Y, "__len__") or not hasattr(Y, "__getitem__"):
            raise invalid("Y", owner, f"an array of len(received) = {received.size} rows", Y)
        if len(Y) != received.size:
            raise invalid("Y", owner, f"an array of len(received) = {received.size} rows", Y,
                          f"it has {len(Y)}")
        if not self.is_decodable(received):
            missing = sorted(set(range(k)) - set(self.assignment[received].tolist()))
            raise invalid("received", owner, "a set holding a copy of every input",
                          received.tolist(), f"no copy of inputs {missing}")
        holder = self.assignment[received]
        first = [int(np.flatnonzero(holder == j)[0]) for j in range(k)]
        return Y[first]


class Uncoded(Replication):
    """Input k on worker k (N = K); the master waits for all K.

    Parameters
    ----------
    n_inputs : int
        K (= N).
    """

    def __init__(self, n_inputs: int):
        super().__init__(n_inputs, n_inputs)
