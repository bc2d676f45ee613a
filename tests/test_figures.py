"""One figure style for the book: the style file, the scheme registry, captions, alt text, source links.

Fast tests check the style file, the registry of scheme colours, the figure helper, that every plot
function makes its figure with it, and the caption/alt/source record of ``save_figure`` and its
page cells. The slow ones read every figure of the ci batch (its recorded metrics) and every
figure of the built ci book (numbered caption, alt text, link to the source).
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

import gcc
from gcc import figures
from gcc.experiments import plotting

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
#: plot functions that do not make their figure with plotting.figure yet (none: every one does);
#: an entry is removed once its function uses the book's figure helper
NOT_YET_IN_STYLE: set[str] = set()
_PLOT_DIRS = ("gcc/experiments", "gcc/dnn", "gcc/distributed")


def _plot_functions():
    for folder in _PLOT_DIRS:
        for path in sorted((REPO / folder).glob("*.py")):
            tree = ast.parse(path.read_text())
            module = ".".join(path.relative_to(REPO).with_suffix("").parts)
            for node in tree.body:
                if isinstance(node, ast.FunctionDef) and node.name.startswith("plot_"):
                    yield f"{module}.{node.name}", node


def _saturation(colour) -> float:
    r, g, b = mcolors.to_rgb(colour)
    return max(r, g, b) - min(r, g, b)


# ------------------------------------------------------------------------------------ the style file
def test_style_file_is_shipped_and_keeps_text_at_9_pt():
    assert figures.STYLE_FILE.is_file()
    assert re.search(r'^gcc = \[[^\]]*"book.mplstyle"', (REPO / "pyproject.toml").read_text(), re.M)
    style = matplotlib.rc_params_from_file(figures.STYLE_FILE, use_default_template=False)
    sizes = {k: v for k, v in style.items() if re.search(r"(font|label|title)(_font)?size$|^font\.size$", k)}
    assert sizes and min(sizes.values()) >= figures.MIN_FONT_PT, sizes
    width, _ = style["figure.figsize"]
    assert width == figures.FIGURE_WIDTH_IN
    assert (width + 2 * float(style["savefig.pad_inches"])) <= figures.TEXT_WIDTH_IN
    assert style["figure.dpi"] == 100  # 1 in = 100 px on the page: a size in pt is its size on the page


def test_run_context_applies_the_book_style():
    matplotlib.rcdefaults()
    figures.use_book_style()
    assert list(matplotlib.rcParams["figure.figsize"]) == [figures.FIGURE_WIDTH_IN, 3.0]
    assert matplotlib.rcParams["xtick.labelsize"] >= figures.MIN_FONT_PT


# ------------------------------------------------------------------------------------ the registry
def _every_scheme():
    from gcc.cpgc import SCHEMES as CPGC_SCHEMES
    from gcc.experiments import dask_latency

    return list(gcc.codes.SCHEMES) + list(CPGC_SCHEMES) + list(dask_latency.SCHEMES)


def test_every_scheme_has_one_colour_and_marker_and_no_two_share_a_colour():
    schemes = list(dict.fromkeys(_every_scheme()))
    styles = {s: figures.scheme_style(s) for s in schemes}
    assert all(styles.values()), [s for s, v in styles.items() if v is None]
    colours = [mcolors.to_hex(c) for c, _ in figures.SCHEME_STYLES.values()]
    assert len(set(colours)) == len(colours)
    # colour means scheme: no scheme is grey, and references are grey
    assert min(_saturation(c) for c in colours) > 0.25
    assert _saturation(figures.REFERENCE["color"]) == 0


def test_aliases_and_module_palettes_take_the_registry_colour():
    from gcc.cpgc.codes import ALIASES as CPGC_ALIASES
    from gcc.experiments import dnn_serving

    for alias, key in list(gcc.codes.ALIASES.items()) + list(CPGC_ALIASES.items()):
        assert figures.scheme_style(alias) == figures.SCHEME_STYLES[key], alias
    assert dnn_serving._STYLE == {s: figures.SCHEME_STYLES[s] for s in dnn_serving._STYLE}
    assert figures.scheme_style("gcc_s2") == figures.SCHEME_STYLES["gcc"]  # a serving variant: its family
    assert figures.scheme_style("theory") is None


# ------------------------------------------------------------------------------------ the helper
def test_figure_puts_at_most_three_panels_per_row_and_names_its_caller():
    def plot_demo():
        return plotting.figure(7)

    fig, axes = plot_demo()
    assert len(axes) == 7 and len(fig.axes) == 7
    assert figures.figure_metrics(fig)["panels_per_row"] == 3
    assert fig.gcc_drawn_by.endswith(".plot_demo") and fig.get_figwidth() == figures.FIGURE_WIDTH_IN
    fig, axes = plotting.figure(3, ncols=2, wide_last=True)
    assert axes[2].get_subplotspec().colspan == range(0, 2)
    with pytest.raises(ValueError, match="'ncols' parameter of figure"):
        plotting.figure(4, ncols=4)
    plt.close("all")


def test_every_plot_function_makes_its_figure_with_the_book_helper():
    problems = []
    for name, node in _plot_functions():
        calls = {ast.unparse(c.func) for c in ast.walk(node) if isinstance(c, ast.Call)}
        if name in NOT_YET_IN_STYLE:
            continue
        if "figure" not in calls:
            problems.append(f"{name} does not call plotting.figure")
        drawn = calls & {"plt.subplots", "plt.figure", "plt.subplot_mosaic", "fig.subplot_mosaic"}
        if drawn:
            problems.append(f"{name} makes a figure of its own ({', '.join(sorted(drawn))})")
        colours = [kw.value.value for c in ast.walk(node) if isinstance(c, ast.Call) for kw in c.keywords
                   if kw.arg in ("color", "c") and isinstance(kw.value, ast.Constant)
                   and isinstance(kw.value.value, str) and re.fullmatch(r"C\d|tab:\w+", kw.value.value)]
        if colours:  # the cycle's colours would collide with the schemes'
            problems.append(f"{name} draws in {colours} (a scheme's colour comes from the registry)")
    assert len(list(_plot_functions())) >= 20
    assert not problems, "\n".join(problems)


def test_source_link_names_the_lines_of_the_function():
    for name, node in _plot_functions():
        link = figures.source_link(name)
        lines = (REPO / link["path"]).read_text().splitlines()
        assert lines[link["start"] - 1].lstrip().startswith(("def ", "@")), (name, link)
        assert link["end"] >= node.end_lineno and link["end"] <= len(lines)
        assert link["url"] == (f"{figures.REPOSITORY_URL}/blob/{figures.SOURCE_BRANCH}/{link['path']}"
                               f"#L{link['start']}-L{link['end']}")


def test_repository_url_is_the_one_of_the_book_config():
    config = yaml.safe_load((REPO / "_config.yml").read_text())
    assert config["repository"]["url"] == figures.REPOSITORY_URL
    assert config["repository"]["branch"] == figures.SOURCE_BRANCH
    context = config["sphinx"]["config"]["html_context"]
    assert f"https://github.com/{context['github_user']}/{context['github_repo']}" == figures.REPOSITORY_URL
    assert config["sphinx"]["config"]["numfig_format"]["figure"].startswith("Figure %s")


# ------------------------------------------------------------------------------------ drawn figures
def test_drawn_figures_read_at_page_width_in_the_registry_colours():
    from gcc.experiments import dask_latency, quickstart

    trials = quickstart.loss_trials(4, 1, [8, 16, 32], 3, -3.0, 3.0, seed=0)
    summary = gcc.summarize(trials, "loss", by=["scheme", "n_workers"])
    fig = quickstart.plot_loss_vs_n(summary, gcc.slope_table(summary, "n_workers", by=["scheme"]), title="t")
    n_labels = [t.get_text() for t in fig.axes[0].get_xticklabels() if t.get_text()]
    assert n_labels == ["8", "16", "32"]  # every N of the grid labelled, not one decade
    rng = np.random.default_rng(0)
    latency = pd.DataFrame([{"scheme": s, "latency_s": v, "simulated_s": v * 0.9}
                            for s in dask_latency.SCHEMES for v in rng.uniform(0.25, 2.5, 20)])
    figs = [fig, dask_latency.plot_latency_cdf(latency), dask_latency.plot_measured_vs_simulated(latency)]
    for one in figs:
        metrics = figures.figure_metrics(one)
        assert metrics["width_px"] <= figures.TEXT_WIDTH_IN * 100 and metrics["scale"] == 1.0, metrics
        assert metrics["min_font_pt"] >= figures.MIN_FONT_PT and metrics["panels_per_row"] <= 3, metrics
        assert not metrics["colour_mismatches"], metrics
    line = next(l for l in figs[0].axes[0].get_lines() if l.get_label().startswith("GCC"))
    assert mcolors.to_hex(line.get_color()) == mcolors.to_hex(figures.SCHEME_STYLES["gcc"][0])
    # the CDF's log axis: labels at 1-2-5, none of them on top of another
    figs[1].canvas.draw()
    shown = [t for t in figs[1].axes[0].get_xticklabels() if t.get_text() and t.get_visible()]
    boxes = sorted((t.get_window_extent().x0, t.get_window_extent().x1) for t in shown
                   if figs[1].axes[0].get_xlim()[0] <= t.get_position()[0] <= figs[1].axes[0].get_xlim()[1])
    assert all(a[1] < b[0] for a, b in zip(boxes, boxes[1:])), boxes
    plt.close("all")


def test_a_value_not_recorded_yet_stays_a_hole_and_an_unknown_parameter_is_an_error():
    assert figures.fill_values("slope {{ gcc_slope }}", {}, "RunContext.save_figure") == "slope {{ gcc_slope }}"
    with pytest.raises(ValueError, match=r"'caption' parameter of RunContext.save_figure .*Got 'run.S'"):
        figures.fill_values("S = {{ run.S }}", {}, "RunContext.save_figure", parameters={"N": 2})


def test_save_figure_records_caption_alt_and_source_and_the_page_gets_one_cell_per_figure(tmp_path):
    from gcc.reproduce.pages import figure_cells
    from gcc.results import RunContext
    from gcc.experiments import quickstart

    run = RunContext("demo", {"n_inputs": 4}, root=tmp_path)
    run.value("gcc_slope", -3.04)
    trials = quickstart.loss_trials(4, 1, [8, 16], 2, -3.0, 3.0, seed=0)
    summary = gcc.summarize(trials, "loss", by=["scheme", "n_workers"])
    fig = quickstart.plot_loss_vs_n(summary, gcc.slope_table(summary, "n_workers", by=["scheme"]))
    run.save_figure(fig, "loss", caption="Loss against N, K = {{ run.n_inputs }}: slope {{ gcc_slope }}, "
                    "{{ later }} later.", alt="A log-log plot; GCC's slope is {{ gcc_slope }}.")
    run.value("later", 7)  # recorded after the figure: the page step fills it in from run.json
    record = json.loads((run.folder / "run.json").read_text())["figure_captions"]["loss"]
    assert record["caption"] == "Loss against N, K = 4: slope \u22123.04, {{ later }} later."
    assert record["function"] == "gcc.experiments.quickstart.plot_loss_vs_n"
    assert record["url"].startswith(f"{figures.REPOSITORY_URL}/blob/main/gcc/experiments/quickstart.py#L")
    assert record["metrics"]["min_font_pt"] >= figures.MIN_FONT_PT
    image = {"output_type": "display_data", "data": {"image/png": "x"}, "metadata": {"gcc_figure": record}}
    table = {"output_type": "execute_result", "data": {"text/html": "<table/>"}, "metadata": {}}
    values = json.loads((run.folder / "run.json").read_text())["values"]
    cells = figure_cells([{"cell_type": "code", "id": "a", "source": "x", "metadata": {},
                           "outputs": [table, image, dict(image), table]}], values)
    assert [len(c["outputs"]) for c in cells] == [1, 1, 1, 1]
    shown = [c["metadata"]["mystnb"] for c in cells if "mystnb" in c["metadata"]]
    assert len(shown) == 2 and shown[0]["figure"]["name"] == "fig-demo-loss"
    assert shown[0]["image"]["alt"] == "A log-log plot; GCC's slope is \u22123.04."
    assert "Drawn by [`gcc.experiments.quickstart.plot_loss_vs_n`](" in shown[0]["figure"]["caption"]
    assert shown[0]["figure"]["caption"].startswith("Loss against N, K = 4: slope \u22123.04, 7 later.")
    assert all("run_record" not in c["metadata"].get("gcc_figure", {}) for c in cells)  # no machine path
    assert all(c["source"].strip() for c in cells)  # myst-nb drops a code cell without source
    assert [c.get("id") for c in cells] == ["a", "a-out0", "a-out1", "a-out2"]
    plt.close("all")


# ------------------------------------------------------------------------------------ the ci batch and book
def test_every_figure_of_the_ci_batch_reads_at_page_width(ci_results):
    problems = []
    for record_path in sorted(Path(ci_results).glob("*/run.json")):
        record = json.loads(record_path.read_text())
        for name in record.get("figures", {}):
            fig = record.get("figure_captions", {}).get(name)
            where = f"{record_path.parent.name}/{name}"
            if fig is None:
                problems.append(f"{where}: no caption record (save_figure without caption/alt?)")
                continue
            if not fig["caption"] or not fig["alt"] or not fig.get("url"):
                problems.append(f"{where}: caption, alt text or source link missing")
            quoted = re.findall(r"\{\{\s*((?:run\.)?\w+)\s*\}\}", fig["caption"] + fig["alt"])
            holes = set(quoted) - set(record.get("values", {}))
            if holes:
                problems.append(f"{where}: caption or alt quotes values the run never recorded: {sorted(holes)}")
            if fig.get("function") in NOT_YET_IN_STYLE:
                continue
            m = fig["metrics"]
            if m["min_font_pt"] < figures.MIN_FONT_PT or m["panels_per_row"] > 3 or m["colour_mismatches"]:
                problems.append(f"{where}: {m}")
    assert not problems, "\n".join(problems)


_HASH_ALT = re.compile(r"^[0-9a-f]{16,}(\.png|\.svg)?$")


def test_every_figure_of_a_built_page_has_a_numbered_caption_alt_text_and_a_source_link(html):
    problems = []
    pages = sorted((html / "book" / "generated").glob("*.html"))
    for page in pages:
        text = page.read_text()
        main = text[text.find("<main"):] if "<main" in text else text
        figures_html = re.findall(r"<figure\b.*?</figure>", main, re.S)
        images = re.findall(r"<img\b[^>]*>", main)
        in_figures = sum(len(re.findall(r"<img\b", f)) for f in figures_html)
        if in_figures < len(images):
            problems.append(f"{page.name}: {len(images) - in_figures} image(s) outside a numbered figure")
        for block in figures_html:
            alt = re.search(r'<img\b[^>]*\balt="([^"]*)"', block)
            number = re.search(r'<span class="caption-number">Figure ([\d.]+)\. </span>', block)
            link = re.search(rf'href="{re.escape(figures.REPOSITORY_URL)}/blob/main/gcc/[\w/]+\.py#L\d+-L\d+"',
                             block)
            if not number:
                problems.append(f"{page.name}: a figure without a 'Figure N.' caption")
            if not alt or len(alt.group(1).split()) < 5 or _HASH_ALT.match(alt.group(1)):
                problems.append(f"{page.name}: alt text {alt.group(1) if alt else None!r}")
            if not link:
                problems.append(f"{page.name}: a figure without the link to the code that drew it")
            if "{{" in block:
                problems.append(f"{page.name}: a template hole in a caption or alt text")
    assert pages and not problems, "\n".join(problems)
