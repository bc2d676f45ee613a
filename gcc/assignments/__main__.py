"""Command line of the assignments: ``python -m gcc.assignments {seeds,list,sync-book,pending,grade-written}``.

The course itself runs on nbgrader's command line (``nbgrader generate_assignment``, ``autograde``,
...), in ``assignments/``; see the README's "Course assignments".
"""
from __future__ import annotations

import argparse
import sys

from .variants import ASSIGNMENTS, variant


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gcc.assignments",
                                     description="Students' seeds, variants and the book's assignment pages.")
    sub = parser.add_subparsers(dest="command", required=True)
    seeds = sub.add_parser("seeds", help="print the seed of each student id (what the autograder grades with)")
    seeds.add_argument("students", nargs="+", metavar="STUDENT_ID")
    sub.add_parser("list", help="list the assignments and the sizes of one seed's variant").add_argument(
        "--seed", type=int, default=0)
    sub.add_parser("sync-book", help="write the nbgrader release's student versions as the book's pages")
    sub.add_parser("pending", help="list the written answers that wait for manual grading")
    grade = sub.add_parser("grade-written", help="grade a written answer by hand (as the formgrader does)")
    grade.add_argument("assignment", choices=list(ASSIGNMENTS))
    grade.add_argument("student", metavar="STUDENT_ID")
    grade.add_argument("score", type=float)
    grade.add_argument("--comment", default=None, help="shown to the student under the answer")
    args = parser.parse_args(argv)
    try:
        if args.command == "seeds":
            from .course import student_seed

            for student in args.students:
                print(f"{student}\t{student_seed(student)}")
        elif args.command == "list":
            for a in ASSIGNMENTS:
                print(variant(a, args.seed))
        elif args.command == "sync-book":
            from .build import sync_book

            for path in sync_book():
                print(path)
        elif args.command == "pending":
            from .gradebook import pending

            for row in pending():
                print(f"{row['assignment']}\t{row['student']}\t{row['cell']}\t{row['points']:g} points pending")
        elif args.command == "grade-written":
            from .gradebook import grade_written

            total = grade_written(args.assignment, args.student, args.score, args.comment)
            print(f"{args.assignment}\t{args.student}\twritten_answer = {args.score:g}\ttotal {total:g}")
        return 0
    except ValueError as exc:   # the library's contract errors: one line, no traceback
        parser.error(str(exc))


if __name__ == "__main__":
    sys.exit(main())
