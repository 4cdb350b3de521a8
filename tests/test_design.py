"""xlcalib.assign: hard constraints, infeasibility messages, reproducibility, mu2, suitability budget."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import Bounds, LinearConstraint, milp

import xlcalib
from xlcalib.calibration import assign, design_report
from xlcalib.errors import InputError


def _names(prefix, n):
    return [f"{prefix}{i}" for i in range(n)]


def _oracle(S, allowed, reads, max_load, min_load, fixed=None):
    """Independent 0/1 MILP (HiGHS branch and bound): best total suitability, or None when infeasible."""
    A, O = allowed.shape
    fixed = np.zeros((A, O), bool) if fixed is None else fixed
    n = A * O
    rows_o = np.zeros((O, n))
    rows_a = np.zeros((A, n))
    for a in range(A):
        for o in range(O):
            rows_o[o, a * O + o] = 1
            rows_a[a, a * O + o] = 1
    cons = [LinearConstraint(rows_o, reads, reads), LinearConstraint(rows_a, min_load, max_load)]
    res = milp(-S.ravel(), constraints=cons, integrality=np.ones(n),
               bounds=Bounds(fixed.ravel().astype(float), allowed.ravel().astype(float)))
    if (fixed & ~allowed).any() or res.status != 0:
        return None
    # a success is believed only with its witness: Pyodide's HiGHS build once reported success (and -0.0) for
    # reads that exceed the loads' total, with an x that meets no constraint
    x = np.round(res.x)
    witnessed = (np.abs(res.x - x) <= 1e-6).all() and (rows_o @ x == reads).all() and \
        (rows_a @ x >= min_load).all() and (rows_a @ x <= max_load).all() and \
        (x >= fixed.ravel()).all() and (x <= allowed.ravel()).all()
    return -res.fun if witnessed else None


def _check_constraints(result, a_names, o_names, reads, max_load, min_load, conflicts):
    alloc = result.allocation
    assert not alloc.duplicated(["assessor", "object"]).any()
    per_obj = alloc.groupby("object").size().reindex(o_names, fill_value=0)
    assert (per_obj.to_numpy() == reads).all()
    per_a = alloc.groupby("assessor").size().reindex(a_names, fill_value=0).to_numpy()
    assert (per_a <= max_load).all() and (per_a >= min_load).all()
    pairs = set(zip(alloc["assessor"], alloc["object"]))
    assert not pairs & set(conflicts)


@st.composite
def instances(draw):
    A = draw(st.integers(2, 5))
    O = draw(st.integers(2, 7))
    reads = np.array(draw(st.lists(st.integers(0, 3), min_size=O, max_size=O)))
    max_load = np.array(draw(st.lists(st.integers(0, 6), min_size=A, max_size=A)))
    min_load = np.minimum(np.array(draw(st.lists(st.integers(0, 3), min_size=A, max_size=A))), max_load)
    conflict_mask = np.array(draw(st.lists(st.booleans(), min_size=A * O, max_size=A * O))).reshape(A, O)
    conflict_mask &= np.array(draw(st.lists(st.booleans(), min_size=A * O, max_size=A * O))).reshape(A, O)
    use_s = draw(st.booleans())
    S = np.array(draw(st.lists(st.integers(0, 4), min_size=A * O, max_size=A * O)), dtype=float).reshape(A, O)
    share = draw(st.sampled_from([0.0, 0.8, 0.95, 1.0]))
    seed = draw(st.integers(0, 3))
    fixed = np.array(draw(st.lists(st.booleans(), min_size=A * O, max_size=A * O))).reshape(A, O)
    fixed &= ~conflict_mask & draw(st.booleans())
    fixed &= np.array(draw(st.lists(st.booleans(), min_size=A * O, max_size=A * O))).reshape(A, O)
    return A, O, reads, max_load, min_load, conflict_mask, (S if use_s else None), share, seed, fixed


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_hard_constraints_never_violated_and_infeasibility_is_exact(case):
    A, O, reads, max_load, min_load, conflict_mask, S, share, seed, fixed = case
    a_names, o_names = _names("A", A), _names("O", O)
    conflicts = [(a_names[a], o_names[o]) for a, o in zip(*np.nonzero(conflict_mask))]
    kept = [(a_names[a], o_names[o]) for a, o in zip(*np.nonzero(fixed))]
    best = _oracle(np.zeros((A, O)) if S is None else S, ~conflict_mask, reads, max_load, min_load, fixed)
    try:
        r = assign(a_names, o_names, reads, max_load, min_load=min_load, conflicts=conflicts, suitability=S,
                   min_suitability_share=share, seed=seed, max_rounds=20, fixed=kept or None)
    except InputError as exc:
        assert best is None, f"feasible instance rejected: {exc}"
        assert "no allocation" in str(exc)
        return
    assert best is not None, "infeasible instance got an allocation"
    _check_constraints(r, a_names, o_names, reads, max_load, min_load, conflicts)
    assert set(kept) <= set(zip(r.allocation["assessor"], r.allocation["object"]))
    if S is not None:
        assert r.stats["best_suitability"] == pytest.approx(best, abs=1e-4)  # the LP optimum is the true optimum
        assert r.report.total_suitability >= share * best - 1e-6


def test_infeasible_messages_name_the_binding_constraint():
    objs, ass = _names("O", 80), _names("A", 10)
    with pytest.raises(InputError, match=r"80 objects × 3 reads = 240 reads but the assessors' max loads add up to 210 \(30 short\)"):
        assign(ass, objs, 3, 21)
    with pytest.raises(InputError, match=r"min loads add up to 60 but there are only 40 reads \(20 too many\)"):
        assign(_names("A", 6), _names("O", 20), 2, 10, min_load=10)
    conflicts = [("A0", "O1"), ("A1", "O1")]
    with pytest.raises(InputError, match=r"object 'O1' wants 2 reads but only 1 assessors have no conflict with it \(1 short\)"):
        assign(_names("A", 3), _names("O", 4), 2, 4, conflicts=conflicts)
    # subtler: enough capacity in total, but the only assessors free for O0..O2 are full
    conflicts = [(a, o) for a in ("A2", "A3") for o in ("O0", "O1", "O2")]
    with pytest.raises(InputError, match=r"at most 3 of the 4 reads can be placed \(1 short"):
        assign(_names("A", 4), _names("O", 4), 1, [1, 1, 3, 3], conflicts=conflicts)


def test_min_loads_that_conflicts_make_impossible():
    objs = _names("O", 4)
    conflicts = [(a, o) for a in ("A0", "A1") for o in ("O2", "O3")]
    with pytest.raises(InputError, match=r"all 4 reads can be placed, but not while every assessor reaches their min load"):
        assign(_names("A", 3), objs, 1, 4, min_load=[2, 2, 0], conflicts=conflicts)


def test_column_generation_reaches_the_full_lp_optimum(monkeypatch):
    """Large panels start the LP from each object's best few assessors; the duals must bring in the rest."""
    import xlcalib.calibration.design.assignment.lp as lp  # the transportation LP and its column generation

    a, o, S = clustered(A=40, O=120, areas=5, seed=4)
    conflicts = [(a[i], o[j]) for i in range(0, 40, 3) for j in range(0, 120, 7)]
    full = assign(a, o, 3, 10, min_load=8, suitability=S, conflicts=conflicts, min_suitability_share=1.0)
    monkeypatch.setattr(lp, "FULL_LP_PAIRS", 100)
    monkeypatch.setattr(lp, "CANDIDATES_PER_OBJECT", 2)
    calls, real = [], lp.linprog

    def counting(*args, **kwargs):
        if "A_ub" not in kwargs:  # the transportation LP (the linking steps' programs have inequality rows)
            calls.append(args[0].size)
        return real(*args, **kwargs)

    monkeypatch.setattr(lp, "linprog", counting)
    restricted = assign(a, o, 3, 10, min_load=8, suitability=S, conflicts=conflicts, min_suitability_share=1.0)
    assert restricted.stats["best_suitability"] == pytest.approx(full.stats["best_suitability"], abs=1e-3)
    # started restricted (fewer columns than the allowed pairs alone), then priced in more pairs
    assert len(calls) >= 2 and calls[0] < 40 * 120 - len(set(conflicts))
    _check_constraints(restricted, a, o, np.full(120, 3), 10, 8, conflicts)
    with pytest.raises(InputError, match="no allocation"):
        assign(_names("A", 4), _names("O", 4), 1, [1, 1, 3, 3],
               conflicts=[(x, y) for x in ("A2", "A3") for y in ("O0", "O1", "O2")])


