"""Review exports in: the long table on file (``xlcalib import``), the panel template filled from an export
(its Import sheet; Run main on that sheet), and what ``xlcalib calibrate EXPORT`` needs around the reading.

The reading itself is :func:`xlcalib.imports.read_export`'s.  This module adds what a file or a workbook
needs around it:

* the roles of the export's columns, saved per review system (an Import sheet: one column per system, or
  a JSON file beside a CSV) and reused by the next import of that system's export;
* the declared scale (the Import sheet's Scale row, a Scale sheet, ``--scale``), which wins over inference;
* the Import report: every row or cell not imported, with its reason (printed, and a sheet);
* errors of the later checks (the evaluations check, the calibration) pointed back at the export's own
  rows and cells, through the import's ``origin``;
* reviewers who cannot be linked across objects: calibrated with their stringency inside the noise, said plainly.
"""
from __future__ import annotations

import datetime as _dt
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..cells import header_key, is_blank
from ..errors import InputError, InputProblems
from ..progress import step
from ..imports import (
    PRESETS,
    SOURCES,
    ColumnMapping,
    ImportResult,
    evaluations_frame,
    export_source,
    long_rows,
    read_export,
    scale_argument,
    write_long_table,
)
from ..imports.mapping import columns_reading
from ..inputs import EVALUATION_COLUMNS, checks_frame, find_columns
from ..inputs.table import names_evaluation_columns
from ..templates.import_sheet import IMPORT_SETTINGS, PRESET_ROLES
from ..workbook import open_book
from ..workbook.csv_backend import TEXT_TABLE_SUFFIXES
from ..workbook.csv_layout import csv_layout, split_line
from .common import check_output_differs, run_preamble, write_sheets

__all__ = ["EXPORT_SUFFIXES", "PRESET_ROLES", "ExportOptions", "ExportRun", "ImportForm", "at_export_cells",
           "import_export", "import_file", "import_into_book", "import_text", "is_export",
           "presets_frame", "presets_from_rows", "read_import_form", "read_with_presets", "saved_presets",
           "write_problem_listing"]

#: Extensions that are always a review export, never an evaluations table.
EXPORT_SUFFIXES = (".xml", ".xls", ".json", ".zip")
#: Lines of the Import report printed by the command line before "... and N more".
REPORT_LINES = 20
#: Problems the command line prints before "... and N more problems" (its MAX_PROBLEM_LINES): beyond them
#: every problem also goes to a file beside the output.
PROBLEM_LINES = 20
#: Largest saved mapping file read (a mapping is a few kilobytes; more is not one).
MAX_MAPPING_BYTES = 1024 * 1024
#: The Import sheet's settings as matched (column A, any case).
SETTING_KEYS = tuple(header_key(name) for name in IMPORT_SETTINGS)


@dataclass
class ExportOptions:
    """What the user says about an export (each may be None): the system, saved column roles (a path to a
    JSON file or a workbook with an Import sheet, a :class:`ColumnMapping`, or ``{system: ColumnMapping}``),
    the declared scale, one round, the identity map (anonymous id -> person), and how a grid's score columns
    are read (``"people"`` or ``"review slots"``; None: detected)."""

    source: str | None = None
    mapping: Any = None
    scale: Any = None
    round: str | None = None
    identity_map: Any = None
    columns_are: str | None = None


# ----------------------------------------------------------------------------
# Saved column roles: one per review system
# ----------------------------------------------------------------------------
def presets_frame(presets: dict[str, ColumnMapping]) -> pd.DataFrame:
    """The roles table of an Import sheet: Role | one column per system ('menu' first: where the export is made)."""
    data: dict[str, list] = {"Role": ["menu", *PRESET_ROLES]}
    for source in SOURCES:
        mapping = presets.get(source)
        saved = dict((row[0], row[1]) for row in mapping.to_rows()[2:]) if mapping else {}
        data[source] = [PRESETS[source].menu, *[saved.get(role, "") for role in PRESET_ROLES]]
    return pd.DataFrame(data)


