"""The reliability exercise on a filled template: ICC, kRR and the kRR curve as the core computes them; a bad
cell named by its sheet cell."""
from __future__ import annotations

import numpy as np
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
    footer = " ".join(str(r[0]) for r in book["kRR"].iter_rows(values_only=True) if r[0])
    assert "kRR curve: the empirical curve needs complete replications" in " ".join(footer.split())
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
    # one headline; the other figures are labelled cross-checks, and one line under the table says why they differ
    pilot = summary.loc[f"cross-check: {rep1.shape[1]} raters prophesied from a 2-rater pilot"]
    assert "2 randomly drawn ratings" in pilot["basis"]
    assert pilot["value"] == pytest.approx(frames["kRR curve"].set_index("k").loc[
        rep1.shape[1], "Spearman-Brown from 2 ratings per item"])
    labels = list(summary.index)
    assert sum("(quote this)" in s for s in labels) == 1 and not any(s.lower().startswith("why") for s in labels)
    assert {"cross-check: kRR bootstrap", "cross-check: Krippendorff alpha (interval)",
            "cross-check: ICC(2,k), two-way"} <= set(labels)
    assert "Why the cross-checks differ from the headline" in footer
    # every figure with an interval shows it: the ICCs their F intervals, kRR and alpha their bootstrap intervals
    icc = xlcalib.icc_table(rep1)
    assert [summary.iloc[0]["lower"], summary.iloc[0]["upper"]] == pytest.approx(icc.loc["ICC1k", ["CI_low", "CI_high"]])
    assert [summary.loc["one rating: ICC(1)", c] for c in ("lower", "upper")] == pytest.approx(
        icc.loc["ICC1", ["CI_low", "CI_high"]])
    boot = xlcalib.krr_bootstrap(rep1, n_boot=200, seed=0)
    assert [summary.loc["cross-check: kRR bootstrap", c] for c in ("lower", "upper")] == pytest.approx(
        [boot.ci_low, boot.ci_high])
    alpha = xlcalib.agreement.agreement_bootstrap(rep1, "krippendorff_alpha", "quadratic", n_boot=200, seed=0)
    row = summary.loc["cross-check: Krippendorff alpha (interval)"]
    assert row["value"] == pytest.approx(alpha.estimate, abs=1e-12)  # interval alpha = alpha with quadratic weights
    assert [row["lower"], row["upper"]] == pytest.approx([alpha.ci_low, alpha.ci_high])
    assert row["lower"] < row["value"] < row["upper"] and "seed 0" in row["basis"]
    assert "kRR CI low" not in summary.index
    wb = openpyxl.load_workbook(path)
    wb["Ratings"]["C2"].value = 3.0
    complete = reliability_report(wb, n_boot=50)
    assert "empirical (Replication2)" in complete["kRR curve"].columns
    assert "ICC(2,k)" in complete["kRR"]["statistic"].iloc[0]  # complete block: two-way absolute agreement
    assert {"ICC", "kRR", "kRR curve"} <= set(book.sheetnames) and book["kRR chart"]._charts
    results = [n for n in book.sheetnames if n in frames]
    assert results[0] == "kRR"  # the headline is the report's first page
    assert summary.loc["items", "value"] == 40 and isinstance(summary.loc["items", "value"], int)


def test_reliability_report_names_bad_cell(tmp_path):
    path, _, _ = filled_reliability(tmp_path / "rel.xlsx")
    wb = openpyxl.load_workbook(path)
    wb["Ratings"]["D5"] = "7,5"
    wb.save(path)
    with pytest.raises(xlcalib.InputError, match=r"sheet Ratings, cell D5 is the text .7,5. with a decimal comma"):
        reliability_report(openpyxl.load_workbook(path))


