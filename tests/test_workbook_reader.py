"""The one bounded input reader: fast values (python-calamine), marks from the scan, hostile files refused."""
from __future__ import annotations

import datetime
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest
from openpyxl.worksheet.table import Table

from xlcalib.cli import main
from xlcalib.errors import InputError
from xlcalib.workbook import reader
from xlcalib.workbook.reader import FastBook

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_files import ods, stray_cell, zip_bomb  # noqa: E402

#: Address-space limit for the hostile-file subprocesses: the interpreter with numpy, pandas, openpyxl and
#: calamine loaded takes ~300 MB of it; the documented bound for a refusal is "a few hundred MB".
MEMORY_LIMIT = 768 * 2**20


def _run_limited(args: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``xlcalib`` in a subprocess under RLIMIT_AS (a MemoryError or a kill would fail the test)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    code = "import sys; from xlcalib.cli import main; raise SystemExit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], preexec_fn=limit, capture_output=True, text=True,
                          timeout=timeout, env=env)


def _book(path, rows, sheet="Evaluations"):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = sheet
    for row in rows:
        ws.append(row)
    wb.save(path)
    return path


def test_fast_reader_block_table_merged_hidden_errors_and_uncalculated(tmp_path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Evaluations"
    ws["B3"], ws["C3"], ws["D3"], ws["E3"] = "Assessor", "Object", "Score", "SD"
    ws.append([None, "A", "x", 5, 1])
    ws.append([None, "A", "y", "=D4*2", True])
    ws.append([None, 3, "z", datetime.datetime(2024, 1, 1), "#N/A"])
    ws.append([None, "B", "q", 4.0, "3,5"])
    ws.merge_cells("B8:B9")
    ws["B8"] = "M"
    ws.row_dimensions[5].hidden = True
    ws.add_table(Table(displayName="T1", ref="B3:E7"))
    ws["H1"] = "a note beside the table"
    wb.save(tmp_path / "p.xlsx")
    book = FastBook(tmp_path / "p.xlsx")
    block = book.read_block("evaluations")
    assert (block.first_row, block.first_column, block.sheet) == (3, 2, "Evaluations")
    assert block.rows[0] == ["Assessor", "Object", "Score", "SD"]  # the table's columns, not the note in H1
    assert block.rows[1] == ["A", "x", 5.0, 1.0]
    assert repr(block.rows[2][2]) == "Uncalculated('D4*2')" and block.rows[3][3] == "#N/A"
    assert block.rows[5][0] == "M"  # a row typed just below the table belongs to it
    assert block.merged == ("B8:B9",) and block.hidden_rows == (5,)
    with pytest.raises(InputError, match="no sheet named 'Nope'"):
        book.read_block("Nope")
    book.close()


def test_formula_without_cached_value_is_named_as_such(tmp_path, capsys):
    path = _book(tmp_path / "f.xlsx", [["Assessor", "Object", "Score", "SD"], ["A", "x", 5, 1], ["A", "y", "=C2+1", 1],
                                       ["B", "x", 6, 1], ["B", "y", 7, 1]])
    assert main(["calibrate", str(path)]) == 2
    err = capsys.readouterr().err
    assert ("sheet Evaluations, row 3, column Score (C3) is a formula whose value was never calculated (open and save "
            "the file in Excel, or enter the value)") in err
    assert "blank" not in err


def test_merged_cells_are_explained(tmp_path, capsys):
    path = tmp_path / "m.xlsx"
    _book(path, [["Assessor", "Object", "Score", "SD"], ["A", "x", 5, 1], [None, "y", 6, 1], ["B", "x", 6, 1]])
    wb = openpyxl.load_workbook(path)
    wb.active.merge_cells("A2:A3")
    wb.save(path)
    assert main(["calibrate", str(path)]) == 2
    assert ("row 3, column Assessor (A3) is blank; a name or id is required (the cell is inside merged cells A2:A3: "
            "unmerge them and fill in every row)") in capsys.readouterr().err


def test_stray_far_cells_are_read_by_data(tmp_path):
    far_column = stray_cell(tmp_path / "xfd.xlsx", "XFD1048576", rows=20)
    block = FastBook(far_column).read_block("Evaluations")
    assert len(block.rows) == 22 and block.row_numbers[-1] == 1_048_576 and block.column_numbers[-1] == 16_384
    proc = _run_limited(["calibrate", str(far_column), "--format", "json", "-o", str(tmp_path / "r.json")])
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "r.json").read_text())["stats"]["n_evaluations"] == 20
    # a stray cell in a used column is a partly filled row, named by cell
    in_column = stray_cell(tmp_path / "d.xlsx", "D1048576", rows=20)
    proc = _run_limited(["calibrate", str(in_column)])
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "sheet Evaluations, row 1048576, column Assessor (A1048576) is blank" in proc.stderr


