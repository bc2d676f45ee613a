"""How a figure looks and reads on a book page: the book's matplotlib style (``gcc/book.mplstyle``),
one colour and marker per scheme (:data:`SCHEME_STYLES`), grey reference lines (:data:`REFERENCE`),
and a saved figure's caption, alt text and source link (:func:`figure_record`, :func:`show_figure`).
"""
from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

from .validation import invalid

__all__ = ["STYLE_FILE", "TEXT_WIDTH_IN", "FIGURE_WIDTH_IN", "MIN_FONT_PT", "MAX_PANELS_PER_ROW", "SCHEME_STYLES",
           "REFERENCE",
           "REPOSITORY_URL", "SOURCE_BRANCH", "use_book_style", "scheme_style",
           "source_link", "fill_values", "figure_metrics", "figure_record", "show_figure"]

#: the book's matplotlib style
STYLE_FILE = Path(__file__).with_name("book.mplstyle")
#: width of the text column at 1280 px (688 px at 100 dpi)
TEXT_WIDTH_IN = 6.88
#: width of every figure: with the 0.05 in padding of ``savefig.pad_inches`` the image stays within the column
FIGURE_WIDTH_IN = 6.7
#: smallest text of a figure at its displayed size
MIN_FONT_PT = 9.0
#: panels side by side at most
MAX_PANELS_PER_ROW = 3
#: the repository the source links point at (``repository.url`` and ``branch`` of ``_config.yml``)
REPOSITORY_URL = "https://github.com/gcc-companion/gcc-companion"
SOURCE_BRANCH = "main"

#: scheme key -> (colour, marker), the same in every figure of the book. Colour means scheme:
#: nothing else is drawn in these colours (reference lines use :data:`REFERENCE`).
SCHEME_STYLES: dict[str, tuple[str, str]] = {
    # codes of the straggler setting (gcc.codes)
    "gcc": ("#0072B2", "o"),          # blue
    "bacc": ("#D55E00", "^"),         # vermillion
    "bspline": ("#009E73", "s"),      # bluish green
    "lcc": ("#CC79A7", "D"),          # reddish purple
    # serving baselines (gcc.experiments.dnn_serving, dask_latency)
    "uncoded": ("#8C564B", "X"),      # brown
    "replication": ("#E69F00", "v"),  # orange
    # coded partial gradient computation (gcc.cpgc.codes)
    "rcsc": ("#9467BD", "o"),         # purple
    "icassp-mds": ("#BCBD22", "h"),   # olive
    "uc-mmc": ("#17BECF", "P"),       # cyan
    "uc-smc": ("#66A61E", "<"),       # leaf green
    "mds": ("#882255", "p"),          # wine
    "gc": ("#332288", "*"),           # indigo
}
#: the look of a theory rule or reference line (a slope, a diagonal, a threshold)
REFERENCE = {"color": "0.35", "ls": "--", "lw": 0.9}

#: spellings beyond the two registries' aliases (:data:`gcc.codes.ALIASES`, :data:`gcc.cpgc.ALIASES`)
_ALIASES = {"gradient-coding": "gc", "icassp_mds": "icassp-mds", "uc_mmc": "uc-mmc", "uc_smc": "uc-smc"}


def use_book_style() -> None:
    """Apply :data:`STYLE_FILE` to matplotlib's rcParams (after pyplot's import; nothing without matplotlib).

    Examples
    --------
    >>> import matplotlib
    >>> from gcc.figures import use_book_style
    >>> use_book_style(); matplotlib.rcParams["figure.figsize"]
    [6.7, 3.0]
    """
    try:
        import matplotlib.pyplot  # noqa: F401 - the inline backend sets its rc on import; ours comes after
        import matplotlib.style
    except ImportError:
        return
    matplotlib.style.use(STYLE_FILE)


