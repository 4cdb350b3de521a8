"""Plackett–Luce partial-ranking likelihood and Gibbs sampler against brute force and importance sampling."""
from __future__ import annotations

import numpy as np
import pytest

import xlcalib
from xlcalib.errors import InputError
from xlcalib.ground_truth.plackett_luce import (
    _brute_force_likelihood,
    pl_gibbs,
    pl_log_likelihood,
    pl_partial_ranking_log_likelihood,
)


@pytest.mark.parametrize("ranking", [[[0, 2], [1]], [[3], [0, 1, 4]], [[1, 2, 3]], [[4], [2], [0, 3]], [[0, 1, 2, 3, 4]]])
def test_recursion_equals_brute_force(ranking):
    rng = np.random.default_rng(len(ranking))
    for _ in range(5):
        w = rng.gamma(1.0, size=5)
        assert np.exp(pl_partial_ranking_log_likelihood(w, ranking)) == pytest.approx(
            _brute_force_likelihood(w, ranking, 5), rel=1e-12)


def test_full_ranking_reduces_to_classic_pl():
    w = np.array([0.5, 1.2, 0.3, 2.0, 0.7])
    order = [3, 1, 4, 0, 2]
    assert pl_partial_ranking_log_likelihood(w, [[c] for c in order]) == pytest.approx(pl_log_likelihood(w, order))
    manual = np.log(2.0 / 4.7) + np.log(1.2 / 2.7) + np.log(0.7 / 1.5) + np.log(0.5 / 0.8)
    assert pl_log_likelihood(w, order) == pytest.approx(manual)


def _importance_mean(cases_blocks, K, reliability=1, n=300_000, seed=0):
    """Posterior mean of normalised plausibilities by importance sampling from the Gamma(1, 1) prior."""
    rng = np.random.default_rng(seed)
    lam = rng.gamma(1.0, size=(n, K))
    logw = np.zeros(n)
    for ranking in cases_blocks:
        logw += reliability * np.array([pl_partial_ranking_log_likelihood(l, ranking) for l in lam]) if n <= 20_000 else \
            reliability * _vector_loglik(lam, ranking)
    w = np.exp(logw - logw.max())
    p = lam / lam.sum(axis=1, keepdims=True)
    return (w[:, None] * p).sum(axis=0) / w.sum()


def _vector_loglik(lam, ranking):
    """Vectorised over samples for blocks of size <= 2 (enough for these tests)."""
    total = lam.sum(axis=1)
    placed = np.zeros(lam.shape[0])
    out = np.zeros(lam.shape[0])
    for block in ranking:
        lb = lam[:, block]
        zbar = total - placed - lb.sum(axis=1)
        if len(block) == 1:
            R = 1 / (zbar + lb[:, 0])
        else:
            assert len(block) == 2
            R = (1 / (zbar + lb[:, 0]) + 1 / (zbar + lb[:, 1])) / (zbar + lb.sum(axis=1))
        out += np.log(lb).sum(axis=1) + np.log(R)
        placed += lb.sum(axis=1)
    return out


@pytest.mark.parametrize("case, K, reliability", [
    ([[[0], [1]]], 3, 1),
    ([[[0, 1]], [[1], [2]]], 4, 1),
    ([[[2], [0]], [[2]]], 4, 2),
])
def test_gibbs_stationary_distribution_matches_importance_sampling(case, K, reliability):
    gibbs = pl_gibbs(case, K, reliability=reliability, samples=6000, burn_in=200, chains=60, seed=3, pool_unranked=False)
    exact = _importance_mean(case, K, reliability)
    # Monte Carlo error: plausibility SD <= 0.3, ~6000 correlated draws (effective ~1000+) -> s.e. < 0.01
    np.testing.assert_allclose(gibbs.mean(axis=0), exact, atol=0.03)


def test_pooled_sampler_matches_unpooled():
    case = [[[0], [1, 2]], [[1], [0]]]
    pooled = pl_gibbs(case, 8, samples=6000, seed=1, pool_unranked=True)
    full = pl_gibbs(case, 8, samples=6000, seed=2, pool_unranked=False)
    np.testing.assert_allclose(pooled.mean(axis=0), full.mean(axis=0), atol=0.02)
    # the unranked classes are exchangeable, and their split follows the Gamma prior either way
    np.testing.assert_allclose(pooled[:, 3:].sum(axis=1).mean(), full[:, 3:].sum(axis=1).mean(), atol=0.02)


