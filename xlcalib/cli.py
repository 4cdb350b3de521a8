"""Command-line interface: ``xlcalib demo | calibrate | import | next-reads | assign | template | templates |
report | agreement | verify-draw``.

The headless main job: ``xlcalib calibrate WORKBOOK`` (or a review export: HotCRP, CMT, EasyChair,
OpenReview, a grid) reads the evaluations table, runs :func:`xlcalib.calibrate` through the same runner the
workbook's *Run main* button uses (:mod:`xlcalib.exercises`), and writes a result
workbook (or CSV files / JSON).  The input file is never modified; every
output is written to a temporary file and renamed into place.  This module
only reads the command line and prints: the jobs are the exercises'.

Exit codes: 0 success; 2 bad input (one line naming sheet/row/column);
1 internal error (a bug: please report it with the traceback printed); 3 ``verify-draw``: the draw does not match
its record; 130 interrupted (Ctrl-C); 143 terminated (SIGTERM).
"""
from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import traceback
from pathlib import Path

import numpy as np

from .calibration import DEFAULT_MODEL, MODEL_CHOICES, MODEL_WORDS
from .calibration.models.scale_use import SCALE_USE_CHOICES
from .cells import EXCEL_MAX_COLUMNS
from .errors import InputError, InputProblems, Terminated, os_error_message
from .exercises import (
    MAX_PROBLEM_LINES,
    RUNNERS,
    assign_file,
    calibrate_file,
    design_verdict,
    import_file,
    import_text,
    next_reads_file,
    report_file,
)
from .progress import listening
from .templates import KINDS, build, build_all
from .terminal import TerminalProgress

#: Template size limits: rows of assessors/objects/items, and prepared item x rater cells.
TEMPLATE_MAX_ROWS = 100_000
TEMPLATE_MAX_CELLS = 200_000


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="xlcalib", description="Calibrated panel scores and reliability for spreadsheets.")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="build the embedded example exercise, calibrate it and summarise")
    demo.add_argument("--out", default="demo_output", help="folder for the exercise and result workbooks")
    _add_calibrate(sub)
    _add_import(sub)
    _add_next_reads(sub)
    _add_template(sub)
    tpls = sub.add_parser("templates", help="rebuild all template workbooks (make templates)")
    tpls.add_argument("--out", default="workbook_templates")

    asg = sub.add_parser("assign", help="allocate reads before scoring (Assignment sheet -> Evaluations rows + Design sheet)")
    asg.add_argument("workbook", help="panel workbook with an Assignment sheet (never modified)")
    asg.add_argument("-o", "--out", help="output workbook (default <stem>_assigned.xlsx)")
    asg.add_argument("--share", type=float, default=0.95,
                     help="keep at least this share of the best suitability-only total (default 0.95)")
    asg.add_argument("--seed", type=int, default=0, help="random seed (same seed, same allocation)")

    rep = sub.add_parser("report", help="run an exercise's report on a workbook (like the Run main button)")
    rep.add_argument("kind", choices=list(RUNNERS))
    rep.add_argument("workbook")
    rep.add_argument("-o", "--out", help="output workbook (default <stem>_report.xlsx; the input is never modified)")
    _add_agreement(sub)
    ver = sub.add_parser("verify-draw", help="re-run a result workbook's lottery from its Lottery sheet alone and say "
                                             "whether it matches (exit 0 matches, 3 does not)")
    ver.add_argument("result", help="the result workbook (.xlsx) with a Lottery sheet (never modified)")
    ver.add_argument("--sheet", default="Lottery", help="the sheet holding the lottery's record (default Lottery)")
    for command in sub.choices.values():  # every command: its steps on stderr unless asked not to
        command.add_argument("--quiet", action="store_true", help="show no progress line on stderr (it is shown only "
                                                                  "when stderr is a terminal)")
    return parser


