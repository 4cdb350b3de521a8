"""Reliability of ratings and of aggregates: ICC family, k-rater reliability, Spearman-Brown, Krippendorff's alpha.

References: Wong & Paritosh (2022), "k-Rater Reliability: The Correct Unit of
Reliability for Aggregated Human Annotations", ACL 2022 (cited below as
"Wong & Paritosh 2022"), and its references Shrout & Fleiss (1979), McGraw &
Wong (1996), Krippendorff (2011).

Ratings are an *items x raters* table (2-D array or DataFrame); ``NaN`` marks
a missing rating.  A long table (item, rater, score) is also accepted by
:func:`icc_table` and :func:`icc`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .cells import (
    EXCEL_MAX_ROWS,
    check_memory,
    header_key,
    probability_argument,
    real_argument,
    seed_argument,
    whole_argument,
)
from .errors import InputError

__all__ = [
    "ICC_FORMS",
    "icc_table",
    "icc",
    "spearman_brown",
    "raters_needed",
    "krippendorff_alpha",
    "KRRBootstrapResult",
    "krr_bootstrap",
    "krr_empirical",
    "krr_curve",
]

ICC_FORMS = {
    "ICC1": "Single raters absolute (one-way random)",
    "ICC2": "Single random raters (two-way random, absolute agreement)",
    "ICC3": "Single fixed raters (two-way mixed, consistency)",
    "ICC1k": "Average raters absolute (one-way random)",
    "ICC2k": "Average random raters (two-way random, absolute agreement)",
    "ICC3k": "Average fixed raters (two-way mixed, consistency)",
}


# ----------------------------------------------------------------------------
# Input
# ----------------------------------------------------------------------------
def _as_matrix(ratings, *, item=None, rater=None, score=None, name="ratings") -> np.ndarray:
    """items x raters float matrix (NaN = missing) from a grid or a long (item, rater, score) table."""
    if isinstance(ratings, pd.DataFrame):
        lower = {header_key(c): c for c in ratings.columns}  # headers as every reader compares them
        if item is None and {"item", "rater", "score"} <= set(lower):
            item, rater, score = lower["item"], lower["rater"], lower["score"]
        if item is not None:
            long = ratings[[item, rater, score]]
            if long.duplicated([item, rater]).any():
                dup = long[long.duplicated([item, rater], keep=False)].iloc[0]
                raise InputError(f"{name}: item {dup[item]} has two ratings from rater {dup[rater]}")
            ratings = long.pivot(index=item, columns=rater, values=score)
        if all(pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t) for t in ratings.dtypes):
            out = ratings.to_numpy(dtype=float)  # fast path: already numeric
            if np.isinf(out).any():
                i, j = np.argwhere(np.isinf(out))[0]
                raise InputError(f"{name}: item {ratings.index[i]}, rater {ratings.columns[j]} is infinite")
            return _scaled(out)
        values = ratings.to_numpy(dtype=object)
        row_names, col_names = list(ratings.index), list(ratings.columns)
    else:
        if isinstance(ratings, np.ndarray) and ratings.dtype.kind in "fiu":
            out = ratings.astype(float)
            if out.ndim != 2:
                raise InputError(f"{name} must be a 2-D items x raters table, got {out.ndim} dimension(s)")
            if np.isinf(out).any():
                i, j = np.argwhere(np.isinf(out))[0]
                raise InputError(f"{name}: item {i + 1}, rater {j + 1} is infinite", {"row": int(i), "column": int(j)})
            return _scaled(out)
        values = np.asarray(ratings, dtype=object)
        if values.ndim != 2:
            raise InputError(f"{name} must be a 2-D items x raters table, got {values.ndim} dimension(s)")
        row_names, col_names = list(range(1, values.shape[0] + 1)), list(range(1, values.shape[1] + 1))
    out = np.empty(values.shape, dtype=float)
    try:
        if values.dtype.kind in "USb" or (values.dtype == object and any(
                isinstance(v, (str, bool, np.bool_, np.str_)) for v in values.ravel())):
            raise TypeError  # text ("nan", "1e999") and TRUE/FALSE are not ratings: report the cell
        out[:] = values.astype(float) if values.dtype != object else np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        for (i, j), v in np.ndenumerate(values):
            if v is None:
                out[i, j] = np.nan
                continue
            if isinstance(v, (str, bool, np.bool_, np.str_)):
                raise InputError(f"{name}: item {row_names[i]}, rater {col_names[j]} is not a number ({v!r})",
                                 {"row": i, "column": j})
            try:
                out[i, j] = float(v)
            except (TypeError, ValueError):
                raise InputError(f"{name}: item {row_names[i]}, rater {col_names[j]} is not a number ({v!r})",
                                 {"row": i, "column": j}) from None
            if isinstance(v, (str, bool)):
                raise InputError(f"{name}: item {row_names[i]}, rater {col_names[j]} is not a number ({v!r})",
                                 {"row": i, "column": j})
    if np.isinf(out).any():
        i, j = np.argwhere(np.isinf(out))[0]
        raise InputError(f"{name}: item {row_names[i]}, rater {col_names[j]} is infinite", {"row": int(i), "column": int(j)})
    return _scaled(out)


def _scaled(x: np.ndarray) -> np.ndarray:
    """Ratings of extreme magnitude scaled by a power of two (exact), so squares and sums stay finite.

    Every coefficient here (ICC, alpha, k-rater reliability, F, p, intervals)
    is invariant to multiplying all ratings by one positive constant, so
    ratings near 1e308 or 1e-300 give the same answer as the same ratings
    near 1; ordinary ratings are returned untouched (bit-identical results).
    """
    with np.errstate(invalid="ignore"):
        top = np.nanmax(np.abs(x)) if x.size and not np.isnan(x).all() else 0.0
    if top == 0 or 1e-100 < top < 1e100:
        return x
    return np.ldexp(x, -int(np.frexp(top)[1]))


def _check_size(x: np.ndarray, name="ratings", min_per_item=1):
    if x.shape[0] < 2:
        raise InputError(f"{name}: at least 2 items are needed, got {x.shape[0]}")
    if x.shape[1] < 2:
        raise InputError(f"{name}: at least 2 raters (columns) are needed, got {x.shape[1]}")
    empty = np.flatnonzero(np.isnan(x).all(axis=1))
    if empty.size:
        raise InputError(f"{name}: item {empty[0] + 1} has no ratings (all cells missing)", {"row": int(empty[0])})


# ----------------------------------------------------------------------------
# ICC
# ----------------------------------------------------------------------------
def _one_way_unbalanced(x: np.ndarray):
    """Mean squares of the one-way ANOVA with unequal ratings per item (NaN = missing)."""
    if not np.isnan(x).any():  # balanced fast path (same estimator, k0 = k)
        n, k = x.shape
        item_mean = x.mean(axis=1)
        ssb = k * np.sum((item_mean - item_mean.mean()) ** 2)
        ssw = np.sum((x - item_mean[:, None]) ** 2)
        return ssb / (n - 1), ssw / (n * (k - 1)), n - 1, n * (k - 1), float(k), n
    mask = ~np.isnan(x)
    n_i = mask.sum(axis=1)
    keep = n_i > 0
    x, mask, n_i = x[keep], mask[keep], n_i[keep]
    N, n = n_i.sum(), len(n_i)
    item_mean = np.nansum(x, axis=1) / n_i
    grand = np.nansum(x) / N
    ssb = np.sum(n_i * (item_mean - grand) ** 2)
    ssw = np.nansum((x - item_mean[:, None]) ** 2)
    k0 = (N - np.sum(n_i**2) / N) / (n - 1)
    return ssb / (n - 1), ssw / (N - n), n - 1, N - n, k0, n


def _refuse_equal_item_means(msb: float) -> None:
    """Items whose mean ratings are all the same leave nothing between items: every ICC form would divide by the
    between-item mean square (the average-rater forms run to minus infinity, ICC2 leaves [-1, 1])."""
    if msb == 0:
        raise InputError("every item has the same mean rating (to the precision of the ratings): the items do not "
                         "differ at all, so the ICC -- how well the ratings tell the items apart -- is not defined")


def _one_way_forms(x: np.ndarray, q: float) -> tuple[dict, list[str]]:
    """ICC1 and ICC1k rows (ICC, F, df1, df2, p, CI) from the unbalanced one-way ANOVA on every rating (equal
    to the balanced one when the table is complete), and a note when ratings are missing."""
    from scipy import stats  # here, not at the top: ICC(1,k) alone (the Summary of every run) needs no intervals

    note = []
    msb1, msw, df1, df2w, k0, n1 = _one_way_unbalanced(x)
    if msw == 0 and msb1 == 0:
        raise InputError("all ratings are equal: the ICC is undefined")
    _refuse_equal_item_means(msb1)
    f1 = msb1 / msw if msw > 0 else np.inf
    icc1 = (msb1 - msw) / (msb1 + (k0 - 1) * msw)
    icc1k = (msb1 - msw) / msb1 if msb1 > 0 else np.nan
    f1l, f1u = f1 / stats.f.ppf(q, df1, df2w), f1 * stats.f.ppf(q, df2w, df1)
    p1 = stats.f.sf(f1, df1, df2w)
    rows = {"ICC1": (icc1, f1, df1, df2w, p1, (f1l - 1) / (f1l + k0 - 1), (f1u - 1) / (f1u + k0 - 1)),
            "ICC1k": (icc1k, f1, df1, df2w, p1, 1 - 1 / f1l, 1 - 1 / f1u)}
    if np.isnan(x).any():
        note.append(f"ICC1/ICC1k: unbalanced one-way ANOVA on {int((~np.isnan(x)).sum())} ratings, k0 = {k0:.4g}")
    return rows, note


def _two_way_forms(x: np.ndarray, q: float, note: list[str]) -> dict:
    """ICC2, ICC3, ICC2k and ICC3k rows from the two-way ANOVA on the items rated by every rater (a note in
    *note* when incomplete items are dropped); ICC2's interval with Satterthwaite degrees of freedom."""
    from scipy import stats  # here, not at the top: importing scipy.stats takes most of a second

    complete = ~np.isnan(x).any(axis=1)
    xc = x if complete.all() else x[complete]
    if (~complete).any():
        note.append(f"ICC2/ICC3 forms: {int((~complete).sum())} incomplete item(s) dropped, {int(complete.sum())} used")
    n, k = xc.shape
    if n < 2:
        raise InputError(f"the two-way ICC forms need at least 2 items rated by every rater; only {n} are complete "
                         "(use icc(..., form='ICC1') for the one-way forms on incomplete data)")
    item_mean = xc.mean(axis=1)
    grand = item_mean.mean()
    ssb = k * np.sum((item_mean - grand) ** 2)
    ssj = n * np.sum((xc.mean(axis=0) - grand) ** 2)
    ssw = np.sum((xc - item_mean[:, None]) ** 2)  # within items = raters + residual
    sse = ssw - ssj
    msb, msj = ssb / (n - 1), ssj / (k - 1)
    _refuse_equal_item_means(msb)
    dfe = (n - 1) * (k - 1)
    mse = sse / dfe
    f3 = msb / mse if mse > 0 else np.inf
    p3 = stats.f.sf(f3, n - 1, dfe)
    icc2 = (msb - mse) / (msb + (k - 1) * mse + k * (msj - mse) / n)
    icc2k = (msb - mse) / (msb + (msj - mse) / n)
    icc3 = (msb - mse) / (msb + (k - 1) * mse)
    icc3k = (msb - mse) / msb
    f3l, f3u = f3 / stats.f.ppf(q, n - 1, dfe), f3 * stats.f.ppf(q, dfe, n - 1)
    fj = msj / mse
    vn = (k - 1) * (n - 1) * (k * icc2 * fj + n * (1 + (k - 1) * icc2) - k * icc2) ** 2
    vd = (n - 1) * k**2 * icc2**2 * fj**2 + (n * (1 + (k - 1) * icc2) - k * icc2) ** 2
    v = vn / vd
    f2u, f2l = stats.f.ppf(q, n - 1, v), stats.f.ppf(q, v, n - 1)
    l2 = n * (msb - f2u * mse) / (f2u * (k * msj + (k * n - k - n) * mse) + n * msb)
    u2 = n * (f2l * msb - mse) / (k * msj + (k * n - k - n) * mse + n * f2l * msb)
    return {"ICC2": (icc2, f3, n - 1, dfe, p3, l2, u2),
            "ICC3": (icc3, f3, n - 1, dfe, p3, (f3l - 1) / (f3l + k - 1), (f3u - 1) / (f3u + k - 1)),
            "ICC2k": (icc2k, f3, n - 1, dfe, p3, l2 * k / (1 + l2 * (k - 1)), u2 * k / (1 + u2 * (k - 1))),
            "ICC3k": (icc3k, f3, n - 1, dfe, p3, 1 - 1 / f3l, 1 - 1 / f3u)}


