"""The checks of the assignments: one ``check_*`` function per task.

Each check recomputes the reference with ``gcc`` from the student's variant (the same seed and
sizes), compares, and returns a :class:`~gcc.assignments.feedback.Feedback` that says which value
is wrong, by how much (relative error) and what to look at, without printing the reference values.
On failure it raises :class:`~gcc.assignments.feedback.AssignmentCheckError` (an ``AssertionError``),
so an unfinished notebook stops there; pass ``raise_on_fail=False`` to get the feedback instead.

Checks that take a *function* call it on the variant's data and on extra cases (for example a point
that coincides with a node), which catches mistakes a single value would hide.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .feedback import (Feedback, _as_float_array, call_student, compare_arrays, compare_exact, compare_scalar, finish,
                       make)
from .variants import Variant, problem

__all__ = [
    # 01 Berrut
    "check_berrut_basis", "check_berrut_encoder", "check_berrut_decoder", "check_berrut_loss",
    "check_code_comparison",
    # 02 rate slope
    "check_worst_case_loss", "check_loss_curve", "check_slope", "check_rate_verdict",
    # 03 lambda CV
    "check_cv_loss", "check_cv_table", "check_best_lambdas", "check_test_losses",
    # 04 CPGC peeling
    "check_arrival_order", "check_message_values", "check_peeling_history", "check_stop_index",
    "check_decoded_blocks", "check_faster_scheme",
    # 05 inference service
    "check_expected_wait", "check_latency_table", "check_loss_table", "check_design", "check_robustness",
]


def _require(v: Any, assignment: str, check: str) -> None:
    if not isinstance(v, Variant) or v.assignment != assignment:
        got = v.assignment if isinstance(v, Variant) else type(v).__name__
        raise ValueError(f"The 'v' parameter of {check} must be the Variant of {assignment!r} "
                         f"(gcc.assignments.variant({assignment!r}, seed)). Got {got!r} instead.")


def _gcc():
    # Imported on use: ``import gcc.assignments`` stays light, and the codes may land after this module.
    import gcc

    return gcc


def _mse(estimate: np.ndarray, truth: np.ndarray) -> float:
    """End-to-end loss of eq. (1) for one received set, from ``gcc.metrics``."""
    return float(_gcc().mse_loss(estimate, truth))


# =========================================================================== 01 Berrut
_A1 = "01_berrut"


def _berrut_setup(v: Variant):
    g = _gcc()
    code = g.BerrutCode(n_inputs=v.n_inputs, n_workers=v.n_workers)
    return code, problem(v)


def check_berrut_basis(berrut_basis: Callable, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 1: ``berrut_basis(z, nodes)`` returns the ``(len(z), len(nodes))`` matrix of Berrut's basis.

    Compared with the encoder matrix of ``gcc.BerrutCode`` (its encoder applied to unit vectors),
    then checked at ``z = nodes`` (where the basis must be the identity: interpolation).
    """
    _require(v, _A1, "check_berrut_basis")
    code, _ = _berrut_setup(v)
    # The encoder is linear in the data, so encoding the K unit vectors gives its (N, K) matrix.
    ref = np.asarray(code.encode(np.eye(v.n_inputs)))
    ans, prob = call_student(berrut_basis, "berrut_basis", code.betas, code.alphas)
    problems, note = ([prob], "") if prob else compare_arrays(
        ans, ref, name="berrut_basis(betas, alphas)", rtol=1e-9, axis_names=("worker", "data point"))
    hints = ["Basis j at z is ((-1)^j / (z - alpha_j)) divided by the sum over i of (-1)^i / (z - alpha_i); "
             "every row sums to one."]
    if not problems:
        ans, prob = call_student(berrut_basis, "berrut_basis", code.alphas, code.alphas)
        problems, _ = ([prob], "") if prob else compare_arrays(
            ans, np.eye(v.n_inputs), name="berrut_basis(alphas, alphas)", rtol=1e-12,
            axis_names=("evaluation point", "data point"), diagnose=False)
        if problems:
            problems.insert(0, "At an evaluation point equal to a node the formula divides by zero; "
                               "the basis must interpolate there (row = unit vector).")
            hints = ["Handle z == alpha_k separately (e.g. with np.isclose), return the k-th unit vector."]
    return finish(make(_A1, "1", "Berrut basis", problems, note, hints), raise_on_fail)


