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

from .calibration import MODEL_WORDS
from .calibration.verdict import assessors_differ, trust_sentences
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
    if "gain" in b.columns:  # scale use modelled: the gain beside the bias
        from .calibration.scale_use import gain_sentence

        out["gain"], out["± gain"] = b["gain"].to_numpy(), b["gain_se"].to_numpy()
        cols["gain"] = Column("gain", SCORE, "how widely the assessor spreads scores: 1 = like the panel, below 1 "
                                             "compresses, above 1 spreads")
        cols["± gain"] = Column("± gain", SCORE, "standard error of the gain")
        out["scale use"] = [gain_sentence(g, s) for g, s in zip(b["gain"], b["gain_se"])]
        cols["scale use"] = Column("scale use", None, "the gain in words", max_width=50)
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


def feedback_sheet(result, preamble, behaviour: "BehaviourTables | None" = None) -> SheetSpec:
    """A printable letter per assessor, one page each: their stringency, scale use, consistency and agreement,
    their bias by group, the reads of theirs that stand out with the panel's view, then every read of theirs
    next to what the panel's calibration expects.  Anonymised: a page names no other assessor (the panel's view
    of an object is its calibrated value and the other reads' scores, unnamed)."""
    behaviour = behaviour or BehaviourTables.of(result)
    res = result.residuals.copy()
    order = result.biases.sort_values("bias", kind="mergesort").index
    res["_order"] = pd.Categorical(res["assessor"], categories=order, ordered=True)
    res = res.sort_values(["_order", "object"], kind="mergesort")
    values = result.values["value"]
    pages = []
    for name, reads in res.groupby("_order", sort=True, observed=True):
        lines = _letter_lines(result, behaviour, name)
        head = pd.DataFrame({"assessor": str(name), "section": [s for s, _ in lines], "object": "",
                             "your score": np.nan, "calibrated value": np.nan, "expected from you": np.nan,
                             "difference": np.nan, "stands out": False, "about you": [w for _, w in lines]})
        flagged = behaviour.unexpected[behaviour.unexpected["assessor"].astype(str) == str(name)]
        out_rows = pd.DataFrame({"assessor": str(name), "section": "A read that stands out",
                                 "object": flagged["object"].astype(str).to_numpy(),
                                 "your score": flagged["score"].to_numpy(), "calibrated value": flagged["value"].to_numpy(),
                                 "expected from you": flagged["expected"].to_numpy(),
                                 "difference": flagged["residual"].to_numpy(), "stands out": True,
                                 "about you": [f"the other reads gave {o}" if o else "" for o in flagged["other_scores"]]})
        all_rows = pd.DataFrame({"assessor": str(name), "section": "Your reads", "object": reads["object"].astype(str).to_numpy(),
                                 "your score": reads["score"].to_numpy(),
                                 "calibrated value": reads["object"].map(values).to_numpy(),
                                 "expected from you": reads["fitted"].to_numpy(), "difference": reads["residual"].to_numpy(),
                                 "stands out": reads["anomalous"].astype(bool).to_numpy(), "about you": ""})
        pages.append(pd.concat([head, out_rows, all_rows], ignore_index=True))
    out = pd.concat(pages, ignore_index=True)
    cols = {"section": Column("section", None, "what this line of the letter is about", max_width=24),
            "your score": Column("your score", SCORE, "the score you entered"),
            "calibrated value": Column("calibrated value", SCORE, COLUMNS["value"].meaning),
            "expected from you": Column("expected from you", SCORE, "calibrated value with your usual offset (and "
                                                                    "your use of the scale, when modelled)"),
            "difference": Column("difference", SIGNED, "your score minus what was expected from you"),
            "stands out": Column("stands out", None, "TRUE = this read differs more than the confidences allow"),
            "about you": Column("about you", None, "your letter: stringency, use of the scale, consistency, groups "
                                                   "(no other assessor is named)", wrap=True, max_width=60)}
    firsts = np.flatnonzero(out["assessor"].ne(out["assessor"].shift()).to_numpy())
    spec = SheetSpec("Feedback", out, preamble, cols, highlight="stands out", landscape=False)
    spec.page_breaks = [int(i) for i in firsts[1:]]
    return spec


