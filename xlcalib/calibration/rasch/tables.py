"""The ordinal model's tables, as FACETS users read them: measures (Table 7, objects), severities (Table 7,
assessors), the category table (Table 8), each read against its prediction, the unexpected reads (Table 4),
and the numbers the Wright map and the category probability curves draw.

Words for fit (Linacre's "productive for measurement" range 0.5-1.5, beyond chance when |ZSTD| > 2): an
assessor above it is *erratic* (their categories scatter more than the model predicts from the others' reads),
below it *too predictable* -- with ordered categories the usual cause is central tendency (keeping to the middle
categories) or a halo; FACETS' reading of the same numbers.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import ndtri

from .likelihood import log_probabilities
from .measures import category_measures
from .model import RaschFit
from .residuals import mean_squares

__all__ = ["ERRATIC", "PREDICTABLE", "SIGNIFICANT_ZSTD", "measures_table", "severities_table", "residuals_table",
           "fit_table", "category_table", "threshold_words", "unexpected_table", "wright_map", "category_curves",
           "fit_reading", "assessor_thresholds"]

ERRATIC, PREDICTABLE, SIGNIFICANT_ZSTD = 1.5, 0.5, 2.0


def fit_reading(infit: float, infit_zstd: float, outfit: float, outfit_zstd: float, n: int) -> str:
    """'as expected', 'erratic ...' or 'too predictable ...' from the mean-squares and their ZSTD."""
    if n < 3 or not np.isfinite(outfit):
        return "too few reads to judge"
    if (infit > ERRATIC and infit_zstd > SIGNIFICANT_ZSTD) or (outfit > ERRATIC and outfit_zstd > SIGNIFICANT_ZSTD):
        return "erratic: the categories given scatter more than the other reads predict"
    if (infit < PREDICTABLE and infit_zstd < -SIGNIFICANT_ZSTD) or \
            (outfit < PREDICTABLE and outfit_zstd < -SIGNIFICANT_ZSTD):
        return "too predictable: keeps to expected categories (central tendency or halo)"
    return "as expected"


def _quantile(level: float) -> float:
    return float(ndtri(0.5 + level / 2))


def _groups(fit: RaschFit, frame: pd.DataFrame, which: str) -> pd.DataFrame:
    """Unconnected groups fitted together: each row's group (values comparable only through the gauge's
    assumption that each group is as strict as the panel on average)."""
    if fit.n_components > 1:
        frame["group"] = (fit.component_of_assessor if which == "a" else fit.component_of_object) + 1
    return frame


def fit_table(fit: RaschFit, by: str) -> pd.DataFrame:
    """Infit / outfit with ZSTD per assessor, object or category, and a reading (module docstring)."""
    data = fit.data
    group, index = {"assessor": (data.ai, data.assessor_names), "object": (data.oi, data.object_names),
                    "category": (fit.categories.code, pd.Index(fit.categories.used_values, name="category"))}[by]
    out = mean_squares(fit.predictions, fit.categories.code, group, len(index))
    out.index = pd.Index(index, name=by)
    out["reading"] = [fit_reading(*row) for row in out[["infit", "infit_zstd", "outfit", "outfit_zstd", "n"]]
                      .itertuples(index=False)]
    return out


def measures_table(fit: RaschFit, level: float) -> pd.DataFrame:
    """Objects (FACETS Table 7): measure (EAP, logits) with SE and interval, fair average with its interval on
    the rubric's scale, observed average, reads, fit."""
    data, m = fit.data, fit.measures
    q = _quantile(level)
    lower, upper = m.measure - q * m.se, m.measure + q * m.se
    n = np.bincount(data.oi, minlength=data.n_objects)
    fit_o = fit_table(fit, "object")
    frame = pd.DataFrame({
        "measure": m.measure, "se": m.se, "lower": lower, "upper": upper,
        "fair_average": fit.fair(m.measure), "fair_lower": fit.fair(lower), "fair_upper": fit.fair(upper),
        "raw_mean": np.bincount(data.oi, weights=data.scores, minlength=data.n_objects) / n, "n": n,
        "infit": fit_o["infit"].to_numpy(), "infit_zstd": fit_o["infit_zstd"].to_numpy(),
        "outfit": fit_o["outfit"].to_numpy(), "outfit_zstd": fit_o["outfit_zstd"].to_numpy(),
    }, index=pd.Index(data.object_names.to_numpy(), name="object"))
    return _groups(fit, frame, "o")


