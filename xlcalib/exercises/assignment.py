"""The assignment exercise: allocate the reads of a panel workbook before scoring with
:func:`xlcalib.assign` (``xlcalib assign panel.xlsx``).

Reads the *Assignment* sheet of a panel workbook — side-by-side tables whose
header cells sit in row 1, separated by a blank column:

* Assessors: ``Assessor | Max load [| Min load] [| Subjects]``
* Objects: ``Object | Reads wanted [| Subjects]``
* Conflicts (optional): ``Conflict assessor | Conflict object``

Suitability (optional): a sheet *Suitability* holding an assessors x objects
grid (assessor names down column A, object names across row 1, blank = 0),
or else subject tags on both lists (comma/semicolon separated): suitability
= number of shared tags.

It fills the Evaluations table with one row per allocated read (Score and the
uncertainty column blank = pending) and writes a *Design* sheet comparing the
allocation with the suitability-only one.  Rows that already hold a score are
never touched: they are kept as fixed reads and only the remaining reads are
allocated; earlier pending rows (no score) are re-allocated.  The input file
is never modified: the result goes to a new file, written atomically.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..calibration.design.assignment.problem import MAX_SUITABILITY
from ..calibration.panel.arguments import MAX_COUNT, count_text
from ..cells import column_letter, header_key, is_blank, parse_label, parse_number
from ..errors import InputError
from ..inputs import EVALUATION_COLUMNS, UNCERTAINTY_KINDS, find_columns
from .common import check_output_differs

SHEET = "Assignment"
_TABLES = {
    "assessors": {"name": ("assessor", "assessors", "name"), "max": ("max load", "maximum load", "max reads"),
                  "min": ("min load", "minimum load", "min reads"), "subjects": ("subjects", "subject", "tags", "expertise")},
    "objects": {"name": ("object", "objects", "name"), "reads": ("reads wanted", "reads", "reads per object"),
                "subjects": ("subjects", "subject", "tags", "areas")},
    "conflicts": {"assessor": ("conflict assessor", "assessor"), "object": ("conflict object", "object")},
}


def _groups(header: list) -> list[tuple[int, int]]:
    """(start, stop) column spans of contiguous non-blank header cells."""
    spans, start = [], None
    for j, cell in enumerate(list(header) + [None]):
        if not is_blank(cell) and start is None:
            start = j
        elif is_blank(cell) and start is not None:
            spans.append((start, j))
            start = None
    return spans


def read_assignment(rows: list[list], sheet: str = SHEET):
    """Parse the Assignment sheet's cells -> dict of assessors/objects/conflicts frames (messages name cells)."""
    if not rows:
        raise InputError(f"sheet {sheet} is empty; expected the Assessors and Objects tables with headers in row 1")
    header = rows[0]
    found = _find_tables(header, sheet)
    out, problems = {}, []
    for kind, (start, cols) in found.items():
        required = {"assessors": ("name", "max"), "objects": ("name", "reads"),
                    "conflicts": ("assessor", "object")}[kind]
        missing = [k for k in required if k not in cols]
        if missing:
            raise InputError(f"sheet {sheet}, row 1: the {kind} table starting at {column_letter(start + 1)}1 lacks "
                             f"column(s) {', '.join(missing)}")
        frame = _read_table(rows, cols, sheet, problems)
        if problems:
            continue
        if kind != "conflicts":
            i = _first_repeat(frame["name"])
            if i is not None:
                raise InputError(f"sheet {sheet}, row {frame.attrs['sheet_rows'][i]}: {kind[:-1]} "
                                 f"{frame['name'].iat[i]!r} is listed twice")
            if frame.empty:
                raise InputError(f"sheet {sheet}: the {kind} table has no rows")
        out[kind] = frame
    if problems:
        raise _all_problems(problems)
    return out


def _all_problems(problems: list[str]) -> InputError:
    """Every bad cell of a rule table in one error (the first ten, and how many more)."""
    more = f" ... and {len(problems) - 10} more" if len(problems) > 10 else ""
    return InputError("; ".join(problems[:10]) + more)


