"""Workbook I/O of the headless main job: reading an evaluations sheet, writing result sheets, the whole
``xlcalib calibrate`` round trip.  Peers: pandas.read_excel / DataFrame.to_excel (both over openpyxl).

Run: ``python benchmarks/bench_workbook.py`` (or through ``benchmarks/run_all.py workbook``).
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import median_time  # noqa: E402


def _panel(n_eval: int, seed: int = 0) -> pd.DataFrame:
    """A connected synthetic panel with ~3 reads per object and SD input."""
    rng = np.random.default_rng(seed)
    n_obj = n_eval // 3
    n_ass = max(20, n_eval // 250)
    objects = np.repeat(np.arange(n_obj), 3)
    assessors = (objects * 7 + np.tile(np.arange(3), n_obj) * (1 + n_ass // 3)) % n_ass
    score = rng.normal(5, 1.5, n_obj)[objects] + rng.normal(0, 0.5, n_ass)[assessors] + rng.normal(0, 1, len(objects))
    return pd.DataFrame({"Assessor": [f"A{a}" for a in assessors], "Object": [f"O{o}" for o in objects],
                         "Score": np.round(score, 2), "SD": rng.choice([0.5, 1.0, 2.0], len(objects))})


def run(n_eval: int = 30_000, repeats: int = 3) -> list[dict]:
    from xlcalib.cli import calibrate_file
    from xlcalib.inputs import evaluations_from_rows
    from xlcalib.workbook import new_workbook, open_book, open_workbook, save_atomically

    rows = []
    frame = _panel(n_eval)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "panel.xlsx"
        frame.to_excel(path, sheet_name="Evaluations", index=False)

        def ours_read():
            block = open_book(open_workbook(path)).read_block("Evaluations")
            evaluations_from_rows(block.rows, "Evaluations", block.first_row, block.first_column)

        t_ours = median_time(ours_read, repeats)
        t_peer = median_time(lambda: pd.read_excel(path, sheet_name="Evaluations", engine="openpyxl"), repeats)
        rows.append({"case": f"read + clean evaluations sheet ({n_eval} rows)", "ours_s": t_ours,
                     "peer": "pandas.read_excel(openpyxl)", "peer_s": t_peer, "ratio": t_peer / t_ours,
                     "note": "ours also validates every cell and names bad ones"})

        residuals = pd.DataFrame({"assessor": frame["Assessor"], "object": frame["Object"], "score": frame["Score"],
                                  "fitted": frame["Score"] + 0.1, "residual": 0.1, "std_residual": 0.2,
                                  "anomalous": False})

        def ours_write():
            book = new_workbook()
            open_book(book).write_frame("Residuals", residuals, preamble=[["xlcalib", "run"]], highlight="anomalous")
            save_atomically(book, Path(tmp) / "w.xlsx")

        t_ours = median_time(ours_write, repeats)
        t_peer = median_time(lambda: residuals.to_excel(Path(tmp) / "p.xlsx", sheet_name="Residuals", index=False),
                             repeats)
        rows.append({"case": f"write Residuals sheet ({n_eval} x 7)", "ours_s": t_ours,
                     "peer": "DataFrame.to_excel(openpyxl)", "peer_s": t_peer, "ratio": t_peer / t_ours,
                     "note": "ours adds formula-safe text, header styles, highlights, atomic rename"})

        csv_path = Path(tmp) / "panel.csv"
        frame.to_csv(csv_path, index=False)

        def ours_csv():
            from xlcalib.workbook.csv_backend import CsvBook

            block = CsvBook(csv_path).read_block("Evaluations")
            evaluations_from_rows(block.rows, "Evaluations", block.first_row, block.first_column)

        t_ours = median_time(ours_csv, repeats)
        t_peer = median_time(lambda: pd.read_csv(csv_path), repeats)
        rows.append({"case": f"read + clean evaluations CSV ({n_eval} rows)", "ours_s": t_ours,
                     "peer": "pandas.read_csv", "peer_s": t_peer, "ratio": t_peer / t_ours,
                     "note": "the fast input path (xlcalib calibrate FILE.csv)"})

        t_ours = median_time(lambda: calibrate_file(path, Path(tmp) / "out.xlsx"), repeats)
        rows.append({"case": f"xlcalib calibrate round trip ({n_eval} evaluations)", "ours_s": t_ours, "peer": "",
                     "peer_s": None, "ratio": None, "note": "read, calibrate with bounds, 4 sheets + 3 charts"})
    return rows


if __name__ == "__main__":
    for row in run():
        ratio = f"{row['ratio']:.2f}x" if row["ratio"] else "-"
        peer = f"{row['peer_s']:.3f} s" if row["peer_s"] else "-"
        print(f"{row['case']:<55} ours {row['ours_s']:.3f} s  {row['peer'] or '-':<30} {peer:>9}  {ratio:>6}  {row['note']}")
