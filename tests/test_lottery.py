"""The lottery (xlcalib.calibration.decide.lottery): the informed lottery funds each object with its chance, the
uniform band lottery gives the band equal chances, every random number comes from SHA-256 of public inputs, and
the draw is re-run from its record alone.

This module runs under CPython and inside Pyodide (make test-lite): the known answers below are the same on
both, which is what "the same public seed gives the same draw" means.
"""
from __future__ import annotations

import functools
import hashlib

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

import xlcalib
from xlcalib.calibration.decide import lottery as lot
from xlcalib.calibration.decide.ranking import lottery_method
from xlcalib.errors import InputError

from .test_uncertainty import random_panel

calibrate_fixed = functools.partial(xlcalib.calibrate, model="fixed")

NAMES = ["P1", "P2", "P3", "P4", "P5", "Études 6"]
CHANCES = [10_000, 6_000, 2_500, 1_500, 0, 10_000]  # 3 places: 2 certain, 1 drawn among P2-P4


def test_known_answer_follows_the_recipe_step_by_step():
    """The hash, the numbers, the start and the outcome of one small lottery, each recomputed here from the recipe
    as the README states it (tab-separated text, SHA-256, first 8 bytes big-endian) -- and written down, so that
    CPython and Pyodide must both give exactly these."""
    draw = lot.draw_lottery(NAMES, CHANCES, 3, "  Panel 2026, round 1 ")
    assert draw.seed == "Panel 2026, round 1"
    text = "".join(line + "\n" for line in ["xlcalib lottery 1", "method\tinformed", "seed\tPanel 2026, round 1",
                                             "places\t3", "P1\t10000", "P2\t6000", "P3\t2500", "P4\t1500",
                                             "P5\t0", "Études 6\t10000"])
    assert draw.digest == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert draw.start == int(draw.digest[:16], 16) * 10**4 // 2**64
    for name, chance in zip(NAMES, CHANCES):
        key = f"xlcalib lottery 1\tPanel 2026, round 1\t{name}\t{chance}".encode("utf-8")
        assert draw.table.loc[name, "number"] == int.from_bytes(hashlib.sha256(key).digest()[:8], "big")
    # the drawn objects in the order of their numbers, end to end; the point `start` falls in one stretch
    drawn = draw.table[(draw.table["chance"] > 0) & (draw.table["chance"] < 10**4)].sort_values("number")
    ends = np.cumsum(drawn["chance"].to_numpy())
    winner = drawn.index[int(np.searchsorted(ends, draw.start, side="right"))]
    assert list(draw.table.index[draw.table["outcome"] == "funded by lottery"]) == [winner]
    # the answer itself, the same on every platform (hashlib and integer arithmetic only)
    assert draw.digest == "4c8d024dd7afcd0ddb061bb7481eadea38d928828a1df8ab1c60a4818b7681eb"
    assert draw.start == 2990 and winner == "P2"
    assert list(draw.table["order"]) == [0, 2, 1, 3, 0, 0]
    assert list(draw.table["outcome"]) == ["funded", "funded by lottery", "not drawn", "not drawn", "not funded",
                                           "funded"]


def test_chances_are_whole_ten_thousandths_summing_to_the_places():
    rng = np.random.default_rng(3)
    for _ in range(200):
        p = rng.dirichlet(np.ones(40)) * 7  # sums to 7
        p = p / p.sum() * 7
        if (p > 1).any():
            continue
        c = lot.chances_in_units(p, 7)
        assert c.sum() == 7 * lot.UNITS and (c >= 0).all() and (c <= lot.UNITS).all()
        assert np.abs(c - p * lot.UNITS).max() < 1.0  # within one ten-thousandth of each probability


@pytest.mark.parametrize("seed, text", [(2026, "2026"), (2026.0, "2026"), (0.5, "0.5"), (" x y ", "x y"),
                                        ("Cafe\u0301", "Café")])
def test_public_seed_is_written_one_way(seed, text):
    assert lot.public_seed(seed) == text


def test_control_characters_and_bad_seeds_are_refused():
    with pytest.raises(InputError, match="control character"):
        lot.draw_lottery(["a\tb", "c"], [5_000, 5_000], 1, "s")
    with pytest.raises(InputError, match="control character"):
        lot.public_seed("line\nbreak")
    for bad in ("", "   ", None, True, float("nan"), -1e300, 2**60):
        with pytest.raises(InputError, match="public seed"):
            lot.public_seed(bad)
    with pytest.raises(InputError, match="sum"):
        lot.draw_lottery(["a", "b"], [5_000, 4_000], 1, "s")
    with pytest.raises(InputError, match="informed"):
        lottery_method("weighted")


def test_informed_lottery_funds_each_object_with_its_chance():
    """Over 4,000 public seeds, each object of a real ranking is funded about P(rank <= k) of the time -- its count
    inside the central 99.99% of the binomial(4,000, chance) law (30 objects: a false alarm about once in 300
    runs of this test; exact, since near 0 and 1 a normal band would be wrong) -- and exactly k are funded
    every time."""
    result = calibrate_fixed(random_panel(8, A=8, O=30, reads=(2, 4)))
    table = result.ranking(top_k=6, draws=4000, lottery=True, lottery_seed="s")
    chances = (table["chance"].to_numpy() * lot.UNITS).round().astype(np.int64)
    assert chances.sum() == 6 * lot.UNITS
    assert np.abs(table["chance"] - table["p_above"]).max() <= 1e-4 + 1e-12  # P(above) in ten-thousandths
    names = list(table.index)
    funded = np.zeros(len(names))
    runs = 4000
    for i in range(runs):
        outcome = lot.draw_lottery(names, chances, 6, f"seed {i}").table["outcome"]
        won = outcome.isin(["funded", "funded by lottery"]).to_numpy()
        assert won.sum() == 6
        funded += won
    p = chances / lot.UNITS
    low, high = binom.ppf(0.00005, runs, p), binom.isf(0.00005, runs, p)
    assert ((funded >= low) & (funded <= high)).all(), list(zip(names, p, funded / runs))
    assert ((p > 0.02) & (p < 0.98)).sum() >= 8  # enough objects are really drawn for the test to mean something


