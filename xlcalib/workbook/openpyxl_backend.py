"""openpyxl backend: workbook files (CLI, tests), safe reading of hand-edited workbooks, atomic writing.

Safety rules (a workbook from outside is untrusted input: it may be hostile, huge, encrypted or damaged):

* ``defusedxml`` is a runtime dependency; openpyxl detects it and parses all
  workbook XML through it, so entity-expansion ("billion laughs") and
  external-entity attacks fail (``openpyxl.DEFUSEDXML`` is True).
* Inputs are bounded before openpyxl loads them (file size, unzipped size,
  cell count: :func:`xlcalib.workbook.reader.bound_workbook`, limits in the
  README table "Input limits").
* Encrypted (password-protected) workbooks are OLE containers, not zip files;
  they are recognised by their signature and refused with a clear message (as
  are old ``.xls`` files and files that are not workbooks at all, or are
  damaged zip files).
* Text beginning with ``=``, ``+``, ``-`` or ``@`` is stored as *text*
  (openpyxl would otherwise store ``=...`` as a formula): data never becomes a
  formula.
* Results are written to a temporary file in the target folder and moved into
  place with ``os.replace`` (atomic on one file system): a crash mid-write
  leaves any previous file intact and no temporary file behind; a process
  killed outright (kill -9) leaves ``.xlcalib-<pid>-<random>.tmp``, which the
  next write into that folder removes.  File-system errors (read-only folder,
  disk full, a folder or a file in the way, a name too long) become one-line
  :class:`InputError` messages (:func:`xlcalib.errors.os_error_message`).
* Reading: an Excel Table's range is used when the sheet has one (rows typed
  just below the table count, as Excel would extend it); hidden rows are data
  like any other (hiding is a view setting); fully blank rows are skipped by
  the table readers; merged ranges are reported with the block so a blank
  non-anchor cell can be explained.
"""
from __future__ import annotations

import datetime as _dt
import os
import tempfile
from copy import copy
from pathlib import Path
from typing import Any

import pandas as pd

from ..cells import cell_position, cell_value
from ..errors import InputError, os_error_message
from ..progress import step
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
    flagged,
    frame_rows,
    is_formula_text,
    ref_line_cells,
    row_height,
)
from .reader import MAX_INPUT_BYTES, bound_workbook  # noqa: F401 (re-exported) - one set of limits for every reader


def open_workbook(path: str | os.PathLike, *, data_only: bool = True, keep_vba: bool = False):
    """Load a workbook file safely (size limit, encrypted/old/not-a-workbook detection) -> openpyxl Workbook.

    ``data_only=True`` reads the values Excel cached for formula cells.
    """
    import openpyxl  # adapters only

    path = Path(path)
    if not getattr(openpyxl, "DEFUSEDXML", False):  # openpyxl parses with defusedxml only when it is installed
        raise InputError("reading workbooks safely needs the defusedxml package (it refuses hostile XML): "
                         'pip install "xlcalib[excel]"')
    try:
        bound_workbook(path)  # size, zip expansion and cell count first: openpyxl holds the whole workbook in memory
        return openpyxl.load_workbook(path, data_only=data_only, keep_links=False, keep_vba=keep_vba)
    except InputError:
        raise
    except OSError as exc:  # unreadable file, a folder ...: one line, like every other file-system error
        raise InputError(os_error_message(exc, path, "read")) from None
    except Exception as exc:  # damaged zip, missing parts, hostile XML refused by defusedxml ...
        if type(exc).__module__.startswith("defusedxml"):
            raise InputError(f"{path.name} contains XML entity declarations (a known way to attack programs that "
                             "read XML); xlcalib refuses such files. Open it in Excel and save it again") from None
        detail = " ".join(str(exc).split())  # openpyxl's texts can run over several lines: one line, bounded
        detail = detail if len(detail) <= 160 else detail[:157] + "..."
        raise InputError(f"{path.name} could not be read as a workbook ({type(exc).__name__}: {detail})") from None


