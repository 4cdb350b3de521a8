"""Calibration with confidence: s_ao = v_o + b_a + sigma_ao * eta_ao (MacKay et al. 2017).

:func:`calibrate` reads as its steps: check the panel (:mod:`.panel.data`), find its
connected components (:mod:`.system.graph`), fit each with the chosen model
(:mod:`.models`), take the uncertainty from the model's posterior
(:mod:`.system.posterior`) and the design diagnostics from the graph's spectrum
(:mod:`.system.robustness`), and assemble the :class:`~.result.CalibrationResult`
(its tables and figures: :mod:`.tables`), made once and complete.

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

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..cells import real_argument
from ..errors import InputError
from ..progress import step
from .models import DEFAULT_MODEL, MODELS, CalibrationModel, is_rasch, model_name, one_way
from .models.iterate import fit_censored
from .models.scale_use import (
    EndPile,
    GainFit,
    end_pile,
    fit_gains,
    gains_applied,
    in_panel_units,
    rescaled,
    scale_use_choice,
    scale_use_stats,
)
from .panel.censoring import DeclaredScale, check_on_scale, declared_scale, scale_end_words
from .panel.data import PanelData, panel_data
from .panel.levels import DEFAULT_LEVEL_RATIO
from .panel.resolution import rounding_variance
from .rasch.model import fit_rasch
from .rasch_result import RaschResult, make_rasch_result
from .result import CalibrationResult, DecisionBasis
from .system.graph import FIXED_SOLVER, Design, components
from .system.posterior import ComponentPosterior, Posterior, quantile
from .system.threads import blas_limit
from .tables import Part, diagnostics_figures, part_uncertainty, result_tables

__all__ = ["calibrate"]


def _check_options(gauge, model, anomaly_threshold, interval_level) -> tuple[CalibrationModel, float, float]:
    if gauge not in ("weighted", "simple"):
        raise InputError(f"gauge must be 'weighted' or 'simple', not {gauge!r}")
    anomaly_threshold = real_argument(anomaly_threshold, "anomaly_threshold", low=0, low_open=True)
    interval_level = real_argument(interval_level, "interval_level", low=0.5, high=1.0, high_open=True)
    return MODELS.get(model_name(model)), anomaly_threshold, interval_level


def _calibrate_rasch(data: PanelData, name: str, scale, gauge: str, per_component: bool, scale_use,
                       interval_level: float, anomaly_threshold: float) -> RaschResult:
    """The ordinal models' steps (:mod:`.rasch`): options they cannot honour are refused, then fit and result."""
    if per_component:
        raise InputError(f"the {name} model fits the whole panel: groups of assessors that share no object are put on "
                         "one scale by taking each group to be as strict as the panel on average (per_component=True "
                         "is for the linear models)")
    if scale_use_choice(scale_use) != "off":
        raise InputError(f"scale use (a gain per assessor) belongs to the linear models; the {name} model reads "
                         "categories, and assessors who use them differently get their own thresholds with "
                         "model='partial-credit'")
    A, O = data.n_assessors, data.n_objects
    with step(f"fitting the {name} model ({A:,} assessors, {O:,} objects)"):
        fit = fit_rasch(data, name, scale, per_assessor=name == "partial-credit", gauge=gauge)
    return make_rasch_result(fit, interval_level, anomaly_threshold)


def _refuse_unconnected(n_comp: int, comp_of_a: np.ndarray, data: PanelData) -> None:
    if not data.assessors_linked:
        raise InputError(f"every assessor read one object ({data.n_assessors} assessors, {data.n_objects} objects: "
                         "reviewers anonymous per object?), so no assessor's standard can be compared with another's "
                         f"and this model cannot be fitted; the default model ('{DEFAULT_MODEL}') and model "
                         f"'{one_way.NAME}' take each reviewer's stringency as part of the noise of their read")
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


def _pooled_components(A: int, O: int) -> tuple[int, np.ndarray, np.ndarray]:
    """The components of a pooled fit: one -- every object is read by the one pooled reader, and every value is
    on the scale of one model (how the readers themselves fall apart no longer matters)."""
    return 1, np.zeros(A, dtype=np.intp), np.zeros(O, dtype=np.intp)


