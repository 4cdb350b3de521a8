"""The ordinal agreement exercise on a filled template (Fisher's radiologists), and the report job on a file:
results in a copy, the input never touched."""
from __future__ import annotations

import openpyxl
import pytest

from xlcalib.cli import main
from xlcalib.exercises import ordinal_report

from .test_templates import filled_ordinal


def test_ordinal_report_reproduces_fisher(tmp_path):
    book = openpyxl.load_workbook(filled_ordinal(tmp_path / "ord.xlsx"))
    frames = ordinal_report(book)
    values = frames["Svensson"].set_index("measure")["value"]
    assert round(values["RP"], 3) == -0.084 and round(values["RC"], 3) == 0.113 and values["n"] == 59
    assert book["ROC chart"]._charts and not book["ROC"]._charts  # the chart on a page of its own


def _sheet_rows(ws, first: str) -> dict:
    """A result sheet's rows by their first cell, below the header whose first cell is *first*."""
    rows = list(ws.iter_rows(values_only=True))
    header = next(i for i, r in enumerate(rows) if r[0] == first)
    return {r[0]: dict(zip(rows[header], r)) for r in rows[header + 1:] if r[0]}, rows[header]


def test_svensson_sheet_reads_in_words_with_the_raters_own_headers(tmp_path):
    """Fisher's radiologists (Svensson's Table II) under their own headers: each measure's verdict names them,
    RP and RC say who is lower and narrower (as Svensson reads them: radiologist 2 lower and more concentrated)
    with their size and the caveat of an interval reaching 0; PA is a percentage, the count an integer."""
    path = filled_ordinal(tmp_path / "ord.xlsx")
    book = openpyxl.load_workbook(path)
    book["Ratings"]["B1"], book["Ratings"]["C1"] = "Radiologist A", "Radiologist B"
    ordinal_report(book)
    rows, header = _sheet_rows(book["Svensson"], "measure")
    assert header == ("measure", "value", "SE", "lower", "upper", "verdict", "meaning")
    rp, rc, rv = (rows[k] for k in ("RP, relative position", "RC, relative concentration",
                                    "RV, relative rank variance"))
    assert rp["verdict"] == ("small systematic disagreement in position: Radiologist B uses lower categories than "
                             "Radiologist A; may be chance (the 95% interval includes 0)")
    assert rc["verdict"] == ("moderate systematic disagreement in concentration: Radiologist B concentrates on fewer "
                             "categories than Radiologist A; may be chance (the 95% interval includes 0)")
    assert rv["verdict"].startswith("small random disagreement: Radiologist A and Radiologist B order some objects")
    assert rp["lower"] < rp["value"] < rp["upper"] and rp["upper"] > 0  # the interval the caveat speaks of
    assert "rater 1" not in " ".join(str(r["verdict"]) + str(r["meaning"]) for r in rows.values()).lower()
    assert "P(Radiologist A lower)" in rp["meaning"]
    pa = rows["PA, percentage agreement"]
    assert pa["value"] == pytest.approx(40 / 59) and book["Svensson"].cell(
        row=list(rows).index("PA, percentage agreement") + _header_row(book["Svensson"]) + 1, column=2
    ).number_format == "0.0%"
    assert pa["verdict"] == "68% of the 59 objects: the same category from both"
    n = rows["objects rated by both"]["value"]
    assert n == 59 and isinstance(n, int)
    assert rows["kappa max"]["verdict"] == "Cohen's kappa is 68% of the largest these category shares permit"
    footer = " ".join(str(r[0]) for r in book["Svensson"].iter_rows(values_only=True) if r[0])
    assert "below 0.1 small, below 0.3 moderate, else large" in footer and "Svensson 1993" in footer


def _header_row(ws) -> int:
    return next(i for i, r in enumerate(ws.iter_rows(values_only=True), start=1) if r[0] == "measure")


def test_svensson_sheet_weighted_kappas_equal_sklearn(tmp_path):
    """Cohen's kappa unweighted, linear- and quadratic-weighted beside Svensson's measures: scikit-learn's
    cohen_kappa_score as the oracle (test-only), intervals around each."""
    sklearn = pytest.importorskip("sklearn.metrics")
    book = openpyxl.load_workbook(filled_ordinal(tmp_path / "ord.xlsx"))
    ordinal_report(book)
    rows, _ = _sheet_rows(book["Svensson"], "measure")
    pairs = _fisher_pairs()
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    for label, weights in (("Cohen's kappa (unweighted)", None), ("linear-weighted kappa", "linear"),
                           ("quadratic-weighted kappa", "quadratic")):
        row = rows[label]
        assert row["value"] == pytest.approx(sklearn.cohen_kappa_score(a, b, weights=weights), abs=1e-12), label
        assert row["lower"] < row["value"] < row["upper"] and row["verdict"]
    assert rows["Cohen's kappa (unweighted)"]["value"] == pytest.approx(0.499, abs=5e-4)  # Svensson's kappa 0.5
    assert "the kappa ordinal studies quote most" in rows["quadratic-weighted kappa"]["meaning"]


