"""The CPGC completion decision as it was before issue 16 (dense null-space elimination).

A frozen copy of ``gcc.cpgc.simulate.completion`` at commit b5c9220, the reference the
incremental decoder is tested against (identical times and messages on many seeds).
"""
import numpy as np

from gcc.cpgc.codes import CPGCCode
from gcc.cpgc.master import TOLERANCE, required_blocks
from gcc.validation import ArrayLike, InstanceOf, invalid, validate, validate_params

_TOL = 1e-9


@validate_params({"code": InstanceOf(CPGCCode, "a gcc.cpgc.CPGCCode"), "tolerance": TOLERANCE})
def reference_completion(code: CPGCCode, speeds: np.ndarray, tolerance: float = 0.0, return_recovered: bool = False):
    """Completion time, message count and recovered blocks for given worker speeds.

    Parameters
    ----------
    code : CPGCCode
    speeds : ndarray, shape (trials, n_workers)
        Time per task unit of each worker, ``alpha + X_i``.
    tolerance : float
        q in [0, 1).
    return_recovered : bool

    Returns
    -------
    times : ndarray, shape (trials,)
        ``inf`` for a trial whose condition never holds.
    messages : ndarray of int, shape (trials,)
    recovered : ndarray of bool, shape (trials, n_blocks), or None

    """
    speeds = validate(speeds, ArrayLike(shape=(None, code.n_workers), dtype=float,
                                        description=f"an array of shape (trials, {code.n_workers})"),
                      "speeds", "completion")
    T, K = speeds.shape
    B = code.n_blocks
    msg_times = speeds[:, :, None] * code.message_units()          # (T, K, n_messages)
    if code.any_k is not None:
        if code.n_messages != 1:
            raise invalid("code", "completion", "a threshold code with one message per worker", code.name)
        times = np.partition(msg_times[:, :, 0], code.any_k - 1, axis=1)[:, code.any_k - 1]
        messages = (msg_times[:, :, 0] <= times[:, None]).sum(axis=1)
        rec = np.ones((T, B), dtype=bool) if return_recovered else None
        return times, messages, rec

    need = required_blocks(B, tolerance) if code.partial else B
    R = code.n_rows
    coef = code.coefficients.reshape(K * R, B)                    # row id = worker * R + j
    nnz = coef != 0
    deg = nnz.sum(axis=1)
    single_block = np.where(deg == 1, nnz.argmax(axis=1), -1)
    last_of_message = np.ones(R, dtype=bool)
    last_of_message[:-1] = code.row_messages[1:] != code.row_messages[:-1]
    last_of_message = np.tile(last_of_message, K)
    D = int(deg.max())
    sup_idx = np.zeros((K * R, D), dtype=np.intp)
    sup_val = np.zeros((K * R, D))
    for rid in range(K * R):
        nz = np.flatnonzero(nnz[rid])
        sup_idx[rid, : nz.size] = nz
        sup_val[rid, : nz.size] = coef[rid, nz]

    row_times = (speeds[:, :, None] * code.row_units).reshape(T, K * R)
    order = np.argsort(row_times, axis=1, kind="stable")           # stable: a message's rows stay together
    S = K * R
    done_step = np.full(T, -1)
    rec_out = np.zeros((T, B), dtype=bool) if return_recovered else None

    # Phase 1: union of single-block rows, until each trial's first multi-block row.
    known = np.zeros((T, B), dtype=bool)
    count = np.zeros(T, dtype=int)
    first_multi = np.full(T, S)
    live = np.arange(T)
    for s in range(S):
        if live.size == 0:
            break
        rid = order[live, s]
        blk = single_block[rid]
        multi = blk < 0
        if multi.any():
            first_multi[live[multi]] = s
        ok = ~multi
        lv, b = live[ok], blk[ok]
        new = ~known[lv, b]
        known[lv, b] = True
        count[lv] += new
        fin = (count[lv] >= need) & last_of_message[rid[ok]]
        done_step[lv[fin]] = s
        live = lv[~fin]

    if return_recovered:
        # Trials decided in phase 1 recovered exactly the union of their single-block rows.
        rec_out[done_step >= 0] = known[done_step >= 0]

    # Phase 2: null-space elimination from the first multi-block row on.
    ids = np.flatnonzero((first_multi < S) & (done_step < 0))     # trials still undecided
    if ids.size:
        # Sorted by the step at which they enter, the started trials are always a prefix, so every
        # step works on a view of N (no gather); finished trials are masked and compacted away now
        # and then.
        ids = ids[np.argsort(first_multi[ids], kind="stable")]
        start = first_multi[ids]
        unknown = ~known[ids]
        nul = unknown.sum(axis=1)
        N = np.zeros((ids.size, B, int(nul.max())))
        # Column c of trial t is e_(c-th unknown block): the null space of the uncoded rows received.
        rank_in_unknown = np.cumsum(unknown, axis=1) - 1
        tt, kk = np.nonzero(unknown)
        N[tt, kk, rank_in_unknown[tt, kk]] = 1.0
        alive = np.ones(ids.size, dtype=bool)
        for s in range(int(start[0]), S):
            ns = int(np.searchsorted(start, s, side="right"))
            if ns == 0:
                continue
            V = N[:ns]
            ar = np.arange(ns)
            rid = order[ids[:ns], s]
            c = np.einsum("nd,ndw->nw", sup_val[rid], V[ar[:, None], sup_idx[rid]])
            p = np.abs(c).argmax(axis=1)
            cp = c[ar, p]
            inc = (np.abs(cp) > _TOL) & alive[:ns]
            if inc.any():
                ratio = np.where(inc[:, None], c / np.where(inc, cp, 1.0)[:, None], 0.0)
                V -= V[ar, :, p][:, :, None] * ratio[:, None, :]
                # Keep the live columns first: move the last live column into the freed slot.
                ai = np.flatnonzero(inc)
                pa, last = p[ai], nul[ai] - 1
                V[ai, :, pa] = V[ai, :, last]
                V[ai, :, last] = 0.0
                nul[ai] -= 1
            # The recovered set changes only when the rank grows, and it cannot exceed the rank
            # B - nullity: skip the zero-row count until that bound reaches the target.
            check = inc & last_of_message[rid] & (B - nul[:ns] >= need)
            if need >= B:
                fin = check & (nul[:ns] == 0)
                fin_rows = None
            else:
                fin = np.zeros(ns, dtype=bool)
                fin_rows = None
                if check.any():
                    ci = np.flatnonzero(check)
                    zero = np.abs(V[ci]).max(axis=2) <= _TOL
                    ok = zero.sum(axis=1) >= need
                    fin[ci[ok]] = True
                    fin_rows = zero[ok]
            if fin.any():
                fi = np.flatnonzero(fin)
                done_step[ids[fi]] = s
                alive[fi] = False
                if return_recovered:
                    rec_out[ids[fi]] = fin_rows if fin_rows is not None else True
                if not alive.any():
                    break
            dead = ns - int(alive[:ns].sum())
            if dead > 0.25 * ns and dead > 32:
                keep = alive
                N, ids, start, nul, alive = N[keep], ids[keep], start[keep], nul[keep], alive[keep]
            width = int(nul[alive].max()) if alive.any() else 0
            if width < N.shape[2]:
                N = N[:, :, :width]

    reached = done_step >= 0
    times = np.full(T, np.inf)
    times[reached] = row_times[np.flatnonzero(reached), order[reached, done_step[reached]]]
    messages = (msg_times <= times[:, None, None]).sum(axis=(1, 2))
    return times, messages, rec_out


def brute_force_recoverable(rows) -> np.ndarray:
    """Blocks k with ``e_k`` in the row space of ``rows`` (n_rows, n_blocks), by ``rank([rows; e_k]) == rank(rows)``.

    The independent oracle of the tests (the library decides with elimination).
    """
    rows = np.asarray(rows, dtype=float)
    B = rows.shape[1]
    if rows.shape[0] == 0:
        return np.zeros(B, dtype=bool)
    base = np.linalg.matrix_rank(rows)
    eye = np.eye(B)
    return np.array([np.linalg.matrix_rank(np.vstack([rows, eye[k]])) == base for k in range(B)])
