"""One column of the evaluations table read in bulk: names, numbers and levels, every bad cell a problem by cell.

The cell rules are :mod:`xlcalib.cells`' (:func:`~xlcalib.cells.parse_label`,
:func:`~xlcalib.cells.parse_number`); here they run once per *distinct* value of a column (numpy/pandas for
the rest), so a clean million-row table is read in well under a second, and a bad cell is reported in the
same words the one-cell rule uses.
"""
from __future__ import annotations

import functools
import re

import numpy as np

from ..cells import EXCEL_ERRORS, MAX_TEXT_CHARS, Uncalculated, column_letter, is_blank, parse_label, parse_number
from ..errors import InputError
from .problems import Problem
from .table import RawTable

#: Characters a workbook cannot store (XML 1.0 forbids them); a name holding one is refused by cell.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@functools.lru_cache(maxsize=1)
def _text_dtype():
    """The dtype pandas gives a column of text by default: ``str`` from pandas 3, ``object`` before."""
    import pandas as pd

    return pd.Series(["text"]).dtype


def text_series(labels: np.ndarray):
    """Checked labels (all text) as a pandas column of the default text dtype, skipping pandas' type inference
    (which tries numbers and dates first: half the time of building the panel's frame)."""
    import pandas as pd

    return pd.Series(np.asarray(labels), dtype=_text_dtype(), copy=False)


def cell_in_words(sheet: str, title: str, letter: str, row: int) -> str:
    """Where a cell is, as every message says it: "sheet Evaluations, row 12, column Score (C12)"."""
    return f"sheet {sheet}, row {row}, column {title} ({letter}{row})"


class _Labels(np.ndarray):
    """A label column (object array) that may carry the codes of its distinct values from the column check."""

    codes = None


def label_codes(labels: np.ndarray, mask: np.ndarray):
    """(codes, distinct labels) of ``labels[mask]`` — from the column check when it has them, else factorized."""
    import pandas as pd

    known = getattr(labels, "codes", None)
    if known is not None:
        codes, distinct = known
        sub = codes if mask.all() else codes[mask]
        if sub.size and sub.min() >= 0:
            return sub, distinct
    codes, distinct = pd.factorize(pd.Series(labels[mask], dtype=object))
    return np.asarray(codes, dtype=np.intp), list(distinct)


def _plain_names(distinct: list) -> bool:
    """True when every distinct value is a name as typed: text, not empty, no surrounding spaces, printable (no
    control characters), not starting with '#' (an error code such as #N/A) and not longer than an Excel cell.

    Whole-list C-level tests instead of one Python test per name, on the names joined by a printable separator:
    the joined text is printable exactly when every name is, and a printable text's only whitespace is the plain
    space, so an empty name, a surrounding space or a leading '#' shows next to a separator.  A name that holds
    the separator itself can only make the answer False (then the names are checked one by one, as before).
    A value that is not text makes the join fail.
    """
    try:
        wrapped = "|" + "|".join(distinct) + "|"
    except TypeError:
        return False
    if not wrapped.isprintable() or "||" in wrapped or " |" in wrapped or "| " in wrapped or "|#" in wrapped:
        return False
    return len(wrapped) <= MAX_TEXT_CHARS or max(map(len, distinct)) <= MAX_TEXT_CHARS


#: What the check makes of one distinct cell value: read, blank, or a problem (reported by cell).
_READ, _BLANK, _BAD = 0, 1, 2


