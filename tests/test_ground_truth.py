"""Uncertain ground truth: Dirichlet certainty, UA metrics, IRN/PrIRN, meanAO, parsing, threshold model."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import xlcalib
from xlcalib.errors import InputError
from xlcalib.ground_truth import (
    annotation_certainty,
    certainty_from_samples,
    dermatology,
    mean_average_overlap,
    parse_ranking,
    point_topk_accuracy,
    sample_dirichlet,
    threshold_certainty,
    ua_average_overlap,
    ua_overlap,
    ua_set_accuracy,
    ua_topk_accuracy,
)
from xlcalib.ground_truth.dirichlet import _mode_frequency

CLASSES = ["Melanoma", "Nevus", "Hemangioma", "Eczema"]


def test_parse_ranking_and_errors():
    assert parse_ranking("Melanoma > Nevus = hemangioma", CLASSES) == [[0], [1, 2]]
    assert parse_ranking("  eczema ", CLASSES) == [[3]]
    with pytest.raises(InputError, match="unknown label 'Mole'"):
        parse_ranking("Melanoma > Mole", CLASSES)
    with pytest.raises(InputError, match="block 2 is empty"):
        parse_ranking("Melanoma >> Nevus", CLASSES)
    with pytest.raises(InputError, match="label 'nevus' appears more than once"):
        parse_ranking("Nevus > Melanoma = nevus", CLASSES)
    with pytest.raises(InputError, match="blank"):
        parse_ranking("  ", CLASSES)


def test_irn_hand_cases_and_reference_option():
    # annotator 1: {0} > {1,2}; annotator 2: {1} > {0}
    case = [[[0], [1, 2]], [[1], [0]]]
    u = xlcalib.ground_truth.unnormalized_irn([case], 4)
    np.testing.assert_allclose(u, [[1 + 0.5, 0.25 + 1, 0.25, 0]])
    np.testing.assert_allclose(xlcalib.irn([case], 4), u / u.sum())
    ref = xlcalib.ground_truth.unnormalized_irn([case], 4, block_weighting="reference_code")
    np.testing.assert_allclose(ref, [[1.5, 1.5, 0.5, 0]])
    # an annotator naming every class: the last named block is eq. 14's block L and gets 0
    np.testing.assert_allclose(xlcalib.ground_truth.unnormalized_irn([[[[0], [1]]]], 2), [[1, 0]])
    with pytest.raises(InputError, match="case 1, annotator 1: class 0 appears more than once"):
        xlcalib.irn([[[[0], [0]]]], 3)
    with pytest.raises(InputError, match="outside"):
        xlcalib.irn([[[[7]]]], 3)


def test_mean_average_overlap():
    b = [[0], [1, 2]]
    assert mean_average_overlap(b, b, 4) == pytest.approx(1.0)
    assert mean_average_overlap([[0]], [[1]], 2, L=1) == pytest.approx(0.0)
    x, y = [[0], [1]], [[1], [0, 2]]
    assert mean_average_overlap(x, y, 4, L=3) == pytest.approx(mean_average_overlap(y, x, 4, L=3))
    # hand value for full rankings: (0,1,2) vs (1,0,2), L=2: k=1 overlap 0, k=2 overlap 1 -> AO = 0.5;
    # normaliser UAO(b,b) = (1 + 1)/2 = 1 for full rankings
    assert mean_average_overlap([[0], [1], [2]], [[1], [0], [2]], 3, L=2) == pytest.approx(0.5)
    d = dermatology()
    case = d.annotations[1]
    assert mean_average_overlap(case[0], case[0], d.n_classes, 5) == pytest.approx(1.0)
    assert 0 <= mean_average_overlap(case[0], case[1], d.n_classes, 5) <= 1


def test_mode_frequency_matches_counter():
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 5, size=(20, 50))
    mode, freq = _mode_frequency(keys)
    for row, m, f in zip(keys, mode, freq):
        counts = Counter(row.tolist())
        assert f == max(counts.values()) / 50 and counts[m] == max(counts.values())


def test_certainty_k2_matches_beta_closed_form():
    counts = np.array([[3, 2], [6, 1], [1, 1]])
    gamma, alpha = 1.5, 0.5
    M = 40_000
    cert = annotation_certainty(counts, reliability=gamma, prior=alpha, samples=M, seed=1)
    a, b = gamma * counts[:, 0] + alpha, gamma * counts[:, 1] + alpha
    p = stats.beta.sf(0.5, a, b)  # P(lambda_1 > 1/2) = P(class 1 is the argmax)
    exact = np.maximum(p, 1 - p)
    assert np.all(np.abs(cert - exact) < 4 * np.sqrt(0.25 / M))


def test_certainty_converges_to_one_and_is_reproducible():
    counts = [[3, 1, 0], [2, 2, 1]]
    c = annotation_certainty(counts, reliability=1e5, prior=1, samples=2000, seed=0)
    assert c[0] == 1.0
    np.testing.assert_array_equal(annotation_certainty(counts, samples=500, seed=7), annotation_certainty(counts, samples=500, seed=7))
    assert (annotation_certainty(counts, reliability=10, samples=4000)[0] > annotation_certainty(counts, reliability=0.5, samples=4000)[0])


def test_top_j_certainty_by_brute_force():
    rng = np.random.default_rng(3)
    x = rng.dirichlet([3, 2, 1, 1], size=(2, 300))
    freq, labels = certainty_from_samples(x, top=2)
    for i in range(2):
        sets = Counter(tuple(sorted(np.argsort(-s)[:2].tolist())) for s in x[i])
        best, count = sets.most_common(1)[0]
        assert freq[i] == count / 300 and labels[i] == best


def test_ua_metrics_hand_and_point_mass():
    # 2 items, 4 samples, 3 classes
    s = np.zeros((2, 4, 3))
    s[0, :, :] = [0.6, 0.3, 0.1]
    s[0, 3] = [0.2, 0.7, 0.1]  # one sample flips item 1 to class 1
    s[1, :, :] = [0.1, 0.2, 0.7]
    preds = np.array([[0, 1, 2], [2, 0, 1]])
    r1 = ua_topk_accuracy(s, preds, k=1)
    assert r1.value == pytest.approx((3 / 4 + 1) / 2)
    np.testing.assert_allclose(r1.per_item, [0.75, 1])
    assert ua_topk_accuracy(s, preds, k=2).value == 1
    assert ua_set_accuracy(s, [{0, 1}, {2, 1}]).value == pytest.approx(1.0)
    assert ua_overlap(s, preds, 1).value == pytest.approx(r1.value)
    assert 0 < ua_average_overlap(s, preds, 3).value <= 1
    # scores instead of ranked lists give the same answer
    scores = np.array([[0.9, 0.5, 0.1], [0.3, 0.1, 0.8]])
    assert ua_topk_accuracy(s, scores, k=1).value == r1.value
    # a near point mass reproduces the standard (point-estimate) accuracy
    point = np.array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3]])
    pm = sample_dirichlet(point * 1e7, samples=50, seed=0)
    assert ua_topk_accuracy(pm, preds, 1).value == point_topk_accuracy(point, preds, 1) == 0.5


def test_prirn_uncertainty_adjusted_accuracy_below_point_estimate_on_dermatology():
    d = dermatology()
    cases = d.annotations[:200]
    plaus = xlcalib.irn(cases, d.n_classes)
    preds = plaus.argmax(axis=1)[:, None]  # an "oracle" predicting the IRN top-1
    cert, _ = xlcalib.ground_truth.certainty_from_concentration(3.0 * plaus, 500, 0)
    # UA accuracy of this predictor is exactly the mean certainty of its label <= mean annotation certainty <= 1
    assert point_topk_accuracy(plaus, preds, 1) == 1.0
    assert cert.mean() < 0.95


def test_dermatology_example_shapes_and_monotone():
    r = xlcalib.ground_truth.dermatology_certainty(reliabilities=(1, 10), samples=200, settings=("xlcalib",))
    assert len(r["cases"]) == 1947
    s = r["summary"][r["summary"]["model"] == "PrIRN"].set_index("reliability")
    assert s.loc[10, "mean_certainty"] > s.loc[1, "mean_certainty"]
    assert (r["risk"]["mean_certainty"].to_numpy() >= s["mean_certainty"].to_numpy() - 0.01).all()


def test_dermatology_example_both_settings_side_by_side():
    r = xlcalib.ground_truth.dermatology_certainty(reliabilities=(1, 50), samples=300, n_cases=400)
    c = r["comparison"].set_index(["model", "reliability"])
    assert list(c.columns) == [f"{stat}_{name}" for stat in ("mean_certainty", "share_below_0.5", "share_below_0.9")
                               for name in ("xlcalib", "reference")]
    # reliability 1: the reference's 0.01 on ~415 unnamed classes outweighs gamma * IRN (total 1); all 1,947 cases
    # give 0.17 against 0.62 (see xlcalib.ground_truth.settings); by reliability 50 the two settings meet
    low, high = c.loc[("PrIRN", 1)], c.loc[("PrIRN", 50)]
    assert 0.1 < low["mean_certainty_reference"] < 0.25 < 0.5 < low["mean_certainty_xlcalib"] < 0.75
    assert low["share_below_0.5_reference"] > 0.95
    assert abs(high["mean_certainty_reference"] - high["mean_certainty_xlcalib"]) < 0.04
    cases = r["cases"]
    assert {"certainty_gamma_1", "reference_certainty_gamma_1"} <= set(cases.columns)
    assert len(r["summary"]) == 4 and set(r["risk"]["setting"]) == {"xlcalib", "reference"}
    with pytest.raises(InputError, match="settings argument"):
        xlcalib.ground_truth.dermatology_certainty(reliabilities=(1,), settings=("xlcalib", "XLCALIB"), n_cases=3)
    with pytest.raises(InputError, match="each entry of the settings argument must be 'xlcalib' or 'reference'"):
        xlcalib.ground_truth.dermatology_certainty(reliabilities=(1,), settings=("paper",), n_cases=3)


def test_threshold_certainty():
    t = threshold_certainty([[-2, -1, 0, 1], [-2, -2, -1, -2], [1, 2, 2, 1], [np.nan, 2, 2, 2]], 0, samples=4000)
    assert (t["certainty"] >= 0.5).all() and t.loc[1, "outcome"] == "<= 0" and t.loc[2, "outcome"] == "> 0"
    assert t.loc[1, "certainty"] > t.loc[0, "certainty"]
    assert t.loc[3, "n"] == 3
    again = threshold_certainty([[-2, -1, 0, 1]], 0, samples=300, seed=5)
    assert again.equals(threshold_certainty([[-2, -1, 0, 1]], 0, samples=300, seed=5))
    with pytest.raises(InputError, match="item 1 has no ratings"):
        threshold_certainty([[np.nan, np.nan]], 0)


def test_bad_counts():
    with pytest.raises(InputError, match="non-negative"):
        annotation_certainty([[1, -1]])
    with pytest.raises(InputError, match=r"reliability argument must be in \(0, "):
        annotation_certainty([[1, 1]], reliability=0)


def test_dermatology_example_with_plackett_luce_subset():
    r = xlcalib.ground_truth.dermatology_certainty(reliabilities=(3,), samples=200, pl_reliabilities=(1, 4), n_cases=25,
                                                   settings=("xlcalib",))
    s = r["summary"].set_index(["model", "reliability"])["mean_certainty"]
    assert ("PL", 1) in s.index and s[("PL", 4)] > s[("PL", 1)]
    pl = r["cases"]["pl_certainty_gamma_4"]
    prirn = r["cases"]["certainty_gamma_3"]
    assert len(pl) == 25 and np.corrcoef(pl, prirn)[0, 1] > 0.3  # the seed reports the two agree (r = 0.9)


# ----------------------------------------------------------------------------- the two settings
from scipy import integrate, special  # noqa: E402

from xlcalib.ground_truth import (  # noqa: E402
    prirn_certainty,
    prirn_concentration,
    resolve_setting,
    unnormalized_irn,
)


def test_setting_names_and_bad_values():
    assert resolve_setting().name == "xlcalib" and resolve_setting(None).name == "xlcalib"
    assert resolve_setting(" REFERENCE ") is xlcalib.ground_truth.REFERENCE
    assert xlcalib.ground_truth.REFERENCE.prirn_alpha == 0.01 and xlcalib.ground_truth.XLCALIB.prirn_alpha == 0
    for bad in ("paper", "", 1, True):
        with pytest.raises(InputError, match="the setting argument must be 'xlcalib' or 'reference'"):
            xlcalib.irn([[[[0]]]], 2, setting=bad)
    with pytest.raises(InputError, match="setting argument"):
        prirn_certainty([[[[0]]]], 2, setting="refrence")
    with pytest.raises(InputError, match="alpha must be"):
        prirn_concentration([[[[0]]]], 2, alpha=-0.1)
    with pytest.raises(InputError, match="block_weighting must be"):
        xlcalib.irn([[[[0]]]], 2, block_weighting="eq15")


def test_irn_reference_weighting_when_a_reader_names_every_class():
    # the reference code weights every named block 1/i, also the last one of a reader naming every class
    np.testing.assert_allclose(xlcalib.irn([[[[0], [1], [2]]]], 3, setting="reference"), [[6 / 11, 3 / 11, 2 / 11]])
    np.testing.assert_allclose(xlcalib.irn([[[[0], [1], [2]]]], 3, block_weighting="reference_code"),
                               [[6 / 11, 3 / 11, 2 / 11]])
    np.testing.assert_allclose(xlcalib.irn([[[[0], [1], [2]]]], 3), [[2 / 3, 1 / 3, 0]])  # eq. 14: block L gets 0
    # mixed: reader 1 names all three ({0} > {1, 2}: 1, 1/2, 1/2), reader 2 only class 2 (1)
    np.testing.assert_allclose(unnormalized_irn([[[[0], [1, 2]], [[2]]]], 3, setting="reference"), [[1, 0.5, 1.5]])
    np.testing.assert_allclose(unnormalized_irn([[[[0], [1, 2]], [[2]]]], 3), [[1, 0, 1]])
    # an explicit block_weighting beats the setting
    np.testing.assert_allclose(unnormalized_irn([[[[0], [1, 2]]]], 4, "eq14", setting="reference"), [[1, 0.25, 0.25, 0]])


def _random_case(rng, K, all_named):
    case = []
    for _ in range(rng.integers(1, 4)):
        n = K if all_named else rng.integers(1, K)
        chosen = rng.permutation(K)[:n]
        cuts = np.sort(rng.choice(np.arange(1, n), size=rng.integers(0, n), replace=False)) if n > 1 else []
        case.append([list(map(int, b)) for b in np.split(chosen, cuts) if len(b)])
    return case


def test_irn_weightings_against_their_rules_on_random_rankings():
    rng = np.random.default_rng(11)
    K = 6
    for _ in range(60):
        all_named = bool(rng.integers(0, 2))
        case = _random_case(rng, K, all_named)
        ref = np.zeros(K)
        eq14 = np.zeros(K)
        for ranking in case:
            for i, block in enumerate(ranking, start=1):
                ref[block] += 1 / i  # the reference: 1/(1 + group index) for every named class
                if not (all_named and i == len(ranking)):
                    eq14[block] += 1 / (i * len(block))
        np.testing.assert_allclose(unnormalized_irn([case], K, setting="reference")[0], ref)
        np.testing.assert_allclose(unnormalized_irn([case], K)[0], eq14)
        if not all_named:  # with a class left unnamed, the fix for all-named readers changes nothing
            old = np.zeros(K)
            for ranking in case:
                for i, block in enumerate(ranking[:-1] if sum(map(len, ranking)) == K else ranking, start=1):
                    old[block] += 1 / i
            np.testing.assert_allclose(ref, old)


def test_prirn_concentration_reference_adds_alpha_to_every_class():
    np.testing.assert_allclose(prirn_concentration([[[[0], [1]]]], 3, reliability=3, setting="reference"),
                               [[2.01, 1.01, 0.01]])
    np.testing.assert_allclose(prirn_concentration([[[[0], [1]]]], 3, reliability=3), [[2, 1, 0]])
    np.testing.assert_allclose(prirn_concentration([[[[0], [1]]]], 3, reliability=3, setting="reference", alpha=0.5),
                               [[2.5, 1.5, 0.5]])


@pytest.mark.parametrize("a0, alpha", [(1.0, 0.01), (0.3, 0.5), (0.05, 0.01)])
def test_exchangeable_others_top1_matches_the_exact_integral(a0, alpha):
    """Class 0 has concentration a0 + alpha, classes 1 and 2 alpha: P(0 wins) = int f(x) P(alpha, x)^2 dx."""
    dens = lambda x: stats.gamma.pdf(x, a0 + alpha) * special.gammainc(alpha, x) ** 2  # noqa: E731
    p0 = sum(integrate.quad(dens, lo, hi, limit=200)[0] for lo, hi in ((0, 1e-8), (1e-8, 1), (1, np.inf)))
    exact = max(p0, (1 - p0) / 2)
    M = 40_000
    cert, label = xlcalib.ground_truth.certainty_from_concentration([[a0, 0, 0]], M, seed=4, base=alpha)
    assert abs(cert[0] - exact) < 4.5 * np.sqrt(exact * (1 - exact) / M)
    assert (label[0] == 0) == (p0 > (1 - p0) / 2)


@pytest.mark.parametrize("top", [1, 2, 3])
def test_exchangeable_others_match_dense_sampling(top):
    """Fast path (others through how many exceed the positive draws) == drawing every class's gamma."""
    conc = np.array([[0.6, 0.3, 0, 0, 0, 0, 0], [0, 0.2, 0, 0.2, 0, 0, 0.1], [2.0, 0, 0, 0, 0, 0, 0]])
    alpha, M = 0.05, 40_000
    fast, fast_lab = xlcalib.ground_truth.certainty_from_concentration(conc, M, seed=1, top=top, base=alpha)
    rng = np.random.default_rng(2)
    g = rng.standard_gamma(np.broadcast_to((conc + alpha)[:, None, :], (3, M, 7)))
    dense, dense_lab = certainty_from_samples(g, top)
    se = np.sqrt(0.25 / M) * np.sqrt(2)
    np.testing.assert_allclose(fast, dense, atol=4.5 * se)
    # the modal label agrees where it is clear-cut (item 3, top-1: class 0 dominates; top-2 adds an exchangeable other)
    assert fast_lab[2] == dense_lab[2] if top == 1 else 0 in fast_lab[2]