def scheme_style(name) -> tuple[str, str] | None:
    """The colour and marker of a scheme in every figure.

    Parameters
    ----------
    name : str
        A scheme key or alias, any case (``"GCC"``, ``"UC-MMC"``, ``"uncoded"``); a serving variant
        ``"gcc_s2"`` takes the style of its family.

    Returns
    -------
    (str, str) or None
        Colour and marker; None for a name that is no scheme.

    Examples
    --------
    >>> from gcc.figures import scheme_style
    >>> scheme_style("GCC"), scheme_style("gcc_s2"), scheme_style("lambda")
    (('#0072B2', 'o'), ('#0072B2', 'o'), None)
    """
    from gcc.codes import ALIASES
    from gcc.cpgc.codes import ALIASES as CPGC_ALIASES

    if not isinstance(name, str):
        return None
    aliases = {**ALIASES, **CPGC_ALIASES, **_ALIASES}
    key = name.strip().lower().replace(" ", "-")
    key = aliases.get(key, key)
    if key not in SCHEME_STYLES and "_s" in key:
        key = aliases.get(key.partition("_s")[0], key.partition("_s")[0])
    return SCHEME_STYLES.get(key)


def source_link(drawn_by: str) -> dict:
    """Where the code of the function ``drawn_by`` (a dotted name in ``gcc``) lives.

    Returns
    -------
    dict
        ``function``, ``path`` (from the repository root), ``start``, ``end`` and ``url``
        (``REPOSITORY_URL/blob/SOURCE_BRANCH/<path>#L<start>-L<end>``).

    Examples
    --------
    >>> from gcc.figures import source_link
    >>> link = source_link("gcc.figures.source_link")
    >>> link["path"], link["url"].startswith("https://github.com/gcc-companion/gcc-companion/blob/main/gcc/figures.py#L")
    ('gcc/figures.py', True)
    """
    module_name, _, attr = drawn_by.rpartition(".")
    function = inspect.unwrap(getattr(importlib.import_module(module_name), attr))
    lines, start = inspect.getsourcelines(function)
    root = Path(__file__).resolve().parent.parent
    path = Path(inspect.getsourcefile(function)).resolve().relative_to(root).as_posix()
    end = start + len(lines) - 1
    return {"function": drawn_by, "path": path, "start": start, "end": end,
            "url": f"{REPOSITORY_URL}/blob/{SOURCE_BRANCH}/{path}#L{start}-L{end}"}


_VALUE = re.compile(r"\{\{\s*((?:run\.)?[A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def fill_values(text: str, values: dict, owner: str = "fill_values", argument: str = "caption",
                parameters: dict | None = None) -> str:
    """``text`` with every ``{{ key }}`` replaced by the text of the run's value ``key``
    (``values``: ``run.json``'s) and every ``{{ run.name }}`` by the run's parameter ``name``.

    A key without a value stays in the text (a value recorded after the figure: the page step
    fills it in; the book's tests fail on a hole left).

    Raises
    ------
    ValueError
        For a ``{{ run.name }}`` that is no parameter, naming ``argument`` of ``owner``.

    Examples
    --------
    >>> from gcc.figures import fill_values
    >>> fill_values("GCC's slope at S = {{ run.S }} is {{ gcc_slope }}.", {"gcc_slope": {"text": "-3.1"}},
    ...             parameters={"S": 2})
    "GCC's slope at S = 2 is -3.1."
    """
    def one(match):
        key = match.group(1)
        if key.startswith("run."):
            if key[4:] not in (parameters or {}):
                raise invalid(argument, owner, f"a text whose {{{{ run.name }}}} are parameters of the run "
                              f"({', '.join(sorted(parameters or {})) or 'none'})", key)
            value = parameters[key[4:]]
            return f"{value:g}" if isinstance(value, float) else str(value)
        if key not in values:
            return match.group(0)
        return str(values[key].get("text", values[key]))

    return _VALUE.sub(one, text)


