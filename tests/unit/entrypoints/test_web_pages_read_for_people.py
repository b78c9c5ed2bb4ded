"""The pages read for people: counts with separators and colour only where items are, times
relative to the view's clock with the exact time on hover, a running item's progress as a
bar, an item's actions labelled under its heading."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from web_world import LEASE, WebWorld

from workqueue.domain import EnqueueRequest, RunOutcome, TokenCleanup

TOKEN = "an-admin-token-of-some-length"


@pytest.fixture
def world() -> WebWorld:
    return WebWorld()


def time_element(iso: str, said: str) -> str:
    return f'<time datetime="{iso}" title="{iso}">{said}</time>'


def section(html: str, start: str, end: str) -> str:
    return html.split(start, 1)[1].split(end, 1)[0]


def row_of(html: str, list_id: str, item_id: int) -> str:
    """The row of item ``item_id`` in the list ``list_id`` (queued, failures)."""
    listed = section(html, f'<section id="{list_id}">', "</section>")
    return section(listed, f'<a href="/items/{item_id}">', "</tr>")


class TestCounts:
    async def test_counts_have_thousands_separators_and_zeros_no_colour(
        self, world: WebWorld
    ) -> None:
        await world.queue.enqueue_many([EnqueueRequest(TokenCleanup())] * 1234)
        await world.running()

        async with world.client() as client:
            html = (await client.get("/")).text

        row = section(html, '<a href="/?kind=token_cleanup">token_cleanup</a>', "</tr>")
        assert '<td class="number status-queued">1,234</td>' in row
        assert '<td class="number status-running">1</td>' in row
        assert '<td class="number zero">0</td>' in row
        totals = section(html, "<tfoot>", "</tfoot>")
        assert '<td class="number status-queued">1,234</td>' in totals
        assert '<td class="number zero">0</td>' in totals
        # No red zeros, no blue zeros.
        assert not re.search(r'class="number status-[a-z]+">0<', html)

    async def test_a_failed_count_above_zero_is_marked_failed(self, world: WebWorld) -> None:
        await world.failed("boom")

        async with world.client() as client:
            html = (await client.get("/")).text

        totals = section(html, "<tfoot>", "</tfoot>")
        assert '<td class="number status-failed">1</td>' in totals

    async def test_the_running_heading_counts_with_separators(self, world: WebWorld) -> None:
        for number in range(1001):
            await world.running(worker_id=f"w-{number}")

        async with world.client() as client:
            html = (await client.get("/")).text

        assert "<h2>Running (1,001)</h2>" in html


class TestTimes:
    async def test_the_overview_says_each_moment_from_the_views_clock(
        self, world: WebWorld
    ) -> None:
        failed = await world.failed("boom")
        queued = await world.queue.enqueue(TokenCleanup())
        waiting = await world.queue.enqueue(TokenCleanup(), delay=timedelta(minutes=3))
        await world.clock.advance(4)

        async with world.client() as client:
            html = (await client.get("/")).text

        at_start = "2026-01-01T00:00:00Z"
        queued_row = row_of(html, "queued", queued.id)
        assert f"<td>{time_element(at_start, '4 s ago')}</td>" in queued_row
        assert "<td>now</td>" in queued_row
        waiting_row = row_of(html, "queued", waiting.id)
        assert f"<td>{time_element('2026-01-01T00:03:00Z', 'in 2 min')}</td>" in waiting_row
        failed_row = row_of(html, "failures", failed.id)
        assert f"<td>{time_element(at_start, '4 s ago')}</td>" in failed_row
        # The finished items were first counted for this look.
        assert f"finished counted {time_element('2026-01-01T00:00:04Z', 'now')}." in html

    async def test_the_queued_list_shows_each_items_priority(self, world: WebWorld) -> None:
        item = await world.queue.enqueue(TokenCleanup(), priority=-7)

        async with world.client() as client:
            html = (await client.get("/")).text

        assert '<td class="number">-7</td>' in row_of(html, "queued", item.id)

    async def test_the_item_page_says_its_moments_and_a_missing_one_is_a_dash(
        self, world: WebWorld
    ) -> None:
        item = await world.running()
        await world.clock.advance(90)

        async with world.client() as client:
            html = (await client.get(f"/items/{item.id}")).text

        at_start = "2026-01-01T00:00:00Z"
        assert (
            f'<th scope="row">started_at</th><td>{time_element(at_start, "1 min ago")}</td>'
        ) in html
        assert (
            '<th scope="row">lease_expires_at</th>'
            f"<td>{time_element('2026-01-01T00:01:00Z', '30 s ago')}</td>"
        ) in html
        assert '<th scope="row">finished_at</th><td>\u2013</td>' in html

    async def test_the_schedules_say_their_runs_from_now(self, world: WebWorld) -> None:
        await world.clock.advance(3600)

        async with world.client() as client:
            html = (await client.get("/")).text

        retention = section(html, 'id="schedule-work_item_retention"', "</tr>")
        # Its calendar's latest fire time (03:00 in Paris), not yet run: due since then.
        assert time_element("2025-12-31T02:00:00Z", "23 h ago") in retention


class TestProgress:
    async def test_a_running_item_with_done_and_total_shows_a_bar_with_both_numbers(
        self, world: WebWorld
    ) -> None:
        item = await world.running()
        await world.store.heartbeat(
            item.lease, progress={"done": 1234, "total": 20000}, lease_duration=LEASE
        )

        async with world.client() as client:
            overview = (await client.get("/")).text
            page = (await client.get(f"/items/{item.id}")).text

        row = section(overview, f'id="running-{item.id}"', "</tr>")
        assert '<progress value="6" max="100" title="6 %">6 %</progress>' in row
        assert '<span class="progress-numbers">1,234 / 20,000</span>' in row
        assert "&#34;done&#34;" not in row
        assert '<div class="progress-bar" id="progress"><progress value="6"' in page
        assert "1,234 / 20,000" in page

    async def test_the_bar_advances_as_the_progress_does(self, world: WebWorld) -> None:
        item = await world.running()
        async with world.client() as client:
            seen = []
            for done in (5000, 20000):
                await world.store.heartbeat(
                    item.lease, progress={"done": done, "total": 20000}, lease_duration=LEASE
                )
                seen.append((await client.get(f"/fragments/items/{item.id}")).text)

        assert '<progress value="25" max="100"' in seen[0]
        assert '<progress value="100" max="100"' in seen[1]
        assert "20,000 / 20,000" in seen[1]

    async def test_the_reports_other_keys_are_shown_beside_the_bar(self, world: WebWorld) -> None:
        item = await world.running()
        await world.store.heartbeat(
            item.lease,
            progress={"done": 1, "total": 4, "stage": "<b>fetch</b>"},
            lease_duration=LEASE,
        )

        async with world.client() as client:
            overview = (await client.get("/")).text
            page = (await client.get(f"/items/{item.id}")).text

        assert (
            '<code class="progress progress-rest">{&#34;stage&#34;:&#34;&lt;b&gt;fetch&lt;/b&gt;'
            "&#34;}</code>"
        ) in overview
        assert (
            '<pre class="json progress-rest">{\n  &#34;stage&#34;: '
            "&#34;&lt;b&gt;fetch&lt;/b&gt;&#34;\n}</pre>"
        ) in page
        assert "<b>fetch" not in overview + page

    async def test_other_progress_stays_json(self, world: WebWorld) -> None:
        item = await world.running()
        await world.store.heartbeat(
            item.lease, progress={"done": "most", "total": 4}, lease_duration=LEASE
        )

        async with world.client() as client:
            overview = (await client.get("/")).text
            page = (await client.get(f"/items/{item.id}")).text

        assert "<progress" not in overview + page
        assert (
            '<code class="progress">{&#34;done&#34;:&#34;most&#34;,&#34;total&#34;:4}</code>'
            in (overview)
        )
        assert '<pre class="json" id="progress">{\n  &#34;done&#34;: &#34;most&#34;' in page


class TestItemActions:
    async def test_cancel_is_labelled_under_the_items_heading_above_its_details(
        self, world: WebWorld
    ) -> None:
        item = await world.queue.enqueue(TokenCleanup())

        async with world.client(token=TOKEN) as client:
            html = (await client.get(f"/items/{item.id}")).text

        heading = html.index(f'<h2 id="item-heading">Item #{item.id}: token_cleanup</h2>')
        form = html.index(f'<form method="post" action="/items/{item.id}/cancel"')
        details = html.index('<div id="live"')
        assert heading < form < details
        assert f"<legend>Cancel item #{item.id}</legend>" in html
        assert f'<button type="submit" id="cancel-button">Cancel item #{item.id}</button>' in html
        assert "It ends cancelled at once; no worker runs it." in html

    async def test_a_running_items_cancel_says_its_worker_is_asked(self, world: WebWorld) -> None:
        item = await world.running()

        async with world.client(token=TOKEN) as client:
            html = (await client.get(f"/items/{item.id}")).text

        assert "Its worker is asked to stop it; it ends cancelled." in html

    async def test_requeue_is_labelled_and_says_what_it_makes(self, world: WebWorld) -> None:
        failed = await world.failed("boom")

        async with world.client(token=TOKEN) as client:
            html = (await client.get(f"/items/{failed.id}")).text

        assert f"<legend>Requeue item #{failed.id}</legend>" in html
        assert (
            f'<button type="submit" id="requeue-button">Requeue item #{failed.id}</button>'
        ) in html
        assert "A new queued item runs its payload again; this one stays failed." in html

    async def test_a_succeeded_item_has_no_action(self, world: WebWorld) -> None:
        item = await world.running()
        await world.store.finish(item.lease, RunOutcome.succeeded(None, None))

        async with world.client(token=TOKEN) as client:
            html = (await client.get(f"/items/{item.id}")).text

        assert "<form" not in html
        assert '<td class="status-succeeded" id="item-status">succeeded</td>' in html
