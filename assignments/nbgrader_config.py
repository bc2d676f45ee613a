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

# No warnings in autograde's output (two causes, both outside this course):
# 1. nbgrader 0.9.6 with SQLAlchemy 2: Gradebook.add_submission builds the SubmittedAssignment and its
#    SubmittedNotebooks attached to the (persistent) assignment and student, reads
#    `submission.assignment.notebooks` and only then calls `db.add(submission)`. SQLAlchemy 2 no
#    longer cascades such objects into the session through backrefs (`cascade_backrefs` is gone),
#    so the autoflush that the read triggers warns three times per new submission that they are
#    "not in session"; `db.add` adds them a line later and the gradebook is complete. The filter
#    matches exactly these messages, raised from nbgrader.api; any other SQLAlchemy warning shows.
import warnings  # noqa: E402

from sqlalchemy.exc import SAWarning  # noqa: E402

warnings.filterwarnings("ignore", category=SAWarning, module=r"nbgrader\.api",
                        message=r"Object of type <Submitted(Assignment|Notebook)> not in session, add operation "
                                r"along '(Assignment|Student|Notebook)\.submissions' will not proceed")
# 2. ipykernel 7 warns "Kernel is running over TCP without encryption" for every kernel nbgrader
#    starts. The companion's kernel declares CurveZMQ support (kernel.json: supported_encryption), so
#    the kernel manager provisions keys and the kernel's channels are encrypted; a kernel that does
#    not declare it still starts, unencrypted (and warns).
c.KernelManager.transport_encryption = "auto"

# The feedback page reads offline: the vendored MathJax (book/vendor/mathjax) inlined in place of
# nbgrader's CDN copy, long lines wrapped, and a written answer not graded yet marked "pending"
# instead of "Score: 0.0 / 3.0" (gcc.assignments.feedback_page).
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor  # noqa: E402

c.GenerateFeedback.exporter_class = "gcc.assignments.feedback_page.FeedbackExporter"
c.GenerateFeedback.preprocessors = ["gcc.assignments.feedback_page.PendingGrades", CSSHTMLHeaderPreprocessor]
