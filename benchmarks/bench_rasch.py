"""The ordinal (many-facet Rasch) model: against an oracle, what it recovers, what its fit statistics find, no harm
where scores pile at an end or follow the linear model, gain where categories are uneven, and its speed.

1. Oracle (girth, the test-only IRT package; skipped with a note when it is not installed): objects crossed with
   5 assessors (girth's items), 1,500 objects, partial credit by assessor.  girth's own integration code at our
   estimates gives our marginal log-likelihood and EAPs (the same integral: agreement to quadrature accuracy);
   girth's ``pcm_mml`` fits a *generalised* partial credit model (a discrimination per assessor, theta N(0, 1)),
   so its step difficulties differ from the Rasch model's by about (a_i - sigma) x the step's distance from the
   mean -- reported in our standard errors; ``grm_mml`` (graded response, another model) ranks the objects.
2. Recovery (20 assessors x 150 objects, expertise-grouped, High/Medium/Low reads): designs from 3 categories,
   severities SD 0.3, 3 reads, to 5 categories, SD 1.0, 5 reads.  Coverage of the 95% intervals of measures and
   severities (across-panel mean, and its Monte Carlo s.e.), thresholds' mean error, the objects' SD.
3. Fit (24 x 240 x 4): a planted erratic assessor (rater discrimination 0.3) and a central-tendency one (thresholds
   three times as far apart; and twice, a milder case): how often each is read as such, and how often a
   well-behaved assessor is flagged.
4. No harm where reads pile at the floor: ordinal panels with most reads in the lowest category -- Spearman of the
   estimates with the true measures for plain averages, the linear default and the rating-scale model; and
   ``scale_use="auto"`` against "off" on linear panels whose reads pile at the floor (auto now refuses gains when
   20% or more of the reads sit at an end).
5. No harm on linear panels, gain on uneven categories: true top 15 of 150 found by plain averages, the linear
   default and the rating-scale model; whole-point linear panels (the linear default's own ground), and ordinal
   panels with uneven category widths.
6. Speed: 10^5 reads (1,000 assessors x 20,000 objects x 5 reads, 5 categories) calibrated with every SE; peer:
   the linear default on the same panel.

Measured here (2026-11-28, shared 2-core machine, the other sessions' jobs running; full run, 30 panels):
see the README ("Scores as ordered categories") for the table; the timing row is the median of 3.

Run: ``python benchmarks/bench_rasch.py [panels]`` or ``python benchmarks/run_all.py rasch``.
"""
from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

import xlcalib
from xlcalib.calibration.panel.simulate import simulate_panel
from xlcalib.calibration.rasch.estimate import SEVERITY_PRIOR_SD
from xlcalib.calibration.rasch.simulate import draw_categories, simulate_crossed_panel, simulate_ordinal_panel

PANELS = 30
SEED = 20261128


def _mean_se(values) -> str:
    v = np.asarray(values, dtype=float)
    return f"{v.mean():.3f} ± {v.std(ddof=1) / np.sqrt(v.size):.3f}"


# ----------------------------------------------------------------------------- 1. oracle
def _crossed_panel(seed: int):
    ev, grid = simulate_crossed_panel(seed)
    return ev.assign(sd=1.0), grid