def icc_table(ratings, alpha: float = 0.05, *, item=None, rater=None, score=None) -> pd.DataFrame:
    """The six Shrout-Fleiss / McGraw-Wong intraclass correlations with F tests and confidence intervals.

    Parameters
    ----------
    ratings:
        items x raters (NaN = missing), or a long table with columns
        ``item, rater, score`` (or name them with ``item=, rater=, score=``).
    alpha:
        The confidence intervals have level ``1 - alpha``.

    Formulas (n items, k raters; MSB between items, MSW within items,
    MSJ between raters, MSE residual):

    * ICC1 = (MSB - MSW) / (MSB + (k-1) MSW),   ICC1k = (MSB - MSW) / MSB
    * ICC2 = (MSB - MSE) / (MSB + (k-1) MSE + k (MSJ - MSE)/n),
      ICC2k = (MSB - MSE) / (MSB + (MSJ - MSE)/n)
    * ICC3 = (MSB - MSE) / (MSB + (k-1) MSE),   ICC3k = (MSB - MSE) / MSB

    F = MSB/MSW (one-way) or MSB/MSE (two-way); confidence intervals from
    Shrout & Fleiss (1979) / McGraw & Wong (1996) (ICC2: Satterthwaite
    degrees of freedom), as also implemented by pingouin.

    Missing ratings: the one-way forms ICC1/ICC1k use the **unbalanced
    one-way ANOVA** on every rating (k replaced by
    k0 = (N - sum n_i^2 / N) / (n - 1), N ratings, n items; df2 = N - n) —
    the usual crowdsourcing case where each item has its own raters.  The
    two-way forms need a complete block: they use the items rated by every
    rater, and ``.attrs["note"]`` says how many incomplete items were dropped
    (an error if fewer than 2 complete items remain).

    Returns
    -------
    DataFrame indexed ``ICC1, ICC2, ICC3, ICC1k, ICC2k, ICC3k`` with columns
    ``description, ICC, F, df1, df2, pval, CI_low, CI_high``.

    Examples
    --------
    >>> import numpy as np, xlcalib
    >>> x = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]])
    >>> xlcalib.icc_table(x)["ICC"].round(2).tolist()   # Shrout & Fleiss (1979), Table 4
    [0.17, 0.29, 0.71, 0.44, 0.62, 0.91]
    """
    alpha = real_argument(alpha, "alpha", low=MIN_ALPHA, high=1, high_open=True)
    x = _as_matrix(ratings, item=item, rater=rater, score=score)
    _check_size(x)
    if np.nanmax(x) == np.nanmin(x):
        raise InputError("all ratings are equal: the ICC is undefined (no variance between or within items)")
    q = 1 - alpha / 2
    rows, note = _one_way_forms(x, q)
    rows.update(_two_way_forms(x, q, note))
    order = ["ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k"]
    table = pd.DataFrame([(ICC_FORMS[f], *rows[f]) for f in order], index=pd.Index(order, name="form"),
                         columns=["description", "ICC", "F", "df1", "df2", "pval", "CI_low", "CI_high"])
    table.attrs["note"] = "; ".join(note)
    table.attrs["ci_level"] = 1 - alpha
    return table


