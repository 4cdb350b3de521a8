"""The uncertain ground truth exercise on a workbook: Classes + Annotations (+ Predictions, Settings) ->
sheets Certainty and UA metrics (PrIRN annotation certainty and uncertainty-adjusted top-k accuracy)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .. import ground_truth as gt
from ..cells import column_letter, header_key, is_blank, real_argument, seed_argument, whole_argument
from ..errors import InputError
from ..workbook import open_book
from .common import first_column_list, run_preamble, sheet_grid, write_sheets

#: The Settings sheet's rows the report reads, with the values used when a row is absent.
DEFAULT_SETTINGS = {"reliability": 3.0, "samples": 1000, "seed": 0, "top k": 3}


def _setting(value, label: str, n_classes: int, where: str):
    """One ground-truth Settings value, checked like the function argument it feeds; errors name the cell."""
    checks = {"reliability": lambda v: real_argument(v, label, low=0, high=1e12, low_open=True),
              "samples": lambda v: whole_argument(v, label),
              "seed": lambda v: seed_argument(v, label),
              "top k": lambda v: whole_argument(v, label, high=max(n_classes, 1), why=f"there are {n_classes} classes")}
    try:
        return checks[label](value)
    except InputError as exc:
        raise InputError(exc.message.replace(f"the {label} argument", f"{where} ({label})"), {"sheet": "Settings"}) from None


def _read_settings(backend, n_classes: int):
    """(settings dict, conventions): the Settings sheet's values over :data:`DEFAULT_SETTINGS`, and its "Setting"
    row (xlcalib's conventions or the reference code's, :mod:`xlcalib.ground_truth.settings`)."""
    settings, setting = dict(DEFAULT_SETTINGS), gt.XLCALIB
    if not backend.find_sheet("Settings", required=False):
        return settings, setting
    block = backend.read_block("Settings")
    rows, first_row = block.rows, block.first_row
    for offset, row in enumerate(rows[1:], start=1):
        key = header_key(row[0]) if len(row) >= 2 and not is_blank(row[0]) else None
        cell = f"{column_letter(block.first_column + 1)}{first_row + offset}"
        if key == "setting" and not is_blank(row[1]):
            setting = gt.resolve_setting(row[1], f"sheet Settings, cell {cell} (Setting)")
        elif key in settings:
            settings[key] = _setting(row[1], key, n_classes, f"sheet Settings, cell {cell}")
    return settings, setting


def _read_annotations(backend, classes: list[str]):
    """(item names, annotated cases, indices of the items kept): an item without any annotation is left out."""
    items, block, first_row = sheet_grid(backend, "Annotations")
    cases, kept = [], []
    for i, row in enumerate(block):
        case = [gt.parse_ranking(str(cell), classes, where=f"sheet Annotations, row {first_row + 1 + i}")
                for cell in row if not is_blank(cell)]
        if case:
            cases.append(case)
            kept.append(i)
    if not cases:
        raise InputError("sheet Annotations has no annotations")
    return items, cases, kept


def _read_predictions(backend, classes: list[str], kept: list[int]) -> list[list[int]]:
    """Each kept item's predicted classes, best first, as class indices; an unknown class is named by its row."""
    _, pblock, prow = sheet_grid(backend, "Predictions")
    lookup = {c.lower(): j for j, c in enumerate(classes)}
    preds = []
    for i in kept:
        row = [c for c in (pblock[i] if i < len(pblock) else []) if not is_blank(c)]
        unknown = [c for c in row if str(c).strip().lower() not in lookup]
        if unknown:
            raise InputError(f"sheet Predictions, row {prow + 1 + i}: unknown class '{unknown[0]}'")
        preds.append([lookup[str(c).strip().lower()] for c in row])
    return preds


def _ua_rows(cases, n_classes: int, preds, plaus, settings, setting) -> list[tuple]:
    """UA top-1 and top-k accuracy with their spread over plausibility samples, beside the accuracy against the
    IRN labels; a note instead when an item has fewer than k predictions."""
    gamma, M, seed, k = settings["reliability"], settings["samples"], settings["seed"], settings["top k"]
    if not all(len(p) >= k for p in preds):
        return [("note", f"UA metrics need {k} predictions on every annotated item")]
    draws = gt.sample_dirichlet(gt.prirn_concentration(cases, n_classes, gamma, setting=setting), M, seed)
    top = np.array([p[:k] for p in preds])
    rows = []
    for kk in sorted({1, k}):
        ua = gt.ua_topk_accuracy(draws, top[:, :kk], kk)
        rows += [(f"UA top-{kk} accuracy", ua.value), ("  SD over plausibility samples", ua.sd_over_samples),
                 (f"top-{kk} accuracy against the IRN labels", gt.point_topk_accuracy(plaus, top[:, :kk], kk))]
    return rows


def ground_truth_report(book, *, now=None) -> dict[str, pd.DataFrame]:
    """Classes + Annotations (+ Predictions, Settings) -> sheets Certainty and UA metrics."""
    from ..presentation import ground_truth_sheets

    backend = open_book(book)
    classes = first_column_list(backend, "Classes")
    settings, setting = _read_settings(backend, len(classes))
    items, cases, kept = _read_annotations(backend, classes)
    gamma, M, seed, k = settings["reliability"], settings["samples"], settings["seed"], settings["top k"]
    plaus = gt.irn(cases, len(classes), setting=setting)
    cert, labels = gt.prirn_certainty(cases, len(classes), gamma, M, seed, setting=setting)
    certainty = pd.DataFrame({"item": [items[i] for i in kept], "annotators": [len(c) for c in cases],
                              "IRN top-1": [classes[j] for j in plaus.argmax(axis=1)],
                              "certainty": cert, "most certain label": [classes[j] for j in labels]})
    frames = {"Certainty": certainty}
    summary_rows = [("items", len(cases)), ("mean annotation certainty", float(cert.mean())),
                    ("share of items with certainty < 0.5", float(np.mean(cert < 0.5))),
                    ("share of items with certainty < 0.9", float(np.mean(cert < 0.9)))]
    if backend.find_sheet("Predictions", required=False):
        preds = _read_predictions(backend, classes, kept)
        summary_rows += _ua_rows(cases, len(classes), preds, plaus, settings, setting)
    frames["UA metrics"] = pd.DataFrame(summary_rows, columns=["statistic", "value"])
    pre = run_preamble("uncertain ground truth", f"PrIRN, reliability {gamma:g}, samples {M}, seed {seed}, top k {k}, "
                       f"setting {setting.name}", now)
    write_sheets(backend, ground_truth_sheets(frames, pre))
    return frames
