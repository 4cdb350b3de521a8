"""xlwings backend: the workbook interface over a live Excel ``Book`` (the *Run main* button).

A thin adapter, a few lines per operation, over xlwings' public API
(``book.sheets``, ``Range.value``, ``Range.font``, ``sheet.charts``).  xlwings
itself is never imported here: the caller already holds a ``Book``.

Platform notes (documented departures from the openpyxl backend):

* Formula-looking text: Excel parses a string assigned to ``Range.value`` as
  if typed, so ``=SUM(A1)`` would become a formula and ``007`` a number.  Text
  that starts with ``= + - @``, a digit, ``.`` or ``'`` is therefore written with
  Excel's text prefix ``'`` (not part of the value; the cell reads back as the
  original text).
* Error bars on charts are not part of xlwings' chart API; they are added
  through Excel's object model (``chart.api``) where available (Windows) and
  otherwise left out — the bound column is always on the sheet next to the
  chart.
* Presentation (:class:`~xlcalib.workbook.base.SheetSpec`): values, the named
  font, bold header, number formats, column widths, wrapped text and marked
  rows go through xlwings' API; header comments, the frozen header, the
  funding-line border, print setup, reference lines on charts, fixed axis
  ranges and tick formats go through Excel's object model and are left out
  where it is missing (the values on the sheet are the same everywhere).
* Merged ranges are not reported (reading them cell by cell over COM is slow);
  a merged non-anchor cell still reads as blank and is reported by cell.
"""
from __future__ import annotations

import re

from ..cells import cell_position, cell_value, column_letter
from .base import (
    FONT_NAME,
    FONT_SIZE,
    HIGHLIGHT_FILL,
    MARGINS,
    MARK_FILL,
    Block,
    ChartSpec,
    SheetSpec,
    WorkbookBackend,
    cell_format,
    flagged,
    frame_rows,
    is_formula_text,
    ref_line_cells,
    row_height,
)

_CM = 28.3465  # points per centimetre
_CHART_TYPES = {"bar": "bar_clustered", "column": "column_clustered", "scatter": "xy_scatter", "dots": "line_markers"}
_EXCEL_WOULD_PARSE = re.compile(r"^[=+\-@.\d']")  # a leading ' would itself be taken as the text prefix


def excel_text(value):
    """Text Excel would turn into a formula or a number gets the text prefix ``'``; other values pass."""
    if isinstance(value, str) and (is_formula_text(value) or _EXCEL_WOULD_PARSE.match(value)):
        return "'" + value
    return value


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i:i + 2], 16) for i in (0, 2, 4))


