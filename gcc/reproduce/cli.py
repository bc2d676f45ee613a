"""The command line ``python -m gcc.reproduce``: argument parsing, ``--list``, exit status.

Exit status: 0 when every notebook ran (or was cached) and the book (if asked for) built;
1 after a notebook error or a failed book build; 2 for invalid arguments or run cards.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .batch import run_batch
from .book import build_book
from .cache import read_record
from .cards import PROFILES, discover, order_notebooks, resolve_parameters
from .execute import KERNEL_NAME, format_error
from .locations import default_results_root

__all__ = ["main"]


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
        0, 1 (a notebook or the book build failed) or 2 (invalid arguments or run cards).
    """
    args = _parser().parse_args(argv)
    try:
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
