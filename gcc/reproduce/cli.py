"""The command line ``python -m gcc.reproduce``: argument parsing, ``--list``, exit status.

Exit status: 0 when every notebook ran (or was cached) and the book (if asked for) built;
1 after a notebook error or a failed book build; 2 for invalid arguments, folders, run cards
or notebooks (checked before anything runs; the message names the option, the file and the
entry); 130 when interrupted (Ctrl-C or SIGTERM: the notebook that was running is not
recorded as ok, so the next batch redoes it and only it).
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from numbers import Integral, Real
from pathlib import Path

from gcc.validation import Interval, invalid, validate

from .batch import run_batch
from .book import build_book
from .cache import read_record
from .cards import PROFILES, check_notebooks_dir, discover, order_notebooks, resolve_parameters
from .execute import KERNEL_NAME, check_kernel, format_error
from .locations import check_output_dir, default_notebooks_dir, default_output_dir, default_results_root

__all__ = ["main"]

#: How the messages name the command.
COMMAND = "python -m gcc.reproduce"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m gcc.reproduce",
        description="Run the companion's notebooks with papermill and (optionally) build the book.",
    )
    p.add_argument("--profile", default="default", choices=PROFILES,
                   help="parameter profile of the run cards (default: %(default)s)")
    p.add_argument("--only", nargs="+", metavar="NAME", help="run only these notebooks (and what they depend on)")
    p.add_argument("--force", action="store_true", help="rerun even when the cache key is unchanged")
    p.add_argument("--list", action="store_true", help="list the notebooks, their order and parameters, and exit")
    p.add_argument("--jobs", type=int, default=1, help="notebooks run at the same time (default: 1)")
    p.add_argument("--keep-going", action="store_true",
                   help="after a notebook error, still run the notebooks that do not depend on it")
    p.add_argument("--notebooks-dir", type=Path, default=None,
                   help="folder of source notebooks (default: $GCC_NOTEBOOKS_DIR or notebooks/)")
    p.add_argument("--output-dir", type=Path, default=None,
                   help="folder of executed notebooks (default: $GCC_GENERATED_DIR or book/generated/)")
    p.add_argument("--results-root", type=Path, default=None,
                   help="root of the result folders (default: $GCC_RESULTS_ROOT or _build/results/)")
    p.add_argument("--kernel", default=None, help=f"Jupyter kernel (default: {KERNEL_NAME}, installed if missing)")
    p.add_argument("--timeout", type=float, default=None, help="per-cell timeout in seconds")
    p.add_argument("--build-book", action="store_true", help="build the static site after the batch")
    p.add_argument("--no-run", action="store_true", help="do not run notebooks (use with --build-book)")
    p.add_argument("--all-pages", action="store_true", help="with --build-book: rebuild every page")
    p.add_argument("--book-output", type=Path, default=None,
                   help="with --build-book: folder that receives _build/html (default: the repository)")
    return p


def _check(args: argparse.Namespace) -> None:
    """Check the options before anything runs (messages name the option as typed)."""
    def option(flag: str, given, env: str) -> str:
        return flag if given is not None or env not in os.environ else f"{flag} (${env})"

    args.notebooks_dir = check_notebooks_dir(
        args.notebooks_dir or default_notebooks_dir(),
        option("--notebooks-dir", args.notebooks_dir, "GCC_NOTEBOOKS_DIR"), COMMAND)
    if args.list:
        return
    for flag, attr, env, default in (("--output-dir", "output_dir", "GCC_GENERATED_DIR", default_output_dir),
                                     ("--results-root", "results_root", "GCC_RESULTS_ROOT", default_results_root)):
        given = getattr(args, attr)
        check_output_dir(given or default(), option(flag, given, env), COMMAND)
    if args.book_output is not None:
        check_output_dir(args.book_output, "--book-output", COMMAND)
    validate(args.jobs, Interval(Integral, 1, None), "--jobs", COMMAND)
    if args.timeout is not None:
        validate(args.timeout, Interval(Real, 0, None, closed="neither"), "--timeout", COMMAND)
    if args.kernel is not None:
        check_kernel(args.kernel, "--kernel", COMMAND)
    if args.no_run and not args.build_book:
        raise invalid("--no-run", COMMAND, "given with --build-book", "--no-run", "alone it does nothing")
    for flag, value in (("--all-pages", args.all_pages), ("--book-output", args.book_output)):
        if value and not args.build_book:
            raise invalid(flag, COMMAND, "given with --build-book", flag, "it is an option of the book build")


def _list(args: argparse.Namespace) -> None:
    cards = discover(args.notebooks_dir)
    plan = order_notebooks(cards, args.only)
    root = Path(args.results_root) if args.results_root else default_results_root()
    for card in plan:
        params = resolve_parameters(card, args.profile)
        record = read_record(root, card.name) or {}
        deps = f" depends={card.depends}" if card.depends else ""
        print(f"{card.order:>6g}  {card.name:<24} {record.get('status', 'never run'):<9} "
              f"{card.title}{deps}\n        {args.profile}: {json.dumps(params, default=str)}")


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m gcc.reproduce``; returns the exit status.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default: ``sys.argv[1:]``); ``--help`` lists them.

    Returns
    -------
    int
        0, 1 (a notebook or the book build failed), 2 (invalid arguments, folders, run cards or
        notebooks) or 130 (interrupted).
    """
    args = _parser().parse_args(argv)
    # SIGTERM (a killed job, a timeout) unwinds like Ctrl-C: papermill shuts the kernel down and
    # the interrupted notebook's temporary files are removed.
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        _check(args)
        if args.list:
            _list(args)
            return 0
        rc = 0
        if not args.no_run:
            outcomes = run_batch(
                args.profile, args.only, force=args.force, jobs=args.jobs, keep_going=args.keep_going,
                notebooks_dir=args.notebooks_dir, output_dir=args.output_dir,
                results_root=args.results_root, kernel=args.kernel, timeout=args.timeout,
            )
            failed = [o for o in outcomes if o.status == "error"]
            skipped = [o for o in outcomes if o.status == "skipped"]
            counts = {s: sum(o.status == s for o in outcomes) for s in ("ok", "cached", "error", "skipped")}
            print("gcc.reproduce: " + ", ".join(f"{v} {k}" for k, v in counts.items()), flush=True)
            if failed:
                print("gcc.reproduce: FAILED: " + ", ".join(o.name for o in failed), file=sys.stderr)
                for o in failed:
                    print(format_error(o.name, o.error or {}), file=sys.stderr)
                if skipped:
                    print("gcc.reproduce: not run because of the failure: "
                          + ", ".join(o.name for o in skipped), file=sys.stderr)
                rc = 1
        if args.build_book:
            brc = build_book(all_pages=args.all_pages, output=args.book_output, generated_dir=args.output_dir,
                             results_root=args.results_root)
            rc = rc or brc
        return rc
    except ValueError as exc:
        print(f"gcc.reproduce: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:   # e.g. a read-only folder inside the results root: name the folder, no traceback
        what = f"{exc.filename} in the folder {Path(exc.filename).parent}" if exc.filename else "a file"
        print(f"gcc.reproduce: error: cannot write {what} ({exc.strerror or exc}); make the folder writable "
              "or choose others with --results-root / --output-dir", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gcc.reproduce: interrupted; the notebook that was running is not recorded as ok and "
              "runs again next time", file=sys.stderr, flush=True)
        return 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _interrupt(signum, frame):
    raise KeyboardInterrupt
