"""nbgrader configuration of the companion's course (run nbgrader from this folder).

The course: ``source/<id>/<id>.ipynb`` are the nbgrader source notebooks (committed);
``release/``, ``submitted/``, ``autograded/``, ``feedback/`` and ``gradebook.db`` are nbgrader's
products (ignored by git). The README's "Course assignments" section lists the commands.
"""
from nbgrader.converters import Autograde

c = get_config()  # noqa: F821 - defined by nbgrader when it loads this file

c.CourseDirectory.course_id = "gcc-companion"

# Where the course is released to and collected from: a shared folder of the teaching machine
# (nbgrader's default). Try the workflow on one machine with --Exchange.root=/tmp/exchange.
c.Exchange.root = "/srv/nbgrader/exchange"

# Every submission is graded with its student's seed and the course's sizes (the submission's
# parameters cell is replaced): gcc.assignments.course.StudentSeed, after nbgrader's own steps.
# Seeds handed out by hand go here, e.g. {"ada": 17}; the others are student_seed(student id).
c.Autograde.sanitize_preprocessors = Autograde.class_traits()["sanitize_preprocessors"].default() + [
    "gcc.assignments.course.StudentSeed"]
c.StudentSeed.seeds = {}

# The slowest test cells (assignments 03 and 05 recompute a grid of simulations) take tens of
# seconds on a laptop; nbgrader's default of 30 s per cell is too short for a loaded machine.
c.Execute.timeout = 600
