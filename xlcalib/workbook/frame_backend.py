"""A read-only backend over tables already in memory (pandas frames), one sheet per table.

Why: an imported review export is a long table in memory; seen as a workbook whose Evaluations sheet is
that table, it goes through the same runner, the same checks and the same result sheets as a workbook file
(``xlcalib calibrate EXPORT``).  Row *k* of a frame is sheet row *k + 2* (the header is row 1), as a
spreadsheet would show the table; the caller translates those rows back to the export's own cells.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..inputs import RawTable
from .base import Block, WorkbookBackend


class FrameBook(WorkbookBackend):
    """Named frames seen as sheets of a workbook; reading only (results go to a new workbook)."""

    def __init__(self, sheets: dict[str, pd.DataFrame]):
        self.sheets, self.book = dict(sheets), None

    def sheet_names(self) -> list[str]:
        return list(self.sheets)

    def read_table(self, sheet: str) -> RawTable:
        """The frame as a :class:`~xlcalib.inputs.RawTable`: numbers as float arrays, everything else as cells."""
        name = self.find_sheet(sheet)
        frame = self.sheets[name]
        columns = [frame[c].to_numpy(dtype=float) if frame[c].dtype.kind in "fiu" else frame[c].to_numpy(dtype=object)
                   for c in frame.columns]
        return RawTable([str(c) for c in frame.columns], columns, np.arange(2, len(frame) + 2, dtype=np.intp),
                        list(range(1, frame.shape[1] + 1)), 1, name)

    def read_block(self, sheet: str) -> Block:
        name = self.find_sheet(sheet)
        frame = self.sheets[name]
        body = frame.astype(object).where(frame.notna(), None).to_numpy().tolist()
        return Block([[str(c) for c in frame.columns]] + body, 1, 1, (), name)

    def _read_only(self, *args, **kwargs):
        raise NotImplementedError("FrameBook is read-only: write results to a new workbook")

    write_frame = delete_sheet = add_chart = style_cells = _read_only
