"""Uncertainty-adjusted evaluation metrics (Stutz et al. 2023, section 2.4, eq. 7-12).

Plausibility samples are given as an array ``items x M x K``.  Predictions
are ranked class lists (``items x >=k`` class ids, best first) or score
vectors (``items x K``; ranked by descending score).  Each UA metric returns
a small result with the dataset value (mean over items and samples), the
spread across plausibility samples (the paper's "variation in accuracy"), and
per-item values; the ``point_*`` functions give the standard metric against
a single point estimate (e.g. IRN), which the paper shows over-estimates.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cells import whole_argument
from ..errors import InputError

__all__ = ["UAResult", "ranked_predictions", "ua_topk_accuracy", "ua_set_accuracy", "ua_overlap",
           "ua_average_overlap", "point_topk_accuracy"]


@dataclass
class UAResult:
    """value: mean over items and samples; sd_over_samples: SD of the dataset metric across samples."""

    value: float
    sd_over_samples: float
    per_item: np.ndarray
    per_sample: np.ndarray


def _samples(samples) -> np.ndarray:
    try:
        x = np.asarray(samples, dtype=float)
    except (TypeError, ValueError):
        raise InputError("plausibility samples must be numbers (items x samples x classes)") from None
    if x.ndim == 2:
        x = x[None]
    if not np.all(np.isfinite(x)):
        raise InputError("plausibility samples must be finite numbers")
    if x.ndim != 3:
        raise InputError("plausibility samples must be items x samples x classes")
    return x


def ranked_predictions(predictions, n_classes: int, k: int) -> np.ndarray:
    """Top-k predicted class ids per item from ranked lists or score vectors."""
    k = whole_argument(k, "k", high=n_classes, why=f"there are {n_classes} classes")
    p = np.asarray(predictions)
    if p.ndim != 2:
        raise InputError("predictions must be items x ranks (class ids) or items x classes (scores)")
    if np.issubdtype(p.dtype, np.floating) and p.shape[1] == n_classes and not np.all(p == np.round(p)):
        return np.argsort(-p, axis=1, kind="stable")[:, :k]
    if p.shape[1] == n_classes and np.issubdtype(p.dtype, np.floating):
        return np.argsort(-p, axis=1, kind="stable")[:, :k]
    p = p.astype(np.intp)
    if p.shape[1] < k:
        raise InputError(f"predictions rank only {p.shape[1]} classes; top-{k} needs {k}")
    if np.any((p < 0) | (p >= n_classes)):
        raise InputError(f"predicted class ids must be in 0..{n_classes - 1}")
    return p[:, :k]


def _summarise(hits: np.ndarray) -> UAResult:
    per_sample = hits.mean(axis=0)
    return UAResult(float(hits.mean()), float(per_sample.std(ddof=1)) if hits.shape[1] > 1 else 0.0,
                    hits.mean(axis=1), per_sample)


def ua_topk_accuracy(samples, predictions, k: int = 1) -> UAResult:
    """UA top-k accuracy (eq. 8): E_x E_lambda [top-1 label of lambda in the top-k predictions]."""
    x = _samples(samples)
    top = ranked_predictions(predictions, x.shape[2], k)
    if top.shape[0] != x.shape[0]:
        raise InputError("predictions and samples cover different numbers of items")
    label = x.argmax(axis=2)  # items x M
    hits = (label[:, :, None] == top[:, None, :]).any(axis=2)
    return _summarise(hits.astype(float))


def _top_sets(x: np.ndarray, size: int) -> np.ndarray:
    idx = np.argpartition(-x, size - 1, axis=2)[:, :, :size]
    return np.sort(idx, axis=2)


def ua_set_accuracy(samples, prediction_sets) -> UAResult:
    """UA set accuracy (eq. 9): P(top-|C| labels of lambda == C); sets may differ in size per item."""
    x = _samples(samples)
    hits = np.zeros(x.shape[:2])
    for i, C in enumerate(prediction_sets):  # per item (set sizes vary); vectorised over samples
        C = np.sort(np.asarray(list(C), dtype=np.intp))
        if C.size == 0:
            raise InputError(f"item {i + 1}: empty prediction set")
        hits[i] = np.all(_top_sets(x[i:i + 1], C.size)[0] == C[None, :], axis=1)
    return _summarise(hits)


def _overlap_hits(x: np.ndarray, top: np.ndarray, k: int) -> np.ndarray:
    """|C_top-k ∩ Y_top-k(lambda)| / k per item and sample."""
    Y = _top_sets(x, k)  # items x M x k
    return (Y[:, :, :, None] == top[:, None, None, :k]).any(axis=3).sum(axis=2) / k


def ua_overlap(samples, predictions, k: int) -> UAResult:
    """UA overlap (eq. 11) of the top-k predictions with the top-k labels of lambda."""
    x = _samples(samples)
    top = ranked_predictions(predictions, x.shape[2], k)
    return _summarise(_overlap_hits(x, top, k))


def ua_average_overlap(samples, predictions, L: int) -> UAResult:
    """UA average overlap@L (eq. 12): mean over k = 1..L of UA overlap of the top-k predictions."""
    x = _samples(samples)
    L = whole_argument(L, "L", high=x.shape[2], why=f"there are {x.shape[2]} classes")
    top = ranked_predictions(predictions, x.shape[2], L)
    hits = np.mean([_overlap_hits(x, top, k) for k in range(1, L + 1)], axis=0)
    return _summarise(hits)


def point_topk_accuracy(point_estimate, predictions, k: int = 1) -> float:
    """Standard top-k accuracy against the argmax of a point estimate (eq. 7 with lambda* := estimate)."""
    p = np.asarray(point_estimate, dtype=float)
    top = ranked_predictions(predictions, p.shape[1], k)
    return float(np.mean((p.argmax(axis=1)[:, None] == top).any(axis=1)))
