"""HotCRP: the "Reviews (CSV)" and "Scores" downloads and the batch export (wide or narrow).

Shapes, as HotCRP's source writes them (``src/listactions/la_getreviewcsv.php``,
``la_getscores.php``, ``batch/reviewcsv.php``):

* **Reviews (CSV)** -- one row per submitted review: ``paper, title, review`` (the review's id, e.g.
  ``12B``), ``reviewername, email`` (both absent when the downloader may not see identities), then one
  column per review field under its full name ("Overall merit", "Reviewer expertise", or a committee's
  own such as "Pre-Response Overall Merit"); a field's value is its symbol (``1``..``n``, or letters where
  ``A`` is best), blank when nothing was entered.
* **Scores** -- the same rows with abbreviated headers (``OveMer``, ``RevExp``) and a ``decision``
  column.
* **batch/reviewcsv.php** -- ``pid, review, email, round, submitted_at, vtag`` (``status`` with
  ``--all``: complete, draft, ...) then the fields (wide), or, with ``--narrow``, one row per review and
  field: ``field, format, data``.

Without a name or an email, the only reviewer id is the review's, which is per paper: the import says
plainly that assessors cannot be linked (an identity map links them).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..cells import header_key
from ..errors import InputError
from .mapping import PRESETS, ColumnMapping, find_header
from .sheets import Sheet
from .wide import records_from_sheet, resolve_columns, write_back

__all__ = ["read_hotcrp", "is_narrow"]


def is_narrow(sheet: Sheet) -> bool:
    normed = {header_key(h) for h in sheet.header}
    return {"field", "data"} <= normed and ("pid" in normed or "paper" in normed)


def _widen(sheet: Sheet) -> Sheet:
    """A narrow export (one row per review x field) pivoted to one row per review, each value keeping its own row."""
    keys = [j for j in (find_header(sheet.header, [n]) for n in ("pid", "paper", "review", "email")) if j is not None]
    field_j, data_j = find_header(sheet.header, ["field"]), find_header(sheet.header, ["data"])
    extra = [j for j in (find_header(sheet.header, [n]) for n in ("round", "submitted_at", "status")) if j is not None]
    frame = pd.DataFrame({f"k{j}": sheet.columns[j] for j in keys + extra})
    frame["field"], frame["data"], frame["line"] = sheet.columns[field_j], sheet.columns[data_j], sheet.rows
    key_cols = [f"k{j}" for j in keys]
    frame["review_key"] = pd.factorize(pd.MultiIndex.from_frame(frame[key_cols].astype(str)))[0]
    first = frame.drop_duplicates("review_key").set_index("review_key").sort_index()
    values = frame.pivot_table(index="review_key", columns="field", values="data", aggfunc="last", sort=False)
    lines = frame.pivot_table(index="review_key", columns="field", values="line", aggfunc="last", sort=False)
    fields = list(values.columns)
    header = [sheet.header[j] for j in keys + extra] + fields
    columns = [first[f"k{j}"].to_numpy(dtype=object) for j in keys + extra]
    columns += [values[f].reindex(first.index).to_numpy(dtype=object) for f in fields]
    n_fixed = len(keys + extra)
    cell_rows = {n_fixed + i: lines[f].reindex(first.index).fillna(-1).to_numpy(dtype=np.intp)
                 for i, f in enumerate(fields)}
    cell_columns = {n_fixed + i: sheet.column_numbers[data_j] for i in range(len(fields))}
    rows = first["line"].to_numpy(dtype=np.intp)
    fixed_numbers = [sheet.column_numbers[j] for j in keys + extra]
    return Sheet(sheet.name, header, columns, rows, fixed_numbers + [sheet.column_numbers[data_j]] * len(fields),
                 sheet.header_row, [], sheet.label, cell_rows, cell_columns)


def read_hotcrp(sheet: Sheet, mapping: ColumnMapping, round_name: str | None):
    """Records of a HotCRP review export; returns (records, reports, notes, anonymous)."""
    notes = []
    if is_narrow(sheet):
        sheet = _widen(sheet)
        notes.append("HotCRP narrow export (one row per review and field) read as one row per review")
    preset = PRESETS["hotcrp"]
    anonymous = False
    if not mapping.assessor and all(find_header(sheet.header, [n]) is None for n in preset.assessor):
        if find_header(sheet.header, ["review"]) is None:
            raise InputError(f"{sheet.label}: no reviewer column (email, reviewername) and no review id column; "
                             "download the reviews as an administrator, or map the assessor column")
        mapping.assessor = [sheet.header[find_header(sheet.header, ["review"])]]
        anonymous = True
        notes.append("the export has no reviewer names or emails (identities hidden): each review's id "
                     "(e.g. 12B) stands for its reviewer, and is per paper")
    exclude = {j for j in (find_header(sheet.header, [n]) for n in ("title", "review", "decision", "vtag"))
               if j is not None}
    cols = resolve_columns(sheet, mapping, preset, exclude)
    write_back(mapping, sheet, cols)
    if len(cols.score) > 1:
        notes.append("score fields in time order: " + " -> ".join(" ".join(sheet.header[j].split()) for j in cols.score)
                     + (f"; round '{round_name}' used" if round_name else "; each review's latest non-blank score used"))
    records, reports = records_from_sheet(sheet, cols, round_name=round_name if len(cols.score) > 1 else None)
    if round_name is not None and len(cols.score) > 1 and "round" in records:
        records = records.drop(columns="round")
    return records, reports, notes, anonymous
