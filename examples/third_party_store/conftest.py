from __future__ import annotations

import os
import tempfile

pytest_plugins = ["workqueue.adapters.testing.postgres.plugin"]  # fresh migrated database per test

# Hypothesis keeps its example database and caches there, not in ./.hypothesis.
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", f"{tempfile.gettempdir()}/hypothesis")
