"""The reports' sheets: reliability (ICC, kRR led by one headline figure with its cross-checks, the k-rater
curve and its chart page), agreement of categorical ratings, Svensson's ordinal analysis (verdicts in words, the
raters' own headers, weighted kappas) with its ROC chart page, and uncertain ground truth."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..workbook.base import ChartSpec, Column, RefLine, SheetSpec
from .common import (
    COUNT,
    MIXED,
    PROB,
    PVALUE,
    RELIAB,
    chart_kwargs,
    chart_page,
    level_text,
    verdict_reliability,
)

# ----------------------------------------------------------------------------
# reliability
# ----------------------------------------------------------------------------
#: Largest rater count the prophecy curve is extended to.
PROPHECY_MAX_K = 60


def prophecy_k_max(icc1: float, observed_k: int) -> int:
    """How far to extend the reliability curve: to the rater count needed for 0.9 (capped)."""
    from .. import reliability as rel
    from ..errors import InputError

    try:
        needed = rel.raters_needed(icc1, 0.9)
    except InputError:
        needed = observed_k
    return int(min(max(observed_k, needed), PROPHECY_MAX_K))


def headline_reliability(table: pd.DataFrame, complete: bool) -> tuple[str, float, str]:
    """Which reliability of the average to quote, its value, and why it is the one."""
    if complete:
        return ("ICC(2,k)", float(table.loc["ICC2k", "ICC"]),
                "every item was rated by the same raters, seen as a sample of possible raters: the two-way absolute-"
                "agreement ICC of the average says how well these averages would agree with averages from other "
                "raters, with rater leniency counted as error")
    return ("ICC(1,k)", float(table.loc["ICC1k", "ICC"]),
            "items were rated by different raters (some ratings missing): only the one-way ICC of the average is "
            "valid; it counts rater leniency as error, as it should when raters differ between items")


def _krr_rows(x, table, boot, alpha, curve, alpha_interval, alpha_note) -> tuple[list, list[str]]:
    """The kRR sheet's rows (statistic, value, lower, upper, verdict, basis) and their number formats: the headline,
    then what it means for planning, then the cross-checks, then the counts."""
    from .. import reliability as rel
    from ..errors import InputError

    complete = not np.isnan(x).any()
    observed_k = int((~np.isnan(x)).sum(axis=1).max())
    name, value, why = headline_reliability(table, complete)
    form = "ICC2k" if complete else "ICC1k"
    icc1 = float(table.loc["ICC1", "ICC"])

    def ci(row: str) -> tuple[float, float]:
        return float(table.loc[row, "CI_low"]), float(table.loc[row, "CI_high"])

    rows = [(f"Reliability of the average of {observed_k} raters: {name} (quote this)", value, *ci(form),
             verdict_reliability(value), why),
            ("one rating: ICC(1)", icc1, *ci("ICC1"), verdict_reliability(icc1),
             "reliability of a single rating (one-way, all ratings): the basis of the raters-needed figures")]
    for target in (0.8, 0.9):
        try:
            k = rel.raters_needed(icc1, target)
            text = (f"Spearman-Brown from ICC(1) = {icc1:.3f}" + (" (more raters than observed: a prophecy)"
                                                                   if k > observed_k else ""))
        except InputError as exc:
            k, text = None, exc.message
        rows.append((f"raters needed for {target:.1f}", k, None, None, "", text))
    a_low, a_high, a_basis = None, None, alpha_note or "no interval"
    if alpha_interval is not None:
        a_low, a_high = alpha_interval.ci_low, alpha_interval.ci_high
        a_basis = (f"percentile bootstrap over items, {alpha_interval.n_boot} replicates, seed {alpha_interval.seed} "
                   "(Zapf et al. 2016)")
    rows += [("cross-check: ICC(1,k), one-way" if form != "ICC1k" else "cross-check: ICC(2,k), two-way",
              float(table.loc["ICC1k" if form != "ICC1k" else "ICC2k", "ICC"]),
              *ci("ICC1k" if form != "ICC1k" else "ICC2k"), "", "the other ICC of the average: who rated is "
              + ("ignored" if form != "ICC1k" else "modelled (needs every rating)")),
             ("cross-check: kRR bootstrap", boot.estimate, boot.ci_low, boot.ci_high, "",
              "resampling items and raters (mean of item means); percentile interval"),
             ("cross-check: Krippendorff alpha (interval)", alpha, a_low, a_high, "", f"agreement of single "
              f"ratings, not of the average; {a_basis}")]
    if "spearman_brown" in curve.columns and "sb_icc1" in curve.attrs:
        at_k = curve.loc[curve["k"] == observed_k, "spearman_brown"]
        rows.append((f"cross-check: {observed_k} raters prophesied from a 2-rater pilot",
                     float(at_k.iloc[0]) if len(at_k) else None, None, None, "",
                     f"Spearman-Brown from an ICC(1) of only 2 randomly drawn ratings per item "
                     f"({curve.attrs['sb_icc1']:.3f}), as a small pilot would give"))
    formats = [RELIAB] * len(rows)
    formats[2:4] = [COUNT, COUNT]
    rows += [("items", x.shape[0], None, None, "", "rows of the Ratings sheet with at least one rating"),
             ("raters (columns)", x.shape[1], None, None, "", "columns of the Ratings sheet"),
             ("ratings", int((~np.isnan(x)).sum()), None, None, "", "non-blank rating cells")]
    formats += [COUNT] * 3
    return rows, formats


def krr_summary_sheet(x: np.ndarray, table: pd.DataFrame, boot, alpha: float, curve: pd.DataFrame, curve_note: str,
                      preamble, *, alpha_interval=None, alpha_note: str = "") -> SheetSpec:
    """kRR: one headline figure to quote (with its reason), what it means for planning (raters needed), then the
    other figures labelled as cross-checks, each with its interval where it has one (ICCs: F intervals; kRR and
    alpha: seeded bootstrap intervals), and one line on why they differ."""
    rows, formats = _krr_rows(x, table, boot, alpha, curve, alpha_interval, alpha_note)
    summary = pd.DataFrame(rows, columns=["statistic", "value", "lower", "upper", "verdict", "basis"],
                           dtype=object)  # counts stay integers
    level = level_text(table.attrs.get("ci_level", 0.95))
    summary_cols = {"statistic": Column("statistic", None, "the headline figure first, then what it means for "
                                                          "planning, then cross-checks and counts", max_width=36),
                    "value": Column("value", MIXED, "the figure", row_formats=tuple(formats)),
                    "lower": Column("lower", RELIAB, f"lower end of the {level} interval (ICC: F distribution, Shrout "
                                                     "& Fleiss 1979; bootstrap rows: percentile interval)"),
                    "upper": Column("upper", RELIAB, f"upper end of the {level} interval"),
                    "verdict": Column("verdict", None, "0.9+ excellent, 0.75+ good, 0.5+ moderate, below poor "
                                                       "(Koo & Li 2016)"),
                    "basis": Column("basis", None, "what the figure is computed from and why", wrap=True, max_width=58)}
    spec = SheetSpec("kRR", summary, preamble, summary_cols)
    spec.footer = [["Why the cross-checks differ from the headline: each answers a slightly different question (who "
                    "rated, raters resampled, single ratings, a 2-rater pilot); quote the headline, read the others as "
                    "checks that it is not fragile."]]
    if table.attrs.get("note"):
        spec.footer.append([f"Note: {table.attrs['note']}"])
    if curve_note:
        spec.footer.append([f"kRR curve: {curve_note}"])
    return spec


def reliability_sheets(x: np.ndarray, table: pd.DataFrame, boot, alpha: float, curve: pd.DataFrame, curve_note: str,
                       preamble, *, alpha_interval=None, alpha_note: str = "") -> list[SheetSpec]:
    """A kRR summary led by the one figure to quote (the others as cross-checks; the report's first page), the ICC
    table, and the k-rater curve with its prophecy, its chart on a page of its own.  *alpha_interval*: the bootstrap interval of Krippendorff's
    alpha (:func:`xlcalib.agreement.agreement_bootstrap`), or *alpha_note* saying why there is none."""
    observed_k = int((~np.isnan(x)).sum(axis=1).max())
    summary = krr_summary_sheet(x, table, boot, alpha, curve, curve_note, preamble, alpha_interval=alpha_interval,
                                alpha_note=alpha_note)
    icc_cols = {"ICC": Column("ICC", RELIAB, "intraclass correlation"), "F": Column("F", "0.00", "F statistic"),
                "df1": Column("df1", "0.0", "numerator degrees of freedom"),
                "df2": Column("df2", "0.0", "denominator degrees of freedom"),
                "pval": Column("pval", PVALUE, "p-value of the F test (ICC = 0)"),
                "CI_low": Column("CI_low", RELIAB, f"{100 * table.attrs.get('ci_level', 0.95):.0f}% confidence interval"),
                "CI_high": Column("CI_high", RELIAB, "")}
    icc = SheetSpec("ICC", table.reset_index(), preamble, icc_cols)
    # the curve: observed range and prophecy beyond it as two series (one line, two styles of meaning)
    c = pd.DataFrame({"k": curve["k"].to_numpy()})
    cols = {"k": Column("k", COUNT, "number of raters averaged")}
    if "empirical" in curve.columns:
        c["empirical (Replication2)"] = curve["empirical"].to_numpy()
        cols["empirical (Replication2)"] = Column("empirical (Replication2)", RELIAB,
                                                  "measured agreement between averages of k raters of two replications")
    within = curve["k"] <= observed_k
    obs_name = "ICC(k), all ratings (observed raters)"
    pro_name = "ICC(k) prophecy beyond the observed raters"
    c[obs_name] = curve["icc_k"].where(within).to_numpy()
    c[pro_name] = curve["icc_k"].where(curve["k"] >= observed_k).to_numpy()
    cols[obs_name] = Column(obs_name, RELIAB, "one-way variance components of all ratings (equals Spearman-Brown "
                                              "from ICC(1))")
    cols[pro_name] = Column(pro_name, RELIAB, "Spearman-Brown extrapolation past the raters you had: a prophecy")
    sb_name = "Spearman-Brown from 2 ratings per item"
    c[sb_name] = curve["spearman_brown"].to_numpy()
    cols[sb_name] = Column(sb_name, RELIAB, "prophecy from a 2-rating pilot (random draw, seeded)")
    spec_curve = SheetSpec("kRR curve", c, preamble, cols)
    k_max = int(c["k"].max())

    def make(header_row: int, n_rows: int) -> ChartSpec:
        return ChartSpec("scatter", "Reliability of the mean of k ratings", header_row, n_rows, 1,
                         tuple(range(2, len(c.columns) + 1)), "k raters averaged", "reliability", lines=True,
                         x_range=(0, k_max + 1), y_range=(0, 1), x_major=1 if k_max <= 15 else 5, y_major=0.25,
                         ref_lines=(RefLine("0.8 (good)", (0, k_max + 1), (0.8, 0.8)),
                                    RefLine("0.9 (excellent)", (0, k_max + 1), (0.9, 0.9), colour="7030A0")),
                         y_number_format="0.00", **chart_kwargs())

    return [summary, icc, spec_curve, chart_page("kRR chart", preamble, c, make, cols)]


# ----------------------------------------------------------------------------
# agreement of categorical ratings (reliability and ordinal reports)
# ----------------------------------------------------------------------------
#: Landis & Koch (1977) benchmarks: the lower end of each band and its word.
AGREEMENT_BANDS = ((0.8, "almost perfect"), (0.6, "substantial"), (0.4, "moderate"), (0.2, "fair"), (0.0, "slight"))
#: A category holding this share of all ratings makes kappa-type coefficients low even when raters agree (the kappa
#: paradox, Feinstein & Cicchetti 1990): the headline then is Gwet's AC, which stays stable (Gwet 2008).
DOMINANT_SHARE = 0.8

#: What each coefficient takes as chance agreement, in words (Gwet 2014, ch. 2).
AGREEMENT_MEANINGS = {
    "percent_agreement": "share of agreeing rater pairs per subject (weighted: partial credit for near misses); "
                         "not corrected for chance",
    "brennan_prediger": "chance = every category equally likely (1/q, q the categories listed)",
    "conger_kappa": "chance from each rater's own use of the categories (Cohen's kappa for two raters; Conger 1980)",
    "fleiss_kappa": "chance from the pooled use of the categories, raters interchangeable (Scott's pi for two "
                    "raters; Fleiss 1971)",
    "gwet_ac": "chance only on the subjects hard to classify: stable when one category dominates (Gwet 2008)",
    "krippendorff_alpha": "observed vs expected disagreement among the subjects rated twice or more, corrected for "
                          "small samples (Krippendorff 2011)",
}

#: How each weight scheme gives credit for a near miss (Gwet 2014, ch. 3).
WEIGHT_WORDS = {
    "identity": "identity (unweighted): only the same category counts as agreement",
    "linear": "linear: a near miss earns 1 - |difference| / range",
    "quadratic": "quadratic: a near miss earns 1 - (difference / range)^2 (Cohen's weighted kappa; alpha is then "
                 "the interval alpha)",
    "ordinal": "ordinal: credit by how many categories lie between (ranks only)",
    "radical": "radical: a near miss earns 1 - sqrt(|difference| / range)",
    "ratio": "ratio: differences relative to the size of the values (ratio alpha)",
    "circular": "circular: the scale wraps around (directions, hours)",
    "bipolar": "bipolar: differences near the ends of the scale weigh more",
    "custom": "the weight matrix given",
}


def agreement_band(value: float) -> str:
    """Landis & Koch's (1977) word for an agreement coefficient."""
    if not np.isfinite(value):
        return "undefined"
    if value < 0:
        return "poor (below chance)"
    return next(word for low, word in AGREEMENT_BANDS if value > low or low == 0.0)


def verdict_agreement(estimate: float, lower: float) -> str:
    """The estimate's band, and the band the interval reaches down to when it is another (Gwet 2014, ch. 6:
    benchmark with the uncertainty, not the point alone)."""
    word = agreement_band(estimate)
    low = agreement_band(lower) if np.isfinite(lower) else word
    return word if low == word or word == "undefined" else f"{word}; the interval reaches {low}"


def headline_agreement(table: pd.DataFrame) -> tuple[str, str]:
    """Which coefficient to quote (a key of the table) and why: the design and the data decide."""
    attrs = table.attrs
    shares = attrs.get("category_shares") or [1.0]
    top = int(np.argmax(shares))
    defined = table["estimate"].notna()
    if shares[top] >= DOMINANT_SHARE and defined.get("gwet_ac", False):
        label = (attrs.get("categories") or ["?"])[top]
        return "gwet_ac", (f"category {label} holds {shares[top]:.0%} of the ratings: with one category that common, "
                           "kappa-type coefficients come out low even when raters agree (the kappa paradox); Gwet's AC "
                           "counts chance only on subjects hard to classify and stays stable (Gwet 2008)")
    r = attrs.get("n_raters")
    if not attrs.get("complete", True) and defined.get("krippendorff_alpha", False):
        return "krippendorff_alpha", ("some subjects lack some raters' ratings: Krippendorff's alpha uses every subject "
                                      "rated twice or more, each by the ratings it has (Krippendorff 2011)")
    if "conger_kappa" in table.index and defined["conger_kappa"]:
        if r == 2:
            return "conger_kappa", ("two raters rated every subject: Cohen's kappa, the usual coefficient, takes chance "
                                    "from each rater's own use of the categories (Cohen 1960; weighted, Cohen 1968)")
        return "conger_kappa", (f"the same {r} raters rated every subject: Conger's kappa (Cohen's kappa for several "
                                "raters) takes chance from each rater's own use of the categories (Conger 1980)")
    if defined.get("fleiss_kappa", False):
        return "fleiss_kappa", ("counts per category only (who rated what unknown): Fleiss' kappa, chance from the "
                                "pooled use of the categories (Fleiss 1971)")
    return "percent_agreement", ("every rating is in one category: the chance-corrected coefficients are undefined; "
                                 "only the share of agreeing pairs is left")


def agreement_sheet(table: pd.DataFrame | None, preamble, *, weights: str = "identity",
                    why_not: str = "") -> SheetSpec:
    """Agreement: the coefficient to quote with its reason, then the other coefficients as a table (estimate, SE,
    interval, p, Landis-Koch verdict, what each takes as chance), then how it was computed.

    *table* is :func:`xlcalib.agreement.agreement_coefficients`'s; without it (*why_not*) the sheet says why.
    """
    columns = ["coefficient", "estimate", "SE", "lower", "upper", "p", "verdict", "basis"]
    if table is None:
        frame = pd.DataFrame([("not computed", None, None, None, None, None, "", why_not)], columns=columns)
        return SheetSpec("Agreement", frame, preamble, _agreement_columns(0.95))
    key, reason = headline_agreement(table)
    order = [key] + [k for k in table.index if k != key]
    rows = []
    for k in order:
        row = table.loc[k]
        name = f"{row['name']} (quote this)" if k == key else row["name"]
        basis = reason if k == key else AGREEMENT_MEANINGS[k]
        # Landis & Koch's bands are for chance-corrected coefficients: percent agreement gets none
        verdict = "" if k == "percent_agreement" else verdict_agreement(row["estimate"], row["ci_low"])
        rows.append((name, row["estimate"], row["se"], row["ci_low"], row["ci_high"], row["p_value"], verdict, basis))
    level = table.attrs.get("confidence", 0.95)
    categories = ", ".join(map(str, table.attrs.get("categories", [])))
    rows += [("weights", None, None, None, None, None, "", WEIGHT_WORDS.get(weights, weights) + "; numbers weighted "
              "by value, text by its place in the category order"),
             ("categories in order", None, None, None, None, None, "", categories),
             ("subjects", None, None, None, None, None, "",
              f"{int(table['n_subjects'].max())} rated (alpha uses the {int(table.loc['krippendorff_alpha', 'n_subjects'])}"
              f" rated twice or more), " + (f"{table.attrs['n_raters']} raters" if table.attrs.get("n_raters")
                                              else "counts per category (raters not identified)")),
             ("standard errors", None, None, None, None, None, "",
              f"{standard_error_words(table)}; {level_text(level)} interval estimate ± t(n-1) SE, upper end capped "
              "at 1; p tests the coefficient being 0")]
    if table.attrs.get("note"):
        rows.append(("note", None, None, None, None, None, "", table.attrs["note"]))
    frame = pd.DataFrame(rows, columns=columns)
    return SheetSpec("Agreement", frame, preamble, _agreement_columns(level))


def standard_error_words(table: pd.DataFrame) -> str:
    """How the table's standard errors were computed: over subjects, and over raters when asked for (said to be our
    jackknife, not a published formula)."""
    subjects = "over subjects (Gwet's 2008 linearisation)"
    if "se_raters" not in table.columns:
        return subjects
    return (f"{subjects} and over raters: the rater part by the delete-one-rater jackknife, xlcalib's estimator (Gwet "
            "2008, Psychometrika 73:407, shows the part must be added; his formula for it is not the one used)")


def _agreement_columns(level: float) -> dict[str, Column]:
    return {"coefficient": Column("coefficient", None, "the coefficient; the first row is the one to quote",
                                  max_width=30),
            "estimate": Column("estimate", RELIAB, "(pa - pe) / (1 - pe): 1 = perfect, 0 = chance agreement"),
            "SE": Column("SE", RELIAB, "standard error over subjects"),
            "lower": Column("lower", RELIAB, f"lower end of the {level_text(level)} interval"),
            "upper": Column("upper", RELIAB, f"upper end of the {level_text(level)} interval"),
            "p": Column("p", PVALUE, "two-sided p-value of the coefficient being 0 (no agreement beyond chance)"),
            "verdict": Column("verdict", None, "Landis & Koch (1977): above 0.8 almost perfect, 0.6 substantial, 0.4 "
                                               "moderate, 0.2 fair, else slight", max_width=24),
            "basis": Column("basis", None, "why this one / what it takes as chance", wrap=True, max_width=46)}


def agreement_pairs_sheet(pairs: pd.DataFrame, preamble) -> SheetSpec:
    """Agreement pairs: one coefficient for every pair of raters, lowest first (who disagrees with whom)."""
    f = pairs.sort_values("estimate", kind="mergesort", na_position="first").reset_index(drop=True)
    frame = pd.DataFrame({"rater 1": f["rater_1"].astype(str), "rater 2": f["rater_2"].astype(str),
                          "coefficient": f["name"], "estimate": f["estimate"], "SE": f["se"], "lower": f["ci_low"],
                          "upper": f["ci_high"], "subjects": f["n_subjects"],
                          "verdict": ["" if name.lower().endswith("percent agreement") else verdict_agreement(e, lo)
                                      for name, e, lo in zip(f["name"], f["estimate"], f["ci_low"])]})
    level = pairs.attrs.get("confidence", 0.95)
    cols = _agreement_columns(level)
    cols["coefficient"] = Column("coefficient", None, "the coefficient quoted on the Agreement sheet, for this pair")
    cols["subjects"] = Column("subjects", COUNT, "subjects either of the two rated")
    return SheetSpec("Agreement pairs", frame, preamble, cols)




# ----------------------------------------------------------------------------
# ordinal agreement (Svensson) and uncertain ground truth
# ----------------------------------------------------------------------------
#: z of the two-sided 95% normal interval the Svensson verdicts use (jackknife SEs).
_Z95 = 1.959964
#: Words for the size of |RP| and |RC| (range -1..1) and of RV (0 = none, 1 = as much random disagreement as
#: chance gives): upper end of each band and its word.  xlcalib's convention: Svensson (1993; Svensson & Holm
#: 1994) reads each measure against its range and its jackknife interval and gives no cut-offs.
SVENSSON_SIZES = ((0.1, "small"), (0.3, "moderate"), (np.inf, "large"))
#: Below this a measure is shown as 0.00 and is read as none at all.
_NONE = 0.005


def svensson_size(value: float) -> str:
    """The size word of a Svensson measure (:data:`SVENSSON_SIZES`): 'small' below 0.1, 'moderate' below 0.3."""
    return next(word for upper, word in SVENSSON_SIZES if abs(value) < upper)


def _uncertain(value: float, se: float | None) -> str:
    """The caveat of a measure whose 95% jackknife interval reaches 0 (or that has no SE)."""
    if se is None or not np.isfinite(se) or se <= 0:
        return " (no standard error: read with care)"
    if abs(value) > _Z95 * se:
        return ""
    return "; may be chance (the 95% interval includes 0)"


def svensson_verdicts(values: dict, ses: dict, h1: str, h2: str) -> dict[str, str]:
    """Each Svensson measure in words, naming the raters by their own headers: the size (:data:`SVENSSON_SIZES`),
    the kind (RP and RC systematic, RV random; Svensson 1993), who is lower or narrower, and whether the 95%
    jackknife interval leaves room for chance.

    >>> svensson_verdicts({"PA": 67.8, "n": 59, "RP": -0.084, "RC": 0.113, "RV": 0.04},
    ...                   {"RP": 0.057, "RC": 0.06, "RV": 0.029}, "A", "B")["RP"]
    'small systematic disagreement in position: B uses lower categories than A; may be chance (the 95% interval includes 0)'
    """
    rp, rc, rv = values["RP"], values["RC"], values["RV"]
    out = {"PA": f"{values['PA'] / 100:.0%} of the {int(values['n'])} objects: the same category from both"}
    undefined = values.get("undefined", {})
    if not np.isfinite(rc):  # checked first: an undefined measure has no size
        out["RC"] = undefined.get("RC") or "not defined for these ratings"
        rc = 0.0
    if abs(rp) < _NONE:
        out["RP"] = f"no disagreement in position: {h1} and {h2} use the categories at the same level"
    else:
        low, high = (h1, h2) if rp > 0 else (h2, h1)
        out["RP"] = (f"{svensson_size(rp)} systematic disagreement in position: {low} uses lower categories than "
                     f"{high}" + _uncertain(rp, ses.get("RP")))
    if "RC" in out:
        pass
    elif abs(rc) < _NONE:
        out["RC"] = f"no disagreement in concentration: {h1} and {h2} spread the ratings alike"
    else:
        narrow, wide = (h2, h1) if rc > 0 else (h1, h2)
        out["RC"] = (f"{svensson_size(rc)} systematic disagreement in concentration: {narrow} concentrates on "
                     f"fewer categories than {wide}" + _uncertain(rc, ses.get("RC")))
    if rv < _NONE:
        out["RV"] = f"no random disagreement: {h1} and {h2} order the objects alike"
    else:
        out["RV"] = (f"{svensson_size(rv)} random disagreement: {h1} and {h2} order some objects differently"
                     + _uncertain(rv, ses.get("RV")))
    if np.isfinite(values.get("kappa_max", np.nan)) and values["kappa_max"] > 0 and "kappa" in values:
        out["kappa_max"] = (f"Cohen's kappa is {values['kappa'] / values['kappa_max']:.0%} of the largest these "
                            "category shares permit")
    return out


#: Svensson's measures: the row's name on the sheet, its number format and what it measures ({h1}, {h2}: the raters'
#: own headers).
_SVENSSON_ROWS = {
    "PA": ("PA, percentage agreement", "0.0%", "share of objects given the same category by both"),
    "RP": ("RP, relative position", RELIAB, "P({h1} lower) - P({h1} higher), from each rater's category shares: "
                                           "-1..1, 0 = the same level (systematic)"),
    "RC": ("RC, relative concentration", RELIAB, "-1..1, above 0 = {h2} concentrates on fewer categories, below 0 "
                                                "= {h1} does (systematic)"),
    "RV": ("RV, relative rank variance", RELIAB, "random disagreement: 0 = none, 1 = as much as chance"),
    "D": ("D, reversed order", RELIAB, "share of object pairs the raters order the other way round"),
    "IV": ("IV, internal rank variance", RELIAB, "ties within categories: sum(x^3 - x)/n^3 over cells"),
    "r_a": ("r_a, augmented rank correlation", RELIAB, "rank correlation of the raters' augmented ranks"),
    "kappa": ("Cohen's kappa (unweighted)", RELIAB, "only the same category counts as agreement"),
    "kappa_max": ("kappa max", RELIAB, "the largest Cohen's kappa these two raters' category shares permit"),
    "n": ("objects rated by both", COUNT, "pairs used (an object missing either rating is left out)"),
}


def svensson_sheet(sv: pd.DataFrame, rater_names: tuple[str, str], preamble, kappas=None) -> SheetSpec:
    """Svensson: each measure with its jackknife SE and 95% interval and a verdict in words naming the raters by
    their own headers; PA as a percentage, counts as integers; Cohen's kappa unweighted, linear- and
    quadratic-weighted beside it (*kappas*: name -> :class:`~xlcalib.agreement.AgreementResult`)."""
    h1, h2 = rater_names
    values = dict(zip(sv["measure"], sv["value"]))
    ses = {k: v for k, v in zip(sv["measure"], sv["SE"]) if v is not None and np.isfinite(v)}
    why = {k: m for k, v, m in zip(sv["measure"], sv["value"], sv["meaning"]) if not np.isfinite(float(v))}
    words = svensson_verdicts({**values, "undefined": why}, ses, h1, h2)
    rows, formats = [], []
    for key, (name, fmt, meaning) in _SVENSSON_ROWS.items():
        if key not in values or (key == "kappa" and kappas):  # the kappas with their intervals stand above
            continue
        value = values[key] / 100 if key == "PA" else (int(values[key]) if key == "n" else values[key])
        se = ses.get(key)
        low, high = (value - _Z95 * se, value + _Z95 * se) if se is not None else (None, None)
        rows.append((name, value, se, low, high, words.get(key, ""), meaning.format(h1=h1, h2=h2)))
        formats.append(fmt)
        if key == "RV" and kappas:  # the kappas after the Svensson measures of disagreement
            for label, k in kappas.items():
                verdict = verdict_agreement(k.estimate, k.ci_low) if np.isfinite(k.estimate) else (k.note or "")
                rows.append((label, k.estimate, k.se, k.ci_low, k.ci_high, verdict, KAPPA_MEANINGS.get(label, "")))
                formats.append(RELIAB)
    frame = pd.DataFrame(rows, columns=["measure", "value", "SE", "lower", "upper", "verdict", "meaning"], dtype=object)
    sizes = ", ".join(f"below {upper:g} {word}" for upper, word in SVENSSON_SIZES[:-1]) + \
        f", else {SVENSSON_SIZES[-1][1]}"
    cols = {"measure": Column("measure", None, "", max_width=30),
            "value": Column("value", MIXED, "the measure", row_formats=tuple(formats)),
            "SE": Column("SE", RELIAB, "standard error (jackknife for Svensson's measures; over subjects for kappa)"),
            "lower": Column("lower", RELIAB, "lower end of the 95% interval"),
            "upper": Column("upper", RELIAB, "upper end of the 95% interval"),
            "verdict": Column("verdict", None, f"the measure in words; sizes of |RP|, |RC| and RV: {sizes}",
                              wrap=True, max_width=44),
            "meaning": Column("meaning", None, "what the measure is", wrap=True, max_width=44)}
    spec = SheetSpec("Svensson", frame, preamble, cols)
    spec.footer = [["RP and RC measure systematic disagreement (one rater higher, or narrower, than the other: a "
                    "calibration or training matter), RV random disagreement (the raters order individual objects "
                    f"differently) (Svensson 1993; Svensson & Holm 1994). Sizes of |RP|, |RC| and RV: {sizes} -- "
                    "xlcalib's words; Svensson gives no cut-offs. 'May be chance' when the 95% jackknife interval "
                    "includes 0. Kappas: Landis & Koch (1977) words; weights by the category order, or by the values "
                    "on the Categories sheet."]]
    return spec


#: What the three kappas of the Svensson sheet give credit for.
KAPPA_MEANINGS = {
    "Cohen's kappa (unweighted)": "only the same category counts as agreement",
    "linear-weighted kappa": "a near miss earns 1 - |difference| / range",
    "quadratic-weighted kappa": "a near miss earns 1 - (difference / range)^2; the kappa ordinal studies quote most",
}


def _mean_ranks_table(mr: pd.DataFrame, h1: str, h2: str) -> tuple[pd.DataFrame, dict[str, Column]]:
    """The augmented mean ranks per pair of categories (:func:`xlcalib.ordinal.mean_rank_table`) under the raters'
    own headers, ranks to the half they can be."""
    names = {"rater1": f"{h1}: category", "rater2": f"{h2}: category", "count": "objects",
             "R1": f"mean rank by {h1}", "R2": f"mean rank by {h2}", "difference": "rank difference"}
    frame = mr.rename(columns=names)
    cols = {names["count"]: Column(names["count"], COUNT, "objects given this pair of categories"),
            names["R1"]: Column(names["R1"], "0.0", f"the objects' augmented mean rank by {h1} (ties broken by {h2}; "
                                                    "Svensson 1993)"),
            names["R2"]: Column(names["R2"], "0.0", f"the objects' augmented mean rank by {h2} (ties broken by {h1})"),
            names["difference"]: Column(names["difference"], "+0.0;-0.0;0.0",
                                        f"{h1}'s rank minus {h2}'s: where the raters order objects differently (RV)")}
    return frame, cols


def ordinal_sheets(frames: dict[str, pd.DataFrame], rater_names: tuple[str, str], preamble,
                   kappas=None) -> list[SheetSpec]:
    """Svensson measures with verdicts, mean ranks, and the ROC curve (its chart on a page of its own), named by the
    user's own rater headers."""
    h1, h2 = rater_names
    mr, mr_cols = _mean_ranks_table(frames["MeanRanks"], h1, h2)
    roc = frames["ROC"].rename(columns={"boundary": "up to category", "rater1": f"{h1} (cumulative share)",
                                        "rater2": f"{h2} (cumulative share)"})
    roc_cols = {c: Column(c, PROB, f"share of objects {n} put in this category or a lower one")
                for c, n in ((roc.columns[1], h1), (roc.columns[2], h2))}
    roc_cols["up to category"] = Column("up to category", None, "the categories cumulated, lowest first; the curve "
                                                                f"above the diagonal: {h2} rates lower than {h1}")
    roc_spec = SheetSpec("ROC", roc, preamble, roc_cols)

    def make(header_row: int, n_rows: int) -> ChartSpec:
        return ChartSpec("scatter", f"ROC: {h2} against {h1} (cumulative shares of the categories)", header_row,
                         n_rows, 2, (3,), f"{h1} (cumulative share)", f"{h2} (cumulative share)", lines=True,
                         x_range=(0, 1), y_range=(0, 1), x_major=0.2, y_major=0.2,
                         ref_lines=(RefLine("no systematic difference", (0, 1), (0, 1)),),
                         x_number_format="0%", y_number_format="0%",
                         **chart_kwargs(width_cm=17.0, height_cm=15.5))

    return [svensson_sheet(frames["Svensson"], rater_names, preamble, kappas),
            SheetSpec("MeanRanks", mr, preamble, mr_cols), roc_spec,
            chart_page("ROC chart", preamble, roc, make, roc_cols)]


def ground_truth_sheets(frames: dict[str, pd.DataFrame], preamble) -> list[SheetSpec]:
    """Certainty per item (its chart, on a 0-100% axis, on a page of its own) and the UA metrics."""
    cert = frames["Certainty"]
    spec = SheetSpec("Certainty", cert, preamble, {"annotators": Column("annotators", COUNT, "annotations of the item"),
                                                   "certainty": Column("certainty", "0.0%", "probability that the most "
                                                                       "certain label is right")})
    names = list(cert.columns)
    data = cert[[names[0], "certainty"]]

    def make(header_row: int, n_rows: int) -> ChartSpec:
        return ChartSpec("column" if len(cert) <= 40 else "dots", "Annotation certainty per item", header_row,
                         n_rows, 1, (2,), str(names[0]), "certainty", y_range=(0, 1), y_major=0.25,
                         y_number_format="0%", **chart_kwargs())

    ua = SheetSpec("UA metrics", frames["UA metrics"], preamble, {"value": Column("value", MIXED, "the figure")})
    return [spec, chart_page("Certainty chart", preamble, data, make, {"certainty": Column("certainty", "0.0%")}), ua]
