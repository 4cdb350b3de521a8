"""The Ranking sheet and its chart: objects in rank order with the honest ±, one final decision per object with
the statement it rests on, the funding line, a count line under the table, and the caterpillar coloured by
decision on a page of its own."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..calibration.decide.ranking import ranks_with_ties
from ..workbook.base import ChartSpec, Column, SheetSpec
from .common import (
    COLUMNS,
    COUNT,
    PROB,
    SCORE,
    YES,
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
)

#: The final decisions in the order a reader meets them, each with its colour on the chart.
DECISION_COLOURS = {"funded": "548235", "funded by lottery": "2E8B8B", "to discuss": "BF9000",
                    "not drawn": "C55A11", "not funded": "7F7F7F"}
#: A chance of funding in per cent: 100% and 0.0% only when exact, ">99.9%" for a chance below 1 that one decimal
#: would round up to 100% (an object "funded by lottery" at "100.0%" reads as a contradiction).
CHANCE_PERCENT = '[=1]0%;[<0.9995]0.0%;">99.9%"'
#: Objects shown on the Ranking chart at most (their names must stay readable under the points).
CHART_OBJECTS = 70


class _Shared(tuple):
    """A list of names kept in a table's ``attrs`` (a lottery's band, the names drawn) that pandas need not copy:
    every column read of a frame deep-copies its ``attrs``, and a band of thousands of names made the sheets of a
    10^4-object ranking spend half a second copying it.  Read-only, so sharing it is safe."""

    def __deepcopy__(self, memo):
        return self


def _shared_attrs(value):
    """*value* with every list inside turned into a :class:`_Shared` (dicts walked, the rest as is)."""
    if isinstance(value, dict):
        return {k: _shared_attrs(v) for k, v in value.items()}
    if isinstance(value, list):
        return _Shared(value)
    return value


def ranking_table(result, settings, decisions: pd.DataFrame | None = None) -> pd.DataFrame:
    """The run's ranking (*decisions*, computed once by the run) or the core's ranking with the run's
    funding line, draws and seed; a panel split into unconnected groups (no common scale, no joint ranking)
    gets its values sorted with plain ranks, and the Summary says why.  The table the sheets read shares its
    ``attrs``' lists rather than copying them at every column read (the run's own table is left as it is)."""
    from ..errors import InputError

    if decisions is None:
        kwargs = settings.ranking_arguments() if hasattr(settings, "ranking_arguments") else {}
        try:
            decisions = result.ranking(**kwargs)
        except InputError:
            if result.one_scale:
                raise
            decisions = None
    if decisions is not None:
        table = decisions.copy(deep=False)
        table.attrs = _shared_attrs(decisions.attrs)
        return table
    v = result.values.sort_values("value", ascending=False, kind="mergesort")
    v.insert(0, "rank", np.arange(1, len(v) + 1, dtype=np.intp))
    v["raw_rank"] = ranks_with_ties(v["raw_mean"].to_numpy(dtype=float))
    return v


def _line_position(settings, values: np.ndarray) -> tuple[int | None, float | None]:
    """(0-based row under which the funding line is drawn, the calibrated value the line sits at: the score line
    itself, or midway between the last place and the next object)."""
    top_k, threshold = getattr(settings, "fund_top_k", None), getattr(settings, "fund_threshold", None)
    if top_k:
        after = int(min(top_k, len(values))) - 1
        value = float((values[after] + values[after + 1]) / 2) if after < len(values) - 1 else None
        return after, value
    if threshold is not None:
        after = int((values >= threshold).sum()) - 1
        return (after if after >= 0 else None), float(threshold)
    return None, None


def ranking_sheet(result, settings, preamble, table: pd.DataFrame | None = None,
                  titles: pd.Series | None = None) -> SheetSpec:
    """Ranking: objects sorted by calibrated value, the ± of the interval, raw rank, rank range, reads and, with a
    funding line, P(above the line), the one final decision and the statement it rests on; the line drawn under
    the last place; rows whose side of the line calibration changed marked; a count line and what the words
    mean under the table.  *table*: the run's ranking table (:func:`ranking_table`), made once for every sheet;
    *titles*: object -> title (an export's, or the evaluations' Title column), shown beside each object."""
    r = table if table is not None else ranking_table(result, settings)
    level = r.attrs.get("level") or result.stats.get("interval_level") or getattr(settings, "interval_level", None)
    pm = pm_header(level)
    out = pd.DataFrame({"rank": r["rank"].to_numpy(), "object": r.index.astype(str),
                        "calibrated value": r["value"].to_numpy(), pm: half_width(r),
                        "raw mean": r["raw_mean"].to_numpy(), "raw rank": r["raw_rank"].to_numpy()})
    cols: dict[str, Column] = {
        "rank": Column("rank", COUNT, "1 = highest calibrated value"),
        "object": Column("object", None, "the object (proposal, candidate ...) as entered", max_width=28),
        "calibrated value": Column("calibrated value", SCORE, COLUMNS["value"].meaning),
        pm: Column(pm, SCORE, pm_meaning(level)),
        "raw mean": Column("raw mean", SCORE, COLUMNS["raw_mean"].meaning),
        "raw rank": Column("raw rank", COUNT, "rank by the plain average (before calibration)")}
    if titles is not None:
        out.insert(2, "title", r.index.map(titles).to_numpy(dtype=object))
        cols["title"] = Column("title", None, "the object's title, as the export or the Title column gives it",
                               max_width=40)
    if {"rank_lower", "rank_upper"} <= set(r.columns):
        name = f"rank range ({level_text(level)})" if level else "rank range"
        out[name] = [f"{int(a)}-{int(b)}" if a != b else f"{int(a)}" for a, b in zip(r["rank_lower"], r["rank_upper"])]
        cols[name] = Column(name, None, "ranks the object holds in this share of the simulated panels (the "
                                        "uncertainty of all values at once)")
    out["reads"] = r["n"].to_numpy()
    cols["reads"] = Column("reads", COUNT, COLUMNS["n"].meaning)
    spec = SheetSpec("Ranking", out, preamble, cols, freeze_columns=2)
    if "p_above" in r.columns:
        _decision_columns(spec, r)
        spec.line_after, _ = _line_position(settings, out["calibrated value"].to_numpy())
        spec.footer = ranking_footer(r)
    return spec


def _decision_columns(spec: SheetSpec, r: pd.DataFrame) -> None:
    """P(above the line), the final decision, the statement it rests on and whether calibration changed it."""
    eps = r.attrs.get("epsilon", 0.05)
    out, cols = spec.frame, spec.columns
    out["P(above line)"] = r["p_above"].to_numpy()
    cols["P(above line)"] = Column("P(above line)", PROB, "probability that the object truly belongs above the "
                                                          "funding line, given the uncertainty of all values")
    if "chance" in r.columns:
        informed = (r.attrs.get("lottery") or {}).get("method") == "informed"
        out["chance of funding"] = r["chance"].to_numpy()
        cols["chance of funding"] = Column("chance of funding", CHANCE_PERCENT, (
            "the object's chance in the informed lottery: its P(above the line), to the ten-thousandth (100% = funded, "
            "0% = not funded without a draw); Lottery has the draw" if informed else
            "the object's chance in the uniform band lottery: 100% above the line, the band's equal share, 0% below; "
            "Lottery has the draw"))
    out["decision"] = r["final"].astype(str).to_numpy()
    cols["decision"] = Column("decision", None, "the one final decision: funded, not funded, funded by lottery, "
                                                "not drawn (in the lottery, not drawn), to discuss (borderline: the "
                                                "panel decides)")
    out["rests on"] = r["basis"].astype(str).to_numpy()
    cols["rests on"] = Column("rests on", None, f"the statement the decision rests on: jointly above / below = the "
                                                f"whole list so marked at once; P(above) on its own; borderline = "
                                                f"P(above) between {eps:.0%} and {1 - eps:.0%}, the data cannot "
                                                "place it")
    out["changed by calibration"] = [YES if c else "" for c in r["changed"].astype(bool)]
    cols["changed by calibration"] = Column("changed by calibration", None, "yes = plain averages would put the "
                                                                            "object on the other side of the line "
                                                                            "(rows in amber)")
    spec.mark = "changed by calibration"


def decision_counts(r: pd.DataFrame) -> str:
    """'20 places: 3 funded, 17 funded by lottery, 28 not drawn, 102 not funded (150 objects)' -- the count line."""
    counts = r["final"].value_counts()
    parts = [f"{int(counts[w])} {w}" for w in DECISION_COLOURS if w in counts]
    record = r.attrs.get("places") or {}
    places = record.get("places")
    head = f"{places} places: " if places else f"Funding line {r.attrs.get('line', '')}: "
    text = head + ", ".join(parts) + f" ({len(r)} objects)."
    if places and "to discuss" in counts:  # no lottery: the band is the panel's to decide
        text += f" {record.get('left', 0)} place(s) are left for the panel to fill from those to discuss."
    return text


def percent_words(x: float) -> str:
    """A chance strictly between 0 and 1 in per cent, with as many decimals as keep it off 0% and 100% (one at
    least): 0.0003%, 45.5%, 99.997%."""
    for digits in range(1, 7):
        text = f"{100 * x:.{digits}f}"
        if 0 < float(text) < 100:
            return text + "%"
    return f"{100 * x:.6g}%"


def lottery_words(r: pd.DataFrame) -> str:
    """The lottery in one line under the Ranking: how many places were certain and how many drawn, among whom,
    with which chances, and where the public record is."""
    lottery = r.attrs["lottery"]
    places, sure = lottery["places"], lottery["sure"]
    pool = r.loc[list(lottery["pool"])] if lottery["pool"] else r.iloc[:0]
    chances = (f"chances {percent_words(pool['chance'].min())} to {percent_words(pool['chance'].max())}"
               if len(pool) else "no draw")
    if lottery["method"] == "informed":
        return (f"Informed lottery: {sure} place(s) certain (chance 100%), {places} drawn among the {len(pool)} "
                f"object(s) whose P(above the line) lies strictly between 0 and 1 ({chances}), each funded with "
                f"exactly its chance; public seed '{lottery['seed']}'. The sheet Lottery holds the record anyone can "
                "re-run (xlcalib verify-draw).")
    band = (f" (ranks {int(pool['rank'].min())}-{int(pool['rank'].max())}, P(above) {pool['p_above'].min():.0%} to "
            f"{pool['p_above'].max():.0%})") if len(pool) else ""
    return (f"Uniform band lottery: {sure} place(s) certain, {places} drawn among the {len(pool)} "
            f"{lottery.get('tier', 'borderline')} object(s) next to the line{band}, each with the same chance "
            f"({places / max(len(pool), 1):.0%}) whatever its P(above); public seed '{lottery['seed']}' (sheet Lottery). "
            "A wider borderline cut-off (Settings) narrows the band.")


def ranking_footer(r: pd.DataFrame) -> list[list[str]]:
    """The lines under the Ranking table: the count line, the lottery, and what the words of the table mean."""
    attrs = r.attrs
    eps, level = attrs.get("epsilon", 0.05), attrs.get("level", 0.95)
    joint = attrs.get("joint") or {}
    lines = [[f"Count: {decision_counts(r)}"]]
    lottery = attrs.get("lottery") or {}
    if lottery:
        lines.append([lottery_words(r)])
    lines.append([f"Rests on: 'jointly above ({level_text(level)})' = the {joint.get('above', 0)} objects so marked "
                  f"are above the line all together with {level_text(level)} probability (the whole list at once, "
                  f"not one object at a time); 'jointly below' = the {joint.get('below', 0)} so marked are all "
                  f"below it together; 'on its own' = that object alone; 'borderline' = P(above) between "
                  f"{eps:.0%} and {1 - eps:.0%}: the data cannot place it (the borderline cut-off is a Settings "
                  "row)."])
    lines.append(["± is half the width of the interval at the run's level, on every sheet; rank range: the ranks "
                  "the object holds in that share of the simulated panels; amber rows: calibration changed the "
                  "side of the line."])
    return lines


def ranking_chart(spec: SheetSpec, r: pd.DataFrame, settings, preamble) -> SheetSpec:
    """"Ranking chart": the caterpillar -- calibrated value and its interval per object in rank order, coloured by
    the final decision, the funding line drawn across in red and named; every object shown is named under its
    point (the top objects and the whole band at the line; at most :data:`CHART_OBJECTS`)."""
    f = spec.frame
    pm = next(c for c in f.columns if str(c).startswith("±"))
    decided = "decision" in f.columns
    n = _shown_objects(f) if decided else min(len(f), CHART_OBJECTS)
    top = f.iloc[:n]
    data = pd.DataFrame({"rank": top["rank"].to_numpy(),
                         "object (rank order)": [f"{int(k)}. {str(o)[:18]}" for k, o in zip(top["rank"], top["object"])]})
    groups = [w for w in DECISION_COLOURS if decided and (top["decision"] == w).any()] or ["calibrated value"]
    for g in groups:
        mask = (top["decision"] == g).to_numpy() if decided else np.ones(n, dtype=bool)
        data[g] = np.where(mask, top["calibrated value"].to_numpy(), np.nan)
    _, line_value = _line_position(settings, f["calibrated value"].to_numpy()) if decided else (None, None)
    line_name = f"funding line ({r.attrs.get('line', '')})"
    if line_value is not None:
        data[line_name] = line_value
    for g in groups:
        data[f"± {g}"] = np.where(data[g].notna(), top[pm].to_numpy(), np.nan)
    lo, hi = value_span(top["calibrated value"], top[pm])
    if line_value is not None:
        lo, hi = min(lo, line_value), max(hi, line_value)
    pad = 0.05 * (hi - lo if hi > lo else 1.0)
    names = list(data.columns)
    own = user_names(settings)
    shown = f"the top {n} of {len(f)}" if n < len(f) else f"all {n} objects"
    title = (f"Calibrated value with its {pm[3:-1]}, {shown} in rank order" +
             (", coloured by decision" if decided else "") +
             (f"; dashed red: the {line_name}" if line_value is not None else ""))

    def make(header_row: int, n_rows: int) -> ChartSpec:
        return ChartSpec("dots", title, header_row, n_rows, 2, tuple(names.index(g) + 1 for g in groups),
                         f"{own['object']}, in rank order (1 = highest calibrated value)", f"calibrated {own['score']}",
                         error_columns=tuple(names.index(f"± {g}") + 1 for g in groups),
                         colours=tuple(DECISION_COLOURS.get(g, "1F4E79") for g in groups),
                         line_columns=(names.index(line_name) + 1,) if line_value is not None else (),
                         y_range=(nice_floor(lo - pad), nice_ceil(hi + pad)), **chart_kwargs())

    cols = {g: Column(g, "0.00") for g in names[2:]}
    return chart_page("Ranking chart", preamble, data, make, cols)


def _shown_objects(f: pd.DataFrame) -> int:
    """How many objects the Ranking chart shows: every object when few, else the top ones down to past the last
    object not decided 'not funded' (the band at the line), at least twice the places, capped."""
    if len(f) <= CHART_OBJECTS:
        return len(f)
    undecided = np.flatnonzero((f["decision"] != "not funded").to_numpy())
    last = int(undecided.max()) + 1 if undecided.size else 0
    places = (f["decision"].isin(["funded", "funded by lottery"])).sum()
    return int(min(len(f), CHART_OBJECTS, max(40, 2 * places, last + 5)))


__all__ = ["DECISION_COLOURS", "decision_counts", "lottery_words", "percent_words", "ranking_chart", "ranking_footer", "ranking_sheet",
           "ranking_table"]
