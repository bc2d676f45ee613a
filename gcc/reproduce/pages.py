"""The book page of an executed notebook (:func:`finish_page`), and the value files its run leaves
for the chapters (:func:`write_values`)."""
from __future__ import annotations

import json
import re
from pathlib import Path

from gcc.atomic import write_text
from gcc.display import MAX_COLUMNS, MAX_ROWS
from gcc.figures import fill_values
from gcc.machine import summary_line

__all__ = ["VALUES_DIR", "RESULT_CLASS", "value_text", "finish_page", "headline_first", "figure_cells",
           "collapse_large_table", "write_values"]

#: Folder of the generated value files, inside the executed-notebooks folder.
VALUES_DIR = "values"
#: Class of a notebook page's result box (``:class: gcc-result`` on its admonition; styled in gcc-pages.css).
RESULT_CLASS = "gcc-result"

# Cell tags by which a source cell decides its own visibility on the page.
_VISIBILITY_TAGS = frozenset({"show-input", "hide-input", "remove-input", "remove-cell", "hide-cell"})
# `python -m gcc.reproduce --profile <name>` in a page's prose: the profile the run used replaces <name>.
_COMMAND_PROFILE = re.compile(r"(python -m gcc\.reproduce\b[^`\n]*?--profile )([A-Za-z0-9_-]+)")
# {{ run.<parameter> }} and {{ value.<key> }} in a notebook's prose
_RUN_VALUE = re.compile(r"\{\{\s*run\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_RECORDED_VALUE = re.compile(r"\{\{\s*value\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
# The source of the headline figure's cell and of a figure's own cell (myst-nb skips a cell without source).
_HEADLINE_SOURCE = "# The headline figure: drawn by a cell further down the page, whose code shows how."
_OUTPUT_SOURCE = "# outputs of the cell above (gcc.reproduce.figure_cells)"


def value_text(value) -> str:
    """A parameter's value in a table cell: JSON (a str quoted), at most 80 characters."""
    text = json.dumps(value, ensure_ascii=True, default=str) if not isinstance(value, str) else repr(value)
    text = text if len(text) <= 80 else text[:77] + "..."
    return text.replace("|", "\\|").replace("`", "'")


def _prose_text(value) -> str:
    """A parameter's value in prose: a str as it is, a list as ``20, 40``, a dict as ``low: 100, 60; high: 60``."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (str, int, float)) for v in value):
        return ", ".join(_prose_text(v) for v in value)
    if isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
        return "; ".join(f"{k}: {_prose_text(v)}" for k, v in value.items())
    return value_text(value)


def _parameters_markdown(profile: str, parameters: dict, source: str) -> str:
    """The dropdown "Parameters of this run (profile ...)": parameter, value, and the cell's comment."""
    from papermill.translators import PythonTranslator

    meaning = {p.name: p.help.replace("|", "\\|") for p in PythonTranslator.inspect({"source": source})}
    declared = [k for k in meaning if k in parameters]
    parameters = {k: parameters[k] for k in declared + [k for k in parameters if k not in declared]}
    title = f"Parameters of this run (profile {profile})"
    if not parameters:
        return f"**{title}**: none"
    count = f"{len(parameters)} value{'s' * (len(parameters) != 1)}"
    lines = [f":::{{dropdown}} {title}: {count}", "| Parameter | Value | Meaning |", "|---|---|---|"]
    lines += [f"| `{k}` | `{value_text(v)}` | {meaning.get(k, '')} |" for k, v in parameters.items()]
    return "\n".join(lines + [":::"])


def _show_run(cells: list, profile: str, parameters: dict, values: dict) -> None:
    """Fill ``{{ run.<name> }}``, ``{{ value.<key> }}`` and the profile of commands in the prose; collapse the
    parameters cell."""
    prose = {"profile": profile, **parameters}
    for cell in cells:
        if cell.get("cell_type") == "markdown":
            text = _COMMAND_PROFILE.sub(lambda m: m.group(1) + profile, "".join(cell.get("source", "")))
            if "machine" not in prose and re.search(r"\{\{\s*run\.machine\s*\}\}", text):
                prose["machine"] = summary_line()  # the machine that ran the notebook (finish_page runs there)
            text = _RUN_VALUE.sub(lambda m: _prose_text(prose[m.group(1)]) if m.group(1) in prose else m.group(0), text)
            cell["source"] = _RECORDED_VALUE.sub(lambda m: (values.get(m.group(1)) or {}).get("text", m.group(0)), text)
    if any("run-parameters" in c.get("metadata", {}).get("tags", []) for c in cells):
        return  # already shown
    for i, cell in enumerate(cells):
        tags = cell.get("metadata", {}).get("tags", [])
        if cell.get("cell_type") == "code" and "parameters" in tags:
            cell["metadata"]["tags"] = [t for t in tags if t not in _VISIBILITY_TAGS] + ["remove-cell"]
            shown = {"cell_type": "markdown", "metadata": {"tags": ["run-parameters"]},
                     "source": _parameters_markdown(profile, parameters, "".join(cell.get("source", "")))}
            if "id" in cell:
                shown["id"] = f"{cell['id']}-run"[:64]
            cells.insert(i + 1, shown)
            return


def finish_page(output: Path, kernel: str, profile: str, parameters: dict | None = None,
                values: dict | None = None) -> None:
    """Prepare the executed notebook ``output`` (if readable) for its book page, in place: code hidden,
    stderr removed, the headline figure first (:func:`headline_first`), figures captioned (:func:`figure_cells`);
    the ``profile`` and ``parameters`` of the run in place of the parameters cell and in ``{{ run.<name> }}``,
    ``values`` in ``{{ value.<key> }}`` (an unknown name stays a visible hole)."""
    try:
        nb = json.loads(Path(output).read_text())
    except (OSError, json.JSONDecodeError):
        return
    cells = nb.get("cells", [])
    for cell in cells:  # a page carries no stderr (library logs, e.g. Dask's at shutdown): kept in the metadata
        outputs = cell.get("outputs", [])
        stderr = [o for o in outputs if o.get("output_type") == "stream" and o.get("name") == "stderr"]
        if stderr:
            cell["outputs"] = [o for o in outputs if o not in stderr]
            cell.setdefault("metadata", {}).setdefault("gcc_stderr", []).extend(
                "".join(o["text"]) if isinstance(o.get("text"), list) else o.get("text", "") for o in stderr)
    _show_run(cells, profile, parameters or {}, values or {})
    headline_first(cells)  # before any figure captioning, so that figures are numbered in page order
    cells = nb["cells"] = figure_cells(cells, values)
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if "injected-parameters" in tags:
            if "remove-cell" not in tags:
                tags.append("remove-cell")
        elif not _VISIBILITY_TAGS.intersection(tags):
            tags.append("hide-input")
    meta = nb.setdefault("metadata", {})
    for key in ("input_path", "output_path"):  # the whole source notebook and a temporary path of this machine
        meta.get("papermill", {}).pop(key, None)
    spec = meta.get("kernelspec") or {}
    if not (spec.get("language") and spec.get("name")):
        meta["kernelspec"] = {"name": spec.get("name") or kernel, "language": "python",
                              "display_name": spec.get("display_name") or "Python (gcc companion)"}
    write_text(output, json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


def headline_first(cells: list) -> bool:
    """Move the first figure after the result box (the first admonition of class :data:`RESULT_CLASS`)
    to a cell of its own right after the box; whether one moved (the ``cells`` change in place).
    """
    if any("headline-figure" in c.get("metadata", {}).get("tags", []) for c in cells):
        return False
    box = next((i for i, c in enumerate(cells) if c.get("cell_type") == "markdown"
                and re.search(rf"^:class:.*\b{RESULT_CLASS}\b", "".join(c.get("source", "")), re.M)), None)
    if box is None or re.search(r"^% headline-figure: none\b", "".join(cells[box].get("source", "")), re.M):
        return False    # the page's own headline (a table) follows the box
    for cell in cells[box + 1:]:
        for j, output in enumerate(cell.get("outputs", []) if cell.get("cell_type") == "code" else []):
            image = output.get("output_type") in ("display_data", "execute_result")
            if image and "image/png" in output.get("data", {}):
                del cell["outputs"][j]
                moved = {"cell_type": "code", "execution_count": None, "source": _HEADLINE_SOURCE,
                         "metadata": {"tags": ["remove-input", "headline-figure"]}, "outputs": [output]}
                if "id" in cell:  # nbformat >= 4.5: every cell has a unique id
                    moved["id"] = f"{cell['id']}-headline"[:64]
                cells.insert(box + 1, moved)
                return True
    return False


def _caption(record: dict) -> str:
    """A figure's caption on its page: its text, then "Drawn by [`function`](url) (`path`, lines a-b)."."""
    parts = [record.get("caption") or "(no caption)"]
    if record.get("url"):
        parts.append(f"Drawn by [`{record['function']}`]({record['url']}) "
                     f"(`{record['path']}`, lines {record['start']}-{record['end']}).")
    elif record.get("function"):
        parts.append(f"Drawn by `{record['function']}`.")
    return "\n\n".join(parts)


def _output_cell(outputs: list, tags: list, **metadata) -> dict:
    """A code cell showing ``outputs`` only."""
    return {"cell_type": "code", "execution_count": None, "metadata": {"tags": tags, **metadata},
            "outputs": outputs, "source": _OUTPUT_SOURCE}


def figure_cells(cells: list, values: dict | None = None) -> list:
    """The ``cells`` of a page (nbformat 4 JSON), each figure of ``save_figure`` in a cell of its own with
    the ``mystnb`` caption, label and alt text (``{{ key }}`` filled from ``values``)."""
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
                tail.append(_output_cell(pending, ["remove-input"]))
            pending = []
            record = {k: v for k, v in record.items() if k != "run_record"}
            for field in ("caption", "alt"):
                record[field] = fill_values(record.get(field, ""), values or {})
            output = dict(output, metadata={k: v for k, v in output["metadata"].items() if k != "gcc_figure"})
            alt = record.get("alt") or record.get("caption") or record.get("label", "figure")
            headline = "headline-figure" in cell.get("metadata", {}).get("tags", []) and not any(
                "gcc_figure" in c["metadata"] for c in tail)  # the page's headline keeps its tag (headline_first)
            target = "fig-" + "".join(c if c.isalnum() else "-" for c in record.get("label", "").lower()).strip("-")
            tail.append(_output_cell([output], ["remove-input"] + ["headline-figure"] * headline, mystnb={
                "figure": {"caption": _caption(record), "name": target},
                "image": {"alt": " ".join(alt.split())}}, gcc_figure=record))
        if pending:
            tail.append(_output_cell(pending, ["remove-input"]))
        if "id" in cell:  # nbformat >= 4.5: every cell has a unique id
            for i, extra in enumerate(tail):
                extra["id"] = f"{cell['id']}-out{i}"
        result.append(dict(cell, outputs=head))
        result.extend(tail)
    return result


def collapse_large_table(text: str) -> str:
    r"""A markdown table over :data:`gcc.display.MAX_ROWS` rows or :data:`gcc.display.MAX_COLUMNS`
    columns behind a collapsed dropdown that says its size; anything else unchanged.
    """
    lines = [line for line in text.splitlines() if line.lstrip().startswith("|")]
    if len(lines) < 2:
        return text
    n_rows = len(lines) - 2  # header and separator
    n_columns = len(lines[0].strip().strip("|").split("|"))
    if n_rows <= MAX_ROWS and n_columns <= MAX_COLUMNS:  # the same limits as display_table
        return text
    size = f"{n_rows} row{'s' * (n_rows != 1)}, {n_columns} column{'s' * (n_columns != 1)}"
    return f":::{{dropdown}} The table ({size}): expand\n{text}\n:::"


def write_values(name: str, record: dict, generated_dir: Path) -> None:
    """Replace the value files of the run ``record`` in ``<generated_dir>/values``: ``<name>.json`` (the
    substitutions) and one include ``<name>.<table>.md`` per table of its includes."""
    folder = Path(generated_dir) / VALUES_DIR
    for old in [*folder.glob(f"{name}.json"), *folder.glob(f"{name}.md"), *folder.glob(f"{name}.*.md")]:
        old.unlink()
    for table, text in (record.get("includes") or {}).items():
        write_text(folder / f"{name}.{table}.md", collapse_large_table(text) + "\n")
    if record.get("values"):
        write_text(folder / f"{name}.json", json.dumps({k: v["text"] for k, v in record["values"].items()}, indent=2,
                                                       sort_keys=True) + "\n")
