"""Which blocks the received coefficient rows determine, for many trials at once.

:func:`gcc.cpgc.simulate.completion` unions single-block rows itself and hands each trial, from its
first multi-block row on, to one of two exact incremental decoders run for all trials in lock step:
:func:`sparse_recovery` keeps the reduced row-echelon form (a new row reduced by the pivot rows of its
columns makes the column held by the fewest rows a pivot; block k is recoverable when its pivot row
has no other entry; a trial whose rows outgrow :data:`ROW_WIDTH` is handed over), and
:func:`dense_recovery` a basis of the null space, shape (B, nullity), updated by a rank-one step per
independent arrival (block k is recoverable when row k of the basis is zero).
"""
from __future__ import annotations

import numpy as np

__all__ = ["ROW_WIDTH", "MAX_SPARSE_DEGREE", "sparse_recovery", "dense_recovery"]

_TOL = 1e-9
#: entries (besides the pivot) a row of the sparse decoder holds at least (RCSC needs 3)
ROW_WIDTH = 4
#: codes whose rows have at most this many blocks use the sparse decoder
MAX_SPARSE_DEGREE = 8


def _combine(cols, vals, sentinel, width, distinct=False):
    """Per row, add the values of equal columns, drop sums within _TOL of 0 and the sentinel.

    cols (n, W) in [0, sentinel], vals (n, W) -> cols, vals (n, width) compacted to the left, and
    the entries per row (which may exceed ``width``: those beyond are dropped). ``distinct``: no
    column repeats within a row.
    """
    n, W = cols.shape
    if distinct:
        sums = vals
        keep = (cols != sentinel) & (np.abs(vals) > _TOL)
    else:
        flat = cols + (np.arange(n) * (sentinel + 1))[:, None]
        sums = np.bincount(flat.ravel(), vals.ravel(), n * (sentinel + 1))[flat]
        repeated = np.bincount(flat.ravel(), minlength=n * (sentinel + 1))[flat] > 1
        keep = (cols != sentinel) & (np.abs(sums) > _TOL)
        dup = keep & repeated
        if dup.any():
            pos = np.flatnonzero(dup)                          # row-major: the first comes first
            first = pos[np.unique(flat.ravel()[pos], return_index=True)[1]]
            keep.ravel()[pos] = False
            keep.ravel()[first] = True
    slot = np.cumsum(keep, axis=1) - 1
    count = slot[:, -1] + 1
    keep &= slot < width
    r = np.nonzero(keep)
    out_c = np.full((n, width), sentinel, dtype=cols.dtype)
    out_v = np.zeros((n, width))
    out_c[r[0], slot[r]] = cols[r]
    out_v[r[0], slot[r]] = sums[r]
    return out_c, out_v, count