#: Temporary files of the atomic writers: ``.xlcalib-<pid>-<random>.tmp`` in the target folder (short, so a
#: legal 255-character target name never makes the temporary name too long; recognisable, so a run killed
#: mid-write leaves a file the user can identify, and the next write into that folder removes it).
TEMP_PREFIX = ".xlcalib-"
TEMP_SUFFIX = ".tmp"
#: A temporary file whose writer is gone is removed once it is this old (seconds); any is removed after a day.
STALE_AFTER = 60
STALE_ALWAYS_AFTER = 24 * 3600


def _remove_stale_temporaries(folder: Path) -> None:
    """Delete temporary files left by killed xlcalib writers in *folder* (never another program's files)."""
    import time

    now = time.time()
    try:
        entries = list(folder.glob(f"{TEMP_PREFIX}*{TEMP_SUFFIX}"))
    except OSError:
        return
    for entry in entries:
        try:
            pid = int(entry.name[len(TEMP_PREFIX):].split("-", 1)[0])
            age = now - entry.stat().st_mtime
        except (ValueError, OSError):
            continue
        if age > STALE_ALWAYS_AFTER or (age > STALE_AFTER and not _alive(pid)):
            try:
                entry.unlink()
            except OSError:
                pass


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError, OverflowError):
        return True  # exists (another user's) or cannot tell: keep the file
    return True


def _write_via_temporary(path: str | os.PathLike, write) -> Path:
    """Write through a temporary file in the target folder and ``os.replace``; file-system errors -> InputError.

    *write(tmp_path)* produces the file.  Refused before anything is written:
    a target that is an existing folder, a parent path that is a file.
    """
    path = Path(path)
    if path.is_dir():
        raise InputError(f"cannot write {path}: it is a folder, not a file (give a file name)")
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temporaries(path.parent)
        handle, tmp = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-", suffix=TEMP_SUFFIX, dir=path.parent)
        os.close(handle)
        write(tmp)
        _honour_umask(tmp)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        message = os_error_message(exc, path)
        _release_failed_writer(exc)
        raise InputError(message) from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    return path


def _release_failed_writer(exc: BaseException) -> None:
    """Free what a writer that failed mid-file still holds, quietly.

    Why: a zip archive left open by a failed write (openpyxl's, XlsxWriter's) is closed when it is garbage
    collected, and closing writes its directory to the same full disk: Python then prints "Exception ignored
    ... Traceback" after the one-line message.  The archive lives in the frames of the failed write, kept by
    the exception's traceback: clearing them here, with that report silenced, closes it now.
    """
    import gc
    import sys
    import traceback

    hook, sys.unraisablehook = sys.unraisablehook, lambda report: None
    try:
        seen = set()
        while exc is not None and id(exc) not in seen:
            seen.add(id(exc))
            traceback.clear_frames(exc.__traceback__)
            exc = exc.__cause__ or exc.__context__
        gc.collect()
    finally:
        sys.unraisablehook = hook


def _honour_umask(path) -> None:
    """Give a temporary file the mode an ordinary new file gets (0666 minus the umask), not mkstemp's 0600.

    Why: results land on shared drives; a 0600 file cannot be opened by the colleagues the umask allows.
    The owner always keeps read and write: a umask that removes them (Emscripten/Pyodide reports 0o777)
    must not produce a file nobody can open.
    """
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, (0o666 & ~mask) | 0o600)


def save_atomically(book, path: str | os.PathLike, *, fixed_time: _dt.datetime | None = None) -> Path:
    """Save a book (openpyxl ``Workbook`` or :class:`~xlcalib.workbook.xlsxwriter_backend.XlsxWriterBook`) to
    *path* via a temporary file in the same folder and ``os.replace``.

    ``fixed_time`` pins the document timestamps (deterministic builds).
    """
    if fixed_time is not None and hasattr(book, "properties"):
        book.properties.created = fixed_time
        book.properties.modified = fixed_time
    elif fixed_time is not None:  # an XlsxWriterBook (rendered when saved)
        book.created = fixed_time
    with step(f"saving {Path(path).name}"):
        return _write_via_temporary(path, book.save)


