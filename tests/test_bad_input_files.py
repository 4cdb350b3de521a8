"""The permanent bad-input suite, its file and process half: writing into the user's workbook, full disks,
interrupted runs, hostile and damaged files, settings that must be applied or refused.

Companion of :mod:`tests.test_bad_input` (whose classes this continues); these tests write workbook files
and start processes, so they do not run in xlwings Lite (``lite/runner.py``).  Parametrised over what
exists: every CLI command (:data:`tests.test_bad_input.COMMANDS`), every report runner and Run-main entry,
so a new one is covered or the suite asks for its valid call.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import zipfile

import numpy as np
import openpyxl
import pandas as pd
import pytest

from xlcalib.cli import main
from xlcalib.exercises import MACRO_RUNNERS, RUNNERS
from xlcalib.templates import build

from .test_bad_input import COMMANDS, FOLDER_OUTPUT, _argv, _one_line_error, _panel_book, _reliability_book


# =============================================================================
# 1. Writing into the user's workbook: assign, import --into, report, Run main
# =============================================================================
def _plan(path, assessors=6, objects=12, reads=2, max_load=5):
    build("panel_calibration", path, assessors=assessors, objects=objects, reads=reads, assignment=True)
    book = openpyxl.load_workbook(path)
    ws = book["Assignment"]
    for r in range(2, assessors + 2):
        ws.cell(row=r, column=2).value = max_load
    book.save(path)
    return path


def _rows(path, sheet="Evaluations"):
    """Every row under the header of *sheet*: (values, formula flags) per row, blank rows included."""
    book = openpyxl.load_workbook(path)
    ws = book[sheet]
    return [([c.value for c in row], [c.data_type == "f" for c in row]) for row in ws.iter_rows(min_row=2)]


def _wanted(path):
    """Reads wanted per object and max load per assessor, from the Assignment sheet."""
    ws = openpyxl.load_workbook(path, data_only=True)["Assignment"]
    reads = {r[5]: r[6] for r in ws.iter_rows(min_row=2, values_only=True) if r[5] is not None}
    loads = {r[0]: r[1] for r in ws.iter_rows(min_row=2, values_only=True) if r[0] is not None}
    return reads, loads


def _check_allocation(path, plan):
    """The invariants of an allocation written back: no duplicate pair, every object its reads, no assessor over
    its max load, no stale cell in a row without a score, names as text."""
    reads, loads = _wanted(plan)
    rows = _rows(path)
    filled = [(v, f) for v, f in rows if any(x is not None for x in v)]
    frame = pd.DataFrame([v[:4] for v, _ in filled], columns=["assessor", "object", "score", "level"])
    assert not frame.duplicated(["assessor", "object"]).any(), frame
    assert frame.groupby("object").size().reindex(list(reads), fill_value=0).to_dict() == reads
    load = frame.groupby("assessor").size()
    assert all(load[a] <= loads[a] for a in load.index), load
    for values, formulas in filled:
        assert not any(formulas[:2]), values  # a name is never a formula
        if values[2] is None:  # pending: nothing but the pair
            assert values[3] is None and all(v is None for v in values[4:]), values
    return frame


def test_assign_rerun_over_more_pending_rows_than_needed(tmp_path, capsys):
    """14 pending rows (with levels) and 10 reads needed: 10 rows are rewritten whole, 4 cleared."""
    plan = _plan(tmp_path / "plan.xlsx", max_load=3)
    book = openpyxl.load_workbook(plan)
    ws = book["Assignment"]
    for r in range(2, 14):
        ws.cell(row=r, column=7).value = 2 if r < 7 else 0  # objects 1-5 want 2 reads: 10 in all
    ev = book["Evaluations"]
    for i in range(14):
        ev.cell(row=2 + i, column=1).value = f"Assessor {1 + i % 6}"
        ev.cell(row=2 + i, column=2).value = f"Object {1 + (i * 5) % 12}"
        ev.cell(row=2 + i, column=4).value = "High"
    book.save(plan)
    out = tmp_path / "out.xlsx"
    assert main(["assign", str(plan), "-o", str(out)]) == 0, capsys.readouterr().err
    frame = _check_allocation(out, plan)
    assert len(frame) == 10 and frame["level"].isna().all()


def test_assign_keeps_a_score_that_is_an_uncalculated_formula(tmp_path, capsys):
    plan = _plan(tmp_path / "plan.xlsx")
    book = openpyxl.load_workbook(plan)
    ev = book["Evaluations"]
    ev["A2"], ev["B2"], ev["C2"], ev["D2"] = "Assessor 1", "Object 5", "=3+4", "High"  # never calculated
    ev["A3"], ev["B3"], ev["C3"], ev["D3"] = "Assessor 2", "Object 5", 6, "Low"
    book.save(plan)
    out = tmp_path / "out.xlsx"
    assert main(["assign", str(plan), "-o", str(out)]) == 0
    assert "(2 already scored, kept)" in capsys.readouterr().out
    rows = _rows(out)
    assert rows[0][0][:4] == ["Assessor 1", "Object 5", "=3+4", "High"] and rows[0][1][2]
    assert sum(1 for values, flags in rows if flags[2]) == 1  # the formula is nowhere else
    frame = _check_allocation(out, plan)
    assert len(frame) == 24


@pytest.mark.parametrize("name", ["=1+2", '=HYPERLINK("http://example.org","x")', "@SUM(1)", "+cmd"])
def test_assign_writes_names_as_text(name, tmp_path, capsys):
    plan = _plan(tmp_path / "plan.xlsx")
    book = openpyxl.load_workbook(plan)
    cell = book["Assignment"]["A2"]
    cell.value, cell.data_type = name, "s"
    book.save(plan)
    out = tmp_path / "out.xlsx"
    assert main(["assign", str(plan), "-o", str(out)]) == 0, capsys.readouterr().err
    ws = openpyxl.load_workbook(out)["Evaluations"]
    cells = [c for c in ws["A"] if c.value == name]
    assert cells and all(c.data_type == "s" for c in cells)


def test_assign_appended_rows_join_the_table_and_its_drop_downs(tmp_path, capsys):
    plan = _plan(tmp_path / "plan.xlsx", objects=12, reads=3, max_load=8)  # 36 reads, 24 template rows
    book = openpyxl.load_workbook(plan)
    for r in range(2, 14):
        book["Assignment"].cell(row=r, column=7).value = 3
    book.save(plan)
    out = tmp_path / "out.xlsx"
    assert main(["assign", str(plan), "-o", str(out)]) == 0, capsys.readouterr().err
    ws = openpyxl.load_workbook(out)["Evaluations"]
    assert ws.tables["Evaluations"].ref == "A1:D37"
    for column in "ABCD":
        covered = [dv for dv in ws.data_validations.dataValidation if f"{column}37" in dv.sqref]
        assert covered, column
    _check_allocation(out, plan)


def test_assign_output_type_follows_the_macros(tmp_path, capsys):
    plan = _plan(tmp_path / "plan.xlsx")
    err = _one_line_error(capsys, main(["assign", str(plan), "-o", str(tmp_path / "out.xlsm")]))
    assert "out.xlsm" in err and "no macros" in err and not (tmp_path / "out.xlsm").exists()


@pytest.mark.parametrize("suffix", [".xlsm", ".xlsx"])
def test_assign_content_type_follows_the_output_from_a_macro_book(suffix, tmp_path, capsys):
    """From a macro workbook: .xlsm keeps the macros and their content type; .xlsx drops both (Excel opens each)."""
    plan = build("panel_calibration", tmp_path / "plan.xlsm", macro=True, assessors=6, objects=12, reads=2,
                 assignment=True)[0]
    book = openpyxl.load_workbook(plan, keep_vba=True)
    for r in range(2, 8):
        book["Assignment"].cell(row=r, column=2).value = 5
    book.save(plan)
    out = tmp_path / f"out{suffix}"
    assert main(["assign", str(plan), "-o", str(out)]) == 0, capsys.readouterr().err
    with zipfile.ZipFile(out) as z:
        types, names = z.read("[Content_Types].xml").decode(), z.namelist()
    macro = "application/vnd.ms-excel.sheet.macroEnabled.main+xml" in types
    assert macro == (suffix == ".xlsm") and ("xl/vbaProject.bin" in names) == (suffix == ".xlsm")
    assert ("spreadsheetml.sheet.main+xml" in types) == (suffix == ".xlsx")


@pytest.mark.parametrize("cell, value, expected", [
    ("B3", 1e12, "sheet Assignment, row 3, column Max load (B3)"),
    ("G3", 1e12, "sheet Assignment, row 3, column Reads wanted (G3)"),
    ("C3", 1e12, "sheet Assignment, row 3, column Min load (C3)"),
])
def test_assign_huge_counts_are_named_by_cell(cell, value, expected, tmp_path, capsys):
    plan = _plan(tmp_path / "plan.xlsx")
    book = openpyxl.load_workbook(plan)
    book["Assignment"][cell] = value
    book.save(plan)
    err = _one_line_error(capsys, main(["assign", str(plan), "-o", str(tmp_path / "out.xlsx")]))
    assert expected in err and "np." not in err and "1,000,000,000,000" in err, err


@pytest.mark.parametrize("value", [1e300, 1e16, 1.7e308])
def test_assign_suitability_beyond_the_limit_is_named_by_cell(value, tmp_path, capsys):
    plan = _plan(tmp_path / "plan.xlsx")
    book = openpyxl.load_workbook(plan)
    grid = book.create_sheet("Suitability")
    for j in range(12):
        grid.cell(row=1, column=j + 2).value = f"Object {j + 1}"
    for i in range(6):
        grid.cell(row=i + 2, column=1).value = f"Assessor {i + 1}"
        for j in range(12):
            grid.cell(row=i + 2, column=j + 2).value = 1.0 + (i + j) % 3
    grid["C4"] = value
    book.save(plan)
    err = _one_line_error(capsys, main(["assign", str(plan), "-o", str(tmp_path / "out.xlsx")]))
    assert "sheet Suitability, cell C4" in err and "1e+15" in err, err


def _rerun_assign(tmp_path):
    plan = _plan(tmp_path / "plan.xlsx")
    return plan, lambda source, out: ["assign", str(source), "-o", str(out)], plan


def _rerun_import_into(tmp_path):
    from .test_imports_systems import HOTCRP

    export = tmp_path / "reviews.csv"
    export.write_text(HOTCRP)
    build("panel_calibration", tmp_path / "panel.xlsx", assessors=3, objects=3)
    return tmp_path / "panel.xlsx", lambda source, out: ["import", str(export), "--into", str(source), "-o", str(out)], None


def _rerun_report(kind):
    def setup(tmp_path):
        return _report_input(kind, tmp_path), lambda source, out: ["report", kind, str(source), "-o", str(out)], None

    return setup


def _report_input(kind, tmp_path):
    """A filled workbook for each report runner."""
    from xlcalib.templates import BUILDERS

    if kind == "calibration":
        return _panel_book(tmp_path / "in.xlsx")
    if kind == "reliability":
        return _reliability_book(tmp_path / "in.xlsx")
    if kind == "ordinal":
        wb = BUILDERS["ordinal_agreement"](objects=4)
        for r, (a, b) in enumerate([("F1", "F2"), ("F2", "F2"), ("F3", "F3"), ("F4", "F4")], start=2):
            wb["Ratings"].cell(row=r, column=2, value=a)
            wb["Ratings"].cell(row=r, column=3, value=b)
    elif kind == "ground_truth":
        wb = BUILDERS["ground_truth"](items=3, annotators=2)
        for r, values in enumerate([["Melanoma", "Nevus"], ["Nevus", "Nevus"], ["Eczema", "Melanoma > Nevus"]], start=2):
            for c, v in enumerate(values, start=2):
                wb["Annotations"].cell(row=r, column=c, value=v)
    else:
        raise AssertionError(f"new report runner {kind!r}: add a filled workbook to tests/test_bad_input_files.py")
    wb.save(tmp_path / "in.xlsx")
    return tmp_path / "in.xlsx"


#: every command that writes into (a copy of) the user's workbook -> setup(tmp_path) giving the first input, the
#: command line for (input, output) and the plan whose Assignment sheet the allocation must keep (or None)
REWRITES = {"assign": _rerun_assign, "import --into": _rerun_import_into,
            **{f"report {kind}": _rerun_report(kind) for kind in RUNNERS}}


def _cells(path):
    book = openpyxl.load_workbook(path)
    return {ws.title: [[c.value for c in row] for row in ws.iter_rows()] for ws in book.worksheets}


def _filled(rows):
    return [r for r in rows if any(v is not None for v in r)]


@pytest.mark.parametrize("what", sorted(REWRITES))
def test_rerun_on_its_own_output(what, tmp_path, capsys):
    """Run twice, the second run on the first's output: the same sheets, no duplicate or stale rows, counts right."""
    source, argv, plan = REWRITES[what](tmp_path)
    first, second = tmp_path / "first.xlsx", tmp_path / "second.xlsx"
    assert main(argv(source, first)) == 0, capsys.readouterr().err
    assert main(argv(first, second)) == 0, capsys.readouterr().err
    a, b, given = _cells(first), _cells(second), _cells(source)
    assert list(a) == list(b)  # no sheet added twice, none lost
    if plan is not None:  # the allocation is redone from the same rules: the same counts, nothing stale
        assert len(_check_allocation(first, plan)) == len(_check_allocation(second, plan))
    elif what == "import --into":  # the second import replaces the first's rows: the same cells
        for name in ("Evaluations", "Assessors", "Objects", "Settings"):
            assert a[name] == b[name], name
    else:  # a report leaves the input sheets as they were, and its result sheets are rewritten, not added to
        for name in given:
            if name in a and name not in _result_sheets(a, given):
                assert a[name] == given[name] == b[name], name
        for name in _result_sheets(a, given):
            assert len(_filled(a[name])) == len(_filled(b[name])), name