def icc(ratings, form: str = "ICC1k", **kwargs) -> float:
    """One intraclass correlation (``form`` one of ICC1, ICC2, ICC3, ICC1k, ICC2k, ICC3k).

    The one-way forms work on incomplete (unbalanced) data; see :func:`icc_table`.

    >>> import xlcalib
    >>> round(xlcalib.icc([[1, 2], [3, 3], [5, 6], [8, 7]], "ICC1"), 4)   # (14.125 - 0.375) / (14.125 + 0.375)
    0.9483
    """
    if form not in ICC_FORMS:
        raise InputError(f"form must be one of {', '.join(ICC_FORMS)}, not {form!r}")
    if form in ("ICC1", "ICC1k"):
        x = _as_matrix(ratings, **kwargs)
        _check_size(x)
        if np.nanmax(x) == np.nanmin(x):
            raise InputError("all ratings are equal: the ICC is undefined (no variance between or within items)")
        msb, msw, _, _, k0, _ = _one_way_unbalanced(x)
        if form == "ICC1k" and not msb > 0:
            raise InputError("the items' means are all equal (no variance between items): ICC(1,k) = "
                             "(MSB - MSW) / MSB is undefined")
        return float((msb - msw) / (msb + (k0 - 1) * msw) if form == "ICC1" else (msb - msw) / msb)
    return float(icc_table(ratings, **kwargs).loc[form, "ICC"])


