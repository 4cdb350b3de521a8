"""Svensson's rank-based analysis of paired ordinal ratings: systematic vs random disagreement.

Reference: Svensson's rank method for paired ordinal data (E. Svensson,
*Analysis of systematic and random differences between paired ordinal
categorical data*, dissertation, Almqvist & Wiksell, Stockholm 1993; E.
Svensson & S. Holm, "Separation of systematic and random differences in
ordinal rating scales", Statistics in Medicine 13 (1994) 2437-2453).  The
examples, figures and tables named below ("Svensson's paper") are those of
the paper that introduced the method, reproduced by the tests.  Measures it
gives only in words or by example (D, IV, r_a, kappa_max) are written out
here as formulas.

X = rater 1, Y = rater 2; ``x_ij`` counts objects rated category i by rater 1
and j by rater 2 (m ordered categories, n objects).

* Augmented mean ranks (ties within a rater-1 category broken by rater 2 and
  vice versa):
  ``R1_ij = sum_{h<i} x_h. + sum_{k<j} x_ik + (1 + x_ij)/2``,
  ``R2_ij = sum_{k<j} x_.k + sum_{h<i} x_hj + (1 + x_ij)/2``.
* RV = (6/n^3) sum x_ij (R1_ij - R2_ij)^2 (random disagreement, 0..2).
* RP = P0 - P1, P0 = P(X < Y), P1 = P(Y < X) from the marginals (relative
  position; RP > 0: rater 1 uses lower categories).
* RC = (1/M) sum_v [p_Y(v) q_X(v-1) (1 - q_X(v)) - p_X(v) q_Y(v-1) (1 - q_Y(v))],
  M = min(P0 - P0^2, P1 - P1^2) (relative concentration, -1..1).
* D = (1/(n(n-1))) sum_{k != l} I_kl, I_kl = 1 for a strictly discordant
  ordered pair (the paper's empirical probability of reversed rank
  classification order, its "T").
* IV = sum (x_ij^3 - x_ij)/n^3, r_a = 1 - 6 sum x (R1-R2)^2 / ((n^3 - n) - sum(x^3 - x)).
* PA (percent agreement), Cohen's kappa, and kappa_max = the largest kappa the
  marginals permit, (sum_i min(p_i., p_.i) - p_e) / (1 - p_e).

Jackknife standard errors (``SE_RP``, ``SE_RC``, ``SE_RV``) use
count-weighted deletion: removing any one of the x_ij objects of cell (i, j)
gives the same statistic, so one deletion per non-empty cell, weighted by
x_ij, gives the exact leave-one-out jackknife in O(m^4) independent of n.

Reproduced examples (tests): Table I ranks of Example 1; Figure 3 A (RV = D = 0),
B (RV = 0.01, D = 0.02) and C (RV = 0.02, D = 0.03, RP = 0.06, RC = 0.04, as
printed with rater 1 on the columns of the figures); the Fisher-grade
application, Table II (PA = 68 %, kappa = 0.5, kappa_max = 0.74, D = 0.037,
RV = 0.04, RP = -0.084, RC = 0.113, jackknife SEs 0.06).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from .agreement import table_agreement
from .cells import check_memory, whole_argument
from .errors import InputError

__all__ = ["SvenssonResult", "svensson", "svensson_from_table", "mean_rank_table", "roc_points", "agreement_table",
           "checked_table", "MAX_TABLE_COUNT"]


@dataclass
class SvenssonResult:
    """All Svensson measures for one pair of raters (see module docstring for definitions)."""

    PA: float
    RP: float
    RC: float
    RV: float
    D: float
    SE_RP: float
    SE_RC: float
    SE_RV: float
    IV: float
    r_a: float
    kappa: float
    kappa_max: float
    n: int
    n_dropped: int
    categories: tuple

    def why_undefined(self, measure: str) -> str:
        """'' when *measure* has a value; else why these ratings leave it undefined (said in the cell and on
        the sheet instead of a blank)."""
        if np.isfinite(getattr(self, measure)):
            return ""
        if measure == "RC":
            return ("not defined: one rater's categories never lie above the other's (or both use a single "
                    "category), so neither can be the more concentrated (Svensson's M = 0)")
        if measure in ("kappa", "kappa_max"):
            return "not defined: both raters use the same single category, so chance agreement is already 100%"
        if measure == "r_a":
            return "not defined: every rating is tied with every other (a single category each)"
        return "not defined for these ratings"

    def to_frame(self) -> pd.DataFrame:
        """Tidy table: measure, value, SE (jackknife, where defined), meaning (why, for a measure these ratings
        leave undefined)."""
        rows = [
            ("PA", self.PA, None, "percentage agreement (%)"),
            ("RP", self.RP, self.SE_RP, "relative position: P(X<Y) - P(Y<X); > 0 = rater 1 uses lower categories"),
            ("RC", self.RC, self.SE_RC, "relative concentration, -1..1; > 0 = rater 2 more concentrated"),
            ("RV", self.RV, self.SE_RV, "relative rank variance: random disagreement, 0 = none, 1 = chance"),
            ("D", self.D, None, "empirical probability of reversed rank classification order"),
            ("IV", self.IV, None, "internal rank variance sum(x^3 - x)/n^3"),
            ("r_a", self.r_a, None, "augmented rank correlation"),
            ("kappa", self.kappa, None, "Cohen's kappa"),
            ("kappa_max", self.kappa_max, None, "largest kappa the marginal distributions permit"),
            ("n", self.n, None, "objects rated by both raters"),
        ]
        rows = [(m, v, se, self.why_undefined(m) if m != "n" and self.why_undefined(m) else meaning)
                for m, v, se, meaning in rows]
        return pd.DataFrame(rows, columns=["measure", "value", "SE", "meaning"])

    def as_dict(self) -> dict:
        return asdict(self)


# ----------------------------------------------------------------------------
# Table construction
# ----------------------------------------------------------------------------
def agreement_table(rater1, rater2, categories=None) -> tuple[np.ndarray, tuple, int]:
    """Paired ratings -> (m x m count table, category order, number of dropped incomplete pairs).

    Pairs with a missing rating (None/NaN/blank) are dropped and counted:
    agreement needs both judgements.  ``categories`` fixes the order (and
    includes categories nobody used); without it, the sorted distinct values
    are used.  A value not in ``categories`` is an error naming its position.
    """
    fast = _numeric_table(rater1, rater2, categories)
    if fast is not None:
        return fast
    a = pd.Series(list(rater1), dtype=object)
    b = pd.Series(list(rater2), dtype=object)
    if len(a) != len(b):
        raise InputError(f"the two raters' ranges differ in length ({len(a)} and {len(b)})")
    blank = lambda s: s.isna() | s.map(lambda v: isinstance(v, str) and not v.strip())  # noqa: E731
    keep = ~(blank(a) | blank(b))
    dropped = int((~keep).sum())
    a, b = a[keep], b[keep]
    if len(a) < 2:
        raise InputError(f"at least 2 objects rated by both raters are needed, got {len(a)}")
    norm = lambda v: v.strip() if isinstance(v, str) else (int(v) if isinstance(v, float) and v.is_integer() else v)  # noqa: E731
    a, b = a.map(norm), b.map(norm)
    if categories is None:
        values = pd.unique(pd.concat([a, b]))
        try:
            categories = tuple(sorted(values))
        except TypeError:
            raise InputError("ratings mix text and numbers; give the category order explicitly") from None
    else:
        categories = tuple(norm(c) for c in categories)
        if len(set(categories)) != len(categories):
            raise InputError("a category is listed twice in the category order")
    index = {c: i for i, c in enumerate(categories)}
    codes = []
    for name, s in (("rater 1", a), ("rater 2", b)):
        code = s.map(index)
        if code.isna().any():
            pos = int(code[code.isna()].index[0])
            raise InputError(f"{name}, row {pos + 1}: category {s[pos]!r} is not in the category order "
                             f"({', '.join(map(str, categories))})", {"row": pos})
        codes.append(code.to_numpy(dtype=np.intp))
    m = len(categories)
    table = np.bincount(codes[0] * m + codes[1], minlength=m * m).reshape(m, m)
    return table, categories, dropped


def _numeric_table(rater1, rater2, categories):
    """Vectorised path for numeric ratings (e.g. a million pairs); None when the input is not plain numbers."""
    try:
        a = np.asarray(rater1, dtype=float)
        b = np.asarray(rater2, dtype=float)
    except (TypeError, ValueError):
        return None
    if a.ndim != 1 or b.ndim != 1 or a.size != b.size:
        return None
    keep = ~(np.isnan(a) | np.isnan(b))
    dropped = int((~keep).sum())
    a, b = a[keep], b[keep]
    if a.size < 2:
        raise InputError(f"at least 2 objects rated by both raters are needed, got {a.size}")
    if categories is None:
        lo, hi = min(a.min(), b.min()), max(a.max(), b.max())
        if hi - lo < 10_000 and np.all(a == np.rint(a)) and np.all(b == np.rint(b)):
            # whole-number grades: used values by counting, O(n) instead of a sort
            used = (np.bincount((a - lo).astype(np.intp), minlength=int(hi - lo) + 1)
                    + np.bincount((b - lo).astype(np.intp), minlength=int(hi - lo) + 1)) > 0
            cats = lo + np.flatnonzero(used).astype(float)
            lookup = np.cumsum(used, dtype=np.intp) - 1
            codes = [lookup[(a - lo).astype(np.intp)], lookup[(b - lo).astype(np.intp)]]
            m = cats.size
            table = np.bincount(codes[0] * m + codes[1], minlength=m * m).reshape(m, m)
            return table, tuple(int(c) for c in cats), dropped
        cats = np.unique(np.concatenate([a, b]))
    else:
        try:
            cats = np.asarray([float(c) for c in categories])
        except (TypeError, ValueError):
            return None
        if np.unique(cats).size != cats.size:
            raise InputError("a category is listed twice in the category order")
    order = np.argsort(cats, kind="stable")
    codes = []
    for name, values in (("rater 1", a), ("rater 2", b)):
        pos = np.clip(np.searchsorted(cats[order], values), 0, cats.size - 1)
        bad = cats[order][pos] != values
        if bad.any():
            row = int(np.flatnonzero(keep)[np.flatnonzero(bad)[0]])
            raise InputError(f"{name}, row {row + 1}: category {values[bad][0]:g} is not in the category order", {"row": row})
        codes.append(order[pos])
    m = cats.size
    table = np.bincount(codes[0] * m + codes[1], minlength=m * m).reshape(m, m)
    labels = tuple(int(c) if float(c).is_integer() else float(c) for c in cats)
    return table, labels, dropped


# ----------------------------------------------------------------------------
# Batched statistics: every function takes tables of shape (..., m, m)
# ----------------------------------------------------------------------------
def _ranks(x: np.ndarray):
    r = x.sum(axis=-1)  # rater-1 margins
    c = x.sum(axis=-2)  # rater-2 margins
    before_r = np.cumsum(r, axis=-1) - r
    before_c = np.cumsum(c, axis=-1) - c
    within_row = np.cumsum(x, axis=-1) - x  # sum_{k<j} x_ik
    within_col = np.cumsum(x, axis=-2) - x  # sum_{h<i} x_hj
    R1 = before_r[..., :, None] + within_row + (1 + x) / 2
    R2 = before_c[..., None, :] + within_col + (1 + x) / 2
    return R1, R2


def _stats(x: np.ndarray) -> dict[str, np.ndarray]:
    x = x.astype(float)
    n = x.sum(axis=(-2, -1))
    R1, R2 = _ranks(x)
    sq = np.sum(x * (R1 - R2) ** 2, axis=(-2, -1))
    rv = 6 * sq / n**3
    ties = np.sum(x**3 - x, axis=(-2, -1))
    iv = ties / n**3
    with np.errstate(invalid="ignore", divide="ignore"):
        r_a = 1 - 6 * sq / ((n**3 - n) - ties)
    pX = x.sum(axis=-1) / n[..., None]
    pY = x.sum(axis=-2) / n[..., None]
    qX, qY = np.cumsum(pX, axis=-1), np.cumsum(pY, axis=-1)
    qX_prev, qY_prev = qX - pX, qY - pY
    P0 = np.sum(qX_prev * pY, axis=-1)
    P1 = np.sum(qY_prev * pX, axis=-1)
    rp = P0 - P1
    M = np.minimum(P0 - P0**2, P1 - P1**2)
    num = np.sum(pY * qX_prev * (1 - qX) - pX * qY_prev * (1 - qY), axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rc = np.where(M > 0, num / np.where(M > 0, M, 1), np.nan)
    return {"RV": rv, "RP": rp, "RC": rc, "IV": iv, "r_a": r_a}


def _discordant_pairs(x: np.ndarray) -> float:
    """Unordered pairs with (i < i' and j > j'): sum_{i,j} x_ij * (objects below-left of the cell)."""
    x = x.astype(float)
    # C[i, j] = sum_{i' > i, j' < j} x_i'j'
    below = np.cumsum(x[::-1], axis=0)[::-1]  # sum over i' >= i
    below = np.vstack([below[1:], np.zeros((1, x.shape[1]))])  # i' > i
    left = np.cumsum(below, axis=1) - below  # j' < j
    return float(np.sum(x * left))


def _kappas(x: np.ndarray) -> tuple[float, float, float]:
    """PA (percent), Cohen's kappa (from :func:`xlcalib.agreement.table_agreement`, the one home of kappa) and
    kappa_max = (sum_k min(p_k., p_.k) - pe) / (1 - pe), the largest kappa the margins permit (Cohen 1960)."""
    coefficients = table_agreement(x)
    pa, kappa, pe = coefficients.loc["conger_kappa", ["pa", "estimate", "pe"]].astype(float)
    if np.isnan(kappa):
        return float(100 * pa), float("nan"), float("nan")
    p = x / x.sum()
    kappa_max = (np.minimum(p.sum(axis=1), p.sum(axis=0)).sum() - pe) / (1 - pe)
    return float(100 * pa), float(kappa), float(kappa_max)


#: Largest number of objects an agreement table may hold (counts stay exact in floating point).
MAX_TABLE_COUNT = 1e15


def checked_table(table, least: int = 1) -> np.ndarray:
    """An m x m agreement table of non-negative whole counts holding at least *least* objects -> int64 array.

    Every function taking a ``table=`` checks it here, so a negative or fractional count is named by its cell
    (row = rater 1's category, column = rater 2's, counted from 1) and an empty table is refused rather than
    turned into proportions 0/0.
    """
    raw = np.asarray(table)
    if raw.dtype == bool or not np.issubdtype(raw.dtype, np.number):  # TRUE/FALSE or text are no counts
        raise InputError("the agreement table must hold non-negative whole counts (numbers), one row and one "
                         "column per category")
    x = raw.astype(float)
    if x.ndim != 2 or x.shape[0] != x.shape[1]:
        raise InputError(f"the agreement table must be square (m x m), got shape {x.shape}")
    bad = ~np.isfinite(x) | (x < 0) | (x != np.round(x))
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise InputError(f"the agreement table, row {i + 1}, column {j + 1} holds {x[i, j]:g}: it must hold "
                         f"non-negative whole counts ({int(bad.sum()):,} cell(s) do not)")
    if x.size and (float(x.max()) > MAX_TABLE_COUNT or float(np.sum(x)) > MAX_TABLE_COUNT):
        raise InputError(f"the agreement table holds more than {MAX_TABLE_COUNT:.0e} objects "
                         "(counts that large cannot be pairs of ratings; check the table)")
    n = int(x.sum())
    if n < least:
        raise InputError(f"at least {least} object{'s are' if least > 1 else ' is'} needed, the agreement table "
                         f"holds {n}")
    return x.astype(np.int64)


def _table_categories(x: np.ndarray, categories) -> tuple:
    """The category names of a given table (1..m without them), as many as its rows."""
    cats = tuple(categories) if categories is not None else tuple(range(1, x.shape[0] + 1))
    if len(cats) != x.shape[0]:
        raise InputError(f"{len(cats)} category names for a {x.shape[0]} x {x.shape[0]} table")
    return cats


def svensson_from_table(table, categories=None, n_dropped: int = 0) -> SvenssonResult:
    """All Svensson measures from an m x m table (rows = rater 1 category, columns = rater 2).

    >>> r = svensson_from_table([[30, 10, 0], [10, 20, 0], [0, 0, 30]])   # Svensson's paper, Figure 3B
    >>> round(r.RV, 2), round(r.D, 2), r.RP
    (0.01, 0.02, 0.0)
    """
    x = checked_table(table, least=2)
    n_dropped = whole_argument(n_dropped, "n_dropped", low=0)
    n = int(x.sum())
    m = x.shape[0]
    stats = {k: float(v) for k, v in _stats(x).items()}
    D = 2 * _discordant_pairs(x) / (n * (n - 1))
    PA, kappa, kappa_max = _kappas(x)

    # count-weighted jackknife: one deletion per non-empty cell, all deletions in one batch
    cells = np.argwhere(x > 0)
    check_memory(40.0 * len(cells) * m * m, f"the jackknife over {len(cells)} used cells of a {m} x {m} table",
                 "use fewer categories")
    deleted = np.repeat(x[None, :, :], len(cells), axis=0)
    deleted[np.arange(len(cells)), cells[:, 0], cells[:, 1]] -= 1
    loo = _stats(deleted)
    weights = x[cells[:, 0], cells[:, 1]].astype(float)

    def jackknife_se(values: np.ndarray) -> float:
        if n < 3 or np.any(~np.isfinite(values)):
            return float("nan")
        mean = np.sum(weights * values) / n
        return float(np.sqrt((n - 1) / n * np.sum(weights * (values - mean) ** 2)))

    cats = _table_categories(x, categories)
    return SvenssonResult(PA=PA, RP=stats["RP"], RC=stats["RC"], RV=stats["RV"], D=D,
                          SE_RP=jackknife_se(loo["RP"]), SE_RC=jackknife_se(loo["RC"]), SE_RV=jackknife_se(loo["RV"]),
                          IV=stats["IV"], r_a=stats["r_a"], kappa=kappa, kappa_max=kappa_max, n=n,
                          n_dropped=n_dropped, categories=cats)


def svensson(rater1, rater2, categories=None) -> SvenssonResult:
    """Svensson's measures for two raters' paired ordinal ratings of the same objects.

    ``categories`` gives the category order (e.g. ``["K", "L", "M"]`` or
    ``["F1", "F2", "F3", "F4"]``); unused categories still count.  Pairs where
    either rating is missing are dropped; ``n_dropped`` reports how many.

    >>> r = svensson(["K"] * 5 + ["L"] * 3 + ["M"] * 2, ["K"] * 3 + ["L"] * 4 + ["M"] * 3)  # Svensson's paper, Example 1
    >>> r.RV, r.D
    (0.0, 0.0)
    """
    table, cats, dropped = agreement_table(rater1, rater2, categories)
    return svensson_from_table(table, cats, dropped)


def mean_rank_table(rater1=None, rater2=None, categories=None, table=None) -> pd.DataFrame:
    """Both augmented mean ranks per non-empty cell (Svensson's paper, Figure 4 / Table I).

    Give the paired ratings, or an m x m ``table``.  Columns: ``rater1``,
    ``rater2`` (categories), ``count``, ``R1``, ``R2``, ``difference``.
    """
    if table is None:
        x, cats, _ = agreement_table(rater1, rater2, categories)
    else:
        x = checked_table(table)
        cats = _table_categories(x, categories)
    R1, R2 = _ranks(x.astype(float))
    rows = [(cats[i], cats[j], int(x[i, j]), R1[i, j], R2[i, j], R1[i, j] - R2[i, j]) for i, j in np.argwhere(x > 0)]
    return pd.DataFrame(rows, columns=["rater1", "rater2", "count", "R1", "R2", "difference"])


def roc_points(rater1=None, rater2=None, categories=None, table=None) -> pd.DataFrame:
    """Cumulative proportions of both raters at each category boundary (Svensson's paper, the ROC curve of Figure 8).

    Rows run from (0, 0) through each category's upper boundary to (1, 1):
    ``boundary`` (category up to which is cumulated), ``rater1`` (q_X),
    ``rater2`` (q_Y).  Plot rater 1 on the x axis, rater 2 on the y axis.
    """
    if table is None:
        x, cats, _ = agreement_table(rater1, rater2, categories)
    else:
        x = checked_table(table)  # an empty table has no proportions (0/0): refused, not a column of NaN
        cats = _table_categories(x, categories)
    x = x.astype(float)
    n = x.sum()
    qx = np.concatenate([[0.0], np.cumsum(x.sum(axis=1)) / n])
    qy = np.concatenate([[0.0], np.cumsum(x.sum(axis=0)) / n])
    return pd.DataFrame({"boundary": ["(start)", *map(str, cats)], "rater1": qx, "rater2": qy})
