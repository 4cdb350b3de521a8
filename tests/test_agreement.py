"""Agreement coefficients against irrCAC's recorded values, published tables, hand cases and invariances.

The irrCAC values (tests/data/agreement/expected.json) are written by tests/data/agreement/make_expected.py in a
separate environment (irrcac needs pandas < 3); this file only reads them.
"""
from __future__ import annotations

import doctest
import json
import math
import pathlib

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlcalib
from xlcalib import agreement
from xlcalib.agreement import (
    COEFFICIENTS,
    agreement_bootstrap,
    agreement_coefficients,
    agreement_matrix,
    agreement_weights,
    brennan_prediger,
    confusion_table,
    conger_kappa,
    fleiss_kappa,
    gwet_ac,
    krippendorff_agreement,
    pairwise_agreement,
    percent_agreement,
)
from xlcalib.errors import InputError

DATA = pathlib.Path(__file__).parent / "data" / "agreement"
EXPECTED = json.loads((DATA / "expected.json").read_text())
TOL = 1e-10
FIELDS = ("estimate", "se", "ci_low", "ci_high", "p_value", "pa", "pe")
TEXT_DATA = {"raw_g1g2", "raw_gender", "random_passfail", "random_severity"}


def load(name: str) -> pd.DataFrame:
    if name in TEXT_DATA:  # blanks stay "" (missing), every other cell is its text
        return pd.read_csv(DATA / f"{name}.csv", index_col=0, dtype=str, keep_default_na=False)
    return pd.read_csv(DATA / f"{name}.csv", index_col=0)


def case_arguments(case: dict) -> dict:
    weights = np.array(case["weights"]) if isinstance(case["weights"], list) else case["weights"]
    categories = case["values"] if case["values"] is not None else case["categories"]
    return {"weights": weights, "categories": categories, "layout": case["layout"]}


def case_id(case: dict) -> str:
    weights = "matrix" if isinstance(case["weights"], list) else case["weights"]
    declared = "" if case["categories"] is None and case["values"] is None else "-declared"
    return f"{case['data']}-{weights}{declared}-{case['layout']}"


def assert_matches(row, expected: dict, what: str):
    for name in FIELDS:
        assert row[name] == pytest.approx(expected[name], abs=TOL, rel=0), f"{what}: {name}"


# ----------------------------------------------------------------------------
# irrCAC and R irrCAC conventions, recorded
# ----------------------------------------------------------------------------
@pytest.mark.parametrize("case", EXPECTED["cases"], ids=[case_id(c) for c in EXPECTED["cases"]])
def test_all_coefficients_match_irrcac(case):
    table = agreement_coefficients(load(case["data"]), **case_arguments(case))
    assert set(table.index) == set(case["results"])
    for key, expected in case["results"].items():
        assert_matches(table.loc[key], expected, f"{case_id(case)} {key}")


def test_single_functions_equal_the_table_rows():
    ratings = load("random_grades")
    table = agreement_coefficients(ratings, "quadratic")
    functions = {"percent_agreement": percent_agreement, "brennan_prediger": brennan_prediger,
                 "conger_kappa": conger_kappa, "fleiss_kappa": fleiss_kappa, "gwet_ac": gwet_ac,
                 "krippendorff_alpha": krippendorff_agreement}
    for key, function in functions.items():
        result = function(ratings, "quadratic")
        assert result.coefficient == key
        pd.testing.assert_frame_equal(result.to_frame(), table.loc[[key]], check_dtype=False)


@pytest.mark.parametrize("entry", EXPECTED["pairwise"],
                         ids=[f"{e['data']}-{e['rater_1']}-{e['rater_2']}-{e['weights']}" for e in EXPECTED["pairwise"]])
def test_pairwise_matches_irrcac_on_each_pair(entry):
    ratings = load(entry["data"])
    for key, expected in entry["results"].items():
        table = pairwise_agreement(ratings, key, entry["weights"], entry["categories"]).set_index(["rater_1", "rater_2"])
        assert_matches(table.loc[(entry["rater_1"], entry["rater_2"])], expected, key)


