"""Each system's export, written by hand in its shape (invented names, no real reviewer data), read back.

Shapes follow each system's own source or documentation: HotCRP's review CSV and batch export
(la_getreviewcsv.php, batch/reviewcsv.php), CMT's XML Spreadsheet export (a public sample's structure),
EasyChair's review.csv (the columns chairs' scripts read), OpenReview notes (openreview-py's Note.to_json).
"""
from __future__ import annotations

import io
import json
import zipfile

from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest

import xlcalib
from xlcalib.cli import main
from xlcalib.errors import InputError, InputProblems
from xlcalib.imports import ColumnMapping, read_export

# ---------------------------------------------------------------------------------------------------------
# HotCRP
# ---------------------------------------------------------------------------------------------------------
HOTCRP = (
    "paper,title,review,reviewername,email,Pre-Response Overall Merit,Post-Rebuttal Overall Merit,Reviewer expertise,"
    "Comments for authors\n"
    '1,"Tea, revisited",1A,Ada Quill,ada@example.org,3,4,3,"Fine.\nReally."\n'
    "1,\"Tea, revisited\",1B,Bo Fenn,bo@example.org,2,,2,Weak.\n"
    "2,Cake theory,2A,Ada Quill,ada@example.org,5,,4,Great\n"
    "2,Cake theory,2B,Cy Dorn,cy@example.org,,,1,No score yet\n"
    "3,Scones,3A,Bo Fenn,bo@example.org,1,2,1,Meh\n"
    "3,Scones,3B,Cy Dorn,cy@example.org,4,4,4,Good\n"
)


def test_hotcrp_latest_nonblank_score_and_report():
    result = read_export(HOTCRP.encode())
    ev = result.evaluations.set_index(["assessor", "object"])
    assert result.source == "hotcrp"
    assert ev.loc[("ada@example.org", "1"), "score"] == 4  # post-rebuttal wins
    assert ev.loc[("bo@example.org", "1"), "score"] == 2  # post blank: the pre-response score stays
    assert ev.loc[("bo@example.org", "3"), "score"] == 2
    assert len(result.evaluations) == 5
    report = result.report
    blank = report[report["reason"] == "no score entered"]
    assert blank[["row", "cell", "assessor"]].values.tolist() == [[5, "G5", "cy@example.org"]]
    superseded = report[report["reason"].str.startswith("superseded")]
    assert sorted(superseded["cell"]) == ["F2", "F6", "F7"]  # each pre-response score that a post-rebuttal replaced
    assert result.mapping.score == ["Pre-Response Overall Merit", "Post-Rebuttal Overall Merit"]
    assert result.mapping.confidence == "Reviewer expertise"
    assert any("time order" in n for n in result.notes)


def test_hotcrp_named_round_and_levels():
    result = read_export(HOTCRP.encode(), round="pre-response")
    ev = result.evaluations.set_index(["assessor", "object"])
    assert ev.loc[("ada@example.org", "1"), "score"] == 3
    # expertise 1..4 -> thirds: 1 Low; 2, 3 Medium; 4 High
    assert result.mapping.confidence_levels.table == {"1": "Low", "2": "Medium", "3": "Medium", "4": "High"}
    assert ev.loc[("ada@example.org", "2"), "level"] == "High"


def test_hotcrp_letters_turned_and_hidden_identities():
    text = ("paper,title,review,Overall merit\n1,A,1A,A\n1,A,1B,C\n2,B,2A,B\n2,B,2B,D\n")
    result = read_export(text.encode())
    assert result.evaluations["score"].tolist() == [4.0, 2.0, 3.0, 1.0]  # A best
    assert not result.linked
    assert any("cannot be linked" in n for n in result.notes)
    assert any("higher = better" in n for n in result.notes)
    assert result.evaluations["assessor"].tolist() == ["1A", "1B", "2A", "2B"]


def test_hotcrp_batch_status_and_narrow_form():
    wide = ("pid,review,email,round,submitted_at,vtag,status,Overall merit\n"
            "1,1A,ada@example.org,R1,1700000000,1,complete,3\n"
            "1,1B,bo@example.org,R1,,1,draft,2\n"
            "2,2A,ada@example.org,R2,1700000100,1,complete,5\n")
    result = read_export(wide.encode())
    assert len(result.evaluations) == 2
    assert result.report["reason"].tolist() == ["status 'draft': a draft, not submitted"]
    assert set(result.evaluations["round"]) == {"R1", "R2"}
    only = read_export(wide.encode(), round="R2")
    assert only.evaluations["object"].tolist() == ["2"]
    narrow = ("pid,review,email,round,submitted_at,vtag,field,format,data\n"
              "1,1A,ada@example.org,,1700000000,1,Overall merit,0,3\n"
              "1,1A,ada@example.org,,1700000000,1,Comments,0,Good\n"
              "1,1A,ada@example.org,,1700000000,1,Reviewer expertise,0,2\n"
              "2,2B,bo@example.org,,1700000000,1,Overall merit,0,1\n"
              "2,2B,bo@example.org,,1700000000,1,Reviewer expertise,0,3\n")
    result = read_export(narrow.encode())
    ev = result.evaluations.sort_values("object")
    assert ev["score"].tolist() == [3.0, 1.0] and ev["assessor"].tolist() == ["ada@example.org", "bo@example.org"]
    assert result.origin.sort_values("row")["cell"].tolist() == ["I2", "I5"]  # the data cells of the score lines