def _result_sheets(cells, given):
    return [name for name in cells if name not in given or _looks_like_result(cells[name])]


def _looks_like_result(rows):
    return bool(rows) and bool(rows[0]) and isinstance(rows[0][0], str) and rows[0][0].startswith("xlcalib")


def test_run_main_import_twice_on_the_same_book(tmp_path):
    from .test_imports_systems import HOTCRP

    (tmp_path / "reviews.csv").write_text(HOTCRP)
    path = tmp_path / "panel.xlsx"
    build("panel_calibration", path, assessors=3, objects=3)
    book = openpyxl.load_workbook(path)
    book["Import"]["B2"] = str(tmp_path / "reviews.csv")
    for name, run in sorted(MACRO_RUNNERS.items()):
        run(book)
        before = [[c.value for c in r] for r in book["Evaluations"].iter_rows()]
        run(book)
        after = [[c.value for c in r] for r in book["Evaluations"].iter_rows()]
        assert before == after, name
        filled = [r for r in after[1:] if any(v is not None for v in r)]
        assert len(filled) == 5 and len({(r[0], r[1]) for r in filled}) == 5


def test_every_workbook_copying_command_is_in_the_rerun_test(tmp_path, capsys):
    """A command whose output keeps the input workbook's sheets writes into the user's workbook: it must be
    listed in REWRITES (and so re-run on its own output)."""
    for command in sorted(set(COMMANDS) - FOLDER_OUTPUT):
        folder = tmp_path / command
        folder.mkdir()
        out = folder / "out.xlsx"
        argv = _argv(command, folder, out)
        assert main(argv) == 0, capsys.readouterr().err
        source = next((a for a in argv[1:] if a.endswith(".xlsx") and a != str(out)), None)
        if source is None or not out.is_file():
            continue
        kept = set(openpyxl.load_workbook(source).sheetnames) <= set(openpyxl.load_workbook(out).sheetnames)
        listed = command in REWRITES or any(w.startswith(command + " ") for w in REWRITES)
        assert listed or not kept, f"{command} copies the input workbook: add it to REWRITES"
    capsys.readouterr()


