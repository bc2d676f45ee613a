"""Provenance: what produced a result (library, git revision, packages, machine, parameters).

:func:`provenance` is the record every run writes once (the reproduce runner's ``run.json``,
:class:`gcc.results.RunContext`); :func:`library_fingerprint` is part of the runner's cache key;
:func:`jsonable` makes parameters and records JSON-safe. :mod:`gcc.results` re-exports all five.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, Mapping

from .machine import describe
from .validation import invalid

__all__ = ["library_fingerprint", "git_revision", "package_versions", "jsonable", "provenance"]

_TRACKED_PACKAGES = (
    "numpy", "scipy", "pandas", "matplotlib", "torch", "torchvision", "timm",
    "scikit-learn", "dask", "distributed", "papermill", "jupytext", "jupyter-book",
)


def _repo_root() -> Path:
    return Path(__file__).resolve().parent.parent


def library_fingerprint() -> str:
    """SHA-256 over the source of every module of ``gcc``.

    The reproduce runner puts this in its cache key: a notebook whose source and
    parameters are unchanged must still be rerun when the library changed.

    Returns
    -------
    str
        64 hexadecimal digits; any edit of a ``gcc/**/*.py`` file (or a new one) changes it.

    Examples
    --------
    >>> from gcc.provenance import library_fingerprint
    >>> len(library_fingerprint())
    64
    """
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def git_revision() -> str | None:
    """The git commit of the companion, with ``-dirty`` when tracked files have changes.

    Returns
    -------
    str or None
        ``"<40 hex digits>"`` or ``"<40 hex digits>-dirty"``; None outside a git checkout
        or without ``git``.

    Examples
    --------
    >>> from gcc.provenance import git_revision
    >>> rev = git_revision()
    >>> rev is None or len(rev.split("-")[0]) == 40
    True
    """
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=_repo_root(), capture_output=True, text=True, timeout=10
        )
        if rev.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=_repo_root(), capture_output=True, text=True, timeout=10,
        )
        return rev.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def package_versions() -> dict[str, str]:
    """Versions of Python and of the installed packages that can change a result.

    Returns
    -------
    dict
        ``{"python": "3.x.y", "numpy": ..., ...}``; packages that are not installed are left out.

    Examples
    --------
    >>> from gcc.provenance import package_versions
    >>> {"python", "numpy", "scipy"} <= set(package_versions())
    True
    """
    versions = {"python": platform.python_version()}
    for name in _TRACKED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def jsonable(value: Any) -> Any:
    """``value`` converted to what :func:`json.dumps` accepts, recursively.

    Mappings become dicts with string keys, tuples and lists become lists, paths become
    strings, numpy scalars and arrays become Python numbers and (nested) lists; anything
    else unknown is kept as its ``repr``.

    Parameters
    ----------
    value : object

    Returns
    -------
    object
        Made of dict, list, str, int, float, bool and None only.

    Examples
    --------
    >>> import numpy as np
    >>> from pathlib import Path
    >>> from gcc.provenance import jsonable
    >>> jsonable({"n": np.int64(3), "grid": (1, 2), "x": np.array([0.5, 1.0]), "out": Path("a/b")})
    {'n': 3, 'grid': [1, 2], 'x': [0.5, 1.0], 'out': 'a/b'}
    """
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def provenance(params: Mapping[str, Any] | None = None, seed: int | None = None, **extra: Any) -> dict:
    """Everything needed to tell how a result was produced.

    Parameters
    ----------
    params : mapping, optional
        The parameters of the run (made JSON-safe with :func:`jsonable`).
    seed : int, optional
        The base seed of the run.
    **extra
        Further top-level entries.

    Returns
    -------
    dict
        ``created_utc``, ``seed``, ``parameters``, ``gcc_version``, ``library_fingerprint``,
        ``git_revision``, ``packages`` (:func:`package_versions`), ``machine``
        (:func:`gcc.machine.describe`), ``python_executable`` and ``extra``. JSON-serialisable.

    Examples
    --------
    >>> from gcc.provenance import provenance
    >>> record = provenance({"n_workers": 40}, seed=0, note="demo")
    >>> record["parameters"], record["seed"], record["note"]
    ({'n_workers': 40}, 0, 'demo')
    >>> "cpu_count" in record["machine"]
    True
    >>> provenance([("n_workers", 40)])
    Traceback (most recent call last):
    ...
    ValueError: The 'params' parameter of provenance must be a mapping of parameter names to values or None. Got [('n_workers', 40)] instead.
    """
    from gcc import __version__

    if params is not None and not isinstance(params, Mapping):
        raise invalid("params", "provenance", "a mapping of parameter names to values or None", params)
    record = {
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "seed": seed,
        "parameters": jsonable(dict(params or {})),
        "gcc_version": __version__,
        "library_fingerprint": library_fingerprint(),
        "git_revision": git_revision(),
        "packages": package_versions(),
        "machine": describe(),
        "python_executable": sys.executable,
    }
    record.update(jsonable(extra))
    return record