def _header_index(rows: list[list[Any]]) -> int | None:
    """The row of the roles table's header: 'Role' in the first cell and a system's name beside it."""
    for i, row in enumerate(rows):
        if row and header_key(row[0]) == "role" and any(header_key(c) in SOURCES for c in row[1:]):
            return i
    return None


def presets_from_rows(rows: list[list[Any]], where: str = "sheet Import") -> dict[str, ColumnMapping]:
    """The saved roles per system from an Import sheet's cells (its 'Role' table); blank columns are not saved."""
    h = _header_index(rows)
    if h is None:
        return {}
    presets = {}
    for j, head in enumerate(rows[h]):
        source = header_key(head)
        if j == 0 or source not in SOURCES:
            continue
        entries = [[row[0], row[j] if j < len(row) else None] for row in rows[h + 1:]
                   if row and not is_blank(row[0]) and header_key(row[0]) != "menu"]
        if all(is_blank(v) for _, v in entries):
            continue
        try:
            presets[source] = ColumnMapping.from_rows([["source", source], *entries])
        except json.JSONDecodeError as exc:
            raise InputError(f"{where}, column {head}: a saved entry is not valid JSON ({exc.msg}); clear the "
                             "cell to detect it again") from None
        except InputError as exc:
            raise InputError(f"{where}, column {head}: {exc.message}") from None
    return presets


def saved_presets(value: Any) -> dict[str, ColumnMapping]:
    """Saved roles as {system: ColumnMapping}; '' keys a mapping saved without a system (it applies to any)."""
    if value is None:
        return {}
    if isinstance(value, ColumnMapping):
        return {value.source or "": value}
    if isinstance(value, dict) and all(isinstance(v, ColumnMapping) for v in value.values()):
        return dict(value)
    path = Path(value)
    suffix = path.suffix.lower()
    if suffix == ".json":
        if path.is_file() and path.stat().st_size > MAX_MAPPING_BYTES:
            raise InputError(f"{path.name} is {path.stat().st_size:,} bytes; a saved mapping is a few kilobytes "
                             f"(the limit is {MAX_MAPPING_BYTES:,}): give the .mapping.json an import wrote")
        try:
            text = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError:
            raise InputError(f"{path.name} is not UTF-8 text: a saved mapping is the JSON file xlcalib import "
                             "writes") from None
        mapping = ColumnMapping.from_json(text, path.name)
        return {mapping.source or "": mapping}
    if suffix in (".xlsx", ".xlsm", ".ods"):
        from ..workbook.reader import FastBook

        book = FastBook(path)
        try:
            sheet = book.find_sheet("Import", required=False)
            if sheet is None:
                raise InputError(f"{path.name} has no Import sheet holding saved column roles")
            return presets_from_rows(book.read_block(sheet).rows, f"{path.name}, sheet {sheet}")
        finally:
            book.close()
    raise InputError(f"--mapping {path.name}: give the .json file or the workbook (with its Import sheet) that an "
                     "earlier import wrote")


def read_with_presets(export, options: ExportOptions, presets: dict[str, ColumnMapping] | None = None) -> ImportResult:
    """:func:`~xlcalib.imports.read_export` with the roles saved for the export's system, when there are any."""
    presets = {**(presets or {}), **saved_presets(options.mapping)}
    source = options.source
    if source is None and presets:
        try:
            source = export_source(export)
        except InputError:
            named = [s for s in presets if s]
            if len(named) != 1:
                raise
            source = named[0]  # a layout only the saved roles explain
    mapping = presets.get(source) or presets.get("") if source else presets.get("")
    name = getattr(export, "name", None) or "the export"
    with step(f"reading {name}"):
        return read_export(export, source=source, mapping=mapping, scale=options.scale, round=options.round,
                           identity_map=options.identity_map, columns_are=options.columns_are)


