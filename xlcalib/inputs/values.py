"""Scores and confidences as reviewers' systems write them: "6: marginally above", "3 good", "-1", "A".

One rule per kind of text, applied once per *distinct* value of a column (exports repeat a handful of
symbols over thousands of rows), so a column of 10^5 reviews costs a few hundred Python calls:

* **a number** -- a number cell, or text whose leading signed number is followed by the end of the text
  or by a separator (``"6: marginally above the acceptance threshold"`` -> 6, ``"3 good"`` -> 3,
  ``"-1"``, ``"+2"``, ``"\u22123"`` (a typographic minus) -> -3).  ``"3,5"`` is refused as a decimal
  comma, as everywhere in xlcalib (:func:`xlcalib.cells.parse_number`);
* **a symbol** -- one or two letters with an optional ``+``/``-`` (``A``, ``AB``, ``B+``), read through a
  scale: the declared one when there is one (:class:`Scale`), else one inferred from the symbols present,
  letters turned so that **higher = better** (A is best, as HotCRP's letter fields and funders' grades
  have it) -- the inference is always reported, so a secretary can see and correct it;
* anything else is a problem naming its cell.

Confidence and expertise fields go through the same reading, then through :class:`ConfidenceLevels`: a
table the user sees and can change (value -> level name, or value -> SD in score units).
"""
from __future__ import annotations

import math
import re
from decimal import Decimal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..cells import is_blank
from ..errors import InputError

__all__ = ["Scale", "scale_argument", "form_scale", "form_labels", "ConfidenceLevels", "read_values",
           "leading_number", "reads_as_score", "is_symbol", "infer_symbol_scale", "MARKS"]

_MINUS = "\u2212\u2013"  # typographic minus and en dash, as word processors and web forms write them
_LEADING = re.compile(r"^\s*([+\-" + _MINUS + r"]?)\s*(\d+(?:\.\d+)?)(?!,\d)(?=\s*$|[\s:;.,)\]/|-])")
_DECIMAL_COMMA = re.compile(r"^\s*[+\-" + _MINUS + r"]?\d+,\d+\b")
_SYMBOL = re.compile(r"^[A-Za-z]{1,2}[+\-]?$")
_PERCENT = re.compile(r"^\s*([+\-" + _MINUS + r"]?)\s*(\d+(?:\.\d+)?|\.\d+)\s*%\s*$")

#: Marks a grid or an export writes where there is no evaluation, and the reason the report gives.
MARKS: dict[str, str] = {
    "coi": "conflict of interest (COI)", "conflict": "conflict of interest (COI)",
    "conflicted": "conflict of interest (COI)",
    "n/a": "not assigned (N/A)", "na": "not assigned (N/A)", "not assigned": "not assigned (N/A)",
    "-": "not assigned (N/A)", "\u2013": "not assigned (N/A)", "\u2014": "not assigned (N/A)",
}


def leading_number(value: Any) -> float | None:
    """The number a cell states: a finite number cell, or the leading signed number of its text; else None.

    >>> leading_number("6: marginally above the acceptance threshold"), leading_number("3 good"), leading_number("\u22122")
    (6.0, 3.0, -2.0)
    >>> leading_number("Accept") is None and leading_number("3,5") is None, leading_number("85%")
    (True, 0.85)
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float, np.integer, np.floating)):
        number = float(value)
        return number if math.isfinite(number) else None
    if not isinstance(value, str):
        return None
    percent = _PERCENT.match(value)
    if percent is not None:  # "85%" is 0.85, as Excel and the evaluations' cell rule read it
        number = float(Decimal(percent.group(2)).scaleb(-2))
        return -number if percent.group(1) and percent.group(1) != "+" else number
    match = _LEADING.match(value)
    if match is None:
        return None
    number = float(match.group(2))
    return -number if match.group(1) and match.group(1) != "+" else number


def reads_as_score(value: Any) -> bool:
    """True for a cell a score column may hold: a number (:func:`leading_number`), a grade symbol, a mark (COI,
    N/A), or a number written with a decimal comma -- refused by cell when it is read (:func:`read_values`), but
    a column of them is a column of scores: taken for a description, an assessor's scores were dropped unseen."""
    if leading_number(value) is not None or is_symbol(value):
        return True
    if not isinstance(value, str):
        return False
    return value.strip().lower() in MARKS or _DECIMAL_COMMA.match(value) is not None


