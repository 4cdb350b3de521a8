"""The CLI's text output (``--format csv`` / ``json``): the fast writer (polars) and the pandas/json path
say the same thing — same columns, the same floats to the last bit, empty/null for missing, booleans,
formula-safe text in every cell and column name — and the command line writes it either way.
"""
from __future__ import annotations

import io
import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xlcalib.workbook import text_output
from xlcalib.workbook.base import neutralise_text
from xlcalib.workbook.text_output import csv_bytes, json_bytes

pl = pytest.importorskip("polars")

TRICKY_TEXT = ["=1+2", "@SUM(1)", "-x", "+1.5", "-3", "\tTab", "\rCR", "a,b", 'say "hi"', "two\nlines",
               "Ørsted-Łódź 東京", "", None, "plain", " =not at start", "=HYPERLINK(\"x\")"]


def _tricky_frame() -> pd.DataFrame:
    n = len(TRICKY_TEXT)
    floats = np.array([0.1 + 0.2, 1e-5, -3.416981577686329e-06, 1e16, 1.2345678901234567e17, -0.0, 5e-324,
                       1.7976931348623157e308, np.nan, 2.0 / 3.0, 123456.0, np.inf, -np.inf, 1e-300, 7.0, 0.001])
    return pd.DataFrame({
        "assessor": pd.array(TRICKY_TEXT, dtype="str"),
        "=name": pd.Series(TRICKY_TEXT[::-1], dtype=object),
        "Ørsted é": floats[:n],
        "n": np.arange(n, dtype=np.int64) - 3,
        "anomalous": np.arange(n) % 3 == 0,
        "changed": pd.Series([True, False, None] * (n // 3) + [True] * (n % 3), dtype=object),
        "lottery": pd.array(["", "drawn"] * (n // 2), dtype="str"),
    })


def _read_csv(data: bytes) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(data), keep_default_na=False, na_values=[""], encoding="utf-8")


def test_csv_fast_and_reference_paths_read_back_the_same():
    frame = _tricky_frame()
    fast, reference = csv_bytes(frame, fast=True), csv_bytes(frame, fast=False)
    assert fast.startswith("assessor,'=name,Ørsted é,n,anomalous,changed,lottery\n".encode())
    a, b = _read_csv(fast), _read_csv(reference)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert len(a) == len(frame)
    # the floats come back bit for bit; missing is empty
    back = a["Ørsted é"].to_numpy()
    assert np.array_equal(back, frame["Ørsted é"].to_numpy(), equal_nan=True)
    assert [math.copysign(1, v) for v in back[[5]]] == [-1.0]
    assert a["anomalous"].tolist() == frame["anomalous"].tolist()
    assert a["n"].tolist() == frame["n"].tolist()


def test_csv_text_is_formula_safe_and_quoted_where_needed():
    frame = _tricky_frame()
    table = _read_csv(csv_bytes(frame, fast=True))
    expected = [None if v is None or v == "" else neutralise_text(v) for v in TRICKY_TEXT]
    assert [None if pd.isna(v) else v for v in table["assessor"]] == expected
    assert expected[:6] == ["'=1+2", "'@SUM(1)", "'-x", "+1.5", "-3", "'\tTab"]
    for data in (csv_bytes(frame, fast=True), csv_bytes(frame, fast=False)):
        lines = data.decode("utf-8").split("\n")
        assert not any(line.startswith(("=", "@", "-x", "\t")) for line in lines)
        assert '"a,b"' in data.decode() and '"say ""hi"""' in data.decode() and '"two\nlines"' in data.decode()


def test_csv_fast_path_matches_pandas_byte_for_byte_on_plain_tables():
    frame = pd.DataFrame({"object": pd.array(["P1", "P2", "=P3"], dtype="str"), "value": [0.5, np.nan, 2.25],
                          "n": [1, 2, 3], "anomalous": [True, False, True], "note": ["", "x", None]})
    assert csv_bytes(frame, fast=True) == csv_bytes(frame, fast=False) == (
        "object,value,n,anomalous,note\nP1,0.5,1,True,\nP2,,2,False,x\n'=P3,2.25,3,True,\n".encode())


def test_json_fast_and_reference_paths_parse_the_same():
    frame = _tricky_frame()
    document = {"Residuals": frame, "Empty": frame.iloc[:0], "stats": {"R": 1.5, "gauge": "weighted", "é": [1, 2]}}
    fast, reference = json_bytes(document, fast=True), json_bytes(document, fast=False)
    a, b = json.loads(fast), json.loads(reference)
    assert a == b
    records = a["Residuals"]
    assert len(records) == len(frame) and a["Empty"] == [] and a["stats"] == document["stats"]
    assert list(records[0]) == ["assessor", "'=name", "Ørsted é", "n", "anomalous", "changed", "lottery"]
    floats = [r["Ørsted é"] for r in records]
    original = frame["Ørsted é"].tolist()
    assert all(f is None if not math.isfinite(o) else f == o for f, o in zip(floats, original))  # bit for bit
    assert [r["assessor"] for r in records][:6] == ["'=1+2", "'@SUM(1)", "'-x", "+1.5", "-3", "'\tTab"]
    assert records[11]["assessor"] == "" and records[12]["assessor"] is None  # JSON keeps "" apart from missing
    assert [r["anomalous"] for r in records[:3]] == [True, False, False]
    assert [r["changed"] for r in records[:3]] == [True, False, None]
    assert b"\n  {" in fast  # one record per line


def test_mixed_object_columns_take_the_reference_path_and_keep_their_types():
    frame = pd.DataFrame({"statistic": ["n", "gauge", "@x"], "value": pd.Series([3, "weighted", 0.25], dtype=object)})
    assert text_output._polars_table(frame, pl, for_json=True) is None
    payload = json.loads(json_bytes({"Diagnostics": frame}, fast=True))
    assert payload["Diagnostics"] == [{"statistic": "n", "value": 3}, {"statistic": "gauge", "value": "weighted"},
                                      {"statistic": "'@x", "value": 0.25}]
    assert csv_bytes(frame, fast=True) == b"statistic,value\nn,3\ngauge,weighted\n'@x,0.25\n"


def test_without_polars_the_reference_path_writes(monkeypatch):
    frame = _tricky_frame()
    fast_csv, fast_json = csv_bytes(frame, fast=True), json_bytes({"t": frame}, fast=True)
    monkeypatch.setattr(text_output, "_polars_module", None)  # as if polars could not be imported
    assert text_output.polars_or_none() is None
    assert csv_bytes(frame, fast=True) == csv_bytes(frame, fast=False)
    pd.testing.assert_frame_equal(_read_csv(csv_bytes(frame, fast=True)), _read_csv(fast_csv), check_exact=True)
    assert json.loads(json_bytes({"t": frame}, fast=True)) == json.loads(fast_json)


names = st.text(st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\x00"), max_size=8)
formulaish = st.sampled_from(["=", "+", "-", "@", "\t", "\r", "+1.5", "-2", "@A1", "=1+2", "", "a\rb", "x\ny", "q,\"", "é"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), st.builds(str.__add__, formulaish, names)),
                          st.floats(allow_nan=True, allow_infinity=True, width=64),
                          st.booleans()), min_size=0, max_size=30))
def test_fast_and_reference_paths_agree_on_any_table(rows):
    frame = pd.DataFrame({"name": pd.array([r[0] for r in rows], dtype="str"),
                          "x": np.array([r[1] for r in rows], dtype=np.float64),
                          "flag": np.array([r[2] for r in rows], dtype=bool)})
    pd.testing.assert_frame_equal(_read_csv(csv_bytes(frame, fast=True)), _read_csv(csv_bytes(frame, fast=False)),
                                  check_exact=True)
    assert json.loads(json_bytes({"t": frame}, fast=True)) == json.loads(json_bytes({"t": frame}, fast=False))


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_cli_writes_the_same_content_with_and_without_polars(fmt, tmp_path, monkeypatch):
    from xlcalib.cli import main

    rows = [("=cmd|' /C calc'!A0", "P1", 5, 1), ("Dr Ørsted", "=1+2", 6, 1), ("B, Jr.", "P1", 4, 2),
            ("=cmd|' /C calc'!A0", "@SUM(1)", 7, 1), ("Dr Ørsted", "P1", 5.5, 1), ("B, Jr.", "@SUM(1)", 6.5, 1),
            ("B, Jr.", "=1+2", 5, 0.5), ("-x", "P1", 3, 1), ("-x", "=1+2", 4, 1)]
    src = tmp_path / "p.csv"
    pd.DataFrame(rows, columns=["Assessor", "Object", "Score", "SD"]).to_csv(src, index=False)
    monkeypatch.setattr(text_output, "FAST_MIN_ROWS", 0)  # this small panel through polars too
    outs = {}
    for label in ("fast", "reference"):
        if label == "reference":
            monkeypatch.setattr(text_output, "_polars_module", None)
        out = tmp_path / (label if fmt == "csv" else f"{label}.json")
        assert main(["calibrate", str(src), "--format", fmt, "-o", str(out), "--fund", "2", "--seed", "1"]) == 0
        if fmt == "csv":
            outs[label] = {f.name: _read_csv(f.read_bytes()) for f in sorted(out.iterdir())}
        else:
            outs[label] = json.loads(out.read_text(encoding="utf-8"))
    if fmt == "csv":
        assert outs["fast"].keys() == outs["reference"].keys() and "p_Residuals.csv" in outs["fast"]
        for name in outs["fast"]:
            pd.testing.assert_frame_equal(outs["fast"][name], outs["reference"][name], check_exact=True)
        assert set(outs["fast"]["p_Biases.csv"]["assessor"]) == {"'=cmd|' /C calc'!A0", "Dr Ørsted", "B, Jr.", "'-x"}
    else:
        assert outs["fast"] == outs["reference"]
        assert {r["object"] for r in outs["fast"]["Values"]} == {"P1", "'=1+2", "'@SUM(1)"}


def test_small_tables_and_tight_memory_limits_take_the_reference_path(tmp_path):
    small = pd.DataFrame({"x": np.arange(3.0)})
    assert text_output._polars_for(small, None) is None and text_output._polars_for(small, True) is not None
    large = pd.DataFrame({"x": np.arange(float(text_output.FAST_MIN_ROWS))})
    assert text_output._polars_for(large, None) is not None and text_output._polars_for(large, False) is None
    # under ulimit -v polars' allocator would abort the process: the pandas path writes instead
    import subprocess
    import sys

    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (768 << 20, 768 << 20))\n"
            "import numpy as np, pandas as pd\n"
            "from xlcalib.workbook import text_output as t\n"
            "frame = pd.DataFrame({'name': ['=x', 'y'] * t.FAST_MIN_ROWS, 'v': np.arange(2.0 * t.FAST_MIN_ROWS)})\n"
            "assert t.polars_or_none() is None\n"
            "assert t.csv_bytes(frame) == t.csv_bytes(frame, fast=False)\n"
            "print(len(t.json_bytes({'t': frame})))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={"OPENBLAS_NUM_THREADS": "1", "PATH": ""})
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout) > 0


def test_json_document_is_strict_json_outside_the_tables_too():
    """A NaN or infinity in the run's statistics becomes null: strict readers refuse a bare NaN."""
    import json

    document = {"stats": {"R": float("nan"), "mu2": np.float64(np.inf), "n": np.int64(3), "fixed": np.bool_(True),
                          "nested": [1.5, float("-inf"), {"x": np.nan}]},
                "table": pd.DataFrame({"v": [1.0, np.nan]})}
    text = json_bytes(document).decode("utf-8")
    parsed = json.loads(text, parse_constant=lambda name: pytest.fail(f"bare {name} in JSON output"))
    assert parsed["stats"] == {"R": None, "mu2": None, "n": 3, "fixed": True, "nested": [1.5, None, {"x": None}]}
    assert parsed["table"] == [{"v": 1.0}, {"v": None}]
