"""The xlwings Lite example through xlwings Lite's own code path, and timings of representative calls.

Run by ``make test-lite`` twice on the same inputs: under CPython (``.venv``), writing a JSON
reference, and inside Pyodide, where the runner compares.  Both sides do what xlwings Lite does
with ``examples/xlwings_lite/main.py``:

* import xlwings the way Lite's runtime does (``XLWINGS_ON_SERVER=true``), so ``xw.func/arg/ret``
  are the Office.js decorators of ``xlwings.server`` (xlwings PRO code, which Lite runs under its
  own licence; here the documented ``noncommercial`` key is used unless ``XLWINGS_LICENSE_KEY`` is
  set);
* register the module's functions with ``custom_functions_meta`` (what Lite turns into Excel's
  function metadata) and call each with ``custom_functions_call`` on the sample arguments of
  ``tests/test_udf.py`` (``CASES``: one per catalogue function), returning the cells Excel gets.

Must run in a fresh interpreter (before anything imports xlwings without the server setting).
"""
from __future__ import annotations

import math
import os
import pathlib
import runpy
import sys
import time
import types


def _main_path(repo: pathlib.Path) -> pathlib.Path:
    return repo / "examples" / "xlwings_lite" / "main.py"


def load_main(repo: pathlib.Path):
    """main.py as xlwings Lite loads it: a module whose decorated functions Lite registers."""
    os.environ["XLWINGS_ON_SERVER"] = "true"
    os.environ.setdefault("XLWINGS_LICENSE_KEY", "noncommercial")
    if "xlwings" in sys.modules and getattr(sys.modules["xlwings"], "func").__module__ != "xlwings.pro.udfs_officejs":
        # imported earlier without the Lite setting (e.g. by another test): import it afresh
        for name in [m for m in sys.modules if m.split(".")[0] in ("xlwings", "udf_registry")]:
            del sys.modules[name]
    import xlwings as xw

    if xw.func.__module__ != "xlwings.pro.udfs_officejs":
        raise RuntimeError(f"xw.func is {xw.func.__module__}.func, not xlwings Lite's Office.js decorator")
    module = types.ModuleType("main")
    module.__dict__.update(runpy.run_path(str(_main_path(repo)), run_name="main"))
    return module


def _sample_calls(repo: pathlib.Path) -> dict:
    if str(repo) not in sys.path:
        sys.path.insert(0, str(repo))
    from tests.test_udf import CASES

    return {name: case[0] for name, case in sorted(CASES.items())}


async def lite_cells(repo) -> dict:
    """{"registered": [...], "meta": {name: parameter names}, "cells": {name: cells}} via xlwings Lite's path."""
    repo = pathlib.Path(repo)
    module = load_main(repo)
    import xlwings as xw
    from xlwings.server import custom_functions_call, custom_functions_meta

    meta = custom_functions_meta(module)
    registered = sorted(f["id"] for f in meta["functions"])
    cells = {}
    for name, args in _sample_calls(repo).items():
        data = {"func_name": name, "args": list(args), "version": xw.__version__, "client": "Office.js",
                "runtime": "1.4", "caller_address": None}
        cells[name] = await custom_functions_call(data, module)
    return {"registered": registered,
            "meta": {f["id"]: [p["name"] for p in f["parameters"]] for f in meta["functions"]},
            "cells": cells}


#: Functions whose numbers pass through a bounded likelihood search (the decisions' model finds the objects'
#: variance to 1e-4 on its log): its last steps round differently on another platform, so their cells agree to
#: about 1e-9..1e-7, not to the last bits.  The ordinal model's ranking: its fit is iterative (Newton to a
#: gradient tolerance) and P(above) sums single-precision conditional terms, so the same.
SEARCHED = {"CALIB_NEXT_READS": 1e-6, "CALIB_RANKING": 1e-6, "RASCH_RANKING": 1e-6}


def compare_cells(got: dict, ref: dict, rel: float = 1e-9) -> dict:
    """Cell-by-cell comparison: text/blank/bool equal, numbers equal to ``rel`` (relative; looser for SEARCHED)."""
    n = identical = 0
    worst = 0.0
    problems = []

    def walk(a, b, where, rel=rel):
        nonlocal n, identical, worst
        if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b)):
                walk(x, y, f"{where}[{i}]", rel)
            return
        n += 1
        if a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)):
            identical += 1
            return
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) \
                and not isinstance(b, bool):
            d = abs(a - b) / max(abs(a), abs(b), 1e-300)
            worst = max(worst, d)
            if d <= rel:
                return
        problems.append(f"{where}: Pyodide {a!r} vs CPython {b!r}")

    for name in sorted(set(got) | set(ref)):
        if name not in got or name not in ref:
            problems.append(f"{name}: only on one side")
            continue
        walk(got[name], ref[name], name, SEARCHED.get(name, rel))
    return {"cells": n, "identical": identical, "max_rel_diff": worst, "problems": problems}


# ----------------------------------------------------------------------------------------------
# timings: the same representative calls on the same inputs under both interpreters


