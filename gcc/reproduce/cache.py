"""Cache keys and run records: when a notebook need not run again.

The key is a sha256 over the notebook source with outputs stripped, the injected parameters,
:func:`gcc.results.library_fingerprint` (jupyter-cache ignores the library's code, so it cannot
be used here), the profile and the keys of the notebooks it depends on. A notebook whose key
equals the one in its last successful ``run.json`` is reported as ``cached`` and not rerun,
unless a file that record lists has gone (:func:`missing_outputs`): then it runs again.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from gcc import results
from gcc.notebooks import read_source

from .cards import NotebookCard

__all__ = ["RUN_RECORD", "cache_key", "read_record", "missing_outputs"]

#: File name of the run record in ``<results root>/<notebook>/``.
RUN_RECORD = results.RUN_RECORD


def _stripped_source(path: Path) -> str:
    """The notebook's cells (type, source, tags) without outputs, execution counts or other metadata."""
    cells = [{"type": cell.cell_type, "source": cell.source, "tags": sorted(cell.get("metadata", {}).get("tags", []))}
             for cell in read_source(path).cells]
    return json.dumps(cells, sort_keys=True)


def cache_key(card: NotebookCard, params: dict[str, Any], profile: str,
              upstream: dict[str, str] | None = None, fingerprint: str | None = None) -> str:
    """sha256 over source (outputs stripped), parameters, library fingerprint, profile, upstream keys.

    Parameters
    ----------
    card : NotebookCard
    params : dict
        The parameters papermill injects.
    profile : str
    upstream : dict, optional
        ``{dependency name: its cache key}``.
    fingerprint : str, optional
        The library fingerprint (default: :func:`gcc.results.library_fingerprint`, which the
        batch computes once).

    Returns
    -------
    str
        64 hexadecimal digits.
    """
    digest = hashlib.sha256()
    payload = {
        "source": _stripped_source(card.path),
        "parameters": results.jsonable(params),
        "library": fingerprint or results.library_fingerprint(),
        "profile": profile,
        "upstream": dict(sorted((upstream or {}).items())),
    }
    digest.update(json.dumps(payload, sort_keys=True, default=str).encode())
    return digest.hexdigest()


def read_record(results_root: Path, name: str) -> dict | None:
    """The last ``run.json`` of notebook ``name`` (None when it never ran or the file is unreadable)."""
    path = Path(results_root) / name / RUN_RECORD
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def missing_outputs(record: dict, folder: Path) -> list[str]:
    """The files that ``record`` (a ``run.json``) lists as saved but that ``folder`` lacks.

    Tables, figures (PNG and SVG) and JSON files; a cached run is trusted only while this is empty.
    """
    names = [entry.get("file") for entry in (record.get("tables") or {}).values() if isinstance(entry, dict)]
    names += [f for files in (record.get("figures") or {}).values() if isinstance(files, list) for f in files]
    names += list((record.get("files") or {}).values())
    return [n for n in names if isinstance(n, str) and "/" not in n and not (Path(folder) / n).is_file()]
