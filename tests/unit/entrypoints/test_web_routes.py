"""The admin view's pages and API on the in-memory queue: what each route shows and sends."""

from __future__ import annotations

import logging
import re
from datetime import timedelta

import pytest
from web_world import KINDS, LEASE, WebWorld

from workqueue.domain import CapSource, RunOutcome, TokenCleanup, WorkItemRetention, WorkStatus
from workqueue.entrypoints.web.app import SECURITY_HEADERS

STATUSES = [status.value for status in WorkStatus]


@pytest.fixture
def world() -> WebWorld:
    return WebWorld()


def zero_counts() -> dict[str, int]:
    return dict.fromkeys(STATUSES, 0)


class TestOverview:
    async def test_the_json_overview_counts_every_kind_by_every_status(
        self, world: WebWorld
    ) -> None:
        await world.failed("boom")
        await world.running(kind="work_item_retention")
        await world.clock.advance(4)
        await world.queue.enqueue(TokenCleanup(), dedup_key="a")
        await world.clock.advance(1.5)
        await world.queue.enqueue(TokenCleanup(), dedup_key="b")
        world.state.write(
            world.state.items[1].__class__(**{**vars_of(world.state.items[1]), "kind": "legacy"})
        )

        async with world.client() as client:
            response = await client.get("/api/overview")

        assert response.status_code == 200
        assert response.json() == {
            "read_only": True,
            "now": "2026-01-01T00:00:05.500000Z",
            "statuses": STATUSES,
            "counts": {
                "legacy": {**zero_counts(), "failed": 1},
                "token_cleanup": {**zero_counts(), "queued": 2},
                "work_item_retention": {**zero_counts(), "running": 1},
            },
            "totals": {**zero_counts(), "queued": 2, "running": 1, "failed": 1},
            "finished_counted_at": "2026-01-01T00:00:05.500000Z",
            "oldest_queued": {
                "token_cleanup": {"enqueued_at": "2026-01-01T00:00:04Z", "age_seconds": 1.5}
            },
            "oldest_queued_age_seconds": 1.5,
            "paused": [],
            "capped": [],
        }

    async def test_ages_are_given_to_the_millisecond(self, world: WebWorld) -> None:
        await world.running()
        await world.queue.enqueue(TokenCleanup())
        await world.clock.advance(1.23456)

        async with world.client() as client:
            overview = (await client.get("/api/overview")).json()
            running = (await client.get("/api/running")).json()

        assert overview["oldest_queued_age_seconds"] == 1.235
        assert overview["oldest_queued"]["token_cleanup"]["age_seconds"] == 1.235
        assert running["items"][0]["heartbeat_age_seconds"] == 1.235
        assert running["items"][0]["lease_left_seconds"] == 58.765

    async def test_an_empty_queue_has_no_oldest_item(self, world: WebWorld) -> None:
        async with world.client() as client:
            document = (await client.get("/api/overview")).json()

        assert document["oldest_queued"] == {}
        assert document["oldest_queued_age_seconds"] is None
        assert document["counts"] == {kind: zero_counts() for kind in KINDS}

    async def test_the_page_shows_counts_running_queued_and_failures(self, world: WebWorld) -> None:
        failed = await world.failed("RuntimeError: disk full")
        running = await world.running(worker_id="host:42:abc", kind="work_item_retention")
        await world.clock.advance(3)
        await world.store.heartbeat(running.lease, progress={"deleted": 12}, lease_duration=LEASE)
        await world.clock.advance(2)
        queued = (await world.queue.enqueue(TokenCleanup())).id

        async with world.client() as client:
            response = await client.get("/")

        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/html")
        html = response.text
        assert "Read-only." in html
        assert (
            'data-live-src="/fragments/overview?kind=&amp;status=&amp;after=0&amp;window=hour"'
            in html
        )
        assert f'id="running-{running.id}"' in html
        assert "host:42:abc" in html
        assert "2.0 s" in html  # heartbeat age
        assert "58.0 s" not in html  # lease left is 58 s: shown whole
        assert ">58 s<" in html
        assert "{&#34;deleted&#34;:12}" in html
        assert f'href="/items/{queued}"' in html
        assert f'href="/items/{failed.id}"' in html
        assert "RuntimeError: disk full" in html
        assert "Running (1)" in html

    async def test_the_fragment_is_the_live_region_alone(self, world: WebWorld) -> None:
        await world.running()

        async with world.client() as client:
            page = (await client.get("/")).text
            fragment = (await client.get("/fragments/overview")).text

        assert "<html" not in fragment
        assert 'id="running"' in fragment
        assert fragment.strip() in page

    async def test_nothing_running_or_queued_or_failed_says_so(self, world: WebWorld) -> None:
        async with world.client() as client:
            html = (await client.get("/")).text

        assert "Nothing is running." in html
        assert "Nothing queued." in html
        assert "No unsuccessful items." in html


