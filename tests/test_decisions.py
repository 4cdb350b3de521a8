"""Ranking, the funding line, P(above the line), decisions and the lottery (xlcalib.calibration.decide.ranking)."""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm, t

import xlcalib
from xlcalib.calibration.decide import draws as drawing
from xlcalib.calibration.decide import ranking as decisions
from xlcalib.calibration.decide.places import final_decisions
from xlcalib.calibration.system import graph
from xlcalib.errors import InputError

from .test_uncertainty import random_panel

#: These tests check the fixed-effects fit (MacKay et al. 2017) and what is drawn from it against their oracles;
#: the default model has its own tests (test_models.py).
calibrate_fixed = functools.partial(xlcalib.calibrate, model="fixed")


@pytest.fixture(scope="module")
def result():
    return calibrate_fixed(random_panel(21, A=8, O=40, reads=(2, 4)))


def test_reproducible_bit_for_bit_and_seed_matters(result):
    a = result.ranking(top_k=8, draws=3000, seed=5)
    b = result.ranking(top_k=8, draws=3000, seed=5)
    pd.testing.assert_frame_equal(a, b)
    c = result.ranking(top_k=8, draws=3000, seed=6)
    assert not np.array_equal(a["p_above"].to_numpy(), c.loc[a.index, "p_above"].to_numpy())


def test_invariants_of_the_draws(result):
    table = result.ranking(top_k=8, draws=2000)
    O = len(table)
    assert table["p_above"].sum() == pytest.approx(8.0, abs=1e-9)  # every draw funds exactly 8
    assert table["expected_rank"].sum() == pytest.approx(O * (O + 1) / 2, abs=1e-6)
    assert (table["rank_lower"] <= table["rank_upper"]).all()
    assert table["rank"].is_monotonic_increasing and list(table["rank"]) == sorted(table["rank"])
    p = table["p_above"]
    # conditional Monte Carlo: never more spread than counting (Var E[X|Y] <= Var X), 5% for the spread's own noise
    assert (table["p_above_mc_se"] <= 1.05 * np.sqrt(p * (1 - p) / 2000) + 1e-12).all()
    settled = table["settled"].to_numpy()
    assert (settled == ((np.abs(p - 0.05) >= 3 * table["p_above_mc_se"]) &
                        (np.abs(p - 0.95) >= 3 * table["p_above_mc_se"]))).all()
    expected = np.where((p >= 0.95) & settled, "above", np.where((p <= 0.05) & settled, "below", "borderline"))
    assert (table["decision"].to_numpy() == expected).all()
    assert (table["changed"] == ((table["rank"] <= 8) != (table["raw_rank"] <= 8))).all()
    assert table.attrs["line"] == "top 8" and table.attrs["draws"] == 2000


def test_threshold_probability_is_exact(result):
    table = result.ranking(threshold=5.5, draws=100)
    z = (table["value"] - 5.5) / table["se"]
    np.testing.assert_allclose(table["p_above"], norm.cdf(z), rtol=1e-12)
    assert (table["p_above_mc_se"] == 0).all()  # exact: no draws behind a score line, the code sets the error to 0
    assert (table["raw_decision"] == np.where(table["raw_mean"] >= 5.5, "above", "below")).all()
    estimated = calibrate_fixed(random_panel(21, A=8, O=40, reads=(2, 4), kind="confidence"))
    tt = estimated.ranking(threshold=5.5, draws=100)
    df = estimated.stats["df"]
    np.testing.assert_allclose(tt["p_above"], t.cdf((tt["value"] - 5.5) / tt["se"], df), rtol=1e-12)


def test_uniform_band_lottery_is_recorded_and_fills_the_places(result):
    table = result.ranking(top_k=10, draws=2000, lottery="uniform band", lottery_seed=11)
    record = table.attrs["lottery"]
    n_above = int((table["decision"] == "above").sum())
    assert record["method"] == "uniform band" and record["seed"] == "11"
    assert record["places"] == 10 - n_above
    assert len(record["drawn"]) == min(record["places"], len(record["pool"]))
    assert set(record["drawn"]) <= set(record["pool"]) == set(table.index[table["decision"] == "borderline"])
    assert (table.loc[record["drawn"], "lottery"] == "funded by lottery").all()
    assert table.loc[record["pool"], "chance"].nunique() == 1  # the band's one chance
    again = result.ranking(top_k=10, draws=2000, lottery="uniform band", lottery_seed=11)
    assert again.attrs["lottery"]["drawn"] == record["drawn"]


