"""Whole-point scores: the rounding variance in the posterior rankings are drawn from (calibration.resolution)."""
from __future__ import annotations

import numpy as np
import pytest

import xlcalib
from xlcalib.calibration.panel.data import panel_data
from xlcalib.calibration.system.graph import Design
from xlcalib.calibration.models import MODELS
from xlcalib.calibration.panel.resolution import effective_confidences, rounding_variance, score_step
from xlcalib.calibration.panel.simulate import simulate_panel


def test_grid_steps_by_hand():
    assert score_step(np.array([1.0, 4.0, 6.0, -2.0])) == 1.0
    assert score_step(np.array([2.5, 3.0])) == 0.5
    assert score_step(np.array([2.75, 3.0])) == 0.25
    assert score_step(np.array([0.3, 7.1])) == 0.1
    assert score_step(np.array([3.14159, 4.0])) is None
    assert rounding_variance(np.array([1.0, 5.0])) == pytest.approx(1 / 12)
    assert rounding_variance(np.array([1.5, 5.0])) == pytest.approx(0.25 / 12)
    assert rounding_variance(np.array([1.37, 5.0])) == 0.0
    # w / c' = w / c + rounding, read by read
    c = np.array([1.75**2, 1.0, 1.75**-2])
    assert 0.5 / effective_confidences(c, 0.5, 1 / 12) == pytest.approx(0.5 / c + 1 / 12)
    assert effective_confidences(c, 0.5, 0.0) is not None and np.array_equal(effective_confidences(c, 0.5, 0.0), c)


@pytest.fixture(scope="module")
def whole_point_panel():
    return simulate_panel(16, 80, 3, seed=3, n_conflicts=0)


def test_decision_basis_adds_the_rounding_variance_at_its_fixed_point(whole_point_panel):
    """Levels (w estimated): each read's variance in the basis is w / c + 1/12, and refitting the basis model with
    those confidences gives the same w back (the fixed point)."""
    ev = whole_point_panel.evaluations.drop(columns="sd")
    result = xlcalib.calibrate(ev)
    post = result.decision_basis().posterior
    stated = post.stated_confidences()
    assert post.rounding == pytest.approx(1 / 12)
    assert post.w / post.design.c == pytest.approx(post.w / stated + 1 / 12, rel=5e-3)  # w settled to 0.5%
    assert set(np.round(stated / stated.min(), 6)) == {1.0, round(1.75**2, 6), round(1.75**4, 6)}
    d = post.design
    refit = MODELS["random-both"].fit_component(Design(d.ai, d.oi, d.c, d.n_assessors, d.n_objects),
                                                panel_data(ev).scores, "weighted", False)
    assert refit.w == pytest.approx(post.w, rel=5e-3)
    # planned reads are weighed the same way (next reads): a stated confidence gains the rounding variance
    more = post.with_reads(np.array([0]), np.array([0]), np.array([1.0]))
    assert more.design.c[-1] == pytest.approx(1.0 / (1.0 + (1 / 12) / post.w))
    assert more.stated_confidences()[-1] == 1.0


def test_declared_sds_gain_the_rounding_variance(whole_point_panel):
    ev = whole_point_panel.evaluations.drop(columns="level")
    post = xlcalib.calibrate(ev).decision_basis().posterior
    assert post.w == 1.0  # exact: the models set w to 1 for declared SDs (no sum of weights that lands near 1)
    assert 1.0 / post.design.c == pytest.approx(ev["sd"].to_numpy() ** 2 + 1 / 12)


def test_scores_off_every_grid_are_fitted_as_stated(whole_point_panel):
    ev = whole_point_panel.evaluations.drop(columns="sd")
    ev = ev.assign(score=ev["score"] + np.random.default_rng(0).uniform(-0.3, 0.3, len(ev)))
    post = xlcalib.calibrate(ev).decision_basis().posterior
    # exact: off every grid the rounding variance is 0 by definition and the confidences are the stated ones, unchanged
    assert post.rounding == 0.0 and np.array_equal(post.design.c, post.stated_confidences())


def test_confident_reads_no_longer_look_too_precise():
    """Whole-point scores on 1-6: objects read mostly by High-confidence assessors.  Treating the scores as
    continuous with variance w / c makes their posterior SDs too small (the rounding adds 1/12 to every read:
    the squared errors then average about 1.15 x the posterior variance here); with the rounding variance
    they match.  Three large seeded panels (known truth; values centred, so the gauge does not enter)."""
    ratios = []
    for seed in range(3):
        panel = simulate_panel(40, 2000, 4, seed=seed, n_conflicts=0, cross_reads=0.0)
        ev = panel.evaluations
        result = xlcalib.calibrate(ev.drop(columns="sd"))
        basis = result.decision_basis()
        names = result.values.index
        truth = panel.values[names].to_numpy()
        err = (basis.values - basis.values.mean()) - (truth - truth.mean())
        high = ev.assign(high=ev["level"] == "High").groupby("object")["high"].sum().reindex(names).to_numpy()
        confident = high >= 3
        ratios.append((np.sum(err[confident] ** 2), np.sum(basis.se[confident] ** 2)))
    ratio = sum(r[0] for r in ratios) / sum(r[1] for r in ratios)
    assert 0.92 < ratio < 1.08  # about 1.15 without the rounding variance


def test_docstring_examples_run():
    import doctest

    from xlcalib.calibration.panel import resolution

    failures, attempted = doctest.testmod(resolution)[:2]
    assert attempted > 0 and failures == 0
