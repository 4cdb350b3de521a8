"""A table with a header row, as the checks read it: cells column by column, each with its sheet row and column.

:class:`RawTable` is what every reader hands the evaluations check (a workbook block through
:func:`table_from_block`, the CSV reader's own columns, a DataFrame's); :func:`find_columns` finds the
evaluation columns among its headers by the spellings in :data:`EVALUATION_COLUMNS`, compared as
:func:`~xlcalib.cells.header_key` compares every header.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..cells import header_key, is_blank
from ..errors import InputError

#: Accepted header spellings for the evaluations table (as :func:`~xlcalib.cells.header_key` gives them).
EVALUATION_COLUMNS: dict[str, tuple[str, ...]] = {
    "assessor": ("assessor", "assessors", "rater", "reviewer", "marker"),
    "object": ("object", "objects", "item", "proposal", "script", "candidate"),
    "score": ("score", "scores", "mark", "grade", "rating"),
    "sd": ("sd", "sigma", "standard deviation", "uncertainty"),
    "confidence": ("confidence", "weight"),
    "level": ("level", "confidence level", "certainty"),
}
UNCERTAINTY_KINDS = ("sd", "confidence", "level")


def find_columns(header: Sequence[Any], wanted: dict[str, tuple[str, ...]], where: str) -> dict[str, int]:
    """Map canonical column names to positions in a header row (compared by their :func:`header_key`, aliases
    allowed).

    Raises when one canonical name matches two columns (ambiguous input).
    """
    found: dict[str, int] = {}
    for position, cell in enumerate(header):
        text = header_key(cell)
        for canonical, aliases in wanted.items():
            if text in aliases:
                if canonical in found:
                    raise InputError(
                        f"{where}: two columns could be '{canonical}' (columns {found[canonical] + 1} and {position + 1})"
                    )
                found[canonical] = position
    return found


def names_evaluation_columns(header: Sequence[Any]) -> bool:
    """True for a row that can be an evaluations table's header: it names two of Assessor, Object and Score (a
    missing or misspelt third is then named by the checks), or names one of them twice (the checks say which)."""
    try:
        found = find_columns(header, EVALUATION_COLUMNS, "")
    except InputError:
        return True
    return len({"assessor", "object", "score"} & found.keys()) >= 2


@dataclass
class RawTable:
    """Cells of a table with a header row, column by column (``columns[j]`` below header cell ``header[j]``).

    ``row_numbers``: sheet row of each body row; ``column_numbers``: sheet
    column (1 = A) of each header position; ``header_row``: the header's row.
    A column is a sequence of raw cells, or an already-parsed float array (a
    CSV number column).
    """

    header: list
    columns: Any
    row_numbers: Any
    column_numbers: list[int]
    header_row: int
    sheet: str
    hidden_rows: tuple = ()
    #: merged cell ranges ("A2:A3") of the sheet: a blank cell inside one is explained
    merged: tuple = ()
    #: what the reader did that the checks report with their own warnings (a CSV file's decimal commas read)
    notes: tuple = ()


#: Rows above a table's header that may hold a title, a date or blank rows (a sheet's rows, a CSV file's lines).
TITLE_ROWS = 20


def header_below_titles(rows: Iterable[Sequence[Any]], is_header=None) -> int | None:
    """Where a table's header is among *rows* (each a row's cells), as a sheet or a file laid out with a heading
    has it: rows of at most one filled cell -- a title, a date, blank rows -- lie above it, up to
    :data:`TITLE_ROWS` of them; the first row of two or more filled cells is the header when *is_header* (its
    cells) accepts it or there is no *is_header*.  None when it does not, or no such row comes: the caller's
    first row is then read as the header, and the checks say what it lacks."""
    for i, row in enumerate(itertools.islice(rows, TITLE_ROWS + 1)):
        if sum(1 for c in row if not is_blank(c)) < 2:
            continue  # a title or a blank row
        return i if is_header is None or is_header(list(row)) else None
    return None


def table_from_block(block, sheet: str | None = None) -> RawTable:
    """A :class:`~xlcalib.workbook.Block` (rows of raw cells) as a :class:`RawTable`; leading blank rows and a
    title above the header skipped."""
    rows = block.rows
    sheet = sheet or block.sheet or "Evaluations"
    h = 0
    while h < len(rows) and all(is_blank(c) for c in rows[h]):
        h += 1
    if h == len(rows):
        raise InputError(f"sheet {sheet} is empty; expected a header row with Assessor, Object, Score and "
                         "SD/Confidence/Level", {"sheet": sheet})
    h += header_below_titles(itertools.islice(rows, h, None), names_evaluation_columns) or 0
    header, body = list(rows[h]), rows[h + 1:]

    class _Columns:
        def __getitem__(self, j):
            try:
                return [r[j] for r in body]
            except IndexError:
                return [r[j] if j < len(r) else None for r in body]

    row_number = getattr(block, "row_number", None)
    if getattr(block, "row_numbers", ()):
        numbers = np.asarray(block.row_numbers[h + 1:], dtype=np.intp)
    else:
        numbers = np.arange(block.first_row + h + 1, block.first_row + len(rows), dtype=np.intp)
    cols = [block.column_number(j) if row_number else block.first_column + j for j in range(len(header))]
    return RawTable(header, _Columns(), numbers, cols, int(block.row_number(h) if row_number else block.first_row + h),
                    sheet, tuple(getattr(block, "hidden_rows", ())), tuple(getattr(block, "merged", ()) or ()))
