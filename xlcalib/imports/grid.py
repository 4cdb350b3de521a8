"""Funders' grids: proposals x assessors, one cell per assessor's grade of a proposal.

Layouts read (a funder's own spreadsheet, so no single documented format; these are the common ones):

* one row per proposal (its id in the first column, or the column the mapping names as object), one
  column per assessor (the header holds the assessor's name); cells hold numbers or letter grades
  (``A, AB, B, BC, C, D`` -- read on the declared scale, or one inferred with A best and reported);
  ``COI`` / ``N/A`` mark a cell with no evaluation (listed in the report), a blank cell is an assessor
  not assigned (counted in a note, not listed cell by cell);
* a weight or confidence column beside each assessor's: ``Dr Lee | Dr Lee weight`` (or ``Dr Lee |
  confidence``): the second column is that assessor's confidence;
* one block of columns per criterion: a row above the assessors' names names the criterion of each
  block (written once, over merged cells, or in every column); the mapping's score names the criterion
  used, else the one called overall/total, else the import asks.
"""
from __future__ import annotations

import re

import pandas as pd

from ..cells import header_key
from ..errors import InputError
from .mapping import PRESETS, ColumnMapping, find_header
from .sheets import Sheet
from .values import ConfidenceLevels
from .wide import blank_cells

__all__ = ["read_grid", "looks_like_grid"]

_CONF_WORDS = r"\b(weight|weights|confidence|conf\.?|certainty|sd|expertise)\b"


def looks_like_grid(sheet: Sheet) -> bool:
    """A first column of ids and further columns that mostly hold scores, grades, marks or blanks."""
    from .wide import holds_scores

    if len(sheet.header) < 2 or not sheet.n:
        return False
    filled = [j for j in range(1, len(sheet.header)) if not blank_cells(sheet.columns[j]).all()]
    return bool(filled) and sum(holds_scores(sheet.columns[j]) for j in filled) >= 0.8 * len(filled)


def _criteria(sheet: Sheet) -> tuple[list[str], Sheet]:
    """Each column's criterion (forward-filled) when the sheet has a criterion row, and the sheet whose header
    is the assessors' row."""
    if sheet.above_rows:
        top = sheet.above_rows[-1]
        if sum(1 for c in top[1:] if c is not None and str(c).strip()) >= 1:
            return _ffill(top), sheet
    if sheet.n and blank_cells(sheet.columns[0][:1]).all():
        second = [c[0] for c in sheet.columns]
        texts = [c for c in second[1:] if c is not None and str(c).strip()]
        from .values import leading_number

        if texts and all(leading_number(t) is None for t in texts):
            criteria = _ffill(sheet.header)
            header = ["" if c is None else str(c) for c in second]
            header[0] = sheet.header[0]
            lower = Sheet(sheet.name, header, [c[1:] for c in sheet.columns], sheet.rows[1:], sheet.column_numbers,
                          int(sheet.rows[0]), sheet.above, sheet.label)
            return criteria, lower
    return [], sheet


def _ffill(row: list) -> list[str]:
    out, last = [], ""
    for c in row:
        if c is not None and str(c).strip():
            last = str(c).strip()
        out.append(last)
    return out


def _pairs(header: list[str], columns: list[int]) -> tuple[list[int], dict[int, int]]:
    """Score columns and their confidence twins: 'Name weight' beside 'Name', or a bare 'weight' after a score."""
    names = {header_key(header[j]): j for j in columns}
    scores, twins = [], {}
    for pos, j in enumerate(columns):
        h = header_key(header[j])
        if re.search(_CONF_WORDS, h):
            base = re.sub(r"[\s()\[\]:,_-]+$", "", re.sub(_CONF_WORDS, "", h)).strip(" ()[]:-_,")
            if base and base in names and names[base] != j:
                twins[names[base]] = j
                continue
            if not base and pos > 0 and columns[pos - 1] in scores:
                twins[columns[pos - 1]] = j
                continue
        scores.append(j)
    return scores, twins


