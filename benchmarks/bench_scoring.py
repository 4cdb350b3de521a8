"""evaluation_metrics on a million responses vs the naive scikit-learn/scipy path."""
from __future__ import annotations


import numpy as np

import xlcalib
from _timing import median_time


def naive(h, m):
    from scipy.stats import pearsonr
    from sklearn.metrics import cohen_kappa_score, mean_squared_error, r2_score

    hr, mr = np.rint(h).astype(int), np.rint(m).astype(int)
    return {
        "exact": 100 * np.mean(hr == mr), "adjacent": 100 * np.mean(np.abs(hr - mr) <= 1),
        "kappa": cohen_kappa_score(hr, mr), "qwk": cohen_kappa_score(hr, mr, weights="quadratic"),
        "r": pearsonr(h, m)[0], "smd": (m.mean() - h.mean()) / h.std(ddof=1),
        "mse": mean_squared_error(h, m), "r2": r2_score(h, m),
    }




def run() -> list[dict]:
    rng = np.random.default_rng(0)
    n = 1_000_000
    h = rng.integers(1, 7, n).astype(float)
    m = np.clip(h + rng.normal(0, 0.7, n), 1, 6)
    ours = median_time(lambda: xlcalib.evaluation_metrics(h, m), 5)
    peer = median_time(lambda: naive(h, m), 3)
    e, p = xlcalib.evaluation_metrics(h, m), naive(h, m)
    diff = max(abs(e["kappa"] - p["kappa"]), abs(e["r"] - p["r"]), abs(e["r2"] - p["r2"]))
    return [{"case": "evaluation_metrics, 1,000,000 responses", "ours_s": ours, "peer": "sklearn/scipy naive path",
             "peer_s": peer, "ratio": peer / ours,
             "note": f"max |diff| kappa/r/r2 {diff:.1e} (rsmtool itself not installed: heavy dependency tree)"}]


if __name__ == "__main__":
    for row in run():
        print(row)
