"""Command-line interface: ``xlcalib demo | calibrate``.

Exit codes: 0 success; 2 bad input (one line naming sheet/row/column);
1 internal error (a bug: please report it with the traceback printed).
"""
from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import InputError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="xlcalib", description="Calibrated panel scores and reliability for spreadsheets.")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="build the embedded example exercise, calibrate it and summarise")
    demo.add_argument("--out", default="demo_output", help="folder for the exercise and result workbooks")

    cal = sub.add_parser("calibrate", help="calibrate the evaluations in a workbook")
    cal.add_argument("workbook", help="input .xlsx with an Evaluations sheet (never modified)")
    cal.add_argument("-o", "--out", help="output file (default <stem>_calibrated.<format>)")
    cal.add_argument("--sheet", default="Evaluations", help="sheet holding the evaluations table")
    cal.add_argument("--gauge", choices=["weighted", "simple"], default=None,
                     help="weighted: sum C'_a b_a = 0 (default); simple: sum b_a = 0")
    cal.add_argument("--per-component", action="store_true", help="fit each connected group of assessors separately")
    cal.add_argument("--format", choices=["xlsx", "csv", "json"], default="xlsx")

    tpl = sub.add_parser("template", help="write a fresh exercise workbook")
    tpl.add_argument("kind", choices=["panel_calibration", "reliability", "ordinal_agreement", "ground_truth"])
    tpl.add_argument("-o", "--out", required=True, help="output file (.xlsx, or .xlsm with --macro)")
    tpl.add_argument("--assessors", type=int, help="panel_calibration: number of assessors")
    tpl.add_argument("--objects", type=int, help="panel_calibration / ordinal_agreement: number of objects")
    tpl.add_argument("--scale", type=float, nargs=2, metavar=("MIN", "MAX"), help="score scale")
    tpl.add_argument("--raters", type=int, help="reliability: raters; ground_truth: annotators")
    tpl.add_argument("--items", type=int, help="reliability / ground_truth: number of items")
    tpl.add_argument("--macro", action="store_true", help="write NAME.xlsm + NAME.py (xlwings Run main)")

    tpls = sub.add_parser("templates", help="rebuild all template workbooks (make templates)")
    tpls.add_argument("--out", default="workbook_templates")

    rep = sub.add_parser("report", help="run an exercise's report on a workbook (like the Run main button)")
    rep.add_argument("kind", choices=["calibration", "reliability", "ordinal", "ground_truth"])
    rep.add_argument("workbook")
    rep.add_argument("-o", "--out", help="output workbook (default <stem>_report.xlsx; the input is never modified)")
    return parser


def _template(args) -> int:
    from .templates import build

    size = {}
    if args.kind == "panel_calibration":
        size = {k: v for k, v in (("assessors", args.assessors), ("objects", args.objects)) if v is not None}
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
    for value in size.values():
        if isinstance(value, int) and value < 1:
            raise InputError("sizes must be at least 1")
    for path in build(args.kind, args.out, macro=args.macro, **size):
        print(f"wrote {path}")
    return 0


def _report(args) -> int:
    from .macros import REPORTS
    from .workbook.openpyxl_io import _open_workbook, write_workbook_atomically

    path = Path(args.workbook)
    out = Path(args.out) if args.out else path.with_name(f"{path.stem}_report.xlsx")
    if out.resolve() == path.resolve():
        raise InputError("the output file must differ from the input workbook (the input is never modified)")
    book = _open_workbook(path, data_only=True)
    REPORTS[args.kind](book)
    if out.suffix.lower() == ".xlsm":
        raise InputError("write the report to an .xlsx file")
    write_workbook_atomically(book, out)
    print(f"report written to {out}")
    return 0


