"""The panel calibration exercise on a workbook: read the Settings, Levels and Evaluations sheets, calibrate,
and (re)write the result sheets with native charts.

``book`` is an openpyxl ``Workbook`` (the command line, tests), a read-only file reader, or an xlwings
``Book`` (the *Run main* button in Excel); :func:`xlcalib.workbook.open_book` wraps each in the same small
interface (read a table, write a sheet, add a chart), so the command line and the button run this same code.
Re-running replaces only the result sheets; input sheets are never touched.
"""
from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ..calibration import (
    DEFAULT_MODEL,
    LEVEL_RELATIVE_HEADERS,
    LEVEL_SD_HEADERS,
    MODEL_CHOICES,
    CalibrationResult,
    Levels,
    calibrate,
    check_level_value,
    default_levels,
    levels_table,
    model_name,
)
from ..calibration.decide.read_rules import known_to_panel
from ..calibration.behaviour.verdict import linkage_sentence
from ..calibration.models.scale_use import SCALE_USE_CHOICES
from ..cells import (
    MAX_ABS_SCORE,
    MAX_SEED,
    is_blank,
    parse_choice,
    parse_flag,
    parse_label,
    parse_number,
    parse_whole,
)
from ..errors import InputError
from ..inputs import EVALUATION_COLUMNS, check_evaluations, checks_frame, find_columns, read_panel, table_from_block
from ..workbook import open_book
from .common import run_preamble, write_sheets

#: The calibration result sheets in reading order, each chart on a page of its own after the table it draws (how
#: each looks: :mod:`xlcalib.presentation`); a Run main adds "Next reads".
#: The per-assessor sheet is "Biases": "Assessors" is the input list of the panel template.
RESULT_SHEETS = ("Ranking", "Ranking chart", "Summary", "Biases", "Biases chart", "Checks", "Values", "Values chart",
                 "Residuals", "Diagnostics", "Fit", "Unexpected")
#: The Evaluations (or Objects) sheet column that gives each object's group, unless the Settings name another.
DEFAULT_GROUP_COLUMN = "Group"


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
    model: str = DEFAULT_MODEL
    fund_top_k: int | None = None
    fund_threshold: float | None = None
    lottery: bool = False
    draws: int = 10_000
    seed: int = 0
    #: off / auto / on: a gain per assessor (see xlcalib.calibration.models.scale_use)
    scale_use: str = "off"
    #: the column naming each object's group; None = "Group" when the sheet has one
    group_column: str | None = None
    #: where each setting that is not a default came from, for messages: "sheet Settings, cell B6 (funding line,
    #: top k)", "--fund" ... (:func:`check_settings` names it when it refuses the value)
    origins: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    #: the borderline group's cut-off: borderline when epsilon < P(above the line) < 1 - epsilon
    epsilon: float = 0.05
    #: the user's own names of the assessor, object and score columns (the charts' axis titles)
    headers: dict = field(default_factory=dict)
    #: the score scale (min, max) declared outside the workbook (--scale, a review export's scale); None: the
    #: Settings sheet's rows "Score scale minimum/maximum" when present.  Scores outside it are errors, and the
    #: scores at its ends are read as "this or beyond" by the fit decisions come from (calibration/censoring.py)
    scale: tuple | None = None

    def describe(self) -> str:
        """The run's settings in plain words (every result sheet's third line; technical names in brackets)."""
        levels = (self.levels or default_levels()).describe()
        line = (f"funding line top {self.fund_top_k}" if self.fund_top_k else
                f"funding line at calibrated score {self.fund_threshold:g}" if self.fund_threshold is not None else
                "no funding line")
        if self.fund_top_k or self.fund_threshold is not None:
            line += (f", borderline between {self.epsilon:.0%} and {1 - self.epsilon:.0%}"
                     f"{', lottery' if self.lottery else ''}, {self.draws:,} draws, seed {self.seed}")
        zero = "confidence-weighted" if self.gauge == "weighted" else "plain"
        return (f"model {self.model}; intervals {self.interval_level:.0%}; {line}; biases measured from the "
                f"{zero} average assessor (gauge={self.gauge}); reads flagged beyond {self.anomaly_threshold:g} "
                f"expected spreads{'; each linked group fitted apart' if self.per_component else ''}; scale use "
                f"{self.scale_use}{'; groups from column ' + self.group_column if self.group_column else ''}; {levels}")

    def ranking_arguments(self) -> dict[str, Any]:
        """Keyword arguments for ``CalibrationResult.ranking`` (the funding line and its draws)."""
        return {"top_k": self.fund_top_k, "threshold": self.fund_threshold, "draws": self.draws, "seed": self.seed,
                "epsilon": self.epsilon, "lottery": self.lottery and self.fund_top_k is not None}


