"""The many-facet Rasch fit of a checked panel, as one step: categories, parameters, the maximum of the marginal
likelihood, the objects' measures, the thresholds, each read's prediction and the posterior decisions draw from.

What it does with the panel's confidences: a read's stated confidence c (a level's relative confidence, a
confidence, or 1/SD^2) makes it a sharper or a blunter read of the same scale -- its discrimination

    a_r = sqrt(c_r / c_ref),      log(P_k / P_{k-1}) = a_r (theta_o - beta_a - tau_k),

Muraki's (1992, Applied Psychological Measurement 16:159) generalised partial credit model with the slopes
known rather than estimated.  Why the square root: a read whose latent judgement scatters with SD s crosses the
thresholds with a logit slope proportional to 1/s, and a confidence is 1/s^2 -- the linear models' weight.  With
equal confidences (one level, or no confidence column) every a_r is 1 and the model is exactly FACETS' Rasch
model.  Measured (``benchmarks/bench_rasch.py``, linear panels with High/Medium/Low levels): ignoring the levels
found 0.5 fewer of the true top 15 than the linear default (the same loss the linear model has without them);
with the slopes the two find as many.  The reference c_ref is the levels' own 1 (relative confidences: the
default levels' Medium), else the median confidence of the panel's reads, so measures and thresholds are on the
scale of a Medium (or typical) read.  Slopes are kept within [1/20, 20] (a confidence 400 times the reference
counts as 400 times).  Groups of assessors that share no object are put on one scale by taking each group to be
as strict as the panel on average (:mod:`.estimate`, gauge), the words the linear default uses.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from ...cells import MAX_WORK_BYTES
from ...errors import InputError
from ..panel.data import PanelData
from ..system.graph import components, plain_pages
from .categories import CategoryScale, category_scale
from .estimate import NODES, MarginalFit, Panel, fit_marginal, layout_for
from .measures import FairScale, ObjectMeasures, fair_scale, object_measures, threshold_table
from .posterior import MeasurePosterior
from .residuals import Predictions, loo_predictions

__all__ = ["RaschFit", "fit_rasch", "gauge_constraints", "read_slopes", "MAX_SLOPE"]


@dataclass(frozen=True)
class RaschFit:
    """Everything the ordinal model estimated for one panel (numbers; the tables are built from it)."""

    model: str
    data: PanelData
    categories: CategoryScale
    marginal: MarginalFit
    measures: ObjectMeasures
    severity: np.ndarray
    severity_se: np.ndarray
    thresholds: np.ndarray  # structures x (K - 1)
    threshold_se: np.ndarray
    threshold_gap_se: np.ndarray
    fair: FairScale
    predictions: Predictions
    posterior: MeasurePosterior
    gauge: str
    gauge_weights: np.ndarray
    n_components: int
    component_of_assessor: np.ndarray
    component_of_object: np.ndarray

    @property
    def mu(self) -> float:
        return self.marginal.layout.unpack(self.marginal.phi)[2]

    @property
    def sigma(self) -> float:
        return self.marginal.layout.unpack(self.marginal.phi)[3]

    def sigma_se(self) -> float:
        """SE of sigma (delta method from log sigma's)."""
        layout = self.marginal.layout
        return self.sigma * float(np.sqrt(max(self.marginal.covariance[layout.log_sigma, layout.log_sigma], 0.0)))

    def mu_se(self) -> float:
        layout = self.marginal.layout
        return float(np.sqrt(max(self.marginal.covariance[layout.mu, layout.mu], 0.0)))

    def intercepts(self) -> np.ndarray:
        return self.marginal.layout.intercepts(self.marginal.phi)


#: Slopes are kept within [1/MAX_SLOPE, MAX_SLOPE] (see the module docstring).
MAX_SLOPE = 20.0


def read_slopes(data: PanelData) -> np.ndarray:
    """Each read's discrimination sqrt(c / c_ref), within [1/MAX_SLOPE, MAX_SLOPE]: c_ref = 1 for relative
    confidence levels (the levels' own scale), else the median confidence (module docstring)."""
    c = np.asarray(data.confidences, dtype=float)
    reference = 1.0 if data.kind == "level" and not data.face_value else float(np.median(c))
    return np.clip(np.sqrt(c / reference), 1.0 / MAX_SLOPE, MAX_SLOPE)


def gauge_constraints(size: int, n_assessors: int, weights: np.ndarray, component: np.ndarray, n_comp: int):
    """The gauge as constraints (parameters x groups): in each group of linked assessors the gauge-weighted
    severities sum to zero."""
    C = np.zeros((size, n_comp))
    C[np.arange(n_assessors), component] = weights
    return C


def _check_size(n_reads: int, n_categories: int) -> None:
    """The fit holds a few reads x nodes x categories arrays: refuse a panel whose fit would not fit in memory."""
    need = 6 * 8 * n_reads * NODES * n_categories
    if need > MAX_WORK_BYTES:
        raise InputError(f"the ordinal model of {n_reads:,} reads in {n_categories} categories would need about "
                         f"{need / 2**30:.1f} GiB of working memory (at most {MAX_WORK_BYTES / 2**30:.0f} GiB): use "
                         "a linear model for a panel this size")


def _one_blas_thread():
    """One BLAS thread while fitting, when threadpoolctl is available (optional: not in Pyodide).

    Why: the fit factors a dense information matrix of ~1,000 parameters once per Newton step; on a machine whose
    cores are shared, OpenBLAS's second thread waits for a core and a 20 ms factorisation took 0.9 s (measured
    here with one other process running); one thread is as fast as two at this size when the machine is quiet.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - optional
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def fit_rasch(data: PanelData, name: str, scale=None, per_assessor: bool = False,
                gauge: str = "weighted") -> RaschFit:
    """Fit the rating-scale model (``per_assessor``: partial credit by assessor), called *name*, to a checked
    panel; see the module docstrings of :mod:`.estimate` and :mod:`.measures`."""
    coding = category_scale(data.scores, scale)
    K = coding.n_used
    _check_size(data.n_evaluations, K)
    A, O = data.n_assessors, data.n_objects
    n_comp, comp_a, comp_o = components(data.ai, data.oi, A, O)
    layout = layout_for(A, data.ai, coding.code, K, per_assessor)
    reads = np.bincount(data.ai, minlength=A).astype(float)
    weights = reads / reads.sum() if gauge == "weighted" else np.full(A, 1.0 / A)
    constraints = gauge_constraints(layout.size, A, weights, comp_a, n_comp)
    panel = Panel(data.ai, data.oi, coding.code, layout, O, read_slopes(data))
    with plain_pages(), _one_blas_thread():  # large arrays every round (see plain_pages); small dense factors
        marginal = fit_marginal(panel, constraints)
        measures = object_measures(marginal)
        predictions = loo_predictions(marginal, coding.used_values)
    values = coding.used_values
    fair = fair_scale(marginal, values, weights, float(measures.measure.min()), float(measures.measure.max()))
    tau, tau_se, gap_se = threshold_table(marginal)
    cov = marginal.covariance
    posterior = MeasurePosterior(measures.psd, measures.se, measures.sensitivity, cov, marginal.information_root, A,
                                 data.n_evaluations)
    return RaschFit(name, data, coding, marginal, measures,
                      marginal.phi[:A].copy(), np.sqrt(np.maximum(np.diag(cov)[:A], 0.0)), tau, tau_se, gap_se,
                      fair, predictions, posterior, gauge, weights, n_comp, comp_a, comp_o)
