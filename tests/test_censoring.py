"""Scores at the ends of a declared scale read as "this or beyond" (calibration.censoring) in the decision basis."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import xlcalib
from xlcalib.calibration.panel.censoring import grid_tail_moments, scale_ends, truncated_moments
from xlcalib.calibration.panel.simulate import simulate_panel
from xlcalib.errors import InputError


def test_truncated_moments_match_scipy():
    mu = np.array([0.3, -1.0, 2.0, 5.0, 0.0])
    sd = np.array([0.5, 1.2, 0.8, 0.4, 2.0])
    cut = np.array([0.0, 1.0, 1.5, 4.0, -30.0])
    upper = np.array([True, True, False, False, True])
    mean, var = truncated_moments(mu, sd, cut, upper)
    for i in range(mu.size):
        a, b = ((cut[i] - mu[i]) / sd[i], np.inf) if upper[i] else (-np.inf, (cut[i] - mu[i]) / sd[i])
        oracle = stats.truncnorm(a, b, loc=mu[i], scale=sd[i])
        assert mean[i] == pytest.approx(oracle.mean(), rel=1e-9, abs=1e-12)
        assert var[i] == pytest.approx(oracle.var(), rel=1e-7, abs=1e-12)
    # a cut-off far into the tail: the limits, not NaN
    far_mean, far_var = truncated_moments(np.array([0.0]), np.array([1.0]), np.array([40.0]), np.array([True]))
    assert np.isfinite(far_mean).all() and far_mean[0] == pytest.approx(40.0, abs=0.05) and 0 <= far_var[0] < 1e-3


def test_grid_tail_moments_by_direct_sums():
    """The score beyond an end on a grid: its points' probabilities summed by hand (upper and lower ends)."""
    from scipy.special import ndtr

    mu, sd, h = 5.2, 0.9, 0.5
    points = 6.0 + h * np.arange(200)
    p = np.array([ndtr((x + h / 2 - mu) / sd) - ndtr((x - h / 2 - mu) / sd) for x in points])  # each point's cell
    p = p / (1 - ndtr((6.0 - h / 2 - mu) / sd))  # given the end or beyond
    mean, var = grid_tail_moments(np.array([mu, 2 * 1.0 - mu]), np.array([sd, sd]), np.array([6.0, 2 * 1.0 - 6.0]),
                                  np.array([True, False]), h)
    assert mean[0] == pytest.approx(p @ points, rel=1e-12)
    assert var[0] == pytest.approx(p @ points**2 - (p @ points) ** 2, rel=1e-9)
    assert mean[1] == pytest.approx(2.0 - mean[0], rel=1e-12) and var[1] == pytest.approx(var[0], rel=1e-12)
    # a judgement far inside the scale: the score is the end itself
    inside_mean, inside_var = grid_tail_moments(np.array([-50.0]), np.array([0.5]), np.array([6.0]),
                                                np.array([True]), 1.0)
    assert inside_mean[0] == 6.0 and inside_var[0] == 0.0  # exact: the tail underflows, all weight on the end point


def test_scale_ends():
    assert scale_ends(np.array([2.0, 3.0]), None, 1.0) is None
    assert scale_ends(np.array([2.0, 3.0]), (1, 6), 1.0) is None
    ends = scale_ends(np.array([1.0, 6.0, 4.0]), (1, 6), 1.0)
    assert ends.low.tolist() == [True, False, False] and ends.high.tolist() == [False, True, False]
    assert int(ends.censored.sum()) == 2


@pytest.fixture(scope="module")
def clipped_panels():
    """Whole-point panels clipped to 1-6: the noise scale w of the decision basis, scale declared and not."""
    out = {"declared": [], "not": []}
    for seed in range(12):
        ev = simulate_panel(24, 150, 4, seed=seed, n_conflicts=0).evaluations.drop(columns="sd")
        out["not"].append(xlcalib.calibrate(ev).decision_basis().posterior.w)
        out["declared"].append(xlcalib.calibrate(ev, scale=(1, 6)).decision_basis().posterior.w)
    return {k: np.array(v) for k, v in out.items()}


