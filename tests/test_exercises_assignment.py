"""``xlcalib assign panel.xlsx``: Assignment sheet -> Evaluations rows + Design sheet; scored rows never touched."""
from __future__ import annotations

import hashlib

import numpy as np
import openpyxl
import pandas as pd
import pytest

from xlcalib.cli import main
from xlcalib.calibration import design_report, overlap_verdict
from xlcalib.presentation import stat_verdict
from xlcalib.templates import build


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def panel(tmp_path):
    path = tmp_path / "panel.xlsx"
    build("panel_calibration", path, assessors=6, objects=12, reads=2, assignment=True)
    return path


def _evaluations(path):
    ws = openpyxl.load_workbook(path)["Evaluations"]
    rows = [[c.value for c in row] for row in ws.iter_rows(min_row=2, max_col=4)]
    return pd.DataFrame(rows, columns=["assessor", "object", "score", "level"]).dropna(subset=["assessor"])


def _design(path):
    """(comparison table, trade-off table) of the Design sheet."""
    ws = openpyxl.load_workbook(path)["Design"]
    assert ws["A1"].value.startswith("Allocation of 24 reads") and ws["A2"].value.startswith("It keeps")
    rows = [[c.value for c in row] for row in ws.iter_rows()]
    start = next(i for i, r in enumerate(rows) if r[0] == "statistic")
    table = pd.DataFrame([r[:4] for r in rows[start + 1:]], columns=rows[start][:4]).set_index("statistic")
    top = next(i for i, r in enumerate(rows) if r[0] == "minimum share")
    stop = next(i for i in range(top + 1, len(rows)) if rows[i][0] is None)
    return table, pd.DataFrame(rows[top + 1:stop], columns=[c or "chosen" for c in rows[top]])


def _set_subjects(path, assessor_tags, object_tags):
    wb = openpyxl.load_workbook(path)
    ws = wb["Assignment"]
    for i, tags in enumerate(assessor_tags, start=2):
        ws.cell(row=i, column=4, value=tags)
    for i, tags in enumerate(object_tags, start=2):
        ws.cell(row=i, column=8, value=tags)
    wb.save(path)


def test_assign_fills_evaluations_and_design_sheet(panel, capsys):
    areas = ["math", "physics", "chemistry"]
    _set_subjects(panel, [f"{areas[i % 3]}; {areas[(i + 1) % 3]}" if i == 0 else areas[i % 3] for i in range(6)],
                  [areas[j % 3] for j in range(12)])
    before = _digest(panel)
    assert main(["assign", str(panel), "--share", "0.9"]) == 0  # 0.95 cannot link chemistry (it costs 2 of 24)
    out = panel.with_name("panel_assigned.xlsx")
    assert _digest(panel) == before  # the input is never modified
    ev = _evaluations(out)
    assert len(ev) == 24 and ev["score"].isna().all() and ev["level"].isna().all()
    assert (ev.groupby("object").size() == 2).all()
    assert not ev.duplicated(["assessor", "object"]).any()
    assert ev.groupby("assessor").size().max() <= 5  # template max load = ceil(24/6) + 1
    # the Design sheet's figures are the core's
    tags_a = [{areas[0], areas[1]}] + [{areas[i % 3]} for i in range(1, 6)]
    tags_o = [{areas[j % 3]} for j in range(12)]
    S = np.array([[len(a & o) for o in tags_o] for a in tags_a], dtype=float)
    design, tradeoff = _design(out)
    rep = design_report(ev[["assessor", "object"]], [f"Assessor {i}" for i in range(1, 7)],
                        [f"Object {j}" for j in range(1, 13)], suitability=S)
    assert design.loc["mu2", "this allocation"] == pytest.approx(rep.mu2, abs=1e-12)
    assert design.loc["assessor overlap", "this allocation"] == overlap_verdict(rep.mu2)
    # the trade-off the secretary chooses from: every share, the chosen one marked, the same words as calibrate
    assert list(tradeoff["minimum share"]) == [1.0, 0.95, 0.9, 0.85, 0.8]
    assert list(tradeoff["chosen"].fillna("")) == ["", "", "<- this allocation", "", ""]
    assert (tradeoff["suitability kept"] >= tradeoff["minimum share"] - 1e-9).all()
    assert tradeoff["mu2"].is_monotonic_increasing and tradeoff["mu2"].iloc[-1] > tradeoff["mu2"].iloc[0]
    assert all(v == stat_verdict("mu2", m) for v, m in zip(tradeoff["assessor overlap"], tradeoff["mu2"]))
    assert tradeoff.loc[2, "mu2"] == pytest.approx(rep.mu2, abs=1e-4)
    assert design.loc["total suitability", "this allocation"] == pytest.approx(rep.total_suitability)
    assert design.loc["connected components", "this allocation"] == rep.n_components == 1
    reads = design.loc["reads", "this allocation"]  # counts are whole numbers, shown without decimals
    assert isinstance(reads, int) and reads == 24
    ws = openpyxl.load_workbook(out)["Design"]
    cell = next(r[1] for r in ws.iter_rows() if r[0].value == "reads")
    from xlcalib.workbook.base import shown_text

    assert shown_text(cell.value, cell.number_format) == "24"
    assert "suitability only" in design.columns
    assert design.loc["connected components", "suitability only"] >= 2
    assert design.loc["suitability share", "this allocation"] >= 0.9
    printed = capsys.readouterr().out
    assert "suitability: shared subject tags" in printed
    assert f"assessor overlap mu2 = {rep.mu2:.3f}: {overlap_verdict(rep.mu2)}" in printed
    assert "Trade-off (suitability kept -> mu2, assessor overlap): 100% -> 0.00 poor" in printed


