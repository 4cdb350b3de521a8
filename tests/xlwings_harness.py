"""Run the UDF catalogue through xlwings' own code paths without Excel.

Excel is not available on Linux, but ``xlwings.udfs`` (the module that
decorates UDFs, converts arguments in ``call_udf`` and writes the VBA
wrappers) is plain Python apart from three Windows-only imports.  This
harness, used only by tests:

1. inserts inert stand-ins for ``pythoncom`` (a no-op ``CoInitialize``),
   ``pywintypes`` (a ``com_error`` class) and ``win32com.client`` (a
   ``Dispatch`` that must never be called) into ``sys.modules``;
2. registers a minimal xlwings engine named ``excel`` whose impl cleans raw
   cell values the way the Windows COM layer does (empty cell -> ``None``;
   COM error integers -> the error text when ``err_to_str`` is set, else
   ``None``) and prepares outgoing values (``None``/NaN -> ``""``);
3. decorates the catalogue with the *real* ``xlfunc/xlarg/xlret``;
4. calls a function as ``call_udf`` does: each raw argument through
   ``xlwings.conversion.read(None, value, options)``, the function, then
   ``xlwings.conversion.write(result, None, ret_options)``.
"""
from __future__ import annotations

import sys
import types

_ERRORS = {-2146826281: "#DIV/0!", -2146826246: "#N/A", -2146826259: "#NAME?", -2146826288: "#NULL!",
           -2146826252: "#NUM!", -2146826265: "#REF!", -2146826273: "#VALUE!"}


def _install_windows_stand_ins():
    if "pythoncom" not in sys.modules:
        pythoncom = types.ModuleType("pythoncom")
        pythoncom.CoInitialize = lambda: None
        pythoncom.IID_IDispatch = None
        sys.modules["pythoncom"] = pythoncom
    if "pywintypes" not in sys.modules:
        pywintypes = types.ModuleType("pywintypes")

        class com_error(Exception):
            pass

        pywintypes.com_error = com_error
        pywintypes.TimeType = type(None)
        sys.modules["pywintypes"] = pywintypes
    if "win32com.client" not in sys.modules:
        win32com = types.ModuleType("win32com")
        client = types.ModuleType("win32com.client")

        def Dispatch(*args, **kwargs):  # noqa: N802 - name fixed by pywin32
            raise RuntimeError("COM Dispatch is not available in the headless harness")

        client.Dispatch = Dispatch
        win32com.client = client
        sys.modules["win32com"] = win32com
        sys.modules["win32com.client"] = client


class _HeadlessImpl:
    """The two data hooks xlwings.conversion needs from an engine, as the COM layer behaves."""

    name = "excel"
    type = "desktop"

    @staticmethod
    def clean_value_data(data, datetime_builder, empty_as, number_builder, err_to_str):
        def clean(c):
            if c is None or c == "":
                return empty_as
            if isinstance(c, int) and not isinstance(c, bool) and c in _ERRORS:
                return _ERRORS[c] if err_to_str else None
            if isinstance(c, float) and number_builder is not None:
                return number_builder(c)
            return c

        return [[clean(c) for c in row] for row in data]

    @staticmethod
    def prepare_xl_data_element(x, options):
        import math

        if x is None or (isinstance(x, float) and math.isnan(x)):
            return ""
        return x


_state: dict = {}


def setup():
    """Idempotent: stand-ins, test engine, real decorators applied to the catalogue."""
    if _state:
        return _state
    _install_windows_stand_ins()
    import xlwings
    import xlwings.udfs as udfs

    if not any(getattr(e, "name", None) == "excel" for e in xlwings.engines):
        engine = xlwings.Engine(impl=_HeadlessImpl())
        xlwings.engines.add(engine)
    xlwings.engines.active = next(e for e in xlwings.engines if e.name == "excel")
    from udf_registry.registry import decorate

    module = types.ModuleType("xlcalib_udfs_under_test")
    decorate(udfs.xlfunc, udfs.xlarg, udfs.xlret, module.__dict__)
    _state.update(udfs=udfs, module=module, xlwings=xlwings)
    return _state


#: What the VBA wrapper hands over for an omitted Optional argument (COM's DISP_E_PARAMNOTFOUND).
MISSING = -2147352572


def call(name: str, *raw_args):
    """Call a decorated UDF the way ``xlwings.udfs.call_udf`` does (minus the COM plumbing).

    The generated VBA wrapper always passes every argument; omitted Optional
    ones arrive as :data:`MISSING` (pass it explicitly for ``=F(a,,c)``), and
    ``call_udf`` replaces them by the Python default before converting the
    rest with ``xlwings.conversion.read(None, value, options)``.
    """
    state = setup()
    from xlwings import conversion

    func = getattr(state["module"], name)
    info = func.__xlfunc__
    if len(raw_args) > len(info["args"]):
        raise TypeError(f"{name} takes {len(info['args'])} arguments in Excel, got {len(raw_args)}")
    args = list(raw_args) + [MISSING] * (len(info["args"]) - len(raw_args))
    for i, arg in enumerate(args):
        arg_info = info["args"][min(i, len(info["args"]) - 1)]
        if isinstance(arg, int) and arg == MISSING:  # as call_udf
            args[i] = arg_info.get("optional", None)
        else:
            args[i] = conversion.read(None, arg, arg_info["options"])
    result = func(*args)
    return conversion.write(result, None, info["ret"]["options"])


def vba_module(book_name: str = "x.xlsm") -> str:
    """The VBA wrapper module xlwings would import into Excel for the catalogue."""
    import io

    state = setup()

    class _Book:
        Name = book_name

    buffer = io.StringIO()
    state["udfs"].generate_vba_wrapper("udf_registry", state["module"], buffer, _Book())
    return buffer.getvalue()


def import_functions(book_name: str = "panel.xlsm") -> tuple[str, list[tuple[str, dict]]]:
    """Run xlwings' own *Import Functions* (``xlwings.udfs.import_udfs``) against a stand-in workbook.

    The stand-in records what Excel would be asked to do: the VBA module file
    handed to ``VBComponents.Import`` and every ``Application.MacroOptions``
    call (function description, category, argument descriptions).  The module
    is served from xlwings' own UDF-module cache, pre-filled with the
    catalogue decorated by the real ``xlfunc/xlarg/xlret`` (as ``udf_registry``
    is on Windows).
    """
    state = setup()
    udfs = state["udfs"]
    com_error = sys.modules["pywintypes"].com_error
    udfs.udf_modules["udf_registry"] = {"filename": "udf_registry", "filetime": None, "module": state["module"]}
    recorded: dict = {"vba": None, "options": []}

    class _Components:
        def __call__(self, name):
            raise com_error(f"no component {name}")  # a workbook without an earlier import

        def Remove(self, component):  # noqa: N802 - COM method name
            raise AssertionError("nothing to remove")

        def Import(self, path):  # noqa: N802 - COM method name
            with open(path, encoding="utf-8") as handle:
                recorded["vba"] = handle.read()

    class _Application:
        Version = "16.0"

        def MacroOptions(self, macro, **options):  # noqa: N802 - COM method name
            recorded["options"].append((macro, options))

        def Run(self, *args):  # noqa: N802 - COM method name
            raise AssertionError("fallback import path not expected")

    class _Book:
        Name = book_name
        VBProject = types.SimpleNamespace(VBComponents=_Components())
        Application = _Application()

    try:
        udfs.import_udfs("udf_registry", _Book())
    finally:
        udfs.udf_modules.pop("udf_registry", None)
    return recorded["vba"], recorded["options"]