# =============================================================================
# 2. A full disk and an interrupted run, for real: every writer, in a subprocess
# =============================================================================
#: bytes a process may write per file: every output file is larger (a file-size limit makes each write past it
#: fail with EFBIG, as a full disk makes it fail with ENOSPC: the same path through every writer)
_FSIZE = 2048
_LIMITED = textwrap.dedent("""
    import resource, sys
    from xlcalib.cli import main
    resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
    sys.exit(main({argv!r}))
""")


def _previous_output(command, out):
    """A previous output the failed run must leave as it was (a file, or a file in the output folder)."""
    target = out / "previous.txt" if command in FOLDER_OUTPUT else out
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"the previous output")
    return target


@pytest.mark.parametrize("command", COMMANDS)
def test_cli_full_disk_every_writer(command, tmp_path):
    out = tmp_path / ("outdir" if command in FOLDER_OUTPUT else "out.xlsx")
    argv = _argv(command, tmp_path, out) + (["--force"] if command == "template" else [])
    previous = _previous_output(command, out)
    scratch = tmp_path / "tmp"  # the writers' own temporary files (XlsxWriter's) must be gone too
    scratch.mkdir()
    proc = subprocess.run([sys.executable, "-c", _LIMITED.format(limit=_FSIZE, argv=argv)], capture_output=True,
                          text=True, timeout=600, env={**os.environ, "TMPDIR": str(scratch)})
    assert proc.returncode == 2, proc.stderr[-3000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("xlcalib: error: cannot write"), proc.stderr[-3000:]
    assert "file-size limit" in lines[0]
    assert previous.read_bytes() == b"the previous output"
    assert not list(tmp_path.rglob(".xlcalib-*")) and not list(scratch.iterdir())


def _text_output(command, extension):
    """A command line writing its results as text (.csv / .json) instead of a workbook."""
    def argv(tmp_path, out):
        if command == "calibrate":
            return ["calibrate", str(_panel_book(tmp_path / "panel.xlsx")), "--format", extension, "-o", str(out)]
        if command == "agreement":
            return ["agreement", str(_reliability_book(tmp_path / "rel.xlsx")), "-o", str(out)]
        from .test_imports_systems import HOTCRP

        (tmp_path / "reviews.csv").write_text(HOTCRP)
        return ["import", str(tmp_path / "reviews.csv"), "-o", str(out)]

    return argv


def _import_into(tmp_path, out):
    from .test_imports_systems import HOTCRP

    (tmp_path / "reviews.csv").write_text(HOTCRP)
    build("panel_calibration", tmp_path / "panel.xlsx", assessors=3, objects=3)
    return ["import", str(tmp_path / "reviews.csv"), "--into", str(tmp_path / "panel.xlsx"), "-o", str(out)]


#: the writers beyond each command's default workbook: text formats and writing into a copy of a workbook ->
#: (command line for an output, the output's name; a name without extension is a folder)
OTHER_WRITES = {"calibrate --format json": (_text_output("calibrate", "json"), "out.json"),
                "calibrate --format csv": (_text_output("calibrate", "csv"), "outdir"),
                "agreement -o .csv": (_text_output("agreement", "csv"), "out.csv"),
                "agreement -o .json": (_text_output("agreement", "json"), "out.json"),
                "import -o .csv": (_text_output("import", "csv"), "out.csv"),
                "import --into": (_import_into, "out.xlsx"),
                **{f"report {kind}": ((lambda kind: lambda tmp_path, out: ["report", kind, str(
                    _report_input(kind, tmp_path)), "-o", str(out)])(kind), "out.xlsx") for kind in RUNNERS}}


@pytest.mark.parametrize("what", sorted(OTHER_WRITES))
def test_cli_full_disk_every_other_writer(what, tmp_path):
    """As above for the text formats, import --into and every report (64 bytes: smaller than any output)."""
    make_argv, name = OTHER_WRITES[what]
    out = tmp_path / name
    argv = make_argv(tmp_path, out)
    target = out / "previous.txt" if "." not in name else out
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"the previous output")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = subprocess.run([sys.executable, "-c", _LIMITED.format(limit=64, argv=argv)], capture_output=True,
                          text=True, timeout=600, env={**os.environ, "TMPDIR": str(scratch)})
    assert proc.returncode == 2, proc.stderr[-3000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("xlcalib: error: cannot write"), proc.stderr[-3000:]
    assert target.read_bytes() == b"the previous output"
    assert not list(tmp_path.rglob(".xlcalib-*")) and not list(scratch.iterdir())


_INTERRUPTED = textwrap.dedent("""
    import faulthandler, os, signal, sys, time
    from xlcalib.cli import main

    faulthandler.register(signal.SIGUSR1, all_threads=True)  # the test asks where a run that did not stop hangs

    rename = os.replace

    def slow_replace(source, target):
        time.sleep(120)  # the output is written to its temporary file, not yet renamed into place: Ctrl-C now
        rename(source, target)

    os.replace = slow_replace
    sys.exit(main({argv!r}))
""")


def _signal_while_writing(argv, folder, signum) -> tuple[int, str]:
    """Run the command line (slowed in its write, :data:`_INTERRUPTED`), send *signum* once its temporary output
    file exists, and return (exit code, stderr)."""
    proc = subprocess.Popen([sys.executable, "-c", _INTERRUPTED.format(argv=argv)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None and not list(folder.glob(".xlcalib-*.tmp")):
        time.sleep(0.05)
    time.sleep(0.2)
    proc.send_signal(signum)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:  # did not stop: fail with every thread's stack, not only "timed out"
        proc.send_signal(signal.SIGUSR1)
        time.sleep(2)
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"still running 60 s after signal {signum}; its threads' stacks:\n{err[-6000:]}")
    return proc.returncode, err


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - FOLDER_OUTPUT))
def test_cli_ctrl_c_during_a_write(command, tmp_path):
    """Ctrl-C while the output is being written: one line, exit 130, the previous output untouched, nothing left."""
    out = tmp_path / "out.xlsx"
    argv = _argv(command, tmp_path, out) + (["--force"] if command == "template" else [])
    previous = _previous_output(command, out)
    returncode, err = _signal_while_writing(argv, tmp_path, signal.SIGINT)
    assert returncode == 130, err[-3000:]
    assert err.strip().splitlines() == [err.strip()] and err.startswith("xlcalib: interrupted (Ctrl-C)"), err
    assert previous.read_bytes() == b"the previous output"
    assert not list(tmp_path.glob(".xlcalib-*"))


