"""Objects and assessors both as random effects: values shrunk towards the panel mean, biases towards zero.

``s_ao = mu + u_o + b_a + e_ao`` with ``u ~ N(0, tau^2)``, ``b ~ N(0,
sigma_b^2)``, ``e ~ N(0, w / c_ao)`` and one fixed effect, the panel mean
``mu``.  With ``lam = w / tau^2`` (objects) and ``kappa = w / sigma_b^2``
(assessors), Henderson's equations with the objects eliminated are, for
``theta = mu 1 + b`` (``mu`` integrated out under a flat prior),

    (M_lam + kappa P) theta = r_lam,   P = I - 1 1'/A,
    M_lam = diag(C') - Cm diag(1/(C_o + lam)) Cm',   r_lam = B - Cm V/(C_o + lam)

and ``u_o = (V_o - sum_a c_ao theta_a) / (C_o + lam)``.  The restricted
likelihood (REML: ``mu`` the only fixed effect) is

    -2 l = (N - 1) log w + sum_o log(1 + C_o/lam) + log|M_lam + kappa P| - (A - 1) log kappa + R / w,
    R = S0_lam - r_lam' (M_lam + kappa P)^-1 r_lam,   S0_lam = sum c s^2 - sum_o V_o^2 / (C_o + lam).

For a given ``lam`` one eigendecomposition ``M_lam = U diag(m) U'`` gives every
``kappa`` in O(A): ``M_lam + kappa P = K - (kappa/A) 1 1'`` with ``K`` diagonal in
that basis (Sherman-Morrison, and ``|K - a 1 1'| = |K| (1 - a 1'K^-1 1)``).
``lam`` and ``kappa`` are found jointly (REML); then, as in the
random-assessors model, the assessors' variance is integrated over its
posterior on a grid (uniform prior on its share of a read's variance) with
``lam`` at its estimate -- the objects' spread is well determined by the
many objects, the assessors' much less.

Why objects random too: rank intervals and P(above the line) are statements
about where objects stand among the others, and they are calibrated when the
spread of the objects is part of the model (the flat prior of fixed objects
makes the top objects look more certainly on top than they are).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..system.graph import DENSE_ASSESSOR_LIMIT, NEAR_SOLVER, Design
from ..system.graph import ReducedSolver
from ..system.posterior import MatrixCovariance, ReducedCovariance
from .base import ComponentFit, no_noise_check
from .moments import bias_moments, object_variance
from .variance import LazyFigures, grid_weights, search_ratio, share_grid, sigma_b_figures, spare_reads

NAME = "random-both"
ALIASES = ()
DESCRIPTION = ("objects' values and assessors' biases both random effects: values shrunk towards the panel "
               "mean, biases towards 0")
#: Every variance is found from eigendecompositions of the A x A reduced system.
#: Its draws need a factor of the reduced system: above it rankings use the values' own posterior.
MAX_ASSESSORS = DENSE_ASSESSOR_LIMIT
#: Up to this many assessors both variances are found jointly by REML (an eigendecomposition per trial lam).
NESTED_ASSESSOR_LIMIT = 250
#: Up to this many assessors sigma_b is integrated over its posterior (one eigendecomposition); above it the
#: variances come from moments and are plugged in (see :mod:`.moments`).
EIGEN_ASSESSOR_LIMIT = 800
LINKS_GROUPS = True
#: Its fit takes the variance censored reads keep (``latent``): scores at the scale's ends are read as censored.
CENSORED_READS = True
#: Each assessor keeps a term of its own (the fit is not pooled).
POOLED = False
#: Rankings and P(above the line) come from this model's own posterior.
DECISIONS_BY = None
#: Its noise scale is a REML estimate, not the fixed fit's chi-square: no check of declared SDs.
noise_check = no_noise_check
#: How sigma_b's figures were found (the Diagnostics' words; see :func:`.variance.sigma_b_figures`).
SIGMA_B_METHOD = ("REML estimate; 95% interval from the restricted likelihood ratio, the objects' shrinkage at its "
                  "REML estimate (reaching 0 exactly when the test of no difference does not reject at 5%); the "
                  "values' uncertainty averages over sigma_b ({points} grid points)")
_MIXTURE_METHOD = ("exact given the variances; sigma_b integrated over its posterior (moment-matched mixture), "
                   "tau at its REML estimate")


@dataclass
class _Basis:
    """Everything the likelihood needs at one objects' shrinkage lam, in the eigenbasis of M_lam."""

    lam: float
    m: np.ndarray  # eigenvalues of M_lam
    U: np.ndarray
    rt: np.ndarray  # U' r_lam
    ot: np.ndarray  # U' 1
    S0: float
    objects_term: float  # sum_o log(1 + C_o / lam)
    n_assessors: int

    def pieces(self, kappa):
        """(R0 = r'(M + kappa P)^-1 r, log|M + kappa P| - (A - 1) log kappa) at each kappa (inf allowed)."""
        kappa = np.atleast_1d(np.asarray(kappa, dtype=float))
        A = self.n_assessors
        finite = np.isfinite(kappa)
        kap = np.where(finite, kappa, 1.0)[:, None]
        inv = 1.0 / (self.m[None, :] + kap)  # K^-1 in the eigenbasis
        g_r = (self.ot[None, :] * inv * self.rt[None, :]).sum(axis=1)  # 1'K^-1 r
        one_minus = (self.ot[None, :] ** 2 * self.m[None, :] * inv).sum(axis=1) / A  # 1 - (kappa/A) 1'K^-1 1
        quad = (self.rt[None, :] ** 2 * inv).sum(axis=1) + (kap[:, 0] / A) * g_r**2 / one_minus
        logdet = np.log1p(self.m[None, :] / kap).sum(axis=1) + np.log(kap[:, 0] * one_minus) - np.log(A)
        # kappa = inf (sigma_b = 0): theta = mu 1 with mu the GLS mean -- r'(...)^-1 r = (1'r)^2 / 1'M 1, and the
        # log-determinant's limit: kappa (1 - (kappa/A) 1'K^-1 1) -> 1'M 1 / A, so log(1'M 1 / A) - log A (the
        # likelihood is continuous at sigma_b = 0; the boundary test compares the two)
        oMo = float((self.ot**2 * self.m).sum())
        quad = np.where(finite, quad, float(self.ot @ self.rt) ** 2 / oMo)
        logdet = np.where(finite, logdet, np.log(oMo) - 2.0 * np.log(A))
        return quad, logdet

    def pieces_at(self, kappa: float) -> tuple[float, float]:
        """:meth:`pieces` at one finite kappa, the same sums in the same order without its arrays of kappa
        (bitwise the same numbers): the REML search over kappa calls it about twenty times for each of a dozen
        lam, and on a spreadsheet-sized panel the arrays' overhead was a fifth of a recalculation of
        CALIB_RANKING's decision basis."""
        A = self.n_assessors
        inv = 1.0 / (self.m + kappa)
        g_r = (self.ot * inv * self.rt).sum()
        one_minus = (self.ot**2 * self.m * inv).sum() / A
        quad = (self.rt**2 * inv).sum() + (kappa / A) * (g_r * g_r) / one_minus  # ** 2 of an array squares
        logdet = np.log1p(self.m / kappa).sum() + np.log(kappa * one_minus) - np.log(A)
        return float(quad), float(logdet)

    def minus_two_loglik(self, kappa, n_free: int, face_value: bool):
        quad, logdet = self.pieces(kappa)
        R = np.maximum(self.S0 - quad, 1e-300)
        fit = R if face_value else n_free * np.log(R)
        return fit + logdet + self.objects_term

    def minus_two_loglik_at(self, kappa: float, n_free: int, face_value: bool) -> float:
        """:meth:`minus_two_loglik` at one kappa (through :meth:`pieces_at` where finite: the same number)."""
        if not np.isfinite(kappa):
            return float(self.minus_two_loglik(kappa, n_free, face_value)[0])
        quad, logdet = self.pieces_at(kappa)
        R = max(self.S0 - quad, 1e-300)
        fit = R if face_value else n_free * float(np.log(R))
        return float(fit + logdet + self.objects_term)

    def at(self, w: float, sigma: float, n_free: int, face_value: bool) -> float:
        """-2 log restricted likelihood at noise scale w and bias SD sigma (kappa = w / sigma^2, sigma = 0
        allowed), the objects' shrinkage lam at this basis's, w not profiled (as :meth:`minus_two_loglik` up to a
        constant where w is at its best)."""
        if sigma > 0:
            quad, logdet = self.pieces_at(w / sigma**2)
        else:
            quads, logdets = self.pieces(np.inf)
            quad, logdet = float(quads[0]), float(logdets[0])
        R = max(self.S0 - quad, 1e-300)
        return logdet + self.objects_term + (R if face_value else n_free * np.log(w) + R / w)

    def noise(self, kappa, n_free: int, face_value: bool):
        quad, _ = self.pieces(kappa)
        return np.ones(quad.size) if face_value else np.maximum(self.S0 - quad, 1e-300) / n_free

    def theta(self, kappa: float) -> np.ndarray:
        """Posterior mean of theta in the eigenbasis at one finite kappa."""
        A = self.n_assessors
        inv = 1.0 / (self.m + kappa)
        one_minus = float((self.ot**2 * self.m * inv).sum()) / A
        g = self.ot * inv
        return self.rt * inv + (kappa / A) * g * float(g @ self.rt) / one_minus

    def covariance_terms(self, kappa: float):
        """(diagonal part, rank-one vector, its coefficient) of (M + kappa P)^-1 in the eigenbasis."""
        A = self.n_assessors
        inv = 1.0 / (self.m + kappa)
        one_minus = float((self.ot**2 * self.m * inv).sum()) / A
        return inv, self.ot * inv, (kappa / A) / one_minus