def test_prirn_certainty_settings_on_small_cases():
    cases = [[[[0], [1]]], [[[2]], [[2]]]]
    # xlcalib: class 2 named by both readers of case 2 is the only positive class -> certainty 1
    cert, lab = prirn_certainty(cases, 4, reliability=1, samples=4000)
    assert cert[1] == 1.0 and lab[1] == 2
    # reference: Dirichlet(1.01, 0.01, 0.01, 0.01) for case 2 -> P(class 2 wins) by the exact integral
    dens = lambda x: stats.gamma.pdf(x, 1.01) * special.gammainc(0.01, x) ** 3  # noqa: E731
    p = sum(integrate.quad(dens, lo, hi, limit=200)[0] for lo, hi in ((0, 1e-8), (1e-8, 1), (1, np.inf)))
    cert, lab = prirn_certainty(cases, 4, reliability=1, samples=40_000, setting="reference")
    assert abs(cert[1] - p) < 4.5 * np.sqrt(p * (1 - p) / 40_000) and lab[1] == 2
    # reference IRN of case 1 is (2/3, 1/3): concentration (0.677, 0.343, 0.01, 0.01), as prirn_concentration says
    c2, _ = xlcalib.ground_truth.certainty_from_concentration(
        prirn_concentration(cases, 4, 1, setting="reference"), 40_000, seed=9)
    assert abs(cert[0] - c2[0]) < 0.015
    # same seed, same answer
    np.testing.assert_array_equal(prirn_certainty(cases, 4, samples=500, seed=3, setting="reference")[0],
                                  prirn_certainty(cases, 4, samples=500, seed=3, setting="reference")[0])


