"""The calibration models beyond the fixed fit: random assessors (the default), random objects, random both.

Checked against independent computations: the dense mixed-model equations, a brute-force restricted likelihood,
the limits the models must reach (plain averages, the fixed fit), and coverage in simulation with known truth.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

import xlcalib
from xlcalib.calibration import MODEL_WORDS, MODELS, RASCH_MODELS, model_name
from xlcalib.calibration.system.graph import Design
from xlcalib.calibration.models import fixed as fixed_model
from xlcalib.calibration.models import random_assessors
from xlcalib.calibration.panel.simulate import simulate_panel
from xlcalib.errors import InputError


def _panel(seed=0, A=8, O=30, reads=3, bias_sd=0.6, noise=0.5):
    rng = np.random.default_rng(seed)
    v, b = rng.normal(0, 1, O), rng.normal(0, bias_sd, A)
    rows = [(f"a{a}", f"o{o}", v[o] + b[a] + noise * rng.standard_normal(), 1.0)
            for o in range(O) for a in rng.choice(A, reads, replace=False)]
    return pd.DataFrame(rows, columns=["assessor", "object", "score", "sd"]), v, b


def test_default_model_and_names():
    assert xlcalib.calibrate(_panel()[0]).stats["model"] == "random-assessors"
    assert model_name("shrinkage") == "random-objects" and model_name(" Fixed ") == "fixed"
    assert model_name("FACETS") == "rating-scale" and model_name("partial-credit") == "partial-credit"
    with pytest.raises(InputError, match="model must be one of random-assessors, random-both, fixed, random-objects, "
                                         "one-way, rating-scale, partial-credit"):
        model_name("bayes")
    assert set(MODEL_WORDS) == set(MODELS) | set(RASCH_MODELS) and all(MODEL_WORDS.values())


def test_an_assessor_linked_to_nobody_changes_nothing_else_and_keeps_the_prior():
    """No linkage: an assessor who shares no object adds nothing to the likelihood; its bias keeps the prior."""
    ev, *_ = _panel(1)
    lone = pd.DataFrame([("loner", "z", 4.2, 1.0)], columns=ev.columns)
    base, r = xlcalib.calibrate(ev), xlcalib.calibrate(pd.concat([ev, lone], ignore_index=True))
    # the REML estimate is the root of its score equation, found to full precision (not to a search tolerance)
    assert r.stats["sigma_b"] == pytest.approx(base.stats["sigma_b"], rel=1e-11)
    diff = lambda res: res.values["value"].drop(index="z", errors="ignore") - res.values["value"].iloc[0]  # noqa: E731
    np.testing.assert_allclose(diff(r), diff(base), atol=1e-9)  # the others' comparisons are untouched
    # the loner's bias is as uncertain as the prior says: more than any linked assessor's
    assert r.biases.at["loner", "se"] > r.biases.drop(index="loner")["se"].max()
    assert r.stats["n_components"] == 2 and "group" in r.values


def test_strong_linkage_approaches_the_fixed_fit():
    """Every assessor reads every object with little noise: the biases are determined, the prior hardly matters."""
    rng = np.random.default_rng(3)
    A, O = 6, 120
    v, b = rng.normal(0, 1, O), rng.normal(0, 1, A)
    ev = pd.DataFrame([(f"a{a}", f"o{o}", v[o] + b[a] + 0.05 * rng.standard_normal(), 1.0)
                       for o in range(O) for a in range(A)], columns=["assessor", "object", "score", "confidence"])
    ra, fx = xlcalib.calibrate(ev), xlcalib.calibrate(ev, model="fixed")
    np.testing.assert_allclose(ra.values["value"], fx.values["value"], atol=2e-3)
    np.testing.assert_allclose(ra.biases["bias"], fx.biases["bias"], atol=2e-3)


def test_no_difference_in_stringency_gives_weighted_plain_averages():
    """sigma_b estimated at 0: the values are the confidence-weighted averages (in the weighted gauge)."""
    rng = np.random.default_rng(5)
    rows = []
    for o in range(40):
        for a in rng.choice(10, 3, replace=False):
            rows.append((f"a{a}", f"o{o}", float(o % 7), 1.0))  # every reader gives the same score: no bias at all
    ev = pd.DataFrame(rows, columns=["assessor", "object", "score", "sd"])
    r = xlcalib.calibrate(ev)
    assert r.stats["sigma_b"] == pytest.approx(0.0, abs=1e-6)
    raw = ev.groupby("object")["score"].mean()
    np.testing.assert_allclose(r.values["value"], raw.reindex(r.values.index), atol=1e-3)


def _reml_brute_force(ev: pd.DataFrame):
    """sigma_b and w maximising the restricted likelihood computed from the dense marginal covariance."""
    a = pd.factorize(ev["assessor"])[0]
    o = pd.factorize(ev["object"])[0]
    y = ev["score"].to_numpy()
    c = ev["confidence"].to_numpy()
    N, A, O = y.size, a.max() + 1, o.max() + 1
    X = np.zeros((N, O))
    X[np.arange(N), o] = 1
    Z = np.zeros((N, A))
    Z[np.arange(N), a] = 1

    def m2l(params):
        log_w, log_s2 = params
        V = np.exp(log_w) * np.diag(1 / c) + np.exp(log_s2) * Z @ Z.T
        Vi = np.linalg.inv(V)
        XtViX = X.T @ Vi @ X
        beta = np.linalg.solve(XtViX, X.T @ Vi @ y)
        r = y - X @ beta
        return np.linalg.slogdet(V)[1] + np.linalg.slogdet(XtViX)[1] + r @ Vi @ r

    best = minimize(m2l, x0=[0.0, -1.0], method="Nelder-Mead", options={"xatol": 1e-9, "fatol": 1e-12, "maxiter": 4000})
    return float(np.sqrt(np.exp(best.x[1]))), float(np.exp(best.x[0]))


def test_reml_matches_the_dense_restricted_likelihood():
    ev, *_ = _panel(7, A=6, O=15, reads=3, bias_sd=0.8, noise=0.6)
    ev = ev.rename(columns={"sd": "confidence"}).assign(confidence=lambda d: np.where(np.arange(len(d)) % 3, 1.0, 3.0))
    sigma_b, w = _reml_brute_force(ev)
    r = xlcalib.calibrate(ev)
    assert r.stats["sigma_b"] == pytest.approx(sigma_b, rel=1e-3)
    assert r.stats["sigma_b_low"] < sigma_b < r.stats["sigma_b_high"]


def _profile_ends_brute_force(ev: pd.DataFrame, sigma_hat: float, critical: float = 3.841458820694124):
    """The 95% interval of sigma_b by the restricted likelihood ratio, from the dense marginal covariance: w
    profiled out by a search at each sigma, the ends found by bisection where the ratio meets chi2_1(0.95)."""
    a = pd.factorize(ev["assessor"])[0]
    o = pd.factorize(ev["object"])[0]
    y, c = ev["score"].to_numpy(), ev["confidence"].to_numpy()
    N, A, O = y.size, a.max() + 1, o.max() + 1
    X = np.zeros((N, O))
    X[np.arange(N), o] = 1
    ZZ = (a[:, None] == a[None, :]).astype(float)

    def m2l(log_w, sigma):
        V = np.exp(log_w) * np.diag(1 / c) + sigma**2 * ZZ
        Vi = np.linalg.inv(V)
        XtViX = X.T @ Vi @ X
        r = y - X @ np.linalg.solve(XtViX, X.T @ Vi @ y)
        return np.linalg.slogdet(V)[1] + np.linalg.slogdet(XtViX)[1] + r @ Vi @ r

    from scipy.optimize import minimize_scalar

    profile = lambda sigma: minimize_scalar(lambda x: m2l(x, sigma), bounds=(-8, 4), method="bounded",  # noqa: E731
                                            options={"xatol": 1e-9}).fun
    best = profile(sigma_hat)

    def crossing(inside, outside):
        for _ in range(50):
            mid = (inside + outside) / 2
            inside, outside = (mid, outside) if profile(mid) - best <= critical else (inside, mid)
        return (inside + outside) / 2

    low = 0.0 if profile(0.0) - best <= critical else crossing(sigma_hat, 0.0)
    return low, crossing(sigma_hat, 4 * sigma_hat + 1), profile(0.0) - best


@pytest.mark.parametrize("seed, bias_sd, differ", [(7, 0.8, True), (3, 0.15, False)])
def test_sigma_b_interval_is_the_restricted_likelihood_ratio_interval(seed, bias_sd, differ):
    """sigma_b's 95% interval against a brute-force inversion of the dense restricted likelihood ratio; its
    lower end reaches 0 exactly when the test of no difference does not reject (one convention)."""
    ev, *_ = _panel(seed, A=6, O=15, reads=3, bias_sd=bias_sd, noise=0.6)
    ev = ev.rename(columns={"sd": "confidence"}).assign(confidence=lambda d: np.where(np.arange(len(d)) % 3, 1.0, 3.0))
    s = xlcalib.calibrate(ev).stats
    low, high, at_zero = _profile_ends_brute_force(ev, s["sigma_b"])
    # the brute force's nested searches pin the ends to ~1e-6; the model's come from the same likelihood exactly
    assert s["sigma_b_high"] == pytest.approx(high, rel=1e-4)
    assert s["sigma_b_low"] == pytest.approx(low, rel=1e-4, abs=1e-9)
    assert s["sigma_b_low"] <= s["sigma_b"] <= s["sigma_b_high"]
    from scipy.stats import chi2

    # the boundary test: half a chi2_1 tail (Self & Liang); no ratio at all (the estimate at 0) is p = 1
    assert s["sigma_b_p"] == pytest.approx(0.5 * chi2.sf(at_zero, 1) if at_zero > 1e-7 else 1.0, rel=1e-4, abs=1e-12)
    assert (s["sigma_b_low"] > 0) == differ == (s["sigma_b_p"] < 0.05)


def test_covariance_at_one_variance_is_the_inverse_of_the_mixed_model_equations():
    """At a single grid point the moment-matched covariance is w times the inverse MME coefficient matrix."""
    ev, *_ = _panel(11, A=5, O=12, reads=2)
    a = pd.factorize(ev["assessor"])[0].astype(np.intp)
    o = pd.factorize(ev["object"])[0].astype(np.intp)
    c = np.linspace(0.5, 2.0, len(ev))
    design = Design(a, o, c, a.max() + 1, o.max() + 1)
    V, r, S0 = random_assessors._pieces(design, ev["score"].to_numpy())
    mu, U = np.linalg.eigh(design.reduced_laplacian(dense=True))
    spec = random_assessors._RestrictedLikelihood(np.clip(mu, 0, None), U, U.T @ r, S0, len(ev) - design.n_objects, False)
    lam = np.array([0.7])
    theta, H, w_ref, _ = random_assessors._mixture_covariance(spec, lam, spec.noise(lam), np.array([1.0]))
    A_, O_ = design.n_assessors, design.n_objects
    Cm = design.Cm.toarray()
    C = np.block([[np.diag(design.C_o), Cm.T], [Cm, np.diag(design.C_a) + lam[0] * np.eye(A_)]])
    Cinv = np.linalg.inv(C)
    np.testing.assert_allclose(H, Cinv[O_:, O_:], atol=1e-10)
    B = np.bincount(a, weights=c * ev["score"].to_numpy(), minlength=A_)
    sol = np.linalg.solve(C, np.concatenate([V, B]))
    np.testing.assert_allclose(theta, sol[O_:], atol=1e-10)


def test_unconnected_groups_are_calibrated_and_said_so():
    ev, *_ = _panel(2, A=4, O=10, reads=2)
    other = ev.assign(assessor=ev["assessor"] + "x", object=ev["object"] + "x", score=ev["score"] + 1)
    both = pd.concat([ev, other], ignore_index=True)
    r = xlcalib.calibrate(both)
    assert r.stats["n_components"] == 2 and set(r.biases["group"]) == {1, 2}
    text = r.summary()
    assert "2 groups that share no objects" in text and "as strict as the panel" in text and "1 read(s)" in text
    assert len(r.ranking(top_k=5, draws=500)) == 20  # one ranking across the groups
    with pytest.raises(InputError, match="not connected"):
        xlcalib.calibrate(both, model="fixed")


def test_every_object_read_once_is_refused():
    # every reader read one object too: the one-way model would take it, but no object has a second read to
    # measure the noise by
    ev = pd.DataFrame({"assessor": ["a", "b", "c"], "object": ["x", "y", "z"], "score": [1.0, 2.0, 3.0],
                       "level": ["High", "Medium", "Low"]})
    with pytest.raises(InputError, match="every object was read once"):
        xlcalib.calibrate(ev)


@pytest.mark.parametrize("model", ["random-assessors", "random-both"])
def test_interval_coverage_in_simulation(model):
    """Known truth, Gaussian noise, expertise-grouped design: 95% intervals cover about 95% (seeded)."""
    covered, total = 0, 0
    for seed in range(40):
        p = simulate_panel(12, 60, 3, n_subjects=3, whole_points=False, scale=(-1e9, 1e9), n_conflicts=0, seed=seed)
        r = xlcalib.calibrate(p.evaluations.drop(columns="sd"), model=model)
        C = r.biases["total_confidence"]
        target = p.values.reindex(r.values.index) + float((C / C.sum() * p.biases.reindex(C.index)).sum())
        covered += int(((r.values["lower"] <= target) & (target <= r.values["upper"])).sum())
        total += len(target)
    assert 0.93 <= covered / total <= 0.97


def test_rankings_are_drawn_with_the_objects_spread():
    p = simulate_panel(12, 60, 3, n_subjects=3, seed=4)
    r = xlcalib.calibrate(p.evaluations.drop(columns="sd"))
    table = r.ranking(top_k=8, draws=1000)
    assert table.attrs["decision_model"] == "random-both" and r.stats["decision_model"] == "random-both"
    assert table["rank"].is_monotonic_increasing
    fixed = xlcalib.calibrate(p.evaluations.drop(columns="sd"), model="fixed").ranking(top_k=8, draws=1000)
    assert fixed.attrs["decision_model"] == "fixed"


def test_probe_trace_of_the_centred_biases_agrees_with_the_exact_one(monkeypatch):
    """Large panels estimate tr(P H P) by probes; on a panel small enough for both, they agree to a few per cent."""
    from xlcalib.calibration.models import moments

    p = simulate_panel(60, 400, 3, n_subjects=4, cross_reads=0.2, seed=3)
    ev = p.evaluations.drop(columns="level")
    a = pd.factorize(ev["assessor"])[0].astype(np.intp)
    o = pd.factorize(ev["object"])[0].astype(np.intp)
    design = Design(a, o, 1 / ev["sd"].to_numpy() ** 2, a.max() + 1, o.max() + 1)
    fit = fixed_model.fit_component(design, ev["score"].to_numpy(), "simple", True)
    exact = moments._centred_trace(design, fit.covariance)
    monkeypatch.setattr(moments, "PROBE_TRACE_ASSESSORS", 10)
    probed = moments._centred_trace(design, fit.covariance)
    assert probed == pytest.approx(exact, rel=0.05)


def test_iterative_path_of_the_default_model_agrees_with_the_dense_one(monkeypatch):
    """Above the dense limit the default model solves iteratively; values agree, SEs within Monte Carlo error."""
    from xlcalib.calibration.system import graph
    from xlcalib.calibration.models import random_assessors as ra

    p = simulate_panel(30, 200, 3, n_subjects=3, cross_reads=0.1, seed=8)
    ev = p.evaluations.drop(columns="level")
    monkeypatch.setattr(ra, "EIGEN_ASSESSOR_LIMIT", 5)  # the moments path on both sides
    dense = xlcalib.calibrate(ev)
    monkeypatch.setattr(graph, "DENSE_ASSESSOR_LIMIT", 5)
    sparse = xlcalib.calibrate(ev)
    # the iterative side estimates the moments' trace by probes: sigma_b, hence the values, agree to ~1e-4
    assert sparse.stats["sigma_b"] == pytest.approx(dense.stats["sigma_b"], rel=0.03)
    np.testing.assert_allclose(sparse.values["value"], dense.values["value"], atol=2e-3)
    np.testing.assert_allclose(sparse.values["se"], dense.values["se"], rtol=0.15)
    assert sparse.stats["decision_model"] == "random-both" or "decision_model" not in sparse.stats


def test_reml_estimate_is_the_root_of_the_score_equation():
    """A search pins a flat optimum only to ~1e-8 (machines then differ in the 8th digit of sigma_b); the REML
    estimate is polished to the root of d(-2 l)/d log(lam), whose slope also matches the likelihood's."""
    from xlcalib.calibration.system.graph import Design
    from xlcalib.calibration.models import random_assessors as ra

    ev, *_ = _panel(11, A=9, O=40, reads=3, bias_sd=0.6, noise=0.5)
    a, o = pd.factorize(ev["assessor"])[0], pd.factorize(ev["object"])[0]
    design = Design(a, o, 1 / ev["sd"].to_numpy() ** 2, a.max() + 1, o.max() + 1)
    _V, r, S0 = ra._pieces(design, ev["score"].to_numpy())
    mu, U = np.linalg.eigh(design.reduced_laplacian(dense=True))
    spec = ra._RestrictedLikelihood(np.clip(mu, 0.0, None), U, U.T @ r, S0, len(ev) - design.n_objects, False)
    x, h = 0.3, 1e-5
    numeric = (spec.minus_two_loglik(np.exp(x + h))[0] - spec.minus_two_loglik(np.exp(x - h))[0]) / (2 * h)
    assert spec.slope(x) == pytest.approx(numeric, rel=1e-6)
    lam, _ = ra._reml_mode(spec, float(np.median(design.c)))
    scale = spec.n_free + design.n_assessors  # the size of the slope's terms
    assert abs(spec.slope(np.log(lam))) < 1e-11 * scale


