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
    return parser


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
