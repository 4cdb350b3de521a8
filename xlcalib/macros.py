"""What Excel calls: the *Run main* button of a template workbook (xlwings).

A template's same-named .py calls :func:`run_from_excel` with the exercise's runner name; the runner itself
lives in :mod:`xlcalib.exercises` and is the same code the command line runs.  Here a problem with the
input reaches the person at Excel as a message box and as lines on the Checks sheet, never as a Python
traceback.  This module imports no xlwings until :func:`main` runs (the caller brings the Book).
"""
from __future__ import annotations

import re

import pandas as pd

from .errors import InputError
from .progress import listening
from .exercises import (
    calibrate_panel,
    check_own_sheets,
    ground_truth_report,
    ordinal_report,
    reliability_report,
    run_preamble,
    runner,
)
from .workbook import open_book

# The runners stay reachable by the names the README gives them (xlcalib.macros.calibrate_panel ...).
__all__ = ["main", "run_from_excel", "calibrate_panel", "reliability_report", "ordinal_report", "ground_truth_report"]


def main():  # pragma: no cover - called by the xlwings "Run main" button via the template's .py
    import xlwings as xw

    run_from_excel("calibrate_panel", xw.Book.caller())


def run_from_excel(entry: str, book) -> bool:
    """The *Run main* button: run one exercise on *book*; a problem with the input reaches the person at
    Excel as a message box and as a line on the Checks sheet, never as a Python traceback.

    ``entry`` is the runner's name (``calibrate_panel``, ``reliability_report``, ``ordinal_report``,
    ``ground_truth_report``, or ``import_export``: Run main on the panel template's Import sheet) or its
    report kind (``calibration`` ...).  Returns True when the run wrote its
    results.  Internal errors (bugs) are announced the same way and then raised, so the traceback reaches
    the log for a bug report.
    """
    status = ExcelStatusBar(book)
    try:
        with listening(status):
            runner(entry)(book)
        return True
    except InputError as exc:
        _tell_excel(book, exc.message, exc.where, "Please fix the input", getattr(exc, "problems", None))
        return False
    except Exception as exc:
        _tell_excel(book, f"xlcalib stopped with an internal error ({type(exc).__name__}: {exc}); please report it "
                          "with the Python log", {}, "xlcalib internal error")
        raise
    finally:
        status.clear()


class ExcelStatusBar:
    """The steps of a run on Excel's status bar ("xlcalib: fitting the random-assessors model ... 40%"), cleared
    when the run ends: the Run main button's answer to a long wait (a book without an application to show it
    on -- an openpyxl file, xlwings Server or Lite -- shows nothing)."""

    def __init__(self, book):
        self.app = getattr(book, "app", None)
        self._steps: list[list] = []  # [words, total, done]

    def _show(self, text) -> None:
        if self.app is None:
            return
        try:
            self.app.status_bar = text
        except Exception:  # no status bar here: the run goes on without it
            self.app = None

    def _current(self) -> str:
        words, total, done = self._steps[-1]
        share = f" {min(done / total, 1.0):.0%}" if total else ""
        return f"xlcalib: {words} ...{share}"

    def begin(self, words: str, total: int | None) -> None:
        self._steps.append([words, total, 0])
        self._show(self._current())

    def advance(self, amount: int) -> None:
        if self._steps:
            self._steps[-1][2] += amount
            self._show(self._current())

    def end(self) -> None:
        if self._steps:
            self._steps.pop()
        self._show(self._current() if self._steps else False)

    def clear(self) -> None:
        self._steps.clear()
        self._show(False)  # Excel's own text comes back


def _tell_excel(book, message: str, where: dict, title: str, problems=None) -> None:
    """A message box where the platform has one (``app.alert``), and the message on the Checks sheet
    (every problem on its own line when the error carries them all)."""
    if problems:
        frame = pd.DataFrame({"severity": [p.severity for p in problems], "sheet": [p.sheet for p in problems],
                              "cell": [p.cell for p in problems], "problem": [p.message for p in problems]})
        _write_checks(book, frame)
        _alert(book, message, title)
        return
    named = re.search(r"\bsheet ([^,:;()]+?)(?:,|:| row| cell|$)", message)
    sheet = str(where.get("sheet") or (named.group(1).strip() if named else ""))
    at = re.search(r"\b(cell [A-Z]{1,3}\d+|rows? [\d, ]+\d)", message)
    cell = where.get("cell") or (f"row {where['sheet_row']}" if where.get("sheet_row") else (at.group(1) if at else ""))
    frame = pd.DataFrame({"severity": ["error"], "sheet": [sheet], "cell": [str(cell)], "problem": [message]})
    _write_checks(book, frame)
    _alert(book, message, title)


def _write_checks(book, frame: pd.DataFrame) -> None:
    from .presentation import checks_sheet

    backend = open_book(book)
    try:
        check_own_sheets(backend, ["Checks"])
        backend.write_sheet(checks_sheet(frame, run_preamble("checks", "the run stopped: nothing else was written", None)))
    except InputError:  # a sheet of the user's called Checks: leave it, the message box still speaks
        pass


def _alert(book, message: str, title: str) -> None:
    try:
        book.app.alert(message, title=f"xlcalib: {title}", buttons="ok", mode="critical")
    except Exception:  # no message boxes here (xlwings Server / Lite / tests): the Checks sheet carries it
        pass
