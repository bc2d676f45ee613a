"""The batch: every selected notebook in dependency order, one progress line each.

Notebooks run one after another (``jobs=1``) or in a dependency-aware thread pool; a notebook
whose dependency failed is ``skipped``, and without ``keep_going`` the first error skips the
rest. The batch ends by writing the status and parameters pages.

Everything that can be checked before a notebook runs is checked first, so that a mistake
fails in seconds rather than after an hour of runs: the folders (:func:`check_notebooks_dir`,
:func:`check_output_dir`), the kernel, every run card of the plan and the parameters it sets
(:func:`resolve_parameters`).
"""
from __future__ import annotations

import concurrent.futures as _futures
import contextlib
import os
import sys
from numbers import Integral, Real
from pathlib import Path

from gcc import results
from gcc.validation import InstanceOf, Interval, NoneOr, Options, validate_params

from .cache import cache_key
from .cards import PROFILES, NotebookCard, check_notebooks_dir, discover, order_notebooks, resolve_parameters
from .execute import Outcome, check_kernel, ensure_kernel, format_error, run_one
from .locations import check_output_dir, default_notebooks_dir, default_output_dir, default_results_root
from .status import write_parameters_page, write_status

__all__ = ["run_batch"]


@contextlib.contextmanager
def _kernel_environment(results_root: Path, notebooks_dir: Path):
    """The environment every kernel of the batch inherits, restored afterwards.

    All notebooks write into one results root and find their sources there (RunContext reads the
    parameters cell); progress bars stay off the pages. Restored so that a batch run inside a
    Python session (the tests) leaves that session as it was.
    """
    saved = dict(os.environ)
    os.environ["GCC_RESULTS_ROOT"] = str(results_root)
    os.environ["GCC_NOTEBOOKS_DIR"] = str(notebooks_dir)
    os.environ.setdefault("TQDM_DISABLE", "1")
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@validate_params({
    "profile": Options(PROFILES),
    "only": NoneOr(InstanceOf((list, tuple), "a list of notebook names")),
    "force": InstanceOf(bool, "a bool"),
    "jobs": Interval(Integral, 1, None),
    "keep_going": InstanceOf(bool, "a bool"),
    "kernel": NoneOr(InstanceOf(str, "a kernel name")),
    "timeout": NoneOr(Interval(Real, 0, None, closed="neither")),
})
def run_batch(profile: str = "ci", only: list[str] | None = None, *, force: bool = False,
              jobs: int = 1, keep_going: bool = False, notebooks_dir: Path | None = None,
              output_dir: Path | None = None, results_root: Path | None = None,
              kernel: str | None = None, timeout: float | None = None,
              stream=None) -> list[Outcome]:
    """Run the selected notebooks in ``profile``; print one progress line per notebook.

    Parameters
    ----------
    profile : {"ci", "default", "paper"}
    only : list of str, optional
        Run these notebooks and what they depend on (default: all).
    force : bool
        Rerun notebooks whose cache key is unchanged.
    jobs : int >= 1
        Notebooks run at the same time.
    keep_going : bool
        After an error, still run the notebooks that do not depend on the failed one.
    notebooks_dir : path, optional
        An existing folder with at least one source notebook (default:
        :func:`~gcc.reproduce.locations.default_notebooks_dir`).
    output_dir, results_root : path, optional
        Folders that exist or can be created (default: :mod:`gcc.reproduce.locations`).
    kernel : str, optional
        An installed Jupyter kernel (default: :data:`KERNEL_NAME`, installed if missing).
    timeout : float > 0, optional
        Per-cell timeout in seconds (default: each card's).
    stream : file, optional
        Where the progress lines go (default: stdout).

    Returns
    -------
    list of Outcome
        In run order. Notebooks not run because an earlier one failed (without
        ``keep_going``) or because a dependency failed have status ``"skipped"``.

    Raises
    ------
    ValueError
        Before any notebook runs: an argument, a folder, the kernel, a run card of the plan or
        a parameter it sets is invalid (the message names it).
    """
    stream = stream or sys.stdout
    notebooks_dir = check_notebooks_dir(notebooks_dir or default_notebooks_dir(), "notebooks_dir", "run_batch")
    output_dir = check_output_dir(output_dir or default_output_dir(), "output_dir", "run_batch")
    results_root = check_output_dir(results_root or default_results_root(), "results_root", "run_batch")
    if kernel is not None:
        check_kernel(kernel, "kernel", "run_batch")
    cards = discover(notebooks_dir)
    plan = order_notebooks(cards, only)
    # Every card of the plan is checked before the first notebook runs (and read once).
    resolved = {card.name: resolve_parameters(card, profile) for card in plan}
    with _kernel_environment(results_root, notebooks_dir):
        kernel = kernel or ensure_kernel()
        fingerprint = results.library_fingerprint()
        total = len(plan)
        width = max([len(c.name) for c in plan] + [8])
        print(f"gcc.reproduce: profile {profile!r}, {total} notebook(s), kernel {kernel!r}, "
              f"results in {results_root}", file=stream, flush=True)

        keys: dict[str, str] = {}
        outcomes: dict[str, Outcome] = {}
        stop = False

        def prepare(card: NotebookCard) -> tuple[dict, str]:
            params = resolved[card.name]
            upstream = {d: keys.get(d, "") for d in card.depends}
            return params, cache_key(card, params, profile, upstream, fingerprint)

        def report(i: int, outcome: Outcome) -> None:
            head = f"[{i:>{len(str(total))}}/{total}] {outcome.name:<{width}}"
            line = f"{head}  {outcome.status:<7} {outcome.seconds:8.1f} s"
            if outcome.status == "cached":
                line = f"{head}  cached  (ran {outcome.seconds:.1f} s)"
            print(line, file=stream, flush=True)
            if outcome.error:
                print(format_error(outcome.name, outcome.error), file=stream, flush=True)

        def blocked(card: NotebookCard) -> bool:
            return stop or any(outcomes.get(d) is None or outcomes[d].status not in ("ok", "cached")
                               for d in card.depends)

        if jobs == 1:
            for i, card in enumerate(plan, 1):
                if blocked(card):
                    outcomes[card.name] = Outcome(card.name, "skipped")
                    report(i, outcomes[card.name])
                    continue
                params, key = prepare(card)
                keys[card.name] = key
                outcome = run_one(card, profile, params, key, output_dir=output_dir, results_root=results_root,
                                  kernel=kernel, force=force, timeout=timeout)
                outcomes[card.name] = outcome
                report(i, outcome)
                if outcome.status == "error" and not keep_going:
                    stop = True
        else:
            # Dependency-aware pool: a notebook starts once everything it depends on has finished.
            remaining = list(plan)
            running: dict[_futures.Future, NotebookCard] = {}
            counter = 0
            with _futures.ThreadPoolExecutor(max_workers=jobs) as pool:
                while remaining or running:
                    for card in list(remaining):
                        if len(running) >= jobs:
                            break
                        deps_done = all(d in outcomes for d in card.depends)
                        if not deps_done:
                            continue
                        remaining.remove(card)
                        if blocked(card):
                            counter += 1
                            outcomes[card.name] = Outcome(card.name, "skipped")
                            report(counter, outcomes[card.name])
                            continue
                        params, key = prepare(card)
                        keys[card.name] = key
                        fut = pool.submit(run_one, card, profile, params, key, output_dir=output_dir,
                                          results_root=results_root, kernel=kernel, force=force, timeout=timeout)
                        running[fut] = card
                    if not running:
                        continue
                    finished, _ = _futures.wait(list(running), return_when=_futures.FIRST_COMPLETED)
                    for fut in finished:
                        card = running.pop(fut)
                        outcome = fut.result()
                        outcomes[card.name] = outcome
                        counter += 1
                        report(counter, outcome)
                        if outcome.status == "error" and not keep_going:
                            stop = True

        ordered = [outcomes[c.name] for c in plan]
        write_status(cards, profile, output_dir / "status.md", results_root, ordered)
        write_parameters_page(cards, output_dir / "parameters.md")
        return ordered