def oracle_rows() -> list[dict]:
    try:
        import girth
        from girth.unidimensional.polytomous.ability_estimation_poly import _ability_eap_abstract
        from girth.unidimensional.polytomous.partial_integrals_poly import _credit_partial_integral
        from girth.utilities.utils import _get_quadrature_points
        from scipy.stats import norm
    except ImportError:
        return [{"case": "girth oracle", "note": "skipped: girth (test-only oracle, pip install girth) not installed"}]
    ev, grid = _crossed_panel(SEED)
    t0 = time.perf_counter()
    r = xlcalib.calibrate(ev, model="partial-credit", gauge="simple")
    ours_s = time.perf_counter() - t0
    fit = r.fit
    order = [r.severities.index.get_loc(f"I{i}") for i in range(5)]
    steps = (fit.severity[:, None] + fit.thresholds)[order]
    se = np.sqrt(fit.severity_se[:, None] ** 2 + fit.threshold_se**2)[order]
    z, w = _get_quadrature_points(301, -8.0, 8.0)
    weights = norm(0, 1).pdf(z) * w
    part = np.ones((grid.shape[1], z.size))
    for i in range(5):
        part *= _credit_partial_integral(z, np.concatenate([[0.0], (steps[i] - fit.mu) / fit.sigma]), fit.sigma,
                                         grid[i], np.zeros(grid.shape[1], dtype=bool))
    girth_loglik = float(np.log((part * weights).sum(axis=1)).sum())
    ours_loglik = fit.marginal.state.loglik + fit.severity @ fit.severity / (2 * SEVERITY_PRIOR_SD**2)
    eap = fit.mu + fit.sigma * _ability_eap_abstract(part, weights, z)
    mine = r.values.loc[[f"O{o:04d}" for o in range(grid.shape[1])], "measure"].to_numpy()
    t0 = time.perf_counter()
    g = girth.pcm_mml(grid, {"distribution": norm(0, 1).pdf})
    girth_s = time.perf_counter() - t0
    theirs = fit.mu + g["Discrimination"][:, None] * g["Difficulty"]
    gap = np.abs(theirs - steps)
    graded = girth.grm_mml(grid)
    rank = spearmanr(graded["Ability"], mine)[0] if "Ability" in graded else float("nan")
    return [
        {"case": "girth: our likelihood and EAPs by girth's integration", "note":
         f"log-likelihood {girth_loglik:.4f} vs ours {ours_loglik:.4f} (relative difference "
         f"{abs(girth_loglik - ours_loglik) / abs(ours_loglik):.1e}); EAPs max |diff| {np.abs(eap - mine).max():.1e} "
         "logits"},
        {"case": "girth pcm_mml (generalised PCM) step difficulties", "ours_s": ours_s, "peer": "girth.pcm_mml",
         "peer_s": girth_s, "ratio": girth_s / ours_s, "note":
         f"max |diff| {gap.max():.3f} logits = {(gap / se).max():.2f} of our SEs (median {np.median(gap / se):.2f}); "
         f"girth's discriminations {', '.join(f'{a:.2f}' for a in g['Discrimination'])} against our sigma "
         f"{fit.sigma:.2f}"},
        {"case": "girth grm_mml (graded response) objects' order", "note": f"Spearman with our measures {rank:.4f}"},
    ]


# ----------------------------------------------------------------------------- 2. recovery
DESIGNS = ((3, 0.3, 3), (4, 0.6, 4), (5, 1.0, 5), (5, 0.6, 3))


def recovery_rows(panels: int) -> list[dict]:
    rows = []
    for K, severity_sd, reads in DESIGNS:
        cover_m, cover_s, tau_err, sigma = [], [], [], []
        for seed in range(panels):
            p = simulate_ordinal_panel(20, 150, reads, n_categories=K, severity_sd=severity_sd, seed=SEED + seed)
            r = xlcalib.calibrate(p.evaluations, model="rating-scale", gauge="simple")
            tm, ts = p.measures[r.values.index], p.severities[r.severities.index]
            cover_m.append(((tm >= r.values["lower"]) & (tm <= r.values["upper"])).mean())
            cover_s.append(((ts >= r.severities["lower"]) & (ts <= r.severities["upper"])).mean())
            tau_err.append(r.fit.thresholds[0] - p.thresholds)
            sigma.append(r.stats["objects_sd"])
        err = np.mean(tau_err, axis=0)
        rows.append({"case": f"recovery ({panels} panels) {K} categories, severity SD {severity_sd}, {reads} reads",
                     "note":
                     f"95% coverage: measures {_mean_se(cover_m)}, severities {_mean_se(cover_s)}; thresholds' mean "
                     f"error {', '.join(f'{e:+.2f}' for e in err)}; objects' SD {np.mean(sigma):.3f} (true 1)"})
    return rows


