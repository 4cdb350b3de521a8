"""Agreement of categorical ratings in the exercises: the coefficients the reliability and ordinal reports show
(weights from the Settings sheet, categories from the Categories sheet), and ``xlcalib agreement FILE`` — a
ratings sheet (or CSV) to the table of coefficients, printed and optionally written to xlsx, csv or json.

Ratings sheet layout (the reliability template's): a header row naming the raters, one row per subject, the first
column the subject's name (``subject_column=False`` when every column holds ratings).  Categories are numbers or text
labels; declare their order (``categories``) for weights on text labels, or give each label a value (label=value).
"""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from ..cells import column_letter, header_key, is_blank, probability_argument
from ..errors import InputError
from ..workbook.csv_backend import TEXT_TABLE_SUFFIXES
from .common import check_output_differs, run_preamble

#: The Settings row the reports read, and the weights they use when it is absent: their ratings are ordered scales
#: (numbers, or categories listed in order), where a near miss deserves partial credit.
WEIGHTS_SETTING, REPORT_WEIGHTS = "agreement weights", "quadratic"
#: Most raters whose pairs a report lists (100 raters: 4,950 pairs, a few seconds); beyond, the sheet is left out.
MAX_PAIR_RATERS = 100


def setting_value(backend, label: str):
    """The value beside *label* (column A, compared by its :func:`~xlcalib.cells.header_key`) on the Settings
    sheet, and its cell; (None, "") when there is no such sheet, row or value."""
    sheet = backend.find_sheet("Settings", required=False)
    if sheet is None:
        return None, ""
    block = backend.read_block(sheet)
    for i, row in enumerate(block.rows):
        if len(row) >= 2 and header_key(row[0]) == label and not is_blank(row[1]):
            return row[1], f"sheet {sheet}, cell {column_letter(block.column_number(1))}{block.row_number(i)}"
    return None, ""


def report_weights(backend) -> str:
    """The Settings sheet's agreement weights (a scheme name), checked; the reports' default without one."""
    from ..agreement import WEIGHTS

    value, where = setting_value(backend, WEIGHTS_SETTING)
    if value is None:
        return REPORT_WEIGHTS
    name = str(value).strip().lower()
    if name not in WEIGHTS:
        raise InputError(f"{where} (Agreement weights) is {value!r}; choose one of {', '.join(WEIGHTS)}",
                         {"sheet": "Settings"})
    return name


def declared_categories(backend, sheet: str = "Categories"):
    """The Categories sheet: labels in order (column A below its header), or label -> value when column B gives
    values; None without the sheet or when it lists nothing."""
    actual = backend.find_sheet(sheet, required=False)
    if actual is None:
        return None
    block = backend.read_block(actual)
    rows = [(i, r) for i, r in enumerate(block.rows[1:], start=1) if r and not all(is_blank(c) for c in r[:2])]
    if not rows:
        return None
    for i, r in rows:
        if is_blank(r[0]):
            raise InputError(f"sheet {actual}, row {block.row_number(i)} has a value but no category", {"sheet": actual})
    labels = [str(r[0]).strip() for _, r in rows]
    if all(len(r) < 2 or is_blank(r[1]) for _, r in rows):
        return labels
    return pd.Series([r[1] if len(r) > 1 else None for _, r in rows], index=labels, dtype=object)


def agreement_results(ratings, weights, categories, *, pairs: bool = False, confidence: float = 0.95):
    """(coefficients table, pairwise table or None, why not) for a report: an input the agreement coefficients
    cannot use (e.g. ratings on a continuous scale with thousands of values) gives (None, None, the reason)
    instead of stopping the report, whose other sheets stand on their own."""
    from .. import agreement

    try:
        table = agreement.agreement_coefficients(ratings, weights, categories, confidence=confidence)
    except InputError as exc:
        return None, None, f"the agreement coefficients could not be computed: {exc.message}"
    pairwise, r = None, table.attrs.get("n_raters") or 0
    if pairs and r > MAX_PAIR_RATERS:
        table.attrs["note"] = "; ".join(filter(None, [table.attrs.get("note"), (
            f"no Agreement pairs sheet: {r} raters make {r * (r - 1) // 2:,} pairs (listed up to {MAX_PAIR_RATERS} "
            "raters)")]))
    elif pairs and r >= 3:
        pairwise = agreement.pairwise_agreement(ratings, _quoted(table), weights, categories, confidence=confidence)
    return table, pairwise, ""