def write_bytes_atomically(data: bytes, path: str | os.PathLike) -> Path:
    """Write *data* to *path* via a temporary file in the same folder and ``os.replace``."""
    def write(tmp):
        with open(tmp, "wb") as f:
            f.write(data)

    return _write_via_temporary(path, write)


def _style_data_cell(cell, column, wrapped: bool, any_wrapped: bool, fill, bottom, plain, wrap, top,
                     number_format: str | None = None) -> None:
    """Font, number format, alignment, fill and funding-line border of one data cell (cached per kind)."""
    from openpyxl.styles import Alignment, Border

    cell.font = plain
    if column is not None:
        if number_format and isinstance(cell.value, (int, float)) and not isinstance(cell.value, bool):
            cell.number_format = cell_format(number_format, cell.value)
        if wrapped or any_wrapped:
            cell.alignment = wrap if wrapped else top
        if isinstance(cell.value, str) and cell.column > 1:  # keep text clear of the number to its left
            cell.alignment = Alignment(horizontal="left", indent=1, wrap_text=wrapped,
                                       vertical="top" if any_wrapped else None)
    if fill is not None:
        cell.fill = fill
    if bottom is not None:
        cell.border = Border(bottom=bottom)


def write_cell(ws, row: int, column: int, value: Any):
    """Write one value; formula-looking text stays text."""
    value = cell_value(value)
    cell = ws.cell(row=row, column=column, value=value)
    if is_formula_text(value):
        cell.data_type = "s"  # openpyxl marks '=...' as a formula; force plain text
    return cell


def _continue_rows(ws, min_col: int, max_col: int, last: int, until: int) -> None:
    """Rows last+1..until of a growing table take the last row's formulas (moved, as Excel fills a calculated
    column), its cell styles (the input look) and its data validation."""
    from openpyxl.formula.translate import Translator
    from openpyxl.utils import get_column_letter

    for c in range(min_col, max_col + 1):
        source = ws.cell(row=last, column=c)
        formula = source.value if source.data_type == "f" and isinstance(source.value, str) else None
        for r in range(last + 1, until + 1):
            cell = ws.cell(row=r, column=c)
            if source.has_style:
                cell._style = copy(source._style)
            if formula is not None and cell.value is None:
                cell.value = Translator(formula, origin=source.coordinate).translate_formula(f"{get_column_letter(c)}{r}")
    for dv in ws.data_validations.dataValidation:
        for rng in list(dv.sqref.ranges):
            if rng.max_row == last and min_col <= rng.min_col and rng.max_col <= max_col:
                dv.add(f"{get_column_letter(rng.min_col)}{last + 1}:{get_column_letter(rng.max_col)}{until}")


def _sync_table_columns(ws, table) -> None:
    """A table's column names follow its header cells (Excel refuses a file where they differ); columns keep
    their calculated formulas, and a table grown wider gets a column per new header cell."""
    from openpyxl.utils.cell import range_boundaries
    from openpyxl.worksheet.table import TableColumn

    min_col, min_row, max_col, _ = range_boundaries(table.ref)
    names = [ws.cell(row=min_row, column=c).value for c in range(min_col, max_col + 1)]
    names = [str(n) if n is not None else f"Column{k}" for k, n in enumerate(names, start=1)]
    if not table.tableColumns:
        return  # openpyxl names them from the header cells when it saves
    columns = list(table.tableColumns)[: len(names)]
    for k, name in enumerate(names):
        if k < len(columns):
            columns[k].name = name
        else:
            columns.append(TableColumn(id=max(c.id for c in columns) + 1 if columns else 1, name=name))
    table.tableColumns = columns


