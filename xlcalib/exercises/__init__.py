"""One runner per exercise: read a template's input sheets, run the core, (re)write the result sheets.

The command line (``xlcalib report KIND``, ``calibrate``, ``next-reads``, ``assign``), the *Run main* button
(:func:`xlcalib.macros.run_from_excel`) and the demo all run these same functions, on an openpyxl workbook,
a file reader or a live xlwings Book (:func:`xlcalib.workbook.open_book` gives them one interface).
:data:`RUNNERS` is the one table of the report runners; :func:`runner` finds one by either of its names.
"""
from __future__ import annotations

from ..inputs import CalibrationSettings  # what a calibration run takes, read from the Settings sheet
from .assignment import assign_file, design_verdict
from .calibration_file import MAX_PROBLEM_LINES, RESIDUALS_COLUMNS, calibrate_file, next_reads_file
from .common import check_own_sheets, report_file, run_preamble
from .ground_truth import ground_truth_report
from .import_export import ExportOptions, ExportRun, import_export, import_file, import_into_book, import_text
from .ordinal_agreement import ordinal_report
from .panel_calibration import RESULT_SHEETS, PanelRun, calibrate_panel, compute_calibration, write_calibration
from .reliability import reliability_report
from .verify_draw import verify_draw_file

#: The exercises' runners by the kind ``xlcalib report KIND`` names.  A template's Run main names the runner
#: itself (``run_from_excel("calibrate_panel", book)``, :data:`xlcalib.templates.MACRO_ENTRIES`).
RUNNERS = {"calibration": calibrate_panel, "reliability": reliability_report, "ordinal": ordinal_report,
           "ground_truth": ground_truth_report}
#: Runners a Run main button names besides the reports: Run main on the panel template's Import sheet
#: (``run_from_excel("import_export", book)``) fills its Evaluations from the export named there.
MACRO_RUNNERS = {"import": import_export}

__all__ = ["MACRO_RUNNERS", "MAX_PROBLEM_LINES", "RESIDUALS_COLUMNS", "RESULT_SHEETS", "RUNNERS", "CalibrationSettings",
           "ExportOptions", "ExportRun", "PanelRun", "assign_file", "calibrate_file", "calibrate_panel", "check_own_sheets",
           "compute_calibration", "design_verdict", "ground_truth_report", "import_export", "import_file",
           "import_into_book", "import_text", "next_reads_file", "ordinal_report", "reliability_report", "report_file",
           "run_preamble", "runner", "verify_draw_file", "write_calibration"]


def runner(name: str):
    """The runner that *name* names: a report kind (``"calibration"``) or the runner's own name
    (``"calibrate_panel"``, as the templates' Run main files write it; ``"import_export"`` for the Import
    sheet).  KeyError for any other name."""
    for kind, run in {**RUNNERS, **MACRO_RUNNERS}.items():
        if name in (kind, run.__name__):
            return run
    raise KeyError(name)
