"""Next reads during scoring: which extra (assessor, object) reads settle the funding decision best.

Mid-panel the secretary can ask a few assessors for one more read each.  The
posterior covariance of the calibrated values after a read does *not* depend
on the score the read will get, so the effect of every possible read can be
computed before anyone scores it.  Only the reads the panel's rules allow are
considered -- conflicts, maximum loads, pending reads and subjects are hard
constraints (:mod:`xlcalib.calibration.decide.read_rules`) -- and each suggestion
says in one sentence what it is expected to change.  For the same reason
pending reads (allocated, not scored yet) are taken in as reads that will
come: the suggestions complement them.

The model (see :class:`xlcalib.calibration.system.posterior.Posterior`), in units of the
noise scale ``w``: ``v_o = V_o/Cd_o + (k - d_o)' theta`` with ``Cov(theta) =
w H``, ``d_o = c_.o / Cd_o`` and object noise ``w / Cd_o``.  A read of object
``o*`` by assessor ``a*`` with confidence ``c`` observes ``x = v_o* + b_a*``
(gauge-free) with noise ``w / c``; by Sherman-Morrison the covariance becomes

    Cov' = Cov - c (Cov x)(Cov x)' / (w + c x' Cov x)
    Cov(v_o, x)  = w [delta_{o o*} / Cd_o* + (d_o - k)' H (d_o* - e_a*)]
    x' Cov x     = w [1/Cd_o* + (d_o* - e_a*)' H (d_o* - e_a*)]

Objective with a funding line ``X`` (``P_o = Phi(z_o)``, ``z_o = (v_o -
X)/sd_o``): the expected drop in the number of objects on the wrong side of
the line, ``sum_o min(P_o, 1 - P_o)`` (``objective="errors"``, the default),
or in the *borderline mass* ``sum_o P_o (1 - P_o)`` (``"borderline"``).
Before the read's score is known, the updated mean is ``N(v_o, var_o -
var'_o)`` (the law of total variance: the posterior mean's spread is what the
variance loses); with ``rho_o = 1 - var'_o/var_o`` the updated standardised
distance is

    z'_o = (z_o + sqrt(rho_o) Z) / sqrt(1 - rho_o),    Z ~ N(0, 1),

and the pre-posterior expectations are closed-form (Owen's T; for the
borderline mass ``Phi(z) - Phi_2(z, z; rho)``):

    E[min(P', 1 - P')] = 2 T(z_o, sqrt((1 - rho_o)/rho_o))
    E[P'(1 - P')]      = 2 T(z_o, sqrt((1 - rho_o)/(1 + rho_o)))

(``rho = 0`` gives ``min(P, 1 - P)`` and ``P(1 - P)``, ``rho -> 1`` gives 0).
The wrong sides are the default because misclassification at the line is what
a panel must avoid; on simulated panels that objective left fewer objects on
the wrong side than the borderline mass in most settings
(``benchmarks/bench_next_reads.py``, ``benchmarks/next_reads_ungrouped.py``).  Each
suggestion's sentence gives where ``P'_o = Phi(z'_o)`` will most likely land:
``P'`` is increasing in ``Z``, so its quantiles are ``Phi((z_o + sqrt(rho_o)
q_p)/sqrt(1 - rho_o))``; the sentence names the 1/3 and 2/3 quantiles, so
"below L% or above U%" happens with probability 2/3.

A set of reads is chosen greedily: after each pick the read is added to the
design (covariances need no score), the reduced system is re-solved, and the
remaining candidates are scored against the same ``z_o`` and starting
variances (so ``rho_o`` is the joint effect of all reads picked so far).
Candidates are first screened by the first-order gain ``sum_o
phi_2(z_o, z_o; rho_o) dvar_o / var_o`` -- an exact quadratic form in each
candidate, evaluated for all candidates at once with dense matrix products --
and the best :data:`EXACT_CANDIDATES` are scored exactly with Owen's T over
the :data:`RELEVANT_OBJECTS` objects nearest the line.

A ``top_k`` line is approximated by the threshold midway between the k-th and
(k+1)-th calibrated values, with values measured relative to the mean bias of
those two objects' assessors (so the common gauge uncertainty, which moves
the line with every value, does not count); a ``threshold`` is a calibrated
score in the result's own gauge.  The normal approximation is used even when
the result's intervals are Student t.

Without a line the reads that most reduce ``sum_o Var(v_o)`` are chosen
(A-optimal design): they go to the objects and assessors with the largest
standard errors and the weakest links between assessors.

The confidence a new read is assumed to have is the assessor's expected one.
On a panel scored with levels (High/Medium/Low) it is the mean confidence of
the assessor's reads of pairs like the suggested ones -- the suitable pairs
when suitability is given (every suggestion is one, so a Low read outside the
assessor's subjects does not count), else all their reads -- because a read's
information ``c`` enters the variance update linearly to first order, so its
expectation over the level the assessor will choose is the mean ``c``.  The
sentence names the level the assessor used most often (ties: the lower).
Assuming that most used level instead (as before) overrated assessors who
mix High and Medium reads: on 40 benchmark panels the mean left 0.067 ±
0.009 fewer expected wrong sides per panel at 10% extra reads (0.015 ±
0.004 at 20%; paired, ``benchmarks/bench_next_reads.py``).  Without levels the
assumed confidence is the median of the assessor's confidences.
``confidence=`` overrides either.

How close the greedy batch comes to the best one was measured on the
benchmark's grouped panels (``bench_next_reads.py --bound``): Fedorov's
exchange search (swap any suggested read for any allowed one while the
expected wrong sides fall) improves the greedy plan by at most 0.02 expected
wrong sides; even knowing each read's level in advance, the exchange search
(from the greedy plan or from a random one: the same end) leaves only 0.2-0.3
fewer; and the expected wrong sides match the realised counts.  What limits the suggestions
on such panels is the rules (few allowed readers per borderline object), not
the choice among the allowed reads.

Cost per greedy step: one Cholesky factor and inverse of the A x A reduced
system (O(A^3)), products O(nnz A + O A), O(candidates) for the screen and
O(EXACT_CANDIDATES x RELEVANT_OBJECTS) Owen's T evaluations.  Memory O(O A).
Reference: Sherman & Morrison (1950); Owen (1956) "Tables for computing
bivariate normal probabilities"; greedy A-optimal / value-of-information
design, e.g. Krause & Guestrin (2005).

Example
-------
>>> import xlcalib
>>> from xlcalib.calibration.panel.simulate import simulate_panel
>>> panel = simulate_panel(12, 40, 3, seed=2)
>>> result = xlcalib.calibrate(panel.evaluations.drop(columns="sd"), level="level")
>>> subjects = {**{a: s for a, s in panel.expertise.items()}, **panel.subjects.map(lambda s: [s]).to_dict()}
>>> picks = result.next_reads(3, top_k=10, conflicts=panel.conflicts, max_load=12, suitability=subjects)
>>> picks.reason[0].startswith("Ask ")
True
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri, owens_t

from ...cells import whole_argument
from ... import progress
from ...errors import InputError
from ..panel.levels import Levels, levels_table
from ..system.threads import blas_limit
from .read_rules import new_reader_rules, per_assessor, read_rules

__all__ = ["suggest_next_reads", "likely_range", "NEXT_READS_COLUMNS", "EXACT_CANDIDATES", "RELEVANT_OBJECTS",
           "MAX_CELLS", "MAX_READS", "LEVEL_MATCH"]

#: Candidates scored exactly (Owen's T) per greedy step after the first-order screen.
EXACT_CANDIDATES = 256
#: Objects (those nearest the line) over which the exact gain is summed; the others' P(1-P) is negligible.
RELEVANT_OBJECTS = 400
#: Upper bound on assessors x objects (dense O x A work arrays, 8 bytes each, a few of them).
MAX_CELLS = 20_000_000
#: Upper bound on the number of reads asked for in one call.
MAX_READS = 10_000
#: Up to this many assessors the dense algebra runs on one BLAS thread: the matrices are small, and
#: multi-threaded BLAS spinning on a shared machine cost 5-100x here (measured: 100 x 100 inverse 19 ms
#: Relative tolerance for naming a confidence by its level (a result records its levels to 4 digits).
LEVEL_MATCH = 1e-3

#: Whom a next read is asked of when the readers cannot be linked (a pooled posterior): any reviewer new to the object.
NEW_READER = "a new reviewer"

#: The columns of the suggestions table, in order (every adapter shows them so).
NEXT_READS_COLUMNS = ["order", "assessor", "object", "confidence", "level", "gain", "p_above", "se_before", "se_after",
                      "settles", "reason"]


class _State:
    """Covariance pieces of one design, in units of w, in the gauge ``kvec`` (see the module docstring)."""

    def __init__(self, post, kvec: np.ndarray):
        self.post = post
        self.D = post.D.tocsr()
        self.Cd = post.Cd
        H = post.h_matrix()
        self.H, self.k = H, kvec
        self.DH = np.asarray(self.D @ H)  # O x A: row o = (H d_o)'
        self.dHd = np.asarray(self.D.multiply(self.DH).sum(axis=1)).ravel()
        self.Hk = H @ kvec
        self.kHk = float(kvec @ self.Hk)
        self.kHD = self.DH @ kvec
        self.Hdiag = np.diagonal(H).copy()
        self.var = np.maximum(1.0 / self.Cd + self.dHd - 2.0 * self.kHD + self.kHk, 0.0)

    def pieces(self, ca: np.ndarray, co: np.ndarray):
        """x'Sigma x and (d_o - k)'H(d_o - e_a) for candidate reads (a = ca, o = co)."""
        dh = self.DH[co, ca]
        var_x = 1.0 / self.Cd[co] + self.dHd[co] - 2.0 * dh + self.Hdiag[ca]
        own = self.dHd[co] - dh - self.kHD[co] + self.Hk[ca]
        return np.maximum(var_x, 0.0), own

    def weighted_reduction(self, omega: np.ndarray, ca, co, cc, var_x, own) -> np.ndarray:
        """sum_o omega_o (Var_o - Var'_o) for every candidate: an exact quadratic form per candidate."""
        D, k = self.D, self.k
        Dw = np.asarray(D.T @ omega).ravel()  # D' omega
        K = np.asarray((D.T @ D.multiply(omega[:, None]).tocsr()).toarray())
        K -= np.outer(Dw, k) + np.outer(k, Dw)
        K += omega.sum() * np.outer(k, k)
        N = self.H @ K @ self.H
        DN = np.asarray(D @ N)
        dNd = np.asarray(D.multiply(DN).sum(axis=1)).ravel()
        quad = dNd[co] - 2.0 * DN[co, ca] + np.diagonal(N)[ca]
        s = omega[co] / self.Cd[co] ** 2 + 2.0 * omega[co] / self.Cd[co] * own + quad
        return cc * np.maximum(s, 0.0) / (1.0 + cc * var_x)

    def covariances(self, rows: np.ndarray, ca, co) -> np.ndarray:
        """Cov(v_o, x)/w for objects ``rows`` (r) and candidate reads (j): an r x j array."""
        DHr = self.DH[rows]  # r x A
        R = np.asarray(self.D @ DHr.T).T  # r x O: d_r' H d_o
        cov = R[:, co] - DHr[:, ca] - self.kHD[co][None, :] + self.Hk[ca][None, :]
        cov += (rows[:, None] == co[None, :]) / self.Cd[co][None, :]
        return cov


def _expected_mass(z: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """E[P'(1 - P')] = 2 T(z, sqrt((1 - rho)/(1 + rho))) (Owen's T)."""
    rho = np.clip(rho, 0.0, 1.0)
    return 2.0 * owens_t(z, np.sqrt((1.0 - rho) / (1.0 + rho)))


def _expected_errors(z: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """E[min(P', 1 - P')] = 2 T(z, sqrt((1 - rho)/rho)) (Owen's T; rho = 0 gives min(P, 1 - P)).

    Derivation: with U = (z + sqrt(rho) Z)/sqrt(1 - rho) and Z' ~ N(0, 1) independent,
    min(Phi(U), Phi(-U)) = P(sign U != sign(U + Z')) = Phi(h) + Phi(z) - 2 Phi_2(h, z; sqrt(rho)) with
    h = z/sqrt(rho); Owen's formula for Phi_2 has one term T(h, 0) = 0 and leaves T(z, sqrt((1-rho)/rho)).
    """
    rho = np.clip(rho, 0.0, 1.0)
    with np.errstate(divide="ignore"):
        return 2.0 * owens_t(z, np.sqrt((1.0 - rho) / rho))


#: What a funding-line objective counts: the borderline mass P(1-P), or the expected number of wrong sides.
OBJECTIVES = {"borderline": _expected_mass, "errors": _expected_errors}


def suggest_next_reads(result, k, top_k=None, threshold=None, candidates=None, max_load=None, conflicts=None,
                       confidence=None, objective: str = "errors", suitability=None, min_suitability=None,
                       pending=None, levels=None) -> pd.DataFrame:
    """The ``k`` extra (assessor, object) reads that settle the funding decision best, best first.

    Every rule is a hard constraint: no suggestion is ever a conflicted pair, a
    pair already read or pending, a pair outside the subjects (when given), or
    takes an assessor above their maximum load.

    Parameters
    ----------
    result:
        A :class:`~xlcalib.calibration.CalibrationResult` of a connected panel.
    k:
        Number of reads to suggest (greedy, jointly: each pick accounts for the earlier ones).
    top_k, threshold:
        The funding line (places, or a calibrated score); neither: reduce the total variance.
    candidates:
        Allowed (assessor, object) pairs (list of pairs or a table with columns assessor, object);
        default every pair not yet read.
    max_load:
        Largest number of reads per assessor, existing and pending reads included (a number or
        assessor -> number).
    conflicts:
        (assessor, object) pairs never to suggest.
    confidence:
        Confidence of a new read in the panel's own units (relative confidence, or 1/SD^2 when the
        levels are SDs): a number or assessor -> number; default each assessor's expected confidence
        (on a panel scored with levels the mean over their reads of suitable pairs, else the median).
    objective:
        With a line: ``"errors"`` (default) minimises the expected number of objects on the wrong side,
        sum_o min(P_o, 1 - P_o), whose pre-posterior expectation is 2 T(z_o, sqrt((1 - rho_o)/rho_o));
        ``"borderline"`` the expected borderline mass sum_o P_o(1 - P_o).
    suitability:
        Only suitable pairs are suggested: an assessors x objects grid (DataFrame indexed by assessor,
        objects as columns), a long ``assessor, object, suitability`` table (missing pairs 0), or a
        subjects mapping name -> subjects for assessors and objects alike (text split at commas or
        semicolons, or a list; suitability = number of shared subjects; a name without subjects is
        not restricted).  See :mod:`xlcalib.calibration.decide.read_rules` for why it is a constraint.
    min_suitability:
        A pair is suitable when its suitability is at least this; default: any positive suitability
        (one shared subject).
    pending:
        (assessor, object) pairs allocated but not scored yet: never suggested, counted in the loads,
        and taken as reads that will come (each at its assessor's assumed confidence: a covariance needs
        no score), so the suggestions complement them -- asking for reads in rounds while some are
        still pending does not pile more reads onto the objects they already settle (pairs naming
        someone outside the scored panel are skipped).
    levels:
        The level table the panel was scored with (a :class:`~xlcalib.calibration.Levels`, a mapping
        name -> SD, or a two-column table), used to name each read's assumed confidence; default the
        levels the result records in ``stats["levels"]``.

    Returns
    -------
    DataFrame with columns ``order, assessor, object, confidence, level, gain, p_above, se_before,
    se_after, settles, reason``.  ``confidence`` is the confidence the read is assumed to have and
    ``level`` the assessor's most used level, named in the sentence (blank when the panel has no
    levels); ``gain`` is the expected drop in
    the number of objects on the wrong side (or in the borderline mass sum_o P_o(1 - P_o)) with a line, or in
    sum_o Var(v_o) (score units squared) without; ``p_above`` is the read object's normal P(above
    the line) now; ``se_before``/``se_after`` its standard error before any suggested read and after
    this and the earlier ones, pending reads included (for a ``top_k`` line measured relative to the line's
    assessors, so a little below the Values table's SE, which includes the common gauge uncertainty); ``settles`` the
    object whose decision gains most; ``reason`` one plain sentence: whom to ask for what, and what
    it is expected to change.  ``attrs`` records the objective, the line, the rules applied
    (``rules``: one sentence per rule with the pairs it excluded), a note when fewer than k reads
    were possible, and ``advice`` (with a line and 12 or more reads): ask for them in rounds, choosing again
    once each round's scores are in (see :func:`rounds_advice`).
    """
    k = whole_argument(k, "k (number of reads)", low=1, high=MAX_READS)
    if objective not in OBJECTIVES:
        raise InputError(f"objective must be one of {', '.join(OBJECTIVES)}, not {objective!r}")
    if top_k is not None and threshold is not None:
        raise InputError("give either top_k or threshold as the funding line, not both")
    post, a_idx, o_idx, values, pooled = _connected_posterior(result)
    design = post.design
    objects = result.values.index[o_idx]
    line, X, kvec = _line_and_gauge(post, values, top_k, threshold)
    rule_args = dict(candidates=candidates, conflicts=conflicts, pending=pending, suitability=suitability,
                     min_suitability=min_suitability, max_load=max_load)
    if pooled:  # readers who cannot be linked: the posterior's one assessor is any reviewer new to the object
        assessors = pd.Index([NEW_READER])
        rules = new_reader_rules(design, objects, **rule_args)
    else:
        assessors = result.biases.index[a_idx]
        rules = read_rules(design, assessors, objects, **rule_args)
    reader = _assumed_confidence(result, post, confidence, levels, assessors, rules.suitable)
    with blas_limit(design.n_assessors), progress.step(f"choosing {k} next read{'s' if k > 1 else ''}", total=k):
        frame = _greedy(post, k, line, X, kvec, rules, reader, assessors, objects, values, OBJECTIVES[objective])
    frame.attrs["rules"] = rules.lines
    frame.attrs["excluded"] = dict(rules.excluded)
    frame.attrs["advice"] = rounds_advice(len(frame)) if line else ""
    frame.attrs["se_basis"] = _se_basis(result, top_k is not None)
    return frame


def _se_basis(result, places: bool) -> str:
    """What se_before / se_after measure, in words: the decisions' posterior, not the values' one -- so that no
    one compares them with the Values table's standard errors as if they were the same number."""
    model = result.decision_basis().model
    words = f"as the decisions see it: in the {model} model the ranking and P(above) are drawn from"
    if places:
        words += ", relative to the objects at the line (the common offset of all values cancels)"
    if model != result.stats.get("model", model) or places:
        words += f"; the Values table's standard errors come from the {result.stats.get('model')} fit"
    return words


#: Asked for in this many rounds, the suggested reads settled the line best on simulated grouped panels.
ADVISED_ROUNDS = 6


def rounds_advice(k: int) -> str:
    """One sentence: ask for the reads in rounds, choosing again once each round's scores are in.

    Why: the reads are chosen before any of them is scored (a covariance does not depend on the scores), so
    a read chosen later cannot use what the earlier ones found.  On simulated grouped panels (extra reads
    20% of those made, within subjects, conflicts and loads; ``benchmarks/bench_next_reads.py``) six rounds
    left 9.54 objects on the wrong side of the line against 10.02 for one batch (24 assessors x 120 objects,
    100 panels), and 3.4% fewer in total over five panel shapes from 16 x 80 to 40 x 300 (40 panels each;
    one shape, 16 x 80, a little more) -- a few per cent, not a guarantee for every panel.

    >>> rounds_advice(72)[:60]
    'These reads are chosen before any of them is scored: ask for'
    >>> rounds_advice(3)
    ''
    """
    if k < 2 * ADVISED_ROUNDS:
        return ""
    return (f"These reads are chosen before any of them is scored: ask for about {math.ceil(k / ADVISED_ROUNDS)} "
            "at a time and run next reads again when their scores are in, so later choices use them (on simulated "
            "grouped panels six rounds left a few per cent fewer objects on the wrong side of the line than one "
            "batch)")


@dataclass
class _Reader:
    """The confidence each assessor's next read is assumed to have, its level name, and how to say it."""

    conf: np.ndarray
    level: list
    words: list


def _level_table(result, levels):
    """(level names, their confidences in the panel's units) sorted by confidence, or None without levels."""
    if levels is not None:
        table = levels_table(levels)
    elif result.stats.get("uncertainty_kind") == "level":
        table = Levels.from_description(result.stats.get("levels", ""))
    else:
        table = None
    if table is None:
        return None
    names = list(table.values)
    conf = np.array([1.0 / v**2 if table.kind == "sd" else float(v) for v in table.values.values()])
    order = np.argsort(conf, kind="stable")
    return [names[i] for i in order], conf[order]


def _match_levels(c: np.ndarray, table) -> np.ndarray | None:
    """Each confidence's level position in *table* (sorted), or None when one matches no level."""
    names, conf = table
    pos = np.clip(np.searchsorted(conf, c), 0, conf.size - 1)
    below = np.clip(pos - 1, 0, conf.size - 1)
    pos = np.where(np.abs(conf[below] - c) < np.abs(conf[pos] - c), below, pos)
    if np.any(np.abs(conf[pos] - c) > LEVEL_MATCH * c):
        return None
    return pos.astype(np.intp)


def _assumed_confidence(result, post, confidence, levels, assessors, suitable=None) -> _Reader:
    """Each assessor's expected confidence (see the module docstring), overridden by ``confidence``."""
    design = post.design
    A = design.n_assessors
    table = _level_table(result, levels)
    stated = post.stated_confidences()  # as given (levels or SDs), before any rounding variance
    li = _match_levels(stated, table) if table is not None else None
    typical_level = None
    if li is not None:
        like = _like_the_suggestions(design, suitable)
        L = len(table[0])
        counts = np.bincount(design.ai[like].astype(np.intp) * L + li[like], minlength=A * L).reshape(A, L)
        typical_level = np.argmax(counts, axis=1)  # first of equal counts: the lower confidence
        # a read's information is linear in its confidence: the expected confidence is the mean one
        typical = np.bincount(design.ai[like], weights=stated[like], minlength=A) / counts.sum(axis=1)
    else:
        typical = _median_confidence(design, stated)
    conf = per_assessor(confidence, "confidence", assessors, typical, 0, False)
    if np.any(conf <= 0):
        raise InputError("confidence must be positive for every assessor")
    return _Reader(conf, *_confidence_words(result, post, conf, typical, typical_level, table))


def _like_the_suggestions(design, suitable) -> np.ndarray:
    """The reads an assessor's next one is predicted from: those of suitable pairs (every suggestion is one),
    or all of the assessor's reads when none of theirs is suitable or there is no suitability rule."""
    if suitable is None:
        return np.ones(design.ai.size, dtype=bool)
    on = suitable[design.ai, design.oi]
    has = np.bincount(design.ai[on], minlength=design.n_assessors) > 0
    return on | ~has[design.ai]


def _confidence_words(result, post, conf, typical, typical_level, table) -> tuple[list, list]:
    """(level names, words): the assessor's most used level when the default is assumed, else the level the
    given confidence matches, or the number."""
    kind = result.stats.get("uncertainty_kind", "")
    level, words = [], []
    for a in range(conf.size):
        usual = conf[a] == typical[a]
        name = ""
        if usual and typical_level is not None:
            name = table[0][int(typical_level[a])]
        elif table is not None:
            match = _match_levels(conf[a:a + 1], table)
            name = table[0][int(match[0])] if match is not None else ""
        if name:
            words.append(f"{'usually' if usual else 'assumed'} {name} confidence")
        elif kind == "sd":
            words.append(f"{'usual' if usual else 'assumed'} SD {math.sqrt(post.w / conf[a]):.2g}")
        else:
            words.append(f"{'usually' if usual else 'assumed'} confidence {conf[a]:.3g}")
        level.append(name)
    return level, words


def _connected_posterior(result):
    """(posterior, assessor positions, object positions, values, pooled) the decisions are drawn from.

    The same basis as the ranking's P(above the line) (``result.decision_basis()``), so a suggestion's
    "chance of being above the line" is the one the Ranking shows; the dense algebra must hold it.
    """
    if not result.components:
        raise InputError("next_reads needs a result made by xlcalib.calibrate (this one carries no uncertainty)")
    if len(result.components) != 1 and result.decision_basis_maker is None:
        raise InputError(f"next_reads needs a connected panel; this one has {len(result.components)} unconnected "
                         "groups of assessors and objects fitted apart -- add reads that link them first (see "
                         "design_check), or calibrate with a model that compares groups")
    basis = result.decision_basis()
    post = basis.posterior
    if not np.isfinite(post.w):
        raise InputError("next reads weigh how much a read would settle, which needs the noise of a read; these "
                         "scores fit the model exactly, so it could not be estimated (declared SDs would give it)")
    if post.iterative:
        raise InputError(f"next_reads works with up to {post.design.n_assessors - 1:,} assessors "
                         "(dense reduced system); this panel is larger")
    A, O = post.design.n_assessors, post.design.n_objects
    if A * O > MAX_CELLS:
        raise InputError(f"next_reads is bounded to assessors x objects <= {MAX_CELLS:,}; this panel has "
                         f"{A:,} x {O:,} = {A * O:,}")
    return post, basis.assessor_index, basis.object_index, np.asarray(basis.values, dtype=float), basis.pooled


def _line_and_gauge(post, values: np.ndarray, top_k, threshold):
    """(line text or None, threshold X, gauge vector) of the funding line.

    A ``top_k`` line sits midway between places k and k+1, measured relative to
    those two objects' assessors, so the common gauge uncertainty (which moves
    the line with every value) does not count.
    """
    O = values.size
    kvec = post.k.copy()
    if top_k is not None:
        top_k = whole_argument(top_k, "top_k (funding line places)", low=1, high=max(O - 1, 1))
        if O < 2:
            raise InputError("a top_k line needs at least two objects")
        order = np.argsort(-values, kind="stable")
        p, q = order[top_k - 1], order[top_k]
        X = 0.5 * (values[p] + values[q])
        kvec = 0.5 * (post.D[p].toarray().ravel() + post.D[q].toarray().ravel())
        kvec /= kvec.sum()
        return f"top {top_k} (threshold {X:.4g}, midway between places {top_k} and {top_k + 1})", X, kvec
    if threshold is not None:
        try:
            X = float(threshold)
        except (TypeError, ValueError):
            raise InputError(f"threshold must be a number (a calibrated score), not {threshold!r}") from None
        if isinstance(threshold, (bool, np.bool_)) or not math.isfinite(X):
            raise InputError(f"threshold must be a finite number (a calibrated score), not {threshold!r}")
        return f"calibrated score {X:g}", X, kvec
    return None, None, kvec


def _median_confidence(design, stated: np.ndarray) -> np.ndarray:
    """Each assessor's median (stated) confidence in the panel: the default confidence of their next read."""
    A = design.n_assessors
    order_a = np.argsort(design.ai, kind="stable")
    c_sorted, starts = stated[order_a], np.searchsorted(design.ai[order_a], np.arange(A))
    ends = np.append(starts[1:], stated.size)
    return np.array([np.median(c_sorted[s:e]) for s, e in zip(starts, ends)]) if A else np.zeros(0)


def _best_for_variance(state: _State, ca, co, cc, var_x, own, w: float):
    """Without a line: the candidate with the largest drop in sum_o Var(v_o) (A-optimal)."""
    O = state.Cd.size
    gain = w * state.weighted_reduction(np.ones(O), ca, co, cc, var_x, own)
    best = int(np.argmax(gain))
    return best, float(gain[best]), int(co[best])


def _best_at_line(state: _State, ca, co, cc, var_x, own, z, var0, expected):
    """With a line: screen every candidate to first order, score the best exactly (Owen's T) near the line.

    Returns (best candidate, its gain, the object it settles most).
    """
    O = state.Cd.size
    rho_s = np.clip(1.0 - state.var / var0, 0.0, 1.0 - 1e-12)
    mass_s = expected(z, rho_s)
    omega = np.exp(-z**2 / (1.0 + np.minimum(rho_s, 0.99))) / (
        2 * np.pi * np.sqrt(1.0 - np.minimum(rho_s, 0.99) ** 2)) / var0
    screen = state.weighted_reduction(omega, ca, co, cc, var_x, own)
    m = min(EXACT_CANDIDATES, screen.size)
    top = np.argpartition(-screen, m - 1)[:m] if m < screen.size else np.arange(screen.size)
    top = top[np.lexsort((top, -screen[top]))]
    rel_n = min(RELEVANT_OBJECTS, O)
    rel = np.argpartition(-mass_s, rel_n - 1)[:rel_n] if rel_n < O else np.arange(O)
    rel = np.sort(rel).astype(np.intp)
    cov = state.covariances(rel, ca[top], co[top])
    var_new = state.var[rel][:, None] - cc[top][None, :] * cov**2 / (1.0 + cc[top] * var_x[top])[None, :]
    rho_new = np.clip(1.0 - var_new / var0[rel][:, None], 0.0, 1.0 - 1e-12)
    drops = mass_s[rel][:, None] - expected(z[rel][:, None], rho_new)
    gains = drops.sum(axis=0)
    jb = int(np.argmax(gains))  # first of equals: top is sorted by screen then pair key, so reproducible
    return int(top[jb]), float(gains[jb]), int(rel[int(np.argmax(drops[:, jb]))])


def _greedy(post, k, line, X, kvec, rules, reader: _Reader, assessors, objects, values, expected):
    """The greedy loop (see the module docstring); returns the suggestions frame."""
    O = post.design.n_objects
    w = float(post.w)
    state = start = _State(post, kvec)
    var0 = state.var.copy()
    sd0 = np.sqrt(np.maximum(var0, 1e-300))
    z = (values - X) / (sd0 * math.sqrt(w)) if line is not None else None
    if rules.pending.size:  # reads allocated but not scored will come: choose what complements them
        pa = (rules.pending // O).astype(np.intp)
        post = post.with_reads(pa, (rules.pending % O).astype(np.intp), reader.conf[pa])
        state = _State(post, kvec)
    allowed, load = rules.allowed, rules.load.copy()
    picks, note = [], ""
    for step in range(k):
        allowed = allowed[load[allowed // O] < rules.cap[allowed // O]]
        if allowed.size == 0:
            note = (f"only {step} of the {k} reads asked for are possible: no allowed pair is left "
                    "(every pair read, pending, in conflict, outside the subjects or candidates, or its assessor "
                    "at their maximum load)")
            break
        ca = (allowed // O).astype(np.intp)
        co = (allowed % O).astype(np.intp)
        cc = start.post.effective_confidences(reader.conf[ca])  # as the posterior weighs a read (rounding added)
        var_x, own = state.pieces(ca, co)
        if line is None:
            best, gain, settles = _best_for_variance(state, ca, co, cc, var_x, own, w)
        else:
            best, gain, settles = _best_at_line(state, ca, co, cc, var_x, own, z, var0, expected)
        a_b, o_b, c_b = int(ca[best]), int(co[best]), float(cc[best])
        var_after = state.var[o_b] - c_b * (1.0 / state.Cd[o_b] + own[best]) ** 2 / (1.0 + c_b * var_x[best])
        picks.append(dict(order=step + 1, a=a_b, o=o_b, confidence=float(reader.conf[a_b]), gain=gain,
                          var_after=max(var_after, 0.0),
                          settles=settles, alone=_variance_after_alone(start, a_b, o_b, settles, c_b)))
        progress.advance()
        # ---- add the read to the design (scores are not needed for covariances) and re-solve
        load[a_b] += 1
        allowed = allowed[allowed != a_b * O + o_b]
        if step + 1 < k:
            post = post.with_reads(np.array([a_b]), np.array([o_b]), np.array([reader.conf[a_b]]))
            state = _State(post, kvec)
    return _suggestions_frame(picks, line, z, var0, w, reader, start, assessors, objects, expected, note)


def _variance_after_alone(start: _State, a: int, o: int, settles: int, c: float) -> float:
    """Var(v_settles) after this one read on the panel as it is now (units of w): what the sentence describes."""
    ca, co = np.array([a], dtype=np.intp), np.array([o], dtype=np.intp)
    var_x, _own = start.pieces(ca, co)
    cov = float(start.covariances(np.array([settles], dtype=np.intp), ca, co)[0, 0])
    return max(float(start.var[settles]) - c * cov**2 / (1.0 + c * float(var_x[0])), 0.0)


def _percent(p: float) -> str:
    return "under 1%" if p < 0.005 else "over 99%" if p > 0.995 else f"{100 * p:.0f}%"


def likely_range(z: float, rho: float) -> tuple[float, float]:
    """The 1/3 and 2/3 quantiles of P' = Phi((z + sqrt(rho) Z)/sqrt(1 - rho)), Z ~ N(0, 1) (module docstring).

    After a read that removes the share *rho* of the variance, P(above the line) falls below the first
    with probability 1/3 and rises above the second with probability 1/3.

    >>> [round(p, 3) for p in likely_range(0.0, 0.5)]
    [0.333, 0.667]
    """
    r = min(max(float(rho), 0.0), 1.0 - 1e-12)
    q = float(ndtri(2.0 / 3.0)) * math.sqrt(r)
    return float(ndtr((z - q) / math.sqrt(1.0 - r))), float(ndtr((z + q) / math.sqrt(1.0 - r)))


def _movement(chance: str, z: float, rho: float, after: str) -> str:
    """'<chance> of being above the line is 55% now and would most likely move to below 25% or above 85% ...'.

    The tertiles of the updated chance (:func:`likely_range`): when they straddle the chance now, the read
    moves it below the lower or above the upper (2 chances in 3); when both lie on one side, it most likely
    (2 chances in 3) falls below the upper, or rises above the lower.  Percentages are rounded outwards, so
    each statement stays true.
    """
    now = float(ndtr(z))
    low, high = likely_range(z, rho)
    text = f"{chance} of being above the line is {_percent(now)} now and would"
    below, above = min(max(math.ceil(100 * low), 1), 99), max(min(math.floor(100 * high), 99), 1)
    if high - low < 0.01:
        return f"{text} barely move {after}"
    if high <= now:
        return f"{text} most likely fall below {max(math.ceil(100 * high), 1)}% {after}"
    if low >= now:
        return f"{text} most likely rise above {min(math.floor(100 * low), 99)}% {after}"
    if below >= above:  # a small move that whole percentages cannot show
        return f"{text} barely move {after}"
    return f"{text} most likely move to below {below}% or above {above}% {after}"


def _sentence(pick: dict, line, z, var0, w: float, reader: _Reader, start: _State, assessors, objects) -> str:
    """One plain sentence: whom to ask for what, with the assumed confidence, and what the read should change.

    The change described is this read's alone, on the panel as it is now (the earlier suggestions need not
    all be made): the standard error without a line, else where P(above the line) will most likely land.
    """
    a, o, s = assessors[pick["a"]], objects[pick["o"]], objects[pick["settles"]]
    ask = f"Ask {a} ({reader.words[pick['a']]}) to read {o}"
    rho = 1.0 - pick["alone"] / var0[pick["settles"]]
    if line is None:
        return (f"{ask}: {o}'s standard error would fall from {math.sqrt(w * var0[pick['o']]):.2g} to "
                f"{math.sqrt(w * pick['alone']):.2g} (the read that most reduces the values' total uncertainty).")
    if pick["settles"] == pick["o"]:
        chance = f"{o}'s chance"
    elif start.post.design.n_assessors == 1:  # one reader, or readers pooled: only the common level links objects
        chance = f"the read pins down the panel's level, which every value is measured from, most of all for {s}, whose chance"
    else:  # the read matters most through a bias: say whose, and for which object
        design = start.post.design
        by_a = design.ai == pick["a"]
        via = (f"{a}'s bias, which matters for the {int(by_a.sum())} objects {a} has read" if np.any(
            by_a & (design.oi == pick["settles"])) else f"the biases of {o}'s other readers")
        chance = f"the read pins down {via}, most of all {s}, whose chance"
    return f"{ask}: {_movement(chance, z[pick['settles']], rho, 'after the read')}."


def _suggestions_frame(picks, line, z, var0, w, reader: _Reader, start: _State, assessors, objects, expected,
                       note) -> pd.DataFrame:
    """The picks as the suggestions table, each with its sentence."""
    rows = [{"order": p["order"], "assessor": assessors[p["a"]], "object": objects[p["o"]],
             "confidence": p["confidence"], "level": reader.level[p["a"]], "gain": p["gain"],
             "p_above": float(ndtr(z[p["o"]])) if line is not None else np.nan,
             "se_before": float(math.sqrt(w * var0[p["o"]])), "se_after": float(math.sqrt(w * p["var_after"])),
             "settles": objects[p["settles"]],
             "reason": _sentence(p, line, z, var0, w, reader, start, assessors, objects)}
            for p in picks]
    frame = pd.DataFrame(rows, columns=NEXT_READS_COLUMNS)
    frame.attrs.update({
        "objective": (("expected drop in sum_o min(P_o, 1-P_o) (expected wrong sides)" if expected is _expected_errors
                       else "expected drop in sum_o P_o(1-P_o) (borderline mass)") + " at the funding line" if line else
                      "drop in sum_o Var(v_o) (A-optimal), score units squared"),
        "line": line or "",
        "note": note,
    })
    return frame
