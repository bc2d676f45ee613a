"""Source notebooks: text (MyST markdown read by jupytext) or JSON, and their parameters cell.

The companion's notebooks are MyST-markdown text files ``notebooks/<name>.md`` (the jupytext
"md:myst" format, with a jupytext/kernelspec front matter); JSON ``.ipynb`` sources are still
read during the transition. :func:`read_source` turns either into an ``nbformat`` notebook, the
form papermill executes; :func:`parameters_cell` finds the cell tagged ``parameters`` and
:func:`assigned_names` lists the names it sets. The reproduce runner (run cards, cache keys,
parameters) and :class:`gcc.results.RunContext` (which parameters to record) both read
notebooks through here. jupytext and nbformat are imported inside the functions.

A notebook that cannot be read is a ``ValueError`` in the contract's form that names the file
and the field: the line of a JSON or YAML syntax error, the cell entry that breaks the nbformat
schema (``cells[2].metadata.tags``), the code cell whose MyST options do not parse
(:func:`read_source`, :func:`yaml_error`).
"""
from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path

from .validation import invalid

__all__ = ["SOURCE_SUFFIXES", "CELL_TYPES", "notebooks_dir", "shown_path", "is_text_notebook", "find_source",
           "read_source", "yaml_error", "parameters_cell", "checked_parameters_cell", "assigned_names",
           "assigned_values"]

#: The cell types of nbformat 4.
CELL_TYPES = ("code", "markdown", "raw")

#: Suffixes of source notebooks, preferred first: a text notebook wins over a JSON one of the same name.
SOURCE_SUFFIXES = (".md", ".ipynb")


def notebooks_dir() -> Path:
    """``$GCC_NOTEBOOKS_DIR`` or ``<repo>/notebooks``: the source notebooks and their run cards.

    Examples
    --------
    >>> from gcc.notebooks import notebooks_dir
    >>> notebooks_dir().name
    'notebooks'
    """
    env = os.environ.get("GCC_NOTEBOOKS_DIR")
    return Path(env).resolve() if env else Path(__file__).resolve().parent.parent / "notebooks"


def shown_path(path: Path) -> str:
    """``path`` as messages show it: relative to the repository root when it lies inside it.

    Examples
    --------
    >>> from gcc.notebooks import notebooks_dir, shown_path
    >>> shown_path(notebooks_dir() / "quickstart.md"), shown_path("/tmp/x.md")
    ('notebooks/quickstart.md', '/tmp/x.md')
    """
    try:
        return Path(path).resolve().relative_to(Path(__file__).resolve().parent.parent).as_posix()
    except ValueError:
        return str(path)


