"""A lottery that keeps what the data know, drawn from public inputs so that anyone can re-run it.

Why: a partial lottery is how a panel says "the data cannot separate these"; it must not throw away what the
data *can* separate, and it must be checkable by people who were not in the room.

**The informed lottery** funds every object with probability equal to its chance: its posterior P(rank <= k)
for a line of k places (:mod:`.ranking`), which sums to exactly k over the objects.  An object whose chance is
1 is funded, one whose chance is 0 is not; the others are drawn so that exactly the places left are filled and
each is funded with exactly its chance.  The draw is **systematic sampling in a random order** (Madow 1949,
Ann. Math. Stat. 20:333; the random order of Goodman & Kish 1950, JASA 45:350, and Hartley & Rao 1962, Ann.
Math. Stat. 33:350): the objects to draw are put in the order of their uniform numbers (below), laid end to
end on a line, each taking a stretch as long as its chance, and funded where one of the points
``start, start + 1, ..., start + m - 1`` falls in its stretch (m = the places left, ``start`` in [0, 1)).
Each stretch is shorter than 1, so it holds at most one point; over the start, an object is funded with
probability exactly the length of its stretch.  Why systematic and not conditional Poisson sampling (Hajek
1964; Chen, Dempster & Liu 1994, Biometrika 81:457), which has the most entropy: the systematic draw is exact in
whole-number arithmetic -- chances in ten-thousandths, every step an integer comparison -- so the same inputs give
the same draw on every machine and in any language (a spreadsheet can redo it in four columns), whereas
conditional Poisson sampling needs its working probabilities solved numerically, and its draw would depend on
the last bits of that solve; the random order (from the public seed) removes the systematic draw's one
weakness, an order someone chose, and gives every pair of objects a chance of being funded together.

**The uniform band lottery** (the practice of some funders, e.g. the SNSF's; kept as an option named for what
it is): the places left after the objects above the line go to the band next to the line, each member with the
same chance; the members with the smallest uniform numbers are funded.

**The public draw.**  Every random number comes from SHA-256 (FIPS 180-4) of text fixed by public inputs, as
RFC 3797 (IETF NomCom selection) does with MD5: the public seed -- any text the panel publishes before the
meeting -- and each object's name and chance.  For object *o* with chance *c* (a whole number of ten-thousandths)
its number is the first 8 bytes, big-endian, of SHA-256 of the UTF-8 text
``xlcalib lottery 1<TAB>seed<TAB>name<TAB>c`` and its uniform number that integer / 2^64.  The list's hash is
SHA-256 of the lines ``xlcalib lottery 1``, ``method<TAB>informed`` (or ``uniform band``),
``seed<TAB>seed``, ``places<TAB>k`` and one ``name<TAB>c`` line per object sorted by name (Unicode code
points), each line ending in a line feed; the start is the first 8 bytes of that hash x 10^4 / 2^64, rounded
down, in ten-thousandths.  So the draw cannot be re-rolled unnoticed: a different seed, name or chance gives other
numbers, and the hash ties the start to the whole list.  The seed is written as given (Unicode NFC, without
leading or trailing spaces); a whole number is written without a decimal point.  Names and seed may hold no
tab, line break or other control character.
"""
from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...errors import InputError

__all__ = ["UNITS", "METHODS", "LOTTERY_TAG", "LotteryDraw", "chances_in_units", "draw_lottery",
           "list_hash", "object_number", "public_seed", "start_point", "systematic_outcome", "uniform_band_outcome",
           "verify_lottery", "verify_words", "OUTCOMES", "LOTTERY_COLUMNS", "RECORD_ROWS", "UNIFORM_TOLERANCE"]

#: Chances are whole numbers of ten-thousandths (basis points): exact in every language's integers, and finer than
#: the Monte Carlo error of P(above) (1e-4 to 1e-3 in the band), so no figure claims more than the draws know.
UNITS = 10_000
#: The lottery's methods: the informed lottery (the default) and the uniform band lottery.
METHODS = ("informed", "uniform band")
#: The first field of every hashed text (the version of the recipe: another recipe would carry another tag).
LOTTERY_TAG = "xlcalib lottery 1"
#: Each object's outcome: chance 1, drawn and funded, drawn and not funded, chance 0.
OUTCOMES = ("funded", "funded by lottery", "not drawn", "not funded")
#: A number given as the public seed must be exact in a spreadsheet cell (a double holds every whole number to 2^53).
MAX_EXACT_NUMBER = 2**53
#: A uniform number is an integer of this many bits over 2^bits.
NUMBER_BITS = 64


