"""One cell or one argument <-> a value: the ground floor every statistic and both spreadsheet paths share.

Everything an adapter receives from a spreadsheet (xlwings UDF arguments, cells
read with openpyxl, an xlwings ``Book``) passes through these functions before
the numerical core sees it.  They never modify their input, and they answer
bad cells with :class:`~xlcalib.errors.InputError` naming the cell's position
in words ("row 7 of the Score range").  Arguments of the core functions
(counts, seeds, probabilities, thresholds) and the memory a request may ask
for are checked here too, so a statistic never depends on the evaluations
table's checker (:mod:`xlcalib.inputs`, one floor up).

Rules (documented once, applied everywhere):

* **Blank** — ``None``, ``""`` or whitespace-only text is a blank cell.
  Blanks are allowed only where the caller says so (``allow_blank=True``),
  and then become ``NaN`` (numbers) or ``None`` (labels).
* **Excel error values** (``#N/A``, ``#VALUE!``, ``#DIV/0!`` ...), whether they
  arrive as text (openpyxl, xlwings ``err_to_str``) or as COM error integers,
  are always rejected with their code named.
* **Numbers** — ints and floats pass; ``NaN``/``inf`` are rejected; booleans
  are rejected (TRUE is not a score); dates/times are rejected ("a date where
  a number was expected" — a common paste accident).
* **Text that looks like a number** is accepted only in the unambiguous
  ``1234.5`` / ``-3`` / ``1e-3`` form (numbers stored as text).  A decimal
  comma (``"3,5"``) or thousands separator (``"1,234"``) is rejected with a
  hint: silently reading ``"3,5"`` as 35 or 3.5 would be a guess.
* **Headers** (a table's header cells, a Settings row's name) are compared by :func:`header_key`: case
  folded, typographic apostrophes and quotes plain, white space (non-breaking spaces, line breaks) one space.
  Every reader of a header compares through it, so a header that matches in one sheet matches in all.
* **Labels** (assessor, object, class names) are trimmed text; a whole number
  that Excel hands over as ``3.0`` becomes the label ``"3"`` so an id column
  typed as numbers matches the same ids typed as text.
* **Shapes** — a range arrives as a scalar, a flat list (one row or one
  column) or a list of rows.  :func:`as_rows` makes it a rectangular list of
  rows (ragged rows are padded with blanks, because Excel ranges are always
  rectangular and raggedness only comes from hand-built lists);
  :func:`as_vector` accepts a single row or a single column.
* **Formula cells never calculated** (:class:`Uncalculated`, from the
  workbook reader) are reported as such, never as blank.
* **Scores** — a score cell beyond :data:`MAX_ABS_SCORE` is refused by the
  statistic that reads it: squares and products of scores stay finite.
* **And back** — :func:`cell_value` turns a Python or numpy value into what a
  cell holds (numpy scalars unboxed, NaN/NaT/NA blank, anything else that is
  not a number, a logical value or a date as text); :func:`column_cells` does
  the same for a whole column at once.  Both spreadsheet paths (the result
  workbooks and the spreadsheet functions) write cells through them.
* **Cell references** — :func:`column_letter` / :func:`column_number` and
  :func:`cell_position` move between ``"C12"`` and (row 12, column 3);
  :func:`merged_range_of` finds the merged range a cell lies in.
"""
from __future__ import annotations

import datetime as _dt
import math
from decimal import Decimal
import operator
import re
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .errors import InputError

__all__ = [
    "MAX_JSON_DEPTH",
    "json_depth",
    "EXCEL_ERRORS",
    "EXCEL_MAX_ROWS",
    "EXCEL_MAX_COLUMNS",
    "MAX_TEXT_CHARS",
    "MAX_ABS_SCORE",
    "MAX_WORK_BYTES",
    "decimal_comma_column",
    "decimal_comma_words",
    "Uncalculated",
    "is_blank",
    "excel_error_code",
    "header_key",
    "as_rows",
    "as_vector",
    "entry_position",
    "parse_number",
    "parse_label",
    "number_vector",
    "label_vector",
    "number_grid",
    "parse_flag",
    "parse_choice",
    "parse_whole",
    "is_blank_range",
    "is_number_text",
    "whole_argument",
    "seed_argument",
    "real_argument",
    "probability_argument",
    "number_table_argument",
    "check_memory",
    "format_bytes",
    "trim_trailing_blanks",
    "same_length",
    "cell_value",
    "column_cells",
    "column_letter",
    "column_number",
    "cell_position",
    "merged_range_of",
]

