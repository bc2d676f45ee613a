"""Where the runner reads and writes: source notebooks, executed notebooks, result folders.

Each location has an environment variable, so that the tests (and a second checkout) can run a
batch into folders of their own. :func:`check_output_dir` is the check of every folder the
runner writes into (:func:`gcc.reproduce.cards.check_notebooks_dir` that of the folder it reads).
"""
from __future__ import annotations

import os
from pathlib import Path

from gcc import notebooks, results
from gcc.validation import invalid

__all__ = ["repo_root", "default_notebooks_dir", "default_output_dir", "default_results_root", "relative",
           "check_output_dir"]


def repo_root() -> Path:
    """The companion's root folder (:func:`gcc.results.repo_root`)."""
    return results.repo_root()


def default_notebooks_dir() -> Path:
    """``$GCC_NOTEBOOKS_DIR`` or ``<repo>/notebooks`` (:func:`gcc.notebooks.notebooks_dir`)."""
    return notebooks.notebooks_dir()


def default_output_dir() -> Path:
    """``$GCC_GENERATED_DIR`` or ``<repo>/book/generated`` (the executed notebooks)."""
    env = os.environ.get("GCC_GENERATED_DIR")
    return Path(env).resolve() if env else repo_root() / "book" / "generated"


def default_results_root() -> Path:
    """``$GCC_RESULTS_ROOT`` or ``<repo>/_build/results`` (:func:`gcc.results.results_root`)."""
    return results.results_root().resolve()


def relative(path: Path) -> str:
    """``path`` relative to the repository root when it lies inside it, else as given
    (:func:`gcc.notebooks.shown_path`)."""
    return notebooks.shown_path(path)


def check_output_dir(path, name: str, owner: str) -> Path:
    """``path`` (absolute) if the runner can write into it, else the contract's ValueError.

    An output folder need not exist yet (a fresh checkout has no ``_build``; the runner creates
    it), but it must not be a file, lie below a file, or lie in a folder that cannot be written.

    Parameters
    ----------
    path : path
    name, owner : str
        The argument and its receiver, for the message (``"--results-root"``, ``"python -m gcc.reproduce"``).

    Returns
    -------
    pathlib.Path
    """
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise invalid(name, owner, "a folder path", path)
    folder = Path(path).expanduser().resolve()
    if folder.exists() and not folder.is_dir():
        raise invalid(name, owner, "a folder that exists or can be created", str(path), "it is a file")
    parent = folder
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise invalid(name, owner, "a folder that exists or can be created", str(path), f"{parent} is a file")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise invalid(name, owner, "a folder that can be written", str(path), f"{parent} is not writable")
    return folder
