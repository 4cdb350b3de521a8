"""The sheets of an imported review export: the Import report (every row or cell not imported, with its reason),
the Import sheet (the column roles, kept for the next import), the imported Evaluations, the Summary's lines on
how the export was read."""
from __future__ import annotations

import pandas as pd

from ..workbook.base import Column, SheetSpec
from .common import COUNT

_REPORT_COLUMNS = {
    "sheet": Column("sheet", None, "the export's file, or its sheet (a CMT track, a revision sheet)"),
    "row": Column("row", COUNT, "the row of the export as a spreadsheet shows it (its header is row 1)"),
    "cell": Column("cell", None, "the cell of the score (or of the review's line) that was not imported"),
    "assessor": Column("assessor", None, "the reviewer as the export names them"),
    "object": Column("object", None, "the paper or proposal"),
    "reason": Column("reason", None, "why it was not imported", max_width=70),
}


def import_preamble(preamble, imported) -> list:
    """The run's lines, then what was read and every note of the import (scale declared or inferred, letters
    turned so that higher = better, reviewers who cannot be linked ...), one line each."""
    first = imported.summary().splitlines()[0]
    return [*preamble, [f"read: {first}"], *[[f"note: {note}"] for note in imported.notes]]


def import_report_sheet(imported, preamble) -> SheetSpec:
    """Import report: every row or cell of the export that was not imported, with its reason (never dropped
    silently), below the import's notes."""
    report = imported.report
    if len(report):
        frame = report[["sheet", "row", "cell", "assessor", "object", "reason"]].reset_index(drop=True)
    else:
        frame = pd.DataFrame({"sheet": [""], "row": [None], "cell": [""], "assessor": [""], "object": [""],
                              "reason": ["nothing left out: every score of the export was imported"]})
    return SheetSpec("Import report", frame, import_preamble(preamble, imported), _REPORT_COLUMNS)


def import_sheet(presets: pd.DataFrame, preamble) -> SheetSpec:
    """Import: the roles of the export's columns, one column per review system (edit a cell to change a role;
    a blank column is detected afresh), kept for the next import."""
    cols = {"Role": Column("Role", None, "what the column holds; 'menu' is where the system makes its export")}
    for name in presets.columns[1:]:
        cols[name] = Column(name, None, f"the {name} export's column for each role (header text; several "
                                        "separated by ' | ', score columns in time order)", max_width=45)
    return SheetSpec("Import", presets, preamble, cols, landscape=True)


def imported_evaluations_sheet(frame: pd.DataFrame) -> SheetSpec:
    """Evaluations as imported: the long table with its header in row 1, ready for ``xlcalib calibrate``."""
    cols = {"Score": Column("Score", "General", "the score as a number (letters read on the scale, higher = better)")}
    return SheetSpec("Evaluations", frame, [], cols, freeze_columns=2)


def import_summary_rows(imported) -> list[tuple[str, str]]:
    """Summary lines on how an export was read: what and how much, the scale (and letters turned so that
    higher = better), the confidences, the reviewers' identities and every other note."""
    ev = imported.evaluations
    rows = [("Imported from", f"{imported.name or 'the export'} ({imported.source} export): {len(ev):,} "
                              f"evaluations of {ev['object'].nunique():,} objects by {ev['assessor'].nunique():,} "
                              f"assessors; {imported.left_out()}, each listed with its reason on the Import "
                              "report sheet.")]
    topics = (("score scale", "Score scale"), ("score fields", "Score fields"), ("confidence", "Confidences"),
              ("no confidence", "Confidences"), ("identity map", "Reviewer identities"),
              ("reviewer ids", "Reviewer identities"))
    for note in imported.notes:
        if "not imported, listed in the import report" in note:
            continue
        topic = next((t for word, t in topics if note.lower().startswith(word)), "Import note")
        rows.append((topic, note[0].upper() + note[1:] + ("" if note.endswith(".") else ".")))
    return rows


def with_import_rows(summary: SheetSpec, imported) -> SheetSpec:
    """The calibration Summary with the import's lines after its first line ("What was calibrated")."""
    extra = pd.DataFrame(import_summary_rows(imported), columns=list(summary.frame.columns))
    summary.frame = pd.concat([summary.frame.iloc[:1], extra, summary.frame.iloc[1:]], ignore_index=True)
    return summary
