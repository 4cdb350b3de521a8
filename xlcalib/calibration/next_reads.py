"""Next reads during scoring: which extra (assessor, object) reads settle the funding decision best.

Mid-panel the secretary can ask a few assessors for one more read each.  The
posterior covariance of the calibrated values after a read does *not* depend
on the score the read will get, so the effect of every possible read can be
computed before anyone scores it.

The model (see :class:`xlcalib.calibration.posterior.Posterior`), in units of the
noise scale ``w``: ``v_o = V_o/Cd_o + (k - d_o)' theta`` with ``Cov(theta) =
w H``, ``d_o = c_.o / Cd_o`` and object noise ``w / Cd_o``.  A read of object
``o*`` by assessor ``a*`` with confidence ``c`` observes ``x = v_o* + b_a*``
(gauge-free) with noise ``w / c``; by Sherman-Morrison the covariance becomes

    Cov' = Cov - c (Cov x)(Cov x)' / (w + c x' Cov x)
    Cov(v_o, x)  = w [delta_{o o*} / Cd_o* + (d_o - k)' H (d_o* - e_a*)]
    x' Cov x     = w [1/Cd_o* + (d_o* - e_a*)' H (d_o* - e_a*)]

Objective with a funding line ``X``: the expected drop in the *borderline
mass* ``sum_o P_o (1 - P_o)``, ``P_o = Phi(z_o)``, ``z_o = (v_o - X)/sd_o``.
Before the read's score is known, the updated mean is ``N(v_o, var_o -
var'_o)``; with ``rho_o = 1 - var'_o/var_o`` the pre-posterior expectation is
closed-form (``Phi(z) - Phi_2(z, z; rho)`` and Owen's T):

    E[P'(1 - P')] = 2 T(z_o, sqrt((1 - rho_o)/(1 + rho_o)))

(``rho = 0`` gives ``Phi(z)(1 - Phi(z))``, ``rho -> 1`` gives 0).  A set of
reads is chosen greedily: after each pick the read is added to the design
(covariances need no score), the reduced system is re-solved, and the
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

Cost per greedy step: one Cholesky factor and inverse of the A x A reduced
system (O(A^3)), products O(nnz A + O A), O(candidates) for the screen and
O(EXACT_CANDIDATES x RELEVANT_OBJECTS) Owen's T evaluations.  Memory O(O A).
Reference: Sherman & Morrison (1950); Owen (1956) "Tables for computing
bivariate normal probabilities"; greedy A-optimal / value-of-information
design, e.g. Krause & Guestrin (2005).

Example
-------
>>> import xlcalib
>>> from xlcalib.datasets import load_example  # doctest: +SKIP
>>> result = xlcalib.calibrate(frame, sd="sd")  # doctest: +SKIP
>>> result.next_reads(5, top_k=10)  # doctest: +SKIP
"""
from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy.special import ndtr, owens_t

from ..cells import whole_argument
from ..errors import InputError

__all__ = ["suggest_next_reads", "NEXT_READS_COLUMNS", "EXACT_CANDIDATES", "RELEVANT_OBJECTS", "MAX_CELLS",
           "MAX_READS"]

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
#: with threads vs 0.14 ms without).
SINGLE_THREAD_ASSESSORS = 512

#: The columns of the suggestions table, in order (every adapter shows them so).
NEXT_READS_COLUMNS = ["order", "assessor", "object", "confidence", "gain", "p_above", "se_before", "se_after",
           "settles", "reason"]


