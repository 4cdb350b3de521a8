"""Funders' and chairs' grids: one row per object, its scores across the row -- read as people lay them out.

Layouts read (a funder's or a chair's own spreadsheet, so no single documented format; these are the common ones):

* one row per object, its id in a column of (nearly) all different values -- the column the mapping names, one
  headed like an id (proposal, paper, ID ...), else the first such column -- and one column per assessor (the
  header holds the assessor's name); cells hold numbers or letter grades (``A, AB, B, BC, C, D`` -- read on the
  declared scale, or one inferred with A best and reported); ``COI`` / ``N/A`` mark a cell with no evaluation
  (listed in the report), a blank cell is an assessor not assigned (counted in a note, not listed cell by cell);
* **columns describing the object**, anywhere in the row: text that is not on any scale (a title, an applicant's
  name, a panel or subject) or a header saying so (Title, Applicant, Panel, Subject ...).  They are kept as the
  object's attributes, never read as scores: the title is shown on the Ranking, a panel or subject becomes the
  object's group; figures computed from the scores (a mean, a total, a rank) are left out and said so;
* **review slots**: columns R1 ... R6 (or 0 ... 5, Review 1 ...) holding each row's reviews from the left, 3-6 per
  row -- how public conference data and many chairs' sheets are laid out.  The columns are then not people: each
  cell is a review by a reviewer of that object alone (named ``<object>/<column>``), so no reviewer links two
  objects (the calibration takes their stringency as part of the noise).  Detected when every row is filled from
  the left, the rows are ragged, and the headers are slot-like or the first column holds more reads than a person
  makes; ``--slots`` / ``--people`` (the mapping's ``grid columns``, the Import sheet's *Grid columns*) force either;
* a weight or confidence column beside each assessor's: ``Dr Lee | Dr Lee weight`` (or ``Dr Lee |
  confidence``): the second column is that assessor's confidence;
* one block of columns per criterion: a row above the assessors' names names the criterion of each
  block (written once, over merged cells, or in every column); the mapping's score names the criterion
  used, else the one called overall/total, else the import asks.

Every object the grid names without a score (a row whose score cells are all blank: not yet reviewed, withdrawn)
is listed in the import report.  The roles found -- object, assessors, title, group, other attributes, how the
columns were read -- are written into the mapping, shown and saved, so the next import of the layout needs no
question.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..cells import header_key
from ..errors import InputError
from .assemble import REPORT_COLUMNS
from .mapping import PRESETS, ColumnMapping, columns_reading, find_header
from .sheets import Sheet
from ..inputs.values import ConfidenceLevels, leading_number
from .wide import blank_cells

__all__ = ["read_grid", "looks_like_grid", "GRID_SHAPE", "PERSON_LOAD"]

_CONF_WORDS = r"\b(weight|weights|confidence|conf\.?|certainty|sd|expertise)\b"
#: Header words of a column that describes the object (kept as its attribute, never read as scores).
_LABEL_WORDS = (r"\b(title|name|names|applicant|applicants|author|authors|pi|investigator|institution|organisation|"
                r"organization|university|department|country|panel|subject|subjects|topic|topics|area|track|field|"
                r"discipline|category|keywords?|theme|programme|program|call|type|abstract|summary|description|notes?|"
                r"comments?|remarks?|status|decision|email|e-mail|url|link|date)\b")
#: ... of those, the column that makes the object's group (a panel, a subject, a track).
_GROUP_WORDS = r"\b(panel|subject|subjects|topic|area|track|field|discipline|category|theme|programme|program|call)\b"
#: ... and the title, shown on the Ranking.
_TITLE_WORDS = r"\b(title|name)\b"
#: Header words of a figure computed from the scores: never an assessor, left out and said.
_DERIVED_WORDS = r"\b(mean|average|avg|median|total|sum|rank|ranking|std|stdev|variance|count)\b"
#: Headers of review slots: R1, Rev 2, Review 3, Reviewer #4, Score 5, Rating 6, 0, 1 ...
_SLOT = re.compile(r"^(r|rev|review|reviewer|reader|referee|rater|score|rating|grade|s|#)?\s*#?\s*\d{1,2}$")
#: Header words of an object's id column (after the preset's own names).
_ID_WORDS = ("ref", "reference", "no", "no.", "number", "#", "code", "key", "submission", "proposal id",
             "application id", "paper id", "project id", "object id")
#: A column whose distinct values are mostly not scores (under this share) describes the object: a title, a name.  A
#: column of scores with a typo in it stays a column of scores, and the typo is an error naming its cell.
LABEL_SHARE = 0.5
#: A column is the objects' ids when at least this share of its filled values differ from each other.
UNIQUE_IDS = 0.9
#: More reads than a person makes in one call or conference: a column filled this often is not a person's.
PERSON_LOAD = 100
#: What a grid is, for the refusal of an unknown layout.
GRID_SHAPE = ("a grid: one row per object with a column of (nearly) all different ids, and columns of scores -- one "
              "per assessor, or review slots R1, R2 ... filled from the left")
_DATE = re.compile(r"^\s*\d{4}-\d{1,2}-\d{1,2}|^\s*\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b")


def _filled(values: np.ndarray) -> np.ndarray:
    return values[~blank_cells(values)]


def _ids_unique(values: np.ndarray) -> bool:
    """(Nearly) every filled value different, and not measurements: ids are text or whole numbers."""
    filled = _filled(values)
    if not len(filled) or len(pd.unique(filled.astype(str))) < UNIQUE_IDS * len(filled):
        return False
    numbers = [leading_number(v) for v in pd.unique(filled)[:200]]
    return not (all(x is not None for x in numbers) and any(not float(x).is_integer() for x in numbers))


def _object_column(sheet: Sheet, mapping: ColumnMapping) -> int | None:
    """The objects' id column: the mapping's, one headed like an id, else the first whose values (nearly) all
    differ; None when no column can be one (not a grid)."""
    if mapping.object:
        j = find_header(sheet.header, [mapping.object])
        if j is None:
            raise InputError(f"{sheet.label}: the mapping names the object column '{mapping.object}', which is not in "
                             f"the header row ({', '.join(h for h in sheet.header if h)[:300]})")
        return j
    named = find_header(sheet.header, [*PRESETS["grid"].object, *_ID_WORDS])
    if named is not None and _ids_unique(sheet.columns[named]):
        return named
    return next((j for j in range(len(sheet.header)) if sheet.header[j].strip() and _ids_unique(sheet.columns[j])
                 and not re.search(_DERIVED_WORDS, header_key(sheet.header[j]))), None)


def _dated(values: np.ndarray) -> bool:
    """Dates (cells or text such as 2024-03-01): a leading number would read as a score, but a date is no score."""
    distinct = pd.unique(_filled(values))[:50]
    return bool(len(distinct)) and sum(hasattr(v, "year") or (isinstance(v, str) and bool(_DATE.match(v)))
                                       for v in distinct) >= 0.8 * len(distinct)


def column_role(header: str, values: np.ndarray) -> str:
    """``"label"`` (describes the object), ``"derived"`` (a figure computed from the scores) or ``"score"``.

    >>> column_role("Title", np.array(["On tea", "On cake"], dtype=object)), column_role("Dr Lee", np.array([3, 4]))
    ('label', 'score')
    >>> column_role("Human (mean)", np.array([6.3, 7.1])), column_role("Notes", np.array(["4", "5"], dtype=object))
    ('derived', 'label')
    """
    key = header_key(header)
    if re.search(_DERIVED_WORDS, key):
        return "derived"
    if re.search(_LABEL_WORDS, key) or _dated(values) or _score_share(values) < LABEL_SHARE:
        return "label"
    return "score"


def _score_share(values: np.ndarray, probe: int = 200) -> float:
    """The share of a column's distinct filled values that read as scores (numbers, grade symbols, COI/N/A marks)."""
    from ..inputs.values import reads_as_score

    distinct = pd.unique(_filled(values))[:probe]
    if not len(distinct):
        return 1.0
    return sum(map(reads_as_score, distinct)) / len(distinct)