def vars_of(item: object) -> dict[str, object]:
    return {name: getattr(item, name) for name in item.__slots__}  # type: ignore[attr-defined]


class TestRunning:
    async def test_every_running_item_is_listed_with_its_lease_and_heartbeat(
        self, world: WebWorld
    ) -> None:
        first = await world.running(worker_id="w-1")
        second = await world.running(worker_id="w-2", kind="work_item_retention")
        for _ in range(120):
            await world.queue.enqueue(TokenCleanup())
        await world.clock.advance(2)
        await world.store.heartbeat(second.lease, progress={"done": 3}, lease_duration=LEASE)
        await world.clock.advance(0.25)

        async with world.client() as client:
            document = (await client.get("/api/running")).json()
            html = (await client.get("/")).text

        assert document["now"] == "2026-01-01T00:00:02.250000Z"
        assert [item["id"] for item in document["items"]] == [first.id, second.id]
        assert document["items"][1] == {
            "id": second.id,
            "kind": "work_item_retention",
            "status": "running",
            "attempt": 1,
            "stalls": 0,
            "dedup_key": None,
            "worker_id": "w-2",
            "enqueued_at": "2026-01-01T00:00:00Z",
            "priority": 0,
            "run_at": "2026-01-01T00:00:00Z",
            "started_at": "2026-01-01T00:00:00Z",
            "heartbeat_at": "2026-01-01T00:00:02Z",
            "lease_expires_at": "2026-01-01T00:01:02Z",
            "finished_at": None,
            "heartbeat_age_seconds": 0.25,
            "lease_left_seconds": 59.75,
            "payload": {"retention_days": None},
            "progress": {"done": 3},
            "error": None,
            "snoozes": 0,
            "failures": [],
            "result": None,
            "requeued_as": None,
        }
        assert document["items"][0]["heartbeat_age_seconds"] == 2.25
        assert "Running (2)" in html

    async def test_a_lease_that_ran_out_shows_as_expired(self, world: WebWorld) -> None:
        await world.running()
        await world.clock.advance(75)

        async with world.client() as client:
            document = (await client.get("/api/running")).json()
            html = (await client.get("/")).text

        assert document["items"][0]["lease_left_seconds"] == -15.0
        assert 'class="number expired">-15 s<' in html


