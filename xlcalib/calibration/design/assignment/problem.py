"""The allocation problem: the checked inputs of :func:`~xlcalib.calibration.design.assignment.assign`, and
the frame and report an allocation is handed back in.

Every argument is checked here with a message naming the item (an unknown assessor, a kept read twice or in
conflict, a suitability out of range), and limits no allocation can meet are refused before any solver runs
(:mod:`.feasibility`).  What the solvers then see:

* reads per object, min and max loads per assessor, the A x O masks of conflict-free pairs and of kept reads;
* the suitability divided by a power of two that brings its largest value to [0.5, 1): the linear programs
  see the same numbers whatever unit the caller used (exact: only the exponent changes), and totals are
  reported in the caller's unit (``s_unit``);
* the planned confidences ``c_ao`` (1 when none are given), which weigh each read in ``mu2``.

Allocations travel between the steps as two index arrays ``(ea, eo)`` (assessor and object of each read,
``np.intp``); :func:`allocation_frame` and :func:`report_of` turn them into what the caller sees.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ....errors import InputError
from ...panel.arguments import name_index, pair_grid, pair_indices, per_item_counts
from ..report import DesignReport, allocation_report
from .feasibility import check_feasible

__all__ = ["MAX_SUITABILITY", "MAX_PAIRS", "AllocationProblem", "allocation_problem", "allocation_frame",
           "report_of"]

#: Largest suitability of one pair.  Suitability is relative (only ratios matter): the limit keeps the total
#: over every read finite and the linear programs' costs within the solver's tolerances.
MAX_SUITABILITY = 1e15
#: Most assessor-object pairs assign handles (the A x O masks and grids must fit in memory).
MAX_PAIRS = 50_000_000


@dataclass
class AllocationProblem:
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
    best_s: np.ndarray | None = field(default=None, init=False)  # each object's most suitable conflict-free read
    _most_suitable: dict = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self):
        if self.S is not None:
            self.best_s = np.where(self.allowed, self.S, -np.inf).max(axis=0)

    def c_of(self, a: np.ndarray, o: np.ndarray) -> np.ndarray:
        """Planned confidence of reads (a, o) (1 without planned confidences)."""
        return self.conf[a, o] if self.conf is not None else np.ones(np.shape(a))

    def total_suitability(self, ea: np.ndarray, eo: np.ndarray) -> float:
        """Suitability of reads (ea, eo) in the solvers' unit (0 without suitability)."""
        return float(self.S[ea, eo].sum()) if self.S is not None else 0.0

    def most_suitable_readers(self, k: int) -> np.ndarray:
        """The k most suitable conflict-free assessors of each object (k x O, in no order; needs suitability).

        Kept per k: every linking round of every stage offers them to its LP, and the A x O partition would
        otherwise be redone each round.
        """
        if k not in self._most_suitable:
            masked = np.where(self.allowed, self.S, -np.inf)
            self._most_suitable[k] = np.argpartition(-masked, k - 1, axis=0)[:k]
        return self._most_suitable[k]


def allocation_problem(assessors, objects, reads_per_object, max_load, min_load, conflicts, suitability,
                       planned_confidence, fixed) -> AllocationProblem:
    """Every input of :func:`assign` checked, with a message naming the item; infeasible limits refused up front."""
    a_names = name_index(assessors, "assessors")
    o_names = name_index(objects, "objects")
    A, O = len(a_names), len(o_names)
    reads = per_item_counts(reads_per_object, o_names, "reads per object", "objects")
    max_l = per_item_counts(max_load, a_names, "max load", "assessors")
    min_l = per_item_counts(min_load, a_names, "min load", "assessors", allow_none=True)
    min_l = np.zeros(A, dtype=np.intp) if min_l is None else min_l
    if A * O > MAX_PAIRS:
        raise InputError(f"{A} assessors x {O} objects = {A * O:,} pairs is more than assign handles ({MAX_PAIRS:,})")
    ca, co = pair_indices(conflicts, a_names, o_names, "conflicts")
    allowed = np.ones((A, O), dtype=bool)
    allowed[ca, co] = False
    fixed_mask, has_fixed = _kept_reads(fixed, allowed, a_names, o_names)
    S, unit = _scaled_suitability(pair_grid(suitability, a_names, o_names, "suitability", 0.0), a_names, o_names)
    Pc = pair_grid(planned_confidence, a_names, o_names, "planned confidence", 1.0)
    if Pc is not None and np.any(Pc[allowed] <= 0):
        raise InputError("planned confidence must be greater than 0 for every pair that may be allocated")
    check_feasible(reads, max_l, min_l, allowed.sum(axis=0), allowed.sum(axis=1), fixed_mask.sum(axis=0),
                   fixed_mask.sum(axis=1), a_names, o_names)
    return AllocationProblem(a_names, o_names, reads, max_l, min_l, allowed, fixed_mask, has_fixed, S, Pc, unit)


def _kept_reads(fixed, allowed, a_names, o_names) -> tuple[np.ndarray, bool]:
    """The A x O mask of reads kept as they are; a kept read twice or in conflict is refused by row."""
    A, O = allowed.shape
    fa, fo = pair_indices(fixed, a_names, o_names, "kept reads")
    fixed_mask = np.zeros((A, O), dtype=bool)
    if fa.size:
        key = pd.Series(fa.astype(np.int64) * O + fo)
        if key.duplicated().any():
            i = int(np.flatnonzero(key.duplicated().to_numpy())[0])
            raise InputError(f"kept reads, row {i + 1}: assessor {a_names[fa[i]]!r} reads object {o_names[fo[i]]!r} "
                             f"twice")
        clash = np.flatnonzero(~allowed[fa, fo])
        if clash.size:
            i = int(clash[0])
            raise InputError(f"kept reads, row {i + 1}: assessor {a_names[fa[i]]!r} has a conflict with object "
                             f"{o_names[fo[i]]!r}")
        fixed_mask[fa, fo] = True
    return fixed_mask, bool(fa.size)


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


def allocation_frame(problem: AllocationProblem, a_idx, o_idx) -> pd.DataFrame:
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


def report_of(problem: AllocationProblem, ea, eo, best: float) -> DesignReport:
    """The :class:`DesignReport` of reads (ea, eo) (planned confidences, suitability share of ``best``)."""
    report = allocation_report(ea, eo, problem.c_of(ea, eo), problem.a_names, problem.o_names, problem.S, best)
    return replace(report, total_suitability=report.total_suitability * problem.s_unit)