#: Fewer filled scores than this in a column: it cannot show how far its scale reaches (a reviewer with one or
#: two papers), so it takes no part in the test for a gap between scales.
MIN_SCORES_FOR_GAPS = 5


def _one_scale(columns: list[np.ndarray]) -> bool:
    """Whether score columns can share one scale: the numeric ranges of the columns with at least
    :data:`MIN_SCORES_FOR_GAPS` scores, sorted, leave no gap wider than a quarter of the whole span and than the
    widest of them (a temperature and a humidity column do; two assessors' 1-9 scores do not).  Columns of a few
    scores cover too little of their scale to show a gap: with fewer than two columns left the test passes."""
    ranges = []
    for values in columns:
        codes, distinct = pd.factorize(_filled(values), use_na_sentinel=False)  # each distinct value read once
        numbers = np.array([x if x is not None else np.nan for x in map(leading_number, distinct)], dtype=float)
        counted = np.isfinite(numbers)
        if counted.any() and int(np.bincount(codes, minlength=distinct.size)[counted].sum()) >= MIN_SCORES_FOR_GAPS:
            ranges.append((float(numbers[counted].min()), float(numbers[counted].max())))
    if len(ranges) < 2:
        return True
    ranges.sort()
    span = max(hi for _, hi in ranges) - ranges[0][0]
    widest = max(hi - lo for lo, hi in ranges)  # how far one column's own scores reach
    reach = ranges[0][1]
    for lo, hi in ranges[1:]:
        if lo - reach > max(0.25 * span, widest):
            return False
        reach = max(reach, hi)
    return True


