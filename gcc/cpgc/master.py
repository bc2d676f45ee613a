"""The master's incremental recoverability decision and decoder: peeling, then a rank test.

Messages are fed one by one (:meth:`Master.receive`), so the same object serves the vectorised
simulator's tests, the gradient-descent simulation and a real distributed engine. Block k is
recoverable when ``e_k`` lies in the row space of the received coefficient rows. Peeling resolves
every row that has a single unknown block left (all uncoded results, and coded results whose other
blocks are known), at a cost of ``(m - 1) b`` subtractions for a degree-m row with blocks of length
b. What peeling leaves (rows with two or more unknown blocks) goes to a rank test: Gaussian
elimination of the residual rows restricted to the unknown columns.
"""
from __future__ import annotations

import math
from numbers import Real

import numpy as np

from ..validation import InstanceOf, Interval, check_int, invalid, validate_params
from .codes import CPGCCode

__all__ = ["TOLERANCE", "Master", "rref_recoverable", "required_blocks"]

_TOL = 1e-9

#: the tolerance q: the fraction of blocks an iteration may give up, in [0, 1)
TOLERANCE = Interval(Real, 0, 1, closed="left")


def required_blocks(n_blocks: int, tolerance: float) -> int:
    """Blocks the master waits for: ``ceil(n_blocks (1 - q))``.

    The product is rounded to 12 digits first so that e.g. 40 * (1 - 0.15) = 34.0000000001 in binary
    floating point still gives 34, not 35.

    Examples
    --------
    >>> from gcc.cpgc import required_blocks
    >>> required_blocks(40, 0.0), required_blocks(40, 0.15), required_blocks(40, 0.7)
    (40, 34, 12)
    """
    return int(math.ceil(round(n_blocks * (1.0 - tolerance), 12)))


def rref_recoverable(matrix: np.ndarray, values: np.ndarray | None = None, tol: float = _TOL):
    """Which unknowns a linear system determines, by Gaussian elimination with partial pivoting.

    Parameters
    ----------
    matrix : ndarray, shape (n_rows, n_unknowns)
    values : ndarray, shape (n_rows, b), optional
        Right-hand sides, reduced alongside (one row operation costs ``n_unknowns + b`` operations).
    tol : float
        Entries below ``tol`` times the largest entry of the matrix count as zero.

    Returns
    -------
    recoverable : ndarray of bool, shape (n_unknowns,)
        ``e_k`` lies in the row space of ``matrix``.
    solution : ndarray, shape (n_unknowns, b) or None
        The determined unknowns (rows of unrecoverable ones are NaN), when ``values`` is given.
    ops : int
        Multiply-add operations spent.

    Notes
    -----
    After reduction to reduced row-echelon form, ``e_k`` is in the row space exactly when k is a
    pivot column and its pivot row has no entry in a non-pivot column.

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.cpgc import rref_recoverable
    >>> rows = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]])
    >>> rref_recoverable(rows[:2])[0], rref_recoverable(rows)[0]
    (array([False, False, False]), array([ True,  True,  True]))
    >>> rec, sol, ops = rref_recoverable(rows, values=np.array([[3.0], [5.0], [2.0]]))
    >>> sol.ravel()
    array([0., 3., 2.])
    """
    M = np.array(matrix, dtype=float)
    n, u = M.shape
    V = None if values is None else np.array(values, dtype=float).reshape(n, -1)
    b = 0 if V is None else V.shape[1]
    scale = np.abs(M).max() if M.size else 0.0
    eps = tol * max(scale, 1.0)
    pivots = []
    ops = 0
    row = 0
    for col in range(u):
        if row >= n:
            break
        p = row + int(np.argmax(np.abs(M[row:, col])))
        if abs(M[p, col]) <= eps:
            continue
        if p != row:
            M[[row, p]] = M[[p, row]]
            if V is not None:
                V[[row, p]] = V[[p, row]]
        piv = M[row, col]
        M[row] /= piv
        if V is not None:
            V[row] /= piv
        ops += u + b
        others = np.flatnonzero(np.abs(M[:, col]) > eps)
        others = others[others != row]
        if others.size:
            f = M[others, col][:, None]
            M[others] -= f * M[row]
            if V is not None:
                V[others] -= f * V[row]
            ops += others.size * (u + b)
        M[np.abs(M) <= eps] = 0.0
        pivots.append(col)
        row += 1
    recoverable = np.zeros(u, dtype=bool)
    solution = None if V is None else np.full((u, b), np.nan)
    pivot_set = np.zeros(u, dtype=bool)
    pivot_set[pivots] = True
    for r, col in enumerate(pivots):
        if not np.any(M[r, ~pivot_set]):
            recoverable[col] = True
            if V is not None:
                solution[col] = V[r]
    return recoverable, solution, ops


