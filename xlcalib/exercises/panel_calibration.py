"""The panel calibration exercise on a workbook: read the Settings, Levels and Evaluations sheets, calibrate,
and (re)write the result sheets with native charts.

``book`` is an openpyxl ``Workbook`` (the command line, tests), a read-only file reader, or an xlwings
``Book`` (the *Run main* button in Excel); :func:`xlcalib.workbook.open_book` wraps each in the same small
interface (read a table, write a sheet, add a chart), so the command line and the button run this same code.
The input sheets are read and checked by :mod:`xlcalib.inputs` (settings, levels, evaluations, groups);
this runner calls the core with them and writes.  Re-running replaces only the result sheets; input sheets
are never touched.
"""
from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..calibration import NEXT_READS_COLUMNS, CalibrationResult, RaschResult, calibrate, default_levels
from ..calibration.behaviour.verdict import linkage_sentence
from ..calibration.decide.read_rules import known_to_panel
from ..errors import InputError
from ..inputs import (
    CalibrationSettings,
    check_evaluations,
    check_line_applies,
    checks_frame,
    level_names,
    read_calibration_inputs,
    read_groups,
    read_titles,
    table_from_block,
)
from ..progress import step
from ..workbook import open_book
from .common import is_own_sheet, run_preamble, write_sheets

#: The calibration result sheets in reading order, each chart on a page of its own after the table it draws (how
#: each looks: :mod:`xlcalib.presentation`); a Run main adds "Next reads".
#: The per-assessor sheet is "Biases": "Assessors" is the input list of the panel template.
RESULT_SHEETS = ("Ranking", "Ranking chart", "Summary", "Biases", "Biases chart", "Checks", "Values", "Values chart",
                 "Residuals", "Diagnostics", "Fit", "Unexpected")
#: The ordinal model's result sheets (how each looks: :mod:`xlcalib.presentation.rasch`); "Thresholds" with
#: thresholds per assessor.
RASCH_SHEETS = ("Ranking", "Ranking chart", "Summary", "Measures", "Severities", "Categories", "Thresholds",
                  "Wright map", "Category curves", "Checks", "Residuals", "Unexpected", "Diagnostics")


@dataclass(frozen=True)
class PanelRun:
    """One run of the panel calibration: the result :func:`~xlcalib.calibration.calibrate` made (never changed
    after) and what the run added to it -- the ranking it decided on (its funding line, draws and seed: the
    Ranking sheet and the command line show this one), each object's group as the run read it (the group
    tables), and the input-check lines the command line prints.  Reads like a result for the command line
    (``summary()``, ``decisions``, ``input_checks``), as :class:`~xlcalib.exercises.ExportRun` does."""

    result: CalibrationResult
    decisions: pd.DataFrame | None = None
    groups: pd.Series | None = None
    input_checks: str = ""
    #: each object's title as the run read it (the evaluations' Title column, or the Objects sheet's), on the Ranking
    titles: pd.Series | None = None

    def summary(self) -> str:
        return self.result.summary()


# ----------------------------------------------------------------------------
# The run: checked evaluations -> result and result frames
# ----------------------------------------------------------------------------
def run_calibration(block, settings: CalibrationSettings, panel=None):
    """Cells of an evaluations block (or an already-read :class:`~xlcalib.inputs.PanelInput`) -> (result, frame).

    Every input problem is raised at once (:class:`~xlcalib.errors.InputProblems`);
    pending rows (allocated, no score yet) are left out and listed with the
    warnings in ``frame.attrs["problems"]``; core errors are re-pointed at sheet rows.
    """
    sheet = (getattr(block, "sheet", "") if block is not None else "") or settings.sheet
    if panel is None:
        panel = check_evaluations(table_from_block(block, sheet), levels=level_names(settings))
    panel.raise_errors()
    frame, kind, sheet_rows = panel.frame, panel.kind, panel.sheet_rows
    sheet = panel.sheet
    try:
        result = calibrate(frame, levels=settings.levels if kind == "level" else None, gauge=settings.gauge,
                           per_component=settings.per_component, anomaly_threshold=settings.anomaly_threshold,
                           interval_level=settings.interval_level, model=settings.model, scale_use=settings.scale_use,
                           scale=panel.settings.get("scale"))
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


