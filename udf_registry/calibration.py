"""Calibration family: CALIB_VALUES, CALIB_BIASES, CALIB_STATS, CALIB_RESIDUALS, CALIB_DESIGN, CALIB_RANKING,
CALIB_VERIFY_DRAW (a lottery re-run from its Lottery sheet), CALIB_NEXT_READS, the assessor-behaviour tables (CALIB_FIT, CALIB_UNEXPECTED, CALIB_SEPARATION,
CALIB_EXACT_AGREEMENT, CALIB_GROUP_BIAS, CALIB_GROUP_AUDIT, CALIB_GAINS) and the review grid readers
CALIB_FROM_GRID and CALIB_GRID_REPORT."""
from __future__ import annotations

import hashlib
import marshal
import pickle
import re
from collections import OrderedDict

import numpy as np
import pandas as pd

import xlcalib
import xlcalib.imports
from xlcalib.cells import (
    as_rows,
    as_vector,
    entry_position,
    excel_error_code,
    header_key,
    is_blank,
    is_blank_range,
    is_number_text,
    label_vector,
    number_vector,
    parse_choice,
    parse_flag,
    parse_label,
    parse_number,
    parse_whole,
    same_length,
    trim_trailing_blanks,
)
from xlcalib.calibration.behaviour.verdict import linkage_note
from xlcalib.calibration.decide.ranking import lottery_method
from xlcalib.calibration.meanings import statistic_meaning
from xlcalib.errors import InputError
from xlcalib.imports import evaluations_frame
from xlcalib.inputs import EVALUATION_COLUMNS
from xlcalib.inputs.lottery import verify_lottery_cells

from .registry import Arg, Cells, category, table_cells, to_cells, udf

CATEGORY = category("xlcalib Calibration", reference='MacKay, Kenna, Low & Parker (2017), "Calibration with confidence: '
                                                      'a principled method for panel assessment", R. Soc. open sci. '
                                                      '4:160760')
CACHE_SIZE = 32
_cache: "OrderedDict[str, _Solved]" = OrderedDict()

_COMMON = (
    Arg("assessors", "Range of assessor names, one per evaluation"),
    Arg("objects", "Range of object names (proposals, scripts ...), one per evaluation"),
    Arg("scores", "Range of scores, one per evaluation; a blank score beside an assessor and an object is a pending "
                  "read (allocated, not scored yet): left out of the fit"),
    Arg("uncertainty", "Range of SDs (numbers), confidences, or levels such as High/Medium/Low"),
    Arg("kind", 'Optional: "sd" (default for numbers), "confidence" (relative weights) or "level" (default for text)', range=False),
    Arg("levels", "Optional two-column range: level name and SD (score units), or with a header row Level | "
                  "Relative confidence; default: High/Medium/Low as relative confidences 3.06 / 1 / 0.33"),
    Arg("gauge", 'Optional: "weighted" (default, sum of C\'a*ba = 0) or "simple" (sum of ba = 0)', range=False),
    Arg("header", "Optional TRUE/FALSE: add a header row (default TRUE)", range=False),
)
#: The declared score scale, for the functions whose numbers come from the decision basis (rankings, next reads)
_SCALE = Arg("scale", "Optional two cells: the scale's minimum and maximum (e.g. Settings!B2:B3), or three or more: "
                      "a form's uneven options (1, 3, 6, 8); other scores are refused, scores at its ends read as "
                      "'this or beyond'")
_FORMULA = "s_ao = v_o + b_a + sigma_ao*eta_ao; minimise sum c_ao (s_ao - v_o - b_a)^2, c_ao = 1/sigma_ao^2 (MacKay et al. 2017, eq. 3-5)"
_EXAMPLE_ARGS = "Evaluations[Assessor], Evaluations[Object], Evaluations[Score], Evaluations[Level]"


def _levels(levels):
    """The optional two-column levels range as a :class:`xlcalib.calibration.Levels`.

    A header row decides what the numbers mean: ``SD`` (standard deviations in
    score units, taken at face value) or ``Relative confidence`` /
    ``Confidence`` / ``Weight`` (relative; the noise scale is estimated).
    Without a header row the numbers are SDs.  The first row is taken as a
    header only when it reads like one (``Level``/``Name`` in the first cell or
    a known word in the second); any other first row is data, so a typo in the
    first number is reported, not skipped.
    """
    from xlcalib.calibration import LEVEL_RELATIVE_HEADERS, Levels

    if is_blank_range(levels):
        return None
    table, kind = {}, "sd"
    for i, row in enumerate(as_rows(levels)):
        if len(row) < 2:
            raise InputError("the levels range needs two columns: level name and SD (or relative confidence)")
        if is_blank(row[0]):
            continue
        if i == 0 and _is_levels_header(row):
            second = header_key(row[1]) if isinstance(row[1], str) else ""
            kind = "relative" if second in LEVEL_RELATIVE_HEADERS else "sd"
            continue
        what = "SD" if kind == "sd" else "relative confidence"
        table[str(row[0]).strip()] = parse_number(row[1], f"row {i + 1} of the levels range ({what})")
    return Levels(table, kind) if table else None


def _is_levels_header(row) -> bool:
    from xlcalib.calibration import LEVEL_RELATIVE_HEADERS

    first, second = (header_key(c) if isinstance(c, str) else None for c in row[:2])
    return (first in (*EVALUATION_COLUMNS["level"], "name", "level name") or second in EVALUATION_COLUMNS["sd"]
            or second in LEVEL_RELATIVE_HEADERS)


class _Solved:
    """One cached solve: the core's result, the pending reads it left out (assessor, object: rows whose score
    is still blank), the input-check line that says so (CALIB_STATS shows it) and the cell tables already
    spilled from it."""

    __slots__ = ("result", "pending", "input_checks", "cells")

    def __init__(self, result: xlcalib.CalibrationResult, pending: list[tuple[str, str]], input_checks: str = ""):
        self.result = result
        self.pending = pending
        self.input_checks = input_checks
        self.cells: dict[tuple[str, bool], Cells] = {}


