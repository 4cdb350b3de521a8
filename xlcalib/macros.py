"""Macro entry points for panel secretaries: one implementation over the workbook interface.

``calibrate_panel(book)``, ``reliability_report(book)``, ``ordinal_report(book)``
and ``ground_truth_report(book)`` read a template's input sheets, run the core,
and (re)write their result sheets with native charts.  ``book`` is an openpyxl
``Workbook`` (CLI ``xlcalib calibrate`` / ``xlcalib report``, tests) or an
xlwings ``Book`` (the *Run main* button in Excel); :func:`xlcalib.workbook.open_book`
wraps either in the same small interface (read a table, write a sheet, add a
chart), so the CLI and the button run exactly this code.

Re-running replaces only the macro's own result sheets; input sheets are never
touched.  Every result sheet starts with the run's settings and time, so a
printout is self-describing.
"""
from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from .calibration import (
    LEVEL_RELATIVE_HEADERS,
    LEVEL_SD_HEADERS,
    CalibrationResult,
    Levels,
    calibrate,
    default_levels,
    levels_table,
)
from .cells import is_blank, parse_choice, parse_flag, parse_number, parse_whole
from .errors import InputError
from .inputs import check_evaluations, checks_frame, read_panel, table_from_block
from .workbook import open_book

#: The calibration result sheets in reading order (how each looks: :mod:`xlcalib.presentation`).
#: The per-assessor sheet is "Biases": "Assessors" is the input list of the panel template.
RESULT_SHEETS = ("Ranking", "Summary", "Biases", "Checks", "Values", "Residuals", "Diagnostics")


@dataclass
class CalibrationSettings:
    """What the run used; written on every result sheet.

    ``levels``: ``None`` = the default relative levels (High/Medium/Low with
    ratio 1.75, noise scale estimated), or a :class:`~xlcalib.calibration.Levels`
    read from the Levels sheet.  The funding line is ``fund_top_k`` (places) or
    ``fund_threshold`` (a calibrated score); ``lottery`` fills the places left
    after the sure ones by a recorded draw among the borderline group.
    """

    gauge: str = "weighted"
    anomaly_threshold: float = 3.0
    per_component: bool = False
    levels: Levels | None = None
    sheet: str = "Evaluations"
    interval_level: float = 0.95
    model: str = "fixed"
    fund_top_k: int | None = None
    fund_threshold: float | None = None
    lottery: bool = False
    draws: int = 10_000
    seed: int = 0

    def describe(self) -> str:
        levels = (self.levels or default_levels()).describe()
        line = (f"funding line: top {self.fund_top_k}" if self.fund_top_k else
                f"funding line: calibrated score {self.fund_threshold:g}" if self.fund_threshold is not None else
                "no funding line")
        return (f"model={self.model}; gauge={self.gauge}; intervals {self.interval_level:.0%}; {line}"
                f"{' with lottery' if self.lottery else ''}; anomaly threshold={self.anomaly_threshold:g}; "
                f"per_component={self.per_component}; {levels}")

    def ranking_arguments(self) -> dict[str, Any]:
        """Keyword arguments for ``CalibrationResult.ranking`` (the funding line and its draws)."""
        return {"top_k": self.fund_top_k, "threshold": self.fund_threshold, "draws": self.draws, "seed": self.seed,
                "lottery": self.lottery and self.fund_top_k is not None}


# ----------------------------------------------------------------------------
# Settings sheets written by the template
# ----------------------------------------------------------------------------
def _preamble(title: str, settings: str, now) -> list[list[Any]]:
    from . import __version__

    stamp = (now or _dt.datetime.now()).replace(microsecond=0).isoformat(sep=" ")
    # one text per row, in column A: it reads across the empty cells beside it instead of being cut by them
    return [[f"xlcalib {title}"], [f"run {stamp}, xlcalib {__version__}"], [f"settings: {settings}"]]