def _letter_lines(result, behaviour: "BehaviourTables", name) -> list[tuple[str, str]]:
    """The letter's sentences for one assessor, each (section, text); the first is the stringency."""
    b = result.biases.loc[name]
    pm = f" ± {b['se']:.2f}" if "se" in b and np.isfinite(b["se"]) else ""
    sentence = assessor_sentence(b["bias"], pm, int(b["n"]))
    lines = [("Your stringency", sentence[0].upper() + sentence[1:] + " (the panel's typical assessor is 0).")]
    if "gain" in result.biases:
        from .calibration.scale_use import gain_sentence

        lines.append(("Your use of the scale", "You " + gain_sentence(float(b["gain"]), float(b["gain_se"]), you=True)
                      + "."))
    fit = behaviour.fit
    if fit is not None and name in fit.index:
        f = fit.loc[name]
        reading = {"as expected": "Your scores scatter about as much as the panel's model expects",
                   "too few reads to judge": "You have too few reads to judge how consistently you score"}.get(
            f["reading"], "Your scores are " + f["reading"].replace(":", " --"))
        lines.append(("Your consistency", f"{reading} (infit {_fmt(f['infit'])}, outfit {_fmt(f['outfit'])}; "
                                          "about 1 is as expected)."))
    agree = behaviour.agreement
    if agree is not None and name in agree.index and np.isfinite(agree.loc[name, "observed"]):
        a = agree.loc[name]
        lines.append(("Your agreement", f"You gave the same score as another reader of the same object in "
                                        f"{a['observed']:.0%} of {int(a['opportunities'])} chances (the model "
                                        f"expects {a['expected']:.0%})."))
    bias = behaviour.group_bias
    if bias is not None and len(bias):
        mine = bias[bias["assessor"].astype(str) == str(name)]
        for row in mine.itertuples(index=False):
            text = row.in_words[len(str(name)):].replace(" scores ", " score ", 1).replace("from them", "from you")
            lines.append(("By group", "You" + text + "."))
    n_flag = int((behaviour.unexpected["assessor"].astype(str) == str(name)).sum())
    lines.append(("Reads that stand out", f"{n_flag} of your reads stand out (listed below with the panel's view): "
                                          "please check them." if n_flag else "None of your reads stands out."))
    return lines


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
                  preamble, behaviour: BehaviourTables | None = None) -> SheetSpec:
    """Summary in plain words for the minutes."""
    s = result.stats
    rows: list[tuple[str, str]] = []
    per_object = evaluations.groupby("object").size()
    rows.append(("What was calibrated",
                 f"{s['n_objects']} objects scored by {s['n_assessors']} assessors in {s['n_evaluations']} reads "
                 f"({per_object.min()}{'' if per_object.min() == per_object.max() else f'-{per_object.max()}'} "
                 f"reads per object). Model {s.get('model', 'fixed')}: {MODEL_WORDS.get(s.get('model', 'fixed'), '')}. "
                 "Each assessor's stringency is estimated from the objects they share with others and taken out; "
                 "surer reads count more."))
    rows.append(("How far to trust calibration", " ".join(trust_sentences(result))))
    pending = int(checks["problem"].astype(str).str.contains("pending", regex=False).sum()) if checks is not None else 0
    if pending:
        rows.append(("Still to come", f"{pending} allocated read(s) have no score yet (pending): left out of this run "
                                      "and listed on Checks. Re-run when they are in."))
    outside = _outside_scores(result, evaluations)
    if outside:
        rows.append(("Values beyond the scores given", outside))
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
        listing = (": " + ", ".join(changed[:12]) + (" ..." if len(changed) > 12 else "")) if changed else ""
        if assessors_differ(s) is False:
            text = (f"{len(changed)} decision(s) at the funding line differ from plain averages{listing}; the assessors "
                    "do not measurably differ in stringency, so this is the confidence weights and chance, not a "
                    "correction to act on (amber rows on Ranking).")
        else:
            text = f"{len(changed)} decision(s) at the funding line differ from plain averages{listing} (amber rows on Ranking)."
        rows.append(("Decisions calibration changed", text))
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
    rows.extend(behaviour_summary_rows(result, behaviour or BehaviourTables.of(result)))
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


