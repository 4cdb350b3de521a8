"""An export's tables as :class:`Sheet` objects: bounded reading of CSV text, workbooks and CMT's XML.

Every file passes the limits xlcalib applies to any input (README, "Input limits"): the file size
(:data:`~xlcalib.workbook.reader.MAX_INPUT_BYTES`), the longest line of a text file
(:data:`~xlcalib.workbook.csv_backend.MAX_LINE_BYTES`), NUL bytes, and the cells of a sheet
(:data:`~xlcalib.workbook.reader.MAX_CELLS`); workbooks go through the bounded reader
(:class:`~xlcalib.workbook.reader.FastBook`).  CMT's "Excel" export is XML Spreadsheet 2003 (an
``.xls`` that common Excel readers refuse): it is streamed through expat with document type
declarations refused outright, so no entity -- internal or external -- can ever be defined or expanded
(the "billion laughs" and external-entity attacks need one); it is parsed in 1 MB pieces and no document
tree is built -- only the cells' values are kept.
"""
from __future__ import annotations

import io
import os
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..cells import column_letter, is_blank
from ..errors import InputError

__all__ = ["Sheet", "sheet_from_cells", "read_csv_bytes", "read_workbook", "read_spreadsheetml", "check_size", "header_index"]


@dataclass
class Sheet:
    """One table of an export: the header, its columns (object arrays) and where each cell sits.

    ``rows`` holds the sheet row number of each body row (a CSV record's row is the row a spreadsheet
    shows when it opens the file: the header is row 1); ``column_numbers`` the sheet column of each
    header position (1 = A); ``above`` the non-blank cells of rows above the header (CMT's track name).
    """

    name: str
    header: list[str]
    columns: list[np.ndarray]
    rows: np.ndarray
    column_numbers: list[int]
    header_row: int = 1
    above: list[str] = field(default_factory=list)
    label: str = ""  # how messages name the table ("review.csv", "sheet Track A")
    #: sheet row of each body row's cell in column j, where it differs from ``rows`` (a long export pivoted wide)
    cell_rows: dict[int, np.ndarray] = field(default_factory=dict)
    #: sheet column of column j's cells, where it differs from ``column_numbers`` (a column unpacked from a cell)
    cell_columns: dict[int, int] = field(default_factory=dict)
    #: the rows above the header as read (a grid's criterion row; CMT's track name)
    above_rows: list[list[Any]] = field(default_factory=list)
    #: choice questions: label column -> its "- Value" column (CMT)
    twins: dict[int, int] = field(default_factory=dict)
    #: what reading the table did that the import report says (a CSV file's decimal commas read as points)
    notes: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.rows)

    def letter(self, j: int) -> str:
        return column_letter(self.cell_columns.get(j, self.column_numbers[j]))

    def row_of(self, j: int) -> np.ndarray:
        """The sheet row of column *j*'s cell in every body row."""
        return self.cell_rows.get(j, self.rows)

    def cells(self, j: int, mask: np.ndarray | None = None) -> np.ndarray:
        """Cell references ("F12") of column *j* for every body row (or the rows under *mask*)."""
        if not self.n:
            return np.empty(0, dtype=object)
        rows = self.row_of(j) if mask is None else self.row_of(j)[mask]
        letter = self.letter(j)
        out = np.asarray([letter + r for r in map(str, rows.tolist())], dtype=object)
        if j in self.cell_rows:
            out[rows <= 0] = ""  # no such cell (the long export had no line for it)
        return out


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def check_size(n_bytes: int, name: str) -> None:
    from ..workbook.reader import MAX_INPUT_BYTES

    if n_bytes > MAX_INPUT_BYTES:
        raise InputError(f"{name} is {_mb(n_bytes)}; the limit is {_mb(MAX_INPUT_BYTES)} for an input file "
                         "(see 'Input limits' in the README)")


