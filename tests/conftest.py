"""Shared fixtures of the test suite.

``ci_results`` runs the whole notebook batch once per test session in the ``ci`` profile
(``python -m gcc.reproduce --profile ci``, a subprocess of this interpreter; unchanged notebooks
are cached by the runner, so a second session costs seconds) and returns the results root, so that
any test can read ``<root>/<notebook>/*.csv``, ``provenance.json`` and ``run.json``::

    def test_worst_case_slope(ci_results):
        table = pandas.read_csv(ci_results / "worst_case_rate" / "results.csv")

Set ``GCC_SKIP_NOTEBOOKS=1`` to skip every test that needs the batch (quick library-only runs).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
RESULTS_ROOT = REPO / "_build" / "results"
GENERATED = REPO / "book" / "generated"


def _batch_env() -> dict:
    env = dict(os.environ)
    env["GCC_RESULTS_ROOT"] = str(RESULTS_ROOT)
    # The batch always uses the repository's notebooks and output folder, whatever the caller set.
    env.pop("GCC_NOTEBOOKS_DIR", None)
    env.pop("GCC_GENERATED_DIR", None)
    env.setdefault("PYTHONHASHSEED", "0")
    return env


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The companion's root folder."""
    return REPO


@pytest.fixture(scope="session")
def ci_batch() -> subprocess.CompletedProcess:
    """The completed ``python -m gcc.reproduce --profile ci --keep-going`` run (stdout/stderr kept)."""
    if os.environ.get("GCC_SKIP_NOTEBOOKS"):
        pytest.skip("GCC_SKIP_NOTEBOOKS is set: the notebook batch is not run")
    proc = subprocess.run(
        [sys.executable, "-m", "gcc.reproduce", "--profile", "ci", "--keep-going"],
        cwd=REPO, env=_batch_env(), capture_output=True, text=True, timeout=45 * 60,
    )
    # Shown by pytest for any failing test that used the batch (without ipykernel's transport notice).
    sys.stdout.write(proc.stdout)
    sys.stderr.write("\n".join(line for line in proc.stderr.splitlines()[-400:]
                               if "Kernel is running over TCP" not in line))
    return proc


@pytest.fixture(scope="session")
def ci_results(ci_batch) -> Path:
    """Results root after the ``ci`` batch succeeded: ``<repo>/_build/results``."""
    if ci_batch.returncode != 0:
        stderr = "\n".join(line for line in ci_batch.stderr.splitlines() if "Kernel is running over TCP" not in line)
        pytest.fail(
            "python -m gcc.reproduce --profile ci failed (exit "
            f"{ci_batch.returncode}):\n{ci_batch.stdout[-6000:]}\n{stderr[-6000:]}"
        )
    return RESULTS_ROOT