def _within_sum(design: Design, s: np.ndarray, V: np.ndarray, Cd: np.ndarray, latent) -> float:
    """S0 = sum c s^2 - sum_o V_o^2 / (C_o + lam): the weighted sum of squares the objects' means leave, from
    which R(kappa) subtracts the assessors' share.  Censored reads add the variance their judgement keeps beyond
    the cut-off (*latent*, :mod:`..panel.censoring`), each read's share ``c (1 - c / (C_o + lam))`` -- the part its
    object's mean does not absorb."""
    c = design.c
    S0 = float(c @ s**2 - V @ (V / Cd))
    return S0 if latent is None else S0 + float(np.sum(c * latent * (1.0 - c / Cd[design.oi])))


def _basis(design: Design, s: np.ndarray, lam: float, latent=None) -> _Basis:
    c = design.c
    Cd = design.C_o + lam
    V = np.bincount(design.oi, weights=c * s, minlength=design.n_objects)
    B = np.bincount(design.ai, weights=c * s, minlength=design.n_assessors)
    r = B - design.Cm @ (V / Cd)
    m, U = np.linalg.eigh(design.reduced_laplacian(dense=True, lam=lam))
    S0 = _within_sum(design, s, V, Cd, latent)
    return _Basis(lam, np.clip(m, 0.0, None), U, U.T @ r, U.T @ np.ones(design.n_assessors), max(S0, 0.0),
                  float(np.log1p(design.C_o / lam).sum()), design.n_assessors)


