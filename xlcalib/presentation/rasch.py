"""The ordinal (many-facet Rasch) calibration's sheets, read as FACETS users read its tables: the Ranking (fair
averages on the rubric's scale, measures beside them), the Summary, Measures and Severities (Table 7), the
category table (Table 8), the thresholds per assessor (partial credit), the Wright map and the category
probability curves (native charts, each on its own page), the reads against their predictions and the
unexpected ones (Table 4), Checks and Diagnostics."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
from scipy.special import ndtri

from ..workbook.base import ChartSpec, Column, RefLine, SheetSpec
from .common import (
    COUNT,
    PROB,
    SCORE,
    SIGNED,
    chart_kwargs,
    chart_page,
    half_width,
    level_text,
    nice_ceil,
    nice_floor,
    pm_header,
    pm_meaning,
    user_names,
    words_for_flags,
)
from .lottery import lottery_sheet
from .panel import checks_from_warnings, checks_sheet, diagnostics_sheet
from .ranking import ranking_chart, ranking_sheet, ranking_table
from .summary import decision_rows

__all__ = ["rasch_sheets", "measures_sheet", "severities_sheet", "categories_sheet", "wright_map_chart",
           "category_curves_chart", "WRIGHT_MAP_OBJECTS"]

LOGIT = "0.00"
#: Objects drawn on the Wright map at most (evenly spaced by measure beyond: the map shows where they lie)
WRIGHT_MAP_OBJECTS = 3000
#: Fit columns (technical name, header, meaning), shared by Measures, Severities and Categories.
_FIT_COLUMNS = (
    ("infit", "infit", "information-weighted mean-square: about 1 = as the model expects; above 1.5 erratic, below "
                       "0.5 too predictable (the read's category scatter about its prediction over the model's)"),
    ("infit_zstd", "infit ZSTD", "infit standardised (Wilson-Hilferty, the ordinal model's own variance): beyond ±2 = "
                                 "beyond chance"),
    ("outfit", "outfit", "plain mean-square (sensitive to single odd reads)"),
    ("outfit_zstd", "outfit ZSTD", "outfit standardised: beyond ±2 = beyond chance"))


def _fit_columns(source: pd.DataFrame, out: pd.DataFrame, cols: dict) -> None:
    for key, name, meaning in _FIT_COLUMNS:
        out[name] = source[key].to_numpy()
        cols[name] = Column(name, "0.00", meaning)


def _group_column(source: pd.DataFrame, out: pd.DataFrame, cols: dict) -> None:
    if "group" in source.columns:
        out["group of assessors"] = source["group"].to_numpy()
        cols["group of assessors"] = Column("group of assessors", COUNT, "the group of linked assessors (groups that "
                                                                         "share no object: each as strict as the "
                                                                         "panel on average)")


def measures_sheet(result, preamble) -> SheetSpec:
    """Measures (FACETS Table 7, objects): highest measure first, its ±, the fair average with its interval on the
    rubric's scale, the observed average, reads and fit."""
    level = result.stats.get("interval_level", 0.95)
    v = result.values.sort_values("measure", ascending=False, kind="mergesort")
    pm = pm_header(level)
    out = pd.DataFrame({"object": v.index.astype(str), "measure": v["measure"].to_numpy(), pm: half_width(v),
                        "fair average": v["fair_average"].to_numpy(), "fair lower": v["fair_lower"].to_numpy(),
                        "fair upper": v["fair_upper"].to_numpy(), "observed average": v["raw_mean"].to_numpy(),
                        "reads": v["n"].to_numpy()})
    cols = {"object": Column("object", None, "the object as entered", max_width=28),
            "measure": Column("measure", LOGIT, "the object's measure in logits (posterior mean, EAP): higher = better; "
                                                "the assessors' severities are on the same ruler"),
            pm: Column(pm, LOGIT, pm_meaning(level, "measure")),
            "fair average": Column("fair average", SCORE, "the score an assessor of average severity would give it on "
                                                          "average (rubric scale; FACETS' Fair-M average)"),
            "fair lower": Column("fair lower", SCORE, f"the fair average at the lower end of the measure's "
                                                      f"{level_text(level)} interval"),
            "fair upper": Column("fair upper", SCORE, "the fair average at the upper end"),
            "observed average": Column("observed average", SCORE, "plain average of the object's scores"),
            "reads": Column("reads", COUNT, "number of reads")}
    _fit_columns(v, out, cols)
    _group_column(v, out, cols)
    spec = SheetSpec("Measures", out, preamble, cols, freeze_columns=1)
    spec.footer = [[f"Measures are in logits; ± is half the width of the {level_text(level)} interval, as on every "
                    "sheet. A fair average is the measure put back on the rubric's scale: what an assessor of "
                    "average severity would give."]]
    return spec


