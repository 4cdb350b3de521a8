"""The panel as the fit sees it: evaluations as index arrays, scores and confidences, checked.

Whatever form the evaluations arrive in (a long table, parallel sequences,
pandas Series), :func:`panel_data` turns them into integer codes per assessor
and object, float scores and confidences ``c_ao`` (MacKay et al. 2017, eq. 5),
refusing blanks, text, non-finite numbers, values outside the ranges the
solver resolves, unknown levels and repeated (assessor, object) pairs -- each
message naming the evaluation's row and its assessor and object.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...cells import MAX_ABS_SCORE, header_key
from ...errors import InputError
from .levels import CONFIDENCE_RANGE, DEFAULT_LEVEL_RATIO, SD_RANGE, Levels, levels_table

__all__ = ["MAX_ABS_SCORE", "SD_RANGE", "CONFIDENCE_RANGE", "MAX_CONFIDENCE_RATIO", "UNCERTAINTY_KINDS", "PanelData",
           "panel_data", "factorized_labels", "numeric_column", "row_text", "check_calibration_numbers",
           "check_confidence_spread", "grid_to_long"]

# ----------------------------------------------------------------------------
# Numeric ranges of calibration inputs (squares and products stay finite; the solver resolves them)
# ----------------------------------------------------------------------------
# SD_RANGE and CONFIDENCE_RANGE (in .levels: a Levels table is checked against them as well)
#: Largest ratio between the largest and the smallest confidence in one panel: beyond it the reduced
#: system's condition number leaves too few correct digits in the biases.
MAX_CONFIDENCE_RATIO = 1e16
#: The three ways an evaluation states its uncertainty.
UNCERTAINTY_KINDS = ("sd", "confidence", "level")


def check_calibration_numbers(values: np.ndarray, name: str, where) -> np.ndarray:
    """Range check for one calibration input column (``score``, ``sd`` or ``confidence``); returns *values*.

    *where(i)* names the evaluation (row, assessor, object).  Zero and
    negative SDs/confidences are left for the caller's "must be positive"
    message.
    """
    values = np.asarray(values, dtype=float)
    if name == "score":
        bad = np.flatnonzero(np.abs(values) > MAX_ABS_SCORE)
        limit = f"scores must lie within +-{MAX_ABS_SCORE:g}"
    else:
        low, high = SD_RANGE if name == "sd" else CONFIDENCE_RANGE
        bad = np.flatnonzero((values > 0) & ((values < low) | (values > high)))
        limit = f"{name} must lie between {low:g} and {high:g} (rescale the column if its unit is extreme)"
    if bad.size:
        i = int(bad[0])
        raise InputError(f"{where(i)}: {name} {values[i]:g} is out of range: {limit}", {"row": i, "column": name})
    return values


def check_confidence_spread(c: np.ndarray, where) -> np.ndarray:
    """Refuse confidences whose largest/smallest ratio exceeds :data:`MAX_CONFIDENCE_RATIO`; returns *c*."""
    c = np.asarray(c, dtype=float)
    if c.size and np.all(c > 0):
        lo, hi = int(np.argmin(c)), int(np.argmax(c))
        if c[hi] / c[lo] > MAX_CONFIDENCE_RATIO:
            raise InputError(f"the confidences span a ratio of {c[hi] / c[lo]:.3g} ({where(hi)} against {where(lo)}); "
                             f"xlcalib resolves at most {MAX_CONFIDENCE_RATIO:g} (SDs within a factor "
                             f"{MAX_CONFIDENCE_RATIO ** 0.5:g})", {"row": lo, "column": "confidence"})
    return c


# ----------------------------------------------------------------------------
# Columns
# ----------------------------------------------------------------------------
def row_text(i: int) -> str:
    """How a message names evaluation *i* (0-based) of the input."""
    return f"row {i + 1} of the evaluations"


def as_array(values) -> np.ndarray:
    """A column as a numpy array without changing what its cells are.

    A Series or an array keeps its dtype (a float Series stays float: no
    per-cell conversion); a list becomes an object array, because numpy would
    otherwise turn ``[1, "2"]`` into text.
    """
    if isinstance(values, (pd.Series, pd.Index)):
        return values.to_numpy()
    if isinstance(values, np.ndarray):
        return values
    return np.asarray(values, dtype=object)


#: What pandas' C-level type inference says of object columns that hold only numbers (no text, logical or blank).
_NUMBER_KINDS = ("floating", "integer", "mixed-integer-float")


def _first_bad_number(arr: np.ndarray, name: str, ids) -> None:
    """Name the first cell of an object column that is not a number (the slow path runs only to say where)."""
    for i, x in enumerate(arr):
        # a missing marker (None, pandas' NA, blank text) is blank here; a float NaN is left to the finiteness check
        if x is None or (isinstance(x, str) and x.strip() == "") or (x is pd.NA) or (x is pd.NaT):
            raise InputError(f"{row_text(i)} ({ids(i)}): {name} is blank", {"row": i, "column": name})
        if isinstance(x, (bool, np.bool_, str)):
            raise InputError(f"{row_text(i)} ({ids(i)}): {name} is not a number ({x!r})", {"row": i, "column": name})
        try:
            float(x)
        except (TypeError, ValueError):
            raise InputError(f"{row_text(i)} ({ids(i)}): {name} is not a number ({x!r})",
                             {"row": i, "column": name}) from None


def numeric_column(values, name: str, ids) -> np.ndarray:
    """Coerce to float, naming the first row that is blank/text/non-finite or out of range.

    Vectorised: numeric arrays convert in C, object columns are typed by
    pandas' C-level inference and converted at once; only a column holding
    something that is not a number is walked, to name the first bad cell.
    *ids(i)* says which assessor and object evaluation *i* is.
    """
    arr = as_array(values)
    if arr.dtype.kind in "iuf":
        out = arr.astype(float, copy=False)
    elif arr.dtype.kind == "O" and pd.api.types.infer_dtype(arr, skipna=False) in _NUMBER_KINDS:
        out = arr.astype(float)
    else:
        _first_bad_number(arr if arr.dtype.kind == "O" else arr.astype(object), name, ids)
        out = arr.astype(float)
    bad = np.flatnonzero(~np.isfinite(out))
    if bad.size:
        i = int(bad[0])
        what = "blank" if np.isnan(out[i]) else f"not finite ({out[i]})"
        raise InputError(f"{row_text(i)} ({ids(i)}): {name} is {what}", {"row": i, "column": name})
    return check_calibration_numbers(out, name, lambda i: f"{row_text(i)} ({ids(i)})")


#: A separator followed by another or by white space: where a blank name (or one starting with a space) begins.
_SEPARATOR_THEN_BLANK = re.compile(r"\x00(?:\x00|\s)")


def _may_hold_blank(joined: str) -> bool:
    """Whether names joined by NUL may hold a blank one (empty or white space only, as str.strip sees it).

    A blank name starts at the start or right after a separator with white space, a separator or the end;
    a search whose pattern starts with a literal character runs at about 2-3 ns per character (a pattern
    matching a whole blank name between separators took ten times that).  A name that merely starts with a
    space answers "may": the caller then checks each name.
    """
    return (not joined or joined[0].isspace() or joined[0] == "\x00" or joined.endswith("\x00")
            or _SEPARATOR_THEN_BLANK.search(joined) is not None)


def _blank_text(names: np.ndarray) -> np.ndarray | None:
    """Which distinct names are blank text (None when none is).

    One C-level search over the names joined by NUL (which no name from a
    workbook holds) answers the common case -- no blank name -- at once; a
    list that has one, or holds NULs or non-text names, is checked name by name.
    """
    if pd.api.types.infer_dtype(names, skipna=False) == "string":
        joined = "\x00".join(names)
        if joined.count("\x00") == len(names) - 1 and not _may_hold_blank(joined):
            return None
    mask = np.fromiter((type(u) is str and not u.strip() for u in names), dtype=bool, count=len(names))
    return mask if mask.any() else None


def factorized_labels(values, name: str) -> tuple[np.ndarray, pd.Index, np.ndarray]:
    """(codes, distinct ids, the ids) -- a blank id (None, NaN, empty text) is an error naming its row.

    Ids are factorised first (hashing in C) and blank text is looked for among
    the *distinct* ids only, so a million evaluations by 5,000 assessors cost
    5,000 string checks, not a million.
    """
    arr = as_array(values)
    if arr.dtype.kind not in "iufO":
        arr = arr.astype(object)
    codes, uniques = pd.factorize(arr)
    bad = codes < 0  # NaN / None
    if arr.dtype.kind == "O":
        blank_text = _blank_text(np.asarray(uniques, dtype=object))
        if blank_text is not None:
            bad |= blank_text[np.maximum(codes, 0)] & (codes >= 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"{row_text(i)}: the {name} is blank", {"row": i, "column": name})
    return codes.astype(np.intp, copy=False), pd.Index(uniques, dtype=object if arr.dtype.kind == "O" else None), arr


def _table_columns(evaluations):
    """(assessors, objects, scores, uncertainty, kind) from a long table."""
    if not isinstance(evaluations, pd.DataFrame):
        raise InputError("evaluations must be a table (DataFrame) with columns assessor, object, score and one of "
                         "sd/confidence/level")
    lower = {header_key(c): c for c in evaluations.columns}
    missing = [c for c in ("assessor", "object", "score") if c not in lower]
    if missing:
        raise InputError(f"the evaluations table lacks column(s): {', '.join(missing)} "
                         f"(found {', '.join(map(str, evaluations.columns))})")
    kinds = [k for k in UNCERTAINTY_KINDS if k in lower]
    if len(kinds) != 1:
        raise InputError("the evaluations table needs exactly one uncertainty column (sd, confidence or level); "
                         + (f"found {', '.join(kinds)}" if kinds else "found none"))
    kind = kinds[0]
    cols = {k: evaluations[lower[k]].to_numpy() for k in ("assessor", "object", "score", kind)}
    return cols["assessor"], cols["object"], cols["score"], cols[kind], kind


def _sequence_columns(assessors, objects, scores, sd, confidence, level):
    """(assessors, objects, scores, uncertainty, kind) from parallel sequences."""
    given = {k: v for k, v in (("sd", sd), ("confidence", confidence), ("level", level)) if v is not None}
    if assessors is None or objects is None or scores is None:
        raise InputError("give either an evaluations table or assessors=, objects= and scores=")
    if len(given) != 1:
        raise InputError("give exactly one of sd=, confidence= or level= (one uncertainty per evaluation)")
    kind, unc = next(iter(given.items()))
    lengths = {"assessors": len(assessors), "objects": len(objects), "scores": len(scores), kind: len(unc)}
    if len(set(lengths.values())) != 1:
        raise InputError("the input columns differ in length: " + ", ".join(f"{k} {v}" for k, v in lengths.items()))
    return as_array(assessors), as_array(objects), as_array(scores), as_array(unc), kind


def _confidences(unc, kind: str, levels: Levels | None, ids) -> np.ndarray:
    """c_ao per evaluation from SDs (1/SD^2), confidences or level names."""
    where = lambda i: f"{row_text(i)} ({ids(i)})"  # noqa: E731
    if kind == "level":
        table = levels.confidences()
        codes, names = pd.factorize(as_array(unc))  # a few distinct level names: look each up once
        known = np.array([table.get(str(n).strip().lower(), np.nan) for n in names] + [np.nan])
        conf = known[codes]  # code -1 (blank) picks the NaN at the end
        bad = np.flatnonzero(np.isnan(conf))
        if bad.size:
            i = int(bad[0])
            raise InputError(f"{where(i)}: unknown confidence level {unc[i]!r}; known levels: {', '.join(levels.values)}",
                             {"row": i, "column": "level"})
        return check_confidence_spread(conf, where)
    values = numeric_column(unc, kind, ids)
    bad = np.flatnonzero(values <= 0)
    if bad.size:
        i = int(bad[0])
        raise InputError(f"{where(i)}: {kind} must be positive, not {values[i]:g}", {"row": i, "column": kind})
    return check_confidence_spread(1.0 / values**2 if kind == "sd" else values, where)


# ----------------------------------------------------------------------------
# The panel
# ----------------------------------------------------------------------------
@dataclass
class PanelData:
    """One checked panel: who read what, the scores and their confidences.

    ``ai``/``oi`` index ``assessor_names``/``object_names``; ``assessor_labels``
    and ``object_labels`` are the ids as given, one per evaluation (for
    messages and the residuals table).  ``face_value``: the confidences are
    absolute (1/SD^2), so the noise scale is w = 1 rather than estimated.
    """

    ai: np.ndarray
    oi: np.ndarray
    scores: np.ndarray
    confidences: np.ndarray
    assessor_names: pd.Index
    object_names: pd.Index
    assessor_labels: np.ndarray
    object_labels: np.ndarray
    kind: str
    levels: Levels | None

    @property
    def face_value(self) -> bool:
        return self.kind == "sd" or (self.kind == "level" and self.levels.kind == "sd")

    @property
    def n_evaluations(self) -> int:
        return int(self.ai.size)

    @property
    def n_assessors(self) -> int:
        return len(self.assessor_names)

    @property
    def n_objects(self) -> int:
        return len(self.object_names)

    @property
    def assessors_linked(self) -> bool:
        """Whether some assessor read two or more objects.  When none did (reviewers anonymous per object, or a
        new reviewer for every read) no assessor's stringency can be told apart from the noise of their read."""
        return bool(self.n_evaluations) and int(np.bincount(self.ai, minlength=self.n_assessors).max()) > 1

    def describe(self, i: int) -> str:
        """Evaluation *i* in words: its assessor and object."""
        return f"assessor {self.assessor_labels[i]}, object {self.object_labels[i]}"


