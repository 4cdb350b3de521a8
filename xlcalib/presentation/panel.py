"""The panel's other result sheets: Biases (with its chart page), Values (with its chart page), Residuals,
Checks, Diagnostics (every technical figure under its plain name, the technical name beside it), the Design
sheet of ``xlcalib assign`` and the Next reads sheet."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..calibration.meanings import STATISTICS, statistic_label, statistic_meaning
from ..workbook.base import ChartSpec, Column, RefLine, SheetSpec
from .common import (
    COLUMNS,
    COUNT,
    MIXED,
    PROB,
    SCORE,
    SIGNED,
    chart_kwargs,
    chart_page,
    half_width,
    level_text,
    nice_ceil,
    nice_floor,
    value_span,
    pm_header,
    pm_meaning,
    user_names,
    words_for_flags,
)


def assessor_sentence(bias: float, pm: str, n: int) -> str:
    """'scores on average 1.20 ± 0.30 points below the panel, 21 reads'."""
    side = "below" if bias < 0 else "above"
    if abs(bias) < 0.005:
        return f"scores in line with the panel{(' (' + pm.strip() + ')') if pm else ''}, {n} reads"
    return f"scores on average {abs(bias):.2f}{pm} points {side} the panel, {n} reads"


def bias_sentences(b: pd.DataFrame) -> list[str]:
    """Each assessor's bias (and use of the scale, when modelled) as one sentence with the same ± as the sheet."""
    from ..calibration.models.scale_use import gain_sentence

    pm = half_width(b) if {"lower", "upper"} <= set(b.columns) else np.full(len(b), np.nan)
    out = [assessor_sentence(bias, f" ± {h:.2f}" if np.isfinite(h) else "", int(n))
           for bias, h, n in zip(b["bias"].tolist(), pm.tolist(), b["n"].tolist())]
    if "gain" in b.columns:
        gain_pm = ((b["gain_upper"] - b["gain_lower"]) / 2).tolist() if "gain_upper" in b.columns else \
            [np.nan] * len(b)
        out = [f"{text}; {gain_sentence(float(gain), float(g_pm), q=1.0)}"
               for text, gain, g_pm in zip(out, b["gain"].tolist(), gain_pm)]
    return out


def assessors_sheet(result, preamble) -> SheetSpec:
    """Biases: assessors harshest first, bias with the ± of its interval, a plain sentence (with the use of the
    scale when modelled), reads and flagged reads with their objects."""
    level = result.stats.get("interval_level", 0.95)
    b = result.biases.sort_values("bias", kind="mergesort")
    res = result.residuals
    flagged = res[res["anomalous"].astype(bool)]
    by_assessor = flagged.groupby("assessor", sort=False)["object"].apply(lambda s: ", ".join(map(str, s)))
    pm = pm_header(level)
    out = pd.DataFrame({"assessor": b.index.astype(str), "bias": b["bias"].to_numpy(), pm: half_width(b)})
    cols = {"assessor": Column("assessor", None, "the assessor as entered", max_width=24), "bias": COLUMNS["bias"],
            pm: Column(pm, SCORE, pm_meaning(level, "bias"))}
    out["in plain words"] = bias_sentences(b)
    cols["in plain words"] = Column("in plain words", None, "the bias (and the use of the scale, when modelled) as a "
                                                            "sentence for feedback", max_width=60)
    if "gain" in b.columns:
        out["gain"] = b["gain"].to_numpy()
        cols["gain"] = Column("gain", SCORE, "how widely the assessor spreads scores: 1 = like the panel, below 1 "
                                             "compresses, above 1 spreads")
    out["reads"] = b["n"].to_numpy()
    cols["reads"] = Column("reads", COUNT, COLUMNS["n"].meaning)
    counts = flagged.groupby("assessor", sort=False, observed=True).size()  # one pass, not one per assessor
    out["flagged reads"] = [int(counts.get(a, 0)) for a in b.index]
    cols["flagged reads"] = Column("flagged reads", COUNT, "reads of this assessor that stand out (see Unexpected)")
    out["flagged objects"] = [by_assessor.get(a, "") for a in b.index]
    cols["flagged objects"] = Column("flagged objects", None, "the objects of the flagged reads: query these",
                                     max_width=30)
    spec = SheetSpec("Biases", out, preamble, cols, freeze_columns=1)
    spec.footer = [[f"± is half the width of the {level_text(level)} interval, as on every sheet. A bias is measured "
                    "against the panel's typical assessor (0); the robustness bounds of the design are on "
                    "Diagnostics."]]
    return spec


