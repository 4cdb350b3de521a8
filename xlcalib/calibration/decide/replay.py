"""Random streams whose variates are kept, so that a recalculation with the same seed replays them.

Why: a worksheet recalculates CALIB_RANKING after every edited score.  The edit changes the posterior the draws
are shaped by, but not the random variates under them: the same seed gives the same standard normals for a panel
of the same size.  Drawing them was a fifth of a spreadsheet-sized ranking (10,000 draws of 300 objects: 18 ms of
each 80 ms chunk), so a chunk's stream keeps what it drew (:data:`KEPT_BYTES` in all, the latest first; runs of
draws up to :data:`KEPT_RUN_BYTES`) and a later stream of the same seed sequence hands out copies of the same
arrays in the same order.

The numbers are the generator's own: a replayed call returns a copy of what the generator gave for that call; a
call that differs from the recorded one (another shape, another method) makes a fresh generator from the same
seed sequence, repeats the recorded calls to reach the same state, and continues live -- so a replayed stream
gives exactly what ``np.random.default_rng(seed_sequence)`` would, call for call.
"""
from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

__all__ = ["KEPT_BYTES", "KEPT_RUN_BYTES", "ReplayedStream", "chunk_stream", "forget"]

#: The variates kept across calls, at most (the least recently used streams go first).
KEPT_BYTES = 48 * 2**20
#: A run of draws whose variates would take more than this in all is drawn as usual, nothing kept: keeping only some
#: of its chunks would replay none of them before they are let go, and a national panel's draws are made once a run.
KEPT_RUN_BYTES = 24 * 2**20

_kept: OrderedDict = OrderedDict()  # (entropy, spawn key) -> [(call, variates), ...]
_kept_bytes = [0]
_lock = threading.Lock()


def _key(seed: np.random.SeedSequence) -> tuple:
    entropy = seed.entropy
    return (tuple(entropy) if isinstance(entropy, (list, tuple)) else entropy, tuple(seed.spawn_key), seed.pool_size)


def _shape(size) -> tuple:
    return () if size is None else tuple(np.atleast_1d(size).tolist())


class ReplayedStream:
    """A stand-in for ``np.random.default_rng(seed)`` that replays the variates an earlier stream of the same seed
    sequence drew (see the module docstring).  Methods: ``standard_normal`` and ``chisquare`` (what the draws
    use); any other attribute is the live generator's, reached after the recorded calls."""

    def __init__(self, seed: np.random.SeedSequence):
        self._seed, self._key = seed, _key(seed)
        with _lock:
            recorded = _kept.get(self._key)
            if recorded is not None:
                _kept.move_to_end(self._key)
        self._recorded = list(recorded) if recorded is not None else []
        self._used = 0  # recorded calls handed out so far
        self._live: np.random.Generator | None = None

    def standard_normal(self, size=None, dtype=np.float64):
        return self._variates(("standard_normal", _shape(size), np.dtype(dtype).str),
                              lambda g: g.standard_normal(size, dtype=dtype))

    def chisquare(self, df, size=None):
        return self._variates(("chisquare", float(df), _shape(size)), lambda g: g.chisquare(df, size))

    def __getattr__(self, name):
        if name.startswith("_"):  # this object's own state, asked for before it was set (a copy): not the generator's
            raise AttributeError(name)
        return getattr(self._generator(), name)

    def _variates(self, call: tuple, make) -> np.ndarray:
        if self._recorded is None:
            return make(self._live)
        if self._live is None and self._used < len(self._recorded) and self._recorded[self._used][0] == call:
            self._used += 1
            return self._recorded[self._used - 1][1].copy()
        out = make(self._generator())
        self._recorded = self._recorded[:self._used]
        if sum(array.nbytes for _, array in self._recorded) + out.nbytes > KEPT_RUN_BYTES:
            self._recorded = None  # too large to keep: from here on the live generator alone, nothing copied
            _forget(self._key)
            return out
        self._recorded.append((call, out.copy()))
        self._used += 1
        _keep(self._key, self._recorded)
        return out

    def _generator(self) -> np.random.Generator:
        """The live generator, in the state the calls handed out so far left it in."""
        if self._live is None:
            self._live = np.random.default_rng(self._seed)
            for (method, *args), _ in self._recorded[:self._used]:
                if method == "standard_normal":
                    self._live.standard_normal(args[0], dtype=np.dtype(args[1]))
                else:
                    self._live.chisquare(args[0], args[1])
        return self._live


def _forget(key: tuple) -> None:
    with _lock:
        _drop(key)


def _drop(key: tuple) -> None:
    """Let one stream's kept variates go (the lock held)."""
    old = _kept.pop(key, None)
    if old is not None:
        _kept_bytes[0] -= sum(array.nbytes for _, array in old)


def _keep(key: tuple, recorded: list) -> None:
    with _lock:
        _drop(key)
        _kept[key] = list(recorded)
        _kept_bytes[0] += sum(array.nbytes for _, array in recorded)
        while _kept_bytes[0] > KEPT_BYTES and _kept:
            _drop(next(iter(_kept)))  # the least recently used first


def chunk_stream(seed: np.random.SeedSequence, draws: int, n_objects: int):
    """The random stream of one chunk of a run of *draws* joint draws of *n_objects* values in all: a
    :class:`ReplayedStream` when the run's float32 normals of the objects fit :data:`KEPT_RUN_BYTES` (a stream whose
    other variates then overflow it stops keeping them), else the generator itself."""
    if draws * 4 * n_objects > KEPT_RUN_BYTES:
        return np.random.default_rng(seed)
    return ReplayedStream(seed)


def forget() -> None:
    """Let every kept variate go (tests, and a caller that wants the memory back)."""
    with _lock:
        _kept.clear()
        _kept_bytes[0] = 0
