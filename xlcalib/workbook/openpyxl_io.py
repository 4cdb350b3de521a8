"""openpyxl backend: safe reading of hand-edited workbooks and atomic writing of results.

Safety rules (issue 6):

* ``defusedxml`` is a runtime dependency; openpyxl uses it automatically to
  parse workbook XML, so entity-expansion ("billion laughs") attacks fail.
* Inputs larger than :data:`MAX_INPUT_BYTES` are refused with a message.
* Encrypted (password-protected) workbooks are OLE containers, not zip files;
  they are recognised and refused with a clear message, as are files that are
  not workbooks at all.
* Text that begins with ``=``, ``+``, ``-`` or ``@`` is written as *text*
  (openpyxl would otherwise store ``=...`` as a formula): data never becomes
  a formula.
* Results are written to a temporary file in the target folder and moved into
  place with ``os.replace``: a crash mid-write leaves any previous file intact.
"""
from __future__ import annotations

import datetime as _dt
import math
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError

#: Workbooks above this size (bytes) are refused: 200 MB is far beyond any panel's evaluations sheet.
MAX_INPUT_BYTES = 200 * 1024 * 1024
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_FORMULA_STARTS = ("=", "+", "-", "@")


def _open_workbook(path: str | os.PathLike, *, data_only: bool = True, read_only: bool = False):
    import openpyxl  # adapters only

    path = Path(path)
    if not path.exists():
        raise InputError(f"file not found: {path}")
    size = path.stat().st_size
    if size > MAX_INPUT_BYTES:
        raise InputError(f"{path.name} is {size / 1e6:.0f} MB; the limit is {MAX_INPUT_BYTES / 1e6:.0f} MB")
    with open(path, "rb") as handle:
        head = handle.read(8)
    if head == _OLE_MAGIC:
        raise InputError(f"{path.name} is password-protected or an old .xls file; save it as an unprotected .xlsx and try again")
    if not zipfile.is_zipfile(path):
        raise InputError(f"{path.name} is not an Excel workbook (.xlsx/.xlsm)")
    try:
        return openpyxl.load_workbook(path, data_only=data_only, read_only=read_only, keep_links=False)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise InputError(f"{path.name} could not be read as a workbook ({type(exc).__name__}: {exc})") from None


def safe_cell_value(value: Any) -> Any:
    """A value ready for a cell: numpy scalars unboxed, NaN blank, formula-looking text kept as text."""
    if value is None:
        return None
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (np.floating, float)):
        value = float(value)
        return None if math.isnan(value) else value
    if isinstance(value, (int, _dt.date, _dt.datetime)):
        return value
    if isinstance(value, (list, tuple, dict)):
        value = str(value)
    text = str(value)
    return text


def _write_cell(ws, row: int, column: int, value: Any):
    value = safe_cell_value(value)
    cell = ws.cell(row=row, column=column, value=value)
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        cell.data_type = "s"  # openpyxl marks '=...' as a formula; force plain text
    return cell


def write_frames(book, frames: dict[str, pd.DataFrame], *, replace: bool = True, bold_header: bool = True) -> dict:
    """Write each DataFrame to a sheet of an openpyxl book (header + rows); returns the sheets."""
    from openpyxl.styles import Font

    sheets = {}
    for name, frame in frames.items():
        if replace and name in book.sheetnames:
            del book[name]
        ws = book.create_sheet(title=name)
        for j, column in enumerate(frame.columns, start=1):
            cell = _write_cell(ws, 1, j, column)
            if bold_header:
                cell.font = Font(bold=True)
        values = frame.to_numpy(dtype=object)
        for i, row in enumerate(values, start=2):
            for j, value in enumerate(row, start=1):
                _write_cell(ws, i, j, value)
        for j, column in enumerate(frame.columns, start=1):
            width = max([len(str(column))] + [len(f"{v:.6g}" if isinstance(v, float) else str(v)) for v in values[:200, j - 1]])
            ws.column_dimensions[_letter(j)].width = min(max(10, width + 2), 60)
        ws.freeze_panes = "A2"
        sheets[name] = ws
    return sheets


def _letter(index: int) -> str:
    from openpyxl.utils import get_column_letter

    return get_column_letter(index)


def write_workbook_atomically(book, path: str | os.PathLike, *, fixed_time: _dt.datetime | None = None) -> Path:
    """Save an openpyxl book to *path* via a temporary file and ``os.replace``.

    ``fixed_time`` pins the document timestamps (deterministic template builds).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if fixed_time is not None:
        book.properties.created = fixed_time
        book.properties.modified = fixed_time
    handle, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix, dir=path.parent)
    os.close(handle)
    try:
        book.save(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path
