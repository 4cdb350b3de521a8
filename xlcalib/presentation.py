"""How result sheets look: which sheets, in which order, with which formats, meanings, verdicts and charts.

One place for the CLI, the macros and the xlwings path: every function here
turns result objects into :class:`~xlcalib.workbook.base.SheetSpec` data
(pure pandas; no openpyxl, no xlwings), and each workbook backend renders the
descriptions the same way.  Why: a panel decides from, and pastes into its
minutes, what it *sees* — ranked objects with an honest ±, the funding line,
plain-words verdicts — so how a number is shown is part of getting it right.

Conventions: scores and biases with 2 decimals, probabilities as percentages,
counts as integers, reliabilities with 3 decimals; every column's meaning
is a comment on its header; text columns are as wide as their longest text
(capped, then wrapped); the header row is frozen and repeated on every printed
page; sheets print landscape, one page wide.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from .workbook.base import ChartSpec, Column, RefLine, SheetSpec

SCORE, PROB, COUNT, RELIAB = "0.00", "0%", "0", "0.000"
SIGNED = "+0.00;-0.00;0.00"
PVALUE = '[<0.0001]"<0.0001";0.0000'
#: columns shown with mixed numbers (counts and figures in one column): integers as integers
MIXED = "auto:0.000"

#: Columns that mean the same on every sheet they appear on.
COLUMNS: dict[str, Column] = {c.name: c for c in [
    Column("value", SCORE, "calibrated value: the object's score with every assessor's stringency taken out "
                           "(score units)"),
    Column("raw_mean", SCORE, "plain average of the object's scores, before calibration"),
    Column("se", SCORE, "standard error of the calibrated value (score units): the honest ±"),
    Column("lower", SCORE, "lower end of the interval at the run's interval level"),
    Column("upper", SCORE, "upper end of the interval at the run's interval level"),
    Column("robustness_bound", SCORE, "robustness bound: worst-case change for score errors of the expected size - "
                                      "a design diagnostic, not the ± of the value"),
    Column("total_confidence", SCORE, "sum of the confidences (1/SD²) of the reads: more and surer reads, larger"),
    Column("n", COUNT, "number of reads (evaluations)"),
    Column("bias", SIGNED, "assessor's stringency in score units: negative = harsher than the panel, "
                           "positive = more lenient"),
    Column("score", SCORE, "the score as entered"),
    Column("fitted", SCORE, "what the model expects: calibrated value + the assessor's bias"),
    Column("residual", SIGNED, "score minus what the model expects (score units)"),
    Column("std_residual", SIGNED, "residual in units of its expected spread; beyond the anomaly threshold = flagged"),
    Column("anomalous", None, "TRUE = the read stands out: ask the assessor to confirm it"),
    Column("certainty", "0.0%", "probability that the most certain label is right"),
]}


def _level_text(level) -> str:
    return f"{100 * float(level):.0f}%"


def _fmt(x: float, digits: int = 2) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.{digits}f}"


# ----------------------------------------------------------------------------
# calibration
# ----------------------------------------------------------------------------
def ranking_table(result, settings) -> pd.DataFrame:
    """The run's ranking (``result.decisions``, computed once by the run) or the core's ranking with the run's
    funding line, draws and seed; a panel split into unconnected groups (no common scale, no joint ranking)
    gets its values sorted with plain ranks, and the Summary says why."""
    from .errors import InputError

    if result.decisions is not None:
        return result.decisions
    kwargs = settings.ranking_arguments() if hasattr(settings, "ranking_arguments") else {}
    try:
        return result.ranking(**kwargs)
    except InputError:
        if result.stats.get("n_components", 1) == 1:
            raise
    v = result.values.sort_values("value", ascending=False, kind="mergesort")
    v.insert(0, "rank", np.arange(1, len(v) + 1, dtype=np.intp))
    v["raw_rank"] = v["raw_mean"].rank(ascending=False, method="min").astype(np.intp)
    return v


def ranking_sheet(result, settings, preamble) -> SheetSpec:
    """Ranking: objects sorted by calibrated value, ± interval, raw mean and rank, rank interval, reads,
    P(above the funding line) and the decision; the line drawn under the last funded row; rows whose
    decision calibration changed marked; a caterpillar chart."""
    r = ranking_table(result, settings)
    level = r.attrs.get("level") or result.stats.get("interval_level") or getattr(settings, "interval_level", None)
    out = pd.DataFrame({"rank": r["rank"].to_numpy(), "object": r.index.astype(str)})
    cols: dict[str, Column] = {"rank": Column("rank", COUNT, "1 = highest calibrated value"),
                               "object": Column("object", None, "the object (proposal, candidate ...) as entered")}
    value_col = "calibrated value"
    out[value_col] = r["value"].to_numpy()
    cols[value_col] = Column(value_col, SCORE, COLUMNS["value"].meaning)
    pm = None
    if {"lower", "upper"} <= set(r.columns):
        pm = f"± ({_level_text(level)} interval)" if level else "± (interval)"
        out[pm] = ((r["upper"] - r["lower"]) / 2).to_numpy()
        cols[pm] = Column(pm, SCORE, "half the width of the interval: the calibrated value is within ± this "
                                     "at the stated level (from the standard error)")
    elif "se" in r.columns:
        pm = "± (standard error)"
        out[pm] = r["se"].to_numpy()
        cols[pm] = Column(pm, SCORE, COLUMNS["se"].meaning)
    out["raw mean"] = r["raw_mean"].to_numpy()
    cols["raw mean"] = Column("raw mean", SCORE, COLUMNS["raw_mean"].meaning)
    out["raw rank"] = r["raw_rank"].to_numpy()
    cols["raw rank"] = Column("raw rank", COUNT, "rank by the plain average (before calibration)")
    if {"rank_lower", "rank_upper"} <= set(r.columns):
        out["rank range"] = [f"{int(a)}-{int(b)}" if a != b else f"{int(a)}"
                             for a, b in zip(r["rank_lower"], r["rank_upper"])]
        cols["rank range"] = Column("rank range", None, "ranks the object plausibly holds given the uncertainty "
                                                        "of all values (simulation)")
    out["reads"] = r["n"].to_numpy()
    cols["reads"] = Column("reads", COUNT, COLUMNS["n"].meaning)
    out["total confidence"] = r["total_confidence"].to_numpy()
    cols["total confidence"] = Column("total confidence", SCORE, COLUMNS["total_confidence"].meaning)
    line_after, mark, line_value = None, None, None
    if "p_above" in r.columns:
        out["P(above line)"] = r["p_above"].to_numpy()
        cols["P(above line)"] = Column("P(above line)", PROB, "probability that the object truly belongs above the "
                                                              "funding line, given the uncertainty of all values")
        out["decision"] = r["decision"].astype(str).to_numpy()
        cols["decision"] = Column("decision", None, "above / below the line; borderline = the data cannot tell")
        if "lottery" in r.columns:
            out["lottery"] = r["lottery"].astype(str).to_numpy()
            cols["lottery"] = Column("lottery", None, "outcome of the lottery among borderline objects")
        out["raw decision"] = r["raw_decision"].astype(str).to_numpy()
        cols["raw decision"] = Column("raw decision", None, "the decision plain averages would have given")
        out["changed by calibration"] = r["changed"].astype(bool).to_numpy()
        cols["changed by calibration"] = Column("changed by calibration", None,
                                                "TRUE = calibration changed this object's decision (rows in amber)")
        mark = "changed by calibration"
        line = r.attrs.get("line")
        top_k, threshold = getattr(settings, "fund_top_k", None), getattr(settings, "fund_threshold", None)
        if top_k:
            line_after = int(min(top_k, len(out))) - 1
        elif threshold is not None:
            line_after = int((out[value_col] >= threshold).sum()) - 1
        if isinstance(line, (int, float)) and not isinstance(line, bool) and threshold is not None:
            line_value = float(line)
        elif line_after is not None and 0 <= line_after < len(out) - 1:
            line_value = float((out[value_col].iloc[line_after] + out[value_col].iloc[line_after + 1]) / 2)
        elif threshold is not None:
            line_value = float(threshold)
        if line_after is not None and line_after < 0:
            line_after = None
    spec = SheetSpec("Ranking", out, preamble, cols, mark=mark, line_after=line_after, freeze_columns=2)
    spec.charts.append(caterpillar(spec, value_col, pm, line_value))
    return spec


def caterpillar(spec: SheetSpec, value_col: str, pm: str | None, line_value: float | None) -> ChartSpec:
    """Objects in rank order, calibrated value with its interval, the funding line across."""
    f = spec.frame
    names = list(f.columns)
    lo = (f[value_col] - (f[pm] if pm else 0)).min()
    hi = (f[value_col] + (f[pm] if pm else 0)).max()
    pad = 0.05 * (hi - lo if hi > lo else 1.0)
    refs = ()
    if line_value is not None:
        refs = (RefLine("funding line", (0.5, len(f) + 0.5), (line_value, line_value), dashed=False),)
    return ChartSpec("scatter", "Calibrated value by rank" + (" with its interval" if pm else ""), spec.header_row,
                     len(f), names.index("rank") + 1, (names.index(value_col) + 1,), "rank (1 = highest)",
                     "calibrated value (score units)", error_column=names.index(pm) + 1 if pm else None,
                     anchor=f"{_letter(len(names) + 2)}2", width_cm=22, height_cm=11,
                     x_range=(0, len(f) + 1), y_range=(_nice_floor(lo - pad), _nice_ceil(hi + pad)),
                     ref_lines=refs)


def _nice_floor(x: float) -> float:
    return math.floor(x * 2) / 2


def _nice_ceil(x: float) -> float:
    return math.ceil(x * 2) / 2


def _letter(index: int) -> str:
    out = ""
    while index:
        index, rem = divmod(index - 1, 26)
        out = chr(65 + rem) + out
    return out


def assessor_sentence(bias: float, pm: str, n: int) -> str:
    """'scores on average 1.20 ± 0.30 points below the panel, 21 reads'."""
    side = "below" if bias < 0 else "above"
    if abs(bias) < 0.005:
        return f"scores in line with the panel{(' (' + pm.strip() + ')') if pm else ''}, {n} reads"
    return f"scores on average {abs(bias):.2f}{pm} points {side} the panel, {n} reads"


def assessors_sheet(result, preamble) -> SheetSpec:
    """Biases: assessors harshest first, bias with ±, a plain sentence, reads and flagged reads."""
    b = result.biases.sort_values("bias", kind="mergesort")
    res = result.residuals
    flagged = res[res["anomalous"].astype(bool)]
    by_assessor = flagged.groupby("assessor", sort=False)["object"].apply(lambda s: ", ".join(map(str, s)))
    out = pd.DataFrame({"assessor": b.index.astype(str), "bias": b["bias"].to_numpy()})
    cols = {"assessor": Column("assessor", None, "the assessor as entered"), "bias": COLUMNS["bias"]}
    if "se" in b.columns:  # the ± of a bias is its standard error (as the CLI prints it)
        out["± (standard error)"] = b["se"].to_numpy()
        cols["± (standard error)"] = Column("± (standard error)", SCORE, "standard error of the bias (score units)")
    out["in plain words"] = [assessor_sentence(row["bias"], f" ± {row['se']:.2f}" if "se" in row and
                                               np.isfinite(row["se"]) else "", int(row["n"]))
                             for _, row in b.iterrows()]
    cols["in plain words"] = Column("in plain words", None, "the bias as a sentence for feedback", max_width=70)
    out["reads"] = b["n"].to_numpy()
    out["flagged reads"] = [int((flagged["assessor"] == a).sum()) for a in b.index]
    cols["flagged reads"] = Column("flagged reads", COUNT, "reads of this assessor that stand out (see Residuals)")
    out["flagged objects"] = [by_assessor.get(a, "") for a in b.index]
    cols["flagged objects"] = Column("flagged objects", None, "the objects of the flagged reads: query these",
                                     max_width=40)
    out["total confidence"] = b["total_confidence"].to_numpy()
    cols["total confidence"] = Column("total confidence", SCORE, COLUMNS["total_confidence"].meaning)
    bound = "robustness_bound" if "robustness_bound" in b.columns else "bound"
    out["robustness bound (design)"] = b[bound].to_numpy()
    cols["robustness bound (design)"] = Column("robustness bound (design)", SCORE, COLUMNS["robustness_bound"].meaning)
    cols["reads"] = Column("reads", COUNT, COLUMNS["n"].meaning)
    spec = SheetSpec("Biases", out, preamble, cols, freeze_columns=1)
    names = list(out.columns)
    pm = next((c for c in names if c.startswith("±")), None)
    spec.charts.append(ChartSpec(
        "column", "Assessor bias, harshest first" + (f" ({pm})" if pm else ""), spec.header_row, len(out),
        1, (2,), "assessor", "bias (score units)", error_column=names.index(pm) + 1 if pm else None,
        anchor=f"{_letter(len(names) + 2)}2", width_cm=24))
    return spec


def feedback_sheet(result, preamble) -> SheetSpec:
    """A printable page per assessor: each of their reads next to what the panel's calibration expects."""
    res = result.residuals.copy()
    order = result.biases.sort_values("bias", kind="mergesort").index
    res["_order"] = pd.Categorical(res["assessor"], categories=order, ordered=True)
    res = res.sort_values(["_order", "object"], kind="mergesort")
    out = pd.DataFrame({"assessor": res["assessor"].astype(str).to_numpy(), "object": res["object"].astype(str).to_numpy(),
                        "your score": res["score"].to_numpy(), "calibrated value": res["object"].map(result.values["value"]).to_numpy(),
                        "expected from you": res["fitted"].to_numpy(), "difference": res["residual"].to_numpy(),
                        "stands out": res["anomalous"].astype(bool).to_numpy()})
    cols = {"your score": Column("your score", SCORE, "the score you entered"),
            "calibrated value": Column("calibrated value", SCORE, COLUMNS["value"].meaning),
            "expected from you": Column("expected from you", SCORE, "calibrated value plus your usual offset (bias)"),
            "difference": Column("difference", SIGNED, "your score minus what was expected from you"),
            "stands out": Column("stands out", None, "TRUE = this read differs more than the confidences allow")}
    firsts = np.flatnonzero(out["assessor"].ne(out["assessor"].shift()).to_numpy())
    # the page's headline: the assessor's overall offset in words, on the first row of their page
    b = result.biases
    about = [""] * len(out)
    for i in firsts:
        row = b.loc[res["assessor"].iloc[i]]
        sentence = assessor_sentence(row["bias"], f" ± {row['se']:.2f}" if "se" in row and np.isfinite(row["se"])
                                     else "", int(row["n"]))
        about[i] = sentence[0].upper() + sentence[1:]
    out["about you"] = about
    cols["about you"] = Column("about you", None, "your overall offset from the panel (bias), with its ±",
                               wrap=True, max_width=45)
    spec = SheetSpec("Feedback", out, preamble, cols, highlight="stands out", landscape=False)
    spec.page_breaks = [int(i) for i in firsts[1:]]
    return spec