# ----------------------------------------------------------------------------
# Settings sheets written by the template
# ----------------------------------------------------------------------------
def read_settings(backend, defaults: CalibrationSettings) -> CalibrationSettings:
    """Settings and Levels sheets -> CalibrationSettings; every bad cell is named (sheet, row, column B)."""
    settings = replace(defaults, origins=dict(defaults.origins))
    name = backend.find_sheet("Settings", required=False)
    if name:
        _read_settings_sheet(backend.read_block(name), name, settings)
    name = backend.find_sheet("Levels", required=False)
    if name:
        levels = _read_levels_sheet(backend.read_block(name), name)
        if levels is not None:
            settings.levels = levels
    return settings


def _read_settings_sheet(block, name: str, settings: CalibrationSettings) -> None:
    """Name-value rows of the Settings sheet into *settings*; names are matched by their start, any case."""
    line_cells = {}
    for offset, row in enumerate(block.rows):
        if len(row) < 2 or is_blank(row[0]):
            continue
        key = " ".join(str(row[0]).strip().lower().split())
        cell = f"sheet {name}, cell B{block.first_row + offset}"
        _note_origin(settings, key, cell, row[1])
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
            settings.model = model_name(parse_choice(row[1], f"model ({cell})", MODEL_CHOICES, settings.model))
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
        elif key.startswith("borderline"):
            settings.epsilon = _borderline_cutoff(row[1], cell, settings.epsilon)
        elif key.startswith("monte carlo draws") or key == "draws":
            settings.draws = parse_whole(row[1], f"draws ({cell})", settings.draws, low=100)
        elif key == "seed":
            settings.seed = parse_whole(row[1], f"seed ({cell})", settings.seed, low=0)
        elif key.startswith("scale use"):
            settings.scale_use = parse_choice(row[1], f"scale use ({cell})", SCALE_USE_CHOICES, settings.scale_use)
        elif key.startswith("group column"):
            settings.group_column = None if is_blank(row[1]) else parse_label(row[1], f"group column ({cell})")
    if len(line_cells) == 2:
        raise InputError(f"two funding lines are set ({line_cells['top k']} places and {line_cells['score']} a "
                         "score): keep one and clear the other")


#: Settings rows (matched by their start, as :func:`_read_settings_sheet` reads them; "=" marks a whole-name
#: match) -> the setting they set and its words in messages
_SETTING_ROWS = (("gauge", "gauge", "gauge"), ("anomaly", "anomaly_threshold", "anomaly threshold"),
                 ("interval level", "interval_level", "interval level"), ("model", "model", "model"),
                 ("funding line (top k)", "fund_top_k", "funding line, top k"),
                 ("places funded", "fund_top_k", "funding line, top k"),
                 ("funding line (score)", "fund_threshold", "funding line score"), ("lottery", "lottery", "lottery"),
                 ("monte carlo draws", "draws", "draws"), ("=draws", "draws", "draws"), ("=seed", "seed", "seed"),
                 ("scale use", "scale_use", "scale use"), ("group column", "group_column", "group column"),
                 ("borderline", "epsilon", "borderline cut-off"))
#: The command line's option for each setting it can override (messages name the option, not the argument)
CLI_OPTIONS = {"gauge": "--gauge", "model": "--model", "interval_level": "--interval-level", "seed": "--seed",
               "fund_top_k": "--fund", "fund_threshold": "--threshold", "lottery": "--lottery",
               "scale_use": "--scale-use", "group_column": "--group-column", "epsilon": "--borderline",
               "scale": "--scale"}


def _note_origin(settings: CalibrationSettings, key: str, cell: str, value) -> None:
    """Remember which cell a setting came from (a blank cell sets nothing)."""
    for start, attribute, words in _SETTING_ROWS:
        if key == start[1:] if start.startswith("=") else key.startswith(start):
            if not is_blank(value):
                settings.origins[attribute] = f"{cell} ({words})"
            return


def _origin(settings: CalibrationSettings, key: str) -> str:
    return settings.origins.get(key, f"the {key} argument")


