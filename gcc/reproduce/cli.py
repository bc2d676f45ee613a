"""The batch and the command line ``python -m gcc.reproduce``.

Everything that can be checked before a notebook runs is checked first (folders, options, the
kernel, every run card of the plan, every ``-p``), so a mistake fails in seconds: exit status 2
with a message naming the option, the file and the entry. Then the notebooks run one after
another in dependency order, one line each (and papermill's cell progress bar on a terminal); a
notebook whose dependency failed is ``skipped``, and without ``--keep-going`` the first error
skips the rest (exit 1). Ctrl-C or SIGTERM exits 130: the notebook that was running is not
recorded as ok, so the next batch redoes it and only it.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import threading
from pathlib import Path

from gcc import notebooks, results
from gcc.provenance import repo_root
from gcc.validation import invalid

from .book import build_book, write_parameters_page, write_status
from .cards import PROFILES, check_notebooks_dir, check_output_dir, discover, order_notebooks, resolve_parameters
from .execute import KERNEL_NAME, Outcome, cache_key, check_kernel, ensure_kernel, format_error, run_one

__all__ = ["COMMAND", "parse_value", "run_batch", "main"]

#: How the messages name the command.
COMMAND = "python -m gcc.reproduce"


def parse_value(text: str):
    """A ``-p`` value as papermill reads it (True, False, None, int, float, else str), and a list or
    mapping written in YAML (``[16, 32, 4096]``), which papermill's ``-y`` would take."""
    import yaml
    from papermill.cli import _resolve_type

    return yaml.safe_load(text) if text.lstrip()[:1] in ("[", "{") else _resolve_type(text)


def _folders(notebooks_dir, output_dir, results_root, owner: str,
             names=("notebooks_dir", "output_dir", "results_root")):
    return (check_notebooks_dir(notebooks_dir or notebooks.notebooks_dir(), names[0], owner),
            check_output_dir(output_dir or os.environ.get("GCC_GENERATED_DIR") or repo_root() / "book" / "generated",
                             names[1], owner),
            check_output_dir(results_root or results.results_root(), names[2], owner))


def run_batch(profile: str = "ci", only: list[str] | None = None, *, overrides: dict | None = None,
              force: bool = False, keep_going: bool = False, notebooks_dir: Path | None = None,
              output_dir: Path | None = None, results_root: Path | None = None, kernel: str | None = None,
              timeout: float | None = None, stream=None) -> list[Outcome]:
    """Run the selected notebooks (``only`` and what they depend on; default all) in ``profile``.

    ``overrides`` (``-p``) apply to the notebooks ``only`` names (default: all), each of which must
    declare them. Folders default to ``$GCC_NOTEBOOKS_DIR``, ``$GCC_GENERATED_DIR`` and
    ``$GCC_RESULTS_ROOT`` (else ``notebooks/``, ``book/generated/``, ``_build/results/``); the kernel
    to :data:`KERNEL_NAME`, installed if missing; ``timeout`` (seconds per cell) to each card's.
    Returns the outcomes in run order; every argument, folder, card and parameter is checked
    before the first notebook runs (the ``ValueError`` names it).
    """
    stream = stream or sys.stdout
    if profile not in PROFILES:
        raise invalid("profile", "run_batch", f"one of {', '.join(map(repr, PROFILES))}", profile)
    if timeout is not None and not (isinstance(timeout, (int, float)) and 0 < timeout < math.inf):
        raise invalid("timeout", "run_batch", "a finite real number > 0 or None", timeout)
    notebooks_dir, output_dir, results_root = _folders(notebooks_dir, output_dir, results_root, "run_batch")
    if kernel is not None:
        check_kernel(kernel, "kernel", "run_batch")
    cards = discover(notebooks_dir)
    plan = order_notebooks(cards, only)
    asked = {c.name: overrides or {} for c in plan if not only or c.name in only}
    resolved = {c.name: resolve_parameters(c, profile, asked.get(c.name)) for c in plan}
    kernel = kernel or ensure_kernel()
    progress = stream.isatty() and sys.stderr.isatty()
    fingerprint = results.library_fingerprint()
    print(f"gcc.reproduce: profile {profile!r}, {len(plan)} notebook(s), kernel {kernel!r}, results in {results_root}",
          file=stream, flush=True)
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
              else f"{head}  {outcome.status:<7} {outcome.seconds:8.1f} s", file=stream, flush=True)
        if outcome.error:
            print(format_error(card.name, outcome.error), file=stream, flush=True)
    ordered = [outcomes[c.name] for c in plan]
    write_status(cards, profile, output_dir / "status.md", results_root, ordered)
    write_parameters_page(cards, output_dir / "parameters.md")
    return ordered


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=COMMAND, description="Run the companion's notebooks with papermill and "
                                "(optionally) build the book.")
    p.add_argument("--profile", default="default", choices=PROFILES, help="parameter profile (default: %(default)s)")
    p.add_argument("--only", nargs="+", metavar="NAME", help="run only these notebooks (and what they depend on)")
    p.add_argument("-p", "--parameters", nargs=2, action="append", metavar=("NAME", "VALUE"), default=[],
                   help="override a parameter of the notebooks --only names (papermill's spelling; a list in YAML)")
    p.add_argument("--force", action="store_true", help="rerun even when the cache key is unchanged")
    p.add_argument("--list", action="store_true", help="list every notebook's effective parameters, and exit")
    p.add_argument("--keep-going", action="store_true", help="after an error, still run what does not depend on it")
    p.add_argument("--notebooks-dir", type=Path, help="source notebooks (default: $GCC_NOTEBOOKS_DIR or notebooks/)")
    p.add_argument("--output-dir", type=Path,
                   help="executed notebooks (default: $GCC_GENERATED_DIR or book/generated/)")
    p.add_argument("--results-root", type=Path, help="result folders (default: $GCC_RESULTS_ROOT or _build/results/)")
    p.add_argument("--kernel", help=f"Jupyter kernel (default: {KERNEL_NAME}, installed if missing)")
    p.add_argument("--timeout", type=float, help="per-cell timeout in seconds")
    p.add_argument("--build-book", action="store_true", help="build the static site after the batch")
    p.add_argument("--no-run", action="store_true", help="do not run notebooks (use with --build-book)")
    p.add_argument("--all-pages", action="store_true", help="with --build-book: rebuild every page")
    p.add_argument("--book-output", type=Path, help="with --build-book: folder that receives _build/html")
    return p