def spearman_brown(icc1: float, k: float) -> float:
    """Spearman-Brown prophecy: reliability of the mean of k ratings, ``k r / (1 + (k-1) r)`` (Wong & Paritosh 2022, eq. 1).

    >>> round(spearman_brown(0.59, 13), 3)
    0.949
    """
    r, k = _check_r(icc1), real_argument(k, "k", low=0, low_open=True)
    return k * r / (1 + (k - 1) * r)


def raters_needed(icc1: float, target: float) -> int:
    """Smallest number of raters k whose mean reaches reliability ``target`` (inverse Spearman-Brown).

    k = ceil(target (1 - r) / (r (1 - target))).

    >>> raters_needed(0.59, 0.95)
    14
    """
    r = _check_r(icc1)
    target = probability_argument(target, "target")
    if r <= 0:
        raise InputError(f"with single-rating reliability {r} <= 0, no number of raters reaches {target}")
    if r >= target:
        return 1
    k = (target / (1 - target)) * ((1 - r) / r) if r > 1e-300 else np.inf
    if not k <= MAX_RATERS:
        raise InputError(f"with single-rating reliability {r:g}, reaching {target:g} would take more than "
                         f"{MAX_RATERS:.0e} raters; the reliability is too small for a useful answer")
    k_int = int(np.ceil(k - 1e-12))
    return max(k_int, 1)