def _no_control(text: str, what: str) -> str:
    """*text* itself, refused when it holds a control character (tab, line break ...): the hashed texts separate
    their fields with tabs and line feeds, so a field holding one would be ambiguous."""
    bad = next((ch for ch in text if unicodedata.category(ch) == "Cc"), None)
    if bad is not None:
        raise InputError(f"{what} {text!r} holds a control character ({bad!r}): a lottery's public record cannot "
                         "hold it (rename it without tabs or line breaks)")
    return text


def public_seed(seed) -> str:
    """The public seed as the hashed text: any text or number the panel published before the meeting, in
    Unicode NFC without leading or trailing spaces; a whole number without a decimal point (2026, not 2026.0).

    >>> public_seed("  Panel 2026, round 1 "), public_seed(2026.0), public_seed(7)
    ('Panel 2026, round 1', '2026', '7')
    """
    if isinstance(seed, (bool, np.bool_)) or seed is None:
        raise InputError("the public seed must be a text or a number the panel published before the meeting")
    if isinstance(seed, (int, np.integer, float, np.floating)):
        if not (np.isfinite(seed) and abs(seed) <= MAX_EXACT_NUMBER):
            raise InputError(f"the public seed {seed!r} is a number a cell cannot hold exactly (beyond 2^53): write it "
                             "as text")
        text = str(int(seed)) if float(seed).is_integer() else repr(float(seed))
    else:
        text = unicodedata.normalize("NFC", str(seed)).strip()
    if not text:
        raise InputError("the public seed is empty: give the text or number the panel published before the meeting")
    return _no_control(text, "the public seed")


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def object_number(seed: str, name: str, chance: int) -> int:
    """An object's number: the first 8 bytes (big-endian) of SHA-256("xlcalib lottery 1<TAB>seed<TAB>name<TAB>c").

    >>> object_number("2026", "P001", 2500)
    12415437401500027165
    """
    return int.from_bytes(_digest(f"{LOTTERY_TAG}\t{seed}\t{name}\t{int(chance)}")[:8], "big")


def list_hash(seed: str, places: int, method: str, names, chances) -> str:
    """SHA-256 (hex) of the canonical list: tag, method, seed, places and one ``name<TAB>chance`` line per object,
    sorted by name, each line ending in a line feed."""
    lines = [LOTTERY_TAG, f"method\t{method}", f"seed\t{seed}", f"places\t{int(places)}"]
    lines += [f"{n}\t{int(c)}" for n, c in sorted(zip(names, chances))]
    return hashlib.sha256(("\n".join(lines) + "\n").encode("utf-8")).hexdigest()


def start_point(digest: str) -> int:
    """The systematic draw's start in ten-thousandths, in [0, 10^4): the hash's first 8 bytes x 10^4 / 2^64, down."""
    return int(digest[:16], 16) * UNITS >> NUMBER_BITS


def chances_in_units(p: np.ndarray, places: int) -> np.ndarray:
    """Probabilities summing to *places* as whole ten-thousandths summing to exactly ``places x 10^4``, each within one
    ten-thousandth of 10^4 p and in [0, 10^4]: the largest-remainder rounding (Hamilton's apportionment) -- round
    down, then give the missing ten-thousandths to the largest remainders (ties by position).

    >>> chances_in_units(np.array([1 / 3, 1 / 3, 1 / 3]), 1).tolist()
    [3334, 3333, 3333]
    """
    quota = np.clip(np.asarray(p, dtype=float), 0.0, 1.0) * UNITS
    base = np.floor(quota).astype(np.int64)
    missing = int(places) * UNITS - int(base.sum())
    if not 0 <= missing <= base.size:
        raise InputError(f"the chances sum to {quota.sum() / UNITS:.4f}, not to the {places} places: they cannot be "
                         "drawn from")
    order = np.lexsort((np.arange(base.size), -(quota - base)))
    base[order[:missing]] += 1
    return base


