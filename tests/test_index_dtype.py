"""Index arrays are numpy's platform index type (``np.intp``), so everything runs on 32-bit numpy.

In xlwings Lite (Pyodide, wasm32) numpy's index type is int32, and ``np.bincount`` /
``np.repeat`` refuse int64 input ("Cannot cast array data from dtype('int64') to
dtype('int32') according to the rule 'safe'").  On a 64-bit CPython int64 *is* intp, so
such code passes every ordinary test unnoticed.  Here each xlcalib and udf_registry
module is handed a numpy that behaves like the 32-bit one where it matters:

* its ``np.int64`` is ``np.longlong`` — the same width, but a dtype distinct from intp
  (numpy's type number 9 instead of 7 on Linux), so arrays the code explicitly makes
  int64 stay recognisable;
* its ``bincount``, ``repeat``, ``take``, ``put`` and ``choose`` refuse an index array that is
  neither intp nor safely castable to int32 — the rule numpy 2.0.2 applies in Pyodide 0.27.7
  (checked there; fancy indexing, ``take_along_axis`` and ``ufunc.at`` accept int64, but
  ``ufunc.reduceat`` does not: xlcalib does not use it).

Every spreadsheet function (which reaches every core family: calibration, design,
reliability, ordinal, scoring, ground truth) then runs on the sample inputs of the
UDF tests and must give exactly the cells it gives without the emulation.  The real
thing runs in ``make test-lite`` (Pyodide under Node); this test keeps the rule in the
ordinary suite.
"""
from __future__ import annotations

import sys
import types

import numpy as np
import pytest

import udf_registry  # noqa: F401 - loads every catalogue module
from udf_registry import calibration as udf_calibration
from udf_registry.registry import REGISTRY

INTP = np.dtype(np.intp).num


def _check_index(array, what: str):
    a = np.asarray(array)
    if a.dtype.kind in "iub" and a.dtype.num != INTP and not np.can_cast(a.dtype, np.int32, "safe"):
        raise TypeError(f"{what}: Cannot cast array data from dtype('{a.dtype}') to dtype('int32') according to "
                        "the rule 'safe' (32-bit numpy, as in Pyodide: use np.intp for index arrays)")
    return a


def _bincount(x, weights=None, minlength=0):
    return np.bincount(_check_index(x, "np.bincount"), weights=weights, minlength=minlength)


def _repeat(a, repeats, axis=None):
    return np.repeat(a, _check_index(repeats, "np.repeat repeats"), axis=axis)


def _take(a, indices, axis=None, out=None, mode="raise"):
    return np.take(a, _check_index(indices, "np.take indices"), axis=axis, out=out, mode=mode)


def _put(a, ind, v, mode="raise"):
    return np.put(a, _check_index(ind, "np.put indices"), v, mode=mode)


def _choose(a, choices, out=None, mode="raise"):
    return np.choose(_check_index(a, "np.choose"), choices, out=out, mode=mode)


class _Numpy32(types.ModuleType):
    """numpy as modules see it on a 32-bit platform (for the index-type rules only)."""

    int64 = np.longlong
    bincount = staticmethod(_bincount)
    repeat = staticmethod(_repeat)
    take = staticmethod(_take)
    put = staticmethod(_put)
    choose = staticmethod(_choose)

    def __getattr__(self, name):
        return getattr(np, name)


NUMPY32 = _Numpy32("numpy")


def _package_modules():
    return [m for name, m in sorted(sys.modules.items())
            if m is not None and name.split(".")[0] in ("xlcalib", "udf_registry") and getattr(m, "np", None) is np]


@pytest.fixture
def numpy32(monkeypatch):
    for module in _package_modules():
        monkeypatch.setattr(module, "np", NUMPY32)
    udf_calibration._cache.clear()  # a cached solve would skip the core
    yield NUMPY32
    udf_calibration._cache.clear()


