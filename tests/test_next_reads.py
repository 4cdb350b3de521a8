"""Next reads: rank-one covariance updates against recalibration, the Owen's T identity, constraints, CLI, UDF."""
from __future__ import annotations

import functools
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import ndtr, owens_t
from scipy.stats import multivariate_normal

import xlcalib
from xlcalib.calibration.decide.next_reads import _expected_errors, _expected_mass, _State
from xlcalib.errors import InputError

#: These tests check the fixed-effects fit (MacKay et al. 2017) and what is drawn from it against their oracles;
#: the default model has its own tests (test_models.py).
calibrate_fixed = functools.partial(xlcalib.calibrate, model="fixed")


def _panel(seed=1, A=8, O=30, reads=3, sds=(0.5, 1.0, 2.0)):
    rng = np.random.default_rng(seed)
    rows = []
    for o in range(O):
        for a in rng.choice(A, reads, replace=False):
            rows.append((f"a{a}", f"o{o:02d}", float(rng.normal()), float(rng.choice(sds))))
    return pd.DataFrame(rows, columns=["assessor", "object", "score", "sd"])


def _add(frame, pairs, sd=None):
    extra = pd.DataFrame([(a, o, 0.0, sd if sd is not None else 1.0) for a, o in pairs], columns=frame.columns)
    return pd.concat([frame, extra], ignore_index=True)


def _first_pick(result, pick):
    """The first suggested read and the rank-one pieces of it: (a, o, oi, names, state, var_x, cov)."""
    a, o = pick.assessor[0], pick.object[0]
    post, _, _ = result.components[0]
    state = _State(post, post.k)
    names = list(result.values.index)
    ai, oi = list(result.biases.index).index(a), names.index(o)
    var_x, _own = state.pieces(np.array([ai]), np.array([oi]))
    cov = state.covariances(np.arange(len(names)), np.array([ai]), np.array([oi]))[:, 0]
    return a, o, oi, names, state, var_x, cov


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_rank_one_prediction_equals_recalibration(seed):
    """Simple gauge, SDs (w = 1): the predicted SEs after one read equal a refit with the read to 1e-9."""
    frame = _panel(seed)
    result = calibrate_fixed(frame, sd="sd", gauge="simple")
    post, _, _ = result.components[0]
    state = _State(post, post.k)
    np.testing.assert_allclose(np.sqrt(state.var), result.values["se"].to_numpy(), rtol=0, atol=1e-12)
    read = set(zip(frame.assessor, frame.object))
    A, O = len(result.biases), len(result.values)
    rng = np.random.default_rng(seed)
    ai, oi = None, None
    while ai is None or (result.biases.index[ai], result.values.index[oi]) in read:
        ai, oi = int(rng.integers(A)), int(rng.integers(O))
    sd = 0.7
    c = 1 / sd**2
    var_x, own = state.pieces(np.array([ai]), np.array([oi]))
    cov = state.covariances(np.arange(O), np.array([ai]), np.array([oi]))[:, 0]
    predicted = np.sqrt(state.var - c * cov**2 / (1 + c * var_x[0]))
    refit = calibrate_fixed(_add(frame, [(result.biases.index[ai], result.values.index[oi])], sd), sd="sd",
                              gauge="simple")
    np.testing.assert_allclose(predicted, refit.values["se"].reindex(result.values.index).to_numpy(), rtol=0,
                               atol=1e-9)
    # the weighted-gauge sum over all objects (one quadratic form) equals the explicit sum
    omega = rng.random(O)
    red = state.weighted_reduction(omega, np.array([ai]), np.array([oi]), np.array([c]), var_x, own)[0]
    assert red == pytest.approx(float(omega @ (state.var - predicted**2)), rel=1e-10)


def test_weighted_gauge_differences_equal_recalibration():
    """Weighted gauge: gauge-free differences predicted by the rank-one update equal a refit to 1e-9."""
    frame = _panel(4)
    result = calibrate_fixed(frame, sd="sd")
    pick = result.next_reads(1, confidence=1.0)
    a, o, oi, names, state, var_x, cov = _first_pick(result, pick)
    refit = calibrate_fixed(_add(frame, [(a, o)], 1.0), sd="sd")
    for i, j in [(0, 5), (3, 17), (oi, (oi + 1) % len(names))]:
        before = result.difference(names[i], names[j]).se ** 2
        predicted = before - (cov[i] - cov[j]) ** 2 / (1.0 + var_x[0])
        assert np.sqrt(predicted) == pytest.approx(refit.difference(names[i], names[j]).se, abs=1e-9)
        assert predicted < before + 1e-15


