"""Command line of the assignments: ``python -m gcc.assignments {sync-book,make-variant,build-instructor,list}``."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import build
from .variants import ASSIGNMENTS, variant


def _literal(text: str):
    """``"30"`` -> 30, ``"0.2"`` -> 0.2, anything else stays a string."""
    import ast

    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gcc.assignments",
                                     description="Student pages, per-student variants and the instructor build.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the assignments and the sizes of one seed's variant").add_argument(
        "--seed", type=int, default=0)
    sub.add_parser("make-student", help="derive each student.ipynb from its solution.ipynb, then sync-book")
    sub.add_parser("sync-book", help="write the student notebooks (no outputs) to book/generated/assignments/")
    mv = sub.add_parser("make-variant", help="write one student's notebooks with their seed injected")
    mv.add_argument("--seed", type=int, required=True)
    mv.add_argument("--out", type=Path, default=None, help="default: _build/variants/seed-<seed>")
    mv.add_argument("--only", nargs="*", default=None, choices=list(ASSIGNMENTS))
    mv.add_argument("--solutions", action="store_true", help="also write the solutions for that seed")
    mv.add_argument("-p", "--param", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                    help="fix a size instead of drawing it from the seed, e.g. -p n_workers 30")
    bi = sub.add_parser("build-instructor", help="executed solutions as a separate Jupyter Book")
    bi.add_argument("--seed", type=int, default=0)
    bi.add_argument("--out", type=Path, default=None, help="default: _build/instructor")
    bi.add_argument("--no-execute", action="store_true", help="copy the solutions without running them")
    bi.add_argument("--html", action="store_true", help="also run jupyter-book build on the folder")
    bi.add_argument("--only", nargs="*", default=None, choices=list(ASSIGNMENTS))
    gr = sub.add_parser("grade", help="run a filled-in student notebook to the end and list its checks")
    gr.add_argument("notebook", type=Path)
    gr.add_argument("--seed", type=int, default=None, help="inject this seed first (default: the notebook's)")
    args = parser.parse_args(argv)

    if args.command == "list":
        for a in ASSIGNMENTS:
            print(variant(a, args.seed))
    elif args.command == "make-student":
        for path in build.make_students() + build.sync_book():
            print(path)
    elif args.command == "sync-book":
        for path in build.sync_book():
            print(path)
    elif args.command == "make-variant":
        params = {name: _literal(value) for name, value in args.param}
        for path in build.make_variant(args.seed, args.out, args.only, args.solutions, params):
            print(path)
    elif args.command == "build-instructor":
        out = build.build_instructor(args.out, seed=args.seed, execute=not args.no_execute,
                                     html=args.html, assignments=args.only)
        print(out)
    elif args.command == "grade":
        rows = build.grade(args.notebook, seed=args.seed)
        for row in rows:
            mark = "passed" if row["passed"] else "FAILED"
            print(f"{row['assignment'] or '-':<22} task {row['task']:<4} {mark}  {row['title']}")
        print(f"{sum(r['passed'] for r in rows)} of {len(rows)} checks passed")
        return 0 if rows and all(r["passed"] for r in rows) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
