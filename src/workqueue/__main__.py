"""``python -m workqueue``: the ``workqueue`` command line."""

from __future__ import annotations

import sys

from workqueue.entrypoints.cli import main

if __name__ == "__main__":
    sys.exit(main())