def test_sigma_b_interval_profiles_the_noise_scale_through_its_slope():
    """The interval of sigma_b profiles w out at each sigma tried; the root of d(-2 l)/d log w finds the same
    profile as a bounded search of -2 l (to rounding: the interval's ends agree to 1e-10), with fewer
    evaluations.  The slope is the likelihood's own (checked by differences), also where the residual is held
    at 0."""
    from xlcalib.calibration.models import random_assessors as ra
    from xlcalib.calibration.models.variance import sigma_b_figures

    for seed, bias_sd in ((11, 0.6), (3, 0.05), (7, 1.5), (5, 0.0)):
        ev, *_ = _panel(seed, A=9, O=40, reads=3, bias_sd=bias_sd, noise=0.5)
        a, o = pd.factorize(ev["assessor"])[0], pd.factorize(ev["object"])[0]
        design = Design(a, o, np.linspace(0.5, 2.0, len(ev)), a.max() + 1, o.max() + 1)  # levels: w estimated
        _V, r, S0 = ra._pieces(design, ev["score"].to_numpy())
        mu, U = np.linalg.eigh(design.reduced_laplacian(dense=True))
        spec = ra._RestrictedLikelihood(np.clip(mu, 0.0, None), U, U.T @ r, S0, len(ev) - design.n_objects, False)
        for x, sigma in ((0.3, 0.5), (-1.0, 2.0), (2.0, 0.1)):
            h = 1e-5
            numeric = (spec.at(np.exp(x + h), sigma) - spec.at(np.exp(x - h), sigma)) / (2 * h)
            assert spec.w_slope(x, sigma) == pytest.approx(numeric, rel=1e-6, abs=1e-6)
        c_typical = float(np.median(design.c))
        lam, _ = ra._reml_mode(spec, c_typical)
        w_hat = float(spec.noise(lam)[0])
        sigma_hat = float(np.sqrt(w_hat / lam)) if np.isfinite(lam) else 0.0
        args = (spec.at, sigma_hat, w_hat, False, float(np.sqrt(w_hat / c_typical)), "m")
        searched, rooted = sigma_b_figures(*args), sigma_b_figures(*args, w_slope=spec.w_slope)
        for key in ("sigma_b_low", "sigma_b_high", "sigma_b_p"):
            assert rooted[key] == pytest.approx(searched[key], rel=1e-10, abs=1e-12), (seed, key)
        for lam_at in np.exp(np.linspace(-15.0, 15.0, 31)):  # the REML search's one-lam form: the same number
            assert spec.minus_two_loglik_at(float(lam_at)) == spec.minus_two_loglik(lam_at)[0]
    held = ra._RestrictedLikelihood(np.array([0.0, 1.0]), None, np.array([3.0, 1.0]), 1.0, 10, False)
    assert held.residual_at(0.5) == 0.0  # rounding would have it negative: held at 0, and so is its slope
    assert held.w_slope(np.log(0.5), 1.0) == pytest.approx(10 - 1 / 1.5)


