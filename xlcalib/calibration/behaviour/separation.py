"""Panel-level indices: how many levels of quality the panel can tell apart, and how often assessors agree.

Separation (Wright & Masters 1982, "Rating scale analysis", ch. 5; Linacre, FACETS and Winsteps manuals,
"Reliability and separation of measures"), for the objects' values and for the assessors' biases:

* RMSE = sqrt(mean of SE^2) -- the typical error of an estimate;
* true SD = sqrt(max(observed variance - RMSE^2, 0)), the observed variance taken over the elements as a
  population (ddof = 0, as Winsteps' "P.SD");
* separation G = true SD / RMSE; strata H = (4G + 1)/3 (Wright & Masters 2002, Rasch Meas. Trans. 16:3,
  p. 888: statistically distinct levels, three error widths apart); separation reliability R = G^2/(1 + G^2)
  = true variance / observed variance.

For *shrunk* estimates (posterior means of a random-effects model: the assessors' biases of the default
model, the values of the random-objects models) the observed variance is already the true variance *less*
the error (law of total variance), so true variance = observed variance + RMSE^2 and R = observed variance /
true variance; G = sqrt(R / (1 - R)) and H follow as above.  Which case applies is in the table's ``basis``.

"Fixed (all same)" chi-square (FACETS): ``sum (m_i - m_w)^2 / SE_i^2`` on n - 1 degrees of freedom, m_w the
SE^-2-weighted mean: do the elements differ at all?  For objects, a high separation is what a panel needs
(it can rank them); for assessors, a low one is what it hopes for (they are interchangeable).

Exact agreement (FACETS, "inter-rater agreement opportunities"): over every pair of reads of the same object,
the share giving the same score, against the share the model expects,
``sum_k P_i(k) P_j(k)`` with ``P_i(k)`` the probability that read i lands in score category k under the fitted
model (normal around its fitted score, SD sqrt(w/c - step^2/12): the latent spread without the rounding to
categories), the lowest and highest categories taking the tails.  Defined only when the scores lie on a grid
(whole points, halves ...).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...errors import InputError
from ..panel.resolution import score_step
from ..panel.resolution import rounding_variance

__all__ = ["separation_index", "separation_table", "exact_agreement", "MAX_CATEGORIES"]

#: More categories than this: the scores are treated as continuous (no exact agreement).
MAX_CATEGORIES = 201


def separation_index(measures, se, shrunk: bool = False) -> dict:
    """Separation G, strata H, reliability R, true SD, RMSE and the fixed chi-square of one set of estimates.

    ``shrunk``: the estimates are posterior means (see the module docstring).

    Examples
    --------
    Winsteps' manual, Table 27.3 (14 items): P.SD 3.48 and model RMSE .74 give true SD 3.40, separation 4.59,
    reliability .95 (4.60 from the two printed, rounded figures).

    >>> import numpy as np
    >>> m = np.linspace(-1, 1, 14); m = m / m.std() * 3.48
    >>> s = separation_index(m, np.full(14, 0.74))
    >>> round(s["true_sd"], 2), round(s["separation"], 1), round(s["reliability"], 2), round(s["strata"], 2)
    (3.4, 4.6, 0.95, 6.46)
    """
    from scipy.special import chdtrc

    m = np.asarray(measures, dtype=float)
    se = np.asarray(se, dtype=float)
    ok = np.isfinite(m) & np.isfinite(se) & (se > 0)
    m, se = m[ok], se[ok]
    n = int(m.size)
    nan = float("nan")
    if n < 2:
        return {"n": n, "observed_sd": nan, "rmse": nan, "true_sd": nan, "separation": nan, "strata": nan,
                "reliability": nan, "chi_square": nan, "df": max(n - 1, 0), "p": nan}
    observed = float(np.var(m))
    mse = float(np.mean(se**2))
    true_var = observed + mse if shrunk else max(observed - mse, 0.0)
    reliability = (observed / true_var if shrunk else true_var / observed) if true_var > 0 and observed > 0 else 0.0
    reliability = min(reliability, 1.0)
    G = float(np.sqrt(reliability / (1.0 - reliability))) if reliability < 1 else float("inf")
    weights = 1.0 / se**2
    centre = float(weights @ m / weights.sum())
    chi2 = float(weights @ (m - centre) ** 2)
    return {"n": n, "observed_sd": float(np.sqrt(observed)), "rmse": float(np.sqrt(mse)),
            "true_sd": float(np.sqrt(true_var)), "separation": G, "strata": (4.0 * G + 1.0) / 3.0,
            "reliability": float(reliability), "chi_square": chi2, "df": n - 1, "p": float(chdtrc(n - 1, chi2))}


def _words(kind: str, s: dict) -> str:
    if not np.isfinite(s["separation"]):
        return "too few to judge"
    H = s["strata"]
    if kind == "objects":
        return (f"the panel can tell about {H:.1f} levels of quality apart (reliability {s['reliability']:.2f}: "
                + ("enough to rank the objects" if s["reliability"] >= 0.8 else
                   "enough to sort objects into broad bands, not to rank them finely" if H >= 2 else
                   "too little to rank the objects: most differences are within their error") + ")")
    if s["p"] < 0.05:
        return (f"the assessors differ measurably in stringency (about {H:.1f} distinguishable levels; "
                f"test of no difference p = {s['p']:.2g}, technical: fixed chi-square): calibration matters")
    return (f"the assessors cannot be told apart in stringency (test of no difference p = {s['p']:.2g}, technical: "
            "fixed chi-square): they are "
            "interchangeable as far as the data show")


def separation_table(result) -> pd.DataFrame:
    """Separation, strata and reliability of the objects' values and of the assessors' biases (module docstring).

    Rows ``objects`` and ``assessors``; columns n, observed_sd, rmse, true_sd, separation, strata, reliability,
    chi_square, df, p, basis (plain estimates or posterior means), in_words.
    """
    if result.stats.get("n_components", 1) > 1 and any(c in result.values for c in ("component",)):
        raise InputError("the panel was fitted per component: its values sit on different scales, so one "
                         "separation cannot be computed (calibrate the whole panel, or each group on its own)")
    lam = max((part.posterior.lam for part in result.components), default=0.0)
    shrunk_objects = lam > 0
    shrunk_biases = result.stats.get("sigma_b") is not None and not isinstance(result.stats.get("sigma_b"), list)
    return separation_rows((("objects", result.values, "value", shrunk_objects),
                            ("assessors", result.biases, "bias", shrunk_biases)), _words)


def separation_rows(facets, words) -> pd.DataFrame:
    """The separation table of *facets* -- (facet, table, column, shrunk) each, the table holding the estimates in
    *column* and their ``se`` -- with each row's basis and *words(facet, row)*: one table for the linear and the
    ordinal models (their words differ: stringency / severity)."""
    rows = {}
    for kind, table, col, shrunk in facets:
        s = separation_index(table[col].to_numpy(), table["se"].to_numpy(), shrunk)
        s["basis"] = ("posterior means (shrunk): true variance = observed + error" if shrunk else
                      "estimates: true variance = observed - error")
        s["in_words"] = words(kind, s)
        rows[kind] = s
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("facet")


def _grid(scores: np.ndarray):
    """(step, lowest, number of categories) when every score lies on a grid (:func:`..panel.resolution.score_step`,
    the grid the rounding variance is read from too), else None."""
    step = score_step(scores)
    if step is None:
        return None
    low = float(np.min(scores))
    n = int(np.round((float(np.max(scores)) - low) / step)) + 1
    return (step, low, n) if n <= MAX_CATEGORIES else None


#: A grid point no read uses is taken as no option of the form when the reads number at least this many per grid point.
READS_PER_UNUSED_POINT = 10


def _categories(scores: np.ndarray) -> np.ndarray | None:
    """The score categories: the grid's points between the lowest and highest score, or -- when the scores keep to
    a few of them at uneven steps (a form's options 1, 3, 6, 8) and there are reads enough that an unused point is
    no option -- the scores present; None off every grid."""
    grid = _grid(scores)
    if grid is None:
        return None
    step, low, n = grid
    points = low + step * np.arange(n)
    present = np.unique(np.round((scores - low) / step).astype(np.intp))
    gaps = np.diff(present)
    if 3 <= present.size < n and gaps.size and gaps.max() > gaps.min() and scores.size >= READS_PER_UNUSED_POINT * n:
        return points[present]
    return points


def _category_probabilities(mean: np.ndarray, sd: np.ndarray, points: np.ndarray) -> np.ndarray:
    """P(read in category k), reads x categories: each category the judgements nearer to its point than to any
    other; the end categories take the tails."""
    from scipy.special import ndtr

    edges = np.concatenate([[-np.inf], 0.5 * (points[1:] + points[:-1]), [np.inf]])
    cdf = ndtr((edges[None, :] - mean[:, None]) / sd[:, None])
    cdf[:, 0], cdf[:, -1] = 0.0, 1.0
    return np.diff(cdf, axis=1)


def exact_agreement(result, geometry) -> tuple[dict, pd.DataFrame]:
    """Exact agreement between reads of the same object: observed and expected, for the panel and per assessor.

    ``geometry``: the result's :func:`~xlcalib.calibration.behaviour.fitstats.read_geometry`.  Returns (panel figures,
    per-assessor table with opportunities, observed %, expected %).  Scores not on a grid: NaNs and a note.
    """
    res = result.residuals
    scores = res["score"].to_numpy(dtype=float)
    A = len(result.biases)
    points = _categories(scores)
    n_reads = np.bincount(geometry.obj, minlength=len(result.values))
    pairs_per_read = n_reads[geometry.obj] - 1
    per = pd.DataFrame(index=result.biases.index)
    if points is None:
        nan = float("nan")
        per["opportunities"] = np.bincount(geometry.assessor, pairs_per_read, A).astype(np.intp)
        per["observed"], per["expected"] = nan, nan
        return {"pairs": int(pairs_per_read.sum() // 2), "observed": nan, "expected": nan,
                "note": "the scores do not lie on a grid of categories: exact agreement is not defined"}, per
    n = points.size
    rounding = rounding_variance(scores, points) if n > 2 else rounding_variance(scores)
    step = float(np.min(np.diff(points))) if n > 1 else 1.0
    gain = result.biases["gain"].to_numpy()[geometry.assessor] if "gain" in result.biases else 1.0
    # the read's noise SD in score units (a gain rescales it), less the rounding to categories
    sd = np.sqrt(np.maximum(geometry.noise / geometry.confidence * gain**2 - rounding, (0.05 * step) ** 2))
    P = _category_probabilities(res["fitted"].to_numpy(dtype=float), sd, points)
    O = len(result.values)
    S = np.zeros((O, n))
    np.add.at(S, geometry.obj, P)
    expected_read = np.einsum("ik,ik->i", P, S[geometry.obj] - P)  # expected agreements of read i with the others
    category = np.argmin(np.abs(scores[:, None] - points[None, :]), axis=1).astype(np.intp)
    same = pd.Series(1, index=pd.MultiIndex.from_arrays([geometry.obj, category])).groupby(level=[0, 1]).transform("size")
    observed_read = same.to_numpy() - 1
    opportunities = np.bincount(geometry.assessor, pairs_per_read, A).astype(np.intp)
    with np.errstate(invalid="ignore", divide="ignore"):
        per["opportunities"] = opportunities
        per["observed"] = np.bincount(geometry.assessor, observed_read, A) / opportunities
        per["expected"] = np.bincount(geometry.assessor, expected_read, A) / opportunities
    total = pairs_per_read.sum()
    panel = {"pairs": int(total // 2), "observed": float(observed_read.sum() / total) if total else float("nan"),
             "expected": float(expected_read.sum() / total) if total else float("nan"),
             "note": (f"score categories {points[0]:g} to {points[-1]:g} in steps of {step:g}"
                      if n < 2 or np.ptp(np.diff(points)) < 1e-9 else
                      f"score categories {', '.join(f'{p:g}' for p in points)} (the options the reads use)")}
    return panel, per
