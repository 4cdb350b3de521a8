"""Panel design before scoring: is a planned allocation calibratable, and which extra reads would help most.

Calibration can only compare the standards of assessors who share objects
(directly or through others).  The robustness bound
``|dv_o| <= sqrt(2 N w / (mu2 C_o))`` (MacKay et al. 2017, eq. 19) says what a
good allocation looks like: no object with a much smaller total confidence
``C_o`` than the others, and a graph robustness ``mu2`` well above 0.
:func:`design_report` measures an allocation; :func:`design_check` also
suggests the extra pairs that raise ``mu2`` most (or link unconnected groups).
The allocation itself is made by :func:`xlcalib.calibration.design.assignment.assign`.

Notation (as in :mod:`xlcalib.calibration.system.graph`): ``c_ao`` the planned
confidence of a read (default 1), ``C_o = sum_a c_ao``, ``C'_a = sum_o c_ao``,
``W = Cm diag(1/C_o) Cm^T`` and ``mu2`` the second-smallest eigenvalue of
``T = I - C'^-1/2 W C'^-1/2`` (0 = disconnected, 1 = every assessor reads
everything).  Only numpy, scipy and pandas are used (the module loads in
xlwings Lite).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ...cells import whole_argument
from ...errors import InputError
from ..panel.data import factorized_labels, numeric_column, row_text
from ..panel.arguments import name_index, pair_grid, pair_indices
from ..system.graph import Design, ReducedSolver, components, low_spectrum, mu2, overlap_verdict

__all__ = ["DesignCheck", "DesignReport", "design_check", "design_report", "allocation_report", "count_components",
           "MAX_DESIGN_SUGGESTIONS"]

#: Most extra assignments design_check suggests (each is verified by exact mu2 solves; time grows with k).
MAX_DESIGN_SUGGESTIONS = 50


# ----------------------------------------------------------------------------
# Result objects
# ----------------------------------------------------------------------------
@dataclass
class DesignReport:
    """How good one allocation is for calibration (no scores needed).

    ``mu2``: graph robustness (0 = disconnected, larger is better; the
    seed's bounds scale with ``1/sqrt(mu2)``).  ``object_confidence``: ``C_o``
    per object (planned confidences, default 1 per read).  ``loads``: reads
    per assessor.  ``reads``: reads per object.  ``total_suitability`` and
    ``suitability_share`` (of the best suitability-only allocation) are NaN
    without suitability.  ``components``: (assessor, component) — more than
    one component means some assessors' standards cannot be compared at all.
    """

    mu2: float
    n_components: int
    object_confidence: pd.Series
    loads: pd.Series
    reads: pd.Series
    total_suitability: float
    suitability_share: float
    components: pd.DataFrame

    def table(self) -> pd.DataFrame:
        """(statistic, value, meaning) rows — what the Design sheet shows."""
        c = self.object_confidence
        busy = self.loads[self.loads > 0]
        rows = [
            ("mu2", self.mu2, "graph robustness: 0 = assessors in groups that share no object, larger is better "
                              "(calibration error bounds scale with 1/sqrt(mu2))"),
            ("assessor overlap", overlap_verdict(self.mu2),
             "mu2 in plain words (the same words as the Diagnostics sheet of a calibration)"),
            ("connected components", self.n_components, "groups of assessors linked by shared objects (1 is needed)"),
            ("C_o min", float(c.min()), "smallest total planned confidence of an object"),
            ("C_o median", float(c.median()), "median total planned confidence of an object"),
            ("C_o max", float(c.max()), "largest total planned confidence of an object"),
            ("C_o min / median", float(c.min() / c.median()) if c.median() > 0 else float("nan"),
             "1 = every object equally well read; well below 1 = some objects much weaker"),
            ("reads", int(self.reads.sum()), "total (assessor, object) reads"),
            ("reads per object min", int(self.reads.min()), ""),
            ("reads per object max", int(self.reads.max()), ""),
            ("load min", int(busy.min()) if len(busy) else 0, "fewest reads of an assessor who reads anything"),
            ("load max", int(self.loads.max()), "most reads of one assessor"),
            ("assessors without reads", int((self.loads == 0).sum()), ""),
            ("total suitability", self.total_suitability, "sum of the suitability of the allocated reads"),
            ("suitability share", self.suitability_share,
             "total suitability / that of the best suitability-only allocation (1 = as suitable as possible)"),
        ]
        return pd.DataFrame(rows, columns=["statistic", "value", "meaning"])




@dataclass
class DesignCheck:
    """Design check of a planned assignment (before any scores exist).

    ``components``: DataFrame (assessor, component).  ``mu2``: robustness
    eigenvalue (NaN when disconnected).  ``object_confidence``: C_o per object.
    ``suggestions``: DataFrame of extra (assessor, object) pairs, best first,
    with ``mu2_after`` (connected design) or ``connects`` (disconnected).
    """

    n_components: int
    components: pd.DataFrame
    mu2: float
    object_confidence: pd.Series
    suggestions: pd.DataFrame

    def summary_table(self) -> pd.DataFrame:
        c = self.object_confidence
        return pd.DataFrame(
            {
                "statistic": ["n_components", "mu2", "C_o min", "C_o median", "C_o max"],
                "value": [self.n_components, self.mu2, c.min(), c.median(), c.max()],
            }
        )


# ----------------------------------------------------------------------------
# Reports
# ----------------------------------------------------------------------------
def count_components(ea, eo, A, O) -> tuple[int, np.ndarray]:
    """(number of components with a reading assessor, component of each assessor numbered 1.., 0 = reads nothing)."""
    n, comp_a, _comp_o = components(ea, eo, A, O)
    active = np.bincount(ea, minlength=A) > 0
    used = np.unique(comp_a[active])
    remap = np.full(n, 0, dtype=np.intp)
    remap[used] = np.arange(1, used.size + 1)
    return int(used.size), np.where(active, remap[comp_a], 0)


def planned_mu2(ea, eo, c, A, O) -> float:
    """mu2 of a connected planned design, over the assessors and objects that take part in it."""
    a_used, a_local = np.unique(ea, return_inverse=True)
    o_used, o_local = np.unique(eo, return_inverse=True)
    design = Design(a_local.astype(np.intp), o_local.astype(np.intp), np.asarray(c, dtype=float), a_used.size,
                    o_used.size)
    return mu2(ReducedSolver(design)) if a_used.size > 1 else float("nan")


def allocation_report(ea, eo, c, a_names, o_names, S, best) -> DesignReport:
    """The :class:`DesignReport` of reads (ea, eo) with planned confidences c; S, best give the suitability share."""
    A, O = len(a_names), len(o_names)
    n_comp, comp = count_components(ea, eo, A, O)
    m = 0.0 if n_comp > 1 else planned_mu2(ea, eo, c, A, O)
    total = float(S[ea, eo].sum()) if S is not None else float("nan")
    share = total / best if S is not None and best > 0 else (1.0 if S is not None else float("nan"))
    return DesignReport(
        mu2=m, n_components=n_comp,
        object_confidence=pd.Series(np.bincount(eo, weights=c, minlength=O), index=pd.Index(o_names, name="object"),
                                    name="total_confidence"),
        loads=pd.Series(np.bincount(ea, minlength=A), index=pd.Index(a_names, name="assessor"), name="load"),
        reads=pd.Series(np.bincount(eo, minlength=O), index=pd.Index(o_names, name="object"), name="reads"),
        total_suitability=total, suitability_share=float(share),
        components=pd.DataFrame({"assessor": np.asarray(a_names, dtype=object), "component": comp}),
    )


def design_report(allocation: pd.DataFrame, assessors=None, objects=None, suitability=None,
                  planned_confidence=None, best_suitability: float | None = None) -> DesignReport:
    """The design report of a given allocation (assessor, object) — e.g. one a secretary made by hand.

    ``suitability`` / ``planned_confidence`` as in :func:`assign`;
    ``best_suitability`` (the suitability-only optimum) gives the share.
    """
    if not isinstance(allocation, pd.DataFrame) or allocation.shape[1] < 2:
        raise InputError("the allocation must be a table with columns assessor and object")
    a_names = name_index(pd.unique(allocation.iloc[:, 0]) if assessors is None else assessors, "assessors")
    o_names = name_index(pd.unique(allocation.iloc[:, 1]) if objects is None else objects, "objects")
    ea, eo = pair_indices(allocation.iloc[:, :2], a_names, o_names, "allocation")
    S = pair_grid(suitability, a_names, o_names, "suitability", 0.0)
    P = pair_grid(planned_confidence, a_names, o_names, "planned confidence", 1.0)
    c = np.ones(ea.size) if P is None else P[ea, eo]
    best = best_suitability if best_suitability is not None else (float(S[ea, eo].sum()) if S is not None else 0.0)
    return allocation_report(ea, eo, c, a_names, o_names, S, best)


# ----------------------------------------------------------------------------
# Design check: the best extra pairs
# ----------------------------------------------------------------------------
def _planned_reads(assessors, objects, confidence):
    """(ai, oi, c, assessor names, object names, assessor labels, object labels) of a planned allocation."""
    ai, a_names, a_lab = factorized_labels(assessors, "assessor")
    oi, o_names, o_lab = factorized_labels(objects, "object")
    if len(a_lab) != len(o_lab):
        raise InputError(f"assessors ({len(a_lab)}) and objects ({len(o_lab)}) differ in length")
    if confidence is None:
        c = np.ones(len(a_lab))
    else:
        c = numeric_column(confidence, "confidence", lambda i: f"assessor {a_lab[i]}, object {o_lab[i]}")
        if np.any(c <= 0):
            i = int(np.flatnonzero(c <= 0)[0])
            raise InputError(f"{row_text(i)}: confidence must be positive", {"row": i, "column": "confidence"})
    if len(a_names) < 2 or len(o_names) < 2:
        raise InputError("a design needs at least two assessors and two objects")
    key = pd.Series(ai.astype(np.int64) * len(o_names) + oi)
    if key.duplicated().any():
        i = int(np.flatnonzero(key.duplicated().to_numpy())[0])
        raise InputError(f"{row_text(i)}: assessor {a_lab[i]} is assigned object {o_lab[i]} twice", {"row": i})
    return ai, oi, c, a_names, o_names


def _linking_pairs(ai, comp_a, comp_o, C_o, a_names, o_names, n_comp: int, k: int) -> pd.DataFrame:
    """One pair per extra component, linking it to the largest: the main group's least-loaded assessor reads
    the other group's object of lowest C_o."""
    A = len(a_names)
    sizes = np.bincount(comp_a, minlength=n_comp)
    main = int(np.argmax(sizes))
    load = np.bincount(ai, minlength=A)
    main_a = np.flatnonzero(comp_a == main)
    rows = []
    for comp in range(n_comp):
        if comp == main:
            continue
        objs = np.flatnonzero(comp_o == comp)
        o_best = objs[np.argmin(C_o[objs])]
        a_best = main_a[np.argmin(load[main_a])]
        rows.append({"assessor": a_names[a_best], "object": o_names[o_best], "connects": f"component {comp + 1} to {main + 1}"})
        load[a_best] += 1
    return pd.DataFrame(rows[:max(k, len(rows))])


def _raising_pairs(design: Design, c_new: float, a_names, o_names, k: int) -> pd.DataFrame:
    """The k unassigned pairs that raise mu2 most, each verified by an exact mu2 after adding it alone.

    Candidates are ranked by a first-order estimate of the gain, ``c (g_a - gbar_o)^2`` with ``g = C'^-1/2 f``
    the Fiedler vector and ``gbar_o`` the confidence-weighted mean of ``g`` over o's assessors; the best
    ``10 k`` are re-evaluated exactly.
    """
    A, O = design.n_assessors, design.n_objects
    _active, _mu, X = low_spectrum(design.ai, design.oi, design.c, A, O, 2, vectors=True)
    g = X[:, 1]
    gbar = (design.Cm @ sp.diags(1.0 / design.C_o)).T @ g  # weighted mean of g over each object's assessors
    score = c_new * (g[:, None] - gbar[None, :]) ** 2
    score[design.ai, design.oi] = -np.inf  # already assigned
    n_cand = min(10 * k, int(np.isfinite(score).sum()))
    # candidates by score; scores equal to 1e-9 (symmetric designs) in pair order, so floating-point noise
    # never picks among equals and every platform (CPython, Pyodide) suggests the same pairs
    finite = np.flatnonzero(np.isfinite(score.ravel()))
    key = np.round(score.ravel()[finite] / max(float(score.ravel()[finite].max(initial=0.0)), 1e-300), 9)
    flat = finite[np.lexsort((finite, -key))][:n_cand]
    rows = []
    for idx in flat:
        a, o = divmod(int(idx), O)
        trial = design.with_reads(np.array([a]), np.array([o]), np.array([c_new]))
        rows.append({"assessor": a_names[a], "object": o_names[o], "mu2_after": mu2(ReducedSolver(trial))})
    suggestions = pd.DataFrame(rows, columns=["assessor", "object", "mu2_after"])
    order = np.lexsort((np.arange(len(suggestions)), -suggestions["mu2_after"].round(9).to_numpy()))
    return suggestions.iloc[order].head(k).reset_index(drop=True)


def design_check(assessors, objects, confidence=None, k: int = 5) -> DesignCheck:
    """Check a planned assignment before scoring: connectivity, mu2, C_o spread, best extra pairs.

    ``confidence`` (optional, per planned pair) defaults to 1.  Suggestions:

    * connected design — candidate pairs (a, o) not yet assigned are ranked by
      a first-order estimate of the mu2 gain, ``c * (g_a - gbar_o)^2`` with
      ``g = C'^-1/2 f`` the Fiedler vector of the reduced operator and
      ``gbar_o`` the confidence-weighted mean of ``g`` over o's assessors; the
      best ``10 k`` candidates are then re-evaluated *exactly* (mu2 after adding
      each alone, confidence = median planned confidence) and the top ``k``
      are returned with ``mu2_after``.
    * disconnected design — one pair per extra component linking it to the
      largest: the least-loaded assessor of the largest component with the
      object of lowest C_o in the other component.
    """
    k = whole_argument(k, "k", low=0, high=MAX_DESIGN_SUGGESTIONS, why="each suggestion is checked by 10 exact mu2 solves")
    ai, oi, c, a_names, o_names = _planned_reads(assessors, objects, confidence)
    A, O = len(a_names), len(o_names)
    if k > (k_max := max(5, int(MAX_DESIGN_SUGGESTIONS * (100 / max(A, 100)) ** 3))):  # exact solves cost ~A^3; 5 = default
        raise InputError(f"with {A} assessors at most {k_max} suggestion(s) can be checked within about a minute "
                         f"(each costs 10 exact mu2 solves of a {A} x {A} system); lower k")
    n_comp, comp_a, comp_o = components(ai, oi, A, O)
    design = Design(ai, oi, c, A, O)
    comps = pd.DataFrame({"assessor": a_names.to_numpy(), "component": comp_a + 1})
    C_o = pd.Series(design.C_o, index=pd.Index(o_names.to_numpy(), name="object"), name="total_confidence")
    if n_comp > 1:
        return DesignCheck(n_comp, comps, float("nan"), C_o,
                           _linking_pairs(ai, comp_a, comp_o, design.C_o, a_names, o_names, n_comp, k))
    return DesignCheck(1, comps, mu2(ReducedSolver(design)), C_o,
                       _raising_pairs(design, float(np.median(c)), a_names, o_names, k))
