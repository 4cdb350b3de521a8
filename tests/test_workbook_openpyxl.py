"""The openpyxl backend of the workbook interface: reading hand-edited sheets, writing result sheets safely,
native charts, styles, hostile / damaged / encrypted / oversized files, atomic saves."""
from __future__ import annotations

import io
import zipfile

import openpyxl
import pandas as pd
import pytest

from xlcalib.errors import InputError
from xlcalib.workbook import (
    ChartSpec,
    OpenpyxlBook,
    new_workbook,
    open_book,
    open_workbook,
    openpyxl_backend,
    reader,
    save_atomically,
    write_bytes_atomically,
)


def _saved(tmp_path, wb, name="b.xlsx"):
    path = tmp_path / name
    wb.save(path)
    return path


def test_read_block_plain_range_offset_and_case_insensitive():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Evaluations"
    ws["C4"], ws["D4"], ws["C5"], ws["D5"] = "Assessor", "Score", "A", 5
    block = open_book(wb).read_block("evaluations")
    assert (block.rows, block.first_row, block.first_column, block.sheet) == (
        [["Assessor", "Score"], ["A", 5]], 4, 3, "Evaluations")
    with pytest.raises(InputError, match="no sheet named 'Nope' \\(sheets: Evaluations\\)"):
        open_book(wb).read_block("Nope")


def test_read_block_excel_table_extends_to_rows_typed_below_and_reports_merged():
    from openpyxl.worksheet.table import Table

    wb = openpyxl.Workbook()
    ws = wb.active
    for row in [["x", "y", "note"], [1, 2, None], [3, 4, None]]:
        ws.append(row)
    ws.add_table(Table(displayName="T", ref="A1:B3"))
    ws["A4"], ws["B4"] = 5, 6  # typed just below the table: Excel would have extended it
    ws.merge_cells("A2:A3")
    block = open_book(wb).read_block("Sheet")
    assert block.rows == [["x", "y"], [1, 2], [None, 4], [5, 6]]
    assert block.merged == ("A2:A3",) and block.merged_range_of("A3") == "A2:A3" and block.merged_range_of("B3") is None


def test_write_frame_safety_layout_and_replacement(tmp_path):
    wb = openpyxl.Workbook()
    wb.active.title = "Input"
    wb["Input"]["A1"] = "keep"
    backend = OpenpyxlBook(wb)
    frame = pd.DataFrame({"name": ["=1+1", "+SUM(A1)", "-2", "@x", "plain"], "flag": [True, False, False, True, False],
                          "x": [1.5, float("nan"), 2, 3, 4]})
    top = backend.write_frame("Out", frame, preamble=[["xlcalib test", "run 2024"]], highlight="flag")
    path = save_atomically(wb, tmp_path / "o.xlsx")
    ws = openpyxl.load_workbook(path)["Out"]
    assert top == 3 and ws["A1"].font.i and ws["A3"].font.b and ws.freeze_panes == "A4"
    cells = [ws.cell(row=r, column=1) for r in range(4, 9)]
    assert [c.value for c in cells] == ["=1+1", "+SUM(A1)", "-2", "@x", "plain"]
    assert all(c.data_type == "s" for c in cells)  # text, never formulas
    assert ws["C5"].value is None  # NaN -> blank
    assert ws["A4"].fill.fgColor.rgb.endswith("FFC7CE") and ws["A5"].fill.fill_type is None
    backend.write_frame("out", pd.DataFrame({"v": [1]}))  # replaces (case-insensitive), does not add a second sheet
    assert wb.sheetnames == ["Input", "out"] and wb["Input"]["A1"].value == "keep"
    backend.delete_sheet("OUT")
    assert wb.sheetnames == ["Input"]


def test_charts_are_native_with_error_bars(tmp_path):
    wb = new_workbook()
    backend = open_book(wb)
    top = backend.write_frame("S", pd.DataFrame({"who": ["a", "b", "c"], "bias": [0.5, -0.2, -0.3],
                                                 "bound": [0.2, 0.3, 0.1], "raw": [1.0, 2.0, 3.0]}))
    backend.add_chart("S", ChartSpec("column", "Bias", top, 3, 1, (2,), "assessor", "bias", error_column=3))
    backend.add_chart("S", ChartSpec("scatter", "Raw vs bias", top, 3, 4, (2,), anchor="H30"))
    path = save_atomically(wb, tmp_path / "c.xlsx")
    with zipfile.ZipFile(path) as z:
        charts = sorted(n for n in z.namelist() if n.startswith("xl/charts/chart"))
        first, second = (z.read(n).decode() for n in charts)
    assert "<barChart>" in first and '<errValType val="cust" />' in first
    assert "<plus><numRef><f>'S'!$C$2:$C$4</f>" in first and "<minus><numRef><f>'S'!$C$2:$C$4</f>" in first
    assert "<scatterChart>" in second and "<xVal><numRef><f>'S'!$D$2:$D$4</f>" in second
    with pytest.raises(ValueError, match="unknown chart kind"):
        ChartSpec("pie", "x", 1, 1, 1, (2,))


def test_style_cells():
    wb = openpyxl.Workbook()
    backend = open_book(wb)
    wb.active["A1"], wb.active["B2"] = 1, 2
    backend.style_cells("Sheet", "A1:B2", bold=True, fill="FFFF00", number_format="0.00")
    backend.style_cells("Sheet", "B2", italic=True)
    assert wb.active["A1"].font.b and wb.active["B2"].font.i and wb.active["B2"].font.b
    assert wb.active["A2"].number_format == "0.00" and wb.active["B1"].fill.fgColor.rgb.endswith("FFFF00")



