"""Review exports through the command line, the panel template's Import sheet and the spreadsheet functions.

One end-to-end test per export shape up to the Ranking (``xlcalib calibrate EXPORT``), the long table on file
(``xlcalib import``), the saved column roles reused by the next import (Import sheet, JSON file), the
template filled through both workbook backends, and the messages bad exports get.
"""
from __future__ import annotations

import csv
import json

import numpy as np
import openpyxl
import pandas as pd
import pytest

import xlcalib
from xlcalib.cli import main
from xlcalib.exercises import ExportOptions, import_into_book
from xlcalib.exercises.import_export import is_export, presets_from_rows
from xlcalib.macros import run_from_excel
from xlcalib.templates import build

from . import xlwings_harness as harness
from .imports_writers import cmt_xml, easychair_csv, grid_csv, hotcrp_csv, openreview_json
from .test_imports_roundtrip import connected_panel
from .test_imports_systems import HOTCRP, cmt_row
from .test_imports_systems import cmt_xml as cmt_tracks
from .test_workbook_xlwings import Book, Sheet

SHAPES = ("hotcrp", "hotcrp-letters", "cmt", "easychair", "openreview", "grid")
LETTERS = tuple("ABCDEFGHI")  # A best: A = 9 on a 1..9 scale


def write_export(long: pd.DataFrame, shape: str, folder) -> tuple:
    """The export file of *shape* (and the command-line options it needs) for a long table scored 1..9."""
    rng = np.random.default_rng(5)
    if shape == "hotcrp":
        path, data, options = folder / "reviews.csv", hotcrp_csv(long, rng), ["--scale", "1-9"]
    elif shape == "hotcrp-letters":
        path, data, options = folder / "reviews.csv", hotcrp_csv(long, rng, LETTERS), ["--scale", ", ".join(LETTERS)]
    elif shape == "cmt":
        path, data, options = folder / "Reviews.xls", cmt_xml(long, rng), ["--scale", "1..9"]
    elif shape == "easychair":
        path, data, options = folder / "review.csv", easychair_csv(long, rng), []
    elif shape == "openreview":
        data, identity = openreview_json(long, rng)
        path, options = folder / "notes.json", ["--identity", str(folder / "identity.csv")]
        with open(folder / "identity.csv", "w", newline="", encoding="utf-8") as handle:
            csv.writer(handle).writerows([["anonymous id", "person"], *identity.items()])
    else:
        path, data, options = folder / "grid.csv", grid_csv(long, rng), ["--scale", "1 to 9"]
    path.write_bytes(data)
    return path, options


def sheet_table(path, sheet: str, first: str) -> pd.DataFrame:
    rows = list(openpyxl.load_workbook(path, read_only=True)[sheet].iter_rows(values_only=True))
    header = next(i for i, r in enumerate(rows) if r and r[0] == first)
    return pd.DataFrame(rows[header + 1:], columns=rows[header])


# ---------------------------------------------------------------------------------------------------------
# xlcalib calibrate EXPORT: one end-to-end test per shape, up to the Ranking
# ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES)
def test_calibrate_export_end_to_end_to_the_ranking(shape, tmp_path, capsys):
    long = connected_panel()
    path, options = write_export(long, shape, tmp_path)
    before = path.read_bytes()
    out = tmp_path / "result.xlsx"
    assert main(["calibrate", str(path), "-o", str(out), "--fund", "4", *options]) == 0
    assert path.read_bytes() == before  # the export is never modified
    printed = capsys.readouterr().out
    assert "36 evaluations (6 assessors, 12 objects); 0 rows or cells not imported" in printed
    # a declared scale's end scores are read as "this or beyond" in the ranking, as calibrate(scale=) does
    direct = xlcalib.calibrate(long, scale=(1, 9) if "--scale" in options else None)
    expected = direct.ranking(top_k=4, draws=10_000, seed=0)
    ranking = sheet_table(out, "Ranking", "rank").set_index("object")
    np.testing.assert_allclose(ranking.loc[expected.index, "calibrated value"].astype(float), expected["value"],
                               rtol=1e-9)
    assert ranking.loc[expected.index, "rank"].tolist() == expected["rank"].tolist()
    # the Monte Carlo draws follow the assessors' order, which the export may list differently: P(above) agrees
    # within its Monte Carlo error, and the decisions wherever P(above) is not within that of a cut-off
    margin = 4 * expected["p_above_mc_se"].max()
    clear = ((expected["p_above"] - 0.95).abs() > margin) & ((expected["p_above"] - 0.05).abs() > margin)
    assert clear.sum() >= len(expected) - 2
    shown = ranking.loc[expected.index, "decision"].astype(str)
    assert shown[clear].tolist() == expected.loc[clear, "final"].astype(str).tolist()
    book = openpyxl.load_workbook(out, read_only=True)
    assert book.sheetnames[:3] == ["Ranking", "Ranking chart", "Summary"]
    assert book.sheetnames[-2:] == ["Import report", "Import"]
    summary = dict(sheet_table(out, "Summary", "topic").values)
    assert summary["Imported from"].startswith(f"{path.name} (") and "0 rows or cells not imported" in \
        summary["Imported from"]
    if shape == "hotcrp-letters":
        assert "A=9" in summary["Score scale"] and "(declared)" in summary["Score scale"]