def test_bad_arguments_are_input_errors():
    with pytest.raises(InputError, match="not one of the assessors"):
        assign(["a", "b"], ["x", "y"], 1, 2, conflicts=[("c", "x")])
    with pytest.raises(InputError, match="whole number"):
        assign(["a", "b"], ["x", "y"], 1.5, 2)
    with pytest.raises(InputError, match="listed more than once"):
        assign(["a", "a"], ["x", "y"], 1, 2)
    with pytest.raises(InputError, match=r"min_suitability_share argument must be in \[0, 1\]"):
        assign(["a", "b"], ["x", "y"], 1, 2, min_suitability_share=1.5)
    with pytest.raises(InputError, match="suitability is 2 x 3"):
        assign(["a", "b"], ["x", "y"], 1, 2, suitability=np.ones((2, 3)))


def clustered(A=20, O=80, areas=4, seed=0):
    rng = np.random.default_rng(seed)
    primary = np.arange(A) % areas
    secondary = (primary + rng.integers(1, areas, A)) % areas
    area = rng.integers(0, areas, O)
    S = np.where(area[None, :] == primary[:, None], 1.0, np.where(area[None, :] == secondary[:, None], 0.5, 0.0))
    return _names("A", A), _names("O", O), S + 0.2 * rng.random((A, O))