def test_censored_reads_restore_the_noise_scale(clipped_panels):
    """Clipping at the ends makes the reads scatter less than they would: w about 5% too small when the end
    scores are taken as exact.  Read as censored, w comes back to the truth (0.7^2 = 0.49 for a Medium read):
    the same panels, so the difference is paired."""
    gap = clipped_panels["declared"] - clipped_panels["not"]
    assert gap.min() > 0  # every panel: censored reads add scatter back
    assert clipped_panels["not"].mean() < 0.47
    assert abs(clipped_panels["declared"].mean() - 0.49) < 0.015


def test_scale_without_end_scores_changes_nothing():
    ev = simulate_panel(12, 40, 3, seed=2, n_conflicts=0).evaluations.drop(columns="sd")
    low, high = ev["score"].min(), ev["score"].max()
    plain = xlcalib.calibrate(ev).ranking(top_k=5, draws=500, seed=1)
    wide = xlcalib.calibrate(ev, scale=(low - 1, high + 1)).ranking(top_k=5, draws=500, seed=1)
    pd.testing.assert_frame_equal(plain, wide, rtol=0, atol=1e-12)


def test_an_object_scored_at_the_top_by_all_ranks_at_or_above_it():
    """Three reads of 6 say "6 or more" three times: the basis ranks the object higher than when they are taken
    as exact 6s."""
    ev = simulate_panel(16, 80, 3, seed=4, n_conflicts=0).evaluations.drop(columns="sd")
    top = ["P007", "P050"]
    ev.loc[ev["object"].isin(top), "score"] = 6.0
    exact, censored = (xlcalib.calibrate(ev, scale=scale) for scale in (None, (1, 6)))
    where = [exact.values.index.get_loc(o) for o in top]
    assert (censored.decision_basis().values[where] > exact.decision_basis().values[where] + 0.05).all()
    # the values' own fit (the Values and Ranking "value" columns) takes the scores as given
    assert censored.values.loc[top, "value"].tolist() == exact.values.loc[top, "value"].tolist()


def test_the_fixed_model_and_the_values_are_unchanged_by_the_scale():
    """Only the decision basis reads ends as censored: the values' fit, and the fixed model's decisions, are the
    scores' own fit."""
    ev = simulate_panel(12, 40, 3, seed=2, n_conflicts=0).evaluations.drop(columns="sd")
    for model in ("random-assessors", "fixed"):
        a, b = xlcalib.calibrate(ev, model=model), xlcalib.calibrate(ev, model=model, scale=(1, 6))
        pd.testing.assert_frame_equal(a.values, b.values, rtol=0, atol=0)
    a = xlcalib.calibrate(ev, model="fixed").ranking(top_k=5, draws=500, seed=1)
    b = xlcalib.calibrate(ev, model="fixed", scale=(1, 6)).ranking(top_k=5, draws=500, seed=1)
    pd.testing.assert_frame_equal(a, b, rtol=0, atol=0)


@pytest.mark.parametrize("scale, words", [((6, 1), "must be below"), ((1,), "two numbers"), ("1-6", "two numbers"),
                                          ((1, 5), "rows .* of the evaluations: score 6")])
def test_bad_scales_are_refused_in_words(scale, words):
    ev = simulate_panel(12, 40, 3, seed=2, n_conflicts=0).evaluations.drop(columns="sd")
    with pytest.raises(InputError, match=words):
        xlcalib.calibrate(ev, scale=scale)


