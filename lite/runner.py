"""make test-lite, Pyodide side (run by lite/run.mjs with top-level await; the last expression is the exit code).

1. the xlwings Lite example: every catalogue function registered through xlwings Lite's own
   decorators, and a sample call of each giving the same cells as CPython gave in this run;
2. every test module with pytest except those of the `excel` extra's adapters (NOT_IN_LITE, listed
   with reasons in the output); tests that need what Pyodide does not have are skipped, each with
   its reason;
3. timings of representative calls against the CPython reference.

The host repository is mounted at /host/repo and the cache at /host/cache; xlcalib itself is the
wheel installed by micropip (no dependencies pulled), never the repository's source tree.
"""
import json
import os
import pathlib
import shutil
import sys

REPO = pathlib.Path("/host/repo")
CACHE = pathlib.Path("/host/cache")
WORK = pathlib.Path("/lite")  # tests run from a copy: the repository root must not shadow the installed wheel

#: Every tests/test_*.py runs in Pyodide (the core and the spreadsheet-function modules, including ones
#: added later) except these, which test the `excel` extra's adapters — what xlwings Lite never loads:
NOT_IN_LITE = {
    "test_cli.py": "the command line (starts processes, reads and writes workbook files)",
    "test_libreoffice.py": "opens workbooks in LibreOffice (a separate program)",
    "test_templates.py": "builds template workbook files and recalculates them in LibreOffice",
    "test_workbook_openpyxl.py": "the workbook-file backend (openpyxl files)",
    "test_workbook_xlwings.py": "the classic add-in's live-workbook backend (desktop Excel)",
    "test_macros_xlwings.py": "the classic add-in's Run-main macros on workbook files",
    "test_exercises_assignment.py": "the assignment workbook (openpyxl files, the CLI)",
    "test_exercises_panel_calibration.py": "the calibration runner on workbooks (openpyxl files, the CLI's test panel)",
    "test_exercises_reliability.py": "the reliability runner on filled template workbook files (openpyxl)",
    "test_exercises_ordinal_agreement.py": "the ordinal runner on filled template workbook files, and the report CLI",
    "test_exercises_ground_truth.py": "the ground truth runner on a filled template workbook file (openpyxl)",
    "test_exercises_agreement.py": "the agreement command line on workbook and CSV files (excel extra)",
    "test_presentation.py": "result workbooks as files (openpyxl, the CLI, file permissions)",
    "test_workbook_reader.py": "the bounded workbook reader (python-calamine, a compiled package Lite does not have)",
    "test_workbook_csv.py": "the CSV file reader's resource limits (RLIMIT_AS in a subprocess; no processes here)",
    "test_workbook_xlsxwriter.py": "result workbook files streamed by XlsxWriter through the CLI (excel extra)",
    "test_imports_integration.py": "review exports through the CLI, workbook files and the Run-main macros (excel extra)",
    "test_bad_input_files.py": "damaged and hostile workbook files through the CLI, full disks and Ctrl-C in subprocesses "
                               "(excel extra, processes)",
}
#: test name -> why it cannot run in Pyodide (browser/Node wasm: no processes, no peer packages)
_FILES = "reads or writes workbook files through the excel extra (python-calamine/CLI), which Lite never loads"
_PROCESSES = "starts a Python subprocess; Pyodide has no processes"
SKIP = {
    "test_core_never_imports_xlwings": _PROCESSES,
    "test_catalogue_importable_without_xlwings": _PROCESSES,
    "test_size_arguments_refused_within_a_memory_limit": _PROCESSES + " (RLIMIT_AS)",
    "test_stale_temporary_files_are_cleaned_and_recognisable": _PROCESSES + " (kill -9 of a writer)",
    "test_cli_output_onto_a_path_under_a_file": _FILES,
    "test_cli_output_onto_an_existing_folder": _FILES,
    "test_cli_read_only_folder_and_full_disk": _FILES,
    "test_cli_a_legal_255_character_file_name": _FILES,
    "test_cli_unreadable_or_missing_input": _FILES,
    "test_cli_chart_sheet_named_evaluations": _FILES,
    "test_calibration_settings_errors_name_the_cell": _FILES,
    "test_read_panel_uses_the_workbooks_settings_lists_and_levels": _FILES,
    "test_mid_panel_workbook_runs_and_lists_checks": _FILES,
    "test_merged_cells_are_reported_by_row": _FILES,
    "test_merged_cells_message": _FILES,
    "test_xlsx_output_keeps_formula_looking_names_as_text": _FILES + " (result files: XlsxWriter)",
    "test_cli_on_demo_workbook": _FILES + " (result files: XlsxWriter)",
    "test_cmt_resaved_as_xlsx": _FILES + " (an xlsx export read by python-calamine)",
    "test_long_table_written_as_csv_and_xlsx": _FILES + " (the long table written as xlsx: XlsxWriter)",
    "test_core_never_loads_the_importers_and_importers_load_no_excel_library": _PROCESSES,
    "test_assignment_sheet_rules_applied_end_to_end": _FILES + " (the Assignment sheet of a workbook file)",
    "test_suitability_grid_sheet_wins_over_subjects": _FILES + " (a Suitability sheet of a workbook file)",
    "test_bad_assignment_sheet_says_how_to_run_without_it": _FILES + " (the Assignment sheet of a workbook file)",
    "test_cli_rule_files_for_a_csv_panel": _FILES + " (the command line with rule files)",
    "test_next_reads_and_a_workbook_declare_the_scale": _FILES + " (next reads' result workbook, a Settings sheet)",
    "test_verify_draw_bad_files_are_one_line": _FILES + " (verify-draw reads result workbooks through python-calamine)",
    "test_a_title_is_shown_on_the_ranking": _FILES + " (the result workbook: XlsxWriter)",
    "test_command_line_writes_facets_tables_and_native_charts": _FILES + " (the result workbook: XlsxWriter)",
    "test_openpyxl_and_xlsxwriter_render_the_ordinal_workbook_alike": _FILES + " (XlsxWriter)",
    "test_cli_workbook_spreadsheet_functions_and_api_give_the_same_decision": _FILES + " (the CLI's result workbook)",
    "test_a_pooled_run_writes_its_workbook_without_reader_sheets": _FILES + " (the CLI's result workbook)",
}


