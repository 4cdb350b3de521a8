"""The panel calibration exercise on a file: calibrate a workbook (or a CSV export of its evaluations) and
write the results to a new file — ``xlcalib calibrate``, ``xlcalib next-reads`` and the demo.

The input file is never modified; every output is written to a temporary file and renamed into place.
Input files are read through the bounded readers (values only); new result workbooks are streamed.
Messages speak the command line's language (``--fund``, ``-o``), the only way these jobs are asked for.
"""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from ..calibration.decide.lottery import public_seed as lottery_public_seed
from ..calibration.decide.ranking import lottery_method
from ..errors import InputError, InputProblems
from ..imports import EvaluationsTableFound, evaluations_frame
from ..workbook.csv_backend import TEXT_TABLE_SUFFIXES
from ..inputs import CLI_OPTIONS, CalibrationSettings, checks_frame
from ..inputs.values import scale_argument
from .common import check_output_differs, run_preamble, write_sheets
from .import_export import (
    ExportOptions,
    ExportRun,
    at_export_cells,
    checks_at_export,
    export_sheets,
    is_export,
    read_with_presets,
)
from .panel_calibration import compute_calibration, next_reads_frame, settings_words, write_calibration

#: Columns of the Residuals sheet (assessor, object, score, fitted, residual, std_residual, anomalous, leverage, z).
RESIDUALS_COLUMNS = 9
#: Problems printed by the command line before "... and N more problems"; beyond it they go to a file.
MAX_PROBLEM_LINES = 20
#: Input-check warnings (other than pending reads) printed in full after a run; the rest are in Checks.
SHOWN_WARNINGS = 5


def calibrate_file(path, out=None, *, sheet="Evaluations", gauge=None, per_component=False, fmt="xlsx",
                   fund=None, threshold=None, lottery=False, model=None, interval_level=None, seed=None,
                   feedback=False, scale_use=None, group_column=None, export=None, borderline=None, public_seed=None):
    """Calibrate a workbook file; write results next to it (atomically). Returns (run, output path): the
    :class:`~xlcalib.exercises.PanelRun` (its ``result``, the ranking it decided on, its input checks).

    ``borderline``: the borderline cut-off epsilon (objects with P(above the line) between epsilon and
    1 - epsilon are borderline), beating the Settings sheet's.  ``lottery``: True or "informed" (each object
    funded with its chance P(above)), "uniform band"; ``public_seed``: the lottery's public seed (any text).

    ``fmt``: ``"xlsx"`` (result workbook with sheets Values, Biases, Residuals,
    Diagnostics and charts), ``"csv"`` (one ``<stem>_<Sheet>.csv`` per sheet in
    the folder *out*, default next to the input) or ``"json"`` (one file with
    the four tables and the stats).

    A review export (HotCRP, CMT, EasyChair, OpenReview, a grid: by its extension or a header that is not an
    evaluations table's), or any file with ``export`` options (:class:`~xlcalib.exercises.ExportOptions`), is
    calibrated as it comes: :func:`calibrate_export` (then the run is an :class:`~xlcalib.exercises.ExportRun`).
    """
    path = Path(path)
    declared = None
    if _only_a_scale(export) and not is_export(path, sheet):  # an evaluations table with --scale: not an export
        declared, export = _range_scale(export.scale), None
    if export is not None or (declared is None and is_export(path, sheet)):
        return calibrate_export(path, out, export, sheet=sheet, gauge=gauge, per_component=per_component, fmt=fmt,
                                fund=fund, threshold=threshold, lottery=lottery, model=model,
                                interval_level=interval_level, seed=seed, feedback=feedback, scale_use=scale_use,
                                borderline=borderline, public_seed=public_seed)
    overrides = _overrides(gauge=gauge, model=model, interval_level=interval_level, seed=seed, fund=fund,
                           threshold=threshold, lottery=lottery, borderline=borderline, public_seed=public_seed)
    overrides.update({key: value for key, value in (("scale_use", scale_use), ("group_column", group_column),
                                                    ("scale", declared)) if value is not None})
    book = _input_book(path, sheet, fast=True)
    try:
        run, frames, settings = compute_calibration(
            book, CalibrationSettings(sheet=sheet, per_component=per_component),
            before_fit=_residuals_fit_a_sheet if fmt == "xlsx" else None, origins=CLI_OPTIONS,
            **overrides)
    except InputProblems as exc:  # every problem at once; the full list goes to a file when it is long
        if len(exc.errors) > MAX_PROBLEM_LINES:
            _write_problem_listing(exc, path, out)
        raise
    except InputError as exc:  # speak the command line's language
        raise InputError(command_line_words(exc.message), exc.where) from None
    finally:
        if hasattr(book, "close"):
            book.close()
    checks = frames.get("Checks")
    if checks is not None and len(checks):
        run = replace(run, input_checks=input_checks_text(checks))
    default = path.with_name(f"{path.stem}_calibrated" + ("" if fmt == "csv" else f".{fmt}"))
    out = Path(out) if out else default
    check_output_differs(path, out)
    _write_results(run, frames, settings, path, out, fmt, feedback)
    return run, out


