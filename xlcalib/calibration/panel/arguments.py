"""Arguments that name assessors and objects, and per-name counts and grids: what design, assignment and next
reads take from their callers (lists of names, loads per assessor, (assessor, object) pairs, suitability grids).

Why here, below every family that uses them: the design report, the assignment and the rules of next reads all
read the same shapes of argument, and one reader gives one message for one mistake.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...cells import header_key
from ...errors import InputError

__all__ = ["name_index", "MAX_COUNT", "count_text", "per_item_counts", "pair_indices", "pair_grid"]


def name_index(values, what: str) -> pd.Index:
    if isinstance(values, (str, bytes)) or values is None:
        raise InputError(f"{what} must be a list of names")
    names = list(values)
    if not names:
        raise InputError(f"there are no {what}")
    for i, name in enumerate(names):
        if name is None or (isinstance(name, float) and np.isnan(name)) or (isinstance(name, str) and not name.strip()):
            raise InputError(f"{what}: name number {i + 1} is blank")
    index = pd.Index(names, dtype=object)
    if index.has_duplicates:
        dup = index[index.duplicated()][0]
        raise InputError(f"{what}: {dup!r} is listed more than once")
    return index


#: Largest count per assessor or object (reads, loads): numpy indexes and counts with 32-bit integers in Pyodide.
MAX_COUNT = 2**31 - 1


def count_text(value) -> str:
    """A count for a message: ``1,000,000,000,000`` (never ``np.int64(...)``), ``2.5``, ``'lots'``."""
    try:
        f = float(value)
    except (TypeError, ValueError):
        return repr(value)
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    return f"{f:,.0f}" if np.isfinite(f) and f == int(f) and abs(f) < 1e21 else f"{f:g}"


def per_item_counts(value, index: pd.Index, what: str, kind: str, allow_none=False) -> np.ndarray | None:
    """Scalar, sequence aligned with index, or Series/dict keyed by name -> int array (>= 0)."""
    if value is None:
        if allow_none:
            return None
        raise InputError(f"{what} is required")
    if isinstance(value, dict):
        value = pd.Series(value)
    if isinstance(value, pd.Series) and not isinstance(value.index, pd.RangeIndex):
        unknown = [k for k in value.index if k not in index]
        if unknown:
            raise InputError(f"{what}: {unknown[0]!r} is not one of the {kind}")
        value = value.reindex(index)
        missing = index[value.isna().to_numpy()]
        if len(missing):
            raise InputError(f"{what}: no value for {missing[0]!r}")
        arr = value.to_numpy()
    elif np.ndim(value) == 0:
        arr = np.full(len(index), value, dtype=object)
    else:
        arr = np.asarray(list(value), dtype=object)
        if arr.shape != (len(index),):
            raise InputError(f"{what}: {arr.size} values for {len(index)} {kind}")
    out = np.empty(len(index), dtype=np.intp)  # counts numpy repeats with: intp (32-bit in Pyodide)
    for i, x in enumerate(arr):
        try:
            f = float(x)
        except (TypeError, ValueError):
            raise InputError(f"{what} for {index[i]!r} is not a number ({x!r})") from None
        if isinstance(x, (bool, np.bool_)) or not np.isfinite(f) or f < 0 or f > MAX_COUNT or f != int(f):
            raise InputError(f"{what} for {index[i]!r} must be a whole number from 0 to {MAX_COUNT:,}, not "
                             f"{count_text(x)}")
        out[i] = int(f)
    return out


def pair_indices(table, a_names: pd.Index, o_names: pd.Index, what: str) -> tuple[np.ndarray, np.ndarray]:
    """(assessor, object) pairs from a two-column table or an iterable of pairs -> index arrays."""
    if table is None:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    if isinstance(table, pd.DataFrame):
        if table.shape[1] < 2:
            raise InputError(f"{what} needs two columns: assessor and object")
        a_raw, o_raw = table.iloc[:, 0].to_numpy(dtype=object), table.iloc[:, 1].to_numpy(dtype=object)
    else:
        rows = [tuple(p) for p in table]
        if any(len(p) != 2 for p in rows):
            raise InputError(f"{what} must be (assessor, object) pairs")
        a_raw = np.asarray([p[0] for p in rows], dtype=object)
        o_raw = np.asarray([p[1] for p in rows], dtype=object)
    ai = a_names.get_indexer(a_raw)
    oi = o_names.get_indexer(o_raw)
    for arr, raw, kind in ((ai, a_raw, "assessor"), (oi, o_raw, "object")):
        bad = np.flatnonzero(arr < 0)
        if bad.size:
            i = int(bad[0])
            raise InputError(f"{what}, row {i + 1}: {raw[i]!r} is not one of the {kind}s", {"row": i, "column": kind})
    return ai.astype(np.intp), oi.astype(np.intp)


def pair_grid(value, a_names: pd.Index, o_names: pd.Index, what: str, default: float) -> np.ndarray | None:
    """Assessors x objects matrix from a grid DataFrame (index assessors, columns objects), a long
    (assessor, object, value) table, a scalar or an A x O array. Missing cells take ``default``."""
    if value is None:
        return None
    A, O = len(a_names), len(o_names)
    if np.ndim(value) == 0 and not isinstance(value, pd.DataFrame):
        try:
            f = float(value)
        except (TypeError, ValueError):
            raise InputError(f"{what} is not a number ({value!r})") from None
        if not np.isfinite(f) or f < 0:
            raise InputError(f"{what} must be a finite number >= 0, not {value!r}")
        return np.full((A, O), f)
    if isinstance(value, pd.DataFrame) and value.shape[1] == 3 and [header_key(c) for c in value.columns[:2]] == [
            "assessor", "object"]:
        ai, oi = pair_indices(value.iloc[:, :2], a_names, o_names, what)
        vals = pd.to_numeric(value.iloc[:, 2], errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(~np.isfinite(vals) | (vals < 0))
        if bad.size:
            i = int(bad[0])
            raise InputError(f"{what}, row {i + 1}: {value.iloc[i, 2]!r} is not a number >= 0", {"row": i})
        out = np.full((A, O), float(default))
        out[ai, oi] = vals
        return out
    if isinstance(value, pd.DataFrame):
        unknown_a = [k for k in value.index if k not in a_names]
        unknown_o = [k for k in value.columns if k not in o_names]
        if unknown_a:
            raise InputError(f"{what}: row {unknown_a[0]!r} is not one of the assessors")
        if unknown_o:
            raise InputError(f"{what}: column {unknown_o[0]!r} is not one of the objects")
        frame = value.apply(pd.to_numeric, errors="coerce").reindex(index=a_names, columns=o_names)
        arr = frame.to_numpy(dtype=float)
        raw = value.reindex(index=a_names, columns=o_names)
        bad = np.argwhere((np.isnan(arr) & raw.notna().to_numpy()) | (arr < 0) | np.isinf(arr))
        if bad.size:
            i, j = bad[0]
            raise InputError(f"{what}: assessor {a_names[i]!r}, object {o_names[j]!r}: {raw.iat[i, j]!r} is not a number >= 0")
        return np.where(np.isnan(arr), float(default), arr)
    arr = np.asarray(value, dtype=float)
    if arr.shape != (A, O):
        raise InputError(f"{what} is {' x '.join(map(str, arr.shape))} but there are {A} assessors x {O} objects")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        i, j = np.argwhere(~np.isfinite(arr) | (arr < 0))[0]
        raise InputError(f"{what}: assessor {a_names[i]!r}, object {o_names[j]!r}: {arr[i, j]!r} is not a number >= 0")
    return arr.copy()