class XlwingsBook(WorkbookBackend):
    """The interface over an xlwings ``Book``."""

    def __init__(self, book):
        self.book = book

    def sheet_names(self) -> list[str]:
        return [s.name for s in self.book.sheets]

    def read_block(self, sheet: str) -> Block:
        name = self.find_sheet(sheet)
        ws = self.book.sheets[name]
        tables = list(getattr(ws, "tables", None) or [])
        rng = tables[0].range if tables else ws.used_range
        values = rng.options(ndim=2).value
        return Block([list(r) for r in values], rng.row, rng.column, (), name)

    def delete_sheet(self, name: str) -> None:
        actual = self.find_sheet(name, required=False)
        if actual is not None:
            self.book.sheets[actual].delete()

    def write_sheet(self, spec: SheetSpec) -> int:
        """Render a :class:`SheetSpec` through xlwings: values, fonts, number formats, widths and marks;
        frozen header, header comments, the funding line and print setup through Excel's object model
        where it exists (Windows/macOS desktop), silently without them elsewhere."""
        spec = spec.printable()
        frame = spec.frame
        # first: a refused frame leaves the book as it was
        rows, header_row = frame_rows(frame, spec.preamble, spec.name, spec.footer)
        actual = self.find_sheet(spec.name, required=False)
        if actual is None:
            ws = self.book.sheets.add(spec.name, after=self.book.sheets[len(self.book.sheets) - 1])
        else:  # replace in place (keeps the tab's position): contents, formats and charts go
            ws = self.book.sheets[actual]
            for chart in list(ws.charts):
                chart.delete()
            ws.clear()
        width = max(len(r) for r in rows)
        ws.range("A1").options(ndim=2).value = [[excel_text(v) for v in r] + [None] * (width - len(r)) for r in rows]
        everything = ws.range((1, 1), (len(rows), width))
        everything.font.name = FONT_NAME
        everything.font.size = FONT_SIZE
        if header_row > 1:
            ws.range((1, 1), (header_row - 1, width)).font.italic = True
        ws.range((header_row, 1), (header_row, width)).font.bold = True
        if spec.header_lines() > 1:  # long names over narrow columns wrap: the row holds their lines
            _try(lambda: setattr(ws.range((header_row, 1), (header_row, width)), "wrap_text", True))
            _try(lambda: setattr(ws.range((header_row, 1), (header_row, width)), "row_height",
                                 row_height(spec.header_lines())))
        names = list(frame.columns)
        last = header_row + len(frame)
        if spec.footer:
            ws.range((last + 2, 1), (len(rows), width)).font.italic = True
        for j, (name, col_width) in enumerate(zip(names, spec.widths()), start=1):
            col = spec.column(name)
            if len(frame) and col.row_formats:  # a format per row (figures of different kinds in one column)
                for offset, v in enumerate(frame[name].to_numpy(dtype=object)):
                    v = cell_value(v)
                    if isinstance(v, (int, float)) and not isinstance(v, bool) and col.format_of(offset):
                        ws.range((header_row + 1 + offset, j)).number_format = cell_format(col.format_of(offset), v)
            elif len(frame) and col.number_format and frame[name].dtype.kind in "fiu":
                ws.range((header_row + 1, j), (last, j)).number_format = col.number_format
            elif len(frame) and col.number_format and col.number_format.startswith("auto:"):
                for offset, v in enumerate(frame[name].to_numpy(dtype=object)):
                    v = cell_value(v)
                    if isinstance(v, (int, float)) and not isinstance(v, bool):
                        ws.range((header_row + 1 + offset, j)).number_format = cell_format(col.number_format, v)
            _try(lambda: setattr(ws.range((1, j), (last, j)), "column_width", col_width))
            if spec.wrapped(name) and len(frame):  # long text wraps inside its capped width; rows grow to hold it
                _try(lambda: setattr(ws.range((header_row + 1, j), (last, j)), "wrap_text", True))
                _try(lambda: ws.range((header_row + 1, j), (last, j)).rows.autofit())
            if col.meaning:
                _try(lambda: ws.range((header_row, j)).api.AddComment(col.meaning))
        for column, colour in ((spec.highlight, HIGHLIGHT_FILL), (spec.mark, MARK_FILL)):
            if column in frame.columns:
                flags = flagged(frame[column])
                for offset in flags.nonzero()[0]:
                    r = header_row + 1 + int(offset)
                    ws.range((r, 1), (r, width)).color = _rgb(colour)
        if spec.line_after is not None:  # xlEdgeBottom = 9, xlThick = 4
            r = header_row + 1 + spec.line_after
            _try(lambda: setattr(ws.range((r, 1), (r, width)).api.Borders(9), "Weight", 4))
        if not spec.one_page:
            _try(lambda: _freeze(ws, header_row, spec.freeze_columns))
        _try(lambda: _print_setup(ws, spec, header_row))
        for chart in spec.charts:
            self.add_chart(spec.name, chart)
        return header_row

    def activate(self, sheet: str) -> None:
        _try(lambda: self.book.sheets[self.find_sheet(sheet)].activate())

    def write_values(self, sheet: str, row: int, column: int, rows: list[list]) -> None:
        if not rows:
            return
        ws = self.book.sheets[self.find_sheet(sheet)]
        width = max(len(r) for r in rows)
        if width:  # one block assignment: one call into Excel, not one per cell
            ws.range((row, column)).options(ndim=2).value = [[excel_text(cell_value(v)) for v in r]
                                                             + [None] * (width - len(r)) for r in rows]

    def fit_table(self, sheet: str, last_row: int, last_column: int) -> None:
        ws = self.book.sheets[self.find_sheet(sheet)]
        tables = list(getattr(ws, "tables", None) or [])
        if not tables:
            return
        table = tables[0]
        rng = table.range
        rows, columns = rng.shape
        end_row, end_column = rng.row + rows - 1, rng.column + columns - 1
        if last_row <= end_row and last_column <= end_column:
            return
        # Excel continues the table's formulas, formats and validation into the rows it gains
        table.resize(ws.range((rng.row, rng.column), (max(end_row, last_row), max(end_column, last_column))))

    def style_cells(self, sheet: str, ref: str, *, bold=None, italic=None, fill=None, number_format=None) -> None:
        rng = self.book.sheets[self.find_sheet(sheet)].range(ref)
        if bold is not None:
            rng.font.bold = bold
        if italic is not None:
            rng.font.italic = italic
        if fill is not None:
            rng.color = _rgb(fill)
        if number_format is not None:
            rng.number_format = number_format

    def add_chart(self, sheet: str, spec: ChartSpec) -> None:
        ws = self.book.sheets[self.find_sheet(sheet)]
        first, last = spec.header_row + 1, spec.header_row + spec.n_rows
        at = ws.range(spec.anchor)
        chart = ws.charts.add(left=at.left, top=at.top, width=spec.width_cm * _CM, height=spec.height_cm * _CM)
        chart.chart_type = "xy_scatter_lines" if spec.kind == "scatter" and spec.lines else _CHART_TYPES[spec.kind]
        # series from the (contiguous) value columns with their header; categories / x values set separately
        columns = list(spec.y_columns) + list(spec.line_columns)
        chart.set_source_data(ws.range((spec.header_row, min(columns)), (last, max(columns))))
        chart.name = spec.title[:31]
        try:  # xlwings >= 0.37.3/0.37.5; older versions keep Excel's default numbering and no titles
            chart.set_x_axis_values(ws.range((first, spec.x_column), (last, spec.x_column)))
            chart.title = spec.title
            if spec.x_title:
                chart.category_axis.title = spec.x_title
            if spec.y_title:
                chart.value_axis.title = spec.y_title
        except AttributeError:
            pass
        for k in range(len(spec.y_columns)):
            column = spec.errors_of(k)
            if column is not None:
                _error_bars(chart, ws.range((first, column), (last, column)), k + 1)
        for row, column, value in ref_line_cells(spec):  # the same cells as the openpyxl backend writes
            ws.range((row, column)).options(ndim=2).value = [[excel_text(value)]]
        top, left = cell_position(spec.anchor)
        for k, line in enumerate(spec.ref_lines):
            r = top + 2 * k
            _try(lambda: _add_line_series(chart, line.name, ws.range((r, left + 1), (r + 1, left + 1)),
                                          ws.range((r, left + 2), (r + 1, left + 2)), line.colour))
        _try(lambda: _series_looks(chart, spec, columns))
        _try(lambda: _axes(chart, spec))


