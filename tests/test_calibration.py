"""Calibration core against independent truth: WLS oracle, exact worst cases, spectra, invariances."""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlcalib
from xlcalib.calibration.system import graph
from xlcalib.errors import InputError

#: These tests check the fixed-effects fit (MacKay et al. 2017) and what is drawn from it against their oracles;
#: the default model has its own tests (test_models.py).
calibrate_fixed = functools.partial(xlcalib.calibrate, model="fixed")


def random_design(seed: int, n_assessors=8, n_objects=20, reads=3, sd_choices=(0.5, 1.0, 2.0)):
    """A connected random incomplete design with heterogeneous SDs and known truth."""
    rng = np.random.default_rng(seed)
    while True:
        pairs = [(a, o) for o in range(n_objects) for a in rng.choice(n_assessors, reads, replace=False)]
        ai = np.array([p[0] for p in pairs])
        oi = np.array([p[1] for p in pairs])
        if len(set(ai)) == n_assessors and _connected(ai, oi, n_assessors, n_objects):
            break
    sd = rng.choice(sd_choices, ai.size)
    v_true = rng.normal(5, 1.5, n_objects)
    b_true = rng.normal(0, 0.7, n_assessors)
    score = v_true[oi] + b_true[ai] + sd * rng.standard_normal(ai.size)
    frame = pd.DataFrame({"assessor": [f"A{a}" for a in ai], "object": [f"O{o}" for o in oi], "score": score, "sd": sd})
    return frame, v_true, b_true


def _connected(ai, oi, A, O):
    import scipy.sparse as sp
    import scipy.sparse.csgraph as cg
    g = sp.csr_matrix((np.ones(ai.size), (ai, A + oi)), shape=(A + O, A + O))
    return cg.connected_components(g, directed=False)[0] == 1


def linear_map(frame: pd.DataFrame, gauge: str, kind: str = "sd"):
    """The exact linear map s -> (v, b) built column by column (fits are linear in the scores)."""
    base = frame.copy()
    cols = []
    for j in range(len(frame)):
        unit = base.copy()
        unit["score"] = 0.0
        unit.loc[j, "score"] = 1.0
        r = calibrate_fixed(unit, gauge=gauge)
        cols.append(np.concatenate([r.values["value"].to_numpy(), r.biases["bias"].to_numpy()]))
    return np.column_stack(cols)


# --------------------------------------------------------------------------- oracle
@pytest.mark.parametrize("seed", range(5))
def test_matches_statsmodels_wls_with_dummies(seed):
    sm = pytest.importorskip("statsmodels.api")
    frame, *_ = random_design(seed, n_assessors=7, n_objects=25)
    result = calibrate_fixed(frame)
    objects = result.values.index.to_list()
    assessors = result.biases.index.to_list()
    X_obj = (frame["object"].to_numpy()[:, None] == np.array(objects)[None, :]).astype(float)
    X_ass = (frame["assessor"].to_numpy()[:, None] == np.array(assessors)[None, :]).astype(float)[:, 1:]
    fit = sm.WLS(frame["score"].to_numpy(), np.hstack([X_obj, X_ass]), weights=1 / frame["sd"].to_numpy() ** 2).fit()
    v = fit.params[: len(objects)]
    b = np.concatenate([[0.0], fit.params[len(objects):]])
    C_a = result.biases["total_confidence"].to_numpy()
    shift = C_a @ b / C_a.sum()  # align to the weighted gauge
    np.testing.assert_allclose(result.biases["bias"], b - shift, atol=1e-9)
    np.testing.assert_allclose(result.values["value"], v + shift, atol=1e-9)
    resid = frame["score"].to_numpy() - fit.fittedvalues
    assert result.stats["residual"] == pytest.approx(np.sum(resid**2 / frame["sd"].to_numpy() ** 2), rel=1e-9)