def test_random_both_likelihood_at_one_kappa_is_the_arrays_number():
    """The REML search evaluates the random-both likelihood one kappa at a time without arrays of kappa: the same
    sums in the same order, so bitwise the same numbers as the array form (the searches, and so the fit, do not
    move), over kappas from 1e-8 to 1e8, with levels and with SDs at face value."""
    from xlcalib.calibration.models import random_both as rb

    ev, *_ = _panel(4, A=12, O=50, reads=3, bias_sd=0.5, noise=0.6)
    a, o = pd.factorize(ev["assessor"])[0], pd.factorize(ev["object"])[0]
    design = Design(a, o, np.linspace(0.5, 3.0, len(ev)), a.max() + 1, o.max() + 1)
    n_free = len(ev) - design.n_objects
    for lam in (0.3, 2.0, 40.0):
        basis = rb._basis(design, ev["score"].to_numpy(), lam)
        for kappa in np.exp(np.linspace(np.log(1e-8), np.log(1e8), 41)):
            quad, logdet = basis.pieces(kappa)
            assert basis.pieces_at(float(kappa)) == (quad[0], logdet[0])
            for face_value in (False, True):
                assert basis.minus_two_loglik_at(float(kappa), n_free, face_value) == \
                    basis.minus_two_loglik(kappa, n_free, face_value)[0]
        assert basis.minus_two_loglik_at(np.inf, n_free, False) == basis.minus_two_loglik(np.inf, n_free, False)[0]