def test_reproducible_with_seed():
    a, o, S = clustered()
    r1 = assign(a, o, 3, 13, suitability=S, seed=7, max_rounds=15)
    r2 = assign(a, o, 3, 13, suitability=S, seed=7, max_rounds=15)
    pd.testing.assert_frame_equal(r1.allocation, r2.allocation)
    u1 = assign(a, o, 3, 13, seed=1, max_rounds=15)
    u2 = assign(a, o, 3, 13, seed=1, max_rounds=15)
    u3 = assign(a, o, 3, 13, seed=2, max_rounds=15)
    pd.testing.assert_frame_equal(u1.allocation, u2.allocation)
    assert not u1.allocation.equals(u3.allocation)


def _dense_mu2(alloc, conf=None):
    ai, a_names = pd.factorize(alloc["assessor"])
    oi, _ = pd.factorize(alloc["object"])
    c = np.ones(len(ai)) if conf is None else conf
    Cm = np.zeros((len(a_names), oi.max() + 1))
    Cm[ai, oi] = c
    C_a, C_o = Cm.sum(1), Cm.sum(0)
    W = Cm @ np.diag(1 / C_o) @ Cm.T
    T = np.eye(len(C_a)) - W / np.sqrt(np.outer(C_a, C_a))
    return np.linalg.eigvalsh(T)[1]


def test_report_mu2_equals_dense_eigen_solve_and_design_check():
    a, o, S = clustered()
    r = assign(a, o, 3, 13, suitability=S, seed=0)
    assert r.report.mu2 == pytest.approx(_dense_mu2(r.allocation), abs=1e-10)
    assert r.baseline.mu2 == pytest.approx(_dense_mu2(r.baseline_allocation), abs=1e-10) or r.baseline.n_components > 1
    check = xlcalib.design_check(r.allocation["assessor"], r.allocation["object"])
    assert r.report.mu2 == pytest.approx(check.mu2, abs=1e-9)
    # with planned confidences too
    P = 0.5 + S
    rp = assign(a, o, 3, 13, suitability=S, planned_confidence=P, seed=0)
    conf = P[pd.Index(a).get_indexer(rp.allocation["assessor"]), pd.Index(o).get_indexer(rp.allocation["object"])]
    assert rp.report.mu2 == pytest.approx(_dense_mu2(rp.allocation, conf), abs=1e-10)
    co = rp.allocation.assign(c=conf).groupby("object")["c"].sum()
    np.testing.assert_allclose(rp.report.object_confidence.loc[co.index].to_numpy(), co.to_numpy())
    again = design_report(rp.allocation[["assessor", "object"]], a, o, suitability=S, planned_confidence=P,
                          best_suitability=rp.stats["best_suitability"])
    assert again.mu2 == pytest.approx(rp.report.mu2, abs=1e-12)
    assert again.suitability_share == pytest.approx(rp.report.suitability_share)


@pytest.mark.parametrize("share", [0.9, 0.95, 0.99])
def test_suitability_share_kept_and_mu2_improves_on_clustered_panel(share):
    a, o, S = clustered()
    r = assign(a, o, 3, 13, min_load=11, suitability=S, min_suitability_share=share, seed=0)
    assert r.report.suitability_share >= share - 1e-12
    assert r.report.total_suitability >= share * r.stats["best_suitability"] - 1e-9
    assert r.baseline.suitability_share == pytest.approx(1.0)
    assert r.report.n_components == 1
    assert r.report.mu2 > 1.5 * r.baseline.mu2 + 0.02
    _check_constraints(r, a, o, np.full(len(o), 3), 13, 11, [])


