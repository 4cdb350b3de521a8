"""``xlcalib verify-draw RESULT.xlsx``: re-run a result workbook's lottery from its Lottery sheet alone and say
whether it matches.

Why a job of its own: the people who check a draw -- applicants, an auditor -- have the result file, not the
panel's scores or the software's settings; the sheet carries every public input (the seed, the places, the
names and chances), so the draw is recomputed from it (:func:`xlcalib.inputs.verify_lottery_cells`) and each
difference is named by its row.  The file is read through the bounded reader and never modified.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..inputs import verify_lottery_cells

__all__ = ["verify_draw_file"]


def verify_draw_file(path, sheet: str = "Lottery") -> tuple[bool, str]:
    """(matches, the verdict in one line) for the Lottery sheet of a result workbook (.xlsx, .xlsm, .ods)."""
    from ..workbook.reader import FastBook

    path = Path(path)
    if path.suffix.lower() not in (".xlsx", ".xlsm", ".ods"):
        raise InputError(f"{path.name}: verify-draw reads a result workbook (.xlsx, .xlsm or .ods) with a Lottery sheet")
    book = FastBook(path)
    try:
        name = book.find_sheet(sheet, required=False)
        if name is None:
            raise InputError(f"{path.name} has no sheet {sheet}: it holds no lottery (calibrate with --fund K --lottery)")
        block = book.read_block(name)
    finally:
        if hasattr(book, "close"):
            book.close()
    pad = [None] * (block.first_column - 1)
    return verify_lottery_cells([pad + list(r) for r in block.rows], block.first_row, f"sheet {name}")
