"""What an executed notebook's page shows, and the values the chapters quote.

:func:`finish_page` prepares an executed notebook for its book page: papermill's injected
parameters cell is removed from the page (``remove-cell``; it stays in the notebook) and every
other code cell's input goes behind a toggle (``hide-input``) unless the source cell chose
otherwise (``show-input``, ``remove-input``, ``remove-cell``, ``hide-cell``). It also gives the
notebook a kernelspec when its source had none, since myst-nb picks the code lexer from it.
Given the run's profile and parameters, it shows them in place of the notebook's defaults: the
``parameters`` cell leaves the page and a "Parameters of this run (profile ...)" table with the
"Reproduce:" command of that profile takes its place (:func:`parameters_markdown`); the prose's
``python -m gcc.reproduce --profile X`` commands name the run's profile, and ``{{ run.<name> }}``
in the prose becomes the run's value of that parameter (``{{ run.profile }}``: the profile;
``{{ run.machine }}``: :func:`gcc.machine.summary_line` of the machine that ran it). The table is collapsed (a dropdown) so that
it never pushes the page's headline figure out of the first screen; the "Reproduce:" line stays
visible. Given the run's recorded values, ``{{ value.<key> }}`` in the prose becomes the text of
that value (the same text a chapter's ``{{ <notebook>.<key> }}`` shows); an unknown key stays a
visible hole. The page's result box (an admonition of class ``gcc-result``, right after the
title) is followed by the headline figure: the output of the first figure of the page (or the
``n``-th, named by a MyST comment ``% headline-figure: n`` in the box's cell) moves up to a cell
of its own after the box (:func:`headline_first`).

:func:`write_values` turns the values a run recorded (:meth:`gcc.results.RunContext.value`) into
``<generated>/values/<notebook>.json`` and the include ``<generated>/values/<notebook>.md``;
:func:`substitutions` gathers the JSON files into the MyST substitutions of the book build, so a
chapter writes ``{{ dask_latency.gcc_p99 }}`` instead of typing a measured number.
Every file is written atomically (:mod:`gcc.atomic`).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from gcc.atomic import write_text
from gcc.display import MAX_COLUMNS, MAX_ROWS

from .figure_cells import figure_cells

__all__ = ["VISIBILITY_TAGS", "VALUES_DIR", "RESULT_CLASS", "finish_page", "parameters_markdown", "headline_first",
           "write_values", "values_written", "substitutions", "referenced_values", "referenced_includes",
           "placeholder_includes", "collapse_large_table"]

#: Cell tags by which a source cell decides its own visibility on the page.
VISIBILITY_TAGS = frozenset({"show-input", "hide-input", "remove-input", "remove-cell", "hide-cell"})

#: Folder of the generated value files, inside the executed-notebooks folder.
VALUES_DIR = "values"

#: Class of a notebook page's result box (``:class: gcc-result`` on its admonition; styled in gcc-pages.css).
RESULT_CLASS = "gcc-result"

# {{ notebook.key }} in a chapter; the notebook part is a notebook name, the key an identifier.
_REFERENCE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
# ```{include} ../generated/values/<notebook>[.<table>].md in a chapter
_INCLUDE = re.compile(r"\{include\}\s+\S*generated/values/([A-Za-z0-9_.]+\.md)")


# `python -m gcc.reproduce --profile <name>` in a page's prose: the profile the run used replaces <name>.
_COMMAND_PROFILE = re.compile(r"(python -m gcc\.reproduce\b[^`\n]*?--profile )([A-Za-z0-9_-]+)")
# {{ run.<parameter> }} in a notebook's prose: the value of that parameter in the run of the page
_RUN_VALUE = re.compile(r"\{\{\s*run\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
# {{ value.<key> }} in a notebook's prose: the text of a value the run recorded (RunContext.value)
_RECORDED_VALUE = re.compile(r"\{\{\s*value\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
# `% headline-figure: 2` (a MyST comment) in the result box's cell: which figure of the page is the headline
_HEADLINE = re.compile(r"^%\s*headline-figure:\s*(\d+)\s*$", re.M)
# `name = value   # meaning` in a parameters cell: the meaning of each name
_COMMENTED = re.compile(r"^[ \t]*([A-Za-z_][\w \t,]*?)[ \t]*(?::[^=\n]*)?=[^#\n]*#[ \t]*(.+?)[ \t]*$", re.M)


def _value_text(value) -> str:
    text = json.dumps(value, ensure_ascii=True) if not isinstance(value, str) else repr(value)
    text = text if len(text) <= 80 else text[:77] + "..."
    return text.replace("|", "\\|").replace("`", "'")


def _prose_text(value) -> str:
    """A parameter's value as prose: a str as it is, a list as ``20, 40, 80``, a dict as ``low: 100, 60; high: 60, 20``."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (str, int, float)) for v in value):
        return ", ".join(_prose_text(v) for v in value)
    if isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
        return "; ".join(f"{k}: {_prose_text(v)}" for k, v in value.items())
    return _value_text(value)


