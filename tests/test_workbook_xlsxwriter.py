"""The XlsxWriter backend (new result files): the same look as the openpyxl rendering of the same SheetSpecs,
cell by cell; text never becomes a formula; sheets beyond Excel's grid are refused (before the fit on the
command line), never cut; the command line writes its result files with it."""
from __future__ import annotations

import datetime
import re

import numpy as np
import openpyxl
import pandas as pd
import pytest

import xlcalib
from xlcalib.cli import main
from xlcalib.exercises import (
    RESIDUALS_COLUMNS,
    CalibrationSettings,
    calibrate_file,
    compute_calibration,
    write_calibration,
)
from xlcalib.workbook import XlsxWriterBook, new_workbook, open_book, save_atomically
from xlcalib.workbook.base import ChartSpec, RefLine, SheetSpec
from xlcalib.workbook.xlsxwriter_backend import excel_pixels

from .test_presentation import NOW, _demo_book


def _look(cell):
    """What a reader sees of a cell: value, number format (of numbers), font, fill, bottom border, alignment,
    comment."""
    f, a, fill, bottom = cell.font, cell.alignment, cell.fill, cell.border.bottom
    number = isinstance(cell.value, (int, float)) and not isinstance(cell.value, bool)
    colour = bottom.color.rgb[-6:] if bottom.style and bottom.color is not None and isinstance(bottom.color.rgb, str) \
        else None
    return (cell.value, cell.number_format if number else None, f.name, f.sz, bool(f.b), bool(f.i),
            fill.fill_type, fill.fgColor.rgb[-6:] if fill.fill_type else None, bottom.style,
            colour if bottom.style == "thick" else None, a.horizontal, a.indent, bool(a.wrap_text),
            None if a.vertical in (None, "bottom") else a.vertical,
            (cell.comment.text, cell.comment.author, cell.comment.width, cell.comment.height) if cell.comment else None)


def _widths(ws) -> dict[int, float]:
    """Column widths by column number (a <col> element may span several equal columns)."""
    out = {}
    for dim in ws.column_dimensions.values():
        if dim.customWidth and dim.min:
            for j in range(dim.min, dim.max + 1):
                out[j] = dim.width
    return out


def _chart(c):
    def text(t):
        return None if t is None or t.tx is None or t.tx.rich is None else "".join(r.t for p in t.tx.rich.p for r in p.r or [])

    def name(s):
        return s.tx.v if s.tx.v is not None else s.tx.strRef.f.replace("'", "").replace("$", "")

    fmt = c.y_axis.numFmt.formatCode if c.y_axis.numFmt is not None else "General"
    return (type(c).__name__, getattr(c, "type", None), text(c.title), text(c.x_axis.title), text(c.y_axis.title),
            c.x_axis.scaling.min, c.x_axis.scaling.max, c.y_axis.scaling.min, c.y_axis.scaling.max,
            getattr(c.x_axis, "majorUnit", None), fmt, c.legend.position if c.legend is not None else None,
            c.x_axis.majorGridlines is not None, c.y_axis.majorGridlines is not None,
            [name(s) for s in c.series], [s.errBars is not None for s in c.series],
            [s.marker.symbol if s.marker is not None else None for s in c.series],
            (c.anchor._from.col, c.anchor._from.row))


def _print(ws):
    p = ws.page_setup
    return (p.orientation, int(p.paperSize), int(p.fitToWidth or 1), 1 if p.fitToHeight is None else int(p.fitToHeight),
            ws.print_area,  # an absent fitToHeight means its default, one page
            ws.sheet_properties.pageSetUpPr.fitToPage, ws.oddFooter.center.text, bool(ws.print_options.gridLines),
            [b.id for b in ws.row_breaks.brk], ws.freeze_panes, ws.print_title_rows)


