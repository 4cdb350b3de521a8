"""Round trip: long table -> written in each system's shape -> imported -> the identical long table.

A property test over random panels (hypothesis): row order and column order of the export never matter.
Then one end-to-end test per shape, up to a calibrated ranking.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import xlcalib
from xlcalib.imports import read_export

from .imports_writers import CONFIDENCE_LEVELS, cmt_xml, easychair_csv, grid_csv, hotcrp_csv, openreview_json

SHAPES = ("hotcrp", "hotcrp-letters", "cmt", "easychair", "openreview", "grid")


def random_panel(seed: int, n_assessors: int, n_objects: int, reads: int, low: int, high: int) -> pd.DataFrame:
    """Each object read by `reads` distinct assessors; integer scores on low..high; levels Low/Medium/High."""
    rng = np.random.default_rng(seed)
    rows = []
    for o in range(n_objects):
        for a in rng.choice(n_assessors, size=min(reads, n_assessors), replace=False):
            rows.append((f"rev{a}@example.org", f"P{o + 1:03d}", int(rng.integers(low, high + 1)),
                         ["Low", "Medium", "High"][int(rng.integers(0, 3))]))
    return pd.DataFrame(rows, columns=["assessor", "object", "score", "level"])


def export_and_read(long: pd.DataFrame, shape: str, rng, low: int, high: int):
    levels = dict(CONFIDENCE_LEVELS)
    if shape == "hotcrp":
        return read_export(hotcrp_csv(long, rng), scale=f"{low}-{high}", confidence_levels=levels)
    if shape == "hotcrp-letters":
        letters = tuple(chr(65 + i) for i in range(high - low + 1))  # A best
        shifted = long.assign(score=long["score"] - low + 1)
        result = read_export(hotcrp_csv(shifted, rng, letters), scale=", ".join(letters), confidence_levels=levels)
        result.evaluations["score"] += low - 1
        return result
    if shape == "cmt":
        return read_export(cmt_xml(long, rng), confidence_levels=levels, scale=f"{low}..{high}")
    if shape == "easychair":
        return read_export(easychair_csv(long, rng), confidence_levels=levels, scale=f"{low}..{high}")
    if shape == "openreview":
        data, identity = openreview_json(long, rng)
        return read_export(data, identity_map=identity, confidence_levels=levels, scale=f"{low}..{high}")
    return read_export(grid_csv(long, rng), confidence_levels=levels, scale=f"{low}..{high}")


def canonical(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame[["assessor", "object", "score", "level"]].astype({"score": float})
    return out.sort_values(["object", "assessor"]).reset_index(drop=True)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n_assessors=st.integers(2, 9), n_objects=st.integers(1, 15),
       reads=st.integers(1, 4), low=st.integers(-3, 1), span=st.integers(1, 9), shape=st.sampled_from(SHAPES))
@example(seed=0, n_assessors=2, n_objects=1, reads=2, low=0, span=1, shape="grid")  # a one-row grid (found in Pyodide)
def test_round_trip_every_shape(seed, n_assessors, n_objects, reads, low, span, shape):
    long = random_panel(seed, n_assessors, n_objects, reads, low, low + span)
    result = export_and_read(long, shape, np.random.default_rng(seed + 1), low, low + span)
    pd.testing.assert_frame_equal(canonical(result.evaluations), canonical(long))
    assert result.report.empty
    again = export_and_read(long, shape, np.random.default_rng(seed + 2), low, low + span)  # another order
    pd.testing.assert_frame_equal(canonical(again.evaluations), canonical(long))


def connected_panel(seed: int = 3) -> pd.DataFrame:
    """12 objects, 6 assessors, each object read by 3 (a cyclic design: connected), scores 1..9."""
    rng = np.random.default_rng(seed)
    bias = np.array([-1.0, -0.5, 0.0, 0.0, 0.5, 1.0])
    value = np.linspace(2.5, 7.5, 12)
    rows = []
    for o in range(12):
        for a in ((o + k) % 6 for k in range(3)):
            s = int(np.clip(np.rint(value[o] + bias[a] + rng.normal(0, 0.4)), 1, 9))
            rows.append((f"rev{a}@example.org", f"P{o + 1:03d}", s, ["Low", "Medium", "High"][(o + a) % 3]))
    return pd.DataFrame(rows, columns=["assessor", "object", "score", "level"])


@pytest.mark.parametrize("shape", SHAPES)
def test_end_to_end_to_a_ranking(shape):
    long = connected_panel()
    result = export_and_read(long, shape, np.random.default_rng(11), 1, 9)
    fit = xlcalib.calibrate(result.evaluations)
    direct = xlcalib.calibrate(long)
    np.testing.assert_allclose(fit.values.loc[direct.values.index, "value"], direct.values["value"], rtol=1e-9)
    ranking = fit.ranking(top_k=4, draws=500, seed=1)
    expected = direct.ranking(top_k=4, draws=500, seed=1)
    assert sorted(ranking.index) == sorted(long["object"].unique())
    pd.testing.assert_series_equal(ranking["rank"], expected.loc[ranking.index, "rank"])
