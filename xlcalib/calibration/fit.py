"""Calibration with confidence: s_ao = v_o + b_a + sigma_ao * eta_ao (MacKay et al. 2017).

:func:`calibrate` reads as its steps: check the panel (:mod:`.panel.data`), find its
connected components (:mod:`.system.graph`), fit each with the chosen model
(:mod:`.models`), take the uncertainty from the model's posterior
(:mod:`.system.posterior`) and the design diagnostics from the graph's spectrum
(:mod:`.system.robustness`), and assemble the :class:`~.result.CalibrationResult`.

Uncertainty (what the user-facing +- is): the sampling covariance of the
weighted least-squares fit, ``w L^+`` restricted to the gauge, computed
from the reduced system (:mod:`xlcalib.calibration.system.posterior` derives it):
``Var(v_o) = w/C_o + u_o' Cov(b) u_o`` with ``u_o = c_.o/C_o`` and
``Cov(b) = w (M_reg^-1 - 1 1'/C)`` in the weighted gauge.  Intervals at
``interval_level`` are normal when SDs are taken at face value (w = 1) and
Student t with ``N - A - O + components`` degrees of freedom when w is
estimated.  The robustness bounds of the paper stay as
``robustness_bound``: a worst-case design diagnostic, not an error bar.

Duplicate (assessor, object) pairs are rejected (naming both rows): a
repeated evaluation is usually a data-entry error, and averaging it away
would hide that.  ``std_residual = sqrt(c) * residual / sqrt(w)``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..cells import real_argument
from ..errors import InputError
from .panel.censoring import check_on_scale, declared_scale, scale_end_words, scale_ends
from .panel.data import PanelData, panel_data
from .system.graph import Design, ReducedSolver, components, mu2
from .panel.levels import DEFAULT_LEVEL_RATIO
from .models import DEFAULT_MODEL, MODELS, ComponentFit, model_name
from .models.fixed import noise_check
from .system.posterior import ComponentPosterior, Posterior, ReducedCovariance, quantile
from .panel.resolution import effective_confidences, rounding_variance, score_step
from .result import CalibrationResult, DecisionBasis
from .system.robustness import BOUND_MEANING, bounds, rms_bound
from .models.scale_use import apply_to_result, fit_gains, rescaled, scale_use_choice

__all__ = ["calibrate"]


@dataclass
class _Part:
    """One connected component: where its evaluations, assessors and objects are, its design and fit."""

    evaluations: np.ndarray  # boolean mask over the panel's evaluations
    assessors: np.ndarray  # indices into the panel's assessors
    objects: np.ndarray  # indices into the panel's objects
    design: Design
    fit: ComponentFit
    connected: bool = True  # False: a model that links groups fitted unconnected groups together


def _check_options(gauge, model, anomaly_threshold, interval_level) -> tuple[str, float, float]:
    if gauge not in ("weighted", "simple"):
        raise InputError(f"gauge must be 'weighted' or 'simple', not {gauge!r}")
    model = model_name(model)
    anomaly_threshold = real_argument(anomaly_threshold, "anomaly_threshold", low=0, low_open=True)
    interval_level = real_argument(interval_level, "interval_level", low=0.5, high=1.0, high_open=True)
    return model, anomaly_threshold, interval_level


def _refuse_unconnected(n_comp: int, comp_of_a: np.ndarray, data: PanelData) -> None:
    comp_a = comp_of_a
    shown = 5  # a message stays one readable line however many groups there are
    names = data.assessor_names
    groups = [", ".join(map(str, names[comp_a == k][:8])) + (" ..." if (comp_a == k).sum() > 8 else "")
              for k in range(min(n_comp, shown))]
    listing = "; ".join(f"component {k + 1}: {g}" for k, g in enumerate(groups))
    if n_comp > shown:
        listing += f"; and {n_comp - shown} more groups"
    raise InputError(
        f"the panel is not connected: {n_comp} groups of assessors share no objects, so their standards cannot be "
        f"compared ({listing}). Add evaluations that link the groups, use model='{DEFAULT_MODEL}' (which compares "
        f"groups by assuming each is on average as strict as the panel), or per_component=True."
    )


def _refuse_no_spare_reads(data: PanelData, n_comp: int) -> None:
    """Relative confidences on a panel the fixed effects fit exactly: the noise of a read and the assessors'
    stringency cannot be told apart, and any model would report a noise of (nearly) zero."""
    N, A, O = data.n_evaluations, data.n_assessors, data.n_objects
    what = "confidence levels (relative)" if data.kind == "level" else "confidences (relative weights)"
    raise InputError(
        f"{what} need spare evaluations to estimate the noise of a read: N - A - O + groups = {N} - {A} - {O} + "
        f"{n_comp} = {N - A - O + n_comp}, so the scores can be fitted exactly and the noise cannot be told apart from "
        "the assessors' stringency. Give SDs in score units (taken at face value) or add evaluations"
    )


def _fit_parts(data: PanelData, comp_of_a, comp_of_o, n_comp: int, model, gauge: str,
               per_component: bool) -> list[_Part]:
    """Each component's design (local indices) and its model fit; the whole panel as one part for a model
    that links unconnected groups (unless each group is asked for on its own scale)."""
    A, O = data.n_assessors, data.n_objects
    if model.LINKS_GROUPS and not per_component:
        design = Design(data.ai, data.oi, data.confidences, A, O)
        design.shared["components"] = (n_comp, comp_of_a, comp_of_o)  # found already: the moments need them too
        fit = model.fit_component(design, data.scores, gauge, data.face_value)
        everything = np.ones(data.n_evaluations, dtype=bool)
        return [_Part(everything, np.arange(A), np.arange(O), design, fit, connected=n_comp == 1)]
    comp_of_e = comp_of_a[data.ai]
    parts = []
    for k in range(n_comp):
        e_mask = comp_of_e == k
        a_idx = np.flatnonzero(comp_of_a == k)
        o_idx = np.flatnonzero(comp_of_o == k)
        a_local = np.full(A, -1, dtype=np.intp)
        a_local[a_idx] = np.arange(a_idx.size)
        o_local = np.full(O, -1, dtype=np.intp)
        o_local[o_idx] = np.arange(o_idx.size)
        design = Design(a_local[data.ai[e_mask]], o_local[data.oi[e_mask]], data.confidences[e_mask],
                        a_idx.size, o_idx.size)
        fit = model.fit_component(design, data.scores[e_mask], gauge, data.face_value)
        parts.append(_Part(e_mask, a_idx, o_idx, design, fit))
    return parts


def _gather(parts: list[_Part], data: PanelData) -> tuple[np.ndarray, np.ndarray]:
    v, b = np.empty(data.n_objects), np.empty(data.n_assessors)
    for part in parts:
        v[part.objects], b[part.assessors] = part.fit.values, part.fit.biases
    return v, b


def _uncertainty(parts, weights, N_of, gauge, estimated):
    """Per component: the posterior, SE pieces, mu2 and the robustness diagnostics (design, not error bars)."""
    out = []
    for part, w in zip(parts, weights):
        design, fit = part.design, part.fit
        # mu2 and the robustness bounds are properties of the graph: always from the fixed-effects system
        # (an unconnected graph has mu2 = 0: no bound holds)
        fixed_solver = (fit.covariance.solver if isinstance(fit.covariance, ReducedCovariance) and fit.covariance.shift
                        else design.shared.get("fixed_solver") or (ReducedSolver(design) if design.n_assessors > 1
                                                                     and part.connected else None))
        post = Posterior(design, fit.covariance, w, fit.lam, gauge)
        value_var, bias_var = post.variances()
        # the fixed fit's SEs formed the inverse of the very system mu2 needs: Lanczos reads it instead of the factor
        inverse = (fit.covariance.formed_inverse() if isinstance(fit.covariance, ReducedCovariance)
                   and fit.covariance.solver is fixed_solver else None)
        m = (0.0 if not part.connected else float("nan") if fixed_solver is None else mu2(fixed_solver, inverse))
        n = N_of(part)
        value_bound, bias_bound, factor = bounds(design, m, n, w, gauge)
        rms, trace_method = rms_bound(design, fixed_solver, post, factor, n, w, gauge, estimated)
        out.append(dict(posterior=post, mu2=m, value_bound=value_bound, bias_bound=bias_bound,
                        value_var=value_var, bias_var=bias_var, rms=rms, trace_method=trace_method))
    return out


def _spread(parts, pieces, key: str, size: int, which: str) -> np.ndarray:
    out = np.empty(size)
    for part, piece in zip(parts, pieces):
        out[part.assessors if which == "a" else part.objects] = piece[key]
    return out


def _tables(data, parts, pieces, v, b, fitted, w, t_df, interval_level, anomaly_threshold, per_component, comps):
    """The values, biases and residuals tables."""
    A, O = data.n_assessors, data.n_objects
    q = quantile(0.5 + interval_level / 2, t_df)
    v_se = np.sqrt(_spread(parts, pieces, "value_var", O, "o"))
    b_se = np.sqrt(_spread(parts, pieces, "bias_var", A, "a"))
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
    elif comp_of_a.max(initial=0) > 0:  # unconnected groups fitted together: say which group each row is in
        values["group"] = comp_of_o + 1
        biases["group"] = comp_of_a + 1
    return values, biases, residuals


def _totals(parts, attr: str, size: int, which: str) -> np.ndarray:
    out = np.empty(size)
    for part in parts:
        out[part.assessors if which == "a" else part.objects] = getattr(part.design, attr)
    return out


def _stats(data, parts, pieces, *, n_comp, R, dof, w, t_df, model, gauge, interval_level,
           anomaly_threshold) -> dict[str, Any]:
    """The Diagnostics figures and their words."""
    single = len(parts) == 1
    one = (lambda xs: xs[0] if single else xs)  # noqa: E731  - per component: a list when several
    face = data.face_value
    check, check_p = noise_check(R, dof) if face and model == "fixed" else ("", float("nan"))
    stats: dict[str, Any] = {
        "n_evaluations": data.n_evaluations, "n_assessors": data.n_assessors, "n_objects": data.n_objects,
        "n_components": n_comp, "mu2": one([p["mu2"] for p in pieces]), "residual": R,
        "posterior_variance": w, "w_estimated": R / dof if dof > 0 else float("nan"),
        "noise_scale": "declared SDs taken at face value (w = 1)" if face else "estimated from the residual scatter",
        "noise_check": check, "noise_check_p": check_p, "model": model, "interval_level": interval_level,
        "interval_kind": "t" if t_df else "normal", "df": int(t_df) if t_df else dof,
        "se_method": one([p["posterior"].method for p in pieces]), "rms_bound": one([p["rms"] for p in pieces]),
        "gauge": gauge,
        "gauge_meaning": "sum of C'_a b_a = 0 (confidence-weighted mean bias zero)" if gauge == "weighted"
        else "sum of b_a = 0 (plain mean bias zero)",
        "uncertainty_kind": data.kind, "levels": data.levels.describe() if data.levels is not None else "",
        "anomaly_threshold": anomaly_threshold,
        "bound_meaning": BOUND_MEANING + ("" if gauge == "weighted" else
                                          "; simple-gauge bounds derived for validity (not the paper's /sqrt 2)"),
    }
    stats.update(MODELS[model].extra_stats([p.fit for p in parts], one))
    if not face:
        stats["trace_method"] = one([p["trace_method"] for p in pieces])
    return stats


#: The effective confidences' fixed point (:func:`_fit_with_rounding`) stops when w moves by less than this share.
ROUNDING_TOLERANCE = 5e-3  # c' then within about 0.3% of its fixed point: far inside the posterior's own error
#: ... or after this many fits.
ROUNDING_FITS = 12
#: The censored fit (:func:`_fit_censored`) stops when w moves by less than :data:`ROUNDING_TOLERANCE` of itself
#: and the censored reads' expected scores by less than this many of their SDs (root mean square) ...
CENSORED_TOLERANCE = 1e-2
#: ... or after this many fits (each EM step is one fit).
CENSORED_FITS = 12


def _fitter(model, design: Design, data: PanelData, gauge: str, rounding: float):
    """fit_at(w, scores, latent) -> (fit, design with the confidences it used, w, t df): *model* fitted with each
    read's variance ``w / c + rounding`` (w ignored without rounding, and 1 with SDs at face value)."""
    counts = (data.n_evaluations, design.n_assessors, design.n_objects, 1)

    def fit_at(w: float | None, scores: np.ndarray | None = None, latent: np.ndarray | None = None):
        w = None if rounding <= 0 else 1.0 if data.face_value else w
        used = design if w is None else Design(design.ai, design.oi, effective_confidences(design.c, w, rounding),
                                               design.n_assessors, design.n_objects)
        extra = {} if latent is None else {"latent": latent}
        fit = model.fit_component(used, data.scores if scores is None else scores, gauge, data.face_value, **extra)
        weights, t_df = model.noise_scales([fit], 0.0, counts, data.face_value, data.kind)
        return fit, used, float(weights[0]), t_df

    return fit_at


