"""The name a mistyped name was likely meant to be: the same apart from case and spaces, else one typing slip."""
from __future__ import annotations

from collections.abc import Sequence


def name_key(text: str) -> str:
    """A name as compared for "differ only in case or spaces" (typographic quotes are kept: a name is not a
    header, and one with a curly apostrophe is a different spelling, offered by :func:`suggest_names` as a
    typing slip)."""
    return " ".join(text.split()).casefold()


def _one_edit(a: str, b: str) -> bool:
    """True when *a* and *b* differ by one inserted, deleted or replaced character, or two swapped neighbours."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i:] == b[i + 1:]


def suggest_names(name: str, listed: Sequence[str], at_most: int = 3, limit: int = 20_000) -> list[str]:
    """The listed names *name* was likely meant to be: the same apart from case and spaces, else one typing slip.

    A name with more than *at_most* one-slip neighbours (``GR-2025-81`` next to
    ``GR-2025-01`` ... ``GR-2025-80``) gets no suggestion: any guess would be
    arbitrary.  Only lists up to *limit* names are searched for slips.
    """
    key = name_key(name)
    same = [candidate for candidate in listed if name_key(candidate) == key]
    if same:
        return same[:at_most]
    if len(listed) > limit:
        return []
    folded = name.casefold()
    near = []
    for candidate in listed:
        if _one_edit(folded, candidate.casefold()):
            near.append(candidate)
            if len(near) > at_most:
                return []
    return near


def suggest_name(name: str, listed: Sequence[str], limit: int = 20_000) -> str | None:
    """The one listed name *name* was most likely meant to be (see :func:`suggest_names`), or None."""
    found = suggest_names(name, listed, at_most=1, limit=limit)
    return found[0] if found else None


def did_you_mean(names: Sequence[str]) -> str:
    """The suggestion's words: "did you mean 'A', 'B' or 'C'?"."""
    quoted = [f"'{n}'" for n in names]
    return "did you mean " + (quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]) + "?"

