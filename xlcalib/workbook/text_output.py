"""Result tables as text files (``--format csv`` / ``--format json``): formula-safe, exact, and fast at 10^6 rows.

Why a module of its own: the command line writes the same tables as the result workbook, and at the size
of a national exercise (10^6 evaluations: a Residuals table of 10^6 x 7, Values and Ranking of ~333k rows)
pandas' writers spend most of the whole run formatting floats one at a time (``DataFrame.to_csv`` about
8 s for the Residuals table alone, ``to_json`` + ``json.dumps`` longer still).  polars, a well-kept
DataFrame library with a native CSV/JSON writer, formats the same columns about 30x faster.  It is in the
``excel`` extra that the command line already needs; pyarrow would do the same job, but installing it
switches pandas' default string storage for the whole program, polars changes nothing else.  When polars
cannot be imported (an install without the extra), or a table holds a column kind the fast path does not
handle (mixed objects, dates, pandas' nullable types), the pandas/json path writes the same content.  Small
tables (under :data:`FAST_MIN_ROWS` rows) take that path too: it is quick for them and saves importing
polars (~0.2 s).  So does a process under a tight address-space limit (``ulimit -v``, below
:data:`POLARS_MIN_ADDRESS_SPACE`): polars' allocator reserves address space for its thread pool and, when
it cannot, aborts the whole process instead of raising ``MemoryError``.

What a file means, on either path:

* the same columns in the same order; CSV has one header row of column names;
* floats as the shortest text that reads back as the very same float (round trip); ``inf``/``-inf`` in CSV,
  ``null`` in JSON (which has no infinity);
* missing values (NaN, None) are empty CSV fields / JSON ``null``; empty text is an empty CSV field too;
* booleans ``True``/``False`` in CSV (as pandas writes them, read back as booleans by pandas and Excel),
  ``true``/``false`` in JSON;
* every text cell and every column name passes :func:`~xlcalib.workbook.base.neutralise_text` (text that
  Excel would run as a formula gets a leading ``'``; number text such as ``+1.5`` stays as it is), the rule
  applied once per distinct value;
* UTF-8, ``\\n`` line ends, a CSV field quoted only when it holds a comma, a quote or a line break.

Example::

    >>> import pandas as pd
    >>> csv_bytes(pd.DataFrame({"object": ["=1+2", "P1"], "value": [0.1, float("nan")]})).decode()
    "object,value\\n'=1+2,0.1\\nP1,\\n"
"""
from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import pandas as pd

from .base import TEXT_FILE_FORMULA_STARTS, neutralise_frame, neutralise_text

#: Tables with fewer rows are written by the pandas/json path (fast enough; polars is not even imported).
FAST_MIN_ROWS = 20_000
#: Under an address-space limit below this, polars is not used (it would abort the process, not raise).
POLARS_MIN_ADDRESS_SPACE = 2 * 2**30

_UNSET = object()
_polars_module: Any = _UNSET


def polars_or_none():
    """The polars module when it can be used (the fast writer), else None (the pandas/json path)."""
    global _polars_module
    if _polars_module is _UNSET:
        polars = None
        if _address_space_limit() >= POLARS_MIN_ADDRESS_SPACE:
            try:
                import polars
            except ImportError:  # an install without the excel extra, or a platform without the wheel (Pyodide)
                polars = None
        _polars_module = polars
    return _polars_module


def _address_space_limit() -> float:
    try:
        import resource
    except ImportError:  # Windows, Pyodide: no such limit
        return float("inf")
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return float("inf") if soft == resource.RLIM_INFINITY else soft


def _polars_for(frame: pd.DataFrame, fast: bool | None):
    """polars for this table: ``fast=None`` when available and the table is large, True when available, False never."""
    if fast is False or (fast is None and len(frame) < FAST_MIN_ROWS):
        return None
    return polars_or_none()


