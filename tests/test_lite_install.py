"""Installing for xlwings Lite pulls only what Lite needs; the Pyodide harness (make test-lite) is pinned.

The Pyodide run itself is ``make test-lite`` (CI runs it after ``make test``); these checks keep its
pieces honest in the ordinary suite.
"""
from __future__ import annotations

import importlib.util
import pathlib
import sys
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
LITE = ROOT / "lite"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"lite_{name}", LITE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_core_dependencies_are_what_pyodide_provides():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = lambda reqs: {r.split(";")[0].split(">")[0].split("=")[0].split("<")[0].strip() for r in reqs}  # noqa: E731
    # all four are in Pyodide 0.27's own package set (threadpoolctl 3.5, pure Python, as scikit-learn's dependency)
    assert names(project["dependencies"]) == {"numpy", "scipy", "pandas", "threadpoolctl"}
    assert names(project["optional-dependencies"]["excel"]) == {"openpyxl", "xlwings", "defusedxml", "python-calamine",
                                                                    "polars", "xlsxwriter", "tqdm", "isal"}
    assert all(">=" in r for r in project["dependencies"] + project["optional-dependencies"]["excel"])
    # a speed-up only: never asked of Pyodide, which has no wheel for it
    assert [r for r in project["optional-dependencies"]["excel"] if r.startswith("isal")] == \
        ["isal>=1.6; sys_platform != 'emscripten'"]


def test_makefile_installs_the_excel_extra_for_demo_and_test():
    makefile = (ROOT / "Makefile").read_text()
    assert 'pip install --quiet -e ".[excel]"' in makefile
    assert 'pip install --quiet -e ".[excel,test]"' in makefile


def test_cli_without_the_excel_extra_says_what_to_install(monkeypatch, tmp_path, capsys):
    from xlcalib import cli

    monkeypatch.setitem(sys.modules, "openpyxl", None)  # as if not installed: import raises ModuleNotFoundError
    assert cli.main(["templates", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and 'pip install "xlcalib[excel]"' in err and "openpyxl" in err
    assert "internal error" not in err


def test_lite_docs_name_the_verified_pyodide_version():
    fetch = _load("fetch")
    for doc in (ROOT / "README.md", ROOT / "examples" / "xlwings_lite" / "requirements.txt"):
        assert f"Pyodide {fetch.PYODIDE_VERSION}" in doc.read_text(), doc


def test_pyodide_test_wheels_are_pinned_with_hashes():
    lines = [line for line in (LITE / "requirements-pyodide.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert lines
    for line in lines:
        spec, _, digest = line.partition(" --hash=sha256:")
        assert "==" in spec and len(digest.strip()) == 64, line


def test_fetch_takes_dependencies_from_the_official_lock():
    fetch = _load("fetch")
    lock = {"packages": {"scipy": {"depends": ["numpy", "openblas"]}, "numpy": {"depends": []},
                         "openblas": {"depends": []}}}
    assert fetch._closure(lock, ["scipy"]) == ["numpy", "openblas", "scipy"]
    with pytest.raises(fetch.FetchError, match="not in the official"):
        fetch._closure(lock, ["pandas"])


def test_cell_comparison_catches_differences():
    calls = _load("lite_calls")
    same = calls.compare_cells({"F": [["a", 1.0], [None, 2.0]]}, {"F": [["a", 1.0], [None, 2.0 + 1e-15]]})
    assert same["problems"] == [] and same["cells"] == 4 and same["identical"] == 3
    for got in ({"F": [["b", 1.0], [None, 2.0]]}, {"F": [["a", 1.1], [None, 2.0]]}, {"F": [["a", 1.0]]}, {}):
        assert calls.compare_cells(got, {"F": [["a", 1.0], [None, 2.0]]})["problems"], got
