"""RSMTool-style metrics against scikit-learn/scipy and hand-computed cases."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import xlcalib
from xlcalib.errors import InputError
from xlcalib.scoring import cohen_kappa, quadratic_weighted_kappa


def _data(seed=0, n=200):
    rng = np.random.default_rng(seed)
    h = rng.integers(1, 7, n).astype(float)
    m = np.clip(h + rng.normal(0, 0.8, n), 1, 6)
    return h, m


def test_evaluation_metrics_against_sklearn_scipy():
    from scipy.stats import pearsonr
    from sklearn.metrics import cohen_kappa_score, mean_squared_error, r2_score

    h, m = _data()
    e = xlcalib.evaluation_metrics(h, m)
    mr = np.rint(m)
    assert e["N"] == 200
    assert e["exact_agreement"] == pytest.approx(100 * np.mean(mr == h))
    assert e["adjacent_agreement"] == pytest.approx(100 * np.mean(np.abs(mr - h) <= 1))
    assert e["kappa"] == pytest.approx(cohen_kappa_score(h.astype(int), mr.astype(int)), abs=1e-12)
    assert e["r"] == pytest.approx(pearsonr(h, m)[0], abs=1e-12)
    assert e["mse"] == pytest.approx(mean_squared_error(h, m))
    assert e["r2"] == pytest.approx(r2_score(h, m))
    assert e["smd"] == pytest.approx((m.mean() - h.mean()) / h.std(ddof=1))
    assert e.attrs["rounded"]


def test_qwk_equals_weighted_kappa_on_integers():
    from sklearn.metrics import cohen_kappa_score

    h, m = _data(1)
    mi = np.rint(m)
    # the continuous formula equals quadratic-weighted kappa when both use the full common range
    assert quadratic_weighted_kappa(h, mi) == pytest.approx(cohen_kappa_score(h.astype(int), mi.astype(int), weights="quadratic"), abs=1e-10)


def test_exclude_zero_and_none_cases():
    e = xlcalib.evaluation_metrics([0, 1, 2, 3], [1, 1, 2, 3])
    assert e["N"] == 3 and e["exact_agreement"] == 100
    assert xlcalib.evaluation_metrics([0, 1, 2, 3], [1, 1, 2, 3], exclude_zero=False)["N"] == 4
    flat = xlcalib.evaluation_metrics([2, 2, 2], [1, 2, 3])
    assert flat["r"] is None and flat["smd"] is None and flat["r2"] is None
    one = xlcalib.evaluation_metrics([2], [3])
    assert one["r"] is None and one["r2"] is None and one["N"] == 1


def test_kappa_uses_full_range():
    # categories 1 and 3 only; the unused 2 must not change unweighted kappa
    assert cohen_kappa(np.array([1, 3, 3, 1]), np.array([1, 3, 1, 1])) == pytest.approx(0.5)


def test_smd_methods():
    h, m = _data(2)
    assert xlcalib.standardized_mean_difference(h, m, "pooled") == pytest.approx(
        (m.mean() - h.mean()) / np.sqrt((h.var(ddof=1) + m.var(ddof=1)) / 2))
    assert xlcalib.standardized_mean_difference(h, m, "williamson", 2.0, 3.0) == pytest.approx(
        (m.mean() - h.mean()) / np.sqrt((4 + 9) / 2))
    with pytest.raises(InputError):
        xlcalib.standardized_mean_difference(h, m, "other")


def test_prmse_double_scored_equals_simple_formulas():
    rng = np.random.default_rng(3)
    t = rng.normal(3, 1, 300)
    h1, h2 = t + rng.normal(0, 0.5, 300), t + rng.normal(0, 0.5, 300)
    m = t + rng.normal(0, 0.4, 300)
    hh = np.column_stack([h1, h2])
    ve = np.sum((h1 - h2) ** 2) / (2 * 300)
    hbar = (h1 + h2) / 2
    assert xlcalib.variance_of_errors(hh) == pytest.approx(ve)
    assert xlcalib.true_score_variance(hh) == pytest.approx(hbar.var(ddof=1) - ve / 2)
    mse_t = np.mean((hbar - m) ** 2) - ve / 2
    assert xlcalib.prmse_true(m, hh) == pytest.approx(1 - mse_t / (hbar.var(ddof=1) - ve / 2))
    # true PRMSE here is 1 - 0.16/1 = 0.84; the estimate is close
    assert xlcalib.prmse_true(m, hh) == pytest.approx(0.84, abs=0.08)


def test_prmse_partial_double_scoring_and_single():
    rng = np.random.default_rng(4)
    t = rng.normal(0, 1, 2000)
    hh = np.column_stack([t + rng.normal(0, 0.6, 2000), t + rng.normal(0, 0.6, 2000), t + rng.normal(0, 0.6, 2000)])
    hh[500:, 1:] = np.nan  # only a quarter triple-scored
    m = t + rng.normal(0, 0.5, 2000)
    assert xlcalib.variance_of_errors(hh) == pytest.approx(0.36, rel=0.15)
    assert xlcalib.prmse_true(m, hh) == pytest.approx(1 - 0.25, abs=0.06)
    assert xlcalib.prmse_true(m, hh[:, :1]) is None


def test_dsm_and_fairness():
    rng = np.random.default_rng(5)
    g = np.repeat(["a", "b"], 200)
    h = rng.normal(3, 1, 400)
    m = h + np.where(g == "b", 0.5, 0.0) + rng.normal(0, 0.3, 400)
    dsm = xlcalib.difference_of_standardized_means(h, m, groups=g)
    zh, zm = (h - h.mean()) / h.std(ddof=1), (m - m.mean()) / m.std(ddof=1)
    assert dsm["b"] == pytest.approx(np.mean((zm - zh)[g == "b"]))
    assert dsm["b"] > 0 > dsm["a"]
    f = xlcalib.fairness_analyses(h, m, g).set_index("measure")
    sm = pytest.importorskip("statsmodels.formula.api")
    df = pd.DataFrame({"err": m - h, "sq": (m - h) ** 2, "g": g, "h": h})
    assert f.loc["overall score difference", "percent_variance"] == pytest.approx(100 * sm.ols("err ~ C(g)", df).fit().rsquared)
    full, base = sm.ols("err ~ C(g) + h", df).fit(), sm.ols("err ~ h", df).fit()
    assert f.loc["conditional score difference", "percent_variance"] == pytest.approx(100 * (full.rsquared - base.rsquared))
    assert f.loc["overall score difference", "p_value"] < 1e-6


def test_human_human_agreement_pooled_smd():
    h1, h2 = _data(6)
    h2 = np.rint(h2)
    a = xlcalib.human_human_agreement(h1, h2)
    assert a["smd"] == pytest.approx((h2.mean() - h1.mean()) / np.sqrt((h1.var(ddof=1) + h2.var(ddof=1)) / 2))
    assert a["N"] == 200


def test_bad_inputs():
    with pytest.raises(InputError, match="differ in length"):
        xlcalib.evaluation_metrics([1, 2], [1])
    with pytest.raises(InputError, match="system, row 2: 'x' is not a number"):
        xlcalib.evaluation_metrics([1, 2], [1, "x"])
    with pytest.raises(InputError, match="no responses"):
        xlcalib.evaluation_metrics([0, 0], [1, 2])