def _row_status(codes, status: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the status of its distinct value (a missing code, NaN or None, is a blank cell), and an index
    into the distinct values that is safe to take for every row."""
    codes = np.asarray(codes, dtype=np.intp)
    missing = codes < 0
    safe = np.where(missing, 0, codes)
    if not len(status):
        return np.full(len(codes), _BLANK, dtype=np.int8), safe
    return np.where(missing, _BLANK, status[safe]), safe


def label_column(values, table: RawTable, j: int, title: str, problems: list):
    """Labels (object array, None for blank), blank mask and problem mask of one column, checked per distinct value."""
    import pandas as pd

    n = len(table.row_numbers)
    if n and isinstance(values, np.ndarray) and values.dtype == object:
        # the CSV reader's column (and any object array): factorize once; when every distinct value is a plain
        # name, the column is its own label array and the codes are kept for the duplicate and near-name checks
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
        distinct = uniques.tolist()
        if _plain_names(distinct):
            codes = np.asarray(codes, dtype=np.intp)
            blank = codes < 0
            labels = values
            if blank.any():
                labels = values.copy()
                labels[blank] = None  # NaN or None: an empty cell
            labels = labels.view(_Labels)
            labels.codes = (codes, distinct)
            return labels, blank, np.zeros(n, dtype=bool)
        return _label_column_cells(values, table, j, title, problems, (codes, uniques))
    return _label_column_cells(values, table, j, title, problems)


def _label_column_cells(values, table: RawTable, j: int, title: str, problems: list, factorized=None):
    """:func:`label_column` for cells of any kind (blank, padded, logical, numbers, error codes), per distinct value.

    ``factorized``: (codes, distinct values) of *values* when already computed (reused unless logical cells
    must first be set apart).
    """
    import pandas as pd

    n = len(table.row_numbers)
    labels = np.empty(n, dtype=object)
    blank = np.zeros(n, dtype=bool)
    bad = np.zeros(n, dtype=bool)
    if n == 0:
        return labels, blank, bad
    values = values if isinstance(values, list) else list(values)
    kinds = set(map(type, values))
    if bool in kinds or np.bool_ in kinds:  # True == 1 for hashing: keep logical cells apart
        for i in [i for i, v in enumerate(values) if isinstance(v, (bool, np.bool_))]:
            bad[i] = True
            problems.append(cell_problem(table, j, title, i, parse_label, values[i]))
            values[i] = None
        factorized = None  # the logical cells are blanked now: factorize again
    codes, uniques = factorized if factorized is not None else \
        pd.factorize(pd.Series(values, dtype=object), use_na_sentinel=True)
    distinct = uniques.tolist()
    if _plain_names(distinct):  # the common case in bulk: every name as typed
        out, status = np.empty(len(distinct), dtype=object), np.zeros(len(distinct), dtype=np.int8)
        out[:] = distinct
        known_codes = (np.asarray(codes, dtype=np.intp), distinct)
    else:
        out, status = _distinct_labels(distinct)
        known_codes = None
    row_status, safe = _row_status(codes, status)
    if len(distinct):
        labels[:] = out[safe]
    blank |= row_status == _BLANK
    labels[blank] = None
    for i in np.flatnonzero(row_status == _BAD):
        bad[i] = True
        labels[i] = None
        problems.append(cell_problem(table, j, title, int(i), _label_check, values[i]))
    labels = labels.view(_Labels)
    labels.codes = known_codes
    return labels, blank, bad


def _distinct_labels(distinct: list) -> tuple[np.ndarray, np.ndarray]:
    """Each distinct cell value of a name column as its label, and its status (read, blank or a problem)."""
    out = np.empty(len(distinct), dtype=object)
    status = np.zeros(len(distinct), dtype=np.int8)
    for k, value in enumerate(distinct):
        if type(value) is str:
            text = value.strip()
            if text and text[0] != "#" and len(text) <= MAX_TEXT_CHARS and text.isprintable():
                out[k] = text  # the common case: printable text (no control characters), not an error code
            elif not text:
                status[k] = _BLANK
            elif (text[0] == "#" and text.upper() in EXCEL_ERRORS) or _CONTROL.search(text) \
                    or len(text) > MAX_TEXT_CHARS:
                status[k] = _BAD
            else:
                out[k] = text
        elif is_blank(value):
            status[k] = _BLANK
        else:
            try:
                out[k] = parse_label(value, "")
            except InputError:
                status[k] = _BAD
    return out, status


def _label_check(value, where: str):
    """parse_label plus the checks a name needs to be written back to a workbook."""
    label = parse_label(value, where)
    match = _CONTROL.search(label)
    if match:
        raise InputError(f"{where} holds a control character (code {ord(match.group()):#04x} at position "
                         f"{match.start() + 1}) that a workbook cannot store; retype the name")
    if len(label) > MAX_TEXT_CHARS:
        raise InputError(f"{where} is {len(label):,} characters long; a name may have at most {MAX_TEXT_CHARS:,} "
                         "(an Excel cell's limit)")
    return label


def cell_problem(table: RawTable, j: int, title: str, i: int, parser, value) -> Problem:
    """The error at body row *i* of column *j*, in the words *parser* (the one-cell rule) uses for *value*."""
    row = int(table.row_numbers[i])
    letter = column_letter(table.column_numbers[j])
    where = cell_in_words(table.sheet, title, letter, row)
    try:
        parser(value, where)
        message = f"{where} could not be read"
    except InputError as exc:
        message = exc.message
    return Problem("error", table.sheet, f"{letter}{row}", row, title, message)


def number_column(values, table: RawTable, j: int, title: str, problems: list):
    """Floats (NaN for blank), blank mask and problem mask of one column; exact messages for the bad cells."""
    n = len(table.row_numbers)
    if isinstance(values, np.ndarray) and values.dtype.kind == "f":  # parsed by the CSV reader
        out = values.astype(float, copy=True)
        blank = np.zeros(n, dtype=bool)
        bad = ~np.isfinite(out)
        for i in np.flatnonzero(bad):
            problems.append(cell_problem(table, j, title, int(i), parse_number, float(out[i])))
        return out, blank, bad
    values = values if isinstance(values, list) else list(values)
    kinds = set(map(type, values))
    out = np.full(n, np.nan)
    blank = np.zeros(n, dtype=bool)
    bad = np.zeros(n, dtype=bool)
    if n == 0:
        return out, blank, bad
    if kinds <= {float, int}:
        out[:] = values
        blank |= np.isnan(out)  # a NaN cell (pandas, xlwings) is an empty cell
    else:
        percent = _mixed_numbers(values, out, blank, bad)
        if percent is not None:
            problems.append(_percent_among_numbers(table, j, title, percent, out, blank | bad))
    nonfinite = ~blank & ~bad & ~np.isfinite(out)
    if kinds & {float, int}:
        bad |= nonfinite
    for i in np.flatnonzero(bad):
        problems.append(cell_problem(table, j, title, int(i), parse_number, values[i]))
    out[bad] = np.nan
    return out, blank, bad


def _percent_among_numbers(table: RawTable, j: int, title: str, percent: np.ndarray, out: np.ndarray,
                           unread: np.ndarray) -> Problem:
    """The warning for a column where some numbers were written as percentages ("85%", read as 0.85, as Excel
    reads them) and others not ("70"): a scale of percentages and one of points in one column is worth a look."""
    plain = ~percent & ~unread
    first_pct, first_plain = int(np.argmax(percent)), int(np.argmax(plain))
    letter = column_letter(table.column_numbers[j])
    rows = int(table.row_numbers[first_pct]), int(table.row_numbers[first_plain])
    return Problem("warning", table.sheet, f"{letter}{rows[0]}", rows[0], title,
                   f"sheet {table.sheet}, column {title}: {int(percent.sum()):,} value(s) written as percentages "
                   f"(e.g. {letter}{rows[0]}, read as {out[first_pct]:g}) and {int(plain.sum()):,} as plain numbers "
                   f"(e.g. {letter}{rows[1]}, {out[first_plain]:g}): one scale for the column? Check the cells")


def _mixed_numbers(values: list, out: np.ndarray, blank: np.ndarray, bad: np.ndarray) -> np.ndarray | None:
    """Fill *out*, *blank* and *bad* for a number column holding more than numbers: the numbers at once, every
    other cell once per distinct value (text numbers, blanks, error codes, logical values, dates).  Returns the
    mask of cells read from percentages ("85%") when the column also holds plain numbers, else None."""
    import pandas as pd

    n = len(values)
    arr = np.empty(n, dtype=object)
    arr[:] = values
    tarr = np.fromiter(map(type, values), dtype=object, count=n)
    numeric = (tarr == float) | (tarr == int)
    if numeric.any():
        out[numeric] = arr[numeric].astype(float)
        blank |= numeric & np.isnan(out)
    idx = np.flatnonzero(~numeric)
    if not idx.size:
        return
    codes, uniques = pd.factorize(pd.Series(arr[idx], dtype=object), use_na_sentinel=True)
    parsed, status = _distinct_numbers(uniques)
    row_status, safe = _row_status(codes, status)
    out[idx] = np.where(row_status == _READ, parsed[safe] if len(uniques) else np.nan, np.nan)
    blank[idx[row_status == _BLANK]] = True
    bad[idx[row_status == _BAD]] = True
    is_percent = np.array([isinstance(u, str) and u.strip().endswith("%") for u in uniques] + [False], dtype=bool)
    if not is_percent[:-1].any():
        return None
    percent = np.zeros(n, dtype=bool)
    percent[idx] = is_percent[codes] & (row_status == _READ)  # code -1 (a missing cell) reads the False at the end
    plain = ~percent & ~blank & ~bad
    return percent if percent.any() and plain.any() else None


def _distinct_numbers(uniques) -> tuple[np.ndarray, np.ndarray]:
    """Each distinct non-number cell value of a number column as its number (NaN when none), and its status."""
    parsed = np.full(len(uniques), np.nan)
    status = np.zeros(len(uniques), dtype=np.int8)
    for k, value in enumerate(uniques):
        if type(value) is Uncalculated or isinstance(value, bool):
            status[k] = _BAD
        elif is_blank(value):
            status[k] = _BLANK
        else:
            try:
                parsed[k] = parse_number(value, "")
            except InputError:
                status[k] = _BAD
    return parsed, status