def test_doc_example_hand_computed():
    ev = pd.DataFrame({"assessor": ["A", "A", "B", "B"], "object": ["x", "y", "x", "y"],
                       "score": [5.0, 7.0, 6.0, 8.0], "sd": [1.0] * 4})
    r = calibrate_fixed(ev)
    assert r.values["value"].tolist() == pytest.approx([5.5, 7.5])
    assert r.biases["bias"].tolist() == pytest.approx([-0.5, 0.5])
    # two assessors sharing two objects equally: W = [[1,1],[1,1]], C' = 2 -> mu2 = 1
    assert r.stats["mu2"] == pytest.approx(1.0)
    # |dv_o| <= sqrt(2N/(mu2 C_o)) = sqrt(2*4/2) = 2
    assert r.values["robustness_bound"].tolist() == pytest.approx([2.0, 2.0])
    assert r.stats["rms_bound"] == pytest.approx(1 / np.sqrt(1.0 * 4 / 4))


def test_noise_free_recovery_exact():
    frame, v_true, b_true = random_design(11, n_assessors=9, n_objects=30)
    ai = frame["assessor"].str[1:].astype(int).to_numpy()
    oi = frame["object"].str[1:].astype(int).to_numpy()
    frame["score"] = v_true[oi] + b_true[ai]
    r = calibrate_fixed(frame, gauge="simple")
    b_est = r.biases["bias"].reindex([f"A{a}" for a in range(9)]).to_numpy()
    v_est = r.values["value"].reindex([f"O{o}" for o in range(30)]).to_numpy()
    np.testing.assert_allclose(b_est, b_true - b_true.mean(), atol=1e-10)
    np.testing.assert_allclose(v_est, v_true + b_true.mean(), atol=1e-10)
    assert r.stats["residual"] < 1e-18


# --------------------------------------------------------------------------- spectrum
def _dense_mu2(frame):
    r = calibrate_fixed(frame)
    A, O = len(r.biases), len(r.values)
    a = pd.Index(r.biases.index).get_indexer(frame["assessor"])
    o = pd.Index(r.values.index).get_indexer(frame["object"])
    c = 1 / frame["sd"].to_numpy() ** 2
    Cm = np.zeros((A, O))
    Cm[a, o] = c
    C_o, C_a = Cm.sum(0), Cm.sum(1)
    W = Cm @ np.diag(1 / C_o) @ Cm.T
    S = W / np.sqrt(np.outer(C_a, C_a))
    mu = np.sort(np.linalg.eigvalsh(np.eye(A) - S))
    # full normalised Laplacian of the bipartite graph
    D = np.concatenate([C_a, C_o])
    Adj = np.zeros((A + O, A + O))
    Adj[:A, A:] = Cm
    Adj[A:, :A] = Cm.T
    Lfull = np.eye(A + O) - Adj / np.sqrt(np.outer(D, D))
    mu_full = np.sort(np.linalg.eigvalsh(Lfull))
    return r, mu[1], mu_full[1:]


def test_mu2_matches_dense_eigensolve_small_and_eigsh_path():
    frame, *_ = random_design(3, n_assessors=10, n_objects=40)
    r, mu2, _ = _dense_mu2(frame)
    assert r.stats["mu2"] == pytest.approx(mu2, rel=1e-10)
    big, *_ = random_design(4, n_assessors=420, n_objects=900, reads=3)  # > 400 assessors: eigsh on T^-1
    r_big, mu2_big, _ = _dense_mu2(big)
    assert r_big.stats["mu2"] == pytest.approx(mu2_big, rel=1e-8)


