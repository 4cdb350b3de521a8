"""Scoring-evaluation family (RSMTool metrics): EVAL_TABLE, EVAL_EXACT ... EVAL_DSM."""
from __future__ import annotations

import pandas as pd

import xlcalib
from xlcalib.cells import (
    label_vector,
    number_grid,
    number_vector,
    parse_flag,
    same_length,
)
from xlcalib.errors import InputError

from .registry import Arg, category, udf

CATEGORY = category("xlcalib Scoring evaluation", reference='the RSMTool documentation, "Evaluation Metrics" '
                                                             '(rsmtool.readthedocs.io)')
_HUMAN = Arg("human", "Range of human scores, one per response (blank = missing)")
_SYSTEM = Arg("system", "Range of system (automated or second-rater) scores for the same responses")
_EXCL = Arg("exclude_zero", "Optional TRUE/FALSE: leave out responses with human score 0 (default TRUE)", range=False)
_HEADER = Arg("header", "Optional TRUE/FALSE: add a header row (default TRUE)", range=False)
_REF = 'RSMTool documentation, "Evaluation Metrics"'


def _metrics(human, system, exclude_zero):
    h = number_vector(human, "human", allow_blank=True)
    m = number_vector(system, "system", allow_blank=True)
    same_length(human=h, system=m)
    return xlcalib.evaluation_metrics(h, m, exclude_zero=parse_flag(exclude_zero, "exclude_zero", True))


def _metric(key, human, system, exclude_zero):
    value = _metrics(human, system, exclude_zero)[key]
    if value is None:
        why = ("every rounded score in one category, or more than 1,000 distinct rounded scores" if key == "kappa"
               else "a variance is 0 or too few responses")
        raise InputError(f"{key} is undefined for these scores ({why})")
    return value


@udf("EVAL_TABLE", category=CATEGORY, help="All accuracy metrics of system vs human scores (N, agreement, kappa, QWK, r, SMD, MSE, R2).",
     args=(_HUMAN, _SYSTEM, _EXCL, _HEADER), core=xlcalib.evaluation_metrics, returns="table", columns=('metric', 'value'),
     example="=EVAL_TABLE(B2:B501, C2:C501)", formula=_REF)
def eval_table(human, system, exclude_zero=None, header=True):
    s = _metrics(human, system, exclude_zero)
    return pd.DataFrame({"metric": list(s.index), "value": pd.Series(list(s.to_numpy()), dtype=object)})


def _scalar(name, key, help, formula):
    def impl(human, system, exclude_zero=None):
        return _metric(key, human, system, exclude_zero)

    impl.__name__ = name.lower()
    return udf(name, category=CATEGORY, help=help, args=(_HUMAN, _SYSTEM, _EXCL), core=xlcalib.evaluation_metrics,
               returns="scalar", example=f"={name}(B2:B501, C2:C501)", formula=formula)(impl)


EVAL_EXACT = _scalar("EVAL_EXACT", "exact_agreement", "Percent exact agreement (rounded scores).", "A = 100 * mean(M = H)")
EVAL_ADJACENT = _scalar("EVAL_ADJACENT", "adjacent_agreement", "Percent exact + adjacent agreement (|M - H| <= 1).",
                        "A_adj = 100 * mean(|M - H| <= 1)")
EVAL_KAPPA = _scalar("EVAL_KAPPA", "kappa", "Cohen's kappa on rounded scores (full category range).",
                     "kappa = 1 - sum w X / sum w m, w = 1 off the diagonal")
EVAL_QWK = _scalar("EVAL_QWK", "qwk", "Quadratic weighted kappa, continuous formula (population moments).",
                   "QWK = 2 Cov(M,H) / (Var H + Var M + (mean M - mean H)^2)")
EVAL_R = _scalar("EVAL_R", "r", "Pearson correlation between human and system scores.", "r = cov(H, M) / (sd H sd M)")
EVAL_SMD = _scalar("EVAL_SMD", "smd", "Standardised mean difference (mean M - mean H) / sd H.", "SMD = (mean M - mean H) / sd H")
EVAL_MSE = _scalar("EVAL_MSE", "mse", "Mean squared error of system scores as predictors of human scores.", "MSE = mean (H - M)^2")
EVAL_R2 = _scalar("EVAL_R2", "r2", "Proportional reduction in mean squared error (observed score).",
                  "R2 = 1 - sum (H - M)^2 / sum (H - mean H)^2")


@udf("EVAL_PRMSE", category=CATEGORY, help="PRMSE for true scores: how well system scores predict true human scores.",
     args=(Arg("system", "Range of system scores, one per response"),
           Arg("human", "Responses x ratings range of human scores (blank = not rated); >= 2 ratings on some responses")),
     core=xlcalib.prmse_true, returns="scalar", example="=EVAL_PRMSE(D2:D501, B2:C501)",
     formula="PRMSE = 1 - MSE(T|M) / var(T) with pooled rater-error variance")
def eval_prmse(system, human):
    m = number_vector(system, "system")
    hh = number_grid(human, "human", allow_blank=True, header=True)
    same_length(system=m, human=hh)
    value = xlcalib.prmse_true(m, hh)
    if value is None:
        raise InputError("PRMSE needs some responses with two or more human scores")
    return value


@udf("EVAL_DSM", category=CATEGORY, help="Difference of standardised means per subgroup (fairness), whole-set standardisation.",
     args=(_HUMAN, _SYSTEM, Arg("groups", "Range of subgroup labels, one per response"), _HEADER),
     core=xlcalib.difference_of_standardized_means, returns="table", columns=('group', 'DSM', 'N'), example="=EVAL_DSM(B2:B501, C2:C501, D2:D501)",
     formula="DSM_g = mean over group g of (z_M - z_H), z from the whole evaluation set")
def eval_dsm(human, system, groups, header=True):
    h = number_vector(human, "human")
    m = number_vector(system, "system")
    g = label_vector(groups, "groups")
    same_length(human=h, system=m, groups=g)
    dsm = xlcalib.difference_of_standardized_means(h, m, groups=g)
    if dsm is None:
        raise InputError("DSM is undefined: human or system scores have no variance")
    return pd.DataFrame({"group": dsm.index, "DSM": dsm.to_numpy(), "N": pd.Series(g).value_counts().reindex(dsm.index).to_numpy()})
