"""openpyxl backend: workbook files (CLI, tests), safe reading of hand-edited workbooks, atomic writing.

Safety rules (issue 6):

* ``defusedxml`` is a runtime dependency; openpyxl detects it and parses all
  workbook XML through it, so entity-expansion ("billion laughs") and
  external-entity attacks fail (``openpyxl.DEFUSEDXML`` is True).
* Inputs larger than :data:`MAX_INPUT_BYTES` (200 MB; a national exercise of a
  million evaluations is ~30 MB) are refused with a message before parsing.
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
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import InputError, os_error_message
from .base import HIGHLIGHT_FILL, Block, ChartSpec, WorkbookBackend, cell_value, frame_rows, is_formula_text

#: Workbooks above this size (bytes) are refused before parsing.
MAX_INPUT_BYTES = 200 * 1024 * 1024
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def open_workbook(path: str | os.PathLike, *, data_only: bool = True, keep_vba: bool = False):
    """Load a workbook file safely (size limit, encrypted/old/not-a-workbook detection) -> openpyxl Workbook.

    ``data_only=True`` reads the values Excel cached for formula cells.
    """
    import openpyxl  # adapters only

    path = Path(path)
    if not path.is_file():
        raise InputError(f"file not found: {path}")
    size = path.stat().st_size
    limit = MAX_INPUT_BYTES
    if size > limit:
        raise InputError(f"{path.name} is {size / 1e6:.1f} MB; the limit is {limit / 1e6:.0f} MB "
                         "(xlcalib.workbook.openpyxl_backend.MAX_INPUT_BYTES)")
    with open(path, "rb") as handle:
        head = handle.read(8)
    if head == _OLE_MAGIC:
        raise InputError(f"{path.name} is password-protected (encrypted) or an old .xls file; "
                         "save it as an unprotected .xlsx and try again")
    if not zipfile.is_zipfile(path):
        raise InputError(f"{path.name} is not an Excel workbook (.xlsx/.xlsm)")
    try:
        return openpyxl.load_workbook(path, data_only=data_only, keep_links=False, keep_vba=keep_vba)
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
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise InputError(os_error_message(exc, path)) from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    return path


def save_atomically(book, path: str | os.PathLike, *, fixed_time: _dt.datetime | None = None) -> Path:
    """Save an openpyxl book to *path* via a temporary file in the same folder and ``os.replace``.

    ``fixed_time`` pins the document timestamps (deterministic builds).
    """
    if fixed_time is not None:
        book.properties.created = fixed_time
        book.properties.modified = fixed_time
    return _write_via_temporary(path, book.save)


def write_bytes_atomically(data: bytes, path: str | os.PathLike) -> Path:
    """Write *data* to *path* via a temporary file in the same folder and ``os.replace``."""
    def write(tmp):
        with open(tmp, "wb") as f:
            f.write(data)

    return _write_via_temporary(path, write)


def write_cell(ws, row: int, column: int, value: Any):
    """Write one value; formula-looking text stays text."""
    value = cell_value(value)
    cell = ws.cell(row=row, column=column, value=value)
    if is_formula_text(value):
        cell.data_type = "s"  # openpyxl marks '=...' as a formula; force plain text
    return cell


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
            if self.values_book is not None and actual in self.values_book.sheetnames:
                del self.values_book[actual]

    def write_frame(self, sheet: str, frame: pd.DataFrame, preamble=(), highlight: str | None = None) -> int:
        from openpyxl.styles import Font, PatternFill
        from openpyxl.utils import get_column_letter

        rows, header_row = frame_rows(frame, preamble, sheet)  # first: a refused frame leaves the book as it was
        self.delete_sheet(sheet)
        ws = self.book.create_sheet(sheet)
        if self.values_book is not None:  # keep both views in step (a later step may read a result sheet)
            self.values_book.create_sheet(sheet)
        flag = list(frame.columns).index(highlight) if highlight in frame.columns else None
        italic, bold, fill = Font(italic=True), Font(bold=True), PatternFill("solid", fgColor=HIGHLIGHT_FILL)
        for i, row in enumerate(rows, start=1):
            marked = flag is not None and i > header_row and bool(row[flag])
            for j, value in enumerate(row, start=1):
                cell = write_cell(ws, i, j, value)
                if i < header_row:
                    cell.font = italic
                elif i == header_row:
                    cell.font = bold
                elif marked:
                    cell.fill = fill
        for j, column in enumerate(frame.columns, start=1):
            ws.column_dimensions[get_column_letter(j)].width = max(12, min(40, len(str(column)) + 4))
        ws.freeze_panes = ws.cell(row=header_row + 1, column=1)
        return header_row

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
        from openpyxl.chart import BarChart, Reference, ScatterChart, Series
        from openpyxl.chart.data_source import NumDataSource, NumRef
        from openpyxl.chart.error_bar import ErrorBars
        from openpyxl.chart.shapes import GraphicalProperties
        from openpyxl.utils import get_column_letter, quote_sheetname

        name = self.find_sheet(sheet)
        ws = self.book[name]
        first, last = spec.header_row + 1, spec.header_row + spec.n_rows
        if spec.kind == "scatter":
            chart = ScatterChart()
            chart.style = 13
            xs = Reference(ws, min_col=spec.x_column, min_row=first, max_row=last)
            for col in spec.y_columns:
                series = Series(Reference(ws, min_col=col, min_row=first, max_row=last), xs,
                                title_from_data=False, title=str(ws.cell(row=spec.header_row, column=col).value))
                series.marker.symbol = "circle"
                series.marker.size = 6
                series.marker.graphicalProperties = GraphicalProperties(solidFill="4472C4")
                series.marker.graphicalProperties.line.solidFill = "4472C4"
                series.graphicalProperties.line.noFill = True  # markers only
                chart.series.append(series)
        else:
            chart = BarChart()
            chart.type = "bar" if spec.kind == "bar" else "col"
            for col in spec.y_columns:
                chart.add_data(Reference(ws, min_col=col, min_row=spec.header_row, max_row=last), titles_from_data=True)
            chart.set_categories(Reference(ws, min_col=spec.x_column, min_row=first, max_row=last))
            chart.x_axis.tickLblPos = "low"  # category labels below the plot, not on the zero line
        if spec.error_column is not None and chart.series:
            letter = get_column_letter(spec.error_column)
            ref = NumRef(f"{quote_sheetname(name)}!${letter}${first}:${letter}${last}")
            chart.series[0].errBars = ErrorBars(errDir="y" if spec.kind == "scatter" else None, errBarType="both",
                                                errValType="cust", noEndCap=False,
                                                plus=NumDataSource(numRef=ref), minus=NumDataSource(numRef=ref))
        chart.title = spec.title
        chart.x_axis.title = spec.x_title or None
        chart.y_axis.title = spec.y_title or None
        # openpyxl >= 3.1 hides axes unless told otherwise
        chart.x_axis.delete = False
        chart.y_axis.delete = False
        chart.width, chart.height = spec.width_cm, spec.height_cm
        ws.add_chart(chart, spec.anchor)


def write_frames(book, frames: dict[str, pd.DataFrame]) -> dict[str, int]:
    """Write each DataFrame to its own (replaced) sheet of an openpyxl book; returns header rows."""
    backend = OpenpyxlBook(book)
    return {name: backend.write_frame(name, frame) for name, frame in frames.items()}