def test_reproducible_shapes_and_errors():
    case = [[[0], [1]]]
    a, b = pl_gibbs(case, 4, samples=100, seed=5), pl_gibbs(case, 4, samples=100, seed=5)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (100, 4) and np.allclose(a.sum(axis=1), 1)
    with pytest.raises(InputError, match="whole number"):
        pl_gibbs(case, 4, reliability=1.5)
    with pytest.raises(InputError, match="distinct"):
        pl_gibbs([[[0], [0]]], 4)
    # more reliability, more certainty
    low = xlcalib.ground_truth.certainty_from_samples(pl_gibbs(case, 4, reliability=1, samples=2000)[None])[0][0]
    high = xlcalib.ground_truth.certainty_from_samples(pl_gibbs(case, 4, reliability=8, samples=2000)[None])[0][0]
    assert high > low


# ----------------------------------------------------------------------------- the reference code's model
def _importance_mean_reference(case, K, reliability=1, n=300_000, seed=0):
    """Exact posterior means under the reference model by importance sampling from its prior.

    Items: the ranked classes plus ONE unranked item, each Gamma(1, 1); every named block ranks above the
    unranked item (also for a reader naming every class).  Returns the mean normalised plausibility of each
    ranked class and of all unranked classes together (their pooled item; dropped if nothing is unranked).
    """
    ranked = sorted({c for ranking in case for block in ranking for c in block})
    local = {c: i for i, c in enumerate(ranked)}
    rng = np.random.default_rng(seed)
    lam = rng.gamma(1.0, size=(n, len(ranked) + 1))
    logw = np.zeros(n)
    for ranking in case:
        logw += reliability * _vector_loglik(lam, [[local[c] for c in block] for block in ranking])
    w = np.exp(logw - logw.max())
    keep = lam if len(ranked) < K else lam[:, :-1]
    p = keep / keep.sum(axis=1, keepdims=True)
    mean = (w[:, None] * p).sum(axis=0) / w.sum()
    return ranked, mean


@pytest.mark.parametrize("case, K, reliability", [
    ([[[0], [1]]], 5, 1),
    ([[[0, 1]], [[1], [2]]], 6, 1),
    ([[[2], [0]], [[2]]], 4, 2),
    ([[[0], [1], [2]]], 3, 1),  # a reader naming every class: all blocks rank above the (empty) unranked item
])
def test_reference_model_matches_importance_sampling(case, K, reliability):
    gibbs = pl_gibbs(case, K, reliability=reliability, samples=6000, burn_in=200, chains=60, seed=3,
                     setting="reference")
    ranked, exact = _importance_mean_reference(case, K, reliability)
    got = gibbs[:, ranked].mean(axis=0)
    unranked = [c for c in range(K) if c not in ranked]
    if unranked:
        got = np.append(got, gibbs[:, unranked].sum(axis=1).mean())
    # measured gaps 0.002-0.005; the default model misses these means by 0.06-0.24
    np.testing.assert_allclose(got, exact, atol=0.015)


def test_reference_model_differs_from_the_default_where_it_should():
    # the two models are the same when exactly one class is left unranked (Gamma(1) either way) ...
    case = [[[0], [1, 2]], [[1], [0]]]
    ref = pl_gibbs(case, 4, samples=6000, seed=1, setting="reference")
    default = pl_gibbs(case, 4, samples=6000, seed=2)
    np.testing.assert_allclose(ref.mean(axis=0), default.mean(axis=0), atol=0.02)
    # ... and far apart with many unranked classes: one reader naming one of 419 classes, reliability 3
    one = [[[5]]]
    c_ref = xlcalib.ground_truth.certainty_from_samples(pl_gibbs(one, 419, 3, samples=3000, setting="reference")[None])
    c_def = xlcalib.ground_truth.certainty_from_samples(pl_gibbs(one, 419, 3, samples=3000)[None])
    assert c_ref[0][0] > 0.99 and c_ref[1][0] == 5
    assert 0.07 < c_def[0][0] < 0.18  # about 0.12: Gamma(418, 1) unranked mass against one ranked class
    # the reference splits its unranked item by Dirichlet(1, ..., 1): each of U = 3 shares is Beta(1, 2)
    s = pl_gibbs([[[0]]], 4, samples=8000, seed=4, setting="reference")
    share = s[:, 1] / s[:, 1:].sum(axis=1)
    assert share.mean() == pytest.approx(1 / 3, abs=0.02) and share.var() == pytest.approx(1 / 18, abs=0.01)


def test_reference_setting_errors_and_pl_certainty():
    with pytest.raises(InputError, match="the setting argument must be 'xlcalib' or 'reference'"):
        pl_gibbs([[[0]]], 4, setting="paper")
    with pytest.raises(InputError, match="pool_unranked=False"):
        pl_gibbs([[[0]]], 4, setting="reference", pool_unranked=False)
    with pytest.raises(InputError, match="setting argument"):
        xlcalib.ground_truth.pl_certainty([[[[0]]]], 4, setting=3)
    cert, lab = xlcalib.ground_truth.pl_certainty([[[[0]]], [[[1], [2]], [[1]]]], 30, reliability=2, samples=500,
                                                  setting="reference")
    assert lab == [0, 1] and (cert > 0.9).all()
