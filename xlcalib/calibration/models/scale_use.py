"""Assessors who use the scale differently: a gain per assessor beside the shift.

Why: the shift models know one thing about an assessor, a constant offset
b_a.  Real assessors also spread their scores differently -- one uses the
whole scale, another keeps to its middle -- and a panel secretary's
"z-score each reviewer" is an attempt to correct that; but per-assessor
z-scores are confounded by who drew which objects (an assessor who drew the
weak proposals *should* score low).  Only a joint model separates the two.

Model (the form chosen, and why)::

    s_ao = m + b_a + g_a (v_o - m) + e_ao,     e_ao ~ N(0, w / c_ao)

with ``m`` the confidence-weighted mean of the values.  It is the same model
as ``s_ao = alpha_a + g_a v_o`` (revNorm's bias and gain per reviewer), but
centred: ``b_a`` keeps the meaning it has in every other model (how far the
assessor scores above the panel *for an object of average value*), so the
Biases sheet reads the same with or without scale use, and centring makes the
estimates of b_a and g_a nearly uncorrelated.  Gauges: the shift models'
location gauge on the rescaled scores below, and the scale gauge ``sum_a C'_a
g_a / C = 1`` (the confidence-weighted mean gain is one): values are on the
scale of the panel's average assessor.

Fitting: given the gains the model *is* a shift model for the rescaled
scores ``s'_ao = m + (s_ao - m) / g_a`` with confidences ``c_ao g_a^2``
(dividing by the gain puts every assessor on the panel's scale and makes a
compressing assessor's reads count less, as they say less about the
differences between objects).  So :func:`fit_gains` alternates an exact
solve of the shift part given the gains (the reduced system of MacKay et al.
2017, eq. 15, with the biases' ridge of the default model) with a weighted
regression of each assessor's scores on the values, in which the gain is a
random effect ``g_a ~ N(1, sigma_g^2)``: an assessor with few reads keeps a
gain near 1.  Given the values, sigma_b^2 and sigma_g^2 are the random-effects
likelihood estimates from the assessors' own regressions (Hardy & Thompson
1996) and w takes an EM step (Laird & Ware 1982, Biometrics 38:963).  The calibration
proper is then the chosen model fitted to the rescaled scores, so values,
biases, standard errors and rankings come from the same machinery as every
other model: a Gaussian approximation at the fitted gains (the gains'
own uncertainty widens the values' standard errors, see
:func:`apply_to_result`).

Do the gains differ?  Mandel's (1961) test for a "bundle of straight lines",
generalised to incomplete weighted panels: the extra sum of squares of each
assessor's scores regressed on the fixed shift fit's values (exact F when the
noise scale is estimated, chi-square at face value; see
:func:`_test_component`); gains are tested for assessors with at least
:data:`MIN_READS` reads.

References: MacKay, Kenna, Low & Parker (2017) R. Soc. open sci. 4:160760;
Laird & Ware (1982) Biometrics 38:963 (EM for random effects); Mandel (1961)
JASA 56:878 (non-additivity: a bundle of straight lines); Hardy & Thompson
(1996) Stat. Med. 15:619 (likelihood of a between-unit variance); revNorm (Cornell, reviewer bias and gain); Linacre (1989)
"Many-facet Rasch measurement" (rater effects beyond severity).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...errors import InputError
from ..panel.data import PanelData
from ..system.graph import Design, ReducedSolver, components
from .fixed import fit_component as fixed_fit

__all__ = ["SCALE_USE_CHOICES", "MIN_READS", "DIFFER_P", "END_PILE_SHARE", "EndPile", "end_pile", "GainFit",
           "fit_gains", "rescaled", "scale_use_choice", "gain_sentence", "in_panel_units", "scale_use_stats",
           "scale_use_sentence", "gains_applied"]

#: How calibrate() may use the gains: never, when the test says they differ, always.
SCALE_USE_CHOICES = ("off", "auto", "on")
#: An assessor's gain is estimated freely in the test only with at least this many reads.
MIN_READS = 3
#: Below this p-value the test of "all gains 1" counts as evidence that assessors use the scale differently.
DIFFER_P = 0.05
#: The alternating fit stops when no gain moves by more than this (or after MAX_ITERATIONS rounds).
TOLERANCE = 1e-5
MAX_ITERATIONS = 300
#: Up to this many assessors the gains' standard errors come from the joint information matrix (values, biases
#: and gains; a dense 2A x 2A inverse); above, from each assessor's own regression given the values.
INFORMATION_ASSESSOR_LIMIT = 1500
#: Gains are kept at or above this floor: a gain near 0 says the assessor's scores barely follow the panel's
#: view of the objects, and rescaling by it (dividing by the gain) needs it positive.
GAIN_FLOOR = 0.05
#: A gain whose interval excludes 1 and lies beyond this distance from it is worth a sentence.
NOTABLE_GAIN = 0.15
#: ``auto`` never models gains when this share of the reads (or more) sits at one end of the scale.  Why: scores
#: piled at an end are censored, not compressed -- an assessor whose objects lie near the floor gives the floor
#: score whatever their gain, so their scores regressed on the panel's values have a slope below 1 and Mandel's test
#: reads the pile as a compressed scale.  Measured (``benchmarks/bench_rasch.py``, linear panels without gains,
#: whole points 1-6): the test called gains in 8% of panels with 4% of reads at an end, 25% at 21%, 83% at 39% and
#: every panel at 63%, where auto then ranked the objects worse than "off" (Spearman with the truth down by up to
#: 0.03; 0.10 on public crowd ratings with 57-74% of reads at 0).  Below 20% the gains it called cost at most 0.002.
END_PILE_SHARE = 0.2


@dataclass(frozen=True)
class GainFit:
    """The gains of a panel and the evidence that they differ.

    ``gains``/``se``: each assessor's gain (1 = uses the scale like the panel;
    below 1 compresses, above 1 spreads) and its standard error (the random-
    effects posterior SD given the values); ``centre``: m, the value at which
    biases are measured; ``sigma_g``: the SD of the gains across assessors
    (EM estimate); ``statistic``/``df``/``p``: the test of all gains 1
    (``test`` "F" or "chi-square"); ``free``: assessors whose gain the test
    freed (at least :data:`MIN_READS` reads).
    """

    gains: np.ndarray
    se: np.ndarray
    centre: float
    sigma_g: float
    w: float
    statistic: float
    df: tuple
    p: float
    test: str
    free: np.ndarray
    iterations: int
    converged: bool
    #: per object: the variance the gains' uncertainty adds to the value (score units squared)
    value_variance: np.ndarray
    se_method: str

    @property
    def differ(self) -> bool:
        return bool(np.isfinite(self.p) and self.p < DIFFER_P)

    def test_text(self) -> str:
        if not np.isfinite(self.p):
            return "no test possible (too few reads per assessor or no spare reads)"
        df = f"{self.df[0]} and {self.df[1]}" if len(self.df) == 2 else f"{self.df[0]}"
        p = f"p = {self.p:.2g}" if self.p > 0 else "p < 1e-300"
        return f"{self.test} = {self.statistic:.3g} on {df} degrees of freedom, {p}"


@dataclass(frozen=True)
class EndPile:
    """The larger share of reads at one end of the scale: ``share``, the end's ``score`` and ``which`` end."""

    share: float
    score: float
    which: str

    @property
    def refuses_gains(self) -> bool:
        return self.share >= END_PILE_SHARE

    def words(self) -> str:
        return (f"{self.share:.0%} of the reads sit at the {self.which} score ({self.score:g}): scores piled at an end "
                "of the scale are not a compressed scale, and the gains would read the pile as one (the rating-scale "
                "model reads such scores as ordered categories)")