def test_share_one_keeps_the_optimum_and_fixed_reads_are_kept():
    a, o, S = clustered(A=8, O=20)
    r = assign(a, o, 2, 6, suitability=S, min_suitability_share=1.0)
    # share 1: the suitability-only optimum's total, ties broken for links (never fewer links than the LP's vertex)
    assert r.report.total_suitability == pytest.approx(r.stats["best_suitability"], abs=1e-9)
    assert r.report.mu2 >= r.baseline.mu2 - 1e-12
    assert list(r.tradeoff["minimum share"]) == [1.0]
    kept = [("A0", "O5"), ("A1", "O5"), ("A7", "O0")]  # not the most suitable pairs, kept anyway
    rk = assign(a, o, 2, 6, suitability=S, fixed=kept, conflicts=[("A2", "O5")])
    pairs = set(zip(rk.allocation["assessor"], rk.allocation["object"]))
    assert set(kept) <= pairs
    assert rk.allocation["fixed"].sum() == 3
    with pytest.raises(InputError, match="kept reads, row 1: assessor 'A2' has a conflict"):
        assign(a, o, 2, 6, fixed=[("A2", "O5")], conflicts=[("A2", "O5")])
    with pytest.raises(InputError, match="already has 2 kept reads but wants only 1"):
        assign(a, o, 1, 6, fixed=kept[:2])


def test_without_suitability_loads_are_balanced_and_connected():
    r = assign(_names("A", 10), _names("O", 40), 3, 20, seed=3)
    loads = r.report.loads
    assert loads.max() - loads.min() <= 1
    assert r.report.n_components == 1 and r.report.mu2 > 0.3
    assert np.isnan(r.report.suitability_share)
    table = r.comparison()
    assert list(table.columns) == ["statistic", "this allocation", "balanced start", "meaning"]


def test_suitability_forms_agree():
    a, o, S = clustered(A=6, O=10)
    grid = pd.DataFrame(S, index=a, columns=o)
    long = grid.stack().rename("suitability").rename_axis(["assessor", "object"]).reset_index()
    r1 = assign(a, o, 2, 5, suitability=S, seed=1)
    r2 = assign(a, o, 2, 5, suitability=grid, seed=1)
    r3 = assign(a, o, 2, 5, suitability=long, seed=1)
    pd.testing.assert_frame_equal(r1.allocation, r2.allocation)
    pd.testing.assert_frame_equal(r1.allocation, r3.allocation)


# ----------------------------------------------------------------------------
# The linking phase on panels grouped by expertise (simulate_panel: 6 subjects, 1-2 per assessor)
# ----------------------------------------------------------------------------
def _funder_panel(seed):
    """A funder's panel as in the docs: 24 assessors, 150 proposals, 4 reads each, suitability = shared subject."""
    from xlcalib.calibration.panel.simulate import simulate_panel

    p = simulate_panel(24, 150, 4, seed=seed)
    a, o = sorted(p.expertise), list(p.subjects.index)
    S = np.array([[1.0 if p.subjects[x] in p.expertise[y] else 0.0 for x in o] for y in a])
    return a, o, S, p.conflicts


def test_funder_panel_links_to_a_good_overlap_and_the_share_matters():
    from xlcalib.calibration import overlap_verdict
    from xlcalib.calibration.design.assignment import TRADEOFF_SHARES

    a, o, S, conflicts = _funder_panel(seed=0)
    r = assign(a, o, 4, 26, conflicts=conflicts, suitability=S, min_suitability_share=0.9,
               tradeoff_shares=TRADEOFF_SHARES, time_limit=900)  # no time limit cuts a stage short: reproducible
    t = r.tradeoff.set_index("minimum share")
    assert list(t.index) == list(TRADEOFF_SHARES)
    assert r.baseline.mu2 < 0.1  # expertise clusters: the suitability-only allocation is poorly linked
    assert overlap_verdict(t.loc[0.9, "mu2"]) == "good" and t.loc[0.9, "chosen"]
    assert r.report.mu2 == pytest.approx(t.loc[0.9, "mu2"]) and r.report.suitability_share >= 0.9
    # the share matters: every step down buys overlap, and every share is kept
    assert np.all(np.diff(t["mu2"].to_numpy()) > 0)
    assert np.all(t["suitability share"].to_numpy() >= t.index.to_numpy() - 1e-12)
    assert t.loc[0.8, "mu2"] >= t.loc[0.9, "mu2"] + 0.05
    assert (t["overlap"] == [overlap_verdict(m) for m in t["mu2"]]).all()
    _check_constraints(r, a, o, np.full(150, 4), 26, 0, list(conflicts.itertuples(index=False, name=None)))


@pytest.mark.parametrize("seed", [3])
def test_funder_panel_good_at_share_090_other_draw(seed):
    from xlcalib.calibration import overlap_verdict

    a, o, S, conflicts = _funder_panel(seed)
    r = assign(a, o, 4, 26, conflicts=conflicts, suitability=S, min_suitability_share=0.9, seed=seed, time_limit=900)
    assert overlap_verdict(r.report.mu2) == "good", r.tradeoff
    assert r.report.suitability_share >= 0.9 and r.report.n_components == 1


