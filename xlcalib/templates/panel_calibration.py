"""The panel calibration template: Instructions, Settings, Levels, Assessors, Objects, Evaluations (an Excel
Table with drop-downs and range checks), Import (a review export to fill Evaluations from), and optionally
the Assignment sheet that ``xlcalib assign`` reads."""
from __future__ import annotations

from ..calibration import DEFAULT_LEVEL_RATIO, DEFAULT_LEVELS, DEFAULT_MODEL, MODEL_WORDS
from .common import align_to_top, column_letter, input_cell, instructions_sheet, list_validation, protect, styles
from .import_sheet import import_sheet


def panel_calibration(assessors: int = 12, objects: int = 60, scale=(1, 10), reads: int = 4, uncertainty: str = "level",
                      assignment: bool = False):
    """The calibration exercise: Instructions, Settings, Levels, Assessors, Objects, Evaluations (Excel Table), Import.

    ``uncertainty="level"`` gives the Evaluations table a Level column
    validated against the Levels sheet; ``"sd"`` an SD column validated as a
    number > 0.  The table has ``objects * reads`` pre-formatted rows.
    """
    if uncertainty not in ("level", "sd"):
        raise ValueError(f"uncertainty must be 'level' or 'sd', not {uncertainty!r}")
    from openpyxl import Workbook

    wb = Workbook()
    n_rows = max(objects * reads, 1)
    _instructions(wb, uncertainty, n_rows)
    _settings_sheet(wb, scale)
    _levels_sheet(wb)
    for title, count, prefix in (("Assessors", assessors, "Assessor"), ("Objects", objects, "Object")):
        _name_list(wb, title, count, prefix)
    _evaluations_sheet(wb, n_rows, uncertainty)
    import_sheet(wb)
    if assignment:
        assignment_sheet(wb, assessors, objects, reads)
    return wb


def _instructions(wb, uncertainty: str, n_rows: int) -> None:
    instructions_sheet(wb, "Panel calibration with confidence (xlcalib)", [
        "What to do: list the assessors (sheet Assessors) and objects (sheet Objects), then enter one row per "
        "evaluation in the Evaluations table: who scored what, the score, and how sure they were "
        + ("(Level: High, Medium or Low, as defined on the Levels sheet)." if uncertainty == "level" else
           "(SD: the standard deviation of the score, in score units, greater than 0)."),
        "Yellow cells are for input; other cells are protected formulas (Review > Unprotect Sheet if you must).",
        "What the method does: assessors differ in stringency. xlcalib fits score = value of the object + bias of the "
        "assessor + noise, weighting each evaluation by its confidence (a High read counts about 3x a Medium read), "
        "so a harsh assessor's objects are not penalised. Biases can only be compared between assessors who share "
        "objects (directly or through others).",
        "Results (Run main, or: xlcalib calibrate THIS_FILE.xlsx): Ranking (objects by calibrated value with their "
        "± interval and, with a funding line on Settings, the decision and how sure it is), Summary (in plain words "
        "for the minutes), Biases (assessors, harshest first), Checks (problems found in the input), Values, "
        "Residuals (unusual evaluations highlighted) and Diagnostics, with charts.",
        "A late object or a reserve assessor: type the name in the first empty row below the list on the Objects or "
        "Assessors sheet; the list (an Excel Table) grows and the drop-downs on Evaluations follow.",
        "Progress: see the counts on the Assessors and Objects sheets and the totals below.",
        "Reviews from HotCRP, CMT, EasyChair, OpenReview or a funder's grid: on sheet Import type the export file's "
        "path, then Run main while the Import sheet is shown (or: xlcalib import EXPORT --into THIS_FILE.xlsx). It "
        "fills Evaluations, Assessors and Objects, sets the score scale on Settings, lists every row not imported "
        "with its reason on the Import report sheet, and saves the roles of the export's columns on Import.",
    ])
    ws = wb.active
    ws["A10"], ws["B10"] = "Evaluations entered", "=COUNT(Evaluations[Score])"
    ws["A11"], ws["B11"] = "Evaluations planned", n_rows
    ws["A12"], ws["B12"] = "Progress", "=IF(B11=0,0,B10/B11)"
    ws["B12"].number_format = "0%"


