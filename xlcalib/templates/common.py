"""What every template workbook shares: the Instructions sheet, input cells, protection, drop-downs,
print set-up and the deterministic save.

Deterministic bytes (fixed timestamps, sorted zip entries) let the committed templates in
``workbook_templates/`` be compared byte for byte with a fresh build, so a stale template is caught.
"""
from __future__ import annotations

import datetime as _dt
import io
import re
import zipfile

FIXED_TIME = _dt.datetime(2024, 1, 1, 0, 0, 0)
#: Characters of running text per line of the 110-wide instructions column (11 pt), with a margin.
INSTRUCTION_CHARS_PER_LINE = 115


def styles() -> dict:
    """The few looks the templates use: title, bold header, wrapped text, the yellow input fill, unlocked cells."""
    from openpyxl.styles import Alignment, Font, PatternFill, Protection

    return {"title": Font(bold=True, size=14), "bold": Font(bold=True), "wrap": Alignment(wrap_text=True, vertical="top"),
            "input": PatternFill("solid", fgColor="FFF2CC"), "unlocked": Protection(locked=False)}


def instructions_sheet(wb, title: str, lines: list[str]):
    """The first sheet: the title and one wrapped paragraph per line, protected (nothing to type here)."""
    st = styles()
    ws = wb.active
    ws.title = "Instructions"
    ws["A1"] = title
    ws["A1"].font = st["title"]
    for i, line in enumerate(lines, start=3):
        ws.cell(row=i, column=1, value=line).alignment = st["wrap"]
        # wrapped text needs its row height set: spreadsheet applications do not grow rows on opening
        ws.row_dimensions[i].height = 15 * -(-len(line) // INSTRUCTION_CHARS_PER_LINE) + 3
    ws.column_dimensions["A"].width = 110
    protect(ws)  # text and progress formulas only: nothing to type here
    return ws


def column_letter(index: int) -> str:
    from openpyxl.utils import get_column_letter

    return get_column_letter(index)


def input_cell(cell, value=None):
    """Mark *cell* as input (yellow, unlocked on a protected sheet), with an optional starting value."""
    st = styles()
    if value is not None:
        cell.value = value
    cell.fill = st["input"]
    cell.protection = st["unlocked"]
    return cell


def list_sheet(wb, title: str, header: str, names, width: float):
    """A one-column list to fill in (the categories in order, the classes): header in A1, names below as input."""
    ws = wb.create_sheet(title)
    ws.append([header])
    for r, name in enumerate(names, start=2):
        input_cell(ws.cell(row=r, column=1), name)
    ws.column_dimensions["A"].width = width
    return ws


def list_table(wb, title: str, headers: list[str], names, widths: list[float], table: str, name: str):
    """A list to fill in that grows: an Excel Table (headers in row 1, *names* below as input) whose first column is
    the defined *name* drop-downs refer to, so a category typed in the first empty row below joins the table and
    every drop-down (a fixed range such as A2:A5 would not).  The sheet stays unprotected: Excel does not grow
    tables on protected sheets."""
    from openpyxl.workbook.defined_name import DefinedName
    from openpyxl.worksheet.table import Table, TableStyleInfo

    ws = wb.create_sheet(title)
    ws.append(headers)
    for r, value in enumerate(names, start=2):
        input_cell(ws.cell(row=r, column=1), value)
        for c in range(2, len(headers) + 1):
            input_cell(ws.cell(row=r, column=c))
    ref = f"A1:{column_letter(len(headers))}{max(len(names), 1) + 1}"
    listing = Table(displayName=table, ref=ref)
    listing.tableStyleInfo = TableStyleInfo(name="TableStyleLight9", showRowStripes=True)
    ws.add_table(listing)
    wb.defined_names[name] = DefinedName(name, attr_text=f"{table}[{headers[0]}]")
    for c, width in enumerate(widths, start=1):
        ws.column_dimensions[column_letter(c)].width = width
    ws.freeze_panes = "A2"
    return ws


def align_to_top(*cells) -> None:
    """Set each cell's text at the top of its row, its horizontal alignment kept: a Settings row's name and value
    then sit beside the first line of their wrapped meaning, not at the bottom of a tall row."""
    from openpyxl.styles import Alignment

    for cell in cells:
        cell.alignment = Alignment(horizontal=cell.alignment.horizontal, vertical="top")


def agreement_settings(wb, weights: str = "quadratic"):
    """A Settings sheet with the one setting the reports' Agreement sheet reads: its weights (a drop-down of the
    schemes of :data:`xlcalib.agreement.WEIGHTS`)."""
    from ..agreement import WEIGHTS

    ws = wb.create_sheet("Settings")
    ws.append(["Setting", "Value", "Meaning"])
    ws["A2"] = "Agreement weights"
    input_cell(ws["B2"], weights)
    ws["C2"] = ("credit a near miss earns on the Agreement sheet: identity = none (categories without order); "
                "quadratic = 1 - (difference / range)^2; linear, ordinal, radical, ratio, circular, bipolar (see the "
                "README); text categories are weighted by their place on the Categories sheet")
    list_validation(ws, '"' + ",".join(WEIGHTS) + '"', "B2", "Pick one of the weight schemes in the list")
    ws["C2"].alignment = styles()["wrap"]
    align_to_top(ws["A2"], ws["B2"])
    ws.column_dimensions["A"].width, ws.column_dimensions["B"].width, ws.column_dimensions["C"].width = 20, 14, 90
    ws.row_dimensions[2].height = 48
    return ws


def protect(ws):
    ws.protection.sheet = True  # no password: it guards formulas against slips, not against people
    ws.protection.formatCells = False
    ws.protection.formatColumns = False


def list_validation(ws, formula: str, ref: str, prompt: str):
    """A drop-down on *ref* whose choices are *formula* (a list or a range); other entries are refused."""
    from openpyxl.worksheet.datavalidation import DataValidation

    dv = DataValidation(type="list", formula1=formula, allow_blank=True, showErrorMessage=True,
                        errorTitle="Not in the list", error=prompt)
    ws.add_data_validation(dv)
    dv.add(ref)


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


def deterministic_bytes(wb) -> bytes:
    """The workbook's file bytes, the same at every build: saved, then the zip rewritten with fixed entry
    times, sorted entries and fixed document timestamps."""
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
                stamp = FIXED_TIME.strftime("%Y-%m-%dT%H:%M:%SZ")
                data = re.sub(rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*(</dcterms:)", rb"\g<1>" + stamp.encode() + rb"\g<2>", data)
            info = zipfile.ZipInfo(name, date_time=FIXED_TIME.timetuple()[:6])
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16  # an ordinary readable file when unzipped
            dst.writestr(info, data)
    return out.getvalue()
