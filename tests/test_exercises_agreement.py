"""Agreement in the exercises: which coefficient is quoted and why, the verdict words, and ``xlcalib agreement``
on a ratings file (printed table, xlsx/csv/json output, bad input named by its cell, the input untouched)."""
from __future__ import annotations

import json

import numpy as np
import openpyxl
import pandas as pd
import pytest

from xlcalib import agreement
from xlcalib.cli import main
from xlcalib.presentation import DOMINANT_SHARE, agreement_band, headline_agreement, verdict_agreement


# ----------------------------------------------------------------------------
# the headline and the verdicts
# ----------------------------------------------------------------------------
def test_headline_follows_the_design_and_the_data():
    complete_two = [[1, 1], [2, 2], [3, 2], [1, 1], [2, 3], [3, 3]]
    key, why = headline_agreement(agreement.agreement_coefficients(complete_two))
    assert key == "conger_kappa" and "two raters rated every subject" in why
    complete_three = [[1, 1, 2], [2, 2, 2], [3, 2, 3], [1, 1, 1], [2, 3, 3], [3, 3, 3]]
    key, why = headline_agreement(agreement.agreement_coefficients(complete_three))
    assert key == "conger_kappa" and "the same 3 raters" in why
    missing = [[1, 1, None], [2, 2, 2], [3, 2, 3], [1, 1, 1], [2, 3, 3], [3, 3, 3]]
    key, why = headline_agreement(agreement.agreement_coefficients(missing))
    assert key == "krippendorff_alpha" and "lack some raters" in why
    # one category dominating: the kappa paradox, whatever the design
    skewed = [["no", "no"]] * 17 + [["yes", "no"], ["no", "yes"], ["yes", "yes"]]
    table = agreement.agreement_coefficients(skewed)
    assert max(table.attrs["category_shares"]) >= DOMINANT_SHARE
    key, why = headline_agreement(table)
    assert key == "gwet_ac" and "category no holds 90% of the ratings" in why
    assert table.loc["gwet_ac", "estimate"] > 0.8 > table.loc["conger_kappa", "estimate"]  # why it matters
    # a single category: nothing chance-corrected is defined
    key, why = headline_agreement(agreement.agreement_coefficients([["a", "a"], ["a", "a"], ["a", "a"]]))
    assert key == "percent_agreement" and "undefined" in why
    # counts only (no rater identities): Fleiss' kappa
    key, _ = headline_agreement(agreement.agreement_coefficients([[2, 0], [1, 1], [0, 2]], layout="counts"))
    assert key == "fleiss_kappa"


@pytest.mark.parametrize("value, word", [(0.95, "almost perfect"), (0.8, "substantial"), (0.61, "substantial"),
                                         (0.5, "moderate"), (0.3, "fair"), (0.1, "slight"), (0.0, "slight"),
                                         (-0.1, "poor (below chance)"), (float("nan"), "undefined")])
def test_landis_koch_bands(value, word):
    assert agreement_band(value) == word


def test_verdict_names_the_band_the_interval_reaches():
    assert verdict_agreement(0.7, 0.65) == "substantial"
    assert verdict_agreement(0.7, 0.3) == "substantial; the interval reaches fair"
    assert verdict_agreement(0.7, float("nan")) == "substantial"


# ----------------------------------------------------------------------------
# xlcalib agreement FILE
# ----------------------------------------------------------------------------
RATINGS = [["Subject", "Ann", "Bob", "Cy"], ["s1", "low", "low", "mid"], ["s2", "mid", "mid", "mid"],
           ["s3", "high", "high", None], ["s4", "low", "mid", "low"], ["s5", "high", "high", "high"],
           ["s6", "mid", "mid", "high"], ["s7", "low", "low", "low"]]
FRAME = pd.DataFrame([r[1:] for r in RATINGS[1:]], columns=RATINGS[0][1:])


def _xlsx(path, rows, sheet="Ratings"):
    book = openpyxl.Workbook()
    book.active.title = "Notes"
    ws = book.create_sheet(sheet)
    for row in rows:
        ws.append(row)
    book.save(path)
    return path


def _csv(path, rows):
    pd.DataFrame(rows[1:], columns=rows[0]).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("make", [_xlsx, _csv], ids=["xlsx", "csv"])
def test_cli_prints_the_table_led_by_the_coefficient_to_quote(tmp_path, capsys, make):
    path = make(tmp_path / f"r.{'xlsx' if make is _xlsx else 'csv'}", RATINGS)
    before = path.read_bytes()
    assert main(["agreement", str(path), "--weights", "quadratic", "--categories", "low,mid,high", "--pairs"]) == 0
    out = capsys.readouterr().out
    core = agreement.agreement_coefficients(FRAME, "quadratic", ["low", "mid", "high"])
    lines = out.splitlines()
    assert lines[0] == "Agreement of 3 raters on 7 subjects, categories low, mid, high:"
    assert lines[1].split()[:3] == ["Weighted", "Krippendorff's", "alpha"] and lines[1].endswith("<- quote this")
    assert f"{core.loc['krippendorff_alpha', 'estimate']:.3f}" in lines[1]
    assert f"{core.loc['gwet_ac', 'estimate']:.3f}" in out and "Why Weighted Krippendorff's alpha" in out
    assert "Bob - Cy" in out and "Ann - Bob" in out
    assert path.read_bytes() == before


