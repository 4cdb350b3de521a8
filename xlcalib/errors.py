"""The one exception type for bad user input.

Every core function raises :class:`InputError` (a ``ValueError``) when the data
it was given cannot be used.  The message says *what* is wrong and *where*
(row, column, assessor, item ...), in words a panel secretary understands.
Adapters (CLI, UDFs, macros) catch exactly this type and show the message;
any other exception is a bug and is reported as an internal error.
"""
from __future__ import annotations


class InputError(ValueError):
    """Bad input, described for the person who typed it.

    Parameters
    ----------
    message:
        One line: what is wrong and where, e.g.
        ``"score in row 7 is text ('abc'); expected a number"``.
    where:
        Optional structured location (``{"row": 7, "column": "Score"}``)
        for adapters that want to point at a cell.
    """

    def __init__(self, message: str, where: dict | None = None):
        super().__init__(message)
        self.message = message
        self.where = dict(where or {})

    def __str__(self) -> str:  # keep the message alone; no class name noise
        return self.message
