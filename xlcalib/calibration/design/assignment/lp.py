"""The linear programs (HiGHS) and how their answers become 0/1 allocations.

Step 1 of :func:`~xlcalib.calibration.design.assignment.assign`, the *suitability-only optimum*: the
transportation LP ``max sum_ao S_ao x_ao`` subject to reads, loads, conflicts and kept reads, solved by
HiGHS' dual simplex (``scipy.optimize.linprog``).  Its constraint matrix is a network matrix (totally
unimodular), so the vertex optimum is a 0/1 allocation.  Ties are broken by tiny seeded random costs.
Without suitability the costs are seeded random numbers and each load unit carries a convex cost, so the
loads are as even as the limits allow.  Large panels start from each object's best few assessors and let
the duals price in every other pair that could improve the optimum (column generation), so the result is
still the optimum over all pairs.

The linking steps' programs (:func:`solve_binary`) are the same network matrix with two side rows (the
suitability budget and the trust region).  Their vertex is 0/1 except on the few cycles the side rows cut;
those are rounded to a neighbouring 0/1 vertex, and only when none keeps every row a MILP over just the
fractional pairs decides.

Why both here: they rest on the same fact (a network matrix's vertices are 0/1) and call HiGHS the same
way; the linking stage (:mod:`.linking`) says *what* to minimise, this module how to get a 0/1 answer.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ....errors import InputError
from .feasibility import max_flow_message
from .problem import AllocationProblem

__all__ = ["suitability_optimum", "solve_transport_lp", "solve_binary"]

#: Largest number of assessor-object pairs given to the LP in one piece; above
#: it each object starts with its most suitable assessors only and the LP's
#: duals bring in every other pair that could improve it (column generation),
#: so the result is still the optimum over all pairs.
FULL_LP_PAIRS = 2_000_000
#: Assessors per object in the first restricted LP (large panels only).
CANDIDATES_PER_OBJECT = 8
#: Objects per assessor in the first restricted LP beyond the assessor's max load (large panels only).
EXTRA_OBJECTS_PER_ASSESSOR = 10
#: Most improving pairs per object brought into the LP per pricing round.
ENTERING_PER_OBJECT = 3
#: Most pricing rounds of the column generation.
PRICING_ROUNDS = 50
#: Seconds the MILP that rounds a fractional linking step may take (it has only a few free pairs).
ROUNDING_SECONDS = 10.0
#: HiGHS method for the transportation LP (dual simplex: returns a vertex, hence a 0/1 allocation).
LP_METHOD = "highs-ds"


def linprog(*args, **kwargs):
    """scipy's ``linprog``, imported when first called: importing scipy.optimize at start cost every run of the
    program and every load of the add-in 0.2 s, though only assignments solve programs."""
    from scipy.optimize import linprog as scipy_linprog

    return scipy_linprog(*args, **kwargs)


def suitability_optimum(problem: AllocationProblem, rng) -> tuple[np.ndarray, np.ndarray]:
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
    return solve_transport_lp(cost, problem.allowed, problem.reads, problem.max_load, problem.min_load,
                              problem.fixed_mask, load_penalty, problem.a_names, problem.o_names)


# ----------------------------------------------------------------------------
# The transportation LP
# ----------------------------------------------------------------------------
@dataclass
class _LoadColumns:
    """The LP's load variables: assessor of each, cost and bounds (see :func:`_load_columns`)."""

    a: np.ndarray
    cost: np.ndarray
    lb: np.ndarray
    ub: np.ndarray


