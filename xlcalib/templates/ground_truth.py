"""The uncertain ground truth template: the class list, per-item annotations (labels or partial rankings),
model predictions and the Settings the report reads."""
from __future__ import annotations

from .common import column_letter, input_cell, instructions_sheet, list_sheet, list_validation


def ground_truth(items: int = 30, annotators: int = 3, classes=("Melanoma", "Nevus", "Hemangioma", "Eczema"), ranks: int = 3):
    """Per-item annotations (labels or partial rankings), the class list, and model predictions."""
    from openpyxl import Workbook

    wb = Workbook()
    instructions_sheet(wb, "Evaluation under uncertain ground truth (xlcalib)", [
        "List every class once on the Classes sheet.",
        "On Annotations, one row per item and one column per annotator; write each annotation as a ranking, best "
        "first: 'Melanoma > Nevus = Hemangioma' ('>' separates levels, '=' ties). A single label is fine too.",
        "On Predictions, each item's predicted classes, best first (one per column).",
        "On Settings, the reliability (trust in the annotators; higher = more certain), Monte Carlo samples and the "
        "Setting: xlcalib, or reference to reproduce the paper's public code (see the README).",
        "Results (Run main, or: xlcalib report ground_truth THIS_FILE.xlsx): sheet Certainty (annotation certainty "
        "per item) and UA metrics (uncertainty-adjusted top-k accuracy with its spread, next to the usual accuracy "
        "against the aggregated labels, which over-states performance when annotators disagree).",
    ])
    ws = wb.active
    ws["A10"], ws["B10"] = "Annotations entered", '=COUNTA(Annotations!B2:Z100000)'
    list_sheet(wb, "Classes", "Class", classes, 30)
    settings = wb.create_sheet("Settings")
    settings.append(["Setting", "Value"])
    for r, (name, value) in enumerate((("Reliability", 3), ("Samples", 1000), ("Seed", 0), ("Top k", min(3, ranks)),
                                        ("Setting", "xlcalib")), start=2):
        settings.cell(row=r, column=1, value=name)
        input_cell(settings.cell(row=r, column=2), value)
    ann = wb.create_sheet("Annotations")
    ann.append(["Item"] + [f"Annotator {j}" for j in range(1, annotators + 1)])
    pred = wb.create_sheet("Predictions")
    pred.append(["Item"] + [f"Rank {j}" for j in range(1, ranks + 1)])
    for r in range(2, items + 2):
        for sheet, width in ((ann, annotators), (pred, ranks)):
            input_cell(sheet.cell(row=r, column=1), f"Item {r - 1}")
            for c in range(2, width + 2):
                input_cell(sheet.cell(row=r, column=c))
    list_validation(pred, f"Classes!$A$2:$A${len(classes) + 1}", f"B2:{column_letter(ranks + 1)}{items + 1}", "Pick a class from the Classes sheet")
    for sheet in (ann, pred):
        sheet.column_dimensions["A"].width = 12
        for c in range(2, 10):
            sheet.column_dimensions[chr(64 + c)].width = 32
    return wb
