"""Input problems found in one pass: each named by sheet and cell, the errors stopping the run, the warnings
listed on the result's Checks sheet (:func:`checks_frame`); :class:`PanelInput` is a checked panel with them."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputProblems


@dataclass(frozen=True)
class Problem:
    """One input problem, found with all the others in a single pass.

    ``severity``: ``"error"`` (the run cannot give a trustworthy result; it
    stops, listing every error) or ``"warning"`` (the run goes on; listed on
    the result's Checks sheet).  ``sheet``/``cell``/``row``/``column`` locate
    it (``cell`` like ``"C12"``, empty when the problem is not one cell;
    ``row`` is the sheet row number); ``message`` says what and where in the
    panel secretary's words, e.g. ``"sheet Evaluations, row 12, column Score
    (C12) is 75, outside the score scale 1 to 9 ..."``.
    """

    severity: str
    sheet: str
    cell: str
    row: int | None
    column: str
    message: str

    def __str__(self) -> str:
        return self.message


@dataclass
class PanelInput:
    """An evaluations sheet read and checked in one pass (see :func:`check_evaluations`, :func:`read_panel`).

    ``frame``: the complete evaluations (assessor, object, score and the
    uncertainty column ``kind``), one row per scored row of the sheet;
    ``sheet_rows``: the sheet row of each frame row, an integer array (to
    point core errors at cells; a list of a million Python numbers would cost
    a tenth of the reading); ``pending``: allocated rows (assessor and object given) without a
    score yet — columns assessor, object, sheet_row — left out of the fit;
    ``problems``: every error and warning; ``settings``: what the checks used
    (``scale`` (min, max) or None, ``assessors``/``objects`` list sizes or
    None, ``levels``); ``hidden_rows``: sheet rows of evaluations hidden in
    the sheet (they count).
    """

    frame: Any
    kind: str
    sheet_rows: Any
    pending: Any
    problems: list[Problem]
    settings: dict = field(default_factory=dict)
    sheet: str = "Evaluations"
    hidden_rows: list[int] = field(default_factory=list)
    #: the table the panel was read from (its other columns, e.g. a Group column, are read from it on request)
    table: Any = None

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity != "error"]

    def raise_errors(self) -> None:
        """Raise :class:`~xlcalib.errors.InputProblems` carrying every problem when any is an error."""
        if self.errors:
            raise InputProblems(self.problems, {"sheet": self.sheet})


def checks_frame(problems: Sequence[Problem]):
    """Problems as a tidy table for the result workbook's Checks sheet: columns severity, sheet, cell, problem.

    Errors first, then warnings, each in sheet-row order; an empty input gives
    an empty table with the same columns.

    >>> checks_frame([Problem("warning", "Evaluations", "A17", 17, "Assessor", "pending")]).columns.tolist()
    ['severity', 'sheet', 'cell', 'problem']
    """
    import pandas as pd

    ordered = sorted(problems, key=lambda p: (p.severity != "error", p.sheet, p.row if p.row is not None else -1))
    return pd.DataFrame({"severity": [p.severity for p in ordered], "sheet": [p.sheet for p in ordered],
                         "cell": [p.cell for p in ordered], "problem": [p.message for p in ordered]},
                        columns=["severity", "sheet", "cell", "problem"])
