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
   :data:`~.continuation.TRADEOFF_SHARES` between the chosen one and 1 first (and at 1 itself
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
most, and at least :data:`~.linking.MIN_LINK_ROUNDS` LP rounds); ``stats['stopped']``
and the trade-off's ``stopped`` column say what ended each stage.  The
funder's panel (24 x 150 x 4) takes 5-15 s for all five shares; 100 x 1,000
one to two minutes per share; at 1,000 assessors x 10,000 objects the LP
takes 10-25 s and the time limit ends the linking (``stopped`` says so, and
the result then depends on the machine's speed).  Within those limits the
result is reproducible for a given ``seed``.

Modules, in the order :func:`assign` uses them (each imports only those above it):

* :mod:`.feasibility` — why no allocation is possible (counts before solving, max flow after the LP);
* :mod:`.problem` — the checked inputs (:class:`~.problem.AllocationProblem`), the result frame and report;
* :mod:`.lp` — step 1, the transportation LP, and the 0/1 programs of the linking steps (HiGHS);
* :mod:`.spectrum` — the linking objective ``phi`` and the prices of reads (:class:`~.spectrum.LowSpectrum`);
* :mod:`.linking` — step 2's LP steps; :mod:`.polish` — step 2's spectral swaps;
* :mod:`.continuation` — step 3, the stages over the share and the trade-off table.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .... import progress
from ....cells import real_argument, seed_argument, whole_argument
from ..report import DesignReport
# TRADEOFF_SHARES belongs to the face too: the shares tradeoff_shares= usually takes
from .continuation import TRADEOFF_SHARES, continuation, stage_shares  # noqa: F401
from .lp import suitability_optimum
from .problem import AllocationProblem, allocation_frame, allocation_problem, report_of

__all__ = ["Assignment", "assign"]

#: Bounds of assign's work budget (linking rounds per stage; seconds for the whole call).
MAX_ROUNDS = 100_000
MAX_TIME_LIMIT = 3600.0


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
    problem = allocation_problem(assessors, objects, reads_per_object, max_load, min_load, conflicts, suitability,
                                 planned_confidence, fixed)
    with progress.step("allocating by suitability alone"):
        ba, bo = suitability_optimum(problem, np.random.default_rng(seed))  # 1. the suitability-only optimum
    best = problem.total_suitability(ba, bo)
    lp_seconds = time.perf_counter() - started
    shares = stage_shares(share, extra, problem.S is not None)  # 2.-3. linking at each share, largest first
    stages = continuation(problem, ba, bo, best, shares, share, max_rounds, started + time_limit, seed)
    rows = [stage.tradeoff_row(ba, bo) for stage in stages]
    chosen = shares.index(share)
    stats = stages[chosen].stats
    stats.update({"stages": len(stages), "reads_changed": rows[chosen]["reads changed"],
                  **_suitability_stats(problem, best, share), "min_suitability_share": share, "seed": seed,
                  "lp_seconds": lp_seconds, "planned_confidence": problem.conf is not None,
                  "seconds": time.perf_counter() - started})
    return Assignment(allocation=allocation_frame(problem, stages[chosen].ea, stages[chosen].eo),
                      report=stages[chosen].report,
                      baseline_allocation=allocation_frame(problem, ba, bo), baseline=report_of(problem, ba, bo, best),
                      stats=stats, tradeoff=pd.DataFrame(rows))


def _suitability_stats(problem: AllocationProblem, best: float, share: float) -> dict:
    """The suitability entries of :attr:`Assignment.stats`, in the caller's unit (nan without suitability)."""
    has = problem.S is not None
    return {"has_suitability": has,
            "best_suitability": best * problem.s_unit if has else float("nan"),
            "required_suitability": share * best * problem.s_unit if has else float("nan")}
