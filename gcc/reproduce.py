"""Batch reproduction: run every source notebook with a profile's parameters.

Usage::

    python -m gcc.reproduce [--profile ci|default|paper] [--only NAME ...] [--force]
                            [--list] [--jobs 1] [--keep-going] [--notebooks-dir DIR]
                            [--build-book] [--no-run]

Each ``notebooks/<name>.ipynb`` has a run card ``notebooks/<name>.yaml`` (title,
order, depends, per-profile parameters; see CONTRIBUTING.md). The runner

1. discovers the notebooks and orders them by ``depends``, then ``order``, then name;
2. for each, merges the profile's parameters over the notebook's own defaults (and
   passes ``profile=<name>`` when the notebook's parameters cell declares ``profile``);
3. computes a cache key: sha256 over the notebook source with outputs stripped, the
   parameters, :func:`gcc.results.library_fingerprint` (jupyter-cache ignores the
   library's code, so it cannot be used here), the profile and the keys of the
   notebooks it depends on; an unchanged key with a successful previous run is
   reported as ``cached`` and not rerun;
4. otherwise executes it with papermill into ``book/generated/<name>.ipynb`` (cwd = the
   repository root, ``GCC_RESULTS_ROOT=<repo>/_build/results``) and writes
   ``_build/results/<name>/run.json`` (profile, parameters, seconds, status, cache key,
   git revision, package versions);
5. writes ``book/generated/status.md``, the status table the book shows.

A notebook error makes the command exit with status 1 and print the notebook, the
failing cell (index and first lines of source) and the error. With ``--keep-going``
the remaining independent notebooks still run; without it the batch stops.

``--build-book`` then builds the static site with Jupyter Book (``-W -n --keep-going``,
notebooks are never executed by Jupyter Book). Table-of-contents entries whose page does
not exist yet are left out of that build (and listed); executed notebooks missing from
``_toc.yml`` are added under "Other notebooks" so that no result is lost.
"""
from __future__ import annotations

import argparse
import concurrent.futures as _futures
import copy
import datetime as _dt
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import traceback as _traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gcc import results as _results

__all__ = [
    "PROFILES",
    "KERNEL_NAME",
    "NotebookCard",
    "discover",
    "order_notebooks",
    "resolve_parameters",
    "cache_key",
    "run_batch",
    "write_status",
    "effective_toc",
    "build_book",
    "main",
]

#: Profiles every run card may fill. ``ci`` must run the whole batch in minutes on two
#: cores, ``default`` on a laptop, ``paper`` at the papers' full scale (a GPU helps).
PROFILES = ("ci", "default", "paper")

#: The Jupyter kernel the runner asks papermill for. ``make`` installs it into the
#: virtual environment; the runner installs it there itself when it is missing.
KERNEL_NAME = "gcc-companion"

_RUN_RECORD = "run.json"
_PAGE_SUFFIXES = (".md", ".ipynb", ".rst")


# --------------------------------------------------------------------------- locations
def repo_root() -> Path:
    """The companion's root folder."""
    return _results.repo_root()


def default_notebooks_dir() -> Path:
    """``$GCC_NOTEBOOKS_DIR`` or ``<repo>/notebooks``."""
    env = os.environ.get("GCC_NOTEBOOKS_DIR")
    return Path(env).resolve() if env else repo_root() / "notebooks"


def default_output_dir() -> Path:
    """``$GCC_GENERATED_DIR`` or ``<repo>/book/generated`` (the executed notebooks)."""
    env = os.environ.get("GCC_GENERATED_DIR")
    return Path(env).resolve() if env else repo_root() / "book" / "generated"


def default_results_root() -> Path:
    """``$GCC_RESULTS_ROOT`` or ``<repo>/_build/results``."""
    return _results.results_root().resolve()


