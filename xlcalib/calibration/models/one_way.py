"""Reviewers who cannot be linked across objects: one-way random effects, each reviewer's stringency inside the noise.

Why: the commonest real panel is a conference whose reviewers are anonymous per paper (OpenReview's
``Paper12/AnonReviewer2``), or any panel in which every assessor reads one object.  A read is then

    s_ao = v_o + b_a + eta_ao,    b_a ~ N(0, sigma_b^2),  eta_ao ~ N(0, w_eta / c_ao),

and with one read per assessor ``b_a`` and ``eta_ao`` appear only as their sum: the likelihood depends on
``sigma_b^2 + w_eta / c_ao`` alone, so no model can tell the reviewer's stringency from the read's noise (the
random-both fit of such a panel has a ridge of equal likelihood along every split; REML puts its estimate
anywhere on it).  Unknown stringency is not a reason to refuse a decision, though: it is noise.  This model takes
the sum as the noise of a read,

    s_ao = mu + u_o + e_ao,    u_o ~ N(0, tau^2),  e_ao = b_a + eta_ao ~ N(0, w / c_ao),

the one-way random-effects model (Fisher 1925; the variance components of ICC(1), Shrout & Fleiss 1979): ``w``
(stringency and noise together) is estimated from the spread of the reads *within* objects, ``tau^2`` from the
spread *between* them, both by REML with ``mu`` the only fixed effect.  With confidences, the whole of a read's
variance is taken as proportional to ``1 / c`` -- the split cannot be estimated, so neither can a constant
stringency term beside it.  Values are posterior means, shrunk towards the panel mean by how much their reads
say (``C_o``, the reads' total confidence, against ``lam = w / tau^2``)::

    v_o = mu + (V_o - C_o mu) / (C_o + lam),   Var(v_o) = w [1/(C_o + lam) + (lam/(C_o + lam))^2 / M],
    M = sum_o C_o lam / (C_o + lam)           (Henderson's equations with the objects eliminated; mu's variance w/M)

so the +- of a value never comes from its own reads' spread alone: three reads of 8, 8, 8 carry the pooled
within-object noise ``w / 3`` (shrunk by the prior), not 0.  The restricted likelihood, ``w`` profiled out, is

    -2 l(lam) = (N - 1) log R(lam) + sum_o log(1 + C_o / lam) + log M(lam) + const,
    R(lam) = S0(lam) - r(lam)^2 / M(lam),  S0 = sum c s^2 - sum_o V_o^2 / (C_o + lam),  r = sum_o V_o lam / (C_o + lam),

a one-dimensional search costing O(objects) per trial (10^4 papers: milliseconds).  It is the random-objects
model (:mod:`.random_objects`) of a panel with one assessor, computed without the reduced system.

In the result's terms the fit's design has a single assessor -- "any reviewer" -- whose bias is 0 by
construction (``fit.calibrate`` pools the panel's assessors into it; :attr:`Design.pooled`): the posterior
form every model shares (:mod:`..system.posterior`) then holds as it is, draws cost O(objects), and a next read
is "a new reviewer reads object o" at the pooled noise.  The reviewers' own biases are not estimable and are
reported as such.  ``lam`` is estimated, and its own uncertainty is carried to first order: every value depends
on it through ``dv_o/dlog(lam) = lam C_o (mu - ybar_o) / (C_o + lam)^2``, so the values carry the rank-one term
``spread_o xi`` (``xi ~ N(0, 1)``, :class:`~..system.posterior.Posterior`) with ``spread_o`` that derivative times
the SD of ``log(lam)`` from the restricted likelihood's curvature -- the papers far from the mean move together as
the values' spread is larger or smaller than estimated.  Plugged in alone, ``lam`` left the 95% intervals of 200
papers read twice (ICC 0.17) covering 0.932 of the truth (``benchmarks/bench_anonymous.py``).

Scores at the ends of a declared scale can be read as censored (``latent``, :mod:`..panel.censoring`); the
scale's rounding enters through the effective confidences (:mod:`.iterate`), as for every model.
"""
from __future__ import annotations