def _check_panel(data: PanelData, model: CalibrationModel, comps, per_component: bool) -> None:
    """What the chosen model cannot fit is refused before any fit: unconnected groups it cannot compare, more
    assessors than it reaches, relative confidences without spare reads."""
    n_comp, comp_of_a, _comp_of_o = comps
    N, A, O = data.n_evaluations, data.n_assessors, data.n_objects
    if n_comp > 1 and not per_component and not model.LINKS_GROUPS:
        _refuse_unconnected(n_comp, comp_of_a, data)
    if model.MAX_ASSESSORS is not None and A > model.MAX_ASSESSORS:
        raise InputError(f"the {model.NAME} model is available up to {model.MAX_ASSESSORS} assessors "
                         f"(this panel has {A})")
    if model.POOLED:
        if per_component:
            raise InputError(f"the {model.NAME} model pools every reader into the noise: there are no groups of "
                             "linked assessors to fit apart (leave per_component off)")
        if N - O <= 0:
            raise InputError("every object was read once, so the reads cannot be compared: the noise of a read "
                             "(the reviewers' stringency included) cannot be estimated; add second reads")
    elif not data.face_value and N - A - O + n_comp <= 0:
        _refuse_no_spare_reads(data, n_comp)


def _fit_parts(data: PanelData, design: Design, comps, model: CalibrationModel, gauge: str,
               per_component: bool) -> list[Part]:
    """Each component's design (local indices) and its model fit; the whole panel as one part for a model
    that links unconnected groups (unless each group is asked for on its own scale)."""
    n_comp, comp_of_a, comp_of_o = comps
    everything = np.ones(data.n_evaluations, dtype=bool)
    if model.POOLED:  # every reader pooled into one, "any reviewer": the assessors' terms are in the noise
        pooled = design.pooled()
        fit = model.fit_component(pooled, data.scores, gauge, data.face_value)
        return [Part(everything, np.arange(data.n_assessors), np.arange(data.n_objects), pooled, fit, pooled=True)]
    design.shared["components"] = comps  # found already: the variance moments need them too
    if model.LINKS_GROUPS and not per_component:
        fit = model.fit_component(design, data.scores, gauge, data.face_value)
        return [Part(everything, np.arange(data.n_assessors), np.arange(data.n_objects), design, fit,
                     connected=n_comp == 1)]
    return [Part(mask, a_idx, o_idx, sub, model.fit_component(sub, data.scores[mask], gauge, data.face_value))
            for mask, a_idx, o_idx, sub in design.parts(n_comp, comp_of_a, comp_of_o)]


def _gather(parts: list[Part], data: PanelData) -> tuple[np.ndarray, np.ndarray]:
    v, b = np.empty(data.n_objects), np.empty(data.n_assessors)
    for part in parts:
        v[part.objects] = part.fit.values
        b[part.assessors] = 0.0 if part.pooled else part.fit.biases  # pooled: stringency is in the noise
    return v, b


def _decision_basis(data: PanelData, model: CalibrationModel, gauge: str, per_component: bool, parts, w: float,
                    scale=None, centre: float = 0.0):
    """A maker of the posterior decisions are drawn from, when the model names another one for them (see
    :class:`~xlcalib.calibration.result.DecisionBasis`), and that model; (None, None): the values' own.

    The maker runs when a ranking, P(above) or next reads first ask for it, so a fit that only wants values,
    biases and their standard errors does not pay for a second model.
    """
    if model.DECISIONS_BY is None or per_component:
        return None, None
    other = MODELS[model.DECISIONS_BY]
    A, O = data.n_assessors, data.n_objects
    if other.MAX_ASSESSORS is not None and A > other.MAX_ASSESSORS:
        return None, None
    design = parts[0].design if len(parts) == 1 else Design(data.ai, data.oi, data.confidences, A, O)

    def make() -> DecisionBasis:
        rounding = rounding_variance(data.scores, scale.points if scale is not None else ())
        if rounding > 0:
            # whole-point scores: the basis fits designs of its own (each read's variance plus the rounding's),
            # so the values' fixed-system factor, kept on their design for its mu2 and bounds (made already), has
            # no reader left -- let it go before the basis makes factors of its own (100 MB at 5,000 assessors)
            design.shared.pop(FIXED_SOLVER, None)
        with step(f"fitting the {other.NAME} model the decisions are drawn from"), blas_limit(A):
            fit, used, w_fit, t_df = fit_censored(other, design, _centred(data, centre), gauge, rounding, w,
                                                  _shifted(scale, centre))
        post = Posterior(used, fit.covariance, w_fit, fit.lam, gauge, rounding, design.c, fit.spread)
        return DecisionBasis(post, np.arange(A), np.arange(O), fit.values + centre, t_df, other.NAME)

    return make, other