class TestQueued:
    async def test_queued_items_come_in_keyset_pages(self, world: WebWorld) -> None:
        ids = [(await world.queue.enqueue(TokenCleanup())).id for _ in range(5)]

        async with world.client() as client:
            first = (await client.get("/api/queued", params={"limit": 2})).json()
            second = (
                await client.get("/api/queued", params={"limit": 2, "after": first["next_after"]})
            ).json()
            last = (
                await client.get("/api/queued", params={"limit": 2, "after": second["next_after"]})
            ).json()
            default = (await client.get("/api/queued")).json()

        assert first["now"] == "2026-01-01T00:00:00Z"
        assert [item["id"] for item in first["items"]] == ids[:2]
        assert first["next_after"] == ids[1]
        assert first["after"] == 0
        assert first["kind"] is None
        assert [item["id"] for item in second["items"]] == ids[2:4]
        assert [item["id"] for item in last["items"]] == ids[4:]
        assert last["next_after"] is None
        assert [item["id"] for item in default["items"]] == ids
        assert default["next_after"] is None

    async def test_a_page_exactly_full_has_no_next_page(self, world: WebWorld) -> None:
        for _ in range(2):
            await world.queue.enqueue(TokenCleanup())

        async with world.client() as client:
            page = (await client.get("/api/queued", params={"limit": 2})).json()

        assert len(page["items"]) == 2
        assert page["next_after"] is None

    async def test_queued_items_can_be_of_one_kind(self, world: WebWorld) -> None:
        await world.queue.enqueue(TokenCleanup())
        retention = (await world.queue.enqueue(WorkItemRetention())).id

        async with world.client() as client:
            document = (
                await client.get("/api/queued", params={"kind": "work_item_retention"})
            ).json()
            html = (await client.get("/", params={"kind": "work_item_retention"})).text
            blank = (await client.get("/api/queued", params={"kind": "  "})).json()

        assert document["kind"] == "work_item_retention"
        assert [item["id"] for item in document["items"]] == [retention]
        assert "Queued of kind work_item_retention, oldest first" in html
        assert '<option value="work_item_retention" selected>' in html
        queued = html.split('<section id="queued">')[1].split("</section>")[0]
        assert f'href="/items/{retention}"' in queued
        assert 'href="/items/1"' not in queued
        assert blank["kind"] is None
        assert len(blank["items"]) == 2

    async def test_the_page_links_the_next_and_first_pages(self, world: WebWorld) -> None:
        ids = [(await world.queue.enqueue(TokenCleanup())).id for _ in range(51)]

        async with world.client() as client:
            first = (await client.get("/")).text
            second = (await client.get("/", params={"after": ids[49]})).text

        assert f'href="/?kind=&amp;status=&amp;window=hour&amp;after={ids[49]}">Next page' in first
        assert "First page" not in first
        assert f'href="/items/{ids[50]}"' in second
        assert f'href="/items/{ids[0]}"' not in second
        assert 'href="/?kind=&amp;status=&amp;window=hour">First page' in second
        assert "Next page" not in second
        assert f"after={ids[49]}" in re.search(r'data-live-src="([^"]*)"', second)[1]  # type: ignore[index]

    async def test_the_first_page_may_say_after_0(self, world: WebWorld) -> None:
        queued = (await world.queue.enqueue(TokenCleanup())).id

        async with world.client() as client:
            response = await client.get("/", params={"after": 0})

        assert response.status_code == 200
        assert f'href="/items/{queued}"' in response.text

    async def test_an_empty_later_page_says_after_which_id(self, world: WebWorld) -> None:
        async with world.client() as client:
            html = (await client.get("/", params={"after": 7})).text

        assert "Nothing queued after #7." in html

    @pytest.mark.parametrize(
        ("query", "error"),
        [
            ({"after": "x"}, "after must be an integer"),
            ({"after": "-1"}, "after must be from 0 to 9223372036854775807"),
            ({"limit": "0"}, "limit must be from 1 to 500"),
            ({"limit": "501"}, "limit must be from 1 to 500"),
        ],
    )
    async def test_a_bad_parameter_is_a_400_naming_it(
        self, world: WebWorld, query: dict[str, str], error: str
    ) -> None:
        async with world.client() as client:
            api = await client.get("/api/queued", params=query)
            page = await client.get("/", params={"after": query.get("after", "z")})

        assert api.status_code == 400
        assert api.json() == {"error": error}
        assert page.status_code == 400
        assert "<h2>Bad request</h2>\n  <p>after must be " in page.text

    @pytest.mark.parametrize("kind", ["\x00", "token_cleanup\x00", "\x00 "])
    async def test_a_kind_with_a_nul_character_is_a_400_saying_so(
        self, world: WebWorld, kind: str
    ) -> None:
        await world.queue.enqueue(TokenCleanup())
        before = world.state.snapshot()

        async with world.client() as client:
            api = await client.get("/api/queued", params={"kind": kind})
            page = await client.get("/", params={"kind": kind})
            fragment = await client.get("/fragments/overview", params={"kind": kind})

        assert api.status_code == 400
        assert api.json() == {"error": "kind must not contain a NUL character"}
        assert (page.status_code, fragment.status_code) == (400, 400)
        assert "<h2>Bad request</h2>\n  <p>kind must not contain a NUL character</p>" in page.text
        assert world.state.snapshot() == before

    async def test_the_largest_limit_and_id_are_accepted(self, world: WebWorld) -> None:
        async with world.client() as client:
            response = await client.get(
                "/api/queued", params={"limit": 500, "after": 9223372036854775807}
            )

        assert response.status_code == 200
        assert response.json()["items"] == []


