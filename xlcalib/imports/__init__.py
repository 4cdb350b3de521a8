"""Review exports in as they come: HotCRP, CMT, EasyChair, OpenReview and funders' grids -> the long table.

An adapter, one floor above the evaluations check (:mod:`xlcalib.inputs`): the numerical core never
imports it, so xlwings Lite keeps loading the core alone.  One module per system reads its export into
records (:mod:`~xlcalib.imports.hotcrp`, :mod:`~xlcalib.imports.cmt`, :mod:`~xlcalib.imports.easychair`,
:mod:`~xlcalib.imports.openreview`, :mod:`~xlcalib.imports.grid`); one module applies the rules every
system shares (:mod:`~xlcalib.imports.assemble`); values are read by :mod:`~xlcalib.inputs.values`;
the roles of the columns live in a :class:`~xlcalib.imports.mapping.ColumnMapping` that can be saved and
reused.

Example::

    >>> import xlcalib
    >>> from xlcalib.imports import read_export
    >>> csv = b"paper,title,review,reviewername,email,Overall merit,Reviewer expertise\\n" \\
    ...       b"1,On Tea,1A,Ann,ann@x.org,4,3\\n1,On Tea,1B,Bo,bo@x.org,2,2\\n" \\
    ...       b"2,On Cake,2A,Ann,ann@x.org,3,3\\n2,On Cake,2B,Bo,bo@x.org,1,1\\n"
    >>> result = read_export(csv)
    >>> result.source, len(result.evaluations), list(result.evaluations.columns)
    ('hotcrp', 4, ['assessor', 'object', 'score', 'level'])
"""
from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..cells import header_key
from ..errors import InputError
from .assemble import REPORT_COLUMNS, Options, assemble
from .mapping import PRESETS, SOURCES, ColumnMapping, columns_reading, mapping_argument, nearest_preset
from .sheets import Sheet, read_csv_bytes, read_spreadsheetml, read_workbook, sheet_from_cells, source_bytes
from ..inputs.values import ConfidenceLevels, Scale, scale_argument

__all__ = ["read_export", "read_cells", "ImportResult", "ColumnMapping", "PRESETS", "SOURCES", "Scale", "ConfidenceLevels",
           "detect_source", "export_source", "EvaluationsTableFound", "long_rows", "write_long_table", "identity_argument"]

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


@dataclass
class ImportResult:
    """An export read: the long table, what was left out and why, the column roles, the source, notes.

    ``evaluations``: assessor, object, score and the uncertainty (``level``, ``confidence`` or ``sd``),
    plus ``group`` / ``round`` when the export has them -- ready for :func:`xlcalib.calibrate`.
    ``report``: every row or cell not imported (sheet, row, cell, assessor, object, reason).
    ``mapping``: the roles found (a :class:`ColumnMapping`: ``.to_dict()`` / ``.to_rows()`` to save).
    ``origin``: the sheet, row and cell each evaluation came from (aligned with ``evaluations``).
    ``notes``: plain-words statements (inferred scales, turned letters, unlinkable reviewers ...).
    ``linked``: False when assessors are per-paper ids (stringency cannot be estimated).
    """

    evaluations: pd.DataFrame
    report: pd.DataFrame
    mapping: ColumnMapping
    source: str
    notes: list[str]
    origin: pd.DataFrame
    linked: bool = True
    name: str = ""

    @property
    def uncertainty(self) -> str:
        return next(c for c in ("level", "confidence", "sd") if c in self.evaluations.columns)

    def summary(self) -> str:
        """A few lines for a terminal: counts, the source, then every note."""
        lines = [f"{self.name or 'export'} read as {self.source}: {len(self.evaluations):,} evaluations "
                 f"({self.evaluations['assessor'].nunique():,} assessors, {self.evaluations['object'].nunique():,} "
                 f"objects); {self.left_out()} (see the import report)"]
        return "\n".join(lines + [f"- {note}" for note in self.notes])

    def left_out(self) -> str:
        """'3 rows or cells not imported; 2 objects named without any score imported' -- the report's lines counted
        (an object's own line has no row: every read of it was left out)."""
        objects = int(self.report["row"].isna().sum()) if len(self.report) else 0
        words = f"{len(self.report) - objects:,} rows or cells not imported"
        return words + (f"; {objects:,} object(s) named without any score imported" if objects else "")

    def to_frames(self) -> dict[str, pd.DataFrame]:
        """Evaluations, Import report and Import mapping as tables (sheet name -> frame)."""
        mapping_rows = self.mapping.to_rows()
        return {"Evaluations": evaluations_frame(self.evaluations),
                "Import report": self.report.copy(),
                "Import mapping": pd.DataFrame(mapping_rows[1:], columns=mapping_rows[0])}


