"""Source notebooks: text (MyST markdown read by jupytext) or JSON, and their parameters cell.

The companion's notebooks are MyST-markdown text files ``notebooks/<name>.md`` (the jupytext
"md:myst" format, with a jupytext/kernelspec front matter); JSON ``.ipynb`` sources are still
read during the transition. :func:`read_source` turns either into an ``nbformat`` notebook, the
form papermill executes; :func:`parameters_cell` finds the cell tagged ``parameters`` and
:func:`assigned_names` lists the names it sets. The reproduce runner (run cards, cache keys,
parameters) and :class:`gcc.results.RunContext` (which parameters to record) both read
notebooks through here. jupytext and nbformat are imported inside the functions.
"""
from __future__ import annotations

import ast
import os
from pathlib import Path

__all__ = ["SOURCE_SUFFIXES", "notebooks_dir", "is_text_notebook", "find_source", "read_source",
           "parameters_cell", "assigned_names"]

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
    head = path.read_text(encoding="utf-8")[:4000]
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
    """
    import nbformat

    path = Path(path)
    if path.suffix == ".md":
        import jupytext

        return jupytext.read(str(path), fmt="md:myst")
    return nbformat.read(str(path), as_version=4)


def parameters_cell(nb):
    """The first code cell tagged ``parameters`` of ``nb`` (None when there is none)."""
    for cell in nb.cells:
        if cell.cell_type == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            return cell
    return None


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
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names: list[str] = []

    def add(target):
        if isinstance(target, ast.Name) and target.id not in names:
            names.append(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                add(elt)

    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                add(target)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            add(node.target)
    return names

