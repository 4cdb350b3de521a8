"""What every result sheet shares: number formats, the columns that mean the same everywhere, the ± rule, plain
words for booleans, and the chart page a chart prints on.

Why one ±: a reader compares the ± of a value on the Ranking with the ± of a bias on Biases and the ± in a
sentence of the Summary; if one were a standard error and another a 95% half-width, every comparison would
be off by a factor of two.  So every ± on every sheet is the half-width of the interval at the run's level
(95% unless the Settings say otherwise), and its header says so.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pandas as pd

from ..workbook.base import DEFAULT_COLUMN_WIDTH, ChartSpec, Column, SheetSpec, column_pixels

SCORE, PROB, COUNT, RELIAB = "0.00", "0%", "0", "0.000"
SIGNED = "+0.00;-0.00;0.00"
PVALUE = '[<0.0001]"<0.0001";0.0000'
#: columns shown with mixed numbers (counts and figures in one column): integers as integers
MIXED = "auto:0.000"
#: the words a true / false cell is shown as (a reader sees "yes", never TRUE)
YES, NO = "yes", "no"

#: Columns that mean the same on every sheet they appear on.
COLUMNS: dict[str, Column] = {c.name: c for c in [
    Column("value", SCORE, "calibrated value: the object's score with every assessor's stringency taken out "
                           "(score units)"),
    Column("raw_mean", SCORE, "plain average of the object's scores, before calibration"),
    Column("se", SCORE, "standard error of the calibrated value (score units)"),
    Column("lower", SCORE, "lower end of the interval at the run's interval level"),
    Column("upper", SCORE, "upper end of the interval at the run's interval level"),
    Column("total_confidence", SCORE, "total confidence: the sum of the confidences of the object's reads (a High "
                                      "read counts about 3 Medium ones, a Low one about a third): more and surer "
                                      "reads, larger"),
    Column("n", COUNT, "number of reads (evaluations)"),
    Column("bias", SIGNED, "assessor's stringency in score units: negative = harsher than the panel, "
                           "positive = more lenient"),
    Column("score", SCORE, "the score as entered"),
    Column("fitted", SCORE, "what the model expects: calibrated value + the assessor's bias"),
    Column("residual", SIGNED, "score minus what the model expects (score units)"),
    Column("std_residual", SIGNED, "residual over the read's noise SD (not corrected for leverage, so a little "
                                   "smaller than z); beyond the anomaly threshold = flagged"),
    Column("leverage", "0.00", "how much of the read's own score its fitted value takes up (0 to 1): a read that "
                               "decides its object's value has a high leverage and a small residual"),
    Column("z", SIGNED, "the residual over its own expected spread, corrected for leverage: the z the fit "
                        "statistics square (an assessor's outfit is the mean of their z squared)"),
    Column("anomalous", None, "yes = the read stands out: ask the assessor to confirm it"),
    Column("certainty", "0.0%", "probability that the most certain label is right"),
]}


def user_names(settings) -> dict[str, str]:
    """The user's own column names for axis titles ("Proposal", "Reviewer", "Mark"), lower-case words otherwise."""
    given = getattr(settings, "headers", None) or {}
    return {name: given.get(name) or name for name in ("assessor", "object", "score")}


def level_text(level) -> str:
    """0.95 -> '95%'."""
    return f"{100 * float(level):.0f}%"


def fmt_number(x: float, digits: int = 2) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.{digits}f}"


def pm_header(level) -> str:
    """The header of every ± column: the half-width of the interval at the run's level."""
    return f"± ({level_text(level)} interval)" if level else "± (interval)"


def pm_meaning(level, what: str = "calibrated value") -> str:
    return (f"half the width of the {level_text(level) if level else ''} interval: the {what} lies within ± this at "
            "the stated level (the same ± on every sheet)")


def half_width(frame: pd.DataFrame) -> np.ndarray:
    """The ± of each row: half the width of its lower..upper interval."""
    return ((frame["upper"] - frame["lower"]) / 2).to_numpy(dtype=float)


