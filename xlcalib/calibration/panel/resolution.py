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

__all__ = ["GRID_STEPS", "score_step", "rounding_variance", "effective_confidences"]

#: Grid steps recognised, coarsest first: whole, half, quarter and tenth points.
GRID_STEPS = (1.0, 0.5, 0.25, 0.1)


def score_step(scores: np.ndarray) -> float | None:
    """The coarsest grid step in :data:`GRID_STEPS` every score is a multiple of (None: scores off every grid).

    >>> score_step(np.array([1.0, 4.0, 6.0])), score_step(np.array([2.5, 3.0])), score_step(np.array([3.14]))
    (1.0, 0.5, None)
    """
    scores = np.asarray(scores, dtype=float)
    for step in GRID_STEPS:
        ratio = scores / step
        if np.all(np.abs(ratio - np.round(ratio)) <= 1e-9 * np.maximum(1.0, np.abs(ratio))):
            return step
    return None


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