def _best_kappa(basis: _Basis, n_free, face_value, scale) -> tuple[float, float]:
    kappa, best, _edge = search_ratio(lambda k: basis.minus_two_loglik_at(k, n_free, face_value), scale,
                                      (1e-8, 1e8), 1e-6)
    at_zero = float(basis.minus_two_loglik(np.inf, n_free, face_value)[0])
    return (np.inf, at_zero) if at_zero <= best else (kappa, best)


def _reml(design: Design, s: np.ndarray, n_free: int, face_value: bool, latent=None):
    """(basis at the REML lam, REML kappa, its -2 l)."""
    scale = float(np.median(design.c))
    cache = {}

    def profile(lam):
        basis = _basis(design, s, lam, latent)
        kappa, value = _best_kappa(basis, n_free, face_value, scale)
        cache[lam] = (basis, kappa, value)
        return value

    lam, _value, _edge = search_ratio(profile, float(np.median(design.C_o)), (1e-4, 1e4), 1e-4)
    if lam not in cache:
        profile(lam)
    return cache[lam]


def _mixture(basis: _Basis, n_free: int, face_value: bool, scale: float):
    """(theta mean, H_eff, w_ref, grid, spread vectors) over the assessors' variance grid at lam fixed."""
    kappa = share_grid(scale)
    keep, weight = grid_weights(basis.minus_two_loglik(kappa, n_free, face_value))
    kappa = kappa[keep]
    w = basis.noise(kappa, n_free, face_value)
    thetas = np.array([basis.theta(k) for k in kappa])  # J x A, eigenbasis
    mean = weight @ thetas
    diag = np.zeros(basis.m.size)
    low_rank = []
    for k, p, wj in zip(kappa, weight, w):
        inv, g, coef = basis.covariance_terms(k)
        diag += p * wj * inv
        low_rank.append(np.sqrt(p * wj * coef) * g)
    low_rank.extend(np.sqrt(weight)[:, None] * (thetas - mean[None, :]))
    L = basis.U @ np.array(low_rank).T  # A x 2J
    w_ref = 1.0 if face_value else float(weight @ w)  # declared SDs: w is 1 by definition, not a sum near 1
    H = ((basis.U * diag[None, :]) @ basis.U.T + L @ L.T) / w_ref
    return basis.U @ mean, H, w_ref, (kappa, weight, w), L