def test_sum_inverse_full_spectrum_identity_and_hutchinson(monkeypatch):
    frame, *_ = random_design(5, n_assessors=12, n_objects=30)
    conf = frame.rename(columns={"sd": "confidence"}).assign(confidence=lambda d: 1 / d["confidence"] ** 2)
    r, _, mu_full = _dense_mu2(frame)
    rc = calibrate_fixed(conf)
    w, C = rc.stats["posterior_variance"], rc.biases["total_confidence"].sum()
    assert rc.stats["rms_bound"] == pytest.approx(np.sqrt(w / (2 * C) * np.sum(1 / mu_full)), rel=1e-10)
    assert "inverse of the reduced system" in rc.stats["trace_method"]  # the SEs' inverse gives the trace exactly
    monkeypatch.setattr(graph, "EXACT_TRACE_LIMIT", 1)  # force the stochastic estimator (sparse path: no inverse)
    monkeypatch.setattr(graph, "DENSE_ASSESSOR_LIMIT", 5)
    rh = calibrate_fixed(conf)
    assert "Hutchinson" in rh.stats["trace_method"]
    assert rh.stats["rms_bound"] == pytest.approx(rc.stats["rms_bound"], rel=0.05)


def test_rms_bound_matches_expected_error_for_confidence_input():
    """The full-Laplacian formula reproduces the actual expected weighted RMS error (issue: ~1%)."""
    frame, *_ = random_design(8, n_assessors=15, n_objects=60)
    conf = frame.assign(confidence=1 / frame["sd"] ** 2).drop(columns="sd")
    r = calibrate_fixed(conf)
    G = linear_map(frame, "weighted")
    c = 1 / frame["sd"].to_numpy() ** 2
    D = np.concatenate([r.values["total_confidence"], r.biases["total_confidence"]])
    C = r.biases["total_confidence"].sum()
    w = r.stats["posterior_variance"]
    expected_sq = w * np.trace(np.diag(D) @ G @ np.diag(1 / c) @ G.T) / (2 * C)  # E sum D d^2 / 2C, noise var w/c
    assert r.stats["rms_bound"] == pytest.approx(np.sqrt(expected_sq), rel=0.03)


# --------------------------------------------------------------------------- bounds vs exact worst case
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("gauge", ["weighted", "simple"])
@pytest.mark.parametrize("kind", ["sd", "confidence"])
def test_every_bound_holds_against_exact_worst_case(seed, gauge, kind):
    frame, *_ = random_design(100 + seed, n_assessors=int(3 + seed), n_objects=12, reads=2 if seed % 2 else 3)
    data = frame if kind == "sd" else frame.assign(confidence=1 / frame["sd"] ** 2).drop(columns="sd")
    r = calibrate_fixed(data, gauge=gauge)
    G = linear_map(frame, gauge)
    c = 1 / frame["sd"].to_numpy() ** 2
    N, w = len(frame), r.stats["posterior_variance"]
    # max |row . ds| subject to sum c ds^2 <= N w  equals sqrt(N w) * ||row / sqrt(c)||
    worst = np.sqrt(N * w) * np.linalg.norm(G / np.sqrt(c)[None, :], axis=1)
    bounds = np.concatenate([r.values["robustness_bound"], r.biases["robustness_bound"]])
    assert np.all(bounds >= worst * (1 - 1e-9)), np.max(worst / bounds)
    # ...and the weighted-gauge operator bound is tight somewhere (sqrt(2/mu2) is attained up to the 1/sqrt(C_o) step)
    if gauge == "weighted":
        D = np.concatenate([r.values["total_confidence"], r.biases["total_confidence"]])
        op = np.linalg.norm(np.sqrt(D)[:, None] * G / np.sqrt(c)[None, :], 2)
        assert op <= np.sqrt(2 / r.stats["mu2"]) * (1 + 1e-9)
        assert op >= 0.6 * np.sqrt(2 / r.stats["mu2"])


def test_seed_simple_gauge_rule_is_not_always_valid_but_ours_is():
    """Issue 2: the seed's 'divide by sqrt 2' can be exceeded; our simple-gauge bounds never are."""
    exceeded = False
    for seed in range(12):
        frame, *_ = random_design(200 + seed, n_assessors=6, n_objects=10, reads=2)
        rw = calibrate_fixed(frame, gauge="weighted")
        G = linear_map(frame, "simple")
        c = 1 / frame["sd"].to_numpy() ** 2
        worst = np.sqrt(len(frame)) * np.linalg.norm(G / np.sqrt(c)[None, :], axis=1)
        seed_rule = np.concatenate([rw.values["robustness_bound"], rw.biases["robustness_bound"]]) / np.sqrt(2)
        exceeded |= bool(np.any(worst > seed_rule * (1 + 1e-9)))
    assert exceeded