def test_the_command_line_declares_the_scale(tmp_path, capsys):
    """A CSV panel takes ``--scale``: the Diagnostics say how the end scores were read, and a score off the
    declared scale is refused at its cell."""
    import json

    from xlcalib.cli import main

    ev = simulate_panel(12, 40, 3, seed=2, n_conflicts=0).evaluations.drop(columns="sd")
    src = tmp_path / "panel.csv"
    ev.to_csv(src, index=False)
    out = tmp_path / "r.json"
    assert main(["calibrate", str(src), "--scale", "1-6", "--fund", "5", "--format", "json", "-o", str(out)]) == 0
    stats = json.loads(out.read_text())["stats"]
    n_low, n_high = int((ev["score"] == 1).sum()), int((ev["score"] == 6).sum())
    assert stats["scale_ends"].startswith(f"{n_low} score(s) of 1 read as '1 or lower' and {n_high} of 6")
    assert main(["calibrate", str(src), "--scale", "1-5", "-o", str(tmp_path / "x.json"), "--format", "json"]) == 2
    assert "outside the score scale 1 to 5 (--scale)" in capsys.readouterr().err
    assert main(["calibrate", str(src), "--format", "json", "-o", str(out)]) == 0
    assert "scale_ends" not in json.loads(out.read_text())["stats"]  # no scale declared: nothing read as censored


def test_next_reads_and_a_workbook_declare_the_scale(tmp_path, capsys):
    """next-reads takes ``--scale`` for a CSV panel; a workbook's Settings rows "Score scale minimum/maximum"
    declare it for calibrate (both write workbook files)."""
    import json

    import openpyxl

    from xlcalib.cli import main

    ev = simulate_panel(12, 40, 3, seed=2, n_conflicts=0).evaluations.drop(columns="sd")
    src = tmp_path / "panel.csv"
    ev.to_csv(src, index=False)
    assert main(["next-reads", str(src), "--fund", "5", "--reads", "2", "--scale", "1-4",
                 "-o", str(tmp_path / "n.xlsx")]) == 2
    assert "outside the score scale 1 to 4 (--scale)" in capsys.readouterr().err
    assert main(["next-reads", str(src), "--fund", "5", "--reads", "2", "--scale", "1-6",
                 "-o", str(tmp_path / "n.xlsx")]) == 0
    out = tmp_path / "r.json"
    assert main(["calibrate", str(src), "--scale", "1-6", "--format", "json", "-o", str(out)]) == 0
    stats = json.loads(out.read_text())["stats"]
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Evaluations"
    sheet.append(list(ev.columns))
    for row in ev.itertuples(index=False):
        sheet.append(list(row))
    settings = book.create_sheet("Settings")
    settings.append(["Setting", "Value"])
    settings.append(["Score scale minimum", 1])
    settings.append(["Score scale maximum", 6])
    book.save(tmp_path / "panel.xlsx")
    assert main(["calibrate", str(tmp_path / "panel.xlsx"), "--format", "json", "-o", str(out)]) == 0
    assert json.loads(out.read_text())["stats"]["scale_ends"] == stats["scale_ends"]


def test_the_ranking_function_takes_the_scale_as_two_cells():
    import udf_registry.calibration as udf

    ev = simulate_panel(12, 40, 3, seed=2, n_conflicts=0).evaluations
    args = [ev[c].tolist() for c in ("assessor", "object", "score", "level")]
    plain = udf.calib_ranking(*args, top_k=5, draws=500)
    declared = udf.calib_ranking(*args, top_k=5, draws=500, scale=[[1], [6]])
    header = declared[0]
    assert header == plain[0] and declared != plain  # P(above) and ranks come from the censored basis
    p = header.index("p_above")
    assert {row[0]: row[p] for row in declared[1:]} != {row[0]: row[p] for row in plain[1:]}
    assert udf.calib_ranking(*args, top_k=5, draws=500, scale=[[None], [None]]) == plain  # blank: no scale
    assert str(udf.calib_ranking(*args, top_k=5, scale=[[1, 5]])).startswith("xlcalib: row")
    assert "two cells" in str(udf.calib_ranking(*args, top_k=5, scale=[[6]]))
    # three or more cells are a form's options: a score between them is refused, naming the rows
    assert "not one of the scale's points 1, 3, 6" in str(udf.calib_ranking(*args, top_k=5, scale=[[1, 3, 6]]))