def _solved(assessors, objects, scores, uncertainty, kind, levels, gauge, scale_use: str = "off",
            scale=None) -> _Solved:
    """Solve once per distinct input: a bounded LRU cache keyed by a hash of the cell values and options.

    The key is the SHA-1 of the serialised raw arguments (as xlwings hands
    them over), so a hit skips normalisation too; equal inputs typed
    differently (3 vs 3.0) merely miss.  Errors are never cached.
    """
    scale = _scale_cells(scale)
    options = (kind, levels, gauge) if scale_use == "off" else (kind, levels, gauge, scale_use)
    key = _content_key((assessors, objects, scores, uncertainty, *options, *(() if scale is None else (scale,))))
    if key is not None and key in _cache:
        _cache.move_to_end(key)
        return _cache[key]
    solved = _solve(assessors, objects, scores, uncertainty, kind, levels, gauge, scale_use, scale)
    if key is not None:
        _cache[key] = solved
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return solved


def _content_key(values) -> str | None:
    """SHA-1 of the cell values: marshal for plain cells (lists, text, numbers, None), pickle otherwise.

    Marshal format 2, not the default: from format 3 on, marshal writes an object seen twice as a back-reference,
    and it marks as such every object with more than one reference -- so the same cells gave a different key once
    anything (a cached result's labels, the caller) held on to one of their strings, and the sheet solved again.
    Format 2 writes every value out: equal cells, equal key.
    """
    try:
        data = marshal.dumps(values, 2)
    except ValueError:  # e.g. a date cell
        try:
            data = pickle.dumps(values, 4)
        except (pickle.PicklingError, TypeError, AttributeError):
            return None
    return hashlib.sha1(data).hexdigest()


def _result(assessors, objects, scores, uncertainty, kind, levels, gauge) -> xlcalib.CalibrationResult:
    return _solved(assessors, objects, scores, uncertainty, kind, levels, gauge).result


#: Tables whose numbers compare objects or assessors across the panel: on unconnected groups fitted together
#: they rest on the model's assumption, and their last row says so.
_COMPARING = {"values", "biases", "ranking", "next_reads"}


def _spill(solved: _Solved, name: str, header, build) -> Cells:
    """The cell table *name* of a cached solve, built once per header setting."""
    flag = parse_flag(header, "header", True)
    key = (name, flag)
    if key not in solved.cells:
        table = build(solved.result)
        rows = table_cells(table, flag) if isinstance(table, dict) else to_cells(table, flag)
        note = linkage_note(solved.result) if name.split(":")[0] in _COMPARING else ""
        if note and rows and isinstance(rows[0], list):
            rows = [*rows, [note] + [None] * (len(rows[0]) - 1)]
        solved.cells[key] = Cells(rows)
    return solved.cells[key]


def _scale_cells(scale) -> tuple[float, ...] | None:
    """The scale argument's cells as numbers: two (minimum, maximum), or three or more (the form's points, uneven
    steps allowed); blank: None."""
    if scale is None or is_blank_range(scale):
        return None
    values = [float(x) for x in number_vector(scale, "scale", allow_blank=True) if x == x]  # blank cells: NaN
    if len(values) < 2:
        raise InputError(f"the scale argument takes two cells, the scale's minimum and maximum, or the form's options "
                         f"(it has {len(values)} number{'' if len(values) == 1 else 's'})")
    return tuple(values)


def _solve(assessors, objects, scores, uncertainty, kind, levels, gauge, scale_use: str = "off",
           scale=None) -> _Solved:
    """The ranges parsed and fitted.  A blank score beside an assessor and an object is a pending read (as on
    the workbook path): left out of the fit, said on CALIB_STATS, and kept for next reads, which count it in
    the loads, never suggest it again and take it as a read that will come."""
    assessors, objects, scores, uncertainty = trim_trailing_blanks(assessors, objects, scores, uncertainty)
    a = label_vector(assessors, "assessor")
    o = label_vector(objects, "object")
    s = number_vector(scores, "score", allow_blank=True)
    pending = np.isnan(s)  # a blank score beside an assessor and an object: allocated, not scored yet
    kind = parse_choice(kind, "kind", ("sd", "confidence", "level"), "") or _uncertainty_kind(uncertainty)
    if pending.any():  # a pending read's confidence may be blank too (it is not used)
        uncertainty = _pending_filled(uncertainty, pending, "pending" if kind == "level" else 1.0)
    # both parsers name blank cells and Excel error values by their position
    u = label_vector(uncertainty, "uncertainty") if kind == "level" else number_vector(uncertainty, "uncertainty")
    same_length(assessors=a, objects=o, scores=s, uncertainty=u)
    gauge = parse_choice(gauge, "gauge", ("weighted", "simple"), "weighted")
    table = _levels(levels)
    scored = np.flatnonzero(~pending)
    waiting = [(a[i], o[i]) for i in np.flatnonzero(pending)]
    if pending.any():
        a, o, s = [a[i] for i in scored], [o[i] for i in scored], s[scored]
        u = [u[i] for i in scored] if kind == "level" else u[scored]
    try:
        result = xlcalib.calibrate(assessors=a, objects=o, scores=s, levels=table, gauge=gauge, scale_use=scale_use,
                                   scale=scale, **{kind: u})
        checks = ""
        if pending.any():  # said on CALIB_STATS, so a forgotten score does not go unseen
            first = entry_position(scores, "score", int(pending.argmax()))
            checks = (f"{len(waiting)} pending evaluation(s) (blank score: allocated, not scored yet) left out, the "
                      f"first in {first}")
        return _Solved(result, waiting, checks)
    except InputError as exc:
        ranges = {"assessor": assessors, "object": objects, "score": scores, "sd": uncertainty,
                  "confidence": uncertainty, "level": uncertainty}
        names = {"sd": "uncertainty", "confidence": "uncertainty", "level": "uncertainty"}
        raise _in_ranges(_renumbered(exc, scored) if pending.any() else exc, ranges, names) from None


