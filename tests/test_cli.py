"""Headless CLI: demo, calibrate round trip, exit codes, safety of inputs and outputs."""
from __future__ import annotations

import json

import numpy as np
import openpyxl
import pandas as pd
import pytest

import xlcalib
from xlcalib.cli import main
from xlcalib.exercises import RESULT_SHEETS
from xlcalib.workbook import save_atomically as write_workbook_atomically
from xlcalib.workbook import write_frames


def _book(path, rows, sheet="Evaluations"):
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = sheet
    for row in rows:
        ws.append(row)
    book.save(path)
    return path


GOOD = [["Assessor", "Object", "Score", "SD", "Comment"],
        ["A", "x", 5, 1, "fine"], ["A", "y", 7, 1, None], ["B", "x", 6, 0.5, None],
        ["B", "y", 8, 1, "=cmd|' /C calc'!A0"], ["C", "y", 6.5, 2, None], ["C", "z", 4, 1, None], ["A", "z", 4.5, 1, None]]


def test_demo_runs_and_reports_improvement(tmp_path, capsys):
    from xlcalib.demo import run_demo

    assert main(["demo", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "closer to the truth" in out and "202 evaluations of 60 objects by 12 assessors" in out
    d = run_demo(tmp_path / "again")
    assert d["rms_calibrated"] < 0.7 * d["rms_raw"]  # calibration removes most of the harsh/lenient distortion
    assert 0.6 < d["rms_se"] / d["rms_calibrated"] < 1.6  # the +- shown is the size of the actual error
    # the exercise workbook is the filled-in template, and deterministic
    exercise = openpyxl.load_workbook(tmp_path / "demo_exercise.xlsx")
    assert exercise.sheetnames[:6] == ["Instructions", "Settings", "Levels", "Assessors", "Objects", "Evaluations"]
    assert (tmp_path / "demo_exercise.xlsx").read_bytes() == (tmp_path / "again" / "demo_exercise.xlsx").read_bytes()
    assert (tmp_path / "demo_exercise.xlsx").exists() and (tmp_path / "demo_exercise_calibrated.xlsx").exists()
    result = openpyxl.load_workbook(tmp_path / "demo_exercise_calibrated.xlsx")
    assert {"Values", "Biases", "Residuals", "Diagnostics"} <= set(result.sheetnames)
    # native charts, each on a page of its own after the table it draws (a chart never shrinks a table)
    assert not result["Biases"]._charts and not result["Values"]._charts
    assert len(result["Biases chart"]._charts) == 1 and len(result["Values chart"]._charts) == 1


def test_calibrate_round_trip_equals_core(tmp_path, capsys):
    src = _book(tmp_path / "panel.xlsx", GOOD)
    before = src.read_bytes()
    assert main(["calibrate", str(src)]) == 0
    assert src.read_bytes() == before  # input untouched
    out = tmp_path / "panel_calibrated.xlsx"
    ws = openpyxl.load_workbook(out)["Values"]
    rows = list(ws.iter_rows(values_only=True))
    header_at = next(i for i, r in enumerate(rows) if r and r[0] == "object")
    table = pd.DataFrame(rows[header_at + 1:], columns=rows[header_at]).set_index("object")
    frame = pd.DataFrame(GOOD[1:], columns=[c.lower() for c in GOOD[0]])
    core = xlcalib.calibrate(frame)
    np.testing.assert_allclose(table.loc[core.values.index, "calibrated value"].astype(float), core.values["value"], atol=1e-12)
    settings_text = " ".join(r[0] for r in rows[2:header_at] if r and r[0])  # long lines wrap into rows that print
    assert rows[0][0] == "xlcalib calibration" and "gauge=weighted" in settings_text


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_other_formats(tmp_path, fmt):
    src = _book(tmp_path / "panel.xlsx", GOOD)
    out = tmp_path / ("res" if fmt == "csv" else "res.json")
    assert main(["calibrate", str(src), "-o", str(out), "--format", fmt, "--gauge", "simple"]) == 0
    if fmt == "json":
        payload = json.loads(out.read_text())
        assert payload["stats"]["gauge"] == "simple" and len(payload["Values"]) == 3
    else:
        assert (out / "panel_Values.csv").exists()


def test_formula_text_is_written_as_text(tmp_path):
    book = openpyxl.Workbook()
    write_frames(book, {"T": pd.DataFrame({"x": ["=1+1", "+SUM(A1)", "-2", "@x", "plain"]})})
    path = write_workbook_atomically(book, tmp_path / "t.xlsx")
    ws = openpyxl.load_workbook(path)["T"]
    cells = [ws.cell(row=i, column=1) for i in range(2, 7)]
    assert [c.value for c in cells] == ["=1+1", "+SUM(A1)", "-2", "@x", "plain"]
    assert all(c.data_type == "s" for c in cells)


@pytest.mark.parametrize(
    "rows, message",
    [
        ([["Assessor", "Object", "Score", "SD"], ["A", "x", "3,5", 1]], "row 2, column Score (C2) is the text '3,5' with a decimal comma"),
        ([["Assessor", "Object", "Score", "SD"], ["A", "x", 5, 1], [None, "y", 4, 1]], "row 3, column Assessor (A3) is blank"),
        ([["Assessor", "Object", "Score", "SD"], ["A", "x", 5, 1], ["A", "y", 4, -1], ["B", "x", 1, 1], ["B", "y", 1, 1]],
         "sheet Evaluations, row 3, column SD (D3) is -1; an SD must be greater than 0"),
        ([["Assessor", "Object", "Score"], ["A", "x", 5]], "add one uncertainty column"),
        ([["Assessor", "Object", "Score", "SD"], ["A", "x", 5, 1], ["B", "x", 4, 1], ["A", "x", 4, 1]],
         "more than once (sheet Evaluations, rows 2, 4)"),
        ([["Assessor", "Object", "Score", "SD"], ["A", "x", "#N/A", 1]], "holds the Excel error #N/A"),
    ],
)
def test_bad_input_exit_2_with_cell_named(tmp_path, capsys, rows, message):
    src = _book(tmp_path / "bad.xlsx", rows)
    assert main(["calibrate", str(src)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_dates_and_trailing_blank_rows_and_hidden_rows(tmp_path, capsys):
    import datetime

    rows = GOOD + [[None] * 5] * 5
    src = _book(tmp_path / "p.xlsx", rows)
    book = openpyxl.load_workbook(src)
    book.active.row_dimensions[3].hidden = True  # hidden rows are still data
    book.save(src)
    assert main(["calibrate", str(src), "--format", "json", "-o", str(tmp_path / "r.json")]) == 0
    payload = json.loads((tmp_path / "r.json").read_text())
    assert payload["stats"]["n_evaluations"] == 7
    warnings = [r["value"] for r in payload["Diagnostics"] if r["statistic"] == "warning"]
    assert any("1 evaluation(s) sit in hidden rows of sheet Evaluations (rows 3) and were included" in w for w in warnings)
    bad = _book(tmp_path / "d.xlsx", [GOOD[0], ["A", "x", datetime.datetime(2024, 3, 5), 1, None]])
    assert main(["calibrate", str(bad)]) == 2
    assert "row 2, column Score (C2) holds a date" in capsys.readouterr().err


def test_not_a_workbook_encrypted_missing_sheet(tmp_path, capsys):
    text = tmp_path / "x.xlsx"
    text.write_text("hello")
    assert main(["calibrate", str(text)]) == 2
    assert "not an Excel workbook" in capsys.readouterr().err
    ole = tmp_path / "locked.xlsx"
    ole.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 100)
    assert main(["calibrate", str(ole)]) == 2
    assert "password-protected" in capsys.readouterr().err
    src = _book(tmp_path / "s.xlsx", GOOD, sheet="Other")
    assert main(["calibrate", str(src)]) == 2
    err = capsys.readouterr().err
    assert "s.xlsx has no sheet named 'Evaluations' (the evaluations table); its sheet Other holds one (columns " \
           "Assessor, Object, Score): name that sheet 'Evaluations', or give --sheet \"Other\"" in err, err
    assert main(["calibrate", str(src), "--sheet", "Other", "-o", str(tmp_path / "o.xlsx")]) == 0  # as it says
    capsys.readouterr()
    src = _book(tmp_path / "t.xlsx", [["Paper ID", "Title"], [1, "x"], [2, "y"]], sheet="Other")
    assert main(["calibrate", str(src)]) == 2
    assert "no sheet named 'Evaluations'" in capsys.readouterr().err


def test_size_limit(tmp_path, monkeypatch, capsys):
    from xlcalib.workbook import reader as openpyxl_io

    src = _book(tmp_path / "p.xlsx", GOOD)
    monkeypatch.setattr(openpyxl_io, "MAX_INPUT_BYTES", 100)
    assert main(["calibrate", str(src)]) == 2
    assert "the limit is" in capsys.readouterr().err


def test_atomic_write_keeps_previous_file_on_crash(tmp_path, monkeypatch):
    target = tmp_path / "out.xlsx"
    target.write_bytes(b"previous")
    book = openpyxl.Workbook()

    def boom(path):
        with open(path, "wb") as handle:
            handle.write(b"partial")
        raise RuntimeError("disk full")

    monkeypatch.setattr(book, "save", boom)
    with pytest.raises(RuntimeError):
        write_workbook_atomically(book, target)
    assert target.read_bytes() == b"previous"
    assert [p.name for p in tmp_path.iterdir()] == ["out.xlsx"]  # no temp file left behind


def test_internal_error_exit_1(tmp_path, monkeypatch, capsys):
    src = _book(tmp_path / "p.xlsx", GOOD)
    monkeypatch.setattr(xlcalib.calibration.models.random_assessors, "fit_component", lambda *a: 1 / 0)
    assert main(["calibrate", str(src)]) == 1
    assert "internal error" in capsys.readouterr().err


def test_disconnected_panel_and_per_component(tmp_path, capsys):
    rows = [["Assessor", "Object", "Score", "SD"], ["A", "x", 5, 1], ["A", "y", 6, 1], ["B", "x", 4, 1], ["B", "y", 7, 1],
            ["C", "u", 5, 1], ["C", "v", 3, 1], ["D", "u", 6, 1], ["D", "v", 2, 1]]
    src = _book(tmp_path / "two.xlsx", rows)
    assert main(["calibrate", str(src), "--model", "fixed"]) == 2
    err = capsys.readouterr().err
    assert "not connected" in err and "--per-component" in err and "component 2: C, D" in err
    assert "random-assessors" in err  # the refusal names the model that compares the groups
    assert main(["calibrate", str(src), "--format", "json", "-o", str(tmp_path / "d.json")]) == 0  # the default links
    out = capsys.readouterr().out
    assert "2 groups that share no objects" in out and "as strict as the panel" in out
    assert main(["calibrate", str(src), "--per-component", "--format", "json", "-o", str(tmp_path / "r.json")]) == 0
    payload = json.loads((tmp_path / "r.json").read_text())
    assert {r["component"] for r in payload["Values"]} == {1, 2}
    assert any("splits into 2 groups" in r["value"] for r in payload["Diagnostics"] if r["statistic"] == "warning")


def test_report_calibration_equals_calibrate(tmp_path):
    src = _book(tmp_path / "p.xlsx", GOOD)
    book = openpyxl.load_workbook(src)
    book.create_sheet("Notes")["A1"] = "=1+1"  # a formula of the secretary's: kept in the report copy
    book.save(src)
    assert main(["report", "calibration", str(src)]) == 0
    out = openpyxl.load_workbook(tmp_path / "p_report.xlsx")
    assert out.sheetnames == ["Evaluations", "Notes", *RESULT_SHEETS, "Next reads"]
    assert out["Notes"]["A1"].value == "=1+1" and out["Notes"]["A1"].data_type == "f"
    rows = list(out["Values"].iter_rows(values_only=True))
    header = next(i for i, r in enumerate(rows) if r and r[0] == "object")
    table = pd.DataFrame(rows[header + 1:], columns=rows[header]).set_index("object")
    core = xlcalib.calibrate(pd.DataFrame(GOOD[1:], columns=[c.lower() for c in GOOD[0]]))
    np.testing.assert_allclose(table.loc[core.values.index, "calibrated value"].astype(float), core.values["value"], atol=1e-12)


def test_csv_input_fast_path(tmp_path, capsys):
    csv_path = tmp_path / "panel.csv"
    csv_path.write_text("\n".join(";".join("" if v is None else str(v) for v in row) for row in GOOD) + "\n\n",
                        encoding="utf-8-sig")
    assert main(["calibrate", str(csv_path), "--format", "json", "-o", str(tmp_path / "r.json")]) == 0
    payload = json.loads((tmp_path / "r.json").read_text())
    core = xlcalib.calibrate(pd.DataFrame(GOOD[1:], columns=[c.lower() for c in GOOD[0]]))
    got = {r["object"]: r["value"] for r in payload["Values"]}
    np.testing.assert_allclose([got[o] for o in core.values.index], core.values["value"], atol=1e-12)
    bad = tmp_path / "bad.csv"
    bad.write_text("Assessor,Object,Score,SD\nA,x,\"3,5\",1\n")
    assert main(["calibrate", str(bad)]) == 2
    assert "sheet Evaluations, row 2, column Score (C2) is the text '3,5' with a decimal comma" in capsys.readouterr().err


def test_result_sheet_beyond_excel_rows_is_refused_cleanly(monkeypatch):
    from xlcalib.workbook import base, new_workbook, open_book

    book = new_workbook()
    backend = open_book(book)
    backend.write_frame("Residuals", pd.DataFrame({"x": [1.0]}))
    monkeypatch.setattr(base, "EXCEL_MAX_ROWS", 5)
    with pytest.raises(xlcalib.InputError, match="sheet Residuals would need 8 rows x 1 columns.*--format csv"):
        backend.write_frame("Residuals", pd.DataFrame({"x": np.arange(5.0)}), preamble=[["a"]])
    assert book["Residuals"]["A2"].value == 1.0  # the previous sheet is untouched


def test_numbers_stored_as_text_are_read(tmp_path):
    as_text = [GOOD[0]] + [[a, o, str(s), str(sd), c] for a, o, s, sd, c in GOOD[1:]]
    src = _book(tmp_path / "t.xlsx", as_text)
    assert openpyxl.load_workbook(src).active["C2"].data_type == "s"
    assert main(["calibrate", str(src), "--format", "json", "-o", str(tmp_path / "t.json")]) == 0
    src2 = _book(tmp_path / "n.xlsx", GOOD)
    assert main(["calibrate", str(src2), "--format", "json", "-o", str(tmp_path / "n.json")]) == 0
    assert json.loads((tmp_path / "t.json").read_text())["Values"] == json.loads((tmp_path / "n.json").read_text())["Values"]


def test_many_problems_are_listed_capped_with_a_count_and_a_file(tmp_path, capsys):
    rows = [["Assessor", "Object", "Score", "SD"]] + [["A", f"o{i}", "3,5", 1] for i in range(117)] + [["B", "o1", 5, 1]]
    src = _book(tmp_path / "many.xlsx", rows)
    assert main(["calibrate", str(src)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 21 and "Traceback" not in "".join(err)
    assert err[0] == ("xlcalib: error: sheet Evaluations, row 2, column Score (C2) is the text '3,5' with a decimal "
                      "comma; enter it as a number (e.g. 3.5) so it is not misread")
    listing = tmp_path / "many_problems.csv"
    assert err[-1] == f"xlcalib: ... and 97 more problems; all are listed in {listing}"
    table = pd.read_csv(listing)
    assert table.columns.tolist() == ["severity", "sheet", "cell", "problem"] and len(table) == 117
    assert table["cell"].iloc[-1] == "C118"


def test_pending_rows_run_and_are_reported(tmp_path, capsys):
    rows = GOOD + [["C", "x", None, None], ["B", "z", None, 1]]
    src = _book(tmp_path / "mid.xlsx", rows)
    assert main(["calibrate", str(src), "--format", "json", "-o", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    assert "input checks: 2 pending evaluation(s) (allocated, no score yet) left out (listed in Checks)" in out
    payload = json.loads((tmp_path / "r.json").read_text())
    assert [c["cell"] for c in payload["Checks"]] == ["C9", "C10"]
    assert payload["stats"]["n_evaluations"] == 7
    warnings = [r["value"] for r in payload["Diagnostics"] if r["statistic"] == "warning"]
    assert warnings[0].startswith("2 evaluation(s) are allocated but not scored yet (pending)")


def test_calibrate_with_a_funding_line_writes_ranking_and_decisions(tmp_path, capsys):
    import json

    from xlcalib.demo import write_demo_exercise

    exercise, *_ = write_demo_exercise(tmp_path / "ex.xlsx")
    assert main(["calibrate", str(exercise), "-o", str(tmp_path / "r.json"), "--format", "json", "--fund", "10",
                 "--lottery", "--seed", "4"]) == 0
    out = capsys.readouterr().out
    assert "Funding line top 10 (10 places): " in out and "each funded with exactly its chance (public seed '4' (the " \
        "run's seed: none was declared before the meeting)" in out
    payload = json.loads((tmp_path / "r.json").read_text())
    ranking = payload["Ranking"]
    assert [row["rank"] for row in ranking] == sorted(row["rank"] for row in ranking)
    assert {"p_above", "decision", "changed", "lottery", "rank_lower", "final", "basis"} <= set(ranking[0])
    assert sum(row["final"] in ("funded", "funded by lottery") for row in ranking) == 10  # every place filled
    assert sum(row["p_above"] for row in ranking) == pytest.approx(10)
    assert payload["ranking"]["lottery"]["seed"] == "4" and payload["settings"]["funding_top_k"] == 10
    assert payload["ranking"]["lottery"]["method"] == "informed"
    assert {"se", "lower", "upper", "robustness_bound"} <= set(payload["Values"][0])
    # xlsx: the Ranking sheet comes first
    assert main(["calibrate", str(exercise), "-o", str(tmp_path / "r.xlsx"), "--threshold", "7"]) == 0
    import openpyxl

    book = openpyxl.load_workbook(tmp_path / "r.xlsx", read_only=True)
    assert book.sheetnames[0] == "Ranking"


def test_lottery_without_places_is_refused(tmp_path, capsys):
    from xlcalib.demo import write_demo_exercise

    exercise, *_ = write_demo_exercise(tmp_path / "ex.xlsx")
    assert main(["calibrate", str(exercise), "--lottery", "-o", str(tmp_path / "r.xlsx")]) == 2
    assert "--fund K" in capsys.readouterr().err


def _behaviour_rows(seed=7):
    from xlcalib.calibration.panel.simulate import simulate_panel

    p = simulate_panel(12, 60, 4, n_subjects=2, two_subjects=0.9, gain_sd=0.4, group_bias={(1, 0): -1.5}, seed=seed)
    ev = p.evaluations
    rows = [["Assessor", "Object", "Score", "Level", "Group"]]
    rows += [[a, o, float(s), lvl, f"subject {p.subjects[o]}"] for a, o, s, lvl in
             zip(ev["assessor"], ev["object"], ev["score"], ev["level"])]
    return rows, p


def test_calibrate_scale_use_and_groups(tmp_path, capsys):
    rows, _ = _behaviour_rows()
    src = _book(tmp_path / "panel.xlsx", rows)
    out = tmp_path / "result.xlsx"
    assert main(["calibrate", str(src), "-o", str(out), "--scale-use", "on", "--feedback"]) == 0
    printed = capsys.readouterr().out
    assert "Scale use modelled" in printed
    book = openpyxl.load_workbook(out)
    assert {"Fit", "Unexpected", "Groups", "Group bias", "Feedback"} <= set(book.sheetnames)
    biases = list(book["Biases"].iter_rows(values_only=True))
    assert "gain" in next(r for r in biases if r[0] == "assessor")
    summary = dict(r[:2] for r in book["Summary"].iter_rows(values_only=True) if r[0])
    assert "levels of quality" in summary["How finely the panel can rank"]
    assert summary["Groups"] and "Assessor x group bias" in summary
    # JSON carries the same tables
    js = tmp_path / "result.json"
    assert main(["calibrate", str(src), "-o", str(js), "--format", "json", "--scale-use", "auto"]) == 0
    payload = json.loads(js.read_text())
    assert {"Fit", "Unexpected", "Separation", "Agreement", "GroupBias", "GroupAudit"} <= set(payload)
    assert payload["stats"]["scale_use"] == "auto"


def test_group_column_by_name_and_its_problems(tmp_path, capsys):
    rows, _ = _behaviour_rows()
    rows[0][4] = "Panel"
    src = _book(tmp_path / "panel.xlsx", rows)
    out = tmp_path / "result.xlsx"
    assert main(["calibrate", str(src), "-o", str(out)]) == 0  # "Panel" is not the default name: no groups
    assert "Groups" not in openpyxl.load_workbook(out).sheetnames
    assert main(["calibrate", str(src), "-o", str(out), "--group-column", "panel"]) == 0
    assert "Group bias" in openpyxl.load_workbook(out).sheetnames
    assert main(["calibrate", str(src), "-o", str(out), "--group-column", "Subject"]) == 2
    assert "no column 'Subject'" in capsys.readouterr().err
    rows[5][4] = "another"  # the object of row 6 now has two groups
    obj = rows[5][1]
    clash = [i + 1 for i, r in enumerate(rows) if r[1] == obj]
    src = _book(tmp_path / "clash.xlsx", rows)
    assert main(["calibrate", str(src), "-o", str(out), "--group-column", "Panel"]) == 2
    err = capsys.readouterr().err
    assert f"object {obj} is in group" in err and str(clash[0]) in err


def test_groups_from_the_objects_sheet(tmp_path):
    rows, p = _behaviour_rows()
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Evaluations"
    for row in rows:
        ws.append(row[:4])
    objects = book.create_sheet("Objects")
    objects.append(["Object", "Group"])
    for name, subject in p.subjects.items():
        objects.append([name, f"s{subject}"])
    book.save(tmp_path / "panel.xlsx")
    run, _ = xlcalib.exercises.calibrate_file(tmp_path / "panel.xlsx", tmp_path / "out.xlsx")
    assert run.groups is not None and set(run.groups) == {"s0", "s1"}  # the run's record, not the result


@pytest.mark.parametrize("fmt", ["xlsx", "csv"])
def test_a_run_never_changes_the_result_it_was_given(tmp_path, monkeypatch, fmt):
    """calibrate makes a result once, complete: a whole run (groups, a funding line with a lottery, an input
    check, every sheet or file written) sets no attribute on it and changes none of its tables or figures --
    what the run adds is in the run's own record."""
    import copy
    import dataclasses

    from xlcalib.exercises import panel_calibration

    made = []
    real = panel_calibration.calibrate

    def recording(*args, **kwargs):
        result = real(*args, **kwargs)
        made.append((result, copy.deepcopy({"values": result.values, "biases": result.biases,
                                            "residuals": result.residuals, "stats": result.stats})))
        return result

    monkeypatch.setattr(panel_calibration, "calibrate", recording)
    rows, _p = _behaviour_rows()
    read = {(r[0], r[1]) for r in rows[1:]}
    unread = next((a, o) for a in sorted({r[0] for r in rows[1:]}) for o in sorted({r[1] for r in rows[1:]})
                  if (a, o) not in read)
    src = _book(tmp_path / "panel.xlsx", rows + [[*unread, None, None, "subject 0"]])  # a pending read
    out = tmp_path / ("out.xlsx" if fmt == "xlsx" else "out")
    run, _ = xlcalib.exercises.calibrate_file(src, out, fmt=fmt, fund=5, lottery=True, feedback=True)
    (result, at_birth), = made
    assert run.result is result and run.decisions is not None and run.groups is not None and run.input_checks
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.decisions = run.decisions  # the attribute a run used to set
    for name in ("values", "biases", "residuals"):
        pd.testing.assert_frame_equal(getattr(result, name), at_birth[name], check_exact=True)  # untouched
    assert result.stats.keys() == at_birth["stats"].keys()
    for key, before in at_birth["stats"].items():
        after = result.stats[key]
        assert after == before or (after != after and before != before), key  # NaN stays NaN


def _run_on_a_terminal(argv, cwd):
    """Run the command line with stderr on a pseudo-terminal (as a person at a terminal sees it); returns
    (stderr as shown, stdout, exit code)."""
    import os
    import pty
    import subprocess
    import sys

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "xlcalib", *argv], stdout=subprocess.PIPE, stderr=slave, cwd=cwd)
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal closed: the process is gone
            break
        if not chunk:
            break
        shown += chunk
    out, _ = proc.communicate(timeout=600)
    os.close(master)
    return shown.decode("utf-8", "replace"), out.decode(), proc.returncode


def test_the_steps_show_on_a_terminal_while_they_run(tmp_path):
    """A person at a terminal sees each step as it starts (reading, fitting, ranking with its draws, writing,
    saving), on one line of stderr that is cleared before the results are printed; a pipe or --quiet sees none."""
    from xlcalib.calibration.panel.simulate import simulate_panel

    ev = simulate_panel(24, 150, 4, seed=1).evaluations.drop(columns="sd")
    ev.rename(columns=str.title).to_csv(tmp_path / "panel.csv", index=False)
    argv = ["calibrate", "panel.csv", "--fund", "20", "-o", "out.xlsx"]
    shown, out, code = _run_on_a_terminal(argv, tmp_path)
    assert code == 0 and "results written to out.xlsx" in out
    steps = ["reading and checking the evaluations", "fitting the random-assessors model", "standard errors",
             "ranking", "writing the result sheets", "saving out.xlsx"]
    positions = [shown.find(words) for words in steps]
    assert all(p >= 0 for p in positions) and positions == sorted(positions), shown[:2000]
    quiet, _, code = _run_on_a_terminal([*argv, "--quiet"], tmp_path)
    assert code == 0 and "fitting" not in quiet
    import subprocess
    import sys

    piped = subprocess.run([sys.executable, "-m", "xlcalib", *argv], capture_output=True, text=True, cwd=tmp_path)
    assert piped.returncode == 0 and piped.stderr == ""


def test_a_calibration_run_does_not_import_scipy_stats(tmp_path):
    """Importing scipy.stats takes most of a second: the main job (fit, ranking with a line, every result sheet,
    the Summary's ICC(1,k)) keeps off it, as the core's normal and t quantiles do (scipy.special)."""
    import subprocess
    import sys

    code = ("import sys\nfrom xlcalib.cli import main\n"
            f"assert main(['demo', '--out', {str(tmp_path)!r}]) == 0\n"
            "assert 'scipy.stats' not in sys.modules, 'the main job imported scipy.stats'\n")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_starting_the_program_or_the_add_in_imports_no_optimiser_or_distributions():
    """scipy.optimize (0.2 s) and scipy.stats (0.5 s) are imported where they are used, not at start: the command
    line and the spreadsheet functions (whose add-in loads them all, and in xlwings Lite over Pyodide's slower
    imports) start without them."""
    import subprocess
    import sys

    code = ("import sys\nimport xlcalib.cli, udf_registry\n"
            "late = [m for m in ('scipy.optimize', 'scipy.stats') if m in sys.modules]\n"
            "assert not late, late\n")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