def test_docstring_examples_run():
    import doctest

    from xlcalib.calibration.panel import censoring

    failures, attempted = doctest.testmod(censoring)[:2]
    assert attempted >= 3 and failures == 0



# ----------------------------------------------------------------------------- reuse across the EM steps
def _face_value_panel(seed: int = 3):
    """Whole points clipped to 1-6 with declared SDs (w = 1): every EM step has the same confidences."""
    return simulate_panel(40, 240, 4, seed=seed, n_conflicts=0).evaluations.drop(columns="level")


def test_reduced_solver_stands_in_a_near_factor(monkeypatch):
    """A solver given a near system's factor solves by preconditioned conjugate gradients to the factor's own
    accuracy (1e-11 of the solution: the refined solves stop at 1e-13 of the right-hand side, the conditioning
    of a 40-assessor system costs the rest), makes its own factor only when asked, and factors at once when the
    gradients do not converge (the systems were not near)."""
    from xlcalib.calibration.system import graph
    from xlcalib.calibration.system.graph import Design, ReducedSolver
    from xlcalib.calibration.system.posterior import ReducedCovariance
    from xlcalib.calibration.panel.data import panel_data

    data = panel_data(_face_value_panel())
    design = Design(data.ai, data.oi, data.confidences, data.n_assessors, data.n_objects)
    r = np.random.default_rng(0).standard_normal(design.n_assessors)
    for single in (False, True):
        monkeypatch.setattr(graph, "DOUBLE_INVERSE_LIMIT", 10 if single else 2000)
        near = ReducedSolver(design, lam=0.9, ridge=3.0, centred=True)
        direct = ReducedSolver(design, lam=1.1, ridge=2.5, centred=True)
        stand_in = ReducedSolver(design, lam=1.1, ridge=2.5, centred=True, near=near)
        assert stand_in.single == single and not stand_in.factored
        x = stand_in.solve(r)
        assert np.max(np.abs(x - direct.solve(r))) <= 1e-11 * np.max(np.abs(x))
        assert stand_in.near_iterations > 0 and not stand_in.factored
        np.testing.assert_array_equal(ReducedCovariance(stand_in).inverse(), ReducedCovariance(direct).inverse())
        assert stand_in.factored
    monkeypatch.setattr(graph, "NEAR_ITERATIONS", 1)
    hurried = ReducedSolver(design, lam=1.1, ridge=2.5, centred=True, near=near)
    x = hurried.solve(r)
    assert hurried.factored and np.max(np.abs(x - direct.solve(r))) <= 1e-11 * np.max(np.abs(x))


def test_the_variance_moments_follow_the_scores_on_one_design():
    """The moments are kept on the design with the scores they came from: an EM step's new expected scores on the
    same design give the moments of a fresh design, not the kept ones."""
    from xlcalib.calibration.models.moments import bias_moments
    from xlcalib.calibration.panel.data import panel_data
    from xlcalib.calibration.system.graph import Design

    data = panel_data(_face_value_panel())
    fresh = lambda: Design(data.ai, data.oi, data.confidences, data.n_assessors, data.n_objects)  # noqa: E731
    design = fresh()
    first = bias_moments(design, data.scores, False)
    moved = data.scores + np.where(data.scores == 6, 0.8, 0.0)  # the top reads' expected scores beyond the end
    assert bias_moments(design, moved, False) == bias_moments(fresh(), moved, False) != first
    assert bias_moments(design, data.scores, False) == first
    assert "centred_trace" in design.shared  # the trace, which the scores do not change, is kept


