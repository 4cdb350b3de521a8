"""The one input reader for workbook files: bounded before it reads, fast when it reads.

Reading is the slowest and the most exposed part of the main job: a hand-edited
workbook can hold a stray cell at XFD1048576 (its "used range" is then 17
billion cells), and a 1.6 MB file can expand to 21 million cells (a zip bomb).
So every workbook file is read in two steps:

1. **Bound** (:func:`scan_xlsx`): the zip directory is checked (each part's
   uncompressed size, the total), then the sheet's XML is streamed once in
   chunks through :mod:`zipfile` — which never yields more bytes than the
   directory declares and checks the CRC, so a lying directory is caught — to
   count the cells (stopping as soon as the count passes :data:`MAX_CELLS`),
   find the extent of the data, the hidden rows, cells holding Excel error
   values, and formula cells whose value was never calculated (a workbook
   written by a program and never opened in Excel).  Memory stays at a few
   chunks; time is linear in the part size, which is bounded.
2. **Read**: values come from *python-calamine* (Rust; ~10x faster than
   openpyxl) when the data's extent is a sensible grid; when one stray far
   cell makes the extent huge (more than :data:`MAX_GRID_CELLS` slots), the
   rows are read *by their data* through openpyxl's streaming sheet parser, so
   only rows and columns that hold something are kept (the block then carries
   explicit sheet row and column numbers).

What the Block carries beyond values: merged ranges (from calamine), hidden
rows and the positions of never-calculated formulas and error cells (from the
scan; only for the usual unprefixed SpreadsheetML that Excel, LibreOffice and
openpyxl write — a file written with namespace prefixes is still read and
bounded, but these three are then not reported).  ODS files are read by
calamine after a size bound and a bound on the cells their repeat attributes
expand to.

All limits are module constants, documented in the README table "Input limits";
a refusal names the limit and what the file would need.
"""
from __future__ import annotations

import posixpath
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..cells import EXCEL_MAX_ROWS, Uncalculated, cell_position, column_letter, column_number
from ..errors import InputError
from .base import Block, WorkbookBackend

#: Workbook or CSV files above this size (bytes) are refused before parsing.
MAX_INPUT_BYTES = 200 * 1024 * 1024
#: Largest uncompressed worksheet XML part (a 1,048,576-row x 4-column sheet is ~200 MB).
MAX_SHEET_XML_BYTES = 512 * 1024 * 1024
#: Largest uncompressed shared-strings part (held in memory by the reader).
MAX_SHARED_STRINGS_BYTES = 128 * 1024 * 1024
#: Largest uncompressed size of all parts of a workbook together.
MAX_UNCOMPRESSED_BYTES = 1024 * 1024 * 1024
#: Most cells read from one sheet: Excel's 1,048,576 rows x 8 columns.
MAX_CELLS = 8 * EXCEL_MAX_ROWS
#: Most slots of the dense grid between the first and last data cell; beyond it the sheet is read by its data.
MAX_GRID_CELLS = 8 * EXCEL_MAX_ROWS
#: Largest part of a workbook that is parsed whole (workbook.xml, relationships, tables).
MAX_SMALL_PART_BYTES = 16 * 1024 * 1024

_CHUNK = 8 * 1024 * 1024
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ROW_R = re.compile(rb"<row\s[^>]*?\br=\"(\d+)\"")
_WIDE_CELL = re.compile(rb" r=\"([A-Z]{2,3})\d")  # literal prefix: scanned at memchr speed
_FAR_ROW = re.compile(rb"<row r=\"(\d{7})\"")
#: _ABOVE[m] finds cell references in a single-letter column after column m (literal prefix: memchr speed)
_ABOVE = [re.compile(rb" r=\"([" + bytes([65 + m]) + rb"-Z])\d") for m in range(26)]
_HIDDEN_ROW = re.compile(rb"<row\s[^>]*?\br=\"(\d+)\"[^>]*?\bhidden=\"(?:1|true)\"")
_HIDDEN_ROW_REV = re.compile(rb"<row\s[^>]*?\bhidden=\"(?:1|true)\"[^>]*?\br=\"(\d+)\"")
_ERROR_CELL = re.compile(rb"<c\s[^>]*?\br=\"([A-Z]{1,3}\d+)\"[^>]*?\bt=\"e\"[^>]*>(?:<f\b[^>]*?(?:/>|>[^<]*</f>))?<v>([^<]*)</v>")
_UNCALCULATED = re.compile(rb"<c\s[^>]*?\br=\"([A-Z]{1,3}\d+)\"[^>/]*>(?:<f\b[^>]*?(?:/>|>([^<]*)</f>))(?:<v\s*/>|<v></v>)?</c>")
_MERGE = re.compile(rb"<mergeCell\s[^>]*?\bref=\"([A-Z]{1,3}\d+:[A-Z]{1,3}\d+)\"")