def test_published_values():
    """Gwet (2014) 12 x 4 example (irrCAC docs), Fleiss (1971) Table 1, the 10 x 14 teaching table."""
    four = load("raw_4raters")
    assert round(gwet_ac(four).estimate, 4) == 0.7754 and round(gwet_ac(four).se, 5) == 0.14295
    assert round(brennan_prediger(four).estimate, 4) == 0.7727
    assert round(fleiss_kappa(four).estimate, 5) == 0.76117
    ac2 = gwet_ac(four, "bipolar")
    assert ac2.name == "Gwet's AC2" and round(ac2.estimate, 5) == 0.90037 and round(ac2.se, 5) == 0.10582
    assert round(fleiss_kappa(load("fleiss1971"), layout="counts").estimate, 3) == 0.430
    assert round(fleiss_kappa(load("teaching_10x14"), layout="counts").estimate, 3) == 0.210


def test_percent_agreement_se_is_brennan_prediger_se_without_chance():
    """With every subject rated twice or more, SE(pa) = SE(BP) (1 - pe_BP): the pa.coeff.raw convention."""
    case = next(c for c in EXPECTED["cases"] if c["data"] == "raw_gender" and c["weights"] == "identity")
    bp = case["results"]["brennan_prediger"]
    result = percent_agreement(load("raw_gender"), categories=["a", "b", "c"])
    assert result.se == pytest.approx(bp["se"] * (1 - bp["pe"]), abs=TOL)
    assert result.estimate == pytest.approx(bp["pa"], abs=TOL)


# ----------------------------------------------------------------------------
# Hand-computed cases and identities
# ----------------------------------------------------------------------------
def two_raters_from_table(table) -> np.ndarray:
    table = np.asarray(table)
    pairs = [(i + 1, j + 1) for i in range(table.shape[0]) for j in range(table.shape[1]) for _ in range(table[i, j])]
    return np.array(pairs, dtype=float)


def test_two_rater_hand_case():
    """po = 0.7; margins (0.5, 0.5) and (0.6, 0.4): Cohen 0.4, Scott 0.39394, AC1 0.40594, BP 0.4."""
    x = two_raters_from_table([[20, 5], [10, 15]])
    table = agreement_coefficients(x)
    assert table.loc["percent_agreement", "estimate"] == pytest.approx(0.7, abs=1e-14)
    assert table.loc["conger_kappa", "estimate"] == pytest.approx(0.4, abs=1e-14)
    assert table.loc["conger_kappa", "name"] == "Cohen's kappa"
    assert table.loc["fleiss_kappa", "estimate"] == pytest.approx((0.7 - 0.505) / 0.495, abs=1e-14)
    assert table.loc["fleiss_kappa", "name"] == "Scott's pi"
    assert table.loc["gwet_ac", "estimate"] == pytest.approx((0.7 - 0.495) / 0.505, abs=1e-14)
    assert table.loc["brennan_prediger", "estimate"] == pytest.approx(0.4, abs=1e-14)
    # with all subjects rated twice, the BP and PA subject terms are 0/1 agreements: var = s^2 / n of a proportion
    agree = (x[:, 0] == x[:, 1]).astype(float)
    se_pa = agree.std(ddof=1) / math.sqrt(len(agree))
    assert table.loc["percent_agreement", "se"] == pytest.approx(se_pa, rel=1e-12)
    assert table.loc["brennan_prediger", "se"] == pytest.approx(se_pa / 0.5, rel=1e-12)


def test_interval_and_p_value_convention():
    r = gwet_ac(load("raw_5observers"), confidence=0.9)
    from scipy import stats

    half = stats.t.ppf(0.95, r.df) * r.se
    assert r.df == r.n_subjects - 1 == 14
    assert r.ci_low == pytest.approx(r.estimate - half, abs=1e-14)
    assert r.ci_high == pytest.approx(min(1.0, r.estimate + half), abs=1e-14)
    assert r.p_value == pytest.approx(2 * stats.t.sf(abs(r.estimate / r.se), r.df), rel=1e-12)
    assert gwet_ac(load("raw_4raters")).ci_high == 1.0  # the cap


