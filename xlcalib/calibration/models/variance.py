"""The assessors' variance: carried, not plugged in, for the values; stated one way for the reader.

Two jobs, for the random-assessors and random-both models alike (why one module: both must say the same thing
about sigma_b in the same words, from one formula):

* **the values' uncertainty** integrates over sigma_b: a grid over ``rho = sigma_b^2 / (sigma_b^2 + w / c~)``
  (the share of a typical read's variance that is the assessor's bias) with a uniform prior, each point
  weighted by the restricted likelihood (:func:`share_grid`, :func:`grid_weights`);
* **the figures reported for sigma_b** follow one frequentist convention (:func:`sigma_b_figures`): the REML
  estimate, the test of ``sigma_b = 0`` and a 95% interval made by inverting the same restricted likelihood
  ratio, so that the three cannot contradict each other -- the estimate lies inside the interval (the ratio is
  0 there), and the interval reaches 0 exactly when the test does not reject at 5%.

The test of ``sigma_b = 0`` sits on the boundary of the parameter space, so the restricted-likelihood-ratio
statistic is a 50:50 mixture of chi-square on 0 and 1 degrees of freedom (Self & Liang 1987, JASA 82:605):
p = P(chi2_1 > LR) / 2, rejecting at 5% when LR > 2.71.  An interior value sigma > 0 is kept in the interval
when its profile ratio LR(sigma) = -2 log L(sigma) + 2 log L(sigma_hat) is at most chi2_1(0.95) = 3.84 (w
profiled out at each sigma; the restricted likelihood of Patterson & Thompson 1971).  So the interval is the
set of values no level-5% test rejects: [0, b] when the test of 0 does not reject, (0, b] -- above 0, as small
as you like -- when it rejects with LR(0) <= 3.84, [a, b] with a > 0 beyond that.  Why not the posterior
quantiles of the grid (what the Summary used to print): a uniform prior on rho puts almost no mass near
sigma_b = 0, so its interval excluded 0 beside a test that did not reject 0, around a REML point that could
lie below the interval's lower end.
"""
from __future__ import annotations

import numpy as np
from scipy.special import chdtrc, chdtri

from ...errors import InputError
from ..system.graph import Design

__all__ = ["RHO_GRID", "MIN_WEIGHT", "SIGMA_LEVEL", "LazyFigures", "share_grid", "grid_weights", "boundary_p",
           "sigma_b_figures", "spare_reads", "search_ratio"]

#: Grid points over rho in (0, 1) (midpoints): enough for a smooth posterior of one variance ratio.
RHO_GRID = 48
#: Grid weights below this share are dropped (they change no reported digit).
MIN_WEIGHT = 1e-8


def share_grid(c_typical: float) -> np.ndarray:
    """``w / sigma_b^2`` at the midpoints of the rho grid: ``c~ (1 - rho) / rho`` for a typical confidence c~."""
    rho = (np.arange(RHO_GRID) + 0.5) / RHO_GRID
    return c_typical * (1.0 - rho) / rho


