"""The permanent bad-input suite: no traceback, no silent wrong number, bounded memory and time on every input.

Organised by the classes of the hardening review; every class is parametrised
over what exists, so a new CLI command, spreadsheet function or public core
function is covered (or the suite asks for its valid call):

1. output and file-system errors      -> every CLI command          (test_cli_* below)
2. extreme numbers                    -> calibration, reliability, scoring, ground truth, every UDF range cell
3. arguments not validated            -> every public core function, every UDF argument, report Settings
4. size arguments                     -> limits with the memory named, run under resource.setrlimit
5. formula injection in text output   -> calibrate --format csv / json
7. smaller items                      -> temporary files, message wording

The answer to bad input is always an :class:`~xlcalib.errors.InputError` (a
short ``xlcalib:`` text in a cell, exit code 2 on the command line) or a
valid result: never another exception, never an infinite or overflowed number.
"""
from __future__ import annotations

import errno
import inspect
import json
import math
import os
import re
import subprocess
import sys
import textwrap
import time

import numpy as np
import openpyxl
import pandas as pd
import pytest

import xlcalib
import xlcalib.ground_truth as gt
from udf_registry.registry import ERROR_PREFIX, REGISTRY
from xlcalib.cli import _parser, main
from xlcalib.errors import InputError
from xlcalib.workbook import openpyxl_backend

# garbage for a single-value argument, and for one cell inside a range
SCALARS = [-1, 0, 0.5, 2.5, 1e308, -1e308, 5e-324, 1e10, 2**63, float("nan"), float("inf"), True, "1e999", "nan",
           "abc", "#N/A"]
CELLS = [1e308, -1e308, 5e-324, 1e-200, "1e999", "nan", True, "=1+2", -2146826246]


def _is_finite_result(value) -> bool:
    """No infinite or overflowed number anywhere in a result (NaN/None = an honest blank is allowed)."""
    if isinstance(value, (pd.DataFrame, pd.Series)):
        return _is_finite_result(value.to_numpy(dtype=object).ravel().tolist())
    if isinstance(value, np.ndarray):
        return _is_finite_result(value.ravel().tolist())
    if isinstance(value, (list, tuple)):
        return all(_is_finite_result(v) for v in value)
    if isinstance(value, dict):
        return all(_is_finite_result(v) for v in value.values())
    if hasattr(value, "__dataclass_fields__"):
        return all(_is_finite_result(getattr(value, f)) for f in value.__dataclass_fields__)
    if isinstance(value, (float, np.floating)):
        return not math.isinf(value)
    return True


# =============================================================================
# 1. Output and file-system errors: every CLI command
# =============================================================================
def _panel_book(path):
    from xlcalib.demo import write_demo_exercise

    write_demo_exercise(path)
    return path


def _reliability_book(path):
    from xlcalib.templates import BUILDERS

    wb = BUILDERS["reliability"](items=6, raters=3)
    rng = np.random.default_rng(0)
    for r in range(2, 8):
        for c in range(2, 5):
            wb["Ratings"].cell(row=r, column=c, value=float(rng.integers(0, 10)))
    wb.save(path)
    return path


def _argv(command: str, tmp_path, out) -> list[str]:
    """A valid command line for *command* writing to *out* (the suite needs one per command)."""
    if command == "calibrate":
        return ["calibrate", str(_panel_book(tmp_path / "panel.xlsx")), "-o", str(out)]
    if command == "next-reads":
        return ["next-reads", str(_panel_book(tmp_path / "panel.xlsx")), "--reads", "2", "-o", str(out)]
    if command == "report":
        return ["report", "reliability", str(_reliability_book(tmp_path / "rel.xlsx")), "-o", str(out)]
    if command == "template":
        return ["template", "panel_calibration", "-o", str(out), "--assessors", "3", "--objects", "4"]
    if command in ("demo", "templates"):
        return [command, "--out", str(out)]
    if command == "agreement":
        return ["agreement", str(_reliability_book(tmp_path / "rel.xlsx")), "-o", str(out)]
    if command == "assign":
        from xlcalib.templates import build

        build("panel_calibration", tmp_path / "plan.xlsx", assessors=6, objects=12, reads=2, assignment=True)
        return ["assign", str(tmp_path / "plan.xlsx"), "-o", str(out)]
    if command == "import":
        from .test_imports_systems import HOTCRP

        (tmp_path / "reviews.csv").write_text(HOTCRP)
        return ["import", str(tmp_path / "reviews.csv"), "-o", str(out)]
    raise AssertionError(f"new CLI command {command!r}: add a valid command line to tests/test_bad_input.py::_argv")


#: commands that only read (verify-draw re-runs a lottery from a result file and prints the verdict): no output to spoil
READ_ONLY = {"verify-draw"}
COMMANDS = sorted(set(_parser()._subparsers._group_actions[0].choices) - READ_ONLY)
#: commands whose --out names a folder (the others name a file)
FOLDER_OUTPUT = {"demo", "templates"}


def _one_line_error(capsys, rc):
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "Traceback" not in err and err.startswith("xlcalib: error:"), err
    assert len(err.strip().splitlines()) == 1, err
    return err


@pytest.mark.parametrize("command", COMMANDS)
def test_cli_output_onto_a_path_under_a_file(command, tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    out = blocker / ("sub" if command in FOLDER_OUTPUT else "out.xlsx")
    err = _one_line_error(capsys, main(_argv(command, tmp_path, out)))
    assert "a_file" in err
    assert blocker.read_text() == "not a folder"


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - FOLDER_OUTPUT))
def test_cli_output_onto_an_existing_folder(command, tmp_path, capsys):
    folder = tmp_path / "existing.xlsx"
    folder.mkdir()
    err = _one_line_error(capsys, main(_argv(command, tmp_path, folder)))
    assert "folder" in err and folder.is_dir()


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("code", [errno.EACCES, errno.ENOSPC, errno.EROFS])
def test_cli_read_only_folder_and_full_disk(command, code, tmp_path, capsys, monkeypatch):
    """Simulated in the writers (the suite may run as root, for whom chmod does not bite)."""
    def refuse(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    out = tmp_path / ("outdir" if command in FOLDER_OUTPUT else "out.xlsx")
    argv = _argv(command, tmp_path, out)  # inputs written before the disk "fills"
    monkeypatch.setattr(openpyxl_backend.os, "replace", refuse)
    err = _one_line_error(capsys, main(argv))
    assert {errno.EACCES: "permission denied", errno.ENOSPC: "disk is full", errno.EROFS: "read-only"}[code] in err
    leftovers = [p for p in tmp_path.rglob(".xlcalib-*")]
    assert not leftovers, leftovers  # no temporary file left behind


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - FOLDER_OUTPUT))
def test_cli_a_legal_255_character_file_name(command, tmp_path, capsys):
    out = tmp_path / ("n" * 250 + ".xlsx")  # 255 characters: legal; the temporary name must not be longer
    rc = main(_argv(command, tmp_path, out))
    capsys.readouterr()
    assert rc == 0 and out.is_file()