class _SheetWriter:
    """Writes a result sheet's cells with their look: the preamble italic (the title bold and a point larger), the
    header bold with the columns' meanings as comments, data cells by kind, highlighted and marked rows filled,
    the funding line under its row, rows tall enough for their wrapped text."""

    def __init__(self, ws, spec: SheetSpec, header_row: int, widths: list[float]):
        from openpyxl.styles import Alignment, Font, PatternFill, Side

        names = list(spec.frame.columns)
        self.ws, self.header_row, self.widths = ws, header_row, widths
        self.columns = [spec.column(c) for c in names]
        self.wrapped = [spec.wrapped(c) for c in names]
        self.lines = spec.row_lines(self.wrapped, widths)  # the wrapped text's lines per data row
        self.flags = flagged(spec.frame[spec.highlight]) if spec.highlight in names else None
        self.marks = flagged(spec.frame[spec.mark]) if spec.mark in names else None
        self.last_data_row = header_row + len(spec.frame)
        self.header_lines = spec.header_lines()
        self.line_row = header_row + 1 + spec.line_after if spec.line_after is not None else None
        self.italic = Font(name=FONT_NAME, size=FONT_SIZE, italic=True)
        self.bold = Font(name=FONT_NAME, size=FONT_SIZE, bold=True)
        self.plain = Font(name=FONT_NAME, size=FONT_SIZE)
        self.red, self.amber = PatternFill("solid", fgColor=HIGHLIGHT_FILL), PatternFill("solid", fgColor=MARK_FILL)
        self.thin, self.thick = Side(style="thin"), Side(style="thick", color="C00000")
        self.wrap, self.top = Alignment(wrap_text=True, vertical="top"), Alignment(vertical="top")
        self.styles: dict = {}  # copying a style array is far cheaper than setting each attribute

    def write(self, rows: list[list]) -> None:
        for i, row in enumerate(rows, start=1):
            if i < self.header_row:
                self.preamble_row(i, row)
            elif i == self.header_row:
                self.header(i, row)
            elif i <= self.last_data_row:
                self.data_row(i, row)
            else:  # the footer lines under the table
                for j, value in enumerate(row, start=1):
                    write_cell(self.ws, i, j, value).font = self.italic

    def preamble_row(self, i: int, row: list) -> None:
        from openpyxl.styles import Font

        for j, value in enumerate(row, start=1):
            cell = write_cell(self.ws, i, j, value)
            cell.font = self.italic
            if j == 1 and i == 1:
                cell.font = Font(name=FONT_NAME, size=FONT_SIZE + 1, bold=True, italic=True)

    def header(self, i: int, row: list) -> None:
        from openpyxl.comments import Comment
        from openpyxl.styles import Alignment, Border

        if self.header_lines > 1:  # long names over narrow columns wrap: the row holds their lines
            self.ws.row_dimensions[i].height = row_height(self.header_lines)
        for j, value in enumerate(row, start=1):
            cell = write_cell(self.ws, i, j, value)
            cell.font = self.bold
            cell.border = Border(bottom=self.thin)
            cell.alignment = Alignment(wrap_text=True, vertical="bottom")
            if j <= len(self.columns) and self.columns[j - 1].meaning:
                comment = Comment(self.columns[j - 1].meaning, "xlcalib")
                comment.width, comment.height = 300, 90
                cell.comment = comment

    def data_row(self, i: int, row: list) -> None:
        columns, wrapped = self.columns, self.wrapped
        fill, fill_kind = None, ""
        k = i - self.header_row - 1
        if self.flags is not None and self.flags[k]:
            fill, fill_kind = self.red, "red"
        elif self.marks is not None and self.marks[k]:
            fill, fill_kind = self.amber, "amber"
        under = i == self.line_row
        for j, value in enumerate(row, start=1):
            cell = write_cell(self.ws, i, j, value)
            described = j <= len(columns)
            fmt = columns[j - 1].format_of(k) if described else None
            kind = (j, fill_kind, under, type(cell.value).__name__, cell_format(fmt, cell.value) if described else None)
            cached = self.styles.get(kind)
            if cached is not None:
                cell._style = copy(cached)
            else:
                _style_data_cell(cell, columns[j - 1] if described else None, wrapped[j - 1] if described else False,
                                 any(wrapped), fill, self.thick if under else None, self.plain, self.wrap, self.top,
                                 fmt)
                self.styles[kind] = copy(cell._style)
        if self.lines[k] > 1:
            self.ws.row_dimensions[i].height = row_height(self.lines[k])