def test_greedy_se_after_equals_refit_with_all_earlier_reads():
    frame = _panel(5)
    result = calibrate_fixed(frame, sd="sd", gauge="simple")
    picks = result.next_reads(4, confidence=1.0)
    for i in range(len(picks)):
        pairs = list(zip(picks.assessor[: i + 1], picks.object[: i + 1]))
        refit = calibrate_fixed(_add(frame, pairs, 1.0), sd="sd", gauge="simple")
        assert picks.se_after[i] == pytest.approx(refit.values.at[picks.object[i], "se"], abs=1e-9)
        assert picks.se_before[i] == pytest.approx(result.values.at[picks.object[i], "se"], abs=1e-12)


def test_first_pick_is_the_brute_force_best_for_a_threshold():
    """Small panel: every candidate scored by refitting; the gain is the exact expected drop (Owen's T)."""
    frame = _panel(6, A=5, O=10, reads=2)
    result = calibrate_fixed(frame, sd="sd", gauge="simple")
    X = float(result.values["value"].median())
    se0 = result.values["se"].to_numpy()
    z = (result.values["value"].to_numpy() - X) / se0
    before = float(np.sum(ndtr(z) * (1 - ndtr(z))))
    read = set(zip(frame.assessor, frame.object))
    conf = frame.assign(c=1 / frame.sd**2).groupby("assessor")["c"].median()
    gains = {}
    for a in result.biases.index:
        for o in result.values.index:
            if (a, o) in read:
                continue
            refit = calibrate_fixed(_add(frame, [(a, o)], float(conf[a]) ** -0.5), sd="sd", gauge="simple")
            se1 = refit.values["se"].reindex(result.values.index).to_numpy()
            rho = 1 - se1**2 / se0**2
            gains[(a, o)] = before - float(np.sum(2 * owens_t(z, np.sqrt((1 - rho) / (1 + rho)))))
    best = max(gains, key=gains.get)
    picks = result.next_reads(1, threshold=X, objective="borderline")
    assert (picks.assessor[0], picks.object[0]) == best
    assert picks.gain[0] == pytest.approx(gains[best], abs=1e-9)
    assert picks.p_above[0] == pytest.approx(float(ndtr(z[list(result.values.index).index(best[1])])), abs=1e-12)


@pytest.mark.parametrize("h", [-2.0, -0.7, 0.0, 0.3, 1.5])
@pytest.mark.parametrize("rho", [0.0, 0.2, 0.6, 0.95])
def test_owens_t_pre_posterior_identity(h, rho):
    """E[P'(1-P')] with P' = Phi((h + sqrt(rho) Z)/sqrt(1-rho)) equals 2 T(h, sqrt((1-rho)/(1+rho)))."""
    from scipy.integrate import quad

    def integrand(x):
        p = ndtr((h + np.sqrt(rho) * x) / np.sqrt(1 - rho))
        return p * (1 - p) * np.exp(-x * x / 2) / np.sqrt(2 * np.pi)

    quadrature = quad(integrand, -12, 12, epsabs=1e-13, epsrel=1e-12, limit=200, points=[-h / np.sqrt(rho)]
                      if rho > 0 else None)[0]
    closed = float(_expected_mass(np.array(h), np.array(rho)))
    assert closed == pytest.approx(quadrature, abs=1e-9)
    # Phi(h) - Phi_2(h, h; rho) (scipy's bivariate normal) is the same number
    if rho < 0.99:
        phi2 = multivariate_normal(mean=[0, 0], cov=[[1, rho], [rho, 1]]).cdf([h, h])
        assert closed == pytest.approx(float(ndtr(h) - phi2), abs=1e-6)