def _first_repeat(names: pd.Series) -> int | None:
    """The position of the first name listed a second time, or None."""
    repeated = names.duplicated().to_numpy()
    return int(np.flatnonzero(repeated)[0]) if repeated.any() else None


def _find_tables(header: list, sheet: str) -> dict[str, tuple[int, dict[str, int]]]:
    """Which table each group of header cells is (by its columns) -> {kind: (first column, {field: column})}."""
    found: dict[str, tuple[int, dict[str, int]]] = {}
    for start, stop in _groups(header):
        names = [header_key(h) for h in header[start:stop]]
        kind = ("conflicts" if names and names[0].startswith("conflict") else
                "assessors" if any(n in _TABLES["assessors"]["max"] for n in names) else
                "objects" if any(n in _TABLES["objects"]["reads"] for n in names) else None)
        if kind is None:
            continue
        cols = {}
        for key, aliases in _TABLES[kind].items():
            hits = [start + i for i, n in enumerate(names) if n in aliases]
            if hits:
                cols[key] = hits[0]
        if kind in found:
            raise InputError(f"sheet {sheet}, row 1: two {kind} tables (columns {column_letter(found[kind][0] + 1)} "
                             f"and {column_letter(start + 1)})")
        found[kind] = (start, cols)
    for kind, need in (("assessors", "Assessor | Max load"), ("objects", "Object | Reads wanted")):
        if kind not in found:
            raise InputError(f"sheet {sheet}, row 1: no {kind.title()} table found (header cells {need} ...)")
    return found


def _read_table(rows: list[list], cols: dict[str, int], sheet: str, problems: list[str]) -> pd.DataFrame:
    """One table's rows (blank rows skipped) as a frame; every bad cell is added to *problems*, not raised, so
    all of them are reported at once.  ``attrs["sheet_rows"]`` holds each row's sheet row."""
    header = rows[0]
    data: dict[str, list] = {k: [] for k in cols}
    sheet_rows = []
    for r, row in enumerate(rows[1:], start=2):
        cells = {k: (row[j] if j < len(row) else None) for k, j in cols.items()}
        if all(is_blank(v) for v in cells.values()):
            continue
        for k, v in cells.items():
            where = f"sheet {sheet}, row {r}, column {header[cols[k]]} ({column_letter(cols[k] + 1)}{r})"
            try:
                if k in ("name", "assessor", "object"):
                    data[k].append(parse_label(v, where))
                elif k == "subjects":
                    data[k].append("" if is_blank(v) else str(v))
                else:
                    number = parse_number(v, where, allow_blank=(k == "min"))
                    if not np.isnan(number) and (number < 0 or number > MAX_COUNT or number != int(number)):
                        raise InputError(f"{where} must be a whole number from 0 to {MAX_COUNT:,}, not "
                                         f"{count_text(number)}")
                    data[k].append(0 if np.isnan(number) else int(number))
            except InputError as exc:  # report every bad cell at once
                problems.append(exc.message)
                data[k].append(None)
        sheet_rows.append(r)
    frame = pd.DataFrame(data)
    frame.attrs["sheet_rows"] = sheet_rows
    return frame


def _tags(text: str) -> set[str]:
    return {t.strip().lower() for t in re.split(r"[,;]", text or "") if t.strip()}


def suitability_from_tags(assessors: pd.DataFrame, objects: pd.DataFrame) -> np.ndarray | None:
    """Number of shared subject tags per (assessor, object); None when no subjects are given."""
    if "subjects" not in assessors or "subjects" not in objects:
        return None
    a_tags = [_tags(t) for t in assessors["subjects"]]
    o_tags = [_tags(t) for t in objects["subjects"]]
    vocab = sorted(set().union(*a_tags, *o_tags))
    if not vocab:
        return None
    pos = {t: i for i, t in enumerate(vocab)}
    Ma = np.zeros((len(a_tags), len(vocab)))
    Mo = np.zeros((len(o_tags), len(vocab)))
    for i, tags in enumerate(a_tags):
        Ma[i, [pos[t] for t in tags]] = 1
    for i, tags in enumerate(o_tags):
        Mo[i, [pos[t] for t in tags]] = 1
    return Ma @ Mo.T