def test_letters_turned_so_that_higher_is_better_said_on_the_summary(tmp_path, capsys):
    text = ("paper,title,review,reviewername,email,Overall merit\n"
            + "".join(f"{p},T{p},{p}{r},{a},{a}@x.org,{g}\n" for p, r, a, g in
                      [(1, "A", "ann", "A"), (1, "B", "bo", "B"), (2, "A", "ann", "C"), (2, "B", "cy", "B"),
                       (3, "A", "bo", "D"), (3, "B", "cy", "C"), (4, "A", "ann", "B"), (4, "B", "bo", "C")]))
    path = tmp_path / "letters.csv"
    path.write_text(text)
    assert main(["calibrate", str(path), "-o", str(tmp_path / "r.xlsx"), "--model", "fixed"]) == 0
    assert "letters turned so that higher = better" in capsys.readouterr().out
    summary = dict(sheet_table(tmp_path / "r.xlsx", "Summary", "topic").values)
    assert "A=4, B=3, C=2, D=1 (inferred from the data); letters turned so that higher = better" in \
        summary["Score scale"]
    assert "inferred" in summary["Score scale"]


def test_unlinked_reviewers_get_the_whole_decision_said_plainly(tmp_path, capsys):
    """Per-paper reviewer ids (no identity map): calibrated with each reviewer's stringency inside the noise, the
    funding line applied, the same numbers as calibrate() of the imported table, and said on the Summary."""
    long = connected_panel()
    path, _ = write_export(long, "openreview", tmp_path)
    out = tmp_path / "anonymous.xlsx"
    assert main(["calibrate", str(path), "-o", str(out), "--fund", "3"]) == 0
    printed = capsys.readouterr().out
    assert "cannot be linked across objects" in printed and "every ± includes it" in printed
    assert "Funding line top 3 (3 places)" in printed
    imported = xlcalib.imports.read_export(path)
    direct = xlcalib.calibrate(imported.evaluations)
    assert direct.stats["model"] == "one-way"
    expected = direct.ranking(top_k=3, draws=10_000, seed=0)
    ranking = sheet_table(out, "Ranking", "rank").set_index("object")
    np.testing.assert_allclose(ranking.loc[expected.index, "calibrated value"].astype(float), expected["value"],
                               rtol=1e-9)  # the same fit; only the digits the workbook stores can differ
    assert ranking.loc[expected.index, "decision"].astype(str).tolist() == expected["final"].astype(str).tolist()
    summary = dict(sheet_table(out, "Summary", "topic").values)
    assert "every ± includes it" in summary["How far to trust calibration"]
    assert "Biases" not in openpyxl.load_workbook(out, read_only=True).sheetnames  # no reader has a bias to show
    assert main(["calibrate", str(path), "-o", str(tmp_path / "anonymous.json"), "--format", "json"]) == 0
    payload = json.loads((tmp_path / "anonymous.json").read_text())
    assert payload["import"]["linked"] is False and len(payload["Values"]) == 12
    assert payload["stats"]["model"] == "one-way"


def test_calibrate_export_csv_and_json_formats_carry_the_import_report(tmp_path):
    path = tmp_path / "hotcrp.csv"
    text = hotcrp_csv(connected_panel()).decode()
    path.write_text(text + "13,Title of 13,13A,Name x,x@example.org,,1,Not scored\n")
    assert main(["calibrate", str(path), "-o", str(tmp_path / "csv"), "--format", "csv"]) == 0
    report = pd.read_csv(tmp_path / "csv" / "hotcrp_Import report.csv")
    assert report[["row", "cell", "reason"]].astype(object).fillna("").values.tolist() == [
        [38, "F38", "no score entered"], ["", "", "no score imported for this object (no score entered)"]]
    assert (tmp_path / "csv" / "hotcrp_Ranking.csv").exists()
    assert main(["calibrate", str(path), "-o", str(tmp_path / "r.json"), "--format", "json"]) == 0
    payload = json.loads((tmp_path / "r.json").read_text())
    assert payload["import"]["source"] == "hotcrp" and payload["import"]["mapping"]["confidence"] == "Reviewer expertise"
    assert len(payload["Import report"]) == 2 and len(payload["Ranking"]) == 12  # the read and its object


