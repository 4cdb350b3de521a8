"""Uncertain ground truth family: GT_IRN, GT_PLAUSIBILITY, GT_CERTAINTY, GT_UA_ACCURACY, GT_UA_SET_ACCURACY,
GT_UA_OVERLAP, GT_THRESHOLD_CERTAINTY.

Annotations are an items x annotators range; each cell one annotation written
like ``Melanoma > Nevus = Hemangioma`` (``>`` between blocks, ``=`` for ties),
or a single label; blank = that annotator did not annotate the item.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from xlcalib import ground_truth as gt
from xlcalib.cells import (
    as_rows,
    is_blank,
    label_vector,
    number_grid,
    parse_choice,
    parse_label,
    parse_number,
    parse_whole,
)
from xlcalib.errors import InputError

from .registry import Arg, category, udf

CATEGORY = category("xlcalib Uncertain ground truth", reference='Stutz et al. (2023), "Evaluating AI systems under '
                                                                 'uncertain ground truth: a case study in dermatology", '
                                                                 'arXiv:2307.02191')
_ANN = Arg("annotations", "Items x annotators range; each cell like 'Melanoma > Nevus = Hemangioma' (blank = none)")
_CLASSES = Arg("classes", "Range listing every class name once")
_REL = Arg("reliability", "Optional reliability gamma > 0 (default 1): trust in the annotators", range=False)
_SAMPLES = Arg("samples", "Optional Monte Carlo samples M (default 1000)", range=False)
_SEED = Arg("seed", "Optional random seed (default 0; same seed, same answer)", range=False)
_HEADER = Arg("header", "Optional TRUE/FALSE: add a header row (default TRUE)", range=False)
_SETTING = Arg("setting", 'Optional "xlcalib" (default; IRN weight 1/i divided by the block size, PrIRN '
               'Dirichlet(gamma*IRN)) or "reference" (the paper\'s public code: weight 1/i, Dirichlet(gamma*IRN + 0.01))',
               range=False)
_REF = "Stutz et al. 2023,"


def _classes(classes) -> list[str]:
    names = [c for c in label_vector(classes, "classes", allow_blank=True) if c is not None]
    if len(names) < 2:
        raise InputError("the class list needs at least 2 classes")
    lowered = [n.lower() for n in names]
    if len(set(lowered)) != len(lowered):
        dup = next(n for n in names if lowered.count(n.lower()) > 1)
        raise InputError(f"class '{dup}' is listed twice in the class list")
    return names


def _annotations(annotations, names):
    rows = as_rows(annotations)
    cases = []
    for i, row in enumerate(rows):
        case = []
        for j, cell in enumerate(row):
            if is_blank(cell):
                continue
            # a class typed as a number (3 arrives as 3.0) reads as "3", like the class list; error values are named
            text = parse_label(cell, f"row {i + 1}, column {j + 1} of the annotations range")
            case.append(gt.parse_ranking(text, names, where=f"annotation in row {i + 1}, column {j + 1}"))
        if not case:
            raise InputError(f"row {i + 1} of the annotations range has no annotation")
        cases.append(case)
    return cases


def _setting(value):
    """The ``setting`` argument: blank -> "xlcalib"; anything else must name a setting (see xlcalib.ground_truth.settings)."""
    if isinstance(value, (bool, np.bool_)):  # a formula written before setting existed, passing header in its place
        raise InputError(f"the setting argument must be xlcalib or reference, not {str(bool(value)).upper()} "
                         "(header is the argument after setting)")
    return gt.resolve_setting(parse_choice(value, "setting", tuple(gt.SETTINGS), "xlcalib"))


def _int(value, name, default, low=1):
    return parse_whole(value, name, default, low)


def _positive(value, name, default):
    if is_blank(value):
        return default
    v = parse_number(value, f"the {name} argument")
    if not v > 0:
        raise InputError(f"the {name} argument must be positive")
    return v


def _concentration(cases, names, reliability, model, prior, setting):
    """PrIRN (gamma * IRN, structural zeros; base = the setting's alpha) or the Dirichlet gamma * counts + alpha.

    Returns (concentration, base, description): certainty is computed under
    Dirichlet(concentration + base).
    """
    single = all(len(r) == 1 and len(r[0]) == 1 for case in cases for r in case)
    model = parse_choice(model, "model", ("auto", "prirn", "dirichlet"), "auto")
    if model == "dirichlet" or (model == "auto" and single):
        if not single:
            raise InputError("the dirichlet model needs single-label annotations (one label per cell)")
        counts = np.zeros((len(cases), len(names)))
        for i, case in enumerate(cases):
            for r in case:
                counts[i, r[0][0]] += 1
        return gt.dirichlet_concentration(counts, reliability, prior), 0.0, "Dirichlet(gamma*counts + alpha)"
    conc = reliability * gt.irn(cases, len(names), setting=setting)
    return conc, setting.prirn_alpha, "PrIRN = Dirichlet(gamma*IRN + alpha)"


@udf("GT_IRN", category=CATEGORY, help="Inverse-rank-normalised plausibility of every class per item (spills, one row per item).",
     args=(_ANN, _CLASSES, _SETTING, _HEADER), core=gt.irn, returns="table", columns=('item',), columns_note="then one column per class, in the order of the class list", example="=GT_IRN(B2:G101, Classes!A2:A20)",
     formula=_REF + " eq. 14-16: class in block i gets (1/i)/|b_i| (reference setting: 1/i, every named block), summed over annotators, normalised")
def gt_irn(annotations, classes, setting=None, header=True):
    names = _classes(classes)
    p = gt.irn(_annotations(annotations, names), len(names), setting=_setting(setting))
    return pd.DataFrame(p, columns=names).assign(item=np.arange(1, len(p) + 1))[["item", *names]]


@udf("GT_PLAUSIBILITY", category=CATEGORY,
     help="Per item and plausible class: IRN plausibility and the probability the class is the true top-1 (spills).",
     args=(_ANN, _CLASSES, _REL, _SAMPLES, _SEED, _SETTING, _HEADER), core=gt.sample_dirichlet, returns="table", columns=('item', 'class', 'irn_plausibility', 'p_top1'),
     example="=GT_PLAUSIBILITY(B2:G101, Classes!A2:A20, 3)",
     formula=_REF + " eq. 2-3: Certainty(y) = P(y = argmax lambda), lambda ~ PrIRN")
def gt_plausibility(annotations, classes, reliability=None, samples=None, seed=None, setting=None, header=True):
    names = _classes(classes)
    cases = _annotations(annotations, names)
    setting = _setting(setting)
    plaus = gt.irn(cases, len(names), setting=setting)
    conc = gt.prirn_concentration(cases, len(names), _positive(reliability, "reliability", 1.0), setting=setting)
    draws = gt.sample_dirichlet(conc, _int(samples, "samples", 1000), _int(seed, "seed", 0, low=0))
    top = draws.argmax(axis=2).astype(np.intp)
    rows = []
    for i in range(len(cases)):
        prob = np.bincount(top[i], minlength=len(names)) / draws.shape[1]
        # every class with IRN plausibility, then (reference setting: alpha on every class) any other that ever won
        shown = np.flatnonzero((plaus[i] > 0) | (prob > 0))
        for c in shown[np.lexsort((-prob[shown], -plaus[i][shown]))]:
            rows.append((i + 1, names[c], plaus[i, c], prob[c]))
    return pd.DataFrame(rows, columns=["item", "class", "irn_plausibility", "p_top1"])


@udf("GT_CERTAINTY", category=CATEGORY, help="Annotation certainty per item (top-1 or top-j) and the most certain label(s).",
     args=(_ANN, _CLASSES, _REL, _SAMPLES, _SEED,
           Arg("top", "Optional j for top-j certainty (default 1)", range=False),
           Arg("model", 'Optional "auto" (default), "prirn" or "dirichlet" (single-label annotations, prior 1)', range=False),
           _SETTING, _HEADER),
     core=gt.annotation_certainty, returns="table", columns=('item', 'certainty', 'label'), example="=GT_CERTAINTY(B2:G101, Classes!A2:A20, 3)",
     formula=_REF + " eq. 4-6: max over label sets C of P(C = top-|C| labels of lambda)")
def gt_certainty(annotations, classes, reliability=None, samples=None, seed=None, top=None, model=None, setting=None,
                 header=True):
    names = _classes(classes)
    cases = _annotations(annotations, names)
    conc, base, _ = _concentration(cases, names, _positive(reliability, "reliability", 1.0), model, 1.0, _setting(setting))
    top = _int(top, "top", 1)
    cert, labels = gt.certainty_from_concentration(conc, _int(samples, "samples", 1000), _int(seed, "seed", 0, low=0), top,
                                                   base=base)
    shown = [names[v] if top == 1 else " + ".join(names[c] for c in v) for v in labels]
    return pd.DataFrame({"item": np.arange(1, len(cases) + 1), "certainty": cert, "label": shown})


def _ranked(predictions, names, width=None, name="predictions"):
    rows = as_rows(predictions)
    lookup = {n.lower(): i for i, n in enumerate(names)}
    out = []
    for i, row in enumerate(rows):
        ids = []
        for j, cell in enumerate(row):
            if is_blank(cell):
                continue
            key = parse_label(cell, f"row {i + 1}, column {j + 1} of the {name} range").lower()
            if key not in lookup:
                raise InputError(f"row {i + 1}, column {j + 1} of the {name} range: unknown class '{cell}'")
            ids.append(lookup[key])
        if not ids:
            raise InputError(f"row {i + 1} of the {name} range is empty")
        out.append(ids)
    return out


def _top_predictions(predictions, names, n_items: int, depth: int, what: str) -> np.ndarray:
    """The first ``depth`` predicted class ids per item, checked against the annotations' item count."""
    ranked = _ranked(predictions, names)
    if len(ranked) != n_items:
        raise InputError(f"predictions has {len(ranked)} rows but annotations has {n_items}")
    if min(len(r) for r in ranked) < depth:
        raise InputError(f"every row of predictions needs at least {depth} classes for {what}")
    return np.array([r[:depth] for r in ranked])


def _samples_for(annotations, classes, reliability, samples, seed, setting):
    names = _classes(classes)
    cases = _annotations(annotations, names)
    setting = _setting(setting)
    plaus = gt.irn(cases, len(names), setting=setting)
    conc = gt.prirn_concentration(cases, len(names), _positive(reliability, "reliability", 1.0), setting=setting)
    draws = gt.sample_dirichlet(conc, _int(samples, "samples", 1000), _int(seed, "seed", 0, low=0))
    return names, plaus, draws


def _ua_table(label, result, point=None):
    rows = [(label, result.value), ("SD over plausibility samples", result.sd_over_samples)]
    if point is not None:
        rows.append(("point estimate (IRN) version", point))
    return pd.DataFrame(rows, columns=["statistic", "value"])


@udf("GT_UA_ACCURACY", category=CATEGORY,
     help="Uncertainty-adjusted top-k accuracy of ranked predictions, with its spread and the IRN point version.",
     args=(_ANN, _CLASSES, Arg("predictions", "Items x ranks range of predicted class names, best first"),
           Arg("k", "Optional k (default 1)", range=False), _REL, _SAMPLES, _SEED, _SETTING, _HEADER),
     core=gt.ua_topk_accuracy, returns="table", columns=('statistic', 'value'), example="=GT_UA_ACCURACY(B2:G101, Classes!A2:A20, H2:J101, 3)",
     formula=_REF + " eq. 8: E_x E_lambda [top-1 label of lambda in the top-k predictions]")
def gt_ua_accuracy(annotations, classes, predictions, k=None, reliability=None, samples=None, seed=None, setting=None,
        header=True):
    names, plaus, draws = _samples_for(annotations, classes, reliability, samples, seed, setting)
    k = _int(k, "k", 1)
    preds = _top_predictions(predictions, names, len(plaus), k, f"top-{k}")
    return _ua_table(f"UA top-{k} accuracy", gt.ua_topk_accuracy(draws, preds, k), gt.point_topk_accuracy(plaus, preds, k))


@udf("GT_UA_SET_ACCURACY", category=CATEGORY, help="Uncertainty-adjusted set accuracy: P(prediction set = top-|C| labels).",
     args=(_ANN, _CLASSES, Arg("prediction_sets", "Items x columns range: each row the predicted set of class names"),
           _REL, _SAMPLES, _SEED, _SETTING, _HEADER),
     core=gt.ua_set_accuracy, returns="table", columns=('statistic', 'value'), example="=GT_UA_SET_ACCURACY(B2:G101, Classes!A2:A20, H2:J101)",
     formula=_REF + " eq. 9: E_x E_lambda [Y_top-|C|(lambda) = C(x)]")
def gt_ua_set_accuracy(annotations, classes, prediction_sets, reliability=None, samples=None, seed=None, setting=None,
        header=True):
    names, plaus, draws = _samples_for(annotations, classes, reliability, samples, seed, setting)
    sets = _ranked(prediction_sets, names, name="prediction_sets")
    if len(sets) != len(plaus):
        raise InputError(f"prediction_sets has {len(sets)} rows but annotations has {len(plaus)}")
    return _ua_table("UA set accuracy", gt.ua_set_accuracy(draws, sets))


@udf("GT_UA_OVERLAP", category=CATEGORY, help="Uncertainty-adjusted average overlap@L of ranked predictions.",
     args=(_ANN, _CLASSES, Arg("predictions", "Items x ranks range of predicted class names, best first"),
           Arg("L", "Optional depth L (default 3)", range=False), _REL, _SAMPLES, _SEED, _SETTING, _HEADER),
     core=gt.ua_average_overlap, returns="table", columns=('statistic', 'value'), example="=GT_UA_OVERLAP(B2:G101, Classes!A2:A20, H2:J101, 3)",
     formula=_REF + " eq. 10-12: mean over k <= L of E_lambda |C_top-k ∩ Y_top-k(lambda)| / k")
def gt_ua_overlap(annotations, classes, predictions, L=None, reliability=None, samples=None, seed=None, setting=None,
        header=True):
    names, plaus, draws = _samples_for(annotations, classes, reliability, samples, seed, setting)
    L = _int(L, "L", 3)
    preds = _top_predictions(predictions, names, len(plaus), L, f"average overlap@{L}")
    return _ua_table(f"UA average overlap@{L}", gt.ua_average_overlap(draws, preds, L))


@udf("GT_THRESHOLD_CERTAINTY", category=CATEGORY,
     help="Certainty that each item's true score lies on its side of a threshold (normal model, spills).",
     args=(Arg("ratings", "Items x raters range of numeric ratings (blank = not rated)"),
           Arg("threshold", "The threshold t (outcomes y <= t and y > t)", range=False), _SAMPLES, _SEED, _HEADER),
     core=gt.threshold_certainty, returns="table", columns=('item', 'n', 'mean', 'p_below', 'outcome', 'certainty'), example="=GT_THRESHOLD_CERTAINTY(B2:K1001, 0)",
     formula=_REF + " Appendix A: normal-inverse-gamma posterior; certainty = max over outcomes of P(outcome is likelier)")
def gt_threshold_certainty(ratings, threshold, samples=None, seed=None, header=True):
    x = number_grid(ratings, "ratings")
    t = gt.threshold_certainty(x, parse_number(threshold, "the threshold argument"), _int(samples, "samples", 1000),
                               _int(seed, "seed", 0, low=0))
    return t.assign(item=np.arange(1, len(t) + 1))[["item", "n", "mean", "p_below", "outcome", "certainty"]]