def test_every_model_answers_the_whole_interface():
    """calibrate() asks a model only what the interface names: every registered model answers all of it."""
    from typing import get_type_hints

    from xlcalib.calibration.models.base import CalibrationModel

    members = set(get_type_hints(CalibrationModel)) | {"fit_component", "noise_scales", "extra_stats", "noise_check"}
    for name, module in MODELS.items():
        assert isinstance(module, CalibrationModel), name
        missing = [m for m in members if not hasattr(module, m)]
        assert not missing, (name, missing)
        assert module.NAME == name and (module.DECISIONS_BY is None or module.DECISIONS_BY in MODELS)
        assert isinstance(module.CENSORED_READS, bool) and isinstance(module.LINKS_GROUPS, bool)


def test_objects_read_alike_share_their_rank():
    """Objects read by the same assessors with the same scores, each object's reads at one confidence, have one
    value in exact arithmetic under the models whose objects are fixed effects (an object's value is then its
    reads' mean less their biases, whatever the confidence they share): whatever the rounding of the solves
    (it differs between BLAS kernels), they share a rank.  On this whole-point panel two such objects, one read
    at High and one at Medium, were ranked 57 and 58 by the last bits of their values before ties were read
    with a tolerance."""
    from xlcalib.calibration.panel.simulate import simulate_panel

    ev = simulate_panel(12, 60, 3, seed=2, gain_sd=0.3).evaluations.drop(columns="sd")
    one_level = ev.groupby("object")["level"].nunique() == 1
    reads = ev.sort_values(["object", "assessor"]).groupby("object").apply(
        lambda g: str(list(zip(g["assessor"], g["score"]))), include_groups=False)[one_level]
    alike = [list(group.index) for _, group in reads.groupby(reads) if len(group) > 1]
    assert ["P055", "P059"] in alike
    for model in ("fixed", "random-assessors"):
        table = xlcalib.calibrate(ev, model=model).ranking(draws=200)
        for names in alike:
            assert table.loc[names, "rank"].nunique() == 1, (model, names)
            assert table.loc[names, "raw_rank"].nunique() == 1, (model, names)