@pytest.mark.parametrize("h", [-1.3, 0.0, 0.7])
@pytest.mark.parametrize("rho", [0.05, 0.4, 0.9])
def test_owens_t_expected_wrong_sides_identity(h, rho):
    """E[min(P', 1-P')] equals 2 T(h, sqrt((1-rho)/rho)); rho = 0 gives min(P, 1-P), rho = 1 gives 0."""
    from scipy.integrate import quad

    def integrand(x):
        p = ndtr((h + np.sqrt(rho) * x) / np.sqrt(1 - rho))
        return min(p, 1 - p) * np.exp(-x * x / 2) / np.sqrt(2 * np.pi)

    quadrature = quad(integrand, -12, 12, epsabs=1e-13, epsrel=1e-12, limit=200, points=[-h / np.sqrt(rho)])[0]
    assert float(_expected_errors(np.array(h), np.array(rho))) == pytest.approx(quadrature, abs=1e-9)
    assert float(_expected_errors(np.array(h), np.array(0.0))) == pytest.approx(float(ndtr(-abs(h))), abs=1e-15)
    assert float(_expected_errors(np.array(h), np.array(1.0))) == 0.0  # exact: Owen's T(h, 0) is 0


def test_errors_objective_first_pick_is_brute_force_best():
    frame = _panel(6, A=5, O=10, reads=2)
    result = calibrate_fixed(frame, sd="sd", gauge="simple")
    X = float(result.values["value"].median())
    se0 = result.values["se"].to_numpy()
    z = (result.values["value"].to_numpy() - X) / se0
    read = set(zip(frame.assessor, frame.object))
    gains = {}
    for a in result.biases.index:
        for o in result.values.index:
            if (a, o) not in read:
                refit = calibrate_fixed(_add(frame, [(a, o)], 1.0), sd="sd", gauge="simple")
                rho = 1 - (refit.values["se"].reindex(result.values.index).to_numpy() / se0) ** 2
                gains[(a, o)] = float(np.sum(ndtr(-np.abs(z)) - _expected_errors(z, rho)))
    best = max(gains, key=gains.get)
    picks = result.next_reads(1, threshold=X, confidence=1.0, objective="errors")
    assert (picks.assessor[0], picks.object[0]) == best
    assert picks.gain[0] == pytest.approx(gains[best], abs=1e-9)
    assert "expected wrong sides" in picks.attrs["objective"]


def test_owens_t_at_one_is_the_plain_borderline_mass():
    h = np.linspace(-4, 4, 41)
    np.testing.assert_allclose(owens_t(h, 1.0), ndtr(h) * (1 - ndtr(h)) / 2, atol=1e-15)
    np.testing.assert_allclose(_expected_mass(h, np.zeros_like(h)), ndtr(h) * (1 - ndtr(h)), atol=1e-15)
    np.testing.assert_allclose(_expected_mass(h, np.ones_like(h)), 0.0, atol=1e-15)


def test_monte_carlo_pre_posterior_matches():
    """Simulate the read's score: the average P'(1-P') after refits matches the predicted borderline mass."""
    frame = _panel(7, A=6, O=20)
    result = calibrate_fixed(frame, sd="sd", gauge="simple")
    X = float(result.values["value"].median())
    pick = result.next_reads(1, threshold=X, confidence=1.0, objective="borderline")
    a, o, oi, names, state, var_x, cov = _first_pick(result, pick)
    # predictive distribution of the new score: N(v_o + b_a, var_x + 1); the refit is linear in it
    rng = np.random.default_rng(0)
    fitted = result.values.at[o, "value"] + result.biases.at[a, "bias"]
    masses = []
    for s in fitted + np.sqrt(var_x[0] + 1.0) * rng.standard_normal(400):
        extra = pd.DataFrame([(a, o, s, 1.0)], columns=frame.columns)
        refit = calibrate_fixed(pd.concat([frame, extra], ignore_index=True), sd="sd", gauge="simple")
        zz = (refit.values["value"] - X) / refit.values["se"]
        masses.append(float(np.sum(ndtr(zz) * (1 - ndtr(zz)))))
    z = (result.values["value"].to_numpy() - X) / result.values["se"].to_numpy()
    rho = 1 - (state.var - cov**2 / (1 + var_x[0])) / state.var
    predicted = float(np.sum(_expected_mass(z, rho)))
    assert abs(np.mean(masses) - predicted) < 4 * np.std(masses) / np.sqrt(len(masses)) + 1e-9


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 12), cap=st.integers(9, 14), n_conf=st.integers(0, 20),
       use_candidates=st.booleans(), line=st.sampled_from(["none", "top", "threshold"]))