def reliability_of_averages(evaluations: pd.DataFrame) -> tuple[float, str]:
    """ICC(1,k) of the raw evaluations (an assessor's repeated reads of an object averaged), and how it was computed.

    The one-way ICC sees only which scores belong to which object, not who gave them, so the grid is objects x
    read slots (as wide as the most-read object), not objects x assessors: the same estimate, without a dense
    grid of every object by every assessor (gigabytes for a panel of a few hundred thousand reads).
    """
    from . import reliability as rel
    from .errors import InputError

    try:
        cells = evaluations.groupby(["object", "assessor"], sort=False, observed=True)["score"].mean().reset_index()
        reads = cells.groupby("object", sort=False, observed=True)["score"].transform("size").to_numpy()
        cells = cells[reads >= 2]
        row = pd.factorize(cells["object"])[0].astype(np.intp)
        slot = cells.groupby("object", sort=False, observed=True).cumcount().to_numpy(dtype=np.intp)
        x = np.full((int(row.max()) + 1 if len(row) else 0, int(slot.max()) + 1 if len(slot) else 0), np.nan)
        x[row, slot] = cells["score"].to_numpy(dtype=float)
        value = rel.icc(x, "ICC1k")
    except (InputError, ValueError, KeyError):
        return float("nan"), "not computable (too few objects with two or more reads)"
    reads = float(evaluations.groupby("object").size().mean())
    return value, (f"ICC(1,k), one-way from the raw scores of {len(x)} objects with 2 or more reads, "
                   f"about {reads:.1f} reads each")