# --------------------------------------------------------------------------- properties
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.floats(-50, 50, allow_nan=False))
def test_shifting_all_scores_shifts_values_only(seed, k):
    frame, *_ = random_design(seed, n_assessors=5, n_objects=12)
    r0 = calibrate_fixed(frame)
    r1 = calibrate_fixed(frame.assign(score=frame["score"] + k))
    np.testing.assert_allclose(r1.values["value"], r0.values["value"] + k, atol=1e-8)
    np.testing.assert_allclose(r1.biases["bias"], r0.biases["bias"], atol=1e-8)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.floats(-20, 20, allow_nan=False), which=st.integers(0, 4))
def test_shifting_one_assessor_moves_only_its_bias_contrast(seed, k, which):
    frame, *_ = random_design(seed, n_assessors=5, n_objects=12)
    name = f"A{which}"
    r0 = calibrate_fixed(frame, gauge="simple")
    shifted = frame.assign(score=np.where(frame["assessor"] == name, frame["score"] + k, frame["score"]))
    r1 = calibrate_fixed(shifted, gauge="simple")
    db = r1.biases["bias"] - r0.biases["bias"]
    # in the simple gauge the shift k is split: that assessor +k(1-1/A), others -k/A, values +k/A
    A = len(db)
    expected = pd.Series(-k / A, index=db.index)
    expected[name] += k
    np.testing.assert_allclose(db, expected, atol=1e-8)
    np.testing.assert_allclose(r1.values["value"] - r0.values["value"], k / A, atol=1e-8)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), factor=st.floats(1e-3, 1e3))
def test_scaling_confidences_changes_nothing(seed, factor):
    frame, *_ = random_design(seed, n_assessors=5, n_objects=12)
    conf = frame.assign(confidence=1 / frame["sd"] ** 2).drop(columns="sd")
    r0 = calibrate_fixed(conf)
    r1 = calibrate_fixed(conf.assign(confidence=conf["confidence"] * factor))
    np.testing.assert_allclose(r1.values["value"], r0.values["value"], atol=1e-8)
    np.testing.assert_allclose(r1.biases["bias"], r0.biases["bias"], atol=1e-8)
    np.testing.assert_allclose(r1.values["robustness_bound"], r0.values["robustness_bound"], rtol=1e-7)  # w absorbs the scale
    assert r1.stats["rms_bound"] == pytest.approx(r0.stats["rms_bound"], rel=1e-7)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), perm_seed=st.integers(0, 10_000))