def test_hotcrp_off_declared_scale_names_cell():
    text = "paper,title,reviewername,email,Overall merit\n1,A,Ann,a@x,3\n2,B,Ann,a@x,7\n2,B,Bo,b@x,9\n"
    with pytest.raises(InputProblems) as info:
        read_export(text.encode(), scale="1-5")
    messages = [p.message for p in info.value.problems]
    assert len(messages) == 2 and "row 3, cell E3: score 7 is off the declared scale (1 to 5)" in messages[0]


def test_hotcrp_duplicate_pair_without_order_is_an_error_naming_rows():
    text = "paper,title,reviewername,email,Overall merit\n1,A,Ann,a@x,3\n1,A,Ann,a@x,4\n"
    with pytest.raises(InputError, match=r"reviewed object 1 more than once .*rows 2, 3"):
        read_export(text.encode())


# ---------------------------------------------------------------------------------------------------------
# CMT (XML Spreadsheet 2003)
# ---------------------------------------------------------------------------------------------------------
def _cmt_cell(value) -> str:
    kind = "Number" if isinstance(value, (int, float)) else "String"
    return f'<Cell><Data ss:Type="{kind}"><![CDATA[{value}]]></Data></Cell>'


def cmt_xml(tracks: dict[str, list[list]], header_questions=None) -> bytes:
    questions = header_questions or [
        "Q1 (Summary of the paper\n)", "Q2 (Overall rating for this submission\n)",
        "Q2 (Overall rating for this submission\n - Value)", "Q3 (Confidence in your assessment)",
        "Q3 (Confidence in your assessment - Value)"]
    head = ["Paper ID", "Paper Title", "Reviewer Name", "Reviewer Email", "Reviewer Number", "Created",
            "Last Modified"] + questions
    parts = ['<?xml version="1.0" encoding="utf-8"?>\n<Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet" '
             'xmlns:x="urn:schemas-microsoft-com:office:excel" xmlns:ss="urn:schemas-microsoft-com:office:spreadsheet">']
    for track, rows in tracks.items():
        parts.append(f'<Worksheet ss:Name="{track}"><Table><Row><Cell ss:Index="1"><Data ss:Type="String">{track}'
                     '</Data></Cell></Row><Row ss:Index="3">')
        parts += [f'<Cell ss:StyleID="s1"><Data ss:Type="String">{h}</Data></Cell>' for h in head]
        parts.append("</Row>")
        for row in rows:
            parts.append("<Row>" + "".join(_cmt_cell(v) for v in row) + "</Row>")
        parts.append("</Table></Worksheet>")
    parts.append("</Workbook>")
    return "\n".join(parts).encode("utf-8")


LABELS = {1: "Reject", 2: "Weak reject", 3: "Borderline", 4: "Weak accept", 5: "Accept: Good paper"}


def cmt_row(paper, name, email, score, conf, modified="3/1/2024 10:00:00 AM -08:00"):
    return [paper, f"Title {paper}", name, email, 1, "3/1/2024 9:00:00 AM -08:00", modified, "text",
            LABELS[score], score, f"Level {conf}", conf]


def test_cmt_xml_values_through_twins_tracks_and_time():
    data = cmt_xml({"Main": [cmt_row(1, "Ida Vale", "ida@example.org", 5, 4),
                             cmt_row(1, "Jo Marsh", "jo@example.org", 2, 2),
                             cmt_row(2, "Ida Vale", "ida@example.org", 3, 3)],
                    "Short": [cmt_row(7, "Jo Marsh", "jo@example.org", 4, 5)]})
    result = read_export(data)
    assert result.source == "cmt"
    ev = result.evaluations.sort_values(["object", "assessor"])
    assert ev["score"].tolist() == [5.0, 2.0, 3.0, 4.0]
    assert set(ev["group"]) == {"Main", "Short"}
    assert result.origin.iloc[0].tolist() == ["Main", 4, "J4"]  # row 3 is the header, the value twin is column J


def test_cmt_different_scales_on_tracks_refused():
    other = cmt_row(7, "Jo Marsh", "jo@example.org", 4, 5)
    other[9] = 8  # "Weak accept" means 8 on this track's scale
    data = cmt_xml({"Main": [cmt_row(1, "Ida Vale", "ida@example.org", 4, 4)], "Short": [other]})
    with pytest.raises(InputError, match=r"different scales on different tracks.*Main gives 4, Short gives 8"):
        read_export(data)


def test_cmt_revision_sheet_replaces_original():
    data = cmt_xml({"Main": [cmt_row(1, "Ida Vale", "ida@example.org", 2, 4)],
                    "Main Revision": [cmt_row(1, "Ida Vale", "ida@example.org", 5, 4)]})
    result = read_export(data)
    assert result.evaluations["score"].tolist() == [5.0]
    assert result.report["reason"].str.startswith("superseded").all() and result.report["sheet"].tolist() == ["Main"]
    original = read_export(data, round="original")
    assert original.evaluations["score"].tolist() == [2.0]


def test_cmt_resaved_as_xlsx(tmp_path):
    import openpyxl

    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Main"
    ws.append(["Main"])
    ws.append([])
    ws.append(["Paper ID", "Paper Title", "Reviewer Name", "Reviewer Email", "Reviewer Number", "Created",
               "Last Modified", "Q1 (Overall score\n)", "Q1 (Overall score\n - Value)"])
    ws.append([3, "T", "Ida Vale", "ida@example.org", 1, "x", "y", "Weak accept", 4])
    ws.append([3, "T", "Jo Marsh", "jo@example.org", 2, "x", "y", "Reject", 1])
    path = tmp_path / "Reviews.xlsx"
    book.save(path)
    result = read_export(path)
    assert result.source == "cmt" and result.evaluations["score"].tolist() == [4.0, 1.0]
    assert "confidence" in result.evaluations.columns  # no confidence question: equal weights