def end_pile(scores: np.ndarray, scale=None) -> EndPile:
    """The share of reads at the scale's lowest or highest score, whichever is larger (the declared scale's ends
    -- ``(low, high)`` or a :class:`~..panel.censoring.DeclaredScale` -- else the lowest and highest score given)."""
    scores = np.asarray(scores, dtype=float)
    low, high = (float(scale[0]), float(scale[1])) if scale is not None else (float(scores.min()), float(scores.max()))
    at_low, at_high = float(np.mean(scores <= low)), float(np.mean(scores >= high))
    return EndPile(at_low, low, "lowest") if at_low >= at_high else EndPile(at_high, high, "highest")


def gains_applied(fit: "GainFit | None", choice: str, pile: EndPile) -> bool:
    """Whether the gains are used: always with ``on``; with ``auto`` when the test says they differ and the reads
    do not pile at an end of the scale (:data:`END_PILE_SHARE`)."""
    if fit is None or choice == "off":
        return False
    return choice == "on" or (fit.differ and not pile.refuses_gains)


def scale_use_choice(value) -> str:
    """'off', 'auto' or 'on' (booleans accepted), or an InputError listing the choices."""
    if isinstance(value, (bool, np.bool_)):
        return "on" if value else "off"
    text = str(value).strip().lower() if value is not None else "off"
    if text not in SCALE_USE_CHOICES:
        raise InputError(f"scale_use must be one of {', '.join(SCALE_USE_CHOICES)}, not {value!r}")
    return text


