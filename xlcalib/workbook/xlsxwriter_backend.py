"""XlsxWriter backend: new result workbook files written fast, row by row, in bounded memory.

Why a second file backend: a result workbook of a large panel is mostly one
long sheet (Residuals: one row per evaluation).  openpyxl keeps every cell as
a Python object and serialises it element by element, which made writing the
styled result of 30,000 evaluations take longer than the calibration itself,
and near Excel's row limit minutes and gigabytes.  XlsxWriter (a well-kept
writer, the pandas ``to_excel`` engine of choice) streams each row to disk as
it is written (``constant_memory``), so time grows linearly and memory stays
at one row plus the result tables.  The plain rows of long sheets are written
as XlsxWriter's own row XML a block at a time (:class:`_RowXml`), about ten
times faster than its cell-by-cell calls, with the same bytes in the file.

What it is for: files xlcalib creates from nothing (``xlcalib calibrate``,
``xlcalib next-reads``).  Workbooks that must keep what is already in them
(the report copy with the template's formulas, the macros' live books, the
template builders) stay with :class:`~xlcalib.workbook.openpyxl_backend.OpenpyxlBook`;
XlsxWriter cannot edit an existing file.

How a sheet looks is not decided here: :class:`XlsxWriterBook` renders the
same :class:`~xlcalib.workbook.base.SheetSpec` descriptions as the openpyxl
and xlwings backends (fonts, number formats per value, header comments,
widths, wrapped rows and their heights, highlighted and marked rows, the
funding line, frozen and printed headers, page breaks, native charts), and a
test compares the two files cell by cell.  Sheets are kept as descriptions
until :meth:`XlsxWriterBook.save`, so a sheet can still be replaced or
deleted before the file is written, as with the other backends.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import math
import os
import re
import tempfile
import zipfile
import zlib
from typing import Any

import numpy as np

from ..cells import cell_position, cell_value, column_cells
from ..errors import InputError
from .text_output import polars_or_none
from .base import (
    FONT_NAME,
    FONT_SIZE,
    HIGHLIGHT_FILL,
    MARGINS,
    MARK_FILL,
    MARKERS,
    Block,
    ChartSpec,
    SheetSpec,
    WorkbookBackend,
    cell_format,
    check_sheet_size,
    flagged,
    frame_rows,
    ref_line_cells,
    row_height,
)

#: Pixels per character of column width (Calibri 11: 7-pixel digits) and per cm (96 dpi).
_PX_PER_CHAR, _PX_PER_CM = 7, 96 / 2.54
#: Number formats openpyxl gives date and time cells (kept, so both backends show them alike).
#: Data rows converted to cell values at a time (memory stays bounded whatever the sheet's length).
CHUNK_ROWS = 20_000
#: Sheets with at least this many data rows have their plain rows written as XML here (see :class:`_RowXml`).
FAST_ROWS = 1_000
_DATE_FORMATS = {_dt.datetime: "yyyy-mm-dd h:mm:ss", _dt.date: "yyyy-mm-dd", _dt.time: "h:mm:ss"}
#: Text XlsxWriter escapes before writing it (control characters as _xHHHH_, a literal _xHHHH_ kept literal,
#: XML's own characters) and leading or trailing space it marks to be kept.
_NEEDS_ESCAPE = re.compile(r"[&<>\x00-\x08\x0b-\x1f\ufffe\uffff]|_x[0-9a-fA-F]{4}_")
_CONTROL = re.compile(r"([\x00-\x08\x0b-\x1f])")
_ESCAPED_LOOKALIKE = re.compile("(_x[0-9a-fA-F]{4}_)")
#: Longest text written here: XlsxWriter itself checks longer text against Excel's cell limit.
_FAST_TEXT_CHARS = 16_383
_FAST_KINDS = frozenset({type(None), str, bool, int, float})


def excel_pixels(width: float) -> int:
    """The pixels Excel draws a column of stored *width* (characters) with (ECMA-376 18.3.1.13): XlsxWriter
    stores whole pixels, so the column shows exactly as the openpyxl backend's width shows."""
    return int(((256 * width + int(128 / _PX_PER_CHAR)) / 256) * _PX_PER_CHAR)


def _row_looks(spec: SheetSpec) -> np.ndarray:
    """Per data row: 0 plain, 1 filled red (the highlight column is true), 2 filled amber (the mark column)."""
    frame, names = spec.frame, list(spec.frame.columns)
    looks = np.zeros(len(frame), dtype=np.intp)
    if spec.mark in names:
        looks[flagged(frame[spec.mark])] = 2
    if spec.highlight in names:
        looks[flagged(frame[spec.highlight])] = 1
    return looks


def _cells_under(charts: list[ChartSpec]) -> dict[int, list[tuple[int, Any]]]:
    """The cells under the charts (their reference lines' end points) by sheet row: (column, value) each."""
    extra: dict[int, list[tuple[int, Any]]] = {}
    for chart in charts:
        for row, column, value in ref_line_cells(chart):
            extra.setdefault(row, []).append((column, value))
    return extra


