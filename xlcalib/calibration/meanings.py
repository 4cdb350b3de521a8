"""What each figure of a calibration means: one table, read by the result's Diagnostics, the workbook's
Diagnostics sheet and the spreadsheet functions alike.

Why one table: a figure shown in three places must mean the same thing in all three, and a figure added to the
fit must get its meaning once (``tests/test_calibration.py`` checks that every figure a fit reports has one).
Each entry is the figure's plain name (what the Diagnostics sheet calls it) and what it measures, in plain
words (the sheet speaks in verdicts, not formulas; the formulas are in the docstrings of the modules that
compute the figures, and the technical name stands beside each figure).
"""
from __future__ import annotations

from typing import NamedTuple

__all__ = ["Statistic", "STATISTICS", "statistic_label", "statistic_meaning"]


class Statistic(NamedTuple):
    """A figure's plain name and what it measures."""

    label: str
    meaning: str


STATISTICS: dict[str, Statistic] = {
    "n_evaluations": Statistic("reads used", "the scored (assessor, object) reads the calibration used (N)"),
    "n_assessors": Statistic("assessors", "assessors with at least one scored read (A)"),
    "n_objects": Statistic("objects", "objects with at least one scored read (O)"),
    "n_components": Statistic("groups of linked assessors",
                              "groups of assessors linked by shared objects (1 = all values comparable)"),
    "mu2": Statistic("assessor overlap", "how well shared objects tie the assessors together (0 = not at all, "
                     "1 = ideal)"),
    "residual": Statistic("total misfit", "how far the scores sit from the model in total (confidence-weighted "
                          "sum of squared differences)"),
    "posterior_variance": Statistic("noise scale used", "how much a read of confidence 1 scatters (score points "
                                    "squared, w); 1 when declared SDs are taken at face value"),
    "w_estimated": Statistic("noise scale from the data", "the same, estimated from how far the scores sit from "
                             "the fixed fit: about 1 when declared SDs are honest"),
    "noise_scale": Statistic("where the noise scale comes from",
                             "taken from the declared SDs, or estimated from the scatter"),
    "noise_check": Statistic("declared SDs checked", "the declared SDs against the scatter of the scores (a "
                             "chi-square test; fixed model)"),
    "noise_check_p": Statistic("declared SDs checked: p", "two-sided p-value of that check"),
    "model": Statistic("model", "how values and biases are estimated (random-assessors, random-both, fixed, "
                       "random-objects, or one-way when no reader can be linked to another; rating-scale or "
                       "partial-credit: the scores read as ordered categories)"),
    "model_note": Statistic("why this model", "why the model fitted is not the one asked for (e.g. every reader "
                            "read one object, so stringency is part of the noise)"),
    "icc": Statistic("agreement of reads of one object (ICC(1))", "share of a typical read's variance that is the "
                     "object's value; the rest is the readers' stringency and noise together"),
    "shrinkage_log_sd": Statistic("uncertainty of the shrinkage", "SD of log(shrinkage strength) from the restricted "
                                  "likelihood's curvature: how uncertain the values' spread is; every ± carries it "
                                  "(one-way model)"),
    "icc_k": Statistic("reliability of an object's reads together (ICC(1,k))", "the same for a typical object's reads "
                       "averaged (its median total confidence): how well the averages would agree with those of "
                       "another panel of the same size"),
    "decision_model": Statistic("model the decisions are drawn from", "rankings and P(above the line) come from "
                                "this model (values and biases both random: no winner's curse)"),
    "interval_level": Statistic("interval level", "the level of every ± and interval"),
    "interval_kind": Statistic("interval shape", "normal (SDs at face value) or Student t (the noise scale "
                               "estimated, so slightly wider)"),
    "df": Statistic("degrees of freedom", "of the Student t intervals (or of the residual, with normal intervals)"),
    "se_method": Statistic("how the standard errors were computed",
                           "exact from the reduced system's inverse, or from perturbation draws on large panels; "
                           "ordinal models: each object's posterior plus the inverse observed information"),
    "rms_bound": Statistic("robustness bound, typical (design)", "typical worst-case change of a value or bias for "
                           "score errors of the expected size: a design diagnostic, not a ±"),
    "bound_meaning": Statistic("robustness bound, in words", "what the robustness bounds measure"),
    "trace_method": Statistic("how the design summary was computed",
                              "from the graph's whole spectrum: exactly, or by a stochastic estimate"),
    "gauge": Statistic("zero of the biases", "how values and biases share their common offset"),
    "gauge_meaning": Statistic("zero of the biases, in words", "which average of the biases is zero"),
    "uncertainty_kind": Statistic("what the confidence column held", "levels, SDs or confidences"),
    "levels": Statistic("confidence levels", "the levels used and what their numbers mean"),
    "anomaly_threshold": Statistic("stands-out threshold", "reads further than this many expected spreads from "
                                   "the model are flagged"),
    "sigma_b": Statistic("spread of the assessors' biases", "SD of the biases across assessors (score points; "
                         "REML estimate, or from moments on large panels): inside its interval"),
    "sigma_b_low": Statistic("spread of the biases: lower end", "of its 95% interval (the values no 5% test rejects): "
                             "0 exactly when the test of no difference does not reject; 0 with p below 5% means "
                             "above 0, as small as you like"),
    "sigma_b_high": Statistic("spread of the biases: upper end", "of its 95% interval (from the same restricted "
                              "likelihood ratio)"),
    "sigma_b_p": Statistic("spread of the biases: p", "p-value of the test that assessors do not differ (sigma_b = 0; "
                           "below 5%: they measurably differ, and the interval excludes 0)"),
    "sigma_b_method": Statistic("how that spread was estimated", "REML estimate with its restricted-likelihood "
                                "interval and test, or moments of the fixed fit plugged in"),
    "tau2": Statistic("spread of the objects' values (squared)", "variance of the object values the model assumes "
                      "(REML)"),
    "shrinkage_lambda": Statistic("shrinkage strength", "noise scale over the values' variance: larger pulls "
                                  "values more towards the panel mean"),
    "shrinkage_note": Statistic("shrinkage, in words", "when the values' spread was estimated at (nearly) zero"),
    "scale_ends": Statistic("scores at the ends of the scale",
                            "how the model the decisions are drawn from reads them"),
    "scale_use": Statistic("scale use", "off / auto / on: whether a gain per assessor was fitted"),
    "scale_use_applied": Statistic("scale use modelled", "yes = the values come from each assessor's scores put "
                                   "on the panel's scale"),
    "scale_use_reason": Statistic("why (scale use)", "which model was used and why (the test that gains differ)"),
    "scale_use_test": Statistic("test that gains differ", "that every assessor's gain is 1 (Mandel's bundle of "
                                "lines: exact F, or chi-square)"),
    "scale_use_p": Statistic("test that gains differ: p", "p-value of that test"),
    "sigma_g": Statistic("spread of the gains", "SD of the assessors' gains (1 = the panel's spread)"),
    "scale_centre": Statistic("centre of the scale", "the value at which biases are measured when gains are "
                              "modelled"),
    "gain_se_method": Statistic("how the gains' uncertainty was computed", "joint information matrix, or each "
                                "assessor's own regression"),
    "gain_iterations": Statistic("rounds of the gain fit", "rounds of the alternating fit of values, biases and "
                                 "gains"),
    "exact_fit": Statistic("scores fit exactly", "the scores sit exactly on the model, so the noise of a read "
                           "could not be estimated: no standard errors"),
    # the ordinal models (xlcalib.calibration.rasch)
    "categories": Statistic("categories", "where the ordered categories come from: the declared scale or the scores "
                            "given"),
    "categories_used": Statistic("categories used", "the ordered categories the model has (those with reads)"),
    "categories_unused": Statistic("categories nobody used", "categories of the scale without any read: left out of "
                                   "the model, as FACETS does by default"),
    "thresholds_order": Statistic("thresholds in order", "whether the thresholds between categories advance: each "
                                  "category the most probable over a stretch of the scale (disordered: a category is "
                                  "never the most probable)"),
    "objects_mean": Statistic("objects' mean measure", "the mean of the objects' distribution (logits; the assessors "
                              "are centred at 0)"),
    "objects_sd": Statistic("spread of the objects", "SD of the objects' measures in the population (logits; "
                            "marginal maximum likelihood)"),
    "objects_sd_se": Statistic("spread of the objects: standard error", "of that SD"),
    "severity_sd": Statistic("spread of the severities", "SD of the assessors' estimated severities (logits)"),
    "estimation": Statistic("estimation method", "how the ordinal model was fitted"),
    "quadrature": Statistic("integration over the objects", "how each object's measure was integrated out"),
    "iterations": Statistic("iterations", "Newton steps until the estimates settled"),
    "converged": Statistic("converged", "yes = the estimates settled (no parameter moved by 1e-7 logits)"),
    "log_likelihood": Statistic("log-likelihood", "the marginal log-likelihood at the estimates (with the "
                                "severities' weak prior)"),
    "severity_prior": Statistic("severities' prior", "a weak prior on each severity, so an assessor whose reads "
                                "all sit in one end category keeps a finite severity"),
    "unexpected_tail": Statistic("stands-out probability", "a read stands out when a category this far from the "
                                 "panel's prediction, or further, had at most this probability"),
    "confidences": Statistic("confidences", "what the ordinal model does with SDs, confidences and levels: a more "
                             "confident read is a sharper read of the scale (its logits times sqrt(c / c_ref))"),
    "groups": Statistic("groups of assessors", "how groups of assessors that share no object are put on one scale"),
    "input checks": Statistic("input checks", "what the input checks left out or flagged"),
    "warning": Statistic("warning", "look at this"),
}


def statistic_label(key: str) -> str:
    """A figure's plain name (the key itself when it has none)."""
    entry = STATISTICS.get(key)
    return entry.label if entry is not None else key


def statistic_meaning(key: str) -> str:
    """What a figure measures ('' when it has no entry)."""
    entry = STATISTICS.get(key)
    return entry.meaning if entry is not None else ""
