"""Source notebooks: MyST-markdown text (read by jupytext) or JSON, and their parameters cell
(read by papermill's inspection); a notebook that cannot be read is the contract's ``ValueError``
naming the file and the line.
"""
from __future__ import annotations

import ast
import os
import re
from pathlib import Path

from .provenance import repo_root
from .validation import invalid

__all__ = ["SOURCE_SUFFIXES", "notebooks_dir", "shown_path", "is_text_notebook", "read_source", "yaml_error",
           "parameters_cell", "parameters", "assigned_names"]

#: Suffixes of source notebooks, preferred first: a text notebook wins over a JSON one of the same name.
SOURCE_SUFFIXES = (".md", ".ipynb")


def notebooks_dir() -> Path:
    """``$GCC_NOTEBOOKS_DIR`` or ``<repo>/notebooks``: the source notebooks and their run cards."""
    env = os.environ.get("GCC_NOTEBOOKS_DIR")
    return Path(env).resolve() if env else repo_root() / "notebooks"


def shown_path(path: Path) -> str:
    """``path`` as messages show it: relative to the repository root when it lies inside it.

    Examples
    --------
    >>> from gcc.notebooks import notebooks_dir, shown_path
    >>> shown_path(notebooks_dir() / "quickstart.md"), shown_path("/tmp/x.md")
    ('notebooks/quickstart.md', '/tmp/x.md')
    """
    try:
        return Path(path).resolve().relative_to(repo_root()).as_posix()
    except ValueError:
        return str(path)


def _read_text(path: Path) -> str:
    """The UTF-8 text of ``path``; the contract's error naming the byte that cannot be decoded."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise invalid("path", f"notebook {shown_path(path)}", "a UTF-8 text file", shown_path(path),
                      f"byte {err.start} cannot be decoded") from None


def is_text_notebook(path: Path) -> bool:
    """Whether ``path`` is a ``.md`` file whose front matter names jupytext or a kernelspec (not a README)."""
    path = Path(path)
    if path.suffix != ".md" or not path.is_file():
        return False
    head = _read_text(path)[:4000]
    end = head.find("\n---", 3)
    return head.startswith("---") and end > 0 and ("jupytext:" in head[:end] or "kernelspec:" in head[:end])


def _line(text: str, number: int) -> str:
    """Line ``number`` (from 1) of ``text``; "" beyond its end."""
    lines = text.splitlines()
    return lines[number - 1] if 1 <= number <= len(lines) else ""


def yaml_error(err, text: str, owner: str, what: str = "valid YAML") -> ValueError:
    """The contract's ValueError for the YAML error ``err`` in ``text``, naming the line."""
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    if mark is None:
        return invalid("text", owner, what, text[:200], str(err))
    problem = "; ".join(p for p in (getattr(err, "context", None), getattr(err, "problem", None)) if p)
    return invalid(f"line {mark.line + 1}", owner, what, _line(text, mark.line + 1),
                   f"{problem or err}, at column {mark.column + 1}")


def read_source(path: Path):
    """The notebook at ``path`` (``.md`` via jupytext, ``.ipynb`` via nbformat), every cell with a tags list;
    a ``ValueError`` naming the file and the line of a JSON or YAML error, or the nbformat schema's complaint.

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
    gcc.validation.InvalidParameterError: The 'line 2' parameter of notebook .../bad.ipynb must be valid JSON (...). Got '  {"cell_type": "code",}' instead.
    """
    import json

    import jupytext
    import nbformat
    import yaml

    path, owner = Path(path), f"notebook {shown_path(path)}"
    text = _read_text(path)
    try:
        if path.suffix == ".md":
            nb = jupytext.reads(text, fmt="md:myst")
        else:
            nb = nbformat.reads(json.dumps(json.loads(text)), as_version=4)  # json first: its error names the line
            nbformat.validate(nb)
    except json.JSONDecodeError as err:
        raise invalid(f"line {err.lineno}", owner, "valid JSON", _line(text, err.lineno),
                      f"{err.msg}, at column {err.colno}") from None
    except yaml.YAMLError as err:  # the front matter
        raise yaml_error(err, text, owner, what="valid YAML front matter") from None
    except Exception as err:  # noqa: BLE001 - jupytext and nbformat raise several kinds
        cell = re.match(r"(Code|Markdown|Raw) cell (\d+) at line (\d+)", str(err))
        if cell and isinstance(err.__context__, yaml.YAMLError):  # a cell's MyST options
            fence = int(cell.group(3)) + (2 if _line(text, int(cell.group(3)) + 1).strip() == "---" else 1)
            raise invalid(f"line {fence}", owner, f"valid YAML options of {cell.group(1).lower()} cell "
                          f"{cell.group(2)}", _line(text, fence), getattr(err.__context__, "problem", "")) from None
        where = ".".join(str(p) for p in getattr(err, "absolute_path", [])) or "notebook"
        raise invalid(where, owner, "a notebook that jupytext and nbformat read",
                      getattr(err, "instance", text[:80]), str(getattr(err, "message", err)).split("\n")[0]) from None
    for cell in nb.cells:  # papermill looks for tags on every cell
        cell.metadata.setdefault("tags", [])
    return nb


def parameters_cell(nb):
    """The first code cell tagged ``parameters`` of ``nb`` (None when there is none)."""
    return next((c for c in nb.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])), None)


def parameters(path: Path) -> dict[str, str]:
    """Papermill's inspection of the ``parameters`` cell: ``{name: default source text}`` ({} without one).

    Raises
    ------
    ValueError
        For a syntax error in the cell or a line papermill's inspection cannot read, naming the
        file and the line (of the file for a text notebook, of the cell for JSON).
    """
    from papermill.translators import PythonTranslator

    path = Path(path)
    cell = parameters_cell(read_source(path))
    if cell is None:
        return {}
    try:
        tree = ast.parse(cell.source)
    except SyntaxError as err:
        number, where = err.lineno or 1, f"line {err.lineno or 1} of the cell"
        if path.suffix == ".md":
            at = _read_text(path).find(cell.source)
            where = f"line {_read_text(path)[:max(at, 0)].count(chr(10)) + number}"
        raise invalid(where, f"notebook {shown_path(path)}", "valid Python in the cell tagged 'parameters'",
                      _line(cell.source, number), f"{err.msg}, at column {err.offset or 1}") from None
    found = {p.name: p.default for p in PythonTranslator.inspect(cell)}
    for node in tree.body:  # a name papermill does not see could not be overridden: say which line
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and not all(getattr(t, "id", None) in found for t in targets):
            raise invalid(f"line {node.lineno} of the cell", f"notebook {shown_path(path)}", "one parameter per line, "
                          "`name = value  # comment`, which papermill's inspection reads (no '=' in the comment)",
                          _line(cell.source, node.lineno))
    return found


def assigned_names(source: str) -> list[str]:
    """The parameter names that papermill's inspection finds in the code ``source``, in order.

    Examples
    --------
    >>> from gcc.notebooks import assigned_names
    >>> assigned_names("seed = 0\\nlam = 1e-3   # smoothing\\nimport numpy as np")
    ['seed', 'lam']
    """
    import nbformat
    from papermill.translators import PythonTranslator

    return [p.name for p in PythonTranslator.inspect(nbformat.v4.new_code_cell(source))]