def solve_transport_lp(cost, allowed, reads, max_load, min_load, fixed_mask, load_penalty, a_names, o_names):
    """Min sum cost x over allowed pairs, reads exact, loads within [min, max], x in {0, 1}: (ea, eo).

    Load units are explicit variables y_ak (k = 1..max_a) with cost
    ``load_penalty * k``: convex, so loads are as even as the costs allow
    (``load_penalty = 0``: one load variable per assessor instead).
    The constraint matrix is a network matrix (totally unimodular), so the
    simplex optimum HiGHS returns is integral.  Large panels: column
    generation from the duals (see :data:`FULL_LP_PAIRS`).  Reads the LP
    cannot place are refused with the max-flow message.
    """
    A, O = allowed.shape
    loads = _load_columns(allowed, reads, max_load, min_load, load_penalty)
    big = 10.0 * (float(np.abs(cost[allowed]).max()) + 1.0) * max(1, min(A, O))
    # pricing tolerance: the optimum is exact up to tol per read (tie-breaking costs are 1e-7 of the spread)
    tol = 1e-6 * (float(cost[allowed].max() - cost[allowed].min()) or 1.0)
    if allowed.sum() <= FULL_LP_PAIRS:
        active = allowed.copy()
    else:  # column generation: a restricted start, then the pairs the duals price in
        active = _starting_pairs(cost, allowed, max_load, fixed_mask)
    for _round in range(PRICING_ROUNDS):
        pa, po = np.nonzero(active)
        res = _restricted_lp(cost, pa, po, loads, reads, min_load, fixed_mask, big)
        if active.sum() == allowed.sum():
            break
        entering = _entering_pairs(cost, res.eqlin.marginals, allowed, active, tol)
        if entering is None:
            break
        active |= entering
    x = res.x
    nx = pa.size
    if x[nx + loads.a.size:].sum() > 0.5:  # artificial slack left: some reads cannot be placed
        raise InputError(max_flow_message(reads, max_load, min_load, allowed, a_names, o_names))
    chosen = x[:nx] > 0.5
    if np.any(np.abs(x[:nx] - np.round(x[:nx])) > 1e-6):  # a non-vertex answer would be a solver defect
        raise RuntimeError("the LP returned a fractional allocation")
    return pa[chosen].astype(np.intp), po[chosen].astype(np.intp)


def _load_columns(allowed, reads, max_load, min_load, load_penalty: float) -> _LoadColumns:
    """One column per load unit y_ak of cost ``load_penalty * k`` (units up to the min load forced to 1), or
    without balancing one load column per assessor within [min, max] (far fewer columns)."""
    A = allowed.shape[0]
    R = int(reads.sum())
    kmax = np.minimum(max_load, np.minimum(allowed.sum(axis=1), R)).astype(np.intp)
    kmax = np.maximum(kmax, min_load)
    if load_penalty > 0:
        y_a = np.repeat(np.arange(A, dtype=np.intp), kmax)
        y_k = (np.arange(y_a.size) - np.repeat(np.cumsum(kmax) - kmax, kmax)) + 1
        return _LoadColumns(y_a, load_penalty * y_k, (y_k <= min_load[y_a]).astype(float), np.ones(y_a.size))
    return _LoadColumns(np.arange(A, dtype=np.intp), np.zeros(A), min_load.astype(float), kmax.astype(float))


def _starting_pairs(cost, allowed, max_load, fixed_mask) -> np.ndarray:
    """The pairs of the first restricted LP on a large panel: each object's :data:`CANDIDATES_PER_OBJECT`
    cheapest assessors, each assessor's cheapest objects (a few more than its max load) and the kept reads."""
    A, O = allowed.shape
    active = np.zeros_like(allowed)
    masked = np.where(allowed, cost, np.inf)
    k = min(CANDIDATES_PER_OBJECT, A)
    top = np.argpartition(masked, k - 1, axis=0)[:k]  # k cheapest assessors per object
    active[top, np.arange(O)[None, :]] = True
    ka = int(min(O, int(max_load.max()) + EXTRA_OBJECTS_PER_ASSESSOR))  # and each assessor's most suitable objects
    top_a = np.argpartition(masked, ka - 1, axis=1)[:, :ka]
    active[np.arange(A)[:, None], top_a] = True
    del masked
    active &= allowed
    active |= fixed_mask
    return active


def _restricted_lp(cost, pa, po, loads: _LoadColumns, reads, min_load, fixed_mask, big: float):
    """The transportation LP over the pairs (pa, po) only (HiGHS dual simplex): scipy's result.

    Artificial slacks of cost ``big`` keep it feasible whatever pairs it has: unplaced reads (per object)
    and missing load units (per assessor); the duals then price in the pairs that remove them.
    """
    A, O = fixed_mask.shape
    nx, ny = pa.size, loads.a.size
    c = np.concatenate([cost[pa, po], loads.cost, np.full(O + A, big)])
    rows = np.concatenate([po, O + pa, O + loads.a, np.arange(O + A)])
    cols = np.concatenate([np.arange(nx), np.arange(nx), nx + np.arange(ny), nx + ny + np.arange(O + A)])
    vals = np.concatenate([np.ones(nx), np.ones(nx), -np.ones(ny), np.ones(O + A)])
    A_eq = sp.csc_matrix((vals, (rows, cols)), shape=(O + A, nx + ny + O + A))
    b_eq = np.concatenate([reads, np.zeros(A)]).astype(float)
    lb = np.concatenate([fixed_mask[pa, po].astype(float), loads.lb, np.zeros(O + A)])
    ub = np.concatenate([np.ones(nx), loads.ub, reads.astype(float), min_load.astype(float)])
    res = linprog(c, A_eq=A_eq, b_eq=b_eq, bounds=np.column_stack([lb, ub]), method=LP_METHOD)
    if res.status != 0:
        raise RuntimeError(f"the LP solver failed: {res.message}")
    return res