def _check_own_sheets(backend, names) -> None:
    """Refuse to overwrite a sheet that has a result sheet's name but was not written by xlcalib (an input sheet).

    Result sheets start with "xlcalib <exercise>" in A1; an empty sheet of that name is fine to fill.
    """
    for name in names:
        actual = backend.find_sheet(name, required=False)
        if actual is None:
            continue
        block = backend.read_block(actual)
        cells = [c for row in block.rows for c in row if not is_blank(c)]
        first = block.rows[0][0] if block.rows and block.rows[0] else None
        ours = block.first_row == 1 and block.first_column == 1 and isinstance(first, str) and first.startswith("xlcalib ")
        if cells and not ours:
            raise InputError(f"sheet {actual} holds data that xlcalib did not write, and xlcalib writes its results to a "
                             f"sheet of that name: rename sheet {actual} (results never overwrite input sheets)",
                             {"sheet": actual})


def _read_settings(backend, defaults: CalibrationSettings) -> CalibrationSettings:
    """Settings and Levels sheets -> CalibrationSettings; every bad cell is named (sheet, row, column B)."""
    settings = replace(defaults)
    name = backend.find_sheet("Settings", required=False)
    if name:
        block = backend.read_block(name)
        line_cells = {}
        for offset, row in enumerate(block.rows):
            if len(row) < 2 or is_blank(row[0]):
                continue
            key = " ".join(str(row[0]).strip().lower().split())
            cell = f"sheet {name}, cell B{block.first_row + offset}"
            if key.startswith("gauge"):
                settings.gauge = parse_choice(row[1], f"gauge ({cell})", ("weighted", "simple"), settings.gauge)
            elif key.startswith("anomaly"):
                settings.anomaly_threshold = parse_number(row[1], cell + " (anomaly threshold)")
                if not settings.anomaly_threshold > 0:  # named here, not as the core's Python argument
                    raise InputError(f"{cell} (anomaly threshold) must be positive, not {settings.anomaly_threshold:g}")
            elif key.startswith("interval level"):
                level = parse_number(row[1], cell + " (interval level)", allow_blank=True)
                if not np.isnan(level):
                    if not 0.5 <= level < 1:
                        raise InputError(f"{cell} (interval level) must be at least 50% and below 100%, not {level:g}")
                    settings.interval_level = level
            elif key.startswith("model"):
                settings.model = parse_choice(row[1], f"model ({cell})", ("fixed", "shrinkage"), settings.model)
            elif key.startswith("funding line (top k)") or key.startswith("places funded"):
                places = parse_whole(row[1], f"funding line, top k ({cell})", None, low=1)
                if places is not None:
                    settings.fund_top_k, line_cells["top k"] = places, cell
            elif key.startswith("funding line (score)"):
                score = parse_number(row[1], cell + " (funding line score)", allow_blank=True)
                if not np.isnan(score):
                    settings.fund_threshold, line_cells["score"] = score, cell
            elif key.startswith("lottery"):
                settings.lottery = parse_flag(row[1], f"lottery ({cell})", settings.lottery)
            elif key.startswith("monte carlo draws") or key == "draws":
                settings.draws = parse_whole(row[1], f"draws ({cell})", settings.draws, low=100)
            elif key == "seed":
                settings.seed = parse_whole(row[1], f"seed ({cell})", settings.seed, low=0)
        if len(line_cells) == 2:
            raise InputError(f"two funding lines are set ({line_cells['top k']} places and {line_cells['score']} a "
                             "score): keep one and clear the other")
    name = backend.find_sheet("Levels", required=False)
    if name:
        block = backend.read_block(name)
        rows = block.rows
        header = rows[0] if rows else []
        second = " ".join(str(header[1]).strip().lower().split()) if len(header) > 1 and not is_blank(header[1]) else ""
        where = f"sheet {name}, cell B{block.first_row}"
        if second in LEVEL_SD_HEADERS:
            kind, what = "sd", "SD"
        elif second in LEVEL_RELATIVE_HEADERS:
            kind, what = "relative", "relative confidence"
        else:
            raise InputError(f"{where} heads the numbers column '{header[1] if len(header) > 1 else ''}': write "
                             "'Relative confidence' (how much a level counts, relative to the others) or 'SD' "
                             "(standard deviation in score units)")
        table = {}
        for offset, row in enumerate(rows[1:], start=1):
            if len(row) < 2 or is_blank(row[0]):
                continue
            table[str(row[0]).strip()] = parse_number(
                row[1], f"sheet {name}, row {block.first_row + offset}, column B ({what})")
        if table:
            settings.levels = levels_table(Levels(table, kind))
    return settings


def _level_names(settings: CalibrationSettings) -> list[str]:
    """The level names a Level column may use in this run (the Levels sheet's, else the defaults)."""
    return [str(name) for name in (settings.levels or default_levels()).values]


