"""Internal names on the built pages: claim ids shown without a legend, raw column keys in prose.

* A **claim id** (the short names of :data:`gcc.experiments.claims.CLAIMS` and
  :data:`gcc.experiments.dnn_claims.DNN_CLAIMS`, e.g. ``thm1-N-joint``) may be shown on a page only
  where the same page explains it: a table whose header holds ``short name`` lists it (the
  claims page's glossary). Anywhere else (prose, a table, a figure's caption) it is a problem.
* A **column key** (a table header of the built book, or a column of a saved result table, with an
  underscore: ``gcc_tanh_joint_n_ci``, ``normalised_sup``) may appear in a table (as its header)
  but not in prose (a paragraph or a list item, inline code included), unless a legend table of
  the page (first header ``short name`` or ``column``) lists it. Parameter names are left to
  ``tests/test_pages.py`` (a value belongs there, not a legend).

Usage: ``python tools/check_names.py _build/html [results root]``; exit status 1 on a problem.
:func:`site_problems` is what ``tests/test_page_names.py`` calls.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

#: first header cell of a legend table (its first column lists the names it explains)
LEGEND_HEADERS = ("short name", "column", "key")


def claim_ids() -> list[str]:
    """Every claim id of the claims table (rate claims and the networks' claims)."""
    from gcc.experiments.claims import CLAIMS
    from gcc.experiments.dnn_claims import DNN_CLAIMS

    # an id without a hyphen ("adversarial") is an English word as well: not checked
    return [i for i in [c.id for c in CLAIMS] + list(DNN_CLAIMS) if "-" in i]


def _soup(html: str):
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    main = soup.find("main") or soup
    for tag in main.find_all(["script", "style", "nav"]):
        tag.decompose()
    # formulas are TeX, not names
    for tag in main.find_all(class_="math"):
        tag.decompose()
    for tag in main.find_all("wbr"):
        tag.unwrap()
    return main


def _header(table) -> list[str]:
    row = table.find("tr")
    return [c.get_text(" ", strip=True) for c in row.find_all(["th", "td"])] if row else []


def _legend(main) -> set[str]:
    """The names the page's legend tables list (first column of a table headed ``short name`` / ``column``)."""
    names = set()
    for table in main.find_all("table"):
        head = _header(table)
        if head and head[0].strip().lower() in LEGEND_HEADERS:
            for row in table.find_all("tr")[1:]:
                cell = row.find(["td", "th"])
                if cell is not None:
                    names.add(cell.get_text("", strip=True))
    return names


def _token(name: str) -> re.Pattern:
    return re.compile(rf"(?<![\w./-]){re.escape(name)}(?![\w/(-]|\.\w)")


def _prose(main) -> list[str]:
    """The text of each paragraph and list item outside tables and code blocks (inline code kept)."""
    out = []
    for tag in main.find_all(["p", "li", "dt", "dd", "figcaption", "summary"]):
        if tag.find_parent(["table", "pre"]) is not None:
            continue
        if tag.name == "li" and tag.find("p") is not None:
            continue  # its paragraphs are read themselves
        out.append(tag.get_text("", strip=False))
    return out


def unexplained_claim_ids(html: str, ids=None) -> list[str]:
    """Claim ids the page shows (its main text, code blocks aside) without listing them in a legend table."""
    main = _soup(html)
    for block in main.find_all(["pre"]) + main.find_all(class_="cell_input"):
        block.decompose()  # a notebook's code (behind its toggle) is not what the page shows
    text = main.get_text(" ")
    legend = _legend(main)
    ids = claim_ids() if ids is None else ids
    return sorted(i for i in ids if i not in legend and _token(i).search(text))


def prose_column_keys(html: str, keys) -> list[str]:
    """Column ``keys`` (with an underscore) that the page's prose prints, and no legend of the page lists."""
    main = _soup(html)
    legend = _legend(main)
    prose = _prose(main)
    found = []
    for key in sorted(set(keys)):
        if "_" not in key or key in legend:
            continue
        pattern = _token(key)
        if any(pattern.search(p) for p in prose):
            found.append(key)
    return found


def column_keys(html_root, results_root=None, exclude=()) -> set[str]:
    """Every table header with an underscore in the built site (and every column of the saved result tables)."""
    from bs4 import BeautifulSoup

    keys = set()
    for page in Path(html_root).rglob("*.html"):
        if "_static" in page.parts:
            continue
        soup = BeautifulSoup(page.read_text(encoding="utf-8", errors="replace"), "html.parser")
        for wbr in soup.find_all("wbr"):
            wbr.unwrap()
        for th in soup.find_all("th"):
            text = th.get_text("", strip=True)
            if re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)+", text):
                keys.add(text)
    if results_root is not None:
        for csv in Path(results_root).rglob("*.csv"):
            head = csv.open(encoding="utf-8", errors="replace").readline().strip().split(",")
            keys |= {h.strip('"') for h in head if re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)+", h.strip('"'))}
    return keys - set(exclude)


def notebook_names() -> set[str]:
    """The notebooks' names and every parameter name of their parameters cells (left to tests/test_pages.py)."""
    from gcc.notebooks import parameters
    from gcc.reproduce import discover

    repo = Path(__file__).resolve().parent.parent
    names = set()
    for name, card in discover(repo / "notebooks").items():
        names.add(name)
        names |= set(parameters(card.path))
    return names


def site_problems(html_root, results_root=None) -> list[str]:
    """Every page of the built site: claim ids without a legend, column keys in prose."""
    html_root = Path(html_root)
    keys = column_keys(html_root, results_root, exclude=notebook_names())
    ids = claim_ids()
    problems = []
    for page in sorted(html_root.rglob("*.html")):
        if "_static" in page.parts or page.name in ("search.html", "genindex.html"):
            continue
        html = page.read_text(encoding="utf-8", errors="replace")
        where = page.relative_to(html_root).as_posix()
        problems += [f"{where}: claim id {i!r} shown without a legend" for i in unexplained_claim_ids(html, ids)]
        problems += [f"{where}: column key {k!r} in prose (say it in words, or give a legend)"
                     for k in prose_column_keys(html, keys)]
    return problems


if __name__ == "__main__":
    found = site_problems(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
    print("\n".join(found))
    print(f"{len(found)} problems")
    sys.exit(1 if found else 0)