def calibrate_file(path, out=None, *, sheet="Evaluations", gauge=None, per_component=False, fmt="xlsx"):
    """Calibrate a workbook file; write results next to it (atomically). Returns (result, output path)."""
    import openpyxl

    from .macros import compute_calibration, write_calibration
    from .workbook.openpyxl_io import _open_workbook, write_workbook_atomically

    path = Path(path)
    from .macros import CalibrationSettings

    overrides = {"gauge": gauge} if gauge else {}  # an explicit command-line gauge beats the Settings sheet
    book = _open_workbook(path)
    try:
        result, frames, settings = compute_calibration(
            book, CalibrationSettings(sheet=sheet, per_component=per_component), **overrides)
    finally:
        book.close()
    out = Path(out) if out else path.with_name(f"{path.stem}_calibrated.{fmt}")
    if out.resolve() == path.resolve():
        raise InputError("the output file must differ from the input workbook (the input is never modified)")
    if fmt == "xlsx":
        result_book = openpyxl.Workbook()
        result_book.remove(result_book.active)
        write_calibration(result_book, result, frames, settings)
        write_workbook_atomically(result_book, out)
    elif fmt == "csv":
        out.mkdir(parents=True, exist_ok=True) if out.suffix == "" else out.parent.mkdir(parents=True, exist_ok=True)
        folder = out if out.suffix == "" else out.parent
        stem = path.stem if out.suffix == "" else out.stem
        for name, frame in frames.items():
            frame.to_csv(folder / f"{stem}_{name}.csv", index=False)
        out = folder
    else:
        payload = {name: json.loads(frame.to_json(orient="records")) for name, frame in frames.items()}
        payload["stats"] = {k: (v if not isinstance(v, (np.floating, np.integer)) else v.item())
                            for k, v in result.stats.items()}
        out.write_text(json.dumps(payload, indent=1, default=str))
    return result, out


def _demo(out_dir: str) -> int:
    import openpyxl

    from .demo import demo_panel
    from .workbook.openpyxl_io import write_frames, write_workbook_atomically

    out = Path(out_dir)
    evaluations, true_values, true_biases = demo_panel()
    book = openpyxl.Workbook()
    book.remove(book.active)
    write_frames(book, {"Evaluations": evaluations,
                        "Truth": pd.DataFrame({"object": true_values.index, "true_value": true_values.to_numpy()})})
    exercise = write_workbook_atomically(book, out / "demo_exercise.xlsx")
    result, result_path = calibrate_file(exercise, out / "demo_exercise_calibrated.xlsx")

    raw = evaluations.groupby("Object")["Score"].mean().reindex(true_values.index)
    calibrated = result.values["value"].reindex(true_values.index)
    # compare after removing the common offset (the gauge): only relative values are identified
    err_raw = raw - true_values
    err_cal = calibrated - true_values
    rms_raw = float(np.sqrt(np.mean((err_raw - err_raw.mean()) ** 2)))
    rms_cal = float(np.sqrt(np.mean((err_cal - err_cal.mean()) ** 2)))
    harsh = result.biases["bias"].sort_values()
    print(f"xlcalib demo: {len(evaluations)} evaluations of {len(true_values)} objects by {len(true_biases)} assessors")
    print(f"  exercise workbook : {exercise}")
    print(f"  result workbook   : {result_path}")
    print("  " + result.summary().replace("\n", "\n  "))
    print(f"  harshest assessor : {harsh.index[0]} (bias {harsh.iloc[0]:+.2f}; true {true_biases[harsh.index[0]]:+.2f})")
    print(f"  most lenient      : {harsh.index[-1]} (bias {harsh.iloc[-1]:+.2f}; true {true_biases[harsh.index[-1]]:+.2f})")
    print(f"  RMS error vs truth: plain averages {rms_raw:.3f}, calibrated {rms_cal:.3f} "
          f"({100 * (1 - rms_cal / rms_raw):.0f}% closer to the truth)")
    return 0


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
        if args.command == "calibrate":
            result, out = calibrate_file(args.workbook, args.out, sheet=args.sheet, gauge=args.gauge,
                                         per_component=args.per_component, fmt=args.format)
            print(result.summary())
            print(f"results written to {out}")
            return 0
    except InputError as exc:
        print(f"xlcalib: error: {exc.message}", file=sys.stderr)
        return 2
    except Exception:  # a bug: say so, with the traceback for the report
        print("xlcalib: internal error (please report this with the traceback below)", file=sys.stderr)
        traceback.print_exc()
        return 1
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