def calibrate_export(path, out=None, options=None, *, sheet="Evaluations", gauge=None, per_component=False,
                     fmt="xlsx", fund=None, threshold=None, lottery=False, model=None, interval_level=None, seed=None,
                     feedback=False, scale_use=None, borderline=None, public_seed=None):
    """Calibrate a review export as it comes: read it (:func:`xlcalib.imports.read_export`, with saved column
    roles, a declared scale, a round, an identity map from *options*), calibrate the long table, and write the
    result with the Summary saying how the export was read, the Import report and the Import sheet.  Errors
    of the checks and the fit name the export's own rows and cells.  Reviewers who cannot be linked across
    objects (per-paper ids, or the ids an identity map leaves out) are calibrated too: their stringency is part of
    the noise of their reads (the one-way model when no reviewer is linked), said on the Summary.

    Returns (:class:`~xlcalib.exercises.ExportRun`, output path).
    """
    from ..workbook import FrameBook

    path = Path(path)
    overrides = _overrides(gauge=gauge, model=model, interval_level=interval_level, seed=seed, fund=fund,
                           threshold=threshold, lottery=lottery, borderline=borderline, public_seed=public_seed)
    if scale_use is not None:
        overrides["scale_use"] = scale_use
    out = Path(out) if out else path.with_name(f"{path.stem}_calibrated" + ("" if fmt == "csv" else f".{fmt}"))
    check_output_differs(path, out)
    run = ExportRun(_read_export_file(path, out, options, sheet))
    imported = run.imported
    book = FrameBook({"Evaluations": evaluations_frame(imported.evaluations)})
    scale = imported.mapping.scale
    # a declared scale's end scores say "this or beyond", and so do a form's that the export states (its points
    # kept when their steps are uneven); one inferred from the scores present may be narrower than the form's,
    # and a highest score given is then no end at all
    if scale is not None and scale.for_calibration() is not None:
        overrides["scale"] = scale.for_calibration()
    try:
        panel_run, frames, settings = compute_calibration(
            book, CalibrationSettings(sheet="Evaluations", per_component=per_component),
            before_fit=_residuals_fit_a_sheet if fmt == "xlsx" else None, origins=CLI_OPTIONS,
            **overrides)
    except InputError as exc:  # at the export's rows and cells, in the command line's language
        moved = at_export_cells(exc, imported)
        if isinstance(moved, InputProblems):
            if len(moved.errors) > MAX_PROBLEM_LINES:
                _write_problem_listing(moved, path, out)
            raise moved from None
        raise InputError(command_line_words(moved.message), moved.where) from None
    frames["Checks"] = checks_at_export(frames.get("Checks"), imported)
    run.result, run.decisions, run.groups = panel_run.result, panel_run.decisions, panel_run.groups
    run.titles = panel_run.titles
    if frames["Checks"] is not None and len(frames["Checks"]):
        run.input_checks = input_checks_text(frames["Checks"])
    frames["Import report"] = imported.report
    _write_export_results(run, frames, settings, path, out, fmt, feedback)
    return run, out


def command_line_words(message: str) -> str:
    """A core message in the command line's language: ``per_component=True`` is ``--per-component``,
    ``model='random-assessors'`` is ``--model random-assessors``."""
    message = message.replace("per_component=True", "--per-component")
    return re.sub(r"\bmodel='([\w-]+)'", r"--model \1", message)


def _only_a_scale(export) -> bool:
    """Whether the only export option given is ``--scale``: on an evaluations table it is the panel's scale
    (scores outside it are errors; scores at its ends say "this or beyond")."""
    return export is not None and export.scale is not None and all(
        getattr(export, name) is None for name in ("source", "mapping", "round", "identity_map", "columns_are"))