@pytest.mark.parametrize("kind", ["sd", "confidence"])
def test_conditional_probabilities_agree_with_counting_many_draws(kind):
    """P(rank <= k) by conditional Monte Carlo (each draw adds Phi((m_o - T_-o) / s_o)) against the plain count of
    top-k places over 200,000 joint draws of the same posterior (normal with SDs at face value, Student t with
    the noise scale estimated): every object within 4.5 combined Monte Carlo errors (40 objects: a false alarm
    about once in 3,000 runs; and the count's own resolution, 3 / draws, where it saw none), and the two agree
    on average to a tenth of the count's error."""
    r = calibrate_fixed(random_panel(21, A=8, O=40, reads=(2, 4), kind=kind))
    table = r.ranking(top_k=8, draws=4000, seed=9)
    post, _a, o_idx = r.components[0]
    rng = np.random.default_rng(12345)
    counts, n = np.zeros(len(table)), 0
    v32 = r.values["value"].to_numpy().astype(np.float32)
    for _ in range(20):
        dev = np.empty((10_000, len(table)), dtype=np.float32)
        dev[:, o_idx] = post.draw_deviations(10_000, rng)
        if r.t_df:
            dev *= np.sqrt(r.t_df / rng.chisquare(r.t_df, 10_000)).astype(np.float32)[:, None]
        top = np.argsort(-(dev + v32[None, :]), axis=1)[:, :8]
        counts += np.bincount(top.ravel(), minlength=len(table))
        n += 10_000
    counted = pd.Series(counts / n, index=r.values.index).loc[table.index]
    error = np.sqrt(table["p_above_mc_se"] ** 2 + counted * (1 - counted) / n)
    assert (np.abs(table["p_above"] - counted) <= 4.5 * error + 3 / n).all()  # 3/n: a count of 0 says only p < 3/n
    assert abs(float((table["p_above"] - counted).mean())) < 0.1 * float(np.sqrt(counted * (1 - counted) / n).mean())
    assert table["p_above_mc_se"].median() < 0.5 * np.sqrt(counted * (1 - counted) / 4000).median()  # it pays


def test_decisions_are_settled_by_more_draws_or_named(result, monkeypatch):
    """A first pass of 200 draws leaves objects within 3 Monte Carlo errors of a cut-off; more draws settle them
    (the settling rounds' draws are counted), and with no budget left they are named and decided borderline."""
    settled = result.ranking(top_k=8, draws=200, seed=4)
    assert settled.attrs["settling"]["extra_draws"] > 0 and settled["settled"].all()
    monkeypatch.setattr(drawing, "MAX_SETTLE_DRAWS", 0)
    rough = result.ranking(top_k=8, draws=200, seed=4)
    named = rough.attrs["settling"]["unsettled"]
    assert named and set(named) == set(rough.index[~rough["settled"]])
    assert (rough.loc[named, "decision"] == "borderline").all()
    assert rough.loc[named, "basis"].str.startswith("unsettled").all()


def test_bad_arguments_are_named(result):
    for kwargs, pattern in [({"top_k": 0}, "top_k"), ({"top_k": 40}, "top_k"), ({"top_k": 2.5}, "top_k"),
                            ({"top_k": 3, "threshold": 5}, "one funding line"), ({"threshold": float("nan")}, "threshold"),
                            ({"draws": 10}, "draws"), ({"draws": True}, "draws"), ({"seed": -1}, "seed"),
                            ({"epsilon": 0.6}, "epsilon"), ({"level": 1.0}, "level"),
                            ({"threshold": 5, "lottery": True}, "lottery")]:
        with pytest.raises(InputError, match=pattern):
            result.ranking(**kwargs)


def test_draw_count_is_bounded_with_a_note(result, monkeypatch):
    monkeypatch.setattr(drawing, "MAX_DRAW_CELLS", 40 * 500)
    table = result.ranking(top_k=5, draws=5000)
    assert table.attrs["draws"] == 500 and "reduced" in table.attrs["note"]


