"""The assessors' variance carried, not plugged in: the grid over its share of a read's variance, the weights a
restricted likelihood gives the grid, sigma_b's interval from them, and the test of sigma_b = 0.

Why one module: the random-assessors and random-both models integrate over sigma_b the same way (a uniform
prior on ``rho = sigma_b^2 / (sigma_b^2 + w / c~)``, the share of a typical read's variance that is the
assessor's bias), and must say the same thing about it in the same words.

The test of ``sigma_b = 0`` sits on the boundary of the parameter space, so the likelihood-ratio statistic is
a 50:50 mixture of chi-square on 0 and 1 degrees of freedom (Self & Liang 1987, JASA 82:605).
"""
from __future__ import annotations

import numpy as np
from scipy.special import chdtrc

from ...errors import InputError
from ..system.graph import Design

__all__ = ["RHO_GRID", "MIN_WEIGHT", "share_grid", "grid_weights", "boundary_p", "weighted_quantiles",
           "spare_reads", "search_ratio"]

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


def boundary_p(m2l_at_zero: float, m2l_best: float) -> float:
    """p-value of sigma_b = 0 against sigma_b > 0 from -2 log restricted likelihood at 0 and at its optimum."""
    stat = max(float(m2l_at_zero) - float(m2l_best), 0.0)
    return float(0.5 * chdtrc(1, stat)) if stat > 0 else 1.0


def weighted_quantiles(x: np.ndarray, weight: np.ndarray, qs) -> list[float]:
    """The points of *x* at which the cumulative *weight* (in the order of x) first reaches each q.

    >>> weighted_quantiles(np.array([3.0, 1.0, 2.0]), np.array([0.2, 0.5, 0.3]), (0.025, 0.5, 0.975))
    [1.0, 1.0, 3.0]
    """
    order = np.argsort(x)
    cum = np.cumsum(weight[order])
    return [float(x[order][min(np.searchsorted(cum, q), x.size - 1)]) for q in qs]


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
