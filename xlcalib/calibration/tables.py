"""The result's tables and figures from a fitted panel: values, biases and residuals with their standard errors
and intervals, and the Diagnostics' figures.

Why apart from :mod:`.fit`: :func:`~.fit.calibrate` reads as its steps (check, components, fit, uncertainty,
result); what each step's numbers become in a table -- which columns, in which gauge, with which words -- is
here, once, for every model.  Each part is one connected component (or the whole panel, for a model that links
groups): its posterior gives the standard errors (:mod:`.system.posterior`), its graph the design diagnostics
(mu2, :mod:`.system.robustness`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .models import CalibrationModel, ComponentFit
from .panel.data import PanelData
from .system.graph import Design, graph_solver, mu2
from .system.posterior import Posterior, ReducedCovariance, quantile
from .system.robustness import BOUND_MEANING, bounds, rms_bound

__all__ = ["Part", "Uncertainty", "part_uncertainty", "result_tables", "diagnostics_figures"]


@dataclass
class Part:
    """One connected component: where its evaluations, assessors and objects are, its design and fit."""

    evaluations: np.ndarray  # boolean mask over the panel's evaluations
    assessors: np.ndarray  # indices into the panel's assessors
    objects: np.ndarray  # indices into the panel's objects
    design: Design
    fit: ComponentFit
    connected: bool = True  # False: a model that links groups fitted unconnected groups together
    #: True: the design fitted pools every reader into one ("any reviewer"; :attr:`Design.pooled`), so ``assessors``
    #: are the panel's readers it stands for and no bias of theirs is fitted
    pooled: bool = False

    @property
    def n_evaluations(self) -> int:
        return int(self.evaluations.sum())


@dataclass
class Uncertainty:
    """One part's posterior, its standard-error pieces and its design diagnostics (not error bars)."""

    posterior: Posterior
    mu2: float
    value_bound: np.ndarray
    bias_bound: np.ndarray
    value_var: np.ndarray
    bias_var: np.ndarray
    rms: float
    trace_method: str


def part_uncertainty(part: Part, w: float, gauge: str, estimated: bool) -> Uncertainty:
    """The posterior of one part at noise scale *w*, its variances, mu2 and the robustness diagnostics.

    mu2 and the robustness bounds are properties of the graph, so they always come from the fixed-effects
    system (the fixed fit's own solver when it made one); an unconnected graph has mu2 = 0 and no bound holds.
    """
    design, fit = part.design, part.fit
    solver = graph_solver(design) if design.n_assessors > 1 and part.connected else None
    post = Posterior(design, fit.covariance, w, fit.lam, gauge, spread=fit.spread)
    value_var, bias_var = post.variances()
    # the fixed fit's SEs formed the inverse of the very system mu2 needs: Lanczos reads it instead of the factor
    inverse = (fit.covariance.formed_inverse() if isinstance(fit.covariance, ReducedCovariance)
               and fit.covariance.solver is solver else None)
    m = 0.0 if not part.connected else float("nan") if solver is None else mu2(solver, inverse)
    n = part.n_evaluations
    value_bound, bias_bound, factor = bounds(design, m, n, w, gauge)
    rms, trace_method = rms_bound(design, solver, post, factor, n, w, gauge, estimated)
    return Uncertainty(post, m, value_bound, bias_bound, value_var, bias_var, rms, trace_method)


def _spread(parts: list[Part], pieces: list[Uncertainty], key: str, size: int, which: str) -> np.ndarray:
    """One per-part attribute of the uncertainty, put at each part's assessors ("a") or objects ("o")."""
    out = np.empty(size)
    for part, piece in zip(parts, pieces):
        out[part.assessors if which == "a" else part.objects] = getattr(piece, key)
    return out


def _totals(parts: list[Part], attr: str, size: int, which: str) -> np.ndarray:
    """Total confidences (C_o or C'_a) of each part's design, put at its objects or assessors."""
    out = np.empty(size)
    for part in parts:
        out[part.assessors if which == "a" else part.objects] = getattr(part.design, attr)
    return out