class ErrorValue(str):
    """An Excel error value read from a cell (``#N/A``, ``#DIV/0!`` ...); a ``str`` so the input rules see the code."""


def megabytes(n: float) -> str:
    """A file or part size in words for the limit messages of every reader: ``210 MB``, ``1.5 kB``."""
    return f"{n / 1e6:,.0f} MB" if n >= 1e6 else f"{n / 1e3:,.1f} kB"


def check_input_size(path: Path) -> None:
    """The checks every input file gets, workbook or CSV: it exists and is within :data:`MAX_INPUT_BYTES`."""
    if not path.is_file():
        raise InputError(f"file not found: {path}")
    size = path.stat().st_size
    if size > MAX_INPUT_BYTES:
        raise InputError(f"{path.name} is {megabytes(size)}; the limit is {megabytes(MAX_INPUT_BYTES)} for an input file "
                         "(see 'Input limits' in the README)")


def check_file(path: Path) -> None:
    """File-level checks shared by every workbook reader: exists, size limit, not encrypted/old, a zip."""
    check_input_size(path)
    with open(path, "rb") as handle:
        head = handle.read(8)
    if head == _OLE_MAGIC:
        raise InputError(f"{path.name} is password-protected (encrypted) or an old .xls file; "
                         "save it as an unprotected .xlsx and try again")
    if not zipfile.is_zipfile(path):
        raise InputError(f"{path.name} is not an Excel workbook (.xlsx/.xlsm) or OpenDocument spreadsheet (.ods)")


def entity_refusal(path: Path) -> InputError:
    """The one message for a workbook whose XML declares entities or an external DTD."""
    return InputError(f"{path.name} contains XML entity declarations (a known way to attack programs that read XML); "
                      "xlcalib refuses such files. Open it in Excel and save it again")


def damaged(path: Path, part: str, exc: BaseException) -> InputError:
    """The one message for a zip part that cannot be unzipped (a bad CRC, a broken deflate stream, cut short)."""
    reason = " ".join(str(exc).split())[:120] or type(exc).__name__
    return InputError(f"{path.name} is damaged: its part {part} cannot be unzipped ({reason}); open it in Excel, which "
                      "can often repair it, and save it again, or use a backup copy")


#: Parts whose text is XML (checked for entity declarations in their prolog)
_XML_PARTS = (".xml", ".rels", ".vml")
#: An entity declaration, or a document type with an internal subset or an external DTD (XXE)
_DECLARATION = re.compile(rb"<!ENTITY|<!DOCTYPE[^>\[]*?(?:\bSYSTEM\b|\bPUBLIC\b|\[)", re.IGNORECASE)
_ROOT_START = re.compile(rb"<[A-Za-z_]")


def check_parts(path: Path, zf: zipfile.ZipFile) -> None:
    """Every XML part unzips (a bad CRC or a broken stream is named) and declares no entities or external DTD.

    Excel never writes a DOCTYPE; entity declarations are the "billion laughs" and external-entity (XXE) attacks.
    Refusing them here, before any parser sees the file, gives every reader the same one-line answer (the fast
    reader would otherwise read such a file and openpyxl refuse it).  Worksheet parts are only checked at their
    start here: the scan streams them whole, checking their CRC.
    """
    for info in zf.infolist():
        name = info.filename.lower()
        if not name.endswith(_XML_PARTS):
            continue
        whole = not (name.startswith("xl/worksheets/") or name == "content.xml")
        try:
            with zf.open(info) as handle:
                head = handle.read(_PROLOG_BYTES)
                while whole and handle.read(_CHUNK):
                    pass
        except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, NotImplementedError) as exc:
            raise damaged(path, info.filename, exc) from None
        root = _ROOT_START.search(head)
        prolog = head[:root.start()] if root else head
        if b"<!" in prolog and _DECLARATION.search(prolog):
            raise entity_refusal(path)