def read_grid(sheets: list[Sheet], mapping: ColumnMapping, round_name: str | None):
    """Records of a proposals x assessors grid; returns (records, reports, notes, anonymous)."""
    grids = [s for s in sheets if looks_like_grid(s)] or sheets[:1]
    if not grids:
        raise InputError("the grid workbook has no sheet with data")
    sheet = grids[0]
    criteria, sheet = _criteria(sheet)
    preset = PRESETS["grid"]
    obj = find_header(sheet.header, [mapping.object]) if mapping.object else (find_header(sheet.header, preset.object)
                                                                               or 0)
    if obj is None:
        raise InputError(f"{sheet.label}: the mapping names the object column '{mapping.object}', which is not in "
                         f"the header row ({', '.join(h for h in sheet.header if h)[:300]})")
    columns = [j for j in range(len(sheet.header)) if j != obj and sheet.header[j].strip()]
    notes = []
    if criteria:
        names = list(dict.fromkeys(criteria[j] for j in columns if criteria[j]))
        wanted = mapping.score[0] if mapping.score else round_name
        if wanted is None:
            overall = [c for c in names if re.search(r"overall|total|score|merit", c.lower())]
            if len(overall) != 1:
                raise InputError(f"{sheet.label}: the grid has one block of columns per criterion ({', '.join(names)}); "
                                 "name the criterion to calibrate in the mapping (score)")
            wanted = overall[0]
        chosen = [c for c in names if header_key(c) == header_key(wanted)]
        if not chosen:
            raise InputError(f"{sheet.label}: no criterion '{wanted}' (criteria: {', '.join(names)})")
        columns = [j for j in columns if criteria[j] == chosen[0]]
        mapping.score = [chosen[0]]
        notes.append(f"grid with one block per criterion ({', '.join(names)}): criterion '{chosen[0]}' used")
    scores, twins = _pairs(sheet.header, columns)
    if mapping.assessor:
        keep = {header_key(a) for a in mapping.assessor}
        scores = [j for j in scores if header_key(sheet.header[j]) in keep]
    mapping.object = sheet.header[obj]
    mapping.assessor = mapping.assessor or [sheet.header[j] for j in scores]
    if twins:
        words = " ".join(header_key(sheet.header[t]) for t in twins.values())
        mapping.confidence = mapping.confidence or "the column beside each assessor's"
        if mapping.confidence_levels is None and re.search(r"\bweights?\b|\bsd\b", words):
            kind = "sd" if re.search(r"\bsd\b", words) else "confidence"
            mapping.confidence_levels = ConfidenceLevels({}, kind, "as written")
        notes.append(f"{len(twins)} assessor(s) have a weight or confidence column beside their scores")
    objects = sheet.columns[obj]
    frames = []
    blank_total = 0
    for j in scores:
        values = sheet.columns[j]
        conf_j = twins.get(j)
        conf = sheet.columns[conf_j] if conf_j is not None else None
        filled = ~blank_cells(values) | (~blank_cells(conf) if conf is not None else False)
        blank_total += int((~filled).sum())
        part = {"object": objects[filled], "assessor": sheet.header[j], "score": values[filled],
                "score_cell": sheet.cells(j, filled), "sheet": sheet.name, "row": sheet.rows[filled]}
        if conf is not None:
            part["confidence"], part["confidence_cell"] = conf[filled], sheet.cells(conf_j, filled)
        frames.append(pd.DataFrame(part))
    records = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["object", "assessor", "score", "score_cell", "sheet", "row"])
    if "confidence" in records and twins and len(twins) < len(scores):
        records["confidence"] = records["confidence"].where(records["confidence"].notna(), None)
    notes.insert(0, f"grid read from {sheet.label}: {len(scores)} assessor column(s) x {sheet.n} row(s); "
                    f"{blank_total:,} blank cell(s) = not assigned (not listed)")
    return records, [], notes, False