def _page_setup(ws, spec: SheetSpec, header_row: int) -> None:
    """Frozen header; print landscape (or portrait), A4, the table alone (its print area) one page wide (a chart
    page: one page), the margins, the header row repeated on every page, the page number in the footer, the
    spec's page breaks."""
    from openpyxl.utils import get_column_letter
    from openpyxl.worksheet.page import PageMargins
    from openpyxl.worksheet.pagebreak import Break
    from openpyxl.worksheet.properties import PageSetupProperties

    last_row, last_column = spec.printed_area()
    if not spec.one_page:
        ws.freeze_panes = ws.cell(row=header_row + 1, column=1 + spec.freeze_columns)
        ws.print_title_rows = f"{header_row}:{header_row}"
    ws.page_setup.orientation = "landscape" if spec.landscape else "portrait"
    ws.page_setup.paperSize = ws.PAPERSIZE_A4
    ws.page_setup.fitToWidth, ws.page_setup.fitToHeight = 1, 1 if spec.fits_one_page_tall() else 0
    ws.sheet_properties.pageSetUpPr = PageSetupProperties(fitToPage=True)
    left, right, top, bottom, header, footer = MARGINS
    ws.page_margins = PageMargins(left=left, right=right, top=top, bottom=bottom, header=header, footer=footer)
    ws.print_area = f"A1:{get_column_letter(last_column)}{last_row}"
    ws.print_options.gridLines = False
    ws.oddFooter.center.text = f"{spec.name} - page &P of &N"
    for offset in spec.page_breaks:
        ws.row_breaks.append(Break(id=header_row + offset))  # break after the previous row


def new_workbook():
    """An empty openpyxl Workbook (no default sheet)."""
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    return book