#: Bytes read from the start of each XML part for its prolog (the XML declaration, a DOCTYPE, comments)
_PROLOG_BYTES = 64 * 1024


def check_zip(path: Path, zf: zipfile.ZipFile, workbook: bool = True) -> None:
    """Refuse a workbook whose parts would expand beyond the limits (declared sizes; streaming enforces them),
    are damaged or declare XML entities (:func:`check_parts`), or (``workbook``: the zip is read as a workbook,
    not as another archive such as a conference data download) that holds no workbook part at all."""
    names = set(zf.namelist())
    if workbook and "xl/workbook.xml" not in names and "content.xml" not in names:  # another zip renamed
        raise InputError(f"{path.name} is not a complete Excel workbook (.xlsx/.xlsm) or OpenDocument spreadsheet "
                         "(.ods): it has no workbook part. Open it in Excel and save it again, or use a backup copy")
    total = 0
    for info in zf.infolist():
        total += info.file_size
        name = info.filename.lower()
        if name.startswith("xl/worksheets/") or name == "content.xml":
            limit, what = MAX_SHEET_XML_BYTES, "a worksheet part"
        elif name.endswith("sharedstrings.xml"):
            limit, what = MAX_SHARED_STRINGS_BYTES, "the shared-strings part"
        else:
            continue
        if info.file_size > limit:
            raise InputError(f"{path.name}: {what} ({info.filename}) expands to {megabytes(info.file_size)}; the limit is "
                             f"{megabytes(limit)} (see 'Input limits' in the README)")
    if total > MAX_UNCOMPRESSED_BYTES:
        raise InputError(f"{path.name} expands to {megabytes(total)} when unzipped; the limit is {megabytes(MAX_UNCOMPRESSED_BYTES)} "
                         "(see 'Input limits' in the README)")
    check_parts(path, zf)


def _small_part(zf: zipfile.ZipFile, name: str) -> bytes:
    info = zf.getinfo(name)
    if info.file_size > MAX_SMALL_PART_BYTES:
        raise InputError(f"workbook part {name} is {megabytes(info.file_size)}; the limit is {megabytes(MAX_SMALL_PART_BYTES)}")
    return zf.read(name)


def _parse(data: bytes, part: str):
    import defusedxml
    import defusedxml.ElementTree as ET

    try:
        return ET.fromstring(data)
    except defusedxml.DefusedXmlException:  # check_parts refuses these first; a caller without it gets the same answer
        raise InputError("the workbook contains XML entity declarations (a known way to attack programs that read "
                         "XML); xlcalib refuses such files. Open it in Excel and save it again") from None
    except ET.ParseError as exc:
        raise InputError(f"the workbook's part {part} is not well-formed XML ({exc}); open the file in Excel and "
                         "save it again") from None


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def sheet_parts(zf: zipfile.ZipFile) -> dict[str, str]:
    """Sheet name -> zip path of its worksheet XML, from workbook.xml and its relationships."""
    try:
        book = _parse(_small_part(zf, "xl/workbook.xml"), "xl/workbook.xml")
        rels = _parse(_small_part(zf, "xl/_rels/workbook.xml.rels"), "xl/_rels/workbook.xml.rels")
    except KeyError:
        return {}
    targets = {}
    for rel in rels:
        target = rel.get("Target", "")
        target = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join("xl", target))
        targets[rel.get("Id")] = target
    out = {}
    for el in book.iter():
        if _local(el.tag) == "sheet":
            rid = next((v for k, v in el.attrib.items() if _local(k) == "id"), None)
            if rid in targets:
                out[el.get("name")] = targets[rid]
    return out


@dataclass
class SheetScan:
    """What one streaming pass over a worksheet's XML found (see the module docstring)."""

    cells: int = 0
    rows: int = 0
    min_row: int = 0
    max_row: int = 0
    max_column: int = 0
    hidden_rows: list[int] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    uncalculated: dict[str, str] = field(default_factory=dict)
    merged: list[str] = field(default_factory=list)

    @property
    def grid_cells(self) -> int:
        return max(0, self.max_row - self.min_row + 1) * self.max_column

    @property
    def read_by_data(self) -> bool:
        """True when the grid up to the last cell would be mostly empty (a stray far cell) or too large."""
        span = max(0, self.max_row - self.min_row + 1)
        return self.grid_cells > MAX_GRID_CELLS or span > 2 * self.rows + 10_000


