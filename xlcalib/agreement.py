"""Chance-corrected agreement of categorical ratings: Gwet's AC1/AC2, Fleiss' and Conger's kappa, Brennan-Prediger,
Krippendorff's alpha and percent agreement, weighted or not, with standard errors and intervals.

Every coefficient has the form ``(pa - pe) / (1 - pe)``: ``pa`` the (weighted) percent agreement, ``pe`` the
chance agreement, which is what tells the coefficients apart (Gwet 2014, *Handbook of Inter-Rater Reliability*,
4th ed., ch. 2-3).  Notation: n subjects, r raters, q categories, ``r_ik`` the number of raters who put subject i
in category k, ``r_i = sum_k r_ik``, ``w_kl`` the weight of the category pair (1 on the diagonal),
``r*_ik = sum_l w_kl r_il``.

* ``pa = (1/n2) sum_{i: r_i >= 2} sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1))``, n2 subjects with two or more
  ratings; ``pi_k = (1/n) sum_i r_ik / r_i``.
* Gwet's AC1/AC2: ``pe = T_w / (q (q-1)) sum_k pi_k (1 - pi_k)``, ``T_w = sum_kl w_kl`` (Gwet 2008, BJMSP 61:29).
* Fleiss' kappa: ``pe = sum_kl w_kl pi_k pi_l`` (Fleiss 1971, Psychol. Bull. 76:378).
* Conger's kappa: ``pe = sum_kl w_kl (pbar_k pbar_l - s2_kl / r)`` with ``p_gk`` rater g's share of category k
  over the subjects g rated, ``pbar_k`` their mean over raters and ``s2_kl`` their covariance across raters
  (Conger 1980, Psychol. Bull. 88:322); Cohen's kappa when r = 2.
* Brennan-Prediger: ``pe = T_w / q^2`` (Brennan & Prediger 1981); percent agreement: ``pe = 0``.
* Krippendorff's alpha in Gwet's form (Handbook ch. 2): only subjects with two or more ratings,
  ``rbar`` their mean number of ratings, ``eps = 1 / sum r_i``,
  ``pa = (1 - eps) pa' + eps``, ``pa' = sum_i sum_k r_ik (r*_ik - 1) / (rbar (r_i - 1)) / n2``,
  ``pi_k = sum_i r_ik / sum_i r_i``, ``pe = sum_kl w_kl pi_k pi_l``.  With identity, quadratic and ratio weights
  on numeric categories it equals Krippendorff's nominal, interval and ratio alpha
  (:func:`xlcalib.reliability.krippendorff_alpha`).

Conventions (those of Gwet's irrCAC, the peer these functions are tested against):

* **Missing ratings**: subjects with no rating are dropped; subjects with a single rating stay in n (they count in
  ``pi_k`` and in the variance's n) while ``pa`` averages over the subjects with two or more ratings.  Krippendorff's
  alpha uses only subjects with two or more ratings, for the estimate and its n.
* **Variance** (subject sampling; Gwet 2008, and Handbook ch. 5): linearisation,
  ``var = (1 - f) / (n (n-1)) sum_i (k*_i - k)^2`` with ``k_i = (n/n2) (pa_i - pe 1[r_i >= 2]) / (1 - pe)``,
  ``k*_i = k_i - 2 (1 - k) (pe_i - pe) / (1 - pe)`` and ``f = n / N`` (N the population of subjects, infinite by
  default).  Percent agreement uses Brennan-Prediger's variance with ``pe = 0``, as R irrCAC's ``pa.coeff.raw``.
* **Rater sampling** (optional): for a fully crossed design (every rater rated every subject, r >= 3) the
  variance over raters is estimated by the delete-one-rater jackknife, ``(r-1)/r sum_g (k_(g) - mean k_(.))^2``,
  and added to the subject variance (Gwet 2008, Psychometrika 73:407, shows the rater component must be added to
  infer to the universe of raters; the jackknife is our estimator of it, not a formula from that paper).
* **Intervals**: ``estimate +- t_{n-1} SE`` with the upper bound capped at 1; p-value two-sided for the
  coefficient being 0, from the same t.
* **Weights** (Gwet's Handbook ch. 3, irrCAC): built from the category values when the categories are numbers
  (or when a value is declared for each label), else from their ranks in the declared order.  ``ordinal`` always
  uses ranks.  ``x_min``, ``x_max`` are the smallest and largest category value:

  - identity: ``w_kl = 1[k = l]``; linear ``1 - |x_k - x_l| / (x_max - x_min)``;
    quadratic ``1 - (x_k - x_l)^2 / (x_max - x_min)^2``; radical ``1 - sqrt|x_k - x_l| / sqrt(x_max - x_min)``;
  - ratio ``1 - ((x_k - x_l)/(x_k + x_l))^2 / ((x_max - x_min)/(x_max + x_min))^2`` (positive values only);
  - ordinal ``1 - m_kl (m_kl - 1) / max``, ``m_kl = |rank_k - rank_l| + 1``;
  - circular ``1 - sin^2(pi (x_k - x_l) / (x_max - x_min + 1)) / max``;
  - bipolar ``1 - (x_k - x_l)^2 / ((x_k + x_l - 2 x_min)(2 x_max - x_k - x_l)) / max`` (0 on the diagonal
    before the rescaling);

  or a q x q matrix of the user's own (rows and columns in the category order, 1 on the diagonal, 0..1).
* **Categories**: a cell is a number (a number typed as text, ``"3"``, is the number 3) or a text label (trimmed);
  blank, NaN and None are missing; logical values, dates and Excel errors are refused, naming the cell.  Without
  ``categories`` the categories are the distinct values rated (numbers sorted by value, then text by spelling);
  weights other than identity then need numbers, since text has no order until it is declared.  With
  ``categories`` (a list in its order, or a mapping label -> value) they are the declared ones, including
  categories nobody used (which changes Brennan-Prediger's ``1/q`` and AC1's ``q``, as in irrCAC); a rating
  outside the list is an error.
* **Pairwise**: a pair's two columns, dropping the subjects neither rated; categories and weights stay those of
  the whole table.

References: Gwet, K. L. (2014) *Handbook of Inter-Rater Reliability*, 4th ed., Advanced Analytics; Gwet (2008)
BJMSP 61:29-48 and Psychometrika 73:407-430; Fleiss (1971); Conger (1980); Brennan & Prediger (1981) Educ.
Psychol. Meas. 41:687; Krippendorff (2011) *Computing Krippendorff's alpha-reliability*; Zapf et al. (2016)
BMC Med. Res. Methodol. 16:93 (bootstrap intervals over subjects).
"""
from __future__ import annotations

import datetime as _dt
import math
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd
from scipy.special import stdtr, stdtrit  # the t distribution's own functions: scipy.stats costs 0.5 s to import

from .cells import UNCALCULATED_TEXT, Uncalculated, as_rows, check_memory, excel_error_code, is_blank, is_number_text, \
    parse_number, probability_argument, real_argument, seed_argument, whole_argument
from .errors import InputError

__all__ = [
    "WEIGHTS",
    "COEFFICIENTS",
    "AgreementResult",
    "BootstrapResult",
    "agreement_weights",
    "percent_agreement",
    "brennan_prediger",
    "fleiss_kappa",
    "conger_kappa",
    "gwet_ac",
    "krippendorff_agreement",
    "agreement_coefficients",
    "pairwise_agreement",
    "agreement_matrix",
    "confusion_table",
    "table_agreement",
    "agreement_bootstrap",
]

#: The predefined weight schemes (Gwet's Handbook ch. 3); a q x q matrix may be given instead.
WEIGHTS = ("identity", "linear", "quadratic", "ordinal", "radical", "ratio", "circular", "bipolar")

#: Coefficient keys (the ``coefficient`` arguments and the table's index) and their display names.
COEFFICIENTS = {
    "percent_agreement": "Percent agreement",
    "brennan_prediger": "Brennan-Prediger",
    "conger_kappa": "Conger's kappa",
    "fleiss_kappa": "Fleiss' kappa",
    "gwet_ac": "Gwet's AC1",
    "krippendorff_alpha": "Krippendorff's alpha",
}

LAYOUTS = ("raters", "counts")

#: Most distinct categories accepted (agreement coefficients are for categorical ratings; the q x q weights and the
#: subjects x q counts must stay small).
MAX_CATEGORIES = 1000

#: Most rater pairs :func:`pairwise_agreement` computes (each takes about a millisecond).
MAX_PAIRS = 50_000

TABLE_COLUMNS = ["name", "estimate", "se", "ci_low", "ci_high", "p_value", "pa", "pe", "n_subjects", "weights"]