def result_tables(data: PanelData, parts: list[Part], pieces: list[Uncertainty], v, b, w: float, t_df,
                  interval_level: float, anomaly_threshold: float, per_component: bool, comps):
    """The values, biases and residuals tables (``std_residual = sqrt(c) * residual / sqrt(w)``)."""
    A, O = data.n_assessors, data.n_objects
    q = quantile(0.5 + interval_level / 2, t_df)
    v_se = np.sqrt(_spread(parts, pieces, "value_var", O, "o"))
    b_se = np.sqrt(_spread(parts, pieces, "bias_var", A, "a"))
    fitted = v[data.oi] + b[data.ai]
    resid = data.scores - fitted
    std_res = np.sqrt(data.confidences) * resid / np.sqrt(w)
    n_o = np.bincount(data.oi, minlength=O)
    values = pd.DataFrame(
        {"value": v, "se": v_se, "lower": v - q * v_se, "upper": v + q * v_se,
         "robustness_bound": _spread(parts, pieces, "value_bound", O, "o"),
         "total_confidence": _totals(parts, "C_o", O, "o"), "n": n_o,
         "raw_mean": np.bincount(data.oi, weights=data.scores, minlength=O) / n_o},
        index=pd.Index(data.object_names.to_numpy(), name="object"),
    )
    if any(part.pooled for part in parts):
        biases = _unestimated_biases(data)
    else:
        biases = pd.DataFrame(
            {"bias": b, "se": b_se, "lower": b - q * b_se, "upper": b + q * b_se,
             "robustness_bound": _spread(parts, pieces, "bias_bound", A, "a"),
             "total_confidence": _totals(parts, "C_a", A, "a"), "n": np.bincount(data.ai, minlength=A)},
            index=pd.Index(data.assessor_names.to_numpy(), name="assessor"),
        )
    residuals = pd.DataFrame(
        {"assessor": data.assessor_labels, "object": data.object_labels, "score": data.scores, "fitted": fitted,
         "residual": resid, "std_residual": std_res, "anomalous": np.abs(std_res) > anomaly_threshold}
    )
    comp_of_a, comp_of_o = comps
    if per_component:
        values["component"] = comp_of_o + 1
        biases["component"] = comp_of_a + 1
        residuals["component"] = comp_of_a[data.ai] + 1
    elif comp_of_a.max(initial=0) > 0 and not any(part.pooled for part in parts):
        # unconnected groups fitted together: say which group each row is in (a pooled fit has no such groups: its
        # readers' terms are all in the noise)
        values["group"] = comp_of_o + 1
        biases["group"] = comp_of_a + 1
    return values, biases, residuals


def _unestimated_biases(data: PanelData) -> pd.DataFrame:
    """The biases table of a pooled fit: every reader listed with their reads, no bias (not estimable -- each
    reader's stringency is part of the noise of their reads, which every value's +- includes)."""
    A = data.n_assessors
    nan = np.full(A, np.nan)
    return pd.DataFrame({"bias": nan, "se": nan, "lower": nan, "upper": nan, "robustness_bound": nan,
                         "total_confidence": np.bincount(data.ai, weights=data.confidences, minlength=A),
                         "n": np.bincount(data.ai, minlength=A)},
                        index=pd.Index(data.assessor_names.to_numpy(), name="assessor"))


def diagnostics_figures(data: PanelData, parts: list[Part], pieces: list[Uncertainty], *, n_comp: int, R: float,
                        dof: int, w: float, t_df, model: CalibrationModel, gauge: str, interval_level: float,
                        anomaly_threshold: float) -> dict[str, Any]:
    """The Diagnostics figures and their words (their meanings: :mod:`.meanings`)."""
    single = len(parts) == 1
    one = (lambda xs: xs[0] if single else xs)  # noqa: E731  - per component: a list when several
    face = data.face_value
    check, check_p = model.noise_check(R, dof, face)
    stats: dict[str, Any] = {
        "n_evaluations": data.n_evaluations, "n_assessors": data.n_assessors, "n_objects": data.n_objects,
        "n_components": n_comp, "mu2": one([p.mu2 for p in pieces]), "residual": R,
        "posterior_variance": w, "w_estimated": R / dof if dof > 0 else float("nan"),
        "noise_scale": "declared SDs taken at face value (w = 1)" if face else "estimated from the residual scatter",
        "noise_check": check, "noise_check_p": check_p, "model": model.NAME, "interval_level": interval_level,
        "interval_kind": "t" if t_df else "normal", "df": int(t_df) if t_df else dof,
        "se_method": one([p.posterior.method for p in pieces]), "rms_bound": one([p.rms for p in pieces]),
        "gauge": gauge,
        "gauge_meaning": "sum of C'_a b_a = 0 (confidence-weighted mean bias zero)" if gauge == "weighted"
        else "sum of b_a = 0 (plain mean bias zero)",
        "uncertainty_kind": data.kind, "levels": data.levels.describe() if data.levels is not None else "",
        "anomaly_threshold": anomaly_threshold,
        "bound_meaning": BOUND_MEANING + ("" if gauge == "weighted" else
                                          "; simple-gauge bounds derived for validity (not the paper's /sqrt 2)"),
    }
    stats.update(model.extra_stats([p.fit for p in parts], one))
    if not face:
        stats["trace_method"] = one([p.trace_method for p in pieces])
    return stats