def _add_agreement(sub) -> None:
    agr = sub.add_parser("agreement", help="chance-corrected agreement of categorical ratings: Gwet's AC1/AC2, "
                                           "Cohen's/Conger's and Fleiss' kappa, Krippendorff's alpha ... with intervals")
    agr.add_argument("ratings", help="a ratings sheet (.xlsx/.xlsm/.ods: sheet Ratings, else the first) or a .csv: a "
                                     "header row naming the raters, one row per subject, its name in the first column")
    agr.add_argument("--weights", default="identity",
                     help="identity (default, unweighted), linear, quadratic, ordinal, radical, ratio, circular or "
                          "bipolar; numbers are weighted by value, text labels by their place in --categories")
    agr.add_argument("--categories", metavar="LIST",
                     help='the categories in order, "A,B,C" (unused ones count too), or with a value each for the '
                          'weights, "low=1,mid=2,high=5"; default: the values rated, sorted')
    agr.add_argument("--level", type=float, default=0.95, help="confidence level of the intervals (default 0.95)")
    agr.add_argument("--pairs", action="store_true", help="also every pair of raters (the coefficient quoted first)")
    agr.add_argument("--rater-sampling", action="store_true",
                     help="add the variance over raters to the standard errors (every rater rated every subject, 3 "
                          "raters or more): to generalise to other raters, not only other subjects")
    agr.add_argument("--sheet", help="the sheet holding the ratings (default Ratings, else the first sheet)")
    agr.add_argument("--no-subject-column", action="store_true",
                     help="the first column holds ratings too (no subject names)")
    agr.add_argument("-o", "--out", help="also write the table to an .xlsx (sheets Agreement, Agreement pairs), .csv "
                                         "or .json file (the input is never modified)")


def _add_calibrate(sub) -> None:
    cal = sub.add_parser("calibrate", help="calibrate the evaluations in a workbook")
    cal.add_argument("workbook", help="input .xlsx/.xlsm with an Evaluations sheet, or a .csv (or tab-delimited "
                                      ".txt/.tsv) export of it, or a review export (HotCRP, CMT, EasyChair, "
                                      "OpenReview, a grid; see xlcalib import); never modified")
    cal.add_argument("-o", "--out", help="output file (default <stem>_calibrated.<format>)")
    cal.add_argument("--sheet", default="Evaluations", help="sheet holding the evaluations table")
    cal.add_argument("--gauge", choices=["weighted", "simple"], default=None,
                     help="weighted: sum C'_a b_a = 0 (default); simple: sum b_a = 0")
    cal.add_argument("--per-component", action="store_true", help="fit each connected group of assessors separately")
    line = cal.add_mutually_exclusive_group()
    line.add_argument("--fund", type=int, metavar="K", help="funding line: K places (P(rank <= K) per object)")
    line.add_argument("--threshold", type=float, metavar="X", help="funding line: a calibrated score X")
    cal.add_argument("--lottery", nargs="?", const="informed", choices=["informed", "uniform-band"], default=None,
                     help="with --fund: a lottery fills the places. informed (the default): every object funded with "
                          "its chance, P(above the line), exactly K funded; uniform-band: the places left after the "
                          "objects above go to the band next to the line, each with the same chance. The draw is "
                          "recorded on a Lottery sheet anyone can re-run (xlcalib verify-draw)")
    cal.add_argument("--public-seed", metavar="TEXT",
                     help="the lottery's public seed: any text or number the panel published before the meeting "
                          "(default: the --seed of the draws); every random number of the draw is SHA-256 of it, "
                          "the names and the chances")
    cal.add_argument("--borderline", type=float, metavar="EPS",
                     help="the borderline cut-off: an object is borderline when P(above the line) lies between EPS "
                          "and 1 - EPS (default 0.05; 0.25 narrows the band to 25%%-75%%)")
    cal.add_argument("--model", choices=MODEL_CHOICES, default=None,
                     help="; ".join(f"{name}: {words}" for name, words in MODEL_WORDS.items())
                     + f" (default {DEFAULT_MODEL})")
    cal.add_argument("--interval-level", type=float, metavar="P", help="coverage of the intervals (default 0.95)")
    cal.add_argument("--seed", type=int, help="seed of the Monte Carlo draws and the lottery (default 0)")
    cal.add_argument("--format", choices=["xlsx", "csv", "json"], default="xlsx")
    cal.add_argument("--feedback", action="store_true",
                     help="add a printable Feedback sheet: a letter per assessor, one page each (no other assessor named)")
    cal.add_argument("--scale-use", choices=SCALE_USE_CHOICES, default=None,
                     help="a gain per assessor (some spread scores widely, others keep to the middle): off (default), "
                          "auto (when the test says assessors use the scale differently) or on")
    cal.add_argument("--group-column", metavar="NAME",
                     help="column giving each object's group (on the evaluations sheet or the Objects sheet; default "
                          "Group when there is one): adds the Groups and Group bias sheets")
    _add_export_options(cal)