def test_rank_intervals_use_a_bounded_store(result, monkeypatch):
    monkeypatch.setattr(drawing, "STORED_RANK_BYTES", 4 * 40 * 300)
    monkeypatch.setattr(drawing, "CHUNK_BYTES", 12 * 40 * 128)  # several chunks
    table = result.ranking(top_k=5, draws=1000)
    assert table.attrs["rank_interval_draws"] == 300
    full = result.ranking(top_k=5, draws=1000)
    np.testing.assert_allclose(table["p_above"], full["p_above"])  # same chunking, same streams, same numbers


def test_disconnected_panel_cannot_be_ranked():
    ev = pd.DataFrame({"assessor": ["A", "A", "B", "B", "C", "C", "D", "D"],
                       "object": ["x", "y", "x", "y", "u", "w", "u", "w"],
                       "score": [5, 6, 5.5, 6.5, 3, 4, 3.5, 4.2], "sd": [1.0] * 8})
    r = calibrate_fixed(ev, per_component=True)
    with pytest.raises(InputError, match="unconnected groups"):
        r.ranking(top_k=1)
    with pytest.raises(InputError, match="unconnected groups"):
        r.difference("x", "u")


def _simulate(model, line, reps, seed0):
    """Decisions and probabilities against the truth over simulated panels (truth in the fit's gauge)."""
    P, T, D = [], [], []
    for rep in range(reps):
        ev, v, b = random_panel(seed0 + rep, A=10, O=50, reads=(2, 5), truth=True)
        r = calibrate_fixed(ev, model=model)
        if line == "top":
            table = r.ranking(top_k=10, draws=2000, seed=rep)
            truth = v.rank(ascending=False, method="first") <= 10
        else:
            c = 1 / ev["sd"] ** 2
            C_a = c.groupby(ev["assessor"]).sum().reindex(b.index)
            m = float((C_a / C_a.sum() * b).sum())
            table = r.ranking(threshold=6.0, draws=100, seed=rep)
            truth = (v + m) >= 6.0
        table = table.reindex(v.index)
        P += list(table["p_above"])
        T += list(truth)
        D += list(table["decision"])
    return np.array(P), np.array(T, dtype=bool), np.array(D)


def _check_calibrated(P, T):
    bins = np.digitize(P, [0.2, 0.4, 0.6, 0.8])
    for i in range(5):
        sel = bins == i
        if sel.sum() < 30:
            continue
        p, freq = P[sel].mean(), T[sel].mean()
        assert abs(p - freq) <= 3 * np.sqrt(max(p * (1 - p), 0.01) / sel.sum()) + 0.02, (i, p, freq, sel.sum())


@pytest.mark.parametrize("model,line", [("fixed", "top"), ("shrinkage", "threshold")])
def test_decisions_wrong_at_most_epsilon_and_probabilities_calibrated(model, line):
    """Measured here (80 panels): wrong 'above' 1.0%, wrong 'below' 0.4% at epsilon 5% (fixed, top 10).

    The fixed model's threshold probabilities are a little overconfident when objects come from a
    common population (P 0.29 -> 20% above); the shrinkage model, which models that population, is
    calibrated -- which is why both are offered.
    """
    P, T, D = _simulate(model, line, 60, 9000)
    above, below = D == "above", D == "below"
    assert above.sum() > 100 and below.sum() > 100
    assert (~T[above]).mean() <= 0.05 and T[below].mean() <= 0.05
    _check_calibrated(P, T)


# --------------------------------------------------------------------------- the fast ranking kernels
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402

_floats32 = st.floats(width=32, allow_nan=False, allow_infinity=True)


@settings(max_examples=200, deadline=None)
@given(arrays(np.float32, st.tuples(st.integers(1, 3), st.integers(1, 40)), elements=_floats32))
def test_packed_sort_orders_like_a_stable_descending_argsort(values):
    """The uint32 keys fall as the floats rise (signs, zeros, infinities), ties go to the lower index."""
    values = values + np.float32(0.0)  # -0.0 -> +0.0: the keys tell the two zeros apart, numbers do not
    expected = np.argsort(-values, axis=1, kind="stable")
    np.testing.assert_array_equal(drawing.best_first(values), expected)


def test_descending_keys_on_the_edges_of_float32():
    edges = np.array([np.inf, np.finfo(np.float32).max, 1.0, np.finfo(np.float32).tiny, 1e-45, 0.0,
                      -1e-45, -np.finfo(np.float32).tiny, -1.0, -np.finfo(np.float32).max, -np.inf], np.float32)
    keys = drawing.descending_keys(edges.copy())
    assert (np.diff(keys.astype(np.int64)) > 0).all()