def read_suitability_grid(rows: list[list], a_names, o_names, sheet: str = "Suitability") -> np.ndarray:
    """Assessors x objects grid sheet -> A x O array (blank = 0), every bad cell named."""
    if not rows or len(rows) < 2:
        raise InputError(f"sheet {sheet} is empty; expected object names in row 1 and assessor names in column A")
    header = rows[0]
    col_of = {}
    for j, cell in enumerate(header[1:], start=1):
        if is_blank(cell):
            continue
        name = parse_label(cell, f"sheet {sheet}, row 1 ({column_letter(j + 1)}1)")
        if name not in o_names:
            raise InputError(f"sheet {sheet}, cell {column_letter(j + 1)}1: {name!r} is not an object of the Assignment sheet")
        col_of[j] = o_names.index(name)
    S = np.zeros((len(a_names), len(o_names)))
    problems = []
    for r, row in enumerate(rows[1:], start=2):
        if all(is_blank(c) for c in row):
            continue
        name = parse_label(row[0], f"sheet {sheet}, row {r}, column A (A{r})")
        if name not in a_names:
            raise InputError(f"sheet {sheet}, cell A{r}: {name!r} is not an assessor of the Assignment sheet")
        i = a_names.index(name)
        for j, o in col_of.items():
            value = row[j] if j < len(row) else None
            try:
                number = parse_number(value, f"sheet {sheet}, row {r}, cell {column_letter(j + 1)}{r}", allow_blank=True)
            except InputError as exc:
                problems.append(exc.message)
                continue
            if number < 0 or number > MAX_SUITABILITY:
                problems.append(f"sheet {sheet}, cell {column_letter(j + 1)}{r}: suitability must be from 0 to "
                                f"{MAX_SUITABILITY:g} (only ratios matter: divide every value by a common factor), "
                                f"not {number:g}")
            elif not np.isnan(number):
                S[i, o] = number
    if problems:
        raise InputError("; ".join(problems[:10]) + (f" ... and {len(problems) - 10} more" if len(problems) > 10 else ""))
    return S


#: The columns of the rule files ``xlcalib next-reads`` takes for a CSV panel (``--conflicts``, ``--loads``,
#: ``--subjects``): the Assignment sheet's tables as files, headers matched like the sheet's.
RULE_FILES = {
    "conflicts": {"assessor": ("assessor", "conflict assessor"), "object": ("object", "conflict object")},
    "loads": {"name": ("assessor", "name"), "max": _TABLES["assessors"]["max"] + ("load",)},
    "subjects": {"name": ("name", "assessor", "object"), "subjects": _TABLES["assessors"]["subjects"] + ("areas",)},
}


def read_rules_file(path, kind: str):
    """One rule file for next reads: conflicts -> (assessor, object) frame; loads -> {assessor: max load};
    subjects -> {name: subjects}.  A header row names the columns (see :data:`RULE_FILES`); every bad cell
    is reported at once, by file, row and column."""
    from ..workbook.csv_backend import CsvBook

    path = Path(path)
    option = f"--{kind}"
    if path.suffix.lower() != ".csv":
        raise InputError(f"{option}: give a .csv file (header row, one rule per row), not {path.name}")
    rows = CsvBook(path, sheet=path.name).read_block(path.name).rows
    header = [header_key(h) for h in rows[0]] if rows else []
    spec = RULE_FILES[kind]
    cols = {key: next(j for j, h in enumerate(header) if h in aliases)
            for key, aliases in spec.items() if any(h in aliases for h in header)}
    missing = [aliases[0].title() for key, aliases in spec.items() if key not in cols]
    if missing:
        raise InputError(f"{path.name}, row 1 ({option}): no column headed {' or '.join(missing)}; the header row "
                         f"needs {', '.join(a[0].title() for a in spec.values())}")
    problems: list[str] = []
    frame = _read_table(rows, cols, path.name, problems)
    if problems:
        raise _all_problems([p.replace(f"sheet {path.name}, ", f"{path.name}, ") for p in problems])
    if kind == "conflicts":
        return frame[["assessor", "object"]]
    i = _first_repeat(frame["name"])
    if i is not None:
        raise InputError(f"{path.name}, row {frame.attrs['sheet_rows'][i]}: {frame['name'].iat[i]!r} is listed twice")
    return dict(zip(frame["name"], frame["max" if kind == "loads" else "subjects"]))


