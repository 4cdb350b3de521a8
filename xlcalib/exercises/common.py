"""What every exercise runner shares: the lines that head each result sheet, the guard that keeps results off
input sheets, grids read from sheets, and the report job on a workbook file.

Every result sheet starts with the run's title, time, version and settings (:func:`run_preamble`), so a
printout says what produced it; and that first line ("xlcalib <exercise>" in A1) is also how a later run
recognises a sheet it may overwrite (:func:`check_own_sheets`).
"""
from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

from ..cells import is_blank
from ..errors import InputError
from ..progress import advance, step


def run_preamble(title: str, settings: str, now: _dt.datetime | None = None) -> list[list[Any]]:
    """The three lines above every result table: "xlcalib <title>", the run's time and version, its settings."""
    from .. import __version__

    stamp = (now or _dt.datetime.now()).replace(microsecond=0).isoformat(sep=" ")
    # one text per row, in column A: it reads across the empty cells beside it instead of being cut by them
    return [[f"xlcalib {title}"], [f"run {stamp}, xlcalib {__version__}"], [f"settings: {settings}"]]


def is_own_sheet(backend, sheet: str) -> bool:
    """Whether *sheet* was written by xlcalib: result sheets start with "xlcalib <exercise>" in A1."""
    block = backend.read_block(sheet)
    first = block.rows[0][0] if block.rows and block.rows[0] else None
    return block.first_row == 1 and block.first_column == 1 and isinstance(first, str) and first.startswith("xlcalib ")


def check_own_sheets(backend, names) -> None:
    """Refuse to overwrite a sheet that has a result sheet's name but was not written by xlcalib (an input sheet).

    Result sheets start with "xlcalib <exercise>" in A1; an empty sheet of that name is fine to fill.
    """
    for name in names:
        actual = backend.find_sheet(name, required=False)
        if actual is None:
            continue
        block = backend.read_block(actual)
        cells = [c for row in block.rows for c in row if not is_blank(c)]
        if cells and not is_own_sheet(backend, actual):
            raise InputError(f"sheet {actual} holds data that xlcalib did not write, and xlcalib writes its results to a "
                             f"sheet of that name: rename sheet {actual} (results never overwrite input sheets)",
                             {"sheet": actual})


def write_sheets(backend, specs) -> dict[str, int]:
    """(Re)write result sheets after checking that none of them is an input sheet; returns their header rows.

    Every name is checked before the first sheet is written, so a refused run leaves the workbook as it was.
    """
    check_own_sheets(backend, [spec.name for spec in specs])
    tops = {}
    with step("writing the result sheets", total=len(specs)):
        for spec in specs:
            tops[spec.name] = backend.write_sheet(spec)
            advance()
    return tops


def sheet_grid(backend, sheet: str, first_data_column: int = 2):
    """A sheet whose first row names the columns and first column names the items -> (item names, values block,
    sheet row of the header); trailing blank rows are dropped."""
    block = backend.read_block(sheet)
    rows, first_row = [list(r) for r in block.rows], block.first_row
    while rows and all(is_blank(c) for c in rows[-1]):
        rows.pop()
    if len(rows) < 2:
        raise InputError(f"sheet {sheet} has no data rows")
    body = rows[1:]
    return [r[0] for r in body], [r[first_data_column - 1:] for r in body], first_row


def first_column_list(backend, sheet: str) -> list[str]:
    """The names listed down column A below its header (a Categories or Classes sheet), blanks skipped."""
    rows = backend.read_block(sheet).rows
    return [str(r[0]).strip() for r in rows[1:] if r and not is_blank(r[0])]


def check_output_differs(path: Path, out: Path) -> None:
    """The input file is never modified: an output that is the input itself is refused."""
    if out.resolve() == path.resolve():
        raise InputError("the output file must differ from the input workbook (the input is never modified)")


def report_file(run, path, out=None) -> Path:
    """Run an exercise's runner on a copy of the workbook *path*; save it to *out* (default <stem>_report.xlsx).

    The copy keeps the input's formulas (progress counters ...); the runner reads the cached values through the
    fast reader.  Returns the path written.
    """
    from ..workbook import OpenpyxlBook, open_workbook, save_atomically
    from ..workbook.reader import FastBook

    path = Path(path)
    out = Path(out) if out else path.with_name(f"{path.stem}_report.xlsx")
    check_output_differs(path, out)
    if out.suffix.lower() != ".xlsx":
        raise InputError(f"write the report to an .xlsx file, not {out.name}")
    book = open_workbook(path, data_only=False)
    values = FastBook(path)
    try:
        run(OpenpyxlBook(book, values_book=values))
    finally:
        values.close()
    save_atomically(book, out)
    return out