def test_open_workbook_refuses_bad_files(tmp_path, monkeypatch):
    with pytest.raises(InputError, match="file not found"):
        open_workbook(tmp_path / "missing.xlsx")
    (tmp_path / "t.xlsx").write_text("hello")
    with pytest.raises(InputError, match="not an Excel workbook"):
        open_workbook(tmp_path / "t.xlsx")
    (tmp_path / "e.xlsx").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 512)  # encrypted = OLE container
    with pytest.raises(InputError, match="password-protected"):
        open_workbook(tmp_path / "e.xlsx")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("hello.txt", "not a workbook inside")
    (tmp_path / "z.xlsx").write_bytes(buf.getvalue())
    with pytest.raises(InputError, match="z.xlsx is not a complete Excel workbook"):
        open_workbook(tmp_path / "z.xlsx")
    good = _saved(tmp_path, openpyxl.Workbook(), "g.xlsx")
    monkeypatch.setattr(reader, "MAX_INPUT_BYTES", 100)
    with pytest.raises(InputError, match="the limit is"):
        open_workbook(good)


def test_hostile_xml_is_refused_by_defusedxml(tmp_path):
    """A 'billion laughs' entity bomb in a workbook part is refused in one line before any parser expands it
    (defusedxml, used by openpyxl, would refuse it as well)."""
    assert openpyxl.DEFUSEDXML
    src = _saved(tmp_path, openpyxl.Workbook(), "src.xlsx")
    bomb = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;">'
            '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;">]>'
            '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="1" uniqueCount="1">'
            '<si><t>&lol3;</t></si></sst>')
    out = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(out, "w") as zout:
        for item in zin.infolist():
            zout.writestr(item, zin.read(item.filename))
        zout.writestr("xl/sharedStrings.xml", bomb)
        # declare the part so openpyxl parses it
    with zipfile.ZipFile(out) as z:
        ct = z.read("[Content_Types].xml").decode()
    if "sharedStrings" not in ct:
        ct = ct.replace("</Types>", '<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
                        'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>')
        data = {}
        with zipfile.ZipFile(out) as z:
            for name in z.namelist():
                data[name] = z.read(name)
        data["[Content_Types].xml"] = ct.encode()
        with zipfile.ZipFile(out, "w") as z:
            for name, blob in data.items():
                z.writestr(name, blob)
    with pytest.raises(InputError, match="bomb.xlsx contains XML entity declarations") as info:
        open_workbook(out)
    assert "\n" not in str(info.value)


def test_atomic_saves_keep_the_previous_file_on_a_crash(tmp_path, monkeypatch):
    target = tmp_path / "out.xlsx"
    target.write_bytes(b"previous")
    book = openpyxl.Workbook()

    def crash(path):
        with open(path, "wb") as handle:
            handle.write(b"partial")
        raise KeyboardInterrupt  # even a hard interruption mid-write

    monkeypatch.setattr(book, "save", crash)
    with pytest.raises(KeyboardInterrupt):
        save_atomically(book, target)
    assert target.read_bytes() == b"previous" and [p.name for p in tmp_path.iterdir()] == ["out.xlsx"]

    def failing_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(openpyxl_backend.os, "replace", failing_replace)
    with pytest.raises(InputError, match="cannot write .*out.xlsx: disk full"):  # one line for the user, not a traceback
        write_bytes_atomically(b"new", target)
    assert target.read_bytes() == b"previous" and [p.name for p in tmp_path.iterdir()] == ["out.xlsx"]


def test_write_values_and_fit_table_fill_an_input_sheet(tmp_path):
    """The import's way into an input sheet: values only (formula-looking text stays text, None clears), and an
    Excel Table grown as Excel grows one (formulas, styles and validation continue; column names follow)."""
    from openpyxl.worksheet.datavalidation import DataValidation
    from openpyxl.worksheet.table import Table

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "List"
    for row in (["Name", "Length"], ["a", "=LEN(A2)"], ["b", "=LEN(A3)"]):
        ws.append(row)
    ws.add_table(Table(displayName="T", ref="A1:B3"))
    dv = DataValidation(type="list", formula1='"a,b,c"')
    ws.add_data_validation(dv)
    dv.add("A2:A3")
    wb.save(tmp_path / "l.xlsx")
    wb = openpyxl.load_workbook(tmp_path / "l.xlsx")
    ws = wb["List"]
    backend = OpenpyxlBook(wb)
    backend.fit_table("list", 5, 2)
    table = ws.tables["T"]
    assert table.ref == "A1:B5" and ws["B5"].value == "=LEN(A5)"
    assert "A4:A5" in str(ws.data_validations.dataValidation[0].sqref)
    backend.write_values("List", 4, 1, [["=SUM(1)"], ["c"]])
    assert ws["A4"].value == "=SUM(1)" and ws["A4"].data_type == "s"
    backend.write_values("List", 2, 1, [[None], ["x"]])
    assert ws["A2"].value is None and ws["A3"].value == "x"
    backend.write_values("List", 1, 1, [["Who"]])
    backend.fit_table("List", 5, 3)
    backend.write_values("List", 1, 3, [["Note"]])
    assert [c.name for c in table.tableColumns] == ["Who", "Length", "Note"] and table.ref == "A1:C5"
    backend.fit_table("List", 2, 1)  # never shrinks
    assert table.ref == "A1:C5"
    wb.save(tmp_path / "l2.xlsx")
    again = openpyxl.load_workbook(tmp_path / "l2.xlsx")["List"]
    assert [c.name for c in again.tables["T"].tableColumns] == ["Who", "Length", "Note"]