def test_row_order_and_labels_do_not_matter(seed, perm_seed):
    frame, *_ = random_design(seed, n_assessors=5, n_objects=12)
    r0 = calibrate_fixed(frame)
    perm = np.random.default_rng(perm_seed).permutation(len(frame))
    shuffled = frame.iloc[perm].reset_index(drop=True)
    relabel = shuffled.assign(assessor="rev-" + shuffled["assessor"], object="item " + shuffled["object"])
    r1 = calibrate_fixed(relabel)
    v1 = r1.values.rename(index=lambda s: s.removeprefix("item ")).loc[r0.values.index]
    b1 = r1.biases.rename(index=lambda s: s.removeprefix("rev-")).loc[r0.biases.index]
    np.testing.assert_allclose(v1.to_numpy(float), r0.values.to_numpy(float), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(b1.to_numpy(float), r0.biases.to_numpy(float), rtol=1e-9, atol=1e-9)


# --------------------------------------------------------------------------- inputs and outputs
def test_levels_defaults_override_and_case():
    frame, *_ = random_design(1, n_assessors=4, n_objects=8, sd_choices=(0.5, 1.0, 2.0))
    by_sd = calibrate_fixed(frame)
    names = {0.5: "high", 1.0: " Medium ", 2.0: "LOW"}
    lev = frame.assign(level=frame["sd"].map(names)).drop(columns="sd")
    by_level = calibrate_fixed(lev, levels={"High": 0.5, "Medium": 1.0, "Low": 2.0})  # SDs: same fit as by_sd
    np.testing.assert_allclose(by_level.values["value"], by_sd.values["value"])
    np.testing.assert_allclose(by_level.values["se"], by_sd.values["se"])
    relative = calibrate_fixed(lev, level_ratio=2.0)  # default levels are relative: 4, 1, 1/4 -> same weights
    np.testing.assert_allclose(relative.values["value"], by_sd.values["value"])
    custom = calibrate_fixed(lev, levels={"High": 1, "Medium": 1, "Low": 1})
    equal = calibrate_fixed(frame.assign(sd=1.0))
    np.testing.assert_allclose(custom.values["value"], equal.values["value"])
    assert by_level.stats["uncertainty_kind"] == "level"


def test_parallel_sequences_equal_table():
    frame, *_ = random_design(2)
    r0 = calibrate_fixed(frame)
    r1 = calibrate_fixed(assessors=frame["assessor"].tolist(), objects=frame["object"].tolist(),
                           scores=frame["score"].tolist(), sd=frame["sd"].tolist())
    pd.testing.assert_frame_equal(r0.values, r1.values)


def test_outputs_shapes_flags_and_frames():
    frame, *_ = random_design(6)
    frame.loc[3, "score"] += 25  # a wild evaluation
    r = calibrate_fixed(frame)
    assert list(r.values.columns) == ["value", "se", "lower", "upper", "robustness_bound", "total_confidence", "n",
                                      "raw_mean"]
    assert list(r.biases.columns) == ["bias", "se", "lower", "upper", "robustness_bound", "total_confidence", "n"]
    assert list(r.residuals.columns) == ["assessor", "object", "score", "fitted", "residual", "std_residual", "anomalous"]
    assert r.residuals.loc[3, "anomalous"]
    assert r.residuals["anomalous"].sum() <= 3
    np.testing.assert_allclose(r.residuals["fitted"] + r.residuals["residual"], frame["score"])
    assert set(r.to_frames()) == {"Values", "Biases", "Residuals", "Diagnostics"}
    for key in ("n_evaluations", "n_assessors", "n_objects", "n_components", "mu2", "residual",
                "posterior_variance", "rms_bound", "gauge", "uncertainty_kind"):
        assert key in r.stats
    assert "mu2" in r.summary()


def test_grid_to_long_roundtrip():
    grid = pd.DataFrame({"R1": [5, None, 7], "R2": [6, 4, None], "R3": [None, 5, 8]}, index=["p", "q", "r"])
    sds = pd.DataFrame({"R1": [1, None, 2], "R2": [1, 1, None], "R3": [None, 0.5, 1]}, index=grid.index)
    long = xlcalib.grid_to_long(grid, sds)
    assert len(long) == 6
    assert set(long.columns) == {"assessor", "object", "score", "sd"}
    row = long[(long.assessor == "R3") & (long.object == "q")].iloc[0]
    assert row.score == 5 and row.sd == 0.5
    with pytest.raises(InputError, match="score but no uncertainty"):
        xlcalib.grid_to_long(grid, sds.assign(R1=[1, None, None]))


def test_per_component_fits_each_with_its_own_gauge():
    a, _, _ = random_design(7, n_assessors=4, n_objects=8)
    b, _, _ = random_design(8, n_assessors=3, n_objects=6)
    b = b.assign(assessor="X" + b["assessor"], object="Y" + b["object"])
    both = pd.concat([a, b], ignore_index=True)
    with pytest.raises(InputError, match="not connected.*component 1.*component 2"):
        calibrate_fixed(both)
    r = calibrate_fixed(both, per_component=True)
    ra = calibrate_fixed(a)
    assert r.stats["n_components"] == 2
    np.testing.assert_allclose(r.values.loc[ra.values.index, "value"], ra.values["value"], atol=1e-10)
    np.testing.assert_allclose(r.values.loc[ra.values.index, "robustness_bound"], ra.values["robustness_bound"], rtol=1e-10)
    assert set(r.values["component"]) == {1, 2} and "component" in r.residuals and "component" in r.biases
    assert len(r.stats["mu2"]) == 2


def test_design_check_suggestions_raise_mu2():
    frame, *_ = random_design(9, n_assessors=8, n_objects=16, reads=2)
    d = xlcalib.design_check(frame["assessor"], frame["object"], k=3)
    r = calibrate_fixed(frame.assign(sd=1.0))
    assert d.n_components == 1 and d.mu2 == pytest.approx(r.stats["mu2"])
    assert len(d.suggestions) == 3
    assert (d.suggestions["mu2_after"] >= d.mu2).all()
    after = calibrate_fixed(pd.concat([frame.assign(sd=1.0), pd.DataFrame(
        {"assessor": [d.suggestions.assessor[0]], "object": [d.suggestions.object[0]], "score": [5.0], "sd": [1.0]})],
        ignore_index=True))
    assert after.stats["mu2"] == pytest.approx(d.suggestions["mu2_after"][0])
    split = pd.DataFrame({"assessor": ["a", "a", "b", "b"], "object": ["x", "y", "z", "t"]})
    d2 = xlcalib.design_check(split["assessor"], split["object"])
    assert d2.n_components == 2 and len(d2.suggestions) == 1


# --------------------------------------------------------------------------- bad input, one message each
def _base():
    return pd.DataFrame({"assessor": ["A", "A", "B", "B"], "object": ["x", "y", "x", "y"],
                         "score": [5.0, 7.0, 6.0, 8.0], "sd": [1.0, 1.0, 1.0, 1.0]})


@pytest.mark.parametrize(
    "column, value, pattern",
    [
        ("score", None, r"row 3 of the evaluations \(assessor B, object x\): score is blank"),
        ("score", "abc", r"row 3 .* score is not a number \('abc'\)"),
        ("score", np.nan, r"row 3 .* score is blank"),
        ("score", np.inf, r"row 3 .* score is not finite"),
        ("sd", 0.0, r"row 3 .* sd must be positive"),
        ("sd", -1.0, r"row 3 .* sd must be positive"),
        ("sd", None, r"row 3 .* sd is blank"),
        ("assessor", None, r"row 3 of the evaluations: the assessor is blank"),
    ],
)
def test_bad_cell_messages_name_the_row(column, value, pattern):
    frame = _base().astype(object)
    frame.loc[2, column] = value
    with pytest.raises(InputError, match=pattern) as info:
        calibrate_fixed(frame)
    assert info.value.where["row"] == 2


def test_unknown_level():
    frame = _base().drop(columns="sd").assign(level=["High", "High", "Meh", "Low"])
    with pytest.raises(InputError, match=r"row 3 .* unknown confidence level 'Meh'; known levels: High, Medium, Low"):
        calibrate_fixed(frame)


def test_duplicate_pair_names_both_rows():
    frame = pd.concat([_base(), _base().iloc[[1]]], ignore_index=True)
    with pytest.raises(InputError, match=r"assessor A evaluated object y more than once \(rows 2, 5"):
        calibrate_fixed(frame)


def test_one_assessor_one_object_disconnected_lengths_and_columns():
    with pytest.raises(InputError, match="only one assessor"):
        calibrate_fixed(_base().assign(assessor="A", object=["x", "y", "z", "t"]))
    with pytest.raises(InputError, match="only one object"):
        calibrate_fixed(_base().assign(object="x", assessor=["A", "B", "C", "D"]))
    with pytest.raises(InputError, match="not connected"):
        calibrate_fixed(_base().assign(object=["x", "y", "z", "t"]))
    with pytest.raises(InputError, match="differ in length"):
        calibrate_fixed(assessors=["A", "B"], objects=["x"], scores=[1, 2], sd=[1, 1])
    with pytest.raises(InputError, match="exactly one uncertainty column"):
        calibrate_fixed(_base().assign(confidence=1.0))
    with pytest.raises(InputError, match="lacks column"):
        calibrate_fixed(_base().drop(columns="score"))
    with pytest.raises(InputError, match="gauge"):
        calibrate_fixed(_base(), gauge="mean")


def test_confidence_input_needs_degrees_of_freedom():
    conf = _base().drop(columns="sd").assign(confidence=1.0).iloc[:3]
    for model in ("fixed", "random-assessors", "random-both", "random-objects"):  # no model reports a zero noise
        with pytest.raises(InputError, match="N - A - O \\+ groups = 3 - 2 - 2 \\+ 1 = 0"):
            xlcalib.calibrate(conf, model=model)


def test_input_is_not_modified():
    frame, *_ = random_design(12)
    before = frame.copy(deep=True)
    calibrate_fixed(frame, gauge="simple")
    pd.testing.assert_frame_equal(frame, before)


def test_sparse_iterative_path_equals_dense(monkeypatch):
    """Panels above DENSE_ASSESSOR_LIMIT use CG, eigsh on an operator and Hutchinson traces; same answers."""
    frame, *_ = random_design(21, n_assessors=30, n_objects=90, reads=3)
    conf = frame.assign(confidence=1 / frame["sd"] ** 2).drop(columns="sd")
    dense = calibrate_fixed(conf)
    monkeypatch.setattr(graph, "DENSE_ASSESSOR_LIMIT", 5)
    monkeypatch.setattr(graph, "EXACT_TRACE_LIMIT", 5)
    sparse = calibrate_fixed(conf)
    np.testing.assert_allclose(sparse.values["value"], dense.values["value"], atol=1e-9)
    np.testing.assert_allclose(sparse.biases["bias"], dense.biases["bias"], atol=1e-9)
    assert sparse.stats["mu2"] == pytest.approx(dense.stats["mu2"], rel=1e-7)
    assert sparse.stats["rms_bound"] == pytest.approx(dense.stats["rms_bound"], rel=0.05)  # stochastic trace


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**6, 10**6), st.none(),
                          st.booleans(), st.text(max_size=4)), min_size=2, max_size=12))