# ----------------------------------------------------------------------------
# The alternating fit
# ----------------------------------------------------------------------------
class _ShiftPart:
    """Values and biases of the rescaled scores given the gains, solved exactly each round.

    The reduced system changes only through the gains and the ridge, so one factor of the first round's system
    preconditions conjugate gradients for every later round (warm-started from the last solution): a few sparse
    products per round instead of a new A x A factorisation.
    """

    def __init__(self, design: Design):
        self.design = design
        self.preconditioner = None
        self.theta = np.zeros(design.n_assessors)
        Cm = design.Cm.tocsr()
        self.rows = np.repeat(np.arange(design.n_assessors, dtype=np.intp), np.diff(Cm.indptr))
        self.Cm = Cm

    def solve(self, s: np.ndarray, gamma: np.ndarray, m: float, ridge: float, rtol: float = 1e-11):
        import scipy.sparse as sp
        import scipy.sparse.linalg as spla

        d, A = self.design, self.design.n_assessors
        g = gamma[d.ai]
        c2 = d.c * g**2
        s2 = m + (s - m) / g
        Cm = sp.csr_matrix((self.Cm.data * gamma[self.rows] ** 2, self.Cm.indices, self.Cm.indptr), shape=self.Cm.shape)
        Cd = np.bincount(d.oi, weights=c2, minlength=d.n_objects)
        V = np.bincount(d.oi, weights=c2 * s2, minlength=d.n_objects)
        B = np.bincount(d.ai, weights=c2 * s2, minlength=A)
        rhs = B - Cm @ (V / Cd)
        if self.preconditioner is None:
            self.preconditioner = ReducedSolver(Design(d.ai, d.oi, c2, A, d.n_objects), ridge=ridge)
            self.theta = self.preconditioner.solve(rhs)
        else:
            diagonal = d.C_a * gamma**2 + ridge
            op = spla.LinearOperator((A, A), dtype=float,
                                     matvec=lambda x: diagonal * x.ravel() - Cm @ ((Cm.T @ x.ravel()) / Cd))
            pre = spla.LinearOperator((A, A), dtype=float,
                                      matvec=lambda x: self.preconditioner.solve(np.asarray(x, dtype=float).ravel()))
            theta, info = spla.cg(op, rhs, x0=self.theta, M=pre, rtol=rtol, atol=0.0, maxiter=500)
            self.theta = theta if info == 0 else ReducedSolver(Design(d.ai, d.oi, c2, A, d.n_objects),
                                                               ridge=ridge).solve(rhs)
        return (V - Cm.T @ self.theta) / Cd, self.theta


def _assessor_sums(design: Design, x: np.ndarray, y: np.ndarray):
    """Per assessor: sum c, sum c x, sum c x^2, sum c y, sum c x y (the 2 x 2 regressions' pieces)."""
    c, ai, A = design.c, design.ai, design.n_assessors
    return (design.C_a, np.bincount(ai, c * x, A), np.bincount(ai, c * x * x, A), np.bincount(ai, c * y, A),
            np.bincount(ai, c * x * y, A))


def _regress(sums, lam_b, lam_g, free):
    """Each assessor's (b_a, g_a) from y = b + g x with ridges lam_b on b and lam_g on (g - 1); gains of assessors
    not ``free`` stay 1.  Returns (b, g, inverse of the 2 x 2 matrices as (i11, i12, i22))."""
    S0, S1, S2, T0, T1 = sums
    a11, a12, a22 = S0 + lam_b, S1, S2 + lam_g
    det = a11 * a22 - a12 * a12
    ok = free & (det > 1e-12 * np.maximum(a11 * a22, 1e-300))
    safe = np.where(ok, det, 1.0)
    r2 = T1 + lam_g  # prior mean of the gain is 1
    b = np.where(ok, (a22 * T0 - a12 * r2) / safe, (T0 - S1) / a11)
    g = np.where(ok, (a11 * r2 - a12 * T0) / safe, 1.0)
    i11 = np.where(ok, a22 / safe, 1.0 / a11)
    return b, g, (i11, np.where(ok, -a12 / safe, 0.0), np.where(ok, a11 / safe, 0.0))


