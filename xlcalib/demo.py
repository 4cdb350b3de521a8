"""The embedded example exercise: a synthetic panel with known true values.

12 assessors, 60 objects, 3-4 reads per object, High/Medium/Low confidence
levels, two harsh and two lenient assessors.  Scores are drawn from the
model itself (s = v + b + sigma*eta with sigma from the default levels), so
the calibrated values can be compared with the truth.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .calibration import DEFAULT_LEVELS

#: The demo exercise's score scale (the panel_calibration template's default); scores are clipped to it.
SCALE = (1, 10)
#: SD (score units) of a "Medium" read in the simulated panel; High/Low follow the default
#: relative confidences (SD = MEDIUM_SD / sqrt(relative confidence)).
MEDIUM_SD = 0.8


def demo_panel(seed: int = 2024, n_assessors: int = 12, n_objects: int = 60):
    """Return (evaluations, true_values, true_biases) for the demo exercise."""
    rng = np.random.default_rng(seed)
    assessors = [f"Assessor {chr(65 + i)}" for i in range(n_assessors)]
    objects = [f"P{j + 1:03d}" for j in range(n_objects)]
    true_values = pd.Series(np.round(rng.normal(6.0, 1.5, n_objects), 2), index=objects, name="true_value")
    bias = rng.normal(0.0, 0.3, n_assessors)
    bias[:2] = [-1.5, -1.2]  # two harsh assessors
    bias[2:4] = [1.3, 1.0]  # two lenient assessors
    bias -= bias.mean()
    true_biases = pd.Series(np.round(bias, 3), index=assessors, name="true_bias")
    level_names = list(DEFAULT_LEVELS)
    rows = []
    load = np.zeros(n_assessors)
    for j, obj in enumerate(objects):
        reads = 3 if rng.random() < 0.6 else 4
        # prefer lightly loaded assessors so the panel stays balanced and connected
        weights = np.exp(-(load - load.min()))
        chosen = rng.choice(n_assessors, reads, replace=False, p=weights / weights.sum())
        load[chosen] += 1
        for a in chosen:
            level = rng.choice(level_names, p=[0.35, 0.45, 0.20])
            sd = MEDIUM_SD / np.sqrt(DEFAULT_LEVELS[level])
            score = true_values[obj] + bias[a] + sd * rng.standard_normal()
            # a real panel cannot score outside its scale (the template's 1..10): clip as a form would
            score = min(max(score, SCALE[0]), SCALE[1])
            rows.append({"Assessor": assessors[a], "Object": obj, "Score": round(float(score), 1), "Level": level})
    return pd.DataFrame(rows), true_values, true_biases


def write_demo_exercise(path, seed: int = 2024):
    """The demo panel entered into the panel_calibration template (plus a Truth sheet), saved atomically.

    Returns (path, evaluations, true_values, true_biases).
    """
    from .templates import BUILDERS, deterministic_bytes, print_ready
    from .workbook import write_bytes_atomically, write_frames

    evaluations, true_values, true_biases = demo_panel(seed)
    wb = print_ready(BUILDERS["panel_calibration"](assessors=len(true_biases), objects=len(true_values), scale=SCALE))
    for sheet, names in (("Assessors", true_biases.index), ("Objects", true_values.index)):
        for r, name in enumerate(names, start=2):
            wb[sheet].cell(row=r, column=1, value=name)
    ev = wb["Evaluations"]
    for r, row in enumerate(evaluations.itertuples(index=False), start=2):
        for c, value in enumerate(row, start=1):
            ev.cell(row=r, column=c, value=value)
    write_frames(wb, {"Truth": pd.DataFrame({"object": true_values.index, "true_value": true_values.to_numpy()})})
    path = write_bytes_atomically(deterministic_bytes(wb), path)
    return path, evaluations, true_values, true_biases


def run_demo(out_dir="demo_output", seed: int = 2024) -> dict:
    """Write the exercise workbook, calibrate it as ``xlcalib calibrate`` does (the same file job), and compare
    with the truth.

    Values are identified only up to a common offset (the gauge), so errors are
    compared after removing their mean: ``rms_raw`` is the RMS error of plain
    per-object averages, ``rms_calibrated`` that of the calibrated values.
    """
    from .exercises import calibrate_file  # the workbook side loads only when the demo runs

    out = Path(out_dir)
    exercise, evaluations, true_values, true_biases = write_demo_exercise(out / "demo_exercise.xlsx", seed)
    run, result_path = calibrate_file(exercise, out / "demo_exercise_calibrated.xlsx")
    result = run.result
    raw = evaluations.groupby("Object")["Score"].mean().reindex(true_values.index)
    calibrated = result.values["value"].reindex(true_values.index)
    err_raw, err_cal = raw - true_values, calibrated - true_values
    rms_raw = float(np.sqrt(np.mean((err_raw - err_raw.mean()) ** 2)))
    rms_cal = float(np.sqrt(np.mean((err_cal - err_cal.mean()) ** 2)))
    # the +- shown next to each value is its standard error; its RMS should match the actual error
    rms_se = float(np.sqrt(np.mean(result.values["se"].reindex(true_values.index) ** 2)))
    return {"rms_se": rms_se, "exercise": exercise, "result_path": result_path, "result": result, "evaluations": evaluations,
            "true_values": true_values, "true_biases": true_biases, "rms_raw": rms_raw, "rms_calibrated": rms_cal}
