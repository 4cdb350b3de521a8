"""Does calibration beat what the secretary would otherwise do?  Models against plain averages, known truth.

Simulated panels as they are really run (:func:`xlcalib.calibration.panel.simulate.simulate_panel`):
subjects, each assessor expert in one or two, each object in one, reads drawn among the experts with a
few cross-subject reads (5%) or none (the groups then share no object), whole-point scores clipped to
1-6, High/Medium/Low levels, 12 conflicts.  Assessor bias SD 0, 0.3, 0.5, 0.7; panels of 16 x 80 x 3,
24 x 150 x 4 and 40 x 300 x 5 (assessors x objects x reads).

Part 1 -- error against the truth (gauge removed: both sides centred): RMS of plain averages, of the
fixed fit (MacKay et al. 2017) and of the default model (random assessors), and how many of the true
top k (k = objects / 8) each puts in its top k.  Goals: where assessors differ (bias SD >= 0.3) the
default's RMS <= 0.9 x plain averages, where they do not <= 1.02 x; never fewer of the true top k on
average; panels whose groups share no object calibrated, not refused (the fixed fit refuses them).

Part 2 -- honest uncertainty of the default model: coverage of the 95% value intervals (all objects,
and the true top k), coverage of the 95% rank intervals, how often "above"/"below" decisions at
epsilon = 5% are wrong, and the largest gap between P(above) and the observed share by bin; over the
designs above plus small panels (5 x 20, 10 x 40, 2 reads) and heavy-tailed noise (t, 3 df).

Part 3 -- time of the default model against the fixed fit on large panels (the same machine, one run).

Run: ``python benchmarks/bench_models.py`` (or ``python benchmarks/run_all.py models``); set
``XLCALIB_BENCH_PANELS`` to change the panels per cell (default 8 for part 1, 40 for part 2).
"""
from __future__ import annotations

import os
import time
import warnings

import numpy as np
import pandas as pd

import xlcalib
from xlcalib.calibration.panel.simulate import simulate_panel
from xlcalib.errors import InputError

DESIGNS = [(16, 80, 3), (24, 150, 4), (40, 300, 5)]
BIAS_SDS = [0.0, 0.3, 0.5, 0.7]
DECISION_DESIGNS = [
    ("24 x 150 x 4", dict(n_assessors=24, n_objects=150, reads=4), False),
    ("30 x 200 x 2", dict(n_assessors=30, n_objects=200, reads=2), False),
    ("5 x 20 x 2 (small)", dict(n_assessors=5, n_objects=20, reads=2, n_subjects=2, n_conflicts=0), False),
    ("10 x 40 x 2 (small)", dict(n_assessors=10, n_objects=40, reads=2, n_subjects=2, n_conflicts=0), False),
    ("24 x 150 x 4, t(3) noise", dict(n_assessors=24, n_objects=150, reads=4), True),
    ("8 x 30 x 2, t(3) noise", dict(n_assessors=8, n_objects=30, reads=2, n_subjects=2, n_conflicts=0), True),
]


def _error(estimate: pd.Series, truth: pd.Series, k: int) -> tuple[float, int]:
    est = estimate.reindex(truth.index).to_numpy(dtype=float)
    t = truth.to_numpy()
    rms = float(np.sqrt(np.mean(((est - est.mean()) - (t - t.mean())) ** 2)))
    return rms, len(set(np.argsort(-est)[:k]) & set(np.argsort(-t)[:k]))


def _evaluations(panel, seed: int, heavy: bool) -> pd.DataFrame:
    ev = panel.evaluations.drop(columns="sd")
    if heavy:  # the same design, noise from a t distribution with 3 df scaled to the same SD
        rng = np.random.default_rng(seed)
        sd = panel.evaluations["sd"].to_numpy()
        true = panel.values[ev["object"]].to_numpy() + panel.biases[ev["assessor"]].to_numpy()
        ev = ev.assign(score=np.clip(np.round(true + sd * rng.standard_t(3, len(ev)) / np.sqrt(3)), *panel.scale))
    return ev


