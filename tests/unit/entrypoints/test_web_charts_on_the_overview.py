"""The overview draws the fleet's activity over the last hour or day, for every kind or the
kind of its filter, and refreshes it with the rest; /api/activity gives the same buckets."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from web_world import HOST, WebWorld

from workqueue.domain import MinuteCounts, TokenCleanup, minute_of
from workqueue.entrypoints.timestamps import iso_timestamp
from workqueue.entrypoints.web.app import create_app
from workqueue.entrypoints.web.reads import WebServices

CLEANUP, RETENTION = "token_cleanup", "work_item_retention"


@pytest.fixture
def world() -> WebWorld:
    return WebWorld()


def charts_of(html: str) -> str:
    return html.split('<section id="charts"', 1)[1].split("</section>", 1)[0]


async def some_activity(world: WebWorld) -> None:
    minute = minute_of(world.clock.now())
    await world.activity.add_counts(
        [
            MinuteCounts(minute - timedelta(minutes=2), CLEANUP, succeeded=1200, failed=3),
            MinuteCounts(minute, CLEANUP, succeeded=30, retried=2),
            MinuteCounts(minute, RETENTION, succeeded=5),
            MinuteCounts(minute - timedelta(hours=2), RETENTION, succeeded=1000),
        ]
    )
    await world.queue.enqueue(TokenCleanup())
    await world.activity.sample_depth(minute)


class TestTheOverviewDrawsTheActivity:
    async def test_the_last_hour_of_every_kind_is_drawn_by_default(self, world: WebWorld) -> None:
        await some_activity(world)

        async with world.client() as client:
            charts = charts_of((await client.get("/")).text)

        assert "Activity</h2>" in charts
        assert 'class="chart throughput"' in charts
        assert 'data-total="1240"' in charts
        assert "1,235 succeeded, 3 failed, 2 retried" in charts
        assert 'class="chart depth"' in charts
        assert 'data-latest="1,0,0"' in charts
        assert "<strong>hour</strong>" in charts
        assert 'href="/?kind=&amp;status=&amp;window=day" id="window-day">day</a>' in charts

    async def test_the_last_day_takes_in_what_the_hour_leaves_out(self, world: WebWorld) -> None:
        await some_activity(world)

        async with world.client() as client:
            html = (await client.get("/", params={"window": "day"})).text

        charts = charts_of(html)
        assert 'data-total="2240"' in charts
        assert "<strong>day</strong>" in charts
        assert 'id="window-hour">hour</a>' in charts
        assert "window=day" in html.split('data-live-src="', 1)[1].split('"', 1)[0]
        assert '<input type="hidden" name="window" value="day">' in html

    async def test_the_kind_filter_draws_that_kind_alone(self, world: WebWorld) -> None:
        await some_activity(world)

        async with world.client() as client:
            charts = charts_of((await client.get("/", params={"kind": RETENTION})).text)

        assert f"Activity of {RETENTION}</h2>" in charts
        assert 'data-total="5"' in charts
        assert 'data-latest="0,0,0"' in charts

    async def test_the_live_region_draws_the_charts_again_as_items_end(
        self, world: WebWorld
    ) -> None:
        async with world.client() as client:
            before = charts_of((await client.get("/fragments/overview")).text)
            await some_activity(world)
            after = charts_of((await client.get("/fragments/overview")).text)

        assert 'data-total="0"' in before
        assert "nothing yet" in before
        assert 'data-total="1240"' in after

    async def test_a_window_it_does_not_know_is_a_400_naming_the_ones_it_does(
        self, world: WebWorld
    ) -> None:
        async with world.client() as client:
            page = await client.get("/", params={"window": "week"})
            api = await client.get("/api/activity", params={"window": "week"})

        assert page.status_code == 400
        assert "window must be hour or day" in page.text
        assert (api.status_code, api.json()) == (400, {"error": "window must be hour or day"})


class TestTheActivityApi:
    async def test_it_gives_the_buckets_of_the_window_with_their_numbers(
        self, world: WebWorld
    ) -> None:
        await some_activity(world)
        minute = minute_of(world.clock.now())

        async with world.client() as client:
            answer = (await client.get("/api/activity", params={"kind": CLEANUP})).json()

        assert (answer["window"], answer["kind"]) == ("hour", CLEANUP)
        assert answer["now"] == iso_timestamp(world.clock.now())
        buckets = answer["buckets"]
        assert len(buckets) == 60
        last = buckets[-1]
        assert last["start"] == minute.isoformat().replace("+00:00", "Z")
        assert last["end"] == iso_timestamp(minute + timedelta(minutes=1))
        assert (last["succeeded"], last["failed"], last["retried"]) == (30, 0, 2)
        assert (last["queued"], last["delayed"], last["running"]) == (1, 0, 0)
        assert (buckets[-3]["succeeded"], buckets[-3]["failed"], buckets[-3]["queued"]) == (
            1200,
            3,
            None,
        )

    async def test_the_day_is_in_quarter_hours_of_every_kind(self, world: WebWorld) -> None:
        await some_activity(world)

        async with world.client() as client:
            answer = (await client.get("/api/activity", params={"window": "day"})).json()

        assert (answer["window"], answer["kind"], len(answer["buckets"])) == ("day", None, 96)
        assert sum(bucket["succeeded"] for bucket in answer["buckets"]) == 2235


class TestAViewThatReadsNoActivity:
    async def test_it_draws_no_charts_and_its_api_says_so(self, world: WebWorld) -> None:
        services = WebServices(
            monitor=world.monitor, overview=world.overview, schema=world.schema, clock=world.clock
        )
        app = create_app(services, allowed_hosts=(HOST,))
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=f"http://{HOST}") as client:
            page = await client.get("/")
            api = await client.get("/api/activity")
        await world.overview.close()

        assert page.status_code == 200
        assert 'id="charts"' not in page.text
        assert (api.status_code, api.json()) == (404, {"error": "this view reads no activity"})
