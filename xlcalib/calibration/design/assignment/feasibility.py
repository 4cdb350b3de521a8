"""Why no allocation is possible: one message naming the constraint and the shortfall.

Two ways of saying no, at the two moments they can be known.  Before any solver runs,
:func:`check_feasible` compares counts (reads wanted against the loads' sum, each object's
conflict-free assessors against its reads, kept reads against the limits) and refuses at once.
Counts can all add up and the constraints still not hold together (the assessors free for some
objects are the ones already full): the transportation LP then leaves reads unplaced, and
:func:`max_flow_message` says how many reads can be placed at most (a maximum flow through
objects, pairs and assessors) and which objects go short.

Why a module of its own: the construction of the problem (:mod:`.problem`) asks the first
question and the LP (:mod:`.lp`) the second; here both sit below them, so neither of the two
needs the other for its message.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph

from ....errors import InputError

__all__ = ["check_feasible", "max_flow_message"]

#: Items each message names at most (then "... and n more").
NAMED_ITEMS = 5


def check_feasible(reads, max_load, min_load, allowed_o, allowed_a, fixed_o, fixed_a, a_names, o_names) -> None:
    """Refuse limits no allocation can meet, every problem in one message (before any solver runs).

    ``allowed_o`` / ``allowed_a``: conflict-free assessors per object and objects per assessor;
    ``fixed_o`` / ``fixed_a``: kept reads per object and per assessor.
    """
    problems = _total_problems(reads, max_load, min_load, len(o_names))
    problems += [f"assessor {a_names[i]!r}: min load {min_load[i]} exceeds max load {max_load[i]}"
                 for i in np.flatnonzero(min_load > max_load)[:NAMED_ITEMS]]
    short = np.flatnonzero(allowed_o < reads)
    problems += [f"object {o_names[i]!r} wants {reads[i]} reads but only {allowed_o[i]} assessors have no "
                 f"conflict with it ({reads[i] - allowed_o[i]} short)" for i in short[:NAMED_ITEMS]]
    if short.size > NAMED_ITEMS:
        problems.append(f"... and {short.size - NAMED_ITEMS} more objects with too few non-conflicted assessors")
    problems += [f"assessor {a_names[i]!r} has min load {min_load[i]} but only {allowed_a[i]} objects without "
                 f"a conflict" for i in np.flatnonzero(allowed_a < min_load)[:NAMED_ITEMS]]
    problems += [f"object {o_names[i]!r} already has {fixed_o[i]} kept reads but wants only {reads[i]}"
                 for i in np.flatnonzero(fixed_o > reads)[:NAMED_ITEMS]]
    problems += [f"assessor {a_names[i]!r} already has {fixed_a[i]} kept reads but max load {max_load[i]}"
                 for i in np.flatnonzero(fixed_a > max_load)[:NAMED_ITEMS]]
    if problems:
        raise InputError("no allocation is possible: " + "; ".join(problems))


def _total_problems(reads, max_load, min_load, n_obj: int) -> list[str]:
    """The panel-wide shortfalls: all reads against the max loads' sum, the min loads' sum against all reads."""
    R = int(reads.sum())
    problems = []
    uniform = np.all(reads == reads[0])
    reads_text = (f"{n_obj} objects × {int(reads[0])} reads = {R} reads" if uniform
                  else f"the objects want {R} reads in all")
    if max_load.sum() < R:
        problems.append(f"{reads_text} but the assessors' max loads add up to {int(max_load.sum())} "
                        f"({R - int(max_load.sum())} short)")
    if min_load.sum() > R:
        problems.append(f"the assessors' min loads add up to {int(min_load.sum())} but there are only {R} reads "
                        f"({int(min_load.sum()) - R} too many)")
    return problems


def max_flow_message(reads, max_load, min_load, allowed, a_names, o_names) -> str:
    """Why the constraints cannot all hold together: the most reads that can be placed (max flow)."""
    A, O = len(a_names), len(o_names)
    ai, oi = np.nonzero(allowed)
    src, sink = A + O, A + O + 1
    rows = np.concatenate([np.full(O, src), oi + A, np.arange(A)])
    cols = np.concatenate([np.arange(O) + A, ai, np.full(A, sink)])
    caps = np.concatenate([reads, np.ones(ai.size, dtype=np.int64), max_load]).astype(np.int32)
    graph = sp.csr_matrix((caps, (rows, cols)), shape=(A + O + 2, A + O + 2))
    flow = csgraph.maximum_flow(graph, src, sink)
    placed = int(flow.flow_value)
    if placed == int(reads.sum()):
        return (f"no allocation satisfies reads, loads and conflicts together: all {placed} reads can be placed, "
                f"but not while every assessor reaches their min load (min loads add up to {int(min_load.sum())}); "
                f"lower some min loads")
    per_obj = np.asarray(flow.flow[src, A:A + O].todense()).ravel()
    short = np.flatnonzero(per_obj < reads)
    names = ", ".join(repr(o_names[i]) for i in short[:NAMED_ITEMS]) + (" ..." if short.size > NAMED_ITEMS else "")
    return (f"no allocation satisfies reads, loads and conflicts together: at most {placed} of the {int(reads.sum())} "
            f"reads can be placed ({int(reads.sum()) - placed} short; the assessors free to read e.g. {names} "
            f"are already at their max loads)")