def is_symbol(text: Any) -> bool:
    """True for a grade symbol: one or two letters with an optional + or - (``A``, ``AB``, ``b+``)."""
    return isinstance(text, str) and bool(_SYMBOL.match(text.strip()))


@dataclass(frozen=True)
class Scale:
    """A score scale: a numeric range, or symbols with their values (higher = better), and where it came from.

    ``symbols`` maps each symbol (upper case) to its value; ``low``/``high`` bound the values (numbers or
    symbol values); ``source`` is ``"declared"`` (the user's: the Scale sheet, ``--scale``, ``scale=``),
    ``"form"`` (the export states its form's options with their labels -- "1: Reject", "6: Weak Accept", a CMT
    choice's label beside its value -- and ``labels`` keeps them, ``points`` their numbers, uneven steps and all)
    or ``"inferred"`` (from the values present; always reported).  A declared or form scale's ends are read as
    censored by the calibration; an inferred one's are not (its highest score present may be no end at all).
    """

    low: float | None = None
    high: float | None = None
    symbols: tuple[tuple[str, float], ...] = ()
    source: str = "declared"
    points: tuple[float, ...] = ()
    labels: tuple[tuple[float, str], ...] = ()

    @property
    def uneven(self) -> bool:
        """Whether the form's options lie at uneven steps (1, 3, 6, 8)."""
        steps = np.diff(np.asarray(self.points, dtype=float))
        return bool(steps.size) and float(np.ptp(steps)) > 1e-9

    def for_calibration(self) -> tuple | None:
        """The scale as :func:`xlcalib.calibrate` takes it: the form's points when uneven, else (low, high); None
        for a scale whose ends are not known (inferred from the scores present)."""
        if self.source not in ("declared", "form") or self.low is None or self.high is None or self.low >= self.high:
            return None
        return tuple(self.points) if self.uneven else (float(self.low), float(self.high))

    @property
    def symbol_values(self) -> dict[str, float]:
        return dict(self.symbols)

    def describe(self) -> str:
        """``"A=6, AB=5, ..., D=1 (declared)"`` or ``"1 to 5 (inferred from the data)"``."""
        where = {"declared": "declared", "form": "the form's options, as the export states them"}.get(
            self.source, "inferred from the data")
        if self.labels:
            listed = ", ".join(f"{_fmt(v)}: {text}" for v, text in self.labels)
            return f"{listed} ({where}{'; uneven steps' if self.uneven else ''})"
        if self.symbols:
            listed = ", ".join(f"{s}={_fmt(v)}" for s, v in sorted(self.symbols, key=lambda sv: -sv[1]))
            return f"{listed} ({where})"
        if self.points:
            return f"points {', '.join(_fmt(p) for p in self.points)} ({where})"
        return f"{_fmt(self.low)} to {_fmt(self.high)} ({where})"

    def to_dict(self) -> dict:
        """JSON-ready form (the Import sheet and a saved mapping keep it)."""
        out: dict[str, Any] = {"source": self.source}
        if self.symbols:
            out["symbols"] = {s: v for s, v in self.symbols}
        else:
            out["low"], out["high"] = self.low, self.high
        if self.labels:
            out["labels"] = [[v, text] for v, text in self.labels]
        elif self.points:
            out["points"] = list(self.points)
        return out

    @classmethod
    def from_dict(cls, data: Mapping) -> "Scale":
        source = str(data.get("source", "declared"))
        if data.get("symbols"):
            return _symbol_scale(dict(data["symbols"]), source, "the saved scale")
        if data.get("labels"):
            return form_scale({float(v): str(text) for v, text in data["labels"]})
        if data.get("points"):
            points = tuple(sorted(float(p) for p in data["points"]))
            return Scale(points[0], points[-1], (), source, points)
        return _range_scale(data.get("low"), data.get("high"), source, "the saved scale")


def _fmt(x: float | None) -> str:
    return "?" if x is None else (f"{int(x)}" if float(x).is_integer() else f"{x:g}")


def _range_scale(low, high, source: str, where: str) -> Scale:
    try:
        lo, hi = float(low), float(high)
    except (TypeError, ValueError):
        raise InputError(f"{where}: a scale range needs two numbers, the lowest and the highest score "
                         f"(got {low!r} and {high!r})") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
        raise InputError(f"{where}: the lowest score ({lo:g}) must be below the highest ({hi:g})")
    return Scale(lo, hi, (), source)


