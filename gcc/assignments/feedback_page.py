"""The feedback page a student reads: nbgrader's feedback HTML, offline and honest about pending points.

``generate_feedback`` uses :class:`FeedbackExporter` (the book's MathJax 3 inlined with its fonts,
so the one HTML file reads offline; long lines wrapped) and :class:`PendingGrades` (a written
answer not graded yet shows as "pending", not as "Score: 0.0 / 3.0").
"""
from __future__ import annotations

import base64
import re
from functools import lru_cache

from nbconvert.exporters import HTMLExporter
from nbgrader.preprocessors import GetGrades

from ..results import repo_root

__all__ = ["FeedbackExporter", "PendingGrades"]

#: Output and code lines wrap inside the column (nbconvert's classic template keeps them on one line).
_WRAP_CSS = """<style type="text/css">
/* gcc.assignments.feedback_page: long lines wrap instead of running off the column */
div.output_area pre, div.output_subarea pre, div.output_text pre, div.input_area pre, .highlight pre {
  white-space: pre-wrap; overflow-wrap: anywhere; word-break: normal;
}
div.output_subarea { max-width: 100%; overflow-x: visible; }
span.gcc-pending { color: #8a6d3b; font-weight: bold; }
</style>
"""

#: MathJax 3 reading the same delimiters as nbconvert's MathJax 2 configuration.
_MATHJAX_CONFIG = r"""<script type="text/javascript">
window.MathJax = {
  tex: {inlineMath: [['$', '$'], ['\\(', '\\)']], displayMath: [['$$', '$$'], ['\\[', '\\]']],
        processEscapes: true, processEnvironments: true, tags: 'ams'},
  chtml: {displayAlign: 'center'},
  options: {ignoreHtmlClass: 'tex2jax_ignore', processHtmlClass: 'tex2jax_process'}
};
</script>
"""

_CDN_SCRIPT = re.compile(r'<script[^>]*\bsrc="[^"]*mathjax[^"]*"[^>]*>\s*</script>', re.I)
_MATHJAX2_CONFIG = re.compile(r'<script type="text/x-mathjax-config">.*?</script>', re.S)


@lru_cache(maxsize=1)
def _mathjax_inline() -> str:
    """The book's vendored MathJax 3 as inline ``<script>`` elements, its fonts as ``data:`` URIs."""
    folder = repo_root() / "book" / "vendor" / "mathjax" / "es5"
    script = (folder / "tex-mml-chtml.js").read_text(encoding="utf-8")
    fonts = folder / "output" / "chtml" / "fonts" / "woff-v2"

    def embed(match: re.Match) -> str:
        data = base64.b64encode((fonts / match.group(1)).read_bytes()).decode("ascii")
        return f"data:font/woff;base64,{data}"

    # CHTML names each font as "%%URL%%/<file>.woff" and fills in its own location: give it the data.
    script = re.sub(r"%%URL%%/([A-Za-z0-9_-]+\.woff)", embed, script)
    script = script.replace("</script", "<\\/script").replace("<!--", "<\\!--")  # stays one script element
    return _MATHJAX_CONFIG + f'<script type="text/javascript">\n{script}\n</script>\n'


def _score(value) -> str:
    """A score as nbgrader's template prints it (``| float | round(2)``)."""
    return str(round(float(value or 0.0), 2))


def _offline_page(page: str, pending: list[dict] | None = None, score: float | None = None,
                 max_score: float | None = None) -> str:
    """nbgrader's feedback HTML with offline MathJax, wrapped lines and the ``pending`` cells marked."""
    page = _CDN_SCRIPT.sub("", page)
    page = _MATHJAX2_CONFIG.sub("", page)
    page = page.replace("</head>", _WRAP_CSS + _mathjax_inline() + "</head>", 1)
    pending = pending or []
    for cell in pending:
        gid, points = re.escape(cell["grade_id"]), _score(cell["points"])
        label = f'<span class="gcc-pending">pending: {points} points, not graded yet</span>'
        # the table of contents: "<a href="#id">Written response</a> (Score: 0.0 / 3.0)"
        page = re.sub(rf'(<a href="#{gid}">[^<]*</a>) \(Score: [\d.]+ / [\d.]+\)', rf"\1 ({label})", page)
        # the cell's own heading, right after its anchor
        page = re.sub(rf'(<a name="{gid}"></a>.*?)Score: [\d.]+ / [\d.]+', rf"\1{label}", page, count=1,
                      flags=re.S)
    if pending and score is not None and max_score is not None:
        waiting = _score(sum(float(c["points"]) for c in pending))
        heading = f"(Score: {_score(score)} / {_score(max_score)})</h4>"
        page = page.replace(heading, f"(Score: {_score(score)} / {_score(max_score)}; {waiting} of these points "
                                     "are pending: not graded yet)</h4>", 1)
    return page


class PendingGrades(GetGrades):
    """nbgrader's ``GetGrades``, which also lists the cells waiting for manual grading in
    ``resources["nbgrader"]["pending"]`` (grade id and points), for :class:`FeedbackExporter`."""

    def preprocess(self, nb, resources):
        resources["nbgrader"]["pending"] = []
        return super().preprocess(nb, resources)

    def _get_score(self, cell, resources):
        super()._get_score(cell, resources)
        grade = self.gradebook.find_grade(cell.metadata["nbgrader"]["grade_id"], self.notebook_id,
                                          self.assignment_id, self.student_id)
        if grade.needs_manual_grade and grade.manual_score is None:
            resources["nbgrader"]["pending"].append({"grade_id": cell.metadata["nbgrader"]["grade_id"],
                                                     "points": grade.max_score})


class FeedbackExporter(HTMLExporter):
    """The HTML exporter of ``generate_feedback``: nbgrader's page, passed through :func:`_offline_page`."""

    def from_notebook_node(self, nb, resources=None, **kw):
        output, resources = super().from_notebook_node(nb, resources, **kw)
        info = (resources or {}).get("nbgrader", {})
        return _offline_page(output, info.get("pending"), info.get("score"), info.get("max_score")), resources