def test_result_file_looks_like_the_openpyxl_rendering(tmp_path):
    wb, _ = _demo_book()
    wb["Evaluations"]["C6"] = 30.0  # a flagged read: a highlighted Residuals row
    run, frames, settings = compute_calibration(wb, CalibrationSettings(fund_top_k=15, draws=2000))
    result = run.result
    paths = {}
    for kind, book in (("openpyxl", new_workbook()), ("xlsxwriter", XlsxWriterBook())):
        write_calibration(book, run, frames, settings, now=NOW, feedback=True)
        paths[kind] = save_atomically(book, tmp_path / f"{kind}.xlsx")
    a, b = (openpyxl.load_workbook(paths[k]) for k in ("openpyxl", "xlsxwriter"))
    assert a.sheetnames == b.sheetnames and a.active.title == b.active.title == "Ranking"
    assert [ws.title for ws in b.worksheets if ws.sheet_view.tabSelected] == ["Ranking"]
    looked_at = 0
    for name in a.sheetnames:
        wa, wb_ = a[name], b[name]
        looked_at += _cells_look_alike(wa, wb_, name)
        # widths: the same pixels on screen (XlsxWriter stores whole pixels)
        assert _widths(wa).keys() == _widths(wb_).keys(), name
        for j, width in _widths(wa).items():
            assert excel_pixels(width) == excel_pixels(_widths(wb_)[j]), (name, j)
        heights = {r: d.height for r, d in wa.row_dimensions.items() if d.height}
        assert {r: d.height for r, d in wb_.row_dimensions.items() if d.height}.keys() == heights.keys(), name
        for r, h in heights.items():  # whole pixels again: within 0.75 pt, never shorter than the text needs
            assert abs(wb_.row_dimensions[r].height - h) <= 0.75, (name, r)
        assert _print(wa) == _print(wb_), name
        assert [_chart(c) for c in wa._charts] == [_chart(c) for c in wb_._charts], name
    assert looked_at > 1000
    flagged = [c for c in b["Residuals"]["A"] if c.fill.fill_type and c.fill.fgColor.rgb.endswith("FFC7CE")]
    assert flagged  # the highlighted read is there to compare


def test_text_stays_text_and_odd_values_are_shown(tmp_path):
    frame = pd.DataFrame({"name": ["=SUM(1)", "+1", "-x", "@f", "", None],
                          "value": [1.5, np.nan, np.inf, -np.inf, 2.0, 3.0],
                          "count": pd.array([1, 2, None, 4, 5, 6], dtype="Int64"),
                          "when": [datetime.date(2024, 5, 1)] * 6,
                          "flag": [True, False, True, False, True, False]})
    book = XlsxWriterBook()
    top = open_book(book).write_frame("Odd", frame, preamble=[["xlcalib test"]])
    path = save_atomically(book, tmp_path / "odd.xlsx")
    ws = openpyxl.load_workbook(path)["Odd"]
    body = [[c.value for c in r] for r in ws.iter_rows(min_row=top + 1)]
    assert [r[0] for r in body] == ["=SUM(1)", "+1", "-x", "@f", None, None]
    assert all(ws.cell(top + 1 + i, 1).data_type == "s" for i in range(4))  # text, not formulas
    assert [r[1] for r in body] == [1.5, None, "inf", "-inf", 2.0, 3.0]  # no cell a spreadsheet cannot open
    assert [r[2] for r in body] == [1, 2, None, 4, 5, 6] and ws.cell(top + 1, 3).number_format == "0"
    assert body[0][3] == datetime.datetime(2024, 5, 1) and ws.cell(top + 1, 4).number_format == "yyyy-mm-dd"
    assert [r[4] for r in body] == [True, False] * 3


