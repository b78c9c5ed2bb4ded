"""The third-party example stays as small as its README says, and the main README shows it whole."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "third_party_store"
FIXTURE_FILES = ("conftest.py", "test_metered_store.py")
MOST_FIXTURE_LINES = 40


def lines_of(name: str) -> int:
    return len((EXAMPLE / name).read_text().splitlines())


def test_the_example_passes_the_kit_in_at_most_forty_lines_of_fixture_code() -> None:
    assert sum(lines_of(name) for name in FIXTURE_FILES) <= MOST_FIXTURE_LINES


def test_the_example_readme_counts_each_fixture_file_and_the_total() -> None:
    readme = (EXAMPLE / "README.md").read_text()
    for name in FIXTURE_FILES:
        assert re.search(rf"\| `{re.escape(name)}` \| {lines_of(name)} \|", readme), name
    total = sum(lines_of(name) for name in FIXTURE_FILES)
    assert f"**{total} lines of fixture code**" in readme
    assert f"| **fixture code** | **{total}** |" in readme


def test_the_main_readme_shows_the_example_whole() -> None:
    readme = (ROOT / "README.md").read_text()
    for name in (*FIXTURE_FILES, "pyproject.toml", "metered_store.py"):
        assert (EXAMPLE / name).read_text() in readme, f"README.md does not show {name} whole"
