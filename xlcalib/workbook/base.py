"""The small workbook interface the macros, the CLI and the reports are written against.

The backends implement it: :class:`~xlcalib.workbook.openpyxl_backend.OpenpyxlBook`
(files; used by the CLI and tested fully),
:class:`~xlcalib.workbook.xlwings_backend.XlwingsBook` (a live Excel workbook
through xlwings; a few lines per operation), and the file readers and the
result writer.  This module knows none of them: :func:`xlcalib.workbook.open_book`,
one floor up in the package's face, picks the backend from the object it is given.

Operations (all sheet names are matched case-insensitively on reading):

* ``sheet_names()``
* ``read_block(sheet)`` -> :class:`Block`: the sheet's Excel Table (the first
  one) or, without a table, its used range, as rows of raw cell values plus
  where the block sits (so messages can name real cells) and any merged cell
  ranges that overlap it;
* ``write_frame(sheet, frame, preamble=(), highlight=None)`` -> header row:
  (re)creates a *result* sheet holding an optional italic preamble (run time,
  settings), a bold header and the rows; rows whose ``highlight`` column is
  true are filled light red.  An existing sheet of that name is replaced
  (contents, formats and charts), never merged into;
* ``delete_sheet(name)``;
* ``add_chart(sheet, ChartSpec)``: a native chart (not a picture);
* ``style_cells(sheet, ref, bold=, italic=, fill=, number_format=)``;
* ``write_values(sheet, row, column, rows)`` and ``fit_table(sheet, last_row, last_column)``: plain values
  into an existing *input* sheet and its Excel Table grown to hold them (openpyxl and xlwings only), for
  the one job that fills input sheets on the user's request: importing a review export into the template.

Cell safety is shared: :func:`xlcalib.cells.cell_value` turns numpy scalars into
Python ones and NaN into a blank, and text beginning with ``=``, ``+``, ``-`` or
``@`` is always written as text, never as a formula (each backend enforces
it in its own way).
"""
from __future__ import annotations

import copy
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ..cells import EXCEL_MAX_COLUMNS, EXCEL_MAX_ROWS, cell_position, cell_value, is_number_text, merged_range_of
from ..errors import InputError

#: Text starting with one of these would be read by a spreadsheet as a formula.
FORMULA_STARTS = ("=", "+", "-", "@")
#: Fill colour of highlighted result rows (e.g. anomalous evaluations): Excel's "light red".
HIGHLIGHT_FILL = "FFC7CE"
#: Chart series colours, distinguishable also in grey print (blue, orange, green, purple, gold, teal), and
#: line markers: one look for every backend that draws charts.
CHART_COLOURS = ("1F4E79", "C55A11", "548235", "7030A0", "BF9000", "2E8B8B")
MARKERS = ("circle", "square", "triangle", "diamond", "x", "star")


def is_formula_text(value: Any) -> bool:
    """True for text a spreadsheet would take as a formula (``=1+1``, ``+A1``, ``-x``, ``@f``)."""
    return isinstance(value, str) and value.startswith(FORMULA_STARTS)


#: In text files (CSV, JSON) a cell carries no type, so these leading characters (OWASP's CSV-injection list:
#: formula starts plus tab and carriage return) make Excel evaluate the text when the file is opened.
TEXT_FILE_FORMULA_STARTS = FORMULA_STARTS + ("\t", "\r")


def neutralise_text(value: Any) -> Any:
    """Text for a CSV/JSON field that Excel will not run as a formula: a leading ``'`` when needed.

    The rule for text output (OWASP CSV-injection guidance): text starting
    with ``=``, ``+``, ``-``, ``@``, tab or carriage return gets a leading
    apostrophe; text that is a plain number (``-3``, ``+1.5``) and everything
    that is not text (numbers stay numbers) pass unchanged.  In xlsx output
    the same text is stored with the text type instead, so nothing is added.
    """
    if isinstance(value, str) and value.startswith(TEXT_FILE_FORMULA_STARTS) and not is_number_text(value):
        return "'" + value
    return value


