"""Run every benchmark module (benchmarks/bench_*.py) and print one table.

Each module exposes ``run()`` returning rows
``{"case", "ours_s", "peer", "peer_s", "ratio", "note"}`` — times are medians
of several runs measured in the same process, ratios are peer/ours (higher is
better for us).  Run with ``make bench`` or ``python benchmarks/run_all.py
[name ...]`` to run only some modules (e.g. ``calibration``).
"""
from __future__ import annotations

import importlib.util
import pathlib
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent


def _load(path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(HERE))
    spec.loader.exec_module(module)
    return module


def _fmt(value, unit=""):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}{unit}"
    return f"{value}{unit}"


def main(argv: list[str]) -> int:
    wanted = set(argv)
    rows = []
    for path in sorted(HERE.glob("bench_*.py")):
        name = path.stem.removeprefix("bench_")
        if wanted and name not in wanted:
            continue
        started = time.perf_counter()
        print(f"# {name} ...", file=sys.stderr, flush=True)
        for row in _load(path).run():
            rows.append({"module": name, **row})
        print(f"#   done in {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    header = ["module", "case", "ours", "peer", "peer time", "ratio (peer/ours)", "note"]
    table = [header] + [
        [r["module"], r["case"], _fmt(r.get("ours_s"), " s"), r.get("peer") or "-", _fmt(r.get("peer_s"), " s"),
         _fmt(r.get("ratio"), "x"), r.get("note", "")]
        for r in rows
    ]
    widths = [max(len(str(line[i])) for line in table) for i in range(len(header))]
    for i, line in enumerate(table):
        print("  ".join(str(cell).ljust(width) for cell, width in zip(line, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * width for width in widths))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
