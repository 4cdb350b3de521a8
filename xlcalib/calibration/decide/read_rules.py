"""Which extra reads may be asked for: the panel's rules applied to every (assessor, object) pair.

Next reads (:mod:`.next_reads`) choose among the pairs these rules allow and
never outside them; the rules are hard constraints, checked pair by pair:

* a pair already read, or *pending* (allocated, no score yet), is never asked for again;
* a declared *conflict* of interest is never asked for;
* with *candidates*, only those pairs;
* with *suitability*, only the suitable pairs: suitability >= ``min_suitability``
  (default: any positive suitability, i.e. at least one shared subject);
* an assessor at their *maximum load* gets no more reads: existing, pending and
  suggested reads all count.

Why suitability is a constraint and not a weight: a read outside the
assessor's subjects comes back at a lower confidence than the assessor's
usual one, and the secretary cannot ask for it anyway.  Measured on
simulated expertise-grouped panels (``benchmarks/bench_next_reads.py``,
100 panels, 72 extra reads each): suggestions kept to suitable pairs left
10.20 objects on the wrong side of the line; suggestions free to leave the
subjects but assuming such reads at the Low level (suitability as a weight)
left 10.18 while asking for 33 reads outside the subjects; suggestions
ignoring subjects left 11.10.

Suitability comes as an assessors x objects grid (a DataFrame indexed by
assessor with objects as columns, or a long ``assessor, object,
suitability`` table; missing pairs are 0) or as a *subjects* mapping, name
-> subjects (text separated by commas or semicolons, or a list), holding
assessors and objects alike: a pair's suitability is then the number of
subjects the two share.  A name with no subjects listed is not restricted
(nothing is known against any of its pairs).
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...cells import header_key, real_argument
from ...errors import InputError
from ..panel.arguments import pair_grid

__all__ = ["ReadRules", "read_rules", "new_reader_rules", "pair_keys", "per_assessor", "suitable_pairs",
           "subject_sets"]


@dataclass
class ReadRules:
    """The pairs that may be suggested and what excluded the others.

    ``allowed``: keys ``a * O + o`` of the allowed pairs (before loads);
    ``load``/``cap``: each assessor's reads so far (existing and pending) and
    maximum; ``lines``: one plain sentence per rule applied with the number of
    unread pairs it excludes; ``excluded``: rule -> that number; ``suitable``:
    the A x O mask of suitable pairs (None without suitability); ``pending``:
    keys of the pending pairs within the panel (their reads will come).
    """

    allowed: np.ndarray
    load: np.ndarray
    cap: np.ndarray
    n_objects: int
    lines: list[str] = field(default_factory=list)
    excluded: dict = field(default_factory=dict)
    suitable: np.ndarray | None = None
    pending: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def pair_keys(pairs, name: str, a_pos: dict, o_pos: dict, n_objects: int, unknown: str = "error") -> np.ndarray:
    """(assessor, object) pairs -> int64 keys a * O + o; unknown names are reported all at once.

    ``unknown="skip"`` drops pairs naming someone outside the panel instead (pending reads of
    an assessor with no score yet concern no pair that could be suggested).
    """
    if pairs is None:
        return np.zeros(0, dtype=np.int64)
    if isinstance(pairs, pd.DataFrame):
        cols = {header_key(c): c for c in pairs.columns}
        if "assessor" in cols and "object" in cols:
            rows = list(zip(pairs[cols["assessor"]], pairs[cols["object"]]))
        elif pairs.shape[1] == 2:
            rows = list(pairs.itertuples(index=False, name=None))
        else:
            raise InputError(f"{name} must have columns 'assessor' and 'object' (or exactly two columns)")
    else:
        try:
            rows = [tuple(p) for p in pairs]
        except TypeError:
            raise InputError(f"{name} must be a list of (assessor, object) pairs or a two-column table") from None
    bad_shape = [i + 1 for i, p in enumerate(rows) if len(p) != 2]
    if bad_shape:
        raise InputError(f"{name}: entries {bad_shape[:10]} are not (assessor, object) pairs")
    if unknown == "skip":
        rows = [(a, o) for a, o in rows if a in a_pos and o in o_pos]
    _refuse_unknown(rows, name, a_pos, o_pos)
    a = np.array([a_pos[a] for a, _ in rows], dtype=np.int64)
    o = np.array([o_pos[o] for _, o in rows], dtype=np.int64)
    return a * n_objects + o


def _refuse_unknown(rows, name: str, a_pos: dict, o_pos: dict) -> None:
    unknown_a = sorted({str(a) for a, _ in rows if a not in a_pos})
    unknown_o = sorted({str(o) for _, o in rows if o not in o_pos})
    if unknown_a or unknown_o:
        parts = [f"{kind}(s) not in the panel: {_names(names)}"
                 for kind, names in (("assessor", unknown_a), ("object", unknown_o)) if names]
        raise InputError(f"{name}: " + "; ".join(parts))


def _names(names: list, shown: int = 10) -> str:
    return ", ".join(map(str, names[:shown])) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def per_assessor(value, name: str, names: pd.Index, default: np.ndarray, low: float, integer: bool) -> np.ndarray:
    """A scalar or an assessor -> number mapping; unknown assessors and bad numbers named."""
    out = default.astype(float).copy()
    if value is None:
        return out
    items = value.items() if isinstance(value, (Mapping, pd.Series)) else None
    if items is None:
        items = [(None, value)]
    pos = {a: i for i, a in enumerate(names)}
    bad = []
    for key, number in items:
        try:
            x = float(number)
            ok = (not isinstance(number, (bool, np.bool_)) and math.isfinite(x) and x >= low
                  and (not integer or x.is_integer()))
        except (TypeError, ValueError):
            ok = False
        if not ok:
            bad.append(f"{key}: {number!r}" if key is not None else repr(number))
            continue
        if key is None:
            out[:] = x
        elif key in pos:
            out[pos[key]] = x
        else:
            bad.append(f"{key} (not an assessor of the panel)")
    if bad:
        what = "a whole number" if integer else "a positive number"
        raise InputError(f"{name} must be {what}{' >= ' + format(low, 'g') if integer else ''} "
                         f"(or a mapping assessor -> number); bad: {', '.join(bad[:10])}")
    return out


def subject_sets(value) -> frozenset:
    """One name's subjects: text split at commas/semicolons, or a list; case and spaces ignored; blank = none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return frozenset()
    if isinstance(value, str):
        items = re.split(r"[,;]", value)
    elif isinstance(value, (list, tuple, set, frozenset, np.ndarray, pd.Series)):
        items = [str(v) for v in value]
    else:  # one subject given as a number or a code
        items = [str(value)]
    return frozenset(" ".join(t.strip().lower().split()) for t in items if t.strip())


