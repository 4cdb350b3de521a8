"""CSV input: bounded before parsing, pandas' C reader, the same messages by cell, ragged rows named."""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from xlcalib.cli import main
from xlcalib.errors import InputError, InputProblems
from xlcalib.inputs import read_panel
from xlcalib.workbook.csv_backend import CsvBook

from .test_workbook_reader import _run_limited

GOOD = "Assessor,Object,Score,SD\nA,x,5,1\nA,y,7,1\nB,x,6,1\nB,y,8,1\n"


def _csv(tmp_path, text, name="p.csv"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def test_clean_csv_reads_numbers_directly(tmp_path):
    panel = read_panel(CsvBook(_csv(tmp_path, GOOD)))
    assert panel.frame.to_dict("list") == {"assessor": ["A", "A", "B", "B"], "object": ["x", "y", "x", "y"],
                                           "score": [5.0, 7.0, 6.0, 8.0], "sd": [1.0, 1.0, 1.0, 1.0]}
    assert panel.sheet_rows.tolist() == [2, 3, 4, 5] and not panel.problems


def test_unquoted_decimal_comma_and_short_rows_are_errors_naming_the_row(tmp_path, capsys):
    path = _csv(tmp_path, "Assessor,Object,Score,SD\nA,x,5,1\nA,y,5,5,1\nB,x\nB,y,8,1\n")
    with pytest.raises(InputProblems) as info:
        CsvBook(path).read_table("Evaluations")
    lines = [p.message for p in info.value.errors]
    assert lines[0].startswith("p.csv, row 3 has 5 fields but the header row has 4: an unquoted decimal comma (5,5 for "
                               "5.5)")
    assert lines[1].startswith("p.csv, row 4 has 2 fields but the header row has 4: a field is missing")
    assert main(["calibrate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("xlcalib: error:") == 2 and "Traceback" not in err


def test_quoted_fields_semicolons_blank_lines_and_cells(tmp_path):
    text = 'Assessor;Object;Score;SD\n"Lee; Ann";x;3,5;1\nA;y;;\n\nB;x;6;1\nB;"y\nz";8;0\n'
    panel = read_panel(CsvBook(_csv(tmp_path, text)))
    errors = [p.message for p in panel.errors]
    assert errors == ["sheet Evaluations, row 6, column SD (D6) is 0; an SD must be greater than 0"]
    assert panel.pending.to_dict("list") == {"assessor": ["A"], "object": ["y"], "sheet_row": [3]}
    # a ';' file writes 3.5 as 3,5 (Excel where the comma is the decimal mark): read so, and said
    assert panel.frame["score"].tolist()[0] == 3.5 and panel.frame["assessor"].tolist()[0] == "Lee; Ann"
    assert any("column Score of p.csv writes decimals with a comma ('3,5'), read as 3.5" in p.message
               for p in panel.warnings)


SEMICOLON_PANEL = ("Assessor;Object;Score;SD\nDr A;P1;3,5;0,5\nDr A;P2;4;1\nDr B;P1;-0,25;1\nDr B;P2;2,75;1,5\n"
                   "Dr C;P1;5;1\nDr C;P2;4,5;0,5\n")


@pytest.mark.parametrize("pending", [False, True], ids=["numbers parsed", "read as text"])
def test_semicolon_files_read_their_decimal_commas(tmp_path, pending):
    """Excel saves CSV with ';' between fields where the comma is the decimal mark: such a file's '3,5' is 3.5, on
    both reading paths (all numbers parse at once; a blank pending score makes every column text first), and the
    Checks say so -- the same panel as the file written with points and commas."""
    text = SEMICOLON_PANEL + ("Dr C;P3;;\n" if pending else "")
    panel = read_panel(CsvBook(_csv(tmp_path, text)))
    assert not panel.errors, [p.message for p in panel.errors]
    plain = read_panel(CsvBook(_csv(tmp_path, text.replace(",", ".").replace(";", ","), "plain.csv")))
    pd.testing.assert_frame_equal(panel.frame, plain.frame)
    assert panel.frame["score"].tolist() == [3.5, 4.0, -0.25, 2.75, 5.0, 4.5]
    said = [p.message for p in panel.warnings if "decimals with a comma" in p.message]
    assert said == ["columns Score, SD of p.csv write decimals with a comma ('3,5'), read as 3.5: the file separates "
                    "its fields with ';', as Excel writes CSV where the comma is the decimal mark"]
    assert not any("decimal" in p.message for p in plain.problems)
    assert len(panel.pending) == int(pending)


@pytest.mark.parametrize("tail", ["Dr C;P3;3.5;1\n", "Dr C;P3;;\nDr D;P3;3.5;1\n"])
def test_a_column_of_both_decimal_marks_is_refused_by_cell(tmp_path, tail):
    """One column writing 3,5 and 3.5 uses two conventions, where 1,250 could be either: its commas stay errors."""
    panel = read_panel(CsvBook(_csv(tmp_path, SEMICOLON_PANEL + tail)))
    errors = [p.message for p in panel.errors]
    assert "sheet Evaluations, row 2, column Score (C2) is the text '3,5' with a decimal comma; enter it as a number " \
           "(e.g. 3.5) so it is not misread" in errors
    assert not any("read as 3.5" in p.message and "Score" in p.message for p in panel.warnings)


def test_comma_files_and_names_keep_their_commas(tmp_path):
    """Only a ';' file's number columns are read with the comma as the decimal mark: a quoted "3,5" in a comma file
    is still refused, and a name such as "3,1" in a ';' file stays as written."""
    comma = read_panel(CsvBook(_csv(tmp_path, 'Assessor,Object,Score,SD\nA,x,"3,5",1\nB,x,4,1\n')))
    assert any("'3,5' with a decimal comma" in p.message for p in comma.errors)
    names = read_panel(CsvBook(_csv(tmp_path, "Assessor;Object;Score;SD\nA;3,1;3,5;1\nB;3,1;4;1\n", "n.csv")))
    assert names.frame["object"].tolist() == ["3,1", "3,1"] and names.frame["score"].tolist() == [3.5, 4.0]


def test_control_characters_and_huge_fields_are_refused_by_cell(tmp_path):
    panel = read_panel(CsvBook(_csv(tmp_path, "Assessor,Object,Score,SD\nA\x01,x,5,1\nB,y,6,1\n")))
    assert panel.errors[0].message.startswith("sheet Evaluations, row 2, column Assessor (A2) holds a control character")
    with pytest.raises(InputProblems, match=r"row 3, column Object \(B3\) is 200,000 characters long; the limit is 32,767"):
        CsvBook(_csv(tmp_path, "Assessor,Object,Score,SD\nA,x,5,1\nB," + "y" * 200_000 + ",6,1\n")).read_table("Evaluations")
    with pytest.raises(InputError, match="line 3 holds a NUL byte"):
        CsvBook(_csv(tmp_path, b"Assessor,Object,Score,SD\nA,x,5,1\nB,\x00,6,1\n"))


def test_hostile_csv_files_are_refused_quickly_with_bounded_memory(tmp_path):
    commas = _csv(tmp_path, "Assessor,Object,Score,SD\nA,x,5,1\n" + "," * 2_000_000 + "\n", "commas.csv")
    proc = _run_limited(["calibrate", str(commas)])
    assert proc.returncode == 2 and "commas.csv, line 3 is 2 MB long; the limit is 1 MB a line" in proc.stderr
    string = tmp_path / "string.csv"
    with open(string, "wb") as f:
        f.write(b"Assessor,Object,Score,SD\nA,x,5,1\nB,")
        f.write(b"y" * 200_000_000)
    proc = _run_limited(["calibrate", str(string)])
    assert proc.returncode == 2, proc.stderr
    assert "string.csv, line 3 is 200 MB long; the limit is 1 MB a line" in proc.stderr
    string.unlink()
    spaces = tmp_path / "spaces.csv"
    with open(spaces, "wb") as f:  # 1 GB of whitespace (sparse on disk)
        f.seek(2**30 - 1)
        f.write(b" ")
    proc = _run_limited(["calibrate", str(spaces)])
    assert proc.returncode == 2 and "spaces.csv is 1,074 MB; the limit is 210 MB for an input file" in proc.stderr


def test_csv_round_trip_equals_workbook(tmp_path):
    rng = np.random.default_rng(1)
    n = 600
    who = np.concatenate([rng.choice(12, 3, replace=False) for _ in range(n // 3)])  # 3 distinct readers an object
    frame = pd.DataFrame({"Assessor": [f"A{a}" for a in who], "Object": [f"O{i // 3}" for i in range(n)],
                          "Score": np.round(rng.normal(5, 1, n), 2), "SD": rng.choice([0.5, 1.0], n)})
    frame.to_csv(tmp_path / "p.csv", index=False)
    frame.to_excel(tmp_path / "p.xlsx", sheet_name="Evaluations", index=False)
    assert main(["calibrate", str(tmp_path / "p.csv"), "--format", "json", "-o", str(tmp_path / "c.json")]) == 0
    assert main(["calibrate", str(tmp_path / "p.xlsx"), "--format", "json", "-o", str(tmp_path / "x.json")]) == 0
    a, b = (json.loads((tmp_path / f).read_text())["Values"] for f in ("c.json", "x.json"))
    assert a == b


from hypothesis import assume, example, given, settings  # noqa: E402
from hypothesis import strategies as st


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", ",", "\r", " "]), max_size=6).map("".join), min_size=1, max_size=8),
       st.booleans())
def test_field_counts_equal_counting_each_line(tmp_path_factory, lines, final_newline):
    """Fields per line (unquoted file) equal a plain count: delimiters + 1, and 0 for a blank line; LF, CRLF and
    a bare CR (old Mac exports) each end a line."""
    text = "\n".join(lines) + ("\n" if final_newline else "")
    if not text:
        return
    path = tmp_path_factory.mktemp("fc") / "f.csv"
    path.write_bytes(text.encode())
    book = CsvBook(path)
    book.delimiter = ","  # the counting under test, whatever the header line suggests
    counts, numbers = book._field_counts()
    pieces = re.split(r"\r\n|\r|\n", text)
    if text.endswith(("\n", "\r")):  # no line after the last line end
        pieces = pieces[:-1]
    assert counts.tolist() == [0 if p == "" else p.count(",") + 1 for p in pieces]
    assert numbers.tolist() == list(range(1, len(pieces) + 1))


# ---------------------------------------------------------------------------------------------------------
# Files as people save them: a title above the header, Excel's "sep=;" line, blank lines
# ---------------------------------------------------------------------------------------------------------
from xlcalib.inputs.table import names_evaluation_columns  # noqa: E402
from xlcalib.workbook.csv_layout import csv_layout  # noqa: E402


@pytest.mark.parametrize("head, layout", [
    ("Assessor,Object,Score\nA,x,3\n", (",", 0)),
    ("sep=;\nAssessor;Object;Score\nA;x;3,5\n", (";", 1)),
    ("SEP=,\r\nAssessor,Object,Score\r\n", (",", 1)),
    ("Panel scores 2026,,,\n,,,\nAssessor,Object,Score,SD\nA,x,3,1\n", (",", 2)),  # Excel pads a title row
    ("Panel scores 2026\n\nAssessor;Object;Score\n", (";", 2)),
    ("Round 2: scores, by reviewer\nAssessor,Object,Score\n", (",", 0)),  # a title of two fields: not skipped
    ("Name,Comment\nAssessor,Object,Score\n", (",", 0)),  # a table's own first row is never skipped
    ("\n\n\n", (",", 0)),
    ("", (",", 0)),
])
def test_csv_layout_finds_the_header_below_titles(head, layout):
    assert csv_layout(head, names_evaluation_columns) == layout


def test_csv_layout_without_a_header_test_takes_the_first_row_of_fields():
    assert csv_layout("Scores 2026\n\nProposal;Dr A;Dr B\nP1;3;4\n") == (";", 2)
    assert csv_layout("Proposal,Dr A\nP1,3\n") == (",", 0)


@pytest.mark.parametrize("above", ["Panel scores 2026,,,,\n,,,,\n", "sep=,\n", "Panel scores 2026\n\n\n"])
def test_titles_and_the_sep_line_lie_above_the_evaluations(tmp_path, above, capsys):
    """A CSV saved from a sheet with a heading, or with Excel's 'sep=' line: read from its header, each row
    numbered as a spreadsheet shows the file -- the same panel as the file without them."""
    body = "Assessor,Object,Score,SD,Comment\nA,x,5,1,\nA,y,7,1,\nB,x,6,1,ok\nB,y,8,1,\n"
    panel = read_panel(CsvBook(_csv(tmp_path, above + body)))
    plain = read_panel(CsvBook(_csv(tmp_path, body, "plain.csv")))
    pd.testing.assert_frame_equal(panel.frame, plain.frame)
    shift = above.count("\n")
    assert panel.sheet_rows.tolist() == [r + shift for r in plain.sheet_rows.tolist()]
    bad = _csv(tmp_path, above + body.replace("B,x,6,1", "B,x,six,1"), "bad.csv")
    assert main(["calibrate", str(bad)]) == 2
    assert f"row {4 + shift}, column Score (C{4 + shift}) is text ('six')" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["calibrate", "import"])
def test_a_windows_encoded_csv_is_named_by_line_and_text(tmp_path, command, capsys):
    """Excel's plain "CSV (Comma delimited)" is written in the Windows code page: the message names the line and the
    text as that encoding shows it, and Excel's option that saves UTF-8 -- not a byte offset (the body's, at that)."""
    rows = "Assessor;Object;Score;SD\nAnna;A-1;3;1\nM\u00fcller;A-1;4;1\n" if command == "calibrate" else \
        "Antrag;Anna;M\u00fcller\nA-1;3;4\nA-2;2;5\n"
    path = _csv(tmp_path, rows.encode("cp1252"))
    assert main([command, str(path), "-o", str(tmp_path / "out.csv")]) == 2
    err = capsys.readouterr().err
    line = 3 if command == "calibrate" else 1
    assert err == (f"xlcalib: error: p.csv, line {line} is not UTF-8 text (near '"
                   f"{'M' if command == 'calibrate' else 'Antrag;Anna;M'}\u00fcller"
                   f"{';A-1;4;1' if command == 'calibrate' else ''}'): saved in the Windows encoding? Save it again as "
                   "CSV UTF-8 (in Excel: Save As, 'CSV UTF-8 (Comma delimited)')\n"), err


@pytest.mark.parametrize("suffix", [".txt", ".tsv"])
def test_tab_delimited_text_is_read_as_a_csv_file(tmp_path, suffix, capsys):
    """Excel's "Text (Tab delimited)" saves .txt, other tools .tsv: the same table as the .csv file (it was refused
    as "not an Excel workbook"), and Excel's "Unicode Text" (UTF-16) is named as such."""
    tab = GOOD.replace(",", "\t")
    _csv(tmp_path, tab, "p" + suffix)
    _csv(tmp_path, GOOD, "p.csv")
    for name in ("p" + suffix, "p.csv"):
        assert main(["calibrate", str(tmp_path / name), "--format", "json", "-o", str(tmp_path / f"{name}.json")]) == 0
    a, b = (json.loads((tmp_path / f"{n}.json").read_text())["Values"] for n in ("p" + suffix, "p.csv"))
    assert a == b
    _csv(tmp_path, tab.encode("utf-16"), "u" + suffix)
    capsys.readouterr()
    assert main(["calibrate", str(tmp_path / ("u" + suffix))]) == 2
    assert "is UTF-16 text (Excel's 'Unicode Text'); save it again as CSV UTF-8" in capsys.readouterr().err


@pytest.mark.parametrize("quoted", [False, True], ids=["plain", "quoted"])
def test_trailing_empty_fields_are_no_ragged_rows(tmp_path, quoted):
    """'A,x,5,1,' ends in a delimiter that a decimal comma or a comma inside a name never leaves (those fill the
    extra field): read as the row it is.  A filled extra field is still refused, naming the row."""
    name = '"B"' if quoted else "B"
    text = f"Assessor,Object,Score,SD\nA,x,5,1,\nA,y,7,1\n{name},x,6,1,,\nB,y,8,1\n"
    panel = read_panel(CsvBook(_csv(tmp_path, text)))
    plain = read_panel(CsvBook(_csv(tmp_path, GOOD, "plain.csv")))
    pd.testing.assert_frame_equal(panel.frame, plain.frame)
    with pytest.raises(InputProblems, match=r"row 4 has 6 fields but the header row has 4: an unquoted decimal comma"):
        CsvBook(_csv(tmp_path, text.replace(",x,6,1,,", ",x,6,1,,2"), "bad.csv")).read_table("Evaluations")
    semicolons = read_panel(CsvBook(_csv(tmp_path, text.replace(",", ";").replace(";5;", ";5,0;"), "semi.csv")))
    pd.testing.assert_frame_equal(semicolons.frame, plain.frame)  # and the decimal commas' second reading


@settings(max_examples=80, deadline=None)
@example(scores=[3.0, 2.5], delimiter=";", title="Scores, round 2", padded=False, sep_line=False, blank_lines=0,
         trailing=False)  # a title whose comma is no delimiter of the table below it
@example(scores=[3.0, None, 7.75], delimiter="\t", title="Scores, round 2", padded=False, sep_line=True, blank_lines=1,
         trailing=True)
@given(scores=st.lists(st.one_of(st.none(), st.integers(1, 9).map(float), st.sampled_from([2.5, 3.25, 7.75])),
                       min_size=2, max_size=12),
       delimiter=st.sampled_from([",", ";", "\t"]), title=st.sampled_from(["", "Panel scores 2026", "Scores, round 2", "Scores; final"]),
       padded=st.booleans(), sep_line=st.booleans(), blank_lines=st.integers(0, 2), trailing=st.booleans())
def test_any_layout_of_the_same_table_reads_as_the_same_panel(tmp_path_factory, scores, delimiter, title, padded,
                                                              sep_line, blank_lines, trailing):
    """The same evaluations saved as people and programs save them -- any delimiter (';' with decimal commas, as
    Excel writes it there), a title (padded to the table's width, or not), blank lines, Excel's 'sep=' line,
    trailing empty fields -- read as the same panel, each row numbered as a spreadsheet shows the file."""
    assume(any(s is not None for s in scores))  # a panel of pending reads only is refused, whatever its layout
    rows = [[f"A{i % 3}", f"P{i // 3}", s, 1.0] for i, s in enumerate(scores)]
    width = 4

    def cell(value):
        if value is None:
            return ""
        text = f"{value:g}" if isinstance(value, float) else str(value)
        return text.replace(".", ",") if delimiter == ";" else text

    above = []
    if sep_line:
        above.append(f"sep={delimiter}")
    if title and delimiter not in title:  # a title of two fields is a table's first row
        above.append(title + (delimiter * (width - 1) if padded else ""))
        above += [delimiter * (width - 1) if padded else ""] * blank_lines
    body = [delimiter.join(["Assessor", "Object", "Score", "SD"])]
    body += [delimiter.join(cell(v) for v in row) + (delimiter if trailing and k % 2 else "")
             for k, row in enumerate(rows)]
    folder = tmp_path_factory.mktemp("layout")
    path = folder / "p.csv"
    path.write_text("\n".join(above + body) + "\n", encoding="utf-8")
    plain = folder / "plain.csv"
    plain.write_text("Assessor,Object,Score,SD\n" + "".join(
        ",".join("" if v is None else (f"{v:g}" if isinstance(v, float) else str(v)) for v in row) + "\n"
        for row in rows), encoding="utf-8")
    got, want = read_panel(CsvBook(path)), read_panel(CsvBook(plain))
    pd.testing.assert_frame_equal(got.frame, want.frame)
    assert (got.sheet_rows - len(above)).tolist() == want.sheet_rows.tolist()
    assert not got.errors and len(got.pending) == len(want.pending)
