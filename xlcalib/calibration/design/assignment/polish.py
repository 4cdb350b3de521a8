"""Polishing by spectral swaps ``(a,o),(a',o') -> (a',o),(a,o')`` after the LP steps of :mod:`.linking`.

A swap keeps every load, read count and conflict by construction (and no pair is read twice: candidates
that would repeat a pair are dropped).  Candidates — random pairs of reads, pairs where an assessor moves
to one of its most suitable objects, pairs from opposite ends of the Fiedler vector — are scored by the
exact first-order change of the linking objective ``phi`` (:mod:`.spectrum`): only the two objects of a
swap change, so the change is per-object algebra on ``s1 = sum c x``, ``s2 = sum c x^2`` and ``C_o``.  The
best gain-per-suitability-lost swaps on disjoint objects form a batch, kept only if the exact ``phi``
really falls and the suitability stays within the budget; the batch grows after a success and halves
after a failure.

Why after the LP steps: a swap reaches reads of every object in one round, where one LP step takes a
block of them, so on large panels the swaps carry on where the LP rounds slow down; the LP steps find the
coordinated exchanges (a link paid for elsewhere) that pairwise swaps cannot.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .problem import AllocationProblem
from .spectrum import LowSpectrum

__all__ = ["polish"]

#: Most suitable objects per assessor the suitability-guided candidates move it to.
SWAP_TOP_OBJECTS = 50
#: Candidate swaps per round: SWAP_CANDIDATES_PER_READ per read, within [SWAP_CANDIDATES_MIN, SWAP_CANDIDATES_MAX].
SWAP_CANDIDATES_PER_READ = 20
SWAP_CANDIDATES_MIN = 6_000
SWAP_CANDIDATES_MAX = 120_000
#: Rounds in a row that find no swap (or whose batch of one fails) before the polishing stops.
SWAP_FAILS = 5


@dataclass
class _SwapProblem:
    """What the swap phase works on: the object table, movable reads and each assessor's most suitable objects."""

    problem: AllocationProblem
    eo: np.ndarray  # object of each read (never changes: a swap exchanges assessors)
    O: int
    table: np.ndarray  # O x rmax read ids per object (-1 = none)
    counts: np.ndarray  # reads per object
    movable: np.ndarray  # read ids that may change hands
    fixed_e: np.ndarray  # per read: kept as it is
    top_obj: np.ndarray | None  # each assessor's most suitable objects
    n_cand: int  # candidate swaps per round

    def c_of(self, a, o):
        """Planned confidence of reads (a, o)."""
        return self.problem.c_of(a, o)

    def s_of(self, a, o):
        """Suitability of reads (a, o) (0 without suitability: a swap then loses nothing)."""
        return self.problem.S[a, o] if self.problem.S is not None else np.zeros(np.shape(a))