# ----------------------------------------------------------------------------
# What the command line prints
# ----------------------------------------------------------------------------
def report_lines(imported: ImportResult, limit: int = REPORT_LINES, where: str = "the Import report") -> list[str]:
    """The rows or cells not imported, one line each (capped), then how many more and where they all are."""
    report = imported.report
    lines = []
    for row in report.head(limit).itertuples(index=False):
        if row.row is None or row.row != row.row:  # an object's own line: every read of it was left out
            lines.append(f"  not imported: object {row.object}: {row.reason}")
            continue
        place = f"{row.sheet}, row {row.row}" + (f", cell {row.cell}" if row.cell else "")
        who = ", ".join(str(v) for v in (row.assessor, row.object) if not is_blank(v))
        lines.append(f"  not imported: {place}" + (f" ({who})" if who else "") + f": {row.reason}")
    if len(report) > limit:
        lines.append(f"  ... and {len(report) - limit:,} more, all listed in {where}")
    return lines


def import_text(imported: ImportResult, where: str = "the Import report") -> str:
    """The import for a terminal: counts and notes, the roles of the columns, every row not imported (capped)."""
    roles = "; ".join(" ".join(line.split()) for line in imported.mapping.describe())  # headers may hold line breaks
    lines = [imported.summary(), f"columns: {roles}"]
    return "\n".join(lines + report_lines(imported, where=where))


def write_problem_listing(exc: InputProblems, path: Path, out: Path | None) -> None:
    """Every problem as a CSV file beside the output (``exc.listing`` says where; None: not written)."""
    from ..workbook import write_bytes_atomically
    from ..workbook.text_output import csv_bytes

    folder = (Path(out).parent if out and Path(out).suffix else Path(out) if out else path.parent)
    listing = folder / f"{path.stem}_problems.csv"
    try:
        write_bytes_atomically(csv_bytes(checks_frame(exc.problems)), listing)
        exc.listing = listing
    except OSError:
        exc.listing = None


# ----------------------------------------------------------------------------
# xlcalib import: the long table on file
# ----------------------------------------------------------------------------
def import_file(export, out=None, options: ExportOptions | None = None, *, into=None) -> tuple[ImportResult, list[Path]]:
    """Read an export and write the long table: ``.csv`` (with ``<name>.report.csv`` and the column roles as
    ``<name>.mapping.json`` beside it) or ``.xlsx`` (sheets Evaluations, Import report and Import).  With
    *into*, fill a copy of that panel workbook instead (:func:`import_into_book`).  Returns (import, files)."""
    from ..workbook import new_result_book, save_atomically, write_bytes_atomically

    options = options or ExportOptions()
    export = Path(export)
    if into is not None:
        return _import_into_file(export, Path(into), out, options)
    out = Path(out) if out else export.with_name(f"{export.stem}_evaluations.xlsx")
    check_output_differs(export, out)
    if out.suffix.lower() not in (".csv", ".xlsx"):
        raise InputError(f"write the evaluations to a .csv or .xlsx file, not {out.name}")
    presets = saved_presets(options.mapping)
    imported = _read_reporting(export, replace(options, mapping=None), presets, out)
    if out.suffix.lower() == ".csv":
        written = write_long_table(imported, out)
        return imported, written + [write_bytes_atomically(imported.mapping.to_json().encode("utf-8"),
                                                           out.with_name(out.stem + ".mapping.json"))]
    book = new_result_book()
    preamble = run_preamble("import", _settings_text(imported), None)
    specs = import_sheets(imported, {**{k: v for k, v in presets.items() if k}, imported.source: imported.mapping},
                          preamble)
    backend = open_book(book)
    write_sheets(backend, specs)
    backend.activate("Evaluations")
    return imported, [save_atomically(book, out)]


def _read_reporting(export: Path, options: ExportOptions, presets, out) -> ImportResult:
    """Read; a long list of problems goes to a file beside the output as well."""
    try:
        return read_with_presets(export, options, presets)
    except InputProblems as exc:
        if len(exc.errors) > PROBLEM_LINES:
            write_problem_listing(exc, export, out)
        raise


