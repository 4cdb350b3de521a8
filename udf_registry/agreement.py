"""Agreement family (categorical ratings, Gwet's Handbook): REL_AGREEMENT, REL_AGREEMENT_PAIRS, REL_AGREEMENT_MATRIX,
REL_AGREEMENT_BOOTSTRAP, REL_CROSSTAB, REL_AGREEMENT_WEIGHTS.

Categories are numbers or text labels; the optional ``categories`` range declares them in order (one column), or
gives each label a number for the weights (two columns: label, value).  Positions in messages are those of the
selected range ("row 3, column 2 of the ratings range").
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from xlcalib import agreement
from xlcalib.cells import (
    as_rows,
    as_vector,
    header_cells,
    is_blank,
    is_blank_range,
    label_vector,
    number_grid,
    parse_choice,
    parse_whole,
    probability_argument,
    same_length,
)
from xlcalib.errors import InputError

from .registry import Arg, category, udf

CATEGORY = category("xlcalib Agreement", reference="Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed. "
                                                    "(chance-corrected agreement, weights, standard errors), and its "
                                                    "sources: Cohen (1960), Fleiss (1971), Conger (1980), Brennan & "
                                                    "Prediger (1981), Gwet (2008), Krippendorff (2011)")
_RATINGS = Arg("ratings", "Subjects x raters range of categories (numbers or text labels); blank = not rated")
_WEIGHTS = Arg("weights", 'Optional: "identity" (default: unweighted), "linear", "quadratic", "ordinal", "radical", '
                          '"ratio", "circular", "bipolar", or a q x q range of weights in the category order')
_LEVEL = Arg("level", "Optional confidence level of the interval (default 0.95)", range=False)
_CATEGORIES = Arg("categories", "Optional range listing the categories in order (weights follow it); a second "
                                "column gives each category a number; default: the values rated, sorted")
_COEFFICIENT = Arg("coefficient", 'Optional: "gwet_ac" (default), "fleiss_kappa", "conger_kappa", '
                                  '"krippendorff_alpha", "brennan_prediger" or "percent_agreement"', range=False)
_RATERS = Arg("raters", "Optional range of the raters' names, one per column of ratings (default 1, 2, ...)")
_HEADER = Arg("header", "Optional TRUE/FALSE: add a header row (default TRUE)", range=False)
_FORMULA = "coefficient = (pa - pe) / (1 - pe); pe by coefficient (Gwet 2014, ch. 2-3)"
_SE = ("SE by Gwet's (2008) linearisation over subjects; interval estimate +- t(n-1) SE, upper end capped at 1; "
       "p two-sided for 0")


# ----------------------------------------------------------------------------
# Arguments
# ----------------------------------------------------------------------------
def _ratings(ratings, raters=None, categories=None):
    """The ratings range as the core's table: rows of cells (numbers stay numbers), raters named when given.

    A first row of names selected with the ratings (B1:E7 with the raters' names in row 1) is read as the
    raters' names, not as a subject (:func:`xlcalib.cells.header_cells`); the subjects are then numbered by
    their rows in the range, so messages still name the cell the user sees.
    """
    rows = as_rows(ratings)
    known = [] if categories is None else (list(categories.index) if isinstance(categories, pd.Series)
                                           else list(categories))
    names = header_cells(rows, known)
    if names is not None:
        rows = rows[1:]
        if is_blank_range(raters):
            raters = [names]
    first = 2 if names is not None else 1
    width = len(rows[0]) if rows else 0
    if all(type(c) in (int, float) or c is None for row in rows for c in row):
        values = np.array(rows, dtype=float).reshape(len(rows), width)  # numbers and blanks: the fast path
    else:
        values = np.empty((len(rows), width), dtype=object)
        if values.size:
            values[:] = rows
    if is_blank_range(raters):
        return values if first == 1 else pd.DataFrame(values, index=range(first, first + len(rows)))
    names = label_vector(raters, "raters")
    if len(names) != width:
        raise InputError(f"the raters range has {len(names)} name(s) for {width} column(s) of ratings")
    seen = set()
    twice = next((n for n in names if n in seen or seen.add(n)), None)
    if twice is not None:
        raise InputError(f"rater name '{twice}' appears twice in the raters range")
    return pd.DataFrame(values, index=range(first, first + len(rows)), columns=names)


def _weights(weights):
    """A scheme name (one cell) or the user's q x q matrix (a block of numbers)."""
    if is_blank_range(weights):
        return "identity"
    rows = as_rows(weights)
    if len(rows) == 1 and len(rows[0]) == 1 and isinstance(rows[0][0], str):
        return rows[0][0]
    return number_grid(weights, "weights", allow_blank=False)


def _categories(categories):
    """None, the categories in order (a row or a column; blanks skipped), or label -> value (two columns)."""
    if is_blank_range(categories):
        return None
    rows = [row for row in as_rows(categories) if not all(is_blank(c) for c in row)]
    if len(rows[0]) == 2 and len(rows) > 1 and all(is_blank(value) for _, value in rows):
        rows = [[label] for label, _ in rows]  # a label column selected with its empty value column
    if len(rows[0]) == 2 and len(rows) > 1:
        for r, (label, value) in enumerate(rows, start=1):
            if is_blank(label):
                raise InputError(f"row {r} of the categories range has a value ({value!r}) but no category")
        return pd.Series([value for _, value in rows], index=[label for label, _ in rows], dtype=object)
    cells, _ = as_vector(rows, "categories") if len(rows) > 1 else (rows[0], "column")
    return [c for c in cells if not is_blank(c)]


def _level(level) -> float:
    return 0.95 if is_blank(level) else probability_argument(level, "level")


def _coefficient(coefficient, default: str = "gwet_ac") -> str:
    return parse_choice(coefficient, "coefficient", tuple(agreement.COEFFICIENTS), default)


_CELL = re.compile(r"subject (\d+), rater (\d+)\b")
_NAMED = re.compile(r"subject (\d+), rater ('[^']*')")


def _in_range_words(message: str) -> str:
    """The core's "subject 3, rater 2" as the position in the selected range the user sees."""
    message = _CELL.sub(lambda m: f"row {m.group(1)}, column {m.group(2)} of the ratings range", message)
    return _NAMED.sub(lambda m: f"row {m.group(1)} of the ratings range (rater {m.group(2)})", message)


def _core(function, *args, **kwargs):
    try:
        return function(*args, **kwargs)
    except InputError as exc:
        raise InputError(_in_range_words(exc.message), exc.where) from None


# ----------------------------------------------------------------------------
# Functions
# ----------------------------------------------------------------------------
@udf("REL_AGREEMENT", category=CATEGORY,
     help="Chance-corrected agreement of categorical ratings: percent agreement, Brennan-Prediger, Conger's (Cohen's) "
          "and Fleiss' kappa, Gwet's AC1/AC2, Krippendorff's alpha, each with SE, interval and p (spills).",
     args=(_RATINGS, _WEIGHTS, _LEVEL, _CATEGORIES, _HEADER), core=agreement.agreement_coefficients, returns="table",
     columns=("coefficient", "estimate", "SE", "lower", "upper", "p"),
     example='=REL_AGREEMENT(B2:F41, "quadratic", 0.95, Categories!A2:A6)', formula=f"{_FORMULA}; {_SE}")
def rel_agreement(ratings, weights=None, level=None, categories=None, header=True):
    cats = _categories(categories)
    table = _core(agreement.agreement_coefficients, _ratings(ratings, None, cats), _weights(weights), cats,
                  confidence=_level(level))
    return pd.DataFrame({"coefficient": table["name"].to_numpy(), "estimate": table["estimate"].to_numpy(),
                         "SE": table["se"].to_numpy(), "lower": table["ci_low"].to_numpy(),
                         "upper": table["ci_high"].to_numpy(), "p": table["p_value"].to_numpy()})


@udf("REL_AGREEMENT_PAIRS", category=CATEGORY,
     help="One agreement coefficient for every pair of raters, with SE, interval, p and subjects (spills).",
     args=(_RATINGS, _COEFFICIENT, _WEIGHTS, _LEVEL, _CATEGORIES, _RATERS, _HEADER),
     core=agreement.pairwise_agreement, returns="table",
     columns=("rater1", "rater2", "coefficient", "estimate", "SE", "lower", "upper", "p", "n"),
     example='=REL_AGREEMENT_PAIRS(B2:F41, "conger_kappa", , , , B1:F1)',
     formula=f"{_FORMULA}, on each pair's two columns (subjects neither rated dropped); {_SE}")
def rel_agreement_pairs(ratings, coefficient=None, weights=None, level=None, categories=None, raters=None,
                        header=True):
    cats = _categories(categories)
    table = _core(agreement.pairwise_agreement, _ratings(ratings, raters, cats), _coefficient(coefficient),
                  _weights(weights), cats, confidence=_level(level))
    return pd.DataFrame({"rater1": table["rater_1"].to_numpy(), "rater2": table["rater_2"].to_numpy(),
                         "coefficient": table["name"].to_numpy(), "estimate": table["estimate"].to_numpy(),
                         "SE": table["se"].to_numpy(), "lower": table["ci_low"].to_numpy(),
                         "upper": table["ci_high"].to_numpy(), "p": table["p_value"].to_numpy(),
                         "n": table["n_subjects"].to_numpy()})


@udf("REL_AGREEMENT_MATRIX", category=CATEGORY,
     help="Rater x rater matrix of one agreement coefficient (diagonal blank): who agrees with whom (spills).",
     args=(_RATINGS, _COEFFICIENT, _WEIGHTS, _CATEGORIES, _RATERS, _HEADER), core=agreement.agreement_matrix,
     returns="table", columns=("rater",), columns_note="then one column per rater, in the order of the ratings",
     example='=REL_AGREEMENT_MATRIX(B2:F41, "gwet_ac", , , B1:F1)',
     formula=f"{_FORMULA}, on each pair's two columns (subjects neither rated dropped)")
def rel_agreement_matrix(ratings, coefficient=None, weights=None, categories=None, raters=None, header=True):
    cats = _categories(categories)
    matrix = _core(agreement.agreement_matrix, _ratings(ratings, raters, cats), _coefficient(coefficient),
                   _weights(weights), cats)
    out = matrix.reset_index()
    out.columns = ["rater", *map(str, matrix.columns)]
    return out


@udf("REL_AGREEMENT_BOOTSTRAP", category=CATEGORY,
     help="Percentile bootstrap interval of one agreement coefficient (default Krippendorff's alpha), resampling "
          "subjects; seeded, so the same seed gives the same interval.",
     args=(_RATINGS, Arg("coefficient", 'Optional: "krippendorff_alpha" (default), "gwet_ac", "fleiss_kappa", '
                                        '"conger_kappa", "brennan_prediger" or "percent_agreement"', range=False),
           _WEIGHTS, Arg("n_boot", "Optional number of bootstrap replicates (default 1000)", range=False),
           Arg("seed", "Optional random seed (default 0; same seed, same answer)", range=False), _LEVEL, _CATEGORIES,
           _HEADER),
     core=agreement.agreement_bootstrap, returns="table",
     columns=("coefficient", "estimate", "SE", "lower", "upper", "n_boot", "seed"),
     example='=REL_AGREEMENT_BOOTSTRAP(B2:F41, , "quadratic", 2000, 1)',
     formula="subjects drawn with replacement (alpha: the subjects rated twice or more), the coefficient recomputed; "
             "interval = the (1 - level)/2 and (1 + level)/2 quantiles, SE = SD of the replicates (Zapf et al. 2016)")
def rel_agreement_bootstrap(ratings, coefficient=None, weights=None, n_boot=None, seed=None, level=None,
                            categories=None, header=True):
    cats = _categories(categories)
    result = _core(agreement.agreement_bootstrap, _ratings(ratings, None, cats),
                   _coefficient(coefficient, "krippendorff_alpha"), _weights(weights), cats,
                   n_boot=parse_whole(n_boot, "n_boot", 1000, low=2),
                   seed=parse_whole(seed, "seed", 0, low=0), confidence=_level(level))
    return pd.DataFrame({"coefficient": [result.name], "estimate": [result.estimate], "SE": [result.se],
                         "lower": [result.ci_low], "upper": [result.ci_high], "n_boot": [result.n_boot],
                         "seed": [result.seed]})


@udf("REL_CROSSTAB", category=CATEGORY,
     help="Cross-table of two raters: how many subjects rater 1 put in each row category and rater 2 in each column "
          "category (spills).",
     args=(Arg("rater1", "Range of rater 1's categories, one per subject (blank = not rated)"),
           Arg("rater2", "Range of rater 2's categories for the same subjects"), _CATEGORIES, _HEADER),
     core=agreement.confusion_table, returns="table", columns=("rater1 \\ rater2",),
     columns_note="then one column per category, in the category order",
     example="=REL_CROSSTAB(B2:B60, C2:C60, Categories!A2:A5)",
     formula="n_kl = subjects with rater 1 in k and rater 2 in l; subjects one of them left blank are not counted")
def rel_crosstab(rater1, rater2, categories=None, header=True):
    first, _ = as_vector(rater1, "rater1")
    second, _ = as_vector(rater2, "rater2")
    same_length(rater1=first, rater2=second)
    try:
        table = _core(agreement.confusion_table, _ratings([[a, b] for a, b in zip(first, second)]), 1, 2,
                      _categories(categories))
    except InputError as exc:  # the two columns are the user's two ranges
        raise InputError(re.sub(r"row (\d+), column ([12]) of the ratings range",
                                lambda m: f"row {m.group(1)} of the rater{m.group(2)} range", exc.message)) from None
    out = table.reset_index()
    out.columns = ["rater1 \\ rater2", *map(str, table.columns)]
    return out


@udf("REL_AGREEMENT_WEIGHTS", category=CATEGORY,
     help="The weight matrix of a scheme for the categories in their order: how much credit each near miss gets.",
     args=(Arg("categories", "Range listing the categories in order (a second column gives each a number)"),
           Arg("weights", 'Optional scheme: "quadratic" (default), "linear", "ordinal", "radical", "ratio", '
                          '"circular", "bipolar" or "identity"', range=False), _HEADER),
     core=agreement.agreement_weights, returns="table", columns=("category",),
     columns_note="then one column per category, in the category order",
     example='=REL_AGREEMENT_WEIGHTS(Categories!A2:A6, "linear")',
     formula="e.g. quadratic w_kl = 1 - (x_k - x_l)^2 / (x_max - x_min)^2; text categories weighted by rank "
             "(Gwet 2014, ch. 3)")
def rel_agreement_weights(categories, weights=None, header=True):
    declared = _categories(categories)
    if declared is None:
        raise InputError("the categories range is blank; list the categories in their order")
    scheme = "quadratic" if is_blank(weights) else str(weights)
    matrix = agreement.agreement_weights(declared, scheme)
    out = matrix.reset_index()
    out.columns = ["category", *map(str, matrix.columns)]
    return out
