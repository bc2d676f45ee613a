"""Result data and provenance: where every notebook writes what it measured.

Each notebook run writes tidy CSV tables (one row per measurement), its figures
and one ``provenance.json`` into ``_build/results/<notebook name>/``. Later
notebooks, the tests and outside checks read from there, so figures are always
made from saved results and never recomputed.

The location can be moved with the environment variable ``GCC_RESULTS_ROOT``
(the reproduce runner sets it so that every notebook of a batch writes into the
same build folder).
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, Mapping

__all__ = [
    "repo_root",
    "results_root",
    "results_dir",
    "library_fingerprint",
    "git_revision",
    "package_versions",
    "provenance",
    "save_table",
    "load_table",
    "save_figure",
    "save_json",
    "load_json",
]

_TRACKED_PACKAGES = (
    "numpy", "scipy", "pandas", "matplotlib", "torch", "torchvision", "timm",
    "scikit-learn", "dask", "distributed", "papermill", "jupyter-book",
)


def repo_root() -> Path:
    """The companion's root folder (the parent of the ``gcc`` package)."""
    return Path(__file__).resolve().parent.parent


def results_root() -> Path:
    """Root of all result folders: ``$GCC_RESULTS_ROOT`` or ``<repo>/_build/results``."""
    env = os.environ.get("GCC_RESULTS_ROOT")
    return Path(env) if env else repo_root() / "_build" / "results"


def results_dir(notebook: str, create: bool = True) -> Path:
    """Folder ``<results root>/<notebook>/`` for one notebook's data.

    Parameters
    ----------
    notebook : str
        The notebook's name without extension, e.g. ``"worst_case_rate"``.
    create : bool
        Create the folder if it does not exist.
    """
    if not isinstance(notebook, str) or not notebook or "/" in notebook or notebook.startswith("."):
        raise ValueError(
            f"The 'notebook' parameter must be a plain non-empty name without '/'. Got {notebook!r} instead."
        )
    path = results_root() / notebook
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def library_fingerprint() -> str:
    """SHA-256 over the source of every module of ``gcc``.

    The reproduce runner puts this in its cache key: a notebook whose source and
    parameters are unchanged must still be rerun when the library changed.
    """
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def git_revision() -> str | None:
    """The git commit of the companion (with ``-dirty`` when the tree has changes), or None."""
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=repo_root(), capture_output=True, text=True, timeout=10
        )
        if rev.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=repo_root(), capture_output=True, text=True, timeout=10,
        )
        return rev.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def package_versions() -> dict[str, str]:
    """Versions of Python and of the packages that can change a result."""
    versions = {"python": platform.python_version()}
    for name in _TRACKED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def _jsonable(value: Any) -> Any:
    # numpy scalars and arrays, paths and tuples must survive json.dump.
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def provenance(params: Mapping[str, Any] | None = None, seed: int | None = None, **extra: Any) -> dict:
    """Everything needed to tell how a result was produced."""
    from gcc import __version__

    record = {
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "seed": seed,
        "parameters": _jsonable(dict(params or {})),
        "gcc_version": __version__,
        "library_fingerprint": library_fingerprint(),
        "git_revision": git_revision(),
        "packages": package_versions(),
        "platform": platform.platform(),
        "python_executable": sys.executable,
    }
    record.update(_jsonable(extra))
    return record


def save_table(table, notebook: str, name: str = "results", params: Mapping[str, Any] | None = None,
               seed: int | None = None, **extra: Any) -> Path:
    """Write a tidy table as ``<name>.csv`` and update the folder's ``provenance.json``.

    Parameters
    ----------
    table : pandas.DataFrame or sequence of dict
        One row per measurement.
    notebook : str
        Name of the notebook that produced it (the folder name).
    name : str
        File stem of the CSV.
    params, seed, extra
        Recorded in ``provenance.json`` under ``tables[name]`` and at the top level.

    Returns
    -------
    pathlib.Path
        Path of the CSV written.
    """
    import pandas as pd

    frame = table if isinstance(table, pd.DataFrame) else pd.DataFrame(list(table))
    folder = results_dir(notebook)
    path = folder / f"{name}.csv"
    frame.to_csv(path, index=False)
    _update_provenance(folder, name, params, seed, rows=len(frame), columns=list(frame.columns), **extra)
    return path


def _update_provenance(folder: Path, name: str, params, seed, **extra) -> None:
    prov_path = folder / "provenance.json"
    record = provenance(params, seed)
    if prov_path.exists():
        try:
            old = json.loads(prov_path.read_text())
            record["tables"] = old.get("tables", {})
        except (json.JSONDecodeError, OSError):
            record["tables"] = {}
    else:
        record["tables"] = {}
    record["tables"][name] = _jsonable(extra)
    prov_path.write_text(json.dumps(record, indent=2, sort_keys=True))


def load_table(notebook: str, name: str = "results"):
    """Read ``<results root>/<notebook>/<name>.csv`` as a pandas DataFrame."""
    import pandas as pd

    path = results_dir(notebook, create=False) / f"{name}.csv"
    if not path.exists():
        raise FileNotFoundError(
            f"No saved results at {path}. Run the notebook first: python -m gcc.reproduce --only {notebook}"
        )
    return pd.read_csv(path)


def save_figure(fig, notebook: str, name: str, dpi: int = 150) -> Path:
    """Save a matplotlib figure as ``<name>.png`` (and ``.svg``) beside the notebook's data."""
    folder = results_dir(notebook)
    path = folder / f"{name}.png"
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    fig.savefig(folder / f"{name}.svg", bbox_inches="tight")
    return path


def save_json(data: Mapping[str, Any], notebook: str, name: str) -> Path:
    """Write a JSON document ``<name>.json`` into the notebook's folder."""
    path = results_dir(notebook) / f"{name}.json"
    path.write_text(json.dumps(_jsonable(dict(data)), indent=2, sort_keys=True))
    return path


def load_json(notebook: str, name: str) -> dict:
    """Read ``<name>.json`` from the notebook's folder."""
    path = results_dir(notebook, create=False) / f"{name}.json"
    if not path.exists():
        raise FileNotFoundError(
            f"No saved results at {path}. Run the notebook first: python -m gcc.reproduce --only {notebook}"
        )
    return json.loads(path.read_text())