def test_xml_with_doctype_refused():
    hostile = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>'
               b'<Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet"><Worksheet><Table><Row><Cell><Data>'
               b'&lol2;</Data></Cell></Row></Table></Worksheet></Workbook>')
    with pytest.raises(InputError, match="declares a document type"):
        read_export(hostile)


# ---------------------------------------------------------------------------------------------------------
# EasyChair
# ---------------------------------------------------------------------------------------------------------
EC_HEADER = ("#,submission #,member #,member name,number,version,text,scores,reviewer first name,reviewer last name,"
             "reviewer email,reviewer person #,date,time,attachment?\n")


def ec_row(n, sub, member, name, score, conf, email, version=1, date="2024-03-01", time="10:00"):
    scores = f"Overall evaluation: {score}\nReviewer's confidence: {conf}"
    first, last = name.split()
    return (f'{n},{sub},{member},{name},1,{version},"Some text","{scores}",{first},{last},{email},{member + 100},'
            f"{date},{time},no\n")


def test_easychair_scores_cell_negative_scale():
    text = EC_HEADER + ec_row(1, 10, 1, "Lu Park", -2, 4, "lu@example.org") + \
        ec_row(2, 10, 2, "Mo Reed", 3, 2, "mo@example.org") + ec_row(3, 11, 1, "Lu Park", 0, 5, "lu@example.org")
    result = read_export(text.encode())
    assert result.source == "easychair"
    assert result.evaluations["score"].tolist() == [-2.0, 3.0, 0.0]
    assert result.mapping.score == ["Overall evaluation"] and result.mapping.confidence == "Reviewer's confidence"
    assert result.origin["cell"].tolist() == ["H2", "H3", "H4"]


def test_easychair_versions_order_and_zip_deleted():
    text = EC_HEADER + ec_row(1, 10, 1, "Lu Park", -2, 4, "lu@example.org", version=1) + \
        ec_row(2, 10, 1, "Lu Park", 1, 4, "lu@example.org", version=2) + ec_row(3, 12, 2, "Mo Reed", 2, 3, "mo@example.org")
    result = read_export(text.encode())
    assert result.evaluations.set_index("object").loc["10", "score"] == 1.0
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("review.csv", text)
        zf.writestr("submission.csv", "#,title,authors,submitted,last updated,form fields,keywords,decision,"
                                      "notified,reviews sent,abstract,deleted?\n10,T,A,x,x,,,no decision,no,no,,no\n"
                                      "12,U,B,x,x,,,no decision,no,no,,yes\n")
    result = read_export(buf.getvalue())
    assert result.evaluations["object"].tolist() == ["10"]
    assert "deleted" in result.report.loc[result.report["object"] == "12", "reason"].iloc[0]


def test_easychair_review_score_alone_explained():
    with pytest.raises(InputError, match="review_score.csv"):
        read_export(b"review #,field #,value\n1,1,3\n")


# ---------------------------------------------------------------------------------------------------------
# OpenReview
# ---------------------------------------------------------------------------------------------------------
def or_review(forum, paper, anon, rating, confidence, ddate=None, api2=True):
    sig = f"Venue.cc/2025/Conference/Submission{paper}/Reviewer_{anon}"
    if api2:
        note = {"id": f"r{paper}{anon}", "forum": forum, "replyto": forum,
                "invitations": [f"Venue.cc/2025/Conference/Submission{paper}/-/Official_Review"],
                "signatures": [sig], "content": {"rating": {"value": rating}, "confidence": {"value": confidence},
                                                 "review": {"value": "text"}}, "tmdate": 1700000000000}
    else:
        note = {"id": f"r{paper}{anon}", "forum": forum, "invitation": f"Venue/Paper{paper}/-/Official_Review",
                "signatures": [f"Venue/Paper{paper}/AnonReviewer{anon}"],
                "content": {"rating": rating, "confidence": confidence}}
    if ddate:
        note["ddate"] = ddate
    return note


def test_openreview_values_as_written_and_anonymity():
    notes = [or_review("f1", 1, "aB1", "6: marginally above the acceptance threshold", "3 good"),
             or_review("f1", 1, "cD2", "3: reject", "4"),
             or_review("f2", 2, "eF3", 8, 5),
             or_review("f2", 2, "gH4", 5, 2, ddate=1700000000001)]
    result = read_export(json.dumps(notes).encode())
    assert result.source == "openreview"
    assert result.evaluations["score"].tolist() == [6.0, 3.0, 8.0]
    assert result.evaluations["assessor"].tolist() == ["Submission1/Reviewer_aB1", "Submission1/Reviewer_cD2",
                                                       "Submission2/Reviewer_eF3"]
    assert not result.linked and any("cannot be linked" in n for n in result.notes)
    assert result.report["reason"].tolist() == ["status 'deleted': deleted"]
    identity = {"Venue.cc/2025/Conference/Submission1/Reviewer_aB1": "~Rae_Lund1",
                "Submission1/Reviewer_cD2": "~Sol_Ives1", "Submission2/Reviewer_eF3": "~Rae_Lund1",
                "Submission2/Reviewer_gH4": "~Sol_Ives1"}
    linked = read_export(notes, identity_map=identity)
    assert linked.linked and linked.evaluations["assessor"].tolist() == ["~Rae_Lund1", "~Sol_Ives1", "~Rae_Lund1"]