def assignment_rules(book) -> dict | None:
    """What next reads must keep, from an openpyxl workbook's Assignment sheet; None when it has none.

    ``conflicts`` (an assessor, object frame or None), ``max_load`` ({assessor: max load}), ``suitability``
    (the Suitability sheet's grid as a frame, else the Subjects columns as {name: subjects}, else None) and
    ``source`` (words for the report).  The tables are those ``xlcalib assign`` reads.
    """
    names = {n.lower(): n for n in book.sheetnames}
    name = names.get(SHEET.lower())
    if name is None or not hasattr(book[name], "iter_rows"):
        return None
    tables = read_assignment([list(r) for r in book[name].iter_rows(values_only=True)], name)
    assessors, objects = tables["assessors"], tables["objects"]
    a_names, o_names = list(assessors["name"]), list(objects["name"])
    conflicts = _conflicts(tables.get("conflicts"), a_names, o_names, name)
    grid = names.get("suitability")
    if grid is not None and hasattr(book[grid], "iter_rows"):
        S = read_suitability_grid([list(r) for r in book[grid].iter_rows(values_only=True)], a_names, o_names, grid)
        suitability, what = pd.DataFrame(S, index=a_names, columns=o_names), f"the suitability grid on sheet {grid}"
    else:
        subjects = {n: t for table in (assessors, objects) if "subjects" in table
                    for n, t in zip(table["name"], table["subjects"]) if _tags(t)}
        suitability, what = (subjects, "the Subjects columns") if subjects else (None, "")
    parts = [f"{len(conflicts)} conflict(s)" if conflicts is not None and len(conflicts) else "no conflicts",
             f"max loads of {len(a_names)} assessors", f"subjects from {what}" if what else "no subjects"]
    return {"conflicts": conflicts, "max_load": dict(zip(assessors["name"], assessors["max"])),
            "suitability": suitability, "source": f"sheet {name}: " + ", ".join(parts)}


def _evaluation_columns(header: list, sheet: str) -> dict[str, int]:
    """The evaluation columns of the Evaluations sheet the assignment fills (headers as the evaluations check
    reads them); the uncertainty column's position, or None."""
    cols = find_columns(header, EVALUATION_COLUMNS, f"sheet {sheet}, header row 1")
    missing = [k for k in ("assessor", "object", "score") if k not in cols]
    if missing:
        raise InputError(f"sheet {sheet}, header row 1: missing column(s) {', '.join(m.title() for m in missing)}")
    cols["uncertainty"] = next((cols[k] for k in UNCERTAINTY_KINDS if k in cols), None)
    return cols