class OpenpyxlBook(WorkbookBackend):
    """The interface over an openpyxl ``Workbook``.

    ``values_book``: optionally the same file loaded with ``data_only=True``
    to read from, while results are written into ``book`` loaded with its
    formulas (so a report copy keeps the template's progress formulas, and
    input cells computed by formulas are read as their values).
    """

    def __init__(self, book, values_book=None):
        self.book = book
        self.values_book = values_book

    # ------------------------------------------------------------------ reading
    def sheet_names(self) -> list[str]:
        return list(self.book.sheetnames)

    def read_block(self, sheet: str) -> Block:
        from openpyxl.utils.cell import range_boundaries

        name = self.find_sheet(sheet)
        if isinstance(self.values_book, WorkbookBackend):  # the fast reader over the same file (xlcalib report)
            if self.values_book.find_sheet(name, required=False):
                return self.values_book.read_block(name)
            return OpenpyxlBook(self.book).read_block(name)  # a sheet written in this run
        ws = (self.values_book or self.book)[name]
        if not hasattr(ws, "iter_rows"):  # a chart sheet of that name holds no cells
            raise InputError(f"sheet {name} is a chart sheet, not a table; the data must be on a worksheet named {name}")
        tables = getattr(self.book[name], "tables", None)
        if tables:
            min_col, min_row, max_col, max_row = range_boundaries(next(iter(tables.values())).ref)
            max_row = max(max_row, ws.max_row)  # rows typed just below a table belong to it
        else:
            min_col, min_row, max_col, max_row = ws.min_column, ws.min_row, ws.max_column, ws.max_row
        rows = [list(r) for r in ws.iter_rows(min_row=min_row, max_row=max_row, min_col=min_col,
                                               max_col=max_col, values_only=True)]
        merged = tuple(str(m) for m in getattr(ws, "merged_cells", ()).ranges
                       if not (m.max_row < min_row or m.min_row > max_row or m.max_col < min_col or m.min_col > max_col))
        hidden = tuple(sorted(r for r, dim in ws.row_dimensions.items() if dim.hidden and min_row <= r <= max_row))
        return Block(rows, min_row, min_col, merged, name, hidden)

    # ------------------------------------------------------------------ writing
    def delete_sheet(self, name: str) -> None:
        actual = self.find_sheet(name, required=False)
        if actual is not None:
            del self.book[actual]
            if isinstance(self.values_book, WorkbookBackend):
                pass
            elif self.values_book is not None and actual in self.values_book.sheetnames:
                del self.values_book[actual]

    def write_sheet(self, spec: SheetSpec) -> int:
        """Render a :class:`SheetSpec`: values, fonts, formats, widths, header comments, marks, print setup, charts."""
        from openpyxl.utils import get_column_letter

        # the rows first: a refused frame leaves the book as it was
        spec = spec.printable()
        rows, header_row = frame_rows(spec.frame, spec.preamble, spec.name, spec.footer)
        self.delete_sheet(spec.name)
        ws = self.book.create_sheet(spec.name)
        if self.values_book is not None and not isinstance(self.values_book, WorkbookBackend):
            self.values_book.create_sheet(spec.name)  # keep both views in step (a later step may read a result sheet)
        widths = spec.widths()
        _SheetWriter(ws, spec, header_row, widths).write(rows)
        for j, width in enumerate(widths, start=1):
            ws.column_dimensions[get_column_letter(j)].width = width
        _page_setup(ws, spec, header_row)
        for chart in spec.charts:
            self.add_chart(spec.name, chart)
        return header_row

    def activate(self, sheet: str) -> None:
        name = self.find_sheet(sheet)
        self.book.active = self.book.sheetnames.index(name)
        for ws in self.book.worksheets:  # one selected tab (several would group them in Excel)
            ws.sheet_view.tabSelected = ws.title == name

    def write_values(self, sheet: str, row: int, column: int, rows: list[list[Any]]) -> None:
        name = self.find_sheet(sheet)
        views = [self.book[name]]
        if self.values_book is not None and not isinstance(self.values_book, WorkbookBackend):
            views.append(self.values_book[name])  # the values view a later step reads stays in step
        elif isinstance(self.values_book, WorkbookBackend):
            raise NotImplementedError("a workbook read through the fast reader cannot be written into")
        for ws in views:
            for i, values in enumerate(rows):
                for j, value in enumerate(values):
                    if value is None:  # ws.cell(value=None) would leave the old value
                        ws.cell(row=row + i, column=column + j).value = None
                    else:
                        write_cell(ws, row + i, column + j, value)
            for table in ws.tables.values():
                _sync_table_columns(ws, table)

    def fit_table(self, sheet: str, last_row: int, last_column: int) -> None:
        from openpyxl.utils import get_column_letter
        from openpyxl.utils.cell import range_boundaries

        name = self.find_sheet(sheet)
        ws = self.book[name]
        if not ws.tables:
            return
        table = next(iter(ws.tables.values()))
        min_col, min_row, max_col, max_row = range_boundaries(table.ref)
        rows, columns = max(max_row, last_row), max(max_col, last_column)
        if (rows, columns) == (max_row, max_col):
            return
        if rows > max_row:
            _continue_rows(ws, min_col, max_col, max_row, rows)
        table.ref = f"{get_column_letter(min_col)}{min_row}:{get_column_letter(columns)}{rows}"
        if table.autoFilter is not None:
            table.autoFilter.ref = table.ref
        _sync_table_columns(ws, table)

    def style_cells(self, sheet: str, ref: str, *, bold=None, italic=None, fill=None, number_format=None) -> None:
        from copy import copy

        from openpyxl.styles import PatternFill

        ws = self.book[self.find_sheet(sheet)]
        cells = ws[ref]
        if not isinstance(cells, tuple):
            cells = ((cells,),)
        elif cells and not isinstance(cells[0], tuple):
            cells = (cells,)
        for row in cells:
            for cell in row:
                if bold is not None or italic is not None:
                    font = copy(cell.font)
                    font.bold = font.b = bold if bold is not None else font.b
                    font.italic = font.i = italic if italic is not None else font.i
                    cell.font = font
                if fill is not None:
                    cell.fill = PatternFill("solid", fgColor=fill)
                if number_format is not None:
                    cell.number_format = number_format

    def add_chart(self, sheet: str, spec: ChartSpec) -> None:
        name = self.find_sheet(sheet)
        ws = self.book[name]
        if spec.kind in ("scatter", "dots"):
            chart = _point_chart(ws, spec)
        else:
            chart = _bar_chart(ws, spec)
        for k, series in enumerate(chart.series[:len(spec.y_columns)]):
            if spec.errors_of(k) is not None:
                series.errBars = _error_bars(name, spec, spec.errors_of(k), spec.colour_of(k)
                                             if spec.kind in ("scatter", "dots") else "7F7F7F")
        _chart_axes(chart, spec)
        ws.add_chart(chart, spec.anchor)