def _centred(data: PanelData, centre: float) -> PanelData:
    """The panel with *centre* taken off every score.

    Why: every model is shift-equivariant (a common shift of the scores moves the values by it and nothing
    else), but their sums of squares (sum c s^2 - sum V^2 / C) lose digits to a large common level -- scores of
    23,000 + 0.24 x points kept only about 6 of them, and the random-effects models' variance search then
    found other optima in other units.  Fitted about the confidence-weighted mean score, every unit gives the
    same decisions.
    """
    return replace(data, scores=data.scores - centre) if centre else data


def _shifted(scale: DeclaredScale | None, centre: float) -> DeclaredScale | None:
    """The declared scale about the same centre as :func:`_centred`'s scores (its ends and points moved with them)."""
    if scale is None or not centre:
        return scale
    return DeclaredScale(scale.low - centre, scale.high - centre, tuple(p - centre for p in scale.points))


#: Relative confidences whose fit leaves less than this share of the scores' weighted squares: an exact fit.
EXACT_FIT = 1e-18


def _fits_exactly(data: PanelData, R: float) -> bool:
    """Whether the noise is to be estimated but the scores sit on the model (R = 0 up to rounding): then nothing
    measures how much a read scatters, and zero standard errors would claim certainty the data do not give."""
    return not data.face_value and R <= EXACT_FIT * float(np.sum(data.confidences * (data.scores**2 + 1.0)))


def _exact_fit_words(data: PanelData) -> str:
    """The sentence the Summary and the Diagnostics give an exact fit."""
    if np.ptp(data.scores) == 0:
        head = (f"every score is {data.scores[0]:g}: the assessors agree on everything, so there is nothing to "
                "calibrate and every object is tied")
    else:
        head = "the scores fit the model exactly (each read is its object's value plus its assessor's bias)"
    return (head + "; with relative confidences the noise of a read is estimated from the scatter, and there is "
            "none, so no standard errors or intervals are given (declared SDs would give them)")


def _model_for(data: PanelData, model: CalibrationModel, scale_use: str) -> tuple[CalibrationModel, PanelData, str]:
    """(the model fitted, the panel it is fitted to, why it is not the one asked for -- '' when it is).

    A panel in which every assessor read one object links no assessor to another: its readers' stringency and
    the noise of their reads appear only as their sum.  The random-effects models (their biases a prior N(0,
    sigma_b^2)) then reduce to the one-way model, which estimates that sum (:mod:`.models.one_way`); it is fitted
    instead, and said.  The fixed and random-objects models are refused on it (:func:`_refuse_unconnected`).
    Under a pooled model declared SDs are read as relative: the reviewers' stringency adds to every read.
    """
    note = ""
    if not model.POOLED and not data.assessors_linked and model.LINKS_GROUPS:
        note = (f"every assessor read one object ({data.n_assessors:,} assessors, {data.n_objects:,} objects): no "
                "assessor's stringency can be told apart from the noise of their read, so it is taken as part of "
                f"that noise (model {one_way.NAME} instead of {model.NAME})")
        model = MODELS[one_way.NAME]
    if model.POOLED and scale_use == "on":
        raise InputError(f"scale use fits a gain per assessor, and the {model.NAME} model pools the assessors into "
                         "the noise: leave scale_use off")
    if model.POOLED and data.face_value:
        data = replace(data, kind="confidence", levels=None)
        note += ("; " if note else "") + ("the declared SDs are read as relative confidences: the reviewers' "
                                          "stringency, which cannot be estimated apart, adds to every read")
    return model, data, note