def _print(*lines):
    print(*lines, sep="\n", flush=True)


def _prepare_tree():
    if WORK.exists():
        shutil.rmtree(WORK)
    WORK.mkdir()
    for name in ("tests", "examples", "docs", "lite"):
        shutil.copytree(REPO / name, WORK / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "Makefile"):
        shutil.copy(REPO / name, WORK / name)


def _check_installed_wheel():
    import importlib.util

    for name in ("xlcalib", "udf_registry"):  # located, not imported: xlwings must be imported later
        where = pathlib.Path(importlib.util.find_spec(name).origin).resolve()
        if str(where).startswith(("/host/", str(WORK))):
            raise RuntimeError(f"{name} would be imported from {where}, not from the installed wheel")
    return where.parent.parent


async def example_check() -> bool:
    sys.path.insert(0, str(WORK / "lite"))
    from lite_calls import compare_cells, lite_cells

    saved = {k: os.environ.get(k) for k in ("XLWINGS_ON_SERVER", "XLWINGS_LICENSE_KEY")}
    got = await lite_cells(WORK)
    from udf_registry.registry import REGISTRY  # after lite_cells: imported under the Lite setting
    ref = json.loads((CACHE / "run" / "cpython.json").read_text())
    ok = True
    if set(got["registered"]) != set(REGISTRY):
        _print(f"FAIL example: xlwings Lite registered {len(got['registered'])} functions, the catalogue has "
               f"{len(REGISTRY)}: missing {sorted(set(REGISTRY) - set(got['registered']))}")
        ok = False
    if got["meta"] != ref["meta"]:
        _print("FAIL example: the function metadata differs from CPython's")
        ok = False
    cmp = compare_cells(got["cells"], ref["cells"])
    internal = [n for n, c in got["cells"].items() if "internal error" in json.dumps(c)]
    if internal:
        _print(f"FAIL example: internal errors in {internal}")
        ok = False
    for p in cmp["problems"][:20]:
        _print(f"FAIL example: {p}")
    ok = ok and not cmp["problems"]
    _print(f"example: {len(got['registered'])} of {len(REGISTRY)} catalogue functions registered by xlwings Lite's "
           f"decorators; sample calls: {cmp['cells']} cells, {cmp['identical']} identical to CPython "
           f"{ref['python']}, largest relative difference {cmp['max_rel_diff']:.1e} -> {'ok' if ok else 'FAILED'}")
    (CACHE / "run" / "pyodide_cells.json").write_text(json.dumps(got))
    # leave no trace of the Lite setting for the tests, which import xlwings classically
    for name in [m for m in sys.modules if m == "xlwings" or m.startswith("xlwings.")]:
        del sys.modules[name]
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    return ok


