"""Objects as random effects: values shrunk towards the panel mean, variances by REML.

Objects ~ N(mu, tau^2), assessor effects fixed: theta_a = mu + b_a (A fixed
effects, always estimable), u_o ~ N(0, tau^2), e ~ N(0, w/c).  With
lam = w/tau^2 the restricted likelihood, w profiled out (w = R_lam/(N - A)), is

    -2 l(lam) = (N - A) log R_lam + sum_o log(1 + C_o/lam) + log|M_lam| + const,

R_lam = min sum c (s - theta_a - u_o)^2 + lam sum u_o^2 (Henderson's
mixed-model equations with objects eliminated), minimised over log lam with a
bounded scalar search.  With SDs at face value w = 1 and
-2 l = R_lam + sum_o log(1 + C_o/lam) + log|M_lam|.  Values are posterior
means with posterior SDs: fairer to objects with few or low-confidence reads,
which the fixed fit pushes to the extremes.
"""
from __future__ import annotations

import numpy as np

from ...errors import InputError
from ..system.graph import DENSE_ASSESSOR_LIMIT, Design, ReducedSolver
from ..system.posterior import ReducedCovariance
from .base import ComponentFit, no_noise_check, refuse_latent
from .variance import search_ratio

NAME = "random-objects"
#: The name this model had before the model family grew (still accepted).
ALIASES = ("shrinkage",)
LINKS_GROUPS = False
#: The restricted likelihood needs log|M_lam| from a dense factor.
MAX_ASSESSORS = DENSE_ASSESSOR_LIMIT
#: Rankings and P(above the line) come from this model's own posterior.
DECISIONS_BY = None
#: Scores at the ends of a declared scale are fitted as given.
CENSORED_READS = False
#: Each assessor keeps a term of its own (the fit is not pooled).
POOLED = False
#: Its noise scale is a REML estimate, not the fixed fit's chi-square: no check of declared SDs.
noise_check = no_noise_check
DESCRIPTION = ("objects' values random effects, shrunk towards the panel mean; biases estimated freely "
               "(formerly 'shrinkage')")


def _solve(design: Design, s: np.ndarray, V: np.ndarray, B: np.ndarray, lam: float):
    """(solver, theta, u, R_lam) at one shrinkage lam."""
    solver = ReducedSolver(design, lam=lam)
    Cd = design.C_o + lam
    theta = solver.solve(B - design.Cm @ (V / Cd))
    u = (V - design.Cm.T @ theta) / Cd
    resid = s - theta[design.ai] - u[design.oi]
    return solver, theta, u, float(design.c @ resid**2 + lam * u @ u)


def reml(design: Design, s: np.ndarray, fixed_w: bool = False):
    """REML fit (see the module docstring).  Returns (theta, u, lam, w, solver, at_upper_edge)."""
    N, A = design.c.size, design.n_assessors
    if N - A <= 0:
        raise InputError(f"the random-objects model needs more evaluations than assessors ({N} <= {A})")
    c = design.c
    V = np.bincount(design.oi, weights=c * s, minlength=design.n_objects)
    B = np.bincount(design.ai, weights=c * s, minlength=A)

    def objective(lam):
        solver, _theta, _u, R = _solve(design, s, V, B, lam)
        fit = R if fixed_w else (N - A) * np.log(max(R, 1e-300))
        return fit + np.sum(np.log1p(design.C_o / lam)) + solver.log_determinant()

    lam, _value, at_edge = search_ratio(objective, float(np.median(design.C_o)), (1e-6, 1e6), 1e-6)
    solver, theta, u, R = _solve(design, s, V, B, lam)
    w = 1.0 if fixed_w else R / (N - A)
    return theta, u, lam, w, solver, at_edge


def fit_component(design: Design, s: np.ndarray, gauge: str, face_value: bool, latent=None) -> ComponentFit:
    """Posterior means of one component, reported in the gauge asked for (the mean of theta under k is mu)."""
    refuse_latent(latent, NAME)
    theta, u, lam, w, solver, at_edge = reml(design, s, fixed_w=face_value)
    mu = float(design.gauge_weights(gauge) @ theta)
    return ComponentFit(mu + u, theta - mu, ReducedCovariance(solver), lam=lam, w=w,
                        extras={"tau2": w / lam, "shrinkage_lambda": lam, "at_edge": at_edge})


def noise_scales(fits, residual: float, counts: tuple[int, int, int, int], face_value: bool,
                 kind: str) -> tuple[list[float], int | None]:
    """Each component keeps its REML noise scale; t intervals on N - A degrees of freedom when estimated."""
    N, A, _O, _n_comp = counts
    return [f.w for f in fits], (None if face_value else N - A)


def extra_stats(fits, one) -> dict:
    """The Diagnostics figures of this model (``one`` turns a per-component list into one value when single)."""
    stats = {"tau2": one([f.extras["tau2"] for f in fits]),
             "shrinkage_lambda": one([f.extras["shrinkage_lambda"] for f in fits])}
    if any(f.extras["at_edge"] for f in fits):
        stats["shrinkage_note"] = "REML put the spread of object values at (nearly) zero: values are pooled"
    return stats
