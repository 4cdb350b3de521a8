"""The ordinal agreement template: two raters' categories per object, the category order (with optional values)
and the Settings sheet (agreement weights)."""
from __future__ import annotations

from .common import agreement_settings, input_cell, instructions_sheet, list_table, list_validation


def ordinal_agreement(objects: int = 60, categories=("F1", "F2", "F3", "F4")):
    """Two raters' ordinal categories per object plus the category order."""
    from openpyxl import Workbook

    wb = Workbook()
    instructions_sheet(wb, "Ordinal agreement between two raters (xlcalib, Svensson's method)", [
        "List the categories in order on the Categories sheet (lowest first; unused categories still count); in "
        "Excel a category typed in the first empty row below the list joins it and the drop-downs on Ratings (the "
        "list is an Excel Table). Optionally give "
        "each a number in column B: the agreement weights then use the numbers instead of the order.",
        "Enter each object's category from rater 1 and rater 2 on the Ratings sheet; write the raters' names over "
        "their columns (B1, C1): the results name them so. Objects missing either rating are left out and counted.",
        "Results (Run main, or: xlcalib report ordinal THIS_FILE.xlsx): sheet Svensson (percentage agreement, relative "
        "position RP, relative concentration RC - systematic differences - and relative rank variance RV - random "
        "differences - each with its jackknife interval and a verdict in words naming the raters by the Ratings "
        "headers; Cohen's kappa unweighted, linear- and quadratic-weighted; the largest kappa the marginals permit), "
        "MeanRanks, ROC and the ROC chart on a page of its own.",
        "Sheet Agreement: chance-corrected agreement (Cohen's kappa, Scott's pi, Gwet's AC, Krippendorff's alpha ...) "
        "with intervals, the one to quote first with its reason; the weights are on the Settings sheet.",
    ])
    ws = wb.active
    ws["A9"], ws["B9"] = "Pairs entered", '=SUMPRODUCT((Ratings!B2:B100000<>"")*(Ratings!C2:C100000<>""))'
    ws["A10"], ws["B10"] = "Categories listed", "=COUNTA(CategoryNames)"
    # a table: a category typed in the first empty row below the list joins it and the Ratings drop-downs
    list_table(wb, "Categories", ["Category (lowest first)", "Value (optional, for the weights)"], categories, [26, 32],
               "CategoryList", "CategoryNames")
    sheet = wb.create_sheet("Ratings")
    sheet.append(["Object", "Rater 1", "Rater 2"])
    for r in range(2, objects + 2):
        input_cell(sheet.cell(row=r, column=1), f"Object {r - 1}")
        input_cell(sheet.cell(row=r, column=2))
        input_cell(sheet.cell(row=r, column=3))
    list_validation(sheet, "CategoryNames", f"B2:C{objects + 1}", "Pick a category from the Categories sheet")
    sheet.freeze_panes = "A2"
    agreement_settings(wb)
    return wb
