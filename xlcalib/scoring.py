"""Scoring-engine evaluation metrics as defined by RSMTool (the RSMTool documentation, "Evaluation Metrics").

H = human score, M = system score, N = responses with numeric H and M.
Zero human scores are excluded by default (``exclude_zero=True``), as in
RSMTool.  Choices where the documentation leaves room:

* exact/adjacent agreement and Cohen's kappa are defined for *rounded*
  scores; non-integer scores are rounded (``np.rint``) for those three
  metrics only, and the result's ``rounded`` flag says so;
* R2 is ``sklearn.metrics.r2_score`` (the documentation says RSMTool computes it so):
  1 - sum (H - M)^2 / sum (H - mean H)^2;
* the pooled error variance for PRMSE with varying numbers of ratings is
  ``sum V_i (c_i - 1) / sum (c_i - 1)`` over responses with >= 2 ratings
  (the standard pooled estimator; with every response double-scored it is
  the documentation's ``sum (H - H2)^2 / (2 N)``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .agreement import MAX_CATEGORIES, table_agreement
from .cells import MAX_ABS_SCORE, check_memory, real_argument, whole_argument
from .errors import InputError

__all__ = [
    "evaluation_metrics",
    "standardized_mean_difference",
    "variance_of_errors",
    "true_score_variance",
    "mse_true",
    "prmse_true",
    "difference_of_standardized_means",
    "fairness_analyses",
    "human_human_agreement",
    "quadratic_weighted_kappa",
    "cohen_kappa",
]


def _vector(values, name: str) -> np.ndarray:
    arr = values.to_numpy() if isinstance(values, (pd.DataFrame, pd.Series)) else values
    arr = arr if isinstance(arr, np.ndarray) else np.asarray(arr, dtype=object)
    if arr.dtype == object and set(map(type, arr.ravel())) <= {float, int, type(None), np.float64, np.int64}:
        arr = arr.astype(float)  # plain numbers and None (missing): converted at once
    if arr.dtype.kind in "fiu":  # fast path: plain numbers (NaN = missing)
        out = arr.astype(float).ravel()
    else:  # text ("nan", "1e999", "5") and TRUE/FALSE are not scores; None and blank text are missing
        arr = arr.astype(object).ravel()
        out = np.empty(arr.size)
        for i, v in enumerate(arr):
            if v is None or (isinstance(v, str) and not v.strip()):
                out[i] = np.nan
                continue
            if isinstance(v, (str, bool, np.bool_)):
                raise InputError(f"{name}, row {i + 1}: {v!r} is not a number", {"row": i})
            try:
                out[i] = float(v)
            except (TypeError, ValueError):
                raise InputError(f"{name}, row {i + 1}: {v!r} is not a number", {"row": i}) from None
    if np.isinf(out).any():
        i = int(np.flatnonzero(np.isinf(out))[0])
        raise InputError(f"{name}, row {i + 1} is infinite", {"row": i})
    big = np.flatnonzero(np.abs(out) > MAX_ABS_SCORE)
    if big.size:
        i = int(big[0])
        raise InputError(f"{name}, row {i + 1}: {out[i]:g} is out of range (scores must lie within +-{MAX_ABS_SCORE:g})",
                         {"row": i})
    return out


def _pairs(human, system, exclude_zero: bool, names=("human", "system")):
    h, m = _vector(human, names[0]), _vector(system, names[1])
    if h.size != m.size:
        raise InputError(f"{names[0]} ({h.size}) and {names[1]} ({m.size}) scores differ in length")
    keep = ~(np.isnan(h) | np.isnan(m))
    if exclude_zero:
        keep &= h != 0
        if names[1].startswith("human"):
            keep &= m != 0
    return h[keep], m[keep]


def cohen_kappa(h, m) -> float | None:
    """Unweighted Cohen's kappa on integer scores shifted to the minimum, full category range (as the RSMTool
    documentation defines it), computed by :func:`xlcalib.agreement.table_agreement` (the one home of kappa).

    Categories that neither rater used add nothing to agreement or chance agreement, so the table of the used
    categories gives the same kappa as the full range (scores 0 and 1e6 stay cheap).  None when kappa is undefined
    (every score in one category) or when the scores take more than ``agreement.MAX_CATEGORIES`` distinct rounded
    values (kappa is for scores on a scale of categories; its table would not fit).
    """
    values, codes = np.unique(np.concatenate([np.rint(h), np.rint(m)]), return_inverse=True)
    q = values.size
    if q > MAX_CATEGORIES:
        return None
    codes = codes.astype(np.intp).ravel()
    table = np.bincount(codes[:len(h)] * q + codes[len(h):], minlength=q * q).reshape(q, q)
    kappa = float(table_agreement(table).loc["conger_kappa", "estimate"])
    return None if np.isnan(kappa) else kappa


def quadratic_weighted_kappa(h, m) -> float | None:
    """QWK = 2 Cov(M, H) / (Var(H) + Var(M) + (mean M - mean H)^2), population (ddof 0) moments.

    RSMTool's continuous form, for system scores that are not categories; it stays here because
    :mod:`xlcalib.agreement` is for categorical ratings.  On whole-number scores it equals Cohen's quadratic
    weighted kappa, ``agreement.conger_kappa(ratings, "quadratic")`` (tested).
    """
    h, m = np.asarray(h, float), np.asarray(m, float)
    denom = h.var() + m.var() + (m.mean() - h.mean()) ** 2
    if denom == 0:
        return None
    return float(2 * np.mean((h - h.mean()) * (m - m.mean())) / denom)


def _pearson(h, m) -> float | None:
    if h.size < 2 or h.std() == 0 or m.std() == 0:
        return None
    hc, mc = h - h.mean(), m - m.mean()
    return float(np.dot(hc / np.linalg.norm(hc), mc / np.linalg.norm(mc)))


def standardized_mean_difference(human, system, method: str = "unpooled", population_human_sd=None,
                                 population_system_sd=None, ddof: int = 1) -> float | None:
    """SMD between system and human scores.

    ``unpooled`` (default, RSMTool): (mean M - mean H) / sd H;
    ``pooled``: (mean M - mean H) / sqrt((sd H^2 + sd M^2)/2);
    ``williamson``: (mean M - mean H) / sqrt((pop sd H^2 + pop sd M^2)/2) with
    population SDs supplied (default: the sample SDs).  ``None`` when the
    denominator is 0.
    """
    h, m = _vector(human, "human"), _vector(system, "system")
    ddof = whole_argument(ddof, "ddof", low=0, high=max(h.size - 1, 0), why="fewer than the number of scores")
    sd_h, sd_m = h.std(ddof=ddof), m.std(ddof=ddof)
    if method == "unpooled":
        denom = sd_h
    elif method == "pooled":
        denom = np.sqrt((sd_h**2 + sd_m**2) / 2)
    elif method == "williamson":
        ph = sd_h if population_human_sd is None else real_argument(population_human_sd, "population_human_sd", low=0)
        pm = sd_m if population_system_sd is None else real_argument(population_system_sd, "population_system_sd", low=0)
        denom = np.sqrt((ph**2 + pm**2) / 2)
    else:
        raise InputError(f"method must be unpooled, pooled or williamson, not {method!r}")
    if not denom > 0:
        return None
    return float((m.mean() - h.mean()) / denom)


def evaluation_metrics(human, system, exclude_zero: bool = True) -> pd.Series:
    """RSMTool's primary accuracy metrics of system scores against human scores.

    Returns a Series: ``N``, ``exact_agreement`` (%), ``adjacent_agreement``
    (% with |M - H| <= 1), ``kappa`` (Cohen, on rounded scores), ``qwk``
    (continuous formula, ddof 0), ``r`` (Pearson; None if a variance is 0),
    ``smd`` (unpooled), ``mse``, ``r2``.

    >>> evaluation_metrics([1, 2, 3, 4], [1, 2, 4, 4])[["N", "exact_agreement", "adjacent_agreement"]].tolist()
    [4, 75.0, 100.0]
    """
    h, m = _pairs(human, system, exclude_zero)
    if h.size == 0:
        raise InputError("no responses with numeric human and system scores" + (" (zero human scores excluded)" if exclude_zero else ""))
    ss_tot = np.sum((h - h.mean()) ** 2)
    out = pd.Series({
        **_agreement(h, m, smd_method="unpooled"),
        "mse": float(np.mean((h - m) ** 2)),
        "r2": float(1 - np.sum((h - m) ** 2) / ss_tot) if h.size > 1 and ss_tot > 0 else None,
    }, dtype=object)
    out.attrs["rounded"] = bool(np.any(np.rint(h) != h) or np.any(np.rint(m) != m))
    return out


def _agreement(a: np.ndarray, b: np.ndarray, smd_method: str) -> dict:
    """The metrics shared by system-human and human-human evaluation (agreement on rounded scores)."""
    ar, br = np.rint(a), np.rint(b)
    return {
        "N": int(a.size),
        "exact_agreement": float(np.mean(ar == br) * 100),
        "adjacent_agreement": float(np.mean(np.abs(ar - br) <= 1) * 100),
        "kappa": cohen_kappa(ar, br),
        "qwk": quadratic_weighted_kappa(a, b),
        "r": _pearson(a, b),
        "smd": standardized_mean_difference(a, b, smd_method) if a.size > 1 else None,
    }


def _human_matrix(human_matrix, exclude_zero: bool = False) -> np.ndarray:
    if isinstance(human_matrix, pd.DataFrame):
        x = human_matrix.to_numpy(dtype=float)
    else:
        x = np.array(human_matrix, dtype=object)
        if x.ndim == 1:
            x = x[:, None]
        x = np.array([[np.nan if (v is None or (isinstance(v, str) and not v.strip())) else v for v in row] for row in x],
                     dtype=object)
        if any(isinstance(v, (str, bool, np.bool_)) for v in x.ravel()):  # "nan", "1e999", TRUE are not scores
            raise InputError("human scores must be numbers (blank = not rated); found text or TRUE/FALSE")
        try:
            x = x.astype(float)
        except (TypeError, ValueError):
            raise InputError("human scores must be numbers (blank = not rated)") from None
    if np.any(np.isinf(x)) or np.any(np.abs(np.nan_to_num(x)) > MAX_ABS_SCORE):
        raise InputError(f"human scores must be finite numbers within +-{MAX_ABS_SCORE:g}")
    if exclude_zero:
        x = np.where(x == 0, np.nan, x)
    return x


def variance_of_errors(human_matrix) -> float | None:
    """Pooled variance of human rater errors from responses with >= 2 ratings (None if there are none).

    V_i = within-response variance (ddof 1); sigma_e^2 = sum V_i (c_i - 1) / sum (c_i - 1).
    """
    x = _human_matrix(human_matrix)
    c = (~np.isnan(x)).sum(axis=1)
    multi = c >= 2
    if not multi.any():
        return None
    xm = x[multi]
    mean = np.nanmean(xm, axis=1)
    ss = np.nansum((xm - mean[:, None]) ** 2, axis=1)  # = V_i (c_i - 1)
    return float(ss.sum() / (c[multi] - 1).sum())


def true_score_variance(human_matrix, variance_errors: float | None = None) -> float | None:
    """sigma_T^2 = (sum c_i (Hbar_i - Hbar)^2 - (N - 1) sigma_e^2) / (c. - sum c_i^2 / c.)."""
    x = _human_matrix(human_matrix)
    c = (~np.isnan(x)).sum(axis=1)
    x, c = x[c > 0], c[c > 0]
    ve = variance_of_errors(x) if variance_errors is None else variance_errors
    if ve is None:
        return None
    hbar_i = np.nanmean(x, axis=1)
    total = c.sum()
    hbar = np.nansum(x) / total
    N = len(c)
    return float((np.sum(c * (hbar_i - hbar) ** 2) - (N - 1) * ve) / (total - np.sum(c**2) / total))


def mse_true(system, human_matrix, variance_errors: float | None = None) -> float | None:
    """MSE(T|M) = (sum c_i (Hbar_i - M_i)^2 - N sigma_e^2) / c.."""
    x = _human_matrix(human_matrix)
    m = _vector(system, "system")
    if m.size != x.shape[0]:
        raise InputError(f"system scores ({m.size}) and human score rows ({x.shape[0]}) differ in length")
    c = (~np.isnan(x)).sum(axis=1)
    keep = (c > 0) & ~np.isnan(m)
    x, c, m = x[keep], c[keep], m[keep]
    ve = variance_of_errors(x) if variance_errors is None else variance_errors
    if ve is None:
        return None
    return float((np.sum(c * (np.nanmean(x, axis=1) - m) ** 2) - len(c) * ve) / c.sum())


def prmse_true(system, human_matrix, variance_errors: float | None = None) -> float | None:
    """PRMSE = 1 - MSE(T|M) / sigma_T^2: how well system scores predict *true* human scores.

    ``human_matrix``: responses x ratings (NaN/None = missing), any number of
    ratings per response.  None when no response has two ratings (the error
    variance is then unknown), unless ``variance_errors`` is given.
    """
    x = _human_matrix(human_matrix)
    ve = variance_of_errors(x) if variance_errors is None else variance_errors
    if ve is None:
        return None
    var_t = true_score_variance(x, ve)
    mse = mse_true(system, x, ve)
    if var_t is None or mse is None or var_t <= 0:
        return None
    return float(1 - mse / var_t)


def difference_of_standardized_means(human, system, groups=None, population_human_mean=None,
                                     population_system_mean=None, population_human_sd=None,
                                     population_system_sd=None):
    """DSM: mean over responses of z_M - z_H, standardised with whole-set (population) means and SDs.

    With ``groups``, returns a Series of DSM per group (whole-set statistics
    from all responses, as RSMTool does); otherwise one number.
    """
    h, m = _vector(human, "human"), _vector(system, "system")
    if h.size != m.size:
        raise InputError("human and system scores differ in length")
    mh = h.mean() if population_human_mean is None else population_human_mean
    mm = m.mean() if population_system_mean is None else population_system_mean
    sh = h.std(ddof=1) if population_human_sd is None else population_human_sd
    sm = m.std(ddof=1) if population_system_sd is None else population_system_sd
    if not (sh > 0 and sm > 0):
        return None
    diff = (m - mm) / sm - (h - mh) / sh
    if groups is None:
        return float(diff.mean())
    g = pd.Series(np.asarray(groups, dtype=object).ravel())
    if len(g) != h.size:
        raise InputError("groups and scores differ in length")
    return pd.Series(diff).groupby(g.to_numpy(), sort=True).mean().rename("DSM")


def _r2(y: np.ndarray, X: np.ndarray) -> float:
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    resid = y - X @ beta
    tss = np.sum((y - y.mean()) ** 2)
    return float(1 - resid @ resid / tss) if tss > 0 else float("nan")


def fairness_analyses(human, system, groups) -> pd.DataFrame:
    """The three Loukina, Madnani & Zechner (2019) fairness measures, as percentages of variance.

    * overall score accuracy: R2 of (M - H)^2 ~ group;
    * overall score difference: R2 of (M - H) ~ group;
    * conditional score difference: R2 of (M - H) ~ group + H minus R2 of (M - H) ~ H.

    Returns measure, percent of variance explained by group membership, and
    the p-value of the F test for the group terms.
    """
    from scipy import stats

    h, m = _vector(human, "human"), _vector(system, "system")
    g = pd.Series(np.asarray(groups, dtype=object).ravel())
    if not (len(g) == h.size == m.size):
        raise InputError("human, system and groups differ in length")
    check_memory(8.0 * h.size * 3 * g.nunique(), f"{h.size} responses in {g.nunique()} groups", "use fewer groups")
    dummies = pd.get_dummies(g, drop_first=True, dtype=float).to_numpy()
    if dummies.shape[1] == 0:
        raise InputError("fairness analyses need at least two groups")
    n, k = h.size, dummies.shape[1]
    one = np.ones((n, 1))
    err = m - h
    rows = []
    for name, y, base in (("overall score accuracy", err**2, one), ("overall score difference", err, one),
                          ("conditional score difference", err, np.hstack([one, h[:, None]]))):
        r2_base = _r2(y, base) if base.shape[1] > 1 else 0.0
        full = np.hstack([base, dummies])
        r2_full = _r2(y, full)
        df2 = n - full.shape[1]
        f = ((r2_full - r2_base) / k) / ((1 - r2_full) / df2) if df2 > 0 and r2_full < 1 else np.nan
        rows.append((name, 100 * (r2_full - r2_base), float(stats.f.sf(f, k, df2)) if np.isfinite(f) else np.nan))
    return pd.DataFrame(rows, columns=["measure", "percent_variance", "p_value"])


def human_human_agreement(h1, h2, exclude_zero: bool = True) -> pd.Series:
    """RSMTool's consistency block between two human raters (SMD pooled)."""
    a, b = _pairs(h1, h2, exclude_zero, names=("human 1", "human 2"))
    if a.size == 0:
        raise InputError("no responses with two numeric human scores")
    return pd.Series(_agreement(a, b, smd_method="pooled"), dtype=object)