def verdict_reliability(r: float) -> str:
    if not np.isfinite(r):
        return "unknown"
    return ("excellent" if r >= 0.9 else "good" if r >= 0.75 else "moderate" if r >= 0.5 else "poor")


def summary_sheet(result, ranking: SheetSpec, assessors: SheetSpec, evaluations, settings, checks: pd.DataFrame,
                  preamble) -> SheetSpec:
    """Summary in plain words for the minutes."""
    s = result.stats
    rows: list[tuple[str, str]] = []
    per_object = evaluations.groupby("object").size()
    rows.append(("What was calibrated",
                 f"{s['n_objects']} objects scored by {s['n_assessors']} assessors in {s['n_evaluations']} reads "
                 f"({per_object.min()}{'' if per_object.min() == per_object.max() else f'-{per_object.max()}'} "
                 "reads per object). Each assessor's stringency was estimated "
                 "from the objects they share with others and taken out; surer reads count more."))
    pending = int(checks["problem"].astype(str).str.contains("pending", regex=False).sum()) if checks is not None else 0
    if pending:
        rows.append(("Still to come", f"{pending} allocated read(s) have no score yet (pending): left out of this run "
                                      "and listed on Checks. Re-run when they are in."))
    if s.get("n_components", 1) > 1:
        rows.append(("Warning", f"The panel falls into {s['n_components']} groups that share no objects: values from "
                                "different groups are not comparable."))
    a = assessors.frame
    if len(a):
        rows.append(("Harshest assessor", f"{a['assessor'].iloc[0]}: {a['in plain words'].iloc[0]}."))
        rows.append(("Most lenient assessor", f"{a['assessor'].iloc[-1]}: {a['in plain words'].iloc[-1]}."))
    n_flag = int(result.residuals["anomalous"].sum())
    rows.append(("Reads to query", f"{n_flag} read(s) stand out (more than {s.get('anomaly_threshold', 3):g} expected "
                                   "spreads from what the model expects): see Biases (per assessor) and Residuals "
                                   "(highlighted)." if n_flag else "No read stands out."))
    r = ranking.frame
    if "changed by calibration" in r.columns:
        changed = r.loc[r["changed by calibration"], "object"].tolist()
        rows.append(("Decisions calibration changed",
                     f"{len(changed)} decision(s) at the funding line differ from plain averages"
                     + (": " + ", ".join(changed[:12]) + (" ..." if len(changed) > 12 else "") if changed else "")
                     + " (amber rows on Ranking)."))
        if "lottery" in r.columns:
            drawn = r.loc[r["lottery"] == "funded by lottery", "object"].tolist()
            pool = int(r["lottery"].isin(["funded by lottery", "not drawn"]).sum())
            rows.append(("Lottery", f"{len(drawn)} of {pool} borderline object(s) were drawn for the places left "
                                    f"after the sure ones: {', '.join(drawn)}. The draw is recorded (seed "
                                    f"{getattr(settings, 'seed', 0)}) and can be repeated." if pool else
                         "No lottery was needed: no place was left to borderline objects."))
        border = int((r["decision"] == "borderline").sum())
        rows.append(("How sure the line is",
                     f"{border} object(s) are borderline: the data cannot place them above or below the line with "
                     "confidence." + (" Discuss these, add reads, or decide by lottery." if border else
                                      " The line is clear.")))
    else:
        moved = int((np.abs(r["rank"] - r["raw rank"]) >= 3).sum())
        rows.append(("Effect of calibration",
                     f"{moved} object(s) moved 3 or more ranks compared with plain averages. Set a funding line on the "
                     "Settings sheet (Funding line (top k) or (score)) to see decisions and how sure each one is."))
    rel_value, rel_basis = reliability_of_averages(evaluations)
    rows.append(("Reliability of the averaged scores",
                 f"{_fmt(rel_value)} ({verdict_reliability(rel_value)}): {rel_basis}. It says how well the panel's "
                 "averages would agree with those of a new panel of the same size."))
    n_checks = len(checks) if checks is not None else 0
    steps = []
    if n_checks:
        steps.append(f"read the {n_checks} line(s) on Checks")
    if n_flag:
        steps.append("query the flagged reads with their assessors")
    if "decision" in r.columns and int((r["decision"] == "borderline").sum()):
        steps.append("discuss the borderline objects")
    low = result.values["total_confidence"] < 0.5 * result.values["total_confidence"].median()
    if low.any():
        steps.append(f"consider more reads for {int(low.sum())} object(s) with little confidence "
                     f"({', '.join(map(str, result.values.index[low][:6]))}{' ...' if low.sum() > 6 else ''})")
    text = "; ".join(steps) + "."
    rows.append(("What to do next", text[0].upper() + text[1:] if steps else
                 "Nothing stands out: the ranking can go to the panel."))
    frame = pd.DataFrame(rows, columns=["topic", "in plain words"])
    cols = {"topic": Column("topic", None, ""),
            "in plain words": Column("in plain words", None, "", wrap=True, max_width=100)}
    return SheetSpec("Summary", frame, preamble, cols, landscape=False)