# ----------------------------------------------------------------------------- 3. fit
def fit_rows(panels: int) -> list[dict]:
    rows = []
    for spread in (3.0, 2.0):
        erratic, central, false = [], [], []
        rest_in, rest_out = [], []
        for seed in range(panels):
            p = simulate_ordinal_panel(24, 240, 4, n_categories=5, seed=SEED + seed, erratic={0: 0.3},
                                       central={1: spread})
            fit = xlcalib.calibrate(p.evaluations, model="rating-scale").fit_statistics()
            erratic.append(fit.loc["A01", "reading"].startswith("erratic"))
            central.append(fit.loc["A02", "reading"].startswith("too predictable"))
            rest = fit.drop(index=["A01", "A02"])
            false.append((rest["reading"] != "as expected").mean())
            rest_in.append(rest["infit"].median())
            rest_out.append(rest["outfit"].median())
        rows.append({"case": f"fit: planted erratic (slope 0.3) and central (thresholds x{spread:g}) assessors",
                     "note": f"erratic found in {np.mean(erratic):.0%}, central tendency in {np.mean(central):.0%} of "
                             f"{panels} panels; well-behaved assessors flagged {np.mean(false):.1%}; their median "
                             f"infit {np.mean(rest_in):.2f}, outfit {np.mean(rest_out):.2f}"})
    return rows