def import_sheets(imported: ImportResult, presets: dict[str, ColumnMapping], preamble) -> list:
    """The sheets of an imported export's workbook: Evaluations (header in row 1), Import report, Import."""
    from ..presentation import import_report_sheet, import_sheet, imported_evaluations_sheet

    return [imported_evaluations_sheet(evaluations_frame(imported.evaluations)),
            import_report_sheet(imported, preamble), import_sheet(presets_frame(presets), preamble)]


def _settings_text(imported: ImportResult) -> str:
    scale = imported.mapping.scale.describe() if imported.mapping.scale else "none"
    return f"export {imported.name}; read as {imported.source}; score scale {scale}"


def _import_into_file(export: Path, into: Path, out, options: ExportOptions) -> tuple[ImportResult, list[Path]]:
    from ..workbook import open_workbook, save_atomically

    out = Path(out) if out else into.with_name(f"{into.stem}_imported{into.suffix}")
    check_output_differs(into, out)
    check_output_differs(export, out)
    if out.suffix.lower() != into.suffix.lower():
        raise InputError(f"write the filled workbook as {into.suffix} like {into.name}, not {out.name}")
    book = open_workbook(into, data_only=False, keep_vba=into.suffix.lower() == ".xlsm")
    imported = import_into_book(book, export=export, options=options)
    return imported, [save_atomically(book, out)]


# ----------------------------------------------------------------------------
# The panel template's Import sheet: Run main on it fills Evaluations
# ----------------------------------------------------------------------------
@dataclass
class ImportForm:
    """An Import sheet as read: its settings (with the cell of each value), the saved roles per system, and
    where the roles table sits (sheet row of each role, sheet column of each system)."""

    sheet: str
    settings: dict[str, Any]
    cells: dict[str, tuple[int, int]]
    presets: dict[str, ColumnMapping]
    role_rows: dict[str, int]
    source_columns: dict[str, int]

    def text(self, key: str) -> str | None:
        value = self.settings.get(key)
        return None if is_blank(value) else str(value).strip()


def read_import_form(backend) -> ImportForm:
    """The workbook's Import sheet (the panel template has one)."""
    sheet = backend.find_sheet("Import", required=False)
    if sheet is None:
        raise InputError("this workbook has no Import sheet: the panel template's Import sheet names the export to "
                         "import (xlcalib template panel_calibration -o NEW.xlsx writes one)")
    block = backend.read_block(sheet)
    rows = [list(r) for r in block.rows]
    h = _header_index(rows)
    settings, cells = {}, {}
    for i, row in enumerate(rows[: h if h is not None else len(rows)]):
        key = header_key(row[0]) if row else ""
        if key in SETTING_KEYS:
            settings[key] = row[1] if len(row) > 1 else None
            cells[key] = (block.row_number(i), block.column_number(1))
    role_rows, source_columns = {}, {}
    if h is not None:
        source_columns = {header_key(c): block.column_number(j) for j, c in enumerate(rows[h])
                          if j and header_key(c) in SOURCES}
        role_rows = {header_key(r[0]): block.row_number(h + 1 + i) for i, r in enumerate(rows[h + 1:])
                     if r and not is_blank(r[0])}
    return ImportForm(sheet, settings, cells, presets_from_rows(rows, f"sheet {sheet}"), role_rows, source_columns)


