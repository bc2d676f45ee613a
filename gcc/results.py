"""Where every notebook writes what it measured: ``run = RunContext()``, its folder and ``run.json``."""
from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any, Mapping

from .atomic import remove_partials, replacing, writable_folder, write_text
from .display import display_table, format_value, markdown_table
from .figures import figure_record, show_figure, use_book_style
from .provenance import jsonable, library_fingerprint, provenance, repo_root
from .validation import (AnyOf, Frame, HasAttributes, InstanceOf, ListOf, NoneOr, Satisfies, entry, invalid, validate,
                         validate_params)

__all__ = ["RUN_RECORD", "RUN_ENV", "results_root", "results_dir", "RunContext", "format_value",
           "display_table", "markdown_table", "read_run_record", "saved_files", "library_fingerprint", "jsonable",
           "provenance", "load_table"]

#: File name of a run's provenance record in ``<results root>/<notebook>/``.
RUN_RECORD = "run.json"

#: The environment variable through which the runner tells a kernel its notebook, profile and parameters.
RUN_ENV = "GCC_RUN"

# The name of a run context outside any notebook the runner or JupyterLab names.
_SCRATCH = "scratch"


def _is_data(value) -> bool:
    """Whether ``value`` is a mapping with str keys that JSON holds as it is (numpy values as lists, no NaN)."""
    with contextlib.suppress(AttributeError, TypeError, ValueError):   # not a mapping, an object, a NaN
        return isinstance(value, Mapping) and all(isinstance(k, str) for k in value) and bool(
            json.dumps(dict(value), allow_nan=False, default=lambda v: v.tolist()))
    return False


_PATH = InstanceOf((str, os.PathLike), "a path (str or os.PathLike)")
_FIGURE = HasAttributes(["savefig"], callables=["savefig"], description="a matplotlib Figure")
_TABLE = AnyOf(Frame(), ListOf(InstanceOf(Mapping), min_len=0),
               description="a pandas.DataFrame or a list of row mappings")
_PLAIN = Satisfies(lambda v: isinstance(v, str) and v.isprintable() and v[:1] not in ("", ".") and "/" not in v
                   and "\\" not in v, "a plain non-empty name (printable, without '/')")   # a file of a results folder
_IDENTIFIER = Satisfies(lambda v: isinstance(v, str) and v.isidentifier(), "a Python identifier")
_DATA = Satisfies(_is_data, "a mapping of str keys to JSON values (finite numbers, str, lists, mappings)")


def results_root() -> Path:
    """Root of all result folders: ``$GCC_RESULTS_ROOT`` or ``<repo>/_build/results`` (not created here)."""
    env = os.environ.get("GCC_RESULTS_ROOT")
    return Path(env) if env else repo_root() / "_build" / "results"


@validate_params({"notebook": _PLAIN})
def results_dir(notebook: str, create: bool = True) -> Path:
    """Folder ``<results root>/<notebook>/`` for one notebook's data, created when ``create``."""
    path = results_root() / notebook
    if create:
        writable_folder(path, "GCC_RESULTS_ROOT", "results_dir")
    return path


@validate_params({"folder": _PATH})
def read_run_record(folder: Path) -> dict:
    """The ``run.json`` of a results folder ({} when there is none: never run); a broken one is an error."""
    try:
        return json.loads((Path(folder) / RUN_RECORD).read_text())
    except OSError:   # no folder or no record; a file where the folder goes: the run's writing says so
        return {}
    except json.JSONDecodeError as err:
        raise invalid("folder", "read_run_record", "a folder whose run.json is JSON", str(folder), err) from None


def saved_files(record: dict) -> list[str]:
    """The files of its results folder that the run ``record`` (a ``run.json``) lists as saved."""
    names = [e.get("file") for e in (record.get("tables") or {}).values() if isinstance(e, dict)]
    names += [f for files in (record.get("figures") or {}).values() for f in files]
    names += list((record.get("files") or {}).values())
    return [n for n in names if isinstance(n, str) and "/" not in n]


def _by_hand() -> tuple[str, dict]:
    """Name and parameters of a notebook run by hand in JupyterLab (its session's path, its parameters cell)."""
    from IPython import get_ipython

    from .notebooks import SOURCE_SUFFIXES, notebooks_dir, parameters

    session = Path(os.environ.get("JPY_SESSION_NAME") or _SCRATCH)   # JupyterLab's path of the notebook
    found = [session] + [notebooks_dir() / f"{session.stem}{suffix}" for suffix in SOURCE_SUFFIXES]
    source = next((p for p in found if p.suffix in SOURCE_SUFFIXES and p.is_file()), None)
    if source is None:
        return _SCRATCH, {}
    namespace = getattr(get_ipython(), "user_ns", {})   # the values the cells set
    return source.stem, {k: namespace[k] for k in parameters(source) if k in namespace}