def _settings_sheet(wb, scale) -> None:
    from openpyxl.styles import Alignment
    from openpyxl.worksheet.datavalidation import DataValidation

    st = styles()
    settings = wb.create_sheet("Settings")
    settings.append(["Setting", "Value", "Meaning"])
    rows = [("Score scale minimum", scale[0], "lowest allowed score; the ranking reads a score here as 'this or lower'"),
            ("Score scale maximum", scale[1], "highest allowed score; the ranking reads a score here as 'this or "
                                              "higher'"),
            ("Anomaly threshold", 3, "flag evaluations with |standardised residual| above this"),
            ("Gauge", "weighted", "weighted: the confidence-weighted mean bias is 0 (recommended); simple: the plain "
                                  "mean bias is 0"),
            ("Funding line (top k)", None, "optional: how many objects are funded; the Ranking sheet then shows "
                                           "P(above the line) and the decision per object"),
            ("Funding line (score)", None, "optional, instead of top k: the calibrated value an object must reach (with "
                                           "the rating-scale or partial-credit model: a fair average)"),
            ("Interval level", 0.95, "the level of the ± intervals on the Ranking and Biases sheets"),
            ("Model", DEFAULT_MODEL, "; ".join(f"{name}: {words}" for name, words in MODEL_WORDS.items())),
            ("Lottery", "no", "yes (informed): with a funding line in places, every object is funded with its "
                              "chance, P(above the line), exactly k in all; uniform band: the places left go to the "
                              "band next to the line with equal chances; the draw is recorded on a Lottery sheet "
                              "anyone can re-run (xlcalib verify-draw)"),
            ("Scale use", "off", "off: assessors differ by a shift; auto: also a gain per assessor (some spread scores "
                                 "widely, others keep to the middle) when the test says they differ; on: always"),
            ("Group column", None, "optional: the Evaluations (or Objects) column naming each object's group (subject, "
                                   "call ...); default Group when there is one; adds the Groups and Group bias sheets"),
            ("Borderline cut-off", 0.05, "an object is borderline (the data cannot place it above or below the funding "
                                         "line) when P(above the line) lies between this and 100% minus it; the uniform "
                                         "band lottery draws only among the borderline objects next to the line. 5% is "
                                         "strict; 25% narrows the band to the objects whose central 50% rank range "
                                         "holds the line"),
            ("Score scale points", None, "optional: the form's options when their steps are uneven (e.g. 1, 3, 6, 8 for "
                                         "Reject, Weak Reject, Weak Accept, Accept): every score must be one of them; "
                                         "or letter grades best first (A, B, C, D): the Score column's letters are "
                                         "read on that ladder, higher = better"),
            ("Public seed", None, "the lottery's public seed: any text or number the panel publishes before the meeting "
                                  "(e.g. 'Panel 2026 round 1, lottery of 12 May'); the draw's random numbers are SHA-256 "
                                  "of it, the names and the chances, so anyone can re-run it")]
    for r, (name, value, meaning) in enumerate(rows, start=2):
        align_to_top(settings.cell(row=r, column=1, value=name), input_cell(settings.cell(row=r, column=2), value))
        settings.cell(row=r, column=3, value=meaning).alignment = Alignment(wrap_text=True, vertical="top", indent=1)
        settings.row_dimensions[r].height = 15 * -(-len(meaning) // 75) + 3
    list_validation(settings, '"weighted,simple"', "B5", "Choose weighted or simple")
    list_validation(settings, '"' + ",".join(MODEL_WORDS) + '"', "B9", "Choose " + ", ".join(MODEL_WORDS))
    list_validation(settings, '"no,yes,informed,uniform band"', "B10", "Choose no, yes (informed) or uniform band")
    list_validation(settings, '"off,auto,on"', "B11", "Choose off, auto or on")
    whole = DataValidation(type="whole", operator="greaterThanOrEqual", formula1="1", allow_blank=True,
                           showErrorMessage=True, errorTitle="Funding line", error="A whole number of objects, 1 or more")
    settings.add_data_validation(whole)
    whole.add("B6")
    level = DataValidation(type="decimal", operator="between", formula1="0.5", formula2="0.999", allow_blank=True,
                           showErrorMessage=True, errorTitle="Interval level", error="A level such as 0.9 or 0.95")
    settings.add_data_validation(level)
    level.add("B8")
    settings["B8"].number_format = "0%"
    cut_off = DataValidation(type="decimal", operator="between", formula1="0.001", formula2="0.499", allow_blank=True,
                             showErrorMessage=True, errorTitle="Borderline cut-off", error="A share such as 5% or 25%")
    settings.add_data_validation(cut_off)
    cut_off.add("B13")
    settings["B13"].number_format = "0%"
    for c in "ABC":
        settings[f"{c}1"].font = st["bold"]
    # B holds the longest choice whole ("random-assessors", "uniform band", a public seed's start)
    settings.column_dimensions["A"].width, settings.column_dimensions["B"].width = 24, 18
    settings.column_dimensions["C"].width = 80
    protect(settings)


def _levels_sheet(wb) -> None:
    levels = wb.create_sheet("Levels")
    # relative confidences do not depend on the score scale (the noise scale is estimated from the scores);
    # a table whose second header is "SD" gives standard deviations in score units instead
    levels.append(["Level", "Relative confidence", "Meaning"])
    lam2 = DEFAULT_LEVEL_RATIO ** 2  # High counts lambda^2 times a Medium read, Low 1/lambda^2
    meaning = {"High": f"a High read counts about {lam2:.0f}x a Medium read", "Medium": "the reference (1)",
               "Low": f"a Low read counts about 1/{lam2:.0f} of a Medium read"}
    for r, (name, weight) in enumerate(DEFAULT_LEVELS.items(), start=2):
        meaning_text = meaning.get(name, "")
        input_cell(levels.cell(row=r, column=1), name)
        input_cell(levels.cell(row=r, column=2), weight).number_format = "0.000"
        levels.cell(row=r, column=3, value=meaning_text)
    levels.column_dimensions["B"].width = 20
    levels.column_dimensions["C"].width = 45
    protect(levels)


def _name_list(wb, title: str, count: int, prefix: str) -> None:
    """The Assessors or Objects list: an Excel Table of names with a count of their evaluations."""
    from openpyxl.workbook.defined_name import DefinedName
    from openpyxl.worksheet.table import Table, TableColumn, TableFormula, TableStyleInfo

    sheet = wb.create_sheet(title)
    sheet.append([prefix, "Evaluations entered"])
    for r in range(2, count + 2):
        input_cell(sheet.cell(row=r, column=1), f"{prefix} {r - 1}")
        # exact comparison, not COUNTIF: its criteria treat names like "=x" or "a*" as patterns
        sheet.cell(row=r, column=2, value=f'=IF(A{r}="","",SUMPRODUCT(--(Evaluations[{prefix}]=A{r})))')
    # an Excel Table grows when a name is typed below it (a late proposal, a reserve assessor); the
    # count column is a calculated column, so it follows; the sheet stays unprotected because
    # Excel does not grow tables on protected sheets
    list_name = f"{prefix}List"
    table = Table(displayName=list_name, ref=f"A1:B{count + 1}")
    table.tableStyleInfo = TableStyleInfo(name="TableStyleLight9", showRowStripes=True)
    table.tableColumns = [TableColumn(id=1, name=prefix), TableColumn(
        id=2, name="Evaluations entered",
        calculatedColumnFormula=TableFormula(attr_text=f'IF({list_name}[[#This Row],[{prefix}]]="","",'
                                f'SUMPRODUCT(--(Evaluations[{prefix}]={list_name}[[#This Row],[{prefix}]])))'))]
    sheet.add_table(table)
    # the Evaluations drop-downs refer to this name, which follows the table column as it grows
    wb.defined_names[f"{prefix}Names"] = DefinedName(f"{prefix}Names", attr_text=f"{list_name}[{prefix}]")
    sheet.column_dimensions["A"].width, sheet.column_dimensions["B"].width = 28, 22
    sheet.freeze_panes = "A2"


def _evaluations_sheet(wb, n_rows: int, uncertainty: str) -> None:
    from openpyxl.worksheet.datavalidation import DataValidation
    from openpyxl.worksheet.table import Table, TableStyleInfo

    ev = wb.create_sheet("Evaluations")
    ev.append(["Assessor", "Object", "Score", "Level" if uncertainty == "level" else "SD"])
    for r in range(2, n_rows + 2):
        for c in range(1, 5):
            input_cell(ev.cell(row=r, column=c))
    table = Table(displayName="Evaluations", ref=f"A1:D{n_rows + 1}")
    table.tableStyleInfo = TableStyleInfo(name="TableStyleMedium2", showRowStripes=True)
    ev.add_table(table)
    last = n_rows + 1
    list_validation(ev, "AssessorNames", f"A2:A{last}", "Pick an assessor from the Assessors sheet")
    list_validation(ev, "ObjectNames", f"B2:B{last}", "Pick an object from the Objects sheet")
    score = DataValidation(type="decimal", operator="between", formula1="Settings!$B$2", formula2="Settings!$B$3",
                           allow_blank=True, showErrorMessage=True, errorTitle="Score out of range",
                           error="The score must be a number within the scale on the Settings sheet")
    ev.add_data_validation(score)
    score.add(f"C2:C{last}")
    if uncertainty == "level":
        list_validation(ev, f"Levels!$A$2:$A${len(DEFAULT_LEVELS) + 1}", f"D2:D{last}", "Pick a level from the Levels sheet")
    else:
        # an SD is in score units: above 0 and at most the width of the scale (consistent with --scale)
        sd = DataValidation(type="decimal", operator="between", formula1="0.000001", formula2="Settings!$B$3-Settings!$B$2",
                            allow_blank=True, showErrorMessage=True, errorTitle="SD out of range",
                            error="The SD is a standard deviation in score units: greater than 0 and at most the "
                                  "width of the score scale on the Settings sheet")
        ev.add_data_validation(sd)
        sd.add(f"D2:D{last}")
    for c in "ABCD":
        ev.column_dimensions[c].width = 18
    ev.freeze_panes = "A2"


def assignment_sheet(wb, assessors: int, objects: int, reads: int):
    """Sheet Assignment for ``xlcalib assign``: Assessors, Objects and Conflicts tables side by side (row 1 headers).

    Suitability is optional: a sheet "Suitability" (assessors down, objects across) or subject tags in both
    Subjects columns (suitability = number of shared tags).
    """
    from openpyxl.styles import Alignment, Font

    ws = wb.create_sheet("Assignment")
    load = -(-objects * reads // max(assessors, 1))  # even share of the reads, rounded up
    # (header, width, kind): numbers are right-aligned under a right-aligned header, and the text column after a
    # number column is indented, so a number never prints under the next column's header
    columns = {1: ("Assessor", 16, "text"), 2: ("Max load", 10, "number"), 3: ("Min load", 10, "number"),
               4: ("Subjects", 18, "indented"), 5: (None, 3, ""), 6: ("Object", 16, "text"),
               7: ("Reads wanted", 15, "number"), 8: ("Subjects", 18, "indented"), 9: (None, 3, ""),
               10: ("Conflict assessor", 20, "text"), 11: ("Conflict object", 18, "text")}
    align = {"number": Alignment(horizontal="right"), "indented": Alignment(horizontal="left", indent=1)}
    bold = Font(name="Calibri", size=11, bold=True)  # a bold font without a name falls back to a serif face
    for col, (text, width, kind) in columns.items():
        ws.column_dimensions[column_letter(col)].width = width
        if text:
            cell = ws.cell(row=1, column=col, value=text)
            cell.font = bold
            if kind in align:
                cell.alignment = align[kind]
    cells = [(r, col, value) for r in range(2, assessors + 2)
             for col, value in ((1, f"Assessor {r - 1}"), (2, load + 1), (3, None), (4, None))]
    cells += [(r, col, value) for r in range(2, objects + 2)
              for col, value in ((6, f"Object {r - 1}"), (7, reads), (8, None))]
    cells += [(r, col, None) for r in range(2, max(assessors, objects) + 2) for col in (10, 11)]
    for r, col, value in cells:
        cell = input_cell(ws.cell(row=r, column=col), value)
        kind = columns[col][2]
        if kind in align:
            cell.alignment = align[kind]
    ws.freeze_panes = "A2"
    return ws