def _print_setup(ws, spec: SheetSpec) -> None:
    """Frozen header; print landscape (or portrait), A4, the table alone (its print area) one page wide (a chart
    page: one page), the margins, header row repeated, page number in the footer, the spec's page breaks."""
    last_row, last_column = spec.printed_area()
    if not spec.one_page:
        ws.freeze_panes(spec.header_row, spec.freeze_columns)
        ws.repeat_rows(spec.header_row - 1)
    if spec.landscape:
        ws.set_landscape()
    else:
        ws.set_portrait()
    ws.set_paper(9)
    left, right, top, bottom, header, footer = MARGINS
    ws.set_margins(left=left, right=right, top=top, bottom=bottom)
    ws.print_area(0, 0, last_row - 1, last_column - 1)
    ws.fit_to_pages(1, 1 if spec.fits_one_page_tall() else 0)
    ws.set_footer(f"&C{spec.name} - page &P of &N", {"margin": footer})
    ws.set_header("", {"margin": header})
    if spec.page_breaks:
        ws.set_h_pagebreaks([spec.header_row + offset for offset in spec.page_breaks])


def new_result_book() -> "XlsxWriterBook":
    """An empty result workbook for a new file (sheets rendered when it is saved)."""
    return XlsxWriterBook()


class XlsxWriterBook(WorkbookBackend):
    """A new workbook file rendered by XlsxWriter when saved (:func:`save_atomically` or :meth:`save`).

    Holds :class:`SheetSpec` descriptions in order; ``write_sheet`` checks the
    sheet fits Excel's grid at once (a refused sheet leaves the book as it was).
    """

    def __init__(self):
        self.specs: dict[str, SheetSpec] = {}
        self.extra_charts: dict[str, list[ChartSpec]] = {}
        self.active: str | None = None
        self.created: _dt.datetime | None = None

    # ------------------------------------------------------------------ the interface
    def sheet_names(self) -> list[str]:
        return list(self.specs)

    def read_block(self, sheet: str) -> Block:
        """A sheet written in this run, as the cells it will hold."""
        spec = self.specs[self.find_sheet(sheet)]
        rows, _ = frame_rows(spec.frame, spec.preamble, spec.name, spec.footer)
        return Block(rows, 1, 1, (), spec.name)

    def write_sheet(self, spec: SheetSpec) -> int:
        spec = spec.printable()
        check_sheet_size(spec.frame, spec.preamble + spec.footer, spec.name)
        self.delete_sheet(spec.name)
        self.specs[spec.name] = spec
        return spec.header_row

    def delete_sheet(self, name: str) -> None:
        actual = self.find_sheet(name, required=False)
        if actual is not None:
            del self.specs[actual]
            self.extra_charts.pop(actual, None)
            if self.active == actual:
                self.active = None

    def activate(self, sheet: str) -> None:
        self.active = self.find_sheet(sheet)

    def add_chart(self, sheet: str, spec: ChartSpec) -> None:
        self.extra_charts.setdefault(self.find_sheet(sheet), []).append(spec)

    def style_cells(self, sheet: str, ref: str, *, bold=None, italic=None, fill=None, number_format=None) -> None:
        raise TypeError("a result file written by XlsxWriter is styled through its SheetSpec (xlcalib.presentation), "
                        "not cell by cell")

    # ------------------------------------------------------------------ writing the file
    def save(self, path: str | os.PathLike) -> None:
        """Render every sheet into the file *path* (use :func:`save_atomically` for the atomic rename)."""
        import xlsxwriter
        from xlsxwriter.exceptions import FileCreateError

        if not self.specs:
            raise InputError("nothing to write: the result workbook has no sheets")
        # XlsxWriter streams each sheet into temporary files before zipping them: a private folder, removed
        # whatever happens, so a full disk or an interrupted run leaves none of them behind
        with tempfile.TemporaryDirectory(prefix="xlcalib-", ignore_cleanup_errors=True) as scratch:
            book = xlsxwriter.Workbook(os.fspath(path), {"constant_memory": True, "nan_inf_to_errors": False,
                                                         "tmpdir": scratch})
            try:
                if self.created is not None:
                    book.set_properties({"created": self.created})
                renderer = _Renderer(book)
                for name, spec in self.specs.items():
                    renderer.sheet(spec, self.extra_charts.get(name, []),
                                   active=name == (self.active or next(iter(self.specs))))
                with _quick_compression():
                    book.close()
            except FileCreateError as exc:
                # XlsxWriter wraps the file system's error (a full disk, a file-size limit) in its own type; the
                # writers answer OSError with one line naming the file (xlcalib.errors.os_error_message)
                raise (exc.args[0] if exc.args and isinstance(exc.args[0], OSError) else OSError(str(exc))) from None
            finally:
                if not book.fileclosed:  # stopped mid-way: release the sheets' temporary files, write nothing
                    _abandon(book)


#: zlib level of the workbook's zip: 1 compresses a 3 x 10^5-evaluation result (270 MB of sheet XML) in 2.4 s
#: instead of the default level's 6.5 s, for a file 25% larger (58 MB instead of 46 MB) -- the wait matters more.
ZIP_LEVEL = 1


def _isal_deflate():
    """ISA-L's deflate (python-isal), where installed: the same raw deflate stream format, about three times
    faster than zlib at level 1 and no larger (the 149 MB Residuals sheet of that result: 0.34 s against 1.14 s,
    32.4 MB against 33.3 MB).  None without it (Pyodide, a machine without the wheel): zlib does the work."""
    try:
        from isal import isal_zlib
    except ImportError:
        return None
    return isal_zlib


