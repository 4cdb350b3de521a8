"""Command-line interface: ``xlcalib demo | calibrate | next-reads | assign | template | templates | report``.

The headless main job: ``xlcalib calibrate WORKBOOK`` reads the evaluations
table, runs :func:`xlcalib.calibrate` through the same macro code the
workbook's *Run main* button uses (:mod:`xlcalib.macros`), and writes a result
workbook (or CSV files / JSON).  The input file is never modified; every
output is written to a temporary file and renamed into place.

Exit codes: 0 success; 2 bad input (one line naming sheet/row/column);
1 internal error (a bug: please report it with the traceback printed).
"""
from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

import numpy as np

from .cells import EXCEL_MAX_COLUMNS
from .errors import InputError, InputProblems, os_error_message

#: Template size limits: rows of assessors/objects/items, and prepared item x rater cells.
TEMPLATE_MAX_ROWS = 100_000
TEMPLATE_MAX_CELLS = 200_000


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="xlcalib", description="Calibrated panel scores and reliability for spreadsheets.")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="build the embedded example exercise, calibrate it and summarise")
    demo.add_argument("--out", default="demo_output", help="folder for the exercise and result workbooks")

    cal = sub.add_parser("calibrate", help="calibrate the evaluations in a workbook")
    cal.add_argument("workbook", help="input .xlsx/.xlsm with an Evaluations sheet, or a .csv export of it (never modified)")
    cal.add_argument("-o", "--out", help="output file (default <stem>_calibrated.<format>)")
    cal.add_argument("--sheet", default="Evaluations", help="sheet holding the evaluations table")
    cal.add_argument("--gauge", choices=["weighted", "simple"], default=None,
                     help="weighted: sum C'_a b_a = 0 (default); simple: sum b_a = 0")
    cal.add_argument("--per-component", action="store_true", help="fit each connected group of assessors separately")
    line = cal.add_mutually_exclusive_group()
    line.add_argument("--fund", type=int, metavar="K", help="funding line: K places (P(rank <= K) per object)")
    line.add_argument("--threshold", type=float, metavar="X", help="funding line: a calibrated score X")
    cal.add_argument("--lottery", action="store_true",
                     help="with --fund: fill the places left after the sure ones by a recorded draw among the borderline")
    cal.add_argument("--model", choices=["fixed", "shrinkage"], default=None,
                     help="fixed effects (default) or shrinkage (objects as random effects)")
    cal.add_argument("--interval-level", type=float, metavar="P", help="coverage of the intervals (default 0.95)")
    cal.add_argument("--seed", type=int, help="seed of the Monte Carlo draws and the lottery (default 0)")
    cal.add_argument("--format", choices=["xlsx", "csv", "json"], default="xlsx")
    cal.add_argument("--feedback", action="store_true", help="add a printable Feedback sheet, one page per assessor")

    nxt = sub.add_parser("next-reads", help="suggest the extra reads that settle the funding decision best")
    nxt.add_argument("workbook", help="panel workbook (or .csv export of the evaluations; never modified)")
    nxt.add_argument("--reads", type=int, default=10, help="number of extra reads to suggest (default 10)")
    nline = nxt.add_mutually_exclusive_group()
    nline.add_argument("--fund", type=int, metavar="K", help="funding line: K places (default: the Settings sheet)")
    nline.add_argument("--threshold", type=float, metavar="X", help="funding line: a calibrated score X")
    nxt.add_argument("--max-load", type=int, metavar="N", help="at most N reads per assessor, existing reads included")
    nxt.add_argument("--sheet", default="Evaluations", help="sheet holding the evaluations table")
    nxt.add_argument("-o", "--out", help="output workbook (default <stem>_next_reads.xlsx)")

    tpl = sub.add_parser("template", help="write a fresh exercise workbook")
    tpl.add_argument("kind", choices=["panel_calibration", "reliability", "ordinal_agreement", "ground_truth"])
    tpl.add_argument("-o", "--out", required=True, help="output file (.xlsx, or .xlsm with --macro)")
    tpl.add_argument("--assessors", type=int, help="panel_calibration: number of assessors")
    tpl.add_argument("--objects", type=int, help="panel_calibration / ordinal_agreement: number of objects")
    tpl.add_argument("--scale", type=float, nargs=2, metavar=("MIN", "MAX"), help="score scale")
    tpl.add_argument("--raters", type=int, help="reliability: raters; ground_truth: annotators")
    tpl.add_argument("--items", type=int, help="reliability / ground_truth: number of items")
    tpl.add_argument("--uncertainty", choices=["level", "sd"], help="panel_calibration: a Level column (default) or an SD column")
    tpl.add_argument("--macro", action="store_true", help="write NAME.xlsm + NAME.py (xlwings Run main)")
    tpl.add_argument("--assignment", action="store_true", help="panel_calibration: add an Assignment sheet (xlcalib assign)")
    tpl.add_argument("--force", action="store_true", help="replace an existing file of that name")

    tpls = sub.add_parser("templates", help="rebuild all template workbooks (make templates)")
    tpls.add_argument("--out", default="workbook_templates")

    asg = sub.add_parser("assign", help="allocate reads before scoring (Assignment sheet -> Evaluations rows + Design sheet)")
    asg.add_argument("workbook", help="panel workbook with an Assignment sheet (never modified)")
    asg.add_argument("-o", "--out", help="output workbook (default <stem>_assigned.xlsx)")
    asg.add_argument("--share", type=float, default=0.95,
                     help="keep at least this share of the best suitability-only total (default 0.95)")
    asg.add_argument("--seed", type=int, default=0, help="random seed (same seed, same allocation)")

    rep = sub.add_parser("report", help="run an exercise's report on a workbook (like the Run main button)")
    rep.add_argument("kind", choices=["calibration", "reliability", "ordinal", "ground_truth"])
    rep.add_argument("workbook")
    rep.add_argument("-o", "--out", help="output workbook (default <stem>_report.xlsx; the input is never modified)")
    return parser


