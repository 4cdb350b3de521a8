"""Who reads what: an allocation that is suitable, within loads, free of conflicts, and calibratable.

Panel secretaries usually allocate by expertise, which gives clusters of
assessors who never share an object — the low-``mu2`` designs calibration
cannot repair afterwards.  :func:`assign` keeps (almost) all of the
suitability of an expertise-driven allocation and spends a small,
user-chosen part of it on links between the clusters: the suitability-only
optimum is a transportation LP (HiGHS), and swaps that keep every hard
constraint then raise the low spectrum of the assessor graph within the
suitability budget.  Notation as in :mod:`xlcalib.calibration.design`.

Method
------
1. *Suitability-only optimum* — the transportation LP
   ``max sum_ao S_ao x_ao`` subject to the constraints above, solved by
   HiGHS' dual simplex (``scipy.optimize.linprog``).  Its constraint
   matrix is a network matrix, so the vertex optimum is a 0/1 allocation.
   Ties are broken by tiny seeded random costs.  Without suitability
   the costs are seeded random numbers and each load unit carries a
   convex cost, so the loads are as even as the limits allow — a random
   balanced allocation.
2. *Connectivity within the suitability budget* — starting from that
   optimum, swaps ``(a,o),(a',o') -> (a',o),(a,o')`` (which keep every
   load, read count and conflict) are accepted while the total
   suitability stays >= ``min_suitability_share`` x the optimum.  Each
   round computes the ``K+1`` smallest eigenpairs ``(mu_j, x_j)`` of
   ``T`` (K = :data:`SPECTRUM_K`) and scores candidate swaps by the
   first-order change of ``sum_j 1/(mu_j + eps)``:
   ``sum_j (dmu_j)/(mu_j+eps)^2`` with
   ``dmu_j = x_j'(dM - mu_j dD)x_j`` — exact per-object algebra, since a
   swap changes only two objects.  Candidates are random pairs, pairs
   where an assessor moves to one of its most suitable objects, and
   pairs from opposite ends of the Fiedler vector.  The best
   gain-per-suitability-lost swaps on disjoint objects form a batch; the
   batch is kept only if the exact objective improves (otherwise it is
   halved).  A swap may not lower the smallest ``C_o`` below the start's
   (objects stay comparable).

Why this objective: ``mu2`` alone stalls when several weak links tie
(five expertise clusters give four near-zero eigenvalues; raising one
leaves ``mu2`` unchanged), while the sum of reciprocals of the low
spectrum rises with every weak link repaired and tracks the calibrated
values' error variance (``sum 1/mu_j`` is the RMS robustness bound's term, MacKay et al. 2017).
Why swaps: they keep every hard constraint by construction, so the
result never depends on a penalty weight, and the LP optimum is the best
possible start for the suitability budget.

Budget: at most ``max_rounds`` rounds (each one eigen-solve), and the
swap phase ends when the whole call has run ``time_limit`` seconds (the
LP is always solved to optimality first, and at least
:data:`MIN_SWAP_ROUNDS` rounds run); ``stats['stopped']`` says
which limit ended it.  Small panels converge well within both (30 x 150
in a few seconds); for 1,000 assessors x 10,000 objects the LP takes
about 10-25 s here and the swaps use the rest of the time budget.  The round limit keeps the result
reproducible for a given ``seed``; the time limit is a safeguard (when it ends the phase
the result depends on the machine's speed, and ``stopped`` says so).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
from scipy.optimize import linprog

from ..cells import real_argument, seed_argument, whole_argument
from ..errors import InputError
from .design import (
    DesignReport,
    allocation_report,
    count_components,
    name_index,
    pair_grid,
    pair_indices,
    per_item_counts,
)
from .graph import low_spectrum

__all__ = ["Assignment", "assign"]

#: Largest number of assessor-object pairs given to the LP in one piece; above
#: it each object starts with its most suitable assessors only and the LP's
#: duals bring in every other pair that could improve it (column generation),
#: so the result is still the optimum over all pairs.
FULL_LP_PAIRS = 2_000_000
#: Assessors per object in the first restricted LP (large panels only).
CANDIDATES_PER_OBJECT = 8
#: Most improving pairs per object brought into the LP per pricing round.
ENTERING_PER_OBJECT = 3
#: Swap rounds always run (when there is anything to improve), even past the time limit: a slow LP on a
#: busy machine must not leave a disconnected allocation untouched.
MIN_SWAP_ROUNDS = 5
#: Number of smallest non-trivial eigenvalues whose reciprocals the swap phase reduces.
SPECTRUM_K = 8
#: HiGHS method for the transportation LP (dual simplex: returns a vertex, hence a 0/1 allocation).
LP_METHOD = "highs-ds"


@dataclass
class Assignment:
    """An allocation of reads with its design report and the suitability-only one for comparison.

    ``allocation``: DataFrame (assessor, object[, suitability][, fixed]) one row per read.
    ``report``: :class:`DesignReport` of it.  ``baseline_allocation`` /
    ``baseline``: the suitability-only optimum (without suitability: the
    balanced random start) and its report.  ``stats``: how it was found
    (best suitability, the required minimum, swap rounds, swaps kept, why the
    swap phase stopped, seconds).
    """

    allocation: pd.DataFrame
    report: DesignReport
    baseline_allocation: pd.DataFrame
    baseline: DesignReport
    stats: dict[str, Any] = field(default_factory=dict)

    def comparison(self) -> pd.DataFrame:
        """(statistic, this allocation, suitability-only, meaning) — the Design sheet's table."""
        mine, base = self.report.table(), self.baseline.table()
        label = "suitability only" if self.stats.get("has_suitability") else "balanced start"
        return pd.DataFrame({"statistic": mine["statistic"], "this allocation": mine["value"],
                             label: base["value"], "meaning": mine["meaning"]})