class LitePlugin:
    """Skips what Pyodide cannot do (each with its reason) and counts outcomes."""

    def __init__(self):
        self.counts = {}

    def pytest_configure(self, config):
        from hypothesis import settings

        # wasm is slower than native: property tests keep their examples but lose the per-example deadline
        settings.register_profile("pyodide", deadline=None)
        settings.load_profile("pyodide")

    def pytest_collection_modifyitems(self, config, items):
        import pytest

        for item in items:
            reason = SKIP.get(item.originalname or item.name)
            if reason:
                item.add_marker(pytest.mark.skip(reason=f"Pyodide: {reason}"))

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or report.outcome != "passed":
            self.counts[report.outcome] = self.counts.get(report.outcome, 0) + 1


def run_tests() -> int:
    import pytest

    os.chdir(WORK)
    plugin = LitePlugin()
    modules = sorted(p.name for p in (WORK / "tests").glob("test_*.py"))
    stale = sorted(set(NOT_IN_LITE) - set(modules))
    if stale:
        _print(f"FAIL: NOT_IN_LITE names modules that no longer exist: {stale}")
        return 1
    for name, why in NOT_IN_LITE.items():
        _print(f"not run in Pyodide: tests/{name} — {why}")
    run = [f"tests/{m}" for m in modules if m not in NOT_IN_LITE]
    _print(f"running {len(run)} test modules in Pyodide: {', '.join(m[6:-3] for m in run)}")
    code = pytest.main(["-q", "-ra", "-p", "no:cacheprovider", "-p", "no:faulthandler", "--capture=sys",
                        "--rootdir", str(WORK), *run], plugins=[plugin])
    _print(f"pytest in Pyodide: {plugin.counts}")
    return int(code)


def run_timings():
    sys.path.insert(0, str(WORK / "lite"))
    from lite_calls import timing_table, timings

    ref = json.loads((CACHE / "run" / "cpython.json").read_text())
    mine = timings()
    _print("", "Pyodide versus CPython, same inputs (best of at least 5 calls each):", *timing_table(mine, ref["timings"]))
    (CACHE / "run" / "pyodide_timings.json").write_text(json.dumps({"pyodide": mine, "cpython": ref["timings"]}))


async def main() -> int:
    _prepare_tree()
    where = _check_installed_wheel()
    import numpy, pandas, scipy  # noqa: E401

    _print(f"xlcalib from {where}; Python {sys.version.split()[0]}, numpy {numpy.__version__} "
           f"(index type {numpy.dtype(numpy.intp)}), scipy {scipy.__version__}, pandas {pandas.__version__}")
    if LITE_MODE == "bench":  # noqa: F821 - set by run.mjs
        run_timings()
        return 0
    example_ok = await example_check()
    code = run_tests()
    run_timings()
    if not example_ok:
        _print("test-lite: the xlwings Lite example check FAILED")
    return code if code else (0 if example_ok else 1)


await main()  # noqa: F704 - top-level await: Pyodide's runPythonAsync
