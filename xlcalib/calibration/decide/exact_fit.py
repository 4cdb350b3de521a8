"""Rankings when the noise of a read cannot be estimated: scores that fit the model exactly.

Why: with relative confidences the noise scale is estimated from how far the scores sit from the model.  When
they sit exactly on it -- most often because every assessor gave the same score -- that estimate is zero, and
a posterior built on it would call every value certain: Monte Carlo draws would then all be the same, and
objects tied in value would be ordered by their place in the table (the first k "funded" with P = 1).  Nothing
in the data says that.  Here the values are ranked as they are, tied values share their rank, and P(above a
line of k places) is what exchangeability gives: 1 for a group of tied objects wholly above the line, 0 wholly
below, and the share of the places it holds for the group the line cuts (a panel where everyone agrees on
everything has one group, each at k / O).  A score line gives 1 / 0 / 1/2 for values above / below / at it.
The decisions follow with the usual epsilon cut-offs; a lottery draws the places of the cut group among its
members, each with the same chance (all that the data allow: the informed and the uniform band lotteries agree
here, and the draw is the public one of :mod:`.lottery`).  Nothing here is a Monte Carlo estimate.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .lottery import LotteryDraw
from .places import decision_order, final_decisions, lottery_columns

__all__ = ["EXACT_FIT_NOTE", "tied_ranking"]

#: What the ranking's note says when the noise could not be estimated.
EXACT_FIT_NOTE = ("the scores fit the model exactly, so the noise of a read could not be estimated: no standard "
                  "errors, no draws; tied values share their rank and P(above) counts the ties alone")


def _groups(ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first rank, size) of each object's group of tied values."""
    sizes = np.bincount(ranks)[ranks]
    return ranks, sizes


def _p_above_places(ranks: np.ndarray, top_k: int) -> np.ndarray:
    """Share of its group's members the line's places reach: 1 above, 0 below, (k - first + 1) / size if cut."""
    first, size = _groups(ranks)
    return np.clip((top_k - first + 1) / size, 0.0, 1.0)


def tied_ranking(values: pd.DataFrame, ranks: np.ndarray, raw_ranks: np.ndarray, line, *, level: float,
                 epsilon: float, lottery) -> tuple[pd.DataFrame, dict, LotteryDraw | None]:
    """The ranking table of a panel whose noise could not be estimated (see the module docstring): the usual
    columns, standard errors and rank intervals of the tied groups, P(above) from the ties alone; with the record
    of how the places were filled and the lottery's draw (*lottery* = (method, public seed) or None), as
    :func:`.places.final_decisions` gives them."""
    first, size = _groups(ranks)
    frame = pd.DataFrame({
        "rank": ranks, "value": values["value"].to_numpy(dtype=float), "se": np.full(len(values), np.nan),
        "lower": np.nan, "upper": np.nan, "raw_mean": values["raw_mean"].to_numpy(dtype=float), "raw_rank": raw_ranks,
        "expected_rank": first + (size - 1) / 2.0, "rank_lower": first, "rank_upper": first + size - 1,
        "n": values["n"].to_numpy(), "total_confidence": values["total_confidence"].to_numpy(dtype=float),
    }, index=values.index)
    record: dict = {}
    draw = None
    if line.text:
        v = frame["value"].to_numpy()
        if line.top_k is not None:
            p = _p_above_places(ranks, line.top_k)
            raw_above = raw_ranks <= line.top_k
            calibrated_above = ranks <= line.top_k
        else:
            p = np.where(v > line.threshold, 1.0, np.where(v < line.threshold, 0.0, 0.5))
            raw_above = frame["raw_mean"].to_numpy() >= line.threshold
            calibrated_above = v >= line.threshold
        frame["p_above"], frame["p_above_mc_se"] = p, 0.0
        frame["decision"] = np.where(p >= 1.0 - epsilon, "above", np.where(p <= epsilon, "below", "borderline"))
        frame["raw_decision"] = np.where(raw_above, "above", "below")
        frame["changed"] = calibrated_above != raw_above
        frame["joint"] = ""
        tier = np.where(p >= 1.0, 1, np.where(p <= 0.0, 3, 2)).astype(np.intp)  # above / borderline / below
        position = decision_order(p, -ranks)  # the tied ranks stand for the values: ties keep table order
        frame["final"], record, draw = final_decisions(frame.index, tier, position, line.top_k, lottery, p)
        frame["basis"] = np.where((p > 0.0) & (p < 1.0), "tied with others at the line", "the values' order")
        if draw is not None:
            lottery_columns(frame, draw)
    frame = frame.sort_values(["rank"], kind="stable")
    frame.attrs.update({"line": line.text, "level": level, "draws": 0, "epsilon": epsilon, "rank_interval_draws": 0,
                        "note": EXACT_FIT_NOTE, "places": record, "joint": {}})
    return frame, record, draw
