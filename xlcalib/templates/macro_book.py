"""The ``--macro`` variant of a template: an ``.xlsm`` based on xlwings' standalone quickstart workbook (which
carries the xlwings VBA module) plus a same-named ``.py`` whose ``main()`` runs the exercise — the standard
xlwings *Run main* pattern."""
from __future__ import annotations

import re
from copy import copy
from pathlib import Path

from ..errors import InputError

#: The runner each template's Run main names (``run_from_excel(NAME, book)`` in the written .py). Workbooks
#: already handed out call these names, so they are kept as they are.
MACRO_ENTRIES = {"panel_calibration": "calibrate_panel", "reliability": "reliability_report",
                 "ordinal_agreement": "ordinal_report", "ground_truth": "ground_truth_report"}


def check_macro_name(path: Path) -> None:
    """Run main imports the same-named .py, so the workbook's name must be a Python module name."""
    if not path.stem.isidentifier():
        raise InputError(f"'{path.stem}' cannot be the name of a macro workbook: Run main imports the same-named "
                         f"{path.stem}.py, so the name must be a Python module name (letters, digits and "
                         "underscores, not starting with a digit), e.g. " + _suggest(path.stem))


def _suggest(stem: str) -> str:
    name = re.sub(r"\W+", "_", stem).strip("_") or "exercise"
    return name if not name[0].isdigit() else f"panel_{name}"


#: Sheets on which Run main runs another entry: on the panel template's Import sheet it imports the export named
#: there (filling Evaluations) instead of calibrating.
SHEET_ENTRIES = {"panel_calibration": {"Import": "import_export"}}


def _main_function(kind: str) -> str:
    entry = MACRO_ENTRIES[kind]
    others = SHEET_ENTRIES.get(kind)
    if not others:
        return f'''def main():
    # input problems come back as a message box and a line on the Checks sheet, not as a traceback
    run_from_excel("{entry}", xw.Book.caller())
'''
    text = f'''def main():
    # input problems come back as a message box and a line on the Checks sheet, not as a traceback;
    # Run main on {", ".join(f"the {sheet} sheet runs {name}" for sheet, name in others.items())}
    book = xw.Book.caller()
    run_from_excel({others!r}.get(book.sheets.active.name, "{entry}"), book)
'''
    for name in others.values():
        text += f'''

def {name}():
    # for a button of your own: RunPython "import <this module>; <this module>.{name}()"
    run_from_excel("{name}", xw.Book.caller())
'''
    return text


def macro_module(kind: str, workbook_name: str) -> str:
    """The same-named .py of xlwings' standalone quickstart, with main() calling our macro entry point."""
    return f'''"""Run main for {workbook_name} (xlwings: the workbook's RunPython / the ribbon's Run main calls main() here)."""
import xlwings as xw

from xlcalib.macros import run_from_excel


{_main_function(kind)}

if __name__ == "__main__":
    # lets you run it from Python with the workbook open in Excel
    xw.Book("{workbook_name}").set_mock_caller()
    main()
'''


def into_macro_book(wb):
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
    for index, src in enumerate(wb.worksheets):
        if index == 0:
            dst = keep
            dst.title = src.title
        else:
            dst = book.create_sheet(src.title)
        _copy_sheet(src, dst)
    for name, defined in wb.defined_names.items():  # drop-down lists that follow the growing tables
        book.defined_names[name] = copy(defined)
    for conf in [ws for ws in book.worksheets if ws.title in ("xlwings.conf", "_xlwings.conf")]:
        book.move_sheet(conf, offset=len(book.worksheets) - 1 - book.index(conf))  # settings tab last
    book.active = 0
    return book


def _copy_sheet(src, dst) -> None:
    """Values, styles, sizes, validation, tables, protection and print set-up of *src* onto *dst*."""
    from openpyxl.worksheet.table import Table, TableStyleInfo

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
