"""Each object's group (a track, a panel): the evaluations' Group column, or the Objects sheet's.

Read from the table the evaluations check kept (:attr:`~xlcalib.inputs.PanelInput.table`), row for row
with the checked evaluations: the check itself has no use for the groups.  A column is found by its header
as every header is (:func:`~xlcalib.cells.header_key`); an object given two groups is an error naming its
rows.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..cells import header_key, is_blank, parse_label
from ..errors import InputError

#: The Evaluations (or Objects) sheet column that gives each object's group, unless the Settings name another.
DEFAULT_GROUP_COLUMN = "Group"


def _column_position(header: Sequence[Any], name: str) -> int | None:
    """Where the column headed *name* is in *header* (headers compared by their :func:`header_key`), or None."""
    wanted = header_key(name)
    return next((j for j, h in enumerate(header) if not is_blank(h) and header_key(h) == wanted), None)


def _group_cells(cells, where) -> list:
    """A group column's cells as texts (whole numbers without '.0'); blank -> None."""
    return [parse_label(c, where(i), allow_blank=True) for i, c in enumerate(cells)]


def _groups_from_evaluations(panel, name: str):
    """object -> group (or any one-per-object label: a title) from the evaluations table's column *name* (None: no
    such column); an object given two is an error naming its rows."""
    table = panel.table
    if table is None:
        return None
    position = _column_position(table.header, name)
    if position is None:
        return None
    rows = np.asarray(table.row_numbers, dtype=np.intp)
    order = np.argsort(rows, kind="stable")
    body = order[np.searchsorted(rows[order], np.asarray(panel.sheet_rows, dtype=np.intp))]
    column = table.columns[position]
    cells = [column[i] for i in body]
    groups = _group_cells(cells, lambda i: f"sheet {panel.sheet}, row {int(panel.sheet_rows[i])}, column {name}")
    frame = pd.DataFrame({"object": panel.frame["object"].to_numpy(), "group": groups,
                          "row": np.asarray(panel.sheet_rows)}).dropna(subset=["group"])
    distinct = frame.groupby("object", sort=False)["group"].nunique()
    if (distinct > 1).any():
        obj = distinct.index[distinct > 1][0]
        clash = frame[frame["object"] == obj].drop_duplicates("group").head(2)
        what = "is in group" if name != TITLE_COLUMN else "has the titles"
        one = "group" if name != TITLE_COLUMN else "title"
        raise InputError(f"sheet {panel.sheet}, rows {', '.join(map(str, clash['row']))}: object {obj} {what} "
                         f"{' and '.join(repr(g) for g in clash['group'])}; give each object one {one}",
                         {"sheet": panel.sheet, "sheet_row": int(clash['row'].iloc[-1])})
    return frame.drop_duplicates("object").set_index("object")["group"]


def _groups_from_objects_sheet(backend, name: str):
    """object -> group from the Objects sheet (names in column A, the group under a header *name*), or None."""
    sheet = backend.find_sheet("Objects", required=False)
    if not sheet:
        return None
    block = backend.read_block(sheet)
    rows = [list(r) for r in block.rows]
    start = next((i for i, r in enumerate(rows) if any(not is_blank(c) for c in r)), None)
    if start is None:
        return None
    position = _column_position(rows[start], name)
    if position is None or position == 0:
        return None
    out = {}
    for offset, row in enumerate(rows[start + 1:], start=start + 1):
        if not row or is_blank(row[0]) or len(row) <= position:
            continue
        where = f"sheet {sheet}, row {block.first_row + offset}"
        group = parse_label(row[position], f"{where}, column {name}", allow_blank=True)
        if group is not None:
            out[parse_label(row[0], f"{where}, column A")] = group
    return pd.Series(out, dtype=object) if out else None


#: The Evaluations (or Objects) sheet column that gives each object's title (shown on the Ranking beside its id).
TITLE_COLUMN = "Title"


def read_titles(backend, panel):
    """Each object's title: the evaluations' Title column (an import writes it from the export's titles), else the
    Objects sheet's; None when neither has one.  An object given two titles is an error naming its rows."""
    titles = _groups_from_evaluations(panel, TITLE_COLUMN)
    listed = _groups_from_objects_sheet(backend, TITLE_COLUMN)
    if titles is None:
        return listed
    if listed is not None:  # the Objects sheet fills objects the evaluations leave without one
        titles = pd.concat([titles, listed[~listed.index.isin(titles.index)]])
    return titles


def read_groups(backend, panel, name: str | None, origin: str | None = None):
    """Each object's group: the evaluations' Group column (or the column *name*), else the Objects sheet's; None
    when neither has one (an error naming *origin*, the option or Settings cell, when *name* was asked for and
    is nowhere)."""
    column = name or DEFAULT_GROUP_COLUMN
    groups = _groups_from_evaluations(panel, column)
    listed = _groups_from_objects_sheet(backend, column)
    if groups is None:
        groups = listed
    elif listed is not None:  # the Objects sheet fills objects the evaluations leave without a group
        groups = pd.concat([groups, listed[~listed.index.isin(groups.index)]])
    if groups is None and name:
        asked = origin or "Settings 'Group column' or --group-column"
        shown = name if len(name) <= 60 else name[:57] + "..."
        raise InputError(f"no column '{shown}' on sheet {panel.sheet} or the Objects sheet: the group column was "
                         f"asked for by name ({asked})")
    if groups is not None and groups.nunique() < 2:
        return None  # one group: nothing to compare
    return groups

