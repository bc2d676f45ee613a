"""The static site: it builds from the executed notebooks with no warning, every _toc entry has a
page, notebook pages carry their figures, nothing is loaded from another host, and a real browser
renders the math (MathJax, vendored) and the figures from a local server."""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest
import yaml

from gcc import reproduce

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for tools/
from tools.browser import Site, chromium, dump_dom  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow


def toc_files() -> list[str]:
    """Every ``file`` of ``_toc.yml``, root first."""
    toc = yaml.safe_load((REPO / "_toc.yml").read_text())
    return [toc["root"]] + re.findall(r"'file': '([^']+)'", str(toc))


def test_book_builds_without_warnings(book_build):
    proc, _ = book_build
    log = proc.stdout + proc.stderr
    warnings = [line for line in log.splitlines() if "WARNING" in line or "ERROR" in line]
    assert proc.returncode == 0 and not warnings, "\n".join(warnings) or log[-5000:]


def test_every_toc_entry_produced_a_page(html):
    missing = []
    for entry in toc_files():
        stem = re.sub(r"\.(md|ipynb|rst)$", "", entry)
        if not (html / f"{stem}.html").exists():
            hint = ""
            if stem.startswith("book/generated/"):
                hint = f" (no notebook notebooks/{Path(stem).name}.md, or it did not run)"
            missing.append(stem + hint)
    assert not missing, "_toc.yml entries without a page:\n" + "\n".join(missing)


def test_every_notebook_page_carries_its_figures(html, ci_generated):
    problems = []
    for name in reproduce.discover(REPO / "notebooks"):
        executed = ci_generated / f"{name}.ipynb"
        if not executed.exists():
            problems.append(f"{name}: not executed (run python -m gcc.reproduce --profile ci --only {name})")
            continue
        figures = sum(1 for cell in json.loads(executed.read_text())["cells"]
                      for out in cell.get("outputs", [])
                      if {"image/png", "image/svg+xml"} & set(out.get("data", {})))
        page = html / "book" / "generated" / f"{name}.html"
        if not page.exists():
            problems.append(f"{name}: no page")
            continue
        text = page.read_text()
        imgs = re.findall(r'<img[^>]+src="([^"]+)"', text)
        shown = [src for src in imgs if src.startswith("data:image/") or re.search(r"\.(png|svg)$", src)]
        if len(shown) < figures:
            problems.append(f"{name}: {figures} figure output(s) in the notebook, {len(shown)} <img> on the page")
        for src in shown:
            if not src.startswith("data:") and not (page.parent / src).resolve().exists():
                problems.append(f"{name}: image file {src} missing")
    assert not problems, "\n".join(problems)


def test_no_script_or_stylesheet_from_another_host(html):
    offenders = []
    for page in html.rglob("*.html"):
        text = page.read_text(errors="replace")
        for tag in re.findall(r"<script\b[^>]*>", text):
            if re.search(r'\bsrc="(https?:)?//', tag):
                offenders.append(f"{page.relative_to(html)}: {tag}")
        for tag in re.findall(r"<link\b[^>]*>", text):
            if re.search(r'rel="(stylesheet|preload|modulepreload)"', tag) and re.search(r'href="(https?:)?//', tag):
                offenders.append(f"{page.relative_to(html)}: {tag}")
    assert not offenders, "\n".join(offenders[:20])


def test_mathjax_is_vendored_and_used(html):
    js = html / "mathjax" / "es5" / "tex-mml-chtml.js"
    assert js.exists()
    assert any((html / "mathjax" / "es5" / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))
    page = (html / "book" / "04_worst_case.html").read_text()
    assert re.search(r'<script[^>]+src="[./]*_static/\.\./mathjax/es5/tex-mml-chtml\.js', page)


# --------------------------------------------------------------------------- real browser
def _dump_dom(browser: str, url: str, profile: Path) -> str:
    proc = dump_dom(browser, url, profile)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@pytest.fixture(scope="session")
def browser():
    path = chromium()
    if path is None:
        pytest.skip("no chromium on PATH: `make test` installs Debian's chromium when run as root "
                    "(apt-get install -y chromium); install it to run the browser test")
    return path


def test_browser_renders_math_and_figures(html, browser, tmp_path):
    with Site(html) as server:
        base = f"http://127.0.0.1:{server.port}"
        # A prose chapter: display and inline math.
        dom = _dump_dom(browser, f"{base}/book/04_worst_case.html", tmp_path / "p1")
        assert dom.count("<mjx-container") >= 5, "the chapter's math was not rendered by MathJax"
        assert "MathJax" in dom or "mjx-" in dom
        # A notebook page: math in its markdown and its figures.
        dom = _dump_dom(browser, f"{base}/book/generated/quickstart.html", tmp_path / "p2")
        assert "<mjx-container" in dom, "the notebook page's math was not rendered"
        imgs = re.findall(r'<img[^>]+src="([^"]+\.(?:png|svg))"', dom)
        assert imgs, "no figure <img> in the rendered notebook page"
        requested = dict(server.requests)
    # The browser fetched the figures, MathJax and its fonts from this server, and all of it was found.
    assert any(p.startswith("/_images/") and p.endswith((".png", ".svg")) and s == 200 for p, s in requested.items())
    assert requested.get("/mathjax/es5/tex-mml-chtml.js") == 200
    assert any(p.startswith("/mathjax/es5/output/chtml/fonts/") and s == 200 for p, s in requested.items())
    failed = {p: s for p, s in requested.items() if s >= 400 and p != "/favicon.ico"}
    assert not failed, failed