@settings(max_examples=50, deadline=None)
@given(arrays(np.int32, st.tuples(st.integers(1, 60), st.integers(1, 30)), elements=st.integers(1, 1000)),
       st.floats(0.0, 0.5, exclude_min=True, exclude_max=True))
def test_order_statistics_match_numpy_quantile(stored, alpha):
    index = np.arange(stored.shape[0])
    lo = int(np.quantile(index, alpha, method="lower"))
    hi = int(np.quantile(index, 1 - alpha, method="higher"))
    got = drawing.order_statistics(stored, [lo, hi], block_bytes=4 * stored.shape[0] * 7)  # several blocks
    np.testing.assert_array_equal(got[0], np.quantile(stored, alpha, axis=0, method="lower"))
    np.testing.assert_array_equal(got[1], np.quantile(stored, 1 - alpha, axis=0, method="higher"))


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 80), st.integers(1, 40), st.integers(0, 2**32 - 1),
       st.floats(0.0, 0.5, exclude_min=True, exclude_max=True))
def test_rank_order_statistics_by_counting_equal_the_partition(draws, objects, seed, alpha):
    """Stored ranks (each draw a permutation of 1..O) give the same order statistics counted as partitioned."""
    stored = (np.argsort(np.random.default_rng(seed).random((draws, objects)), axis=1) + 1).astype(np.int32)
    index = np.arange(draws)
    kth = [int(np.quantile(index, alpha, method="lower")), int(np.quantile(index, 1 - alpha, method="higher"))]
    np.testing.assert_array_equal(drawing.rank_order_statistics(stored, kth), drawing.order_statistics(stored, kth))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 60), st.integers(2, 40), st.integers(0, 2**32 - 1), st.data())
def test_top_k_edges_from_the_places_equal_the_scan(draws, objects, seed, data):
    """A line of k places: the edges read from the k positions above in each draw equal the scan of every object
    (each draw's ranks a permutation of 1..O, the decision order any permutation), in blocks or not; and the rank
    histogram counted chunk by chunk is the whole one."""
    rng = np.random.default_rng(seed)
    stored = (np.argsort(rng.random((draws, objects)), axis=1) + 1).astype(np.int32)
    position = rng.permutation(objects).astype(np.intp)
    top_k = data.draw(st.integers(0, objects))
    expected = drawing.line_edges(stored <= top_k, position)
    for block_bytes in (32 * 2**20, 5 * objects * 3):  # one block, or blocks of 3 draws
        got = drawing.top_k_edges(stored, top_k, position, block_bytes=block_bytes)
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_array_equal(got[1], expected[1])
    cut = data.draw(st.integers(0, draws))
    whole = drawing.rank_histogram(stored)
    np.testing.assert_array_equal(drawing.rank_histogram(stored[:cut]) + drawing.rank_histogram(stored[cut:]), whole)
    kth = [0, draws - 1]
    np.testing.assert_array_equal(drawing.rank_order_statistics(stored, kth, whole),
                                  drawing.order_statistics(stored, kth))


def test_numbers_do_not_depend_on_threads_or_chunking(result, monkeypatch):
    """Each chunk has its own random stream: one thread or two, the table is the same bit for bit."""
    import sys

    monkeypatch.setattr(drawing, "CHUNK_BYTES", 28 * 40 * 37)  # 37 draws per chunk: many chunks
    monkeypatch.setattr(drawing, "MAX_WORKERS", 1)
    one = result.ranking(top_k=8, draws=1000, seed=3)
    if sys.platform == "emscripten":  # Pyodide has no threads: the one-thread path is what runs there
        monkeypatch.setattr(drawing, "MAX_WORKERS", 2)
        assert drawing.worker_count() == 1
        return
    monkeypatch.setattr(drawing, "MAX_WORKERS", 2)
    monkeypatch.setattr(drawing, "worker_count", lambda: 2)  # two threads even on a one-core runner
    two = result.ranking(top_k=8, draws=1000, seed=3)
    pd.testing.assert_frame_equal(one, two)


