"""Writers of each review system's export shape, for the import tests and benchmarks (test code, not the package).

Each takes a long table (assessor, object, score, level with levels Low/Medium/High) and writes it the way
the system does (see tests/test_imports_systems.py for the sources of each shape); ``rng`` shuffles the
rows and the order of the columns that may come in any order.
"""
from __future__ import annotations

import csv
import io
import json

import numpy as np
import pandas as pd

LEVEL_NUMBER = {"Low": 1, "Medium": 2, "High": 3}
CONFIDENCE_LEVELS = {"1": "Low", "2": "Medium", "3": "High"}


def _shuffled(frame: pd.DataFrame, rng) -> pd.DataFrame:
    return frame.iloc[rng.permutation(len(frame))] if rng is not None else frame


def _csv(header: list, rows: list[list]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")


def _column_order(header: list, rng) -> list[int]:
    order = list(range(len(header)))
    if rng is not None:
        rng.shuffle(order)
    return order


def hotcrp_csv(long: pd.DataFrame, rng=None, letters: tuple[str, ...] | None = None) -> bytes:
    """Reviews (CSV): paper, title, review, reviewername, email, then the fields (letters: best first)."""
    frame = _shuffled(long, rng)
    header = ["paper", "title", "review", "reviewername", "email", "Overall merit", "Reviewer expertise",
              "Comments for authors"]
    symbol = (lambda s: letters[len(letters) - int(s)]) if letters else (lambda s: str(int(s)))
    rows = [[o, f"Title of {o}", f"{o}{chr(65 + k % 26)}", f"Name {a}", a, symbol(s), LEVEL_NUMBER[lv],
             "Line one.\nLine, two."] for k, (a, o, s, lv) in enumerate(frame[["assessor", "object", "score", "level"]]
                                                                       .itertuples(index=False))]
    order = _column_order(header, rng)
    return _csv([header[j] for j in order], [[r[j] for j in order] for r in rows])


def cmt_xml(long: pd.DataFrame, rng=None, track: str = "Main Track") -> bytes:
    """Export to Excel > Reviews: XML Spreadsheet 2003, track name in row 1, header in row 3, label + value twins."""
    frame = _shuffled(long, rng)
    head = ["Paper ID", "Paper Title", "Reviewer Name", "Reviewer Email", "Reviewer Number", "Created",
            "Last Modified", "Q1 (Summary\n)", "Q2 (Overall evaluation of the submission\n)",
            "Q2 (Overall evaluation of the submission\n - Value)", "Q3 (Reviewer confidence)",
            "Q3 (Reviewer confidence - Value)"]
    order = _column_order(head, rng)

    def cell(v):
        kind = "Number" if isinstance(v, (int, float, np.integer, np.floating)) else "String"
        v = v.item() if hasattr(v, "item") else v
        return f'<Cell><Data ss:Type="{kind}"><![CDATA[{v}]]></Data></Cell>'

    parts = ['<?xml version="1.0" encoding="utf-8"?>',
             '<Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet" '
             'xmlns:ss="urn:schemas-microsoft-com:office:spreadsheet">',
             f'<Worksheet ss:Name="{track}"><Table>',
             f'<Row><Cell ss:Index="1"><Data ss:Type="String">{track}</Data></Cell></Row>',
             '<Row ss:Index="3">' + "".join(f'<Cell><Data ss:Type="String">{head[j]}</Data></Cell>' for j in order)
             + "</Row>"]
    for k, (a, o, s, lv) in enumerate(frame[["assessor", "object", "score", "level"]].itertuples(index=False)):
        row = [o, f"Title {o}", f"Name {a}", a, k % 5 + 1, "1/2/2024 9:00:00 AM -08:00",
               "1/3/2024 9:00:00 AM -08:00", "A summary", f"Choice {int(s)}", int(s), f"{lv} confidence",
               LEVEL_NUMBER[lv]]
        parts.append("<Row>" + "".join(cell(row[j]) for j in order) + "</Row>")
    parts.append("</Table></Worksheet></Workbook>")
    return "\n".join(parts).encode("utf-8")


def easychair_csv(long: pd.DataFrame, rng=None) -> bytes:
    """review.csv: the scores of a review packed in one multi-line cell."""
    frame = _shuffled(long, rng)
    header = ["#", "submission #", "member #", "member name", "number", "version", "text", "scores",
              "reviewer first name", "reviewer last name", "reviewer email", "reviewer person #", "date", "time",
              "attachment?"]
    rows = []
    for k, (a, o, s, lv) in enumerate(frame[["assessor", "object", "score", "level"]].itertuples(index=False)):
        scores = f"Overall evaluation: {int(s)}\nReviewer's confidence: {LEVEL_NUMBER[lv]}"
        rows.append([k + 1, o, 7, "Chair Name", 1, 1, "text", scores, "First", "Last", a, 9, "2024-03-01", "10:00",
                     "no"])
    order = _column_order(header, rng)
    return _csv([header[j] for j in order], [[r[j] for j in order] for r in rows])


def openreview_json(long: pd.DataFrame, rng=None) -> tuple[bytes, dict[str, str]]:
    """API 2 review notes and the identity map (anonymous signature -> person) that links them."""
    frame = _shuffled(long, rng)
    papers = {o: i + 1 for i, o in enumerate(sorted(set(long["object"])))}
    notes, identity = [], {}
    for k, (a, o, s, lv) in enumerate(frame[["assessor", "object", "score", "level"]].itertuples(index=False)):
        signature = f"Venue.cc/2026/Conference/Submission{papers[o]}/Reviewer_x{k}"
        identity[signature] = a
        notes.append({"id": f"n{k}", "forum": o, "replyto": o, "signatures": [signature],
                      "invitations": [f"Venue.cc/2026/Conference/Submission{papers[o]}/-/Official_Review"],
                      "content": {"rating": {"value": f"{int(s)}: words about it"},
                                  "confidence": {"value": LEVEL_NUMBER[lv]}}, "tmdate": 1_700_000_000_000 + k})
    return json.dumps(notes).encode("utf-8"), identity


def grid_csv(long: pd.DataFrame, rng=None) -> bytes:
    """Proposals x assessors with a confidence column beside each assessor's scores."""
    assessors = sorted(set(long["assessor"]))
    if rng is not None:
        assessors = [assessors[i] for i in rng.permutation(len(assessors))]
    objects = sorted(set(long["object"]))
    if rng is not None:
        objects = [objects[i] for i in rng.permutation(len(objects))]
    cells = {(a, o): (s, lv) for a, o, s, lv in long[["assessor", "object", "score", "level"]].itertuples(index=False)}
    header = ["Proposal"]
    for a in assessors:
        header += [a, f"{a} confidence"]
    rows = []
    for o in objects:
        row = [o]
        for a in assessors:
            s, lv = cells.get((a, o), (None, None))
            row += ["" if s is None else int(s), "" if lv is None else LEVEL_NUMBER[lv]]
        rows.append(row)
    return _csv(header, rows)