def test_uniform_band_gives_the_band_equal_chances():
    chances = [lot.UNITS, lot.UNITS, 3_750, 3_750, 3_750, 3_750, 3_750, 3_750, 3_750, 3_750, 0]
    names = [f"o{i}" for i in range(len(chances))]
    funded = np.zeros(len(names))
    for i in range(3000):
        outcome = lot.draw_lottery(names, chances, 5, i, "uniform band").table["outcome"]
        assert (outcome == "funded by lottery").sum() == 3 and (outcome == "funded").sum() == 2
        funded += (outcome == "funded by lottery").to_numpy()
    low, high = binom.ppf(0.00005, 3000, 3 / 8), binom.isf(0.00005, 3000, 3 / 8)
    assert ((funded[2:10] >= low) & (funded[2:10] <= high)).all()


def _record(draw: lot.LotteryDraw) -> pd.DataFrame:
    t = draw.table
    drawn = (t["order"] > 0).to_numpy()
    return pd.DataFrame({"row": [f"row {i + 10}" for i in range(len(t))], "object": list(t.index),
                         "chance": t["chance"].to_numpy(), "uniform": t["uniform"].to_numpy(),
                         "order": t["order"].to_numpy(), "from": np.where(drawn, t["from"].to_numpy(), np.nan),
                         "to": np.where(drawn, t["to"].to_numpy(), np.nan), "outcome": t["outcome"].to_numpy()})


def test_verify_matches_an_untouched_record_and_names_the_edited_row():
    draw = lot.draw_lottery(NAMES, CHANCES, 3, "Panel 2026, round 1")
    rows = _record(draw)
    assert lot.verify_lottery(draw.seed, 3, "informed", draw.digest, draw.start, rows) == (True, [])
    edits = {"outcome": ("not drawn", "row 11"), "uniform": (0.5, "row 12"), "chance": (2_600, "row 12"),
             "object": ("P3b", "row 12")}
    for column, (value, row) in edits.items():
        edited = rows.copy()
        edited.loc[2 if row == "row 12" else 1, column] = value
        ok, problems = lot.verify_lottery(draw.seed, 3, "informed", draw.digest, draw.start, edited)
        assert not ok and any(p.startswith(row) for p in problems), (column, problems)
    ok, problems = lot.verify_lottery("Panel 2026, round 2", 3, "informed", draw.digest, draw.start, rows)
    assert not ok and any("hash" in p for p in problems)
    ok, problems = lot.verify_lottery(draw.seed, 3, "informed", "0" * 64, draw.start, rows)
    assert not ok and problems == [f"the hash is {'0' * 16}..., the seed, places and chances give "
                                   f"{draw.digest[:16]}...: one of them differs from what was drawn"]


def test_lottery_in_the_ranking_is_recorded_and_repeats():
    result = calibrate_fixed(random_panel(21, A=8, O=40, reads=(2, 4)))
    table = result.ranking(top_k=10, draws=2000, lottery=True, lottery_seed="Panel 2026")
    record = table.attrs["lottery"]
    assert record["method"] == "informed" and record["seed"] == "Panel 2026" and record["declared"]
    funded = table["final"].isin(["funded", "funded by lottery"])
    assert funded.sum() == 10 and record["sure"] + record["places"] == 10
    assert set(record["drawn"]) <= set(record["pool"])
    assert set(table.index[table["final"] == "funded"]) == set(table.index[table["chance"] == 1])
    assert (table.loc[table["chance"] == 0, "final"] == "not funded").all()
    again = result.ranking(top_k=10, draws=2000, lottery="informed", lottery_seed="Panel 2026")
    pd.testing.assert_frame_equal(table, again)
    other = result.ranking(top_k=10, draws=2000, lottery=True, lottery_seed="Panel 2027")
    assert other.attrs["lottery"]["digest"] != record["digest"]
    undeclared = result.ranking(top_k=10, draws=2000, seed=4, lottery=True)
    assert undeclared.attrs["lottery"]["seed"] == "4" and not undeclared.attrs["lottery"]["declared"]


def test_a_whole_run_gives_the_same_draw_on_every_platform():
    """From the scores to the draw -- fit, Monte Carlo P(above), chances in ten-thousandths, the SHA-256 draw --
    one known answer, which CPython and Pyodide (make test-lite) must both give: the hash covers every object's
    chance, so a chance that moved by one ten-thousandth on another platform would change it."""
    result = calibrate_fixed(random_panel(21, A=8, O=40, reads=(2, 4)))
    lottery = result.ranking(top_k=10, draws=2000, seed=1, lottery=True, lottery_seed="Panel 2026").attrs["lottery"]
    assert lottery["digest"] == "a205ca5210dcd206059d852fe9e641e37941d86582d69ee6a6656fd5ad68b0f8"
    assert lottery["start"] == 6329 and lottery["sure"] == 1
    assert sorted(lottery["drawn"]) == ["o03", "o05", "o07", "o13", "o15", "o18", "o25", "o26", "o36"]