def _template(args) -> int:
    from .templates import build

    size = {}
    if args.kind == "panel_calibration":
        size = {k: v for k, v in (("assessors", args.assessors), ("objects", args.objects),
                                  ("uncertainty", args.uncertainty)) if v is not None}
        if args.assignment:
            size["assignment"] = True
        if args.scale:
            size["scale"] = tuple(args.scale)
    elif args.kind == "reliability":
        size = {k: v for k, v in (("items", args.items), ("raters", args.raters)) if v is not None}
        if args.scale:
            size["scale"] = tuple(args.scale)
    elif args.kind == "ordinal_agreement":
        size = {"objects": args.objects} if args.objects else {}
    else:
        size = {k: v for k, v in (("items", args.items), ("annotators", args.raters)) if v is not None}
    for key, value in size.items():
        if isinstance(value, int) and value < 1:
            raise InputError(f"--{key} must be at least 1, not {value}")
        # one row per assessor/object/item below a header; raters and annotators are columns after the Item column
        limit, why = ((EXCEL_MAX_COLUMNS - 1, "Excel has 16,384 columns and the first holds the item")
                      if key in ("raters", "annotators") else (TEMPLATE_MAX_ROWS, "a template should stay quick to open"))
        if isinstance(value, int) and value > limit:
            flag = "raters" if key == "annotators" else key
            raise InputError(f"--{flag} {value} is more than a template can hold (limit {limit:,}: {why})")
    cells = size.get("items", 1) * size.get("raters", size.get("annotators", 1))
    if cells > TEMPLATE_MAX_CELLS:
        raise InputError(f"--items x --raters = {cells:,} prepared cells; the limit is {TEMPLATE_MAX_CELLS:,} "
                         "(building takes about a millisecond per cell); enter larger panels by pasting into a smaller template")
    if "scale" in size and not all(np.isfinite(size["scale"])):
        raise InputError("--scale MIN MAX must be finite numbers")
    if "scale" in size and not size["scale"][0] < size["scale"][1]:
        raise InputError(f"--scale MIN MAX needs MIN < MAX, not {size['scale'][0]:g} {size['scale'][1]:g}")
    suffix = Path(args.out).suffix.lower()
    if suffix == ".xlsm" and not args.macro:
        raise InputError(f"{Path(args.out).name}: an .xlsm workbook carries macros; add --macro for the Run main "
                         "button, or write an .xlsx")
    if suffix not in (".xlsx", ".xlsm"):
        raise InputError(f"{Path(args.out).name}: write the template to an .xlsx file (.xlsm with --macro)")
    target = Path(args.out).with_suffix(".xlsm") if args.macro else Path(args.out)
    if target.exists() and not args.force:
        kind = "a folder" if target.is_dir() else "a file"
        raise InputError(f"{target} already exists ({kind}); xlcalib does not overwrite it with a blank template "
                         "(choose another name, or --force to replace a file)")
    for path in build(args.kind, args.out, macro=args.macro, **size):
        print(f"wrote {path}")
    return 0


