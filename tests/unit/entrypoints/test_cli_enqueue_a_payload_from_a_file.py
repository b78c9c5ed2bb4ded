"""``workqueue enqueue KIND --payload-file PATH``: a payload too long (or too awkward) to
type, read from a file or from standard input; one that cannot be read is one line."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from test_cli_commands import queued_items
from worker_world import WorkerWorld


def test_a_payload_is_read_from_a_file(world: WorkerWorld, tmp_path: Path) -> None:
    payload = tmp_path / "payload.json"
    payload.write_text('{"retention_days": 9}', encoding="utf-8")

    run = world.cli("enqueue", "work_item_retention", "--payload-file", str(payload))

    assert (run.status, run.out) == (0, "created item 1 (work_item_retention)\n")
    assert queued_items(world) == [("work_item_retention", {"retention_days": 9.0}, None)]


def test_a_dash_reads_the_payload_from_standard_input(
    world: WorkerWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO('{"retention_days": 3}\n'))

    run = world.cli("enqueue", "work_item_retention", "--payload-file", "-")

    assert run.status == 0
    assert queued_items(world) == [("work_item_retention", {"retention_days": 3.0}, None)]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (None, "No such file or directory"),
        (b"\xff\xfe{}", "not UTF-8 text"),
    ],
    ids=["missing", "not UTF-8"],
)
def test_a_file_that_cannot_be_read_is_one_line_exit_two_and_nothing_written(
    world: WorkerWorld, tmp_path: Path, content: bytes | None, reason: str
) -> None:
    payload = tmp_path / "payload.json"
    if content is not None:
        payload.write_bytes(content)

    run = world.cli("enqueue", "token_cleanup", "--payload-file", str(payload))

    assert run.status == 2
    assert run.err == (
        f"workqueue: invalid payload for kind 'token_cleanup': --payload-file"
        f" {str(payload)!r} cannot be read: {reason}\n"
    )
    assert queued_items(world) == []


def test_a_payload_and_a_payload_file_together_are_refused(
    world: WorkerWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = world.cli(
        "enqueue", "token_cleanup", "--payload", "{}", "--payload-file", str(tmp_path / "p")
    )

    assert run.status == 2
    # argparse says so on the process's own standard error.
    assert "argument --payload-file: not allowed with argument --payload" in capsys.readouterr().err
    assert queued_items(world) == []