def _extreme_words(fit: RaschFit) -> np.ndarray:
    """Per assessor: '' or why their severity rests on the prior (every read in one end category)."""
    code, ai, A = fit.categories.code, fit.data.ai, fit.data.n_assessors
    K = fit.categories.n_used
    low = np.bincount(ai, weights=(code == 0).astype(float), minlength=A)
    high = np.bincount(ai, weights=(code == K - 1).astype(float), minlength=A)
    n = np.bincount(ai, minlength=A)
    words = np.full(A, "", dtype=object)
    words[low == n] = "every read in the lowest category: severity only bounded (wide ±)"
    words[high == n] = "every read in the highest category: leniency only bounded (wide ±)"
    return words


def severities_table(fit: RaschFit, level: float) -> pd.DataFrame:
    """Assessors (FACETS Table 7): severity (logits, positive = harsher) with SE and interval, the expected score
    for an object of the panel's mean measure (fair average), observed average, reads, fit, a reading."""
    data = fit.data
    q = _quantile(level)
    n = np.bincount(data.ai, minlength=data.n_assessors)
    c = fit.intercepts()
    group = fit.marginal.layout.group
    values = fit.categories.used_values
    eta = fit.mu - fit.severity
    fair = np.exp(log_probabilities(eta, c[group])) @ values  # each assessor's own structure
    fit_a = fit_table(fit, "assessor")
    frame = pd.DataFrame({
        "severity": fit.severity, "se": fit.severity_se, "lower": fit.severity - q * fit.severity_se,
        "upper": fit.severity + q * fit.severity_se, "fair_average": fair,
        "observed_average": np.bincount(data.ai, weights=data.scores, minlength=data.n_assessors) / n, "n": n,
        "infit": fit_a["infit"].to_numpy(), "infit_zstd": fit_a["infit_zstd"].to_numpy(),
        "outfit": fit_a["outfit"].to_numpy(), "outfit_zstd": fit_a["outfit_zstd"].to_numpy(),
        "reading": fit_a["reading"].to_numpy(), "extreme": _extreme_words(fit),
    }, index=pd.Index(data.assessor_names.to_numpy(), name="assessor"))
    return _groups(fit, frame, "a")


def residuals_table(fit: RaschFit, flag_tail: float) -> pd.DataFrame:
    """Every read (input order) against its leave-one-out prediction: the expected score (rubric units), the
    difference, z, the predictive probability of the category given and of one as far out or further (tail),
    and whether it stands out (tail below *flag_tail*)."""
    data, pred = fit.data, fit.predictions
    return pd.DataFrame({
        "assessor": data.assessor_labels, "object": data.object_labels, "score": data.scores,
        "expected": pred.expected_score, "residual": data.scores - pred.expected_score, "z": pred.z,
        "probability": pred.p_observed, "tail": pred.tail, "unexpected": pred.tail < flag_tail})


def _others(fit: RaschFit, reads: np.ndarray) -> list[str]:
    """The other scores of each chosen read's object, unnamed, in input order ('4, 5, 6')."""
    data = fit.data
    order = np.argsort(data.oi, kind="stable")
    starts = np.searchsorted(data.oi[order], np.arange(data.n_objects + 1))
    out = []
    for r in reads:  # only the few reads shown
        o = data.oi[r]
        mine = order[starts[o]:starts[o + 1]]
        out.append(", ".join(f"{v:g}" for v in data.scores[np.sort(mine[mine != r])]))
    return out


def _chance(tail: np.ndarray) -> np.ndarray:
    """About one read in this many lies this far out on that side by chance (rounded to 2 significant digits)."""
    with np.errstate(divide="ignore"):
        n = 1.0 / np.maximum(tail, 1e-300)
    digits = np.floor(np.log10(np.maximum(n, 1.0)))
    return np.round(n / 10 ** (digits - 1)) * 10 ** (digits - 1)