def _report(args) -> int:
    from .macros import REPORTS
    from .workbook import OpenpyxlBook, open_workbook, save_atomically

    path = Path(args.workbook)
    out = Path(args.out) if args.out else path.with_name(f"{path.stem}_report.xlsx")
    if out.resolve() == path.resolve():
        raise InputError("the output file must differ from the input workbook (the input is never modified)")
    if out.suffix.lower() != ".xlsx":
        raise InputError(f"write the report to an .xlsx file, not {out.name}")
    # the copy keeps the input's formulas (progress counters ...); the macro reads the cached values (fast reader)
    from .workbook.reader import FastBook

    book = open_workbook(path, data_only=False)
    values = FastBook(path)
    try:
        REPORTS[args.kind](OpenpyxlBook(book, values_book=values))
    finally:
        values.close()
    save_atomically(book, out)
    print(f"report written to {out}")
    return 0


#: Problems printed by the command line before "... and N more problems".
MAX_PROBLEM_LINES = 20
#: Input-check warnings (other than pending reads) printed in full after a run; the rest are in Checks.
SHOWN_WARNINGS = 5


def _print_problems(exc) -> None:
    """One line per error (capped), then how many more and where all of them are."""
    errors = exc.errors
    for problem in errors[:MAX_PROBLEM_LINES]:
        print(f"xlcalib: error: {problem.message}", file=sys.stderr)
    rest = len(errors) - MAX_PROBLEM_LINES
    if rest > 0:
        listing = getattr(exc, "listing", None)
        where = f"; all are listed in {listing}" if listing else ""
        print(f"xlcalib: ... and {rest} more problem{'s' if rest > 1 else ''}{where}", file=sys.stderr)


#: Columns of the Residuals sheet (assessor, object, score, fitted, residual, std_residual, anomalous).
RESIDUALS_COLUMNS = 7


def _residuals_fit_a_sheet(panel) -> None:
    """The Residuals (and Feedback) sheet holds one row per evaluation: a panel beyond Excel's rows is refused
    before the fit, with the way out (CSV or JSON), instead of after minutes of work; never cut silently."""
    from .macros import _preamble
    from .workbook.base import check_sheet_size

    check_sheet_size(panel.frame, _preamble("calibration", "", None), "Residuals", n_rows=len(panel.frame),
                     n_columns=RESIDUALS_COLUMNS)


def calibrate_file(path, out=None, *, sheet="Evaluations", gauge=None, per_component=False, fmt="xlsx",
                   fund=None, threshold=None, lottery=False, model=None, interval_level=None, seed=None,
                   feedback=False):
    """Calibrate a workbook file; write results next to it (atomically). Returns (result, output path).

    ``fmt``: ``"xlsx"`` (result workbook with sheets Values, Biases, Residuals,
    Diagnostics and charts), ``"csv"`` (one ``<stem>_<Sheet>.csv`` per sheet in
    the folder *out*, default next to the input) or ``"json"`` (one file with
    the four tables and the stats).
    """
    from .macros import CalibrationSettings, compute_calibration, write_calibration
    from .workbook import new_result_book, save_atomically, write_bytes_atomically
    from .workbook.base import neutralise_text
    from .workbook.text_output import csv_bytes, json_bytes

    path = Path(path)
    # explicit command-line options beat the Settings sheet
    overrides = {key: value for key, value in (("gauge", gauge), ("model", model), ("interval_level", interval_level),
                                               ("seed", seed)) if value is not None}
    if fund is not None or threshold is not None:
        overrides.update(fund_top_k=fund, fund_threshold=threshold)
    if lottery:
        if fund is None:
            raise InputError("--lottery fills places: give the number of places with --fund K")
        overrides["lottery"] = True
    if path.suffix.lower() == ".csv":  # the sheet exported as CSV: bounded, read by pandas
        from .workbook.csv_backend import CsvBook

        book = CsvBook(path, sheet)
    else:  # .xlsx/.xlsm/.ods: bounded scan, then the fast reader (values only; results go to a new workbook)
        from .workbook.reader import FastBook

        book = FastBook(path)
    try:
        result, frames, settings = compute_calibration(
            book, CalibrationSettings(sheet=sheet, per_component=per_component),
            before_fit=_residuals_fit_a_sheet if fmt == "xlsx" else None, **overrides)
    except InputProblems as exc:  # every problem at once; the full list goes to a file when it is long
        if len(exc.errors) > MAX_PROBLEM_LINES:
            from .inputs import checks_frame

            listing = Path(out).with_name(f"{path.stem}_problems.csv") if out and Path(out).suffix else \
                (Path(out) if out else path.parent) / f"{path.stem}_problems.csv"
            try:
                write_bytes_atomically(csv_bytes(checks_frame(exc.problems)), listing)
                exc.listing = listing
            except OSError:
                exc.listing = None
        raise
    except InputError as exc:  # speak the command line's language
        raise InputError(exc.message.replace("per_component=True", "--per-component"), exc.where) from None
    finally:
        if hasattr(book, "close"):
            book.close()
    checks = frames.get("Checks")
    if checks is not None and len(checks):  # warnings of the input checks: a count, then the first few in full
        is_pending = checks["problem"].str.contains("(pending", regex=False).to_numpy()
        pending = int(is_pending.sum())
        others = checks["problem"][~is_pending].tolist()  # pending reads are routine: counted, not listed
        parts = ([f"{pending} pending evaluation(s) (allocated, no score yet) left out"] if pending else []) + \
            ([f"{len(others)} warning(s)"] if others else [])
        lines = ["input checks: " + "; ".join(parts) + " (listed in Checks)"]
        lines += [f"  warning: {text}" for text in others[:SHOWN_WARNINGS]]
        if len(others) > SHOWN_WARNINGS:
            lines.append(f"  ... and {len(others) - SHOWN_WARNINGS} more warning(s) in Checks")
        result.input_checks = "\n".join(lines)
    default = path.with_name(f"{path.stem}_calibrated" + ("" if fmt == "csv" else f".{fmt}"))
    out = Path(out) if out else default
    if out.resolve() == path.resolve():
        raise InputError("the output file must differ from the input workbook (the input is never modified)")
    if fmt == "xlsx":
        if out.suffix.lower() != ".xlsx":
            raise InputError(f"{out.name}: the result workbook has no macros; write it to an .xlsx file")
        result_book = new_result_book()  # a new file: streamed by XlsxWriter, not built cell by cell in openpyxl
        write_calibration(result_book, result, frames, settings, feedback=feedback)
        save_atomically(result_book, out)
    elif fmt == "csv":
        if out.suffix:
            raise InputError(f"--format csv writes one file per sheet: give -o a folder, not {out.name}")
        for name, frame in frames.items():
            write_bytes_atomically(csv_bytes(frame), out / f"{path.stem}_{name}.csv")
    else:  # text output: names that would start a formula get a leading ' (as in the CSV files)
        payload = dict(frames)  # tables become lists of records (json_bytes neutralises their text)
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
        write_bytes_atomically(json_bytes(payload), out)
    return result, out