def test_cli_sigterm_during_a_write_leaves_nothing_behind(tmp_path):
    """SIGTERM (a scheduler, kill, a closed terminal) while the output is being written: one line, exit 143,
    the previous output untouched and no hidden temporary file left (as for Ctrl-C)."""
    out = tmp_path / "out.xlsx"
    argv = _argv("calibrate", tmp_path, out)
    previous = _previous_output("calibrate", out)
    returncode, err = _signal_while_writing(argv, tmp_path, signal.SIGTERM)
    assert returncode == 143, err[-3000:]
    assert err.strip().splitlines() == [err.strip()] and err.startswith("xlcalib: terminated (SIGTERM)"), err
    assert previous.read_bytes() == b"the previous output"
    assert not list(tmp_path.glob(".xlcalib-*"))


_INTERRUPTED_WHILE_LOADING = textwrap.dedent("""
    import sys

    class Interrupt:  # Ctrl-C arrives while the command line's modules are still loading
        def find_spec(self, name, path=None, target=None):
            if name == "xlcalib.cli":
                raise KeyboardInterrupt
            return None

    sys.meta_path.insert(0, Interrupt())
    from xlcalib.__main__ import main
    sys.exit(main())
""")


def test_cli_ctrl_c_while_loading_is_one_line():
    proc = subprocess.run([sys.executable, "-c", _INTERRUPTED_WHILE_LOADING], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.strip() == "xlcalib: interrupted (Ctrl-C) while starting; nothing was read or written"


def test_cli_negative_numbers_need_no_equals_sign(tmp_path, capsys):
    """``--threshold -1e308`` reads as the number it is (argparse would take it for an option): the one-line
    answer is about the value, not the command line's grammar."""
    from xlcalib.cli import main

    argv = _argv("calibrate", tmp_path, tmp_path / "out.xlsx")
    assert main([*argv, "--threshold", "-1e308"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("xlcalib: error: --threshold must be a finite score") and "-1e+308" in err


# =============================================================================
# 3. Settings are applied or refused with their place named, never silently dropped
# =============================================================================
def _settings_row(book, start: str) -> int:
    ws = book["Settings"]
    return next(r for r in range(1, ws.max_row + 1) if str(ws.cell(row=r, column=1).value or "").startswith(start))


def _disconnected_book(path, **settings):
    """Two groups of three assessors sharing no object (the lists' sheets removed, so any name is welcome);
    *settings* maps a Settings label start to the value written beside it."""
    book = openpyxl.load_workbook(_panel_book(path))
    for name in ("Assessors", "Objects", "Truth"):
        del book[name]
    ev = book["Evaluations"]
    for row in ev.iter_rows(min_row=2):
        for cell in row:
            cell.value = None
    r = 2
    for assessors, objects in ((("A1", "A2", "A3"), ("O1", "O2", "O3", "O4")), (("B1", "B2", "B3"), ("Q1", "Q2", "Q3", "Q4"))):
        for i, a in enumerate(assessors):
            for j, o in enumerate(objects):
                for c, v in enumerate((a, o, 3 + (i * 7 + j * 3) % 5, "Medium"), start=1):
                    ev.cell(row=r, column=c).value = v
                r += 1
    for start, value in settings.items():
        book["Settings"].cell(row=_settings_row(book, start), column=2).value = value
    book.save(path)
    return path


_LINES = {  # a funding line from each place it can come from -> (Settings cells, options, the place named)
    "--fund": ({}, ["--fund", "2"], lambda book: "--fund"),
    "--threshold": ({}, ["--threshold", "5"], lambda book: "--threshold"),
    "Settings top k": ({"Funding line (top k)": 2}, [],
                       lambda book: f"sheet Settings, cell B{_settings_row(book, 'Funding line (top k)')}"),
    "Settings score": ({"Funding line (score)": 5}, [],
                       lambda book: f"sheet Settings, cell B{_settings_row(book, 'Funding line (score)')}"),
}


@pytest.mark.parametrize("source", sorted(_LINES))
def test_funding_line_on_groups_kept_apart_is_refused_by_its_place(source, tmp_path, capsys):
    """Groups each calibrated on its own scale (--per-component) have no ranking that spans them: one line naming
    where the line came from (exit 0 without a Ranking and without a word was the old answer)."""
    cells, options, place = _LINES[source]
    book = _disconnected_book(tmp_path / "two.xlsx", **cells)
    out = tmp_path / "out.xlsx"
    err = _one_line_error(capsys, main(["calibrate", str(book), "-o", str(out), *options, "--per-component"]))
    assert place(openpyxl.load_workbook(book)) in err and "share no object" in err, err
    assert not out.exists()


@pytest.mark.parametrize("command", ["calibrate", "next-reads"])
@pytest.mark.parametrize("source", sorted(_LINES))
def test_funding_line_on_groups_the_model_compares_is_applied_and_said(source, command, tmp_path, capsys):
    """One rule everywhere: the default model calibrates unconnected groups together (each as strict as the panel
    on average), CALIB_RANKING ranks them, and so do the command line and the workbook -- with the assumption
    said (Summary, the ranking's note rows in the spreadsheet functions)."""
    cells, options, _place = _LINES[source]
    book = _disconnected_book(tmp_path / "two.xlsx", **cells)
    out = tmp_path / "out.xlsx"
    assert main([command, str(book), "-o", str(out), *options]) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    result = openpyxl.load_workbook(out)
    assert "Ranking" in result.sheetnames
    if command == "calibrate":
        assert "share no objects" in printed and "as strict as the panel" in printed


def test_a_disconnected_panel_without_a_line_still_runs(tmp_path, capsys):
    book = _disconnected_book(tmp_path / "two.xlsx")
    assert main(["calibrate", str(book), "-o", str(tmp_path / "out.xlsx"), "--per-component"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("command", ["calibrate", "next-reads", "report calibration"])
@pytest.mark.parametrize("score_line", [None, 7.5])
def test_settings_lottery_without_places_is_refused_by_cell(command, score_line, tmp_path, capsys):
    """Settings 'Lottery = yes' with a score line, or with no line: refused naming the cell (as the CLI refuses
    --lottery without --fund), never a run without the draw."""
    book = openpyxl.load_workbook(_panel_book(tmp_path / "p.xlsx"))
    lottery = _settings_row(book, "Lottery")
    book["Settings"].cell(row=lottery, column=2).value = "yes"
    if score_line is not None:
        book["Settings"].cell(row=_settings_row(book, "Funding line (score)"), column=2).value = score_line
    book.save(tmp_path / "p.xlsx")
    out = tmp_path / "out.xlsx"
    err = _one_line_error(capsys, main([*command.split(), str(tmp_path / "p.xlsx"), "-o", str(out)]))
    assert f"sheet Settings, cell B{lottery} (lottery)" in err, err
    if score_line is not None:
        assert f"B{_settings_row(book, 'Funding line (score)')}" in err, err
    assert not out.exists()


def _template_settings_rows():
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="xlcalib-test-") as folder:
        ws = openpyxl.load_workbook(_panel_book(Path(folder) / "settings.xlsx"))["Settings"]
        return [(r, ws.cell(row=r, column=1).value) for r in range(2, ws.max_row + 1) if ws.cell(row=r, column=1).value]


#: values no Settings row of the calibration template accepts
_SETTING_GARBAGE = ["zzz", -1e300, True]


#: rows that take any text by design (the lottery's public seed is whatever the panel published): text is no garbage
_ANY_TEXT = {"Public seed"}


@pytest.mark.parametrize("row, label", _template_settings_rows())
def test_every_settings_row_is_applied_or_refused_by_its_cell(row, label, tmp_path, capsys):
    """Every row of the template's Settings sheet, given garbage: a one-line refusal naming its cell (a new
    Settings row is covered as soon as the template has it)."""
    for bad in _SETTING_GARBAGE:
        if label in _ANY_TEXT and isinstance(bad, str):
            continue
        book = openpyxl.load_workbook(_panel_book(tmp_path / "p.xlsx"))
        book["Settings"].cell(row=row, column=2).value = bad
        book.save(tmp_path / "bad.xlsx")
        rc = main(["calibrate", str(tmp_path / "bad.xlsx"), "-o", str(tmp_path / "out.xlsx")])
        err = capsys.readouterr().err
        assert rc == 2, (label, bad, rc, err)
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, (label, bad, err)
        assert f"B{row}" in err, (label, bad, err)


# =============================================================================
# 4. Hostile and damaged files: one line, exit 2, in every command that reads a workbook
# =============================================================================
def _rewrite_part(path, part, change):
    """*path* with the zip member *part* replaced by change(its bytes), every other member as it was."""
    with zipfile.ZipFile(path) as zin:
        members = [(info, zin.read(info.filename)) for info in zin.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zout:
        for info, data in members:
            zout.writestr(info, change(data) if info.filename == part else data)


def _without_prolog(data: bytes) -> bytes:
    return data.split(b"?>", 1)[1] if data.startswith(b"<?xml") else data


def _laughs(data):
    return (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;">'
            b'<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;">]>' + _without_prolog(data))


def _xxe(data):
    return b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>' + _without_prolog(data)


def _flip_crc(path, part):
    """The member's recorded CRC-32 (local header and central directory) no longer matches its data."""
    import struct

    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        data[zf.getinfo(part).header_offset + 14] ^= 0xFF
    pos = data.find(b"PK\x01\x02")
    while pos >= 0:
        length = struct.unpack("<H", data[pos + 28:pos + 30])[0]
        if data[pos + 46:pos + 46 + length].decode() == part:
            data[pos + 16] ^= 0xFF
        pos = data.find(b"PK\x01\x02", pos + 4)
    path.write_bytes(bytes(data))


def _break_deflate(path, part):
    """Bytes inside the member's compressed stream changed: zlib cannot inflate it."""
    import struct

    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(part)
    name_length, extra_length = struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30])
    start = info.header_offset + 30 + name_length + extra_length
    for k in range(start + 10, min(start + 40, start + info.compress_size)):
        data[k] ^= 0x5A
    path.write_bytes(bytes(data))


_DAMAGE = {"billion laughs": (lambda path, part: _rewrite_part(path, part, _laughs), "XML entity declarations"),
           "external entity": (lambda path, part: _rewrite_part(path, part, _xxe), "XML entity declarations"),
           "bad CRC": (_flip_crc, "is damaged"),
           "broken deflate": (_break_deflate, "is damaged")}


def _workbook_argv(command, tmp_path):
    """A valid command line reading a workbook, with that workbook's path (None: the command reads none)."""
    out = tmp_path / "out.xlsx"
    if command == "import":  # an export may be a workbook as well
        source = _panel_book(tmp_path / "export.xlsx")
        return ["import", str(source), "--from", "grid", "-o", str(out)], source
    argv = _argv(command, tmp_path, out)
    source = next((a for a in argv[1:] if a.endswith((".xlsx", ".xlsm")) and a != str(out)), None)
    return argv, (None if source is None else type(tmp_path)(source))


_READERS = [c for c in COMMANDS if c not in FOLDER_OUTPUT and c != "template"]


@pytest.mark.parametrize("damage", sorted(_DAMAGE))
@pytest.mark.parametrize("command", _READERS)
def test_hostile_or_damaged_workbook_in_every_reader(command, damage, tmp_path, capsys):
    """Entity declarations (billion laughs, XXE) or a member that cannot be unzipped, in the workbook part, the
    styles, the content types or a worksheet: one line naming the file, exit 2, no output."""
    argv, source = _workbook_argv(command, tmp_path)
    assert source is not None, f"{command} reads no workbook in its test call: give it one in _workbook_argv"
    pristine = source.read_bytes()
    with zipfile.ZipFile(source) as zf:
        sheets = sorted(n for n in zf.namelist() if n.startswith("xl/worksheets/sheet"))
    spoil, expected = _DAMAGE[damage]
    for part in ("xl/workbook.xml", "xl/styles.xml", "[Content_Types].xml", sheets[-1]):
        source.write_bytes(pristine)
        spoil(source, part)
        err = _one_line_error(capsys, main(argv))
        assert source.name in err and expected in err, (part, err)
        assert not (tmp_path / "out.xlsx").exists()


@pytest.mark.parametrize("header, value", [("SD", 1e-200), ("SD", 1e300), ("Relative confidence", 1e-200),
                                           ("Relative confidence", 1e300)])
def test_levels_beyond_the_range_are_named_by_cell(header, value, tmp_path, capsys):
    """A Levels SD of 1e-200 divided by zero; now the range of the evaluations' own SD/confidence columns."""
    book = openpyxl.load_workbook(_panel_book(tmp_path / "p.xlsx"))
    book["Levels"]["B1"] = header
    for r, v in ((2, value), (3, 1.0), (4, 2.0)):
        book["Levels"].cell(row=r, column=2).value = v
    book.save(tmp_path / "p.xlsx")
    err = _one_line_error(capsys, main(["calibrate", str(tmp_path / "p.xlsx"), "-o", str(tmp_path / "o.xlsx")]))
    assert "sheet Levels, row 2, column B" in err, err


def _panel_csv(tmp_path):
    book = openpyxl.load_workbook(_panel_book(tmp_path / "p.xlsx"), data_only=True)
    return [list(r[:4]) for r in book["Evaluations"].iter_rows(values_only=True) if r[0] is not None]


@pytest.mark.parametrize("command", ["calibrate", "next-reads"])
def test_csv_with_bare_cr_line_ends_reads_as_with_lf(command, tmp_path, capsys):
    """Old Mac exports end lines with a bare CR: the same table, the same results."""
    import csv

    rows = _panel_csv(tmp_path)
    said = []
    for name, end in (("lf.csv", "\n"), ("cr.csv", "\r")):
        with open(tmp_path / name, "w", newline="") as handle:
            csv.writer(handle, lineterminator=end).writerows(rows)
        extra = ["--format", "json"] if command == "calibrate" else ["--reads", "3"]
        out = tmp_path / (f"{name}.json" if command == "calibrate" else f"{name}.xlsx")
        assert main([command, str(tmp_path / name), "-o", str(out), *extra]) == 0, \
            capsys.readouterr().err
        said.append(capsys.readouterr().out.replace(name, "X"))
    assert said[0] == said[1] and "Ask" in said[0] or command == "calibrate"
    if command == "calibrate":
        assert (tmp_path / "lf.csv.json").read_text() == (tmp_path / "cr.csv.json").read_text()


def test_csv_rows_are_numbered_as_a_spreadsheet_shows_them(tmp_path, capsys):
    """A quoted line break in record 3 makes record 9 start on line 10: the message says row 9 (C9)."""
    import csv

    rows = _panel_csv(tmp_path)
    rows[2][0] = "Assessor\nA"
    rows[8][2] = "abc"
    with open(tmp_path / "q.csv", "w", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows(rows)
    err = _one_line_error(capsys, main(["calibrate", str(tmp_path / "q.csv"), "-o", str(tmp_path / "o.xlsx")]))
    assert "row 9, column Score (C9)" in err, err


# =============================================================================
# 6. Messages name the option or the Settings cell a value came from
# =============================================================================
def _commands_with(option: str) -> list[str]:
    """The CLI commands that take *option* (so a new command taking it is covered)."""
    from xlcalib.cli import _parser

    choices = _parser()._subparsers._group_actions[0].choices
    return sorted(name for name, sub in choices.items() if option in sub._option_string_actions)


def _panel_argv(command, tmp_path, out):
    book = _panel_book(tmp_path / "panel.xlsx")
    return [command, str(book), "-o", str(out)] + (["--reads", "2"] if command == "next-reads" else [])


@pytest.mark.parametrize("value", ["0", "1.5", "nan", "1", "-0.5"])
@pytest.mark.parametrize("command", _commands_with("--interval-level"))
def test_interval_level_option_is_named(command, value, tmp_path, capsys):
    out = tmp_path / "out.xlsx"
    err = _one_line_error(capsys, main([*_panel_argv(command, tmp_path, out), f"--interval-level={value}"]))
    assert "--interval-level" in err and "Evaluations" not in err and "interval_level" not in err, err
    assert not out.exists()


@pytest.mark.parametrize("value", [0, 1.5, 1, 0.2])
@pytest.mark.parametrize("command", ["calibrate", "next-reads"])
def test_interval_level_from_settings_names_its_cell(command, value, tmp_path, capsys):
    book = openpyxl.load_workbook(_panel_book(tmp_path / "panel.xlsx"))
    row = _settings_row(book, "Interval level")
    book["Settings"].cell(row=row, column=2).value = value
    book.save(tmp_path / "panel.xlsx")
    argv = [command, str(tmp_path / "panel.xlsx"), "-o", str(tmp_path / "out.xlsx")]
    err = _one_line_error(capsys, main(argv))
    assert f"sheet Settings, cell B{row} (interval level)" in err and "interval_level" not in err, err


@pytest.mark.parametrize("places", [60, 61, 1000])
@pytest.mark.parametrize("source", ["Settings", "--fund"])
@pytest.mark.parametrize("command", _commands_with("--fund"))
def test_funding_places_beyond_the_objects_name_their_place(command, source, places, tmp_path, capsys):
    """The demo panel has 60 objects: 60 places or more fund everyone, which needs no line."""
    book = openpyxl.load_workbook(_panel_book(tmp_path / "panel.xlsx"))
    row = _settings_row(book, "Funding line (top k)")
    if source == "Settings":
        book["Settings"].cell(row=row, column=2).value = places
    book.save(tmp_path / "panel.xlsx")
    argv = [command, str(tmp_path / "panel.xlsx"), "-o", str(tmp_path / "out.xlsx")]
    argv += [] if source == "Settings" else ["--fund", str(places)]
    err = _one_line_error(capsys, main(argv))
    place = f"sheet Settings, cell B{row}" if source == "Settings" else "--fund"
    assert place in err and "60 objects" in err and f"{places:,}" in err, err


@pytest.mark.parametrize("command", _commands_with("--fund"))
def test_refused_score_cells_are_listed_before_the_funding_line_is_checked(command, tmp_path, capsys):
    """Cells refused leave their objects out of the count: a funding line measured against what is left named
    "from 1 to -1 (the panel has 0 objects)" instead of the cells to mend."""
    book = openpyxl.load_workbook(_panel_book(tmp_path / "panel.xlsx"))
    sheet = book["Evaluations"]
    score = next(c.column for c in sheet[1] if str(c.value).strip().lower() == "score")
    for row in range(2, sheet.max_row + 1):
        if sheet.cell(row=row, column=score).value is not None:
            sheet.cell(row=row, column=score).value = "n/a"
    book.save(tmp_path / "panel.xlsx")
    argv = [command, str(tmp_path / "panel.xlsx"), "-o", str(tmp_path / "out.xlsx"), "--fund", "20"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "--fund" not in err and "from 1 to" not in err, err
    assert "column Score" in err and "'n/a'" in err, err


def test_a_funding_line_over_one_object_says_it_needs_two(tmp_path, capsys):
    path = tmp_path / "one.csv"
    path.write_text("Assessor,Object,Score,SD\nA,P1,3,1\nB,P1,4,1\n")
    err = _one_line_error(capsys, main(["calibrate", str(path), "-o", str(tmp_path / "out.xlsx"), "--fund", "1"]))
    assert "--fund" in err and "at least two scored objects" in err and "has 1" in err and "to 0" not in err, err


@pytest.mark.parametrize("value", ["1e308", "-1e308", "1e16", "inf", "nan"])
@pytest.mark.parametrize("command", _commands_with("--threshold"))
def test_threshold_beyond_the_score_limit_is_refused_without_a_warning(command, value, tmp_path, capsys):
    """--threshold 1e308 printed a numpy RuntimeWarning: refused by the option, as scores are, in one line."""
    import warnings

    argv = [*_panel_argv(command, tmp_path, tmp_path / "out.xlsx"), f"--threshold={value}"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        err = _one_line_error(capsys, main(argv))
    assert "--threshold" in err, err
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in caught]