def test_sheets_are_replaced_deleted_and_refused_before_writing(monkeypatch, tmp_path):
    from xlcalib.workbook import base

    book = XlsxWriterBook()
    backend = open_book(book)
    backend.write_frame("Residuals", pd.DataFrame({"x": [1.0]}))
    backend.write_frame("Other", pd.DataFrame({"y": [2.0]}))
    monkeypatch.setattr(base, "EXCEL_MAX_ROWS", 5)
    with pytest.raises(xlcalib.InputError, match="sheet Residuals would need 8 rows x 1 columns.*--format csv"):
        backend.write_frame("Residuals", pd.DataFrame({"x": np.arange(5.0)}), preamble=[["a"]])
    assert book.specs["Residuals"].frame["x"].tolist() == [1.0]  # the previous sheet is untouched
    backend.write_frame("residuals", pd.DataFrame({"x": [3.0]}))  # replaced (names match case-insensitively)
    backend.delete_sheet("OTHER")
    assert backend.sheet_names() == ["residuals"] and backend.read_block("Residuals").rows == [["x"], [3.0]]
    with pytest.raises(TypeError, match="SheetSpec"):
        backend.style_cells("residuals", "A1", bold=True)
    ws = openpyxl.load_workbook(save_atomically(book, tmp_path / "r.xlsx"))["residuals"]
    assert [c.value for c in ws["A"]] == ["x", 3.0]


def test_long_sheets_are_written_in_blocks_of_rows(monkeypatch, tmp_path):
    """Rows are converted a block at a time (bounded memory); block edges change nothing."""
    from xlcalib.workbook import xlsxwriter_backend

    frame = pd.DataFrame({"who": [f"A{i % 7}" for i in range(25)], "score": np.linspace(0, 1, 25),
                          "bad": np.arange(25) % 4 == 0})
    paths = []
    for chunk in (10_000, 7):
        monkeypatch.setattr(xlsxwriter_backend, "CHUNK_ROWS", chunk)
        book = XlsxWriterBook()
        book.write_sheet(SheetSpec("R", frame, [["xlcalib"]], highlight="bad", line_after=10))
        paths.append(save_atomically(book, tmp_path / f"r{chunk}.xlsx"))
    a, b = (openpyxl.load_workbook(p)["R"] for p in paths)
    for ra, rb in zip(a.iter_rows(), b.iter_rows()):
        assert [_look(c) for c in ra] == [_look(c) for c in rb]
    assert a.cell(4, 1).fill.fgColor.rgb.endswith("FFC7CE") and a.cell(14, 2).border.bottom.style == "thick"


def test_a_panel_beyond_excel_rows_is_refused_before_the_fit(tmp_path, monkeypatch, capsys):
    """The Residuals sheet holds one row per evaluation: told before the fit, with the way out; CSV still works."""
    from xlcalib.exercises import panel_calibration
    from xlcalib.workbook import base

    wb, evaluations = _demo_book()
    src = save_atomically(wb, tmp_path / "panel.xlsx")
    out = tmp_path / "fits.xlsx"
    assert main(["calibrate", str(src), "-o", str(out)]) == 0
    capsys.readouterr()
    needed = openpyxl.load_workbook(out)["Residuals"].max_row  # the lines above the table (wrapped), a blank, the header
    limit = needed - 1  # one row short of what the sheet needs
    monkeypatch.setattr(base, "EXCEL_MAX_ROWS", limit)
    fitted = []
    real_fit = panel_calibration.run_calibration
    monkeypatch.setattr(panel_calibration, "run_calibration", lambda *a, **k: fitted.append(1) or real_fit(*a, **k))
    assert main(["calibrate", str(src), "-o", str(tmp_path / "out.xlsx")]) == 2
    err = capsys.readouterr().err
    assert (f"sheet Residuals would need {needed:,} rows x {RESIDUALS_COLUMNS} columns; an Excel sheet "
            f"holds {limit:,}") in err and "--format csv" in err
    assert not fitted and not (tmp_path / "out.xlsx").exists()
    # the same numbers as the sheet itself would give (the column count cannot drift from the real sheet)
    run, frames, settings = compute_calibration(wb)
    result = run.result
    with pytest.raises(xlcalib.InputError) as late:
        write_calibration(XlsxWriterBook(), run, frames, settings, now=NOW)
    assert f"would need {needed:,} rows x {RESIDUALS_COLUMNS} columns" in late.value.message
    assert main(["calibrate", str(src), "--format", "csv", "-o", str(tmp_path / "csv")]) == 0


