"""Result data and provenance: where every notebook writes what it measured.

A notebook opens its run with one line after the parameters cell::

    run = RunContext.current("quickstart", globals())

The run context holds the notebook's parameters (the names its ``parameters`` cell assigns,
with the values papermill injected; recorded once), its results folder
``<results root>/<notebook>/`` and its provenance record ``run.json`` there (parameters, seed,
git revision, package versions, machine, and what the run saved). Through it the notebook saves
tidy CSV tables (one row per measurement), figures and the numbers that the book's prose quotes::

    run.save_table(frame, "results")           # results.csv, listed in run.json
    run.save_figure(fig, "loss_vs_n")          # loss_vs_n.png and .svg
    run.value("gcc_slope", slope, unit="")     # quoted by chapters as {{ quickstart.gcc_slope }}
    run.include(table, "slopes")               # a chapter's {include} of a markdown table

The reproduce runner adds its own entries (profile, status, seconds, cache key) to the same
``run.json``: one provenance file per run. Later notebooks, the tests and outside checks read the
tables from there (:func:`load_table`), so figures are made from saved results, never recomputed.

The results root is ``$GCC_RESULTS_ROOT`` or ``<repo>/_build/results`` (the runner sets the
variable so that every notebook of a batch writes into the batch's folder). The module-level
:func:`save_table`, :func:`save_figure` and :func:`save_json` serve the JSON notebooks that are
not converted yet (they keep a ``provenance.json`` per folder).
"""
from __future__ import annotations

import contextlib
import json
import os
from numbers import Integral
from pathlib import Path
from typing import Any, Mapping

from .atomic import remove_partials, replacing, write_text
from .display import NUMBER, display_table, format_value, markdown_table
from .figures import figure_record, show_figure, use_book_style
from .notebooks import assigned_names, find_source, parameters_cell, read_source
from .provenance import git_revision, jsonable, library_fingerprint, package_versions, provenance
from .validation import HasAttributes, InstanceOf, Interval, invalid, validate