def test_finite_population_correction():
    ratings = load("random_grades")
    for function in (gwet_ac, fleiss_kappa, conger_kappa, krippendorff_agreement):
        infinite = function(ratings)
        finite = function(ratings, population_size=200)
        n_rated = int((~ratings.isna()).any(axis=1).sum())
        assert finite.estimate == infinite.estimate
        assert finite.se == pytest.approx(infinite.se * math.sqrt(1 - n_rated / 200), rel=1e-12)
    with pytest.raises(InputError, match="population_size"):
        gwet_ac(ratings, population_size=10)


@pytest.mark.parametrize("seed", range(4))
def test_krippendorff_equals_reliability_alpha(seed):
    """Gwet's form of alpha with identity, quadratic and ratio weights = Krippendorff's nominal, interval, ratio."""
    rng = np.random.default_rng(seed)
    x = rng.integers(1, 6, (30, 4)).astype(float) + rng.integers(0, 2, (30, 1))
    x[rng.random(x.shape) < 0.2] = np.nan
    for weights, level in (("identity", "nominal"), ("quadratic", "interval"), ("ratio", "ratio")):
        ours = krippendorff_agreement(x, weights).estimate
        assert ours == pytest.approx(xlcalib.reliability.krippendorff_alpha(x, level), abs=1e-12)


def test_count_table_gives_the_coefficients_of_the_ratings():
    ratings = load("raw_4raters")
    counts = pd.DataFrame([[int((row == c).sum()) for c in (1.0, 2.0, 3.0, 4.0, 5.0)] for _, row in ratings.iterrows()],
                          columns=[1, 2, 3, 4, 5])
    from_ratings = agreement_coefficients(ratings, "quadratic").drop(index="conger_kappa")
    from_counts = agreement_coefficients(counts, "quadratic", layout="counts")
    pd.testing.assert_frame_equal(from_counts, from_ratings, check_exact=False, rtol=0, atol=1e-13)
    assert "Conger" in from_counts.attrs["note"]
    with pytest.raises(InputError, match="who rated what"):
        agreement._coefficient("conger_kappa", agreement._panel(counts, "identity", None, "counts"), 0.95, None, False)
    with pytest.raises(InputError, match="needs each rater's ratings"):
        agreement_bootstrap(counts, "conger_kappa", layout="counts")


def test_declared_values_and_text_number_matching():
    ratings = load("raw_g1g2")
    values = {"a": 1, "b": 2, "c": 4, "d": 8, "e": 9}
    recoded = ratings.apply(lambda col: col.map(lambda v: values.get(v, np.nan)))
    assert gwet_ac(ratings, "quadratic", values).estimate == pytest.approx(gwet_ac(recoded, "quadratic").estimate,
                                                                          abs=1e-14)
    numbers = [[1, 2, 2], [3, 3, 1], [2, 2, 2], [1, 1, 3]]
    as_text = [[str(v) for v in row] for row in numbers]
    mixed = [[1, "2", 2.0], ["3", 3, 1], [2, 2, "2"], [1.0, 1, " 3 "]]
    base = agreement_coefficients(numbers, "linear")
    for other in (as_text, mixed):
        pd.testing.assert_frame_equal(agreement_coefficients(other, "linear"), base)
    declared = agreement_coefficients(numbers, "linear", categories=["1", "2", "3"])
    pd.testing.assert_frame_equal(declared, base)


def test_unused_declared_category_changes_q_like_irrcac():
    ratings = load("raw_4raters")
    plain = brennan_prediger(ratings)
    wider = brennan_prediger(ratings, categories=[1, 2, 3, 4, 5, 6])
    assert plain.pe == pytest.approx(1 / 5) and wider.pe == pytest.approx(1 / 6)
    assert wider.n_categories == 6


def test_single_category_is_undefined_not_wrong():
    x = [["pass", "pass"], ["pass", "pass"], ["pass", "pass", ]]
    table = agreement_coefficients(x)
    assert table.loc["percent_agreement", "estimate"] == 1.0  # exact: whole-number counts, every pair agrees
    for key in ("brennan_prediger", "fleiss_kappa", "gwet_ac", "conger_kappa", "krippendorff_alpha"):
        assert math.isnan(table.loc[key, "estimate"]) and math.isnan(table.loc[key, "ci_low"])
    assert "undefined" in table.attrs["note"]
    declared = gwet_ac(x, categories=["pass", "fail"])  # with a second category AC1 is defined (and perfect)
    assert declared.estimate == 1.0  # exact: pa is 1 exactly and (1 - pe) / (1 - pe) is 1 in floating point


