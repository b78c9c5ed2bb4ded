"""``python -m workqueue``: the ``workqueue`` command line, as the console script runs it
(the stop signals heard before the command line is imported)."""

from __future__ import annotations

import sys

from workqueue.entrypoints.console import main

if __name__ == "__main__":
    sys.exit(main())