# ----------------------------------------------------------------------------
# Feasibility (clear messages before any solver runs)
# ----------------------------------------------------------------------------
def _check_feasible(reads, max_load, min_load, allowed_o, allowed_a, fixed_o, fixed_a, a_names, o_names):
    R = int(reads.sum())
    problems = []
    n_obj = len(o_names)
    uniform = np.all(reads == reads[0])
    reads_text = (f"{n_obj} objects × {int(reads[0])} reads = {R} reads" if uniform
                  else f"the objects want {R} reads in all")
    if max_load.sum() < R:
        problems.append(f"{reads_text} but the assessors' max loads add up to {int(max_load.sum())} "
                        f"({R - int(max_load.sum())} short)")
    if min_load.sum() > R:
        problems.append(f"the assessors' min loads add up to {int(min_load.sum())} but there are only {R} reads "
                        f"({int(min_load.sum()) - R} too many)")
    bad = np.flatnonzero(min_load > max_load)
    for i in bad[:5]:
        problems.append(f"assessor {a_names[i]!r}: min load {min_load[i]} exceeds max load {max_load[i]}")
    short = np.flatnonzero(allowed_o < reads)
    for i in short[:5]:
        problems.append(f"object {o_names[i]!r} wants {reads[i]} reads but only {allowed_o[i]} assessors have no "
                        f"conflict with it ({reads[i] - allowed_o[i]} short)")
    if short.size > 5:
        problems.append(f"... and {short.size - 5} more objects with too few non-conflicted assessors")
    low = np.flatnonzero(allowed_a < min_load)
    for i in low[:5]:
        problems.append(f"assessor {a_names[i]!r} has min load {min_load[i]} but only {allowed_a[i]} objects without "
                        f"a conflict")
    over_o = np.flatnonzero(fixed_o > reads)
    for i in over_o[:5]:
        problems.append(f"object {o_names[i]!r} already has {fixed_o[i]} kept reads but wants only {reads[i]}")
    over_a = np.flatnonzero(fixed_a > max_load)
    for i in over_a[:5]:
        problems.append(f"assessor {a_names[i]!r} already has {fixed_a[i]} kept reads but max load {max_load[i]}")
    if problems:
        raise InputError("no allocation is possible: " + "; ".join(problems))


