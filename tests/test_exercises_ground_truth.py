"""The uncertain ground truth exercise on a filled template: annotation certainty and UA metrics."""
from __future__ import annotations

import openpyxl

from xlcalib.exercises import ground_truth_report

from .test_templates import filled_ground_truth


def test_ground_truth_report(tmp_path):
    book = openpyxl.load_workbook(filled_ground_truth(tmp_path / "gt.xlsx"))
    frames = ground_truth_report(book)
    cert = frames["Certainty"]
    assert len(cert) == 4 and cert.loc[3, "certainty"] == 1.0  # unanimous single label
    ua = frames["UA metrics"].set_index("statistic")["value"]
    assert ua["UA top-3 accuracy"] <= ua["top-3 accuracy against the IRN labels"]
