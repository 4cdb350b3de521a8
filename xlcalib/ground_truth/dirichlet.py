"""Dirichlet plausibilities and annotation certainty (Stutz et al. 2023, section 2.3, Appendix A, B.3).

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
from scipy.special import gammainc

from ..cells import check_memory, number_table_argument, real_argument, seed_argument, whole_argument
from ..errors import InputError

__all__ = ["dirichlet_concentration", "sample_dirichlet", "certainty_from_samples", "certainty_from_concentration",
           "annotation_certainty"]


def _counts(counts) -> np.ndarray:
    x = number_table_argument(counts, "counts", "items x classes")
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
    run_id = np.cumsum(change, axis=1, dtype=np.intp) - 1
    offsets = np.arange(n_items, dtype=np.intp)[:, None] * M
    lengths = np.bincount((run_id + offsets).ravel(), minlength=n_items * M).reshape(n_items, M)
    best_run = lengths.argmax(axis=1)
    starts = np.where(change)
    first_of_run = np.zeros((n_items, M), dtype=np.intp)
    first_of_run[starts[0], run_id[starts]] = starts[1]
    mode = s[np.arange(n_items), first_of_run[np.arange(n_items), best_run]]
    return mode, lengths.max(axis=1) / M


def _set_keys(glob: np.ndarray, base: int) -> np.ndarray:
    """Sorted label sets (items x M x top, class ids < base) -> one integer key per set."""
    keys = np.zeros(glob.shape[:2], dtype=np.int64)
    for j in range(glob.shape[2]):  # top is small (1..5): a loop over set positions, not over samples
        keys = keys * base + glob[:, :, j]
    return keys


def _key_labels(mode: np.ndarray, base: int, top: int) -> list:
    labels = []
    for key in mode:
        digits = []
        for _ in range(top):
            key, d = divmod(int(key), base)
            digits.append(d)
        labels.append(tuple(sorted(digits)))
    return labels


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
    mode, freq = _mode_frequency(_set_keys(glob, base))
    return freq, _key_labels(mode, base, top)


def _distinct_picks(rng, counts: np.ndarray, samples: int, j: int) -> np.ndarray:
    """j distinct positions in 0..counts[i]-1 drawn uniformly without replacement, per item and sample (items x M x j).

    The k-th pick is uniform over the counts[i]-k positions not yet taken:
    draw r in 0..counts-k-1 and step it past the taken positions in ascending
    order.  Positions beyond an item's count are 0 (the caller never uses them).
    """
    n = counts.shape[0]
    out = np.zeros((n, int(samples), j), dtype=np.intp)
    for k in range(j):  # j <= top: a loop over set positions, not over samples
        left = np.maximum(counts - k, 1)[:, None]
        r = np.minimum((rng.random((n, int(samples))) * left).astype(np.intp), left - 1)
        taken = np.sort(out[:, :, :k], axis=2)
        for t in range(k):
            r = r + (r >= taken[:, :, t])
        out[:, :, k] = np.where(counts[:, None] > k, r, 0)
    return out


def _top_sets_with_exchangeable(rng, g, order, positive, base, top):
    """Top-``top`` label sets (items x M x top, sorted) when the zero-concentration classes all have ``base``.

    ``g`` holds the gamma draws of the positive classes (padding -1).  The
    U other classes are iid Gamma(base): only how many of them lie above each
    of the ``top`` largest positive draws matters.  With v_1 > v_2 > ... those
    draws and Q(v) = P(Gamma(base) > v) (regularised upper incomplete gamma),
    the counts of others in (v_1, inf), (v_2, v_1], ... are multinomial(U,
    Q(v_1), Q(v_2) - Q(v_1), ...), drawn as successive binomials.  Positive
    class k (k-th largest) is in the top set iff (k - 1) + N_k < top, N_k the
    number of others above v_k; the remaining places go to a uniformly random
    set of distinct other classes (they are exchangeable).  Exact, and it
    needs ``top`` incomplete-gamma values per sample instead of U gamma draws.
    """
    rows, M, width = g.shape
    K = positive.shape[1]
    U = K - positive.sum(axis=1)  # per item
    j = top
    srt = np.argsort(-g, axis=2, kind="stable")[:, :, :j]  # the j largest positive draws, descending
    v = np.take_along_axis(g, srt, axis=2)
    named_ids = np.take_along_axis(np.broadcast_to(order[:, None, :], g.shape), srt, axis=2)
    q = np.where(v >= 0, 1.0 - gammainc(base, np.maximum(v, 0.0)), 1.0)  # padding: every other class lies above
    q = np.maximum.accumulate(q, axis=2)  # guard the monotonicity rounding could break
    above = np.zeros((rows, M), dtype=np.int64)
    left = np.broadcast_to(U[:, None], (rows, M)).astype(np.int64)
    prev = np.zeros((rows, M))
    in_top = np.zeros((rows, M, j), dtype=bool)
    for k in range(j):  # top is small: a loop over set positions, not over samples
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(prev < 1.0, (q[:, :, k] - prev) / (1.0 - prev), 0.0)
        new = rng.binomial(left, np.clip(p, 0.0, 1.0))
        above = above + new
        left = left - new
        prev = q[:, :, k]
        in_top[:, :, k] = (k + above < j) & (v[:, :, k] >= 0)
    m = in_top.sum(axis=2)  # positive classes in the top set (a prefix of the j largest)
    picks = _distinct_picks(rng, U, M, j)
    other_ids = np.argsort(positive, axis=1, kind="stable").astype(np.intp)  # zero-concentration classes first
    other_labels = np.take_along_axis(np.broadcast_to(other_ids[:, None, :], (rows, M, K)), picks, axis=2)
    slot = np.arange(j)
    # set = the m largest positive classes, then j - m other classes
    chosen = np.where(slot[None, None, :] < m[:, :, None], named_ids,
                      np.take_along_axis(other_labels, np.maximum(slot[None, None, :] - m[:, :, None], 0), axis=2))
    return np.sort(chosen, axis=2)


def certainty_from_concentration(concentration, samples: int = 1000, seed: int = 0, top: int = 1, chunk: int = 256,
                                 base: float = 0.0):
    """Certainty under Dirichlet(concentration + base) per item, sampling only what can win.

    ``base = 0`` (PrIRN as B.3 writes it): classes with zero concentration are
    structural zeros; items are processed in chunks and padded to the largest
    number of positive classes in the chunk, so 419-class PrIRN costs only what
    the ranked classes cost.

    ``base > 0`` (the reference code's PrIRN adds 0.01 to every class): the
    classes with zero ``concentration`` all have concentration ``base`` and are
    exchangeable; which of them enter the top set is drawn exactly from how
    many of their gamma variables exceed the positive classes' draws (see
    :func:`_top_sets_with_exchangeable`) instead of drawing ~400 gammas per sample.
    """
    conc = _counts(concentration)
    base = real_argument(base, "base", low=0)
    if base == 0:  # with base > 0 every class has some concentration
        _positive_rows(conc)
    samples, seed, chunk = whole_argument(samples, "samples"), seed_argument(seed), whole_argument(chunk, "chunk")
    n, K = conc.shape
    top = whole_argument(top, "top", high=K, why=f"there are {K} classes")
    # the gamma draws are as wide as the named (positive) classes of an item, also with base > 0: the other
    # classes are exchangeable and handled by counting (see _top_sets_with_exchangeable), never drawn one by one
    width_max = int(max((conc > 0).sum(axis=1).max(), top))
    # gamma draws, the keys of the top sets and their sort, per chunk of items
    check_memory(32.0 * min(chunk, n) * samples * width_max,
                 f"{samples} samples of {min(chunk, n)} items x {width_max} classes", "lower samples")
    rng = np.random.default_rng(seed)
    M = int(samples)
    certainty = np.empty(n)
    labels: list = [None] * n
    for start in range(0, n, chunk):
        block = conc[start:start + chunk]
        rows = block.shape[0]
        positive = block > 0
        width = max(int(positive.sum(axis=1).max()), top)
        order = np.argsort(~positive, axis=1, kind="stable")[:, :width].astype(np.intp)
        sub = np.take_along_axis(block, order, axis=1)
        pad = ~np.take_along_axis(positive, order, axis=1)
        g = rng.standard_gamma(np.broadcast_to((sub + base)[:, None, :], (rows, M, width)))
        g[np.broadcast_to(pad[:, None, :], g.shape)] = -1.0  # padding never wins
        if base > 0 and positive.sum(axis=1).min() < K:
            sets = _top_sets_with_exchangeable(rng, g, order, positive, base, top)
            if top == 1:
                lab, freq = _mode_frequency(sets[:, :, 0])
            else:
                mode, freq = _mode_frequency(_set_keys(sets, K))
                lab = _key_labels(mode, K, top)
        else:
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