def test_a_workbook_or_an_evaluations_csv_is_not_taken_for_an_export(tmp_path):
    table = tmp_path / "evaluations.csv"
    table.write_text("Assessor,Object,Score,SD\nA,x,5,1\n")
    assert not is_export(table)
    table.write_text("Assesor,Object,Score,SD\nA,x,5,1\n")  # a misspelt column: the evaluations check names it
    assert not is_export(table)
    table.write_text("   \n\n")
    assert not is_export(table) and not is_export(tmp_path / "missing.csv")
    export = tmp_path / "reviews.csv"
    export.write_text(HOTCRP)
    assert is_export(export) and is_export(tmp_path / "x.json") and is_export(tmp_path / "x.xml")
    path = build("panel_calibration", tmp_path / "panel.xlsx")[0]
    assert not is_export(path) and is_export(path, sheet="Reviews")


# ---------------------------------------------------------------------------------------------------------
# xlcalib import: the long table and the report on file; the saved roles reused
# ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES)
def test_import_writes_the_long_table_that_calibrates_like_the_original(shape, tmp_path, capsys):
    long = connected_panel()
    path, options = write_export(long, shape, tmp_path)
    out = tmp_path / "evaluations.xlsx"
    assert main(["import", str(path), "-o", str(out), *options]) == 0
    assert f"written to {out}" in capsys.readouterr().out
    book = openpyxl.load_workbook(out, read_only=True)
    assert book.sheetnames == ["Evaluations", "Import report", "Import"]
    table = sheet_table(out, "Evaluations", "Assessor")
    got = table.rename(columns=str.lower)[["assessor", "object", "score", "level"]].astype({"score": float})
    pd.testing.assert_frame_equal(got.sort_values(["object", "assessor"]).reset_index(drop=True),
                                  long.astype({"score": float}).sort_values(["object", "assessor"]).reset_index(drop=True))
    assert main(["calibrate", str(out), "-o", str(tmp_path / "again.xlsx"), "--model", "fixed"]) == 0  # a plain panel now


