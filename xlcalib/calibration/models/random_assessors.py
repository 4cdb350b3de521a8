"""Assessors as random effects: each bias b_a ~ N(0, sigma_b^2), objects fixed, sigma_b^2 and w by REML.

Why this is the default: panels are grouped by expertise, so most pairs of
assessors share no object and their biases are weakly determined.  The fixed
fit (MacKay et al. 2017) then moves values by the noise in those weak links;
treating biases as random effects (as the NeurIPS 2014 calibration did)
shrinks a bias towards zero exactly as far as the data leave it uncertain.
In the limit sigma_b -> 0, or for an assessor linked to nobody, the values
are the confidence-weighted plain averages; with strong linkage and many
reads per assessor they approach the fixed fit.  Groups that share no object
at all are still calibrated: between groups by the model's assumption that
each group is on average as strict as the panel.

Model: ``s_ao = v_o + b_a + e_ao``, ``e ~ N(0, w / c_ao)``.  With
``lam = w / sigma_b^2`` Henderson's mixed-model equations, objects
eliminated, are ``(M + lam I) b = r`` with ``M`` the reduced assessor
Laplacian and ``r = B - Cm V / C_o`` (MacKay et al. 2017, eqs. 13, 15), and
``v_o = (V_o - sum_a c_ao b_a) / C_o``.  The restricted likelihood (objects
are the fixed effects), with ``M = U diag(mu) U'`` and ``r~ = U' r``:

    -2 l = (N - O) log w - A log lam + sum_i log(mu_i + lam) + R(lam) / w + const
    R(lam) = S0 - sum_i r~_i^2 / (mu_i + lam),   S0 = sum c s^2 - sum_o V_o^2 / C_o

so one eigendecomposition of ``M`` gives the likelihood at every ``lam``.
The noise scale is profiled, ``w = R / (N - O)`` (given ``lam``, ``R / w`` is
chi-square on ``N - O`` degrees of freedom, hence Student-t intervals on
``N - O``), or ``w = 1`` for SDs taken at face value.

The variance's own uncertainty is carried, not plugged in: sigma_b is
integrated over a grid of ``rho = sigma_b^2 / (sigma_b^2 + w / c~)`` (the share
of a typical read's variance that is the assessor's bias, ``c~`` the median
confidence) with a uniform prior on ``rho``, weighted by the restricted
likelihood.  The posterior of the biases is that mixture, summarised by its
mean and covariance (moment matching), so a small panel whose sigma_b could
be 0 or 0.5 gets intervals wide enough for both.  Above
:data:`EIGEN_ASSESSOR_LIMIT` assessors sigma_b is well determined and the
REML estimate is plugged in (the Diagnostics say which).

References: Henderson (1975) Biometrics 31:423; Patterson & Thompson (1971)
Biometrika 58:545 (REML); Gelman (2006) Bayesian Analysis 1:515 (priors for
group-level variances); Cortes & Lawrence (2021) "Inconsistency in conference
peer review: revisiting the 2014 NeurIPS experiment" (reviewer calibration
with random biases).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..system.graph import Design, ReducedSolver
from ..system.posterior import MatrixCovariance, ReducedCovariance
from .base import ComponentFit, no_noise_check, refuse_latent
from .moments import bias_moments
from .variance import grid_weights, share_grid, sigma_b_figures, spare_reads

NAME = "random-assessors"
ALIASES = ()
DESCRIPTION = ("recommended: assessors' biases are random effects, shrunk towards 0 as far as the data leave "
               "them uncertain -- safe on weakly linked and expertise-grouped panels")
#: No limit: above graph.DENSE_ASSESSOR_LIMIT assessors the variances come from moments and the system is solved
#: iteratively (standard errors from perturbation draws), as for the fixed fit.
MAX_ASSESSORS = None
#: The model ties groups that share no object (through the biases' common prior): fit the panel as one piece.
LINKS_GROUPS = True
#: Rankings and P(above the line) come from the random-both fit of the same panel: statements about where an
#: object stands among the others need the objects' spread as a prior (see result.DecisionBasis).
DECISIONS_BY = "random-both"
#: Scores at the ends of a declared scale are fitted as given (the decision basis reads them as censored).
CENSORED_READS = False
#: Each assessor keeps a term of its own (the fit is not pooled).
POOLED = False
#: Its noise scale is a REML estimate, not the fixed fit's chi-square: no check of declared SDs.
noise_check = no_noise_check
#: Up to this many assessors the variance's uncertainty is integrated over (one eigendecomposition of M).
EIGEN_ASSESSOR_LIMIT = 800
#: How sigma_b's figures were found (the Diagnostics' words; see :func:`.variance.sigma_b_figures`).
SIGMA_B_METHOD = ("REML estimate; 95% interval from the restricted likelihood ratio (reaching 0 exactly when the "
                  "test of no difference does not reject at 5%); the values' uncertainty averages over sigma_b "
                  "({points} grid points, uniform prior on its share of a read's variance)")


@dataclass
class _RestrictedLikelihood:
    """The restricted likelihood over lam, from the eigen-pieces of one panel's reduced system."""

    mu: np.ndarray  # eigenvalues of M (ascending, clipped at 0)
    U: np.ndarray  # eigenvectors
    rt: np.ndarray  # U' r
    S0: float  # within-object weighted sum of squares
    n_free: int  # N - O
    face_value: bool

    def residual(self, lam):
        lam = np.atleast_1d(np.asarray(lam, dtype=float))
        return np.maximum(self.S0 - (self.rt[None, :] ** 2 / (self.mu[None, :] + lam[:, None])).sum(axis=1), 0.0)

    def residual_at(self, lam: float) -> float:
        """:meth:`residual` at one lam, the same sums without its arrays of lam: the score equation and the
        interval of sigma_b call it thousands of times, and on a spreadsheet-sized panel the calls' overhead was
        a third of a recalculation of CALIB_VALUES."""
        return max(self.S0 - float((self.rt**2 / (self.mu + lam)).sum()), 0.0)

    def minus_two_loglik(self, lam):
        """-2 log restricted likelihood (w profiled, or w = 1), up to a constant, at each lam."""
        lam = np.atleast_1d(np.asarray(lam, dtype=float))
        R = self.residual(lam)
        logdet = np.log1p(self.mu[None, :] / lam[:, None]).sum(axis=1)  # log|M + lam I| - A log lam
        fit = R if self.face_value else self.n_free * np.log(np.maximum(R, 1e-300))
        return fit + logdet

    def minus_two_loglik_at(self, lam: float) -> float:
        """:meth:`minus_two_loglik` at one lam, the same sums in the same order without its arrays of lam (bitwise
        the same number): the REML search calls it some thirty times a fit."""
        R = self.residual_at(lam)
        logdet = float(np.log1p(self.mu / lam).sum())
        fit = R if self.face_value else self.n_free * float(np.log(max(R, 1e-300)))
        return fit + logdet

    def slope(self, log_lam: float) -> float:
        """d(-2 log restricted likelihood)/d log(lam): zero at the REML estimate (the score equation)."""
        lam = float(np.exp(log_lam))
        R = self.residual_at(lam)
        dR = float(np.sum(self.rt**2 / (self.mu + lam) ** 2))  # dR/dlam
        fit = dR if self.face_value else self.n_free * dR / max(R, 1e-300)
        return lam * (fit - float(np.sum(self.mu / (lam * (lam + self.mu)))))

    def noise(self, lam):
        return np.ones(np.size(lam)) if self.face_value else self.residual(lam) / self.n_free

    def w_slope(self, log_w: float, sigma: float) -> float:
        """d :meth:`at` (e^x, sigma) / dx at x = log w, sigma > 0 fixed (lam = w / sigma^2 moves with w): the
        profile of sigma_b's interval finds the best w as its root.  With R1 = dR/dlam = sum rt^2 / (mu + lam)^2,
        d logdet/dx = -sum mu / (mu + lam) and d(R / w)/dx = (lam R1 - R) / w."""
        w = float(np.exp(log_w))
        lam = w / sigma**2
        R = self.residual_at(lam)
        R1 = float(np.sum(self.rt**2 / (self.mu + lam) ** 2)) if R > 0.0 else 0.0  # R held at 0: no slope
        return self.n_free - float(np.sum(self.mu / (self.mu + lam))) + (lam * R1 - R) / w

    def at(self, w: float, sigma: float) -> float:
        """-2 log restricted likelihood at noise scale w and bias SD sigma (lam = w / sigma^2; sigma = 0 allowed),
        w not profiled -- the same function as :meth:`minus_two_loglik` up to a constant where w is at its best."""
        lam = w / sigma**2 if sigma > 0 else np.inf
        R = self.residual_at(lam)
        logdet = float(np.log1p(self.mu / lam).sum())
        return logdet + (R if self.face_value else self.n_free * np.log(w) + R / w)


