"""The gradebook side of the course: pending written answers, grading them, an export that marks them.

nbgrader counts a written answer as 0 until the teacher grades it; ``nbgrader export
--exporter=gcc.assignments.gradebook.PendingCsvExport`` adds ``pending_points`` and ``status``.
"""
from __future__ import annotations

import csv
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins.export import CsvExportPlugin

from gcc.validation import Interval, NoneOr, Options, Satisfies, check_real, invalid, validate_params

from .course import check_student_id, course_root
from .variants import ASSIGNMENTS

__all__ = ["pending", "grade_written", "PendingCsvExport"]

#: the course id of ``assignments/nbgrader_config.py``
COURSE_ID = "gcc-companion"


def _gradebook_url() -> str:
    """The course's gradebook, ``sqlite:///<course>/gradebook.db`` (nbgrader's default)."""
    return f"sqlite:///{course_root().resolve() / 'gradebook.db'}"


def _is_url(value) -> bool:
    """Whether SQLAlchemy reads ``value`` as a database URL (it raises, else)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(value) is not None
    except ArgumentError:
        return False


_DB_URL = NoneOr(Satisfies(_is_url, "a database URL (sqlite:///<path>)"))


def _pending_of(submission) -> list[tuple[str, str, float]]:
    """``(notebook, grade id, points)`` of a submission's cells waiting for manual grading."""
    return [(nb.name, g.name, float(g.max_score)) for nb in submission.notebooks for g in nb.grades
            if g.needs_manual_grade and g.manual_score is None]


@validate_params({"db_url": _DB_URL})
def pending(db_url: str | None = None) -> list[dict]:
    """Every manually graded cell not graded yet: ``{"assignment", "student", "notebook", "cell", "points"}``.

    ``db_url`` defaults to the course's gradebook.
    """
    out = []
    with Gradebook(db_url or _gradebook_url(), COURSE_ID) as gb:
        for assignment in gb.assignments:
            for submission in assignment.submissions:
                for notebook, cell, points in _pending_of(submission):
                    out.append({"assignment": assignment.name, "student": submission.student.id,
                                "notebook": notebook, "cell": cell, "points": points})
    return out


@validate_params({"assignment": Options(tuple(ASSIGNMENTS)), "score": Interval(float, 0, None), "db_url": _DB_URL})
def grade_written(assignment: str, student: str, score: float, comment: str | None = None,
                  db_url: str | None = None) -> float:
    """Grade a written answer (the cell ``written_answer``) by hand, as the formgrader's score box does.

    Parameters
    ----------
    assignment, student : str
        The submission.
    score : float
        Points given, in ``[0, the cell's points]``.
    comment : str, optional
        Shown to the student under their answer.
    db_url : str, optional
        The gradebook (default: the course's).

    Returns
    -------
    float
        The submission's new total score.
    """
    student = check_student_id(student, "student", "grade_written")
    cell, notebook = "written_answer", assignment   # one notebook per assignment
    with Gradebook(db_url or _gradebook_url(), COURSE_ID) as gb:
        try:
            grade = gb.find_grade(cell, notebook, assignment, student)
        except MissingEntry:
            raise invalid("student", "grade_written",
                          f"a student with an autograded submission of {assignment!r}", student) from None
        grade.manual_score = check_real(score, "score", "grade_written", minimum=0, maximum=float(grade.max_score))
        grade.needs_manual_grade = False
        if comment is not None:
            gb.find_comment(cell, notebook, assignment, student).manual_comment = str(comment)
        gb.db.commit()
        return float(gb.find_submission(assignment, student).score)


class PendingCsvExport(CsvExportPlugin):
    """nbgrader's CSV export (its columns) with two more: ``pending_points`` and ``status`` (``graded``,
    ``pending manual grading`` or ``not submitted``)."""

    def export(self, gradebook: Gradebook) -> None:
        super().export(gradebook)
        dest = Path(self.to or "grades.csv")
        with dest.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            fields, rows = [*reader.fieldnames, "pending_points", "status"], list(reader)
        for row in rows:
            try:
                waiting = sum(p for *_, p in _pending_of(gradebook.find_submission(row["assignment"],
                                                                                   row["student_id"])))
            except MissingEntry:
                row.update(pending_points=0.0, status="not submitted")
                continue
            row.update(pending_points=float(waiting), status="pending manual grading" if waiting else "graded")
        with dest.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fields)
            writer.writeheader()
            writer.writerows(rows)