def test_vectorised_number_check_names_the_same_cell_as_the_cell_by_cell_rule(cells):
    """The C-level coercion accepts exactly what the per-cell rule accepts and names the same first bad cell."""
    from xlcalib.calibration.panel.data import numeric_column

    def per_cell(values):  # the rule's order: a cell that is no number, else a non-finite one, else one out of range
        for test in (lambda x: x is None or isinstance(x, (bool, str)), lambda x: not np.isfinite(float(x)),
                     lambda x: abs(float(x)) > 1e15):
            for i, x in enumerate(values):
                if test(x):
                    return i
        return None

    expected = per_cell(cells)
    ids = lambda i: f"row {i}"  # noqa: E731
    if expected is None:
        np.testing.assert_array_equal(numeric_column(cells, "score", ids), np.array(cells, dtype=float))
    else:
        with pytest.raises(InputError) as info:
            numeric_column(cells, "score", ids)
        assert info.value.where["row"] == expected


def test_keyword_series_take_the_same_path_as_a_table():
    frame, *_ = random_design(4)
    by_table = calibrate_fixed(frame)
    by_series = calibrate_fixed(assessors=frame["assessor"], objects=frame["object"], scores=frame["score"],
                                sd=frame["sd"])
    pd.testing.assert_frame_equal(by_table.values, by_series.values)


