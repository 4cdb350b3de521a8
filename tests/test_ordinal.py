"""Svensson's method against the seed's worked examples, identities and brute force."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlcalib
from xlcalib.errors import InputError
from xlcalib.ordinal import _stats, agreement_table

# seed Figure 3 (rows = rater 1 category K, L, M; columns = rater 2), reconstructed from the OCR'd figures
FIG3A = np.array([[30, 10, 0], [0, 20, 10], [0, 0, 30]])
FIG3B = np.array([[30, 10, 0], [10, 20, 0], [0, 0, 30]])
FIG3C = np.array([[30, 7, 3], [2, 20, 4], [1, 3, 30]])
# seed Figure 7 (Fisher grade, 59 CT scans): rows radiologist 1, columns radiologist 2, F1..F4.  The OCR lost the
# cell positions; this is the one placement of the printed counts consistent with the printed margins and Table II.
FISHER = np.array([[3, 2, 0, 0], [0, 4, 1, 1], [0, 3, 9, 9], [1, 0, 2, 24]]).T


def test_example1_table1_ranks():
    r1 = ["K"] * 5 + ["L"] * 3 + ["M"] * 2
    r2 = ["K"] * 3 + ["L"] * 4 + ["M"] * 3
    ranks = xlcalib.mean_rank_table(r1, r2, categories=["K", "L", "M"])
    assert ranks["R1"].tolist() == [2, 4.5, 6.5, 8, 9.5] and ranks["R2"].tolist() == [2, 4.5, 6.5, 8, 9.5]
    r = xlcalib.svensson(r1, r2, categories=["K", "L", "M"])
    assert r.RV == 0 and r.D == 0 and r.PA == 70.0  # Table I: 7 of the 10 pairs agree


def test_figure3_values():
    a = xlcalib.svensson_from_table(FIG3A)
    assert a.RV == 0 and a.D == 0 and a.PA == 80
    b = xlcalib.svensson_from_table(FIG3B)
    assert round(b.RV, 2) == 0.01 and round(b.D, 2) == 0.02 and b.RP == 0 and b.RC == 0
    c = xlcalib.svensson_from_table(FIG3C)
    assert round(c.RV, 2) == 0.02 and round(c.D, 2) == 0.03 and round(c.RP, 2) == 0.06 and round(c.RC, 2) == 0.04
    for r in (a, b, c):
        assert r.kappa == pytest.approx(0.7, abs=0.005)  # "the same value of kappa (=0.7)"


def test_figure4_mean_ranks_of_3c():
    t = xlcalib.mean_rank_table(table=FIG3C, categories="KLM")
    got = {(row.rater1, row.rater2): (row.R1, row.R2) for row in t.itertuples()}
    assert got[("K", "K")] == (15.5, 15.5) and got[("K", "L")] == (34, 37) and got[("K", "M")] == (39, 65)
    assert got[("L", "K")] == (41.5, 31.5) and got[("L", "L")] == (52.5, 50.5) and got[("L", "M")] == (64.5, 68.5)
    assert got[("M", "K")] == (67, 33) and got[("M", "L")] == (69, 62) and got[("M", "M")] == (85.5, 85.5)


def test_fisher_grade_table2():
    r = xlcalib.svensson_from_table(FISHER, categories=["F1", "F2", "F3", "F4"])
    assert r.n == 59 and round(r.PA) == 68
    assert round(r.D, 3) == 0.037 and round(r.RV, 2) == 0.04
    assert round(r.RP, 3) == -0.084 and round(r.RC, 3) == 0.113
    assert round(r.kappa, 2) == 0.5 and round(r.kappa_max, 2) == 0.74 and round(r.kappa / r.kappa_max, 2) == 0.68
    assert round(r.SE_RP, 2) == 0.06 and round(r.SE_RC, 2) == 0.06


def _random_table(seed, m=4, n=25):
    rng = np.random.default_rng(seed)
    x = np.zeros(m * m, int)
    np.add.at(x, rng.integers(0, m * m, n), 1)
    return x.reshape(m, m)


@pytest.mark.parametrize("seed", range(5))
def test_jackknife_equals_brute_force_leave_one_out(seed):
    x = _random_table(seed, n=15)
    r = xlcalib.svensson_from_table(x)
    # expand to objects, delete each in turn
    objs = [(i, j) for i, j in np.argwhere(x > 0) for _ in range(x[i, j])]
    n = len(objs)
    loo = {k: [] for k in ("RP", "RC", "RV")}
    for drop in range(n):
        y = np.zeros_like(x)
        for t, (i, j) in enumerate(objs):
            if t != drop:
                y[i, j] += 1
        s = _stats(y)
        for k in loo:
            loo[k].append(float(s[k]))
    for k in loo:
        v = np.array(loo[k])
        se = np.sqrt((n - 1) / n * np.sum((v - v.mean()) ** 2))
        assert getattr(r, f"SE_{k}") == pytest.approx(se, rel=1e-10)


@pytest.mark.parametrize("seed", range(5))
def test_D_equals_pairwise_count(seed):
    x = _random_table(seed, n=30)
    objs = [(i, j) for i, j in np.argwhere(x > 0) for _ in range(x[i, j])]
    n = len(objs)
    disc = sum(1 for a, b in itertools.permutations(objs, 2) if (a[0] - b[0]) * (a[1] - b[1]) < 0)
    assert xlcalib.svensson_from_table(x).D == pytest.approx(disc / (n * (n - 1)))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_properties_rp_antisymmetric_rc_bounded_rank_transformable(seed):
    x = _random_table(seed, n=40)
    r, t = xlcalib.svensson_from_table(x), xlcalib.svensson_from_table(x.T)
    assert t.RP == pytest.approx(-r.RP, abs=1e-12)
    if np.isfinite(r.RC):
        assert -1 - 1e-12 <= r.RC <= 1 + 1e-12
        assert t.RC == pytest.approx(-r.RC, abs=1e-12)
    assert t.RV == pytest.approx(r.RV) and 0 <= r.RV <= 2
    # a monotone (rank-transformable) relabelling of a single rating has RV = D = 0
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 6, 30)
    cut = np.sort(rng.choice(np.arange(1, 6), 2, replace=False))
    y = np.searchsorted(cut, scores, side="right")
    rt = xlcalib.svensson(scores, y, categories=range(6))
    assert rt.RV == 0 and rt.D == 0


def test_roc_points_and_unused_categories():
    pts = xlcalib.roc_points(table=FISHER, categories=["F1", "F2", "F3", "F4"])
    assert pts["rater1"].iloc[0] == 0 and pts["rater2"].iloc[-1] == pytest.approx(1)
    assert pts["rater1"].iloc[1] == pytest.approx(4 / 59) and pts["rater2"].iloc[1] == pytest.approx(5 / 59)
    r = xlcalib.svensson(["a", "b", "b"], ["a", "b", "c"], categories=["a", "b", "c", "d"])
    assert len(r.categories) == 4


def test_missing_pairs_dropped_and_bad_inputs():
    r = xlcalib.svensson(["K", "L", None, "M", "K"], ["K", "L", "M", "", "L"], categories="KLM")
    assert r.n == 3 and r.n_dropped == 2
    with pytest.raises(InputError, match="differ in length"):
        xlcalib.svensson([1, 2], [1])
    with pytest.raises(InputError, match="rater 2, row 2: category 'Q' is not in the category order"):
        xlcalib.svensson(["K", "L"], ["K", "Q"], categories="KLM")
    with pytest.raises(InputError, match="at least 2 objects"):
        xlcalib.svensson(["K"], ["K"])
    with pytest.raises(InputError, match="square"):
        xlcalib.svensson_from_table([[1, 2, 3]])
    t, cats, dropped = agreement_table([1.0, 2, 3], [1, 2, 3.0])
    assert cats == (1, 2, 3) and np.trace(t) == 3


def test_to_frame():
    f = xlcalib.svensson_from_table(FISHER).to_frame()
    assert list(f.columns) == ["measure", "value", "SE", "meaning"]
    assert f.set_index("measure").loc["RP", "SE"] == pytest.approx(xlcalib.svensson_from_table(FISHER).SE_RP)