def test_expected_ranks_agree_with_an_independent_argsort_ranking(result):
    """The packed-sort ranks against a plain argsort ranking of the same joint draws (the same stream)."""
    table = result.ranking(draws=400, seed=11)
    post, _a, o_idx = result.components[0]
    streams = np.random.SeedSequence(11).spawn(1)
    rng = np.random.default_rng(streams[0])
    n = 400
    xi = post.draw_theta(n, rng)
    dev = post.draw_deviations(n, rng, xi)
    if result.t_df:
        dev *= np.sqrt(result.t_df / rng.chisquare(result.t_df, n)).astype(np.float32)[:, None]
    full = np.empty_like(dev)
    full[:, o_idx] = dev
    draws = full + result.values["value"].to_numpy().astype(np.float32)[None, :]
    ranks = np.argsort(np.argsort(-draws, axis=1, kind="stable"), axis=1) + 1
    expected = pd.Series(ranks.mean(axis=0), index=result.values.index)
    np.testing.assert_allclose(table["expected_rank"], expected.loc[table.index], rtol=0, atol=1e-12)


def test_iterative_path_bounds_draws_by_evaluations(monkeypatch):
    """Above the dense limit every draw is a CG solve: draws x evaluations is capped, with a note."""

    ev = random_panel(4, A=12, O=60, reads=(2, 4))
    monkeypatch.setattr(graph, "DENSE_ASSESSOR_LIMIT", 5)
    sparse = calibrate_fixed(ev)
    monkeypatch.setattr(drawing, "MAX_SPARSE_DRAW_WORK", 150 * len(ev))
    table = sparse.ranking(top_k=10, draws=2000)
    assert table.attrs["draws"] == 150 and "iterative solve" in table.attrs["note"]
    exact_p = calibrate_fixed(ev).ranking(top_k=10, draws=2000)["p_above"]
    assert np.abs(table["p_above"] - exact_p.loc[table.index]).max() < 0.25  # the same law, fewer draws


# --------------------------------------------------------------------------- final decisions and joint statements
def _decision_positions(table):
    """Each object's place in decision order: P(above) from high to low (ties by value)."""
    return table.sort_values(["p_above", "value"], ascending=False, kind="stable").index


@pytest.mark.parametrize("epsilon", [0.05, 0.25])
def test_final_decisions_fill_exactly_the_places_from_the_band_at_the_line(result, epsilon):
    table = result.ranking(top_k=10, draws=3000, lottery="uniform band", lottery_seed=3, epsilon=epsilon)
    final = table["final"]
    assert int(final.isin(["funded", "funded by lottery"]).sum()) == 10  # exactly as many funded as places
    assert set(final) <= {"funded", "funded by lottery", "not drawn", "not funded"}
    record = table.attrs["lottery"]
    sure = table.index[final == "funded"]
    pool = set(record["pool"])
    assert pool == set(table.index[final.isin(["funded by lottery", "not drawn"])])
    assert record["places"] == 10 - len(sure) and len(record["drawn"]) == record["places"]
    # the lottery fills only the places left after the certain ones, among the band next to the line: in
    # decision order the funded come first, then the whole pool, then the not funded (no gaps, no jumps)
    order = list(_decision_positions(table))
    kinds = ["sure" if o in set(sure) else "pool" if o in pool else "out" for o in order]
    assert kinds == sorted(kinds, key=["sure", "pool", "out"].index)
    # the band is the objects the data cannot place at the cut-off, and says so
    p = table.loc[list(pool), "p_above"]
    assert ((p > epsilon - 1e-12) & (p < 1 - epsilon + 1e-12) | ~table.loc[list(pool), "settled"]).all()
    assert table.loc[list(pool), "basis"].str.startswith(("borderline", "unsettled")).all()
    assert (table.loc[table["joint"] == "above", "final"] == "funded").all()
    assert (table.loc[table["joint"] == "below", "final"] == "not funded").all()


def test_places_left_after_the_whole_band_go_in_decision_order_never_by_a_draw():
    """Three places, one object above and one borderline: the third place goes to the best of the objects placed
    below the line (decision order), not to a draw among all of them."""
    tier = np.array([1, 2, 3, 3, 3, 4], dtype=np.intp)
    position = np.array([0, 1, 3, 2, 4, 5], dtype=np.intp)
    index = pd.Index(list("abcdef"))
    final, record, draw = final_decisions(index, tier, position, 3, ("uniform band", "0"))
    assert list(final) == ["funded", "funded", "not funded", "funded", "not funded", "not funded"]
    assert record["pool"] == [] and record["left"] == 0 and draw.drawn_places == 0


