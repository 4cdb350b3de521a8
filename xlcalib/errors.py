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


class InputProblems(InputError):
    """Several problems of one input, found in one pass and reported together.

    ``problems`` is the full list (:class:`xlcalib.inputs.Problem`, errors and
    warnings); the message is the single error's text when there is one, else
    a count followed by one line per error (adapters that show one line use
    ``problems`` to print them capped, with a count of the rest).
    """

    def __init__(self, problems, where: dict | None = None):
        self.problems = list(problems)
        errors = [p for p in self.problems if getattr(p, "severity", "error") == "error"]
        if len(errors) == 1:
            message = str(errors[0])
        else:
            message = f"{len(errors)} problems in the input:\n" + "\n".join(f"  {p}" for p in errors)
        first = errors[0] if errors else None
        super().__init__(message, where or ({"sheet": first.sheet, "cell": first.cell, "sheet_row": first.row}
                                            if first is not None else None))

    @property
    def errors(self):
        return [p for p in self.problems if p.severity == "error"]