def test_zip_bomb_is_refused_with_bounded_memory(tmp_path):
    bomb = zip_bomb(tmp_path / "bomb.xlsx", cells=9_000_000)
    assert bomb.stat().st_size < 2_000_000
    proc = _run_limited(["calibrate", str(bomb)])
    assert proc.returncode == 2, proc.stderr
    assert "holds more than" in proc.stderr and "the limit is 8,388,608 cells a sheet" in proc.stderr
    assert "MemoryError" not in proc.stderr and "Traceback" not in proc.stderr
    proc = _run_limited(["report", "calibration", str(bomb), "-o", str(tmp_path / "rep.xlsx")])  # openpyxl path too
    assert proc.returncode == 2 and "the limit is 8,388,608 cells" in proc.stderr


def test_declared_part_sizes_are_bounded(tmp_path, monkeypatch):
    path = _book(tmp_path / "p.xlsx", [["Assessor", "Object", "Score", "SD"], ["A", "x", 5, 1]])
    monkeypatch.setattr(reader, "MAX_SHEET_XML_BYTES", 100)
    with pytest.raises(InputError, match=r"a worksheet part \(xl/worksheets/sheet1.xml\) expands to .* the limit is"):
        FastBook(path)
    monkeypatch.setattr(reader, "MAX_SHEET_XML_BYTES", 512 * 2**20)
    monkeypatch.setattr(reader, "MAX_UNCOMPRESSED_BYTES", 1000)
    with pytest.raises(InputError, match="when unzipped; the limit is"):
        FastBook(path)


def test_ods_is_read_and_repeat_bombs_refused(tmp_path, capsys):
    rows = [["Assessor", "Object", "Score", "SD"], ["A", "x", 5, 1], ["A", "y", 7, 1], ["B", "x", 6, 1], ["B", "y", 8, 1]]
    path = ods(tmp_path / "p.ods", rows)
    assert main(["calibrate", str(path), "--format", "json", "-o", str(tmp_path / "r.json")]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["stats"]["n_evaluations"] == 4
    bomb = ods(tmp_path / "b.ods", rows, repeat_rows=1_000_000, repeat_columns=16)  # 16 M cells from one row
    assert main(["calibrate", str(bomb)]) == 2
    assert "the limit is 8,388,608 cells" in capsys.readouterr().err


def test_large_panel_read_equals_openpyxl(tmp_path):
    import numpy as np
    import pandas as pd

    from xlcalib.inputs import read_panel

    rng = np.random.default_rng(3)
    n = 3000
    frame = pd.DataFrame({"Assessor": [f"A{i % 40}" for i in range(n)], "Object": [f"O{i // 3}" for i in range(n)],
                          "Score": np.round(rng.normal(5, 1.5, n), 2), "SD": rng.choice([0.5, 1.0, 2.0], n)})
    frame.to_excel(tmp_path / "big.xlsx", sheet_name="Evaluations", index=False)
    panel = read_panel(FastBook(tmp_path / "big.xlsx"))
    assert not panel.problems
    expected = frame.rename(columns=str.lower)
    pd.testing.assert_frame_equal(panel.frame, expected, check_dtype=False)
    assert panel.sheet_rows.tolist() == list(range(2, n + 2))
