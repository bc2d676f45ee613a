"""The status page, and the Jupyter Book build of the site from the executed notebooks."""
from __future__ import annotations

import datetime as _dt
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from gcc.atomic import writable_folder, write_text
from gcc.machine import summary_line
from gcc.provenance import repo_root
from gcc.results import read_run_record, results_root as default_results_root
from gcc.validation import BOOL, invalid, validate_params

from .cards import Card, discover, load_yaml, order_notebooks
from .pages import VALUES_DIR, value_text

__all__ = ["write_status", "write_placeholders", "build_book"]

# {{ notebook.key }} in a chapter, and ```{include} ../generated/values/<notebook>[.<table>].md
_REFERENCE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_INCLUDE = re.compile(r"\{include\}\s+\S*generated/values/([A-Za-z0-9_.]+\.md)")


def write_status(cards: dict[str, Card], profile: str, path: Path, results_root: Path, outcomes=()) -> None:
    """The status table (MyST) of every notebook: last status and profile, seconds, parameters."""
    this_run = {o.name: o.status for o in outcomes}
    rows, total = [], 0.0
    for card in order_notebooks(cards):
        record = read_run_record(Path(results_root) / card.name)
        state = {"ok": "executed", None: f"not run now (last: {record.get('status', 'never run')})"}.get(
            this_run.get(card.name), this_run.get(card.name))
        total += record.get("seconds") or 0.0
        link = f"[{card.name}]({card.name}.ipynb)" if (Path(path).parent / f"{card.name}.ipynb").exists() else card.name
        params = " ".join(f"`{k}={value_text(v)}`" for k, v in (record.get("parameters") or {}).items())
        rows.append(f"| {link}: {card.title.replace('|', '/')} | {record.get('status', '-')}, "
                    f"{record.get('profile', '-')} ({state}) | {record.get('seconds', '-')} | {params or '-'} |")
    now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    write_text(path, "\n".join([
        "# Run status", "",
        "This page is written by `python -m gcc.reproduce` after every batch: every source notebook of "
        "`notebooks/`, its last run, how long it took on the machine that built this site and its parameters. "
        "*cached* means the notebook's source, its parameters and the library were unchanged, so the previous "
        "run was kept. The full provenance of each run is in `_build/results/<name>/run.json`.", "",
        f"Last batch: profile **{profile}**, written {now}. Sum of run times: {total:.1f} s. "
        f"Machine: {summary_line()}.",
        "", "| Notebook | Last run, profile (this batch) | Seconds | Parameters |", "|---|---|---|---|", *rows, "",
        f"Reproduce all of them: `python -m gcc.reproduce --profile {profile}`; one of them: "
        f"`python -m gcc.reproduce --profile {profile} --only <name>`.", ""]))


def write_placeholders(cards: dict[str, Card], generated: Path) -> list[str]:
    """A page for every notebook not run yet (its title, "not run yet" and the command); remove stale ones."""
    missing = []
    for card in cards.values():
        page = Path(generated) / f"{card.name}.md"
        if (Path(generated) / f"{card.name}.ipynb").exists():
            page.unlink(missing_ok=True)
            continue
        missing.append(card.name)
        write_text(page, f"# {card.title}\n\n```{{admonition}} Not run yet\n:class: warning\nThis notebook has not "
                   f"been run for this build. Run it, then rebuild the book:\n\n    python -m gcc.reproduce "
                   f"--profile default --only {card.name}\n    make html\n```\n")
    return missing


def _stage(root: Path, generated: Path, site: Path) -> Path:
    """A book tree at ``site`` whose pages link to ``root``'s and whose ``book/generated`` is ``generated``."""
    shutil.rmtree(site, ignore_errors=True)
    (site / "book").mkdir(parents=True)
    for item in (root / "book").iterdir():
        if item.name != "generated":
            (site / "book" / item.name).symlink_to(item.resolve(), target_is_directory=item.is_dir())
    (site / "book" / "generated").symlink_to(generated.resolve(), target_is_directory=True)
    shutil.copy(root / "_toc.yml", site / "_toc.yml")
    return site


