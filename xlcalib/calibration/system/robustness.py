"""Worst-case robustness bounds from the graph's spectrum: a design diagnostic, not an error bar.

MacKay et al. (2017), weighted gauge (sum C'_a b_a = 0), with ``mu2`` the
second-smallest eigenvalue of ``I - C'^{-1/2} W C'^{-1/2}``:

* SD input: ``|dv_o| <= sqrt(2N / (mu2 C_o))``, ``|db_a| <= sqrt(2N / (mu2 C'_a))``,
  RMS bound ``1 / sqrt(mu2 C / N)``;
* confidence input: ``w = R / (N - A - O + n_components)`` (unbiased residual
  variance of the weighted fit), bounds multiplied by ``sqrt(w)``, RMS bound
  ``sqrt(w / (2C) * sum_j 1/mu_j)`` over the non-zero eigenvalues of the *full*
  normalised Laplacian of the assessor-object graph.

These are worst-case bounds for a perturbation of the scores of size
``sum c_ao ds_ao**2 <= N w`` — the size the model expects noise to have.

Simple gauge (sum b_a = 0): the paper divides the weighted measures by
sqrt(2), which is not always a valid bound, so xlcalib departs from it here:
the simple-gauge solution is the weighted one shifted by ``m = mean_a(b_a)``;
``dv_o + dm`` is a linear functional of the weighted result, and its exact
dual norm in the paper's result metric gives the valid bound

    |dv_o| <= sqrt(1/C_o + sum_a 1/(A^2 C'_a)) * sqrt(2/mu2) * sqrt(N w)
    |db_a| <= sqrt((1-1/A)^2/C'_a + sum_{a' != a} 1/(A^2 C'_a')) * sqrt(2/mu2) * sqrt(N w)

and the RMS figure adds the worst gauge shift (triangle inequality).
"""
from __future__ import annotations

import numpy as np

from .graph import Design, ReducedSolver, sum_inverse_reduced
from .posterior import Posterior

__all__ = ["BOUND_MEANING", "bounds", "rms_bound"]

BOUND_MEANING = ("worst-case robustness bound (design diagnostic, not an error bar): largest change of a "
                 "value/bias (score units) caused by score errors of total size sum c ds^2 <= N w")


def bounds(design: Design, mu2: float, n: int, w: float, gauge: str):
    """Per-object and per-assessor robustness bounds and the squared operator norm 2/mu2 (module docstring)."""
    if design.n_assessors == 1:
        # The map s -> v is the identity on this star: |dv_o| <= sqrt(N w / C_o) exactly, b fixed at 0.
        return np.sqrt(n * w / design.C_o), np.zeros(1), 1.0
    if not mu2 > 0:  # groups that share no object: no bound holds between them
        return np.full(design.n_objects, np.inf), np.full(design.n_assessors, np.inf), np.inf
    factor = 2.0 / mu2  # squared operator norm of L^-1 K in the paper's metrics
    if gauge == "weighted":
        return np.sqrt(factor * n * w / design.C_o), np.sqrt(factor * n * w / design.C_a), factor
    A = design.n_assessors
    inv_ca = 1.0 / design.C_a
    shift_sq = inv_ca.sum() / A**2  # dual norm^2 of the gauge shift m = mean(db)
    value_dual = 1.0 / design.C_o + shift_sq
    bias_dual = (1 - 1.0 / A) ** 2 * inv_ca + (inv_ca.sum() - inv_ca) / A**2
    return np.sqrt(factor * n * w * value_dual), np.sqrt(factor * n * w * bias_dual), factor


def rms_bound(design: Design, solver: ReducedSolver | None, posterior: Posterior, factor: float, n: int, w: float,
              gauge: str, estimated: bool) -> tuple[float, str]:
    """The confidence-weighted RMS bound over values and biases, and how its spectral sum was computed."""
    method = ""
    if not np.isfinite(factor):
        return float("inf"), "not defined: the panel's groups share no object"
    if estimated:
        if solver is None:
            inv_red, method = 0.0, "exact (one assessor)"
        elif (from_inverse := posterior.trace_from_inverse()) is not None:
            inv_red, method = from_inverse, "exact (inverse of the reduced system)"  # the SEs' inverse, for free
        else:
            inv_red, method = sum_inverse_reduced(solver)
        A, O = design.n_assessors, design.n_objects
        sum_inv_full = 2.0 * inv_red + 0.5 + (O - A)  # the full normalised Laplacian's spectrum from the reduced one
        rms = np.sqrt(w / (2 * design.C) * sum_inv_full)
    else:
        rms = np.sqrt(factor * n * w / (2 * design.C))  # = 1/sqrt(mu2 C / N) for the weighted gauge
    if gauge == "simple" and solver is not None:
        rms = rms + np.sqrt(factor * n * w * (1.0 / design.C_a).sum() / design.n_assessors**2)
    return float(rms), method
