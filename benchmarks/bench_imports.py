"""Review exports to the long table (xlcalib.imports): a HotCRP CSV of 10^5 reviews and a CMT XML export of 10^4
reviews x 16 questions.  Targets: HotCRP <= 1 s, CMT <= 2 s.  Peers: pandas.read_csv of the same CSV (parsing
alone, no roles, no checks) and xml.etree.ElementTree.fromstring of the same XML (a whole-document parse, no
cells read out).  Then ``xlcalib calibrate EXPORT`` end to end against ``xlcalib calibrate`` of the same long
table as an evaluations CSV (1,500 reviews).

Run: ``python benchmarks/bench_imports.py`` (or through ``benchmarks/run_all.py imports``).
"""
from __future__ import annotations

import csv
import io
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import paired_median_times  # noqa: E402


def hotcrp_export(n_reviews: int, seed: int = 0) -> bytes:
    """A HotCRP "Reviews (CSV)": 3 reviews a paper, pre- and post-rebuttal merit (post blank in a third), expertise."""
    rng = np.random.default_rng(seed)
    n_papers = n_reviews // 3
    paper = np.repeat(np.arange(1, n_papers + 1), 3)
    reviewer = (paper * 7 + np.tile(np.arange(3), n_papers) * 131) % max(50, n_reviews // 40)
    pre = rng.integers(1, 6, len(paper))
    post = np.where(rng.random(len(paper)) < 0.33, "", np.clip(pre + rng.integers(-1, 2, len(paper)), 1, 5).astype(str))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["paper", "title", "review", "reviewername", "email", "Pre-Response Overall Merit",
                     "Post-Rebuttal Overall Merit", "Reviewer expertise", "Comments for authors"])
    letters = np.array(list("ABC"))[np.tile(np.arange(3), n_papers)]
    for p, r, a, b, x, k in zip(paper, reviewer, pre, post, rng.integers(1, 5, len(paper)), letters):
        writer.writerow([p, f"Paper number {p}", f"{p}{k}", f"Reviewer {r}", f"r{r}@example.org", a, b, x,
                         "Clear, but the evaluation is thin.\nSee above."])
    return out.getvalue().encode("utf-8")