def result_frames(result: CalibrationResult | RaschResult, frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    frames = result.to_frames()
    if isinstance(result, RaschResult):  # Measures, Severities, Categories, Thresholds, Residuals, Diagnostics
        return frames
    values = frames["Values"]
    values.insert(1, "raw_mean", values.pop("raw_mean"))  # next to value: one chart block
    frames["Values"] = values
    return frames


def ranking_frame(ranking: pd.DataFrame, titles: pd.Series | None = None) -> pd.DataFrame:
    """The ranking table as a sheet: object first (then its title, when the run read titles), the run's line and
    draws kept in ``attrs``."""
    out = ranking.reset_index()
    if titles is not None:
        out.insert(1, "title", out["object"].map(titles).to_numpy(dtype=object))
    out.attrs.update(ranking.attrs)
    return out


def next_reads_frame(result: CalibrationResult, settings: CalibrationSettings, k: int, max_load=None, *,
                     conflicts=None, suitability=None, pending=None, sources=()) -> pd.DataFrame:
    """The "Next reads" sheet: the k extra reads that settle the run's funding line best (none: largest SEs).

    The panel's rules are hard constraints (conflicts, max loads, subjects or a suitability grid, pending
    reads); rules naming someone with no scored read are left out and said so.  ``attrs["rules"]`` holds
    where the rules came from (*sources*), what was left out, and each rule with the pairs it excluded.
    The columns are the core's (:data:`xlcalib.calibration.NEXT_READS_COLUMNS`): the sheet shows the
    suggestions as computed.
    """
    conflicts, max_load, suitability, left_out = known_to_panel(
        result.biases.index, result.values.index, conflicts=conflicts, max_load=max_load, suitability=suitability)
    levels = (settings.levels or default_levels()) if result.stats.get("uncertainty_kind") == "level" else None
    table = result.next_reads(k, top_k=settings.fund_top_k, threshold=settings.fund_threshold, max_load=max_load,
                              conflicts=conflicts, suitability=suitability, pending=pending, levels=levels)
    table.attrs["rules"] = [*sources, *left_out, *table.attrs.get("rules", [])]
    return table


def warnings_for(result: CalibrationResult | RaschResult, hidden_rows=(), sheet: str = "Evaluations") -> list[str]:
    """Plain-language warnings for the Diagnostics sheet."""
    out = []
    if len(hidden_rows):
        shown = ", ".join(map(str, hidden_rows[:20])) + (" ..." if len(hidden_rows) > 20 else "")
        out.append(f"{len(hidden_rows)} evaluation(s) sit in hidden rows of sheet {sheet} (rows {shown}) and were "
                   "included: hiding a row does not exclude it; delete the row to leave an evaluation out.")
    if isinstance(result, RaschResult):
        return out + _rasch_warnings(result)
    s = result.stats
    if s["n_components"] > 1:
        out.append(linkage_sentence(result))
    C_o = result.values["total_confidence"]
    low = C_o < 0.25 * C_o.median()
    if low.any():
        out.append(f"{int(low.sum())} object(s) have under a quarter of the median total confidence: "
                   + ", ".join(map(str, C_o.index[low][:10])) + (" ..." if low.sum() > 10 else ""))
    mu2 = s["mu2"] if not isinstance(s["mu2"], list) else min(s["mu2"])
    if np.isfinite(mu2) and mu2 < 0.1:
        out.append(f"Assessor overlap {mu2:.2f} (technical name mu2) is small: assessors share few objects, so their "
                   "biases are poorly determined; add shared reads (Next reads suggests which).")
    n_anom = int(result.residuals["anomalous"].sum())
    if n_anom:
        out.append(f"{n_anom} evaluation(s) are anomalous (see Residuals, highlighted).")
    return out


def _rasch_warnings(result: RaschResult) -> list[str]:
    """The ordinal model's warnings: groups that share no object, reads that stand out, assessors at one end."""
    out = []
    if result.stats.get("groups"):
        out.append(result.stats["groups"][0].upper() + result.stats["groups"][1:] + ".")
    n_flag = int(result.residuals["unexpected"].sum())
    if n_flag:
        out.append(f"{n_flag} read(s) stand out (see Unexpected, highlighted on Residuals).")
    extreme = result.severities.index[result.severities["extreme"].astype(str) != ""]
    if len(extreme):
        out.append(f"{len(extreme)} assessor(s) gave every read in one end category ({', '.join(map(str, extreme[:8]))}"
                   f"{' ...' if len(extreme) > 8 else ''}): their severity is only bounded, with a wide ±.")
    return out


def _with_warnings(diagnostics: pd.DataFrame, warnings: list[str]) -> pd.DataFrame:
    """The Diagnostics table with one "warning" row per warning below the statistics."""
    rows = pd.DataFrame({"statistic": ["warning"] * len(warnings), "value": warnings, "meaning": [""] * len(warnings)})
    return pd.concat([diagnostics, rows], ignore_index=True)


def compute_calibration(book, settings: CalibrationSettings | None = None, *, before_fit=None, origins=None,
                        **overrides):
    """Read settings and evaluations from *book*; return (:class:`PanelRun`, frames, settings) without writing.

    ``overrides`` (e.g. ``gauge="simple"`` from the command line) beat the book's Settings sheet; ``origins``
    names where each came from (``{"fund_top_k": "--fund"}``, :data:`~xlcalib.inputs.CLI_OPTIONS`) for the
    messages.  ``before_fit(panel, settings)`` runs on the checked evaluations before the fit (e.g. to refuse a
    panel whose result sheets cannot hold it, before minutes of work).
    """
    backend = open_book(book)
    with step("reading and checking the evaluations"):
        settings, panel = read_calibration_inputs(backend, settings or CalibrationSettings(), overrides, origins)
    if before_fit is not None:
        before_fit(panel, settings)
    with step(f"calibrating {len(panel.frame):,} evaluations"):
        result, frame = run_calibration(None, settings, panel)
    check_line_applies(settings, result)
    groups = read_groups(backend, panel, settings.group_column, settings.origins.get("group_column"))
    titles = read_titles(backend, panel)
    frames = result_frames(result, frame)
    ranking = None
    if result.one_scale:
        with step("ranking"):
            ranking = result.ranking(**settings.ranking_arguments())  # the ranking the run decides on, made once
        frames = {"Ranking": ranking_frame(ranking, titles), **frames}
    frames["Checks"] = checks_frame(panel.problems)  # every warning with its cell (rendered as the Checks sheet)
    warn = warnings_for(result, frame.attrs.get("hidden_rows", []), settings.sheet)
    if len(panel.pending):
        warn.insert(0, f"{len(panel.pending)} evaluation(s) are allocated but not scored yet (pending): left out of "
                       "this run; see Checks.")
    if warn:
        frames["Diagnostics"] = _with_warnings(frames["Diagnostics"], warn)
    return PanelRun(result, ranking, groups, titles=titles), frames, settings


def settings_words(settings: CalibrationSettings, result: CalibrationResult) -> str:
    """The run's settings in words, and the model fitted when the panel made it another (one-way: no reader read
    two objects) -- the preamble of every result sheet says what the numbers below it come from."""
    note = result.stats.get("model_note")
    return settings.describe() + (f"; model fitted: {result.stats['model']} ({note})" if note else "")


def write_calibration(book, run: PanelRun, frames: dict[str, pd.DataFrame],
                      settings: CalibrationSettings, *, now: _dt.datetime | None = None,
                      feedback: bool = False, next_reads: pd.DataFrame | None = None) -> dict[str, int]:
    """(Re)write the result sheets and charts into *book*; input sheets are left alone. Returns header rows.

    Sheets (:data:`RESULT_SHEETS` with their chart pages, a printable per-assessor Feedback sheet with
    ``feedback``, the Next reads sheet when *next_reads* is given) and how they look come from
    :mod:`xlcalib.presentation`.
    """
    from ..presentation import calibration_sheets, next_reads_sheet, rasch_sheets

    backend = open_book(book)
    preamble = run_preamble("calibration", settings_words(settings, run.result), now)
    if isinstance(run.result, RaschResult):
        specs = rasch_sheets(run.result, frames, settings, preamble, decisions=run.decisions)
    else:
        specs = calibration_sheets(run.result, frames, settings, None, preamble, feedback=feedback,
                                   decisions=run.decisions, groups=run.groups, titles=run.titles)
    if next_reads is not None:
        rules = [[f"rule kept: {line}"] for line in next_reads.attrs.get("rules", [])]
        specs.append(next_reads_sheet(next_reads, run_preamble("next reads", settings.describe(), now) + rules))
    tops = write_sheets(backend, specs)
    _drop_stale_sheets(backend, {spec.name for spec in specs}, isinstance(run.result, RaschResult))
    backend.activate(specs[0].name)  # the workbook opens on the Ranking
    return tops


def _drop_stale_sheets(backend, written: set[str], ordinal: bool) -> None:
    """The other model family's result sheets that an earlier run wrote (Biases after a switch to the ordinal
    model, Measures after a switch back; Thresholds after a switch from partial credit) are removed, so no sheet
    shows an earlier model's numbers; a run without a lottery removes the Lottery sheet an earlier run wrote (an old
    draw beside new results would read as this run's).  Only sheets xlcalib wrote (:func:`~.common.is_own_sheet`)
    are touched."""
    if not hasattr(backend, "delete_sheet"):
        return
    linear_only = (set(RESULT_SHEETS) | {"Feedback", "Groups", "Group bias"}) - set(RASCH_SHEETS)
    candidates = linear_only | {"Thresholds"} if ordinal else set(RASCH_SHEETS) - set(RESULT_SHEETS)
    candidates = candidates | {"Lottery"}
    for name in sorted(candidates - written):
        actual = backend.find_sheet(name, required=False)
        if actual is not None and is_own_sheet(backend, actual):
            backend.delete_sheet(actual)


#: Extra reads the Next reads sheet of a Run main suggests.
NEXT_READS = 10


class _SheetRows:
    """Any workbook backend seen as the few openpyxl calls :func:`~xlcalib.exercises.assignment.assignment_rules`
    makes (``sheetnames``, ``book[name].iter_rows(values_only=True)``), each sheet's cells from A1."""

    def __init__(self, backend):
        self.backend = backend
        self.sheetnames = backend.sheet_names()

    def __getitem__(self, name):
        block = self.backend.read_block(name)
        pad = [None] * (block.first_column - 1)
        rows = [[] for _ in range(block.first_row - 1)] + [pad + list(r) for r in block.rows]

        class _Sheet:
            def iter_rows(self, values_only=True):
                return iter(rows)

        return _Sheet()


def run_next_reads(book, result: CalibrationResult, settings: CalibrationSettings, panel) -> pd.DataFrame:
    """The Next reads of a Run main: :data:`NEXT_READS` reads that settle the funding line best (no line: that most
    reduce the values' uncertainty) within the Assignment sheet's rules and the pending reads; a rule sheet that
    cannot be read, or a panel that cannot be ranked, gives a table whose note says why (never rules ignored)."""
    from .assignment import assignment_rules

    try:
        rules = assignment_rules(book if hasattr(book, "sheetnames") else _SheetRows(open_book(book)))
        pending = panel.pending[["assessor", "object"]] if panel is not None and len(panel.pending) else None
        kept = {k: rules[k] for k in ("conflicts", "max_load", "suitability")} if rules else {}
        return next_reads_frame(result, settings, NEXT_READS, pending=pending,
                                sources=[f"from {rules['source']}"] if rules else [], **kept)
    except InputError as exc:
        empty = pd.DataFrame(columns=NEXT_READS_COLUMNS)  # the core's table, with no read in it
        empty.attrs.update(note=f"no reads suggested: {exc.message}", rules=[])
        return empty


def calibrate_panel(book, settings: CalibrationSettings | None = None, *,
                    now: _dt.datetime | None = None) -> PanelRun:
    """Run the calibration exercise in *book* (openpyxl Workbook or xlwings Book): the result sheets and the Next
    reads; returns the run."""
    panels = []
    run, frames, settings = compute_calibration(book, settings, before_fit=lambda panel, _: panels.append(panel))
    suggestions = run_next_reads(book, run.result, settings, panels[0] if panels else None)
    write_calibration(book, run, frames, settings, now=now, next_reads=suggestions)
    return run
