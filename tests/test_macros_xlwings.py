"""The xlwings Book adapter of the macros, exercised with a minimal in-memory stand-in of xlwings' Book API.

Only the calls the adapter makes are modelled (sheets by name, add, used_range with options(ndim=2).value,
row/column, clear, range("A1").options(ndim=2).value = rows); the stand-in classes carry
``__module__ = "xlwings.main"`` so the adapter picks the xlwings backend, exactly as for a real Book.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

import xlcalib
from xlcalib.macros import calibrate_panel


class _Range:
    def __init__(self, sheet, cell="A1", end=None):
        self.sheet, self.cell, self.end = sheet, cell, end
        self.left = self.top = 0.0

    def options(self, ndim=None):
        return self

    @property
    def value(self):
        return [list(r) for r in self.sheet.cells]

    @value.setter
    def value(self, rows):
        assert self.cell == "A1"
        self.sheet.cells = [list(r) for r in rows]

    row = column = 1


class _Chart:
    chart_type = name = source = None

    def __init__(self, owner=None):
        self.owner = owner

    def delete(self):
        self.owner.remove(self)

    def set_source_data(self, rng):
        self.source = (rng.cell, rng.end)


class _Charts(list):
    def add(self, left=0, top=0, width=355, height=211):
        chart = _Chart(self)
        self.append(chart)
        return chart


class _Sheet:
    def __init__(self, name, cells=None):
        self.name, self.cells = name, cells or []
        self.charts = _Charts()

    @property
    def used_range(self):
        return _Range(self)

    def range(self, cell, end=None):
        return _Range(self, cell, end)

    def clear(self):
        self.cells = []


class _Sheets(list):
    def __getitem__(self, key):
        if isinstance(key, str):
            return next(s for s in self if s.name == key)
        return list.__getitem__(self, key)

    def add(self, name, after=None):
        sheet = _Sheet(name)
        self.append(sheet)
        return sheet


class Book:
    def __init__(self, sheets):
        self.sheets = _Sheets(sheets)


for cls in (_Range, _Sheet, _Sheets, _Chart, _Charts, Book):
    cls.__module__ = "xlwings.main"


def test_calibrate_panel_through_the_xlwings_adapter():
    evaluations, _, _ = xlcalib.demo.demo_panel()
    rows = [list(evaluations.columns)] + evaluations.astype(object).values.tolist()
    book = Book([_Sheet("Evaluations", rows), _Sheet("Levels", [["Level", "SD"], ["High", 0.5], ["Medium", 1.0], ["Low", 2.0]])])
    result = calibrate_panel(book)
    core = xlcalib.calibrate(evaluations.rename(columns=str.lower))
    np.testing.assert_allclose(result.values["value"], core.values["value"])
    names = [s.name for s in book.sheets]
    assert names == ["Evaluations", "Levels", "Values", "Biases", "Residuals", "Diagnostics"]
    biases = book.sheets["Biases"].cells
    header = next(i for i, r in enumerate(biases) if r and r[0] == "assessor")
    table = pd.DataFrame(biases[header + 1:], columns=biases[header]).set_index("assessor")
    np.testing.assert_allclose(table.loc[core.biases.index, "bias"].astype(float), core.biases["bias"])
    assert book.sheets["Evaluations"].cells == rows  # input untouched
    chart = book.sheets["Biases"].charts[0]
    assert chart.chart_type == "bar_clustered" and chart.source == ((header + 1, 1), (header + 1 + len(core.biases), 2))
    calibrate_panel(book)  # re-run replaces its own sheets (and charts) only
    assert [s.name for s in book.sheets] == names and len(book.sheets["Biases"].charts) == 1
