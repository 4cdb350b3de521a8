"""The ordinal agreement template: two raters' categories per object, the category order (with optional values)
and the Settings sheet (agreement weights)."""
from __future__ import annotations

from .common import agreement_settings, input_cell, instructions_sheet, list_sheet, list_validation


def ordinal_agreement(objects: int = 60, categories=("F1", "F2", "F3", "F4")):
    """Two raters' ordinal categories per object plus the category order."""
    from openpyxl import Workbook

    wb = Workbook()
    instructions_sheet(wb, "Ordinal agreement between two raters (xlcalib, Svensson's method)", [
        "List the categories in order on the Categories sheet (lowest first; unused categories still count). "
        "Optionally give each a number in column B: the agreement weights then use the numbers instead of the order.",
        "Enter each object's category from rater 1 and rater 2 on the Ratings sheet. Objects missing either rating "
        "are left out and counted.",
        "Results (Run main, or: xlcalib report ordinal THIS_FILE.xlsx): sheet Svensson (percentage agreement, relative "
        "position RP, relative concentration RC - systematic differences - and relative rank variance RV - random "
        "differences - with jackknife standard errors, kappa and the largest kappa the marginals permit), MeanRanks, "
        "and ROC with a chart.",
        "Sheet Agreement: chance-corrected agreement (Cohen's kappa, Scott's pi, Gwet's AC, Krippendorff's alpha ...) "
        "with intervals, the one to quote first with its reason; the weights are on the Settings sheet.",
    ])
    ws = wb.active
    ws["A9"], ws["B9"] = "Pairs entered", '=SUMPRODUCT((Ratings!B2:B100000<>"")*(Ratings!C2:C100000<>""))'
    cats = list_sheet(wb, "Categories", "Category (lowest first)", categories, 26)
    cats["B1"] = "Value (optional, for the weights)"
    for r in range(2, len(categories) + 2):
        input_cell(cats.cell(row=r, column=2))
    cats.column_dimensions["B"].width = 32
    sheet = wb.create_sheet("Ratings")
    sheet.append(["Object", "Rater 1", "Rater 2"])
    for r in range(2, objects + 2):
        input_cell(sheet.cell(row=r, column=1), f"Object {r - 1}")
        input_cell(sheet.cell(row=r, column=2))
        input_cell(sheet.cell(row=r, column=3))
    list_validation(sheet, f"Categories!$A$2:$A${len(categories) + 1}", f"B2:C{objects + 1}", "Pick a category from the Categories sheet")
    sheet.freeze_panes = "A2"
    agreement_settings(wb)
    return wb