def test_verify_draw_bad_files_are_one_line(tmp_path, capsys):
    """verify-draw on a missing file, a CSV, a damaged workbook, a result without a lottery, and a Lottery sheet with
    a chance typed as text: exit 2 and one line naming the problem (a mismatch is exit 3, tested with the CLI)."""
    (tmp_path / "r.csv").write_text("object,chance\n")
    (tmp_path / "damaged.xlsx").write_bytes(b"PK\x03\x04 not really a zip")
    panel = _panel_book(tmp_path / "panel.xlsx")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Lottery"
    for row in (["xlcalib calibration: lottery"], ["Public seed", "s"], ["Places", 1], ["Method", "informed"], [],
                ["object", "chance", "uniform number", "draw order", "stretch from", "stretch to", "outcome"],
                ["a", "half", 0.5, 1, 0, 0.5, "not drawn"]):
        sheet.append(row)
    book.save(tmp_path / "typed.xlsx")
    for path, words in ((tmp_path / "missing.xlsx", "missing.xlsx"), (tmp_path / "r.csv", "result workbook"),
                        (tmp_path / "damaged.xlsx", "damaged.xlsx"), (panel, "has no sheet Lottery"),
                        (tmp_path / "typed.xlsx", "sheet Lottery, row 7 (chance)")):
        err = _one_line_error(capsys, main(["verify-draw", str(path)]))
        assert words in err, err


@pytest.mark.parametrize("command", ["calibrate", "report", "assign", "agreement"])
def test_cli_unreadable_or_missing_input(command, tmp_path, capsys, monkeypatch):
    argv = _argv(command, tmp_path, tmp_path / "out.xlsx")
    source = next(a for a in argv if a.endswith(".xlsx") and not a.endswith("out.xlsx"))
    real_open = open

    def unreadable(file, *args, **kwargs):
        if str(file) == source:
            raise PermissionError(errno.EACCES, "Permission denied", source)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", unreadable)
    err = _one_line_error(capsys, main(argv))
    assert "permission denied" in err
    monkeypatch.undo()
    os.unlink(source)
    _one_line_error(capsys, main(argv))


def test_cli_chart_sheet_named_evaluations(tmp_path, capsys):
    from openpyxl.chart import BarChart

    book = openpyxl.Workbook()
    book.active.title = "Data"
    sheet = book.create_chartsheet("Evaluations")
    sheet.add_chart(BarChart())
    book.save(tmp_path / "chart.xlsx")
    err = _one_line_error(capsys, main(["calibrate", str(tmp_path / "chart.xlsx")]))
    assert "chart sheet" in err


def test_template_does_not_overwrite_without_force(tmp_path, capsys):
    target = tmp_path / "mine.xlsx"
    target.write_bytes(b"the secretary's filled-in exercise")
    err = _one_line_error(capsys, main(["template", "reliability", "-o", str(target)]))
    assert "already exists" in err and target.read_bytes() == b"the secretary's filled-in exercise"
    assert main(["template", "reliability", "-o", str(target), "--force"]) == 0


def test_stale_temporary_files_are_cleaned_and_recognisable(tmp_path):
    """A write killed mid-way leaves .xlcalib-<pid>-*.tmp; the next write into the folder removes it."""
    script = textwrap.dedent(f"""
        import time, openpyxl
        from xlcalib.workbook import save_atomically
        book = openpyxl.Workbook()
        def slow(path):
            open(path, "wb").write(b"partial")
            time.sleep(60)
        book.save = slow
        save_atomically(book, {str(tmp_path / 'out.xlsx')!r})
    """)
    proc = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.time() + 30
    while time.time() < deadline and not list(tmp_path.glob(".xlcalib-*.tmp")):
        time.sleep(0.05)
    proc.kill()  # kill -9 mid-write
    proc.wait()
    left = list(tmp_path.glob(".xlcalib-*.tmp"))
    assert len(left) == 1 and left[0].name.startswith(f".xlcalib-{proc.pid}-") and len(left[0].name) < 40
    assert not (tmp_path / "out.xlsx").exists()
    mine = tmp_path / f".xlcalib-{os.getpid()}-keep.tmp"  # a live writer's file is never touched
    mine.write_bytes(b"in use")
    other = tmp_path / ".xlcalib-notes.txt"  # not ours
    other.write_text("x")
    old = time.time() - 3600
    for path in (left[0], mine):
        os.utime(path, (old, old))
    openpyxl_backend.write_bytes_atomically(b"next run", tmp_path / "other.bin")
    assert not left[0].exists() and mine.exists() and other.exists()


# =============================================================================
# 2. Extreme numbers
# =============================================================================
def _panel(scores=None, unc=None, kind="sd"):
    rows = [(a, o) for o in range(8) for a in ((o % 4), (o + 1) % 4)]
    frame = pd.DataFrame(rows, columns=["assessor", "object"])
    frame["assessor"] = "A" + frame["assessor"].astype(str)
    frame["object"] = "P" + frame["object"].astype(str)
    rng = np.random.default_rng(3)
    frame["score"] = rng.normal(5, 1, len(frame)) if scores is None else scores
    frame[kind] = np.full(len(frame), 1.0) if unc is None else unc
    return frame