def _pending_filled(value, pending: np.ndarray, filler):
    """The uncertainty range with blank cells of pending rows filled (the rows are dropped before the fit), in
    the range's own orientation so every other cell keeps its position in messages."""
    cells, orientation = as_vector(value, "uncertainty")
    if len(cells) != pending.size:
        return value  # same_length reports the mismatch
    cells = [filler if wait and is_blank(cell) else cell for cell, wait in zip(cells, pending)]
    return [[cell] for cell in cells] if orientation == "row" else [cells]


def _renumbered(exc: InputError, scored: np.ndarray) -> InputError:
    """A core error about the scored rows restated with the rows' positions in the ranges (pending rows were
    left out before the fit, so the core's row i is the range's row scored[i])."""
    def original(match) -> str:
        numbers = ", ".join(str(int(scored[int(n) - 1]) + 1) for n in match.group(2).split(", "))
        return f"{match.group(1)} {numbers} of the evaluations"

    message = re.sub(r"\b(rows?) (\d+(?:, \d+)*) of the evaluations", original, exc.message)
    where = dict(exc.where) if isinstance(exc.where, dict) else exc.where
    if isinstance(where, dict) and isinstance(where.get("row"), int):
        where["row"] = int(scored[where["row"]])
    return InputError(message, where)


def _in_ranges(exc: InputError, ranges: dict, names: dict | None = None) -> InputError:
    """A core error about "row i of the evaluations" restated as the cell of the range the user selected.

    The core reports per-evaluation problems with ``where={"row": i, "column": c}``
    (0-based ``i``); here that becomes "row i+1 of the score range" (or "column
    i+1 ..." when the range is a single row).  Errors about several rows keep
    "rows ... of the ranges".
    """
    where = exc.where if isinstance(exc.where, dict) else {}
    message = exc.message
    column, row = where.get("column"), where.get("row")
    prefix = re.match(r"row (\d+) of the evaluations", message)
    if prefix and column in ranges and isinstance(row, int):
        _, orientation = as_vector(ranges[column], column)
        position = f"{orientation} {row + 1} of the {(names or {}).get(column, column)} range"
        message = position + message[prefix.end():]
    message = message.replace("of the evaluations", "of the ranges")
    message = message.replace(", or use per_component=True", "")  # a Python option the cell cannot set
    return InputError(message, exc.where)


def _uncertainty_kind(uncertainty) -> str:
    """Numbers -> "sd", text -> "level"; a mix is an error naming the first odd cell (not a silent guess).

    Blank cells and Excel error values count as neither; the parser reports them.
    Each distinct cell value is classified once (a level column has a handful).
    """
    cells, orientation = as_vector(uncertainty, "uncertainty")
    if all(type(c) is float for c in cells):
        return "sd"
    try:
        distinct = set(cells)
    except TypeError:  # an unhashable cell: let the parser name it
        return "sd"
    kinds = {c: _cell_kind(c) for c in distinct}
    present = set(kinds.values())
    if "text" not in present:
        return "sd"
    if "number" not in present:
        return "level"
    numeric = [i for i, c in enumerate(cells) if kinds[c] == "number"]
    text = [i for i, c in enumerate(cells) if kinds[c] == "text"]
    odd = numeric[0] if len(numeric) < len(text) else text[0]
    raise InputError(
        f"{orientation} {odd + 1} of the uncertainty range is {cells[odd]!r} but other cells hold "
        f"{'levels (text)' if odd in numeric else 'numbers'}; use SDs/confidences or levels, not both"
    )


def _cell_kind(c) -> str:
    """"number", "text" or "other" (blank, Excel error value, logical) for one uncertainty cell."""
    if isinstance(c, bool) or excel_error_code(c) is not None or is_blank(c):
        return "other"
    if isinstance(c, (int, float)):
        return "number"
    if isinstance(c, str):
        return "number" if is_number_text(c) else "text"
    return "other"


def _frame(table: pd.DataFrame, index_name: str, columns: list[str]) -> dict:
    """The index as a first column plus the chosen columns, as named columns (no DataFrame round trip)."""
    return {index_name: table.index, **{c: table[c] for c in columns}}


_SE_FORMULA = ("; se: Var(v_o) = w/C_o + u_o' Cov(b) u_o, u_o = c_.o/C_o, Cov(b) = w (M_reg^-1 - 1 1'/C); "
               "95% interval normal (SDs) or t (levels/confidences: w estimated)")


@udf("CALIB_VALUES", category=CATEGORY,
     help="Calibrated value per object with standard error, 95% interval, reads and raw mean (spills).",
     args=_COMMON, core=xlcalib.calibrate, returns="table",
     columns=('object', 'value', 'se', 'lower', 'upper', 'n', 'raw_mean'),
     example=f"=CALIB_VALUES({_EXAMPLE_ARGS})", formula=_FORMULA + _SE_FORMULA)
def calib_values(assessors, objects, scores, uncertainty, kind=None, levels=None, gauge=None, header=True):
    solved = _solved(assessors, objects, scores, uncertainty, kind, levels, gauge)
    return _spill(solved, "values", header,
                  lambda r: _frame(r.values, "object", ["value", "se", "lower", "upper", "n", "raw_mean"]))


@udf("CALIB_BIASES", category=CATEGORY,
     help="Bias per assessor (positive = lenient) with standard error, 95% interval and reads (spills).",
     args=_COMMON, core=xlcalib.calibrate, returns="table", columns=('assessor', 'bias', 'se', 'lower', 'upper', 'n'),
     example=f"=CALIB_BIASES({_EXAMPLE_ARGS})", formula=_FORMULA + _SE_FORMULA)
def calib_biases(assessors, objects, scores, uncertainty, kind=None, levels=None, gauge=None, header=True):
    solved = _solved(assessors, objects, scores, uncertainty, kind, levels, gauge)
    return _spill(solved, "biases", header, lambda r: _frame(r.biases, "assessor", ["bias", "se", "lower", "upper", "n"]))


