"""Agreement benchmarks: every coefficient with its SE on 10^5 subjects x 10 raters x 5 categories, 30% missing.

The peer is irrcac (a Python port of Gwet's irrCAC).  It needs pandas < 3, so it cannot live in the project's
environment; give the interpreter of a separate environment that has it in ``XLCALIB_IRRCAC_PYTHON``:

    python3 -m venv irrcac-env
    irrcac-env/bin/pip install "pandas<3" numpy scipy && irrcac-env/bin/pip install --no-deps irrcac==0.4.4
    XLCALIB_IRRCAC_PYTHON=irrcac-env/bin/python python benchmarks/run_all.py agreement

The same table is handed to it (an .npy file) and it times its five coefficients (Gwet, Fleiss, Conger,
Brennan-Prediger, Krippendorff; it has no percent agreement with an SE) in its own process, after import; the
ratio is its time over ours.  Without the variable (or when the interpreter fails) the row says "peer not
available".
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile

import numpy as np

from _timing import median_time
from xlcalib.agreement import agreement_bootstrap, agreement_coefficients, agreement_matrix

PEER_SCRIPT = r"""
import json, sys, time, warnings
import numpy as np, pandas as pd
from irrCAC.raw import CAC
warnings.simplefilter("ignore")
x = pd.DataFrame(np.load(sys.argv[1]))
started = time.perf_counter()
out = {}
for key, method in (("gwet_ac", "gwet"), ("fleiss_kappa", "fleiss"), ("conger_kappa", "conger"),
                    ("brennan_prediger", "bp"), ("krippendorff_alpha", "krippendorff")):
    est = getattr(CAC(x, digits=15), method)()["est"]
    out[key] = [float(est["coefficient_value"]), float(est["se"])]
print(json.dumps({"seconds": time.perf_counter() - started, "values": out}))
"""


def panel(n: int = 100_000, raters: int = 10, categories: int = 5, missing: float = 0.3, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, categories + 1, n)
    x = np.where(rng.random((n, raters)) < 0.7, truth[:, None], rng.integers(1, categories + 1, (n, raters)))
    x = x.astype(float)
    x[rng.random(x.shape) < missing] = np.nan
    return x


def run_peer(x: np.ndarray):
    """(seconds, values) from irrcac in its own interpreter, or None when it is not available."""
    python = os.environ.get("XLCALIB_IRRCAC_PYTHON")
    if not python:
        return None
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "ratings.npy")
        np.save(path, x)
        try:
            done = subprocess.run([python, "-c", PEER_SCRIPT, path], capture_output=True, text=True, timeout=1800)
        except (OSError, subprocess.TimeoutExpired):
            return None
    if done.returncode != 0:
        return None
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["seconds"], result["values"]


def run() -> list[dict]:
    rows = []
    x = panel()
    agreement_coefficients(x)
    ours = median_time(lambda: agreement_coefficients(x), 5)
    table = agreement_coefficients(x)
    peer = run_peer(x)
    case = "all 6 coefficients with SEs, 10^5 subjects x 10 raters x 5 categories, 30% missing"
    if peer is None:
        rows.append({"case": case, "ours_s": ours, "peer": "irrcac", "peer_s": None, "ratio": None,
                     "note": "peer not available (set XLCALIB_IRRCAC_PYTHON); target <= 1 s"})
    else:
        seconds, values = peer
        diff = max(max(abs(table.loc[k, "estimate"] - v[0]), abs(table.loc[k, "se"] - v[1])) for k, v in values.items())
        rows.append({"case": case, "ours_s": ours, "peer": "irrcac 0.4.4 (5 coefficients)", "peer_s": seconds,
                     "ratio": seconds / ours, "note": f"max |diff| of estimates and SEs {diff:.1e}; target <= 1 s"})

    weighted = median_time(lambda: agreement_coefficients(x, "quadratic"), 3)
    rows.append({"case": "same, quadratic weights (AC2 ...)", "ours_s": weighted, "peer": "-", "peer_s": None,
                 "ratio": None, "note": "target <= 1 s"})
    pairs = median_time(lambda: agreement_matrix(x, "gwet_ac"), 1)
    rows.append({"case": "rater x rater AC1 matrix with SEs (45 pairs), same table", "ours_s": pairs, "peer": "-",
                 "peer_s": None, "ratio": None, "note": ""})
    small = panel(n=10_000)
    boot = median_time(lambda: agreement_bootstrap(small, "krippendorff_alpha", n_boot=1000, seed=0), 3)
    rows.append({"case": "Krippendorff alpha bootstrap, 1,000 replicates, 10^4 subjects x 10 raters", "ours_s": boot,
                 "peer": "-", "peer_s": None, "ratio": None, "note": "target <= 1 s"})
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
