"""The batch and the command line ``python -m gcc.reproduce``: every notebook run with papermill, or kept
when its cache key is unchanged; ``run.json`` saying ``ok`` is written last, so a killed batch reruns it."""
from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

from gcc import atomic, notebooks, results
from gcc.notebooks import read_source, shown_path
from gcc.provenance import repo_root
from gcc.validation import InstanceOf, Interval, NoneOr, Options, invalid, validate_params

from .book import build_book, write_status
from .cards import PROFILES, Card, discover, order_notebooks, resolve_parameters
from .pages import finish_page, write_values

__all__ = ["KERNEL_NAME", "Outcome", "ensure_kernel", "cache_key", "run_one", "parse_value", "run_batch", "main"]

#: The Jupyter kernel the runner asks papermill for (``make install`` installs it).
KERNEL_NAME = "gcc-companion"
# How the messages name the command.
_COMMAND = "python -m gcc.reproduce"


def ensure_kernel(name: str = KERNEL_NAME) -> str:
    """``name``, installed into this prefix if missing."""
    from jupyter_client.kernelspec import KernelSpecManager

    from ipykernel.kernelspec import install

    if name not in KernelSpecManager().find_kernel_specs():
        install(kernel_name=name, display_name="Python (gcc companion)", prefix=sys.prefix)
    return name


@dataclass
class Outcome:
    """What happened to one notebook: ``status`` ``ok``, ``cached``, ``error`` or ``skipped``."""

    name: str
    status: str
    seconds: float = 0.0
    error: dict | None = None


def cache_key(card: Card, injected: dict, profile: str, upstream: dict | None = None,
              fingerprint: str | None = None) -> str:
    """sha256 over the cells (no outputs), the injected parameters, the library, the profile and the upstream keys."""
    cells = [(c.cell_type, c.source, sorted(c.metadata.get("tags", []))) for c in read_source(card.path).cells]
    payload = {"cells": cells, "parameters": results.jsonable(injected), "profile": profile,
               "library": fingerprint or results.library_fingerprint(),
               "upstream": dict(sorted((upstream or {}).items()))}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def _error_details(exc: BaseException, card: Card) -> dict:
    """The failing cell of a run: its index in the source notebook and the executed one, its head, the error."""
    from papermill.exceptions import PapermillExecutionError

    if not isinstance(exc, PapermillExecutionError):
        return {"ename": type(exc).__name__, "evalue": str(exc), "source": shown_path(card.path)}
    cells = [c.source for c in read_source(card.path).cells]  # the executed one has the injected cell too
    return {"cell_index": exc.cell_index, "source_cell_index": cells.index(exc.source) if exc.source in cells else None,
            "execution_count": exc.exec_count, "source_head": "\n".join((exc.source or "").splitlines()[:5]),
            "ename": exc.ename, "evalue": exc.evalue, "source": shown_path(card.path)}


def _format_error(name: str, error: dict) -> str:
    """A failed notebook for a reader: name, cell, first lines of the cell, error."""
    lines = [f"FAILED notebook {name!r}"]
    if error.get("source_cell_index") is not None:
        lines.append(f"  cell {error['source_cell_index']} of {error.get('source') or name} "
                     f"(cell {error['cell_index']} of the executed notebook):")
        lines += [f"    | {src}" for src in (error.get("source_head") or "").splitlines()]
    return "\n".join(lines + [f"  {error.get('ename')}: {error.get('evalue')}"])