_PLAIN_STATS = {
    "n_evaluations": "reads used", "n_assessors": "assessors", "n_objects": "objects",
    "n_components": "groups of assessors linked by shared objects (1 = all values comparable)",
    "mu2": "assessor overlap: how well shared objects tie the assessors together (0 = not at all, 1 = ideal)",
    "residual": "how far the scores sit from the model in total (weighted sum of squared residuals)",
    "posterior_variance": "noise scale: 1 = the reads vary as much as their confidences say",
    "w_estimated": "noise scale estimated from the data: about 1 when the declared confidences are honest",
    "rms_bound": "typical robustness bound (design diagnostic, not the ±)",
    "gauge": "how values and biases share the common offset",
    "uncertainty_kind": "what the confidence column held",
    "anomaly_threshold": "reads further than this many expected spreads from the model are flagged",
    "trace_method": "how a summary of the design was computed",
}


#: Descriptions the core phrases as formulas, in words for the Diagnostics sheet.
_PLAIN_VALUES = {
    "gauge_meaning": {"weighted": "the confidence-weighted average bias is zero: values sit on the panel's own scale",
                      "simple": "the plain average bias is zero: values sit on the panel's own scale"},
    "bound_meaning": "the largest change of a value or bias that score errors of the size the model expects could "
                     "cause: a design diagnostic, not an error bar",
}


