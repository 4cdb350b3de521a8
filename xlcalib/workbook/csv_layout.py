"""Where a CSV file's table starts, and what separates its fields.

Why: a CSV file is saved from a sheet as people lay it out.  Excel writes a title in A1 as a line of its own
(``Panel scores 2026,,,`` -- padded to the table's width), a blank line under it, and sometimes a first line
``sep=;`` that tells Excel itself which delimiter to use.  Read from the first line, such a file's title became
the header ("missing columns Assessor, Object, Score (found: Panel scores 2026)") or the C parser stopped on the
header's extra fields.  Every CSV reader (the evaluations reader, the import of exports and grids, the test that
tells them apart) takes the layout from here, so they agree on where the header is.
"""
from __future__ import annotations

import csv
import re
from collections.abc import Callable, Sequence

from ..inputs.table import TITLE_ROWS, header_below_titles

__all__ = ["DELIMITERS", "csv_layout", "split_line", "not_utf8_message"]

#: The delimiters a CSV file may use, in the order a tie between them is settled.
DELIMITERS = (",", ";", "\t")
_SEP_LINE = re.compile(r"^sep=(.)\s*$", re.IGNORECASE)


def split_line(line: str, delimiter: str) -> list[str]:
    """One line's fields (quotes honoured); a line the csv module cannot split is one field."""
    try:
        return next(csv.reader([line], delimiter=delimiter), [])
    except csv.Error:
        return [line]


def _most_used(line: str) -> str:
    return max(DELIMITERS, key=line.count)


def _table_delimiter(lines: Sequence[str]) -> str:
    """The delimiter on most of the first lines, and of those the one each line uses most often (the median): a
    table's rows all hold it, several times; a title above them has none of it ("Scores, round 2" above rows
    separated by ';'), and a decimal comma comes once in a row, some rows holding none."""
    best, chosen = (0, 0.0), ","
    for delimiter in DELIMITERS:
        counts = sorted(n for n in (line.count(delimiter) for line in lines) if n)
        if counts:
            score = (len(counts), float(counts[len(counts) // 2]))
            if score > best:
                best, chosen = score, delimiter
    return chosen


def csv_layout(head: str, is_header: Callable[[Sequence[str]], bool] | None = None) -> tuple[str, int]:
    """(delimiter, lines above the header) of a CSV file whose first lines are *head* (text, any line ends).

    A first line ``sep=;`` (Excel's own hint) names the delimiter and lies above the header; otherwise the delimiter
    is the one the first lines use alike (:func:`_table_delimiter`).  Lines holding at most one field -- a title,
    a date, blank lines -- lie above the header: the first line of two or more filled fields is the header, when
    *is_header* (its fields) accepts it or there is no *is_header*.  When it does not, the header is the first line
    after any ``sep=`` line, as a file without titles has it (and the checks say what that line lacks).
    """
    lines = re.split(r"\r\n|\r|\n", head)[:TITLE_ROWS + 2]
    named, start = None, 0
    if lines:
        match = _SEP_LINE.match(lines[0].lstrip("\ufeff"))
        if match is not None:
            named, start = match.group(1), 1
    delimiter = named or _table_delimiter(lines[start:start + TITLE_ROWS + 1])
    found = header_below_titles((split_line(line, delimiter) for line in lines[start:]), is_header)
    return delimiter, start + (found or 0)


def not_utf8_message(data: bytes, name: str) -> str:
    """What to say of a CSV file that is not UTF-8: the line and the text around the first byte that is not, read
    as the Windows encoding shows it ("Müller"), and how to save it again.

    Why: Excel's plain "CSV (Comma delimited)" is written in the Windows code page, so names with accents are
    the usual cause, and "byte 36" told a secretary neither where nor what.  The file is not read in a guessed
    encoding: Central European names would come out wrong without a sign.
    """
    try:
        data.decode("utf-8")
        return f"{name} is not UTF-8 text; save it again as CSV UTF-8"  # pragma: no cover - called on a failure
    except UnicodeDecodeError as exc:
        at = exc.start
    line = data.count(b"\n", 0, at) + 1
    start = max(data.rfind(b"\n", 0, at) + 1, at - 24)
    end = data.find(b"\n", at)
    end = min(len(data) if end < 0 else end, at + 24)
    near = data[start:end].decode("cp1252", "replace").strip()
    return (f"{name}, line {line} is not UTF-8 text (near '{near}'): saved in the Windows encoding? Save it again "
            "as CSV UTF-8 (in Excel: Save As, 'CSV UTF-8 (Comma delimited)')")
