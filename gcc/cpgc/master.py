"""The master's incremental recoverability decision and decoder: peeling, then elimination.

Block k is recoverable when ``e_k`` lies in the row space of the received coefficient rows;
peeling costs ``(m - 1) b`` subtractions for a degree-m row of blocks of length b, the rest is an
:class:`IncrementalRREF`, and :meth:`Master.decode` eliminates what peeling leaves once.
"""
from __future__ import annotations

import math
from fractions import Fraction
from numbers import Integral, Real

import numpy as np

from ..validation import BOOL, ArrayLike, InstanceOf, Interval, invalid, validate, validate_params
from .codes import CPGCCode
from .elimination import MAX_SPARSE_DEGREE

__all__ = ["TOLERANCE", "Master", "IncrementalRREF", "rref_recoverable", "required_blocks"]

_TOL = 1e-9

#: the tolerance q: the fraction of blocks an iteration may give up, in [0, 1)
TOLERANCE = Interval(Real, 0, 1, closed="left")
_BLOCKS = Interval(Integral, 1, None)
_POSITIVE = Interval(Real, 0, None, closed="neither")
#: a coefficient matrix (real, finite)
MATRIX = ArrayLike(ndim=2, dtype=np.float64, finite=True)
#: message values and right-hand sides: real, finite
VALUES = ArrayLike(dtype=np.float64, finite=True)


@validate_params({"n_blocks": _BLOCKS, "tolerance": TOLERANCE})
def required_blocks(n_blocks: int, tolerance: float) -> int:
    """Blocks the master waits for: ``ceil(n_blocks (1 - q))``.

    Parameters
    ----------
    n_blocks : int
        ``>= 1``.
    tolerance : float
        q in [0, 1).

    q is read as the decimal it prints as (``0.15`` is 3/20) and the ceiling is exact: 40 (1 - 0.15)
    gives 34, not binary floating point's 35.

    Examples
    --------
    >>> from gcc.cpgc import required_blocks
    >>> required_blocks(40, 0.0), required_blocks(40, 0.15), required_blocks(40, 0.7)
    (40, 34, 12)
    >>> required_blocks(5, 0.8), required_blocks(5, np.nextafter(0.8, 0.0)), required_blocks(5, np.nextafter(1.0, 0.0))
    (1, 2, 1)
    """
    need = math.ceil(n_blocks * (1 - Fraction(repr(float(tolerance)))))
    return int(need)