def _refuse_cells(path: Path, sheet: str, count: int, partial: bool) -> InputError:
    mem = count * 40  # ~40 bytes a cell once read (calamine's cell plus the Python object)
    return InputError(
        f"{path.name}, sheet {sheet}: holds {'more than ' if partial else ''}{count:,} cells; the limit is {MAX_CELLS:,} "
        f"cells a sheet (Excel's 1,048,576 rows x 8 columns); reading them would need about {megabytes(mem)} or more of "
        "memory. Keep only the evaluations table on the sheet (see 'Input limits' in the README)")


def scan_xlsx(path: Path, zf: zipfile.ZipFile, part: str, sheet: str) -> SheetScan:
    """Stream one worksheet part once, counting cells (bounded by :data:`MAX_CELLS`) and noting extents and marks."""
    scan = SheetScan()
    carry = b""
    try:
        handle = zf.open(part)
    except KeyError:
        raise InputError(f"{path.name}: the part {part} of sheet {sheet} is missing (a damaged workbook)") from None
    with handle:
        while True:
            try:
                chunk = handle.read(_CHUNK)
            except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
                raise InputError(f"{path.name}: sheet {sheet} is damaged or its zip directory does not match its "
                                 f"contents ({exc})") from None
            data = carry + chunk
            if chunk:
                cut = data.rfind(b"</row>")
                if cut < 0:
                    if len(data) > 4 * _CHUNK:
                        raise InputError(f"{path.name}, sheet {sheet}: a single row of the sheet's XML is over "
                                         f"{megabytes(4 * _CHUNK)}; a real row is far smaller (see 'Input limits' in the README)")
                    carry = data
                    continue
                data, carry = data[:cut + 6], data[cut + 6:]
            scan.cells += data.count(b"<c")  # also counts a rare <cols>/<cfRule>: a bound, not a tally
            if scan.cells > MAX_CELLS:
                raise _refuse_cells(path, sheet, scan.cells, partial=True)
            scan.rows += data.count(b"<row")
            # rows come in ascending order (the file format requires it): the first and last row element of a
            # chunk give its extent; a 7-digit row number anywhere (the classic stray cell at row 1048576) is caught too
            first_row = _ROW_R.search(data)
            if first_row:
                scan.min_row = min(scan.min_row or 10**9, int(first_row.group(1)))
                at = data.rfind(b"<row ")
                last_row = _ROW_R.match(data, at) if at >= 0 else None
                numbers = [int(last_row.group(1))] if last_row else []
                numbers += [int(r) for r in _FAR_ROW.findall(data)]
                if numbers:
                    scan.max_row = max(scan.max_row, max(numbers))
            wide = _WIDE_CELL.findall(data)
            if wide:
                scan.max_column = max(scan.max_column, max(map(column_number, set(wide))))
            if scan.max_column < 26:  # single-letter columns beyond the largest seen so far
                above = _ABOVE[scan.max_column].findall(data)
                if above:
                    scan.max_column = max(scan.max_column, max(map(column_number, set(above))))
            if b"hidden=" in data:
                scan.hidden_rows += [int(r) for r in _HIDDEN_ROW.findall(data) + _HIDDEN_ROW_REV.findall(data)]
            if b't="e"' in data:
                for ref, code in _ERROR_CELL.findall(data):
                    scan.errors[ref.decode()] = code.decode("utf-8", "replace")
            if b"<f" in data:
                for ref, formula in _UNCALCULATED.findall(data):
                    scan.uncalculated[ref.decode()] = formula.decode("utf-8", "replace")
            if b"<mergeCell " in data:
                scan.merged += [m.decode() for m in _MERGE.findall(data)]
            if not chunk:
                break
    scan.max_row = max(scan.max_row, scan.rows)  # rows without an r attribute follow one another
    scan.min_row = scan.min_row or 1
    scan.hidden_rows = sorted(set(scan.hidden_rows))
    return scan