def severities_sheet(result, preamble) -> SheetSpec:
    """Severities (FACETS Table 7, assessors): harshest first, severity ±, fair average, observed average, reads,
    fit with its reading, a note for an assessor whose reads all sit at one end, and the reads that stand out."""
    level = result.stats.get("interval_level", 0.95)
    s = result.severities.sort_values("severity", ascending=False, kind="mergesort")
    pm = pm_header(level)
    out = pd.DataFrame({"assessor": s.index.astype(str), "severity": s["severity"].to_numpy(), pm: half_width(s),
                        "fair average": s["fair_average"].to_numpy(),
                        "observed average": s["observed_average"].to_numpy(), "reads": s["n"].to_numpy()})
    cols = {"assessor": Column("assessor", None, "the assessor as entered", max_width=24),
            "severity": Column("severity", SIGNED, "the assessor's severity in logits: above 0 = harsher than the "
                                                   "panel's typical assessor, below 0 = more lenient"),
            pm: Column(pm, LOGIT, pm_meaning(level, "severity")),
            "fair average": Column("fair average", SCORE, "the score the assessor would give an object of the panel's "
                                                          "mean measure (rubric scale)"),
            "observed average": Column("observed average", SCORE, "plain average of the assessor's scores (depends on "
                                                                  "which objects they read)"),
            "reads": Column("reads", COUNT, "number of reads")}
    _fit_columns(s, out, cols)
    out["reading"] = s["reading"].to_numpy()
    cols["reading"] = Column("reading", None, "the mean-squares in words", max_width=50)
    out["note"] = s["extreme"].to_numpy()
    cols["note"] = Column("note", None, "an assessor whose every read is in one end category", max_width=40)
    flagged = result.residuals[result.residuals["unexpected"].astype(bool)]
    counts = flagged.groupby("assessor").size()
    out["reads that stand out"] = [int(counts.get(a, 0)) for a in s.index]
    cols["reads that stand out"] = Column("reads that stand out", COUNT, "reads of this assessor on Unexpected")
    _group_column(s, out, cols)
    spec = SheetSpec("Severities", out, preamble, cols, freeze_columns=1)
    spec.footer = [[f"Severities in logits, on the measures' ruler: an object at measure m read by an assessor at "
                    f"severity m is equally likely to land above or below the middle of the scale. ± is half the "
                    f"{level_text(level)} interval. Gauge: {result.stats.get('gauge_meaning', '')}."]]
    return spec


def categories_sheet(result, preamble) -> SheetSpec:
    """Categories (FACETS Table 8): count, %, cumulative %, the average measure of the reads in each category and
    its expectation, outfit, the Rasch-Andrich threshold into it ±, the category measure, whether they advance;
    under the table whether the thresholds are ordered, in words, and the unused categories."""
    level = result.stats.get("interval_level", 0.95)
    c = result.categories
    pm = pm_header(level)
    q = _quantile(level)
    out = pd.DataFrame({"category": c.index.to_numpy(), "count": c["count"].to_numpy(),
                        "%": c["percent"].to_numpy() / 100, "cumulative %": c["cumulative_percent"].to_numpy() / 100,
                        "average measure": c["average_measure"].to_numpy(),
                        "expected measure": c["expected_measure"].to_numpy(), "outfit": c["outfit"].to_numpy(),
                        "threshold": c["threshold"].to_numpy(), pm: q * c["threshold_se"].to_numpy()})
    cols = {"category": Column("category", "General", "the category's score on the rubric"),
            "count": Column("count", COUNT, "reads in the category (0 = unused: left out of the model)"),
            "%": Column("%", PROB, "share of all reads"), "cumulative %": Column("cumulative %", PROB, "this or lower"),
            "average measure": Column("average measure", LOGIT, "mean of (object measure - assessor severity) over the "
                                                                "reads in this category: should rise category by "
                                                                "category"),
            "expected measure": Column("expected measure", LOGIT, "what the average measure would be if the data fitted "
                                                                  "the model"),
            "outfit": Column("outfit", "0.00", "mean-square of the reads in this category: far above 1 = the "
                                               "category is used unexpectedly"),
            "threshold": Column("threshold", SIGNED, "Rasch-Andrich threshold into this category from the one below "
                                                     "(logits): where both are equally probable"),
            pm: Column(pm, LOGIT, pm_meaning(level, "threshold"))}
    if c["category_measure"].notna().any():
        out["category measure"] = c["category_measure"].to_numpy()
        out["thresholds advance"] = c["advances"].to_numpy()
        cols["category measure"] = Column("category measure", SIGNED, "where on the ruler (measure less severity) the "
                                                                      "category is expected (ends: 0.25 score points in)")
        cols["thresholds advance"] = Column("thresholds advance", None, "yes = this threshold lies above the one "
                                                                        "before; no = disordered")
    out["average advances"] = c["average_advances"].to_numpy()
    cols["average advances"] = Column("average advances", None, "yes = the average measure rises from the category "
                                                                "below")
    spec = SheetSpec("Categories", out, preamble, cols)
    footer = [[result.stats.get("thresholds_order", "")]]
    if result.stats.get("categories_unused"):
        footer.append([result.stats["categories_unused"] + "."])
    footer.append([f"Categories from {result.stats.get('categories', '')}. ± is half the {level_text(level)} "
                   "interval."])
    spec.footer = footer
    return spec


