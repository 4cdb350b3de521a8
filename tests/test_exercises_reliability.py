"""The reliability exercise on a filled template: ICC, kRR and the kRR curve as the core computes them; a bad
cell named by its sheet cell."""
from __future__ import annotations

import openpyxl
import pytest

import xlcalib
from xlcalib.exercises import reliability_report

from .test_templates import filled_reliability


def test_reliability_report(tmp_path):
    path, rep1, _ = filled_reliability(tmp_path / "rel.xlsx")
    book = openpyxl.load_workbook(path)
    frames = reliability_report(book, n_boot=200)
    assert frames["ICC"]["ICC"].tolist() == pytest.approx(xlcalib.icc_table(rep1)["ICC"].tolist())
    # one rating missing: the empirical curve (complete replications only) is left out, and the sheet says why
    assert not any(c.startswith("empirical") for c in frames["kRR curve"].columns)
    summary = frames["kRR"].set_index("statistic")
    assert "needs complete replications" in summary.loc["kRR curve", "basis"]
    # one headline figure with its reason: ratings incomplete -> the one-way ICC of the average
    headline = summary.index[0]
    assert "(quote this)" in headline and "ICC(1,k)" in headline
    assert summary.iloc[0]["value"] == pytest.approx(xlcalib.icc(rep1, "ICC1k"))
    assert "different raters" in summary.iloc[0]["basis"]
    # the curve reaches the rater count needed for 0.9, the part beyond the observed raters labelled prophecy
    icc1 = xlcalib.icc(rep1, "ICC1")
    need = xlcalib.reliability.raters_needed(icc1, 0.9)
    assert summary.loc["raters needed for 0.9", "value"] == need
    curve = frames["kRR curve"]
    assert curve["k"].max() == max(need, rep1.shape[1])
    prophecy = curve["ICC(k) prophecy beyond the observed raters"]
    assert prophecy[curve["k"] < rep1.shape[1]].isna().all() and prophecy[curve["k"] > rep1.shape[1]].notna().all()
    assert curve["ICC(k), all ratings (observed raters)"][curve["k"] > rep1.shape[1]].isna().all()
    assert "2 randomly drawn ratings" in summary.loc["why Spearman-Brown at k = 1 differs from ICC(1)", "basis"]
    wb = openpyxl.load_workbook(path)
    wb["Ratings"]["C2"].value = 3.0
    complete = reliability_report(wb, n_boot=50)
    assert "empirical (Replication2)" in complete["kRR curve"].columns
    assert "ICC(2,k)" in complete["kRR"]["statistic"].iloc[0]  # complete block: two-way absolute agreement
    assert {"ICC", "kRR", "kRR curve"} <= set(book.sheetnames) and book["kRR curve"]._charts


def test_reliability_report_names_bad_cell(tmp_path):
    path, _, _ = filled_reliability(tmp_path / "rel.xlsx")
    wb = openpyxl.load_workbook(path)
    wb["Ratings"]["D5"] = "7,5"
    wb.save(path)
    with pytest.raises(xlcalib.InputError, match=r"sheet Ratings, cell D5 is the text .7,5. with a decimal comma"):
        reliability_report(openpyxl.load_workbook(path))