def _max_flow_message(reads, max_load, min_load, allowed, a_names, o_names) -> str:
    """Why the constraints cannot all hold together: the most reads that can be placed (max flow)."""
    A, O = len(a_names), len(o_names)
    ai, oi = np.nonzero(allowed)
    src, sink = A + O, A + O + 1
    rows = np.concatenate([np.full(O, src), oi + A, np.arange(A)])
    cols = np.concatenate([np.arange(O) + A, ai, np.full(A, sink)])
    caps = np.concatenate([reads, np.ones(ai.size, dtype=np.int64), max_load]).astype(np.int32)
    graph = sp.csr_matrix((caps, (rows, cols)), shape=(A + O + 2, A + O + 2))
    flow = csgraph.maximum_flow(graph, src, sink)
    placed = int(flow.flow_value)
    if placed == int(reads.sum()):
        return (f"no allocation satisfies reads, loads and conflicts together: all {placed} reads can be placed, "
                f"but not while every assessor reaches their min load (min loads add up to {int(min_load.sum())}); "
                f"lower some min loads")
    per_obj = np.asarray(flow.flow[src, A:A + O].todense()).ravel()
    short = np.flatnonzero(per_obj < reads)
    names = ", ".join(repr(o_names[i]) for i in short[:5]) + (" ..." if short.size > 5 else "")
    return (f"no allocation satisfies reads, loads and conflicts together: at most {placed} of the {int(reads.sum())} "
            f"reads can be placed ({int(reads.sum()) - placed} short; the assessors free to read e.g. {names} "
            f"are already at their max loads)")