def _shared_subjects(subjects: Mapping, assessors: pd.Index, objects: pd.Index):
    """(shared-subject counts A x O, assessors with subjects, objects with subjects) from a name -> subjects map."""
    unknown = [n for n in subjects if n not in assessors and n not in objects]
    if unknown:
        raise InputError(f"subjects: name(s) neither an assessor nor an object of the panel: {_names(unknown)}")
    a_sets = [subject_sets(subjects.get(a)) for a in assessors]
    o_sets = [subject_sets(subjects.get(o)) for o in objects]
    vocab = {t: i for i, t in enumerate(sorted(set().union(*a_sets, *o_sets)))}
    Ma = np.zeros((len(a_sets), len(vocab)))
    Mo = np.zeros((len(o_sets), len(vocab)))
    for M, sets in ((Ma, a_sets), (Mo, o_sets)):
        rows = np.repeat(np.arange(len(sets), dtype=np.intp), [len(s) for s in sets])
        cols = np.array([vocab[t] for s in sets for t in sorted(s)], dtype=np.intp)
        M[rows, cols] = 1.0
    return Ma @ Mo.T, np.array([bool(s) for s in a_sets]), np.array([bool(s) for s in o_sets])


def suitable_pairs(suitability, min_suitability, assessors: pd.Index, objects: pd.Index):
    """(A x O boolean mask of the suitable pairs, a phrase saying what suitable means); (None, "") without one."""
    if suitability is None:
        return None, ""
    low = None if min_suitability is None else real_argument(min_suitability, "min_suitability", low=0)
    if isinstance(suitability, Mapping):
        S, has_a, has_o = _shared_subjects(suitability, assessors, objects)
        need = 1.0 if low is None else low
        mask = (S >= need) | ~has_a[:, None] | ~has_o[None, :]
        free = [f"{int((~has).sum())} {kind}" for has, kind in ((has_a, "assessor(s)"), (has_o, "object(s)"))
                if (~has).any()]
        what = ("pairs sharing a subject" if need <= 1 else f"pairs sharing at least {need:g} subjects") + (
            f" ({' and '.join(free)} without subjects listed: not restricted)" if free else "")
        return mask, what
    S = pair_grid(suitability, assessors, objects, "suitability", 0.0)
    mask = S > 0 if low is None else S >= low
    return mask, ("pairs with a positive suitability" if low is None else f"pairs with suitability >= {low:g}")