def _read_text(path: Path, owner: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise invalid("path", owner, "a UTF-8 text file", shown_path(path),
                      f"byte {err.start} cannot be decoded") from None


def is_text_notebook(path: Path) -> bool:
    """Whether ``path`` is a MyST-markdown notebook: a ``.md`` file whose front matter names jupytext.

    A plain markdown file (a README) in the notebooks folder is not a notebook.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from gcc.notebooks import is_text_notebook
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     nb, readme = Path(tmp, "a.md"), Path(tmp, "README.md")
    ...     _ = nb.write_text("---\\njupytext:\\n  text_representation:\\n    format_name: myst\\n---\\n# A\\n")
    ...     _ = readme.write_text("# Notes\\n")
    ...     print(is_text_notebook(nb), is_text_notebook(readme))
    True False
    """
    path = Path(path)
    if path.suffix != ".md" or not path.is_file():
        return False
    head = _read_text(path, f"notebook {shown_path(path)}")[:4000]
    if not head.startswith("---"):
        return False
    end = head.find("\n---", 3)
    return end > 0 and ("jupytext:" in head[:end] or "kernelspec:" in head[:end])


def find_source(name: str, folder: Path | None = None) -> Path | None:
    """The source notebook ``<folder>/<name>.md`` (a text notebook) or ``<name>.ipynb``; None if neither.

    Examples
    --------
    >>> from gcc.notebooks import find_source
    >>> find_source("quickstart").suffix
    '.md'
    >>> find_source("no_such_notebook") is None
    True
    """
    folder = Path(folder) if folder else notebooks_dir()
    text = folder / f"{name}.md"
    if is_text_notebook(text):
        return text
    json_nb = folder / f"{name}.ipynb"
    return json_nb if json_nb.is_file() else None


def read_source(path: Path):
    """The notebook stored at ``path`` as an ``nbformat`` v4 notebook (text via jupytext, JSON via nbformat).

    Parameters
    ----------
    path : path
        ``<name>.md`` (MyST markdown notebook) or ``<name>.ipynb``.

    Returns
    -------
    nbformat.NotebookNode
        Cells with their tags; a text notebook carries its front matter's ``kernelspec`` and
        ``jupytext`` metadata.

    Raises
    ------
    ValueError
        If the file is not UTF-8, not valid JSON or MyST (the message names the line), or breaks
        the nbformat 4 schema (the message names the entry, e.g. ``cells[3].cell_type``).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from gcc.notebooks import read_source
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     bad = Path(tmp, "bad.ipynb")
    ...     _ = bad.write_text('{"cells": [\\n  {"cell_type": "code",}\\n]}')
    ...     read_source(bad)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: The 'line 2' parameter of notebook .../bad.ipynb must be valid JSON (Expecting property name enclosed in double quotes, at column 24). Got '  {"cell_type": "code",}' instead.
    """
    path = Path(path)
    owner = f"notebook {shown_path(path)}"
    text = _read_text(path, owner)
    if path.suffix == ".md":
        return _read_myst(text, owner)
    return _read_json(text, owner)


def _line(text: str, number: int) -> str:
    lines = text.splitlines()
    return lines[number - 1] if 1 <= number <= len(lines) else ""


def yaml_error(err, text: str, owner: str, first_line: int = 1, what: str = "valid YAML",
               column_offset: int = 0) -> ValueError:
    """The contract's ValueError for a YAML syntax error ``err`` in ``text``: it names the line.

    Parameters
    ----------
    err : yaml.YAMLError
    text : str
        The document the error is in (its line is quoted).
    owner : str
        The file, e.g. ``"run card notebooks/x.yaml"``.
    first_line : int
        Line of the file where ``text`` begins (a cell's options inside a notebook).
    what : str
        What the text must be.
    column_offset : int
        Characters of the file's line before the YAML's (the ``:`` of a MyST option line).

    Returns
    -------
    ValueError
        ``The 'line 3' parameter of <owner> must be valid YAML (<problem>, at column 12). Got '<line>' instead.``
    """
    mark = getattr(err, "context_mark", None) or getattr(err, "problem_mark", None)
    if mark is None:
        return invalid("text", owner, what, text[:200], str(err))
    problem = getattr(err, "problem", None) or str(err)
    context = getattr(err, "context", None)
    where = getattr(err, "problem_mark", None) or mark
    column = where.column + 1 + column_offset
    at = f"at column {column}" if where.line == mark.line else f"at line {where.line + first_line}, column {column}"
    detail = f"{context + ': ' if context else ''}{problem}, {at}"
    number = mark.line + first_line
    return invalid(f"line {number}", owner, what, _line(text, number - first_line + 1), detail)


def _read_myst(text: str, owner: str):
    import jupytext
    import yaml

    try:
        return jupytext.reads(text, fmt="md:myst")
    except yaml.YAMLError as err:  # the front matter
        raise yaml_error(err, text, owner, what="valid YAML front matter") from None
    except Exception as err:  # noqa: BLE001 - jupytext raises several kinds; each is a broken notebook
        found = re.match(r"(Code|Markdown|Raw) cell (\d+) at line (\d+)", str(err))
        cause = err.__context__
        if found and isinstance(cause, yaml.YAMLError):
            fence = int(found.group(3))
            fenced = _line(text, fence + 1).strip() == "---"  # options between --- lines, else :key: lines
            first = fence + 2 if fenced else fence + 1
            raise yaml_error(cause, "\n".join(text.splitlines()[first - 1:]), owner, first_line=first,
                             what=f"valid YAML options of {found.group(1).lower()} cell {found.group(2)}",
                             column_offset=0 if fenced else 1) from None
        raise invalid("text", owner, "a MyST notebook that jupytext reads", text[:80],
                      str(err).split("\n")[0]) from None


def _read_json(text: str, owner: str):
    import nbformat

    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise invalid(f"line {err.lineno}", owner, "valid JSON", _line(text, err.lineno),
                      f"{err.msg}, at column {err.colno}") from None
    if not isinstance(data, dict):
        raise invalid("notebook", owner, "a JSON object (an nbformat 4 notebook)", data)
    for key in ("cells", "metadata", "nbformat"):
        if key not in data:
            raise invalid(key, owner, "an entry of an nbformat 4 notebook", None, "it is missing")
    cells = data["cells"]
    if not isinstance(cells, list):
        raise invalid("cells", owner, "a list of cells", cells)
    for i, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") not in CELL_TYPES:
            value = cell.get("cell_type") if isinstance(cell, dict) else cell
            raise invalid(f"cells[{i}].cell_type", owner, f"one of {', '.join(CELL_TYPES)}", value)
    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception as err:  # noqa: BLE001 - nbformat raises several kinds; each is a broken notebook
        raise invalid("nbformat", owner, "an nbformat 4 notebook", data.get("nbformat"), str(err)) from None
    problem = _schema_problem(nb)
    if problem is not None:
        field, message, value = problem
        raise invalid(field, owner, "valid under the nbformat 4 schema", value, message)
    return nb


def _schema_problem(nb):
    """(field, message, value) of the deepest nbformat schema violation of ``nb``, or None."""
    import warnings

    from nbformat.validator import get_validator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # missing cell ids: nbformat adds them itself
        validator = get_validator(version=4, version_minor=nb.get("nbformat_minor", 4), name="jsonschema")
        errors = list(validator.iter_errors(nb)) if validator is not None else []

    def leaves(err):
        if err.context:
            for sub in err.context:
                yield from leaves(sub)
        else:
            yield err

    # A cell is checked against every cell kind (oneOf): once its cell_type is known to be valid,
    # the other kinds' complaints about it are noise.
    found = [e for err in errors for e in leaves(err)
             if not (list(e.absolute_path)[-1:] == ["cell_type"] and e.validator == "enum")]
    if not found:
        return None
    deepest = max(found, key=lambda e: len(e.absolute_path))
    field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in deepest.absolute_path).lstrip(".")
    return field or "notebook", deepest.message, deepest.instance


