"""Ordinal agreement family (Svensson): ORD_SVENSSON, ORD_RP, ORD_RC, ORD_RV, ORD_MEANRANKS, ORD_ROC."""
from __future__ import annotations

import xlcalib
from xlcalib.cells import is_blank_range, label_vector

from xlcalib.errors import InputError

from .registry import Arg, category, udf

CATEGORY = category("xlcalib Ordinal agreement", reference="Svensson's rank method for paired ordinal data (Svensson "
                                                            "1993, dissertation; Svensson & Holm 1994, Statistics in "
                                                            "Medicine 13:2437-2453)")
_ARGS = (
    Arg("rater1", "Range of rater 1's categories, one per object (blank = not rated)"),
    Arg("rater2", "Range of rater 2's categories for the same objects"),
    Arg("categories", "Optional range listing the categories in order (e.g. K, L, M); default: sorted values"),
)
_HEADER = Arg("header", "Optional TRUE/FALSE: add a header row (default TRUE)", range=False)
_REF = "Svensson's rank method (Svensson & Holm 1994)"


def _pairs(rater1, rater2, categories):
    a = label_vector(rater1, "rater 1", allow_blank=True)
    b = label_vector(rater2, "rater 2", allow_blank=True)
    cats = None
    if not is_blank_range(categories):
        cats = [c for c in label_vector(categories, "categories", allow_blank=True) if c is not None]
    return a, b, cats


def _result(rater1, rater2, categories):
    return xlcalib.svensson(*_pairs(rater1, rater2, categories))


def _measure(rater1, rater2, categories, name: str):
    """One measure's value; a measure these ratings leave undefined is an error text saying why (not a blank)."""
    result = _result(rater1, rater2, categories)
    why = result.why_undefined(name)
    if why:
        raise InputError(f"{name} is {why}")
    return getattr(result, name)


@udf("ORD_SVENSSON", category=CATEGORY, help="All Svensson measures (PA, RP, RC, RV, D, kappa ...) with jackknife SEs (spills).",
     args=(*_ARGS, _HEADER), core=xlcalib.svensson, returns="table", columns=('measure', 'value', 'SE', 'meaning'), example="=ORD_SVENSSON(B2:B60, C2:C60, E2:E5)",
     formula=_REF + "; RV = 6/n^3 sum x_ij (R1_ij - R2_ij)^2; jackknife by count-weighted deletion")
def ord_svensson(rater1, rater2, categories=None, header=True):
    return _result(rater1, rater2, categories).to_frame()


@udf("ORD_RP", category=CATEGORY, help="Relative position RP = P(X<Y) - P(Y<X): systematic shift between the raters.",
     args=_ARGS, core=xlcalib.svensson, returns="scalar", example="=ORD_RP(B2:B60, C2:C60, E2:E5)",
     formula="RP = sum_v [q1(v-1) p2(v) - q2(v-1) p1(v)]")
def ord_rp(rater1, rater2, categories=None):
    return _measure(rater1, rater2, categories, "RP")


@udf("ORD_RC", category=CATEGORY, help="Relative concentration RC (-1..1): one rater uses the middle categories more.",
     args=_ARGS, core=xlcalib.svensson, returns="scalar", example="=ORD_RC(B2:B60, C2:C60, E2:E5)",
     formula="RC = (1/M) sum_v [p2(v) q1(v-1)(1-q1(v)) - p1(v) q2(v-1)(1-q2(v))], M = min(P0-P0^2, P1-P1^2)")
def ord_rc(rater1, rater2, categories=None):
    return _measure(rater1, rater2, categories, "RC")


@udf("ORD_RV", category=CATEGORY, help="Relative rank variance RV: random (non-systematic) disagreement, 0 = none.",
     args=_ARGS, core=xlcalib.svensson, returns="scalar", example="=ORD_RV(B2:B60, C2:C60, E2:E5)",
     formula="RV = (6/n^3) sum x_ij (R1_ij - R2_ij)^2 with augmented mean ranks")
def ord_rv(rater1, rater2, categories=None):
    return _measure(rater1, rater2, categories, "RV")


@udf("ORD_MEANRANKS", category=CATEGORY, help="Both augmented mean ranks for every used pair of categories (spills).",
     args=(*_ARGS, _HEADER), core=xlcalib.mean_rank_table, returns="table", columns=('rater1', 'rater2', 'count', 'R1', 'R2', 'difference'), example="=ORD_MEANRANKS(B2:B60, C2:C60, E2:E5)",
     formula="R1_ij = sum_{h<i} x_h. + sum_{k<j} x_ik + (1 + x_ij)/2; R2 likewise with the roles swapped")
def ord_meanranks(rater1, rater2, categories=None, header=True):
    return xlcalib.mean_rank_table(*_pairs(rater1, rater2, categories))


@udf("ORD_ROC", category=CATEGORY, help="Cumulative proportions of both raters at each category boundary (ROC curve).",
     args=(*_ARGS, _HEADER), core=xlcalib.roc_points, returns="table", columns=('boundary', 'rater1', 'rater2'), example="=ORD_ROC(B2:B60, C2:C60, E2:E5)",
     formula="points (q1(v), q2(v)) for v = 0..m")
def ord_roc(rater1, rater2, categories=None, header=True):
    return xlcalib.roc_points(*_pairs(rater1, rater2, categories))