@pytest.mark.parametrize("column, value", [
    ("score", 1e308), ("score", -1e308), ("score", 1e16),
    ("sd", 1e-200), ("sd", 5e-324), ("sd", 1e300),
    ("confidence", 1e308), ("confidence", 5e-324), ("confidence", 1e-200),
])
def test_calibrate_extreme_values_are_refused_by_cell(column, value):
    kind = "sd" if column in ("score", "sd") else "confidence"
    frame = _panel(kind=kind)
    frame.loc[3, column] = value
    with pytest.raises(InputError, match=r"row 4 of the evaluations .*out of range|span a ratio"):
        xlcalib.calibrate(frame)


@pytest.mark.parametrize("score, sd, expected", [
    ("1e308", "1", "row 3, column Score"), ("5", "1e-200", "row 3, column SD"), ("5", "1e999", "row 3, column SD"),
    ("nan", "1", "row 3, column Score")])
def test_cli_extreme_cells_name_the_cell(score, sd, expected, tmp_path, capsys):
    rows = ["Assessor,Object,Score,SD", "A,x,5,1", f"A,y,{score},{sd}", "B,x,6,1", "B,y,7,1"]
    (tmp_path / "p.csv").write_text("\n".join(rows) + "\n")
    err = _one_line_error(capsys, main(["calibrate", str(tmp_path / "p.csv"), "-o", str(tmp_path / "o.xlsx")]))
    assert expected in err or "sheet Evaluations, row 3 (assessor A, object y)" in err, err
    assert not (tmp_path / "o.xlsx").exists()


@pytest.mark.parametrize("factor", [1e-12, 1e12])
def test_calibrate_accepted_range_is_computed_correctly(factor):
    """Anything accepted is computed correctly: scores and SDs scaled together scale the answer."""
    frame = _panel(unc=np.exp(np.random.default_rng(1).uniform(0, 2, 16)))
    base = xlcalib.calibrate(frame)
    scaled = frame.assign(score=frame.score * factor, sd=frame.sd * factor)
    got = xlcalib.calibrate(scaled)
    assert np.allclose(got.values["value"] / factor, base.values["value"], rtol=1e-9, atol=1e-9)
    assert np.allclose(got.biases["bias"] / factor, base.biases["bias"], rtol=1e-9, atol=1e-9)


def test_calibrate_wide_but_resolvable_confidence_spread():
    c = np.geomspace(1, 1e15, 16)
    got = xlcalib.calibrate(_panel(unc=c, kind="confidence"))
    assert np.isfinite(got.values["value"]).all() and np.isfinite(got.biases["bias"]).all()


@pytest.mark.parametrize("scale", [1e300, 1e-300, 5e-310])
def test_reliability_scale_invariant_at_extreme_magnitudes(scale):
    x = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float)
    ref = xlcalib.icc_table(x)
    if scale < 1e-307:  # subnormal ratings lose digits: the answer must still be finite and close
        got = xlcalib.icc_table(x * scale)
        assert np.allclose(got["ICC"], ref["ICC"], atol=1e-2)
        return
    got = xlcalib.icc_table(x * scale)
    assert np.allclose(got[["ICC", "F", "CI_low", "CI_high"]], ref[["ICC", "F", "CI_low", "CI_high"]], rtol=1e-12)
    assert xlcalib.krippendorff_alpha(x * scale) == pytest.approx(xlcalib.krippendorff_alpha(x), rel=1e-12)
    mixed = x.copy()
    mixed[0, 0] = -1e308
    assert _is_finite_result(xlcalib.icc_table(mixed)) and np.isfinite(xlcalib.krippendorff_alpha(mixed))


@pytest.mark.parametrize("call, match", [
    (lambda: xlcalib.raters_needed(5e-324, 0.9), "too small"),
    (lambda: xlcalib.raters_needed(1e-300, 0.999), "too small"),
    (lambda: xlcalib.spearman_brown(0.5, math.inf), "finite"),
    (lambda: xlcalib.evaluation_metrics([1e308, 2, 3], [1, 2, 3]), "out of range"),
    (lambda: xlcalib.evaluation_metrics([0, 1e15, 3], [1, 2, 3]), None),
    (lambda: gt.threshold_certainty([[1e308, 1.0], [2.0, 3.0]], 0.0), "out of range"),
    (lambda: gt.threshold_certainty([[1.0, 2.0], [2.0, 3.0]], 1e308), "threshold"),
    (lambda: xlcalib.svensson_from_table([[1e308, 1], [1, 1]]), "more than 1e\\+15 objects"),
    (lambda: xlcalib.svensson_from_table([[2**62, 2**62], [2**62, 1]]), "more than 1e\\+15 objects"),
])
def test_extreme_numbers_elsewhere(call, match):
    if match is None:  # accepted: a valid, finite result (kappa over categories 0..1e15 without a huge table)
        assert _is_finite_result(call())
        return
    with pytest.raises(InputError, match=match):
        call()


# =============================================================================
# 3. Arguments: every public core function
# =============================================================================
_GRID = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float)
_H = [1.0, 2, 3, 4, 2, 3, 4, 5]
_M = [1.0, 2, 4, 4, 3, 3, 4, 4]
_CASES = [[[[0], [1]], [[1]], [[0, 1], [3]]], [[[3]], [[3], [2]]], [[[2]], [[2], [1]]]]
_DRAWS = gt.sample_dirichlet(gt.irn(_CASES, 4), 50, 0)
_PRED = np.array([[1, 0, 3], [3, 1, 0], [1, 2, 3]])
_AGREE = [[1, 1, 2], [2, 2, 2], [3, 2, 3], [1, 1, None], [2, 3, 3], [3, 3, 3]]

