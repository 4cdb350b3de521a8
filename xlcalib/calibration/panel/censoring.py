"""Scores at the ends of the scale: a 6 on a 1-6 scale says "6 or more", not "exactly 6".

An assessor whose judgement of a proposal is beyond the top of the scale can
only give the top score, so the scores at the ends are *censored*: the read
says that the judgement lies above ``high - h/2`` (below ``low + h/2``), where
``h`` is the scale's grid step (0 for scores off every grid).  Fitting them as
if they were exact pulls the objects at the ends towards the middle and --
what the decisions feel -- makes the reads look less noisy than they are: the
clipped reads scatter less about the fit, so the estimated noise scale w comes
out about 5% too small on a 1-6 panel with a tenth of its reads at the ends,
and every probability drawn from the posterior is a little too sure.

The fit that decisions are drawn from (:func:`xlcalib.calibration.fit.calibrate`,
the decision basis, when the scale is declared) takes them as censored by EM
(Dempster, Laird & Rubin 1977; for censored regression, Amemiya 1984, "Tobit
models: a survey", J. Econometrics 24:3).  The complete data are the scores as
they would have been on a scale without ends; given the current fit, a read at
the top is replaced by the mean of that score given that it is the top or
beyond, and the variance it keeps is added to the residual sum of squares the
variances are estimated from (each read's share ``c'(1 - c'/(C'_o + lam))`` of
it, the part its object's own mean does not absorb); the model is refitted
until w settles.  On a grid (whole points) the score beyond the end takes the
grid's points ``top, top + h, ...`` with the probabilities the judgement
``N(fitted, w/c)`` gives their cells -- the scores' own metric, in which the
rest of the fit reads a whole-point score as its point with the rounding's
``h^2/12`` in its variance (:mod:`.resolution`).  Off every grid it is the
truncated normal: with ``alpha = (t - mu)/sd`` and ``m = phi(alpha) / (1 - Phi(alpha))``
(the inverse Mills ratio),

    E[y | y > t] = mu + sd m,     Var[y | y > t] = sd^2 (1 + alpha m - m^2),

and the same with the signs turned for the lower end.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ...cells import real_argument
from ...errors import InputError

__all__ = ["DeclaredScale", "ScaleEnds", "declared_scale", "check_on_scale", "scale_end_words", "scale_ends", "grid_tail_moments",
           "truncated_moments"]


class DeclaredScale(NamedTuple):
    """A declared score scale: its ends, and the form's points when it names them (uneven steps allowed: ICLR
    2020's options 1, 3, 6, 8).  Off a whole-point grid an end score is read as the truncated normal beyond the end
    itself (an 8 says "8 or more" in the scores' own metric, as the other reads are fitted in it): measured on
    simulated 1/3/6/8 conferences (``benchmarks/bench_anonymous.py``), cutting at the midpoint to the next option
    (7) instead pulled the top papers' end reads below 8 while their 6s stayed 6, and P(above) was less calibrated."""

    low: float
    high: float
    points: tuple[float, ...] = ()

    def describe(self) -> str:
        if self.points:
            return "points " + ", ".join(f"{p:g}" for p in self.points)
        return f"{self.low:g} to {self.high:g}"


def declared_scale(scale) -> DeclaredScale | None:
    """The declared score scale checked, or None: ``(low, high)``, or the form's points (three or more numbers)."""
    if scale is None:
        return None
    if isinstance(scale, DeclaredScale):
        return scale
    try:
        if isinstance(scale, (str, bytes)):
            raise TypeError
        numbers = list(scale)
    except TypeError:
        numbers = []
    if len(numbers) < 2:
        raise InputError(f"scale must be two numbers (the scale's lowest and highest score) or the form's points "
                         f"(three or more numbers), not {scale!r}")
    if len(numbers) > 2:
        points = [real_argument(x, "scale point") for x in numbers]
        if len(set(points)) < len(points):
            raise InputError(f"the scale's points must differ from each other: {scale!r}")
        points = tuple(sorted(points))
        return DeclaredScale(points[0], points[-1], points)
    low, high = real_argument(numbers[0], "scale minimum"), real_argument(numbers[1], "scale maximum")
    if not low < high:
        raise InputError(f"the scale's minimum ({low:g}) must be below its maximum ({high:g})")
    return DeclaredScale(low, high)


def check_on_scale(scores: np.ndarray, scale) -> None:
    """Scores outside the declared scale, or off the form's points, are refused (a typing slip, or the wrong
    scale), naming the rows."""
    if scale is None:
        return
    scale = declared_scale(scale)
    off = np.flatnonzero((scores < scale.low) | (scores > scale.high))
    where = f"outside the scale {scale.low:g} to {scale.high:g}"
    if not off.size and scale.points:
        points = np.asarray(scale.points)
        nearest = points[np.argmin(np.abs(scores[:, None] - points[None, :]), axis=1)] if scores.size else scores
        off = np.flatnonzero(np.abs(scores - nearest) > 1e-9 * np.maximum(1.0, np.abs(nearest)))
        where = f"not one of the scale's {scale.describe()}"
    if off.size:
        shown = ", ".join(str(int(i) + 1) for i in off[:5]) + (f" and {off.size - 5} more" if off.size > 5 else "")
        raise InputError(f"row{'s' if off.size > 1 else ''} {shown} of the evaluations: score "
                         f"{scores[off[0]]:g}{' ...' if off.size > 1 else ''} {where}",
                         {"row": int(off[0]), "column": "score"})


def scale_end_words(scores: np.ndarray, scale) -> str:
    """How the fit decisions are drawn from reads the scores at the ends of the declared scale, in words ('' without
    a scale)."""
    if scale is None:
        return ""
    scale = declared_scale(scale)
    ends = scale_ends(scores, scale, None)
    if ends is None:
        return f"no score at the ends of the scale {scale.low:g} to {scale.high:g}"
    low, high = int(np.count_nonzero(ends.low)), int(np.count_nonzero(ends.high))
    beyond = f" (on the form's {scale.describe()})" if scale.points else ""
    return (f"{low} score(s) of {scale.low:g} read as '{scale.low:g} or lower' and {high} of {scale.high:g} as "
            f"'{scale.high:g} or higher'{beyond} (of {scores.size}): a judgement beyond the scale could not be "
            "written down, so the spread of the reads is not understated (technical: censored reads, by EM)")


@dataclass(frozen=True)
class ScaleEnds:
    """Which reads sit at an end of the declared scale, the ends, and the scale's grid step (None: off-grid)."""

    low: np.ndarray  # reads at the bottom of the scale (bool, one per read)
    high: np.ndarray  # reads at the top
    bottom: float
    top: float
    step: float | None

    @property
    def censored(self) -> np.ndarray:
        return self.low | self.high

    def expected(self, fitted: np.ndarray, sd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(mean, variance) of each censored read's score had the scale no end, in the order of the censored
        reads, given the judgement ``N(fitted, sd^2)`` (*sd* of the judgement, without the rounding)."""
        which = self.censored
        upper = self.high[which]
        end = np.where(upper, self.top, self.bottom)
        if self.step is None:
            return truncated_moments(fitted[which], sd[which], end, upper)
        return grid_tail_moments(fitted[which], sd[which], end, upper, self.step)


def scale_ends(scores: np.ndarray, scale, step: float | None) -> ScaleEnds | None:
    """The censored reads of *scores* on the declared *scale* ``(low, high)`` with grid *step* (None: off-grid), or
    on the form's points (a :class:`DeclaredScale` naming them; the step is then theirs).

    None when no scale is declared or no score is at an end.  A score beyond an end counts as at it.

    >>> ends = scale_ends(np.array([1.0, 3.0, 6.0, 6.0]), (1, 6), 1.0)
    >>> ends.low.tolist(), ends.high.tolist()
    ([True, False, False, False], [False, False, True, True])
    """
    if scale is None:
        return None
    scale = declared_scale(scale)
    low, high = scale.low, scale.high
    scores = np.asarray(scores, dtype=float)
    at_low, at_high = scores <= low, scores >= high
    if not (at_low.any() or at_high.any()):
        return None
    # the form's own options are no whole-point grid beyond the ends: the end itself is the cut-off
    return ScaleEnds(at_low, at_high, low, high, None if scale.points else step)


#: The unclipped scores a tail sum runs over reach this many judgement SDs beyond the cut-off (the mass left out
#: is below 1e-15) ...
TAIL_SDS = 8.0
#: ... and at most this many grid points (a read whose SD spans more points than that is off any useful grid).
TAIL_POINTS = 400


def grid_tail_moments(mu, sd, end, upper, step: float) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of the score ``round(y)`` on a grid of *step*, given that it is *end* or beyond
    (above for *upper*, else below), for a judgement ``y ~ N(mu, sd^2)``.

    The scores' own metric, as the rest of the fit reads them (a whole-point score stands for its point, the
    rounding's variance ``h^2/12`` is in every read's variance): a 6 on a 1-6 scale stands for 6, 7, 8, ...
    with their probabilities, whose mean is a little above 6 and never below it.

    >>> m, v = grid_tail_moments(np.array([5.0]), np.array([0.7]), np.array([6.0]), np.array([True]), 1.0)
    >>> round(float(m[0]), 3), round(float(v[0]), 3)
    (6.068, 0.065)
    """
    from scipy.special import ndtr

    mu, sd, end = (np.asarray(x, dtype=float) for x in (mu, sd, end))
    sign = np.where(np.asarray(upper, dtype=bool), 1.0, -1.0)
    # in the direction of the tail: points end, end + h, ... ; the judgement's distance from the end in SDs
    reach = int(min(np.ceil(TAIL_SDS * float(np.max(sd, initial=0.0)) / step) + 2, TAIL_POINTS))
    j = np.arange(reach, dtype=float)
    d = sign * (mu - end)  # how far the judgement's mean lies beyond the end (negative: inside the scale)
    edges = (np.append(j, reach) - 0.5)[None, :] * step  # cell edges past the end, in score units
    upper_tail = ndtr((d[:, None] - edges) / sd[:, None])  # P(y beyond each edge)
    upper_tail[:, 0] = ndtr((d + 0.5 * step) / sd)  # the end's own cell starts at its lower edge
    cell = np.clip(upper_tail[:, :-1] - upper_tail[:, 1:], 0.0, None)
    total = cell.sum(axis=1)
    # a judgement far inside the scale puts all of its tail on the end point itself
    p = np.where(total[:, None] > 0, cell / np.where(total > 0, total, 1.0)[:, None], (j == 0)[None, :])
    offset = p @ j
    spread = np.clip(p @ j**2 - offset**2, 0.0, None)
    return end + sign * step * offset, step * step * spread


def truncated_moments(mu, sd, cut, upper) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of ``y ~ N(mu, sd^2)`` given ``y > cut`` (*upper*) or ``y < cut`` (otherwise): scores
    off every grid, where the end itself is the cut-off.

    Computed through the log of the normal tail (``scipy.special.log_ndtr``) so that a cut-off many SDs away
    still gives the right limit (the mean tends to the cut-off, the variance to 0), not NaN.

    >>> m, v = truncated_moments(np.array([0.0, 0.0]), np.array([1.0, 1.0]), np.array([0.0, 0.0]),
    ...                          np.array([True, False]))
    >>> np.round(m, 6).tolist(), np.round(v, 6).tolist()  # half-normal: +-sqrt(2/pi), 1 - 2/pi
    ([0.797885, -0.797885], [0.36338, 0.36338])
    """
    from scipy.special import log_ndtr

    mu, sd, cut = (np.asarray(x, dtype=float) for x in (mu, sd, cut))
    sign = np.where(np.asarray(upper, dtype=bool), 1.0, -1.0)
    alpha = sign * (cut - mu) / sd  # standardised distance of the cut-off into the kept tail's side
    mills = np.exp(-0.5 * alpha**2 - 0.5 * np.log(2 * np.pi) - log_ndtr(-alpha))
    share = np.clip(1.0 + alpha * mills - mills**2, 0.0, 1.0)
    return mu + sign * sd * mills, sd**2 * share