def _try(action) -> bool:
    """Run a presentation step that needs Excel's object model; False where the platform lacks it."""
    try:
        action()
        return True
    except Exception:  # macOS / xlwings Server / Lite / the test stand-in: the step is left out
        return False


def _freeze(ws, header_row: int, columns: int) -> None:
    """Freeze the rows down to the header (and *columns* leading columns) in the sheet's window."""
    ws.activate()
    window = ws.book.app.api.ActiveWindow
    window.FreezePanes = False
    window.SplitRow, window.SplitColumn = header_row, columns
    window.FreezePanes = True


def _print_setup(ws, spec: SheetSpec, header_row: int) -> None:
    """Landscape (or portrait), the table alone (its print area) one page wide (a chart page: one page), the
    margins, the header row repeated on every printed page, the page number in the footer (Excel's PageSetup)."""
    setup = ws.api.PageSetup
    last_row, last_column = spec.printed_area()
    setup.PrintArea = f"$A$1:${column_letter(last_column)}${last_row}"
    setup.Orientation = 2 if spec.landscape else 1  # xlLandscape / xlPortrait
    setup.Zoom = False
    setup.FitToPagesWide, setup.FitToPagesTall = 1, (1 if spec.fits_one_page_tall() else False)
    left, right, top, bottom, header, footer = MARGINS
    points = 72  # per inch
    setup.LeftMargin, setup.RightMargin = left * points, right * points
    setup.TopMargin, setup.BottomMargin = top * points, bottom * points
    setup.HeaderMargin, setup.FooterMargin = header * points, footer * points
    setup.CenterFooter = f"{spec.name} - page &P of &N"
    if not spec.one_page:
        setup.PrintTitleRows = f"${header_row}:${header_row}"


