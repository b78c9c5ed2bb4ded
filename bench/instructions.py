"""Instructions a PostgreSQL backend spends on one claim statement, counted, not timed.

``python -m bench.instructions`` makes a scratch cluster (``initdb``), migrates it
with this tree's migrations, applies any ``--ddl`` files, and then runs the
store's ``claim`` statement in a single-user backend (``postgres --single``)
under ``valgrind --tool=callgrind``: prepared (its generic plan after five
calls), each call completing the item the last one claimed and claiming the next,
each in its own transaction. It runs that twice, with ``--low`` and ``--high``
calls, and prints the instructions of one call: the difference over the
difference in calls. Load on the machine does not change the count (the same
run repeats within 0.1 %), which timings on a shared two-core machine cannot give
(bench/README.md, "Where a claim statement's instructions go").

The count includes what every call pays in a single-user backend: parse of the
EXECUTE, the commit (fsync off) and printing the claimed row; compare variants
with each other, not with a timed figure.

Needs valgrind and PostgreSQL's server programs (``initdb``, ``pg_ctl``,
``postgres``: ``--bindir``, else ``pg_config --bindir``, else the newest under
``/usr/lib/postgresql``). PostgreSQL refuses to run as root: as root, the
cluster is made and run as the ``postgres`` user (``runuser``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import asyncpg

from bench.web import free_port
from workqueue.adapters.postgres import migrate
from workqueue.adapters.postgres.sql import load_statements

_KIND = "bench_noop"
_NOW = "2026-12-07 12:00:00+00"
_LEASE_EXPIRES = "2026-12-07 12:01:00+00"
_WARM_CALLS = 20
"""Calls made before counting starts in both runs: past the five custom plans."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.instructions", description=__doc__)
    parser.add_argument("--low", type=int, default=100, help="calls in the first run")
    parser.add_argument("--high", type=int, default=400, help="calls in the second run")
    parser.add_argument(
        "--ddl",
        type=Path,
        action="append",
        default=[],
        help="SQL applied after the migrations (a schema to try); may be repeated",
    )
    parser.add_argument(
        "--statement",
        type=Path,
        help="a claim statement to count instead of the store's (same parameters)",
    )
    parser.add_argument("--bindir", type=Path, help="PostgreSQL's server programs")
    args = parser.parse_args(argv)
    if args.high <= args.low:
        parser.error("--high must be greater than --low")
    if shutil.which("valgrind") is None:
        print("bench.instructions: valgrind is not installed", file=sys.stderr)
        return 2
    bindir = args.bindir or _bindir()
    statement = (
        args.statement.read_text(encoding="utf-8")
        if args.statement
        else load_statements("store.sql")["claim"]
    )
    with tempfile.TemporaryDirectory(prefix="workqueue-instructions-") as scratch:
        root = Path(scratch)
        _make_cluster(bindir, root, [path.read_text(encoding="utf-8") for path in args.ddl])
        counts = [_count(bindir, root, statement, calls) for calls in (args.low, args.high)]
    per_call = (counts[1] - counts[0]) / (args.high - args.low)
    print(
        f"claim statement: {per_call:,.0f} instructions a call"
        f" ({counts[0]:,} at {args.low} calls, {counts[1]:,} at {args.high})"
    )
    return 0


def _bindir() -> Path:
    pg_config = shutil.which("pg_config")
    if pg_config is not None:
        found = Path(
            subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, check=True
            ).stdout.strip()
        )
        if (found / "initdb").exists():
            return found
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not versions:
        raise SystemExit("bench.instructions: no PostgreSQL server programs; pass --bindir")
    return versions[-1].parent


def _as_owner(command: list[str]) -> list[str]:
    """``command`` run as the cluster's owner: ``postgres`` when we are root."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def _make_cluster(bindir: Path, root: Path, ddl: list[str]) -> None:
    if os.geteuid() == 0:
        shutil.chown(root, user="postgres")
    data = root / "data"
    subprocess.run(
        _as_owner([str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"]),
        check=True,
        capture_output=True,
    )
    port = free_port()
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
    ctl = [str(bindir / "pg_ctl"), "-D", str(data), "-w", "-l", str(root / "server.log")]
    subprocess.run(_as_owner([*ctl, "-o", options, "start"]), check=True, capture_output=True)
    try:
        asyncio.run(_migrate(f"postgresql://postgres@127.0.0.1:{port}/postgres", ddl))
    finally:
        subprocess.run(_as_owner([*ctl, "-m", "fast", "stop"]), check=True, capture_output=True)


async def _migrate(url: str, ddl: list[str]) -> None:
    await migrate(url)
    connection = await asyncpg.connect(url)
    try:
        for sql in ddl:
            await connection.execute(sql)
    finally:
        await connection.close()


def _script(statement: str, calls: int) -> str:
    """Single-user mode's input (``-j``: a statement ends at a semicolon and an empty line)."""
    body = "\n".join(line for line in statement.splitlines() if not line.lstrip().startswith("--"))
    lines = [
        "TRUNCATE work_items RESTART IDENTITY",
        "INSERT INTO work_items (kind, payload, status, attempt, stalls, enqueued_at)"
        f" SELECT '{_KIND}', '{{}}', 'queued', 0, 0, now()"
        f" FROM generate_series(1, {calls + _WARM_CALLS + 100})",
        "VACUUM ANALYZE work_items",
        "PREPARE claim(text[], text, timestamptz, timestamptz, bigint, integer, jsonb) AS "
        + body.strip().rstrip(";"),
    ]
    for n in range(1, calls + _WARM_CALLS + 1):
        ended = "NULL, NULL" if n == 1 else f"{n - 1}, 1"
        lines.append(
            f"EXECUTE claim('{{{_KIND}}}', 'bench', '{_NOW}', '{_LEASE_EXPIRES}', {ended}, NULL)"
        )
    return "".join(f"{line};\n\n" for line in lines)


def _count(bindir: Path, root: Path, statement: str, calls: int) -> int:
    """Instructions of a single-user backend running ``calls`` claims (and the set-up)."""
    out = root / f"callgrind.{calls}"
    script = root / f"claims.{calls}.sql"
    script.write_text(_script(statement, calls), encoding="utf-8")
    script.chmod(0o644)
    if os.geteuid() == 0:
        shutil.chown(root, user="postgres")
    command = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={out}",
        str(bindir / "postgres"),
        "--single",
        "-D",
        str(root / "data"),
        "-j",
        "-c",
        "fsync=off",
        "postgres",
    ]
    with script.open("rb") as stdin:
        run = subprocess.run(_as_owner(command), stdin=stdin, capture_output=True, check=False)
    if run.returncode != 0 or b"ERROR:" in run.stdout + run.stderr:
        raise SystemExit(
            f"bench.instructions: the backend failed:\n{(run.stdout + run.stderr).decode()[-2000:]}"
        )
    totals = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.MULTILINE)
    if totals is None:
        raise SystemExit(f"bench.instructions: no totals in {out}")
    return int(totals.group(1))


if __name__ == "__main__":
    raise SystemExit(main())