def _outside_scores(result, evaluations) -> str:
    """Why some calibrated values lie beyond the lowest or highest score anyone gave (empty when none do)."""
    lo, hi = float(evaluations["score"].min()), float(evaluations["score"].max())
    v = result.values["value"]
    out = v[(v < lo) | (v > hi)]
    if out.empty:
        return ""
    names = ", ".join(f"{o} ({x:.2f})" for o, x in out.head(8).items()) + (" ..." if len(out) > 8 else "")
    return (f"{len(out)} value(s) lie outside the scores given ({lo:g} to {hi:g}): {names}. A value is what an "
            "assessor of average stringency would give; an object read only by harsh (or lenient) assessors is "
            "moved beyond the scores they gave. Check those objects' reads before relying on it.")


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


# ----------------------------------------------------------------------------
# assessor behaviour: fit, unexpected reads, separation, agreement, groups
# ----------------------------------------------------------------------------
class BehaviourTables:
    """The assessor-behaviour tables of one result, computed once for every sheet that shows them.

    A table that cannot be computed for this result (e.g. separation of a panel fitted per component) is
    ``None`` with the reason in ``notes``.
    """

    def __init__(self, result, groups=None):
        from .errors import InputError

        self.notes: dict[str, str] = {}
        self.groups = groups

        def attempt(key, make):
            try:
                return make()
            except InputError as exc:
                self.notes[key] = exc.message
                return None

        self.fit = attempt("fit", result.fit_statistics)
        self.unexpected = attempt("unexpected", result.unexpected_reads)
        if self.unexpected is None:
            self.unexpected = pd.DataFrame(columns=["assessor", "object", "score", "expected", "value", "residual",
                                                    "z", "chance", "other_scores", "flagged", "in_words"])
        self.separation = attempt("separation", result.separation)
        self.agreement = attempt("agreement", result.agreement)
        self.group_bias = attempt("group_bias", lambda: result.group_bias(groups)) if groups is not None else None
        self.group_audit = attempt("group_audit", lambda: result.group_audit(groups)) if groups is not None else None

    @classmethod
    def of(cls, result, groups=None) -> "BehaviourTables":
        return cls(result, groups if groups is not None else getattr(result, "groups", None))


def behaviour_summary_rows(result, behaviour: BehaviourTables) -> list[tuple[str, str]]:
    """Summary lines on assessor behaviour: how finely the panel can rank, consistency, agreement, groups."""
    rows = []
    sep = behaviour.separation
    if sep is not None:
        obj, ass = sep.loc["objects"], sep.loc["assessors"]
        rows.append(("How finely the panel can rank", f"{obj['in_words'][0].upper()}{obj['in_words'][1:]}; "
                                                      f"{ass['in_words']}. (See Fit.)"))
    fit = behaviour.fit
    if fit is not None:
        erratic = fit.index[fit["reading"].str.startswith("erratic")].astype(str).tolist()
        muted = fit.index[fit["reading"].str.startswith("too predictable")].astype(str).tolist()
        parts = []
        if erratic:
            parts.append(f"{len(erratic)} assessor(s) score erratically, beyond chance ({', '.join(erratic[:6])}"
                         f"{' ...' if len(erratic) > 6 else ''})")
        if muted:
            parts.append(f"{len(muted)} score too predictably, muted or halo-like ({', '.join(muted[:6])}"
                         f"{' ...' if len(muted) > 6 else ''})")
        rows.append(("Assessors' consistency", ("; ".join(parts) + ". See Fit and the flagged reads on Unexpected.")
                     if parts else "Every assessor's scores scatter about as the model expects (infit and outfit "
                                   "near 1; see Fit)."))
    agree = behaviour.agreement
    if agree is not None and np.isfinite(agree.attrs.get("observed", np.nan)):
        rows.append(("Exact agreement", f"Two reads of the same object gave the same score in "
                                        f"{agree.attrs['observed']:.0%} of {agree.attrs['pairs']} pairs; the model "
                                        f"expects {agree.attrs['expected']:.0%}."))
    audit = behaviour.group_audit
    if audit is not None:
        rows.append(("Groups", audit.attrs["in_words"]))
    bias = behaviour.group_bias
    if bias is not None:
        flagged = bias[bias["flagged"]]
        rows.append(("Assessor x group bias", "; ".join(flagged["in_words"].head(4)) + (" ..." if len(flagged) > 4
                                                                                         else "") + ". See Group bias."
                     if len(flagged) else f"No assessor scores a group out of line with the panel beyond chance "
                                          f"({bias.attrs.get('tests', 0)} assessor x group cells tested, Holm-adjusted)."))
    for key, note in behaviour.notes.items():
        if key in ("group_bias", "group_audit"):
            rows.append(("Groups", f"not analysed: {note}"))
    return rows


