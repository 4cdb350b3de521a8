"""Linking within the suitability budget: sequential linear programming on the low spectrum.

Each round linearises the linking objective ``phi`` (:mod:`.spectrum`) at the current allocation and
solves an LP: minimise the linearised ``phi`` subject to every hard constraint, every assessor's load and
every object's reads as they are (the objective is then convex), the suitability budget
``sum S x >= share x optimum`` and a trust region (at most ``delta`` reads changed).  The LP changes many
reads at once along coordinated cycles (a link bought in one place is paid for by suitability regained in
another), which a pairwise swap search cannot do.  Its vertex is 0/1 except on the few cycles the two side
rows cut; those are rounded to a neighbouring 0/1 vertex (:func:`~.lp.solve_binary`).  A step is kept when
the exact ``phi`` falls (then ``delta`` grows), otherwise ``delta`` halves; the phase ends when the LP over
the whole region finds no improving exchange (a first-order optimum of the convex relaxation) or no single
read helps.

Large panels hand each LP a block of the objects where a change pays most (:func:`_block_objects`) and per
object a list of candidate readers (:func:`_candidate_pairs`), so each round stays small.  Why ``phi``
and not ``mu2``: ``mu2`` alone stalls when several weak links tie (six expertise clusters give five
near-zero eigenvalues; raising one leaves ``mu2`` unchanged), while ``phi`` falls with every weak link
repaired and is convex, so the LP's linearisation is a global lower bound and its steps do not chase a
local optimum.
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from .lp import solve_binary
from .problem import AllocationProblem
from .spectrum import LowSpectrum

__all__ = ["link", "takes_blocks"]

#: Linking rounds always run (when there is anything to link), even past the time limit: a slow first LP on
#: a busy machine must not leave a disconnected allocation untouched.
MIN_LINK_ROUNDS = 5
#: Most objects whose reads one linking LP may change; a larger panel's LP takes the objects where a change
#: pays most (the others' reads stay), so every round has a bounded size.
LINK_BLOCK_OBJECTS = 1000
#: Panels with up to this many assessors offer a linking LP every conflict-free pair of its objects; larger
#: ones offer each object its current readers, its LINK_CANDIDATES assessors of most negative linearised
#: cost and its LINK_CANDIDATES most suitable ones.
LINK_ALL_ASSESSORS = 16
LINK_CANDIDATES = 6
#: Objects whose best new read is priced at once when choosing a block (bounds the A x objects grid).
PRICING_CHUNK = 2000


def takes_blocks(n_objects: int) -> bool:
    """Whether a panel of ``n_objects`` objects gives each linking LP a block of them (not all)."""
    return n_objects > LINK_BLOCK_OBJECTS


def link(problem: AllocationProblem, ea, eo, required: float, k: int, max_rounds: int, deadline: float):
    """Sequential LP on the low spectrum (see the module docstring): returns (ea, eo, stats)."""
    A, O = problem.allowed.shape
    stats = {"rounds": 0, "steps": 0}
    spec = LowSpectrum.of(ea, eo, problem.c_of(ea, eo), A, O, k)
    delta, widened, started = max(1, ea.size // 10), False, time.perf_counter()
    stats["stopped"] = f"round limit ({max_rounds})"
    for rnd in range(max_rounds):
        if rnd >= MIN_LINK_ROUNDS and time.perf_counter() > deadline:
            stats["stopped"] = f"time limit ({deadline - started:.0f} s)"
            break
        stats["rounds"] = rnd + 1
        objs = _block_objects(problem, spec, ea, eo, ~problem.fixed_mask[ea, eo])
        pa, po = _candidate_pairs(problem, spec, objs, ea, eo)
        cur = np.isin(pa.astype(np.int64) * O + po, ea.astype(np.int64) * O + eo)
        cost = _linearised_cost(problem, spec, pa, po, cur)
        y = _trust_region_step(problem, pa, po, cost, cur.astype(float), objs, ea, eo, required, delta)
        moved = int((y & ~cur).sum()) if y is not None else 0
        if y is not None and moved == 0:
            if delta >= ea.size or widened:  # the whole region was searched: first-order optimal
                stats["stopped"] = "converged (no exchange of reads lowers the linearised objective)"
                break
            delta, widened = ea.size, True  # a compound exchange (a link paid for elsewhere) may need more reads
            continue
        if y is not None:
            trial_a, trial_o = _with_block_reads(ea, eo, objs, pa[y], po[y])
            trial = LowSpectrum.of(trial_a, trial_o, problem.c_of(trial_a, trial_o), A, O, k)
            if trial.phi < spec.phi * (1.0 - 1e-9):
                ea, eo, spec = trial_a, trial_o, trial
                stats["steps"] += 1
                delta = min(ea.size, int(1.5 * delta) + 1)
                continue
        delta = (min(delta, moved) if moved else delta) // 2
        if delta < 1:
            stats["stopped"] = "converged (no exchange of even one read lowers the spectral objective)"
            break
    return ea, eo, stats


def _linearised_cost(problem: AllocationProblem, spec: LowSpectrum, pa, po, cur) -> np.ndarray:
    """The LP's costs of the candidate pairs: d phi / d x scaled to at most 1, ties broken towards keeping
    the current read (``cur``), then towards the more suitable pair."""
    raw = spec.costs(pa, po, problem.c_of(pa, po))
    cost = raw / (np.abs(raw).max() or 1.0) - 1e-9 * cur
    if problem.S is not None:
        cost -= 1e-12 * problem.S[pa, po] / (float(problem.S.max()) or 1.0)
    return cost


def _with_block_reads(ea, eo, objs, new_a, new_o):
    """Reads (ea, eo) with those of the objects ``objs`` replaced by (new_a, new_o)."""
    keep = ~np.isin(eo, objs)
    return np.concatenate([ea[keep], new_a]), np.concatenate([eo[keep], new_o])


def _block_objects(problem: AllocationProblem, spec: LowSpectrum, ea, eo, movable) -> np.ndarray:
    """The objects whose reads one linking LP may change: all of them on a panel of up to
    :data:`LINK_BLOCK_OBJECTS`; else half the block where replacing one reader helps the spectrum most and
    half where it regains the most suitability (what pays for new links within the budget)."""
    A, O = problem.allowed.shape
    if not takes_blocks(O):
        return np.arange(O, dtype=np.intp)
    cur_a, cur_o = ea[movable], eo[movable]
    worst_cur = np.full(O, -np.inf)
    np.maximum.at(worst_cur, cur_o, spec.costs(cur_a, cur_o, problem.c_of(cur_a, cur_o)))
    order = np.argsort(_best_new_read_cost(problem, spec, ea, eo) - worst_cur, kind="stable")
    half = LINK_BLOCK_OBJECTS if problem.S is None else LINK_BLOCK_OBJECTS // 2
    chosen = np.zeros(O, dtype=bool)
    chosen[order[:half]] = True
    if problem.S is not None:
        worst_s = np.full(O, np.inf)
        np.minimum.at(worst_s, cur_o, problem.S[cur_a, cur_o])
        regain = np.where(chosen, -np.inf, problem.best_s - worst_s)
        chosen[np.argsort(-regain, kind="stable")[:LINK_BLOCK_OBJECTS - half]] = True
    return np.flatnonzero(chosen).astype(np.intp)


def _best_new_read_cost(problem: AllocationProblem, spec: LowSpectrum, ea, eo) -> np.ndarray:
    """Each object's most negative linearised cost of a reader it does not have yet (chunks of objects:
    no second A x O array)."""
    A, O = problem.allowed.shape
    best_new = np.empty(O)
    reading = sp.csr_matrix((np.ones(ea.size, dtype=bool), (eo, ea)), shape=(O, A))
    for start in range(0, O, PRICING_CHUNK):
        objs = np.arange(start, min(O, start + PRICING_CHUNK), dtype=np.intp)
        grid = spec.cost_grid(objs, problem)
        grid[reading[objs].toarray().T] = np.inf
        best_new[objs] = grid.min(axis=0)
    return best_new


def _candidate_pairs(problem: AllocationProblem, spec: LowSpectrum, objs: np.ndarray, ea, eo):
    """(assessor, object) pairs the LP may use for the objects ``objs``: every conflict-free pair when there
    are few assessors, else each object's current readers, its :data:`LINK_CANDIDATES` assessors of most
    negative linearised cost and its :data:`LINK_CANDIDATES` most suitable ones."""
    A, O = problem.allowed.shape
    if A <= LINK_ALL_ASSESSORS:
        mask = problem.allowed[:, objs]
    else:
        grid = spec.cost_grid(objs, problem)
        mask = np.zeros((A, objs.size), dtype=bool)
        cols = np.arange(objs.size)[None, :]
        mask[np.argpartition(grid, LINK_CANDIDATES - 1, axis=0)[:LINK_CANDIDATES], cols] = True
        if problem.S is not None:
            mask[problem.most_suitable_readers(LINK_CANDIDATES)[:, objs], cols] = True
        local = np.full(O, -1, dtype=np.intp)
        local[objs] = np.arange(objs.size)
        in_block = local[eo] >= 0
        mask[ea[in_block], local[eo[in_block]]] = True
        mask &= problem.allowed[:, objs]
    pa, pl = np.nonzero(mask)
    return pa.astype(np.intp), objs[pl]


def _trust_region_step(problem: AllocationProblem, pa, po, cost, cur, objs, ea, eo, required: float, delta: int):
    """One trust-region step over the objects ``objs``: their reads minimising the linearised cost with
    every hard constraint, the other objects' reads as they are, suitability >= required and at most
    ``delta`` reads changed.  Returns the chosen candidate pairs (bool) or None."""
    A, O = problem.allowed.shape
    n, nb = pa.size, objs.size
    local = np.full(O, -1, dtype=np.intp)
    local[objs] = np.arange(nb)
    out = local[eo] < 0  # reads of objects outside the block stay
    load_out = np.bincount(ea[out], minlength=A)
    col = np.arange(n)
    blocks = [sp.csr_matrix((np.ones(n), (local[po], col)), shape=(nb, n)),
              sp.csr_matrix((np.ones(n), (pa, col)), shape=(A, n)), sp.csr_matrix((1.0 - cur)[None, :])]
    loads = np.bincount(ea, minlength=A) - load_out  # loads stay as they are: the objective is then convex
    lo = [problem.reads[objs], loads, [-np.inf]]
    hi = [problem.reads[objs], loads, [float(delta)]]
    if problem.S is not None:
        blocks.append(sp.csr_matrix(problem.S[pa, po][None, :]))
        lo.append([required - float(problem.S[ea[out], eo[out]].sum())])
        hi.append([np.inf])
    M = sp.vstack(blocks).tocsr()
    lo, hi = np.concatenate(lo).astype(float), np.concatenate(hi).astype(float)
    y = solve_binary(cost, M, lo, hi, problem.fixed_mask[pa, po].astype(float), cur > 0.5)
    if y is not None and problem.S is not None:  # the LP's tolerances must not eat into the budget
        total = float(problem.S[ea[out], eo[out]].sum() + problem.S[pa[y], po[y]].sum())
        if total < required - 1e-9 * max(1.0, abs(required)):
            return None
    return y
