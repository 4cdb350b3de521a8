"""The result of a calibration: tables, figures, and the posterior every decision is drawn from.

A :class:`CalibrationResult` carries its meaning with it (model, gauge,
interval kind, units in ``stats``) so every adapter -- the workbook, the CLI,
the spreadsheet functions -- can say what its numbers are.  Its state is
declared here and set once, when :func:`~xlcalib.calibration.calibrate` makes it:
the tables, the figures, the per-component posteriors and the t degrees of
freedom (from which rankings, differences and next reads are computed).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..cells import real_argument
from ..errors import InputError
from .decide.ranking import rank_objects
from .behaviour.fitstats import fit_statistics, read_geometry, residual_table, unexpected_reads
from .behaviour.group_bias import group_audit, group_bias
from .meanings import statistic_meaning
from .models import MODEL_WORDS
from .decide.next_reads import suggest_next_reads
from .system.posterior import ComponentPosterior, Posterior, is_pooled, quantile
from .system.threads import blas_limit
from .behaviour.separation import exact_agreement, separation_table
from .behaviour.verdict import trust_sentences

__all__ = ["CalibrationResult", "DecisionBasis", "Difference"]

def _given(groups):
    if groups is None:
        raise InputError("no groups: give a mapping object -> group (a workbook's Group column is read by the run)")
    return groups


@dataclass(frozen=True)
class Difference:
    """A calibrated difference between two objects: estimate +- se and its interval."""

    first: Any
    second: Any
    estimate: float
    se: float
    lower: float
    upper: float
    level: float

    def __str__(self) -> str:
        return (f"{self.first} - {self.second} = {self.estimate:.3g} +- {self.se:.2g} "
                f"({self.level:.0%} interval {self.lower:.3g} to {self.upper:.3g})")


@dataclass
class DecisionBasis:
    """The posterior rankings and P(above the line) are drawn from, for one comparable set of objects.

    ``values``/``se``: posterior means and SDs of the objects (in the result's
    gauge, in ``object_index`` order; ``se`` is computed when first asked for --
    a ranking by places needs only draws); ``model``: the model they come from.
    For the random-assessors model this is the random-both fit of the same
    panel: a statement about where an object stands *among the others* needs
    the objects' own spread as a prior, without which the top objects look
    more certainly on top than they are (the winner's curse).
    """

    posterior: Posterior
    assessor_index: np.ndarray
    object_index: np.ndarray
    values: np.ndarray
    t_df: int | None
    model: str
    known_se: np.ndarray | None = None

    @property
    def pooled(self) -> bool:
        """The posterior pools every reader into one, "any reviewer" (see :class:`ComponentPosterior`): a next
        read is then a new reviewer's."""
        return is_pooled(self.posterior, self.assessor_index)

    @property
    def se(self) -> np.ndarray:
        if self.known_se is None:
            self.known_se = np.sqrt(self.posterior.variances()[0])
        return self.known_se


@dataclass(frozen=True)
class CalibrationResult:
    """Calibrated values, assessor biases, residuals and diagnostics; made once, complete, by
    :func:`~xlcalib.calibration.calibrate`, and never changed after (what a run adds -- the ranking it decided
    on, its input-check lines, each object's group -- belongs to the run's own record, e.g.
    :class:`xlcalib.exercises.PanelRun`).

    Attributes
    ----------
    values:
        Indexed by object: ``value`` (calibrated v_o), ``se``, ``lower``,
        ``upper``, ``robustness_bound`` (|dv_o|, score units),
        ``total_confidence`` (C_o), ``n`` (evaluations), ``raw_mean``.
    biases:
        Indexed by assessor: ``bias`` (b_a, positive = lenient/generous),
        ``se``, ``lower``, ``upper``, ``robustness_bound`` (|db_a|),
        ``total_confidence`` (C'_a), ``n``.
    residuals:
        One row per evaluation in input order: ``assessor, object, score,
        fitted, residual, std_residual, anomalous``.
    stats:
        ``n_evaluations, n_assessors, n_objects, n_components, mu2, residual
        (R), posterior_variance (w), rms_bound, gauge, uncertainty_kind`` and
        descriptive extras (``bound_meaning``, ``anomaly_threshold``,
        ``trace_method`` ...); what each means: :mod:`xlcalib.calibration.meanings`.  With
        ``per_component=True`` the per-component figures (mu2, rms_bound) are lists in component order.
    components:
        The posterior of each connected component with the positions of its
        assessors and objects in ``biases``/``values`` (what rankings,
        differences and next reads are computed from).
    t_df:
        Degrees of freedom of the Student-t intervals, or ``None`` (normal).
    decision_basis_maker:
        Makes the posterior decisions are drawn from when it differs from the values'
        (see :class:`DecisionBasis`; made once, when a ranking first asks), else ``None``.
    """

    values: pd.DataFrame
    biases: pd.DataFrame
    residuals: pd.DataFrame
    stats: dict[str, Any] = field(default_factory=dict)
    components: tuple[ComponentPosterior, ...] = ()
    t_df: int | None = None
    decision_basis_maker: Callable[[], DecisionBasis] | None = None
    #: the decision basis once made (a cache of something the result already determines, not a new fact)
    _made: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def summary(self) -> str:
        """A few plain lines: which model, how far to trust it, how precise the values are, what to look at."""
        s = self.stats
        level = s.get("interval_level", 0.95)
        t_words = " (Student t: the noise was estimated from the scores, so a little wider)" \
            if s.get("interval_kind") == "t" else ""
        lines = [
            f"Calibrated {s['n_objects']} objects from {s['n_evaluations']} evaluations by {s['n_assessors']} assessors "
            f"(model {s.get('model', 'fixed')}: {MODEL_WORDS.get(s.get('model', 'fixed'), '')}).",
            *trust_sentences(self),
            ("Values are on the panel's own scale. " if self.biases["bias"].isna().all() else
             f"Values are on the panel's own scale: biases are measured from the "
             f"{'confidence-weighted ' if s['gauge'] == 'weighted' else ''}average assessor. ") + self._noise_words(),
            self._precision_words(level, t_words),
            f"{int(self.residuals['anomalous'].sum())} read(s) stand out (further than {s['anomaly_threshold']:g} "
            "expected spreads from what the model expects).",
        ]
        if s.get("noise_check"):
            lines.append(f"Declared SDs: {s['noise_check']}.")
        if s.get("exact_fit"):
            lines.append(f"Note: {s['exact_fit']}.")
        return "\n".join(lines)

    def _precision_words(self, level: float, t_words: str) -> str:
        """How precise the values and biases are (or that no precision could be estimated)."""
        if "exact_fit" in self.stats:
            return "No standard errors: the noise of a read could not be estimated (see the note below)."
        biases = (f"assessor biases {self.biases['se'].median():.2g}" if self.biases["se"].notna().any() else
                  "readers' biases none (not estimable)")
        return (f"Calibrated values carry a standard error of median {self.values['se'].median():.2g} score points, "
                f"{biases}; every ± shown is half the width of the {level:.0%} interval{t_words}.")

    def _noise_words(self) -> str:
        """How much a read scatters around the model, in score points, with the technical figure in a note."""
        s = self.stats
        w = s.get("posterior_variance")
        if w is None or not np.isfinite(w):
            return ""
        if "face value" in str(s.get("noise_scale", "")):
            return f"The declared SDs are taken at face value (technical: noise scale w = {w:.3g})."
        which = "a Medium read" if str(s.get("uncertainty_kind")) == "level" else "a read of confidence 1"
        return (f"Estimated from the scores, {which} lies typically {np.sqrt(w):.2f} score points from what the model "
                f"expects (technical: noise scale w = {w:.3g}).")

    @property
    def one_scale(self) -> bool:
        """Whether every value is on one scale, so one ranking spans them all: a connected panel, or unconnected
        groups fitted together by a model that compares them (each group as strict as the panel on average) --
        not groups fitted each on its own scale (``per_component``).  The one rule every entry point applies
        to a funding line."""
        return len(self.components) == 1

    def decision_basis(self) -> DecisionBasis:
        """What rankings, P(above the line) and next reads are computed from (one connected, comparable panel)."""
        if self.decision_basis_maker is not None:
            if "basis" not in self._made:
                self._made["basis"] = self.decision_basis_maker()
            return self._made["basis"]
        if not self.components:
            raise InputError("this result carries no uncertainty information (make it with xlcalib.calibrate)")
        if not self.one_scale:
            raise InputError("the panel has several unconnected groups: values of different groups cannot be ranked "
                             "against each other (rank each group's result separately)")
        part = self.components[0]
        rows = self.values.iloc[part.object_index]
        return DecisionBasis(part.posterior, part.assessor_index, part.object_index,
                             rows["value"].to_numpy(dtype=float), self.t_df, self.stats.get("model", "fixed"),
                             rows["se"].to_numpy(dtype=float))

    def locate(self, name) -> tuple[Posterior, int, int]:
        """(posterior, component number, position within the component) of an object name."""
        if not self.components:
            raise InputError("this result carries no uncertainty information (make it with xlcalib.calibrate)")
        try:
            g = self.values.index.get_loc(name)
        except KeyError:
            raise InputError(f"object {name!r} is not in this panel") from None
        if not isinstance(g, (int, np.integer)):
            raise InputError(f"object {name!r} is ambiguous in this panel")
        for number, part in enumerate(self.components):
            o_idx = part.object_index
            local = np.searchsorted(o_idx, g)
            if local < o_idx.size and o_idx[local] == g:
                return part.posterior, number, int(local)
        raise InputError(f"object {name!r} has no uncertainty record")  # pragma: no cover

    def difference(self, first, second, level: float | None = None) -> Difference:
        """The calibrated difference v_first - v_second with its standard error and interval.

        Gauge-free (the common offset cancels) and exact: the variance is
        ``w [1/C_1 + 1/C_2 + (d_1 - d_2)' H (d_1 - d_2)]`` from one solve of
        the reduced system.  The interval is normal or t like the values'.
        """
        if level is None:
            level = self.stats.get("interval_level", 0.95)
        else:
            level = real_argument(level, "level", low=0.5, high=1.0, high_open=True)
        post1, comp1, i = self.locate(first)
        post2, comp2, j = self.locate(second)
        if comp1 != comp2:
            raise InputError(f"objects {first!r} and {second!r} lie in unconnected groups of the panel: "
                             "their difference is not determined by the data")
        estimate = float(self.values.at[first, "value"] - self.values.at[second, "value"])
        se = float(np.sqrt(post1.difference_variance(i, j)))
        q = quantile(0.5 + level / 2, self.t_df)
        return Difference(first, second, estimate, se, estimate - q * se, estimate + q * se, level)

    def ranking(self, top_k=None, threshold=None, level=None, draws: int = 10_000, seed: int = 0,
                epsilon: float = 0.05, lottery: bool = False, lottery_seed=None) -> pd.DataFrame:
        """Ranks, rank intervals and, with a funding line, P(above the line) and decisions.

        See :func:`xlcalib.calibration.decide.ranking.rank_objects` for the columns and the method.
        """
        with blas_limit(len(self.biases)):  # small panels: one BLAS thread for the draws' solves
            return rank_objects(self, top_k=top_k, threshold=threshold, level=level, draws=draws, seed=seed,
                                epsilon=epsilon, lottery=lottery, lottery_seed=lottery_seed)

    def next_reads(self, k, top_k=None, threshold=None, candidates=None, max_load=None, conflicts=None,
                   confidence=None, objective: str = "errors", suitability=None, min_suitability=None,
                   pending=None, levels=None) -> pd.DataFrame:
        """The k extra (assessor, object) reads that settle the funding decision best, within the panel's rules.

        Conflicts, maximum loads, pending reads and suitability (subjects) are hard constraints.
        See :func:`xlcalib.calibration.decide.next_reads.suggest_next_reads`.
        """
        return suggest_next_reads(self, k, top_k=top_k, threshold=threshold, candidates=candidates,
                                  max_load=max_load, conflicts=conflicts, confidence=confidence, objective=objective,
                                  suitability=suitability, min_suitability=min_suitability, pending=pending,
                                  levels=levels)

    # ------------------------------------------------------------------ assessor behaviour (fitstats, separation,
    # group_bias): tables computed from the residuals, standard errors and posterior of any model
    def residual_table(self) -> pd.DataFrame:
        """The residuals with each read's leverage and the leverage-corrected z the fit statistics use.

        See :func:`xlcalib.calibration.behaviour.fitstats.residual_table`.
        """
        return residual_table(self)

    def fit_statistics(self, by: str = "assessor") -> pd.DataFrame:
        """Infit and outfit mean-squares per assessor (or ``by="object"``), their ZSTD and a reading.

        See :func:`xlcalib.calibration.behaviour.fitstats.fit_statistics`.
        """
        return fit_statistics(self, by)

    def unexpected_reads(self, top: int | None = None) -> pd.DataFrame:
        """The flagged reads (or the ``top`` most unexpected), most unexpected first, each explained.

        See :func:`xlcalib.calibration.behaviour.fitstats.unexpected_reads`.
        """
        return unexpected_reads(self, top)

    def separation(self) -> pd.DataFrame:
        """Separation, strata and reliability of the objects and of the assessors.

        See :func:`xlcalib.calibration.behaviour.separation.separation_table`.
        """
        return separation_table(self)

    def exact_agreement(self) -> pd.DataFrame:
        """Exact agreement between reads of the same object per assessor (observed and expected shares, as FACETS
        reports them); the panel's figures in ``attrs``.  (Chance-corrected agreement coefficients between raters
        are :mod:`xlcalib.agreement`'s.)  See :func:`xlcalib.calibration.behaviour.separation.exact_agreement`."""
        panel, per = exact_agreement(self, read_geometry(self))
        per.attrs.update(panel)
        return per

    def group_bias(self, groups, alpha: float = 0.05, min_reads: int = 2) -> pd.DataFrame:
        """Each assessor's bias on each group of objects (``groups``: object -> group, e.g. a workbook's Group
        column as a run read it), Holm-flagged.

        See :func:`xlcalib.calibration.behaviour.group_bias.group_bias`.
        """
        alpha = real_argument(alpha, "alpha", low=0, high=1, low_open=True, high_open=True)
        return group_bias(self, _given(groups), alpha=alpha, min_reads=min_reads)

    def group_audit(self, groups) -> pd.DataFrame:
        """Group means of the calibrated values and the test that they are equal.

        See :func:`xlcalib.calibration.behaviour.group_bias.group_audit`.
        """
        return group_audit(self, _given(groups))

    def diagnostics(self) -> pd.DataFrame:
        """The stats as a two-column (statistic, value) table with a meaning column."""
        rows = []
        for key, value in self.stats.items():
            if isinstance(value, (list, tuple)):
                value = ", ".join(f"{v:.6g}" if isinstance(v, float) else str(v) for v in value)
            rows.append({"statistic": key, "value": value, "meaning": statistic_meaning(key)})
        return pd.DataFrame(rows, columns=["statistic", "value", "meaning"])

    def to_frames(self) -> dict[str, pd.DataFrame]:
        """Sheets for adapters: Values, Biases, Residuals, Diagnostics."""
        return {
            "Values": self.values.reset_index(),
            "Biases": self.biases.reset_index(),
            "Residuals": self.residual_table(),
            "Diagnostics": self.diagnostics(),
        }
