"""Who reads what: an allocation that is suitable, within loads, free of conflicts, and calibratable.

Panel secretaries usually allocate by expertise, which gives clusters of
assessors who never share an object — the low-``mu2`` designs calibration
cannot repair afterwards.  :func:`assign` keeps a share of the suitability of
the expertise-driven optimum chosen by the user and spends the rest on reads
that link the clusters, and reports the trade-off (suitability kept and
``mu2`` with its overlap verdict at several shares) so the share can be
chosen with numbers.  Notation as in :mod:`xlcalib.calibration.design.report`.

Method
------
1. *Suitability-only optimum* — the transportation LP
   ``max sum_ao S_ao x_ao`` subject to reads, loads, conflicts and kept reads,
   solved by HiGHS' dual simplex (``scipy.optimize.linprog``).  Its
   constraint matrix is a network matrix, so the vertex optimum is a 0/1
   allocation.  Ties are broken by tiny seeded random costs.  Without
   suitability the costs are seeded random numbers and each load unit
   carries a convex cost, so the loads are as even as the limits allow.
2. *Linking within the suitability budget* — sequential linear programming
   on the low spectrum of the assessor-object graph.  With every assessor's
   load and every object's reads held fixed, the normalised Laplacian of the
   bipartite graph ``L_B = D^-1/2 (D - B(x)) D^-1/2`` is affine in the
   allocation ``x``, its eigenvalues are ``lambda_j = 1 - sqrt(1 - mu_j)``
   (``mu_j`` those of ``T``; ``mu2`` is the overlap figure), and
   ``phi(x) = sum_{j>=2} (lambda_j + eps)^-p`` is a convex function of ``x``
   (a spectral function of a convex scalar function, Lewis 1996; ``p = 1``
   is A-optimal design, whose ``sum 1/mu_j`` is the calibrated values'
   error variance, MacKay et al. 2017; ``p = 2`` leans on the smallest
   eigenvalue, i.e. on ``mu2``).  Each round linearises ``phi`` at the
   current allocation — ``d lambda / d w_ao = (phi_a - phi_o)^2 -
   lambda (phi_a^2 + phi_o^2)`` from the ``K`` smallest eigenpairs, ``K``
   following every eigenvalue whose overlap verdict is not yet "good" — and
   solves an LP: minimise the linearised ``phi`` subject to every hard
   constraint, the suitability budget ``sum S x >= share x optimum`` and a
   trust region (at most ``delta`` reads changed).  The LP changes many
   reads at once along coordinated cycles (a link bought in one place is
   paid for by suitability regained in another), which a pairwise swap
   search cannot do.  Its vertex is 0/1 except on the few cycles the two
   side rows cut; those are rounded to a neighbouring 0/1 vertex (a MILP over
   the fractional pairs when needed).  A step is kept when the exact ``phi``
   falls (then ``delta`` grows), otherwise ``delta`` halves; the phase ends
   when the LP over the whole region finds no improving exchange (a
   first-order optimum of the convex relaxation) or no single read helps.
   Large panels hand each LP a block of the objects where a change pays most
   and per object a list of candidate readers, so each round stays small.
   Then *spectral swaps* ``(a,o),(a',o') -> (a',o),(a,o')`` (which keep
   every constraint by construction, scored by the exact first-order change
   of ``phi`` over two objects) polish the result: they reach every object
   in one round, which carries large panels on where LP rounds slow down.
3. *Continuation over the share* — the linking runs at the shares of
   :data:`TRADEOFF_SHARES` between the chosen one and 1 first (and at 1 itself
   when the trade-off asks for it: ties of the optimum), each stage starting
   from the previous allocation: ``phi`` falls from stage to stage, so a
   smaller share never buys less overlap, and the stages are the trade-off
   table (:attr:`Assignment.tradeoff`) at little extra cost.

Why this objective: ``mu2`` alone stalls when several weak links tie
(six expertise clusters give five near-zero eigenvalues; raising one leaves
``mu2`` unchanged), while ``phi`` falls with every weak link repaired and is
convex, so the LP's linearisation is a global lower bound and its steps do
not chase a local optimum.  Why loads are held: the objective is then
convex, and loads stay where the suitability optimum put them.

Budget: at most ``max_rounds`` LP rounds and as many swap rounds per stage,
and ``time_limit`` seconds for the whole call (the LP of step 1 always runs
to optimality; each stage gets a share of the time left, the chosen share
most, and at least :data:`MIN_LINK_ROUNDS` LP rounds); ``stats['stopped']``
and the trade-off's ``stopped`` column say what ended each stage.  The
funder's panel (24 x 150 x 4) takes 5-15 s for all five shares; 100 x 1,000
one to two minutes per share; at 1,000 assessors x 10,000 objects the LP
takes 10-25 s and the time limit ends the linking (``stopped`` says so, and
the result then depends on the machine's speed).  Within those limits the
result is reproducible for a given ``seed``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from ...cells import real_argument, seed_argument, whole_argument
from ...errors import InputError
from .report import DesignReport, allocation_report
from ..panel.arguments import name_index, pair_grid, pair_indices, per_item_counts
from ..system.graph import low_spectrum, overlap_verdict

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
#: Linking rounds always run (when there is anything to link), even past the time limit: a slow first LP on
#: a busy machine must not leave a disconnected allocation untouched.
MIN_LINK_ROUNDS = 5
#: Number of smallest non-trivial eigenvalues of the assessor graph the linking phase raises (at least one
#: per component beyond the first).
SPECTRUM_K = 12
#: At most this many: every eigenvalue whose overlap verdict is not "good", plus SPECTRUM_K // 2.
SPECTRUM_K_MAX = 64
#: Power p of the linking objective sum_j (lambda_j + eps)^-p: p = 1 is A-optimal design (the calibrated
#: values' error variance), larger p weighs the smallest eigenvalue (mu2) more.
SPECTRUM_POWER = 2.0
#: eps of the linking objective: keeps it finite on a disconnected start.
SPECTRUM_FLOOR = 1e-3
#: Most objects whose reads one linking LP may change; a larger panel's LP takes the objects where a change
#: pays most (the others' reads stay), so every round has a bounded size.
LINK_BLOCK_OBJECTS = 1000
#: Panels with up to this many assessors offer a linking LP every conflict-free pair of its objects; larger
#: ones offer each object its current readers, its LINK_CANDIDATES assessors of most negative linearised
#: cost and its LINK_CANDIDATES most suitable ones.
LINK_ALL_ASSESSORS = 16
LINK_CANDIDATES = 6
#: Seconds the MILP that rounds a fractional linking step may take (it has only a few free pairs).
ROUNDING_SECONDS = 10.0
#: Seed of the eigen-solver's start vector in the linking phase (results do not depend on the caller's seed
#: beyond the suitability-only start).
LINK_SEED = 12345
#: Share of a stage's time the LP steps may use before the swaps take over; on panels whose LPs take blocks of
#: objects the swaps, which reach every object each round, get most of it.
LINK_LP_PART = 0.6
LINK_LP_PART_BLOCKS = 0.25
#: HiGHS method for the transportation LP (dual simplex: returns a vertex, hence a 0/1 allocation).
LP_METHOD = "highs-ds"


@dataclass
class Assignment:
    """An allocation of reads with its design report, the suitability-only one, and the trade-off between them.

    ``allocation``: DataFrame (assessor, object[, suitability][, fixed]) one row per read.
    ``report``: :class:`DesignReport` of it.  ``baseline_allocation`` /
    ``baseline``: the suitability-only optimum (without suitability: the
    balanced random start) and its report.  ``tradeoff``: one row per
    suitability share the linking phase passed through (minimum share,
    suitability share kept, mu2, overlap verdict, components, reads changed
    from the suitability-only allocation, seconds, why that stage stopped,
    chosen) — what a secretary chooses the share with.  ``stats``: how it
    was found (best suitability, the required minimum, rounds, accepted
    steps, why the chosen stage stopped, seconds).
    """

    allocation: pd.DataFrame
    report: DesignReport
    baseline_allocation: pd.DataFrame
    baseline: DesignReport
    stats: dict[str, Any] = field(default_factory=dict)
    tradeoff: pd.DataFrame = field(default_factory=pd.DataFrame)

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
# The linking phase: sequential linear programming on the low spectrum
# ----------------------------------------------------------------------------
@dataclass
class _Spectrum:
    """The low spectrum of the bipartite assessor-object graph and what the linking LP needs of it.

    ``lam``: the smallest eigenvalues ``lambda_j = 1 - sqrt(1 - mu_j)`` of the normalised bipartite
    Laplacian (``mu_j`` those of ``T``, ``lam[0]`` the trivial 0); ``ya`` / ``yo``: the eigenvectors
    ``phi_j`` on assessors and objects with ``phi' D phi = 1`` and the trivial direction projected out;
    ``phi``: the objective ``sum_{j>=2} (lambda_j + eps)^-p``; ``weight``: ``p (lambda_j + eps)^(-p-1)``.
    """

    phi: float
    lam: np.ndarray
    weight: np.ndarray
    ya: np.ndarray
    yo: np.ndarray

    def costs(self, pa: np.ndarray, po: np.ndarray, cp) -> np.ndarray:
        """d phi / d x_ao for reads (a, o) of confidence c_ao: the linearised cost the LP minimises.

        For ``L phi = lambda D phi`` (degrees change with the read, weight ``w_ao = c_ao x_ao``):
        ``d lambda / d w_ao = (phi_a - phi_o)^2 - lambda (phi_a^2 + phi_o^2)``.
        """
        w1 = self.weight * (1.0 - self.lam)
        qa, qo = (self.ya ** 2) @ w1, (self.yo ** 2) @ w1
        cross = np.einsum("ij,ij->i", self.ya[pa] * self.weight[None, :], self.yo[po])
        return -cp * (qa[pa] + qo[po] - 2.0 * cross)

    def cost_grid(self, objs: np.ndarray, problem: "_AllocationProblem") -> np.ndarray:
        """The same costs for every assessor x the objects ``objs`` (inf where a conflict forbids the read)."""
        w1 = self.weight * (1.0 - self.lam)
        grid = -(((self.ya ** 2) @ w1)[:, None] + ((self.yo[objs] ** 2) @ w1)[None, :]
                 - 2.0 * (self.ya * self.weight[None, :]) @ self.yo[objs].T)
        if problem.conf is not None:
            grid *= problem.conf[:, objs]
        grid[~problem.allowed[:, objs]] = np.inf
        return grid


def _spectrum(ea, eo, c, A: int, O: int, k: int) -> _Spectrum:
    """The :class:`_Spectrum` of reads (ea, eo) with confidences c (k non-trivial eigenpairs)."""
    active, mu, X = low_spectrum(ea, eo, c, A, O, k + 1, vectors=True, seed=LINK_SEED)
    C_a = np.bincount(ea, weights=c, minlength=A)[active]
    C_o = np.bincount(eo, weights=c, minlength=O)
    s = np.sqrt(C_a)
    f = X * s[:, None]  # orthonormal eigenvectors of C'^-1/2 W C'^-1/2
    f0 = s / np.linalg.norm(s)  # the trivial one: a common shift of every standard carries no information
    f -= np.outer(f0, f0 @ f)  # what is left of a null block spans exactly the non-trivial null space
    sigma = np.sqrt(np.clip(1.0 - mu, 1e-12, 1.0))
    lam = 1.0 - sigma
    ya = np.zeros((A, mu.size))
    ya[active] = f / (s * np.sqrt(2.0))[:, None]
    Cm = sp.csr_matrix((c, (eo, ea)), shape=(O, A))
    yo = (Cm @ ya) / (np.where(C_o > 0, C_o, 1.0)[:, None] * sigma[None, :])
    lam_eps = lam + SPECTRUM_FLOOR
    phi = float(np.sum(lam_eps[1:] ** -SPECTRUM_POWER))  # index 0 is the trivial eigenvalue
    return _Spectrum(phi, lam, SPECTRUM_POWER * lam_eps ** (-SPECTRUM_POWER - 1.0), ya, yo)


def _block(problem: "_AllocationProblem", spec: _Spectrum, ea, eo, movable) -> np.ndarray:
    """The objects whose reads one linking LP may change: all of them on a panel of up to
    :data:`LINK_BLOCK_OBJECTS`; else half the block where replacing one reader helps the spectrum most and
    half where it regains the most suitability (what pays for new links within the budget)."""
    A, O = problem.allowed.shape
    if O <= LINK_BLOCK_OBJECTS:
        return np.arange(O, dtype=np.intp)
    best_new = np.empty(O)
    reading = sp.csr_matrix((np.ones(ea.size, dtype=bool), (eo, ea)), shape=(O, A))
    for start in range(0, O, 2000):  # in chunks: no second A x O array
        objs = np.arange(start, min(O, start + 2000), dtype=np.intp)
        grid = spec.cost_grid(objs, problem)
        grid[reading[objs].toarray().T] = np.inf
        best_new[objs] = grid.min(axis=0)
    worst_cur = np.full(O, -np.inf)
    np.maximum.at(worst_cur, eo[movable], spec.costs(ea[movable], eo[movable], problem.c_of(ea[movable], eo[movable])))
    order = np.argsort(best_new - worst_cur, kind="stable")
    half = LINK_BLOCK_OBJECTS if problem.S is None else LINK_BLOCK_OBJECTS // 2
    chosen = np.zeros(O, dtype=bool)
    chosen[order[:half]] = True
    if problem.S is not None:
        worst_s = np.full(O, np.inf)
        np.minimum.at(worst_s, eo[movable], problem.S[ea[movable], eo[movable]])
        regain = np.where(chosen, -np.inf, problem.best_s - worst_s)
        chosen[np.argsort(-regain, kind="stable")[:LINK_BLOCK_OBJECTS - half]] = True
    return np.flatnonzero(chosen).astype(np.intp)


def _candidates(problem: "_AllocationProblem", spec: _Spectrum, objs: np.ndarray, ea, eo):
    """(assessor, object) pairs the LP may use for the objects ``objs``: every conflict-free pair when there
    are few assessors, else each object's current readers, its :data:`LINK_CANDIDATES` assessors of most
    negative linearised cost and its :data:`LINK_CANDIDATES` most suitable ones."""
    A, O = problem.allowed.shape
    in_block = np.zeros(O, dtype=bool)
    in_block[objs] = True
    if A <= LINK_ALL_ASSESSORS:
        mask = problem.allowed[:, objs]
    else:
        grid = spec.cost_grid(objs, problem)
        mask = np.zeros((A, objs.size), dtype=bool)
        cols = np.arange(objs.size)[None, :]
        mask[np.argpartition(grid, LINK_CANDIDATES - 1, axis=0)[:LINK_CANDIDATES], cols] = True
        if problem.top_suitable is not None:
            mask[problem.top_suitable[:, objs], cols] = True
        local = np.full(O, -1, dtype=np.intp)
        local[objs] = np.arange(objs.size)
        keep = in_block[eo]
        mask[ea[keep], local[eo[keep]]] = True
        mask &= problem.allowed[:, objs]
    pa, pl = np.nonzero(mask)
    return pa.astype(np.intp), objs[pl]


def _solve_binary(cost, M, lo, hi, lb, hint: np.ndarray) -> np.ndarray | None:
    """0/1 x minimising cost.x with lo <= M x <= hi and x >= lb: the LP (HiGHS dual simplex), then rounding.

    Without its side rows (budget, trust region) M is a network matrix, so a vertex of the LP is fractional
    only on a few cycles whose entries take a few distinct values; cutting them at a threshold gives the
    neighbouring 0/1 vertices, and the best of those that keep every row is taken.  Only when none does, a
    MILP over just the fractional pairs decides.  None when there is no 0/1 solution.
    """
    eq = lo == hi
    up, down = ~eq & np.isfinite(hi), ~eq & np.isfinite(lo)
    res = linprog(cost, A_ub=sp.vstack([M[up], -M[down]]).tocsr(), b_ub=np.concatenate([hi[up], -lo[down]]),
                  A_eq=M[eq], b_eq=lo[eq], bounds=np.column_stack([lb, np.ones(cost.size)]), method=LP_METHOD,
                  options={"presolve": False})  # many small LPs: presolving each costs more than it saves
    if res.status != 0:
        return None
    x = res.x
    frac = np.flatnonzero(np.abs(x - np.round(x)) > 1e-7)
    if frac.size == 0:
        return x > 0.5
    levels = np.unique(np.round(x[frac], 9))
    cuts = np.concatenate([[0.0], (levels[:-1] + levels[1:]) / 2, [1.0]])
    best, best_cost = None, np.inf
    for part in [x[frac] > c for c in cuts] + [x[frac] < c for c in cuts] + [hint[frac], ~hint[frac]]:
        y = x > 0.5
        y[frac] = part
        Mx = M @ y.astype(float)
        if np.all(Mx >= lo - 1e-9) and np.all(Mx <= hi + 1e-9) and float(cost @ y) < best_cost:
            best, best_cost = y, float(cost @ y)
    if best is not None:
        return best
    y = np.round(x) > 0.5
    y[frac] = False
    rest = np.asarray(M[:, y].sum(axis=1)).ravel()
    sub = M[:, frac].tocsr()
    rows = np.flatnonzero(np.diff(sub.indptr) > 0)
    res = milp(cost[frac], constraints=LinearConstraint(sub[rows], lo[rows] - rest[rows], hi[rows] - rest[rows]),
               integrality=np.ones(frac.size), bounds=Bounds(lb[frac], 1.0), options={"time_limit": ROUNDING_SECONDS})
    if res.x is None:
        return None
    y[frac] = res.x > 0.5
    return y


def _link_step(problem: "_AllocationProblem", pa, po, cost, cur, objs, ea, eo, required: float, delta: int):
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
    y = _solve_binary(cost, M, lo, hi, problem.fixed_mask[pa, po].astype(float), cur > 0.5)
    if y is not None and problem.S is not None:  # the LP's tolerances must not eat into the budget
        total = float(problem.S[ea[out], eo[out]].sum() + problem.S[pa[y], po[y]].sum())
        if total < required - 1e-9 * max(1.0, abs(required)):
            return None
    return y


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
    """The object table, movable reads and each assessor's most suitable objects of reads (ea, eo)."""
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