def neutralise_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of *frame* whose text cells and column names pass :func:`neutralise_text` (numbers untouched)."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column].dtype):
            # the rule runs once per distinct value (ids repeat over many rows), then is spread back by code
            codes, uniques = pd.factorize(out[column], use_na_sentinel=True)
            uniques = np.asarray(uniques, dtype=object)  # plain objects: iterating a pandas StringArray is slow
            fixed = [neutralise_text(u) for u in uniques]
            if any(f is not u for f, u in zip(fixed, uniques)):
                values = np.asarray(fixed + [None], dtype=object)[codes]  # code -1 (missing) -> None
                out[column] = pd.Series(values, index=out.index, dtype=object)
    out.columns = [neutralise_text(c) for c in out.columns]
    return out


@dataclass(frozen=True)
class Block:
    """Raw cells of a table read from a sheet, and where they sit."""

    rows: list[list[Any]]
    first_row: int = 1
    first_column: int = 1
    #: merged cell ranges ("A2:A3") overlapping the block; their non-anchor cells read as blank
    merged: tuple[str, ...] = ()
    sheet: str = ""
    #: sheet row numbers of hidden rows inside the block (hiding is a view setting: they are still data)
    hidden_rows: tuple[int, ...] = ()
    #: when not empty, the sheet row / column number of each row / column of ``rows`` (a block read by its data,
    #: e.g. a sheet with one stray far cell: only rows and columns holding something are kept)
    row_numbers: tuple[int, ...] = ()
    column_numbers: tuple[int, ...] = ()

    def row_number(self, index: int) -> int:
        """The sheet row number of ``rows[index]``."""
        return self.row_numbers[index] if self.row_numbers else self.first_row + index

    def column_number(self, index: int) -> int:
        """The sheet column number (1 = A) of position *index* in a row."""
        return self.column_numbers[index] if self.column_numbers else self.first_column + index

    def merged_range_of(self, cell: str) -> str | None:
        """The merged range containing *cell* ("A3"), if any."""
        return merged_range_of(cell, self.merged)


@dataclass(frozen=True)
class RefLine:
    """A straight reference line drawn on a scatter chart from (x[0], y[0]) to (x[1], y[1]).

    Why: a reader judges a raw-vs-calibrated plot against y = x, an ROC curve
    against the chance diagonal and a caterpillar chart against the funding line.
    """

    name: str
    x: tuple[float, float]
    y: tuple[float, float]
    dashed: bool = True
    #: a reference line is drawn in a colour of its own, never the grey of the gridlines
    colour: str = "C00000"


@dataclass(frozen=True)
class ChartSpec:
    """A native chart of columns of a result sheet (1-based sheet columns, header row then data rows).

    ``kind``: ``"bar"`` (horizontal bars), ``"column"`` (vertical bars),
    ``"scatter"`` (markers; with ``lines`` also connecting lines) or ``"dots"``
    (a dot plot: one marker per category, e.g. an object in rank order, the
    categories' names on the axis).  ``x_column`` holds the categories (bar,
    column, dots) or the x values (scatter); ``y_columns`` one series each,
    named by the header cell, each in its own colour (``colours`` overrides
    the default order).  ``error_column`` adds symmetric custom error bars (±
    the column's values) to the first series, ``error_columns`` one per series
    (None: none).  ``line_columns`` are series drawn as a plain line without
    markers (a funding line across a dot plot), in a reference line's colour.
    ``x_range`` / ``y_range`` fix an axis (probabilities: ``(0, 1)``),
    ``x_major`` / ``y_major`` its tick step; ``ref_lines`` are reference lines
    (scatter only); ``x_number_format`` / ``y_number_format`` the tick labels.  ``markers=False`` draws a
    scatter's series with ``lines`` as plain lines (dense curves, e.g. category probabilities);
    ``y_axis_left`` puts the value axis at the left edge of a scatter whose x range spans 0 (otherwise it
    crosses at x = 0, in the middle of the plot).
    """

    kind: str
    title: str
    header_row: int
    n_rows: int
    x_column: int
    y_columns: tuple[int, ...]
    x_title: str = ""
    y_title: str = ""
    error_column: int | None = None
    anchor: str = "H2"
    width_cm: float = 18.0
    height_cm: float = 10.0
    lines: bool = False
    x_range: tuple[float, float] | None = None
    y_range: tuple[float, float] | None = None
    x_major: float | None = None
    ref_lines: tuple[RefLine, ...] = ()
    y_number_format: str | None = None
    x_number_format: str | None = None
    y_major: float | None = None
    error_columns: tuple[int | None, ...] = ()
    colours: tuple[str, ...] = ()
    line_columns: tuple[int, ...] = ()
    markers: bool = True
    y_axis_left: bool = False

    def __post_init__(self):
        if self.kind not in ("bar", "column", "scatter", "dots"):
            raise ValueError(f"unknown chart kind {self.kind!r}")

    def errors_of(self, k: int) -> int | None:
        """The error-bar column of series *k* (0-based), or None."""
        if self.error_columns:
            return self.error_columns[k] if k < len(self.error_columns) else None
        return self.error_column if k == 0 else None

    def colour_of(self, k: int) -> str:
        """The colour of series *k*: the spec's own, else the common order."""
        if k < len(self.colours) and self.colours[k]:
            return self.colours[k]
        return CHART_COLOURS[k % len(CHART_COLOURS)]


