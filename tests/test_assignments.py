"""Course assignments as an nbgrader course (issues 8 and 17).

Offline end to end, in a temporary course with a SQLite gradebook: ``nbgrader generate_assignment``
releases the five assignments; one assignment goes through the exchange (release, fetch, submit,
collect), the other submissions are placed where ``collect`` puts them; each assignment is handed in
solved by one student and untouched by another (two seeds of each kind over the five assignments, one
submission per case: nbgrader starts a kernel for each); ``nbgrader autograde`` grades them all with
each student's seed and ``generate_feedback`` writes the feedback. Solved scores full marks on every
autograded cell, untouched scores zero with feedback naming the failing checks. Also: feedback never
reveals a reference value, the feedback engine's messages, variants, seeds and the book's pages.

The course takes about two minutes on two busy cores (nbgrader starts a kernel per notebook).
"""
from __future__ import annotations

import csv
import html
import importlib.util
import json
import re
import shutil
import time

import numpy as np
import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbconvert")  # gcc.assignments.course builds on it; nbgrader itself: needs_nbgrader

import gcc  # noqa: E402
from gcc.assignments import ASSIGNMENTS, AssignmentCheckError, Feedback, checks, problem, variant  # noqa: E402
from gcc.assignments import build, course  # noqa: E402
from gcc.assignments.course import run_nbgrader, student_seed, with_seed  # noqa: E402
# The reference helpers stay private to each assignment's module (not advertised to students).
from gcc.assignments.checks import cpgc_peeling, inference_service, lambda_cv, rate_slope  # noqa: E402
from gcc.assignments.feedback import call_student, compare_arrays, compare_scalar  # noqa: E402

IDS = list(ASSIGNMENTS)
SOLVED = ("ada", "bob")        # hand in the solutions
UNTOUCHED = ("cy", "dee")      # hand in the release as fetched
BUGGY = "eve"                  # hands in 01_berrut solved but for one bug in Task 1 (and her written answer)
THROUGH_EXCHANGE = "01_berrut"  # ada's and cy's copies of it go through release/fetch/submit/collect
#: assignment -> (who hands it in solved, who untouched): ada and cy 01, 03, 05; bob and dee 02, 04
HANDED_IN = {a: (SOLVED[i % 2], UNTOUCHED[i % 2]) for i, a in enumerate(IDS)}
COURSE_ID = "gcc-companion"

#: The tests that run nbgrader (extra "course"); the checks, feedback and variants need only gcc.
needs_nbgrader = pytest.mark.skipif(importlib.util.find_spec("nbgrader") is None,
                                    reason="nbgrader is not installed: pip install -e '.[course]'")


