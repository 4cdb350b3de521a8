"""Dirichlet plausibilities and annotation certainty (seed section 2.3, Appendix A, B.3).

Top-1 label annotations: ``mu = gamma * s + alpha * 1`` with ``s`` the counts
of annotators choosing each class, reliability ``gamma > 0`` and prior
``alpha > 0``; plausibilities ``lambda ~ Dirichlet(mu)``.  PrIRN uses
``Dirichlet(gamma * IRN)``: classes with zero concentration are structural
zeros (they never receive plausibility), which keeps the sampling cheap for
hundreds of classes.

Annotation certainty (eq. 2-6), estimated with M Monte Carlo samples (eq. 3):
``Certainty(y) = P(y = argmax_j lambda_j)``; ``AnnotationCertainty_1 =
max_y Certainty(y)``; for top-j, ``AnnotationCertainty_j = max over label sets
C with |C| = j of P(C = top-j labels of lambda)`` — the frequency of the most
common top-j *set* among the samples.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError

__all__ = ["dirichlet_concentration", "sample_dirichlet", "certainty_from_samples", "certainty_from_concentration",
           "annotation_certainty"]


def _counts(counts) -> np.ndarray:
    try:
        x = np.asarray(counts, dtype=float)
    except (TypeError, ValueError):
        raise InputError("counts must be numbers (items x classes)") from None
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2:
        raise InputError("counts must be a 2-D items x classes table")
    if np.any(~np.isfinite(x)) or np.any(x < 0):
        i, j = np.argwhere(~np.isfinite(x) | (x < 0))[0]
        raise InputError(f"counts: item {i + 1}, class {j + 1} must be a non-negative number, not {x[i, j]}")
    if x.shape[1] < 2:
        raise InputError("at least 2 classes are needed")
    return x


def dirichlet_concentration(counts, reliability: float = 1.0, prior: float = 1.0) -> np.ndarray:
    """mu = gamma * s + alpha (Appendix A)."""
    if not reliability > 0:
        raise InputError(f"reliability must be positive, not {reliability}")
    if not prior >= 0:
        raise InputError(f"prior must be non-negative, not {prior}")
    return reliability * _counts(counts) + prior


def sample_dirichlet(concentration, samples: int = 1000, seed: int = 0) -> np.ndarray:
    """Plausibility samples (items x samples x classes); zero concentration = structural zero."""
    conc = np.asarray(concentration, dtype=float)
    if conc.ndim == 1:
        conc = conc[None, :]
    rng = np.random.default_rng(seed)
    g = rng.standard_gamma(np.broadcast_to(conc[:, None, :], (conc.shape[0], int(samples), conc.shape[1])))
    total = g.sum(axis=2, keepdims=True)
    if np.any(total == 0):
        raise InputError("an item has no positive concentration (no annotations and no prior)")
    return g / total


def _mode_frequency(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of keys (items x samples): the most frequent key and its frequency (vectorised run lengths)."""
    s = np.sort(keys, axis=1)
    n_items, M = s.shape
    change = np.ones_like(s, dtype=bool)
    change[:, 1:] = s[:, 1:] != s[:, :-1]
    # run id per position; run length via bincount on (item, run id)
    run_id = np.cumsum(change, axis=1, dtype=np.intp) - 1
    offsets = np.arange(n_items, dtype=np.intp)[:, None] * M
    lengths = np.bincount((run_id + offsets).ravel(), minlength=n_items * M).reshape(n_items, M)
    best_run = lengths.argmax(axis=1)
    starts = np.where(change)
    first_of_run = np.zeros((n_items, M), dtype=np.intp)
    first_of_run[starts[0], run_id[starts]] = starts[1]
    mode = s[np.arange(n_items), first_of_run[np.arange(n_items), best_run]]
    return mode, lengths.max(axis=1) / M


def certainty_from_samples(samples: np.ndarray, top: int = 1, class_ids: np.ndarray | None = None):
    """Annotation certainty from plausibility samples (items x M x K).

    Returns ``(certainty, label)``: per item, the top-``top`` annotation
    certainty and the most certain label (top=1) or label set (encoded as a
    sorted tuple per item).  ``class_ids`` maps sample columns to class ids
    (items x K) when samples cover a per-item subset of classes.
    """
    x = np.asarray(samples, dtype=float)
    if x.ndim == 2:
        x = x[None]
    n, M, K = x.shape
    if not 1 <= top <= K:
        raise InputError(f"top must be between 1 and the number of classes ({K})")
    ids = np.broadcast_to(np.arange(K), (n, K)) if class_ids is None else np.asarray(class_ids)
    if top == 1:
        local = x.argmax(axis=2)  # items x M
        glob = np.take_along_axis(ids[:, None, :], local[:, :, None], axis=2)[:, :, 0]
        mode, freq = _mode_frequency(glob)
        return freq, mode
    idx = np.argpartition(-x, top - 1, axis=2)[:, :, :top]
    glob = np.sort(np.take_along_axis(np.broadcast_to(ids[:, None, :], (n, M, K)), idx, axis=2), axis=2)
    base = int(ids.max()) + 1
    keys = np.zeros((n, M), dtype=np.int64)
    for j in range(top):  # top is small (1..5): a loop over set positions, not over samples
        keys = keys * base + glob[:, :, j]
    mode, freq = _mode_frequency(keys)
    labels = []
    for key in mode:
        digits = []
        for _ in range(top):
            key, d = divmod(int(key), base)
            digits.append(d)
        labels.append(tuple(sorted(digits)))
    return freq, labels


def certainty_from_concentration(concentration, samples: int = 1000, seed: int = 0, top: int = 1, chunk: int = 256):
    """Certainty under Dirichlet(concentration) per item, sampling only classes with positive concentration.

    Items are processed in chunks and padded to the largest number of
    positive classes in the chunk, so 419-class PrIRN costs only what the
    ranked classes cost.
    """
    conc = np.asarray(concentration, dtype=float)
    if conc.ndim == 1:
        conc = conc[None, :]
    n = conc.shape[0]
    rng = np.random.default_rng(seed)
    certainty = np.empty(n)
    labels: list = [None] * n
    for start in range(0, n, chunk):
        block = conc[start:start + chunk]
        positive = block > 0
        width = max(int(positive.sum(axis=1).max()), top)
        order = np.argsort(~positive, axis=1, kind="stable")[:, :width]
        sub = np.take_along_axis(block, order, axis=1)
        g = rng.standard_gamma(np.broadcast_to(sub[:, None, :], (sub.shape[0], int(samples), width)))
        g[np.broadcast_to(sub[:, None, :] == 0, g.shape)] = -1.0  # padding never wins
        freq, lab = certainty_from_samples(g, top, class_ids=order)
        certainty[start:start + chunk] = freq
        labels[start:start + chunk] = list(lab)
    return certainty, labels


def annotation_certainty(counts, reliability: float = 1.0, prior: float = 1.0, samples: int = 1000, seed: int = 0,
                         top: int = 1) -> np.ndarray:
    """Per-item annotation certainty under the Dirichlet model mu = gamma*s + alpha (eq. 2-6, Appendix A).

    ``counts``: items x classes, the number of annotators choosing each class.

    >>> c = annotation_certainty([[9, 1, 0], [4, 4, 2]], reliability=1, prior=1, samples=4000, seed=0)
    >>> bool(c[0] > 0.95), bool(0.3 < c[1] < 0.6)
    (True, True)
    """
    if int(samples) < 1:
        raise InputError("samples must be at least 1")
    conc = dirichlet_concentration(counts, reliability, prior)
    return certainty_from_concentration(conc, samples, seed, top)[0]