def _fit_with_rounding(model, design: Design, data: PanelData, gauge: str, rounding: float, start: float):
    """(fit, design with the confidences it used, w, t df) of *model* with each read's variance ``w / c + rounding``
    (the scores' grid, :mod:`.panel.resolution`).

    With declared SDs (w = 1) one fit with ``c' = 1 / (1/c + rounding)``.  With w estimated, ``c'`` depends on
    w and the fitted w on ``c'``: the fixed point ``g(w) = w`` is found by secant steps on ``g(w) - w``
    from *start* -- typically two or three fits.
    """
    fit_at = _fitter(model, design, data, gauge, rounding)
    if rounding <= 0 or data.face_value:
        return fit_at(None)
    x, previous = start, None
    for _ in range(ROUNDING_FITS):
        out = fit_at(x)
        gap = out[2] - x
        if abs(gap) <= ROUNDING_TOLERANCE * x:
            break
        step = out[2]  # a plain fixed-point step, or the secant through the last two gaps when it stays positive
        if previous is not None and gap != previous[1]:
            secant = x - gap * (x - previous[0]) / (gap - previous[1])
            step = secant if secant > 0 else step
        previous, x = (x, gap), step
    return out


def _fit_censored(model, design: Design, data: PanelData, gauge: str, rounding: float, w_stated: float, scale):
    """:func:`_fit_with_rounding` with the scores at the ends of the declared *scale* read as censored
    (:mod:`.panel.censoring`), by EM: after each fit every censored read is replaced by its expected score beyond
    the end under that fit, with the variance it keeps, and the next fit takes them and the fit's w (the
    rounding's fixed point and the EM run as one iteration, one fit per step).  Without a scale, a model that
    cannot take censored reads or a score at an end: the plain fit.
    """
    # the rounding fixed point starts from the values' w (at the stated confidences: about w + rounding x mean c)
    start = max(w_stated - rounding * float(np.mean(design.c)), 0.25 * w_stated)
    censors = scale is not None and getattr(model, "CENSORED_READS", False)
    ends = scale_ends(data.scores, scale, score_step(data.scores)) if censors else None
    if ends is None:
        return _fit_with_rounding(model, design, data, gauge, rounding, start)
    fit_at = _fitter(model, design, data, gauge, rounding)
    which = ends.censored
    scores, latent = data.scores.astype(float), np.zeros(data.n_evaluations)
    x, out = start, fit_at(start)
    for _ in range(CENSORED_FITS - 1):
        fit, w = out[0], out[2]
        fitted = fit.values[design.oi] + fit.biases[design.ai]
        sd = np.sqrt(w / design.c)  # the judgement's SD, as stated; the grid's rounding is the ends' own
        mean, var = ends.expected(fitted, sd)
        moved = float(np.sqrt(np.mean(((mean - scores[which]) / sd[which]) ** 2)))
        if abs(w - x) <= ROUNDING_TOLERANCE * x and moved <= CENSORED_TOLERANCE:
            break
        scores[which], latent[which] = mean, var
        x, out = w, fit_at(w, scores, latent)
    return out