def test_weight_schemes():
    assert agreement_weights([1, 2, 3], "quadratic").to_numpy().tolist() == [[1, 0.75, 0], [0.75, 1, 0.75],
                                                                             [0, 0.75, 1]]
    text = agreement_weights(["low", "mid", "high"], "linear")
    assert list(text.index) == ["low", "mid", "high"] and text.loc["low", "high"] == 0
    spaced = agreement_weights({"low": 1, "mid": 2, "high": 5}, "linear")
    assert spaced.loc["low", "mid"] == pytest.approx(0.75)
    ordinal = agreement_weights([1, 2, 10], "ordinal")  # ranks, not values
    assert ordinal.loc[1, 2] == pytest.approx(ordinal.loc[2, 10])
    for name in agreement.WEIGHTS:
        w = agreement_weights([1, 2, 3, 4], name).to_numpy()
        assert np.allclose(np.diag(w), 1) and w.min() >= -1e-12 and w.max() <= 1 + 1e-12 and np.allclose(w, w.T)


# ----------------------------------------------------------------------------
# Rater sampling, pairs, confusion table, bootstrap
# ----------------------------------------------------------------------------
def test_rater_sampling_is_the_leave_one_rater_out_jackknife():
    ratings = load("raw_gender")
    result = gwet_ac(ratings, rater_sampling=True)
    columns = list(ratings.columns)
    leave_out = np.array([gwet_ac(ratings.drop(columns=c), categories=["a", "b", "c"]).estimate for c in columns])
    r = len(columns)
    var_r = (r - 1) / r * np.sum((leave_out - leave_out.mean()) ** 2)
    assert result.se_raters == pytest.approx(math.sqrt(var_r), rel=1e-12)
    assert result.se_subjects == pytest.approx(gwet_ac(ratings).se, rel=1e-12)
    assert result.se == pytest.approx(math.hypot(result.se_subjects, result.se_raters), rel=1e-12)
    table = agreement_coefficients(ratings, rater_sampling=True)
    assert {"se_subjects", "se_raters"} <= set(table.columns)
    with pytest.raises(InputError, match="fully crossed"):
        gwet_ac(load("raw_4raters"), rater_sampling=True)
    with pytest.raises(InputError, match="at least 3 raters"):
        gwet_ac([[1, 1], [2, 2], [1, 2]], rater_sampling=True)


def test_pairwise_and_matrix():
    ratings = load("raw_4raters")
    long = pairwise_agreement(ratings, "conger_kappa")
    assert len(long) == 6 and (long["name"] == "Cohen's kappa").all()
    matrix = agreement_matrix(ratings, "conger_kappa")
    assert list(matrix.index) == list(ratings.columns)
    assert np.isnan(np.diag(matrix.to_numpy())).all()
    assert np.allclose(matrix.to_numpy(), matrix.to_numpy().T, equal_nan=True)
    first = long.iloc[0]
    assert matrix.loc[first["rater_1"], first["rater_2"]] == first["estimate"]
    # a pair is its own two-column table with the whole table's categories
    pair = ratings[["Rater1", "Rater3"]].dropna(how="all")
    alone = conger_kappa(pair, categories=[1, 2, 3, 4, 5])
    row = long.set_index(["rater_1", "rater_2"]).loc[("Rater1", "Rater3")]
    assert row["estimate"] == alone.estimate and row["se"] == alone.se
    asymmetric = np.array(next(c["weights"] for c in EXPECTED["cases"]
                               if isinstance(c["weights"], list) and not np.allclose(c["weights"], np.array(c["weights"]).T)))
    both_orders = pairwise_agreement(ratings, "conger_kappa", asymmetric)
    assert len(both_orders) == 12