def evaluations_frame(evaluations: pd.DataFrame) -> pd.DataFrame:
    """The long table with the evaluations sheet's own headers (Assessor, Object, Score, Level/SD/Confidence)."""
    titles = {"assessor": "Assessor", "object": "Object", "score": "Score", "level": "Level", "sd": "SD",
              "confidence": "Confidence", "group": "Group", "round": "Round", "title": "Title"}
    return evaluations.rename(columns=titles)


def long_rows(result: ImportResult) -> list[list[Any]]:
    """The long table as rows (header first) of plain values, for a sheet or a CSV writer."""
    frame = evaluations_frame(result.evaluations)
    rows = [list(frame.columns)]
    for record in frame.itertuples(index=False):
        rows.append([None if isinstance(v, float) and v != v else (v.item() if hasattr(v, "item") else v)
                     for v in record])
    return rows


def write_long_table(result: ImportResult, path, report: bool = True):
    """Write the long table to ``.csv`` (formula-safe text) or ``.xlsx`` (with the report and the mapping
    as sheets); the report of a CSV goes beside it (``<name>.report.csv``).  Returns the paths written."""
    from pathlib import Path

    from ..workbook import new_result_book, save_atomically, write_bytes_atomically
    from ..workbook.base import SheetSpec
    from ..workbook.text_output import csv_bytes

    path = Path(path)
    frames = result.to_frames()
    if path.suffix.lower() == ".csv":
        written = [write_bytes_atomically(csv_bytes(frames["Evaluations"]), path)]
        if report:
            written.append(write_bytes_atomically(csv_bytes(frames["Import report"]),
                                                  path.with_name(path.stem + ".report.csv")))
        return written
    if path.suffix.lower() not in (".xlsx", ".xlsm"):
        raise InputError(f"cannot write the long table as {path.suffix or 'a file without extension'}; use .csv or .xlsx")
    book = new_result_book()
    for name, frame in frames.items():
        if name != "Evaluations" and not report:
            continue
        book.write_sheet(SheetSpec(name, frame))
    book.activate("Evaluations")
    return [save_atomically(book, path)]


def identity_argument(value: Any) -> dict[str, str] | None:
    """An identity map (anonymous id -> person): a dict, a two-column table (DataFrame or rows), or the bytes
    or path of a CSV with two columns (a header row first)."""
    if value is None or isinstance(value, dict):
        return {str(k).strip(): str(v).strip() for k, v in value.items()} if value else value
    if isinstance(value, pd.DataFrame):
        if value.shape[1] < 2:
            raise InputError("the identity map needs two columns: anonymous id, person")
        return {str(k).strip(): str(v).strip() for k, v in zip(value.iloc[:, 0], value.iloc[:, 1])
                if str(k).strip() and str(v).strip()}
    if isinstance(value, (list, tuple)):
        return identity_argument(pd.DataFrame([list(r)[:2] for r in value[1:]]))
    data, _, name = source_bytes(value)
    sheet = read_csv_bytes(data, name)
    if len(sheet.columns) < 2:
        raise InputError(f"{name}: the identity map needs two columns (anonymous id, person)")
    return identity_argument(pd.DataFrame({0: sheet.columns[0], 1: sheet.columns[1]}))


def _sheets_of(data: bytes, name: str) -> tuple[str, list[Sheet] | None]:
    """(kind, sheets): 'xml', 'zip-easychair', 'workbook', 'json', 'csv' and the tables read."""
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(_OLE_MAGIC):
        raise InputError(f"{name} is an old binary .xls workbook (or an encrypted one); save it as .xlsx and try again")
    if head.startswith(b"<") and (b"urn:schemas-microsoft-com:office:spreadsheet" in data[:8192]
                                  or head.startswith(b"<?xml")):
        return "xml", read_spreadsheetml(data, name)
    if head.startswith(b"PK"):
        try:
            names = set(zipfile.ZipFile(io.BytesIO(data)).namelist())
        except zipfile.BadZipFile:
            raise InputError(f"{name} is a damaged zip file") from None
        if any(n.rsplit("/", 1)[-1] == "review.csv" for n in names):
            return "zip-easychair", None
        return "workbook", read_workbook(data, name)
    if head.startswith((b"[", b"{")):
        return "json", None
    return "csv", [read_csv_bytes(data, name)]