def _between_variance(estimate: np.ndarray, variance: np.ndarray, centre: float, top: float) -> float:
    """ML variance of true effects around *centre* from estimates with known sampling variances (the random-
    effects meta-analysis likelihood; Hardy & Thompson 1996, Stat. Med. 15:619): one bounded 1-D search, so a
    zero variance is reached at once rather than crept towards as EM does."""
    from scipy.optimize import minimize_scalar

    ok = np.isfinite(estimate) & np.isfinite(variance) & (variance > 0)
    if ok.sum() < 2:
        return 0.0
    d2, V = (estimate[ok] - centre) ** 2, variance[ok]

    def minus_loglik(sd):
        total = sd * sd + V
        return float(np.sum(np.log(total) + d2 / total))

    best = minimize_scalar(minus_loglik, bounds=(0.0, max(top, 1e-6)), method="bounded", options={"xatol": 1e-7})
    sd = float(best.x) if best.fun < minus_loglik(0.0) else 0.0
    return sd * sd


class _Rounds:
    """One round of the alternating fit as a map of the gains, its state (values, centre, variances) carried."""

    def __init__(self, design: Design, s: np.ndarray, free: np.ndarray, face_value: bool):
        self.design, self.s, self.free, self.face_value = design, s, free, face_value
        self.m = float(design.c @ s / design.C)
        self.spread = max(float(design.c @ (s - self.m) ** 2 / design.C), 1e-300)
        self.w = 1.0 if face_value else max(0.5 * self.spread * float(np.median(design.c)), 1e-12)
        self.sigma_b2, self.sigma_g2 = 0.25 * self.spread, 0.01
        self.n_free = max(design.c.size - design.n_objects, 1)
        self.shift = _ShiftPart(design)
        self.moved, self.count, self.state = 1.0, 0, {}

    def __call__(self, gamma: np.ndarray) -> np.ndarray:
        d, s, w = self.design, self.s, self.w
        self.count += 1
        # early rounds need no exact solve: the tolerance follows how far the gains still move
        v, _theta = self.shift.solve(s, gamma, self.m, w / max(self.sigma_b2, 1e-12 * self.spread),
                                     rtol=min(1e-4, max(1e-11, 1e-3 * self.moved)))
        m = self.m = float(d.C_o @ v / d.C)
        x = v[d.oi] - m
        sums = _assessor_sums(d, x, s - m)
        b_ls, g_ls, inv_ls = _regress(sums, 0.0, 0.0, self.free)
        identified = self.free & (inv_ls[2] > 0)
        self.sigma_b2 = max(_between_variance(b_ls, w * inv_ls[0], 0.0, np.sqrt(self.spread) * 4), 1e-8 * self.spread)
        self.sigma_g2 = _between_variance(np.where(identified, g_ls, np.nan), w * inv_ls[2], 1.0, 4.0)
        lam_g = w / self.sigma_g2 if self.sigma_g2 > 0 else np.inf
        b, g, inv = _regress(sums, w / self.sigma_b2, lam_g if np.isfinite(lam_g) else 0.0,
                             self.free & np.isfinite(lam_g))
        g = _gauged(g, d)
        rss = float(d.c @ (s - m - b[d.ai] - g[d.ai] * x) ** 2)
        if not self.face_value:
            S0, S1, S2 = sums[:3]
            trace = inv[0] * S0 + 2 * inv[1] * S1 + inv[2] * S2
            self.w = max((rss + w * float(trace.sum())) / self.n_free, 1e-12 * self.spread)
        self.moved = float(np.max(np.abs(g - gamma)))
        self.state = dict(w=self.w, sigma_b2=self.sigma_b2, sigma_g2=self.sigma_g2, inv=inv, rss=rss, v=v)
        return g


def _gauged(g: np.ndarray, design: Design) -> np.ndarray:
    """Gains rescaled to a confidence-weighted mean of 1, kept at or above the floor."""
    return np.maximum(g / float(design.C_a @ g / design.C), GAIN_FLOOR)