def test_openreview_submissions_with_replies_and_withdrawn():
    subs = [{"id": "f1", "forum": "f1", "invitations": ["V/-/Submission"], "content": {"venueid": {"value": "V"}},
             "details": {"replies": [or_review("f1", 1, "aa", 7, 3)]}},
            {"id": "f2", "forum": "f2", "invitations": ["V/-/Submission"],
             "content": {"venueid": {"value": "V/Withdrawn_Submission"}},
             "details": {"replies": [or_review("f2", 2, "bb", 4, 3)]}},
            or_review("f3", 3, "cc", 2, 1, api2=False)]
    result = read_export(json.dumps({"notes": subs}).encode())
    assert result.evaluations["object"].tolist() == ["f1", "f3"]
    assert "withdrawn" in result.report["reason"].iloc[0]


def test_openreview_hostile_nesting_refused():
    with pytest.raises(InputError, match="nests deeper"):
        read_export(b"[" * 5000 + b"]" * 5000)


# ---------------------------------------------------------------------------------------------------------
# Funders' grids
# ---------------------------------------------------------------------------------------------------------
def test_grid_letter_grades_declared_scale_coi_and_blanks():
    text = ("Proposal,Dr Lee,Dr Moss,Dr Nair\nP-01,A,AB,COI\nP-02,BC,,B\nP-03,D,N/A,A\n")
    result = read_export(text.encode(), scale="A=6, AB=5, B=4, BC=3, C=2, D=1")
    assert result.source == "grid"
    ev = result.evaluations.set_index(["object", "assessor"])["score"]
    assert ev[("P-01", "Dr Lee")] == 6 and ev[("P-02", "Dr Lee")] == 3 and ev[("P-03", "Dr Nair")] == 6
    assert sorted(result.report["reason"]) == ["conflict of interest (COI)", "not assigned (N/A)"]
    assert result.report.set_index("reason").loc["conflict of interest (COI)", "cell"] == "D2"
    assert any("1 blank cell" in n for n in result.notes)


def test_semicolon_grid_reads_decimal_commas_as_its_own_convention(tmp_path):
    """A grid saved by Excel where the comma is the decimal mark (';' between fields, 3,5 for 3.5): every assessor's
    column is read -- before, columns of decimal commas were taken for descriptions and two of three assessors'
    scores were dropped -- and the report says so first.  A column of ids like "3,1" among "P7" stays as written,
    and in a comma file a quoted "3,5" is still a problem, not a number."""
    from xlcalib.imports.sheets import read_csv_bytes

    text = "Proposal;Dr A;Dr B;Dr C\nP1;3,5;4;\nP2;2;2,5;3\nP3;;4,5;COI\nP4;1,5;;2\n"
    (tmp_path / "grid.csv").write_text(text)
    result = read_export(tmp_path / "grid.csv")
    ev = result.evaluations.set_index(["object", "assessor"])["score"]
    assert len(ev) == 8 and ev[("P1", "Dr A")] == 3.5 and ev[("P2", "Dr B")] == 2.5 and ev[("P3", "Dr B")] == 4.5
    assert result.notes[0] == ("columns Dr A, Dr B of grid.csv write decimals with a comma ('3,5'), read as 3.5: the "
                               "file separates its fields with ';', as Excel writes CSV where the comma is the decimal "
                               "mark")
    assert result.report["reason"].tolist() == ["conflict of interest (COI)"]
    plain = read_export(text.replace(",", ".").replace(";", ",").encode())
    pd.testing.assert_frame_equal(result.evaluations, plain.evaluations)
    assert not any("decimal" in n for n in plain.notes)
    codes = read_csv_bytes("Proposal;Code;Dr A\nP1;3,1;3,5\nP2;P7;2\nP3;4,2;1,5\n".encode(), "codes.csv")
    assert codes.columns[1].tolist() == ["3,1", "P7", "4,2"] and codes.columns[2].tolist() == ["3.5", "2", "1.5"]
    assert codes.notes == ["column Dr A of codes.csv writes decimals with a comma ('3,5'), read as 3.5: the file "
                           "separates its fields with ';', as Excel writes CSV where the comma is the decimal mark"]
    with pytest.raises(InputProblems, match="decimal comma"):
        read_export('Proposal,Dr A,Dr B\nP1,"3,5",4\nP2,2,3\n'.encode(), scale="1-5")


@pytest.mark.parametrize("above", ["", "Scores of round 2\n\n", "sep=,\n", "Scores of round 2,,\n,,\n"])
def test_grid_rows_are_numbered_as_a_spreadsheet_shows_the_file(above):
    """Blank lines count as rows (they shifted every later cell's row by one: "row 3, cell C3" for the cell in row
    4), and so do a title and Excel's 'sep=' line above the header, which are not part of the grid."""
    text = above + "Proposal,Dr A,Dr B\nP1,3,4\n\nP2,2,9\nP3,4,5\n"
    row = 4 + above.count("\n")
    with pytest.raises(InputProblems, match=rf"row {row}, cell C{row}: score 9 is off the declared scale"):
        read_export(text.encode(), scale="1-5")
    result = read_export(text.replace(",9", ",5").encode(), scale="1-5")
    assert len(result.evaluations) == 6