def _api(chart):
    return chart.api[1] if isinstance(chart.api, tuple) else chart.api


def _add_line_series(chart, name: str, xs, ys, colour: str = "C00000") -> None:
    """A reference line (y = x, chance, 0.8) as a dashed XY series in its own colour through Excel's object model."""
    series = _api(chart).SeriesCollection().NewSeries()
    series.Name, series.XValues, series.Values = name, xs.api, ys.api
    series.ChartType = 74  # xlXYScatterLinesNoMarkers
    series.Format.Line.DashStyle = 4  # msoLineDash
    series.Format.Line.ForeColor.RGB = _excel_rgb(colour)


def _excel_rgb(hex_colour: str) -> int:
    """Excel's colour number (blue, green, red bytes) of an RRGGBB colour."""
    r, g, b = _rgb(hex_colour)
    return r + 256 * g + 65536 * b


def _series_looks(chart, spec: ChartSpec, columns: list[int]) -> None:
    """Each series in its colour (markers only on a dot plot), the line columns as a dashed line without markers."""
    api = _api(chart)
    for k, column in enumerate(columns, start=1):
        series = api.FullSeriesCollection(k)
        if column in spec.line_columns:
            series.MarkerStyle = -4142  # xlMarkerStyleNone
            series.Format.Line.ForeColor.RGB = _excel_rgb("C00000")
            series.Format.Line.DashStyle = 4
            continue
        colour = _excel_rgb(spec.colour_of(k - 1))
        series.MarkerForegroundColor = series.MarkerBackgroundColor = colour
        if spec.kind == "scatter" and spec.lines and not spec.markers:
            series.MarkerStyle = -4142  # xlMarkerStyleNone: a plain line
        if spec.kind == "dots" or (spec.kind == "scatter" and not spec.lines):
            series.Format.Line.Visible = False
        elif spec.kind in ("bar", "column"):
            series.Format.Fill.ForeColor.RGB = colour


def _axes(chart, spec: ChartSpec) -> None:
    """Fixed axis ranges (probabilities 0..1) and tick steps through Excel's object model."""
    api = _api(chart)
    for axis_type, rng in ((1, spec.x_range), (2, spec.y_range)):  # xlCategory (x of a scatter), xlValue
        if rng and (axis_type == 2 or spec.kind == "scatter"):
            axis = api.Axes(axis_type)
            axis.MinimumScale, axis.MaximumScale = rng
    if spec.x_major and spec.kind == "scatter":
        api.Axes(1).MajorUnit = spec.x_major
    if spec.y_major:
        api.Axes(2).MajorUnit = spec.y_major
    if spec.y_number_format:
        api.Axes(2).TickLabels.NumberFormat = spec.y_number_format
    if spec.x_number_format and spec.kind == "scatter":
        api.Axes(1).TickLabels.NumberFormat = spec.x_number_format
    if spec.y_axis_left and spec.kind == "scatter":
        api.Axes(1).Crosses = 4  # xlAxisCrossesMinimum: the value axis crosses the x axis at its minimum
    api.Axes(2).MajorGridlines.Format.Line.ForeColor.RGB = _excel_rgb("D9D9D9")  # light: never a reference line


def _error_bars(chart, rng, series: int = 1) -> bool:
    """± custom error bars on a series through Excel's object model (Windows); False where unavailable."""
    try:
        api = chart.api[1] if isinstance(chart.api, tuple) else chart.api
        api.FullSeriesCollection(series).ErrorBar(Direction=1, Include=1, Type=-4114, Amount=rng.api,
                                                  MinusValues=rng.api)
        return True
    except Exception:  # macOS / xlwings Server / older Excel: the chart stays without error bars
        return False