def _prose_value(parameters: dict, match) -> str:
    """The text of ``{{ run.<name> }}``: the run's value (:func:`_prose_text`); an unknown name stays a hole.

    Examples
    --------
    >>> import re
    >>> from gcc.reproduce.pages import _RUN_VALUE, _prose_value
    >>> run = {"n": [20, 40], "regimes": {"low": [100, 60]}, "f": "tanh"}
    >>> _RUN_VALUE.sub(lambda m: _prose_value(run, m), "N = {{ run.n }}, {{ run.regimes }}, {{ run.f }}, {{ run.x }}")
    'N = 20, 40, low: 100, 60, tanh, {{ run.x }}'
    """
    if match.group(1) not in parameters:
        return match.group(0)
    return _prose_text(parameters[match.group(1)])


def _recorded_text(values: dict, match) -> str:
    """The text of ``{{ value.<key> }}``: the recorded value's text; an unknown key stays a hole."""
    entry = values.get(match.group(1))
    if isinstance(entry, dict) and isinstance(entry.get("text"), str):
        return entry["text"]
    return entry if isinstance(entry, str) else match.group(0)


def parameters_markdown(name: str, profile: str, parameters: dict, source: str = "") -> str:
    """The page's "Parameters of this run" cell: the run's values, their meaning and the command.

    Parameters
    ----------
    name : str
        The notebook.
    profile : str
        The profile that produced the page.
    parameters : dict
        The run's parameters (``run.json``'s ``parameters``: defaults overridden by the injected ones).
    source : str
        The notebook's parameters cell, whose end-of-line comments give each name's meaning.

    Returns
    -------
    str
        MyST markdown: a collapsed dropdown "Parameters of this run (profile ...)" holding the table
        (parameter, value, meaning), then the "Reproduce:" line (outside the dropdown).

    Examples
    --------
    >>> print(parameters_markdown("quickstart", "ci", {"n_stragglers": 5, "seed": 0}, "seed = 0\\nn_stragglers = 2   # S"))
    :::{dropdown} Parameters of this run (profile ci): 2 values
    | Parameter | Value | Meaning |
    |---|---|---|
    | `seed` | `0` |  |
    | `n_stragglers` | `5` | S |
    :::
    <BLANKLINE>
    Reproduce: `python -m gcc.reproduce --profile ci --only quickstart`
    """
    meaning = {}
    for names, comment in _COMMENTED.findall(source or ""):
        for one in names.split(","):
            meaning.setdefault(one.strip(), comment.replace("|", "\\|"))
    from gcc.notebooks import assigned_names

    declared = [k for k in assigned_names(source or "") if k in parameters]
    order = declared + [k for k in parameters if k not in declared]
    parameters = {k: parameters[k] for k in order}
    title = f"Parameters of this run (profile {profile})"
    if parameters:
        count = f"{len(parameters)} value{'s' * (len(parameters) != 1)}"
        lines = [f":::{{dropdown}} {title}: {count}", "| Parameter | Value | Meaning |", "|---|---|---|"]
        lines += [f"| `{k}` | `{_value_text(v)}` | {meaning.get(k, '')} |" for k, v in parameters.items()]
        lines += [":::", ""]
    else:
        lines = [f"**{title}**: none", ""]
    lines.append(f"Reproduce: `python -m gcc.reproduce --profile {profile} --only {name}`")
    return "\n".join(lines)