def _plain_value(key: str, value: Any, stats: dict) -> Any:
    plain = _PLAIN_VALUES.get(key)
    if isinstance(plain, dict):
        return plain.get(str(stats.get("gauge", "")), value)
    return plain if plain is not None else value


def stat_verdict(key: str, value: Any, stats: dict | None = None) -> str:
    """A plain verdict for a technical figure ('' when the figure is a description, not a quality)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return ""
    if not np.isfinite(v):
        return ""
    if key == "mu2":
        from .calibration import overlap_verdict

        return f"assessor overlap (mu2 {v:.2f}): " + overlap_verdict(v)
    if key == "n_components":
        return "good: one connected panel" if v == 1 else "split panel: values of different groups not comparable"
    if key == "w_estimated" and stats is not None:
        if "face value" in str(stats.get("noise_scale", "")):  # SDs in score units: w about 1 when they are honest
            return str(stats.get("noise_check") or "")
        # relative confidences: w is the variance of a read of confidence 1 (Medium), in score units squared
        which = "a Medium read" if str(stats.get("uncertainty_kind")) == "level" else "a read of confidence 1"
        return f"{which} scatters about ± {np.sqrt(v):.2f} score units around the model"
    return ""


def diagnostics_sheet(frame: pd.DataFrame, preamble) -> SheetSpec:
    """Diagnostics: each technical figure with a plain verdict and a plain meaning (no formulas)."""
    f = frame.copy()
    stats = dict(zip(f["statistic"], f["value"]))
    f["value"] = [_plain_value(k, v, stats) for k, v in zip(f["statistic"], f["value"])]
    f["verdict"] = [stat_verdict(k, v, stats) if k != "warning" else "look at this"
                    for k, v in zip(f["statistic"], f["value"])]
    f["meaning"] = [_PLAIN_STATS.get(k, m) for k, m in zip(f["statistic"], f["meaning"])]
    f = f[["statistic", "value", "verdict", "meaning"]]
    cols = {"value": Column("value", MIXED, "the figure", max_width=60),
            "verdict": Column("verdict", None, "what the figure says in plain words", max_width=50),
            "meaning": Column("meaning", None, "what the figure measures", max_width=80)}
    return SheetSpec("Diagnostics", f, preamble, cols, landscape=True)


def design_sheet(comparison: pd.DataFrame, tradeoff: pd.DataFrame, lines: list[str]) -> SheetSpec:
    """Design (``xlcalib assign``): the verdict lines, the trade-off between suitability and assessor overlap
    (one row per share tried, the chosen one marked), then the chosen allocation against the suitability-only
    one.  The overlap words are :func:`stat_verdict`'s, as on a calibration's Diagnostics sheet."""
    preamble = [[line] for line in lines]
    if tradeoff is not None and len(tradeoff) > 1:
        preamble += [[], ["Trade-off: the suitability kept against the assessor overlap (choose the share with these "
                          "numbers; --share picks the row)"],
                     ["minimum share", "suitability kept", "mu2", "assessor overlap", "groups", "reads changed",
                      "seconds", ""]]
        for r in tradeoff.to_dict("records"):
            preamble.append([round(r["minimum share"], 4), round(r["suitability share"], 4), round(r["mu2"], 4),
                             stat_verdict("mu2", r["mu2"]) or r["overlap"], r["components"], r["reads changed"],
                             round(r["seconds"], 1), "<- this allocation" if r["chosen"] else ""])
        preamble += [[], ["The chosen allocation against the suitability-only one:"]]
    cols = {"this allocation": Column("this allocation", MIXED, "the allocation written to Evaluations", max_width=50),
            "meaning": Column("meaning", None, "what the figure measures", max_width=90)}
    for label in ("suitability only", "balanced start"):
        cols[label] = Column(label, MIXED, "the allocation by suitability alone (no links bought)", max_width=50)
    return SheetSpec("Design", comparison, preamble, cols)


def checks_sheet(checks: pd.DataFrame, preamble) -> SheetSpec:
    """Checks: one line per problem found in the input (severity, sheet, cell, problem)."""
    if checks is None or not len(checks):
        checks = pd.DataFrame({"severity": ["ok"], "sheet": [""], "cell": [""], "problem": ["no problems found"]})
    cols = {"severity": Column("severity", None, "error = the run could not use it; warning = used, but look at it; "
                                                  "pending = allocated, not scored yet"),
            "problem": Column("problem", None, "what is wrong and what to do", max_width=100)}
    return SheetSpec("Checks", checks.reset_index(drop=True), preamble, cols)


def values_sheet(frame: pd.DataFrame, preamble, scatter_bounds) -> SheetSpec:
    """Values (every column, highest calibrated value first, so the per-object chart reads in order) with the
    raw-vs-calibrated scatter (y = x drawn) and the values with their ± standard error."""
    frame = frame.sort_values("value", ascending=False, kind="mergesort").reset_index(drop=True)
    spec = SheetSpec("Values", frame, preamble, COLUMNS, freeze_columns=1)
    names = list(frame.columns)
    lo, hi = scatter_bounds
    anchor = _letter(len(names) + 2)
    spec.charts += [
        ChartSpec("scatter", "Raw mean vs calibrated value per object", spec.header_row, len(frame),
                  names.index("raw_mean") + 1, (names.index("value") + 1,), "raw mean score", "calibrated value",
                  anchor=f"{anchor}2", x_range=(lo, hi), y_range=(lo, hi),
                  ref_lines=(RefLine("y = x (no change)", (lo, hi), (lo, hi)),)),
        ChartSpec("column", "Calibrated value per object with ± standard error (highest first)", spec.header_row,
                  len(frame), names.index("object") + 1, (names.index("value") + 1,), "object",
                  "calibrated value (score units)", error_column=names.index("se") + 1 if "se" in names else None,
                  anchor=f"{anchor}24", width_cm=24)]
    return spec


def residuals_sheet(frame: pd.DataFrame, preamble) -> SheetSpec:
    return SheetSpec("Residuals", frame, preamble, COLUMNS, highlight="anomalous", landscape=False)


def checks_from_warnings(diagnostics: pd.DataFrame) -> pd.DataFrame:
    """Until the input checks report their own lines: the run's warnings as Checks lines."""
    w = diagnostics[diagnostics["statistic"] == "warning"]
    return pd.DataFrame({"severity": "warning", "sheet": None, "cell": None, "problem": w["value"].astype(str).to_numpy()})


