"""What a reader sees on the notebook pages of the built book (the ci batch's test build).

Every notebook page shows no code until its toggle is opened, not papermill's injected cell, no
absolute path of the build machine, no warning and no stderr; its figures are wide enough to
read, the first output is the headline figure, integer columns read as integers, and every value a
chapter quotes was measured. The test batch and its book leave the book's own folders alone.
The source notebooks are text, short and define nothing.
"""
from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from gcc import reproduce
from gcc.notebooks import parameters_cell, read_source

REPO = Path(__file__).resolve().parent.parent

#: Narrowest figure (pixels) a page may show: the text column is about 800 px wide.
MIN_FIGURE_WIDTH = 600

#: What the build machine would leak into a page.
_LEAKS = [
    (re.compile(r"PosixPath\("), "a PosixPath repr"),
    (re.compile(r"site-packages"), "a site-packages path"),
    (re.compile(r"(?<![\w.])/(?:work|home|root|tmp|usr|opt|var)/[\w.-]+/"), "an absolute path"),
    (re.compile(r"\b\w*Warning\b:"), "a warning"),
    (re.compile(r"Traceback \(most recent call last\)"), "a traceback"),
    (re.compile(r"\d+%\|[█▏▎▍▌▋▊▉ #]*\|"), "a progress bar"),
]


def _notebook_pages(html: Path) -> dict[str, Path]:
    pages = {}
    for name in reproduce.discover(REPO / "notebooks"):
        page = html / "book" / "generated" / f"{name}.html"
        if page.exists():
            pages[name] = page
    return pages


def _main(text: str) -> str:
    """The page's article (without the navigation, whose code-free text repeats on every page)."""
    match = re.search(r'<main[^>]*>(.*)</main>', text, re.S)
    return match.group(1) if match else text


def _cells(text: str) -> list[str]:
    """The HTML of each notebook cell of a page (from one cell's opening tag to the next's)."""
    starts = [m.start() for m in re.finditer(r'<div class="cell(?: [^"]*)? docutils container">', text)]
    return [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]


def _png_width(path: Path) -> int:
    with open(path, "rb") as fh:
        head = fh.read(24)
    return struct.unpack(">I", head[16:20])[0] if head[:8] == b"\x89PNG\r\n\x1a\n" else 0


@pytest.mark.slow
def test_code_is_behind_a_toggle_and_the_injected_cell_is_not_on_the_page(html):
    problems = []
    for name, page in _notebook_pages(html).items():
        text = _main(page.read_text())
        if "tag_injected-parameters" in text:
            problems.append(f"{name}: papermill's injected-parameters cell is on the page")
        for i, cell in enumerate(_cells(text)):
            head = cell[:200]
            if 'class="cell_input' in cell and not re.search(r"tag_(hide-input|hide-cell|show-input)", head):
                problems.append(f"{name}: cell {i} shows its code without a toggle")
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_pages_show_no_path_warning_stderr_or_progress_bar(html):
    problems = []
    for name, page in _notebook_pages(html).items():
        text = _main(page.read_text())
        outputs = "".join(re.findall(r'<div class="cell_output docutils container">(.*?)</div>\s*</div>',
                                     text, re.S))
        if "output stderr" in text:
            problems.append(f"{name}: a stderr output")
        for pattern, what in _LEAKS:
            for match in pattern.finditer(outputs):
                problems.append(f"{name}: {what}: ...{outputs[max(0, match.start() - 40):match.end() + 40]!r}...")
                break
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_figures_are_wide_enough_and_the_headline_figure_comes_first(html):
    problems = []
    for name, page in _notebook_pages(html).items():
        text = _main(page.read_text())
        outputs = re.findall(r'<div class="cell_output docutils container">(.*?)(?=<div class="cell[ "]|\Z)',
                             text, re.S)
        images = re.findall(r'<img[^>]+src="([^"]+\.png)"', text)
        if not images:
            continue
        for src in images:
            width = _png_width((page.parent / src).resolve())
            if width < MIN_FIGURE_WIDTH:
                problems.append(f"{name}: figure {Path(src).name} is {width} px wide (at least {MIN_FIGURE_WIDTH})")
        first = next((o for o in outputs if re.search(r"<img|<table|<pre", o)), "")
        if "<img" not in first:
            problems.append(f"{name}: the first output is not the headline figure")
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_integer_columns_read_as_integers(html):
    problems = []
    for name, page in _notebook_pages(html).items():
        for table in re.findall(r"<table.*?</table>", _main(page.read_text()), re.S):
            rows = [re.findall(r"<t[dh][^>]*>\s*(.*?)\s*</t[dh]>", row, re.S)
                    for row in re.findall(r"<tr.*?</tr>", table, re.S)]
            body = [r for r in rows[1:] if r]
            if not body:
                continue
            for j in range(min(len(r) for r in body)):
                column = [r[j] for r in body]
                if all(re.fullmatch(r"-?\d+\.0+", c) for c in column):
                    header = rows[0][j] if j < len(rows[0]) else j
                    problems.append(f"{name}: column {header!r} shows integers as {column[0]}")
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_every_quoted_value_was_measured(html):
    problems = [f"{page.relative_to(html)}" for page in html.rglob("*.html")
                if "[not measured yet:" in page.read_text()]
    assert not problems, "pages quoting values no run measured:\n" + "\n".join(problems)


@pytest.mark.slow
def test_the_test_batch_leaves_the_books_folders_alone(ci_batch, book_build):
    from conftest import book_artifacts

    before = ci_batch.book_snapshot
    after = book_artifacts()
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    assert not changed, "the test batch wrote into the book's folders:\n" + "\n".join(changed[:20])


# --------------------------------------------------------------------------- the sources
def _code_lines(source: str) -> int:
    return sum(1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#"))


def test_notebooks_are_text_short_and_define_nothing():
    problems = []
    for name, card in reproduce.discover(REPO / "notebooks").items():
        if card.path.suffix != ".md":
            problems.append(f"{name}: stored as JSON ({card.path.name}); convert it to MyST markdown")
            continue
        nb = read_source(card.path)
        if nb.metadata.get("kernelspec", {}).get("name") != "gcc-companion":
            problems.append(f"{name}: kernelspec is not gcc-companion")
        params = parameters_cell(nb)
        code = [c for c in nb.cells if c.cell_type == "code" and c is not params]
        lines = sum(_code_lines(c.source) for c in code)
        if lines > 40:
            problems.append(f"{name}: {lines} lines of code outside the parameters cell (at most 40)")
        for c in code:
            if re.search(r"^\s*(def|class|async def)\s", c.source, re.M):
                problems.append(f"{name}: defines a function or class")
            if re.search(r"\bparams\s*=\s*dict\(|os\.environ\[", c.source):
                problems.append(f"{name}: retypes its parameters or rewrites os.environ")
    assert not problems, "\n".join(problems)


def test_no_page_speaks_of_the_digest():
    sources = list((REPO / "book").rglob("*.md")) + list((REPO / "notebooks").glob("*.md"))
    offenders = [str(p.relative_to(REPO)) for p in sources
                 if "generated" not in p.parts and re.search(r"\bdigest", p.read_text(), re.I)]
    assert not offenders, "say which paper or abstract a statement comes from:\n" + "\n".join(offenders)