def _with_scale_use(data: PanelData, choice: str,
                    scale: DeclaredScale | None) -> tuple[PanelData, GainFit | None, bool, EndPile]:
    """(the panel the model is fitted to, the gains, whether they are applied, the reads piled at an end): scale
    use fits a gain per assessor first, then the model takes each assessor's scores put on the panel's scale
    (:mod:`.models.scale_use`); ``auto`` leaves the gains out when the reads pile at an end of the scale."""
    gains = fit_gains(data) if choice != "off" else None
    pile = end_pile(data.scores, scale)
    applied = gains_applied(gains, choice, pile)
    return (rescaled(data, gains) if applied else data), gains, applied, pile


@dataclass(frozen=True)
class _Options:
    """The fit's options, checked."""

    model: CalibrationModel
    gauge: str
    per_component: bool
    interval_level: float
    anomaly_threshold: float
    scale: tuple[float, float] | None


def _calibrated(original: PanelData, choice: str, o: _Options) -> CalibrationResult:
    """The steps of :func:`calibrate` on a checked panel: scale use, components, the model's fit, the noise
    scale, standard errors and design figures, the tables, the decision basis, the result."""
    fitted_model, original, model_note = _model_for(original, o.model, choice)
    if fitted_model.POOLED:
        choice = "off"  # no gains of readers pooled into the noise ("auto" finds nothing to test)
    data, gains, scaled, pile = _with_scale_use(original, choice, o.scale)
    gauge, per_component = o.gauge, o.per_component
    interval_level, anomaly_threshold, scale = o.interval_level, o.anomaly_threshold, o.scale
    N, A, O = data.n_evaluations, data.n_assessors, data.n_objects
    comps = _pooled_components(A, O) if fitted_model.POOLED else components(data.ai, data.oi, A, O)
    n_comp = comps[0]
    _check_panel(data, fitted_model, comps, per_component)
    chosen = fitted_model
    if not data.face_value and np.ptp(data.scores) == 0:  # every score the same: every model's values are that
        fitted_model = MODELS["fixed"]                    # score; the fixed fit gives them without a variance search
    centre = float(np.average(data.scores, weights=data.confidences))
    with step(f"fitting the {chosen.NAME} model ({A:,} assessors, {O:,} objects)"):
        parts = _fit_parts(_centred(data, centre), Design(data.ai, data.oi, data.confidences, A, O), comps,
                           fitted_model, gauge, per_component)
    v, b = _gather(parts, data)
    v += centre
    R = float(np.sum(data.confidences * (data.scores - v[data.oi] - b[data.ai]) ** 2))
    dof = N - A - O + n_comp
    weights, t_df = fitted_model.noise_scales([p.fit for p in parts], R, (N, A, O, n_comp), data.face_value,
                                              data.kind)
    exact = _fits_exactly(data, R)
    if exact:  # no scatter to estimate the noise from: no standard errors rather than zero ones
        weights = [float("nan")] * len(weights)
    # the panel's noise scale: their evaluation-weighted mean (one value unless a model estimates one per component)
    w = float(np.average(weights, weights=[p.n_evaluations for p in parts]))
    with step("standard errors and the design's figures"):
        pieces = [part_uncertainty(part, wk, gauge, not data.face_value) for part, wk in zip(parts, weights)]
    values, biases, residuals = result_tables(data, parts, pieces, v, b, w, t_df, interval_level,
                                              anomaly_threshold, per_component, comps[1:])
    stats = diagnostics_figures(data, parts, pieces, n_comp=n_comp, R=R, dof=dof, w=w, t_df=t_df,
                                model=fitted_model, gauge=gauge, interval_level=interval_level,
                                anomaly_threshold=anomaly_threshold)
    if model_note:
        stats["model_note"] = model_note
    if exact:
        stats["model"] = chosen.NAME
        stats["noise_scale"] = "not estimable: the scores fit the model exactly"
        stats["exact_fit"] = _exact_fit_words(data)
    decision_scale = None if scaled else scale  # scores put on the panel's scale by gains left the ends behind
    make_basis, decision_model = (None, None) if exact else _decision_basis(data, fitted_model, gauge, per_component,
                                                                            parts, w, decision_scale, centre)
    if decision_model is not None:
        stats["decision_model"] = decision_model.NAME
        if decision_scale is not None and decision_model.CENSORED_READS:
            stats["scale_ends"] = scale_end_words(data.scores, decision_scale)
    if gains is not None:  # scale use: back to the panel's units, gains beside the biases
        stats.update(scale_use_stats(gains, choice, scaled, pile))
        if scaled:
            values, biases, residuals = in_panel_units(values, biases, residuals, original, gains,
                                                       quantile(0.5 + interval_level / 2, t_df))
    posteriors = tuple(ComponentPosterior(p.posterior, part.assessors, part.objects) for part, p in zip(parts, pieces))
    return CalibrationResult(values=values, biases=biases, residuals=residuals, stats=stats,
                             components=posteriors, t_df=t_df, decision_basis_maker=make_basis)


