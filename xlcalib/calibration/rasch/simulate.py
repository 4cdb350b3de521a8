"""Ordinal panels with a known truth: the expertise-grouped designs of :mod:`..panel.simulate`, scored by the
many-facet Rasch model (or by assessors who do not follow it).

Why: the tests and benchmarks measure what the ordinal model recovers (measures, severities, thresholds, the
coverage of its intervals) and whether its fit statistics find assessors who misbehave, on the designs panels
actually run -- few reads per object, assessors reading mostly in their own subjects.

Misbehaviour, per assessor index (drawn into the same design, the rest of the panel unchanged):

* ``erratic={a: d}``: the assessor's logits are d times the model's, d (theta - beta - tau_k) -- a rater
  discrimination (Muraki's generalised partial credit model): d < 1 spreads their categories more widely and
  follows the objects loosely -- erratic; d > 1 too predictably (a halo);
* ``central={a: s}``: their thresholds are s times as far apart (s > 1: they keep to the middle categories --
  central tendency).

Each read's confidence level (High / Medium / Low, from the design: High or Medium in the assessor's own
subject, Low outside it) makes it sharper or blunter, as the fit reads it: its logits are multiplied by
sqrt(c) with c the default levels' relative confidence (High 3.06, Medium 1, Low 0.33); ``levels=False`` gives
every read slope 1 (the plain Rasch model).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...cells import real_argument, seed_argument, whole_argument
from ..panel.levels import default_levels
from ..panel.simulate import simulate_panel

__all__ = ["OrdinalPanel", "simulate_ordinal_panel", "draw_categories", "CROSSED_SEVERITIES", "CROSSED_STEPS",
           "simulate_crossed_panel"]


@dataclass
class OrdinalPanel:
    """A simulated ordinal panel: ``evaluations`` (assessor, object, score, level), the true ``measures`` and
    ``severities`` (Series, logits; severities centred), ``thresholds`` (the shared ones) and ``scale``."""

    evaluations: pd.DataFrame
    measures: pd.Series
    severities: pd.Series
    thresholds: np.ndarray
    scale: tuple[float, float]


def draw_categories(rng, eta: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """One category place (0 .. K-1) per read from log(P_k / P_{k-1}) = eta - tau_k; *thresholds* one row per
    read (reads x (K - 1)) or shared ((K - 1,))."""
    tau = np.broadcast_to(np.asarray(thresholds, dtype=float), (eta.size, np.shape(thresholds)[-1]))
    c = np.concatenate([np.zeros((eta.size, 1)), -np.cumsum(tau, axis=1)], axis=1)
    logits = eta[:, None] * np.arange(c.shape[1]) + c
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    return (rng.random(eta.size)[:, None] > np.cumsum(p, axis=1)[:, :-1]).sum(axis=1)


#: The fully crossed panel's five assessors (named I0..I4): severities and each one's three step thresholds --
#: the layout of item-response packages (girth), which the tests and benchmarks compare the ordinal model with.
CROSSED_SEVERITIES = np.array([-0.6, -0.2, 0.0, 0.3, 0.5])
CROSSED_STEPS = np.array([[-1.2, 0.1, 1.1], [-1.0, -0.2, 1.2], [-1.5, 0.3, 1.2], [-0.8, 0.0, 0.8], [-1.3, 0.2, 1.1]])


def simulate_crossed_panel(seed: int, n_objects: int = 1500, shared: bool = False) -> tuple[pd.DataFrame, np.ndarray]:
    """Every object read by each of the five assessors of :data:`CROSSED_STEPS` (partial credit; ``shared``: their
    mean steps for all, the rating scale), measures N(0.2, 1): (evaluations with assessor, object and score --
    add the uncertainty column wanted --, the assessors x objects grid of category places 0..3)."""
    rng = np.random.default_rng(seed)
    A = CROSSED_SEVERITIES.size
    tau = np.tile(CROSSED_STEPS.mean(axis=0), (A, 1)) if shared else CROSSED_STEPS
    theta = rng.normal(0.2, 1.0, n_objects)
    ai, oi = np.tile(np.arange(A), n_objects), np.repeat(np.arange(n_objects), A)
    x = draw_categories(rng, theta[oi] - CROSSED_SEVERITIES[ai], tau[ai])
    grid = np.zeros((A, n_objects), dtype=int)
    grid[ai, oi] = x
    ev = pd.DataFrame({"assessor": [f"I{a}" for a in ai], "object": [f"O{o:04d}" for o in oi],
                       "score": x.astype(float)})
    return ev, grid


def simulate_ordinal_panel(n_assessors: int = 24, n_objects: int = 150, reads: int = 4, *, n_categories: int = 5,
                           thresholds=None, severity_sd: float = 0.6, object_mean: float = 0.0,
                           object_sd: float = 1.0, n_subjects: int = 6, two_subjects: float = 0.5,
                           cross_reads: float = 0.05, lowest: float = 1.0, seed: int = 0, erratic: dict | None = None,
                           central: dict | None = None, levels: bool = True) -> OrdinalPanel:
    """An expertise-grouped panel (:func:`..panel.simulate.simulate_panel`'s design) scored by the rating-scale
    model: theta ~ N(object_mean, object_sd^2), beta ~ N(0, severity_sd^2) centred, thresholds evenly spaced from
    -1.5 to 1.5 logits unless given; scores lowest, lowest + 1, ...

    >>> p = simulate_ordinal_panel(12, 60, 3, n_categories=4, seed=1)
    >>> len(p.evaluations), sorted(p.evaluations["score"].unique())
    (180, [1.0, 2.0, 3.0, 4.0])
    """
    K = whole_argument(n_categories, "n_categories", low=2)
    tau = np.linspace(-1.5, 1.5, K - 1) if thresholds is None else np.asarray(thresholds, dtype=float)
    if tau.size != K - 1:
        raise ValueError(f"{K} categories need {K - 1} thresholds, not {tau.size}")
    design = simulate_panel(n_assessors, n_objects, reads, n_subjects=n_subjects, two_subjects=two_subjects,
                            cross_reads=cross_reads, n_conflicts=0, seed=seed)
    ev = design.evaluations
    rng = np.random.default_rng([seed_argument(seed), 40])
    a_names, o_names = design.biases.index, design.values.index
    beta = rng.normal(0.0, real_argument(severity_sd, "severity_sd", low=0), a_names.size)
    beta -= beta.mean()
    theta = rng.normal(object_mean, real_argument(object_sd, "object_sd", low=0), o_names.size)
    a = a_names.get_indexer(ev["assessor"])
    o = o_names.get_indexer(ev["object"])
    slope = np.ones(a_names.size)
    spread = np.ones(a_names.size)
    for i, d in (erratic or {}).items():
        slope[i] = d
    for i, s in (central or {}).items():
        spread[i] = s
    confidence = pd.Series(default_levels().confidences())
    sharp = np.sqrt(confidence.reindex(ev["level"].str.lower()).to_numpy(dtype=float)) if levels else np.ones(len(ev))
    d = (slope[a] * sharp)[:, None]
    x = draw_categories(rng, d[:, 0] * (theta[o] - beta[a]), d * spread[a][:, None] * tau[None, :])
    evaluations = pd.DataFrame({"assessor": ev["assessor"].to_numpy(), "object": ev["object"].to_numpy(),
                                "score": lowest + x.astype(float), "level": ev["level"].to_numpy()})
    return OrdinalPanel(evaluations, pd.Series(theta, index=o_names, name="measure"),
                        pd.Series(beta, index=a_names, name="severity"), tau, (lowest, lowest + K - 1))
