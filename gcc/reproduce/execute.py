"""Running one notebook: papermill, the cache, the outcome and the failing cell.

:func:`run_one` executes a source notebook with papermill into ``<output dir>/<name>.ipynb``
(cwd = the repository root) unless its cache key (:func:`cache_key`, a content hash) is
unchanged, prepares its page (:func:`gcc.reproduce.pages.finish_page`) and completes its
``run.json``: the notebook's own record (:class:`gcc.results.RunContext`) plus the runner's
entries (profile, parameters, command-line parameters, seconds, status, cache key). The kernel
learns its notebook and parameters from ``$GCC_RUN``. A run is committed in one order, so that a
killed run is redone by the next batch: papermill writes a hidden temporary notebook
(:mod:`gcc.atomic`) that replaces the page when the run ends, then the value files, then
``run.json`` saying ``ok``.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from gcc import atomic, results
from gcc.notebooks import read_source, shown_path as relative
from gcc.provenance import repo_root
from gcc.validation import invalid

from .cards import Card
from .pages import finish_page, values_written, write_values

__all__ = ["KERNEL_NAME", "Outcome", "ensure_kernel", "check_kernel", "cache_key", "format_error", "run_one"]

#: The Jupyter kernel the runner asks papermill for (``make install`` installs it).
KERNEL_NAME = "gcc-companion"


def ensure_kernel(name: str = KERNEL_NAME) -> str:
    """``name``, installed into this prefix if missing; ``"python3"`` (with a note) if that fails."""
    from jupyter_client.kernelspec import KernelSpecManager

    if name in KernelSpecManager().find_kernel_specs():
        return name
    try:
        from ipykernel.kernelspec import install

        install(kernel_name=name, display_name="Python (gcc companion)", prefix=sys.prefix)
        return name
    except Exception as exc:  # noqa: BLE001 - any failure falls back to the generic kernel
        print(f"note: could not install kernel {name!r} ({exc}); using 'python3'", file=sys.stderr)
        return "python3"


def check_kernel(name, param: str = "kernel", owner: str = "run_batch") -> str:
    """``name`` if it is an installed Jupyter kernel, else the contract's ValueError listing them."""
    from jupyter_client.kernelspec import KernelSpecManager

    names = sorted(KernelSpecManager().find_kernel_specs())
    if name not in names:
        raise invalid(param, owner, f"an installed Jupyter kernel ({', '.join(names) or 'none installed'})", name)
    return name


@dataclass
class Outcome:
    """What happened to one notebook: ``status`` ``ok``, ``cached``, ``error`` or ``skipped``."""

    name: str
    status: str
    seconds: float = 0.0
    error: dict | None = None
    record: dict | None = None


def cache_key(card: Card, injected: dict, profile: str, upstream: dict | None = None,
              fingerprint: str | None = None) -> str:
    """sha256 over the cells (type, source, tags; no outputs), the injected parameters, the library
    (:func:`gcc.results.library_fingerprint`), the profile and the keys of the notebooks it depends on."""
    cells = [(c.cell_type, c.source, sorted(c.metadata.get("tags", []))) for c in read_source(card.path).cells]
    payload = {"cells": cells, "parameters": results.jsonable(injected), "profile": profile,
               "library": fingerprint or results.library_fingerprint(), 
               "upstream": dict(sorted((upstream or {}).items()))}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def _missing_outputs(record: dict, folder: Path) -> list[str]:
    """The files ``record`` lists as saved that ``folder`` lacks: a cached run is trusted only without any."""
    names = [e.get("file") for e in (record.get("tables") or {}).values() if isinstance(e, dict)]
    names += [f for files in (record.get("figures") or {}).values() for f in files]
    names += list((record.get("files") or {}).values())
    return [n for n in names if isinstance(n, str) and "/" not in n and not (folder / n).is_file()]


def _error_details(exc: BaseException, output: Path) -> dict:
    from papermill.exceptions import PapermillExecutionError

    if not isinstance(exc, PapermillExecutionError):
        return {"cell_index": None, "source_cell_index": None, "ename": type(exc).__name__, "evalue": str(exc)}
    try:  # papermill inserts the injected-parameters cell: the source notebook's index is one less after it
        tags = [c.get("metadata", {}).get("tags", []) for c in json.loads(output.read_text())["cells"]]
        injected = next(i for i, t in enumerate(tags) if "injected-parameters" in t)
    except (OSError, ValueError, KeyError, StopIteration):
        injected = None
    index = exc.cell_index
    return {"cell_index": index, "source_cell_index": index - 1 if injected is not None and index > injected else index,
            "execution_count": exc.exec_count, "source_head": "\n".join((exc.source or "").splitlines()[:5]),
            "ename": exc.ename, "evalue": exc.evalue}