def test_command_line_result_files_are_streamed_by_xlsxwriter(tmp_path):
    wb, evaluations = _demo_book()
    src = save_atomically(wb, tmp_path / "panel.xlsx")
    _, out = calibrate_file(src, tmp_path / "out.xlsx")
    import zipfile

    with zipfile.ZipFile(out) as z:  # streamed row by row: text inline, no shared-strings table held in memory
        assert 'inlineStr' in z.read("xl/worksheets/sheet1.xml").decode()
        assert "xl/sharedStrings.xml" not in z.namelist()
    residuals = openpyxl.load_workbook(out)["Residuals"]
    header = next(r for r in range(1, 12) if residuals.cell(r, 1).value == "assessor")
    assert residuals.max_row == len(evaluations) + header and residuals.freeze_panes == f"A{header + 1}"


def _cells_look_alike(wa, wb_, name: str) -> int:
    """Assert every cell of two renderings of sheet *name* looks the same (:func:`_look`); the cells compared."""
    rows, cols = max(wa.max_row, wb_.max_row), max(wa.max_column, wb_.max_column)
    looked_at = 0
    for ra, rb in zip(wa.iter_rows(max_row=rows, max_col=cols), wb_.iter_rows(max_row=rows, max_col=cols)):
        for ca, cb in zip(ra, rb):
            look_a, look_b = _look(ca), _look(cb)
            if type(look_a[0]) is float and type(look_b[0]) is float:  # openpyxl writes 16 digits, the rows
                # assembled by polars the double itself: the same number to the 16th digit
                assert look_a[0] == pytest.approx(look_b[0], rel=1e-15, abs=1e-300), (name, ca.coordinate)
                look_a, look_b = look_a[1:], look_b[1:]
            assert look_a == look_b, (name, ca.coordinate)
            looked_at += 1
    return looked_at


def _sheet_xml(path) -> dict[str, bytes]:
    import zipfile

    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist() if n.startswith("xl/worksheets/") or n == "xl/styles.xml"}


def _sixteen_digits(xml: bytes) -> bytes:
    """The sheet XML with each number's text as 16 significant digits of the double it reads back as (what XlsxWriter
    and openpyxl write for that double)."""
    return re.sub(rb"<v>([^<]*)</v>", lambda m: b"<v>%s</v>" % (b"%.16G" % float(m.group(1))), xml)