def test_the_emulation_refuses_what_32_bit_numpy_refuses(numpy32):
    """A test that cannot fail is a defect: the old int64 code paths are caught."""
    with pytest.raises(TypeError, match="rule 'safe'"):
        numpy32.bincount(np.arange(4).astype(numpy32.int64))
    with pytest.raises(TypeError, match="rule 'safe'"):
        numpy32.repeat(np.arange(3), np.ones(3).astype(numpy32.int64))
    with pytest.raises(TypeError, match="rule 'safe'"):
        numpy32.bincount(np.arange(4, dtype=np.uint32))
    with pytest.raises(TypeError, match="rule 'safe'"):
        numpy32.take(np.arange(3), np.arange(3).astype(numpy32.int64))
    # what 32-bit numpy accepts passes: intp (numpy's own index results), int32, small ints, bool
    for dtype in (np.intp, np.int32, np.int16, np.uint16, np.int8, np.bool_):
        assert numpy32.bincount(np.ones(3, dtype=dtype)).sum() == 3
    assert numpy32.bincount(np.argsort([3, 1, 2])).tolist() == [1, 1, 1]
    patched = [name for name, m in sys.modules.items() if getattr(m, "np", None) is numpy32]
    assert len(patched) >= 10 and "xlcalib.ordinal" in patched and "xlcalib.calibration.fit" in patched


def _sample_calls():
    from .test_udf import CASES
    return CASES


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_function_runs_with_32_bit_index_rules(name, monkeypatch):
    args = _sample_calls()[name][0]
    udf_calibration._cache.clear()
    expected = REGISTRY[name].func(*args)
    assert not (isinstance(expected, str) and "internal error" in expected), expected
    for module in _package_modules():
        monkeypatch.setattr(module, "np", NUMPY32)
    udf_calibration._cache.clear()
    got = REGISTRY[name].func(*args)
    udf_calibration._cache.clear()
    assert got == expected


def test_core_paths_not_reached_by_the_sample_calls(numpy32):
    """Branches the spreadsheet samples do not take: numeric and labelled ordinal paths, top-k sets,
    Plackett-Luce, per-component calibration and the design check."""
    import pandas as pd

    import xlcalib
    from xlcalib import ground_truth as gt

    rng = np.random.default_rng(3)
    a = rng.integers(1, 5, 60)
    b = np.clip(a + rng.integers(-1, 2, 60), 1, 4)
    for r1, r2 in ((a, b), (a.astype(float), b.astype(float)), ([f"c{v}" for v in a], [f"c{v}" for v in b])):
        assert len(xlcalib.svensson(r1, r2).to_frame()) > 0
        assert len(xlcalib.mean_rank_table(r1, r2)) > 0
        assert len(xlcalib.roc_points(r1, r2)) > 0
    assert len(xlcalib.svensson(a, b, categories=[1, 2, 3, 4]).to_frame()) > 0
    xlcalib.evaluation_metrics(a.astype(float), b.astype(float))

    cases = [[[0], [1]], [[1, 2]], [[2], [0, 1]]]
    plaus = xlcalib.irn([cases, cases[:2]], 3)
    draws = gt.sample_dirichlet(plaus * 3, 200, 0)
    for top in (1, 2):
        gt.certainty_from_samples(draws, top=top)
    gt.ua_topk_accuracy(draws, np.array([[0, 1, 2], [1, 0, 2]]), k=2)
    gt.ua_set_accuracy(draws, [{0}, {1, 2}])
    gt.pl_log_likelihood([1.0, 2.0, 3.0], [2, 1, 0])
    gt.pl_gibbs([[[0], [1, 2]], [[2, 1]]], 3, samples=20, burn_in=5, chains=2, seed=0)

    ev = pd.DataFrame({"assessor": list("AABBCCDD"), "object": list("xyxyzwzw"),
                       "score": [5.0, 7.0, 6.0, 8.0, 3.0, 4.0, 2.0, 5.0], "sd": 1.0})
    r = xlcalib.calibrate(ev, per_component=True)
    assert len(r.values) == 4
    xlcalib.design_check(ev.assessor, ev.object, k=2)