@pytest.mark.parametrize("as_file", [False, True], ids=["cells in hand", "workbook file"])
def test_a_grid_column_of_decimal_comma_texts_is_refused_by_cell_not_dropped(tmp_path, as_file):
    """In a workbook, '3,5' typed as text is ambiguous (3.5, or 35 with a thousands comma?): refused by cell, as
    everywhere -- a whole column of such texts was taken for a description of the objects and that assessor's
    scores were dropped with only a note to say so.  The same grid as cells in hand (a spreadsheet range) and as
    a workbook file (read by python-calamine, where it is installed)."""
    from xlcalib.imports import read_cells

    rows = [["Proposal", "Dr A", "Dr B", "Dr C"], ["P1", "3,5", 4, None], ["P2", "2,5", 2.5, 3],
            ["P3", None, 4.5, 5], ["P4", "1,5", None, 2]]
    if as_file:
        pytest.importorskip("python_calamine")
        book = openpyxl.Workbook()
        book.active.title = "Scores"
        for row in rows:
            book.active.append(row)
        book.save(tmp_path / "grid.xlsx")
    with pytest.raises(InputProblems) as caught:
        read_export(tmp_path / "grid.xlsx") if as_file else read_cells(rows)
    cells = [p.cell for p in caught.value.errors]
    assert cells == ["B2", "B3", "B5"] and all("decimal comma" in p.message for p in caught.value.errors)


def test_a_grid_of_percentages_reads_them_as_shares_not_as_form_options():
    """'85%' is 0.85 in a grid as in an evaluations sheet; read as "85: %" the form's options made a scale whose ends
    were censored -- and the column of them, not a number by the old test, could be taken for a description."""
    result = read_export(b"Student,Marker 1,Marker 2\nS1,85%,80%\nS2,60%,\nS3,,72.5%\nS4,90%,88%\n")
    ev = result.evaluations.set_index(["object", "assessor"])["score"]
    assert ev[("S1", "Marker 1")] == 0.85 and ev[("S3", "Marker 2")] == 0.725 and len(ev) == 6
    assert result.mapping.scale.source == "inferred" and not any("form" in n for n in result.notes)


@pytest.mark.parametrize("above", ["", "Scores 2026\n\n"])
def test_ragged_export_rows_are_read_or_named_by_their_own_row(above):
    """Rows ending in empty fields ('P2,2,5,') are read as the rows they are; a filled field beyond the header is
    an error naming its row as a spreadsheet shows it (the parser's message counted lines from below the title);
    a stray quote is still named as such, never a traceback."""
    rows = "Proposal,Dr A,Dr B\nP1,3,4\nP2,2,5,\nP3,4,5,,\n"
    result = read_export((above + rows).encode())
    assert len(result.evaluations) == 6 and result.evaluations["score"].sum() == 23
    row = 3 + above.count("\n")
    with pytest.raises(InputError, match=rf"row\(s\) {row}: more fields than the header row has -- an unquoted"):
        read_export((above + rows.replace("P2,2,5,", "P2,2,5,5")).encode())
    with pytest.raises(InputError, match="not a well-formed CSV table .*stray quote"):
        read_export((above + 'Proposal,Dr A,Dr B\nP1,"3,4\nP2,2,5\n').encode())


def test_grid_inferred_ladder_and_off_scale():
    text = "Proposal,Ann,Bob\nP1,A,AB\nP2,B,BC\nP3,C,D\n"
    result = read_export(text.encode())
    assert result.mapping.scale.symbol_values == {"A": 6, "AB": 5, "B": 4, "BC": 3, "C": 2, "D": 1}
    assert any("grades turned so that higher = better" in n for n in result.notes)
    with pytest.raises(InputProblems, match=r"cell C4: score 'E' is not on the declared scale"):
        read_export("Proposal,Ann,Bob\nP1,A,B\nP2,B,C\nP3,C,E\n".encode(), scale="A, B, C, D")


def test_grid_weight_columns_and_criterion_blocks(tmp_path):
    text = "Proposal,Ann,Ann weight,Bob,Bob weight\nP1,4,2,3,1\nP2,2,1,5,3\n"
    result = read_export(text.encode())
    assert result.uncertainty == "confidence"
    assert result.evaluations["confidence"].tolist() == [2.0, 1.0, 1.0, 3.0]
    blocks = ("Proposal,Novelty,,Overall,\n,Ann,Bob,Ann,Bob\nP1,3,4,5,2\nP2,1,2,3,4\n")
    result = read_export(blocks.encode(), source="grid")
    assert sorted(result.evaluations["score"].tolist()) == [2.0, 3.0, 4.0, 5.0]
    novelty = read_export(blocks.encode(), source="grid", mapping={"score": ["Novelty"]})
    assert sorted(novelty.evaluations["score"].tolist()) == [1.0, 2.0, 3.0, 4.0]


def test_unknown_layout_names_nearest_preset():
    with pytest.raises(InputError, match=r"unknown layout.*Nearest preset: cmt"):
        read_export(b"Paper ID,Title,Notes\n1,x,some words here\n2,y,more words\n")