#: a valid call of every public function: name -> (positional args, keyword args)
VALID_CALLS = {
    "calibrate": ((_panel(unc=["High", "Medium", "Low", "Medium"] * 4, kind="level"),), {"level_ratio": 1.75,
                                                                                         "anomaly_threshold": 3.0}),
    "grid_to_long": ((np.array([[5.0, 6.0], [7.0, 8.0]]), np.ones((2, 2))), {}),
    "design_check": ((["A", "A", "B", "B"], ["x", "y", "x", "y"]), {"k": 2}),
    "icc_table": ((_GRID,), {"alpha": 0.05}),
    "icc": ((_GRID, "ICC1"), {}),
    "spearman_brown": ((0.59, 13), {}),
    "raters_needed": ((0.59, 0.95), {}),
    "krippendorff_alpha": ((_GRID,), {}),
    "krr_bootstrap": ((_GRID,), {"n_boot": 20, "seed": 1, "k": 2, "alpha": 0.1}),
    "krr_empirical": ((_GRID, _GRID + 1), {"n_draws": 5, "seed": 1, "k": 2}),
    "krr_curve": ((_GRID,), {"k_max": 4, "sb_ratings": 2, "seed": 1, "n_draws": 5}),
    **{name: ((_AGREE,), {"confidence": 0.9, "population_size": 100})
       for name in ("percent_agreement", "brennan_prediger", "fleiss_kappa", "conger_kappa", "gwet_ac",
                    "krippendorff_agreement", "agreement_coefficients")},
    "pairwise_agreement": ((_AGREE, "gwet_ac", "quadratic"), {"confidence": 0.9}),
    "agreement_matrix": ((_AGREE, "fleiss_kappa"), {}),
    "agreement_bootstrap": ((_AGREE,), {"n_boot": 50, "seed": 2, "confidence": 0.9}),
    "agreement_weights": (([1, 2, 4],), {}),
    "confusion_table": ((_AGREE, 1, 2), {}),
    "table_agreement": (([[3, 1], [1, 3]],), {}),
    "svensson": ((list("KLMKLM"), list("KLLKMM")), {}),
    "svensson_from_table": (([[3, 1], [1, 3]],), {"n_dropped": 0}),
    "mean_rank_table": ((list("KLMKLM"), list("KLLKMM")), {}),
    "roc_points": ((list("KLMKLM"), list("KLLKMM")), {}),
    "evaluation_metrics": ((_H, _M), {}),
    "standardized_mean_difference": ((_H, _M), {"ddof": 1}),
    "variance_of_errors": (([[1, 2], [2, 2], [3, 4]],), {}),
    "true_score_variance": (([[1, 2], [2, 2], [3, 4]],), {}),
    "prmse_true": (([1.5, 2, 3.5], [[1, 2], [2, 2], [3, 4]]), {}),
    "difference_of_standardized_means": ((_H, _M), {}),
    "fairness_analyses": ((_H, _M, list("abababab")), {}),
    "human_human_agreement": ((_H, _M), {}),
    "irn": ((_CASES, 4), {}),
    "annotation_certainty": (([[9, 1, 0], [4, 4, 2]],), {"reliability": 1.0, "prior": 1.0, "samples": 50, "seed": 0,
                                                         "top": 1}),
    "pl_gibbs": (([[[0], [1]], [[1], [0]]], 3), {"reliability": 1, "samples": 20, "burn_in": 5, "thin": 1, "chains": 4,
                                                 "prior_shape": 1.0, "prior_rate": 1.0, "seed": 0}),
    "certainty_from_concentration": (([[2.0, 1.0, 0.5]],), {"samples": 50, "seed": 0, "top": 1, "chunk": 8}),
    "certainty_from_samples": ((_DRAWS,), {"top": 1}),
    "dirichlet_concentration": (([[2, 1, 0]],), {"reliability": 1.0, "prior": 1.0}),
    "mean_average_overlap": (([[0], [1]], [[1], [0]], 3), {"L": 2}),
    "parse_ranking": (("a > b", ["a", "b"]), {}),
    "pl_certainty": (([[[[0], [1]], [[1], [0]]]], 3), {"reliability": 1, "samples": 20, "top": 1, "seed": 0,
                                                       "burn_in": 5, "chains": 4}),
    "pl_log_likelihood": (([0.5, 0.3, 0.2], [0, 1, 2]), {}),
    "pl_partial_ranking_log_likelihood": (([0.5, 0.3, 0.2], [[0], [1]]), {"n_classes": 3}),
    "point_topk_accuracy": ((gt.irn(_CASES, 4), _PRED), {"k": 2}),
    "prirn_concentration": ((_CASES, 4), {"reliability": 2.0}),
    "sample_dirichlet": (([[2.0, 1.0, 0.5]],), {"samples": 20, "seed": 0}),
    "threshold_certainty": (([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], 3.5), {"samples": 50, "seed": 0}),
    "ua_average_overlap": ((_DRAWS, _PRED), {"L": 2}),
    "ua_overlap": ((_DRAWS, _PRED), {"k": 2}),
    "ua_set_accuracy": ((_DRAWS, [[1, 0], [3], [1, 2]]), {}),
    "ua_topk_accuracy": ((_DRAWS, _PRED), {"k": 2}),
    "unnormalized_irn": ((_CASES, 4), {}),
    "prirn_certainty": ((_CASES, 4), {"reliability": 2.0, "samples": 50, "seed": 0, "top": 1}),
    "resolve_setting": (("reference",), {}),
    "assign": ((["A", "B", "C", "D"], ["x", "y", "z", "w", "v", "u"], 2, 3), {"seed": 0, "max_rounds": 20,
                                                                              "time_limit": 5.0}),
}
#: functions exempt from the sweep, and why
NOT_SWEPT = {"dermatology": "loads the bundled data set; takes no arguments",
             "dermatology_certainty": "a worked example over the bundled data set (its arguments reach the swept functions)"}


def _public_functions():
    out = {}
    for name, module in xlcalib._EXPORTS.items():
        obj = getattr(xlcalib, name)
        if callable(obj) and not inspect.isclass(obj) and not inspect.ismodule(obj):
            out[name] = obj
    for name in gt.__all__:
        obj = getattr(gt, name)
        if callable(obj) and not inspect.isclass(obj):
            out[name] = obj
    return out


PUBLIC = _public_functions()


def test_every_public_function_has_a_valid_call():
    missing = sorted(set(PUBLIC) - set(VALID_CALLS) - set(NOT_SWEPT))
    assert not missing, f"add a valid call for {missing} to VALID_CALLS in tests/test_bad_input.py"


