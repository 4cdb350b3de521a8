"""Partial rankings with ties (differential diagnoses): parsing, IRN, PrIRN, meanAO (seed Appendix B).

A partial ranking is a list of blocks, best first; each block a list of tied
class ids.  Classes an annotator did not name form the implicit last block.
Spreadsheet form: ``"Melanoma > Nevus = Hemangioma"`` (``>`` separates
blocks, ``=`` ties within a block).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import InputError
from ..inputs import EXCEL_MAX_COLUMNS, check_memory, real_argument, whole_argument

__all__ = ["parse_ranking", "irn", "unnormalized_irn", "prirn_concentration", "mean_average_overlap"]


def parse_ranking(text: str, classes: Sequence[str], where: str = "annotation") -> list[list[int]]:
    """``"A > B = C"`` -> ``[[id(A)], [id(B), id(C)]]`` with labels matched case-insensitively to ``classes``."""
    if text is None or not str(text).strip():
        raise InputError(f"{where} is blank")
    lookup = {str(c).strip().lower(): i for i, c in enumerate(classes)}
    if len(lookup) != len(classes):
        raise InputError("the class list has duplicate names")
    blocks, seen = [], set()
    for b, part in enumerate(str(text).split(">"), start=1):
        labels = [lab.strip() for lab in part.split("=")]
        if any(not lab for lab in labels):
            raise InputError(f"{where}: block {b} is empty (check for '>>', '==' or a trailing '>' in {text!r})")
        block = []
        for lab in labels:
            key = lab.lower()
            if key not in lookup:
                raise InputError(f"{where}: unknown label '{lab}' (not in the class list)")
            if key in seen:
                raise InputError(f"{where}: label '{lab}' appears more than once")
            seen.add(key)
            block.append(lookup[key])
        blocks.append(block)
    return blocks


#: Most classes a class list may hold: one spilled column per class after the item column.
MAX_CLASSES = EXCEL_MAX_COLUMNS - 1


def class_count(n_classes) -> int:
    """The number of classes as a checked whole number 2 .. :data:`MAX_CLASSES`."""
    return whole_argument(n_classes, "n_classes", low=2, high=MAX_CLASSES, why="one column per class on a sheet")


def _validate(case, n_classes: int, where: str):
    seen = set()
    for b, block in enumerate(case, start=1):
        if len(block) == 0:
            raise InputError(f"{where}: block {b} is empty")
        for c in block:
            if not (isinstance(c, (int, np.integer)) and 0 <= c < n_classes):
                raise InputError(f"{where}: class id {c!r} is outside 0..{n_classes - 1}")
            if c in seen:
                raise InputError(f"{where}: class {c} appears more than once")
            seen.add(int(c))
    return seen


def unnormalized_irn(annotations, n_classes: int, block_weighting: str = "eq14") -> np.ndarray:
    """Sum over annotators of eq. 14: class y in block i gets (1/i)/|b_i| for i = 1..L-1.

    ``block_weighting="reference_code"`` gives every class of block i weight
    1/i (no division by the block size), as the authors' public code does.
    The implicit last block (classes not named) gets 0; if an annotator names
    every class, the last named block is that last block and gets 0, as eq. 14 says.
    """
    if block_weighting not in ("eq14", "reference_code"):
        raise InputError("block_weighting must be 'eq14' or 'reference_code'")
    n_classes = class_count(n_classes)
    check_memory(8.0 * len(annotations) * n_classes, f"{len(annotations)} items x {n_classes} classes", "use fewer classes")
    out = np.zeros((len(annotations), n_classes))
    for i, case in enumerate(annotations):
        for r, ranking in enumerate(case):
            named = _validate(ranking, n_classes, f"case {i + 1}, annotator {r + 1}")
            blocks = ranking[:-1] if len(named) == n_classes else ranking
            for b, block in enumerate(blocks, start=1):
                w = 1.0 / b if block_weighting == "reference_code" else 1.0 / (b * len(block))
                out[i, block] += w
    return out


def irn(annotations, n_classes: int, block_weighting: str = "eq14") -> np.ndarray:
    """Inverse rank normalised plausibilities (eq. 14-16), cases x classes, rows summing to 1.

    ``annotations``: case -> annotator -> blocks -> class ids (the nested form
    of ``dermatology_selectors.json``).

    >>> irn([[[[0], [1, 2]]]], 4).round(3).tolist()   # 1 for class 0; 1/2 / 2 each for 1 and 2
    [[0.667, 0.167, 0.167, 0.0]]
    """
    u = unnormalized_irn(annotations, n_classes, block_weighting)
    total = u.sum(axis=1, keepdims=True)
    empty = np.flatnonzero(total[:, 0] == 0)
    if empty.size:
        raise InputError(f"case {empty[0] + 1} has no ranked class (no annotation), so IRN is undefined")
    return u / total


def prirn_concentration(annotations, n_classes: int, reliability: float = 1.0, block_weighting: str = "eq14"):
    """PrIRN: Dirichlet concentration gamma * IRN (B.3); sample with ``sample_dirichlet``."""
    reliability = real_argument(reliability, "reliability", low=0, high=1e12, low_open=True)
    return reliability * irn(annotations, n_classes, block_weighting)


def _soft_cumulative(ranking, n_classes: int) -> np.ndarray:
    """(T P~_B): entry (k, j) = probability that class j is among the top k+1 positions."""
    named = _validate(ranking, n_classes, "ranking")
    rest = [c for c in range(n_classes) if c not in named]
    blocks = [list(b) for b in ranking] + ([rest] if rest else [])
    P = np.zeros((n_classes, n_classes))
    pos = 0
    for block in blocks:
        size = len(block)
        P[pos:pos + size][:, block] = 1.0 / size
        pos += size
    return np.cumsum(P, axis=0)


def mean_average_overlap(b1, b2, n_classes: int, L: int | None = None) -> float:
    """meanAO@L between two partial rankings (B.5): UAO(b,b') / sqrt(UAO(b,b) UAO(b',b')).

    UAO@L = Tr{(T P~_B')^T D_L (T P~_B)} with D_L = diag(1/L, 1/2L, ..., 1/L^2, 0, ...).
    """
    n_classes = class_count(n_classes)
    check_memory(48.0 * n_classes**2, f"the overlap matrices of {n_classes} classes", "use fewer classes")
    L = n_classes if L is None else whole_argument(L, "L", high=n_classes, why=f"there are {n_classes} classes")
    A, B = _soft_cumulative(b1, n_classes), _soft_cumulative(b2, n_classes)
    d = np.zeros(n_classes)
    d[:L] = 1.0 / (np.arange(1, L + 1) * L)
    uao = lambda X, Y: float(np.sum(d[:, None] * X * Y))  # noqa: E731
    return uao(A, B) / np.sqrt(uao(A, A) * uao(B, B))