class TestFailures:
    async def test_the_latest_unsuccessful_items_come_first_with_their_errors(
        self, world: WebWorld
    ) -> None:
        first = await world.failed("first")
        await world.clock.advance(1)
        second = await world.failed("second")

        async with world.client() as client:
            document = (await client.get("/api/failures")).json()
            one = (await client.get("/api/failures", params={"limit": 1})).json()

        assert document["now"] == "2026-01-01T00:00:01Z"
        assert [item["id"] for item in document["items"]] == [second.id, first.id]
        assert document["items"][0]["error"] == "second"
        assert document["items"][0]["finished_at"] == "2026-01-01T00:00:01Z"
        assert document["items"][0]["status"] == "failed"
        assert document["items"][0]["lease_left_seconds"] is None
        assert document["items"][0]["heartbeat_age_seconds"] is None
        assert [item["id"] for item in one["items"]] == [second.id]

    async def test_the_page_lists_twenty_failures(self, world: WebWorld) -> None:
        failed = [await world.failed(f"error {n}") for n in range(21)]

        async with world.client() as client:
            html = (await client.get("/")).text

        assert "error 20" in html
        assert "error 1<" in html
        assert "error 0<" not in html
        assert f'href="/items/{failed[0].id}"' not in html


class TestItem:
    async def test_one_item_is_its_whole_row(self, world: WebWorld) -> None:
        item = await world.failed("ValueError: bad\nline two")

        async with world.client() as client:
            document = (await client.get(f"/api/items/{item.id}")).json()
            html = (await client.get(f"/items/{item.id}")).text
            fragment = (await client.get(f"/fragments/items/{item.id}")).text

        assert document["now"] == "2026-01-01T00:00:00Z"
        assert document["item"]["id"] == item.id
        assert document["item"]["status"] == "failed"
        assert document["item"]["progress"] == {"step": 1}
        assert document["item"]["worker_id"] == "w-old"
        assert f'<h2 id="item-heading">Item #{item.id}: token_cleanup</h2>' in html
        assert '<td class="status-failed" id="item-status">failed</td>' in html
        assert f'data-live-src="/fragments/items/{item.id}"' in html
        assert '<pre class="json" id="progress">{\n  &#34;step&#34;: 1\n}</pre>' in html
        assert '<pre class="json" id="payload">{}</pre>' in html
        assert "ValueError: bad\nline two" in html
        assert '<th scope="row">worker_id</th><td>w-old</td>' in html
        assert '<th scope="row">lease_expires_at</th><td>\u2013</td>' in html
        assert "<html" not in fragment
        assert '<td class="status-failed" id="item-status">failed</td>' in fragment
        assert fragment.strip() in html

    async def test_a_waiting_item_shows_its_priority_and_when_it_runs(
        self, world: WebWorld
    ) -> None:
        waiting = await world.queue.enqueue(TokenCleanup(), priority=-7, delay=timedelta(hours=2))

        async with world.client() as client:
            document = (await client.get(f"/api/items/{waiting.id}")).json()
            html = (await client.get(f"/items/{waiting.id}")).text

        assert (document["item"]["priority"], document["item"]["run_at"]) == (
            -7,
            "2026-01-01T02:00:00Z",
        )
        assert '<th scope="row">priority</th><td>-7</td>' in html
        assert (
            '<th scope="row">run_at</th><td><time datetime="2026-01-01T02:00:00Z" '
            'title="2026-01-01T02:00:00Z">in 2 h</time></td>'
        ) in html

    async def test_a_retried_item_shows_each_failure_and_a_succeeded_one_its_result(
        self, world: WebWorld
    ) -> None:
        await world.queue.enqueue(TokenCleanup())
        first = await world.store.claim(["token_cleanup"], worker_id="w", lease_duration=LEASE)
        assert first is not None
        await world.store.finish(
            first.lease, RunOutcome.retried("OSError: down", world.clock.now())
        )
        await world.clock.advance(30)
        second = await world.store.claim(["token_cleanup"], worker_id="w", lease_duration=LEASE)
        assert second is not None
        await world.store.finish(second.lease, RunOutcome.succeeded(None, {"deleted": 4}))

        async with world.client() as client:
            document = (await client.get(f"/api/items/{first.id}")).json()
            html = (await client.get(f"/items/{first.id}")).text

        assert document["item"]["failures"] == [
            {"attempt": 1, "at": "2026-01-01T00:00:00Z", "error": "OSError: down"}
        ]
        assert (document["item"]["result"], document["item"]["snoozes"]) == ({"deleted": 4}, 0)
        assert '<pre class="json" id="result">{\n  &#34;deleted&#34;: 4\n}</pre>' in html
        assert (
            '<tr><td class="number">1</td><td><time datetime="2026-01-01T00:00:00Z" '
            'title="2026-01-01T00:00:00Z">30 s ago</time></td>'
            '<td><pre class="error">OSError: down</pre></td></tr>'
        ) in html

    async def test_an_item_that_never_failed_says_so(self, world: WebWorld) -> None:
        item = await world.running()

        async with world.client() as client:
            html = (await client.get(f"/items/{item.id}")).text

        assert '<p id="failures">None.</p>' in html
        assert '<pre class="json" id="result">null</pre>' in html

    async def test_a_missing_item_is_a_404(self, world: WebWorld) -> None:
        async with world.client() as client:
            api = await client.get("/api/items/99")
            page = await client.get("/items/99")
            fragment = await client.get("/fragments/items/99")
            huge = await client.get("/api/items/99999999999999999999")

        assert api.status_code == 404
        assert api.json() == {"error": "no item 99"}
        assert page.status_code == 404
        assert "<h2>Not found</h2>\n  <p>There is no item 99.</p>" in page.text
        assert fragment.status_code == 404
        assert fragment.text == ""
        assert huge.status_code == 404

    @pytest.mark.parametrize("item_id", [2**63, 10**30])
    async def test_an_id_no_row_can_have_is_a_404_on_every_item_route(
        self, world: WebWorld, item_id: int
    ) -> None:
        async with world.client() as client:
            api = await client.get(f"/api/items/{item_id}")
            page = await client.get(f"/items/{item_id}")
            fragment = await client.get(f"/fragments/items/{item_id}")

        assert api.status_code == 404
        assert api.json() == {"error": f"no item {item_id}"}
        assert page.status_code == 404
        assert f"<p>There is no item {item_id}.</p>" in page.text
        assert fragment.status_code == 404

    async def test_an_item_that_is_running_shows_its_heartbeat_and_lease(
        self, world: WebWorld
    ) -> None:
        item = await world.running()
        await world.clock.advance(1.5)

        async with world.client() as client:
            html = (await client.get(f"/items/{item.id}")).text

        assert '<th scope="row">heartbeat age</th><td>1.5 s</td>' in html
        assert '<th scope="row">lease left</th><td>58 s</td>' in html
        assert '<pre class="error" id="error">\u2013</pre>' in html