def _add_import(sub) -> None:
    imp = sub.add_parser("import", help="read a review export (HotCRP, CMT, EasyChair, OpenReview, a grid) into the "
                                        "evaluations table, with the report of what was not imported")
    imp.add_argument("export", help="the export file (never modified)")
    imp.add_argument("-o", "--out", help="evaluations.csv or .xlsx (default <stem>_evaluations.xlsx); with --into, the "
                                         "filled workbook (default <workbook>_imported.xlsx)")
    imp.add_argument("--into", metavar="WORKBOOK", help="fill a copy of a panel workbook instead (Evaluations, "
                                                        "Assessors, Objects, the score scale and its Import sheet)")
    _add_export_options(imp)


def _add_export_options(parser) -> None:
    """What a user may say about a review export (xlcalib import, and xlcalib calibrate EXPORT)."""
    from .imports import SOURCES

    parser.add_argument("--from", dest="source", choices=SOURCES, help="the review system (default: detected)")
    parser.add_argument("--scale", help="the score scale (an export's wins over the inferred one): 1-5, -3..3, the "
                                        "form's points 1,3,6,8, letter grades 'A, AB, B, BC, C, D' (best first; also "
                                        "in an evaluations table) or 'A=6, AB=5, ...' (--scale=-3..3 for one below zero)")
    parser.add_argument("--round", help="import one round only (a round name, a revision sheet, pre/post); default: "
                                        "each review's latest score")
    parser.add_argument("--identity", metavar="CSV", help="identity map for per-paper reviewer ids: a CSV file with "
                                                          "two columns, anonymous id and person")
    parser.add_argument("--mapping", metavar="FILE", help="column roles saved by an earlier import: its .mapping.json, "
                                                          "or a workbook with an Import sheet")
    reading = parser.add_mutually_exclusive_group()
    reading.add_argument("--slots", dest="columns_are", action="store_const", const="review slots",
                         help="a grid's score columns are review slots (R1, R2 ... each row's reviews from the left, "
                              "each by a reviewer of that object alone), not people; default: detected")
    reading.add_argument("--people", dest="columns_are", action="store_const", const="people",
                         help="a grid's score columns are people (one assessor each); default: detected")


def _export_options(args, always: bool = False):
    """The export options given (None when none is, so a workbook stays a workbook)."""
    from .exercises import ExportOptions

    values = {"source": args.source, "scale": args.scale, "round": args.round, "identity_map": args.identity,
              "mapping": args.mapping, "columns_are": args.columns_are}
    if not always and all(v is None for v in values.values()):
        return None
    return ExportOptions(**values)


def _import(args) -> int:
    imported, written = import_file(args.export, args.out, _export_options(args, always=True), into=args.into)
    where = "the sheet Import report" if written[0].suffix.lower() != ".csv" else str(written[1])
    print(import_text(imported, where))
    for path in written:
        print(f"written to {path}")
    return 0


def _add_next_reads(sub) -> None:
    nxt = sub.add_parser("next-reads", help="suggest the extra reads that settle the funding decision best")
    nxt.add_argument("workbook", help="panel workbook (or .csv export of the evaluations; never modified)")
    nxt.add_argument("--reads", type=int, default=10, help="number of extra reads to suggest (default 10)")
    nline = nxt.add_mutually_exclusive_group()
    nline.add_argument("--fund", type=int, metavar="K", help="funding line: K places (default: the Settings sheet)")
    nline.add_argument("--threshold", type=float, metavar="X", help="funding line: a calibrated score X")
    nxt.add_argument("--max-load", type=int, metavar="N",
                     help="at most N reads per assessor, existing and pending reads included (replaces the Assignment "
                          "sheet's max loads)")
    nxt.add_argument("--loads", metavar="FILE.csv", help="max load per assessor: a CSV file with columns Assessor, "
                     "Max load (beats the Assignment sheet's and --max-load for the assessors it lists)")
    nxt.add_argument("--conflicts", metavar="FILE.csv", help="conflicts of interest never to suggest: a CSV file with "
                     "columns Assessor, Object (added to the Assignment sheet's)")
    nxt.add_argument("--subjects", metavar="FILE.csv", help="subjects of assessors and objects: a CSV file with "
                     "columns Name, Subjects (comma/semicolon separated); only pairs sharing a subject are suggested "
                     "(replaces the Assignment sheet's subjects or Suitability grid)")
    nxt.add_argument("--scale", metavar="MIN-MAX", help="the score scale, e.g. 1-6 (beats the Settings sheet's): scores "
                     "outside it are refused, scores at its ends read as 'this or beyond'")
    nxt.add_argument("--ignore-assignment", action="store_true",
                     help="do not apply the workbook's Assignment sheet (conflicts, max loads, subjects)")
    nxt.add_argument("--sheet", default="Evaluations", help="sheet holding the evaluations table")
    nxt.add_argument("-o", "--out", help="output workbook (default <stem>_next_reads.xlsx)")