def _numeric_parameters(func, kwargs):
    """Parameters that take a number: a numeric default, or given as a number in the valid call."""
    names = []
    for p in inspect.signature(func).parameters.values():
        default_numeric = isinstance(p.default, (int, float)) and not isinstance(p.default, bool)
        given = kwargs.get(p.name)
        if default_numeric or (isinstance(given, (int, float)) and not isinstance(given, bool)):
            names.append(p.name)
    return names


def _positional_numbers(args):
    return [i for i, a in enumerate(args) if isinstance(a, (int, float)) and not isinstance(a, bool)]


SWEEP = [(name, where, bad) for name in sorted(set(PUBLIC) & set(VALID_CALLS))
         for where in _numeric_parameters(PUBLIC[name], VALID_CALLS[name][1]) + _positional_numbers(VALID_CALLS[name][0])
         for bad in SCALARS]


@pytest.mark.parametrize("name", sorted(set(PUBLIC) & set(VALID_CALLS)))
def test_valid_calls_work(name):
    args, kwargs = VALID_CALLS[name]
    assert _is_finite_result(PUBLIC[name](*args, **kwargs))


def test_core_arguments_garbage_is_an_input_error_or_a_valid_result():
    """Every numeric argument of every public function, given every garbage value (one test: fast)."""
    import warnings

    failures = []
    for name, where, bad in SWEEP:
        args, kwargs = VALID_CALLS[name]
        args, kwargs = list(args), dict(kwargs)
        if isinstance(where, int):
            args[where] = bad
        else:
            kwargs[where] = bad
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = PUBLIC[name](*args, **kwargs)
        except InputError as exc:
            if "\n" in exc.message or len(exc.message) > 400:
                failures.append((name, where, bad, "long message", exc.message[:80]))
            continue
        except Exception as exc:  # noqa: BLE001 - the point of the test
            failures.append((name, where, bad, type(exc).__name__, str(exc)[:80]))
            continue
        if not _is_finite_result(got):
            failures.append((name, where, bad, "non-finite result", str(got)[:80]))
        elif isinstance(bad, (bool, str)) or (isinstance(bad, float) and not math.isfinite(bad)):
            failures.append((name, where, bad, "accepted", str(got)[:80]))
    assert not failures, "\n".join(map(str, failures[:30])) + f"\n({len(failures)} in all, of {len(SWEEP)} cases)"


@pytest.mark.parametrize("call, match", [
    (lambda: xlcalib.krr_bootstrap(_GRID, seed=-1), "seed argument must be a whole number >= 0"),
    (lambda: xlcalib.krr_bootstrap(_GRID, n_boot=20, seed=0), None),  # seed 0 is valid
    (lambda: xlcalib.krr_bootstrap(_GRID, n_boot=20.5), "whole number, not 20.5"),
    (lambda: xlcalib.krr_bootstrap(_GRID, n_boot=True), "logical value"),
    (lambda: xlcalib.icc_table(_GRID, alpha=1.5), r"alpha argument must be in \[1e-09, 1\)"),
    (lambda: xlcalib.icc_table(_GRID, alpha=0), r"alpha argument must be in \[1e-09, 1\)"),
    (lambda: gt.annotation_certainty([[1, 2, 0]], top=0), "top argument must be a whole number >= 1"),
    (lambda: gt.annotation_certainty([[1, 2, 0]], top=4), "top argument must be at most 3"),
    (lambda: gt.annotation_certainty([[1, 2, 0]], reliability=-1), "reliability argument"),
    (lambda: gt.annotation_certainty([[0, 0, 0]], prior=0), "no annotations and the prior is 0"),
    (lambda: gt.threshold_certainty([[1.0, 2.0]], float("nan")), "threshold argument is not a number"),
    (lambda: gt.threshold_certainty([[1.0, "nan"]], 1.0), "text"),
    (lambda: xlcalib.spearman_brown(0.5, math.inf), "finite"),
    (lambda: xlcalib.svensson_from_table([[-1, 2], [1, 1]]), "non-negative whole counts"),
    (lambda: xlcalib.svensson_from_table([[True, False], [True, True]]), "non-negative whole counts"),
    (lambda: xlcalib.icc([[1, "1e999"], [2, 3]], "ICC1"), "not a number"),
    (lambda: xlcalib.krippendorff_alpha([[1, "nan"], [2, 3], [1, 2]]), "not a number"),
    (lambda: xlcalib.evaluation_metrics([1, 2, "nan"], [1, 2, 3]), "not a number"),
    (lambda: xlcalib.evaluation_metrics([1, 2, True], [1, 2, 3]), "not a number"),
    (lambda: gt.ua_topk_accuracy(_DRAWS, _PRED, k=0), "k argument"),
    (lambda: gt.ua_topk_accuracy(_DRAWS, _PRED, k=9), "at most 4"),
])
def test_named_argument_messages(call, match):
    if match is None:
        assert _is_finite_result(call())
        return
    with pytest.raises(InputError, match=match):
        call()


# =============================================================================
# 3 (cont.) and 2: every spreadsheet function, every argument
# =============================================================================
from .test_udf import CASES as UDF_CASES  # noqa: E402 - valid calls of every catalogue entry


