"""Confidence levels: what a "High", "Medium" or "Low" read is worth.

Panels rarely ask assessors for standard deviations; they ask for a level.
A level is turned into the confidence ``c_ao`` of the read (MacKay et al.
2017, eq. 5: ``c = 1/sigma^2``), either as a *relative* weight (the noise
scale is then estimated from the residual scatter, so the levels work on any
score scale) or as an SD in score units taken at face value.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...cells import header_key, real_argument
from ...errors import InputError

__all__ = ["DEFAULT_LEVEL_RATIO", "DEFAULT_LEVELS", "LEVEL_SD_HEADERS", "LEVEL_RELATIVE_HEADERS", "Levels",
           "default_levels", "levels_table", "check_level_value", "SD_RANGE", "CONFIDENCE_RANGE"]

#: Default ratio between adjacent confidence levels (the calibration authors' own tool uses 1.75): a "High"
#: read counts lambda^2 ~ 3 times a "Medium" read, a "Low" read 1/lambda^2 ~ 1/3 of one.  Levels are
#: *relative* confidences: the noise scale w is estimated from the residuals, so error bars and
#: anomaly flags follow the data's own scatter on any score scale (0-100 as well as 1-9).
DEFAULT_LEVEL_RATIO = 1.75

#: SDs (score units) outside this range are refused (their confidences 1/SD^2 span 1e-30 .. 1e30).
SD_RANGE = (1e-15, 1e15)
#: Confidences (and relative confidences) outside this range are refused.
CONFIDENCE_RANGE = (1e-30, 1e30)

#: Header words that mark a levels table's number column as SDs or as relative confidences.
LEVEL_SD_HEADERS = ("sd", "sigma", "standard deviation", "sd (score units)")
LEVEL_RELATIVE_HEADERS = ("relative confidence", "confidence", "weight", "relative weight")


@dataclass(frozen=True)
class Levels:
    """Confidence levels: level name -> number, and what the number means.

    ``kind="relative"``: relative confidences (weights; High = lambda^2, Medium = 1,
    Low = 1/lambda^2 by default) -- the noise scale w is estimated from the residuals.
    ``kind="sd"``: standard deviations in score units, taken at face value (w = 1),
    and checked against the residual scatter.
    """

    values: dict
    kind: str = "relative"

    def confidences(self) -> dict:
        """Level (lower-cased) -> confidence c = 1/SD^2 or the relative weight."""
        if self.kind == "sd":
            return {k.strip().lower(): 1.0 / v**2 for k, v in self.values.items()}
        return {k.strip().lower(): float(v) for k, v in self.values.items()}

    def describe(self) -> str:
        unit = "SD in score units" if self.kind == "sd" else "relative confidence"
        return f"levels ({unit}): " + ", ".join(f"{k} {v:.4g}" for k, v in self.values.items())

    @classmethod
    def from_description(cls, text) -> "Levels | None":
        """The levels a :meth:`describe` line names (numbers to 4 significant digits); None when it is not one.

        A result records its levels in ``stats["levels"]`` as this line; reading it back lets
        a later step (e.g. next reads) name the level a confidence stands for.
        """
        match = re.fullmatch(r"levels \((SD in score units|relative confidence)\): (.+)", str(text).strip())
        if match is None:
            return None
        values = {}
        for part in match.group(2).split(", "):
            name, _, number = part.rpartition(" ")
            try:
                values[name] = float(number)
            except ValueError:
                return None
            if not name or not values[name] > 0:
                return None
        return cls(values, "sd" if match.group(1).startswith("SD") else "relative")


def default_levels(ratio: float = DEFAULT_LEVEL_RATIO) -> Levels:
    """High/Medium/Low as relative confidences ratio^2, 1, ratio^-2."""
    ratio = real_argument(ratio, "level_ratio", low=1.0, high=100.0)
    return Levels({"High": ratio**2, "Medium": 1.0, "Low": ratio**-2}, "relative")


#: The default levels as a plain mapping: level name -> relative confidence (lambda = 1.75).
DEFAULT_LEVELS: dict = dict(default_levels().values)


def _table_kind(levels: pd.DataFrame) -> str:
    """'sd' or 'relative' from the second header of a two-column levels table."""
    if levels.shape[1] < 2:
        raise InputError("the levels table needs two columns: level name and SD (or relative confidence)")
    header = header_key(levels.columns[1])
    if header in LEVEL_SD_HEADERS:
        return "sd"
    if header in LEVEL_RELATIVE_HEADERS:
        return "relative"
    raise InputError(f"levels table: the second column is headed '{levels.columns[1]}'; head it 'SD' "
                     "(standard deviations in score units) or 'Relative confidence'")


def check_level_value(value: float, kind: str, where: str) -> None:
    """A level's SD within :data:`SD_RANGE`, or its relative confidence within :data:`CONFIDENCE_RANGE` (the
    bounds of the evaluations' own SD and confidence columns), else InputError naming *where*."""
    low, high = SD_RANGE if kind == "sd" else CONFIDENCE_RANGE
    if not np.isfinite(value) or not low <= value <= high:
        raise InputError(f"{where} must be a positive number from {low:g} to {high:g}, not {value:g}")


def levels_table(levels, level_ratio: float = DEFAULT_LEVEL_RATIO) -> Levels:
    """Normalise the ``levels=`` argument of :func:`~xlcalib.calibrate` to a :class:`Levels`.

    ``None`` -> the default relative levels (``level_ratio``); a :class:`Levels` passes; a
    mapping holds SDs in score units (as it always has); a two-column table's second header
    decides: ``SD`` -> SDs, ``Relative confidence``/``Confidence``/``Weight`` -> relative.
    """
    if levels is None:
        return default_levels(level_ratio)
    if isinstance(levels, Levels):
        table, kind = dict(levels.values), levels.kind
    elif isinstance(levels, pd.DataFrame):
        kind = _table_kind(levels)
        table = dict(zip(levels.iloc[:, 0], levels.iloc[:, 1]))
    else:
        table, kind = dict(levels), "sd"
    if kind not in ("sd", "relative"):
        raise InputError(f"levels kind must be 'sd' or 'relative', not {kind!r}")
    out, seen = {}, set()
    what = "SD" if kind == "sd" else "relative confidence"
    for name, value in table.items():
        key = str(name).strip().lower()
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise InputError(f"levels table: the {what} for level '{name}' is not a number ({value!r})") from None
        check_level_value(value, kind, f"levels table: the {what} for level '{name}'")
        if key in seen:
            raise InputError(f"levels table: level '{name}' is listed twice")
        seen.add(key)
        out[str(name).strip()] = value
    if not out:
        raise InputError("the levels table is empty")
    return Levels(out, kind)