def calibration_sheets(result, frames: dict[str, pd.DataFrame], settings, evaluations: pd.DataFrame | None,
                       preamble, *, feedback: bool = False) -> list[SheetSpec]:
    """Every sheet of the calibration result workbook, in reading order."""
    values = frames["Values"]
    if evaluations is None:  # rebuild the long table from the residuals (same reads)
        evaluations = result.residuals[["assessor", "object", "score"]]
    ranking = ranking_sheet(result, settings, preamble)
    assessors = assessors_sheet(result, preamble)
    # the input checks' lines (frames["Checks"], with cells) and the run's own warnings (low confidence,
    # split panel, anomalies ...), which point at sheets rather than cells
    run_warnings = checks_from_warnings(frames["Diagnostics"])
    run_warnings = run_warnings[~run_warnings["problem"].str.contains("see Checks", regex=False)]
    checks = frames.get("Checks")
    checks = run_warnings if checks is None else pd.concat([checks, run_warnings], ignore_index=True)
    summary = summary_sheet(result, ranking, assessors, evaluations, settings, checks, preamble)
    both = pd.concat([values["raw_mean"], values["value"]])
    lo, hi = float(np.nanmin(both)), float(np.nanmax(both))
    pad = 0.05 * (hi - lo if hi > lo else 1.0)
    sheets = [ranking, summary, assessors, checks_sheet(checks, preamble),
              values_sheet(values, preamble, (_nice_floor(lo - pad), _nice_ceil(hi + pad))),
              residuals_sheet(frames["Residuals"], preamble), diagnostics_sheet(frames["Diagnostics"], preamble)]
    if feedback:
        sheets.append(feedback_sheet(result, preamble))
    return sheets


