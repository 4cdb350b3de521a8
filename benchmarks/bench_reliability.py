"""Reliability benchmarks: ICC table vs pingouin, bootstrap kRR, Krippendorff alpha vs the krippendorff package."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

import xlcalib
from _timing import median_time




def run() -> list[dict]:
    rows = []
    rng = np.random.default_rng(0)
    n, k = 100_000, 13
    x = rng.normal(size=(n, 1)) + rng.normal(size=(n, k))
    ours = median_time(lambda: xlcalib.icc_table(x), 5)
    long = pd.DataFrame({"item": np.repeat(np.arange(n), k), "rater": np.tile(np.arange(k), n), "score": x.ravel()})
    import pingouin as pg

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peer = median_time(lambda: pg.intraclass_corr(long, targets="item", raters="rater", ratings="score"), 3)
        ref = pg.intraclass_corr(long, targets="item", raters="rater", ratings="score")
    diff = np.max(np.abs(ref["ICC"].to_numpy() - xlcalib.icc_table(x)["ICC"].to_numpy()))
    rows.append({"case": "ICC table, 100,000 items x 13 raters", "ours_s": ours, "peer": "pingouin.intraclass_corr",
                 "peer_s": peer, "ratio": peer / ours, "note": f"max |ICC diff| {diff:.1e}; target ratio >= 20"})

    ws = xlcalib.datasets.wordsim353()
    xlcalib.krr_bootstrap(ws, n_boot=10)
    ours = median_time(lambda: xlcalib.krr_bootstrap(ws, n_boot=1000, seed=0), 5)
    rows.append({"case": "bootstrap kRR, 1,000 replicates, 353 x 13 (WordSim)", "ours_s": ours, "peer": "-",
                 "peer_s": None, "ratio": None, "note": "target <= 1 s"})

    y = rng.integers(1, 8, size=(10_000, 20)).astype(float)
    y[rng.random(y.shape) < 0.3] = np.nan
    import krippendorff

    ours = median_time(lambda: xlcalib.krippendorff_alpha(y, "interval"), 5)
    peer = median_time(lambda: krippendorff.alpha(reliability_data=y.T, level_of_measurement="interval"), 3)
    diff = abs(xlcalib.krippendorff_alpha(y, "interval") - krippendorff.alpha(reliability_data=y.T, level_of_measurement="interval"))
    rows.append({"case": "Krippendorff alpha (interval), 10,000 x 20, 30% missing", "ours_s": ours,
                 "peer": "krippendorff.alpha", "peer_s": peer, "ratio": peer / ours,
                 "note": f"|diff| {diff:.1e}; target ratio >= 1"})
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