#: Smallest alpha (1 - confidence level) accepted: below it the F quantiles of the intervals are infinite.
MIN_ALPHA = 1e-9
#: Largest number of raters :func:`raters_needed` answers with (beyond it the answer is "too many").
MAX_RATERS = 1e12


def _check_r(r) -> float:
    return real_argument(r, "icc1", low=-1, high=1, low_open=True)


# ----------------------------------------------------------------------------
# Krippendorff's alpha
# ----------------------------------------------------------------------------
_LEVELS = ("nominal", "ordinal", "interval", "ratio")


def krippendorff_alpha(ratings, level: str = "interval") -> float:
    """Krippendorff's alpha for items x raters with missing values (NaN).

    alpha = 1 - D_o / D_e with the coincidence matrix
    o_ck = sum_u (number of c-k pairs in unit u) / (m_u - 1) over items with
    at least two ratings (Krippendorff 2011), n_c = sum_k o_ck, n = sum_c n_c,
    D_o = sum o_ck delta_ck^2 / n, D_e = sum n_c n_k delta_ck^2 / (n (n-1)), and
    metric ``delta^2``: nominal 1[c != k]; ordinal (sum_{g=c..k} n_g - (n_c + n_k)/2)^2;
    interval (c - k)^2; ratio ((c - k)/(c + k))^2.  The interval level uses
    the equivalent sums-of-squares form (no V x V matrix), so continuous
    aggregates are cheap.

    >>> import numpy as np
    >>> round(krippendorff_alpha([[1, 1], [2, 2], [3, 3], [4, 3]], "interval"), 4)   # 8/9
    0.8889
    """
    if level not in _LEVELS:
        raise InputError(f"level must be one of {', '.join(_LEVELS)}, not {level!r}")
    x = _as_matrix(ratings)
    if x.shape[1] < 2:
        raise InputError("ratings: at least 2 raters (columns) are needed")
    m = (~np.isnan(x)).sum(axis=1)
    x = x[m >= 2]
    m = m[m >= 2]
    if x.shape[0] < 1 or m.sum() < 2:
        raise InputError("ratings: no item has two or more ratings, so alpha is undefined")
    n = m.sum()
    if level == "interval":
        means = np.nansum(x, axis=1) / m
        ss_u = np.nansum((x - means[:, None]) ** 2, axis=1)
        d_o = np.sum(2 * m * ss_u / (m - 1)) / n
        grand = np.nansum(x) / n
        d_e = 2 * np.nansum((x - grand) ** 2) / (n - 1)
    else:
        values = x[~np.isnan(x)]
        if level == "ratio" and np.any(values < 0):
            raise InputError("ratio-level alpha needs non-negative ratings")
        uniq, codes = np.unique(values, return_inverse=True)
        V = uniq.size
        rows = np.repeat(np.arange(x.shape[0]), m)
        counts = np.zeros((x.shape[0], V))
        np.add.at(counts, (rows, codes), 1.0)
        weight = 1.0 / (m - 1)
        o = (counts * weight[:, None]).T @ counts - np.diag((counts * weight[:, None]).sum(axis=0))
        n_c = o.sum(axis=1)
        if level == "nominal":
            delta2 = 1.0 - np.eye(V)
        elif level == "ordinal":
            cum = np.concatenate([[0.0], np.cumsum(n_c)])
            lo, hi = np.minimum.outer(np.arange(V), np.arange(V)), np.maximum.outer(np.arange(V), np.arange(V))
            delta2 = (cum[hi + 1] - cum[lo] - (n_c[:, None] + n_c[None, :]) / 2) ** 2
        else:  # ratio
            s = uniq[:, None] + uniq[None, :]
            with np.errstate(invalid="ignore", divide="ignore"):
                delta2 = np.where(s == 0, 0.0, ((uniq[:, None] - uniq[None, :]) / s) ** 2)
        d_o = np.sum(o * delta2) / n
        d_e = np.sum(np.outer(n_c, n_c) * delta2) / (n * (n - 1))
    if d_e == 0:
        raise InputError("all ratings are equal: Krippendorff's alpha is undefined (no expected disagreement)")
    return float(1 - d_o / d_e)