def format_error(name: str, error: dict) -> str:
    """A failed notebook for a reader: name, cell, first lines of the cell, error."""
    lines = [f"FAILED notebook {name!r}"]
    if error.get("source_cell_index") is not None:
        lines.append(f"  cell {error['source_cell_index']} of {error.get('source') or name} "
                     f"(cell {error['cell_index']} of the executed notebook):")
        lines += [f"    | {src}" for src in (error.get("source_head") or "").splitlines()]
    return "\n".join(lines + [f"  {error.get('ename')}: {error.get('evalue')}"])


@contextlib.contextmanager
def _environment(**variables: str):
    """The kernel's environment (it inherits this process's), restored afterwards."""
    saved = dict(os.environ)
    os.environ.update(variables)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def run_one(card: Card, profile: str, params: dict, injected: dict, key: str, *, output_dir: Path,
            results_root: Path, kernel: str, force: bool = False, timeout: float | None = None,
            command_line: dict | None = None, progress: bool = False) -> Outcome:
    """Run (or reuse, when ``key`` is unchanged and its files exist) one notebook; write its ``run.json``.

    ``params`` are all the run's parameters, ``injected`` those papermill injects
    (:func:`gcc.reproduce.resolve_parameters`), ``command_line`` those of ``-p``; ``progress``
    shows papermill's cell progress bar.
    """
    import papermill

    output, folder = Path(output_dir) / f"{card.name}.ipynb", Path(results_root) / card.name
    previous = results.read_run_record(folder)
    if (not force and previous.get("status") == "ok" and previous.get("cache_key") == key and output.exists()
            and not _missing_outputs(previous, folder)):
        if not values_written(card.name, previous, output_dir):  # removed since: rewritten from the record
            write_values(card.name, previous.get("values") or {}, output_dir, previous.get("includes") or {})
        return Outcome(card.name, "cached", float(previous.get("seconds", 0.0)), record=previous)

    folder.mkdir(parents=True, exist_ok=True)
    output.parent.mkdir(parents=True, exist_ok=True)
    atomic.remove_partials(folder)  # what a killed run left, and a record that must not leak into this one
    atomic.remove_partials(output_dir, prefix=f"{card.name}.")
    (folder / results.RUN_RECORD).unlink(missing_ok=True)
    partial = atomic.partial_path(output)
    started = _dt.datetime.now(_dt.timezone.utc)
    t0 = time.perf_counter()
    error, status = None, "ok"
    run = json.dumps({"notebook": card.name, "profile": profile, "parameters": results.jsonable(params)})
    try:
        try:
            # Progress bars stay off the pages (the runner's own bar is passed disable=False).
            with _environment(**{results.RUN_ENV: run}, GCC_RESULTS_ROOT=str(results_root),
                              GCC_NOTEBOOKS_DIR=str(card.path.parent), TQDM_DISABLE="1",
                              MPLBACKEND="module://matplotlib_inline.backend_inline",
                              PYDEVD_DISABLE_FILE_VALIDATION="1"):
                papermill.execute_notebook(
                    read_source(card.path), str(partial), parameters=injected, kernel_name=kernel, language="python",
                    cwd=str(repo_root()), log_output=False, execution_timeout=timeout or card.timeout,
                    progress_bar={"disable": False, "desc": card.name, "leave": False} if progress else False,
                    # ipykernel's own log (a notice at every start) is noise on the runner's stderr.
                    extra_arguments=["--IPKernelApp.log_level=CRITICAL"])
        except Exception as exc:  # noqa: BLE001 - every failure of the notebook is reported
            status, error = "error", _error_details(exc, partial)
            error["source"] = relative(card.path)
        seconds = time.perf_counter() - t0
        ran = results.read_run_record(folder).get("parameters")  # the notebook's own record of this run
        finish_page(partial, kernel, profile, ran if ran is not None else results.jsonable(params),
                    results.read_run_record(folder).get("values"))  # {{ value.<key> }} in the page's prose
        if partial.exists():  # the page of a failed run shows its error
            os.replace(partial, output)
    finally:  # an interrupted run leaves neither a half-written page nor a record saying ok
        partial.unlink(missing_ok=True)

    own = results.read_run_record(folder)  # written by the notebook's RunContext, if it has one
    record = {**results.provenance(params, seed=params.get("seed")), **own}
    record.update(notebook=card.name, title=card.title, source=relative(card.path), executed_notebook=relative(output),
                  profile=profile, parameters=results.jsonable(params), injected_parameters=results.jsonable(injected),
                  command_line_parameters=results.jsonable(command_line or {}), kernel=kernel,
                  started_utc=started.isoformat(timespec="seconds"), seconds=round(seconds, 3), status=status,
                  cache_key=key, depends=list(card.depends), error=error)
    if status == "ok":  # a failed run keeps the values of the last good one on the pages
        write_values(card.name, record.get("values") or {}, output_dir, record.get("includes") or {})
    atomic.write_text(folder / results.RUN_RECORD, json.dumps(record, indent=2, sort_keys=True))  # last: the commit
    return Outcome(card.name, status, seconds, error=error, record=record)
