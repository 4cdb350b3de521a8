"""Variance components from moments: sigma_b^2, w and tau^2 without a search over the likelihood.

Why: on national-scale panels (thousands of assessors) the variances are
determined to a few per cent by the sheer number of reads, while a restricted
likelihood needs an A x A factorisation per trial value -- many times the
cost of the fit itself.  The fixed-effects fit gives them from moments
instead (in the spirit of Henderson 1953, Biometrics 9:226, "Estimation of
variance and covariance components"):

* ``w = R / (N - A - O + components)`` (unbiased under either model);
* its biases, centred within each component, have ``E[sum (b_a - bbar)^2] =
  sigma_b^2 (A - components) + w tr(P H)`` with ``H`` the fixed fit's
  covariance of the biases (from the inverse its standard errors need anyway);
* the objects' weighted means spread as ``Var(ybar_o) = tau^2 + sigma_b^2
  sum c^2 / C_o^2 + w / C_o``.
"""
from __future__ import annotations

import numpy as np

from ..system.graph import FIXED_SOLVER, Design, components
from .fixed import fit_component as fixed_fit
from ..system.posterior import Posterior

__all__ = ["bias_moments", "object_variance"]


#: Above this many assessors tr(P H P) is estimated from probes (Hutchinson) instead of the dense inverse.
PROBE_TRACE_ASSESSORS = 1500
TRACE_PROBES = 40


def _centred_trace(design: Design, covariance) -> float:
    """tr(P H P), P = I - 1 1'/A: the expected spread of the centred fixed-effect biases per unit w.

    Exact from the inverse on small panels; on large ones Hutchinson's estimator with Rademacher probes
    (seed fixed) through the factor the fit already has -- a few per cent of the dense inverse's time.
    """
    A = design.n_assessors
    if A <= PROBE_TRACE_ASSESSORS and not covariance.iterative:
        return float(Posterior(design, covariance, 1.0, 0.0, "simple").variances()[1].sum())
    rng = np.random.default_rng(20240611)
    Z = rng.choice([-1.0, 1.0], size=(A, TRACE_PROBES))
    Z -= Z.mean(axis=0)[None, :]  # P z
    HZ = covariance.apply(Z, refine=False)  # a trace estimate needs no more than single precision
    HZ -= HZ.mean(axis=0)[None, :]
    return float(np.einsum("ij,ij->j", Z, HZ).mean())


def bias_moments(design: Design, s: np.ndarray, face_value: bool) -> tuple[float, float]:
    """(sigma_b^2, w) from the fixed-effects fit of each connected component (w = 1 at face value).

    Kept on the design (``design.shared``) with the scores they came from: the values' model and the decisions'
    model of one panel share them, and a censored fit's EM steps -- the same design with new expected scores at
    the scale's ends -- recompute them, but through the factor and the trace the design keeps (the trace
    depends on the design alone).
    """
    key = ("bias_moments", face_value)
    kept = design.shared.get(key)
    if kept is None or not np.array_equal(kept[0], s):
        kept = (np.array(s, dtype=float), _bias_moments(design, s, face_value))
        design.shared[key] = kept
    return kept[1]


def _bias_moments(design: Design, s: np.ndarray, face_value: bool) -> tuple[float, float]:
    if "components" not in design.shared:
        design.shared["components"] = components(design.ai, design.oi, design.n_assessors, design.n_objects)
    n, comp_a, comp_o = design.shared["components"]
    spread, trace, resid, dof = 0.0, 0.0, 0.0, 0
    for mask, a_idx, _o_idx, sub in design.parts(n, comp_a, comp_o):
        if a_idx.size < 2:
            continue
        fit = fixed_fit(sub, s[mask], "weighted", face_value)  # the biases are centred below: any gauge
        if n == 1:  # the graph's own solver: mu2 and the robustness bounds need it too
            design.shared[FIXED_SOLVER] = fit.covariance.solver
        b = fit.biases - fit.biases.mean()
        spread += float(b @ b)
        if "centred_trace" not in sub.shared:
            sub.shared["centred_trace"] = _centred_trace(sub, fit.covariance)
        trace += sub.shared["centred_trace"]
        resid += float(sub.c @ (s[mask] - fit.values[sub.oi] - fit.biases[sub.ai]) ** 2)
        dof += sub.c.size - sub.n_assessors - sub.n_objects + 1
    if face_value:
        w = 1.0
    else:
        w = resid / dof if dof > 0 else 1.0
    df_b = design.n_assessors - n
    sigma2 = (spread - w * trace) / df_b if df_b > 0 else 0.0
    return max(sigma2, 0.0), w


def object_variance(design: Design, s: np.ndarray, sigma_b2: float, w: float) -> float:
    """tau^2: the spread of the objects' weighted means less the part their readers' biases and noise explain."""
    c = design.c
    C_o = design.C_o
    ybar = np.bincount(design.oi, weights=c * s, minlength=design.n_objects) / C_o
    c2 = np.bincount(design.oi, weights=c * c, minlength=design.n_objects)
    noise = sigma_b2 * c2 / C_o**2 + w / C_o
    floor = 1e-6 * max(float(np.var(ybar)), 1e-300)
    return max(float(np.var(ybar, ddof=1) - noise.mean()), floor)