def _quantile(level: float) -> float:
    return float(ndtri(0.5 + level / 2))


def thresholds_sheet(result, preamble) -> SheetSpec:
    """Thresholds (partial credit): each assessor's Rasch-Andrich thresholds with their ±."""
    level = result.stats.get("interval_level", 0.95)
    t = result.thresholds()
    pm = pm_header(level)
    out = pd.DataFrame({"assessor": t["assessor"].astype(str), "into category": t["category"].to_numpy(),
                        "threshold": t["threshold"].to_numpy(), pm: _quantile(level) * t["se"].to_numpy(),
                        "in order": t["ordered"].to_numpy()})
    cols = {"threshold": Column("threshold", SIGNED, "the assessor's threshold into this category (logits)"),
            pm: Column(pm, LOGIT, pm_meaning(level, "threshold")),
            "in order": Column("in order", None, "yes = above the assessor's previous threshold; 'not used' = the "
                                                 "assessor never used one of the two categories")}
    return SheetSpec("Thresholds", out, preamble, cols, freeze_columns=1)


def _beeswarm(measures: np.ndarray, centre: float, width: float = 0.38, step: float = 0.15) -> np.ndarray:
    """Horizontal positions that spread points sharing a measure bin side by side (a dot per element, as FACETS'
    ruler prints a star per element): centre + offsets within +-width, deterministic."""
    bins = np.floor(measures / step).astype(np.intp)
    order = np.lexsort((measures, bins))
    place = np.empty(measures.size, dtype=np.intp)
    sorted_bins = bins[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_bins)) + 1]
    counts = np.diff(np.r_[starts, sorted_bins.size])
    place[order] = np.arange(sorted_bins.size) - np.repeat(starts, counts)
    size = np.repeat(counts, counts)[np.argsort(order)]
    spacing = np.minimum(0.06, 2 * width / np.maximum(size, 1))
    return centre + (place - (size - 1) / 2) * spacing


