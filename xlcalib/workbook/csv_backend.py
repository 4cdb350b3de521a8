"""A read-only backend over a CSV file: the fast input path for very large exercises.

The whole file is one sheet (named by ``sheet``, default "Evaluations").  It
is bounded before it is parsed, then parsed by pandas' C reader, and checked
column-wise by :func:`xlcalib.inputs.check_evaluations` with the same
messages, by cell, as a workbook ("sheet Evaluations, row 12, column Score
(C12) is the text '3,5' with a decimal comma ...").  Row numbers are the
file's record numbers (the header is row 1; a quoted field may hold line
breaks, so a record can span lines), so they match the row numbers a
spreadsheet shows when it opens the file.  Line ends may be LF, CRLF or a
bare CR (old Mac exports).

Bounds (README, "Input limits"), checked on the raw bytes with numpy before
pandas sees them, each refusal naming the limit:

* the file size (:data:`~xlcalib.workbook.reader.MAX_INPUT_BYTES`);
* the longest line (:data:`MAX_LINE_BYTES`: a 200 MB string or a line of 2
  million commas is refused at once, naming its line);
* the number of fields (:data:`~xlcalib.workbook.reader.MAX_CELLS`);
* NUL bytes (never part of a text export; named by line);
* fields longer than an Excel cell (:data:`xlcalib.cells.MAX_TEXT_CHARS`), in
  the columns that are used, named by cell.

Ragged rows are errors naming the row: more fields than the header is the
typical unquoted decimal comma (``A,x,5,5,1`` where ``5,5`` meant 5.5), which a
reader that silently dropped or shifted a field would turn into a wrong score.
The delimiter (``,`` ``;`` or tab) is the one the header row uses most.
"""
from __future__ import annotations

import csv
import io
import re
import warnings
from pathlib import Path

import numpy as np

from ..cells import MAX_TEXT_CHARS, column_letter, decimal_comma_column, decimal_comma_words
from ..errors import InputError, InputProblems
from ..inputs import (
    EVALUATION_COLUMNS,
    UNCERTAINTY_KINDS,
    Problem,
    RawTable,
    find_columns,
)
from ..inputs.table import TITLE_ROWS, names_evaluation_columns
from . import reader  # its limits, read at call time (one set of limits for every reader)
from .csv_layout import csv_layout, not_utf8_message
from .base import Block, WorkbookBackend

#: Names of delimited text files read as a CSV file: Excel's "Text (Tab delimited)" saves .txt, other tools .tsv.
TEXT_TABLE_SUFFIXES = (".csv", ".tsv", ".txt")
#: Longest line of a CSV file (bytes): far above a real row, far below what could exhaust memory or time.
MAX_LINE_BYTES = 1024 * 1024
_SLICE = 32 * 1024 * 1024


class _ReadColumns:
    """The columns of a read table by header position; a column the check does not use reads as blank."""

    def __init__(self, arrays: dict[int, np.ndarray], n_rows: int):
        self.arrays, self.n_rows = arrays, n_rows

    def __getitem__(self, j: int):
        return self.arrays[j] if j in self.arrays else [None] * self.n_rows


