"""A figure's caption, alt text and source link on its page (the page step of :mod:`gcc.figures`).

:meth:`gcc.results.RunContext.save_figure` shows each figure as an image output that carries its
record (``gcc_figure`` in the output's metadata: caption, alt text, label, the function that drew
it and the URL of its source). myst-nb reads a figure's caption and alt text from the *cell*
(``mystnb: {figure: {caption, name}, image: {alt}}``), so :func:`figure_cells` moves every such
output into a cell of its own that carries them; the outputs after it follow in another cell, so
the page keeps their order. Sphinx numbers the figures ("Figure N."); the caption's second
paragraph (a legend under it) names the function that drew the figure and links its source.
"""
from __future__ import annotations

import json
from pathlib import Path

from gcc.figures import fill_values, pending_keys

__all__ = ["figure_cells", "caption_markdown", "complete_record"]

_OUTPUT_CELL_TAGS = ["remove-input"]


def caption_markdown(record: dict) -> str:
    """The caption of a figure on its page: its text, then "Drawn by ..." with the source link.

    Examples
    --------
    >>> from gcc.reproduce.figure_cells import caption_markdown
    >>> print(caption_markdown({"caption": "Loss against N.", "function": "gcc.x.plot", "url": "https://h/x.py#L1-L9",
    ...                         "path": "gcc/x.py", "start": 1, "end": 9}))
    Loss against N.
    <BLANKLINE>
    Drawn by [`gcc.x.plot`](https://h/x.py#L1-L9) (`gcc/x.py`, lines 1-9).
    """
    parts = [record.get("caption") or "(no caption)"]
    if record.get("url"):
        parts.append(f"Drawn by [`{record['function']}`]({record['url']}) "
                     f"(`{record['path']}`, lines {record['start']}-{record['end']}).")
    elif record.get("function"):
        parts.append(f"Drawn by `{record['function']}`.")
    return "\n\n".join(parts)


def complete_record(record: dict) -> dict:
    """``record`` with the ``{{ key }}`` its notebook recorded after the figure filled in from ``run.json``.

    A key the run never recorded stays in the text (the book's tests fail on it).
    """
    record = dict(record)
    source = record.pop("run_record", None)
    if source and pending_keys(record.get("caption", "") + record.get("alt", "")):
        try:
            values = json.loads(Path(source).read_text()).get("values", {})
        except (OSError, json.JSONDecodeError):
            values = {}
        for field in ("caption", "alt"):
            record[field] = fill_values(record.get(field, ""), values, strict=False)
    return record


def _output_cell(outputs: list, metadata: dict | None = None) -> dict:
    meta = {"tags": list(_OUTPUT_CELL_TAGS)}
    meta.update(metadata or {})
    # myst-nb skips a code cell whose source is empty, outputs and all: the source names where they came from
    return {"cell_type": "code", "execution_count": None, "metadata": meta, "outputs": outputs,
            "source": "# outputs of the cell above (gcc.reproduce.figure_cells)"}


def figure_cells(cells: list) -> list:
    """The cells of a page, each figure output of ``save_figure`` in a cell with its caption.

    Parameters
    ----------
    cells : list of dict
        The notebook's cells (nbformat 4 JSON).

    Returns
    -------
    list of dict
        The same cells; a code cell with figure outputs is split: its source and the outputs
        before the first figure, then one cell per figure (``remove-input``, ``mystnb`` metadata
        with the caption, the label and the alt text), then the outputs that followed.
    """
    result = []
    for cell in cells:
        outputs = cell.get("outputs") or []
        if cell.get("cell_type") != "code" or not any("gcc_figure" in (o.get("metadata") or {}) for o in outputs):
            result.append(cell)
            continue
        head, pending, tail = None, [], []
        for output in outputs:
            record = (output.get("metadata") or {}).get("gcc_figure")
            if record is None:
                pending.append(output)
                continue
            if head is None:
                head = pending
            elif pending:
                tail.append(_output_cell(pending))
            pending = []
            record = complete_record(record)
            output = dict(output, metadata={k: v for k, v in output["metadata"].items() if k != "gcc_figure"})
            alt = record.get("alt") or record.get("caption") or record.get("label", "figure")
            headline = "headline-figure" in cell.get("metadata", {}).get("tags", []) and not any(
                "gcc_figure" in c["metadata"] for c in tail)  # the page's headline keeps its tag (pages.headline_first)
            tail.append(_output_cell([output], {"tags": _OUTPUT_CELL_TAGS + ["headline-figure"] * headline, "mystnb": {
                "figure": {"caption": caption_markdown(record), "name": _target(record.get("label", ""))},
                "image": {"alt": " ".join(alt.split())}}, "gcc_figure": record}))
        if pending:
            tail.append(_output_cell(pending))
        if "id" in cell:  # nbformat >= 4.5: every cell has a unique id
            for i, extra in enumerate(tail):
                extra["id"] = f"{cell['id']}-out{i}"
        result.append(dict(cell, outputs=head))
        result.extend(tail)
    return result


def _target(label: str) -> str:
    """A Sphinx target of the figure (unique in the book: the notebook's name comes first)."""
    return "fig-" + "".join(c if c.isalnum() else "-" for c in label.lower()).strip("-")