def wright_map_chart(result, preamble, settings=None) -> SheetSpec:
    """"Wright map": objects (left) and assessors (right) on one logit ruler, a dot each, with the boundaries
    between the rubric's categories for an assessor of average severity drawn across (where the fair average
    passes k + 1/2)."""
    fit = result.fit
    v = result.values["measure"].to_numpy()
    names = result.values.index.astype(str).to_numpy()
    shown = ""
    if v.size > WRIGHT_MAP_OBJECTS:
        keep = np.argsort(v, kind="stable")[np.linspace(0, v.size - 1, WRIGHT_MAP_OBJECTS).round().astype(np.intp)]
        v, names = v[keep], names[keep]
        shown = f" ({WRIGHT_MAP_OBJECTS:,} of {result.values.shape[0]:,} objects, evenly spaced by measure)"
    s = result.severities["severity"].to_numpy()
    a_names = result.severities.index.astype(str).to_numpy()
    data = pd.DataFrame({
        "name": np.concatenate([names, a_names]),
        "column": np.concatenate([_beeswarm(v, 1.0), _beeswarm(s, 2.0)]),
        "objects (measure)": np.concatenate([v, np.full(s.size, np.nan)]),
        "assessors (severity)": np.concatenate([np.full(v.size, np.nan), s])})
    values = fit.categories.used_values
    boundaries = (values[:-1] + values[1:]) / 2
    measures = fit.fair.measure_of(boundaries)
    lo = float(min(np.nanmin(v), np.nanmin(s), measures.min())) - 0.3
    hi = float(max(np.nanmax(v), np.nanmax(s), measures.max())) + 0.3
    lines = tuple(RefLine(f"{a:g} | {b:g} (average assessor)", (0.5, 2.5), (m, m), dashed=True, colour="7F7F7F")
                  for a, b, m in zip(values[:-1], values[1:], measures))
    own = user_names(settings)

    def make(header_row: int, n_rows: int) -> ChartSpec:
        return ChartSpec("scatter", f"Wright map: {own['object']}s (left) and {own['assessor']}s (right) on one "
                                    f"logit ruler{shown}; dashed: where an average assessor's expected score passes "
                                    "from one category to the next", header_row, n_rows, 2, (3, 4),
                         f"{own['object']}s (left)          {own['assessor']}s (right)",
                         "measure / severity (logits): higher = better object, harsher assessor",
                         x_range=(0.4, 2.6), y_range=(nice_floor(lo), nice_ceil(hi)), x_major=1.0,
                         x_number_format=";;;", ref_lines=lines, colours=("1F4E79", "C55A11"), **chart_kwargs())

    cols = {"column": Column("column", "0.00"), "objects (measure)": Column("objects (measure)", LOGIT),
            "assessors (severity)": Column("assessors (severity)", LOGIT)}
    return chart_page("Wright map", preamble, data, make, cols)


def category_curves_chart(result, preamble, settings=None) -> SheetSpec:
    """"Category curves": the probability of each category against the measure relative to the assessor (measure
    less severity), the thresholds (where neighbouring curves cross) drawn as vertical lines."""
    curves = result.category_curves()
    fit = result.fit
    names = list(curves.columns)
    categories = names[1:-1]
    tau = fit.thresholds[0] if fit.thresholds.shape[0] == 1 else np.nanmean(fit.thresholds, axis=0)
    values = fit.categories.used_values
    lines = tuple(RefLine(f"threshold {a:g} | {b:g}", (t, t), (0.0, 1.0), dashed=True, colour="7F7F7F")
                  for a, b, t in zip(values[:-1], values[1:], tau) if np.isfinite(t))
    data = curves.drop(columns=["expected score"])
    x = curves["measure relative to assessor"]
    which = "the assessors' average structure" if fit.thresholds.shape[0] > 1 else "the shared rating scale"
    own = user_names(settings)

    def make(header_row: int, n_rows: int) -> ChartSpec:
        return ChartSpec("scatter", f"Category probability curves ({which}): the chance of each {own['score']} "
                                    "category for an object this far above the assessor; dashed: the thresholds",
                         header_row, n_rows, 1, tuple(range(2, 2 + len(categories))),
                         "measure less severity (logits)", "probability", lines=True, markers=False,
                         y_axis_left=True, x_range=(nice_floor(float(x.min())), nice_ceil(float(x.max()))),
                         y_range=(0.0, 1.0),
                         y_major=0.2, ref_lines=lines, **chart_kwargs())

    cols = {c: Column(c, "0.000") for c in data.columns}
    return chart_page("Category curves", preamble, data, make, cols)


def rasch_residuals_sheet(result, preamble) -> SheetSpec:
    """Residuals: every read with the score its object's other reads and the assessor's severity predict, the
    difference, z, the probability of the category given and of one as far out, and whether it stands out."""
    r = result.residuals
    out = pd.DataFrame({"assessor": r["assessor"].to_numpy(), "object": r["object"].to_numpy(),
                        "score": r["score"].to_numpy(), "expected": r["expected"].to_numpy(),
                        "difference": r["residual"].to_numpy(), "z": r["z"].to_numpy(),
                        "probability": r["probability"].to_numpy(), "this far or further": r["tail"].to_numpy(),
                        "stands out": words_for_flags(r["unexpected"])})
    cols = {"score": Column("score", "General", "the score as entered"),
            "expected": Column("expected", SCORE, "the score predicted from the object's other reads and this "
                                                  "assessor's severity (rubric scale)"),
            "difference": Column("difference", SIGNED, "score minus expected"),
            "z": Column("z", SIGNED, "the difference over its predicted spread (about N(0, 1) when the model holds)"),
            "probability": Column("probability", "0.0%", "predicted probability of the category given"),
            "this far or further": Column("this far or further", "0.00%", "predicted probability of this category or "
                                                                          "one further from the prediction"),
            "stands out": Column("stands out", None, "yes = so improbable that the read should be confirmed")}
    return SheetSpec("Residuals", out, preamble, cols, highlight="stands out", landscape=False)


