"""Template workbooks per exercise, built with openpyxl (deterministic: fixed timestamps, stable zip order).

Kinds: ``panel_calibration``, ``reliability``, ``ordinal_agreement``,
``ground_truth``.  ``build(kind, path, **size)`` writes one; ``build_all(dir)``
rebuilds the committed ones in ``workbook_templates/``.  With ``macro=True``
the workbook is an ``.xlsm`` based on xlwings' standalone quickstart (which
carries the xlwings VBA module) plus a same-named ``.py`` whose ``main()``
runs the matching macro entry point — the standard xlwings *Run main* pattern.
"""
from __future__ import annotations

import datetime as _dt
import io
import zipfile
from pathlib import Path

from ..calibration import DEFAULT_LEVEL_RATIO, DEFAULT_LEVELS

KINDS = ("panel_calibration", "reliability", "ordinal_agreement", "ground_truth")
FIXED_TIME = _dt.datetime(2024, 1, 1, 0, 0, 0)
#: Characters of running text per line of the 110-wide instructions column (11 pt), with a margin.
INSTRUCTION_CHARS_PER_LINE = 115
#: The default level ratio: High counts lambda^2 times a Medium read, Low 1/lambda^2 (relative confidences).
LEVEL_RATIO = DEFAULT_LEVEL_RATIO
_MACRO_ENTRY = {"panel_calibration": "calibrate_panel", "reliability": "reliability_report",
                "ordinal_agreement": "ordinal_report", "ground_truth": "ground_truth_report"}


def _styles():
    from openpyxl.styles import Alignment, Font, PatternFill, Protection

    return {"title": Font(bold=True, size=14), "bold": Font(bold=True), "wrap": Alignment(wrap_text=True, vertical="top"),
            "input": PatternFill("solid", fgColor="FFF2CC"), "unlocked": Protection(locked=False)}