def run_one(card: Card, profile: str, params: dict, injected: dict, key: str, *, output_dir: Path,
            results_root: Path, kernel: str, force: bool = False, timeout: float | None = None,
            command_line: dict | None = None, progress: bool = False) -> Outcome:
    """Run (or keep, when ``key`` is unchanged and its files exist) one notebook; write its ``run.json``.
    The kernel learns its notebook and parameters from ``$GCC_RUN`` (:class:`gcc.results.RunContext`)."""
    import papermill

    output, folder = Path(output_dir) / f"{card.name}.ipynb", Path(results_root) / card.name
    previous = results.read_run_record(folder)
    if (not force and previous.get("status") == "ok" and previous.get("cache_key") == key and output.exists()
            and all((folder / f).is_file() for f in results.saved_files(previous))):
        write_values(card.name, previous, output_dir)  # from the record, should they have been removed since
        return Outcome(card.name, "cached", float(previous.get("seconds", 0.0)))

    folder.mkdir(parents=True, exist_ok=True)
    atomic.remove_partials(folder)  # what a killed run left, and a record that must not leak into this one
    atomic.remove_partials(output_dir, prefix=f"{card.name}.")
    (folder / results.RUN_RECORD).unlink(missing_ok=True)
    partial = atomic.partial_path(output)
    started = _dt.datetime.now(_dt.timezone.utc)
    t0 = time.perf_counter()
    error, status = None, "ok"
    run = json.dumps({"notebook": card.name, "profile": profile, "parameters": results.jsonable(params)})
    try:
        try:  # progress bars stay off the pages (the runner's own bar is passed disable=False)
            with mock.patch.dict(os.environ, {results.RUN_ENV: run, "GCC_RESULTS_ROOT": str(results_root),
                                              "GCC_NOTEBOOKS_DIR": str(card.path.parent), "TQDM_DISABLE": "1",
                                              "MPLBACKEND": "module://matplotlib_inline.backend_inline",
                                              "PYDEVD_DISABLE_FILE_VALIDATION": "1"}):
                papermill.execute_notebook(
                    read_source(card.path), str(partial), parameters=injected, kernel_name=kernel, language="python",
                    cwd=str(repo_root()), log_output=False, execution_timeout=timeout,
                    progress_bar={"disable": False, "desc": card.name, "leave": False} if progress else False,
                    # ipykernel's own log (a notice at every start) is noise on the runner's stderr.
                    extra_arguments=["--IPKernelApp.log_level=CRITICAL"])
        except Exception as exc:  # noqa: BLE001 - every failure of the notebook is reported
            status, error = "error", _error_details(exc, card)
        seconds = time.perf_counter() - t0
        own = results.read_run_record(folder)  # written by the notebook's RunContext, if it has one
        finish_page(partial, kernel, profile, own.get("parameters", results.jsonable(params)), own.get("values"))
        if partial.exists():  # the page of a failed run shows its error
            os.replace(partial, output)
    finally:  # an interrupted run leaves neither a half-written page nor a record saying ok
        partial.unlink(missing_ok=True)

    record = {**results.provenance(params, seed=params.get("seed")), **own}
    record.update(notebook=card.name, title=card.title, source=shown_path(card.path),
                  executed_notebook=shown_path(output), profile=profile, parameters=results.jsonable(params),
                  injected_parameters=results.jsonable(injected),
                  command_line_parameters=results.jsonable(command_line or {}), kernel=kernel,
                  started_utc=started.isoformat(timespec="seconds"), seconds=round(seconds, 3), status=status,
                  cache_key=key, depends=list(card.depends), error=error)
    if status == "ok":  # a failed run keeps the values of the last good one on the pages
        write_values(card.name, record, output_dir)
    atomic.write_text(folder / results.RUN_RECORD, json.dumps(record, indent=2, sort_keys=True))  # last: the commit
    return Outcome(card.name, status, seconds, error=error)


def parse_value(text: str):
    """A ``-p`` value as papermill reads it (bool, None, int, float, str), or a YAML list or mapping."""
    import yaml
    from papermill.cli import _resolve_type

    return yaml.safe_load(text) if text.lstrip()[:1] in ("[", "{") else _resolve_type(text)


@validate_params({"profile": Options(PROFILES), "timeout": NoneOr(Interval(float, 0, closed="neither")),
                  "overrides": NoneOr(InstanceOf(dict, "a mapping")),
                  "notebooks_dir": NoneOr(InstanceOf((str, os.PathLike), "a path"))})