def next_reads_file(path, out=None, *, reads: int = 10, fund=None, threshold=None, max_load=None,
                    sheet: str = "Evaluations"):
    """Calibrate a workbook and suggest the next reads; write the result workbook with a "Next reads" sheet.

    Returns (suggestions frame, output path).  The funding line is ``fund``/``threshold`` or, when neither is
    given, the book's Settings sheet; without any line the reads that most reduce the values' variance.
    """
    from .macros import (
        CalibrationSettings,
        _preamble,
        compute_calibration,
        next_reads_frame,
        write_calibration,
    )
    from .workbook import new_result_book, open_book, open_workbook, save_atomically

    path = Path(path)
    out = Path(out) if out else path.with_name(f"{path.stem}_next_reads.xlsx")
    if out.resolve() == path.resolve():
        raise InputError("the output file must differ from the input workbook (the input is never modified)")
    if out.suffix.lower() != ".xlsx":
        raise InputError(f"write the suggestions to an .xlsx file, not {out.name}")
    overrides = {}
    if fund is not None or threshold is not None:
        overrides.update(fund_top_k=fund, fund_threshold=threshold)
    if path.suffix.lower() == ".csv":
        from .workbook.csv_backend import CsvBook

        book = CsvBook(path, sheet)
    else:
        book = open_workbook(path)
    try:
        result, frames, settings = compute_calibration(book, CalibrationSettings(sheet=sheet), **overrides)
    finally:
        if hasattr(book, "close"):
            book.close()
    if max_load is not None:
        suggestions = result.next_reads(reads, top_k=settings.fund_top_k, threshold=settings.fund_threshold,
                                        max_load=max_load)
    else:
        suggestions = next_reads_frame(result, settings, reads)
    result_book = new_result_book()
    write_calibration(result_book, result, frames, settings)
    objective = suggestions.attrs.get("objective", "")
    open_book(result_book).write_frame("Next reads", suggestions, _preamble(
        "next reads", f"{settings.describe()}; objective: {objective}", None))
    save_atomically(result_book, out)
    return suggestions, out


