"""The spreadsheet layer through xlwings' own conversion and VBA-generation code (headless)."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import xlcalib
import xlcalib.imports
from udf_registry.registry import ERROR_PREFIX, REGISTRY

from . import xlwings_harness as harness

# ----------------------------------------------------------------------------- sample inputs (Excel-shaped)
rng = np.random.default_rng(0)


def _panel():
    rows = []
    for o in range(12):
        for a in [(o + d) % 5 for d in (0, 1, 3)]:  # a connected cyclic design
            rows.append((f"A{a}", f"P{o}", float(5 + o % 4 + a * 0.3 + ((o * 7 + a) % 3) * 0.2), ["High", "Medium", "Low"][(o + a) % 3]))
    return pd.DataFrame(rows, columns=["assessor", "object", "score", "level"])


PANEL = _panel()
COL = lambda values: [[v] for v in values]  # noqa: E731 - a one-column range as Excel hands it over
CALIB_ARGS = (COL(PANEL.assessor), COL(PANEL.object), COL(PANEL.score), COL(PANEL.level))
GRID = (rng.normal(size=(15, 1)) + rng.normal(size=(15, 4)) + 5).round(2)
GRID_CELLS = GRID.tolist()
REP2 = (GRID + rng.normal(size=GRID.shape) * 0.5).round(2).tolist()

CORE = xlcalib.calibrate(PANEL)


def _lottery_cells(table) -> tuple[list[list], int]:
    """A Lottery sheet's cells as Excel hands a range over (preamble, blank row, header, rows, blank row, recipe),
    and the index of its first data row."""
    from xlcalib.cells import cell_value
    from xlcalib.presentation import lottery_sheet

    spec = lottery_sheet(table, [["xlcalib calibration"], ["run"]])
    width = spec.frame.shape[1]
    pad = lambda row: [cell_value(c) for c in row] + [None] * (width - len(row))  # noqa: E731
    rows = [pad(r) for r in spec.preamble] + [pad([])] + [list(spec.frame.columns)]
    first = len(rows)
    rows += [pad(r) for r in spec.frame.itertuples(index=False)] + [pad([])] + [pad(r[:1]) for r in spec.footer]
    return rows, first


LOTTERY_CELLS, LOTTERY_FIRST_ROW = _lottery_cells(CORE.ranking(top_k=4, draws=500, seed=3, lottery=True,
                                                               lottery_seed="Panel 2026"))
GROUP_MAP = {o: ("odd" if int(o[1:]) % 2 else "even") for o in PANEL.object}
GROUP_COL = COL([GROUP_MAP[o] for o in PANEL.object])
SCALED = xlcalib.calibrate(PANEL, scale_use="on")
# the Rasch functions read ordered categories: whole-point scores 1-4 of a small connected panel
RPANEL = pd.DataFrame([(f"R{a}", f"Q{o}", float(1 + (o + 2 * a + (o * a) % 3) % 4), 1.0)
                       for o in range(16) for a in [(o + d) % 6 for d in (0, 1, 3)]],
                      columns=["assessor", "object", "score", "sd"])
RASCH_ARGS = (COL(RPANEL.assessor), COL(RPANEL.object), COL(RPANEL.score))
RCORE = xlcalib.calibrate(RPANEL, model="rating-scale")
R1 = list("KLMKLMKKLMMLKLM")
R2 = list("KLLKMMKLLMMLKKM")
CATS = COL(list("KLM"))
H = [float(v) for v in rng.integers(1, 6, 40)]
M = [float(np.clip(v + rng.normal(0, 0.7), 1, 5)) for v in H]
HH = [[h, float(np.clip(h + rng.integers(-1, 2), 1, 5)) if i % 2 else None] for i, h in enumerate(H)]
GROUPS = ["a" if i % 3 else "b" for i in range(40)]
_EVAL = xlcalib.evaluation_metrics(np.array(H), np.array(M))
GT_CLASSES = COL(["Melanoma", "Nevus", "Hemangioma", "Eczema"])
GT_ANN = [["Melanoma > Nevus", "Nevus", "Melanoma = Nevus > Eczema"], ["Eczema", None, "Eczema > Hemangioma"],
          ["Hemangioma", "Hemangioma > Nevus", None]]
GT_CASES = [[[[0], [1]], [[1]], [[0, 1], [3]]], [[[3]], [[3], [2]]], [[[2]], [[2], [1]]]]
GT_PRED = [["Nevus", "Melanoma", "Eczema"], ["Eczema", "Nevus", "Melanoma"], ["Nevus", "Hemangioma", "Eczema"]]
_GT_IRN = xlcalib.irn(GT_CASES, 4)
_GT_DRAWS = xlcalib.ground_truth.sample_dirichlet(_GT_IRN, 1000, 0)
_GT_PRED_IDS = np.array([[1, 0, 3], [3, 1, 0], [1, 2, 3]])
# agreement: text categories in a declared order (so any other text is a bad cell), a missing rating, named raters
AG = [["F1", "F1", "F2"], ["F2", "F2", "F2"], ["F3", "F3", "F4"], ["F4", "F4", "F4"], ["F1", "F2", None],
      ["F2", "F2", "F3"], ["F3", "F3", "F3"], ["F4", "F3", "F4"], ["F1", "F1", "F1"], ["F2", "F3", "F2"]]
AG_CATS = COL(["F1", "F2", "F3", "F4"])
AG_RATERS = [["Ann", "Bob", "Cy"]]
_AG_FRAME = pd.DataFrame(AG, columns=["Ann", "Bob", "Cy"], index=range(1, 11))
_AG_TABLE = xlcalib.agreement.agreement_coefficients(AG, "quadratic", ["F1", "F2", "F3", "F4"], confidence=0.9)
_AG_PAIRS = xlcalib.agreement.pairwise_agreement(_AG_FRAME, "conger_kappa", "quadratic", ["F1", "F2", "F3", "F4"])
_AG_MATRIX = xlcalib.agreement.agreement_matrix(_AG_FRAME, "gwet_ac", "quadratic", ["F1", "F2", "F3", "F4"])
_AG_BOOT = xlcalib.agreement.agreement_bootstrap(AG, "krippendorff_alpha", "quadratic", ["F1", "F2", "F3", "F4"],
                                                 n_boot=200, seed=3)
_AG_CROSS = xlcalib.agreement.confusion_table([r[:2] for r in AG], 1, 2, ["F1", "F2", "F3", "F4"])
_AG_WEIGHTS = xlcalib.agreement.agreement_weights(["F1", "F2", "F3", "F4"], "linear")

# a funder's grid of letter grades (proposals x assessors), with a COI and a blank cell
GRADES = "A, AB, B, BC, C, D"
LETTER_GRID = [["Proposal", "Dr Lee", "Dr Moss", "Dr Nair"], ["P-01", "A", "AB", "COI"], ["P-02", "BC", None, "B"],
               ["P-03", "D", "N/A", "A"], ["P-04", "B", "C", "AB"]]
_GRID_READ = xlcalib.imports.read_cells(LETTER_GRID, scale=GRADES, name="the grid range")
#: functions whose blank cell is an assessor not assigned (left out and counted), not an error
GRID_FUNCTIONS = ("CALIB_FROM_GRID", "CALIB_GRID_REPORT")

# name -> (raw args, expected core value or table, what to spoil with bad cells: an argument's index, or
# (index, row, column) of one cell of a range whose first cells are labels)
CASES = {
    "CALIB_VALUES": (CALIB_ARGS, CORE.values.reset_index()[["object", "value", "se", "lower", "upper", "n", "raw_mean"]], 2),
    "CALIB_BIASES": (CALIB_ARGS, CORE.biases.reset_index()[["assessor", "bias", "se", "lower", "upper", "n"]], 2),
    "CALIB_STATS": (CALIB_ARGS, CORE.diagnostics()[["statistic", "value", "meaning"]], 2),
    "CALIB_RANKING": ((*CALIB_ARGS, 4, None, None, 500, 3), CORE.ranking(top_k=4, draws=500, seed=3).reset_index()[
        ["object", "rank", "value", "se", "lower", "upper", "raw_mean", "raw_rank", "expected_rank", "rank_lower",
         "rank_upper", "p_above", "p_above_mc_se", "settled", "decision", "changed", "final"]].assign(
        chance=np.nan).join(CORE.ranking(top_k=4, draws=500, seed=3).reset_index()[["joint", "basis"]]), 2),
    "CALIB_VERIFY_DRAW": ((LOTTERY_CELLS,), "matches: re-run from the public seed 'Panel 2026', the 4 place(s) and "
                          "the 12 objects' chances, the draw gives the same hash, uniform numbers, draw order and "
                          "outcomes", (0, LOTTERY_FIRST_ROW, 1)),
    "CALIB_NEXT_READS": ((*CALIB_ARGS, 3, 4), CORE.next_reads(3, top_k=4)[
        ["order", "assessor", "object", "confidence", "level", "gain", "p_above", "se_before", "se_after", "settles",
         "reason"]], 2),
    "CALIB_RESIDUALS": (CALIB_ARGS, CORE.residual_table(), 2),
    "CALIB_DESIGN": ((COL(PANEL.assessor), COL(PANEL.object), COL([1.0] * len(PANEL))), None, 2),
    "CALIB_FROM_GRID": ((LETTER_GRID, GRADES), xlcalib.imports.evaluations_frame(_GRID_READ.evaluations), (0, 2, 1)),
    "CALIB_GRID_REPORT": ((LETTER_GRID, GRADES), pd.DataFrame({
        "what": ["note"] * len(_GRID_READ.notes) + ["left out"] * 2, "cell": [""] * len(_GRID_READ.notes) + ["C4", "D2"],
        "assessor": [""] * len(_GRID_READ.notes) + ["Dr Moss", "Dr Nair"],
        "object": [""] * len(_GRID_READ.notes) + ["P-03", "P-01"],
        "reason": _GRID_READ.notes + ["not assigned (N/A)", "conflict of interest (COI)"]}), (0, 2, 1)),
    "REL_ICC": ((GRID_CELLS, "ICC1"), xlcalib.icc(GRID, "ICC1"), 0),
    "REL_ICC_TABLE": ((GRID_CELLS,), xlcalib.icc_table(GRID).reset_index(), 0),
    "REL_SPEARMAN_BROWN": ((0.59, 13.0), xlcalib.spearman_brown(0.59, 13), 0),
    "REL_RATERS_NEEDED": ((0.59, 0.95), xlcalib.raters_needed(0.59, 0.95), 1),
    "REL_KALPHA": ((GRID_CELLS, "interval"), xlcalib.krippendorff_alpha(GRID, "interval"), 0),
    "REL_KRR_BOOTSTRAP": ((GRID_CELLS, None, 50.0, 1.0), xlcalib.krr_bootstrap(GRID, n_boot=50, seed=1).to_frame(), 0),
    "REL_KRR_EMPIRICAL": ((GRID_CELLS, REP2, 10.0), xlcalib.krr_empirical(GRID, np.array(REP2), n_draws=10), 0),
    "REL_KRR_CURVE": ((GRID_CELLS, REP2), xlcalib.krr_curve(GRID, replication=np.array(REP2)), 0),
    "REL_AGREEMENT": ((AG, "quadratic", 0.9, AG_CATS), pd.DataFrame({
        "coefficient": _AG_TABLE["name"], "estimate": _AG_TABLE["estimate"], "SE": _AG_TABLE["se"],
        "lower": _AG_TABLE["ci_low"], "upper": _AG_TABLE["ci_high"], "p": _AG_TABLE["p_value"]}), 0),
    "REL_AGREEMENT_PAIRS": ((AG, "conger_kappa", "quadratic", None, AG_CATS, AG_RATERS), pd.DataFrame({
        "rater1": _AG_PAIRS["rater_1"], "rater2": _AG_PAIRS["rater_2"], "coefficient": _AG_PAIRS["name"],
        "estimate": _AG_PAIRS["estimate"], "SE": _AG_PAIRS["se"], "lower": _AG_PAIRS["ci_low"],
        "upper": _AG_PAIRS["ci_high"], "p": _AG_PAIRS["p_value"], "n": _AG_PAIRS["n_subjects"]}), 0),
    "REL_AGREEMENT_MATRIX": ((AG, "gwet_ac", "quadratic", AG_CATS, AG_RATERS),
                             _AG_MATRIX.reset_index().rename(columns={"index": "rater"}), 0),
    "REL_AGREEMENT_BOOTSTRAP": ((AG, None, "quadratic", 200.0, 3.0, None, AG_CATS), pd.DataFrame({
        "coefficient": [_AG_BOOT.name], "estimate": [_AG_BOOT.estimate], "SE": [_AG_BOOT.se],
        "lower": [_AG_BOOT.ci_low], "upper": [_AG_BOOT.ci_high], "n_boot": [200], "seed": [3]}), 0),
    "REL_CROSSTAB": ((COL([r[0] for r in AG]), COL([r[1] for r in AG]), AG_CATS),
                     _AG_CROSS.rename_axis(index="rater1 \\ rater2", columns=None).reset_index(), 0),
    "REL_AGREEMENT_WEIGHTS": ((AG_CATS, "linear"), _AG_WEIGHTS.reset_index(), 1),
    "ORD_SVENSSON": ((COL(R1), COL(R2), CATS), xlcalib.svensson(R1, R2, "KLM").to_frame(), 0),
    "ORD_RP": ((COL(R1), COL(R2), CATS), xlcalib.svensson(R1, R2, "KLM").RP, 1),
    "ORD_RC": ((COL(R1), COL(R2), CATS), xlcalib.svensson(R1, R2, "KLM").RC, 1),
    "ORD_RV": ((COL(R1), COL(R2), CATS), xlcalib.svensson(R1, R2, "KLM").RV, 1),
    "ORD_MEANRANKS": ((COL(R1), COL(R2), CATS), xlcalib.mean_rank_table(R1, R2, "KLM"), 0),
    "ORD_ROC": ((COL(R1), COL(R2), CATS), xlcalib.roc_points(R1, R2, "KLM"), 0),
    "EVAL_TABLE": ((COL(H), COL(M)), pd.DataFrame({"metric": list(_EVAL.index), "value": pd.Series(list(_EVAL), dtype=object)}), 1),
    "EVAL_EXACT": ((COL(H), COL(M)), _EVAL["exact_agreement"], 1),
    "EVAL_ADJACENT": ((COL(H), COL(M)), _EVAL["adjacent_agreement"], 1),
    "EVAL_KAPPA": ((COL(H), COL(M)), _EVAL["kappa"], 1),
    "EVAL_QWK": ((COL(H), COL(M)), _EVAL["qwk"], 1),
    "EVAL_R": ((COL(H), COL(M)), _EVAL["r"], 1),
    "EVAL_SMD": ((COL(H), COL(M)), _EVAL["smd"], 1),
    "EVAL_MSE": ((COL(H), COL(M)), _EVAL["mse"], 1),
    "EVAL_R2": ((COL(H), COL(M)), _EVAL["r2"], 1),
    "EVAL_PRMSE": ((COL(M), HH), xlcalib.prmse_true(np.array(M), np.array(HH, dtype=float)), 0),
    "EVAL_DSM": ((COL(H), COL(M), COL(GROUPS)), pd.DataFrame({
        "group": ["a", "b"], "DSM": xlcalib.difference_of_standardized_means(H, M, groups=GROUPS).to_numpy(),
        "N": [GROUPS.count("a"), GROUPS.count("b")]}), 0),
    "GT_IRN": ((GT_ANN, GT_CLASSES), pd.DataFrame(_GT_IRN, columns=["Melanoma", "Nevus", "Hemangioma", "Eczema"]).assign(
        item=[1, 2, 3])[["item", "Melanoma", "Nevus", "Hemangioma", "Eczema"]], 0),
    "GT_PLAUSIBILITY": ((GT_ANN, GT_CLASSES), None, 0),
    "GT_CERTAINTY": ((GT_ANN, GT_CLASSES), pd.DataFrame({
        "item": [1, 2, 3], "certainty": xlcalib.ground_truth.certainty_from_concentration(_GT_IRN, 1000, 0)[0],
        "label": [["Melanoma", "Nevus", "Hemangioma", "Eczema"][i]
                  for i in xlcalib.ground_truth.certainty_from_concentration(_GT_IRN, 1000, 0)[1]]}), 0),
    "GT_UA_ACCURACY": ((GT_ANN, GT_CLASSES, GT_PRED, 2.0), pd.DataFrame({
        "statistic": ["UA top-2 accuracy", "SD over plausibility samples", "point estimate (IRN) version"],
        "value": [xlcalib.ground_truth.ua_topk_accuracy(_GT_DRAWS, _GT_PRED_IDS[:, :2], 2).value,
                  xlcalib.ground_truth.ua_topk_accuracy(_GT_DRAWS, _GT_PRED_IDS[:, :2], 2).sd_over_samples,
                  xlcalib.ground_truth.point_topk_accuracy(_GT_IRN, _GT_PRED_IDS[:, :2], 2)]}), 0),
    "GT_UA_SET_ACCURACY": ((GT_ANN, GT_CLASSES, [r[:2] for r in GT_PRED]), pd.DataFrame({
        "statistic": ["UA set accuracy", "SD over plausibility samples"],
        "value": [xlcalib.ground_truth.ua_set_accuracy(_GT_DRAWS, [[1, 0], [3, 1], [1, 2]]).value,
                  xlcalib.ground_truth.ua_set_accuracy(_GT_DRAWS, [[1, 0], [3, 1], [1, 2]]).sd_over_samples]}), 0),
    "GT_UA_OVERLAP": ((GT_ANN, GT_CLASSES, GT_PRED), pd.DataFrame({
        "statistic": ["UA average overlap@3", "SD over plausibility samples"],
        "value": [xlcalib.ground_truth.ua_average_overlap(_GT_DRAWS, _GT_PRED_IDS, 3).value,
                  xlcalib.ground_truth.ua_average_overlap(_GT_DRAWS, _GT_PRED_IDS, 3).sd_over_samples]}), 0),
    "GT_THRESHOLD_CERTAINTY": ((GRID_CELLS, 5.0), xlcalib.ground_truth.threshold_certainty(GRID, 5.0).assign(
        item=np.arange(1, 16))[["item", "n", "mean", "p_below", "outcome", "certainty"]], 0),
    # scores as ordered categories (the many-facet Rasch model)
    "RASCH_MEASURES": (RASCH_ARGS, RCORE.values.reset_index()[
        ["object", "measure", "se", "lower", "upper", "fair_average", "fair_lower", "fair_upper", "raw_mean", "n",
         "infit", "outfit"]], 2),
    "RASCH_SEVERITIES": (RASCH_ARGS, RCORE.severities.reset_index()[
        ["assessor", "severity", "se", "lower", "upper", "fair_average", "observed_average", "n", "infit", "infit_zstd",
         "outfit", "outfit_zstd", "reading"]], 2),
    "RASCH_CATEGORIES": (RASCH_ARGS, RCORE.category_table().reset_index()[
        ["category", "count", "percent", "cumulative_percent", "average_measure", "expected_measure", "outfit",
         "threshold", "threshold_se", "category_measure", "advances"]], 2),
    "RASCH_THRESHOLDS": (RASCH_ARGS, RCORE.thresholds(), 2),
    "RASCH_FIT": ((*RASCH_ARGS, "object"), RCORE.fit_statistics("object").reset_index().rename(
        columns={"object": "element"})[["element", "n", "infit", "infit_zstd", "outfit", "outfit_zstd", "reading"]], 2),
    "RASCH_UNEXPECTED": ((*RASCH_ARGS, 3), RCORE.unexpected_reads(3), 2),
    "RASCH_RANKING": ((*RASCH_ARGS, 4, None, 500, 3), RCORE.ranking(top_k=4, draws=500, seed=3).reset_index().rename(
        columns={"value": "fair_average"})[["object", "rank", "measure", "fair_average", "lower", "upper",
                                            "expected_rank", "rank_lower", "rank_upper", "p_above", "settled",
                                            "decision", "final"]].assign(chance=np.nan), 2),
    "RASCH_STATS": (RASCH_ARGS, RCORE.diagnostics()[["statistic", "value", "meaning"]], 2),
    # assessor behaviour
    "CALIB_FIT": ((*CALIB_ARGS, "object"), CORE.fit_statistics("object").reset_index().rename(columns={"object": "element"})[
        ["element", "n", "infit", "infit_zstd", "outfit", "outfit_zstd", "flagged", "reading"]], 2),
    "CALIB_UNEXPECTED": ((*CALIB_ARGS, 3), CORE.unexpected_reads(3)[
        ["assessor", "object", "score", "expected", "value", "residual", "z", "chance", "other_scores", "flagged",
         "in_words"]], 2),
    "CALIB_SEPARATION": (CALIB_ARGS, CORE.separation().reset_index()[
        ["facet", "n", "observed_sd", "rmse", "true_sd", "separation", "strata", "reliability", "chi_square", "df", "p",
         "basis", "in_words"]], 2),
    "CALIB_EXACT_AGREEMENT": (CALIB_ARGS, CORE.exact_agreement().reset_index()[["assessor", "opportunities", "observed",
                                                                            "expected"]], 2),
    "CALIB_GROUP_BIAS": ((*CALIB_ARGS, GROUP_COL), CORE.group_bias(GROUP_MAP)[
        ["assessor", "group", "reads", "bias", "se", "lower", "upper", "z", "p", "p_holm", "flagged", "in_words"]], 2),
    "CALIB_GROUP_AUDIT": ((*CALIB_ARGS, GROUP_COL), CORE.group_audit(GROUP_MAP).assign(
        test_p=CORE.group_audit(GROUP_MAP).attrs["p"])[
        ["group", "objects", "raw_mean", "value_mean", "se", "difference", "difference_se", "p", "moved", "test_p"]], 2),
    "CALIB_GAINS": (CALIB_ARGS, SCALED.biases.reset_index()[
        ["assessor", "gain", "gain_se", "gain_lower", "gain_upper", "bias", "se"]].assign(
        in_words=[xlcalib.calibration.models.scale_use.gain_sentence(g, s) for g, s in
                  zip(SCALED.biases["gain"], SCALED.biases["gain_se"])],
        test_p=SCALED.stats["scale_use_p"]), 2),
}


def test_every_catalogue_entry_has_a_case():
    assert set(CASES) == set(REGISTRY)


def _equal(got, expected):
    if isinstance(expected, pd.DataFrame):
        assert got[0] == [str(c) for c in expected.columns]
        assert len(got) == len(expected) + 1
        for row_got, row_exp in zip(got[1:], expected.to_numpy(dtype=object)):
            for g, e in zip(row_got, row_exp):
                if isinstance(e, (float, np.floating)) and not (isinstance(e, float) and np.isnan(e)):
                    assert g == pytest.approx(float(e), rel=1e-12, abs=1e-12)
                elif isinstance(e, (float, np.floating)):
                    assert g in ("", None)
                elif isinstance(e, (bool, np.bool_)):
                    assert g == bool(e)
                else:
                    assert g == (int(e) if isinstance(e, np.integer) else e)
    else:
        value = got[0][0] if isinstance(got, list) else got
        assert value == (expected if isinstance(expected, str) else pytest.approx(expected, rel=1e-12))


@pytest.mark.parametrize("name", sorted(CASES))
def test_happy_path_through_xlwings_equals_core(name):
    args, expected, _ = CASES[name]
    got = harness.call(name, *args)
    assert not (isinstance(got, list) and isinstance(got[0][0], str) and got[0][0].startswith(ERROR_PREFIX)), got
    if name == "GT_PLAUSIBILITY":
        table = pd.DataFrame(got[1:], columns=got[0])
        assert table.groupby("item")["irn_plausibility"].sum().tolist() == pytest.approx([1, 1, 1])
        assert table.groupby("item")["p_top1"].sum().tolist() == pytest.approx([1, 1, 1])
        # the largest top-1 probability of an item is its top-1 annotation certainty (same draws, same seed)
        certainty = xlcalib.ground_truth.certainty_from_concentration(_GT_IRN, 1000, 0)[0]
        assert table.groupby("item")["p_top1"].max().tolist() == pytest.approx(list(certainty), abs=1e-12)
        assert table["irn_plausibility"].tolist() == pytest.approx(sorted(_GT_IRN[0][_GT_IRN[0] > 0], reverse=True)
                                                                  + sorted(_GT_IRN[1][_GT_IRN[1] > 0], reverse=True)
                                                                  + sorted(_GT_IRN[2][_GT_IRN[2] > 0], reverse=True))
        return
    if expected is None:  # CALIB_DESIGN: compare with the core's own numbers
        d = xlcalib.design_check(PANEL.assessor, PANEL.object)
        table = {row[0]: row[1] for row in got[1:]}
        assert table["components"] == 1 and table["mu2"] == pytest.approx(d.mu2)
        assert table["add 1"] == f"{d.suggestions.assessor[0]} -> {d.suggestions.object[0]}"
        return
    _equal(got, expected)


def _spoil(value, bad, cell=None):
    """Put a bad cell into an argument (the second cell of a range, or *cell* (row, column) of it, or the value
    itself)."""
    if isinstance(value, list):
        rows = [list(r) for r in value]
        if cell is not None:
            rows[cell[0]][cell[1]] = bad
        elif len(rows) > 1:
            rows[1][0] = bad
        else:
            rows[0][1 if len(rows[0]) > 1 else 0] = bad
        return rows
    return bad


@pytest.mark.parametrize("bad", ["abc", -2146826246, "3,5"], ids=["text", "error-value", "decimal-comma"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_cells_give_short_text_naming_the_problem(name, bad):
    args, _, spoil_at = CASES[name]
    args = list(args)
    spoil_at, cell = (spoil_at, None) if isinstance(spoil_at, int) else (spoil_at[0], spoil_at[1:])
    args[spoil_at] = _spoil(args[spoil_at], bad, cell)
    got = harness.call(name, *args)
    text = got[0][0] if isinstance(got, list) else got
    assert isinstance(text, str) and text.startswith(ERROR_PREFIX), got
    assert len(text) <= 250 and "Traceback" not in text
    if bad == -2146826246:
        assert "#N/A" in text
    elif bad == "3,5":
        assert "decimal comma" in text or "3,5" in text


#: functions whose sample spoils an optional choice, and its default (REL_AGREEMENT_WEIGHTS: every text is a
#: category name, so the bad cells go into the weights scheme, where a blank is the default scheme)
BLANK_TAKES_DEFAULT = {"REL_AGREEMENT_WEIGHTS": "quadratic"}


def _is_calibration(name: str) -> bool:
    """A function fitted on the evaluation ranges (assessors, objects, scores[, uncertainty]): the calibration
    family and the Rasch functions, whose blank score is a pending read."""
    names = [a.name for a in REGISTRY[name].args[:4]]
    return names == ["assessors", "objects", "scores", "uncertainty"] or name.startswith("RASCH_")


@pytest.mark.parametrize("name", sorted(CASES))
def test_blank_cells(name):
    args, _, spoil_at = CASES[name]
    args = list(args)
    spoil_at, cell = (spoil_at, None) if isinstance(spoil_at, int) else (spoil_at[0], spoil_at[1:])
    args[spoil_at] = _spoil(args[spoil_at], None, cell)
    got = harness.call(name, *args)
    text = got[0][0] if isinstance(got, list) else got
    blank_is_missing = (name.startswith(("REL_", "ORD_", "EVAL_", "GT_")) and name not in
                        ("REL_KRR_EMPIRICAL", "REL_KRR_CURVE", "EVAL_PRMSE", "EVAL_DSM")) or name in GRID_FUNCTIONS
    if name == "CALIB_NEXT_READS" and REGISTRY[name].args[spoil_at].name == "scores":
        # a pending read: never suggested again (and counted in the loads; see test_next_reads_rules)
        pending = (args[0][1][0], args[1][1][0])
        assert not text.startswith(ERROR_PREFIX) and pending not in [(row[1], row[2]) for row in got[1:]], got
    elif _is_calibration(name) and REGISTRY[name].args[spoil_at].name == "scores":
        # a blank score beside an assessor and an object is a pending read: left out, as if the row were not there
        evaluations = len(args[spoil_at])
        without = [[row for i, row in enumerate(a) if i != 1] if isinstance(a, list) and len(a) == evaluations else a
                   for a in args]
        if name in ("CALIB_STATS", "RASCH_STATS"):  # which say so in one more row
            assert got[-1][:1] == ["input checks"] and "1 pending evaluation(s)" in got[-1][1]
            got = got[:-1]
        assert got == harness.call(name, *without) and not (isinstance(text, str) and text.startswith(ERROR_PREFIX))
    elif blank_is_missing and isinstance(CASES[name][0][spoil_at], list):
        # a blank rating is a missing rating: a number comes back
        assert not (isinstance(text, str) and text.startswith(ERROR_PREFIX)), got
    elif name in BLANK_TAKES_DEFAULT:  # the spoiled argument is an optional choice: blank means its default
        args[spoil_at] = BLANK_TAKES_DEFAULT[name]
        assert got == harness.call(name, *args) and not (isinstance(text, str) and text.startswith(ERROR_PREFIX))
    else:
        assert isinstance(text, str) and text.startswith(ERROR_PREFIX) and ("blank" in text or "missing" in text), got


@pytest.mark.parametrize("name", sorted(n for n, e in REGISTRY.items() if e.returns == "table"))
def test_header_flag_shapes(name):
    args, _, _ = CASES[name]
    entry = REGISTRY[name]
    at = [a.name for a in entry.args].index("header")  # optional arguments added later come after it
    padded = list(args) + [None] * (at - len(args))
    with_header = harness.call(name, *padded, True)
    without = harness.call(name, *padded, False)
    assert len(with_header) == len(without) + 1
    assert all(len(row) == len(with_header[0]) for row in with_header + without)
    assert all(isinstance(c, str) for c in with_header[0])


@pytest.mark.parametrize("name", sorted(n for n, e in REGISTRY.items() if e.returns == "table"))
def test_declared_columns_are_the_header_that_spills(name):
    """docs/FUNCTIONS.md lists each table's columns from the registry; they must be what the cell shows."""
    entry = REGISTRY[name]
    header = harness.call(name, *CASES[name][0])[0]
    if entry.columns_note:
        assert tuple(header[: len(entry.columns)]) == entry.columns and len(header) > len(entry.columns)
    else:
        assert tuple(header) == entry.columns