def _refuse_repeated_pairs(data: PanelData) -> None:
    """A repeated evaluation is usually a data-entry error, and averaging it away would hide that.

    One sort of the pair keys finds whether any pair repeats (no hashing); only then are the rows named.
    """
    pair = data.ai.astype(np.int64) * data.n_objects + data.oi
    ordered = np.sort(pair)
    if not (ordered[1:] == ordered[:-1]).any():
        return
    dup = pd.Series(pair).duplicated(keep=False).to_numpy()
    if dup.any():
        rows = np.flatnonzero(pair == pair[np.flatnonzero(dup)[0]])
        raise InputError(
            f"assessor {data.assessor_labels[rows[0]]} evaluated object {data.object_labels[rows[0]]} more than once "
            f"(rows {', '.join(str(r + 1) for r in rows)} of the evaluations); keep one evaluation per pair",
            {"row": int(rows[1]), "column": "object"},
        )


def panel_data(evaluations=None, *, assessors=None, objects=None, scores=None, sd=None, confidence=None,
               level=None, levels=None, level_ratio: float = DEFAULT_LEVEL_RATIO) -> PanelData:
    """Check and index a panel given as a long table or as parallel sequences (see :func:`~xlcalib.calibrate`)."""
    if evaluations is not None:
        a_raw, o_raw, s_raw, unc, kind = _table_columns(evaluations)
    else:
        a_raw, o_raw, s_raw, unc, kind = _sequence_columns(assessors, objects, scores, sd, confidence, level)
    if len(a_raw) == 0:
        raise InputError("there are no evaluations")
    ai, a_names, a_lab = factorized_labels(a_raw, "assessor")
    oi, o_names, o_lab = factorized_labels(o_raw, "object")
    ids = lambda i: f"assessor {a_lab[i]}, object {o_lab[i]}"  # noqa: E731
    s = numeric_column(s_raw, "score", ids)
    level_table = levels_table(levels, level_ratio) if kind == "level" else None
    c = _confidences(unc, kind, level_table, ids)
    data = PanelData(ai, oi, s, c, a_names, o_names, a_lab, o_lab, kind, level_table)
    _refuse_repeated_pairs(data)
    if data.n_assessors < 2:
        raise InputError(f"only one assessor ({a_names[0]}); calibration needs at least two assessors who share objects")
    if data.n_objects < 2:
        raise InputError(f"only one object ({o_names[0]}); calibration needs at least two objects")
    return data


