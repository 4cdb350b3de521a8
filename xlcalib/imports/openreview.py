"""OpenReview: review notes as JSON -- what openreview-py returns, saved with ``json.dump``.

Accepted shapes (API 2 notes, as ``openreview.api.Note.to_json()`` writes them, and API 1 notes):

* a list of review notes, or ``{"notes": [...]}`` (the REST answer);
* submissions fetched with ``details='replies'``: each submission's ``details.replies`` holds its
  reviews (and the submission's ``content.venueid`` says whether it was withdrawn or desk-rejected);
* Python objects with ``to_json()`` (``openreview.api.Note``) passed directly.

A review is a note whose invitation ends in ``/-/Official_Review`` (API 2: ``invitations``, a list;
API 1: ``invitation``); ``forum`` is the submission; the signature ``.../Submission12/Reviewer_AbC1``
(API 1: ``.../Paper12/AnonReviewer2``) is an anonymous id *per paper*; a tilde id (``~Jane_Doe1``) is
a person.  Values sit in ``content.<field>.value`` (API 2) or ``content.<field>`` (API 1): integers at
some venues, ``"6: marginally above the acceptance threshold"`` or ``"3 good"`` at others.  A deleted
review (``ddate`` set) is excluded and reported.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..cells import MAX_JSON_DEPTH, json_depth
from ..errors import InputError
from .assemble import REPORT_COLUMNS
from .mapping import PRESETS, ColumnMapping

__all__ = ["read_openreview", "load_notes", "is_review", "short_id", "MAX_JSON_DEPTH"]

_ANONYMOUS = re.compile(r"(Reviewer_[A-Za-z0-9]+|AnonReviewer\d+)$")
_PAPER = re.compile(r"/((?:Submission|Paper)\d+)/")
_EXCLUDED_VENUE = {"withdrawn_submission": "withdrawn", "desk_rejected_submission": "desk-rejected"}


def load_notes(source: Any, name: str) -> list[dict]:
    """Review notes (and submission notes) as dicts, from JSON bytes/text or Python objects."""
    if isinstance(source, (bytes, bytearray)):
        try:
            text = bytes(source).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(f"{name} is not UTF-8 JSON (byte {exc.start})") from None
        if json_depth(text) > MAX_JSON_DEPTH:
            raise InputError(f"{name} nests deeper than {MAX_JSON_DEPTH} levels; an OpenReview export nests about 5")
        try:
            source = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{name} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    if isinstance(source, Mapping) and "notes" in source:
        source = source["notes"]
    if isinstance(source, Mapping) or hasattr(source, "to_json"):
        source = [source]
    if not isinstance(source, list):
        raise InputError(f"{name}: expected a list of OpenReview notes, found {type(source).__name__}")
    notes = []
    for note in source:
        if hasattr(note, "to_json"):
            note = note.to_json()
        if not isinstance(note, Mapping):
            raise InputError(f"{name}: item {len(notes) + 1} is not an OpenReview note (a JSON object)")
        details = note.get("details") if isinstance(note.get("details"), Mapping) else {}
        replies = details.get("replies") or details.get("directReplies") or []
        notes.append(dict(note))
        notes += [dict(r.to_json() if hasattr(r, "to_json") else r) for r in replies]
    return notes


def _invitations(note: Mapping) -> list[str]:
    inv = note.get("invitations") or ([note["invitation"]] if note.get("invitation") else [])
    return [str(i) for i in inv]


def is_review(note: Mapping) -> bool:
    return any(i.endswith("/-/Official_Review") or i.endswith("/Official_Review") for i in _invitations(note))


def _value(content: Mapping, name: str) -> Any:
    entry = content.get(name)
    return entry.get("value") if isinstance(entry, Mapping) else entry


def _pick(content: Mapping, wanted: str | None, pattern: str) -> str | None:
    if wanted:
        return wanted if wanted in content else None
    return next((k for k in content if re.search(pattern, k.lower())), None)


def read_openreview(source: Any, mapping: ColumnMapping, name: str):
    """Records of OpenReview review notes; returns (records, reports, notes, anonymous)."""
    preset = PRESETS["openreview"]
    notes = load_notes(source, name)
    excluded_forums: dict[str, str] = {}
    for note in notes:
        venue = str(_value(note.get("content") or {}, "venueid") or "")
        for suffix, why in _EXCLUDED_VENUE.items():
            if venue.lower().endswith(suffix) and note.get("forum"):
                excluded_forums[str(note["forum"])] = why
    reviews = [(k, n) for k, n in enumerate(notes) if is_review(n)]
    if not reviews:
        kinds = sorted({i.rsplit("/", 1)[-1] for n in notes for i in _invitations(n)})
        raise InputError(f"{name}: no review note (invitation ending in /-/Official_Review) among {len(notes)} notes"
                         + (f"; invitations found: {', '.join(kinds[:8])}" if kinds else ""))
    score_field = mapping.score[0] if mapping.score else None
    fields = sorted({k for _, n in reviews for k in (n.get("content") or {})})
    score_name = _pick({f: 1 for f in fields}, score_field, preset.score_pattern)
    conf_name = _pick({f: 1 for f in fields}, mapping.confidence, preset.confidence_pattern)
    if score_name is None:
        raise InputError(f"{name}: the reviews have no score field among {', '.join(fields)}; name it in the mapping "
                         "(score)")
    mapping.object, mapping.assessor, mapping.score = "forum", ["signatures"], [score_name]
    mapping.confidence, mapping.time = conf_name, ["tmdate"]
    submissions = _submissions(notes)
    titles = {forum: _value(note.get("content") or {}, "title") for forum, (_k, note) in submissions.items()}
    if any(titles.values()):
        mapping.title = "title"
    rows = []
    for k, note in reviews:
        content = note.get("content") or {}
        signature = str((note.get("signatures") or [""])[0])
        match = _ANONYMOUS.search(signature)
        assessor = short_id(signature)
        forum = str(note.get("forum") or note.get("replyto") or "")
        status = "deleted" if note.get("ddate") else excluded_forums.get(forum, "")
        rows.append({"object": forum, "assessor": assessor, "anonymous": bool(match),
                     "score": _value(content, score_name), "confidence": _value(content, conf_name) if conf_name else None,
                     "time": note.get("tmdate") or note.get("mdate") or note.get("cdate"), "status": status,
                     "sheet": name, "row": k + 1, "score_cell": f"note {note.get('id', k + 1)}, {score_name}",
                     "confidence_cell": f"note {note.get('id', k + 1)}, {conf_name}", "signature": signature,
                     "title": titles.get(forum)})
    records = pd.DataFrame(rows)
    anonymous = bool(records["anonymous"].any())
    out_notes = [f"{len(reviews)} OpenReview review notes read (score field '{score_name}'"
                 + (f", confidence field '{conf_name}'" if conf_name else "") + ")"]
    unreviewed = _unreviewed(submissions, set(records["object"]), excluded_forums, name)
    if len(unreviewed):
        out_notes.append(f"{len(unreviewed)} submission(s) without any review (listed in the import report)")
    return records.drop(columns=["anonymous", "signature"]), [unreviewed], out_notes, anonymous


def _submissions(notes: list[dict]) -> dict[str, tuple[int, dict]]:
    """forum -> (position, note) of the submissions among the notes (a note that is its own forum, not a review)."""
    return {str(n["id"]): (k, n) for k, n in enumerate(notes)
            if not is_review(n) and n.get("id") and str(n.get("forum") or n["id"]) == str(n["id"])}


def _unreviewed(submissions: dict, reviewed: set, excluded: dict, name: str) -> pd.DataFrame:
    """The import report's line for every submission the export holds without a review (its title named)."""
    rows = []
    for forum, (k, note) in submissions.items():
        if forum in reviewed:
            continue
        why = f" (the submission was {excluded[forum]})" if forum in excluded else ""
        title = _value(note.get("content") or {}, "title")
        rows.append({"sheet": name, "row": k + 1, "cell": f"note {forum}", "assessor": "", "object": forum,
                     "reason": f"no review in the export{why}" + (f": {str(title)[:80]}" if title else "")})
    return pd.DataFrame(rows, columns=REPORT_COLUMNS)


def short_id(signature: str) -> str:
    """An anonymous signature as the import names it: its paper and reviewer parts as the export writes them
    (``.../Paper2519/AnonReviewer1`` -> ``Paper2519/AnonReviewer1``, ``.../Submission12/Reviewer_AbC1`` ->
    ``Submission12/Reviewer_AbC1``: the names the chair's own files use); a person's tilde id as is.

    >>> short_id("ICLR.cc/2020/Conference/Paper2519/AnonReviewer1"), short_id("~Jane_Doe1")
    ('Paper2519/AnonReviewer1', '~Jane_Doe1')
    """
    signature = str(signature).strip()
    match = _ANONYMOUS.search(signature)
    if not match:
        return signature
    paper = _PAPER.search(signature)
    return f"{paper.group(1)}/{match.group(1)}" if paper else match.group(1)