def test_plain_callables_importable_and_equal():
    from udf_registry import CALIB_VALUES, REL_ICC

    assert CALIB_VALUES(*CALIB_ARGS) == harness.call("CALIB_VALUES", *CALIB_ARGS)
    assert REL_ICC(GRID_CELLS, "ICC1") == pytest.approx(xlcalib.icc(GRID, "ICC1"))


def test_single_row_and_single_column_are_the_same():
    rows = harness.call("CALIB_VALUES", *[[[v[0] for v in arg]] for arg in CALIB_ARGS])
    assert rows == harness.call("CALIB_VALUES", *CALIB_ARGS)


def test_mismatched_ranges_named():
    args = list(CALIB_ARGS)
    args[2] = args[2][:-1]
    text = harness.call("CALIB_VALUES", *args)[0][0]
    assert "the ranges must be the same size" in text and "scores has" in text


def test_calibration_solves_once_per_distinct_input(monkeypatch):
    from udf_registry import calibration as fam

    fam._cache.clear()
    calls = []
    real = xlcalib.calibrate
    monkeypatch.setattr(fam.xlcalib, "calibrate", lambda *a, **k: calls.append(1) or real(*a, **k))
    for name in ("CALIB_VALUES", "CALIB_BIASES", "CALIB_STATS", "CALIB_RESIDUALS"):
        harness.call(name, *CALIB_ARGS)
    assert len(calls) == 1
    harness.call("CALIB_VALUES", *CALIB_ARGS[:3], COL(["High"] * len(PANEL)))
    assert len(calls) == 2
    for i in range(fam.CACHE_SIZE + 5):  # bounded
        harness.call("CALIB_VALUES", *CALIB_ARGS[:2], COL(PANEL.score + i), CALIB_ARGS[3])
    assert len(fam._cache) == fam.CACHE_SIZE


