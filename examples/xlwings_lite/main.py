"""xlwings Lite entry point: exposes the whole xlcalib catalogue as Excel custom functions.

Paste this file into the xlwings Lite editor (main.py) and the lines of
requirements.txt into its requirements tab.  The numerical core needs only
numpy, scipy and pandas, which xlwings Lite (Pyodide) provides; xlcalib itself
is installed from a wheel you build with ``python -m pip wheel --no-deps .``
and host at an https URL (see requirements.txt).

Every function is declared once in ``udf_registry``; here it is decorated with
xlwings Lite's own ``func/arg/ret`` exactly as the classic add-in does.
"""
import xlwings as xw

from udf_registry.registry import REGISTRY, decorate

globals().update(decorate(xw.func, xw.arg, xw.ret))
__all__ = sorted(REGISTRY)