def test_confusion_table():
    x = pd.DataFrame({"Ann": ["low", "low", "high", None, "mid"], "Ben": ["low", "mid", "high", "high", None]})
    table = confusion_table(x, "Ann", "Ben", categories=["low", "mid", "high", "extreme"])
    assert list(table.index) == ["low", "mid", "high", "extreme"] and table.index.name == "Ann"
    assert table.loc["low", "low"] == 1 and table.loc["low", "mid"] == 1 and table.loc["high", "high"] == 1
    assert table.to_numpy().sum() == 3 and table.attrs["n_dropped"] == 2
    numbers = confusion_table(load("raw_4raters"), "Rater1", "Rater4")
    assert numbers.to_numpy().sum() == 9 and numbers.shape == (5, 5) and numbers.attrs["n_dropped"] == 2
    with pytest.raises(InputError, match="not a rater"):
        confusion_table(x, "Ann", "Cleo")


def test_bootstrap_is_seeded_and_close_to_the_analytic_se():
    rng = np.random.default_rng(3)
    truth = rng.integers(1, 5, 400)
    x = np.where(rng.random((400, 4)) < 0.7, truth[:, None], rng.integers(1, 5, (400, 4))).astype(float)
    x[rng.random(x.shape) < 0.2] = np.nan
    for key in COEFFICIENTS:
        a = agreement_bootstrap(x, key, n_boot=400, seed=11)
        b = agreement_bootstrap(x, key, n_boot=400, seed=11)
        assert np.array_equal(a.replicates, b.replicates)
        assert a.ci_low < a.estimate < a.ci_high
        analytic = agreement_coefficients(x).loc[key, "se"]
        assert a.se == pytest.approx(analytic, rel=0.2), key
    other = agreement_bootstrap(x, n_boot=400, seed=12)
    assert not np.array_equal(other.replicates, a.replicates)
    # the replicate of all-ones multiplicities is the estimate itself: the reweighted sums are the point sums
    panel = agreement._panel(x, "quadratic", None, "raters")
    terms = agreement._subject_terms(panel.counts, panel.weights)
    for key in COEFFICIENTS:
        features, columns = agreement._bootstrap_features(key, panel, terms)
        sums = agreement._replicate_sums(features, columns, np.ones((1, features.shape[0])), key, panel)
        assert agreement._estimate(key, sums, panel.weights)[0][0] == pytest.approx(agreement._point(key, panel), abs=1e-13)


# ----------------------------------------------------------------------------
# Invariances (hypothesis)
# ----------------------------------------------------------------------------
def random_ratings(seed: int, n_categories: int, missing: float):
    rng = np.random.default_rng(seed)
    n, r = int(rng.integers(4, 30)), int(rng.integers(2, 6))
    truth = rng.integers(0, n_categories, n)
    x = np.where(rng.random((n, r)) < rng.uniform(0.3, 0.9), truth[:, None], rng.integers(0, n_categories, (n, r)))
    x = x.astype(float)
    x[rng.random(x.shape) < missing] = np.nan
    x[0, :2] = [0, 1]  # two categories used and one subject rated twice: every coefficient defined
    return x


def comparable(table: pd.DataFrame) -> np.ndarray:
    return table[["estimate", "se", "ci_low", "ci_high", "p_value"]].to_numpy(dtype=float)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 100_000), q=st.integers(2, 6), missing=st.sampled_from([0.0, 0.2, 0.4]))
def test_invariant_to_relabelling_categories_nominal(seed, q, missing):
    x = random_ratings(seed, q, missing)
    names = np.random.default_rng(seed + 1).permutation([f"cat{k}" for k in range(q)])
    relabelled = np.where(np.isnan(x), None, names[np.nan_to_num(x).astype(int)].astype(object))
    a = agreement_coefficients(x, categories=list(range(q)))
    b = agreement_coefficients(relabelled, categories=list(names))
    np.testing.assert_allclose(comparable(a), comparable(b), rtol=1e-9, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 100_000), weights=st.sampled_from(["identity", "quadratic", "ordinal", "circular"]))
def test_invariant_to_rater_order(seed, weights):
    x = random_ratings(seed, 4, 0.25)
    order = np.random.default_rng(seed + 2).permutation(x.shape[1])
    a = agreement_coefficients(x, weights, categories=[0, 1, 2, 3])
    b = agreement_coefficients(x[:, order], weights, categories=[0, 1, 2, 3])
    np.testing.assert_allclose(comparable(a), comparable(b), rtol=1e-9, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 100_000), q=st.integers(2, 5))