def error_rows(panels: int) -> list[dict]:
    rows = []
    for A, O, r in DESIGNS:
        for cross in (0.05, 0.0):
            for bias_sd in BIAS_SDS:
                acc = {"plain": [], "fixed": [], "default": []}
                refused = 0
                for seed in range(panels):
                    p = simulate_panel(A, O, r, bias_sd=bias_sd, cross_reads=cross, seed=seed)
                    ev, k = p.evaluations.drop(columns="sd"), max(2, O // 8)
                    acc["plain"].append(_error(ev.groupby("object")["score"].mean(), p.values, k))
                    acc["default"].append(_error(xlcalib.calibrate(ev).values["value"], p.values, k))
                    try:
                        acc["fixed"].append(_error(xlcalib.calibrate(ev, model="fixed").values["value"], p.values, k))
                    except InputError:
                        refused += 1
                plain = np.mean([x[0] for x in acc["plain"]])
                default = np.mean([x[0] for x in acc["default"]])
                fixed = np.mean([x[0] for x in acc["fixed"]]) if acc["fixed"] else float("nan")
                top = {m: np.mean([x[1] for x in v]) if v else float("nan") for m, v in acc.items()}
                goal = 0.9 if bias_sd >= 0.3 else 1.02
                rows.append({
                    "case": f"{A} x {O} x {r}, {'cross reads 5%' if cross else 'no cross reads'}, bias SD {bias_sd}",
                    "ours_s": None, "peer": "plain averages", "peer_s": None, "ratio": plain / default,
                    "note": (f"RMS plain {plain:.3f}, fixed {fixed:.3f}, default {default:.3f} "
                             f"(default/plain {default / plain:.2f}, goal <= {goal}); true top {max(2, O // 8)} found: "
                             f"plain {top['plain']:.1f}, fixed {top['fixed']:.1f}, default {top['default']:.1f}; "
                             f"fixed refused {refused}/{panels} (unconnected), default refused 0"),
                })
    return rows


def _decision_stats(design: dict, panels: int, heavy: bool) -> dict:
    cover, cover_top, rank_cover = [], [], []
    above_wrong, below_wrong, bins = [], [], []
    for seed in range(panels):
        p = simulate_panel(seed=5000 + seed, **design)
        r = xlcalib.calibrate(_evaluations(p, seed, heavy))
        k = max(2, len(p.values) // 8)
        C = r.biases["total_confidence"]
        target = p.values.reindex(r.values.index) + float((C / C.sum() * p.biases.reindex(C.index)).sum())
        inside = (r.values["lower"] <= target) & (target <= r.values["upper"])
        top = list(p.values.sort_values(ascending=False).index[:k])
        cover.append(inside.mean())
        cover_top.append(inside[top].mean())
        table = r.ranking(top_k=k, draws=2000, seed=seed)
        true_rank = p.values.rank(ascending=False, method="min").reindex(table.index)
        rank_cover.append(((table["rank_lower"] <= true_rank) & (true_rank <= table["rank_upper"])).mean())
        truly = table.index.isin(top)
        above_wrong += list(~truly[table["decision"] == "above"])
        below_wrong += list(truly[table["decision"] == "below"])
        bins.append(pd.DataFrame({"p": table["p_above"], "truth": truly}))
    b = pd.concat(bins)
    b["bin"] = pd.cut(b["p"], [0, 0.05, 0.2, 0.4, 0.6, 0.8, 0.95, 1.0001], include_lowest=True)
    calib = b.groupby("bin", observed=True).agg(p=("p", "mean"), truth=("truth", "mean"), n=("truth", "size"))
    calib = calib[calib["n"] >= 30]
    gap = float((calib["truth"] - calib["p"]).abs().max()) if len(calib) else float("nan")
    return {"cover": np.mean(cover), "cover_top": np.mean(cover_top), "rank": np.mean(rank_cover),
            "above": (np.mean(above_wrong) if above_wrong else float("nan"), len(above_wrong)),
            "below": (np.mean(below_wrong) if below_wrong else float("nan"), len(below_wrong)), "gap": gap}


def decision_rows(panels: int) -> list[dict]:
    rows = []
    for name, design, heavy in DECISION_DESIGNS:
        s = _decision_stats(design, panels, heavy)
        rows.append({"case": f"default model, {name}: honest uncertainty", "ours_s": None, "peer": None,
                     "peer_s": None, "ratio": None,
                     "note": (f"95% value intervals cover {s['cover']:.3f} (true top k {s['cover_top']:.3f}); rank "
                              f"intervals {s['rank']:.3f}; 'above' wrong {s['above'][0]:.3f} of {s['above'][1]}, "
                              f"'below' wrong {s['below'][0]:.4f} of {s['below'][1]} (epsilon 0.05); largest "
                              f"P(above) bin gap {s['gap']:.3f}; {panels} panels")})
    return rows


def time_rows() -> list[dict]:
    import sys

    sys.path.insert(0, os.path.dirname(__file__))
    from bench_calibration import panel

    rows = []
    for A, O in ((200, 4000), (1000, 40000), (2000, 80000)):
        ev = panel(A, O)
        t0 = time.perf_counter()
        xlcalib.calibrate(ev, model="fixed")
        fixed = time.perf_counter() - t0
        t0 = time.perf_counter()
        xlcalib.calibrate(ev)
        default = time.perf_counter() - t0
        rows.append({"case": f"default model, {len(ev):,} evaluations ({A} assessors): values, SEs, decision basis",
                     "ours_s": default, "peer": "the fixed fit (same panel)", "peer_s": fixed, "ratio": fixed / default,
                     "note": "one run each; the default fits the values' model and the decisions' model"})
    return rows


def run() -> list[dict]:
    panels = int(os.environ.get("XLCALIB_BENCH_PANELS", "0")) or None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return error_rows(panels or 8) + decision_rows(panels or 40) + time_rows()


if __name__ == "__main__":
    for row in run():
        print(row["case"], "|", row.get("note", ""), "|", row.get("ours_s"), row.get("peer_s"))
