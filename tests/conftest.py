"""Shared fixtures of the test suite.

``ci_results`` runs the whole notebook batch once per test session in the ``ci`` profile
(``python -m gcc.reproduce --profile ci``, a subprocess of this interpreter, started in the
background when collection ends while the modules that do not need it run first; unchanged
notebooks are cached by the runner, so a second session costs seconds) and returns the results
root, so that
any test can read ``<root>/<notebook>/*.csv`` and ``run.json`` (the run's one provenance record)::

    def test_worst_case_slope(ci_results):
        table = pandas.read_csv(ci_results / "worst_case_rate" / "results.csv")

One producer per artifact: the test batch writes into ``_build/test/results`` (results) and
``_build/test/generated`` (executed notebooks, status page, values; fixture ``ci_generated``), and
its book build into ``_build/test/book`` (fixtures ``book_build``, ``html``). It never touches the
book's ``_build/results``, ``book/generated`` or ``_build/html``, so ``make book; make test;
make html`` still shows the default profile's book.

Set ``GCC_SKIP_NOTEBOOKS=1`` to skip every test that needs the batch (quick library-only runs).

Tiers: a test that uses one of the batch's fixtures (:data:`BATCH_FIXTURES`), a fixture that
starts a course or a cluster (:data:`PROCESS_FIXTURES`), or executes notebooks
(:data:`PROCESS_TESTS`) is marked ``slow`` at collection (:func:`pytest_collection_modifyitems`),
so ``make check`` (``-m "not slow"`` with ``GCC_SKIP_NOTEBOOKS=1``) runs the unit tests only; the
suite prints its wall time at the end.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TEST_BUILD = REPO / "_build" / "test"
RESULTS_ROOT = TEST_BUILD / "results"
GENERATED = TEST_BUILD / "generated"
BOOK_OUTPUT = TEST_BUILD / "book"
#: fixtures that run or read the notebook batch: a test using one is marked slow
BATCH_FIXTURES = frozenset({"ci_batch", "ci_results", "ci_generated", "book_build", "html"})
#: fixtures that start other processes for the whole module: nbgrader's course (``graded``), a
#: dask cluster (``cluster_client``, ``client``); their tests are integration tests, marked slow
PROCESS_FIXTURES = frozenset({"graded", "cluster_client", "client"})
#: tests that execute notebooks in kernels through the runner or nbgrader, or start a cluster of
#: processes, without one of the fixtures above (5-80 s each with ``--durations`` on 2 cores):
#: marked slow; ``make test`` runs them
PROCESS_TESTS = frozenset({
    "test_reproduce.py::test_a_failing_notebook_fails_the_batch_and_names_notebook_and_cell",
    "test_reproduce.py::test_only_selects_notebooks_and_their_dependencies",
    "test_reproduce.py::test_unchanged_notebooks_are_cached_and_changes_rerun",
    "test_reproduce.py::test_run_json_records_provenance",
    "test_reproduce.py::test_a_command_line_parameter_overrides_the_card_and_is_recorded",
    "test_reproduce.py::test_text_notebooks_run_record_their_parameters_once_and_write_value_includes",
    "test_reproduce.py::test_executed_pages_hide_code_and_remove_the_injected_cell",
    "test_runner_contract.py::test_a_killed_batch_leaves_no_half_result_and_the_rerun_redoes_exactly_what_is_missing",
    "test_runner_contract.py::test_a_cached_run_is_trusted_only_while_its_files_exist",
    "test_runner_contract.py::test_a_failing_notebook_still_fails_the_batch",
    "test_assignments.py::test_sync_book_generates_its_own_release",
    # starts the command line's own cluster and kills one of its workers (60 s on 2 cores)
    "test_distributed_serving.py::test_cli_cluster_survives_a_worker_killed_mid_batch",
    # counts the child processes left over: needs the session's other clusters to have run first
    "test_distributed_coded.py::test_cluster_is_shut_down",
})
_START = time.perf_counter()


def pytest_collection_modifyitems(config, items):
    """Mark ``slow`` every test that uses the notebook batch or another process-starting fixture
    (directly or through a fixture), and the notebook-executing tests of :data:`PROCESS_TESTS`; then
    move the modules that read the batch to the end (a stable sort: modules stay whole), so that the
    other tests run while the batch does (:func:`pytest_collection_finish`)."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        name = f"{Path(str(item.fspath)).name}::{getattr(item, 'originalname', None) or item.name}"
        if fixtures & (BATCH_FIXTURES | PROCESS_FIXTURES) or name in PROCESS_TESTS:
            item.add_marker(pytest.mark.slow)
    batch_modules = {str(item.fspath) for item in items if _uses_batch(item)}
    items.sort(key=lambda item: str(item.fspath) in batch_modules)