@udf("CALIB_STATS", category=CATEGORY, help="Diagnostics of the fit: statistic, value and what it means (mu2, R, w, RMS bound, gauge ...; pending reads left out).",
     args=_COMMON, core=xlcalib.calibrate, returns="table", columns=('statistic', 'value', 'meaning'),
     example=f"=CALIB_STATS({_EXAMPLE_ARGS})", formula=_FORMULA + "; w = R/(N-A-O+components) for confidences")
def calib_stats(assessors, objects, scores, uncertainty, kind=None, levels=None, gauge=None, header=True):
    solved = _solved(assessors, objects, scores, uncertainty, kind, levels, gauge)
    def build(result):
        table = result.diagnostics()[["statistic", "value", "meaning"]]
        if solved.input_checks:
            table = pd.concat([table, pd.DataFrame({"statistic": ["input checks"], "value": [solved.input_checks],
                                                    "meaning": [statistic_meaning("input checks")]})],
                              ignore_index=True)
        return table

    return _spill(solved, "stats", header, build)


@udf("CALIB_RESIDUALS", category=CATEGORY,
     help="Per evaluation: fitted score, residual, standardised residual, anomaly flag, leverage and the z the fit "
          "statistics use (an assessor's outfit is the mean of their z squared).",
     args=_COMMON, core=xlcalib.calibration.CalibrationResult.residual_table, returns="table",
     columns=('assessor', 'object', 'score', 'fitted', 'residual', 'std_residual', 'anomalous', 'leverage', 'z'),
     example=f"=CALIB_RESIDUALS({_EXAMPLE_ARGS})",
     formula="residual e = s_ao - v_o - b_a; std = sqrt(c_ao) e / sqrt(w); anomalous if |std| > 3; leverage h = the "
             "fitted value's share of the read's own score; z = e sqrt(c_ao / (w (1 - h)))")
def calib_residuals(assessors, objects, scores, uncertainty, kind=None, levels=None, gauge=None, header=True):
    solved = _solved(assessors, objects, scores, uncertainty, kind, levels, gauge)
    return _spill(solved, "residuals", header, lambda r: r.residual_table())


@udf("CALIB_DESIGN", category=CATEGORY,
     help="Check a planned assignment before scoring: components, mu2, C_o spread, best extra assignments.",
     args=(Arg("assessors", "Range of assessor names of the planned assignments"),
           Arg("objects", "Range of object names of the planned assignments"),
           Arg("confidence", "Optional range of expected confidences (default 1 each)"),
           Arg("k", "Optional number of extra assignments to suggest (default 5)", range=False),
           Arg("header", "Optional TRUE/FALSE: add a header row (default TRUE)", range=False)),
     core=xlcalib.design_check, returns="table", columns=('item', 'value', 'detail'), example="=CALIB_DESIGN(Plan[Assessor], Plan[Object])",
     formula="mu2 = 2nd smallest eigenvalue of I - C'^-1/2 W C'^-1/2; suggestions ranked by exact mu2 after adding the pair")
def calib_design(assessors, objects, confidence=None, k=None, header=True):
    if is_blank_range(confidence):
        assessors, objects = trim_trailing_blanks(assessors, objects)
    else:
        assessors, objects, confidence = trim_trailing_blanks(assessors, objects, confidence)
    a = label_vector(assessors, "assessor")
    o = label_vector(objects, "object")
    same_length(assessors=a, objects=o)
    c = None
    if not is_blank_range(confidence):
        c = number_vector(confidence, "confidence")
        same_length(assessors=a, confidence=c)
    k = parse_whole(k, "k", 5, low=0)
    try:
        d = xlcalib.design_check(a, o, confidence=c, k=k)
    except InputError as exc:
        raise _in_ranges(exc, {"assessor": assessors, "object": objects, "confidence": confidence}) from None
    rows = [("components", d.n_components, ""), ("mu2", d.mu2, "0 = disconnected, 1 = ideal"),
            ("C_o min", float(d.object_confidence.min()), "lowest total confidence of an object"),
            ("C_o median", float(d.object_confidence.median()), ""),
            ("C_o max", float(d.object_confidence.max()), "")]
    for i, s in d.suggestions.head(k).reset_index(drop=True).iterrows():
        detail = f"mu2 after = {s['mu2_after']:.4g}" if "mu2_after" in s else s.get("connects", "")
        rows.append((f"add {i + 1}", f"{s['assessor']} -> {s['object']}", detail))
    return pd.DataFrame(rows, columns=["item", "value", "detail"])


#: The funding line as a score, an argument of the functions that decide at a line (ranking, next reads)
_THRESHOLD = Arg("threshold", "Optional funding line: a calibrated score (give top_k or threshold, not both)",
                 range=False)


def _funding_line(top_k, threshold) -> tuple[int | None, float | None]:
    """The top_k and threshold arguments: a number of places (whole, at least 1) and a score, each optional."""
    top_k = parse_whole(top_k, "top_k", None, low=1)
    return top_k, None if is_blank(threshold) else parse_number(threshold, "the threshold argument")


_RANKING_COLUMNS = ("object", "rank", "value", "se", "lower", "upper", "raw_mean", "raw_rank", "expected_rank",
                    "rank_lower", "rank_upper", "p_above", "p_above_mc_se", "settled", "decision", "changed", "final",
                    "chance", "joint", "basis")


#: The lottery's two arguments, the same for every ranking function (CALIB_RANKING, RASCH_RANKING).
_LOTTERY = Arg("lottery", 'Optional (needs top_k): TRUE or "informed" -- every object funded with its chance, '
                          'P(above the line), exactly top_k in all; "uniform band" -- the places left after the '
                          'objects above go to the band next to the line with equal chances; FALSE (default): none',
               range=False)
_PUBLIC_SEED = Arg("public_seed", "Optional: the lottery's public seed, any text or number published before the "
                                  "meeting (default: the seed argument); the draw's random numbers are SHA-256 of it, "
                                  "the names and the chances", range=False)


