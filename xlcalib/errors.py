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


class Terminated(KeyboardInterrupt):
    """The process was asked to stop (SIGTERM: a scheduler, ``kill``, a closed terminal): raised where the
    command line was, so the atomic writers' clean-up runs as it does for Ctrl-C and no temporary file is
    left behind."""


def os_error_message(exc: OSError, path=None, action: str = "write") -> str:
    """One line for a file-system error (read-only folder, disk full, a folder where a file is expected ...).

    The one place where operating-system errors become words: the atomic
    writers raise :class:`InputError` with it, and the CLI uses it for any
    ``OSError`` that reaches it, so the user sees what to change, never a
    traceback.
    """
    import errno

    if exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EROFS):
        action = "write"  # only writing fills a disk: whatever the caller was doing, this was a write
    unnamed = "the output or a temporary file" if action == "write" else "the file"
    where = str(path if path is not None else (exc.filename or unnamed))
    if len(where) > 120:
        where = where[:60] + "..." + where[-57:]
    reasons = {
        errno.EACCES: "permission denied (the folder is read-only, or the file is open in another program)",
        errno.EPERM: "permission denied (the folder is read-only, or the file is open in another program)",
        errno.EROFS: "the file system is read-only",
        errno.ENOSPC: "the disk is full",
        errno.EFBIG: "the file is larger than the file system or the process's file-size limit allows",
        errno.EDQUOT: "the disk quota is exhausted",
        errno.EISDIR: "it is a folder, not a file",
        errno.ENOTDIR: "a part of the path is a file, not a folder",
        errno.ENAMETOOLONG: "the file name is too long",
        errno.ENOENT: "no such file or folder",
        errno.EEXIST: "a file of that name already exists where a folder is needed",
        errno.EXDEV: "the temporary file and the target are on different file systems",
    }
    reason = reasons.get(exc.errno) or exc.strerror or " ".join(str(exc).split()) or type(exc).__name__
    return f"cannot {action} {where}: {reason}"
