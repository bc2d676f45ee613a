"""The first screen of a notebook page: its result box, then its headline figure.

Unit tests of :func:`gcc.reproduce.pages.finish_page` (``{{ value.<key> }}``, the headline figure
moved under the box, the run's parameters collapsed) and of
:func:`gcc.experiments.claims_page.record_verdicts`; over the built ci book (slow): every notebook page opens with
its result box right after the title, the box has no hole, and the headline figure follows it; in
Chromium at 1280 x 900, the box and the start of the figure lie inside the first 900 px.
"""
from __future__ import annotations

import html as html_lib
import json
import re
import sys
from pathlib import Path

import pytest

from gcc.reproduce.pages import RESULT_CLASS, finish_page, headline_first

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for tools/
from tools.browser import Site, chromium, dump_dom  # noqa: E402

#: Notebook pages without a result box of their own: none since issue 26 (the claims page has one too).
NO_BOX: frozenset = frozenset()
#: The first screen (px) in which the box and the start of the headline figure must lie.
FIRST_SCREEN = 900

_BOX = f":::{{admonition}} Result\n:class: {RESULT_CLASS}\n- **Measured**: {{{{ value.slope }}}} and {{{{ value.nope }}}}\n:::"


def _figure(tag: str) -> dict:
    return {"output_type": "display_data", "data": {"image/png": tag, "text/plain": "<Figure>"}, "metadata": {}}


def _page(tmp_path: Path, box: str = _BOX) -> Path:
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": "# Title\n\n" + box},
        {"cell_type": "markdown", "metadata": {}, "source": "Method, {{ run.n }} workers, profile {{ run.profile }}."},
        {"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": "n = 3   # N", "outputs": [],
         "execution_count": 1},
        {"cell_type": "code", "metadata": {}, "source": "plot()", "execution_count": 2,
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "a table\n"}, _figure("first")]},
        {"cell_type": "code", "metadata": {}, "source": "plot2()", "outputs": [_figure("second")], "execution_count": 3},
    ]
    path = tmp_path / "page.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def test_recorded_values_fill_the_prose_and_an_unknown_key_stays_a_hole(tmp_path):
    path = _page(tmp_path)
    values = {"slope": {"value": -3.01, "text": "\u22123.01", "unit": "", "note": ""}}
    finish_page(path, "gcc-companion", "ci", {"n": 5}, values)
    cells = json.loads(path.read_text())["cells"]
    assert "**Measured**: \u22123.01 and {{ value.nope }}" in cells[0]["source"]
    assert cells[2]["source"] == "Method, 5 workers, profile ci."


def test_a_box_that_says_its_headline_is_a_table_keeps_the_figures_in_place():
    box = {"cell_type": "markdown", "source": ":::{admonition} R\n:class: gcc-result\nx\n:::\n\n% headline-figure: none"}
    fig = {"output_type": "display_data", "data": {"image/png": "..."}, "metadata": {}}
    cells = [box, {"cell_type": "code", "metadata": {}, "source": "plot()", "outputs": [fig]}]
    assert headline_first(cells) is False and len(cells) == 2 and cells[1]["outputs"] == [fig]


def test_the_headline_figure_follows_the_box_once(tmp_path):
    path = _page(tmp_path)
    finish_page(path, "gcc-companion", "ci", {"n": 5}, {})
    cells = json.loads(path.read_text())["cells"]
    moved = cells[1]
    assert moved["metadata"]["tags"] == ["remove-input", "headline-figure"]
    assert moved["source"].startswith("# ")  # a comment: myst-nb skips a cell without source
    assert [o["data"]["image/png"] for o in moved["outputs"]] == ["first"]
    drawn = next(c for c in cells if c.get("source") == "plot()")
    assert [o["output_type"] for o in drawn["outputs"]] == ["stream"]  # its other output stays
    before = path.read_text()
    finish_page(path, "gcc-companion", "ci", {"n": 5}, {})  # a finished page is left as it is
    assert json.loads(path.read_text())["cells"] == json.loads(before)["cells"]