def grid_weights(m2l: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(kept points, their posterior weights) from -2 log restricted likelihood at each grid point: weights
    ``exp(-l/2)`` normalised, points below :data:`MIN_WEIGHT` of the whole dropped and the rest renormalised."""
    weight = np.exp(-0.5 * (m2l - m2l.min()))
    keep = weight / weight.sum() >= MIN_WEIGHT
    return keep, weight[keep] / weight[keep].sum()


#: A likelihood-ratio statistic below this is 0: the estimate is at the boundary, and what is left is rounding
#: (searches pin -2 log L to ~1e-12; the mixture's p jumps from 1 at 0 to 1/2 just above it, so rounding alone
#: must not decide which -- it did, between CPython and Pyodide).
ZERO_RATIO = 1e-8


def boundary_p(m2l_at_zero: float, m2l_best: float) -> float:
    """p-value of sigma_b = 0 against sigma_b > 0 from -2 log restricted likelihood at 0 and at its optimum:
    P(LR >= stat) under the 50:50 mixture of chi2_0 and chi2_1, i.e. 1 at stat = 0, P(chi2_1 > stat) / 2 above."""
    stat = float(m2l_at_zero) - float(m2l_best)
    return float(0.5 * chdtrc(1, stat)) if stat > ZERO_RATIO else 1.0


#: The level of sigma_b's interval, and of its test (1 - this): fixed, as the verdict's words are.
SIGMA_LEVEL = 0.95
#: Doublings of the search for the interval's upper end before it is reported as unbounded.
MAX_DOUBLINGS = 60


def _profile(m2l, w_hat: float, face_value: bool, w_slope=None):
    """sigma -> -2 log restricted likelihood at sigma_b = sigma with the noise scale w at its best (w = 1 for SDs
    taken at face value).  *m2l(w, sigma)* is the model's -2 log restricted likelihood (up to a constant).

    *w_slope(x, sigma)*, where the model gives it, is d m2l(e^x, sigma) / dx: the best w is then the root of the
    slope (Brent's root finder, about ten evaluations) instead of a bounded search of m2l (about twenty-five, each
    a round of scipy's Python loop) -- the interval of sigma_b profiles w a dozen times, so on a spreadsheet-sized
    panel the search was a third of a recalculation of CALIB_VALUES.  Both find the same minimum: m2l is flat
    there, so the profile agrees to rounding.  Where the slope does not change sign within the bounds (or
    sigma = 0, where w has a closed form but the slope's terms do not), the bounded search is kept.
    """
    from scipy.optimize import brentq, minimize_scalar

    if face_value:
        return lambda sigma: float(m2l(1.0, sigma))
    centre = float(np.log(w_hat))
    lo, hi = centre - 12.0, centre + 12.0

    def profile(sigma: float) -> float:
        if w_slope is not None and sigma > 0:
            slope = lambda x: w_slope(x, sigma)  # noqa: E731
            if slope(lo) < 0.0 < slope(hi):
                x = brentq(slope, lo, hi, xtol=1e-12, rtol=4 * np.finfo(float).eps)
                return float(m2l(float(np.exp(x)), sigma))
        best = minimize_scalar(lambda x: float(m2l(np.exp(x), sigma)), bounds=(lo, hi), method="bounded",
                               options={"xatol": 1e-10})
        return float(best.fun)

    return profile


def _crossing(ratio, inside: float, outside: float, critical: float) -> float:
    """The sigma between *inside* (ratio below critical) and *outside* (above it) where the ratio meets it."""
    from scipy.optimize import brentq

    low, high = min(inside, outside), max(inside, outside)
    return float(brentq(lambda x: ratio(x) - critical, low, high, xtol=1e-12 * high, rtol=1e-12))


class LazyFigures(dict):
    """A fit's extras whose sigma_b figures (:func:`sigma_b_figures`: a profile-likelihood search) are found when
    one of them is first read.  Why: the decision basis is a fit too, and nothing reads its figures -- on a
    spreadsheet-sized panel the search cost a recalculation of CALIB_RANKING about 30 ms."""

    def __init__(self, make, known: dict):
        super().__init__(known)
        self._make = make

    def __missing__(self, key):
        if self._make is not None:
            make, self._make = self._make, None
            self.update(make())
            if key in self:
                return self[key]
        raise KeyError(key)


def sigma_b_figures(m2l, sigma_hat: float, w_hat: float, face_value: bool, read_sd: float, method: str,
                    w_slope=None) -> dict:
    """sigma_b, its 95% interval and the test of sigma_b = 0, from one restricted likelihood (the Diagnostics'
    figures ``sigma_b``, ``sigma_b_low``, ``sigma_b_high``, ``sigma_b_p``, ``sigma_b_method``).

    ``m2l(w, sigma)``: the model's -2 log restricted likelihood at noise scale w and bias SD sigma (0 allowed);
    ``sigma_hat``/``w_hat``: the REML estimate; ``read_sd``: a typical read's SD (where the search starts);
    ``w_slope(x, sigma)``: optional, d m2l(e^x, sigma)/dx (see :func:`_profile`).
    The interval is the set of sigma that no level-5% test rejects (see the module docstring): its lower end
    is 0 when the boundary test's p >= 5% and above 0 when p < 5%, so the words "do not measurably differ"
    (p >= 5%) and an interval reaching 0 always go together; ``sigma_b_low`` = 0 with p < 5% is the open end
    "above 0".
    """
    profile = _profile(m2l, w_hat, face_value, w_slope)
    best = float(m2l(1.0 if face_value else w_hat, sigma_hat))
    ratio = lambda sigma: profile(sigma) - best  # noqa: E731  - the restricted likelihood ratio at sigma
    at_zero = 0.0 if sigma_hat == 0 else max(ratio(0.0), 0.0)  # at the estimate the ratio is 0 by definition
    critical = float(chdtri(1, 1.0 - SIGMA_LEVEL))  # chi2_1's upper 5% point, 3.84
    inside, outside = sigma_hat, 2.0 * max(sigma_hat, read_sd)
    for _ in range(MAX_DOUBLINGS):
        if ratio(outside) > critical:
            high = _crossing(ratio, inside, outside, critical)
            break
        inside, outside = outside, 2.0 * outside
    else:
        high = np.inf
    low = 0.0 if at_zero <= critical else _crossing(ratio, sigma_hat, 0.0, critical)
    return {"sigma_b": float(sigma_hat), "sigma_b_low": low, "sigma_b_high": float(high),
            "sigma_b_p": boundary_p(best + at_zero, best), "sigma_b_method": method}


def search_ratio(objective, reference: float, span: tuple[float, float], xatol: float) -> tuple[float, float, bool]:
    """(argmin, min, at the upper end) of ``objective(p)`` over ``p = reference * e^x``, x between the logs of
    *span*: a bounded scalar search in the unit-free coordinate x.

    Why unit-free: a variance ratio such as ``w / tau^2`` scales with the square of the scores' unit, and a
    search over ``log p`` itself would try other points (its tolerances are relative to |log p|) for the same
    panel in other units -- the fitted values then moved in the 4th digit when the scores were rescaled.
    *reference* (a typical confidence) carries the unit, x does not.
    """
    from scipy.optimize import minimize_scalar

    lo, hi = np.log(span[0]), np.log(span[1])
    best = minimize_scalar(lambda x: objective(reference * float(np.exp(x))), bounds=(lo, hi), method="bounded",
                           options={"xatol": xatol})
    return reference * float(np.exp(best.x)), float(best.fun), bool(best.x > hi - 1e-3)


def spare_reads(design: Design, face_value: bool) -> int:
    """N - O, the reads beyond one per object from which stringency and noise are told apart (refused at 0 when
    the noise is to be estimated)."""
    n_free = design.c.size - design.n_objects
    if not face_value and n_free <= 0:
        raise InputError("every object was read once, so the reads cannot be compared: neither the assessors' "
                         "stringency nor the noise of a read can be estimated from these scores. Give SDs in score "
                         "units (taken at face value), or add second reads")
    return n_free