def _add_template(sub) -> None:
    tpl = sub.add_parser("template", help="write a fresh exercise workbook")
    tpl.add_argument("kind", choices=KINDS)
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


def _template(args) -> int:
    size = _template_size(args)
    _check_template_size(size)
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


def _template_size(args) -> dict:
    """The size options that apply to the template kind, as the builder's keyword arguments."""
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
    return size


def _check_template_size(size: dict) -> None:
    """Sizes a template can hold and build quickly; a bad one is named by its option."""
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


def _templates(args) -> int:
    for path in build_all(args.out):
        print(f"wrote {path}")
    return 0


def _report(args) -> int:
    out = report_file(RUNNERS[args.kind], args.workbook, args.out)
    print(f"report written to {out}")
    return 0


def _agreement(args) -> int:
    from .exercises.agreement import agreement_file, agreement_text

    table, pairs, out = agreement_file(args.ratings, args.out, sheet=args.sheet, weights=args.weights,
                                       categories=args.categories, confidence=args.level, pairs=args.pairs,
                                       subject_column=not args.no_subject_column, rater_sampling=args.rater_sampling)
    print(agreement_text(table, pairs))
    if out is not None:
        print(f"results written to {out}")
    return 0


def _assign(args) -> int:
    result, out = assign_file(args.workbook, args.out, share=args.share, seed=args.seed)
    print("\n".join(design_verdict(result)))
    print(f"allocation written to {out}")
    return 0


def _next_reads(args) -> int:
    suggestions, out = next_reads_file(args.workbook, args.out, reads=args.reads, fund=args.fund,
                                       threshold=args.threshold, max_load=args.max_load, sheet=args.sheet,
                                       conflicts=args.conflicts, loads=args.loads, subjects=args.subjects,
                                       ignore_assignment=args.ignore_assignment, scale=args.scale)
    print(next_reads_text(suggestions))
    print(f"results written to {out}")
    return 0


def next_reads_text(suggestions) -> str:
    """The suggestions in plain words, one line each."""
    attrs = suggestions.attrs
    head = (f"Next reads for the funding line {attrs['line']}" if attrs.get("line") else
            "Next reads (no funding line: the reads that most reduce the values' uncertainty)")
    lines = ["Rules kept (never broken):"] + [f"  {line}" for line in attrs.get("rules", [])] + [head + ":"]
    for row in suggestions.itertuples(index=False):
        lines.append(f"  {row.order}. {row.reason}")
    if attrs.get("note"):
        lines.append(f"  Note: {attrs['note']}.")
    if attrs.get("advice"):
        lines.append(f"  {attrs['advice']}.")
    if len(suggestions) and attrs.get("se_basis"):
        lines.append(f"  Standard errors here are {attrs['se_basis']}.")
    if len(suggestions) == 0 and not attrs.get("note"):
        lines.append("  none")
    return "\n".join(lines)


def _calibrate(args) -> int:
    run, out = calibrate_file(args.workbook, args.out, sheet=args.sheet, gauge=args.gauge,
                              per_component=args.per_component, fmt=args.format, fund=args.fund,
                              threshold=args.threshold, lottery=args.lottery, model=args.model,
                              interval_level=args.interval_level, seed=args.seed, feedback=args.feedback,
                              scale_use=args.scale_use, group_column=args.group_column,
                              export=_export_options(args), borderline=args.borderline, public_seed=args.public_seed)
    print(run.summary())
    if run.decisions is not None:
        from .calibration import decision_summary

        line = decision_summary(run.decisions)
        if line:
            print(line)
    if run.input_checks:
        print(run.input_checks)
    print(f"results written to {out}")
    return 0


#: Exit code of verify-draw when the draw does not match its record (a finding, not an error of the input).
DOES_NOT_MATCH = 3


def _verify_draw(args) -> int:
    from .exercises import verify_draw_file

    matches, verdict = verify_draw_file(args.result, args.sheet)
    print(verdict)
    return 0 if matches else DOES_NOT_MATCH


