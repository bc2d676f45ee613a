"""The book's Assignments part: the student versions, as nbgrader releases them (not executed: a
student version fails its checks by design). Command line: ``python -m gcc.assignments sync-book``.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Iterable

import nbformat

from ..atomic import writable_folder
from ..results import repo_root
from .course import assignment_ids, generate_release

__all__ = ["sync_book"]


def sync_book(assignments: Iterable[str] | None = None, dest: Path | None = None,
              release: Path | None = None) -> list[Path]:
    """Write the student versions of the nbgrader release as the book's pages ``<dest>/<id>.ipynb``.

    Parameters
    ----------
    assignments : iterable of str, optional
        Which assignments (default: every source notebook of the course).
    dest : Path, optional
        Folder of the pages (default ``book/generated/assignments``).
    release : Path, optional
        An nbgrader release folder (``<release>/<id>/<id>.ipynb``); by default a temporary one.

    Returns
    -------
    list of Path
        The pages written.
    """
    ids = list(assignments) if assignments is not None else assignment_ids()
    dest = Path(dest) if dest is not None else repo_root() / "book" / "generated" / "assignments"
    writable_folder(dest, "dest", "sync_book")
    with tempfile.TemporaryDirectory(prefix="gcc-release-") as tmp:  # None: one nbgrader run for all
        folder = Path(release) if release is not None else generate_release(Path(tmp), None if assignments is None
                                                                             else ids)
        for a in ids:
            nb = nbformat.read(folder / a / f"{a}.ipynb", as_version=4)
            for cell in (c for c in nb.cells if c.cell_type == "code"):  # the student's cells shown, others folded
                tags = [t for t in cell.metadata.get("tags", []) if t not in ("show-input", "hide-input")]
                students = cell.metadata.get("nbgrader", {}).get("solution") or "parameters" in tags
                cell.metadata["tags"] = tags + ["show-input" if students else "hide-input"]
            nbformat.write(nb, dest / f"{a}.ipynb")
    return [dest / f"{a}.ipynb" for a in ids]