def _udf_calls():
    for name, entry in sorted(REGISTRY.items()):
        base = list(UDF_CASES[name][0]) + [None] * (len(entry.args) - len(UDF_CASES[name][0]))
        for position, arg in enumerate(entry.args):
            if arg.name == "header":
                continue
            if arg.range and base[position] is not None and isinstance(base[position], list):
                for bad in CELLS:
                    spoiled = [list(row) if isinstance(row, list) else row for row in base[position]]
                    row = spoiled[len(spoiled) // 2]
                    if isinstance(row, list):
                        row[0] = bad
                    else:
                        spoiled[len(spoiled) // 2] = bad
                    yield name, arg.name, bad, base[:position] + [spoiled] + base[position + 1:]
            for bad in SCALARS:
                yield name, arg.name, bad, base[:position] + [bad] + base[position + 1:]


def test_udf_garbage_and_extremes_in_every_argument():
    """Every catalogue function, every argument, every garbage/extreme value: a short xlcalib text or a valid result."""
    import signal

    def too_slow(signum, frame):
        raise TimeoutError

    failures, n = [], 0
    alarm = getattr(signal, "alarm", lambda seconds: None)  # Pyodide has no alarm: the run's own timeout guards
    previous = signal.signal(signal.SIGALRM, too_slow) if hasattr(signal, "SIGALRM") else None
    try:
        for name, arg, bad, args in _udf_calls():
            n += 1
            alarm(20)
            try:
                got = REGISTRY[name].func(*args)
            except TimeoutError:
                failures.append((name, arg, bad, "took more than 20 s"))
                continue
            finally:
                alarm(0)
            cell = got[0][0] if isinstance(got, list) and got and isinstance(got[0], list) else got
            if isinstance(cell, str) and cell.startswith(ERROR_PREFIX):
                if "internal error" in cell or len(cell) > 250:
                    failures.append((name, arg, bad, cell[:120]))
            elif not _is_finite_result(got):
                failures.append((name, arg, bad, "non-finite result", str(got)[:80]))
    finally:
        if previous is not None:
            signal.signal(signal.SIGALRM, previous)
    assert n > 500
    assert not failures, "\n".join(map(str, failures[:30])) + f"\n({len(failures)} of {n})"


# =============================================================================
# 4. Size arguments: documented limits, memory named, enforced under setrlimit
# =============================================================================
SIZE_CASES = [
    ("REL_KRR_BOOTSTRAP n_boot 1e6", "harness('REL_KRR_BOOTSTRAP', BIG, None, 1e6)", "GiB of memory"),
    ("REL_KRR_BOOTSTRAP k 1e9", "harness('REL_KRR_BOOTSTRAP', GRID, 1e9, 100)", "GiB of memory"),
    ("REL_KRR_EMPIRICAL n_draws 1e9", "harness('REL_KRR_EMPIRICAL', GRID, GRID, 1e9)", "GiB of memory"),
    ("REL_KRR_CURVE k_max 1e10", "harness('REL_KRR_CURVE', GRID, None, 1e10)", "at most 1,048,575"),
    ("GT_THRESHOLD_CERTAINTY samples 1e10", "harness('GT_THRESHOLD_CERTAINTY', GRID, 5.0, 1e10)", "GiB of memory"),
    ("GT_CERTAINTY samples 1e9", "harness('GT_CERTAINTY', ANN, CLASSES, None, 1e9)", "GiB of memory"),
    ("GT_PLAUSIBILITY samples 1e9", "harness('GT_PLAUSIBILITY', ANN, CLASSES, None, 1e9)", "GiB of memory"),
    ("CALIB_DESIGN k 100000", "harness('CALIB_DESIGN', A, O, None, 100000)", "at most 50"),
    ("pl_gibbs samples 1e9", "api(lambda: gt.pl_gibbs([[[0], [1]]], 3, samples=10**9))", "Gibbs sweeps"),
    ("fairness groups", "api(lambda: xlcalib.fairness_analyses(list(range(40000)), list(range(40000)), "
                        "list(range(40000))))", "GiB of memory"),
    ("svensson 120 categories", "api(lambda: xlcalib.svensson_from_table(np.ones((120, 120))))", "GiB of memory"),
]


@pytest.fixture(scope="module")
def size_answers():
    """All size cases in ONE subprocess under RLIMIT_AS: each request must be refused before anything large exists."""
    calls = "\n".join(f"run({label!r}, lambda: {call})" for label, call, _ in SIZE_CASES)
    code = textwrap.dedent("""
        import json, resource, time
        import numpy as np
        import xlcalib, xlcalib.ground_truth as gt
        from udf_registry.registry import REGISTRY
        import udf_registry  # noqa
        GRID = [[1.0, 2.0, 3.0], [2.0, 2.0, 4.0], [3.0, 5.0, 4.0], [1.0, 1.0, 2.0]]
        BIG = (np.arange(353 * 13).reshape(353, 13) % 7).astype(float).tolist()  # WordSim-353's shape
        ANN = [["a", "b"], ["b", "b"], ["a", "a > b"]]
        CLASSES = [["a"], ["b"]]
        A = [["A"], ["A"], ["B"], ["B"], ["C"], ["C"]]
        O = [["x"], ["y"], ["x"], ["z"], ["y"], ["z"]]
        limit = 1_200_000_000  # 1.2 GB of address space for the whole interpreter
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        def harness(name, *args):
            got = REGISTRY[name].func(*args)
            return got[0][0] if isinstance(got, list) else got
        def api(f):
            try:
                return f()
            except xlcalib.InputError as exc:
                return "xlcalib: " + exc.message
        def run(label, f):
            start = time.time()
            try:
                out = str(f())
            except BaseException as exc:  # MemoryError under the limit = the bound was not enforced
                out = f"raised {type(exc).__name__}: {exc}"
            print(json.dumps([label, out, time.time() - start]), flush=True)
    """) + calls
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    answers = {label: (text, seconds) for label, text, seconds in map(json.loads, proc.stdout.splitlines())}
    assert set(answers) == {c[0] for c in SIZE_CASES}, proc.stderr[-2000:]
    return answers


@pytest.mark.parametrize("label, call, expected", SIZE_CASES, ids=[c[0] for c in SIZE_CASES])
def test_size_arguments_refused_within_a_memory_limit(label, call, expected, size_answers):
    text, seconds = size_answers[label]
    assert text.startswith("xlcalib: ") and "internal error" not in text, text
    if expected == "GiB of memory":  # the need is named with its unit (GiB or TiB)
        assert re.search(r"would need about [\d.]+ (GiB|TiB) of memory", text), text
    else:
        assert expected in text, text
    assert seconds < 10


def test_template_raters_beyond_excel_columns(tmp_path, capsys):
    err = _one_line_error(capsys, main(["template", "reliability", "-o", str(tmp_path / "r.xlsx"), "--raters", "20000"]))
    assert "16,384 columns" in err


def test_limits_are_documented_in_the_readme():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert "## Limits" in readme
    for text in ("2 GiB", "16,384", "1e15", "1e-15", "1e16", "MAX_WORK_BYTES"):
        assert text in readme, text


# =============================================================================
# 5. Formula injection in text output
# =============================================================================
HOSTILE = ["=1+2", "@SUM(1+1)*cmd|' /C calc'!A0", "+cmd", "-2+3+cmd|' /C calc'!A0"]


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_text_output_neutralises_formula_starts(fmt, tmp_path, capsys):
    names = HOSTILE + ["-3", "B"]
    rows = [(a, o) for i, a in enumerate(names) for o in ("x", "y", "z") if (i + "xyz".index(o)) % 3 != 2]
    frame = pd.DataFrame(rows, columns=["Assessor", "Object"])
    frame["Score"] = np.arange(len(frame)) % 5 + 3.0
    frame["SD"] = 1.0
    src = tmp_path / "hostile.csv"
    frame.to_csv(src, index=False)
    out = tmp_path / ("out" if fmt == "csv" else "out.json")
    assert main(["calibrate", str(src), "--format", fmt, "-o", str(out)]) == 0, capsys.readouterr().err
    if fmt == "csv":
        text = (out / "hostile_Biases.csv").read_text()
        table = pd.read_csv(out / "hostile_Biases.csv", keep_default_na=False)
        assessors = table["assessor"].astype(str).tolist()
        bias = table["bias"]
    else:
        payload = json.loads(out.read_text())
        assessors = [r["assessor"] for r in payload["Biases"]]
        bias = pd.Series([r["bias"] for r in payload["Biases"]])
        text = out.read_text()
    for name in HOSTILE:
        assert "'" + name in assessors, (name, assessors)
    assert "-3" in assessors and "B" in assessors  # a plain number and ordinary names are unchanged
    assert pd.api.types.is_float_dtype(bias) and (bias < 0).any()  # numbers stay numbers, negative ones too
    for line in text.splitlines():
        for field in line.split(","):
            assert not field.startswith(("=", "@", "+")), line


def test_neutralise_text_rule():
    from xlcalib.workbook.base import neutralise_text

    for text in HOSTILE + ["\t=1", "\r=1", "-x"]:
        assert neutralise_text(text) == "'" + text
    for value in ("-3", "+1.5", "B", "a=b", 3.0, -2, None):
        assert neutralise_text(value) == value


def test_xlsx_output_keeps_formula_looking_names_as_text(tmp_path, capsys):
    frame = _panel()
    frame["assessor"] = frame["assessor"].replace({"A0": "=1+2", "A1": "@SUM(1)"})
    src = tmp_path / "p.csv"
    frame.rename(columns=str.title).rename(columns={"Sd": "SD"}).to_csv(src, index=False)
    assert main(["calibrate", str(src), "-o", str(tmp_path / "o.xlsx")]) == 0, capsys.readouterr().err
    ws = openpyxl.load_workbook(tmp_path / "o.xlsx")["Biases"]
    cells = [c for row in ws.iter_rows() for c in row if c.value in ("=1+2", "@SUM(1)")]
    assert len(cells) == 2 and all(c.data_type == "s" for c in cells)


# =============================================================================
# 7. Smaller: message wording
# =============================================================================
def test_ground_truth_settings_errors_name_the_cell(tmp_path):
    from xlcalib.exercises import ground_truth_report
    from xlcalib.templates import BUILDERS

    wb = BUILDERS["ground_truth"](items=3, annotators=2)
    ann = wb["Annotations"]
    for r, values in enumerate([["Melanoma", "Nevus"], ["Nevus", "Nevus"], ["Eczema", "Melanoma > Nevus"]], start=2):
        for c, v in enumerate(values, start=2):
            ann.cell(row=r, column=c, value=v)
    settings = wb["Settings"]
    row = next(r for r in range(1, 30) if str(settings.cell(row=r, column=1).value).strip().lower() == "samples")
    for bad, expected in ((2.5, "whole number, not 2.5"), (-5, ">= 1"), ("abc", "text")):
        settings.cell(row=row, column=2, value=bad)
        with pytest.raises(InputError, match=f"sheet Settings, cell B{row} \\(samples\\).*{expected}"):
            ground_truth_report(wb)


@pytest.mark.parametrize("bad, expected", [(-1, "must be positive"), (0, "must be positive"),
                                           ("1e999", "beyond the largest number"), (True, "logical value")])
def test_calibration_settings_errors_name_the_cell(bad, expected, tmp_path, capsys):
    book = openpyxl.load_workbook(_panel_book(tmp_path / "s.xlsx"))
    row = next(r for r in range(1, 30) if str(book["Settings"].cell(row=r, column=1).value).startswith("Anomaly"))
    book["Settings"].cell(row=row, column=2, value=bad)
    book.save(tmp_path / "s2.xlsx")
    err = _one_line_error(capsys, main(["calibrate", str(tmp_path / "s2.xlsx"), "-o", str(tmp_path / "o.xlsx")]))
    assert f"sheet Settings, cell B{row} (anomaly threshold)" in err and expected in err, err
    assert "anomaly_threshold" not in err and "Evaluations" not in err


def test_ordinal_report_errors_name_the_sheet_row():
    from xlcalib.exercises import ordinal_report
    from xlcalib.templates import BUILDERS

    wb = BUILDERS["ordinal_agreement"](objects=4)
    ws = wb["Ratings"]
    for r, (a, b) in enumerate([("F1", "F2"), ("F2", "F2"), ("F9", "F3"), ("F4", "F4")], start=2):
        ws.cell(row=r, column=2, value=a)
        ws.cell(row=r, column=3, value=b)
    with pytest.raises(InputError, match=r"sheet Ratings, row 4 \(rater 1\): category 'F9'"):
        ordinal_report(wb)


def test_huge_table_counts_are_named_plainly():
    with pytest.raises(InputError) as info:
        xlcalib.svensson_from_table([[9.3e18, 1], [1, 1]])
    assert "-9223372036854775" not in info.value.message


def test_entity_declarations_are_refused_in_one_sentence(tmp_path):
    import zipfile

    src = tmp_path / "src.xlsx"
    openpyxl.Workbook().save(src)
    bomb = ('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
            '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheets>&e;</sheets></workbook>')
    out = tmp_path / "xxe.xlsx"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(out, "w") as zout:
        for item in zin.infolist():
            zout.writestr(item, bomb if item.filename == "xl/workbook.xml" else zin.read(item.filename))
    with pytest.raises(InputError) as info:
        openpyxl_backend.open_workbook(out)
    assert "\n" not in info.value.message and len(info.value.message) < 250


# =============================================================================
# Invariance: accepted extreme magnitudes give the answer of ordinary ones
# =============================================================================
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=-1000, max_value=1000), st.integers(min_value=0, max_value=10_000))
def test_reliability_is_unchanged_by_any_power_of_two_scale(exponent, seed):
    """ICC and alpha of ratings x 2**e equal those of the ratings, down to the last bit, for any e that keeps them finite."""
    x = np.random.default_rng(seed).integers(0, 10, size=(6, 4)).astype(float)
    if x.max() == x.min():
        x[0, 0] += 1
    scaled = np.ldexp(x, exponent)
    if not np.isfinite(scaled).all() or (scaled[x != 0] == 0).any() or np.any(np.abs(scaled[x != 0]) < 2.3e-308):
        return  # not representable as normal numbers: outside the accepted range
    ref = xlcalib.icc_table(x)["ICC"].to_numpy()
    got = xlcalib.icc_table(scaled)["ICC"].to_numpy()
    assert np.allclose(got, ref, rtol=1e-12, atol=1e-12, equal_nan=True)
    assert xlcalib.krippendorff_alpha(scaled) == pytest.approx(xlcalib.krippendorff_alpha(x), rel=1e-12, abs=1e-12)


