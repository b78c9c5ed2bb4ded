"""WORKQUEUE_METRICS_PORT: off by default; set, a worker serves its counters and /healthz."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from datetime import timedelta

import httpx
import pytest

from workqueue.adapters.memory import InMemoryState, InMemoryWorkQueue, InMemoryWorkStore
from workqueue.adapters.prometheus import WorkerMetrics
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract import AlphaJob
from workqueue.domain import WorkStatus
from workqueue.entrypoints.web.health import Health
from workqueue.entrypoints.worker.container import build_container, provide
from workqueue.entrypoints.worker.counting import counted_store, worker_metrics
from workqueue.entrypoints.worker.metrics import metrics_app
from workqueue.entrypoints.worker.settings import SettingsError, load_settings

LEASE = timedelta(seconds=60)


class TestTheSetting:
    def test_no_port_is_served_by_default_and_the_address_stays_on_this_machine(self) -> None:
        settings = load_settings()
        assert settings.metrics_port is None
        assert settings.metrics_host == "127.0.0.1"

    def test_a_port_and_a_host_are_read_from_the_environment(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("WORKQUEUE_METRICS_PORT", "9187")
        monkeypatch.setenv("WORKQUEUE_METRICS_HOST", " 0.0.0.0 ")
        settings = load_settings()
        assert (settings.metrics_host, settings.metrics_port) == ("0.0.0.0", 9187)

    @pytest.mark.parametrize("port", ["0", "65536", "-1"])
    def test_a_port_out_of_range_is_refused_in_one_line(
        self, monkeypatch: pytest.MonkeyPatch, port: str
    ) -> None:
        monkeypatch.setenv("WORKQUEUE_METRICS_PORT", port)
        with pytest.raises(SettingsError, match="WORKQUEUE_METRICS_PORT") as raised:
            load_settings()
        assert "must be a port from 1 to 65535" in str(raised.value)
        assert "\n" not in str(raised.value)

    def test_the_highest_and_lowest_ports_are_ports(self) -> None:
        assert load_settings(metrics_port=1).metrics_port == 1
        assert load_settings(metrics_port=65535).metrics_port == 65535

    @pytest.mark.parametrize("host", ["", "   ", "my host"])
    def test_a_host_that_names_nothing_is_refused(
        self, monkeypatch: pytest.MonkeyPatch, host: str
    ) -> None:
        with pytest.raises(SettingsError, match="WORKQUEUE_METRICS_HOST"):
            load_settings(metrics_host=host)


class TestWhatTheWorkerCountsThrough:
    async def test_without_a_port_the_executor_uses_the_work_store_itself(self) -> None:
        container = build_container(load_settings())
        assert await provide(container.metrics) is None

    async def test_with_a_port_the_work_store_is_counted_into_the_worker_s_metrics(
        self,
    ) -> None:
        state, clock = InMemoryState(), FakeClock()
        await InMemoryWorkQueue(state, clock).enqueue(AlphaJob())
        metrics = worker_metrics(9187)
        assert isinstance(metrics, WorkerMetrics)

        counted = counted_store(InMemoryWorkStore(state, clock), metrics)
        item = await counted.claim(["contract_alpha"], worker_id="w", lease_duration=LEASE)

        assert item is not None
        assert state.items[item.id].status is WorkStatus.RUNNING
        claimed = {"kind": "contract_alpha"}
        assert metrics.registry.get_sample_value("workqueue_worker_claimed_total", claimed) == 1

    def test_without_metrics_the_store_is_the_work_store_itself(self) -> None:
        store = InMemoryWorkStore(InMemoryState(), FakeClock())
        assert counted_store(store, None) is store
        assert worker_metrics(None) is None

    def test_a_port_without_the_web_extra_is_refused_in_one_line(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # As if prometheus-client (the web extra) were not installed.
        monkeypatch.setitem(sys.modules, "workqueue.adapters.prometheus", None)
        with pytest.raises(SettingsError) as refused:
            worker_metrics(9187)
        assert str(refused.value).startswith(
            "WORKQUEUE_METRICS_PORT needs the web extra (pip install 'workqueue-pg[web]'): "
        )
        assert "\n" not in str(refused.value)


def healthy() -> Health:
    return Health("reachable", "current")


@pytest.fixture
def metrics() -> WorkerMetrics:
    return WorkerMetrics()


@pytest.fixture
async def client(metrics: WorkerMetrics) -> AsyncIterator[httpx.AsyncClient]:
    state = {"health": healthy()}

    async def health() -> Health:
        return state["health"]

    transport = httpx.ASGITransport(app=metrics_app(metrics, health))
    async with httpx.AsyncClient(transport=transport, base_url="http://worker") as client:
        client.state = state  # type: ignore[attr-defined]
        yield client


class TestThePort:
    async def test_metrics_are_the_worker_s_counters_as_prometheus_text(
        self, client: httpx.AsyncClient, metrics: WorkerMetrics
    ) -> None:
        metrics.succeeded.labels("crawl").inc(3)
        response = await client.get("/metrics")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
        assert 'workqueue_worker_succeeded_total{kind="crawl"} 3.0' in response.text

    async def test_healthz_answers_200_while_healthy_and_503_with_the_reason_when_not(
        self, client: httpx.AsyncClient
    ) -> None:
        ok = await client.get("/healthz")
        assert (ok.status_code, ok.json()["status"]) == (200, "ok")

        client.state["health"] = Health(  # type: ignore[attr-defined]
            "unreachable", "unknown", "the database does not answer"
        )
        down = await client.get("/healthz")
        assert down.status_code == 503
        assert down.json() == {
            "status": "unavailable",
            "database": "unreachable",
            "schema": "unknown",
            "reason": "the database does not answer",
        }

    async def test_nothing_else_is_served(self, client: httpx.AsyncClient) -> None:
        assert (await client.get("/")).status_code == 404