# ----------------------------------------------------------------------------
# The transportation LP (HiGHS)
# ----------------------------------------------------------------------------
def _solve_lp(cost, allowed, reads, max_load, min_load, fixed_mask, load_penalty, a_names, o_names):
    """Min sum cost x over allowed pairs, reads exact, loads within [min, max], x in {0, 1}.

    Load units are explicit variables y_ak (k = 1..max_a) with cost
    ``load_penalty * k``: convex, so loads are as even as the costs allow
    (``load_penalty = 0``: one load variable per assessor instead).
    The constraint matrix is a network matrix (totally unimodular), so the
    simplex optimum HiGHS returns is integral.  Large panels: column
    generation from the duals (see :data:`FULL_LP_PAIRS`).
    """
    A, O = allowed.shape
    R = int(reads.sum())
    kmax = np.minimum(max_load, np.minimum(allowed.sum(axis=1), R)).astype(np.intp)
    kmax = np.maximum(kmax, min_load)
    if load_penalty > 0:
        y_a = np.repeat(np.arange(A, dtype=np.intp), kmax)
        y_k = (np.arange(y_a.size) - np.repeat(np.cumsum(kmax) - kmax, kmax)) + 1
        y_cost = load_penalty * y_k
        y_lb, y_ub = (y_k <= min_load[y_a]).astype(float), np.ones(y_a.size)
    else:  # no balancing wanted: one load variable per assessor, min..max (far fewer columns)
        y_a = np.arange(A, dtype=np.intp)
        y_cost, y_lb, y_ub = np.zeros(A), min_load.astype(float), kmax.astype(float)
    big = 10.0 * (float(np.abs(cost[allowed]).max()) + 1.0) * max(1, min(A, O))
    # pricing tolerance: the optimum is exact up to tol per read (tie-breaking costs are 1e-7 of the spread)
    tol = 1e-6 * (float(cost[allowed].max() - cost[allowed].min()) or 1.0)

    if allowed.sum() <= FULL_LP_PAIRS:
        active = allowed.copy()
    else:
        active = np.zeros_like(allowed)
        masked = np.where(allowed, cost, np.inf)
        k = min(CANDIDATES_PER_OBJECT, A)
        top = np.argpartition(masked, k - 1, axis=0)[:k]  # k cheapest assessors per object
        active[top, np.arange(O)[None, :]] = True
        ka = int(min(O, int(max_load.max()) + 10))  # and each assessor's most suitable objects
        top_a = np.argpartition(masked, ka - 1, axis=1)[:, :ka]
        active[np.arange(A)[:, None], top_a] = True
        del masked
        active &= allowed
        active |= fixed_mask
    for _round in range(50):
        pa, po = np.nonzero(active)
        nx, ny = pa.size, y_a.size
        # artificial slacks (cost big) keep a restricted LP feasible: unplaced reads (per object) and
        # missing load units (per assessor); the duals then price in the pairs that remove them
        c = np.concatenate([cost[pa, po], y_cost, np.full(O + A, big)])
        rows = np.concatenate([po, O + pa, O + y_a, np.arange(O + A)])
        cols = np.concatenate([np.arange(nx), np.arange(nx), nx + np.arange(ny), nx + ny + np.arange(O + A)])
        vals = np.concatenate([np.ones(nx), np.ones(nx), -np.ones(ny), np.ones(O + A)])
        A_eq = sp.csc_matrix((vals, (rows, cols)), shape=(O + A, nx + ny + O + A))
        b_eq = np.concatenate([reads, np.zeros(A)]).astype(float)
        lb = np.concatenate([fixed_mask[pa, po].astype(float), y_lb, np.zeros(O + A)])
        ub = np.concatenate([np.ones(nx), y_ub, reads.astype(float), min_load.astype(float)])
        res = linprog(c, A_eq=A_eq, b_eq=b_eq, bounds=np.column_stack([lb, ub]), method=LP_METHOD)
        if res.status != 0:
            raise RuntimeError(f"the LP solver failed: {res.message}")
        x = res.x
        if active.sum() == allowed.sum():
            break
        dual = res.eqlin.marginals
        reduced = cost - dual[:O][None, :] - dual[O:][:, None]
        reduced[~allowed | active] = np.inf
        entering = reduced < -tol
        if not entering.any():
            break
        # bring in the most improving pairs per object (bounded per round)
        per_obj = min(ENTERING_PER_OBJECT, A)
        limit = np.partition(np.where(entering, reduced, np.inf), per_obj - 1, axis=0)[per_obj - 1] if A > per_obj else np.inf
        active |= entering & (reduced <= limit)
    slack = x[nx + ny:]
    if slack.sum() > 0.5:
        raise InputError(_max_flow_message(reads, max_load, min_load, allowed, a_names, o_names))
    chosen = x[:nx] > 0.5
    if np.any(np.abs(x[:nx] - np.round(x[:nx])) > 1e-6):  # a non-vertex answer would be a solver defect
        raise RuntimeError("the LP returned a fractional allocation")
    return pa[chosen].astype(np.intp), po[chosen].astype(np.intp)


# ----------------------------------------------------------------------------
# The swap phase
# ----------------------------------------------------------------------------
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


@dataclass
class _SwapProblem:
    """What the swap phase works on: the object table, movable reads, constraints and candidate guides."""

    eo: np.ndarray
    A: int
    O: int
    table: np.ndarray  # O x rmax read ids per object (-1 = none)
    counts: np.ndarray  # reads per object
    movable: np.ndarray  # read ids that may change hands
    fixed_e: np.ndarray
    allowed: np.ndarray  # A x O conflict-free pairs
    conf: np.ndarray | None  # planned confidences (None = 1)
    S: np.ndarray | None  # suitability (None = none)
    top_obj: np.ndarray | None  # each assessor's most suitable objects
    n_cand: int

    def c_of(self, a, o):
        return self.conf[a, o] if self.conf is not None else np.ones(np.shape(a))

    def s_of(self, a, o):
        return self.S[a, o] if self.S is not None else np.zeros(np.shape(a))