#: Excel's error values as text, and the COM integers xlwings may pass for them.
EXCEL_ERRORS: dict[str, int] = {
    "#NULL!": -2146826288,
    "#DIV/0!": -2146826281,
    "#VALUE!": -2146826273,
    "#REF!": -2146826265,
    "#NAME?": -2146826259,
    "#NUM!": -2146826252,
    "#N/A": -2146826246,
    "#GETTING_DATA": -2146826245,
    "#SPILL!": -2146826244,
    "#CALC!": -2146826243,
    "#BLOCKED!": -2146826242,
    "#FIELD!": -2146826241,
    "#CONNECT!": -2146826240,
    "#BUSY!": -2146826239,
    "#UNKNOWN!": -2146826238,
    "#PYTHON!": -2146826237,
}
_ERROR_BY_CODE = {code: text for text, code in EXCEL_ERRORS.items()}

# A plain decimal number: optional sign, digits with optional '.', optional exponent.
_PLAIN_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_DECIMAL_COMMA = re.compile(r"^[+-]?\d+,\d+$")
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$")
#: A minus sign as word processors and web forms type it (typographic minus, en dash), before a number.
_MINUS_SIGNS = "\u2212\u2013"
_DIGIT_OR_POINT = "0123456789."


class Uncalculated(str):
    """A formula cell whose value was never calculated (a file written by a program, never opened in Excel).

    A ``str`` holding the formula text, so code that only shows cells still
    works; the parsers report it as such — never as a blank cell.
    """

    def __repr__(self) -> str:
        return f"Uncalculated({str(self)!r})"


UNCALCULATED_TEXT = ("is a formula whose value was never calculated (open and save the file in Excel, "
                     "or enter the value)")


def is_blank(value: Any) -> bool:
    """True for an empty cell: ``None``, empty or whitespace-only text, or a float NaN."""
    if value is None:
        return True
    if isinstance(value, str):
        return value.strip() == ""
    if isinstance(value, float) and math.isnan(value):
        return True
    return False


def excel_error_code(value: Any) -> str | None:
    """The Excel error text (``"#N/A"`` ...) if *value* is an error value, else None."""
    if isinstance(value, str):
        text = value.strip().upper()
        return text if text in EXCEL_ERRORS else None
    if isinstance(value, int) and not isinstance(value, bool):
        return _ERROR_BY_CODE.get(value)
    return None


#: Typographic apostrophes and quotes (autocorrect, a web form's export, a Mac keyboard) as the plain ones a
#: program's list of header names holds: "Reviewer’s score" is the header "Reviewer's score".
_PLAIN_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201b": "'", "\u02bc": "'",
                               "\u201c": '"', "\u201d": '"'})


def header_key(value: Any) -> str:
    r"""A header cell (or a Settings row's name) as every reader compares it; "" for a blank cell.

    Case folded; typographic apostrophes and quotes made plain; every run of white space -- line breaks
    (a wrapped header), tabs and the non-breaking spaces U+00A0 and U+202F (a copy from a web page, French
    typography), which ``str.split`` counts as white space -- one plain space; none at either end.
    One rule for every sheet: a header that matches in an import matches in the evaluations check too.

    >>> header_key("  Reviewer\u2019s\u00a0 SCORE\n(1\u202f-\u202f9) ")
    "reviewer's score (1 - 9)"
    >>> header_key("Conflict\tassessor"), header_key(None), header_key(3)
    ('conflict assessor', '', '3')
    """
    if is_blank(value):
        return ""
    return " ".join(str(value).translate(_PLAIN_QUOTES).split()).casefold()


def _position(name: str, index: int, orientation: str = "row") -> str:
    return f"{orientation} {index + 1} of the {name} range"


def entry_position(value: Any, name: str, index: int) -> str:
    """How messages name entry *index* of a one-row or one-column range: "row 7 of the score range"."""
    return _position(name, index, as_vector(value, name)[1])