def polish(problem: AllocationProblem, ea, eo, required: float, k: int, rng, max_rounds: int, deadline: float):
    """Spectral swaps after the LP steps (see the module docstring): (ea, eo, stats)."""
    A, O = problem.allowed.shape
    E, ea = ea.size, ea.copy()
    prob = _swap_problem(problem, ea, eo)
    stats = {"swap_rounds": 0, "swaps": 0}
    if prob.movable.size < 2 or A < 2:
        return ea, eo, stats
    c_e = problem.c_of(ea, eo).astype(float)
    floor_co = np.bincount(eo, weights=c_e, minlength=O)
    floor_min = floor_co[prob.counts > 0].min() if (prob.counts > 0).any() else 0.0  # no object may fall below
    room = float(problem.S[ea, eo].sum()) - required if problem.S is not None else np.inf
    spec = LowSpectrum.of(ea, eo, c_e, A, O, k)
    mu, Xw = _swap_weights(spec)
    batch, fails = max(1, E // 20), 0
    for rnd in range(max_rounds):
        if time.perf_counter() > deadline:
            break
        stats["swap_rounds"] = rnd + 1
        found = _best_batch(prob, ea, c_e, Xw, mu, floor_min, room, batch, rng)
        if found is None:
            fails += 1
            if fails > SWAP_FAILS:
                break
            continue
        e1, e2, lost = found
        trial, c_trial = _swapped(prob, ea, c_e, e1, e2)
        new = LowSpectrum.of(trial, eo, c_trial, A, O, k)
        if new.phi < spec.phi * (1 - 1e-9):
            ea, c_e, spec = trial, c_trial, new
            mu, Xw = _swap_weights(spec)
            room -= lost
            stats["swaps"] += int(e1.size)
            batch, fails = int(min(max(1, E // 5), batch * 1.5 + 1)), 0
        else:
            if batch == 1:
                fails += 1
                if fails > SWAP_FAILS:
                    break
            batch = max(1, batch // 2)
    return ea, eo, stats


def _swap_problem(problem: AllocationProblem, ea, eo) -> _SwapProblem:
    """The object table, movable reads and each assessor's most suitable objects of reads (ea, eo)."""
    A, O = problem.allowed.shape
    table, counts = _object_table(eo, O)
    fixed_e = problem.fixed_mask[ea, eo]
    top_obj = None
    if problem.S is not None:
        T = min(SWAP_TOP_OBJECTS, O)
        masked = np.where(problem.allowed, problem.S, -np.inf)
        top_obj = np.argpartition(-masked, T - 1, axis=1)[:, :T] if T < O else np.tile(np.arange(O), (A, 1))
    n_cand = int(min(max(SWAP_CANDIDATES_PER_READ * ea.size, SWAP_CANDIDATES_MIN), SWAP_CANDIDATES_MAX))
    return _SwapProblem(problem, eo, O, table, counts, np.flatnonzero(~fixed_e), fixed_e, top_obj, n_cand)


def _object_table(eo: np.ndarray, O: int):
    """Padded (O x rmax) table of edge ids per object (-1 = none)."""
    order = np.argsort(eo, kind="stable")
    counts = np.bincount(eo, minlength=O)
    rmax = int(counts.max()) if counts.size else 0
    first = np.cumsum(counts) - counts
    pos = np.arange(eo.size) - np.repeat(first, counts)
    table = np.full((O, max(rmax, 1)), -1, dtype=np.intp)
    table[eo[order], pos] = order
    return table, counts


def _swap_weights(spec: LowSpectrum) -> tuple[np.ndarray, np.ndarray]:
    """(mu_j, assessor eigenvectors x_j scaled by sqrt(d phi / d mu_j)): the swap gains' first-order weights."""
    sigma = 1.0 - spec.lam
    weight = spec.weight / (2.0 * np.maximum(sigma, 1e-12))  # d lambda / d mu = 1 / (2 sigma)
    return 1.0 - sigma ** 2, spec.ya * np.sqrt(2.0 * weight)[None, :]


def _best_batch(prob: _SwapProblem, ea, c_e, Xw, mu, floor_min: float, room: float, batch: int, rng):
    """One round's batch: (reads e1, reads e2 that swap assessors, suitability lost), or None when no
    candidate gains, keeps every object's C_o above the floor and stays within the budget."""
    pair = _candidate_swaps(prob, ea, Xw, rng)
    if pair is None:
        return None
    e1, e2 = pair
    loss, gain, floor = _swap_gains(prob, ea, c_e, e1, e2, Xw, mu)
    ok = (gain > 1e-12) & (floor >= floor_min - 1e-12) & (loss <= room)
    if not ok.any():
        return None
    keep = _swap_batch(prob, e1, e2, loss, gain, ok, room, batch)
    if keep.size == 0:
        return None
    return e1[keep], e2[keep], float(loss[keep].sum())


def _swapped(prob: _SwapProblem, ea, c_e, e1, e2):
    """(assessors, confidences) of the reads after reads e1 and e2 exchange their assessors."""
    eo = prob.eo
    a1, a2, o1, o2 = ea[e1], ea[e2], eo[e1], eo[e2]
    trial = ea.copy()
    trial[e1], trial[e2] = a2, a1
    c_trial = c_e.copy()
    c_trial[e1], c_trial[e2] = prob.c_of(a2, o1), prob.c_of(a1, o2)
    return trial, c_trial


def _candidate_swaps(prob: _SwapProblem, ea, Xw, rng):
    """Candidate read pairs (e1, e2) whose swap keeps conflicts and pairs unique (distinct pairs only):
    uniform pairs, suitability-guided pairs and pairs from opposite ends of the Fiedler vector."""
    e1, e2 = _draw_pairs(prob, ea, Xw, rng)
    a1, o1, a2, o2 = ea[e1], prob.eo[e1], ea[e2], prob.eo[e2]
    ok = (o1 != o2) & (a1 != a2) & prob.problem.allowed[a2, o1] & prob.problem.allowed[a1, o2]
    # no duplicate pairs: a2 must not already read o1, a1 not o2
    t1, t2 = prob.table[o1], prob.table[o2]
    ok &= ~np.any((t1 >= 0) & (ea[np.where(t1 >= 0, t1, 0)] == a2[:, None]), axis=1)
    ok &= ~np.any((t2 >= 0) & (ea[np.where(t2 >= 0, t2, 0)] == a1[:, None]), axis=1)
    if not ok.any():
        return None
    e1, e2 = e1[ok], e2[ok]
    key = np.minimum(e1, e2).astype(np.int64) * ea.size + np.maximum(e1, e2)
    _, first = np.unique(key, return_index=True)
    return e1[first], e2[first]


def _draw_pairs(prob: _SwapProblem, ea, Xw, rng):
    """``n_cand`` read pairs (e1, e2), a third of each kind: uniform over the movable reads; e2 a read of one of
    e1's assessor's most suitable objects (with suitability); the two ends of the Fiedler vector.  A kept
    read drawn as e2 becomes e1 (a swap with itself, dropped later)."""
    movable, table, counts = prob.movable, prob.table, prob.counts
    n_cand = prob.n_cand
    m = n_cand // 3
    e1 = movable[rng.integers(0, movable.size, n_cand, dtype=np.intp)]
    e2 = movable[rng.integers(0, movable.size, n_cand, dtype=np.intp)]
    if prob.top_obj is not None:
        o2 = prob.top_obj[ea[e1[m:2 * m]], rng.integers(0, prob.top_obj.shape[1], m, dtype=np.intp)]
        pick = table[o2, (rng.random(m) * np.maximum(counts[o2], 1)).astype(np.intp)]
        e2[m:2 * m] = np.where(pick >= 0, pick, e2[m:2 * m])
    fied = Xw[:, 1] if Xw.shape[1] > 1 else Xw[:, 0]
    order = movable[np.argsort(fied[ea[movable]], kind="stable")]
    q = max(1, order.size // 10)
    e1[2 * m:] = order[rng.integers(0, q, n_cand - 2 * m, dtype=np.intp)]
    e2[2 * m:] = order[order.size - 1 - rng.integers(0, q, n_cand - 2 * m, dtype=np.intp)]
    return e1, np.where(prob.fixed_e[e2], e1, e2)


def _swap_energy(s1, s2, C, c_out, x_out, c_in, x_in, mu):
    """Q = sum_j [(1 - mu_j) s2_j - s1_j^2 / C] of objects after one read moves from x_out to x_in.

    ``s1 = sum_a c x``, ``s2 = sum_a c x^2`` (columns: eigenvectors, already
    scaled by sqrt of their weights) and ``C = C_o`` of each object before
    the change.  ``x' (M - mu D) x = sum_o Q_o``, so the difference to the
    current ``Q_o`` is the first-order change of the weighted eigenvalues.
    """
    c_out = np.asarray(c_out, dtype=float)[:, None]
    c_in = np.asarray(c_in, dtype=float)[:, None]
    s1n = s1 - c_out * x_out + c_in * x_in
    s2n = s2 - c_out * x_out * x_out + c_in * x_in * x_in
    Cn = C[:, None] - c_out + c_in
    return (s2n * (1.0 - mu)[None, :] - s1n * s1n / np.where(Cn > 0, Cn, 1.0)).sum(axis=1)


def _swap_gains(prob: _SwapProblem, ea, c_e, e1, e2, Xw, mu):
    """(suitability lost, first-order spectral gain, smallest C_o after) of each candidate swap.

    Only the two objects of a swap change, so the change of the weighted low spectrum is exact per-object
    algebra on s1 = sum c x, s2 = sum c x^2 and C_o updated by the one read that changes hands.
    """
    eo, O = prob.eo, prob.O
    a1, o1, a2, o2 = ea[e1], eo[e1], ea[e2], eo[e2]
    C_o = np.bincount(eo, weights=c_e, minlength=O)
    xe = Xw[ea]
    s1o = np.column_stack([np.bincount(eo, weights=c_e * xe[:, j], minlength=O) for j in range(xe.shape[1])])
    s2o = np.column_stack([np.bincount(eo, weights=c_e * xe[:, j] ** 2, minlength=O) for j in range(xe.shape[1])])
    Qo = (s2o * (1.0 - mu)[None, :] - s1o * s1o / np.where(C_o > 0, C_o, 1.0)[:, None]).sum(axis=1)
    loss = prob.s_of(a1, o1) + prob.s_of(a2, o2) - prob.s_of(a2, o1) - prob.s_of(a1, o2)
    c1_new, c2_new = prob.c_of(a2, o1), prob.c_of(a1, o2)
    gain = (_swap_energy(s1o[o1], s2o[o1], C_o[o1], c_e[e1], Xw[a1], c1_new, Xw[a2], mu) - Qo[o1]
            + _swap_energy(s1o[o2], s2o[o2], C_o[o2], c_e[e2], Xw[a2], c2_new, Xw[a1], mu) - Qo[o2])
    floor = np.minimum(C_o[o1] - c_e[e1] + c1_new, C_o[o2] - c_e[e2] + c2_new)
    return loss, gain, floor


def _swap_batch(prob: _SwapProblem, e1, e2, loss, gain, ok, room: float, batch: int) -> np.ndarray:
    """The best gain-per-suitability-lost swaps on disjoint objects, within the budget left (candidate indices)."""
    idx = np.flatnonzero(ok)
    scale = np.median(np.abs(loss[idx])) + 1e-12 if prob.problem.S is not None else 1.0
    ratio = gain[idx] / (np.maximum(loss[idx], 0.0) + 1e-3 * scale)
    idx = idx[np.argsort(-ratio, kind="stable")]
    o1, o2 = prob.eo[e1], prob.eo[e2]
    # object-disjoint batch: keep a candidate only where both its objects first appear
    objs = np.concatenate([o1[idx], o2[idx]])
    pos = np.concatenate([np.arange(idx.size), np.arange(idx.size)])
    first_seen = np.full(prob.O, idx.size, dtype=np.intp)
    np.minimum.at(first_seen, objs, pos)
    keep = idx[(first_seen[o1[idx]] == np.arange(idx.size)) & (first_seen[o2[idx]] == np.arange(idx.size))]
    over = np.cumsum(loss[keep]) > room  # the longest prefix that stays within the budget
    return keep[:int(np.argmax(over)) if over.any() else keep.size][:batch]
