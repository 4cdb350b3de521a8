"""What the command line shows while it works: the current step on one line of stderr (tqdm).

Why: the jobs behind ``xlcalib calibrate`` on a national panel take seconds to minutes, and a silent minute
reads as a hang.  The core and the runners announce their steps (:mod:`xlcalib.progress`); this listener
shows the innermost one -- its words, a bar and a count when its size is known, the seconds so far -- and
refreshes it twice a second from a small thread, so a long fit without steps of its own still shows that it
is alive.  Quiet when stderr is not a terminal (a pipe, a log file, CI) or with ``--quiet``; the line is
cleared when the step ends, so the results printed after it stand alone.
"""
from __future__ import annotations

import os
import sys
import threading

__all__ = ["TerminalProgress"]

#: Seconds between refreshes of the shown step (its elapsed time moves even when nothing advances).
REFRESH_SECONDS = 0.5
_WITH_TOTAL = "{desc}: {percentage:3.0f}% |{bar:24}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}]"
_WITHOUT_TOTAL = "{desc} ... {elapsed}"


def _size(stream) -> tuple[int, int]:
    """(columns, rows) of the terminal; one that reports none (a fresh pseudo-terminal says 0 x 0, on which
    tqdm would draw nothing): 100 x 24."""
    try:
        size = os.get_terminal_size(stream.fileno())
        columns, rows = size.columns, size.lines
    except (OSError, ValueError, AttributeError):
        columns, rows = 0, 0
    return (columns if columns > 0 else 100), (rows if rows > 0 else 24)


class TerminalProgress:
    """A :class:`~xlcalib.progress.Listener` drawing the innermost step with tqdm on *stream*."""

    def __init__(self, stream=None, enabled: bool | None = None):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = (hasattr(self.stream, "isatty") and self.stream.isatty()) if enabled is None else enabled
        self._bars: list = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    # ------------------------------------------------------------------ the Listener interface
    def begin(self, words: str, total: int | None) -> None:
        if not self.enabled:
            return
        from tqdm import tqdm

        with self._lock:
            if self._bars:
                self._bars[-1].clear()  # the inner step takes the line; the outer one comes back after
            columns, rows = _size(self.stream)
            self._bars.append(tqdm(total=total, desc=words, file=self.stream, leave=False, ncols=columns, nrows=rows,
                                   position=0, bar_format=_WITH_TOTAL if total else _WITHOUT_TOTAL,
                                   mininterval=0.1))
        self._start_ticker()

    def advance(self, amount: int) -> None:
        if self.enabled and self._bars:
            with self._lock:
                self._bars[-1].update(amount)

    def end(self) -> None:
        if not self.enabled or not self._bars:
            return
        with self._lock:
            self._bars.pop().close()
            if self._bars:
                self._bars[-1].refresh()
        if not self._bars:
            self._stop_ticker()

    # ------------------------------------------------------------------ the refreshing thread
    def _start_ticker(self) -> None:
        if self._ticker is not None and self._ticker.is_alive():
            return
        self._stop.clear()
        self._ticker = threading.Thread(target=self._tick, name="xlcalib-progress", daemon=True)
        self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(REFRESH_SECONDS):
            with self._lock:
                if self._bars:
                    self._bars[-1].refresh()

    def _stop_ticker(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=1.0)
        self._ticker = None

    def close(self) -> None:
        """End every step still shown (an error or Ctrl-C left them open): the message that follows stands alone."""
        while self._bars:
            self.end()
        self._stop_ticker()
