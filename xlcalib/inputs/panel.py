"""A panel's evaluations read from a workbook and checked, with what the workbook itself declares: its lists of
assessors and objects, its score scale and the level names the run uses; with the Settings and Levels
sheets, all a calibration run reads (:func:`read_calibration_inputs`).

*backend* is any workbook backend (:mod:`xlcalib.workbook`: openpyxl, the fast reader, CSV, xlwings),
used through its small interface (``find_sheet``, ``read_block``, a ``read_table`` of its own if it has
one); this floor never imports the backends.
"""
from __future__ import annotations

from collections.abc import Sequence

from ..cells import Uncalculated, column_letter, excel_error_code, is_blank, parse_label
from ..errors import InputError
from .evaluations import check_evaluations
from .problems import PanelInput, Problem
from .settings import (
    CalibrationSettings,
    check_line_fits,
    check_settings,
    level_names,
    read_score_scale,
    read_settings,
)
from .table import EVALUATION_COLUMNS, RawTable, find_columns, table_from_block


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
        scale, scale_where = read_score_scale(backend, problems)
    assessors = _list_names(backend, "Assessors")
    objects = _list_names(backend, "Objects")
    table = read_table(backend, sheet)
    panel = check_evaluations(table, uncertainty=uncertainty, scale=scale, assessors=assessors, objects=objects,
                              levels=levels, scale_where=scale_where or "sheet Settings")
    panel.problems[:0] = problems
    panel.problems.sort(key=lambda p: p.severity != "error")
    return panel


def user_headers(panel) -> dict[str, str]:
    """The headers the user gave the assessor, object and score columns ("Reviewer", "Proposal", "Mark" ...)."""
    table = getattr(panel, "table", None)
    header = getattr(table, "header", None)
    if not header:
        return {}
    found = find_columns(header, EVALUATION_COLUMNS, panel.sheet)
    return {name: str(header[j]).strip() for name, j in found.items() if name in ("assessor", "object", "score")}


def read_calibration_inputs(backend, defaults: CalibrationSettings, overrides: dict | None = None,
                            origins: dict[str, str] | None = None) -> tuple[CalibrationSettings, PanelInput]:
    """All a calibration run reads, checked: (settings, panel).

    The Settings and Levels sheets over *defaults*, then *overrides* (the command line's options, named in
    messages by *origins*, :data:`~xlcalib.inputs.CLI_OPTIONS`) over them; the settings are checked before the
    evaluations are read (with the run's level names and score scale), and the funding line against the
    number of objects after.  The evaluations' cell problems are in the panel, not raised
    (``panel.raise_errors()``): a caller may look at the panel first.
    """
    settings = read_settings(backend, defaults)
    settings.override(overrides or {}, origins)
    check_settings(settings)
    panel = read_panel(backend, settings.sheet, levels=level_names(settings), scale=settings.scale,
                       scale_where=settings.origins.get("scale", ""))
    if not panel.errors:  # cells refused leave objects out: the count is the panel's only once they are mended
        check_line_fits(settings, int(panel.frame["object"].nunique()))
    settings.headers = user_headers(panel)
    return settings, panel
