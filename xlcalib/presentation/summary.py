"""The Summary -- a one-page document for the minutes: what was calibrated, the decision paragraph (the same
words the command line prints), the names decided, the key figures, what to do next and how it was computed --
and the list of every calibration result sheet in reading order."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..calibration import MODEL_WORDS
from ..calibration.decide.ranking import decision_summary
from ..calibration.behaviour.verdict import assessors_differ, is_pooled, trust_sentences
from ..workbook.base import Column, SheetSpec
from .behaviour import (
    BehaviourTables,
    behaviour_summary_rows,
    feedback_sheet,
    fit_sheet,
    groups_sheets,
    unexpected_sheet,
)
from .common import fmt_number, level_text, nice_ceil, nice_floor, verdict_reliability
from .panel import (
    assessors_sheet,
    biases_chart,
    checks_from_warnings,
    checks_sheet,
    diagnostics_sheet,
    residuals_sheet,
    values_sheet,
)
from .lottery import lottery_sheet
from .ranking import ranking_chart, ranking_sheet, ranking_table

#: Names listed in one Summary line at most (the Ranking has them all).
LISTED = 25


def reliability_of_averages(evaluations: pd.DataFrame) -> tuple[float, str]:
    """ICC(1,k) of the raw evaluations (an assessor's repeated reads of an object averaged), and how it was computed.

    The one-way ICC sees only which scores belong to which object, not who gave them, so the grid is objects x
    read slots (as wide as the most-read object), not objects x assessors: the same estimate, without a dense
    grid of every object by every assessor (gigabytes for a panel of a few hundred thousand reads).
    """
    from .. import reliability as rel
    from ..errors import InputError

    try:
        cells = evaluations.groupby(["object", "assessor"], sort=False, observed=True)["score"].mean().reset_index()
        reads = cells.groupby("object", sort=False, observed=True)["score"].transform("size").to_numpy()
        cells = cells[reads >= 2]
        row = pd.factorize(cells["object"])[0].astype(np.intp)
        slot = cells.groupby("object", sort=False, observed=True).cumcount().to_numpy(dtype=np.intp)
        x = np.full((int(row.max()) + 1 if len(row) else 0, int(slot.max()) + 1 if len(slot) else 0), np.nan)
        x[row, slot] = cells["score"].to_numpy(dtype=float)
        value = rel.icc(x, "ICC1k")
    except InputError as exc:
        return float("nan"), f"not computable: {exc}"
    except (ValueError, KeyError):
        return float("nan"), "not computable (too few objects with two or more reads)"
    reads = float(evaluations.groupby("object").size().mean())
    return value, (f"ICC(1,k), one-way from the raw scores of {len(x)} objects with 2 or more reads, "
                   f"about {reads:.1f} reads each")


def _model_reliability(stats: dict) -> tuple[float, str]:
    """ICC(1,k) from the one-way model's own variance components (REML): the same quantity as
    :func:`reliability_of_averages` estimates from the raw scores, for a panel whose readers are pooled."""
    return float(stats["icc_k"]), ("ICC(1,k), one-way, from the model's variance components (REML) at a typical "
                                   "object's reads")


def _names(values, limit: int = LISTED) -> str:
    values = [str(v) for v in values]
    return ", ".join(values[:limit]) + (f" and {len(values) - limit} more (see Ranking)" if len(values) > limit else "")


def decision_rows(r: pd.DataFrame) -> list[tuple[str, str]]:
    """The decision paragraph (the command line's words) and the names decided, one line per decision."""
    if "final" not in r.columns:
        return []
    rows = [("Decision", decision_summary(r))]
    for word, topic in (("funded", "Funded"), ("funded by lottery", "Funded by lottery"),
                        ("to discuss", "To discuss")):
        names = r.index[r["final"] == word]
        if len(names):
            rows.append((f"{topic} ({len(names)})", _names(names) + "."))
    return rows


def _panel_row(s: dict, evaluations, pooled: bool = False) -> tuple[str, str]:
    per_object = evaluations.groupby("object").size()
    spread = f"{per_object.min()}" + ("" if per_object.min() == per_object.max() else f"-{per_object.max()}")
    how = ("No reader read two objects, so no reader's stringency can be estimated or taken out: it is part of the "
           "noise of each read; surer reads count more." if pooled else
           "Each assessor's stringency is estimated from the objects they share with others and taken out; surer "
           "reads count more.")
    return ("Panel", f"{s['n_objects']} objects scored by {s['n_assessors']} assessors in {s['n_evaluations']} reads "
                     f"({spread} reads per object). {how}")


def _assessor_rows(assessors: SheetSpec | None, result) -> list[tuple[str, str]]:
    a = assessors.frame if assessors is not None else ()
    rows = []
    if len(a):
        rows.append(("Harshest assessor", f"{a['assessor'].iloc[0]}: {a['in plain words'].iloc[0]}."))
        rows.append(("Most lenient assessor", f"{a['assessor'].iloc[-1]}: {a['in plain words'].iloc[-1]}."))
    n_flag = int(result.residuals["anomalous"].sum())
    where = "Unexpected and Biases" if assessors is not None else "Unexpected"
    rows.append(("Reads to query", f"{n_flag} read(s) stand out (more than "
                                   f"{result.stats.get('anomaly_threshold', 3):g} expected spreads from what the model "
                                   f"expects): see {where}." if n_flag else "No read stands out."))
    return rows


def _changed_row(r: pd.DataFrame, s: dict) -> tuple[str, str]:
    if "changed" not in r.columns:
        moved = int((np.abs(r["rank"] - r["raw_rank"]) >= 3).sum())
        return ("Effect of calibration", f"{moved} object(s) moved 3 or more ranks compared with plain averages. Set a "
                                          "funding line on the Settings sheet (Funding line (top k) or (score)) to see "
                                          "decisions and how sure each one is.")
    changed = r.index[r["changed"].astype(bool)]
    listing = (": " + _names(changed, 12)) if len(changed) else ""
    if assessors_differ(s) is False:
        return ("Decisions calibration changed",
                f"{len(changed)} object(s) sit on the other side of the line from plain averages{listing}; the "
                "assessors do not measurably differ in stringency, so this is the confidence weights and chance, not a "
                "correction to act on (amber rows on Ranking).")
    return ("Decisions calibration changed", f"{len(changed)} object(s) sit on the other side of the line from plain "
                                             f"averages{listing} (amber rows on Ranking).")


def _next_steps(result, r: pd.DataFrame, checks) -> str:
    steps = []
    n_checks = len(checks) if checks is not None else 0
    if n_checks:
        steps.append(f"read the {n_checks} line(s) on Checks")
    if int(result.residuals["anomalous"].sum()):
        steps.append("query the flagged reads with their assessors")
    if "final" in r.columns and (r["final"] == "to discuss").any():
        steps.append(f"decide the {int((r['final'] == 'to discuss').sum())} object(s) to discuss (or set Lottery to "
                     "yes, or ask for the reads on Next reads)")
    lottery = r.attrs.get("lottery") or {}
    eps = r.attrs.get("epsilon", 0.05)
    if lottery and not lottery.get("declared"):
        steps.append("declare the lottery's public seed before the meeting (Settings row Public seed, or --public-seed): "
                     "this draw used the run's Monte Carlo seed")
    if lottery.get("method") == "uniform band" and lottery.get("pool") and eps < 0.25:
        steps.append(f"if a band of {len(lottery['pool'])} for {lottery['places']} place(s) is too wide to draw from, "
                     f"set Borderline cut-off on Settings above {eps:.0%} (25% keeps the objects whose middle half of "
                     "ranks holds the line) or ask for the reads on Next reads, and run again")
    low = result.values["total_confidence"] < 0.5 * result.values["total_confidence"].median()
    if low.any():
        steps.append(f"consider more reads for {int(low.sum())} object(s) with few or unsure reads "
                     f"({_names(result.values.index[low], 6)})")
    text = "; ".join(steps) + "."
    return text[0].upper() + text[1:] if steps else "Nothing stands out: the ranking can go to the panel."


def _computed_row(result, settings) -> tuple[str, str]:
    s = result.stats
    model = s.get("model", "fixed")
    words = [f"Model {model}: {MODEL_WORDS.get(model, '')}."]
    if hasattr(settings, "describe"):
        words.append(f"Settings: {settings.describe()}.")
    words.append(f"Every ± is half the width of the {level_text(s.get('interval_level', 0.95))} interval.")
    return ("How this was computed", " ".join(words))


def summary_sheet(result, ranking: SheetSpec, assessors: SheetSpec | None, evaluations, settings, checks: pd.DataFrame,
                  preamble, behaviour: BehaviourTables | None = None, table: pd.DataFrame | None = None) -> SheetSpec:
    """Summary: a one-page document for the minutes (portrait): the panel, the decision paragraph and the names
    decided, the key figures in plain words, what to do next, and how it was computed.  *table*: the run's
    ranking table, made once for every sheet."""
    s = result.stats
    r = table if table is not None else ranking_table(result, settings)
    rows: list[tuple[str, str]] = [_panel_row(s, evaluations, is_pooled(result)), *decision_rows(r)]
    rows.append(("How far to trust calibration", " ".join(trust_sentences(result))))
    pending = int(checks["problem"].astype(str).str.contains("pending", regex=False).sum()) if checks is not None else 0
    if pending:
        rows.append(("Still to come", f"{pending} allocated read(s) have no score yet (pending): left out of this run "
                                      "and listed on Checks. Re-run when they are in."))
    outside = _outside_scores(result, evaluations)
    if outside:
        rows.append(("Values beyond the scores given", outside))
    rows += _assessor_rows(assessors, result)
    rows.append(_changed_row(r, s))
    rows += behaviour_summary_rows(result, behaviour or BehaviourTables.of(result))
    rel_value, rel_basis = (_model_reliability(s) if "icc_k" in s and not isinstance(s["icc_k"], list)
                            else reliability_of_averages(evaluations))
    rows.append(("Reliability of the averaged scores",
                 f"{fmt_number(rel_value)} ({verdict_reliability(rel_value)}): {rel_basis}. It says how well the "
                 "panel's averages would agree with those of a new panel of the same size."))
    rows.append(("What to do next", _next_steps(result, r, checks)))
    rows.append(_computed_row(result, settings))
    frame = pd.DataFrame(rows, columns=["topic", "in plain words"])
    cols = {"topic": Column("topic", None, "", max_width=22),
            "in plain words": Column("in plain words", None, "", wrap=True, max_width=84)}
    title = [[f"{preamble[0][0]}: summary for the minutes"]] + [list(x) for x in preamble[1:2]] if preamble else []
    return SheetSpec("Summary", frame, title, cols, landscape=False)


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


def calibration_sheets(result, frames: dict[str, pd.DataFrame], settings, evaluations: pd.DataFrame | None,
                       preamble, *, feedback: bool = False, decisions: pd.DataFrame | None = None,
                       groups: pd.Series | None = None, titles: pd.Series | None = None) -> list[SheetSpec]:
    """Every sheet of the calibration result workbook, in reading order; each chart on a page of its own right
    after the sheet it draws; with a lottery, its public record (Lottery) after the Summary.  *decisions*: the
    ranking the run decided on (else the core's ranking with the run's settings, made once here); *groups*:
    object -> group, as the run read them (the group tables); *titles*: object -> title, shown on the Ranking
    beside each object."""
    values = frames["Values"]
    if evaluations is None:  # rebuild the long table from the residuals (same reads)
        evaluations = result.residuals[["assessor", "object", "score"]]
    table = ranking_table(result, settings, decisions)
    ranking = ranking_sheet(result, settings, preamble, table, titles)
    # readers who cannot be linked have no bias and no consistency of their own to show (one read each; the
    # Summary says why): no Biases, Biases chart or Fit sheet -- their reads that stand out are on Unexpected
    pooled = is_pooled(result)
    assessors = None if pooled else assessors_sheet(result, preamble)
    # the input checks' lines (frames["Checks"], with cells) and the run's own warnings (low confidence,
    # split panel, anomalies ...), which point at sheets rather than cells
    run_warnings = checks_from_warnings(frames["Diagnostics"])
    run_warnings = run_warnings[~run_warnings["problem"].str.contains("see Checks", regex=False)]
    checks = frames.get("Checks")
    checks = run_warnings if checks is None else pd.concat([checks, run_warnings], ignore_index=True)
    behaviour = BehaviourTables(result, groups)
    summary = summary_sheet(result, ranking, assessors, evaluations, settings, checks, preamble, behaviour, table)
    both = pd.concat([values["raw_mean"], values["value"]])
    lo, hi = float(np.nanmin(both)), float(np.nanmax(both))
    pad = 0.05 * (hi - lo if hi > lo else 1.0)
    level = result.stats.get("interval_level", 0.95)
    values_spec, values_chart = values_sheet(values, preamble, (nice_floor(lo - pad), nice_ceil(hi + pad)), level,
                                             settings)
    from ..calibration.system.posterior import quantile

    q = quantile(0.5 + level / 2, result.t_df)
    readers = [] if pooled else [assessors, biases_chart(assessors, preamble, settings)]
    sheets = [ranking, ranking_chart(ranking, table, settings, preamble), summary,
              *readers, checks_sheet(checks, preamble), values_spec, values_chart,
              residuals_sheet(frames["Residuals"], preamble),
              diagnostics_sheet(frames["Diagnostics"], preamble, result),
              *([] if pooled else [fit_sheet(result, behaviour, preamble)]), unexpected_sheet(behaviour, preamble),
              *groups_sheets(behaviour, preamble, level, q)]
    if (table.attrs.get("lottery") or {}).get("digest"):  # the lottery's public record, after the Summary
        sheets.insert(3, lottery_sheet(table, preamble))
    if feedback and not pooled:  # a letter per reader needs a reader's bias and reads to speak of
        sheets.append(feedback_sheet(result, preamble, behaviour))
    return sheets