class TestEverywhere:
    @pytest.mark.parametrize(
        "path",
        [
            "/",
            "/items/1",
            "/fragments/overview",
            "/api/overview",
            "/api/running",
            "/api/queued",
            "/api/failures",
            "/api/items/1",
            "/api/schedules",
            "/api/pauses",
            "/metrics",
            "/healthz",
            "/nowhere",
            "/static/live.js",
        ],
    )
    async def test_every_response_carries_the_security_headers(
        self, world: WebWorld, path: str
    ) -> None:
        await world.running()

        async with world.client() as client:
            response = await client.get(path)

        for name, value in SECURITY_HEADERS.items():
            assert response.headers[name] == value
        assert "script-src 'self'" in response.headers["content-security-policy"]

    async def test_an_unknown_path_is_a_404_page_or_json(self, world: WebWorld) -> None:
        async with world.client() as client:
            page = await client.get("/nowhere")
            api = await client.get("/api/nowhere")
            static = await client.get("/static/nowhere.js")

        assert page.status_code == 404
        assert "<h2>Not found</h2>\n  <p>No such page.</p>" in page.text
        assert api.status_code == 404
        assert api.json() == {"error": "no such endpoint"}
        assert static.status_code == 404
        assert static.text == "not found"

    async def test_the_script_and_style_are_served(self, world: WebWorld) -> None:
        async with world.client() as client:
            script = await client.get("/static/live.js")
            style = await client.get("/static/web.css")

        assert script.status_code == 200
        assert "javascript" in script.headers["content-type"]
        assert "region.dataset.liveSrc" in script.text
        assert "innerHTML = html" in script.text
        assert style.status_code == 200
        assert style.headers["content-type"].startswith("text/css")

    async def test_an_unreachable_database_is_a_503_that_names_no_host(
        self, world: WebWorld, caplog: pytest.LogCaptureFixture
    ) -> None:
        world.state.unavailable = True

        with caplog.at_level(logging.WARNING, logger="workqueue.web"):
            async with world.client() as client:
                page = await client.get("/")
                api = await client.get("/api/running")
                item = await client.get("/items/1")

        assert page.status_code == 503
        assert (
            "<h2>Database unavailable</h2>\n  <p>The database does not answer. "
            "The page tries again by itself.</p>"
        ) in page.text
        assert (
            "the database is unavailable: the in-memory store is marked unavailable"
            in caplog.messages
        )
        assert "in-memory" not in page.text
        assert api.status_code == 503
        assert api.json() == {"error": "the database does not answer"}
        assert item.status_code == 503

    async def test_reading_every_route_changes_nothing(self, world: WebWorld) -> None:
        item = await world.failed("x")
        await world.running()
        await world.queue.enqueue(TokenCleanup())
        await world.store.pause_kind("work_item_retention")
        before = world.state.snapshot(), dict(world.state.pauses)

        async with world.client() as client:
            for path in [
                "/",
                f"/items/{item.id}",
                "/api/overview",
                "/api/running",
                "/api/queued",
                "/api/failures",
                "/api/pauses",
                "/metrics",
                "/healthz",
            ]:
                assert (await client.get(path)).status_code == 200

        assert (world.state.snapshot(), world.state.pauses) == before


