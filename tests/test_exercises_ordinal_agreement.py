"""The ordinal agreement exercise on a filled template (Fisher's radiologists), and the report job on a file:
results in a copy, the input never touched."""
from __future__ import annotations

import openpyxl

from xlcalib.cli import main
from xlcalib.exercises import ordinal_report

from .test_templates import filled_ordinal


def test_ordinal_report_reproduces_fisher(tmp_path):
    book = openpyxl.load_workbook(filled_ordinal(tmp_path / "ord.xlsx"))
    frames = ordinal_report(book)
    values = frames["Svensson"].set_index("measure")["value"]
    assert round(values["RP"], 3) == -0.084 and round(values["RC"], 3) == 0.113 and values["n"] == 59
    assert book["ROC chart"]._charts and not book["ROC"]._charts  # the chart on a page of its own


def test_report_cli_and_rerun_never_touches_inputs(tmp_path):
    path = filled_ordinal(tmp_path / "ord.xlsx")
    before = path.read_bytes()
    assert main(["report", "ordinal", str(path)]) == 0
    assert main(["report", "ordinal", str(path)]) == 0
    assert path.read_bytes() == before
    out = openpyxl.load_workbook(tmp_path / "ord_report.xlsx")
    assert out.sheetnames.count("Svensson") == 1 and out["Svensson"]["A1"].value == "xlcalib ordinal agreement"
    assert out["Instructions"]["B9"].value.startswith("=SUMPRODUCT(")  # the copy keeps the template's formulas
    assert out["Ratings"].data_validations.dataValidation  # and its validation
    assert main(["report", "ordinal", str(path), "-o", str(tmp_path / "r.csv")]) == 2


def _fisher_pairs():
    from .test_templates import FISHER

    return [(f"F{i + 1}", f"F{j + 1}") for i in range(4) for j in range(4) for _ in range(FISHER[i, j])]


def test_ordinal_report_agreement_follows_the_category_order(tmp_path):
    """Two raters, every object rated by both: Cohen's kappa first (weighted by the declared order, the template's
    quadratic default), the other coefficients below; unweighted it is the kappa of the Svensson sheet."""
    import pytest

    import xlcalib
    from xlcalib import agreement

    book = openpyxl.load_workbook(filled_ordinal(tmp_path / "ord.xlsx"))
    frames = ordinal_report(book)
    table = frames["Agreement"].set_index("coefficient")
    assert table.index[0] == "Weighted Cohen's kappa (quote this)" and "two raters" in table.iloc[0]["basis"]
    pairs = _fisher_pairs()
    order = ["F1", "F2", "F3", "F4"]
    core = agreement.conger_kappa(pairs, "quadratic", order)
    assert table.iloc[0]["estimate"] == pytest.approx(core.estimate, abs=1e-12)
    assert [table.iloc[0]["lower"], table.iloc[0]["upper"]] == pytest.approx([core.ci_low, core.ci_high])
    assert table.loc["categories in order", "basis"] == "F1, F2, F3, F4"
    assert "1 subject(s) without any rating" in table.loc["note", "basis"]  # the template's 60th object is empty
    # unweighted (the Settings sheet says identity): the Cohen's kappa of the Svensson sheet
    book = openpyxl.load_workbook(filled_ordinal(tmp_path / "ord.xlsx"))
    book["Settings"]["B2"] = "identity"
    frames = ordinal_report(book)
    kappa = frames["Agreement"].set_index("coefficient").loc["Cohen's kappa (quote this)", "estimate"]
    svensson = frames["Svensson"].set_index("measure")["value"]
    assert kappa == pytest.approx(svensson["kappa"], abs=1e-12)
    assert kappa == pytest.approx(xlcalib.svensson([a for a, _ in pairs], [b for _, b in pairs], order).kappa)


def test_ordinal_report_weights_use_the_values_given_beside_the_categories(tmp_path):
    import pytest

    from xlcalib import agreement
    from xlcalib.errors import InputError

    path = filled_ordinal(tmp_path / "ord.xlsx")
    book = openpyxl.load_workbook(path)
    values = {"F1": 1, "F2": 2, "F3": 3, "F4": 10}
    for r, v in enumerate(values.values(), start=2):
        book["Categories"].cell(row=r, column=2, value=v)
    frames = ordinal_report(book)
    got = frames["Agreement"].set_index("coefficient").iloc[0]["estimate"]
    assert got == pytest.approx(agreement.conger_kappa(_fisher_pairs(), "quadratic", values).estimate, abs=1e-12)
    assert got != pytest.approx(agreement.conger_kappa(_fisher_pairs(), "quadratic", list(values)).estimate, abs=1e-3)
    book["Categories"]["A3"] = None  # a value without its category
    with pytest.raises(InputError, match="sheet Categories, row 3 has a value but no category"):
        ordinal_report(book)
