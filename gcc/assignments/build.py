"""Student pages, per-student variants and the instructor build.

Sources live in ``assignments/<id>/student.ipynb`` and ``assignments/<id>/solution.ipynb``
(outside ``notebooks/``: the reproduce runner must never run a student notebook, which fails
by design until it is solved). This module

- writes the student notebooks, without outputs, as the book's pages
  ``book/generated/assignments/<id>.ipynb`` (the book build calls :func:`sync_book`; the pages are
  build products, never committed: students see tasks, never solutions);
- writes per-student copies with the seed injected by papermill (``make-variant``);
- assembles a separate Jupyter Book of the executed solutions for instructors
  (``build-instructor``), by default in ``_build/instructor``.

- grades a filled-in student notebook: runs it to the end and lists which checks pass (``grade``).

Command line: ``python -m gcc.assignments --help``.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from gcc.validation import check_choice

from ..results import repo_root
from .authoring import clean_notebook, student_from_solution
from .variants import ASSIGNMENTS

__all__ = [
    "assignment_ids",
    "source_notebook",
    "make_students",
    "students_out_of_sync",
    "sync_book",
    "book_out_of_sync",
    "run_notebook",
    "make_variant",
    "build_instructor",
    "grade",
]


def assignment_ids() -> list[str]:
    """Ids of the assignments whose source folder exists, in book order."""
    root = repo_root() / "assignments"
    return [a for a in ASSIGNMENTS if (root / a / "student.ipynb").exists()]


def source_notebook(assignment: str, kind: str = "student") -> Path:
    """Path of ``assignments/<assignment>/<kind>.ipynb`` (kind: ``student`` or ``solution``)."""
    check_choice(kind, "kind", "source_notebook", ("student", "solution"))
    check_choice(assignment, "assignment", "source_notebook", tuple(ASSIGNMENTS))
    return repo_root() / "assignments" / assignment / f"{kind}.ipynb"


def _derived_student(assignment: str) -> str:
    import nbformat

    nb = student_from_solution(nbformat.read(source_notebook(assignment, "solution"), as_version=4))
    return nbformat.writes(nb) + "\n"


def _solution_ids() -> list[str]:
    root = repo_root() / "assignments"
    return [a for a in ASSIGNMENTS if (root / a / "solution.ipynb").exists()]


def make_students(assignments: Iterable[str] | None = None) -> list[Path]:
    """Derive ``assignments/<id>/student.ipynb`` from ``solution.ipynb`` (see :mod:`.authoring`)."""
    written = []
    for a in assignments or _solution_ids():
        target = source_notebook(a, "student")
        target.write_text(_derived_student(a), encoding="utf-8")
        written.append(target)
    return written


def students_out_of_sync() -> list[str]:
    """Ids whose ``student.ipynb`` is missing or differs from the one derived from the solution."""
    return [a for a in _solution_ids()
            if not source_notebook(a).exists()
            or source_notebook(a).read_text(encoding="utf-8") != _derived_student(a)]


def _book_page(assignment: str, dest: Path | None = None) -> Path:
    return (Path(dest) if dest else repo_root() / "book" / "generated" / "assignments") / f"{assignment}.ipynb"


def _student_page(assignment: str) -> str:
    import nbformat

    nb = clean_notebook(nbformat.read(source_notebook(assignment), as_version=4))
    return nbformat.writes(nb) + "\n"


def sync_book(assignments: Iterable[str] | None = None, dest: Path | None = None) -> list[Path]:
    """Write the student notebooks, without outputs, as the book's pages ``<dest>/<id>.ipynb``.

    ``dest`` defaults to ``book/generated/assignments`` (the book build passes its own folder of
    generated pages).
    """
    written = []
    for a in assignments or assignment_ids():
        page = _book_page(a, dest)
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(_student_page(a), encoding="utf-8")
        written.append(page)
    return written


def book_out_of_sync(dest: Path | None = None) -> list[str]:
    """Ids whose generated book page differs from the student source (a missing page is written by
    the next book build, so it is not out of sync)."""
    return [a for a in assignment_ids()
            if _book_page(a, dest).exists() and _book_page(a, dest).read_text(encoding="utf-8") != _student_page(a)]


def run_notebook(source: Path, output: Path, seed: int, prepare_only: bool = False,
                 kernel_name: str | None = None, cwd: Path | None = None,
                 params: Mapping[str, Any] | None = None):
    """Run (or only parametrise) one notebook with papermill, injecting ``seed`` (and ``params``).

    Raises ``papermill.PapermillExecutionError`` when a cell fails, e.g. a student check.
    """
    import papermill as pm

    if kernel_name is None and not prepare_only:
        # The kernel of the reproduce runner: it runs this interpreter, whatever is first on PATH.
        from ..reproduce import ensure_kernel

        kernel_name = ensure_kernel()
    output.parent.mkdir(parents=True, exist_ok=True)
    return pm.execute_notebook(str(source), str(output), parameters={**(params or {}), "seed": int(seed)},
                               prepare_only=prepare_only, kernel_name=kernel_name, progress_bar=False,
                               cwd=str(cwd or source.parent))


def make_variant(seed: int, out: Path | None = None, assignments: Sequence[str] | None = None,
                 solutions: bool = False, params: Mapping[str, Any] | None = None) -> list[Path]:
    """Write one student's notebooks with ``seed`` injected (not executed).

    Parameters
    ----------
    seed : int
        The student's seed.
    out : Path, optional
        Output folder; default ``_build/variants/seed-<seed>``.
    assignments : sequence of str, optional
        Which assignments (default: all).
    solutions : bool
        Also write the solution notebooks for that seed (for the instructor), as ``<id>-solution.ipynb``.
    params : mapping, optional
        Sizes to fix instead of drawing them from the seed (e.g. ``{"n_workers": 30}``); each
        notebook's parameters cell lists the ones it accepts.

    Returns
    -------
    list of Path
        The written notebooks.
    """
    out = Path(out) if out is not None else repo_root() / "_build" / "variants" / f"seed-{seed}"
    written = []
    for a in assignments or assignment_ids():
        kinds = ("student", "solution") if solutions else ("student",)
        for kind in kinds:
            name = f"{a}.ipynb" if kind == "student" else f"{a}-solution.ipynb"
            target = out / name
            run_notebook(source_notebook(a, kind), target, seed, prepare_only=True, params=params)
            import nbformat

            nbformat.write(clean_notebook(nbformat.read(target, as_version=4)), target)
            written.append(target)
    return written


_INSTRUCTOR_CONFIG = """\
# Instructor build of the assignments: executed solution notebooks. Not part of the public book.
title: "GCC companion: assignment solutions (instructor edition)"
author: The GCC companion team
only_build_toc_files: true
execute:
  execute_notebooks: "off"
