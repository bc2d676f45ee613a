"""How measured numbers and result tables read on a book page.

* :func:`format_value` -- a number with its significant digits and its unit (the text a chapter
  quotes through :meth:`gcc.results.RunContext.value`);
* :func:`display_table` -- a result table for a notebook page: no index, integers as integers,
  3 significant digits; a long table collapsed behind its first rows, with a CSV download;
* :func:`markdown_table` -- the same table as MyST markdown, for a chapter's include
  (:meth:`gcc.results.RunContext.include`).

:mod:`gcc.results` re-exports all three.
"""
from __future__ import annotations

from numbers import Integral, Real

from .validation import AnyOf, InstanceOf, Interval, NoneOr, invalid, validate_params

__all__ = ["format_value", "display_table", "markdown_table", "PageTable", "MAX_ROWS", "MAX_COLUMNS"]

#: what a page may quote: a finite number (a NaN or an infinity would be quoted as "nan") or a text
NUMBER = AnyOf(Interval(Integral), Interval(Real), InstanceOf(str),
               description="a finite real number or a str")
#: significant digits of a float on a page
DIGITS = Interval(Integral, 1, 17)
TEXT = InstanceOf(str, "a str")


def _frame(frame, owner: str):
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise invalid("frame", owner, "a pandas.DataFrame", frame)
    return frame


def _integral_columns(frame):
    """``frame`` with float columns whose values are all whole numbers as nullable integers."""
    shown = frame.copy()
    for column in shown.columns:
        values = shown[column]
        if values.dtype.kind == "f" and values.notna().any():
            finite = values.dropna()
            if ((finite % 1) == 0).all() and (finite.abs() < 2**53).all():
                shown[column] = values.astype("Int64")
    return shown


def _float_text(v, digits: int) -> str:
    if abs(v) >= 10 ** digits and abs(v) < 1e9:
        return f"{v:.0f}"  # 1033, not 1.03e+03
    return f"{v:.{digits}g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.{digits - 1}e}"


@validate_params({"number": NUMBER, "unit": TEXT, "digits": DIGITS, "fmt": NoneOr(TEXT)})
def format_value(number, unit: str = "", digits: int = 3, fmt: str | None = None) -> str:
    """The text a page shows for a measured number: ``digits`` significant digits, then the unit.

    Parameters
    ----------
    number : int, float or str
        Finite (a text is shown as it is).
    unit : str
        Appended after a space (``"ms"``, ``"s"``); ``"%"`` is appended without one.
    digits : int in [1, 17]
        Significant digits of a float (an integer is shown whole).
    fmt : str, optional
        A format specification that replaces ``digits`` (e.g. ``".1f"``, ``".0%"``).

    Returns
    -------
    str
        A minus sign is the typographic one (U+2212), as in the book's formulas.

    Examples
    --------
    >>> from gcc.display import format_value
    >>> format_value(412.345, "ms"), format_value(-7.9312), format_value(12, "workers")
    ('412 ms', '−7.93', '12 workers')
    >>> format_value(0.0421, fmt=".1%"), format_value(3.5, "%"), format_value(1033.4, "ms")
    ('4.2%', '3.5%', '1033 ms')
    >>> format_value(float("nan"), "ms")
    Traceback (most recent call last):
    ...
    gcc.validation.InvalidParameterError: The 'number' parameter of format_value must be a finite real number or a str. Got nan instead.
    """
    if isinstance(number, str):
        text = number
    elif fmt is not None:
        try:
            text = format(number, fmt)
        except (ValueError, TypeError):
            raise invalid("fmt", "format_value", "a format specification of a number (e.g. '.1f')", fmt) from None
    elif isinstance(number, int) or (hasattr(number, "dtype") and number.dtype.kind in "iu"):
        text = str(int(number))
    elif abs(float(number)) >= 10 ** digits:
        text = f"{float(number):.0f}"  # 1033 ms, not 1.03e+03 ms
    else:
        text = f"{float(number):.{digits}g}"
    text = text.replace("-", "\u2212")
    if not unit:
        return text
    return text + unit if unit == "%" else f"{text} {unit}"