def assign_file(path, out=None, *, share: float = 0.95, seed: int = 0, sheet: str = "Evaluations",
                time_limit: float = 120.0):
    """Allocate the pending reads of a panel workbook; write ``<stem>_assigned.xlsx``. Returns (Assignment, path).

    Besides the allocation at ``share`` it computes the trade-off table (suitability kept and assessor
    overlap at the shares of :data:`xlcalib.calibration.design.assignment.TRADEOFF_SHARES`) for the Design sheet:
    one continuation, so the table costs about what the smallest share alone costs (5-15 s for 24 assessors x
    150 objects; one to two minutes per share for 100 x 1,000).  ``time_limit`` bounds the whole run: a
    larger panel's shares then stop early, and the Design sheet says which.

    Running it again on its own output re-allocates the pending rows (the rows without a score) whole: each
    is rewritten or cleared, so no earlier pair, SD or level survives (:func:`_write_allocation`).
    """
    from ..calibration import assign
    from ..calibration.design.assignment import TRADEOFF_SHARES
    from ..workbook import OpenpyxlBook, open_workbook, save_atomically

    path = Path(path)
    out = Path(out) if out else path.with_name(f"{path.stem}_assigned.xlsx")
    check_output_differs(path, out)
    if out.suffix.lower() not in (".xlsx", ".xlsm"):
        raise InputError(f"write the allocation to an .xlsx file, not {out.name}")
    if out.suffix.lower() == ".xlsm" and path.suffix.lower() != ".xlsm":  # the file type follows the macros
        raise InputError(f"{out.name}: {path.name} has no macros, and Excel refuses an .xlsm file without them; "
                         "write the allocation to an .xlsx file")
    keep_vba = path.suffix.lower() == ".xlsm" and out.suffix.lower() == ".xlsm"
    book = open_workbook(path, data_only=False, keep_vba=keep_vba)
    values = open_workbook(path, data_only=True)
    backend = OpenpyxlBook(book, values_book=values)
    name = backend.find_sheet(SHEET)
    tables = read_assignment([list(r) for r in values[name].iter_rows(values_only=True)], name)
    assessors, objects = tables["assessors"], tables["objects"]
    a_names, o_names = list(assessors["name"]), list(objects["name"])
    conflicts = _conflicts(tables.get("conflicts"), a_names, o_names, name)
    S, source = _suitability(backend, values, assessors, objects)
    # the Evaluations table: scored rows are kept as they are; everything else is a free slot
    ev_name = backend.find_sheet(sheet)
    header = [c.value for c in values[ev_name][1]]
    cols = _evaluation_columns(header, ev_name)
    fixed, free = _scored_rows(values[ev_name], book[ev_name], header, cols, a_names, o_names, name)
    min_load = assessors["min"].to_numpy() if "min" in assessors else None
    result = assign(a_names, o_names, objects["reads"].to_numpy(), assessors["max"].to_numpy(), min_load=min_load,
                    conflicts=conflicts, suitability=S, min_suitability_share=share, seed=seed,
                    fixed=fixed or None, time_limit=time_limit, tradeoff_shares=TRADEOFF_SHARES)
    new = result.allocation
    if "fixed" in new:
        new = new[~new["fixed"]]
    _write_allocation(backend, ev_name, header, cols, free, new)
    result.stats["suitability_source"] = source
    write_design_sheet(backend, result, source)
    save_atomically(book, out)
    return result, out


def _conflicts(conflicts: pd.DataFrame | None, a_names: list, o_names: list, sheet: str) -> pd.DataFrame | None:
    """The Conflicts table's pairs, each name checked against the Assessors and Objects tables."""
    if conflicts is None:
        return None
    rows = conflicts.attrs["sheet_rows"]
    for k, (a, o) in enumerate(zip(conflicts["assessor"], conflicts["object"])):
        if a not in a_names:
            raise InputError(f"sheet {sheet}, row {rows[k]}: conflict assessor {a!r} is not in the Assessors table")
        if o not in o_names:
            raise InputError(f"sheet {sheet}, row {rows[k]}: conflict object {o!r} is not in the Objects table")
    return conflicts[["assessor", "object"]]


def _suitability(backend, values, assessors: pd.DataFrame, objects: pd.DataFrame) -> tuple[np.ndarray | None, str]:
    """(suitability matrix or None, where it came from): the Suitability grid sheet, else shared subject tags."""
    a_names, o_names = list(assessors["name"]), list(objects["name"])
    suit_sheet = backend.find_sheet("Suitability", required=False)
    if suit_sheet is not None:
        S = read_suitability_grid([list(r) for r in values[suit_sheet].iter_rows(values_only=True)], a_names, o_names,
                                  suit_sheet)
        return S, f"grid on sheet {suit_sheet}"
    S = suitability_from_tags(assessors, objects)
    return S, "shared subject tags" if S is not None else "none given"


