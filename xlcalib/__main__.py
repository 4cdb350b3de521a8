"""``xlcalib`` (the console script) and ``python -m xlcalib``: the command line, started so that a Ctrl-C
while it is still loading (numpy, scipy, pandas, the workbook libraries: about a second) gets one line and
exit code 130, as a Ctrl-C during a command does, not Python's traceback."""
from __future__ import annotations

import sys


def main() -> int:
    try:
        from .cli import main as run_command
    except KeyboardInterrupt:
        print("xlcalib: interrupted (Ctrl-C) while starting; nothing was read or written", file=sys.stderr)
        return 130
    return run_command()


if __name__ == "__main__":
    raise SystemExit(main())