def _range_scale(text):
    """``--scale`` for an evaluations table: a range such as 1-6 or -3..3, as (min, max), a form's points with
    uneven steps (1, 3, 6, 8) as they are, or a letter-grade ladder best first ('A, B, C, D'; 'A=4, B=3 ...') as
    its :class:`~xlcalib.inputs.values.Scale` (the evaluations' check reads the grades through it)."""
    scale = scale_argument(text, "--scale")
    if scale is None:
        raise InputError(f"--scale {text}: give a range (e.g. 1-6), the form's points (e.g. 1, 3, 6, 8) or letter "
                         "grades best first (e.g. 'A, B, C, D')")
    return scale if scale.symbols else scale.for_calibration()


def _read_export_file(path: Path, out: Path, options, sheet: str):
    """The export read; a long list of problems also goes to a file; a workbook that is neither a panel (no
    evaluations sheet) nor an export is told so."""
    try:
        return read_with_presets(path, options or ExportOptions())
    except InputProblems as exc:
        if len(exc.errors) > MAX_PROBLEM_LINES:
            _write_problem_listing(exc, path, out)
        raise
    except EvaluationsTableFound as exc:
        if path.suffix.lower() not in (".xlsx", ".xlsm"):
            raise
        raise InputError(f"{path.name} has no sheet named '{sheet}' (the evaluations table); its sheet {exc.sheet} "
                         f"holds one (columns {', '.join(exc.columns)}): name that sheet '{sheet}', or give --sheet "
                         f"\"{exc.sheet}\"") from None
    except InputError as exc:
        if options is None and path.suffix.lower() in (".xlsx", ".xlsm") and "unknown layout" in exc.message:
            raise InputError(f"{path.name} has no sheet named '{sheet}' (the evaluations table), and is not a review "
                             f"export xlcalib recognises: {exc.message}") from None
        raise


def _write_export_results(run, frames, settings, path: Path, out: Path, fmt: str, feedback: bool) -> None:
    """An export's result workbook (calibration sheets, Import report, Import), CSV files or one JSON file."""
    from ..workbook import new_result_book, open_book, save_atomically, write_bytes_atomically
    from ..workbook.text_output import json_bytes

    if fmt == "xlsx":
        if out.suffix.lower() != ".xlsx":
            raise InputError(f"{out.name}: the result workbook has no macros; write it to an .xlsx file")
        book = new_result_book()
        preamble = run_preamble("calibration", f"{settings_words(settings, run.result)}; export {run.imported.name} read as "
                                               f"{run.imported.source}", None)
        specs = export_sheets(run, frames, settings, preamble, feedback=feedback)
        backend = open_book(book)
        write_sheets(backend, specs)
        backend.activate(specs[0].name)
        save_atomically(book, out)
    elif fmt == "csv":
        _write_results(run, frames, settings, path, out, fmt, feedback)
    else:
        payload = _json_payload(run, frames, settings)
        payload["import"] = _import_payload(run.imported)
        write_bytes_atomically(json_bytes(payload), out)


def _import_payload(imported) -> dict:
    """How the export was read, for the JSON result: system, notes, linked, the column roles."""
    from ..workbook.base import neutralise_text

    return {"source": imported.source, "file": neutralise_text(imported.name), "linked": bool(imported.linked),
            "notes": [neutralise_text(n) for n in imported.notes], "mapping": imported.mapping.to_dict()}


def _overrides(*, gauge, model, interval_level, seed, fund, threshold, lottery, borderline=None,
               public_seed=None) -> dict:
    """Explicit command-line options, which beat the Settings sheet."""
    overrides = {key: value for key, value in (("gauge", gauge), ("model", model), ("interval_level", interval_level),
                                               ("seed", seed)) if value is not None}
    if borderline is not None:
        if not 0 < borderline < 0.5:
            raise InputError(f"--borderline must be a share above 0 and below 0.5 (e.g. 0.05 or 0.25), not {borderline:g}")
        overrides["epsilon"] = float(borderline)
    if fund is not None or threshold is not None:
        overrides.update(fund_top_k=fund, fund_threshold=threshold)
    if lottery:
        if fund is None:
            raise InputError("--lottery fills places: give the number of places with --fund K")
        overrides["lottery"] = lottery_method(lottery)
    if public_seed is not None:
        try:
            overrides["public_seed"] = lottery_public_seed(public_seed)
        except InputError as exc:
            raise InputError(f"--public-seed: {exc.message}") from None
    return overrides