def _panel(n_objects=300, reads=3, n_assessors=30):
    import numpy as np

    rng = np.random.default_rng(0)
    rows = [(f"A{(o + d * 7) % n_assessors}", f"P{o}") for o in range(n_objects) for d in range(reads)]
    scores = rng.normal(5, 1, len(rows)).round(1)
    levels = [["High", "Medium", "Low"][i % 3] for i in range(len(rows))]
    return [r[0] for r in rows], [r[1] for r in rows], scores, levels


def timing_cases():
    """(case, callable) pairs; inputs are built once, outside the timed call."""
    import numpy as np

    import xlcalib
    from udf_registry import calibration as udf_cal
    from udf_registry.registry import REGISTRY

    a, o, s, lv = _panel()
    col = lambda v: [[x] for x in v]  # noqa: E731
    a_c, o_c, lv_c = col(a), col(o), col(lv)
    counter = iter(range(10**9))

    def calib_udf():
        udf_cal._cache.clear()
        k = next(counter)
        REGISTRY["CALIB_VALUES"].func(a_c, o_c, col(s + 1e-3 * (k % 7)), lv_c)

    rng = np.random.default_rng(1)
    r1 = rng.integers(1, 6, 20_000)
    r2 = np.clip(r1 + rng.integers(-1, 2, r1.size), 1, 5)
    ws = xlcalib.datasets.wordsim353()
    h = rng.integers(1, 7, 5_000).astype(float)
    m = np.clip(h + rng.normal(0, 0.8, h.size), 1, 6)
    conc = rng.gamma(1.0, 1.0, (100, 20))
    grades = np.clip(rng.integers(1, 6, (2_000, 1)) + rng.integers(-1, 2, (2_000, 5)), 1, 5).astype(float)
    grades[rng.random(grades.shape) < 0.1] = np.nan
    return [
        ("calibrate: 900 evaluations (30 assessors x 300 objects)", lambda: xlcalib.calibrate(
            assessors=a, objects=o, scores=s, level=lv)),
        ("CALIB_VALUES spreadsheet call, 900 evaluations (no cache)", calib_udf),
        ("svensson: 20,000 pairs, 5 categories (with jackknife SEs)", lambda: xlcalib.svensson(r1, r2)),
        ("icc_table: WordSim-353 (353 x 13)", lambda: xlcalib.icc_table(ws)),
        ("krr_bootstrap: WordSim-353, 200 resamples", lambda: xlcalib.krr_bootstrap(ws, n_boot=200, seed=0)),
        ("evaluation_metrics: 5,000 scores", lambda: xlcalib.evaluation_metrics(h, m)),
        ("agreement_coefficients: 2,000 subjects x 5 raters, quadratic, 10% missing",
         lambda: xlcalib.agreement_coefficients(grades, "quadratic")),
        ("annotation certainty: 100 items x 20 classes, 500 Dirichlet draws", lambda: (
            xlcalib.ground_truth.certainty_from_samples(xlcalib.ground_truth.sample_dirichlet(conc, 500, 0)))),
    ]


def timings(repeats: int = 5, budget: float = 0.5, max_repeats: int = 50) -> dict:
    """Best time per case of at least ``repeats`` calls (more for fast cases, within ``budget`` seconds).

    The best, not the median: CPython and Pyodide run one after the other on a shared machine, and
    the minimum is what is least disturbed by other load.  Pyodide is single-threaded; the CPython
    reference is run with one BLAS thread (OPENBLAS_NUM_THREADS=1, set by the callers) to compare
    the same work.
    """
    out = {}
    for case, fn in timing_cases():
        fn()  # first-call costs (imports, caches) out of the way
        times = []
        while len(times) < repeats or (sum(times) < budget and len(times) < max_repeats):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        out[case] = min(times)
    return out


def timing_table(pyodide: dict, cpython: dict) -> list[str]:
    rows = [("case", "CPython", "Pyodide", "Pyodide/CPython")]
    for case, t in pyodide.items():
        ref = cpython.get(case)
        rows.append((case, f"{ref * 1e3:.1f} ms" if ref else "-", f"{t * 1e3:.1f} ms",
                     f"{t / ref:.1f}x" if ref else "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def main(argv=None) -> int:
    """CPython side: write the reference JSON (cells and timings)."""
    import argparse
    import asyncio
    import json

    p = argparse.ArgumentParser()
    p.add_argument("--repo", default=str(pathlib.Path(__file__).resolve().parent.parent))
    p.add_argument("--out", required=True)
    p.add_argument("--no-timings", action="store_true")
    p.add_argument("--timings-only", action="store_true")
    args = p.parse_args(argv)
    result = {"cells": {}} if args.timings_only else asyncio.run(lite_cells(args.repo))
    result["timings"] = {} if args.no_timings else timings()
    result["python"] = sys.version.split()[0]
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(args.out).write_text(json.dumps(result))
    print(f"test-lite: CPython {result['python']} reference: {len(result['cells'])} functions, "
          f"{len(result['timings'])} timings -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
