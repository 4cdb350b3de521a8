"""Partial rankings with ties (differential diagnoses): parsing, IRN, PrIRN, meanAO (Stutz et al. 2023, Appendix B).

A partial ranking is a list of blocks, best first; each block a list of tied
class ids.  Classes an annotator did not name form the implicit last block.
Spreadsheet form: ``"Melanoma > Nevus = Hemangioma"`` (``>`` separates
blocks, ``=`` ties within a block).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..cells import EXCEL_MAX_COLUMNS, check_memory, real_argument, whole_argument
from ..errors import InputError
from .dirichlet import certainty_from_concentration
from .settings import resolve_setting

__all__ = ["parse_ranking", "irn", "unnormalized_irn", "prirn_concentration", "prirn_certainty", "mean_average_overlap"]


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


def _weighting(block_weighting, setting) -> str:
    weighting = resolve_setting(setting).block_weighting if block_weighting is None else block_weighting
    if weighting not in ("eq14", "reference_code"):
        raise InputError(f"block_weighting must be 'eq14' or 'reference_code', not {weighting!r}")
    return weighting


def unnormalized_irn(annotations, n_classes: int, block_weighting: str | None = None,
                     setting="xlcalib") -> np.ndarray:
    """Sum over annotators of the inverse-rank weights (eq. 14-15), cases x classes.

    ``block_weighting="eq14"`` (``setting="xlcalib"``, the default): class y in
    block i gets ``(1/i)/|b_i|`` for the blocks i = 1..L-1 before the last
    block L, and the classes of block L get 0.  Block L is the implicit block of
    classes the annotator did not name; an annotator who names *every* class
    has no such block, so their last named block is eq. 14's block L and gets 0.

    ``block_weighting="reference_code"`` (``setting="reference"``): every
    class of named block i gets ``1/i`` (no division by the block size) and
    *every named block* counts, the last one included; only classes the
    annotator did not name get 0.  This is the reference code's rule (weight
    ``1/(1 + group)`` for each class with a group index, 0 for group -1 =
    unnamed).  It differs from eq. 14's treatment of the last block only when
    an annotator names every class:

    >>> unnormalized_irn([[[[0], [1], [2]]]], 3, "reference_code").tolist()   # 1, 1/2, 1/3
    [[1.0, 0.5, 0.3333333333333333]]
    >>> unnormalized_irn([[[[0], [1], [2]]]], 3).tolist()                     # eq. 14: block L = {2} gets 0
    [[1.0, 0.5, 0.0]]

    Normalised, that is [6/11, 3/11, 2/11] = [.545, .273, .182] against
    [.667, .333, 0].  When an annotator leaves a class unnamed both rules give
    the named blocks the same weights as before (the unnamed block is block L).
    An explicit ``block_weighting`` overrides the one ``setting`` implies.
    """
    weighting = _weighting(block_weighting, setting)
    n_classes = class_count(n_classes)
    check_memory(8.0 * len(annotations) * n_classes, f"{len(annotations)} items x {n_classes} classes", "use fewer classes")
    out = np.zeros((len(annotations), n_classes))
    for i, case in enumerate(annotations):
        for r, ranking in enumerate(case):
            named = _validate(ranking, n_classes, f"case {i + 1}, annotator {r + 1}")
            if weighting == "reference_code":
                blocks = ranking
            else:
                blocks = ranking[:-1] if len(named) == n_classes else ranking
            for b, block in enumerate(blocks, start=1):
                w = 1.0 / b if weighting == "reference_code" else 1.0 / (b * len(block))
                out[i, np.asarray(block, dtype=np.intp)] += w
    return out


def irn(annotations, n_classes: int, block_weighting: str | None = None, setting="xlcalib") -> np.ndarray:
    """Inverse rank normalised plausibilities (eq. 14-16), cases x classes, rows summing to 1.

    ``annotations``: case -> annotator -> blocks -> class ids (the nested form
    of ``dermatology_selectors.json``).  ``setting="reference"`` (or
    ``block_weighting="reference_code"``) weights as the reference code does;
    see :func:`unnormalized_irn` and :mod:`xlcalib.ground_truth.settings`.

    >>> irn([[[[0], [1, 2]]]], 4).round(3).tolist()   # 1 for class 0; 1/2 / 2 each for 1 and 2
    [[0.667, 0.167, 0.167, 0.0]]
    >>> irn([[[[0], [1, 2]]]], 4, setting="reference").round(3).tolist()   # 1 for class 0; 1/2 each for 1 and 2
    [[0.5, 0.25, 0.25, 0.0]]
    """
    u = unnormalized_irn(annotations, n_classes, block_weighting, setting)
    total = u.sum(axis=1, keepdims=True)
    empty = np.flatnonzero(total[:, 0] == 0)
    if empty.size:
        raise InputError(f"case {empty[0] + 1} has no ranked class (no annotation), so IRN is undefined")
    return u / total


def _alpha(alpha, setting) -> float:
    value = resolve_setting(setting).prirn_alpha if alpha is None else alpha
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise InputError(f"alpha must be a number >= 0, not {alpha!r}") from None
    if not (np.isfinite(value) and value >= 0):
        raise InputError(f"alpha must be a finite number >= 0, not {alpha!r}")
    return value


def prirn_concentration(annotations, n_classes: int, reliability: float = 1.0, block_weighting: str | None = None,
                        setting="xlcalib", alpha: float | None = None) -> np.ndarray:
    """PrIRN: Dirichlet concentration ``gamma * IRN + alpha`` on every class (B.3); sample with ``sample_dirichlet``.

    ``setting="xlcalib"`` (default): ``alpha = 0``, as B.3 writes it — a class
    nobody named is a structural zero and never becomes the top-1 label.
    ``setting="reference"``: ``alpha = 0.01`` on every class and the
    reference IRN weighting, as the reference notebooks sample PrIRN.  At
    reliability 1 on the dermatology data the mean top-1 certainty is 0.174
    with the reference setting and 0.625 with xlcalib's (0.605 with the
    reference weighting but no alpha); they agree by reliability 50 (0.879).
    An explicit ``alpha`` or ``block_weighting`` overrides the setting.

    >>> prirn_concentration([[[[0], [1]]]], 3, reliability=3, setting="reference").round(3).tolist()
    [[2.01, 1.01, 0.01]]
    """
    reliability = real_argument(reliability, "reliability", low=0, high=1e12, low_open=True)
    return reliability * irn(annotations, n_classes, block_weighting, setting) + _alpha(alpha, setting)


def prirn_certainty(annotations, n_classes: int, reliability: float = 1.0, samples: int = 1000, seed: int = 0,
                    top: int = 1, setting="xlcalib", block_weighting: str | None = None, alpha: float | None = None):
    """PrIRN annotation certainty per case (eq. 4-6 under Dirichlet(gamma * IRN + alpha)) and the most certain label(s).

    The classes nobody named share the concentration ``alpha``; they are not
    sampled one by one but through the order statistics of their exchangeable
    gamma variables (see :func:`certainty_from_concentration`), so the
    reference setting costs about what the default costs on 419 classes.

    >>> cert, label = prirn_certainty([[[[0], [1]]]], 3, reliability=1000, samples=2000)
    >>> float(cert[0]), int(label[0])
    (1.0, 0)
    """
    reliability = real_argument(reliability, "reliability", low=0, high=1e12, low_open=True)
    conc = reliability * irn(annotations, n_classes, block_weighting, setting)
    return certainty_from_concentration(conc, samples, seed, top, base=_alpha(alpha, setting))


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