def detect_source(sheets: list[Sheet]) -> str:
    """The system a table comes from, from its header; an unknown layout is an error naming what was found."""
    from .cmt import is_cmt
    from .easychair import is_review_score
    from .grid import looks_like_grid
    from .hotcrp import is_narrow

    for sheet in sheets:
        normed = {header_key(h) for h in sheet.header}
        if is_cmt(sheet):
            return "cmt"
        if "submission #" in normed and "scores" in normed or is_review_score(sheet):
            return "easychair"
        if is_narrow(sheet) or (("paper" in normed or "pid" in normed)
                                and normed & {"review", "reviewername", "email"}):  # a grid may have Paper, Title
            return "hotcrp"
    _refuse_evaluations_table(sheets[0] if sheets else None)  # before the grid: its first column may look like ids
    if sheets and looks_like_grid(sheets[0]):
        return "grid"
    from .grid import GRID_SHAPE

    header = sheets[0].header if sheets else []
    preset, found, missing = nearest_preset(header)
    raise InputError(
        f"{sheets[0].label if sheets else 'the export'}: unknown layout: not a review export xlcalib recognises "
        f"(looked for HotCRP, CMT, EasyChair or OpenReview's columns) nor {GRID_SHAPE}. Headers found: "
        f"{', '.join(h for h in header if h)[:200] or 'none'}. Nearest preset: {preset} (has "
        f"{', '.join(found) or 'none'} of its headers; missing {', '.join(missing[:6])}). Name the source "
        f"(--from {' / '.join(SOURCES)}) or map the columns (--mapping with object, assessor and score)")


class EvaluationsTableFound(InputError):
    """The table to import is already an evaluations table: *sheet* (its name) has the assessor, object and score
    *columns* named (callers that opened a workbook for its evaluations sheet say what to do with this one)."""

    def __init__(self, message: str, sheet: str, columns: list[str]):
        super().__init__(message)
        self.sheet, self.columns = sheet, columns


def _refuse_evaluations_table(sheet: Sheet | None) -> None:
    """A table that already has an assessor, an object and a score column needs no import: say so -- instead of
    "unknown layout" with a list of a review system's missing headers, or a grid read from it when its assessors
    happen to be all different (their names taken for object ids, its Score column for one assessor)."""
    from ..inputs import EVALUATION_COLUMNS, find_columns

    if sheet is None:
        return
    try:
        found = find_columns(sheet.header, EVALUATION_COLUMNS, sheet.label)
    except InputError:
        return
    if {"assessor", "object", "score"} <= found.keys():
        columns = [sheet.header[found[k]].strip() for k in ("assessor", "object", "score")]
        how = "takes this file" if sheet.label == sheet.name else f'takes it with --sheet "{sheet.name}"'  # a CSV's
        raise EvaluationsTableFound(  # sheet is named by its file; a workbook's label is "file, sheet X"
            f"{sheet.label} is already an evaluations table (columns {', '.join(columns)}): calibrate it as it is (the "
            f"command line's calibrate {how}; in a panel workbook, paste its rows into the Evaluations sheet). Import "
            "reads review systems' exports and grids", sheet.name, columns)


def export_source(export) -> str:
    """The system an export comes from, as :func:`read_export` detects it, without reading its reviews (to pick
    the saved column roles of that system before the import)."""
    if not isinstance(export, (bytes, bytearray, memoryview, str)) and not hasattr(export, "__fspath__"):
        return "openreview"
    data, _, name = source_bytes(export)
    kind, sheets = _sheets_of(data, name)
    if kind == "zip-easychair":
        return "easychair"
    if kind == "json":
        return "openreview"
    return detect_source(sheets)


def read_cells(rows, source: str = "grid", mapping=None, scale=None, round: str | None = None,
               identity_map=None, confidence_levels=None, name: str = "Range", columns_are=None) -> ImportResult:
    """:func:`read_export` for cells already in hand -- a spreadsheet range or a list of rows (header first):
    the path a spreadsheet function takes to turn a grid range (or a pasted export) into long rows."""
    if source not in SOURCES or source == "openreview":
        raise InputError(f"cells can be read as {', '.join(s for s in SOURCES if s != 'openreview')}; not {source!r}")
    sheets = [sheet_from_cells(rows, name)]
    return _finish(source, "cells", None, sheets, name, mapping, scale, round, identity_map, confidence_levels,
                   columns_are)


