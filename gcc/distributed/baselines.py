"""Uncoded and replication schemes with the codes' interface, for latency comparisons.

Both decode exactly but need specific workers (uncoded: all K; replication: one copy of every
input); their ``is_decodable(received)`` tells :func:`gcc.distributed.coded_compute` when.
"""
from __future__ import annotations

import numpy as np

from gcc.validation import ArrayLike, check_finite, check_int, check_received, invalid, validate

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
        N >= 2K: two copies of every input at least (N = K is :class:`Uncoded`). With N a multiple
        of K every input has N/K copies; otherwise the first ``N mod K`` inputs get one more.
    """

    def __init__(self, n_inputs: int, n_workers: int):
        owner = type(self).__name__
        self.n_inputs = check_int(n_inputs, "n_inputs", owner, minimum=1)
        self.n_workers = check_int(n_workers, "n_workers", owner, minimum=2 * self.n_inputs,
                                   constraint="an int >= 2 * n_inputs (two copies of every input)")
        #: (N,) index of the input each worker holds
        self.assignment = np.arange(self.n_workers) % self.n_inputs

    def encode(self, X):
        """(K, ...) -> (N, ...): the copies."""
        if not hasattr(X, "__len__") or len(X) != self.n_inputs:
            owner = f"{type(self).__name__}.encode"
            raise invalid("X", owner, f"an array of n_inputs = {self.n_inputs} rows", X,
                          f"it has {len(X) if hasattr(X, '__len__') else 'none'}")
        return check_finite(X, "X", f"{type(self).__name__}.encode")[self.assignment]

    def is_decodable(self, received) -> bool:
        """True when every input has at least one received copy.

        ``received``: distinct worker indices in ``[0, n_workers)``, in any order (may be empty).
        """
        owner = f"{type(self).__name__}.is_decodable"
        idx = validate(received, _INDICES, "received", owner)
        if idx.size and (idx.min() < 0 or idx.max() >= self.n_workers or np.unique(idx).size != idx.size):
            raise invalid("received", owner, f"distinct worker indices in [0, {self.n_workers})", received)
        return np.unique(self.assignment[idx]).size == self.n_inputs

    def decode(self, Y, received):
        """(len(received), ...) -> (K, ...): the first received copy of each input."""
        owner = f"{type(self).__name__}.decode"
        received = np.asarray(check_received(received, self.n_workers, owner), dtype=int)
        if not hasattr(Y, "__len__") or not hasattr(Y, "__getitem__") or len(Y) != received.size:
            raise invalid("Y", owner, f"an array of len(received) = {received.size} rows", Y)
        Y = check_finite(Y, "Y", owner)
        holder = self.assignment[received]
        missing = sorted(set(range(self.n_inputs)) - set(holder.tolist()))
        if missing:
            raise invalid("received", owner, "a set holding a copy of every input", received.tolist(),
                          f"no copy of inputs {missing}")
        return Y[[int(np.flatnonzero(holder == j)[0]) for j in range(self.n_inputs)]]


class Uncoded(Replication):
    """Input k on worker k (N = K); the master waits for all K.

    Parameters
    ----------
    n_inputs : int
        K (= N).
    """

    def __init__(self, n_inputs: int):
        self.n_inputs = self.n_workers = check_int(n_inputs, "n_inputs", type(self).__name__, minimum=1)
        self.assignment = np.arange(self.n_workers)
