"""The panel calibration exercise on a file: calibrate a workbook (or a CSV export of its evaluations) and
write the results to a new file — ``xlcalib calibrate``, ``xlcalib next-reads`` and the demo.

The input file is never modified; every output is written to a temporary file and renamed into place.
Input files are read through the bounded readers (values only); new result workbooks are streamed.
Messages speak the command line's language (``--fund``, ``-o``), the only way these jobs are asked for.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError, InputProblems
from ..inputs import checks_frame
from .common import check_output_differs, run_preamble
from .panel_calibration import (
    CalibrationSettings,
    compute_calibration,
    next_reads_frame,
    write_calibration,
)

#: Columns of the Residuals sheet (assessor, object, score, fitted, residual, std_residual, anomalous).
RESIDUALS_COLUMNS = 7
#: Problems printed by the command line before "... and N more problems"; beyond it they go to a file.
MAX_PROBLEM_LINES = 20
#: Input-check warnings (other than pending reads) printed in full after a run; the rest are in Checks.
SHOWN_WARNINGS = 5


def calibrate_file(path, out=None, *, sheet="Evaluations", gauge=None, per_component=False, fmt="xlsx",
                   fund=None, threshold=None, lottery=False, model=None, interval_level=None, seed=None,
                   feedback=False, scale_use=None, group_column=None):
    """Calibrate a workbook file; write results next to it (atomically). Returns (result, output path).

    ``fmt``: ``"xlsx"`` (result workbook with sheets Values, Biases, Residuals,
    Diagnostics and charts), ``"csv"`` (one ``<stem>_<Sheet>.csv`` per sheet in
    the folder *out*, default next to the input) or ``"json"`` (one file with
    the four tables and the stats).
    """
    path = Path(path)
    overrides = _overrides(gauge=gauge, model=model, interval_level=interval_level, seed=seed, fund=fund,
                           threshold=threshold, lottery=lottery)
    overrides.update({key: value for key, value in (("scale_use", scale_use), ("group_column", group_column))
                      if value is not None})
    book = _input_book(path, sheet, fast=True)
    try:
        result, frames, settings = compute_calibration(
            book, CalibrationSettings(sheet=sheet, per_component=per_component),
            before_fit=_residuals_fit_a_sheet if fmt == "xlsx" else None, **overrides)
    except InputProblems as exc:  # every problem at once; the full list goes to a file when it is long
        if len(exc.errors) > MAX_PROBLEM_LINES:
            _write_problem_listing(exc, path, out)
        raise
    except InputError as exc:  # speak the command line's language
        raise InputError(exc.message.replace("per_component=True", "--per-component"), exc.where) from None
    finally:
        if hasattr(book, "close"):
            book.close()
    checks = frames.get("Checks")
    if checks is not None and len(checks):
        result.input_checks = input_checks_text(checks)
    default = path.with_name(f"{path.stem}_calibrated" + ("" if fmt == "csv" else f".{fmt}"))
    out = Path(out) if out else default
    check_output_differs(path, out)
    _write_results(result, frames, settings, path, out, fmt, feedback)
    return result, out


def _overrides(*, gauge, model, interval_level, seed, fund, threshold, lottery) -> dict:
    """Explicit command-line options, which beat the Settings sheet."""
    overrides = {key: value for key, value in (("gauge", gauge), ("model", model), ("interval_level", interval_level),
                                               ("seed", seed)) if value is not None}
    if fund is not None or threshold is not None:
        overrides.update(fund_top_k=fund, fund_threshold=threshold)
    if lottery:
        if fund is None:
            raise InputError("--lottery fills places: give the number of places with --fund K")
        overrides["lottery"] = True
    return overrides


def _input_book(path: Path, sheet: str, *, fast: bool):
    """The input as a read-only book: a CSV export of the sheet (bounded, read by pandas), else the workbook
    through the fast bounded reader (``fast``) or openpyxl."""
    if path.suffix.lower() == ".csv":
        from ..workbook.csv_backend import CsvBook

        return CsvBook(path, sheet)
    if fast:  # .xlsx/.xlsm/.ods: bounded scan, then the fast reader (values only; results go to a new workbook)
        from ..workbook.reader import FastBook

        return FastBook(path)
    from ..workbook import open_workbook

    return open_workbook(path)


def _residuals_fit_a_sheet(panel) -> None:
    """The Residuals (and Feedback) sheet holds one row per evaluation: a panel beyond Excel's rows is refused
    before the fit, with the way out (CSV or JSON), instead of after minutes of work; never cut silently."""
    from ..workbook.base import check_sheet_size

    check_sheet_size(panel.frame, run_preamble("calibration", "", None), "Residuals", n_rows=len(panel.frame),
                     n_columns=RESIDUALS_COLUMNS)


def _write_problem_listing(exc: InputProblems, path: Path, out) -> None:
    """Every problem of the input as a CSV file beside the output; ``exc.listing`` says where (None: not written)."""
    from ..workbook import write_bytes_atomically
    from ..workbook.text_output import csv_bytes

    listing = Path(out).with_name(f"{path.stem}_problems.csv") if out and Path(out).suffix else \
        (Path(out) if out else path.parent) / f"{path.stem}_problems.csv"
    try:
        write_bytes_atomically(csv_bytes(checks_frame(exc.problems)), listing)
        exc.listing = listing
    except OSError:
        exc.listing = None


def input_checks_text(checks: pd.DataFrame) -> str:
    """The input checks' warnings for the command line: a count, then the first few in full."""
    is_pending = checks["problem"].str.contains("(pending", regex=False).to_numpy()
    pending = int(is_pending.sum())
    others = checks["problem"][~is_pending].tolist()  # pending reads are routine: counted, not listed
    parts = ([f"{pending} pending evaluation(s) (allocated, no score yet) left out"] if pending else []) + \
        ([f"{len(others)} warning(s)"] if others else [])
    lines = ["input checks: " + "; ".join(parts) + " (listed in Checks)"]
    lines += [f"  warning: {text}" for text in others[:SHOWN_WARNINGS]]
    if len(others) > SHOWN_WARNINGS:
        lines.append(f"  ... and {len(others) - SHOWN_WARNINGS} more warning(s) in Checks")
    return "\n".join(lines)