@udf("CALIB_RANKING", category=CATEGORY,
     help="Ranking with rank intervals; given a funding line (top k or a score): P(above the line), "
          "above/below/borderline, the final decision (funded, not funded, funded by lottery, not drawn, to "
          "discuss) and what it rests on (spills).",
     args=(*_COMMON[:4],
           Arg("top_k", "Optional funding line: number of places (objects ranked 1..top_k are above)", range=False),
           _THRESHOLD,
           Arg("level", "Optional coverage of the rank interval (default 0.95)", range=False),
           Arg("draws", "Optional Monte Carlo draws (default 10000, at least 100)", range=False),
           Arg("seed", "Optional random seed (default 0): the same seed gives the same numbers", range=False),
           *_COMMON[4:],
           Arg("epsilon", "Optional borderline cut-off (default 0.05): borderline when P(above) lies between it and "
                          "1 minus it", range=False),
           _LOTTERY,
           _SCALE,
           _PUBLIC_SEED),
     core=xlcalib.calibration.CalibrationResult.ranking, returns="table", columns=_RANKING_COLUMNS,
     example=f"=CALIB_RANKING({_EXAMPLE_ARGS}, 10)",
     formula="draws from the fit's joint Gaussian (b from the reduced system's factor, then v | b; t-scaled when w is "
             "estimated; default model: whole-point scores add their rounding, 1/12, to each read's variance); "
             "P(above) = mean over draws of Phi((m_o(b) - T_-o)/s_o), T_-o the k-th largest other value (conditional "
             "Monte Carlo), made to sum to top_k; more draws until each P is 3 Monte Carlo errors from both cut-offs "
             "(settled) or the budget is spent; or exactly P(v_o > threshold); decision: above if P >= 1 - epsilon, "
             "below if P <= epsilon (settled), else borderline; joint statements: the longest lists above and below "
             "the line that hold all together in 95% of the draws; final: places filled from the strongest statement "
             "down, the band at the line left to discuss, or a lottery: informed (chance = P(above) in ten-thousandths, "
             "systematic sampling in the order of SHA-256 numbers) or uniform band")
def calib_ranking(assessors, objects, scores, uncertainty, top_k=None, threshold=None, level=None, draws=None,
                  seed=None, kind=None, levels=None, gauge=None, header=True, epsilon=None, lottery=None, scale=None,
                  public_seed=None):
    top_k, threshold = _funding_line(top_k, threshold)
    level = None if is_blank(level) else parse_number(level, "the level argument")
    draws = parse_whole(draws, "draws", 10_000, low=100)
    seed = parse_whole(seed, "seed", 0, low=0)
    epsilon = 0.05 if is_blank(epsilon) else parse_number(epsilon, "the epsilon argument")
    lottery = _lottery_argument(lottery)
    public_seed = None if is_blank(public_seed) else public_seed
    solved = _solved(assessors, objects, scores, uncertainty, kind, levels, gauge, scale=scale)

    def build(result):
        table = result.ranking(top_k=top_k, threshold=threshold, level=level, draws=draws, seed=seed,
                               epsilon=epsilon, lottery=lottery, lottery_seed=public_seed)
        columns = {"object": table.index}
        for name in _RANKING_COLUMNS[1:]:
            columns[name] = table[name] if name in table else [None] * len(table)
        return columns

    key = f"ranking:{top_k}:{threshold}:{level}:{draws}:{seed}:{epsilon}:{lottery}:{public_seed!r}"
    return _spill(solved, key, header, build)


def _lottery_argument(value):
    """TRUE/FALSE or the words "informed" / "uniform band" (blank: none), as the core's lottery argument."""
    if is_blank(value):
        return False
    if isinstance(value, str):
        return lottery_method(value) or False
    return "informed" if parse_flag(value, "lottery", False) else False


@udf("CALIB_VERIFY_DRAW", category=CATEGORY,
     help="Re-runs a result workbook's lottery from its Lottery sheet alone: 'matches' or 'does not match', naming "
          "each row that differs.",
     args=(Arg("lottery", "The whole Lottery sheet of a result workbook, from A1 down past the last object "
                          "(e.g. Lottery!A1:G2000): the public seed, places, method, hash and start above the table, "
                          "then each object's chance, uniform number, draw order, stretch and outcome"),),
     core=xlcalib.calibration.decide.lottery.verify_lottery, returns="scalar",
     example="=CALIB_VERIFY_DRAW(Lottery!A1:G2000)",
     formula="each object's number = first 8 bytes of SHA-256('xlcalib lottery 1' TAB seed TAB name TAB chance in "
             "ten-thousandths), / 2^64 its uniform number; hash = SHA-256 of the canonical list; start = first 8 bytes of "
             "the hash x 10^4 / 2^64; informed: the objects of chance strictly between 0 and 1 laid end to end in "
             "the order of their numbers, funded where start + 0, 1, 2 ... falls in their stretch; uniform band: "
             "the smallest numbers of the band win; every cell compared with the re-run")
def calib_verify_draw(lottery):
    return verify_lottery_cells(as_rows(lottery), 1, "the range")[1]


#: The spill shows every column of the core's next-reads table, in its order (one list: a column the core adds
#: appears here too).
_NEXT_READS_COLUMNS = tuple(xlcalib.calibration.NEXT_READS_COLUMNS)


