"""The evaluations table, checked: messy sheet rows -> a clean panel, every problem at once, by cell.

One floor above the cell rules (:mod:`xlcalib.cells`, which say what one
cell or argument means) and above the numerical core: this module knows the
evaluations sheet -- its header spellings, pending rows (allocated, not yet
scored), the workbook's own scale, lists and levels -- and reports all its
problems in one pass (:class:`Problem`, collected in a :class:`PanelInput`;
:class:`~xlcalib.errors.InputProblems` when any is an error), each named by
sheet and cell.  :func:`checks_frame` gives them as the Checks table
(severity, sheet, cell, problem).  The core never imports it: statistics
stand on :mod:`xlcalib.cells` alone.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .cells import (
    EXCEL_ERRORS,
    MAX_ABS_SCORE,
    MAX_TEXT_CHARS,
    Uncalculated,
    column_letter,
    excel_error_code,
    is_blank,
    merged_range_of,
    parse_label,
    parse_number,
)
from .errors import InputError, InputProblems

__all__ = [
    "EVALUATION_COLUMNS",
    "UNCERTAINTY_KINDS",
    "find_columns",
    "Problem",
    "PanelInput",
    "RawTable",
    "checks_frame",
    "check_evaluations",
    "evaluations_from_rows",
    "read_panel",
    "table_from_block",
    "suggest_name",
    "suggest_names",
]

# ----------------------------------------------------------------------------
# Tables with a header row (CLI, macros, and UDFs given whole tables)
# ----------------------------------------------------------------------------

#: Accepted header spellings for the evaluations table (case-insensitive).
EVALUATION_COLUMNS: dict[str, tuple[str, ...]] = {
    "assessor": ("assessor", "assessors", "rater", "reviewer", "marker"),
    "object": ("object", "objects", "item", "proposal", "script", "candidate"),
    "score": ("score", "scores", "mark", "grade", "rating"),
    "sd": ("sd", "sigma", "standard deviation", "uncertainty"),
    "confidence": ("confidence", "weight"),
    "level": ("level", "confidence level", "certainty"),
}
UNCERTAINTY_KINDS = ("sd", "confidence", "level")


def _canonical(header: Any) -> str:
    return re.sub(r"\s+", " ", str(header).strip().lower()) if not is_blank(header) else ""


def find_columns(header: Sequence[Any], wanted: dict[str, tuple[str, ...]], where: str) -> dict[str, int]:
    """Map canonical column names to positions in a header row (case-insensitive, aliases allowed).

    Raises when one canonical name matches two columns (ambiguous input).
    """
    found: dict[str, int] = {}
    for position, cell in enumerate(header):
        text = _canonical(cell)
        for canonical, aliases in wanted.items():
            if text in aliases:
                if canonical in found:
                    raise InputError(
                        f"{where}: two columns could be '{canonical}' (columns {found[canonical] + 1} and {position + 1})"
                    )
                found[canonical] = position
    return found


# ----------------------------------------------------------------------------
# The evaluations table, column-wise: every problem at once, pending rows, checks
# ----------------------------------------------------------------------------

#: Characters a workbook cannot store (XML 1.0 forbids them); a name holding one is refused by cell.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_TITLES = {"assessor": "Assessor", "object": "Object", "score": "Score", "sd": "SD",
           "confidence": "Confidence", "level": "Level"}


@dataclass(frozen=True)
class Problem:
    """One input problem, found with all the others in a single pass.

    ``severity``: ``"error"`` (the run cannot give a trustworthy result; it
    stops, listing every error) or ``"warning"`` (the run goes on; listed on
    the result's Checks sheet).  ``sheet``/``cell``/``row``/``column`` locate
    it (``cell`` like ``"C12"``, empty when the problem is not one cell;
    ``row`` is the sheet row number); ``message`` says what and where in the
    panel secretary's words, e.g. ``"sheet Evaluations, row 12, column Score
    (C12) is 75, outside the score scale 1 to 9 ..."``.
    """

    severity: str
    sheet: str
    cell: str
    row: int | None
    column: str
    message: str

    def __str__(self) -> str:
        return self.message


@dataclass
class PanelInput:
    """An evaluations sheet read and checked in one pass (see :func:`check_evaluations`, :func:`read_panel`).

    ``frame``: the complete evaluations (assessor, object, score and the
    uncertainty column ``kind``), one row per scored row of the sheet;
    ``sheet_rows``: the sheet row of each frame row, an integer array (to
    point core errors at cells; a list of a million Python numbers would cost
    a tenth of the reading); ``pending``: allocated rows (assessor and object given) without a
    score yet — columns assessor, object, sheet_row — left out of the fit;
    ``problems``: every error and warning; ``settings``: what the checks used
    (``scale`` (min, max) or None, ``assessors``/``objects`` list sizes or
    None, ``levels``); ``hidden_rows``: sheet rows of evaluations hidden in
    the sheet (they count).
    """

    frame: Any
    kind: str
    sheet_rows: Any
    pending: Any
    problems: list[Problem]
    settings: dict = field(default_factory=dict)
    sheet: str = "Evaluations"
    hidden_rows: list[int] = field(default_factory=list)
    #: the table the panel was read from (its other columns, e.g. a Group column, are read from it on request)
    table: Any = None

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity != "error"]

    def raise_errors(self) -> None:
        """Raise :class:`~xlcalib.errors.InputProblems` carrying every problem when any is an error."""
        if self.errors:
            raise InputProblems(self.problems, {"sheet": self.sheet})


def checks_frame(problems: Sequence[Problem]):
    """Problems as a tidy table for the result workbook's Checks sheet: columns severity, sheet, cell, problem.

    Errors first, then warnings, each in sheet-row order; an empty input gives
    an empty table with the same columns.

    >>> checks_frame([Problem("warning", "Evaluations", "A17", 17, "Assessor", "pending")]).columns.tolist()
    ['severity', 'sheet', 'cell', 'problem']
    """
    import pandas as pd

    ordered = sorted(problems, key=lambda p: (p.severity != "error", p.sheet, p.row if p.row is not None else -1))
    return pd.DataFrame({"severity": [p.severity for p in ordered], "sheet": [p.sheet for p in ordered],
                         "cell": [p.cell for p in ordered], "problem": [p.message for p in ordered]},
                        columns=["severity", "sheet", "cell", "problem"])


@dataclass
class RawTable:
    """Cells of a table with a header row, column by column (``columns[j]`` below header cell ``header[j]``).

    ``row_numbers``: sheet row of each body row; ``column_numbers``: sheet
    column (1 = A) of each header position; ``header_row``: the header's row.
    A column is a sequence of raw cells, or an already-parsed float array (a
    CSV number column).
    """

    header: list
    columns: Any
    row_numbers: Any
    column_numbers: list[int]
    header_row: int
    sheet: str
    hidden_rows: tuple = ()
    #: merged cell ranges ("A2:A3") of the sheet: a blank cell inside one is explained
    merged: tuple = ()


def table_from_block(block, sheet: str | None = None) -> RawTable:
    """A :class:`~xlcalib.workbook.Block` (rows of raw cells) as a :class:`RawTable`; leading blank rows skipped."""
    rows = block.rows
    sheet = sheet or block.sheet or "Evaluations"
    h = 0
    while h < len(rows) and all(is_blank(c) for c in rows[h]):
        h += 1
    if h == len(rows):
        raise InputError(f"sheet {sheet} is empty; expected a header row with Assessor, Object, Score and "
                         "SD/Confidence/Level", {"sheet": sheet})
    header, body = list(rows[h]), rows[h + 1:]

    class _Columns:
        def __getitem__(self, j):
            try:
                return [r[j] for r in body]
            except IndexError:
                return [r[j] if j < len(r) else None for r in body]

    row_number = getattr(block, "row_number", None)
    if getattr(block, "row_numbers", ()):
        numbers = np.asarray(block.row_numbers[h + 1:], dtype=np.intp)
    else:
        numbers = np.arange(block.first_row + h + 1, block.first_row + len(rows), dtype=np.intp)
    cols = [block.column_number(j) if row_number else block.first_column + j for j in range(len(header))]
    return RawTable(header, _Columns(), numbers, cols, int(block.row_number(h) if row_number else block.first_row + h),
                    sheet, tuple(getattr(block, "hidden_rows", ())), tuple(getattr(block, "merged", ()) or ()))


@functools.lru_cache(maxsize=1)
def _text_dtype():
    """The dtype pandas gives a column of text by default: ``str`` from pandas 3, ``object`` before."""
    import pandas as pd

    return pd.Series(["text"]).dtype


def _text_series(labels: np.ndarray):
    """Checked labels (all text) as a pandas column of the default text dtype, skipping pandas' type inference
    (which tries numbers and dates first: half the time of building the panel's frame)."""
    import pandas as pd

    return pd.Series(np.asarray(labels), dtype=_text_dtype(), copy=False)


def _where(sheet: str, title: str, letter: str, row: int) -> str:
    return f"sheet {sheet}, row {row}, column {title} ({letter}{row})"


class _Labels(np.ndarray):
    """A label column (object array) that may carry the codes of its distinct values from the column check."""

    codes = None


def _label_codes(labels: np.ndarray, mask: np.ndarray):
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


def _label_column(values, table: RawTable, j: int, title: str, problems: list):
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
    """:func:`_label_column` for cells of any kind (blank, padded, logical, numbers, error codes), per distinct value.

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
            problems.append(_problem(table, j, title, i, parse_label, values[i]))
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
        problems.append(_problem(table, j, title, int(i), _label_check, values[i]))
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


def _problem(table: RawTable, j: int, title: str, i: int, parser, value) -> Problem:
    row = int(table.row_numbers[i])
    letter = column_letter(table.column_numbers[j])
    where = _where(table.sheet, title, letter, row)
    try:
        parser(value, where)
        message = f"{where} could not be read"
    except InputError as exc:
        message = exc.message
    return Problem("error", table.sheet, f"{letter}{row}", row, title, message)


def _number_column(values, table: RawTable, j: int, title: str, problems: list):
    """Floats (NaN for blank), blank mask and problem mask of one column; exact messages for the bad cells."""
    n = len(table.row_numbers)
    if isinstance(values, np.ndarray) and values.dtype.kind == "f":  # parsed by the CSV reader
        out = values.astype(float, copy=True)
        blank = np.zeros(n, dtype=bool)
        bad = ~np.isfinite(out)
        for i in np.flatnonzero(bad):
            problems.append(_problem(table, j, title, int(i), parse_number, float(out[i])))
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
        _mixed_numbers(values, out, blank, bad)
    nonfinite = ~blank & ~bad & ~np.isfinite(out)
    if kinds & {float, int}:
        bad |= nonfinite
    for i in np.flatnonzero(bad):
        problems.append(_problem(table, j, title, int(i), parse_number, values[i]))
    out[bad] = np.nan
    return out, blank, bad


def _mixed_numbers(values: list, out: np.ndarray, blank: np.ndarray, bad: np.ndarray) -> None:
    """Fill *out*, *blank* and *bad* for a number column holding more than numbers: the numbers at once, every
    other cell once per distinct value (text numbers, blanks, error codes, logical values, dates)."""
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


def _norm_name(text: str) -> str:
    return " ".join(text.split()).casefold()


def _one_edit(a: str, b: str) -> bool:
    """True when *a* and *b* differ by one inserted, deleted or replaced character, or two swapped neighbours."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i:] == b[i + 1:]


def suggest_names(name: str, listed: Sequence[str], at_most: int = 3, limit: int = 20_000) -> list[str]:
    """The listed names *name* was likely meant to be: the same apart from case and spaces, else one typing slip.

    A name with more than *at_most* one-slip neighbours (``GR-2025-81`` next to
    ``GR-2025-01`` ... ``GR-2025-80``) gets no suggestion: any guess would be
    arbitrary.  Only lists up to *limit* names are searched for slips.
    """
    key = _norm_name(name)
    same = [candidate for candidate in listed if _norm_name(candidate) == key]
    if same:
        return same[:at_most]
    if len(listed) > limit:
        return []
    folded = name.casefold()
    near = []
    for candidate in listed:
        if _one_edit(folded, candidate.casefold()):
            near.append(candidate)
            if len(near) > at_most:
                return []
    return near


def suggest_name(name: str, listed: Sequence[str], limit: int = 20_000) -> str | None:
    """The one listed name *name* was most likely meant to be (see :func:`suggest_names`), or None."""
    found = suggest_names(name, listed, at_most=1, limit=limit)
    return found[0] if found else None


def _did_you_mean(names: Sequence[str]) -> str:
    quoted = [f"'{n}'" for n in names]
    return "did you mean " + (quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]) + "?"


def _first_cells(labels: np.ndarray, rows: np.ndarray, mask: np.ndarray) -> dict:
    """For each distinct label under *mask*: (first sheet row, count)."""
    import pandas as pd

    sub = pd.DataFrame({"label": labels[mask], "row": rows[mask]})
    if sub.empty:
        return {}
    grouped = sub.groupby("label", sort=False)["row"].agg(["min", "size"])
    return {name: (int(r), int(c)) for name, (r, c) in zip(grouped.index, grouped.to_numpy())}


def check_evaluations(table: RawTable, *, uncertainty: str | None = None, scale: tuple | None = None,
                      assessors: Sequence[tuple[str, str]] | None = None,
                      objects: Sequence[tuple[str, str]] | None = None,
                      levels: Sequence[str] | None = None, scale_where: str = "sheet Settings") -> PanelInput:
    """Check an evaluations table column by column and collect every problem at once.

    Rules, each reported by cell in the words of :func:`parse_number` /
    :func:`parse_label` ("sheet Evaluations, row 12, column Score (C12) is the
    text '3,5' with a decimal comma ..."):

    * fully blank rows are skipped; a row with an assessor and an object but no
      score yet is **pending** (a warning; listed, left out of the fit; its
      uncertainty may be blank);
    * any other blank, text, logical, date, error or never-calculated cell in
      a needed column is an error; names holding control characters or longer
      than an Excel cell are errors;
    * SDs and confidences must be > 0;
    * ``scale`` (min, max): scores outside it are errors ("75 typed for 7.5?");
    * ``assessors`` / ``objects``: the listed names with their cells
      (``("Dr Chen Wei", "Assessors!A5")``); a name not on its list is an error
      with a suggestion (same apart from case and spaces, or one typing slip);
      listed names without a score are warnings; names on a list (or, without
      a list, in the table) that differ only in case or spaces are warnings;
    * ``levels``: level names (case-insensitive) a Level column may use;
    * a pair (assessor, object) given twice is an error naming both rows.

    Returns a :class:`PanelInput`; call ``raise_errors()`` to stop on errors.
    The work is vectorised (numpy/pandas; Python only per distinct value and per
    bad cell), so a clean 10^6-row table is checked in well under a second.
    """
    columns, kind = _evaluation_columns(table, uncertainty)
    check = _TableCheck(table, columns, kind, np.asarray(table.row_numbers, dtype=np.intp), [])
    cells = _read_evaluation_columns(check)
    a, o, s, u = cells.assessor, cells.object, cells.score, cells.uncertainty
    if kind in ("sd", "confidence"):
        _check_positive(check, u, cells.ok)
    if scale is not None:
        _check_scale(check, s, cells.ok, scale, scale_where)
    if kind == "level" and levels is not None:
        _check_levels(check, u, cells.ok, levels)
    for name, labels, listed, word in (("assessor", a, assessors, "Assessors"), ("object", o, objects, "Objects")):
        if listed is not None and len(listed):
            _check_listed_names(check, name, labels, listed, word, cells)
        elif cells.allocated.any():
            _check_name_spellings(check, name, labels, word, cells.allocated)
    if cells.allocated.any():
        _check_repeated_pairs(check, a, o, cells.allocated)
    _report_pending(check, a, o, cells)
    settings = {"scale": tuple(scale) if scale is not None else None,
                "assessors": len(assessors) if assessors else None, "objects": len(objects) if objects else None,
                "levels": list(levels) if levels is not None else None}
    return _panel_input(check, cells, settings)


def _evaluation_columns(table: RawTable, uncertainty: str | None) -> tuple[dict[str, int], str]:
    """Positions of the evaluation columns in the header row, and the uncertainty column's kind; InputError when a
    needed column is missing or the uncertainty column is ambiguous."""
    sheet = table.sheet
    columns = find_columns(table.header, EVALUATION_COLUMNS, f"sheet {sheet}, header row {table.header_row}")
    missing = [name for name in ("assessor", "object", "score") if name not in columns]
    if missing:
        raise InputError(
            f"sheet {sheet}, header row {table.header_row}: missing column(s) {', '.join(m.title() for m in missing)} "
            f"(found: {', '.join(str(h) for h in table.header if not is_blank(h)) or 'nothing'})", {"sheet": sheet})
    present = [kind for kind in UNCERTAINTY_KINDS if kind in columns]
    if uncertainty is not None:
        if uncertainty not in columns:
            raise InputError(f"sheet {sheet}: no '{uncertainty}' column in header row {table.header_row}")
        return columns, uncertainty
    if len(present) == 1:
        return columns, present[0]
    if not present:
        raise InputError(f"sheet {sheet}, header row {table.header_row}: add one uncertainty column: SD, Confidence "
                         "or Level", {"sheet": sheet})
    raise InputError(
        f"sheet {sheet}, header row {table.header_row}: found several uncertainty columns "
        f"({', '.join(p.upper() if p == 'sd' else p.title() for p in present)}); keep exactly one", {"sheet": sheet})


@dataclass
class _TableCheck:
    """One evaluations table under check: where its columns are, its sheet rows, and the problems found so far."""

    table: RawTable
    columns: dict[str, int]
    kind: str
    rows: np.ndarray
    problems: list[Problem]

    @property
    def sheet(self) -> str:
        return self.table.sheet

    def letter(self, name: str) -> str:
        """The column letter of evaluation column *name* ("score" -> "C")."""
        return column_letter(self.table.column_numbers[self.columns[name]])

    def cell(self, name: str, i: int) -> str:
        """The cell of column *name* in body row *i* ("C12")."""
        return f"{self.letter(name)}{int(self.rows[i])}"

    def where(self, name: str, i: int) -> str:
        """The cell in words: "sheet Evaluations, row 12, column Score (C12)"."""
        return _where(self.sheet, _TITLES[name], self.letter(name), int(self.rows[i]))

    def add(self, severity: str, name: str, i: int | None, message: str, column: str | None = None) -> None:
        """Record a problem at column *name* of body row *i* (no cell when *i* is None)."""
        self.problems.append(Problem(severity, self.sheet, self.cell(name, i) if i is not None else "",
                                     int(self.rows[i]) if i is not None else None, column or _TITLES[name], message))


@dataclass
class _EvaluationCells:
    """The four evaluation columns read (labels, numbers or levels) and what each row is."""

    assessor: np.ndarray
    object: np.ndarray
    score: np.ndarray
    uncertainty: np.ndarray
    #: rows naming a readable assessor and object, whatever their score
    allocated: np.ndarray
    #: allocated rows without a score yet
    pending: np.ndarray
    #: rows with every needed cell read: the evaluations
    ok: np.ndarray


def _read_evaluation_columns(check: _TableCheck) -> _EvaluationCells:
    """Read the assessor, object, score and uncertainty columns, reporting bad cells and the blank needed cells of
    rows that are neither blank nor pending, and sort the rows into allocated, pending and complete."""
    table, columns, kind, problems = check.table, check.columns, check.kind, check.problems
    read = {}
    for name in ("assessor", "object", "score", kind):
        read_column = _label_column if name in ("assessor", "object", "level") else _number_column
        read[name] = read_column(table.columns[columns[name]], table, columns[name], _TITLES[name], problems)
    (a, a_blank, a_bad), (o, o_blank, o_bad) = read["assessor"], read["object"]
    (s, s_blank, s_bad), (u, u_blank, u_bad) = read["score"], read[kind]
    empty = a_blank & o_blank & s_blank & u_blank
    allocated = ~a_blank & ~o_blank & ~a_bad & ~o_bad
    pending = allocated & s_blank
    scored = ~empty & ~pending
    for name in ("assessor", "object", "score", kind):  # blank needed cells of rows neither blank nor pending
        parser = parse_label if name in ("assessor", "object", "level") else parse_number
        for i in np.flatnonzero(scored & read[name][1]):
            problems.append(_problem(table, columns[name], _TITLES[name], int(i), parser, None))
    ok = scored & ~(a_blank | o_blank | s_blank | u_blank | a_bad | o_bad | s_bad | u_bad)
    return _EvaluationCells(a, o, s, u, allocated, pending, ok)


def _check_positive(check: _TableCheck, u: np.ndarray, ok: np.ndarray) -> None:
    """SDs and confidences must be greater than 0."""
    kind = check.kind
    word = "an SD" if kind == "sd" else "a confidence"
    for i in np.flatnonzero(ok & (u <= 0)):
        check.add("error", kind, i, f"{check.where(kind, i)} is {u[i]:g}; {word} must be greater than 0")


def _check_scale(check: _TableCheck, s: np.ndarray, ok: np.ndarray, scale: tuple, scale_where: str) -> None:
    """Scores outside the workbook's score scale, with a hint when a missed decimal point explains one."""
    lo, hi = scale
    for i in np.flatnonzero(ok & ((s < lo) | (s > hi))):
        hint = ""
        for factor in (10.0, 100.0) if float(s[i]).is_integer() else ():  # 75 for 7.5: a missed decimal point
            if lo <= s[i] / factor <= hi:
                hint = f" ({s[i] / factor:g} typed as {s[i]:g}?)"
                break
        check.add("error", "score", i, f"{check.where('score', i)} is {s[i]:g}, outside the score scale {lo:g} to "
                                       f"{hi:g} ({scale_where}){hint}")


def _check_levels(check: _TableCheck, u: np.ndarray, ok: np.ndarray, levels: Sequence[str]) -> None:
    """Level names the Levels table does not hold (case-insensitive), each once with its first cell and a guess."""
    import pandas as pd

    kind, rows = check.kind, check.rows
    known = {str(name).strip().lower(): str(name) for name in levels}
    unknown = np.zeros(len(rows), dtype=bool)
    if ok.any():
        keys = pd.Series(u[ok], dtype=object).str.lower().to_numpy(dtype=object)
        unknown[np.flatnonzero(ok)] = ~pd.Series(keys).isin(list(known)).to_numpy()
    for name, (row, count) in _first_cells(u, rows, unknown).items():
        i = int(np.flatnonzero(rows == row)[0])
        guesses = suggest_names(name.lower(), list(known))
        check.add("error", kind, i, f"Level '{name}' ({check.sheet}!{check.cell(kind, i)}{_more_rows(count)}) is not "
                                    f"in the Levels table ({', '.join(known.values())})"
                  + (f"; {_did_you_mean([known[g] for g in guesses])}" if guesses else ""))


def _more_rows(count: int) -> str:
    """' and 2 more rows' after the first cell of a name found on *count* rows."""
    return f" and {count - 1} more row{'s' if count > 2 else ''}" if count > 1 else ""


def _check_listed_names(check: _TableCheck, name: str, labels: np.ndarray, listed: Sequence[tuple[str, str]],
                        word: str, cells: _EvaluationCells) -> None:
    """Against the workbook's list of assessors or objects: names not on it (errors, with a guess), listed names
    without a score (warnings), and list entries that differ only in case or spaces (warnings)."""
    import pandas as pd

    title, used, rows = _TITLES[name], cells.allocated, check.rows
    names = [str(n) for n, _ in listed]
    on_list = np.zeros(len(rows), dtype=bool)
    if used.any():
        on_list[np.flatnonzero(used)] = pd.Series(labels[used], dtype=object).isin(set(names)).to_numpy()
    for label, (row, count) in _first_cells(labels, rows, used & ~on_list).items():
        i = int(np.flatnonzero(rows == row)[0])
        guesses = suggest_names(label, names)
        check.add("error", name, i, f"{title} '{label}' ({check.sheet}!{check.cell(name, i)}{_more_rows(count)}) is "
                                    f"not on the {word} list"
                  + (f"; {_did_you_mean(guesses)}" if guesses else
                     f" ({len(names)} names); add it to the {word} sheet or correct it"))
    scored_names = set(pd.unique(labels[cells.ok])) if cells.ok.any() else set()
    pending_names = set(pd.unique(labels[cells.pending])) if cells.pending.any() else set()
    for listed_name, where in listed:
        if listed_name not in scored_names:
            note = " (its reads are pending)" if listed_name in pending_names else ""
            check.problems.append(_list_problem(where, title, f"{title} '{listed_name}' ({where}) is on the {word} "
                                                              f"list but has no scores yet{note}"))
    groups: dict[str, list[tuple[str, str]]] = {}
    for listed_name, where in listed:
        groups.setdefault(_norm_name(listed_name), []).append((listed_name, where))
    for members in groups.values():
        if len({m for m, _ in members}) > 1:
            text = " and ".join(f"'{m}' ({w})" for m, w in members)
            message = f"{word} list: {text} differ only in case or spaces; they count as different {word.lower()}"
            check.problems.append(_list_problem(members[0][1], title, message))


def _list_problem(where: str, title: str, message: str) -> Problem:
    """A warning at a list entry's cell (*where* like "Assessors!A5")."""
    return Problem("warning", where.split("!")[0], where.split("!")[-1], _row_of(where), title, message)


def _check_name_spellings(check: _TableCheck, name: str, labels: np.ndarray, word: str, used: np.ndarray) -> None:
    """Without a list: names in the table that differ only in case or spaces (warnings naming each spelling's
    first cell).  Distinct names are compared by one C-level casefold of them all joined."""
    import pandas as pd

    codes_used, distinct = _label_codes(labels, used)
    present = np.bincount(codes_used, minlength=len(distinct)) > 0
    distinct = distinct if present.all() else [distinct[k] for k in np.flatnonzero(present)]
    # names hold no \x1f: a control character is refused by the column check
    joined = "\x1f".join(map(str, distinct)).casefold()
    folded = joined.split("\x1f") if distinct else []
    spaced = {k for k, x in enumerate(folded) if "  " in x or "\t" in x or "\n" in x or "\xa0" in x} \
        if ("  " in joined or "\t" in joined or "\n" in joined or "\xa0" in joined) else set()
    keys = [" ".join(x.split()) if k in spaced else x for k, x in enumerate(folded)] if spaced else folded
    if len(set(keys)) == len(keys):
        return
    # rare: look up where the clashing spellings first occur
    distinct, keys = pd.Series(distinct, dtype=object), pd.Series(keys, dtype=object)
    clash = keys.duplicated(keep=False).to_numpy()
    rows = check.rows
    firsts = _first_cells(labels, rows, used & pd.Series(labels, dtype=object).isin(set(distinct[clash])).to_numpy())
    groups: dict[str, list] = {}
    for label, key in zip(distinct[clash], keys[clash]):
        groups.setdefault(key, []).append(label)
    for members in groups.values():
        members.sort(key=lambda m: firsts[m][0])
        i = int(np.flatnonzero(rows == firsts[members[0]][0])[0])
        text = " and ".join(f"'{m}' ({check.sheet}!{check.letter(name)}{firsts[m][0]})" for m in members)
        check.add("warning", name, i, f"{word}: {text} differ only in case or spaces; they are counted as "
                                      f"different {word.lower()} (is it one name typed two ways?)")


def _check_repeated_pairs(check: _TableCheck, a: np.ndarray, o: np.ndarray, used: np.ndarray) -> None:
    """One evaluation per (assessor, object): a pair given twice is an error naming all its rows."""
    import pandas as pd

    ai, a_names = _label_codes(a, used)
    oi = _label_codes(o, used)[0].astype(np.int64)
    pair = oi * max(len(a_names), 1) + ai  # object-major: exports are usually grouped by object (keys nearly sorted)
    if not _any_repeated(pair, (int(oi.max()) + 1) * max(len(a_names), 1) if len(oi) else 0):
        return
    dup = pd.Series(pair).duplicated(keep=False).to_numpy()
    frame = pd.DataFrame({"pair": pair[dup], "i": np.flatnonzero(used)[dup]})
    rows = check.rows
    for _, members in frame.groupby("pair", sort=False)["i"]:
        members = members.to_numpy()
        check.add("error", "object", int(members[1]),
                  f"assessor {a[members[0]]} evaluated object {o[members[0]]} more than once (sheet {check.sheet}, "
                  f"rows {', '.join(str(int(rows[m])) for m in members)}); keep one evaluation per pair")


def _any_repeated(keys: np.ndarray, span: int) -> bool:
    """True when some key of *keys* (whole numbers in 0 .. span-1) occurs twice, found without hashing."""
    if span <= 8 * len(keys) + 4_000_000:  # a flag per possible key: <= 8 bytes a row + 4 MB
        seen = np.zeros(span, dtype=bool)
        seen[keys] = True
        return np.count_nonzero(seen) < len(keys)  # fewer distinct keys than rows
    # a stable sort (timsort) runs through nearly sorted keys in about linear time, faster than hashing
    ordered = np.sort(keys, kind="stable")
    return bool((ordered[1:] == ordered[:-1]).any())


def _report_pending(check: _TableCheck, a: np.ndarray, o: np.ndarray, cells: _EvaluationCells) -> None:
    """A warning per pending row (allocated, not yet scored); an error when the table holds no evaluation at all."""
    rows, sheet, pending = check.rows, check.sheet, cells.pending
    for i in np.flatnonzero(pending):
        check.add("warning", "score", i, f"sheet {sheet}, row {int(rows[i])}: {a[i]} has not yet scored {o[i]} "
                                         f"(pending: left out of this run)")
    if cells.ok.any() or any(p.severity == "error" for p in check.problems):
        return
    if pending.any():
        check.problems.append(Problem("error", sheet, "", None, "Score", f"sheet {sheet}: no scores yet "
                                      f"({int(pending.sum())} evaluations are allocated and all are pending)"))
    else:
        check.problems.append(Problem("error", sheet, "", None, "", f"sheet {sheet} has a header row but no "
                                                                    "evaluations below it"))


def _panel_input(check: _TableCheck, cells: _EvaluationCells, settings: dict) -> PanelInput:
    """The checked panel: problems in order (errors first, by row), the evaluations' frame, the pending rows."""
    import pandas as pd

    table, sheet, kind, rows = check.table, check.sheet, check.kind, check.rows
    problems = check.problems
    if table.merged:
        problems = [_explain_merged(p, table.merged) for p in problems]
    problems.sort(key=lambda p: (p.severity != "error", p.sheet != sheet, p.row if p.row is not None else 0))
    a, o, s, u, ok, pending = cells.assessor, cells.object, cells.score, cells.uncertainty, cells.ok, cells.pending
    keep = slice(None) if ok.all() else np.flatnonzero(ok)  # every row scored (the usual case): no selection
    # the columns are this check's own arrays or fresh selections (no copy needed) of checked text (no type
    # inference needed)
    frame = pd.DataFrame({"assessor": _text_series(a[keep]), "object": _text_series(o[keep]), "score": s[keep],
                          kind: _text_series(u[keep]) if kind == "level" else np.asarray(u[keep], dtype=float)},
                         copy=False)
    sheet_rows = rows[keep].copy()
    hidden = sorted(set(table.hidden_rows) & set(sheet_rows.tolist())) if table.hidden_rows else []
    pend = pd.DataFrame({"assessor": _text_series(a[pending]), "object": _text_series(o[pending]),
                         "sheet_row": rows[pending]}, copy=False)
    return PanelInput(frame, kind, sheet_rows, pend, problems, settings, sheet, hidden, table)


def _explain_merged(problem: Problem, merged: Sequence[str]) -> Problem:
    """Add 'inside merged cells A2:A3' to a problem at a cell of a merged range (its non-anchor cells read blank)."""
    if not problem.cell or problem.severity != "error":
        return problem
    ref = merged_range_of(problem.cell, merged)
    if ref is None:
        return problem
    return Problem(problem.severity, problem.sheet, problem.cell, problem.row, problem.column,
                   f"{problem.message} (the cell is inside merged cells {ref}: unmerge them and fill in every row)")


def _row_of(where: str) -> int | None:
    m = re.search(r"(\d+)$", where)
    return int(m.group(1)) if m else None


def evaluations_from_rows(rows: Sequence[Sequence[Any]], sheet: str = "Evaluations", first_row: int = 1,
                          first_column: int = 1, uncertainty: str | None = None):
    """Read an evaluations table (header row + data rows) into a clean DataFrame.

    A thin form of :func:`check_evaluations` for cells already in hand (a
    UDF's range, a block): fully blank rows are skipped, pending rows (no
    score yet) are left out, and every problem is raised at once as
    :class:`~xlcalib.errors.InputProblems` (an :class:`InputError`).

    Returns ``(frame, kind, sheet_rows)``: a DataFrame with columns
    ``assessor``, ``object``, ``score`` and the uncertainty column; the kind;
    and the sheet row number of each DataFrame row.
    """
    from types import SimpleNamespace

    block = SimpleNamespace(rows=[list(r) for r in rows], first_row=first_row, first_column=first_column,
                            sheet=sheet, hidden_rows=(), row_numbers=())
    block.row_number = lambda i: first_row + i
    block.column_number = lambda j: first_column + j
    panel = check_evaluations(table_from_block(block, sheet), uncertainty=uncertainty)
    panel.raise_errors()
    return panel.frame, panel.kind, panel.sheet_rows.tolist()


def _list_names(backend, sheet_name: str) -> list[tuple[str, str]] | None:
    """Names in the first column of a list sheet (below its header), with their cells; None without such a sheet."""
    actual = backend.find_sheet(sheet_name, required=False)
    if not actual:
        return None
    block = backend.read_block(actual)
    out = []
    started = False
    for i, row in enumerate(block.rows):
        value = row[0] if row else None
        if not started:
            if not is_blank(value):
                started = True  # the header
            continue
        if is_blank(value) or excel_error_code(value) or type(value) is Uncalculated:
            continue
        try:
            name = parse_label(value, "")
        except InputError:
            continue
        out.append((name, f"{actual}!{column_letter(block.column_number(0))}{block.row_number(i)}"))
    return out or None


def _read_scale(backend, problems: list) -> tuple[tuple[float, float] | None, str]:
    """Settings rows "Score scale minimum"/"Score scale maximum" (as the panel_calibration template writes them)."""
    actual = backend.find_sheet("Settings", required=False)
    if not actual:
        return None, ""
    block = backend.read_block(actual)
    found, cells = {}, {}
    for i, row in enumerate(block.rows):
        if len(row) < 2 or is_blank(row[0]) or not isinstance(row[0], str):
            continue
        key = " ".join(row[0].split()).lower()
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
    if len(found) == 2:
        lo, hi = found["score scale minimum"], found["score scale maximum"]
        if lo >= hi:
            problems.append(Problem("error", actual, cells["score scale maximum"], None, "Value",
                                    f"sheet {actual}, cells {cells['score scale minimum']}:{cells['score scale maximum']}"
                                    f": the score scale minimum ({lo:g}) must be below the maximum ({hi:g})"))
            return None, ""
        return (lo, hi), f"sheet {actual}, {cells['score scale minimum']}:{cells['score scale maximum']}"
    return None, ""


def read_table(backend, sheet: str) -> RawTable:
    """The evaluations sheet as a :class:`RawTable`: a backend's own column reader when it has one (CSV), else its block."""
    actual = backend.find_sheet(sheet)
    reader = getattr(backend, "read_table", None)
    if reader is not None:
        return reader(actual)
    return table_from_block(backend.read_block(actual), actual)


def read_panel(backend, sheet: str = "Evaluations", *, levels: Sequence[str] | None = None,
               uncertainty: str | None = None, scale: tuple | None = None, scale_where: str = "") -> PanelInput:
    """Read and check a panel's evaluations in one pass, with the workbook's own lists and scale.

    *backend* is any workbook backend (:mod:`xlcalib.workbook`: openpyxl,
    the fast reader, CSV, xlwings).  Used when present: the Settings rows
    "Score scale minimum"/"Score scale maximum", the first column of the
    Assessors and Objects sheets (below their header), and *levels* (the names
    of the Levels table the run will use).  Returns a :class:`PanelInput` with
    every problem; nothing is raised for cell problems (call
    ``raise_errors()``), only for a sheet that cannot be a table at all.  A *scale* given (the command line's
    ``--scale``, named by *scale_where*) beats the Settings rows.
    """
    problems: list[Problem] = []
    if scale is None:
        scale, scale_where = _read_scale(backend, problems)
    assessors = _list_names(backend, "Assessors")
    objects = _list_names(backend, "Objects")
    table = read_table(backend, sheet)
    panel = check_evaluations(table, uncertainty=uncertainty, scale=scale, assessors=assessors, objects=objects,
                              levels=levels, scale_where=scale_where or "sheet Settings")
    panel.problems[:0] = problems
    panel.problems.sort(key=lambda p: p.severity != "error")
    return panel