def _pieces(design: Design, s: np.ndarray):
    """(r, S0) of the reduced system: r = B - Cm V/C_o, S0 = sum c s^2 - sum V^2/C_o."""
    c = design.c
    V = np.bincount(design.oi, weights=c * s, minlength=design.n_objects)
    B = np.bincount(design.ai, weights=c * s, minlength=design.n_assessors)
    r = B - design.Cm @ (V / design.C_o)
    S0 = float(c @ s**2 - V @ (V / design.C_o))
    return V, r, max(S0, 0.0)


def _grid(spec: _RestrictedLikelihood, c_typical: float):
    """(lam_j, w_j, weight_j) over the rho grid (:mod:`.variance`); rho = 1 / (1 + lam / c~)."""
    lam = share_grid(c_typical)
    keep, weight = grid_weights(spec.minus_two_loglik(lam))
    return lam[keep], spec.noise(lam[keep]), weight


def _reml_mode(spec: _RestrictedLikelihood, c_typical: float) -> tuple[float, float]:
    """(lam, -2 l) at the REML estimate (lam = inf: sigma_b = 0 is the boundary)."""
    from scipy.optimize import minimize_scalar

    lo, hi = np.log(c_typical * 1e-8), np.log(c_typical * 1e8)
    best = minimize_scalar(lambda x: spec.minus_two_loglik_at(float(np.exp(x))), bounds=(lo, hi),
                           method="bounded", options={"xatol": 1e-7})
    at_zero = float(spec.minus_two_loglik(np.inf)[0]) if np.isfinite(spec.S0) else np.inf
    if at_zero <= best.fun:
        return np.inf, at_zero
    x = _polished(spec, float(best.x), lo, hi)
    return float(np.exp(x)), float(spec.minus_two_loglik(np.exp(x))[0])


