"""Progress of long steps: the core says what it is doing, an adapter shows it.

Why here, on the ground floor: a secretary who starts a national panel and sees nothing for twenty seconds
thinks it hung, but the numerical core must not know about terminals or Excel.  So the core and the runners
only announce steps (``with step("fitting the random-assessors model"):``) and their progress
(``advance(chunk)``); whoever listens -- the command line's bar on stderr (:mod:`xlcalib.terminal`), a
macro's status bar in Excel -- installs a :class:`Listener` with :func:`listening`.  With nobody listening
(the API, the spreadsheet functions, the tests) a step costs one context-variable lookup.
"""
from __future__ import annotations

import contextlib
import contextvars
from typing import Protocol

__all__ = ["Listener", "listening", "step", "advance"]


class Listener(Protocol):
    """What an adapter does with the steps: one step at a time, possibly nested (the innermost is shown)."""

    def begin(self, words: str, total: int | None) -> None: ...

    def advance(self, amount: int) -> None: ...

    def end(self) -> None: ...


_LISTENER: contextvars.ContextVar[Listener | None] = contextvars.ContextVar("xlcalib_progress", default=None)


@contextlib.contextmanager
def listening(listener: Listener):
    """Show the steps of whatever runs inside to *listener* (the previous listener comes back after)."""
    token = _LISTENER.set(listener)
    try:
        yield listener
    finally:
        _LISTENER.reset(token)


@contextlib.contextmanager
def step(words: str, total: int | None = None):
    """Announce a step (its words in the running form: "fitting ...", "writing Ranking"), with the number of
    units it will advance by when known."""
    listener = _LISTENER.get()
    if listener is None:
        yield
        return
    listener.begin(words, total)
    try:
        yield
    finally:
        listener.end()


def advance(amount: int = 1) -> None:
    """The current step moved on by *amount* units (draws, sheets, reads ...)."""
    listener = _LISTENER.get()
    if listener is not None:
        listener.advance(amount)