parse:
  myst_enable_extensions:
    - amsmath
    - dollarmath
launch_buttons:
  thebe: false
"""


def build_instructor(out: Path | None = None, seed: int = 0, execute: bool = True,
                     html: bool = False, assignments: Sequence[str] | None = None) -> Path:
    """Assemble the instructor edition: a Jupyter Book of the solution notebooks.

    Parameters
    ----------
    out : Path, optional
        Folder of the instructor book; default ``_build/instructor``.
    seed : int
        The variant the solutions are executed for.
    execute : bool
        Execute the solutions with papermill (otherwise they are copied with the seed injected).
    html : bool
        Also run ``jupyter-book build`` on the folder (HTML in ``<out>/_build/html``).
    assignments : sequence of str, optional
        Which assignments (default: all).

    Returns
    -------
    Path
        The instructor book's folder.
    """
    out = Path(out) if out is not None else repo_root() / "_build" / "instructor"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    ids = list(assignments or assignment_ids())
    for a in ids:
        run_notebook(source_notebook(a, "solution"), out / f"{a}.ipynb", seed, prepare_only=not execute)
    config = _INSTRUCTOR_CONFIG
    vendor = repo_root() / "book" / "vendor"
    if (vendor / "mathjax").exists():
        # The same vendored MathJax as the public book, so formulas render offline.
        config += ("sphinx:\n  config:\n    mathjax_path: ../mathjax/es5/tex-mml-chtml.js\n"
                   f"    html_extra_path:\n      - {vendor.as_posix()}\n")
    (out / "_config.yml").write_text(config, encoding="utf-8")
    toc = ["format: jb-book", "root: index", "chapters:"] + [f"  - file: {a}" for a in ids]
    (out / "_toc.yml").write_text("\n".join(toc) + "\n", encoding="utf-8")
    lines = ["# Assignment solutions (instructor edition)", "",
             f"Solutions executed for the variant with seed {seed}. Each student's variant differs: rerun",
             "the solution for a student's seed with", "",
             "```bash", "python -m gcc.assignments make-variant --seed N --solutions", "```", "",
             "Do not publish this build: the public book shows the student notebooks only.", ""]
    lines += [f"- {a}: {ASSIGNMENTS[a][0]}" for a in ids]
    (out / "index.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if html:
        jb = Path(sys.executable).with_name("jupyter-book")
        subprocess.run([str(jb) if jb.exists() else "jupyter-book", "build", str(out)], check=True)
    return out


_FEEDBACK_LINE = re.compile(r"([\u2714\u2718]) Assignment (\S+), task (\S+) \((.*?)\)")


def grade(notebook: Path, seed: int | None = None, params: Mapping[str, Any] | None = None,
          timeout: int = 600) -> list[dict]:
    """Run a student's notebook to the end (errors do not stop it) and collect every check's outcome.

    Parameters
    ----------
    notebook : Path
        The student's notebook (e.g. one written by :func:`make_variant`, then filled in).
    seed : int, optional
        Inject this seed (and ``params``) first; by default the notebook's own parameters are used.
    params : mapping, optional
        Sizes to inject with ``seed``.
    timeout : int
        Seconds allowed per cell.

    Returns
    -------
    list of dict
        One row per check that ran, in notebook order: ``assignment``, ``task``, ``title``, ``passed``.
        A task whose cell never reached its check (an error before it) does not appear.
    """
    import tempfile

    import nbformat
    from nbclient import NotebookClient

    from ..reproduce import ensure_kernel

    notebook = Path(notebook)
    if seed is not None:
        with tempfile.TemporaryDirectory() as tmp:
            target = Path(tmp) / notebook.name
            run_notebook(notebook, target, seed, prepare_only=True, params=params)
            nb = nbformat.read(target, as_version=4)
    else:
        nb = nbformat.read(notebook, as_version=4)
    # allow_errors: a failed check (or a crash) is recorded and the later tasks still run.
    NotebookClient(nb, kernel_name=ensure_kernel(), allow_errors=True, timeout=timeout,
                   resources={"metadata": {"path": str(notebook.parent)}}).execute()
    rows, seen = [], set()
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error" and out.get("ename") != "AssignmentCheckError":
                # A crash before the cell's check: the task was not reached.
                rows.append({"assignment": "", "task": "-", "title": f"cell {index} raised {out.get('ename')}",
                             "passed": False})
            texts = [out.get("text", ""), out.get("data", {}).get("text/plain", ""), out.get("evalue", "")]
            for text in texts:
                for mark, assignment, task, title in _FEEDBACK_LINE.findall(text or ""):
                    if (assignment, task) in seen:
                        continue
                    seen.add((assignment, task))
                    rows.append({"assignment": assignment, "task": task, "title": title,
                                 "passed": mark == "\u2714"})
    return rows