def words_for_flags(values) -> list[str]:
    """True / false cells as the words a reader sees ("yes" / "no"); blanks stay blank."""
    array = values.to_numpy() if hasattr(values, "to_numpy") else None
    if array is not None and array.dtype == bool:  # a whole column of flags (every read's): at once
        return np.where(array, YES, NO).tolist()
    out = []
    for v in values:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            out.append("")
        else:
            out.append(YES if bool(v) else NO)
    return out


def value_span(centre, half) -> tuple[float, float]:
    """(lowest, highest) of centre -/+ half over the finite points, a missing half-width counting as 0 (values
    without an interval: scores that fit exactly) -- the span a chart's axis must show."""
    centre = np.asarray(centre, dtype=float)
    half = np.nan_to_num(np.asarray(half, dtype=float), nan=0.0)
    return float(np.nanmin(centre - half)), float(np.nanmax(centre + half))


def nice_floor(x: float) -> float:
    return math.floor(x * 2) / 2


def nice_ceil(x: float) -> float:
    return math.ceil(x * 2) / 2


def verdict_reliability(r: float) -> str:
    if not np.isfinite(r):
        return "unknown"
    return ("excellent" if r >= 0.9 else "good" if r >= 0.75 else "moderate" if r >= 0.5 else "poor")


# ----------------------------------------------------------------------------
# chart pages: a chart prints on a landscape page of its own, never shrinking a table
# ----------------------------------------------------------------------------
#: The chart on its page: width and height (cm), inside a landscape Letter or A4 page with the margins.
CHART_WIDTH_CM, CHART_HEIGHT_CM = 24.0, 15.5
#: Rows the two title lines and the chart take on the page (15 pt rows: 0.53 cm); the data table starts below.
CHART_ROWS = 33
#: Pixels per cm on screen (96 dpi), for the print area to cover the chart.
_PX_PER_CM = 96 / 2.54
#: Default column width of an empty column (characters).
_DEFAULT_WIDTH = DEFAULT_COLUMN_WIDTH


def chart_page(name: str, preamble, data: pd.DataFrame, make: Callable[[int, int], ChartSpec],
               columns: dict[str, Column] | None = None, note: str = "") -> SheetSpec:
    """A sheet *name* that prints one chart on one landscape page: the run's first two lines, the chart, and
    below it (outside what prints) the numbers the chart draws, so a reader can check every point.

    *make(header_row, n_rows)* builds the chart from the data's columns (1-based) once the data's place is known.
    """
    lines = [list(r) for r in list(preamble)[:2]]
    lines += [[]] * (CHART_ROWS + 1 - len(lines))
    lines.append([note or "The numbers the chart above draws (not printed):"])
    spec = SheetSpec(name, data.reset_index(drop=True), lines, columns or {}, one_page=True)
    # the rows before printing: SheetSpec.printable moves the chart down with the data when a line longer than
    # the page's table is split (the backends call it once the print area is known)
    chart = make(spec.header_row, len(spec.frame))
    spec.charts.append(chart)
    spec.print_area = (CHART_ROWS, _columns_covering(spec.widths(), chart.width_cm))
    return spec


def _columns_covering(widths: list[float], width_cm: float) -> int:
    """How many columns (the data's widths, then default ones) reach across *width_cm* (plus a small margin)."""
    need = width_cm * _PX_PER_CM * 1.08 + 20  # spreadsheet programs round column widths differently: a margin
    total, k = 0, 0
    while total < need:
        total += column_pixels(widths[k] if k < len(widths) else _DEFAULT_WIDTH)
        k += 1
    return k


def chart_kwargs(**extra: Any) -> dict[str, Any]:
    """The size and place every chart page's chart has."""
    return {"anchor": "A3", "width_cm": CHART_WIDTH_CM, "height_cm": CHART_HEIGHT_CM, **extra}