@udf("CALIB_NEXT_READS", category=CATEGORY,
     help="The reads that settle the funding decision best, each with a sentence; never a conflicted pair, a "
          "load above the maximum or a pair outside the subjects; blank scores are pending; se_before/after: "
          "the decisions' SEs, not CALIB_VALUES' (spills).",
     args=(*_COMMON[:4],
           Arg("reads", "Number of extra reads to suggest (default 10)", range=False),
           Arg("top_k", "Optional funding line: number of places", range=False),
           _THRESHOLD,
           Arg("max_load", "Optional: at most this many reads per assessor, existing and pending reads included",
               range=False),
           *_COMMON[4:],
           Arg("conflicts", "Optional two-column range: assessor, object pairs never to suggest (rows naming someone "
                            "with no scored read are left out)"),
           Arg("loads", "Optional two-column range: assessor, max load, existing reads included (beats max_load for "
                        "the assessors listed)"),
           Arg("subjects", "Optional two-column range: name (assessor or object), subjects separated by commas; only "
                           "pairs sharing a subject are suggested (no subjects listed: not restricted)"),
           _SCALE),
     core=xlcalib.calibration.CalibrationResult.next_reads, returns="table", columns=_NEXT_READS_COLUMNS,
     example=f"=CALIB_NEXT_READS({_EXAMPLE_ARGS}, 5, 10, , , , , , TRUE, Assignment!J2:K40, Assignment!A2:B30)",
     formula="greedy: the read (a, o) with the largest expected drop in the objects on the wrong side, "
             "sum_o min(P_o, 1-P_o), E[min(P', 1-P')] = 2 T(z_o, sqrt((1-rho_o)/rho_o)) (Owen's T) with rho_o the "
             "share of Var(v_o) the reads remove (Sherman-Morrison: the covariance after a read does not depend on "
             "its score); no line: the largest drop in sum_o Var(v_o); only pairs the rules allow")
def calib_next_reads(assessors, objects, scores, uncertainty, reads=None, top_k=None, threshold=None, max_load=None,
                     kind=None, levels=None, gauge=None, header=True, conflicts=None, loads=None, subjects=None,
                     scale=None):
    reads = parse_whole(reads, "reads", 10, low=1)
    top_k, threshold = _funding_line(top_k, threshold)
    max_load = parse_whole(max_load, "max_load", None, low=0)
    pairs = [(a, parse_label(o, f"the conflicts range, object of {a!r}"))
             for a, o in _rule_rows(conflicts, "conflicts")]
    per_assessor = {a: parse_whole(n, f"the loads range, max load of {a!r}", None, low=0)
                    for a, n in _rule_rows(loads, "loads")}
    subject_map = dict(_rule_rows(subjects, "subjects"))
    solved = _solved(assessors, objects, scores, uncertainty, kind, levels, gauge, scale=scale)

    def build(result):
        from xlcalib.calibration.decide.read_rules import known_to_panel

        cap = max_load if not per_assessor else {
            **({} if max_load is None else {a: max_load for a in result.biases.index}), **per_assessor}
        rules = known_to_panel(result.biases.index, result.values.index, conflicts=pairs or None, max_load=cap,
                               suitability=subject_map or None)
        table = result.next_reads(reads, top_k=top_k, threshold=threshold, max_load=rules[1], conflicts=rules[0],
                                  suitability=rules[2], pending=solved.pending or None)
        return {name: table[name] for name in _NEXT_READS_COLUMNS}

    rules_key = _content_key((conflicts, loads, subjects))
    return _spill(solved, f"next_reads:{reads}:{top_k}:{threshold}:{max_load}:{rules_key}", header, build)


def _rule_rows(cells, name: str) -> list[tuple]:
    """An optional two-column range as (name, second cell) rows; blank rows are skipped, and so is a first row
    headed like a table (Assessor, Name, Conflict assessor)."""
    if is_blank_range(cells):
        return []
    rows = []
    for i, row in enumerate(as_rows(cells)):
        if len(row) < 2:
            raise InputError(f"the {name} range needs two columns")
        if all(is_blank(c) for c in row[:2]) or (i == 0 and isinstance(row[0], str) and header_key(row[0]) in (
                "assessor", "name", "conflict assessor")):
            continue
        rows.append((parse_label(row[0], f"row {i + 1} of the {name} range, first column"), row[1]))
    return rows


# ----------------------------------------------------------------------------- review grids -> long rows
_GRID_ARGS = (
    Arg("grid", "The grid: a header row of assessor names above one row per proposal (its id in the first column); "
                "cells hold scores or letter grades, COI / N/A mark no evaluation, a blank cell is not assigned; "
                "a weight column may follow an assessor's ('Dr Lee weight')"),
    Arg("scale", 'Optional declared scale, which wins over the one inferred: "1-5", "A, AB, B, BC, C, D" (best '
                 'first) or "A=6, AB=5, B=4"', range=False),
    Arg("header", "Optional TRUE/FALSE: add a header row (default TRUE)", range=False),
)


def _grid(grid, scale):
    from xlcalib.imports import read_cells

    if is_blank_range(grid):
        raise InputError("the grid range is blank: select the proposals x assessors grid with its header row")
    return read_cells(as_rows(grid), scale=None if is_blank(scale) else scale, name="the grid range")


@udf("CALIB_FROM_GRID", category=CATEGORY,
     help="A proposals x assessors grid as long rows (Assessor, Object, Score, uncertainty): letters read on the "
          "declared or inferred scale (higher = better); COI / N/A and blank cells left out (see CALIB_GRID_REPORT).",
     args=_GRID_ARGS, core=xlcalib.imports.read_cells, returns="table", columns=("Assessor", "Object", "Score"),
     columns_note="then the uncertainty column: Confidence (1 each, or the weight column beside an assessor's "
                  "scores), or Level / SD when the grid's confidences are read so",
     example='=CALIB_FROM_GRID(Grid!A1:F40, "A, AB, B, BC, C, D")',
     formula="one row per non-blank scored cell: assessor = its column's header, object = its row's first cell, "
             "score = the cell's number, or the grade's value on the scale (best grade highest)")
def calib_from_grid(grid, scale=None, header=True):
    return evaluations_frame(_grid(grid, scale).evaluations)


@udf("CALIB_GRID_REPORT", category=CATEGORY,
     help="What CALIB_FROM_GRID did not import, cell by cell with the reason (COI, N/A ...), after its notes "
          "(the scale declared or inferred, letters turned so that higher = better, blank cells counted).",
     args=_GRID_ARGS, core=xlcalib.imports.read_cells, returns="table",
     columns=("what", "cell", "assessor", "object", "reason"),
     example='=CALIB_GRID_REPORT(Grid!A1:F40, "A, AB, B, BC, C, D")',
     formula="cells are counted from the range's top-left cell (A1 = its first cell); what = note or left out")
