"""Regenerate the agreement fixtures: input tables (CSV) and the coefficients irrCAC gives on them (JSON).

The oracle is ``irrcac`` 0.4.4 (a Python port of Gwet's R package irrCAC).  It needs pandas < 3 (under pandas 3
it returns wrong coefficients) and pins scipy 1.12, so it runs in its own environment, never the project's:

    python3 -m venv irrcac-env
    irrcac-env/bin/pip install "pandas<3" numpy scipy
    irrcac-env/bin/pip install --no-deps irrcac==0.4.4
    irrcac-env/bin/python tests/data/agreement/make_expected.py

Conventions recorded here (tests/test_agreement.py compares at 1e-10):

* results are asked for with ``digits=15``;
* the port's Brennan-Prediger p-value is one-sided (``1 - cdf``) where R irrCAC's ``bp.coeff.raw`` and every other
  coefficient of the port use the two-sided ``2 (1 - cdf)``: it is doubled here;
* the port has no percent agreement with a standard error; it is computed below, subject by subject, as R irrCAC's
  ``pa.coeff.raw`` defines it (Brennan-Prediger's variance with chance agreement 0);
* count tables (subjects x categories) are expanded to raw ratings for the port (the coefficients other than
  Conger's depend on the counts only);
* labels with declared values are recoded to those values for the port;
* pairwise values: each pair's two columns without the subjects neither rated, with the categories of the whole
  table.
"""
from __future__ import annotations

import json
import math
import pathlib
import warnings

import numpy as np
import pandas as pd
from irrCAC import datasets
from irrCAC.raw import CAC
from scipy import stats

HERE = pathlib.Path(__file__).resolve().parent
DIGITS = 15
WEIGHTS = ["identity", "linear", "quadratic", "ordinal", "radical", "ratio", "circular", "bipolar"]
METHODS = {"brennan_prediger": "bp", "conger_kappa": "conger", "fleiss_kappa": "fleiss", "gwet_ac": "gwet",
           "krippendorff_alpha": "krippendorff"}