#: Assessors shown on the Biases chart at most (their names must stay readable under the points).
CHART_ASSESSORS = 60


def biases_chart(spec: SheetSpec, preamble, settings=None) -> SheetSpec:
    """"Biases chart": each assessor's bias with its interval, harshest first, the panel's typical assessor (0)
    drawn across; every assessor shown named under its point (a large panel: the :data:`CHART_ASSESSORS` / 2
    harshest and most lenient, whose names stay readable; the Biases sheet lists them all)."""
    f = spec.frame
    pm = next(c for c in f.columns if str(c).startswith("±"))
    shown = "" if len(f) <= CHART_ASSESSORS else f", the {CHART_ASSESSORS // 2} harshest and most lenient of {len(f)}"
    if shown:
        f = pd.concat([f.head(CHART_ASSESSORS // 2), f.tail(CHART_ASSESSORS // 2)])
    data = pd.DataFrame({"assessor": f["assessor"].astype(str).to_numpy(), "bias": f["bias"].to_numpy(),
                         "typical assessor (0)": 0.0, "± bias": f[pm].to_numpy()})
    lo, hi = value_span(f["bias"], f[pm])
    pad = 0.05 * (hi - lo if hi > lo else 1.0)
    own = user_names(settings)

    def make(header_row: int, n_rows: int) -> ChartSpec:
        return ChartSpec("dots", f"Assessor bias with its {pm[3:-1]}, harshest first{shown}", header_row, n_rows,
                         1, (2,),
                         f"{own['assessor']} (harshest first)",
                         f"bias ({own['score']} points; below 0 = harsher than the panel)",
                         error_columns=(4,), line_columns=(3,), colours=("1F4E79",),
                         y_range=(nice_floor(min(lo - pad, 0)), nice_ceil(max(hi + pad, 0))), **chart_kwargs())

    return chart_page("Biases chart", preamble, data, make, {"bias": Column("bias", SIGNED)})


#: The Values sheet's columns under plain headers (the CSV and JSON files keep the core's names).
VALUE_HEADERS = {"object": "object", "raw_mean": "raw mean", "value": "calibrated value", "se": "standard error",
                 "lower": "lower", "upper": "upper", "total_confidence": "total confidence", "n": "reads",
                 "component": "group of assessors"}


def values_sheet(frame: pd.DataFrame, preamble, scatter_bounds, level: float = 0.95,
                 settings=None) -> tuple[SheetSpec, SheetSpec]:
    """Values (highest calibrated value first, under plain headers; the design's robustness bounds are on
    Diagnostics) and its chart page: raw mean against calibrated value with y = x drawn."""
    frame = frame.sort_values("value", ascending=False, kind="mergesort").reset_index(drop=True)
    frame = frame.drop(columns=[c for c in ("robustness_bound",) if c in frame.columns])
    shown = frame.rename(columns={k: v for k, v in VALUE_HEADERS.items() if k in frame.columns})
    lower, upper = f"lower ({level_text(level)})", f"upper ({level_text(level)})"
    shown = shown.rename(columns={"lower": lower, "upper": upper})
    cols = {VALUE_HEADERS.get(k, k): Column(VALUE_HEADERS.get(k, k), c.number_format, c.meaning)
            for k, c in COLUMNS.items()}
    cols[lower] = Column(lower, SCORE, f"lower end of the {level_text(level)} interval")
    cols[upper] = Column(upper, SCORE, f"upper end of the {level_text(level)} interval")
    cols["group of assessors"] = Column("group of assessors", COUNT, "the connected group of assessors the object "
                                                                     "belongs to (values comparable only within one)")
    spec = SheetSpec("Values", shown, preamble, cols, freeze_columns=1)
    spec.footer = [["total confidence: the sum of the confidences of the object's reads (more and surer reads, "
                    "larger); the standard error is the uncertainty of the calibrated value, the interval its "
                    f"{level_text(level)} range."]]
    lo, hi = scatter_bounds
    data = pd.DataFrame({"object": shown["object"].astype(str), "raw mean": shown["raw mean"],
                         "calibrated value": shown["calibrated value"]})
    own = user_names(settings)

    def make(header_row: int, n_rows: int) -> ChartSpec:
        return ChartSpec("scatter", "Raw mean against calibrated value, one point per object", header_row, n_rows,
                         2, (3,), f"raw mean {own['score']} (plain average)", f"calibrated {own['score']}",
                         x_range=(lo, hi), y_range=(lo, hi),
                         ref_lines=(RefLine("y = x (no change)", (lo, hi), (lo, hi)),), **chart_kwargs())

    return spec, chart_page("Values chart", preamble, data, make)


#: The Residuals sheet's columns under plain headers.
RESIDUAL_HEADERS = {"fitted": "expected", "residual": "difference", "std_residual": "standardised difference",
                    "anomalous": "stands out", "z": "z (fit statistics)"}


def residuals_sheet(frame: pd.DataFrame, preamble) -> SheetSpec:
    """Residuals: every read with what the model expects, the difference and whether it stands out (in words)."""
    shown = frame.rename(columns=RESIDUAL_HEADERS)
    shown["stands out"] = words_for_flags(frame["anomalous"])
    cols = {"score": COLUMNS["score"],
            "expected": Column("expected", SCORE, COLUMNS["fitted"].meaning),
            "difference": Column("difference", SIGNED, COLUMNS["residual"].meaning),
            "standardised difference": Column("standardised difference", SIGNED, COLUMNS["std_residual"].meaning),
            "stands out": Column("stands out", None, COLUMNS["anomalous"].meaning)}
    if "z" in frame:  # the leverage and the z the fit statistics use: outfit can be recomputed from this sheet
        cols["leverage"] = COLUMNS["leverage"]
        cols["z (fit statistics)"] = Column("z (fit statistics)", SIGNED, COLUMNS["z"].meaning)
    return SheetSpec("Residuals", shown, preamble, cols, highlight="stands out", landscape=False)


def checks_sheet(checks: pd.DataFrame, preamble) -> SheetSpec:
    """Checks: one line per problem found in the input (severity, sheet, cell, problem)."""
    if checks is None or not len(checks):
        checks = pd.DataFrame({"severity": ["ok"], "sheet": [""], "cell": [""], "problem": ["no problems found"]})
    cols = {"severity": Column("severity", None, "error = the run could not use it; warning = used, but look at it; "
                                                  "pending = allocated, not scored yet"),
            "problem": Column("problem", None, "what is wrong and what to do", max_width=100)}
    return SheetSpec("Checks", checks.reset_index(drop=True), preamble, cols)


def checks_from_warnings(diagnostics: pd.DataFrame) -> pd.DataFrame:
    """Until the input checks report their own lines: the run's warnings as Checks lines."""
    w = diagnostics[diagnostics["statistic"] == "warning"]
    return pd.DataFrame({"severity": "warning", "sheet": None, "cell": None, "problem": w["value"].astype(str).to_numpy()})


# ----------------------------------------------------------------------------
# Diagnostics: each technical figure under a plain name, its technical name beside it
# ----------------------------------------------------------------------------
#: The figures' plain names and meanings are the core's one table (xlcalib.calibration.meanings); the technical
#: name stays in its own column.
#: Descriptions the core phrases as formulas, in words for the Diagnostics sheet.
_PLAIN_VALUES = {
    "gauge": {"weighted": "confidence-weighted: the typical assessor's bias is 0",
              "simple": "plain: the average assessor's bias is 0"},
    "gauge_meaning": {"weighted": "the confidence-weighted average bias is zero: values sit on the panel's own scale",
                      "simple": "the plain average bias is zero: values sit on the panel's own scale"},
    "bound_meaning": "the largest change of a value or bias that score errors of the size the model expects could "
                     "cause: a design diagnostic, not an error bar",
    "interval_kind": {"t": "Student t (noise scale estimated)", "normal": "normal (SDs at face value)"},
}


def plain_value(key: str, value: Any, stats: dict) -> Any:
    """A figure as the Diagnostics sheet shows it: descriptions in words, true / false as yes / no."""
    plain = _PLAIN_VALUES.get(key)
    if isinstance(plain, dict):
        return plain.get(str(stats.get("gauge", "")) if key == "gauge_meaning" else str(value), value)
    if plain is not None:
        return plain
    if isinstance(value, (bool, np.bool_)):
        return words_for_flags([value])[0]
    if key == "interval_level" and isinstance(value, (float, np.floating)):
        return f"{value:.0%}"
    return value


def stat_verdict(key: str, value: Any, stats: dict | None = None) -> str:
    """A plain verdict for a technical figure ('' when the figure is a description, not a quality)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return ""
    if not np.isfinite(v):
        return ""
    if key == "mu2":
        from ..calibration import overlap_verdict

        return f"assessor overlap {v:.2f}: " + overlap_verdict(v)
    if key == "n_components":
        return "good: one connected panel" if v == 1 else "split panel: values of different groups not comparable"
    if key == "w_estimated" and stats is not None:
        if "face value" in str(stats.get("noise_scale", "")):  # SDs in score units: w about 1 when they are honest
            return str(stats.get("noise_check") or "")
        # relative confidences: w is the variance of a read of confidence 1 (Medium), in score units squared
        which = "a Medium read" if str(stats.get("uncertainty_kind")) == "level" else "a read of confidence 1"
        return f"{which} scatters about ± {np.sqrt(v):.2f} score points around the model"
    return ""


def robustness_rows(result) -> pd.DataFrame:
    """The design's robustness bounds per object and per assessor, summarised under their name (MacKay et al.
    2017): worst-case changes, not the ± of anything."""
    rows = []
    for what, table in (("values", result.values), ("biases", result.biases)):
        if "robustness_bound" not in table.columns or not table["robustness_bound"].notna().any():
            continue  # none: readers pooled into the noise have no bias to bound; scores that fit exactly no noise
        bound = table["robustness_bound"].astype(float).dropna()
        worst = bound.idxmax()
        rows.append({"statistic": f"robustness_bound ({what})",
                     "value": float(bound.median()),
                     "meaning": f"robustness bound of the {what}, median (largest {bound.max():.3g}, {worst}): "
                                "the worst-case change for score errors of the expected total size (MacKay et al. "
                                "2017, a design diagnostic; not a ±)"})
    return pd.DataFrame(rows, columns=["statistic", "value", "meaning"])


def diagnostics_sheet(frame: pd.DataFrame, preamble, result=None) -> SheetSpec:
    """Diagnostics: each technical figure under its plain name, with a verdict, what it measures, and its
    technical name (for a statistician, and to find it in the JSON output); the robustness bounds here too."""
    f = frame.copy()
    if result is not None:
        f = pd.concat([f[f["statistic"] != "warning"], robustness_rows(result), f[f["statistic"] == "warning"]],
                      ignore_index=True)
    stats = dict(zip(f["statistic"], f["value"]))
    keys = [str(k) for k in f["statistic"]]
    base = [k.split(" (")[0] for k in keys]
    out = pd.DataFrame({
        "figure": [k.replace("robustness_bound", "robustness bound") if b == "robustness_bound" else
                   statistic_label(b) if b in STATISTICS else k for k, b in zip(keys, base)],
        "value": [plain_value(k, v, stats) for k, v in zip(keys, f["value"])],
        "verdict": [stat_verdict(k, v, stats) if k != "warning" else "look at this" for k, v in zip(keys, f["value"])],
        "meaning": [m if b == "robustness_bound" else (statistic_meaning(b) or m) for b, m in zip(base, f["meaning"])],
        "technical name": ["" if k == "warning" else k for k in keys]})
    # widths that keep the five columns at 9 pt or larger on a landscape page (long texts wrap)
    cols = {"figure": Column("figure", None, "the figure in plain words", max_width=28),
            "value": Column("value", MIXED, "the figure", max_width=30),
            "verdict": Column("verdict", None, "what the figure says in plain words", max_width=30),
            "meaning": Column("meaning", None, "what the figure measures", max_width=44),
            "technical name": Column("technical name", None, "the name in the statistics literature and in the JSON "
                                                             "output (stats)", max_width=20)}
    return SheetSpec("Diagnostics", out, preamble, cols, landscape=True)


# ----------------------------------------------------------------------------
# xlcalib assign: the Design sheet
# ----------------------------------------------------------------------------
#: Rows of the Design comparison that are counts (shown as whole numbers).
_DESIGN_COUNTS = ("connected components", "reads", "reads per object min", "reads per object max", "load min",
                  "load max", "assessors without reads")


def design_sheet(comparison: pd.DataFrame, tradeoff: pd.DataFrame, lines: list[str]) -> SheetSpec:
    """Design (``xlcalib assign``): the verdict lines, the trade-off between suitability and assessor overlap
    (one row per share tried, the chosen one marked), then the chosen allocation against the suitability-only
    one.  The overlap words are :func:`stat_verdict`'s, as on a calibration's Diagnostics sheet; counts are whole
    numbers."""
    preamble = [[line] for line in lines]
    if tradeoff is not None and len(tradeoff) > 1:
        preamble += [[], ["Trade-off: the suitability kept against the assessor overlap (choose the share with these "
                          "numbers; --share picks the row)"],
                     ["minimum share", "suitability kept", "mu2", "assessor overlap", "groups", "reads changed",
                      "seconds", ""]]
        for r in tradeoff.to_dict("records"):
            preamble.append([round(r["minimum share"], 4), round(r["suitability share"], 4), round(r["mu2"], 4),
                             stat_verdict("mu2", r["mu2"]) or r["overlap"], int(r["components"]),
                             int(r["reads changed"]), round(r["seconds"], 1), "<- this allocation" if r["chosen"] else ""])
        preamble += [[], ["The chosen allocation against the suitability-only one:"]]
    comparison = comparison.copy()
    counts = comparison["statistic"].isin(_DESIGN_COUNTS).to_numpy()
    for column in comparison.columns[1:-1]:
        comparison[column] = [int(round(float(v))) if c and isinstance(v, (int, float, np.number)) and np.isfinite(v)
                              else v for v, c in zip(comparison[column], counts)]
    cols = {"this allocation": Column("this allocation", MIXED, "the allocation written to Evaluations", max_width=50),
            "meaning": Column("meaning", None, "what the figure measures", max_width=90)}
    for label in ("suitability only", "balanced start"):
        cols[label] = Column(label, MIXED, "the allocation by suitability alone (no links bought)", max_width=50)
    return SheetSpec("Design", comparison, preamble, cols)


# ----------------------------------------------------------------------------
# Next reads
# ----------------------------------------------------------------------------
def next_reads_sheet(suggestions: pd.DataFrame, preamble) -> SheetSpec:
    """Next reads: one plain sentence per suggested read (whom to ask for what, and what it should change), with
    the object's chance now and its standard error before and after; the rules kept are in the preamble."""
    s = suggestions
    attrs = s.attrs
    out = pd.DataFrame({"order": s["order"].to_numpy(), "ask": s["assessor"].astype(str).to_numpy(),
                        "to read": s["object"].astype(str).to_numpy(), "in plain words": s["reason"].to_numpy()})
    cols = {"order": Column("order", COUNT, "ask in this order: each read is chosen given the ones before"),
            "ask": Column("ask", None, "the assessor to ask", max_width=24),
            "to read": Column("to read", None, "the object to read", max_width=24),
            "in plain words": Column("in plain words", None, "the suggestion and what it is expected to change",
                                     max_width=80)}
    if attrs.get("line"):
        out["P(above line) now"] = s["p_above"].to_numpy()
        cols["P(above line) now"] = Column("P(above line) now", PROB, "the object's chance of being above the line "
                                                                      "before the read")
    basis = attrs.get("se_basis") or "as the decisions see it"
    out["decision SE now"] = s["se_before"].to_numpy()
    out["decision SE after"] = s["se_after"].to_numpy()
    cols["decision SE now"] = Column("decision SE now", SCORE, f"the object's standard error before the read, {basis}")
    cols["decision SE after"] = Column("decision SE after", SCORE, "its standard error after the read (with the "
                                                                   "reads suggested before it and those pending), "
                                                                   "measured the same way")
    if not len(out):
        out = pd.DataFrame({"order": [None], "in plain words": [attrs.get("note") or "no read can be suggested"]})
    spec = SheetSpec("Next reads", out, preamble, cols, freeze_columns=1)
    goal = (f"Goal: fewer objects on the wrong side of the funding line {attrs['line']} (the reads expected to settle "
            "the most decisions; each within the panel's rules)." if attrs.get("line") else
            "Goal: no funding line is set, so these are the reads that most reduce the values' uncertainty.")
    spec.footer = ([[goal]] + ([[f"Note: {attrs['note']}."]] if attrs.get("note") else [])
                   + ([[f"{attrs['advice']}."]] if attrs.get("advice") else [])
                   + ([[f"Decision SE: the standard error {basis}."]] if len(s) else []))
    return spec