def _check_text(data: bytes, name: str) -> None:
    """NUL bytes, the longest line and the field count of a text export, on the raw bytes (numpy, no parsing)."""
    from ..workbook.csv_backend import MAX_LINE_BYTES
    from ..workbook.reader import MAX_CELLS

    buf = np.frombuffer(data, dtype=np.uint8)
    nul = np.flatnonzero(buf == 0)
    if nul.size:
        line = int(np.count_nonzero(buf[:nul[0]] == 10)) + 1
        raise InputError(f"{name}, line {line} holds a NUL byte (code 0): not a text export; download it again")
    ends = np.flatnonzero(buf == 10)
    bounds = np.concatenate(([-1], ends, [len(buf)]))
    longest = int(np.max(np.diff(bounds))) - 1 if len(bounds) > 1 else 0
    if longest > MAX_LINE_BYTES:
        line = int(np.argmax(np.diff(bounds) - 1 > MAX_LINE_BYTES)) + 1
        raise InputError(f"{name}, line {line} is {_mb(longest)} long; the limit is {_mb(MAX_LINE_BYTES)} a line "
                         "(see 'Input limits' in the README)")
    fields = int(np.count_nonzero((buf == 44) | (buf == 59) | (buf == 9))) + len(ends) + 1
    if fields > MAX_CELLS * 4:  # separators inside quoted text count too: a generous bound, never a tally
        raise InputError(f"{name} holds about {fields:,} fields; the limit is {MAX_CELLS:,} cells "
                         "(see 'Input limits' in the README)")