# --------------------------------------------------------------------------- run cards
@dataclass
class NotebookCard:
    """One source notebook and its run card.

    Attributes
    ----------
    name : str
        File stem, e.g. ``"worst_case_rate"``; also the results folder name.
    path : pathlib.Path
        The source notebook (stored without outputs).
    title : str
        Shown in the status table.
    order : float
        Run order within the batch (low first).
    depends : list of str
        Notebooks whose saved results this one reads; they run first.
    profiles : dict
        ``{profile: {parameter: value}}``; missing keys keep the notebook's defaults.
    timeout : float or None
        Per-cell execution timeout in seconds (None: no limit).
    """

    name: str
    path: Path
    title: str = ""
    order: float = 1000.0
    depends: list[str] = field(default_factory=list)
    profiles: dict[str, dict[str, Any]] = field(default_factory=dict)
    timeout: float | None = None
    card_path: Path | None = None


def _load_yaml(path: Path) -> dict:
    import yaml

    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError(f"The run card {path} must be a YAML mapping. Got {type(data).__name__} instead.")
    return data


def load_card(notebook: Path) -> NotebookCard:
    """Read ``<name>.yaml`` beside ``<name>.ipynb`` (a missing card means all defaults)."""
    name = notebook.stem
    card_path = notebook.with_suffix(".yaml")
    if not card_path.exists() and notebook.with_suffix(".yml").exists():
        card_path = notebook.with_suffix(".yml")
    data = _load_yaml(card_path) if card_path.exists() else {}
    profiles = data.get("profiles") or {}
    if not isinstance(profiles, dict):
        raise ValueError(f"The 'profiles' entry of {card_path} must be a mapping. Got {profiles!r} instead.")
    unknown = sorted(set(profiles) - set(PROFILES))
    if unknown:
        raise ValueError(
            f"The 'profiles' entry of {card_path} must only name profiles {list(PROFILES)}. Got {unknown} instead."
        )
    depends = data.get("depends") or []
    if isinstance(depends, str):
        depends = [depends]
    return NotebookCard(
        name=name,
        path=notebook,
        title=str(data.get("title") or name),
        order=float(data.get("order", 1000)),
        depends=[str(d) for d in depends],
        profiles={k: dict(v or {}) for k, v in profiles.items()},
        timeout=data.get("timeout"),
        card_path=card_path if card_path.exists() else None,
    )


def discover(notebooks_dir: Path | None = None) -> dict[str, NotebookCard]:
    """All ``*.ipynb`` of ``notebooks_dir`` with their run cards, keyed by name."""
    folder = Path(notebooks_dir) if notebooks_dir else default_notebooks_dir()
    cards = {}
    for path in sorted(folder.glob("*.ipynb")):
        if path.name.startswith((".", "_")) or path.stem.endswith("-checkpoint"):
            continue
        cards[path.stem] = load_card(path)
    return cards


def order_notebooks(cards: dict[str, NotebookCard], only: list[str] | None = None) -> list[NotebookCard]:
    """Topological order by ``depends``; ties by (``order``, name).

    With ``only``, the selection is extended by everything it depends on (their cache
    makes that cheap when unchanged).
    """
    if only:
        missing = [n for n in only if n not in cards]
        if missing:
            raise ValueError(
                f"The 'only' parameter must name existing notebooks {sorted(cards)}. Got {missing} instead."
            )
        wanted: set[str] = set()
        stack = list(only)
        while stack:
            name = stack.pop()
            if name in wanted:
                continue
            wanted.add(name)
            stack.extend(d for d in cards[name].depends if d in cards)
    else:
        wanted = set(cards)
    for name in wanted:
        for dep in cards[name].depends:
            if dep not in cards:
                raise ValueError(
                    f"The 'depends' entry of notebook {name!r} must name existing notebooks. Got {dep!r} instead."
                )
    done: list[NotebookCard] = []
    placed: set[str] = set()
    pending = sorted((cards[n] for n in wanted), key=lambda c: (c.order, c.name))
    while pending:
        for card in pending:
            if all(d in placed for d in card.depends):
                done.append(card)
                placed.add(card.name)
                pending.remove(card)
                break
        else:
            raise ValueError(
                "The 'depends' entries of the run cards must not form a cycle. "
                f"Got a cycle among {[c.name for c in pending]} instead."
            )
    return done