def test_rerun_keeps_scored_rows_and_allocates_the_rest(panel):
    assert main(["assign", str(panel), "-o", str(panel.with_name("first.xlsx"))]) == 0
    first = panel.with_name("first.xlsx")
    wb = openpyxl.load_workbook(first)
    ws = wb["Evaluations"]
    scored = {}
    for r in (2, 5, 9):  # score three pending rows
        ws.cell(row=r, column=3, value=7.0)
        ws.cell(row=r, column=4, value="High")
        scored[r] = (ws.cell(row=r, column=1).value, ws.cell(row=r, column=2).value)
    wb.save(first)
    assert main(["assign", str(first), "--seed", "5"]) == 0
    second = first.with_name("first_assigned.xlsx")
    ws2 = openpyxl.load_workbook(second)["Evaluations"]
    for r, (a, o) in scored.items():
        assert (ws2.cell(row=r, column=1).value, ws2.cell(row=r, column=2).value) == (a, o)
        assert ws2.cell(row=r, column=3).value == 7.0 and ws2.cell(row=r, column=4).value == "High"
    ev = _evaluations(second)
    assert len(ev) == 24 and ev["score"].notna().sum() == 3
    assert (ev.groupby("object").size() == 2).all()
    assert not ev.duplicated(["assessor", "object"]).any()


def test_bad_cells_are_named(panel, capsys):
    wb = openpyxl.load_workbook(panel)
    wb["Assignment"]["B4"] = "lots"
    wb["Assignment"]["G3"] = 2.5
    wb.save(panel)
    assert main(["assign", str(panel)]) == 2
    err = capsys.readouterr().err
    assert "sheet Assignment, row 4, column Max load (B4)" in err and "'lots'" in err
    assert "sheet Assignment, row 3, column Reads wanted (G3) must be a whole number" in err  # all at once
    assert len(err.strip().splitlines()) == 1


def test_infeasible_panel_is_one_line(panel, capsys):
    wb = openpyxl.load_workbook(panel)
    for r in range(2, 8):
        wb["Assignment"].cell(row=r, column=2, value=3)
    wb.save(panel)
    assert main(["assign", str(panel)]) == 2
    assert "12 objects × 2 reads = 24 reads but the assessors' max loads add up to 18 (6 short)" in capsys.readouterr().err


def test_suitability_grid_sheet_and_conflicts(panel):
    wb = openpyxl.load_workbook(panel)
    ws = wb.create_sheet("Suitability")
    ws.append([None] + [f"Object {j}" for j in range(1, 13)])
    for i in range(1, 7):
        ws.append([f"Assessor {i}"] + [1.0 if (j % 6) + 1 == i else None for j in range(12)])
    wb["Assignment"]["J2"], wb["Assignment"]["K2"] = "Assessor 1", "Object 6"
    wb.save(panel)
    assert main(["assign", str(panel), "--share", "1"]) == 0
    ev = _evaluations(panel.with_name("panel_assigned.xlsx"))
    pairs = set(zip(ev["assessor"], ev["object"]))
    assert ("Assessor 1", "Object 6") not in pairs
    # share 1: every object gets its suitability-1 assessor
    assert all((f"Assessor {(j % 6) + 1}", f"Object {j + 1}") in pairs for j in range(12))


def test_assignment_template_numbers_stay_under_their_own_headers(panel):
    """Right-aligned numbers sit under right-aligned headers, and the text column after a number column is indented,
    so no number prints under the next column's header; each header fits its column."""
    ws = openpyxl.load_workbook(panel)["Assignment"]
    headers = {c.column_letter: c for c in ws[1] if c.value}
    for letter in ("B", "C", "G"):  # Max load, Min load, Reads wanted
        assert headers[letter].alignment.horizontal == "right"
        assert all(ws[f"{letter}{r}"].alignment.horizontal == "right" for r in range(2, 8))
        assert isinstance(ws[f"{letter}2"].value, int) or letter == "C"
    for letter in ("D", "H"):  # Subjects, after a number column
        assert headers[letter].alignment.indent >= 1 and ws[f"{letter}2"].alignment.indent >= 1
    for letter, cell in headers.items():
        assert len(cell.value) * 1.1 + 1 <= ws.column_dimensions[letter].width, cell.value
        assert cell.font.name == "Calibri" and cell.font.b