def _lam_search(design: Design, s: np.ndarray, kappa: float, n_free: int, face_value: bool, start: float,
                latent=None) -> float:
    """REML lam at a fixed kappa by a bounded search around the moment estimate, one Cholesky factor per trial."""
    c = design.c
    V = np.bincount(design.oi, weights=c * s, minlength=design.n_objects)
    B = np.bincount(design.ai, weights=c * s, minlength=design.n_assessors)

    def m2l(lam):
        Cd = design.C_o + lam
        r = B - design.Cm @ (V / Cd)
        solver = ReducedSolver(design, lam=lam, ridge=kappa, centred=True)
        R = max(_within_sum(design, s, V, Cd, latent) - float(r @ solver.solve(r)), 1e-300)
        fit = R if face_value else n_free * np.log(R)
        return fit + float(np.log1p(design.C_o / lam).sum()) + solver.log_determinant()

    return search_ratio(m2l, start, (1 / 50, 50), 1e-3)[0]


def _moment_start(design: Design, s: np.ndarray, face_value: bool) -> tuple[float, float, float]:
    """(lam, kappa, w) from moments: the starting point, and the answer on large panels."""
    sigma2, w = bias_moments(design, s, face_value)
    tau2 = object_variance(design, s, sigma2, w)
    scale = float(np.median(design.c))
    kappa = w / sigma2 if sigma2 > 0 else 1e6 * scale
    return w / tau2, kappa, w


def _fit_plug_in(design: Design, s: np.ndarray, gauge: str, face_value: bool, latent=None) -> ComponentFit:
    """Large panels: both variances from moments, plugged in; one factor gives values, biases and covariance."""
    N, A, O = design.c.size, design.n_assessors, design.n_objects
    lam, kappa, _w = _moment_start(design, s, face_value)
    c = design.c
    Cd = design.C_o + lam
    V = np.bincount(design.oi, weights=c * s, minlength=O)
    B = np.bincount(design.ai, weights=c * s, minlength=A)
    r = B - design.Cm @ (V / Cd)
    # a censored fit's steps refit the same design with variances that move a little: the first step's factor
    # preconditions the later steps' solves, and each later system is factored only if its covariance is used
    near = design.shared.get(NEAR_SOLVER)
    solver = ReducedSolver(design, lam=lam, ridge=kappa, centred=True, near=near)
    if near is None:
        design.shared[NEAR_SOLVER] = solver
    theta = solver.solve(r)
    w = 1.0 if face_value else max(_within_sum(design, s, V, Cd, latent) - float(r @ theta), 1e-300) / (N - 1)
    mu = float(design.gauge_weights(gauge) @ theta)
    u = (V - design.Cm.T @ theta) / Cd
    extras = {"sigma_b": float(np.sqrt(w / kappa)), "sigma_b_low": float("nan"), "sigma_b_high": float("nan"),
              "sigma_b_p": float("nan"), "tau2": w / lam, "shrinkage_lambda": lam,
              "sigma_b_method": f"moments of the fixed fit, plugged in (with {A} assessors their uncertainty is small)"}
    return ComponentFit(mu + u, theta - mu, ReducedCovariance(solver), lam=lam, w=w, extras=extras)


