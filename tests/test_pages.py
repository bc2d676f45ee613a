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


#: pages whose headline is a table, not a figure (page: why)
HEADLINE_TABLE_PAGES = {"claims_table": "a referee reads the papers' statements in words first (issue 23)"}


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
        if "<img" not in first and name not in HEADLINE_TABLE_PAGES:
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
    """Lines of code, not counting comments and the prose of a figure's ``caption=`` / ``alt=`` strings."""
    return sum(1 for i, line in enumerate(source.splitlines(), 1)
               if line.strip() and not line.strip().startswith("#") and i not in _prose_lines(source))


def _prose_lines(source: str) -> set[int]:
    """Line numbers that hold only string literals, optionally after ``caption=`` or ``alt=``."""
    import io
    import tokenize

    strings = {tokenize.STRING} | {getattr(tokenize, n) for n in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
                                   if hasattr(tokenize, n)}
    kinds: dict[int, set] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in strings:
                kind = "str"
            elif (tok.type == tokenize.OP and tok.string in ",)=+"
                  or tok.type == tokenize.NAME and tok.string in ("caption", "alt")):
                kind = "glue"
            elif tok.type in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT,
                              tokenize.ENDMARKER):
                continue
            else:
                kind = "code"
            for line in range(tok.start[0], tok.end[0] + 1):
                kinds.setdefault(line, set()).add(kind)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return set()
    return {line for line, found in kinds.items() if "str" in found and found <= {"str", "glue"}}


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


# --------------------------------------------------------------------------- what a page's text reads
# Checks over the HTML of a page (plain functions: tried on small synthetic pages below, then on the
# built book): no parameter name printed where a value belongs, no command a paste would break, no
# template hole.

#: The commands a reader pastes: the text of a <code>/<pre> that starts with one of these words.
COMMAND_WORDS = ("python", "make", "nbgrader", "dask", "jupyter-book", "pip")