def _substitutions(root: Path, generated: Path) -> tuple[dict, list[str]]:
    """The MyST substitutions ``{notebook: {key: text}}``, and what the chapters quote that no run measured."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted((root / "book").rglob("*.md"))
                   if "generated" not in p.relative_to(root / "book").parts)
    folder = generated / VALUES_DIR
    subs = {p.stem: {str(k): str(v) for k, v in json.loads(p.read_text()).items()}
            for p in sorted(folder.glob("*.json"))}
    missing = []
    for notebook, key in sorted(set(_REFERENCE.findall(text))):
        if key not in subs.get(notebook, {}):
            subs.setdefault(notebook, {})[key] = f"[not measured yet: python -m gcc.reproduce --only {notebook}]"
            missing.append(f"{notebook}.{key}")
    for file in sorted(set(_INCLUDE.findall(text))):
        if not (folder / file).exists():
            write_text(folder / file, f"[not measured yet: python -m gcc.reproduce --only {file.split('.')[0]}]\n")
            missing.append(file)
    return subs, missing


@validate_params({"all_pages": BOOL})
def build_book(all_pages: bool = False, output: Path | None = None,
               generated_dir: Path | None = None, results_root: Path | None = None) -> int:
    """Build the site with ``jupyter-book build -W -n --keep-going`` (warnings are errors); its exit status.

    ``generated_dir`` other than ``<root>/book/generated`` needs an ``output`` folder of its own.
    """
    import yaml

    from gcc.assignments.build import sync_book

    root = repo_root()
    own = root / "book" / "generated"
    generated = writable_folder(generated_dir, "generated_dir", "build_book") if generated_dir else own
    output = writable_folder(output, "output", "build_book") if output is not None else None
    if generated != own.resolve() and output is None:  # one producer per artifact: _build/html from book/generated
        raise invalid("output", "build_book", "a folder of its own when generated_dir is not book/generated", output)
    build = Path(output if output is not None else root).resolve() / "_build"   # created by the first write
    cards = discover(root / "notebooks")
    sync_book(dest=generated / "assignments")  # the student notebooks, generated here (never committed)
    if not (generated / "status.md").exists():
        write_status(cards, "default", generated / "status.md", results_root or default_results_root())
    missing = write_placeholders(cards, generated)
    if missing:
        print(f"note: not run yet, shown as pages that give their command: {', '.join(missing)}", flush=True)
    source = _stage(root, generated, build / "_site") if generated != own.resolve() else root
    config_path = build / "_config.effective.yml"
    config = load_yaml(root / "_config.yml")
    subs, unmeasured = _substitutions(root, generated)
    parse = config.setdefault("parse", {})
    parse["myst_substitutions"] = {**(parse.get("myst_substitutions") or {}), **subs}
    write_text(config_path, "# Written by gcc.reproduce from _config.yml and the runs' values; do not edit.\n"
               + yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    if unmeasured:
        print("note: values quoted by the chapters that no run has measured yet: " + ", ".join(unmeasured), flush=True)
    exe = Path(sys.executable).parent / "jupyter-book"
    cmd = [str(exe) if exe.exists() else "jupyter-book", "build", str(source.resolve()),
           "-W", "-n", "--keep-going", *(["--all"] if all_pages else []),
           *(["--path-output", str(Path(output).resolve())] if output is not None else []),
           "--config", str(config_path)]
    print("$ " + " ".join(cmd), flush=True)
    t0 = time.perf_counter()
    rc = subprocess.call(cmd, cwd=root)
    print(f"book build: exit {rc} in {time.perf_counter() - t0:.1f} s; open {build / 'html' / 'index.html'}",
          flush=True)
    return rc