def _input_book(path: Path, sheet: str, *, fast: bool):
    """The input as a read-only book: a CSV export of the sheet (bounded, read by pandas), else the workbook
    through the fast bounded reader (``fast``) or openpyxl."""
    if path.suffix.lower() in TEXT_TABLE_SUFFIXES:
        from ..workbook.csv_backend import CsvBook

        return CsvBook(path, sheet)
    if fast:  # .xlsx/.xlsm/.ods: bounded scan, then the fast reader (values only; results go to a new workbook)
        from ..workbook.reader import FastBook

        return FastBook(path)
    from ..workbook import open_workbook

    return open_workbook(path)


def _residuals_fit_a_sheet(panel, settings: CalibrationSettings) -> None:
    """The Residuals (and Feedback) sheet holds one row per evaluation: a panel beyond Excel's rows is refused
    before the fit, with the way out (CSV or JSON), instead of after minutes of work; never cut silently.

    The sheet's lines above the table wrap to its width, so the check lays out the sheet the run will write
    with the scores standing in for the fitted numbers (the same widths: score units)."""
    from ..presentation import residuals_sheet
    from ..workbook.base import check_sheet_size

    f = panel.frame
    score = f["score"].to_numpy(dtype=float)
    stand_in = pd.DataFrame({"assessor": f["assessor"].to_numpy(), "object": f["object"].to_numpy(), "score": score,
                             "fitted": score, "residual": score, "std_residual": score, "anomalous": False,
                             "leverage": score, "z": score})
    spec = residuals_sheet(stand_in, run_preamble("calibration", settings.describe(), None)).printable()
    check_sheet_size(stand_in, spec.preamble, "Residuals", n_rows=len(f), n_columns=RESIDUALS_COLUMNS)


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


def _write_results(run, frames, settings, path: Path, out: Path, fmt: str, feedback: bool) -> None:
    """The result workbook (streamed by XlsxWriter), one CSV file per sheet, or one JSON file, of a run
    (:class:`~xlcalib.exercises.PanelRun`, or an export's run)."""
    from ..workbook import new_result_book, save_atomically, write_bytes_atomically
    from ..workbook.text_output import csv_bytes, json_bytes

    if fmt == "xlsx":
        if out.suffix.lower() != ".xlsx":
            raise InputError(f"{out.name}: the result workbook has no macros; write it to an .xlsx file")
        result_book = new_result_book()  # a new file: streamed by XlsxWriter, not built cell by cell in openpyxl
        write_calibration(result_book, run, frames, settings, feedback=feedback)
        save_atomically(result_book, out)
    elif fmt == "csv":
        if out.suffix:
            raise InputError(f"--format csv writes one file per sheet: give -o a folder, not {out.name}")
        for name, frame in {**frames, **behaviour_frames(run)}.items():
            write_bytes_atomically(csv_bytes(frame), out / f"{path.stem}_{name}.csv")
    else:
        write_bytes_atomically(json_bytes(_json_payload(run, frames, settings)), out)


def _json_payload(run, frames, settings: CalibrationSettings) -> dict:
    """Tables as lists of records, the stats and the settings; names that would start a formula get a leading '
    (as in the CSV files; json_bytes neutralises the tables' text)."""
    from ..workbook.base import neutralise_text

    payload = {**frames, **behaviour_frames(run)}
    payload["stats"] = {k: (v.item() if isinstance(v, (np.floating, np.integer)) else neutralise_text(v))
                        for k, v in run.result.stats.items()}
    payload["settings"] = {"sheet": settings.sheet, "gauge": settings.gauge, "per_component": settings.per_component,
                           "anomaly_threshold": settings.anomaly_threshold, "model": settings.model,
                           "interval_level": settings.interval_level, "funding_top_k": settings.fund_top_k,
                           "funding_threshold": settings.fund_threshold, "lottery": settings.lottery,
                           "public_seed": settings.public_seed,
                           "seed": settings.seed, "levels": neutralise_text(settings.levels.describe() if settings.levels
                                                                            else "default relative levels")}
    if "Ranking" in frames:
        payload["ranking"] = {k: v for k, v in frames["Ranking"].attrs.items()}
    return payload


def behaviour_frames(run) -> dict[str, pd.DataFrame]:
    """The assessor-behaviour tables of a run for CSV and JSON output: Fit, Unexpected, Separation, Agreement
    and, with the groups the run read, GroupBias and GroupAudit (the workbook shows the same tables on its own
    sheets)."""
    from ..presentation import BehaviourTables

    b = BehaviourTables.of(run.result, run.groups)
    out = {}
    for name, table in (("Fit", b.fit), ("Separation", b.separation), ("Agreement", b.exact_agreement),
                        ("GroupAudit", b.group_audit)):
        if table is not None:
            out[name] = table.reset_index() if name != "GroupAudit" else table
    out["Unexpected"] = b.unexpected
    if b.group_bias is not None:
        out["GroupBias"] = b.group_bias
    return out


