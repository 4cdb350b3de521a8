"""The ordinal model against an independent implementation: girth (pip ``girth``, Sanchez's IRT package), on the
two-facet case -- objects crossed with assessors, the assessors as girth's "items".

What can agree, and to what tolerance:

* The *marginal likelihood* and the *EAPs* at given parameters are the same integrals in both packages: girth's
  own partial-credit integrand (``_credit_partial_integral``) on a 301-point grid over +-8 SDs, evaluated at our
  estimates, gives our log-likelihood to 1e-6 relative and our EAPs to 1e-5 logits (the two quadratures' own
  errors).
* Our estimate is the *maximum* of that likelihood as girth computes it: its gradient there is within 1% of a
  standard error of zero in every direction (our Newton stopping rule is 1e-7 logits).
* girth's own estimates (``pcm_mml``) are of a *generalised* partial credit model: a discrimination per item
  (assessor), bounded 0.25-4, with theta ~ N(0, 1), where the Rasch model has one scale (sigma) for all.  On data
  from the Rasch model both are consistent, and their step difficulties differ by about (a_i - sigma) times the
  step's distance from the mean -- a few hundredths of a logit; they must agree within 2.5 of our standard errors,
  and the objects' EAPs correlate above 0.998.

girth is a test-only oracle (the ``test`` extra); without it these tests are skipped.
"""
from __future__ import annotations

import numpy as np
import pytest

girth = pytest.importorskip("girth", reason="girth (the test-only IRT oracle, pip install girth) is not installed")

from girth.unidimensional.polytomous.ability_estimation_poly import _ability_eap_abstract  # noqa: E402
from girth.unidimensional.polytomous.partial_integrals_poly import _credit_partial_integral  # noqa: E402
from girth.utilities.utils import _get_quadrature_points  # noqa: E402
from scipy.stats import norm  # noqa: E402

import xlcalib  # noqa: E402
from xlcalib.calibration.rasch.estimate import SEVERITY_PRIOR_SD  # noqa: E402
from xlcalib.calibration.rasch.simulate import simulate_crossed_panel  # noqa: E402

A, O = 5, 1500


def _crossed(seed: int = 11, shared: bool = False):
    """Every object read by every assessor (girth's complete item x person grid); assessors named I0..I4."""
    ev, grid = simulate_crossed_panel(seed, O, shared)
    return ev.assign(level="Medium"), grid


def _steps(result) -> np.ndarray:
    """Each assessor's step difficulties delta_ak = beta_a + tau_ak (logits), rows in item order I0..I4."""
    fit = result.fit
    tau = fit.thresholds if fit.thresholds.shape[0] > 1 else np.tile(fit.thresholds, (A, 1))
    steps = fit.severity[:, None] + tau
    return steps[[result.severities.index.get_loc(f"I{i}") for i in range(A)]]


def _girth_likelihood(grid: np.ndarray, steps: np.ndarray, mu: float, sigma: float):
    """girth's marginal log-likelihood and EAPs (logits) of the Rasch model with these parameters: theta = mu +
    sigma z, z ~ N(0, 1) on girth's grid; each item's girth difficulties (delta - mu) / sigma at discrimination
    sigma."""
    z, w = _get_quadrature_points(301, -8.0, 8.0)
    weights = norm(0, 1).pdf(z) * w
    part = np.ones((grid.shape[1], z.size))
    for i in range(grid.shape[0]):
        b = np.concatenate([[0.0], (steps[i] - mu) / sigma])
        part *= _credit_partial_integral(z, b, sigma, grid[i], np.zeros(grid.shape[1], dtype=bool))
    loglik = float(np.log((part * weights).sum(axis=1)).sum())
    return loglik, mu + sigma * _ability_eap_abstract(part, weights, z)


@pytest.mark.parametrize("model", ["partial-credit", "rating-scale"])
def test_girth_computes_our_likelihood_and_eaps_at_our_estimates(model):
    ev, grid = _crossed(shared=model == "rating-scale")
    r = xlcalib.calibrate(ev, model=model, gauge="simple")
    fit = r.fit
    ours = fit.marginal.state.loglik + fit.severity @ fit.severity / (2 * SEVERITY_PRIOR_SD**2)  # without the prior
    theirs, eap = _girth_likelihood(grid, _steps(r), fit.mu, fit.sigma)
    assert theirs == pytest.approx(ours, rel=1e-6)
    mine = r.values.loc[[f"O{o:04d}" for o in range(O)], "measure"].to_numpy()
    assert np.abs(eap - mine).max() < 1e-5


def test_our_estimate_is_the_maximum_of_girths_likelihood():
    """Central differences of girth's log-likelihood in each step difficulty, mu and sigma at our estimate: each
    gradient entry over the square root of the curvature (the parameter's information) is below 0.01 -- the
    maximum lies within 1% of a standard error of ours."""
    ev, grid = _crossed()
    r = xlcalib.calibrate(ev, model="partial-credit", gauge="simple")
    steps, mu, sigma = _steps(r), r.fit.mu, r.fit.sigma
    h = 1e-4

    def at(s=steps, m=mu, g=sigma):
        return _girth_likelihood(grid, s, m, g)[0]

    centre = at()
    directions = [(i, k) for i in range(A) for k in range(3)] + ["mu", "sigma"]
    for d in directions:
        if d == "mu":
            up, down = at(m=mu + h), at(m=mu - h)
        elif d == "sigma":
            up, down = at(g=sigma + h), at(g=sigma - h)
        else:
            e = np.zeros_like(steps)
            e[d] = h
            up, down = at(s=steps + e), at(s=steps - e)
        gradient = (up - down) / (2 * h)
        curvature = -(up - 2 * centre + down) / h**2
        assert curvature > 0 and abs(gradient) / np.sqrt(curvature) < 0.01, d


def test_girths_generalised_estimates_agree_within_the_models_difference():
    ev, grid = _crossed()
    r = xlcalib.calibrate(ev, model="partial-credit", gauge="simple")
    fit = r.fit
    g = girth.pcm_mml(grid, {"distribution": norm(0, 1).pdf})
    theirs = fit.mu + g["Discrimination"][:, None] * g["Difficulty"]  # theta = mu + sigma z, a_i standing for sigma
    se = (np.sqrt(fit.severity_se[:, None] ** 2 + fit.threshold_se ** 2))[
        [r.severities.index.get_loc(f"I{i}") for i in range(A)]]
    assert np.abs(theirs - _steps(r)).max() < 0.15
    assert (np.abs(theirs - _steps(r)) < 2.5 * se).all()
    assert np.corrcoef(g["Ability"], r.values.loc[[f"O{o:04d}" for o in range(O)], "measure"])[0, 1] > 0.998