# ----------------------------------------------------------------------------
# reliability
# ----------------------------------------------------------------------------
#: Largest rater count the prophecy curve is extended to.
PROPHECY_MAX_K = 60


def prophecy_k_max(icc1: float, observed_k: int) -> int:
    """How far to extend the reliability curve: to the rater count needed for 0.9 (capped)."""
    from . import reliability as rel
    from .errors import InputError

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


def reliability_sheets(x: np.ndarray, table: pd.DataFrame, boot, alpha: float, curve: pd.DataFrame, curve_note: str,
                       preamble) -> list[SheetSpec]:
    """ICC table, a kRR summary led by the one figure to quote, and the k-rater curve with its prophecy."""
    from . import reliability as rel
    from .errors import InputError

    complete = not np.isnan(x).any()
    observed_k = int((~np.isnan(x)).sum(axis=1).max())
    name, value, why = headline_reliability(table, complete)
    icc1 = float(table.loc["ICC1", "ICC"])
    rows = [(f"Reliability of the average of {observed_k} raters: {name} (quote this)", value, verdict_reliability(value),
             why),
            ("items", x.shape[0], "", "rows of the Ratings sheet with at least one rating"),
            ("raters (columns)", x.shape[1], "", "columns of the Ratings sheet"),
            ("ratings", int((~np.isnan(x)).sum()), "", "non-blank rating cells"),
            ("ICC(1) single rating", icc1, verdict_reliability(icc1),
             "reliability of one rating (one-way, all ratings): the basis of the Spearman-Brown prophecy"),
            ("ICC(1,k) mean rating", float(table.loc["ICC1k", "ICC"]), "", "one-way, the average of the item's ratings"),
            ("kRR bootstrap (mean of item means)", boot.estimate, "", "resampling items and raters; see CI below"),
            ("kRR CI low", boot.ci_low, "", "95% bootstrap interval"), ("kRR CI high", boot.ci_high, "", ""),
            ("Krippendorff alpha (interval)", alpha, verdict_reliability(alpha), "agreement of single ratings")]
    for target in (0.8, 0.9):
        try:
            k = rel.raters_needed(icc1, target)
            text = (f"Spearman-Brown prophecy from ICC(1) = {icc1:.3f}" + (" (beyond the observed raters)"
                                                                           if k > observed_k else ""))
        except InputError as exc:
            k, text = None, exc.message
        rows.append((f"raters needed for {target:.1f}", k, "", text))
    if "spearman_brown" in curve.columns and "sb_icc1" in curve.attrs:
        rows.append(("why Spearman-Brown at k = 1 differs from ICC(1)", curve.attrs["sb_icc1"], "",
                     f"the curve's Spearman-Brown column starts from an ICC(1) of only 2 randomly drawn ratings per "
                     f"item ({curve.attrs['sb_icc1']:.3f}), as a small pilot would; ICC(1) above uses all ratings "
                     f"({icc1:.3f}). The gap shows how far a 2-rater pilot can be off."))
    if table.attrs.get("note"):
        rows.append(("note", None, "", table.attrs["note"]))
    if curve_note:
        rows.append(("kRR curve", None, "", curve_note))
    summary = pd.DataFrame(rows, columns=["statistic", "value", "verdict", "basis"], dtype=object)  # counts stay integers
    summary_cols = {"statistic": Column("statistic", None, "", max_width=50),
                    "value": Column("value", MIXED, "the figure"),
                    "verdict": Column("verdict", None, "0.9+ excellent, 0.75+ good, 0.5+ moderate, below poor"),
                    "basis": Column("basis", None, "what the figure is computed from and why", wrap=True, max_width=90)}
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
    spec_curve.charts.append(ChartSpec(
        "scatter", "Reliability of the mean of k ratings", spec_curve.header_row, len(c), 1,
        tuple(range(2, len(c.columns) + 1)), "k raters averaged", "reliability", anchor=f"{_letter(len(c.columns) + 2)}2",
        lines=True, x_range=(0, k_max + 1), y_range=(0, 1), x_major=1 if k_max <= 15 else 5,
        ref_lines=(RefLine("0.8", (0, k_max + 1), (0.8, 0.8)), RefLine("0.9", (0, k_max + 1), (0.9, 0.9))),
        y_number_format="0.0", width_cm=20, height_cm=11))
    return [icc, SheetSpec("kRR", summary, preamble, summary_cols), spec_curve]


