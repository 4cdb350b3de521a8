"""Workbook I/O of the headless main job: reading + checking an evaluations sheet (xlsx and CSV), writing result
sheets, the whole ``xlcalib calibrate`` round trip, and a 10^6-row CSV calibrated end to end.
Peers: pandas.read_excel (openpyxl and calamine engines), pandas.read_csv, DataFrame.to_excel.

Run: ``python benchmarks/bench_workbook.py`` (or through ``benchmarks/run_all.py workbook``); set
``XLCALIB_BENCH_BIG=0`` to leave out the 10^6-row case.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import median_time, paired_median_times  # noqa: E402


def _panel(n_eval: int, seed: int = 0) -> pd.DataFrame:
    """A connected synthetic panel with ~3 reads per object and SD input."""
    rng = np.random.default_rng(seed)
    n_obj = n_eval // 3
    n_ass = max(21, n_eval // 250) | 1  # odd: the reads of an object never share one parity class
    objects = np.repeat(np.arange(n_obj), 3)
    assessors = (objects * 7 + np.tile(np.arange(3), n_obj) * (1 + n_ass // 3)) % n_ass
    score = rng.normal(5, 1.5, n_obj)[objects] + rng.normal(0, 0.5, n_ass)[assessors] + rng.normal(0, 1, len(objects))
    return pd.DataFrame({"Assessor": [f"A{a}" for a in assessors], "Object": [f"O{o}" for o in objects],
                         "Score": np.round(score, 2), "SD": rng.choice([0.5, 1.0, 2.0], len(objects))})


def _text_output_rows(residuals: pd.DataFrame, repeats: int) -> list[dict]:
    """The CLI's --format csv/json writer (formula-safe, round-trip floats) against pandas' own writers."""
    from xlcalib.workbook.text_output import csv_bytes, json_bytes, polars_or_none

    shape = f"{len(residuals):,} x {residuals.shape[1]}"
    engine = "polars" if polars_or_none() is not None else "pandas fallback (polars not installed)"
    t_ours = median_time(lambda: csv_bytes(residuals), repeats)
    t_peer = median_time(lambda: residuals.to_csv(index=False).encode("utf-8"), repeats)
    rows = [{"case": f"write Residuals as CSV ({shape})", "ours_s": t_ours, "peer": "DataFrame.to_csv",
             "peer_s": t_peer, "ratio": t_peer / t_ours, "note": f"ours: {engine}, formula-safe text"}]
    t_ours = median_time(lambda: json_bytes({"Residuals": residuals}), repeats)
    t_peer = median_time(lambda: residuals.to_json(orient="records").encode("utf-8"), repeats)
    rows.append({"case": f"write Residuals as JSON ({shape})", "ours_s": t_ours, "peer": "DataFrame.to_json(records)",
                 "peer_s": t_peer, "ratio": t_peer / t_ours,
                 "note": f"ours: {engine}, full float precision (the peer rounds to 10 decimals)"})
    return rows


def _xlsx_read_rows(path: Path, n_eval: int, repeats: int) -> list[dict]:
    """Reading and checking the evaluations sheet of an xlsx file, against pandas.read_excel's two engines."""
    from xlcalib.inputs import read_panel
    from xlcalib.workbook.reader import FastBook

    def ours_read():
        book = FastBook(path)
        panel = read_panel(book)
        book.close()
        assert len(panel.frame) == n_eval and not panel.problems

    t_ours = median_time(ours_read, repeats)
    t_peer = median_time(lambda: pd.read_excel(path, sheet_name="Evaluations", engine="openpyxl"), repeats)
    rows = [{"case": f"read + check evaluations sheet ({n_eval} rows)", "ours_s": t_ours,
             "peer": "pandas.read_excel(openpyxl)", "peer_s": t_peer, "ratio": t_peer / t_ours,
             "note": "ours: bounded scan + calamine + column-wise checks naming bad cells"}]
    t_peer = median_time(lambda: pd.read_excel(path, sheet_name="Evaluations", engine="calamine"), repeats)
    rows.append({"case": f"read + check evaluations sheet ({n_eval} rows)", "ours_s": t_ours,
                 "peer": "pandas.read_excel(calamine)", "peer_s": t_peer, "ratio": t_peer / t_ours,
                 "note": "the same Rust reader without bounds or checks"})
    return rows


