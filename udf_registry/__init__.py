"""xlcalib's spreadsheet functions (xlwings UDFs), declared once in :mod:`udf_registry.registry`.

``from udf_registry import CALIB_VALUES`` gives a plain callable taking values
exactly as Excel hands them over.  In Excel (xlwings add-in, *UDF Modules* =
``udf_registry``) the same functions are decorated with xlwings' own
``func/arg/ret`` here at import; on machines without Excel those decorators
are no-ops, so importing this package works anywhere.
"""
from __future__ import annotations

from . import calibration, rasch, reliability, agreement, ordinal, scoring, ground_truth  # noqa: F401,I001  (register the families; order = docs order)
from .registry import REGISTRY, decorate

try:  # xlwings is a runtime dependency; keep the catalogue importable even without it
    import xlwings as _xw

    globals().update(decorate(_xw.func, _xw.arg, _xw.ret))
except ImportError:  # pragma: no cover
    globals().update({name: entry.func for name, entry in REGISTRY.items()})

__all__ = sorted(REGISTRY)
