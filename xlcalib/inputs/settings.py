"""The Settings and Levels sheets of a panel workbook, read into the :class:`CalibrationSettings` a run uses.

Every bad cell is refused with its sheet and cell ("sheet Settings, cell B6 (funding line, top k) ...");
each setting remembers where it came from (a Settings cell, a command-line option) so that a check made
later -- :func:`check_settings`, :func:`check_line_fits`, :func:`check_line_applies` -- names that place.
Settings rows are matched by the start of their name, compared as :func:`~xlcalib.cells.header_key`
compares every header; :data:`SETTING_ROWS` is the one table of them.
"""
from __future__ import annotations

import re

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np

from ..calibration import (
    DEFAULT_MODEL,
    LEVEL_RELATIVE_HEADERS,
    LEVEL_SD_HEADERS,
    MODEL_CHOICES,
    CalibrationResult,
    Levels,
    check_level_value,
    default_levels,
    levels_table,
    model_name,
)
from ..calibration.decide.lottery import public_seed
from ..calibration.decide.ranking import lottery_method
from ..calibration.models import is_rasch
from ..calibration.models.scale_use import SCALE_USE_CHOICES
from ..cells import (
    MAX_ABS_SCORE,
    MAX_SEED,
    column_letter,
    header_key,
    is_blank,
    parse_choice,
    parse_flag,
    parse_label,
    parse_number,
    parse_whole,
)
from ..errors import InputError
from .problems import Problem
from .values import Scale, is_symbol, scale_argument


@dataclass
class CalibrationSettings:
    """What the run used; written on every result sheet.

    ``levels``: ``None`` = the default relative levels (High/Medium/Low with
    ratio 1.75, noise scale estimated), or a :class:`~xlcalib.calibration.Levels`
    read from the Levels sheet.  The funding line is ``fund_top_k`` (places) or
    ``fund_threshold`` (a calibrated score); ``lottery`` ("informed", "uniform band" or False) fills the places left
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
    lottery: bool | str = False
    #: the lottery's public seed: any text or number published before the meeting (None: the run's seed)
    public_seed: str | None = None
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

    def override(self, values: dict[str, Any], origins: dict[str, str] | None = None) -> None:
        """Set *values* (the command line's options, a caller's arguments) over what the sheets gave, each noted
        as coming from its name in *origins* (``{"fund_top_k": "--fund"}``, :data:`CLI_OPTIONS`)."""
        for key, value in values.items():
            setattr(self, key, value)
            self.origins[key] = (origins or {}).get(key, f"the {key} argument")

    def describe(self) -> str:
        """The run's settings in plain words (every result sheet's third line; technical names in brackets)."""
        if is_rasch(self.model):
            return self._describe_rasch()
        levels = (self.levels or default_levels()).describe()
        line = self._line_words("calibrated score")
        zero = "confidence-weighted" if self.gauge == "weighted" else "plain"
        return (f"model {self.model}; intervals {self.interval_level:.0%}; {line}; biases measured from the "
                f"{zero} average assessor (gauge={self.gauge}); reads flagged beyond {self.anomaly_threshold:g} "
                f"expected spreads{'; each linked group fitted apart' if self.per_component else ''}; scale use "
                f"{self.scale_use}{'; groups from column ' + self.group_column if self.group_column else ''}; {levels}")

    def _line_words(self, score_words: str) -> str:
        """The funding line, its cut-offs, lottery and draws in words (*score_words*: what a score line is read in)."""
        line = (f"funding line top {self.fund_top_k}" if self.fund_top_k else
                f"funding line at {score_words} {self.fund_threshold:g}" if self.fund_threshold is not None else
                "no funding line")
        if self.fund_top_k or self.fund_threshold is not None:
            line += (f", borderline between {self.epsilon:.0%} and {1 - self.epsilon:.0%}"
                     f"{self._lottery_words()}, {self.draws:,} draws, seed {self.seed}")
        return line

    def _lottery_words(self) -> str:
        method = lottery_method(self.lottery)
        if method is None:
            return ""
        seed = f"public seed '{public_seed(self.public_seed)}'" if self.public_seed is not None else "no public seed"
        return f", {method} lottery ({seed})"

    def _describe_rasch(self) -> str:
        """The ordinal models' settings: a funding line in fair averages, severities, no confidences."""
        line = self._line_words("fair average")
        zero = "read-weighted" if self.gauge == "weighted" else "plain"
        return (f"model {self.model} (scores as ordered categories); intervals {self.interval_level:.0%}; {line}; "
                f"severities measured from the {zero} average assessor (gauge={self.gauge}); reads flagged when "
                f"as improbable as {self.anomaly_threshold:g} SDs out; a read's confidence makes it sharper or blunter")

    def ranking_arguments(self) -> dict[str, Any]:
        """Keyword arguments for ``CalibrationResult.ranking`` (the funding line, its draws and the lottery)."""
        method = lottery_method(self.lottery) if self.fund_top_k is not None else None
        return {"top_k": self.fund_top_k, "threshold": self.fund_threshold, "draws": self.draws, "seed": self.seed,
                "epsilon": self.epsilon, "lottery": method or False,
                "lottery_seed": self.public_seed if method else None}


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