# ----------------------------------------------------------------------------
# ordinal agreement and uncertain ground truth
# ----------------------------------------------------------------------------
def ordinal_sheets(frames: dict[str, pd.DataFrame], rater_names: tuple[str, str], preamble) -> list[SheetSpec]:
    """Svensson measures, mean ranks, and the ROC curve named by the user's own rater headers."""
    sv = frames["Svensson"]
    sv_cols = {"value": Column("value", MIXED, "the measure (PA in percent)"),
               "SE": Column("SE", RELIAB, "jackknife standard error"),
               "meaning": Column("meaning", None, "", max_width=80)}
    mr = frames["MeanRanks"]
    mr_cols = {c: Column(str(c), RELIAB) for c in mr.columns if pd.api.types.is_float_dtype(mr[c])}
    h1, h2 = rater_names
    roc = frames["ROC"].rename(columns={"rater1": f"{h1} (cumulative share)", "rater2": f"{h2} (cumulative share)"})
    roc_cols = {c: Column(c, PROB, f"share of objects up to this category by {n}")
                for c, n in ((roc.columns[1], h1), (roc.columns[2], h2))}
    roc_spec = SheetSpec("ROC", roc, preamble, roc_cols)
    roc_spec.charts.append(ChartSpec("scatter", f"ROC: {h2} against {h1}", roc_spec.header_row, len(roc), 2, (3,),
                                     h1, h2, anchor="F2", lines=True, x_range=(0, 1), y_range=(0, 1),
                                     ref_lines=(RefLine("no systematic difference", (0, 1), (0, 1)),),
                                     y_number_format="0%", width_cm=14, height_cm=12))
    return [SheetSpec("Svensson", sv, preamble, sv_cols), SheetSpec("MeanRanks", mr, preamble, mr_cols), roc_spec]


def ground_truth_sheets(frames: dict[str, pd.DataFrame], preamble) -> list[SheetSpec]:
    """Certainty per item (with a chart on a 0-100% axis) and the UA metrics."""
    cert = frames["Certainty"]
    spec = SheetSpec("Certainty", cert, preamble, {"annotators": Column("annotators", COUNT, "annotations of the item"),
                                                   "certainty": COLUMNS["certainty"]})
    names = list(cert.columns)
    spec.charts.append(ChartSpec("column", "Annotation certainty per item", spec.header_row, len(cert), 1,
                                 (names.index("certainty") + 1,), "item", "certainty", anchor=f"{_letter(len(names) + 2)}2",
                                 width_cm=24, y_range=(0, 1), y_number_format="0%"))
    ua = SheetSpec("UA metrics", frames["UA metrics"], preamble, {"value": Column("value", MIXED, "the figure")})
    return [spec, ua]
