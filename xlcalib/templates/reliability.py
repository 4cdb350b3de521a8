"""The reliability template: a Ratings grid (items x raters), an optional second replication and the Settings
sheet (agreement weights)."""
from __future__ import annotations

from .common import agreement_settings, column_letter, input_cell, instructions_sheet


def reliability(items: int = 50, raters: int = 5, replication: bool = True, scale=(0, 10)):
    """Ratings grid (items x raters) and an optional second replication for empirical k-rater reliability."""
    from openpyxl import Workbook

    wb = Workbook()
    instructions_sheet(wb, "Reliability of ratings and of their average (xlcalib)", [
        "Enter one row per item and one column per rater on the Ratings sheet (blank = not rated). Raters may differ "
        "between items: the one-way ICC forms handle that; the two-way forms use items rated by every rater.",
        "If the whole exercise was repeated with new raters, enter the repeat on Replication2 (same items, same order) "
        "to measure the reliability of the averages empirically.",
        "Results (Run main, or: xlcalib report reliability THIS_FILE.xlsx): sheet kRR (the one reliability of the "
        "average to quote, with its interval and why it is the one; the raters needed for 0.8 and 0.9; the bootstrap, "
        "alpha and a 2-rater pilot's prophecy as cross-checks), ICC (six forms with confidence intervals), kRR curve "
        "and the kRR chart on a page of its own.",
        "Sheet Agreement treats the ratings as categories: chance-corrected agreement (Gwet's AC, Cohen's/Conger's "
        "and Fleiss' kappa, Krippendorff's alpha ...) with intervals, the one to quote first with its reason; "
        "Agreement pairs shows it for every pair of raters. The weights are on the Settings sheet.",
        f"Ratings are expected on the scale {scale[0]}..{scale[1]}.",
    ])
    ws = wb.active
    ws["A9"], ws["B9"] = "Ratings entered", "=COUNT(Ratings!B2:ZZ100000)"
    # row sums by MMULT with a column of ones (OFFSET over an array of rows is not portable: LibreOffice differs)
    last_col = column_letter(raters + 1)
    ws["A10"], ws["B10"] = "Items with at least 2 ratings", (
        f'=SUMPRODUCT(--(MMULT(--(Ratings!$B$2:${last_col}${items + 1}<>""),ROW($A$1:$A${raters})^0)>=2))')
    sheets = ["Ratings"] + (["Replication2"] if replication else [])
    for name in sheets:
        sheet = wb.create_sheet(name)
        sheet.append(["Item"] + [f"Rater {j}" for j in range(1, raters + 1)])
        for r in range(2, items + 2):
            input_cell(sheet.cell(row=r, column=1), f"Item {r - 1}")
            for c in range(2, raters + 2):
                input_cell(sheet.cell(row=r, column=c))
        sheet.freeze_panes = "B2"
    agreement_settings(wb)
    return wb