def test_a_wider_cut_off_narrows_the_lottery_band(result):
    wide = result.ranking(top_k=10, draws=3000, lottery="uniform band", epsilon=0.05).attrs["lottery"]["pool"]
    narrow = result.ranking(top_k=10, draws=3000, lottery="uniform band", epsilon=0.25).attrs["lottery"]["pool"]
    assert set(narrow) <= set(wide) and len(narrow) < len(wide)


def test_without_a_lottery_the_band_is_to_discuss_and_a_score_line_decides_per_object(result):
    table = result.ranking(top_k=10, draws=3000)
    assert set(table["final"]) <= {"funded", "to discuss", "not funded"}
    funded, discuss = (table["final"] == "funded").sum(), (table["final"] == "to discuss").sum()
    assert funded < 10 < funded + discuss  # the places run out inside the band: the panel decides it
    assert decisions.decision_summary(table).startswith("Funding line top 10 (10 places): ")
    scored = result.ranking(threshold=5.5, draws=2000)
    expected = np.where(scored["p_above"] >= 0.95, "funded", np.where(scored["p_above"] <= 0.05, "not funded",
                                                                       "to discuss"))
    assert ((scored["final"] == expected) | (scored["joint"] != "")).all()


def test_joint_statement_holds_in_the_stated_share_of_the_draws(result):
    """The joint lists hold together in at least 95% of the draws; one object more on either side would not."""
    table = result.ranking(top_k=10, draws=4000, seed=2)
    joint = table.attrs["joint"]
    assert joint["probability"] >= 0.95 and joint["above"] == (table["joint"] == "above").sum()
    assert joint["below"] == (table["joint"] == "below").sum()
    assert (table.loc[table["joint"] == "above", "p_above"] >= joint["probability"] - 1e-12).all()
    assert (table.loc[table["joint"] == "below", "p_above"] <= 1 - joint["probability"] + 1e-12).all()


def test_joint_statement_is_wrong_in_at_most_5_percent_of_simulated_panels():
    """Panels with a known truth (whole-point scores on 1-6, levels, biases; 24 assessors x 150 objects x 4 reads,
    a line of 20 places): a joint statement is wrong when any object it calls jointly above is not in the true
    top 20, or any it calls jointly below is.  Measured here: wrong in 1 of the 40 panels (2.5%), 88 objects named.
    benchmarks/bench_joint.py runs 300 panels per design: 4.0% with unrounded scores, 6-8% with whole-point scores
    (the model treats them as continuous), so this test holds the statement to its 95% only loosely."""
    from xlcalib.calibration.panel.simulate import simulate_panel

    wrong, named = 0, 0
    for i in range(40):
        panel = simulate_panel(24, 150, 4, seed=500 + i, n_conflicts=0)
        table = xlcalib.calibrate(panel.evaluations.drop(columns="sd")).ranking(top_k=20, draws=2000, seed=i)
        truly_in = set(panel.values.nlargest(20).index)
        above, below = set(table.index[table["joint"] == "above"]), set(table.index[table["joint"] == "below"])
        wrong += bool(above - truly_in) or bool(below & truly_in)
        named += len(above) + len(below)
    assert named / 40 > 50  # the statements say something (about 85 objects per panel)
    assert wrong <= 2  # at most 5% of the 40 panels


