"""Plackett–Luce aggregation of partial rankings with ties (Stutz et al. 2023, Appendix B.4).

Likelihood (B.4.1).  For a partial ranking b = (b_1 > ... > b_L), b_L being
the classes not named (or the last named block when every class is named),

    p(b | lambda) = (prod_{k not in b_L} lambda_k) * prod_{l < L} R_l(b_l),
    R_l(emptyset) = 1,  R_l(A) = sum_{a in A} R_l(A \\ {a}) / (Zbar_l + sum_{a in A} lambda_a),

with Zbar_l the total plausibility of the classes after block l.  R is
computed over the 2^|b_l| subsets of a block (Hasse diagram), not its |b_l|!
orderings.

Gibbs sampler (B.4.2, after Caron & Doucet 2010).  lambda_k ~ Gamma(alpha,
beta) (shape, rate); each annotator draws exponential arrival times
tau_k ~ Exp(lambda_k) and ranks by arrival.  One sweep:

1. for each annotator, sample the order inside every ranked block from its
   conditional — walk down the Hasse trellis choosing ``s`` with probability
   proportional to R(A \\ {s}) — then the ranked arrival times by the
   memoryless race: the gap before position k is Exp(total plausibility not
   yet arrived);
2. lambda_k | tau ~ Gamma(alpha + n_k, beta + sum_r t_k^r), where n_k counts
   the annotators that *rank* k and t_k^r is k's arrival time for them, or —
   for a class in an annotator's last (unranked) block — the time of that
   annotator's last ranked arrival T^r: an unranked class is only known to
   arrive after T^r (a right-censored exponential, likelihood exp(-lambda T^r)),
   so it adds to the rate but not to the shape.  This is the paper's "n_k
   excluding the last blocks".

Pooling (for speed: a case ranks a handful of the K classes, and sampling every unranked class on its
own would be most of the work).  Classes no annotator of the case ranked
have identical full conditionals Gamma(alpha, beta + sum_r T^r) and enter the
race only through their sum.  Because a sum of independent Gamma(alpha, rate)
variables with a common rate is Gamma(U alpha, rate), the sampler carries one
pooled component Lambda_U ~ Gamma(U alpha, beta + sum_r T^r) (its prior is
Gamma(U alpha, beta)) instead of U separate ones.  Output samples split
Lambda_U back into the U classes with Dirichlet(alpha, ..., alpha) weights,
which is exactly the conditional distribution of independent equal-rate gammas
given their sum.  Tests check pooled == unpooled on small cases.

Reliability gamma (B.4): each annotation is repeated gamma times (each copy
with its own latent ranking and arrival times), multiplying its likelihood
contribution; gamma must be a positive whole number.

Vectorisation: C independent chains run side by side (numpy over the chain
axis); a sample is a (chain, kept iteration) pair.  Chains start from the
prior, discard ``burn_in`` sweeps and keep every ``thin``-th sweep.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..cells import check_memory, real_argument, seed_argument, whole_argument
from ..errors import InputError
from .dirichlet import certainty_from_samples
from .rankings import class_count
from .settings import resolve_setting

__all__ = ["pl_log_likelihood", "pl_partial_ranking_log_likelihood", "pl_gibbs", "pl_certainty"]


def pl_log_likelihood(weights, ranking) -> float:
    """Classic PL log-likelihood of a full ranking (all classes, best first)."""
    w = np.asarray(weights, dtype=float)
    order = np.asarray(ranking, dtype=np.intp)
    if sorted(order.tolist()) != list(range(w.size)):
        raise InputError("a full ranking must list every class exactly once")
    lam = w[order]
    remaining = np.cumsum(lam[::-1])[::-1]  # Z, Z - lambda_1, ...
    return float(np.sum(np.log(lam) - np.log(remaining)))


def _blocks_with_rest(ranking, n_classes: int) -> list[list[int]]:
    seen = [c for block in ranking for c in block]
    if len(set(seen)) != len(seen) or any(not 0 <= c < n_classes for c in seen):
        raise InputError("a partial ranking must name distinct classes in 0..n_classes-1")
    rest = [c for c in range(n_classes) if c not in set(seen)]
    blocks = [list(b) for b in ranking if len(b)]
    return blocks + [rest] if rest else blocks


def _log_R(lam_block: np.ndarray, zbar: float) -> float:
    """log R(b) over all subsets of one block (bit-mask dynamic programme on the Hasse diagram)."""
    m = lam_block.size
    R = np.zeros(1 << m)
    R[0] = 1.0
    sums = np.zeros(1 << m)
    for mask in range(1, 1 << m):
        low = mask & -mask
        sums[mask] = sums[mask ^ low] + lam_block[low.bit_length() - 1]
        total = 0.0
        rest = mask
        while rest:
            bit = rest & -rest
            total += R[mask ^ bit]
            rest ^= bit
        R[mask] = total / (zbar + sums[mask])
    return math.log(R[-1])


def pl_partial_ranking_log_likelihood(weights, ranking, n_classes: int | None = None) -> float:
    """log p(b | lambda) for a partial ranking with ties (B.4.1), exponential (not factorial) in block size."""
    w = np.asarray(weights, dtype=float)
    K = w.size if n_classes is None else class_count(n_classes)
    blocks = _blocks_with_rest(ranking, K)
    total = w.sum()
    placed = 0.0
    out = 0.0
    for block in blocks[:-1]:
        lam = w[block]
        zbar = total - placed - lam.sum()
        out += np.sum(np.log(lam)) + _log_R(lam, zbar)
        placed += lam.sum()
    return float(out)


class _Case:
    """Local indexing of one case: ranked classes first, then the pooled unranked block (or each unranked class).

    ``one_item`` (the reference code's model): the classes nobody ranked are
    ONE item with prior Gamma(alpha, beta) (not U items, Gamma(U alpha, beta)
    in sum); it exists even when nothing is left unranked, and every named
    block of every annotator is ranked above it — also the last block of an
    annotator who names every class.
    """

    def __init__(self, case_annotations, n_classes: int, reliability: int, pool: bool, alpha: float,
                 one_item: bool = False):
        if not case_annotations:
            raise InputError("the case has no annotations")
        ranked = []
        annotations = []
        for r, ranking in enumerate(case_annotations):
            blocks = [list(map(int, b)) for b in ranking if len(b)]
            named = [c for b in blocks for c in b]
            if len(set(named)) != len(named) or any(not 0 <= c < n_classes for c in named):
                raise InputError(f"annotator {r + 1}: classes must be distinct ids in 0..{n_classes - 1}")
            if len(named) == n_classes and not one_item:  # everything named: the last block plays the unranked part
                blocks = blocks[:-1]
            if not blocks:
                continue
            annotations.append(blocks)
            ranked += [c for b in blocks for c in b]
        if not annotations:
            raise InputError("no annotator ranks any class above the others")
        self.ranked = sorted(set(ranked))
        unranked = [c for c in range(n_classes) if c not in set(self.ranked)]
        self.pooled = one_item or (pool and len(unranked) > 1)
        self.unranked = unranked
        if self.pooled:
            self.columns = self.ranked  # + one pooled column
            size = len(self.ranked) + 1
            self.alpha = np.full(size, alpha)
            self.alpha[-1] = alpha if one_item else alpha * len(unranked)
        else:
            self.columns = self.ranked + unranked
            size = len(self.columns)
            self.alpha = np.full(size, alpha)
        self.size = size
        local = {c: i for i, c in enumerate(self.columns)}
        self.copies = []  # (list of local-id arrays per ranked block, ranked mask)
        for blocks in annotations:
            local_blocks = [np.array([local[c] for c in b], dtype=np.intp) for b in blocks]
            mask = np.zeros(size, dtype=bool)
            for b in local_blocks:
                mask[b] = True
            self.copies += [(local_blocks, mask)] * reliability
        self.shape = self.alpha + sum(mask.astype(float) for _, mask in self.copies)


def _sample_block_order(lam_block: np.ndarray, zbar: np.ndarray, rng) -> np.ndarray:
    """Orders inside one tied block for every chain: walk down the Hasse trellis weighted by R (C x m)."""
    C, m = lam_block.shape
    if m == 1:
        return np.zeros((C, 1), dtype=np.intp)
    n = 1 << m
    R = np.zeros((C, n))
    R[:, 0] = 1.0
    sums = np.zeros((C, n))
    for mask in range(1, n):
        low = mask & -mask
        sums[:, mask] = sums[:, mask ^ low] + lam_block[:, low.bit_length() - 1]
        acc = np.zeros(C)
        rest = mask
        while rest:
            bit = rest & -rest
            acc += R[:, mask ^ bit]
            rest ^= bit
        R[:, mask] = acc / (zbar + sums[:, mask])
    bits = 1 << np.arange(m)
    cur = np.full(C, n - 1)
    order = np.empty((C, m), dtype=np.intp)
    rows = np.arange(C)[:, None]
    for step in range(m):
        inside = (cur[:, None] & bits) != 0
        weights = np.where(inside, R[rows, cur[:, None] ^ bits], 0.0)
        cum = np.cumsum(weights, axis=1)
        u = rng.random(C) * cum[:, -1]
        pick = np.minimum((cum < u[:, None]).sum(axis=1), m - 1)
        order[:, step] = pick
        cur = cur ^ bits[pick]
    return order


def _sweep(case: _Case, lam: np.ndarray, beta: float, rng) -> np.ndarray:
    """One Gibbs sweep for C chains: rankings and arrival times for every annotator copy, then lambda."""
    C = lam.shape[0]
    rows = np.arange(C)
    Z = lam.sum(axis=1)
    rate = np.full(lam.shape, beta)
    for blocks, mask in case.copies:
        placed = np.zeros(C)
        t = np.zeros(C)
        tau = np.zeros(lam.shape)
        for block in blocks:
            lam_b = lam[:, block]
            zbar = Z - placed - lam_b.sum(axis=1)
            order = _sample_block_order(lam_b, zbar, rng)
            for step in range(block.size):
                item = block[order[:, step]]
                t = t + rng.exponential(size=C) / (Z - placed)
                tau[rows, item] = t
                placed = placed + lam[rows, item]
        rate += np.where(mask[None, :], tau, t[:, None])  # unranked: censored at the last ranked arrival
    return rng.gamma(case.shape[None, :], size=lam.shape) / rate


#: Limits of the Gibbs sampler's work (repetitions of each ranking; sweeps of one chain).
MAX_PL_REPETITIONS = 10_000
MAX_PL_SWEEPS = 100_000


def pl_gibbs(case_annotations, n_classes: int, reliability: int = 1, samples: int = 1000, burn_in: int = 100,
             thin: int = 1, chains: int = 50, prior_shape: float = 1.0, prior_rate: float = 1.0,
             pool_unranked: bool = True, seed: int = 0, setting="xlcalib") -> np.ndarray:
    """Posterior plausibility samples (samples x n_classes, rows sum to 1) for ONE case under Plackett–Luce.

    Parameters
    ----------
    case_annotations:
        annotator -> blocks -> class ids (best first); classes an annotator
        did not name form its implicit last block.
    reliability:
        whole number of times each annotation is repeated (B.4).
    samples, burn_in, thin, chains:
        ``chains`` chains run side by side; each discards ``burn_in`` sweeps
        and keeps every ``thin``-th sweep until ``samples`` are collected.
    prior_shape, prior_rate:
        Gamma(alpha, beta) prior on the PL weights.
    pool_unranked:
        carry the classes nobody ranked as one pooled component (exact; see module docstring).
    setting:
        ``"xlcalib"`` (default): the prior Gamma(alpha, beta) is on each of
        the ``n_classes`` classes, as eq. 18 writes it, so the U classes
        nobody ranked weigh Gamma(U alpha, beta) together.  ``"reference"``:
        the reference notebook's model — Gamma(alpha, beta) on each ranked
        class and on ONE "unranked" item standing for all the others, whose
        sampled weight is split over them by Dirichlet(1, ..., 1) weights (as
        the reference code does; if nothing is left unranked the item's share
        is dropped); every named block, also the last one of an annotator who
        names every class, ranks above that item.  With 419 classes the
        difference is large: over the first 53 dermatology cases mean top-1
        certainty is 0.947 (reference) vs 0.816 (xlcalib) at reliability 3,
        0.852 vs 0.281 at reliability 1; one annotator naming one class gives 1.0 vs 0.118 at
        reliability 3, because Gamma(418, 1) unranked mass swamps the one
        ranked class.

    >>> s = pl_gibbs([[[0]]], 419, samples=500, setting="reference")
    >>> bool((s.argmax(axis=1) == 0).mean() > 0.95)
    True
    """
    model = resolve_setting(setting)
    one_item = model.pl_unranked == "one_item"
    n_classes = class_count(n_classes)
    reliability = whole_argument(reliability, "reliability", high=MAX_PL_REPETITIONS,
                                 why="the PL model repeats each ranking that many times")
    prior_shape = real_argument(prior_shape, "prior_shape", low=0, low_open=True)
    prior_rate = real_argument(prior_rate, "prior_rate", low=0, low_open=True)
    samples, thin, chains = whole_argument(samples, "samples"), whole_argument(thin, "thin"), whole_argument(chains, "chains")
    burn_in, seed = whole_argument(burn_in, "burn_in", low=0), seed_argument(seed)
    sweeps = burn_in + -(-samples // min(chains, samples)) * thin
    if sweeps > MAX_PL_SWEEPS:
        raise InputError(f"burn_in + samples/chains x thin asks for {sweeps:,} Gibbs sweeps; the limit is "
                         f"{MAX_PL_SWEEPS:,} (about a minute); use more chains or fewer samples")
    check_memory(8.0 * samples * n_classes * 3,
                 f"{samples} plausibility samples", "lower samples")
    if one_item and not pool_unranked:
        raise InputError("pool_unranked=False does not apply to setting='reference': its model has one unranked item")
    case = _Case(case_annotations, n_classes, int(reliability), pool_unranked, prior_shape, one_item)
    rng = np.random.default_rng(seed)
    C = min(int(chains), int(samples))
    per_chain = -(-int(samples) // C)
    lam = rng.gamma(case.alpha[None, :], size=(C, case.size)) / prior_rate
    for _ in range(burn_in):
        lam = _sweep(case, lam, prior_rate, rng)
    kept = []
    for i in range(per_chain * thin):
        lam = _sweep(case, lam, prior_rate, rng)
        if (i + 1) % thin == 0:
            kept.append(lam)
    draws = np.stack(kept, axis=1).reshape(-1, case.size)[: int(samples)]  # chain-major
    out = np.zeros((draws.shape[0], n_classes))
    ranked = np.asarray(case.ranked, dtype=np.intp)
    unranked = np.asarray(case.unranked, dtype=np.intp)
    if case.pooled:
        out[:, ranked] = draws[:, :-1]
        if unranked.size:
            split = rng.gamma(1.0 if one_item else prior_shape, size=(draws.shape[0], unranked.size))
            out[:, unranked] = draws[:, -1:] * split / split.sum(axis=1, keepdims=True)
    else:
        out[:, np.asarray(case.columns, dtype=np.intp)] = draws
    return out / out.sum(axis=1, keepdims=True)


def pl_certainty(annotations, n_classes: int, reliability: int = 1, samples: int = 1000, top: int = 1, seed: int = 0,
                 setting="xlcalib", **kwargs) -> tuple[np.ndarray, list]:
    """Per-case PL annotation certainty (eq. 4-6 on pl_gibbs samples) and the most certain label(s).

    ``setting`` chooses xlcalib's prior or the reference code's (see :func:`pl_gibbs`).
    """
    resolve_setting(setting)
    n_classes, seed = class_count(n_classes), seed_argument(seed)
    top = whole_argument(top, "top", high=n_classes, why=f"there are {n_classes} classes")
    cert = np.empty(len(annotations))
    labels = []
    for i, case in enumerate(annotations):
        s = pl_gibbs(case, n_classes, reliability=reliability, samples=samples, seed=seed + i, setting=setting, **kwargs)
        c, lab = certainty_from_samples(s[None], top)
        cert[i] = c[0]
        labels.append(lab[0])
    return cert, labels


def _brute_force_likelihood(weights, ranking, n_classes: int) -> float:
    """p(b | lambda) by summing PL over every compatible permutation (tests only: factorial cost)."""
    blocks = _blocks_with_rest(ranking, n_classes)
    total = 0.0
    for perms in itertools.product(*(itertools.permutations(b) for b in blocks)):
        order = [c for p in perms for c in p]
        total += math.exp(pl_log_likelihood(weights, order))
    return total