class CsvBook(WorkbookBackend):
    """One CSV file seen as a workbook with one sheet; writing is not supported (results go to a new file)."""

    def __init__(self, path, sheet: str = "Evaluations"):
        path = Path(path)
        reader.check_input_size(path)
        self.path, self.sheet, self.book = path, sheet, None
        self._filled = None  # each record's fields up to its last filled one, where the csv module counted them
        data = path.read_bytes()
        if b"\r" in data:  # a bare CR ends a line as well (old Mac exports): one line end for every reader here
            data = re.sub(rb"\r(?!\n)", b"\n", data)
        self.data = data
        self._scan()

    # ------------------------------------------------------------------ bounds
    def _scan(self) -> None:
        """Line ends, longest line, NUL bytes and the field count, in slices (memory: a few slices)."""
        data, name = self.data, self.path.name
        buf = np.frombuffer(data, dtype=np.uint8)
        ends = []
        for start in range(0, len(buf), _SLICE):
            part = buf[start:start + _SLICE]
            ends.append(np.flatnonzero(part == 10).astype(np.int64) + start)
            nul = np.flatnonzero(part == 0)
            if nul.size and start == 0 and data[:2] in (b"\xff\xfe", b"\xfe\xff"):
                raise InputError(f"{name} is UTF-16 text (Excel's 'Unicode Text'); save it again as CSV UTF-8 (in "
                                 "Excel: Save As, 'CSV UTF-8 (Comma delimited)')")
            if nul.size:
                pos = int(nul[0]) + start
                line = int(np.count_nonzero(buf[:pos] == 10)) + 1
                raise InputError(f"{name}, line {line} holds a NUL byte (code 0): not a text export; export the sheet "
                                 "again as CSV (UTF-8)")
        ends = np.concatenate(ends) if ends else np.zeros(0, dtype=np.int64)
        if len(buf) and (not ends.size or ends[-1] != len(buf) - 1):
            ends = np.append(ends, len(buf))  # last line without a line end
        starts = np.concatenate(([0], ends[:-1] + 1)) if ends.size else np.zeros(0, dtype=np.int64)
        lengths = ends - starts
        if lengths.size and lengths.max() > MAX_LINE_BYTES:
            line = int(np.argmax(lengths > MAX_LINE_BYTES)) + 1
            raise InputError(f"{name}, line {line} is {reader.megabytes(int(lengths[line - 1]))} long; the limit is "
                             f"{reader.megabytes(MAX_LINE_BYTES)} a line (a real row is far shorter; see 'Input "
                             "limits' in the README)")
        self.starts, self.ends = starts, ends
        head = data[:int(ends[min(len(ends), TITLE_ROWS + 2) - 1]) if ends.size else len(data)]
        # the delimiter and the header's line: titles and Excel's "sep=;" line may lie above it (csv_layout)
        self.delimiter, self.header_line = csv_layout(head.decode("utf-8-sig", "replace"), names_evaluation_columns)
        fields = int(np.count_nonzero(buf == ord(self.delimiter))) + len(ends)
        if fields > reader.MAX_CELLS:
            raise InputError(f"{name} holds about {fields:,} fields; the limit is {reader.MAX_CELLS:,} (Excel's "
                             "1,048,576 rows x 8 columns; see 'Input limits' in the README)")

    def _field_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """(number of fields, row number) of every record: the row a spreadsheet shows, which is the line number
        unless a quoted field holds a line break; exact with quotes (csv module), numpy without."""
        data, delim = self.data, self.delimiter
        if b'"' not in data:
            buf = np.frombuffer(data, dtype=np.uint8)
            if not len(self.starts):
                return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
            pos = np.flatnonzero(buf == ord(delim))
            lines = len(self.ends)
            k = int(np.searchsorted(pos, self.ends[0]))  # delimiters of the first line
            if k and len(pos) == k * lines:  # the usual file: as many delimiters on every line (checked, in O(lines))
                grid = pos.reshape(lines, k)
                if (grid[:, 0] >= self.starts).all() and (grid[:, -1] < self.ends).all():
                    return np.full(lines, k + 1, dtype=np.intp), np.arange(1, lines + 1)
            # delimiters before each line end, differenced: one sorted search per line, not per delimiter
            per_line = np.diff(np.searchsorted(pos, self.ends), prepend=0) + 1
            empty = (self.ends - self.starts) == 0
            if empty.any():  # "\r\n" line ends leave one byte on a blank line
                per_line[empty] = 0
            crlf = (self.ends - self.starts == 1) & (buf[np.minimum(self.starts, len(buf) - 1)] == 13)
            per_line[crlf] = 0
            return per_line, np.arange(1, len(per_line) + 1)
        csv.field_size_limit(MAX_LINE_BYTES)
        text = io.StringIO(data.decode("utf-8-sig", "replace"), newline="")
        records = csv.reader(text, delimiter=delim)
        counts, self._filled = [], []
        try:
            for record in records:
                counts.append(len(record) if any(f.strip() for f in record) else 0)
                self._filled.append(max((i + 1 for i, f in enumerate(record) if f.strip()), default=0))
        except csv.Error as exc:
            raise InputError(f"{self.path.name}, row {len(counts) + 1} (line {records.line_num} of the file): "
                             f"{exc}") from None
        return np.asarray(counts, dtype=np.intp), np.arange(1, len(counts) + 1, dtype=np.intp)

    # ------------------------------------------------------------------ reading
    def sheet_names(self) -> list[str]:
        return [self.sheet]

    def read_table(self, sheet: str) -> RawTable:
        """The file as a :class:`~xlcalib.inputs.RawTable`; structural problems (ragged rows) raised all at once."""
        name = self.find_sheet(sheet)
        counts, lines = self._field_counts()
        nonblank = np.flatnonzero((counts > 0) & (np.arange(counts.size) >= self.header_line))
        if not nonblank.size:
            raise InputError(f"{self.path.name} is empty; expected a header row with Assessor, Object, Score and "
                             "SD/Confidence/Level")
        h = int(nonblank[0])
        header = next(csv.reader([self.data[self.starts[h]:self.ends[h]].decode("utf-8-sig", "replace")],
                                 delimiter=self.delimiter))
        self._refuse_ragged(name, counts, lines, h)
        columns = find_columns(header, EVALUATION_COLUMNS, f"sheet {name}, header row {int(lines[h])}")
        numeric = {columns[k] for k in ("score", "sd", "confidence") if k in columns}
        wanted = sorted(set(columns.values()))
        frame, text_read, commas = self._parse_body(h, wanted, numeric, int(counts[h:].max()))
        body_lines = lines[h + 1:h + 1 + len(frame)]  # row numbers of the records (quoted line breaks span lines)
        out = self._column_arrays(frame, wanted, text_read, name, header, body_lines)
        if text_read and self.delimiter == ";":
            for j in sorted(numeric):
                rewritten = decimal_comma_column(out[j])
                if rewritten is not None:
                    out[j], commas = rewritten, commas + [j]
        notes = (self._decimal_comma_note(name, [str(header[j]).strip() for j in commas]),) if commas else ()
        return RawTable(list(header), _ReadColumns(out, len(body_lines)), np.asarray(body_lines, dtype=np.intp),
                        list(range(1, len(header) + 1)), int(lines[h]), name, notes=notes)

    def _decimal_comma_note(self, name: str, columns: list[str]) -> Problem:
        """The warning that says decimal commas were read as decimal points, and why that is the file's own rule."""
        return Problem("warning", name, "", None, ", ".join(columns),
                       decimal_comma_words(columns, self.path.name))

    def _filled_width(self, r: int) -> int:
        """Fields of record *r* up to its last filled one (the quoted reading counted them; else its line, split)."""
        if self._filled is not None:
            return int(self._filled[r])
        line = self.data[int(self.starts[r]):int(self.ends[r])].decode("utf-8", "replace").rstrip("\r")
        return max((i + 1 for i, f in enumerate(line.split(self.delimiter)) if f.strip()), default=0)

    def _refuse_ragged(self, name: str, counts: np.ndarray, lines: np.ndarray, h: int) -> None:
        """InputProblems naming every row below the header (row *h*) whose field count differs from the header's --
        but for empty fields after the last column (``A,x,5,1,``: a trailing delimiter, which a decimal comma or a
        delimiter inside a name never leaves)."""
        width = int(counts[h])
        ragged = np.flatnonzero((counts != width) & (counts > 0))
        ragged = [r for r in ragged[ragged > h] if counts[r] < width or self._filled_width(r) > width]
        if not ragged:
            return
        problems = []
        for r in ragged:
            line, n = int(lines[r]), int(counts[r])
            hint = (f": an unquoted decimal comma (5,5 for 5.5) or a '{self.delimiter}' inside a name? Put such "
                    "fields in quotes (\"5,5\") or use a decimal point") if n > width else \
                ": a field is missing (every row needs one field per header column, even if blank)"
            problems.append(Problem("error", name, "", line, "", f"{self.path.name}, row {line} has {n} fields but "
                                    f"the header row has {width}{hint}"))
        raise InputProblems(problems, {"sheet": name})

    def _parse_body(self, h: int, wanted: list[int], numeric: set[int], fields: int):
        """(frame, text_read, number columns read with a decimal comma): the rows below the header, the *wanted*
        columns only, parsed by pandas' C reader.

        Number columns are parsed as floats -- in a file separated by ';' that writes a comma between digits, first
        with the comma as the decimal mark (:func:`~xlcalib.cells.decimal_comma_column` says why; pandas then
        refuses a ``3.5``, so a column of both conventions is never read this way).  When a number column holds
        text or blanks, every column is read as text instead (``text_read``) and checked cell by cell.  Text
        columns stay object arrays: the parser's own strings, without pandas 3's pass building its str dtype.
        """
        import pandas as pd

        kwargs = dict(sep=self.delimiter, header=None, usecols=wanted, skip_blank_lines=False, encoding="utf-8",
                      engine="c", names=list(range(fields)))  # *fields*: the most a row has (empty ones trailing)
        source = self.data[int(self.ends[h]) + 1:] if h < len(self.ends) else b""
        marks = [",", "."] if self.delimiter == ";" and re.search(rb"\d,\d", source) else ["."]
        for mark in marks:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    frame = pd.read_csv(io.BytesIO(source), dtype={j: (float if j in numeric else object)
                                                                   for j in wanted},
                                        na_filter=False, decimal=mark, **kwargs)
            except pd.errors.EmptyDataError:
                return pd.DataFrame({j: pd.Series([], dtype=object) for j in wanted}), False, []
            except UnicodeDecodeError:
                raise InputError(not_utf8_message(self.data, self.path.name)) from None
            except (ValueError, TypeError):
                continue  # a number column holds text or blanks (or the other decimal mark)
            return frame, False, self._comma_columns(source, numeric, kwargs) if mark == "," else []
        try:  # read as text, checked cell by cell
            return pd.read_csv(io.BytesIO(source), dtype=str, keep_default_na=False, na_values=[], **kwargs), True, []
        except UnicodeDecodeError:
            raise InputError(not_utf8_message(self.data, self.path.name)) from None

    @staticmethod
    def _comma_columns(source: bytes, numeric: set[int], kwargs: dict) -> list[int]:
        """The number columns that hold a comma, of a body parsed with the comma as the decimal mark (*kwargs*: the
        parse's own options, so the same fields are read)."""
        import pandas as pd

        options = {**kwargs, "usecols": sorted(numeric)}
        texts = pd.read_csv(io.BytesIO(source), dtype=str, keep_default_na=False, **options)
        return [j for j in sorted(numeric) if texts[j].str.contains(",", regex=False).any()]

    def _column_arrays(self, frame, wanted: list[int], text_read: bool, name: str, header: list,
                       body_lines: np.ndarray) -> dict[int, np.ndarray]:
        """Each wanted column as an array (floats, or objects with None for a missing field); fields longer than an
        Excel cell are refused all at once, named by cell (only possible when some line is that long)."""
        import pandas as pd

        longest = int((self.ends - self.starts).max()) if len(self.ends) else 0
        out = {}
        problems = []
        for j in wanted:
            col = frame[j] if j in frame.columns else pd.Series([""] * len(frame), dtype=object)
            if col.dtype.kind == "f":
                out[j] = col.to_numpy()
                continue
            values = col.to_numpy(dtype=object)  # pandas' own array (read-only)
            if text_read or longest > MAX_TEXT_CHARS:
                values = values.copy()  # ours, to blank out cells in
            if text_read:  # only the text read can leave missing fields
                values[pd.isna(col).to_numpy()] = None
            if longest > MAX_TEXT_CHARS:  # else no field can be longer than its line
                lengths = col.str.len().to_numpy(dtype=float, na_value=0)
                for i in np.flatnonzero(lengths > MAX_TEXT_CHARS):
                    row = int(body_lines[i])
                    ref = f"{column_letter(j + 1)}{row}"
                    problems.append(Problem("error", name, ref, row, str(header[j]),
                                            f"sheet {name}, row {row}, column {header[j]} ({ref}) is "
                                            f"{int(lengths[i]):,} characters long; the limit is {MAX_TEXT_CHARS:,} "
                                            "(an Excel cell's)"))
                    values[i] = None
            out[j] = values
        if problems:
            raise InputProblems(problems, {"sheet": name})
        return out

    def read_block(self, sheet: str) -> Block:
        """All cells as text rows (the general interface; the evaluations path uses :meth:`read_table`)."""
        name = self.find_sheet(sheet)
        text = self.data.decode("utf-8-sig", "replace")
        csv.field_size_limit(MAX_LINE_BYTES)
        rows = [[(c if c.strip() else None) for c in r] for r in csv.reader(io.StringIO(text, newline=""),
                                                                          delimiter=self.delimiter)]
        for i in range(min(self.header_line, len(rows))):  # a "sep=" line and titles: blank rows above the table
            rows[i] = []
        self._refuse_overlong(name, rows)
        width = max((len(r) for r in rows), default=0)
        return Block([r + [None] * (width - len(r)) for r in rows], 1, 1, (), name)

    def _refuse_overlong(self, name: str, rows: list[list]) -> None:
        """Rows with a filled field beyond the header's last column, all named at once: in a CSV file that is an
        unquoted decimal comma or delimiter, never a column of its own (it would be read as a nameless one)."""
        head = next((i for i, r in enumerate(rows) if any(c is not None for c in r)), None)
        if head is None:
            return
        width = len(rows[head])
        problems = [Problem("error", name, "", i + 1, "", f"{self.path.name}, row {i + 1} has {len(r)} fields but the "
                            f"header row has {width}: an unquoted decimal comma (5,5 for 5.5) or a "
                            f"'{self.delimiter}' inside a name? Put such fields in quotes or use a decimal point")
                    for i, r in enumerate(rows[head + 1:], start=head + 1)
                    if len(r) > width and any(c is not None for c in r[width:])]
        if problems:
            raise InputProblems(problems, {"sheet": name})

    def _read_only(self, *args, **kwargs):
        raise NotImplementedError("CsvBook is read-only: write results to a new workbook")

    write_frame = delete_sheet = add_chart = style_cells = _read_only


__all__ = ["CsvBook", "MAX_LINE_BYTES", "TEXT_TABLE_SUFFIXES", "UNCERTAINTY_KINDS"]