def test_constraints_respected(seed, k, cap, n_conf, use_candidates, line):
    frame = _panel(seed % 50, A=8, O=30)
    result = calibrate_fixed(frame, sd="sd")
    rng = np.random.default_rng(seed)
    A_names, O_names = list(result.biases.index), list(result.values.index)
    conflicts = [(A_names[rng.integers(8)], O_names[rng.integers(30)]) for _ in range(n_conf)]
    candidates = ([(A_names[rng.integers(8)], O_names[rng.integers(30)]) for _ in range(40)]
                  if use_candidates else None)
    kwargs = {"top": {"top_k": 7}, "threshold": {"threshold": 0.1}, "none": {}}[line]
    picks = result.next_reads(k, candidates=candidates, max_load=cap, conflicts=conflicts, **kwargs)
    pairs = list(zip(picks.assessor, picks.object))
    existing = set(zip(frame.assessor, frame.object))
    assert len(set(pairs)) == len(pairs)
    assert not set(pairs) & existing
    assert not set(pairs) & set(conflicts)
    if candidates is not None:
        assert set(pairs) <= set(candidates)
    load = frame.assessor.value_counts().reindex(A_names, fill_value=0) + pd.Series(
        [a for a, _ in pairs], dtype=object).value_counts().reindex(A_names, fill_value=0)
    over_before = frame.assessor.value_counts() > cap
    assert all(load[a] <= cap or over_before.get(a, False) for a in A_names)
    assert all(not over_before.get(a, False) for a, _ in pairs)
    assert len(picks) == k or picks.attrs["note"]
    assert list(picks.order) == list(range(1, len(picks) + 1))


def test_reproducible_and_ordered():
    frame = _panel(8)
    result = calibrate_fixed(frame, sd="sd")
    first = result.next_reads(6, top_k=8)
    second = calibrate_fixed(frame, sd="sd").next_reads(6, top_k=8)
    pd.testing.assert_frame_equal(first, second)
    assert first.gain.iloc[0] > 0
    assert first.attrs["line"].startswith("top 8")
    assert all(first.reason.str.startswith("Ask ")) and all(first.reason.str.contains("chance of being above the line"))


def test_without_line_reduces_the_largest_standard_errors():
    frame = _panel(9)
    result = calibrate_fixed(frame, sd="sd")
    picks = result.next_reads(1)
    refit = calibrate_fixed(_add(frame, [(picks.assessor[0], picks.object[0])],
                                   float(picks.confidence[0]) ** -0.5), sd="sd")
    drop = float((result.values.se**2).sum() - (refit.values.se.reindex(result.values.index) ** 2).sum())
    assert picks.gain[0] == pytest.approx(drop, rel=0.05)  # the gauge moves a little with the new read
    assert np.isnan(picks.p_above[0])


def test_relative_levels_and_shrinkage_run():
    frame = _panel(10).assign(level=lambda f: np.where(f.sd < 1, "High", np.where(f.sd > 1, "Low", "Medium")))
    result = calibrate_fixed(frame.drop(columns="sd"), level="level")
    picks = result.next_reads(3, top_k=10)
    assert len(picks) == 3 and (picks.se_after < picks.se_before).all()
    shrink = calibrate_fixed(frame.drop(columns="sd"), level="level", model="shrinkage")
    assert len(shrink.next_reads(2, threshold=0.0)) == 2


def test_too_few_possible_reads_noted():
    frame = _panel(11, A=3, O=4, reads=2)
    result = calibrate_fixed(frame, sd="sd")
    picks = result.next_reads(10)
    assert len(picks) == 4 and "only 4 of the 10" in picks.attrs["note"]