import numpy as np

from ..system.graph import Design
from ..system.posterior import MatrixCovariance
from .base import ComponentFit, no_noise_check

NAME = "one-way"
#: The words a user may type for it too.
ALIASES = ("anonymous",)
DESCRIPTION = ("reviewers who cannot be linked across objects (each reads one object, e.g. anonymous per paper): "
               "objects' values random effects shrunk by how much their reads say; each reviewer's stringency is "
               "part of the noise of a read (one-way random effects, ICC(1))")
#: No assessor system is formed: the fit costs O(reads).
MAX_ASSESSORS = None
#: Every object shares the values' prior: the whole panel is one piece, however its reviewers fall apart.
LINKS_GROUPS = True
#: Rankings and P(above the line) come from this model refitted with the scale's rounding and censored ends.
DECISIONS_BY = NAME
#: Its fit takes the variance censored reads keep (``latent``): scores at the scale's ends are read as censored.
CENSORED_READS = True
#: Its fit pools the panel's assessors into one, "any reviewer": ``fit.calibrate`` hands it the pooled design.
POOLED = True
#: Its noise scale is a REML estimate, not the fixed fit's chi-square: no check of declared SDs.
noise_check = no_noise_check
#: The search over log(lam) spans this factor either side of the median object's total confidence.
LAM_SPAN = 1e6


class _OneWay:
    """The restricted likelihood's pieces at one shrinkage ``lam`` (see the module docstring)."""

    def __init__(self, design: Design, s: np.ndarray, latent=None):
        self.design, self.c = design, design.c
        self.V = np.bincount(design.oi, weights=design.c * s, minlength=design.n_objects)
        self.Css = float(design.c @ s**2)
        self.latent = latent
        self.N = design.c.size

    def pieces(self, lam: float) -> tuple[float, float, float]:
        """(M, r, R) at *lam*: mu's precision per unit w, its right-hand side and the residual sum of squares."""
        C_o = self.design.C_o
        Cd = C_o + lam
        M = float(np.sum(C_o * (lam / Cd)))
        r = float(np.sum(self.V * (lam / Cd)))
        S0 = self.Css - float(self.V @ (self.V / Cd))
        if self.latent is not None:  # censored reads: the variance their judgement keeps, less their mean's share
            S0 += float(np.sum(self.c * self.latent * (1.0 - self.c / Cd[self.design.oi])))
        return M, r, max(S0 - r * r / M, 1e-300)

    def minus_two_loglik(self, log_lam: float, face_value: bool) -> float:
        lam = float(np.exp(log_lam))
        M, _r, R = self.pieces(lam)
        fit = R if face_value else (self.N - 1) * np.log(R)
        return fit + float(np.log1p(self.design.C_o / lam).sum()) + np.log(M)


#: The step in log(lam) of the restricted likelihood's curvature (a second difference): its information about lam.
CURVATURE_STEP = 0.05


def reml(design: Design, s: np.ndarray, face_value: bool, latent=None) -> tuple[float, float, float, float, bool]:
    """(lam, mu, w, M, at the upper edge) at the REML estimate (module docstring); w = 1 at face value."""
    lam, mu, w, M, at_edge, _sd = _reml(design, s, face_value, latent)
    return lam, mu, w, M, at_edge


def _reml(design: Design, s: np.ndarray, face_value: bool, latent=None):
    """:func:`reml` and the SD of log(lam) from the curvature of -2 l there (its inverse, times 2: the observed
    information), NaN at an edge or where the curvature is not positive."""
    from scipy.optimize import minimize_scalar

    like = _OneWay(design, s, latent)
    typical = float(np.median(design.C_o))
    lo, hi = np.log(typical / LAM_SPAN), np.log(typical * LAM_SPAN)
    best = minimize_scalar(lambda x: like.minus_two_loglik(x, face_value), bounds=(lo, hi), method="bounded",
                           options={"xatol": 1e-7})
    lam = float(np.exp(best.x))
    M, r, R = like.pieces(lam)
    w = 1.0 if face_value else R / (like.N - 1)
    at_edge = bool(best.x > hi - 1e-3 or best.x < lo + 1e-3)
    f = lambda x: like.minus_two_loglik(x, face_value)  # noqa: E731
    h = CURVATURE_STEP
    curvature = (f(best.x + h) - 2.0 * f(best.x) + f(best.x - h)) / h**2
    sd = float(np.sqrt(2.0 / curvature)) if curvature > 0 and not at_edge else float("nan")
    return lam, r / M, w, M, at_edge, sd


