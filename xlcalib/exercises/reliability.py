"""The reliability exercise on a workbook: a Ratings grid (items x raters, optionally a second replication and
a Settings sheet) -> sheets ICC, kRR and kRR curve (with a chart), Agreement and Agreement pairs."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..cells import column_letter, is_blank, number_grid
from ..errors import InputError
from ..workbook import open_book
from .agreement import agreement_results, report_weights
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


def rater_names(backend, sheet: str, n_raters: int) -> list[str]:
    """The Ratings header's rater names (a blank or repeated one named by its column too)."""
    block = backend.read_block(sheet)
    header = list(block.rows[0][1:1 + n_raters])
    header += [None] * (n_raters - len(header))
    letters = [column_letter(block.column_number(j + 1)) for j in range(n_raters)]
    names = [str(h).strip() if not is_blank(h) else f"column {letter}" for h, letter in zip(header, letters)]
    return [f"{n} ({letter})" if names.count(n) > 1 else n for n, letter in zip(names, letters)]


def _alpha_interval(x: np.ndarray, n_boot: int, seed: int):
    """The bootstrap interval of interval alpha (quadratic weights on the rating values), or why there is none."""
    from ..agreement import agreement_bootstrap

    try:
        return agreement_bootstrap(x, "krippendorff_alpha", "quadratic", n_boot=n_boot, seed=seed), ""
    except InputError as exc:
        return None, f"no interval: {exc.message}"


def reliability_report(book, *, now=None, n_boot: int = 1000, seed: int = 0) -> dict[str, pd.DataFrame]:
    """Ratings (+ optional Replication2, Settings) -> sheets ICC, kRR, kRR curve (with a chart), Agreement and, with
    three raters or more, Agreement pairs."""
    from .. import reliability as rel  # scipy.stats loads when a reliability report runs, not with the command line
    from ..presentation import agreement_pairs_sheet, agreement_sheet, prophecy_k_max, reliability_sheets

    backend = open_book(book)
    sheet = backend.find_sheet("Ratings")
    x = ratings_matrix(backend, sheet)
    weights = report_weights(backend)
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
    pre = run_preamble("reliability", f"bootstrap replicates {n_boot}, seed {seed}, CI 95%, agreement weights "
                                      f"{weights}", now)
    alpha_interval, alpha_note = _alpha_interval(x, n_boot, seed)
    specs = reliability_sheets(x, table, boot, rel.krippendorff_alpha(x, "interval"), curve, curve_note, pre,
                               alpha_interval=alpha_interval, alpha_note=alpha_note)
    ratings = pd.DataFrame(x, columns=rater_names(backend, sheet, x.shape[1]))
    agreement, pairs, why_not = agreement_results(ratings, weights, None, pairs=True)
    specs.append(agreement_sheet(agreement, pre, weights=weights, why_not=why_not))
    if pairs is not None:
        specs.append(agreement_pairs_sheet(pairs, pre))
    write_sheets(backend, specs)
    return {spec.name: spec.frame for spec in specs}