def as_rows(value: Any) -> list[list[Any]]:
    """Any Excel-shaped value as a rectangular list of rows.

    A scalar becomes ``[[value]]``; a flat list ``[a, b, c]`` is read as one
    *row* (xlwings hands a one-row range that way; pass ``ndim=2`` or use
    :func:`as_vector` when orientation does not matter); ragged rows are padded
    with ``None`` on the right.
    """
    if value is None or isinstance(value, (str, bytes, int, float, bool, _dt.date, _dt.time)):
        return [[value]]
    if hasattr(value, "tolist") and not isinstance(value, (list, tuple)):
        value = value.tolist()
        if not isinstance(value, list):
            return [[value]]
    rows = list(value)
    if not rows:
        return []
    if not any(isinstance(row, (list, tuple)) for row in rows):
        return [list(rows)]
    out = [list(row) if isinstance(row, (list, tuple)) else [row] for row in rows]
    width = max(map(len, out))
    if any(len(row) != width for row in out):
        out = [row + [None] * (width - len(row)) for row in out]
    return out


_first = operator.itemgetter(0)


def as_vector(value: Any, name: str) -> tuple[list[Any], str]:
    """A single row or single column as a flat list, and its orientation ("row"/"column").

    The orientation word is what positions are reported with: entries of a
    column are *rows* ("row 7 of the Score range"), entries of a row are
    *columns*.  A block with more than one row and column is an error.
    """
    if type(value) is list and value and type(value[0]) is list and set(map(type, value)) == {list} \
            and set(map(len, value)) == {1}:
        return list(map(_first, value)), "row"  # fast path: a column as xlwings hands it over (ndim=2)
    rows = as_rows(value)
    if not rows or not rows[0]:
        return [], "row"
    n_rows, n_cols = len(rows), len(rows[0])
    if n_cols == 1:
        return [row[0] for row in rows], "row"
    if n_rows == 1:
        return list(rows[0]), "column"
    raise InputError(
        f"the {name} range is {n_rows} rows x {n_cols} columns; select a single row or a single column",
        {"range": name},
    )


def _is_blank_cell(value: Any, where: str) -> bool:
    """True for a blank cell.  A never-calculated formula or an Excel error value is refused here, alike for a
    number and a name: neither is a value, and a formula is never taken for a blank."""
    if type(value) is Uncalculated:
        raise InputError(f"{where} {UNCALCULATED_TEXT}")
    if is_blank(value):
        return True
    error = excel_error_code(value)
    if error is not None:
        raise InputError(f"{where} holds the Excel error {error}")
    return False


def parse_number(value: Any, where: str, allow_blank: bool = False) -> float:
    """One cell as a float; blank -> NaN when allowed.  *where* names the cell in messages."""
    if _is_blank_cell(value, where):
        if allow_blank:
            return math.nan
        raise InputError(f"{where} is blank; a number is required")
    if isinstance(value, bool):
        raise InputError(f"{where} is a logical value ({'TRUE' if value else 'FALSE'}); a number is required")
    if isinstance(value, (_dt.date, _dt.time, _dt.timedelta)):
        raise InputError(f"{where} holds a date or time ({value}); a number is required (check the cell format)")
    if isinstance(value, (int, float, np.integer, np.floating)):
        number = float(value)
        if not math.isfinite(number):
            raise InputError(f"{where} is not a finite number ({number})")
        return number
    if isinstance(value, str):
        return _number_from_text(value.strip().replace("\u00a0", ""), where)
    raise InputError(f"{where} holds a value of type {type(value).__name__}; a number is required")


def _number_from_text(text: str, where: str) -> float:
    """A number stored as text, in the plain ``1234.5`` form only: a decimal comma or a thousands separator is
    refused with a hint, since reading "3,5" as 35 or 3.5 would be a guess.  Two forms are read as what they
    unambiguously say: a typographic minus or an en dash before the digits (``"−2"``, as word processors and
    web forms write -2), and a percentage (``"85%"`` is 0.85, as Excel reads the text it writes for a percent cell
    into a CSV file)."""
    if len(text) > 1 and text[0] in _MINUS_SIGNS and text[1] in _DIGIT_OR_POINT:
        text = "-" + text[1:]
    if text.endswith("%") and _PLAIN_NUMBER.match(text[:-1].rstrip()):
        number = float(Decimal(text[:-1].rstrip()).scaleb(-2))  # the decimal point moved in the text: exact
        if not math.isfinite(number):
            raise InputError(f"{where} is the text '{text[:30]}', beyond the largest number a cell can hold")
        return number
    if _PLAIN_NUMBER.match(text):
        number = float(text)
        if not math.isfinite(number):  # "1e999": beyond the largest number a cell can hold
            raise InputError(f"{where} is the text '{text[:30]}', beyond the largest number a cell can hold")
        return number
    if _THOUSANDS.match(text):
        raise InputError(f"{where} is the text '{text}': a thousands separator or a decimal comma? "
                         "Enter it as a number so it is not misread")
    if _DECIMAL_COMMA.match(text):
        raise InputError(
            f"{where} is the text '{text}' with a decimal comma; enter it as a number "
            f"(e.g. {text.replace(',', '.')}) so it is not misread"
        )
    shown = text if len(text) <= 30 else text[:27] + "..."
    raise InputError(f"{where} is text ('{shown}'); a number is required")


