"""The panel template's Import sheet: which review export to import, and the roles of its columns saved per
review system (one column each: HotCRP, CMT, EasyChair, OpenReview, a grid).

Run main while the Import sheet is shown (:func:`xlcalib.exercises.import_export`) reads the export named
here, fills Evaluations, Assessors, Objects and the score scale on Settings, writes the Import report sheet,
and saves the roles it used in the system's column below; the user may edit them there, and the next import
of that system's export uses them (a cleared column is detected afresh).
"""
from __future__ import annotations

from ..imports import PRESETS, SOURCES, ColumnMapping
from ..imports.mapping import COLUMN_READINGS
from .common import input_cell, list_validation, styles

#: The settings rows (column A, matched in any case) and what each holds; the first five are typed by the user.
IMPORT_SETTINGS = {
    "Export file": "the export file: its full path, or its name when it sits beside this workbook (HotCRP CSV, CMT "
                   ".xls/.xml or .xlsx, EasyChair review.csv or its zip, OpenReview JSON, a grid .csv/.xlsx)",
    "From": "hotcrp, cmt, easychair, openreview or grid; blank: detected from the file",
    "Round": "import one round only (a round name, a revision sheet, or pre/post); blank: each review's latest score",
    "Scale": "the score scale, which wins over the one inferred: 1-5, -3..3, A, AB, B, BC, C, D (best first) or "
             "A=6, AB=5, ...; blank: inferred and shown on the Import report",
    "Identity map": "for anonymous reviewer ids (OpenReview): a CSV file with two columns, anonymous id and person",
    "Grid columns": "a grid's score columns: people (one assessor each) or review slots (R1, R2 ... each row's "
                    "reviews from the left, by reviewers of that object alone); blank: detected and shown on the "
                    "Import report",
    "Evaluations imported": "written by the import: the rows it wrote on Evaluations (a new import replaces them; "
                            "rows typed by hand are never overwritten)",
    "Last import": "written by the import: when, what and how much",
}
#: Settings the user types (the others are written by the import).
TYPED_SETTINGS = ("Export file", "From", "Round", "Scale", "Identity map", "Grid columns")
#: The rows of saved column roles below the "Role" header, in the order a ColumnMapping lists them.
PRESET_ROLES = tuple(row[0] for row in ColumnMapping().to_rows()[2:])


def import_sheet(wb):
    """Add the Import sheet: settings (rows 2-9), then the roles table (a 'menu' row saying where each system
    makes its export, then one row per role, one column per system, blank until an import fills it)."""
    st = styles()
    ws = wb.create_sheet("Import")
    ws.append(["Setting", "Value", "Meaning"])
    for r, (name, meaning) in enumerate(IMPORT_SETTINGS.items(), start=2):
        ws.cell(row=r, column=1, value=name)
        if name in TYPED_SETTINGS:
            input_cell(ws.cell(row=r, column=2))
        ws.cell(row=r, column=3, value=meaning)  # reads across the empty cells beside it
    list_validation(ws, '"' + ",".join(SOURCES) + '"', "B3", "Choose " + ", ".join(SOURCES) + " (or leave blank)")
    grid_row = 2 + list(IMPORT_SETTINGS).index("Grid columns")
    list_validation(ws, '"' + ",".join(COLUMN_READINGS) + '"', f"B{grid_row}",
                    "Choose " + " or ".join(COLUMN_READINGS) + " (or leave blank to detect)")
    top = len(IMPORT_SETTINGS) + 3
    ws.cell(row=top, column=1, value="Role")
    for j, source in enumerate(SOURCES, start=2):
        ws.cell(row=top, column=j, value=source)
        ws.cell(row=top + 1, column=j, value=PRESETS[source].menu).alignment = st["wrap"]
        for k in range(len(PRESET_ROLES)):
            input_cell(ws.cell(row=top + 2 + k, column=j))
    ws.cell(row=top + 1, column=1, value="menu")
    for k, role in enumerate(PRESET_ROLES):
        ws.cell(row=top + 2 + k, column=1, value=role)
    for row in (1, top):
        for cell in ws[row]:
            cell.font = st["bold"]
    ws.row_dimensions[top + 1].height = 48
    ws.column_dimensions["A"].width = 22
    for letter in "BCDEF":
        ws.column_dimensions[letter].width = 30
    ws.freeze_panes = "B2"
    return ws
