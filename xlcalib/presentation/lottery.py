"""The Lottery sheet: the public record of a lottery -- the seed, the places, the method, the list's hash and the
start, then each object's chance, uniform number, draw order, stretch of the line and outcome -- and, under it,
how to re-run the draw by hand.  ``xlcalib verify-draw`` and ``CALIB_VERIFY_DRAW`` read this sheet back
(:mod:`xlcalib.inputs.lottery`), so its labels and column names are the core's
(:data:`~xlcalib.calibration.decide.lottery.LOTTERY_COLUMNS`, :data:`~.lottery.RECORD_ROWS`)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..calibration.decide.lottery import LOTTERY_COLUMNS, UNITS, RECORD_ROWS
from ..workbook.base import Column, SheetSpec
from .common import COUNT

#: Number formats: chances and stretches to the ten-thousandth (what was drawn with), uniform numbers to 12 places.
CHANCE, UNIFORM = "0.0000", "0.000000000000"
#: Width of the first column: the record's labels above the table stand in it.
RECORD_LABEL_WIDTH = 26


def _record_rows(lottery: dict) -> list[list]:
    """The record's rows above the table, in :data:`RECORD_ROWS` order, and whether the seed was declared."""
    values = {"seed": lottery["seed"], "places": int(lottery["sure"] + lottery["places"]),
              "method": lottery["method"], "digest": lottery["digest"], "start": lottery["start"] / UNITS}
    rows = [[label, values[key]] for label, key in RECORD_ROWS]
    rows.append(["Seed declared in advance", "yes" if lottery.get("declared") else
                 "no: the run's Monte Carlo seed was used (declare one: Settings row Public seed, or --public-seed)"])
    return rows


def lottery_frame(r: pd.DataFrame) -> pd.DataFrame:
    """The record's table from the run's ranking: every object, the sure ones first, then in draw order."""
    order = r["draw_order"].to_numpy()
    key = np.where(r["chance"].to_numpy() >= 1.0, -1, np.where(order > 0, order, np.iinfo(np.int64).max))
    rows = r.iloc[np.lexsort((r.index.astype(str), key))]
    drawn = rows["draw_order"].to_numpy() > 0
    return pd.DataFrame({
        LOTTERY_COLUMNS[0]: rows.index.astype(str),
        LOTTERY_COLUMNS[1]: rows["chance"].to_numpy(dtype=float),
        LOTTERY_COLUMNS[2]: rows["lottery_number"].to_numpy(dtype=float),
        LOTTERY_COLUMNS[3]: np.where(drawn, rows["draw_order"].to_numpy(), None),
        LOTTERY_COLUMNS[4]: rows["stretch_from"].to_numpy(dtype=float),
        LOTTERY_COLUMNS[5]: rows["stretch_to"].to_numpy(dtype=float),
        LOTTERY_COLUMNS[6]: rows["final"].astype(str).to_numpy()})


def _how_to_rerun(lottery: dict) -> list[list[str]]:
    """The recipe under the table, in words (the README gives it in full)."""
    m = lottery["places"]
    lines = [["How this draw was made (xlcalib verify-draw on this file, or =CALIB_VERIFY_DRAW over this sheet, "
              "re-runs it): each object's number is the first 8 bytes, read as one whole number, of the SHA-256 "
              "hash of the text 'xlcalib lottery 1', the public seed, its name and its chance in ten-thousandths, joined "
              "by tabs; its uniform number is that number divided by 2 to the 64th."]]
    if lottery["method"] == "informed":
        lines.append([f"Informed lottery: every object is funded with its chance, its P(above the line). Chance 1: "
                      f"funded; chance 0: not funded. The others are laid end to end in the order of their uniform "
                      f"numbers (draw order), each over a stretch as long as its chance; the {m} point(s) start, "
                      "start + 1, start + 2 ... fall in as many stretches, and those objects are funded. Every "
                      "stretch is shorter than 1, so it holds at most one point, and over the start each object is "
                      "funded with exactly its chance (systematic sampling in a random order)."])
    else:
        lines.append([f"Uniform band lottery: the objects above the line are funded; the {m} place(s) left go to the "
                      "members of the band next to the line with the smallest uniform numbers (draw order 1 to "
                      f"{m}), so each member has the same chance."])
    lines.append(["The hash is SHA-256 of the lines 'xlcalib lottery 1', 'method<tab>" + lottery["method"] + "', "
                  "'seed<tab>' + the seed, 'places<tab>' + the places, then 'name<tab>chance in ten-thousandths' for every "
                  "object sorted by name, each line ending in a line feed; the start is its first 8 bytes times "
                  "10,000 divided by 2 to the 64th, rounded down, in ten-thousandths. Change the seed, a name or a "
                  "chance and the numbers, the hash and the draw change: the draw is fixed by public inputs."])
    return lines


def lottery_sheet(r: pd.DataFrame, preamble) -> SheetSpec:
    """Lottery: the public record of the run's lottery (see the module docstring); *r* is the run's ranking."""
    lottery = r.attrs["lottery"]
    frame = lottery_frame(r)
    stretch = "informed lottery: where the object sits on the line of drawn places (ten-thousandths); funded when a point " \
              "start + 0, 1, 2 ... falls in [from, to)"
    cols = {
        LOTTERY_COLUMNS[0]: Column(LOTTERY_COLUMNS[0], None, "the object as entered", max_width=28,
                                   min_width=RECORD_LABEL_WIDTH),
        LOTTERY_COLUMNS[1]: Column(LOTTERY_COLUMNS[1], CHANCE, "its chance of being funded, in ten-thousandths: P(above "
                                   "the line) (informed lottery) or the band's share (uniform band); 1 = funded, "
                                   "0 = not funded without a draw"),
        LOTTERY_COLUMNS[2]: Column(LOTTERY_COLUMNS[2], UNIFORM, "SHA-256 of 'xlcalib lottery 1', the seed, the name "
                                   "and the chance (tab-separated), first 8 bytes / 2^64"),
        LOTTERY_COLUMNS[3]: Column(LOTTERY_COLUMNS[3], COUNT, "place in the draw: the objects drawn among, in the "
                                   "order of their uniform numbers"),
        LOTTERY_COLUMNS[4]: Column(LOTTERY_COLUMNS[4], CHANCE, stretch),
        LOTTERY_COLUMNS[5]: Column(LOTTERY_COLUMNS[5], CHANCE, stretch),
        LOTTERY_COLUMNS[6]: Column(LOTTERY_COLUMNS[6], None, "funded, funded by lottery, not drawn, not funded"),
    }
    lead = [list(x) for x in preamble]
    if lead:
        lead[0] = [f"{lead[0][0]}: lottery"]
    spec = SheetSpec("Lottery", frame, lead + _record_rows(lottery), cols, freeze_columns=1)
    spec.footer = _how_to_rerun(lottery)
    return spec


__all__ = ["lottery_frame", "lottery_sheet"]