def read_rules(design, assessors: pd.Index, objects: pd.Index, *, candidates=None, conflicts=None, pending=None,
               suitability=None, min_suitability=None, max_load=None) -> ReadRules:
    """The pairs that may be suggested (see the module docstring) and one line per rule applied."""
    A, O = design.n_assessors, design.n_objects
    a_pos = {a: i for i, a in enumerate(assessors)}
    o_pos = {o: i for i, o in enumerate(objects)}
    unread = np.ones(A * O, dtype=bool)
    unread[design.ai.astype(np.int64) * O + design.oi.astype(np.int64)] = False
    pending_keys = np.unique(pair_keys(pending, "pending", a_pos, o_pos, O, unknown="skip"))
    blocked = {}
    if pending_keys.size:
        blocked["pending"] = pending_keys
    conflict_keys = np.unique(pair_keys(conflicts, "conflicts", a_pos, o_pos, O))
    if conflict_keys.size:
        blocked["conflicts"] = conflict_keys
    mask, what = suitable_pairs(suitability, min_suitability, assessors, objects)
    if mask is not None:
        blocked["subjects"] = np.flatnonzero(~mask.ravel())
    allowed = unread.copy()
    if candidates is not None:
        listed = np.zeros(A * O, dtype=bool)
        listed[pair_keys(candidates, "candidates", a_pos, o_pos, O)] = True
        allowed &= listed
    excluded = {rule: int(np.count_nonzero(allowed[keys])) for rule, keys in blocked.items()}
    for keys in blocked.values():
        allowed[keys] = False
    load = (np.bincount(design.ai, minlength=A)
            + np.bincount((pending_keys // O).astype(np.intp), minlength=A)).astype(float)  # intp: 32-bit in Pyodide
    cap = per_assessor(max_load, "max_load", assessors, np.full(A, np.inf), 0, True)
    keys = np.flatnonzero(allowed).astype(np.int64)
    full = load >= cap
    if np.isfinite(cap).any():
        excluded["max load"] = int(np.count_nonzero(full[keys // O]))
    # a pending pair already read is no second read to come (an allocation repeated by mistake)
    rules = ReadRules(keys, load, cap, O, excluded=excluded, suitable=mask, pending=pending_keys[unread[pending_keys]])
    rules.lines = _rule_lines(excluded, int(full.sum()), what, int(np.count_nonzero(unread)),
                              candidates is not None, int(pending_keys.size))
    rules.lines.append(f"{int(np.count_nonzero(~full[keys // O])):,} pairs remain allowed")
    return rules


def new_reader_rules(design, objects: pd.Index, *, candidates=None, conflicts=None, pending=None, suitability=None,
                     min_suitability=None, max_load=None) -> ReadRules:
    """The reads that may be asked for when the readers cannot be linked (a pooled posterior, one assessor "any
    reviewer"): one more read of any object, by a reviewer new to it -- never one of its readers, so no conflict,
    load or subject of a named reader applies (each is refused, named).  Pending reads (named by object; their
    readers do not matter) will come.  A batch asks for at most one new read per object (the greedy choice removes
    a pair once picked)."""
    named = [name for name, value in (("candidates", candidates), ("conflicts", conflicts),
                                      ("suitability", suitability), ("min_suitability", min_suitability),
                                      ("max_load", max_load)) if value is not None]
    if named:
        raise InputError(f"the readers cannot be linked (each read one object): a next read is asked of a reviewer "
                         f"new to the object, whom {', '.join(named)} cannot name; leave {'it' if len(named) == 1 else 'them'} out")
    O = design.n_objects
    o_pos = {o: i for i, o in enumerate(objects)}
    waiting = []
    if pending is not None:
        rows = pending.itertuples(index=False, name=None) if isinstance(pending, pd.DataFrame) else pending
        waiting = sorted({o_pos[pair[1]] for pair in rows if len(pair) == 2 and pair[1] in o_pos})
    allowed = np.arange(O, dtype=np.int64)
    lines = [f"any of the {O:,} objects may get one more read, by a reviewer new to it (the readers cannot be linked: "
             "conflicts, loads and subjects of named readers do not apply)"]
    if waiting:
        lines.append(f"pending reads (allocated, no score yet): {len(waiting):,} object(s), taken as reads that will "
                     "come")
    return ReadRules(allowed, np.zeros(1), np.full(1, np.inf), O, lines=lines,
                     pending=np.asarray(waiting, dtype=np.int64))


def _rule_lines(excluded: dict, n_full: int, what: str, n_unread: int, has_candidates: bool,
                n_pending: int) -> list[str]:
    """Plain sentences: which rules were applied and how many unread pairs each excluded (rules overlap)."""
    lines = [f"{n_unread:,} (assessor, object) pairs are not read yet"]
    if has_candidates:
        lines.append("only the candidate pairs given are considered")
    if "pending" in excluded:
        lines.append(f"pending reads (allocated, no score yet): {n_pending:,}, counted in the loads, taken as reads "
                     f"that will come, and never suggested again ({excluded['pending']:,} pairs excluded)")
    if "conflicts" in excluded:
        lines.append(f"conflicts of interest: {excluded['conflicts']:,} pairs excluded")
    if "subjects" in excluded:
        lines.append(f"subjects: only {what}; {excluded['subjects']:,} pairs excluded")
    if "max load" in excluded:
        lines.append(f"maximum loads: {n_full} assessor(s) already at their maximum "
                     f"({excluded['max load']:,} pairs excluded); no suggestion takes anyone above it")
    return lines


def known_to_panel(assessors, objects, *, conflicts=None, max_load=None, suitability=None):
    """The rules restricted to the names of the scored panel, and one plain line per kind of name left out.

    A sheet's rules may name assessors with no scored read yet, or objects nobody has scored: no
    suggestion can concern them, so their rules are left out (and said so) instead of refused.
    Returns ``(conflicts, max_load, suitability, lines)``.
    """
    a_known, o_known = set(assessors), set(objects)
    lines = []
    if conflicts is not None:
        pairs = conflicts if isinstance(conflicts, pd.DataFrame) else pd.DataFrame(list(conflicts))
        pairs = pairs.iloc[:, :2].set_axis(["assessor", "object"], axis=1)
        keep = pairs.assessor.isin(a_known).to_numpy() & pairs.object.isin(o_known).to_numpy()
        if not keep.all():
            lines.append(f"{int((~keep).sum())} conflict(s) name someone with no scored read (left out): "
                         + _names([f"{a}/{o}" for a, o in pairs[~keep].itertuples(index=False)], 5))
        conflicts = pairs[keep].reset_index(drop=True)
    if isinstance(max_load, (Mapping, pd.Series)):
        unknown = [a for a in max_load.keys() if a not in a_known]
        if unknown:
            lines.append(f"max loads of {len(unknown)} assessor(s) with no scored read left out: {_names(unknown, 5)}")
        max_load = {a: n for a, n in max_load.items() if a in a_known}
    if isinstance(suitability, Mapping):
        unknown = [n for n in suitability if n not in a_known and n not in o_known]
        if unknown:
            lines.append(f"subjects of {len(unknown)} name(s) with no scored read left out: {_names(unknown, 5)}")
        suitability = {n: s for n, s in suitability.items() if n in a_known or n in o_known}
    elif isinstance(suitability, pd.DataFrame) and not _is_long(suitability):
        rows = [a for a in suitability.index if a in a_known]
        cols = [o for o in suitability.columns if o in o_known]
        if len(rows) < len(suitability.index) or len(cols) < len(suitability.columns):
            lines.append(f"suitability grid: {len(suitability.index) - len(rows)} assessor row(s) and "
                         f"{len(suitability.columns) - len(cols)} object column(s) with no scored read left out")
        absent = [n for n in assessors if n not in set(rows)] + [n for n in objects if n not in set(cols)]
        if absent:
            lines.append(f"suitability grid: {len(absent)} name(s) of the panel are not in the grid, so none of their "
                         f"pairs counts as suitable: {_names(absent, 5)}")
        suitability = suitability.loc[rows, cols]
    return conflicts, max_load, suitability, lines


def _is_long(table: pd.DataFrame) -> bool:
    return table.shape[1] == 3 and [header_key(c) for c in table.columns[:2]] == ["assessor", "object"]
