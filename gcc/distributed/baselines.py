"""Uncoded and replication schemes with the codes' interface, for latency comparisons.

Both decode exactly but need specific workers: uncoded needs all K, replication
needs one copy of every input. They expose ``is_decodable(received)`` so that
:func:`gcc.distributed.coded_compute` waits for exactly that instead of a count.
"""
from __future__ import annotations

import numpy as np

from gcc.validation import check_int, invalid

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
        if len(X) != k:
            raise invalid("X", f"{type(self).__name__}.encode", f"an array of n_inputs = {k} rows", X,
                          f"it has {len(X)}")
        return X[self.assignment]

    def is_decodable(self, received) -> bool:
        """True when every input has at least one received copy."""
        k, _ = self._validate()
        return len(set(self.assignment[np.asarray(received, dtype=int)].tolist())) == k

    def decode(self, Y, received):
        """(len(received), ...) -> (K, ...): the first received copy of each input."""
        k, _ = self._validate()
        received = np.asarray(received, dtype=int)
        if not self.is_decodable(received):
            missing = sorted(set(range(k)) - set(self.assignment[received].tolist()))
            raise invalid("received", f"{type(self).__name__}.decode", "a set holding a copy of every input",
                          received.tolist(), f"no copy of inputs {missing}")
        owner = self.assignment[received]
        first = [int(np.flatnonzero(owner == j)[0]) for j in range(k)]
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
