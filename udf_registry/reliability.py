"""Reliability family: REL_ICC, REL_ICC_TABLE, REL_SPEARMAN_BROWN, REL_RATERS_NEEDED, REL_KALPHA, REL_KRR_*."""
from __future__ import annotations

import xlcalib
from xlcalib.cells import (
    is_blank,
    is_blank_range,
    number_grid,
    parse_choice,
    parse_number,
    parse_whole,
)

from .registry import Arg, category, udf

CATEGORY = category("xlcalib Reliability", reference='Wong & Paritosh (2022), "k-Rater Reliability: The Correct Unit of '
                                                      'Reliability for Aggregated Human Annotations", ACL 2022, and its '
                                                      'references Shrout & Fleiss (1979), McGraw & Wong (1996), '
                                                      'Krippendorff (2011)')
_RATINGS = Arg("ratings", "Items x raters range of ratings; blank = not rated")
_HEADER = Arg("header", "Optional TRUE/FALSE: add a header row (default TRUE)", range=False)
_FORMS = ("ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k")


def _number(value, name, default):
    return default if is_blank(value) else parse_number(value, f"the {name} argument")


@udf("REL_ICC", category=CATEGORY, help="One intraclass correlation (form ICC1, ICC2, ICC3, ICC1k, ICC2k, ICC3k).",
     args=(_RATINGS, Arg("form", 'Optional form, default "ICC1k" (reliability of the mean rating)', range=False)),
     core=xlcalib.icc, returns="scalar", example='=REL_ICC(B2:N354, "ICC1")',
     formula="ICC1 = (MSB-MSW)/(MSB+(k-1)MSW); ICC1k = (MSB-MSW)/MSB (Shrout & Fleiss 1979)")
def rel_icc(ratings, form=None):
    return xlcalib.icc(number_grid(ratings, "ratings", header=True), parse_choice(form, "form", _FORMS, "ICC1k"))


@udf("REL_ICC_TABLE", category=CATEGORY, help="All six ICC forms with F test, p-value and confidence interval (spills).",
     args=(_RATINGS, Arg("alpha", "Optional: 1 - confidence level (default 0.05)", range=False), _HEADER),
     core=xlcalib.icc_table, returns="table", columns=('form', 'description', 'ICC', 'F', 'df1', 'df2', 'pval', 'CI_low', 'CI_high'), example="=REL_ICC_TABLE(B2:N354)",
     formula="Shrout & Fleiss (1979) / McGraw & Wong (1996) ICC forms; unbalanced one-way ANOVA for missing cells")
def rel_icc_table(ratings, alpha=None, header=True):
    return xlcalib.icc_table(number_grid(ratings, "ratings", header=True), alpha=_number(alpha, "alpha", 0.05)).reset_index()


@udf("REL_SPEARMAN_BROWN", category=CATEGORY, help="Reliability of the mean of k ratings from single-rating reliability.",
     args=(Arg("icc1", "Single-rating reliability, e.g. ICC(1)", range=False),
           Arg("k", "Number of ratings averaged", range=False)),
     core=xlcalib.spearman_brown, returns="scalar", example="=REL_SPEARMAN_BROWN(0.59, 13)",
     formula="ICC(k) = k ICC(1) / (1 + (k-1) ICC(1))")
def rel_spearman_brown(icc1, k):
    return xlcalib.spearman_brown(parse_number(icc1, "the icc1 argument"), parse_number(k, "the k argument"))


@udf("REL_RATERS_NEEDED", category=CATEGORY, help="Smallest number of raters whose mean reaches a target reliability.",
     args=(Arg("icc1", "Single-rating reliability, e.g. ICC(1)", range=False),
           Arg("target", "Target reliability of the mean, e.g. 0.9", range=False)),
     core=xlcalib.raters_needed, returns="scalar", example="=REL_RATERS_NEEDED(0.59, 0.95)",
     formula="k = ceil(target (1 - r) / (r (1 - target)))")
def rel_raters_needed(icc1, target):
    return xlcalib.raters_needed(parse_number(icc1, "the icc1 argument"), parse_number(target, "the target argument"))


