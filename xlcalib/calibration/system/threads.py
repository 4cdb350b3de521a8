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

__all__ = ["SINGLE_THREAD_ASSESSORS", "blas_limit", "one_blas_thread"]

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
    return one_blas_thread()


def one_blas_thread():
    """A context in which BLAS uses one thread whatever the system's size (a no-op without threadpoolctl).

    Why: while the Monte Carlo draws run numpy on a worker thread per core, OpenBLAS's own threads, woken by
    the assessor-level solves between the chunks, spin waiting for more work and take those cores: the draws of
    a 3,000-assessor panel ran 7.9 s with them and 6.4 s with one BLAS thread.  A one-thread solve may round
    its last bits otherwise than a threaded one (as every BLAS result may with the machine's thread count), so
    a draw's float32 values can tie otherwise: on a 20,000-object ranking, expected ranks moved by up to 1e-3,
    P(above) by 3e-9 and one rank interval's end by a place; no decision moved.
    """
    controller = _threadpool_controller()
    if controller is None:
        return contextlib.nullcontext()
    return controller.limit(limits=1, user_api="blas")