def check_settings(settings: CalibrationSettings) -> None:
    """Settings every run can check before reading the evaluations, each refusal naming the option or the
    Settings cell the value came from: the interval level, the score line, the seed, and the lottery's need
    for a line given in places (a lottery fills places; it is never silently skipped)."""
    level = settings.interval_level
    if not (isinstance(level, (int, float)) and 0.5 <= level < 1):
        raise InputError(f"{_origin(settings, 'interval_level')} must be at least 0.5 (50%) and below 1 (100%), "
                         f"not {level:g}" if isinstance(level, (int, float)) else
                         f"{_origin(settings, 'interval_level')} must be a number from 0.5 to below 1")
    line = settings.fund_threshold
    if line is not None and not (isinstance(line, (int, float)) and abs(line) <= MAX_ABS_SCORE):
        raise InputError(f"{_origin(settings, 'fund_threshold')} must be a finite score within ±{MAX_ABS_SCORE:g} "
                         f"(the limit of every score), not {line:g}")
    eps = settings.epsilon
    if not (isinstance(eps, (int, float)) and 0 < eps < 0.5):
        raise InputError(f"{_origin(settings, 'epsilon')} (the borderline cut-off) must be a share above 0 and below "
                         f"0.5 (e.g. 0.05 for 5%), not {eps!r}")
    if settings.seed is not None and not (isinstance(settings.seed, int) and 0 <= settings.seed <= MAX_SEED):
        raise InputError(f"{_origin(settings, 'seed')} must be a whole number from 0 to 2^53, not {settings.seed}")
    if settings.lottery and settings.fund_top_k is None:
        why = (f"not a score ({_origin(settings, 'fund_threshold')})" if settings.fund_threshold is not None
               else "and none is set")
        raise InputError(f"{_origin(settings, 'lottery')} asks for a lottery, which fills funding places: it needs the "
                         f"funding line as a number of places (Settings 'Funding line (top k)', or --fund K), {why}")


def check_line_fits(settings: CalibrationSettings, n_objects: int) -> None:
    """A line by places must leave some objects unfunded; the message names where the number came from."""
    k = settings.fund_top_k
    if k is not None and not 1 <= k <= n_objects - 1:
        raise InputError(f"{_origin(settings, 'fund_top_k')} must be from 1 to {n_objects - 1:,} (the panel has "
                         f"{n_objects:,} objects; funding all of them needs no line), not {k:,}")


def check_line_applies(settings: CalibrationSettings, result: CalibrationResult) -> None:
    """A funding line on a panel fitted as separate groups is refused, not silently left without a Ranking."""
    n = result.stats["n_components"]
    if n > 1 and (settings.fund_top_k is not None or settings.fund_threshold is not None):
        key = "fund_top_k" if settings.fund_top_k is not None else "fund_threshold"
        how = ("each calibrated on its own scale (--per-component)" if settings.per_component else
               "so their standards cannot be compared")
        raise InputError(f"{_origin(settings, key)} sets a funding line, but the assessors fall into {n} groups that "
                         f"share no object, {how}: no ranking spans them. Link the groups with shared reads, or clear "
                         "the funding line")


def _borderline_cutoff(value, cell: str, default: float) -> float:
    """The Settings row "Borderline cut-off": a share between 0 and 50% (5%, 0.05 or 5 all mean five per cent)."""
    percent = isinstance(value, str) and value.strip().endswith("%")  # "25%" typed into a text cell
    share = parse_number(value.strip()[:-1] if percent else value, cell + " (borderline cut-off)", allow_blank=True)
    if np.isnan(share):
        return default
    if percent or 1 <= share < 50:  # a percentage
        share = share / 100
    if not 0 < share < 0.5:
        raise InputError(f"{cell} (borderline cut-off) must be a share above 0 and below 50% (e.g. 5% or 25%), not "
                         f"{value!r}")
    return share


def _read_levels_sheet(block, name: str) -> Levels | None:
    """The Levels sheet: level names in column A, relative confidences or SDs in column B (by its header)."""
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
        where = f"sheet {name}, row {block.first_row + offset}, column B ({what})"
        table[str(row[0]).strip()] = parse_number(row[1], where)
        check_level_value(table[str(row[0]).strip()], kind, where)
    return levels_table(Levels(table, kind)) if table else None


def user_headers(panel) -> dict[str, str]:
    """The headers the user gave the assessor, object and score columns ("Reviewer", "Proposal", "Mark" ...)."""
    table = getattr(panel, "table", None)
    header = getattr(table, "header", None)
    if not header:
        return {}
    found = find_columns(header, EVALUATION_COLUMNS, panel.sheet)
    return {name: str(header[j]).strip() for name, j in found.items() if name in ("assessor", "object", "score")}


def level_names(settings: CalibrationSettings) -> list[str]:
    """The level names a Level column may use in this run (the Levels sheet's, else the defaults)."""
    return [str(name) for name in (settings.levels or default_levels()).values]


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