# ----------------------------------------------------------------------------- spreadsheet functions and report
def test_gt_functions_take_the_setting_argument():
    from udf_registry import GT_CERTAINTY, GT_IRN, GT_PLAUSIBILITY, GT_UA_ACCURACY
    from udf_registry.registry import REGISTRY

    for name, entry in REGISTRY.items():
        if name.startswith("GT_") and name != "GT_THRESHOLD_CERTAINTY":
            assert [a.name for a in entry.args][-2:] == ["setting", "header"], name
    classes = [["A"], ["B"], ["C"]]
    ann = [["A > B > C"], ["B"]]
    ref = GT_IRN(ann, classes, "reference")
    assert ref[0] == ["item", "A", "B", "C"]
    np.testing.assert_allclose(ref[1][1:], [6 / 11, 3 / 11, 2 / 11])
    np.testing.assert_allclose(GT_IRN(ann, classes)[1][1:], [2 / 3, 1 / 3, 0])
    np.testing.assert_allclose(GT_IRN(ann, classes, None)[1][1:], [2 / 3, 1 / 3, 0])
    bad = GT_IRN(ann, classes, "paper")
    assert isinstance(bad, str) and bad.startswith("xlcalib: ") and "setting argument" in bad and "reference" in bad
    assert "setting argument" in GT_CERTAINTY(ann, classes, None, None, None, None, None, 3.0)
    assert "header is the argument after setting" in GT_IRN(ann, classes, False)  # an old formula's header
    cases = [[[[0], [1], [2]]], [[[1]]]]
    got = GT_CERTAINTY(ann, classes, 2.0, 3000.0, 5.0, None, None, "Reference")
    cert, lab = prirn_certainty(cases, 3, 2.0, 3000, 5, setting="reference")
    assert [r[1] for r in got[1:]] == pytest.approx(list(cert), abs=1e-12)
    assert [r[2] for r in got[1:]] == ["ABC"[i] for i in lab]
    # PLAUSIBILITY: with alpha on every class an unnamed class can be the top-1 label; probabilities still sum to 1
    table = pd.DataFrame(GT_PLAUSIBILITY(ann, classes, 1.0, 4000.0, 0.0, "reference")[1:],
                         columns=["item", "class", "irn_plausibility", "p_top1"])
    item2 = table[table["item"] == 2].set_index("class")
    assert item2.loc["B", "irn_plausibility"] == 1 and item2["p_top1"].sum() == pytest.approx(1)
    assert item2.loc[["A", "C"], "p_top1"].min() > 0 and item2.loc[["A", "C"], "irn_plausibility"].max() == 0
    # UA accuracy under the reference setting uses Dirichlet(gamma * IRN_ref + 0.01) draws
    preds = [["A"], ["B"]]
    got = GT_UA_ACCURACY(ann, classes, preds, 1.0, 2.0, 500.0, 1.0, "reference")
    draws = xlcalib.ground_truth.sample_dirichlet(prirn_concentration(cases, 3, 2.0, setting="reference"), 500, 1)
    assert got[1][1] == pytest.approx(ua_topk_accuracy(draws, np.array([[0], [1]]), 1).value, abs=1e-12)