def _entering_pairs(cost, dual, allowed, active, tol: float) -> np.ndarray | None:
    """The pairs outside the LP whose reduced cost (from the duals) is below -tol, at most
    :data:`ENTERING_PER_OBJECT` per object (the most improving); None when none improves: the optimum."""
    A, O = allowed.shape
    reduced = cost - dual[:O][None, :] - dual[O:][:, None]
    reduced[~allowed | active] = np.inf
    entering = reduced < -tol
    if not entering.any():
        return None
    per_obj = min(ENTERING_PER_OBJECT, A)
    limit = (np.partition(np.where(entering, reduced, np.inf), per_obj - 1, axis=0)[per_obj - 1] if A > per_obj
             else np.inf)
    return entering & (reduced <= limit)


# ----------------------------------------------------------------------------
# The linking steps' binary programs
# ----------------------------------------------------------------------------
def solve_binary(cost, M, lo, hi, lb, hint: np.ndarray) -> np.ndarray | None:
    """0/1 x minimising cost.x with lo <= M x <= hi and x >= lb: the LP (HiGHS dual simplex), then rounding.

    Without its side rows (budget, trust region) M is a network matrix, so a vertex of the LP is fractional
    only on a few cycles whose entries take a few distinct values; cutting them at a threshold gives the
    neighbouring 0/1 vertices, and the best of those that keep every row is taken.  Only when none does, a
    MILP over just the fractional pairs decides.  None when there is no 0/1 solution.
    """
    x = _lp_relaxation(cost, M, lo, hi, lb)
    if x is None:
        return None
    frac = np.flatnonzero(np.abs(x - np.round(x)) > 1e-7)
    if frac.size == 0:
        return x > 0.5
    y = _neighbouring_vertex(x, frac, cost, M, lo, hi, hint)
    return y if y is not None else _milp_over_fractional(x, frac, cost, M, lo, hi, lb)


def _lp_relaxation(cost, M, lo, hi, lb) -> np.ndarray | None:
    """The vertex x in [lb, 1] minimising cost.x with lo <= M x <= hi (rows with lo == hi as equalities)."""
    eq = lo == hi
    up, down = ~eq & np.isfinite(hi), ~eq & np.isfinite(lo)
    res = linprog(cost, A_ub=sp.vstack([M[up], -M[down]]).tocsr(), b_ub=np.concatenate([hi[up], -lo[down]]),
                  A_eq=M[eq], b_eq=lo[eq], bounds=np.column_stack([lb, np.ones(cost.size)]), method=LP_METHOD,
                  options={"presolve": False})  # many small LPs: presolving each costs more than it saves
    return res.x if res.status == 0 else None


def _neighbouring_vertex(x, frac, cost, M, lo, hi, hint) -> np.ndarray | None:
    """The cheapest 0/1 point that keeps every row among those cutting the fractional entries at a threshold
    (each way round) and the hint and its complement there; None when none keeps every row."""
    levels = np.unique(np.round(x[frac], 9))
    cuts = np.concatenate([[0.0], (levels[:-1] + levels[1:]) / 2, [1.0]])
    best, best_cost = None, np.inf
    for part in [x[frac] > c for c in cuts] + [x[frac] < c for c in cuts] + [hint[frac], ~hint[frac]]:
        y = x > 0.5
        y[frac] = part
        Mx = M @ y.astype(float)
        if np.all(Mx >= lo - 1e-9) and np.all(Mx <= hi + 1e-9) and float(cost @ y) < best_cost:
            best, best_cost = y, float(cost @ y)
    return best


def _milp_over_fractional(x, frac, cost, M, lo, hi, lb) -> np.ndarray | None:
    """The integral entries kept, the fractional ones decided by a MILP (HiGHS branch and bound, at most
    :data:`ROUNDING_SECONDS`); None when it finds no 0/1 point."""
    y = np.round(x) > 0.5
    y[frac] = False
    rest = np.asarray(M[:, y].sum(axis=1)).ravel()
    sub = M[:, frac].tocsr()
    rows = np.flatnonzero(np.diff(sub.indptr) > 0)
    from scipy.optimize import Bounds, LinearConstraint, milp

    res = milp(cost[frac], constraints=LinearConstraint(sub[rows], lo[rows] - rest[rows], hi[rows] - rest[rows]),
               integrality=np.ones(frac.size), bounds=Bounds(lb[frac], 1.0), options={"time_limit": ROUNDING_SECONDS})
    if res.x is None:
        return None
    y[frac] = res.x > 0.5
    return y
