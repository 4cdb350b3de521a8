"""Filling the places: the one final decision per object and the lottery's draw, from each object's tier.

Why a module of its own: the Monte Carlo ranking (:mod:`.ranking`) and the exact-fit ranking
(:mod:`.exact_fit`, scores that fit the model exactly) fill the places the same way -- tier by tier, strongest
statement first, the band where they run out drawn by the same public lottery (:mod:`.lottery`) -- so the
Lottery sheet, verify-draw and the words read both alike.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .lottery import UNITS, LotteryDraw, chances_in_units, draw_lottery

__all__ = ["TIERS", "decision_order", "tier_places", "final_decisions", "lottery_columns"]

#: The statement each decision rests on, strongest first: the joint statements hold for the whole list at once,
#: the others for each object on its own (see :func:`rank_objects`).
TIERS = ("jointly above", "above", "borderline", "below", "jointly below")


def decision_order(p: np.ndarray, v_hat: np.ndarray) -> np.ndarray:
    """Each object's position in decision order (0 first): P(above) from high to low, ties by the value drawn
    around, then by table order.  The joint statements take objects in this order from either end."""
    O = p.size
    position = np.empty(O, dtype=np.int32)
    position[np.lexsort((np.arange(O), -v_hat, -p))] = np.arange(O, dtype=np.int32)
    return position


def tier_places(tier: np.ndarray, position: np.ndarray, top_k: int):
    """The places filled tier by tier, strongest first: (funded, the band where they run out in decision order,
    its tier, places left for it).  Places left after the whole borderline band go to the next objects in
    decision order (a draw among objects the data place below the line, far from it, would not be defensible)."""
    funded = np.zeros(tier.size, dtype=bool)
    left, pool, pool_tier = top_k, np.array([], dtype=np.intp), None
    for t in range(len(TIERS)):
        members = np.flatnonzero(tier == t)
        if left <= 0 or not members.size:
            continue
        if members.size <= left:
            funded[members] = True
            left -= members.size
            continue
        ordered = members[np.argsort(position[members], kind="stable")]
        if t > TIERS.index("borderline"):
            funded[ordered[:left]] = True
            left = 0
        else:
            pool, pool_tier = ordered, TIERS[t]
        break
    return funded, pool, pool_tier, (left if pool.size else 0)


def final_decisions(index: pd.Index, tier: np.ndarray, position: np.ndarray, top_k: int | None, lottery,
                     p: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, Any], LotteryDraw | None]:
    """The one final decision per object, the record of how the places were filled, and the lottery's draw.

    Without places (a score line): funded when the object is above on its tier's statement, not funded when
    below, to discuss when borderline.  With ``top_k`` places the places are filled tier by tier, strongest
    first; the tier in which they run out is the band adjacent to the line, whose objects are "to discuss"
    without a lottery; the tiers after it are not funded.  *lottery* = (method, public seed):

    * informed -- every object is funded with its chance, P(above) as whole ten-thousandths (:mod:`.lottery`): chance
      1 funded, 0 not funded, the rest drawn (systematic sampling in a random order), exactly ``top_k`` funded;
    * uniform band -- the band's places go by a draw among that band only, each with the same chance.
    """
    if top_k is None:
        final = np.where(tier <= 1, "funded", np.where(tier >= 3, "not funded", "to discuss")).astype(object)
        return final, {}, None
    funded, pool, pool_tier, left = tier_places(tier, position, top_k)
    record = {"places": top_k, "sure": int(funded.sum()), "left": left, "pool": list(index[pool]),
              "pool_tier": pool_tier}
    method, seed = lottery if lottery is not None else (None, None)
    if method is None:
        final = np.where(funded, "funded", "not funded").astype(object)
        final[pool] = "to discuss"
        return final, record, None
    if method == "informed":
        chances = chances_in_units(p, top_k)
    else:
        chances = np.where(funded, UNITS, 0).astype(np.int64)
        if pool.size:  # the band's equal chance, in whole ten-thousandths (the draw itself takes exactly left of them)
            chances[pool] = min(UNITS - 1, max(1, round(UNITS * left / pool.size)))
    draw = draw_lottery(index, chances, top_k, seed, method)
    final = draw.table["outcome"].to_numpy(dtype=object)
    in_draw = (chances > 0) & (chances < UNITS)
    record.update(sure=draw.sure, left=draw.drawn_places, pool=list(index[in_draw]),
                  pool_tier=pool_tier if method == "uniform band" else "chance strictly between 0 and 1")
    return final, record, draw


def lottery_columns(frame: pd.DataFrame, draw: LotteryDraw) -> None:
    """The lottery's columns: each object's chance, its uniform number, draw order, stretch of the line (informed
    lottery) and whether it was funded by lottery or not drawn (see :mod:`.lottery`)."""
    table = draw.table
    frame["chance"] = table["chance"].to_numpy() / UNITS
    frame["lottery_number"] = table["uniform"].to_numpy(dtype=float)
    drawn = table["order"].to_numpy() > 0
    frame["draw_order"] = table["order"].to_numpy()
    informed = draw.method == "informed"
    frame["stretch_from"] = np.where(drawn & informed, table["from"].to_numpy() / UNITS, np.nan)
    frame["stretch_to"] = np.where(drawn & informed, table["to"].to_numpy() / UNITS, np.nan)
    frame["lottery"] = np.where(drawn, frame["final"], "")
