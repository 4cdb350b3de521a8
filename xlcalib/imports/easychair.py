"""EasyChair: ``review.csv`` of the conference data download (alone or in its zip).

Shape (as chairs' scripts read it; EasyChair documents the download only by its file list):
``#, submission #, member #, member name, number, version, text, scores, reviewer first name, reviewer
last name, reviewer email, reviewer person #, date, time, attachment?``.  ``scores`` packs every score
of the review in one multi-line cell, one ``Field name: value`` per line (``Overall evaluation: -1``,
``Reviewer's confidence: 4``); scales are per conference and often negative (-3..+3).  The zip also
holds ``submission.csv`` (``deleted?`` says which submissions were deleted: their reviews are
excluded) and ``review_score.csv`` (``review #, field #, value``: numbers only, no field names, so the
names come from ``review.csv``).

The assessor is the person who wrote the review (reviewer email, which is the PC member's own unless a
subreviewer wrote it), falling back to the member's name; ``version`` and ``date``/``time`` order two
reviews of one pair.
"""
from __future__ import annotations

import io
import re
import zipfile

import numpy as np
import pandas as pd

from ..cells import header_key
from ..errors import InputError
from .mapping import PRESETS, ColumnMapping, find_header
from .sheets import Sheet, check_size, read_csv_bytes
from .wide import records_from_sheet, resolve_columns, write_back

__all__ = ["read_easychair", "easychair_zip", "is_review_score"]

_LINE = re.compile(r"^\s*(.+?)\s*:\s*(.*?)\s*$")


def is_review_score(sheet: Sheet) -> bool:
    normed = {header_key(h) for h in sheet.header}
    return {"review #", "field #"} <= normed


def _unpack_scores(sheet: Sheet) -> Sheet:
    """The ``scores`` cell split into one column per field (each value pointing at the scores cell)."""
    j = find_header(sheet.header, ["scores"])
    if j is None:
        return sheet
    cells = sheet.columns[j]
    codes, uniques = pd.factorize(cells, use_na_sentinel=True)
    parsed = []
    names: list[str] = []
    for text in uniques:
        entry = {}
        for line in str(text).replace("\r", "").split("\n"):
            match = _LINE.match(line)
            if match:
                entry[match.group(1)] = match.group(2)
                if match.group(1) not in names:
                    names.append(match.group(1))
        parsed.append(entry)
    header = list(sheet.header)
    columns = list(sheet.columns)
    cell_columns = dict(sheet.cell_columns)
    for name in names:
        values = np.asarray([p.get(name) for p in parsed] + [None], dtype=object)[codes] if len(cells) else \
            np.empty(0, dtype=object)
        header.append(name)
        columns.append(values)
        cell_columns[len(header) - 1] = sheet.column_numbers[j]
    return Sheet(sheet.name, header, columns, sheet.rows, list(sheet.column_numbers) + [sheet.column_numbers[j]] * len(names),
                 sheet.header_row, sheet.above, sheet.label, dict(sheet.cell_rows), cell_columns)


def easychair_zip(data: bytes, name: str) -> tuple[Sheet, set[str]]:
    """review.csv of a conference data download, and the numbers of deleted submissions (from submission.csv)."""
    from ..workbook.reader import check_zip
    from pathlib import Path

    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        check_zip(Path(name), zf, workbook=False)
        names = {n.rsplit("/", 1)[-1]: n for n in zf.namelist()}
        if "review.csv" not in names:
            raise InputError(f"{name} is a zip without review.csv; EasyChair's data download holds it")
        for part in ("review.csv", "submission.csv"):
            if part in names:  # the declared size first: a zip bomb is refused before it is expanded
                check_size(zf.getinfo(names[part]).file_size, f"{name}: {part}")
        review = read_csv_bytes(zf.read(names["review.csv"]), "review.csv")
        deleted: set[str] = set()
        if "submission.csv" in names:
            sub = read_csv_bytes(zf.read(names["submission.csv"]), "submission.csv")
            number, flag = find_header(sub.header, ["#"]), find_header(sub.header, ["deleted?"])
            if number is not None and flag is not None:
                mask = pd.Series(sub.columns[flag], dtype=object).astype(str).str.strip().str.lower() == "yes"
                deleted = {str(v).strip() for v in sub.columns[number][mask.to_numpy()]}
    return review, deleted


def read_easychair(sheet: Sheet, mapping: ColumnMapping, round_name: str | None, deleted: set[str] = frozenset()):
    """Records of EasyChair's review.csv; returns (records, reports, notes, anonymous)."""
    if is_review_score(sheet):
        raise InputError(f"{sheet.label} is EasyChair's review_score.csv (review #, field #, value): it has no "
                         "field names, papers or reviewers; import review.csv, or the whole data download (zip)")
    sheet = _unpack_scores(sheet)
    preset = PRESETS["easychair"]
    exclude = {j for j in (find_header(sheet.header, [n]) for n in ("text", "scores", "#", "number", "version",
                                                                     "member #", "reviewer person #"))
               if j is not None}
    cols = resolve_columns(sheet, mapping, preset, exclude)
    write_back(mapping, sheet, cols)
    version = find_header(sheet.header, ["version"])
    rank = pd.to_numeric(pd.Series(sheet.columns[version], dtype=object), errors="coerce").to_numpy() \
        if version is not None else None
    records, reports = records_from_sheet(sheet, cols, round_name=round_name if len(cols.score) > 1 else None,
                                          round_rank=rank)
    notes = [f"EasyChair scores unpacked from the 'scores' cells: score field {' -> '.join(mapping.score)}"
             + (f", confidence field {mapping.confidence}" if mapping.confidence else "")]
    if deleted:
        obj = records["object"].astype(str).str.strip()
        records["status"] = np.where(obj.isin(deleted), "deleted submission", "")
        notes.append(f"{len(deleted)} submission(s) marked deleted in submission.csv: their reviews are excluded")
    return records, reports, notes, False
