"""The roles of an export's columns -- mapped once, shown, saved and reused.

A :class:`ColumnMapping` says which column holds the object (paper, proposal), the assessor, the score
(several columns in time order when a form has pre- and post-rebuttal fields), the confidence, and the
optional group (track), round, status and time columns; with the declared scale and confidence levels
it is everything an import needs besides the file.  It is plain data: :meth:`ColumnMapping.to_dict` /
:meth:`ColumnMapping.from_dict` (JSON), :meth:`ColumnMapping.to_rows` / :meth:`ColumnMapping.from_rows`
(a two-column Import sheet: role | column).

:data:`PRESETS` holds one preset per system: the header names its export uses for each role and
patterns for the fields a committee names itself ("Pre-Response Overall Merit").  Headers are compared by
:func:`~xlcalib.cells.header_key`, as every sheet's are (case folded, white space and typographic quotes
plain).
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from ..cells import MAX_JSON_DEPTH, header_key, is_blank, json_depth
from ..errors import InputError
from ..inputs.values import ConfidenceLevels, Scale, scale_argument

__all__ = ["ColumnMapping", "Preset", "PRESETS", "SOURCES", "ROLES", "COLUMN_READINGS", "find_header",
           "score_columns", "nearest_preset", "mapping_argument", "columns_reading"]

#: The systems an export can come from (``--from``).
SOURCES = ("hotcrp", "cmt", "easychair", "openreview", "grid")
#: Column roles, in the order the Import sheet lists them (``title`` and ``labels``: columns describing the object,
#: kept as its attributes -- the title shown on the Ranking).
ROLES = ("object", "assessor", "score", "confidence", "group", "round", "status", "time", "title", "labels")
#: How a grid's score columns are read: one column per person, or per-paper review slots (R1, R2 ... filled from the
#: left: each cell a review by a reviewer of that paper alone).
COLUMN_READINGS = ("people", "review slots")
#: The list-valued roles (several columns, joined by ' | ' on the Import sheet).
_LIST_ROLES = ("assessor", "score", "time", "labels")


@dataclass(frozen=True)
class Preset:
    """How one system names its columns: header names per role (first found wins) and field patterns."""

    name: str
    object: tuple[str, ...]
    assessor: tuple[str, ...]
    score_pattern: str
    confidence_pattern: str
    group: tuple[str, ...] = ()
    round: tuple[str, ...] = ()
    status: tuple[str, ...] = ()
    time: tuple[str, ...] = ()
    #: headers that identify the export (detection counts how many are present)
    signature: tuple[str, ...] = ()
    #: status values that mean a finished review (others are excluded and reported)
    complete: tuple[str, ...] = ("complete", "completed", "submitted", "final", "")
    menu: str = ""


_SCORE = r"overall|merit|recommendation|rating|evaluation|assessment|\bscore\b|ovemer"
#: Words that make a field *the* score when several match (an "Experimental evaluation" question yields to
#: "Overall score").
_PRIMARY = r"overall|merit|recommendation|ovemer"
_CONFIDENCE = r"confidence|expertise|familiarity|revexp|certainty"

PRESETS: dict[str, Preset] = {
    "hotcrp": Preset(
        "hotcrp", object=("paper", "pid"), assessor=("email", "reviewername"),
        score_pattern=_SCORE, confidence_pattern=_CONFIDENCE, round=("round",), status=("status",),
        time=("submitted_at",), signature=("paper", "title", "review", "reviewername", "email", "pid", "round",
                                           "submitted_at", "vtag"),
        menu="Search > select papers > Download > Reviews (CSV)"),
    "cmt": Preset(
        "cmt", object=("paper id",), assessor=("reviewer email", "reviewer name"),
        score_pattern=_SCORE, confidence_pattern=_CONFIDENCE, time=("last modified",),
        signature=("paper id", "paper title", "reviewer name", "reviewer email", "reviewer number", "created",
                   "last modified"),
        menu="Chair Console > Actions > Export to Excel > Reviews"),
    "easychair": Preset(
        "easychair", object=("submission #",), assessor=("reviewer email", "member name"),
        score_pattern=r"overall|evaluation|merit|recommendation|score", confidence_pattern=_CONFIDENCE,
        time=("date", "time"),
        signature=("#", "submission #", "member #", "member name", "number", "version", "text", "scores",
                   "reviewer first name", "reviewer last name", "reviewer email", "reviewer person #", "date",
                   "time"),
        menu="Premium > Conference data download > CSV (review.csv)"),
    "openreview": Preset(
        "openreview", object=("forum",), assessor=("signatures",),
        score_pattern=r"^(rating|overall_recommendation|overall_assessment|recommendation|overall_rating|"
                      r"overall_evaluation|overall_score|score)$",
        confidence_pattern=r"^(confidence|reviewer_confidence|expertise)$", time=("tmdate",),
        signature=("forum", "invitations", "signatures", "content"),
        menu="openreview-py: client.get_all_notes(invitation=<venue>/-/Submission, details='replies')"),
    "grid": Preset(
        "grid", object=("proposal", "proposals", "object", "application", "project", "paper", "id"),
        assessor=(), score_pattern=_SCORE, confidence_pattern=r"weight|confidence|conf\.?|certainty|\bsd\b",
        signature=(), menu="a sheet of proposals x assessors (one row per proposal, one column per assessor)"),
}


def _as_list(value: Any) -> list[str]:
    if value is None or (isinstance(value, str) and not value.strip()):
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split("|") if part.strip()]
    return [str(v) for v in value if not is_blank(v)]


@dataclass
class ColumnMapping:
    """Which column plays which role, and how values are read.  Plain data: edit it, save it, pass it back.

    Column entries are header texts as the export writes them; ``assessor`` and ``time`` may list
    several (first non-blank / joined), ``score`` lists the score columns in time order (the latest
    non-blank wins unless a round is named).  ``scale`` and ``confidence_levels`` are the declared or
    inferred readings (see :mod:`xlcalib.inputs.values`); ``complete`` the status values kept.
    """

    source: str = ""
    object: str | None = None
    assessor: list[str] = field(default_factory=list)
    score: list[str] = field(default_factory=list)
    confidence: str | None = None
    group: str | None = None
    round: str | None = None
    status: str | None = None
    time: list[str] = field(default_factory=list)
    title: str | None = None
    labels: list[str] = field(default_factory=list)
    columns_are: str | None = None
    scale: Scale | None = None
    confidence_levels: ConfidenceLevels | None = None
    complete: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """JSON-ready: every role, the scale and the confidence levels."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, (Scale, ConfidenceLevels)):
                value = value.to_dict()
            out[f.name] = list(value) if isinstance(value, list) else value
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=1)

    @classmethod
    def from_dict(cls, data: Mapping) -> "ColumnMapping":
        unknown = set(data) - {f.name for f in fields(cls)}
        if unknown:
            raise InputError(f"the column mapping has unknown entries: {', '.join(sorted(unknown))} (known: "
                             f"{', '.join(f.name for f in fields(cls))})")
        out = cls()
        for key, value in data.items():
            if key == "scale":
                value = scale_argument(value, "the mapping's scale")
            elif key == "confidence_levels":
                value = ConfidenceLevels.from_value(value)
            elif key in (*_LIST_ROLES, "complete"):
                value = _as_list(value) if key != "complete" else [str(v).strip().lower() for v in (value or [])]
            elif value is not None and not isinstance(value, str):
                value = str(value)
            if key == "columns_are" and value is not None:
                value = columns_reading(value, "the column mapping's grid columns")
            if key in (*_LIST_ROLES, "complete"):
                value = value or []
            elif key == "source":
                value = value or ""
            setattr(out, key, value if value not in ("",) or key == "source" else None)
        if out.source and out.source not in SOURCES:
            raise InputError(f"the column mapping names the source {out.source!r}; known: {', '.join(SOURCES)}")
        return out

    @classmethod
    def from_json(cls, text: str, name: str = "the saved column mapping") -> "ColumnMapping":
        """The mapping saved as JSON text (*name*, e.g. the file's, says which in a refusal)."""
        if json_depth(text) > MAX_JSON_DEPTH:  # checked before parsing: the parser recurses once per level
            raise InputError(f"{name} nests deeper than any saved mapping: not a mapping xlcalib wrote")
        try:
            return cls.from_dict(json.loads(text))
        except json.JSONDecodeError as exc:
            raise InputError(f"the saved column mapping is not valid JSON ({exc.msg} at line {exc.lineno})") from None

    def to_rows(self) -> list[list[Any]]:
        """Rows for an Import sheet: ``[role, columns]``, list entries joined by ' | '."""
        rows: list[list[Any]] = [["Role", "Column"], ["source", self.source]]
        for role in ROLES:
            value = getattr(self, role)
            rows.append([role, " | ".join(value) if isinstance(value, list) else (value or "")])
        rows.append(["scale", self.scale.describe() if self.scale else ""])
        rows.append(["scale (saved)", json.dumps(self.scale.to_dict()) if self.scale else ""])
        rows.append(["confidence levels", json.dumps(self.confidence_levels.to_dict())
                     if self.confidence_levels else ""])
        rows.append(["complete status", " | ".join(self.complete)])
        rows.append(["grid columns", self.columns_are or ""])
        return rows

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[Any]]) -> "ColumnMapping":
        """The inverse of :meth:`to_rows` (a header row, then role | column)."""
        data: dict[str, Any] = {}
        for row in rows:
            if not row or is_blank(row[0]):
                continue
            key = header_key(row[0])
            value = row[1] if len(row) > 1 and not is_blank(row[1]) else None
            if key in ("role",):
                continue
            if key == "scale":
                continue  # the readable line; the saved form follows
            if key == "scale (saved)":
                data["scale"] = _saved_entry(value) if value else None
            elif key == "confidence levels":
                data["confidence_levels"] = _saved_entry(value) if value else None
            elif key == "complete status":
                data["complete"] = _as_list(value)
            elif key == "grid columns":
                data["columns_are"] = value
            elif key in ROLES or key == "source":
                data[key] = _as_list(value) if key in _LIST_ROLES else value
            else:
                raise InputError(f"Import sheet: unknown role '{row[0]}' (known: source, {', '.join(ROLES)}, scale, "
                                 "confidence levels, complete status, grid columns)")
        return cls.from_dict(data)

    def describe(self) -> list[str]:
        """One line per role found, for a report or the CLI."""
        lines = []
        for role in ROLES:
            value = getattr(self, role)
            if value:
                lines.append(f"{role}: {' | '.join(value) if isinstance(value, list) else value}")
        if self.columns_are:
            lines.append(f"grid columns: {self.columns_are}")
        return lines