# ----------------------------------------------------------------------------
# xlcalib agreement FILE
# ----------------------------------------------------------------------------
def _book(path: Path, sheet: str | None):
    """The file as a read-only book (CSV: one sheet; workbooks through the bounded fast reader) and the sheet."""
    if path.suffix.lower() in TEXT_TABLE_SUFFIXES:
        from ..workbook.csv_backend import CsvBook

        book = CsvBook(path, sheet or "Ratings")
        return book, book.sheet_names()[0]
    from ..workbook.reader import FastBook

    book = FastBook(path)
    if sheet is not None:
        return book, book.find_sheet(sheet)
    return book, book.find_sheet("Ratings", required=False) or book.sheet_names()[0]


def read_ratings(backend, sheet: str, subject_column: bool = True) -> tuple[pd.DataFrame, dict]:
    """A ratings sheet -> subjects x raters table (index: sheet row numbers, columns: the header's rater names) and
    rater name -> column letter (to name a bad cell)."""
    block = backend.read_block(sheet)
    rows = [list(r) for r in block.rows]
    while rows and all(is_blank(c) for c in rows[-1]):
        rows.pop()
    if len(rows) < 2:
        raise InputError(f"sheet {sheet} has no ratings below its header row", {"sheet": sheet})
    first = 1 if subject_column else 0
    header = rows[0][first:]
    letters = [column_letter(block.column_number(j + first)) for j in range(len(header))]
    names = [str(h).strip() if not is_blank(h) else f"column {letter}" for h, letter in zip(header, letters)]
    seen = {}
    for name, letter in zip(names, letters):
        if name in seen:
            raise InputError(f"sheet {sheet}: columns {seen[name]} and {letter} are both headed '{name}'; raters need "
                             "their own names", {"sheet": sheet})
        seen[name] = letter
    body = [r[first:] for r in rows[1:]]
    frame = pd.DataFrame(body, columns=names, index=[block.row_number(i) for i in range(1, len(rows))], dtype=object)
    return frame, dict(zip(names, letters))


def _sheet_words(message: str, where: str, letters: dict) -> str:
    """The core's "subject 7, rater 'Ann'" as the cell a user can find ("sheet Ratings, cell C7")."""
    for name, letter in letters.items():
        message = re.sub(rf"subject (\d+), rater {re.escape(repr(name))}",
                         lambda m, letter=letter: f"{where}, cell {letter}{m.group(1)}", message)
    return message


def parse_categories(text: str | None):
    """``--categories "A,B,C"`` (the order) or ``"low=1,mid=2,high=5"`` (label = value for the weights)."""
    if text is None or not text.strip():
        return None
    parts = [p.strip() for p in text.split(",")]
    if any(not p for p in parts):
        raise InputError(f"--categories {text!r} has an empty entry; list the categories separated by commas")
    if not any("=" in p for p in parts):
        return parts
    if not all(p.count("=") == 1 for p in parts):
        raise InputError(f"--categories {text!r}: give every category a value (label=value), or none")
    pairs = [tuple(x.strip() for x in p.split("=")) for p in parts]
    return pd.Series([v for _, v in pairs], index=[k for k, _ in pairs], dtype=object)


def agreement_file(path, out=None, *, sheet: str | None = None, weights: str = "identity", categories=None,
                   confidence: float = 0.95, pairs: bool = False, subject_column: bool = True,
                   rater_sampling: bool = False):
    """Agreement coefficients of a ratings sheet or CSV file; optionally written to *out* (.xlsx: sheets Agreement
    and Agreement pairs; .csv: the coefficients table; .json: both tables and the settings).  ``rater_sampling``
    adds the variance over raters to the coefficients' standard errors (not to the pairs').

    Returns (coefficients table, pairwise table or None, output path or None).  The input is never modified.
    """
    from .. import agreement

    path = Path(path)
    confidence = probability_argument(confidence, "--level")
    if out is not None:
        check_output_differs(path, Path(out))
        if Path(out).suffix.lower() not in (".xlsx", ".csv", ".json"):
            raise InputError(f"write the agreement table to an .xlsx, .csv or .json file, not {Path(out).name}")
    book, actual = _book(path, sheet)
    try:
        ratings, letters = read_ratings(book, actual, subject_column)
    finally:
        if hasattr(book, "close"):
            book.close()
    declared = parse_categories(categories) if isinstance(categories, str) or categories is None else categories
    try:
        table = agreement.agreement_coefficients(ratings, weights, declared, confidence=confidence,
                                                 rater_sampling=rater_sampling)
        pairwise = agreement.pairwise_agreement(ratings, _quoted(table), weights, declared, confidence=confidence) \
            if pairs else None
    except InputError as exc:
        where = path.name if path.suffix.lower() in TEXT_TABLE_SUFFIXES else f"sheet {actual}"
        raise InputError(_sheet_words(exc.message, where, letters), exc.where) from None
    written = _write(path, Path(out), table, pairwise) if out is not None else None
    return table, pairwise, written


