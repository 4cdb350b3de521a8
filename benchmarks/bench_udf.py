"""CALIB_VALUES as Excel calls it: 900 evaluations (30 assessors x 300 objects x 3 reads)."""
from __future__ import annotations

import statistics
import time

import numpy as np


def run() -> list[dict]:
    from udf_registry import calibration as fam
    from udf_registry.registry import REGISTRY

    f = REGISTRY["CALIB_VALUES"].func
    rng = np.random.default_rng(0)
    rows = [(f"A{(o + d * 7) % 30}", f"P{o}") for o in range(300) for d in range(3)]
    a = [[r[0]] for r in rows]
    o = [[r[1]] for r in rows]
    s = [[float(x)] for x in rng.normal(5, 1, 900).round(1)]
    lv = [[["High", "Medium", "Low"][i % 3]] for i in range(900)]
    cold, warm = [], []
    for i in range(15):
        fam._cache.clear()
        s_i = [[v[0] + 0.001 * i] for v in s]
        t0 = time.perf_counter()
        f(a, o, s_i, lv)
        cold.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        f(a, o, s_i, lv)
        warm.append(time.perf_counter() - t0)
    return [
        {"case": "CALIB_VALUES, 900 evaluations, new inputs (parse + solve + bounds)", "ours_s": statistics.median(cold),
         "peer": "-", "peer_s": None, "ratio": None, "note": "target <= 10 ms"},
        {"case": "CALIB_VALUES, same inputs again (solve cache hit)", "ours_s": statistics.median(warm),
         "peer": "-", "peer_s": None, "ratio": None, "note": "target <= 1 ms"},
    ]


if __name__ == "__main__":
    for row in run():
        print(row)