def fit_component(design: Design, s: np.ndarray, gauge: str, face_value: bool, latent=None) -> ComponentFit:
    """Posterior means of the values and biases, reported in the gauge asked for.

    *latent*: per read, the variance a censored read keeps beyond its cut-off (0 elsewhere; None: no censored
    reads), added to the residual sum of squares the variances are estimated from -- the E-step of the
    censored fit in :mod:`..panel.censoring`, whose *s* then holds the censored reads' expected judgements.
    """
    N, A, O = design.c.size, design.n_assessors, design.n_objects
    spare_reads(design, face_value)
    n_free = N - 1  # REML with the panel mean the only fixed effect
    if A > EIGEN_ASSESSOR_LIMIT:
        return _fit_plug_in(design, s, gauge, face_value, latent)
    scale = float(np.median(design.c))
    if A <= NESTED_ASSESSOR_LIMIT:
        basis, kappa_hat, _best = _reml(design, s, n_free, face_value, latent)
    else:
        lam0, kappa0, _w = _moment_start(design, s, face_value)
        basis = _basis(design, s, _lam_search(design, s, kappa0, n_free, face_value, lam0, latent), latent)
        kappa_hat, _best = _best_kappa(basis, n_free, face_value, scale)
    theta, H, w_ref, (kappa, weight, w), L = _mixture(basis, n_free, face_value, scale)
    mu = float(design.gauge_weights(gauge) @ theta)
    V = np.bincount(design.oi, weights=design.c * s, minlength=O)
    u = (V - design.Cm.T @ theta) / (design.C_o + basis.lam)
    w_hat = float(basis.noise(kappa_hat, n_free, face_value)[0])
    sigma_hat = float(np.sqrt(w_hat / kappa_hat)) if np.isfinite(kappa_hat) else 0.0
    extras = LazyFigures(lambda: sigma_b_figures(lambda w_, sigma: basis.at(w_, sigma, n_free, face_value), sigma_hat,
                                                 w_hat, face_value, float(np.sqrt(w_hat / scale)),
                                                 SIGMA_B_METHOD.format(points=kappa.size)),
                         {"tau2": w_hat / basis.lam, "shrinkage_lambda": basis.lam})
    cov = MatrixCovariance(H, _MIXTURE_METHOD, _rebuild(basis.lam, kappa, weight, w, w_ref, L))
    return ComponentFit(mu + u, theta - mu, cov, lam=basis.lam, w=w_ref, extras=extras)


def _rebuild(lam, kappa, weight, w, w_ref, spread):
    """H of the same mixture for another design (next reads): weights, lam and the spread of the grid's
    means are kept (they depend on scores not yet given); the conditional covariances are recomputed."""

    def rebuild(design: Design) -> MatrixCovariance:
        A = design.n_assessors
        m, U = np.linalg.eigh(design.reduced_laplacian(dense=True, lam=lam))
        m = np.clip(m, 0.0, None)
        ot = U.T @ np.ones(A)
        diag = np.zeros(A)
        cols = []
        for k, p, wj in zip(kappa, weight, w):
            inv = 1.0 / (m + k)
            one_minus = float((ot**2 * m * inv).sum()) / A
            diag += p * wj * inv
            cols.append(np.sqrt(p * wj * (k / A) / one_minus) * ot * inv)
        L = U @ np.array(cols).T
        H = ((U * diag[None, :]) @ U.T + L @ L.T + spread[:, len(cols):] @ spread[:, len(cols):].T) / w_ref
        return MatrixCovariance(H, _MIXTURE_METHOD, rebuild)

    return rebuild


def extra_stats(fits, one) -> dict:
    keys = ("sigma_b", "sigma_b_low", "sigma_b_high", "sigma_b_p", "sigma_b_method", "tau2", "shrinkage_lambda")
    return {key: one([f.extras[key] for f in fits]) for key in keys}


def noise_scales(fits, residual: float, counts, face_value: bool, kind: str):
    """The REML noise scale; t intervals on N - 1 degrees of freedom when estimated."""
    N = counts[0]
    return [f.w for f in fits], (None if face_value else N - 1)