def _alternate(design: Design, s: np.ndarray, free: np.ndarray, face_value: bool):
    """The alternating fit (module docstring): (gains, centre m, state, rounds, converged), state holding the
    variances, the values and each assessor's 2 x 2 regression at convergence.

    Each round: the values and biases given the gains (exact solve), then each assessor's (b_a, g_a) by
    least squares on the values (its sampling variance from the 2 x 2 regression), sigma_b^2 and sigma_g^2 by
    their 1-D likelihood (:func:`_between_variance`), the shrunk (b_a, g_a), the gains rescaled to a weighted
    mean of 1, and w by an EM step (Laird & Ware 1982).  The rounds are a fixed-point map of the gains, which
    converges slowly when the gains and the values' spread trade off (weakly linked groups); SQUAREM
    (Varadhan & Roland 2008, Scand. J. Statist. 35:335) extrapolates along two rounds' path, and a plain round
    after each extrapolation keeps the state consistent.
    """
    rounds = _Rounds(design, s, free, face_value)
    gamma = np.ones(design.n_assessors)
    converged = False
    while rounds.count < MAX_ITERATIONS:
        g1 = rounds(gamma)
        if rounds.moved < TOLERANCE:
            gamma, converged = g1, True
            break
        g2 = rounds(g1)
        if rounds.moved < TOLERANCE:
            gamma, converged = g2, True
            break
        r, v = g1 - gamma, g2 - 2 * g1 + gamma
        alpha = min(-1.0, -float(np.linalg.norm(r) / max(np.linalg.norm(v), 1e-300)))
        jump = gamma - 2 * alpha * r + alpha * alpha * v
        if not np.all(np.isfinite(jump)) or np.any(jump <= GAIN_FLOOR):
            jump = g2  # a step that would leave the gains' range: plain rounds instead
        gamma = rounds(_gauged(jump, design))
        if rounds.moved < TOLERANCE:
            converged = True
            break
    return gamma, rounds.m, rounds.state, rounds.count, converged


# ----------------------------------------------------------------------------
# Standard errors from the joint information matrix
# ----------------------------------------------------------------------------
def _per_object_quadratic(oi: np.ndarray, index: np.ndarray, weight: np.ndarray, K: np.ndarray, O: int) -> np.ndarray:
    """sum_{i,j in object o} weight_i weight_j K[index_i, index_j] for every object: a gather over each object's
    entries, objects grouped by their number of entries (vectorised within a group)."""
    out = np.zeros(O)
    counts = np.bincount(oi, minlength=O)
    order = np.argsort(oi, kind="stable")
    idx_sorted, w_sorted = index[order], weight[order]
    first = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.intp)
    for k in np.unique(counts[counts > 0]):
        objs = np.flatnonzero(counts == k)
        pos = first[objs][:, None] + np.arange(k, dtype=np.intp)[None, :]
        ix, wt = idx_sorted[pos], w_sorted[pos]
        out[objs] = np.einsum("ni,nij,nj->n", wt, K[ix[:, :, None], ix[:, None, :]], wt)
    return out


def _information(design: Design, gamma: np.ndarray, x: np.ndarray, state: dict, fixed_gain: np.ndarray):
    """(Var(g_a), extra variance of each value from the gains' uncertainty) from the Gauss-Newton information of
    (values, biases, gains) with the random effects' priors, values eliminated (Schur complement).

    Information per read (units 1/w): d mu/d v_o = g_a, d mu/d b_a = 1, d mu/d g_a = v_o - m.  The values'
    covariance is ``D^-1 + D^-1 Q' S^-1 Q D^-1``; the extra variance is that with the gains free minus that with
    the gains held at their estimates.
    """
    from scipy.linalg import cho_factor, cho_solve

    A, O, w = design.n_assessors, design.n_objects, state["w"]
    c, ai, oi = design.c, design.ai, design.oi
    g = gamma[ai]
    D = np.bincount(oi, c * g**2, O) / w
    qb, qg = c * g / w, c * g * x / w
    S0, S1, S2 = (np.bincount(ai, c * x**p, A) / w for p in (0, 1, 2))
    prior_g = np.where(fixed_gain, 1e12, 1.0 / max(state["sigma_g2"], 1e-12))
    J = np.zeros((2 * A, 2 * A))
    diag = np.arange(A)
    J[diag, diag] = S0 + 1.0 / state["sigma_b2"]
    J[diag, A + diag] = J[A + diag, diag] = S1
    J[A + diag, A + diag] = S2 + prior_g
    rows = np.concatenate([ai, A + ai])
    Q = np.zeros((2 * A, 2 * A))
    # Q D^-1 Q': pairs of reads of the same object, accumulated densely through a sparse product
    import scipy.sparse as sp

    Qm = sp.csr_matrix((np.concatenate([qb, qg]), (rows, np.concatenate([oi, oi]))), shape=(2 * A, O))
    Q = (Qm.multiply(1.0 / D[None, :]) @ Qm.T).toarray()
    S = J - Q
    Sinv = cho_solve(cho_factor(S, lower=True), np.eye(2 * A))
    Sb = S[:A, :A]
    Sb_inv = cho_solve(cho_factor(Sb, lower=True), np.eye(A))
    index = np.concatenate([ai, A + ai])
    weight = np.concatenate([qb, qg])
    with_gains = _per_object_quadratic(np.concatenate([oi, oi]), index, weight, Sinv, O)
    at_gains = _per_object_quadratic(oi, ai, qb, Sb_inv, O)
    extra = np.maximum(with_gains - at_gains, 0.0) / D**2
    return np.diagonal(Sinv)[A:].copy(), extra