class TestSchedules:
    async def test_the_api_lists_each_schedule_with_its_last_and_next_run(
        self, world: WebWorld
    ) -> None:
        item = await world.running()
        async with world.client() as client:
            response = await client.get("/api/schedules")

        assert response.status_code == 200
        document = response.json()
        assert document["now"] == "2026-01-01T00:00:00Z"
        assert [schedule["kind"] for schedule in document["schedules"]] == [
            "token_cleanup",
            "work_item_retention",
        ]
        cleanup, retention = document["schedules"]
        assert cleanup["last_item"] == {
            "id": item.id,
            "status": "running",
            "enqueued_at": "2026-01-01T00:00:00Z",
            "finished_at": None,
        }
        assert cleanup["next_run_at"] is None
        assert (retention["cron"], retention["timezone"], retention["overlap"]) == (
            "0 3 * * *",
            "Europe/Paris",
            "skip",
        )
        assert retention["next_run_at"] == "2025-12-31T02:00:00Z"

    async def test_the_overview_has_a_row_per_schedule(self, world: WebWorld) -> None:
        async with world.client() as client:
            page = (await client.get("/")).text

        assert '<tr id="schedule-token_cleanup">' in page
        assert "<code>0 3 * * *</code> in Europe/Paris (skip while one runs)" in page
        assert "<td>every 1 d 0 h</td>" in page

    async def test_the_schedules_page_has_a_row_per_schedule_with_its_last_and_next_run(
        self, world: WebWorld
    ) -> None:
        item = (await world.queue.enqueue(TokenCleanup())).id
        async with world.client() as client:
            response = await client.get("/schedules")
            overview = (await client.get("/")).text

        page = response.text
        assert response.status_code == 200
        assert "<title>Schedules · workqueue</title>" in page
        cleanup = page[page.index('<tr id="schedule-token_cleanup">') :]
        cleanup = cleanup[: cleanup.index("</tr>")]
        assert f'<a href="/items/{item}">#{item}</a> queued' in cleanup
        assert "an interval after its last item finishes" in cleanup
        retention = page[page.index('<tr id="schedule-work_item_retention">') :]
        retention = retention[: retention.index("</tr>")]
        assert "<code>0 3 * * *</code> in Europe/Paris (skip while one runs)" in retention
        assert '<a href="/schedules">Schedules</a>' in overview