def _error_bars(sheet: str, spec: ChartSpec, column: int, colour: str):
    """Symmetric custom error bars: plus and minus the values of *column* in the chart's rows."""
    from openpyxl.chart.data_source import NumDataSource, NumRef
    from openpyxl.chart.error_bar import ErrorBars
    from openpyxl.chart.shapes import GraphicalProperties
    from openpyxl.drawing.line import LineProperties
    from openpyxl.utils import get_column_letter, quote_sheetname

    first, last = spec.header_row + 1, spec.header_row + spec.n_rows
    letter = get_column_letter(column)
    ref = NumRef(f"{quote_sheetname(sheet)}!${letter}${first}:${letter}${last}")
    return ErrorBars(errDir="y" if spec.kind in ("scatter", "dots") else None, errBarType="both", errValType="cust",
                     noEndCap=False, plus=NumDataSource(numRef=ref), minus=NumDataSource(numRef=ref),
                     spPr=GraphicalProperties(ln=LineProperties(solidFill=colour, w=9525)))


def _line_series(values, xs, title: str, colour: str, dashed: bool, width: int, dots: bool):
    """A series drawn as a line without markers (a reference line, or a funding line across a dot plot)."""
    from openpyxl.chart import Series
    from openpyxl.chart.shapes import GraphicalProperties
    from openpyxl.drawing.line import LineProperties

    if dots:
        series = Series(values, title_from_data=False, title=title)
    else:
        series = Series(values, xs, title_from_data=False, title=title)
    series.marker.symbol = "none"
    series.graphicalProperties = GraphicalProperties(
        ln=LineProperties(solidFill=colour, w=width, prstDash="dash" if dashed else "solid"))
    series.smooth = False
    return series


def _point_chart(ws, spec: ChartSpec):
    """A scatter chart (x values) or a dot plot (a line chart without lines, categories from the x column) of the
    spec's columns, the line series across it and the reference lines drawn from the end points written under
    the chart (see :func:`~xlcalib.workbook.base.ref_line_cells`)."""
    from openpyxl.chart import LineChart, Reference, ScatterChart, Series
    from openpyxl.chart.shapes import GraphicalProperties

    first, last = spec.header_row + 1, spec.header_row + spec.n_rows
    dots = spec.kind == "dots"
    if dots:
        chart = LineChart()
    else:
        chart = ScatterChart()
        chart.scatterStyle = "lineMarker"
    chart.style = 13
    xs = Reference(ws, min_col=spec.x_column, min_row=first, max_row=last)
    for k, col in enumerate(spec.y_columns):
        colour = spec.colour_of(k)
        values = Reference(ws, min_col=col, min_row=first, max_row=last)
        title = str(ws.cell(row=spec.header_row, column=col).value)
        series = Series(values, title_from_data=False, title=title) if dots else \
            Series(values, xs, title_from_data=False, title=title)
        series.marker.symbol = MARKERS[k % len(MARKERS)] if spec.markers or not spec.lines else "none"
        series.marker.size = 6
        series.marker.graphicalProperties = GraphicalProperties(solidFill=colour)
        series.marker.graphicalProperties.line.solidFill = colour
        if spec.lines:
            series.graphicalProperties.line.solidFill = colour
            series.graphicalProperties.line.width = 22000
        else:
            series.graphicalProperties.line.noFill = True  # markers only
        series.smooth = False
        chart.series.append(series)
    for col in spec.line_columns:
        chart.series.append(_line_series(Reference(ws, min_col=col, min_row=first, max_row=last), xs,
                                         str(ws.cell(row=spec.header_row, column=col).value), "C00000", True,
                                         28575, dots))
    if dots:
        chart.set_categories(xs)
    for row, column, value in ref_line_cells(spec):
        write_cell(ws, row, column, value)
    top, left = cell_position(spec.anchor)
    for k, line in enumerate(spec.ref_lines):
        r = top + 2 * k
        chart.series.append(_line_series(Reference(ws, min_col=left + 2, min_row=r, max_row=r + 1),
                                         Reference(ws, min_col=left + 1, min_row=r, max_row=r + 1), line.name,
                                         line.colour, line.dashed, 25400, dots))
    return chart