def test_blank_ids_are_found_as_a_name_by_name_check_finds_them():
    """The fast search for blank ids (joined by NUL, one regular expression) agrees with str.strip() name by
    name, whatever white space (ASCII or not) the names hold."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from xlcalib.calibration.panel.data import _blank_text

    alphabet = st.sampled_from(["a", "B", "7", " ", "\t", "\n", "\u00a0", "\u3000", "é", "\x1f"])

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(st.lists(st.text(alphabet, max_size=4), min_size=1, max_size=12, unique=True))
    def check(names):
        got = _blank_text(np.array(names, dtype=object))
        expected = np.array([not n.strip() for n in names])
        assert (got is None and not expected.any()) or (got is not None and got.tolist() == expected.tolist())

    check()


def test_every_figure_a_fit_reports_has_one_meaning():
    """The Diagnostics, the Diagnostics sheet and CALIB_STATS read one table of meanings: every figure any model
    reports (with scale use, a declared scale and a disconnected panel too) has its plain name and meaning."""
    from xlcalib.calibration import MODELS
    from xlcalib.calibration.meanings import STATISTICS
    from xlcalib.calibration.panel.simulate import simulate_panel

    ev = simulate_panel(16, 80, 3, seed=1).evaluations
    keys = set()
    for model in MODELS:
        for kwargs in ({}, {"scale": (1, 6)}, {"scale_use": "on"}):
            if MODELS[model].POOLED and "scale_use" in kwargs:  # no gains of readers pooled into the noise
                continue
            keys |= set(xlcalib.calibrate(ev.drop(columns="sd"), model=model, **kwargs).stats)
        keys |= set(xlcalib.calibrate(ev.drop(columns="level"), model=model).stats)
    other = ev.assign(assessor="X" + ev["assessor"], object="Y" + ev["object"]).iloc[:100]
    keys |= set(xlcalib.calibrate(pd.concat([ev, other]).drop(columns="sd")).stats)
    anonymous = ev.assign(assessor=ev["object"] + "/R" + ev.groupby("object").cumcount().astype(str))
    keys |= set(xlcalib.calibrate(anonymous.drop(columns="level"), scale=(1, 6)).stats)  # the default, switched
    missing = sorted(keys - set(STATISTICS))
    assert not missing
    table = xlcalib.calibrate(ev.drop(columns="sd")).diagnostics()
    assert (table["meaning"] != "").all() and table.loc[table["statistic"] == "model", "meaning"].str.contains(
        "random-assessors").all()


@pytest.mark.parametrize("model", ["random-assessors", "random-both", "fixed", "random-objects"])
def test_every_score_the_same_is_said_and_ranks_all_tied(model):
    """A panel where everyone gave the same score has nothing to calibrate: said in words, no standard errors
    (none can be estimated from relative confidences without scatter, and zero ones would claim certainty),
    and a ranking with every object tied -- never the first k in table order funded with P = 1."""
    import warnings

    kw = dict(assessors=list("AABBCCADDBCAD"), objects=list("xyxyyzzzwwwvv"), scores=[5.0] * 13,
              confidence=[1.0] * 13, model=model)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        r = xlcalib.calibrate(**kw)
        table = r.ranking(top_k=2, lottery=True, draws=200)
    assert "nothing to calibrate" in r.summary() and r.stats["model"] == model
    assert r.values["value"].eq(5.0).all() and r.values["se"].isna().all()
    assert (table["rank"] == 1).all() and (table["rank_lower"] == 1).all() and (table["rank_upper"] == 5).all()
    assert table["p_above"].to_numpy() == pytest.approx(2 / 5, abs=1e-15)  # exchangeable: 2 places among 5
    assert (table["final"] == "funded by lottery").sum() == 2 and set(table["decision"]) == {"borderline"}
    record = table.attrs["lottery"]  # the public draw, as for any ranking: re-runnable from its record
    assert record["method"] == "informed" and len(record["digest"]) == 64 and record["places"] == 2
    assert table["chance"].tolist() == [0.4] * 5  # 2 places among 5 tied objects, in whole ten-thousandths
    assert (r.ranking(top_k=2)["final"] == "to discuss").all()
    with pytest.raises(InputError, match="fit the model exactly"):
        r.next_reads(2, top_k=2)
    declared = xlcalib.calibrate(**{**kw, "confidence": None, "sd": [1.0] * 13})  # SDs: the noise is known
    assert declared.values["se"].gt(0).all() and "exact_fit" not in declared.stats
