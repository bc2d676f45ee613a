"""Provenance: what produced a result (library, git revision, packages, machine), and :func:`repo_root`."""
from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, Mapping

from .machine import describe

__all__ = ["repo_root", "library_fingerprint", "git_revision", "package_versions", "jsonable", "provenance"]

_TRACKED_PACKAGES = ("numpy", "scipy", "pandas", "matplotlib", "torch", "torchvision", "timm", "scikit-learn",
                     "dask", "distributed", "papermill", "jupytext", "jupyter-book")


def repo_root() -> Path:
    """The companion's root folder: the parent of the ``gcc`` package."""
    return Path(__file__).resolve().parent.parent


def library_fingerprint() -> str:
    """SHA-256 over the path and source of every ``gcc/**/*.py`` (a changed library reruns notebooks)."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def git_revision() -> str | None:
    """The git commit of the companion, with ``-dirty`` for changed tracked files; None outside git."""
    try:
        rev = subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=40", "--exclude=*"], cwd=repo_root(),
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return rev.stdout.strip() if rev.returncode == 0 else None


def package_versions() -> dict[str, str]:
    """Versions of Python and of the installed packages that can change a result."""
    versions = {"python": platform.python_version()}
    for name in _TRACKED_PACKAGES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[name] = metadata.version(name)
    return versions


def jsonable(value: Any) -> Any:
    """``value`` as :func:`json.dumps` takes it: numpy values as numbers and lists, paths as text.

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


def provenance(params: Mapping[str, Any] | None = None, seed: int | None = None) -> dict:
    """How a result was produced (JSON-safe): time, seed, parameters, library, git revision, packages, machine."""
    from gcc import __version__

    return {"created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), "seed": seed,
            "parameters": jsonable(dict(params or {})), "gcc_version": __version__,
            "library_fingerprint": library_fingerprint(), "git_revision": git_revision(),
            "packages": package_versions(), "machine": describe(), "python_executable": sys.executable}
