"""Layout check of the built book in a real browser: what a reader at 1280 x 900 has to scroll sideways.

Serves a built site (``_build/html``) on 127.0.0.1, opens every page in headless Chromium at
1280 x 900 with MathJax rendered, and reports, per page:

* tables outside a collapsed ``<details>`` wider than the text column (their content's width,
  ``scrollWidth``, beyond the article's width: the reader scrolls the table sideways);
* tables outside ``<details>`` of more than 25 body rows (shown outright: a wall of numbers);
* display equations clipped: a MathJax container whose formula is wider than the container's
  parent (the reader scrolls it, or it is cut off).

Usage::

    python tools/check_layout.py _build/html            # every page, a summary and the problems
    python tools/check_layout.py _build/html --json out.json --pages book/generated/dnn_summary.html

Exit status 1 when a problem was found. :func:`check_site` is what ``tests/test_layout.py`` calls.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import re
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):  # run as a script (python tools/check_layout.py): the repository on the path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tools.browser import Site, chromium, dump_dom  # noqa: E402

#: the width of the text column at 1280 x 900 (the article of the book's theme), in CSS pixels
COLUMN_PX = 688
#: the longest table a page shows outright (gcc.display.MAX_ROWS)
MAX_ROWS = 25
WINDOW = "1280,900"

#: Measures the page once MathJax has typeset it; the JSON lands in <pre id="gcc-layout">.
_SCRIPT = r"""
<script>
(function () {
  function visible(el) {
    for (let p = el; p; p = p.parentElement) {
      if (p.tagName === "DETAILS") return false;
    }
    return el.getClientRects().length > 0;
  }
  function label(el) {
    const head = el.querySelector("thead tr") || el.querySelector("tr");
    return head ? head.innerText.replace(/\s+/g, " ").trim().slice(0, 90) : "";
  }
  function measure() {
    const article = document.querySelector("article.bd-article") || document.querySelector("main") || document.body;
    const style = getComputedStyle(article);
    const column = article.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const out = {column: column, tables: [], equations: []};
    document.querySelectorAll("article table, main table").forEach(function (t) {
      if (!visible(t)) return;
      const rows = t.querySelectorAll("tbody > tr").length || t.querySelectorAll("tr").length - 1;
      out.tables.push({width: Math.max(t.scrollWidth, t.getBoundingClientRect().width), rows: rows,
                       label: label(t)});
    });
    document.querySelectorAll('mjx-container[display="true"]').forEach(function (c) {
      if (!visible(c)) return;
      const math = c.querySelector("mjx-math") || c.firstElementChild;
      const parent = c.parentElement;
      const width = math ? math.getBoundingClientRect().width : c.scrollWidth;
      const room = Math.min(parent.clientWidth || column, column);
      const tex = (c.getAttribute("aria-label") || (c.previousSibling && c.previousSibling.textContent) || "");
      out.equations.push({width: width, room: room, label: c.innerText.replace(/\s+/g, " ").slice(0, 90) || tex});
    });
    const pre = document.createElement("pre");
    pre.id = "gcc-layout";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }
  function start() {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      MathJax.startup.promise.then(function () { setTimeout(measure, 200); });
    } else {
      setTimeout(measure, 500);
    }
  }
  if (document.readyState === "complete") start(); else window.addEventListener("load", start);
})();
</script>
"""


def measure_page(browser: str, url: str, profile: Path) -> dict:
    """The column width, visible tables and display equations of the page at `url` (see module docstring)."""
    for _ in range(3):  # a loaded machine can end the virtual time before the page settles: try again
        proc = dump_dom(browser, url, profile, budget_ms=15000, window=WINDOW)
        match = re.search(r'<pre id="gcc-layout">(.*?)</pre>', proc.stdout, flags=re.S)
        if match is not None:
            break
    if match is None:
        raise RuntimeError(f"no measurement from {url} (exit {proc.returncode}): {proc.stderr[-1500:]}")
    import html
    return json.loads(html.unescape(match.group(1)))


def problems_of(page: str, m: dict, column: float = COLUMN_PX) -> list[str]:
    """The problems of one page's measurement `m` (tables too wide or too long, clipped equations)."""
    column = min(column, m.get("column") or column)
    out = []
    for t in m["tables"]:
        if t["width"] > column + 1:
            out.append(f"{page}: table {t['width']:.0f} px wide (column {column:.0f}): {t['label'][:60]}")
        if t["rows"] > MAX_ROWS:
            out.append(f"{page}: table of {t['rows']} rows shown outright: {t['label'][:60]}")
    for e in m["equations"]:
        if e["width"] > e["room"] + 1:
            out.append(f"{page}: display equation {e['width']:.0f} px wide in {e['room']:.0f} px: {e['label'][:60]}")
    return out


def pages_of(root: Path) -> list[str]:
    """The book's pages under `root` (relative paths), search and index pages aside.

    Redirect pages (the site's root ``index.html``, a meta refresh) have no layout of their own:
    measuring one raced the redirect on a loaded machine, so they are left out.
    """
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.html")
                  if "_static" not in p.parts and p.name not in ("search.html", "genindex.html")
                  and 'http-equiv="Refresh"' not in p.read_text(errors="replace")[:1000])


def check_site(root, pages=None, browser: str | None = None) -> dict:
    """Measure `pages` (default every page) of the built site `root`.

    Returns
    -------
    dict
        ``{"pages": {page: measurement}, "problems": [str], "counts": {"wide_tables", "long_tables",
        "clipped_equations", "pages_with_problems"}}``.
    """
    root = Path(root)
    browser = browser or chromium()
    if browser is None:
        raise RuntimeError("no chromium on PATH (apt-get install -y chromium)")
    pages = pages or pages_of(root)
    # Two browsers at a time: a page's load is mostly Chromium's start-up, one process per page.
    with Site(root, inject=_SCRIPT) as server, tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        profiles = [Path(tmp) / f"p{i}" for i in range(len(pages))]
        measured = dict(zip(pages, pool.map(measure_page, [browser] * len(pages), map(server.url, pages), profiles)))
    problems = [problem for page in pages for problem in problems_of(page, measured[page])]
    counts = {"wide_tables": sum(" px wide (column" in p for p in problems),
              "long_tables": sum(" rows shown outright" in p for p in problems),
              "clipped_equations": sum("display equation" in p for p in problems),
              "pages_with_problems": len({p.split(":")[0] for p in problems})}
    return {"pages": measured, "problems": problems, "counts": counts}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", help="the built site (_build/html)")
    parser.add_argument("--pages", nargs="*", help="pages relative to root (default: every page)")
    parser.add_argument("--json", help="write the measurements and problems here")
    args = parser.parse_args(argv)
    report = check_site(args.root, args.pages)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    print("\n".join(report["problems"]))
    print(json.dumps(report["counts"]))
    return 1 if report["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
