"""Checks of assignment 04, decoding a CPGC iteration by peeling (``04_cpgc_peeling``).

The references replay the variant's arrivals through ``gcc.cpgc.Master`` and compare schemes
with ``gcc.cpgc.simulate``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gcc import cpgc

from ..feedback import as_float_array, compare_arrays, compare_exact
from ..variants import Variant, problem
from .common import as_answer, carry_forward, finite_array, plain, task

__all__ = ["CPGC_DEGREES", "check_arrival_order", "check_message_values", "check_peeling_history",
           "check_stop_index", "check_decoded_blocks", "check_faster_scheme"]

_A4 = "04_cpgc_peeling"
#: Degree vector of the RCSC code in assignment 04 (the authors' main setting).
CPGC_DEGREES = (1, 2, 3)


def _cpgc_setup(v: Variant):
    """The variant's problem, RCSC code, arrival order of the (worker, message) pairs and message values."""
    p = problem(v)
    code = cpgc.rcsc_code(v.n_workers, degrees=CPGC_DEGREES, seed=p.code_seed)
    speeds = cpgc.worker_speeds(np.random.default_rng(p.arrival_seed), 1, v.n_workers)
    times = cpgc.arrival_times(code, speeds)[0]                     # (K, r)
    order = np.argsort(times, axis=None, kind="stable")             # ties: lower worker first
    arrivals = [tuple(int(i) for i in divmod(int(o), code.n_rows)) for o in order]
    blocks = (p.W @ p.theta).reshape(v.n_workers, v.block_rows)     # the unknowns W_k theta
    values = np.einsum("ijk,kb->ijb", code.coefficients, blocks)    # what every worker sends
    return p, code, arrivals, values


def _cpgc_replay(v: Variant, arrivals: list | None = None, values: np.ndarray | None = None):
    """Feed the arrivals (default: the reference's) to gcc.cpgc.Master: the peeled-block count after
    each, the stop index and the decoded blocks."""
    p, code, ref_arrivals, ref_values = _cpgc_setup(v)
    arrivals = ref_arrivals if arrivals is None else arrivals
    values = ref_values if values is None else values
    master = cpgc.Master(code, tolerance=v.tolerance)
    history, stop, decoded = [], None, None
    for n, (w, j) in enumerate(arrivals, start=1):
        master.receive(w, j, values[w, j])
        # Peeling alone (the master's rank test can add blocks peeling misses; the task is peeling).
        peeled = master.peeled                      # bool (n_blocks,), a copy
        history.append(int(peeled.sum()))
        if stop is None and history[-1] >= master.need:
            stop = n
            decoded = np.where(peeled[:, None], master.decode(), np.nan)
    return history, stop, decoded


def _pairs(arrivals: Any) -> list:
    return [tuple(int(x) for x in a) for a in arrivals]


@task(_A4, "1", "arrival order", "Message j (counting from 0) of worker i arrives at code.row_units[j] * "
      "speeds[i]; gcc.cpgc.arrival_times gives all of them. Sort all K*r times (np.argsort on the flattened "
      "array, kind='stable') and map each flat index back to (worker, message) with divmod.")
def check_arrival_order(arrivals: Any, v: Variant):
    """Task 1: the (worker, message) pairs in order of arrival."""
    _, _, ref, _ = _cpgc_setup(v)
    arrivals = as_answer(arrivals, _pairs)
    if isinstance(arrivals, str):
        arrivals = arrivals[:-1] + " that is not a list of (worker, message) pairs>"

    def describe(ans, want):
        if not isinstance(ans, list):
            return ["It should be a list of (worker, message) pairs."]
        if len(ans) != len(want):
            return [f"It has {len(ans)} pairs; every worker sends every message, so there are {len(want)}."]
        if sorted(ans) != sorted(want):
            return ["Some pairs are not valid (worker, message) pairs or appear twice."]
        first = next(i for i, (a, b) in enumerate(zip(ans, want)) if a != b)
        return [f"The first {first} pairs are right; position {first} (counting from 0) is not."]

    return compare_exact(arrivals, ref, name="arrivals", describe=describe)


@task(_A4, "2", "message values", "Split W theta into K blocks of block_rows rows (block k is rows k*b .. "
      "k*b+b-1); message j of worker i is the sum over k of code.coefficients[i, j, k] times block k.")
def check_message_values(values: Any, v: Variant):
    """Task 2: what every worker sends, shape ``(K, r, block_rows)``."""
    return compare_arrays(values, _cpgc_setup(v)[3], name="values", rtol=1e-9,
                          axis_names=("worker", "message", "entry"))


def _own_arrivals(arrivals: Any, v: Variant) -> list | None:
    """A student's arrival order if it is an order of all the (worker, message) pairs, else None."""
    own = as_answer(arrivals, _pairs)
    return own if isinstance(own, list) and sorted(own) == sorted(_cpgc_setup(v)[2]) else None


@task(_A4, "3", "peeling history", "After each message: subtract every known block from it; if exactly one "
      "unknown block remains, it is recovered, and that may in turn reduce earlier pending messages to one "
      "unknown (the ripple). Keep a list of pending messages and repeat until nothing changes.")