def _swap_problem(ea, eo, fixed_e, A, O, S, P) -> _SwapProblem:
    table, counts = _object_table(eo, O)
    top_obj = None
    if S is not None:
        T = min(50, O)
        masked = np.where(P["allowed"], S, -np.inf)
        top_obj = np.argpartition(-masked, T - 1, axis=1)[:, :T] if T < O else np.tile(np.arange(O), (A, 1))
    return _SwapProblem(eo, A, O, table, counts, np.flatnonzero(~fixed_e), fixed_e, P["allowed"], P["conf"], S,
                        top_obj, int(min(max(20 * ea.size, 6_000), 120_000)))


def _candidate_swaps(prob: _SwapProblem, ea, Xw, rng):
    """Candidate read pairs (e1, e2) whose swap keeps conflicts and pairs unique: uniform pairs,
    suitability-guided pairs and pairs from opposite ends of the Fiedler vector (at most 120,000 a round)."""
    movable, table, counts, eo = prob.movable, prob.table, prob.counts, prob.eo
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
    e2 = np.where(prob.fixed_e[e2], e1, e2)
    a1, o1, a2, o2 = ea[e1], eo[e1], ea[e2], eo[e2]
    ok = (o1 != o2) & (a1 != a2) & prob.allowed[a2, o1] & prob.allowed[a1, o2]
    # no duplicate pairs: a2 must not already read o1, a1 not o2
    t1, t2 = table[o1], table[o2]
    ok &= ~np.any((t1 >= 0) & (ea[np.where(t1 >= 0, t1, 0)] == a2[:, None]), axis=1)
    ok &= ~np.any((t2 >= 0) & (ea[np.where(t2 >= 0, t2, 0)] == a1[:, None]), axis=1)
    if not ok.any():
        return None
    e1, e2 = e1[ok], e2[ok]
    key = np.minimum(e1, e2).astype(np.int64) * ea.size + np.maximum(e1, e2)
    _, first = np.unique(key, return_index=True)
    return e1[first], e2[first]


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
    scale = np.median(np.abs(loss[idx])) + 1e-12 if prob.S is not None else 1.0
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