def _pearson_pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson's r between two complete vectors, vectorised over leading axes (..., items)."""
    a0 = a - a.mean(axis=-1, keepdims=True)
    b0 = b - b.mean(axis=-1, keepdims=True)
    return np.sum(a0 * b0, axis=-1) / np.sqrt(np.sum(a0**2, axis=-1) * np.sum(b0**2, axis=-1))


def _alpha_interval_pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Interval alpha between two complete rating vectors, vectorised over leading axes (..., items)."""
    n = 2 * a.shape[-1]
    d_o = np.sum((a - b) ** 2, axis=-1) * 2 / n  # sum_u 2*m*SS_u/(m-1) with m=2, SS_u=(a-b)^2/2
    both = np.concatenate([a, b], axis=-1)
    d_e = 2 * np.sum((both - both.mean(axis=-1, keepdims=True)) ** 2, axis=-1) / (n - 1)
    return 1 - d_o / d_e


_COEFFICIENTS = ("alpha_interval", "alpha_ordinal", "alpha_nominal", "alpha_ratio", "pearson")


def _pair_reliability(a: np.ndarray, b: np.ndarray, coefficient: str, what: str) -> np.ndarray:
    """The reliability between the two aggregate vectors of every replicate (*what* names them in a refusal).

    A replicate whose vectors have no spread has no reliability: it is refused in words rather than averaged
    into the result as NaN (it happens with very few items, or one rating far larger than all others).
    """
    if coefficient in ("alpha_interval", "pearson"):
        with np.errstate(invalid="ignore", divide="ignore"):  # no spread: NaN, refused below
            out = _alpha_interval_pairs(a, b) if coefficient == "alpha_interval" else _pearson_pairs(a, b)
        bad = int(np.count_nonzero(~np.isfinite(out)))
        if bad:
            raise InputError(f"reliability is undefined in {bad} of {out.size} {what}: the resampled item means "
                             "had no spread (too few items, or one rating dwarfing the others)")
        return out
    level = coefficient.split("_", 1)[1]
    flat_a, flat_b = a.reshape(-1, a.shape[-1]), b.reshape(-1, b.shape[-1])
    out = np.array([krippendorff_alpha(np.column_stack([p, q]), level) for p, q in zip(flat_a, flat_b)])
    return out.reshape(a.shape[:-1])


# ----------------------------------------------------------------------------
# k-rater reliability
# ----------------------------------------------------------------------------
@dataclass
class KRRBootstrapResult:
    """Bootstrap k-rater reliability (Wong & Paritosh 2022, section 5.1).

    ``estimate`` is the mean of the replicate reliabilities; ``ci_low``,
    ``ci_high`` the percentile interval at level ``ci_level``.
    """

    estimate: float
    ci_low: float
    ci_high: float
    replicates: np.ndarray = field(repr=False)
    k: int | str
    n_boot: int
    coefficient: str
    seed: int
    ci_level: float

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"statistic": ["kRR (bootstrap mean)", "CI low", "CI high", "k", "replicates", "coefficient", "seed"],
                             "value": [self.estimate, self.ci_low, self.ci_high, self.k, self.n_boot, self.coefficient, self.seed]})


def _padded(x: np.ndarray):
    """Per item: its non-missing ratings left-aligned (NaN padding) and their count."""
    mask = ~np.isnan(x)
    counts = mask.sum(axis=1)
    order = np.argsort(~mask, axis=1, kind="stable")
    return np.take_along_axis(x, order, axis=1), counts


def krr_bootstrap(ratings, k: int | None = None, n_boot: int = 1000, seed: int = 0,
                  coefficient: str = "alpha_interval", alpha: float = 0.05) -> KRRBootstrapResult:
    """Bootstrap k-rater reliability of the item means (Wong & Paritosh 2022, section 5.1).

    Each replicate resamples, within every item and independently twice, its
    ratings with replacement at the same size (``k=None``: each item's own
    number of ratings; or ``k`` ratings per item), averages each resample, and
    measures the reliability between the two aggregate vectors
    (``coefficient``: ``alpha_interval`` (default, as in the paper),
    ``alpha_ordinal``, ``alpha_nominal``, ``alpha_ratio`` or ``pearson``).
    Vectorised over replicates for ``alpha_interval`` and ``pearson``.

    Wong & Paritosh (2022), Table 1, report 0.953 for WordSim-353 with 13 raters
    and 100 bootstrap samples.
    """
    if coefficient not in _COEFFICIENTS:
        raise InputError(f"coefficient must be one of {', '.join(_COEFFICIENTS)}, not {coefficient!r}")
    n_boot = whole_argument(n_boot, "n_boot", low=2)
    seed = seed_argument(seed)
    alpha = real_argument(alpha, "alpha", low=MIN_ALPHA, high=1, high_open=True)
    k = None if k is None else whole_argument(k, "k")
    x = _as_matrix(ratings)
    _check_size(x)
    if np.nanmax(x) == np.nanmin(x):
        raise InputError("all ratings are equal: reliability is undefined")
    padded, counts = _padded(x)
    size = counts if k is None else np.full(len(counts), k)
    kmax = int(size.max())
    # index (4 bytes), drawn rating (8) and masked copy (8) per resampled rating, plus the uniform draws (8)
    check_memory(28.0 * n_boot * 2 * x.shape[0] * kmax,
                 f"{n_boot} bootstrap replicates of {x.shape[0]} items x {kmax} ratings", "lower n_boot (or k)")
    rng = np.random.default_rng(seed)
    n_items = x.shape[0]
    shape = (int(n_boot), 2, n_items, kmax)
    width = padded.shape[1]
    if np.all(counts == counts[0]):  # balanced: integer draws straight into the flat array
        idx = rng.integers(0, counts[0], size=shape, dtype=np.int32)
    else:
        idx = np.floor(rng.random(shape) * counts[None, None, :, None]).astype(np.int32)
    idx += (np.arange(n_items, dtype=np.int32) * width)[None, None, :, None]
    draws = padded.ravel()[idx]
    if np.all(size == kmax):
        means = draws.mean(axis=3)
    else:
        used = np.arange(kmax)[None, None, None, :] < size[None, None, :, None]
        means = np.where(used, draws, 0.0).sum(axis=3) / size[None, None, :]
    reps = _pair_reliability(means[:, 0, :], means[:, 1, :], coefficient, "bootstrap replicates")
    lo, hi = np.quantile(reps, [alpha / 2, 1 - alpha / 2])
    return KRRBootstrapResult(float(reps.mean()), float(lo), float(hi), reps, "each item's own" if k is None else int(k),
                              int(n_boot), coefficient, seed, 1 - alpha)


def krr_empirical(rep1, rep2, k=None, n_draws: int = 100, seed: int = 0,
                  coefficient: str = "alpha_interval") -> pd.DataFrame:
    """Empirical k-rater reliability from two replications (Wong & Paritosh 2022, section 4.2).

    For each k: draw k rating columns at random (without replacement) from each
    replication, average them per item, and measure the reliability between
    the two mean vectors; repeat ``n_draws`` times.  ``k=None`` gives
    k = 1..K with K the smaller number of columns.  Replications must be
    complete (no missing cells) and describe the same items in the same order.

    Returns a DataFrame with columns ``k, kRR, sd, n_draws``.
    """
    a, b = _as_matrix(rep1, name="replication 1"), _as_matrix(rep2, name="replication 2")
    if a.shape[0] != b.shape[0]:
        raise InputError(f"the replications rate different numbers of items ({a.shape[0]} and {b.shape[0]})")
    for name, m in (("replication 1", a), ("replication 2", b)):
        _check_size(m, name)
        if np.isnan(m).any():
            i, j = np.argwhere(np.isnan(m))[0]
            raise InputError(f"{name}: item {i + 1}, column {j + 1} is missing; the empirical method needs complete replications")
    K = min(a.shape[1], b.shape[1])
    n_draws, seed = whole_argument(n_draws, "n_draws"), seed_argument(seed)
    ks = list(range(1, K + 1)) if k is None else (
        [whole_argument(k, "k", high=K)] if np.isscalar(k) else [whole_argument(v, "k", high=K) for v in k])
    # per k: two (items x draws x k) gathers and their random keys
    check_memory(8.0 * n_draws * (2 * a.shape[0] * max(ks) + a.shape[1] + b.shape[1]),
                 f"{n_draws} draws of {a.shape[0]} items x {max(ks)} columns", "lower n_draws")
    rng = np.random.default_rng(seed)
    rows = []
    for kk in ks:
        # random column subsets for every draw at once: argsort of uniform keys gives permutations
        pa = np.argsort(rng.random((n_draws, a.shape[1])), axis=1)[:, :kk]
        pb = np.argsort(rng.random((n_draws, b.shape[1])), axis=1)[:, :kk]
        ma = a[:, pa].mean(axis=2).T  # (draws, items)
        mb = b[:, pb].mean(axis=2).T
        vals = _pair_reliability(ma, mb, coefficient, f"draws of {kk} column(s)")
        rows.append({"k": kk, "kRR": float(vals.mean()), "sd": float(vals.std(ddof=1)) if n_draws > 1 else 0.0,
                     "n_draws": n_draws})
    return pd.DataFrame(rows)


def krr_curve(ratings, replication=None, k_max: int | None = None, sb_ratings: int = 2, seed: int = 0,
              n_draws: int = 100) -> pd.DataFrame:
    """The data behind Wong & Paritosh (2022), Figure 1: reliability of k-rater means for k = 1..k_max.

    Columns: ``k``; ``empirical`` (:func:`krr_empirical` between ``ratings``
    and ``replication``, if given); ``icc_k`` (analytical ICC(k) from the
    one-way variance components of all ratings, Appendix A); ``spearman_brown``
    (Eq. 1 applied to ICC(1) computed from only ``sb_ratings`` randomly drawn
    ratings per item, as the paper does to test its predictive accuracy).
    """
    x = _as_matrix(ratings)
    _check_size(x)
    sb_ratings, seed, n_draws = whole_argument(sb_ratings, "sb_ratings", low=2), seed_argument(seed), \
        whole_argument(n_draws, "n_draws")
    K = whole_argument(k_max, "k_max", high=EXCEL_MAX_ROWS - 1, why="one row per k on a sheet") if k_max is not None \
        else int((~np.isnan(x)).sum(axis=1).max())
    msb, msw, _, _, k0, _ = _one_way_unbalanced(x)
    var_item = (msb - msw) / k0
    rng = np.random.default_rng(seed)
    padded, counts = _padded(x)
    if counts.min() < sb_ratings:
        raise InputError(f"every item needs at least {sb_ratings} ratings for the Spearman-Brown column")
    pick = np.argsort(rng.random(padded.shape) + (np.arange(padded.shape[1])[None, :] >= counts[:, None]), axis=1)[:, :sb_ratings]
    icc1_small = icc(np.take_along_axis(padded, pick, axis=1), "ICC1")
    ks = np.arange(1, K + 1)
    out = pd.DataFrame({"k": ks,
                        "icc_k": var_item / (var_item + msw / ks),
                        "spearman_brown": ks * icc1_small / (1 + (ks - 1) * icc1_small)})  # Eq. 1, vectorised
    if replication is not None:
        emp = krr_empirical(x, replication, n_draws=n_draws, seed=seed)
        out = out.merge(emp[["k", "kRR"]].rename(columns={"kRR": "empirical"}), on="k", how="left")
        out = out[["k", "empirical", "icc_k", "spearman_brown"]]
    out.attrs["sb_icc1"] = icc1_small
    return out