def _write_results(result, frames, settings, path: Path, out: Path, fmt: str, feedback: bool) -> None:
    """The result workbook (streamed by XlsxWriter), one CSV file per sheet, or one JSON file."""
    from ..workbook import new_result_book, save_atomically, write_bytes_atomically
    from ..workbook.text_output import csv_bytes, json_bytes

    if fmt == "xlsx":
        if out.suffix.lower() != ".xlsx":
            raise InputError(f"{out.name}: the result workbook has no macros; write it to an .xlsx file")
        result_book = new_result_book()  # a new file: streamed by XlsxWriter, not built cell by cell in openpyxl
        write_calibration(result_book, result, frames, settings, feedback=feedback)
        save_atomically(result_book, out)
    elif fmt == "csv":
        if out.suffix:
            raise InputError(f"--format csv writes one file per sheet: give -o a folder, not {out.name}")
        for name, frame in {**frames, **behaviour_frames(result)}.items():
            write_bytes_atomically(csv_bytes(frame), out / f"{path.stem}_{name}.csv")
    else:
        write_bytes_atomically(json_bytes(_json_payload(result, frames, settings)), out)


def _json_payload(result, frames, settings: CalibrationSettings) -> dict:
    """Tables as lists of records, the stats and the settings; names that would start a formula get a leading '
    (as in the CSV files; json_bytes neutralises the tables' text)."""
    from ..workbook.base import neutralise_text

    payload = {**frames, **behaviour_frames(result)}
    payload["stats"] = {k: (v.item() if isinstance(v, (np.floating, np.integer)) else neutralise_text(v))
                        for k, v in result.stats.items()}
    payload["settings"] = {"sheet": settings.sheet, "gauge": settings.gauge, "per_component": settings.per_component,
                           "anomaly_threshold": settings.anomaly_threshold, "model": settings.model,
                           "interval_level": settings.interval_level, "funding_top_k": settings.fund_top_k,
                           "funding_threshold": settings.fund_threshold, "lottery": settings.lottery,
                           "seed": settings.seed, "levels": neutralise_text(settings.levels.describe() if settings.levels
                                                                            else "default relative levels")}
    if "Ranking" in frames:
        payload["ranking"] = {k: v for k, v in frames["Ranking"].attrs.items()}
    return payload


def behaviour_frames(result) -> dict[str, pd.DataFrame]:
    """The assessor-behaviour tables for CSV and JSON output: Fit, Unexpected, Separation, Agreement and, with
    groups, GroupBias and GroupAudit (the workbook shows the same tables on its own sheets)."""
    from ..presentation import BehaviourTables

    b = BehaviourTables.of(result)
    out = {}
    for name, table in (("Fit", b.fit), ("Separation", b.separation), ("Agreement", b.agreement),
                        ("GroupAudit", b.group_audit)):
        if table is not None:
            out[name] = table.reset_index() if name != "GroupAudit" else table
    out["Unexpected"] = b.unexpected
    if b.group_bias is not None:
        out["GroupBias"] = b.group_bias
    return out


def next_reads_file(path, out=None, *, reads: int = 10, fund=None, threshold=None, max_load=None,
                    sheet: str = "Evaluations"):
    """Calibrate a workbook and suggest the next reads; write the result workbook with a "Next reads" sheet.

    Returns (suggestions frame, output path).  The funding line is ``fund``/``threshold`` or, when neither is
    given, the book's Settings sheet; without any line the reads that most reduce the values' variance.
    """
    from ..workbook import new_result_book, open_book, save_atomically

    path = Path(path)
    out = Path(out) if out else path.with_name(f"{path.stem}_next_reads.xlsx")
    check_output_differs(path, out)
    if out.suffix.lower() != ".xlsx":
        raise InputError(f"write the suggestions to an .xlsx file, not {out.name}")
    overrides = {}
    if fund is not None or threshold is not None:
        overrides.update(fund_top_k=fund, fund_threshold=threshold)
    book = _input_book(path, sheet, fast=False)
    try:
        result, frames, settings = compute_calibration(book, CalibrationSettings(sheet=sheet), **overrides)
    finally:
        if hasattr(book, "close"):
            book.close()
    suggestions = next_reads_frame(result, settings, reads, max_load=max_load)
    result_book = new_result_book()
    write_calibration(result_book, result, frames, settings)
    objective = suggestions.attrs.get("objective", "")
    open_book(result_book).write_frame("Next reads", suggestions, run_preamble(
        "next reads", f"{settings.describe()}; objective: {objective}", None))
    save_atomically(result_book, out)
    return suggestions, out