def _uses_batch(item) -> bool:
    return bool(set(getattr(item, "fixturenames", ())) & BATCH_FIXTURES)


#: the batch started in the background at the end of collection: its process and log files
_BATCH: dict = {}


def pytest_collection_finish(session):
    """Start the ci batch in the background when a selected test needs it: on 2 cores the unit tests
    and the notebooks then share the wall time instead of adding up (``ci_batch`` waits for it)."""
    if (os.environ.get("GCC_SKIP_NOTEBOOKS") or session.config.option.collectonly
            or not any(_uses_batch(item) for item in session.items)):
        return
    TEST_BUILD.mkdir(parents=True, exist_ok=True)
    _BATCH["book_snapshot"] = book_artifacts()
    _BATCH["stdout"] = open(TEST_BUILD / "batch.stdout", "w+")
    _BATCH["stderr"] = open(TEST_BUILD / "batch.stderr", "w+")
    _BATCH["proc"] = subprocess.Popen(_BATCH_COMMAND, cwd=REPO, env=_batch_env(), text=True,
                                      stdout=_BATCH["stdout"], stderr=_BATCH["stderr"])


def pytest_unconfigure(config):
    """An interrupted session does not leave its batch running."""
    proc = _BATCH.get("proc")
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.wait()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The suite's wall time, from the start of the session (collection included)."""
    terminalreporter.write_line(f"gcc test suite: wall time {time.perf_counter() - _START:.1f} s")


def _batch_env() -> dict:
    env = dict(os.environ)
    # The batch always uses the repository's notebooks and the test folders, whatever the caller set.
    env["GCC_RESULTS_ROOT"] = str(RESULTS_ROOT)
    env["GCC_GENERATED_DIR"] = str(GENERATED)
    env.pop("GCC_NOTEBOOKS_DIR", None)
    env.setdefault("PYTHONHASHSEED", "0")
    return env


def book_artifacts() -> dict[str, float]:
    """Modification time of every file in the book's own folders (``book/generated``,
    ``_build/results``, ``_build/html``), keyed by path relative to the repository."""
    out = {}
    for folder in (REPO / "book" / "generated", REPO / "_build" / "results", REPO / "_build" / "html"):
        if folder.exists():
            for path in folder.rglob("*"):
                if path.is_file():
                    out[str(path.relative_to(REPO))] = path.stat().st_mtime
    return out


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The companion's root folder."""
    return REPO


#: the ci batch, as the fixtures run it
_BATCH_COMMAND = [sys.executable, "-m", "gcc.reproduce", "--profile", "ci", "--keep-going",
                  "--results-root", str(RESULTS_ROOT), "--output-dir", str(GENERATED)]