class Master:
    """Incremental decoder of one iteration: accepts messages one by one.

    Parameters
    ----------
    code : gcc.cpgc.CPGCCode
        The task assignment.
    tolerance : float
        q in [0, 1): the iteration is complete once ``ceil(n_blocks (1 - q))`` blocks are
        recoverable (for codes without partial recovery, once everything is).

    Attributes
    ----------
    recovered : ndarray of bool, shape (n_blocks,)
        Blocks recoverable from what has arrived (peeled or determined by the rank test).
    peeled : ndarray of bool, shape (n_blocks,)
        The subset recovered by peeling alone.
    need : int
        Blocks the iteration waits for.
    complete : bool
    n_messages : int
        Messages received so far (the communication load).
    ops : dict
        ``peel`` (subtractions of known blocks, in block-length units times b), ``rank`` (elimination
        multiply-adds) when values are decoded.

    Notes
    -----
    Threshold codes (``code.any_k`` set: MDS, gradient coding) are decided by counting distinct
    workers, which is what their MDS property guarantees; their values are decoded by a dense solve
    (:meth:`decode`). The rank test runs only when peeling alone does not complete the iteration and
    the pending rows changed, on the pending rows restricted to still-unknown columns: e_k lies in
    the row space of all received rows iff k was peeled or e_k lies in the row space of that residual.

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.cpgc import Master, example_code_k4
    >>> master = Master(example_code_k4(), tolerance=0.0)
    >>> W = np.array([[1.0], [2.0], [3.0], [4.0]])           # the four block products
    >>> code = master.code
    >>> for worker, message in [(0, 0), (1, 0), (2, 1), (3, 1)]:
    ...     done = master.receive(worker, message, code.coefficients[worker, message] @ W)
    >>> done, master.n_messages, master.peeled.tolist()     # W_1, W_2, then W_2 + W_4, W_1 + W_2
    (False, 4, [True, True, False, True])
    >>> master.receive(3, 0, W[3]), master.decode().ravel()
    (False, array([ 1.,  2., nan,  4.]))
    """

    @validate_params({"code": InstanceOf(CPGCCode, "a gcc.cpgc.CPGCCode"), "tolerance": TOLERANCE})
    def __init__(self, code, tolerance: float = 0.0):
        self.code = code
        self.tolerance = float(tolerance)
        B = code.n_blocks
        self.need = B if not code.partial else required_blocks(B, self.tolerance)
        self.n_messages = 0
        self.ops = {"peel": 0, "rank": 0}
        self._received = set()
        self._workers = set()
        self._peeled = np.zeros(B, dtype=bool)
        self._peeled_values = {}
        self._pending = []          # [residual coefficient vector (B,), residual value or None]
        self._rank_recovered = np.zeros(B, dtype=bool)
        self._dirty = False         # pending rows or peeled set changed since the last rank test
        self._rows = []             # every received (coefficients, value) for threshold decoding

    # -- state ---------------------------------------------------------------------------------
    @property
    def recovered(self) -> np.ndarray:
        if self.code.any_k is not None:
            full = len(self._workers) >= self.code.any_k
            return np.full(self.code.n_blocks, full)
        if self._dirty:
            self._rank_test()
        return self._peeled | self._rank_recovered

    @property
    def peeled(self) -> np.ndarray:
        """Blocks recovered by peeling alone, shape (n_blocks,) (a copy; no rank test involved)."""
        if self.code.any_k is not None:
            return np.zeros(self.code.n_blocks, dtype=bool)
        return self._peeled.copy()

    @property
    def n_recovered(self) -> int:
        return int(self.recovered.sum())

    @property
    def complete(self) -> bool:
        return self.n_recovered >= self.need

    # -- input ---------------------------------------------------------------------------------
    def receive(self, worker: int, message: int, value=None) -> bool:
        """Take one message; return whether the iteration is complete.

        Parameters
        ----------
        worker, message : int
            Which worker sent it and its index among that worker's messages.
        value : array_like, optional
            The results carried: shape (rows_in_message, *block_shape), or (*block_shape) when the
            message has a single row. Only the decision is made when omitted.
        """
        code = self.code
        worker = check_int(worker, "worker", "Master.receive", minimum=0, maximum=code.n_workers - 1)
        message = check_int(message, "message", "Master.receive", minimum=0, maximum=code.n_messages - 1)
        if (worker, message) in self._received:
            raise invalid("message", "Master.receive", f"a message not yet received from worker {worker}",
                          message)
        self._received.add((worker, message))
        self._workers.add(worker)
        self.n_messages += 1
        rows = code.message_rows(message)
        if value is not None:
            value = np.asarray(value, dtype=float)
            if len(rows) == 1 and (value.ndim == 0 or value.shape[0] != 1):
                value = value[None, ...]
        for n, j in enumerate(rows):
            coef = code.coefficients[worker, j]
            val = None if value is None else value[n]
            if code.any_k is not None:
                self._rows.append((coef, val))
            else:
                self._add_row(coef.copy(), None if val is None else val.copy())
        if code.any_k is None:
            # The rank test can add at most len(pending) blocks: skip it while even that cannot
            # complete the iteration (``recovered`` still runs it on demand, so it stays exact).
            peeled = int(self._peeled.sum())
            if peeled >= self.need:
                return True
            if peeled + len(self._pending) < self.need:
                return False
        return self.complete

    def _add_row(self, coef, val):
        known = self._peeled & (coef != 0)
        if known.any():
            if val is not None:
                for k in np.flatnonzero(known):
                    val -= coef[k] * self._peeled_values[k]
                    self.ops["peel"] += val.size
            coef[known] = 0.0
        support = np.flatnonzero(coef)
        if support.size == 0:
            return
        if support.size > 1:
            self._pending.append([coef, val])
            self._dirty = True
            return
        self._peel(int(support[0]), coef, val)

    def _peel(self, k, coef, val):
        # A queue of newly known blocks: each may reduce pending rows to a single unknown.
        queue = [(k, coef, val)]
        while queue:
            k, coef, val = queue.pop()
            if self._peeled[k]:
                continue
            self._peeled[k] = True
            self._rank_recovered[k] = False
            if val is not None:
                self._peeled_values[k] = val / coef[k]
            still = []
            for entry in self._pending:
                c, v = entry
                if c[k] != 0:
                    if v is not None:
                        v -= c[k] * self._peeled_values[k]
                        self.ops["peel"] += v.size
                    c[k] = 0.0
                    sup = np.flatnonzero(c)
                    if sup.size == 1:
                        queue.append((int(sup[0]), c, v))
                        continue
                    if sup.size == 0:
                        continue
                still.append(entry)
            self._pending = still
            self._dirty = True

    def _rank_test(self):
        self._dirty = False
        unknown = ~self._peeled
        if not self._pending or not unknown.any():
            self._rank_recovered[:] = False
            return
        M = np.array([c[unknown] for c, _ in self._pending])
        rec, _, _ = rref_recoverable(M)
        self._rank_recovered[:] = False
        self._rank_recovered[np.flatnonzero(unknown)[rec]] = True

    # -- output --------------------------------------------------------------------------------
    def decode(self) -> np.ndarray:
        """Values of the recoverable blocks, shape (n_blocks, *block_shape); NaN where unrecovered.

        Requires that every message was received with its value. Adds the elimination work of the
        residual (or of the dense MDS solve) to ``ops["rank"]``.
        """
        code = self.code
        if code.any_k is not None:
            return self._decode_threshold()
        shape = None
        for k, v in self._peeled_values.items():
            shape = v.shape
            break
        if shape is None and self._pending:
            if self._pending[0][1] is None:
                raise invalid("value", "Master.receive", "given for every message before decode()", None)
            shape = self._pending[0][1].shape
        if shape is None:
            return np.full((code.n_blocks,), np.nan)
        out = np.full((code.n_blocks,) + shape, np.nan)
        for k, v in self._peeled_values.items():
            out[k] = v
        unknown = ~self._peeled
        if self._pending and unknown.any():
            if any(v is None for _, v in self._pending):
                raise invalid("value", "Master.receive", "given for every message before decode()", None)
            M = np.array([c[unknown] for c, _ in self._pending])
            V = np.array([v.reshape(-1) for _, v in self._pending])
            rec, sol, ops = rref_recoverable(M, V)
            self.ops["rank"] += ops
            idx = np.flatnonzero(unknown)[rec]
            out[idx] = sol[rec].reshape((-1,) + shape)
        return out

    def _decode_threshold(self):
        code = self.code
        if len(self._workers) < code.any_k:
            raise invalid("code", "Master.decode", f"decodable (messages from {code.any_k} workers)",
                          f"{len(self._workers)} workers")
        if code.name == "gc":
            raise invalid("code", "Master.decode", "a code with per-block values (not 'gc')", code.name)
        rows = self._rows[: code.any_k]
        G = np.array([c for c, _ in rows])
        V = np.array([np.asarray(v).reshape(-1) for _, v in rows])
        sol = np.linalg.solve(G, V)
        kb, nrhs = G.shape[0], V.shape[1]
        # LU factorisation plus forward and back substitution.
        self.ops["rank"] += int(round(2 * kb ** 3 / 3 + 2 * kb ** 2 * nrhs))
        return sol.reshape((kb,) + np.asarray(rows[0][1]).shape)