def _polished(spec: _RestrictedLikelihood, x: float, lo: float, hi: float) -> float:
    """The minimiser to full precision: the root of the score equation next to the search's answer.

    A likelihood is flat at its optimum, so a search pins the argument only to about the square root of the
    rounding error -- enough to differ in the 8th digit between machines; the slope crosses zero steeply.
    """
    from scipy.optimize import brentq

    for step in (1e-4, 1e-2):
        a, b = max(x - step, lo), min(x + step, hi)
        fa, fb = spec.slope(a), spec.slope(b)
        if np.isfinite(fa) and np.isfinite(fb) and fa < 0.0 < fb:
            return float(brentq(spec.slope, a, b, xtol=1e-15, rtol=4 * np.finfo(float).eps))
    return x


def _mixture_covariance(spec: _RestrictedLikelihood, lam, w, weight):
    """(mean of theta, H_eff, w_ref): the mixture over the grid, moment-matched, in units of w_ref."""
    a = 1.0 / (spec.mu[None, :] + lam[:, None])  # J x A, eigen coordinates
    theta_j = a * spec.rt[None, :]
    mean = weight @ theta_j
    w_ref = 1.0 if spec.face_value else float(weight @ w)  # declared SDs: w is 1 by definition
    spread = (theta_j - mean[None, :]) * np.sqrt(weight)[:, None]  # J x A
    diag = (weight * w) @ a
    U = spec.U
    US = U * diag[None, :]
    Ud = U @ spread.T  # A x J
    H = (US @ U.T + Ud @ Ud.T) / w_ref
    return U @ mean, H, w_ref, Ud


def _rebuild(lam, w, weight, w_ref, spread_vectors):
    """H of the same mixture for another design (next reads): the grid weights and the spread of the
    grid's means are kept (they depend on scores not yet given); the conditional covariances are recomputed."""

    def rebuild(design: Design) -> MatrixCovariance:
        M = design.reduced_laplacian(dense=True)
        mu, U = np.linalg.eigh(M)
        mu = np.clip(mu, 0.0, None)
        diag = (weight * w) @ (1.0 / (mu[None, :] + lam[:, None]))
        H = ((U * diag[None, :]) @ U.T + spread_vectors @ spread_vectors.T) / w_ref
        return MatrixCovariance(H, _MIXTURE_METHOD, rebuild)

    return rebuild