def _swap_weights(spec: _Spectrum) -> tuple[np.ndarray, np.ndarray]:
    """(mu_j, assessor eigenvectors x_j scaled by sqrt(d phi / d mu_j)): the swap gains' first-order weights."""
    sigma = 1.0 - spec.lam
    weight = spec.weight / (2.0 * np.maximum(sigma, 1e-12))  # d lambda / d mu = 1 / (2 sigma)
    return 1.0 - sigma ** 2, spec.ya * np.sqrt(2.0 * weight)[None, :]


def _polish(problem: "_AllocationProblem", ea, eo, required: float, k: int, rng, max_rounds: int, deadline: float):
    """Spectral swaps ``(a,o),(a',o') -> (a',o),(a,o')`` after the LP steps: (ea, eo, stats).

    A swap keeps every load, read count and conflict by construction.  Candidates (random pairs, pairs
    where an assessor moves to one of its most suitable objects, pairs from opposite ends of the Fiedler
    vector) are scored by the exact first-order change of the linking objective (only two objects change);
    the best gain-per-suitability-lost swaps on disjoint objects form a batch, kept only if the objective
    really falls and the suitability stays >= required.  It reaches reads of every object in one round,
    where one LP step takes a block of them: on large panels it carries on where the LP steps slow down.
    """
    A, O = problem.allowed.shape
    E, ea = ea.size, ea.copy()
    prob = _swap_problem(ea, eo, problem.fixed_mask[ea, eo], A, O, problem.S,
                         {"allowed": problem.allowed, "conf": problem.conf})
    stats = {"swap_rounds": 0, "swaps": 0}
    if prob.movable.size < 2 or A < 2:
        return ea, eo, stats
    c_e = problem.c_of(ea, eo).astype(float)
    floor_co = np.bincount(eo, weights=c_e, minlength=O)
    floor_min = floor_co[prob.counts > 0].min() if (prob.counts > 0).any() else 0.0
    room = float(problem.S[ea, eo].sum()) - required if problem.S is not None else np.inf
    spec = _spectrum(ea, eo, c_e, A, O, k)
    mu, Xw = _swap_weights(spec)
    batch, fails = max(1, E // 20), 0
    for rnd in range(max_rounds):
        if time.perf_counter() > deadline:
            break
        stats["swap_rounds"] = rnd + 1
        keep = None
        pair = _candidate_swaps(prob, ea, Xw, rng)
        if pair is not None:
            e1, e2 = pair
            loss, gain, floor = _swap_gains(prob, ea, c_e, e1, e2, Xw, mu)
            ok = (gain > 1e-12) & (floor >= floor_min - 1e-12) & (loss <= room)
            if ok.any():
                keep = _swap_batch(prob, e1, e2, loss, gain, ok, room, batch)
        if keep is None or keep.size == 0:
            fails += 1
            if fails > 5:
                break
            continue
        a1, a2, o1, o2 = ea[e1[keep]], ea[e2[keep]], eo[e1[keep]], eo[e2[keep]]
        trial = ea.copy()
        trial[e1[keep]], trial[e2[keep]] = a2, a1
        c_trial = c_e.copy()
        c_trial[e1[keep]], c_trial[e2[keep]] = prob.c_of(a2, o1), prob.c_of(a1, o2)
        new = _spectrum(trial, eo, c_trial, A, O, k)
        if new.phi < spec.phi * (1 - 1e-9):
            ea, c_e, spec = trial, c_trial, new
            mu, Xw = _swap_weights(spec)
            room -= float(loss[keep].sum())
            stats["swaps"] += int(keep.size)
            batch, fails = int(min(max(1, E // 5), batch * 1.5 + 1)), 0
        else:
            if batch == 1:
                fails += 1
                if fails > 5:
                    break
            batch = max(1, batch // 2)
    return ea, eo, stats


def _spectrum_size(ea, eo, c, A: int, O: int, n_active: int) -> int:
    """How many eigenpairs the linking objective follows: every eigenvalue whose overlap verdict is not yet
    "good" plus a margin (the next ones become the weakest as the first are raised), at least
    :data:`SPECTRUM_K`, at most :data:`SPECTRUM_K_MAX`."""
    k = min(SPECTRUM_K_MAX, n_active - 1)
    if k <= SPECTRUM_K:
        return k
    mu = low_spectrum(ea, eo, c, A, O, k + 1, vectors=False, seed=LINK_SEED)[1]
    weak = sum(overlap_verdict(m) != "good" for m in mu[1:])
    return int(min(k, max(SPECTRUM_K, weak + SPECTRUM_K // 2)))


def _stage(problem: "_AllocationProblem", ea, eo, required: float, max_rounds: int, deadline: float, seed: int):
    """One share of the continuation: LP steps (up to :data:`LINK_LP_PART` of the time), then swaps."""
    A, O = problem.allowed.shape
    n_active = int((np.bincount(ea, minlength=A) > 0).sum())
    k = _spectrum_size(ea, eo, problem.c_of(ea, eo), A, O, n_active)
    if k < 1 or max_rounds == 0:
        return ea, eo, {"rounds": 0, "steps": 0, "swap_rounds": 0, "swaps": 0,
                        "stopped": "nothing to link" if k < 1 else "max_rounds = 0: no linking"}
    now = time.perf_counter()
    part = LINK_LP_PART if problem.allowed.shape[1] <= LINK_BLOCK_OBJECTS else LINK_LP_PART_BLOCKS
    ea, eo, stats = _link(problem, ea, eo, required, k, max_rounds, now + part * max(0.0, deadline - now))
    ea, eo, swaps = _polish(problem, ea, eo, required, k, np.random.default_rng(seed), max_rounds, deadline)
    stats.update(swaps)
    return ea, eo, stats


def _link(problem: "_AllocationProblem", ea, eo, required: float, k: int, max_rounds: int, deadline: float):
    """Sequential LP on the low spectrum (see the module docstring): returns (ea, eo, stats)."""
    A, O = problem.allowed.shape
    stats = {"rounds": 0, "steps": 0}
    spec = _spectrum(ea, eo, problem.c_of(ea, eo), A, O, k)
    delta, widened, started = max(1, ea.size // 10), False, time.perf_counter()
    stats["stopped"] = f"round limit ({max_rounds})"
    for rnd in range(max_rounds):
        if rnd >= MIN_LINK_ROUNDS and time.perf_counter() > deadline:
            stats["stopped"] = f"time limit ({deadline - started:.0f} s)"
            break
        stats["rounds"] = rnd + 1
        objs = _block(problem, spec, ea, eo, ~problem.fixed_mask[ea, eo])
        pa, po = _candidates(problem, spec, objs, ea, eo)
        cur = np.isin(pa.astype(np.int64) * O + po, ea.astype(np.int64) * O + eo)
        raw = spec.costs(pa, po, problem.c_of(pa, po))
        cost = raw / (np.abs(raw).max() or 1.0) - 1e-9 * cur  # ties: keep the read
        if problem.S is not None:
            cost -= 1e-12 * problem.S[pa, po] / (float(problem.S.max()) or 1.0)  # then: the more suitable pair
        y = _link_step(problem, pa, po, cost, cur.astype(float), objs, ea, eo, required, delta)
        moved = int((y & ~cur).sum()) if y is not None else 0
        if y is not None and moved == 0:
            if delta >= ea.size or widened:  # the whole region was searched: first-order optimal
                stats["stopped"] = "converged (no exchange of reads lowers the linearised objective)"
                break
            delta, widened = ea.size, True  # a compound exchange (a link paid for elsewhere) may need more reads
            continue
        if y is not None:
            keep = ~np.isin(eo, objs)
            trial_a, trial_o = np.concatenate([ea[keep], pa[y]]), np.concatenate([eo[keep], po[y]])
            trial = _spectrum(trial_a, trial_o, problem.c_of(trial_a, trial_o), A, O, k)
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


# ----------------------------------------------------------------------------
# Public entry point
# ----------------------------------------------------------------------------
#: Suitability shares the trade-off table reports; the linking phase passes through those between the chosen
#: share and 1 on its way down (continuation: each stage starts from the allocation of the one before).
TRADEOFF_SHARES = (1.0, 0.95, 0.9, 0.85, 0.8)
#: Time weight of the chosen share's stage against 1 for each other stage (time matters on large panels only).
CHOSEN_STAGE_WEIGHT = 4.0
#: Bounds of assign's work budget (linking rounds per stage; seconds for the whole call).
MAX_ROUNDS = 100_000
MAX_TIME_LIMIT = 3600.0


def assign(assessors, objects, reads_per_object, max_load, min_load=None, conflicts=None, suitability=None,
           min_suitability_share: float = 0.95, planned_confidence=None, seed: int = 0, fixed=None,
           max_rounds: int = 300, time_limit: float = 50.0, tradeoff_shares=None) -> Assignment:
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
        optimum (0..1) and spends the rest on links.  1 keeps the optimum's
        total and only breaks its ties towards links.
    planned_confidence:
        Expected confidence ``c_ao`` of each read (same forms as
        ``suitability``; default 1) — enters ``mu2`` and ``C_o``.
    seed:
        Random seed (tie-breaking and swap candidates); same seed, same input,
        same allocation (while the time limit does not end a stage).
    fixed:
        (assessor, object) pairs kept as they are (count towards loads and reads).
    max_rounds, time_limit:
        LP rounds (and swap rounds) per stage of the linking; seconds for the
        whole call (see the module docstring).
    tradeoff_shares:
        Shares to report in :attr:`Assignment.tradeoff` besides those the
        continuation passes through (e.g. :data:`TRADEOFF_SHARES`; shares
        below ``min_suitability_share`` are computed after the chosen one).

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
    extra = () if tradeoff_shares is None else [real_argument(s, "tradeoff_shares", low=0, high=1)
                                                  for s in np.atleast_1d(np.asarray(tradeoff_shares, dtype=object))]
    problem = _allocation_problem(assessors, objects, reads_per_object, max_load, min_load, conflicts, suitability,
                                  planned_confidence, fixed)
    ba, bo = _suitability_optimum(problem, np.random.default_rng(seed))
    S = problem.S
    best = float(S[ba, bo].sum()) if S is not None else 0.0
    lp_seconds = time.perf_counter() - started
    # continuation: each stage starts from the allocation of the next larger share
    stages = sorted({s for s in TRADEOFF_SHARES if share < s < 1.0} | {share} | set(extra), reverse=True) \
        if S is not None else [share]
    ea, eo, rows, chosen = ba, bo, [], None
    weights = [CHOSEN_STAGE_WEIGHT if s == share else 1.0 for s in stages]  # the chosen share gets most of the time
    for i, stage in enumerate(stages):
        now = time.perf_counter()
        deadline = now + max(0.0, started + time_limit - now) * weights[i] / sum(weights[i:])
        ea, eo, st = _stage(problem, ea, eo, stage * best if S is not None else -np.inf, max_rounds, deadline, seed)
        report = _report(problem, ea, eo, best)
        rows.append(_tradeoff_row(stage, report, ea, eo, ba, bo, st, time.perf_counter() - now, stage == share))
        if stage == share:
            chosen = (ea, eo, report, st)
    ea, eo, report, stats = chosen
    stats.update({"stages": len(stages), "reads_changed": rows[stages.index(share)]["reads changed"],
                  "has_suitability": S is not None,
                  "best_suitability": best * problem.s_unit if S is not None else float("nan"),
                  "required_suitability": share * best * problem.s_unit if S is not None else float("nan"),
                  "min_suitability_share": share, "seed": seed, "lp_seconds": lp_seconds,
                  "planned_confidence": problem.conf is not None,
                  "seconds": time.perf_counter() - started})
    return Assignment(allocation=_allocation_frame(problem, ea, eo), report=report,
                      baseline_allocation=_allocation_frame(problem, ba, bo), baseline=_report(problem, ba, bo, best),
                      stats=stats, tradeoff=pd.DataFrame(rows))


def _tradeoff_row(stage: float, report: DesignReport, ea, eo, ba, bo, stats: dict, seconds: float, chosen: bool):
    """One row of :attr:`Assignment.tradeoff`."""
    O = report.reads.size
    changed = int(ea.size - np.isin(ea.astype(np.int64) * O + eo, ba.astype(np.int64) * O + bo).sum())
    return {"minimum share": stage, "suitability share": report.suitability_share, "mu2": report.mu2,
            "overlap": overlap_verdict(report.mu2),
            "components": report.n_components, "reads changed": changed, "seconds": seconds,
            "stopped": stats["stopped"], "chosen": chosen}


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
    S: np.ndarray | None  # suitability over its unit (largest value in [0.5, 1))
    conf: np.ndarray | None
    s_unit: float = 1.0  # the suitability the caller gave = S x s_unit

    def __post_init__(self):
        A, O = self.allowed.shape
        self.best_s = self.top_suitable = None
        if self.S is not None:
            masked = np.where(self.allowed, self.S, -np.inf)
            self.best_s = masked.max(axis=0)  # the most suitable conflict-free read of each object
            if A > LINK_ALL_ASSESSORS:
                self.top_suitable = np.argpartition(-masked, LINK_CANDIDATES - 1, axis=0)[:LINK_CANDIDATES]

    def c_of(self, a: np.ndarray, o: np.ndarray) -> np.ndarray:
        """Planned confidence of reads (a, o) (1 without planned confidences)."""
        return self.conf[a, o] if self.conf is not None else np.ones(np.shape(a))


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
    S, unit = _scaled_suitability(pair_grid(suitability, a_names, o_names, "suitability", 0.0), a_names, o_names)
    Pc = pair_grid(planned_confidence, a_names, o_names, "planned confidence", 1.0)
    if Pc is not None and np.any(Pc[allowed] <= 0):
        raise InputError("planned confidence must be greater than 0 for every pair that may be allocated")
    _check_feasible(reads, max_l, min_l, allowed.sum(axis=0), allowed.sum(axis=1), fixed_mask.sum(axis=0),
                    fixed_mask.sum(axis=1), a_names, o_names)
    return _AllocationProblem(a_names, o_names, reads, max_l, min_l, allowed, fixed_mask, has_fixed, S, Pc, unit)


#: Largest suitability of one pair.  Suitability is relative (only ratios matter): the limit keeps the total
#: over every read finite and the linear programs' costs within the solver's tolerances.
MAX_SUITABILITY = 1e15


def _scaled_suitability(S: np.ndarray | None, a_names, o_names) -> tuple[np.ndarray | None, float]:
    """(S divided by a power of two that brings its largest value to [0.5, 1), that power): the linear programs
    see the same numbers whatever unit the suitabilities are given in (exact: only the exponent changes), and
    totals are reported in the given unit.  A value beyond :data:`MAX_SUITABILITY` is refused by its pair."""
    if S is None:
        return None, 1.0
    top = float(S.max()) if S.size else 0.0
    if top > MAX_SUITABILITY:
        a, o = np.unravel_index(int(np.argmax(S)), S.shape)
        raise InputError(f"suitability of assessor {a_names[a]!r} for object {o_names[o]!r} is {top:g}; the limit is "
                         f"{MAX_SUITABILITY:g} (suitability is relative: divide every value by a common factor)")
    if top == 0:
        return S, 1.0
    exponent = int(np.frexp(top)[1])
    return np.ldexp(S, -exponent), float(np.ldexp(1.0, exponent))


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
        out["suitability"] = problem.S[a, o] * problem.s_unit
    if problem.has_fixed:
        out["fixed"] = problem.fixed_mask[a, o]
    return pd.DataFrame(out)


def _report(problem: _AllocationProblem, ea, eo, best: float) -> DesignReport:
    """The :class:`DesignReport` of reads (ea, eo) (planned confidences, suitability share of ``best``)."""
    report = allocation_report(ea, eo, problem.c_of(ea, eo), problem.a_names, problem.o_names, problem.S, best)
    return replace(report, total_suitability=report.total_suitability * problem.s_unit)
