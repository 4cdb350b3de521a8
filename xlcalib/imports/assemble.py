"""Review records -> the long evaluations table, the import report and the problems, in one pass.

Every reader (one module per system) turns its export into *records*: one row per score it found, with
the raw cells of the object, the assessor, the score and the confidence, the optional group (track),
round, status and time, and where the score sits (sheet, row, cell).  This module applies the rules that
are the same for every system, in this order, and lists every record it does not import with its reason:

1. a status that is not a finished review (draft, withdrawn, deleted, desk-rejected) is excluded;
2. with a named round, records of other rounds are left out;
3. a mark instead of a score (COI, N/A) and a blank score are left out;
4. a record without an object or an assessor is left out;
5. the identity map (anonymous id -> person) is applied;
6. scores are read (:func:`~xlcalib.inputs.values.read_values`) on the declared scale, or on one
   inferred and reported; a score off the scale is an error naming its cell;
7. confidences become levels or SDs through the levels table (declared, or thirds of the field's range);
8. the same assessor and object twice: the later one wins when a round or time orders them (the earlier
   is listed as superseded), otherwise it is an error naming both rows.

Errors (unreadable or off-scale scores, unordered repeats, different scales on different tracks) are
collected and raised together as :class:`~xlcalib.errors.InputProblems`, each naming its cell.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..cells import is_blank
from ..errors import InputError, InputProblems
from ..inputs import Problem
from ..inputs.values import MARKS, ConfidenceLevels, Scale, confidence_keys, form_labels, form_scale, leading_number, read_values

__all__ = ["RECORD_COLUMNS", "Options", "Assembled", "assemble", "report_frame", "REPORT_COLUMNS"]

#: Columns of a records frame (readers fill what they have; the rest may be absent).
RECORD_COLUMNS = ("object", "assessor", "score", "score_cell", "sheet", "row", "confidence", "confidence_cell",
                  "group", "round", "round_rank", "status", "time", "field", "label", "title")
REPORT_COLUMNS = ["sheet", "row", "cell", "assessor", "object", "reason"]

_EXCLUDED_WORDS = (("withdrawn", "the submission was withdrawn"), ("desk", "the submission was desk-rejected"),
                   ("deleted", "deleted"), ("draft", "a draft, not submitted"))


@dataclass
class Options:
    """What the user declared (each may be None): scale, confidence levels, round, identity map, statuses kept."""

    scale: Scale | None = None
    confidence_levels: ConfidenceLevels | None = None
    round: str | None = None
    identity: dict[str, str] | None = None
    complete: tuple[str, ...] = ("complete", "completed", "submitted", "final", "")
    anonymous: bool = False
    label: str = "the export"


@dataclass
class Assembled:
    evaluations: pd.DataFrame
    origin: pd.DataFrame
    report: pd.DataFrame
    notes: list[str]
    scale: Scale | None
    confidence_levels: ConfidenceLevels | None
    linked: bool
    problems: list[Problem] = field(default_factory=list)


def report_frame(frame: pd.DataFrame, mask: np.ndarray, reason: Any) -> pd.DataFrame:
    """Report rows (sheet, row, cell, assessor, object, reason) for the records under *mask*."""
    sub = frame.loc[mask]
    reasons = reason[mask] if isinstance(reason, np.ndarray) else reason
    return pd.DataFrame({"sheet": sub["sheet"].to_numpy(dtype=object), "row": sub["row"].to_numpy(),
                         "cell": sub["score_cell"].to_numpy(dtype=object),
                         "assessor": sub["assessor"].to_numpy(dtype=object),
                         "object": sub["object"].to_numpy(dtype=object), "reason": reasons}, columns=REPORT_COLUMNS)


def _blank_mask(values: pd.Series) -> np.ndarray:
    arr = values.to_numpy(dtype=object)
    codes, uniques = pd.factorize(arr, use_na_sentinel=True)
    blank_u = np.asarray([is_blank(u) for u in uniques] + [True], dtype=bool)
    return blank_u[codes] if len(arr) else np.zeros(0, dtype=bool)


def _text(values: pd.Series) -> np.ndarray:
    """Labels as text: whole numbers lose their '.0' (a paper id typed as a number matches the same id as text)."""
    arr = values.to_numpy(dtype=object)
    codes, uniques = pd.factorize(arr, use_na_sentinel=True)
    out_u = []
    for u in uniques:
        if isinstance(u, float) and u.is_integer():
            out_u.append(str(int(u)))
        elif isinstance(u, (int, np.integer)):
            out_u.append(str(int(u)))
        else:
            out_u.append(str(u).strip())
    return np.asarray(out_u + [None], dtype=object)[codes] if len(arr) else np.empty(0, dtype=object)


def _problem(frame: pd.DataFrame, i: int, column: str, message: str, cell_column: str = "score_cell") -> Problem:
    row = frame.iloc[i]
    sheet, cell = str(row["sheet"]), str(row.get(cell_column) or "")
    return Problem("error", sheet, cell, int(row["row"]), column, f"{sheet}, row {int(row['row'])}"
                   + (f", cell {cell}" if cell else "") + f": {message}")


def _status_step(frame: pd.DataFrame, options: Options, reports: list) -> pd.DataFrame:
    if "status" not in frame or frame["status"].isna().all():
        return frame
    status = frame["status"].fillna("").astype(str).str.strip().str.lower()
    keep = status.isin([s.lower() for s in options.complete]).to_numpy()
    if not keep.all():
        why = np.empty(len(frame), dtype=object)
        for k in np.flatnonzero(~keep):
            text = status.iat[k]
            reason = next((r for word, r in _EXCLUDED_WORDS if word in text), None)
            why[k] = f"status '{frame['status'].iat[k]}': " + (reason or "not a finished review")
        reports.append(report_frame(frame, ~keep, why))
    return frame.loc[keep]


def _round_step(frame: pd.DataFrame, options: Options, reports: list) -> pd.DataFrame:
    if options.round is None or "round" not in frame or frame["round"].isna().all():
        return frame
    rounds = frame["round"].fillna("").astype(str)
    wanted = options.round.strip().lower()
    keep = (rounds.str.strip().str.lower() == wanted).to_numpy()
    if not keep.any():
        present = sorted({r for r in rounds.unique() if r})
        raise InputError(f"{options.label}: no review belongs to round '{options.round}' (rounds present: "
                         f"{', '.join(present) or 'none named'})")
    reports.append(report_frame(frame, ~keep, f"round not selected (round='{options.round}')"))
    return frame.loc[keep]


def _cells_step(frame: pd.DataFrame, reports: list) -> pd.DataFrame:
    score = frame["score"].to_numpy(dtype=object)
    codes, uniques = pd.factorize(score, use_na_sentinel=True)
    marks_u = [MARKS.get(u.strip().lower(), "") if isinstance(u, str) else "" for u in uniques] + [""]
    blank_u = [is_blank(u) for u in uniques] + [True]
    reason = np.asarray(marks_u, dtype=object)[codes] if len(score) else np.empty(0, dtype=object)
    blank = np.asarray(blank_u, dtype=bool)[codes] if len(score) else np.zeros(0, dtype=bool)
    marked = (reason != "") & ~blank
    if marked.any():
        reports.append(report_frame(frame, marked, reason))
    if blank.any():
        reports.append(report_frame(frame, blank, "no score entered"))
    frame = frame.loc[~(blank | marked)]
    no_object = _blank_mask(frame["object"])
    no_assessor = _blank_mask(frame["assessor"])
    if no_object.any():
        reports.append(report_frame(frame, no_object, "no object (paper or proposal id) in this row"))
    if (no_assessor & ~no_object).any():
        reports.append(report_frame(frame, no_assessor & ~no_object, "no assessor (reviewer) in this row"))
    return frame.loc[~(no_object | no_assessor)]


def _identity_step(frame: pd.DataFrame, options: Options, notes: list) -> tuple[pd.DataFrame, bool]:
    """Apply the identity map; (frame, linked): linked unless the ids are per paper and none is mapped to a person.

    Reviewers the map leaves out stay readers of one object each: the calibration takes their stringency as part
    of the noise of their reads (as it does for every reviewer when none is linked)."""
    linked = not options.anonymous
    missing: list = []
    if options.identity:
        ids = frame["assessor"].to_numpy(dtype=object)
        mapped = pd.Series(ids, dtype=object).map(options.identity)
        found = mapped.notna().to_numpy()
        frame = frame.assign(assessor=np.where(found, mapped.to_numpy(dtype=object), ids))
        missing = sorted(set(ids[~found].tolist()))
        notes.append(f"identity map: {int(found.sum()):,} of {len(ids):,} reviews matched to a person"
                     + (f"; {len(missing):,} id(s) not in the map (e.g. {', '.join(missing[:3])}): each is a reader "
                        "of one object, whose stringency is part of the noise of their read" if missing else ""))
        linked = linked or bool(found.any())
    if not linked:
        notes.append("reviewer ids are per paper: reviewers cannot be linked across objects, so no reviewer's "
                     "stringency can be estimated or corrected; the calibration takes it as part of the noise of "
                     "each read, and every ± includes it (an identity map -- anonymous id -> person -- links them)")
    return frame, linked


def _scale_by_group_check(frame: pd.DataFrame, problems: list, label: str) -> None:
    """Different score questions or choice scales on different tracks are refused, naming the tracks."""
    if "group" not in frame or frame["group"].nunique(dropna=True) < 2:
        return
    if "field" in frame:
        fields = frame.groupby("group", sort=True)["field"].agg(
            lambda s: " | ".join(sorted({re.sub(r"^q\d+\s*", "", str(v).strip().lower()) for v in s})))
        if fields.nunique() > 1:
            shown = "; ".join(f"{g}: {f}" for g, f in fields.items())
            problems.append(Problem("error", label, "", None, "Score", f"{label}: the tracks score different "
                                    f"questions ({shown}); import one track at a time or map one score column"))
            return
    if "label" in frame and frame["label"].notna().any():
        pairs = frame.loc[frame["label"].notna(), ["group", "label", "number"]].drop_duplicates()
        clash = pairs.groupby("label")["number"].nunique()
        clash = clash[clash > 1]
        if len(clash):
            text = clash.index[0]
            groups = pairs.loc[pairs["label"] == text].sort_values("group")
            shown = ", ".join(f"{g} gives {v:g}" for g, v in zip(groups["group"], groups["number"]))
            problems.append(Problem("error", label, "", None, "Score", f"{label}: different scales on different "
                                    f"tracks: the answer '{text}' means different scores ({shown}); import the tracks "
                                    "separately"))


def _score_step(frame: pd.DataFrame, options: Options, problems: list, notes: list):
    reading = read_values(frame["score"].to_numpy(dtype=object), options.scale)
    for i, reason in sorted(reading.bad.items())[:1000]:
        problems.append(_problem(frame, i, "Score", reason))
    if len(reading.bad) > 1000:
        problems.append(Problem("error", options.label, "", None, "Score",
                                f"... and {len(reading.bad) - 1000:,} more unreadable scores"))
    scale = reading.scale
    stated = form_labels(frame["score"].to_numpy(dtype=object), frame["label"].to_numpy(dtype=object)
                         if "label" in frame and frame["label"].notna().any() else None) \
        if scale is not None and scale.source == "inferred" and not scale.symbols and not reading.bad else None
    if stated and len(stated) >= 2:  # the export states its form's options: that scale, not the scores' extremes
        scale = form_scale(stated)
        notes.append(f"score scale from the form: {scale.describe()} -- its ends are read as 'this or beyond'; an "
                     "option nobody chose is not in the export (declare the scale to change it)")
    elif scale is not None and scale.source == "inferred":
        notes.append(f"score scale inferred: {scale.describe()}" + (f"; {reading.inferred}" if reading.inferred
                                                                    else "") + " -- declare it to change it")
    elif scale is not None:
        notes.append(f"score scale declared: {scale.describe()}")
    return reading.numbers, scale


def _confidence_step(frame: pd.DataFrame, options: Options, problems: list, notes: list):
    if "confidence" not in frame or frame["confidence"].isna().all():
        notes.append("no confidence field: every review weighs the same (confidence 1; the noise scale is "
                     "estimated from the data)")
        return "confidence", np.ones(len(frame)), None
    raw = frame["confidence"]
    blank = _blank_mask(raw)
    levels = options.confidence_levels
    if levels is not None and levels.as_written:
        return _direct_confidence(frame, levels, blank, problems, notes)
    keys, numbers = confidence_keys(raw.to_numpy(dtype=object))
    if levels is None:
        firsts = pd.DataFrame({"k": keys[~blank], "n": numbers[~blank]}).drop_duplicates("k")
        present = dict(zip(firsts["k"], firsts["n"]))
        if any(np.isnan(n) for n in present.values()):  # letters (HotCRP expertise X/Y/Z): A-like best
            reading = read_values(list(present), None, "confidence")
            present = dict(zip(present, reading.numbers))
        levels = ConfidenceLevels.default_from(present)
        notes.append(f"confidence read as levels (change them in the mapping): {levels.describe()}")
    else:
        notes.append(f"confidence levels declared: {levels.describe()}")
    values, missing = levels.lookup(keys)
    missing &= ~blank
    for i in np.flatnonzero(missing)[:1000]:
        problems.append(_problem(frame, int(i), "Confidence", f"confidence '{raw.iat[int(i)]}' is not in the "
                                 f"confidence levels ({levels.describe()})", "confidence_cell"))
    if blank.any():
        fill = "Medium" if levels.kind == "level" else None
        if fill is None:
            for i in np.flatnonzero(blank)[:1000]:
                problems.append(_problem(frame, int(i), "Confidence", "no confidence entered (an SD is needed)",
                                         "confidence_cell"))
        else:
            values = values.copy()
            values[blank] = fill
            notes.append(f"{int(blank.sum()):,} review(s) have no confidence entry: given the level Medium")
    return levels.kind, values, levels


def _direct_confidence(frame: pd.DataFrame, levels: ConfidenceLevels, blank: np.ndarray, problems: list,
                       notes: list):
    """Weights or SDs taken as written: positive numbers, one per review."""
    numbers = np.asarray([leading_number(v) for v in frame["confidence"].to_numpy(dtype=object)], dtype=float)
    word = "an SD" if levels.kind == "sd" else "a weight"
    for i in np.flatnonzero(blank | ~(numbers > 0)):
        raw = frame["confidence"].iat[int(i)]
        why = f"no {levels.kind} entered ({word} is needed beside every score)" if blank[i] else \
            f"{levels.kind} '{raw}' is not a positive number"
        problems.append(_problem(frame, int(i), "Confidence", why, "confidence_cell"))
    notes.append(f"confidence: {levels.describe()}")
    return levels.kind, numbers, levels


def _duplicates_step(frame: pd.DataFrame, problems: list, reports: list, label: str) -> pd.DataFrame:
    a_codes, _ = pd.factorize(frame["assessor"].to_numpy(dtype=object))
    o_codes, _ = pd.factorize(frame["object"].to_numpy(dtype=object))
    key = o_codes.astype(np.int64) * (int(a_codes.max()) + 1 if len(a_codes) else 1) + a_codes
    dup = pd.Series(key).duplicated(keep=False).to_numpy()
    if not dup.any():
        return frame
    has_order = ("round_rank" in frame and frame["round_rank"].notna().any()) or \
        ("time" in frame and frame["time"].notna().any())
    order = _order_key(frame) if has_order else None
    drop = np.zeros(len(frame), dtype=bool)
    why = np.empty(len(frame), dtype=object)
    for _, members in pd.Series(np.flatnonzero(dup)).groupby(key[dup]):
        idx = members.to_numpy()
        if order is not None and np.isfinite(order[idx]).all() and len(set(order[idx])) == len(idx):
            latest = idx[np.argmax(order[idx])]
            for m in idx[idx != latest]:
                drop[m] = True
                why[m] = f"superseded by a later review of the same pair (row {int(frame['row'].iat[latest])})"
            continue
        rows = ", ".join(str(int(frame["row"].iat[m])) for m in idx)
        sheets = sorted({str(frame["sheet"].iat[m]) for m in idx})
        problems.append(Problem("error", sheets[0], str(frame["score_cell"].iat[idx[1]]), int(frame["row"].iat[idx[1]]),
                                "Assessor", f"{label}: assessor {frame['assessor'].iat[idx[0]]} reviewed object "
                                f"{frame['object'].iat[idx[0]]} more than once ({' and '.join(sheets)}, rows {rows}) "
                                "and no round or time column says which is the later; keep one review per pair"))
    if drop.any():
        reports.append(report_frame(frame, drop, why))
    return frame.loc[~drop]


def _order_key(frame: pd.DataFrame) -> np.ndarray:
    """A number ordering records in time: round rank first, then the time stamp (NaN where unknown)."""
    rank = pd.to_numeric(frame["round_rank"], errors="coerce").to_numpy(dtype=float) if "round_rank" in frame \
        else np.zeros(len(frame))
    rank = np.where(np.isnan(rank), 0.0, rank)
    if "time" in frame and frame["time"].notna().any():
        times = frame["time"]
        numeric = pd.to_numeric(times, errors="coerce")
        if numeric.notna().all():
            stamp = numeric.to_numpy(dtype=float)
        else:
            parsed = pd.to_datetime(times.astype(str), errors="coerce", utc=True, format="mixed")
            stamp = (parsed - pd.Timestamp("1970-01-01", tz="UTC")).dt.total_seconds().to_numpy(dtype=float)
        span = np.nanmax(np.abs(stamp)) + 1 if np.isfinite(stamp).any() else 1.0
        return rank * 4 * span + stamp
    return rank if "round_rank" in frame and frame["round_rank"].notna().any() else np.full(len(frame), np.nan)


def _objects_left_out(records: pd.DataFrame, evaluations: pd.DataFrame, reports: list) -> pd.DataFrame:
    """One report line for every object the export names whose every record was left out (withdrawn, all COI,
    every score blank ...): the object lacks from the evaluations table, and says so once, with its records'
    reasons (an object a reader found without any record -- a grid row with no score -- has its own line)."""
    if not len(records) or "object" not in records:
        return pd.DataFrame(columns=REPORT_COLUMNS)
    named = [o for o in pd.unique(_text(records["object"])) if o is not None and o != ""]
    lost = sorted(set(named) - set(evaluations["object"]), key=str)
    if not lost:
        return pd.DataFrame(columns=REPORT_COLUMNS)
    before = pd.concat([r for r in reports if len(r)], ignore_index=True) if any(len(r) for r in reports) else \
        pd.DataFrame(columns=REPORT_COLUMNS)
    said = before.assign(object=_text(before["object"])) if len(before) else before
    why = said.groupby("object")["reason"].agg(lambda s: "; ".join(dict.fromkeys(str(r).split(" (row")[0]
                                                                                    for r in s))) if len(said) else {}
    return pd.DataFrame({"sheet": "", "row": None, "cell": "", "assessor": "", "object": lost,
                         "reason": [f"no score imported for this object ({why.get(o, 'every read left out')})"
                                    for o in lost]}, columns=REPORT_COLUMNS)


def assemble(records: pd.DataFrame, options: Options, reader_reports: list | None = None,
             reader_notes: list | None = None) -> Assembled:
    """Apply the import rules (module docstring) to *records*; raise every error at once."""
    reports: list[pd.DataFrame] = list(reader_reports or [])
    notes: list[str] = list(reader_notes or [])
    problems: list[Problem] = []
    frame = records.reset_index(drop=True)
    for column in ("object", "assessor"):
        frame[column] = _text(frame[column]) if len(frame) else frame[column]
    frame = _status_step(frame, options, reports)
    frame = _round_step(frame, options, reports)
    frame = _cells_step(frame, reports).reset_index(drop=True)
    frame, linked = _identity_step(frame, options, notes)
    numbers, scale = _score_step(frame, options, problems, notes)
    frame = frame.assign(number=numbers)
    _scale_by_group_check(frame, problems, options.label)
    kind, uncertainty, levels = _confidence_step(frame, options, problems, notes)
    frame = frame.assign(uncertainty=uncertainty)
    if not problems:
        frame = _duplicates_step(frame, problems, reports, options.label)
    if problems:
        raise InputProblems(problems, {"sheet": problems[0].sheet})
    if not len(frame):
        raise InputError(f"{options.label}: no score could be imported (see the import report: "
                         f"{sum(len(r) for r in reports):,} rows or cells left out)")
    columns = {"assessor": frame["assessor"].to_numpy(dtype=object), "object": frame["object"].to_numpy(dtype=object),
               "score": frame["number"].to_numpy(dtype=float),
               kind: frame["uncertainty"].to_numpy(dtype=object if kind == "level" else float)}
    for extra in ("group", "round", "title"):
        if extra in frame and frame[extra].notna().any():
            columns[extra] = frame[extra].to_numpy(dtype=object)
    evaluations = pd.DataFrame(columns)
    origin = pd.DataFrame({"sheet": frame["sheet"].to_numpy(dtype=object), "row": frame["row"].to_numpy(),
                           "cell": frame["score_cell"].to_numpy(dtype=object)})
    reports.append(_objects_left_out(records, evaluations, reports))
    report = pd.concat([r for r in reports if len(r)], ignore_index=True) if any(len(r) for r in reports) else \
        pd.DataFrame(columns=REPORT_COLUMNS)
    if len(report):
        reason_codes, reasons = pd.factorize(report["reason"].to_numpy(dtype=object))
        short = np.asarray([r.split(":")[0] if r.startswith("status") else r.split(" (row")[0] for r in reasons],
                           dtype=object)
        summary = pd.Series(short[reason_codes]).value_counts()
        notes.append(f"{len(report):,} row(s), cell(s) or object(s) not imported, listed in the import report: "
                     + "; ".join(f"{n:,} {reason}" for reason, n in summary.head(6).items())
                     + ("; ..." if len(summary) > 6 else ""))
    return Assembled(evaluations, origin, report, notes, scale, levels, linked)