_MIXTURE_METHOD = "exact given sigma_b; sigma_b integrated over its posterior (moment-matched mixture)"


def _fit_by_eigen(design: Design, s: np.ndarray, face_value: bool, n_free: int):
    V, r, S0 = _pieces(design, s)
    mu, U = np.linalg.eigh(design.reduced_laplacian(dense=True))
    spec = _RestrictedLikelihood(np.clip(mu, 0.0, None), U, U.T @ r, S0, n_free, face_value)
    c_typical = float(np.median(design.c))
    lam_hat, _best = _reml_mode(spec, c_typical)
    lam, w, weight = _grid(spec, c_typical)
    theta, H, w_ref, spread = _mixture_covariance(spec, lam, w, weight)
    w_hat = float(spec.noise(lam_hat)[0])
    sigma_hat = float(np.sqrt(w_hat / lam_hat)) if np.isfinite(lam_hat) else 0.0
    extras = sigma_b_figures(spec.at, sigma_hat, w_hat, face_value, float(np.sqrt(w_hat / c_typical)),
                             SIGMA_B_METHOD.format(points=lam.size), w_slope=spec.w_slope)
    cov = MatrixCovariance(H, _MIXTURE_METHOD, _rebuild(lam, w, weight, w_ref, spread))
    return V, theta, cov, w_ref, extras


def _fit_plug_in(design: Design, s: np.ndarray, face_value: bool, n_free: int):
    """Large panels: sigma_b^2 and w from moments of the fixed fit (see :mod:`.moments`), plugged in.

    With thousands of assessors the variances are well determined and a likelihood search would cost many
    factorisations; one factor of ``M + lam I`` then gives the values, biases and their covariance.
    """
    _V, r, S0 = _pieces(design, s)
    design.shared["keep_laplacian"] = True  # the moments' fixed fit and the ridge system share the Laplacian
    sigma2, w_moment = bias_moments(design, s, face_value)
    design.shared.pop("keep_laplacian", None)  # unused when the moments were fitted group by group
    lam = w_moment / sigma2 if sigma2 > 0 else 1e12 * float(np.max(design.C_a))
    solver = ReducedSolver(design, ridge=lam)
    theta = solver.solve(r)
    w = 1.0 if face_value else max(S0 - float(r @ theta), 1e-300) / n_free
    extras = {"sigma_b": float(np.sqrt(sigma2)), "sigma_b_low": float("nan"), "sigma_b_high": float("nan"),
              "sigma_b_p": float("nan"),
              "sigma_b_method": (f"moments of the fixed fit, plugged in (with {design.n_assessors} assessors its "
                                 "uncertainty is small)")}
    return _V, theta, ReducedCovariance(solver), w, extras


def fit_component(design: Design, s: np.ndarray, gauge: str, face_value: bool, latent=None) -> ComponentFit:
    """Posterior means of the values and biases, reported in the gauge asked for."""
    refuse_latent(latent, NAME)
    n_free = spare_reads(design, face_value)
    fitter = _fit_by_eigen if design.n_assessors <= EIGEN_ASSESSOR_LIMIT else _fit_plug_in
    V, theta, cov, w, extras = fitter(design, s, face_value, n_free)
    shift = float(design.gauge_weights(gauge) @ theta)
    values = (V - design.Cm.T @ theta) / design.C_o + shift
    return ComponentFit(values, theta - shift, cov, lam=0.0, w=w, extras=extras)


def noise_scales(fits, residual: float, counts: tuple[int, int, int, int], face_value: bool,
                 kind: str) -> tuple[list[float], int | None]:
    """The REML noise scale of each piece; t intervals on N - O degrees of freedom when estimated."""
    N, _A, O, _n_comp = counts
    return [f.w for f in fits], (None if face_value else N - O)


def extra_stats(fits, one) -> dict:
    """sigma_b (score units) with its 95% interval, the test of sigma_b = 0, and how it was found."""
    keys = ("sigma_b", "sigma_b_low", "sigma_b_high", "sigma_b_p", "sigma_b_method")
    return {key: one([f.extras[key] for f in fits]) for key in keys}