def finish_page(output: Path, kernel: str, profile: str | None = None, parameters: dict | None = None,
                values: dict | None = None) -> None:
    """Tag the cells of the executed notebook ``output`` for its page; complete its kernelspec.

    With ``profile``, the page shows the run's parameters instead of the notebook's defaults: the
    ``parameters`` cell is removed from the page (it stays in the notebook) and a markdown cell
    from :func:`parameters_markdown` (``parameters``: the run's values) takes its place; every
    ``python -m gcc.reproduce ... --profile X`` in the prose names ``profile``, and every
    ``{{ run.<parameter> }}`` in the prose becomes that parameter's value in this run (so a
    sentence says "K = 10 workers", never the name of the parameter). With ``values`` (``run.json``'s
    ``values``: ``{key: {"text", ...}}``), every ``{{ value.<key> }}`` in the prose becomes that
    value's text. The headline figure follows the result box (:func:`headline_first`). Stderr outputs
    (library logs) leave the page and are kept in the cell's ``gcc_stderr`` metadata.
    """
    output = Path(output)
    if not output.exists():
        return
    try:
        nb = json.loads(output.read_text())
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
    if profile is not None:
        _show_run_parameters(cells, output.name.lstrip(".").split(".")[0], profile, parameters or {})
    for cell in cells:
        if values and cell.get("cell_type") == "markdown":
            cell["source"] = _RECORDED_VALUE.sub(lambda m: _recorded_text(values, m), "".join(cell.get("source", "")))
    headline_first(cells)  # before any figure captioning, so that figures are numbered in page order
    cells = nb["cells"] = figure_cells(cells)  # each figure in its own cell: numbered caption, alt text, source link
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if "injected-parameters" in tags:
            if "remove-cell" not in tags:
                tags.append("remove-cell")
        elif not VISIBILITY_TAGS.intersection(tags):
            tags.append("hide-input")
    meta = nb.setdefault("metadata", {})
    spec = meta.get("kernelspec") or {}
    if not (spec.get("language") and spec.get("name")):
        meta["kernelspec"] = {"name": spec.get("name") or kernel, "language": "python",
                              "display_name": spec.get("display_name") or "Python (gcc companion)"}
    write_text(output, json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


def _literal_defaults(source: str) -> dict:
    """The literal values a parameters cell assigns (``a, b = 1, 2`` included); others are left out."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    found: dict = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        pairs = [(target, value)]
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
            pairs = list(zip(target.elts, value.elts))
        for t, v in pairs:
            if isinstance(t, ast.Name):
                try:
                    found[t.id] = ast.literal_eval(v)
                except (ValueError, SyntaxError, TypeError):
                    continue
    return found


def _show_run_parameters(cells: list, name: str, profile: str, parameters: dict) -> None:
    defaults = next((_literal_defaults("".join(c.get("source", ""))) for c in cells if c.get("cell_type") == "code"
                     and "parameters" in c.get("metadata", {}).get("tags", [])), {})
    parameters = {**defaults, **parameters}
    prose = {"profile": profile, **parameters}  # {{ run.profile }}, {{ run.machine }}: the run's, not parameters
    for cell in cells:
        if cell.get("cell_type") == "markdown":
            text = "".join(cell.get("source", ""))
            text = _COMMAND_PROFILE.sub(lambda m: m.group(1) + profile, text)
            if "machine" not in prose and re.search(r"\{\{\s*run\.machine\s*\}\}", text):
                from gcc.machine import summary_line

                prose["machine"] = summary_line()  # the machine that ran the notebook (finish_page runs there)
            cell["source"] = _RUN_VALUE.sub(lambda m: _prose_value(prose, m), text)
    if any("run-parameters" in c.get("metadata", {}).get("tags", []) for c in cells):
        return  # already shown
    for i, cell in enumerate(cells):
        tags = cell.get("metadata", {}).get("tags", [])
        if cell.get("cell_type") == "code" and "parameters" in tags:
            cell["metadata"]["tags"] = [t for t in tags if t not in VISIBILITY_TAGS] + ["remove-cell"]
            source = "".join(cell.get("source", ""))
            shown = {"cell_type": "markdown", "metadata": {"tags": ["run-parameters"]},
                     "source": parameters_markdown(name, profile, parameters, source)}
            if "id" in cell:
                shown["id"] = f"{cell['id']}-run"[:64]
            cells.insert(i + 1, shown)
            return


#: The source of the headline figure's cell (hidden; myst-nb skips a cell without source).
_HEADLINE_SOURCE = "# The headline figure: drawn by a cell further down the page, whose code shows how."


def _is_figure(output: dict) -> bool:
    return output.get("output_type") in ("display_data", "execute_result") and "image/png" in output.get("data", {})


def headline_first(cells: list) -> bool:
    """Move the page's headline figure to a cell of its own right after its result box.

    The result box is the first markdown cell holding an admonition of class :data:`RESULT_CLASS`;
    the headline figure is the first figure output (PNG) of the page, or the ``n``-th when the box's
    cell says ``% headline-figure: n``. The figure's output leaves its cell (so it is shown once)
    and a code cell whose source is only a comment (``remove-input``, ``headline-figure``) shows it
    after the box.
    A page that has already been finished is left as it is.

    Parameters
    ----------
    cells : list of dict
        The notebook's cells (changed in place).

    Returns
    -------
    bool
        Whether a figure was moved.

    Examples
    --------
    >>> box = {"cell_type": "markdown", "source": ":::{admonition} Result\\n:class: gcc-result\\nx\\n:::"}
    >>> fig = {"output_type": "display_data", "data": {"image/png": "..."}, "metadata": {}}
    >>> code = {"cell_type": "code", "metadata": {}, "source": "plot()", "outputs": [fig]}
    >>> cells = [box, {"cell_type": "markdown", "source": "Method."}, code]
    >>> headline_first(cells), [c["cell_type"] for c in cells], code["outputs"]
    (True, ['markdown', 'code', 'markdown', 'code'], [])
    """
    if any("headline-figure" in c.get("metadata", {}).get("tags", []) for c in cells):
        return False
    box = next((i for i, c in enumerate(cells) if c.get("cell_type") == "markdown"
                and re.search(rf"^:class:.*\b{RESULT_CLASS}\b", "".join(c.get("source", "")), re.M)), None)
    if box is None:
        return False
    chosen = _HEADLINE.search("".join(cells[box].get("source", "")))
    wanted = int(chosen.group(1)) if chosen else 1
    seen = 0
    for cell in cells[box + 1:]:
        for j, output in enumerate(cell.get("outputs", []) if cell.get("cell_type") == "code" else []):
            if _is_figure(output):
                seen += 1
                if seen == wanted:
                    del cell["outputs"][j]
                    moved = {"cell_type": "code", "execution_count": None, "source": _HEADLINE_SOURCE,
                             "metadata": {"tags": ["remove-input", "headline-figure"]}, "outputs": [output]}
                    if "id" in cell:  # nbformat >= 4.5: every cell has a unique id
                        moved["id"] = f"{cell['id']}-headline"[:64]
                    cells.insert(box + 1, moved)
                    return True
    return False


def collapse_large_table(text: str) -> str:
    r"""A markdown include as a page shows it: a table over :data:`gcc.display.MAX_ROWS` rows or
    :data:`gcc.display.MAX_COLUMNS` columns (the limits of :func:`gcc.display.display_table`) goes behind a collapsed dropdown that says its size; anything else is returned unchanged.

    Examples
    --------
    >>> from gcc.reproduce.pages import collapse_large_table
    >>> small = "| a | b |\n|---|---|\n| 1 | 2 |"
    >>> collapse_large_table(small) == small
    True
    >>> print(collapse_large_table("| a |\n|---|\n" + "\n".join(["| 1 |"] * 30)).splitlines()[0])
    :::{dropdown} The table (30 rows, 1 column): expand
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


def write_values(name: str, values: dict, generated_dir: Path, includes: dict | None = None) -> list[Path]:
    """Write ``values/<name>.json`` (``{key: text}``), the include ``values/<name>.md`` and the tables.

    Parameters
    ----------
    name : str
        The notebook.
    values : dict
        ``run.json``'s ``values``: ``{key: {"value", "unit", "text", "note"}}``.
    generated_dir : path
        The executed-notebooks folder (``book/generated``).
    includes : dict, optional
        ``run.json``'s ``includes``: ``{table name: markdown}``, written as ``values/<name>.<table>.md``.

    Returns
    -------
    list of pathlib.Path
        The files written. The notebook's old value files are removed first.
    """
    folder = Path(generated_dir) / VALUES_DIR
    for old in list(folder.glob(f"{name}.json")) + list(folder.glob(f"{name}.md")) + list(folder.glob(f"{name}.*.md")):
        old.unlink()
    written = []
    if includes:
        folder.mkdir(parents=True, exist_ok=True)
        for table, text in includes.items():
            path = folder / f"{name}.{table}.md"
            write_text(path, collapse_large_table(text) + "\n")
            written.append(path)
    if not values:
        return written
    paths = [folder / f"{name}.json", folder / f"{name}.md"]
    folder.mkdir(parents=True, exist_ok=True)
    write_text(paths[0], json.dumps({k: v["text"] for k, v in values.items()}, indent=2, sort_keys=True) + "\n")
    rows = ["| Quantity | Value | Substitution |", "|---|---|---|"]
    for key, v in values.items():
        note = (v.get("note") or key).replace("|", "\\|")
        rows.append(f"| {note} | {v['text']} | `{{{{ {name}.{key} }}}}` |")
    rows += ["", f"Measured by {{doc}}`/book/generated/{name}` (its last run; see {{doc}}`/book/generated/status`)."]
    write_text(paths[1], "\n".join(rows) + "\n")
    return written + paths


def values_written(name: str, record: dict, generated_dir: Path) -> bool:
    """Whether every value file that the run ``record`` (a ``run.json``) implies exists in ``generated_dir``."""
    folder = Path(generated_dir) / VALUES_DIR
    files = [f"{name}.{table}.md" for table in record.get("includes") or {}]
    if record.get("values"):
        files += [f"{name}.json", f"{name}.md"]
    return all((folder / f).is_file() for f in files)


def referenced_includes(pages: list[Path]) -> set[str]:
    """File names under ``values/`` that the markdown ``pages`` include (``{include}`` directives)."""
    found: set[str] = set()
    for page in pages:
        try:
            found.update(_INCLUDE.findall(Path(page).read_text(encoding="utf-8")))
        except OSError:
            continue
    return found


def placeholder_includes(generated_dir: Path, wanted: set[str]) -> list[str]:
    """Write a visible placeholder for each included value file no run has written yet; their names."""
    folder = Path(generated_dir) / VALUES_DIR
    missing = []
    for file in sorted(wanted):
        path = folder / file
        if not path.exists():
            folder.mkdir(parents=True, exist_ok=True)
            notebook = file.split(".")[0]
            write_text(path, f"[not measured yet: python -m gcc.reproduce --only {notebook}]\n")
            missing.append(file)
    return missing


def referenced_values(pages: list[Path]) -> set[tuple[str, str]]:
    """Every ``{{ notebook.key }}`` the markdown ``pages`` quote, as ``(notebook, key)`` pairs."""
    found: set[tuple[str, str]] = set()
    for page in pages:
        try:
            found.update(_REFERENCE.findall(Path(page).read_text(encoding="utf-8")))
        except OSError:
            continue
    return found


def substitutions(generated_dir: Path, wanted: set[tuple[str, str]] = frozenset()) -> tuple[dict, list[str]]:
    """MyST substitutions ``{notebook: {key: text}}`` from ``<generated_dir>/values/*.json``.

    Parameters
    ----------
    generated_dir : path
    wanted : set of (notebook, key)
        Values the chapters quote (:func:`referenced_values`). One without a measured value gets
        a visible placeholder that names the command to run, so the build still completes.

    Returns
    -------
    subs : dict
    missing : list of str
        ``"notebook.key"`` of the placeholders.
    """
    subs: dict[str, dict[str, str]] = {}
    for path in sorted((Path(generated_dir) / VALUES_DIR).glob("*.json")):
        try:
            subs[path.stem] = {str(k): str(v) for k, v in json.loads(path.read_text()).items()}
        except (OSError, json.JSONDecodeError, AttributeError):
            continue
    missing = []
    for notebook, key in sorted(wanted):
        if key not in subs.get(notebook, {}):
            subs.setdefault(notebook, {})[key] = f"[not measured yet: python -m gcc.reproduce --only {notebook}]"
            missing.append(f"{notebook}.{key}")
    return subs, missing
