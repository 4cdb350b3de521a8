"""Calibration benchmarks: national scale (1e6 evaluations) and versus statsmodels WLS with dummies.

Run: ``python benchmarks/bench_calibration.py`` (or ``make bench``).
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys

import numpy as np
import pandas as pd

import xlcalib
from _timing import median_time


def panel(n_assessors: int, n_objects: int, seed: int = 0) -> pd.DataFrame:
    """Random incomplete design: each object read by 2 or 3 distinct assessors, mixed SDs."""
    rng = np.random.default_rng(seed)
    reads = rng.choice([2, 3], n_objects)
    oi = np.repeat(np.arange(n_objects), reads)
    # distinct assessors per object: random offsets from a random start (mod A)
    start = rng.integers(0, n_assessors, n_objects)
    step = rng.integers(1, n_assessors // 3, n_objects)
    position = np.concatenate([np.arange(r) for r in reads]) if n_objects < 10_000 else (
        np.arange(oi.size) - np.repeat(np.cumsum(reads) - reads, reads))
    ai = (np.repeat(start, reads) + position * np.repeat(step, reads)) % n_assessors
    sd = rng.choice([0.5, 1.0, 2.0], oi.size)
    v = rng.normal(5, 1.5, n_objects)
    b = rng.normal(0, 0.7, n_assessors)
    score = v[oi] + b[ai] + sd * rng.standard_normal(oi.size)
    return pd.DataFrame({"assessor": ai, "object": oi, "score": score, "sd": sd})




def _large_case_in_subprocess(kind: str) -> dict:
    """Time + peak RSS of one national-scale fit in a fresh process (peak memory is per process)."""
    code = f"""
import json, resource, time, sys
sys.path.insert(0, {str(__file__.rsplit('/', 1)[0])!r})
from bench_calibration import panel
import xlcalib
frame = panel(5000, 400_000, seed=1)
if {kind!r} == "confidence":
    frame = frame.assign(confidence=1 / frame["sd"] ** 2).drop(columns="sd")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter(); r = xlcalib.calibrate(frame); t = time.perf_counter() - t0
print(json.dumps({{"seconds": t, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "n": len(frame), "mu2": r.stats["mu2"], "components": r.stats["n_components"]}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def wls_dummies(frame: pd.DataFrame):
    import statsmodels.api as sm
    X = pd.get_dummies(frame["object"].astype(str), dtype=float)
    Xa = pd.get_dummies(frame["assessor"].astype(str), dtype=float).iloc[:, 1:]
    return sm.WLS(frame["score"].to_numpy(), np.hstack([X.to_numpy(), Xa.to_numpy()]),
                  weights=1 / frame["sd"].to_numpy() ** 2).fit()


def run() -> list[dict]:
    rows = []
    for kind in ("sd", "confidence"):
        runs = [_large_case_in_subprocess(kind) for _ in range(3)]
        secs = statistics.median(r["seconds"] for r in runs)
        peak = max(r["peak_mb"] for r in runs)
        rows.append({"case": f"1,000,000 evaluations, 5,000 assessors, 400,000 objects ({kind}, incl. mu2 + all bounds)",
                     "ours_s": secs, "peer": "-", "peer_s": None, "ratio": None,
                     "note": f"peak RSS {peak:.0f} MB (whole process incl. data); targets <= 3 s, <= 2 GB"})
    small = panel(60, 1200, seed=2)  # ~3,000 evaluations
    ours = median_time(lambda: xlcalib.calibrate(small), 7)
    peer = median_time(lambda: wls_dummies(small), 3)
    fit = wls_dummies(small)
    r = xlcalib.calibrate(small)
    n_obj = small["object"].nunique()
    v_peer = fit.params[:n_obj]
    b_peer = np.concatenate([[0.0], fit.params[n_obj:]])
    objs = sorted(small["object"].astype(str).unique())
    asses = sorted(small["assessor"].astype(str).unique())
    Ca = r.biases["total_confidence"].rename(index=str).loc[asses].to_numpy()
    shift = Ca @ b_peer / Ca.sum()
    diff = np.max(np.abs(r.values["value"].rename(index=str).loc[objs].to_numpy() - (v_peer + shift)))
    rows.append({"case": f"{len(small):,} evaluations (60 assessors, 1,200 objects), values+biases",
                 "ours_s": ours, "peer": "statsmodels WLS + dummies", "peer_s": peer, "ratio": peer / ours,
                 "note": f"max |value difference| {diff:.1e}; ours includes mu2 and bounds; target ratio >= 50"})
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