def _grading(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def _solve(released, source):
    """A released notebook with every solution cell filled in from the source (a student's work)."""
    answers = {_grading(c)["grade_id"]: c.source for c in source.cells if _grading(c).get("solution")}
    for cell in released.cells:
        if _grading(cell).get("solution"):
            cell.source = answers[_grading(cell)["grade_id"]]
    return released


# --------------------------------------------------------------------------- the course, end to end
@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Release, hand in, autograde and feed back every assignment; return the folders and timings."""
    pytest.importorskip("nbgrader", reason="nbgrader is not installed: pip install -e '.[course]'")
    from gcc.reproduce import ensure_kernel

    assert ensure_kernel() == "gcc-companion", "the notebooks run on the gcc-companion kernel"
    tmp = tmp_path_factory.mktemp("course")
    root, exchange = tmp / "course", tmp / "exchange"
    root.mkdir()
    exchange.mkdir(mode=0o777)
    shutil.copy(course.course_root() / "nbgrader_config.py", root)
    shutil.copytree(course.course_root() / "source", root / "source")
    # The exchange and the students' cache of their submissions (nbgrader's default: ~/.local/share).
    ex = (f"--Exchange.root={exchange}", f"--Exchange.cache={tmp / 'cache'}")
    seconds, logs = {}, {}

    def step(name, *args, cwd=root):
        start = time.perf_counter()
        logs[name] = logs.get(name, "") + run_nbgrader(*args, root=cwd, timeout=900)
        seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - start

    step("generate_assignment", "generate_assignment", "*", "--force")
    sources = {a: nbformat.read(root / "source" / a / f"{a}.ipynb", as_version=4) for a in IDS}

    # One assignment through the exchange: the students fetch it, work, submit; the teacher collects.
    step("release_assignment", "release_assignment", THROUGH_EXCHANGE, *ex)
    home = {s: tmp / "home" / s for s in (SOLVED[0], UNTOUCHED[0])}
    for path in home.values():
        path.mkdir(parents=True)
    step("fetch_assignment", "fetch_assignment", THROUGH_EXCHANGE, f"--course={COURSE_ID}", *ex, cwd=home["ada"])
    shutil.copytree(home["ada"] / THROUGH_EXCHANGE, home["cy"] / THROUGH_EXCHANGE)
    fetched = home["ada"] / THROUGH_EXCHANGE / f"{THROUGH_EXCHANGE}.ipynb"
    nbformat.write(_solve(nbformat.read(fetched, as_version=4), sources[THROUGH_EXCHANGE]), fetched)
    for s, folder in home.items():
        step("submit", "submit", THROUGH_EXCHANGE, f"--course={COURSE_ID}", f"--student={s}", *ex, cwd=folder)
    step("collect", "collect", THROUGH_EXCHANGE, *ex)

    # The other submissions, where nbgrader collect puts them.
    for a in IDS:
        released = root / "release" / a / f"{a}.ipynb"
        for s in HANDED_IN[a]:
            target = root / "submitted" / s / a / f"{a}.ipynb"
            if target.exists():
                continue
            target.parent.mkdir(parents=True)
            nb = nbformat.read(released, as_version=4)
            nbformat.write(_solve(nb, sources[a]) if s in SOLVED else nb, target)

    # eve: a bug in Task 1 of 01_berrut, everything else solved.
    target = root / "submitted" / BUGGY / "01_berrut" / "01_berrut.ipynb"
    target.parent.mkdir(parents=True)
    nb = _solve(nbformat.read(root / "release" / "01_berrut" / "01_berrut.ipynb", as_version=4), sources["01_berrut"])
    bug = next(c for c in nb.cells if _grading(c).get("grade_id") == "task1_solution")
    bug.source = bug.source.replace(*TASK1_BUGS["01_berrut"])
    nbformat.write(nb, target)

    step("autograde", "autograde", "*")
    step("generate_feedback", "generate_feedback", "*")
    step("export", "export", f"--to={tmp / 'grades.csv'}")
    pending_export = ("export", "--exporter=gcc.assignments.gradebook.PendingCsvExport")
    step("export_pending", *pending_export, f"--to={tmp / 'pending.csv'}")
    # The teacher grades eve's written answer by hand; the export then shows it graded.
    from gcc.assignments.gradebook import grade_written

    db = f"sqlite:///{root / 'gradebook.db'}"
    total = grade_written("01_berrut", BUGGY, 2.0, "Good on Lagrange.", db_url=db)
    step("export_pending", *pending_export, f"--to={tmp / 'graded.csv'}")
    print("nbgrader seconds:", {k: round(v, 1) for k, v in seconds.items()})
    return {"root": root, "grades": tmp / "grades.csv", "seconds": seconds, "logs": logs, "db": db,
            "pending": tmp / "pending.csv", "graded": tmp / "graded.csv", "eve_total": total}


def _submission(graded, assignment, student):
    from nbgrader.api import Gradebook

    with Gradebook(graded["db"], COURSE_ID) as gb:
        sub = gb.find_submission(assignment, student)
        grades = [(g.name, g.cell_type, g.auto_score, g.max_score, g.needs_manual_grade)
                  for nb in sub.notebooks for g in nb.grades]
        return dict(score=sub.score, max_score=sub.max_score, code_score=sub.code_score,
                    max_code_score=sub.max_code_score, needs_manual_grade=sub.needs_manual_grade, grades=grades)


def _autograded(graded, assignment, student):
    return nbformat.read(graded["root"] / "autograded" / student / assignment / f"{assignment}.ipynb",
                         as_version=4)


@pytest.mark.parametrize("assignment", IDS)
def test_solved_submission_scores_full_marks(graded, assignment):
    student = HANDED_IN[assignment][0]
    sub = _submission(graded, assignment, student)
    code = [g for g in sub["grades"] if g[1] == "code"]
    assert len(code) >= 4 and sub["max_code_score"] == 10
    assert [g[2] for g in code] == [g[3] for g in code], f"{assignment}/{student}: {code}"
    assert sub["code_score"] == sub["max_code_score"]
    # The written answer waits for the teacher (nbgrader's manual grading).
    written = [g for g in sub["grades"] if g[1] == "markdown"]
    assert len(written) == 1 and written[0][4] and sub["needs_manual_grade"]
    assert sub["score"] == sub["max_code_score"]


@pytest.mark.parametrize("assignment", IDS)
def test_untouched_submission_scores_zero_with_feedback_naming_the_failing_checks(graded, assignment):
    student = HANDED_IN[assignment][1]
    sub = _submission(graded, assignment, student)
    assert sub["score"] == 0 and sub["max_score"] > 0 and not sub["needs_manual_grade"]
    page = (graded["root"] / "feedback" / student / assignment / f"{assignment}.html").read_text()
    page = html.unescape(re.sub(r"<[^>]+>", "", page))  # the text a student reads
    nb = _autograded(graded, assignment, student)
    tests = [c for c in nb.cells if _grading(c).get("grade") and c.cell_type == "code"]
    assert len(tests) == len([g for g in sub["grades"] if g[1] == "code"])
    for cell in tests:
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert len(errors) == 1 and errors[0].ename == "AssignmentCheckError", (cell.source, cell.outputs)
        message = errors[0].evalue
        header = re.match(r"\u2718 (Task \S+ \(.*?\)) is not correct yet\.", message)
        assert header, message
        # nbgrader validate cuts every line at 83 characters: the diagnosis fits in full.
        assert all(len(line) <= 80 for line in errors[0].traceback), errors[0].traceback
        assert "placeholder" in message or "NotImplementedError" in message, message
        assert "Hint:" in message
        # The feedback names the check (its header) and shows no traceback through gcc's code.
        assert header.group(1) in page
        assert "gcc/assignments" not in "\n".join(errors[0].traceback)
    assert re.search(r"Score: 0(\.0)? / 13(\.0)?", page), "the feedback shows the score"


@pytest.mark.parametrize("student", SOLVED + UNTOUCHED)
def test_autograder_grades_with_the_students_seed(graded, student):
    for a in (a for a in IDS if student in HANDED_IN[a]):
        nb = _autograded(graded, a, student)
        params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
        assert f"seed = {student_seed(student)}  # set by the autograder for student {student}" in params.source
        setup = next(c for c in nb.cells if _grading(c).get("grade_id") == "setup")
        printed = "".join(o.get("text", "") for o in setup.outputs)
        assert f"{a} (seed {student_seed(student)})" in printed


def test_gradebook_export_and_the_exchange(graded):
    with open(graded["grades"], newline="") as fh:
        rows = list(csv.DictReader(fh))
    everyone = SOLVED + UNTOUCHED + (BUGGY,)
    assert {(r["assignment"], r["student_id"]) for r in rows} == {(a, s) for a in IDS for s in everyone}
    for r in rows:
        solved = r["student_id"] == HANDED_IN[r["assignment"]][0]
        want = 10.0 if solved else 7.0 if (r["student_id"], r["assignment"]) == (BUGGY, "01_berrut") else 0.0
        assert float(r["score"]) == want, r
        assert float(r["max_score"]) == 13.0
    # A test cell prints its check: no output nbgrader would try to read as partial credit.
    assert "Cell output is" not in graded["logs"]["autograde"]
    # No warnings at all in autograde's output (SQLAlchemy's SAWarnings, the kernel's TCP warning).
    assert "warning" not in graded["logs"]["autograde"].lower(), [
        line for line in graded["logs"]["autograde"].splitlines() if "warning" in line.lower()]
    # What went through the exchange was collected with its submission time.
    for s in ("ada", "cy"):
        assert (graded["root"] / "submitted" / s / THROUGH_EXCHANGE / "timestamp.txt").exists()
    print("nbgrader seconds:", {k: round(v, 1) for k, v in graded["seconds"].items()})


def _csv(path):
    with open(path, newline="") as fh:
        return {(r["assignment"], r["student_id"]): r for r in csv.DictReader(fh)}


def test_export_marks_pending_points(graded):
    rows = _csv(graded["pending"])
    for a, (s, _) in HANDED_IN.items():   # the autograded 10 points, and the written answer's 3 marked as pending
        r = rows[a, s]
        assert (float(r["score"]), float(r["max_score"]), float(r["pending_points"]), r["status"]) == \
            (10.0, 13.0, 3.0, "pending manual grading"), r
    r = rows["01_berrut", "cy"]   # untouched: nbgrader scores an unchanged answer 0 itself, nothing pending
    assert (float(r["score"]), float(r["pending_points"]), r["status"]) == (0.0, 0.0, "graded"), r
    assert rows["02_rate_slope", BUGGY]["status"] == "not submitted"
    assert rows["01_berrut", BUGGY]["status"] == "pending manual grading"
    # After grade_written (the formgrader's step), eve's submission is graded: 7 + 2 points.
    r = _csv(graded["graded"])["01_berrut", BUGGY]
    assert (float(r["score"]), float(r["pending_points"]), r["status"]) == (9.0, 0.0, "graded"), r
    assert graded["eve_total"] == 9.0


def test_a_bug_in_task_1_through_nbgrader_costs_3_points(graded):
    sub = _submission(graded, "01_berrut", BUGGY)
    points = {g[0]: (g[2], g[3]) for g in sub["grades"] if g[1] == "code"}
    assert points == {"check_berrut_basis": (0.0, 3.0), "check_berrut_encoder": (2.0, 2.0),
                      "check_berrut_decoder": (3.0, 3.0), "check_berrut_loss": (1.0, 1.0),
                      "check_code_comparison": (1.0, 1.0)}, points
    page = (graded["root"] / "feedback" / BUGGY / "01_berrut" / "01_berrut.html").read_text()
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert "your `berrut_basis` (Task 1) is not correct yet" in text
    # The written answer waits for the teacher: pending, not "0.0 / 3.0".
    assert "pending: 3.0 points, not graded yet" in text and "3.0 of these points are pending" in text


def test_feedback_page_renders_maths_offline_and_wraps_lines(graded):
    page = (graded["root"] / "feedback" / SOLVED[0] / "01_berrut" / "01_berrut.html").read_text()
    # Nothing loaded from the network: no external script or style sheet.
    assert "cdnjs" not in page and not re.search(r'<script[^>]*\bsrc=|<link[^>]*href="(https?:)?//', page)
    assert "text/x-mathjax-config" not in page          # MathJax 2's configuration is gone ...
    assert "window.MathJax = {" in page and "data:font/woff;base64," in page   # ... MathJax 3 inline
    assert not re.search(r"%%URL%%/[A-Za-z]", page) and "white-space: pre-wrap" in page   # every font embedded
    assert page.count("<script") == page.count("</script>")


# --------------------------------------------------------------------------- the course's sources
def test_five_source_notebooks_are_nbgrader_sources():
    assert course.assignment_ids() == IDS
    for a in IDS:
        nb = nbformat.read(course.source_notebook(a), as_version=4)
        assert nb.metadata["kernelspec"]["name"] == "gcc-companion"
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert "parameters" in code[0].metadata.get("tags", []) and "seed = " in code[0].source, a
        assert all(not c.outputs and c.execution_count is None for c in code), f"{a} has outputs"
        ids = [_grading(c)["grade_id"] for c in nb.cells if _grading(c)]
        assert len(ids) == len(set(ids)) == len(nb.cells) - 1, f"{a}: every cell but the parameters is nbgrader's"
        tests = [c for c in code if _grading(c).get("grade")]
        assert sum(_grading(c)["points"] for c in tests) == 10
        for cell in tests:
            # print(): a test cell's last value would be read as partial credit by nbgrader
            assert _grading(cell)["locked"] and len(re.findall(r"^print\(checks\.check_\w+\(", cell.source, re.M)) == 1
        for cell in (c for c in code if _grading(c).get("solution")):
            assert "### BEGIN SOLUTION" in cell.source and "### END SOLUTION" in cell.source, cell.source
        written = [c for c in nb.cells if c.cell_type == "markdown" and _grading(c).get("grade")]
        assert len(written) == 1 and _grading(written[0])["solution"]


def test_release_holds_no_solution(graded):
    for a in IDS:
        text = (graded["root"] / "release" / a / f"{a}.ipynb").read_text(encoding="utf-8")
        assert "BEGIN SOLUTION" not in text and "Model answer" not in text, a
        source = nbformat.read(course.source_notebook(a), as_version=4)
        regions = [c.source.split("### BEGIN SOLUTION")[1].split("### END SOLUTION")[0]
                   for c in source.cells if _grading(c).get("solution") and c.cell_type == "code"]
        given = {ln.strip() for c in source.cells if not _grading(c).get("solution") for ln in c.source.splitlines()}
        for line in {ln.strip() for region in regions for ln in region.splitlines()} - given:
            if len(line) > 25:
                assert json.dumps(line)[1:-1] not in text, f"{a}: solution line {line!r} released"


def test_book_pages_are_the_release_with_the_students_code_shown(graded, tmp_path):
    pages = build.sync_book(dest=tmp_path, release=graded["root"] / "release")
    assert [p.name for p in pages] == [f"{a}.ipynb" for a in IDS]
    for a, page in zip(IDS, pages):
        nb = nbformat.read(page, as_version=4)
        released = nbformat.read(graded["root"] / "release" / a / f"{a}.ipynb", as_version=4)
        assert [c.source for c in nb.cells] == [c.source for c in released.cells]
        for cell in (c for c in nb.cells if c.cell_type == "code"):
            students = _grading(cell).get("solution") or "parameters" in cell.metadata["tags"]
            assert ("show-input" if students else "hide-input") in cell.metadata["tags"]
            assert not cell.outputs


@needs_nbgrader
def test_sync_book_generates_its_own_release(tmp_path):
    pages = build.sync_book(["04_cpgc_peeling"], dest=tmp_path / "pages")
    text = pages[0].read_text(encoding="utf-8")
    assert pages[0].name == "04_cpgc_peeling.ipynb" and "raise NotImplementedError()" in text
    assert "BEGIN SOLUTION" not in text


# --------------------------------------------------------------------------- seeds
def test_student_seeds_are_fixed_and_differ():
    seeds = {s: student_seed(s) for s in SOLVED + UNTOUCHED}
    assert seeds == {s: student_seed(s) for s in seeds} and len(set(seeds.values())) == len(seeds)
    assert all(0 <= v < course.SEED_RANGE for v in seeds.values())
    with pytest.raises(ValueError, match="'student_id' parameter of student_seed"):
        student_seed(17)


def test_with_seed_replaces_only_the_seed_line():
    cell = "seed = 0  # yours\n# sizes\nn_workers = None"
    assert with_seed(cell, 17, "ada") == "seed = 17  # set by the autograder for student ada\n# sizes\nn_workers = None"
    assert with_seed("n = 3", 5) == "seed = 5  # set by the autograder\nn = 3"
    with pytest.raises(ValueError, match="'seed' parameter of with_seed"):
        with_seed(cell, -1)


def test_with_seed_sets_every_seed_assignment_or_refuses_the_cell():
    # a student's second `seed = ...` line is the one that counts: it is set too, as is a multi-line one
    assert with_seed("seed = 0\nn = seed + 1\nseed = 5\n", 3) == (
        "seed = 3  # set by the autograder\nn = seed + 1\nseed = 3  # set by the autograder\n")
    assert with_seed("seed: int = (\n    4)\nn = 2", 3) == "seed = 3  # set by the autograder\nn = 2"
    for cell, line in [("seed = 0\nseed += 1", "line 2"), ("n = 1; seed = 2", "line 1"), ("seed, n = 1, 2", "line 1"),
                       ("seed = 0\nfor seed in range(3):\n    pass", "line 2"), ("x = seed = 1", "line 1"),
                       ("seed = 0\nif True:\n    seed = 7", "line 3"), ("seed = (seed := 9)", "line 1")]:
        with pytest.raises(ValueError, match=rf"'parameters' parameter of with_seed must be a parameters cell that "
                                             rf"sets seed only by lines `seed = \.\.\.` \({line} binds seed otherwise"):
            with_seed(cell, 3)
    with pytest.raises(ValueError, match=r"'parameters' parameter of with_seed .*valid Python.*line 1"):
        with_seed("seed = (", 3)


@needs_nbgrader
def test_student_seed_step_resets_the_parameters_cell():
    from traitlets.config import Config

    step = course.StudentSeed(config=Config({"CourseDirectory": {"root": str(course.course_root())},
                                             "StudentSeed": {"seeds": {"bob": 17}}}))
    source = nbformat.read(course.source_notebook("04_cpgc_peeling"), as_version=4)
    resources = {"nbgrader": {"student": "ada", "assignment": "04_cpgc_peeling", "notebook": "04_cpgc_peeling"}}
    submitted = nbformat.from_dict(source)
    submitted.cells[2].source = "seed = 3\nn_workers = 40\ntolerance = None"   # another seed, other sizes
    params = step.preprocess(submitted, resources)[0].cells[2]
    assert params.source == with_seed(source.cells[2].source, student_seed("ada"), "ada")
    # A submission that lost its parameters cell gets it back before the setup cell; "bob" has a given seed.
    lost = nbformat.from_dict(source)
    del lost.cells[2]
    nb = step.preprocess(lost, {"nbgrader": {**resources["nbgrader"], "student": "bob"}})[0]
    assert "parameters" in nb.cells[2].metadata["tags"] and nb.cells[2].source.startswith("seed = 17  #")
    assert _grading(nb.cells[3])["grade_id"] == "setup"


def test_seeds_command(capsys):
    from gcc.assignments.__main__ import main

    assert main(["seeds", "ada", "bob"]) == 0
    assert capsys.readouterr().out.split() == ["ada", str(student_seed("ada")), "bob", str(student_seed("bob"))]


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


@pytest.mark.parametrize("seed", (0, 7))
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
    assert not fb and "Task 3" in repr(fb)


def test_short_failures_shows_the_feedback_alone():
    class Shell:
        def set_custom_exc(self, types, handler):
            self.types, self.handler = types, handler

        def _showtraceback(self, etype, value, stb):
            self.shown = stb

    shell = Shell()
    assert checks.short_failures(shell) and shell.types == (AssignmentCheckError,)
    try:
        checks.check_slope(..., variant("02_rate_slope", 0))
    except AssignmentCheckError as exc:
        lines = shell.handler(shell, type(exc), exc, exc.__traceback__)
    assert shell.shown == lines and lines[0] == "AssignmentCheckError: \u2718 Task 3 (log-log slope, spline) is not correct yet."
    assert len(lines) > 2 and all(len(line) <= 80 for line in lines), lines
    assert checks.short_failures() is False  # outside IPython nothing changes


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


# --------------------------------------------------------------------------- variants
def test_variants_are_deterministic_and_differ_between_seeds():
    for a in IDS:
        assert variant(a, 3) == variant(a, 3)
        seeds_differ = any(variant(a, 0).params != variant(a, s).params
                           or not _same_problem(problem(variant(a, 0)), problem(variant(a, s)))
                           for s in (1, 2, 7))
        assert seeds_differ, a
    assert variant("01_berrut", 0, n_workers=30).n_workers == 30
    assert variant("04_cpgc_peeling", 5, n_workers=9, tolerance=None).n_workers == 9
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


# --------------------------------------------------------------------------- each task graded on its own
#: One bug in Task 1 of each assignment: (text of the source's solution, the student's version).
TASK1_BUGS = {
    "01_berrut": ("signs = (-1.0) ** np.arange(1, len(nodes) + 1)", "signs = np.ones(len(nodes))"),
    "02_rate_slope": ("for start in range(N - S + 1):", "for start in range(0, N - S + 1, 2):"),
    "03_lambda_cv": ('return float(df["loss"].mean())', 'return float(df["loss"].median())'),
    "04_cpgc_peeling": ('kind="stable")]', 'kind="stable")][::-1]'),
    "05_inference_service": ("return shift + sum", "return sum"),
}


def _points_in_process(assignment: str, edit: tuple[str, str], cell: str = "task1_solution", seed: int = 0):
    """Run a source notebook's cells in this process, ``edit`` applied to one solution cell; the
    points of every test cell and its feedback (what nbgrader's autograde would score)."""
    nb = nbformat.read(course.source_notebook(assignment), as_version=4)
    ns, scores = {}, {}
    for c in (c for c in nb.cells if c.cell_type == "code"):
        src = c.source.replace("plt.show()", "plt.close('all')")
        if "parameters" in c.metadata.get("tags", []):
            src = with_seed(src, seed)
        if _grading(c).get("grade_id") == cell:
            assert edit[0] in src, (assignment, edit)
            src = src.replace(*edit)
        try:
            exec(src, ns)
            if _grading(c).get("grade"):
                scores[_grading(c)["grade_id"]] = (_grading(c)["points"], "")
        except AssignmentCheckError as exc:
            scores[_grading(c)["grade_id"]] = (0, str(exc))
    return scores, ns


@pytest.mark.parametrize("assignment", IDS)
def test_a_bug_in_task_1_costs_task_1s_points_only(assignment):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    scores, _ = _points_in_process(assignment, TASK1_BUGS[assignment])
    first, *later = scores
    assert scores[first][0] == 0 and "Task 1 (" in scores[first][1], scores
    assert all(scores[g][0] > 0 for g in later), {g: scores[g] for g in later if not scores[g][0]}


def test_berrut_tasks_2_and_3_use_the_reference_basis_and_say_so():
    scores, ns = _points_in_process("01_berrut", TASK1_BUGS["01_berrut"])
    own = ns["berrut_basis"]
    v = ns["v"]
    for check, func in ((checks.check_berrut_encoder, "berrut_encode"), (checks.check_berrut_decoder, "berrut_decode")):
        fb = check(ns[func], v, raise_on_fail=False)
        assert fb.passed and "your `berrut_basis` (Task 1) is not correct yet" in fb.note, fb
    assert ns["berrut_basis"] is own, "the student's basis is restored after the check"
    # A bug in the encoder itself, with the student's basis wrong too: the encoder is named as the cause.
    ns["berrut_encode"] = eval("lambda X, alphas, betas: 2 * berrut_basis(betas, alphas) @ X", ns)
    fb = checks.check_berrut_encoder(ns["berrut_encode"], v, raise_on_fail=False)
    assert not fb.passed and "this error is in `berrut_encode` itself" in fb.message
    assert "constant multiple" in fb.message and ns["berrut_basis"] is own
    # With a correct basis nothing is said about Task 1.
    scores, ns = _points_in_process("01_berrut", ("@ X", "@ X"), cell="task2_solution")
    fb = checks.check_berrut_encoder(ns["berrut_encode"], ns["v"], raise_on_fail=False)
    assert fb.passed and "Task 1" not in fb.note


def test_a_later_task_says_when_the_earlier_one_is_the_cause():
    v = variant("02_rate_slope", 0)
    losses = rate_slope._reference_worst_losses(v, "spline")
    wrong = losses * np.array([1.0, 1.0, 1.5, 1.0])
    # The slope of the wrong curve, fitted correctly: full points, and the note names Task 2.
    own = gcc.loglog_slope(np.asarray(v.n_workers_grid, dtype=float), wrong).slope
    fb = checks.check_slope(own, v, losses=wrong, raise_on_fail=False)
    assert fb.passed and "your `losses` from Task 2, which is not correct yet" in fb.note
    # A slope that follows from neither: the first problem names the earlier task.
    fb = checks.check_slope(own + 0.5, v, losses=wrong, raise_on_fail=False)
    assert not fb.passed and fb.problems[0].startswith("This task uses your `losses` from Task 2, which is not")
    # Right curve, wrong slope: nothing about Task 2.
    fb = checks.check_slope(own + 0.5, v, losses=losses, raise_on_fail=False)
    assert not fb.passed and "Task 2" not in fb.message


def test_reference_helpers_restore_the_students_function_after_an_error():
    from gcc.assignments.checks.common import reference_helpers

    ns = {}
    exec("def helper():\n    return 'own'\n\ndef task():\n    return helper()", ns)
    own = ns["helper"]
    with pytest.raises(RuntimeError):
        with reference_helpers(ns["task"], helper=lambda: "reference", missing=lambda: 0) as swapped:
            assert ns["task"]() == "reference" and swapped == {"helper": own} and "missing" not in ns
            raise RuntimeError
    assert ns["helper"] is own
    with reference_helpers(len, helper=lambda: 0) as swapped:   # not a Python function: nothing swapped
        assert swapped == {}


def test_failure_messages_fit_nbgrader_validates_lines():
    fb = Feedback("01_berrut", "1", "Berrut basis", False,
                  ["x " * 120 + "`a_very_long_name_that_must_stay_whole`"], ["y " * 90])
    lines = fb.message.split("\n")
    assert lines[0] == "\u2718 Task 1 (Berrut basis) is not correct yet." and len(lines) > 4
    assert all(len(line) <= 76 for line in lines)
    assert "`a_very_long_name_that_must_stay_whole`" in fb.message


# --------------------------------------------------------------------------- bad student ids and seeds
@pytest.mark.parametrize("student", ["a\nimport os", "a\rb", "tab\there", "esc\x1b[0m", "", "x" * 101,
                                     "line\u2028sep"])
def test_with_seed_rejects_student_ids_that_would_change_the_code(student):
    with pytest.raises(ValueError, match="'student_id' parameter of with_seed must be a student id"):
        with_seed("seed = 0", 1, student)
    with pytest.raises(ValueError, match="'student_id' parameter of student_seed"):
        student_seed(student)


@pytest.mark.parametrize("student", ["CORP\\user", "CORP\\ada", "o'brien", 'say "hi"', "zoë", "a\\1\\g<0>"])
def test_with_seed_writes_backslashes_and_quotes_as_they_are(student):
    cell = with_seed("seed = 0  # yours\nn = None", 3, student)
    assert cell == f"seed = 3  # set by the autograder for student {student}\nn = None"
    compile(cell, "<parameters>", "exec")     # still one comment: the id cannot become code
    ns = {}
    exec(cell, ns)
    assert ns["seed"] == 3 and ns["n"] is None


@pytest.mark.parametrize("seed", [1.7, 2.0, True, "3", -1, 2 ** 32, None])
def test_with_seed_takes_int_seeds_only(seed):
    with pytest.raises(ValueError, match="'seed' parameter of with_seed must be an int"):
        with_seed("seed = 0", seed)


@needs_nbgrader
@pytest.mark.parametrize("seeds, match", [({"ada": 1.7}, r"'seeds\['ada'\]' parameter of StudentSeed must be an int"),
                                          ({"ada": -3}, r"'seeds\['ada'\]' parameter"),
                                          ({"a\nb": 3}, "'seeds' parameter of StudentSeed must be a student id")])
def test_student_seed_step_rejects_bad_configured_seeds(seeds, match):
    with pytest.raises(ValueError, match=match):
        course.StudentSeed(seeds=seeds)
    assert course.StudentSeed(seeds={"ada": 17}).seeds == {"ada": 17}


@pytest.mark.parametrize("argv, match", [(["list", "--seed", "-1"], "'seed' parameter of variant must be an int >= 0"),
                                         (["seeds", "a\nb"], "'student_id' parameter of student_seed")])
def test_command_line_reports_bad_input_without_a_traceback(argv, match, capsys):
    from gcc.assignments.__main__ import main

    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2 and re.search(match, err) and "Traceback" not in err, err


@pytest.mark.parametrize("check, answers, earlier", [
    ("check_loss_curve", (...,), {"worst_case_loss": ...}), ("check_slope", (...,), {"losses": ...}),
    ("check_rate_verdict", (...,), {"slope": ...}), ("check_cv_table", (...,), {"cv_loss": ...}),
    ("check_best_lambdas", (...,), {"cv_table": ...}), ("check_test_losses", (..., ...), {"best": ...}),
    ("check_peeling_history", (...,), {"arrivals": ...}), ("check_stop_index", (...,), {"history": ...}),
    ("check_decoded_blocks", (...,), {"arrivals": ..., "values": ...}),
    ("check_design", (...,), {"latency95": ..., "mean_loss": ...}), ("check_robustness", (...,), {"design": ...}),
])
def test_untouched_later_tasks_say_placeholder_and_name_the_earlier_task(check, answers, earlier):
    func = getattr(checks, check)
    assignment = func.__module__.rsplit(".", 1)[1]
    v = variant(next(a for a in IDS if a.endswith(assignment)), 0)
    fb = func(*answers, v, **earlier, raise_on_fail=False)
    assert not fb.passed and "placeholder" in fb.message, fb.message
    # the earlier answer (a placeholder too) is named as not correct yet
    assert fb.problems[0].startswith("This task uses your `") and "which is not correct yet" in fb.problems[0]