def fit_sheet(result, behaviour: BehaviourTables, preamble) -> SheetSpec:
    """Fit: per assessor, infit and outfit mean-squares with their ZSTD and a reading, exact agreement, flagged
    reads, and (when modelled) the gain; below the table the panel's separation lines."""
    fit = behaviour.fit
    b = result.biases
    out = pd.DataFrame({"assessor": b.index.astype(str)})
    cols = {"assessor": Column("assessor", None, "the assessor as entered")}
    if fit is not None:
        for key, name, meaning in (
                ("n", "reads judged", "reads whose residual could be judged (a read fitted exactly by itself is left out)"),
                ("infit", "infit", "information-weighted mean-square of the standardised residuals: about 1 = as the "
                                   "model expects; above 1.5 erratic, below 0.5 too predictable"),
                ("infit_zstd", "infit ZSTD", "infit standardised (Wilson-Hilferty): beyond ±2 = beyond chance"),
                ("outfit", "outfit", "plain mean-square of the standardised residuals (sensitive to single odd reads)"),
                ("outfit_zstd", "outfit ZSTD", "outfit standardised: beyond ±2 = beyond chance"),
                ("reading", "reading", "the mean-squares in words")):
            out[name] = fit[key].reindex(b.index).to_numpy()
            cols[name] = Column(name, COUNT if key == "n" else "0.00" if key != "reading" else None, meaning,
                                max_width=60)
    agree = behaviour.agreement
    if agree is not None and np.isfinite(agree["observed"]).any():
        out["exact agreement"] = agree["observed"].reindex(b.index).to_numpy()
        out["expected agreement"] = agree["expected"].reindex(b.index).to_numpy()
        cols["exact agreement"] = Column("exact agreement", PROB, "share of chances (another read of the same object) "
                                                                   "where the same score was given")
        cols["expected agreement"] = Column("expected agreement", PROB, "the share the model expects")
    if "gain" in b.columns:
        out["gain"] = b["gain"].to_numpy()
        cols["gain"] = Column("gain", SCORE, "scale use: 1 = like the panel, below 1 compresses, above 1 spreads")
    out["flagged reads"] = fit["flagged"].reindex(b.index).to_numpy() if fit is not None else 0
    cols["flagged reads"] = Column("flagged reads", COUNT, "reads flagged anomalous (see Unexpected)")
    sep = behaviour.separation
    if sep is not None:
        extra = pd.DataFrame({"assessor": ["", "Panel: objects", "Panel: assessors"]})
        if "reading" in out:
            extra["reading"] = ["", sep.loc["objects", "in_words"], sep.loc["assessors", "in_words"]]
        out = pd.concat([out, extra], ignore_index=True)
    spec = SheetSpec("Fit", out, preamble, cols, freeze_columns=1)
    spec.frame.attrs["leverage"] = fit.attrs.get("leverage", "") if fit is not None else ""
    return spec


def unexpected_sheet(behaviour: BehaviourTables, preamble) -> SheetSpec:
    """Unexpected: the flagged reads, most unexpected first, each with the panel's view and a sentence."""
    u = behaviour.unexpected
    out = pd.DataFrame({"assessor": u["assessor"].astype(str).to_numpy(), "object": u["object"].astype(str).to_numpy(),
                        "score": u["score"].to_numpy(dtype=float), "expected": u["expected"].to_numpy(dtype=float),
                        "calibrated value": u["value"].to_numpy(dtype=float),
                        "difference": u["residual"].to_numpy(dtype=float), "z": u["z"].to_numpy(dtype=float),
                        "about 1 read in": u["chance"].to_numpy(dtype=float), "in plain words": u["in_words"].to_numpy()})
    if not len(out):
        out = pd.DataFrame({"assessor": [""], "in plain words": ["No read stands out."]})
    cols = {"score": COLUMNS["score"],
            "expected": Column("expected", SCORE, "what the model expects from this assessor for this object"),
            "calibrated value": Column("calibrated value", SCORE, COLUMNS["value"].meaning),
            "difference": Column("difference", SIGNED, "score minus expected (positive = scored higher)"),
            "z": Column("z", SIGNED, "difference in expected spreads of such a residual (leverage-corrected)"),
            "about 1 read in": Column("about 1 read in", "#,##0", "how rare a read this far out is by chance"),
            "in plain words": Column("in plain words", None, "the read explained", wrap=True, max_width=90)}
    return SheetSpec("Unexpected", out, preamble, cols, landscape=True)