def cmt_export(n_reviews: int, n_questions: int = 16, seed: int = 0) -> bytes:
    """A CMT "Export to Excel > Reviews" (XML Spreadsheet 2003): 16 questions, 12 of them choices with value twins."""
    rng = np.random.default_rng(seed)
    head = ["Paper ID", "Paper Title", "Reviewer Name", "Reviewer Email", "Reviewer Number", "Created", "Last Modified"]
    choice = [q for q in range(1, n_questions + 1) if q % 4 != 1]  # Q1, Q5, Q9, Q13 are text
    for q in range(1, n_questions + 1):
        text = "Overall evaluation" if q == 2 else ("Confidence" if q == 3 else f"Question {q} about the work")
        head.append(f"Q{q} ({text}\n)")
        if q in choice:
            head.append(f"Q{q} ({text}\n - Value)")
    parts = ['<?xml version="1.0" encoding="utf-8"?>\n<Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet" '
             'xmlns:ss="urn:schemas-microsoft-com:office:spreadsheet">\n  <Worksheet ss:Name="Main">\n    <Table>\n'
             '      <Row>\n        <Cell ss:Index="1">\n          <Data ss:Type="String">Main</Data>\n'
             '        </Cell>\n      </Row>\n      <Row ss:Index="3">\n']
    parts += [f'        <Cell>\n          <Data ss:Type="String">{h}</Data>\n        </Cell>\n' for h in head]
    parts.append("      </Row>\n")
    values = rng.integers(1, 6, (n_reviews, n_questions))

    def cell(kind, v):
        return f'        <Cell>\n          <Data ss:Type="{kind}"><![CDATA[{v}]]></Data>\n        </Cell>\n'

    for i in range(n_reviews):
        row = [cell("Number", i // 3 + 1), cell("String", f"Paper title {i // 3}"), cell("String", f"Reviewer {i % 97}"),
               cell("String", f"r{(i * 7 + i // 3) % 97}@example.org"), cell("Number", i % 3 + 1),
               cell("String", "3/13/2025 6:21:39 PM -08:00"), cell("String", "3/14/2025 6:21:39 PM -08:00")]
        for q in range(1, n_questions + 1):
            if q in choice:
                row += [cell("String", f"Choice {values[i, q - 1]}: words"), cell("Number", values[i, q - 1])]
            else:
                row.append(cell("String", "A paragraph of review text.\nWith a second line."))
        parts.append("      <Row>\n" + "".join(row) + "      </Row>\n")
    parts.append("    </Table>\n  </Worksheet>\n</Workbook>\n")
    return "".join(parts).encode("utf-8")


def calibrate_export_row(n_reviews: int = 1_500, repeats: int = 3) -> dict:
    """``xlcalib calibrate EXPORT`` end to end (read, check, calibrate, result workbook with the Import report)
    against ``xlcalib calibrate`` of the same long table already written as an evaluations CSV: the cost of
    taking the export as it comes."""
    import tempfile

    from xlcalib.cli import main
    from xlcalib.imports import read_export, write_long_table

    with tempfile.TemporaryDirectory(prefix="xlcalib-bench-") as folder:
        export = Path(folder) / "reviews.csv"
        export.write_bytes(hotcrp_export(n_reviews))
        table = Path(folder) / "evaluations.csv"
        write_long_table(read_export(export), table, report=False)

        def ours():
            assert main(["calibrate", str(export), "-o", str(Path(folder) / "a.xlsx"), "--fund", "50"]) == 0

        def peer():
            assert main(["calibrate", str(table), "-o", str(Path(folder) / "b.xlsx"), "--fund", "50"]) == 0

        import contextlib

        with contextlib.redirect_stdout(io.StringIO()):
            t_ours, t_peer = paired_median_times(ours, peer, repeats)
    return {"case": f"xlcalib calibrate EXPORT, end to end ({n_reviews:,} HotCRP reviews)", "ours_s": t_ours,
            "peer": "xlcalib calibrate of the same evaluations CSV", "peer_s": t_peer, "ratio": t_peer / t_ours,
            "note": "ours adds: detection, roles, latest round, levels, Import report and Import sheets"}


def run(n_hotcrp: int = 100_000, n_cmt: int = 10_000, repeats: int = 3) -> list[dict]:
    from xlcalib.imports import read_export

    rows = []
    data = hotcrp_export(n_hotcrp)

    def ours_hotcrp():
        result = read_export(data)
        assert len(result.evaluations) == 3 * (n_hotcrp // 3)

    def peer_hotcrp():
        pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)

    t_ours, t_peer = paired_median_times(ours_hotcrp, peer_hotcrp, repeats)
    rows.append({"case": f"HotCRP CSV -> long table ({n_hotcrp:,} reviews, {len(data) / 1e6:.0f} MB)", "ours_s": t_ours,
                 "peer": "pandas.read_csv (parse only)", "peer_s": t_peer, "ratio": t_peer / t_ours,
                 "note": f"target <= 1 s: {'met' if t_ours <= 1.0 else 'MISSED'}; ours: roles, latest round, levels, "
                         "report"})
    xml = cmt_export(n_cmt)

    def ours_cmt():
        result = read_export(xml)
        assert len(result.evaluations) == n_cmt

    def peer_cmt():
        ET.fromstring(xml)

    t_ours, t_peer = paired_median_times(ours_cmt, peer_cmt, repeats)
    rows.append({"case": f"CMT XML -> long table ({n_cmt:,} reviews x 16 questions, {len(xml) / 1e6:.0f} MB)",
                 "ours_s": t_ours, "peer": "ElementTree.fromstring (parse only)", "peer_s": t_peer,
                 "ratio": t_peer / t_ours, "note": f"target <= 2 s: {'met' if t_ours <= 2.0 else 'MISSED'}; ours: "
                                                   "streamed, DTDs refused"})
    rows.append(calibrate_export_row(repeats=repeats))
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