def sparse_recovery(order, ids, start, known, sup_idx, sup_val, last_of_message, need,
                    return_recovered=False):
    """Incremental RREF of the received rows, trials in lock step (see the module docstring).

    Parameters
    ----------
    order : ndarray of int, shape (T, S)
        Row ids of every trial in arrival order.
    ids, start : ndarray of int, shape (n,)
        Trials to decode, sorted by ``start``, the step of each one's first multi-block row.
    known : ndarray of bool, shape (n, B)
        Blocks recovered before ``start`` (the single-block rows received).
    sup_idx, sup_val : ndarray, shape (rows, D)
        Blocks and coefficients of every row, padded with block index B and value 0.
    last_of_message : ndarray of bool, shape (rows,)
        Whether a row is the last of its message (the condition is checked there).
    need : int
        Recoverable blocks that complete a trial.
    return_recovered : bool

    Returns
    -------
    done : ndarray of int, shape (n,)
        Step at which each trial completes (-1: never, or handed over).
    recovered : ndarray of bool, shape (n, B), or None
        Recoverable blocks at completion.
    handed_over : ndarray of bool, shape (n,)
        Trials whose rows outgrew :data:`ROW_WIDTH`: decode them with :func:`dense_recovery`.

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.cpgc.elimination import sparse_recovery
    >>> order, sup_idx = np.array([[0, 1]]), np.array([[0, 1], [1, 2]])   # W_0 + W_1, then W_1
    >>> sparse_recovery(order, np.array([0]), np.array([0]), np.zeros((1, 2), bool), sup_idx,
    ...                 np.array([[1.0, 1.0], [1.0, 0.0]]), np.ones(2, bool), 2, True)
    (array([1]), array([[ True,  True]]), array([False]))
    """
    n, B = known.shape
    D = sup_idx.shape[1]
    L, S, Bs = max(ROW_WIDTH, D - 1), order.shape[1], B + 1    # column B: the padding sentinel
    # Per trial and column, flattened to index (trial, column) as trial * Bs + column.
    piv = np.zeros((n, Bs), dtype=bool)
    piv[:, :B] = known
    piv = piv.ravel()                                          # column c is a pivot
    rc = np.full((n * Bs, L), B, dtype=np.intp)                # the free columns of its row
    rv = np.zeros((n * Bs, L))                                 # and their coefficients
    occ = np.zeros(n * Bs, dtype=np.intp)                      # rows holding column c
    rlen = np.zeros(n * Bs, dtype=np.intp)                     # entries of its row (pivots)
    nrec = known.sum(axis=1)
    alive = np.ones(n, dtype=bool)
    over = np.zeros(n, dtype=bool)
    done = np.full(n, -1)
    rec = np.zeros((n, B), dtype=bool) if return_recovered else None
    for s in range(int(start[0]) if n else S, S):
        ns = int(np.searchsorted(start, s, side="right"))
        A = np.flatnonzero(alive[:ns])
        if A.size == 0:
            if ns == n:
                break
            continue
        rid = order[ids[A], s]
        cols = sup_idx[rid]
        at = A[:, None] * Bs + cols
        pv = piv[at]
        rl = rlen[at]
        # Rows whose blocks are all recovered change nothing: reduce the others.
        ind = ~((pv & (rl == 0)) | (cols == B)).all(axis=1)
        if ind.any():
            I, cols, vals, at, pv = A[ind], cols[ind], sup_val[rid[ind]], at[ind], pv[ind]
            w = int(rl[ind].max())                               # longest pivot row involved
            # Reduce by the pivot rows of the row's columns (their pivot columns cancel exactly).
            cand_c = np.concatenate([np.where(pv, B, cols), rc[at, :w].reshape(I.size, D * w)], axis=1)
            cand_v = np.concatenate([np.where(pv, 0.0, vals),
                                     (-vals[:, :, None] * rv[at, :w]).reshape(I.size, D * w)], axis=1)
            vc, vv, nv = _combine(cand_c, cand_v, B, L + 1, distinct=w == 0)
            keep = nv > 0
            I, vc, vv, nv = I[keep], vc[keep], vv[keep], nv[keep]
        if ind.any() and I.size:
            r = np.arange(I.size)
            base = I * Bs
            j = np.where(vc < B, occ[base[:, None] + vc], n * Bs).argmin(axis=1)
            p, pval = vc[r, j], vv[r, j]
            last = np.minimum(nv, L + 1) - 1                      # fill the pivot's slot with the last entry
            vc[r, j], vv[r, j] = vc[r, last], vv[r, last]
            vc[r, last], vv[r, last] = B, 0.0
            fc, fv = vc[:, :L], vv[:, :L] / pval[:, None]
            nf = nv - 1
            bad = nf > L
            at_p = base + p
            hold = occ[at_p] > 0                                # p is in other rows: eliminate it
            if hold.any():
                bad[hold] |= _eliminate(I[hold], p[hold], fc[hold], fv[hold], rc, rv, rlen, occ, nrec, Bs, B)
            piv[at_p] = True
            rc[at_p], rv[at_p] = fc, fv
            rlen[at_p] = np.minimum(nf, L)
            np.add.at(occ, (base[:, None] + fc)[fc < B], 1)
            nrec[I] += nf == 0
            if bad.any():
                over[I[bad]] = True
                alive[I[bad]] = False
        fin = last_of_message[rid] & (nrec[A] >= need) & alive[A]
        if fin.any():
            F = A[fin]
            done[F] = s
            alive[F] = False
            if return_recovered:
                at_f = (F * Bs)[:, None] + np.arange(B)
                rec[F] = piv[at_f] & (rc[at_f] == B).all(axis=2)
    return done, rec, over