def test_cli_writes_xlsx_csv_and_json(tmp_path, capsys):
    path = _xlsx(tmp_path / "r.xlsx", RATINGS)
    args = ["agreement", str(path), "--weights", "linear", "--categories", "low=1,mid=2,high=5"]
    core = agreement.agreement_coefficients(FRAME, "linear", {"low": 1, "mid": 2, "high": 5})
    assert main([*args, "--pairs", "-o", str(tmp_path / "a.xlsx")]) == 0
    book = openpyxl.load_workbook(tmp_path / "a.xlsx")
    assert book.sheetnames == ["Agreement", "Agreement pairs"] and book["Agreement"]["A1"].value == "xlcalib agreement"
    rows = list(book["Agreement"].iter_rows(values_only=True))
    header = rows.index(next(r for r in rows if r[0] == "coefficient"))
    assert rows[header + 1][0] == "Weighted Krippendorff's alpha (quote this)"
    assert rows[header + 1][1] == pytest.approx(core.loc["krippendorff_alpha", "estimate"])
    assert main([*args, "-o", str(tmp_path / "a.csv")]) == 0
    csv = pd.read_csv(tmp_path / "a.csv", index_col="coefficient")
    assert csv["estimate"].to_numpy() == pytest.approx(core["estimate"].to_numpy())
    assert main([*args, "-o", str(tmp_path / "a.json")]) == 0
    doc = json.loads((tmp_path / "a.json").read_text())
    assert doc["settings"]["weights"] == "linear" and doc["settings"]["categories"] == ["low", "mid", "high"]
    assert doc["settings"]["quote"] == "krippendorff_alpha"
    assert [r["estimate"] for r in doc["coefficients"]] == pytest.approx(core["estimate"].tolist())


def test_cli_without_a_subject_column_and_numbers(tmp_path, capsys):
    rows = [["R1", "R2"], [1, 1], [2, 2], [3, 2], [1, 1], [2, 3]]
    path = _csv(tmp_path / "n.csv", rows)
    assert main(["agreement", str(path), "--no-subject-column", "--weights", "quadratic"]) == 0
    expected = agreement.conger_kappa(np.array([r for r in rows[1:]], dtype=float), "quadratic").estimate
    first = capsys.readouterr().out.splitlines()[1].split()
    assert first[:3] == ["Weighted", "Cohen's", "kappa"] and float(first[3]) == pytest.approx(expected, abs=5e-4)


@pytest.mark.parametrize("extra, message", [
    (["--categories", "low,mid"], "sheet Ratings, cell B4: category 'high' is not in the category list"),
    (["--weights", "quadratic"], "quadratic weights need the order of the categories"),
    (["--weights", "cubic"], "weights must be one of identity"),
    (["--level", "1.5"], "the --level argument must be in (0, 1), not 1.5"),
    (["--categories", "low=1,mid"], "give every category a value (label=value), or none"),
    (["--categories", "low,,mid"], "has an empty entry"),
    (["--sheet", "Scores"], "no sheet named 'Scores'"),
    (["-o", "out.txt"], "write the agreement table to an .xlsx, .csv or .json file, not out.txt"),
])
def test_cli_bad_input_exit_2_with_the_cell_named(tmp_path, capsys, extra, message):
    path = _xlsx(tmp_path / "r.xlsx", RATINGS)
    assert main(["agreement", str(path), *extra]) == 2
    assert message in capsys.readouterr().err


def test_cli_bad_cell_in_a_csv_and_a_repeated_rater_name(tmp_path, capsys):
    rows = [r[:] for r in RATINGS]
    rows[3][2] = "#N/A"
    assert main(["agreement", str(_csv(tmp_path / "r.csv", rows))]) == 2
    assert "r.csv, cell C4 holds the Excel error #N/A" in capsys.readouterr().err
    rows = [["Subject", "Ann", "Ann"], ["s1", 1, 2], ["s2", 2, 2]]
    assert main(["agreement", str(_xlsx(tmp_path / "d.xlsx", rows))]) == 2
    assert "columns B and C are both headed 'Ann'" in capsys.readouterr().err


def test_cli_rater_sampling_adds_the_raters_and_says_how(tmp_path, capsys):
    grid = [[1, 1, 2], [2, 2, 3], [3, 2, 3], [1, 1, 1], [2, 3, 3], [3, 3, 3], [1, 2, 2], [2, 2, 1]]
    rows = [["S", "A", "B", "C"]] + [[str(i), *r] for i, r in enumerate(grid, start=1)]
    path = _xlsx(tmp_path / "full.xlsx", rows)
    assert main(["agreement", str(path), "--rater-sampling", "-o", str(tmp_path / "a.xlsx")]) == 0
    out = capsys.readouterr().out
    core = agreement.conger_kappa(np.array([r[1:] for r in rows[1:]], dtype=float), rater_sampling=True)
    assert f"SE {core.se:.3f}" in out.splitlines()[1] and core.se > core.se_subjects
    assert "delete-one-rater jackknife, xlcalib's estimator" in out
    rows_out = list(openpyxl.load_workbook(tmp_path / "a.xlsx")["Agreement"].iter_rows(values_only=True))
    assert any(r[0] == "standard errors" and "delete-one-rater jackknife" in r[-1] for r in rows_out)
    assert main(["agreement", str(_xlsx(tmp_path / "r.xlsx", RATINGS)), "--rater-sampling"]) == 2
    assert "fully crossed designs" in capsys.readouterr().err
