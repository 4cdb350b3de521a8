"""xlwings Lite entry point: exposes the whole xlcalib catalogue as Excel custom functions.

Paste this file into the xlwings Lite editor (main.py) and the lines of
requirements.txt into its requirements tab (see docs/USE_IN_EXCEL.md).  The
numerical core needs only numpy, scipy and pandas, which xlwings Lite
(Pyodide) provides; xlcalib itself comes from a wheel you build with
``python -m pip wheel --no-deps -w dist .`` and host at an https URL.

Every function is declared once in ``udf_registry``; here it is decorated with
xlwings Lite's own ``func/arg/ret`` exactly as the classic add-in does, and
placed in this module's namespace, where xlwings Lite looks for custom
functions.  Type e.g. ``=CALIB_VALUES(A2:A901, B2:B901, C2:C901, D2:D901)``.
"""
import xlwings as xw

from udf_registry.registry import REGISTRY, decorate

globals().update(decorate(xw.func, xw.arg, xw.ret))
__all__ = sorted(REGISTRY)
