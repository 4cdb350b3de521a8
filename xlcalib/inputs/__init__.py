"""A workbook's input sheets, checked: messy cells -> typed settings and a clean panel, every problem by cell.

One floor above the cell rules (:mod:`xlcalib.cells`, which say what one cell or argument means) and
above the numerical core (:mod:`xlcalib.calibration`, whose settings types it fills); below the workbook
backends, which it uses only through their small interface, and below the exercises, which read through
it, call the core and write.  The core never imports it: statistics stand on :mod:`xlcalib.cells` alone.

* :mod:`~xlcalib.inputs.table` -- a table with a header row (:class:`RawTable`) and the evaluation
  columns' header spellings (:func:`find_columns`);
* :mod:`~xlcalib.inputs.evaluations` -- the evaluations check: every problem at once
  (:func:`check_evaluations`; its columns read in bulk by :mod:`~xlcalib.inputs.columns`, mistyped names
  answered by :mod:`~xlcalib.inputs.names`), each a :class:`Problem` in a :class:`PanelInput`, given as the
  Checks table by :func:`checks_frame` (:mod:`~xlcalib.inputs.problems`);
* :mod:`~xlcalib.inputs.panel` -- a workbook's evaluations with its lists and scale (:func:`read_panel`),
  and with its settings all a calibration run reads (:func:`read_calibration_inputs`);
* :mod:`~xlcalib.inputs.settings` -- the Settings and Levels sheets (:func:`read_settings`,
  :class:`CalibrationSettings`) and the checks that name where a setting came from;
* :mod:`~xlcalib.inputs.groups` -- each object's group (:func:`read_groups`);
* :mod:`~xlcalib.inputs.lottery` -- a result workbook's Lottery sheet read back, to re-run its draw
  (:func:`verify_lottery_cells`).
"""
from __future__ import annotations

from .evaluations import check_evaluations, evaluations_from_rows
from .groups import DEFAULT_GROUP_COLUMN, TITLE_COLUMN, read_groups, read_titles
from .lottery import LotteryRecord, read_lottery, verify_lottery_cells
from .names import suggest_name, suggest_names
from .panel import read_calibration_inputs, read_panel, read_table, user_headers
from .problems import PanelInput, Problem, checks_frame
from .settings import (
    CLI_OPTIONS,
    SETTING_ROWS,
    CalibrationSettings,
    check_line_applies,
    check_line_fits,
    check_settings,
    level_names,
    read_score_scale,
    read_settings,
)
from .table import EVALUATION_COLUMNS, UNCERTAINTY_KINDS, RawTable, find_columns, table_from_block

__all__ = [
    "CLI_OPTIONS",
    "DEFAULT_GROUP_COLUMN",
    "EVALUATION_COLUMNS",
    "SETTING_ROWS",
    "UNCERTAINTY_KINDS",
    "CalibrationSettings",
    "LotteryRecord",
    "PanelInput",
    "Problem",
    "RawTable",
    "check_evaluations",
    "check_line_applies",
    "check_line_fits",
    "check_settings",
    "checks_frame",
    "evaluations_from_rows",
    "find_columns",
    "level_names",
    "read_calibration_inputs",
    "read_groups",
    "read_titles",
    "TITLE_COLUMN",
    "read_lottery",
    "read_panel",
    "read_score_scale",
    "read_settings",
    "read_table",
    "suggest_name",
    "suggest_names",
    "table_from_block",
    "user_headers",
    "verify_lottery_cells",
]
