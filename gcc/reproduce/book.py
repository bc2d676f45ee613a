"""The Jupyter Book build of the static site from the executed notebooks.

Notebooks are never executed by Jupyter Book. Table-of-contents entries whose page does not
exist yet are left out of the build (and listed); executed notebooks missing from ``_toc.yml``
are added under "Other notebooks" so that no result is lost.
"""
from __future__ import annotations

import copy
import shutil
import subprocess
import sys
import time
from pathlib import Path

from .cards import discover, load_yaml
from .locations import default_results_root, repo_root
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
    stream : file, optional
        Where the notes and the command line go (default: stdout).

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