def _demo(args) -> int:
    from .demo import run_demo

    d = run_demo(args.out)
    result, evaluations, true_biases = d["result"], d["evaluations"], d["true_biases"]
    ranked = result.biases["bias"].sort_values()
    print(f"xlcalib demo: {len(evaluations)} evaluations of {len(d['true_values'])} objects by {len(true_biases)} assessors")
    print(f"  exercise workbook : {d['exercise']}  (the panel_calibration template, filled in)")
    print(f"  result workbook   : {d['result_path']}")
    print("  " + result.summary().replace("\n", "\n  "))
    half = (result.biases["upper"] - result.biases["lower"]) / 2  # every ± is half the 95% interval
    for label, name in (("harshest assessor ", ranked.index[0]), ("most lenient      ", ranked.index[-1])):
        print(f"  {label}: {name} (bias {ranked[name]:+.2f} ± {half[name]:.2f}; true {true_biases[name]:+.2f})")
    print(f"  RMS error vs truth: plain averages {d['rms_raw']:.3f}, calibrated {d['rms_calibrated']:.3f} "
          f"({100 * (1 - d['rms_calibrated'] / d['rms_raw']):.0f}% closer to the truth)")
    print(f"  honest error bars : the standard errors shown (RMS {d['rms_se']:.3f}) match the actual error "
          f"of the calibrated values ({d['rms_calibrated']:.3f})")
    return 0


#: Each command's handler: reads its options, runs the job, prints; returns the exit code.
COMMANDS = {"demo": _demo, "calibrate": _calibrate, "next-reads": _next_reads, "template": _template,
            "templates": _templates, "assign": _assign, "report": _report, "agreement": _agreement,
            "import": _import, "verify-draw": _verify_draw}


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


#: packages of the `excel` extra (workbook files, macros, classic add-in); not needed by the core
EXCEL_EXTRA = ("openpyxl", "xlwings", "defusedxml", "et_xmlfile", "python_calamine", "xlsxwriter", "tqdm")


def _negative_numbers_attached(argv: list[str]) -> list[str]:
    """``--threshold -1e308`` as ``--threshold=-1e308``: argparse takes a word starting with '-' for an option
    unless it looks like a plain negative number, and no option of xlcalib looks like a number."""
    out: list[str] = []
    for word in argv:
        if out and out[-1].startswith("--") and "=" not in out[-1] and word.startswith("-") and _is_number(word):
            out[-1] = f"{out[-1]}={word}"
        else:
            out.append(word)
    return out


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


@contextlib.contextmanager
def _stop_on_sigterm():
    """SIGTERM raises :class:`~xlcalib.errors.Terminated` while a command runs (as Ctrl-C raises
    KeyboardInterrupt), so a half-written output's temporary file is removed; the previous handler comes back
    after.  Only the main thread can install a handler (elsewhere nothing changes)."""
    def terminate(signum, frame):
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, terminate)
    except (ValueError, AttributeError):  # not the main thread, or a platform without SIGTERM
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: list[str] | None = None) -> int:
    """Run one command; exit code 0 success, 2 bad input (one line per problem), 1 internal error or a missing
    excel extra, 130 interrupted (Ctrl-C), 143 terminated (SIGTERM)."""
    args = _parser().parse_args(_negative_numbers_attached(sys.argv[1:] if argv is None else list(argv)))
    shown = TerminalProgress(enabled=False if args.quiet else None)
    try:
        with _stop_on_sigterm(), listening(shown):
            return COMMANDS[args.command](args)
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
    except KeyboardInterrupt as exc:  # outputs are replaced whole or not at all, so one line is all there is to say
        how = "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted (Ctrl-C)"
        print(f"xlcalib: {how}; output files are replaced whole or not at all, none is left half-written",
              file=sys.stderr)
        return 143 if isinstance(exc, Terminated) else 130
    except Exception as exc:  # a bug: say so, with the traceback for the report
        if isinstance(exc, ModuleNotFoundError) and exc.name in EXCEL_EXTRA:
            # not a bug: the core installs without the workbook dependencies (for xlwings Lite)
            print(f"xlcalib: error: workbook files need the excel extra ({exc.name} is not installed): "
                  'pip install "xlcalib[excel]"', file=sys.stderr)
            return 1
        print("xlcalib: internal error (please report this with the traceback below)", file=sys.stderr)
        traceback.print_exc()
        return 1
    finally:
        shown.close()


if __name__ == "__main__":
    raise SystemExit(main())