def _improve(ea, eo, fixed_e, A, O, S, P, budget, rng, max_rounds, time_limit):
    """Fiedler-guided swaps (a,o),(a',o') -> (a',o),(a,o') that keep loads and reads; see :func:`assign`."""
    E = ea.size
    ea = ea.copy()
    prob = _swap_problem(ea, eo, fixed_e, A, O, S, P)
    stats = {"rounds": 0, "swaps": 0, "stopped": "no swap possible"}
    if prob.movable.size < 2 or A < 2:
        return ea, stats
    c_e = prob.c_of(ea, eo).astype(float)
    floor_co = np.bincount(eo, weights=c_e, minlength=O)
    floor_min = floor_co[prob.counts > 0].min() if (prob.counts > 0).any() else 0.0
    eps = 1e-3
    # enough eigenpairs to see every weak link of the start: at least one per component beyond the first
    k = min(max(SPECTRUM_K, count_components(ea, eo, A, O)[0] + 1) + 1, A, 48)
    batch, spent, started = max(1, E // 20), 0.0, time.perf_counter()

    def phi_and_vectors(ea_now, c_now):
        active, mu, X = low_spectrum(ea_now, eo, c_now, A, O, k, vectors=True, seed=int(rng.integers(2**31)))
        Xfull = np.zeros((A, mu.size))
        Xfull[active] = X
        weight = 1.0 / (mu + eps) ** 2  # the trivial direction (constant x) has zero energy change anyway
        return float(np.sum(1.0 / (mu[1:] + eps))), mu, Xfull * np.sqrt(weight)[None, :]

    phi, mu, Xw = phi_and_vectors(ea, c_e)
    fails = 0
    for rnd in range(max_rounds):
        if rnd >= MIN_SWAP_ROUNDS and time.perf_counter() - started > time_limit:
            stats["stopped"] = f"time limit ({time_limit:.0f} s left for swaps)"
            break
        stats["rounds"] = rnd + 1
        keep, why = None, "no feasible swap found"
        pair = _candidate_swaps(prob, ea, Xw, rng)
        if pair is not None:
            e1, e2 = pair
            loss, gain, floor = _swap_gains(prob, ea, c_e, e1, e2, Xw, mu)
            room = budget - spent
            ok = (gain > 1e-12) & (floor >= floor_min - 1e-12) & (loss <= room)
            why = "no improving swap within the suitability budget"
            if ok.any():
                keep = _swap_batch(prob, e1, e2, loss, gain, ok, room, batch)
        if keep is None or keep.size == 0:
            fails += 1
            if fails > 5:
                stats["stopped"] = why
                break
            continue
        a1, a2, o1, o2 = ea[e1[keep]], ea[e2[keep]], eo[e1[keep]], eo[e2[keep]]
        trial = ea.copy()
        trial[e1[keep]], trial[e2[keep]] = a2, a1
        c_trial = c_e.copy()
        c_trial[e1[keep]], c_trial[e2[keep]] = prob.c_of(a2, o1), prob.c_of(a1, o2)
        phi_new, mu_new, Xw_new = phi_and_vectors(trial, c_trial)
        if phi_new < phi * (1 - 1e-9):
            ea, c_e, phi, mu, Xw = trial, c_trial, phi_new, mu_new, Xw_new
            spent += float(loss[keep].sum())
            stats["swaps"] += int(keep.size)
            batch = int(min(max(1, E // 5), batch * 1.5 + 1))
            fails = 0
        else:
            if batch == 1:
                fails += 1
                if fails > 5:
                    stats["stopped"] = "converged (no single swap improves the spectrum)"
                    break
            batch = max(1, batch // 2)
    else:
        stats["stopped"] = f"round limit ({max_rounds})"
    stats["suitability_spent"] = spent
    return ea, stats


# ----------------------------------------------------------------------------
# Public entry point
# ----------------------------------------------------------------------------
#: Bounds of assign's work budget (rounds of one eigen-solve each; seconds of the swap phase).
MAX_ROUNDS = 100_000
MAX_TIME_LIMIT = 3600.0


def assign(assessors, objects, reads_per_object, max_load, min_load=None, conflicts=None, suitability=None,
           min_suitability_share: float = 0.95, planned_confidence=None, seed: int = 0, fixed=None,
           max_rounds: int = 300, time_limit: float = 50.0) -> Assignment:
    """Allocate reads to assessors: suitable, within loads, free of conflicts, and calibratable.

    Hard constraints, never violated: every object gets exactly its reads;
    every assessor reads between ``min_load`` and ``max_load`` objects; no
    assessor reads an object they have a conflict of interest with; no pair
    twice; ``fixed`` pairs (e.g. reads already scored) are kept.

    The method, and why, are in the module docstring.

    Parameters
    ----------
    assessors, objects:
        Names (unique).
    reads_per_object:
        Reads each object needs: a whole number, or one per object
        (sequence in object order, or Series/dict keyed by object).
    max_load, min_load:
        Reads per assessor: upper (required) and lower (default 0) limits;
        scalar or per assessor.
    conflicts:
        (assessor, object) pairs that must never be allocated (two-column
        table or pairs).
    suitability:
        How suitable each assessor is for each object (>= 0; larger is
        better): a grid DataFrame (index assessors, columns objects), a long
        (assessor, object, suitability) table, or an A x O array; missing = 0.
    min_suitability_share:
        The allocation keeps at least this share of the suitability-only
        optimum (0..1).  1 returns the suitability-only allocation.
    planned_confidence:
        Expected confidence ``c_ao`` of each read (same forms as
        ``suitability``; default 1) — enters ``mu2`` and ``C_o``.
    seed:
        Random seed (tie-breaking and swap candidates); same seed, same input,
        same allocation.
    fixed:
        (assessor, object) pairs kept as they are (count towards loads and reads).

    Returns
    -------
    Assignment

    Examples
    --------
    >>> import xlcalib
    >>> r = xlcalib.assign([f"A{i}" for i in range(6)], [f"O{j}" for j in range(12)],
    ...                    reads_per_object=2, max_load=4)
    >>> len(r.allocation), int(r.report.loads.max()), r.report.n_components
    (24, 4, 1)
    """
    started = time.perf_counter()
    seed, max_rounds = seed_argument(seed), whole_argument(max_rounds, "max_rounds", low=0, high=MAX_ROUNDS)
    time_limit = real_argument(time_limit, "time_limit", low=0, high=MAX_TIME_LIMIT, low_open=True)
    share = real_argument(min_suitability_share, "min_suitability_share", low=0, high=1)
    problem = _allocation_problem(assessors, objects, reads_per_object, max_load, min_load, conflicts, suitability,
                                  planned_confidence, fixed)
    rng = np.random.default_rng(seed)
    ba, bo = _suitability_optimum(problem, rng)
    S, Pc = problem.S, problem.conf
    best = float(S[ba, bo].sum()) if S is not None else 0.0
    budget = (1.0 - share) * best if S is not None else np.inf
    lp_seconds = time.perf_counter() - started
    if share < 1.0 or S is None:
        A, O = len(problem.a_names), len(problem.o_names)
        ea, stats = _improve(ba, bo, problem.fixed_mask[ba, bo], A, O, S, {"allowed": problem.allowed, "conf": Pc},
                             budget, rng, max_rounds, max(0.0, time_limit - (time.perf_counter() - started)))
    else:
        ea, stats = ba.copy(), {"rounds": 0, "swaps": 0, "stopped": "min_suitability_share = 1: no swaps",
                                "suitability_spent": 0.0}
    stats.update({"has_suitability": S is not None, "best_suitability": best if S is not None else float("nan"),
                  "required_suitability": share * best if S is not None else float("nan"),
                  "min_suitability_share": share, "seed": seed, "lp_seconds": lp_seconds,
                  "seconds": time.perf_counter() - started})
    return _assignment(problem, ea, ba, bo, best, stats)


@dataclass
class _AllocationProblem:
    """The checked inputs of :func:`assign`: names, reads and loads, conflicts, kept reads, suitability."""

    a_names: pd.Index
    o_names: pd.Index
    reads: np.ndarray
    max_load: np.ndarray
    min_load: np.ndarray
    allowed: np.ndarray  # A x O: no conflict
    fixed_mask: np.ndarray  # A x O: kept reads
    has_fixed: bool
    S: np.ndarray | None
    conf: np.ndarray | None


def _kept_reads(fixed, allowed, a_names, o_names) -> tuple[np.ndarray, bool]:
    """The A x O mask of reads kept as they are; a kept read twice or in conflict is refused by row."""
    A, O = allowed.shape
    fa, fo = pair_indices(fixed, a_names, o_names, "kept reads")
    fixed_mask = np.zeros((A, O), dtype=bool)
    if fa.size:
        key = pd.Series(fa.astype(np.int64) * O + fo)
        if key.duplicated().any():
            i = int(np.flatnonzero(key.duplicated().to_numpy())[0])
            raise InputError(f"kept reads, row {i + 1}: assessor {a_names[fa[i]]!r} reads object {o_names[fo[i]]!r} twice")
        clash = np.flatnonzero(~allowed[fa, fo])
        if clash.size:
            i = int(clash[0])
            raise InputError(f"kept reads, row {i + 1}: assessor {a_names[fa[i]]!r} has a conflict with object "
                             f"{o_names[fo[i]]!r}")
        fixed_mask[fa, fo] = True
    return fixed_mask, bool(fa.size)


def _allocation_problem(assessors, objects, reads_per_object, max_load, min_load, conflicts, suitability,
                        planned_confidence, fixed) -> _AllocationProblem:
    """Every input of :func:`assign` checked, with a message naming the item; infeasible limits refused up front."""
    a_names = name_index(assessors, "assessors")
    o_names = name_index(objects, "objects")
    A, O = len(a_names), len(o_names)
    reads = per_item_counts(reads_per_object, o_names, "reads per object", "objects")
    max_l = per_item_counts(max_load, a_names, "max load", "assessors")
    min_l = per_item_counts(min_load, a_names, "min load", "assessors", allow_none=True)
    min_l = np.zeros(A, dtype=np.intp) if min_l is None else min_l
    if A * O > 50_000_000:
        raise InputError(f"{A} assessors x {O} objects = {A * O:,} pairs is more than assign handles (50,000,000)")
    ca, co = pair_indices(conflicts, a_names, o_names, "conflicts")
    allowed = np.ones((A, O), dtype=bool)
    allowed[ca, co] = False
    fixed_mask, has_fixed = _kept_reads(fixed, allowed, a_names, o_names)
    S = pair_grid(suitability, a_names, o_names, "suitability", 0.0)
    Pc = pair_grid(planned_confidence, a_names, o_names, "planned confidence", 1.0)
    if Pc is not None and np.any(Pc[allowed] <= 0):
        raise InputError("planned confidence must be greater than 0 for every pair that may be allocated")
    _check_feasible(reads, max_l, min_l, allowed.sum(axis=0), allowed.sum(axis=1), fixed_mask.sum(axis=0),
                    fixed_mask.sum(axis=1), a_names, o_names)
    return _AllocationProblem(a_names, o_names, reads, max_l, min_l, allowed, fixed_mask, has_fixed, S, Pc)


def _suitability_optimum(problem: _AllocationProblem, rng) -> tuple[np.ndarray, np.ndarray]:
    """The suitability-only optimum (without suitability: a random balanced allocation), as read index arrays."""
    A, O = problem.allowed.shape
    jitter = rng.random((A, O))
    S = problem.S
    if S is None:
        cost, load_penalty = jitter, 1.0
    else:
        spread = float(S.max() - S.min()) or 1.0
        # ties broken at random; the load balancing term is dropped: at 1e-7 of the spread it would sit below
        # the solver's tolerances anyway, and without it the LP has A load columns instead of sum(max_load)
        cost, load_penalty = -S + 1e-7 * spread * jitter, 0.0
    del jitter
    return _solve_lp(cost, problem.allowed, problem.reads, problem.max_load, problem.min_load, problem.fixed_mask,
                     load_penalty, problem.a_names, problem.o_names)


def _allocation_frame(problem: _AllocationProblem, a_idx, o_idx) -> pd.DataFrame:
    """One row per read, sorted by assessor then object, with its suitability and whether it was kept."""
    order = np.lexsort((o_idx, a_idx))
    a, o = a_idx[order], o_idx[order]
    out = {"assessor": np.asarray(problem.a_names, dtype=object)[a],
           "object": np.asarray(problem.o_names, dtype=object)[o]}
    if problem.S is not None:
        out["suitability"] = problem.S[a, o]
    if problem.has_fixed:
        out["fixed"] = problem.fixed_mask[a, o]
    return pd.DataFrame(out)


def _assignment(problem: _AllocationProblem, ea, ba, bo, best: float, stats: dict) -> Assignment:
    Pc = problem.conf
    c = np.ones(ea.size) if Pc is None else Pc[ea, bo]
    c_base = np.ones(ba.size) if Pc is None else Pc[ba, bo]
    report = allocation_report(ea, bo, c, problem.a_names, problem.o_names, problem.S, best)
    baseline = allocation_report(ba, bo, c_base, problem.a_names, problem.o_names, problem.S, best)
    return Assignment(allocation=_allocation_frame(problem, ea, bo), report=report,
                      baseline_allocation=_allocation_frame(problem, ba, bo), baseline=baseline, stats=stats)