def test_a_page_without_box_is_unchanged():
    plain = [{"cell_type": "markdown", "source": "# T\n\nNo box."},
             {"cell_type": "code", "metadata": {}, "source": "x", "outputs": [_figure("f")]}]
    assert headline_first(plain) is False and len(plain) == 2


def test_the_run_parameters_are_collapsed(tmp_path):
    path = _page(tmp_path)
    finish_page(path, "gcc-companion", "ci", {"n": 5})
    shown = next(c for c in json.loads(path.read_text())["cells"]
                 if "run-parameters" in c["metadata"].get("tags", []))
    assert shown["source"].startswith(":::{dropdown} Parameters of this run (profile ci): 1 value")
    assert "| `n` | `5` | N |" in shown["source"] and shown["source"].endswith("\n:::")


def test_record_verdicts_count_a_notebooks_rows_of_the_claims_table(tmp_path):
    """Independent count: the rows the claims table gives the notebook, counted here by hand."""
    from types import SimpleNamespace

    from gcc.experiments import claims, claims_page

    table = claims.build_claims_table(tmp_path, include_dnn=False)  # no results: every row "not measured"
    values = {}
    run = SimpleNamespace(folder=tmp_path / "worst_case_rate",
                          value=lambda key, number, note="": values.update({key: number}))
    claims_page.record_verdicts(run, {"thm1": "thm1-N"})
    assert values == {"verdicts": "none", "verdicts_thm1": "none"}
    assert not table["counted"].astype(bool).any()
    assert claims_page.verdict_text(["undecided", "tight", "agrees", "tight"]) == "2 tight, 1 undecided, 1 agrees"


# --------------------------------------------------------------------------- the built ci book
def _box_pages(html_root: Path) -> dict[str, Path]:
    from test_pages import _notebook_pages

    return {name: page for name, page in _notebook_pages(html_root).items() if name not in NO_BOX}


def _after_title(article: str) -> str:
    """The article's HTML from the end of its h1 (the page title, the h1 with a heading link)."""
    match = re.search(r'<h1\b[^>]*>(?:(?!</h1>).)*?class="headerlink"(?:(?!</h1>).)*?</h1>', article, re.S)
    return article[match.end():] if match else ""


def _box(after: str) -> str:
    """The result box's HTML when it is the first element after the title, else ''."""
    match = re.match(rf'\s*<div class="(?=[^"]*\b{RESULT_CLASS}\b)[^"]*\badmonition\b[^"]*"[^>]*>', after)
    if not match:
        return ""
    depth, i = 1, match.end()
    for tag in re.finditer(r"<(/?)div\b[^>]*>", after[i:]):
        depth += -1 if tag.group(1) else 1
        if depth == 0:
            return after[: i + tag.end()]
    return after


def box_problems(text: str) -> list[str]:
    """What is wrong with a notebook page's first block: its result box, then its headline figure."""
    from test_pages import _main, template_holes

    after = _after_title(_main(text))
    box = _box(after)
    if not box:
        return [f"the first block after the title is not the result box: {re.sub(r'<[^>]+>', ' ', after[:300]).split()[:12]}"]
    problems = []
    holes = template_holes(f"<main>{box}</main>")
    words = html_lib.unescape(re.sub(r"<[^>]+>", " ", box))
    if holes or "{{" in words:
        problems.append(f"a hole in the result box: {holes or words}")
    rest = after[len(box):]
    if "<img" in rest:  # a page with figures: the headline figure comes next
        following = re.match(r'\s*<div class="cell ([^"]*)"', rest)
        if not following or "tag_headline-figure" not in following.group(1) or "<img" not in rest[:3000]:
            problems.append("the headline figure does not follow the result box")
    return problems