def _group_cells(cells, where) -> list:
    """A group column's cells as texts (whole numbers without '.0'); blank -> None."""
    return [parse_label(c, where(i), allow_blank=True) for i, c in enumerate(cells)]


def _groups_from_evaluations(panel, name: str):
    """object -> group from the evaluations table's column *name* (None: no such column); an object given two
    groups is an error naming its rows."""
    table = panel.table
    if table is None:
        return None
    wanted = " ".join(name.strip().lower().split())
    position = next((j for j, h in enumerate(table.header)
                     if not is_blank(h) and " ".join(str(h).strip().lower().split()) == wanted), None)
    if position is None:
        return None
    rows = np.asarray(table.row_numbers, dtype=np.intp)
    order = np.argsort(rows, kind="stable")
    body = order[np.searchsorted(rows[order], np.asarray(panel.sheet_rows, dtype=np.intp))]
    column = table.columns[position]
    cells = [column[i] for i in body]
    groups = _group_cells(cells, lambda i: f"sheet {panel.sheet}, row {int(panel.sheet_rows[i])}, column {name}")
    frame = pd.DataFrame({"object": panel.frame["object"].to_numpy(), "group": groups,
                          "row": np.asarray(panel.sheet_rows)}).dropna(subset=["group"])
    distinct = frame.groupby("object", sort=False)["group"].nunique()
    if (distinct > 1).any():
        obj = distinct.index[distinct > 1][0]
        clash = frame[frame["object"] == obj].drop_duplicates("group").head(2)
        raise InputError(f"sheet {panel.sheet}, rows {', '.join(map(str, clash['row']))}: object {obj} is in group "
                         f"{' and '.join(repr(g) for g in clash['group'])}; give each object one group",
                         {"sheet": panel.sheet, "sheet_row": int(clash['row'].iloc[-1])})
    return frame.drop_duplicates("object").set_index("object")["group"]


def _groups_from_objects_sheet(backend, name: str):
    """object -> group from the Objects sheet (names in column A, the group under a header *name*), or None."""
    sheet = backend.find_sheet("Objects", required=False)
    if not sheet:
        return None
    block = backend.read_block(sheet)
    rows = [list(r) for r in block.rows]
    start = next((i for i, r in enumerate(rows) if any(not is_blank(c) for c in r)), None)
    if start is None:
        return None
    wanted = " ".join(name.strip().lower().split())
    header = rows[start]
    position = next((j for j, h in enumerate(header)
                     if not is_blank(h) and " ".join(str(h).strip().lower().split()) == wanted), None)
    if position is None or position == 0:
        return None
    out = {}
    for offset, row in enumerate(rows[start + 1:], start=start + 1):
        if not row or is_blank(row[0]) or len(row) <= position:
            continue
        where = f"sheet {sheet}, row {block.first_row + offset}"
        group = parse_label(row[position], f"{where}, column {name}", allow_blank=True)
        if group is not None:
            out[parse_label(row[0], f"{where}, column A")] = group
    return pd.Series(out, dtype=object) if out else None


def read_groups(backend, panel, name: str | None, origin: str | None = None):
    """Each object's group: the evaluations' Group column (or the column *name*), else the Objects sheet's; None
    when neither has one (an error naming *origin*, the option or Settings cell, when *name* was asked for and
    is nowhere)."""
    column = name or DEFAULT_GROUP_COLUMN
    groups = _groups_from_evaluations(panel, column)
    listed = _groups_from_objects_sheet(backend, column)
    if groups is None:
        groups = listed
    elif listed is not None:  # the Objects sheet fills objects the evaluations leave without a group
        groups = pd.concat([groups, listed[~listed.index.isin(groups.index)]])
    if groups is None and name:
        asked = origin or "Settings 'Group column' or --group-column"
        shown = name if len(name) <= 60 else name[:57] + "..."
        raise InputError(f"no column '{shown}' on sheet {panel.sheet} or the Objects sheet: the group column was "
                         f"asked for by name ({asked})")
    if groups is not None and groups.nunique() < 2:
        return None  # one group: nothing to compare
    return groups


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


def warnings_for(result: CalibrationResult, hidden_rows=(), sheet: str = "Evaluations") -> list[str]:
    """Plain-language warnings for the Diagnostics sheet."""
    out = []
    if len(hidden_rows):
        shown = ", ".join(map(str, hidden_rows[:20])) + (" ..." if len(hidden_rows) > 20 else "")
        out.append(f"{len(hidden_rows)} evaluation(s) sit in hidden rows of sheet {sheet} (rows {shown}) and were "
                   "included: hiding a row does not exclude it; delete the row to leave an evaluation out.")
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


