"""A Lottery sheet read back: the public record of a lottery, as :mod:`xlcalib.presentation.lottery` wrote it, into
the inputs :func:`~xlcalib.calibration.decide.lottery.verify_lottery` re-runs the draw from.

Why a reader of its own: ``xlcalib verify-draw RESULT.xlsx`` and ``=CALIB_VERIFY_DRAW(Lottery!A1:G500)`` check a
draw from that sheet alone -- possibly a copy that has passed through other hands and other spreadsheet programs
-- so every cell is read the way a person would have typed it, and a cell that cannot be read is named by its
row, as the verdict's differences are.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..calibration.decide.lottery import (
    LOTTERY_COLUMNS,
    UNITS,
    RECORD_ROWS,
    verify_lottery,
    verify_words,
)
from ..cells import header_key, is_blank, parse_label, parse_number
from ..errors import InputError

__all__ = ["LotteryRecord", "read_lottery", "verify_lottery_cells"]

#: How far a chance or a stretch end may sit from a whole number of ten-thousandths, in ten-thousandths (a spreadsheet
#: keeps 15 or more significant digits, so a number written as 0.1234 reads back within about 1e-12 of it).
UNIT_TOLERANCE = 1e-3


@dataclass(frozen=True)
class LotteryRecord:
    """A lottery's record as read: the public inputs, what the sheet states, and one row per object."""

    seed: object
    places: int
    method: str
    digest: str | None
    start: int | None
    rows: pd.DataFrame


def _units(value, where: str, allow_blank: bool) -> int | None:
    """A share (0.25) as whole ten-thousandths (2500); a value between two ten-thousandths is refused by its row."""
    if is_blank(value):
        if allow_blank:
            return None
        raise InputError(f"{where} is blank")
    x = parse_number(value, where) * UNITS
    whole = round(x)
    if abs(x - whole) > UNIT_TOLERANCE:
        raise InputError(f"{where} is {value!r}, not a whole number of ten-thousandths: a chance is drawn with to the "
                         "ten-thousandth")
    return int(whole)


def _record_values(rows: list[list], first_row: int, place: str) -> tuple[dict, int]:
    """The record's labelled rows above the table, and the index of the table's header row."""
    labels = {header_key(label): key for label, key in RECORD_ROWS}
    found: dict = {}
    for i, row in enumerate(rows):
        cells = [c for c in row]
        keys = [header_key(c) if isinstance(c, str) else "" for c in cells]
        if LOTTERY_COLUMNS[0] in keys and LOTTERY_COLUMNS[1] in keys:
            missing = [label for label, key in RECORD_ROWS if key not in found and key in ("seed", "places", "method")]
            if missing:
                raise InputError(f"{place}: the rows {', '.join(missing)} above the table are missing: this is not "
                                 "a Lottery sheet xlcalib wrote")
            return found, i
        if cells and keys[0] in labels and len(cells) > 1:
            found[labels[keys[0]]] = (cells[1], f"{place}row {first_row + i} ({cells[0]})")
    raise InputError(f"{place}: no table headed {', '.join(LOTTERY_COLUMNS)}: this is not a Lottery sheet xlcalib "
                     "wrote")


def read_lottery(rows: list[list], first_row: int = 1, place: str = "sheet Lottery") -> LotteryRecord:
    """The record in *rows* (the sheet's cells from row *first_row*); *place* names the sheet or range in messages.
    The table runs from its header row down to the first blank row (the recipe's lines follow it)."""
    prefix = f"{place}, "
    found, header = _record_values(rows, first_row, place)
    seed = found["seed"][0]
    places = parse_number(found["places"][0], found["places"][1])
    if not float(places).is_integer() or places < 1:
        raise InputError(f"{found['places'][1]} must be a whole number of places, not {found['places'][0]!r}")
    method = parse_label(found["method"][0], found["method"][1])
    digest = found.get("digest", (None, ""))[0]
    start = _units(*found["start"], allow_blank=True) if "start" in found else None
    keys = [header_key(c) if isinstance(c, str) else "" for c in rows[header]]
    at = {name: keys.index(name) for name in LOTTERY_COLUMNS if name in keys}
    missing = [name for name in LOTTERY_COLUMNS if name not in at]
    if missing:
        raise InputError(f"{place}, row {first_row + header}: the table has no column {', '.join(missing)}")
    table = []
    for i in range(header + 1, len(rows)):
        row = list(rows[i]) + [None] * (len(keys) - len(rows[i]))
        if all(is_blank(c) for c in row):
            break
        where = f"{prefix}row {first_row + i}"
        cell = lambda name: row[at[name]]  # noqa: E731
        table.append({
            "row": where if place.startswith("sheet") else f"row {i + 1} of the range",
            "object": parse_label(cell("object"), f"{where} (object)"),
            "chance": _units(cell("chance"), f"{where} (chance)", allow_blank=False),
            "uniform": parse_number(cell("uniform number"), f"{where} (uniform number)"),
            "order": None if is_blank(cell("draw order")) else parse_number(cell("draw order"), f"{where} (draw order)"),
            "from": _units(cell("stretch from"), f"{where} (stretch from)", allow_blank=True),
            "to": _units(cell("stretch to"), f"{where} (stretch to)", allow_blank=True),
            "outcome": "" if is_blank(cell("outcome")) else str(cell("outcome")).strip()})
    if not table:
        raise InputError(f"{place}: the lottery table has no rows")
    frame = pd.DataFrame(table)
    frame["order"] = frame["order"].astype(object).where(frame["order"].notna(), None)
    return LotteryRecord(seed, int(places), method, None if is_blank(digest) else str(digest), start, frame)


def verify_lottery_cells(rows: list[list], first_row: int = 1, place: str = "sheet Lottery") -> tuple[bool, str]:
    """(matches, the verdict in one line) for a Lottery sheet's cells: read, re-run from its public inputs,
    compared (:func:`~xlcalib.calibration.decide.lottery.verify_lottery`)."""
    record = read_lottery(rows, first_row, place)
    ok, problems = verify_lottery(record.seed, record.places, record.method, record.digest, record.start, record.rows)
    return ok, verify_words(ok, problems, record.seed, record.places, len(record.rows))
