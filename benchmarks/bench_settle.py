"""Do the decisions of a large panel stay the same from one Monte Carlo seed to another?

Before issue 37 a panel of 10^5 objects was ranked from 500 draws (draws x objects capped at 5 x 10^7) and
P(above) counted the draws in which an object made the top k: a Monte Carlo error of about 1% at the 5% and 95%
cut-offs, so decisions flipped between seeds (a 60,000-object panel with 1,200 places: 516 objects decided
differently across three seeds, none of them marked).  Now P(above) is the conditional (Rao-Blackwellised)
estimate and further rounds of draws are made until every decision is settled -- 3 Monte Carlo errors from both
cut-offs -- or the stated budget is spent, when the objects still unsettled are named and decided borderline
(:mod:`xlcalib.calibration.decide.draws`).

Here: one panel of 10^5 objects (the random incomplete design of ``bench_calibration.panel``: 1,000 assessors,
2-3 reads per object, SDs 0.5/1/2), a line of 2,000 places, ranked under five seeds.  Reported: the time of each
ranking (the decision basis fitted once beforehand), the extra draws, the objects left unsettled, and across the
five seeds the objects whose decision (above / borderline / below) differs -- each of them should have been named
unsettled in at least one seed -- and those that differ while settled in every seed (goal: none).

Run: ``python benchmarks/bench_settle.py`` (or ``python benchmarks/run_all.py settle``); about 2-4 minutes on a
2-core machine.  ``XLCALIB_BENCH_SETTLE_OBJECTS`` changes the panel's size.

Measured (the shared 2-core machine, two other benchmarks running): 500 first-pass draws and 1,969-2,000
settling draws per seed, 60-63 objects left unsettled each, 13.6-20.8 s per ranking; across the five seeds 19
objects decided differently, all 19 named unsettled in some seed, 0 settled on different sides.  The counting
estimator of earlier versions, same panel and seeds: 1,165 objects decided differently, none marked, about 4.5 s
per ranking.
"""
from __future__ import annotations

import os
import time

import pandas as pd

import xlcalib
from bench_calibration import panel

SEEDS = (0, 1, 2, 3, 4)


def run() -> list[dict]:
    objects = int(os.environ.get("XLCALIB_BENCH_SETTLE_OBJECTS", "100000"))
    places = objects // 50
    result = xlcalib.calibrate(panel(objects // 100, objects, seed=1))
    result.decision_basis()  # fitted once: the rankings below time the draws
    tables, rows = [], []
    for seed in SEEDS:
        started = time.perf_counter()
        table = result.ranking(top_k=places, draws=10_000, seed=seed)
        seconds = time.perf_counter() - started
        settling = table.attrs["settling"]
        tables.append(table)
        rows.append({"case": f"settled decisions, {objects:,} objects, {places:,} places, seed {seed}",
                     "ours_s": seconds, "peer": None, "peer_s": None, "ratio": None,
                     "note": f"{table.attrs['draws']:,} draws + {settling['extra_draws']:,} to settle; "
                             f"{len(settling['unsettled'])} unsettled (named, counted borderline); "
                             + ", ".join(f"{n} {w}" for w, n in table["decision"].value_counts().items())})
    decisions = pd.concat([t["decision"] for t in tables], axis=1)
    differ = set(decisions.index[decisions.nunique(axis=1) > 1])
    named = set().union(*(set(t.attrs["settling"]["unsettled"]) for t in tables))
    rows.append({"case": f"settled decisions, {objects:,} objects: the same under {len(SEEDS)} seeds?",
                 "ours_s": None, "peer": None, "peer_s": None, "ratio": None,
                 "note": f"{len(differ)} object(s) decided differently across the seeds, {len(differ & named)} of them "
                         f"named unsettled in some seed; {len(differ - named)} differ while settled in every seed "
                         f"(goal 0); {len(named)} named unsettled in some seed"})
    return rows


if __name__ == "__main__":
    for row in run():
        seconds = f" ({row['ours_s']:.1f} s)" if row["ours_s"] else ""
        print(f"{row['case']}: {row['note']}{seconds}", flush=True)