class RunContext:
    """One run of one notebook: its parameters, its results folder and its provenance record ``run.json``.

    Parameters
    ----------
    notebook : str, optional
        Its name; default: the runner's (``$GCC_RUN``), else JupyterLab's (``$JPY_SESSION_NAME``), else "scratch".
    parameters : mapping, optional
        Default: the runner's, else the values of the names the parameters cell assigns.
    root : path, optional
        Results root (default: :func:`results_root`).

    Examples
    --------
    >>> import tempfile, json
    >>> from gcc.results import RunContext
    >>> with tempfile.TemporaryDirectory() as root:
    ...     run = RunContext("demo", {"seed": 0, "n_workers": 40}, root=root)
    ...     run.save_table([{"scheme": "gcc", "loss": 0.5}], "results")
    ...     run.value("gcc_loss", 0.5, note="mean loss")
    ...     record = json.loads((run.folder / "run.json").read_text())
    >>> record["parameters"], record["seed"], record["tables"]["results"]["rows"], record["values"]["gcc_loss"]["text"]
    ({'n_workers': 40, 'seed': 0}, 0, 1, '0.5')
    """

    @validate_params({"parameters": NoneOr(_DATA), "root": NoneOr(_PATH)})
    def __init__(self, notebook: str | None = None, parameters: Mapping[str, Any] | None = None, *, root=None):
        given = json.loads(os.environ.get(RUN_ENV) or "{}")
        if notebook is None and parameters is None:
            notebook, parameters = (given["notebook"], given["parameters"]) if given else _by_hand()
            use_book_style()
        self.notebook = validate(notebook if notebook is not None else _SCRATCH, _PLAIN, "notebook", "RunContext")
        self.parameters = dict(parameters or {})
        self.folder = (Path(root) if root is not None else results_root()) / self.notebook
        writable_folder(self.folder, "root" if root is not None else "GCC_RESULTS_ROOT", "RunContext")
        remove_partials(self.folder)  # what a killed run was writing
        for name in saved_files(read_run_record(self.folder)):  # what the previous run saved
            (self.folder / name).unlink(missing_ok=True)
        self.record = provenance(self.parameters, seed=self.parameters.get("seed"))
        self.record.update(notebook=self.notebook, tables={}, figures={}, files={}, values={}, includes={})
        self._write()

    @validate_params({"table": _TABLE, "name": _PLAIN, "notes": _DATA})
    def save_table(self, table, name: str = "results", **notes: Any) -> None:
        """Write a tidy table as ``<name>.csv`` and list it (rows, columns, ``notes``) in ``run.json``."""
        import pandas as pd

        frame = pd.DataFrame(table)
        if not frame.select_dtypes(exclude="number").map(pd.api.types.is_scalar).all(axis=None):   # a CSV of reprs
            raise invalid("table", "RunContext.save_table", "a table of numbers, text and missing values", table)
        path = self.folder / f"{name}.csv"
        with replacing(path) as tmp:
            frame.to_csv(tmp, index=False)
        self.record["tables"][name] = jsonable({"file": path.name, "rows": len(frame),
                                                "columns": list(frame.columns), **notes})
        self._write()

    def load_table(self, name: str = "results", notebook: str | None = None):
        """Read ``<name>.csv`` of this run, or of another ``notebook``'s last run (:func:`load_table`)."""
        return load_table(notebook or self.notebook, name, root=self.folder.parent)

    @validate_params({"fig": _FIGURE, "name": _PLAIN})
    def save_figure(self, fig, name: str, caption: str = "", alt: str = "", drawn_by=None) -> None:
        """Save ``fig`` as ``<name>.png`` and ``.svg``, list both in ``run.json``; show it with ``caption``, ``alt``."""
        path = self.folder / f"{name}.png"
        for file, kwargs in ((path, {"dpi": 150}), (path.with_suffix(".svg"), {})):  # 150: the style's savefig.dpi
            with replacing(file) as tmp:
                fig.savefig(tmp, format=file.suffix[1:], bbox_inches="tight", **kwargs)
        self.record["figures"][name] = [path.name, f"{name}.svg"]
        self.record.setdefault("figure_captions", {})[name] = record = figure_record(
            fig, f"{self.notebook}-{name}", caption, alt, drawn_by, run=self)
        self._write()
        show_figure(fig, record)

    @validate_params({"data": _DATA, "name": _PLAIN})
    def save_json(self, data: Mapping[str, Any], name: str) -> None:
        """Write ``<name>.json`` (made JSON-safe, keys sorted) and list it in ``run.json``."""
        path = self.folder / f"{name}.json"
        write_text(path, json.dumps(jsonable(dict(data)), indent=2, sort_keys=True))
        self.record["files"][name] = path.name
        self._write()

    @validate_params({"key": _IDENTIFIER, "note": InstanceOf(str, "a str")})
    def value(self, key: str, number, unit: str = "", digits: int = 3, fmt: str | None = None, note: str = ""):
        """Record a finite number (or a text) that the prose quotes as ``{{ <notebook>.<key> }}``."""
        with entry(f"RunContext.value({key!r})"):   # format_value checks number, unit, digits and fmt
            text = format_value(number, unit, digits, fmt)
        self.record["values"][key] = jsonable({"value": number, "unit": unit, "note": note, "text": text})
        self._write()

    @validate_params({"name": _IDENTIFIER})
    def include(self, frame, name: str, digits: int = 4) -> None:
        """Publish a table for a chapter's ``{include}`` of ``book/generated/values/<notebook>.<name>.md``."""
        self.record["includes"][name] = markdown_table(frame, digits)
        self._write()

    def values(self):
        """The recorded values as a table: ``key``, ``text``, ``note`` (for the notebook's own page)."""
        import pandas as pd

        return pd.DataFrame([{"key": k, "text": v["text"], "note": v["note"]}
                             for k, v in self.record["values"].items()], columns=["key", "text", "note"])

    def _write(self) -> None:
        """Write ``run.json`` (atomically)."""
        write_text(self.folder / RUN_RECORD, json.dumps(jsonable(self.record), indent=2, sort_keys=True))


@validate_params({"notebook": _PLAIN, "name": _PLAIN})
def load_table(notebook: str, name: str = "results", root: Path | None = None):
    """Read ``<results root>/<notebook>/<name>.csv``; a ``FileNotFoundError`` giving the command when it is missing.

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

    path = (Path(root) if root is not None else results_root()) / notebook / f"{name}.csv"
    if not path.exists():
        raise FileNotFoundError(f"No saved results at {path}. Run the notebook first: "
                                f"python -m gcc.reproduce --only {notebook}")
    return pd.read_csv(path)