def looks_like_grid(sheet: Sheet) -> bool:
    """One row per object -- a column of (nearly) all different ids, left of the scores -- and columns of scores on
    one scale (a confidence beside an assessor's aside); other columns may describe the object (a title, a
    subject) or be figures computed from the scores.  A table of measurements (station, date, temperature,
    humidity) is none: no id column stands left of its numbers, and its numbers share no scale."""
    if len(sheet.header) < 2 or not sheet.n:
        return False
    obj = _object_column(sheet, ColumnMapping())
    if obj is None:
        return False
    scores = [j for j in range(len(sheet.header))
              if j != obj and sheet.header[j].strip() and not blank_cells(sheet.columns[j]).all()
              and column_role(sheet.header[j], sheet.columns[j]) == "score"
              and not re.search(_CONF_WORDS, header_key(sheet.header[j]))]
    return bool(scores) and obj < min(scores) and _one_scale([sheet.columns[j] for j in scores])


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


def _choose_criterion(sheet: Sheet, criteria: list[str], columns: list[int], mapping: ColumnMapping,
                      round_name, notes: list) -> list[int]:
    """The columns of the criterion to calibrate, when the grid has one block of columns per criterion."""
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
    mapping.score = [chosen[0]]
    notes.append(f"grid with one block per criterion ({', '.join(names)}): criterion '{chosen[0]}' used")
    return [j for j in columns if criteria[j] == chosen[0]]


def _slot_evidence(sheet: Sheet, scores: list[int]) -> str:
    """Why the score columns are review slots ('' when they are not): every row filled from the left, rows of
    different lengths, and slot-like headers or a first column read more often than a person reads."""
    if len(scores) < 2 or not sheet.n:
        return ""
    filled = np.column_stack([~blank_cells(sheet.columns[j]) for j in scores])
    counts = filled.sum(axis=1)
    used = counts > 0
    packed = np.all(filled[used] == (np.arange(len(scores))[None, :] < counts[used][:, None]))
    if not packed or used.sum() < 2 or counts[used].min() == counts[used].max():
        return ""
    named = all(_SLOT.match(header_key(sheet.header[j])) for j in scores)
    busy = int(filled[:, 0].sum()) > PERSON_LOAD
    if not (named or busy):
        return ""
    why = "slot-like headers" if named else f"the first column holds {int(filled[:, 0].sum()):,} reads, more than a person makes"
    return (f"every row filled from the left with {counts[used].min()}-{counts[used].max()} reads, and {why}")


def _attributes(sheet: Sheet, labels: list[int], mapping: ColumnMapping) -> dict[str, int]:
    """Which label column is the title and which the group (the mapping's, else by header words); written back."""
    def pick(role: str, words: str) -> int | None:
        given = getattr(mapping, role)
        if given:
            j = find_header(sheet.header, [given])
            if j is None:
                raise InputError(f"{sheet.label}: the mapping names the {role} column '{given}', which is not in the "
                                 f"header row ({', '.join(h for h in sheet.header if h)[:300]})")
            return j
        return next((j for j in labels if re.search(words, header_key(sheet.header[j]))), None)

    found = {role: j for role, j in (("title", pick("title", _TITLE_WORDS)), ("group", pick("group", _GROUP_WORDS)))
             if j is not None}
    mapping.title = sheet.header[found["title"]] if "title" in found else None
    mapping.group = sheet.header[found["group"]] if "group" in found else None
    mapping.labels = [sheet.header[j] for j in labels if j not in found.values()]
    return found


