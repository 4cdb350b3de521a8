"""*Import Functions* (the xlwings ribbon button) run through xlwings' own ``import_udfs``, headless.

What Excel receives: one VBA module ``xlwings_udfs`` with a wrapper per function,
and per function one ``Application.MacroOptions`` call carrying the Function
Wizard description, category and argument descriptions.  xlwings cuts those
texts at Excel's 255-character limit; the catalogue's texts must fit uncut.
"""
from __future__ import annotations

import re

import pytest

from udf_registry.registry import REGISTRY

from . import xlwings_harness as harness


@pytest.fixture(scope="module")
def imported():
    return harness.import_functions("panel.xlsm")


def test_one_vba_module_with_a_wrapper_per_function(imported):
    vba, _ = imported
    assert vba.startswith('Attribute VB_Name = "xlwings_udfs"')
    assert sorted(re.findall(r"^Function (\w+)\(", vba, flags=re.M)) == sorted(REGISTRY)
    assert vba.isascii()  # the module file is imported by the VBA editor in the system code page


def test_function_wizard_texts_arrive_uncut(imported):
    _, options = imported
    by_name = {macro.split("!")[1]: kw for macro, kw in options}
    assert set(by_name) == set(REGISTRY)
    for macro, _ in options:
        assert macro.startswith("'panel.xlsm'!")
    for name, entry in REGISTRY.items():
        kw = by_name[name]
        assert kw["Description"] == entry.help and len(entry.help) <= 255
        assert kw["Category"] == entry.category
        assert kw["ArgumentDescriptions"] == [a.help for a in entry.args]
        assert all(len(a.help) <= 255 for a in entry.args)