def test_box_problems_on_synthetic_pages():
    fig = '<div class="cell tag_remove-input tag_headline-figure docutils container"><img src="a.png"></div>'
    box = f'<div class="admonition {RESULT_CLASS}"><p class="admonition-title">Result</p><div><p>x</p></div></div>'
    h1 = '<h1>T<a class="headerlink" href="#t">#</a></h1>'
    good = f"<main><h1>Contents</h1><section>{h1}{box}{fig}<p>Method</p></section></main>"
    assert box_problems(good) == []
    assert box_problems(good.replace(">x<", ">{{ value.x }}<"))[0].startswith("a hole in the result box")
    assert box_problems(f"<main>{h1}<p>Method</p>{box}{fig}</main>")[0].startswith("the first block")
    assert box_problems(f"<main>{h1}{box}<p>Method</p>{fig}</main>") == [
        "the headline figure does not follow the result box"]
    assert box_problems(f"<main>{h1}{box}<p>no figure on this page</p></main>") == []
    swapped = good.replace(f'"admonition {RESULT_CLASS}"', f'"{RESULT_CLASS} admonition"')
    assert box_problems(swapped) == []


@pytest.mark.slow
def test_every_notebook_page_opens_with_its_result_box_then_its_figure(html):
    pages = _box_pages(html)
    assert len(pages) >= 19, sorted(pages)
    from test_pages import HEADLINE_TABLE_PAGES

    problems = [f"{name}: {p}" for name, page in pages.items() for p in box_problems(page.read_text())
                if not (name in HEADLINE_TABLE_PAGES and p.startswith("the headline figure"))]
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------- Chromium, 1280 x 900
_PROBE = """<script>window.addEventListener('load', function () { setTimeout(function () {
  var box = document.querySelector('main div.admonition.%s');
  var fig = document.querySelector('main .tag_headline-figure img');
  function top(e) { return e ? e.getBoundingClientRect().top + window.scrollY : null; }
  var out = document.createElement('pre'); out.id = 'gcc-first-screen';
  out.textContent = 'GCC-FIRST-SCREEN ' + JSON.stringify({box: top(box), box_bottom: box ? top(box) + box.getBoundingClientRect().height : null,
    figure: top(fig), width: window.innerWidth});
  document.body.appendChild(out); }, 300); });</script>""" % RESULT_CLASS


def first_screen(browser: str, url: str, profile: Path) -> dict:
    """Where the result box and the headline figure start on ``url`` in Chromium at 1280 x 900 (px)."""
    proc = dump_dom(browser, url, profile)
    found = re.findall(r"GCC-FIRST-SCREEN (\{.*?\})</pre>", proc.stdout)
    assert found, f"no measurement from {url}: {proc.stderr[-2000:]}"
    return json.loads(html_lib.unescape(found[-1]))


@pytest.mark.slow
def test_chromium_shows_the_box_and_the_figure_in_the_first_screen(html, tmp_path):
    browser = chromium()
    if browser is None:
        pytest.skip("no chromium on PATH (apt-get install -y chromium)")
    from test_pages import HEADLINE_TABLE_PAGES, _main

    problems = []
    with Site(html, inject=_PROBE) as site:
        for name, page in sorted(_box_pages(html).items()):
            where = first_screen(browser, site.url(page.relative_to(html).as_posix()), tmp_path / name)
            if where["box"] is None or where["box_bottom"] > FIRST_SCREEN:
                problems.append(f"{name}: the result box ends at {where['box_bottom']} px (first screen {FIRST_SCREEN})")
            has_figure = "<img" in _main(page.read_text()) and name not in HEADLINE_TABLE_PAGES
            if has_figure and (where["figure"] is None or where["figure"] >= FIRST_SCREEN):
                problems.append(f"{name}: the headline figure starts at {where['figure']} px (first screen {FIRST_SCREEN})")
    assert not problems, "\n".join(problems)


def test_the_headline_figure_keeps_its_tag_when_its_cell_is_split():
    from gcc.reproduce.pages import figure_cells

    def image(label):
        return {"output_type": "display_data", "data": {"image/png": "x"},
                "metadata": {"gcc_figure": {"caption": label, "label": label}}}

    cell = {"cell_type": "code", "metadata": {"tags": ["remove-input", "headline-figure"]}, "source": "# moved",
            "outputs": [image("nb-a"), image("nb-b")]}
    cells = figure_cells([cell])
    tagged = [c for c in cells if c["outputs"] and "headline-figure" in c["metadata"]["tags"]]
    assert [c["metadata"]["gcc_figure"]["label"] for c in tagged] == ["nb-a"]