# ----------------------------------------------------------------------------
# The Settings sheet: name-value rows
# ----------------------------------------------------------------------------
class SettingRow(NamedTuple):
    """One kind of Settings row: how its name starts ("=" first: the whole name), the setting it sets, its words
    in messages, and how its cell is read -- ``read(value, cell, words, current)`` gives the setting's new value
    (*current* when a blank cell leaves it as it is)."""

    start: str
    attribute: str
    words: str
    read: Callable[[Any, str, str, Any], Any]

    def matches(self, key: str) -> bool:
        """Whether a row named *key* (a :func:`~xlcalib.cells.header_key`) is of this kind."""
        return key == self.start[1:] if self.start.startswith("=") else key.startswith(self.start)


def _read_gauge(value, cell: str, words: str, current: str) -> str:
    return parse_choice(value, f"{words} ({cell})", ("weighted", "simple"), current)


def _read_anomaly_threshold(value, cell: str, words: str, current: float) -> float:
    threshold = parse_number(value, f"{cell} ({words})")
    if not threshold > 0:  # named here, not as the core's Python argument
        raise InputError(f"{cell} ({words}) must be positive, not {threshold:g}")
    return threshold


def _read_interval_level(value, cell: str, words: str, current: float) -> float:
    level = parse_number(value, f"{cell} ({words})", allow_blank=True)
    if np.isnan(level):
        return current
    if not 0.5 <= level < 1:
        raise InputError(f"{cell} ({words}) must be at least 50% and below 100%, not {level:g}")
    return level


def _read_model(value, cell: str, words: str, current: str) -> str:
    return model_name(parse_choice(value, f"{words} ({cell})", MODEL_CHOICES, current))


def _read_places(value, cell: str, words: str, current: int | None) -> int | None:
    places = parse_whole(value, f"{words} ({cell})", None, low=1)
    return current if places is None else places


def _read_line_score(value, cell: str, words: str, current: float | None) -> float | None:
    score = parse_number(value, f"{cell} ({words})", allow_blank=True)
    return current if np.isnan(score) else score


def _read_lottery(value, cell: str, words: str, current):
    """yes / TRUE / informed: the informed lottery; uniform band; no / FALSE (a blank keeps the current)."""
    if is_blank(value):
        return current
    try:
        if isinstance(value, str):
            return lottery_method(value) or False
        return "informed" if parse_flag(value, f"{words} ({cell})", bool(current)) else False
    except InputError:
        raise InputError(f"{cell} ({words}) must be yes (the informed lottery), informed, uniform band or no, not "
                         f"{value!r}") from None


def _read_public_seed(value, cell: str, words: str, current):
    """Any text or number (blank keeps the current); refused when it cannot be a public seed."""
    if is_blank(value):
        return current
    try:
        return public_seed(value)
    except InputError as exc:
        raise InputError(f"{cell} ({words}): {exc.message}") from None


def _read_borderline_cutoff(value, cell: str, words: str, current: float) -> float:
    """A share between 0 and 50% (5%, 0.05 or 5 all mean five per cent)."""
    percent = isinstance(value, str) and value.strip().endswith("%")  # "25%" typed into a text cell
    share = parse_number(value.strip()[:-1] if percent else value, f"{cell} ({words})", allow_blank=True)
    if np.isnan(share):
        return current
    if percent or 1 <= share < 50:  # a percentage
        share = share / 100
    if not 0 < share < 0.5:
        raise InputError(f"{cell} ({words}) must be a share above 0 and below 50% (e.g. 5% or 25%), not {value!r}")
    return share


def _read_draws(value, cell: str, words: str, current: int) -> int:
    return parse_whole(value, f"{words} ({cell})", current, low=100)


def _read_seed(value, cell: str, words: str, current: int) -> int:
    return parse_whole(value, f"{words} ({cell})", current, low=0)


def _read_scale_use(value, cell: str, words: str, current: str) -> str:
    return parse_choice(value, f"{words} ({cell})", SCALE_USE_CHOICES, current)


def _read_group_column(value, cell: str, words: str, current: str | None) -> str | None:
    return None if is_blank(value) else parse_label(value, f"{words} ({cell})")  # blank: no group column