def _covariance(lam: float) -> MatrixCovariance:
    """H = 1/M (units of w): mu's variance, the one fixed effect; rebuilt for a design with extra reads."""

    def build(design: Design) -> MatrixCovariance:
        M = float(np.sum(design.C_o * (lam / (design.C_o + lam))))
        return MatrixCovariance(np.array([[1.0 / M]]), "exact given the values' spread (REML, plugged in)", build)

    return build


def fit_component(design: Design, s: np.ndarray, gauge: str, face_value: bool, latent=None) -> ComponentFit:
    """Posterior means of the values (and the pooled assessor's bias, 0) of the pooled panel.

    *design* must be pooled (one assessor): the reviewers' stringency is in the noise, so no bias is fitted.
    """
    if design.n_assessors != 1:
        raise TypeError(f"the {NAME} model fits a pooled design (one assessor), not {design.n_assessors}")
    lam, mu, w, M, at_edge, sd_log_lam = _reml(design, s, face_value, latent)
    V = np.bincount(design.oi, weights=design.c * s, minlength=design.n_objects)
    Cd = design.C_o + lam
    values = mu + (V - design.C_o * mu) / Cd
    # the values' own dependence on lam, to first order: dv_o/dlog(lam) = lam C_o (mu - ybar_o) / (C_o + lam)^2 --
    # every value moves towards or away from mu together as the spread of the values is smaller or larger than
    # estimated (a few hundred papers read twice leave it uncertain)
    spread = (lam * (design.C_o * mu - V) / Cd**2) * sd_log_lam if np.isfinite(sd_log_lam) else None
    tau2 = w / lam
    c_typical, C_typical = float(np.median(design.c)), float(np.median(design.C_o))
    extras = {"tau2": tau2, "shrinkage_lambda": lam, "at_edge": at_edge,
              "icc": tau2 / (tau2 + w / c_typical), "icc_k": tau2 / (tau2 + w / C_typical),
              "reads_typical": float(np.median(np.bincount(design.oi, minlength=design.n_objects)))}
    extras["lam_log_sd"] = sd_log_lam
    return ComponentFit(values, np.zeros(1), _covariance(lam)(design), lam=lam, w=w, extras=extras, spread=spread)


def noise_scales(fits, residual: float, counts: tuple[int, int, int, int], face_value: bool,
                 kind: str) -> tuple[list[float], int | None]:
    """The REML noise scale (stringency and noise together); t intervals on N - O degrees of freedom when it is
    estimated: the reads beyond one per object are what it is estimated from."""
    N, _A, O, _n_comp = counts
    return [f.w for f in fits], (None if face_value else max(N - O, 1))


def extra_stats(fits, one) -> dict:
    """The values' spread, the shrinkage, ICC(1) -- how much of a typical read's variance is the object's value --
    and ICC(1,k), the same for a typical object's reads together (its total confidence, median ``C_o``): the
    reliability of the scores averaged, ``tau^2 / (tau^2 + w / C_o)``, from the model's own variances."""
    stats = {key: one([f.extras[key] for f in fits]) for key in ("tau2", "shrinkage_lambda", "icc", "icc_k")}
    stats["shrinkage_log_sd"] = one([f.extras["lam_log_sd"] for f in fits])
    if any(f.extras["at_edge"] for f in fits):
        stats["shrinkage_note"] = "REML put the spread of object values at (nearly) zero: values are pooled"
    return stats