def groups_sheets(behaviour: BehaviourTables, preamble) -> list[SheetSpec]:
    """Groups (the audit: group means of calibrated values) and Group bias (assessor x group cells)."""
    sheets = []
    audit = behaviour.group_audit
    if audit is not None:
        out = audit.rename(columns={"raw_mean": "raw mean", "value_mean": "calibrated mean", "se": "± (standard error)",
                                    "difference": "difference", "difference_se": "± difference", "p": "p",
                                    "moved": "moved by calibration"})
        cols = {"objects": Column("objects", COUNT, "objects in the group"),
                "raw mean": Column("raw mean", SCORE, "mean of the group's plain averages"),
                "calibrated mean": Column("calibrated mean", SCORE, "mean of the group's calibrated values"),
                "± (standard error)": Column("± (standard error)", SCORE, "standard error of the calibrated mean"),
                "difference": Column("difference", SIGNED, "calibrated mean minus the mean of all grouped objects"),
                "± difference": Column("± difference", SCORE, "standard error of the difference"),
                "p": Column("p", PVALUE, "p-value of the difference"),
                "moved by calibration": Column("moved by calibration", SIGNED,
                                               "how far calibration (who read the group) moved the group's standing")}
        sheets.append(SheetSpec("Groups", out, preamble + [[audit.attrs["in_words"]]], cols))
    bias = behaviour.group_bias
    if bias is not None:
        out = bias.rename(columns={"se": "± (standard error)", "p_holm": "adjusted p", "in_words": "in plain words"})
        out = out.drop(columns=["lower", "upper", "z"])
        cols = {"reads": Column("reads", COUNT, "the assessor's reads of this group"),
                "bias": Column("bias", SIGNED, "score units, relative to the assessor's own overall offset: positive "
                                               "= more lenient on this group, negative = harsher"),
                "± (standard error)": Column("± (standard error)", SCORE, "standard error of the bias"),
                "p": Column("p", PVALUE, "p-value of this cell alone"),
                "adjusted p": Column("adjusted p", PVALUE, "Holm-adjusted for the number of cells tested"),
                "flagged": Column("flagged", None, "TRUE = beyond chance after the adjustment"),
                "in plain words": Column("in plain words", None, "", wrap=True, max_width=90)}
        if not len(out):
            out = pd.DataFrame({"assessor": [""], "in plain words": [bias.attrs.get("note", "")]})
        sheets.append(SheetSpec("Group bias", out, preamble, cols, highlight="flagged" if "flagged" in out else None))
    return sheets


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
    behaviour = BehaviourTables.of(result)
    summary = summary_sheet(result, ranking, assessors, evaluations, settings, checks, preamble, behaviour)
    both = pd.concat([values["raw_mean"], values["value"]])
    lo, hi = float(np.nanmin(both)), float(np.nanmax(both))
    pad = 0.05 * (hi - lo if hi > lo else 1.0)
    sheets = [ranking, summary, assessors, checks_sheet(checks, preamble),
              values_sheet(values, preamble, (_nice_floor(lo - pad), _nice_ceil(hi + pad))),
              residuals_sheet(frames["Residuals"], preamble), diagnostics_sheet(frames["Diagnostics"], preamble),
              fit_sheet(result, behaviour, preamble), unexpected_sheet(behaviour, preamble),
              *groups_sheets(behaviour, preamble)]
    if feedback:
        sheets.append(feedback_sheet(result, preamble, behaviour))
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


