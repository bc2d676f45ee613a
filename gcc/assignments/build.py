"""The book's Assignments part: the student versions, as nbgrader releases them.

The pages ``book/generated/assignments/<id>.ipynb`` are build products (never committed): the book
build calls :func:`sync_book`, which runs ``nbgrader generate_assignment`` on the course's sources
(:func:`gcc.assignments.course.generate_release`, a scratch gradebook) and writes each released
notebook as a page. A page is the release itself, nbgrader's metadata included (so a notebook
downloaded from the book is a valid copy of the release), with only the page tags added: the
student's cells (the parameters and the solution cells) show their code, every other code cell
(setup, plots, test cells) is behind a toggle. The pages are not executed: a student version
fails its checks by design until it is solved.

Command line: ``python -m gcc.assignments sync-book``.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Iterable

from ..results import repo_root
from .course import assignment_ids, generate_release

__all__ = ["book_page", "sync_book"]

#: Tags the book's pages use (see the notebook convention): show or fold a cell's code.
SHOW, HIDE = "show-input", "hide-input"


def _is_students(cell) -> bool:
    """A code cell the student writes in: an nbgrader solution cell, or the parameters (the seed)."""
    grading = cell.metadata.get("nbgrader", {})
    return bool(grading.get("solution")) or "parameters" in cell.metadata.get("tags", [])


def book_page(nb):
    """A released notebook as the book shows it: the student's code shown, the rest behind toggles.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        A notebook of the nbgrader release (modified in place).

    Returns
    -------
    nbformat.NotebookNode
        ``nb``, each code cell tagged ``show-input`` (the student's cells) or ``hide-input``.
    """
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = [t for t in cell.metadata.get("tags", []) if t not in (SHOW, HIDE)]
        cell.metadata["tags"] = tags + [SHOW if _is_students(cell) else HIDE]
    return nb


def sync_book(assignments: Iterable[str] | None = None, dest: Path | None = None,
              release: Path | None = None) -> list[Path]:
    """Write the student versions of the nbgrader release as the book's pages ``<dest>/<id>.ipynb``.

    Parameters
    ----------
    assignments : iterable of str, optional
        Which assignments (default: every source notebook of the course).
    dest : Path, optional
        Folder of the pages; default ``book/generated/assignments`` (the book build passes its own
        folder of generated pages).
    release : Path, optional
        An nbgrader release folder (``<release>/<id>/<id>.ipynb``) to take the notebooks from; by
        default ``nbgrader generate_assignment`` makes one in a temporary folder.

    Returns
    -------
    list of Path
        The pages written.
    """
    import nbformat

    requested = list(assignments) if assignments is not None else None
    ids = requested or assignment_ids()
    dest = Path(dest) if dest is not None else repo_root() / "book" / "generated" / "assignments"
    with tempfile.TemporaryDirectory(prefix="gcc-release-") as tmp:
        folder = Path(release) if release is not None else generate_release(Path(tmp), requested)
        written = []
        for a in ids:
            nb = book_page(nbformat.read(folder / a / f"{a}.ipynb", as_version=4))
            page = dest / f"{a}.ipynb"
            page.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, page)
            written.append(page)
    return written
