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
from ..inputs import check_memory, real_argument, seed_argument, whole_argument

__all__ = ["dirichlet_concentration", "sample_dirichlet", "certainty_from_samples", "certainty_from_concentration",
           "annotation_certainty"]


def _counts(counts) -> np.ndarray:
    raw = counts if isinstance(counts, np.ndarray) else np.asarray(counts, dtype=object)
    if raw.dtype.kind in "USb" or (raw.dtype == object and any(isinstance(v, (str, bool, np.bool_)) for v in raw.ravel())):
        raise InputError("counts must be numbers (items x classes); found text or TRUE/FALSE")
    try:
        x = np.asarray(raw, dtype=float)
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
    reliability = real_argument(reliability, "reliability", low=0, high=MAX_CONCENTRATION, low_open=True)
    prior = real_argument(prior, "prior", low=0, high=MAX_CONCENTRATION)
    conc = reliability * _counts(counts) + prior
    if np.any(conc > MAX_CONCENTRATION):
        raise InputError(f"reliability x counts exceeds {MAX_CONCENTRATION:g}: the plausibilities would be certain "
                         "to machine precision; lower the reliability")
    return conc


#: Largest Dirichlet concentration accepted (beyond it every sample equals the mean to machine precision).
MAX_CONCENTRATION = 1e12


def _positive_rows(conc: np.ndarray) -> None:
    """An item with no evidence and no prior has no plausibility at all: refuse it (its certainty is undefined)."""
    empty = np.flatnonzero(~(conc > 0).any(axis=1))
    if empty.size:
        raise InputError(f"item {int(empty[0]) + 1} has no annotations and the prior is 0: its plausibilities are "
                         "undefined (give it annotations or a positive prior)", {"row": int(empty[0])})


def sample_dirichlet(concentration, samples: int = 1000, seed: int = 0) -> np.ndarray:
    """Plausibility samples (items x samples x classes); zero concentration = structural zero."""
    conc = _concentration(concentration)
    samples, seed = whole_argument(samples, "samples"), seed_argument(seed)
    check_memory(16.0 * conc.shape[0] * samples * conc.shape[1],
                 f"{samples} samples of {conc.shape[0]} items x {conc.shape[1]} classes", "lower samples")
    rng = np.random.default_rng(seed)
    g = rng.standard_gamma(np.broadcast_to(conc[:, None, :], (conc.shape[0], int(samples), conc.shape[1])))
    total = g.sum(axis=2, keepdims=True)
    if np.any(total == 0):
        raise InputError("an item has no positive concentration (no annotations and no prior)")
    return g / total


def _concentration(concentration) -> np.ndarray:
    """Concentrations as items x classes: finite, non-negative, every item with some positive concentration."""
    conc = _counts(concentration)
    _positive_rows(conc)
    return conc


def _mode_frequency(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of keys (items x samples): the most frequent key and its frequency (vectorised run lengths)."""
    s = np.sort(keys, axis=1)
    n_items, M = s.shape
    change = np.ones_like(s, dtype=bool)
    change[:, 1:] = s[:, 1:] != s[:, :-1]
    # run id per position; run length via bincount on (item, run id)
    run_id = np.cumsum(change, axis=1) - 1
    offsets = np.arange(n_items)[:, None] * M
    lengths = np.bincount((run_id + offsets).ravel(), minlength=n_items * M).reshape(n_items, M)
    best_run = lengths.argmax(axis=1)
    starts = np.where(change)
    first_of_run = np.zeros((n_items, M), dtype=np.int64)
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
    if x.ndim != 3:
        raise InputError("plausibility samples must be items x samples x classes")
    n, M, K = x.shape
    top = whole_argument(top, "top", high=K, why=f"there are {K} classes")
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
    conc = _concentration(concentration)
    samples, seed, chunk = whole_argument(samples, "samples"), seed_argument(seed), whole_argument(chunk, "chunk")
    top = whole_argument(top, "top", high=conc.shape[1], why=f"there are {conc.shape[1]} classes")
    width_max = int(max((conc > 0).sum(axis=1).max(), top)) if conc.size else top
    # gamma draws, the keys of the top sets and their sort, per chunk of items
    check_memory(32.0 * min(chunk, conc.shape[0]) * samples * width_max,
                 f"{samples} samples of {min(chunk, conc.shape[0])} items x {width_max} classes", "lower samples")
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
    conc = dirichlet_concentration(counts, reliability, prior)
    return certainty_from_concentration(conc, samples, seed, top)[0]