def _symbol_scale(values: Mapping, source: str, where: str) -> Scale:
    pairs = []
    for symbol, value in values.items():
        key = str(symbol).strip().upper()
        number = leading_number(value)
        if not key or number is None:
            raise InputError(f"{where}: the symbol {symbol!r} needs a number (e.g. A=6); got {value!r}")
        pairs.append((key, number))
    keys = [k for k, _ in pairs]
    if len(set(keys)) < len(keys):
        twice = sorted({k for k in keys if keys.count(k) > 1})
        raise InputError(f"{where}: the symbol(s) {', '.join(twice)} are given twice")
    numbers = [v for _, v in pairs]
    return Scale(min(numbers), max(numbers), tuple(pairs), source)


def form_scale(labels: Mapping[float, str]) -> Scale:
    """The scale a form states through its options' labels (number -> label), uneven steps kept."""
    pairs = tuple(sorted((float(v), str(text)) for v, text in labels.items()))
    points = tuple(v for v, _ in pairs)
    return Scale(points[0], points[-1], (), "form", points, pairs)


_LABEL_REST = re.compile(r"^\s*[+\-" + _MINUS + r"]?\s*\d+(?:\.\d+)?\s*[:.)\]/|-]?\s*\(?\s*(.*?)\s*\)?\s*$")


def form_labels(values: Sequence[Any], labels: Sequence[Any] | None = None) -> dict[float, str] | None:
    """Each score's label when the export states its form's options -- in the cell ("6: Weak Accept", "3 good",
    "2 (accept)") or beside it (a CMT choice's label next to its value) -- for every score present; else None.

    >>> form_labels(["1: Reject", "6: Weak Accept", "6: Weak Accept", "8: Accept"])
    {1.0: 'Reject', 6.0: 'Weak Accept', 8.0: 'Accept'}
    >>> form_labels([3, "4: good"]) is None, form_labels(["85%", "60%"]) is None  # a bare number states none
    (True, True)
    """
    found: dict[float, str] = {}
    numbers = set()
    pairs = zip(values, labels if labels is not None else [None] * len(values))
    for value, label in dict.fromkeys((v, lab) for v, lab in pairs if not is_blank(v)):
        number = leading_number(value)
        if number is None:
            return None
        numbers.add(number)
        text = str(label).strip() if label is not None and not is_blank(label) else ""
        if not text and isinstance(value, str) and _PERCENT.match(value) is None:  # "85%" is a number, no option
            match = _LABEL_REST.match(value)
            text = match.group(1).strip() if match else ""
        if text and number not in found:
            found[number] = text
    return found if numbers and set(found) == numbers else None


def scale_argument(value: Any, where: str = "the scale") -> Scale | None:
    """A declared scale from what a user writes; None for no declaration.

    Accepted: ``(low, high)`` or ``"1-5"`` / ``"-3..3"`` / ``"1 to 9"`` (a numeric range); a mapping
    ``{"A": 6, "AB": 5}`` or the text ``"A=6, AB=5, B=4"`` (symbols with values); a list of symbols or
    the text ``"A, AB, B, BC, C, D"`` -- **best first**, as grade ladders are written -- which numbers
    them n, n-1, ..., 1; rows ``[["A", 6], ["AB", 5]]`` (a two-column Scale sheet); a :class:`Scale`.
    """
    if value is None or isinstance(value, Scale):
        return value
    if isinstance(value, Mapping):
        if "symbols" in value or "low" in value:
            return Scale.from_dict(value)
        return _symbol_scale(value, "declared", where)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        if "=" in text:
            pairs = [part.split("=", 1) for part in re.split(r"[,;\n]", text) if part.strip()]
            if any(len(p) != 2 for p in pairs):
                raise InputError(f"{where}: write symbols with values as 'A=6, AB=5, B=4' (got {text!r})")
            return _symbol_scale({k.strip(): v.strip() for k, v in pairs}, "declared", where)
        numeric = re.match(r"^\s*([+\-" + _MINUS + r"]?\d+(?:\.\d+)?)\s*(?:\.\.|to|-|\u2013|:)\s*([+\-" + _MINUS
                           + r"]?\d+(?:\.\d+)?)\s*$", text)
        if numeric:
            return _range_scale(leading_number(numeric.group(1)), leading_number(numeric.group(2)), "declared", where)
        value = [part for part in re.split(r"[,;\s]+", text) if part]
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value):
        return _range_scale(value[0], value[1], "declared", where)
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(row, (list, tuple)) and len(row) >= 2 for row in value):
            rows = [row for row in value if not is_blank(row[0])]
            if rows and leading_number(rows[0][1]) is None:  # a header row (Symbol | Value)
                rows = rows[1:]
            return _symbol_scale({row[0]: row[1] for row in rows}, "declared", where)
        symbols = [str(v).strip() for v in value if not is_blank(v)]
        if not symbols:
            return None
        numbers = [leading_number(s) for s in symbols]
        if len(symbols) >= 3 and all(n is not None and not is_symbol(s) for n, s in zip(numbers, symbols)):
            points = tuple(sorted(set(numbers)))  # a form's options as numbers: 1, 3, 6, 8 (uneven steps kept)
            if len(points) < len(numbers):
                raise InputError(f"{where}: the scale's points are given twice ({', '.join(symbols)})")
            return Scale(points[0], points[-1], (), "declared", points)
        return _symbol_scale({s: len(symbols) - i for i, s in enumerate(symbols)}, "declared", where)
    raise InputError(f"{where}: cannot read a scale from {value!r}; write e.g. '1-5', 'A, B, C, D' (best first) "
                     "or 'A=6, AB=5, B=4'")