def calibrate(evaluations: pd.DataFrame | None = None, *, assessors=None, objects=None, scores=None,
              sd=None, confidence=None, level=None, levels=None, level_ratio: float = DEFAULT_LEVEL_RATIO,
              gauge: str = "weighted", per_component: bool = False, anomaly_threshold: float = 3.0,
              interval_level: float = 0.95, model: str = DEFAULT_MODEL, scale_use="off",
              scale=None) -> CalibrationResult | RaschResult:
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
        fixed-effects fit of MacKay et al.), ``"random-objects"`` (objects
        random, biases fixed; older name ``"shrinkage"``) or ``"one-way"``
        (every reader pooled into the noise: one-way random effects).  On a
        panel in which every assessor read one object (reviewers anonymous
        per paper) no stringency can be estimated: the default and
        ``"random-both"`` are fitted as ``"one-way"`` and ``stats["model_note"]``
        says so; ``"fixed"`` and ``"random-objects"`` refuse it.  Or an
        ordinal model: ``"rating-scale"`` (alias ``"facets"``: the scores read
        as ordered categories, the many-facet Rasch rating-scale model;
        objects random, marginal maximum likelihood) or ``"partial-credit"``
        (thresholds per assessor) -- these return an
        :class:`~xlcalib.calibration.rasch_result.RaschResult`
        (:mod:`xlcalib.calibration.rasch`): measures in logits, fair averages
        on the rubric's scale, severities, the category table; a read's
        confidence makes it a sharper (or blunter) read of the scale.
    scale_use:
        ``"off"`` (default: assessors differ by a shift only), ``"auto"`` (a
        gain per assessor when the test says the assessors use the scale
        differently) or ``"on"``: the model is then fitted to each assessor's
        scores put on the panel's scale (:mod:`xlcalib.calibration.models.scale_use`),
        and ``biases`` gains ``gain, gain_se, gain_lower, gain_upper``.
    scale:
        The score scale ``(lowest, highest)``, or a form's options when their
        steps are uneven (``(1, 3, 6, 8)``: every score must be one of them),
        when known (a workbook's Settings rows, ``--scale``, an export's form
        labels): scores outside it are refused, and the
        fit that rankings, P(above) and next reads are drawn from reads a
        score at an end as censored -- a 6 on a 1-6 scale as "6 or higher"
        (:mod:`xlcalib.calibration.panel.censoring`): clipping otherwise makes the
        reads look less noisy than they are.  Values, biases and the fixed
        model are unchanged by it.

    Returns
    -------
    CalibrationResult (an RaschResult for the ordinal models)
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
    fitted_model, anomaly_threshold, interval_level = _check_options(gauge, model, anomaly_threshold,
                                                                      interval_level)
    scale = declared_scale(scale)
    original = panel_data(evaluations, assessors=assessors, objects=objects, scores=scores, sd=sd,
                          confidence=confidence, level=level, levels=levels, level_ratio=level_ratio)
    check_on_scale(original.scores, scale)
    with blas_limit(original.n_assessors):  # small panels: one BLAS thread is fastest (system/threads.py)
        if is_rasch(model):
            return _calibrate_rasch(original, model_name(model), scale, gauge, per_component, scale_use,
                                    interval_level, anomaly_threshold)
        options = _Options(fitted_model, gauge, per_component, interval_level, anomaly_threshold, scale)
        return _calibrated(original, scale_use_choice(scale_use), options)