def systematic_outcome(chances: np.ndarray, numbers: list[int], names: list[str], start: int):
    """The informed draw: (funded, order, from, to) for every object, whole numbers of ten-thousandths.

    The objects with 0 < chance < 10^4 are put in the order of (number, name) -- draw order 1, 2, ... -- and take
    the stretches [from, to) of the line end to end; an object is funded where a point ``start + j x 10^4``
    (j = 0, 1, ...) falls in its stretch.  Objects of chance 10^4 are funded, of chance 0 not (order 0).
    """
    chances = np.asarray(chances, dtype=np.int64)
    O = chances.size
    funded = chances >= UNITS
    order = np.zeros(O, dtype=np.int64)
    low, high = np.zeros(O, dtype=np.int64), np.zeros(O, dtype=np.int64)
    drawn = [i for i in range(O) if 0 < chances[i] < UNITS]
    drawn.sort(key=lambda i: (numbers[i], names[i]))
    at = 0
    for position, i in enumerate(drawn, start=1):
        order[i], low[i], high[i] = position, at, at + chances[i]
        at = high[i]
        # points below x: ceil((x - start) / 10^4) when x > start, else 0
        before = max(0, -(-(low[i] - start) // UNITS))
        upto = max(0, -(-(high[i] - start) // UNITS))
        funded[i] = upto > before
    return funded, order, low, high


def uniform_band_outcome(chances: np.ndarray, numbers: list[int], names: list[str], places: int):
    """The uniform band draw: (funded, order): the band (0 < chance < 10^4) in the order of (number, name); the
    first ``places - (objects of chance 10^4)`` of them are funded."""
    chances = np.asarray(chances, dtype=np.int64)
    funded = chances >= UNITS
    left = int(places) - int(funded.sum())
    band = sorted((i for i in range(chances.size) if 0 < chances[i] < UNITS), key=lambda i: (numbers[i], names[i]))
    if not 0 <= left <= len(band):
        raise InputError(f"the uniform band lottery has {left} place(s) for a band of {len(band)}: the chances are not "
                         "those of a uniform band")
    order = np.zeros(chances.size, dtype=np.int64)
    for position, i in enumerate(band, start=1):
        order[i] = position
        funded[i] = position <= left
    return funded, order


@dataclass(frozen=True)
class LotteryDraw:
    """A lottery's record: what anyone needs to re-run it (seed, places, method, chances) and what it gave.

    ``table`` is indexed by object, in the order given: ``chance`` (whole ten-thousandths), ``number`` (the 64-bit
    number as a Python int), ``uniform`` (number / 2^64), ``order`` (draw order, 0 when not drawn), ``from``/``to``
    (the stretch of the line in ten-thousandths, informed lottery), ``outcome`` (:data:`OUTCOMES`).
    """

    seed: str
    places: int
    method: str
    digest: str
    start: int
    table: pd.DataFrame

    @property
    def sure(self) -> int:
        """Places certain before the draw (objects of chance 1)."""
        return int((self.table["chance"] >= UNITS).sum())

    @property
    def drawn_places(self) -> int:
        """Places the draw filled."""
        return self.places - self.sure

    @property
    def candidates(self) -> int:
        """Objects in the draw (chance strictly between 0 and 1)."""
        return int(((self.table["chance"] > 0) & (self.table["chance"] < UNITS)).sum())


def _names(names) -> list[str]:
    out = [_no_control(str(n), "object") for n in names]
    if len(set(out)) != len(out):
        raise InputError("two objects have the same name: a lottery's record names each object once")
    return out


def draw_lottery(names, chances, places: int, seed, method: str = "informed") -> LotteryDraw:
    """Draw the lottery of *places* among objects *names* with *chances* (whole ten-thousandths; informed: summing to
    ``places x 10^4``) from the public *seed* (see the module docstring for every step)."""
    if method not in METHODS:
        raise InputError(f"the lottery is 'informed' or 'uniform band', not {method!r}")
    names, seed = _names(names), public_seed(seed)
    chances = np.asarray(chances, dtype=np.int64)
    if ((chances < 0) | (chances > UNITS)).any():
        raise InputError("a lottery chance lies outside 0 to 1")
    if method == "informed" and int(chances.sum()) != places * UNITS:
        raise InputError(f"the chances sum to {chances.sum() / UNITS:.4f}, not to the {places} places")
    numbers = [object_number(seed, n, c) for n, c in zip(names, chances)]
    digest = list_hash(seed, places, method, names, chances)
    start = start_point(digest)
    if method == "informed":
        funded, order, low, high = systematic_outcome(chances, numbers, names, start)
    else:
        funded, order = uniform_band_outcome(chances, numbers, names, places)
        low = high = np.zeros(chances.size, dtype=np.int64)  # no stretches: the band's smallest numbers win
    table = pd.DataFrame({"chance": chances, "number": pd.array(numbers, dtype=object),
                          "uniform": [n / 2.0**NUMBER_BITS for n in numbers], "order": order,
                          "from": low, "to": high, "outcome": _outcomes(chances, funded)},
                         index=pd.Index(names, name="object"))
    return LotteryDraw(seed, int(places), method, digest, start, table)


def _outcomes(chances: np.ndarray, funded: np.ndarray) -> np.ndarray:
    sure_in, sure_out = chances >= UNITS, chances <= 0
    return np.where(sure_in, OUTCOMES[0], np.where(sure_out, OUTCOMES[3],
                                                   np.where(funded, OUTCOMES[1], OUTCOMES[2]))).astype(object)


#: How far a uniform number on a sheet may sit from the computed one (a spreadsheet keeps 15-17 digits).
UNIFORM_TOLERANCE = 1e-12
#: The Lottery sheet's columns, as the presentation writes them and :func:`verify_lottery`'s readers find them.
LOTTERY_COLUMNS = ("object", "chance", "uniform number", "draw order", "stretch from", "stretch to", "outcome")
#: The record's rows above the table (label, key): what the draw was made from.
RECORD_ROWS = (("Public seed", "seed"), ("Places", "places"), ("Method", "method"), ("Hash (SHA-256)", "digest"),
               ("Start", "start"))


def verify_lottery(seed, places, method, digest, start, rows: pd.DataFrame) -> tuple[bool, list[str]]:
    """Re-run a lottery from its record and compare: (matches, the differences, each naming its row).

    *rows*: one row per object with ``row`` (how messages name it, e.g. "row 12"), ``object``, ``chance`` (whole
    ten-thousandths), ``uniform``, ``order``, ``from``, ``to`` (ten-thousandths, or None/NaN when blank) and ``outcome``;
    *digest* and *start* as recorded (None: not checked).  The seed, places and chances are the public inputs;
    everything else is recomputed from them and must agree.  Each row's uniform number depends on its own seed,
    name and chance only, so an edited row is named even when the edit breaks the whole draw.
    """
    try:
        seed = public_seed(seed)
        names = _names(rows["object"])
    except InputError as exc:
        return False, [exc.message]
    chances = rows["chance"].to_numpy(dtype=np.int64)
    problems = []
    for where, name, chance, stated in zip(rows["row"], names, chances, rows["uniform"]):
        computed = object_number(seed, name, chance) / 2.0**NUMBER_BITS
        if not abs(float(stated) - computed) <= UNIFORM_TOLERANCE:
            problems.append(f"{where} ({name}): its uniform number {float(stated):.12f} is not the one the seed, its "
                            f"name and its chance give ({computed:.12f}): the name, the chance or the number was "
                            "changed")
    try:
        again = draw_lottery(names, chances, int(places), seed, method)
    except InputError as exc:
        return False, problems + [exc.message]
    problems += _outcome_differences(again, rows)
    if digest is not None and str(digest).strip().lower() != again.digest:
        problems.append(f"the hash is {str(digest).strip()[:16]}..., the seed, places and chances give "
                        f"{again.digest[:16]}...: one of them differs from what was drawn")
    if start is not None and int(start) != again.start:
        problems.append(f"the start is {int(start) / UNITS:.4f}, the hash gives {again.start / UNITS:.4f}")
    return not problems, problems


def _outcome_differences(again: LotteryDraw, rows: pd.DataFrame) -> list[str]:
    """Rows whose draw order, stretch or outcome differs from the draw re-run from the public inputs."""
    problems = []
    for i, (where, name) in enumerate(zip(rows["row"], again.table.index)):
        got, stated = again.table.iloc[i], rows.iloc[i]
        drawn = int(got["order"]) > 0
        for column, words in (("order", "draw order"), ("from", "stretch from"), ("to", "stretch to")):
            expected = int(got[column]) if drawn and (column == "order" or again.method == "informed") else None
            value = _whole_or_none(stated[column])
            value = None if column == "order" and value == 0 else value
            if value != expected:
                problems.append(f"{where} ({name}): its {words} is {_units(value, column)}, the draw gives "
                                f"{_units(expected, column)}")
        if str(stated["outcome"]).strip() != got["outcome"]:
            problems.append(f"{where} ({name}): the sheet says '{stated['outcome']}', the draw gives '{got['outcome']}'")
    return problems


def _whole_or_none(value) -> int | None:
    """A recorded whole number, or None for a blank (None or NaN)."""
    if value is None or (isinstance(value, (float, np.floating)) and np.isnan(value)):
        return None
    return int(value)


def _units(value, column: str) -> str:
    if value is None:
        return "blank"
    return str(int(value)) if column == "order" else f"{int(value) / UNITS:.4f}"


#: Differences a verdict lists at most (the rest are counted).
SHOWN_DIFFERENCES = 5


def verify_words(matches: bool, problems: list[str], seed, places: int, objects: int) -> str:
    """The verdict of :func:`verify_lottery` in one line: "matches: ..." or "does not match: <first differences>"."""
    if matches:
        return (f"matches: re-run from the public seed '{seed}', the {places} place(s) and the {objects} objects' "
                "chances, the draw gives the same hash, uniform numbers, draw order and outcomes")
    shown = "; ".join(problems[:SHOWN_DIFFERENCES])
    more = f" (and {len(problems) - SHOWN_DIFFERENCES} more)" if len(problems) > SHOWN_DIFFERENCES else ""
    return f"does not match: {shown}{more}"