def _bar_chart(ws, spec: ChartSpec):
    """A bar (horizontal) or column (vertical) chart of the spec's columns, categories from its x column."""
    from openpyxl.chart import BarChart, Reference
    from openpyxl.chart.shapes import GraphicalProperties

    first, last = spec.header_row + 1, spec.header_row + spec.n_rows
    chart = BarChart()
    chart.type = "bar" if spec.kind == "bar" else "col"
    for col in spec.y_columns:
        chart.add_data(Reference(ws, min_col=col, min_row=spec.header_row, max_row=last), titles_from_data=True)
    for k, series in enumerate(chart.series):
        series.graphicalProperties = GraphicalProperties(solidFill=spec.colour_of(k))
    chart.set_categories(Reference(ws, min_col=spec.x_column, min_row=first, max_row=last))
    if len(spec.y_columns) == 1:
        chart.legend = None
    return chart


def _chart_axes(chart, spec: ChartSpec) -> None:
    """Title, axis titles, fixed ranges, tick steps and formats, light gridlines (never mistaken for a reference
    line), category labels below the plot, the legend below, the size."""
    from openpyxl.chart.axis import ChartLines
    from openpyxl.chart.data_source import NumFmt
    from openpyxl.chart.shapes import GraphicalProperties
    from openpyxl.chart.text import RichText
    from openpyxl.drawing.line import LineProperties
    from openpyxl.drawing.text import CharacterProperties, Paragraph, ParagraphProperties, RichTextProperties

    chart.title = spec.title
    chart.x_axis.title = spec.x_title or None
    chart.y_axis.title = spec.y_title or None
    if spec.x_range:
        chart.x_axis.scaling.min, chart.x_axis.scaling.max = spec.x_range
    if spec.y_range:
        chart.y_axis.scaling.min, chart.y_axis.scaling.max = spec.y_range
    if spec.x_major:
        chart.x_axis.majorUnit = spec.x_major
    if spec.y_major:
        chart.y_axis.majorUnit = spec.y_major
    if spec.y_number_format:
        chart.y_axis.numFmt = NumFmt(formatCode=spec.y_number_format, sourceLinked=False)
    if spec.x_number_format:
        chart.x_axis.numFmt = NumFmt(formatCode=spec.x_number_format, sourceLinked=False)
    light = GraphicalProperties(ln=LineProperties(solidFill="D9D9D9"))
    chart.y_axis.majorGridlines = ChartLines(spPr=light)
    if spec.kind == "scatter":
        chart.x_axis.majorGridlines = ChartLines(spPr=GraphicalProperties(ln=LineProperties(solidFill="D9D9D9")))
        if spec.y_axis_left:  # the value axis crosses the x axis at its minimum, not at x = 0
            chart.y_axis.crosses = "min"
    else:
        chart.x_axis.majorGridlines = None
        chart.x_axis.tickLblPos = "low"  # category labels below the plot, not on the zero line
    if spec.kind == "dots":  # the objects' names read upwards, small enough for one per point
        chart.x_axis.txPr = RichText(bodyPr=RichTextProperties(rot=-5400000, vert="horz"), p=[Paragraph(
            pPr=ParagraphProperties(defRPr=CharacterProperties(sz=800)), endParaRPr=CharacterProperties(sz=800))])
    # openpyxl >= 3.1 hides axes unless told otherwise
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    if chart.legend is not None:
        chart.legend.position = "b"
    chart.width, chart.height = spec.width_cm, spec.height_cm


def write_frames(book, frames: dict[str, pd.DataFrame]) -> dict[str, int]:
    """Write each DataFrame to its own (replaced) sheet of an openpyxl book; returns header rows."""
    backend = OpenpyxlBook(book)
    return {name: backend.write_frame(name, frame) for name, frame in frames.items()}