def run_batch(profile: str = "ci", only: list[str] | None = None, *, overrides: dict | None = None,
              force: bool = False, keep_going: bool = False, notebooks_dir: Path | None = None,
              output_dir: Path | None = None, results_root: Path | None = None,
              timeout: float | None = None) -> list[Outcome]:
    """Run the notebooks ``only`` names (and what they depend on; default all) in ``profile``, with the
    ``overrides`` (``-p``) on the notebooks ``only`` names; every input is checked before the first run.
    Returns the outcomes in run order."""
    cards = discover(notebooks_dir or notebooks.notebooks_dir())
    plan = order_notebooks(cards, only)
    asked = {c.name: overrides or {} for c in plan if not only or c.name in only}
    resolved = {c.name: resolve_parameters(c, profile, asked.get(c.name)) for c in plan}
    output_dir = output_dir or os.environ.get("GCC_GENERATED_DIR") or repo_root() / "book" / "generated"
    output_dir = atomic.writable_folder(output_dir, "output_dir", "run_batch")
    results_root = atomic.writable_folder(results_root or results.results_root(), "results_root", "run_batch")
    kernel = ensure_kernel()
    progress = sys.stdout.isatty() and sys.stderr.isatty()
    fingerprint = results.library_fingerprint()
    print(f"gcc.reproduce: profile {profile!r}, {len(plan)} notebook(s), kernel {kernel!r}, results in {results_root}",
          flush=True)
    keys: dict[str, str] = {}
    outcomes: dict[str, Outcome] = {}
    width, stop = max([len(c.name) for c in plan] + [8]), False
    for i, card in enumerate(plan, 1):
        if stop or any(outcomes[d].status not in ("ok", "cached") for d in card.depends):
            outcome = Outcome(card.name, "skipped")
        else:
            params, injected = resolved[card.name]
            upstream = {d: keys.get(d, "") for d in card.depends}
            keys[card.name] = cache_key(card, injected, profile, upstream, fingerprint)
            outcome = run_one(card, profile, params, injected, keys[card.name], output_dir=output_dir,
                              results_root=results_root, kernel=kernel, force=force, timeout=timeout,
                              command_line=asked.get(card.name), progress=progress)
            stop = outcome.status == "error" and not keep_going
        outcomes[card.name] = outcome
        head = f"[{i:>{len(str(len(plan)))}}/{len(plan)}] {card.name:<{width}}"
        print(f"{head}  cached  (ran {outcome.seconds:.1f} s)" if outcome.status == "cached"
              else f"{head}  {outcome.status:<7} {outcome.seconds:8.1f} s", flush=True)
        if outcome.error:
            print(_format_error(card.name, outcome.error), flush=True)
    ordered = [outcomes[c.name] for c in plan]
    write_status(cards, profile, output_dir / "status.md", results_root, ordered)
    return ordered


def _parser() -> argparse.ArgumentParser:
    """The options of ``python -m gcc.reproduce``."""
    p = argparse.ArgumentParser(prog=_COMMAND, description="Run the companion's notebooks with papermill and "
                                "(optionally) build the book.")
    p.add_argument("--profile", default="default", choices=PROFILES, help="parameter profile (default: %(default)s)")
    p.add_argument("--only", nargs="+", metavar="NAME",
                   help="run only these notebooks, by space or comma (and what they depend on)")
    p.add_argument("-p", "--parameters", nargs=2, action="append", metavar=("NAME", "VALUE"), default=[],
                   help="override a parameter of the notebooks --only names (papermill's spelling; a list in YAML)")
    p.add_argument("--force", action="store_true", help="rerun even when the cache key is unchanged")
    p.add_argument("--list", action="store_true", help="list every notebook's effective parameters, and exit")
    p.add_argument("--keep-going", action="store_true", help="after an error, still run what does not depend on it")
    p.add_argument("--notebooks-dir", type=Path, help="source notebooks (default: $GCC_NOTEBOOKS_DIR or notebooks/)")
    p.add_argument("--output-dir", type=Path,
                   help="executed notebooks (default: $GCC_GENERATED_DIR or book/generated/)")
    p.add_argument("--results-root", type=Path, help="result folders (default: $GCC_RESULTS_ROOT or _build/results/)")
    p.add_argument("--timeout", type=float, help="per-cell timeout in seconds")
    p.add_argument("--build-book", action="store_true", help="build the static site after the batch")
    p.add_argument("--no-run", action="store_true", help="do not run notebooks (use with --build-book)")
    p.add_argument("--all-pages", action="store_true", help="with --build-book: rebuild every page")
    p.add_argument("--book-output", type=Path, help="with --build-book: folder that receives _build/html")
    return p