@pytest.mark.parametrize("by_polars", [True, False], ids=["polars", "python"])
def test_rows_written_as_xml_equal_xlsxwriters_own_byte_for_byte(monkeypatch, tmp_path, by_polars):
    """The fast row writer writes what XlsxWriter writes, cell by cell: the whole calibration result (highlights,
    the funding line, chart points beside the rows) and odd cells (escapes, spaces, logicals, infinities, huge
    integers, blanks, block edges).  Assembled by polars, a number's text is the shortest that reads back as the
    same double, where XlsxWriter keeps 16 digits: the bytes are the same once both say 16 digits, and every
    number read back is the double computed."""
    from xlcalib.workbook import xlsxwriter_backend

    if by_polars:
        monkeypatch.setattr(xlsxwriter_backend, "POLARS_BLOCK_ROWS", 1)
    else:
        monkeypatch.setattr(xlsxwriter_backend, "polars_or_none", lambda: None)

    wb, _ = _demo_book()
    wb["Evaluations"]["C6"] = 30.0
    run, frames, settings = compute_calibration(wb, CalibrationSettings(fund_top_k=15, draws=500))
    result = run.result
    odd = pd.DataFrame({
        "name": ["a & b <c>", " lead", "trail ", "_x0041_ literal", "tab\there", "ctl\x01x", "", None, "=1+2",
                 "ünï€ode", "\ufffe", "x" * 40] * 3,
        "value": [1.5, np.nan, np.inf, -np.inf, 0.1 + 0.2, 1e-300, -0.0, 123456789.123456789, 2.0, 3.0, 4.0, 5.0] * 3,
        "big": [12345678901234567890 // (i + 1) for i in range(36)],
        "flag": [True, False, True] * 12,
        "look": [i % 5 == 0 for i in range(36)],
        "note": ["short"] * 20 + ["a note long enough to wrap over several lines of its column " * 4] * 2 + ["x"] * 14,
        # columns of text alone: one with escapes, one without (spaces at the ends, other Unicode spaces)
        "escaped": ["a & b", " lead", "trail ", "plain", "_x0041_", "tab\tx", "nbsp\u00a0", "\u2028x", "line\n", "ok\ufffe",
                    "\x1fz", "<b>"] * 3,
        "clean": [" lead", "trail ", "plain", "x\u00a0", "\nnew", "mid dle"] * 6,
        "gaps": ["x", "", "y & z", "", " w"] * 7 + ["v"],  # text and empty text, nothing else
        "count": list(range(-3, 33)),
        "exact": [0.1 + 0.2, 1e-7, 3.0, -0.0, 1e16, 2.5e-300, 123456789.123456789, 1 / 3, 5e-324, 1.7976931348623157e308,
                  -2.0, 0.5] * 3})
    written = []
    original = xlsxwriter_backend._RowXml.write

    def counted(self, first, values, *args):
        done = original(self, first, values, *args)
        written.append((self.ws.name, len(values[0])) if done else None)
        return done

    monkeypatch.setattr(xlsxwriter_backend._RowXml, "write", counted)
    extra_rows = []
    original_extra = xlsxwriter_backend._RowXml._extra_cells

    def extra_counted(row, cells):
        extra_rows.append(row)
        return original_extra(row, cells)

    monkeypatch.setattr(xlsxwriter_backend._RowXml, "_extra_cells", staticmethod(extra_counted))
    outputs = []
    for fast in (10**9, 0):
        monkeypatch.setattr(xlsxwriter_backend, "FAST_ROWS", fast)
        monkeypatch.setattr(xlsxwriter_backend, "CHUNK_ROWS", 7)
        book = XlsxWriterBook()
        write_calibration(book, run, frames, settings, now=NOW, feedback=True)
        chart = ChartSpec("scatter", "value by big", 3, len(odd), 3, (2,), anchor="N6",
                          ref_lines=(RefLine("y = x", (0.0, 1.0), (0.0, 1.0)), RefLine("line 2", (1, 2), (3, 4))))
        book.write_sheet(SheetSpec("Odd", odd, [["xlcalib test"]], highlight="flag", mark="look", line_after=4,
                                   charts=[chart]))
        outputs.append(_sheet_xml(save_atomically(book, tmp_path / f"fast{fast}.xlsx")))
    slow, fast = outputs
    if by_polars:
        assert any(b"<v>0.30000000000000004</v>" in xml for xml in fast.values())  # 0.1 + 0.2, not 0.3
        exact = [float(v) for xml in fast.values() for v in re.findall(rb"<v>([^<]*)</v>", xml)]
        assert len(exact) > 500 and any(b"%.16G" % v != b"%r" % v for v in exact)
        fast = {name: _sixteen_digits(xml) for name, xml in fast.items()}  # as XlsxWriter formats the same doubles
    sheets = {w[0] for w in written if w}
    assert {"Odd", "Residuals", "Values", "Ranking"} <= sheets  # the rows were written here, not by XlsxWriter
    assert sum(n for w in written if w and w[0] == "Odd" for n in [w[1]]) == len(odd)
    assert extra_rows == [6, 7, 8, 9]  # the chart's reference-line points, merged into the rows written here
    assert slow.keys() == fast.keys() and len(slow) > 8
    for name in slow:
        assert fast[name] == slow[name], name
    assert any(xml.count(b'customHeight="1"') >= 3 for xml in fast.values())  # wrapped data rows written here too


def test_fast_rows_look_like_the_openpyxl_rendering(monkeypatch, tmp_path):
    from xlcalib.workbook import xlsxwriter_backend

    monkeypatch.setattr(xlsxwriter_backend, "FAST_ROWS", 0)
    test_result_file_looks_like_the_openpyxl_rendering(tmp_path)


def test_the_zip_is_compressed_quickly_and_the_library_left_as_it_was():
    """XlsxWriter's zip takes the quick level only while a book closes (zlib level 6 took 6.5 s of a
    3 x 10^5-evaluation run's 270 MB of XML; level 1 2.4 s), and XlsxWriter's own ZipFile is back afterwards."""
    import io
    import zipfile

    import xlsxwriter.workbook

    from xlcalib.workbook import xlsxwriter_backend

    assert xlsxwriter.workbook.ZipFile is zipfile.ZipFile
    with xlsxwriter_backend._quick_compression():
        assert xlsxwriter.workbook.ZipFile(io.BytesIO(), "w").compresslevel == xlsxwriter_backend.ZIP_LEVEL == 1
    assert xlsxwriter.workbook.ZipFile is zipfile.ZipFile
    with pytest.raises(RuntimeError), xlsxwriter_backend._quick_compression():
        raise RuntimeError("stopped while writing")
    assert xlsxwriter.workbook.ZipFile is zipfile.ZipFile


@pytest.mark.parametrize("with_isal", [True, False])
def test_the_zip_deflates_with_isal_where_installed_and_zlib_without(monkeypatch, with_isal):
    """Members written by write() and writestr() come back whole through zipfile's own reader (its CRC check),
    deflated by ISA-L where python-isal is installed (faster, the same format) and by zlib without it."""
    import io
    import zipfile

    from xlcalib.workbook import xlsxwriter_backend

    if with_isal:
        pytest.importorskip("isal")
    else:
        monkeypatch.setattr(xlsxwriter_backend, "_isal_deflate", lambda: None)
    made = []
    real = xlsxwriter_backend._isal_deflate()
    if real is not None:
        class Counting:
            @staticmethod
            def compressobj(*args):
                made.append(args)
                return real.compressobj(*args)
        monkeypatch.setattr(xlsxwriter_backend, "_isal_deflate", lambda: Counting)
    rng = np.random.default_rng(0)
    text = "".join(f'<c r="A{i}"><v>{x:.16G}</v></c>' for i, x in enumerate(rng.normal(size=20_000))).encode()
    buffer = io.BytesIO()
    with xlsxwriter_backend._QuickZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("xl/worksheets/sheet1.xml", text)
        archive.writestr(zipfile.ZipInfo("stored.txt"), b"kept as it is")  # ZIP_STORED: no compressor at all
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as archive:
        assert archive.testzip() is None
        assert archive.read("xl/worksheets/sheet1.xml") == text and archive.read("stored.txt") == b"kept as it is"
        assert archive.getinfo("xl/worksheets/sheet1.xml").compress_size < len(text) / 2
    assert made == ([(xlsxwriter_backend.ZIP_LEVEL, zipfile.ZIP_DEFLATED, -15)] if with_isal else [])


def test_rows_are_written_by_python_when_polars_fails(monkeypatch, tmp_path):
    """A polars release whose API moved must not cost the result file: the block is written as Python writes it,
    byte for byte XlsxWriter's."""
    from xlcalib.workbook import xlsxwriter_backend

    frame = pd.DataFrame({"object": [f"P{i}" for i in range(300)], "value": np.linspace(0, 1, 300),
                          "reads": np.arange(300)})
    monkeypatch.setattr(xlsxwriter_backend, "FAST_ROWS", 0)
    outputs = []
    for broken in (False, True):
        if broken:
            def fail(*_args, **_kwargs):
                raise AttributeError("polars moved")

            monkeypatch.setattr(xlsxwriter_backend, "_block_by_polars", fail)
        else:
            monkeypatch.setattr(xlsxwriter_backend, "polars_or_none", lambda: None)
        book = XlsxWriterBook()
        book.write_sheet(SheetSpec("Values", frame, [["xlcalib test"]]))
        outputs.append(_sheet_xml(save_atomically(book, tmp_path / f"broken{broken}.xlsx")))
        monkeypatch.undo()
        monkeypatch.setattr(xlsxwriter_backend, "FAST_ROWS", 0)
    assert outputs[0] == outputs[1]