# ----------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------
@dataclass(frozen=True)
class AgreementResult:
    """One agreement coefficient with its standard error, interval and chance terms.

    ``se`` is the subject-sampling SE, or the total SE (subjects and raters) when the rater component was asked
    for; ``se_subjects`` and ``se_raters`` then give the parts.  ``ci_low``/``ci_high`` are the t interval at
    level ``confidence`` with ``df`` degrees of freedom (upper bound capped at 1), ``p_value`` the two-sided
    t test of the coefficient being 0.  ``note`` says why a value is missing (NaN), if one is.
    """

    coefficient: str
    name: str
    estimate: float
    se: float
    ci_low: float
    ci_high: float
    p_value: float
    pa: float
    pe: float
    n_subjects: int
    df: int
    n_raters: int | None
    n_categories: int
    weights: str
    confidence: float
    se_subjects: float = math.nan
    se_raters: float = math.nan
    note: str = ""

    def to_frame(self) -> pd.DataFrame:
        """One-row table with the columns of :func:`agreement_coefficients`."""
        row = {column: getattr(self, column) for column in TABLE_COLUMNS}
        return pd.DataFrame([row], index=pd.Index([self.coefficient], name="coefficient"))

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class BootstrapResult:
    """A percentile bootstrap interval of one coefficient over resampled subjects.

    ``estimate`` is the coefficient on the data; ``se`` the standard deviation of the replicates; ``ci_low``,
    ``ci_high`` their ``(1 - confidence)/2`` and ``(1 + confidence)/2`` quantiles; ``n_undefined`` replicates where
    the coefficient was undefined (e.g. one category only) are left out.
    """

    coefficient: str
    name: str
    estimate: float
    se: float
    ci_low: float
    ci_high: float
    n_boot: int
    seed: int
    confidence: float
    n_undefined: int
    replicates: np.ndarray = field(repr=False)

    def to_frame(self) -> pd.DataFrame:
        row = {"name": self.name, "estimate": self.estimate, "se": self.se, "ci_low": self.ci_low,
               "ci_high": self.ci_high, "n_boot": self.n_boot, "seed": self.seed}
        return pd.DataFrame([row], index=pd.Index([self.coefficient], name="coefficient"))


# ----------------------------------------------------------------------------
# Categories: cells -> category keys
# ----------------------------------------------------------------------------
def _category_key(value):
    """The matching key of one non-blank cell: a float for numbers and number texts, the trimmed text otherwise.

    Returns ``(key, problem)``; *problem* is a description when the cell cannot be a category.
    """
    if isinstance(value, (bool, np.bool_)):
        return None, f"is a logical value ({'TRUE' if value else 'FALSE'}); type the category as text or a number"
    if type(value) is Uncalculated:  # a formula's text is not its value
        return None, UNCALCULATED_TEXT
    error = excel_error_code(value)
    if error is not None:
        return None, f"holds the Excel error {error}"
    if isinstance(value, (int, float, np.integer, np.floating)):
        number = float(value)
        return (number, None) if math.isfinite(number) else (None, f"is not a finite number ({number})")
    if isinstance(value, (_dt.date, _dt.time, _dt.timedelta)):
        return None, f"holds a date or time ({value}); check the cell format"
    if isinstance(value, str):
        text = value.strip()
        if is_number_text(text):
            number = float(text.replace("\u00a0", ""))
            return (number, None) if math.isfinite(number) else (None, f"is the text '{text[:30]}', not a finite number")
        return text, None
    return None, f"holds a value of type {type(value).__name__}"


def _shown(key) -> object:
    """A category key as shown to people: whole numbers without '.0'."""
    if isinstance(key, float):
        return int(key) if key.is_integer() and abs(key) < 2**53 else key
    return key


def _declared_categories(categories):
    """The declared categories: (keys in order, values for the weights or None, labels as shown)."""
    if isinstance(categories, pd.Series):  # label -> value; a label given twice is reported, not merged
        labels, values = list(categories.index), list(categories.to_numpy())
    elif isinstance(categories, dict):
        labels, values = list(categories), list(categories.values())
    else:
        if isinstance(categories, str) or not hasattr(categories, "__iter__"):
            raise InputError("categories must be a list of category labels or numbers (in their order), "
                             "or a mapping label -> value")
        labels = list(np.asarray(categories, dtype=object).ravel()) if isinstance(categories, np.ndarray) \
            else list(categories)
        values = None
    keys, problems = [], []
    for position, label in enumerate(labels, start=1):
        if is_blank(label):
            problems.append(f"category {position} of the category list is blank")
            continue
        key, problem = _category_key(label)
        if problem:
            problems.append(f"category {position} of the category list {problem}")
        keys.append(key)
    if values is not None:
        for label, value in zip(labels, values):
            key, problem = _category_key(value)
            if problem or not isinstance(key, float):
                problems.append(f"the value of category {label!r} must be a number, not {value!r}")
    _raise_all(problems)
    if len(set(keys)) != len(keys):
        seen = set()
        twice = next(_shown(k) for k in keys if k in seen or seen.add(k))
        raise InputError(f"category {twice!r} is listed twice in the category list")
    if not keys:
        raise InputError("the category list is empty")
    if values is not None:
        numbers = np.array([_category_key(v)[0] for v in values], dtype=float)
        if np.unique(numbers).size != numbers.size:
            raise InputError("two categories have the same value; each category needs its own value")
    elif all(isinstance(k, float) for k in keys):
        numbers = np.array(keys, dtype=float)
    else:
        numbers = np.arange(1, len(keys) + 1, dtype=float)  # text labels: ranks in the declared order
    return keys, numbers, tuple(_shown(k) for k in keys)


def _raise_all(problems: list[str], limit: int = 8) -> None:
    """One InputError listing every problem (the first *limit* in full, then how many more)."""
    if not problems:
        return
    if len(problems) == 1:
        raise InputError(problems[0])
    shown = problems[:limit]
    more = f"\n  ... and {len(problems) - limit} more" if len(problems) > limit else ""
    raise InputError(f"{len(problems)} problems in the ratings:\n" + "\n".join(f"  {p}" for p in shown) + more)


# ----------------------------------------------------------------------------
# Ratings table -> category codes
# ----------------------------------------------------------------------------
@dataclass
class _Coded:
    """Ratings as category codes (-1 = missing), with the categories and the names of rows and columns."""

    codes: np.ndarray  # subjects x raters, np.intp
    keys: list
    values: np.ndarray | None  # category values for the weights; None = unordered text without declared order
    labels: tuple
    subjects: list
    raters: list
    #: where the ratings mix numbers and text without a declared order: the first text cell, described
    mixed_text: str = ""


def _grid(ratings, what: str):
    """(2-D array, row names, column names) of a table given as DataFrame, array or list of rows."""
    if isinstance(ratings, pd.DataFrame):
        return ratings.to_numpy(), list(ratings.index), list(ratings.columns)
    if isinstance(ratings, np.ndarray):
        values = ratings
    else:  # a spreadsheet range: rows of cells (ragged rows padded with blanks, as Excel ranges are rectangular)
        rows = as_rows(ratings)
        values = np.empty((len(rows), len(rows[0]) if rows else 0), dtype=object)
        if values.size:
            values[:] = rows
        if values.size and all(type(v) in (int, float) for v in values.flat):
            values = values.astype(float)
    if values.ndim != 2:
        raise InputError(f"the {what} must be a 2-D table (subjects in rows), got {values.ndim} dimension(s)")
    return values, list(range(1, values.shape[0] + 1)), list(range(1, values.shape[1] + 1))


def _code_ratings(ratings, categories) -> _Coded:
    """Subjects x raters cells -> category codes, with every bad cell reported at once."""
    values, subjects, raters = _grid(ratings, "ratings")
    if values.shape[1] < 2:
        raise InputError(f"agreement needs at least 2 raters (columns), got {values.shape[1]}")
    if values.shape[0] < 1:
        raise InputError("the ratings table has no subjects (rows)")
    if values.dtype.kind in "fiu":
        flat = values.astype(float, copy=False).ravel()
        missing = np.isnan(flat)
        uniques, inverse = _distinct_numbers(np.where(missing, 0.0, flat))
        unique_keys = [float(u) for u in uniques]
        problems = {}
        if np.isinf(uniques).any():
            problems = {j: "is not a finite number" for j, u in enumerate(uniques) if np.isinf(u)}
    else:
        flat = values.ravel()
        kinds = set(map(type, flat))
        codes, uniques = pd.factorize(flat, use_na_sentinel=True)
        missing = codes < 0
        inverse = np.where(missing, 0, codes)
        unique_keys, problems = [], {}
        if kinds & {bool, np.bool_}:  # True == 1 would merge with the number 1 in factorize: report before it does
            position = next(i for i, v in enumerate(flat) if isinstance(v, (bool, np.bool_)))
            _raise_all([f"{_cell_name(position, values.shape[1], subjects, raters)} is a logical value; "
                        "type the category as text or a number"])
        for j, value in enumerate(uniques):
            if is_blank(value):
                unique_keys.append(None)
                continue
            key, problem = _category_key(value)
            unique_keys.append(key)
            if problem:
                problems[j] = problem
        blank_unique = np.array([k is None and j not in problems for j, k in enumerate(unique_keys)], dtype=bool)
        if blank_unique.any():
            missing = missing | blank_unique[inverse]
    return _categorised(values.shape, inverse, missing, unique_keys, problems, categories, subjects, raters)


