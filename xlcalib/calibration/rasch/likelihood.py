"""The many-facet rating-scale model: the probability of each category of a read, and its derivatives.

Model (Andrich 1978, "A rating formulation for ordered response categories", Psychometrika 43:561; Linacre
1989, *Many-facet Rasch measurement*): a read of object o by assessor a lands in category k = 0 .. K-1 with

    log(P_k / P_{k-1}) = theta_o - beta_a - tau_k          (rating scale: thresholds shared)
    log(P_k / P_{k-1}) = theta_o - beta_a - tau_ak         (partial credit by assessor)

theta_o the object's measure, beta_a the assessor's severity (positive = harsher), tau the Rasch-Andrich
thresholds (the point on the scale where categories k-1 and k are equally probable).  Written with category
intercepts c_k = -(tau_1 + ... + tau_k), the form this module computes with,

    log P_k = k eta + c_k - log sum_m exp(m eta + c_m),     eta = theta_o - beta_a,

a multinomial logit in which k is the category's place among the categories used (:mod:`.categories`) and an
intercept of minus infinity is a structural zero (a category that assessor never used).  Its derivatives are
the exponential family's: with E and V the mean and variance of k under P,

    d log P_x / d beta_a = -(x - E),        d log P_x / d c_k = [x = k] - P_k,
    d^2 / d beta_a^2 = -V,   d^2 / d beta_a d c_k = P_k (k - E),   d^2 / d c_k d c_j = -(P_k [k = j] - P_k P_j).

The thresholds are read back as tau_k = c_{k-1} - c_k.
"""
from __future__ import annotations

import numpy as np

__all__ = ["log_probabilities", "probabilities_by_category", "category_moments", "thresholds_from_intercepts",
           "expected_score"]


def log_probabilities(eta: np.ndarray, intercepts: np.ndarray) -> np.ndarray:
    """log P_k for every eta (any shape S) with its intercepts (shape S + (K,), or (K,)): shape S + (K,).

    The log-sum-exp is taken about the largest logit, so |eta| of hundreds of logits stays finite; structural
    zeros (intercept -inf) get log P = -inf.
    """
    k = np.arange(intercepts.shape[-1], dtype=float)
    logits = eta[..., None] * k + intercepts
    top = np.max(logits, axis=-1, keepdims=True)
    logits -= top
    logits -= np.log(np.sum(np.exp(logits), axis=-1, keepdims=True))
    return logits


def probabilities_by_category(eta: np.ndarray, intercepts: np.ndarray, lowest: np.ndarray, highest: np.ndarray,
                              code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(P, log P of the observed category): the category probabilities of reads x nodes *eta* with reads x K
    *intercepts*, laid out category first (K x reads x nodes, so sums over categories are sums of K contiguous
    arrays -- several times faster than a reduction over a short last axis), and log P_x for each read's
    category *code* (reads x nodes).

    The exponentials are taken about the larger of the logits of each read's lowest and highest category used
    (*lowest*, *highest*: their places; their intercepts are 0 by the fit's constraints) -- one elementwise step
    instead of a maximum over K: no logit exceeds it by more than the intercepts' own range, far from overflow,
    and one term of the sum is exp(0) = 1, so the sum never underflows.  log P_x is formed from its logit, exact
    where P_x itself underflows.
    """
    K = intercepts.shape[-1]
    top = np.where(eta > 0, eta * highest[:, None], eta * lowest[:, None])
    terms = np.empty((K,) + eta.shape)
    total = np.zeros_like(eta)
    for k in range(K):
        np.multiply(eta, float(k), out=terms[k])
        terms[k] += intercepts[:, k][:, None]
        terms[k] -= top
        np.exp(terms[k], out=terms[k])
        total += terms[k]
    terms /= total[None]
    reads = np.arange(eta.shape[0])
    observed = eta * code[:, None] + intercepts[reads, code][:, None] - top - np.log(total)
    return terms, observed


def category_moments(probabilities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(E, V): the mean and variance of the category place k under P (last axis)."""
    k = np.arange(probabilities.shape[-1], dtype=float)
    mean = probabilities @ k
    variance = np.maximum(probabilities @ (k * k) - mean * mean, 0.0)
    return mean, variance


def thresholds_from_intercepts(intercepts: np.ndarray) -> np.ndarray:
    """Rasch-Andrich thresholds tau_k = c_{k-1} - c_k (k = 1 .. K-1) from the intercepts of one structure."""
    c = np.asarray(intercepts, dtype=float)
    with np.errstate(invalid="ignore"):  # a step touching an unused category (-inf): NaN, not a warning
        return c[:-1] - c[1:]


def expected_score(eta: np.ndarray, intercepts: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The expected rubric score sum_k values_k P_k(eta) -- a fair average when eta is an object's measure less
    an average severity (FACETS' "Fair-M average")."""
    return np.exp(log_probabilities(np.asarray(eta, dtype=float), intercepts)) @ np.asarray(values, dtype=float)
