"""No silent waits: a national-size panel through the command line, timed as a person at a terminal sees it.

3 x 10^5 evaluations (3,000 assessors x 100,000 objects, 3 reads each, whole points 1-6, H/M/L levels) as a
CSV file, ``xlcalib calibrate panel.csv --fund 2000 --scale 1-6 -o out.xlsx`` with stderr on a
pseudo-terminal: the time until the first progress line appears (goal: within 2 s of the start), the time
until the command ends (goal: 10 s on the 2-core machine, with the settled draws and the workbook written),
and the steps seen in order.  The "peer" column is the same command without a terminal (no progress drawn):
ratio = what drawing the progress line costs.
"""
from __future__ import annotations

import os
import pty
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd


def national_csv(path: Path, n_assessors: int = 3000, n_objects: int = 100_000, reads: int = 3, seed: int = 0):
    """A random incomplete whole-point panel on 1-6 with levels, written as an evaluations CSV."""
    rng = np.random.default_rng(seed)
    oi = np.repeat(np.arange(n_objects), reads)
    start = rng.integers(0, n_assessors, n_objects)
    step = rng.integers(1, n_assessors // 3, n_objects)
    ai = (np.repeat(start, reads) + np.tile(np.arange(reads), n_objects) * np.repeat(step, reads)) % n_assessors
    level = rng.choice(np.array(["High", "Medium", "Low"]), oi.size)
    sd = np.select([level == "High", level == "Medium"], [0.4, 0.7], 1.2)
    score = rng.normal(3.8, 0.8, n_objects)[oi] + rng.normal(0, 0.5, n_assessors)[ai] + sd * rng.standard_normal(oi.size)
    pd.DataFrame({"Assessor": [f"Assessor {i}" for i in ai], "Object": [f"P{j:06d}" for j in oi],
                  "Score": np.clip(np.round(score), 1, 6), "Level": level}).to_csv(path, index=False)


def _on_a_terminal(argv, cwd) -> tuple[float, float, str]:
    """(seconds to the first byte on stderr, seconds to the end, what stderr showed)."""
    master, slave = pty.openpty()
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "xlcalib", *argv], stdout=subprocess.DEVNULL, stderr=slave,
                            cwd=cwd)
    os.close(slave)
    first, shown = None, b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        first = first if first is not None else time.perf_counter() - started
        shown += chunk
    proc.wait()
    os.close(master)
    return (first if first is not None else float("nan")), time.perf_counter() - started, shown.decode("utf-8", "replace")


def run() -> list[dict]:
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        national_csv(folder / "panel.csv")
        argv = ["calibrate", "panel.csv", "--fund", "2000", "--scale", "1-6", "-o", "out.xlsx"]
        first, total, shown = _on_a_terminal(argv, folder)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "xlcalib", *argv, "--quiet"], cwd=folder, check=True,
                       stdout=subprocess.DEVNULL)
        quiet = time.perf_counter() - t0
    steps = [w for w in ("reading", "fitting", "standard errors", "ranking", "writing", "saving") if w in shown]
    return [
        {"case": "3e5 evaluations, calibrate --fund --scale to xlsx: first progress line", "ours_s": first,
         "peer": "-", "peer_s": None, "ratio": None, "note": "goal <= 2 s"},
        {"case": "3e5 evaluations, calibrate --fund --scale to xlsx: whole command on a terminal", "ours_s": total,
         "peer": "same command, --quiet", "peer_s": quiet, "ratio": quiet / total,
         "note": f"goal <= 10 s; steps seen: {', '.join(steps)}"},
    ]


if __name__ == "__main__":
    for row in run():
        print(row)
