"""Workbook adapters: one small interface (read a table, write a result sheet, add a native chart,
delete/replace sheets, style cells) with two backends — openpyxl (files; the CLI; tested fully) and
xlwings (a live Excel Book; thin).  See :mod:`xlcalib.workbook.base`; :func:`open_book` picks the backend
for a workbook object.

Reading files goes through one bounded path: :class:`~xlcalib.workbook.reader.FastBook` (xlsx/xlsm/ods:
size and cell-count bounds from a streaming scan, then python-calamine) and
:class:`~xlcalib.workbook.csv_backend.CsvBook` (CSV: byte-level bounds, then pandas); both are read-only
backends of the same interface.  New result files (``xlcalib calibrate``, ``next-reads``) are streamed by
:class:`~xlcalib.workbook.xlsxwriter_backend.XlsxWriterBook` (row by row, bounded memory); openpyxl writes
into workbooks it opened (macros, the formula-preserving report copy, templates; loaded only after the same
bounds, :func:`~xlcalib.workbook.reader.bound_workbook`).

:class:`~xlcalib.workbook.frame_backend.FrameBook` shows frames already in memory (an imported review export)
as a read-only workbook, so they go through the same runner.

Only this package, the CLI, the macros and the template builders import openpyxl; the numerical core
never does, and nothing here imports xlwings (the caller brings the Book).
"""
from .base import (
    FORMULA_STARTS,
    Block,
    ChartSpec,
    Column,
    RefLine,
    SheetSpec,
    WorkbookBackend,
    is_formula_text,
)
from .frame_backend import FrameBook
from .openpyxl_backend import (
    MAX_INPUT_BYTES,
    OpenpyxlBook,
    new_workbook,
    open_workbook,
    save_atomically,
    write_bytes_atomically,
    write_frames,
)
from .xlsxwriter_backend import XlsxWriterBook, new_result_book
from .xlwings_backend import XlwingsBook

__all__ = [
    "FORMULA_STARTS", "Block", "ChartSpec", "Column", "RefLine", "SheetSpec", "WorkbookBackend", "is_formula_text",
    "open_book", "FrameBook", "MAX_INPUT_BYTES", "OpenpyxlBook", "new_workbook", "open_workbook", "save_atomically",
    "write_bytes_atomically", "write_frames", "XlsxWriterBook", "new_result_book", "XlwingsBook",
]


def open_book(book) -> WorkbookBackend:
    """The backend for *book*: an openpyxl ``Workbook``, an xlwings ``Book``, or a backend already.

    It lives here, in the package's face above the backends, because it is the one place that knows them
    all: :mod:`~xlcalib.workbook.base` defines the interface and imports no backend.
    """
    if isinstance(book, WorkbookBackend):
        return book
    module = type(book).__module__
    if module.startswith("openpyxl"):
        return OpenpyxlBook(book)
    if module.startswith("xlwings"):
        return XlwingsBook(book)
    raise TypeError(f"unsupported workbook type {type(book).__module__}.{type(book).__name__}: "
                    "pass an openpyxl Workbook or an xlwings Book")