def _decision_basis(data: PanelData, spec, gauge: str, per_component: bool, parts, w: float, scale=None):
    """A maker of the posterior decisions are drawn from, when the model names another one for them (see
    :class:`~xlcalib.calibration.result.DecisionBasis`), and that model's name; (None, None): the values' own.

    The maker runs when a ranking, P(above) or next reads first ask for it, so a fit that only wants values,
    biases and their standard errors does not pay for a second model.
    """
    name = getattr(spec, "DECISIONS_BY", None)
    if name is None or per_component:
        return None, None
    other = MODELS[name]
    A, O = data.n_assessors, data.n_objects
    if other.MAX_ASSESSORS is not None and A > other.MAX_ASSESSORS:
        return None, None
    design = parts[0].design if len(parts) == 1 else Design(data.ai, data.oi, data.confidences, A, O)

    def make() -> DecisionBasis:
        rounding = rounding_variance(data.scores)
        fit, used, w_fit, t_df = _fit_censored(other, design, data, gauge, rounding, w, scale)
        post = Posterior(used, fit.covariance, w_fit, fit.lam, gauge, rounding, design.c)
        return DecisionBasis(post, np.arange(A), np.arange(O), fit.values, t_df, other.NAME)

    return make, other.NAME


def calibrate(evaluations: pd.DataFrame | None = None, *, assessors=None, objects=None, scores=None,
              sd=None, confidence=None, level=None, levels=None, level_ratio: float = DEFAULT_LEVEL_RATIO,
              gauge: str = "weighted", per_component: bool = False, anomaly_threshold: float = 3.0,
              interval_level: float = 0.95, model: str = DEFAULT_MODEL, scale_use="off",
              scale=None) -> CalibrationResult:
    """Calibrated object values and assessor biases with standard errors and intervals.

    Fits ``s_ao = v_o + b_a + sigma_ao eta_ao`` by minimising
    ``sum c_ao (s_ao - v_o - b_a)^2`` with ``c_ao = 1/sigma_ao^2`` (MacKay et
    al. 2017, eq. 4), solving the reduced assessor system (eq. 15) and
    recovering values by eq. 13.

    Standard errors, intervals and the robustness bounds are explained in the module docstring.

    Parameters
    ----------
    evaluations:
        Long table with columns ``assessor``, ``object``, ``score`` and exactly
        one of ``sd`` (sigma_ao > 0, score units), ``confidence`` (c_ao > 0,
        relative weights; the noise scale w is then estimated) or ``level``
        (text mapped by ``levels``).  Column names are matched
        case-insensitively; extra columns are ignored.
    assessors, objects, scores, sd, confidence, level:
        The same data as parallel sequences (instead of ``evaluations``).
    levels:
        ``None`` (default): High/Medium/Low are *relative* confidences
        ``level_ratio**2, 1, level_ratio**-2`` and w is estimated.  A mapping
        gives SDs in score units (w = 1); a :class:`Levels` or a two-column
        table (second header ``SD`` or ``Relative confidence``) says which.
    level_ratio:
        Ratio lambda between adjacent default levels (1.75, as the paper's
        authors' tool).
    gauge:
        ``"weighted"`` (sum C'_a b_a = 0, the paper's preferred condition) or
        ``"simple"`` (sum b_a = 0).  Values move by the same constant the
        biases lose; standard errors and bounds are those of the gauge chosen.
    per_component:
        Fit each connected component with its own gauge (values of different
        components are then *not* comparable).  Otherwise a disconnected panel
        is fitted as one by the random-assessors and random-both models (each
        group taken to be as strict as the panel on average) and refused by
        the fixed and random-objects models.
    anomaly_threshold:
        Evaluations with ``|std_residual| > anomaly_threshold`` are flagged.
    interval_level:
        Coverage of the ``lower``/``upper`` intervals (default 0.95).
    model:
        ``"random-assessors"`` (default: assessors' biases random effects
        N(0, sigma_b^2), shrunk towards 0 as far as the data leave them
        uncertain -- safe on weakly linked and expertise-grouped panels; its
        rankings and P(above) come from the ``"random-both"`` fit of the same
        panel), ``"random-both"`` (objects random too), ``"fixed"`` (the
        fixed-effects fit of MacKay et al.) or ``"random-objects"`` (objects
        random, biases fixed; older name ``"shrinkage"``).
    scale_use:
        ``"off"`` (default: assessors differ by a shift only), ``"auto"`` (a
        gain per assessor when the test says the assessors use the scale
        differently) or ``"on"``: the model is then fitted to each assessor's
        scores put on the panel's scale (:mod:`xlcalib.calibration.models.scale_use`),
        and ``biases`` gains ``gain, gain_se, gain_lower, gain_upper``.
    scale:
        The score scale ``(lowest, highest)``, when known (a workbook's
        Settings rows, ``--scale``): scores outside it are refused, and the
        fit that rankings, P(above) and next reads are drawn from reads a
        score at an end as censored -- a 6 on a 1-6 scale as "6 or higher"
        (:mod:`xlcalib.calibration.panel.censoring`): clipping otherwise makes the
        reads look less noisy than they are.  Values, biases and the fixed
        model are unchanged by it.

    Returns
    -------
    CalibrationResult
        ``values`` (value, se, lower, upper, robustness_bound, total_confidence,
        n, raw_mean), ``biases`` (bias, se, lower, upper, robustness_bound,
        total_confidence, n), ``residuals``, ``stats``; methods
        :meth:`~CalibrationResult.difference` and :meth:`~CalibrationResult.ranking`.

    Examples
    --------
    >>> import pandas as pd, xlcalib
    >>> ev = pd.DataFrame({"assessor": ["A", "A", "B", "B"], "object": ["x", "y", "x", "y"],
    ...                    "score": [5.0, 7.0, 6.0, 8.0], "sd": [1.0, 1.0, 1.0, 1.0]})
    >>> r = xlcalib.calibrate(ev)
    >>> r.values["value"].round(6).tolist(), r.biases["bias"].round(6).tolist()
    ([5.5, 7.5], [-0.5, 0.5])
    >>> round(float(r.values["se"].iloc[0]), 6)   # sqrt(w / C_o) = sqrt(1/2): the biases cancel in u_o' Cov(b) u_o
    0.707107
    """
    model, anomaly_threshold, interval_level = _check_options(gauge, model, anomaly_threshold, interval_level)
    scale = declared_scale(scale)
    data = panel_data(evaluations, assessors=assessors, objects=objects, scores=scores, sd=sd, confidence=confidence,
                      level=level, levels=levels, level_ratio=level_ratio)
    check_on_scale(data.scores, scale)
    # --- scale use (calibration/scale_use.py): gains first, then the model on the rescaled scores
    scale_use = scale_use_choice(scale_use)
    gains = fit_gains(data) if scale_use != "off" else None
    original, scaled = data, gains is not None and (scale_use == "on" or gains.differ)
    data = rescaled(data, gains) if scaled else data
    # ---
    N, A, O = data.n_evaluations, data.n_assessors, data.n_objects
    n_comp, comp_of_a, comp_of_o = components(data.ai, data.oi, A, O)
    if n_comp > 1 and not per_component and not MODELS[model].LINKS_GROUPS:
        _refuse_unconnected(n_comp, comp_of_a, data)
    spec = MODELS[model]
    if spec.MAX_ASSESSORS is not None and A > spec.MAX_ASSESSORS:
        raise InputError(f"the {model} model is available up to {spec.MAX_ASSESSORS} assessors (this panel has {A})")

    if not data.face_value and N - A - O + n_comp <= 0:
        _refuse_no_spare_reads(data, n_comp)
    parts = _fit_parts(data, comp_of_a, comp_of_o, n_comp, spec, gauge, per_component)
    v, b = _gather(parts, data)
    R = float(np.sum(data.confidences * (data.scores - v[data.oi] - b[data.ai]) ** 2))
    dof = N - A - O + n_comp
    weights, t_df = spec.noise_scales([p.fit for p in parts], R, (N, A, O, n_comp), data.face_value, data.kind)
    # the panel's noise scale: their evaluation-weighted mean (one value unless a model estimates one per component)
    w = float(np.average(weights, weights=[p.evaluations.sum() for p in parts]))
    pieces = _uncertainty(parts, weights, lambda part: int(part.evaluations.sum()), gauge, not data.face_value)
    if gauge == "simple" and model == "fixed":
        for part in parts:  # the simple gauge: each component's plain mean bias zero, values take the shift
            shift = b[part.assessors].mean()
            b[part.assessors] -= shift
            v[part.objects] += shift
    fitted = v[data.oi] + b[data.ai]
    values, biases, residuals = _tables(data, parts, pieces, v, b, fitted, w, t_df, interval_level,
                                        anomaly_threshold, per_component, (comp_of_a, comp_of_o))
    stats = _stats(data, parts, pieces, n_comp=n_comp, R=R, dof=dof, w=w, t_df=t_df, model=model, gauge=gauge,
                   interval_level=interval_level, anomaly_threshold=anomaly_threshold)
    posteriors = tuple(ComponentPosterior(p["posterior"], part.assessors, part.objects)
                       for part, p in zip(parts, pieces))
    decision_scale = None if scaled else scale  # scores put on the panel's scale by gains left the ends behind
    make_basis, decision_model = _decision_basis(data, spec, gauge, per_component, parts, w, decision_scale)
    if decision_model is not None:
        stats["decision_model"] = decision_model
        if decision_scale is not None and getattr(MODELS[decision_model], "CENSORED_READS", False):
            stats["scale_ends"] = scale_end_words(data.scores, decision_scale)
    result = CalibrationResult(values=values, biases=biases, residuals=residuals, stats=stats,
                               components=posteriors, t_df=t_df, decision_basis_maker=make_basis)
    if gains is not None:  # scale use: back to the panel's units, gains beside the biases
        apply_to_result(result, original, gains, scale_use, scaled, quantile(0.5 + interval_level / 2, t_df))
    return result