def check_berrut_encoder(berrut_encode: Callable, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 2: ``berrut_encode(X, alphas, betas)`` returns the coded inputs, shape ``(N, dim)``."""
    _require(v, _A1, "check_berrut_encoder")
    code, p = _berrut_setup(v)
    ref = np.asarray(code.encode(p.X))
    ans, prob = call_student(berrut_encode, "berrut_encode", p.X, code.alphas, code.betas)
    problems, note = ([prob], "") if prob else compare_arrays(
        ans, ref, name="berrut_encode(X, alphas, betas)", rtol=1e-9, axis_names=("worker", "column"))
    hints = ["Worker n receives u_enc(beta_n) = sum_k basis_k(beta_n) x_k: one matrix product "
             "with your basis (shape (N, K)) and X (shape (K, dim))."]
    return finish(make(_A1, "2", "Berrut encoder", problems, note, hints), raise_on_fail)


def check_berrut_decoder(berrut_decode: Callable, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 3: ``berrut_decode(Y, received, alphas, betas)`` estimates ``f(x_k)``, shape ``(K, dim)``.

    Tested on the variant's received set and on a second set with one worker missing in the middle
    (where alternating the signs by the original worker index goes wrong).
    """
    _require(v, _A1, "check_berrut_decoder")
    code, p = _berrut_setup(v)
    outputs = p.f(np.asarray(code.encode(p.X)))
    middle = v.n_workers // 2
    cases = [("your received set `received`", p.received),
             (f"the received set of all workers except worker {middle}",
              np.array([n for n in range(v.n_workers) if n != middle]))]
    problems, note = [], ""
    for label, received in cases:
        Y = outputs[received]
        ref = np.asarray(code.decode(Y, received))
        ans, prob = call_student(berrut_decode, "berrut_decode", Y, received, code.alphas, code.betas)
        problems, note = ([prob], "") if prob else compare_arrays(
            ans, ref, name="berrut_decode(Y, received, alphas, betas)", rtol=1e-9,
            axis_names=("data point", "column"))
        if problems:
            problems[0] = f"On {label}: {problems[0]}"
            break
    hints = ["The decoder is Berrut's interpolant through the *received* points (beta_v, y_v), "
             "evaluated at the alphas. The signs (-1)^j alternate along the received points in "
             "ascending order, not by the original worker index."]
    return finish(make(_A1, "3", "Berrut decoder", problems, note, hints), raise_on_fail)


def check_berrut_loss(loss_berrut: Any, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 4: the end-to-end loss of ``gcc.BerrutCode`` on the variant's data and received set."""
    _require(v, _A1, "check_berrut_loss")
    code, p = _berrut_setup(v)
    est = code.decode(p.f(np.asarray(code.encode(p.X)))[p.received], p.received)
    ref = _mse(est, p.f(p.X))
    problems, note = compare_scalar(loss_berrut, ref, name="loss_berrut", rtol=1e-6)
    hints = ["Loss (1) for one received set: the mean over the K data points of the squared Euclidean "
             "norm of (estimate - f(x_k)); sum over the columns, average over the rows."]
    return finish(make(_A1, "4", "end-to-end loss", problems, note, hints), raise_on_fail)


def check_code_comparison(spline_is_better: Any, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 5: does ``gcc.SplineCode`` (lambda = 0) beat ``gcc.BerrutCode`` on this variant?"""
    _require(v, _A1, "check_code_comparison")
    g = _gcc()
    code, p = _berrut_setup(v)
    spline = g.SplineCode(n_inputs=v.n_inputs, n_workers=v.n_workers)
    truth = p.f(p.X)
    losses = []
    for c in (code, spline):
        est = c.decode(p.f(np.asarray(c.encode(p.X)))[p.received], p.received)
        losses.append(_mse(est, truth))
    ref = bool(losses[1] < losses[0])
    if isinstance(spline_is_better, np.bool_):
        spline_is_better = bool(spline_is_better)
    problems, note = compare_exact(spline_is_better, ref, name="spline_is_better")
    if problems and spline_is_better not in (None, Ellipsis) and not isinstance(spline_is_better, bool):
        problems = [f"`spline_is_better` should be True or False; got {type(spline_is_better).__name__}."]
    hints = ["Compute the loss of gcc.SplineCode(K, N) on the same data and received set exactly as for "
             "Berrut, then compare the two numbers."]
    return finish(make(_A1, "5", "Berrut versus spline", problems, note, hints), raise_on_fail)


# =========================================================================== 02 rate slope
_A2 = "02_rate_slope"


def _worst_loss(v: Variant, code_name: str, n_workers: int) -> float:
    g = _gcc()
    p = problem(v)
    cls = {"spline": g.SplineCode, "berrut": g.BerrutCode}[code_name]
    code = cls(n_inputs=v.n_inputs, n_workers=n_workers)
    return float(np.max(g.stragglers.block_losses(code, p.f, p.X, v.n_stragglers)))


def _reference_worst_losses(v: Variant, code_name: str) -> np.ndarray:
    return np.array([_worst_loss(v, code_name, n) for n in v.n_workers_grid])


def check_worst_case_loss(worst_case_loss: Callable, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 1: ``worst_case_loss(code)`` is the largest loss over all contiguous straggler blocks.

    Called with ``gcc.SplineCode`` for the smallest ``N`` of the variant's grid.
    """
    _require(v, _A2, "check_worst_case_loss")
    g = _gcc()
    n = v.n_workers_grid[0]
    ref = _worst_loss(v, "spline", n)
    ans, prob = call_student(worst_case_loss, "worst_case_loss",
                             g.SplineCode(n_inputs=v.n_inputs, n_workers=n))
    problems, note = ([prob], "") if prob else compare_scalar(
        ans, ref, name=f"worst_case_loss(SplineCode(K, {n}))", rtol=1e-6)
    hints = [f"Slide a block of S = {v.n_stragglers} consecutive stragglers over every start position "
             "0 .. N - S (N - S + 1 blocks), decode from the other workers, compute loss (1) and keep the "
             "largest. A random straggler set is not the worst case."]
    return finish(make(_A2, "1", "worst-case loss", problems, note, hints), raise_on_fail)


def check_loss_curve(losses: Any, v: Variant, code: str = "spline", raise_on_fail: bool = True) -> Feedback:
    """Tasks 2 and 4: worst-case losses over ``v.n_workers_grid`` for ``code`` (``"spline"``/``"berrut"``)."""
    _require(v, _A2, "check_loss_curve")
    if code not in ("spline", "berrut"):
        raise ValueError(f"The 'code' parameter of check_loss_curve must be 'spline' or 'berrut'. "
                         f"Got {code!r} instead.")
    ref = _reference_worst_losses(v, code)
    name = "losses" if code == "spline" else "losses_berrut"
    problems, note = compare_arrays(losses, ref, name=name, rtol=1e-6, axis_names=("grid position",))
    cls = "SplineCode" if code == "spline" else "BerrutCode"
    hints = [f"One entry per N in v.n_workers_grid, in that order: worst_case_loss(gcc.{cls}(K, N))."]
    task, title = ("2", "loss curve, splines") if code == "spline" else ("4", "loss curve, Berrut")
    return finish(make(_A2, task, title, problems, note, hints), raise_on_fail)


def check_slope(slope: Any, v: Variant, code: str = "spline", raise_on_fail: bool = True) -> Feedback:
    """Tasks 3 and 4: the least-squares slope of log(loss) against log(N)."""
    _require(v, _A2, "check_slope")
    g = _gcc()
    ref = float(g.loglog_slope(np.asarray(v.n_workers_grid, dtype=float), _reference_worst_losses(v, code)).slope)
    name = "slope" if code == "spline" else "slope_berrut"
    problems, note = compare_scalar(slope, ref, name=name, rtol=1e-4)
    hints = ["Fit a straight line to (log N, log loss) by least squares (np.polyfit with degree 1, or "
             "gcc.loglog_slope(grid, losses).slope); the slope is the first coefficient. Use natural or base-10 logs on "
             "both axes, not a mix."]
    task = "3" if code == "spline" else "4b"
    return finish(make(_A2, task, f"log-log slope, {code}", problems, note, hints), raise_on_fail)


def check_rate_verdict(at_least_as_fast: Any, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 5: does the measured spline slope decay at least as fast as Theorem 4's ``N^-3``?"""
    _require(v, _A2, "check_rate_verdict")
    g = _gcc()
    slope = float(g.loglog_slope(np.asarray(v.n_workers_grid, dtype=float),
                                 _reference_worst_losses(v, "spline")).slope)
    ref = bool(slope <= -3.0)
    if isinstance(at_least_as_fast, np.bool_):
        at_least_as_fast = bool(at_least_as_fast)
    problems, note = compare_exact(at_least_as_fast, ref, name="at_least_as_fast")
    hints = ["Decaying at least as fast as N^-3 means a slope of -3 or steeper (more negative)."]
    return finish(make(_A2, "5", "verdict against Theorem 4", problems, note, hints), raise_on_fail)


# =========================================================================== 04 CPGC peeling
_A4 = "04_cpgc_peeling"
#: Degree vector of the RCSC code in assignment 04 (the authors' main setting).
CPGC_DEGREES = (1, 2, 3)


def _cpgc_setup(v: Variant):
    from .. import cpgc

    p = problem(v)
    code = cpgc.rcsc_code(v.n_workers, degrees=CPGC_DEGREES, seed=p.code_seed)
    speeds = cpgc.worker_speeds(np.random.default_rng(p.arrival_seed), 1, v.n_workers)
    times = cpgc.arrival_times(code, speeds)[0]                     # (K, r)
    order = np.argsort(times, axis=None, kind="stable")             # ties: lower worker first
    arrivals = [tuple(int(i) for i in divmod(int(o), code.n_rows)) for o in order]
    blocks = (p.W @ p.theta).reshape(v.n_workers, v.block_rows)     # the unknowns W_k theta
    values = np.einsum("ijk,kb->ijb", code.coefficients, blocks)    # what every worker sends
    return cpgc, p, code, arrivals, values


def _cpgc_replay(v: Variant):
    """Feed the arrivals to gcc.cpgc.Master; peeled-block counts after each, stop index, decoded blocks."""
    cpgc, p, code, arrivals, values = _cpgc_setup(v)
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


def check_arrival_order(arrivals: Any, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 1: the (worker, message) pairs in order of arrival."""
    _require(v, _A4, "check_arrival_order")
    _, _, _, ref, _ = _cpgc_setup(v)
    if arrivals is not Ellipsis and arrivals is not None:
        try:
            arrivals = [tuple(int(x) for x in a) for a in arrivals]
        except (TypeError, ValueError):
            arrivals = f"<{type(arrivals).__name__} that is not a list of (worker, message) pairs>"

    def describe(ans, want):
        if not isinstance(ans, list):
            return ["It should be a list of (worker, message) pairs."]
        if len(ans) != len(want):
            return [f"It has {len(ans)} pairs; every worker sends every message, so there are "
                    f"{len(want)}."]
        if sorted(ans) != sorted(want):
            return ["Some pairs are not valid (worker, message) pairs or appear twice."]
        first = next(i for i, (a, b) in enumerate(zip(ans, want)) if a != b)
        return [f"The first {first} pairs are right; position {first} (counting from 0) is not."]

    problems, note = compare_exact(arrivals, ref, name="arrivals", describe=describe)
    hints = ["Message j (counting from 0) of worker i arrives at code.row_units[j] * speeds[i]; "
             "gcc.cpgc.arrival_times gives all of them. Sort all K*r times (np.argsort on the flattened "
             "array, kind='stable') and map each flat index back to (worker, message) with divmod."]
    return finish(make(_A4, "1", "arrival order", problems, note, hints), raise_on_fail)


def check_message_values(values: Any, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 2: what every worker sends, shape ``(K, r, block_rows)``."""
    _require(v, _A4, "check_message_values")
    *_, ref = _cpgc_setup(v)
    problems, note = compare_arrays(values, ref, name="values", rtol=1e-9,
                                    axis_names=("worker", "message", "entry"))
    hints = ["Split W theta into K blocks of block_rows rows (block k is rows k*b .. k*b+b-1); message j "
             "of worker i is the sum over k of code.coefficients[i, j, k] times block k."]
    return finish(make(_A4, "2", "message values", problems, note, hints), raise_on_fail)


def check_peeling_history(history: Any, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 3: number of blocks known by peeling after each arrival."""
    _require(v, _A4, "check_peeling_history")
    ref, _, _ = _cpgc_replay(v)
    if history is not Ellipsis and history is not None:
        try:
            history = [int(h) for h in history]
        except (TypeError, ValueError):
            history = f"<{type(history).__name__}>"

    def describe(ans, want):
        if not isinstance(ans, list) or len(ans) != len(want):
            return [f"It should be a list with one count per arrival ({len(want)} arrivals)."]
        first = next(i for i, (a, b) in enumerate(zip(ans, want)) if a != b)
        more = "more" if ans[first] > want[first] else "fewer"
        return [f"The counts agree up to arrival {first} (counting from 0); after it your decoder knows "
                f"{more} blocks than peeling does."]

    problems, note = compare_exact(history, ref, name="history", describe=describe)
    hints = ["After each message: subtract every known block from it; if exactly one unknown block "
             "remains, it is recovered, and that may in turn reduce earlier pending messages to one "
             "unknown (the ripple). Keep a list of pending messages and repeat until nothing changes."]
    return finish(make(_A4, "3", "peeling history", problems, note, hints), raise_on_fail)


def check_stop_index(stop_index: Any, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 4a: how many messages the master needs before ``ceil(K (1 - q))`` blocks are known."""
    _require(v, _A4, "check_stop_index")
    _, ref, _ = _cpgc_replay(v)
    if isinstance(stop_index, np.integer):
        stop_index = int(stop_index)

    def describe(ans, want):
        if not isinstance(ans, int):
            return ["It should be an int (a number of messages)."]
        return ["It is too late: the master could stop earlier." if ans > want else
                "It is too early: not enough blocks are known yet."]

    problems, note = compare_exact(stop_index, ref, name="stop_index", describe=describe)
    hints = ["The master stops at the first arrival after which at least ceil(K (1 - q)) blocks are "
             "known (q = v.tolerance); count messages from 1."]
    return finish(make(_A4, "4a", "stopping point", problems, note, hints), raise_on_fail)


def check_decoded_blocks(estimates: Any, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 4b: block values known at the stopping point, shape ``(K, block_rows)``, NaN where unknown."""
    _require(v, _A4, "check_decoded_blocks")
    _, _, ref = _cpgc_replay(v)
    arr, prob = _as_float_array(estimates, "estimates")
    problems, note = ([prob], "") if prob else ([], "")
    if not problems and arr.shape != ref.shape:
        problems = [f"`estimates` has shape {arr.shape}; the task asks for shape {ref.shape}."]
    if not problems:
        known_ref = ~np.isnan(ref).any(axis=1)
        known = ~np.isnan(arr).any(axis=1)
        missing = np.flatnonzero(known_ref & ~known)
        extra = np.flatnonzero(known & ~known_ref)
        if missing.size:
            problems.append(f"Blocks {missing.tolist()} are NaN, but peeling recovers them by the "
                            "stopping point.")
        if extra.size:
            problems.append(f"Blocks {extra.tolist()} have values, but peeling cannot know them yet at "
                            "the stopping point: leave them NaN.")
        if not problems:
            problems, note = compare_arrays(arr[known_ref], ref[known_ref], name="estimates (known blocks)",
                                            rtol=1e-9, axis_names=("known block", "entry"))
    hints = ["Peel with the values: when a message reduces to one unknown block k with coefficient c, "
             "block k = (message value minus the known blocks it contains) / c. Use only the messages "
             "up to and including stop_index."]
    return finish(make(_A4, "4b", "decoded blocks", problems, note, hints), raise_on_fail)


def check_faster_scheme(faster: Any, v: Variant, trials: int = 400, raise_on_fail: bool = True) -> Feedback:
    """Task 5: which of ``"rcsc"`` and ``"mds"`` has the smaller mean completion time (seed = v.seed)."""
    _require(v, _A4, "check_faster_scheme")
    from .. import cpgc

    times = {s: cpgc.simulate(s, n_workers=v.n_workers, tolerance=v.tolerance, trials=trials,
                              seed=v.seed).mean_time for s in ("rcsc", "mds")}
    ref = min(times, key=times.get)
    problems, note = compare_exact(faster, ref, name="faster",
                                   describe=lambda a, b: [] if a in times else
                                   ["It should be the string 'rcsc' or 'mds'."])
    hints = [f"gcc.cpgc.simulate(scheme, n_workers=K, tolerance=q, trials={trials}, seed=seed).mean_time "
             "for both schemes; compare."]
    return finish(make(_A4, "5", "RCSC versus MDS", problems, note, hints), raise_on_fail)


# --------------------------------------------------------------------------- memo
_MEMO: dict = {}


def _memo(key: tuple, compute: Callable[[], Any]) -> Any:
    """Cache a reference per (what, variant): a notebook calls several checks on the same reference."""
    if key not in _MEMO:
        if len(_MEMO) > 64:
            _MEMO.clear()
        _MEMO[key] = compute()
    return _MEMO[key]


def _vkey(v: Variant) -> str:
    return f"{v.assignment}|{v.seed}|{sorted(v.params.items())!r}"


# =========================================================================== 03 lambda CV
_A3 = "03_lambda_cv"


def _cv_selection(v: Variant):
    """``gcc.tuning.select_lambdas`` on the variant's tuning draws."""
    def compute():
        from .. import SplineCode, stragglers, tuning

        p = problem(v)
        return tuning.select_lambdas(
            lambda le, ld: SplineCode(v.n_inputs, v.n_workers, lam_enc=le, lam_dec=ld), p.f,
            p.draw_batch, stragglers.FixedCount(v.n_stragglers), lam_enc_grid=v.lam_enc_grid,
            lam_dec_grid=v.lam_dec_grid, trials=v.n_trials, seed=p.tune_seed, noise_std=v.noise_std)
    return _memo(("cv", _vkey(v)), compute)


def _cv_table(v: Variant) -> np.ndarray:
    table = _cv_selection(v).table
    out = np.empty((len(v.lam_enc_grid), len(v.lam_dec_grid)))
    for i, le in enumerate(v.lam_enc_grid):
        for j, ld in enumerate(v.lam_dec_grid):
            out[i, j] = float(table.loc[(table.lam_enc == float(le)) & (table.lam_dec == float(ld)),
                                        "mean"].iloc[0])
    return out


def _test_loss(v: Variant, lam_enc: float, lam_dec: float) -> float:
    def compute():
        from .. import SplineCode, harness, stragglers

        p = problem(v)
        df = harness.simulate({"gcc": SplineCode(v.n_inputs, v.n_workers, lam_enc=lam_enc, lam_dec=lam_dec)},
                              p.f, p.draw_batch, stragglers.FixedCount(v.n_stragglers), trials=v.n_trials,
                              seed=p.test_seed, noise_std=v.noise_std)
        return float(df["loss"].mean())
    return _memo(("test", _vkey(v), float(lam_enc), float(lam_dec)), compute)


_CV_HINT = ("Use gcc.harness.simulate({'gcc': gcc.SplineCode(K, N, lam_enc=..., lam_dec=...)}, f, "
            "draw_batch, gcc.FixedCount(S), trials=v.n_trials, seed=tune_seed, noise_std=sigma) and average "
            "the 'loss' column. Every grid point must see the same draws: the same seed each time.")


def check_cv_loss(cv_loss: Callable, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 1: ``cv_loss(lam_enc, lam_dec)`` is the mean loss on the tuning draws."""
    _require(v, _A3, "check_cv_loss")
    table = _cv_table(v)
    problems, note = [], ""
    # Two grid points: lambda = 0 (interpolation) and one with smoothing in both places.
    for i, j in ((0, 0), (len(v.lam_enc_grid) - 2, len(v.lam_dec_grid) - 2)):
        le, ld = v.lam_enc_grid[i], v.lam_dec_grid[j]
        ans, prob = call_student(cv_loss, "cv_loss", le, ld)
        problems, note = ([prob], "") if prob else compare_scalar(ans, table[i, j],
                                                                  name=f"cv_loss({le:g}, {ld:g})", rtol=1e-6)
        if problems:
            break
    return finish(make(_A3, "1", "cross-validation loss", problems, note, [_CV_HINT]), raise_on_fail)


def check_cv_table(cv_table: Any, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 2: the table of CV losses, rows ``lam_enc_grid``, columns ``lam_dec_grid``."""
    _require(v, _A3, "check_cv_table")
    problems, note = compare_arrays(cv_table, _cv_table(v), name="cv_table", rtol=1e-6,
                                    axis_names=("lam_enc index", "lam_dec index"))
    hints = ["Row i is lam_enc_grid[i], column j is lam_dec_grid[j]: cv_table[i, j] = cv_loss(le, ld)."]
    return finish(make(_A3, "2", "cross-validation table", problems, note, hints), raise_on_fail)


def check_best_lambdas(best: Any, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 3: the pair ``(lam_enc, lam_dec)`` with the smallest CV loss (as ``gcc.tuning.select_lambdas``)."""
    _require(v, _A3, "check_best_lambdas")
    sel = _cv_selection(v)
    ref = (sel.lam_enc, sel.lam_dec)
    if best is not Ellipsis and best is not None:
        try:
            best = tuple(float(x) for x in best)
        except (TypeError, ValueError):
            best = f"<{type(best).__name__}>"
    table = _cv_table(v)

    def describe(ans, want):
        if not isinstance(ans, tuple) or len(ans) != 2:
            return ["It should be a pair (lam_enc, lam_dec)."]
        if ans[0] not in v.lam_enc_grid or ans[1] not in v.lam_dec_grid:
            return ["It is not a point of the grids."]
        i, j = v.lam_enc_grid.index(ans[0]), v.lam_dec_grid.index(ans[1])
        excess = table[i, j] / sel.score - 1
        return [f"Its CV loss is {excess:.1%} above the smallest in the table "
                "(ties go to the smaller lam_enc, then the smaller lam_dec)."]

    problems, note = compare_exact(best, ref, name="best", describe=describe)
    hints = ["np.unravel_index(np.argmin(cv_table), cv_table.shape) gives the row and column; "
             "gcc.tuning.select_lambdas does the same search in one call."]
    return finish(make(_A3, "3", "selected lambdas", problems, note, hints), raise_on_fail)


def check_test_losses(test_loss_tuned: Any, test_loss_untuned: Any, v: Variant,
                      raise_on_fail: bool = True) -> Feedback:
    """Task 4: the loss on the *test* draws (seed ``test_seed``) with the selected lambdas and with 0, 0."""
    _require(v, _A3, "check_test_losses")
    sel = _cv_selection(v)
    problems, note = compare_scalar(test_loss_tuned, _test_loss(v, sel.lam_enc, sel.lam_dec),
                                    name="test_loss_tuned", rtol=1e-6)
    if not problems:
        problems, note = compare_scalar(test_loss_untuned, _test_loss(v, 0.0, 0.0),
                                        name="test_loss_untuned", rtol=1e-6)
    hints = ["Same call as cv_loss but with seed=test_seed: the test draws were never used for "
             "choosing the lambdas, so they measure the loss honestly."]
    return finish(make(_A3, "4", "test losses", problems, note, hints), raise_on_fail)


# =========================================================================== 05 inference service
_A5 = "05_inference_service"


def _service_tables(v: Variant) -> tuple[np.ndarray, np.ndarray]:
    """Latency quantile and mean loss of every design (N, S), from ``gcc.harness.simulate``."""
    def compute():
        from .. import SplineCode, harness, stragglers

        p = problem(v)
        lat = np.empty((len(v.n_workers_grid), len(v.straggler_grid)))
        loss = np.empty_like(lat)
        for i, n in enumerate(v.n_workers_grid):
            code = SplineCode(v.n_inputs, n)
            for j, s in enumerate(v.straggler_grid):
                model = stragglers.ShiftedExponential(shift=v.shift, rate=v.mu, stragglers=s)
                df = harness.simulate({"gcc": code}, p.f, p.X, model, trials=v.n_trials, seed=p.delay_seed)
                lat[i, j] = float(np.quantile(df["time"], v.confidence))
                loss[i, j] = float(df["loss"].mean())
        return lat, loss
    return _memo(("service", _vkey(v)), compute)


def _service_design(v: Variant):
    lat, loss = _service_tables(v)
    ok = (lat <= v.latency_budget) & (loss <= v.loss_target)
    for i, n in enumerate(v.n_workers_grid):  # fewest workers first (the cost), then the smallest loss
        if ok[i].any():
            j = int(np.argmin(np.where(ok[i], loss[i], np.inf)))
            return (int(n), int(v.straggler_grid[j]))
    return None


def _robust_reference(v: Variant, design) -> bool:
    if design is None:
        return False

    def compute():
        from .. import SplineCode, harness, stragglers

        p = problem(v)
        n, s = design
        model = stragglers.SlowWorkers(slow=v.slow_workers, factor=v.slow_factor, shift=v.shift, rate=v.mu,
                                       stragglers=s)
        df = harness.simulate({"gcc": SplineCode(v.n_inputs, n)}, p.f, p.X, model, trials=v.n_trials,
                              seed=p.delay_seed)
        return bool(np.quantile(df["time"], v.confidence) <= v.latency_budget)
    return _memo(("robust", _vkey(v), tuple(design)), compute)


def check_expected_wait(expected_wait: Callable, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 1: ``expected_wait(N, S)``, the mean time until the fastest ``N - S`` of ``N`` workers finish."""
    _require(v, _A5, "check_expected_wait")
    from ..stragglers import ShiftedExponential

    model = ShiftedExponential(shift=v.shift, rate=v.mu)
    problems, note = [], ""
    for n in v.n_workers_grid[:2]:
        for s in (0, v.straggler_grid[-1]):
            ans, prob = call_student(expected_wait, "expected_wait", n, s)
            problems, note = ([prob], "") if prob else compare_scalar(
                ans, model.expected_time(n, n - s), name=f"expected_wait({n}, {s})", rtol=1e-9)
            if problems:
                break
        if problems:
            break
    hints = ["The i-th smallest of N i.i.d. Exp(mu) variables has mean (1/mu) (1/N + 1/(N-1) + ... + "
             "1/(N-i+1)); add the shift. Waiting for N - S workers means i = N - S."]
    return finish(make(_A5, "1", "expected waiting time", problems, note, hints), raise_on_fail)


def check_latency_table(latency95: Any, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 2a: the ``confidence``-quantile of the waiting time of every design, shape (len N grid, len S grid)."""
    _require(v, _A5, "check_latency_table")
    lat, _ = _service_tables(v)
    problems, note = compare_arrays(latency95, lat, name="latency95", rtol=1e-9,
                                    axis_names=("N index", "S index"))
    hints = ["For each (N, S): gcc.harness.simulate({'gcc': gcc.SplineCode(K, N)}, f, X, "
             "gcc.ShiftedExponential(shift=shift, rate=mu, stragglers=S), trials=v.n_trials, seed=delay_seed); "
             "then np.quantile(df['time'], v.confidence)."]
    return finish(make(_A5, "2a", "latency table", problems, note, hints), raise_on_fail)


def check_loss_table(mean_loss: Any, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 2b: the mean loss of every design, shape (len N grid, len S grid)."""
    _require(v, _A5, "check_loss_table")
    _, loss = _service_tables(v)
    problems, note = compare_arrays(mean_loss, loss, name="mean_loss", rtol=1e-9,
                                    axis_names=("N index", "S index"))
    hints = ["The mean of the 'loss' column of the same simulations as for latency95."]
    return finish(make(_A5, "2b", "loss table", problems, note, hints), raise_on_fail)


def check_design(design: Any, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 3: the cheapest design (fewest workers, then smallest loss) meeting both targets, or None."""
    _require(v, _A5, "check_design")
    ref = _service_design(v)
    lat, loss = _service_tables(v)
    if design is not Ellipsis and design is not None:
        try:
            design = tuple(int(x) for x in design)
        except (TypeError, ValueError):
            design = f"<{type(design).__name__}>"

    def describe(ans, want):
        if ans is None:
            return ["At least one design meets both targets."]
        if not isinstance(ans, tuple) or len(ans) != 2:
            return ["It should be a pair (N, S) or None."]
        n, s = ans
        if n not in v.n_workers_grid or s not in v.straggler_grid:
            return ["It is not a design of the grids."]
        i, j = v.n_workers_grid.index(n), v.straggler_grid.index(s)
        out = []
        if lat[i, j] > v.latency_budget:
            out.append("It misses the latency budget.")
        if loss[i, j] > v.loss_target:
            out.append("It misses the loss target.")
        if not out and want is not None:
            out.append("It meets both targets but uses more workers than needed." if n > want[0] else
                       "Another S with the same N meets both targets with a smaller loss.")
        return out

    if design is None and ref is not None:
        problems, note = ["`design` is None."] + describe(None, ref), ""
    elif design is None and ref is None:
        problems, note = [], "correct: no design meets both targets."
    else:
        problems, note = compare_exact(design, ref, name="design", describe=describe)
        if problems and ref is None:
            problems.append("No design of the grids meets both targets: the answer is None.")
    hints = ["Feasible: latency95 <= v.latency_budget and mean_loss <= v.loss_target. Among the feasible "
             "designs take the smallest N (workers cost money), then the smallest mean loss."]
    return finish(make(_A5, "3", "service design", problems, note, hints), raise_on_fail)


def check_robustness(robust: Any, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 4: does the selected design still meet the latency budget with ``v.slow_workers`` slow workers?"""
    _require(v, _A5, "check_robustness")
    ref = _robust_reference(v, _service_design(v))
    if isinstance(robust, np.bool_):
        robust = bool(robust)
    problems, note = compare_exact(robust, ref, name="robust",
                                   describe=lambda a, b: [] if isinstance(a, bool) else
                                   ["It should be True or False."])
    hints = ["Rerun the selected design with gcc.SlowWorkers(slow=v.slow_workers, factor=v.slow_factor, "
             "shift=shift, rate=mu, stragglers=S) instead of ShiftedExponential (same trials and seed) and "
             "compare its latency quantile with the budget. With no feasible design, robust is False."]
    return finish(make(_A5, "4", "robustness to slow workers", problems, note, hints), raise_on_fail)


# --------------------------------------------------------------------------- shared docstring sections
_EXTRA_PARAMS = {
    "code": "code : {'spline', 'berrut'}\n        Which code's curve or slope is checked.",
    "trials": "trials : int\n        Monte Carlo trials of ``gcc.cpgc.simulate`` (the notebook uses the same number).",
}

_COMMON_DOC = """

    Parameters
    ----------
    {answers}
        The student's answer: a value, or the student's function for checks that call it on the
        variant's data. ``...``, ``None`` and a function that still raises ``NotImplementedError``
        give a "not answered yet" feedback.
    v : Variant
        The student's variant (``gcc.assignments.variant(<id>, seed, ...)``); the reference is
        recomputed with ``gcc`` from it.{extra}
    raise_on_fail : bool, default True
        Raise on failure (notebooks) or return the failed feedback (grading, tests).

    Returns
    -------
    Feedback
        The outcome; printing it shows a one-line confirmation or the feedback.

    Raises
    ------
    AssignmentCheckError
        When the answer is not correct yet and ``raise_on_fail``; its message says which value is
        wrong, by how much and gives a hint, without the reference values.
"""


def _document(names) -> None:
    import inspect

    for name in names:
        func = globals()[name]
        if not func.__doc__ or "Parameters" in func.__doc__:
            continue
        params = list(inspect.signature(func).parameters)
        answers = params[:params.index("v")]
        extra = "".join("\n    " + _EXTRA_PARAMS[p] for p in params[params.index("v") + 1:]
                        if p in _EXTRA_PARAMS)
        func.__doc__ = func.__doc__.rstrip() + _COMMON_DOC.format(answers=", ".join(answers), extra=extra)


_document(__all__)
