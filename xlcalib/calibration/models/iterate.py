"""A model fitted again until its inputs agree with its output: the scale's rounding, and censored end scores.

Why: two corrections of the decision basis depend on the fit they correct.  Whole-point scores add the grid's
rounding variance ``h^2 / 12`` to every read (:mod:`..panel.resolution`), so a read's effective confidence
``c' = 1 / (1/c + rounding/w)`` depends on the noise scale w that the fit estimates with those confidences;
and scores at the ends of a declared scale say "this or beyond" (:mod:`..panel.censoring`), whose expected
values given the fit feed the next fit (EM).  Both are run as one iteration, one fit per step.
"""
from __future__ import annotations

import numpy as np

from ..panel.censoring import scale_ends
from ..panel.data import PanelData
from ..panel.resolution import effective_confidences, score_step
from ..system.graph import NEAR_SOLVER, Design
from .base import CalibrationModel

__all__ = ["ROUNDING_TOLERANCE", "ROUNDING_FITS", "CENSORED_TOLERANCE", "CENSORED_FITS", "fit_with_rounding",
           "fit_censored"]

#: The effective confidences' fixed point (:func:`fit_with_rounding`) stops when w moves by less than this share.
ROUNDING_TOLERANCE = 5e-3  # c' then within about 0.3% of its fixed point: far inside the posterior's own error
#: ... or after this many fits.
ROUNDING_FITS = 12
#: The censored fit (:func:`fit_censored`) stops when w moves by less than :data:`ROUNDING_TOLERANCE` of itself
#: and the censored reads' expected scores by less than this many of their SDs (root mean square) ...
CENSORED_TOLERANCE = 1e-2
#: ... or after this many fits (each EM step is one fit).
CENSORED_FITS = 12


def _fitter(model: CalibrationModel, design: Design, data: PanelData, gauge: str, rounding: float):
    """fit_at(w, scores, latent) -> (fit, design with the confidences it used, w, t df): *model* fitted with each
    read's variance ``w / c + rounding`` (w ignored without rounding, and 1 with SDs at face value)."""
    counts = (data.n_evaluations, design.n_assessors, design.n_objects, 1)
    # the newest design and its noise scale: with SDs at face value (w = 1) or no rounding every step of a
    # censored fit has the same confidences, so its steps share the design's Laplacian, fixed-fit factor and trace
    newest = [None, design]

    def fit_at(w: float | None, scores: np.ndarray | None = None, latent: np.ndarray | None = None):
        w = None if rounding <= 0 else 1.0 if data.face_value else w
        if w != newest[0]:  # an estimated w moves at every step, and the confidences a little with it
            previous = newest[1]
            used = Design(design.ai, design.oi, effective_confidences(design.c, w, rounding), design.n_assessors,
                          design.n_objects)
            if "components" in design.shared:  # the same reads: the same connected groups (0.1 s at 10^6 reads)
                used.shared["components"] = design.shared["components"]
            if NEAR_SOLVER in previous.shared:  # the last step's factor preconditions this one's solves ...
                used.shared[NEAR_SOLVER] = previous.shared[NEAR_SOLVER]
            if previous is not design:  # ... and the rest of that step's design (its fixed factor) is not kept
                previous.shared.clear()
            newest[:] = [w, used]
        used = newest[1]
        extra = {} if latent is None else {"latent": latent}
        fit = model.fit_component(used, data.scores if scores is None else scores, gauge, data.face_value, **extra)
        weights, t_df = model.noise_scales([fit], 0.0, counts, data.face_value, data.kind)
        return fit, used, float(weights[0]), t_df

    return fit_at


def fit_with_rounding(model: CalibrationModel, design: Design, data: PanelData, gauge: str, rounding: float,
                      start: float):
    """(fit, design with the confidences it used, w, t df) of *model* with each read's variance ``w / c + rounding``
    (the scores' grid, :mod:`..panel.resolution`).

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


def fit_censored(model: CalibrationModel, design: Design, data: PanelData, gauge: str, rounding: float,
                 w_stated: float, scale):
    """:func:`fit_with_rounding` with the scores at the ends of the declared *scale* read as censored
    (:mod:`..panel.censoring`), by EM: after each fit every censored read is replaced by its expected score
    beyond the end under that fit, with the variance it keeps, and the next fit takes them and the fit's w (the
    rounding's fixed point and the EM run as one iteration, one fit per step).  Without a scale, a model that
    cannot take censored reads or a score at an end: the plain fit.
    """
    # the rounding fixed point starts from the values' w (at the stated confidences: about w + rounding x mean c)
    start = max(w_stated - rounding * float(np.mean(design.c)), 0.25 * w_stated)
    ends = scale_ends(data.scores, scale, score_step(data.scores)) if scale is not None and model.CENSORED_READS \
        else None
    if ends is None:
        return fit_with_rounding(model, design, data, gauge, rounding, start)
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
