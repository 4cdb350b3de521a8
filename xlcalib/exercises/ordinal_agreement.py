"""The ordinal agreement exercise on a workbook: Categories + Ratings (Object, Rater 1, Rater 2) (+ Settings) ->
sheets Svensson, MeanRanks and ROC (with a chart), and Agreement (the chance-corrected coefficients)."""
from __future__ import annotations

import re

import pandas as pd

from ..cells import column_letter, is_blank
from ..errors import InputError
from ..workbook import open_book
from .agreement import agreement_results, declared_categories, report_weights
from .common import first_column_list, run_preamble, sheet_grid, write_sheets


def _kappas(ratings: pd.DataFrame, order) -> dict:
    """Cohen's kappa unweighted, linear- and quadratic-weighted (the one most ordinal studies quote), with
    standard errors and intervals, in the category order; empty when the ratings do not allow them."""
    from ..agreement import conger_kappa

    out = {}
    for label, weights in (("Cohen's kappa (unweighted)", "identity"), ("linear-weighted kappa", "linear"),
                           ("quadratic-weighted kappa", "quadratic")):
        try:
            out[label] = conger_kappa(ratings, weights, order)
        except InputError:
            return {}
    return out


def _rater_headers(backend) -> tuple[str, str]:
    """The two raters as the Ratings header names them (the verdicts speak of them); a blank header is named by its
    column, and two equal headers get their column letters so that the sentences tell them apart."""
    block = backend.read_block("Ratings")
    header = block.rows[0] if block.rows else []
    letters = [column_letter(block.column_number(i)) for i in (1, 2)]
    names = [str(header[i]).strip() if len(header) > i and not is_blank(header[i]) else f"column {letter}"
             for i, letter in zip((1, 2), letters)]
    if names[0] == names[1]:
        names = [f"{n} ({letter})" for n, letter in zip(names, letters)]
    return names[0], names[1]


def ordinal_report(book, *, now=None) -> dict[str, pd.DataFrame]:
    """Categories + Ratings (Object, Rater 1, Rater 2) (+ Settings) -> sheets Svensson, MeanRanks, ROC (with a chart)
    and Agreement (chance-corrected coefficients, weights following the category order or the values given)."""
    from .. import ordinal  # loaded when an ordinal report runs, not with the command line
    from ..presentation import agreement_sheet, ordinal_sheets

    backend = open_book(book)
    weights = report_weights(backend)
    declared = declared_categories(backend)
    categories = first_column_list(backend, "Categories")
    _, block, first_row = sheet_grid(backend, "Ratings")
    r1 = [None if is_blank(r[0]) else str(r[0]).strip() for r in block]
    r2 = [None if len(r) < 2 or is_blank(r[1]) else str(r[1]).strip() for r in block]
    try:
        result = ordinal.svensson(r1, r2, categories=categories or None)
    except InputError as exc:  # "rater 1, row 3" counts data rows: name the sheet row the secretary sees
        raise InputError(re.sub(r"(rater [12]), row (\d+)", lambda m: f"sheet Ratings, row {first_row + int(m.group(2))} "
                                f"({m.group(1)})", exc.message), exc.where) from None
    frames = {"Svensson": result.to_frame(),
              "MeanRanks": ordinal.mean_rank_table(r1, r2, categories or None),
              "ROC": ordinal.roc_points(r1, r2, categories or None)}
    pre = run_preamble("ordinal agreement", f"categories in order: {', '.join(map(str, result.categories))}; "
                                            f"pairs used {result.n}, dropped (a rating missing) {result.n_dropped}; "
                                            f"agreement weights {weights}", now)
    names = _rater_headers(backend)
    # the agreement coefficients follow Svensson's category order, or the values the Categories sheet gives
    order = declared if isinstance(declared, pd.Series) else list(result.categories)
    ratings = pd.DataFrame({names[0]: r1, names[1]: r2})
    table, _, why_not = agreement_results(ratings, weights, order)
    specs = ordinal_sheets(frames, names, pre, kappas=_kappas(ratings, order)) + \
        [agreement_sheet(table, pre, weights=weights, why_not=why_not)]
    write_sheets(backend, specs)
    return {**frames, "Agreement": specs[-1].frame}
