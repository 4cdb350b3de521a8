"""The ordinal (many-facet Rasch) model: its derivatives, its integration, what it recovers, what its fit
statistics find, its categories, its gauge, and the decisions drawn from it."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp

import xlcalib
from xlcalib.calibration import RaschResult
from xlcalib.calibration.panel.data import panel_data
from xlcalib.calibration.rasch import estimate as E
from xlcalib.calibration.rasch.categories import category_scale
from xlcalib.calibration.rasch.likelihood import log_probabilities
from xlcalib.calibration.rasch.simulate import draw_categories, simulate_ordinal_panel
from xlcalib.errors import InputError


def _crossed(A=6, O=80, reads=3, K=4, seed=2, per=False):
    """A small random panel and its parameter layout (every assessor uses every category)."""
    rng = np.random.default_rng(seed)
    ai = np.concatenate([rng.choice(A, reads, replace=False) for _ in range(O)]).astype(np.intp)
    oi = np.repeat(np.arange(O), reads).astype(np.intp)
    x = draw_categories(rng, rng.normal(0, 1.2, O)[oi] - rng.normal(0, 0.5, A)[ai], np.linspace(-1.2, 1.2, K - 1))
    layout = E.layout_for(A, ai, x, K, per)
    slopes = np.sqrt(rng.choice([3.06, 1.0, 0.33], ai.size))  # High / Medium / Low reads: their discriminations
    return E.Panel(ai, oi, x, layout, O, slopes), rng


@pytest.mark.parametrize("per_assessor", [False, True], ids=["rating scale", "partial credit"])
def test_gradient_and_observed_information_are_the_exact_derivatives(per_assessor):
    """Newton's step and every standard error rest on them: central differences of the quadrature's log-likelihood
    (nodes held fixed; reads of three confidences, so three slopes) agree to 1e-7 -- the difference formula's own truncation error at h = 1e-5 is ~1e-9 of
    entries of size ~100."""
    panel, rng = _crossed(per=per_assessor)
    size = panel.layout.size
    phi = rng.normal(0, 0.3, size)
    centre, spread = rng.normal(0, 0.5, panel.n_objects), rng.uniform(0.5, 1.2, panel.n_objects)
    state = E.evaluate(panel, phi, centre, spread)
    grad, complete = E._complete_information(panel, phi, state)
    observed = complete - E._missing_information(panel, phi, state)
    h = 1e-5
    numeric_grad, numeric_info = np.zeros(size), np.zeros((size, size))
    for i in range(size):
        e = np.zeros(size)
        e[i] = h
        up, down = E.evaluate(panel, phi + e, centre, spread), E.evaluate(panel, phi - e, centre, spread)
        numeric_grad[i] = (up.loglik - down.loglik) / (2 * h)
        numeric_info[i] = -(E._complete_information(panel, phi + e, up)[0]
                            - E._complete_information(panel, phi - e, down)[0]) / (2 * h)
    assert np.abs(numeric_grad - grad).max() < 1e-7
    assert np.abs(numeric_info - observed).max() < 1e-7


@pytest.mark.parametrize("reads, sigma", [(3, 1.0), (20, 2.0)])
def test_adaptive_quadrature_matches_a_fine_grid(reads, sigma):
    """15 adaptive nodes per object against the trapezoid rule on 6,001 points 0.005 logits apart (exact to ~1e-12
    for posteriors with SD > 0.1): log-likelihood to 1e-3, EAPs to 1e-3 and PSDs to 2e-3 logits -- a hundredth of
    the smallest SE, so the SEs' second digit never depends on the integration."""
    p = simulate_ordinal_panel(max(reads + 2, 10), 120, reads, object_sd=sigma, n_subjects=1, seed=5)
    r = xlcalib.calibrate(p.evaluations, model="rating-scale")
    fit = r.fit
    beta, c, mu, s = fit.marginal.layout.unpack(fit.marginal.phi)
    data, a = fit.data, fit.marginal.panel.slope[:, None, None]  # each read's slope (its confidence level)
    grid = np.linspace(-15, 15, 6001)
    lp = log_probabilities(a[:, :, 0] * (grid[None, :] - beta[data.ai][:, None]), a * c[0])
    observed = lp[np.arange(data.n_evaluations), :, fit.categories.code]
    joint = np.zeros((data.n_objects, grid.size))
    np.add.at(joint, data.oi, observed)
    joint += -np.log(s) - 0.5 * np.log(2 * np.pi) - 0.5 * ((grid - mu) / s) ** 2 + np.log(grid[1] - grid[0])
    per_object = logsumexp(joint, axis=1)
    post = np.exp(joint - per_object[:, None])
    eap = post @ grid
    psd = np.sqrt(post @ grid**2 - eap**2)
    loglik = per_object.sum() - beta @ beta / (2 * E.SEVERITY_PRIOR_SD**2)
    assert abs(loglik - fit.marginal.state.loglik) < 1e-3
    assert np.abs(eap - fit.measures.measure).max() < 1e-3
    assert np.abs(psd - fit.measures.psd).max() < 2e-3