def calib_grid_report(grid, scale=None, header=True):
    result = _grid(grid, scale)
    report = result.report
    n = len(result.notes)
    return pd.DataFrame({"what": ["note"] * n + ["left out"] * len(report),
                         "cell": [""] * n + report["cell"].astype(str).tolist(),
                         "assessor": [""] * n + report["assessor"].astype(str).tolist(),
                         "object": [""] * n + report["object"].astype(str).tolist(),
                         "reason": list(result.notes) + report["reason"].astype(str).tolist()})


# ----------------------------------------------------------------------------- assessor behaviour
_BEHAVIOUR_REFERENCE = ("Wright & Masters (1982) Rating scale analysis; Linacre, FACETS manual (fit, separation, "
                        "bias/interaction)")
_GROUPS_ARG = Arg("groups", "Range of each evaluation's object group (subject, call ...), parallel to the objects; "
                            "blank = no group")


def _object_groups(assessors, objects, scores, uncertainty, groups) -> dict:
    """object -> group from a groups range parallel to the evaluations; an object in two groups is named."""
    *_, objects, _s, _u, groups = trim_trailing_blanks(assessors, objects, scores, uncertainty, groups)
    o = label_vector(objects, "object")
    g = label_vector(groups, "groups", allow_blank=True)
    same_length(objects=o, groups=g)
    mapping, first = {}, {}
    for i, (obj, group) in enumerate(zip(o, g)):
        if group is None:
            continue
        if obj in mapping and mapping[obj] != group:
            raise InputError(f"object {obj} is in group {mapping[obj]!r} (row {first[obj] + 1} of the groups range) "
                             f"and {group!r} (row {i + 1}); give each object one group")
        mapping.setdefault(obj, group)
        first.setdefault(obj, i)
    return mapping


_FIT_COLUMNS = ("element", "n", "infit", "infit_zstd", "outfit", "outfit_zstd", "flagged", "reading")


@udf("CALIB_FIT", category=CATEGORY,
     help="Infit and outfit mean-squares per assessor (or per object) with their ZSTD and a reading: about 1 = as "
          "expected, above 1.5 erratic, below 0.5 too predictable (spills).",
     args=(*_COMMON[:4], Arg("by", 'Optional: "assessor" (default) or "object"', range=False), *_COMMON[4:]),
     core=xlcalib.calibration.CalibrationResult.fit_statistics, returns="table", columns=_FIT_COLUMNS,
     example=f"=CALIB_FIT({_EXAMPLE_ARGS})",
     formula="z = e sqrt(c) / sqrt(w (1 - h)) (leverage-corrected); outfit = mean z^2; infit = sum W z^2 / sum W with "
             "W = c/w (information); ZSTD = (MS^(1/3) - 1)(3/q) + q/3, q^2 = 2/n or 2 sum W^2/(sum W)^2 "
             "(Wright & Masters 1982, pp. 100-101)")
def calib_fit(assessors, objects, scores, uncertainty, by=None, kind=None, levels=None, gauge=None, header=True):
    by = parse_choice(by, "by", ("assessor", "object"), "assessor")
    solved = _solved(assessors, objects, scores, uncertainty, kind, levels, gauge)

    def build(result):
        table = result.fit_statistics(by)
        return {"element": table.index, **{c: table[c] for c in _FIT_COLUMNS[1:]}}

    return _spill(solved, f"fit:{by}", header, build)


_UNEXPECTED_COLUMNS = ("assessor", "object", "score", "expected", "value", "residual", "z", "chance", "other_scores",
                       "flagged", "in_words")


@udf("CALIB_UNEXPECTED", category=CATEGORY,
     help="The reads that stand out, most unexpected first, each with the panel's view and a sentence (spills).",
     args=(*_COMMON[:4], Arg("top", "Optional: the top k reads whether flagged or not (default: the flagged reads)",
                             range=False), *_COMMON[4:]),
     core=xlcalib.calibration.CalibrationResult.unexpected_reads, returns="table", columns=_UNEXPECTED_COLUMNS,
     example=f"=CALIB_UNEXPECTED({_EXAMPLE_ARGS})",
     formula="ranked by |z|, z = e sqrt(c) / sqrt(w (1 - h)); chance = 1 / (2 Phi(-|z|)); flagged: |std_residual| > 3")
def calib_unexpected(assessors, objects, scores, uncertainty, top=None, kind=None, levels=None, gauge=None,
                     header=True):
    top = parse_whole(top, "top", None, low=1)
    solved = _solved(assessors, objects, scores, uncertainty, kind, levels, gauge)

    def build(result):
        table = result.unexpected_reads(top)
        if not len(table):
            raise InputError("no read stands out (none is flagged); give top to list the most unexpected reads")
        return {c: table[c] for c in _UNEXPECTED_COLUMNS}

    return _spill(solved, f"unexpected:{top}", header, build)


_SEPARATION_COLUMNS = ("facet", "n", "observed_sd", "rmse", "true_sd", "separation", "strata", "reliability",
                       "chi_square", "df", "p", "basis", "in_words")


@udf("CALIB_SEPARATION", category=CATEGORY,
     help="Separation G, strata H and separation reliability of the objects and of the assessors: how many levels of "
          "quality the panel can tell apart (spills).",
     args=_COMMON, core=xlcalib.calibration.CalibrationResult.separation, returns="table",
     columns=_SEPARATION_COLUMNS, example=f"=CALIB_SEPARATION({_EXAMPLE_ARGS})",
     formula="RMSE = sqrt(mean SE^2); true SD = sqrt(max(var - RMSE^2, 0)) (posterior means: var + RMSE^2); "
             "R = true var / observed var; G = sqrt(R/(1-R)); H = (4G + 1)/3 (Wright & Masters 1982, ch. 5)")
def calib_separation(assessors, objects, scores, uncertainty, kind=None, levels=None, gauge=None, header=True):
    solved = _solved(assessors, objects, scores, uncertainty, kind, levels, gauge)
    return _spill(solved, "separation", header, lambda r: r.separation().reset_index()[list(_SEPARATION_COLUMNS)])