def _quoted(table: pd.DataFrame) -> str:
    from ..presentation import headline_agreement

    return headline_agreement(table)[0]


def _write(path: Path, out: Path, table: pd.DataFrame, pairwise) -> Path:
    from ..workbook import write_bytes_atomically
    from ..workbook.text_output import csv_bytes, json_bytes

    suffix = out.suffix.lower()
    scheme = str(table["weights"].iloc[0])
    if suffix == ".xlsx":
        from ..presentation import agreement_pairs_sheet, agreement_sheet
        from ..workbook import new_result_book, save_atomically

        settings = f"file {path.name}, weights {scheme}, interval {100 * table.attrs['confidence']:.0f}%"
        pre = run_preamble("agreement", settings, None)
        book = new_result_book()
        specs = [agreement_sheet(table, pre, weights=scheme)]
        if pairwise is not None:
            specs.append(agreement_pairs_sheet(pairwise, pre))
        for spec in specs:
            book.write_sheet(spec)
        save_atomically(book, out)
    elif suffix == ".csv":
        write_bytes_atomically(csv_bytes(table.reset_index()), out)
    else:
        write_bytes_atomically(json_bytes(_json_document(path, table, pairwise, scheme)), out)
    return out


def _json_document(path: Path, table: pd.DataFrame, pairwise, scheme: str) -> dict:
    from ..workbook.base import neutralise_text

    document = {"coefficients": table.reset_index(), "settings": {
        "input": neutralise_text(path.name), "weights": scheme, "confidence": table.attrs["confidence"],
        "categories": [neutralise_text(str(c)) for c in table.attrs["categories"]],
        "note": neutralise_text(table.attrs["note"]), "quote": _quoted(table)}}
    if pairwise is not None:
        document["pairs"] = pairwise
    return document


def agreement_text(table: pd.DataFrame, pairwise: pd.DataFrame | None = None) -> str:
    """The table for the terminal: the coefficient to quote first with its reason, then the others."""
    from ..presentation import headline_agreement, standard_error_words, verdict_agreement

    key, reason = headline_agreement(table)
    level = f"{100 * table.attrs['confidence']:.0f}%"
    lines = [f"Agreement of {table.attrs['n_raters']} raters on {int(table['n_subjects'].max())} subjects, "
             f"categories {', '.join(map(str, table.attrs['categories']))}:"]
    order = [key] + [k for k in table.index if k != key]
    width = max(len(str(n)) for n in table["name"])
    for k in order:
        r = table.loc[k]
        interval = f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]" if pd.notna(r["ci_low"]) else "[n/a]"
        p = "p < 0.0001" if r["p_value"] < 1e-4 else f"p = {r['p_value']:.4f}" if pd.notna(r["p_value"]) else ""
        verdict = "" if k == "percent_agreement" else verdict_agreement(r["estimate"], r["ci_low"])
        lines.append(f"  {r['name']:<{width}}  {r['estimate']:7.3f}  SE {r['se']:.3f}  {level} {interval}  {p}  "
                     f"{verdict}".rstrip())
        if k == key:
            lines[-1] += "   <- quote this"
    lines.append(f"Why {table.loc[key, 'name']}: {reason}.")
    lines.append(f"Standard errors {standard_error_words(table)}; intervals estimate +- t(n-1) SE, upper end "
                 "capped at 1.")
    if table.attrs.get("note"):
        lines.append(f"Note: {table.attrs['note']}.")
    if pairwise is not None:
        lines.append(f"Pairs of raters ({pairwise['name'].iloc[0] if len(pairwise) else ''}), lowest first:")
        for r in pairwise.sort_values("estimate", kind="mergesort", na_position="first").itertuples(index=False):
            lines.append(f"  {r.rater_1} - {r.rater_2}: {r.estimate:.3f} (SE {r.se:.3f}, {r.n_subjects} subjects)")
    return "\n".join(lines)