def _eliminate(I, p, fc, fv, rc, rv, rlen, occ, nrec, Bs, B):
    """Subtract the new pivot rows (p, free entries fc, fv) from the rows of their trials I that
    hold p, updating the (flattened) state arrays in place; True for the trials where a row
    outgrew its width."""
    L = rc.shape[1]
    w = int(rlen.reshape(-1, Bs)[I].max())                     # the longest row of those trials
    e, q, l = np.nonzero(rc.reshape(-1, Bs, L)[I, :, :w] == p[:, None, None])  # row q of trial I[e] has p at l
    t = I[e]
    at = t * Bs + q
    g = rv[at, l]
    old_c, old_v = rc[at], rv[at]
    np.add.at(occ, (t[:, None] * Bs + old_c)[old_c < B], -1)
    old_c[np.arange(t.size), l] = B                              # (a copy: fancy indexing)
    new_c, new_v, cnt = _combine(np.concatenate([old_c, fc[e]], axis=1),
                                 np.concatenate([np.where(old_c < B, old_v, 0.0), -g[:, None] * fv[e]],
                                                axis=1), B, L)
    rc[at], rv[at] = new_c, new_v
    rlen[at] = np.minimum(cnt, L)
    np.add.at(occ, (t[:, None] * Bs + new_c)[new_c < B], 1)
    np.add.at(nrec, t, cnt == 0)
    over = np.zeros(I.size, dtype=bool)
    over[e[cnt > L]] = True
    return over


def dense_recovery(order, ids, start, known, sup_idx, sup_val, last_of_message, need,
                   return_recovered=False):
    """Null-space elimination, trials in lock step; parameters and returns as :func:`sparse_recovery`.

    Padding entries (block index B) must have value 0; nothing is handed over.
    """
    n, B = known.shape
    S = order.shape[1]
    done = np.full(n, -1)
    rec = np.zeros((n, B), dtype=bool) if return_recovered else None
    if n == 0:
        return done, rec, np.zeros(0, dtype=bool)
    sup_idx = np.where(sup_idx < B, sup_idx, 0)                # value 0: any index will do
    pos = np.arange(n)                                         # row of trial i in the arrays
    unknown = ~known
    nul = unknown.sum(axis=1)
    N = np.zeros((n, B, max(int(nul.max()), 1)))
    # Column c of trial t is e_(c-th unknown block): the null space of the uncoded rows received.
    rank_in_unknown = np.cumsum(unknown, axis=1) - 1
    tt, kk = np.nonzero(unknown)
    N[tt, kk, rank_in_unknown[tt, kk]] = 1.0
    alive = np.ones(n, dtype=bool)
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
        fin = np.zeros(ns, dtype=bool)
        fin_rows = None
        if need >= B:
            fin = check & (nul[:ns] == 0)
        elif check.any():
            ci = np.flatnonzero(check)
            zero = np.abs(V[ci]).max(axis=2) <= _TOL
            ok = zero.sum(axis=1) >= need
            fin[ci[ok]] = True
            fin_rows = zero[ok]
        if fin.any():
            fi = np.flatnonzero(fin)
            done[pos[fi]] = s
            alive[fi] = False
            if return_recovered:
                rec[pos[fi]] = fin_rows if fin_rows is not None else True
            if not alive.any():
                break
        dead = ns - int(alive[:ns].sum())
        if dead > 0.25 * ns and dead > 32:
            keep = alive
            N, ids, start, nul, alive, pos = N[keep], ids[keep], start[keep], nul[keep], alive[keep], pos[keep]
        width = int(nul[alive].max()) if alive.any() else 0
        if width < N.shape[2]:
            N = N[:, :, :width]
    return done, rec, np.zeros(n, dtype=bool)