def parameters_cell(nb):
    """The first code cell tagged ``parameters`` of ``nb`` (None when there is none)."""
    for cell in nb.cells:
        if cell.cell_type == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            return cell
    return None


def checked_parameters_cell(path: Path, nb=None):
    """:func:`parameters_cell` of the notebook at ``path``, which must parse as Python.

    Raises
    ------
    ValueError
        For a syntax error in the cell: the message names the file, the line (of the file for a
        text notebook, of the cell for JSON) and Python's description, e.g. ``The 'line 47'
        parameter of notebook notebooks/x.md must be valid Python in the cell tagged 'parameters'
        (invalid syntax, at column 12). Got 'n_trials = = 5' instead.``
    """
    path = Path(path)
    cell = parameters_cell(read_source(path) if nb is None else nb)
    if cell is None:
        return None
    try:
        ast.parse(cell.source)
    except SyntaxError as err:
        number = err.lineno or 1
        text = _line(cell.source, number)
        first = 1
        if path.suffix == ".md":        # the cell's first line in the file
            whole = _read_text(path, "")
            at = whole.find(cell.source)
            first = whole[:at].count("\n") + 1 if at >= 0 else 1
        where = f"line {first + number - 1}" if path.suffix == ".md" else f"line {number} of the cell"
        raise invalid(where, f"notebook {shown_path(path)}", "valid Python in the cell tagged 'parameters'",
                      text, f"{err.msg}, at column {err.offset or 1}") from None
    return cell


def assigned_names(source: str) -> list[str]:
    """Names bound at the top level of the code ``source``, in order, each once.

    Plain, annotated and tuple assignments count; imports and definitions do not. Code that
    does not parse (IPython magics) binds nothing.

    Examples
    --------
    >>> from gcc.notebooks import assigned_names
    >>> assigned_names("seed = 0\\nlow, high = -3.0, 3.0   # range\\nn: int = 4\\nimport numpy as np\\nseed = 1")
    ['seed', 'low', 'high', 'n']
    """
    return list(assigned_values(source))


def assigned_values(source: str) -> dict[str, str]:
    """The names :func:`assigned_names` finds, each with the source text of the value it is first given.

    The parameters cell of a notebook is read this way (as Python), whatever its comments hold
    (papermill's line-based reader skips a line whose comment has ``=`` or ``>=`` in it).

    Examples
    --------
    >>> from gcc.notebooks import assigned_values
    >>> assigned_values("fit_min = 4.0   # fits over N >= fit_min\\nlow, high = -1, 1")
    {'fit_min': '4.0', 'low': '-1, 1', 'high': '-1, 1'}
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    values: dict[str, str] = {}

    def add(target, value):
        if isinstance(target, ast.Name):
            text = ast.get_source_segment(source, value) if value is not None else None
            values.setdefault(target.id, text if text is not None else "")
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                add(elt, value)

    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                add(target, node.value)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            add(node.target, node.value)
    return values

