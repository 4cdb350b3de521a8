"""Whole-point scores: the variance the scale's resolution adds to every read (Sheppard's correction).

An assessor who scores on a scale of whole points records their judgement
rounded to the nearest point.  The rounding error is close to uniform on
(-h/2, h/2) for a grid of step h, so it adds ``h^2 / 12`` to the variance of
every read -- whatever the assessor's confidence (Sheppard 1898, "On the
calculation of the most probable values of frequency-constants", Proc. London
Math. Soc. 29:353; the error is nearly independent of the judgement once the
judgement's own SD exceeds about half a step, Kendall & Stuart, *The Advanced
Theory of Statistics* vol. 1, sec. 3.18-3.20).  A read's variance is then

    Var(s_ao) = w / c_ao + h^2 / 12,

not ``w / c_ao``: confidence levels (or declared SDs) describe the
judgement, the grid adds the same amount to all of them.  Ignoring it
overweights the most confident reads -- on a 1-6 scale a High read (SD 0.4)
carries about 0.24 of variance, not 0.16 -- and makes the posterior of an
object read mostly by confident assessors too narrow, which the statements about
the tails of many objects at once (the joint statements of a ranking) feel
first.  The model is fitted with the effective confidences

    c'_ao = 1 / (1 / c_ao + (h^2 / 12) / w),

so that ``w / c'_ao`` is the read's variance; when w is estimated it depends
on c', and :func:`effective_confidences` is applied at the fixed point.
"""
from __future__ import annotations

import numpy as np

__all__ = ["MAX_GRID_STEPS", "score_step", "rounding_variance", "effective_confidences"]

#: A grid has at most this many steps between its lowest and highest score (finer: the scores are read as
#: continuous), and its step is the smallest gap between distinct scores divided by at most :data:`DIVISORS`.
MAX_GRID_STEPS = 100_000
DIVISORS = 12
#: A gap lies on the grid when it is within this share of a step of a whole number of steps.
ON_GRID = 1e-6


def score_step(scores: np.ndarray) -> float | None:
    """The step of the grid the scores lie on (None: off every grid), found from the scores themselves.

    The step is the largest h that divides every gap between distinct scores -- the smallest gap divided by 1,
    2, ... -- so it does not depend on the unit of the scores: whole points 1-6 have step 1, the same scores as
    percentages (0, 20, ... 100) step 20, half points 0.5, a form of 1/3/6/8 the common divisor 1.  Scores
    with no such step (more than :data:`MAX_GRID_STEPS` steps, or gaps that share none) are continuous.  Fewer
    than three distinct scores say nothing about a step (any two numbers have one): the usual decimal grids
    (:data:`DECIMAL_STEPS`) are recognised then.

    >>> score_step(np.array([1.0, 4.0, 6.0])), score_step(np.array([2.5, 3.0])), score_step(np.array([3.14]))
    (1.0, 0.5, None)
    >>> score_step(np.array([1.0, 4.0, 6.0]) * 0.244 - 23886) == 0.244 * score_step(np.array([1.0, 4.0, 6.0]))
    True
    """
    values = np.unique(np.asarray(scores, dtype=float))
    if values.size < 3:  # two numbers always share a "step" (their gap): only the usual grids are recognised
        return _decimal_step(values)
    gaps = np.diff(values)
    span = float(values[-1] - values[0])
    smallest = float(gaps.min())
    for m in range(1, DIVISORS + 1):
        step = smallest / m
        if span / step > MAX_GRID_STEPS:
            return None
        ratio = gaps / step
        if np.all(np.abs(ratio - np.round(ratio)) <= ON_GRID * np.maximum(1.0, ratio)):
            return _rounded_step(step, span)
    return None


#: Grid steps recognised when the scores take fewer than three values: whole, half, quarter and tenth points.
DECIMAL_STEPS = (1.0, 0.5, 0.25, 0.1)


def _decimal_step(values: np.ndarray) -> float | None:
    """The coarsest of :data:`DECIMAL_STEPS` every value is a multiple of (None: none is)."""
    for step in DECIMAL_STEPS:
        ratio = values / step
        if np.all(np.abs(ratio - np.round(ratio)) <= 1e-9 * np.maximum(1.0, np.abs(ratio))):
            return step
    return None


def _rounded_step(step: float, span: float) -> float:
    """The step as the user typed it: the nearest number with few significant digits when within rounding."""
    for digits in range(1, 16):
        typed = float(f"{step:.{digits}g}")
        if abs(typed - step) <= 1e-9 * max(abs(step), 1e-300) + 1e-12 * span / MAX_GRID_STEPS:
            return typed
    return step


def rounding_variance(scores: np.ndarray, points=()) -> float:
    """``h^2 / 12`` for scores on a grid of step h (Sheppard's correction), 0 for scores off every grid.

    On a form's own *points* (uneven steps: 1, 3, 6, 8) a score stands for the judgements nearer to it than to the
    other points, a cell as wide as half the gaps on either side: the mean over the reads of their cells'
    ``width^2 / 12`` (an end point's cell taken as wide as twice its inner half -- its reads are censored anyway).

    >>> round(rounding_variance(np.array([1.0, 3.0, 6.0, 8.0]), (1, 3, 6, 8)), 4)  # cells 2, 2.5, 2.5, 2
    0.4271
    """
    if len(points) > 2:
        p = np.asarray(points, dtype=float)
        half = np.diff(p) / 2.0
        width = np.concatenate([[2 * half[0]], half[:-1] + half[1:], [2 * half[-1]]])
        which = np.argmin(np.abs(np.asarray(scores, dtype=float)[:, None] - p[None, :]), axis=1)
        return float(np.mean(width[which] ** 2) / 12.0)
    step = score_step(scores)
    return 0.0 if step is None else step * step / 12.0


def effective_confidences(c: np.ndarray, w: float, rounding: float) -> np.ndarray:
    """``c' = 1 / (1/c + rounding/w)``: the confidences whose ``w / c'`` is a read's variance with the rounding."""
    c = np.asarray(c, dtype=float)
    return c if rounding <= 0 else c / (1.0 + c * (rounding / w))

