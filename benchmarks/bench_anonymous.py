"""Anonymous reviews (every reviewer reads one paper): is the one-way decision honest, and no worse than averages?

Simulated conferences with a known truth (:func:`xlcalib.calibration.panel.simulate.simulate_anonymous`): 200 to
10,000 papers, 2-5 reviews each (a number per paper drawn uniformly, or fixed), each review by a reviewer who reads
nothing else, reviewer stringency SD 0-0.7, noise SD 0.5-1.5, the judgement recorded as the nearest of the form's
points -- whole points 1-10, or the uneven options 1 / 3 / 6 / 8 of ICLR 2020 ("1: Reject" ... "8: Accept") -- so
the ends are clipped.  Each panel is calibrated as ``xlcalib calibrate`` does an anonymous export: the default
model switches to the one-way model (:mod:`xlcalib.calibration.models.one_way`) with the form's scale declared;
the top eighth is the funding line.

Part 1 -- the table of the no-harm benchmark (``bench_models.py``): coverage of the 95% value intervals (against
the latent value v_o; all papers and the true top k), how often "above"/"below" (epsilon = 5%) were wrong, the
largest gap between P(above) and the observed share in any bin with 30+ papers, RMS error against the truth
(centred) as a ratio to plain averages (goal <= 1), and how many of the true top k each puts in its top k (goal:
as many as plain averages).

Part 2 -- an OpenReview-shaped export of 10^4 papers x 3 anonymous reviews (API 1 review notes as ICLR 2020
wrote them: ``ICLR.cc/2020/Conference/Paper<N>/AnonReviewer<k>``, ratings "1: Reject" / "3: Weak Reject" /
"6: Weak Accept" / "8: Accept"): ``xlcalib calibrate EXPORT --fund K`` end to end -- import, calibrate with the
line, rank and write the result workbook -- in a fresh process (goal <= 5 s on the 2-core machine).

Run: ``python benchmarks/bench_anonymous.py`` (or ``python benchmarks/run_all.py anonymous``);
``XLCALIB_BENCH_PANELS`` sets the panels per design (default 100; 10,000-paper designs run a tenth of them).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import xlcalib
from xlcalib.calibration.panel.simulate import simulate_anonymous

WHOLE = tuple(range(1, 11))
ICLR_2020 = (1, 3, 6, 8)
#: (papers, reads (lowest, highest), reviewer SD, noise SD, the form's points, confidence levels)
DESIGNS = [
    (200, (2, 5), 0.5, 1.0, WHOLE, False),
    (200, (2, 2), 0.7, 1.5, WHOLE, False),
    (200, (2, 5), 0.7, 1.0, ICLR_2020, False),
    (1000, (2, 5), 0.0, 0.5, WHOLE, False),
    (1000, (3, 3), 0.5, 1.0, ICLR_2020, False),
    (1000, (2, 5), 0.35, 1.0, WHOLE, True),
    (1000, (3, 5), 0.7, 1.5, WHOLE, False),
    (10000, (3, 3), 0.5, 1.0, ICLR_2020, False),
]
RATINGS = {1: "1: Reject", 3: "3: Weak Reject", 6: "6: Weak Accept", 8: "8: Accept"}
EXPERIENCE = ("I do not know much about this area.", "I have read many papers in this area.",
              "I have published one or two papers in this area.", "I have published in this field for several years.")


def _centred(x) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return x - x.mean()


def _scale(points) -> tuple | tuple[float, float]:
    """The scale as the import declares a form's: its points when the steps are uneven, else its range."""
    steps = np.diff(np.asarray(points, dtype=float))
    return tuple(points) if np.ptp(steps) > 0 else (points[0], points[-1])