def test_ground_truth_report_setting_row(tmp_path):
    import openpyxl

    from xlcalib.exercises import ground_truth_report

    from .test_templates import filled_ground_truth

    path = filled_ground_truth(tmp_path / "gt.xlsx")
    book = openpyxl.load_workbook(path)
    assert [book["Settings"].cell(row=6, column=c).value for c in (1, 2)] == ["Setting", "xlcalib"]
    default = ground_truth_report(book)["Certainty"]
    book["Settings"]["B6"] = " Reference"
    frames = ground_truth_report(book)
    # the preamble's settings line (split into printed lines no wider than the table)
    preamble = " ".join(str(r[0]) for r in book["Certainty"].iter_rows(min_row=3, max_row=6, values_only=True) if r[0])
    assert "setting reference" in preamble
    classes = ["Melanoma", "Nevus", "Hemangioma", "Eczema"]
    ann = [["Melanoma > Nevus", "Nevus", "Melanoma = Nevus > Eczema"], ["Eczema", "Eczema > Hemangioma"],
           ["Hemangioma", "Hemangioma > Nevus", "Nevus"], ["Nevus", "Nevus", "Nevus"]]
    cases = [[parse_ranking(a, classes) for a in row] for row in ann]
    cert, _ = prirn_certainty(cases, 4, 3.0, 1000, 0, setting="reference")
    np.testing.assert_allclose(frames["Certainty"]["certainty"], cert)
    assert default.loc[3, "certainty"] == 1.0 > frames["Certainty"].loc[3, "certainty"]  # 0.01 on the other classes
    book["Settings"]["B6"] = "paper"
    with pytest.raises(InputError, match=r"sheet Settings, cell B6 \(Setting\) must be 'xlcalib' or 'reference'"):
        ground_truth_report(book)
    book["Settings"]["B6"] = None  # blank: the default setting
    np.testing.assert_allclose(ground_truth_report(book)["Certainty"]["certainty"], default["certainty"])


def test_reference_setting_with_many_classes_is_not_refused_by_the_memory_guard():
    """With the reference code's concentration on every class, only the named classes are drawn (the others are
    exchangeable and counted), so 2,000 classes with three named per item cost what three classes cost; the memory
    guard once sized the draws by all classes (here 16 GB) and refused the dermatology data (419 classes) at 1000
    samples."""
    from xlcalib.ground_truth.dirichlet import certainty_from_concentration

    conc = np.zeros((300, 2000))
    conc[:, :3] = [3.0, 2.0, 1.0]
    certainty, labels = certainty_from_concentration(conc, samples=1000, seed=0, base=0.01)
    assert certainty.shape == (300,) and set(labels) == {0}
    # brute force: the full 2,000-class Dirichlet, P(class 0 is the largest) (320 MB: fits 32-bit Pyodide too)
    draws = np.random.default_rng(1).dirichlet(conc[0] + 0.01, size=20_000)
    p0 = float(np.mean(draws.argmax(axis=1) == 0))
    assert abs(certainty.mean() - p0) < 0.015, (certainty.mean(), p0)