def test_reliability_report_agreement_sheets(tmp_path):
    """The ratings as categories: the coefficient to quote with its reason (a rating is missing: Krippendorff's
    alpha), the others as a table, every pair of raters lowest first; the weights from the Settings sheet."""
    path, rep1, _ = filled_reliability(tmp_path / "rel.xlsx")
    book = openpyxl.load_workbook(path)
    assert book["Settings"]["B2"].value == "quadratic"  # the template's default
    frames = reliability_report(book, n_boot=50)
    agreement = frames["Agreement"].set_index("coefficient")
    head = agreement.index[0]
    assert head == "Weighted Krippendorff's alpha (quote this)" and "lack some raters" in agreement.iloc[0]["basis"]
    assert agreement.iloc[0]["estimate"] == pytest.approx(xlcalib.krippendorff_alpha(rep1, "interval"), abs=1e-12)
    core = xlcalib.agreement.agreement_coefficients(rep1, "quadratic")
    assert agreement.loc["Gwet's AC2", "estimate"] == pytest.approx(core.loc["gwet_ac", "estimate"], abs=1e-12)
    assert agreement.loc["Weighted Conger's kappa", "upper"] == pytest.approx(core.loc["conger_kappa", "ci_high"])
    assert "quadratic" in agreement.loc["weights", "basis"]
    assert agreement.loc["categories in order", "basis"].startswith("0, 1, 2")
    pairs = frames["Agreement pairs"]
    assert len(pairs) == 8 * 7 // 2 and pairs["estimate"].is_monotonic_increasing
    assert set(pairs["rater 1"]) | set(pairs["rater 2"]) == {f"Rater {j}" for j in range(1, 9)}
    one = pairs.iloc[0]
    columns = {f"Rater {j}": j - 1 for j in range(1, 9)}
    pair = rep1[:, [columns[one["rater 1"]], columns[one["rater 2"]]]]
    assert one["estimate"] == pytest.approx(xlcalib.agreement.krippendorff_agreement(
        pair[~np.isnan(pair).all(axis=1)], "quadratic", sorted(set(rep1[~np.isnan(rep1)]))).estimate, abs=1e-12)
    # unweighted on request: the Settings sheet says identity
    book = openpyxl.load_workbook(path)
    book["Settings"]["B2"] = "identity"
    frames = reliability_report(book, n_boot=50)
    assert frames["Agreement"]["coefficient"].iloc[0] == "Krippendorff's alpha (quote this)"
    book["Settings"]["B2"] = "squared"
    with pytest.raises(xlcalib.InputError, match=r"sheet Settings, cell B2 \(Agreement weights\) is 'squared'"):
        reliability_report(book, n_boot=50)


def test_reliability_report_of_continuous_ratings_says_why_there_is_no_agreement(tmp_path):
    """Ratings with more distinct values than categories can be: the ICC sheets stand, Agreement says why not."""
    path, _, _ = filled_reliability(tmp_path / "rel.xlsx")
    book = openpyxl.load_workbook(path)
    rng = np.random.default_rng(0)
    for i in range(2, 42):
        for j in range(2, 10):
            book["Ratings"].cell(row=i, column=j, value=float(rng.normal()) + i)
    for i in range(42, 202):  # 200 items x 8 raters: more distinct values than agreement takes as categories
        book["Ratings"].cell(row=i, column=1, value=f"Item {i - 1}")
        for j in range(2, 10):
            book["Ratings"].cell(row=i, column=j, value=float(rng.normal()) + i)
    frames = reliability_report(book, n_boot=20)
    assert frames["Agreement"]["coefficient"].tolist() == ["not computed"]
    assert "distinct categories" in frames["Agreement"]["basis"].iloc[0]
    assert "Agreement pairs" not in frames
    summary = frames["kRR"].set_index("statistic")
    assert "no interval" in summary.loc["cross-check: Krippendorff alpha (interval)", "basis"]
    assert summary.loc["cross-check: Krippendorff alpha (interval)", "value"] > 0.9


def test_reliability_report_lists_pairs_up_to_a_number_of_raters(tmp_path, monkeypatch):
    from xlcalib.exercises import agreement as job

    monkeypatch.setattr(job, "MAX_PAIR_RATERS", 7)
    path, _, _ = filled_reliability(tmp_path / "rel.xlsx")
    frames = reliability_report(openpyxl.load_workbook(path), n_boot=20)
    assert "Agreement pairs" not in frames
    note = frames["Agreement"].set_index("coefficient").loc["note", "basis"]
    assert "no Agreement pairs sheet: 8 raters make 28 pairs (listed up to 7 raters)" in note