def _unscored_rows(sheet: Sheet, obj: int, scores: list[int], twins: dict[int, int]) -> pd.DataFrame:
    """The report's line for every object the grid names whose score cells are all blank."""
    any_filled = np.zeros(sheet.n, dtype=bool)
    for j in scores:
        any_filled |= ~blank_cells(sheet.columns[j])
        if j in twins:
            any_filled |= ~blank_cells(sheet.columns[twins[j]])
    ids = sheet.columns[obj]
    lost = ~any_filled & ~blank_cells(ids)
    return pd.DataFrame({"sheet": sheet.name, "row": sheet.rows[lost], "cell": sheet.cells(obj, lost), "assessor": "",
                         "object": ids[lost], "reason": "no score in any of its columns (not reviewed yet, "
                                                        "withdrawn?)"}, columns=REPORT_COLUMNS)


def _roles(sheet: Sheet, columns: list[int], notes: list) -> tuple[list[int], list[int]]:
    """(score columns, label columns); figures computed from the scores are left out and named in a note."""
    roles = {j: column_role(sheet.header[j], sheet.columns[j]) for j in columns}
    derived = [sheet.header[j] for j in columns if roles[j] == "derived"]
    if derived:
        notes.append(f"column(s) {', '.join(derived)} hold figures computed from the scores (a mean, a total, a "
                     "rank): left out")
    return [j for j in columns if roles[j] == "score"], [j for j in columns if roles[j] == "label"]


def _reading(sheet: Sheet, scores: list[int], mapping: ColumnMapping, notes: list) -> bool:
    """Whether the score columns are review slots (forced by the mapping, or detected); said in a note."""
    forced = columns_reading(mapping.columns_are, "the mapping's grid columns")
    evidence = _slot_evidence(sheet, scores) if forced is None else ""
    slots = forced == "review slots" or (forced is None and bool(evidence))
    mapping.columns_are = "review slots" if slots else "people"
    heads = ", ".join(sheet.header[j] for j in scores[:8]) + (" ..." if len(scores) > 8 else "")
    if slots:
        notes.append(f"grid columns read as review slots, not people ({heads}"
                     + (f": {evidence}" if evidence else ", as asked") + "): each cell is a review by a reviewer of "
                     "that object alone, named <object>/<column> (--people reads the columns as people)")
    else:
        notes.append(f"grid columns read as people, one assessor each ({heads})"
                     + (" (--slots reads them as review slots)" if forced is None else ", as asked"))
    return slots


def read_grid(sheets: list[Sheet], mapping: ColumnMapping, round_name: str | None):
    """Records of an objects x assessors (or x review slots) grid; returns (records, reports, notes, anonymous)."""
    grids = [s for s in sheets if looks_like_grid(s)] or sheets[:1]
    if not grids:
        raise InputError("the grid workbook has no sheet with data")
    criteria, sheet = _criteria(grids[0])
    obj = _object_column(sheet, mapping)
    if obj is None:
        raise InputError(f"{sheet.label}: no column holds one id per row ({GRID_SHAPE}); name the object column "
                         "in the mapping (object)")
    _refuse_repeated_ids(sheet, obj)
    columns = [j for j in range(len(sheet.header)) if j != obj and sheet.header[j].strip()]
    notes: list[str] = []
    if criteria:
        columns = _choose_criterion(sheet, criteria, columns, mapping, round_name, notes)
    if mapping.assessor:  # the columns named are the assessors, whatever they hold
        keep = {header_key(a) for a in mapping.assessor}
        candidates = [j for j in columns if header_key(sheet.header[j]) in keep]
        labels = [j for j in columns if j not in candidates and column_role(sheet.header[j], sheet.columns[j]) == "label"]
    else:
        candidates, labels = _roles(sheet, columns, notes)
    scores, twins = _pairs(sheet.header, candidates)
    if not scores:
        raise InputError(f"{sheet.label}: no column of scores beside the object column '{sheet.header[obj]}' (the "
                         "other columns hold text or figures computed from scores); name the assessors' columns in "
                         "the mapping (assessor)")
    found = _attributes(sheet, labels, mapping)
    slots = _reading(sheet, scores, mapping, notes)
    mapping.object = sheet.header[obj]
    mapping.assessor = mapping.assessor or [sheet.header[j] for j in scores]
    _confidence_twins(sheet, twins, mapping, notes)
    records, blank_total = _records(sheet, obj, scores, twins, found, slots)
    unscored = _unscored_rows(sheet, obj, scores, twins)
    kept = [sheet.header[j] for j in labels]
    if kept:
        notes.append(f"column(s) {', '.join(kept)} describe the objects (kept as their attributes"
                     + (f"; '{mapping.title}' shown on the Ranking" if mapping.title else "")
                     + (f"; '{mapping.group}' is each object's group" if mapping.group else "") + ")")
    notes.insert(0, f"grid read from {sheet.label}: {len(scores)} {'review slot' if slots else 'assessor'} column(s) "
                    f"x {sheet.n} row(s); {blank_total:,} blank cell(s) = "
                    f"{'no review in that slot' if slots else 'not assigned'} (not listed)")
    return records, [unscored], notes, slots


