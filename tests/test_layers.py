"""The calibration package shows its layers: imports run downward only, no circles, none hidden in a function.

Floors, from the ground (README, "Package layout"): the panel as read; the graph and its posterior; the models
and the design tools beside them; assessor behaviour read off a fit; decisions drawn from a fit; the result and
its tables; the fit itself; the package's face.  A module may import a module on a lower floor, or one beside it
in its own folder (the folder's own order, checked for circles).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import xlcalib.calibration

#: The package as installed (the repository's tree, or the wheel in Pyodide).
PACKAGE = Path(xlcalib.calibration.__file__).resolve().parent
FLOORS = {"panel": 0, "system": 1, "models": 2, "design": 2, "rasch": 2, "behaviour": 3, "decide": 4, "meanings": 5,
          "tables": 5, "result": 6, "rasch_result": 7, "fit": 8, "__init__": 9}


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    path = PACKAGE.parent.parent / name.replace(".", "/")
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported xlcalib.calibration module, at the top of the file) for every import in *path*; ``from P
    import m`` counts as importing the module P.m when m is one."""
    module = _module(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text())
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            parts = package.split(".")
            base = parts[: len(parts) - (node.level - 1)] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            names = [f"{target}.{a.name}" for a in node.names if _is_module(f"{target}.{a.name}")]
            found += [(name, id(node) in top) for name in (names or [target])
                      if name.startswith("xlcalib.calibration")]
        elif isinstance(node, ast.Import):
            found += [(a.name, id(node) in top) for a in node.names if a.name.startswith("xlcalib.calibration")]
    return found


def _floor(module: str) -> tuple[int, str]:
    """(floor, folder) of a calibration module."""
    rest = module.split(".")[2:] or ["__init__"]
    return FLOORS[rest[0]], rest[0]


MODULES = sorted(PACKAGE.rglob("*.py"))
assert len(MODULES) > 40, PACKAGE  # the package's sources are there to read


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_run_downward_and_at_the_top(path):
    module = _module(path)
    floor, folder = _floor(module)
    for target, at_top in _imports(path):
        if target == module or module.startswith(target + ".") and target.count(".") < 2:
            continue
        assert at_top, f"{module} imports {target} inside a function"
        if target.count(".") < 2:  # the package's face itself
            raise AssertionError(f"{module} imports the package's face {target}")
        target_floor, target_folder = _floor(target)
        assert target_floor < floor or target_folder == folder, f"{module} (floor {floor}) imports {target} " \
                                                                f"(floor {target_floor})"


def test_no_circles():
    graph = {_module(p): {t for t, _ in _imports(p)} for p in MODULES}
    modules = set(graph)
    state: dict[str, int] = {}

    def visit(m, trail):
        state[m] = 1
        for n in graph.get(m, ()):
            if n not in modules or n == m:
                continue
            if state.get(n) == 1:
                raise AssertionError("circle: " + " -> ".join(trail + [m, n]))
            if n not in state:
                visit(n, trail + [m])
        state[m] = 2

    for m in sorted(modules):
        if m not in state:
            visit(m, [])