def panel_outcome(design, seed: int, draws: int = 2000) -> dict:
    """One simulated conference calibrated: coverage, decisions against the truth, error against plain averages."""
    O, reads, reviewer_sd, noise_sd, points, levels = design
    p = simulate_anonymous(O, reads, reviewer_sd=reviewer_sd, noise_sd=noise_sd, points=points, levels=levels,
                           seed=seed)
    ev = p.evaluations.drop(columns="sd")
    result = xlcalib.calibrate(ev, scale=_scale(points))
    k = max(2, O // 8)
    truth = p.values
    values = result.values.reindex(truth.index)
    inside = (values["lower"] <= truth) & (truth <= values["upper"])
    top = set(truth.nlargest(k).index)
    plain = ev.groupby("object")["score"].mean().reindex(truth.index)
    ranking = result.ranking(top_k=k, draws=draws, seed=seed)
    truly = ranking.index.isin(list(top))
    return {"cover": float(inside.mean()), "cover_top": float(inside[list(top)].mean()),
            "rms": float(np.sqrt(np.mean((_centred(values["value"]) - _centred(truth)) ** 2))),
            "rms_plain": float(np.sqrt(np.mean((_centred(plain) - _centred(truth)) ** 2))),
            "top": len(top & set(values["value"].nlargest(k).index)), "top_plain": len(top & set(plain.nlargest(k).index)),
            "above": list(~truly[ranking["decision"] == "above"]), "below": list(truly[ranking["decision"] == "below"]),
            "bins": pd.DataFrame({"p": ranking["p_above"].to_numpy(), "truth": truly}), "model": result.stats["model"]}


def largest_bin_gap(bins: pd.DataFrame, least: int = 30) -> float:
    """The largest |observed share - mean P(above)| over the P(above) bins holding at least *least* papers."""
    cut = pd.cut(bins["p"], [0, 0.05, 0.2, 0.4, 0.6, 0.8, 0.95, 1.0001], include_lowest=True)
    table = bins.groupby(cut, observed=True).agg(p=("p", "mean"), truth=("truth", "mean"), n=("truth", "size"))
    table = table[table["n"] >= least]
    return float((table["truth"] - table["p"]).abs().max()) if len(table) else float("nan")


def design_row(design, panels: int) -> dict:
    O, reads, reviewer_sd, noise_sd, points, levels = design
    n = max(panels // 10, 3) if O >= 10_000 else panels
    started = time.perf_counter()
    outcomes = [panel_outcome(design, seed) for seed in range(n)]
    seconds = (time.perf_counter() - started) / n
    above = [x for o in outcomes for x in o["above"]]
    below = [x for o in outcomes for x in o["below"]]
    rms, rms_plain = np.mean([o["rms"] for o in outcomes]), np.mean([o["rms_plain"] for o in outcomes])
    top, top_plain = np.mean([o["top"] for o in outcomes]), np.mean([o["top_plain"] for o in outcomes])
    gap = largest_bin_gap(pd.concat([o["bins"] for o in outcomes]))
    scale = "1/3/6/8" if tuple(points) == ICLR_2020 else f"{points[0]}-{points[-1]}"
    reads_words = f"{reads[0]}" if reads[0] == reads[1] else f"{reads[0]}-{reads[1]}"
    return {"case": f"anonymous {O:,} papers x {reads_words} reads, reviewer SD {reviewer_sd}, noise SD {noise_sd}, "
                    f"scale {scale}{', H/M/L levels' if levels else ''}",
            "ours_s": seconds, "peer": "plain averages", "peer_s": None, "ratio": rms_plain / rms,
            "note": (f"95% value intervals cover {np.mean([o['cover'] for o in outcomes]):.3f} (true top k "
                     f"{np.mean([o['cover_top'] for o in outcomes]):.3f}); 'above' wrong "
                     f"{np.mean(above) if above else float('nan'):.3f} of {len(above)}, 'below' wrong "
                     f"{np.mean(below) if below else float('nan'):.4f} of {len(below)} (epsilon 0.05); largest "
                     f"P(above) bin gap {gap:.3f}; RMS {rms:.3f} vs plain {rms_plain:.3f} (ratio {rms / rms_plain:.2f}, "
                     f"goal <= 1); true top {max(2, O // 8)} found {top:.1f} vs plain {top_plain:.1f}; model "
                     f"{outcomes[0]['model']}; {n} panels")}


def openreview_export(n_papers: int = 10_000, reads: int = 3, seed: int = 0) -> tuple[bytes, int]:
    """ICLR 2020's review notes (API 1), as ``client.get_all_notes`` returns them saved with ``json.dump``: one note
    per review, signed by an anonymous id per paper, the rating and the reviewer's experience as labelled answers.
    Returns (the JSON bytes, the number of reviews)."""
    p = simulate_anonymous(n_papers, (reads, reads), reviewer_sd=0.5, noise_sd=1.0, value_sd=1.5, points=ICLR_2020,
                           seed=seed)
    rng = np.random.default_rng(seed)
    forum = {o: f"{int(x):010x}"[:9] + "Ze" for o, x in zip(p.values.index, rng.integers(0, 2**40, n_papers))}
    notes = []
    for k, (assessor, obj, score) in enumerate(p.evaluations[["assessor", "object", "score"]].itertuples(index=False)):
        paper, reviewer = assessor.split("/")
        notes.append({"id": f"r{k:07d}", "forum": forum[obj], "replyto": forum[obj], "number": k + 1,
                      "invitation": f"ICLR.cc/2020/Conference/{paper}/-/Official_Review",
                      "signatures": [f"ICLR.cc/2020/Conference/{paper}/{reviewer}"],
                      "readers": ["everyone"], "writers": [f"ICLR.cc/2020/Conference/{paper}/{reviewer}"],
                      "content": {"title": "Official Blind Review #1", "rating": RATINGS[int(score)],
                                  "experience_assessment": EXPERIENCE[k % 4],
                                  "review": "The paper proposes a method and evaluates it. " * 12},
                      "cdate": 1_571_000_000_000 + k, "tmdate": 1_572_000_000_000 + k})
    return json.dumps(notes).encode("utf-8"), len(notes)


def export_row() -> dict:
    """``xlcalib calibrate EXPORT --fund K`` on 10^4 papers x 3 reviews, end to end in a fresh process (the median
    of two runs), with the time of each stage from one run in this process."""
    from xlcalib.cli import main

    data, n = openreview_export()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "iclr_notes.json"
        path.write_bytes(data)
        out = Path(folder) / "iclr_calibrated.xlsx"
        command = [sys.executable, "-m", "xlcalib.cli", "calibrate", str(path), "--fund", "2500", "-o", str(out)]
        times = []
        for _ in range(2):
            started = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            times.append(time.perf_counter() - started)
        started = time.perf_counter()
        imported = xlcalib.imports.read_export(path)
        read = time.perf_counter() - started
        started = time.perf_counter()
        result = xlcalib.calibrate(imported.evaluations, scale=(1, 3, 6, 8))
        fit = time.perf_counter() - started
        started = time.perf_counter()
        result.ranking(top_k=2500)
        rank = time.perf_counter() - started
        with open(os.devnull, "w") as quiet:
            stdout, sys.stdout = sys.stdout, quiet
            try:
                main(["calibrate", str(path), "--fund", "2500", "-o", str(out)])
            finally:
                sys.stdout = stdout
        size = out.stat().st_size
    return {"case": f"OpenReview export, 10,000 papers x 3 anonymous reviews ({n:,} notes, {len(data) / 1e6:.0f} MB): "
                    "xlcalib calibrate EXPORT --fund 2500, end to end", "ours_s": float(np.median(times)),
            "peer": None, "peer_s": None, "ratio": None,
            "note": (f"fresh process, median of 2 (goal <= 5 s); in one process: import {read:.2f} s, calibrate "
                     f"{fit:.2f} s, rank with the line {rank:.2f} s; workbook {size / 1e6:.1f} MB")}


def run() -> list[dict]:
    panels = int(os.environ.get("XLCALIB_BENCH_PANELS", "100"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [design_row(design, panels) for design in DESIGNS] + [export_row()]


if __name__ == "__main__":
    for row in run():
        print(row["case"], "|", row["note"], "|", f"{row['ours_s']:.3f} s", flush=True)