@validate_params({"matrix": MATRIX, "tol": _POSITIVE})
def rref_recoverable(matrix: np.ndarray, values: np.ndarray | None = None, tol: float = _TOL):
    """Which unknowns a linear system determines, by Gaussian elimination with partial pivoting.

    Parameters
    ----------
    matrix : array_like, shape (n_rows, n_unknowns)
        Real, finite coefficients.
    values : array_like, shape (n_rows, ...), optional
        Real, finite right-hand sides, reduced alongside (a row operation costs ``n_unknowns + b``).
    tol : float
        Entries below ``tol`` times the largest entry (at least 1) count as zero; ``> 0``.

    Returns
    -------
    recoverable : ndarray of bool, shape (n_unknowns,)
        ``e_k`` lies in the row space of ``matrix``.
    solution : ndarray, shape (n_unknowns, b) or None
        The determined unknowns (rows of unrecoverable ones are NaN), when ``values`` is given.
    ops : int
        Multiply-add operations spent.

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
    if matrix.shape[1] == 0:
        raise invalid("matrix", "rref_recoverable", "a 2-D array with at least one column (unknown)", matrix,
                      f"its shape is {matrix.shape}")
    if values is not None:
        values = validate(values, VALUES, "values", "rref_recoverable")
        if values.ndim == 0 or values.shape[0] != matrix.shape[0]:
            raise invalid("values", "rref_recoverable", f"an array of shape (n_rows, ...) with n_rows = "
                          f"{matrix.shape[0]} (the rows of 'matrix')", values, f"its shape is {values.shape}")
    return _eliminate(matrix, values, tol)


def _eliminate(matrix, values=None, tol=_TOL):
    """:func:`rref_recoverable` of checked float arrays (the master's own call, unchecked)."""
    M = np.array(matrix, dtype=float)
    n, u = M.shape
    V = np.zeros((n, 0)) if values is None else np.array(values, dtype=float).reshape(n, -1)
    b = V.shape[1]
    eps = tol * max(np.abs(M).max() if M.size else 0.0, 1.0)
    pivots, ops, row = [], 0, 0
    for col in range(u):
        if row >= n:
            break
        p = row + int(np.argmax(np.abs(M[row:, col])))
        if abs(M[p, col]) <= eps:
            continue
        if p != row:
            M[[row, p]], V[[row, p]] = M[[p, row]], V[[p, row]]
        piv = M[row, col]
        M[row] /= piv
        V[row] /= piv
        ops += u + b
        others = np.flatnonzero(np.abs(M[:, col]) > eps)
        others = others[others != row]
        if others.size:
            f = M[others, col][:, None]
            M[others] -= f * M[row]
            V[others] -= f * V[row]
            ops += others.size * (u + b)
        M[np.abs(M) <= eps] = 0.0
        pivots.append(col)
        row += 1
    pivot_set = np.zeros(u, dtype=bool)
    pivot_set[pivots] = True
    alone = ~np.any(M[: len(pivots)][:, ~pivot_set], axis=1)      # pivot rows without a free entry
    recoverable = np.zeros(u, dtype=bool)
    recoverable[np.array(pivots, dtype=int)[alone]] = True
    if values is None:
        return recoverable, None, ops
    solution = np.full((u, b), np.nan)
    solution[np.array(pivots, dtype=int)[alone]] = V[: len(pivots)][alone]
    return recoverable, solution, ops


class IncrementalRREF:
    """Reduced row-echelon form of coefficient rows fed one at a time; which unknowns they fix.

    Parameters
    ----------
    n_unknowns : int
        B, the length of a row.
    sparse : bool
        Keep rows as dicts of their nonzero entries (rows of a few blocks: RCSC), else a dense (B, B) array.
    scale : float
        Largest coefficient magnitude: entries below ``tol * max(scale, 1)`` count as zero.

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.cpgc.master import IncrementalRREF
    >>> rref = IncrementalRREF(3)
    >>> for row in ([1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0]):   # an odd cycle
    ...     _ = rref.add(np.array(row))
    ...     print(rref.determined().tolist())
    [False, False, False]
    [False, False, False]
    [True, True, True]
    """

    @validate_params({"n_unknowns": _BLOCKS, "sparse": BOOL, "scale": Interval(Real, 0, None),
                      "tol": _POSITIVE})
    def __init__(self, n_unknowns: int, sparse: bool = True, scale: float = 1.0, tol: float = _TOL):
        self.n_unknowns, self.sparse = int(n_unknowns), bool(sparse)
        self.eps = tol * max(float(scale), 1.0)
        self.rank = 0
        if self.sparse:
            self._rows, self._holders, self._single = {}, {}, set()
        else:
            B = self.n_unknowns
            self._R = np.zeros((B, B))
            self._piv = np.zeros(B, dtype=np.intp)
            self._is_piv = np.zeros(B, dtype=bool)

    def add(self, row) -> bool:
        """Reduce one row (real, finite, length B) into the form; True when it raised the rank."""
        row = validate(row, ArrayLike(shape=(self.n_unknowns,), dtype=np.float64, finite=True), "row",
                       "IncrementalRREF.add")
        return self._add(row)

    def _add(self, row) -> bool:
        """:meth:`add` of a checked row (the master's own coefficient rows)."""
        return self._add_sparse(row) if self.sparse else self._add_dense(row)

    def _add_sparse(self, row) -> bool:
        rows, holders, eps = self._rows, self._holders, self.eps
        v = {}
        for c in np.flatnonzero(row).tolist():
            a = float(row[c])
            if c in rows:
                for fc, fv in rows[c].items():
                    v[fc] = v.get(fc, 0.0) - a * fv
            else:
                v[c] = v.get(c, 0.0) + a
        v = {c: x for c, x in v.items() if abs(x) > eps}
        if not v:
            return False
        p = min(v, key=lambda c: len(holders.get(c, ())))
        pv = v.pop(p)
        f = {c: x / pv for c, x in v.items()}
        for q in holders.pop(p, ()):
            r = rows[q]
            g = r.pop(p)
            for c, x in f.items():
                y = r.get(c, 0.0) - g * x
                if abs(y) > eps:
                    r[c] = y
                    holders.setdefault(c, set()).add(q)
                elif c in r:
                    del r[c]
                    holders[c].discard(q)
            if not r:
                self._single.add(q)
        rows[p] = f
        for c in f:
            holders.setdefault(c, set()).add(p)
        if not f:
            self._single.add(p)
        self.rank += 1
        return True

    def _add_dense(self, v) -> bool:
        r, R, eps = self.rank, self._R, self.eps
        v = v - v[self._piv[:r]] @ R[:r] if r else v.copy()   # never the caller's row in place
        v[self._is_piv | (np.abs(v) <= eps)] = 0.0
        if not v.any():
            return False
        p = int(np.abs(v).argmax())
        v /= v[p]
        if r:
            R[:r] -= np.outer(R[:r, p], v)
            R[:r][np.abs(R[:r]) <= eps] = 0.0
        R[r], self._piv[r], self._is_piv[p] = v, p, True
        self.rank += 1
        return True

    def determined(self) -> np.ndarray:
        """Which unknowns the rows fed so far determine, bool (B,)."""
        out = np.zeros(self.n_unknowns, dtype=bool)
        if self.sparse:
            out[list(self._single)] = True
        elif self.rank:
            r = self.rank
            out[self._piv[:r][np.count_nonzero(self._R[:r], axis=1) == 1]] = True
        return out


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
    recovered, peeled : ndarray of bool, shape (n_blocks,)
        Blocks recoverable from what has arrived; the subset recovered by peeling alone.
    need : int
        Blocks the iteration waits for (``complete`` once that many are recovered).
    n_messages : int
        Messages received so far (the communication load).
    ops : dict
        ``peel`` (subtractions of known blocks, times b) and ``rank`` (elimination multiply-adds).

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
        self._rows = []             # every received (coefficients, value) for threshold decoding
        self._coef = []             # every received coefficient row, in order (the decision)
        self._fed = 0               # of which fed to the RREF so far
        self._block_shape = None    # of the values, fixed by the first one
        self._valueless = 0         # messages received without a value (decode() needs them all)
        sparse = int((code.coefficients != 0).sum(axis=2).max()) <= MAX_SPARSE_DEGREE
        self._rref = IncrementalRREF(B, sparse=sparse, scale=float(np.abs(code.coefficients).max()))

    # -- state ---------------------------------------------------------------------------------
    @property
    def recovered(self) -> np.ndarray:
        if self.code.any_k is not None:
            full = len(self._workers) >= self.code.any_k
            return np.full(self.code.n_blocks, full)
        coef, rref = self._coef, self._rref
        while self._fed < len(coef):                # each row is reduced once, when needed
            rref._add(coef[self._fed])             # the code's rows: checked by CPGCCode
            self._fed += 1
        return self._peeled | rref.determined()

    @property
    def peeled(self) -> np.ndarray:
        """Blocks recovered by peeling alone, shape (n_blocks,) (a copy; no elimination involved)."""
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
            The results carried, real and finite, shape (rows_in_message, *block_shape) (or
            block_shape for a single row; the first value fixes it); omitted: only the decision.
        """
        code = self.code
        worker = validate(worker, Interval(Integral, 0, code.n_workers - 1), "worker", "Master.receive")
        message = validate(message, Interval(Integral, 0, code.n_messages - 1), "message", "Master.receive")
        if (worker, message) in self._received:
            raise invalid("message", "Master.receive", f"a message not yet received from worker {worker}",
                          message)
        rows = code.message_rows(message)
        if value is not None:
            value = self._check_value(value, len(rows), message)
        self._received.add((worker, message))
        self._workers.add(worker)
        self.n_messages += 1
        self._valueless += value is None
        for n, j in enumerate(rows):
            coef = code.coefficients[worker, j]
            val = None if value is None else value[n]
            if code.any_k is not None:
                self._rows.append((coef, val))
            else:
                self._coef.append(coef)
                self._add_row(coef.copy(), None if val is None else val.copy())
        if code.any_k is None:
            # Elimination can add at most len(pending) blocks: skip it while even that cannot
            # complete the iteration (``recovered`` still feeds it on demand, so it stays exact).
            peeled = int(self._peeled.sum())
            if peeled >= self.need:
                return True
            if peeled + len(self._pending) < self.need:
                return False
        return self.complete

    def _check_value(self, value, n_rows, message):
        """A message's values as float64 (n_rows, *block_shape), or the contract error."""
        value = validate(value, VALUES, "value", "Master.receive")
        shape, dims = self._block_shape, value.shape
        if n_rows == 1 and (not dims or dims[0] != 1):
            value = value[None, ...]
            dims = value.shape
        if not dims or dims[0] != n_rows or (shape is not None and dims[1:] != shape):
            block = "*block_shape" if shape is None else ", ".join(str(d) for d in shape)
            before = "" if shape is None else ", the block shape of the values received before"
            raise invalid("value", "Master.receive", f"an array of shape ({n_rows}, {block}) (one block per "
                          f"row of message {message}{before})", value, f"its shape is {value.shape}")
        self._block_shape = dims[1:]
        return value

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

    # -- output --------------------------------------------------------------------------------
    def decode(self) -> np.ndarray:
        """Values of the recoverable blocks, shape (n_blocks, *block_shape), NaN where unrecovered.

        Every message must have come with its value; the elimination's work is added to ``ops["rank"]``.
        """
        code = self.code
        if self._valueless:
            raise invalid("value", "Master.receive", "given for every message before decode()", None,
                          f"{self._valueless} of the {self.n_messages} messages came without one")
        if code.any_k is not None:
            return self._decode_threshold()
        shape = self._block_shape
        if shape is None:
            return np.full((code.n_blocks,), np.nan)
        out = np.full((code.n_blocks,) + shape, np.nan)
        for k, v in self._peeled_values.items():
            out[k] = v
        unknown = ~self._peeled
        if self._pending and unknown.any():
            M = np.array([c[unknown] for c, _ in self._pending])
            V = np.array([v.reshape(-1) for _, v in self._pending])
            rec, sol, ops = _eliminate(M, V)
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