def test_calibration_cache_hits_whoever_else_holds_the_cells(monkeypatch):
    """Cells may arrive as fresh strings held by nothing else (xlwings Lite hands over new lists); after a solve
    the result's labels hold them too.  The same cells must still find that solve: a key that followed who
    holds the strings made the next formula on the same ranges solve again."""
    from udf_registry import calibration as fam

    fam._cache.clear()
    calls = []
    real = xlcalib.calibrate
    monkeypatch.setattr(fam.xlcalib, "calibrate", lambda *a, **k: calls.append(1) or real(*a, **k))
    assessors = [["".join(["A", str(name)[1:]])] for name in PANEL.assessor]  # new strings, one reference each
    objects = [["".join(["O", str(name)])] for name in PANEL.object]
    scores = [[float(x)] for x in PANEL.score]
    levels = [[str(x)] for x in PANEL.level]
    first = REGISTRY["CALIB_VALUES"].func(assessors, objects, scores, levels)
    second = REGISTRY["CALIB_BIASES"].func(assessors, objects, scores, levels)
    assert first[0][0] == "object" and second[0][0] == "assessor"
    assert len(calls) == 1
    fam._cache.clear()


# ----------------------------------------------------------------------------- VBA (names: test_udf_names.py)
def test_generated_vba_wrapper():
    vba = harness.vba_module()
    functions = re.findall(r"^Function (\w+)\((.*)\)$", vba, flags=re.M)
    assert sorted(f for f, _ in functions) == sorted(REGISTRY)
    for fname, params in functions:
        entry = REGISTRY[fname]
        parts = [p.strip() for p in params.split(",")]
        assert len(parts) == len(entry.args) <= 255
        names = [p.replace("Optional ", "") for p in parts]
        assert names == [a.name for a in entry.args]
        assert all(re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", n) for n in names)
        import inspect

        n_required = sum(1 for p in inspect.signature(entry.func).parameters.values() if p.default is inspect._empty)
        assert [p.startswith("Optional ") for p in parts] == [i >= n_required for i in range(len(parts))]
        assert f'XLPy.CallUDF("udf_registry", "{fname}"' in vba


def test_function_wizard_metadata():
    state = harness.setup()
    for name, entry in REGISTRY.items():
        info = getattr(state["module"], name).__xlfunc__
        assert info["category"] == entry.category and entry.category.startswith("xlcalib ")
        assert [a["doc"] for a in info["args"]] == [a.help for a in entry.args]
        assert entry.help and entry.example.startswith(f"={name}(") and entry.formula


def test_docs_functions_md_is_current():
    from pathlib import Path

    from udf_registry.docs import render

    path = Path(__file__).resolve().parent.parent / "docs" / "FUNCTIONS.md"
    assert path.read_text(encoding="utf-8") == render(), "docs/FUNCTIONS.md is stale: run python -m udf_registry.docs"


def test_calib_ranking_spills_the_final_decision_with_its_lottery():
    """The spreadsheet function carries the Ranking sheet's final decision: with a lottery exactly top_k funded,
    the same draw as the core with the same seeds; a cut-off outside (0, 0.5) is short text in the cell."""
    from udf_registry.calibration import calib_ranking

    table = calib_ranking(*CALIB_ARGS, 4, None, None, 500, 3, None, None, None, True, 0.25, True)
    header, rows = table[0], table[1:]
    final = [row[header.index("final")] for row in rows]
    assert sum(f in ("funded", "funded by lottery") for f in final) == 4
    core = CORE.ranking(top_k=4, draws=500, seed=3, epsilon=0.25, lottery=True)
    assert final == core["final"].tolist()
    assert calib_ranking(*CALIB_ARGS, 4, None, None, 500, 3, None, None, None, True, 0.7).startswith("xlcalib:")
