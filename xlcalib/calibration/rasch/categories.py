"""The rating scale's categories: which ordered categories a panel's scores fall in, and which were used.

Why its own step: the many-facet Rasch model (:mod:`.likelihood`) reads a score as an *ordered category*, not a
distance.  The categories come from the declared scale when there is one (``scale=(1, 6)``, the Settings rows
*Score scale minimum/maximum*: every point of its grid, 1, 2, ..., 6, whether used or not) or else from the
scores given (their distinct values, in numeric order -- letter grades read into numbers keep the letters'
order).

Unused categories (FACETS "Ordinal", its default; TAM sets their probability to zero): a category nobody used
says nothing about where its thresholds lie, and a model that kept it would put them at plus or minus
infinity.  It is left out of the model and the categories used are counted in order for the estimation
(Linacre, FACETS manual, "Models=": without ``K``, unobserved intermediate categories are squeezed out); the
category table lists it with count 0 and no threshold, and the Summary says so.  Its score still counts on the
rubric's scale: fair averages are expected *scores*, so 1, 2, 4, 5 (3 unused) keep their values.

With thresholds per assessor (partial credit by assessor) a category an assessor never used is a structural
zero for that assessor only (as TAM does for an item): that assessor's probability of it is zero, their other
categories keep their places.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import InputError
from ..panel.resolution import score_step

__all__ = ["MAX_CATEGORIES", "CategoryScale", "category_scale"]

#: More categories than this: the scores are a continuous scale, not a rubric (FACETS allows 255, but a
#: threshold per category needs reads in every category; 0-100 ratings are grouped first, or fitted linearly).
MAX_CATEGORIES = 30


@dataclass(frozen=True)
class CategoryScale:
    """The categories of a panel and each read's category.

    ``values``: every category's score on the rubric's scale (sorted); ``counts``: reads in each;
    ``used``: counts > 0; ``position``: the category's place among the used ones (0, 1, ...; -1 when unused) --
    the model's score of a read in it; ``code``: each read's position; ``source``: where the categories came
    from, in words.
    """

    values: np.ndarray
    counts: np.ndarray
    position: np.ndarray
    code: np.ndarray
    source: str

    @property
    def used(self) -> np.ndarray:
        return self.counts > 0

    @property
    def n_used(self) -> int:
        """K, the number of categories the model has."""
        return int(self.used.sum())

    @property
    def used_values(self) -> np.ndarray:
        """The rubric score of each of the model's categories (position order)."""
        return self.values[self.used]

    def unused_words(self) -> str:
        """'' or a sentence naming the categories nobody used and what was done with them."""
        unused = self.values[~self.used]
        if not unused.size:
            return ""
        listing = ", ".join(f"{v:g}" for v in unused)
        return (f"Category {listing} was used by no assessor: left out of the model (its thresholds would lie at "
                "infinity), as FACETS does by default; the other categories keep their scores"
                if unused.size == 1 else
                f"Categories {listing} were used by no assessor: left out of the model (their thresholds would lie "
                "at infinity), as FACETS does by default; the other categories keep their scores")


def _declared_grid(scores: np.ndarray, scale) -> np.ndarray:
    """Every point of the declared scale: the form's points when it names them (a
    :class:`~..panel.censoring.DeclaredScale` with uneven steps: each is a category), else the grid from ``low`` to
    ``high`` (its step read from the scores and the scale's ends)."""
    points = tuple(getattr(scale, "points", ()) or ())
    if points:
        if len(points) > MAX_CATEGORIES:
            raise InputError(_too_many(len(points), "the form's points give"))
        return np.unique(np.asarray(points, dtype=float))
    low, high = float(scale[0]), float(scale[1])
    step = score_step(np.concatenate([scores, [low, high]]))
    if step is None:
        raise InputError(f"the scores do not lie on a grid of the scale {low:g} to {high:g}: the ordinal model "
                         "reads ordered categories (whole points, half points ...)")
    n = int(round((high - low) / step)) + 1
    if n > MAX_CATEGORIES:
        raise InputError(_too_many(n, f"the scale {low:g} to {high:g} in steps of {step:g} has"))
    return low + step * np.arange(n)


def _too_many(n: int, what: str) -> str:
    return (f"{what} {n} categories; the ordinal model reads at most {MAX_CATEGORIES} ordered categories (a rubric, "
            "a grade scale). Group the scores into categories first, or use a linear model (--model random-assessors)")


def category_scale(scores: np.ndarray, scale: tuple[float, float] | None = None) -> CategoryScale:
    """The categories of *scores* (from the declared *scale* when given, else the distinct scores) and each
    read's category.

    >>> c = category_scale(np.array([1.0, 2.0, 4.0, 2.0]), (1, 5))
    >>> c.values.tolist(), c.counts.tolist(), c.code.tolist()
    ([1.0, 2.0, 3.0, 4.0, 5.0], [1, 2, 0, 1, 0], [0, 1, 2, 1])
    """
    scores = np.asarray(scores, dtype=float)
    if scale is not None:
        values = _declared_grid(scores, scale)
        tolerance = 1e-9 * max(1.0, float(np.max(np.abs(values))))
        index = np.clip(np.searchsorted(values, scores - tolerance), 0, values.size - 1)
        off = np.abs(values[index] - scores) > tolerance
        if off.any():
            i = int(np.flatnonzero(off)[0])
            raise InputError(f"row {i + 1} of the evaluations: score {scores[i]:g} is not a category of the scale "
                             f"({', '.join(f'{v:g}' for v in values[:8])}{' ...' if values.size > 8 else ''})",
                             {"row": i, "column": "score"})
        named = getattr(scale, "points", ())
        source = (f"the form's points {', '.join(f'{v:g}' for v in values)}" if named else
                  f"the declared scale {values[0]:g} to {values[-1]:g}, {values.size} categories")
    else:
        values, index = np.unique(scores, return_inverse=True)
        if values.size > MAX_CATEGORIES:
            raise InputError(_too_many(values.size, "the scores take"))
        source = f"the scores given, {values.size} distinct values"
    counts = np.bincount(index, minlength=values.size)
    if int((counts > 0).sum()) < 2:
        raise InputError(f"every score is {scores[0]:g}: the ordinal model needs reads in at least two categories")
    position = np.where(counts > 0, np.cumsum(counts > 0) - 1, -1).astype(np.intp)
    return CategoryScale(values.astype(float), counts, position, position[index].astype(np.intp), source)