def next_reads_text(suggestions) -> str:
    """The suggestions in plain words, one line each."""
    attrs = suggestions.attrs
    head = (f"Next reads for the funding line {attrs['line']}" if attrs.get("line") else
            "Next reads (no funding line: the reads that most reduce the values' uncertainty)")
    lines = [head + ":"]
    for row in suggestions.itertuples(index=False):
        lines.append(f"  {row.order}. {row.assessor} reads {row.object}: {row.reason}")
    if attrs.get("note"):
        lines.append(f"  Note: {attrs['note']}.")
    if len(suggestions) == 0 and not attrs.get("note"):
        lines.append("  none")
    return "\n".join(lines)


def _demo(out_dir: str) -> int:
    from .demo import run_demo

    d = run_demo(out_dir)
    result, evaluations, true_biases = d["result"], d["evaluations"], d["true_biases"]
    ranked = result.biases["bias"].sort_values()
    print(f"xlcalib demo: {len(evaluations)} evaluations of {len(d['true_values'])} objects by {len(true_biases)} assessors")
    print(f"  exercise workbook : {d['exercise']}  (the panel_calibration template, filled in)")
    print(f"  result workbook   : {d['result_path']}")
    print("  " + result.summary().replace("\n", "\n  "))
    se = result.biases["se"]
    for label, name in (("harshest assessor ", ranked.index[0]), ("most lenient      ", ranked.index[-1])):
        print(f"  {label}: {name} (bias {ranked[name]:+.2f} ± {se[name]:.2f}; true {true_biases[name]:+.2f})")
    print(f"  RMS error vs truth: plain averages {d['rms_raw']:.3f}, calibrated {d['rms_calibrated']:.3f} "
          f"({100 * (1 - d['rms_calibrated'] / d['rms_raw']):.0f}% closer to the truth)")
    print(f"  honest error bars : the standard errors shown (RMS {d['rms_se']:.3f}) match the actual error "
          f"of the calibrated values ({d['rms_calibrated']:.3f})")
    return 0


#: packages of the `excel` extra (workbook files, macros, classic add-in); not needed by the core
EXCEL_EXTRA = ("openpyxl", "xlwings", "defusedxml", "et_xmlfile", "python_calamine", "xlsxwriter")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "demo":
            return _demo(args.out)
        if args.command == "template":
            return _template(args)
        if args.command == "templates":
            from .templates import build_all

            for path in build_all(args.out):
                print(f"wrote {path}")
            return 0
        if args.command == "report":
            return _report(args)
        if args.command == "assign":
            from .assign_workbook import assign_file, design_verdict

            result, out = assign_file(args.workbook, args.out, share=args.share, seed=args.seed)
            print("\n".join(design_verdict(result)))
            print(f"allocation written to {out}")
            return 0
        if args.command == "next-reads":
            suggestions, out = next_reads_file(args.workbook, args.out, reads=args.reads, fund=args.fund,
                                               threshold=args.threshold, max_load=args.max_load, sheet=args.sheet)
            print(next_reads_text(suggestions))
            print(f"results written to {out}")
            return 0
        if args.command == "calibrate":
            result, out = calibrate_file(args.workbook, args.out, sheet=args.sheet, gauge=args.gauge,
                                         per_component=args.per_component, fmt=args.format, fund=args.fund,
                                         threshold=args.threshold, lottery=args.lottery, model=args.model,
                                         interval_level=args.interval_level, seed=args.seed,
                                         feedback=args.feedback)
            print(result.summary())
            if result.decisions is not None:
                from .calibration import decision_summary

                line = decision_summary(result.decisions)
                if line:
                    print(line)
            checks = getattr(result, "input_checks", None)
            if checks:
                print(checks)
            print(f"results written to {out}")
            return 0
    except InputProblems as exc:
        _print_problems(exc)
        return 2
    except InputError as exc:
        print(f"xlcalib: error: {exc.message}", file=sys.stderr)
        return 2
    except OSError as exc:  # unreadable input, read-only folder, disk full ...: the user's to fix, in one line
        print(f"xlcalib: error: {os_error_message(exc, action='open')}", file=sys.stderr)
        return 2
    except MemoryError:
        print("xlcalib: error: not enough memory for this input (see the limits table in the README)", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug: say so, with the traceback for the report
        if isinstance(exc, ModuleNotFoundError) and exc.name in EXCEL_EXTRA:
            # not a bug: the core installs without the workbook dependencies (for xlwings Lite)
            print(f"xlcalib: error: workbook files need the excel extra ({exc.name} is not installed): "
                  'pip install "xlcalib[excel]"', file=sys.stderr)
            return 1
        print("xlcalib: internal error (please report this with the traceback below)", file=sys.stderr)
        traceback.print_exc()
        return 1
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
