"""The Jupyter Book build of the static site from the executed notebooks.

Notebooks are never executed by Jupyter Book. Table-of-contents entries whose page does not
exist yet are left out of the build (and listed); executed notebooks missing from ``_toc.yml``
are added under "Other notebooks" so that no result is lost. The assignments' pages are written
into ``book/generated/assignments`` by each build (:func:`gcc.assignments.build.sync_book`). The values the runs recorded
(``book/generated/values/*.json``) become the MyST substitutions of the build
(``{{ notebook.key }}`` in a chapter), through an effective copy of ``_config.yml``.

A build from another folder of executed notebooks (the test suite's ``_build/test/generated``)
stages the book in ``<output>/_site``: links to the chapters, with ``book/generated`` pointing
at that folder, so the book's own ``book/generated`` is neither read nor written.
"""
from __future__ import annotations

import copy
import shutil
import subprocess
import sys
import time
from pathlib import Path

from gcc.atomic import write_text
from gcc.validation import BOOL, invalid, validate_params

from .cards import discover, load_yaml
from .locations import check_output_dir, default_results_root, relative, repo_root
from .pages import placeholder_includes, referenced_includes, referenced_values, substitutions
from .status import write_parameters_page, write_status

__all__ = ["toc_entries", "effective_toc", "build_book"]

_PAGE_SUFFIXES = (".md", ".ipynb", ".rst")


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
    toc = load_yaml(root / "_toc.yml")
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
        if nb.name.startswith("."):  # a run's temporary notebook (gcc.atomic), not a page
            continue
        entry = nb.relative_to(root).with_suffix("").as_posix()
        if entry not in listed:
            added.append(entry)
    if added:
        toc.setdefault("parts", []).append(
            {"caption": "Other notebooks", "chapters": [{"file": e} for e in added]}
        )
    return toc, missing, added


def _stage(root: Path, generated: Path, site: Path) -> Path:
    """A book tree at ``site`` whose pages link to ``root``'s and whose ``book/generated`` is ``generated``."""
    if site.exists():
        shutil.rmtree(site)
    (site / "book").mkdir(parents=True)
    for item in (root / "book").iterdir():
        if item.name != "generated":
            (site / "book" / item.name).symlink_to(item.resolve(), target_is_directory=item.is_dir())
    (site / "book" / "generated").symlink_to(generated.resolve(), target_is_directory=True)
    shutil.copy(root / "_toc.yml", site / "_toc.yml")
    return site


@validate_params({"strict": BOOL, "all_pages": BOOL})
def build_book(root: Path | None = None, strict: bool = True, all_pages: bool = False,
               output: Path | None = None, stream=None, generated_dir: Path | None = None,
               results_root: Path | None = None) -> int:
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
    stream : file, optional
        Where the notes and the command line go (default: stdout).
    generated_dir : path, optional
        The executed notebooks and generated pages (default: ``<root>/book/generated``); another
        folder is staged (see the module's docstring) and needs ``output``.
    results_root : path, optional
        Where the runs' records are, for a status page that does not exist yet (default:
        :func:`gcc.reproduce.default_results_root`).

    Returns
    -------
    int
        The exit status of ``jupyter-book build``.
    """
    import yaml

    stream = stream or sys.stdout
    root = Path(root) if root else repo_root()
    if not ((root / "_toc.yml").is_file() and (root / "_config.yml").is_file()):
        raise invalid("root", "build_book", "a book folder (with _toc.yml and _config.yml)", relative(root))
    own = root / "book" / "generated"
    generated = check_output_dir(generated_dir, "generated_dir", "build_book") if generated_dir else own
    if output is not None:
        output = check_output_dir(output, "output", "build_book")
    if generated.resolve() != own.resolve() and output is None:
        # One producer per artifact: the book's _build/html is built from book/generated only.
        raise invalid("output", "build_book", "a folder of its own when generated_dir is not book/generated",
                      output)
    build = Path(output if output is not None else root).resolve() / "_build"
    build.mkdir(parents=True, exist_ok=True)
    # Pages the book always includes, written here too so that a build never lacks them.
    cards = discover(root / "notebooks")
    write_parameters_page(cards, generated / "parameters.md")
    # The assignments' pages are the student notebooks, generated here (never committed).
    from gcc.assignments.build import sync_book

    sync_book(dest=generated / "assignments")
    if not (generated / "status.md").exists():
        write_status(cards, "default", generated / "status.md", results_root or default_results_root())
    source = root
    if generated.resolve() != own.resolve():
        source = _stage(root, generated, build / "_site")
    toc, missing, added = effective_toc(source)
    toc_path = build / "_toc.effective.yml"
    write_text(toc_path, "# Written by gcc.reproduce from _toc.yml; do not edit.\n"
               + yaml.safe_dump(toc, sort_keys=False))
    if missing:
        print("note: _toc.yml entries without a page yet, left out of this build: "
              + ", ".join(missing), file=stream, flush=True)
    if added:
        print("note: executed notebooks not in _toc.yml, added under 'Other notebooks': "
              + ", ".join(added), file=stream, flush=True)
    config = load_yaml(root / "_config.yml")
    pages = [p for p in (root / "book").rglob("*.md") if "generated" not in p.relative_to(root / "book").parts]
    subs, unmeasured = substitutions(generated, referenced_values(pages))
    unmeasured += placeholder_includes(generated, referenced_includes(pages))
    parse = config.setdefault("parse", {})
    parse["myst_substitutions"] = {**(parse.get("myst_substitutions") or {}), **subs}
    config_path = build / "_config.effective.yml"
    write_text(config_path, "# Written by gcc.reproduce from _config.yml and the runs' values; do not edit.\n"
               + yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    if unmeasured:
        print("note: values quoted by the chapters that no run has measured yet: "
              + ", ".join(unmeasured), file=stream, flush=True)
    exe = Path(sys.executable).parent / "jupyter-book"
    cmd = [str(exe) if exe.exists() else (shutil.which("jupyter-book") or "jupyter-book"), "build", str(source.resolve())]
    if strict:
        cmd += ["-W", "-n", "--keep-going"]
    if all_pages:
        cmd += ["--all"]
    if output is not None:
        cmd += ["--path-output", str(Path(output).resolve())]
    cmd += ["--toc", str(toc_path), "--config", str(config_path)]
    print("$ " + " ".join(cmd), file=stream, flush=True)
    t0 = time.perf_counter()
    rc = subprocess.call(cmd, cwd=root)
    html = build / "html" / "index.html"
    print(f"book build: exit {rc} in {time.perf_counter() - t0:.1f} s; open {html}", file=stream, flush=True)
    return rc
