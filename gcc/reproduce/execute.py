"""Running one notebook: the Jupyter kernel, papermill, the outcome and the failing cell.

:func:`run_one` executes a source notebook (a MyST-markdown text notebook converted by jupytext,
or a JSON notebook) with papermill into ``<output dir>/<name>.ipynb`` (cwd = the repository root)
unless its cache key is unchanged, prepares its page (:func:`gcc.reproduce.pages.finish_page`)
and completes its ``run.json``: the notebook's own record (:class:`gcc.results.RunContext`:
parameters, tables, figures, values) plus the runner's entries (profile, injected parameters,
seconds, status, cache key), one provenance file per run. A failure is reported with the source
notebook's cell index, the first lines of that cell and the error (:func:`format_error`).

A run is committed in one order, so that a run killed at any point is redone by the next batch
and nothing half-written is read: papermill writes into a hidden temporary notebook beside the
executed one, which replaces it when the run ends (:mod:`gcc.atomic`); then the value files are
written; ``run.json`` with ``"status": "ok"`` comes last. The cache trusts only that record
(and only while every file it lists still exists, :func:`gcc.reproduce.cache.missing_outputs`).
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import sys
import time
import traceback as _traceback
from dataclasses import dataclass
from pathlib import Path

from gcc import atomic, results
from gcc.notebooks import read_source
from gcc.validation import invalid

from .cache import RUN_RECORD, missing_outputs, read_record
from .cards import NotebookCard
from .locations import relative, repo_root
from .pages import finish_page, values_written, write_values

__all__ = ["KERNEL_NAME", "Outcome", "check_kernel", "ensure_kernel", "format_error", "run_one"]

#: The Jupyter kernel the runner asks papermill for. ``make`` installs it into the
#: virtual environment; the runner installs it there itself when it is missing.
KERNEL_NAME = "gcc-companion"


def ensure_kernel(name: str = KERNEL_NAME) -> str:
    """Return a kernel name papermill can start, installing ``name`` into this prefix if needed.

    Falls back to ``"python3"`` (with a note on stderr) when the kernel cannot be installed.
    """
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    manager = KernelSpecManager()
    try:
        manager.get_kernel_spec(name)
        return name
    except NoSuchKernel:
        pass
    try:
        from ipykernel.kernelspec import install

        install(kernel_name=name, display_name="Python (gcc companion)", prefix=sys.prefix)
        KernelSpecManager().get_kernel_spec(name)
        return name
    except Exception as exc:  # noqa: BLE001 - any failure falls back to the generic kernel
        print(f"note: could not install kernel {name!r} ({exc}); using 'python3'", file=sys.stderr)
        return "python3"


def check_kernel(name, param: str = "kernel", owner: str = "run_batch") -> str:
    """``name`` if it is an installed Jupyter kernel, else the contract's ValueError listing them."""
    from jupyter_client.kernelspec import KernelSpecManager

    names = sorted(KernelSpecManager().find_kernel_specs())
    if not isinstance(name, str) or name not in names:
        raise invalid(param, owner, f"an installed Jupyter kernel ({', '.join(names) or 'none installed'})", name)
    return name


@dataclass
class Outcome:
    """What happened to one notebook in this batch.

    Attributes
    ----------
    name : str
    status : str
        ``"ok"``, ``"cached"``, ``"error"`` or ``"skipped"``.
    seconds : float
        Run time (for ``cached``: that of the run it reuses).
    error : dict or None
        For ``error``: cell indices, source head, exception name and value.
    record : dict or None
        The ``run.json`` written (or reused).
    """

    name: str
    status: str
    seconds: float = 0.0
    error: dict | None = None
    record: dict | None = None


def _error_details(exc: BaseException, output: Path, injected: bool) -> dict:
    from papermill.exceptions import PapermillExecutionError

    if isinstance(exc, PapermillExecutionError):
        index = exc.cell_index
        source = exc.source or ""
        # papermill inserts the injected-parameters cell; report the source notebook's index too.
        source_index = index - 1 if injected and index is not None else index
        try:
            nb = json.loads(output.read_text())
            cells = nb["cells"]
            inj = next((i for i, c in enumerate(cells)
                        if "injected-parameters" in c.get("metadata", {}).get("tags", [])), None)
            source_index = index - 1 if inj is not None and index > inj else index
        except Exception:  # noqa: BLE001 - best effort only
            pass
        return {
            "cell_index": index,
            "source_cell_index": source_index,
            "execution_count": exc.exec_count,
            "source_head": "\n".join(source.splitlines()[:5]),
            "ename": exc.ename,
            "evalue": exc.evalue,
        }
    return {
        "cell_index": None,
        "source_cell_index": None,
        "execution_count": None,
        "source_head": "",
        "ename": type(exc).__name__,
        "evalue": str(exc),
        "traceback": "".join(_traceback.format_exception(type(exc), exc, exc.__traceback__))[-4000:],
    }


