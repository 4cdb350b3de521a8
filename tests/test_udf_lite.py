"""The xlwings Lite entry point (examples/xlwings_lite/main.py) exposes the whole catalogue.

xlwings Lite runs in Excel's browser runtime (Pyodide) and its decorators live in
``xlwings.server``, which needs an xlwings PRO licence to import outside Lite; so
here main.py is executed with ``xlwings.func/arg/ret`` swapped for the classic
``xlwings.udfs`` decorators, which take the same arguments (``func(**kwargs)``,
``arg(name, doc=..., **options)``, ``ret(**options)``) and build the same
``__xlfunc__`` metadata that Lite turns into Office.js function metadata.
"""
from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from udf_registry.registry import REGISTRY

from . import xlwings_harness as harness

MAIN = Path(__file__).resolve().parent.parent / "examples" / "xlwings_lite" / "main.py"
REQUIREMENTS = MAIN.parent / "requirements.txt"


@pytest.fixture(scope="module")
def lite_namespace():
    state = harness.setup()
    xlwings, udfs = state["xlwings"], state["udfs"]
    saved = xlwings.func, xlwings.arg, xlwings.ret
    xlwings.func, xlwings.arg, xlwings.ret = udfs.xlfunc, udfs.xlarg, udfs.xlret
    try:
        return runpy.run_path(str(MAIN), run_name="main")
    finally:
        xlwings.func, xlwings.arg, xlwings.ret = saved


def test_main_exports_every_function_with_metadata(lite_namespace):
    exported = {name: obj for name, obj in lite_namespace.items() if hasattr(obj, "__xlfunc__")}
    assert set(exported) == set(REGISTRY)
    for name, f in exported.items():
        info = f.__xlfunc__
        entry = REGISTRY[name]
        assert info["name"] == name  # Office.js registers name.upper(): the catalogue name itself
        assert info["ret"]["doc"] == entry.help  # Lite shows the docstring as the function description
        assert [a["name"] for a in info["args"]] == [a.name for a in entry.args]
        assert [a["doc"] for a in info["args"]] == [a.help for a in entry.args]
        for arg, declared in zip(info["args"], entry.args):
            assert arg["options"].get("ndim") == (2 if declared.range else None)


def test_main_functions_compute_like_the_catalogue(lite_namespace):
    from .test_udf import CALIB_ARGS

    assert lite_namespace["CALIB_VALUES"](*CALIB_ARGS) == REGISTRY["CALIB_VALUES"].func(*CALIB_ARGS)


def test_main_without_excel_is_plain_python():
    """On a machine without Excel, xlwings' own func/arg/ret are no-ops and main.py still loads."""
    namespace = runpy.run_path(str(MAIN), run_name="main")
    assert set(namespace["__all__"]) == set(REGISTRY)
    assert namespace["REL_SPEARMAN_BROWN"](0.5, 2.0) == pytest.approx(2 / 3)


def test_requirements_name_only_what_pyodide_can_load():
    lines = [line.strip() for line in REQUIREMENTS.read_text().splitlines() if line.strip() and not line.startswith("#")]
    # numpy/scipy/pandas come from Pyodide's own builds: unpinned, as xlwings Lite's docs ask
    assert {"numpy", "scipy", "pandas"} <= set(lines)
    assert not any(op in line for line in lines for op in ("==", ">=", "<"))