def _instructions(wb, title: str, lines: list[str]):
    st = _styles()
    ws = wb.active
    ws.title = "Instructions"
    ws["A1"] = title
    ws["A1"].font = st["title"]
    for i, line in enumerate(lines, start=3):
        ws.cell(row=i, column=1, value=line).alignment = st["wrap"]
        # wrapped text needs its row height set: spreadsheet applications do not grow rows on opening
        ws.row_dimensions[i].height = 15 * -(-len(line) // INSTRUCTION_CHARS_PER_LINE) + 3
    ws.column_dimensions["A"].width = 110
    _protect(ws)  # text and progress formulas only: nothing to type here
    return ws


def _column_letter(index: int) -> str:
    from openpyxl.utils import get_column_letter

    return get_column_letter(index)


def _input_cell(cell, value=None):
    st = _styles()
    if value is not None:
        cell.value = value
    cell.fill = st["input"]
    cell.protection = st["unlocked"]
    return cell


def _protect(ws):
    ws.protection.sheet = True  # no password: it guards formulas against slips, not against people
    ws.protection.formatCells = False
    ws.protection.formatColumns = False


def _list_validation(ws, formula: str, ref: str, prompt: str):
    from openpyxl.worksheet.datavalidation import DataValidation

    dv = DataValidation(type="list", formula1=formula, allow_blank=True, showErrorMessage=True,
                        errorTitle="Not in the list", error=prompt)
    ws.add_data_validation(dv)
    dv.add(ref)


def panel_calibration(assessors: int = 12, objects: int = 60, scale=(1, 10), reads: int = 4, uncertainty: str = "level",
                      assignment: bool = False):
    """The calibration exercise: Instructions, Settings, Levels, Assessors, Objects, Evaluations (Excel Table).

    ``uncertainty="level"`` gives the Evaluations table a Level column
    validated against the Levels sheet; ``"sd"`` an SD column validated as a
    number > 0.  The table has ``objects * reads`` pre-formatted rows.
    """
    if uncertainty not in ("level", "sd"):
        raise ValueError(f"uncertainty must be 'level' or 'sd', not {uncertainty!r}")
    from openpyxl import Workbook
    from openpyxl.worksheet.datavalidation import DataValidation
    from openpyxl.worksheet.table import Table, TableStyleInfo

    st = _styles()
    wb = Workbook()
    n_rows = max(objects * reads, 1)
    _instructions(wb, "Panel calibration with confidence (xlcalib)", [
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
    ])
    ws = wb.active
    ws["A10"], ws["B10"] = "Evaluations entered", "=COUNT(Evaluations[Score])"
    ws["A11"], ws["B11"] = "Evaluations planned", n_rows
    ws["A12"], ws["B12"] = "Progress", "=IF(B11=0,0,B10/B11)"
    ws["B12"].number_format = "0%"

    settings = wb.create_sheet("Settings")
    settings.append(["Setting", "Value", "Meaning"])
    rows = [("Score scale minimum", scale[0], "lowest allowed score"), ("Score scale maximum", scale[1], "highest allowed score"),
            ("Anomaly threshold", 3, "flag evaluations with |standardised residual| above this"),
            ("Gauge", "weighted", "weighted: the confidence-weighted mean bias is 0 (recommended); simple: the plain "
                                  "mean bias is 0"),
            ("Funding line (top k)", None, "optional: how many objects are funded; the Ranking sheet then shows "
                                           "P(above the line) and the decision per object"),
            ("Funding line (score)", None, "optional, instead of top k: the calibrated value an object must reach"),
            ("Interval level", 0.95, "the level of the ± intervals on the Ranking and Biases sheets"),
            ("Model", "fixed", "fixed: assessor biases estimated freely; shrinkage: small panels' biases pulled "
                               "towards 0"),
            ("Lottery", "no", "yes: borderline objects at the funding line are decided by a seeded lottery")]
    for r, (name, value, meaning) in enumerate(rows, start=2):
        settings.cell(row=r, column=1, value=name)
        _input_cell(settings.cell(row=r, column=2), value)
        settings.cell(row=r, column=3, value=meaning).alignment = st["wrap"]
        settings.row_dimensions[r].height = 15 * -(-len(meaning) // 75) + 3
    _list_validation(settings, '"weighted,simple"', "B5", "Choose weighted or simple")
    _list_validation(settings, '"fixed,shrinkage"', "B9", "Choose fixed or shrinkage")
    _list_validation(settings, '"no,yes"', "B10", "Choose no or yes")
    whole = DataValidation(type="whole", operator="greaterThanOrEqual", formula1="1", allow_blank=True,
                           showErrorMessage=True, errorTitle="Funding line", error="A whole number of objects, 1 or more")
    settings.add_data_validation(whole)
    whole.add("B6")
    level = DataValidation(type="decimal", operator="between", formula1="0.5", formula2="0.999", allow_blank=True,
                           showErrorMessage=True, errorTitle="Interval level", error="A level such as 0.9 or 0.95")
    settings.add_data_validation(level)
    level.add("B8")
    settings["B8"].number_format = "0%"
    for c in "ABC":
        settings[f"{c}1"].font = st["bold"]
    settings.column_dimensions["A"].width, settings.column_dimensions["C"].width = 24, 80
    _protect(settings)

    levels = wb.create_sheet("Levels")
    # relative confidences do not depend on the score scale (the noise scale is estimated from the scores);
    # a table whose second header is "SD" gives standard deviations in score units instead
    levels.append(["Level", "Relative confidence", "Meaning"])
    lam2 = LEVEL_RATIO ** 2
    meaning = {"High": f"a High read counts about {lam2:.0f}x a Medium read", "Medium": "the reference (1)",
               "Low": f"a Low read counts about 1/{lam2:.0f} of a Medium read"}
    for r, (name, weight) in enumerate(DEFAULT_LEVELS.items(), start=2):
        meaning_text = meaning.get(name, "")
        _input_cell(levels.cell(row=r, column=1), name)
        _input_cell(levels.cell(row=r, column=2), weight).number_format = "0.000"
        levels.cell(row=r, column=3, value=meaning_text)
    levels.column_dimensions["B"].width = 20
    levels.column_dimensions["C"].width = 45
    _protect(levels)

    from openpyxl.workbook.defined_name import DefinedName
    from openpyxl.worksheet.table import TableColumn, TableFormula

    for title, count, prefix in (("Assessors", assessors, "Assessor"), ("Objects", objects, "Object")):
        sheet = wb.create_sheet(title)
        sheet.append([prefix, "Evaluations entered"])
        for r in range(2, count + 2):
            _input_cell(sheet.cell(row=r, column=1), f"{prefix} {r - 1}")
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

    ev = wb.create_sheet("Evaluations")
    ev.append(["Assessor", "Object", "Score", "Level" if uncertainty == "level" else "SD"])
    for r in range(2, n_rows + 2):
        for c in range(1, 5):
            _input_cell(ev.cell(row=r, column=c))
    table = Table(displayName="Evaluations", ref=f"A1:D{n_rows + 1}")
    table.tableStyleInfo = TableStyleInfo(name="TableStyleMedium2", showRowStripes=True)
    ev.add_table(table)
    last = n_rows + 1
    _list_validation(ev, "AssessorNames", f"A2:A{last}", "Pick an assessor from the Assessors sheet")
    _list_validation(ev, "ObjectNames", f"B2:B{last}", "Pick an object from the Objects sheet")
    score = DataValidation(type="decimal", operator="between", formula1="Settings!$B$2", formula2="Settings!$B$3",
                           allow_blank=True, showErrorMessage=True, errorTitle="Score out of range",
                           error="The score must be a number within the scale on the Settings sheet")
    ev.add_data_validation(score)
    score.add(f"C2:C{last}")
    if uncertainty == "level":
        _list_validation(ev, f"Levels!$A$2:$A${len(DEFAULT_LEVELS) + 1}", f"D2:D{last}", "Pick a level from the Levels sheet")
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
    if assignment:
        assignment_sheet(wb, assessors, objects, reads)
    return wb


def assignment_sheet(wb, assessors: int, objects: int, reads: int):
    """Sheet Assignment for ``xlcalib assign``: Assessors, Objects and Conflicts tables side by side (row 1 headers).

    Suitability is optional: a sheet "Suitability" (assessors down, objects across) or subject tags in both
    Subjects columns (suitability = number of shared tags).
    """
    st = _styles()
    ws = wb.create_sheet("Assignment")
    load = -(-objects * reads // max(assessors, 1))  # even share of the reads, rounded up
    headers = {1: "Assessor", 2: "Max load", 3: "Min load", 4: "Subjects", 6: "Object", 7: "Reads wanted",
               8: "Subjects", 10: "Conflict assessor", 11: "Conflict object"}
    for col, text in headers.items():
        ws.cell(row=1, column=col, value=text).font = st["bold"]
        ws.column_dimensions[_column_letter(col)].width = 18
    for r in range(2, assessors + 2):
        for col, value in ((1, f"Assessor {r - 1}"), (2, load + 1), (3, None), (4, None)):
            _input_cell(ws.cell(row=r, column=col), value)
    for r in range(2, objects + 2):
        for col, value in ((6, f"Object {r - 1}"), (7, reads), (8, None)):
            _input_cell(ws.cell(row=r, column=col), value)
    for r in range(2, max(assessors, objects) + 2):
        for col in (10, 11):
            _input_cell(ws.cell(row=r, column=col))
    ws.freeze_panes = "A2"
    return ws


def reliability(items: int = 50, raters: int = 5, replication: bool = True, scale=(0, 10)):
    """Ratings grid (items x raters) and an optional second replication for empirical k-rater reliability."""
    from openpyxl import Workbook

    wb = Workbook()
    _instructions(wb, "Reliability of ratings and of their average (xlcalib)", [
        "Enter one row per item and one column per rater on the Ratings sheet (blank = not rated). Raters may differ "
        "between items: the one-way ICC forms handle that; the two-way forms use items rated by every rater.",
        "If the whole exercise was repeated with new raters, enter the repeat on Replication2 (same items, same order) "
        "to measure the reliability of the averages empirically.",
        "Results (Run main, or: xlcalib report reliability THIS_FILE.xlsx): sheets ICC (six forms with confidence "
        "intervals), kRR (bootstrap k-rater reliability, Krippendorff's alpha) and kRR curve with a chart.",
        f"Ratings are expected on the scale {scale[0]}..{scale[1]}.",
    ])
    ws = wb.active
    ws["A9"], ws["B9"] = "Ratings entered", "=COUNT(Ratings!B2:ZZ100000)"
    # row sums by MMULT with a column of ones (OFFSET over an array of rows is not portable: LibreOffice differs)
    last_col = _column_letter(raters + 1)
    ws["A10"], ws["B10"] = "Items with at least 2 ratings", (
        f'=SUMPRODUCT(--(MMULT(--(Ratings!$B$2:${last_col}${items + 1}<>""),ROW($A$1:$A${raters})^0)>=2))')
    sheets = ["Ratings"] + (["Replication2"] if replication else [])
    for name in sheets:
        sheet = wb.create_sheet(name)
        sheet.append(["Item"] + [f"Rater {j}" for j in range(1, raters + 1)])
        for r in range(2, items + 2):
            _input_cell(sheet.cell(row=r, column=1), f"Item {r - 1}")
            for c in range(2, raters + 2):
                _input_cell(sheet.cell(row=r, column=c))
        sheet.freeze_panes = "B2"
    return wb


def ordinal_agreement(objects: int = 60, categories=("F1", "F2", "F3", "F4")):
    """Two raters' ordinal categories per object plus the category order."""
    from openpyxl import Workbook

    wb = Workbook()
    _instructions(wb, "Ordinal agreement between two raters (xlcalib, Svensson's method)", [
        "List the categories in order on the Categories sheet (lowest first; unused categories still count).",
        "Enter each object's category from rater 1 and rater 2 on the Ratings sheet. Objects missing either rating "
        "are left out and counted.",
        "Results (Run main, or: xlcalib report ordinal THIS_FILE.xlsx): sheet Svensson (percentage agreement, relative "
        "position RP, relative concentration RC - systematic differences - and relative rank variance RV - random "
        "differences - with jackknife standard errors, kappa and the largest kappa the marginals permit), MeanRanks, "
        "and ROC with a chart.",
    ])
    ws = wb.active
    ws["A9"], ws["B9"] = "Pairs entered", '=SUMPRODUCT((Ratings!B2:B100000<>"")*(Ratings!C2:C100000<>""))'
    cats = wb.create_sheet("Categories")
    cats.append(["Category (lowest first)"])
    for r, c in enumerate(categories, start=2):
        _input_cell(cats.cell(row=r, column=1), c)
    cats.column_dimensions["A"].width = 26
    sheet = wb.create_sheet("Ratings")
    sheet.append(["Object", "Rater 1", "Rater 2"])
    for r in range(2, objects + 2):
        _input_cell(sheet.cell(row=r, column=1), f"Object {r - 1}")
        _input_cell(sheet.cell(row=r, column=2))
        _input_cell(sheet.cell(row=r, column=3))
    _list_validation(sheet, f"Categories!$A$2:$A${len(categories) + 1}", f"B2:C{objects + 1}", "Pick a category from the Categories sheet")
    sheet.freeze_panes = "A2"
    return wb


def ground_truth(items: int = 30, annotators: int = 3, classes=("Melanoma", "Nevus", "Hemangioma", "Eczema"), ranks: int = 3):
    """Per-item annotations (labels or partial rankings), the class list, and model predictions."""
    from openpyxl import Workbook

    wb = Workbook()
    _instructions(wb, "Evaluation under uncertain ground truth (xlcalib)", [
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
    cl = wb.create_sheet("Classes")
    cl.append(["Class"])
    for r, c in enumerate(classes, start=2):
        _input_cell(cl.cell(row=r, column=1), c)
    cl.column_dimensions["A"].width = 30
    settings = wb.create_sheet("Settings")
    settings.append(["Setting", "Value"])
    for r, (name, value) in enumerate((("Reliability", 3), ("Samples", 1000), ("Seed", 0), ("Top k", min(3, ranks)),
                                        ("Setting", "xlcalib")), start=2):
        settings.cell(row=r, column=1, value=name)
        _input_cell(settings.cell(row=r, column=2), value)
    ann = wb.create_sheet("Annotations")
    ann.append(["Item"] + [f"Annotator {j}" for j in range(1, annotators + 1)])
    pred = wb.create_sheet("Predictions")
    pred.append(["Item"] + [f"Rank {j}" for j in range(1, ranks + 1)])
    for r in range(2, items + 2):
        for sheet, width in ((ann, annotators), (pred, ranks)):
            _input_cell(sheet.cell(row=r, column=1), f"Item {r - 1}")
            for c in range(2, width + 2):
                _input_cell(sheet.cell(row=r, column=c))
    _list_validation(pred, f"Classes!$A$2:$A${len(classes) + 1}", f"B2:{_column_letter(ranks + 1)}{items + 1}", "Pick a class from the Classes sheet")
    for sheet in (ann, pred):
        sheet.column_dimensions["A"].width = 12
        for c in range(2, 10):
            sheet.column_dimensions[chr(64 + c)].width = 32
    return wb


def print_ready(wb):
    """Every sheet prints one page wide (instructions and long meanings are not cut at the page edge),
    landscape, with its first row repeated on every page."""
    from openpyxl.worksheet.properties import PageSetupProperties

    for ws in wb.worksheets:
        ws.page_setup.orientation = "landscape"
        ws.page_setup.paperSize = ws.PAPERSIZE_A4
        ws.page_setup.fitToWidth, ws.page_setup.fitToHeight = 1, 0
        ws.sheet_properties.pageSetUpPr = PageSetupProperties(fitToPage=True)
        if ws.title != "Instructions":
            ws.print_title_rows = "1:1"
        ws.oddFooter.center.text = f"{ws.title} - page &P of &N"
    return wb


BUILDERS = {"panel_calibration": panel_calibration, "reliability": reliability,
            "ordinal_agreement": ordinal_agreement, "ground_truth": ground_truth}


def _deterministic_bytes(wb) -> bytes:
    """Save, then rewrite the zip with fixed entry times, sorted entries and fixed document timestamps."""
    wb.properties.created = FIXED_TIME
    wb.properties.modified = FIXED_TIME
    wb.properties.creator = "xlcalib"
    wb.properties.lastModifiedBy = "xlcalib"
    raw = io.BytesIO()
    wb.save(raw)
    src = zipfile.ZipFile(io.BytesIO(raw.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        names = src.namelist()
        order = sorted(names, key=lambda n: (n != "[Content_Types].xml", n))
        for name in order:
            data = src.read(name)
            if name == "docProps/core.xml":
                import re

                stamp = FIXED_TIME.strftime("%Y-%m-%dT%H:%M:%SZ")
                data = re.sub(rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*(</dcterms:)", rb"\g<1>" + stamp.encode() + rb"\g<2>", data)
            info = zipfile.ZipInfo(name, date_time=FIXED_TIME.timetuple()[:6])
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16  # an ordinary readable file when unzipped
            dst.writestr(info, data)
    return out.getvalue()


def build(kind: str, path, macro: bool = False, **size) -> list[Path]:
    """Write a fresh exercise workbook (and, with ``macro``, the .xlsm + .py pair). Returns the files written."""
    from ..workbook import write_bytes_atomically

    if kind not in BUILDERS:
        raise ValueError(f"unknown template kind {kind!r}; choose from {', '.join(KINDS)}")
    wb = print_ready(BUILDERS[kind](**size))
    path = Path(path)
    written = []
    if macro:
        path = path.with_suffix(".xlsm")
        if not path.stem.isidentifier():
            from ..errors import InputError

            raise InputError(f"'{path.stem}' cannot be the name of a macro workbook: Run main imports the same-named "
                             f"{path.stem}.py, so the name must be a Python module name (letters, digits and "
                             "underscores, not starting with a digit), e.g. " + _suggest(path.stem))
        wb = _into_macro_book(wb)
    write_bytes_atomically(_deterministic_bytes(wb), path)
    written.append(path)
    if macro:
        py = path.with_suffix(".py")
        write_bytes_atomically(_macro_module(kind, path.name).encode("utf-8"), py)
        written.append(py)
    return written


def _suggest(stem: str) -> str:
    import re

    name = re.sub(r"\W+", "_", stem).strip("_") or "exercise"
    return name if not name[0].isdigit() else f"panel_{name}"


def _macro_module(kind: str, workbook_name: str) -> str:
    """The same-named .py of xlwings' standalone quickstart, with main() calling our macro entry point."""
    entry = _MACRO_ENTRY[kind]
    return f'''"""Run main for {workbook_name} (xlwings: the workbook's RunPython / the ribbon's Run main calls main() here)."""
import xlwings as xw

from xlcalib.macros import run_from_excel


def main():
    # input problems come back as a message box and a line on the Checks sheet, not as a traceback
    run_from_excel("{entry}", xw.Book.caller())


if __name__ == "__main__":
    # lets you run it from Python with the workbook open in Excel
    xw.Book("{workbook_name}").set_mock_caller()
    main()
'''


def _into_macro_book(wb):
    """Copy our sheets into xlwings' standalone quickstart workbook, which carries the xlwings VBA module."""
    import openpyxl
    import xlwings

    base = Path(xlwings.__file__).parent / "quickstart_standalone.xlsm"
    book = openpyxl.load_workbook(base, keep_vba=True)
    # The VBA project has document modules for the quickstart's sheets (code names Sheet1, Sheet2): keep the
    # first worksheet (renamed; it becomes our first sheet) and the _xlwings.conf sheet so no module is orphaned.
    keep = book.worksheets[0]
    for ws in list(book.worksheets[1:]):
        if ws.title not in ("xlwings.conf", "_xlwings.conf"):
            book.remove(ws)
    # rebuild our sheets inside the macro book by copying values, styles, validation, tables and protection
    from copy import copy

    for index, src in enumerate(wb.worksheets):
        if index == 0:
            dst = keep
            dst.title = src.title
        else:
            dst = book.create_sheet(src.title)
        for row in src.iter_rows():
            for cell in row:
                new = dst.cell(row=cell.row, column=cell.column, value=cell.value)
                if cell.has_style:
                    new.font, new.fill, new.alignment = copy(cell.font), copy(cell.fill), copy(cell.alignment)
                    new.protection, new.number_format = copy(cell.protection), cell.number_format
        for key, dim in src.column_dimensions.items():
            dst.column_dimensions[key].width = dim.width
        for key, dim in src.row_dimensions.items():
            if dim.height is not None:
                dst.row_dimensions[key].height = dim.height
        for dv in src.data_validations.dataValidation:
            dst.add_data_validation(copy(dv))
        for table in src.tables.values():
            from openpyxl.worksheet.table import Table, TableStyleInfo

            fresh = Table(displayName=table.displayName, ref=table.ref)
            fresh.tableStyleInfo = TableStyleInfo(name=table.tableStyleInfo.name, showRowStripes=True)
            if table.tableColumns:
                fresh.tableColumns = [copy(c) for c in table.tableColumns]
            dst.add_table(fresh)
        dst.protection = copy(src.protection)
        dst.page_setup.orientation, dst.page_setup.paperSize = src.page_setup.orientation, src.page_setup.paperSize
        dst.page_setup.fitToWidth, dst.page_setup.fitToHeight = src.page_setup.fitToWidth, src.page_setup.fitToHeight
        dst.sheet_properties.pageSetUpPr = copy(src.sheet_properties.pageSetUpPr)
        dst.print_title_rows = src.print_title_rows
        dst.oddFooter.center.text = src.oddFooter.center.text
        dst.freeze_panes = src.freeze_panes
    for name, defined in wb.defined_names.items():  # drop-down lists that follow the growing tables
        book.defined_names[name] = copy(defined)
    for conf in [ws for ws in book.worksheets if ws.title in ("xlwings.conf", "_xlwings.conf")]:
        book.move_sheet(conf, offset=len(book.worksheets) - 1 - book.index(conf))  # settings tab last
    book.active = 0
    return book


def build_all(folder) -> list[Path]:
    """Rebuild the committed templates (default sizes) into *folder*."""
    out = []
    for kind in KINDS:
        out += build(kind, Path(folder) / f"{kind}.xlsx")
    return out