class _PageText(__import__("html.parser").parser.HTMLParser):
    """Collects a page's prose (text of <p> outside tables and <pre>), its inline code and commands."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.prose: list[str] = []       # one entry per <p>
        self.prose_code: list[str] = []  # inline <code> inside a <p>
        self.code: list[str] = []        # every <code> / <pre> text
        self._p: list[str] | None = None
        self._code: list[str] | None = None
        self._skip = 0                   # inside <script>/<style>

    def handle_starttag(self, tag, attrs):
        if tag in ("br", "wbr", "img", "meta", "link", "input", "hr"):
            return
        self.stack.append(tag)
        if tag in ("script", "style"):
            self._skip += 1
        elif tag == "p" and not {"table", "pre"}.intersection(self.stack[:-1]):
            self._p = []
        elif tag in ("code", "pre") and self._code is None:
            self._code = []

    def handle_endtag(self, tag):
        if tag not in self.stack:
            return
        while self.stack:
            top = self.stack.pop()
            if top in ("script", "style"):
                self._skip -= 1
            if top in ("code", "pre") and self._code is not None and top not in self.stack:
                text = "".join(self._code)
                self.code.append(text)
                if self._p is not None:
                    self.prose_code.append(text)
                self._code = None
            if top == "p" and self._p is not None:
                self.prose.append("".join(self._p))
                self._p = None
            if top == tag:
                break

    def handle_data(self, data):
        if self._skip:
            return
        if self._code is not None:
            self._code.append(data)
        if self._p is not None:
            self._p.append(data)


def _without_math(html: str) -> str:
    """``html`` without its formulas (MathJax spans and blocks, whose braces are TeX's)."""
    html = re.sub(r'<(span|div) class="math[^"]*">.*?</\1>', " ", html, flags=re.S)
    return re.sub(r"\\\(.*?\\\)|\\\[.*?\\\]|\$\$.*?\$\$", " ", html, flags=re.S)


def page_text(html: str) -> _PageText:
    """The prose, inline code and code of the HTML ``html`` (its <main> when it has one), formulas aside."""
    parser = _PageText()
    parser.feed(_without_math(_main(html)))
    parser.close()
    return parser


def prose_parameter_names(html: str, names) -> list[str]:
    """Parameter ``names`` a page prints in its prose where a value belongs.

    A name with an underscore anywhere in a paragraph's text, a name shown as inline code in a
    paragraph, or a plain-word name doubled ("draws draws per point") counts; a table (the
    parameters of the run) and a code block do not.
    """
    text = page_text(html)
    found = []
    for name in names:
        word = re.compile(rf"(?<![\w.]){re.escape(name)}(?![\w(])")
        if any(c.strip() == name for c in text.prose_code):
            found.append(name)
        elif "_" in name and any(word.search(p) for p in text.prose):
            found.append(name)
        elif any(re.search(rf"\b{re.escape(name)}\s+{re.escape(name)}\b", p) for p in text.prose):
            found.append(name)
    return found


def broken_commands(html: str) -> list[str]:
    """Commands (code starting with :data:`COMMAND_WORDS`) holding a non-ASCII character."""
    starts = re.compile(rf"^\s*(?:\S*/)?(?:{'|'.join(map(re.escape, COMMAND_WORDS))})\b")
    found = []
    for code in page_text(html).code:
        for line in code.splitlines() or [code]:
            if starts.search(line) and any(ord(ch) > 127 for ch in line.split("#")[0]):
                found.append(line.strip())
    return found


def template_holes(html: str) -> list[str]:
    """Unfilled template fields left on the page.

    A ``{{ notebook.key }}`` anywhere in the text (inline code included: MyST does not substitute
    inside backticks), or a stray ``{{`` / ``}}`` in a paragraph. A code block's dict literals are not holes,
    nor is a code cell's source (a figure's caption template in its ``save_figure`` call).
    """
    main = re.sub(r"<(script|style)\b.*?</\1>", "", _without_math(_main(html)), flags=re.S)
    # a code cell's source (behind its toggle) is code: save_figure's caption templates are not holes
    main = re.sub(r'<div class="cell_input\b.*?</pre>', "", main, flags=re.S)
    text = __import__("html").unescape(re.sub(r"<[^>]+>", "", main))
    holes = re.findall(r"\{\{\s*[A-Za-z_][\w.]*\s*\}\}", text)
    for p in page_text(html).prose:
        p = re.sub(r"\{\{\s*[A-Za-z_][\w.]*\s*\}\}", "", p)
        holes += [p[max(0, m.start() - 30):m.end() + 30] for m in re.finditer(r"\{\{|\}\}", p)]
    return holes


#: Pages that show the substitution syntax on purpose (page: how many), e.g. the reproducibility page.
HOLES_ALLOWED = {"book/reproducibility.html": 1}


def test_page_text_checks_on_synthetic_pages():
    page = """<html><main>
      <p>The bound's slope there is 3 <code>path_s_slope</code> -3, K = <code>n_workers</code> workers.</p>
      <p>N on a log grid, draws draws per point; the base seed is 0; n_trials trials.</p>
      <table><tr><td><code>seed</code></td><td>slowdown</td><td>n_inputs</td></tr></table>
      <pre>seed = 0   # n_inputs</pre>
      <p>Run <code>python -m gcc.reproduce \u2013only quickstart</code> or
         <code>make html</code>; <code>n\u2013dash</code> is not a command.</p>
      <pre>.venv/bin/python -m gcc.reproduce --profile ci   # a comment \u2013 may say anything
nbgrader autograde \u201cps1\u201d</pre>
      <p>A hole: {{ quickstart.gcc_slope }}, a stray }} ; <span class="math notranslate">\\(u_{\\mathrm{enc}}\\)</span>
         and \\[x^{{2}}\\] are formulas, not holes.</p>
      <pre>config = {"vit": {"epochs": 2}}</pre><p><code>{{ cpgc_convergence.verdict }}</code> is one.</p>
      <script>var a = "{{ not a hole }}";</script>
    </main></html>"""
    names = ["path_s_slope", "n_workers", "draws", "seed", "slowdown", "n_inputs", "n_trials"]
    assert prose_parameter_names(page, names) == ["path_s_slope", "n_workers", "draws", "n_trials"]
    assert broken_commands(page) == ["python -m gcc.reproduce \u2013only quickstart", "nbgrader autograde \u201cps1\u201d"]
    holes = template_holes(page)
    assert len(holes) == 3 and holes[:2] == ["{{ quickstart.gcc_slope }}", "{{ cpgc_convergence.verdict }}"]
    assert "stray }}" in holes[2]
    clean = "<main><p>K = 10 workers; run <code>python -m gcc.reproduce --only quickstart</code>.</p></main>"
    assert not prose_parameter_names(clean, names) and not broken_commands(clean) and not template_holes(clean)


#: Parameter names a page's prose may print, as "notebook: name" (4). dnn_models tells the reader
#: which parameters to set to run the paper's own networks (a configuration step, where the name
#: is the point, not a value). Everything else prints the run's value (``{{ run.<name> }}``,
#: filled by gcc.reproduce.pages.finish_page). Keep it short; it only shrinks.
PROSE_NAME_ALLOWED: frozenset[str] = frozenset({
    "dnn_models: datasets", "dnn_models: paper_model", "dnn_models: paper_weights", "dnn_models: paper_data",
})


def _parameter_names(name: str) -> list[str]:
    from gcc.notebooks import parameters

    return list(parameters(reproduce.discover(REPO / "notebooks")[name].path))


def page_problems(html_root: Path) -> list[str]:
    """Every page of the built book ``html_root``: parameter names in prose, broken commands, holes."""
    problems = []
    notebook_pages = {page: name for name, page in _notebook_pages(html_root).items()}
    for page in sorted(Path(html_root).rglob("*.html")):
        if "_static" in page.parts or page.name in ("search.html", "genindex.html"):
            continue
        text = page.read_text(encoding="utf-8", errors="replace")
        where = page.relative_to(html_root).as_posix()
        if page in notebook_pages:
            name = notebook_pages[page]
            for param in prose_parameter_names(text, _parameter_names(name)):
                if f"{name}: {param}" not in PROSE_NAME_ALLOWED:
                    problems.append(f"{where}: parameter name {param!r} in prose (print the run's value)")
        problems += [f"{where}: non-ASCII character in the command {c!r}" for c in broken_commands(text)]
        holes = template_holes(text)
        if len(holes) > HOLES_ALLOWED.get(where, 0):
            problems += [f"{where}: template hole ...{h!r}..." for h in holes]
    return problems


@pytest.mark.slow
def test_pages_print_values_not_names_and_commands_that_paste(html):
    problems = page_problems(html)
    assert not problems, "\n".join(problems)
