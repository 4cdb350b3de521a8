"""The reliability exercise on a workbook: a Ratings grid (items x raters, optionally a second replication)
-> sheets ICC, kRR and kRR curve (with a chart)."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..cells import column_letter, is_blank, number_grid
from ..errors import InputError
from ..workbook import open_book
from .common import run_preamble, sheet_grid, write_sheets


def ratings_matrix(backend, sheet: str) -> np.ndarray:
    """A ratings grid sheet -> items x raters array (blank = NaN); rows without any rating are left out, and a
    bad cell is named by its sheet cell."""
    names, block, first_row = sheet_grid(backend, sheet)
    keep = [i for i, row in enumerate(block) if not all(is_blank(c) for c in row)]
    if not keep:
        raise InputError(f"sheet {sheet} has no ratings")
    try:
        return number_grid([block[i] for i in keep], sheet)
    except InputError as exc:  # re-point "row r, column c of the Ratings range" at the sheet's cell
        def cell(m):
            r, c = int(m.group(1)), int(m.group(2))
            return f"sheet {sheet}, cell {column_letter(c + 1)}{first_row + 1 + keep[r - 1]}"

        raise InputError(re.sub(r"row (\d+), column (\d+) of the \S+ range", cell, exc.message), exc.where) from None


def _replication(backend) -> np.ndarray | None:
    """The optional Replication2 sheet; an empty one (the template's, not filled in) counts as absent."""
    if not backend.find_sheet("Replication2", required=False):
        return None
    try:
        return ratings_matrix(backend, backend.find_sheet("Replication2"))
    except InputError as exc:
        if "has no ratings" not in exc.message and "no data rows" not in exc.message:
            raise
    return None


def reliability_report(book, *, now=None, n_boot: int = 1000, seed: int = 0) -> dict[str, pd.DataFrame]:
    """Ratings (+ optional Replication2) -> sheets ICC, kRR, kRR curve (with a chart)."""
    from .. import reliability as rel  # scipy.stats loads when a reliability report runs, not with the command line
    from ..presentation import prophecy_k_max, reliability_sheets

    backend = open_book(book)
    x = ratings_matrix(backend, backend.find_sheet("Ratings"))
    rep = _replication(backend)
    table = rel.icc_table(x)
    boot = rel.krr_bootstrap(x, n_boot=n_boot, seed=seed)
    curve_note = ""
    if rep is not None and rep.shape[0] != x.shape[0]:
        curve_note = f"Replication2 has {rep.shape[0]} items, Ratings {x.shape[0]}: empirical curve left out"
        rep = None
    if rep is not None and (np.isnan(x).any() or np.isnan(rep).any()):
        curve_note = "the empirical curve needs complete replications (a rating is missing): left out"
        rep = None
    observed_k = int((~np.isnan(x)).sum(axis=1).max())
    curve = rel.krr_curve(x, replication=rep, k_max=prophecy_k_max(float(table.loc["ICC1", "ICC"]), observed_k))
    pre = run_preamble("reliability", f"bootstrap replicates {n_boot}, seed {seed}, CI 95%", now)
    specs = reliability_sheets(x, table, boot, rel.krippendorff_alpha(x, "interval"), curve, curve_note, pre)
    write_sheets(backend, specs)
    return {spec.name: spec.frame for spec in specs}
