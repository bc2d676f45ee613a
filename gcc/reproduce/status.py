"""The book's run pages: the status of the last batch and the parameters of every profile.

Both pages are MyST markdown written into ``book/generated/``: ``status.md`` (one row per
notebook: last status, seconds, profile, parameters, start time, git revision, and the machine
in one line from :func:`gcc.machine.summary_line`) and ``parameters.md`` (read from the run
cards, included by the reproducibility chapter). Both are written atomically (:mod:`gcc.atomic`).
"""
from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path
from typing import Sequence

from gcc.atomic import write_text
from gcc.machine import summary_line

from .cache import read_record
from .cards import PROFILES, NotebookCard, order_notebooks
from .execute import Outcome

__all__ = ["format_params", "write_status", "write_parameters_page"]


def format_params(params: dict) -> str:
    """``params`` as inline code for a table cell (long values shortened, bars escaped)."""
    if not params:
        return "(notebook defaults)"
    parts = []
    for k, v in params.items():
        text = json.dumps(v, default=str)
        if len(text) > 40:
            text = text[:37] + "..."
        parts.append(f"`{k}={text}`")
    return " ".join(parts).replace("|", "\\|")


def write_status(cards: dict[str, NotebookCard], profile: str, path: Path, results_root: Path,
                 outcomes: Sequence[Outcome] | None = None) -> Path:
    """Write the status table (MyST markdown) of every discovered notebook.

    Parameters
    ----------
    cards : dict
        :func:`gcc.reproduce.discover`.
    profile : str
        The profile of the batch that writes the page.
    path : path
        The page (``book/generated/status.md``).
    results_root : path
        Where the ``run.json`` records are read.
    outcomes : sequence of Outcome, optional
        This batch's outcomes; notebooks not among them are shown as "not run now".

    Returns
    -------
    pathlib.Path
    """
    path = Path(path)
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
        # Link only pages that exist, so that the book's nitpicky build has nothing to complain about.
        link = f"[{card.name}]({card.name}.ipynb)" if (path.parent / f"{card.name}.ipynb").exists() else card.name
        title = card.title.replace("|", "\\|")  # a bar would end the table cell
        # Five columns, so the table fits the text column; start time and git revision are in run.json.
        rows.append(
            f"| {link}: {title} | {record.get('status', '-')}, {record.get('profile', '-')} ({state}) "
            f"| {seconds if seconds is not None else '-'} "
            f"| {format_params(record.get('parameters') or {}) if record else '-'} |"
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
        "git revision, start time, cache key) is in `_build/results/<name>/run.json`.",
        "",
        f"Last batch: profile **{profile}**, written {now}. Sum of run times: {total:.1f} s. "
        f"Machine: {summary_line()}.",
        "",
        "| Notebook | Last run, profile (this batch) | Seconds | Parameters |",
        "|---|---|---|---|",
        *rows,
        "",
        f"Reproduce all of them: `python -m gcc.reproduce --profile {profile}`; one of them: "
        f"`python -m gcc.reproduce --profile {profile} --only <name>`.",
        "",
    ]
    write_text(path, "\n".join(text))
    return path


def write_parameters_page(cards: dict[str, NotebookCard], path: Path) -> Path:
    """Write the table of every notebook's parameters in every profile (MyST, for an ``{include}``).

    Read from the run cards, so it is current even before a batch ran; the reproducibility page
    includes it. One row per notebook, one column per profile.
    """
    path = Path(path)
    lines = [
        "| Notebook | " + " | ".join(f"`{p}`" for p in PROFILES) + " |",
        "|---|" + "---|" * len(PROFILES),
    ]
    for card in order_notebooks(cards):
        deps = f" (after {', '.join(card.depends)})" if card.depends else ""
        cells = [format_params(card.profiles[p]) if card.profiles.get(p) else "(notebook defaults)"
                 for p in PROFILES]
        lines.append(f"| `{card.name}`{deps} | " + " | ".join(cells) + " |")
    if not cards:
        lines.append("| (no notebook yet) |" + " |" * len(PROFILES))
    lines += ["", "Reproduce one notebook in one profile: "
              "`python -m gcc.reproduce --profile <profile> --only <notebook>`."]
    write_text(path, "\n".join(lines) + "\n")
    return path
