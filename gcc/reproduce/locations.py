"""Where the runner reads and writes: source notebooks, executed notebooks, result folders.

Each location has an environment variable, so that the tests (and a second checkout) can run a
batch into folders of their own.
"""
from __future__ import annotations

import os
from pathlib import Path

from gcc import notebooks, results

__all__ = ["repo_root", "default_notebooks_dir", "default_output_dir", "default_results_root", "relative"]


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
    """``path`` relative to the repository root when it lies inside it, else as given."""
    try:
        return str(Path(path).resolve().relative_to(repo_root()))
    except ValueError:
        return str(path)