# ----------------------------------------------------------------------------- 4. floor
def floor_rows(panels: int) -> list[dict]:
    raw, linear, rasch, floor = [], [], [], []
    for seed in range(panels):
        p = simulate_ordinal_panel(24, 150, 4, n_categories=5, object_mean=-2.0, thresholds=[-1.0, 0.0, 1.0, 2.0],
                                   seed=SEED + seed)
        ev, truth = p.evaluations, p.measures
        floor.append((ev["score"] == 1).mean())
        lin = xlcalib.calibrate(ev)
        ra = xlcalib.calibrate(ev, model="rating-scale")
        raw.append(spearmanr(lin.values["raw_mean"], truth[lin.values.index])[0])
        linear.append(spearmanr(lin.values["value"], truth[lin.values.index])[0])
        rasch.append(spearmanr(ra.values["measure"], truth[ra.values.index])[0])
    rows = [{"case": f"floor-heavy ordinal panels ({np.mean(floor):.0%} of reads at the lowest score)", "note":
             f"Spearman with the truth: plain averages {_mean_se(raw)}, linear default {_mean_se(linear)}, "
             f"rating-scale {_mean_se(rasch)}; rating-scale - plain {_mean_se(np.subtract(rasch, raw))}"}]
    for mean in (1.0, 1.8, 2.5, 3.8):
        off, auto, applied, share = [], [], [], []
        for seed in range(max(panels // 2, 4)):
            p = simulate_panel(24, 150, 4, seed=SEED + seed, value_mean=mean, value_sd=1.0)
            ev = p.evaluations.drop(columns="sd")
            share.append((ev["score"] == 1).mean())
            o, a = xlcalib.calibrate(ev), xlcalib.calibrate(ev, scale_use="auto")
            off.append(spearmanr(o.values["value"], p.values[o.values.index])[0])
            auto.append(spearmanr(a.values["value"], p.values[a.values.index])[0])
            applied.append(bool(a.stats["scale_use_applied"]))
        worst = float(np.min(np.subtract(auto, off)))
        rows.append({"case": f"scale_use auto vs off, {np.mean(share):.0%} of reads at the floor", "note":
                     f"gains used in {np.mean(applied):.0%} of panels; Spearman auto - off: mean "
                     f"{np.mean(np.subtract(auto, off)):+.4f}, worst {worst:+.4f}"})
    return rows


# ----------------------------------------------------------------------------- 5. top k
def _found(estimate: pd.Series, truth: pd.Series, k: int) -> int:
    return len(set(truth.sort_values(ascending=False).index[:k]) & set(estimate.sort_values(ascending=False).index[:k]))


def top_k_rows(panels: int, k: int = 15) -> list[dict]:
    rows = []
    cases = (("whole-point linear panels (High/Medium/Low)", None, None),
             ("ordinal panels, even categories, severities SD 0.7", None, 0.7),
             ("ordinal panels, uneven categories (-2, -1.6, 1.4, 2.2), severities SD 1", [-2.0, -1.6, 1.4, 2.2], 1.0),
             ("ordinal panels, uneven categories (-0.3, 0, 0.3, 3), severities SD 1", [-0.3, 0.0, 0.3, 3.0], 1.0))
    for label, thresholds, severity_sd in cases:
        found = {"plain averages": [], "linear default": [], "rating-scale": []}
        for seed in range(panels):
            if severity_sd is None:
                p = simulate_panel(24, 150, 4, seed=SEED + seed)
                ev, truth = p.evaluations.drop(columns="sd"), p.values
            else:
                p = simulate_ordinal_panel(24, 150, 4, n_categories=5, thresholds=thresholds, severity_sd=severity_sd,
                                           seed=SEED + seed)
                ev, truth = p.evaluations, p.measures
            lin, ra = xlcalib.calibrate(ev), xlcalib.calibrate(ev, model="rating-scale")
            found["plain averages"].append(_found(lin.values["raw_mean"], truth, k))
            found["linear default"].append(_found(lin.values["value"], truth, k))
            found["rating-scale"].append(_found(ra.values["measure"], truth, k))
        gain = np.subtract(found["rating-scale"], found["linear default"])
        rows.append({"case": f"true top {k} of 150 found ({panels} panels): {label}", "note":
                     "; ".join(f"{name} {np.mean(v):.2f}" for name, v in found.items())
                     + f"; rating-scale - linear {_mean_se(gain)}"})
    return rows


# ----------------------------------------------------------------------------- 6. speed
def _large_panel():
    rng = np.random.default_rng(SEED)
    A, O, reads, K = 1000, 20_000, 5, 5
    ai = np.argsort(rng.random((O, A)), axis=1)[:, :reads].ravel()
    oi = np.repeat(np.arange(O), reads)
    x = draw_categories(rng, rng.normal(0, 1, O)[oi] - rng.normal(0, 0.6, A)[ai], np.linspace(-1.5, 1.5, K - 1))
    return pd.DataFrame({"assessor": [f"A{a}" for a in ai], "object": [f"P{o}" for o in oi], "score": x + 1.0,
                         "level": "Medium"})


def speed_rows(repeats: int = 3) -> list[dict]:
    ev = _large_panel()
    times, linear = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        r = xlcalib.calibrate(ev, model="rating-scale")
        times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        xlcalib.calibrate(ev)
        linear.append(time.perf_counter() - t0)
    ours, peer = float(np.median(times)), float(np.median(linear))
    return [{"case": "10^5 reads (1,000 x 20,000 x 5, 5 categories), every SE", "ours_s": ours,
             "peer": "linear default, same panel", "peer_s": peer, "ratio": peer / ours,
             "note": f"goal <= 5 s; {r.stats['iterations']} Newton steps; runs {', '.join(f'{t:.2f}' for t in times)} s"}]


def run(panels: int = PANELS) -> list[dict]:
    """Coverage and top-k differences are shares and small counts: twice the panels there (Monte Carlo s.e.)."""
    return (oracle_rows() + recovery_rows(2 * panels) + fit_rows(panels) + floor_rows(panels)
            + top_k_rows(2 * panels) + speed_rows())


if __name__ == "__main__":
    for row in run(int(sys.argv[1]) if len(sys.argv) > 1 else PANELS):
        print(row)
