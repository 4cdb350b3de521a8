"""Each read against what the rest of the panel predicts for it, and the fit statistics built from that.

The residual, and why it is not FACETS' own.  FACETS compares a read x with its model expectation at the
estimated measures, z = (x - E) / sqrt(W); with 3-5 reads per object the object's measure is fitted largely to
the very read being judged, so z^2 averages well below 1 (about 1 - h, h the read's leverage) and a
mean-square of 1 no longer means "as the model expects".  Here each read is compared with its *leave-one-out
predictive distribution*: the object's posterior from its other reads (the quadrature posterior with this
read's likelihood divided out) carried through the read's category probabilities,

    P(x_r = k | other reads) = sum_q p_q^(-r) P_k(theta_q - beta_a).

Its variance has two parts: the category variance the model gives a read at a known measure, W_r = E[V(theta)]
(the information of the read, FACETS' W), and the uncertainty of the measure from the other reads,
U_r = Var[E(theta)]; the read's residual e_r = x_r - E_r (E_r the predictive mean) has E[e_r^2] = W_r + U_r when
the model holds.  So

* ``z_r = e_r / sqrt(W_r + U_r)``, the standardised residual shown per read, is N(0, 1)-like under the model
  whatever the number of reads;
* each read's contribution to a mean-square is ``(e_r^2 - U_r) / W_r``, expectation 1 under the model: the
  measure's uncertainty is taken out of the numerator, so a mean-square estimates what FACETS' does -- the
  assessor's scatter of categories about the model's expectation over the model's W -- without its leverage
  and shrinkage distortions (a z^2 over W + U would pull every mean-square towards 1 by U/(W + U), about 20%
  with four reads per object, and hide erratic and central-tendency assessors).

Mean-squares of an element (assessor, object, category) over its reads (Wright & Masters 1982, pp. 100-101;
Linacre, FACETS manual, "Fit statistics"): outfit = mean of (e^2 - U)/W, unweighted; infit = sum (e^2 - U) /
sum W, information weighted.  Their standardisation is Wilson-Hilferty's, ZSTD = (MS^(1/3) - 1)(3/q) + q/3, with
the model variance of the mean-square from the predictive fourth central moment C_r (the ordinal model's own,
not a normal's; Wright & Masters 1982, eqs. 5.4.3-5.4.6, with W + U for the read's variance):

    q^2(outfit) = sum_r (C_r - (W_r + U_r)^2) / W_r^2 / n^2,     q^2(infit) = sum_r (C_r - (W_r + U_r)^2) / (sum_r W_r)^2.

Positions k are the categories' places among those used (the model's scores); the expected rubric score
sum_k y_k P_k is shown beside them.  An unexpected read is one whose category, or one further out on the same
side, had a small predictive probability (the tail probability is the reading of "how surprising").
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .estimate import MarginalFit

__all__ = ["Predictions", "loo_predictions", "mean_squares"]


@dataclass(frozen=True)
class Predictions:
    """Per read: the leave-one-out predictive category probabilities (K x reads) and their moments."""

    probabilities: np.ndarray
    expected: np.ndarray  # E_r, in places
    information: np.ndarray  # W_r = E[V(theta)]
    uncertainty: np.ndarray  # U_r = Var[E(theta)]
    fourth: np.ndarray  # C_r, about E_r
    z: np.ndarray  # e_r / sqrt(W_r + U_r)
    p_observed: np.ndarray  # P(x_r = observed)
    tail: np.ndarray  # P(this category or one further from E_r, same side)
    expected_score: np.ndarray  # sum_k y_k P_k, rubric units


def loo_predictions(fit: MarginalFit, values: np.ndarray) -> Predictions:
    """Each read's leave-one-out predictive distribution (module docstring); *values* the used categories'
    rubric scores."""
    panel, state = fit.panel, fit.state
    K = fit.layout.n_categories
    code = panel.code
    log_post = np.log(np.maximum(state.posterior[panel.oi], 1e-300)) - state.observed
    log_post -= log_post.max(axis=1, keepdims=True)
    weights = np.exp(log_post)
    weights /= weights.sum(axis=1, keepdims=True)
    p = state.p  # K x reads x nodes
    k = np.arange(K, dtype=float)
    at_node = np.tensordot(k, p, axes=1)  # E(theta_q), reads x nodes
    spread_at_node = np.maximum(np.tensordot(k * k, p, axes=1) - at_node**2, 0.0)
    probs = np.einsum("rq,krq->kr", weights, p)
    probs /= probs.sum(axis=0, keepdims=True)
    mean = (k[:, None] * probs).sum(axis=0)
    information = np.maximum(np.einsum("rq,rq->r", weights, spread_at_node), 1e-12)
    uncertainty = np.maximum(np.einsum("rq,rq->r", weights, (at_node - mean[:, None]) ** 2), 0.0)
    fourth = ((k[:, None] - mean[None, :]) ** 4 * probs).sum(axis=0)
    z = (code - mean) / np.sqrt(information + uncertainty)
    N = code.size
    p_obs = probs[code, np.arange(N)]
    cumulative = np.cumsum(probs, axis=0)
    at_or_below = cumulative[code, np.arange(N)]
    at_or_above = 1.0 - cumulative[code, np.arange(N)] + p_obs
    tail = np.where(code > mean, at_or_above, at_or_below)
    return Predictions(probs, mean, information, uncertainty, fourth, z, p_obs, np.clip(tail, 0.0, 1.0),
                       values @ probs)


def _zstd(ms: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Wilson-Hilferty: (MS^(1/3) - 1)(3/q) + q/3; NaN where q is not positive."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(q > 0, (np.cbrt(ms) - 1.0) * (3.0 / q) + q / 3.0, np.nan)


def mean_squares(pred: Predictions, code: np.ndarray, group: np.ndarray, n_groups: int) -> pd.DataFrame:
    """Infit and outfit mean-squares of the reads by *group* (0 .. n_groups - 1) with their ZSTD (module
    docstring).

    >>> from types import SimpleNamespace as S
    >>> p = S(expected=np.array([0.0, 2.0]), information=np.array([0.5, 0.5]), uncertainty=np.array([0.5, 0.5]),
    ...       fourth=np.array([2.0, 2.0]))
    >>> mean_squares(p, np.array([1, 1]), np.array([0, 0]), 1)[["n", "infit", "outfit"]].to_dict("list")
    {'n': [2], 'infit': [1.0], 'outfit': [1.0]}
    """
    W, U, C = pred.information, pred.uncertainty, pred.fourth
    excess = (code - pred.expected) ** 2 - U
    spread = np.maximum(C - (W + U) ** 2, 0.0)
    n = np.bincount(group, minlength=n_groups)
    sw = np.bincount(group, W, n_groups)
    with np.errstate(divide="ignore", invalid="ignore"):
        outfit = np.bincount(group, excess / W, n_groups) / n
        infit = np.bincount(group, excess, n_groups) / sw
        q_out = np.sqrt(np.bincount(group, spread / W**2, n_groups)) / n
        q_in = np.sqrt(np.bincount(group, spread, n_groups)) / sw
    return pd.DataFrame({"n": n, "infit": infit, "infit_zstd": _zstd(infit, q_in), "outfit": outfit,
                         "outfit_zstd": _zstd(outfit, q_out)})
