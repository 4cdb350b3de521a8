"""The xlwings backend of the workbook interface, against an in-memory stand-in of xlwings' Book API.

The stand-in models only the calls the backend makes, with Excel's own semantics where they matter:
a string assigned to ``Range.value`` is parsed as if typed (``=...`` becomes a formula, ``007`` the
number 7) unless it starts with the text prefix ``'``, which is dropped from the stored text.  Classes
carry ``__module__ = "xlwings.main"`` so :func:`xlcalib.workbook.open_book` picks the xlwings backend
exactly as for a real ``Book``.
"""
from __future__ import annotations

import re

import pandas as pd
import pytest

from xlcalib.errors import InputError
from xlcalib.workbook import ChartSpec, open_book
from xlcalib.workbook.xlwings_backend import XlwingsBook, excel_text

_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


class Formula(str):
    """What Excel stores when a typed string starts with '=': a formula, not text."""


def _a1(ref: str) -> tuple[int, int]:
    letters = "".join(c for c in ref if c.isalpha()).upper()
    col = 0
    for ch in letters:
        col = col * 26 + ord(ch) - 64
    return int("".join(c for c in ref if c.isdigit())), col


class _Font:
    def __init__(self, rng):
        self._rng = rng

    def __setattr__(self, key, value):
        if key.startswith("_"):
            return object.__setattr__(self, key, value)
        for cell in self._rng.cells():
            self._rng.sheet.formats.setdefault(cell, {})[key] = value


class _Range:
    def __init__(self, sheet, first, last=None):
        if isinstance(first, str):
            parts = first.split(":")
            first, last = _a1(parts[0]), (_a1(parts[1]) if len(parts) > 1 else None)
        self.sheet, self.first, self.last = sheet, tuple(first), tuple(last or first)
        self.row, self.column = self.first
        self.left, self.top = 10.0 * self.column, 15.0 * self.row

    def cells(self):
        return [(r, c) for r in range(self.first[0], self.last[0] + 1) for c in range(self.first[1], self.last[1] + 1)]

    @property
    def shape(self):
        return self.last[0] - self.first[0] + 1, self.last[1] - self.first[1] + 1

    def options(self, ndim=None):
        return self

    @property
    def value(self):
        return [[self.sheet.cells.get((r, c)) for c in range(self.first[1], self.last[1] + 1)]
                for r in range(self.first[0], self.last[0] + 1)]

    @value.setter
    def value(self, rows):
        r0, c0 = self.first
        for i, row in enumerate(rows):
            for j, v in enumerate(row):
                if isinstance(v, str):  # Excel parses typed text
                    if v.startswith("'"):
                        v = v[1:]
                    elif v.startswith("="):
                        v = Formula(v)
                    elif _NUMBER.match(v):
                        v = float(v)
                if v is None:
                    self.sheet.cells.pop((r0 + i, c0 + j), None)
                else:
                    self.sheet.cells[(r0 + i, c0 + j)] = v

    @property
    def font(self):
        return _Font(self)

    def __setattr__(self, key, value):
        if key in ("color", "number_format"):
            for cell in self.cells():
                self.sheet.formats.setdefault(cell, {})[key] = value
        else:
            object.__setattr__(self, key, value)


class _Axis:
    title = None


class _Chart:
    chart_type = title = source = x_values = None

    def __init__(self, owner, **place):
        self.owner, self.place = owner, place
        self.category_axis, self.value_axis = _Axis(), _Axis()

    @property
    def api(self):
        raise AttributeError("no COM object model in the stand-in (as on macOS / xlwings Server)")

    def delete(self):
        self.owner.remove(self)

    def set_source_data(self, rng):
        self.source = (rng.first, rng.last)

    def set_x_axis_values(self, rng):
        self.x_values = (rng.first, rng.last)


class _Charts(list):
    def add(self, left=0, top=0, width=355, height=211):
        chart = _Chart(self, left=left, top=top, width=width, height=height)
        self.append(chart)
        return chart


class _Table:
    def __init__(self, rng):
        self.range = rng

    def resize(self, rng):
        self.range = rng


class Sheet:
    def __init__(self, name, rows=None, book=None, table: str | None = None, at=(1, 1)):
        self.name, self.book, self.cells, self.formats = name, book, {}, {}
        self.charts = _Charts()
        self.tables = []
        for i, row in enumerate(rows or []):  # stored as given (values already in the cells), not typed
            for j, v in enumerate(row):
                if v is not None:
                    self.cells[(at[0] + i, at[1] + j)] = v
        if table:
            self.tables.append(_Table(_Range(self, table)))

    @property
    def used_range(self):
        if not self.cells:
            return _Range(self, (1, 1))
        rows = [r for r, _ in self.cells]
        cols = [c for _, c in self.cells]
        return _Range(self, (min(rows), min(cols)), (max(rows), max(cols)))

    def range(self, first, last=None):
        return _Range(self, first, last)

    def clear(self):
        self.cells, self.formats = {}, {}

    def delete(self):
        self.book.sheets.remove(self)

    def rows(self):
        """Stored values as a list of rows from A1 (for assertions)."""
        rng = self.used_range
        return _Range(self, (1, 1), rng.last).value


