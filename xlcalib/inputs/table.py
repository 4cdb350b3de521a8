"""A table with a header row, as the checks read it: cells column by column, each with its sheet row and column.

:class:`RawTable` is what every reader hands the evaluations check (a workbook block through
:func:`table_from_block`, the CSV reader's own columns, a DataFrame's); :func:`find_columns` finds the
evaluation columns among its headers by the spellings in :data:`EVALUATION_COLUMNS`, compared as
:func:`~xlcalib.cells.header_key` compares every header.
"""
from __future__ import annotations

from collections.abc import Sequence
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


#: Rows above an evaluations table's header that may hold a title, a date or blank rows.
TITLE_ROWS = 20


def _below_titles(rows, h: int) -> int:
    """The header's row from the first non-blank row *h*: *h* itself, or -- when it and the rows under it hold at
    most one filled cell each (a title, a date) -- the first row within :data:`TITLE_ROWS` below that names the
    evaluation columns (:func:`names_evaluation_columns`), as a sheet laid out with a heading has it."""
    for i in range(h, min(len(rows), h + TITLE_ROWS + 1)):
        filled = sum(1 for c in rows[i] if not is_blank(c))
        if filled >= 2:
            return i if names_evaluation_columns(list(rows[i])) else h
    return h


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
    h = _below_titles(rows, h)
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