def columns_reading(value: Any, where: str = "--slots / --people") -> str | None:
    """How a grid's score columns are to be read: ``"people"``, ``"review slots"`` (``slots`` accepted) or None
    (detected)."""
    if value is None or is_blank(value):
        return None
    key = header_key(value)
    if key in ("slots", "slot", "review slots", "reviews", "review slot"):
        return "review slots"
    if key in ("people", "persons", "assessors", "reviewers"):
        return "people"
    raise InputError(f"{where}: a grid's columns are 'people' (one column per assessor) or 'review slots' (R1, R2 "
                     f"... each row's reviews from the left); blank to detect; not {value!r}")


def mapping_argument(value: Any) -> ColumnMapping | None:
    """A user's mapping: a :class:`ColumnMapping`, a dict, JSON text, or Import-sheet rows."""
    if value is None or isinstance(value, ColumnMapping):
        return value
    if isinstance(value, Mapping):
        return ColumnMapping.from_dict(value)
    if isinstance(value, str):
        return ColumnMapping.from_json(value)
    if isinstance(value, (list, tuple)):
        return ColumnMapping.from_rows(value)
    raise InputError(f"cannot read a column mapping from a {type(value).__name__}; pass a dict, JSON text or the "
                     "Import sheet's rows")


def find_header(header: Sequence[Any], names: Sequence[str]) -> int | None:
    """Position of the first of *names* present in *header* (compared by their
    :func:`~xlcalib.cells.header_key`), else None."""
    normed = [header_key(h) for h in header]
    for name in names:
        key = header_key(name)
        if key in normed:
            return normed.index(key)
    return None


