"""Growth of the calibration fit from 10^4 to 10^7 evaluations: time and peak memory per evaluation, and where
the time goes.

Each size runs in a fresh process (peak memory is per process), warm (the package imported and one small panel
fitted first, as pyfixest is warmed in ``bench_calibration``).  The panels are the random incomplete designs of
``bench_calibration.panel`` (2 or 3 reads per object, SDs 0.5/1/2, integer ids so that the growth of the fit is
not mixed with the growth of text-id parsing, which ``bench_calibration`` measures at 10^6).

Two series:

* **assessors capped** -- assessors = N/200 up to 5,000 (the national panel's count), objects = N/2.5.  Below
  the cap the dense reduced system (assessors x assessors: Cholesky and the diagonal of its inverse, cubic in
  assessors) grows faster than N; at the cap it is a fixed cost and the per-evaluation time falls towards the
  linear part (ids, the Laplacian's sparse products, the tables).
* **beyond the dense limit** -- 20,000 assessors at 10^6 evaluations: above ``graph.DENSE_ASSESSOR_LIMIT`` (6,000)
  the reduced system is solved iteratively (conjugate gradients) and the standard errors come from perturbation
  draws, each a full solve; this is where growth stops being near-linear (no maintained sparse Cholesky is in
  the project's dependencies; a random design's reduced system fills in almost completely anyway).

Run: ``python benchmarks/bench_growth.py`` (about 3 minutes on two cores) or ``make bench``.
"""
from __future__ import annotations

import json
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent

#: (evaluations, assessors, model) per case; the last is beyond the dense limit.
CASES = (
    (10_000, 50, "fixed"), (100_000, 500, "fixed"), (1_000_000, 5_000, "fixed"), (10_000_000, 5_000, "fixed"),
    (10_000, 50, "random-assessors"), (100_000, 500, "random-assessors"), (1_000_000, 5_000, "random-assessors"),
    (1_000_000, 20_000, "fixed"),
)

#: Stages reported, each the cumulative profile time of one function (file suffix, function name).
STAGES = (
    ("checks+ids", "calibration/data.py", "panel_data"),
    ("components", "calibration/graph.py", "components"),
    ("laplacian", "calibration/graph.py", "reduced_laplacian"),
    ("cholesky", "scipy/linalg/_decomp_cholesky.py", "_cholesky"),
    ("SEs", "calibration/posterior.py", "variances"),
    ("mu2", "calibration/graph.py", "mu2"),
    ("tables", "calibration/fit.py", "_tables"),
)

_CHILD = """
import cProfile, json, pstats, resource, sys, time
sys.path.insert(0, {here!r})
from bench_calibration import panel
import xlcalib
xlcalib.calibrate(panel(20, 200, seed=0), model={model!r})  # warm: imports, caches
frame = panel({assessors}, {objects}, seed=1)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
times = []
for _ in range({repeats}):  # the median of several runs where a run is short (a shared machine's load drifts)
    t0 = time.perf_counter(); xlcalib.calibrate(frame, model={model!r}); times.append(time.perf_counter() - t0)
seconds = sorted(times)[len(times) // 2]
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
stages = {{}}
if {profile!r}:
    profiler = cProfile.Profile(); profiler.enable(); xlcalib.calibrate(frame, model={model!r}); profiler.disable()
    table = pstats.Stats(profiler).stats
    for label, suffix, name in {stages!r}:
        stages[label] = sum(row[3] for (path, _line, func), row in table.items()
                            if func == name and path.replace(chr(92), "/").endswith(suffix))
    stages["whole (profiled)"] = sum(row[3] for (path, _l, func), row in table.items()
                                     if func == "calibrate" and path.endswith("calibration/fit.py"))
print(json.dumps({{"n": len(frame), "seconds": seconds, "peak_mb": peak / 1024, "data_mb": base / 1024,
                  "stages": stages}}))
"""


def _case(evaluations: int, assessors: int, model: str, profile: bool = True) -> dict:
    code = _CHILD.format(here=str(HERE), model=model, assessors=assessors, objects=int(evaluations / 2.5),
                         profile=profile, stages=STAGES,
                         repeats=7 if evaluations <= 100_000 else 1)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _where(stages: dict) -> str:
    whole = stages.pop("whole (profiled)", 0.0) or 1.0
    shares = sorted(((v / whole, k) for k, v in stages.items() if v > 0), reverse=True)
    rest = max(0.0, 1.0 - sum(s for s, _ in shares))
    return ", ".join(f"{k} {s:.0%}" for s, k in shares[:4]) + f", rest {rest:.0%}"


def run() -> list[dict]:
    rows = []
    for evaluations, assessors, model in CASES:
        print(f"#   growth: {evaluations:,} evaluations, {assessors:,} assessors, {model} ...", file=sys.stderr,
              flush=True)
        # the iterative case is profiled only at its own cost once (it is the slow one)
        got = _case(evaluations, assessors, model, profile=assessors <= 6000)
        case = f"growth: {evaluations:,} evaluations, {assessors:,} assessors, model {model}"
        if "error" in got:
            rows.append({"case": case, "ours_s": None, "note": f"failed: {got['error']}"})
            continue
        per_eval_us = got["seconds"] / got["n"] * 1e6
        fit_mb = max(0.0, got["peak_mb"] - got["data_mb"])
        where = _where(got["stages"]) if got["stages"] else "not profiled"
        rows.append({"case": case, "ours_s": got["seconds"], "peer": "-", "peer_s": None, "ratio": None,
                     "note": f"{per_eval_us:.2f} us/evaluation; peak RSS {got['peak_mb']:.0f} MB "
                             f"({fit_mb * 2**20 / got['n']:.0f} bytes/evaluation over the data); {where}"})
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