def _badness(symbol: str) -> int | None:
    """Position of a grade on a ladder, 0 = best: A, A-, AB, B+, B ... (None: not a ladder grade)."""
    base, suffix = (symbol[:-1], symbol[-1]) if symbol[-1] in "+-" else (symbol, "")
    if len(base) == 1:
        rank = 6 * (ord(base) - 65)
    elif ord(base[1]) == ord(base[0]) + 1:  # AB, BC: between two adjacent letters
        rank = 6 * (ord(base[0]) - 65) + 3
    else:
        return None
    return rank + {"+": -2, "-": 2, "": 0}[suffix]


def infer_symbol_scale(symbols: Sequence[str]) -> tuple[Scale | None, str]:
    """A ladder for the letter grades present (A best, values n..1), and a sentence saying how it was made.

    Single letters fill the alphabet between the best and the worst letter seen (a field A-D where nobody
    gave C still has C=2); mixed grades (AB, B+) are numbered in ladder order among those present.
    Returns (None, reason) when the symbols do not form a ladder (the user must declare the scale).
    """
    keys = sorted({s.strip().upper() for s in symbols})
    ranks = {k: _badness(k) for k in keys}
    odd = [k for k, r in ranks.items() if r is None]
    if odd:
        return None, f"the symbols {', '.join(odd)} do not form a letter ladder"
    if all(len(k) == 1 for k in keys):
        worst = max(ord(k) for k in keys)
        pairs = tuple((chr(c), float(worst - c + 1)) for c in range(ord(min(keys)), worst + 1))
        how = "letters turned so that higher = better"
    else:
        ordered = sorted(keys, key=lambda k: ranks[k])
        pairs = tuple((k, float(len(ordered) - i)) for i, k in enumerate(ordered))
        how = "grades turned so that higher = better, numbered among the grades present (declare the scale if " \
              "a grade of the ladder was never given)"
    values = [v for _, v in pairs]
    return Scale(min(values), max(values), pairs, "inferred"), how


@dataclass
class ValueReading:
    """What :func:`read_values` found: numbers, which entries failed and why, and the scale used."""

    numbers: np.ndarray
    bad: dict[int, str] = field(default_factory=dict)
    scale: Scale | None = None
    inferred: str = ""
    kind: str = "number"  # "number" or "symbol"