def _refuse_repeated_ids(sheet: Sheet, obj: int) -> None:
    """An object named in two rows of a grid is one error naming its rows (not one per assessor column)."""
    ids = pd.Series([_id_text(v) for v in sheet.columns[obj]])
    filled = ~blank_cells(sheet.columns[obj])
    twice = ids[filled & ids.duplicated(keep=False).to_numpy()]
    if not len(twice):
        return
    lines = [f"{v} (rows {', '.join(str(int(sheet.rows[i])) for i in idx)})"
             for v, idx in twice.groupby(twice, sort=False).groups.items()]
    more = f" and {len(lines) - 5} more" if len(lines) > 5 else ""
    raise InputError(f"{sheet.label}: the grid names {len(lines)} object(s) in more than one row: "
                     f"{'; '.join(lines[:5])}{more}; keep one row per object (or rename one)",
                     {"sheet": sheet.name, "sheet_row": int(sheet.rows[twice.index[1]])})


def _confidence_twins(sheet: Sheet, twins: dict[int, int], mapping: ColumnMapping, notes: list) -> None:
    if not twins:
        return
    words = " ".join(header_key(sheet.header[t]) for t in twins.values())
    mapping.confidence = mapping.confidence or "the column beside each assessor's"
    if mapping.confidence_levels is None and re.search(r"\bweights?\b|\bsd\b", words):
        kind = "sd" if re.search(r"\bsd\b", words) else "confidence"
        mapping.confidence_levels = ConfidenceLevels({}, kind, "as written")
    notes.append(f"{len(twins)} assessor(s) have a weight or confidence column beside their scores")


def _records(sheet: Sheet, obj: int, scores: list[int], twins: dict[int, int], found: dict[str, int],
             slots: bool) -> tuple[pd.DataFrame, int]:
    """One record per filled score cell (a slot's reviewer named <object>/<column>), with the object's title and
    group; and the number of blank score cells."""
    objects = sheet.columns[obj]
    frames = []
    blank_total = 0
    for j in scores:
        values = sheet.columns[j]
        conf_j = twins.get(j)
        conf = sheet.columns[conf_j] if conf_j is not None else None
        filled = ~blank_cells(values) | (~blank_cells(conf) if conf is not None else False)
        filled &= ~blank_cells(objects)
        blank_total += int((~filled).sum())
        ids = objects[filled]
        assessor = (np.asarray([f"{_id_text(o)}/{sheet.header[j]}" for o in ids], dtype=object) if slots
                    else sheet.header[j])
        part = {"object": ids, "assessor": assessor, "score": values[filled], "score_cell": sheet.cells(j, filled),
                "sheet": sheet.name, "row": sheet.rows[filled]}
        for role, k in found.items():
            part[role] = sheet.columns[k][filled]
        if conf is not None:
            part["confidence"], part["confidence_cell"] = conf[filled], sheet.cells(conf_j, filled)
        frames.append(pd.DataFrame(part))
    records = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["object", "assessor", "score", "score_cell", "sheet", "row"])
    if "confidence" in records and twins and len(twins) < len(scores):
        records["confidence"] = records["confidence"].where(records["confidence"].notna(), None)
    return records, blank_total


def _id_text(value) -> str:
    """An id as text, as the import writes it (a whole number without '.0')."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()
