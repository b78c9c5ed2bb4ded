"""What the otel extra costs when no tracer provider is configured (issue 31, ADR 0038).

``python bench/tracing_overhead.py --with PYTHON --without PYTHON [--rounds N]``

Two Python environments with workqueue installed, one with the ``otel`` extra
(opentelemetry-api and the SDK) and one without it, take turns: each round runs
``python -m bench.run --only w1,w3`` once in each, alternating which goes first, on
the same PostgreSQL. Neither configures a tracer provider. The figures of every
round are pooled per environment; the table gives their medians and the ratio
with/without, which the issue wants at 0.97 or more for W1 and W3.

Make the environment without the extra from the project's own, for instance::

    cp -a .venv /tmp/venv-nootel
    /tmp/venv-nootel/bin/python -m pip uninstall -y \\
        opentelemetry-api opentelemetry-sdk opentelemetry-semantic-conventions
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
FIGURES = ("w1", "w3_c4", "w3_c1")
DEFAULT_DATABASE = "postgresql://postgres@127.0.0.1:5432/postgres"


def has_otel(python: str) -> bool:
    probe = [python, "-c", "import opentelemetry.trace"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0


def bench_once(python: str, database: str, runs: int) -> dict[str, list[float]]:
    """One ``bench.run --only w1,w3`` in ``python``'s environment: each figure's values."""
    before = set(RESULTS.glob("*.json"))
    command = [python, "-m", "bench.run", "--only", "w1,w3", "--runs", str(runs)]
    subprocess.run(
        [*command, "--database-url", database],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
        capture_output=True,
    )
    (written,) = set(RESULTS.glob("*.json")) - before
    workloads = json.loads(written.read_text(encoding="utf-8"))["workloads"]
    values: dict[str, list[float]] = {}
    for workload in workloads.values():
        for key, figure in workload["figures"].items():
            if key in FIGURES:
                values[key] = list(figure["values"])
    return values


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--with", dest="with_otel", required=True, help="python with the extra")
    parser.add_argument("--without", required=True, help="python without the extra")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3, help="runs of each workload per turn")
    parser.add_argument("--database-url", default=DEFAULT_DATABASE)
    args = parser.parse_args(argv)
    if not has_otel(args.with_otel) or has_otel(args.without):
        print("--with must have opentelemetry installed and --without must not", file=sys.stderr)
        return 2
    pooled: dict[str, dict[str, list[float]]] = {"with": {}, "without": {}}
    turns = [("with", args.with_otel), ("without", args.without)]
    for round_number in range(args.rounds):
        for name, python in turns if round_number % 2 == 0 else turns[::-1]:
            for key, values in bench_once(python, args.database_url, args.runs).items():
                pooled[name].setdefault(key, []).extend(values)
            print(f"round {round_number + 1}: {name} the extra done", file=sys.stderr)
    print("| figure | with the extra, no provider | without the extra | ratio |")
    print("|---|---:|---:|---:|")
    for key in FIGURES:
        with_median = statistics.median(pooled["with"][key])
        without_median = statistics.median(pooled["without"][key])
        print(
            f"| {key} | {with_median:,.0f} jobs/s | {without_median:,.0f} jobs/s"
            f" | {with_median / without_median:.3f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
