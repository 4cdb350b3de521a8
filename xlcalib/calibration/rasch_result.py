"""The result of the ordinal (many-facet Rasch) calibration: FACETS' tables, and the decisions drawn from its
posterior through the interface every model answers.

Made once by :func:`xlcalib.calibration.calibrate` with ``model="rating-scale"`` or ``"partial-credit"`` (see
:mod:`.rasch`).  It reads like a :class:`~.result.CalibrationResult` where the meaning is the same (``values``
per object, ``summary()``, ``ranking()``, ``fit_statistics()``, ``unexpected_reads()``, ``separation()``,
``diagnostics()``, ``decision_basis()``, ``difference()``) and says its own words where it differs: values are
measures in logits with fair averages on the rubric's scale, assessors have severities (positive = harsher; the
linear models' biases are positive = more lenient), and there is a category table.

Decisions: ``ranking()`` ranks by measure and draws from :class:`.rasch.posterior.MeasurePosterior` through
:func:`.decide.ranking.rank_objects`, exactly as for the linear models.  A funding line given as a score is a
*fair average* (the rubric's scale); it is turned into the measure whose fair average it is, and the plain
averages are read the same way, so "raw decision" and "changed by calibration" compare like with like.  The
ranking table then shows fair averages as its values (``value``, ``lower``, ``upper``; ``se`` by the delta
method) with the measures beside them (``measure``, ``measure_se``, ``measure_lower``, ``measure_upper``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import ndtr

from ..cells import real_argument
from ..errors import InputError
from .behaviour.separation import separation_rows
from .decide.ranking import rank_objects
from .meanings import statistic_meaning
from .models import RASCH_MODELS
from .rasch.model import RaschFit
from .rasch.tables import (
    assessor_thresholds,
    category_curves,
    category_table,
    fit_table,
    measures_table,
    residuals_table,
    severities_table,
    threshold_words,
    unexpected_table,
    wright_map,
)
from .result import DecisionBasis, Difference
from .system.posterior import quantile

__all__ = ["RaschResult", "make_rasch_result"]


@dataclass(frozen=True)
class _MeasureView:
    """What :func:`rank_objects` reads, on the measures' scale: values (measure, SEs, interval, the plain averages
    read as measures), the figures, and the decision basis."""

    values: pd.DataFrame
    stats: dict
    basis: DecisionBasis

    def decision_basis(self) -> DecisionBasis:
        return self.basis


@dataclass(frozen=True)
class RaschResult:
    """Measures, severities, categories and diagnostics of the ordinal model; made once, complete.

    Attributes
    ----------
    values:
        Per object: ``measure`` (EAP, logits), ``se``, ``lower``, ``upper``, ``fair_average`` (the expected score
        from an assessor of average severity, rubric scale) with ``fair_lower``/``fair_upper``, ``raw_mean``,
        ``n``, infit/outfit with ZSTD.
    severities:
        Per assessor: ``severity`` (logits, positive = harsher), ``se``, ``lower``, ``upper``, ``fair_average``
        (their expected score for an object of the panel's mean measure), ``observed_average``, ``n``, fit,
        ``reading``, ``extreme``.
    residuals:
        Per read: expected score (leave-one-out prediction), difference, z, probability, tail, unexpected.
    categories:
        The category table (FACETS Table 8).
    stats:
        The Diagnostics' figures (meanings: :mod:`.meanings`).
    fit:
        The numbers behind them (:class:`.rasch.model.RaschFit`).
    """

    values: pd.DataFrame
    severities: pd.DataFrame
    residuals: pd.DataFrame
    categories: pd.DataFrame
    stats: dict[str, Any]
    fit: RaschFit
    _made: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    # ------------------------------------------------------------------ what generic readers ask
    @property
    def biases(self) -> pd.DataFrame:
        """The assessors' table (named ``biases`` on the linear results): here severities, positive = harsher."""
        return self.severities

    @property
    def one_scale(self) -> bool:
        """Always: unconnected groups are fitted together, each as strict as the panel on average."""
        return True

    @property
    def t_df(self) -> None:
        return None

    # ------------------------------------------------------------------ words
    def summary(self) -> str:
        """A few plain lines: the model, the categories, how the assessors and objects spread, precision, fit."""
        s = self.stats
        level = s.get("interval_level", 0.95)
        sep = self.separation()
        lines = [
            f"Calibrated {s['n_objects']} objects from {s['n_evaluations']} evaluations by {s['n_assessors']} "
            f"assessors (model {s['model']}: {RASCH_MODELS[s['model']]}).",
            f"Scores read as {s['categories_used']} ordered categories ({s['categories']}). "
            + (f"{s['categories_unused']}. " if s.get("categories_unused") else "") + s["thresholds_order"],
            f"Assessors: {sep.loc['assessors', 'in_words']}; severities spread by {s['severity_sd']:.2f} logits (SD).",
            f"Objects: {sep.loc['objects', 'in_words']}; measures spread by {s['objects_sd']:.2f} logits (SD of the "
            "objects' distribution).",
            f"Measures carry a standard error of median {self.values['se'].median():.2g} logits, severities "
            f"{self.severities['se'].median():.2g}; every ± shown is half the width of the {level:.0%} interval. "
            "Fair averages put each measure back on the rubric's scale: the score an assessor of average severity "
            "would give.",
            self._fit_words(),
            f"{int(self.residuals['unexpected'].sum())} read(s) stand out (a category this far from the panel's "
            f"prediction has probability below {s['unexpected_tail']:.2%}).",
        ]
        if s.get("n_components", 1) > 1:
            lines.append(f"Note: {s['groups']}.")
        lines.append(f"Note: {s['confidences']}.")
        return "\n".join(lines)

    def _fit_words(self) -> str:
        reading = self.severities["reading"].astype(str)
        erratic = list(self.severities.index[reading.str.startswith("erratic")])
        muted = list(self.severities.index[reading.str.startswith("too predictable")])
        if not erratic and not muted:
            return "Every assessor's categories fit the model as expected (infit and outfit, see Severities)."
        parts = []
        if erratic:
            parts.append(f"{len(erratic)} erratic ({', '.join(map(str, erratic[:6]))}{' ...' if len(erratic) > 6 else ''})")
        if muted:
            parts.append(f"{len(muted)} too predictable, e.g. keeping to the middle categories "
                         f"({', '.join(map(str, muted[:6]))}{' ...' if len(muted) > 6 else ''})")
        return "Assessors whose categories do not fit: " + "; ".join(parts) + " (see Severities)."

    # ------------------------------------------------------------------ decisions
    def decision_basis(self) -> DecisionBasis:
        """What rankings, P(above the line) and the lottery are drawn from: the measures' joint posterior."""
        if "basis" not in self._made:
            fit = self.fit
            A, O = fit.data.n_assessors, fit.data.n_objects
            self._made["basis"] = DecisionBasis(fit.posterior, np.arange(A, dtype=np.intp), np.arange(O, dtype=np.intp),
                                                fit.measures.measure.copy(), None, self.stats["model"],
                                                fit.measures.se.copy())
        return self._made["basis"]

    def _measure_line(self, threshold) -> float | None:
        """A funding line given as a fair average, as the measure whose fair average it is."""
        if threshold is None:
            return None
        values = self.fit.categories.used_values
        x = real_argument(threshold, "threshold (a fair average)")
        if not values[0] < x < values[-1]:
            raise InputError(f"threshold {x:g} is a fair average: it must lie strictly between the lowest and highest "
                             f"category used ({values[0]:g} and {values[-1]:g})")
        return float(self.fit.fair.measure_of(x))

    def ranking(self, top_k=None, threshold=None, level=None, draws: int = 10_000, seed: int = 0,
                epsilon: float = 0.05, lottery=False, lottery_seed=None) -> pd.DataFrame:
        """Ranks, rank intervals and, with a funding line (``top_k`` places, or ``threshold`` a fair average),
        P(above the line), decisions and the lottery -- :func:`~.decide.ranking.rank_objects` on the measures'
        posterior (module docstring)."""
        line = self._measure_line(threshold)
        v = self.values
        fair = self.fit.fair
        view = pd.DataFrame({"value": v["measure"], "se": v["se"], "lower": v["lower"], "upper": v["upper"],
                             "raw_mean": fair.measure_of(v["raw_mean"].to_numpy()), "n": v["n"],
                             "total_confidence": 1.0 / np.maximum(v["se"].to_numpy(), 1e-300) ** 2}, index=v.index)
        table = rank_objects(_MeasureView(view, self.stats, self.decision_basis()), top_k=top_k, threshold=line,
                             level=level, draws=draws, seed=seed, epsilon=epsilon, lottery=lottery,
                             lottery_seed=lottery_seed)
        return self._on_rubric(table, threshold, line)

    def _on_rubric(self, table: pd.DataFrame, threshold, line) -> pd.DataFrame:
        """The ranking table's values as fair averages (rubric scale), the measures beside them."""
        fair = self.fit.fair
        measure = table["value"].to_numpy(dtype=float)
        out = table.drop(columns=["total_confidence"])
        step = 1e-4
        slope = (fair(measure + step) - fair(measure - step)) / (2 * step)
        out.insert(out.columns.get_loc("value") + 1, "measure", measure)
        out["value"] = fair(measure)
        out["measure_se"] = table["se"].to_numpy()
        out["se"] = slope * table["se"].to_numpy()
        out["measure_lower"], out["measure_upper"] = table["lower"].to_numpy(), table["upper"].to_numpy()
        out["lower"], out["upper"] = fair(table["lower"].to_numpy()), fair(table["upper"].to_numpy())
        out["raw_mean"] = self.values.loc[out.index, "raw_mean"].to_numpy()
        out.attrs.update(table.attrs)
        if threshold is not None:
            out.attrs["line"] = f"fair average {float(threshold):g}"
            out.attrs["measure_line"] = line
        out.attrs["scale"] = "fair averages (rubric scale); measures in logits"
        return out

    def difference(self, first, second, level: float | None = None) -> Difference:
        """The difference of two objects' measures (logits) with its standard error and interval."""
        level = self.stats.get("interval_level", 0.95) if level is None else \
            real_argument(level, "level", low=0.5, high=1.0, high_open=True)
        index = self.values.index
        positions = []
        for name in (first, second):
            try:
                positions.append(int(index.get_loc(name)))
            except (KeyError, TypeError):
                raise InputError(f"object {name!r} is not in this panel") from None
        i, j = positions
        estimate = float(self.values["measure"].iloc[i] - self.values["measure"].iloc[j])
        se = float(np.sqrt(self.fit.posterior.difference_variance(i, j)))
        q = quantile(0.5 + level / 2, None)
        return Difference(first, second, estimate, se, estimate - q * se, estimate + q * se, level)

    def next_reads(self, *args, **kwargs) -> pd.DataFrame:
        raise InputError(f"next reads are planned with the linear models; the {self.stats['model']} model does not "
                         "plan them yet (run with model='random-assessors' for next reads)")

    def exact_agreement(self) -> pd.DataFrame:
        raise InputError(f"exact agreement is computed for the linear models; the {self.stats['model']} model does not "
                         "report it yet")

    def group_bias(self, groups, alpha: float = 0.05, min_reads: int = 2) -> pd.DataFrame:
        raise InputError(f"bias by group is computed for the linear models; the {self.stats['model']} model does not "
                         "report it yet")

    def group_audit(self, groups) -> pd.DataFrame:
        raise InputError(f"the group audit is computed for the linear models; the {self.stats['model']} model does "
                         "not report it yet")

    # ------------------------------------------------------------------ FACETS' tables
    def fit_statistics(self, by: str = "assessor") -> pd.DataFrame:
        """Infit and outfit mean-squares with ZSTD from the ordinal model's own variance, per assessor, object or
        category, and a reading (:mod:`.rasch.residuals`)."""
        if by not in ("assessor", "object", "category"):
            raise InputError(f"by must be 'assessor', 'object' or 'category', not {by!r}")
        return fit_table(self.fit, by)

    def unexpected_reads(self, top: int | None = None) -> pd.DataFrame:
        """The reads that stand out, least probable first, each explained (FACETS Table 4)."""
        from ..cells import whole_argument

        if top is not None:
            top = whole_argument(top, "top (number of reads)", low=0)
        return unexpected_table(self.fit, self.residuals, top)

    def residual_table(self) -> pd.DataFrame:
        return self.residuals

    def separation(self) -> pd.DataFrame:
        """Separation, strata and reliability of the objects' measures (posterior means: true variance = observed +
        error) and of the assessors' severities (estimates: true variance = observed - error)."""
        return separation_rows((("objects", self.values, "measure", True),
                                ("assessors", self.severities, "severity", False)), _separation_words)

    def category_table(self) -> pd.DataFrame:
        return self.categories

    def thresholds(self) -> pd.DataFrame:
        """The Rasch-Andrich thresholds with their SEs, per assessor (partial credit) or shared."""
        return assessor_thresholds(self.fit)

    def wright_map(self) -> pd.DataFrame:
        return wright_map(self.fit)

    def category_curves(self, points: int = 121) -> pd.DataFrame:
        return category_curves(self.fit, points)

    def diagnostics(self) -> pd.DataFrame:
        """The stats as a two-column (statistic, value) table with a meaning column."""
        rows = [{"statistic": k, "value": v, "meaning": statistic_meaning(k)} for k, v in self.stats.items()]
        return pd.DataFrame(rows, columns=["statistic", "value", "meaning"])

    def to_frames(self) -> dict[str, pd.DataFrame]:
        """Sheets for adapters: Measures, Severities, Categories, Thresholds, Residuals, Diagnostics."""
        return {"Measures": self.values.reset_index(), "Severities": self.severities.reset_index(),
                "Categories": self.categories.reset_index(), "Thresholds": self.thresholds(),
                "Residuals": self.residuals, "Diagnostics": self.diagnostics()}


def _separation_words(kind: str, s: dict) -> str:
    if not np.isfinite(s["separation"]):
        return "too few to judge"
    H = s["strata"]
    if kind == "objects":
        return (f"the panel can tell about {H:.1f} levels of quality apart (reliability {s['reliability']:.2f})")
    if s["p"] < 0.05:
        return (f"the assessors differ measurably in severity (about {H:.1f} distinguishable levels; test of no "
                f"difference p = {s['p']:.2g}, technical: fixed chi-square)")
    return (f"the assessors cannot be told apart in severity (test of no difference p = {s['p']:.2g}, technical: "
            "fixed chi-square)")


#: A read stands out when a category this far from its prediction (or further) has at most the probability of a
#: normal deviate beyond the anomaly threshold (3: 0.135%), the linear models' rule in probability.
def _tail_cut(anomaly_threshold: float) -> float:
    return float(ndtr(-anomaly_threshold))


def _confidence_words(fit: RaschFit) -> str:
    """What the model made of the reads' stated confidences (their slopes, :func:`.rasch.model.read_slopes`)."""
    slope = fit.marginal.panel.slope
    if np.ptp(slope) == 0:
        return "every read has the same stated confidence: each counts alike (the Rasch model itself)"
    return (f"a read's stated confidence c makes it a sharper or blunter read of the scale: its logits are multiplied "
            f"by sqrt(c / c_ref) (here {slope.min():.2g} to {slope.max():.2g}; a read of the reference confidence "
            "counts 1, as in the Rasch model)")


def _stats(fit: RaschFit, interval_level: float, anomaly_threshold: float, tail: float) -> dict[str, Any]:
    data, marginal = fit.data, fit.marginal
    stats: dict[str, Any] = {
        "n_evaluations": data.n_evaluations, "n_assessors": data.n_assessors, "n_objects": data.n_objects,
        "n_components": fit.n_components, "model": fit.model, "interval_level": interval_level,
        "interval_kind": "normal", "gauge": fit.gauge,
        "gauge_meaning": ("the assessors' severities weighted by their reads sum to zero: the typical read's assessor "
                          "has severity 0" if fit.gauge == "weighted" else "the assessors' severities sum to zero"),
        "categories": fit.categories.source, "categories_used": fit.categories.n_used,
        "categories_unused": fit.categories.unused_words(), "thresholds_order": threshold_words(fit),
        "objects_mean": fit.mu, "objects_sd": fit.sigma, "objects_sd_se": fit.sigma_se(),
        "severity_sd": float(np.std(fit.severity)),
        "estimation": ("marginal maximum likelihood, objects random N(mean, SD^2), Newton's method with the exact "
                       "observed information (Louis)"),
        "quadrature": f"adaptive Gauss-Hermite, {marginal.state.theta.shape[1]} nodes per object",
        "iterations": marginal.iterations, "converged": marginal.converged,
        "log_likelihood": marginal.state.loglik,
        "se_method": fit.posterior.method, "severity_prior": "N(0, 3^2) logits on each severity (keeps an assessor "
                                                             "whose reads all sit in one end category finite)",
        "anomaly_threshold": anomaly_threshold, "unexpected_tail": tail,
        "confidences": _confidence_words(fit),
    }
    if fit.n_components > 1:
        stats["groups"] = (f"the assessors fall into {fit.n_components} groups that share no object; they are put on "
                           "one scale by taking each group to be as strict as the panel on average (each group's "
                           "severities are centred)")
    if not marginal.converged:
        stats["warning"] = f"the fit stopped after {marginal.iterations} iterations without converging"
    return stats


def make_rasch_result(fit: RaschFit, interval_level: float = 0.95, anomaly_threshold: float = 3.0) -> RaschResult:
    """The result tables and figures of an ordinal fit."""
    tail = _tail_cut(anomaly_threshold)
    residuals = residuals_table(fit, tail)
    return RaschResult(measures_table(fit, interval_level), severities_table(fit, interval_level), residuals,
                         category_table(fit), _stats(fit, interval_level, anomaly_threshold, tail), fit)