def _round_rank(text: str) -> int:
    """Where a field stands in time: 'pre-response' before a plain field before 'post-rebuttal' / 'final'."""
    if re.search(r"\bpre\b|\bpre-|initial|first|before", text):
        return 0
    if re.search(r"\bpost\b|post-|final|updated|revised|after|second", text):
        return 2
    return 1


def score_columns(header: Sequence[Any], pattern: str, confidence_pattern: str) -> list[int]:
    """Positions of the score fields (matching *pattern*, not the confidence pattern), in time order."""
    keys = [header_key(h) for h in header]
    found = [(j, key) for j, key in enumerate(keys)
             if key and re.search(pattern, key) and not re.search(confidence_pattern, key)]
    primary = [(j, h) for j, h in found if re.search(_PRIMARY, h)]
    return [j for j, _ in sorted(primary or found, key=lambda jt: (_round_rank(jt[1]), jt[0]))]


def nearest_preset(header: Sequence[Any]) -> tuple[str, list[str], list[str]]:
    """The preset whose signature headers best match *header*: (name, headers found, headers missing)."""
    normed = {header_key(h) for h in header}
    best = ("grid", [], [])
    best_score = -1.0
    for name, preset in PRESETS.items():
        if not preset.signature:
            continue
        found = [s for s in preset.signature if s in normed]
        score = len(found) / len(preset.signature)
        if score > best_score:
            best_score, best = score, (name, found, [s for s in preset.signature if s not in normed])
    return best


def _saved_entry(value: Any) -> Any:
    """One JSON cell of an Import sheet (a saved scale or level table), refused by depth before it is parsed."""
    text = str(value)
    if json_depth(text) > MAX_JSON_DEPTH:
        raise InputError("a saved entry nests deeper than any xlcalib writes; clear the cell to detect it again")
    return json.loads(text)