# --------------------------------------------------------------------------- parameters
def notebook_parameters(path: Path) -> dict[str, Any]:
    """Names and default values declared in the notebook's ``parameters`` cell."""
    import nbformat
    from papermill.translators import papermill_translators

    nb = nbformat.read(str(path), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            # A source notebook need not carry kernel metadata; the runner always uses a Python kernel.
            translator = papermill_translators.find_translator("python3", "python")
            return {p.name: p.default for p in translator.inspect(cell)}
    return {}


def resolve_parameters(card: NotebookCard, profile: str) -> dict[str, Any]:
    """The parameters papermill injects: the profile's values, plus ``profile`` if declared."""
    params = dict(card.profiles.get(profile, {}))
    declared = notebook_parameters(card.path)
    if "profile" in declared:
        params["profile"] = profile
    return params


# --------------------------------------------------------------------------- caching
def _stripped_source(path: Path) -> str:
    """The notebook without outputs, execution counts or volatile metadata."""
    nb = json.loads(path.read_text())
    cells = []
    for cell in nb.get("cells", []):
        source = cell.get("source", "")
        if isinstance(source, list):
            source = "".join(source)
        tags = sorted((cell.get("metadata") or {}).get("tags", []))
        cells.append({"type": cell.get("cell_type"), "source": source, "tags": tags})
    return json.dumps(cells, sort_keys=True)


def cache_key(card: NotebookCard, params: dict[str, Any], profile: str,
              upstream: dict[str, str] | None = None, fingerprint: str | None = None) -> str:
    """sha256 over source (outputs stripped), parameters, library fingerprint, profile, upstream keys."""
    digest = hashlib.sha256()
    payload = {
        "source": _stripped_source(card.path),
        "parameters": _results._jsonable(params),
        "library": fingerprint or _results.library_fingerprint(),
        "profile": profile,
        "upstream": dict(sorted((upstream or {}).items())),
    }
    digest.update(json.dumps(payload, sort_keys=True, default=str).encode())
    return digest.hexdigest()


def read_record(results_root: Path, name: str) -> dict | None:
    """The last ``run.json`` of notebook ``name`` (None when it never ran)."""
    path = Path(results_root) / name / _RUN_RECORD
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


# --------------------------------------------------------------------------- kernel
def ensure_kernel(name: str = KERNEL_NAME) -> str:
    """Return a kernel name papermill can start, installing ``name`` into this prefix if needed."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    manager = KernelSpecManager()
    try:
        manager.get_kernel_spec(name)
        return name
    except NoSuchKernel:
        pass
    try:
        from ipykernel.kernelspec import install

        install(kernel_name=name, display_name="Python (gcc companion)", prefix=sys.prefix)
        KernelSpecManager().get_kernel_spec(name)
        return name
    except Exception as exc:  # noqa: BLE001 - any failure falls back to the generic kernel
        print(f"note: could not install kernel {name!r} ({exc}); using 'python3'", file=sys.stderr)
        return "python3"


# --------------------------------------------------------------------------- execution
@dataclass
class Outcome:
    """What happened to one notebook in this batch."""

    name: str
    status: str  # "ok", "cached", "error", "skipped"
    seconds: float = 0.0
    error: dict | None = None
    record: dict | None = None


def _error_details(exc: BaseException, output: Path, injected: bool) -> dict:
    from papermill.exceptions import PapermillExecutionError

    if isinstance(exc, PapermillExecutionError):
        index = exc.cell_index
        source = exc.source or ""
        # papermill inserts the injected-parameters cell; report the source notebook's index too.
        source_index = index - 1 if injected and index is not None else index
        try:
            nb = json.loads(output.read_text())
            cells = nb["cells"]
            inj = next((i for i, c in enumerate(cells)
                        if "injected-parameters" in c.get("metadata", {}).get("tags", [])), None)
            source_index = index - 1 if inj is not None and index > inj else index
        except Exception:  # noqa: BLE001 - best effort only
            pass
        return {
            "cell_index": index,
            "source_cell_index": source_index,
            "execution_count": exc.exec_count,
            "source_head": "\n".join(source.splitlines()[:5]),
            "ename": exc.ename,
            "evalue": exc.evalue,
        }
    return {
        "cell_index": None,
        "source_cell_index": None,
        "execution_count": None,
        "source_head": "",
        "ename": type(exc).__name__,
        "evalue": str(exc),
        "traceback": "".join(_traceback.format_exception(type(exc), exc, exc.__traceback__))[-4000:],
    }


def format_error(name: str, error: dict) -> str:
    """Human-readable report of a failed notebook: name, cell, source head, error."""
    lines = [f"FAILED notebook {name!r}"]
    if error.get("source_cell_index") is not None:
        lines.append(
            f"  cell {error['source_cell_index']} of notebooks/{name}.ipynb "
            f"(cell {error['cell_index']} of the executed notebook, execution count {error['execution_count']}):"
        )
        for src in (error.get("source_head") or "").splitlines():
            lines.append(f"    | {src}")
    lines.append(f"  {error.get('ename')}: {error.get('evalue')}")
    return "\n".join(lines)


def _execute(card: NotebookCard, params: dict, output: Path, kernel: str, cwd: Path,
             timeout: float | None) -> None:
    import papermill

    output.parent.mkdir(parents=True, exist_ok=True)
    papermill.execute_notebook(
        str(card.path),
        str(output),
        parameters=params,
        kernel_name=kernel,
        language="python",
        cwd=str(cwd),
        progress_bar=False,
        log_output=False,
        execution_timeout=timeout,
    )


def _complete_metadata(output: Path, kernel: str) -> None:
    """Give the executed notebook a kernelspec if its source had none (jupytext's ``-all`` filter).

    myst-nb picks the code lexer from it; without it every code cell of the page raises a warning,
    which fails the strict book build.
    """
    if not output.exists():
        return
    try:
        nb = json.loads(output.read_text())
    except (OSError, json.JSONDecodeError):
        return
    meta = nb.setdefault("metadata", {})
    spec = meta.get("kernelspec") or {}
    if spec.get("language") and spec.get("name"):
        return
    meta["kernelspec"] = {"name": spec.get("name") or kernel, "language": "python",
                          "display_name": spec.get("display_name") or "Python (gcc companion)"}
    output.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


def run_one(card: NotebookCard, profile: str, params: dict, key: str, *, output_dir: Path,
            results_root: Path, kernel: str, force: bool = False, timeout: float | None = None) -> Outcome:
    """Run (or reuse) one notebook and write its ``run.json``."""
    output = Path(output_dir) / f"{card.name}.ipynb"
    previous = read_record(results_root, card.name)
    if (not force and previous and previous.get("status") == "ok"
            and previous.get("cache_key") == key and output.exists()):
        return Outcome(card.name, "cached", float(previous.get("seconds", 0.0)), record=previous)

    folder = Path(results_root) / card.name
    folder.mkdir(parents=True, exist_ok=True)
    started = _dt.datetime.now(_dt.timezone.utc)
    t0 = time.perf_counter()
    error = None
    try:
        _execute(card, params, output, kernel, repo_root(), timeout if timeout is not None else card.timeout)
        status = "ok"
    except BaseException as exc:  # noqa: BLE001 - report every failure, re-raise interrupts below
        if isinstance(exc, KeyboardInterrupt):
            raise
        status = "error"
        error = _error_details(exc, output, injected=bool(params))
    seconds = time.perf_counter() - t0
    _complete_metadata(output, kernel)

    record = _results.provenance(params, seed=params.get("seed", card.profiles.get(profile, {}).get("seed")))
    record.update({
        "notebook": card.name,
        "title": card.title,
        "source": _relative(card.path),
        "executed_notebook": _relative(output),
        "profile": profile,
        "parameters": _results._jsonable(params),
        "kernel": kernel,
        "started_utc": started.isoformat(timespec="seconds"),
        "seconds": round(seconds, 3),
        "status": status,
        "cache_key": key,
        "depends": card.depends,
        "error": error,
    })
    (folder / _RUN_RECORD).write_text(json.dumps(record, indent=2, sort_keys=True))
    return Outcome(card.name, status, seconds, error=error, record=record)


def _relative(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(repo_root()))
    except ValueError:
        return str(path)


def run_batch(profile: str = "ci", only: list[str] | None = None, *, force: bool = False,
              jobs: int = 1, keep_going: bool = False, notebooks_dir: Path | None = None,
              output_dir: Path | None = None, results_root: Path | None = None,
              kernel: str | None = None, timeout: float | None = None,
              stream=None) -> list[Outcome]:
    """Run the selected notebooks in ``profile``; print one progress line per notebook.

    Returns
    -------
    list of Outcome
        In run order. Notebooks not run because an earlier one failed (without
        ``keep_going``) or because a dependency failed have status ``"skipped"``.
    """
    if profile not in PROFILES:
        raise ValueError(f"The 'profile' parameter must be one of {list(PROFILES)}. Got {profile!r} instead.")
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"The 'jobs' parameter must be an int >= 1. Got {jobs!r} instead.")
    stream = stream or sys.stdout
    notebooks_dir = Path(notebooks_dir) if notebooks_dir else default_notebooks_dir()
    output_dir = Path(output_dir) if output_dir else default_output_dir()
    results_root = Path(results_root).resolve() if results_root else default_results_root()
    # Every kernel the batch starts inherits this: all notebooks write into one results root.
    os.environ["GCC_RESULTS_ROOT"] = str(results_root)
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")

    cards = discover(notebooks_dir)
    plan = order_notebooks(cards, only)
    kernel = kernel or ensure_kernel()
    fingerprint = _results.library_fingerprint()
    total = len(plan)
    width = max([len(c.name) for c in plan] + [8])
    print(f"gcc.reproduce: profile {profile!r}, {total} notebook(s), kernel {kernel!r}, "
          f"results in {results_root}", file=stream, flush=True)

    keys: dict[str, str] = {}
    outcomes: dict[str, Outcome] = {}
    stop = False

    def prepare(card: NotebookCard) -> tuple[dict, str]:
        params = resolve_parameters(card, profile)
        upstream = {d: keys.get(d, "") for d in card.depends}
        return params, cache_key(card, params, profile, upstream, fingerprint)

    def report(i: int, outcome: Outcome) -> None:
        line = f"[{i:>{len(str(total))}}/{total}] {outcome.name:<{width}}  {outcome.status:<7} {outcome.seconds:8.1f} s"
        if outcome.status == "cached":
            line = f"[{i:>{len(str(total))}}/{total}] {outcome.name:<{width}}  cached  (ran {outcome.seconds:.1f} s)"
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


# --------------------------------------------------------------------------- status page
def _format_params(params: dict) -> str:
    if not params:
        return "(notebook defaults)"
    parts = []
    for k, v in params.items():
        text = json.dumps(v, default=str)
        if len(text) > 40:
            text = text[:37] + "..."
        parts.append(f"`{k}={text}`")
    return " ".join(parts).replace("|", "\\|")


def _machine() -> str:
    """One line about the hardware that ran the batch (CPU count, platform, GPU if torch sees one)."""
    import platform

    text = f"{platform.machine()} {platform.system()}, {os.cpu_count()} CPU core(s)"
    if shutil.which("nvidia-smi"):  # never import torch just for this line
        try:
            gpus = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=10).stdout
            names = [line.split(":", 1)[1].split("(")[0].strip() for line in gpus.splitlines() if ":" in line]
            if names:
                text += ", GPU " + ", ".join(names)
        except (OSError, subprocess.SubprocessError):  # informational only
            pass
    return text


def write_status(cards: dict[str, NotebookCard], profile: str, path: Path, results_root: Path,
                 outcomes: list[Outcome] | None = None) -> Path:
    """Write the status table (MyST markdown) of every discovered notebook."""
    this_run = {o.name: o for o in (outcomes or [])}
    rows = []
    total = 0.0
    for card in order_notebooks(cards):
        record = read_record(results_root, card.name) or {}
        outcome = this_run.get(card.name)
        if outcome is None:
            state = f"not run now (last: {record.get('status', 'never run')})"
        elif outcome.status == "cached":
            state = "cached"
        elif outcome.status == "ok":
            state = "executed"
        else:
            state = outcome.status
        seconds = record.get("seconds")
        if isinstance(seconds, (int, float)):
            total += seconds
        rev = (record.get("git_revision") or "")[:12]
        # Link only pages that exist, so that the book's nitpicky build has nothing to complain about.
        link = f"[{card.name}]({card.name}.ipynb)" if (path.parent / f"{card.name}.ipynb").exists() else card.name
        title = card.title.replace("|", "\\|")  # a bar would end the table cell
        rows.append(
            f"| {link} | {title} | {record.get('status', '-')} | {state} "
            f"| {seconds if seconds is not None else '-'} | {record.get('profile', '-')} "
            f"| {_format_params(record.get('parameters') or {}) if record else '-'} "
            f"| {record.get('started_utc', '-')} | `{rev or '-'}` |"
        )
    now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    text = [
        "# Run status",
        "",
        "This page is written by `python -m gcc.reproduce` after every batch; it lists every source "
        "notebook of `notebooks/`, the result of its last run, how long that run took on the machine "
        "that built this site and the parameters it ran with. *cached* means the notebook's source, its "
        "parameters and the library (`gcc.results.library_fingerprint()`) were unchanged, so the "
        "previous executed notebook was kept. The full provenance of each run (package versions, "
        "git revision, cache key) is in `_build/results/<name>/run.json`.",
        "",
        f"Last batch: profile **{profile}**, written {now}. Sum of run times: {total:.1f} s. "
        f"Machine: {_machine()}.",
        "",
        "| Notebook | Title | Status | This batch | Seconds | Profile | Parameters | Started (UTC) | Git revision |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"Reproduce all of them: `python -m gcc.reproduce --profile {profile}`; one of them: "
        f"`python -m gcc.reproduce --profile {profile} --only <name>`.",
        "",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(text))
    return path


def write_parameters_page(cards: dict[str, NotebookCard], path: Path) -> Path:
    """Write the table of every notebook's parameters in every profile (MyST, for an ``{include}``).

    Read from the run cards, so it is current even before a batch ran; the reproducibility page
    includes it. One row per notebook, one column per profile.
    """
    lines = [
        "| Notebook | " + " | ".join(f"`{p}`" for p in PROFILES) + " |",
        "|---|" + "---|" * len(PROFILES),
    ]
    for card in order_notebooks(cards):
        deps = f" (after {', '.join(card.depends)})" if card.depends else ""
        cells = [_format_params(card.profiles[p]) if card.profiles.get(p) else "(notebook defaults)"
                 for p in PROFILES]
        lines.append(f"| `{card.name}`{deps} | " + " | ".join(cells) + " |")
    if not cards:
        lines.append("| (no notebook yet) |" + " |" * len(PROFILES))
    lines += ["", "Reproduce one notebook in one profile: "
              "`python -m gcc.reproduce --profile <profile> --only <notebook>`."]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


# --------------------------------------------------------------------------- book
def _page_exists(root: Path, entry: str) -> bool:
    base = root / entry
    if base.suffix in _PAGE_SUFFIXES:
        return base.exists()
    return any(base.with_name(base.name + s).exists() for s in _PAGE_SUFFIXES)


def toc_entries(toc: dict) -> list[str]:
    """Every ``file`` of a jb-book table of contents, root first."""
    out = [toc["root"]]

    def walk(items):
        for item in items or []:
            if "file" in item:
                out.append(item["file"])
            walk(item.get("sections"))
            walk(item.get("chapters"))

    walk(toc.get("parts"))
    walk(toc.get("chapters"))
    return out


def effective_toc(root: Path | None = None, generated_dir: Path | None = None) -> tuple[dict, list[str], list[str]]:
    """The table of contents to build now.

    Returns
    -------
    toc : dict
        ``_toc.yml`` without the entries whose page does not exist (their existing sections
        move up one level), plus an "Other notebooks" part for executed notebooks that
        ``_toc.yml`` does not list.
    missing : list of str
        Entries left out.
    added : list of str
        Entries added.
    """
    root = Path(root) if root else repo_root()
    generated_dir = Path(generated_dir) if generated_dir else root / "book" / "generated"
    toc = _load_yaml(root / "_toc.yml")
    missing: list[str] = []

    def prune(items):
        kept = []
        for item in items or []:
            item = copy.deepcopy(item)
            for key in ("sections", "chapters"):
                if key in item:
                    item[key] = prune(item[key])
                    if not item[key]:
                        del item[key]
            if "file" in item and not _page_exists(root, item["file"]):
                missing.append(item["file"])
                kept.extend(item.get("sections", []) + item.get("chapters", []))
                continue
            if "file" not in item and not item.get("chapters") and not item.get("sections"):
                continue  # an empty part
            kept.append(item)
        return kept

    if "parts" in toc:
        toc["parts"] = prune(toc["parts"])
    if "chapters" in toc:
        toc["chapters"] = prune(toc["chapters"])
    listed = {Path(e).with_suffix("").as_posix() if Path(e).suffix in _PAGE_SUFFIXES else e
              for e in toc_entries(toc)}
    added = []
    for nb in sorted(generated_dir.glob("*.ipynb")):
        entry = nb.relative_to(root).with_suffix("").as_posix()
        if entry not in listed:
            added.append(entry)
    if added:
        toc.setdefault("parts", []).append(
            {"caption": "Other notebooks", "chapters": [{"file": e} for e in added]}
        )
    return toc, missing, added


def build_book(root: Path | None = None, strict: bool = True, all_pages: bool = False,
               output: Path | None = None, stream=None) -> int:
    """Build the static site with Jupyter Book (``-W -n --keep-going`` when ``strict``).

    Parameters
    ----------
    root : path, optional
        The book's root (default: the repository).
    strict : bool
        Turn every warning into an error (and be nitpicky about references).
    all_pages : bool
        Rebuild every page (an incremental build repeats no warning of an unchanged page).
    output : path, optional
        Folder that receives ``_build/html`` (default: the root).

    Returns
    -------
    int
        The exit status of ``jupyter-book build``.
    """
    import yaml

    stream = stream or sys.stdout
    root = Path(root) if root else repo_root()
    generated = root / "book" / "generated"
    # Pages the book always includes, written here too so that a build never lacks them.
    write_parameters_page(discover(root / "notebooks"), generated / "parameters.md")
    if not (generated / "status.md").exists():
        write_status(discover(root / "notebooks"), "default", generated / "status.md", default_results_root())
    toc, missing, added = effective_toc(root)
    toc_arg: list[str] = []
    if missing or added:
        build = root / "_build"
        build.mkdir(exist_ok=True)
        toc_path = build / "_toc.effective.yml"
        toc_path.write_text("# Written by gcc.reproduce from _toc.yml; do not edit.\n"
                            + yaml.safe_dump(toc, sort_keys=False))
        toc_arg = ["--toc", str(toc_path)]
        if missing:
            print("note: _toc.yml entries without a page yet, left out of this build: "
                  + ", ".join(missing), file=stream, flush=True)
        if added:
            print("note: executed notebooks not in _toc.yml, added under 'Other notebooks': "
                  + ", ".join(added), file=stream, flush=True)
    exe = Path(sys.executable).parent / "jupyter-book"
    cmd = [str(exe) if exe.exists() else (shutil.which("jupyter-book") or "jupyter-book"), "build", str(root)]
    if strict:
        cmd += ["-W", "-n", "--keep-going"]
    if all_pages:
        cmd += ["--all"]
    if output is not None:
        cmd += ["--path-output", str(output)]
    cmd += toc_arg
    print("$ " + " ".join(cmd), file=stream, flush=True)
    t0 = time.perf_counter()
    rc = subprocess.call(cmd, cwd=root)
    html = Path(output if output is not None else root) / "_build" / "html" / "index.html"
    print(f"book build: exit {rc} in {time.perf_counter() - t0:.1f} s; open {html}", file=stream, flush=True)
    return rc


# --------------------------------------------------------------------------- command line
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


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m gcc.reproduce``; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        if args.list:
            cards = discover(args.notebooks_dir)
            plan = order_notebooks(cards, args.only)
            root = Path(args.results_root) if args.results_root else default_results_root()
            for card in plan:
                params = resolve_parameters(card, args.profile)
                record = read_record(root, card.name) or {}
                deps = f" depends={card.depends}" if card.depends else ""
                print(f"{card.order:>6g}  {card.name:<24} {record.get('status', 'never run'):<9} "
                      f"{card.title}{deps}\n        {args.profile}: {json.dumps(params, default=str)}")
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
            brc = build_book(all_pages=args.all_pages, output=args.book_output)
            rc = rc or brc
        return rc
    except ValueError as exc:
        print(f"gcc.reproduce: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