def _is_formula(cell) -> bool:
    return cell.data_type == "f" or type(cell.value).__name__ in ("ArrayFormula", "DataTableFormula")


def _scored_rows(ws_values, ws_formulas, header: list, cols: dict, a_names: list, o_names: list, sheet: str):
    """(fixed (assessor, object) pairs of the rows that hold a score, sheet rows free for allocated reads).

    A score is a number or a formula: a formula whose value was never calculated (a file written by a
    program, never opened in Excel) is a score all the same, its row kept, never taken for a free slot."""
    ev_name = ws_values.title
    fixed, free = [], []
    score_column = cols["score"] + 1
    for r in range(2, max(ws_values.max_row, ws_formulas.max_row) + 1):
        get = lambda k: ws_values.cell(row=r, column=cols[k] + 1).value  # noqa: E731
        formula = _is_formula(ws_formulas.cell(row=r, column=score_column))
        if is_blank(get("score")) and not formula:
            free.append(r)
            continue
        where = lambda k: f"sheet {ev_name}, row {r}, column {header[cols[k]]} ({column_letter(cols[k] + 1)}{r})"  # noqa: E731
        if not (formula and get("score") is None):  # an uncalculated formula's value is unknown, its read is not
            parse_number(get("score"), where("score"))
        a, o = parse_label(get("assessor"), where("assessor")), parse_label(get("object"), where("object"))
        if a not in a_names:
            raise InputError(f"{where('assessor')}: {a!r} (scored) is not in the Assessors table of sheet {sheet}")
        if o not in o_names:
            raise InputError(f"{where('object')}: {o!r} (scored) is not in the Objects table of sheet {sheet}")
        fixed.append((a, o))
    if len(set(fixed)) < len(fixed):
        dup = pd.Series(fixed).duplicated()
        raise InputError(f"sheet {ev_name}: assessor {fixed[int(np.flatnonzero(dup)[0])][0]!r} scored object "
                         f"{fixed[int(np.flatnonzero(dup)[0])][1]!r} twice")
    return fixed, free


def _write_allocation(backend, sheet: str, header: list, cols: dict, free: list[int], new: pd.DataFrame) -> None:
    """Allocated reads into the free rows in order, then rows appended below the last; leftover free rows are
    cleared.  A free row is rewritten whole: its typed cells (an earlier pair, its SD or level, a group) are
    cleared and only formulas stay, which follow the row's new names.  Names are written as text, never as
    formulas.  Appended rows join the Excel table with its formats and drop-down lists."""
    ws = backend.book[sheet]
    last = max(ws.max_row, backend.values_book[sheet].max_row if backend.values_book is not None else 0)
    slots = free + list(range(last + 1, last + 1 + max(0, len(new) - len(free))))
    width = max((j + 1 for j, h in enumerate(header) if not is_blank(h)), default=0)
    if slots and slots[-1] > last:
        backend.fit_table(sheet, slots[-1], width)
    names = dict(zip(slots, zip(new["assessor"], new["object"])))
    for r in slots:
        pair = names.get(r)
        row = [None] * width
        if pair is not None:
            row[cols["assessor"]], row[cols["object"]] = pair
        keep = {j for j in range(width) if _is_formula(ws.cell(row=r, column=j + 1))
                and j not in (cols["assessor"], cols["object"])}
        start = 0
        for j in sorted(keep) + [width]:  # contiguous runs between the formulas that stay
            if j > start:
                backend.write_values(sheet, r, start + 1, [row[start:j]])
            start = j + 1