def next_reads_file(path, out=None, *, reads: int = 10, fund=None, threshold=None, max_load=None,
                    sheet: str = "Evaluations", conflicts=None, loads=None, subjects=None,
                    ignore_assignment: bool = False, scale=None):
    """Calibrate a workbook and suggest the next reads within the panel's rules; write the result workbook
    with a "Next reads" sheet.  Returns (suggestions frame, output path).

    The funding line is ``fund``/``threshold`` or, when neither is given, the book's Settings sheet; without
    any line the reads that most reduce the values' variance.  Rules (never broken): the workbook's
    Assignment sheet -- conflicts, max loads, subjects or the Suitability grid -- unless
    ``ignore_assignment``; pending reads (allocated, no score yet) count in the loads and are never
    suggested.  Rule files (CSV, a header row): ``conflicts`` (assessor, object) adds to the sheet's
    conflicts; ``max_load`` (one number for everyone) replaces the sheet's max loads, and ``loads``
    (assessor, max load) overrides both for the assessors it lists; ``subjects`` (name, subjects, for
    assessors and objects) replaces the sheet's subjects or Suitability grid.  ``scale`` (``"1-6"``, as
    ``--scale``) beats the Settings sheet's score scale.
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
    if scale is not None:
        overrides["scale"] = _range_scale(scale)
    panels = []
    book = _input_book(path, sheet, fast=False)
    try:
        sheet_rules = None if ignore_assignment or path.suffix.lower() in TEXT_TABLE_SUFFIXES else _sheet_rules(book)
        run, frames, settings = compute_calibration(book, CalibrationSettings(sheet=sheet),
                                                    before_fit=lambda panel, _: panels.append(panel),
                                                    origins=CLI_OPTIONS, **overrides)
    finally:
        if hasattr(book, "close"):
            book.close()
    rules = _next_read_rules(sheet_rules, run.result.biases.index, conflicts=conflicts, max_load=max_load, loads=loads,
                             subjects=subjects)
    pending = panels[0].pending[["assessor", "object"]] if panels and len(panels[0].pending) else None
    suggestions = next_reads_frame(run.result, settings, reads, pending=pending, **rules)
    result_book = new_result_book()
    write_calibration(result_book, run, frames, settings, next_reads=suggestions)
    backend = open_book(result_book)
    backend.activate("Next reads")
    save_atomically(result_book, out)
    return suggestions, out


def _sheet_rules(book):
    """The Assignment sheet's rules (None without the sheet); its errors say how to run without it."""
    from .assignment import assignment_rules

    try:
        return assignment_rules(book)
    except InputError as exc:
        raise InputError(f"{exc.message} (fix the Assignment sheet, or run with --ignore-assignment)",
                         exc.where) from None


def _next_read_rules(sheet_rules, assessors, *, conflicts, max_load, loads, subjects) -> dict:
    """The rules next reads keep: the sheet's, with the command line's files and options on top (see
    :func:`next_reads_file`), and one source line for each."""
    from .assignment import read_rules_file

    rules = {"conflicts": None, "max_load": None, "suitability": None, "sources": []}
    if sheet_rules is not None:
        rules.update({k: sheet_rules[k] for k in ("conflicts", "max_load", "suitability")})
        rules["sources"].append(f"from {sheet_rules['source']}")
    if conflicts is not None:
        extra = read_rules_file(conflicts, "conflicts")
        rules["conflicts"] = extra if rules["conflicts"] is None else pd.concat([rules["conflicts"], extra],
                                                                                  ignore_index=True)
        rules["sources"].append(f"from {Path(conflicts).name}: {len(extra)} conflict(s)")
    if max_load is not None:
        rules["max_load"] = max_load
        rules["sources"].append(f"--max-load {max_load} for every assessor")
    if loads is not None:
        per_assessor = read_rules_file(loads, "loads")
        base = rules["max_load"]
        if base is not None and not isinstance(base, dict):  # --max-load: for the assessors the file leaves out
            base = {a: base for a in assessors}
        rules["max_load"] = {**(base or {}), **per_assessor}
        rules["sources"].append(f"from {Path(loads).name}: max loads of {len(per_assessor)} assessor(s)")
    if subjects is not None:
        rules["suitability"] = read_rules_file(subjects, "subjects")
        rules["sources"].append(f"from {Path(subjects).name}: subjects of {len(rules['suitability'])} name(s)")
    return rules