__all__ = [
    "RUN_RECORD",
    "PAGE_STYLE",
    "repo_root",
    "results_root",
    "results_dir",
    "plain_name",
    "table_frame",
    "RunContext",
    "format_value",
    "display_table",
    "markdown_table",
    "read_run_record",
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

#: File name of a run's provenance record in ``<results root>/<notebook>/``.
RUN_RECORD = "run.json"

_MAPPING = InstanceOf(Mapping, "a mapping")
_FIGURE = HasAttributes(["savefig"], callables=["savefig"], description="a matplotlib Figure")
_DPI = Interval(Integral, 1, 2400)

#: main settings of the book's style (gcc/book.mplstyle, applied by every run context): within the 688 px column
PAGE_STYLE = {"figure.figsize": (6.7, 3.0), "figure.dpi": 100, "savefig.dpi": 150, "font.size": 10,
              "axes.titlesize": 10, "legend.fontsize": 9}


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
    path = results_root() / plain_name(notebook, "notebook", "results_dir")
    if create:
        with _writable(path, "GCC_RESULTS_ROOT", "results_dir"):
            path.mkdir(parents=True, exist_ok=True)
    return path


@contextlib.contextmanager
def _writable(folder: Path, name: str, owner: str):
    """Turn a PermissionError (or another OS error) while preparing ``folder`` into the contract error."""
    try:
        yield
    except OSError as err:
        raise invalid(name, owner, "a results folder this process can create and write", str(folder),
                      f"{err.strerror or type(err).__name__}: {err.filename or folder}; set GCC_RESULTS_ROOT "
                      "to a writable folder") from None


def plain_name(name, param: str, owner: str) -> str:
    """``name`` if it can name a file of a results folder (non-empty, no ``/``, no leading dot), else the ValueError.

    Examples
    --------
    >>> from gcc.results import plain_name
    >>> plain_name("loss_vs_n", "name", "RunContext.save_figure")
    'loss_vs_n'
    >>> plain_name("../x", "name", "RunContext.save_table")
    Traceback (most recent call last):
    ...
    ValueError: The 'name' parameter of RunContext.save_table must be a plain non-empty name without '/'. Got '../x' instead.
    """
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name.startswith("."):
        raise invalid(param, owner, "a plain non-empty name without '/'", name)
    return name


def read_run_record(folder: Path) -> dict:
    """The ``run.json`` of a results folder ({} when missing or unreadable)."""
    path = Path(folder) / RUN_RECORD
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return {}


class RunContext:
    """One run of one notebook: its parameters, its results folder and its provenance record.

    Create it with :meth:`current` in the notebook; construct it directly only outside a
    notebook (tests, scripts).

    Parameters
    ----------
    notebook : str
        The notebook's name (its results folder).
    parameters : mapping, optional
        The run's parameters, recorded once in ``run.json``.
    root : path, optional
        Results root (default: :func:`results_root`).

    Attributes
    ----------
    notebook : str
    parameters : dict
    folder : pathlib.Path
        ``<root>/<notebook>/``, created.

    Examples
    --------
    >>> import tempfile, json
    >>> from gcc.results import RunContext
    >>> with tempfile.TemporaryDirectory() as root:
    ...     run = RunContext("demo", {"seed": 0, "n_workers": 40}, root=root)
    ...     run.save_table([{"scheme": "gcc", "loss": 0.5}], "results")
    ...     run.value("gcc_loss", 0.5, note="mean loss")
    ...     record = json.loads((run.folder / "run.json").read_text())
    ...     loaded = run.load_table("results")
    >>> record["parameters"], record["seed"], record["tables"]["results"]["rows"]
    ({'n_workers': 40, 'seed': 0}, 0, 1)
    >>> record["values"]["gcc_loss"]["text"], list(loaded.columns)
    ('0.5', ['scheme', 'loss'])
    """

    def __init__(self, notebook: str, parameters: Mapping[str, Any] | None = None, *, root=None):
        self.notebook = notebook
        self.parameters = dict(validate(parameters or {}, _MAPPING, "parameters", "RunContext"))
        self.folder = (Path(root) / notebook) if root is not None else results_dir(notebook, create=False)
        if root is not None:
            results_dir(notebook, create=False)  # checks the name
        with _writable(self.folder, "root" if root is not None else "GCC_RESULTS_ROOT", "RunContext"):
            self.folder.mkdir(parents=True, exist_ok=True)
            remove_partials(self.folder)  # what a killed run was writing
            self._remove_previous_outputs()
            self.record = provenance(self.parameters, seed=self.parameters.get("seed"))
            self.record.update(notebook=notebook, tables={}, figures={}, files={}, values={}, includes={})
            self._write()

    @classmethod
    def current(cls, notebook: str, namespace: Mapping[str, Any]) -> "RunContext":
        """The run context of the notebook that calls it, from the notebook's global namespace.

        The parameters are the names that the source notebook's ``parameters`` cell assigns
        (``notebooks/<notebook>.md`` or ``.ipynb``, :mod:`gcc.notebooks`), with their current
        values, i.e. as papermill injected them. Without a source notebook, every public global
        holding plain data (numbers, strings, lists, dicts, None) counts as a parameter.
        Figures drawn afterwards use :data:`PAGE_STYLE`.

        Parameters
        ----------
        notebook : str
        namespace : mapping
            The notebook's ``globals()``.

        Returns
        -------
        RunContext
        """
        source = find_source(notebook)
        cell = parameters_cell(read_source(source)) if source is not None else None
        if cell is not None:
            names = [n for n in assigned_names(cell.source) if n in namespace]
        else:
            names = [n for n, v in namespace.items() if not n.startswith("_") and _plain(v)
                     and n not in ("In", "Out")]
        _page_style()
        return cls(notebook, {n: namespace[n] for n in names})

    @property
    def seed(self):
        """The ``seed`` parameter (None when the notebook has none)."""
        return self.parameters.get("seed")

    def __getitem__(self, name: str):
        return self.parameters[name]

    def save_table(self, table, name: str = "results", **notes: Any) -> None:
        """Write a tidy table as ``<name>.csv`` and list it (rows, columns, ``notes``) in ``run.json``.

        Nothing is returned, so that a notebook cell ending with a save shows nothing
        (``run.folder / "<name>.csv"`` is the file).
        """
        frame = table_frame(table, "RunContext.save_table")
        path = self.folder / f"{plain_name(name, 'name', 'RunContext.save_table')}.csv"
        with replacing(path) as tmp:
            frame.to_csv(tmp, index=False)
        self.record["tables"][name] = jsonable({"file": path.name, "rows": len(frame),
                                                "columns": list(frame.columns), **notes})
        self._write()

    def load_table(self, name: str = "results", notebook: str | None = None):
        """Read ``<name>.csv`` of this run, or of another ``notebook``'s last run (:func:`load_table`)."""
        if notebook is None:
            notebook = self.notebook
        return load_table(notebook, name, root=self.folder.parent)

    def save_figure(self, fig, name: str, dpi: int | None = None, caption: str = "", alt: str = "",
                    drawn_by=None) -> None:
        """Save ``fig`` as ``<name>.png`` and ``.svg``, list both in ``run.json``; show it on the page with
        ``caption`` and ``alt`` (``{{ key }}``: a value of the run) and its source (:func:`gcc.figures.figure_record`)."""
        path = self.folder / f"{plain_name(name, 'name', 'RunContext.save_figure')}.png"
        _save_figure(fig, path, dpi or PAGE_STYLE["savefig.dpi"], "RunContext.save_figure")
        self.record["figures"][name] = [path.name, f"{name}.svg"]
        self.record.setdefault("figure_captions", {})[name] = record = figure_record(
            fig, f"{self.notebook}-{name}", caption, alt, drawn_by, run=self)
        self._write()
        show_figure(fig, record)

    def save_json(self, data: Mapping[str, Any], name: str) -> None:
        """Write ``<name>.json`` (made JSON-safe, keys sorted) and list it in ``run.json``."""
        path = self.folder / f"{plain_name(name, 'name', 'RunContext.save_json')}.json"
        write_text(path, json.dumps(jsonable(dict(validate(data, _MAPPING, "data", "RunContext.save_json"))),
                                    indent=2, sort_keys=True))
        self.record["files"][name] = path.name
        self._write()

    def value(self, key: str, number, unit: str = "", digits: int = 3, fmt: str | None = None,
              note: str = ""):
        """Record a number that the book's prose quotes (nothing is returned).

        Chapters show it as ``{{ <notebook>.<key> }}`` (the text of :func:`format_value`, unit
        included); the runner also writes every value of the run into the include
        ``book/generated/values/<notebook>.md``.

        Parameters
        ----------
        key : str
            A Python identifier, unique within the notebook.
        number : int, float or str
            Finite: a NaN or an infinity is an error (the prose would quote "nan").
        unit, digits, fmt
            See :func:`format_value`.
        note : str
            What the number is (shown in the include's table).
        """
        if not isinstance(key, str) or not key.isidentifier():
            raise invalid("key", "RunContext.value", "a Python identifier", key)
        owner = f"RunContext.value({key!r})"
        number = validate(number, NUMBER, "number", owner)
        validate(note, InstanceOf(str, "a str"), "note", owner)
        self.record["values"][key] = jsonable({"value": number, "unit": unit, "note": note,
                                               "text": format_value(number, unit, digits, fmt)})
        self._write()

    def include(self, frame, name: str, digits: int = 4) -> None:
        """Publish a table for a chapter: the runner writes it as ``book/generated/values/<notebook>.<name>.md``.

        A chapter shows it with ``{include}`` (a MyST markdown table, :func:`markdown_table`), so
        no measured table is typed by hand. ``name`` is a Python identifier.
        """
        if not isinstance(name, str) or not name.isidentifier():
            raise invalid("name", "RunContext.include", "a Python identifier", name)
        self.record["includes"][name] = markdown_table(frame, digits)
        self._write()

    def values(self):
        """The recorded values as a table: ``key``, ``text``, ``note`` (for the notebook's own page)."""
        import pandas as pd

        return pd.DataFrame([{"key": k, "text": v["text"], "note": v["note"]}
                             for k, v in self.record["values"].items()], columns=["key", "text", "note"])

    def _write(self) -> None:
        write_text(self.folder / RUN_RECORD, json.dumps(jsonable(self.record), indent=2, sort_keys=True))

    def _remove_previous_outputs(self) -> None:
        """Delete what the previous run of this notebook saved, so no stale file outlives it."""
        old = read_run_record(self.folder)
        stale = [entry["file"] for entry in (old.get("tables") or {}).values() if isinstance(entry, dict)]
        stale += [f for files in (old.get("figures") or {}).values() for f in files]
        stale += list((old.get("files") or {}).values()) + ["provenance.json"]
        for name in stale:
            if isinstance(name, str) and "/" not in name:
                (self.folder / name).unlink(missing_ok=True)


def _plain(value) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def table_frame(table, owner: str):
    """``table`` as a DataFrame: a DataFrame as it is, a list or tuple of row mappings as rows.

    Examples
    --------
    >>> from gcc.results import table_frame
    >>> table_frame([{"scheme": "gcc", "loss": 0.5}], "save_table").shape
    (1, 2)
    >>> table_frame(5, "save_table")
    Traceback (most recent call last):
    ...
    ValueError: The 'table' parameter of save_table must be a pandas.DataFrame or a list of row mappings. Got 5 instead.
    """
    import pandas as pd

    if isinstance(table, pd.DataFrame):
        return table
    if not (isinstance(table, (list, tuple)) and all(isinstance(row, Mapping) for row in table)):
        raise invalid("table", owner, "a pandas.DataFrame or a list of row mappings", table)
    return pd.DataFrame(list(table))


def _save_figure(fig, png: Path, dpi, owner: str) -> None:
    """``fig`` as ``png`` and the SVG beside it, each written atomically."""
    validate(fig, _FIGURE, "fig", owner)
    validate(dpi, _DPI, "dpi", owner)
    for path, kwargs in ((png, {"dpi": dpi}), (png.with_suffix(".svg"), {})):
        with replacing(path) as tmp:
            fig.savefig(tmp, format=path.suffix[1:], bbox_inches="tight", **kwargs)


def _page_style() -> None:
    try:
        import matplotlib.pyplot  # noqa: F401 - the inline backend sets its rc on import; ours comes after
    except ImportError:
        return
    use_book_style()


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
    frame = table_frame(table, "save_table")
    folder = results_dir(notebook)
    path = folder / f"{plain_name(name, 'name', 'save_table')}.csv"
    with replacing(path) as tmp:
        frame.to_csv(tmp, index=False)
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
    write_text(prov_path, json.dumps(record, indent=2, sort_keys=True))


def load_table(notebook: str, name: str = "results", root: Path | None = None):
    """Read ``<results root>/<notebook>/<name>.csv`` as a pandas DataFrame.

    Parameters
    ----------
    notebook : str
        The notebook that saved the table.
    name : str
        File stem of the CSV.
    root : path, optional
        Results root (default: :func:`results_root`).

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

    folder = results_dir(notebook, create=False)
    path = (Path(root) / folder.name if root is not None else folder) / f"{plain_name(name, 'name', 'load_table')}.csv"
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
    path = results_dir(notebook) / f"{plain_name(name, 'name', 'save_figure')}.png"
    _save_figure(fig, path, dpi, "save_figure")
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
    path = results_dir(notebook) / f"{plain_name(name, 'name', 'save_json')}.json"
    data = validate(data, _MAPPING, "data", "save_json")
    write_text(path, json.dumps(jsonable(dict(data)), indent=2, sort_keys=True))
    return path