def read_export(export, source: str | None = None, mapping=None, scale=None, round: str | None = None,
                identity_map=None, confidence_levels=None, columns_are=None) -> ImportResult:
    """Read a review export into the long evaluations table, with its import report, mapping and notes.

    Parameters
    ----------
    export:
        A file path or its bytes: HotCRP CSV, CMT XML/xlsx, EasyChair review.csv or its zip, OpenReview
        JSON, a grid (CSV/xlsx).  OpenReview notes may also be passed as Python objects (dicts or
        ``openreview.api.Note``).
    source:
        ``"hotcrp"``, ``"cmt"``, ``"easychair"``, ``"openreview"`` or ``"grid"`` to skip detection.
    mapping:
        A :class:`ColumnMapping` (or its dict / JSON / Import-sheet rows) naming columns; roles it leaves
        out are detected.  The one used comes back in ``result.mapping``.
    scale:
        The declared score scale (``"1-5"``, ``"A, AB, B, BC, C, D"`` best first, ``{"A": 6, ...}``); it
        wins over the mapping's and over inference.
    round:
        A round to import alone (a round name, a revision sheet, or the text naming one of a form's score
        fields such as ``"pre"``); by default each review's latest non-blank score.
    identity_map:
        Anonymous id -> person (dict, two-column table or CSV) for exports whose reviewer ids are per paper.
    confidence_levels:
        Confidence value -> level name or SD (wins over the mapping's and the default thirds).
    columns_are:
        How a grid's score columns are read: ``"people"`` (one assessor each) or ``"review slots"`` (R1, R2 ...
        each row's reviews from the left, each by a reviewer of that object alone); wins over the mapping's;
        None: detected (:mod:`~xlcalib.imports.grid`).

    Raises :class:`~xlcalib.errors.InputError` (every cell problem at once, as
    :class:`~xlcalib.errors.InputProblems`) for what cannot be imported faithfully.
    """
    if source is not None and source not in SOURCES:
        raise InputError(f"unknown source {source!r}; choose one of {', '.join(SOURCES)}")
    if not isinstance(export, (bytes, bytearray, memoryview, str)) and not hasattr(export, "__fspath__"):
        return _finish(source or "openreview", "objects", export, None, "the OpenReview notes", mapping, scale, round,
                       identity_map, confidence_levels, columns_are)  # notes as Python objects
    data, _, name = source_bytes(export)
    kind, sheets = _sheets_of(data, name)
    if kind == "zip-easychair":
        source = source or "easychair"
    if kind == "json":
        source = source or "openreview"
    return _finish(source or detect_source(sheets), kind, data, sheets, name, mapping, scale, round, identity_map,
                   confidence_levels, columns_are)


def _finish(source, kind, data, sheets, name, mapping, scale, round, identity_map, confidence_levels,
            columns_are=None) -> ImportResult:
    """Read the records of a detected export and apply the import rules."""
    mapping = mapping_argument(mapping) or ColumnMapping()
    mapping = ColumnMapping.from_dict(mapping.to_dict())  # a copy: the caller's mapping is never changed
    if columns_are is not None:
        mapping.columns_are = columns_reading(columns_are)
    declared_scale = scale_argument(scale) or (mapping.scale if mapping.scale and mapping.scale.source == "declared"
                                               else None)
    levels = ConfidenceLevels.from_value(confidence_levels) or (
        mapping.confidence_levels if mapping.confidence_levels and mapping.confidence_levels.source != "default"
        else None)
    identity = identity_argument(identity_map)
    mapping.source = source
    records, reports, notes, anonymous = _read(source, kind, data, sheets, name, mapping, round)
    notes[:0] = [note for sheet in sheets or () for note in sheet.notes]  # how the tables were read comes first
    if source == "openreview" and identity:
        from .openreview import short_id

        identity = {**{short_id(k): v for k, v in identity.items()}, **identity}
    levels = levels or (mapping.confidence_levels if mapping.confidence_levels and mapping.confidence_levels.as_written
                        else None)
    complete = tuple(mapping.complete) if mapping.complete else tuple(PRESETS[source].complete)
    options = Options(declared_scale, levels, round, identity, complete, anonymous, name)
    done = assemble(records, options, reports, notes)
    mapping.scale, mapping.confidence_levels = done.scale, done.confidence_levels
    report = done.report if len(done.report) else pd.DataFrame(columns=REPORT_COLUMNS)
    return ImportResult(done.evaluations, report.reset_index(drop=True), mapping, source, done.notes, done.origin,
                        done.linked, name)


def _read(source: str, kind: str, data, sheets, name: str, mapping: ColumnMapping, round_name):
    if source == "openreview":
        from .openreview import read_openreview

        if kind not in ("json", "objects"):
            raise InputError(f"{name}: OpenReview reviews are read from JSON (the notes openreview-py returns)")
        return read_openreview(data, mapping, name)
    if source == "easychair":
        from .easychair import easychair_zip, read_easychair

        deleted: set[str] = set()
        if kind == "zip-easychair":
            sheet, deleted = easychair_zip(data, name)
        else:
            sheet = _one(sheets, name)
        return read_easychair(sheet, mapping, round_name, deleted)
    if sheets is None:
        raise InputError(f"{name} is not a table; a {source} export is a CSV or a workbook")
    if source == "cmt":
        from .cmt import read_cmt

        return read_cmt(sheets, mapping, round_name)
    if source == "hotcrp":
        from .hotcrp import read_hotcrp

        return read_hotcrp(_one(sheets, name), mapping, round_name)
    from .grid import read_grid

    return read_grid(sheets, mapping, round_name)


def _one(sheets: list[Sheet], name: str) -> Sheet:
    if not sheets:
        raise InputError(f"{name} holds no table")
    return sheets[0]
