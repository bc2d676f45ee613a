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

from .machine import describe
from .validation import invalid

__all__ = [
    "repo_root",
    "results_root",
    "results_dir",
    "library_fingerprint",
    "git_revision",
    "package_versions",
    "jsonable",
    "provenance",
    "save_table",
    "load_table",
    "save_figure",
    "save_json",
]

_TRACKED_PACKAGES = (
    "numpy", "scipy", "pandas", "matplotlib", "torch", "torchvision", "timm",
    "scikit-learn", "dask", "distributed", "papermill", "jupyter-book",
)


def repo_root() -> Path:
    """The companion's root folder (the parent of the ``gcc`` package).

    Returns
    -------
    pathlib.Path
        Absolute path of the folder that holds ``gcc/``, ``notebooks/`` and ``book/``.

    Examples
    --------
    >>> from gcc.results import repo_root
    >>> (repo_root() / "gcc" / "results.py").exists()
    True
    """
    return Path(__file__).resolve().parent.parent


def results_root() -> Path:
    """Root of all result folders: ``$GCC_RESULTS_ROOT`` or ``<repo>/_build/results``.

    Returns
    -------
    pathlib.Path
        Not created here; :func:`results_dir` creates the folders below it.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> from gcc.results import results_root
    >>> with mock.patch.dict(os.environ, GCC_RESULTS_ROOT="/tmp/somewhere"):
    ...     print(results_root().as_posix())
    /tmp/somewhere
    """
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

    Returns
    -------
    pathlib.Path

    Raises
    ------
    ValueError
        If ``notebook`` is empty, contains ``/`` or starts with a dot.

    Examples
    --------
    >>> from gcc.results import results_dir
    >>> results_dir("worst_case_rate", create=False).name
    'worst_case_rate'
    >>> results_dir("../elsewhere")
    Traceback (most recent call last):
    ...
    ValueError: The 'notebook' parameter of results_dir must be a plain non-empty name without '/'. Got '../elsewhere' instead.
    """
    if not isinstance(notebook, str) or not notebook or "/" in notebook or notebook.startswith("."):
        raise invalid("notebook", "results_dir", "a plain non-empty name without '/'", notebook)
    path = results_root() / notebook
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


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
    >>> from gcc.results import library_fingerprint
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
    >>> from gcc.results import git_revision
    >>> rev = git_revision()
    >>> rev is None or len(rev.split("-")[0]) == 40
    True
    """
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
    """Versions of Python and of the installed packages that can change a result.

    Returns
    -------
    dict
        ``{"python": "3.x.y", "numpy": ..., ...}``; packages that are not installed are left out.

    Examples
    --------
    >>> from gcc.results import package_versions
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
    >>> from gcc.results import jsonable
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
    >>> from gcc.results import provenance
    >>> record = provenance({"n_workers": 40}, seed=0, note="demo")
    >>> record["parameters"], record["seed"], record["note"]
    ({'n_workers': 40}, 0, 'demo')
    >>> "cpu_count" in record["machine"]
    True
    """
    from gcc import __version__

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

    Examples
    --------
    >>> import os, tempfile
    >>> from unittest import mock
    >>> from gcc.results import save_table, load_table
    >>> with tempfile.TemporaryDirectory() as root, mock.patch.dict(os.environ, GCC_RESULTS_ROOT=root):
    ...     path = save_table([{"scheme": "gcc", "loss": 0.5}], "demo", params={"n": 1}, seed=0)
    ...     table = load_table("demo")
    ...     tables = (path.parent / "provenance.json").read_text().count('"results"')
    >>> path.name, tables
    ('results.csv', 1)
    >>> table
      scheme  loss
    0    gcc   0.5
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
    record["tables"][name] = jsonable(extra)
    prov_path.write_text(json.dumps(record, indent=2, sort_keys=True))


def load_table(notebook: str, name: str = "results"):
    """Read ``<results root>/<notebook>/<name>.csv`` as a pandas DataFrame.

    Parameters
    ----------
    notebook : str
        The notebook that saved the table.
    name : str
        File stem of the CSV.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    FileNotFoundError
        If the notebook has not saved that table yet; the message says how to run it.

    Examples
    --------
    >>> import os, tempfile
    >>> from unittest import mock
    >>> from gcc.results import load_table
    >>> with tempfile.TemporaryDirectory() as root, mock.patch.dict(os.environ, GCC_RESULTS_ROOT=root):
    ...     load_table("never_ran")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileNotFoundError: No saved results at ... Run the notebook first: python -m gcc.reproduce --only never_ran
    """
    import pandas as pd

    path = results_dir(notebook, create=False) / f"{name}.csv"
    if not path.exists():
        raise FileNotFoundError(
            f"No saved results at {path}. Run the notebook first: python -m gcc.reproduce --only {notebook}"
        )
    return pd.read_csv(path)


def save_figure(fig, notebook: str, name: str, dpi: int = 150) -> Path:
    """Save a matplotlib figure as ``<name>.png`` and ``<name>.svg`` beside the notebook's data.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    notebook : str
        The notebook's results folder.
    name : str
        File stem of both images.
    dpi : int
        Resolution of the PNG.

    Returns
    -------
    pathlib.Path
        Path of the PNG.

    Examples
    --------
    >>> import os, tempfile
    >>> from unittest import mock
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from gcc.results import save_figure
    >>> fig, ax = plt.subplots()
    >>> with tempfile.TemporaryDirectory() as root, mock.patch.dict(os.environ, GCC_RESULTS_ROOT=root):
    ...     path = save_figure(fig, "demo", "empty")
    ...     print(sorted(p.name for p in path.parent.iterdir()))
    ['empty.png', 'empty.svg']
    >>> plt.close(fig)
    """
    folder = results_dir(notebook)
    path = folder / f"{name}.png"
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    fig.savefig(folder / f"{name}.svg", bbox_inches="tight")
    return path


def save_json(data: Mapping[str, Any], notebook: str, name: str) -> Path:
    """Write a JSON document ``<name>.json`` into the notebook's folder.

    Parameters
    ----------
    data : mapping
        Made JSON-safe with :func:`jsonable`; keys are sorted in the file.
    notebook : str
        The notebook's results folder.
    name : str
        File stem.

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> import json, os, tempfile
    >>> from unittest import mock
    >>> import numpy as np
    >>> from gcc.results import save_json
    >>> with tempfile.TemporaryDirectory() as root, mock.patch.dict(os.environ, GCC_RESULTS_ROOT=root):
    ...     path = save_json({"mean": np.float64(0.25)}, "demo", "hardware")
    ...     print(path.name, json.loads(path.read_text()))
    hardware.json {'mean': 0.25}
    """
    path = results_dir(notebook) / f"{name}.json"
    path.write_text(json.dumps(jsonable(dict(data)), indent=2, sort_keys=True))
    return path