def krr_summary_sheet(x: np.ndarray, table: pd.DataFrame, boot, alpha: float, curve: pd.DataFrame, curve_note: str,
                      preamble, *, alpha_interval=None, alpha_note: str = "") -> SheetSpec:
    """kRR: the reliability of the average to quote (with its reason), then the other figures, each with its
    interval where it has one (ICCs: F intervals; kRR and alpha: seeded bootstrap intervals)."""
    from . import reliability as rel
    from .errors import InputError

    complete = not np.isnan(x).any()
    observed_k = int((~np.isnan(x)).sum(axis=1).max())
    name, value, why = headline_reliability(table, complete)
    form = "ICC2k" if complete else "ICC1k"
    icc1 = float(table.loc["ICC1", "ICC"])

    def ci(row: str) -> tuple[float, float]:
        return float(table.loc[row, "CI_low"]), float(table.loc[row, "CI_high"])

    a_low, a_high, a_basis = None, None, f"agreement of single ratings; {alpha_note or 'no interval'}"
    if alpha_interval is not None:
        a_low, a_high = alpha_interval.ci_low, alpha_interval.ci_high
        a_basis = (f"agreement of single ratings; interval: percentile bootstrap over items, {alpha_interval.n_boot} "
                   f"replicates, seed {alpha_interval.seed} (Zapf et al. 2016)")
    rows = [(f"Reliability of the average of {observed_k} raters: {name} (quote this)", value, *ci(form),
             verdict_reliability(value), why),
            ("items", x.shape[0], None, None, "", "rows of the Ratings sheet with at least one rating"),
            ("raters (columns)", x.shape[1], None, None, "", "columns of the Ratings sheet"),
            ("ratings", int((~np.isnan(x)).sum()), None, None, "", "non-blank rating cells"),
            ("ICC(1) single rating", icc1, *ci("ICC1"), verdict_reliability(icc1),
             "reliability of one rating (one-way, all ratings): the basis of the Spearman-Brown prophecy"),
            ("ICC(1,k) mean rating", float(table.loc["ICC1k", "ICC"]), *ci("ICC1k"), "",
             "one-way, the average of the item's ratings"),
            ("kRR bootstrap (mean of item means)", boot.estimate, boot.ci_low, boot.ci_high, "",
             "resampling items and raters; percentile interval"),
            ("Krippendorff alpha (interval)", alpha, a_low, a_high, verdict_reliability(alpha), a_basis)]
    for target in (0.8, 0.9):
        try:
            k = rel.raters_needed(icc1, target)
            text = (f"Spearman-Brown prophecy from ICC(1) = {icc1:.3f}" + (" (beyond the observed raters)"
                                                                           if k > observed_k else ""))
        except InputError as exc:
            k, text = None, exc.message
        rows.append((f"raters needed for {target:.1f}", k, None, None, "", text))
    if "spearman_brown" in curve.columns and "sb_icc1" in curve.attrs:
        rows.append(("why Spearman-Brown at k = 1 differs from ICC(1)", curve.attrs["sb_icc1"], None, None, "",
                     f"the curve's Spearman-Brown column starts from an ICC(1) of only 2 randomly drawn ratings per "
                     f"item ({curve.attrs['sb_icc1']:.3f}), as a small pilot would; ICC(1) above uses all ratings "
                     f"({icc1:.3f}). The gap shows how far a 2-rater pilot can be off."))
    if table.attrs.get("note"):
        rows.append(("note", None, None, None, "", table.attrs["note"]))
    if curve_note:
        rows.append(("kRR curve", None, None, None, "", curve_note))
    summary = pd.DataFrame(rows, columns=["statistic", "value", "lower", "upper", "verdict", "basis"],
                           dtype=object)  # counts stay integers
    level = _level_text(table.attrs.get("ci_level", 0.95))
    summary_cols = {"statistic": Column("statistic", None, "", max_width=50),
                    "value": Column("value", MIXED, "the figure"),
                    "lower": Column("lower", RELIAB, f"lower end of the {level} interval (ICC: F distribution, Shrout "
                                                     "& Fleiss 1979; bootstrap rows: percentile interval)"),
                    "upper": Column("upper", RELIAB, f"upper end of the {level} interval"),
                    "verdict": Column("verdict", None, "0.9+ excellent, 0.75+ good, 0.5+ moderate, below poor"),
                    "basis": Column("basis", None, "what the figure is computed from and why", wrap=True, max_width=90)}
    return SheetSpec("kRR", summary, preamble, summary_cols)


