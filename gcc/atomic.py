"""Atomic file writes: a temporary file in the same folder, then :func:`os.replace`.

Every result the companion writes (tables, figures, JSON, ``run.json``, the executed notebooks,
the value files and the status pages) goes through here, so that a process killed in the middle
of a write leaves either the previous file or the new one, never half of one. The temporary
file lies in the target's folder (``os.replace`` is atomic only within one file system), is
hidden (its name starts with a dot, so the book build and the globs of the runner ignore it)
and keeps the target's suffix (matplotlib and papermill choose the format by the suffix).
A write killed by ``SIGKILL`` leaves its temporary file behind; :func:`remove_partials` deletes
such leftovers before the next run writes into the folder.

Standard library only.
"""
from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import Iterator

__all__ = ["PARTIAL_MARK", "partial_path", "replacing", "write_text", "write_bytes", "remove_partials"]

#: What the name of every temporary file contains: ``.<target name>.partial-<token><suffix>``.
PARTIAL_MARK = ".partial-"


def partial_path(path: Path) -> Path:
    """A fresh temporary path beside ``path``: hidden, unique, with the same suffix.

    Examples
    --------
    >>> from pathlib import Path
    >>> from gcc.atomic import partial_path
    >>> tmp = partial_path(Path("out/results.csv"))
    >>> tmp.parent.as_posix(), tmp.name.startswith(".results.csv.partial-"), tmp.suffix
    ('out', True, '.csv')
    """
    path = Path(path)
    return path.with_name(f".{path.name}{PARTIAL_MARK}{secrets.token_hex(4)}{path.suffix}")


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """Write ``path`` atomically: yield a temporary path to write, then move it onto ``path``.

    The folder is created if needed. If the block raises, the temporary file is removed and
    ``path`` keeps its previous content (or stays absent). If the block wrote nothing, ``path``
    is left as it was.

    Parameters
    ----------
    path : path
        The file to (re)write.

    Yields
    ------
    pathlib.Path
        Where to write (same folder, same suffix).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from gcc.atomic import replacing
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     target = Path(folder, "table.csv")
    ...     with replacing(target) as tmp:
    ...         _ = tmp.write_text("a,b\\n1,2\\n")
    ...     print(target.read_text().splitlines(), [p.name for p in Path(folder).iterdir()])
    ['a,b', '1,2'] ['table.csv']
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = partial_path(path)
    try:
        yield tmp
        if tmp.exists():
            os.replace(tmp, path)
    finally:
        # After a successful replace the temporary name no longer exists; after an error it must go.
        tmp.unlink(missing_ok=True)


def write_text(path: Path, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (:func:`replacing`); return ``path``.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from gcc.atomic import write_text
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     print(write_text(Path(folder, "a", "note.md"), "# Note\\n").read_text())
    # Note
    <BLANKLINE>
    """
    with replacing(path) as tmp:
        tmp.write_text(text, encoding=encoding)
    return Path(path)


def write_bytes(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (:func:`replacing`); return ``path``."""
    with replacing(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def remove_partials(folder: Path, prefix: str = "") -> list[Path]:
    """Delete the temporary files that killed writes left in ``folder``; return them.

    Parameters
    ----------
    folder : path
        Not searched recursively; a missing folder holds nothing.
    prefix : str
        Only the leftovers of targets whose name starts with ``prefix`` (e.g. ``"quickstart."``
        in a folder that several notebooks share), so that a write in progress of another
        notebook is not touched.

    Returns
    -------
    list of pathlib.Path

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from gcc.atomic import partial_path, remove_partials
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = partial_path(Path(folder, "a.csv")).write_text("half a ta")
    ...     _ = partial_path(Path(folder, "b.csv")).write_text("half")
    ...     print(len(remove_partials(folder, prefix="a.")), len(remove_partials(folder)))
    1 1
    """
    folder = Path(folder)
    if not folder.is_dir():
        return []
    removed = []
    for path in folder.glob(f".{prefix}*{PARTIAL_MARK}*"):
        if path.is_file():
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed
