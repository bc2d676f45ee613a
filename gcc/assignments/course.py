"""The assignments as an nbgrader course: its folder, the students' seeds and the release.

nbgrader does the course; this module adds the students' seeds (:func:`student_seed`), the
autograde step that grades with them (:class:`StudentSeed`) and the release for the book.
"""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Iterable

import nbformat
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool, Dict
from traitlets import validate as trait_validator

from gcc.notebooks import parameters_cell
from gcc.atomic import writable_folder
from gcc.validation import (TEXT, InstanceOf, Interval, ListOf, NoneOr, Options, check_int, invalid, validate,
                            validate_params)

from ..results import repo_root
from .variants import ASSIGNMENTS

__all__ = ["course_root", "assignment_ids", "source_notebook", "student_seed", "with_seed", "StudentSeed",
           "check_student_id", "run_nbgrader", "generate_release"]

#: Seeds are drawn from ``range(SEED_RANGE)``: easy to read out, rarely shared within a class.
SEED_RANGE = 100_000

#: A student id: 1 to 100 printable characters (it is written into a comment of the graded cell).
_STUDENT_ID = re.compile(r"[^\x00-\x1f\x7f-\x9f\u2028\u2029]{1,100}")


def check_student_id(student_id, name: str = "student_id", owner: str = "with_seed") -> str:
    """Return ``student_id`` (1 to 100 printable characters) unchanged, else raise the standard error.

    The id goes into a comment of the graded cell: a line break would make the rest of it code.
    ``name`` and ``owner`` are the argument and the function the error names.

    Examples
    --------
    >>> from gcc.assignments.course import check_student_id
    >>> check_student_id("CORP\\\\ada")
    'CORP\\\\ada'
    >>> check_student_id("a\\nimport os")
    Traceback (most recent call last):
    ...
    gcc.validation.InvalidParameterError: The 'student_id' parameter of with_seed must be a student id (1 to 100 printable characters, no line breaks or control characters). Got 'a\\nimport os' instead.
    """
    constraint = "a student id (1 to 100 printable characters, no line breaks or control characters)"
    if not isinstance(student_id, str) or _STUDENT_ID.fullmatch(student_id) is None:
        raise invalid(name, owner, constraint, student_id)
    return student_id


def course_root() -> Path:
    """The nbgrader course folder, ``<repository>/assignments`` (holds ``nbgrader_config.py``)."""
    return repo_root() / "assignments"


def source_notebook(assignment: str) -> Path:
    """The nbgrader source notebook ``<course>/source/<assignment>/<assignment>.ipynb`` (:func:`course_root`)."""
    validate(assignment, Options(tuple(ASSIGNMENTS)), "assignment", "source_notebook")
    return course_root() / "source" / assignment / f"{assignment}.ipynb"


def assignment_ids() -> list[str]:
    """Ids of the assignments whose source notebook exists, in book order."""
    return [a for a in ASSIGNMENTS if source_notebook(a).exists()]


def student_seed(student_id: str) -> int:
    """The seed of a student's variants, in ``range(SEED_RANGE)``: a fixed function of nbgrader's student id.

    Examples
    --------
    >>> from gcc.assignments.course import student_seed
    >>> student_seed("ada") == student_seed("ada") != student_seed("bob")
    True
    """
    student_id = check_student_id(student_id, "student_id", "student_seed")
    # crc32, not hash(): Python salts str hashes per process, a seed must survive restarts.
    return zlib.crc32(f"gcc-companion:{student_id}".encode()) % SEED_RANGE


def with_seed(parameters: str, seed: int, student_id: str | None = None) -> str:
    """A parameters cell's source with each of its ``seed = ...`` statements set to ``seed``.

    A cell without one gets it first: a student who deleted it is still graded with their seed. A cell
    that binds ``seed`` otherwise (``seed += 1``, ``for seed in ...``, ``n = 1; seed = 2``) is refused.

    Parameters
    ----------
    parameters : str
        The source of the notebook's ``parameters`` cell (valid Python; line breaks become ``\\n``).
    seed : int
        An int in ``[0, 2**32)`` (a float such as ``1.7`` is an error, never truncated).
    student_id : str, optional
        Named in the line's comment, as is (:func:`check_student_id`).

    Returns
    -------
    str

    Examples
    --------
    >>> from gcc.assignments.course import with_seed
    >>> with_seed("seed = 0  # yours\\nn_workers = None", 17)
    'seed = 17  # set by the autograder\\nn_workers = None'
    >>> with_seed("seed = 0", 3, "CORP\\\\ada")
    'seed = 3  # set by the autograder for student CORP\\\\ada'
    """
    parameters = validate(parameters, InstanceOf(str, "the source of a parameters cell (str)"), "parameters",
                          "with_seed")
    seed = check_int(seed, "seed", "with_seed", minimum=0, maximum=2 ** 32 - 1)
    if student_id is not None:
        student_id = check_student_id(student_id, "student_id", "with_seed")
    whose = "" if student_id is None else f" for student {student_id}"
    line = f"seed = {seed}  # set by the autograder{whose}"
    lines = parameters.replace("\r\n", "\n").replace("\r", "\n").split("\n")   # the lines ast counts
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError as err:
        raise invalid("parameters", "with_seed", "the source of a parameters cell (valid Python)", parameters,
                      f"line {err.lineno}: {err.msg}") from None
    # statements `seed = ...` (or `seed: int = ...`) that have their lines to themselves
    targets = {n: n.targets if isinstance(n, ast.Assign) else [n.target] for n in tree.body
               if isinstance(n, (ast.Assign, ast.AnnAssign))}
    plain = [n for n, t in targets.items() if [getattr(x, "id", None) for x in t] == ["seed"]
             and not any(m is not n and m.lineno <= n.end_lineno and m.end_lineno >= n.lineno for m in tree.body)]
    targets = {id(targets[n][0]) for n in plain}
    other = next((n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "seed"
                  and isinstance(n.ctx, ast.Store) and id(n) not in targets), None)
    if other is not None:
        raise invalid("parameters", "with_seed", "a parameters cell that sets seed only by lines `seed = ...`",
                      parameters, f"line {other.lineno} binds seed otherwise: {lines[other.lineno - 1].strip()}")
    if not plain:
        return f"{line}\n{parameters}"
    for n in reversed(plain):
        lines[n.lineno - 1:n.end_lineno] = [line]
    return "\n".join(lines)


class StudentSeed(Preprocessor):
    """nbgrader autograde step: grade every submission with its student's seed and the course's sizes.

    The submission's ``parameters`` cell becomes the source notebook's with ``seed =
    student_seed(student)`` (or the seed :attr:`seeds` names). Runs after nbgrader's ``OverwriteCells``.
    """

    enabled = Bool(True, help="nbconvert runs a preprocessor only when it is enabled.")
    seeds = Dict({}, help="Seeds given to students by hand, {student id: seed}; the others get "
                          "gcc.assignments.course.student_seed(student id).").tag(config=True)

    @trait_validator("seeds")
    def _check_seeds(self, proposal):
        # Checked when nbgrader_config.py sets them: a seed of 1.7 is an error, never truncated to 1.
        for student, seed in proposal["value"].items():
            check_student_id(student, "seeds", "StudentSeed")
            check_int(seed, f"seeds[{student!r}]", "StudentSeed", minimum=0, maximum=2 ** 32 - 1)
        return proposal["value"]

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        student = info["student"]   # checked by student_seed or with_seed; given seeds when configured
        seed = self.seeds[student] if student in self.seeds else student_seed(student)
        source = self._source_parameters(info["assignment"], info["notebook"])
        target = parameters_cell(nb)
        if target is None and source is None:
            self.log.warning("%s has no parameters cell: left as submitted", info["notebook"])
            return nb, resources
        if target is None:  # a submission without its parameters cell gets the source's, before the setup cell
            target = nbformat.v4.new_code_cell(metadata={"tags": ["parameters"]})
            first = next((i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "nbgrader" in c.metadata),
                         len(nb.cells))
            nb.cells.insert(first, target)
        target.source = with_seed(source if source is not None else target.source, seed, student)
        self.log.info("Grading %s of %s with seed %d", info["notebook"], student, seed)
        return nb, resources

    def _source_parameters(self, assignment: str, notebook: str) -> str | None:
        from nbgrader.coursedir import CourseDirectory

        coursedir = CourseDirectory(parent=self)
        path = Path(coursedir.format_path(coursedir.source_directory, ".", assignment)) / f"{notebook}.ipynb"
        cell = parameters_cell(nbformat.read(path, as_version=4)) if path.exists() else None
        return None if cell is None else cell.source


@validate_params({"args": ListOf(TEXT, min_len=0, as_tuple=True),
                  "timeout": NoneOr(Interval(float, 0, closed="neither"))})
def run_nbgrader(*args: str, root: Path | None = None, timeout: float | None = None) -> str:
    """Run ``python -m nbgrader <args>`` in the course folder (default :func:`course_root`); return its log.

    ``timeout`` is in seconds. Raises RuntimeError, with the log's last lines, when nbgrader fails.
    """
    root = Path(root or course_root()).resolve()
    # this interpreter's bin first: nbgrader calls its environment's alembic
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=timeout)
    log = done.stderr + done.stdout
    if done.returncode != 0:
        tail = "\n".join(log.splitlines()[-30:])
        raise RuntimeError(f"nbgrader {' '.join(args)} failed (exit {done.returncode}) in {root}:\n{tail}")
    return log


def generate_release(out: Path, assignments: Iterable[str] | None = None) -> Path:
    """Run the course's ``nbgrader generate_assignment`` into ``out`` (``<id>/<id>.ipynb``, a scratch
    ``gradebook.db``); ``assignments`` defaults to all. Returns ``out``.
    """
    out = writable_folder(out, "out", "generate_release")
    ids = list(assignments) if assignments is not None else ["*"]   # one nbgrader run for all
    for a in ids:
        if a != "*":
            validate(a, Options(tuple(ASSIGNMENTS)), "assignments", "generate_release")
        # An absolute release directory replaces <root>/release (nbgrader joins it with os.path.join).
        run_nbgrader("generate_assignment", a, "--force", f"--CourseDirectory.release_directory={out}",
                     f"--CourseDirectory.db_url=sqlite:///{out / 'gradebook.db'}")
    return out