def parse_label(value: Any, where: str, allow_blank: bool = False) -> str | None:
    """One cell as an identifier text; whole numbers lose their '.0'; blank -> None when allowed."""
    if _is_blank_cell(value, where):
        if allow_blank:
            return None
        raise InputError(f"{where} is blank; a name or id is required")
    if isinstance(value, bool):
        raise InputError(f"{where} is a logical value; a name or id is required")
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value):
            raise InputError(f"{where} is not a finite number")
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (_dt.datetime, _dt.date)):
        return value.isoformat()
    return str(value).strip()


def number_vector(value: Any, name: str, allow_blank: bool = False) -> np.ndarray:
    """A one-row or one-column range as a float array (NaN for allowed blanks)."""
    cells, orientation = as_vector(value, name)
    out = np.empty(len(cells), dtype=float)
    for i, cell in enumerate(cells):
        # common case inline (a finite number); everything else gets the full rules and a positioned message
        if type(cell) is float and math.isfinite(cell):
            out[i] = cell
        else:
            out[i] = parse_number(cell, _position(name, i, orientation), allow_blank)
    return out


def label_vector(value: Any, name: str, allow_blank: bool = False) -> list[str | None]:
    """A one-row or one-column range as a list of labels (None for allowed blanks)."""
    cells, orientation = as_vector(value, name)
    if cells and set(map(type, cells)) == {str}:  # fast path: a text column (checked per distinct value)
        out = list(map(str.strip, cells))
        if not any(not text or (text[0] == "#" and text.upper() in EXCEL_ERRORS) for text in set(out)):
            return out
    out = []
    for i, cell in enumerate(cells):
        if type(cell) is str:
            text = cell.strip()
            if text and (text[0] != "#" or text.upper() not in EXCEL_ERRORS):
                out.append(text)
                continue
        out.append(parse_label(cell, _position(name, i, orientation), allow_blank))
    return out


def header_cells(rows: list[list[Any]], known: Iterable[Any] = ()) -> list[str] | None:
    """The first row of a selected block when it is a row of names above the data (rater names over their
    ratings: what people select with B1:E7), else None.

    A header when every cell of the first row is text that is not a number, the texts are distinct, and none of
    them is a value of the rows below nor one of the *known* values (declared categories): a first subject's
    ratings always share a value with the others, or are declared categories.  Needs a row below it.

    >>> header_cells([["Ann", "Bo"], [1, 2], [2, 2]]), header_cells([["K", "L"], ["L", "K"]])
    (['Ann', 'Bo'], None)
    """
    if len(rows) < 2 or not rows[0]:
        return None
    first = rows[0]
    if not all(isinstance(c, str) and c.strip() and not is_number_text(c) for c in first):
        return None
    names = [c.strip() for c in first]
    below = {str(c).strip() for row in rows[1:] for c in row if not is_blank(c)}
    below |= {str(c).strip() for c in known if not is_blank(c)}
    if len(set(names)) < len(names) or any(n in below for n in names):
        return None
    return names


def number_grid(value: Any, name: str, allow_blank: bool = True, header: bool = False) -> np.ndarray:
    """A block of cells as a 2-D float array; blanks are NaN (missing) when allowed.  ``header``: a first row
    of names above the numbers (:func:`header_cells`) is left out; every message still names the cell by its
    row in the block selected."""
    rows = as_rows(value)
    skip = 1 if header and header_cells(rows) is not None else 0
    rows = rows[skip:]
    out = np.empty((len(rows), len(rows[0]) if rows else 0), dtype=float)
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            out[r, c] = parse_number(cell, f"row {r + 1 + skip}, column {c + 1} of the {name} range", allow_blank)
    return out


def parse_flag(value: Any, name: str, default: bool) -> bool:
    """An optional TRUE/FALSE argument (also 1/0 and yes/no text)."""
    if is_blank(value):
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in {"true", "yes", "y", "1", "false", "no", "n", "0"}:
        return value.strip().lower() in {"true", "yes", "y", "1"}
    raise InputError(f"the {name} argument must be TRUE or FALSE, not {value!r}")