def _list(args, overrides: dict) -> None:
    """Print every selected notebook: order, name, last status, title and its effective parameters."""
    for card in order_notebooks(discover(args.notebooks_dir or notebooks.notebooks_dir()), args.only):
        params, _ = resolve_parameters(card, args.profile, overrides if not args.only or card.name in args.only else {})
        root = args.results_root or results.results_root()
        status = results.read_run_record(root / card.name).get("status", "never run")
        deps = f" depends={list(card.depends)}" if card.depends else ""
        print(f"{card.order:>6g}  {card.name:<24} {status:<9} {card.title}{deps}\n"
              f"        {args.profile}: {json.dumps(params, default=str)}")


def _run(args) -> int:
    """The command line after parsing: checks, the batch, the book; the exit status."""
    overrides = {name: parse_value(value) for name, value in args.parameters}
    args.only = [name for names in args.only for name in names.split(",") if name] if args.only else None
    if args.list:
        _list(args, overrides)
        return 0
    for option, value in (("--no-run", args.no_run), ("--all-pages", args.all_pages),
                          ("--book-output", args.book_output)):
        if value and not args.build_book:
            raise invalid(option, _COMMAND, "given with --build-book", option, "it is an option of the book build")
    if args.book_output is not None:
        atomic.writable_folder(args.book_output, "--book-output", _COMMAND)
    rc = 0
    if not args.no_run:
        outcomes = run_batch(args.profile, args.only, overrides=overrides, force=args.force,
                             keep_going=args.keep_going, notebooks_dir=args.notebooks_dir, output_dir=args.output_dir,
                             results_root=args.results_root, timeout=args.timeout)
        counts = {s: sum(o.status == s for o in outcomes) for s in ("ok", "cached", "error", "skipped")}
        print("gcc.reproduce: " + ", ".join(f"{v} {k}" for k, v in counts.items()), flush=True)
        failed = [o for o in outcomes if o.status == "error"]
        if failed:
            print("gcc.reproduce: FAILED (see above): " + ", ".join(o.name for o in failed), file=sys.stderr)
            rc = 1
    if args.build_book:
        rc = build_book(all_pages=args.all_pages, output=args.book_output, results_root=args.results_root,
                        generated_dir=args.output_dir) or rc
    return rc


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m gcc.reproduce``: 0, 1 (a notebook or the book failed), 2 (invalid input), 130."""
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except ValueError as exc:  # the folders and the timeout: the parameters of run_batch of the same names
        print(f"gcc.reproduce: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # e.g. a read-only folder inside the results root: name the folder, no traceback
        what = f"{exc.filename} in the folder {Path(exc.filename).parent}" if exc.filename else "a file"
        print(f"gcc.reproduce: error: cannot write {what} ({exc.strerror or exc}); make the folder writable "
              "or choose others with --results-root / --output-dir", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gcc.reproduce: interrupted; the notebook that was running is not recorded as ok and runs again "
              "next time", file=sys.stderr, flush=True)
        return 130
