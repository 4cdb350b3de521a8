"""Continuous scores against a threshold (Stutz et al. 2023, Appendix A: Wikipedia toxicity, AVA aesthetics).

Each item's ratings are modelled as normal with unknown (mu, sigma^2) under a
normal-inverse-gamma prior: sigma^2 ~ InvGamma(a0, b0), mu | sigma^2 ~
N(m0, sigma^2 / k0).  The posterior is conjugate:
k_n = k0 + n, m_n = (k0 m0 + n xbar) / k_n, a_n = a0 + n/2,
b_n = b0 + SS/2 + k0 n (xbar - m0)^2 / (2 k_n).
Plausibilities are lambda = (P(y <= t), P(y > t)) for each posterior sample;
certainty follows eq. 2-4: the fraction of samples in which the more
frequent outcome is the likelier one (so it is at least 0.5).

Prior (the paper estimates it from the scores; these are the defaults):
m0 = mean of all ratings, k0 = 1 (one pseudo-rating), a0 = 2, and b0 = the
pooled within-item variance (so the prior mean of sigma^2 equals it).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import ndtr

from ..cells import check_memory, number_table_argument, real_argument, seed_argument, whole_argument
from ..errors import InputError

__all__ = ["threshold_certainty"]


#: Ratings and thresholds beyond +-1e150 are refused (their squared deviations must stay finite).
MAX_ABS_RATING = 1e150


def threshold_certainty(ratings, threshold: float, samples: int = 1000, seed: int = 0, prior_mean=None,
                        prior_count: float = 1.0, prior_shape: float = 2.0, prior_scale=None) -> pd.DataFrame:
    """Certainty that each item falls on its side of ``threshold`` (y <= t vs y > t).

    ``ratings``: items x raters (NaN = missing).  Returns a DataFrame with
    ``n``, ``mean``, ``p_below`` (posterior mean of P(y <= t)), ``outcome``
    ("<= t" or "> t", the more certain side) and ``certainty``.
    """
    x = number_table_argument(ratings, "ratings", "items x raters", "; blank = not rated")
    if np.any(np.abs(np.nan_to_num(x)) > MAX_ABS_RATING) or np.isinf(x).any():
        i, j = np.argwhere(~(np.abs(x) <= MAX_ABS_RATING) & ~np.isnan(x))[0]
        raise InputError(f"ratings: item {i + 1}, rater {j + 1} ({x[i, j]:g}) is out of range: ratings must lie "
                         f"within +-{MAX_ABS_RATING:g}", {"row": int(i), "column": int(j)})
    threshold = real_argument(threshold, "threshold", low=-MAX_ABS_RATING, high=MAX_ABS_RATING)
    samples, seed = whole_argument(samples, "samples"), seed_argument(seed)
    # gamma draws, sigma^2, mu, normal draws and P(y <= t): five items x samples arrays
    check_memory(40.0 * x.shape[0] * samples, f"{samples} samples for {x.shape[0]} items", "lower samples")
    n = (~np.isnan(x)).sum(axis=1)
    if np.any(n == 0):
        raise InputError(f"item {int(np.flatnonzero(n == 0)[0]) + 1} has no ratings")
    xbar = np.nansum(x, axis=1) / n
    ss = np.nansum((x - xbar[:, None]) ** 2, axis=1)
    m0 = float(np.nanmean(x)) if prior_mean is None else real_argument(prior_mean, "prior_mean", low=-MAX_ABS_RATING,
                                                                          high=MAX_ABS_RATING)
    prior_count = real_argument(prior_count, "prior_count", low=0, low_open=True)
    prior_shape = real_argument(prior_shape, "prior_shape", low=0, low_open=True)
    if prior_scale is not None:
        prior_scale = real_argument(prior_scale, "prior_scale", low=0, low_open=True)
    if prior_scale is None:
        dof = np.sum(n - 1)
        prior_scale = float(ss.sum() / dof) if dof > 0 and ss.sum() > 0 else 1.0
    if not (prior_count > 0 and prior_shape > 0 and prior_scale > 0):
        raise InputError("prior_count, prior_shape and prior_scale must be positive")
    kn = prior_count + n
    mn = (prior_count * m0 + n * xbar) / kn
    an = prior_shape + n / 2
    bn = prior_scale + ss / 2 + prior_count * n * (xbar - m0) ** 2 / (2 * kn)
    rng = np.random.default_rng(seed)
    M = int(samples)
    sigma2 = bn[:, None] / rng.gamma(an[:, None], 1.0, size=(len(n), M))
    mu = mn[:, None] + np.sqrt(sigma2 / kn[:, None]) * rng.standard_normal((len(n), M))
    p_below = ndtr((threshold - mu) / np.sqrt(sigma2))
    below_wins = (p_below >= 0.5).mean(axis=1)
    outcome = np.where(below_wins >= 0.5, f"<= {threshold:g}", f"> {threshold:g}")
    return pd.DataFrame({"n": n, "mean": xbar, "p_below": p_below.mean(axis=1), "outcome": outcome,
                         "certainty": np.maximum(below_wins, 1 - below_wins)})