def _pairs(pairs, name: str, a_pos: dict, o_pos: dict, n_objects: int) -> np.ndarray:
    """(assessor, object) pairs -> int64 keys a * O + o; unknown names are reported all at once."""
    if pairs is None:
        return np.zeros(0, dtype=np.int64)
    if isinstance(pairs, pd.DataFrame):
        cols = {str(c).strip().lower(): c for c in pairs.columns}
        if "assessor" in cols and "object" in cols:
            rows = list(zip(pairs[cols["assessor"]], pairs[cols["object"]]))
        elif pairs.shape[1] == 2:
            rows = list(pairs.itertuples(index=False, name=None))
        else:
            raise InputError(f"{name} must have columns 'assessor' and 'object' (or exactly two columns)")
    else:
        try:
            rows = [tuple(p) for p in pairs]
        except TypeError:
            raise InputError(f"{name} must be a list of (assessor, object) pairs or a two-column table") from None
    bad_shape = [i + 1 for i, p in enumerate(rows) if len(p) != 2]
    if bad_shape:
        raise InputError(f"{name}: entries {bad_shape[:10]} are not (assessor, object) pairs")
    unknown_a = sorted({str(a) for a, _ in rows if a not in a_pos})
    unknown_o = sorted({str(o) for _, o in rows if o not in o_pos})
    if unknown_a or unknown_o:
        parts = []
        if unknown_a:
            parts.append(f"assessor(s) not in the panel: {', '.join(unknown_a[:10])}"
                         + (f" and {len(unknown_a) - 10} more" if len(unknown_a) > 10 else ""))
        if unknown_o:
            parts.append(f"object(s) not in the panel: {', '.join(unknown_o[:10])}"
                         + (f" and {len(unknown_o) - 10} more" if len(unknown_o) > 10 else ""))
        raise InputError(f"{name}: " + "; ".join(parts))
    a = np.array([a_pos[a] for a, _ in rows], dtype=np.int64)
    o = np.array([o_pos[o] for _, o in rows], dtype=np.int64)
    return a * n_objects + o


def _per_assessor(value, name: str, names: pd.Index, default: np.ndarray, low: float, integer: bool) -> np.ndarray:
    """A scalar or an assessor -> number mapping; unknown assessors and bad numbers named."""
    out = default.astype(float).copy()
    if value is None:
        return out
    items = value.items() if isinstance(value, (Mapping, pd.Series)) else None
    if items is None:
        items = [(None, value)]
    pos = {a: i for i, a in enumerate(names)}
    bad = []
    for key, number in items:
        try:
            x = float(number)
            ok = (not isinstance(number, (bool, np.bool_)) and math.isfinite(x) and x >= low
                  and (not integer or x.is_integer()))
        except (TypeError, ValueError):
            ok = False
        if not ok:
            bad.append(f"{key}: {number!r}" if key is not None else repr(number))
            continue
        if key is None:
            out[:] = x
        elif key in pos:
            out[pos[key]] = x
        else:
            bad.append(f"{key} (not an assessor of the panel)")
    if bad:
        what = "a whole number" if integer else "a positive number"
        raise InputError(f"{name} must be {what}{' >= ' + format(low, 'g') if integer else ''} "
                         f"(or a mapping assessor -> number); bad: {', '.join(bad[:10])}")
    return out


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


def _blas_limit(n_assessors: int):
    """One BLAS thread for small systems when threadpoolctl is available (it is optional: not in Pyodide)."""
    if n_assessors > SINGLE_THREAD_ASSESSORS:
        return contextlib.nullcontext()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - optional
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def suggest_next_reads(result, k, top_k=None, threshold=None, candidates=None, max_load=None, conflicts=None,
                       confidence=None, objective: str = "borderline") -> pd.DataFrame:
    """The ``k`` extra (assessor, object) reads that settle the funding decision best, best first.

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
        Largest number of reads per assessor, existing reads included (a number or assessor -> number).
    conflicts:
        (assessor, object) pairs never to suggest.
    confidence:
        Confidence of a new read in the panel's own units (relative confidence, or 1/SD^2 when the
        levels are SDs): a number or assessor -> number; default each assessor's median in the panel.
    objective:
        With a line: ``"borderline"`` (default) minimises the expected borderline mass sum_o P_o(1 - P_o);
        ``"errors"`` the expected number of objects on the wrong side, sum_o min(P_o, 1 - P_o), whose
        pre-posterior expectation is 2 T(z_o, sqrt((1 - rho_o)/rho_o)).

    Returns
    -------
    DataFrame with columns ``order, assessor, object, confidence, gain, p_above, se_before, se_after,
    settles, reason``.  ``gain`` is the expected drop in the borderline mass sum_o P_o(1 - P_o) (or in
    the expected wrong sides) with a line, or in sum_o Var(v_o) (score units squared) without;
    ``p_above`` is the read object's normal P(above the line) now; ``se_before``/``se_after`` its
    standard error before any suggested read and after this and the earlier ones (for a ``top_k``
    line measured relative to the line's assessors, so a little below the Values table's SE, which
    includes the common gauge uncertainty); ``settles`` the object whose decision gains most.
    ``attrs`` records the objective, the line and a note when fewer than k reads were possible.
    """

    k = whole_argument(k, "k (number of reads)", low=1, high=MAX_READS)
    if objective not in OBJECTIVES:
        raise InputError(f"objective must be one of {', '.join(OBJECTIVES)}, not {objective!r}")
    if top_k is not None and threshold is not None:
        raise InputError("give either top_k or threshold as the funding line, not both")
    post, a_idx, o_idx = _connected_posterior(result)
    design = post.design
    A = design.n_assessors
    assessors = result.biases.index[a_idx]
    objects = result.values.index[o_idx]
    a_pos = {a: i for i, a in enumerate(assessors)}
    o_pos = {o: i for i, o in enumerate(objects)}
    values = result.values["value"].to_numpy(dtype=float)[o_idx]
    line, X, kvec = _line_and_gauge(post, values, top_k, threshold)
    allowed = _allowed_pairs(design, candidates, conflicts, a_pos, o_pos)
    load = np.bincount(design.ai, minlength=A).astype(float)
    cap = _per_assessor(max_load, "max_load", assessors, np.full(A, np.inf), 0, True)
    conf = _per_assessor(confidence, "confidence", assessors, _median_confidence(design), 0, False)
    if np.any(conf <= 0):
        raise InputError("confidence must be positive for every assessor")
    with _blas_limit(A):
        return _greedy(post, k, line, X, kvec, allowed, load, cap, conf, assessors, objects, o_pos, values,
                       float(post.w), OBJECTIVES[objective])