def unexpected_table(fit: RaschFit, residuals: pd.DataFrame, top: int | None = None) -> pd.DataFrame:
    """The reads that stand out, least probable first (FACETS Table 4, ranked by the predictive probability of a
    category as far out or further), each with the panel's view and a sentence; ``top``: the *top* least
    probable whether flagged or not."""
    tail = residuals["tail"].to_numpy(dtype=float)
    order = np.lexsort((np.arange(tail.size), np.round(tail, 12)))
    flagged = residuals["unexpected"].to_numpy(dtype=bool)
    chosen = order[flagged[order]] if top is None else order[:top]
    rows = residuals.iloc[chosen]
    out = pd.DataFrame({
        "assessor": rows["assessor"].to_numpy(), "object": rows["object"].to_numpy(),
        "score": rows["score"].to_numpy(dtype=float), "expected": rows["expected"].to_numpy(dtype=float),
        "z": rows["z"].to_numpy(dtype=float), "probability": rows["probability"].to_numpy(dtype=float),
        "tail": tail[chosen], "chance": _chance(tail[chosen]), "other_scores": _others(fit, chosen),
        "flagged": flagged[chosen]})
    out["in_words"] = [_read_sentence(r) for r in out.itertuples(index=False)]
    return out


def _read_sentence(r) -> str:
    side, beyond = ("higher", "or higher") if r.score > r.expected else ("lower", "or lower")
    others = f" (the other reads gave {r.other_scores})" if r.other_scores else ""
    return (f"{r.assessor} gave {r.object} {r.score:g} where {r.expected:.2f} was expected from the panel's other "
            f"reads and their severity{others}; a {r.score:g} {beyond} had probability {r.tail:.2%}: about 1 read in "
            f"{r.chance:,.0f} lies this far {'above' if side == 'higher' else 'below'} by chance.")


def category_table(fit: RaschFit) -> pd.DataFrame:
    """The category table (FACETS Table 8), one row per category of the scale (unused ones included, empty):
    count, %, cumulative %, the average measure (object measure less severity) of the reads in it and its
    expectation, outfit, the Rasch-Andrich threshold into it with its SE (shared thresholds only), the category
    measure, and whether the thresholds advance."""
    cats, data, pred = fit.categories, fit.data, fit.predictions
    K = cats.n_used
    code = cats.code
    measure = fit.measures.measure[data.oi] - fit.severity[data.ai]
    count = np.bincount(code, minlength=K).astype(float)
    average = np.bincount(code, weights=measure, minlength=K) / np.maximum(count, 1)
    expected = (pred.probabilities @ measure) / np.maximum(pred.probabilities.sum(axis=1), 1e-300)
    fit_c = fit_table(fit, "category")
    used = pd.DataFrame({"count": count.astype(int), "percent": 100 * count / count.sum(),
                         "average_measure": average, "expected_measure": expected,
                         "outfit": fit_c["outfit"].to_numpy()}, index=pd.Index(cats.used_values, name="category"))
    used["cumulative_percent"] = used["percent"].cumsum()
    shared = fit.thresholds.shape[0] == 1
    tau = np.concatenate([[np.nan], fit.thresholds[0]]) if shared else np.full(K, np.nan)
    tau_se = np.concatenate([[np.nan], fit.threshold_se[0]]) if shared else np.full(K, np.nan)
    used["threshold"], used["threshold_se"] = tau, tau_se
    if shared:
        used["category_measure"] = category_measures(fit.intercepts()[0])
        advance = np.concatenate([[np.nan, np.nan], np.diff(fit.thresholds[0])]) > 0
        used["advances"] = np.where(np.arange(K) >= 2, np.where(advance, "yes", "no: disordered"), "")
    else:  # thresholds per assessor: their order is each assessor's (assessor_thresholds)
        used["category_measure"] = np.nan
        used["advances"] = np.where(np.arange(K) >= 2, "per assessor", "")
    used["average_advances"] = np.concatenate([[""], np.where(np.diff(average) > 0, "yes", "no")])
    table = used.reindex(pd.Index(cats.values, name="category"))
    table["count"] = table["count"].fillna(0).astype(int)
    table["percent"] = table["percent"].fillna(0.0)
    table["cumulative_percent"] = table["cumulative_percent"].ffill().fillna(0.0)
    for column in ("advances", "average_advances"):
        if column in table:
            table[column] = table[column].fillna("unused")
    return table