def _form_options(backend, form: ImportForm, options: ExportOptions | None) -> ExportOptions:
    """The form's settings, under the caller's explicit options; the Scale row or a Scale sheet, not both."""
    options = options or ExportOptions()
    source = options.source or form.text("from")
    if source is not None and source.lower() not in SOURCES:
        row = form.cells["from"][0]
        raise InputError(f"sheet {form.sheet}, row {row}: From is '{source}'; write one of {', '.join(SOURCES)} "
                         "(or leave it blank to detect)")
    scale = options.scale if options.scale is not None else form.text("scale")
    sheet = backend.find_sheet("Scale", required=False)
    if sheet is not None:
        rows = [r[:2] for r in backend.read_block(sheet).rows if r and not is_blank(r[0])]
        if rows and scale is not None:
            raise InputError(f"the scale is declared twice (sheet {sheet} and the Scale row of sheet {form.sheet}); "
                             "keep one")
        scale = scale_argument(rows, f"sheet {sheet}") if rows else scale
    identity = options.identity_map if options.identity_map is not None else form.text("identity map")
    reading = options.columns_are or form.text("grid columns")
    if reading is not None:
        reading = columns_reading(reading, f"sheet {form.sheet}, row {form.cells['grid columns'][0]} (Grid columns)"
                                  if "grid columns" in form.cells else "Grid columns")
    return ExportOptions(source.lower() if source else None, options.mapping, scale,
                         options.round or form.text("round"), identity, reading)


def _export_path(form: ImportForm, book) -> Path:
    text = form.text("export file")
    if text is None:
        row = form.cells.get("export file", (None,))[0]
        raise InputError(f"sheet {form.sheet}" + (f", row {row}" if row else "") + ": type the export file's path "
                         "next to 'Export file', then run the import again")
    path = Path(text.strip('"')).expanduser()
    folder = getattr(book, "fullname", None)
    if not path.is_absolute() and isinstance(folder, str) and folder:
        path = Path(folder).parent / path  # beside the workbook, as the instructions say
    return path


def import_into_book(book, export=None, options: ExportOptions | None = None) -> ImportResult:
    """Import an export into a panel workbook: fill Evaluations (replacing only the rows an earlier import wrote),
    the Assessors and Objects lists, the score scale on Settings, the system's roles on the Import sheet and
    the Import report sheet.  Everything is checked before the first cell is written."""
    backend = open_book(book)
    form = read_import_form(backend)
    options = _form_options(backend, form, options)
    export = _export_path(form, book) if export is None else export
    imported = read_with_presets(export, options, form.presets)
    target = _evaluations_target(backend, form)
    from ..presentation import import_report_sheet

    report = import_report_sheet(imported, run_preamble("import", _settings_text(imported), None))
    write_sheets(backend, [report])  # refused (nothing written) when a sheet of the user's has that name
    _fill_evaluations(backend, target, imported)
    for sheet, column in (("Assessors", "assessor"), ("Objects", "object")):
        _fill_list(backend, sheet, pd.unique(imported.evaluations[column].to_numpy(dtype=object)).tolist())
    _set_scale(backend, imported)
    _save_roles(backend, form, imported)
    backend.activate(report.name)
    return imported


def import_export(book) -> ImportResult:
    """Run main on the Import sheet: import the export it names into this workbook (:func:`import_into_book`)."""
    return import_into_book(book)


@dataclass
class _Target:
    sheet: str
    header_row: int
    first_column: int
    body_rows: int
    width: int


def _evaluations_target(backend, form: ImportForm) -> _Target:
    """Where the Evaluations table sits; refused when it holds rows the last import did not write."""
    sheet = backend.find_sheet("Evaluations")
    block = backend.read_block(sheet)
    rows = block.rows
    h = next((i for i, r in enumerate(rows) if any(not is_blank(c) for c in r)), 0)
    body = rows[h + 1:]
    filled = sum(1 for r in body if any(not is_blank(c) for c in r))
    written = form.settings.get("evaluations imported")
    written = int(written) if isinstance(written, (int, float)) and not isinstance(written, bool) else 0
    if filled and filled != written:
        raise InputError(f"sheet {sheet} already holds {filled:,} evaluation row(s) that no import wrote; the import "
                         f"fills an empty Evaluations table (or replaces what it wrote before): clear those rows, or "
                         "import into a fresh copy of the template", {"sheet": sheet})
    width = max((len(r) for r in rows[h:h + 1]), default=0)
    return _Target(sheet, block.row_number(h), block.column_number(0), len(body), width)