def _distinct_numbers(flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values and each cell's index among them; grades (small whole numbers) by counting, not sorting."""
    if flat.size:
        lo, hi = flat.min(), flat.max()
        if np.isfinite(lo) and np.isfinite(hi) and hi - lo < 100_000 and np.array_equal(flat, np.floor(flat)):
            offset = (flat - lo).astype(np.intp)
            used = np.bincount(offset, minlength=int(hi - lo) + 1) > 0
            lookup = np.cumsum(used, dtype=np.intp) - 1
            return lo + np.flatnonzero(used).astype(float), lookup[offset]
    return np.unique(flat, return_inverse=True)


def _cell_name(position: int, width: int, subjects, raters) -> str:
    i, j = divmod(int(position), width)
    return f"subject {subjects[i]!r}, rater {raters[j]!r}" if not isinstance(subjects[i], int) or \
        not isinstance(raters[j], int) else f"subject {subjects[i]}, rater {raters[j]}"


def _categorised(shape, inverse, missing, unique_keys, problems, categories, subjects, raters) -> _Coded:
    """Distinct cell keys -> category codes (declared order, or sorted), reporting bad and unknown values."""
    width = shape[1]
    mixed = ""
    marked = np.where(missing, len(unique_keys), inverse)  # missing cells point past the distinct values
    occurs = np.bincount(marked, minlength=len(unique_keys) + 1)[:-1] > 0

    def first_cell(j: int) -> str:  # only for the values reported
        return _cell_name(int(np.argmax(marked == j)), width, subjects, raters)

    messages = [f"{first_cell(j)} {text}" for j, text in problems.items() if occurs[j]]
    present = [j for j in range(len(unique_keys)) if occurs[j] and j not in problems]
    if categories is not None:
        keys, numbers, labels = _declared_categories(categories)
        index = {k: i for i, k in enumerate(keys)}
        unknown = [j for j in present if unique_keys[j] not in index]
        messages += [f"{first_cell(j)}: category {_shown(unique_keys[j])!r} is not in the category list"
                     for j in unknown]
        _raise_all(messages)
    else:
        _raise_all(messages)
        present_keys = {unique_keys[j] for j in present}
        numeric = sorted(k for k in present_keys if isinstance(k, float))
        text = sorted(k for k in present_keys if isinstance(k, str))
        keys = numeric + text
        numbers = np.array(numeric, dtype=float) if not text else None
        labels = tuple(_shown(k) for k in keys)
        index = {k: i for i, k in enumerate(keys)}
        if numeric and text:  # text among numbers: often a typing slip ("3,5"), named if weights need an order
            j = next(j for j in present if unique_keys[j] == text[0])
            mixed = _text_among_numbers(first_cell(j), text[0])
    if len(keys) > MAX_CATEGORIES:
        raise InputError(f"the ratings hold {len(keys):,} distinct categories (at most {MAX_CATEGORIES:,}); "
                         "agreement coefficients are for categorical ratings (grades, diagnoses, pass/fail)")
    lookup = np.array([index.get(k, -1) if k is not None else -1 for k in unique_keys] + [-1], dtype=np.intp)
    codes = lookup[marked].reshape(shape)
    return _Coded(codes, keys, numbers, labels, subjects, raters, mixed if categories is None else "")


def _text_among_numbers(where: str, text: str) -> str:
    """A text rating among numbers described in the cells' words (a decimal comma or thousands separator named)."""
    try:
        parse_number(text, where)
    except InputError as exc:
        return exc.message
    return f"{where} holds the text '{text}'"  # pragma: no cover - a number text is a number key, never text


# ----------------------------------------------------------------------------
# Weights
# ----------------------------------------------------------------------------
def _weight_matrix(weights, values: np.ndarray | None, q: int) -> tuple[np.ndarray, str]:
    """The q x q weight matrix and its name, from a scheme name (Gwet's Handbook ch. 3) or the user's matrix."""
    if isinstance(weights, str):
        name = weights.strip().lower()
        if name not in WEIGHTS:
            raise InputError(f"weights must be one of {', '.join(WEIGHTS)} or a q x q matrix, not {weights!r}")
        if name == "identity":
            return np.eye(q), name
        if values is None:
            raise InputError(f"{name} weights need the order of the categories: the ratings are text, so declare "
                             "the categories in their order (or use identity weights)")
        return _named_weights(name, np.asarray(values, dtype=float)), name
    matrix = _custom_weights(weights, q)
    return matrix, "custom"


def _named_weights(name: str, x: np.ndarray) -> np.ndarray:
    q = x.size
    if q < 2:
        return np.ones((1, 1))
    lo, hi = x.min(), x.max()
    diff = x[:, None] - x[None, :]
    if name == "linear":
        return 1 - np.abs(diff) / (hi - lo)
    if name == "quadratic":
        return 1 - (diff / (hi - lo)) ** 2
    if name == "radical":
        return 1 - np.sqrt(np.abs(diff)) / np.sqrt(hi - lo)
    if name == "ratio":
        if lo <= 0:
            raise InputError("ratio weights need positive category values (a value of 0 or below has no ratio)")
        total = x[:, None] + x[None, :]
        return 1 - (diff / total) ** 2 / ((hi - lo) / (hi + lo)) ** 2
    if name == "ordinal":
        ranks = np.arange(q, dtype=float)  # ordinal weights count the categories between, whatever their values
        order = np.argsort(x, kind="stable")
        ranks[order] = np.arange(q, dtype=float)
        m = np.abs(ranks[:, None] - ranks[None, :]) + 1
        raw = m * (m - 1) / 2
    elif name == "circular":
        raw = np.sin(np.pi * diff / (hi - lo + 1)) ** 2
    else:  # bipolar
        total = x[:, None] + x[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            raw = np.where(np.eye(q, dtype=bool), 0.0, diff**2 / ((total - 2 * lo) * (2 * hi - total)))
    return 1 - raw / raw.max()


def _custom_weights(weights, q: int) -> np.ndarray:
    try:
        matrix = np.asarray(weights.to_numpy() if isinstance(weights, pd.DataFrame) else weights, dtype=float)
    except (TypeError, ValueError):
        raise InputError("the weight matrix must hold numbers only") from None
    if matrix.shape != (q, q):
        raise InputError(f"the weight matrix must be {q} x {q} (one row and column per category, in the category "
                         f"order), got {' x '.join(map(str, matrix.shape))}")
    problems = []
    if not np.isfinite(matrix).all():
        i, j = np.argwhere(~np.isfinite(matrix))[0]
        problems.append(f"weight matrix row {i + 1}, column {j + 1} is not a finite number")
    elif ((matrix < 0) | (matrix > 1)).any():
        i, j = np.argwhere((matrix < 0) | (matrix > 1))[0]
        problems.append(f"weight matrix row {i + 1}, column {j + 1} is {matrix[i, j]:g}; weights lie in 0..1")
    if np.isfinite(np.diag(matrix)).all() and (np.diag(matrix) != 1).any():
        k = int(np.flatnonzero(np.diag(matrix) != 1)[0])
        problems.append(f"weight matrix diagonal entry {k + 1} is {matrix[k, k]:g}; a category agrees fully with "
                        "itself (1 on the diagonal)")
    _raise_all(problems)
    return matrix


def agreement_weights(categories, weights: str = "quadratic") -> pd.DataFrame:
    """The weight matrix of a scheme for the given categories, labelled (Gwet's Handbook ch. 3).

    Numbers are weighted by their values, text labels by their ranks in the given order; a mapping
    label -> value uses the values.  See the module docstring for the formulas.

    >>> agreement_weights([1, 2, 3], "linear").to_numpy().tolist()
    [[1.0, 0.5, 0.0], [0.5, 1.0, 0.5], [0.0, 0.5, 1.0]]
    """
    _, numbers, labels = _declared_categories(categories)
    matrix, _ = _weight_matrix(weights, numbers, len(labels))
    return pd.DataFrame(matrix, index=pd.Index(labels, name="category"), columns=list(labels))


# ----------------------------------------------------------------------------
# The panel: counts per subject and category, weights, and (for raters) who rated what
# ----------------------------------------------------------------------------
@dataclass
class _Panel:
    counts: np.ndarray  # subjects (with a rating) x categories, float
    codes: np.ndarray | None  # subjects x raters category codes (-1 = missing); None for a count table
    weights: np.ndarray
    weights_name: str
    labels: tuple
    raters: list | None
    notes: list[str]

    @property
    def n_raters(self) -> int | None:
        return None if self.codes is None else self.codes.shape[1]


def _padded_index(codes: np.ndarray, q: int) -> np.ndarray:
    """Each cell's column in a (q+1)-wide block whose last column collects the missing cells (code -1)."""
    return np.where(codes < 0, q, codes)


def _counts_from_codes(codes: np.ndarray, q: int) -> np.ndarray:
    """r_ik: how many raters put subject i in category k (one bincount; missing cells land in a dropped column)."""
    n = codes.shape[0]
    flat = (np.arange(n, dtype=np.intp) * (q + 1))[:, None] + _padded_index(codes, q)
    return np.bincount(flat.ravel(), minlength=n * (q + 1)).reshape(n, q + 1)[:, :q].astype(float)


def _panel(ratings, weights, categories, layout: str) -> _Panel:
    """Checked ratings (or counts), categories and weights: what every coefficient starts from."""
    if layout not in LAYOUTS:
        raise InputError(f"layout must be 'raters' (subjects x raters) or 'counts' (subjects x categories), "
                         f"not {layout!r}")
    notes = []
    if layout == "counts":
        counts, numbers, labels = _count_table(ratings, categories)
        codes = raters = None
    else:
        coded = _code_ratings(ratings, categories)
        codes, numbers, labels, raters = coded.codes, coded.values, coded.labels, coded.raters
        q = len(labels)
        check_memory(8.0 * codes.shape[0] * (q + 3 * codes.shape[1]), f"{codes.shape[0]:,} subjects x {q} categories",
                     "use fewer subjects or categories")
        rated_by_rater = (codes >= 0).any(axis=0)
        if not rated_by_rater.all():
            idle = [raters[j] for j in np.flatnonzero(~rated_by_rater)]
            notes.append(f"rater(s) {', '.join(map(str, idle))} rated nobody and are left out")
            codes, raters = codes[:, rated_by_rater], [raters[j] for j in np.flatnonzero(rated_by_rater)]
        counts = _counts_from_codes(codes, q)
        scheme = weights.strip().lower() if isinstance(weights, str) else ""
        if coded.mixed_text and scheme in WEIGHTS and scheme != "identity":
            raise InputError(f"{coded.mixed_text} ({scheme} weights need numbers, or the categories declared in "
                             "order)")
    matrix, weights_name = _weight_matrix(weights, numbers, len(labels))
    r_i = counts.sum(axis=1)
    rated = r_i > 0
    if not rated.all():
        notes.append(f"{int((~rated).sum())} subject(s) without any rating left out")
        counts = counts[rated]
        codes = codes[rated] if codes is not None else None
    if counts.shape[0] < 2:
        raise InputError(f"agreement needs at least 2 rated subjects, got {counts.shape[0]}")
    if not (counts.sum(axis=1) >= 2).any():
        raise InputError("no subject has two or more ratings, so there is no agreement to measure")
    return _Panel(counts, codes, matrix, weights_name, labels, raters, notes)


def _count_table(counts, categories):
    """Subjects x categories counts (blank = 0) -> (float counts, category values, labels)."""
    values, subjects, columns = _grid(counts, "count")
    if values.dtype.kind not in "fiu":
        parsed = np.empty(values.shape, dtype=float)
        problems = []
        for (i, j), cell in np.ndenumerate(values):  # count tables are subjects x a few categories: cheap
            if is_blank(cell):
                parsed[i, j] = 0.0
                continue
            key, problem = _category_key(cell)
            if problem or not isinstance(key, float):
                problems.append(f"subject {subjects[i]}, category {columns[j]}: "
                                f"{problem or f'is text ({cell!r}); a count is required'}")
                parsed[i, j] = 0.0
            else:
                parsed[i, j] = key
            if len(problems) > 50:
                break
        _raise_all(problems)
        values = parsed
    values = np.where(np.isnan(values.astype(float)), 0.0, values.astype(float))
    bad = ~np.isfinite(values) | (values < 0) | (values != np.round(values))
    if bad.any():
        cells = np.argwhere(bad)
        _raise_all([f"subject {subjects[i]}, category {columns[j]}: {values[i, j]:g} is not a count "
                    "(a whole number 0 or more)" for i, j in cells[:20]])
    if categories is None:
        categories = columns
    keys, numbers, labels = _declared_categories(categories)
    if len(keys) != values.shape[1]:
        raise InputError(f"{len(keys)} categories declared for a count table of {values.shape[1]} columns")
    return values, numbers, labels


# ----------------------------------------------------------------------------
# Estimates from subject sums (shared by the point estimate and the bootstrap)
# ----------------------------------------------------------------------------
def _subject_terms(counts: np.ndarray, w: np.ndarray) -> dict[str, np.ndarray]:
    """Per subject: r_i, its weighted agreement sum_k r_ik (r*_ik - 1), pa_i, shares r_ik / r_i."""
    r = counts.sum(axis=1)
    if np.array_equal(w, np.eye(w.shape[0])):
        agree = np.einsum("ik,ik->i", counts, counts) - r
    else:  # (w.T made contiguous: BLAS multiplies a tall n x q block by a transposed view ten times slower)
        agree = np.einsum("ik,ik->i", counts, counts @ np.ascontiguousarray(w.T)) - r
    two = r >= 2
    pa_i = np.where(two, agree / np.where(two, r * (r - 1), 1), 0.0)
    return {"r": r, "agree": agree, "two": two, "pa_i": pa_i, "share": counts / r[:, None]}


def _sums(key: str, panel: _Panel, terms: dict) -> dict[str, np.ndarray]:
    """The sums over subjects that each coefficient's estimate needs (the bootstrap reweights the same sums)."""
    two = terms["two"]
    if key == "krippendorff_alpha":
        r = terms["r"][two]
        return {"k_r": r.sum(), "k_agree": (terms["agree"][two] / (r - 1)).sum(), "k_counts": panel.counts[two].sum(0)}
    out = {"n": np.float64(panel.counts.shape[0]), "n2": np.float64(two.sum()), "pa": terms["pa_i"].sum(),
           "share": terms["share"].sum(axis=0)}
    if key == "conger_kappa":
        codes = panel.codes
        r = codes.shape[1]
        q = panel.counts.shape[1]
        flat = (np.arange(r, dtype=np.intp) * (q + 1))[None, :] + _padded_index(codes, q)
        out["n_gk"] = np.bincount(flat.ravel(), minlength=r * (q + 1)).reshape(r, q + 1)[:, :q].astype(float)
        out["n_g"] = out["n_gk"].sum(axis=1)
    return out


def _conger_chance(p: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Conger's pe from the raters' category shares p (..., r, q): mean products less the raters' covariance / r."""
    r = p.shape[-2]
    pbar = p.mean(axis=-2)
    outer = pbar[..., :, None] * pbar[..., None, :]
    s2 = (np.einsum("...gk,...gl->...kl", p, p) - r * outer) / (r - 1)
    return np.sum(w * (outer - s2 / r), axis=(-2, -1))


def _estimate(key: str, sums: dict, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(coefficient, pa, pe) from the subject sums; works along leading axes (one row per bootstrap replicate)."""
    q = w.shape[0]
    total_w = w.sum()
    if key == "krippendorff_alpha":
        eps = 1.0 / sums["k_r"]
        pa = (1 - eps) * sums["k_agree"] / sums["k_r"] + eps
        pi = sums["k_counts"] / sums["k_r"][..., None]
        pe = np.einsum("...k,kl,...l->...", pi, w, pi)
    else:
        pa = sums["pa"] / sums["n2"]
        pi = sums["share"] / sums["n"][..., None]
        if key == "percent_agreement":
            pe = np.zeros_like(pa)
        elif key == "brennan_prediger":
            pe = np.full_like(pa, total_w / q**2)
        elif key == "gwet_ac":
            pe = total_w * np.sum(pi * (1 - pi), axis=-1) / (q * (q - 1)) if q > 1 else np.full_like(pa, np.nan)
        elif key == "fleiss_kappa":
            pe = np.einsum("...k,kl,...l->...", pi, w, pi)
        else:  # conger_kappa
            pe = _conger_chance(sums["n_gk"] / sums["n_g"][..., None], w)
    with np.errstate(divide="ignore", invalid="ignore"):
        undefined = ~(1 - pe > 1e-14)  # pe = 1: every chance pair agrees, the coefficient is 0/0
        estimate = np.where(undefined, np.nan, (pa - pe) / np.where(undefined, 1.0, 1 - pe))
    return estimate, pa, pe


# ----------------------------------------------------------------------------
# Standard errors (subject sampling: Gwet's linearisation; rater sampling: jackknife)
# ----------------------------------------------------------------------------
def _chance_per_subject(key: str, panel: _Panel, terms: dict, sums: dict, pe: float):
    """pe_i, each subject's share of the chance agreement (Gwet 2008), or the scalar pe where it is fixed."""
    w, counts, r = panel.weights, panel.counts, terms["r"]
    q = w.shape[0]
    pi = sums["share"] / sums["n"]
    if key in ("percent_agreement", "brennan_prediger"):
        return pe
    if key == "gwet_ac":
        return w.sum() / (q * (q - 1)) * (counts @ (1 - pi)) / r
    if key == "fleiss_kappa":
        return counts @ ((w @ pi + w.T @ pi) / 2) / r
    # conger_kappa (irrCAC's lambda_ig): with A_gk = r pbar_k - p_gk, AW = A w and B_g = sum_l AW_gl p_gl,
    # lambda_ig = (n/n_g) [eps_ig (AW_g,c_ig - B_g)] + B_g: one gathered term per rated cell, 0 for a missing one
    codes = panel.codes
    n, n_raters = codes.shape
    n_g = sums["n_g"]
    p = sums["n_gk"] / n_g[:, None]
    aw = (n_raters * p.mean(axis=0)[None, :] - p) @ w
    b = np.sum(aw * p, axis=1)
    per_cell = np.zeros((n_raters, q + 1))
    per_cell[:, :q] = (n / n_g)[:, None] * (aw - b[:, None])
    flat = (np.arange(n_raters, dtype=np.intp) * (q + 1))[None, :] + _padded_index(codes, q)
    lam = per_cell.ravel()[flat].sum(axis=1) + b.sum()
    return lam / (n_raters * (n_raters - 1))


def _subject_variance(key: str, panel: _Panel, terms: dict, sums: dict, estimate: float, pe: float, f: float):
    """Gwet's (2008) linearised variance over subjects; (variance, n used, degrees of freedom)."""
    if key == "krippendorff_alpha":
        return _krippendorff_variance(panel, terms, sums, pe, f)
    n, n2 = sums["n"], sums["n2"]
    k_i = (n / n2) * (terms["pa_i"] - pe * terms["two"]) / (1 - pe)
    pe_i = _chance_per_subject(key, panel, terms, sums, pe)
    k_star = k_i - 2 * (1 - estimate) * (pe_i - pe) / (1 - pe)
    return (1 - f) / (n * (n - 1)) * np.sum((k_star - estimate) ** 2), int(n), int(n) - 1


def _krippendorff_variance(panel: _Panel, terms: dict, sums: dict, pe: float, f: float):
    """Gwet's variance of alpha (Handbook ch. 5; irrCAC ``krippen.alpha.raw``), over subjects with 2+ ratings.

    It centres the linearised terms on alpha' = (pa' - pe) / (1 - pe), the coefficient without Krippendorff's
    small-sample correction eps, as irrCAC does.
    """
    two = terms["two"]
    w, counts, r = panel.weights, panel.counts[two], terms["r"][two]
    n2 = r.size
    if n2 < 2:
        return math.nan, n2, 0
    rbar = r.mean()
    pa_prime = sums["k_agree"] / sums["k_r"]
    eps = 1 / sums["k_r"]
    pa = (1 - eps) * pa_prime + eps
    alpha_prime = (pa_prime - pe) / (1 - pe)
    pi = sums["k_counts"] / sums["k_r"]
    pa_i = terms["agree"][two] / (rbar * (r - 1)) - pa * (r - rbar) / rbar
    pe_i = counts @ ((w @ pi + w.T @ pi) / 2) / rbar - pe * (r - rbar) / rbar
    k_star = (pa_i - pe) / (1 - pe) - 2 * (1 - alpha_prime) * (pe_i - pe) / (1 - pe)
    return (1 - f) / (n2 * (n2 - 1)) * np.sum((k_star - alpha_prime) ** 2), n2, n2 - 1


def _point(key: str, panel: _Panel) -> float:
    """The coefficient alone (what the rater jackknife recomputes)."""
    sums = _sums(key, panel, _subject_terms(panel.counts, panel.weights))
    return float(_estimate(key, sums, panel.weights)[0])


def _rater_variance(key: str, panel: _Panel) -> float:
    """Delete-one-rater jackknife variance of the coefficient (fully crossed designs, 3 or more raters)."""
    codes = panel.codes
    if codes is None:
        raise InputError("the rater-sampling variance needs who rated what (a subjects x raters table), "
                         "not a count table")
    r = codes.shape[1]
    if r < 3:
        raise InputError("the rater-sampling variance needs at least 3 raters (leaving one out must leave a pair)")
    if (codes < 0).any():
        raise InputError("the rater-sampling variance is defined for fully crossed designs (every rater rates every "
                         f"subject); {int((codes < 0).sum())} rating(s) are missing")
    q = panel.counts.shape[1]
    leave_out = np.empty(r)
    for g in range(r):  # r recomputations, each vectorised over subjects
        kept = np.delete(codes, g, axis=1)
        sub = _Panel(_counts_from_codes(kept, q), kept, panel.weights, panel.weights_name, panel.labels, None, [])
        leave_out[g] = _point(key, sub)
    return (r - 1) / r * np.sum((leave_out - leave_out.mean()) ** 2)


def _t_interval(estimate: float, se: float, df: int, confidence: float) -> tuple[float, float, float]:
    """(low, high, two-sided p) of the t interval with df degrees of freedom; upper bound capped at 1 (irrCAC)."""
    if not (np.isfinite(estimate) and np.isfinite(se)) or df < 1:
        return math.nan, math.nan, math.nan
    half = stdtrit(df, (1 + confidence) / 2) * se
    if se > 0:
        p = float(2 * stdtr(df, -abs(estimate / se)))
    else:
        p = 0.0 if estimate != 0 else 1.0
    return float(estimate - half), float(min(1.0, estimate + half)), p


def _display_name(key: str, weights_name: str, n_raters: int | None) -> str:
    """Gwet's AC1 or AC2 by the weights; Cohen's kappa and Scott's pi for Conger's and Fleiss' with two raters."""
    if key == "gwet_ac":
        return "Gwet's AC1" if weights_name == "identity" else "Gwet's AC2"
    name = COEFFICIENTS[key]
    if n_raters == 2:
        name = {"conger_kappa": "Cohen's kappa", "fleiss_kappa": "Scott's pi"}.get(key, name)
    if weights_name == "identity":
        return name
    return "Weighted percent agreement" if key == "percent_agreement" else f"Weighted {name}"


# ----------------------------------------------------------------------------
# One coefficient, all coefficients
# ----------------------------------------------------------------------------
def _options(confidence, population_size) -> tuple[float, float | None]:
    confidence = probability_argument(confidence, "confidence")
    if population_size is not None:
        population_size = real_argument(population_size, "population_size", low=0, low_open=True)
    return confidence, population_size


def _coefficient(key: str, panel: _Panel, confidence: float, population_size, rater_sampling: bool,
                 terms: dict | None = None) -> AgreementResult:
    """Estimate, SE, interval and p of one coefficient on a checked panel."""
    if key == "conger_kappa" and panel.codes is None:
        raise InputError("Conger's kappa needs each rater's ratings (a subjects x raters table); a count table "
                         "does not say who rated what (use Fleiss' kappa)")
    terms = terms if terms is not None else _subject_terms(panel.counts, panel.weights)
    sums = _sums(key, panel, terms)
    estimate, pa, pe = (float(v) for v in _estimate(key, sums, panel.weights))
    n_all = panel.counts.shape[0]
    if population_size is not None and population_size < n_all:
        raise InputError(f"the population_size argument ({population_size:g}) is smaller than the {n_all} subjects "
                         "rated")
    f = 0.0 if population_size is None else n_all / population_size
    note = list(panel.notes)
    if np.isnan(estimate):
        var_s, n_used, df = math.nan, int(terms["two"].sum() if key == "krippendorff_alpha" else n_all), 0
        note.append("undefined: the chance agreement is 1 (the ratings use a single category)")
    else:
        var_s, n_used, df = _subject_variance(key, panel, terms, sums, estimate, pe, f)
        if df < 1:
            note.append("no standard error: alpha uses the subjects with two or more ratings, and only one has")
    var_r = _rater_variance(key, panel) if rater_sampling else math.nan
    se_s, se_r = math.sqrt(var_s), math.sqrt(var_r)
    se = math.sqrt(var_s + var_r) if rater_sampling else se_s
    low, high, p = _t_interval(estimate, se, df, confidence)
    name = _display_name(key, panel.weights_name, panel.n_raters)
    return AgreementResult(key, name, estimate, se, low, high, p, pa, pe, n_used, df, panel.n_raters,
                           panel.counts.shape[1], panel.weights_name, confidence,
                           se_s if rater_sampling else math.nan, se_r, "; ".join(note))


def _one(key: str, ratings, weights, categories, layout, confidence, population_size, rater_sampling):
    confidence, population_size = _options(confidence, population_size)
    panel = _panel(ratings, weights, categories, layout)
    return _coefficient(key, panel, confidence, population_size, bool(rater_sampling))


_SHARED_DOC = """
    Parameters
    ----------
    ratings:
        Subjects x raters (DataFrame, 2-D array or list of rows; blank/NaN/None = missing), or with
        ``layout="counts"`` subjects x categories counts (how many raters chose each category).
    weights:
        ``"identity"`` (unweighted) or one of ``linear, quadratic, ordinal, radical, ratio, circular, bipolar``,
        or a q x q matrix in the category order (see the module docstring for the formulas).
    categories:
        The categories in their order (labels or numbers), or a mapping label -> value; weights follow it.
        Without it: the distinct values rated (or the count table's column names).
    layout:
        ``"raters"`` (default) or ``"counts"``.
    confidence:
        Level of the t interval (n - 1 degrees of freedom, upper bound capped at 1).
    population_size:
        Number of subjects in the population, for the finite-population correction ``1 - n/N`` (default: infinite).
    rater_sampling:
        Add the rater-sampling variance (delete-one-rater jackknife; fully crossed designs with 3+ raters) to the
        subject-sampling variance, to infer to the population of raters too.
"""


def percent_agreement(ratings, weights="identity", categories=None, *, layout: str = "raters",
                      confidence: float = 0.95, population_size=None, rater_sampling: bool = False) -> AgreementResult:
    """Percent agreement ``pa``: the share of agreeing rater pairs per subject, averaged over subjects rated twice+.

    ``pa = (1/n2) sum_i sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1))`` (weighted when ``weights`` is not identity).
    Its SE is Brennan-Prediger's with chance agreement 0, as R irrCAC's ``pa.coeff.raw`` (Gwet 2014, ch. 5).
    {shared}
    >>> round(percent_agreement([[1, 1], [2, 2], [1, 2], [3, 3]]).estimate, 4)
    0.75
    """
    return _one("percent_agreement", ratings, weights, categories, layout, confidence, population_size,
                rater_sampling)


def brennan_prediger(ratings, weights="identity", categories=None, *, layout: str = "raters",
                     confidence: float = 0.95, population_size=None, rater_sampling: bool = False) -> AgreementResult:
    """Brennan-Prediger's coefficient: chance agreement ``pe = T_w / q^2`` (uniform use of the q categories).

    Brennan & Prediger (1981), Educ. Psychol. Meas. 41:687; Gwet (2014) ch. 2.  ``q`` counts the declared
    categories when ``categories`` is given, else the categories rated.
    {shared}
    >>> from xlcalib.agreement import brennan_prediger
    >>> x = [[1, 1, None, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4],
    ...      [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [None, 5, 5, 5], [None, None, 1, 1], [None, None, 3, None]]
    >>> round(brennan_prediger(x).estimate, 4)   # Gwet (2014), 12 subjects x 4 raters
    0.7727
    """
    return _one("brennan_prediger", ratings, weights, categories, layout, confidence, population_size,
                rater_sampling)


def fleiss_kappa(ratings, weights="identity", categories=None, *, layout: str = "raters",
                 confidence: float = 0.95, population_size=None, rater_sampling: bool = False) -> AgreementResult:
    """Fleiss' kappa (Scott's pi for two raters): chance agreement ``pe = sum_kl w_kl pi_k pi_l``.

    Fleiss (1971), Psychol. Bull. 76:378, generalised to weights and missing ratings by Gwet (2014, ch. 2);
    SE by Gwet's (2008) linearisation (not Fleiss' variance under the null hypothesis).
    {shared}
    >>> import numpy as np
    >>> table = np.array([[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    ...                   [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]])
    >>> round(fleiss_kappa(table, layout="counts").estimate, 3)   # 10 subjects x 14 raters
    0.21
    """
    return _one("fleiss_kappa", ratings, weights, categories, layout, confidence, population_size, rater_sampling)


def conger_kappa(ratings, weights="identity", categories=None, *, confidence: float = 0.95, population_size=None,
                 rater_sampling: bool = False) -> AgreementResult:
    """Conger's kappa (Cohen's kappa for two raters): chance agreement from each rater's own category shares.

    ``pe = sum_kl w_kl (pbar_k pbar_l - s2_kl / r)`` (Conger 1980, Psychol. Bull. 88:322; Gwet 2014, ch. 2),
    ``p_gk`` rater g's share of category k among the subjects g rated.  Needs a subjects x raters table; raters
    who rated nobody are left out (noted).
    {shared}
    >>> round(conger_kappa([[1, 1], [1, 1], [2, 2], [2, 1]]).estimate, 4)   # Cohen: (0.75 - 0.5) / 0.5
    0.5
    """
    return _one("conger_kappa", ratings, weights, categories, "raters", confidence, population_size, rater_sampling)


def gwet_ac(ratings, weights="identity", categories=None, *, layout: str = "raters", confidence: float = 0.95,
            population_size=None, rater_sampling: bool = False) -> AgreementResult:
    """Gwet's AC1 (identity weights) or AC2 (any other weights).

    ``pe = T_w / (q (q-1)) sum_k pi_k (1 - pi_k)``: chance agreement only on the subjects hard to classify, which
    keeps the coefficient high when agreement is high but one category dominates (the kappa paradoxes; Gwet 2008,
    BJMSP 61:29; Handbook ch. 4).
    {shared}
    >>> from xlcalib.agreement import gwet_ac
    >>> x = [[1, 1, None, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4],
    ...      [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [None, 5, 5, 5], [None, None, 1, 1], [None, None, 3, None]]
    >>> r = gwet_ac(x)   # Gwet (2014): AC1 = 0.7754, SE 0.14295
    >>> round(r.estimate, 4), round(r.se, 5)
    (0.7754, 0.14295)
    """
    return _one("gwet_ac", ratings, weights, categories, layout, confidence, population_size, rater_sampling)


def krippendorff_agreement(ratings, weights="identity", categories=None, *, layout: str = "raters",
                           confidence: float = 0.95, population_size=None,
                           rater_sampling: bool = False) -> AgreementResult:
    """Krippendorff's alpha in Gwet's agreement-coefficient form, with Gwet's standard error.

    Uses the subjects with two or more ratings: ``pa = (1 - eps) pa' + eps``, ``pe = sum_kl w_kl pi_k pi_l``
    (module docstring; Gwet 2014, ch. 2; Krippendorff 2011).  Identity, quadratic and ratio weights on numeric
    categories give Krippendorff's nominal, interval and ratio alpha
    (:func:`xlcalib.reliability.krippendorff_alpha`); Krippendorff's own ordinal metric (frequency based) is not a
    fixed weight matrix and stays in :mod:`xlcalib.reliability`.  For a bootstrap interval see
    :func:`agreement_bootstrap`.
    {shared}
    >>> round(krippendorff_agreement([[1, 1], [2, 2], [3, 3], [4, 3]], "quadratic").estimate, 4)   # = interval alpha
    0.8889
    """
    return _one("krippendorff_alpha", ratings, weights, categories, layout, confidence, population_size,
                rater_sampling)


for _function in (percent_agreement, brennan_prediger, fleiss_kappa, conger_kappa, gwet_ac, krippendorff_agreement):
    _function.__doc__ = _function.__doc__.replace("{shared}", _SHARED_DOC)


def agreement_coefficients(ratings, weights="identity", categories=None, *, layout: str = "raters",
                           confidence: float = 0.95, population_size=None,
                           rater_sampling: bool = False) -> pd.DataFrame:
    """All coefficients of one table, one row each: what a spreadsheet function spills.

    Rows (index ``coefficient``): percent_agreement, brennan_prediger, conger_kappa (omitted for a count table),
    fleiss_kappa, gwet_ac, krippendorff_alpha.  Columns: ``name`` (e.g. "Gwet's AC2"), ``estimate``, ``se``,
    ``ci_low``, ``ci_high``, ``p_value``, ``pa``, ``pe``, ``n_subjects``, ``weights``; with ``rater_sampling``
    also ``se_subjects`` and ``se_raters``.  ``.attrs``: ``confidence``, ``categories``, ``n_raters``, ``note``.
    Arguments as for :func:`gwet_ac`; the table is checked and coded once for all rows.

    >>> x = [["a", "a", "b"], ["b", "b", "b"], ["a", "a", "a"], ["c", "c", "b"]]
    >>> agreement_coefficients(x)["estimate"].round(3).tolist()
    [0.667, 0.5, 0.5, 0.467, 0.515, 0.511]
    """
    confidence, population_size = _options(confidence, population_size)
    panel = _panel(ratings, weights, categories, layout)
    terms = _subject_terms(panel.counts, panel.weights)
    keys = [k for k in COEFFICIENTS if not (k == "conger_kappa" and panel.codes is None)]
    results = [_coefficient(k, panel, confidence, population_size, bool(rater_sampling), terms) for k in keys]
    columns = TABLE_COLUMNS + (["se_subjects", "se_raters"] if rater_sampling else [])
    table = pd.DataFrame([{c: getattr(res, c) for c in columns} for res in results],
                         index=pd.Index(keys, name="coefficient"))
    notes = list(dict.fromkeys(n for res in results for n in res.note.split("; ") if n))
    if panel.codes is None:
        notes.append("Conger's kappa needs a subjects x raters table; not computed from counts")
    r_i = panel.counts.sum(axis=1)
    complete = bool((r_i == (panel.n_raters or r_i.max())).all())
    table.attrs.update(confidence=confidence, categories=list(panel.labels), n_raters=panel.n_raters,
                       note="; ".join(notes), category_shares=(panel.counts.sum(axis=0) / r_i.sum()).tolist(),
                       complete=complete)
    return table


# ----------------------------------------------------------------------------
# Pairs of raters
# ----------------------------------------------------------------------------
def _coefficient_key(coefficient) -> str:
    key = str(coefficient).strip().lower()
    if key not in COEFFICIENTS:
        raise InputError(f"coefficient must be one of {', '.join(COEFFICIENTS)}, not {coefficient!r}")
    return key


def _pair_panel(panel: _Panel, g: int, h: int) -> _Panel | None:
    """The panel of raters g and h alone: their two columns, without the subjects neither rated."""
    codes = panel.codes[:, [g, h]]
    codes = codes[(codes >= 0).any(axis=1)]
    counts = _counts_from_codes(codes, panel.counts.shape[1])
    if codes.shape[0] < 2 or not (counts.sum(axis=1) >= 2).any():
        return None
    return _Panel(counts, codes, panel.weights, panel.weights_name, panel.labels, [panel.raters[g], panel.raters[h]],
                  [])


def pairwise_agreement(ratings, coefficient: str = "gwet_ac", weights="identity", categories=None, *,
                       confidence: float = 0.95) -> pd.DataFrame:
    """One coefficient for every pair of raters, with SE and interval (a long, tidy table).

    Each pair uses its two columns, dropping the subjects neither rated (irrCAC's convention); the categories and
    weights stay those of the whole table so every pair is measured on the same scale.  A pair with fewer than 2
    subjects, or none rated by both, gets NaN.  Columns: ``rater_1``, ``rater_2``, ``name``, ``estimate``, ``se``,
    ``ci_low``, ``ci_high``, ``p_value``, ``pa``, ``pe``, ``n_subjects`` (pairs in column order, each once; both orders when a
    custom weight matrix is not symmetric).

    >>> x = [[1, 1, 2], [2, 2, 2], [1, 1, 1], [3, 3, 2]]
    >>> pairwise_agreement(x, "percent_agreement")["estimate"].round(3).tolist()
    [1.0, 0.5, 0.5]
    """
    key = _coefficient_key(coefficient)
    confidence, _ = _options(confidence, None)
    panel = _panel(ratings, weights, categories, "raters")
    r = panel.n_raters
    symmetric = np.array_equal(panel.weights, panel.weights.T)
    n_pairs = r * (r - 1) // (2 if symmetric else 1)
    if n_pairs > MAX_PAIRS:
        raise InputError(f"{r:,} raters make {n_pairs:,} pairs; at most {MAX_PAIRS:,} are computed (about a minute "
                         "of work): select fewer raters")
    pairs = [(g, h) for g in range(r) for h in range(r) if (g < h if symmetric else g != h)]
    rows = []
    for g, h in pairs:  # r (r-1) / 2 pairs, each vectorised over subjects
        pair = _pair_panel(panel, g, h)
        if pair is None:
            rows.append((panel.raters[g], panel.raters[h], _display_name(key, panel.weights_name, 2),
                         *[math.nan] * 7, 0))
            continue
        res = _coefficient(key, pair, confidence, None, False)
        rows.append((panel.raters[g], panel.raters[h], res.name, res.estimate, res.se, res.ci_low, res.ci_high,
                     res.p_value, res.pa, res.pe, res.n_subjects))
    table = pd.DataFrame(rows, columns=["rater_1", "rater_2", "name", "estimate", "se", "ci_low", "ci_high",
                                        "p_value", "pa", "pe", "n_subjects"])
    table.attrs.update(confidence=confidence, categories=list(panel.labels), weights=panel.weights_name,
                       raters=list(panel.raters), symmetric=symmetric, note="; ".join(panel.notes))
    return table


def agreement_matrix(ratings, coefficient: str = "gwet_ac", weights="identity", categories=None) -> pd.DataFrame:
    """Rater x rater matrix of one coefficient (from :func:`pairwise_agreement`); the diagonal is left empty (NaN).

    >>> m = agreement_matrix([[1, 1, 2], [2, 2, 2], [1, 1, 1], [3, 3, 2]], "percent_agreement")
    >>> m.to_numpy().round(2).tolist()
    [[nan, 1.0, 0.5], [1.0, nan, 0.5], [0.5, 0.5, nan]]
    """
    long = pairwise_agreement(ratings, coefficient, weights, categories)
    raters = long.attrs["raters"]
    position = {name: i for i, name in enumerate(raters)}
    g = np.array([position[name] for name in long["rater_1"]], dtype=np.intp)
    h = np.array([position[name] for name in long["rater_2"]], dtype=np.intp)
    matrix = np.full((len(raters), len(raters)), np.nan)
    matrix[g, h] = long["estimate"].to_numpy()
    if long.attrs["symmetric"]:  # each pair was computed once
        matrix[h, g] = long["estimate"].to_numpy()
    out = pd.DataFrame(matrix, index=pd.Index(raters, name="rater"), columns=raters)
    out.attrs.update(long.attrs)
    return out


def _rater_position(raters: list, name, which: str) -> int:
    if isinstance(name, (bool, np.bool_)):  # True == 1 would silently pick the first rater
        raise InputError(f"{which} is a logical value ({name}); name the rater by its column label")
    for j, rater in enumerate(raters):
        if rater == name or str(rater).strip() == str(name).strip():
            return j
    shown = ", ".join(map(str, raters[:20])) + (" ..." if len(raters) > 20 else "")
    raise InputError(f"{which} {name!r} is not a rater of the table (raters: {shown})")


def confusion_table(ratings, rater_1, rater_2, categories=None) -> pd.DataFrame:
    """The categories x categories table of two raters: how many subjects rater_1 put in row k and rater_2 in l.

    Raters are named by column label (an array's columns are 1, 2, ...).  Only the subjects both rated count;
    ``.attrs["n_dropped"]`` says how many others one of the two rated.  Rows and columns list every category of the
    whole table (or the declared ones) in order, used or not.

    >>> confusion_table([[1, 1], [1, 2], [2, 2], [None, 2]], 1, 2).to_numpy().tolist()
    [[1, 1], [0, 1]]
    """
    coded = _code_ratings(ratings, categories)
    g = _rater_position(coded.raters, rater_1, "rater_1")
    h = _rater_position(coded.raters, rater_2, "rater_2")
    a, b = coded.codes[:, g], coded.codes[:, h]
    both = (a >= 0) & (b >= 0)
    q = len(coded.labels)
    table = np.bincount(a[both] * q + b[both], minlength=q * q).reshape(q, q)
    out = pd.DataFrame(table, index=pd.Index(coded.labels, name=str(coded.raters[g])),
                       columns=pd.Index(coded.labels, name=str(coded.raters[h])))
    out.attrs["n_dropped"] = int(((a >= 0) ^ (b >= 0)).sum())
    return out


def _contingency(table) -> np.ndarray:
    """A two raters' q x q table of counts, checked (square, whole counts 0 or more, not empty)."""
    try:
        x = np.asarray(table.to_numpy() if isinstance(table, pd.DataFrame) else table, dtype=float)
    except (TypeError, ValueError):
        raise InputError("the table of two raters must hold counts (numbers) only") from None
    if x.ndim != 2 or x.shape[0] != x.shape[1] or x.shape[0] < 1:
        raise InputError(f"the table of two raters must be square (q x q), got shape {x.shape}")
    bad = ~np.isfinite(x) | (x < 0) | (x != np.round(x))
    if bad.any():  # named by its cell: row = the first rater's category, column = the second's, from 1
        i, j = np.argwhere(bad)[0]
        raise InputError(f"the table of two raters, row {i + 1}, column {j + 1} holds {x[i, j]:g}: it must hold "
                         f"counts (whole numbers 0 or more; {int(bad.sum()):,} cell(s) do not)")
    if x.shape[0] > MAX_CATEGORIES:
        raise InputError(f"the table has {x.shape[0]:,} categories (at most {MAX_CATEGORIES:,})")
    if x.sum() < 1:
        raise InputError("the table of two raters is empty (no subject counted)")
    return x


def table_agreement(table, weights="identity", categories=None) -> pd.DataFrame:
    """Every coefficient's point estimate from two raters' q x q table (rows rater 1, columns rater 2).

    For two raters who both rated every subject, the subject sums the estimates need follow from the table
    ``x_kl`` (n = sum x): ``sum_i pa_i = sum_kl x_kl (w_kl + w_lk)/2``, each rater's category counts are the
    table's margins, and every subject has 2 ratings; the same :func:`gwet_ac` ... formulas (module docstring)
    then give Cohen's kappa (``conger_kappa``), Scott's pi (``fleiss_kappa``), AC1/AC2, Brennan-Prediger,
    Krippendorff's alpha and percent agreement, without one row per subject (tables of any total count).
    No standard errors: those need the ratings (:func:`agreement_coefficients`).

    ``categories`` names the rows/columns in order (numbers weight by value, text by rank; default 1..q).
    Returns a table indexed by coefficient with columns ``name``, ``estimate``, ``pa``, ``pe``.

    >>> t = table_agreement([[20, 5], [10, 15]])   # Cohen: pa = 0.7, pe = 0.5
    >>> t.loc["conger_kappa", "name"], round(float(t.loc["conger_kappa", "estimate"]), 4)
    ("Cohen's kappa", 0.4)
    """
    x = _contingency(table)
    q = x.shape[0]
    _, numbers, labels = _declared_categories(categories if categories is not None else range(1, q + 1))
    if len(labels) != q:
        raise InputError(f"{len(labels)} categories named for a {q} x {q} table")
    w, weights_name = _weight_matrix(weights, numbers, q)
    n = np.float64(x.sum())
    rows, columns = x.sum(axis=1), x.sum(axis=0)
    agree = float(np.sum(x * (w + w.T)))  # sum over subjects of sum_k r_ik (r*_ik - 1); each has 2 ratings
    sums = {"n": n, "n2": n, "pa": np.float64(agree / 2), "share": (rows + columns) / 2,
            "n_gk": np.vstack([rows, columns]), "n_g": np.array([n, n]),
            "k_r": np.float64(2 * n), "k_agree": np.float64(agree), "k_counts": rows + columns}
    out = []
    for key in COEFFICIENTS:
        with np.errstate(divide="ignore", invalid="ignore"):
            estimate, pa, pe = (float(v) for v in _estimate(key, sums, w))
        out.append((key, _display_name(key, weights_name, 2), estimate, pa, pe))
    frame = pd.DataFrame(out, columns=["coefficient", "name", "estimate", "pa", "pe"]).set_index("coefficient")
    frame.attrs.update(categories=list(labels), weights=weights_name, n_subjects=int(n))
    return frame


# ----------------------------------------------------------------------------
# Bootstrap over subjects
# ----------------------------------------------------------------------------
def _bootstrap_features(key: str, panel: _Panel, terms: dict) -> tuple[np.ndarray, dict]:
    """Per-subject rows whose (reweighted) column sums are the sums :func:`_estimate` needs, and the column map."""
    q = panel.counts.shape[1]
    if key == "krippendorff_alpha":  # alpha only sees the subjects with two or more ratings: resample those
        two = terms["two"]
        r = terms["r"][two]
        parts = {"k_r": r[:, None], "k_agree": (terms["agree"][two] / (r - 1))[:, None], "k_counts": panel.counts[two]}
    else:
        n = panel.counts.shape[0]
        parts = {"n": np.ones((n, 1)), "n2": terms["two"][:, None].astype(float), "pa": terms["pa_i"][:, None],
                 "share": terms["share"]}
        if key == "conger_kappa":
            codes = panel.codes
            r = codes.shape[1]
            onehot = np.zeros((n, r * q))
            rows, cols = np.nonzero(codes >= 0)
            onehot[rows, cols * q + codes[rows, cols]] = 1.0
            parts["n_gk"] = onehot
    layout, start = {}, 0
    for name, block in parts.items():
        layout[name] = (start, start + block.shape[1])
        start += block.shape[1]
    return np.hstack(list(parts.values())), layout


def _replicate_sums(features: np.ndarray, layout: dict, weights_rows: np.ndarray, key: str, panel: _Panel) -> dict:
    sums = weights_rows @ features
    out = {name: sums[:, a:b] if b - a > 1 else sums[:, a] for name, (a, b) in layout.items()}
    if "n_gk" in out:
        out["n_gk"] = out["n_gk"].reshape(len(weights_rows), panel.codes.shape[1], panel.counts.shape[1])
        out["n_g"] = out["n_gk"].sum(axis=-1)
    return out


def agreement_bootstrap(ratings, coefficient: str = "krippendorff_alpha", weights="identity", categories=None, *,
                        layout: str = "raters", n_boot: int = 1000, seed: int = 0,
                        confidence: float = 0.95) -> BootstrapResult:
    """Percentile bootstrap interval of a coefficient, resampling subjects with replacement (seeded).

    Each replicate draws n subjects with replacement (for Krippendorff's alpha: the n2 subjects with two or more
    ratings, the units alpha uses) and recomputes the coefficient from the reweighted subject sums, all replicates
    in a few matrix products.  This is the case bootstrap Zapf et al. (2016, BMC Med. Res. Methodol. 16:93) use for
    alpha's interval, not Hayes & Krippendorff's (2007) resampling of coincidences.  Replicates where the
    coefficient is undefined (a single category drawn) are left out and counted.

    >>> r = agreement_bootstrap([[1, 1], [2, 2], [3, 3], [4, 3], [2, 2], [1, 2]], n_boot=200, seed=1)
    >>> r.ci_low < r.estimate < r.ci_high
    True
    """
    key = _coefficient_key(coefficient)
    n_boot = whole_argument(n_boot, "n_boot", low=2, high=10_000_000)
    seed = seed_argument(seed)
    confidence, _ = _options(confidence, None)
    panel = _panel(ratings, weights, categories, layout)
    if key == "conger_kappa" and panel.codes is None:
        raise InputError("Conger's kappa needs each rater's ratings (a subjects x raters table), not counts")
    terms = _subject_terms(panel.counts, panel.weights)
    estimate = float(_estimate(key, _sums(key, panel, terms), panel.weights)[0])
    features, columns = _bootstrap_features(key, panel, terms)
    n = features.shape[0]
    check_memory(8.0 * features.size + 8.0 * n_boot * features.shape[1],
                 f"the bootstrap of {n:,} subjects", "use fewer subjects")
    chunk = int(max(1, min(n_boot, 4_000_000 // n)))  # replicates per block: ~64 MB of draws and weights
    rng = np.random.default_rng(seed)
    replicates = np.empty(n_boot)
    for start in range(0, n_boot, chunk):  # blocks of replicates, each one vectorised
        size = min(chunk, n_boot - start)
        draws = rng.integers(0, n, size=(size, n), dtype=np.intp)
        multiplicity = np.empty((size, n))
        for b in range(size):  # one bincount per replicate: its n counters stay in cache
            multiplicity[b] = np.bincount(draws[b], minlength=n)
        sums = _replicate_sums(features, columns, multiplicity, key, panel)
        with np.errstate(divide="ignore", invalid="ignore"):
            replicates[start:start + size] = _estimate(key, sums, panel.weights)[0]
    defined = replicates[np.isfinite(replicates)]
    if defined.size < 2:
        raise InputError("the coefficient is undefined in almost every bootstrap replicate (one category only)")
    low, high = np.quantile(defined, [(1 - confidence) / 2, (1 + confidence) / 2])
    name = _display_name(key, panel.weights_name, panel.n_raters)
    return BootstrapResult(key, name, estimate, float(defined.std(ddof=1)), float(low), float(high), n_boot, seed,
                           confidence, int(n_boot - defined.size), replicates)