def run_calibration(block, settings: CalibrationSettings, panel=None):
    """Cells of an evaluations block (or an already-read :class:`~xlcalib.inputs.PanelInput`) -> (result, frame).

    Every input problem is raised at once (:class:`~xlcalib.errors.InputProblems`);
    pending rows (allocated, no score yet) are left out and listed with the
    warnings in ``frame.attrs["problems"]``; core errors are re-pointed at sheet rows.
    """
    sheet = (getattr(block, "sheet", "") if block is not None else "") or settings.sheet
    if panel is None:
        panel = check_evaluations(table_from_block(block, sheet), levels=_level_names(settings))
    panel.raise_errors()
    frame, kind, sheet_rows = panel.frame, panel.kind, panel.sheet_rows
    sheet = panel.sheet
    try:
        result = calibrate(frame, levels=settings.levels if kind == "level" else None, gauge=settings.gauge,
                           per_component=settings.per_component, anomaly_threshold=settings.anomaly_threshold,
                           interval_level=settings.interval_level, model=settings.model)
    except InputError as exc:
        if isinstance(exc.where.get("row"), (int, np.integer)):
            sheet_row = int(sheet_rows[exc.where["row"]])
            message = re.sub(r"\brows? ([\d, ]+) of the evaluations",
                             lambda m: _sheet_rows_text(m.group(1), sheet_rows, sheet), exc.message)
            raise InputError(message, {**exc.where, "sheet_row": sheet_row, "sheet": sheet}) from None
        if not exc.message.startswith("sheet "):
            raise InputError(f"sheet {sheet}: {exc.message}", {**exc.where, "sheet": sheet}) from None
        raise
    frame.attrs["hidden_rows"] = list(panel.hidden_rows)  # reported on Diagnostics
    frame.attrs["problems"] = list(panel.problems)  # warnings (pending rows ...) for the Checks sheet
    frame.attrs["n_pending"] = len(panel.pending)
    return result, frame


def _sheet_rows_text(numbers: str, sheet_rows, sheet: str) -> str:
    """'3, 5' (1-based positions in the evaluations) -> 'sheet S, rows 12, 14' (sheet rows)."""
    rows = [int(sheet_rows[int(n) - 1]) for n in re.findall(r"\d+", numbers)]
    return f"sheet {sheet}, row{'s' if len(rows) > 1 else ''} {', '.join(map(str, rows))}"