#: rows a page shows outright; a longer table shows its first rows and the rest behind a dropdown
MAX_ROWS = 25
#: columns a page shows outright; a wider table shows its first columns and the rest behind a dropdown
MAX_COLUMNS = 8
#: rows shown above the dropdown of a long table
HEAD_ROWS = 10


def _styled(shown, digits: int, headers=None):
    headers = headers or {}
    formats = {c: (lambda v, d=digits: _float_text(v, d)) for c in shown.columns if shown[c].dtype.kind == "f"}
    import html

    # a long header wraps at its underscores (n_<wbr>workers), not inside a word
    return (shown.style.format(formats, na_rep="\u2013").hide(axis="index")
            .format_index(lambda c: html.escape(str(headers.get(c, c))).replace("_", "_<wbr>"), axis=1)
            .set_table_attributes('class="dataframe"'))  # styled like pandas tables by the theme


class PageTable:
    """A long or reduced result table on a page: its first rows, the full table collapsed, a CSV link.

    Made by :func:`display_table`; renders as HTML (``_repr_html_``). The CSV is embedded in the
    link (a ``data:`` URI), so the download works on the built site offline.

    Attributes
    ----------
    data : pandas.DataFrame
        The table as the page shows it (the chosen columns, every row).
    full : pandas.DataFrame
        Every column and row (the CSV).
    """

    def __init__(self, shown, full, digits: int, name: str, head: int, headers=None):
        self.data, self.full, self.digits, self.name, self.head = shown, full, digits, name, head
        self.headers = headers or {}

    def _repr_html_(self) -> str:
        import base64
        import html

        rows, columns = self.full.shape
        csv = base64.b64encode(self.full.to_csv(index=False).encode("utf-8")).decode("ascii")
        size = f"{rows} row{'s' if rows != 1 else ''}, {columns} column{'s' if columns != 1 else ''}"
        link = (f'<a download="{html.escape(self.name)}.csv" href="data:text/csv;base64,{csv}">'
                f"Download the full table ({size}, CSV)</a>")
        n_shown, n_columns = len(self.data), self.data.shape[1]
        long = n_shown > self.head and n_shown > MAX_ROWS
        wide = n_columns > MAX_COLUMNS
        visible = self.data.iloc[:, :MAX_COLUMNS] if wide else self.data
        notes = []
        if long:
            visible = visible.head(self.head)
            notes.append(f"First {self.head} of {n_shown} rows.")
        if wide:
            notes.append(f"First {MAX_COLUMNS} of {n_columns} columns.")
        dropped = self.full.shape[1] - n_columns
        if dropped:
            notes.append(f"{dropped} more column{'s' if dropped > 1 else ''} in the full table.")
        parts = [_styled(visible, self.digits, self.headers).to_html(), f'<p class="gcc-table-note">{" ".join(notes)} {link}</p>']
        if long or wide:
            summary = f"All {n_shown} rows" if not wide else f"All {n_columns} columns, {n_shown} rows"
            parts.append(f'<details class="gcc-full-table"><summary>{summary}</summary>'
                         f"<div>{_styled(self.data, self.digits, self.headers).to_html()}</div></details>")
        return "\n".join(parts)


@validate_params({"digits": DIGITS, "max_rows": Interval(Integral, 1, None), "name": TEXT,
                  "headers": NoneOr(InstanceOf(dict, "a dict {column: header text}"))})