class _QuickZipFile(zipfile.ZipFile):
    """A ZipFile whose compression level defaults to :data:`ZIP_LEVEL`, deflating with ISA-L where installed.

    zipfile takes its compressor from zlib and has no option for another: each member written gets a fresh
    deflate object of the same level from ISA-L instead (the stream, its CRC and sizes are zipfile's own; a
    Python without the writer's ``_compressor`` keeps zlib's).
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("compresslevel", ZIP_LEVEL)
        super().__init__(*args, **kwargs)
        self._deflate = _isal_deflate()

    def open(self, name, mode="r", pwd=None, *, force_zip64=False):
        handle = super().open(name, mode, pwd, force_zip64=force_zip64)
        info = name if isinstance(name, zipfile.ZipInfo) else None
        deflated = (info.compress_type if info is not None else self.compression) == zipfile.ZIP_DEFLATED
        if mode == "w" and deflated and self._deflate is not None and getattr(handle, "_compressor", None) is not None:
            asked = getattr(info, "compress_level", getattr(info, "_compresslevel", None))  # renamed in 3.13
            level = ZIP_LEVEL if asked is None else asked
            handle._compressor = self._deflate.compressobj(level, zlib.DEFLATED, -15)
        return handle


@contextlib.contextmanager
def _quick_compression():
    """XlsxWriter zips the sheets with zlib's default level and has no option for it: while it closes the book,
    its ZipFile is :class:`_QuickZipFile` (nothing changes if XlsxWriter stops naming ZipFile)."""
    import xlsxwriter.workbook as module

    original = getattr(module, "ZipFile", None)
    if original is not zipfile.ZipFile:
        yield
        return
    module.ZipFile = _QuickZipFile
    try:
        yield
    finally:
        module.ZipFile = original


def _abandon(book) -> None:
    """Close the temporary files of an XlsxWriter workbook that failed or was interrupted before it was written."""
    book.fileclosed = True
    for ws in book.worksheets():
        handle = getattr(ws, "row_data_fh", None)
        if handle is not None:
            try:
                handle.close()
            except OSError:
                pass


class _Renderer:
    """Renders SheetSpecs into one xlsxwriter Workbook; formats are shared (one per distinct look)."""

    def __init__(self, book):
        self.book = book
        self._formats: dict[tuple, Any] = {}

    def fmt(self, **props):
        key = tuple(sorted(props.items()))
        found = self._formats.get(key)
        if found is None:
            found = self._formats[key] = self.book.add_format({"font_name": FONT_NAME, "font_size": FONT_SIZE, **props})
        return found

    def sheet(self, spec: SheetSpec, extra_charts: list[ChartSpec], active: bool) -> None:
        """Render one sheet: column widths, the preamble and header, the data rows, print setup and charts."""
        ws = self.book.add_worksheet(spec.name)
        names = list(spec.frame.columns)
        wrapped = [spec.wrapped(c) for c in names]
        widths = spec.widths()
        charts = list(spec.charts) + list(extra_charts)
        extra = _cells_under(charts)  # written in row order with the rest
        for j, width in enumerate(widths):
            ws.set_column_pixels(j, j, excel_pixels(width))
        self._heading(ws, spec, extra)
        self._data_rows(ws, spec, wrapped, widths, extra)
        self._below_table(ws, spec, extra)
        _print_setup(ws, spec)
        for chart in charts:
            self.chart(ws, spec.name, chart, [str(c) for c in names])
        if active:
            ws.activate()

    def _heading(self, ws, spec: SheetSpec, extra: dict) -> None:
        """The preamble (italic, the title bold and a point larger), a blank row, then the bold header with the
        columns' meanings as comments."""
        header_row = spec.header_row  # 1-based, as in the spec; xlsxwriter counts rows and columns from 0
        preamble = [[cell_value(v) for v in r] for r in spec.preamble]
        for i, row in enumerate(preamble, start=1):
            for j, value in enumerate(row):
                look = self.fmt(italic=True, bold=True, font_size=FONT_SIZE + 1) if (i, j) == (1, 0) else \
                    self.fmt(italic=True)
                self._write(ws, i - 1, j, value, look)
            self._write_extra(ws, i, extra)
        if preamble:
            self._write_extra(ws, len(preamble) + 1, extra)
        head = self.fmt(bold=True, bottom=1, text_wrap=True, valign="bottom")
        if spec.header_lines() > 1:  # long names over narrow columns wrap: the row holds their lines
            ws.set_row(header_row - 1, row_height(spec.header_lines()))
        for j, name in enumerate(spec.frame.columns):
            self._write(ws, header_row - 1, j, cell_value(name), head)
            meaning = spec.column(name).meaning
            if meaning:
                ws.write_comment(header_row - 1, j, meaning, {"author": "xlcalib", "width": 300, "height": 90})
        self._write_extra(ws, header_row, extra)

    def _below_table(self, ws, spec: SheetSpec, extra: dict) -> None:
        """The footer lines (italic, after a blank row) and any chart cells below the table, in row order."""
        end = spec.header_row + len(spec.frame)  # 1-based row of the table's last row
        footer = {end + 1 + i: row for i, row in enumerate(spec.footer, start=1)}
        for row in sorted(set(footer) | {k for k in extra if k > end}):
            for j, value in enumerate(footer.get(row, ())):
                self._write(ws, row - 1, j, cell_value(value), self.fmt(italic=True))
            self._write_extra(ws, row, extra)

    def _data_rows(self, ws, spec: SheetSpec, wrapped: list[bool], widths: list[float], extra: dict) -> None:
        """The data rows, a block at a time (bounded memory): as row XML where they are plain, else cell by cell;
        one format per (column, value kind, row look), decided per column where it can be."""
        frame, names = spec.frame, list(spec.frame.columns)
        n = len(frame)
        looks = _row_looks(spec)
        line = spec.line_after if spec.line_after is not None and 0 <= spec.line_after < n else None
        lines = spec.row_lines(wrapped, widths) if any(wrapped) else None
        cache, look_of = self._looks(spec, wrapped)
        first = spec.header_row  # 0-based index of the first data row
        by_row = [j for j, c in enumerate(names) if spec.column(c).row_formats]  # formats that change per row
        rows_xml = _RowXml.for_sheet(ws) if n >= FAST_ROWS and not by_row else None
        for start in range(0, n, CHUNK_ROWS):
            stop = min(n, start + CHUNK_ROWS)
            values = [column_cells(frame[c].iloc[start:stop]) for c in names]
            heights = None if lines is None else [row_height(k) if k > 1 else None for k in lines[start:stop]]
            if rows_xml is not None and \
                    rows_xml.write(first + start, values, looks[start:stop], None if line is None else line - start,
                                   extra, look_of, heights):
                continue
            write = self._write
            for i in range(start, stop):
                r = first + i
                if lines is not None and lines[i] > 1:
                    ws.set_row(r, row_height(lines[i]))
                fill, under = int(looks[i]), i == line
                for j, column in enumerate(values):
                    value = column[i - start]
                    kind = type(value)
                    if by_row and j in by_row:
                        write(ws, r, j, value, look_of(j, kind, fill, under, i))
                        continue
                    write(ws, r, j, value, cache.get((j, kind, fill, under)) or look_of(j, kind, fill, under))
                if extra:
                    self._write_extra(ws, r + 1, extra)

    def _looks(self, spec: SheetSpec, wrapped: list[bool]):
        """(cache, look_of): the format of a data cell by (column, value kind, row look, funding line under it).

        The value's kind decides its format (an "auto:" format shows integers as integers), so one format per
        key serves every cell; the cache is handed out too, for the per-cell loop to look in first.
        """
        columns = [spec.column(c) for c in spec.frame.columns]
        any_wrapped = any(wrapped)
        cache: dict[tuple, Any] = {}

        def look_of(j: int, kind: type, fill: int, under: bool, row: int | None = None):
            fmt = columns[j].number_format if row is None else columns[j].format_of(row)
            key = (j, kind, fill, under) if row is None else (j, kind, fill, under, fmt)
            found = cache.get(key)
            if found is None:
                number_format = cell_format(fmt, 1 if kind is int else 0.5)
                found = cache[key] = self.fmt(**self._data_props(columns[j], kind, number_format, wrapped[j],
                                                                 any_wrapped, j, fill, under))
            return found

        return cache, look_of

    @staticmethod
    def _data_props(column, kind, number_format, wrapped: bool, any_wrapped: bool, j: int, fill: int, under: bool):
        """The openpyxl backend's data-cell look (``_style_data_cell``) as xlsxwriter format properties."""
        props: dict[str, Any] = {}
        if number_format and kind in (int, float):
            props["num_format"] = number_format
        elif kind in _DATE_FORMATS:
            props["num_format"] = _DATE_FORMATS[kind]
        if kind is str and j > 0:  # text clear of the number to its left
            props.update(align="left", indent=1)
            if wrapped:
                props["text_wrap"] = True
            if any_wrapped:
                props["valign"] = "top"
        elif wrapped:
            props.update(text_wrap=True, valign="top")
        elif any_wrapped:
            props["valign"] = "top"
        if fill:
            props.update(pattern=1, bg_color="#" + (HIGHLIGHT_FILL if fill == 1 else MARK_FILL))
        if under:
            props.update(bottom=5, bottom_color="#C00000")
        return props

    @staticmethod
    def _write(ws, row: int, col: int, value, look) -> None:
        """One cell: text always as text (never a formula), numbers as numbers, blanks keep their look."""
        if value is None or value == "":
            ws.write_blank(row, col, None, look)
        elif isinstance(value, str):
            ws.write_string(row, col, value, look)
        elif isinstance(value, bool):
            ws.write_boolean(row, col, value, look)
        elif isinstance(value, (int, float)):
            if math.isfinite(value):
                ws.write_number(row, col, value, look)
            else:  # a spreadsheet number cannot be infinite: shown as the text it is
                ws.write_string(row, col, str(value), look)
        else:  # dates and times
            ws.write_datetime(row, col, value, look)

    def _write_extra(self, ws, row: int, extra: dict) -> None:
        for column, value in extra.get(row, ()):
            self._write(ws, row - 1, column - 1, cell_value(value), None)

    def chart(self, ws, sheet: str, spec: ChartSpec, headers: list[str]) -> None:
        """A native chart drawn like the openpyxl backend's (same series, colours, markers, axes, size)."""
        first, last = spec.header_row, spec.header_row + spec.n_rows - 1  # 0-based data rows
        x = spec.x_column - 1
        if spec.kind in ("scatter", "dots"):
            chart = self._point_chart(sheet, spec, first, last, headers)
        else:
            chart = self.book.add_chart({"type": "bar" if spec.kind == "bar" else "column"})
            for k, col in enumerate(spec.y_columns):
                series = {"name": [sheet, spec.header_row - 1, col - 1], "categories": [sheet, first, x, last, x],
                          "values": [sheet, first, col - 1, last, col - 1],
                          "fill": {"color": "#" + spec.colour_of(k)}}
                if spec.errors_of(k) is not None:
                    key = "x_error_bars" if spec.kind == "bar" else "y_error_bars"
                    series[key] = self._error_bars(sheet, spec.errors_of(k), first, last)
                chart.add_series(series)
        chart.set_title({"name": spec.title})
        x_axis = self._axis(spec.x_title, spec.x_range, spec.x_major, spec.x_number_format)
        if spec.kind == "scatter":
            x_axis["major_gridlines"] = {"visible": True, "line": {"color": "#D9D9D9"}}
            if spec.y_axis_left:  # the value axis crosses the x axis at its minimum (XlsxWriter sets it on x)
                x_axis["crossing"] = "min"
        else:
            x_axis["label_position"] = "low"  # category labels below the plot, not on the zero line
        if spec.kind == "dots":
            x_axis["num_font"] = {"rotation": -90, "size": 8}
        chart.set_x_axis(x_axis)
        y_axis = self._axis(spec.y_title, spec.y_range, spec.y_major, spec.y_number_format)
        y_axis["major_gridlines"] = {"visible": True, "line": {"color": "#D9D9D9"}}  # light: never a reference line
        chart.set_y_axis(y_axis)
        if spec.kind in ("bar", "column") and len(spec.y_columns) == 1:
            chart.set_legend({"none": True})
        else:
            chart.set_legend({"position": "bottom"})
        chart.set_size({"width": round(spec.width_cm * _PX_PER_CM), "height": round(spec.height_cm * _PX_PER_CM)})
        ws.insert_chart(spec.anchor, chart)

    def _point_chart(self, sheet: str, spec: ChartSpec, first: int, last: int, headers: list[str]):
        """A scatter chart (x values) or a dot plot (a line chart without lines: categories), its series, the
        line series across it and the reference lines drawn from the cells under it."""
        x = spec.x_column - 1
        if spec.kind == "dots":
            chart = self.book.add_chart({"type": "line"})
        else:
            chart = self.book.add_chart({"type": "scatter",
                                         "subtype": ("straight_with_markers" if spec.markers else "straight")
                                         if spec.lines else None})
        chart.set_style(13)
        for k, col in enumerate(spec.y_columns):
            c = "#" + spec.colour_of(k)
            marker = ({"type": MARKERS[k % len(MARKERS)], "size": 6, "fill": {"color": c}, "border": {"color": c}}
                      if spec.markers or not spec.lines else {"type": "none"})
            series = {"name": headers[col - 1] if col <= len(headers) else "",
                      "categories": [sheet, first, x, last, x], "values": [sheet, first, col - 1, last, col - 1],
                      "marker": marker,
                      "line": {"color": c, "width": 22000 / 12700} if spec.lines else {"none": True},
                      "smooth": False}
            if spec.errors_of(k) is not None:
                series["y_error_bars"] = self._error_bars(sheet, spec.errors_of(k), first, last, c)
            chart.add_series(series)
        for col in spec.line_columns:
            chart.add_series({"name": headers[col - 1] if col <= len(headers) else "",
                              "categories": [sheet, first, x, last, x],
                              "values": [sheet, first, col - 1, last, col - 1], "marker": {"type": "none"},
                              "line": {"color": "#C00000", "width": 2.25, "dash_type": "dash"}, "smooth": False})
        top, left = cell_position(spec.anchor)
        for k, line in enumerate(spec.ref_lines):
            r = top - 1 + 2 * k
            chart.add_series({"name": line.name, "categories": [sheet, r, left, r + 1, left],
                              "values": [sheet, r, left + 1, r + 1, left + 1], "marker": {"type": "none"},
                              "line": {"color": "#" + line.colour, "width": 2.0,
                                       "dash_type": "dash" if line.dashed else "solid"},
                              "smooth": False})
        return chart

    @staticmethod
    def _axis(title: str, bounds, major, number_format) -> dict:
        axis: dict[str, Any] = {}
        if title:
            axis["name"] = title
        if bounds:
            axis["min"], axis["max"] = bounds
        if major:
            axis["major_unit"] = major
        if number_format:
            axis["num_format"] = number_format
        return axis

    @staticmethod
    def _error_bars(sheet: str, column: int, first: int, last: int, colour: str = "#7F7F7F") -> dict:
        from xlsxwriter.utility import quote_sheetname, xl_range_abs

        ref = f"={quote_sheetname(sheet)}!{xl_range_abs(first, column - 1, last, column - 1)}"
        return {"type": "custom", "plus_values": ref, "minus_values": ref, "end_style": 1,
                "line": {"color": colour, "width": 0.75}}