# ------------------------------------------------------------------------------------------------ CSV
def csv_bytes(frame: pd.DataFrame, *, fast: bool | None = None) -> bytes:
    """*frame* as UTF-8 CSV bytes (no index), formula-safe; polars for large tables when available, else pandas.

    ``fast=False`` forces the pandas path (the reference the fast path is tested against); ``fast=True`` uses
    polars whenever it is available, whatever the table's size.
    """
    pl = _polars_for(frame, fast)
    table = _polars_table(frame, pl, for_json=False) if pl is not None else None
    if table is None:
        safe = neutralise_frame(frame)
        # Python's csv module (before 3.12) quotes a field with a carriage return only when the line end holds one
        ends = "\r\n" if _holds_carriage_return(safe) else "\n"
        return safe.to_csv(index=False, lineterminator=ends).encode("utf-8")
    buffer = io.BytesIO()
    table.write_csv(buffer, include_header=True, separator=",", quote_char='"', line_terminator="\n",
                    null_value="", quote_style="necessary")
    return buffer.getvalue()


def _holds_carriage_return(frame: pd.DataFrame) -> bool:
    if any(isinstance(name, str) and "\r" in name for name in frame.columns):
        return True
    for i in range(frame.shape[1]):
        column = frame.iloc[:, i]
        if column.dtype == object or isinstance(column.dtype, pd.StringDtype):
            if any(isinstance(v, str) and "\r" in v for v in pd.unique(column.to_numpy(dtype=object))):
                return True
    return False


# ----------------------------------------------------------------------------------------------- JSON
def json_bytes(document: dict[str, Any], *, fast: bool | None = None) -> bytes:
    """A JSON object as UTF-8 bytes: DataFrame values become lists of records (one per line), others as by json.

    Non-frame values are written by :func:`json.dumps` (``indent=1``, unknown objects as their text);
    their text is not neutralised here (callers pass :func:`neutralise_text`-ed values).  ``fast`` as for
    :func:`csv_bytes`.
    """
    parts = []
    for key, value in document.items():
        if isinstance(value, pd.DataFrame):
            text = _frame_records_json(value, fast)
        else:
            text = json.dumps(_strict_json(value), indent=1, ensure_ascii=False, allow_nan=False,
                              default=str).encode("utf-8")
            text = text.replace(b"\n", b"\n ")  # raw line breaks are only layout: json escapes them in strings
        parts.append(b" " + json.dumps(str(key), ensure_ascii=False).encode("utf-8") + b": " + text)
    return b"{\n" + b",\n".join(parts) + b"\n}\n" if parts else b"{}\n"