def _xlsx_write_rows(residuals: pd.DataFrame, tmp: Path, repeats: int) -> list[dict]:
    """Writing a styled Residuals sheet (XlsxWriter, and the same SheetSpec through openpyxl) against to_excel."""
    from xlcalib.workbook import new_result_book, new_workbook, open_book, save_atomically

    def ours_write(book):
        open_book(book).write_frame("Residuals", residuals, preamble=[["xlcalib", "run"]], highlight="anomalous")
        save_atomically(book, tmp / "w.xlsx")

    shape = f"{len(residuals)} x {residuals.shape[1]}"
    t_ours = median_time(lambda: ours_write(new_result_book()), repeats)
    t_openpyxl = median_time(lambda: ours_write(new_workbook()), repeats)
    rows = []
    for engine in ("openpyxl", "xlsxwriter"):
        t_peer = median_time(lambda: residuals.to_excel(tmp / "p.xlsx", sheet_name="Residuals", index=False,
                                                        engine=engine), repeats)
        rows.append({"case": f"write styled Residuals sheet ({shape})", "ours_s": t_ours,
                     "peer": f"DataFrame.to_excel({engine})", "peer_s": t_peer, "ratio": t_peer / t_ours,
                     "note": "ours (XlsxWriter, streamed): formats, comments, widths, highlights, atomic rename; "
                             "the peer writes bare values"})
    rows.append({"case": f"write styled Residuals sheet ({shape})", "ours_s": t_ours,
                 "peer": "ours through openpyxl (live books, report copy)", "peer_s": t_openpyxl,
                 "ratio": t_openpyxl / t_ours, "note": "the same SheetSpec rendered cell by cell by openpyxl"})
    return rows


def _csv_read_rows(csv_path: Path, repeats: int, shown: str, expected: int | None = None) -> list[dict]:
    """Reading and checking an evaluations CSV, against pandas.read_csv (timed in turn, so both see one load);
    with *expected*, each read is checked to give that many evaluations and no problem."""
    from xlcalib.inputs import read_panel
    from xlcalib.workbook.csv_backend import CsvBook

    def ours_csv():
        panel = read_panel(CsvBook(csv_path))
        assert expected is None or (len(panel.frame) == expected and not panel.problems)

    t_ours, t_peer = paired_median_times(ours_csv, lambda: pd.read_csv(csv_path), repeats)
    return [{"case": f"read + check evaluations CSV ({shown} rows)", "ours_s": t_ours, "peer": "pandas.read_csv",
             "peer_s": t_peer, "ratio": t_peer / t_ours, "note": "goal: within 3x of the peer (ratio >= 0.33)"}]


def _big_rows(big: int, tmp: Path) -> list[dict]:
    """A big-panel CSV: read and checked, then calibrated end to end with CSV output (one run)."""
    from xlcalib.exercises import calibrate_file

    big_path = tmp / "big.csv"
    _panel(big, seed=1).to_csv(big_path, index=False)
    rows = _csv_read_rows(big_path, 3, f"{big:,}")
    started = time.perf_counter()
    calibrate_file(big_path, tmp / "big_out", fmt="csv")
    t_big = time.perf_counter() - started
    t_peer = median_time(lambda: pd.read_csv(big_path), 1)
    rows.append({"case": f"xlcalib calibrate {big:,}-row CSV end to end", "ours_s": t_big,
                 "peer": "pandas.read_csv alone", "peer_s": t_peer, "ratio": t_peer / t_big,
                 "note": "read + check, fit with bounds, write CSV; goal <= 10 s (one run)"})
    return rows + _text_output_rows(pd.read_csv(tmp / "big_out" / "big_Residuals.csv"), 1)


def run(n_eval: int = 30_000, repeats: int = 3, big: int | None = None) -> list[dict]:
    from xlcalib.exercises import calibrate_file

    if big is None:
        big = 0 if os.environ.get("XLCALIB_BENCH_BIG") == "0" else 1_000_000
    frame = _panel(n_eval)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = tmp / "panel.xlsx"
        frame.to_excel(path, sheet_name="Evaluations", index=False)
        rows = _xlsx_read_rows(path, n_eval, repeats)
        residuals = pd.DataFrame({"assessor": frame["Assessor"], "object": frame["Object"], "score": frame["Score"],
                                  "fitted": frame["Score"] + 0.1, "residual": 0.1, "std_residual": 0.2,
                                  "anomalous": False})
        rows += _xlsx_write_rows(residuals, tmp, repeats)
        noise = np.random.default_rng(2).normal(0, 1, (n_eval, 2))  # floats with all their digits, as real output
        rows += _text_output_rows(residuals.assign(residual=noise[:, 0], fitted=residuals["score"] - noise[:, 0],
                                                   std_residual=noise[:, 0] / noise[:, 1]), repeats)
        csv_path = tmp / "panel.csv"
        frame.to_csv(csv_path, index=False)
        rows += _csv_read_rows(csv_path, max(repeats, 21), str(n_eval), expected=n_eval)
        t_ours = median_time(lambda: calibrate_file(path, tmp / "out.xlsx"), repeats)
        rows.append({"case": f"xlcalib calibrate round trip ({n_eval} evaluations)", "ours_s": t_ours, "peer": "",
                     "peer_s": None, "ratio": None, "note": "read, calibrate with bounds, rank, 7 styled sheets + 4 charts"})
        if big:
            rows += _big_rows(big, tmp)
    return rows


if __name__ == "__main__":
    for row in run():
        ratio = f"{row['ratio']:.2f}x" if row["ratio"] else "-"
        peer = f"{row['peer_s']:.3f} s" if row["peer_s"] else "-"
        print(f"{row['case']:<55} ours {row['ours_s']:.3f} s  {row['peer'] or '-':<30} {peer:>9}  {ratio:>6}  {row['note']}")