def test_ac1_is_at_least_fleiss_kappa(seed, q):
    """sum pi_k^2 >= 1/q, so AC1's chance agreement never exceeds Fleiss' (Gwet 2008)."""
    table = agreement_coefficients(random_ratings(seed, q, 0.2))
    assert table.loc["gwet_ac", "estimate"] >= table.loc["fleiss_kappa", "estimate"] - 1e-12


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 100_000), prevalence=st.floats(0.8, 0.97))
def test_ac1_resists_the_kappa_paradox_on_skewed_tables(seed, prevalence):
    """Two raters who both say 'yes' most of the time: high agreement, kappa low, AC1 stays high."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 200))
    x = np.where(rng.random((n, 2)) < prevalence, "yes", "no").astype(object)
    x[:2] = [["yes", "no"], ["no", "no"]]
    table = agreement_coefficients(x)
    assert table.loc["gwet_ac", "estimate"] >= table.loc["conger_kappa", "estimate"] - 1e-12
    assert table.loc["gwet_ac", "estimate"] >= table.loc["fleiss_kappa", "estimate"] - 1e-12


# ----------------------------------------------------------------------------
# Bad input: clear messages, all at once, input untouched
# ----------------------------------------------------------------------------
def test_bad_cells_are_reported_together_with_positions():
    x = [[1, "#N/A", 2], [True, 2, 2], [3, 2, float("inf")], [1, 1, 1]]
    with pytest.raises(InputError) as info:
        agreement_coefficients(x)
    assert "logical" in str(info.value) and "subject 2, rater 1" in str(info.value)
    y = [[1, "#N/A", 2], [1, 2, 2], [3, 2, "1,5"], [1, 1, 1]]
    with pytest.raises(InputError) as info:
        agreement_coefficients(y, categories=[1, 2, 3])
    message = str(info.value)
    assert "2 problems" in message and "#N/A" in message and "subject 1, rater 2" in message
    assert "'1,5'" in message and "not in the category list" in message


def test_argument_and_shape_errors():
    with pytest.raises(InputError, match="need the order"):
        gwet_ac([["a", "b"], ["b", "b"]], "quadratic")
    with pytest.raises(InputError, match="at least 2 raters"):
        gwet_ac([[1], [2]])
    with pytest.raises(InputError, match="no subject has two"):
        gwet_ac([[1, None], [None, 2], [3, None]])
    with pytest.raises(InputError, match="weights must be one of"):
        gwet_ac([[1, 1], [2, 2]], "cubic")
    with pytest.raises(InputError, match="must be 2 x 2"):
        gwet_ac([[1, 1], [2, 2]], np.eye(3))
    with pytest.raises(InputError, match="diagonal"):
        gwet_ac([[1, 1], [2, 2]], [[0.5, 0], [0, 1]])
    with pytest.raises(InputError, match="positive"):
        gwet_ac([[0, 1], [2, 2]], "ratio")
    with pytest.raises(InputError, match="listed twice"):
        gwet_ac([[1, 1], [2, 2]], categories=[1, 2, "1"])
    with pytest.raises(InputError, match="confidence"):
        gwet_ac([[1, 1], [2, 2]], confidence=1.5)
    with pytest.raises(InputError, match="layout"):
        gwet_ac([[1, 1], [2, 2]], layout="long")
    with pytest.raises(InputError, match="coefficient must be"):
        pairwise_agreement([[1, 1], [2, 2]], "cohen")
    with pytest.raises(InputError, match="not a count"):
        fleiss_kappa([[1, 2.5], [3, 0]], layout="counts")
    with pytest.raises(InputError, match="not a count"):
        fleiss_kappa([[1, -2], [3, 0]], layout="counts")
    with pytest.raises(InputError, match="categories declared"):
        fleiss_kappa([[1, 2], [3, 0]], layout="counts", categories=["a", "b", "c"])
    with pytest.raises(InputError, match="distinct categories"):
        gwet_ac(np.random.default_rng(0).random((2000, 2)))
    with pytest.raises(InputError, match="n_boot"):
        agreement_bootstrap([[1, 1], [2, 2]], n_boot=1)


def test_input_is_not_changed():
    ratings = load("raw_g1g2")
    before = ratings.copy()
    agreement_coefficients(ratings, "quadratic", ["a", "b", "c", "d", "e"])
    pairwise_agreement(ratings, categories=["a", "b", "c", "d", "e"])
    pd.testing.assert_frame_equal(ratings, before)


def test_rater_who_rated_nobody_is_left_out_with_a_note():
    x = pd.DataFrame({"A": [1, 2, 3, 1], "B": [1, 2, 3, 2], "C": [None] * 4})
    result = conger_kappa(x)
    assert result.n_raters == 2 and "C" in result.note
    assert result.estimate == conger_kappa(x[["A", "B"]]).estimate


def test_docstring_examples_run():
    failures, attempted = doctest.testmod(agreement, optionflags=doctest.NORMALIZE_WHITESPACE)[:2]
    assert attempted > 10 and failures == 0


def test_alpha_with_one_pairable_subject_has_no_standard_error():
    x = [[1, 2], [2, None], [None, 3], [3, None]]
    alpha = krippendorff_agreement(x, categories=[1, 2, 3])
    assert alpha.n_subjects == 1 and math.isnan(alpha.se) and math.isnan(alpha.ci_low) and "only one" in alpha.note
    assert not math.isnan(gwet_ac(x, categories=[1, 2, 3]).se)  # the others keep single-rated subjects in n


def test_index_arrays_are_intp_as_32_bit_numpy_needs(monkeypatch):
    """The whole core under the 32-bit index rules of xlwings Lite (see test_index_dtype)."""
    from .test_index_dtype import NUMPY32

    x = load("random_grades")
    expected = agreement_coefficients(x, "quadratic")
    boot = agreement_bootstrap(x, "conger_kappa", n_boot=50, seed=1)
    monkeypatch.setattr(agreement, "np", NUMPY32)
    pd.testing.assert_frame_equal(agreement_coefficients(x, "quadratic"), expected)
    assert np.array_equal(agreement_bootstrap(x, "conger_kappa", n_boot=50, seed=1).replicates, boot.replicates)
    agreement_coefficients(load("fleiss1971"), layout="counts")
    agreement_coefficients(load("raw_g1g2"), categories=["a", "b", "c", "d", "e"], rater_sampling=False)
    agreement_matrix(x)
    confusion_table(x, "R1", "R2")
    gwet_ac(load("raw_gender"), rater_sampling=True)


@pytest.mark.parametrize("seed", range(3))
def test_two_rater_kappas_equal_the_other_homes_of_kappa(seed):
    """Cohen's kappa also lives in scoring (RSMTool metrics) and ordinal (Svensson's table): the same numbers."""
    rng = np.random.default_rng(seed)
    h = rng.integers(1, 6, 80)
    m = np.clip(h + rng.integers(-1, 2, 80), 1, 5)
    x = np.column_stack([h, m]).astype(float)
    cohen = conger_kappa(x).estimate
    assert cohen == pytest.approx(xlcalib.scoring.cohen_kappa(h.astype(float), m.astype(float)), abs=1e-12)
    assert cohen == pytest.approx(xlcalib.svensson(h, m).kappa, abs=1e-12)
    qwk = xlcalib.scoring.quadratic_weighted_kappa(h, m)
    assert conger_kappa(x, "quadratic").estimate == pytest.approx(qwk, abs=1e-12)


# ----------------------------------------------------------------------------
# Two raters' table: the same estimates without one row per subject; the old homes of kappa delegate here
# ----------------------------------------------------------------------------
@pytest.mark.parametrize("weights", ["identity", "linear", "quadratic", "ordinal", "circular"])
@pytest.mark.parametrize("seed", range(3))
def test_table_agreement_equals_the_coefficients_of_the_ratings(weights, seed):
    rng = np.random.default_rng(seed)
    h = rng.integers(1, 5, 60)
    m = np.clip(h + rng.integers(-1, 2, 60), 1, 4)
    declared = [1, 2, 3, 4, 5]  # 5 is never used: it still counts in q (Brennan-Prediger, AC1)
    table = np.bincount(((h - 1) * 5 + (m - 1)).astype(np.intp), minlength=25).reshape(5, 5)
    got = agreement.table_agreement(table, weights, declared)
    expected = agreement_coefficients(np.column_stack([h, m]).astype(float), weights, declared)
    for column in ("estimate", "pa", "pe"):
        assert got[column].to_numpy() == pytest.approx(expected[column].to_numpy(), abs=1e-14)
    assert got["name"].tolist() == expected["name"].tolist()


def test_table_agreement_bad_tables():
    with pytest.raises(InputError, match="square"):
        agreement.table_agreement([[1, 2, 3]])
    with pytest.raises(InputError, match="whole numbers 0 or more"):
        agreement.table_agreement([[1, -1], [0, 2]])
    with pytest.raises(InputError, match="empty"):
        agreement.table_agreement([[0, 0], [0, 0]])
    with pytest.raises(InputError, match="3 categories named for a 2 x 2 table"):
        agreement.table_agreement([[1, 0], [0, 1]], categories=["a", "b", "c"])
    assert math.isnan(agreement.table_agreement([[5]]).loc["conger_kappa", "estimate"])  # one category: undefined


def _old_cohen_kappa(h, m):
    """scoring.cohen_kappa before it delegated (the RSMTool formula on the used categories), kept as the oracle."""
    codes = np.unique(np.concatenate([np.rint(h), np.rint(m)]), return_inverse=True)[1]
    hi, mi = codes[:len(h)], codes[len(h):]
    k = int(codes.max()) + 1
    pe = float(np.bincount(hi, minlength=k) @ np.bincount(mi, minlength=k)) / float(h.size) ** 2
    return None if pe == 1 else float((np.mean(hi == mi) - pe) / (1 - pe))


def _old_svensson_kappas(x):
    """ordinal._kappas before it delegated: PA (%), Cohen's kappa and kappa_max from the table, the oracle."""
    p = x / x.sum()
    po, pr, pc = np.trace(p), p.sum(axis=1), p.sum(axis=0)
    pe = float(pr @ pc)
    if pe >= 1:
        return 100 * po, math.nan, math.nan
    return 100 * po, (po - pe) / (1 - pe), (np.minimum(pr, pc).sum() - pe) / (1 - pe)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 100_000), n=st.integers(1, 40), q=st.integers(1, 6))