# ----------------------------------------------------------------------------
# The test: fixed-effects fits with and without free gains, per connected component
# ----------------------------------------------------------------------------
def _test_component(design: Design, s: np.ndarray, free: np.ndarray):
    """(R0, extra sum of squares, q, dof0) of one connected component: the fixed shift fit, and the least-squares
    effect of adding each free assessor's regressor z_a = (v^_o - m on a's reads) to it.

    Why it is exact: under the shift model the fixed fit's residuals are independent of its values (they are
    uncorrelated -- (I - H) X = 0 -- and jointly Gaussian), so given the values the regressors are fixed and the
    extra sum of squares is w chi-square(q) independent of the rest (Mandel 1961, JASA 56:878, "bundle of
    straight lines", generalised to incomplete weighted designs through the Frisch-Waugh-Lovell theorem):
    ``extra = r' (Z'C(I-H)Z)^+ r`` with ``r = Z'C e`` and ``Z'CHZ = T + U' H_b U``, ``T = Cm diag(x^2/C_o) Cm'``,
    ``U = diag(sum_o c x) - Cm diag(x/C_o) Cm'``, ``H_b = M_reg^-1 - 1 1'/C`` (MacKay et al. 2017, eq. 15).
    """
    from scipy.sparse import diags

    A, O = design.n_assessors, design.n_objects
    shift_fit = fixed_fit(design, s, "weighted", False)  # the gauge is irrelevant: only residuals and values
    solver, theta, v = shift_fit.covariance.solver, shift_fit.biases, shift_fit.values
    e = s - v[design.oi] - theta[design.ai]
    r0 = float(design.c @ e**2)
    x_o = v - float(design.C_o @ v / design.C)
    x = x_o[design.oi]
    Cm = design.Cm
    T = (Cm @ diags(x_o**2 / design.C_o) @ Cm.T).toarray()
    S1 = np.bincount(design.ai, design.c * x, A)
    U = np.diag(S1) - (Cm @ diags(x_o / design.C_o) @ Cm.T).toarray()
    HU = solver.solve(U) - np.outer(np.ones(A), U.sum(axis=0)) / design.C
    S2 = np.bincount(design.ai, design.c * x * x, A)
    K = np.diag(S2) - T - U.T @ HU
    r = np.bincount(design.ai, design.c * x * e, A)
    K, r = K[np.ix_(free, free)], r[free]
    vals, vecs = np.linalg.eigh((K + K.T) / 2)
    keep = vals > 1e-9 * max(float(vals.max(initial=0.0)), 1e-300)
    proj = vecs[:, keep].T @ r
    extra = float(np.sum(proj**2 / vals[keep]))
    return r0, min(max(extra, 0.0), r0), int(keep.sum()), design.c.size - A - O + 1


