"""How measured numbers (:func:`format_value`) and result tables (:func:`display_table`, :func:`markdown_table`)
read on a book page."""
from __future__ import annotations

from .validation import TEXT, AnyOf, Frame, InstanceOf, Interval, NoneOr, caller, invalid, validate_params

__all__ = ["format_value", "display_table", "markdown_table", "MAX_ROWS", "MAX_COLUMNS"]

#: what a page may quote: a finite number (a NaN or an infinity would be quoted as "nan") or a text
NUMBER = AnyOf(Interval(int), Interval(float), InstanceOf(str),
               description="a finite real number or a str")
#: significant digits of a float on a page
DIGITS = Interval(int, 1, 17)


def _frame(frame):
    """``frame`` with a non-trivial index (a pivot's) as its first columns, and whole floats as integers."""
    import pandas as pd

    shown = frame.reset_index() if not isinstance(frame.index, pd.RangeIndex) else frame.copy()
    for column in shown.columns:
        values = shown[column]
        if values.dtype.kind == "f" and values.notna().any():
            finite = values.dropna()
            if ((finite % 1) == 0).all() and (finite.abs() < 2**53).all():
                shown[column] = values.astype("Int64")
    return shown


def _float_text(v, digits: int) -> str:
    """A float of a table to ``digits`` significant digits (whole below 1e9, exponent below 1e-3)."""
    if abs(v) >= 10 ** digits and abs(v) < 1e9:
        return f"{v:.0f}"  # 1033, not 1.03e+03
    return f"{v:.{digits}g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.{digits - 1}e}"


@validate_params({"number": NUMBER, "unit": TEXT, "digits": DIGITS, "fmt": NoneOr(TEXT)})
def format_value(number, unit: str = "", digits: int = 3, fmt: str | None = None) -> str:
    """The text a page shows for a measured ``number`` (finite, or a text shown as it is).

    Parameters
    ----------
    number : int, float or str
    unit : str
        Appended after a space (``"ms"``); ``"%"`` without one.
    digits : int in [1, 17]
        Significant digits of a float (a float of ``digits`` or more integer digits is shown whole).
    fmt : str, optional
        A format specification that replaces ``digits`` (``".1f"``, ``".0%"``).

    Returns
    -------
    str
        With the typographic minus sign (U+2212), as in the book's formulas.

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
        except (ValueError, TypeError) as exc:  # Python's message names the specification, not the argument
            raise invalid("fmt", caller("format_value"), "a format specification of a number", fmt, str(exc)) from None
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


#: rows and columns a page shows outright (a larger table shows its first ones, the whole collapsed)
MAX_ROWS = 25
MAX_COLUMNS = 8
#: rows shown above the dropdown of a long table
HEAD_ROWS = 10


def _styled(shown, digits: int, headers=None):
    """The Styler of a table as a page shows it (no index, floats to ``digits``, headers in words)."""
    headers = headers or {}
    formats = {c: (lambda v, d=digits: _float_text(v, d)) for c in shown.columns if shown[c].dtype.kind == "f"}
    import html

    # a long header wraps at its underscores (n_<wbr>workers), not inside a word
    return (shown.style.format(formats, na_rep="\u2013").hide(axis="index")
            .format_index(lambda c: html.escape(str(headers.get(c, c))).replace("_", "_<wbr>"), axis=1)
            .set_table_attributes('class="dataframe"'))  # styled like pandas tables by the theme


def _page_table(shown, full, digits: int, name: str, headers: dict):
    """A long, wide or reduced table: its first rows and columns, a ``data:`` CSV link, the whole collapsed."""
    import base64
    import html

    from IPython.display import HTML

    csv = base64.b64encode(full.to_csv(index=False).encode("utf-8")).decode("ascii")
    visible = shown.iloc[:HEAD_ROWS if len(shown) > MAX_ROWS else None, :MAX_COLUMNS]
    link = f'<a download="{html.escape(name)}.csv" href="data:text/csv;base64,{csv}">Download the full table (CSV)</a>'
    note = f"Shown: {len(visible)} of {len(full)} rows, {visible.shape[1]} of {full.shape[1]} columns. {link}"
    parts = [_styled(visible, digits, headers).to_html(), f'<p class="gcc-table-note">{note}</p>']
    if visible.shape != shown.shape:
        parts.append(f'<details class="gcc-full-table"><summary>All {len(shown)} rows, {shown.shape[1]} columns'
                     f"</summary><div>{_styled(shown, digits, headers).to_html()}</div></details>")
    return HTML("\n".join(parts))


@validate_params({"frame": Frame(), "digits": DIGITS, "name": TEXT,
                  "headers": NoneOr(InstanceOf(dict, "a dict {column: header text}"))})
def display_table(frame, digits: int = 3, columns=None, name: str = "table", headers=None):
    """A result table as a page shows it: no index, floats to ``digits`` digits, missing values as a dash;
    a long, wide or reduced table shows its first rows and columns, the whole collapsed, and a CSV download.

    Parameters
    ----------
    frame : pandas.DataFrame
    digits : int
    columns : list of str, optional
        The columns a reader needs (the others are in the CSV only).
    name : str
        File name (without ``.csv``) of the download.
    headers : dict, optional
        Header text of shown columns (``{"improvement_pct": "GCC vs BACC (%)"}``; the CSV keeps the keys).

    Returns
    -------
    pandas.io.formats.style.Styler or IPython.display.HTML

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
    >>> "<details" in html, "10 of 40 rows, 2 of 3 columns" in html, 'download="table.csv"' in html, ">note<" in html
    (True, True, True, False)
    """
    full = shown = _frame(frame)
    if columns is not None:  # pandas' KeyError names a missing column
        shown = full[[columns] if isinstance(columns, str) else list(columns)]
    if headers is not None and any(c not in full.columns for c in headers):
        raise invalid("headers", "display_table", "a dict whose keys are columns of the table", headers)
    if len(shown) <= MAX_ROWS and shown.shape[1] == full.shape[1] <= MAX_COLUMNS:
        return _styled(shown, digits, headers)
    return _page_table(shown, full, digits, name, headers)


@validate_params({"frame": Frame(), "digits": DIGITS})
def markdown_table(frame, digits: int = 4) -> str:
    """A result table as MyST markdown, formatted as :func:`display_table`.

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

    shown = _frame(frame)

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