def test_overlap_words_are_one_function_everywhere():
    """assign's trade-off and report table, the Design sheet and calibrate's Diagnostics use overlap_verdict."""
    from xlcalib.calibration import overlap_verdict
    from xlcalib.presentation import stat_verdict

    a, o, S = clustered(A=12, O=40, areas=3, seed=2)
    r = assign(a, o, 3, 11, suitability=S, min_suitability_share=0.9)
    table = r.report.table().set_index("statistic")
    assert table.loc["assessor overlap", "value"] == overlap_verdict(r.report.mu2)
    assert (r.tradeoff["overlap"] == [overlap_verdict(m) for m in r.tradeoff["mu2"]]).all()
    for m in (0.0, 0.05, 0.1, 0.2999, 0.3, 0.8):
        assert stat_verdict("mu2", m).endswith(overlap_verdict(m))  # calibrate's Diagnostics sheet
    # calibrate on scores of this very allocation: its summary words for mu2 are the same function's
    rng = np.random.default_rng(0)
    alloc = r.allocation
    scores = rng.normal(size=len(alloc)) + pd.Series(rng.normal(size=len(a)), index=a).loc[alloc["assessor"]].to_numpy()
    cal = xlcalib.calibrate(assessors=alloc["assessor"], objects=alloc["object"], scores=scores,
                            sd=np.ones(len(alloc)))
    assert cal.stats["mu2"] == pytest.approx(r.report.mu2, rel=1e-6)  # equal confidences: the planned mu2
    assert f"{overlap_verdict(cal.stats['mu2'])}." in cal.summary()


@st.composite
def larger_instances(draw):
    A = draw(st.integers(5, 9))
    O = draw(st.integers(6, 14))
    reads = np.full(O, draw(st.integers(1, 3)))
    max_load = np.full(A, int(np.ceil(reads.sum() / A)) + draw(st.integers(0, 2)))
    min_load = np.maximum(max_load - draw(st.integers(1, 3)), 0)
    conflict_mask = np.array(draw(st.lists(st.booleans(), min_size=A * O, max_size=A * O))).reshape(A, O)
    conflict_mask &= np.array(draw(st.lists(st.booleans(), min_size=A * O, max_size=A * O))).reshape(A, O)
    S = np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=A * O, max_size=A * O))).reshape(A, O)
    fixed = np.array(draw(st.lists(st.booleans(), min_size=A * O, max_size=A * O))).reshape(A, O)
    fixed &= ~conflict_mask & (np.arange(O)[None, :] < 2) & (np.arange(A)[:, None] < 2)
    share = draw(st.sampled_from([0.8, 0.9, 0.95]))
    return A, O, reads, max_load, min_load, conflict_mask, S, share, fixed


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(larger_instances())
def test_hard_constraints_hold_in_blocks_and_candidate_lists(case):
    """The large-panel paths (LP blocks of a few objects, candidate lists per object) keep every constraint."""
    import xlcalib.calibration.design.assignment.linking as linking  # where the block and candidate limits live

    A, O, reads, max_load, min_load, conflict_mask, S, share, fixed = case
    a_names, o_names = _names("A", A), _names("O", O)
    conflicts = [(a_names[i], o_names[j]) for i, j in zip(*np.nonzero(conflict_mask))]
    kept = [(a_names[i], o_names[j]) for i, j in zip(*np.nonzero(fixed))]
    try:
        with pytest.MonkeyPatch.context() as mp:  # small limits: tiny instances take the large-panel paths
            mp.setattr(linking, "LINK_BLOCK_OBJECTS", 4)
            mp.setattr(linking, "LINK_ALL_ASSESSORS", 2)
            mp.setattr(linking, "LINK_CANDIDATES", 2)
            r = assign(a_names, o_names, reads, max_load, min_load=min_load, conflicts=conflicts, suitability=S,
                       min_suitability_share=share, max_rounds=15, fixed=kept or None)
    except InputError as exc:
        assert "no allocation" in str(exc)
        return
    _check_constraints(r, a_names, o_names, reads, max_load, min_load, conflicts)
    assert set(kept) <= set(zip(r.allocation["assessor"], r.allocation["object"]))
    assert r.report.total_suitability >= share * r.stats["best_suitability"] - 1e-9
    t = r.tradeoff
    assert np.all(t["suitability share"].to_numpy() >= t["minimum share"].to_numpy() - 1e-9)

