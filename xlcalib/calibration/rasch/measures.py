"""What the fit says about each object, assessor and threshold: measures with their standard errors, fair
averages, severities, Rasch-Andrich thresholds.

Objects' measures are posterior means (EAP) given the fitted severities, thresholds, mu and sigma, with the
posterior SD (PSD) from the same quadrature.  They are shrunk towards mu as far as the object's reads leave it
uncertain -- the shrinkage the default linear model's decisions use -- where FACETS' JMLE measures are not (and
are undefined for an object whose reads are all in an end category).  The standard error adds what the
structural estimates' own uncertainty does to an object (law of total variance, delta method):

    Var(theta_o) = PSD_o^2 + g_o' Cov(phi) g_o,    g_o = d EAP_o / d phi = Cov_post(theta, U_o),

with U_o the object's complete-data score at each node (:func:`.estimate.object_blocks`) -- the same
covariance the fit's Hessian is built from.  g_o is sparse: the object's own readers, the thresholds, mu and
sigma.  Severities' and thresholds' standard errors come from Cov(phi), the inverse observed information.

Fair average (FACETS' "Fair-M average"): the score an object would get on average from an assessor of average
severity (severity 0, the gauge's zero), sum_k y_k P_k(theta_o), on the rubric's own scale (the category
scores y); with thresholds per assessor the average of the assessors' expected scores at severity 0 (weighted as
the gauge).  An assessor's fair average is their expected score for an object of the panel's mean measure mu.
Intervals of fair averages are the measures' intervals carried through this increasing function.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .estimate import MarginalFit, object_blocks
from .likelihood import log_probabilities, thresholds_from_intercepts

__all__ = ["ObjectMeasures", "object_measures", "FairScale", "fair_scale", "threshold_table", "category_measures"]


@dataclass(frozen=True)
class ObjectMeasures:
    """Each object's EAP, PSD, standard error and the sensitivity of its EAP to the structural parameters."""

    measure: np.ndarray
    psd: np.ndarray
    se: np.ndarray
    sensitivity: sp.csr_matrix  # objects x parameters: d EAP / d phi


def object_measures(fit: MarginalFit) -> ObjectMeasures:
    """EAPs with standard errors that include the structural parameters' uncertainty (module docstring)."""
    panel, state, cov = fit.panel, fit.state, fit.covariance
    O, P = panel.n_objects, fit.layout.size
    extra = np.zeros(O)
    rows, cols, vals = [], [], []
    for objs, idx, U in object_blocks(panel, fit.phi, state):
        w = state.posterior[objs] * (state.theta[objs] - state.mean[objs][:, None])
        g = np.einsum("oq,oqd->od", w, U)
        g = np.where(idx >= 0, g, 0.0)
        safe = np.maximum(idx, 0)
        extra[objs] = np.einsum("od,ode,oe->o", g, cov[safe[:, :, None], safe[:, None, :]], g)
        keep = idx >= 0
        rows.append(np.broadcast_to(objs[:, None], idx.shape)[keep])
        cols.append(idx[keep])
        vals.append(g[keep])
    sensitivity = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(O, P))
    se = np.sqrt(state.sd**2 + np.maximum(extra, 0.0))
    return ObjectMeasures(state.mean.copy(), state.sd.copy(), se, sensitivity)


@dataclass(frozen=True)
class FairScale:
    """The fair average as a function of the measure, tabulated (increasing; interpolated both ways)."""

    grid: np.ndarray
    score: np.ndarray

    def __call__(self, measure) -> np.ndarray:
        return np.interp(np.asarray(measure, dtype=float), self.grid, self.score)

    def measure_of(self, score) -> np.ndarray:
        """The measure whose fair average is *score* (clipped to the grid's ends outside the attainable range)."""
        return np.interp(np.asarray(score, dtype=float), self.score, self.grid)


#: The fair-average table's half-width (logits around the measures) and points: linear interpolation between
#: points 0.02 logits apart moves a fair average by less than 1e-4 of its range.
FAIR_MARGIN, FAIR_STEP = 12.0, 0.02


def fair_scale(fit: MarginalFit, values: np.ndarray, weights: np.ndarray, lo: float, hi: float) -> FairScale:
    """The expected rubric score at severity 0 over the measures lo..hi (plus a margin): one structure (rating
    scale) or the gauge-weighted average of the assessors' (partial credit)."""
    layout = fit.layout
    c = layout.intercepts(fit.phi)
    grid = np.arange(lo - FAIR_MARGIN, hi + FAIR_MARGIN + FAIR_STEP, FAIR_STEP)
    if c.shape[0] == 1:
        score = np.exp(log_probabilities(grid, c[0])) @ values
    else:
        share = np.bincount(layout.group, weights=weights, minlength=c.shape[0])
        score = np.zeros(grid.size)
        for g in np.flatnonzero(share > 0):
            score += share[g] * (np.exp(log_probabilities(grid, c[g])) @ values)
        score /= share.sum()
    score = np.maximum.accumulate(score)  # increasing to rounding (interpolation needs it so)
    return FairScale(grid, score)


def threshold_table(fit: MarginalFit) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(thresholds, their SEs, the SEs of successive differences) per structure: structures x (K - 1) arrays,
    NaN where a step touches a category the structure did not use.

    tau_k = c_{k-1} - c_k is a fixed linear map of phi, so its covariance is T Cov T'."""
    layout = fit.layout
    G, K = layout.used.shape
    c = layout.intercepts(fit.phi)
    tau = np.full((G, K - 1), np.nan)
    se = np.full((G, K - 1), np.nan)
    gap_se = np.full((G, K - 1), np.nan)
    for g in range(G):
        both = layout.used[g, :-1] & layout.used[g, 1:]
        T = np.zeros((K - 1, layout.size))
        for k in range(K - 1):
            for place, sign in ((k, 1.0), (k + 1, -1.0)):
                if layout.c_index[g, place] >= 0:
                    T[k, layout.c_index[g, place]] += sign
        cov = T @ fit.covariance @ T.T
        tau[g, both] = thresholds_from_intercepts(c[g])[both]
        se[g, both] = np.sqrt(np.maximum(np.diag(cov)[both], 0.0))
        diff_var = np.diag(cov)[1:] + np.diag(cov)[:-1] - 2 * np.diag(cov, 1)
        ok = both[1:] & both[:-1]
        gap_se[g, 1:][ok] = np.sqrt(np.maximum(diff_var[ok], 0.0))
    return tau, se, gap_se


def category_measures(intercepts: np.ndarray) -> np.ndarray:
    """Where on the scale (measure less severity) each category is expected: the point whose expected place is the
    category's (k), and 0.25 in from the ends for the lowest and highest (Winsteps' "category measure")."""
    K = intercepts.size
    grid = np.linspace(-40, 40, 16001)
    expected = np.exp(log_probabilities(grid, intercepts)) @ np.arange(K, dtype=float)
    targets = np.arange(K, dtype=float)
    targets[0], targets[-1] = 0.25, K - 1.25
    return np.interp(targets, np.maximum.accumulate(expected), grid)