@pytest.mark.parametrize("model", ["random-assessors", "random-both", "fixed", "random-objects"])
def test_decisions_do_not_depend_on_the_unit_of_the_scores(model):
    """Scores x 0.244 - 23886 with SDs x 0.244 (another unit, a large offset): the same P(above), the same
    decisions and the values in the new unit.  Before, the grid's rounding was recognised only in whole points,
    the draws kept the offset in single precision, and the random-effects variance searches found other optima
    (P moved by up to 0.12)."""
    from xlcalib.calibration.panel.simulate import simulate_panel

    ev = simulate_panel(16, 80, 3, seed=2).evaluations.drop(columns="level")
    a, b = 0.244, -23886.0
    other = ev.assign(score=ev["score"] * a + b, sd=ev["sd"] * a)
    for kwargs, line in (({}, {"top_k": 10}), ({"scale": (1, 6)}, {"top_k": 10}), ({}, {"threshold": 4.0})):
        scaled = {"scale": (1 * a + b, 6 * a + b)} if kwargs else {}
        r1, r2 = xlcalib.calibrate(ev, model=model, **kwargs), xlcalib.calibrate(other, model=model, **scaled)
        line2 = {"threshold": line["threshold"] * a + b} if "threshold" in line else line
        t1, t2 = r1.ranking(draws=2000, **line), r2.ranking(draws=2000, **line2)
        t2 = t2.loc[t1.index]
        # the fits agree to ~1e-10 in score points (rounding in another unit); P(above) from the same draws
        np.testing.assert_allclose(t2["value"], t1["value"] * a + b, rtol=0, atol=1e-9 * abs(b))
        # P(above) from the same draws: with a score line exact (normal CDFs of the fit); with places each draw's
        # conditional term is made in single precision about the median (~7 digits), so the two agree to ~1e-7 --
        # a thousand times inside their Monte Carlo error (~1e-3 at 2,000 draws); before centring they differed by 0.12
        np.testing.assert_allclose(t2["p_above"], t1["p_above"], rtol=0, atol=1e-6 if "top_k" in line else 1e-9)
        assert (t2["final"] == t1["final"]).all()


class _Recorder:
    """A progress listener that keeps what it is told (the command line's bar and Excel's status bar are two)."""

    def __init__(self):
        self.steps, self.current = [], None

    def begin(self, words, total):
        self.current = [words, total, 0]
        self.steps.append(self.current)

    def advance(self, amount):
        self.current[2] += amount

    def end(self):
        pass


def test_the_draws_tell_their_progress_in_the_calling_thread():
    """Ranking a panel announces its draws and every settling round, each advancing by exactly its draws: the
    workers run without the caller's context, so the chunks are counted as their results are taken in order."""
    from xlcalib.progress import listening

    ev = random_panel(3, A=10, O=40)
    result = xlcalib.calibrate(ev)
    recorder = _Recorder()
    with listening(recorder):
        table = result.ranking(top_k=8, draws=200, seed=1)  # few draws: some decisions need settling rounds
    draws = [s for s in recorder.steps if s[0].startswith("drawing the ranks")]
    assert len(draws) == 1 and draws[0][1:] == [200, 200]
    settling = [s for s in recorder.steps if s[0].startswith("settling decisions")]
    assert settling and sum(s[2] for s in settling) == table.attrs["settling"]["extra_draws"] > 0
    assert all(s[1] == s[2] for s in settling)


# ---------------------------------------------------------------------------------------------- replayed variates
from xlcalib.calibration.decide import replay  # noqa: E402


def _calls(stream):
    """The calls a chunk of draws makes, in its order: assessor normals, object normals, a common shift, t factors."""
    return [stream.standard_normal((7, 50)), stream.standard_normal((50, 30), dtype=np.float32),
            stream.standard_normal(50, dtype=np.float32), stream.chisquare(12.0, 50)]


def test_a_replayed_stream_gives_what_the_generator_gives_call_for_call():
    replay.forget()
    seed = np.random.SeedSequence(11).spawn(3)[2]
    fresh = _calls(np.random.default_rng(seed))
    first, again = _calls(replay.ReplayedStream(seed)), replay.ReplayedStream(seed)
    assert all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(fresh, first))
    kept = again._recorded
    assert [c for c, _ in kept] == [("standard_normal", (7, 50), "<f8"), ("standard_normal", (50, 30), "<f4"),
                                    ("standard_normal", (50,), "<f4"), ("chisquare", 12.0, (50,))]
    replayed = _calls(again)
    assert all(np.array_equal(a, b) for a, b in zip(fresh, replayed))
    replayed[1][:] = 0  # the caller scales its draws in place: the kept variates stay as drawn
    assert np.array_equal(_calls(replay.ReplayedStream(seed))[1], fresh[1])
    # a call that differs from the recorded one continues the generator's own sequence from there
    live = np.random.default_rng(seed)
    expected = [live.standard_normal((7, 50)), live.standard_normal((9, 4)), live.integers(0, 100, 5)]
    other = replay.ReplayedStream(seed)
    got = [other.standard_normal((7, 50)), other.standard_normal((9, 4)), other.integers(0, 100, 5)]
    assert all(np.array_equal(a, b) for a, b in zip(expected, got))
    replay.forget()