def parse_choice(value: Any, name: str, choices: Sequence[str], default: str) -> str:
    """An optional text argument from a fixed list (case-insensitive)."""
    if is_blank(value):
        return default
    text = str(value).strip().lower()
    lowered = {choice.lower(): choice for choice in choices}
    if text not in lowered:
        raise InputError(f"the {name} argument must be one of {', '.join(choices)}; got {value!r}")
    return lowered[text]


def parse_whole(value: Any, name: str, default: int | None, low: int = 1, high: int | None = None,
                why: str = "") -> int | None:
    """An optional whole-number argument (k, samples, seed ...); blank -> *default*.

    ``2.5`` is rejected rather than truncated to 2, and so is anything below
    *low* or above *high*: a silently changed count would be a silently
    different answer.
    """
    if is_blank(value):
        return default
    return whole_argument(value, name, low=low, high=high, why=why)


# ----------------------------------------------------------------------------
# Arguments (counts, seeds, probabilities, thresholds) and the work they ask for
# ----------------------------------------------------------------------------

#: Largest working memory a single request may ask for.  Size arguments
#: (bootstrap replicates, Monte Carlo samples, ...) are refused above it with
#: the memory the request would need named in the message: on a typical
#: laptop more than this means swapping or the process being killed.
MAX_WORK_BYTES = 2 * 1024**3
#: Excel's own sheet limits (a template or result sheet never exceeds them).
EXCEL_MAX_ROWS = 1_048_576
EXCEL_MAX_COLUMNS = 16_384
#: Longest text an Excel cell holds (a longer name could not be written back to a workbook).
MAX_TEXT_CHARS = 32_767
#: Largest seed accepted (numpy's generators take any non-negative integer;
#: a cell holds integers exactly only up to 2**53).
MAX_SEED = 2**53
#: Largest |score| a statistic accepts in a score cell: squared residuals times confidences (calibration) and
#: squared differences (agreement, error variances) stay finite, and scores rounded for agreement stay exact
#: (a float holds whole numbers exactly up to 2**53, about 9e15).
MAX_ABS_SCORE = 1e15


def format_bytes(n: float) -> str:
    """``34 GiB``-style text for a byte count."""
    for unit, size in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} bytes"


def check_memory(n_bytes: float, what: str, hint: str) -> None:
    """Refuse a request whose working arrays would exceed :data:`MAX_WORK_BYTES`, naming the need.

    *what* says what would be built ("1000000 bootstrap replicates of 353 items
    x 13 ratings"), *hint* which argument to lower.
    """
    if n_bytes > MAX_WORK_BYTES:
        raise InputError(f"{what} would need about {format_bytes(n_bytes)} of memory, more than the "
                         f"{format_bytes(MAX_WORK_BYTES)} xlcalib allows for one request; {hint}")


def _argument_number(value: Any, name: str) -> float:
    """A scalar argument as a float with the cell rules (booleans, text, NaN, inf refused), named."""
    where = f"the {name} argument"
    if isinstance(value, (np.ndarray, list, tuple)) and np.size(value) == 1:
        value = np.asarray(value, dtype=object).ravel()[0]
    if isinstance(value, (float, np.floating)) and math.isnan(value):
        raise InputError(f"{where} is not a number (NaN)")
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return float(value) if abs(int(value)) < 2**63 else math.copysign(math.inf, int(value))
    if isinstance(value, np.bool_):
        value = bool(value)
    return parse_number(value, where)


def whole_argument(value: Any, name: str, *, low: int = 1, high: int | None = None, why: str = "") -> int:
    """A count argument (samples, replicates, k ...): a whole number in ``low..high``, else InputError naming it.

    ``2.5`` is refused, not truncated; ``True`` is not 1; *why* explains the
    upper limit (e.g. "Excel has 16,384 columns").
    """
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        number = int(value)
    else:
        x = _argument_number(value, name)
        if not math.isfinite(x) or not x.is_integer():
            raise InputError(f"the {name} argument must be a whole number, not {x:g}")
        number = int(x)
    if abs(number) > MAX_SEED:  # beyond 2**53 nothing is a meaningful count (and the digits would flood the message)
        raise InputError(f"the {name} argument ({number:.3g}) is larger than any count or seed xlcalib can use")
    if number < low:
        raise InputError(f"the {name} argument must be a whole number >= {low}, not {number}")
    if high is not None and number > high:
        raise InputError(f"the {name} argument must be at most {high:,}, not {number:,}" + (f" ({why})" if why else ""))
    return number