def test_the_decision_basis_finds_its_sigma_b_figures_only_when_read():
    """The random-both fit's sigma_b interval (a profile-likelihood search) is found when one of its figures is
    first read -- the decision basis never reads them -- and is then the interval the eager search gives."""
    from xlcalib.calibration.models import random_both
    from xlcalib.calibration.models.variance import LazyFigures
    from xlcalib.calibration.panel.data import panel_data
    from xlcalib.calibration.panel.simulate import simulate_panel
    from xlcalib.calibration.system.graph import Design

    data = panel_data(simulate_panel(16, 80, 3, seed=5, n_conflicts=0).evaluations.drop(columns="sd"))
    design = Design(data.ai, data.oi, data.confidences, data.n_assessors, data.n_objects)
    fit = random_both.fit_component(design, data.scores - data.scores.mean(), "weighted", False)
    assert isinstance(fit.extras, LazyFigures) and "sigma_b_low" not in fit.extras  # not searched yet
    low = fit.extras["sigma_b_low"]
    assert "sigma_b_high" in fit.extras and fit.extras["sigma_b"] > 0
    result = xlcalib.calibrate(simulate_panel(16, 80, 3, seed=5, n_conflicts=0).evaluations.drop(columns="sd"),
                               model="random-both")
    # the same panel through calibrate, whose scores are centred on their weighted mean, not the plain one: the
    # likelihood is shift-invariant, so the interval agrees to rounding
    assert result.stats["sigma_b_low"] == pytest.approx(low, rel=1e-9)
    with pytest.raises(KeyError):
        fit.extras["no such figure"]