def check_peeling_history(history: Any, v: Variant, arrivals: Any = None):
    """Task 3: number of blocks known by peeling after each arrival."""
    ref, _, _ = _cpgc_replay(v)
    history = as_answer(history, lambda h: [int(x) for x in h])

    def describe(ans, want):
        if not isinstance(ans, list) or len(ans) != len(want):
            return [f"It should be a list with one count per arrival ({len(want)} arrivals)."]
        first = next(i for i, (a, b) in enumerate(zip(ans, want)) if a != b)
        more = "more" if ans[first] > want[first] else "fewer"
        return [f"The counts agree up to arrival {first} (counting from 0); after it your decoder knows "
                f"{more} blocks than peeling does."]

    problems, note = compare_exact(history, ref, name="history", describe=describe)
    own = _own_arrivals(arrivals, v) if arrivals is not None and problems else None
    return carry_forward(problems, note, v, [(arrivals, check_arrival_order)],
                         uses="your `arrivals` from Task 1",
                         consistent=None if own is None else
                         (lambda: compare_exact(history, _cpgc_replay(v, own)[0], name="history")))


@task(_A4, "4a", "stopping point", "The master stops at the first arrival after which at least ceil(K (1 - "
      "q)) blocks are known (q = v.tolerance); count messages from 1.")
def check_stop_index(stop_index: Any, v: Variant, history: Any = None):
    """Task 4a: how many messages the master needs before ``ceil(K (1 - q))`` blocks are known."""
    _, ref, _ = _cpgc_replay(v)
    stop_index = plain(stop_index)

    def describe(ans, want):
        if not isinstance(ans, int):
            return ["It should be an int (a number of messages)."]
        return ["It is too late: the master could stop earlier." if ans > want else
                "It is too early: not enough blocks are known yet."]

    problems, note = compare_exact(stop_index, ref, name="stop_index", describe=describe)
    own = None
    if problems and history is not None:
        need = cpgc.Master(_cpgc_setup(v)[1], tolerance=v.tolerance).need
        try:
            own = next((n for n, h in enumerate(history, start=1) if int(h) >= need), None)
        except (TypeError, ValueError):
            pass
    return carry_forward(problems, note, v, [(history, check_peeling_history)],
                         uses="your `history` from Task 3",
                         consistent=None if own is None else
                         (lambda: compare_exact(stop_index, own, name="stop_index")))


@task(_A4, "4b", "decoded blocks", "Peel with the values: when a message reduces to one unknown block k with "
      "coefficient c, block k = (message value minus the known blocks it contains) / c. Use only the "
      "messages up to and including stop_index.")
def check_decoded_blocks(estimates: Any, v: Variant, arrivals: Any = None, values: Any = None):
    """Task 4b: block values known at the stopping point, shape ``(K, block_rows)``, NaN where unknown."""
    problems, note = _compare_blocks(estimates, _cpgc_replay(v)[2])
    given = {"arrivals": (arrivals, check_arrival_order, _own_arrivals, "`arrivals` (Task 1)"),
             "values": (values, check_message_values, lambda a, v: finite_array(a, _cpgc_setup(v)[3].shape),
                        "`values` (Task 2)")}
    given = {k: g for k, g in given.items() if g[0] is not None}
    if not given or not problems:
        return problems, note
    own = {k: parse(answer, v) for k, (answer, _, parse, _) in given.items()}

    def consistent():
        decoded = _cpgc_replay(v, own.get("arrivals"), own.get("values"))[2]
        if decoded is None:
            return ["peeling never reaches the stopping point with them."], ""
        return _compare_blocks(estimates, decoded)

    return carry_forward(
        problems, note, v, [(answer, check) for answer, check, _, _ in given.values()],
        uses="your " + " and ".join(g[3] for g in given.values()),
        consistent=None if any(o is None for o in own.values()) else consistent)


def _compare_blocks(estimates: Any, ref: np.ndarray) -> tuple[list[str], str]:
    """Task 4b's comparison: the same blocks known (NaN elsewhere), their values within 1e-9."""
    arr, prob = as_float_array(estimates, "estimates")
    if prob:
        return [prob], ""
    if arr.shape != ref.shape:
        return [f"`estimates` has shape {arr.shape}; the task asks for shape {ref.shape}."], ""
    known_ref, known = ~np.isnan(ref).any(axis=1), ~np.isnan(arr).any(axis=1)
    missing, extra = np.flatnonzero(known_ref & ~known), np.flatnonzero(known & ~known_ref)
    problems = []
    if missing.size:
        problems.append(f"Blocks {missing.tolist()} are NaN, but peeling recovers them by the "
                        "stopping point.")
    if extra.size:
        problems.append(f"Blocks {extra.tolist()} have values, but peeling cannot know them yet at "
                        "the stopping point: leave them NaN.")
    if problems:
        return problems, ""
    return compare_arrays(arr[known_ref], ref[known_ref], name="estimates (known blocks)", rtol=1e-9,
                          axis_names=("known block", "entry"))


@task(_A4, "5", "RCSC versus MDS", lambda a: (
    f"gcc.cpgc.simulate(scheme, n_workers=K, tolerance=q, trials={a['trials']}, seed=seed).mean_time "
    "for both schemes; compare."))
def check_faster_scheme(faster: Any, v: Variant, trials: int = 400):
    """Task 5: which of ``"rcsc"`` and ``"mds"`` has the smaller mean completion time (seed = v.seed)."""
    times = {s: cpgc.simulate(s, n_workers=v.n_workers, tolerance=v.tolerance, trials=trials,
                              seed=v.seed).mean_time for s in ("rcsc", "mds")}
    return compare_exact(faster, min(times, key=times.get), name="faster",
                         describe=lambda a, b: [] if a in times else
                         ["It should be the string 'rcsc' or 'mds'."])