def _fill_evaluations(backend, target: _Target, imported: ImportResult) -> None:
    """The long rows under the header; cells an earlier, longer or wider import wrote are cleared (the header
    cells of columns no longer filled stay, so the Excel Table keeps a name for each of its columns)."""
    rows = long_rows(imported)
    width = len(rows[0])
    wide = max(width, target.width)
    last = target.header_row + len(rows) - 1
    backend.fit_table(target.sheet, last, target.first_column + width - 1)
    backend.write_values(target.sheet, target.header_row, target.first_column, rows[:1])
    backend.write_values(target.sheet, target.header_row + 1, target.first_column,
                         [r + [None] * (wide - width) for r in rows[1:]])
    leftover = target.header_row + target.body_rows - last
    if leftover > 0:
        backend.write_values(target.sheet, last + 1, target.first_column, [[None] * wide] * leftover)


def _fill_list(backend, sheet: str, names: list) -> None:
    """The Assessors or Objects list below its header: the imported names (placeholders and older names go)."""
    actual = backend.find_sheet(sheet, required=False)
    if actual is None:
        return
    block = backend.read_block(actual)
    rows = block.rows
    h = next((i for i, r in enumerate(rows) if r and not is_blank(r[0])), 0)
    header_row, column = block.row_number(h), block.column_number(0)
    old = len(rows) - h - 1
    backend.fit_table(actual, header_row + len(names), column)
    values = [[name] for name in names] + [[None]] * max(old - len(names), 0)
    backend.write_values(actual, header_row + 1, column, values)


def _set_scale(backend, imported: ImportResult) -> None:
    """Settings' score scale becomes the export's (declared, the form's or inferred), so the checks accept its
    scores; a form's uneven points go on the row "Score scale points" (cleared otherwise)."""
    scale = imported.mapping.scale
    sheet = backend.find_sheet("Settings", required=False)
    if scale is None or sheet is None or scale.low is None or scale.high is None:
        return
    block = backend.read_block(sheet)
    number = lambda v: int(v) if float(v).is_integer() else float(v)  # noqa: E731
    wanted = {"score scale minimum": number(scale.low), "score scale maximum": number(scale.high),
              "score scale points": ", ".join(str(number(p)) for p in scale.points) if scale.uneven else None}
    for i, row in enumerate(block.rows):
        key = header_key(row[0]) if row else ""
        if key in wanted:
            backend.write_values(sheet, block.row_number(i), block.column_number(1), [[wanted[key]]])


def _save_roles(backend, form: ImportForm, imported: ImportResult) -> None:
    """The roles used, into the system's column of the Import sheet (edit them there; the next import uses them),
    and the count and a line about this import in the settings rows."""
    column = form.source_columns.get(imported.source)
    if column is not None:
        saved = {header_key(row[0]): row[1] for row in imported.mapping.to_rows()[2:]}
        for role, value in saved.items():
            if role in form.role_rows:
                backend.write_values(form.sheet, form.role_rows[role], column, [[value if value else None]])
    stamp = _dt.datetime.now().replace(microsecond=0).isoformat(sep=" ")
    ev = imported.evaluations
    line = (f"{stamp}: {imported.name} read as {imported.source}: {len(ev):,} evaluations of "
            f"{ev['object'].nunique():,} objects by {ev['assessor'].nunique():,} assessors; "
            f"{imported.left_out()} (sheet Import report)")
    for key, value in (("evaluations imported", len(ev)), ("last import", line)):
        if key in form.cells:
            backend.write_values(form.sheet, *form.cells[key], [[value]])


