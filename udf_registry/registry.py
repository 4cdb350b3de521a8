"""The one catalogue of spreadsheet functions.

Each function is declared once with :func:`udf`: its Excel name, category,
one-line help, per-argument help, the core function it calls, an example and
the formula it implements.  From this single declaration come

* the plain Python callable (``from udf_registry import CALIB_VALUES``),
  taking values exactly as Excel hands them over and returning a scalar or a
  list of rows — never raising: bad input becomes a short text in the cell;
* the xlwings decorations (:func:`decorate`), applied with xlwings' own
  ``func/arg/ret`` (real ones on Windows/macOS, or in the headless tests);
* ``docs/FUNCTIONS.md`` (:mod:`udf_registry.docs`).
"""
from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd

from xlcalib.cells import cell_value, column_cells, parse_flag
from xlcalib.errors import InputError

__all__ = ["Arg", "CATEGORIES", "Cells", "Entry", "REGISTRY", "category", "udf", "decorate", "to_cells", "table_cells", "error_text", "ERROR_PREFIX"]

ERROR_PREFIX = "xlcalib: "
#: Cell text is kept short enough to read in a cell and in the VBA wrapper.
MAX_ERROR_CHARS = 250


@dataclass(frozen=True)
class Arg:
    """One argument: ``range`` arguments are read as 2-D blocks of cells; others are single values."""

    name: str
    help: str
    range: bool = True


@dataclass
class Entry:
    name: str
    category: str
    help: str
    args: tuple[Arg, ...]
    core: Callable
    returns: str  # "table" or "scalar"
    example: str
    formula: str
    func: Callable = field(repr=False, default=None)
    #: header row of a spilled table (checked by the tests against what the function returns)
    columns: tuple[str, ...] = ()
    #: free text for columns that depend on the input (e.g. one per class)
    columns_note: str = ""

    @property
    def core_name(self) -> str:
        return f"{self.core.__module__}.{self.core.__qualname__}"


REGISTRY: dict[str, Entry] = {}
#: category -> the paper (or documentation) its formulas come from, as docs/FUNCTIONS.md cites it
CATEGORIES: dict[str, str] = {}


def category(name: str, *, reference: str) -> str:
    """Declare a function category (shown in Excel's Function Wizard) and the reference its formulas follow."""
    if not name.startswith("xlcalib "):
        raise TypeError(f"category {name!r} must start with 'xlcalib '")
    CATEGORIES[name] = reference
    return name


def error_text(message: str) -> str:
    text = ERROR_PREFIX + " ".join(str(message).split())
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 3] + "..."


class Cells(list):
    """Rows already in cell form (header applied by the implementation, e.g. memoised per input).

    :func:`to_cells` hands out fresh row lists, so a caller that edits the
    spilled rows cannot corrupt the memo.
    """


def _undefined(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(np.isnan(value))
    except TypeError:
        return False


def to_cells(value: Any, header: bool) -> Any:
    """DataFrame -> list of rows (with the column names first when ``header``); scalars unchanged."""
    if isinstance(value, Cells):
        return [list(row) for row in value]
    if isinstance(value, pd.DataFrame):
        return table_cells({c: value.iloc[:, j] for j, c in enumerate(value.columns)}, header)
    return cell_value(value)


def table_cells(columns: dict, header: bool) -> list:
    """Named columns (Series, Index or arrays of equal length) -> list of rows, header first when asked."""
    cells = [column_cells(column) for column in columns.values()]
    rows = [list(row) for row in zip(*cells)] if cells else []
    if header:
        rows.insert(0, [str(c) for c in columns])
    return rows if rows else [[None]]


def udf(name: str, *, category: str, help: str, args: tuple[Arg, ...] | list[Arg], core: Callable,
        returns: str, example: str, formula: str, columns: tuple[str, ...] = (), columns_note: str = ""):
    """Declare a spreadsheet function; the decorated implementation returns a DataFrame or a scalar."""
    args = tuple(args)
    if returns not in ("table", "scalar"):
        raise TypeError(f"{name}: returns must be 'table' or 'scalar', not {returns!r}")
    if category not in CATEGORIES:
        raise TypeError(f"{name}: undeclared category {category!r} (use registry.category)")
    if (returns == "table") != bool(columns):
        raise TypeError(f"{name}: a table declares its header columns (and a scalar none)")

    def decorate_impl(impl: Callable) -> Callable:
        params = list(inspect.signature(impl).parameters)
        declared = [a.name for a in args]
        if params != declared:
            raise TypeError(f"{name}: parameters {params} differ from the declared arguments {declared}")
        if name in REGISTRY:
            raise TypeError(f"{name} is declared twice")
        signature = inspect.signature(impl)

        @functools.wraps(impl)
        def wrapper(*call_args, **call_kwargs):
            try:
                bound = signature.bind(*call_args, **call_kwargs)
            except TypeError as exc:  # wrong number of arguments typed into the cell
                return error_text(f"{name}: {exc}")
            try:
                bound.apply_defaults()
                header = parse_flag(bound.arguments["header"], "header", True) if "header" in bound.arguments else True
                value = impl(*bound.args, **bound.kwargs)
                if returns == "scalar" and _undefined(value):
                    # a blank cell would look like a result; say why there is none
                    return error_text(f"{name} is undefined for these data (not a number, e.g. a variance of 0)")
                return to_cells(value, header)
            except InputError as exc:
                return error_text(exc.message)
            except Exception as exc:  # a bug: still never a traceback dialog in Excel
                return error_text(f"internal error in {name} ({type(exc).__name__}: {exc})")

        wrapper.__name__ = name
        wrapper.__qualname__ = name
        wrapper.__doc__ = help
        REGISTRY[name] = Entry(name, category, help, args, core, returns, example, formula, wrapper,
                               tuple(columns), columns_note)
        return wrapper

    return decorate_impl


def decorate(func_deco, arg_deco, ret_deco, namespace: dict | None = None) -> dict[str, Callable]:
    """Apply xlwings' ``func``/``arg``/``ret`` decorators to every catalogue entry.

    Range arguments are read as 2-D lists (``ndim=2``) so a single cell, a row
    and a column all arrive in one shape; results are returned raw (lists of
    rows spill as dynamic arrays).  Argument help goes to the Function Wizard
    via ``doc=``.  Returns name -> decorated function (and fills ``namespace``).
    """
    out = {}
    for entry in REGISTRY.values():
        f = _copy_function(entry.func)
        for arg in entry.args:
            options = {"ndim": 2, "err_to_str": True} if arg.range else {"err_to_str": True}
            f = arg_deco(arg.name, doc=arg.help, **options)(f)
        f = ret_deco()(f)
        f = func_deco(category=entry.category)(f)
        out[entry.name] = f
    if namespace is not None:
        namespace.update(out)
    return out


def _copy_function(f: Callable) -> Callable:
    """A fresh function object sharing code with *f* (decorators annotate it, not the catalogue's)."""
    @functools.wraps(f)
    def copy(*args, **kwargs):
        return f(*args, **kwargs)

    copy.__name__ = f.__name__
    return copy
