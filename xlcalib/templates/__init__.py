"""Template workbooks per exercise, built with openpyxl (deterministic: fixed timestamps, stable zip order).

Kinds: ``panel_calibration``, ``reliability``, ``ordinal_agreement``,
``ground_truth`` (one module each).  ``build(kind, path, **size)`` writes one; ``build_all(dir)``
rebuilds the committed ones in ``workbook_templates/``.  With ``macro=True``
the workbook is an ``.xlsm`` based on xlwings' standalone quickstart (which
carries the xlwings VBA module) plus a same-named ``.py`` whose ``main()``
runs the matching exercise (:mod:`xlcalib.templates.macro_book`).
"""
from __future__ import annotations

from pathlib import Path

from .common import deterministic_bytes, print_ready
from .ground_truth import ground_truth
from .macro_book import MACRO_ENTRIES, check_macro_name, into_macro_book, macro_module
from .ordinal_agreement import ordinal_agreement
from .panel_calibration import panel_calibration
from .reliability import reliability

BUILDERS = {"panel_calibration": panel_calibration, "reliability": reliability,
            "ordinal_agreement": ordinal_agreement, "ground_truth": ground_truth}
KINDS = tuple(BUILDERS)

__all__ = ["BUILDERS", "KINDS", "MACRO_ENTRIES", "build", "build_all", "deterministic_bytes", "print_ready"]


def build(kind: str, path, macro: bool = False, **size) -> list[Path]:
    """Write a fresh exercise workbook (and, with ``macro``, the .xlsm + .py pair). Returns the files written."""
    from ..workbook import write_bytes_atomically

    if kind not in BUILDERS:
        raise ValueError(f"unknown template kind {kind!r}; choose from {', '.join(KINDS)}")
    wb = print_ready(BUILDERS[kind](**size))
    path = Path(path)
    written = []
    if macro:
        path = path.with_suffix(".xlsm")
        check_macro_name(path)
        wb = into_macro_book(wb)
    write_bytes_atomically(deterministic_bytes(wb), path)
    written.append(path)
    if macro:
        py = path.with_suffix(".py")
        write_bytes_atomically(macro_module(kind, path.name).encode("utf-8"), py)
        written.append(py)
    return written


def build_all(folder) -> list[Path]:
    """Rebuild the committed templates (default sizes) into *folder*."""
    out = []
    for kind in KINDS:
        out += build(kind, Path(folder) / f"{kind}.xlsx")
    return out