def display_table(frame, digits: int = 3, columns=None, max_rows: int = MAX_ROWS, name: str = "table",
                  headers=None):
    """A result table as a page shows it: no index, integers as integers, floats to ``digits`` digits.

    Float columns whose values are all whole numbers (counts that a pivot or a NaN turned into
    floats) become integer columns; missing values are shown as a dash. A table of more than
    ``max_rows`` rows shows its first rows, and one of more than :data:`MAX_COLUMNS` columns its
    first columns, with the whole table behind a collapsed dropdown and a CSV download link; a table
    reduced to ``columns`` links the CSV of every column.

    Parameters
    ----------
    frame : pandas.DataFrame
    digits : int
        Significant digits of the remaining float columns.
    columns : list of str, optional
        The columns a reader needs (after a non-trivial index became columns); the others are
        in the CSV only.
    max_rows : int
        Longest table shown outright.
    name : str
        File name (without ``.csv``) of the download.
    headers : dict, optional
        Header text of shown columns (``{"improvement_pct": "GCC vs BACC (%)"}``); the CSV keeps
        the column keys.

    Returns
    -------
    pandas.io.formats.style.Styler or PageTable
        Renders as an HTML table in a notebook and on the book's page (a :class:`PageTable` when
        the table is long or reduced).

    Examples
    --------
    >>> import pandas as pd
    >>> from gcc.display import display_table
    >>> styled = display_table(pd.DataFrame({"n_workers": [20.0, 40.0], "loss": [1.234567e-3, 2.5e-4]}))
    >>> styled.data.dtypes.astype(str).tolist()
    ['Int64', 'float64']
    >>> html = styled.to_html()
    >>> "0.00123" in html, "2.50e-04" in html, ">20<" in html, "20.0" in html
    (True, True, True, False)
    >>> long = display_table(pd.DataFrame({"n": range(40), "loss": 0.5, "note": "x"}), columns=["n", "loss"])
    >>> html = long._repr_html_()
    >>> "<details" in html, "First 10 of 40 rows" in html, 'download="table.csv"' in html, list(long.data.columns)
    (True, True, True, ['n', 'loss'])
    >>> display_table(pd.DataFrame({"n": [1]}), columns=["m"])
    Traceback (most recent call last):
    ...
    gcc.validation.InvalidParameterError: The 'columns' parameter of display_table must be columns of the table (n). Got ['m'] instead.
    """
    import pandas as pd

    frame = _frame(frame, "display_table")
    full = _integral_columns(frame.reset_index() if not isinstance(frame.index, pd.RangeIndex) else frame)
    shown = full
    if columns is not None:
        wanted = [columns] if isinstance(columns, str) else list(columns)
        if not wanted or any(c not in full.columns for c in wanted):
            raise invalid("columns", "display_table",
                          f"columns of the table ({', '.join(str(c) for c in full.columns)})", wanted)
        shown = full[wanted]
    if headers is not None and any(c not in full.columns for c in headers):
        raise invalid("headers", "display_table", "a dict whose keys are columns of the table", headers)
    if len(shown) <= max_rows and shown.shape[1] == full.shape[1] <= MAX_COLUMNS:
        return _styled(shown, digits, headers)
    return PageTable(shown, full, digits, name, min(HEAD_ROWS, max_rows), headers)


@validate_params({"digits": DIGITS})
def markdown_table(frame, digits: int = 4) -> str:
    """A result table as a MyST (GitHub-style) markdown table, formatted as :func:`display_table`.

    Parameters
    ----------
    frame : pandas.DataFrame
        A non-trivial index (a pivot's) becomes the first columns.
    digits : int
        Significant digits of the float columns.

    Returns
    -------
    str
        Header, rule and one line per row; a missing value is a dash.

    Examples
    --------
    >>> import pandas as pd
    >>> from gcc.display import markdown_table
    >>> print(markdown_table(pd.DataFrame({"scheme": ["gcc", "bacc"], "n": [20.0, 40.0], "loss": [0.01234, None],
    ...                                    "ms": [1033.4, 98.76]})))
    | scheme | n | loss | ms |
    |---|---|---|---|
    | gcc | 20 | 0.01234 | 1033 |
    | bacc | 40 | – | 98.76 |
    """
    import pandas as pd

    frame = _frame(frame, "markdown_table")
    shown = _integral_columns(frame.reset_index() if not isinstance(frame.index, pd.RangeIndex) else frame)

    def cell(v, kind):
        if v is None or v is pd.NA or (isinstance(v, float) and v != v):
            return "\u2013"
        text = _float_text(v, digits) if kind == "f" else str(v)
        return text.replace("|", "\\|")

    kinds = [shown[c].dtype.kind for c in shown.columns]
    lines = ["| " + " | ".join(str(c) for c in shown.columns) + " |", "|" + "---|" * len(shown.columns)]
    for row in shown.itertuples(index=False):
        lines.append("| " + " | ".join(cell(v, k) for v, k in zip(row, kinds)) + " |")
    return "\n".join(lines)