def design_verdict(result, suitability_source: str = "") -> list[str]:
    """Plain-words lines above the Design table (the CLI prints them): the allocation, its assessor overlap in
    :func:`~xlcalib.calibration.overlap_verdict`'s words, the trade-off against the suitability share, and
    how the linking phase ended."""
    from ..calibration import overlap_verdict

    rep, base, st = result.report, result.baseline, result.stats
    n_fixed = int(result.allocation["fixed"].sum()) if "fixed" in result.allocation else 0
    suitability_source = suitability_source or st.get("suitability_source", "")
    lines = [f"Allocation of {int(rep.reads.sum())} reads ({n_fixed} already scored, kept) to "
             f"{int((rep.loads > 0).sum())} assessors; suitability: {suitability_source or 'none given'}."]
    if rep.n_components > 1:
        lines.append(f"Warning: the allocation splits the assessors into {rep.n_components} groups that share no object; "
                     "their standards cannot be compared. Raise loads or lower the suitability share.")
    elif st.get("has_suitability"):
        gain = np.sqrt(rep.mu2 / base.mu2) if base.mu2 > 0 else float("inf")
        lines.append(
            f"It keeps {100 * rep.suitability_share:.1f}% of the best possible suitability (at least "
            f"{100 * st['min_suitability_share']:.0f}% asked); assessor overlap mu2 = {rep.mu2:.3f}: "
            f"{overlap_verdict(rep.mu2)} (suitability only: mu2 = {base.mu2:.3f}"
            + (", disconnected" if base.n_components > 1 else "") + "); calibration's error bounds are "
            + (f"{gain:.1f}x tighter." if np.isfinite(gain) else "finite instead of unbounded."))
    else:
        lines.append(f"Without suitability the allocation is balanced: assessor overlap mu2 = {rep.mu2:.3f}: "
                     f"{overlap_verdict(rep.mu2)}.")
    lines += _tradeoff_lines(result.tradeoff)
    if st.get("has_suitability") and not st.get("planned_confidence"):
        lines.append("mu2 here counts every read as equally sure; calibrate weighs reads by their confidence, so if "
                     "reads outside an assessor's subjects are scored Low, the scored panel's mu2 will be lower.")
    lines.append(f"Linking: {st['steps']} LP steps in {st['rounds']} rounds and {st['swaps']} swaps, stopped: "
                 f"{st['stopped']} (seed {st['seed']}; {st['seconds']:.1f} s in all).")
    return lines


def _tradeoff_lines(tradeoff: pd.DataFrame) -> list[str]:
    """The trade-off in one line (share kept -> mu2, verdict word), the smallest cost of a good overlap, and
    which shares the time limit cut short."""
    from ..calibration import overlap_verdict

    if tradeoff is None or len(tradeoff) < 2:
        return []
    rows = tradeoff.to_dict("records")
    parts = [f"{100 * r['suitability share']:.0f}% -> {r['mu2']:.2f} {overlap_verdict(r['mu2']).split(':')[0]}"
             for r in rows]
    lines = ["Trade-off (suitability kept -> mu2, assessor overlap): " + ", ".join(parts) + "."]
    good = [r for r in rows if overlap_verdict(r["mu2"]) == overlap_verdict(1.0)]
    if good:
        lines.append(f"The largest share with a {overlap_verdict(1.0)} overlap: {100 * good[0]['minimum share']:.0f}% "
                     f"(xlcalib assign --share {good[0]['minimum share']:g}).")
    else:
        lines.append(f"No share tried reaches a {overlap_verdict(1.0)} overlap: raise loads or reads per object, or "
                     "widen the assessors' subjects.")
    cut = [f"{r['minimum share']:g}" for r in rows if str(r["stopped"]).startswith("time limit")]
    if cut:
        lines.append(f"Shares {', '.join(cut)} stopped at the time limit: their overlap could still rise with more time.")
    return lines


def write_design_sheet(backend, result, suitability_source: str = "") -> None:
    """The Design sheet (its look: :func:`xlcalib.presentation.design_sheet`)."""
    from ..presentation import design_sheet

    backend.write_sheet(design_sheet(result.comparison(), result.tradeoff,
                                     design_verdict(result, suitability_source)))