def test_import_csv_prints_and_writes_every_row_not_imported(tmp_path, capsys):
    path = tmp_path / "hotcrp.csv"
    path.write_text(HOTCRP)
    out = tmp_path / "ev.csv"
    assert main(["import", str(path), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "not imported: hotcrp.csv, row 5, cell G5 (cy@example.org, 2): no score entered" in printed
    assert printed.count("not imported: ") == 4  # the blank score and the three superseded pre-response scores
    assert "columns: object: paper; assessor: email | reviewername; score: Pre-Response Overall Merit | " \
           "Post-Rebuttal Overall Merit; confidence: Reviewer expertise" in printed
    assert pd.read_csv(out)["Score"].tolist() == [4.0, 2.0, 5.0, 2.0, 4.0]
    assert len(pd.read_csv(tmp_path / "ev.report.csv")) == 4
    saved = json.loads((tmp_path / "ev.mapping.json").read_text())
    assert saved["source"] == "hotcrp" and saved["score"] == ["Pre-Response Overall Merit", "Post-Rebuttal Overall Merit"]


def test_saved_roles_are_reused_from_the_import_sheet_and_from_json(tmp_path, capsys):
    path = tmp_path / "hotcrp.csv"
    path.write_text(HOTCRP)
    first = tmp_path / "first.xlsx"
    assert main(["import", str(path), "-o", str(first)]) == 0
    rows = [list(r) for r in openpyxl.load_workbook(first)["Import"].iter_rows(values_only=True)]
    presets = presets_from_rows(rows)
    assert set(presets) == {"hotcrp"} and presets["hotcrp"].score == ["Pre-Response Overall Merit",
                                                                      "Post-Rebuttal Overall Merit"]
    book = openpyxl.load_workbook(first)  # the user edits the role: the pre-response score only
    ws = book["Import"]
    score_row = next(r for r in range(1, ws.max_row + 1) if ws.cell(row=r, column=1).value == "score")
    ws.cell(row=score_row, column=2, value="Pre-Response Overall Merit")
    book.save(first)
    second = tmp_path / "second.xlsx"
    assert main(["import", str(path), "-o", str(second), "--mapping", str(first)]) == 0
    table = sheet_table(second, "Evaluations", "Assessor").set_index(["Assessor", "Object"])
    assert table.loc[("ada@example.org", "1"), "Score"] == 3  # the pre-response score, as saved
    kept = presets_from_rows([list(r) for r in openpyxl.load_workbook(second)["Import"].iter_rows(values_only=True)])
    assert kept["hotcrp"].score == ["Pre-Response Overall Merit"]  # carried into the new workbook
    assert main(["import", str(path), "-o", str(tmp_path / "ev.csv")]) == 0
    saved = json.loads((tmp_path / "ev.mapping.json").read_text())
    saved["score"] = ["Pre-Response Overall Merit"]
    (tmp_path / "mine.json").write_text(json.dumps(saved))
    assert main(["import", str(path), "-o", str(tmp_path / "pre.csv"), "--mapping", str(tmp_path / "mine.json")]) == 0
    table = pd.read_csv(tmp_path / "pre.csv", dtype={"Object": str}).set_index(["Assessor", "Object"])
    assert table.loc[("ada@example.org", "1"), "Score"] == 3


# ---------------------------------------------------------------------------------------------------------
# The panel template's Import sheet (Run main on it), through openpyxl and the xlwings backend
# ---------------------------------------------------------------------------------------------------------
def _template(tmp_path, export, objects=2, **settings):
    build("panel_calibration", tmp_path / "panel.xlsx", assessors=3, objects=objects)
    book = openpyxl.load_workbook(tmp_path / "panel.xlsx")
    book["Import"]["B2"] = str(export)
    for cell, value in settings.items():
        book["Import"][cell] = value
    return book


def test_template_import_fills_evaluations_lists_scale_and_saves_the_roles(tmp_path):
    long = connected_panel()
    path, _ = write_export(long, "easychair", tmp_path)
    book = _template(tmp_path, path)  # 8 prepared rows, 3 assessors, 2 objects: every table must grow
    assert run_from_excel("import_export", book) is True
    ev = book["Evaluations"]
    assert ev.tables["Evaluations"].ref == "A1:D37"
    rows = pd.DataFrame([r for r in ev.iter_rows(min_row=2, max_row=37, values_only=True)],
                        columns=["assessor", "object", "score", "level"])
    pd.testing.assert_frame_equal(rows.sort_values(["object", "assessor"]).reset_index(drop=True),
                                  long.astype({"score": float}).sort_values(["object", "assessor"]).reset_index(drop=True))
    assessors = book["Assessors"]
    assert assessors.tables["AssessorList"].ref == "A1:B7"
    assert sorted(c.value for c in assessors["A"][1:7]) == sorted(set(long["assessor"]))
    assert assessors["B7"].value == '=IF(A7="","",SUMPRODUCT(--(Evaluations[Assessor]=A7)))'  # the count continues
    assert book["Objects"].tables["ObjectList"].ref == "A1:B13"
    assert (book["Settings"]["B2"].value, book["Settings"]["B3"].value) == (1, 9)
    imp = book["Import"]
    assert imp["B8"].value == 36 and "read as easychair: 36 evaluations" in imp["B9"].value
    presets = presets_from_rows([list(r) for r in imp.iter_rows(values_only=True)])
    assert presets["easychair"].score == ["Overall evaluation"]
    assert book.sheetnames[-1] == "Import report" and book.active.title == "Import report"
    result = xlcalib.exercises.calibrate_panel(book).result  # Run main on any other sheet: the calibration
    direct = xlcalib.calibrate(long)
    np.testing.assert_allclose(result.values.loc[direct.values.index, "value"], direct.values["value"], rtol=1e-9)


def test_template_reimport_uses_the_edited_roles_and_replaces_only_its_rows(tmp_path):
    path = tmp_path / "hotcrp.csv"
    path.write_text(HOTCRP)
    book = _template(tmp_path, path, objects=10)
    assert run_from_excel("import_export", book)
    imp = book["Import"]
    score_row = next(r for r in range(1, imp.max_row + 1) if imp.cell(row=r, column=1).value == "score")
    assert imp.cell(row=score_row, column=2).value == "Pre-Response Overall Merit | Post-Rebuttal Overall Merit"
    imp.cell(row=score_row, column=2, value="Pre-Response Overall Merit")  # the user edits the saved role
    book.save(tmp_path / "edited.xlsx")
    book = openpyxl.load_workbook(tmp_path / "edited.xlsx")
    assert run_from_excel("import_export", book)
    scores = {(r[0], r[1]): r[2] for r in book["Evaluations"].iter_rows(min_row=2, values_only=True) if r[0]}
    assert scores[("ada@example.org", "1")] == 3 and len(scores) == 5
    book["Evaluations"]["A30"] = "typed by hand"  # a row no import wrote: the next import refuses
    with pytest.raises(xlcalib.InputError, match="sheet Evaluations already holds 6 evaluation row"):
        import_into_book(book)
    assert book["Evaluations"]["A30"].value == "typed by hand"


def test_template_import_messages_name_the_cell(tmp_path):
    build("panel_calibration", tmp_path / "panel.xlsx")
    book = openpyxl.load_workbook(tmp_path / "panel.xlsx")
    with pytest.raises(xlcalib.InputError, match="sheet Import, row 2: type the export file's path"):
        import_into_book(book)
    book["Import"]["B2"], book["Import"]["B3"] = str(tmp_path / "x.csv"), "easychaire"
    with pytest.raises(xlcalib.InputError, match="sheet Import, row 3: From is 'easychaire'; write one of hotcrp"):
        import_into_book(book)
    assert run_from_excel("import_export", book) is False  # the Run main button: a Checks line, no traceback
    assert any("From is 'easychaire'" in str(c.value) for row in book["Checks"].iter_rows() for c in row)
    with pytest.raises(xlcalib.InputError, match="no Import sheet"):
        import_into_book(openpyxl.Workbook())


def test_import_into_a_copy_of_the_template_from_the_command_line(tmp_path, capsys):
    long = connected_panel()
    path, options = write_export(long, "cmt", tmp_path)
    panel = build("panel_calibration", tmp_path / "panel.xlsx", assessors=3, objects=2)[0]
    before = panel.read_bytes()
    assert main(["import", str(path), "--into", str(panel), *options]) == 0
    assert panel.read_bytes() == before
    filled = tmp_path / "panel_imported.xlsx"
    assert f"written to {filled}" in capsys.readouterr().out
    assert main(["calibrate", str(filled), "-o", str(tmp_path / "r.xlsx"), "--fund", "4"]) == 0
    ranking = sheet_table(tmp_path / "r.xlsx", "Ranking", "rank").set_index("object")
    direct = xlcalib.calibrate(long).ranking(top_k=4, draws=10_000, seed=0)
    assert ranking.loc[direct.index, "rank"].tolist() == direct["rank"].tolist()


def _stand_in_panel(export):
    """A panel workbook as xlwings sees it: the template's sheets, tables where Excel has them."""
    import_rows = [["Setting", "Value"], ["Export file", str(export)], ["From", None], ["Round", None], ["Scale", None],
                   ["Identity map", None], ["Evaluations imported", None], ["Last import", None], [None],
                   ["Role", "hotcrp", "cmt", "easychair", "openreview", "grid"], ["menu"],
                   *[[role] for role in xlcalib.templates.import_sheet.PRESET_ROLES]]
    return Book([Sheet("Settings", [["Setting", "Value"], ["Score scale minimum", 1], ["Score scale maximum", 10]]),
                 Sheet("Assessors", [["Assessor", "Evaluations entered"], ["Assessor 1", 0.0], ["Assessor 2", 0.0]],
                       table="A1:B3"),
                 Sheet("Objects", [["Object", "Evaluations entered"], ["Object 1", 0.0]], table="A1:B2"),
                 Sheet("Evaluations", [["Assessor", "Object", "Score", "Level"]], table="A1:D5"),
                 Sheet("Import", import_rows)])


def test_template_import_through_the_xlwings_backend(tmp_path):
    path = tmp_path / "hotcrp.csv"
    path.write_text(HOTCRP.replace("Ada Quill,ada@example.org", "=cmd|' /C calc'!A0,=cmd|' /C calc'!A0"))
    book = _stand_in_panel(path)
    assert run_from_excel("import_export", book) is True
    ev = book.sheets["Evaluations"]
    assert ev.tables[0].range.shape == (6, 4)  # the table grew to hold 5 evaluations
    rows = ev.rows()[1:6]
    assert ["=cmd|' /C calc'!A0", "1", 4.0, "Medium"] in rows  # formula-looking names stay text, '1' stays text
    assert {r[0] for r in book.sheets["Assessors"].rows()[1:]} == {"=cmd|' /C calc'!A0", "bo@example.org",
                                                                   "cy@example.org"}
    assert book.sheets["Settings"].cells[(3, 2)] == 5  # the inferred scale 1..5
    imp = book.sheets["Import"]
    assert imp.cells[(7, 2)] == 5 and imp.cells[(12, 2)] == "paper"  # rows written; object role saved (hotcrp)
    report = [r for r in book.sheets["Import report"].rows() if r and r[-1]]
    assert any(r[-1] == "no score entered" for r in report)
    assert run_from_excel("import_export", book) is True  # a re-import replaces what it wrote
    assert len([r for r in ev.rows()[1:] if any(v is not None for v in r)]) == 5


# ---------------------------------------------------------------------------------------------------------
# The spreadsheet functions: a grid range to long rows, through xlwings' own conversion code
# ---------------------------------------------------------------------------------------------------------
def test_grid_function_feeds_the_calibration_functions():
    long = connected_panel()
    grid = [list(r) for r in csv.reader(grid_csv(long).decode().splitlines())]
    grid = [[float(c) if c.replace(".", "", 1).isdigit() else (c or None) for c in row] for row in grid]
    rows = harness.call("CALIB_FROM_GRID", grid, "1-9")
    assert rows[0] == ["Assessor", "Object", "Score", "Level"] and len(rows) == 37
    columns = [[[r[j]] for r in rows[1:]] for j in range(4)]
    values = harness.call("CALIB_VALUES", *columns)
    direct = xlcalib.calibrate(long).values
    got = {r[0]: r[1] for r in values[1:]}
    np.testing.assert_allclose([got[o] for o in direct.index], direct["value"], rtol=1e-9)
    report = harness.call("CALIB_GRID_REPORT", grid, "1-9")
    assert report[0] == ["what", "cell", "assessor", "object", "reason"]
    assert any("score scale declared: 1 to 9" in r[4] for r in report[1:])
    bad = [list(r) for r in grid]
    bad[3][1] = 12.0
    text = harness.call("CALIB_FROM_GRID", bad, "1-9")[0][0]
    assert text.startswith("xlcalib: the grid range, row 4, cell B4: score 12 is off the declared scale")


# ---------------------------------------------------------------------------------------------------------
# Bad exports: messages naming what was found and where
# ---------------------------------------------------------------------------------------------------------
def test_unknown_layout_names_what_was_recognised_and_the_nearest_preset(tmp_path, capsys):
    path = tmp_path / "odd.csv"
    path.write_text("Paper ID,Title,Notes\n1,x,some words here\n2,y,more words\n")
    assert main(["calibrate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "unknown layout: not a review export" in err and "one row per object" in err  # what was looked for
    assert "Headers found: Paper ID, Title, Notes. Nearest preset: cmt" in err and "--mapping" in err
    assert err.count("\n") == 1  # one line
    book = openpyxl.Workbook()
    book.active.title = "Other"
    book.active.append(["Name", "Remark"])
    book.active.append(["x", "some words here"])
    book.save(tmp_path / "other.xlsx")
    assert main(["calibrate", str(tmp_path / "other.xlsx")]) == 2
    assert "has no sheet named 'Evaluations' (the evaluations table), and is not a review export" in \
        capsys.readouterr().err


def test_score_off_the_declared_scale_names_its_cell(tmp_path, capsys):
    path = tmp_path / "r.csv"
    path.write_text("paper,title,reviewername,email,Overall merit\n1,A,Ann,a@x,3\n2,B,Ann,a@x,7\n2,B,Bo,b@x,9\n")
    assert main(["import", str(path), "--scale", "1-5", "-o", str(tmp_path / "ev.csv")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "xlcalib: error: r.csv, row 3, cell E3: score 7 is off the declared scale (1 to 5)"
    assert "row 4, cell E4: score 9" in err[1] and not (tmp_path / "ev.csv").exists()


def test_many_bad_scores_are_all_listed_in_a_file(tmp_path, capsys):
    lines = "".join(f"{p},T,Rev{p % 7},r{p % 7}@x,{20 + p}\n" for p in range(30))
    path = tmp_path / "r.csv"
    path.write_text("paper,title,reviewername,email,Overall merit\n" + lines)
    assert main(["calibrate", str(path), "--scale", "1-10", "-o", str(tmp_path / "out.xlsx")]) == 2
    err = capsys.readouterr().err
    assert "and 10 more problems; all are listed in" in err
    assert len(pd.read_csv(tmp_path / "r_problems.csv")) == 30


def test_different_scales_on_tracks_refused_naming_the_tracks(tmp_path, capsys):
    other = cmt_row(7, "Jo Marsh", "jo@example.org", 4, 5)
    other[9] = 8
    path = tmp_path / "Reviews.xls"
    path.write_bytes(cmt_tracks({"Main": [cmt_row(1, "Ida Vale", "ida@example.org", 4, 4)], "Short": [other]}))
    assert main(["calibrate", str(path)]) == 2
    assert "different scales on different tracks: the answer 'Weak accept' means different scores (Main gives 4, " \
           "Short gives 8)" in capsys.readouterr().err


def test_hostile_and_huge_exports_are_bounded(tmp_path, capsys, monkeypatch):
    import xlcalib.workbook.reader as reader

    hostile = tmp_path / "lol.xml"
    hostile.write_bytes(b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]><Workbook '
                        b'xmlns="urn:schemas-microsoft-com:office:spreadsheet"/>')
    assert main(["calibrate", str(hostile)]) == 2
    assert "declares a document type" in capsys.readouterr().err
    path = tmp_path / "hotcrp.csv"
    path.write_text(HOTCRP)
    monkeypatch.setattr(reader, "MAX_INPUT_BYTES", 100)
    assert main(["import", str(path)]) == 2
    assert "the limit is" in capsys.readouterr().err


def test_errors_of_the_later_checks_point_at_the_exports_cells(tmp_path, capsys):
    text = ("paper,title,reviewername,email,Overall merit\n1,A,Ann,a\x01@x,3\n2,B,Ann,a\x01@x,4\n2,B,Bo,b@x,2\n"
            "1,A,Bo,b@x,5\n")
    path = tmp_path / "ctl.csv"
    path.write_text(text)
    assert main(["calibrate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "ctl.csv, row 2 (the review scored in cell E2), assessor holds a control character" in err
    assert "sheet Evaluations" not in err
    similar = tmp_path / "similar.csv"  # a warning of the check, on the Checks sheet at the export's cells
    similar.write_text("paper,title,review,reviewername,Overall merit\n1,A,1A,Ann Lee,3\n1,A,1B,Bo Fenn,4\n"
                       "2,B,2A,Ann  Lee,5\n2,B,2B,Bo Fenn,2\n3,C,3A,Ann Lee,4\n3,C,3B,Cy Dorn,3\n4,D,4A,Cy Dorn,2\n"
                       "4,D,4B,Bo Fenn,5\n")
    assert main(["calibrate", str(similar), "-o", str(tmp_path / "s.xlsx"), "--model", "fixed"]) == 0
    assert "'Ann Lee' (similar.csv row 2) and 'Ann  Lee' (similar.csv row 4) differ only" in capsys.readouterr().out
    checks = sheet_table(tmp_path / "s.xlsx", "Checks", "severity")
    assert checks[["sheet", "cell"]].values.tolist() == [["similar.csv", "E2"]]


def test_saved_roles_errors_name_the_file_and_column(tmp_path, capsys):
    path = tmp_path / "hotcrp.csv"
    path.write_text(HOTCRP)
    (tmp_path / "m.txt").write_text("{}")
    assert main(["import", str(path), "--mapping", str(tmp_path / "m.txt")]) == 2
    assert "--mapping m.txt: give the .json file or the workbook" in capsys.readouterr().err
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    assert main(["import", str(path), "--mapping", str(tmp_path / "deep.json")]) == 2
    assert "deep.json nests deeper than any saved mapping" in capsys.readouterr().err
    (tmp_path / "big.json").write_text(" " * 2_000_000)
    assert main(["import", str(path), "--mapping", str(tmp_path / "big.json")]) == 2
    assert "a saved mapping is a few kilobytes" in capsys.readouterr().err
    rows = [["Role", "hotcrp"], ["object", "paper"], ["scale (saved)", "{not json"]]
    with pytest.raises(xlcalib.InputError, match="sheet Import, column hotcrp: a saved entry is not valid JSON"):
        presets_from_rows(rows)
    with pytest.raises(xlcalib.InputError, match="column hotcrp: a saved entry nests deeper"):
        presets_from_rows([["Role", "hotcrp"], ["confidence levels", "[" * 10_000 + "]" * 10_000]])
    with pytest.raises(xlcalib.InputError, match="column hotcrp: Import sheet: unknown role 'colour'"):
        presets_from_rows([["Role", "hotcrp"], ["colour", "red"]])
    assert ExportOptions().source is None


def test_template_scale_sheet_wins_and_identity_map_links_reviewers(tmp_path):
    long = connected_panel()
    path, _ = write_export(long, "hotcrp-letters", tmp_path)
    book = _template(tmp_path, path, objects=20)
    scale = book.create_sheet("Scale")  # grade | value, with a header row
    scale.append(["Grade", "Value"])
    for k, letter in enumerate(LETTERS):
        scale.append([letter, 9 - k])
    assert run_from_excel("import_export", book)
    rows = pd.DataFrame([r for r in book["Evaluations"].iter_rows(min_row=2, max_row=37, values_only=True)],
                        columns=["assessor", "object", "score", "level"])
    pd.testing.assert_frame_equal(rows.sort_values(["object", "assessor"]).reset_index(drop=True),
                                  long.astype({"score": float}).sort_values(["object", "assessor"]).reset_index(drop=True))
    notes = [r[0] for r in book["Import report"].iter_rows(max_row=12, values_only=True) if r[0]]
    assert any(str(n).startswith("note: score scale declared: A=9, B=8") for n in notes)
    book["Import"]["B5"] = "1-9"
    with pytest.raises(xlcalib.InputError, match="the scale is declared twice \\(sheet Scale and the Scale row"):
        import_into_book(book)
    path, _ = write_export(long, "openreview", tmp_path)
    book = _template(tmp_path, path, objects=20, B6=str(tmp_path / "identity.csv"))
    assert run_from_excel("import_export", book)
    names = [c.value for c in book["Assessors"]["A"][1:] if c.value]
    assert sorted(names) == sorted(set(long["assessor"]))  # six people, not 36 anonymous ids


def test_template_table_widens_for_tracks_and_renames_the_uncertainty_column(tmp_path):
    tracks = tmp_path / "Reviews.xls"
    tracks.write_bytes(cmt_tracks({"Main": [cmt_row(1, "Ida Vale", "ida@example.org", 5, 4),
                                            cmt_row(1, "Jo Marsh", "jo@example.org", 2, 2)],
                                   "Short": [cmt_row(7, "Jo Marsh", "jo@example.org", 4, 5)]}))
    book = _template(tmp_path, tracks)
    assert run_from_excel("import_export", book)
    table = book["Evaluations"].tables["Evaluations"]
    assert table.ref == "A1:E9" and [c.name for c in table.tableColumns] == ["Assessor", "Object", "Score", "Level",
                                                                            "Group"]
    assert [c.value for c in book["Evaluations"]["E"][1:4]] == ["Main", "Main", "Short"]
    book["Import"]["B2"] = str(tmp_path / "reviews.csv")  # a re-import without tracks clears the old groups
    (tmp_path / "reviews.csv").write_text(HOTCRP)
    assert run_from_excel("import_export", book)
    assert [c.value for c in book["Evaluations"]["E"][:7]] == ["Group"] + [None] * 6
    weights = tmp_path / "grid.csv"
    weights.write_text("Proposal,Ann,Ann weight,Bob,Bob weight\nP1,4,2,3,1\nP2,2,1,5,3\n")
    book = _template(tmp_path, weights)
    assert run_from_excel("import_export", book)
    table = book["Evaluations"].tables["Evaluations"]
    assert [c.name for c in table.tableColumns] == ["Assessor", "Object", "Score", "Confidence"]
    book.save(tmp_path / "saved.xlsx")  # the table's columns follow the header cells in the file Excel opens
    reopened = openpyxl.load_workbook(tmp_path / "saved.xlsx")
    assert [c.name for c in reopened["Evaluations"].tables["Evaluations"].tableColumns][3] == "Confidence"
    assert xlcalib.exercises.calibrate_panel(reopened).result.stats["uncertainty_kind"] == "confidence"


def test_template_imports_a_slot_grid_as_asked_and_decides_it(tmp_path):
    """The Import sheet's Grid columns forces the slot reading; Run main then decides the anonymous panel the way
    xlcalib calibrate does the same file (the one-way model: no reader linked), with the form's uneven scale on
    Settings."""
    rng = np.random.default_rng(4)
    lines = ["Paper,Title,R1,R2,R3"]
    for k in range(30):
        n = 2 + k % 2
        cells = [str(x) for x in rng.choice([1, 3, 6, 8], n)] + [""] * (3 - n)
        lines.append(f"P{k:02d},A paper on topic {k},{','.join(cells)}")
    path = tmp_path / "slots.csv"
    path.write_text("\n".join(lines) + "\n")
    book = _template(tmp_path, path, objects=30, B5="1, 3, 6, 8", B7="review slots")
    assert run_from_excel("import_export", book)
    settings = {r[0]: r[1] for r in book["Settings"].iter_rows(min_row=2, values_only=True)}
    assert settings["Score scale points"] == "1, 3, 6, 8" and (settings["Score scale minimum"],
                                                               settings["Score scale maximum"]) == (1, 8)
    assessors = [c.value for c in book["Evaluations"]["A"][1:] if c.value]
    assert len(assessors) == len(set(assessors)) == 75 and "P00/R2" in assessors  # one reviewer per slot cell
    run = xlcalib.exercises.calibrate_panel(book)
    assert run.result.stats["model"] == "one-way" and run.titles["P03"] == "A paper on topic 3"
    direct = xlcalib.calibrate(xlcalib.imports.read_export(path, scale="1, 3, 6, 8", columns_are="slots").evaluations,
                               scale=(1, 3, 6, 8))
    np.testing.assert_allclose(run.result.values["value"], direct.values["value"].reindex(run.result.values.index),
                               rtol=1e-12)  # the same fit, from the sheet's cells or the file
    assert "Biases" not in book.sheetnames
