"""Atomic file writes: a hidden temporary file beside the target, then :func:`os.replace`."""
from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import Iterator

from .validation import invalid

__all__ = ["PARTIAL_MARK", "partial_path", "replacing", "write_text", "remove_partials", "writable_folder"]

#: What the name of every temporary file contains.
PARTIAL_MARK = ".partial-"


def partial_path(path: Path) -> Path:
    """A fresh hidden temporary path beside ``path``, with the same suffix."""
    path = Path(path)
    return path.with_name(f".{path.name}{PARTIAL_MARK}{secrets.token_hex(4)}{path.suffix}")


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """Yield a temporary path to write, then move it onto ``path``; if the block raises, ``path`` is unchanged."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = partial_path(path)
    try:
        yield tmp
        if tmp.exists():
            os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text(path: Path, text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically (:func:`replacing`)."""
    with replacing(path) as tmp:
        tmp.write_text(text, encoding=encoding)


def remove_partials(folder: Path, prefix: str = "") -> None:
    """Delete the temporary files of killed writes in ``folder``, of targets named ``prefix*``."""
    for path in Path(folder).glob(f".{prefix}*{PARTIAL_MARK}*"):
        path.unlink(missing_ok=True)


def writable_folder(path, name: str, owner: str) -> Path:
    """``path`` (absolute), created if missing, if this process can write a file there, else the ValueError."""
    try:
        folder = Path(path).expanduser().resolve()
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f".probe-{os.getpid()}").touch()
        (folder / f".probe-{os.getpid()}").unlink()
    except (OSError, TypeError) as err:   # TypeError: not a path
        raise invalid(name, owner, "a folder this process can create and write", str(path),
                      getattr(err, "strerror", None) or str(err)) from None
    return folder
