"""The embedded example exercise: a synthetic panel with known true values.

12 assessors, 60 objects, 3-4 reads per object, High/Medium/Low confidence
levels, two harsh and two lenient assessors.  Scores are drawn from the
model itself (s = v + b + sigma*eta with sigma from the default levels), so
the calibrated values can be compared with the truth.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .calibration import DEFAULT_LEVELS


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
            sd = DEFAULT_LEVELS[level]
            score = true_values[obj] + bias[a] + sd * rng.standard_normal()
            rows.append({"Assessor": assessors[a], "Object": obj, "Score": round(float(score), 1), "Level": level})
    return pd.DataFrame(rows), true_values, true_biases
