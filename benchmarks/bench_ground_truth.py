"""Uncertain ground truth on the 1,947 dermatology cases: PrIRN certainty and the PL Gibbs sampler."""
from __future__ import annotations

import statistics
import time

import numpy as np

from xlcalib import ground_truth as gt


def run() -> list[dict]:
    d = gt.dermatology()
    plaus = gt.irn(d.annotations, d.n_classes)
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        gt.certainty_from_concentration(3.0 * plaus, 1000, 0)
        times.append(time.perf_counter() - t0)
    rows = [{"case": "PrIRN annotation certainty, all 1,947 cases, M = 1,000", "ours_s": statistics.median(times),
             "peer": "-", "peer_s": None, "ratio": None, "note": "one reliability"}]
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        gt.prirn_certainty(d.annotations, d.n_classes, 3.0, 1000, 0, setting="reference")
        times.append(time.perf_counter() - t0)
    rows.append({"case": "PrIRN certainty, setting='reference' (0.01 on all 419 classes), 1,947 cases, M = 1,000",
                 "ours_s": statistics.median(times), "peer": "-", "peer_s": None, "ratio": None,
                 "note": "unnamed classes via exact exchangeable order counts, not 419 gammas per sample"})
    rng = np.random.default_rng(0)
    cases = [d.annotations[i] for i in rng.choice(len(d.annotations), 60, replace=False)]
    t0 = time.perf_counter()
    for i, case in enumerate(cases):
        gt.pl_gibbs(case, d.n_classes, samples=1000, burn_in=100, chains=50, seed=i)
    elapsed = time.perf_counter() - t0
    per_case = elapsed / len(cases)
    rows.append({"case": "PL Gibbs, 1,000 samples (50 chains x 20 + 100 burn-in) per case, 60 random cases",
                 "ours_s": per_case, "peer": "-", "peer_s": None, "ratio": None,
                 "note": f"{1000 / per_case:,.0f} samples/s per case; projected all 1,947 cases: {per_case * 1947 / 60:.1f} min"})
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
