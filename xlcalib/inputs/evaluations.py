"""The evaluations table, checked: messy sheet rows -> a clean panel, every problem at once, by cell.

This module knows the evaluations sheet -- its header spellings, pending rows (allocated, not yet
scored), the workbook's own scale, lists and levels -- and reports all its problems in one pass
(:class:`~xlcalib.inputs.Problem`, collected in a :class:`~xlcalib.inputs.PanelInput`;
:class:`~xlcalib.errors.InputProblems` when any is an error), each named by sheet and cell.  Its columns
are read by :mod:`xlcalib.inputs.columns`; :func:`xlcalib.inputs.read_panel` gives it a workbook's lists
and scale.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..cells import column_letter, is_blank, merged_range_of, parse_label, parse_number
from ..errors import InputError
from .columns import cell_in_words, cell_problem, label_codes, label_column, number_column, text_series
from .names import did_you_mean, name_key, suggest_names
from .problems import PanelInput, Problem
from .table import EVALUATION_COLUMNS, UNCERTAINTY_KINDS, RawTable, find_columns, table_from_block
from .values import Scale, ValueReading, is_symbol, read_values

#: Each evaluation column's title in messages ("column Score (C12)").
_TITLES = {"assessor": "Assessor", "object": "Object", "score": "Score", "sd": "SD",
           "confidence": "Confidence", "level": "Level"}


def _first_cells(labels: np.ndarray, rows: np.ndarray, mask: np.ndarray) -> dict:
    """For each distinct label under *mask*: (first sheet row, count)."""
    import pandas as pd

    sub = pd.DataFrame({"label": labels[mask], "row": rows[mask]})
    if sub.empty:
        return {}
    grouped = sub.groupby("label", sort=False)["row"].agg(["min", "size"])
    return {name: (int(r), int(c)) for name, (r, c) in zip(grouped.index, grouped.to_numpy())}


def check_evaluations(table: RawTable, *, uncertainty: str | None = None, scale: tuple | None = None,
                      assessors: Sequence[tuple[str, str]] | None = None,
                      objects: Sequence[tuple[str, str]] | None = None,
                      levels: Sequence[str] | None = None, scale_where: str = "sheet Settings") -> PanelInput:
    """Check an evaluations table column by column and collect every problem at once.

    Rules, each reported by cell in the words of :func:`parse_number` /
    :func:`parse_label` ("sheet Evaluations, row 12, column Score (C12) is the
    text '3,5' with a decimal comma ..."):

    * fully blank rows are skipped; a row with an assessor and an object but no
      score yet is **pending** (a warning; listed, left out of the fit; its
      uncertainty may be blank);
    * any other blank, text, logical, date, error or never-calculated cell in
      a needed column is an error; names holding control characters or longer
      than an Excel cell are errors;
    * SDs and confidences must be > 0;
    * ``scale`` (min, max): scores outside it are errors ("75 typed for 7.5?"); a letter-grade ladder
      (:class:`~.values.Scale` with symbols, best first: "A, B, C, D") reads the scores as grades, higher = better,
      and its ends are the scale's; without one a column of grades only (A, AB, B+ ...) is read on the ladder
      the grades present make, and the checks say so;
    * ``assessors`` / ``objects``: the listed names with their cells
      (``("Dr Chen Wei", "Assessors!A5")``); a name not on its list is an error
      with a suggestion (same apart from case and spaces, or one typing slip);
      listed names without a score are warnings; names on a list (or, without
      a list, in the table) that differ only in case or spaces are warnings;
    * ``levels``: level names (case-insensitive) a Level column may use;
    * a pair (assessor, object) given twice is an error naming both rows.

    Returns a :class:`PanelInput`; call ``raise_errors()`` to stop on errors.
    The work is vectorised (numpy/pandas; Python only per distinct value and per
    bad cell), so a clean 10^6-row table is checked in well under a second.
    """
    columns, kind = _evaluation_columns(table, uncertainty)
    grades = scale if isinstance(scale, Scale) and scale.symbols else None
    if isinstance(scale, Scale):  # a ladder's grades are checked as they are read; its numbers are its ends
        scale = (float(scale.low), float(scale.high)) if grades is not None else scale.for_calibration()
    check = _TableCheck(table, columns, kind, np.asarray(table.row_numbers, dtype=np.intp),
                        list(getattr(table, "notes", ())), grades)
    cells = _read_evaluation_columns(check)
    _grades_note(check)
    a, o, s, u = cells.assessor, cells.object, cells.score, cells.uncertainty
    if kind in ("sd", "confidence"):
        _check_positive(check, u, cells.ok)
    if scale is not None and grades is None:
        _check_scale(check, s, cells.ok, scale, scale_where)
    if kind == "level" and levels is not None:
        _check_levels(check, u, cells.ok, levels)
    for name, labels, listed, word in (("assessor", a, assessors, "Assessors"), ("object", o, objects, "Objects")):
        if listed is not None and len(listed):
            _check_listed_names(check, name, labels, listed, word, cells)
        elif cells.allocated.any():
            _check_name_spellings(check, name, labels, word, cells.allocated)
    if cells.allocated.any():
        _check_repeated_pairs(check, a, o, cells.allocated)
    _report_pending(check, a, o, cells)
    settings = {"scale": tuple(scale) if scale is not None else None,
                "assessors": len(assessors) if assessors else None, "objects": len(objects) if objects else None,
                "levels": list(levels) if levels is not None else None}
    return _panel_input(check, cells, settings)


def _evaluation_columns(table: RawTable, uncertainty: str | None) -> tuple[dict[str, int], str]:
    """Positions of the evaluation columns in the header row, and the uncertainty column's kind; InputError when a
    needed column is missing or the uncertainty column is ambiguous."""
    sheet = table.sheet
    columns = find_columns(table.header, EVALUATION_COLUMNS, f"sheet {sheet}, header row {table.header_row}")
    missing = [name for name in ("assessor", "object", "score") if name not in columns]
    if missing:
        raise InputError(
            f"sheet {sheet}, header row {table.header_row}: missing column(s) {', '.join(m.title() for m in missing)} "
            f"(found: {', '.join(str(h) for h in table.header if not is_blank(h)) or 'nothing'})", {"sheet": sheet})
    present = [kind for kind in UNCERTAINTY_KINDS if kind in columns]
    if uncertainty is not None:
        if uncertainty not in columns:
            raise InputError(f"sheet {sheet}: no '{uncertainty}' column in header row {table.header_row}")
        return columns, uncertainty
    if len(present) == 1:
        return columns, present[0]
    if not present:
        raise InputError(f"sheet {sheet}, header row {table.header_row}: add one uncertainty column: SD, Confidence "
                         "or Level", {"sheet": sheet})
    raise InputError(
        f"sheet {sheet}, header row {table.header_row}: found several uncertainty columns "
        f"({', '.join(p.upper() if p == 'sd' else p.title() for p in present)}); keep exactly one", {"sheet": sheet})


@dataclass
class _TableCheck:
    """One evaluations table under check: where its columns are, its sheet rows, and the problems found so far."""

    table: RawTable
    columns: dict[str, int]
    kind: str
    rows: np.ndarray
    problems: list[Problem]
    #: a declared letter-grade ladder the scores are read through (None: numbers, or letters read by inference)
    grades: Scale | None = None
    #: how the score column's letter grades were read, when it held them
    graded: ValueReading | None = None

    @property
    def sheet(self) -> str:
        return self.table.sheet

    def letter(self, name: str) -> str:
        """The column letter of evaluation column *name* ("score" -> "C")."""
        return column_letter(self.table.column_numbers[self.columns[name]])

    def cell(self, name: str, i: int) -> str:
        """The cell of column *name* in body row *i* ("C12")."""
        return f"{self.letter(name)}{int(self.rows[i])}"

    def where(self, name: str, i: int) -> str:
        """The cell in words: "sheet Evaluations, row 12, column Score (C12)"."""
        return cell_in_words(self.sheet, _TITLES[name], self.letter(name), int(self.rows[i]))

    def add(self, severity: str, name: str, i: int | None, message: str, column: str | None = None) -> None:
        """Record a problem at column *name* of body row *i* (no cell when *i* is None)."""
        self.problems.append(Problem(severity, self.sheet, self.cell(name, i) if i is not None else "",
                                     int(self.rows[i]) if i is not None else None, column or _TITLES[name], message))


@dataclass
class _EvaluationCells:
    """The four evaluation columns read (labels, numbers or levels) and what each row is."""

    assessor: np.ndarray
    object: np.ndarray
    score: np.ndarray
    uncertainty: np.ndarray
    #: rows naming a readable assessor and object, whatever their score
    allocated: np.ndarray
    #: allocated rows without a score yet
    pending: np.ndarray
    #: rows with every needed cell read: the evaluations
    ok: np.ndarray


def _read_evaluation_columns(check: _TableCheck) -> _EvaluationCells:
    """Read the assessor, object, score and uncertainty columns, reporting bad cells and the blank needed cells of
    rows that are neither blank nor pending, and sort the rows into allocated, pending and complete."""
    table, columns, kind, problems = check.table, check.columns, check.kind, check.problems
    read = {}
    for name in ("assessor", "object", "score", kind):
        read_column = label_column if name in ("assessor", "object", "level") else number_column
        values = table.columns[columns[name]]
        if name == "score" and (check.grades is not None or _all_grades(values)):
            read[name] = _grade_column(check, values)
            continue
        read[name] = read_column(values, table, columns[name], _TITLES[name], problems)
    (a, a_blank, a_bad), (o, o_blank, o_bad) = read["assessor"], read["object"]
    (s, s_blank, s_bad), (u, u_blank, u_bad) = read["score"], read[kind]
    empty = a_blank & o_blank & s_blank & u_blank
    allocated = ~a_blank & ~o_blank & ~a_bad & ~o_bad
    pending = allocated & s_blank
    scored = ~empty & ~pending
    for name in ("assessor", "object", "score", kind):  # blank needed cells of rows neither blank nor pending
        parser = parse_label if name in ("assessor", "object", "level") else parse_number
        for i in np.flatnonzero(scored & read[name][1]):
            problems.append(cell_problem(table, columns[name], _TITLES[name], int(i), parser, None))
    ok = scored & ~(a_blank | o_blank | s_blank | u_blank | a_bad | o_bad | s_bad | u_bad)
    return _EvaluationCells(a, o, s, u, allocated, pending, ok)


def _distinct(values) -> tuple[np.ndarray, list]:
    """(each cell's code, the distinct cells): the per-cell work in bulk, so checks run once per distinct value."""
    import pandas as pd

    cells = np.empty(len(values), dtype=object)
    cells[:] = values
    codes, uniques = pd.factorize(cells, use_na_sentinel=False)
    return codes, list(uniques)


def _all_grades(values) -> bool:
    """Whether a score column holds letter grades: every filled cell text, at least one a grade symbol (A, AB,
    B+) -- other text among them ("N/A") is then an error naming its cell, with the grades read.  A column the
    reader parsed as numbers, or one without text, is decided at once (no work per cell)."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "biuf":
        return False
    values = values if isinstance(values, list) else list(values)
    if str not in set(map(type, values)):
        return False
    filled = [v for v in _distinct(values)[1] if not is_blank(v)]
    return all(isinstance(v, str) for v in filled) and any(is_symbol(v) for v in filled)


def _grade_column(check: _TableCheck, values):
    """Letter grades as numbers, higher = better (floats, blank mask, problem mask): through the declared ladder,
    else through the one the grades present make (A best; :func:`~.values.infer_symbol_scale`), said in the
    checks.  A grade off the ladder, or a number among letters, is an error naming its cell."""
    values = values if isinstance(values, list) else list(values)
    n = len(values)
    codes, uniques = _distinct(values)
    blank = np.array([is_blank(v) for v in uniques], dtype=bool)[codes] if n else np.zeros(0, dtype=bool)
    filled = np.flatnonzero(~blank)
    reading = read_values([values[i] for i in filled], check.grades, "score")
    out = np.full(n, np.nan)
    out[filled] = reading.numbers
    bad = np.zeros(n, dtype=bool)
    for k, reason in reading.bad.items():
        i = int(filled[k])
        bad[i] = True
        check.add("error", "score", i, f"{check.where('score', i)}: {reason}")
    check.graded = reading
    return out, blank, bad


def _grades_note(check: _TableCheck) -> None:
    """Say how letter grades were read (a note on the Checks sheet), so a secretary can see and correct it."""
    scale = check.graded.scale if check.graded is not None else None
    if scale is None or not scale.symbols:
        return
    listed = ", ".join(f"{sym}={value:g}" for sym, value in sorted(scale.symbols, key=lambda sv: -sv[1]))
    how = "on the ladder declared" if scale.source == "declared" else (
        f"on a ladder made from the grades present: {check.graded.inferred}. Declare the ladder (--scale "
        "'A, B, C, D', best first, or the Settings row Score scale points) if a grade was never given or the "
        "order differs")
    check.add("warning", "score", None, f"sheet {check.sheet}: scores read as letter grades, higher = better: "
                                        f"{listed}, {how}")


def _check_positive(check: _TableCheck, u: np.ndarray, ok: np.ndarray) -> None:
    """SDs and confidences must be greater than 0."""
    kind = check.kind
    word = "an SD" if kind == "sd" else "a confidence"
    for i in np.flatnonzero(ok & (u <= 0)):
        check.add("error", kind, i, f"{check.where(kind, i)} is {u[i]:g}; {word} must be greater than 0")


def _check_scale(check: _TableCheck, s: np.ndarray, ok: np.ndarray, scale: tuple, scale_where: str) -> None:
    """Scores outside the workbook's score scale, with a hint when a missed decimal point explains one; on a form's
    points (three or more numbers: 1, 3, 6, 8) a score between them is refused too."""
    lo, hi = min(scale), max(scale)
    if len(scale) > 2:
        points = np.asarray(sorted(scale), dtype=float)
        nearest = points[np.argmin(np.abs(s[:, None] - points[None, :]), axis=1)] if s.size else s
        for i in np.flatnonzero(ok & (s >= lo) & (s <= hi) & (np.abs(s - nearest) > 1e-9 * np.maximum(1, np.abs(s)))):
            check.add("error", "score", i, f"{check.where('score', i)} is {s[i]:g}, not one of the scale's points "
                                           f"{', '.join(f'{p:g}' for p in points)} ({scale_where})")
    for i in np.flatnonzero(ok & ((s < lo) | (s > hi))):
        hint = ""
        for factor in (10.0, 100.0) if float(s[i]).is_integer() else ():  # 75 for 7.5: a missed decimal point
            if lo <= s[i] / factor <= hi:
                hint = f" ({s[i] / factor:g} typed as {s[i]:g}?)"
                break
        check.add("error", "score", i, f"{check.where('score', i)} is {s[i]:g}, outside the score scale {lo:g} to "
                                       f"{hi:g} ({scale_where}){hint}")


def _check_levels(check: _TableCheck, u: np.ndarray, ok: np.ndarray, levels: Sequence[str]) -> None:
    """Level names the Levels table does not hold (case-insensitive), each once with its first cell and a guess."""
    import pandas as pd

    kind, rows = check.kind, check.rows
    known = {str(name).strip().lower(): str(name) for name in levels}
    unknown = np.zeros(len(rows), dtype=bool)
    if ok.any():
        keys = pd.Series(u[ok], dtype=object).str.lower().to_numpy(dtype=object)
        unknown[np.flatnonzero(ok)] = ~pd.Series(keys).isin(list(known)).to_numpy()
    for name, (row, count) in _first_cells(u, rows, unknown).items():
        i = int(np.flatnonzero(rows == row)[0])
        guesses = suggest_names(name.lower(), list(known))
        check.add("error", kind, i, f"Level '{name}' ({check.sheet}!{check.cell(kind, i)}{_more_rows(count)}) is not "
                                    f"in the Levels table ({', '.join(known.values())})"
                  + (f"; {did_you_mean([known[g] for g in guesses])}" if guesses else ""))


def _more_rows(count: int) -> str:
    """' and 2 more rows' after the first cell of a name found on *count* rows."""
    return f" and {count - 1} more row{'s' if count > 2 else ''}" if count > 1 else ""


def _check_listed_names(check: _TableCheck, name: str, labels: np.ndarray, listed: Sequence[tuple[str, str]],
                        word: str, cells: _EvaluationCells) -> None:
    """Against the workbook's list of assessors or objects: names not on it (errors, with a guess), listed names
    without a score (warnings), and list entries that differ only in case or spaces (warnings)."""
    import pandas as pd

    title, used, rows = _TITLES[name], cells.allocated, check.rows
    names = [str(n) for n, _ in listed]
    on_list = np.zeros(len(rows), dtype=bool)
    if used.any():
        on_list[np.flatnonzero(used)] = pd.Series(labels[used], dtype=object).isin(set(names)).to_numpy()
    for label, (row, count) in _first_cells(labels, rows, used & ~on_list).items():
        i = int(np.flatnonzero(rows == row)[0])
        guesses = suggest_names(label, names)
        check.add("error", name, i, f"{title} '{label}' ({check.sheet}!{check.cell(name, i)}{_more_rows(count)}) is "
                                    f"not on the {word} list"
                  + (f"; {did_you_mean(guesses)}" if guesses else
                     f" ({len(names)} names); add it to the {word} sheet or correct it"))
    scored_names = set(pd.unique(labels[cells.ok])) if cells.ok.any() else set()
    pending_names = set(pd.unique(labels[cells.pending])) if cells.pending.any() else set()
    for listed_name, where in listed:
        if listed_name not in scored_names:
            note = " (its reads are pending)" if listed_name in pending_names else ""
            check.problems.append(_list_problem(where, title, f"{title} '{listed_name}' ({where}) is on the {word} "
                                                              f"list but has no scores yet{note}"))
    groups: dict[str, list[tuple[str, str]]] = {}
    for listed_name, where in listed:
        groups.setdefault(name_key(listed_name), []).append((listed_name, where))
    for members in groups.values():
        if len({m for m, _ in members}) > 1:
            text = " and ".join(f"'{m}' ({w})" for m, w in members)
            message = f"{word} list: {text} differ only in case or spaces; they count as different {word.lower()}"
            check.problems.append(_list_problem(members[0][1], title, message))


def _list_problem(where: str, title: str, message: str) -> Problem:
    """A warning at a list entry's cell (*where* like "Assessors!A5")."""
    return Problem("warning", where.split("!")[0], where.split("!")[-1], _row_of(where), title, message)


def _check_name_spellings(check: _TableCheck, name: str, labels: np.ndarray, word: str, used: np.ndarray) -> None:
    """Without a list: names in the table that differ only in case or spaces (warnings naming each spelling's
    first cell).  Distinct names are compared by one C-level casefold of them all joined."""
    import pandas as pd

    codes_used, distinct = label_codes(labels, used)
    present = np.bincount(codes_used, minlength=len(distinct)) > 0
    distinct = distinct if present.all() else [distinct[k] for k in np.flatnonzero(present)]
    # names hold no \x1f: a control character is refused by the column check
    joined = "\x1f".join(map(str, distinct)).casefold()
    folded = joined.split("\x1f") if distinct else []
    spaced = {k for k, x in enumerate(folded) if "  " in x or "\t" in x or "\n" in x or "\xa0" in x} \
        if ("  " in joined or "\t" in joined or "\n" in joined or "\xa0" in joined) else set()
    keys = [" ".join(x.split()) if k in spaced else x for k, x in enumerate(folded)] if spaced else folded
    if len(set(keys)) == len(keys):
        return
    # rare: look up where the clashing spellings first occur
    distinct, keys = pd.Series(distinct, dtype=object), pd.Series(keys, dtype=object)
    clash = keys.duplicated(keep=False).to_numpy()
    rows = check.rows
    firsts = _first_cells(labels, rows, used & pd.Series(labels, dtype=object).isin(set(distinct[clash])).to_numpy())
    groups: dict[str, list] = {}
    for label, key in zip(distinct[clash], keys[clash]):
        groups.setdefault(key, []).append(label)
    for members in groups.values():
        members.sort(key=lambda m: firsts[m][0])
        i = int(np.flatnonzero(rows == firsts[members[0]][0])[0])
        text = " and ".join(f"'{m}' ({check.sheet}!{check.letter(name)}{firsts[m][0]})" for m in members)
        check.add("warning", name, i, f"{word}: {text} differ only in case or spaces; they are counted as "
                                      f"different {word.lower()} (is it one name typed two ways?)")


def _check_repeated_pairs(check: _TableCheck, a: np.ndarray, o: np.ndarray, used: np.ndarray) -> None:
    """One evaluation per (assessor, object): a pair given twice is an error naming all its rows."""
    import pandas as pd

    ai, a_names = label_codes(a, used)
    oi = label_codes(o, used)[0].astype(np.int64)
    pair = oi * max(len(a_names), 1) + ai  # object-major: exports are usually grouped by object (keys nearly sorted)
    if not _any_repeated(pair, (int(oi.max()) + 1) * max(len(a_names), 1) if len(oi) else 0):
        return
    dup = pd.Series(pair).duplicated(keep=False).to_numpy()
    frame = pd.DataFrame({"pair": pair[dup], "i": np.flatnonzero(used)[dup]})
    rows = check.rows
    for _, members in frame.groupby("pair", sort=False)["i"]:
        members = members.to_numpy()
        check.add("error", "object", int(members[1]),
                  f"assessor {a[members[0]]} evaluated object {o[members[0]]} more than once (sheet {check.sheet}, "
                  f"rows {', '.join(str(int(rows[m])) for m in members)}); keep one evaluation per pair")


def _any_repeated(keys: np.ndarray, span: int) -> bool:
    """True when some key of *keys* (whole numbers in 0 .. span-1) occurs twice, found without hashing."""
    if span <= 8 * len(keys) + 4_000_000:  # a flag per possible key: <= 8 bytes a row + 4 MB
        seen = np.zeros(span, dtype=bool)
        seen[keys] = True
        return np.count_nonzero(seen) < len(keys)  # fewer distinct keys than rows
    # a stable sort (timsort) runs through nearly sorted keys in about linear time, faster than hashing
    ordered = np.sort(keys, kind="stable")
    return bool((ordered[1:] == ordered[:-1]).any())


def _report_pending(check: _TableCheck, a: np.ndarray, o: np.ndarray, cells: _EvaluationCells) -> None:
    """A warning per pending row (allocated, not yet scored); an error when the table holds no evaluation at all."""
    rows, sheet, pending = check.rows, check.sheet, cells.pending
    for i in np.flatnonzero(pending):
        check.add("warning", "score", i, f"sheet {sheet}, row {int(rows[i])}: {a[i]} has not yet scored {o[i]} "
                                         f"(pending: left out of this run)")
    if cells.ok.any() or any(p.severity == "error" for p in check.problems):
        return
    if pending.any():
        check.problems.append(Problem("error", sheet, "", None, "Score", f"sheet {sheet}: no scores yet "
                                      f"({int(pending.sum())} evaluations are allocated and all are pending)"))
    else:
        check.problems.append(Problem("error", sheet, "", None, "", f"sheet {sheet} has a header row but no "
                                                                    "evaluations below it"))


def _panel_input(check: _TableCheck, cells: _EvaluationCells, settings: dict) -> PanelInput:
    """The checked panel: problems in order (errors first, by row), the evaluations' frame, the pending rows."""
    import pandas as pd

    table, sheet, kind, rows = check.table, check.sheet, check.kind, check.rows
    problems = check.problems
    if table.merged:
        problems = [_explain_merged(p, table.merged) for p in problems]
    problems.sort(key=lambda p: (p.severity != "error", p.sheet != sheet, p.row if p.row is not None else 0))
    a, o, s, u, ok, pending = cells.assessor, cells.object, cells.score, cells.uncertainty, cells.ok, cells.pending
    keep = slice(None) if ok.all() else np.flatnonzero(ok)  # every row scored (the usual case): no selection
    # the columns are this check's own arrays or fresh selections (no copy needed) of checked text (no type
    # inference needed)
    frame = pd.DataFrame({"assessor": text_series(a[keep]), "object": text_series(o[keep]), "score": s[keep],
                          kind: text_series(u[keep]) if kind == "level" else np.asarray(u[keep], dtype=float)},
                         copy=False)
    sheet_rows = rows[keep].copy()
    hidden = sorted(set(table.hidden_rows) & set(sheet_rows.tolist())) if table.hidden_rows else []
    pend = pd.DataFrame({"assessor": text_series(a[pending]), "object": text_series(o[pending]),
                         "sheet_row": rows[pending]}, copy=False)
    return PanelInput(frame, kind, sheet_rows, pend, problems, settings, sheet, hidden, table)


def _explain_merged(problem: Problem, merged: Sequence[str]) -> Problem:
    """Add 'inside merged cells A2:A3' to a problem at a cell of a merged range (its non-anchor cells read blank)."""
    if not problem.cell or problem.severity != "error":
        return problem
    ref = merged_range_of(problem.cell, merged)
    if ref is None:
        return problem
    return Problem(problem.severity, problem.sheet, problem.cell, problem.row, problem.column,
                   f"{problem.message} (the cell is inside merged cells {ref}: unmerge them and fill in every row)")


def _row_of(where: str) -> int | None:
    m = re.search(r"(\d+)$", where)
    return int(m.group(1)) if m else None


def evaluations_from_rows(rows: Sequence[Sequence[Any]], sheet: str = "Evaluations", first_row: int = 1,
                          first_column: int = 1, uncertainty: str | None = None):
    """Read an evaluations table (header row + data rows) into a clean DataFrame.

    A thin form of :func:`check_evaluations` for cells already in hand (a
    UDF's range, a block): fully blank rows are skipped, pending rows (no
    score yet) are left out, and every problem is raised at once as
    :class:`~xlcalib.errors.InputProblems` (an :class:`InputError`).

    Returns ``(frame, kind, sheet_rows)``: a DataFrame with columns
    ``assessor``, ``object``, ``score`` and the uncertainty column; the kind;
    and the sheet row number of each DataFrame row.
    """
    from types import SimpleNamespace

    block = SimpleNamespace(rows=[list(r) for r in rows], first_row=first_row, first_column=first_column,
                            sheet=sheet, hidden_rows=(), row_numbers=())
    block.row_number = lambda i: first_row + i
    block.column_number = lambda j: first_column + j
    panel = check_evaluations(table_from_block(block, sheet), uncertainty=uncertainty)
    panel.raise_errors()
    return panel.frame, panel.kind, panel.sheet_rows.tolist()
