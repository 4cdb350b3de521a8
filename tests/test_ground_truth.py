"""Uncertain ground truth: Dirichlet certainty, UA metrics, IRN/PrIRN, meanAO, parsing, threshold model."""
from __future__ import annotations

from collections import Counter

import numpy as np
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
    r = xlcalib.ground_truth.dermatology_certainty(reliabilities=(1, 10), samples=200)
    assert len(r["cases"]) == 1947
    s = r["summary"][r["summary"]["model"] == "PrIRN"].set_index("reliability")
    assert s.loc[10, "mean_certainty"] > s.loc[1, "mean_certainty"]
    assert (r["risk"]["mean_certainty"].to_numpy() >= s["mean_certainty"].to_numpy() - 0.01).all()


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
    r = xlcalib.ground_truth.dermatology_certainty(reliabilities=(3,), samples=200, pl_reliabilities=(1, 4), n_cases=25)
    s = r["summary"].set_index(["model", "reliability"])["mean_certainty"]
    assert ("PL", 1) in s.index and s[("PL", 4)] > s[("PL", 1)]
    pl = r["cases"]["pl_certainty_gamma_4"]
    prirn = r["cases"]["certainty_gamma_3"]
    assert len(pl) == 25 and np.corrcoef(pl, prirn)[0, 1] > 0.3  # the seed reports the two agree (r = 0.9)