def _connected_posterior(result):
    """(posterior, assessor positions, object positions) of a connected result the dense algebra can hold."""
    parts = result.components
    if not parts:
        raise InputError("next_reads needs a result made by xlcalib.calibrate (this one carries no uncertainty)")
    if len(parts) != 1:
        raise InputError(f"next_reads needs a connected panel; this one has {len(parts)} unconnected groups of "
                         "assessors and objects -- add reads that link them first (see design_check)")
    post = parts[0].posterior
    if post.iterative:
        raise InputError(f"next_reads works with up to {post.design.n_assessors - 1:,} assessors "
                         "(dense reduced system); this panel is larger")
    A, O = post.design.n_assessors, post.design.n_objects
    if A * O > MAX_CELLS:
        raise InputError(f"next_reads is bounded to assessors x objects <= {MAX_CELLS:,}; this panel has "
                         f"{A:,} x {O:,} = {A * O:,}")
    return post, parts[0].assessor_index, parts[0].object_index


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


def _allowed_pairs(design, candidates, conflicts, a_pos: dict, o_pos: dict) -> np.ndarray:
    """Keys a * O + o of the pairs that may be suggested: not read yet, not in conflict, among the candidates."""
    A, O = design.n_assessors, design.n_objects
    existing = design.ai.astype(np.int64) * O + design.oi.astype(np.int64)
    banned = np.union1d(existing, _pairs(conflicts, "conflicts", a_pos, o_pos, O))
    if candidates is None:
        return np.setdiff1d(np.arange(A * O, dtype=np.int64), banned, assume_unique=False)
    return np.setdiff1d(np.unique(_pairs(candidates, "candidates", a_pos, o_pos, O)), banned)


def _median_confidence(design) -> np.ndarray:
    """Each assessor's median confidence in the panel: the default confidence of their next read."""
    A = design.n_assessors
    order_a = np.argsort(design.ai, kind="stable")
    c_sorted, starts = design.c[order_a], np.searchsorted(design.ai[order_a], np.arange(A))
    ends = np.append(starts[1:], design.c.size)
    return np.array([np.median(c_sorted[s:e]) for s, e in zip(starts, ends)]) if A else np.zeros(0)


def _best_for_variance(state: _State, ca, co, cc, var_x, own, w: float):
    """Without a line: the candidate with the largest drop in sum_o Var(v_o) (A-optimal)."""
    O = state.Cd.size
    gain = w * state.weighted_reduction(np.ones(O), ca, co, cc, var_x, own)
    best = int(np.argmax(gain))
    return best, float(gain[best]), int(co[best]), None