#: One font for every result cell (name *and* size: a bold font without a name falls back to a serif face).
FONT_NAME, FONT_SIZE = "Calibri", 11
#: Fill of rows to look at twice (e.g. decisions that calibration changed): Excel's "neutral" amber.
MARK_FILL = "FFEB9C"


@dataclass(frozen=True)
class Column:
    """How one column of a result sheet is shown: number format, what it means, wrapping, widest width."""

    name: str
    number_format: str | None = None
    meaning: str = ""
    wrap: bool = False
    max_width: float = 60.0
    #: one number format per data row (a column of figures of different kinds: a share, a count, a coefficient)
    row_formats: tuple = ()
    #: the narrowest width (labels written above the table in this column must be readable)
    min_width: float = 0.0

    def format_of(self, row: int) -> str | None:
        """The number format of data row *row* (0-based)."""
        if self.row_formats and row < len(self.row_formats):
            return self.row_formats[row]
        return self.number_format


@dataclass
class SheetSpec:
    """A result sheet described as data: the backends render it the same way (values, formats, widths,
    meanings as header comments, frozen header, marked rows, a line under a row, print setup, charts).

    ``highlight``: boolean column whose true rows are filled light red (anomalies); ``mark``: boolean
    column whose true rows are filled amber (look twice); ``line_after``: 0-based data row under which a
    thick line is drawn (the funding line); ``freeze_columns``: leading columns kept in view;
    ``hide_columns``: frame columns written (charts read them) but hidden.
    """

    name: str
    frame: pd.DataFrame
    preamble: list = field(default_factory=list)
    columns: dict = field(default_factory=dict)
    highlight: str | None = None
    mark: str | None = None
    line_after: int | None = None
    freeze_columns: int = 0
    charts: list = field(default_factory=list)
    landscape: bool = True
    #: 0-based data rows that start a new printed page (e.g. one page per assessor)
    page_breaks: list = field(default_factory=list)
    #: lines printed under the table after a blank row (counts, what a column means), one text per line
    footer: list = field(default_factory=list)
    #: (last row, last column) to print; None = the table itself (preamble, header, rows and footer)
    print_area: tuple[int, int] | None = None
    #: fit the print area to one page tall as well as wide (a chart page)
    one_page: bool = False
    #: each column's longest shown value, with the frame and column description it was measured on (widths, the
    #: wrapping and the print scale all ask for it, several times per sheet; a new frame or description remeasures)
    _longest: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def header_row(self) -> int:
        return len(self.preamble) + 2 if len(self.preamble) else 1

    @property
    def last_row(self) -> int:
        """The sheet row of the last line written (the footer's, else the table's last row)."""
        return self.header_row + len(self.frame) + (len(self.footer) + 1 if self.footer else 0)

    def printed_area(self) -> tuple[int, int]:
        """(last row, last column) of what prints: the table and its lines, never cells beside or below it."""
        return self.print_area or (self.last_row, max(1, self.frame.shape[1]))

    def table_pixels(self) -> int:
        """Width of the printed columns in screen pixels (what fit-to-width scales to the page)."""
        widths = self.widths()[: self.printed_area()[1]]
        return sum(column_pixels(w) for w in widths)

    def print_scale(self) -> float:
        """The scale fit-to-width prints the table at on the narrower paper (Letter or A4) of the orientation:
        1 when it fits; :data:`MIN_PRINT_SCALE` or more keeps 11 pt text at 9 pt or larger."""
        printable = PRINTABLE_PIXELS["landscape" if self.landscape else "portrait"]
        return min(1.0, printable / max(1, self.table_pixels()))

    def printable(self) -> "SheetSpec":
        """This sheet as the backends render it: every preamble and footer text longer than the table is wide
        split into lines that fit (printed text is never cut at the print area's edge, and no line widens the
        page so that the table shrinks)."""
        widths, last_column = self.widths(), self.printed_area()[1]
        printed = sum(widths[:last_column]) + DEFAULT_COLUMN_WIDTH * max(0, last_column - len(widths))
        chars = max(40, int(printed * TEXT_CHARS_PER_WIDTH))
        out = copy.copy(self)
        out.preamble = wrap_lines(self.preamble, chars)
        out.footer = wrap_lines(self.footer, chars)
        shift = out.header_row - self.header_row
        if shift:  # a chart reads the table's rows: it moves down with the table
            out.charts = [replace(c, header_row=c.header_row + shift) if c.header_row == self.header_row else c
                          for c in self.charts]
        return out

    def row_lines(self, wrapped: list[bool], widths: list[float]) -> np.ndarray:
        """Lines each data row needs for its wrapped text (a width unit holds about 1.2 characters of running text
        in an 11 pt font), per column, vectorised: the row heights every backend writes."""
        lines = np.ones(len(self.frame), dtype=np.intp)
        for name, wrap, width in zip(self.frame.columns, wrapped, widths):
            if not wrap:
                continue
            series = self.frame[name]
            is_text = series.map(type).eq(str).to_numpy()
            if not is_text.any():
                continue
            lengths = series.where(is_text, "").astype(str).str.len().to_numpy(dtype=np.intp)
            per_line = max(int(width * 1.2) - 2, 1)
            lines = np.maximum(lines, -(-lengths // per_line))
        return lines

    def fits_one_page_tall(self) -> bool:
        """Whether the whole sheet can print on one page at 9 pt or more (fit to one page tall as well as wide):
        a short table whose footer would otherwise spill a line or two onto a page of its own.

        The height is estimated from the lines written (15 pt each: preamble, the wrapped header, the data rows'
        wrapped lines, the footer); a long table keeps printing page after page at its width's scale.
        """
        if self.one_page or self.page_breaks or len(self.frame) > 60:
            return self.one_page
        widths = self.widths()
        data = int(self.row_lines([self.wrapped(c) for c in self.frame.columns], widths).sum())
        lines = len(self.preamble) + 1 + self.header_lines() + data + (len(self.footer) + 1 if self.footer else 0)
        height_pt = 15.0 * lines + 4
        page_pt = PRINTABLE_HEIGHT_PT["landscape" if self.landscape else "portrait"]
        return min(self.print_scale(), page_pt / height_pt) >= MIN_PRINT_SCALE

    def column(self, name) -> Column:
        """The column's description; undescribed columns get a format from their dtype."""
        if name in self.columns:
            return self.columns[name]
        return Column(str(name), default_format(self.frame[name]) if name in self.frame.columns else None)

    def longest(self, name) -> int:
        """Characters of the longest shown value of a column (numbers: the extremes decide; text: vectorised),
        measured once per frame and column description."""
        col = self.column(name)
        known = self._longest.get(name)
        if known is not None and known[0] is self.frame and known[1] == col:
            return known[2]
        chars = self._measure_longest(self.frame[name], col)
        self._longest[name] = (self.frame, col, chars)
        return chars

    @staticmethod
    def _measure_longest(series: pd.Series, col: Column) -> int:
        fmt = col.number_format
        if not len(series):
            return 0
        if col.row_formats:
            return max(len(shown_text(v, col.format_of(i))) for i, v in enumerate(series.to_numpy(dtype=object)))
        if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
            values = series.to_numpy(dtype=float)
            values = values[np.isfinite(values)]
            if not len(values):
                return 0
            picks = [values.min(), values.max(), values[np.argmin(np.abs(values))]]
            if pd.api.types.is_integer_dtype(series):
                picks = [int(v) for v in picks]
            return max(len(shown_text(v, fmt)) for v in picks)
        if pd.api.types.infer_dtype(series, skipna=False) == "string":  # every cell text (no blank among them)
            return int(series.str.len().max())
        return max(len(shown_text(v, fmt)) for v in series.to_numpy(dtype=object))

    def widths(self) -> list[float]:
        """Column widths (in characters) fitted to the header and the longest shown value, capped."""
        out = []
        for name in self.frame.columns:
            col = self.column(name)
            longest = self.longest(name)
            header = header_width(str(name))
            pad = 3  # text is indented one step; numbers keep a character clear of their neighbour
            out.append(round(max(min(max(longest + pad, header, 6), max(col.max_width, header)), col.min_width), 1))
        return out

    def header_lines(self) -> int:
        """Lines the tallest header takes at the columns' widths (headers wrap: at most :data:`HEADER_LINES`)."""
        lines = [next((k for k in range(1, HEADER_LINES + 1) if _fits(str(name).split() or [""], int((w - 2) / 1.1), k)),
                      HEADER_LINES) for name, w in zip(self.frame.columns, self.widths())]
        return int(max(lines, default=1))

    def wrapped(self, name) -> bool:
        """A column wraps when told to or when its longest text exceeds its capped width."""
        col = self.column(name)
        return col.wrap or self.longest(name) + 2 > col.max_width


#: Printable width in screen pixels (96 per inch) inside margins of 0.5 inch left and right: landscape on Letter
#: (27.94 cm; A4 is wider), portrait on A4 (21.0 cm; Letter is wider).  A table wider than this is printed
#: smaller by fit-to-width.
PRINTABLE_PIXELS = {"landscape": 960, "portrait": 698}
#: Printable height in points inside the top and bottom margins on the shorter paper of the orientation:
#: landscape A4 (8.27 in), portrait Letter (11 in), less 0.6 inch top and bottom.
PRINTABLE_HEIGHT_PT = {"landscape": (8.27 - 1.2) * 72, "portrait": (11.0 - 1.2) * 72}
#: Page margins in inches (left, right, top, bottom, header, footer): one set for every result sheet.
MARGINS = (0.5, 0.5, 0.6, 0.6, 0.3, 0.3)
#: The smallest print scale a result table may need: 11 pt text printed at 9 pt.
MIN_PRINT_SCALE = 9 / 11
#: Width of a column the sheet leaves at Excel's default (characters).
DEFAULT_COLUMN_WIDTH = 8.43
#: Characters of (italic, proportional) running text per unit of column width, kept on the safe side.
TEXT_CHARS_PER_WIDTH = 1.05


def row_height(lines) -> float:
    """A row's height in points for *lines* lines of wrapped text (a header or a data row), the same in every
    backend: 15 points a line and 2 of air."""
    return 15 * int(lines) + 2


def column_pixels(width: float) -> int:
    """Pixels a column of *width* characters takes (Calibri 11: 7 pixels per character plus 5 of padding)."""
    return int(round(7 * width + 5))


def wrap_lines(lines, chars: int) -> list:
    """Preamble or footer rows with each single long text split at word boundaries into rows of at most *chars*
    characters; rows of several cells (a small table of figures) and short texts pass unchanged."""
    import textwrap

    out = []
    for row in lines:
        row = list(row)
        cells = [c for c in row if c is not None and c != ""]
        if len(cells) == 1 and isinstance(row[0], str) and len(row[0]) > chars:
            out += [[part] for part in textwrap.wrap(row[0], chars, break_long_words=False, break_on_hyphens=False)]
        else:
            out.append(row)
    return out


def flagged(series: pd.Series) -> np.ndarray:
    """True rows of a flag column: booleans, or the words "yes" / "no" the result sheets show them as."""
    if pd.api.types.is_bool_dtype(series) or pd.api.types.is_numeric_dtype(series):
        return series.fillna(False).astype(bool).to_numpy()
    if pd.api.types.infer_dtype(series, skipna=False) == "string":  # the words: each distinct one read once
        codes, words = pd.factorize(series)  # a missing cell of a text column: code -1, not flagged
        yes = np.isin(np.char.lower(np.char.strip(np.asarray(words, dtype=str))), ["yes", "true"])
        return np.append(yes, False)[codes]
    return series.map(lambda v: v is True or (isinstance(v, (bool, np.bool_)) and bool(v))
                      or (isinstance(v, str) and v.strip().lower() in ("yes", "true"))).to_numpy(dtype=bool)


#: Lines a header may wrap into (a narrow column of figures under a long name).
HEADER_LINES = 3


def header_width(name: str) -> float:
    """The narrowest width a header fits in when it wraps into up to :data:`HEADER_LINES` lines at word
    boundaries (never splitting a word; bold text: 1.1 characters of width per character)."""
    words = name.split() or [""]
    width = max(max(len(w) for w in words), -(-len(name) // HEADER_LINES))
    while not _fits(words, width, HEADER_LINES):
        width += 1
    return width * 1.1 + 2


def _fits(words: list[str], width: int, lines: int) -> bool:
    """Whether *words* wrap into at most *lines* lines of *width* characters."""
    used, line = 1, 0
    for w in words:
        if line and line + 1 + len(w) > width:
            used, line = used + 1, len(w)
        else:
            line = line + (1 if line else 0) + len(w)
    return used <= lines


def cell_format(number_format: str | None, value: Any) -> str | None:
    """The format for one value: ``"auto:FMT"`` shows integers as integers and other numbers with FMT."""
    if number_format and number_format.startswith("auto:"):
        return "0" if isinstance(value, (int, np.integer)) and not isinstance(value, bool) else number_format[5:]
    return number_format


def default_format(series: pd.Series) -> str | None:
    """Counts as integers, other numbers with 2 decimals, text and booleans as they are."""
    if pd.api.types.is_bool_dtype(series):
        return None
    if pd.api.types.is_integer_dtype(series):
        return "0"
    if pd.api.types.is_float_dtype(series):
        return "0.00"
    return None


def shown_text(value: Any, number_format: str | None) -> str:
    """The text a spreadsheet shows for *value* under *number_format* (for widths and tests)."""
    value = cell_value(value)
    number_format = cell_format(number_format, value)
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not number_format or number_format == "General":
        if isinstance(value, float):
            return f"{value:.10g}"
        return str(value)
    condition = re.match(r'\[<([\d.]+)\]"([^"]*)";(.*)', number_format)
    if condition:  # e.g. [<0.0001]"<0.0001";0.0000 (p-values)
        limit, literal, rest = condition.groups()
        return literal if value < float(limit) else shown_text(value, rest)
    fmt = re.sub(r"\[[^\]]*\]", "", number_format.split(";")[0])  # first section, without [conditions]
    decimals = len(re.search(r"\.(0*)", fmt).group(1)) if "." in fmt else 0
    if "E" in fmt:
        text = f"{value:.{decimals}E}"
    elif "%" in fmt:
        text = f"{100 * value:.{decimals}f}%"
    elif "," in fmt:
        text = f"{value:,.{decimals}f}"
    else:
        text = f"{value:.{decimals}f}"
    return ("+" + text) if fmt.startswith("+") and value > 0 else text


def ref_line_cells(spec: ChartSpec) -> list[tuple[int, int, Any]]:
    """(row, column, value) cells holding the end points of a chart's reference lines.

    They sit under the chart's top-left corner (the chart hides them): literal series values are not
    kept by every spreadsheet application, cells are.  Line k: name, x1, y1 on one row, x2, y2 below.
    """
    top, left = cell_position(spec.anchor)
    cells = []
    for k, line in enumerate(spec.ref_lines):
        r = top + 2 * k
        cells += [(r, left, line.name), (r, left + 1, float(line.x[0])), (r, left + 2, float(line.y[0])),
                  (r + 1, left + 1, float(line.x[1])), (r + 1, left + 2, float(line.y[1]))]
    return cells


class WorkbookBackend(ABC):
    """The interface; see the module docstring."""

    book: Any

    @abstractmethod
    def sheet_names(self) -> list[str]: ...

    def find_sheet(self, name: str, required: bool = True) -> str | None:
        """The actual name of a sheet, matched case-insensitively; InputError (or None) when absent."""
        for actual in self.sheet_names():
            if actual.lower() == name.lower():
                return actual
        if required:
            raise InputError(f"no sheet named '{name}' (sheets: {', '.join(self.sheet_names())})", {"sheet": name})
        return None

    @abstractmethod
    def read_block(self, sheet: str) -> Block: ...

    def write_frame(self, sheet: str, frame: pd.DataFrame, preamble=(), highlight: str | None = None) -> int:
        """A frame as a result sheet with formats inferred from its dtypes; returns the header row."""
        return self.write_sheet(SheetSpec(sheet, frame, list(preamble), highlight=highlight))

    def write_sheet(self, spec: SheetSpec) -> int:
        """(Re)create the sheet *spec* describes, with its charts; returns the header row."""
        raise NotImplementedError(f"{type(self).__name__} cannot write sheets")

    @abstractmethod
    def delete_sheet(self, name: str) -> None: ...

    def activate(self, sheet: str) -> None:
        """Show *sheet* when the workbook is opened (the result a reader should see first)."""

    def write_values(self, sheet: str, row: int, column: int, rows: list[list[Any]]) -> None:
        """Plain values into the cells of an existing sheet from (*row*, *column*) on; text stays text, None
        clears a cell, and everything else on the sheet (formats, formulas, validation, tables) is kept.

        For the one job that fills input sheets, on the user's request: importing a review export into the
        template (Evaluations, the name lists, the Import sheet's saved roles).  Result sheets are written
        whole by :meth:`write_sheet`."""
        raise NotImplementedError(f"{type(self).__name__} cannot write into a sheet")

    def fit_table(self, sheet: str, last_row: int, last_column: int) -> None:
        """Grow the Excel Table on *sheet* (its first) so that it reaches *last_row* and *last_column*; never
        shrinks it.  New rows continue the table's formulas, formats and validation, as Excel continues a
        table that grows; a sheet without a table is left as it is."""
        raise NotImplementedError(f"{type(self).__name__} cannot change a table")

    @abstractmethod
    def add_chart(self, sheet: str, spec: ChartSpec) -> None: ...

    @abstractmethod
    def style_cells(self, sheet: str, ref: str, *, bold: bool | None = None, italic: bool | None = None,
                    fill: str | None = None, number_format: str | None = None) -> None: ...


def check_sheet_size(frame: pd.DataFrame, preamble=(), sheet: str = "", n_rows: int | None = None,
                     n_columns: int | None = None) -> None:
    """InputError when a result sheet (preamble, blank row, header, data) would exceed Excel's grid.

    Why: a sheet is never cut silently; the user is told to write text files instead.  *n_rows* /
    *n_columns* check a table before it exists (e.g. the Residuals of a panel before the fit).
    """
    n_rows = len(frame) if n_rows is None else n_rows
    n_columns = frame.shape[1] if n_columns is None else n_columns
    needed = len(preamble) + (1 if len(preamble) else 0) + 1 + n_rows
    if needed > EXCEL_MAX_ROWS or n_columns > EXCEL_MAX_COLUMNS:
        raise InputError(f"sheet {sheet or '(result)'} would need {needed:,} rows x {n_columns} columns; an Excel "
                         f"sheet holds {EXCEL_MAX_ROWS:,} x {EXCEL_MAX_COLUMNS:,}: write CSV or JSON instead "
                         "(xlcalib calibrate --format csv)", {"sheet": sheet})


def frame_rows(frame: pd.DataFrame, preamble=(), sheet: str = "", footer=()) -> tuple[list[list[Any]], int]:
    """The cell rows a result sheet holds (preamble, blank row, header, data, and a blank row and the footer
    lines when there are any) and the header's 1-based row.

    Raises InputError when the sheet would exceed Excel's 1,048,576 rows or 16,384 columns.
    """
    check_sheet_size(frame, list(preamble) + ([[]] + list(footer) if footer else []), sheet)
    rows = [[cell_value(v) for v in r] for r in preamble]
    if rows:
        rows.append([])
    header_row = len(rows) + 1
    rows.append([cell_value(c) for c in frame.columns])
    rows += [[cell_value(v) for v in r] for r in frame.to_numpy(dtype=object)]
    if footer:
        rows.append([])
        rows += [[cell_value(v) for v in r] for r in footer]
    return rows, header_row
