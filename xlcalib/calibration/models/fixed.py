"""Fixed effects: the weighted least-squares fit of MacKay et al. (2017).

Minimises ``sum c_ao (s_ao - v_o - b_a)^2`` (eq. 4): objects are eliminated
(eq. 13), the reduced assessor system (eq. 15) is solved for the biases in the
weighted gauge ``sum C'_a b_a = 0``, and values follow from eq. 13.  The noise
scale is ``w = 1`` for SDs taken at face value, else the unbiased residual
variance ``R / (N - A - O + components)`` of the whole panel.
"""
from __future__ import annotations

import numpy as np
from scipy.special import chdtr, chdtrc

from ...errors import InputError
from ..system.graph import Design, graph_solver
from ..system.posterior import ReducedCovariance
from .base import ComponentFit, refuse_latent

NAME = "fixed"
ALIASES = ()
#: Groups that share no object cannot be compared by this model: they are refused, or fitted apart.
LINKS_GROUPS = False
#: No limit: above graph.DENSE_ASSESSOR_LIMIT assessors the reduced system is solved iteratively.
MAX_ASSESSORS = None
#: Rankings and P(above the line) come from this model's own posterior.
DECISIONS_BY = None
#: Scores at the ends of a declared scale are fitted as given.
CENSORED_READS = False
#: Each assessor keeps a term of its own (the fit is not pooled).
POOLED = False
DESCRIPTION = ("fixed effects (MacKay et al. 2017): every bias estimated freely from shared objects -- needs a "
               "well-linked panel")


def fit_component(design: Design, s: np.ndarray, gauge: str, face_value: bool, latent=None) -> ComponentFit:
    """Values and biases of one connected component in the gauge asked for, and the reduced solver.

    The reduced system's solution satisfies the weighted gauge ``C'.b = 0``; the simple gauge (plain mean bias
    zero) moves the biases' mean into the values.  The solver is kept on the design: the graph's mu2 and the
    robustness bounds read the same factor.
    """
    refuse_latent(latent, NAME)
    c = design.c
    V = np.bincount(design.oi, weights=c * s, minlength=design.n_objects)
    B = np.bincount(design.ai, weights=c * s, minlength=design.n_assessors)
    if design.n_assessors == 1:
        b, solver = np.zeros(1), None
    else:
        solver = graph_solver(design, keep=True)
        b = solver.solve(B - design.Cm @ (V / design.C_o))
        b -= (design.C_a @ b) / design.C  # remove round-off drift from the gauge
    v = (V - design.Cm.T @ b) / design.C_o
    if gauge == "simple":
        shift = b.mean()
        b -= shift
        v += shift
    return ComponentFit(v, b, ReducedCovariance(solver) if solver is not None else None)


def extra_stats(fits, one) -> dict:
    """This model adds no figures to the Diagnostics."""
    return {}


def noise_scales(fits, residual: float, counts: tuple[int, int, int, int], face_value: bool,
                 kind: str) -> tuple[list[float], int | None]:
    """One noise scale for the panel: 1 at face value, else R/dof with t intervals on dof degrees of freedom.

    *counts* = (N, A, O, components); dof = N - A - O + components.
    """
    N, A, O, n_comp = counts
    dof = N - A - O + n_comp
    if face_value:
        return [1.0] * len(fits), None
    if dof <= 0:
        what = "confidence levels (relative)" if kind == "level" else "confidences (relative weights)"
        raise InputError(
            f"{what} need more evaluations than parameters to estimate the noise scale: "
            f"N - A - O + components = {N} - {A} - {O} + {n_comp} = {dof}; give SDs instead or add evaluations"
        )
    return [residual / dof] * len(fits), dof


def noise_check(R: float, dof: int, face_value: bool) -> tuple[str, float]:
    """Declared SDs against the residual scatter: chi-square test of R on its degrees of freedom (with SDs taken
    at face value, R is w chi-square on N - A - O + components under the model, w = 1).

    Returns (plain-words verdict, two-sided p-value); ("", nan) when the noise scale is estimated.
    """
    if not face_value:
        return "", float("nan")
    if dof <= 0:
        return "the panel has no spare evaluations to check the declared SDs against", float("nan")
    if not R > 0:
        return "the scores fit the model exactly: no residual scatter to check the declared SDs against", float("nan")
    ratio = float(np.sqrt(R / dof))
    p = float(min(1.0, 2 * min(chdtrc(dof, R), chdtr(dof, R))))
    p_text = f"p = {p:.2g}" if p > 0 else "p < 1e-300"  # the tail underflows double precision: never "p = 0"
    base = f"(chi-square {R:.4g} on {dof} degrees of freedom, {p_text})"
    if p < 0.01 and ratio > 1.0:
        return (f"the scores scatter about {ratio:.1f}x more than the declared SDs allow {base}; the error bars use the "
                "declared SDs, so they are too narrow -- consider relative confidence levels, which estimate the "
                "scatter", p)
    if p < 0.01 and ratio < 1.0:
        return (f"the scores scatter about {1 / ratio:.1f}x less than the declared SDs suggest {base}; the error bars "
                "use the declared SDs, so they are wider than the data need", p)
    return f"the declared SDs agree with the scores' scatter {base}", p