def scan_ods(path: Path, zf: zipfile.ZipFile) -> int:
    """An upper bound of the non-empty cells content.xml expands to (repeat attributes multiply), bounded early."""
    row_re = re.compile(rb"<table:table-row\b([^>]*?)(/>|>)")
    rep_re = re.compile(rb"number-(?:rows|columns)-repeated=\"(\d+)\"")
    cell_re = re.compile(rb"<table:(?:covered-)?table-cell\b([^>]*?)(/?)>")
    total = 0
    carry = b""
    with zf.open("content.xml") as handle:
        while True:
            chunk = handle.read(_CHUNK)
            data = carry + chunk
            if chunk:
                cut = data.rfind(b"</table:table-row>")
                if cut < 0:
                    carry = data
                    if len(data) > 4 * _CHUNK:
                        raise InputError(f"{path.name}: a single row is over {megabytes(4 * _CHUNK)}")
                    continue
                data, carry = data[:cut + 18], data[cut + 18:]
            for row in data.split(b"<table:table-row")[1:]:
                head = row_re.match(b"<table:table-row" + row)
                rep = rep_re.search(head.group(1)) if head else None
                times = int(rep.group(1)) if rep else 1
                cells = 0
                for attrs, empty in cell_re.findall(row):
                    if empty and b"value-type" not in attrs:
                        continue  # an empty cell, however often repeated, holds nothing
                    crep = rep_re.search(attrs)
                    cells += int(crep.group(1)) if crep else 1
                total += times * cells
                if total > MAX_CELLS:
                    raise _refuse_cells(path, "(content.xml)", total, partial=True)
            if not chunk:
                break
    return total


def _ref(row: int, col: int) -> str:
    return f"{column_letter(col)}{row}"