def _test(data: PanelData, reads: np.ndarray):
    """(statistic, df, p, kind) of "every gain is 1", summed over the connected components (see
    :func:`_test_component`): F on (q, dof0 - q) when w is estimated, chi-square on q at face value."""
    from scipy.special import chdtrc, fdtrc

    n, comp_a, comp_o = components(data.ai, data.oi, data.n_assessors, data.n_objects)
    r0 = extra = 0.0
    q = dof0 = 0
    whole = Design(data.ai, data.oi, data.confidences, data.n_assessors, data.n_objects)
    for mask, a_idx, _o_idx, sub in whole.parts(n, comp_a, comp_o):
        free = reads[a_idx] >= MIN_READS
        if a_idx.size < 2 or not free.any():
            continue
        parts = _test_component(sub, data.scores[mask], free)
        r0, extra, q, dof0 = r0 + parts[0], extra + parts[1], q + parts[2], dof0 + parts[3]
    dof1 = dof0 - q
    if q <= 0 or (dof1 <= 0 and not data.face_value):
        return float("nan"), (max(q, 0),), float("nan"), "none"
    if data.face_value:
        return extra, (q,), float(chdtrc(q, extra)), "chi-square"
    r1 = r0 - extra
    if not r1 > 0:
        return float("inf"), (q, dof1), 0.0, "F"
    F = (extra / q) / (r1 / dof1)
    return float(F), (q, dof1), float(fdtrc(q, dof1, F)), "F"


def fit_gains(data: PanelData) -> GainFit:
    """Each assessor's gain with its standard error, and the test that gains differ (module docstring).

    Examples
    --------
    >>> from xlcalib.calibration.panel.data import panel_data
    >>> from xlcalib.calibration.panel.simulate import simulate_panel
    >>> p = simulate_panel(12, 120, 4, n_subjects=2, gain_sd=0.3, whole_points=False, scale=(-99, 99), seed=3)
    >>> data = panel_data(p.evaluations.drop(columns="level"))
    >>> fit = fit_gains(data)
    >>> fit.differ, bool(np.corrcoef(fit.gains, p.gains[data.assessor_names])[0, 1] > 0.8)
    (True, True)
    """
    A = data.n_assessors
    reads = np.bincount(data.ai, minlength=A)
    design = Design(data.ai, data.oi, data.confidences, A, data.n_objects)
    free = reads >= 2
    gamma, m, state, iterations, converged = _alternate(design, data.scores, free, data.face_value)
    se = np.sqrt(state["w"] * state["inv"][2])
    extra = np.zeros(data.n_objects)
    if A <= INFORMATION_ASSESSOR_LIMIT and state["sigma_g2"] > 0:
        var_g, extra = _information(design, gamma, state["v"][data.oi] - m, state, ~free)
        se = np.sqrt(var_g)
        method = "joint information matrix of values, biases and gains (random-effects priors)"
    elif state["sigma_g2"] > 0:
        method = "each assessor's regression on the values (values taken as known)"
    else:
        se = np.zeros(A)
        method = "gains set to 1: their spread across assessors is estimated at zero"
    statistic, df, p, kind = _test(data, reads)
    return GainFit(gamma, se, m, float(np.sqrt(state["sigma_g2"])), state["w"], statistic, df, p, kind,
                   reads >= MIN_READS, iterations, converged, extra, method)


def rescaled(data: PanelData, fit: GainFit) -> PanelData:
    """The panel on the panel's scale: ``s' = m + (s - m) / g_a`` with confidences ``c g_a^2``.

    Gains are at least :data:`GAIN_FLOOR` (an assessor whose scores barely follow the panel's view keeps a small
    positive gain, so their reads count for little rather than being divided by zero).
    """
    ge = np.maximum(fit.gains, GAIN_FLOOR)[data.ai]
    return replace(data, scores=fit.centre + (data.scores - fit.centre) / ge, confidences=data.confidences * ge**2)


def gain_sentence(gain: float, se: float, q: float = 1.96, you: bool = False) -> str:
    """'compresses scores to 0.60x the panel's spread (± 0.10)' and the like (``you``: 'you compress ...')."""
    pm = f" ± {se:.2f}" if np.isfinite(se) else ""
    clear = np.isfinite(se) and abs(gain - 1) > q * se and abs(gain - 1) >= NOTABLE_GAIN
    if not clear:
        verb = "use" if you else "uses"
        return f"{verb} the scale like the panel (gain {gain:.2f}{pm})"
    if gain < 1:
        return f"{'compress' if you else 'compresses'} scores to {gain:.2f}x the panel's spread ({pm.strip()})"
    return f"{'spread' if you else 'spreads'} scores {gain:.2f}x as widely as the panel ({pm.strip()})"