def rasch_unexpected_sheet(result, preamble) -> SheetSpec:
    """Unexpected (FACETS Table 4): the reads that stand out, least probable first, each in a sentence."""
    u = result.unexpected_reads()
    if not len(u):
        u = result.unexpected_reads(top=10)
    out = pd.DataFrame({"assessor": u["assessor"].to_numpy(), "object": u["object"].to_numpy(),
                        "score": u["score"].to_numpy(), "expected": u["expected"].to_numpy(),
                        "this far or further": u["tail"].to_numpy(), "stands out": words_for_flags(u["flagged"]),
                        "in plain words": u["in_words"].to_numpy()})
    cols = {"expected": Column("expected", SCORE, "the score predicted from the object's other reads"),
            "this far or further": Column("this far or further", "0.00%", "predicted probability of a category this "
                                                                          "far out or further"),
            "in plain words": Column("in plain words", None, "the read, the panel's view and how surprising it is",
                                     max_width=90, wrap=True)}
    spec = SheetSpec("Unexpected", out, preamble, cols)
    spec.footer = [[f"A read stands out when a category this far from its prediction (or further) has probability "
                    f"below {result.stats['unexpected_tail']:.2%}. "
                    + ("No read stands out: the ten least probable are listed." if not u["flagged"].any() else "")]]
    return spec


def _summary_sheet(result, table: pd.DataFrame, checks, preamble) -> SheetSpec:
    s = result.stats
    sep = result.separation()
    sev = result.severities.sort_values("severity", ascending=False)
    pm = (sev["upper"] - sev["lower"]) / 2
    level = s.get("interval_level", 0.95)
    rows = [("Panel", f"{s['n_objects']} objects scored by {s['n_assessors']} assessors in {s['n_evaluations']} reads; "
                      f"the scores read as {s['categories_used']} ordered categories ({s['categories']}).")]
    rows += decision_rows(table)
    rows.append(("Categories", " ".join(x for x in (s.get("categories_unused", ""), s["thresholds_order"]) if x)))
    rows.append(("Assessors", f"{sep.loc['assessors', 'in_words'][0].upper()}{sep.loc['assessors', 'in_words'][1:]}. "
                              f"Harshest: {sev.index[0]} (severity {sev['severity'].iloc[0]:+.2f} ± {pm.iloc[0]:.2f} "
                              f"logits; an average object would get {sev['fair_average'].iloc[0]:.2f} from them); most "
                              f"lenient: {sev.index[-1]} ({sev['severity'].iloc[-1]:+.2f} ± {pm.iloc[-1]:.2f}; "
                              f"{sev['fair_average'].iloc[-1]:.2f})."))
    rows.append(("Objects", f"{sep.loc['objects', 'in_words'][0].upper()}{sep.loc['objects', 'in_words'][1:]}; the "
                            f"objects' measures spread by {s['objects_sd']:.2f} logits (SD)."))
    rows.append(("Assessors' consistency", result._fit_words()))
    n_flag = int(result.residuals["unexpected"].sum())
    rows.append(("Reads to query", f"{n_flag} read(s) stand out: see Unexpected." if n_flag else "No read stands out."))
    steps = []
    if checks is not None and len(checks):
        steps.append(f"read the {len(checks)} line(s) on Checks")
    if n_flag:
        steps.append("query the reads on Unexpected with their assessors")
    if "final" in table.columns and (table["final"] == "to discuss").any():
        steps.append(f"decide the {int((table['final'] == 'to discuss').sum())} object(s) to discuss")
    if s["thresholds_order"].startswith("Disordered"):
        steps.append("look at the category table (Categories): a category is never the most probable")
    rows.append(("What to do next", ("; ".join(steps) + ".").capitalize() if steps else
                 "Nothing stands out: the ranking can go to the panel."))
    rows.append(("How this was computed",
                 f"Model {s['model']}: {s['estimation']}; severities centred ({s['gauge_meaning']}). Measures are "
                 "posterior means with standard errors that include the severities' and thresholds' uncertainty; "
                 f"fair averages are on the rubric's scale. Every ± is half the {level_text(level)} interval. "
                 f"{s['confidences'][0].upper()}{s['confidences'][1:]}."))
    if s.get("groups"):
        rows.append(("Groups of assessors", s["groups"][0].upper() + s["groups"][1:] + "."))
    frame = pd.DataFrame(rows, columns=["topic", "in plain words"])
    cols = {"topic": Column("topic", None, "", max_width=22),
            "in plain words": Column("in plain words", None, "", wrap=True, max_width=84)}
    title = [[f"{preamble[0][0]}: summary for the minutes"]] + [list(x) for x in preamble[1:2]] if preamble else []
    return SheetSpec("Summary", frame, title, cols, landscape=False)