@pytest.mark.parametrize("confidences", ["declared SDs", "levels"])
def test_censored_steps_reuse_the_first_factor(monkeypatch, confidences):
    """Large panels' decision basis (variances from moments, plugged in): the censored fit's later steps solve
    through the first step's factor instead of factoring their own -- on one design with declared SDs, and
    across the steps' designs when levels make w (hence the rounding's share of each read) move -- and give the
    decisions' values and SDs of a fit that factors at every step (to 1e-10 of the values' spread: the
    gradients stop at 1e-13 of the right-hand side; the last system's own factor makes the SDs)."""
    from xlcalib.calibration.models import random_assessors, random_both
    from xlcalib.calibration.system import graph

    ev = _face_value_panel()
    if confidences == "levels":
        ev = simulate_panel(40, 240, 4, seed=3, n_conflicts=0).evaluations.drop(columns="sd")
    monkeypatch.setattr(random_both, "EIGEN_ASSESSOR_LIMIT", 5)  # the plug-in path of national panels
    monkeypatch.setattr(random_assessors, "EIGEN_ASSESSOR_LIMIT", 5)
    basis = xlcalib.calibrate(ev, scale=(1, 6)).decision_basis()
    solver = basis.posterior.cov.solver
    assert solver.near is not None and solver.near_iterations > 0 and not solver.factored
    monkeypatch.setattr(graph, "NEAR_ITERATIONS", 0)  # every step factors its own system, as before
    every = xlcalib.calibrate(ev, scale=(1, 6)).decision_basis()
    assert every.posterior.cov.solver.factored
    spread = float(np.std(every.values))
    assert np.max(np.abs(basis.values - every.values)) <= 1e-10 * spread
    np.testing.assert_allclose(basis.posterior.variances()[0], every.posterior.variances()[0], rtol=1e-9)


@pytest.mark.parametrize("confidences", ["declared SDs", "levels"])
def test_factors_nobody_reads_any_more_are_let_go(monkeypatch, confidences):
    """Memory at the national scale is A x A factors: the censored basis's last system, factored when its
    covariance is first read, lets the near factor go first (it and the design's record of it), and the decision
    basis of whole-point scores (designs of its own) lets go of the values' fixed-system factor, whose mu2 and
    bounds are made already. The numbers are those of a run that keeps the near factor."""
    import gc
    import weakref

    from xlcalib.calibration.models import random_assessors, random_both
    from xlcalib.calibration.system.graph import FIXED_SOLVER, NEAR_SOLVER, ReducedSolver

    ev = _face_value_panel()
    if confidences == "levels":
        ev = simulate_panel(40, 240, 4, seed=3, n_conflicts=0).evaluations.drop(columns="sd")
    monkeypatch.setattr(random_both, "EIGEN_ASSESSOR_LIMIT", 5)  # the plug-in path of national panels
    monkeypatch.setattr(random_assessors, "EIGEN_ASSESSOR_LIMIT", 5)
    result = xlcalib.calibrate(ev, scale=(1, 6))
    values_design = result.components[0][0].design
    assert FIXED_SOLVER in values_design.shared  # kept for the values' mu2 and bounds
    basis = result.decision_basis()
    assert FIXED_SOLVER not in values_design.shared
    solver = basis.posterior.cov.solver
    near = weakref.ref(solver.near)
    assert basis.posterior.design.shared.get(NEAR_SOLVER) is solver.near and not solver.factored
    basis.posterior.draw_theta(1, np.random.default_rng(0))  # the draws read its own factor
    assert solver.factored and solver.near is None and NEAR_SOLVER not in basis.posterior.design.shared
    gc.collect()
    assert near() is None  # nothing else held the near factor
    monkeypatch.setattr(ReducedSolver, "_release_near", lambda self: None)
    kept = xlcalib.calibrate(ev, scale=(1, 6)).decision_basis()
    kept.posterior.draw_theta(1, np.random.default_rng(0))
    assert kept.posterior.cov.solver.near is not None
    np.testing.assert_array_equal(kept.values, basis.values)
    np.testing.assert_array_equal(kept.posterior.variances()[0], basis.posterior.variances()[0])