def header_index(rows: list[list[Any]], probe: int = 30) -> int:
    """The header row of a block: the first row at least half as full as the fullest of the first rows
    (a CMT sheet starts with its track name alone in row 1, then a blank row)."""
    counts = [sum(not is_blank(c) for c in row) for row in rows[:probe]]
    if not counts or max(counts) == 0:
        return 0
    need = max(2, (max(counts) + 1) // 2) if max(counts) >= 2 else 1
    return next(i for i, c in enumerate(counts) if c >= need)


def _sheet_from_rows(rows: list[list[Any]], name: str, row_numbers: list[int], column_numbers: list[int],
                     label: str) -> Sheet:
    from ..workbook.reader import MAX_CELLS

    width = max((len(r) for r in rows), default=0)
    if len(rows) * max(width, 1) > MAX_CELLS:
        raise InputError(f"{label} holds {len(rows) * width:,} cells; the limit is {MAX_CELLS:,} a sheet "
                         "(see 'Input limits' in the README)")
    h = header_index(rows)
    above = [str(c).strip() for r in rows[:h] for c in r if not is_blank(c)]
    header = [("" if is_blank(c) else str(c)) for c in (rows[h] if rows else [])]
    header += [""] * (width - len(header))
    column_numbers = list(column_numbers[:width])
    while len(column_numbers) < width:
        column_numbers.append((column_numbers[-1] if column_numbers else 0) + 1)
    body = [r if len(r) == width else list(r) + [None] * (width - len(r)) for r in rows[h + 1:]]
    columns = []
    for values in (zip(*body) if body else [()] * width):  # one transpose at C speed
        col = np.empty(len(body), dtype=object)
        col[:] = values
        columns.append(col)
    sheet = Sheet(name, header, columns, np.asarray(row_numbers[h + 1:], dtype=np.intp), column_numbers,
                  row_numbers[h] if row_numbers else 1, above, label)
    sheet.above_rows = [list(r) + [None] * (width - len(r)) for r in rows[:h]]
    return sheet


def sheet_from_cells(rows: list[list[Any]], name: str = "Range") -> Sheet:
    """Cells already in hand (a spreadsheet range, a list of rows) as a :class:`Sheet`, rows numbered from 1."""
    from ..cells import as_rows

    rows = as_rows(rows)
    width = max((len(r) for r in rows), default=0)
    return _sheet_from_rows(rows, name, list(range(1, len(rows) + 1)), list(range(1, width + 1)), name)


def read_csv_bytes(data: bytes, name: str = "the export") -> Sheet:
    """A CSV export (comma, semicolon or tab, the one its header uses most) as one :class:`Sheet`.

    Every field is read as text, exactly as written (``"007"`` stays ``"007"``; values are read later,
    by their role).  UTF-8 with or without a byte-order mark; quoted fields may hold line breaks (review
    texts do), so rows are records, numbered as a spreadsheet shows them -- blank lines count, and so do a
    title above the header and Excel's ``sep=;`` line (:func:`~xlcalib.workbook.csv_layout.csv_layout`),
    which are not part of the table.
    """
    import pandas as pd

    from ..workbook.csv_layout import csv_layout, not_utf8_message

    check_size(len(data), name)
    _check_text(data, name)
    sep, above = csv_layout(data[:65536].decode("utf-8-sig", "replace"))
    options = dict(sep=sep, header=None, dtype=str, keep_default_na=False, na_filter=False, encoding="utf-8-sig",
                   engine="c", skip_blank_lines=False, skiprows=above)
    widths = None
    try:
        frame = _parse(data, options)
    except pd.errors.EmptyDataError:
        raise InputError(f"{name} is empty") from None
    except UnicodeDecodeError:
        raise InputError(not_utf8_message(data, name)) from None
    except pd.errors.ParserError as exc:  # a row longer than the first: read at the longest, checked below
        widths = _record_widths(data, sep, above)
        try:
            if widths is None:
                raise
            frame = _parse(data, {**options, "names": list(range(max(widths)))})
        except pd.errors.ParserError:  # not that: a stray quote, say
            raise InputError(f"{name} is not a well-formed CSV table ({' '.join(str(exc).split())}); export it "
                             "again or check for a stray quote") from None
    filled = frame.ne("").any(axis=1).to_numpy() if len(frame.columns) else np.zeros(len(frame), dtype=bool)
    numbers = np.arange(above + 1, above + 1 + len(frame), dtype=np.intp)[filled]  # each record's row
    if widths is not None:  # only as wide as the header's record
        frame = _within_header(frame[filled], numbers, widths[int(np.argmax(filled))], name, sep)
    else:
        frame = frame[filled]
    if not len(frame):
        raise InputError(f"{name} is empty")
    header = [str(h) for h in frame.iloc[0].tolist()]
    columns = [frame[j].to_numpy(dtype=object)[1:] for j in frame.columns]
    sheet = Sheet(name, header, columns, numbers[1:], list(range(1, len(header) + 1)), int(numbers[0]), [], name)
    if sep == ";":
        _read_decimal_commas(sheet)
    return sheet


def _parse(data: bytes, options: dict):
    import pandas as pd

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pd.read_csv(io.BytesIO(data), **options)


def _record_widths(data: bytes, sep: str, above: int) -> list[int] | None:
    """Each record's number of fields below the lines *above* the table (the csv module's reading: quoted line
    breaks kept in their field); None when the csv module cannot read the file either."""
    import csv

    text = io.StringIO(data.decode("utf-8-sig", "replace"), newline="")
    for _ in range(above):
        text.readline()
    try:
        return [len(record) for record in csv.reader(text, delimiter=sep)] or None
    except csv.Error:
        return None


def _within_header(frame, numbers: np.ndarray, width: int, name: str, sep: str):
    """A ragged table cut to its header's *width*: empty fields after a row's last column are a trailing delimiter
    (``P1,3,4,``); a filled one is a value without a column -- an unquoted decimal comma or delimiter -- and an
    error naming each such row by the row a spreadsheet shows (the parser's own message counted its lines from
    below any title)."""
    extra = frame.iloc[1:, width:].ne("").any(axis=1).to_numpy()
    if extra.any():
        rows = numbers[1:][extra]
        shown = ", ".join(map(str, rows[:10])) + (f" and {rows.size - 10:,} more" if rows.size > 10 else "")
        raise InputError(f"{name}, row(s) {shown}: more fields than the header row has -- an unquoted decimal comma "
                         f"(5,5 for 5.5) or a '{sep}' inside a name? Put such fields in quotes or use a decimal point")
    return frame.iloc[:, :width]


def _read_decimal_commas(sheet: Sheet) -> None:
    """A ';' file's columns of values written with decimal commas ("3,5"), read with decimal points, and the note
    that says so (:func:`~xlcalib.cells.decimal_comma_column`).  Roles are found later, from the values, so a column
    is taken for one of values only when each of its filled cells is a number once its comma is a point, a grade
    or a mark (COI, n/a): a column of ids such as "3,1" next to "P7" stays as written."""
    from ..cells import decimal_comma_column, decimal_comma_words
    from ..inputs.values import MARKS, is_symbol, leading_number

    read = []
    for j, column in enumerate(sheet.columns):
        rewritten = decimal_comma_column(column)
        if rewritten is None:
            continue
        distinct = {v.strip() for v in rewritten if isinstance(v, str) and v.strip()}
        if all(leading_number(v) is not None or is_symbol(v) or v.lower() in MARKS for v in distinct):
            sheet.columns[j] = rewritten
            read.append(sheet.header[j].strip() or sheet.letter(j))
    if read:
        sheet.notes.append(decimal_comma_words(read, sheet.label))


def read_workbook(source: Path | bytes, name: str) -> list[Sheet]:
    """Every worksheet of an .xlsx/.xlsm/.ods file through the bounded reader; bytes go via a private
    temporary file (the bounded reader scans a zip on disk)."""
    from ..workbook.reader import FastBook

    if isinstance(source, (bytes, bytearray)):
        check_size(len(source), name)
        with tempfile.TemporaryDirectory(prefix="xlcalib-import-") as folder:
            given = Path(str(name)).name  # messages name the user's file (or the member of their zip)
            ok = given.lower().endswith((".xlsx", ".xlsm", ".ods")) and len(given.encode()) <= 200
            path = Path(folder) / (given if ok else "export.xlsx")
            path.write_bytes(bytes(source))
            return read_workbook(path, name)
    book = FastBook(source)
    try:
        sheets = []
        for sheet_name in book.sheet_names():
            try:
                block = book.read_block(sheet_name)
            except InputError as exc:
                if "chart sheet" in exc.message:
                    continue
                raise
            if not block.rows:
                continue
            row_numbers = [block.row_number(i) for i in range(len(block.rows))]
            width = max(len(r) for r in block.rows)
            column_numbers = [block.column_number(j) for j in range(width)]
            sheets.append(_sheet_from_rows(block.rows, sheet_name, row_numbers, column_numbers,
                                           f"{name}, sheet {sheet_name}"))
        return sheets
    finally:
        book.close()


# ----------------------------------------------------------------------------------------------------------
# XML Spreadsheet 2003 (SpreadsheetML): CMT's "Export to Excel"
# ----------------------------------------------------------------------------------------------------------


class _Refused(Exception):
    pass


def _local_names(local: str) -> tuple[str, ...]:
    """The spellings an element name takes without namespace processing: plain (default namespace) or prefixed."""
    return (local, f"ss:{local}", f"x:{local}", f"o:{local}")


_ROW, _CELL, _DATA, _SHEET = (frozenset(_local_names(n)) for n in ("Row", "Cell", "Data", "Worksheet"))


class _SpreadsheetML:
    """Streaming SpreadsheetML reader: Worksheet > Table > Row > Cell > Data, with ss:Index on rows and cells.

    Speed matters (10^4 reviews x 16 questions is ~700k elements): element names are matched by set
    membership, and the character handler is attached only inside a Data element, so the indentation
    between elements costs no Python call.
    """

    def __init__(self, name: str, parser):
        from ..workbook.reader import MAX_CELLS

        self.name, self.max_cells, self.parser = name, MAX_CELLS, parser
        self.sheets: list[tuple[str, list[list[Any]], list[int]]] = []
        self.rows: list[list[Any]] = []
        self.row_numbers: list[int] = []
        self.row: list[Any] | None = None
        self.row_number = 0
        self.column = 0
        self.number = False
        self.text: list[str] = []
        self.cells = 0
        self.sheet_name = ""

    def start(self, tag: str, attrs: dict) -> None:
        if tag in _DATA:
            self.text = []
            self.number = attrs.get("ss:Type") == "Number"
            self.parser.CharacterDataHandler = self.text.append
        elif tag in _CELL:
            index = attrs.get("ss:Index")
            self.column = int(index) if index else self.column + 1
            self.cells += 1
            if self.cells > self.max_cells:
                raise InputError(f"{self.name} holds more than {self.max_cells:,} cells; the limit is "
                                 f"{self.max_cells:,} (see 'Input limits' in the README)")
        elif tag in _ROW:
            index = attrs.get("ss:Index")
            self.row_number = int(index) if index else self.row_number + 1
            self.row, self.column = [], 0
        elif tag in _SHEET:
            self.sheet_name = attrs.get("ss:Name", f"Sheet{len(self.sheets) + 1}")
            self.rows, self.row_numbers, self.row_number = [], [], 0

    def end(self, tag: str) -> None:
        if tag in _DATA:
            self.parser.CharacterDataHandler = None
            row = self.row
            if row is None:
                return
            value: Any = "".join(self.text)
            if self.number and value.strip():
                try:
                    value = float(value)
                except ValueError:
                    pass
            gap = self.column - 1 - len(row)
            if gap > 0:
                row.extend([None] * gap)
            if gap >= 0:
                row.append(value)
        elif tag in _ROW:
            row = self.row
            if row is not None and any(c is not None and (not isinstance(c, str) or c.strip()) for c in row):
                self.rows.append(row)
                self.row_numbers.append(self.row_number)
            self.row = None
        elif tag in _SHEET:
            self.sheets.append((self.sheet_name, self.rows, self.row_numbers))
            self.rows, self.row_numbers = [], []


def read_spreadsheetml(data: bytes, name: str) -> list[Sheet]:
    """Every worksheet of an XML Spreadsheet 2003 file, streamed (expat, document type declarations refused).

    Names are read without namespace processing (CMT writes the spreadsheet namespace as the default one
    and ``ss:`` on attributes; the prefixed spellings are accepted too).
    """
    from xml.parsers import expat

    check_size(len(data), name)
    parser = expat.ParserCreate()
    reader = _SpreadsheetML(name, parser)
    parser.buffer_text = True
    parser.buffer_size = 1 << 16

    def refuse(*_args):
        raise _Refused()

    parser.StartDoctypeDeclHandler = refuse  # no DTD: no entity can be declared, so none is ever expanded
    parser.EntityDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartElementHandler = reader.start
    parser.EndElementHandler = reader.end
    view = memoryview(data)
    step = 1 << 20
    try:
        for start in range(0, len(data), step):
            parser.Parse(bytes(view[start:start + step]), start + step >= len(data))
        if not data:
            parser.Parse(b"", True)
    except _Refused:
        raise InputError(f"{name} declares a document type (<!DOCTYPE ...>); an exported spreadsheet never does, "
                         "and xlcalib does not read XML that can define entities") from None
    except expat.ExpatError as exc:
        raise InputError(f"{name} is not well-formed XML (line {exc.lineno}, column {exc.offset}: "
                         f"{expat.ErrorString(exc.code)})") from None
    sheets = []
    for sheet_name, rows, row_numbers in reader.sheets:
        if not rows:
            continue
        width = max(len(r) for r in rows)
        sheets.append(_sheet_from_rows(rows, sheet_name, row_numbers, list(range(1, width + 1)),
                                       f"{name}, sheet {sheet_name}"))
    return sheets


def source_bytes(source: Any) -> tuple[bytes | None, Path | None, str]:
    """(bytes, path, display name) of a path or bytes argument; the file is size-checked before it is read."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        check_size(len(data), "the export")
        return data, None, "the export"
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise InputError(f"file not found: {path}")
        check_size(path.stat().st_size, path.name)
        return path.read_bytes(), path, path.name
    raise InputError(f"cannot read an export from a {type(source).__name__}; pass a file path or its bytes")
