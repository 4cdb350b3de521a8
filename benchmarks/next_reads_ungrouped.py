"""Next reads on ungrouped panels (random two-read designs, declared SDs): the first evidence for ``next_reads``.

Not run by ``make bench`` (500 panels take about 20 minutes); the benchmark of panels as they are run --
grouped by expertise, whole-point scores, levels, and the rules a secretary must keep -- is
``bench_next_reads.py``.

Simulated panels with known truth: ``ASSESSORS`` assessors, ``OBJECTS``
objects, v ~ N(0, 1), biases b ~ N(0, BIAS_SD^2), noise ~ N(0, NOISE_SD^2)
(declared as SDs, so w = 1).  A first round gives every object 2 reads by
distinct assessors (balanced loads, random, connected).  Then 10%, 25% and
50% more reads are added, chosen

* (i) *random*: uniformly among the unread pairs;
* (ii) *fewest reads*: the object with the fewest reads so far (ties at
  random), read by a random assessor who has not read it;
* (iii) *next_reads*: ``result.next_reads(extra, top_k=TOP_K, max_load=...)``
  on the first round's calibration (one call, greedy, before any extra score),
  with the default objective (borderline mass) and with ``objective="errors"``
  (expected number of wrong sides).

All three respect the same max load per assessor.  Common random numbers:
the same truth, first round and per-pair noise table serve all three rules,
so the comparison is paired.  After the extra scores arrive the panel is
recalibrated and the calibrated top ``TOP_K`` compared with the true top
``TOP_K``; the figure is the number of objects on the wrong side of the line
(twice the number of true top-k objects missed).  The table reports its mean
per panel with the Monte Carlo standard error, and the reduction of (iii)
against (i) and (ii) with a paired standard error (delta method).

Goal: >= 15% fewer misclassifications than both (i) and (ii) at 25% extra
reads, never worse in any setting.  Also: the time of ``next_reads`` on a
1,000-object panel (goal <= 2 s).

Measured here (2026-11-23, 500 panels per setting, ``python benchmarks/bench_next_reads.py 500``,
1,062 s on a shared 2-core machine; mean objects on the wrong side of the top-15 line ± MC s.e.):

    extra  random         fewest reads   next_reads     errors objective  next_reads fewer than random / fewest
    10%    6.696 ± 0.109  6.620 ± 0.109  5.836 ± 0.107  5.724 ± 0.099     12.8% ± 1.2% / 11.8% ± 1.2%
    25%    6.168 ± 0.107  6.164 ± 0.106  5.212 ± 0.101  5.128 ± 0.098     15.5% ± 1.4% / 15.4% ± 1.4%
    50%    5.740 ± 0.100  5.592 ± 0.096  4.472 ± 0.097  4.404 ± 0.090     22.1% ± 1.5% / 20.0% ± 1.6%

(``objective="errors"``: 14.5/13.5%, 16.9/16.8%, 23.3/21.2%.)  ``next_reads(10, top_k=100)`` on
1,000 objects x 100 assessors x 3 reads: 0.21 s.

Run: ``python benchmarks/next_reads_ungrouped.py [panels]`` (default ``PANELS``; the table above: 500).
"""
from __future__ import annotations

import math
import sys
import time

import numpy as np
import pandas as pd

import xlcalib
from xlcalib.calibration import suggest_next_reads

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from bench_next_reads import time_large  # noqa: E402  (one timing of next_reads for both benchmarks)

ASSESSORS = 15
OBJECTS = 60
TOP_K = 15
BIAS_SD = 0.8
NOISE_SD = 0.6
EXTRA = (0.10, 0.25, 0.50)
PANELS = 100
SEED = 20261123
RULES = ("random", "fewest reads", "next_reads", "next_reads errors")


def _first_round(rng):
    """2 reads per object by distinct assessors, balanced loads, connected assessor graph."""
    while True:
        slots = np.tile(np.arange(ASSESSORS), math.ceil(2 * OBJECTS / ASSESSORS))[: 2 * OBJECTS]
        rng.shuffle(slots)
        pairs = slots.reshape(OBJECTS, 2)
        if np.any(pairs[:, 0] == pairs[:, 1]):
            continue
        # connectivity of the assessor graph (objects link their two assessors)
        parent = list(range(ASSESSORS))

        def find(x):
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for a, b in pairs:
            parent[find(a)] = find(b)
        if len({find(a) for a in range(ASSESSORS)}) == 1:
            return [(int(a), o) for o in range(OBJECTS) for a in pairs[o]]


def _frame(pairs, v, b, noise):
    a = np.array([p[0] for p in pairs])
    o = np.array([p[1] for p in pairs])
    return pd.DataFrame({"assessor": [f"A{i:02d}" for i in a], "object": [f"P{j:03d}" for j in o],
                         "score": v[o] + b[a] + noise[a, o], "sd": NOISE_SD})


def _wrong_side(result, v) -> int:
    calibrated = result.values["value"].reindex([f"P{j:03d}" for j in range(OBJECTS)]).to_numpy()
    top_true = set(np.argsort(-v, kind="stable")[:TOP_K])
    top_cal = set(np.argsort(-calibrated, kind="stable")[:TOP_K])
    return 2 * len(top_true - top_cal)