def read_values(values: Sequence[Any], scale: Scale | None, name: str = "score") -> ValueReading:
    """Numbers from raw cells (all non-blank): per distinct value, through *scale* when it is declared.

    Returns a :class:`ValueReading`: ``numbers`` (NaN where ``bad``), ``bad`` (position -> reason, e.g.
    ``"'E' is not on the declared scale (A=4, ..., D=1)"``) and the scale actually used (the declared one,
    or the one inferred from the data, with ``inferred`` saying how).
    """
    arr = np.asarray(values, dtype=object)
    codes, uniques = pd.factorize(arr, use_na_sentinel=False)
    distinct = list(uniques)
    numbers = np.full(len(distinct), np.nan)
    reasons: dict[int, str] = {}
    symbol_keys: dict[int, str] = {}
    declared_symbols = scale.symbol_values if scale is not None and scale.symbols else None
    for k, value in enumerate(distinct):
        text = value.strip() if isinstance(value, str) else value
        if declared_symbols is not None and isinstance(text, str) and text.upper() in declared_symbols:
            symbol_keys[k] = text.upper()
            continue
        number = leading_number(text)
        if number is not None:
            numbers[k] = number
        elif is_symbol(text):
            symbol_keys[k] = text.upper()
        elif isinstance(text, str) and _DECIMAL_COMMA.match(text):
            reasons[k] = f"{name} '{text}' has a decimal comma; write it with a decimal point"
        else:
            shown = str(text) if len(str(text)) <= 40 else str(text)[:37] + "..."
            reasons[k] = f"{name} '{shown}' is neither a number nor a scale symbol"
    reading = ValueReading(np.empty(0), scale=scale)
    numeric = [k for k in range(len(distinct)) if k not in symbol_keys and k not in reasons]
    if symbol_keys and declared_symbols is None and numeric:
        first_number = distinct[numeric[0]]
        for k in symbol_keys:
            reasons[k] = (f"{name} '{distinct[k]}' is a letter where the column also holds numbers (e.g. "
                          f"'{first_number}'); declare the scale (e.g. 'A=4, B=3') or correct the cell")
        symbol_keys = {}
    if symbol_keys:
        reading.kind = "symbol"
        if declared_symbols is None:
            inferred, how = infer_symbol_scale(list(symbol_keys.values()))
            if inferred is None:
                for k in symbol_keys:
                    reasons[k] = f"{name} '{distinct[k]}': {how}; declare the scale (best first, e.g. 'A, AB, B')"
            else:
                reading.scale, reading.inferred = inferred, how
                declared_symbols = inferred.symbol_values
        for k, key in symbol_keys.items():
            if k in reasons:
                continue
            if key in declared_symbols:
                numbers[k] = declared_symbols[key]
            else:
                reasons[k] = f"{name} '{distinct[k]}' is not on the {_scale_words(reading.scale)}"
        for k in numeric:
            reasons[k] = (f"{name} '{distinct[k]}' is a number where the scale is made of symbols "
                          f"({_scale_words(reading.scale)})")
    elif numeric:
        found = numbers[numeric]
        if scale is not None and not scale.symbols:
            for k in numeric:
                off_points = scale.points and min(abs(numbers[k] - p) for p in scale.points) > 1e-9
                if not scale.low <= numbers[k] <= scale.high or off_points:
                    reasons[k] = f"{name} {_fmt(numbers[k])} is off the {_scale_words(scale)}"
        elif scale is None:
            reading.scale = Scale(float(np.min(found)), float(np.max(found)), (), "inferred")
            reading.inferred = "lowest to highest score present"
    for k in reasons:
        numbers[k] = np.nan
    out = numbers[codes] if len(distinct) else np.zeros(0)
    bad = {}
    if reasons:
        flagged = np.flatnonzero(np.isin(codes, list(reasons)))
        bad = {int(i): reasons[int(codes[i])] for i in flagged}
    reading.numbers, reading.bad = out, bad
    return reading


def _scale_words(scale: Scale | None) -> str:
    if scale is None:
        return "scale"
    return ("declared scale " if scale.source == "declared" else "scale inferred from the data ") + \
        f"({scale.describe().rsplit(' (', 1)[0]})"


#: Level names, lowest confidence first (the names xlcalib's default Levels table uses).
LEVEL_NAMES = ("Low", "Medium", "High")