# ----------------------------------------------------------------------------
# Grid -> long table
# ----------------------------------------------------------------------------
def _present(values: np.ndarray) -> np.ndarray:
    """True where a grid cell holds something (not NaN/None, not blank text)."""
    blank_text = np.vectorize(lambda x: isinstance(x, str) and x.strip() == "", otypes=[bool])(values)
    return ~pd.isna(pd.DataFrame(values)).to_numpy() & ~blank_text


def grid_to_long(scores_grid, uncertainty_grid=None, kind: str = "sd", object_labels=None,
                 assessor_labels=None) -> pd.DataFrame:
    """Objects x assessors score grid (blank/NaN = not evaluated) -> long evaluations table.

    ``uncertainty_grid`` (same shape) holds SDs, confidences or levels
    (``kind``); without it every evaluation gets ``sd = 1`` (equal weights).
    Labels default to the DataFrame index/columns, else ``O1..`` / ``A1..``.
    A score without an uncertainty (or the reverse) is an error naming the cell.
    """
    if kind not in UNCERTAINTY_KINDS:
        raise InputError(f"kind must be one of {', '.join(UNCERTAINTY_KINDS)}, not {kind!r}")
    is_frame = isinstance(scores_grid, pd.DataFrame)
    frame = scores_grid if is_frame else pd.DataFrame(np.asarray(scores_grid, dtype=object))
    n_obj, n_ass = frame.shape
    objects = list(object_labels) if object_labels is not None else (
        list(frame.index) if is_frame else [f"O{i + 1}" for i in range(n_obj)])
    assessors = list(assessor_labels) if assessor_labels is not None else (
        list(frame.columns) if is_frame else [f"A{j + 1}" for j in range(n_ass)])
    if len(objects) != n_obj or len(assessors) != n_ass:
        raise InputError(f"labels do not match the grid: {n_obj} rows x {n_ass} columns, "
                         f"{len(objects)} object labels, {len(assessors)} assessor labels")
    values = frame.to_numpy(dtype=object)
    present = _present(values)
    r, k = np.nonzero(present)
    out = {"assessor": np.asarray(assessors, dtype=object)[k], "object": np.asarray(objects, dtype=object)[r],
           "score": values[r, k]}
    if uncertainty_grid is None:
        out["sd"] = np.ones(r.size)
        return pd.DataFrame(out)
    unc = (uncertainty_grid.to_numpy(dtype=object) if isinstance(uncertainty_grid, pd.DataFrame)
           else np.asarray(uncertainty_grid, dtype=object))
    if unc.shape != values.shape:
        raise InputError(f"the uncertainty grid is {unc.shape[0]} x {unc.shape[1]} but the score grid is {n_obj} x {n_ass}")
    mismatch = np.argwhere(present != _present(unc))
    if mismatch.size:
        i, j = mismatch[0]
        what = "a score but no uncertainty" if present[i, j] else "an uncertainty but no score"
        raise InputError(f"object {objects[i]}, assessor {assessors[j]} (grid row {i + 1}, column {j + 1}) has {what}",
                         {"row": int(i), "column": int(j)})
    out[kind] = unc[r, k]
    return pd.DataFrame(out)
