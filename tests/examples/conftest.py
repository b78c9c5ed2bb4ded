"""The example applications in examples/, importable by their tests."""

from __future__ import annotations

import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

for application in ("django_shop", "starlette_signups"):
    path = str(EXAMPLES / application)
    if path not in sys.path:
        sys.path.insert(0, path)