class _Sheets(list):
    def __init__(self, book, sheets):
        super().__init__(sheets)
        self.book = book
        for s in sheets:
            s.book = book

    def __getitem__(self, key):
        if isinstance(key, str):
            return next(s for s in self if s.name == key)
        return list.__getitem__(self, key)

    def add(self, name, after=None):
        sheet = Sheet(name, book=self.book)
        self.insert(self.index(after) + 1 if after is not None else 0, sheet)
        return sheet


class Book:
    def __init__(self, sheets):
        self.sheets = _Sheets(self, sheets)


for cls in (_Range, _Font, _Axis, Sheet, _Sheets, _Chart, _Charts, _Table, Book):
    cls.__module__ = "xlwings.main"


# --------------------------------------------------------------------------- tests
def test_open_book_picks_the_xlwings_backend():
    assert isinstance(open_book(Book([])), XlwingsBook)
    with pytest.raises(TypeError, match="unsupported workbook type"):
        open_book(object())


def test_read_block_used_range_and_table_and_case_insensitive_names():
    book = Book([Sheet("Data", [["Assessor", "Score"], ["A", 5.0]], at=(3, 2)),
                 Sheet("T", [["x", "y"], [1.0, 2.0], [3.0, 4.0], ["note", None]], table="A1:B3")])
    backend = open_book(book)
    block = backend.read_block("data")
    assert (block.rows, block.first_row, block.first_column, block.sheet) == ([["Assessor", "Score"], ["A", 5.0]], 3, 2, "Data")
    assert backend.read_block("T").rows == [["x", "y"], [1.0, 2.0], [3.0, 4.0]]  # the Table, not the note below it
    with pytest.raises(InputError, match="no sheet named 'Missing' \\(sheets: Data, T\\)"):
        backend.read_block("Missing")


def test_write_frame_text_stays_text_and_formats():
    book = Book([Sheet("Input", [["keep"]])])
    backend = open_book(book)
    frame = pd.DataFrame({"name": ["=SUM(1)", "+1", "-x", "@f", "007", "plain"], "flag": [True, False] * 3,
                          "x": [1.5, float("nan"), 2, 3, 4, 5]})
    top = backend.write_frame("Out", frame, preamble=[["title", "run now"]], highlight="flag")
    assert top == 3
    ws = book.sheets["Out"]
    names = [ws.cells[(r, 1)] for r in range(4, 10)]
    assert names == ["=SUM(1)", "+1", "-x", "@f", "007", "plain"]
    assert not any(isinstance(v, Formula) for v in ws.cells.values())  # nothing became a formula or a number
    assert (5, 3) not in ws.cells  # NaN -> blank
    assert ws.formats[(3, 1)]["bold"] and ws.formats[(1, 1)]["italic"]
    assert ws.formats[(4, 2)]["color"] == (255, 199, 206) and "color" not in ws.formats.get((5, 1), {})
    assert book.sheets["Input"].cells == {(1, 1): "keep"}


def test_write_frame_replaces_in_place_with_its_charts():
    book = Book([Sheet("A"), Sheet("Out", [["old", "stuff", "wide", "row"]]), Sheet("Z")])
    backend = open_book(book)
    book.sheets["Out"].charts.add()
    backend.write_frame("out", pd.DataFrame({"v": [1.0]}))
    assert [s.name for s in book.sheets] == ["A", "Out", "Z"]  # same tab, same position
    assert book.sheets["Out"].rows() == [["v"], [1.0]] and not book.sheets["Out"].charts
    backend.write_frame("New", pd.DataFrame({"v": [1.0]}))
    assert [s.name for s in book.sheets] == ["A", "Out", "Z", "New"]
    backend.delete_sheet("new")
    backend.delete_sheet("never there")
    assert [s.name for s in book.sheets] == ["A", "Out", "Z"]


def test_add_chart_and_style_cells():
    book = Book([Sheet("S")])
    backend = open_book(book)
    top = backend.write_frame("S", pd.DataFrame({"who": ["a", "b"], "bias": [0.5, -0.5], "bound": [0.2, 0.3]}))
    backend.add_chart("S", ChartSpec("column", "Bias", top, 2, 1, (2,), "assessor", "bias", error_column=3, anchor="E2"))
    chart = book.sheets["S"].charts[0]
    assert chart.chart_type == "column_clustered" and chart.title == "Bias"
    assert chart.source == ((1, 2), (3, 2)) and chart.x_values == ((2, 1), (3, 1))
    assert chart.category_axis.title == "assessor" and chart.value_axis.title == "bias"
    assert chart.place["left"] == book.sheets["S"].range("E2").left
    backend.style_cells("S", "A2:B2", bold=True, fill="FFFF00", number_format="0.00")
    shown = book.sheets["S"].formats[(2, 2)]
    assert {k: shown[k] for k in ("bold", "color", "number_format")} == {"bold": True, "color": (255, 255, 0),
                                                                          "number_format": "0.00"}
    assert (shown["name"], shown["size"]) == ("Calibri", 11)  # one named font: no serif fallback


def test_excel_text_prefix_rule():
    assert [excel_text(v) for v in ("=1", "1e3", ".5", "abc", 3.0, None, "'quoted'")] == [
        "'=1", "'1e3", "'.5", "abc", 3.0, None, "''quoted'"]  # a leading ' is kept, not eaten as the prefix