class FastBook(WorkbookBackend):
    """A read-only backend over an .xlsx/.xlsm/.ods file: bounded scan, then calamine (see the module docstring).

    Writing is not supported: results go to a new workbook (``xlcalib report``
    keeps using openpyxl for the formula-preserving copy and reads values here).
    """

    def __init__(self, path):
        import python_calamine

        path = Path(path)
        check_file(path)
        self.path, self.book = path, None
        self._zf = zipfile.ZipFile(path)
        check_zip(path, self._zf)
        names = set(self._zf.namelist())
        self.kind = "ods" if "content.xml" in names and "xl/workbook.xml" not in names else "xlsx"
        if self.kind == "ods":
            scan_ods(path, self._zf)
            self._parts = {}
        else:
            self._parts = sheet_parts(self._zf)
            known = set(self._parts.values())
            for part in names:  # worksheet parts the workbook's index does not name: bounded all the same
                if part.startswith("xl/worksheets/") and part.endswith(".xml") and part not in known:
                    scan_xlsx(path, self._zf, part, part.rsplit("/", 1)[-1])
        try:
            self._cal = python_calamine.CalamineWorkbook.from_path(str(path), load_tables=self.kind == "xlsx")
        except python_calamine.PasswordError:
            raise InputError(f"{path.name} is password-protected; save it without a password and try again") from None
        except Exception as exc:  # damaged zip, missing parts, malformed XML
            raise InputError(f"{path.name} could not be read as a workbook ({type(exc).__name__}: {exc})") from None
        self._names = list(self._cal.sheet_names)
        # chart sheets share the sheet-name space but hold no cells: say so rather than "the sheet is empty"
        self._chart_sheets = {m.name for m in self._cal.sheets_metadata if "chart" in str(m.typ).lower()}
        self._tables = {}
        for table in (self._cal.table_names or []) if self.kind == "xlsx" else []:
            try:
                t = self._cal.get_table_by_name(table)
            except Exception:  # noqa: BLE001 - a table calamine cannot read is simply not used
                continue
            self._tables.setdefault(t.sheet, t)

    def close(self) -> None:
        self._zf.close()
        try:
            self._cal.close()
        except Exception:  # noqa: BLE001 - already closed
            pass

    def sheet_names(self) -> list[str]:
        return list(self._names)

    def read_block(self, sheet: str) -> Block:
        name = self.find_sheet(sheet)
        if name in self._chart_sheets:
            raise InputError(f"sheet {name} is a chart sheet, not a table; the data must be on a worksheet named {name}")
        scan = None
        part = self._parts.get(name)
        if part is not None:
            scan = scan_xlsx(self.path, self._zf, part, name)
            if scan.read_by_data:
                return self._read_by_data(name, scan)
        try:
            ws = self._cal.get_sheet_by_name(name)
            rows = ws.to_python(skip_empty_area=True)
        except Exception as exc:  # noqa: BLE001
            raise InputError(f"{self.path.name}, sheet {name} could not be read ({type(exc).__name__}: {exc})") from None
        start = ws.start
        first_row, first_col = (start[0] + 1, start[1] + 1) if start else (1, 1)
        merged = tuple(f"{_ref(a[0] + 1, a[1] + 1)}:{_ref(b[0] + 1, b[1] + 1)}" for a, b in (ws.merged_cell_ranges or ()))
        table = self._tables.get(name)
        if table is not None and table.start is not None and rows:
            # the table's header row and columns; rows typed just below a table belong to it (as Excel extends it)
            header_row, col0, col1 = table.start[0], table.start[1] + 1, table.end[1] + 1  # 1-based header row
            rows = [r[col0 - first_col:col1 - first_col + 1] for r in rows[header_row - first_row:]] \
                if header_row >= first_row else rows
            first_row, first_col = max(header_row, first_row), col0
        hidden, errors, uncalc = (), {}, {}
        if scan is not None:
            last = first_row + len(rows) - 1
            hidden = tuple(r for r in scan.hidden_rows if first_row <= r <= last)
            errors, uncalc = scan.errors, scan.uncalculated
        if errors or uncalc:
            for marks, kind in ((errors, ErrorValue), (uncalc, Uncalculated)):
                for ref, text in marks.items():
                    r, c = cell_position(ref)
                    i, j = r - first_row, c - first_col
                    if 0 <= i < len(rows) and 0 <= j < len(rows[i]):
                        rows[i][j] = kind(text)
        return Block(rows, first_row, first_col, merged, name, hidden)

    def _read_by_data(self, name: str, scan: SheetScan) -> Block:
        """Rows and columns that hold data, with their sheet numbers; never the grid up to a stray far cell."""
        import openpyxl
        from openpyxl.worksheet._reader import WorkSheetParser

        wb = openpyxl.load_workbook(self.path, read_only=True, data_only=True, keep_links=False)
        try:
            ws = wb[name]
            parser = WorkSheetParser(ws._get_source(), ws._shared_strings, data_only=True, epoch=wb.epoch,
                                     date_formats=wb._date_formats, timedelta_formats=wb._timedelta_formats)
            cells: dict[tuple[int, int], Any] = {}
            for _, row in parser.parse():
                for cell in row:
                    value = cell["value"]
                    if value is not None and not (isinstance(value, str) and value == ""):
                        cells[(cell["row"], cell["column"])] = value
        finally:
            wb.close()
        for marks, kind in ((scan.errors, ErrorValue), (scan.uncalculated, Uncalculated)):
            for ref, text in marks.items():
                cells[cell_position(ref)] = kind(text)
        row_numbers = sorted({r for r, _ in cells})
        col_numbers = sorted({c for _, c in cells})
        rpos = {r: i for i, r in enumerate(row_numbers)}
        cpos = {c: j for j, c in enumerate(col_numbers)}
        rows = [[None] * len(col_numbers) for _ in row_numbers]
        for (r, c), value in cells.items():
            rows[rpos[r]][cpos[c]] = value
        hidden = tuple(r for r in scan.hidden_rows if r in rpos)
        return Block(rows, row_numbers[0] if row_numbers else 1, col_numbers[0] if col_numbers else 1,
                     tuple(scan.merged), name, hidden, tuple(row_numbers), tuple(col_numbers))

    def _read_only(self, *args, **kwargs):
        raise NotImplementedError("this backend reads only: write results to a new workbook")

    write_frame = delete_sheet = add_chart = style_cells = _read_only


def bound_workbook(path) -> None:
    """The size and cell-count checks alone (used before openpyxl loads a whole workbook for a formula-keeping copy)."""
    path = Path(path)
    check_file(path)
    with zipfile.ZipFile(path) as zf:
        check_zip(path, zf)
        names = set(zf.namelist())
        if "content.xml" in names and "xl/workbook.xml" not in names:
            scan_ods(path, zf)
            return
        for sheet, part in sheet_parts(zf).items():
            if part in names:
                scan = scan_xlsx(path, zf, part, sheet)
                if scan.grid_cells > MAX_GRID_CELLS:
                    raise InputError(
                        f"{path.name}, sheet {sheet}: its used range reaches row {scan.max_row:,}, column "
                        f"{scan.max_column:,} ({scan.grid_cells:,} cells; the limit is {MAX_GRID_CELLS:,}): a stray "
                        "cell far from the data? Delete the rows and columns beyond the data and save again")