#: The Settings rows the panel template writes (and their older names), in one table: matching a row, noting
#: where a setting came from and reading its cell all go by it.  The score scale rows are read with the
#: evaluations (:func:`read_score_scale`), whose check uses them.
SETTING_ROWS = (
    SettingRow("gauge", "gauge", "gauge", _read_gauge),
    SettingRow("anomaly", "anomaly_threshold", "anomaly threshold", _read_anomaly_threshold),
    SettingRow("interval level", "interval_level", "interval level", _read_interval_level),
    SettingRow("model", "model", "model", _read_model),
    SettingRow("funding line (top k)", "fund_top_k", "funding line, top k", _read_places),
    SettingRow("places funded", "fund_top_k", "funding line, top k", _read_places),
    SettingRow("funding line (score)", "fund_threshold", "funding line score", _read_line_score),
    SettingRow("lottery", "lottery", "lottery", _read_lottery),
    SettingRow("public seed", "public_seed", "public seed", _read_public_seed),
    SettingRow("borderline", "epsilon", "borderline cut-off", _read_borderline_cutoff),
    SettingRow("monte carlo draws", "draws", "draws", _read_draws),
    SettingRow("=draws", "draws", "draws", _read_draws),
    SettingRow("=seed", "seed", "seed", _read_seed),
    SettingRow("scale use", "scale_use", "scale use", _read_scale_use),
    SettingRow("group column", "group_column", "group column", _read_group_column),
)
#: The command line's option for each setting it can override (messages name the option, not the argument)
CLI_OPTIONS = {"gauge": "--gauge", "model": "--model", "interval_level": "--interval-level", "seed": "--seed",
               "fund_top_k": "--fund", "fund_threshold": "--threshold", "lottery": "--lottery",
               "public_seed": "--public-seed",
               "scale_use": "--scale-use", "group_column": "--group-column", "epsilon": "--borderline",
               "scale": "--scale"}


def _read_settings_sheet(block, name: str, settings: CalibrationSettings) -> None:
    """Name-value rows of the Settings sheet into *settings*, each noting its cell as the setting's origin (a
    blank cell sets nothing, but a blank Group column clears it); rows of no known name are left alone."""
    given = {}  # setting -> the cell that gave it on this sheet
    for offset, row in enumerate(block.rows):
        if len(row) < 2 or is_blank(row[0]):
            continue
        key = header_key(row[0])
        kind = next((kind for kind in SETTING_ROWS if kind.matches(key)), None)
        if kind is None:
            continue
        cell = f"sheet {name}, cell B{block.first_row + offset}"
        if not is_blank(row[1]):
            settings.origins[kind.attribute] = f"{cell} ({kind.words})"
            given[kind.attribute] = cell
        setattr(settings, kind.attribute, kind.read(row[1], cell, kind.words, getattr(settings, kind.attribute)))
    if "fund_top_k" in given and "fund_threshold" in given:
        raise InputError(f"two funding lines are set ({given['fund_top_k']} places and {given['fund_threshold']} a "
                         "score): keep one and clear the other")


# ----------------------------------------------------------------------------
# Checks of the settings, naming the option or cell each value came from
# ----------------------------------------------------------------------------
def _origin(settings: CalibrationSettings, key: str) -> str:
    """Where setting *key* came from, as messages name it: its Settings cell or option, else the argument."""
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
    if k is not None and n_objects < 2:
        raise InputError(f"{_origin(settings, 'fund_top_k')} asks for a funding line, which needs at least two scored "
                         f"objects to place it between; the panel has {n_objects}")
    if k is not None and not 1 <= k <= n_objects - 1:
        raise InputError(f"{_origin(settings, 'fund_top_k')} must be from 1 to {n_objects - 1:,} (the panel has "
                         f"{n_objects:,} objects; funding all of them needs no line), not {k:,}")


def check_line_applies(settings: CalibrationSettings, result: CalibrationResult) -> None:
    """A funding line on a panel fitted as separate groups, each on its own scale, is refused, not silently left
    without a Ranking (unconnected groups the model fits together are ranked, as everywhere: one rule,
    :attr:`~xlcalib.calibration.CalibrationResult.one_scale`)."""
    n = result.stats["n_components"]
    if not result.one_scale and (settings.fund_top_k is not None or settings.fund_threshold is not None):
        key = "fund_top_k" if settings.fund_top_k is not None else "fund_threshold"
        how = ("each calibrated on its own scale (--per-component)" if settings.per_component else
               "so their standards cannot be compared")
        raise InputError(f"{_origin(settings, key)} sets a funding line, but the assessors fall into {n} groups that "
                         f"share no object, {how}: no ranking spans them. Link the groups with shared reads, or clear "
                         "the funding line")