# Fleiss (1971), Table 1: 30 patients, 6 psychiatrists each, counts per diagnosis
FLEISS_1971 = [
    [0, 0, 0, 6, 0], [0, 3, 0, 0, 3], [0, 1, 4, 0, 1], [0, 0, 0, 0, 6], [0, 3, 0, 3, 0], [2, 0, 4, 0, 0],
    [0, 0, 4, 0, 2], [2, 0, 3, 1, 0], [2, 0, 0, 4, 0], [0, 0, 0, 0, 6], [1, 0, 0, 5, 0], [1, 1, 0, 4, 0],
    [0, 3, 3, 0, 0], [1, 0, 0, 5, 0], [0, 2, 0, 3, 1], [0, 0, 5, 0, 1], [3, 0, 0, 1, 2], [5, 1, 0, 0, 0],
    [0, 2, 0, 4, 0], [1, 0, 2, 0, 3], [0, 0, 0, 0, 6], [0, 1, 0, 5, 0], [0, 2, 0, 1, 3], [2, 0, 0, 4, 0],
    [1, 0, 0, 4, 1], [0, 5, 0, 1, 0], [4, 0, 0, 0, 2], [0, 2, 0, 4, 0], [1, 0, 5, 0, 0], [0, 0, 0, 0, 6],
]
FLEISS_CATEGORIES = ["Depression", "Personality disorder", "Schizophrenia", "Neurosis", "Other"]
# the 10-subject x 14-rater teaching table (5 categories), Fleiss' kappa 0.210
TEACHING = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1], [7, 7, 0, 0, 0],
            [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
CUSTOM = [[1.0, 0.8, 0.5, 0.2, 0.0], [0.8, 1.0, 0.8, 0.5, 0.2], [0.5, 0.8, 1.0, 0.8, 0.5],
          [0.2, 0.5, 0.8, 1.0, 0.8], [0.0, 0.2, 0.5, 0.8, 1.0]]
ASYMMETRIC = [[1.0, 0.9, 0.3, 0.0, 0.0], [0.6, 1.0, 0.9, 0.3, 0.0], [0.2, 0.6, 1.0, 0.9, 0.3],
              [0.0, 0.2, 0.6, 1.0, 0.9], [0.0, 0.0, 0.2, 0.6, 1.0]]


def percent_agreement(ratings: pd.DataFrame, categories, weights: np.ndarray, confidence=0.95) -> dict:
    """R irrCAC's pa.coeff.raw, subject by subject (an independent second implementation)."""
    rows = [row.dropna().tolist() for _, row in ratings.iterrows()]
    rows = [row for row in rows if row]
    n = len(rows)
    index = {c: k for k, c in enumerate(categories)}
    pa_i, two = [], []
    for row in rows:
        counts = np.zeros(len(categories))
        for value in row:
            counts[index[value]] += 1
        r = counts.sum()
        agree = sum(counts[k] * (sum(weights[k][l] * counts[l] for l in range(len(counts))) - 1)
                    for k in range(len(counts)))
        pa_i.append(agree / (r * (r - 1)) if r >= 2 else 0.0)
        two.append(r >= 2)
    n2 = sum(two)
    pa = sum(pa_i) / n2
    terms = [(n / n2) * p for p in pa_i]
    se = math.sqrt(sum((t - pa) ** 2 for t in terms) / (n * (n - 1)))
    half = stats.t.ppf((1 + confidence) / 2, n - 1) * se
    return {"estimate": pa, "se": se, "ci_low": pa - half, "ci_high": min(1.0, pa + half),
            "p_value": float(2 * stats.t.sf(abs(pa / se), n - 1)), "pa": pa, "pe": 0.0}


def irrcac(ratings: pd.DataFrame, weights, categories, with_conger=True) -> dict:
    out = {}
    for key, method in METHODS.items():
        if key == "conger_kappa" and not with_conger:
            continue
        cac = CAC(ratings, weights=weights, categories=list(categories), digits=DIGITS)
        est = getattr(cac, method)()["est"]
        p = float(est["p_value"])
        out[key] = {"estimate": float(est["coefficient_value"]), "se": float(est["se"]),
                    "ci_low": float(est["confidence_interval"][0]), "ci_high": float(est["confidence_interval"][1]),
                    "p_value": min(1.0, 2 * p) if key == "brennan_prediger" else p,
                    "pa": float(est["pa"]), "pe": float(est["pe"])}
    w = cac.weights_mat
    out["percent_agreement"] = percent_agreement(ratings, list(categories), w)
    return out


def expand_counts(counts: np.ndarray, labels) -> pd.DataFrame:
    """A count table as raw ratings: each subject's categories, padded with missing cells."""
    width = int(counts.sum(axis=1).max())
    rows = []
    for row in counts:
        values = [labels[k] for k, c in enumerate(row) for _ in range(int(c))]
        rows.append(values + [None] * (width - len(values)))
    return pd.DataFrame(rows)


def random_tables() -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(20240611)
    out = {}
    # 40 subjects x 5 raters, grades 1..5 with a common truth, 25% missing, one empty row and single ratings
    truth = rng.integers(1, 6, 40)
    x = np.where(rng.random((40, 5)) < 0.6, truth[:, None], rng.integers(1, 6, (40, 5))).astype(float)
    x[rng.random(x.shape) < 0.25] = np.nan
    x[3] = np.nan
    x[7, 1:] = np.nan
    x[11, [0, 2, 3, 4]] = np.nan
    out["random_grades"] = pd.DataFrame(x, columns=[f"R{j + 1}" for j in range(5)])
    # 60 subjects x 3 raters, skewed pass/fail (the kappa paradox), 10% missing
    y = np.where(rng.random((60, 3)) < 0.92, "pass", "fail").astype(object)
    y[rng.random(y.shape) < 0.1] = None
    out["random_passfail"] = pd.DataFrame(y, columns=["Ann", "Ben", "Cleo"])
    # 25 subjects x 4 raters on an ordinal text scale where one declared category is never used
    scale = ["none", "mild", "moderate", "severe", "critical"]
    z = np.array(scale[:4], dtype=object)[np.clip(rng.integers(0, 4, 25)[:, None] + rng.integers(-1, 2, (25, 4)), 0, 3)]
    z[rng.random(z.shape) < 0.15] = None
    out["random_severity"] = pd.DataFrame(z, columns=[f"Rater {j + 1}" for j in range(4)])
    return out


def case(cases, data_name, table, weights, categories, declared=None, values=None, layout="raters", ref=None):
    """Record one (table, weights, categories) case; *ref* is the table given to the port when it differs."""
    ref = table if ref is None else ref
    entry = {"data": data_name, "layout": layout, "weights": weights, "categories": declared,
             "values": values, "results": irrcac(ref, weights, categories, with_conger=layout == "raters")}
    cases.append(entry)


def write_csv(name: str, table: pd.DataFrame, index_name="subject"):
    table = table.copy()
    table.index = pd.RangeIndex(1, len(table) + 1, name=index_name)
    table.to_csv(HERE / f"{name}.csv")


def main():
    warnings.simplefilter("ignore")  # the port writes into a slice of its input (pandas' SettingWithCopyWarning)
    cases, pairwise = [], []
    numeric = {"raw_4raters": datasets.raw_4raters().astype(float),
               "raw_5observers": datasets.raw_5observers().astype(float),
               "random_grades": random_tables()["random_grades"]}
    for name, table in numeric.items():
        write_csv(name, table)
        categories = sorted(pd.unique(table.stack().dropna()))
        for weights in WEIGHTS:
            if weights == "ratio" and min(categories) <= 0:
                continue  # ratio weights need positive values
            case(cases, name, table, weights, categories)
    four = numeric["raw_4raters"]
    case(cases, "raw_4raters", four, CUSTOM, [1.0, 2.0, 3.0, 4.0, 5.0])
    case(cases, "raw_4raters", four, ASYMMETRIC, [1.0, 2.0, 3.0, 4.0, 5.0])
    declared = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]  # a declared category nobody used
    for weights in ("identity", "quadratic", "linear"):
        case(cases, "raw_4raters", four, weights, declared, declared=[1, 2, 3, 4, 5, 6])

    text = {"raw_g1g2": datasets.raw_g1g2().reset_index(drop=True), "raw_gender": datasets.raw_gender().reset_index(drop=True)}
    text.update({k: v for k, v in random_tables().items() if k != "random_grades"})
    for name, table in text.items():
        write_csv(name, table)
    for name, order in (("raw_g1g2", ["a", "b", "c", "d", "e"]), ("raw_gender", ["a", "b", "c"])):
        for weights in ("identity", "linear", "quadratic", "ordinal"):
            case(cases, name, text[name], weights, order, declared=order)
    shuffled = ["b", "a", "c", "e", "d"]
    for weights in ("quadratic", "ordinal", "circular"):
        case(cases, "raw_g1g2", text["raw_g1g2"], weights, shuffled, declared=shuffled)
    values = {"a": 1.0, "b": 2.0, "c": 4.0, "d": 8.0, "e": 9.0}
    recoded = text["raw_g1g2"].apply(lambda col: col.map(values))
    for weights in ("linear", "quadratic", "ratio", "bipolar"):
        case(cases, "raw_g1g2", text["raw_g1g2"], weights, sorted(values.values()), values=values, ref=recoded)
    case(cases, "random_passfail", text["random_passfail"], "identity", ["fail", "pass"])
    severity = ["none", "mild", "moderate", "severe", "critical"]
    for weights in ("identity", "quadratic", "ordinal"):
        case(cases, "random_severity", text["random_severity"], weights, severity, declared=severity)

    counts = {"fleiss1971": (np.array(FLEISS_1971), FLEISS_CATEGORIES),
              "teaching_10x14": (np.array(TEACHING), [1.0, 2.0, 3.0, 4.0, 5.0])}
    for name, (table, labels) in counts.items():
        frame = pd.DataFrame(table, columns=[str(int(c)) if isinstance(c, float) else c for c in labels])
        write_csv(name, frame)
        for weights in ("identity", "quadratic"):
            case(cases, name, frame, weights, labels, layout="counts", ref=expand_counts(table, labels))

    for name, table, categories in (("raw_4raters", four, [1.0, 2.0, 3.0, 4.0, 5.0]),
                                    ("raw_g1g2", text["raw_g1g2"], ["a", "b", "c", "d", "e"])):
        columns = list(table.columns)
        for g in range(len(columns)):
            for h in range(g + 1, len(columns)):
                pair = table[[columns[g], columns[h]]].dropna(how="all")
                for weights in ("identity", "quadratic"):
                    res = irrcac(pair, weights, categories)
                    pairwise.append({"data": name, "rater_1": columns[g], "rater_2": columns[h], "weights": weights,
                                     "categories": categories if name == "raw_g1g2" else None, "results": res})
    document = {"oracle": "irrcac 0.4.4 (digits=15); percent agreement as R irrCAC pa.coeff.raw",
                "cases": cases, "pairwise": pairwise}
    (HERE / "expected.json").write_text(json.dumps(document, indent=1) + "\n")
    print(f"{len(cases)} cases, {len(pairwise)} pairwise entries written")


if __name__ == "__main__":
    main()