def _list(args, overrides: dict) -> None:
    cards = discover(args.notebooks_dir)
    for card in order_notebooks(cards, args.only):
        params, _ = resolve_parameters(card, args.profile, overrides if not args.only or card.name in args.only else {})
        status = results.read_run_record(args.results_root / card.name).get("status", "never run")
        deps = f" depends={list(card.depends)}" if card.depends else ""
        print(f"{card.order:>6g}  {card.name:<24} {status:<9} {card.title}{deps}\n"
              f"        {args.profile}: {json.dumps(params, default=str)}")


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m gcc.reproduce``: 0, 1 (a notebook or the book failed), 2 (invalid input), 130."""
    args = _parser().parse_args(argv)
    previous = None
    if threading.current_thread() is threading.main_thread():  # SIGTERM unwinds like Ctrl-C
        previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        def flag(option: str, given, env: str) -> str:
            return option if given is not None or env not in os.environ else f"{option} (${env})"

        args.notebooks_dir, output_dir, args.results_root = _folders(
            args.notebooks_dir, args.output_dir, args.results_root, COMMAND,
            (flag("--notebooks-dir", args.notebooks_dir, "GCC_NOTEBOOKS_DIR"),
             flag("--output-dir", args.output_dir, "GCC_GENERATED_DIR"),
             flag("--results-root", args.results_root, "GCC_RESULTS_ROOT")))
        overrides = {name: parse_value(value) for name, value in args.parameters}
        if args.list:
            _list(args, overrides)
            return 0
        if args.timeout is not None and not 0 < args.timeout < math.inf:
            raise invalid("--timeout", COMMAND, "a finite real number > 0", args.timeout)
        if args.kernel is not None:
            check_kernel(args.kernel, "--kernel", COMMAND)
        for option, value in (("--no-run", args.no_run), ("--all-pages", args.all_pages),
                              ("--book-output", args.book_output)):
            if value and not args.build_book:
                raise invalid(option, COMMAND, "given with --build-book", option, "it is an option of the book build")
        if args.book_output is not None:
            check_output_dir(args.book_output, "--book-output", COMMAND)
        rc = 0
        if not args.no_run:
            outcomes = run_batch(args.profile, args.only, overrides=overrides, force=args.force,
                                 keep_going=args.keep_going, notebooks_dir=args.notebooks_dir, output_dir=output_dir,
                                 results_root=args.results_root, kernel=args.kernel, timeout=args.timeout)
            counts = {s: sum(o.status == s for o in outcomes) for s in ("ok", "cached", "error", "skipped")}
            print("gcc.reproduce: " + ", ".join(f"{v} {k}" for k, v in counts.items()), flush=True)
            if counts["error"]:
                print("gcc.reproduce: FAILED: " + ", ".join(o.name for o in outcomes if o.status == "error")
                      + "".join(f"\n{format_error(o.name, o.error or {})}" for o in outcomes if o.status == "error"),
                      file=sys.stderr)
                rc = 1
        if args.build_book:
            rc = build_book(all_pages=args.all_pages, output=args.book_output, results_root=args.results_root,
                            generated_dir=output_dir if args.output_dir else None) or rc
        return rc
    except ValueError as exc:
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
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _interrupt(signum, frame):
    raise KeyboardInterrupt
