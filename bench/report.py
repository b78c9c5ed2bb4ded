"""The run's report: a markdown table of medians with min-max, and the JSON behind it."""

from __future__ import annotations

import json
import os
import platform
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.figures import Figure, WorkloadReport
from bench.server import BenchServer
from bench.settings import BenchSettings

__all__ = ["Machine", "markdown", "write_json"]


@dataclass(frozen=True, slots=True)
class Machine:
    """Where the figures were measured."""

    cpus: int
    cpu_model: str
    memory_gb: float
    load_average: tuple[float, float, float]
    python: str

    @classmethod
    def here(cls) -> Machine:
        return cls(
            cpus=os.cpu_count() or 0,
            cpu_model=_cpu_model(),
            memory_gb=_memory_gb(),
            load_average=os.getloadavg(),
            python=platform.python_version(),
        )

    def describe(self) -> str:
        load = ", ".join(f"{value:.2f}" for value in self.load_average)
        return (
            f"{self.cpus} cores ({self.cpu_model}), {self.memory_gb:.0f} GB RAM, "
            f"Python {self.python}, load average at start {load}"
        )


def markdown(
    reports: list[WorkloadReport],
    *,
    started: datetime,
    seconds: float,
    machine: Machine,
    server: BenchServer,
    settings: BenchSettings,
) -> str:
    """The table the benchmark prints: one row per figure, targets judged on the median."""
    lines = [
        f"workqueue benchmark, {started:%Y-%m-%d %H:%M} UTC, {seconds:.0f} s in all",
        "",
        f"- machine: {machine.describe()}",
        f"- PostgreSQL: {server.settings.version}, {server.source}; fsync "
        f"{server.settings.fsync}, synchronous_commit {server.settings.synchronous_commit}, "
        f"shared_buffers {server.settings.shared_buffers}",
        f"- log level: {settings.log_level} (the worker's text format, to {settings.log_path}); "
        f"event loop: {settings.event_loop}",
        f"- {settings.runs} run(s) of each workload; median, then min-max",
        "",
        "| figure | median | min-max | unit | target | met |",
        "|---|---:|---:|---|---|---|",
    ]
    for report in reports:
        for figure in report.figures:
            if figure.values:
                lines.append(_row(figure))
    return "\n".join(lines)


def write_json(
    path: Path,
    reports: list[WorkloadReport],
    *,
    started: datetime,
    seconds: float,
    machine: Machine,
    server: BenchServer,
    settings: BenchSettings,
) -> None:
    """Every figure and every run's details, for comparing runs later."""
    document: dict[str, Any] = {
        "started": started.isoformat(),
        "seconds": seconds,
        "machine": _fields(machine),
        "server": {"source": server.source, **_fields(server.settings)},
        "settings": {key: str(value) for key, value in _fields(settings).items()},
        "workloads": {
            report.name: {
                "figures": {figure.key: figure.as_json() for figure in report.figures},
                "runs": report.runs,
            }
            for report in reports
        },
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, default=str) + "\n", encoding="utf-8")


def _row(figure: Figure) -> str:
    spread = figure.spread
    target = "" if figure.target is None else figure.target.describe(figure.unit)
    met = {None: "", True: "yes", False: "**no**"}[figure.met]
    return (
        f"| {figure.label} | {_value(spread.median)} | "
        f"{_value(spread.low)}-{_value(spread.high)} | {figure.unit} | {target} | {met} |"
    )


def _value(value: float) -> str:
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _fields(instance: object) -> dict[str, Any]:
    return {name: getattr(instance, name) for name in getattr(instance, "__slots__", ())}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _memory_gb() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return 0.0