# ----------------------------------------------------------------------------
# The result in the panel's own units
# ----------------------------------------------------------------------------
def scale_use_stats(fit: GainFit, choice: str, applied: bool, pile: EndPile | None = None) -> dict:
    """The Diagnostics figures of scale use: which model, why, the test and the gains' spread."""
    if applied:
        why = ("asked for" if choice == "on" and not fit.differ else
               f"the assessors measurably use the scale differently ({fit.test_text()})")
        reason = f"scale use modelled: {why}"
    elif fit.differ and pile is not None and pile.refuses_gains:
        reason = f"scale use not modelled although the test calls gains ({fit.test_text()}): {pile.words()}"
    else:
        reason = ("scale use not modelled: no evidence that the assessors use the scale differently "
                  f"({fit.test_text()})")
    return {"scale_use": choice, "scale_use_applied": applied, "scale_use_reason": reason,
            "scale_use_test": fit.test_text(), "scale_use_p": fit.p, "sigma_g": fit.sigma_g,
            "scale_centre": fit.centre, "gain_se_method": fit.se_method,
            "gain_iterations": fit.iterations if fit.converged else f"{fit.iterations} (not converged)"}


def in_panel_units(values, biases, residuals, original: PanelData, fit: GainFit, quantile_value: float):
    """The tables of a fit to the rescaled scores, put back into the panel's units: (values, biases, residuals).

    Biases ``b_a = g_a b'_a`` (the rescaled fit's bias times the gain: the offset at an object of value m) with
    ``se^2 = g^2 se'^2 + b'^2 se_g^2``; gains with their intervals beside them; residuals, raw means and total
    confidences of the scores as given; the values' standard errors widened by the gains' uncertainty
    (:attr:`GainFit.value_variance`; the posterior that rankings and differences are drawn from stays the one at
    the fitted gains).  ``quantile_value``: the interval's normal or t quantile.  New tables are returned; the
    ones given are not changed.
    """
    q = quantile_value
    g, g_se, m = fit.gains, fit.se, fit.centre
    b = biases.copy()
    b_prime, se_prime = b["bias"].to_numpy(), b["se"].to_numpy()
    bias = g * b_prime
    se = np.sqrt(g**2 * se_prime**2 + b_prime**2 * g_se**2)
    b["bias"], b["se"], b["lower"], b["upper"] = bias, se, bias - q * se, bias + q * se
    b["robustness_bound"] = b["robustness_bound"].to_numpy() * g
    b["total_confidence"] = np.bincount(original.ai, original.confidences, original.n_assessors)
    b["gain"], b["gain_se"], b["gain_lower"], b["gain_upper"] = g, g_se, g - q * g_se, g + q * g_se
    v = values.copy()
    se_v = np.sqrt(v["se"].to_numpy() ** 2 + fit.value_variance)
    v["se"], v["lower"], v["upper"] = se_v, v["value"] - q * se_v, v["value"] + q * se_v
    n_o = np.bincount(original.oi, minlength=original.n_objects)
    v["raw_mean"] = np.bincount(original.oi, original.scores, original.n_objects) / n_o
    v["total_confidence"] = np.bincount(original.oi, original.confidences, original.n_objects)
    r = residuals.copy()
    ge = g[original.ai]
    fitted = m + ge * (r["fitted"].to_numpy() - m)
    r["score"], r["fitted"], r["residual"] = original.scores, fitted, original.scores - fitted
    return v, b, r


def scale_use_sentence(stats: dict, biases=None, shown: int = 3) -> str:
    """The Summary's words on scale use: which model and why, and the clearest cases ('' when not asked)."""
    if stats.get("scale_use", "off") == "off" or "scale_use_reason" not in stats:
        return ""
    text = stats["scale_use_reason"][0].upper() + stats["scale_use_reason"][1:]
    if not stats.get("scale_use_applied") or biases is None or "gain" not in biases:
        return text + "."
    g, se = biases["gain"], biases["gain_se"]
    clear = ((g - 1).abs() > 1.96 * se) & ((g - 1).abs() >= NOTABLE_GAIN)
    order = (g - 1).abs()[clear].sort_values(ascending=False).index[:shown]
    cases = "; ".join(f"{name} {gain_sentence(float(g[name]), float(se[name]))}" for name in order)
    spread = f"; the gains vary with SD {stats.get('sigma_g', float('nan')):.2f}"
    if cases:
        return f"{text}{spread}: {cases}. Each assessor's scores are put on the panel's scale before calibrating."
    return f"{text}{spread}, but no single assessor's gain clearly differs from 1."