def format_error(name: str, error: dict) -> str:
    """Human-readable report of a failed notebook: name, cell, source head, error."""
    lines = [f"FAILED notebook {name!r}"]
    if error.get("source_cell_index") is not None:
        lines.append(
            f"  cell {error['source_cell_index']} of {error.get('source') or f'notebooks/{name}'} "
            f"(cell {error['cell_index']} of the executed notebook, execution count {error['execution_count']}):"
        )
        for src in (error.get("source_head") or "").splitlines():
            lines.append(f"    | {src}")
    lines.append(f"  {error.get('ename')}: {error.get('evalue')}")
    return "\n".join(lines)


def _execute(card: NotebookCard, params: dict, output: Path, kernel: str, cwd: Path,
             timeout: float | None) -> None:
    import papermill

    output.parent.mkdir(parents=True, exist_ok=True)
    papermill.execute_notebook(
        read_source(card.path),
        str(output),
        parameters=params,
        kernel_name=kernel,
        language="python",
        cwd=str(cwd),
        progress_bar=False,
        log_output=False,
        execution_timeout=timeout,
        # The kernel process shares the runner's stderr: its own log (ipykernel's "running over TCP
        # without encryption" notice on every start, "KeyboardInterrupt caught" at some shutdowns) is
        # noise there. CRITICAL keeps it quiet; a kernel that dies is still reported by nbclient, and
        # what the notebook's code prints or warns goes to the notebook, not to this log.
        extra_arguments=["--IPKernelApp.log_level=CRITICAL"],
    )


def run_one(card: NotebookCard, profile: str, params: dict, key: str, *, output_dir: Path,
            results_root: Path, kernel: str, force: bool = False, timeout: float | None = None) -> Outcome:
    """Run (or reuse) one notebook and write its ``run.json``.

    Parameters
    ----------
    card : NotebookCard
    profile : str
    params : dict
        Injected by papermill (:func:`gcc.reproduce.resolve_parameters`).
    key : str
        Its cache key (:func:`gcc.reproduce.cache_key`); an unchanged key with a successful
        previous run and an existing executed notebook returns ``cached`` without running.
    output_dir, results_root : path
        Folder of the executed notebook; root of the result folders.
    kernel : str
    force : bool
        Run even when cached.
    timeout : float, optional
        Per-cell timeout in seconds (default: the card's).

    Returns
    -------
    Outcome
    """
    output = Path(output_dir) / f"{card.name}.ipynb"
    folder = Path(results_root) / card.name
    previous = read_record(results_root, card.name)
    if (not force and previous and previous.get("status") == "ok" and previous.get("cache_key") == key
            and output.exists() and not missing_outputs(previous, folder)):
        if not values_written(card.name, previous, output_dir):  # removed since: rewritten from the record
            write_values(card.name, previous.get("values") or {}, output_dir, previous.get("includes") or {})
        return Outcome(card.name, "cached", float(previous.get("seconds", 0.0)), record=previous)

    folder.mkdir(parents=True, exist_ok=True)
    # What a killed run left: its temporary files, and a record that must not leak into this one.
    atomic.remove_partials(folder)
    atomic.remove_partials(output_dir, prefix=f"{card.name}.")
    (folder / RUN_RECORD).unlink(missing_ok=True)
    partial = atomic.partial_path(output)
    started = _dt.datetime.now(_dt.timezone.utc)
    t0 = time.perf_counter()
    error = None
    try:
        try:
            _execute(card, params, partial, kernel, repo_root(), timeout if timeout is not None else card.timeout)
            status = "ok"
        except BaseException as exc:  # noqa: BLE001 - every failure of the notebook is reported
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            status = "error"
            error = _error_details(exc, partial, injected=bool(params))
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
    record = results.provenance(params, seed=params.get("seed", card.profiles.get(profile, {}).get("seed")))
    record.update(own)
    record.update({
        "notebook": card.name,
        "title": card.title,
        "source": relative(card.path),
        "executed_notebook": relative(output),
        "profile": profile,
        "parameters": own.get("parameters", results.jsonable(params)),
        "injected_parameters": results.jsonable(params),
        "kernel": kernel,
        "started_utc": started.isoformat(timespec="seconds"),
        "seconds": round(seconds, 3),
        "status": status,
        "cache_key": key,
        "depends": card.depends,
        "error": error,
    })
    if status == "ok":  # a failed run keeps the values of the last good one on the pages
        write_values(card.name, record.get("values") or {}, output_dir, record.get("includes") or {})
    # Last: a record saying ok is the commit of everything above.
    atomic.write_text(folder / RUN_RECORD, json.dumps(record, indent=2, sort_keys=True))
    return Outcome(card.name, status, seconds, error=error, record=record)