def test_many_reads_come_with_the_advice_to_ask_in_rounds():
    """Reads chosen together cannot use each other's scores: from 12 reads with a line the suggestions say to
    ask in rounds of about a sixth, in the attrs, the printed text and the sheet; fewer reads or no line: not."""
    from xlcalib.cli import next_reads_text
    from xlcalib.presentation.panel import next_reads_sheet

    result = calibrate_fixed(_panel(13, A=10, O=40), sd="sd")
    many = result.next_reads(12, top_k=8)
    assert "ask for about 2 at a time" in many.attrs["advice"]
    assert many.attrs["advice"] in next_reads_text(many)
    assert [f"{many.attrs['advice']}."] in next_reads_sheet(many, []).footer
    assert result.next_reads(11, top_k=8).attrs["advice"] == ""
    assert result.next_reads(12).attrs["advice"] == ""  # no line: the reads do not depend on the scores at all


@pytest.mark.parametrize("kwargs, words", [
    ({"k": 0}, "k (number of reads)"),
    ({"k": "many"}, "k (number of reads)"),
    ({"k": 2.5}, "k (number of reads)"),
    ({"k": 2, "top_k": 3, "threshold": 1.0}, "not both"),
    ({"k": 2, "top_k": 0}, "top_k"),
    ({"k": 2, "threshold": "high"}, "threshold"),
    ({"k": 2, "max_load": -1}, "max_load"),
    ({"k": 2, "max_load": {"nobody": 3}}, "nobody"),
    ({"k": 2, "confidence": 0}, "confidence"),
    ({"k": 2, "conflicts": [("ghost", "o01")]}, "ghost"),
    ({"k": 2, "candidates": [("a1", "nothing")]}, "nothing"),
    ({"k": 2, "candidates": [("a1",)]}, "pairs"),
    ({"k": 2, "top_k": 3, "objective": "speed"}, "objective"),
])
def test_bad_arguments_named(kwargs, words):
    result = calibrate_fixed(_panel(12), sd="sd")
    with pytest.raises(InputError, match=re.escape(words)):
        result.next_reads(**kwargs)


def test_disconnected_panel_refused():
    frame = pd.DataFrame({"assessor": ["a", "b", "c", "d"], "object": ["x", "x", "y", "y"],
                          "score": [1.0, 2.0, 3.0, 4.0], "sd": 1.0})
    result = calibrate_fixed(frame, sd="sd", per_component=True)
    with pytest.raises(InputError, match="unconnected groups"):
        result.next_reads(1)


def test_cli_on_demo_workbook(tmp_path, capsys):
    import openpyxl

    from xlcalib.cli import main
    from xlcalib.demo import write_demo_exercise

    path = tmp_path / "demo.xlsx"
    write_demo_exercise(path)
    assert main(["next-reads", str(path), "--reads", "3", "--fund", "10"]) == 0
    out = capsys.readouterr().out
    assert "Next reads for the funding line top 10" in out and out.count(" to read P") == 3
    book = openpyxl.load_workbook(tmp_path / "demo_next_reads.xlsx")
    assert "Next reads" in book.sheetnames and "Values" in book.sheetnames
    rows = [[c.value for c in row] for row in book["Next reads"].iter_rows()]
    header = next(i for i, r in enumerate(rows) if r[:3] == ["order", "ask", "to read"])
    assert [r[0] for r in rows[header + 1:header + 5]] == [1, 2, 3, None]  # three reads, then the lines under them
    assert main(["next-reads", str(path), "--reads", "0"]) == 2
    assert "number of reads" in capsys.readouterr().err
    assert main(["next-reads", str(path), "--reads", "2", "-o", str(tmp_path / "x.csv")]) == 2


def test_udf_matches_core():
    from udf_registry.calibration import calib_next_reads

    frame = _panel(13)
    col = lambda values: [[v] for v in values]  # noqa: E731
    cells = calib_next_reads(col(frame.assessor), col(frame.object), col(frame.score), col(frame.sd), 2, 5)
    core = xlcalib.calibrate(frame, sd="sd").next_reads(2, top_k=5)  # the spreadsheet function fits the default model
    rows = list(cells)
    assert rows[0][:3] == ["order", "assessor", "object"]
    assert [r[1] for r in rows[1:]] == list(core.assessor) and [r[2] for r in rows[1:]] == list(core.object)