@udf("REL_KALPHA", category=CATEGORY, help="Krippendorff's alpha for items x raters with blanks.",
     args=(_RATINGS, Arg("level", 'Optional: "nominal", "ordinal", "interval" (default) or "ratio"', range=False)),
     core=xlcalib.krippendorff_alpha, returns="scalar", example='=REL_KALPHA(B2:F41, "ordinal")',
     formula="alpha = 1 - D_o / D_e (Krippendorff 2011)")
def rel_kalpha(ratings, level=None):
    return xlcalib.krippendorff_alpha(number_grid(ratings, "ratings", header=True),
                                      parse_choice(level, "level", ("nominal", "ordinal", "interval", "ratio"), "interval"))


@udf("REL_KRR_BOOTSTRAP", category=CATEGORY, help="Bootstrap k-rater reliability of the item means, with percentile CI.",
     args=(_RATINGS, Arg("k", "Optional ratings per item in each resample (default: each item's own count)", range=False),
           Arg("n_boot", "Optional number of bootstrap replicates (default 1000)", range=False),
           Arg("seed", "Optional random seed (default 0; same seed, same answer)", range=False), _HEADER),
     core=xlcalib.krr_bootstrap, returns="table", columns=('statistic', 'value'), example="=REL_KRR_BOOTSTRAP(B2:N354)",
     formula="resample ratings within items twice, mean, interval alpha between the two mean vectors (Wong & Paritosh 2022, section 5.1)")
def rel_krr_bootstrap(ratings, k=None, n_boot=None, seed=None, header=True):
    result = xlcalib.krr_bootstrap(number_grid(ratings, "ratings", header=True), k=parse_whole(k, "k", None),
                                   n_boot=parse_whole(n_boot, "n_boot", 1000), seed=parse_whole(seed, "seed", 0, low=0))
    return result.to_frame()


@udf("REL_KRR_EMPIRICAL", category=CATEGORY, help="Empirical k-rater reliability between two replications, k = 1..K.",
     args=(Arg("replication1", "Items x raters ratings of replication 1 (complete)"),
           Arg("replication2", "Items x raters ratings of replication 2, same items in the same order"),
           Arg("n_draws", "Optional random column draws per k (default 100)", range=False),
           Arg("seed", "Optional random seed (default 0)", range=False), _HEADER),
     core=xlcalib.krr_empirical, returns="table", columns=('k', 'kRR', 'sd', 'n_draws'), example="=REL_KRR_EMPIRICAL(Rep1!B2:N354, Rep2!B2:N354)",
     formula="k random columns from each replication, item means, interval alpha between them (Wong & Paritosh 2022, section 4.2)")
def rel_krr_empirical(replication1, replication2, n_draws=None, seed=None, header=True):
    return xlcalib.krr_empirical(number_grid(replication1, "replication 1", header=True), number_grid(replication2, "replication 2", header=True),
                                 n_draws=parse_whole(n_draws, "n_draws", 100), seed=parse_whole(seed, "seed", 0, low=0))


@udf("REL_KRR_CURVE", category=CATEGORY, help="k-rater reliability curve: empirical, ICC(k) and Spearman-Brown per k.",
     args=(_RATINGS, Arg("replication", "Optional second replication (adds the empirical column)"),
           Arg("k_max", "Optional largest k (default: most ratings per item)", range=False), _HEADER),
     core=xlcalib.krr_curve, returns="table", columns=('k', 'empirical', 'icc_k', 'spearman_brown'), example="=REL_KRR_CURVE(Rep1!B2:N354, Rep2!B2:N354)",
     formula="ICC(k) = var_item / (var_item + var_error / k); SB from ICC(1) of 2 ratings per item (Wong & Paritosh 2022, Fig. 1)")
def rel_krr_curve(ratings, replication=None, k_max=None, header=True):
    rep = None if is_blank_range(replication) else number_grid(replication, "replication", header=True)
    return xlcalib.krr_curve(number_grid(ratings, "ratings", header=True), replication=rep, k_max=parse_whole(k_max, "k_max", None))