def _with_warnings(diagnostics: pd.DataFrame, warnings: list[str]) -> pd.DataFrame:
    """The Diagnostics table with one "warning" row per warning below the statistics."""
    rows = pd.DataFrame({"statistic": ["warning"] * len(warnings), "value": warnings, "meaning": [""] * len(warnings)})
    return pd.concat([diagnostics, rows], ignore_index=True)


def compute_calibration(book, settings: CalibrationSettings | None = None, *, before_fit=None, origins=None,
                        **overrides):
    """Read settings and evaluations from *book*; return (result, frames, settings) without writing.

    ``overrides`` (e.g. ``gauge="simple"`` from the command line) beat the book's Settings sheet; ``origins``
    names where each came from (``{"fund_top_k": "--fund"}``, :data:`CLI_OPTIONS`) for the messages.
    ``before_fit(panel, settings)`` runs on the checked evaluations before the fit (e.g. to refuse a panel
    whose result sheets cannot hold it, before minutes of work).
    """
    backend = open_book(book)
    settings = read_settings(backend, settings or CalibrationSettings())
    for key, value in overrides.items():
        setattr(settings, key, value)
        settings.origins[key] = (origins or {}).get(key, f"the {key} argument")
    check_settings(settings)
    panel = read_panel(backend, settings.sheet, levels=level_names(settings), scale=settings.scale,
                       scale_where=settings.origins.get("scale", ""))
    check_line_fits(settings, int(panel.frame["object"].nunique()))
    settings.headers = user_headers(panel)
    if before_fit is not None:
        before_fit(panel, settings)
    result, frame = run_calibration(None, settings, panel)
    check_line_applies(settings, result)
    result.groups = read_groups(backend, panel, settings.group_column, settings.origins.get("group_column"))
    frames = result_frames(result, frame)
    if result.stats["n_components"] == 1:
        ranking = result.ranking(**settings.ranking_arguments())
        result.decisions = ranking  # the ranking the run decided on: the Ranking sheet and the CLI show this one
        frames = {"Ranking": ranking_frame(ranking), **frames}
    frames["Checks"] = checks_frame(panel.problems)  # every warning with its cell (rendered as the Checks sheet)
    warn = warnings_for(result, frame.attrs.get("hidden_rows", []), settings.sheet)
    if len(panel.pending):
        warn.insert(0, f"{len(panel.pending)} evaluation(s) are allocated but not scored yet (pending): left out of "
                       "this run; see Checks.")
    if warn:
        frames["Diagnostics"] = _with_warnings(frames["Diagnostics"], warn)
    return result, frames, settings


def write_calibration(book, result: CalibrationResult, frames: dict[str, pd.DataFrame],
                      settings: CalibrationSettings, *, now: _dt.datetime | None = None,
                      feedback: bool = False, next_reads: pd.DataFrame | None = None) -> dict[str, int]:
    """(Re)write the result sheets and charts into *book*; input sheets are left alone. Returns header rows.

    Sheets (:data:`RESULT_SHEETS` with their chart pages, a printable per-assessor Feedback sheet with
    ``feedback``, the Next reads sheet when *next_reads* is given) and how they look come from
    :mod:`xlcalib.presentation`.
    """
    from ..presentation import calibration_sheets, next_reads_sheet

    backend = open_book(book)
    preamble = run_preamble("calibration", settings.describe(), now)
    specs = calibration_sheets(result, frames, settings, None, preamble, feedback=feedback)
    if next_reads is not None:
        rules = [[f"rule kept: {line}"] for line in next_reads.attrs.get("rules", [])]
        specs.append(next_reads_sheet(next_reads, run_preamble("next reads", settings.describe(), now) + rules))
    tops = write_sheets(backend, specs)
    backend.activate(specs[0].name)  # the workbook opens on the Ranking
    return tops


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
        empty = pd.DataFrame(columns=["order", "assessor", "object", "p_above", "se_before", "se_after", "reason"])
        empty.attrs.update(note=f"no reads suggested: {exc.message}", rules=[])
        return empty


def calibrate_panel(book, settings: CalibrationSettings | None = None, *, now: _dt.datetime | None = None):
    """Run the calibration exercise in *book* (openpyxl Workbook or xlwings Book): the result sheets and the Next
    reads; returns the result."""
    panels = []
    result, frames, settings = compute_calibration(book, settings, before_fit=lambda panel, _: panels.append(panel))
    suggestions = run_next_reads(book, result, settings, panels[0] if panels else None)
    write_calibration(book, result, frames, settings, now=now, next_reads=suggestions)
    return result