def _ranking_sheets(result, settings, preamble, decisions) -> tuple[SheetSpec, SheetSpec, pd.DataFrame]:
    """The Ranking and its chart in measures (logits: the ± of a measure is symmetric, that of a fair average is
    not -- near the ends of the rubric a fair average's interval is squeezed on one side), with each object's fair
    average and its interval on the rubric's scale beside the measure."""
    table = ranking_table(result, settings, decisions)
    in_logits = table.assign(value=table["measure"], se=table["measure_se"], lower=table["measure_lower"],
                             upper=table["measure_upper"])
    in_logits.attrs.update(table.attrs)
    line_settings = settings
    if getattr(settings, "fund_threshold", None) is not None and table.attrs.get("measure_line") is not None:
        line_settings = replace(settings, fund_threshold=table.attrs["measure_line"])  # the line as a measure
    spec = ranking_sheet(result, line_settings, preamble, in_logits)
    chart = ranking_chart(spec, in_logits, line_settings, preamble)
    chart.charts = [replace(c, title=c.title.replace("Calibrated value", "Measure"),
                            x_title=c.x_title.replace("highest calibrated value", "highest measure"),
                            y_title="measure (logits)") for c in chart.charts]
    frame = spec.frame.rename(columns={"calibrated value": "measure", "raw mean": "observed average",
                                       "raw rank": "observed rank"})
    at = frame.columns.get_loc("measure") + 2  # after the measure's ±
    frame.insert(at, "fair average", table["value"].to_numpy())
    spec.frame = frame
    spec.columns.update({
        "measure": Column("measure", LOGIT, "the object's measure in logits (posterior mean): objects are ranked by "
                                            "it, and the draws behind P(above) are of it"),
        "fair average": Column("fair average", SCORE, "the score an assessor of average severity would give (rubric "
                                                      "scale; its interval is on Measures)"),
        "observed average": Column("observed average", SCORE, "plain average of the object's scores"),
        "observed rank": Column("observed rank", COUNT, "rank by the plain average")})
    spec.footer = list(spec.footer) + [["Measures in logits; the fair average puts a measure on the rubric's scale. "
                                        + (f"The funding line {table.attrs['line']} is the measure "
                                           f"{table.attrs['measure_line']:+.2f}." if table.attrs.get("measure_line")
                                           is not None else "")]]
    return spec, chart, table


def rasch_sheets(result, frames: dict[str, pd.DataFrame], settings, preamble, *,
                   decisions: pd.DataFrame | None = None) -> list[SheetSpec]:
    """Every sheet of the ordinal calibration's workbook, in reading order (module docstring)."""
    ranking, ranking_chart_page, table = _ranking_sheets(result, settings, preamble, decisions)
    run_warnings = checks_from_warnings(frames["Diagnostics"])
    checks = frames.get("Checks")
    checks = run_warnings if checks is None else pd.concat([checks, run_warnings], ignore_index=True)
    sheets = [ranking, ranking_chart_page, _summary_sheet(result, table, checks, preamble),
              measures_sheet(result, preamble), severities_sheet(result, preamble),
              categories_sheet(result, preamble)]
    if (table.attrs.get("lottery") or {}).get("digest"):  # the lottery's public record, after the Summary
        sheets.insert(3, lottery_sheet(table, preamble))
    if result.fit.thresholds.shape[0] > 1:
        sheets.append(thresholds_sheet(result, preamble))
    sheets += [wright_map_chart(result, preamble, settings), category_curves_chart(result, preamble, settings),
               checks_sheet(checks, preamble), rasch_residuals_sheet(result, preamble),
               rasch_unexpected_sheet(result, preamble), diagnostics_sheet(frames["Diagnostics"], preamble)]
    return sheets