class _RowXml:
    """Plain data rows written as the worksheet XML XlsxWriter itself would write, a block of rows at a time.

    Why: XlsxWriter spends about 15 microseconds on each cell (argument
    checks, a cell tuple, attribute escaping, one file write per element), so
    the result of a panel near Excel's row limit (13 million cells) took
    minutes.  Rows without special heights, holding text, numbers, logicals
    and blanks, are written here with the same elements, attributes, number
    text (16 significant digits), escapes and formats, byte for byte (tested
    against XlsxWriter's own output), into the row stream XlsxWriter keeps in
    its constant-memory mode.  Where polars can be used, a block of rows is
    assembled by it (:func:`_block_by_polars`; numbers then as the shortest
    text of the same double).  Anything else (dates, very long text, rows
    with heights) goes through XlsxWriter cell by cell, as before.

    It uses XlsxWriter's row stream (``fh``, ``previous_row``,
    ``_write_single_row``, ``_check_dimensions``) and each format's
    ``_get_xf_index``; when an XlsxWriter release lacks them, every row goes
    through XlsxWriter's public calls.
    """

    def __init__(self, ws):
        self.ws = ws

    @classmethod
    def for_sheet(cls, ws) -> "_RowXml | None":
        needed = ("fh", "previous_row", "_write_single_row", "_check_dimensions", "table", "row_info", "comments")
        if not getattr(ws, "constant_memory", False) or not all(hasattr(ws, name) for name in needed):
            return None
        return cls(ws)

    def write(self, first: int, values: list[list], looks: np.ndarray, under: int | None, extra: dict,
              look_of, heights: list | None = None) -> bool:
        """Rows ``first`` ... (0-based) of *values* (one list per column), each with its height in points where
        *heights* gives one (wrapped text: the row attributes ``set_row`` would write); False (nothing written)
        when a cell or row needs XlsxWriter's own handling."""
        ws, m = self.ws, len(values[0]) if values else 0
        if not m or ws.previous_row > first:
            return False
        kinds = [set(map(type, column)) for column in values]
        for column, found in zip(values, kinds):
            if not found <= _FAST_KINDS:
                return False
            if str in found and _longest_text(column, found) > _FAST_TEXT_CHARS:
                return False
        last = first + m - 1
        busy = [r for r in list(ws.row_info) + list(ws.comments) if first <= r <= last]
        if busy:
            return False
        below = {r: cells for r, cells in extra.items() if first + 1 <= r <= last + 1}
        points = [(column, cell_value(value)) for cells in below.values() for column, value in cells]
        if any(column <= len(values) or type(value) not in _FAST_KINDS for column, value in points):
            return False  # a point over the table (XlsxWriter decides which write wins) or a date
        ws._write_single_row(first)  # XlsxWriter writes out the row it holds, as its own next write would
        ws._check_dimensions(first, 0)
        ws._check_dimensions(last, len(values) - 1)
        numbers = [str(r) for r in range(first + 1, last + 2)]
        codes = looks.astype(np.intp) * 2
        if under is not None and 0 <= under < m:
            codes[under] += 1
        styles = self._styles(values, codes, kinds, look_of)
        for r, cells in below.items():  # the charts' reference-line points, in their columns of these rows
            for column, _ in cells:
                ws._check_dimensions(r - 1, column - 1)
        opening = self._row_openings(first, numbers, heights)
        extras = {r - first - 1: "".join(self._extra_cells(r, cells)) for r, cells in below.items()}
        polars = polars_or_none() if m >= POLARS_BLOCK_ROWS else None
        block = None
        if polars is not None:
            try:
                block = _block_by_polars(polars, self, values, kinds, numbers, codes, styles, opening, extras)
            except Exception:  # noqa: BLE001 - a polars release whose API moved: the rows as Python writes them
                pass
        if block is not None:
            ws.fh.write(block)
        else:
            listed = codes.tolist()
            columns = [self._cells(j, column, kinds[j], numbers, listed, styles[j]) for j, column in enumerate(values)]
            parts = []
            for i, row_cells in enumerate(zip(*columns)):
                parts.append(opening[i])
                parts.extend(row_cells)
                if i in extras:
                    parts.append(extras[i])
                parts.append("</row>")
            ws.fh.write("".join(parts))
        ws.previous_row = last + 1  # XlsxWriter continues below these rows
        return True

    def _row_openings(self, first: int, numbers: list[str], heights: list | None) -> list[str]:
        """Each row's opening tag: ``<row r="N">``, or with the height XlsxWriter's ``set_row`` would give it (in
        pixels, rounded as it rounds; written in points with its ``ht``/``customHeight`` attributes), recorded in
        ``row_sizes`` as ``set_row`` records it (objects placed over rows use it)."""
        if heights is None or not any(h is not None for h in heights):
            return [f'<row r="{number}">' for number in numbers]
        ws, out = self.ws, []
        for i, (number, height) in enumerate(zip(numbers, heights)):
            pixels = None if height is None else int(height * 4.0 / 3.0 + 0.5)
            if pixels is None or pixels == ws.default_row_height == ws.original_row_height:
                out.append(f'<row r="{number}">')
                continue
            ws.row_sizes[first + i] = [pixels, False]
            out.append(f'<row r="{number}" ht="{pixels * 0.75:.16g}" customHeight="1">')
        return out

    @staticmethod
    def _styles(values: list[list], codes: np.ndarray, kinds: list[set], look_of) -> list[dict]:
        """Per column, the style attribute of each (value kind, row look).  Formats get their numbers in the
        order XlsxWriter would number them: by the first cell using each, row by row, then column by column
        (so the file is the same, styles included)."""
        m = len(codes)
        unique_codes, first_rows = np.unique(codes, return_index=True)  # each row look's first row
        by_look = list(zip(unique_codes.tolist(), first_rows.tolist()))
        listed = None
        firsts = []
        for j, column in enumerate(values):
            if len(kinds[j]) == 1:  # one kind of value in the column (the usual case): its first use is the look's
                kind = next(iter(kinds[j]))
                firsts += [(i, j, (kind, code)) for code, i in by_look]
                continue
            listed = codes.tolist() if listed is None else listed
            keys = list(zip(map(type, column), listed))
            first = dict(zip(reversed(keys), range(m - 1, -1, -1)))  # later assignments win: first use
            firsts += [(i, j, key) for key, i in first.items()]
        styles: list[dict] = [{} for _ in values]
        for _, j, (kind, code) in sorted(firsts, key=lambda f: (f[0], f[1])):
            look = look_of(j, kind, code // 2, bool(code % 2))
            styles[j][(kind, code)] = f' s="{look._get_xf_index()}"' if look is not None else ""
        return styles

    def _cells(self, j: int, column: list, kinds: set, numbers: list[str], codes: list[int], styles: dict) -> list[str]:
        from xlsxwriter.utility import xl_col_to_name

        letter = xl_col_to_name(j)
        # the usual columns in one comprehension each: numbers of one kind (finite floats, or whole numbers as
        # counts and ranks are), or text (an empty cell keeps its look, and without one there is no element)
        if kinds == {int} or (kinds == {float} and all(map(math.isfinite, column))):
            kind = next(iter(kinds))
            look = {code: styles[(kind, code)] for code in set(codes)}
            return [f'<c r="{letter}{number}"{look[code]}><v>{value:.16G}</v></c>'
                    for value, number, code in zip(column, numbers, codes)]
        if kinds == {str}:
            look = {code: styles[(str, code)] for code in set(codes)}
            inner = _inline_texts(set(column) - {""})
            return [f'<c r="{letter}{number}"{look[code]} t="inlineStr">{inner[value]}</c>' if value else
                    (f'<c r="{letter}{number}"{look[code]}/>' if look[code] else "")
                    for value, number, code in zip(column, numbers, codes)]

        texts: dict[str, str] = {}
        return [_cell_xml(f"{letter}{number}", value, styles[(type(value), code)], texts)
                for value, number, code in zip(column, numbers, codes)]

    @staticmethod
    def _extra_cells(row: int, cells: list) -> list[str]:
        from xlsxwriter.utility import xl_col_to_name

        return [_cell_xml(f"{xl_col_to_name(column - 1)}{row}", cell_value(value), "", {})
                for column, value in sorted(cells, key=lambda c: c[0])]


def _block_by_polars(pl, rows: "_RowXml", values: list[list], kinds: list[set], numbers: list[str], codes: np.ndarray,
                     styles: list[dict], opening: list[str], extras: dict[int, str]) -> str:
    """The block's rows as one string, assembled by polars (in Rust, on its threads) instead of an f-string per
    cell: the same elements, attributes, escapes and formats as :meth:`_RowXml._cells`, except that a number's
    text is the shortest that reads back as the same double (``0.30000000000000004``, ``1e-7``, ``3.0``) where
    XlsxWriter writes 16 significant digits (``0.3``, ``1E-07``, ``3``): the value a reader gets is then exactly
    the one computed (16 digits can even read back as infinity: 1.797693134862316E+308).  Columns of numbers and
    of text -- nearly every cell of a large result -- are built here; any other column (blanks among numbers,
    logicals, whole numbers beyond 64 bits) keeps its cells from :meth:`_RowXml._cells`.  Formatting a double
    took Python 0.6 microseconds; polars takes a tenth of that."""
    from xlsxwriter.utility import xl_col_to_name

    present, index = np.unique(codes, return_inverse=True)  # each row's look, as an index into the looks present
    index = pl.Series(index.astype(np.int64, copy=False))
    data = {"n": pl.Series(numbers, dtype=pl.String), "open": pl.Series(opening, dtype=pl.String)}
    number = pl.col("n")
    pieces = [pl.col("open")]
    for j, column in enumerate(values):
        kind = next(iter(kinds[j])) if len(kinds[j]) == 1 else None
        inner = _polars_inner(pl, column, kind, f"v{j}", data)
        if inner is None:  # a column of another kind: its cells as Python writes them
            data[f"c{j}"] = pl.Series(rows._cells(j, column, kinds[j], numbers, codes.tolist(), styles[j]),
                                      dtype=pl.String)
            pieces.append(pl.col(f"c{j}"))
            continue
        looks = [styles[j][(kind, int(code))] for code in present]
        start = pl.lit(f'<c r="{xl_col_to_name(j)}')
        # what follows the row number up to the value, one gathered piece: the row's look and the value's tag
        tag = ' t="inlineStr">' if kind is str else "><v>"
        data[f"s{j}"] = pl.Series([f'"{look}{tag}' for look in looks], dtype=pl.String).gather(index)
        cell = [start, number, pl.col(f"s{j}"), inner, pl.lit("</c>" if kind is str else "</v></c>")]
        if kind is str and "" in column:  # an empty text is no element, or an empty element that keeps the look
            data[f"e{j}"] = pl.Series([f'"{look}/>' if look else None for look in looks], dtype=pl.String).gather(index)
            empty = pl.when(pl.col(f"e{j}").is_not_null()).then(pl.concat_str([start, number, pl.col(f"e{j}")]))
            pieces.append(pl.when(inner.is_null()).then(empty.otherwise(pl.lit(""))).otherwise(pl.concat_str(cell)))
        else:  # the cell's pieces go straight into the row's
            pieces.extend(cell)
    if extras:  # the charts' reference-line points beside a few rows
        data["extra"] = pl.Series([extras.get(i, "") for i in range(len(numbers))], dtype=pl.String)
        pieces.append(pl.col("extra"))
    pieces.append(pl.lit("</row>"))
    return pl.DataFrame(data).select(pl.concat_str(pieces).str.join("")).item()


#: Blocks of at least this many rows are assembled by polars where it can be used (:func:`_block_by_polars`).
POLARS_BLOCK_ROWS = 200
_INT64 = (-(2**63), 2**63 - 1)
#: XlsxWriter's test for text to keep as it is (``^\s|\s$``); Rust's \s lacks Python's \x1c-\x1f, which are
#: escaped before the test is made.
_EDGE_SPACE_RUST = r"^\s|\s$"


def _polars_inner(pl, column: list, kind, name: str, data: dict):
    """The expression of each cell's inner text -- the number's text, or the ``<is>`` element of a text (null for
    an empty text) -- with the column it reads put in *data* under *name*; None when the column is not one of
    finite numbers or of text alone."""
    if kind is float:
        numbers = np.array(column, dtype=float)
        if not np.isfinite(numbers).all():  # infinities are shown as text
            return None
        data[name] = pl.Series(numbers)
        return pl.col(name).cast(pl.String)
    if kind is int:
        if not (_INT64[0] <= min(column) and max(column) <= _INT64[1]):
            return None
        data[name] = pl.Series(column, dtype=pl.Int64)
        return pl.col(name).cast(pl.String)
    if kind is not str:
        return None
    texts = pl.Series(column, dtype=pl.String)
    escaped = texts.str.contains(_NEEDS_ESCAPE.pattern)
    if escaped.any():  # the few texts XlsxWriter escapes: their elements made by Python, once per distinct text
        distinct = texts.filter(escaped).unique().to_list()
        data[name + "e"] = texts.replace_strict(distinct, [_inline_text(t) for t in distinct], default=None,
                                                 return_dtype=pl.String)
    data[name] = texts
    text = pl.col(name)
    edge = texts.str.contains(_EDGE_SPACE_RUST)
    if edge.any():  # text kept as it is, with xml:space="preserve"
        data[name + "k"] = pl.Series(["", ' xml:space="preserve"'], dtype=pl.String).gather(edge.cast(pl.UInt32))
        plain = pl.concat_str([pl.lit("<is><t"), pl.col(name + "k"), pl.lit(">"), text, pl.lit("</t></is>")])
    else:  # ids and names: none starts or ends with a space
        plain = pl.concat_str([pl.lit("<is><t>"), text, pl.lit("</t></is>")])
    inner = pl.when(pl.col(name + "e").is_not_null()).then(pl.col(name + "e")).otherwise(plain) \
        if name + "e" in data else plain
    return pl.when(text == "").then(None).otherwise(inner) if "" in column else inner


def _longest_text(column: list, kinds: set) -> int:
    """Characters of the column's longest text (a column of text alone: measured without a test per cell)."""
    if kinds == {str}:
        return max(map(len, column), default=0)
    return max((len(v) for v in column if type(v) is str), default=0)


def _cell_xml(ref: str, value, look: str, texts: dict) -> str:
    """One cell's XML as XlsxWriter writes it (``look``: its style attribute, or "" for none); "" for a blank
    without a style, which XlsxWriter does not write.  ``texts`` caches the escaped text of repeated values."""
    kind = type(value)
    if value is None or value == "":
        return f'<c r="{ref}"{look}/>' if look else ""
    if kind is bool:
        return f'<c r="{ref}"{look} t="b"><v>{int(value)}</v></c>'
    if kind in (int, float) and math.isfinite(value):
        return f'<c r="{ref}"{look}><v>{value:.16G}</v></c>'
    text = value if kind is str else str(value)  # an infinite number is shown as the text it is
    inner = texts.get(text)
    if inner is None:
        inner = texts[text] = _inline_text(text)
    return f'<c r="{ref}"{look} t="inlineStr">{inner}</c>'


def _inline_texts(texts) -> dict[str, str]:
    """The ``<is>`` element of each of the distinct *texts* (:func:`_inline_text`): when none of them needs an
    escape (one search over all of them), each is only checked for a space at either end."""
    texts = list(texts)
    if _NEEDS_ESCAPE.search("\n".join(texts)) is not None:  # the pattern matches within one text, never across "\n"
        return {text: _inline_text(text) for text in texts}
    return {text: _t_element(text) for text in texts}


def _inline_text(text: str) -> str:
    """The ``<is>`` element of an inline text cell, escaped as XlsxWriter escapes it."""
    if _NEEDS_ESCAPE.search(text):
        text = _ESCAPED_LOOKALIKE.sub(r"_x005F\1", text)
        text = _CONTROL.sub(lambda m: f"_x{ord(m.group(1)):04X}_", text)
        text = text.replace("\ufffe", "_xFFFE_").replace("\uffff", "_xFFFF_")
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _t_element(text)


def _t_element(text: str) -> str:
    """``<is><t>`` around text already escaped, kept as it is (``xml:space="preserve"``) when it starts or ends
    with white space, as XlsxWriter writes it (its test is the regex ``^\\s|\\s$``: the same characters)."""
    keep = ' xml:space="preserve"' if text[:1].isspace() or text[-1:].isspace() else ""
    return f"<is><t{keep}>{text}</t></is>"
