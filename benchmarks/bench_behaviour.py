"""Assessor behaviour: the scale-use fit's speed and worth, and the cost of the fit statistics.

Part 1 -- time.  The scale-use fit (:func:`xlcalib.calibration.models.scale_use.fit_gains`: alternating exact shift
solves and per-assessor regressions, the gains' standard errors from the joint information matrix, Mandel's
test) on 10^5 evaluations (200 assessors x 25,000 objects x 4 reads, 20 subjects, gains N(1, 0.2^2)); goal
<= 2 s.  Peer: what a panel secretary does instead, z-scoring each assessor's scores (pandas groupby).  The fit
statistics (leverage of every read, infit/outfit per assessor) on the same panel, against the calibration
itself.

Part 2 -- worth.  Panels of 24 assessors x 150 objects x 4 reads grouped by expertise (6 subjects), gains
N(1, 0.3^2), biases N(0, 0.5^2), whole-point scores clipped to 1-6: RMS error of the values against the truth
put on the panel's scale (centred and scaled by the mean gain) for the shift-only default model, the scale-use
model, and the mean of per-assessor z-scores (rescaled to the same spread); and how often ``scale_use="auto"``
switches the model on, with gains and without (the test's power and size on these panels).

Measured here (2026-11-25, shared 2-core machine, OPENBLAS_NUM_THREADS=1; multi-threaded BLAS on the loaded
machine is up to 100x slower for the small dense solves):

    scale-use fit, 10^5 evaluations: 1.0-1.5 s, 43 rounds (goal <= 2 s); per-assessor z-scores 0.15-0.3 s
    fit statistics on 10^5 evaluations: 0.11 s (the calibration itself: 0.8 s)
    RMS error of values (40 panels, ± s.e.): shift-only 0.339 ± 0.005, scale-use 0.329 ± 0.004,
    z-scores 0.369 ± 0.005; auto switches scale use on in 100% of panels with gains, 5% without

Run: ``python benchmarks/bench_behaviour.py [panels]`` or ``python benchmarks/run_all.py behaviour``.
"""
from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

import xlcalib
from xlcalib.calibration.panel.data import panel_data
from xlcalib.calibration.models.scale_use import fit_gains
from xlcalib.calibration.panel.simulate import simulate_panel

PANELS = 20
SEED = 20261125


def _zscore_values(ev: pd.DataFrame) -> pd.Series:
    """The secretary's correction: each assessor's scores z-scored, averaged per object."""
    z = ev.groupby("assessor")["score"].transform(lambda s: (s - s.mean()) / (s.std(ddof=0) or 1.0))
    return z.groupby(ev["object"]).mean()


def _rms(estimate: pd.Series, truth: pd.Series) -> float:
    """RMS error after matching location and spread (each method has its own gauge and units)."""
    e = estimate.reindex(truth.index).to_numpy(dtype=float)
    t = truth.to_numpy(dtype=float)
    e = (e - e.mean()) / e.std() * t.std()
    return float(np.sqrt(np.mean((e - (t - t.mean())) ** 2)))


def time_rows() -> list[dict]:
    p = simulate_panel(200, 25_000, 4, n_subjects=20, gain_sd=0.2, seed=SEED)
    ev = p.evaluations.drop(columns="sd")
    data = panel_data(ev)
    t0 = time.perf_counter()
    fit = fit_gains(data)
    ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    _zscore_values(ev)
    peer = time.perf_counter() - t0
    rows = [{"case": "scale-use fit, 10^5 evaluations", "ours_s": ours, "peer": "per-assessor z-scores",
             "peer_s": peer, "ratio": peer / ours,
             "note": f"goal <= 2 s; {fit.iterations} rounds; test {fit.test_text()}"}]
    t0 = time.perf_counter()
    result = xlcalib.calibrate(ev)
    fit_time = time.perf_counter() - t0
    t0 = time.perf_counter()
    result.fit_statistics()
    stats_time = time.perf_counter() - t0
    rows.append({"case": "fit statistics, 10^5 evaluations", "ours_s": stats_time, "peer": "the calibration itself",
                 "peer_s": fit_time, "ratio": fit_time / stats_time, "note": "leverage of every read, infit/outfit"})
    return rows


def worth_rows(panels: int) -> list[dict]:
    errors = {"shift-only": [], "scale-use": [], "z-scores": []}
    switched = {"with gains": [], "without gains": []}
    for seed in range(panels):
        for label, gain_sd in (("with gains", 0.3), ("without gains", 0.0)):
            p = simulate_panel(24, 150, 4, gain_sd=gain_sd, seed=SEED + seed)
            ev = p.evaluations.drop(columns="sd")
            auto = xlcalib.calibrate(ev, scale_use="auto")
            switched[label].append(bool(auto.stats["scale_use_applied"]))
            if gain_sd:
                errors["shift-only"].append(_rms(xlcalib.calibrate(ev).values["value"], p.values))
                errors["scale-use"].append(_rms(xlcalib.calibrate(ev, scale_use="on").values["value"], p.values))
                errors["z-scores"].append(_rms(_zscore_values(ev), p.values))
    note = "; ".join(f"{k} {np.mean(v):.3f} ± {np.std(v) / np.sqrt(len(v)):.3f}" for k, v in errors.items())
    return [{"case": f"RMS error of values, {panels} panels with gains", "note": note},
            {"case": "scale_use='auto' switches on",
             "note": "; ".join(f"{k}: {np.mean(v):.0%}" for k, v in switched.items())}]


def run(panels: int = PANELS) -> list[dict]:
    return time_rows() + worth_rows(panels)


if __name__ == "__main__":
    for row in run(int(sys.argv[1]) if len(sys.argv) > 1 else PANELS):
        print(row)