def threshold_words(fit: RaschFit) -> str:
    """Whether the thresholds advance in order, in words; each disordered pair named, with whether the reversal is
    beyond chance (more than two standard errors)."""
    values = fit.categories.used_values
    tau, gap_se = fit.thresholds, fit.threshold_gap_se
    if tau.shape[1] < 2:
        return "one threshold (two categories used): nothing to order"
    if tau.shape[0] > 1:
        names = fit.data.assessor_names.to_numpy()
        bad = [names[g] for g in range(tau.shape[0]) if np.any(np.diff(tau[g][np.isfinite(tau[g])]) < 0)]
        if not bad:
            return "Every assessor's thresholds advance in order: each of their categories is the most probable " \
                   "over a stretch of the scale."
        return (f"{len(bad)} assessor(s) have disordered thresholds ({', '.join(map(str, bad[:8]))}"
                f"{' ...' if len(bad) > 8 else ''}): some of their categories are never the most probable one; "
                "see the Thresholds table.")
    t = tau[0]
    parts = []
    for k in range(1, t.size):
        gap = t[k] - t[k - 1]
        if gap < 0:
            beyond = gap / gap_se[0, k] < -2 if np.isfinite(gap_se[0, k]) and gap_se[0, k] > 0 else False
            parts.append(f"the threshold into {values[k + 1]:g} ({t[k]:+.2f}) lies below the one into {values[k]:g} "
                         f"({t[k - 1]:+.2f}){' beyond chance' if beyond else ' (within chance)'}: category "
                         f"{values[k]:g} is never the most probable one, so the assessors do not use it as a step "
                         f"between {values[k - 1]:g} and {values[k + 1]:g}")
    if not parts:
        return ("The thresholds advance in order (" + ", ".join(f"{x:+.2f}" for x in t) + " logits): each category is "
                "the most probable one over a stretch of the scale.")
    return ("Disordered thresholds: " + "; ".join(parts) + ". Consider merging such a category with a neighbour, or "
            "clearer descriptors for it.")


def assessor_thresholds(fit: RaschFit) -> pd.DataFrame:
    """Each structure's thresholds, long (assessor, category stepped into, threshold, se, ordered): the partial
    credit model's own thresholds, or the shared ones once under 'all assessors'."""
    values = fit.categories.used_values
    tau, se = fit.thresholds, fit.threshold_se
    names = fit.data.assessor_names.to_numpy() if tau.shape[0] > 1 else np.array(["all assessors"], dtype=object)
    G, steps = tau.shape
    frame = pd.DataFrame({"assessor": np.repeat(names, steps), "category": np.tile(values[1:], G),
                          "threshold": tau.ravel(), "se": se.ravel()})
    previous = np.concatenate([np.full((G, 1), -np.inf), tau[:, :-1]], axis=1)
    frame["ordered"] = np.where(np.isnan(tau.ravel()), "not used", np.where((tau > previous).ravel(), "yes", "no"))
    return frame


def wright_map(fit: RaschFit) -> pd.DataFrame:
    """Objects and assessors on one logit ruler (the Wright map's numbers): facet, name, measure (objects' measures,
    assessors' severities), se."""
    data = fit.data
    return pd.DataFrame({
        "facet": ["object"] * data.n_objects + ["assessor"] * data.n_assessors,
        "name": list(data.object_names.to_numpy()) + list(data.assessor_names.to_numpy()),
        "measure": np.concatenate([fit.measures.measure, fit.severity]),
        "se": np.concatenate([fit.measures.se, fit.severity_se])})


def category_curves(fit: RaschFit, points: int = 121) -> pd.DataFrame:
    """The category probability curves of the shared structure (or the assessors' average): P(category) against
    the measure relative to the assessor (theta - beta, logits), with the expected score."""
    c = fit.intercepts()
    span = float(np.nanmax(np.abs(np.concatenate([fit.thresholds[np.isfinite(fit.thresholds)], [2.0]])))) + 3.0
    eta = np.linspace(-span, span, points)
    probs = np.exp(log_probabilities(eta[:, None], c[None, :, :])).mean(axis=1)
    values = fit.categories.used_values
    frame = pd.DataFrame(probs, columns=[f"{v:g}" for v in values])
    frame.insert(0, "measure relative to assessor", eta)
    frame["expected score"] = probs @ values
    return frame
