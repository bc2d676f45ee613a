"""Derive a student notebook from its solution notebook, so the two can never drift apart.

The solution notebook ``assignments/<id>/solution.ipynb`` is the single source. Inside its cells:

- lines between ``# BEGIN SOLUTION`` and ``# END SOLUTION`` (markers included) are removed from the
  student version;
- a line ending in ``# STUDENT`` appears only in the student version, without the marker (it is
  removed from the solution's executed code by being a comment there: write it as
  ``# x = ...  # STUDENT``, and the student version gets ``x = ...``);
- cells tagged ``solution`` (e.g. model answers to written questions) are removed;
  cells tagged ``student`` appear only in the student version (the solution keeps them as
  markdown or as cells whose code is commented out).

:func:`clean_notebook` (outputs and run metadata removed) is how every committed or published
notebook of the assignments is stored; :mod:`.build` uses it and this module, never the reverse.

``python -m gcc.assignments make-student`` rewrites every ``student.ipynb``; a test checks that the
committed student notebooks equal what this module derives.
"""
from __future__ import annotations

import copy
import re

from gcc.validation import invalid

__all__ = ["clean_notebook", "student_source", "student_from_solution"]

_BEGIN = re.compile(r"^\s*# BEGIN SOLUTION\s*$")
_END = re.compile(r"^\s*# END SOLUTION\s*$")
_STUDENT = re.compile(r"^(\s*)# ?(.*?)\s*# STUDENT\s*$")


def clean_notebook(nb):
    """A copy of ``nb`` without outputs, execution counts or papermill metadata.

    Parameters
    ----------
    nb : nbformat.NotebookNode

    Returns
    -------
    nbformat.NotebookNode
        The copy, as the committed sources and the book's pages store notebooks.
    """
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
    nb.metadata.pop("papermill", None)
    return nb


def student_source(source: str) -> str:
    """The student version of one cell's source (see the module docstring for the markers).

    Parameters
    ----------
    source : str
        A code cell's source.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        The ``# BEGIN SOLUTION`` / ``# END SOLUTION`` markers do not pair up.
    """
    constraint = "a cell source whose '# BEGIN SOLUTION' and '# END SOLUTION' markers pair up"
    out, inside = [], False
    for line in source.split("\n"):
        if _BEGIN.match(line):
            if inside:
                raise invalid("source", "student_source", constraint, source, "a nested '# BEGIN SOLUTION'")
            inside = True
            continue
        if _END.match(line):
            if not inside:
                raise invalid("source", "student_source", constraint, source,
                              "'# END SOLUTION' without a matching '# BEGIN SOLUTION'")
            inside = False
            continue
        if inside:
            continue
        m = _STUDENT.match(line)
        out.append(f"{m.group(1)}{m.group(2)}" if m else line)
    if inside:
        raise invalid("source", "student_source", constraint, source, "'# BEGIN SOLUTION' without '# END SOLUTION'")
    return "\n".join(out)


def student_from_solution(nb):
    """The student notebook derived from a solution notebook (outputs removed).

    Parameters
    ----------
    nb : nbformat.NotebookNode
        The solution notebook.

    Returns
    -------
    nbformat.NotebookNode
    """
    nb = clean_notebook(nb)
    cells = []
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if "solution" in tags:
            continue
        cell = copy.deepcopy(cell)
        if "student" in tags:
            cell.metadata["tags"] = [t for t in tags if t != "student"]
            if not cell.metadata["tags"]:
                del cell.metadata["tags"]
            if cell.cell_type == "code":
                # Student-only code cells are stored commented out in the solution.
                cell.source = "\n".join(re.sub(r"^# ?", "", ln) for ln in cell.source.split("\n"))
        if cell.cell_type == "code":
            cell.source = student_source(cell.source)
        cells.append(cell)
    nb.cells = cells
    nb.metadata.setdefault("gcc_assignment", {})["kind"] = "student"
    return nb