def seed_argument(value: Any, name: str = "seed") -> int:
    """A random seed: a whole number 0 .. 2**53 (0 is valid; negative is not)."""
    return whole_argument(value, name, low=0, high=MAX_SEED, why="the largest whole number a cell holds exactly")


def real_argument(value: Any, name: str, *, low: float = -math.inf, high: float = math.inf,
                  low_open: bool = False, high_open: bool = False) -> float:
    """A real argument (threshold, reliability, alpha ...): finite and within the given bounds, else InputError."""
    x = _argument_number(value, name)
    if not math.isfinite(x):
        raise InputError(f"the {name} argument must be a finite number, not {x}")
    below = x <= low if low_open else x < low
    above = x >= high if high_open else x > high
    if below or above:
        left = "(" if low_open or low == -math.inf else "["
        right = ")" if high_open or high == math.inf else "]"
        lo = "-inf" if low == -math.inf else f"{low:g}"
        hi = "inf" if high == math.inf else f"{high:g}"
        raise InputError(f"the {name} argument must be in {left}{lo}, {hi}{right}, not {x:g}")
    return x


def probability_argument(value: Any, name: str) -> float:
    """A probability strictly between 0 and 1 (alpha, target reliability ...)."""
    return real_argument(value, name, low=0.0, high=1.0, low_open=True, high_open=True)