# ----------------------------------------------------------------------------
# xlcalib calibrate EXPORT: detection, plain averages, errors at the export's cells
# ----------------------------------------------------------------------------
def is_export(path: Path, sheet: str = "Evaluations") -> bool:
    """A review export rather than an evaluations table: its extension, a CSV whose header names fewer than two of
    Assessor, Object and Score, or a workbook without the evaluations sheet."""
    suffix = path.suffix.lower()
    if suffix in EXPORT_SUFFIXES:
        return True
    if suffix in TEXT_TABLE_SUFFIXES:
        from ..workbook import reader

        header = _csv_header(path)
        if not any(h.strip() for h in header) or "\x00" in "".join(header) or \
                (path.is_file() and path.stat().st_size > reader.MAX_INPUT_BYTES):
            return False  # blank, binary, too large or unreadable: the evaluations reader says what is wrong
        try:
            found = find_columns(header, EVALUATION_COLUMNS, path.name)
        except InputError:
            return False  # two columns could be the score ...: an evaluations table, reported as such
        # two of the three key columns: an evaluations table (a missing or misspelt third is named by its check)
        return len({"assessor", "object", "score"} & set(found)) < 2
    if suffix in (".xlsx", ".xlsm"):
        names = _workbook_sheet_names(path)
        return names is not None and sheet.lower() not in {n.lower() for n in names}
    return False


def _workbook_sheet_names(path: Path) -> list[str] | None:
    """The sheet names an .xlsx/.xlsm file lists in its workbook part (a few KB, read without parsing the
    sheets); None when the file is not such a zip (the workbook reader then says what is wrong)."""
    import html
    import zipfile
    import zlib

    try:
        with zipfile.ZipFile(path) as archive:
            info = archive.getinfo("xl/workbook.xml")
            if info.file_size > 4 * 1024 * 1024:
                return None
            text = archive.read(info).decode("utf-8", "replace")
    except (OSError, KeyError, zipfile.BadZipFile, zlib.error, EOFError, ValueError, NotImplementedError):
        return None  # damaged or unusual: the workbook reader names the part and the reason
    return [html.unescape(n) for n in re.findall(r'<(?:\w+:)?sheet\b[^>]*?\bname="([^"]*)"', text)]