_AGREEMENT_COLUMNS = ("assessor", "opportunities", "observed", "expected")


@udf("CALIB_EXACT_AGREEMENT", category=CATEGORY,
     help="Per assessor: how often another read of the same object gave exactly the same score, observed and as the "
          "model expects (scores on a grid, e.g. whole points) (spills).",
     args=_COMMON, core=xlcalib.calibration.CalibrationResult.exact_agreement, returns="table", columns=_AGREEMENT_COLUMNS,
     example=f"=CALIB_EXACT_AGREEMENT({_EXAMPLE_ARGS})",
     formula="expected = sum over pairs of sum_k P_i(k) P_j(k), P_i(k) normal around the fitted score with SD "
             "sqrt(w/c - step^2/12), end categories taking the tails")
def calib_exact_agreement(assessors, objects, scores, uncertainty, kind=None, levels=None, gauge=None, header=True):
    solved = _solved(assessors, objects, scores, uncertainty, kind, levels, gauge)
    return _spill(solved, "agreement", header, lambda r: r.exact_agreement().reset_index()[list(_AGREEMENT_COLUMNS)])


_GROUP_BIAS_COLUMNS = ("assessor", "group", "reads", "bias", "se", "lower", "upper", "z", "p", "p_holm", "flagged",
                       "in_words")


@udf("CALIB_GROUP_BIAS", category=CATEGORY,
     help="Each assessor's bias on each group of objects relative to their own overall offset (positive = more "
          "lenient on the group), flagged when beyond chance after Holm's adjustment (spills).",
     args=(*_COMMON[:4], _GROUPS_ARG, *_COMMON[4:]), core=xlcalib.calibration.CalibrationResult.group_bias,
     returns="table", columns=_GROUP_BIAS_COLUMNS,
     example=f"=CALIB_GROUP_BIAS({_EXAMPLE_ARGS}, Evaluations[Group])",
     formula="[delta_a; delta_ag] = (X2'C(I-H)X2)^-1 X2'C e (Frisch-Waugh-Lovell, X2 = [1_a, 1_ag]); bias = "
             "delta_ag (1 - C_ag/C'_a); p two-sided, Holm-adjusted")
def calib_group_bias(assessors, objects, scores, uncertainty, groups, kind=None, levels=None, gauge=None, header=True):
    mapping = _object_groups(assessors, objects, scores, uncertainty, groups)
    solved = _solved(assessors, objects, scores, uncertainty, kind, levels, gauge)

    def build(result):
        table = result.group_bias(mapping)
        if not len(table):
            raise InputError(table.attrs.get("note", "no assessor x group cell to test"))
        return {c: table[c] for c in _GROUP_BIAS_COLUMNS}

    return _spill(solved, f"group_bias:{_content_key(sorted(mapping.items()))}", header, build)


_GROUP_AUDIT_COLUMNS = ("group", "objects", "raw_mean", "value_mean", "se", "difference", "difference_se", "p", "moved",
                        "test_p")


@udf("CALIB_GROUP_AUDIT", category=CATEGORY,
     help="Group means of the calibrated values with standard errors, each group's difference from the panel's "
          "objects, how far calibration moved it, and the p-value of the test that all group means are equal (same "
          "on every row) (spills).",
     args=(*_COMMON[:4], _GROUPS_ARG, *_COMMON[4:]), core=xlcalib.calibration.CalibrationResult.group_audit,
     returns="table", columns=_GROUP_AUDIT_COLUMNS,
     example=f"=CALIB_GROUP_AUDIT({_EXAMPLE_ARGS}, Evaluations[Group])",
     formula="mean_g = lambda_g' v; Var = w (sum lambda^2/C_o + q' H q), q = k - D' lambda (joint posterior); "
             "test_p: Wald test of equal group means (chi-square, or F when w is estimated)")
def calib_group_audit(assessors, objects, scores, uncertainty, groups, kind=None, levels=None, gauge=None,
                      header=True):
    mapping = _object_groups(assessors, objects, scores, uncertainty, groups)
    solved = _solved(assessors, objects, scores, uncertainty, kind, levels, gauge)
    def build(result):
        table = result.group_audit(mapping)
        return {**{c: table[c] for c in _GROUP_AUDIT_COLUMNS[:-1]}, "test_p": [table.attrs["p"]] * len(table)}

    return _spill(solved, f"group_audit:{_content_key(sorted(mapping.items()))}", header, build)


_GAINS_COLUMNS = ("assessor", "gain", "gain_se", "gain_lower", "gain_upper", "bias", "se", "in_words", "test_p")


@udf("CALIB_GAINS", category=CATEGORY,
     help="Scale use: each assessor's gain (1 = spreads scores like the panel, below 1 compresses, above 1 spreads) "
          "with its standard error and interval, the bias at the panel's mean object, and the p-value of the test "
          "that gains differ (same on every row) (spills).",
     args=_COMMON, core=xlcalib.calibrate, returns="table", columns=_GAINS_COLUMNS,
     example=f"=CALIB_GAINS({_EXAMPLE_ARGS})",
     formula="s_ao = m + b_a + g_a (v_o - m) + e; gains random N(1, sigma_g^2), alternating exact fits; test: "
             "Mandel's bundle of lines (exact F, or chi-square for SDs)")
def calib_gains(assessors, objects, scores, uncertainty, kind=None, levels=None, gauge=None, header=True):
    solved = _solved(assessors, objects, scores, uncertainty, kind, levels, gauge, scale_use="on")

    def build(result):
        from xlcalib.calibration.models.scale_use import gain_sentence

        b = result.biases
        words = [gain_sentence(g, s) for g, s in zip(b["gain"], b["gain_se"])]
        return {"assessor": b.index, **{c: b[c] for c in _GAINS_COLUMNS[1:7]}, "in_words": words,
                "test_p": [result.stats["scale_use_p"]] * len(b)}

    return _spill(solved, "gains", header, build)