def test_svensson_verdicts_name_direction_size_and_chance():
    """The verdict words by hand: the sign says who is lower / narrower, the size band and the interval rule."""
    from xlcalib.presentation import svensson_verdicts

    values = {"PA": 50.0, "n": 40, "RP": 0.35, "RC": -0.15, "RV": 0.0}
    ses = {"RP": 0.05, "RC": 0.05, "RV": 0.01}
    words = svensson_verdicts(values, ses, "Ann", "Bo")
    assert words["RP"] == "large systematic disagreement in position: Ann uses lower categories than Bo"
    assert words["RC"] == "moderate systematic disagreement in concentration: Ann concentrates on fewer categories than Bo"
    assert words["RV"] == "no random disagreement: Ann and Bo order the objects alike"
    assert words["PA"] == "50% of the 40 objects: the same category from both"
    wide = svensson_verdicts({**values, "RV": 0.2}, {"RP": 0.2, "RC": 0.1, "RV": 0.2}, "Ann", "Bo")
    chance = "; may be chance (the 95% interval includes 0)"
    assert wide["RP"].endswith(chance) and wide["RC"].endswith(chance) and not words["RP"].endswith(chance)
    assert wide["RV"].startswith("moderate random disagreement") and wide["RV"].endswith(chance)


def test_ordinal_report_tells_equal_headers_apart(tmp_path):
    book = openpyxl.load_workbook(filled_ordinal(tmp_path / "ord.xlsx"))
    book["Ratings"]["B1"] = book["Ratings"]["C1"] = "Reader"
    ordinal_report(book)
    rows, _ = _sheet_rows(book["Svensson"], "measure")
    assert "Reader (C) uses lower categories than Reader (B)" in rows["RP, relative position"]["verdict"]


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


def test_categories_list_grows_with_its_drop_down(tmp_path):
    """The Categories list is an Excel Table whose column is the name the Ratings drop-downs use (not a fixed
    A2:A5): a category typed just below the list belongs to it, and the report uses it in its order."""
    path = filled_ordinal(tmp_path / "ord.xlsx")
    book = openpyxl.load_workbook(path)
    cats = book["Categories"]
    assert list(cats.tables) == ["CategoryList"] and cats.tables["CategoryList"].ref == "A1:B5"
    assert book.defined_names["CategoryNames"].attr_text == "CategoryList[Category (lowest first)]"
    assert [v.formula1 for v in book["Ratings"].data_validations.dataValidation] == ["CategoryNames"]
    assert book["Instructions"]["B10"].value == "=COUNTA(CategoryNames)"
    cats["A6"] = "F5"  # a fifth category, typed in the first empty row below the table
    book["Ratings"]["C2"] = "F5"
    frames = ordinal_report(book)
    assert list(frames["ROC"].iloc[:, 0]) == ["(start)", "F1", "F2", "F3", "F4", "F5"]
    assert "F1, F2, F3, F4, F5" in frames["Agreement"].set_index("coefficient").loc["categories in order", "basis"]


def test_svensson_verdicts_follow_the_raters_when_they_swap():
    """Swapping the two raters swaps the names in every verdict and nothing else (RP and RC change sign with the
    order of the raters; RV does not)."""
    import xlcalib
    from xlcalib.presentation import svensson_verdicts

    pairs = _fisher_pairs()
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]

    def words(first, second, h1, h2):
        frame = xlcalib.svensson(first, second, ["F1", "F2", "F3", "F4"]).to_frame()
        values = dict(zip(frame["measure"], frame["value"]))
        ses = {k: v for k, v in zip(frame["measure"], frame["SE"]) if v is not None}
        return svensson_verdicts(values, ses, h1, h2)

    forward, backward = words(a, b, "Ann", "Bo"), words(b, a, "Bo", "Ann")
    for key in ("RP", "RC"):
        assert forward[key] == backward[key], key
    assert forward["RV"].replace("Ann and Bo", "X") == backward["RV"].replace("Bo and Ann", "X")


def test_a_measure_the_ratings_leave_undefined_says_so_and_why(tmp_path):
    """Both raters use one category: RC (and kappa) are not defined -- the report says so and why on the sheet,
    the spreadsheet function in its cell, instead of a traceback or a blank."""
    book = openpyxl.load_workbook(filled_ordinal(tmp_path / "ord.xlsx"))
    ws = book["Ratings"]
    for row in ws.iter_rows(min_row=2, max_col=3):
        if row[1].value is not None:
            row[1].value = row[2].value = "F2"
    frames = ordinal_report(book)
    rows, _ = _sheet_rows(book["Svensson"], "measure")
    verdict = rows["RC, relative concentration"]["verdict"]
    assert verdict.startswith("not defined: ") and "single category" in verdict
    assert frames["Svensson"].set_index("measure").loc["kappa", "meaning"].startswith("not defined")
