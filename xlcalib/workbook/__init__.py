"""Workbook adapters: read input tables from and write result sheets to spreadsheet files.

Only this package (and the CLI, macros and template builders) imports
openpyxl; the numerical core never does.
"""
from .openpyxl_io import (
    MAX_INPUT_BYTES,
    safe_cell_value,
    write_frames,
    write_workbook_atomically,
)

__all__ = ["MAX_INPUT_BYTES", "safe_cell_value", "write_frames", "write_workbook_atomically"]