class TestCappedKinds:
    async def test_the_overview_says_each_cap_and_how_many_of_its_kind_run(
        self, world: WebWorld
    ) -> None:
        for _ in range(3):
            await world.queue.enqueue(TokenCleanup())
        await world.store.cap_kind("token_cleanup", 3)
        await world.clock.advance(2)
        await world.store.cap_kind("legacy", 1, source=CapSource.POLICY)
        # Two of its three items run, one waits: the count is of the running ones.
        for _ in range(2):
            assert await world.store.claim(["token_cleanup"], worker_id="w", lease_duration=LEASE)

        async with world.client() as client:
            document = (await client.get("/api/overview")).json()
            page = (await client.get("/")).text

        assert document["capped"] == [
            {
                "kind": "legacy",
                "max_running": 1,
                "running": 0,
                "set_by": "policy",
                "set_at": "2026-01-01T00:00:02Z",
            },
            {
                "kind": "token_cleanup",
                "max_running": 3,
                "running": 2,
                "set_by": "operator",
                "set_at": "2026-01-01T00:00:00Z",
            },
        ]
        # A capped kind has its row, though no item has it and this view does not serve it.
        assert document["counts"]["legacy"] == zero_counts()
        assert ">2 of 3 running</span>" in page
        assert ">0 of 1 running</span>" in page
        assert "(set by operator)" in page


class TestPausedKinds:
    async def test_the_api_lists_each_paused_kind_since_when_and_why(self, world: WebWorld) -> None:
        await world.store.pause_kind("token_cleanup", reason="partner down")
        await world.clock.advance(1.5)
        await world.store.pause_kind("legacy")

        async with world.client() as client:
            pauses = (await client.get("/api/pauses")).json()
            overview = (await client.get("/api/overview")).json()

        paused = [
            {"kind": "legacy", "paused_at": "2026-01-01T00:00:01.500000Z", "reason": None},
            {
                "kind": "token_cleanup",
                "paused_at": "2026-01-01T00:00:00Z",
                "reason": "partner down",
            },
        ]
        assert pauses == {"now": "2026-01-01T00:00:01.500000Z", "pauses": paused}
        assert overview["paused"] == paused
        # A paused kind has its row, though no item has it and this view does not serve it.
        assert overview["counts"]["legacy"] == zero_counts()

    async def test_no_paused_kind_is_an_empty_list(self, world: WebWorld) -> None:
        async with world.client() as client:
            response = await client.get("/api/pauses")

        assert response.status_code == 200
        assert response.json() == {"now": "2026-01-01T00:00:00Z", "pauses": []}

    async def test_the_page_marks_a_paused_kind_with_its_time_and_reason_as_text(
        self, world: WebWorld
    ) -> None:
        await world.store.pause_kind("work_item_retention", reason='<script>x</script> & "why"')
        await world.clock.advance(30)
        await world.store.pause_kind("token_cleanup")

        async with world.client() as client:
            html = (await client.get("/")).text

        retention = html.split('<a href="/?kind=work_item_retention">work_item_retention</a>')[1]
        retention = retention.split("</th>")[0]
        assert (
            '<span class="paused" title="No worker claims its items until it is resumed.">'
            'paused <time datetime="2026-01-01T00:00:00Z" title="2026-01-01T00:00:00Z">'
            "30 s ago</time></span> "
            '<span class="pause-reason">&lt;script&gt;x&lt;/script&gt; &amp; &#34;why&#34;</span>'
        ) in retention
        cleanup = html.split('<a href="/?kind=token_cleanup">token_cleanup</a>')[1]
        cleanup = cleanup.split("</th>")[0]
        assert (
            'paused <time datetime="2026-01-01T00:00:30Z" title="2026-01-01T00:00:30Z">now</time>'
            "</span>"
        ) in cleanup
        assert "pause-reason" not in cleanup
        assert "<script>x" not in html

    async def test_the_api_says_when_the_database_does_not_answer(self, world: WebWorld) -> None:
        world.state.unavailable = True

        async with world.client() as client:
            response = await client.get("/api/pauses")

        assert response.status_code == 503
        assert response.json() == {"error": "the database does not answer"}