@pytest.fixture(scope="session")
def ci_batch() -> subprocess.CompletedProcess:
    """The completed ``python -m gcc.reproduce --profile ci --keep-going`` run (stdout/stderr kept):
    the one started in the background at collection, or, when that did not start it, a run now."""
    if os.environ.get("GCC_SKIP_NOTEBOOKS"):
        pytest.skip("GCC_SKIP_NOTEBOOKS is set: the notebook batch is not run")
    if "proc" in _BATCH:
        returncode = _BATCH["proc"].wait(timeout=45 * 60)
        out, err = (_BATCH[k].seek(0) or _BATCH[k].read() for k in ("stdout", "stderr"))
        proc = subprocess.CompletedProcess(_BATCH_COMMAND, returncode, out, err)
        before = _BATCH["book_snapshot"]
    else:
        before = book_artifacts()
        proc = subprocess.run(_BATCH_COMMAND, cwd=REPO, env=_batch_env(), capture_output=True, text=True,
                              timeout=45 * 60)
    proc.book_snapshot = before  # what the book's own folders held (tests/test_pages.py compares)
    # Shown by pytest for any failing test that used the batch (without ipykernel's transport notice).
    sys.stdout.write(proc.stdout)
    sys.stderr.write("\n".join(line for line in proc.stderr.splitlines()[-400:]
                               if "Kernel is running over TCP" not in line))
    return proc


@pytest.fixture(scope="session")
def ci_results(ci_batch) -> Path:
    """Results root after the ``ci`` batch succeeded: ``<repo>/_build/test/results``."""
    if ci_batch.returncode != 0:
        stderr = "\n".join(line for line in ci_batch.stderr.splitlines() if "Kernel is running over TCP" not in line)
        pytest.fail(
            "python -m gcc.reproduce --profile ci failed (exit "
            f"{ci_batch.returncode}):\n{ci_batch.stdout[-6000:]}\n{stderr[-6000:]}"
        )
    return RESULTS_ROOT


@pytest.fixture(scope="session")
def ci_generated(ci_batch) -> Path:
    """The ci batch's executed notebooks, status page and values: ``<repo>/_build/test/generated``.

    Depends on the batch having run, not on every notebook having succeeded.
    """
    return GENERATED


@pytest.fixture(scope="session")
def book_build(ci_batch) -> tuple[subprocess.CompletedProcess, Path]:
    """A fresh strict build (``-W -n --keep-going --all``) of the book from the ci notebooks.

    The book is staged from ``_build/test/generated`` into ``_build/test/book`` (never the book's
    own ``_build/html``). It depends on the batch having run, not on every notebook having
    succeeded: a failing notebook is reported by tests/test_reproduce.py, not by every book test.
    Returns the build's process and its ``_build/html`` folder.
    """
    proc = subprocess.run(
        [sys.executable, "-m", "gcc.reproduce", "--no-run", "--build-book", "--all-pages",
         "--output-dir", str(GENERATED), "--results-root", str(RESULTS_ROOT), "--book-output", str(BOOK_OUTPUT)],
        cwd=REPO, env=_batch_env(), capture_output=True, text=True, timeout=20 * 60,
    )
    return proc, BOOK_OUTPUT / "_build" / "html"


@pytest.fixture(scope="session")
def html(book_build) -> Path:
    """The test book's ``_build/html`` (the build must have produced its index page)."""
    proc, path = book_build
    assert (path / "index.html").exists(), proc.stdout[-5000:] + proc.stderr[-5000:]
    return path


# ----------------------------------------------------------------------------- a Dask cluster
#: the timeout of the cluster's start (a loaded 2-core machine starts eight workers in 10-60 s)
CLUSTER_START_S = 120


@pytest.fixture(scope="module")
def cluster_client(request):
    """A loopback LocalCluster of the test module's ``CLUSTER_WORKERS`` workers, one thread each.

    One cluster per module (its tests share it), shut down by the fixture's finaliser even when a
    test fails. A module that uses it sets ``CLUSTER_WORKERS = <int>`` at its top.
    """
    from gcc.distributed import open_cluster

    n = getattr(request.module, "CLUSTER_WORKERS", None)
    if not isinstance(n, int) or n < 1:
        pytest.fail(f"{request.module.__name__} uses the cluster fixture without CLUSTER_WORKERS = <int >= 1>")
    with open_cluster(n_workers=n, timeout=CLUSTER_START_S) as c:
        yield c


@pytest.fixture
def client(cluster_client, request):
    """The module's cluster, back at its full size (a previous test may have killed a worker)."""
    from gcc.distributed.cluster import wait_for_workers

    wait_for_workers(cluster_client, request.module.CLUSTER_WORKERS, timeout=90)
    return cluster_client
