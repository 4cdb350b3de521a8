"""Microsoft CMT: "Export to Excel > Reviews" (XML Spreadsheet 2003, or the same re-saved as .xlsx).

Shape (verified on a public CMT export): one worksheet per track, named after it; row 1 holds the track
name, row 2 is empty, row 3 is the header: ``Paper ID, Paper Title, Reviewer Name, Reviewer Email,
Reviewer Number, Created, Last Modified``, then per question a column ``Qn (question text)`` and, for a
choice question, its twin ``Qn (question text - Value)`` holding the number behind the chosen label
("Accept: Good paper" beside 5).  Headers keep the line breaks of the question text.  Revision rounds
come on sheets of their own (a track whose name ends in "Revision").

The score is read from the value twin (the label is kept to check that tracks share one scale); the
assessor is the reviewer's email (else name); ``Last Modified`` orders two reviews of one pair.
"""
from __future__ import annotations

import re

import pandas as pd

from ..cells import header_key
from ..errors import InputError
from .mapping import PRESETS, ColumnMapping, find_header
from .sheets import Sheet
from .wide import records_from_sheet, resolve_columns, write_back

__all__ = ["read_cmt", "is_cmt", "pair_value_columns"]

_QUESTION = re.compile(r"^q(\d+)\s*\((.*)\)$", re.S)


def is_cmt(sheet: Sheet) -> bool:
    normed = {header_key(h) for h in sheet.header}
    return "paper id" in normed and ("reviewer email" in normed or "reviewer name" in normed)


def pair_value_columns(sheet: Sheet) -> Sheet:
    """Pair each ``Qn (text)`` with its ``Qn (text - Value)``; the value columns leave the header's roles."""
    labels: dict[str, int] = {}
    values: dict[str, int] = {}
    for j, h in enumerate(sheet.header):
        match = _QUESTION.match(header_key(h))
        if not match:
            continue
        number, text = match.groups()
        (values if re.search(r"-\s*value$", text) else labels)[number] = j
    sheet.twins = {labels[q]: values[q] for q in values if q in labels}
    return sheet


def _track(sheet: Sheet) -> str:
    return sheet.above[0] if sheet.above else sheet.name


def read_cmt(sheets: list[Sheet], mapping: ColumnMapping, round_name: str | None):
    """Records of a CMT review export (every track sheet); returns (records, reports, notes, anonymous)."""
    preset = PRESETS["cmt"]
    usable = [pair_value_columns(s) for s in sheets if is_cmt(s)]
    if not usable:
        raise InputError("no sheet of the CMT export has a header row with Paper ID and Reviewer Email (row 3 in "
                         f"CMT's export); sheets: {', '.join(s.name for s in sheets) or 'none'}")
    frames, reports, notes = [], [], []
    revisions = [s for s in usable if _track(s).strip().lower().endswith("revision")]
    tracks = {_track(s) for s in usable}
    for sheet in usable:
        value_columns = set(sheet.twins.values())
        exclude = value_columns | {j for j in (find_header(sheet.header, [n]) for n in ("paper title", "reviewer number",
                                                                                         "created")) if j is not None}
        sheet_mapping = ColumnMapping(**{**mapping.__dict__, "score": list(mapping.score), "assessor":
                                         list(mapping.assessor), "time": list(mapping.time)})
        cols = resolve_columns(sheet, sheet_mapping, preset, exclude)
        if len(cols.score) > 1 and not mapping.score:
            raise InputError(f"{sheet.label}: several questions look like the score ("
                             + "; ".join(" ".join(sheet.header[j].split())[:60] for j in cols.score)
                             + "); name the one to use in the mapping (score)")
        if sheet is usable[0]:
            write_back(mapping, sheet, cols)
        is_revision = sheet in revisions
        records, sheet_reports = records_from_sheet(
            sheet, cols, group=_track(sheet).removesuffix(" Revision").strip() if len(tracks) > 1 else None,
            round_label=("revision" if is_revision else "original") if revisions else None,
            round_rank=(1.0 if is_revision else 0.0) if revisions else None)
        frames.append(records)
        reports += sheet_reports
    if len(tracks) > 1:
        notes.append(f"{len(tracks)} CMT tracks read ({', '.join(sorted(tracks))}); the track is the group")
    if revisions:
        notes.append("revision-round sheets found (" + ", ".join(_track(s) for s in revisions) + "): a reviewer's "
                     "revision review replaces their original one of the same Paper ID; CMT may number revised papers "
                     "anew, and those are imported as objects of their own (name a round to import one round only)")
    records = pd.concat(frames, ignore_index=True)
    if "round" in records and round_name is None:
        records["round"] = records["round"].where(records["round"].notna(), None)
    return records, reports, notes, False
