"""Source notebooks (MyST text via jupytext, or JSON) and their parameters cell (papermill's inspection)."""
from __future__ import annotations

import ast
import os
from pathlib import Path

from .provenance import repo_root
from .validation import invalid

__all__ = ["SOURCE_SUFFIXES", "notebooks_dir", "shown_path", "read_text", "is_text_notebook", "read_source",
           "complaint", "parameters_cell", "parameters"]

#: Suffixes of source notebooks, preferred first: a text notebook wins over a JSON one of the same name.
SOURCE_SUFFIXES = (".md", ".ipynb")


def notebooks_dir() -> Path:
    """``$GCC_NOTEBOOKS_DIR`` or ``<repo>/notebooks``: the source notebooks and their run cards."""
    env = os.environ.get("GCC_NOTEBOOKS_DIR")
    return Path(env).resolve() if env else repo_root() / "notebooks"


def shown_path(path: Path) -> str:
    """``path`` as messages show it: relative to the repository root when it lies inside it."""
    try:
        return Path(path).resolve().relative_to(repo_root()).as_posix()
    except ValueError:
        return str(path)


def read_text(path: Path, owner: str | None = None) -> str:
    """The UTF-8 text of ``path``; the contract's error (of ``owner``, default the notebook) naming the byte."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise invalid("path", owner or f"notebook {shown_path(path)}", "a UTF-8 text file", shown_path(path),
                      f"byte {err.start} cannot be decoded") from None


def is_text_notebook(path: Path) -> bool:
    """Whether ``path`` is a ``.md`` file whose front matter names jupytext or a kernelspec (not a README)."""
    path = Path(path)
    if path.suffix != ".md" or not path.is_file():
        return False
    head = read_text(path)[:4000]
    end = head.find("\n---", 3)
    return head.startswith("---") and end > 0 and ("jupytext:" in head[:end] or "kernelspec:" in head[:end])


def complaint(err: BaseException) -> str:
    """The first lines of a reader's error (json, PyYAML, jupytext) in one line."""
    lines = str(err).replace('in "<unicode string>", ', "").splitlines()  # PyYAML quotes the line 4 spaces in
    return "; ".join(line.strip().rstrip(":") for line in lines if line.strip() and line[:4] != "    ")[:300]


def read_source(path: Path):
    """The notebook at ``path`` (``.md`` via jupytext, ``.ipynb`` via nbformat), every cell with a tags list;
    a ``ValueError`` naming the file and jupytext's, json's, PyYAML's or nbformat's complaint.
    """
    import json

    import jupytext
    import nbformat

    path = Path(path)
    text = read_text(path)
    try:
        if path.suffix == ".md":
            nb = jupytext.reads(text, fmt="md:myst")
        else:
            nb = nbformat.reads(json.dumps(json.loads(text)), as_version=4)  # json first: its error names the line
            nbformat.validate(nb)
    except Exception as err:  # noqa: BLE001 - jupytext, json, PyYAML and nbformat raise several kinds
        field = ".".join(str(p) for p in getattr(err, "absolute_path", []))
        raise invalid("path", f"notebook {shown_path(path)}", "a notebook that jupytext and nbformat read",
                      shown_path(path), f"at {field}: {err.message}" if field else complaint(err)) from None
    for cell in nb.cells:  # papermill looks for tags on every cell
        cell.metadata.setdefault("tags", [])
    return nb


def parameters_cell(nb):
    """The first code cell tagged ``parameters`` of ``nb`` (None when there is none)."""
    return next((c for c in nb.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])), None)


def parameters(path: Path) -> dict[str, str]:
    """Papermill's inspection of the ``parameters`` cell: ``{name: default source text}`` ({} without one);
    a ``ValueError`` naming the line of a syntax error or of a line papermill's inspection cannot read."""
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
            at = read_text(path).find(cell.source)
            where = f"line {read_text(path)[:max(at, 0)].count(chr(10)) + number}"
        raise invalid(where, f"notebook {shown_path(path)}", "valid Python in the cell tagged 'parameters'",
                      (err.text or "").rstrip("\n"), f"{err.msg}, at column {err.offset or 1}") from None
    found = {p.name: p.default for p in PythonTranslator.inspect(cell)}
    for node in tree.body:  # a name papermill does not see could not be overridden: say which line
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and not all(getattr(t, "id", None) in found for t in targets):
            raise invalid(f"line {node.lineno} of the cell", f"notebook {shown_path(path)}", "one parameter per line, "
                          "`name = value  # comment`, which papermill's inspection reads (no '=' in the comment)",
                          cell.source.splitlines()[node.lineno - 1])
    return found