def number_table_argument(value: Any, name: str, layout: str, note: str = "") -> np.ndarray:
    """A table argument of numbers (*layout* like ``"items x classes"``) as a 2-D float array; one row is one item.

    Text and TRUE/FALSE are refused, never read ("nan", "1e999" or TRUE in a table of counts is a mistake, not
    a number); NaN and None pass as NaN for the statistic to treat as missing.  *note* adds to the layout in
    messages (``"; blank = not rated"``).
    """
    raw = value if isinstance(value, np.ndarray) else np.asarray(value, dtype=object)
    if raw.dtype.kind in "USb" or (raw.dtype == object and any(isinstance(v, (str, bool, np.bool_)) for v in raw.ravel())):
        raise InputError(f"{name} must be numbers ({layout}{note}); found text or TRUE/FALSE")
    try:
        table = np.asarray(raw, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be numbers ({layout}{note})") from None
    if table.ndim == 1:
        table = table[None, :]
    if table.ndim != 2:
        raise InputError(f"{name} must be a 2-D {layout} table")
    return table


def is_number_text(text: str) -> bool:
    """True for text that :func:`parse_number` reads as a number (``"4.5"``, ``" -3 "``, ``"1e-3"``, ``"85%"``)."""
    text = text.strip().replace("\u00a0", "")
    if _PLAIN_NUMBER.match(text):
        return True
    try:
        _number_from_text(text, "")
    except InputError:
        return False
    return True


def decimal_comma_column(values: Sequence[Any]) -> np.ndarray | None:
    """*values* -- one column of a CSV file whose fields are separated by ';' -- with every number written with a
    decimal comma rewritten with a decimal point (``"3,5"`` -> ``"3.5"``; other cells as they are); None when the
    column holds no such number, or also holds numbers written with a point.

    Why: where the comma is the decimal mark (most of Europe), Excel saves a CSV file with ';' between the fields and
    3.5 as ``3,5``.  In such a file a comma between digits can only be the decimal mark, so reading it as one is the
    file's own convention, not a guess -- unless the same column also writes ``3.5``: two conventions in one column,
    where ``1,250`` could be either, so its commas are left for the cell checks to refuse with their hint.  Only the
    columns read as numbers are passed here; names and ids stay as written.
    """
    import pandas as pd

    column = np.asarray(values, dtype=object)
    codes, uniques = pd.factorize(column)  # blanks (None) -> -1; one test per distinct text
    texts = [u.strip() if isinstance(u, str) else "" for u in uniques]
    comma = np.array([_DECIMAL_COMMA.match(t) is not None for t in texts], dtype=bool)
    if not comma.any() or any("." in t and _PLAIN_NUMBER.match(t) for t in texts):  # a number with a point too
        return None
    rewritten = np.array(uniques, dtype=object)
    rewritten[comma] = [texts[k].replace(",", ".") for k in np.flatnonzero(comma)]
    out = column.copy()
    filled = codes >= 0
    out[filled] = rewritten[codes[filled]]
    return out


def decimal_comma_words(columns: Sequence[str], source: str) -> str:
    """What the readers say when :func:`decimal_comma_column` rewrote *columns* of the file *source*: what was read,
    and why (a sentence that starts with a word, not the file's name: summaries capitalise it)."""
    which = f"column {columns[0]} of {source} writes" if len(columns) == 1 else \
        f"columns {', '.join(columns)} of {source} write"
    return (f"{which} decimals with a comma ('3,5'), read as 3.5: the file separates its fields with ';', as Excel "
            "writes CSV where the comma is the decimal mark")


def is_blank_range(value: Any) -> bool:
    """True when an optional range argument was omitted or holds only blank cells."""
    return value is None or all(is_blank(cell) for row in as_rows(value) for cell in row)


def trim_trailing_blanks(*ranges: Any) -> tuple[Any, ...]:
    """Drop the trailing entries that are blank in *every* one of several parallel vector ranges.

    Selecting whole columns (``A:A``) or a block larger than the data leaves
    blank rows at the end; they are not evaluations.  Only entries blank in all
    ranges at once, and only at the end, are dropped: a blank inside the data,
    or a blank in one range next to a value in another, is still reported by
    the parsers.  Ranges of different lengths (or blocks that are not a single
    row or column) are returned unchanged for :func:`same_length` /
    :func:`as_vector` to report.  Shapes (row or column) are kept, so
    positions in later messages stay right.
    """
    if any(not is_blank(_last_cell(value)) for value in ranges):
        return ranges  # common case, O(1): some range has data in its last cell
    shaped = []
    for value in ranges:
        rows = as_rows(value)
        if len(rows) > 1 and all(len(row) == 1 for row in rows):
            shaped.append(("column", [row[0] for row in rows]))
        elif len(rows) == 1:
            shaped.append(("row", list(rows[0])))
        else:
            return ranges
    lengths = {len(cells) for _, cells in shaped}
    if len(lengths) != 1:
        return ranges
    n = lengths.pop()
    while n > 0 and all(is_blank(cells[n - 1]) for _, cells in shaped):
        n -= 1
    if n == len(shaped[0][1]) or n == 0:
        return ranges
    return tuple([[c] for c in cells[:n]] if kind == "column" else [cells[:n]] for kind, cells in shaped)


def _last_cell(value: Any) -> Any:
    """The bottom-right cell of an Excel-shaped value (None when empty)."""
    while isinstance(value, (list, tuple)):
        if not value:
            return None
        value = value[-1]
    return value


def same_length(**columns: Sequence[Any]) -> int:
    """Check that named ranges have the same number of entries; return it."""
    lengths = {name: len(col) for name, col in columns.items()}
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{name} has {n}" for name, n in lengths.items())
        raise InputError(f"the ranges must be the same size: {detail}")
    return next(iter(lengths.values()), 0)


# ----------------------------------------------------------------------------
# A value back into a cell (result sheets, spreadsheet functions)
# ----------------------------------------------------------------------------

def _pandas_missing(value: Any) -> bool:
    """True for pandas' missing-value markers NaT and NA (pandas is not imported for this: without it loaded,
    no value can be one of them)."""
    pd = sys.modules.get("pandas")
    return pd is not None and (value is pd.NaT or value is pd.NA)


def cell_value(value: Any) -> Any:
    """A Python or numpy value as a spreadsheet cell holds it: the one conversion every writer uses.

    numpy scalars become Python ones; ``None``, NaN, pandas' ``NaT`` and ``NA``
    become a blank cell (``None``); numbers, logical values, dates and times
    pass; text passes as plain ``str``; anything else (a list, a Decimal ...) is
    shown as its text.  Why one function: a value must look the same on a
    result sheet and in a spreadsheet function's spilled table.

    >>> import numpy as np
    >>> [cell_value(v) for v in (np.int64(3), np.float32(0.5), float("nan"), np.bool_(True), None, [1])]
    [3, 0.5, None, True, None, '[1]']
    """
    if value is None:
        return None
    if type(value) is str:
        return value
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return None if math.isnan(value) else value
    if isinstance(value, int):
        return value
    if _pandas_missing(value):  # checked before dates: NaT is a datetime
        return None
    if isinstance(value, (_dt.date, _dt.time)):
        return value
    return str(value)


def column_cells(column: Any) -> list:
    """One column (a pandas Series or Index, a numpy array, a list) as cell values.

    The same values as :func:`cell_value` gives one by one, converted a whole
    column at a time where the dtype allows it (floats with NaN blank,
    integers and logical values as Python scalars, text as it is): result
    sheets and spilled tables have columns of a million numbers.

    >>> column_cells(np.array([1.5, np.nan]))
    [1.5, None]
    """
    pandas_like = hasattr(column, "to_numpy")
    array = column.to_numpy() if pandas_like else np.asarray(column)
    if isinstance(getattr(column, "dtype", array.dtype), np.dtype):  # a numpy dtype (not a pandas extension)
        kind = array.dtype.kind
        if kind == "f":
            out = array.astype(object)
            out[np.isnan(array)] = None
            return out.tolist()
        if kind in "iub":
            return array.tolist()
    values = (column.to_numpy(dtype=object) if pandas_like else array.astype(object)).tolist()
    if set(map(type, values)) <= {str}:  # labels: nothing to convert (one pass in C, not a test per cell)
        return values
    return list(map(cell_value, values))


# ----------------------------------------------------------------------------
# Cell references ("C12" <-> row 12, column 3)
# ----------------------------------------------------------------------------

_REFERENCE = re.compile(r"^\$?([A-Za-z]{1,3})\$?(\d+)$")


def column_letter(index: int) -> str:
    """Spreadsheet column letters for a 1-based column index (1 -> A, 28 -> AB)."""
    letters = ""
    while index > 0:
        index, remainder = divmod(index - 1, 26)
        letters = chr(65 + remainder) + letters
    return letters


def column_number(letters: str | bytes) -> int:
    """The 1-based column index of spreadsheet column letters (A -> 1, AB -> 28); the inverse of
    :func:`column_letter`.  Bytes are accepted (the workbook reader scans raw XML)."""
    if isinstance(letters, bytes):
        letters = letters.decode("ascii")
    number = 0
    for ch in letters.upper():
        number = number * 26 + ord(ch) - 64
    return number


def cell_position(ref: str) -> tuple[int, int]:
    """(row, column) of an A1-style cell reference: ``"C12"`` -> (12, 3); ``$`` signs are allowed.

    >>> cell_position("$AB$7")
    (7, 28)
    """
    match = _REFERENCE.match(ref.strip())
    if match is None:
        raise ValueError(f"not a cell reference: {ref!r}")
    return int(match.group(2)), column_number(match.group(1))


def merged_range_of(cell: str, merged: Iterable[str]) -> str | None:
    """The first of the merged ranges *merged* (``"A2:A3"``) that holds *cell* (``"A3"``), or None."""
    row, col = cell_position(cell)
    for ref in merged:
        (r1, c1), (r2, c2) = (cell_position(part) for part in ref.split(":"))
        if c1 <= col <= c2 and r1 <= row <= r2:
            return ref
    return None


#: Deepest JSON nesting read from a file or a cell (xlcalib writes 3 levels; an OpenReview export about 5).
MAX_JSON_DEPTH = 64


def json_depth(text: str) -> int:
    """How deep the brackets outside strings nest in *text*, found before parsing it.

    Python's json parser recurses once per level: a hostile file of 100,000 brackets runs it out of stack,
    and a finaliser that happens to run down there fails too (an "exception ignored" message out of a
    caught error), so depth is checked first, vectorised over the quotes and brackets alone (a 32 MB
    OpenReview export in about 0.1 s): a quote is a string's edge unless an odd run of backslashes stands
    right before it, and a bracket counts when an even number of string edges precede it.

    >>> json_depth('{"a": [1, {"b": "]]["}], "c": []}')
    3
    """
    buf = np.frombuffer(text.encode("utf-8", "replace"), dtype=np.uint8)
    quotes = np.flatnonzero(buf == 34)
    slashes = np.flatnonzero(buf == 92)
    if slashes.size and quotes.size:
        # runs of backslashes: where each ends and how long it is; a quote right after an odd run is escaped
        breaks = np.flatnonzero(np.diff(slashes) != 1)
        ends = np.append(slashes[breaks], slashes[-1])
        starts = np.insert(slashes[breaks + 1], 0, slashes[0])
        odd_ends = ends[(ends - starts + 1) % 2 == 1]
        quotes = quotes[~np.isin(quotes - 1, odd_ends)]
    where = np.flatnonzero((buf == 91) | (buf == 123) | (buf == 93) | (buf == 125))
    where = where[np.searchsorted(quotes, where) % 2 == 0]  # outside every string
    if not where.size:
        return 0
    steps = np.where((buf[where] == 91) | (buf[where] == 123), 1, -1).astype(np.intp)
    return int(np.cumsum(steps).max())
