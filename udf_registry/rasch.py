"""Scores as ordered categories (the many-facet Rasch model): RASCH_MEASURES, RASCH_SEVERITIES, RASCH_CATEGORIES,
RASCH_THRESHOLDS, RASCH_FIT, RASCH_UNEXPECTED, RASCH_RANKING and RASCH_STATS.

Each fits :func:`xlcalib.calibrate` with ``model="rating-scale"`` (or ``"partial-credit"``) once per distinct
input (a bounded cache, as the calibration family's) and spills one of the result's tables.  Not to be confused
with the ORD_ functions (Svensson's agreement of two raters' ordinal ratings).
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pandas as pd

import xlcalib
from xlcalib.calibration.meanings import statistic_meaning
from xlcalib.cells import (
    is_blank,
    label_vector,
    number_vector,
    parse_choice,
    parse_flag,
    parse_number,
    parse_whole,
    same_length,
    trim_trailing_blanks,
)
from xlcalib.errors import InputError

from .calibration import (
    _COMMON,
    _LOTTERY,
    _PUBLIC_SEED,
    _content_key,
    _in_ranges,
    _lottery_argument,
    _renumbered,
    _scale_cells,
)
from .registry import Arg, Cells, category, table_cells, to_cells, udf

CATEGORY = category("xlcalib Rasch", reference="Andrich (1978), Psychometrika 43:561 (rating scale); Linacre "
                                               "(1989), Many-facet Rasch measurement, and the FACETS manual (fair "
                                               "averages, fit, category tables); Bock & Aitkin (1981), Psychometrika "
                                               "46:443 (marginal maximum likelihood)")
CACHE_SIZE = 16
_cache: "OrderedDict[str, _Fitted]" = OrderedDict()

_RANGES = (
    *_COMMON[:2],  # assessors and objects as in the calibration family
    Arg("scores", "Range of scores, one per evaluation: ordered categories (a rubric's points, grades read as "
                  "numbers); a blank score beside an assessor and an object is a pending read, left out"),
)
_OPTIONS = (
    Arg("scale", "Optional two cells: the scale's lowest and highest score (its categories: every point between, "
                 "used or not); default: the distinct scores given"),
    Arg("model", 'Optional: "rating-scale" (default: thresholds shared) or "partial-credit" (thresholds per '
                 'assessor)', range=False),
    Arg("gauge", 'Optional: "weighted" (default: the read-weighted mean severity is 0) or "simple" (the plain '
                 'mean)', range=False),
    Arg("header", "Optional TRUE/FALSE: add a header row (default TRUE)", range=False),
)
_EXAMPLE = "Evaluations[Assessor], Evaluations[Object], Evaluations[Score]"
_FORMULA = ("log(P_k / P_k-1) = theta_o - beta_a - tau_k (tau_ak: partial credit); objects random N(mu, sigma^2), "
            "marginal maximum likelihood (adaptive Gauss-Hermite quadrature, Newton with the observed information); "
            "severities centred; measure = posterior mean (EAP), SE^2 = PSD^2 + g' Cov(phi) g")


class _Fitted:
    """One cached fit, the pending reads it left out and the cell tables already spilled from it."""

    __slots__ = ("result", "pending", "cells")

    def __init__(self, result, pending: list):
        self.result = result
        self.pending = pending
        self.cells: dict[tuple[str, bool], Cells] = {}


def _fitted(assessors, objects, scores, scale, model, gauge) -> _Fitted:
    """Fit once per distinct input (SHA-1 of the cells and options; errors are never cached)."""
    key = _content_key((assessors, objects, scores, scale, model, gauge, "rasch"))
    if key is not None and key in _cache:
        _cache.move_to_end(key)
        return _cache[key]
    fitted = _fit(assessors, objects, scores, scale, model, gauge)
    if key is not None:
        _cache[key] = fitted
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return fitted


def _fit(assessors, objects, scores, scale, model, gauge) -> _Fitted:
    assessors, objects, scores = trim_trailing_blanks(assessors, objects, scores)
    a = label_vector(assessors, "assessor")
    o = label_vector(objects, "object")
    s = number_vector(scores, "score", allow_blank=True)
    same_length(assessors=a, objects=o, scores=s)
    model = parse_choice(model, "model", ("rating-scale", "partial-credit"), "rating-scale")
    gauge = parse_choice(gauge, "gauge", ("weighted", "simple"), "weighted")
    scale = _scale_cells(scale)
    pending = np.isnan(s)
    scored = np.flatnonzero(~pending)
    waiting = [(a[i], o[i]) for i in np.flatnonzero(pending)]
    a, o, s = [a[i] for i in scored], [o[i] for i in scored], s[scored]
    try:
        result = xlcalib.calibrate(assessors=a, objects=o, scores=s, sd=np.ones(len(s)), model=model, gauge=gauge,
                                   scale=scale)
    except InputError as exc:
        ranges = {"assessor": assessors, "object": objects, "score": scores}
        raise _in_ranges(_renumbered(exc, scored) if pending.any() else exc, ranges) from None
    return _Fitted(result, waiting)


def _spill(fitted: _Fitted, name: str, header, build) -> Cells:
    """The cell table *name* of a cached fit, built once per header setting."""
    flag = parse_flag(header, "header", True)
    key = (name, flag)
    if key not in fitted.cells:
        table = build(fitted.result)
        fitted.cells[key] = Cells(table_cells(table, flag) if isinstance(table, dict) else to_cells(table, flag))
    return fitted.cells[key]


def _columns(table, index_name: str, columns) -> dict:
    return {index_name: table.index, **{c: table[c] for c in columns}}


_MEASURE_COLUMNS = ("object", "measure", "se", "lower", "upper", "fair_average", "fair_lower", "fair_upper",
                    "raw_mean", "n", "infit", "outfit")


@udf("RASCH_MEASURES", category=CATEGORY,
     help="Each object's measure (logits) with SE and 95% interval, its fair average (the score an assessor of "
          "average severity would give) with its interval, observed average, reads and fit (spills).",
     args=(*_RANGES, *_OPTIONS), core=xlcalib.calibrate,
     returns="table", columns=_MEASURE_COLUMNS, example=f"=RASCH_MEASURES({_EXAMPLE}, Settings!B2:B3)",
     formula=_FORMULA + "; fair average = sum_k y_k P_k(theta_o - 0) (FACETS' Fair-M average)")
def rasch_measures(assessors, objects, scores, scale=None, model=None, gauge=None, header=True):
    fitted = _fitted(assessors, objects, scores, scale, model, gauge)
    return _spill(fitted, "measures", header, lambda r: _columns(r.values, "object", _MEASURE_COLUMNS[1:]))


_SEVERITY_COLUMNS = ("assessor", "severity", "se", "lower", "upper", "fair_average", "observed_average", "n", "infit",
                     "infit_zstd", "outfit", "outfit_zstd", "reading")


@udf("RASCH_SEVERITIES", category=CATEGORY,
     help="Each assessor's severity (logits; above 0 = harsher) with SE and 95% interval, the score they would "
          "give an average object, observed average, reads, infit/outfit with ZSTD and a reading (spills).",
     args=(*_RANGES, *_OPTIONS), core=xlcalib.calibrate, returns="table", columns=_SEVERITY_COLUMNS,
     example=f"=RASCH_SEVERITIES({_EXAMPLE})",
     formula=_FORMULA + "; fit from each read against its leave-one-out prediction: infit = sum(e^2 - U)/sum W, "
                        "outfit = mean((e^2 - U)/W), W the read's model variance, U its measure's uncertainty")
def rasch_severities(assessors, objects, scores, scale=None, model=None, gauge=None, header=True):
    fitted = _fitted(assessors, objects, scores, scale, model, gauge)
    return _spill(fitted, "severities", header, lambda r: _columns(r.severities, "assessor", _SEVERITY_COLUMNS[1:]))


_CATEGORY_COLUMNS = ("category", "count", "percent", "cumulative_percent", "average_measure", "expected_measure",
                     "outfit", "threshold", "threshold_se", "category_measure", "advances")


@udf("RASCH_CATEGORIES", category=CATEGORY,
     help="The category table (FACETS Table 8): count, %, average measure of its reads and its expectation, "
          "outfit, the Rasch-Andrich threshold into it with its SE, whether the thresholds advance; unused "
          "categories with count 0 (spills).",
     args=(*_RANGES, *_OPTIONS), core=xlcalib.calibration.RaschResult.category_table, returns="table",
     columns=_CATEGORY_COLUMNS, example=f"=RASCH_CATEGORIES({_EXAMPLE}, Settings!B2:B3)",
     formula="tau_k = c_k-1 - c_k (c the category intercepts), SE from the inverse observed information; average "
             "measure = mean of (theta_o - beta_a) over the reads in the category")
def rasch_categories(assessors, objects, scores, scale=None, model=None, gauge=None, header=True):
    fitted = _fitted(assessors, objects, scores, scale, model, gauge)
    return _spill(fitted, "categories", header,
                  lambda r: _columns(r.categories, "category", _CATEGORY_COLUMNS[1:]))


@udf("RASCH_THRESHOLDS", category=CATEGORY,
     help="The Rasch-Andrich thresholds with their SEs and whether each lies above the one before: one set shared "
          "(rating-scale) or one per assessor (partial-credit) (spills).",
     args=(*_RANGES, *_OPTIONS), core=xlcalib.calibration.RaschResult.thresholds, returns="table",
     columns=("assessor", "category", "threshold", "se", "ordered"),
     example=f'=RASCH_THRESHOLDS({_EXAMPLE}, , "partial-credit")',
     formula="tau_ak: the point where categories k-1 and k are equally probable for assessor a")
def rasch_thresholds(assessors, objects, scores, scale=None, model=None, gauge=None, header=True):
    fitted = _fitted(assessors, objects, scores, scale, model, gauge)
    return _spill(fitted, "thresholds", header, lambda r: r.thresholds())


_FIT_COLUMNS = ("element", "n", "infit", "infit_zstd", "outfit", "outfit_zstd", "reading")


@udf("RASCH_FIT", category=CATEGORY,
     help="Infit and outfit mean-squares with ZSTD from the ordinal model's own variance, per assessor, object or "
          "category, and a reading: about 1 = as expected, above 1.5 erratic, below 0.5 too predictable (spills).",
     args=(*_RANGES, Arg("by", 'Optional: "assessor" (default), "object" or "category"', range=False), *_OPTIONS),
     core=xlcalib.calibration.RaschResult.fit_statistics, returns="table", columns=_FIT_COLUMNS,
     example=f'=RASCH_FIT({_EXAMPLE}, "assessor")',
     formula="e = x - E (leave-one-out prediction), W = E[V(theta)], U = Var[E(theta)], C the predictive fourth "
             "moment; outfit = mean((e^2 - U)/W), infit = sum(e^2 - U)/sum W; ZSTD = (MS^(1/3) - 1)(3/q) + q/3, "
             "q^2 = sum (C - (W + U)^2)/W^2/n^2 or sum (C - (W + U)^2)/(sum W)^2")
def rasch_fit(assessors, objects, scores, by=None, scale=None, model=None, gauge=None, header=True):
    by = parse_choice(by, "by", ("assessor", "object", "category"), "assessor")
    fitted = _fitted(assessors, objects, scores, scale, model, gauge)

    def build(result):
        table = result.fit_statistics(by)
        return {"element": table.index, **{c: table[c] for c in _FIT_COLUMNS[1:]}}

    return _spill(fitted, f"fit:{by}", header, build)


_UNEXPECTED_COLUMNS = ("assessor", "object", "score", "expected", "z", "probability", "tail", "chance",
                       "other_scores", "flagged", "in_words")


@udf("RASCH_UNEXPECTED", category=CATEGORY,
     help="The reads that stand out, least probable first (FACETS Table 4): the score, what the object's other "
          "reads predict, the probability of a category this far out or further, and a sentence; top: the top "
          "least probable whether flagged or not (spills).",
     args=(*_RANGES, Arg("top", "Optional number of reads to list (default: the flagged ones)", range=False),
           *_OPTIONS),
     core=xlcalib.calibration.RaschResult.unexpected_reads, returns="table", columns=_UNEXPECTED_COLUMNS,
     example=f"=RASCH_UNEXPECTED({_EXAMPLE}, 10)",
     formula="tail = P(this category or one further from the prediction) under the leave-one-out predictive "
             "distribution; flagged when below Phi(-3) = 0.135%")
def rasch_unexpected(assessors, objects, scores, top=None, scale=None, model=None, gauge=None, header=True):
    top = None if is_blank(top) else parse_whole(top, "top", 10, low=0)
    fitted = _fitted(assessors, objects, scores, scale, model, gauge)
    return _spill(fitted, f"unexpected:{top}", header, lambda r: r.unexpected_reads(top))


_RANKING_COLUMNS = ("object", "rank", "measure", "fair_average", "lower", "upper", "expected_rank", "rank_lower",
                    "rank_upper", "p_above", "settled", "decision", "final", "chance")


@udf("RASCH_RANKING", category=CATEGORY,
     help="Ranking by measure with rank intervals; given a funding line (top k, or a fair average): P(above the "
          "line), above/below/borderline and the final decision, drawn from the measures' joint posterior (spills).",
     args=(*_RANGES,
           Arg("top_k", "Optional funding line: number of places", range=False),
           Arg("threshold", "Optional funding line instead: a fair average (rubric scale) an object must reach",
               range=False),
           Arg("draws", "Optional Monte Carlo draws (default 10000, at least 100)", range=False),
           Arg("seed", "Optional random seed (default 0)", range=False),
           *_OPTIONS,
           _LOTTERY, _PUBLIC_SEED),
     core=xlcalib.calibration.RaschResult.ranking, returns="table", columns=_RANKING_COLUMNS,
     example=f"=RASCH_RANKING({_EXAMPLE}, 10)",
     formula="draws theta = EAP + PSD z + G xi, xi ~ N(0, Cov(phi)); P(above) = share of draws ranked <= top_k, or "
             "P(theta > the measure whose fair average is the threshold); lower/upper: fair averages at the "
             "measure's 95% interval")
def rasch_ranking(assessors, objects, scores, top_k=None, threshold=None, draws=None, seed=None, scale=None,
                  model=None, gauge=None, header=True, lottery=None, public_seed=None):
    top_k = None if is_blank(top_k) else parse_whole(top_k, "top_k", 1, low=1)
    threshold = None if is_blank(threshold) else parse_number(threshold, "the threshold argument")
    draws = parse_whole(draws, "draws", 10_000, low=100)
    seed = parse_whole(seed, "seed", 0, low=0)
    lottery = _lottery_argument(lottery)
    public_seed = None if is_blank(public_seed) else public_seed
    fitted = _fitted(assessors, objects, scores, scale, model, gauge)

    def build(result):
        table = result.ranking(top_k=top_k, threshold=threshold, draws=draws, seed=seed, lottery=lottery,
                               lottery_seed=public_seed)
        table = table.rename(columns={"value": "fair_average"})
        return {"object": table.index, **{c: table[c] if c in table else [None] * len(table)
                                          for c in _RANKING_COLUMNS[1:]}}

    return _spill(fitted, f"ranking:{top_k}:{threshold}:{draws}:{seed}:{lottery}:{public_seed!r}", header, build)


@udf("RASCH_STATS", category=CATEGORY,
     help="The fit's figures with what each means: categories used and unused, whether the thresholds advance, the "
          "objects' mean and spread, the severities' spread, the method, iterations (spills).",
     args=(*_RANGES, *_OPTIONS), core=xlcalib.calibration.RaschResult.diagnostics, returns="table",
     columns=("statistic", "value", "meaning"), example=f"=RASCH_STATS({_EXAMPLE})",
     formula="see xlcalib.calibration.meanings for each figure")
def rasch_stats(assessors, objects, scores, scale=None, model=None, gauge=None, header=True):
    fitted = _fitted(assessors, objects, scores, scale, model, gauge)

    def build(result):
        stats = dict(result.stats)
        if fitted.pending:
            stats["input checks"] = f"{len(fitted.pending)} pending evaluation(s) (blank score) left out"
        keys = list(stats)
        return {"statistic": keys, "value": pd.Series([stats[k] for k in keys], dtype=object),
                "meaning": [statistic_meaning(k) for k in keys]}

    return _spill(fitted, "stats", header, build)