def test_an_evaluations_table_is_not_an_unknown_layout(tmp_path, capsys):
    """Importing a table that is already evaluations (assessor, object, score) says so and what to do with it, not
    "unknown layout" with a review system's missing headers -- nor a grid read from it: with its two reviewers all
    different, their names were taken for object ids and the Score column for one assessor."""
    with pytest.raises(InputError) as caught:
        read_export(b"Reviewer,Proposal,Score,Level\nA,P1,3,High\nB,P1,4,Low\n")
    message = caught.value.message
    assert "unknown layout" not in message and "is already an evaluations table (columns Reviewer, Proposal, Score)" \
        in message and "calibrate it as it is" in message
    path = tmp_path / "panel.csv"
    path.write_text("Assessor;Object;Score;SD\nA;P1;3,5;1\nB;P1;4;1\n")
    assert main(["import", str(path), "-o", str(tmp_path / "out.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("xlcalib: error: panel.csv is already an evaluations table") and err.count("\n") == 1, err


def test_mapping_round_trips_and_is_reused():
    result = read_export(HOTCRP.encode())
    saved = result.mapping.to_json()
    again = read_export(HOTCRP.encode(), mapping=ColumnMapping.from_json(saved))
    pd.testing.assert_frame_equal(again.evaluations, result.evaluations)
    rows = result.mapping.to_rows()
    assert ColumnMapping.from_rows(rows).to_dict() == result.mapping.to_dict()
    renamed = HOTCRP.replace("Post-Rebuttal Overall Merit", "Final verdict")
    explicit = read_export(renamed.encode(), mapping={"score": ["Pre-Response Overall Merit", "Final verdict"]})
    pd.testing.assert_frame_equal(explicit.evaluations, result.evaluations)


def test_long_table_written_as_csv_and_xlsx(tmp_path):
    from xlcalib.imports import long_rows, write_long_table
    from xlcalib.workbook.reader import FastBook

    result = read_export(HOTCRP.encode())
    rows = long_rows(result)
    assert rows[0] == ["Assessor", "Object", "Score", "Level"] and len(rows) == 6
    paths = write_long_table(result, tmp_path / "ev.csv")
    back = pd.read_csv(paths[0], dtype={"Object": str})
    assert back["Score"].tolist() == result.evaluations["score"].tolist()
    assert pd.read_csv(paths[1])["reason"].tolist() == result.report["reason"].tolist()
    write_long_table(result, tmp_path / "ev.xlsx")
    book = FastBook(tmp_path / "ev.xlsx")
    assert book.sheet_names() == ["Evaluations", "Import report", "Import mapping"]
    assert [r[:3] for r in book.read_block("Evaluations").rows[:2]] == [["Assessor", "Object", "Score"],
                                                                          ["ada@example.org", "1", 4.0]]
    book.close()


def test_nothing_lost_counts_add_up():
    result = read_export(HOTCRP.encode())
    review_rows = 6
    used_rows = set(result.origin["row"])
    report_rows = set(result.report.loc[~result.report["reason"].str.startswith("superseded"), "row"])
    assert used_rows | report_rows == set(range(2, 2 + review_rows)) and not used_rows & report_rows
    assert np.isfinite(result.evaluations["score"]).all()


def test_core_never_loads_the_importers_and_importers_load_no_excel_library():
    import subprocess
    import sys

    code = ("import sys, xlcalib, xlcalib.calibration, xlcalib.reliability, xlcalib.ordinal, xlcalib.inputs\n"
            "assert not any(m.startswith('xlcalib.imports') for m in sys.modules), 'core loaded the importers'\n"
            "import xlcalib.imports\n"
            "assert not any(m.split('.')[0] in ('openpyxl', 'xlwings', 'python_calamine') for m in sys.modules)\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_declared_status_list_and_hostile_sizes(monkeypatch):
    import xlcalib.workbook.reader as reader

    wide = "pid,review,email,status,Overall merit\n1,1A,a@x,approved,3\n2,2A,a@x,complete,4\n"
    assert len(read_export(wide.encode()).evaluations) == 1
    kept = read_export(wide.encode(), mapping={"complete": ["complete", "approved"]})
    assert len(kept.evaluations) == 2
    monkeypatch.setattr(reader, "MAX_INPUT_BYTES", 40)
    with pytest.raises(InputError, match="the limit is"):
        read_export(wide.encode())


def test_hotcrp_scores_download_abbreviated_headers():
    text = ("paper,title,decision,review,reviewername,email,OveMer,RevExp\n"
            "4,Jam,Accepted,4A,Ann,a@x,B,2\n4,Jam,Accepted,4B,Bo,b@x,A,3\n5,Pie,Rejected,5A,Ann,a@x,D,1\n")
    result = read_export(text.encode())
    assert result.mapping.score == ["OveMer"] and result.mapping.confidence == "RevExp"
    assert result.evaluations["score"].tolist() == [3.0, 4.0, 1.0]  # A..D turned: A=4


def test_cells_in_hand_grid_range_to_long_rows():
    from xlcalib.imports import long_rows, read_cells

    rng = [["Proposal", "Dr Lee", "Dr Moss"], ["P-01", "A", "B"], ["P-02", None, "COI"], ["P-03", "C", "A"]]
    result = read_cells(rng, scale="A, B, C")
    assert long_rows(result)[:3] == [["Assessor", "Object", "Score", "Confidence"], ["Dr Lee", "P-01", 3.0, 1.0],
                                     ["Dr Lee", "P-03", 1.0, 1.0]]
    assert result.report[["cell", "object", "reason"]].values.tolist() == [
        ["C3", "P-02", "conflict of interest (COI)"],
        ["", "P-02", "no score imported for this object (conflict of interest (COI))"]]  # every object named, listed


# ---------------------------------------------------------------------------------------------------------
# Grids as people lay them out: label columns, review slots, unknown layouts, objects without a score
# ---------------------------------------------------------------------------------------------------------
def _slot_grid(headers=("R1", "R2", "R3", "R4"), rows=6, seed=3) -> str:
    """Per-paper reviews packed from the left, 2-4 a row (ragged): how public conference data is laid out."""
    rng = np.random.default_rng(seed)
    lines = [",".join(("Paper", *headers))]
    for k in range(rows):
        n = 2 + k % (len(headers) - 1)
        cells = [str(int(x)) for x in rng.integers(1, 11, n)] + [""] * (len(headers) - n)
        lines.append(",".join((f"P{k + 1}", *cells)))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("headers", [("R1", "R2", "R3", "R4"), ("0", "1", "2", "3"),
                                     ("Review 1", "Review 2", "Review 3", "Review 4"),
                                     ("Score 1", "Score 2", "Score 3", "Score 4")])
def test_review_slot_grids_are_read_as_anonymous_per_paper_reads(headers):
    result = read_export(_slot_grid(headers).encode())
    ev = result.evaluations
    assert result.source == "grid" and not result.linked  # no reviewer links two papers
    assert ev.groupby("assessor").size().max() == 1  # every slot cell is its own reviewer ...
    assert ev["assessor"].iloc[0] == f"P1/{headers[0]}"  # ... named <paper>/<column>
    assert result.mapping.columns_are == "review slots"
    assert any("read as review slots" in n and "slot-like headers" in n for n in result.notes)
    assert xlcalib.calibrate(ev).stats["model"] == "one-way"  # the whole decision, stringency inside the noise


def test_slot_reading_forced_either_way_and_saved():
    text = _slot_grid()
    people = read_export(text.encode(), columns_are="people")
    assert sorted(people.evaluations["assessor"].unique()) == ["R1", "R2", "R3", "R4"] and people.linked
    assert any("as asked" in n for n in people.notes) and people.mapping.columns_are == "people"
    # a funder's grid of people, forced to slots (and the saved mapping reads it so again, no question asked)
    grid = "Proposal,Dr Lee,Dr Moss,Dr Nair\nP1,4,5,\nP2,3,,2\nP3,,4,5\n"
    assert read_export(grid.encode()).mapping.columns_are == "people"  # gaps: people
    slots = read_export(grid.encode(), columns_are="slots")
    assert slots.evaluations["assessor"].tolist()[:2] == ["P1/Dr Lee", "P2/Dr Lee"]
    again = read_export(grid.encode(), mapping=slots.mapping.to_json())
    assert again.evaluations["assessor"].tolist() == slots.evaluations["assessor"].tolist()
    with pytest.raises(InputError, match="'people' .* or 'review slots'"):
        read_export(grid.encode(), columns_are="reviewers please")


def test_busy_columns_packed_from_the_left_are_slots_even_with_names():
    """Columns named like people, but the first one holds more reads than a person makes, every row packed from
    the left and ragged: review slots."""
    rows = ["ID,Alpha,Beta,Gamma"] + [f"S{k},{k % 9 + 1},{(k + 3) % 9 + 1}," + (str(k % 5 + 1) if k % 3 else "")
                                      for k in range(130)]
    result = read_export(("\n".join(rows) + "\n").encode())
    assert result.mapping.columns_are == "review slots"
    assert any("more than a person makes" in n for n in result.notes)


def test_a_fully_filled_grid_with_numbered_raters_is_people():
    """WordSim-353 (set 1, shipped with xlcalib): 13 raters numbered 1..13 scored every pair -- rows are full, not
    ragged, so the columns are people; the word columns describe the pairs and the mean is left out."""
    ws = pd.read_csv(Path(xlcalib.__file__).parent / "data" / "wordsim353_set1.csv")
    ws.insert(0, "Pair", ws["Word 1"] + " / " + ws["Word 2"])
    with pytest.raises(InputError, match=r"names 1 object\(s\) in more than one row: money / cash \(rows 33, 99\)"):
        read_export(ws.to_csv(index=False).encode())  # the set lists money / cash twice: one line says so
    ws = ws.drop_duplicates("Pair")
    result = read_export(ws.to_csv(index=False).encode())
    assert result.mapping.columns_are == "people" and result.linked
    assert sorted(result.evaluations["assessor"].unique(), key=int) == [str(k) for k in range(1, 14)]
    assert len(result.evaluations) == 13 * len(ws)
    assert result.mapping.labels == ["Word 1", "Word 2"]
    assert any("Human (mean)" in n and "left out" in n for n in result.notes)


@pytest.mark.parametrize("layout", ["first", "after the id", "last", "between assessors"])
def test_label_columns_anywhere_are_kept_as_attributes(layout):
    header = ["ID", "Dr Lee", "Dr Moss", "Dr Nair"]
    rows = [["A-1", "4", "5", ""], ["A-2", "3", "", "2"], ["A-3", "", "4", "5"]]
    titles = ["Adaptive Bounds for Sparse Models", "A Study of Tea", "Cake, Revisited"]
    panels = ["Physics", "Biology", "Physics"]
    where = {"first": 0, "after the id": 1, "last": 4, "between assessors": 2}[layout]
    header[where:where] = ["Title", "Panel"]
    for row, title, panel in zip(rows, titles, panels):
        row[where:where] = [f'"{title}"', panel]
    text = "\n".join(",".join(r) for r in [header, *rows]) + "\n"
    result = read_export(text.encode())
    ev = result.evaluations
    assert sorted(ev["assessor"].unique()) == ["Dr Lee", "Dr Moss", "Dr Nair"]  # titles never read as scores
    assert result.mapping.object == "ID" and result.mapping.title == "Title" and result.mapping.group == "Panel"
    assert ev.set_index("object")["title"].to_dict()["A-1"] == titles[0]
    assert ev.set_index("object")["group"].to_dict()["A-2"] == "Biology"
    assert any("describe the objects" in n and "'Title' shown on the Ranking" in n for n in result.notes)


def test_a_title_is_shown_on_the_ranking(tmp_path):
    from xlcalib.cli import main

    rng = np.random.default_rng(1)
    lines = ["Proposal,Title,Dr Lee,Dr Moss,Dr Nair,Dr Ott"]
    for k in range(12):
        scores = [str(int(x)) for x in rng.integers(2, 9, 4)]
        scores[k % 4] = ""
        lines.append(f"P{k:02d},Title number {k},{','.join(scores)}")
    path = tmp_path / "grid.csv"
    path.write_text("\n".join(lines) + "\n")
    assert main(["calibrate", str(path), "-o", str(tmp_path / "out.xlsx"), "--scale", "1-9"]) == 0
    rows = list(openpyxl.load_workbook(tmp_path / "out.xlsx", read_only=True)["Ranking"].iter_rows(values_only=True))
    head = next(i for i, r in enumerate(rows) if r and r[0] == "rank")
    assert rows[head][:3] == ("rank", "object", "title")
    assert {r[1]: r[2] for r in rows[head + 1:head + 13]}["P03"] == "Title number 3"


def test_unknown_layout_refused_in_one_line_saying_what_was_looked_for():
    weather = ("station,date,temperature,humidity\nOslo,2024-03-01,2.5,80\nOslo,2024-03-02,3.1,78\n"
               "Bergen,2024-03-01,5.0,91\nBergen,2024-03-02,4.2,88\n")
    with pytest.raises(InputError) as caught:
        read_export(weather.encode())
    message = caught.value.message
    assert "\n" not in message and "unknown layout" in message
    assert "one row per object" in message and "--mapping" in message and "station, date" in message


def test_every_object_named_without_a_score_is_listed():
    grid = "Proposal,Dr Lee,Dr Moss\nP1,4,5\nP2,,\nP3,COI,N/A\nP4,3,2\n"
    result = read_export(grid.encode())
    report = result.report.set_index("object")["reason"]
    assert "no score in any of its columns" in report["P2"]
    assert any("no score imported for this object (conflict of interest (COI)" in r for r in report[["P3"]])
    assert set(result.evaluations["object"]) == {"P1", "P4"}
    assert "2 object(s) named without any score" not in result.left_out()  # P2's row is a row of the report
    subs = [{"id": "f1", "forum": "f1", "invitations": ["V/-/Submission"],
             "content": {"title": {"value": "Unreviewed"}, "venueid": {"value": "V"}}},
            {"id": "f2", "forum": "f2", "invitations": ["V/-/Submission"], "content": {"title": {"value": "Read"}},
             "details": {"replies": [or_review("f2", 2, "a", "6: Weak Accept", 3), or_review("f2", 2, "b", "8: Accept", 3)]}}]
    notes = read_export(json.dumps(subs).encode())
    assert notes.report.set_index("object").loc["f1", "reason"] == "no review in the export: Unreviewed"
    assert notes.evaluations["title"].tolist() == ["Read", "Read"]


def test_uneven_form_scale_declared_from_the_labels():
    notes = [or_review(f"f{p}", p, k, rating, 3) for p, ratings in
             enumerate((("1: Reject", "3: Weak Reject"), ("6: Weak Accept", "8: Accept"), ("8: Accept", "3: Weak Reject")))
             for k, rating in enumerate(ratings)]
    result = read_export(json.dumps(notes).encode())
    scale = result.mapping.scale
    assert scale.source == "form" and scale.points == (1.0, 3.0, 6.0, 8.0) and scale.uneven
    assert scale.for_calibration() == (1.0, 3.0, 6.0, 8.0)
    assert "1: Reject, 3: Weak Reject, 6: Weak Accept, 8: Accept" in scale.describe()
    assert any(n.startswith("score scale from the form") for n in result.notes)
    # CMT: a choice's label beside its value states the option too
    cmt = read_export(cmt_xml({"Main": [cmt_row(1, "Ann", "a@x.org", 1, 3), cmt_row(1, "Bo", "b@x.org", 4, 3),
                                        cmt_row(2, "Ann", "a@x.org", 3, 2)]}))
    assert cmt.mapping.scale.source == "form" and cmt.mapping.scale.points == (1.0, 3.0, 4.0)
    assert cmt.mapping.scale.labels[0] == (1.0, LABELS[1])
    # a declared points scale refuses a score between them
    with pytest.raises(InputProblems, match="off the declared scale"):
        read_export(_slot_grid().encode(), scale="1, 3, 6, 8")


def test_partial_identity_map_keeps_the_rest_as_one_read_reviewers():
    notes = [or_review("f1", 1, "a", 6, 3), or_review("f1", 1, "b", 3, 3), or_review("f2", 2, "c", 8, 3),
             or_review("f2", 2, "d", 5, 3), or_review("f3", 3, "e", 4, 3), or_review("f3", 3, "f", 6, 3)]
    identity = {"Venue.cc/2025/Conference/Submission1/Reviewer_a": "~Ann1", "Submission2/Reviewer_c": "~Ann1",
                "Submission3/Reviewer_e": "~Bo1", "Submission1/Reviewer_b": "~Bo1"}
    result = read_export(json.dumps(notes).encode(), identity_map=identity)
    assert result.linked  # two people read two papers each
    assert sorted(result.evaluations["assessor"]) == ["Submission2/Reviewer_d", "Submission3/Reviewer_f", "~Ann1",
                                                      "~Ann1", "~Bo1", "~Bo1"]
    assert any("2 id(s) not in the map" in n and "a reader of one object" in n for n in result.notes)


def test_a_typo_in_a_score_column_is_an_error_not_a_label_column():
    """Recognising text columns must not swallow an assessor's column with one slip in it: the slip is named."""
    text = "Proposal,Dr Lee,Dr Moss\nP1,4,5\nP2,abc,3\nP3,2,4\nP4,5,\n"
    with pytest.raises(InputProblems, match=r"cell B3: score 'abc' is neither a number nor a scale symbol"):
        read_export(text.encode())
