"""Generate docs/FUNCTIONS.md from the catalogue: ``python -m udf_registry.docs [path]``."""
from __future__ import annotations

import sys
from pathlib import Path

from . import REGISTRY
from .registry import CATEGORIES


def render() -> str:
    lines = [
        "# xlcalib spreadsheet functions",
        "",
        "Generated from `udf_registry` by `python -m udf_registry.docs`; do not edit by hand",
        "(a test fails when this file is stale).",
        "",
        "All functions take ranges as Excel hands them over. Tables spill; an optional last argument",
        "`header` (default TRUE) adds a header row. Bad input shows as a short text in the cell,",
        "starting with `xlcalib:` and naming the problem and its position (e.g. `row 7 of the score range`).",
        "",
    ]
    categories: dict[str, list] = {}
    for entry in REGISTRY.values():
        categories.setdefault(entry.category, []).append(entry)
    for category, entries in categories.items():
        lines += [f"## {category}", "", f"Formulas from {CATEGORIES[category]}.", ""]
        for e in entries:
            params = ", ".join(f"[{a.name}]" if i >= _n_required(e) else a.name for i, a in enumerate(e.args))
            lines += [
                f"### {e.name}",
                "",
                e.help,
                "",
                f"Syntax: `{e.name}({params})`",
                "",
                "| argument | meaning |",
                "|---|---|",
                *[f"| `{a.name}` | {a.help.replace('|', '/')} |" for a in e.args],
                "",
                f"- **Returns:** {_returns(e)}",
                f"- **Example:** `{e.example}`",
                f"- **Formula:** {e.formula}",
                f"- **Core function:** `{e.core_name}`",
                "",
            ]
    return "\n".join(lines)


def _returns(entry) -> str:
    if entry.returns != "table":
        return "a single value."
    columns = ", ".join(f"`{c}`" for c in entry.columns)
    note = f", {entry.columns_note}" if entry.columns_note else ""
    return f"a table that spills, header row (when `header` is TRUE): {columns}{note}."


def _n_required(entry) -> int:
    import inspect

    return sum(1 for p in inspect.signature(entry.func).parameters.values() if p.default is inspect.Parameter.empty)


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "docs" / "FUNCTIONS.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(), encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