def reliability_sheets(x: np.ndarray, table: pd.DataFrame, boot, alpha: float, curve: pd.DataFrame, curve_note: str,
                       preamble, *, alpha_interval=None, alpha_note: str = "") -> list[SheetSpec]:
    """ICC table, a kRR summary led by the one figure to quote (each figure with its interval where it has one), and
    the k-rater curve with its prophecy.  *alpha_interval*: the bootstrap interval of Krippendorff's alpha
    (:func:`xlcalib.agreement.agreement_bootstrap`), or *alpha_note* saying why there is none."""
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
    spec_curve.charts.append(ChartSpec(
        "scatter", "Reliability of the mean of k ratings", spec_curve.header_row, len(c), 1,
        tuple(range(2, len(c.columns) + 1)), "k raters averaged", "reliability", anchor=f"{_letter(len(c.columns) + 2)}2",
        lines=True, x_range=(0, k_max + 1), y_range=(0, 1), x_major=1 if k_max <= 15 else 5,
        ref_lines=(RefLine("0.8", (0, k_max + 1), (0.8, 0.8)), RefLine("0.9", (0, k_max + 1), (0.9, 0.9))),
        y_number_format="0.0", width_cm=20, height_cm=11))
    return [icc, summary, spec_curve]


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
              f"{standard_error_words(table)}; {_level_text(level)} interval estimate ± t(n-1) SE, upper end capped "
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
                                  max_width=45),
            "estimate": Column("estimate", RELIAB, "(pa - pe) / (1 - pe): 1 = perfect, 0 = chance agreement"),
            "SE": Column("SE", RELIAB, "standard error over subjects"),
            "lower": Column("lower", RELIAB, f"lower end of the {_level_text(level)} interval"),
            "upper": Column("upper", RELIAB, f"upper end of the {_level_text(level)} interval"),
            "p": Column("p", PVALUE, "two-sided p-value of the coefficient being 0 (no agreement beyond chance)"),
            "verdict": Column("verdict", None, "Landis & Koch (1977): above 0.8 almost perfect, 0.6 substantial, 0.4 "
                                               "moderate, 0.2 fair, else slight", max_width=40),
            "basis": Column("basis", None, "why this one / what it takes as chance", wrap=True, max_width=90)}


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


# ----------------------------------------------------------------------------
# imported review exports
# ----------------------------------------------------------------------------
_REPORT_COLUMNS = {
    "sheet": Column("sheet", None, "the export's file, or its sheet (a CMT track, a revision sheet)"),
    "row": Column("row", COUNT, "the row of the export as a spreadsheet shows it (its header is row 1)"),
    "cell": Column("cell", None, "the cell of the score (or of the review's line) that was not imported"),
    "assessor": Column("assessor", None, "the reviewer as the export names them"),
    "object": Column("object", None, "the paper or proposal"),
    "reason": Column("reason", None, "why it was not imported", max_width=80),
}


def import_preamble(preamble, imported) -> list:
    """The run's lines, then what was read and every note of the import (scale declared or inferred, letters
    turned so that higher = better, reviewers who cannot be linked ...), one line each."""
    first = imported.summary().splitlines()[0]
    return [*preamble, [f"read: {first}"], *[[f"note: {note}"] for note in imported.notes]]


def import_report_sheet(imported, preamble) -> SheetSpec:
    """Import report: every row or cell of the export that was not imported, with its reason (never dropped
    silently), below the import's notes."""
    report = imported.report
    if len(report):
        frame = report[["sheet", "row", "cell", "assessor", "object", "reason"]].reset_index(drop=True)
    else:
        frame = pd.DataFrame({"sheet": [""], "row": [None], "cell": [""], "assessor": [""], "object": [""],
                              "reason": ["nothing left out: every score of the export was imported"]})
    return SheetSpec("Import report", frame, import_preamble(preamble, imported), _REPORT_COLUMNS)


