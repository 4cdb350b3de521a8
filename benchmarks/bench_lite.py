"""xlcalib in xlwings Lite's runtime (Pyodide 0.27.7 under Node.js) versus CPython, same inputs.

Runs only when the Lite harness is available: Node.js and the verified Pyodide cache that
``make test-lite`` (lite/fetch.py) leaves in ``.lite-cache/``; otherwise one row says why it was
skipped.  The wheel is rebuilt from the working tree, CPython's timings are measured here and
Pyodide's by ``node lite/run.mjs --bench`` right after, on the cases of ``lite/lite_calls.py``
(best of at least 5 calls each).  ``ours`` is Pyodide, the "peer" CPython: ratio = CPython/Pyodide, so
below 1 means slower in the browser.
"""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CACHE = ROOT / ".lite-cache"


def _skip(reason: str) -> list[dict]:
    return [{"case": "Pyodide vs CPython", "ours_s": None, "peer": "CPython", "peer_s": None, "ratio": None,
             "note": f"skipped: {reason}"}]


def run() -> list[dict]:
    if shutil.which("node") is None:
        return _skip("Node.js is not installed")
    if not (CACHE / "manifest.json").exists():
        return _skip("no verified Pyodide in .lite-cache/ (run make test-lite once)")
    dist = CACHE / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(dist), str(ROOT)],
                   check=True, capture_output=True)
    run_dir = CACHE / "run"
    run_dir.mkdir(exist_ok=True)
    ref = run_dir / "cpython.json"
    # CPython with one BLAS thread, as Pyodide has (same work on both sides)
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, str(ROOT / "lite" / "lite_calls.py"), "--timings-only", "--out", str(ref)],
                   check=True, capture_output=True, env=env)
    cpython = json.loads(ref.read_text())["timings"]
    proc = subprocess.run(["node", str(ROOT / "lite" / "run.mjs"), "--cache", str(CACHE), "--repo", str(ROOT),
                           "--bench"], capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        return _skip(f"Pyodide run failed: {(proc.stderr or proc.stdout).strip().splitlines()[-1:]}")
    pyodide = json.loads((run_dir / "pyodide_timings.json").read_text())["pyodide"]
    return [{"case": case, "ours_s": t, "peer": "CPython", "peer_s": cpython[case], "ratio": cpython[case] / t,
             "note": f"Pyodide is {t / cpython[case]:.1f}x slower"} for case, t in pyodide.items()]