def _choose(rule, first, extra, cap, result, rng):
    read = set(first)
    load = np.bincount([a for a, _ in first], minlength=ASSESSORS)
    if rule.startswith("next_reads"):
        objective = "errors" if rule.endswith("errors") else "borderline"
        frame = suggest_next_reads(result, extra, top_k=TOP_K, max_load=cap, objective=objective)
        return [(int(a[1:]), int(o[1:])) for a, o in zip(frame["assessor"], frame["object"])]
    chosen = []
    reads = np.bincount([o for _, o in first], minlength=OBJECTS)
    for _ in range(extra):
        if rule == "random":
            free = [(a, o) for a in range(ASSESSORS) if load[a] < cap for o in range(OBJECTS) if (a, o) not in read]
            a, o = free[rng.integers(len(free))]
        else:
            fewest = reads.min()
            objs = np.flatnonzero(reads == fewest)
            o = int(objs[rng.integers(objs.size)])
            assessors = [a for a in range(ASSESSORS) if load[a] < cap and (a, o) not in read]
            while not assessors:  # that object is read by every assessor with room: next fewest
                reads_masked = reads.astype(float)
                reads_masked[o] = np.inf
                o = int(np.argmin(reads_masked))
                assessors = [a for a in range(ASSESSORS) if load[a] < cap and (a, o) not in read]
            a = assessors[rng.integers(len(assessors))]
        chosen.append((a, o))
        read.add((a, o))
        load[a] += 1
        reads[o] += 1
    return chosen


def simulate(panels: int = PANELS, seed: int = SEED) -> pd.DataFrame:
    """Wrong-side counts per panel, extra share and rule (a tidy table)."""
    rows = []
    root = np.random.default_rng(seed)
    for panel in range(panels):
        rng = np.random.default_rng(root.integers(2**63))
        v = rng.standard_normal(OBJECTS)
        b = BIAS_SD * rng.standard_normal(ASSESSORS)
        noise = NOISE_SD * rng.standard_normal((ASSESSORS, OBJECTS))
        first = _first_round(rng)
        result = xlcalib.calibrate(_frame(first, v, b, noise), sd="sd")
        for share in EXTRA:
            extra = int(round(share * len(first)))
            cap = math.ceil(1.5 * (len(first) + extra) / ASSESSORS)
            for rule in RULES:
                chosen = _choose(rule, first, extra, cap, result, np.random.default_rng([panel, int(share * 100)]))
                assert len(set(chosen) | set(first)) == len(first) + extra
                after = xlcalib.calibrate(_frame(first + chosen, v, b, noise), sd="sd")
                rows.append({"panel": panel, "extra": share, "rule": rule, "wrong_side": _wrong_side(after, v)})
    return pd.DataFrame(rows)


def summarise(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean wrong-side count per rule with MC s.e., and next_reads' paired reduction against (i) and (ii)."""
    out = []
    for share, part in frame.groupby("extra"):
        wide = part.pivot(index="panel", columns="rule", values="wrong_side")
        n = len(wide)
        row = {"extra": f"{share:.0%}", "panels": n}
        for rule in RULES:
            row[rule] = f"{wide[rule].mean():.3f} ± {wide[rule].std(ddof=1) / math.sqrt(n):.3f}"
        for mine in ("next_reads", "next_reads errors"):
            ours = wide[mine].to_numpy(float)
            for rule in ("random", "fewest reads"):
                peer = wide[rule].to_numpy(float)
                ratio = ours.mean() / peer.mean()
                # delta method for 1 - mean(ours)/mean(peer) on paired panels
                resid = ours - ratio * peer
                se = resid.std(ddof=1) / math.sqrt(n) / peer.mean()
                suffix = "" if mine == "next_reads" else " (errors)"
                row[f"fewer than {rule}{suffix}"] = f"{1 - ratio:.1%} ± {se:.1%}"
        out.append(row)
    return pd.DataFrame(out)


def run(panels: int = PANELS):
    started = time.perf_counter()
    table = summarise(simulate(panels))
    elapsed = time.perf_counter() - started
    rows = []
    for _, r in table.iterrows():
        rows.append({"case": f"wrong side of top {TOP_K}/{OBJECTS}, +{r['extra']} reads ({r['panels']} panels)",
                     "ours_s": None, "peer": "random / fewest reads", "peer_s": None, "ratio": None,
                     "note": f"next_reads {r['next_reads']}; random {r['random']}; fewest reads {r['fewest reads']}; "
                             f"fewer than random {r['fewer than random']}, than fewest reads "
                             f"{r['fewer than fewest reads']}; objective='errors': {r['next_reads errors']} "
                             f"({r['fewer than random (errors)']} / {r['fewer than fewest reads (errors)']})"})
    rows[-1]["note"] += f" (simulation {elapsed:.0f} s)"
    t = time_large()
    rows.append({"case": "next_reads(10, top_k=100), 1,000 objects x 100 assessors x 3 reads", "ours_s": t,
                 "peer": None, "peer_s": None, "ratio": None, "note": "goal <= 2 s"})
    return rows


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else PANELS
    started = time.perf_counter()
    table = summarise(simulate(n))
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.to_string(index=False))
    print(f"simulation: {time.perf_counter() - started:.1f} s")
    print(f"next_reads on 1,000 objects: {time_large():.2f} s")