# ----------------------------------------------------------------------------
# The Levels sheet, and the score scale rows the evaluations check uses
# ----------------------------------------------------------------------------
def _read_levels_sheet(block, name: str) -> Levels | None:
    """The Levels sheet: level names in column A, relative confidences or SDs in column B (by its header)."""
    rows = block.rows
    header = rows[0] if rows else []
    second = header_key(header[1]) if len(header) > 1 else ""
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


def level_names(settings: CalibrationSettings) -> list[str]:
    """The level names a Level column may use in this run (the Levels sheet's, else the defaults)."""
    return [str(name) for name in (settings.levels or default_levels()).values]


def _scale_points(text, where: str):
    """The Settings row "Score scale points": a form's options ("1, 3, 6, 8", uneven steps allowed), sorted; or
    letter grades best first ("A, B, C, D"), as their ladder (:class:`~.values.Scale`)."""
    parts = [p for p in re.split(r"[,;\s]+", str(text).strip()) if p]
    if parts and all(is_symbol(p) for p in parts):
        return scale_argument(", ".join(parts), where)
    points = sorted(parse_number(p, where) for p in parts)
    if len(points) < 3 or len(set(points)) < len(points):
        raise InputError(f"{where} must list three or more different scores, the form's options (e.g. 1, 3, 6, 8); "
                         "for an even scale give the minimum and maximum rows instead")
    return tuple(points)


def read_score_scale(backend, problems: list) -> tuple[tuple[float, ...] | Scale | None, str]:
    """Settings rows "Score scale minimum"/"Score scale maximum" (as the panel_calibration template writes them):
    ((min, max), their cells in words), or (None, "") without both; with the row "Score scale points" (a form's
    options, uneven steps allowed) the points instead, whose ends the minimum and maximum rows must match when
    given.  A bad cell is a problem added to *problems*, reported with the evaluations' (the check of every score
    uses the scale)."""
    actual = backend.find_sheet("Settings", required=False)
    if not actual:
        return None, ""
    block = backend.read_block(actual)
    found, cells = {}, {}
    for i, row in enumerate(block.rows):
        if len(row) < 2 or is_blank(row[0]) or not isinstance(row[0], str):
            continue
        key = header_key(row[0])
        if key == "score scale points" and not is_blank(row[1]):
            ref = f"{column_letter(block.column_number(1))}{block.row_number(i)}"
            try:
                found[key] = _scale_points(row[1], f"sheet {actual}, row {block.row_number(i)} ({row[0].strip()}, "
                                                   f"cell {ref})")
                cells[key] = ref
            except InputError as exc:
                problems.append(Problem("error", actual, ref, block.row_number(i), "Value", exc.message))
            continue
        if key in ("score scale minimum", "score scale maximum"):
            ref = f"{column_letter(block.column_number(1))}{block.row_number(i)}"
            where = f"sheet {actual}, row {block.row_number(i)} ({row[0].strip()}, cell {ref})"
            if is_blank(row[1]):
                continue
            try:
                value = parse_number(row[1], where)
            except InputError as exc:
                problems.append(Problem("error", actual, ref, block.row_number(i), "Value", exc.message))
                continue
            if abs(value) > MAX_ABS_SCORE:  # no score may lie beyond it: such a scale is a typing slip
                problems.append(Problem("error", actual, ref, block.row_number(i), "Value",
                                        f"{where} must be within ±{MAX_ABS_SCORE:g} (the limit of every score), "
                                        f"not {value:g}"))
                continue
            found[key], cells[key] = value, ref
    points = found.pop("score scale points", None)
    if isinstance(points, Scale):  # letter grades: the ladder is the scale (the minimum and maximum rows are numbers)
        return points, f"sheet {actual}, {cells['score scale points']}"
    if points is not None:
        ends = [found.get("score scale minimum", points[0]), found.get("score scale maximum", points[-1])]
        if ends != [points[0], points[-1]]:
            problems.append(Problem("error", actual, cells["score scale points"], None, "Value",
                                    f"sheet {actual}, cell {cells['score scale points']}: the scale's points run from "
                                    f"{points[0]:g} to {points[-1]:g}, but the minimum and maximum rows say {ends[0]:g} "
                                    "and {:g}: make them agree, or clear them".format(ends[1])))
            return None, ""
        return points, f"sheet {actual}, {cells['score scale points']}"
    if len(found) == 2:
        lo, hi = found["score scale minimum"], found["score scale maximum"]
        if lo >= hi:
            problems.append(Problem("error", actual, cells["score scale maximum"], None, "Value",
                                    f"sheet {actual}, cells {cells['score scale minimum']}:{cells['score scale maximum']}"
                                    f": the score scale minimum ({lo:g}) must be below the maximum ({hi:g})"))
            return None, ""
        return (lo, hi), f"sheet {actual}, {cells['score scale minimum']}:{cells['score scale maximum']}"
    return None, ""