@dataclass
class ConfidenceLevels:
    """How a confidence or expertise value becomes the uncertainty of an evaluation: value -> level or SD.

    ``table`` maps each value of the field (as text: ``"4"``, ``"X"``) to a level name (``"High"``) or to
    an SD in score units (a number); ``kind`` is ``"level"`` or ``"sd"``; ``source`` says whether the
    user declared it or it was made by :meth:`default_from` (reported either way).  An empty table of
    kind ``"confidence"`` or ``"sd"`` takes the field's numbers as written (a grid's weight columns).
    """

    table: dict[str, Any]
    kind: str = "level"
    source: str = "declared"

    @classmethod
    def default_from(cls, present: Mapping[str, float]) -> "ConfidenceLevels":
        """Thirds of the field's range: the lowest third Low, the middle Medium, the top third High.

        *present* maps each confidence key found ("4", "X") to its number.  1-5 gives 1, 2 -> Low;
        3 -> Medium; 4, 5 -> High; 1-3 gives one level each.
        """
        finite = {k: float(v) for k, v in present.items() if v is not None and math.isfinite(v)}
        if not finite:
            return cls({}, "level", "default")
        lo, hi = min(finite.values()), max(finite.values())
        table = {}
        for key, v in sorted(finite.items(), key=lambda kv: kv[1]):
            p = (v - lo) / (hi - lo) if hi > lo else 0.5
            table[key] = "Low" if p < 1 / 3 - 1e-9 else ("High" if p > 2 / 3 + 1e-9 else "Medium")
        return cls(table, "level", "default")

    @classmethod
    def from_value(cls, value: Any) -> "ConfidenceLevels | None":
        """A declared table: a mapping value -> level name or SD, or a saved :meth:`to_dict`."""
        if value is None or isinstance(value, ConfidenceLevels):
            return value
        if not isinstance(value, Mapping):
            raise InputError("the confidence levels must be a table: confidence value -> level name (High, "
                             f"Medium, Low) or SD; got {type(value).__name__}")
        if "table" in value:
            return cls({str(k): v for k, v in dict(value["table"]).items()}, str(value.get("kind", "level")),
                       str(value.get("source", "declared")))
        table = {_key(k): v for k, v in value.items()}
        kinds = {"sd" if leading_number(v) is not None and not isinstance(v, str) else "level" for v in table.values()}
        if len(kinds) > 1:
            raise InputError("the confidence levels mix level names and numbers; give all as level names "
                             "(High, Medium, Low) or all as SDs")
        kind = kinds.pop() if kinds else "level"
        if kind == "sd":
            table = {k: float(v) for k, v in table.items()}
            bad = [k for k, v in table.items() if not (math.isfinite(v) and v > 0)]
            if bad:
                raise InputError(f"the confidence levels give SD {table[bad[0]]:g} for {bad[0]}; an SD must be > 0")
        return cls(table, kind, "declared")

    def to_dict(self) -> dict:
        return {"table": dict(self.table), "kind": self.kind, "source": self.source}

    @property
    def as_written(self) -> bool:
        return not self.table and self.kind in ("confidence", "sd")

    def describe(self) -> str:
        """``"1, 2 -> Low; 3 -> Medium; 4, 5 -> High"``."""
        if self.as_written:
            return f"the numbers as written, as {'SDs' if self.kind == 'sd' else 'relative weights (confidences)'}"
        groups: dict[Any, list[str]] = {}
        for key, target in self.table.items():
            groups.setdefault(target, []).append(key)
        unit = "" if self.kind == "level" else "SD "
        return "; ".join(f"{', '.join(keys)} -> {unit}{target}" for target, keys in groups.items())

    def lookup(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(uncertainty values, missing mask) for confidence keys (text), vectorised per distinct key."""
        codes, uniques = pd.factorize(np.asarray(keys, dtype=object), use_na_sentinel=False)
        mapped = [self.table.get(str(u)) for u in uniques]
        missing_u = np.asarray([m is None for m in mapped], dtype=bool)
        if self.kind == "sd":
            table = np.asarray([np.nan if m is None else float(m) for m in mapped], dtype=float)
        else:
            table = np.asarray([m for m in mapped], dtype=object)
        if not len(uniques):
            return np.empty(0, dtype=float if self.kind == "sd" else object), np.zeros(0, dtype=bool)
        return table[codes], missing_u[codes]


def _key(value: Any) -> str:
    number = leading_number(value)
    return _fmt(number) if number is not None and not is_symbol(value) else str(value).strip().upper()


def confidence_keys(values: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Keys of confidence cells as the levels table names them ("4", "X"), and the numbers behind them
    (NaN for symbols), per distinct value."""
    arr = np.asarray(values, dtype=object)
    codes, uniques = pd.factorize(arr, use_na_sentinel=False)
    keys = np.asarray([_key(u) for u in uniques] + [""], dtype=object)[codes] if len(uniques) else arr
    nums = np.asarray([(leading_number(u) if not is_symbol(u) else None) for u in uniques], dtype=float) \
        if len(uniques) else np.zeros(0)
    return keys, (nums[codes] if len(uniques) else np.zeros(0))