def test_old_homes_of_kappa_give_the_same_numbers_as_before(seed, n, q):
    rng = np.random.default_rng(seed)
    h = rng.integers(0, q, n).astype(float) * 1.5 + rng.choice([0.0, 0.4], n)  # rounded before kappa
    m = rng.integers(0, q, n).astype(float)
    old = _old_cohen_kappa(h, m)
    new = xlcalib.scoring.cohen_kappa(h, m)
    assert (new is None) == (old is None) and (old is None or new == pytest.approx(old, abs=1e-12))
    table = rng.integers(0, 4, (q, q)) * (rng.random((q, q)) < 0.7)
    table[0, 0] += 2
    svensson = xlcalib.svensson_from_table(table)
    for a, b in zip((svensson.PA, svensson.kappa, svensson.kappa_max), _old_svensson_kappas(table)):
        assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-12)


def test_scoring_kappa_beyond_the_categories_agreement_takes():
    h = np.arange(agreement.MAX_CATEGORIES + 1, dtype=float)
    assert xlcalib.scoring.cohen_kappa(h, h) is None  # a scale of 1,001 categories is not categorical ratings
    metrics = xlcalib.evaluation_metrics(h + 1, h + 1)
    assert metrics["kappa"] is None and metrics["exact_agreement"] == 100.0


def test_pairs_are_bounded(monkeypatch):
    monkeypatch.setattr(agreement, "MAX_PAIRS", 9)
    x = np.tile(np.arange(1, 6, dtype=float)[:, None], (1, 5))
    assert len(pairwise_agreement(x[:, :4])) == 6
    with pytest.raises(InputError, match="5 raters make 10 pairs; at most 9"):
        pairwise_agreement(x)
