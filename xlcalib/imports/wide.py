"""One review per row -> records: the step HotCRP, CMT and EasyChair exports share.

The columns are found from the user's :class:`~xlcalib.imports.mapping.ColumnMapping` when it names
them, else from the system's :class:`~xlcalib.imports.mapping.Preset`; what was found is written back
into the mapping (so it can be shown, saved and reused).  A form with several score fields in time order
(``Pre-Response Overall Merit``, ``Post-Rebuttal Overall Merit``) gives each row's latest non-blank score;
a named round picks the field whose name holds it.  Every score cell not used is reported.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..cells import header_key
from ..errors import InputError
from .assemble import REPORT_COLUMNS
from .mapping import ColumnMapping, Preset, find_header, score_columns
from .sheets import Sheet

__all__ = ["Columns", "resolve_columns", "records_from_sheet", "blank_cells"]


@dataclass
class Columns:
    """Positions of the roles in one sheet (score columns in time order; twins: label column -> value column)."""

    object: int
    assessor: list[int]
    score: list[int]
    confidence: int | None = None
    group: int | None = None
    round: int | None = None
    status: int | None = None
    time: list[int] = field(default_factory=list)
    twins: dict[int, int] = field(default_factory=dict)


def blank_cells(values: np.ndarray) -> np.ndarray:
    """Blank mask of an object array (None, NaN, empty or whitespace text), per distinct value."""
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    blank_u = np.asarray([(isinstance(u, str) and not u.strip()) or (isinstance(u, float) and u != u)
                          for u in uniques] + [True], dtype=bool)
    return blank_u[codes] if len(values) else np.zeros(0, dtype=bool)


def _named(sheet: Sheet, names: list[str], role: str, required: bool) -> list[int]:
    found = []
    for name in names:
        j = find_header(sheet.header, [name])
        if j is None and required:
            raise InputError(f"{sheet.label}: the mapping names the {role} column '{name}', which is not in the header "
                             f"row (row {sheet.header_row}: {', '.join(h for h in sheet.header if h)[:300]})")
        if j is not None:
            found.append(j)
    return found


def resolve_columns(sheet: Sheet, mapping: ColumnMapping, preset: Preset, exclude: set[int] = frozenset()) -> Columns:
    """The roles' positions in *sheet*: the mapping's names first, the preset's otherwise; missing roles named."""
    def one(role: str, names) -> int | None:
        given = getattr(mapping, role)
        if given:
            return _named(sheet, [given] if isinstance(given, str) else list(given), role, True)[0]
        return find_header(sheet.header, names) if names else None

    obj = one("object", preset.object)
    assessor = _named(sheet, mapping.assessor, "assessor", True) if mapping.assessor else \
        [j for j in (find_header(sheet.header, [n]) for n in preset.assessor) if j is not None]
    if mapping.score:
        score = _named(sheet, mapping.score, "score", True)
    else:
        candidates = [j for j in score_columns(sheet.header, preset.score_pattern, preset.confidence_pattern)
                      if j not in exclude and j != obj and j not in assessor]
        score = [j for j in candidates if holds_scores(sheet.columns[mapping_twin(sheet, j)])]
    if mapping.confidence:
        confidence = _named(sheet, [mapping.confidence], "confidence", True)[0]
    else:
        confidence = next((j for j, h in enumerate(sheet.header) if j not in exclude and header_key(h)
                           and re.search(preset.confidence_pattern, header_key(h))
                           and holds_scores(sheet.columns[mapping_twin(sheet, j)])), None)
    missing = [role for role, value in (("object", obj), ("assessor", assessor or None), ("score", score or None))
               if value is None]
    if missing:
        looked = {"object": ", ".join(preset.object), "assessor": ", ".join(preset.assessor),
                  "score": f"a field matching /{preset.score_pattern}/"}
        raise InputError(f"{sheet.label}: no {' / '.join(missing)} column found (looked for "
                         + "; ".join(f"{m}: {looked[m]}" for m in missing)
                         + f"); header row {sheet.header_row} holds: {', '.join(h for h in sheet.header if h)[:300]}. "
                         "Name the column in the mapping")
    time = _named(sheet, mapping.time, "time", True) if mapping.time else \
        [j for j in (find_header(sheet.header, [n]) for n in preset.time) if j is not None]
    return Columns(obj, assessor, score, confidence, one("group", preset.group), one("round", preset.round),
                   one("status", preset.status), time, twins=dict(sheet.twins))


def mapping_twin(sheet: Sheet, j: int) -> int:
    """The column holding column *j*'s values: its "- Value" twin when the sheet pairs choice labels with values."""
    return getattr(sheet, "twins", {}).get(j, j)


def holds_scores(values: np.ndarray, probe: int = 200) -> bool:
    """True when (nearly) every filled cell of a column is a number, a grade symbol or a mark: a score field,
    not a text field whose name happens to say "overall" (checked on up to *probe* distinct values)."""
    from ..inputs.values import reads_as_score

    distinct = pd.unique(values[~blank_cells(values)])[:probe]
    if not len(distinct):
        return True
    return sum(map(reads_as_score, distinct)) >= 0.8 * len(distinct)


