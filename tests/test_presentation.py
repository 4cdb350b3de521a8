"""The presentation layer: result sheets as a panel reads them (order, formats, widths, meanings, fonts, print
setup, the funding line, marks, charts), rendered the same by both backends; files honour the umask; the
Run main button reports input problems as a message, never a traceback."""
from __future__ import annotations

import datetime
import os
import stat

import numpy as np
import openpyxl
import pandas as pd
import pytest

import xlcalib
from xlcalib.cli import main
from xlcalib.exercises import RESULT_SHEETS, RUNNERS, CalibrationSettings, compute_calibration, write_calibration
from xlcalib.macros import run_from_excel
from xlcalib.presentation import assessor_sentence, calibration_sheets
from xlcalib.workbook import new_workbook, save_atomically, write_bytes_atomically
from xlcalib.workbook.base import shown_text

from .test_workbook_xlwings import Book, Sheet

NOW = datetime.datetime(2024, 5, 1, 12, 0)


def _demo_book(scores=None):
    evaluations, _, _ = xlcalib.demo.demo_panel()
    if scores is not None:
        evaluations["Score"] = scores
    wb = new_workbook()
    ws = wb.create_sheet("Evaluations")
    ws.append(list(evaluations.columns))
    for row in evaluations.itertuples(index=False):
        ws.append(list(row))
    return wb, evaluations


def _body(rows):
    """The data rows of a table: up to the blank row before the lines under it."""
    rows = list(rows)
    return rows[:next((i for i, r in enumerate(rows) if all(c is None for c in r)), len(rows))]