def test_leave_one_out_predictions_match_direct_integration():
    """Each read's prediction from its object's other reads (the posterior with its own likelihood divided out) equals
    the same prediction integrated on a fine grid: to 3e-4 (the 15 nodes are placed for the full posterior and
    reweighted for the leave-one-out one, which is wider -- most when a High read, the sharpest, is left out;
    measured 1e-4 here: z and the mean-squares move in the 4th digit)."""
    p = simulate_ordinal_panel(12, 100, 3, n_categories=4, seed=7)
    fit = xlcalib.calibrate(p.evaluations, model="rating-scale").fit
    beta, c, mu, s = fit.marginal.layout.unpack(fit.marginal.phi)
    data, code, a = fit.data, fit.categories.code, fit.marginal.panel.slope[:, None, None]
    grid = np.linspace(-15, 15, 4001)
    lp = log_probabilities(a[:, :, 0] * (grid[None, :] - beta[data.ai][:, None]), a * c[0])
    observed = lp[np.arange(code.size), :, code]
    joint = np.zeros((data.n_objects, grid.size))
    np.add.at(joint, data.oi, observed)
    joint += -0.5 * ((grid - mu) / s) ** 2
    others = joint[data.oi] - observed
    w = np.exp(others - others.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    probs = np.einsum("rg,rgk->rk", w, np.exp(lp))
    assert np.abs(probs @ np.arange(4) - fit.predictions.expected).max() < 3e-4
    assert np.abs(probs[np.arange(code.size), code] - fit.predictions.p_observed).max() < 3e-4


def test_measures_and_severities_cover_the_truth_and_thresholds_are_recovered():
    """40 simulated expertise-grouped panels (20 assessors, 100 objects, 4 reads, 5 categories, severities SD 0.7):
    95% intervals cover the true measures and severities 95% +- 2.5% (4,000 measures and 800 severities; the Monte
    Carlo SE of a share near 0.95 is 0.003 and 0.008); the thresholds' mean error is within 0.2 logits: the outer
    thresholds' small-sample bias with 400 reads (measured 0.15 +- 0.03 outward; 0.02 with 1,600 reads, see
    benchmarks/bench_rasch.py)."""
    covered_m, covered_s, tau_error = [], [], []
    for seed in range(40):
        p = simulate_ordinal_panel(20, 100, 4, n_categories=5, severity_sd=0.7, seed=seed)
        r = xlcalib.calibrate(p.evaluations, model="rating-scale", gauge="simple")
        truth_m, truth_s = p.measures[r.values.index], p.severities[r.severities.index]
        covered_m.append(((truth_m >= r.values["lower"]) & (truth_m <= r.values["upper"])).mean())
        covered_s.append(((truth_s >= r.severities["lower"]) & (truth_s <= r.severities["upper"])).mean())
        tau_error.append(r.fit.thresholds[0] - p.thresholds)
    assert abs(np.mean(covered_m) - 0.95) < 0.025
    assert abs(np.mean(covered_s) - 0.95) < 0.025
    assert np.abs(np.mean(tau_error, axis=0)).max() < 0.2


def test_fit_statistics_find_an_erratic_and_a_central_tendency_assessor():
    """Planted in a 24 x 240 x 4 panel: A01's logits are a third of the model's (a rater discrimination of 0.3:
    erratic), A02 keeps to the middle (thresholds 3x as far apart); the others follow the model.  Each read's
    contribution to a mean-square has expectation 1 under the model, so the well-behaved assessors' sit near 1."""
    p = simulate_ordinal_panel(24, 240, 4, n_categories=5, seed=3, erratic={0: 0.3}, central={1: 3.0})
    r = xlcalib.calibrate(p.evaluations, model="rating-scale")
    fit = r.fit_statistics()
    assert fit.loc["A01", "reading"].startswith("erratic")
    assert fit.loc["A02", "reading"].startswith("too predictable")
    rest = fit.drop(index=["A01", "A02"])
    assert rest["reading"].eq("as expected").mean() >= 0.9
    assert 0.85 < rest["outfit"].median() < 1.15 and 0.85 < rest["infit"].median() < 1.15
    words = r.summary()
    assert "A01" in words.split("erratic (")[1].split(")")[0] and "A02" in words.split("too predictable")[1]


def test_reads_piled_at_the_floor_rank_as_well_as_plain_averages():
    """Ordinal panels with about 70% of reads in the lowest category (where the observed information is not positive
    definite at the start, and Fisher scoring takes the first steps): the fit converges and ranks the objects as
    well as their plain averages do (Spearman with the truth over 8 panels: at least theirs less 0.02, the Monte
    Carlo s.e. of the difference being about 0.01)."""
    from scipy.stats import spearmanr

    ours, plain = [], []
    for seed in range(8):
        p = simulate_ordinal_panel(24, 150, 4, n_categories=5, object_mean=-2.0, thresholds=[-1.0, 0.0, 1.0, 2.0],
                                   seed=30 + seed)
        r = xlcalib.calibrate(p.evaluations, model="rating-scale")
        assert r.stats["converged"] and (p.evaluations["score"] == 1).mean() > 0.6
        truth = p.measures[r.values.index]
        ours.append(spearmanr(r.values["measure"], truth)[0])
        plain.append(spearmanr(r.values["raw_mean"], truth)[0])
    assert np.mean(ours) >= np.mean(plain) - 0.02


def test_categories_from_a_declared_scale_and_unused_ones_left_out():
    """A declared 1-6 scale whose 3 and 6 nobody used: the model has 4 categories; the table lists all six, the
    unused with count 0 and no threshold; fair averages keep the rubric's scores (1, 2, 4, 5)."""
    scale = category_scale(np.array([1.0, 2.0, 4.0, 5.0, 2.0]), (1, 6))
    assert scale.values.tolist() == [1, 2, 3, 4, 5, 6] and scale.n_used == 4
    assert scale.code.tolist() == [0, 1, 2, 3, 1] and "3, 6 were used by no assessor" in scale.unused_words()
    p = simulate_ordinal_panel(12, 80, 3, n_categories=5, seed=4)
    ev = p.evaluations.assign(score=p.evaluations["score"].map({1: 1, 2: 2, 3: 4, 4: 5, 5: 5}))
    r = xlcalib.calibrate(ev, model="rating-scale", scale=(1, 6))
    table = r.category_table()
    assert table.index.tolist() == [1, 2, 3, 4, 5, 6]
    assert table.loc[[3, 6], "count"].tolist() == [0, 0] and table.loc[[3, 6], "threshold"].isna().all()
    assert r.values["fair_average"].between(1, 5).all() and "3, 6 were used by no assessor" in r.summary()
    halves = category_scale(np.array([1.0, 2.5]), (1, 6))  # the grid's step is read from the scores
    assert halves.values.tolist() == [1.0 + 0.5 * i for i in range(11)] and halves.n_used == 2


def test_disordered_thresholds_are_said_in_words():
    """Thresholds -1, +1, 0.2, 1.5: category 3 (between the second and third) is never the most probable."""
    p = simulate_ordinal_panel(20, 400, 4, n_categories=5, thresholds=[-1.0, 1.0, 0.2, 1.5], seed=6)
    r = xlcalib.calibrate(p.evaluations, model="rating-scale")
    words = r.stats["thresholds_order"]
    assert words.startswith("Disordered") and "category 3 is never the most probable" in words
    assert r.category_table().loc[4.0, "advances"] == "no: disordered"


def test_an_assessor_whose_every_read_is_at_the_floor_keeps_a_finite_severity():
    """Every read of A01 at the lowest category: maximum likelihood would put the severity at infinity; the weak prior
    keeps it finite, far harsher than the rest, with a wide +- and a note."""
    p = simulate_ordinal_panel(12, 80, 3, n_categories=4, seed=8)
    ev = p.evaluations.copy()
    ev.loc[ev["assessor"] == "A01", "score"] = 1.0
    r = xlcalib.calibrate(ev, model="rating-scale")
    s = r.severities
    assert np.isfinite(s.loc["A01", "severity"]) and s.loc["A01", "severity"] == s["severity"].max()
    assert s.loc["A01", "se"] > 2 * s["se"].drop("A01").median() and "lowest category" in s.loc["A01", "extreme"]


def test_groups_that_share_no_object_are_each_centred():
    """Two halves sharing no object: fitted together, each group's severities centred (as strict as the panel on
    average), said in the Summary; the ranking spans both."""
    a = simulate_ordinal_panel(8, 40, 3, n_categories=4, n_subjects=1, seed=9).evaluations
    b = simulate_ordinal_panel(8, 40, 3, n_categories=4, n_subjects=1, seed=10).evaluations
    ev = pd.concat([a, b.assign(assessor="B" + b["assessor"], object="Q" + b["object"])], ignore_index=True)
    r = xlcalib.calibrate(ev, model="rating-scale", gauge="simple")
    s = r.severities
    assert r.stats["n_components"] == 2 and set(s["group"]) == {1, 2}
    assert s.groupby("group")["severity"].sum().abs().max() < 1e-8
    assert "as strict as the panel on average" in r.summary()
    assert len(r.ranking(top_k=10, draws=500)) == 80


def test_gauges_weighted_and_simple():
    """weighted: the reads-weighted severities sum to zero; simple: the plain sum; the differences of measures
    are gauge-free (to the fit's tolerance)."""
    p = simulate_ordinal_panel(12, 90, 3, n_categories=4, seed=11)
    weighted = xlcalib.calibrate(p.evaluations, model="rating-scale")
    simple = xlcalib.calibrate(p.evaluations, model="rating-scale", gauge="simple")
    n = weighted.severities["n"]
    assert abs((weighted.severities["severity"] * n).sum()) < 1e-8 and abs(simple.severities["severity"].sum()) < 1e-8
    gap = lambda r: r.values["measure"] - r.values["measure"].iloc[0]  # noqa: E731
    assert np.abs(gap(weighted) - gap(simple)).max() < 2e-3  # the severities' weak prior sees the gauge slightly


def test_partial_credit_gives_an_assessor_who_keeps_to_the_middle_wide_thresholds():
    """Partial credit by assessor: A02 (planted thresholds twice as far apart) gets its own, wider thresholds."""
    p = simulate_ordinal_panel(10, 300, 4, n_categories=4, n_subjects=1, seed=12, central={1: 2.0})
    r = xlcalib.calibrate(p.evaluations, model="partial-credit")
    t = r.thresholds().pivot(index="assessor", columns="category", values="threshold")
    spread = t.max(axis=1) - t.min(axis=1)
    assert spread.idxmax() == "A02" and spread["A02"] > 2 * spread.drop("A02").median()
    assert r.stats["model"] == "partial-credit" and isinstance(r, RaschResult)


def test_decisions_are_drawn_from_the_measures_posterior():
    """ranking() runs the one decision machinery on the measures' posterior: P(above) in [0, 1] with the lottery
    filling exactly top_k places; a score line is a fair average and the plain averages are compared on the same
    scale; draws reproduce with the seed."""
    p = simulate_ordinal_panel(16, 120, 4, n_categories=5, seed=13)
    r = xlcalib.calibrate(p.evaluations, model="rating-scale")
    table = r.ranking(top_k=12, draws=2000, lottery=True, seed=3)
    assert table["final"].isin(["funded", "funded by lottery"]).sum() == 12
    # values in rank order (ties within the ranking's tolerance may differ in the last bits)
    assert table["rank"].is_monotonic_increasing and (np.diff(table["value"]) <= 1e-9).all()
    assert np.allclose(table["value"], r.fit.fair(table["measure"]))
    again = r.ranking(top_k=12, draws=2000, lottery=True, seed=3)
    assert table["p_above"].equals(again["p_above"])
    line = r.ranking(threshold=3.2, draws=500)
    assert line.attrs["line"] == "fair average 3.2"
    assert ((line["value"] >= 3.2) == (line["measure"] >= line.attrs["measure_line"])).all()
    assert (line["raw_decision"] == np.where(line["raw_mean"] >= 3.2, "above", "below")).all()
    assert r.decision_basis().posterior.variances()[0] == pytest.approx(r.values["se"].to_numpy() ** 2)
    with pytest.raises(InputError, match="strictly between the lowest and highest category"):
        r.ranking(threshold=5)


def test_the_posterior_draws_have_the_measures_variances():
    """The joint draws' variances are the measures' SEs squared (4,000 draws: within 10%), and two objects read by
    the same assessors are correlated through them."""
    p = simulate_ordinal_panel(12, 60, 3, n_categories=4, seed=14)
    r = xlcalib.calibrate(p.evaluations, model="rating-scale")
    post = r.decision_basis().posterior
    rng = np.random.default_rng(0)
    dev = post.draw_deviations(4000, rng, post.draw_theta(4000, rng))
    assert np.allclose(dev.var(axis=0), r.values["se"] ** 2, rtol=0.1)
    i, j = 0, 1
    assert post.difference_variance(i, j) == pytest.approx(np.var(dev[:, i] - dev[:, j]), rel=0.1)


def test_refusals_in_one_line():
    p = simulate_ordinal_panel(8, 30, 3, n_categories=4, seed=15)
    ev = p.evaluations
    with pytest.raises(InputError, match="per_component=True is for the linear models"):
        xlcalib.calibrate(ev, model="rating-scale", per_component=True)
    with pytest.raises(InputError, match="model='partial-credit'"):
        xlcalib.calibrate(ev, model="rating-scale", scale_use="on")
    with pytest.raises(InputError, match="at most 30 ordered categories"):
        xlcalib.calibrate(ev.assign(score=np.arange(len(ev)) * 0.37), model="facets")
    with pytest.raises(InputError, match="at least two categories"):
        xlcalib.calibrate(ev.assign(score=3.0), model="rating-scale")
    r = xlcalib.calibrate(ev, model="rating-scale")
    with pytest.raises(InputError, match="next reads are planned with the linear models"):
        r.next_reads(3)


def test_index_arrays_are_intp():
    """Pyodide is 32-bit: every index array the fit builds is np.intp."""
    p = simulate_ordinal_panel(8, 30, 3, n_categories=4, seed=16)
    fit = xlcalib.calibrate(p.evaluations, model="rating-scale").fit
    panel = fit.marginal.panel
    for array in (panel.ai, panel.oi, panel.code, fit.categories.code, fit.marginal.layout.c_index,
                  fit.marginal.layout.group, *[pos for _, pos in panel.by_reads]):
        assert array.dtype == np.intp
    data = panel_data(p.evaluations)
    assert data.ai.dtype == np.intp