def test_kept_variates_stay_within_their_bound(monkeypatch):
    replay.forget()
    monkeypatch.setattr(replay, "KEPT_BYTES", 3 * 8 * 1000)
    for j in range(5):  # five streams of 8,000 bytes each: the two oldest are let go
        replay.ReplayedStream(np.random.SeedSequence(j)).standard_normal(1000)
    assert replay._kept_bytes[0] <= replay.KEPT_BYTES and len(replay._kept) == 3
    assert np.random.SeedSequence(0).entropy not in {key[0] for key in replay._kept}
    assert isinstance(replay.chunk_stream(np.random.SeedSequence(1), 10**5, 300), np.random.Generator)  # 120 MB
    assert isinstance(replay.chunk_stream(np.random.SeedSequence(1), 10**4, 300), replay.ReplayedStream)  # 12 MB
    # a stream whose variates outgrow a chunk's share stops keeping them, and still gives the generator's own
    monkeypatch.setattr(replay, "KEPT_RUN_BYTES", 8 * 1500)
    seed = np.random.SeedSequence(99)
    big = replay.ReplayedStream(seed)
    got = [big.standard_normal(1000), big.standard_normal(1000), big.chisquare(3.0, 10)]
    live = np.random.default_rng(seed)
    assert all(np.array_equal(a, b) for a, b in zip(got, [live.standard_normal(1000), live.standard_normal(1000),
                                                          live.chisquare(3.0, 10)]))
    assert replay._key(seed) not in replay._kept and big._recorded is None
    replay.forget()


def test_a_recalculated_ranking_replays_its_variates_and_gives_the_same_table(result, monkeypatch):
    """A second ranking of the same size and seed (a sheet recalculating after an edit) draws no new normals for
    its chunks, and its table is the one the generators themselves give (several chunks of the same size, each
    with its own stream)."""
    replay.forget()
    monkeypatch.setattr(drawing, "CHUNK_BYTES", drawing.FIRST_PASS_CELL_BYTES * 40 * 500)  # chunks of 500 draws
    with monkeypatch.context() as plain:
        plain.setattr(drawing, "chunk_stream", lambda seed, *_: np.random.default_rng(seed))
        reference = result.ranking(top_k=8, draws=3000, seed=5)
    assert not replay._kept
    first = result.ranking(top_k=8, draws=3000, seed=5)
    assert replay._kept  # the chunks' variates were kept
    streams = []
    original = replay.ReplayedStream.__init__

    def counted(self, seed):
        original(self, seed)
        streams.append(self)

    monkeypatch.setattr(replay.ReplayedStream, "__init__", counted)
    again = result.ranking(top_k=8, draws=3000, seed=5)
    assert len(streams) >= 6  # every chunk replayed what it drew before, no generator made
    assert all(s._live is None and s._used == len(s._recorded) >= 2 for s in streams)
    pd.testing.assert_frame_equal(first, reference)
    pd.testing.assert_frame_equal(again, reference)
    replay.forget()


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(2, 400), st.integers(0, 2**32 - 1), st.booleans())
def test_the_line_of_a_settling_draw_is_what_a_sort_gives(n, objects, seed, ties):
    """The top_k-th and (top_k + 1)-th largest values of each draw, as sorting each row would give them."""
    rng = np.random.default_rng(seed)
    draws = rng.standard_normal((n, objects)).astype(np.float32)
    if ties:
        draws = np.round(draws * 2).astype(np.float32)
    for top_k in sorted({1, objects // 2, objects - 1, int(rng.integers(1, objects))}):
        ordered = np.sort(draws, axis=1)
        kth, next_value = drawing.line_values(draws, top_k)
        np.testing.assert_array_equal(kth, ordered[:, objects - top_k])
        np.testing.assert_array_equal(next_value, ordered[:, objects - top_k - 1])


def test_ranks_scattered_row_by_row_equal_the_flat_scatter(result, monkeypatch):
    """Long rows (many objects) scatter each draw's ranks on their own: the same table as the one flat scatter."""
    flat = result.ranking(top_k=8, draws=1500, seed=3)
    monkeypatch.setattr(drawing, "ROW_SCATTER_OBJECTS", 1)
    pd.testing.assert_frame_equal(result.ranking(top_k=8, draws=1500, seed=3), flat)