def _csv_header(path: Path) -> list[str]:
    """The header record of a CSV file (read from its first 64 KB; comma, semicolon or tab, the one it uses most;
    below any title lines, :func:`~xlcalib.workbook.csv_layout.csv_layout`)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(65536).decode("utf-8-sig", "replace")
    except OSError:
        return []  # the evaluations reader names the file and the reason
    # its header may lie below a title or Excel's "sep=;" line: found as the evaluations reader finds it
    delimiter, line = csv_layout(head, names_evaluation_columns)
    return split_line(re.split(r"\r\n|\r|\n", head)[line], delimiter)


@dataclass
class ExportRun:
    """A calibrated export: the import and the calibration (``result``).  Reads like a calibration result for
    the command line (``summary()``, ``decisions``, ``input_checks``)."""

    imported: ImportResult
    result: Any = None
    input_checks: str = ""
    #: the ranking the run decided on, each object's group and title as read (as :class:`PanelRun` has them)
    decisions: pd.DataFrame | None = None
    groups: pd.Series | None = None
    titles: pd.Series | None = None

    def summary(self) -> str:
        return import_text(self.imported, "the sheet Import report") + "\n" + self.result.summary()


_SHEET_ROWS = re.compile(r"sheet Evaluations, (rows?) ((?:\d+, )*\d+)(?:, column (\w+) \(([A-Z]{1,3}\d+)\))?")


def _place(imported: ImportResult, sheet_row: int) -> tuple[str, int, str, str]:
    """(sheet, row, cell, words) of the export behind a row of the imported table (its header is row 1)."""
    origin = imported.origin.iloc[sheet_row - 2]
    sheet, row, cell = str(origin["sheet"]), int(origin["row"]), str(origin["cell"] or "")
    label = imported.name if sheet == imported.name else f"{imported.name}, sheet {sheet}"
    what = (f" (the review scored in cell {cell})" if re.fullmatch(r"[A-Z]{1,3}\d+", cell) else
            f" ({cell})" if cell else "")  # a note's field in a JSON export
    return sheet, row, cell, f"{label}, row {row}{what}"


_CELL_REF = re.compile(r"\bEvaluations!\$?[A-Z]{1,3}\$?(\d+)\b")


def _known(imported: ImportResult, sheet_row: int) -> bool:
    return 2 <= sheet_row < len(imported.origin) + 2


def _at_export(message: str, imported: ImportResult) -> str:
    def words(match) -> str:
        rows = [int(r) for r in match.group(2).split(", ")]
        text = "; ".join(_place(imported, r)[3] for r in rows if _known(imported, r))
        return text + (f", {match.group(3).lower()}" if match.group(3) else "")

    def reference(match) -> str:  # a name's cell, "Evaluations!A4": the export's row of that review
        row = int(match.group(1))
        if not _known(imported, row):
            return match.group(0)
        sheet, export_row, _, _ = _place(imported, row)
        return (imported.name if sheet == imported.name else f"{imported.name}, sheet {sheet},") + f" row {export_row}"

    message = _CELL_REF.sub(reference, _SHEET_ROWS.sub(words, message))
    return re.sub(r"\bsheet Evaluations\b", imported.name or "the export", message)


def at_export_cells(exc: InputError, imported: ImportResult) -> InputError:
    """An error about the imported table ("sheet Evaluations, row 7 ...") restated at the export's own rows
    and cells (through the import's origin), every problem of several."""
    if isinstance(exc, InputProblems):
        problems = []
        for p in exc.problems:
            if p.sheet == "Evaluations" and isinstance(p.row, (int, np.integer)) and _known(imported, int(p.row)):
                sheet, row, cell, _ = _place(imported, int(p.row))
                p = replace(p, sheet=sheet, row=row, cell=cell, message=_at_export(p.message, imported))
            else:
                p = replace(p, message=_at_export(p.message, imported))
            problems.append(p)
        out = InputProblems(problems)
        out.listing = getattr(exc, "listing", None)
        return out
    where = dict(exc.where)
    sheet_row = where.get("sheet_row")
    if isinstance(sheet_row, (int, np.integer)) and _known(imported, int(sheet_row)):
        sheet, row, cell, _ = _place(imported, int(sheet_row))
        where.update(sheet=sheet, sheet_row=row, cell=cell)
    return InputError(_at_export(exc.message, imported), where)


def checks_at_export(checks: pd.DataFrame, imported: ImportResult) -> pd.DataFrame:
    """The Checks lines of the imported table (warnings) at the export's rows and cells."""
    if checks is None or not len(checks):
        return checks
    out = checks.copy()
    sheets, cells = out["sheet"].tolist(), out["cell"].tolist()
    for k, (sheet, cell) in enumerate(zip(sheets, cells)):
        found = re.fullmatch(r"[A-Z]{1,3}(\d+)", str(cell or ""))
        if sheet == "Evaluations" and found and _known(imported, int(found.group(1))):
            sheets[k], _, cells[k], _ = _place(imported, int(found.group(1)))
    out["sheet"], out["cell"] = sheets, cells
    out["problem"] = [_at_export(str(t), imported) for t in out["problem"]]
    return out


def export_sheets(run: ExportRun, frames: dict, settings, preamble, *, feedback: bool = False) -> list:
    """The calibration result sheets of an export, the Summary saying how it was read, the Import report and
    the Import sheet (its roles, to reuse with --mapping)."""
    from ..presentation import calibration_sheets, import_report_sheet, import_sheet, with_import_rows

    imported = run.imported
    specs = calibration_sheets(run.result, frames, settings, None, preamble, feedback=feedback,
                               decisions=run.decisions, groups=run.groups, titles=run.titles)
    for spec in specs:
        if spec.name == "Summary":
            with_import_rows(spec, imported)
    return specs + [import_report_sheet(imported, preamble),
                    import_sheet(presets_frame({imported.source: imported.mapping}), preamble)]
