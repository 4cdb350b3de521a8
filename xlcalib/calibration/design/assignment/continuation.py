"""Continuation over the suitability share: the stages of the linking, and the trade-off table they make.

The linking runs at the shares of :data:`TRADEOFF_SHARES` between the chosen one and 1 first (and at 1
itself when the trade-off asks for it: ties of the optimum), each stage starting from the previous
allocation: ``phi`` falls from stage to stage, so a smaller share never buys less overlap, and the stages
are the trade-off table (:attr:`~xlcalib.calibration.design.assignment.Assignment.tradeoff`) at little
extra cost.  One stage is the LP steps of :mod:`.linking` (up to :data:`LINK_LP_PART` of its time), then
the swaps of :mod:`.polish` (the rest).

Time: each stage gets a share of the time left, the chosen share :data:`CHOSEN_STAGE_WEIGHT` times as much
as each other one; the LP steps always run at least :data:`~.linking.MIN_LINK_ROUNDS` rounds.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .... import progress
from ...system.graph import overlap_verdict
from ..report import DesignReport
from .linking import link, takes_blocks
from .polish import polish
from .problem import AllocationProblem, report_of
from .spectrum import eigenpairs_followed

__all__ = ["TRADEOFF_SHARES", "Stage", "stage_shares", "continuation"]

#: Suitability shares the trade-off table reports; the linking phase passes through those between the chosen
#: share and 1 on its way down (continuation: each stage starts from the allocation of the one before).
TRADEOFF_SHARES = (1.0, 0.95, 0.9, 0.85, 0.8)
#: Time weight of the chosen share's stage against 1 for each other stage (time matters on large panels only).
CHOSEN_STAGE_WEIGHT = 4.0
#: Share of a stage's time the LP steps may use before the swaps take over; on panels whose LPs take blocks of
#: objects the swaps, which reach every object each round, get most of it.
LINK_LP_PART = 0.6
LINK_LP_PART_BLOCKS = 0.25


@dataclass
class Stage:
    """One share of the continuation: the allocation it ended with, its report, how it got there."""

    share: float
    chosen: bool  # the share the caller asked for
    ea: np.ndarray
    eo: np.ndarray
    report: DesignReport
    stats: dict
    seconds: float

    def tradeoff_row(self, ba, bo) -> dict:
        """Its row of :attr:`Assignment.tradeoff` (reads changed counted against the start (ba, bo))."""
        report = self.report
        O = report.reads.size
        changed = int(self.ea.size - np.isin(self.ea.astype(np.int64) * O + self.eo,
                                             ba.astype(np.int64) * O + bo).sum())
        return {"minimum share": self.share, "suitability share": report.suitability_share, "mu2": report.mu2,
                "overlap": overlap_verdict(report.mu2),
                "components": report.n_components, "reads changed": changed, "seconds": self.seconds,
                "stopped": self.stats["stopped"], "chosen": self.chosen}


def stage_shares(share: float, extra, has_suitability: bool) -> list[float]:
    """The shares the continuation runs at, largest first: those of :data:`TRADEOFF_SHARES` between ``share``
    and 1, ``share`` itself and the ``extra`` ones asked for (without suitability: ``share`` only)."""
    if not has_suitability:
        return [share]
    return sorted({s for s in TRADEOFF_SHARES if share < s < 1.0} | {share} | set(extra), reverse=True)


def continuation(problem: AllocationProblem, ba, bo, best: float, shares: list[float], chosen_share: float,
                 max_rounds: int, end: float, seed: int) -> list[Stage]:
    """Link at each share in turn, each stage from the previous allocation (the first from (ba, bo)), until
    ``end`` (a ``time.perf_counter`` time); ``best`` is the suitability-only optimum's total."""
    ea, eo, stages = ba, bo, []
    weights = [CHOSEN_STAGE_WEIGHT if s == chosen_share else 1.0 for s in shares]
    for i, share in enumerate(shares):
        now = time.perf_counter()
        deadline = now + max(0.0, end - now) * weights[i] / sum(weights[i:])
        required = share * best if problem.S is not None else -np.inf
        words = f"linking the assessors, keeping {share:.0%} of the suitability" if problem.S is not None else \
            "linking the assessors"
        with progress.step(words):
            ea, eo, stats = run_stage(problem, ea, eo, required, max_rounds, deadline, seed)
        report = report_of(problem, ea, eo, best)
        stages.append(Stage(share, share == chosen_share, ea, eo, report, stats, time.perf_counter() - now))
    return stages


def run_stage(problem: AllocationProblem, ea, eo, required: float, max_rounds: int, deadline: float, seed: int):
    """One share of the continuation: LP steps (up to :data:`LINK_LP_PART` of the time), then swaps."""
    A, O = problem.allowed.shape
    n_active = int((np.bincount(ea, minlength=A) > 0).sum())
    k = eigenpairs_followed(ea, eo, problem.c_of(ea, eo), A, O, n_active)
    if k < 1 or max_rounds == 0:
        return ea, eo, {"rounds": 0, "steps": 0, "swap_rounds": 0, "swaps": 0,
                        "stopped": "nothing to link" if k < 1 else "max_rounds = 0: no linking"}
    now = time.perf_counter()
    part = LINK_LP_PART_BLOCKS if takes_blocks(O) else LINK_LP_PART
    ea, eo, stats = link(problem, ea, eo, required, k, max_rounds, now + part * max(0.0, deadline - now))
    ea, eo, swaps = polish(problem, ea, eo, required, k, np.random.default_rng(seed), max_rounds, deadline)
    stats.update(swaps)
    return ea, eo, stats