def _first_nonblank(sheet: Sheet, positions: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the first non-blank value among *positions* and a mask of rows where none is filled."""
    out = np.full(sheet.n, None, dtype=object)
    empty = np.ones(sheet.n, dtype=bool)
    for j in positions:
        col = sheet.columns[j]
        take = empty & ~blank_cells(col)
        out[take] = col[take]
        empty &= ~take
    return out, empty


def write_back(mapping: ColumnMapping, sheet: Sheet, cols: Columns) -> None:
    """Record the header names found for each role in the mapping (to show, save and reuse)."""
    name = lambda j: sheet.header[j] if j is not None else None  # noqa: E731
    mapping.object = mapping.object or name(cols.object)
    mapping.assessor = mapping.assessor or [sheet.header[j] for j in cols.assessor]
    mapping.score = mapping.score or [sheet.header[j] for j in cols.score]
    mapping.confidence = mapping.confidence or name(cols.confidence)
    mapping.round = mapping.round or name(cols.round)
    mapping.status = mapping.status or name(cols.status)
    mapping.time = mapping.time or [sheet.header[j] for j in cols.time]


def _choose_scores(sheet: Sheet, cols: Columns, round_name: str | None, reports: list,
                   objects: np.ndarray, assessors: np.ndarray) -> np.ndarray:
    """Per row, the position (in cols.score) of the score used: the named round's field, else the latest filled."""
    k = len(cols.score)
    filled = np.column_stack([~blank_cells(sheet.columns[cols.twins.get(j, j)]) |
                              ~blank_cells(sheet.columns[j]) for j in cols.score]) if sheet.n else np.zeros((0, k), bool)
    if round_name is not None and k > 1:
        wanted = [i for i, j in enumerate(cols.score) if header_key(round_name) in header_key(sheet.header[j])]
        if len(wanted) != 1:
            raise InputError(f"{sheet.label}: round '{round_name}' should name exactly one of the score fields "
                             f"({'; '.join(sheet.header[j] for j in cols.score)}); it matches {len(wanted)}")
        chosen = np.full(sheet.n, wanted[0], dtype=np.intp)
        reason = f"round not selected (round='{round_name}')"
    else:
        # the latest filled field; a row with none filled reports its last field as blank
        last = k - 1 - np.argmax(filled[:, ::-1], axis=1) if k else np.zeros(sheet.n, dtype=np.intp)
        chosen = np.where(filled.any(axis=1), last, k - 1).astype(np.intp)
        reason = None
    for i, j in enumerate(cols.score):
        unused = filled[:, i] & (chosen != i)
        if not unused.any():
            continue
        by_field = np.asarray([f"superseded by the later field '{' '.join(str(sheet.header[c]).split())}'"
                               for c in cols.score], dtype=object)
        why = reason if reason else by_field[chosen[unused]]
        rows = sheet.row_of(j)[unused]
        reports.append(pd.DataFrame({"sheet": sheet.name, "row": rows, "cell": sheet.cells(cols.twins.get(j, j), unused),
                                     "assessor": assessors[unused], "object": objects[unused], "reason": why},
                                    columns=REPORT_COLUMNS))
    return chosen


def records_from_sheet(sheet: Sheet, cols: Columns, *, round_name: str | None = None, group=None,
                       round_label=None, round_rank=None) -> tuple[pd.DataFrame, list]:
    """Records (see :mod:`xlcalib.imports.assemble`) of a one-review-per-row sheet, and the unused-score reports."""
    reports: list[pd.DataFrame] = []
    objects = sheet.columns[cols.object]
    assessors, _ = _first_nonblank(sheet, cols.assessor)
    chosen = _choose_scores(sheet, cols, round_name, reports, objects, assessors)
    n = sheet.n
    score = np.empty(n, dtype=object)
    label = np.full(n, None, dtype=object)
    cells = np.empty(n, dtype=object)
    rows = np.empty(n, dtype=np.intp)
    fields = np.empty(n, dtype=object)
    for i, j in enumerate(cols.score):
        take = chosen == i
        source = cols.twins.get(j, j)
        score[take] = sheet.columns[source][take]
        if source != j:  # a choice question: the label beside its value
            label[take] = sheet.columns[j][take]
            empty_value = take & blank_cells(sheet.columns[source]) & ~blank_cells(sheet.columns[j])
            score[empty_value] = sheet.columns[j][empty_value]  # no value twin: read the label itself
        cells[take] = sheet.cells(source, take)
        rows[take] = sheet.row_of(source)[take]
        fields[take] = " ".join(str(sheet.header[j]).split())
    frame = {"object": objects, "assessor": assessors, "score": score, "score_cell": cells, "sheet": sheet.name,
             "row": rows, "field": fields, "label": label}
    if cols.confidence is not None:
        source = cols.twins.get(cols.confidence, cols.confidence)
        conf = sheet.columns[source].copy()
        empty_value = blank_cells(conf) & ~blank_cells(sheet.columns[cols.confidence])
        conf[empty_value] = sheet.columns[cols.confidence][empty_value]
        frame["confidence"], frame["confidence_cell"] = conf, sheet.cells(source)
    for role, value in (("group", group), ("round", round_label), ("round_rank", round_rank)):
        if value is not None:
            frame[role] = value
    if cols.group is not None:
        frame["group"] = sheet.columns[cols.group]
    if cols.round is not None:
        frame["round"] = sheet.columns[cols.round]
    if cols.status is not None:
        frame["status"] = sheet.columns[cols.status]
    if cols.time:
        parts = [pd.Series(sheet.columns[j], dtype=object).fillna("").astype(str) for j in cols.time]
        joined = parts[0]
        for part in parts[1:]:
            joined = joined + " " + part
        joined = joined.str.strip()
        frame["time"] = joined.where(joined != "", None).to_numpy(dtype=object)
    return pd.DataFrame(frame), reports
