"""One BLAS thread for small systems.

Why: OpenBLAS hands even a 30 x 30 eigendecomposition to all its threads, and waking them costs more than
the work -- 25 ms instead of 0.3 ms per call on a busy 2-core machine, so a 900-read panel took a second
where it needs tens of milliseconds (its variance search makes a dozen such calls).  Below
:data:`SINGLE_THREAD_ASSESSORS` assessors the fit, the decision basis, the draws and next reads run with one
BLAS thread; above it the dense A x A factorisations are worth the threads.  threadpoolctl does the limiting
when it is installed (it is a dependency on CPython; Pyodide has no threads and no need of it).
"""
from __future__ import annotations

import contextlib

__all__ = ["SINGLE_THREAD_ASSESSORS", "blas_limit"]

#: Up to this many assessors the reduced systems are small enough that one BLAS thread is fastest.
SINGLE_THREAD_ASSESSORS = 512

_controller = None
_looked = False


def _threadpool_controller():
    """threadpoolctl's controller, made once (inspecting the loaded libraries costs a millisecond; limiting
    through the controller afterwards costs microseconds); None without threadpoolctl."""
    global _controller, _looked
    if not _looked:
        _looked = True
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - Pyodide, or a minimal install
            return None
        _controller = ThreadpoolController()
    return _controller


def blas_limit(n_assessors: int):
    """A context in which BLAS uses one thread when the system has at most :data:`SINGLE_THREAD_ASSESSORS`
    assessors (a no-op above it, or without threadpoolctl)."""
    if n_assessors > SINGLE_THREAD_ASSESSORS:
        return contextlib.nullcontext()
    controller = _threadpool_controller()
    if controller is None:
        return contextlib.nullcontext()
    return controller.limit(limits=1, user_api="blas")