def import_sheet(presets: pd.DataFrame, preamble) -> SheetSpec:
    """Import: the roles of the export's columns, one column per review system (edit a cell to change a role;
    a blank column is detected afresh), kept for the next import."""
    cols = {"Role": Column("Role", None, "what the column holds; 'menu' is where the system makes its export")}
    for name in presets.columns[1:]:
        cols[name] = Column(name, None, f"the {name} export's column for each role (header text; several "
                                        "separated by ' | ', score columns in time order)", max_width=45)
    return SheetSpec("Import", presets, preamble, cols, landscape=True)


def imported_evaluations_sheet(frame: pd.DataFrame) -> SheetSpec:
    """Evaluations as imported: the long table with its header in row 1, ready for ``xlcalib calibrate``."""
    cols = {"Score": Column("Score", "General", "the score as a number (letters read on the scale, higher = better)")}
    return SheetSpec("Evaluations", frame, [], cols, freeze_columns=2)


def import_summary_rows(imported) -> list[tuple[str, str]]:
    """Summary lines on how an export was read: what and how much, the scale (and letters turned so that
    higher = better), the confidences, the reviewers' identities and every other note."""
    ev = imported.evaluations
    rows = [("Imported from", f"{imported.name or 'the export'} ({imported.source} export): {len(ev):,} "
                              f"evaluations of {ev['object'].nunique():,} objects by {ev['assessor'].nunique():,} "
                              f"assessors; {len(imported.report):,} row(s) or cell(s) not imported, each listed "
                              "with its reason on the Import report sheet.")]
    topics = (("score scale", "Score scale"), ("score fields", "Score fields"), ("confidence", "Confidences"),
              ("no confidence", "Confidences"), ("identity map", "Reviewer identities"),
              ("reviewer ids", "Reviewer identities"))
    for note in imported.notes:
        if "not imported, listed in the import report" in note:
            continue
        topic = next((t for word, t in topics if note.lower().startswith(word)), "Import note")
        rows.append((topic, note[0].upper() + note[1:] + ("" if note.endswith(".") else ".")))
    return rows


def with_import_rows(summary: SheetSpec, imported) -> SheetSpec:
    """The calibration Summary with the import's lines after its first line ("What was calibrated")."""
    extra = pd.DataFrame(import_summary_rows(imported), columns=list(summary.frame.columns))
    summary.frame = pd.concat([summary.frame.iloc[:1], extra, summary.frame.iloc[1:]], ignore_index=True)
    return summary


def plain_averages_sheets(averages: pd.DataFrame, imported, preamble, line_note: str = "") -> list[SheetSpec]:
    """For reviewers who cannot be linked across objects: Ranking by plain average (with its ± standard error),
    and a Summary saying plainly why there is no calibration, with the reliability of the averages."""
    cols = {"rank": Column("rank", COUNT, "1 = highest plain average"),
            "object": Column("object", None, "the object (paper, proposal) as the export names it"),
            "plain average": Column("plain average", SCORE, "the plain average of the object's scores: no "
                                    "calibration, as the reviewers cannot be linked across objects"),
            "± (standard error)": Column("± (standard error)", SCORE, "standard deviation of the scores over the "
                                         "square root of the reads (blank with one read)"),
            "reads": Column("reads", COUNT, COLUMNS["n"].meaning),
            "lowest": Column("lowest", SCORE, "the lowest score given"),
            "highest": Column("highest", SCORE, "the highest score given")}
    ranking = SheetSpec("Ranking", averages, preamble, cols, freeze_columns=2)
    value, basis = reliability_of_averages(imported.evaluations)
    rows = [("Why no calibration", "The reviewers' ids are per paper: the same person cannot be recognised on two "
                                   "objects, so no reviewer's stringency can be estimated and no score can be "
                                   "corrected. The Ranking gives plain averages."),
            ("Reliability of the averaged scores", f"{_fmt(value)} ({verdict_reliability(value)}): {basis}."),
            ("What to do next", "Ask the system for the reviewers' identities and pass them as an identity map "
                                "(a CSV file: anonymous id, person) to calibrate.")]
    if line_note:
        rows.insert(2, ("Funding line", line_note))
    rows[0:0] = import_summary_rows(imported)
    frame = pd.DataFrame(rows, columns=["topic", "in plain words"])
    summary = SheetSpec("Summary", frame, preamble, {"topic": Column("topic", None, ""), "in plain words": Column(
        "in plain words", None, "", wrap=True, max_width=100)}, landscape=False)
    return [ranking, summary]