# =============================================================================
# Silent wrong numbers in the reliability and ordinal functions
# =============================================================================
def _table_functions():
    """Every public function taking an agreement ``table=`` (a new one is covered automatically)."""
    out = []
    for name in sorted(xlcalib.__all__):
        func = getattr(xlcalib, name)
        if callable(func) and not inspect.isclass(func):
            try:
                parameters = inspect.signature(func).parameters
            except (TypeError, ValueError):
                continue
            if "table" in parameters:
                out.append(name)
    assert {"svensson_from_table", "mean_rank_table", "roc_points"} <= set(out)
    return out


@pytest.mark.parametrize("name", _table_functions())
@pytest.mark.parametrize("table, match", [
    ([[3, 2], [-1, 4]], r"row 2, column 1 holds -1"),
    ([[3, 2.5], [1, 4]], r"row 1, column 2 holds 2.5"),
    ([[3, float("nan")], [1, 4]], r"row 1, column 2 holds nan"),
    ([[0, 0], [0, 0]], r"holds 0|is empty"),
    ([[1, 2, 3], [4, 5, 6]], r"square"),
])
def test_agreement_table_counts_are_checked_by_cell(name, table, match):
    """A negative count was accepted by mean_rank_table and an empty table gave roc_points a column of NaN."""
    with pytest.raises(InputError, match=match):
        getattr(xlcalib, name)(table=table)