def result_frames(result: CalibrationResult, frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    frames = result.to_frames()
    values = frames["Values"]
    values.insert(1, "raw_mean", values.pop("raw_mean"))  # next to value: one chart block
    frames["Values"] = values
    return frames


def ranking_frame(ranking: pd.DataFrame) -> pd.DataFrame:
    """The ranking table as a sheet: object first, the run's line and draws kept in ``attrs``."""
    out = ranking.reset_index()
    out.attrs.update(ranking.attrs)
    return out


def next_reads_frame(result: CalibrationResult, settings: CalibrationSettings, k: int) -> pd.DataFrame:
    """The "Next reads" sheet: the k extra reads that settle the run's funding line best (none: largest SEs)."""
    frame = result.next_reads(k, top_k=settings.fund_top_k, threshold=settings.fund_threshold)
    return frame


def warnings_for(result: CalibrationResult, hidden_rows=(), sheet: str = "Evaluations") -> list[str]:
    """Plain-language warnings for the Diagnostics sheet."""
    out = []
    if len(hidden_rows):
        shown = ", ".join(map(str, hidden_rows[:20])) + (" ..." if len(hidden_rows) > 20 else "")
        out.append(f"{len(hidden_rows)} evaluation(s) sit in hidden rows of sheet {sheet} (rows {shown}) and were "
                   "included: hiding a row does not exclude it; delete the row to leave an evaluation out.")
    s = result.stats
    if s["n_components"] > 1:
        out.append(f"The panel splits into {s['n_components']} groups that share no objects: values of different groups "
                   "are not comparable.")
    C_o = result.values["total_confidence"]
    low = C_o < 0.25 * C_o.median()
    if low.any():
        out.append(f"{int(low.sum())} object(s) have under a quarter of the median total confidence: "
                   + ", ".join(map(str, C_o.index[low][:10])) + (" ..." if low.sum() > 10 else ""))
    mu2 = s["mu2"] if not isinstance(s["mu2"], list) else min(s["mu2"])
    if np.isfinite(mu2) and mu2 < 0.1:
        out.append(f"mu2 = {mu2:.3g} is small: assessors overlap little, so biases are poorly determined.")
    n_anom = int(result.residuals["anomalous"].sum())
    if n_anom:
        out.append(f"{n_anom} evaluation(s) are anomalous (see Residuals, highlighted).")
    return out


def compute_calibration(book, settings: CalibrationSettings | None = None, *, before_fit=None, **overrides):
    """Read settings and evaluations from *book*; return (result, frames, settings) without writing.

    ``overrides`` (e.g. ``gauge="simple"`` from the command line) beat the book's Settings sheet.
    ``before_fit(panel)`` runs on the checked evaluations before the fit (e.g. to refuse a panel whose
    result sheets cannot hold it, before minutes of work).
    """
    backend = open_book(book)
    settings = _read_settings(backend, settings or CalibrationSettings())
    for key, value in overrides.items():
        setattr(settings, key, value)
    panel = read_panel(backend, settings.sheet, levels=_level_names(settings))
    if before_fit is not None:
        before_fit(panel)
    result, frame = run_calibration(None, settings, panel)
    frames = result_frames(result, frame)
    if result.stats["n_components"] == 1:
        ranking = result.ranking(**settings.ranking_arguments())
        result.decisions = ranking
        frames = {"Ranking": ranking_frame(ranking), **frames}
    frames["Checks"] = checks_frame(panel.problems)  # every warning with its cell (rendered as the Checks sheet)
    warn = warnings_for(result, frame.attrs.get("hidden_rows", []), settings.sheet)
    if len(panel.pending):
        warn.insert(0, f"{len(panel.pending)} evaluation(s) are allocated but not scored yet (pending): left out of "
                       "this run; see Checks.")
    if warn:
        frames["Diagnostics"] = pd.concat(
            [frames["Diagnostics"], pd.DataFrame({"statistic": ["warning"] * len(warn), "value": warn,
                                                  "meaning": [""] * len(warn)})], ignore_index=True)
    return result, frames, settings


def write_calibration(book, result: CalibrationResult, frames: dict[str, pd.DataFrame],
                      settings: CalibrationSettings, *, now: _dt.datetime | None = None,
                      feedback: bool = False) -> dict[str, int]:
    """(Re)write the result sheets and charts into *book*; input sheets are left alone. Returns header rows.

    Sheets (:data:`RESULT_SHEETS`, plus a printable per-assessor Feedback sheet with ``feedback``) and how
    they look come from :func:`xlcalib.presentation.calibration_sheets`.
    """
    from .presentation import calibration_sheets

    backend = open_book(book)
    preamble = _preamble("calibration", settings.describe(), now)
    specs = calibration_sheets(result, frames, settings, None, preamble, feedback=feedback)
    _check_own_sheets(backend, [spec.name for spec in specs])
    tops = {spec.name: backend.write_sheet(spec) for spec in specs}
    backend.activate(specs[0].name)  # the workbook opens on the Ranking
    return tops


def calibrate_panel(book, settings: CalibrationSettings | None = None, *, now: _dt.datetime | None = None):
    """Run the calibration exercise in *book* (openpyxl Workbook or xlwings Book); returns the result."""
    result, frames, settings = compute_calibration(book, settings)
    write_calibration(book, result, frames, settings, now=now)
    return result


def main():  # pragma: no cover - called by the xlwings "Run main" button via the template's .py
    import xlwings as xw

    run_from_excel("calibrate_panel", xw.Book.caller())


def run_from_excel(entry: str, book) -> bool:
    """The *Run main* button: run one exercise on *book*; a problem with the input reaches the person at
    Excel as a message box and as a line on the Checks sheet, never as a Python traceback.

    ``entry`` is the macro's name (``calibrate_panel``, ``reliability_report``, ``ordinal_report``,
    ``ground_truth_report``).  Returns True when the run wrote its results.  Internal errors (bugs) are
    announced the same way and then raised, so the traceback reaches the log for a bug report.
    """
    entries = {"calibrate_panel": calibrate_panel, "reliability_report": reliability_report,
               "ordinal_report": ordinal_report, "ground_truth_report": ground_truth_report}
    try:
        entries[entry](book)
        return True
    except InputError as exc:
        _tell_excel(book, exc.message, exc.where, "Please fix the input", getattr(exc, "problems", None))
        return False
    except Exception as exc:
        _tell_excel(book, f"xlcalib stopped with an internal error ({type(exc).__name__}: {exc}); please report it "
                          "with the Python log", {}, "xlcalib internal error")
        raise


def _tell_excel(book, message: str, where: dict, title: str, problems=None) -> None:
    """A message box where the platform has one (``app.alert``), and the message on the Checks sheet
    (every problem on its own line when the error carries them all)."""
    if problems:
        frame = pd.DataFrame({"severity": [p.severity for p in problems], "sheet": [p.sheet for p in problems],
                              "cell": [p.cell for p in problems], "problem": [p.message for p in problems]})
        _write_checks(book, frame)
        _alert(book, message, title)
        return
    named = re.search(r"\bsheet ([^,:;()]+?)(?:,|:| row| cell|$)", message)
    sheet = str(where.get("sheet") or (named.group(1).strip() if named else ""))
    at = re.search(r"\b(cell [A-Z]{1,3}\d+|rows? [\d, ]+\d)", message)
    cell = where.get("cell") or (f"row {where['sheet_row']}" if where.get("sheet_row") else (at.group(1) if at else ""))
    frame = pd.DataFrame({"severity": ["error"], "sheet": [sheet], "cell": [str(cell)], "problem": [message]})
    _write_checks(book, frame)
    _alert(book, message, title)


def _write_checks(book, frame: pd.DataFrame) -> None:
    from .presentation import checks_sheet

    backend = open_book(book)
    try:
        _check_own_sheets(backend, ["Checks"])
        backend.write_sheet(checks_sheet(frame, _preamble("checks", "the run stopped: nothing else was written", None)))
    except InputError:  # a sheet of the user's called Checks: leave it, the message box still speaks
        pass


def _alert(book, message: str, title: str) -> None:
    try:
        book.app.alert(message, title=f"xlcalib: {title}", buttons="ok", mode="critical")
    except Exception:  # no message boxes here (xlwings Server / Lite / tests): the Checks sheet carries it
        pass


# ----------------------------------------------------------------------------
# The other exercises: reliability, ordinal agreement, uncertain ground truth
# ----------------------------------------------------------------------------
def _grid(backend, sheet: str, first_data_column: int = 2):
    """A sheet whose first row names the columns and first column names the items -> (item names, values block)."""
    block = backend.read_block(sheet)
    rows, first_row = [list(r) for r in block.rows], block.first_row
    while rows and all(is_blank(c) for c in rows[-1]):
        rows.pop()
    if len(rows) < 2:
        raise InputError(f"sheet {sheet} has no data rows")
    body = rows[1:]
    return [r[0] for r in body], [r[first_data_column - 1:] for r in body], first_row


def _ratings_matrix(backend, sheet: str) -> np.ndarray:
    from .cells import number_grid

    names, block, first_row = _grid(backend, sheet)
    keep = [i for i, row in enumerate(block) if not all(is_blank(c) for c in row)]
    if not keep:
        raise InputError(f"sheet {sheet} has no ratings")
    try:
        return number_grid([block[i] for i in keep], sheet)
    except InputError as exc:  # re-point "row r, column c of the Ratings range" at the sheet's cell
        from .cells import column_letter

        def cell(m):
            r, c = int(m.group(1)), int(m.group(2))
            return f"sheet {sheet}, cell {column_letter(c + 1)}{first_row + 1 + keep[r - 1]}"

        raise InputError(re.sub(r"row (\d+), column (\d+) of the \S+ range", cell, exc.message), exc.where) from None


def reliability_report(book, *, now=None, n_boot: int = 1000, seed: int = 0) -> dict[str, pd.DataFrame]:
    """Ratings (+ optional Replication2) -> sheets ICC, kRR, kRR curve (with a chart)."""
    from . import reliability as rel

    backend = open_book(book)
    x = _ratings_matrix(backend, backend.find_sheet("Ratings"))
    rep = None
    if backend.find_sheet("Replication2", required=False):
        try:
            rep = _ratings_matrix(backend, backend.find_sheet("Replication2"))
        except InputError as exc:
            if "has no ratings" not in exc.message and "no data rows" not in exc.message:
                raise
    from .presentation import prophecy_k_max, reliability_sheets

    table = rel.icc_table(x)
    boot = rel.krr_bootstrap(x, n_boot=n_boot, seed=seed)
    curve_note = ""
    if rep is not None and rep.shape[0] != x.shape[0]:
        curve_note = f"Replication2 has {rep.shape[0]} items, Ratings {x.shape[0]}: empirical curve left out"
        rep = None
    if rep is not None and (np.isnan(x).any() or np.isnan(rep).any()):
        curve_note = "the empirical curve needs complete replications (a rating is missing): left out"
        rep = None
    observed_k = int((~np.isnan(x)).sum(axis=1).max())
    curve = rel.krr_curve(x, replication=rep, k_max=prophecy_k_max(float(table.loc["ICC1", "ICC"]), observed_k))
    pre = _preamble("reliability", f"bootstrap replicates {n_boot}, seed {seed}, CI 95%", now)
    specs = reliability_sheets(x, table, boot, rel.krippendorff_alpha(x, "interval"), curve, curve_note, pre)
    _check_own_sheets(backend, [spec.name for spec in specs])
    for spec in specs:
        backend.write_sheet(spec)
    return {spec.name: spec.frame for spec in specs}


def ordinal_report(book, *, now=None) -> dict[str, pd.DataFrame]:
    """Categories + Ratings (Object, Rater 1, Rater 2) -> sheets Svensson, MeanRanks, ROC (with a chart)."""
    from . import ordinal

    backend = open_book(book)
    cats_rows = backend.read_block("Categories").rows
    categories = [str(r[0]).strip() for r in cats_rows[1:] if r and not is_blank(r[0])]
    _, block, first_row = _grid(backend, "Ratings")
    r1 = [None if is_blank(r[0]) else str(r[0]).strip() for r in block]
    r2 = [None if len(r) < 2 or is_blank(r[1]) else str(r[1]).strip() for r in block]
    try:
        result = ordinal.svensson(r1, r2, categories=categories or None)
    except InputError as exc:  # "rater 1, row 3" counts data rows: name the sheet row the secretary sees
        raise InputError(re.sub(r"(rater [12]), row (\d+)", lambda m: f"sheet Ratings, row {first_row + int(m.group(2))} "
                                f"({m.group(1)})", exc.message), exc.where) from None
    frames = {"Svensson": result.to_frame(),
              "MeanRanks": ordinal.mean_rank_table(r1, r2, categories or None),
              "ROC": ordinal.roc_points(r1, r2, categories or None)}
    pre = _preamble("ordinal agreement", f"categories in order: {', '.join(map(str, result.categories))}; "
                                         f"pairs used {result.n}, dropped (a rating missing) {result.n_dropped}", now)
    from .presentation import ordinal_sheets

    header = backend.read_block("Ratings").rows[0]
    names = tuple(str(header[i]).strip() if len(header) > i and not is_blank(header[i]) else f"rater {i}" for i in (1, 2))
    specs = ordinal_sheets(frames, names, pre)
    _check_own_sheets(backend, [spec.name for spec in specs])
    for spec in specs:
        backend.write_sheet(spec)
    return frames


def _setting(value, label: str, n_classes: int, where: str):
    """One ground-truth Settings value, checked like the function argument it feeds; errors name the cell."""
    from .cells import real_argument, seed_argument, whole_argument

    checks = {"reliability": lambda v: real_argument(v, label, low=0, high=1e12, low_open=True),
              "samples": lambda v: whole_argument(v, label),
              "seed": lambda v: seed_argument(v, label),
              "top k": lambda v: whole_argument(v, label, high=max(n_classes, 1), why=f"there are {n_classes} classes")}
    try:
        return checks[label](value)
    except InputError as exc:
        raise InputError(exc.message.replace(f"the {label} argument", f"{where} ({label})"), {"sheet": "Settings"}) from None


def ground_truth_report(book, *, now=None) -> dict[str, pd.DataFrame]:
    """Classes + Annotations (+ Predictions, Settings) -> sheets Certainty and UA metrics."""
    from . import ground_truth as gt

    backend = open_book(book)
    cls_rows = backend.read_block("Classes").rows
    classes = [str(r[0]).strip() for r in cls_rows[1:] if r and not is_blank(r[0])]
    settings = {"reliability": 3.0, "samples": 1000, "seed": 0, "top k": 3}
    setting = gt.XLCALIB  # the "Setting" row: xlcalib's conventions or the reference code's (gt.settings)
    if backend.find_sheet("Settings", required=False):
        block = backend.read_block("Settings")
        rows, first_row = block.rows, block.first_row
        for offset, row in enumerate(rows[1:], start=1):
            key = str(row[0]).strip().lower() if len(row) >= 2 and not is_blank(row[0]) else None
            if key == "setting" and not is_blank(row[1]):
                from .cells import column_letter

                cell = f"{column_letter(block.first_column + 1)}{first_row + offset}"
                setting = gt.resolve_setting(row[1], f"sheet Settings, cell {cell} (Setting)")
            elif key in settings:
                from .cells import column_letter

                cell = f"{column_letter(block.first_column + 1)}{first_row + offset}"
                settings[key] = _setting(row[1], key, len(classes), f"sheet Settings, cell {cell}")
    items, block, first_row = _grid(backend, "Annotations")
    cases, kept = [], []
    for i, row in enumerate(block):
        case = [gt.parse_ranking(str(cell), classes, where=f"sheet Annotations, row {first_row + 1 + i}")
                for cell in row if not is_blank(cell)]
        if case:
            cases.append(case)
            kept.append(i)
    if not cases:
        raise InputError("sheet Annotations has no annotations")
    gamma, M, seed, k = settings["reliability"], settings["samples"], settings["seed"], settings["top k"]
    plaus = gt.irn(cases, len(classes), setting=setting)
    cert, labels = gt.prirn_certainty(cases, len(classes), gamma, M, seed, setting=setting)
    certainty = pd.DataFrame({"item": [items[i] for i in kept], "annotators": [len(c) for c in cases],
                              "IRN top-1": [classes[j] for j in plaus.argmax(axis=1)],
                              "certainty": cert, "most certain label": [classes[j] for j in labels]})
    frames = {"Certainty": certainty}
    summary_rows = [("items", len(cases)), ("mean annotation certainty", float(cert.mean())),
                    ("share of items with certainty < 0.5", float(np.mean(cert < 0.5))),
                    ("share of items with certainty < 0.9", float(np.mean(cert < 0.9)))]
    if backend.find_sheet("Predictions", required=False):
        _, pblock, prow = _grid(backend, "Predictions")
        lookup = {c.lower(): j for j, c in enumerate(classes)}
        preds = []
        for i in kept:
            row = [c for c in (pblock[i] if i < len(pblock) else []) if not is_blank(c)]
            unknown = [c for c in row if str(c).strip().lower() not in lookup]
            if unknown:
                raise InputError(f"sheet Predictions, row {prow + 1 + i}: unknown class '{unknown[0]}'")
            preds.append([lookup[str(c).strip().lower()] for c in row])
        if all(len(p) >= k for p in preds):
            draws = gt.sample_dirichlet(gt.prirn_concentration(cases, len(classes), gamma, setting=setting), M, seed)
            top = np.array([p[:k] for p in preds])
            for kk in sorted({1, k}):
                ua = gt.ua_topk_accuracy(draws, top[:, :kk], kk)
                summary_rows += [(f"UA top-{kk} accuracy", ua.value), ("  SD over plausibility samples", ua.sd_over_samples),
                                 (f"top-{kk} accuracy against the IRN labels", gt.point_topk_accuracy(plaus, top[:, :kk], kk))]
        else:
            summary_rows.append(("note", f"UA metrics need {k} predictions on every annotated item"))
    frames["UA metrics"] = pd.DataFrame(summary_rows, columns=["statistic", "value"])
    pre = _preamble("uncertain ground truth", f"PrIRN, reliability {gamma:g}, samples {M}, seed {seed}, top k {k}, "
                    f"setting {setting.name}", now)
    from .presentation import ground_truth_sheets

    specs = ground_truth_sheets(frames, pre)
    _check_own_sheets(backend, [spec.name for spec in specs])
    for spec in specs:
        backend.write_sheet(spec)
    return frames


REPORTS = {"calibration": calibrate_panel, "reliability": reliability_report, "ordinal": ordinal_report,
           "ground_truth": ground_truth_report}