def _strict_json(value: Any) -> Any:
    """*value* as plain JSON values: numpy scalars unboxed, every non-finite float (NaN, +-inf) as None (strict
    JSON has no NaN, and a reader that meets one refuses the whole file), containers walked.  The one rule for
    the tables' cells and the document's other values alike."""
    if isinstance(value, dict):
        return {k: _strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict_json(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def _frame_records_json(frame: pd.DataFrame, fast: bool | None) -> bytes:
    """``[record, ...]`` of a frame, one record per line; full float precision, non-finite and missing -> null."""
    pl = _polars_for(frame, fast)
    table = _polars_table(frame, pl, for_json=True) if pl is not None else None
    if table is not None:
        buffer = io.BytesIO()
        table.write_ndjson(buffer)
        lines = buffer.getvalue().rstrip(b"\n")  # one record per line; strings hold no raw line break
    else:
        lines = _records_lines_python(frame)
    if not lines:
        return b"[]"
    return b"[\n  " + lines.replace(b"\n", b",\n  ") + b"\n ]"


def _records_lines_python(frame: pd.DataFrame) -> bytes:
    """The reference path: one compact JSON record per line, built with the json module."""
    frame = neutralise_frame(frame)
    names = [str(name) for name in frame.columns]
    columns = [_json_column(frame.iloc[:, i]) for i in range(frame.shape[1])]
    dump = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str).encode
    return "\n".join(dump(dict(zip(names, row))) for row in zip(*columns)).encode("utf-8") if len(frame) else b""


def _json_column(column: pd.Series) -> list:
    """Plain Python values of a column for json: floats finite or None, numpy scalars unboxed, missing None."""
    dtype = column.dtype
    if isinstance(dtype, np.dtype) and dtype.kind == "f":
        values = column.to_numpy().astype(object)
        values[~np.isfinite(column.to_numpy())] = None
        return [None if v is None else float(v) for v in values]
    if isinstance(dtype, np.dtype) and dtype.kind in "iub":
        return column.to_numpy().tolist()
    return [_strict_json(v) for v in column.to_numpy(dtype=object, na_value=None)]


# ------------------------------------------------------------------------------------- the polars table
def _polars_table(frame: pd.DataFrame, pl, *, for_json: bool):
    """A polars DataFrame holding exactly what the file must say, or None when the fast path does not apply."""
    names = [neutralise_text(name) for name in frame.columns]
    names = [name if isinstance(name, str) else str(name) for name in names]
    if len(set(names)) != len(names):
        return None  # polars needs distinct column names; pandas writes repeated ones
    series = []
    for i, name in enumerate(names):
        column = _polars_column(frame.iloc[:, i], name, pl, for_json)
        if column is None:
            return None
        series.append(column)
    return pl.DataFrame(series) if series else None


def _polars_column(column: pd.Series, name: str, pl, for_json: bool):
    dtype = column.dtype
    if isinstance(dtype, np.dtype):
        if dtype.kind == "f" and dtype.itemsize in (4, 8):
            values = column.to_numpy()
            if for_json and np.isinf(values).any():  # JSON has no infinity: null, as pandas' to_json writes it
                values = np.where(np.isinf(values), np.nan, values)
            return pl.Series(name, values, nan_to_null=True)
        if dtype.kind in "iu":
            return pl.Series(name, column.to_numpy())
        if dtype.kind == "b":
            return _booleans(pl.Series(name, column.to_numpy()), pl, for_json)
        if dtype.kind != "O":
            return None  # dates, durations, complex, float16: the pandas path
        kind = pd.api.types.infer_dtype(column, skipna=True)
    elif isinstance(dtype, pd.StringDtype):
        kind = "string"
    else:
        return None  # categorical, nullable integer/boolean/float, ...: the pandas path
    if kind in ("string", "empty"):
        text = pl.Series(name, column.to_numpy(dtype=object, na_value=None).tolist(), dtype=pl.String)
        text = _neutralised(text, pl)
        if not for_json:  # pandas writes empty text as an empty field, like a missing value
            text = text.set(text == "", None)
        return text
    if kind == "boolean":
        return _booleans(pl.Series(name, column.to_numpy(dtype=object, na_value=None).tolist(), dtype=pl.Boolean),
                        pl, for_json)
    return None  # mixed objects (numbers and text in one column): the pandas path keeps each value's own type


def _booleans(flags, pl, for_json: bool):
    """JSON keeps true/false; CSV says True/False as pandas does (polars alone would write true/false)."""
    if for_json:
        return flags
    return flags.replace_strict([False, True], ["False", "True"], return_dtype=pl.String)


def _neutralised(text, pl):
    """*text* (a polars String Series) with :func:`neutralise_text` applied, once per distinct candidate value."""
    starts = None
    for prefix in TEXT_FILE_FORMULA_STARTS:  # a few vectorised scans; the rule itself runs on the few candidates
        hit = text.str.starts_with(prefix)
        starts = hit if starts is None else starts | hit
    if starts is None:
        return text
    old = text.filter(starts.fill_null(False)).unique().to_list()
    pairs = [(value, fixed) for value, fixed in ((value, neutralise_text(value)) for value in old) if fixed != value]
    if not pairs:
        return text
    return text.replace([value for value, _ in pairs], [fixed for _, fixed in pairs])