def test_icc_of_signed_ratings_near_the_largest_double_equals_the_scaled_down_ratings():
    """ICC is scale-invariant: ratings near ±1.8e308 (squares overflow) give exactly the ICCs of the same ratings
    divided by 2**1000, in the core and in REL_ICC_TABLE (NaN, -inf and ICC(2,k) = 4 were returned)."""
    from udf_registry import REL_ICC_TABLE

    x = np.array([[1.79e308, -1.79e308, 1e308], [-1e308, 1.5e308, 1.7e308], [1e308, 1e308, -1.79e308],
                  [0.0, 5e307, 1e308], [1.2e308, 1.1e308, 1.0e308]])
    small = np.ldexp(x, -1000)
    columns = ["ICC", "F", "pval", "CI_low", "CI_high"]
    got, ref = xlcalib.icc_table(x)[columns].to_numpy(), xlcalib.icc_table(small)[columns].to_numpy()
    assert np.isfinite(got).all() and np.array_equal(got, ref)
    cells = REL_ICC_TABLE(x.tolist())
    assert [row[2] for row in cells[1:]] == ref[:, 0].tolist()


# =============================================================================
# A calibration result's methods: garbage in any argument is an InputError naming it
# =============================================================================
def _result_methods():
    from xlcalib.calibration import CalibrationResult

    return sorted(name for name, member in inspect.getmembers(CalibrationResult, inspect.isfunction)
                  if not name.startswith("_") and len(inspect.signature(member).parameters) > 1)


@pytest.fixture(scope="module")
def demo_result():
    from xlcalib.demo import demo_panel

    panel = demo_panel()
    return xlcalib.calibrate(panel[0] if isinstance(panel, tuple) else panel)


def _halves(result):
    objects = list(result.values.index)
    return {o: ("first" if i < len(objects) // 2 else "second") for i, o in enumerate(objects)}


#: a valid call of each method, garbage then put in one argument at a time
_RESULT_CALLS = {"difference": lambda r: {"first": r.values.index[0], "second": r.values.index[1], "level": 0.9},
                 "ranking": lambda r: {"top_k": 5, "draws": 200},
                 "next_reads": lambda r: {"k": 2, "top_k": 5},
                 "fit_statistics": lambda r: {"by": "assessor"},
                 "unexpected_reads": lambda r: {"top": 5},
                 "group_bias": lambda r: {"groups": _halves(r), "alpha": 0.05, "min_reads": 2},
                 "group_audit": lambda r: {"groups": _halves(r)},
                 "locate": lambda r: {"name": r.values.index[0]}}


@pytest.mark.parametrize("method", _result_methods())
def test_result_methods_refuse_garbage_by_argument(method, demo_result):
    """result.difference(..., level='high') raised a raw ValueError; every method and argument is covered."""
    assert method in _RESULT_CALLS, f"new CalibrationResult method {method!r}: add a valid call to _RESULT_CALLS"
    valid = _RESULT_CALLS[method](demo_result)
    getattr(demo_result, method)(**valid)
    for argument in valid:
        for bad in ("high", float("nan"), 1e308, -1, True):
            try:
                got = getattr(demo_result, method)(**{**valid, argument: bad})
            except InputError as exc:
                assert "\n" not in exc.message and len(exc.message) < 400, exc.message
                continue
            assert _is_finite_result(got), (method, argument, bad)