def figure_metrics(fig) -> dict:
    """How ``fig`` (a matplotlib Figure) reads on a page.

    Returns
    -------
    dict
        ``width_px`` (of the image the inline backend writes at 100 dpi), ``scale`` (by which the
        688 px column shrinks it), ``min_font_pt`` (smallest visible text at displayed size),
        ``panels_per_row``, and ``colour_mismatches``: legend entries named after a scheme whose
        colour is not the scheme's (:data:`SCHEME_STYLES`).
    """
    import matplotlib
    from matplotlib.text import Text

    fig.canvas.draw()
    pad = matplotlib.rcParams["savefig.pad_inches"]
    pad = 0.1 if pad == "layout" else float(pad)
    width_px = (fig.get_tightbbox().width + 2 * pad) * 100.0  # the PNG the inline backend writes
    scale = min(1.0, TEXT_WIDTH_IN * 100.0 / width_px)
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    rows: dict = {}
    for ax in fig.axes:
        spec = ax.get_subplotspec()
        if spec is not None and ax.get_visible():
            rows.setdefault((id(spec.get_gridspec()), spec.rowspan.start), set()).add(spec.colspan.start)
    mismatches = []
    for legend in [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + fig.legends:
        for handle, text in zip(legend.legend_handles, legend.get_texts()):
            style = scheme_style(text.get_text().split(":")[0].split(",")[0].split(" (")[0].strip())
            if style and _colour_differs(handle, style[0]):
                mismatches.append(text.get_text())
    return {"width_px": round(float(width_px), 1), "scale": round(float(scale), 3),
            "min_font_pt": round(float(min(sizes) * scale), 2) if sizes else None,
            "panels_per_row": max((len(c) for c in rows.values()), default=0),
            "colour_mismatches": mismatches}


def _colour_differs(handle, colour: str) -> bool:
    """Whether a legend ``handle`` is drawn in a colour (its line's, face's or edge's) other than ``colour``."""
    import matplotlib.colors as mcolors

    for getter in ("get_color", "get_facecolor", "get_edgecolor"):
        if hasattr(handle, getter):
            drawn = getattr(handle, getter)()
            if getattr(drawn, "ndim", 0) == 2:
                drawn = drawn[0] if len(drawn) else None
            if drawn is not None and not (isinstance(drawn, str) and drawn == "none"):
                try:
                    return mcolors.to_hex(drawn) != mcolors.to_hex(colour)
                except ValueError:
                    return True
    return False


def figure_record(fig, label: str, caption: str, alt: str, drawn_by, run) -> dict:
    """The caption, alt text and source of ``fig`` as the page step reads them: ``label`` (its unique
    name on the page), ``caption`` and ``alt`` with ``{{ key }}`` and ``{{ run.name }}`` filled from
    the ``run`` (:func:`fill_values`), ``metrics`` (:func:`figure_metrics`) and, when the function
    that drew it is known (``drawn_by``, else the one :func:`gcc.experiments.plotting.figure`
    recorded), its :func:`source_link`.
    """
    caption, alt = (fill_values(text, run.record["values"], "RunContext.save_figure", argument, run.parameters)
                    for text, argument in ((caption, "caption"), (alt, "alt")))
    record = {"label": label, "caption": caption.strip(), "alt": alt.strip(), "metrics": figure_metrics(fig)}
    if drawn_by is not None and not isinstance(drawn_by, str):
        drawn_by = f"{inspect.unwrap(drawn_by).__module__}.{inspect.unwrap(drawn_by).__qualname__}"
    name = drawn_by or getattr(fig, "gcc_drawn_by", None)
    if name:
        try:
            record.update(source_link(name))
        except (ImportError, AttributeError, OSError, TypeError, ValueError):
            record["function"] = name
    return record


def show_figure(fig, record: dict) -> None:
    """Show ``fig`` once at this point of the page, ``record`` in its output's metadata (only in a kernel)."""
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        return
    shell = get_ipython()
    if shell is None or not hasattr(shell, "kernel"):
        return
    import matplotlib.pyplot as plt

    display(fig, metadata={"gcc_figure": record})
    plt.close(fig)