def test_result_sheets_order_formats_widths_fonts_and_print_setup():
    wb, evaluations = _demo_book()
    run, frames, settings = compute_calibration(wb)
    result = run.result
    write_calibration(wb, run, frames, settings, now=NOW)
    assert wb.sheetnames == ["Evaluations", *RESULT_SHEETS] and RESULT_SHEETS[0] == "Ranking"
    assert wb.active.title == "Ranking"  # opens on the decision table
    v_rows = list(wb["Values"].iter_rows(values_only=True))
    v_head = next(i for i, r in enumerate(v_rows) if r[0] == "object")
    v = [r[list(v_rows[v_head]).index("calibrated value")] for r in _body(v_rows[v_head + 1:])]
    assert v == sorted(v, reverse=True)  # the per-object chart reads in order, not in typing order
    ws = wb["Ranking"]
    rows = list(ws.iter_rows(values_only=True))
    header = next(i for i, r in enumerate(rows) if r[0] == "rank") + 1
    names = list(rows[header - 1])
    body = _body(rows[header:])
    # sorted by calibrated value, ranks 1..n, raw ranks a permutation
    values = [r[names.index("calibrated value")] for r in body]
    assert values == sorted(values, reverse=True) and [r[0] for r in body] == list(range(1, len(body) + 1))
    # plain averages equal but for the last bits of their sums share a rank (rounded to 9 decimals here)
    raw = pd.Series([r[names.index("raw mean")] for r in body]).round(9)
    assert [r[names.index("raw rank")] for r in body] == raw.rank(ascending=False, method="min").astype(int).tolist()
    # number formats per column: scores 2 decimals, counts integers
    first = header + 1
    col = {n: names.index(n) + 1 for n in names}
    assert ws.cell(first, col["calibrated value"]).number_format == "0.00"
    assert ws.cell(first, col["raw mean"]).number_format == "0.00"
    assert ws.cell(first, col["reads"]).number_format == "0" and ws.cell(first, col["rank"]).number_format == "0"
    # a meaning per column (header comment), one named font everywhere (no serif fallback), frozen header
    assert all(ws.cell(header, j).comment is not None for j in col.values())
    assert ws.cell(header, 1).font.b and ws.cell(header, 1).font.name == "Calibri" and ws.cell(header, 1).font.sz == 11
    assert ws.cell(first, 2).font.name == "Calibri" and ws["A1"].font.name == "Calibri"
    assert ws.freeze_panes == f"C{first}"
    # print: landscape, one page wide, header repeated
    assert ws.page_setup.orientation == "landscape" and ws.page_setup.fitToWidth == 1
    assert ws.page_setup.fitToHeight == 0 and ws.sheet_properties.pageSetUpPr.fitToPage
    assert ws.print_title_rows == f"${header}:${header}"
    # widths: every column at least as wide as its longest shown text (text columns capped, then wrapped)
    for sheet in ("Ranking", "Summary", "Biases", "Checks"):
        s = wb[sheet]
        s_rows = list(s.iter_rows(values_only=True))
        h = next(i for i, r in enumerate(s_rows) if all(c is None for c in r)) + 2  # the header, under the preamble
        end = h + len(_body(s_rows[h:]))  # the table's last row (the lines under it run across the columns)
        for j in range(1, s.max_column + 1):
            letter = openpyxl.utils.get_column_letter(j)
            cells = [s.cell(r, j) for r in range(h + 1, end + 1)]
            longest = max([len(shown_text(c.value, c.number_format)) for c in cells] + [0])
            width = s.column_dimensions[letter].width
            if any(c.alignment.wrap_text for c in cells):
                for c in cells:  # wrapped: the row is tall enough for the lines it needs
                    lines = -(-len(str(c.value or "")) // int(width * 1.25))
                    assert (s.row_dimensions[c.row].height or 15) >= 15 * lines, (sheet, c.coordinate)
            else:
                assert width >= longest, (sheet, letter, width, longest)


def test_assessors_harshest_first_with_plain_sentences_and_flagged_reads():
    wb, evaluations = _demo_book()
    wb["Evaluations"]["C6"] = 30.0  # a gross error: a flagged read
    run, frames, settings = compute_calibration(wb)
    result = run.result
    write_calibration(wb, run, frames, settings, now=NOW)
    rows = list(wb["Biases"].iter_rows(values_only=True))
    header = next(i for i, r in enumerate(rows) if r[0] == "assessor")
    table = pd.DataFrame(_body(rows[header + 1:]), columns=rows[header])
    assert table["bias"].is_monotonic_increasing  # harshest first
    harsh = table.iloc[0]
    pm = harsh["± (95% interval)"]  # the same ± as on every sheet: half the interval's width
    b = result.biases.loc[harsh["assessor"]]
    assert pm == pytest.approx((b["upper"] - b["lower"]) / 2, rel=1e-12)
    assert harsh["in plain words"] == (f"scores on average {abs(harsh['bias']):.2f} ± {pm:.2f} points below the panel, "
                                       f"{harsh['reads']} reads")
    who = evaluations.loc[4, "Assessor"]
    assert table.set_index("assessor").loc[who, "flagged reads"] >= 1
    assert evaluations.loc[4, "Object"] in table.set_index("assessor").loc[who, "flagged objects"]
    summary = dict(r[:2] for r in wb["Summary"].iter_rows(values_only=True) if r[0])
    assert summary["Harshest assessor"].startswith(f"{harsh['assessor']}: scores on average")
    assert "stand out" in summary["Reads to query"] and "Reliability of the averaged scores" in summary
    rel = xlcalib.icc(evaluations.assign(Score=evaluations["Score"].where(evaluations.index != 4, 30.0))
                      .pivot_table(index="Object", columns="Assessor", values="Score").to_numpy(), "ICC1k")
    assert summary["Reliability of the averaged scores"].startswith(f"{rel:.2f}")
    assert assessor_sentence(0.5, " ± 0.20", 7) == "scores on average 0.50 ± 0.20 points above the panel, 7 reads"


def test_diagnostics_speak_in_verdicts_not_formulas():
    wb, _ = _demo_book()
    run, frames, settings = compute_calibration(wb)
    result = run.result
    write_calibration(wb, run, frames, settings, now=NOW)
    rows = list(wb["Diagnostics"].iter_rows(values_only=True))
    table = {r[4]: r for r in rows if r[4] in ("mu2", "n_components", "posterior_variance")}  # by technical name
    mu2 = result.stats["mu2"]
    assert table["mu2"][0] == "assessor overlap"  # the plain name first, the technical name in the last column
    assert table["mu2"][2] == f"assessor overlap {mu2:.2f}: " + ("good" if mu2 >= 0.3 else "fair")
    assert table["n_components"][2].startswith("good")
    assert "posterior_variance" not in {r[0] for r in rows}
    assert not any("eigenvalue" in str(r[3]) or "C'^-1/2" in str(r[3]) for r in rows)


def test_funding_line_drawn_changed_decisions_marked_and_caterpillar():
    wb, evaluations = _demo_book()
    settings = CalibrationSettings(fund_top_k=15, draws=2000)
    run, frames, settings = compute_calibration(wb, settings)
    result = run.result
    specs = {s.name: s for s in calibration_sheets(result, frames, settings, None, [["xlcalib calibration"]],
                                                   decisions=run.decisions)}
    ranking = specs["Ranking"]
    assert ranking.line_after == 14
    f = ranking.frame
    assert {"P(above line)", "decision", "rests on", "changed by calibration", "rank range (95%)"} <= set(f.columns)
    assert ranking.column("P(above line)").number_format == "0%"
    assert not ranking.charts  # the chart prints on a page of its own, never shrinking the table
    # one final decision per object; without a lottery the places run out in a band "to discuss"
    assert set(f["decision"]) <= {"funded", "not funded", "to discuss"}
    funded = int((f["decision"] == "funded").sum())
    discuss = int((f["decision"] == "to discuss").sum())
    assert funded <= 15 and (discuss > 0 or funded == 15)
    assert ranking.footer[0][0].startswith("Count: 15 places: ")
    page = specs["Ranking chart"]
    chart = page.charts[0]
    assert chart.kind == "dots" and chart.line_columns and not page.frame.empty
    names = list(page.frame.columns)
    line = page.frame[names[chart.line_columns[0] - 1]]
    assert names[chart.line_columns[0] - 1].startswith("funding line") and line.nunique() == 1
    assert f["calibrated value"].iloc[14] > line.iloc[0] > f["calibrated value"].iloc[15]
    pm = "± (95% interval)"
    shown = f.iloc[:len(page.frame)]
    assert chart.y_range[0] <= (shown["calibrated value"] - shown[pm]).min()  # the bars fit the axis
    assert chart.y_range[1] >= (shown["calibrated value"] + shown[pm]).max()
    # coloured by decision: one series per decision shown, each in its decision's colour
    from xlcalib.presentation import DECISION_COLOURS

    series = [names[j - 1] for j in chart.y_columns]
    assert set(series) <= set(DECISION_COLOURS) and [chart.colour_of(k) for k in range(len(series))] == \
        [DECISION_COLOURS[s] for s in series]
    out = new_workbook()
    write_calibration(out, run, frames, settings, now=NOW)
    ws = out["Ranking"]
    top = next(r for r in range(1, 12) if ws.cell(r, 1).value == "rank")
    assert ws.cell(top + 15, 1).border.bottom.style == "thick" and ws.cell(top + 16, 1).border.bottom.style is None
    changed = np.flatnonzero(f["changed by calibration"].to_numpy() == "yes")
    assert len(changed) and all(ws.cell(top + 1 + i, 2).fill.fgColor.rgb.endswith("FFEB9C") for i in changed)
    summary = dict(r[:2] for r in out["Summary"].iter_rows(values_only=True) if r[0])
    assert summary["Decisions calibration changed"].startswith(f"{len(changed)} object(s)")
    assert "Borderline means" in summary["Decision"] and "Funding line top 15" in summary["Decision"]
    assert not ws._charts and len(out["Ranking chart"]._charts) == 1


def test_feedback_letter_one_page_per_assessor_naming_no_other():
    wb, evaluations = _demo_book()
    run, frames, settings = compute_calibration(wb)
    result = run.result
    write_calibration(wb, run, frames, settings, now=NOW, feedback=True)
    ws = wb["Feedback"]
    assert len(ws.row_breaks.brk) == evaluations["Assessor"].nunique() - 1
    rows = list(ws.iter_rows(values_only=True))
    header = next(i for i, r in enumerate(rows) if r[0] == "assessor")
    table = pd.DataFrame(rows[header + 1:], columns=rows[header])
    firsts = table.drop_duplicates("assessor")
    assert firsts["about you"].str.startswith("Scores ").all() and len(firsts) == evaluations["Assessor"].nunique()
    assert (firsts["section"] == "Your stringency").all()
    # each page: the letter's sections, then every read of the assessor
    names = set(evaluations["Assessor"].astype(str))
    for name, page in table.groupby("assessor", sort=False):
        assert {"Your stringency", "Your consistency", "Reads that stand out", "Your reads"} <= set(page["section"])
        assert (page["section"] == "Your reads").sum() == (evaluations["Assessor"].astype(str) == name).sum()
        text = " ".join(str(c) for c in page.drop(columns="assessor").to_numpy().ravel() if c is not None)
        assert not any(other in text for other in names - {name}), name  # anonymised towards the others
    # each page break sits where the next assessor starts
    starts = [header + 2 + i for i in firsts.index[1:]]
    assert [b.id + 1 for b in ws.row_breaks.brk] == starts
    assert ws.page_setup.orientation == "landscape"  # nine columns: landscape keeps them at 9 pt or larger


def test_both_backends_render_the_same_presentation():
    wb, evaluations = _demo_book()
    rows = [list(evaluations.columns)] + evaluations.astype(object).values.tolist()
    book = Book([Sheet("Evaluations", rows)])
    for target in (wb, book):
        run, frames, settings = compute_calibration(target)
        result = run.result
        write_calibration(target, run, frames, settings, now=NOW)
    ws = book.sheets["Ranking"]
    header = next(r for (r, c), v in ws.cells.items() if c == 1 and v == "rank")
    names = [ws.cells.get((header, c)) for c in range(1, 12)]
    j = names.index("calibrated value") + 1
    assert ws.formats[(header + 1, j)]["number_format"] == "0.00"
    assert ws.formats[(header, 1)]["bold"] and ws.formats[(header, 1)]["name"] == "Calibri"
    assert ws.formats[(header + 1, names.index("reads") + 1)]["number_format"] == "0"
    for name in RESULT_SHEETS:
        ours = [list(r) for r in wb[name].iter_rows(values_only=True)]
        theirs = book.sheets[name].rows()
        width = max(len(r) for r in ours)
        assert ours == [list(r) + [None] * (width - len(r)) for r in theirs], name


def test_run_main_reports_input_errors_as_a_message_not_a_traceback():
    evaluations, _, _ = xlcalib.demo.demo_panel()
    rows = [list(evaluations.columns)] + evaluations.astype(object).values.tolist()
    rows[4][2] = "seven"
    alerts = []

    class App:
        def alert(self, prompt, title=None, buttons=None, mode=None, callback=None):
            alerts.append((prompt, title))

    book = Book([Sheet("Evaluations", rows)])
    book.app = App()
    assert run_from_excel("calibrate_panel", book) is False
    assert len(alerts) == 1 and "seven" in alerts[0][0] and "row 5" in alerts[0][0]
    assert alerts[0][1] == "xlcalib: Please fix the input"
    checks = book.sheets["Checks"].rows()
    line = next(r for r in checks if r and r[0] == "error")
    assert line[1] == "Evaluations" and "seven" in line[3]
    assert "Ranking" not in [s.name for s in book.sheets]  # nothing else written
    rows[4][2] = 7.0
    fixed = Book([Sheet("Evaluations", rows), book.sheets["Checks"]])
    fixed.app = App()
    assert run_from_excel("calibrate_panel", fixed) is True and len(alerts) == 1  # re-run replaces the Checks sheet
    assert not any(r and r[0] == "error" for r in fixed.sheets["Checks"].rows())


def test_written_files_honour_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        wb, _ = _demo_book()
        save_atomically(wb, tmp_path / "a.xlsx")
        write_bytes_atomically(b"x", tmp_path / "b.csv")
        assert main(["template", "panel_calibration", "-o", str(tmp_path / "t.xlsx")]) == 0
        for name in ("a.xlsx", "b.csv", "t.xlsx"):
            assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644, name
        os.umask(0o077)
        save_atomically(wb, tmp_path / "private.xlsx")
        assert stat.S_IMODE((tmp_path / "private.xlsx").stat().st_mode) == 0o600
    finally:
        os.umask(old)


def test_output_extension_matches_the_content(tmp_path, capsys):
    assert main(["template", "panel_calibration", "-o", str(tmp_path / "p.xlsm")]) == 2
    assert "add --macro" in capsys.readouterr().err and not list(tmp_path.iterdir())
    wb, _ = _demo_book()
    save_atomically(wb, tmp_path / "in.xlsx")
    assert main(["calibrate", str(tmp_path / "in.xlsx"), "-o", str(tmp_path / "out.xlsm")]) == 2
    assert "write it to an .xlsx file" in capsys.readouterr().err and not (tmp_path / "out.xlsm").exists()


def test_demo_exercise_stays_on_its_scale():
    evaluations, _, _ = xlcalib.demo.demo_panel()
    lo, hi = xlcalib.demo.SCALE
    assert evaluations["Score"].between(lo, hi).all()


@pytest.mark.parametrize("value, fmt, text", [(6.6481581178, "0.00", "6.65"), (0.4567, "0%", "46%"), (21, "0", "21"),
                                              (-1.2, "+0.00;-0.00;0.00", "-1.20"), (1.2, "+0.00;-0.00;0.00", "+1.20"),
                                              (9.876209e-14, '[<0.0001]"<0.0001";0.0000', "<0.0001"),
                                              (0.0123, '[<0.0001]"<0.0001";0.0000', "0.0123"),
                                              (7, "auto:0.000", "7"), (0.5, "auto:0.000", "0.500"), ("text", "0.00", "text")])
def test_shown_text(value, fmt, text):
    assert shown_text(value, fmt) == text


def test_checks_sheet_joins_input_lines_and_run_warnings():
    wb, _ = _demo_book()
    run, frames, settings = compute_calibration(wb)
    result = run.result
    frames["Checks"] = pd.DataFrame({"severity": ["warning"], "sheet": ["Evaluations"], "cell": ["B9"],
                                     "problem": ["sheet Evaluations, row 9: A has not yet scored P001 (pending: left "
                                                 "out of this run)"]})
    frames["Diagnostics"] = pd.concat([frames["Diagnostics"], pd.DataFrame(
        {"statistic": ["warning", "warning"], "value": ["1 evaluation(s) are allocated ... pending; see Checks.",
                                                        "2 object(s) have under a quarter of the median confidence"],
         "meaning": ["", ""]})], ignore_index=True)
    write_calibration(wb, run, frames, settings, now=NOW)
    lines = [r for r in wb["Checks"].iter_rows(values_only=True) if r[0] == "warning"]
    assert [r[2] for r in lines] == ["B9", None] and "quarter" in lines[1][3]  # the 'see Checks' pointer is not repeated
    summary = dict(r[:2] for r in wb["Summary"].iter_rows(values_only=True) if r[0])
    assert summary["Still to come"].startswith("1 allocated read(s) have no score yet")


@pytest.mark.parametrize("kind", ["reliability", "ordinal", "ground_truth"])
def test_reports_render_alike_through_both_backends(kind, tmp_path):
    from .test_templates import filled_ground_truth, filled_ordinal, filled_reliability

    maker = {"reliability": filled_reliability, "ordinal": filled_ordinal, "ground_truth": filled_ground_truth}[kind]
    path = maker(tmp_path / f"{kind}.xlsx")
    path = path[0] if isinstance(path, tuple) else path
    wb = openpyxl.load_workbook(path, data_only=True)
    book = Book([Sheet(ws.title, [list(r) for r in ws.iter_rows(values_only=True)]) for ws in wb.worksheets])
    kwargs = {"n_boot": 100} if kind == "reliability" else {}
    frames = RUNNERS[kind](wb, now=NOW, **kwargs)
    RUNNERS[kind](book, now=NOW, **kwargs)
    for name in frames:
        ours = [list(r) for r in wb[name].iter_rows(values_only=True)]
        theirs = book.sheets[name].rows()
        width = max(len(r) for r in ours)
        assert ours == [list(r) + [None] * (width - len(r)) for r in theirs], name
        assert wb[name]._charts or not book.sheets[name].charts
    charted = [s for s in book.sheets if s.charts]
    assert charted and all(s.charts[0].title for s in charted)
    curve_kind = {"reliability": "xy_scatter_lines", "ordinal": "xy_scatter_lines", "ground_truth": "column_clustered"}
    assert charted[0].charts[0].chart_type == curve_kind[kind]  # curves drawn with lines


def test_summary_reports_the_lottery(tmp_path):
    wb, _ = _demo_book()
    settings = CalibrationSettings(fund_top_k=20, lottery=True, draws=2000, public_seed="Panel 2024, round 2")
    run, frames, settings = compute_calibration(wb, settings)
    write_calibration(wb, run, frames, settings, now=NOW)
    rows = list(wb["Ranking"].iter_rows(values_only=True))
    header = next(i for i, r in enumerate(rows) if r[0] == "rank")
    table = pd.DataFrame(_body(rows[header + 1:]), columns=rows[header])
    drawn = table.loc[table["decision"] == "funded by lottery", "object"].tolist()
    funded = table["decision"].isin(["funded", "funded by lottery"])
    assert drawn and funded.sum() == 20  # exactly as many funded as places
    # each object's chance is shown beside its decision: its P(above the line), to the ten-thousandth
    assert np.abs(table["chance of funding"].astype(float) - table["P(above line)"].astype(float)).max() <= 1e-4
    assert (table.loc[table["chance of funding"] == 1, "decision"] == "funded").all()
    lottery = run.decisions.attrs["lottery"]
    summary = dict(r[:2] for r in wb["Summary"].iter_rows(values_only=True) if r[0])
    assert (f"Informed lottery: {lottery['sure']} place(s) certain, {len(drawn)} drawn among the "
            f"{lottery['candidates']} object(s)") in summary["Decision"]
    assert "public seed 'Panel 2024, round 2'" in summary["Decision"]
    from xlcalib.calibration.decide.ranking import decision_summary

    assert summary["Decision"] == decision_summary(run.decisions)  # the command line prints these same words
    count = next(r[0] for r in rows[header + 1:] if r[0] and str(r[0]).startswith("Count: "))
    assert count.startswith("Count: 20 places: ") and f"{len(drawn)} funded by lottery" in count
    assert summary[f"Funded by lottery ({len(drawn)})"] == ", ".join(drawn) + "."
    assert wb.sheetnames.index("Lottery") == wb.sheetnames.index("Summary") + 1


def _lottery_cells(ws):
    return [list(r) for r in ws.iter_rows(values_only=True)]


def test_the_lottery_sheet_is_re_run_from_its_cells_alone():
    """The Lottery sheet as written, read back cell by cell, re-runs to the same draw; one edited cell -- an outcome,
    a chance, a uniform number, the seed -- and the verdict says "does not match", naming the row."""
    from xlcalib.inputs import verify_lottery_cells

    wb, _ = _demo_book()
    settings = CalibrationSettings(fund_top_k=12, lottery=True, draws=2000, public_seed="007")
    run, frames, settings = compute_calibration(wb, settings)
    write_calibration(wb, run, frames, settings, now=NOW)
    ws = wb["Lottery"]
    cells = _lottery_cells(ws)
    ok, verdict = verify_lottery_cells(cells)
    assert ok and verdict.startswith("matches: re-run from the public seed '007', the 12 place(s) and the 60 objects")
    header = next(i for i, r in enumerate(cells) if r[0] == "object") + 1  # sheet row of the header
    drawn_row = next(i for i, r in enumerate(cells) if r[3] == 2) + 1  # the second object in draw order
    for column, value in ((7, "funded"), (2, 0.1235), (3, 0.5)):
        original = ws.cell(drawn_row, column).value
        ws.cell(drawn_row, column).value = value
        ok, verdict = verify_lottery_cells(_lottery_cells(ws))
        assert not ok and verdict.startswith(f"does not match: sheet Lottery, row {drawn_row} ("), (column, verdict)
        ws.cell(drawn_row, column).value = original
    seed_row = next(i for i, r in enumerate(cells) if r[0] == "Public seed") + 1
    ws.cell(seed_row, 2).value = "7"  # "007" retyped as a number: another seed
    ok, verdict = verify_lottery_cells(_lottery_cells(ws))
    assert not ok and "does not match" in verdict
    assert header > seed_row


def test_a_run_without_a_lottery_removes_an_old_lottery_sheet():
    wb, _ = _demo_book()
    run, frames, settings = compute_calibration(wb, CalibrationSettings(fund_top_k=12, lottery=True, draws=1000))
    write_calibration(wb, run, frames, settings, now=NOW)
    assert "Lottery" in wb.sheetnames
    run, frames, settings = compute_calibration(wb, CalibrationSettings(fund_top_k=12, draws=1000))
    write_calibration(wb, run, frames, settings, now=NOW)
    assert "Lottery" not in wb.sheetnames


def test_reliability_of_averages_needs_no_objects_by_assessors_grid():
    """The Summary's ICC(1,k) from objects x read slots equals the one from the objects x assessors grid
    (repeated reads averaged, objects with one read left out), with unequal reads per object."""
    from xlcalib.presentation import reliability_of_averages

    rng = np.random.default_rng(3)
    objects = np.repeat(np.arange(40), rng.integers(1, 6, 40))
    ev = pd.DataFrame({"object": [f"o{o}" for o in objects],
                       "assessor": [f"a{a}" for a in rng.integers(0, 15, len(objects))],
                       "score": rng.normal(5, 1, 40)[objects] + rng.normal(0, 1, len(objects))})
    ev = pd.concat([ev, ev.iloc[:3].assign(score=ev["score"].iloc[:3] + 1)], ignore_index=True)  # repeated reads
    grid = ev.pivot_table(index="object", columns="assessor", values="score", aggfunc="mean")
    grid = grid[grid.notna().sum(axis=1) >= 2]
    value, how = reliability_of_averages(ev)
    assert value == pytest.approx(xlcalib.icc(grid.to_numpy(dtype=float), "ICC1k"), rel=1e-12)
    assert f"of {len(grid)} objects with 2 or more reads" in how
    assert np.isnan(reliability_of_averages(ev.drop_duplicates("object"))[0])  # one read each: not computable


def test_charts_use_the_users_own_headers_and_print_on_pages_of_their_own():
    wb, evaluations = _demo_book()
    ws = wb["Evaluations"]
    for j, name in enumerate(["Reviewer", "Proposal", "Mark"], start=1):
        ws.cell(row=1, column=j, value=name)
    run, frames, settings = compute_calibration(wb, CalibrationSettings(fund_top_k=10, draws=1000))
    result = run.result
    assert settings.headers == {"assessor": "Reviewer", "object": "Proposal", "score": "Mark"}
    specs = {s.name: s for s in calibration_sheets(result, frames, settings, None, [["xlcalib calibration"]])}
    ranking, biases, values = (specs[f"{n} chart"].charts[0] for n in ("Ranking", "Biases", "Values"))
    assert ranking.x_title.startswith("Proposal, in rank order") and ranking.y_title == "calibrated Mark"
    assert biases.x_title.startswith("Reviewer") and "Mark points" in biases.y_title
    assert values.x_title.startswith("raw mean Mark")
    assert all(not specs[n].charts for n in ("Ranking", "Biases", "Values"))  # a chart never shrinks a table
    # the funding line is a reference line of its own colour, never the grey of the gridlines
    assert ranking.line_columns and ranking.kind == "dots"


def test_every_result_table_prints_at_nine_points_or_larger():
    """Fit to width scales a table to the page; 11 pt text stays at 9 pt or larger when the scale is 9/11 or more
    (the LibreOffice test measures the printed PDF)."""
    from xlcalib.workbook.base import MIN_PRINT_SCALE

    wb, _ = _demo_book()
    run, frames, settings = compute_calibration(wb, CalibrationSettings(fund_top_k=15, lottery=True, draws=1000))
    result = run.result
    preamble = [["xlcalib calibration"], ["run"], ["settings: " + settings.describe()]]
    for spec in calibration_sheets(result, frames, settings, None, preamble, feedback=True):
        assert spec.one_page or spec.printable().print_scale() >= MIN_PRINT_SCALE, (spec.name, spec.print_scale())


def test_a_short_table_prints_on_one_page_with_its_footer_a_long_one_page_after_page():
    """A table of two dozen rows is fitted one page tall as well as wide (its footer never spills a line onto a
    page of its own) while staying at 9 pt; a long one keeps printing page after page at its width's scale."""
    from xlcalib.workbook.base import SheetSpec

    def spec(rows: int) -> SheetSpec:
        frame = pd.DataFrame({"assessor": [f"A{i:02d}" for i in range(rows)], "bias": np.linspace(-1, 1, rows),
                              "in plain words": ["scores on average 0.20 ± 0.30 points below the panel, 23 reads"] * rows})
        return SheetSpec("Biases", frame, [["xlcalib calibration"], ["run"], ["settings: " + "x " * 120]],
                         footer=["± is half the width of the 95% interval", "a bias is measured against the panel"])

    assert spec(24).fits_one_page_tall() and spec(28).fits_one_page_tall()
    assert not spec(45).fits_one_page_tall() and not spec(200).fits_one_page_tall()
    wb, _ = _demo_book()
    run, frames, settings = compute_calibration(wb, CalibrationSettings(fund_top_k=15, draws=1000))
    result = run.result
    preamble = [["xlcalib calibration"], ["run"], ["settings: " + settings.describe()]]
    sheets = {s.name: s for s in calibration_sheets(result, frames, settings, None, preamble)}
    assert sheets["Biases"].printable().fits_one_page_tall()  # the demo's 12 assessors: one page
    assert not sheets["Residuals"].printable().fits_one_page_tall()  # 200 reads: page after page


def test_a_large_panels_biases_chart_shows_the_harshest_and_most_lenient_not_a_comb():
    from xlcalib.calibration.panel.simulate import simulate_panel
    from xlcalib.presentation import assessors_sheet, biases_chart
    from xlcalib.presentation.panel import CHART_ASSESSORS

    panel = simulate_panel(90, 200, 4, seed=2)
    result = xlcalib.calibrate(panel.evaluations.drop(columns="sd"))
    table = assessors_sheet(result, [["xlcalib calibration"]])
    page = biases_chart(table, [["xlcalib calibration"]])
    names = page.frame["assessor"].tolist()
    assert len(names) == CHART_ASSESSORS < len(table.frame)
    half = CHART_ASSESSORS // 2
    assert names == table.frame["assessor"].head(half).tolist() + table.frame["assessor"].tail(half).tolist()
    assert f"harshest and most lenient of {len(table.frame)}" in page.charts[0].title


def test_flag_columns_are_read_the_same_whatever_their_cells():
    """A highlight column comes as booleans, as the words the sheets show ("yes"/"no", any case or spacing), or
    mixed; a missing cell is not flagged.  Words are read once per distinct word (a column of every read)."""
    from xlcalib.presentation.common import words_for_flags
    from xlcalib.workbook.base import flagged

    assert flagged(pd.Series(["yes", "no", " Yes ", "TRUE", "", "x"])).tolist() == [True, False, True, True, False,
                                                                                     False]
    assert flagged(pd.Series(["yes", None, "no"], dtype="string")).tolist() == [True, False, False]
    assert flagged(pd.Series(["yes", None, True, 1, np.True_, "no"])).tolist() == [True, False, True, False, True,
                                                                                   False]
    assert flagged(pd.Series([True, False, np.nan])).tolist() == [True, False, False]
    assert flagged(pd.Series([], dtype=object)).tolist() == []
    words = words_for_flags(pd.Series([True, False, True]))
    assert words == ["yes", "no", "yes"] and flagged(pd.Series(words)).tolist() == [True, False, True]
    assert words_for_flags([True, None, float("nan"), 0]) == ["yes", "", "", "no"]


def test_column_widths_follow_a_new_frame_or_description():
    """A sheet measures each column's longest value once, and again when its frame or description changes (the
    Rasch ranking renames and replaces both)."""
    from xlcalib.workbook.base import Column, SheetSpec

    spec = SheetSpec("S", pd.DataFrame({"name": ["ab", "abcd"], "x": [1.5, 22.25]}))
    assert spec.longest("name") == 4 and spec.longest("x") == spec.longest("x")
    before = spec.widths()
    spec.frame = pd.DataFrame({"name": ["a much longer name here"], "x": [1.5]})
    assert spec.longest("name") == len("a much longer name here") and spec.widths()[0] > before[0]
    spec.columns["x"] = Column("x", "0.000000")
    assert spec.longest("x") == len("1.500000")