def _best_at_line(state: _State, ca, co, cc, var_x, own, z, var0, expected):
    """With a line: screen every candidate to first order, score the best exactly (Owen's T) near the line.

    Returns (best candidate, its gain, the object it settles most, that object's drop).
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
    return int(top[jb]), float(gains[jb]), int(rel[int(np.argmax(drops[:, jb]))]), float(drops[:, jb].max())


def _greedy(post, k, line, X, kvec, allowed, load, cap, conf, assessors, objects, o_pos, values, w, expected):
    """The greedy loop (see the module docstring); returns the suggestions frame."""
    O = post.design.n_objects
    state = _State(post, kvec)
    var0 = state.var.copy()
    sd0 = np.sqrt(np.maximum(var0, 1e-300))
    z = (values - X) / (sd0 * math.sqrt(w)) if line is not None else None
    picks, note = [], ""
    for step in range(k):
        allowed = allowed[load[allowed // O] < cap[allowed // O]]
        if allowed.size == 0:
            note = (f"only {step} of the {k} reads asked for are possible: no allowed pair is left "
                    "(every pair read, in conflict, outside the candidates or over the assessor's max load)")
            break
        ca = (allowed // O).astype(np.intp)
        co = (allowed % O).astype(np.intp)
        cc = conf[ca]
        var_x, own = state.pieces(ca, co)
        if line is None:
            best, j_gain, settles, drop_settles = _best_for_variance(state, ca, co, cc, var_x, own, w)
        else:
            best, j_gain, settles, drop_settles = _best_at_line(state, ca, co, cc, var_x, own, z, var0, expected)
        cov_own = 1.0 / state.Cd[co[best]] + own[best]
        a_b, o_b, c_b = int(ca[best]), int(co[best]), float(cc[best])
        var_after = state.var[o_b] - c_b * cov_own**2 / (1.0 + c_b * var_x[best])
        picks.append(dict(order=step + 1, assessor=assessors[a_b], object=objects[o_b], confidence=c_b, gain=j_gain,
                          p_above=float(ndtr(z[o_b])) if line is not None else np.nan,
                          se_before=float(math.sqrt(w * var0[o_b])),
                          se_after=float(math.sqrt(w * max(var_after, 0.0))),
                          _settles=settles, _drop=drop_settles))
        # ---- add the read to the design (scores are not needed for covariances) and re-solve
        load[a_b] += 1
        allowed = allowed[allowed != a_b * O + o_b]
        if step + 1 < k:
            post = post.with_reads(np.array([a_b]), np.array([o_b]), np.array([c_b]))
            state = _State(post, kvec)
    return _suggestions_frame(picks, line, z, objects, o_pos, expected, note)


def _suggestions_frame(picks, line, z, objects, o_pos, expected, note) -> pd.DataFrame:
    """The picks as the suggestions table, each with its reason in words."""
    rows = []
    for pick in picks:
        s_obj = objects[pick.pop("_settles")]
        drop = pick.pop("_drop")
        if line is None:
            reason = (f"largest drop in the total variance of the values ({pick['gain']:.3g} score units squared): "
                      f"SE of {pick['object']} from {pick['se_before']:.3g} to {pick['se_after']:.3g}")
        else:
            p_s = float(ndtr(z[o_pos[s_obj]]))
            what = "expected wrong sides" if expected is _expected_errors else "expected borderline mass P(1-P)"
            reason = (f"settles the decision on {s_obj} (P(above the line) {p_s:.2f}): {what} "
                      f"down by {drop:.3g}, {pick['gain']:.3g} over all objects")
            if s_obj != pick["object"]:
                reason += f", through assessor {pick['assessor']}'s bias"
        rows.append({**pick, "settles": s_obj, "reason": reason})
    frame = pd.DataFrame(rows, columns=NEXT_READS_COLUMNS)
    frame.attrs.update({
        "objective": (("expected drop in sum_o min(P_o, 1-P_o) (expected wrong sides)" if expected is _expected_errors
                       else "expected drop in sum_o P_o(1-P_o) (borderline mass)") + " at the funding line" if line else
                      "drop in sum_o Var(v_o) (A-optimal), score units squared"),
        "line": line or "",
        "note": note,
    })
    return frame
