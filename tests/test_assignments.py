"""Course assignments (issue 8): solutions pass their checks, untouched student notebooks fail with
feedback, for two seeds; feedback never reveals the reference values; pages and variants are in sync.

The notebooks run with papermill (two kernels at a time); the whole file takes about a minute.
"""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

nbformat = pytest.importorskip("nbformat")
pm = pytest.importorskip("papermill")

import gcc  # noqa: E402
from gcc.assignments import ASSIGNMENTS, AssignmentCheckError, Feedback, checks, problem, variant  # noqa: E402
from gcc.assignments import build  # noqa: E402
from gcc.assignments.authoring import student_source  # noqa: E402
# The reference helpers stay private to each assignment's module (not advertised to students).
from gcc.assignments.checks import cpgc_peeling, inference_service, lambda_cv, rate_slope  # noqa: E402
from gcc.assignments.feedback import call_student, compare_arrays, compare_scalar  # noqa: E402

SEEDS = (0, 7)
IDS = list(ASSIGNMENTS)


# --------------------------------------------------------------------------- notebook runs
@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Run every (assignment, kind, seed) once; map it to None (success) or the papermill error."""
    out = tmp_path_factory.mktemp("assignment_runs")
    jobs = [(a, kind, seed) for a in IDS for kind in ("solution", "student") for seed in SEEDS]

    def run(job):
        a, kind, seed = job
        try:
            build.run_notebook(build.source_notebook(a, kind), out / f"{a}-{kind}-{seed}.ipynb", seed)
        except pm.PapermillExecutionError as exc:
            return job, exc
        return job, None

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(run, jobs))


def test_at_least_five_assignments_exist():
    assert len(build.assignment_ids()) >= 5
    for a in IDS:
        for kind in ("student", "solution"):
            path = build.source_notebook(a, kind)
            nb = nbformat.read(path, as_version=4)
            code = [c for c in nb.cells if c.cell_type == "code"]
            assert "parameters" in code[0].metadata.get("tags", []), path
            assert all(not c.outputs and c.execution_count is None for c in code), f"{path} has outputs"


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("assignment", IDS)
def test_solution_passes_its_checks(runs, assignment, seed):
    err = runs[(assignment, "solution", seed)]
    assert err is None, f"{assignment} solution failed for seed {seed}: {err}"


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("assignment", IDS)
def test_untouched_student_fails_with_feedback(runs, assignment, seed):
    err = runs[(assignment, "student", seed)]
    assert isinstance(err, pm.PapermillExecutionError), f"{assignment} student notebook did not fail"
    assert err.ename == "AssignmentCheckError", (err.ename, err.evalue)
    # The first task's feedback: which task, that it is not correct yet, what is missing, a hint.
    assert f"Assignment {assignment}, task 1 (" in err.evalue
    assert "is not correct yet" in err.evalue
    assert ("NotImplementedError" in err.evalue or "placeholder" in err.evalue), err.evalue
    assert "Hint:" in err.evalue


def test_student_notebooks_are_derived_from_the_solutions_and_book_pages_in_sync():
    assert build.students_out_of_sync() == [], "run: python -m gcc.assignments make-student"
    assert build.book_out_of_sync() == [], "run: python -m gcc.assignments sync-book"


def test_student_notebooks_contain_no_solution_code():
    for a in IDS:
        text = build.source_notebook(a, "student").read_text(encoding="utf-8")
        assert "BEGIN SOLUTION" not in text and "Model answer" not in text, a
        nb = nbformat.read(build.source_notebook(a, "student"), as_version=4)
        assert not any("solution" in c.metadata.get("tags", []) for c in nb.cells)


# --------------------------------------------------------------------------- no leaks
def _forms(x: float) -> set[str]:
    """Printed forms of a reference value that a message must not contain.

    Messages print relative errors with one significant digit (and factors with two), which carry no
    information about a value; forms with three or more significant digits would.
    """
    forms = {repr(x), str(x)}
    for fmt in (".6g", ".5g", ".4g", ".3g", ".6f", ".4f", ".3f", ".3e", ".2e"):
        forms.add(format(x, fmt))
    # Short forms (e.g. "0.1") occur by chance in any text; the informative ones are longer.
    return {f for f in forms if len(f.lstrip("-")) >= 5}


def assert_no_leak(message: str, reference) -> None:
    values = np.asarray(reference, dtype=float).ravel()
    for x in values[np.isfinite(values)]:
        if float(x).is_integer():
            continue
        for form in _forms(float(x)):
            assert form not in message, f"reference value {x!r} leaks as {form!r} in:\n{message}"


def _perturb(ref, rel=3e-2, seed=0):
    ref = np.asarray(ref, dtype=float)
    rng = np.random.default_rng(seed)
    return ref * (1 + rel * rng.standard_normal(ref.shape)) + rel * np.nanmax(np.abs(ref)) * (ref == 0)


def _msg(fb: Feedback) -> str:
    assert isinstance(fb, Feedback) and not fb.passed
    return fb.message


@pytest.mark.parametrize("seed", SEEDS)
def test_feedback_never_reveals_reference_values(seed):
    # 01 Berrut
    v = variant("01_berrut", seed)
    p = problem(v)
    code = gcc.BerrutCode(v.n_inputs, v.n_workers)
    E = code.encode(np.eye(v.n_inputs))
    enc = code.encode(p.X)
    Y = p.f(enc)[p.received]
    dec = code.decode(Y, p.received)
    assert_no_leak(_msg(checks.check_berrut_basis(lambda z, n: _perturb(E), v, raise_on_fail=False)), E)
    assert_no_leak(_msg(checks.check_berrut_encoder(lambda X, a, b: _perturb(enc), v, raise_on_fail=False)), enc)
    assert_no_leak(_msg(checks.check_berrut_decoder(lambda Y, r, a, b: _perturb(dec), v,
                                                    raise_on_fail=False)), dec)
    loss = gcc.mse_loss(dec, p.f(p.X))
    assert_no_leak(_msg(checks.check_berrut_loss(loss * 1.37, v, raise_on_fail=False)), loss)
    assert_no_leak(_msg(checks.check_berrut_loss(-loss, v, raise_on_fail=False)), loss)

    # 02 rate slope
    v = variant("02_rate_slope", seed)
    losses = rate_slope._reference_worst_losses(v, "spline")
    slope = gcc.loglog_slope(v.n_workers_grid, losses).slope
    assert_no_leak(_msg(checks.check_worst_case_loss(lambda c: losses[0] * 0.8, v, raise_on_fail=False)), losses)
    assert_no_leak(_msg(checks.check_loss_curve(_perturb(losses), v, raise_on_fail=False)), losses)
    assert_no_leak(_msg(checks.check_slope(slope + 0.4, v, raise_on_fail=False)), slope)
    assert_no_leak(_msg(checks.check_slope(slope * 2 / 3, v, raise_on_fail=False)), slope)

    # 03 lambda CV
    v = variant("03_lambda_cv", seed)
    table = lambda_cv._cv_table(v)
    sel = lambda_cv._cv_selection(v)
    assert_no_leak(_msg(checks.check_cv_loss(lambda le, ld: 1.2 * table[0, 0], v, raise_on_fail=False)), table)
    assert_no_leak(_msg(checks.check_cv_table(_perturb(table), v, raise_on_fail=False)), table)
    wrong = (v.lam_enc_grid[-1], v.lam_dec_grid[-1])
    if wrong == (sel.lam_enc, sel.lam_dec):
        wrong = (v.lam_enc_grid[0], v.lam_dec_grid[0])
    msg = _msg(checks.check_best_lambdas(wrong, v, raise_on_fail=False))
    assert_no_leak(msg, [sel.score])
    assert repr((sel.lam_enc, sel.lam_dec)) not in msg
    t_tuned = lambda_cv._test_loss(v, sel.lam_enc, sel.lam_dec)
    assert_no_leak(_msg(checks.check_test_losses(t_tuned * 1.5, 1.0, v, raise_on_fail=False)), t_tuned)

    # 04 CPGC peeling
    v = variant("04_cpgc_peeling", seed)
    _, _, arrivals, values = cpgc_peeling._cpgc_setup(v)
    history, stop, decoded = cpgc_peeling._cpgc_replay(v)
    swapped = list(arrivals)
    swapped[1], swapped[2] = swapped[2], swapped[1]
    msg = _msg(checks.check_arrival_order(swapped, v, raise_on_fail=False))
    assert repr(arrivals[1]) not in msg and repr(arrivals[2]) not in msg
    assert_no_leak(_msg(checks.check_message_values(_perturb(values), v, raise_on_fail=False)), values)
    msg = _msg(checks.check_peeling_history([h + 1 for h in history], v, raise_on_fail=False))
    assert repr(history) not in msg
    assert_no_leak(_msg(checks.check_decoded_blocks(_perturb(decoded), v, raise_on_fail=False)), decoded)
    msg = _msg(checks.check_stop_index(stop + 1, v, raise_on_fail=False))
    assert "too late" in msg

    # 05 inference service
    v = variant("05_inference_service", seed)
    lat, loss = inference_service._service_tables(v)
    ew = gcc.ShiftedExponential(shift=v.shift, rate=v.mu).expected_time(v.n_workers_grid[0], v.n_workers_grid[0])
    assert_no_leak(_msg(checks.check_expected_wait(lambda n, s: 0.0, v, raise_on_fail=False)), ew)
    assert_no_leak(_msg(checks.check_latency_table(_perturb(lat), v, raise_on_fail=False)), lat)
    assert_no_leak(_msg(checks.check_loss_table(_perturb(loss), v, raise_on_fail=False)), loss)
    design = inference_service._service_design(v)
    wrong = (v.n_workers_grid[-1], v.straggler_grid[0])
    if wrong == design:
        wrong = (v.n_workers_grid[0], v.straggler_grid[0])
    msg = _msg(checks.check_design(wrong, v, raise_on_fail=False))
    assert repr(design) not in msg
    assert_no_leak(msg, np.concatenate([lat.ravel(), loss.ravel()]))


# --------------------------------------------------------------------------- the feedback engine
def test_feedback_raises_assertion_error_with_message():
    v = variant("02_rate_slope", 0)
    with pytest.raises(AssertionError) as info:
        checks.check_slope(..., v)
    assert isinstance(info.value, AssignmentCheckError)
    assert isinstance(info.value.feedback, Feedback) and not info.value.feedback.passed
    assert "placeholder" in str(info.value) and "Hint:" in str(info.value)
    fb = checks.check_slope(..., v, raise_on_fail=False)
    assert not fb and "task 3" in repr(fb)


def test_compare_arrays_names_the_wrong_entry_and_the_usual_slips():
    ref = np.arange(1.0, 13.0).reshape(4, 3)
    assert compare_arrays(ref + 1e-14, ref, name="x")[0] == []
    wrong = ref.copy()
    wrong[2, 1] += 0.5
    problems, _ = compare_arrays(wrong, ref, name="x", axis_names=("worker", "column"))
    assert "worker 2, column 1" in problems[0] and "1 of 4 workers are wrong (worker 2)" in problems[1]
    assert "opposite sign" in compare_arrays(-ref, ref, name="x")[0][1]
    assert "constant multiple" in compare_arrays(3 * ref, ref, name="x")[0][1]
    assert "wrong order" in compare_arrays(ref[::-1], ref, name="x")[0][1]
    assert "shape (3, 4)" in compare_arrays(ref.T, ref, name="x")[0][0]
    assert "NaN" in compare_arrays(np.full_like(ref, np.nan), ref, name="x")[0][0]
    assert "placeholder" in compare_arrays(..., ref, name="x")[0][0]
    assert "too large" in compare_scalar(2.0, 1.0, name="s")[0][0]


def test_call_student_reports_not_implemented_and_crashes():
    def todo(x):
        raise NotImplementedError

    assert "NotImplementedError" in call_student(todo, "todo", 1)[1]
    assert "ZeroDivisionError" in call_student(lambda x: 1 / x, "inv", 0)[1]
    assert call_student(lambda x: x + 1, "inc", 1) == (2, None)


def test_student_source_markers():
    src = "a = 1\n# x = ...  # STUDENT\n# BEGIN SOLUTION\nx = 2\n# END SOLUTION\nprint(x)"
    assert student_source(src) == "a = 1\nx = ...\nprint(x)"
    with pytest.raises(ValueError, match="END SOLUTION"):
        student_source("# BEGIN SOLUTION\nx = 1")


# --------------------------------------------------------------------------- variants and builds
def test_variants_are_deterministic_and_differ_between_seeds():
    for a in IDS:
        assert variant(a, 3) == variant(a, 3)
        seeds_differ = any(variant(a, 0).params != variant(a, s).params
                           or not _same_problem(problem(variant(a, 0)), problem(variant(a, s)))
                           for s in (1, 2, 7))
        assert seeds_differ, a
    assert variant("01_berrut", 0, n_workers=30).n_workers == 30
    with pytest.raises(ValueError, match="'seed' parameter of variant"):
        variant("01_berrut", -1)
    with pytest.raises(ValueError, match="'assignment' parameter of variant"):
        variant("99_nope", 0)


def _same_problem(p, q) -> bool:
    for key, value in vars(p).items():
        if isinstance(value, np.ndarray) and not np.array_equal(value, getattr(q, key)):
            return False
        if isinstance(value, (int, float)) and value != getattr(q, key):
            return False
    return True


def test_make_variant_injects_the_seed(tmp_path):
    written = build.make_variant(17, tmp_path, assignments=["01_berrut"], solutions=True)
    assert [w.name for w in written] == ["01_berrut.ipynb", "01_berrut-solution.ipynb"]
    nb = nbformat.read(written[0], as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and "seed = 17" in injected[0].source
    assert "BEGIN SOLUTION" not in json.dumps(nb)


def test_make_variant_command_fixes_sizes(tmp_path):
    from gcc.assignments.__main__ import main

    assert main(["make-variant", "--seed", "5", "--out", str(tmp_path), "--only", "04_cpgc_peeling",
                 "-p", "n_workers", "9"]) == 0
    nb = nbformat.read(tmp_path / "04_cpgc_peeling.ipynb", as_version=4)
    injected = next(c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", []))
    assert "n_workers = 9" in injected.source and "seed = 5" in injected.source
    assert variant("04_cpgc_peeling", 5, n_workers=9, tolerance=None).n_workers == 9


def test_grade_lists_every_check():
    solved = build.grade(build.source_notebook("04_cpgc_peeling", "solution"), seed=7)
    assert [r["task"] for r in solved] == ["1", "2", "3", "4a", "4b", "5"]
    assert all(r["passed"] for r in solved)
    todo = build.grade(build.source_notebook("04_cpgc_peeling", "student"), seed=7)
    checked = [r for r in todo if r["task"] != "-"]
    assert [r["task"] for r in checked] == ["1", "2", "3", "4a", "4b", "5"]
    assert not any(r["passed"] for r in todo)


def test_build_instructor_without_execution(tmp_path):
    out = build.build_instructor(tmp_path / "instructor", seed=3, execute=False)
    toc = (out / "_toc.yml").read_text()
    for a in IDS:
        assert f"file: {a}" in toc and (out / f"{a}.ipynb").exists()
    assert "seed 3" in (out / "index.md").read_text()
