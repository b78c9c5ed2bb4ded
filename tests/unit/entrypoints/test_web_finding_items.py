"""Finding items on the overview: look one up by its id or its dedup key; filter the lists by
kind and status."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pytest
from web_world import LEASE, WebWorld

from workqueue.domain import (
    MAX_DEDUP_KEY_LENGTH,
    RunOutcome,
    TokenCleanup,
    WorkItem,
    WorkItemRetention,
    WorkStatus,
)
from workqueue.entrypoints.web.hosts import REFUSED
from workqueue.entrypoints.web.lookup import (
    FOUND_SHOWN,
    LISTED_STATUSES,
    UNSUCCESSFUL_SCANNED,
    ShownLists,
    looked_up,
    narrowed,
    shown_lists,
)
from workqueue.entrypoints.web.reads import FAILURES_SHOWN, MAX_LIMIT, BadQueryError

FIND_HELP = "q must be an item&#39;s id, such as 42, or a dedup key"


@pytest.fixture
def world() -> WebWorld:
    return WebWorld()


def section(html: str, section_id: str) -> str | None:
    """The list ``section_id`` of the page, None when the page does not show it."""
    start = f'<section id="{section_id}">'
    if start not in html:
        return None
    return html.split(start, 1)[1].split("</section>", 1)[0]


class TestLookUpById:
    @pytest.mark.parametrize("query", ["42", "#42", "  42 ", "0042"])
    def test_an_id_is_taken_as_an_id(self, query: str) -> None:
        assert looked_up(query) == 42

    def test_the_largest_id_that_can_be_typed_is_an_id(self) -> None:
        assert looked_up("9" * 19) == int("9" * 19)

    @pytest.mark.parametrize(
        "query",
        ["#", "abc", "4 2", "-3", "4.0", "##4", "\u00b2", "\u0664", "9" * 20, " 42x", "# 42"],
    )
    def test_anything_else_is_a_dedup_key_as_typed(self, query: str) -> None:
        assert looked_up(query) == query

    @pytest.mark.parametrize(
        ("query", "why"),
        [
            (None, "dedup key must not be empty or blank"),
            ("", "dedup key must not be empty or blank"),
            (" \t", "dedup key must not be empty or blank"),
            ("a\x00b", "dedup key must not contain a NUL character"),
            (
                "k" * (MAX_DEDUP_KEY_LENGTH + 1),
                f"dedup key is {MAX_DEDUP_KEY_LENGTH + 1} characters long; the limit is 200",
            ),
        ],
    )
    def test_what_can_be_neither_is_refused_saying_what_it_takes(
        self, query: str | None, why: str
    ) -> None:
        with pytest.raises(BadQueryError) as raised:
            looked_up(query)
        assert str(raised.value) == f"q must be an item's id, such as 42, or a dedup key; {why}"

    async def test_the_search_box_goes_to_the_items_page(self, world: WebWorld) -> None:
        item = await world.queue.enqueue(TokenCleanup(), dedup_key="invoice-7")

        async with world.client() as client:
            html = (await client.get("/")).text
            answer = await client.get("/find", params={"q": f"#{item.id}"})
            page = await client.get("/find", params={"q": str(item.id)}, follow_redirects=True)

        assert '<form method="get" action="/find" id="lookup-form">' in html
        assert "<label>Item id or dedup key <input" in html
        assert 'placeholder="42 or invoice-7"' in html
        assert 'name="q"' in html
        assert answer.status_code == 303
        assert answer.headers["location"] == f"/items/{item.id}"
        assert page.status_code == 200
        assert f"Item #{item.id}: token_cleanup" in page.text

    async def test_an_id_no_item_has_is_the_items_not_found_page(self, world: WebWorld) -> None:
        async with world.client() as client:
            page = await client.get("/find", params={"q": "99"}, follow_redirects=True)
            huge = await client.get("/find", params={"q": "9" * 19}, follow_redirects=True)

        assert page.status_code == 404
        assert "<p>There is no item 99.</p>" in page.text
        assert huge.status_code == 404
        assert f"<p>There is no item {'9' * 19}.</p>" in huge.text

    @pytest.mark.parametrize("query", ["", " ", "a\x00b"])
    async def test_a_query_that_is_no_id_and_no_dedup_key_is_a_400(
        self, world: WebWorld, query: str
    ) -> None:
        async with world.client() as client:
            page = await client.get("/find", params={"q": query})
            bare = await client.get("/find")

        for answer in (page, bare):
            assert answer.status_code == 400
            assert f"<h2>Bad request</h2>\n  <p>{FIND_HELP}; dedup key must not" in answer.text
        assert "a\x00b" not in page.text

    async def test_another_host_is_refused(self, world: WebWorld) -> None:
        async with world.client() as client:
            answer = await client.get("/find", params={"q": "1"}, headers={"host": "evil.example"})

        assert answer.status_code == 400
        assert answer.text == REFUSED

    async def test_a_post_is_not_taken(self, world: WebWorld) -> None:
        async with world.client(token="an-admin-token-of-some-length") as client:
            answer = await client.post("/find", data={"q": "1"})

        assert answer.status_code == 405


KEY = "invoice-7"


async def keyed(
    world: WebWorld, key: str = KEY, *, kind: str = "token_cleanup", ends: str = "queued"
) -> WorkItem:
    """An item of ``kind`` under ``key``, left queued, running, failed or cancelled."""
    payload = TokenCleanup() if kind == "token_cleanup" else WorkItemRetention()
    item = await world.queue.enqueue(payload, dedup_key=key)
    if ends == "cancelled":
        await world.store.cancel(item.id, reason="no longer wanted")
    elif ends != "queued":
        claimed = await world.store.claim([kind], worker_id="w-1", lease_duration=LEASE)
        assert claimed is not None
        assert claimed.id == item.id
        if ends == "failed":
            await world.store.finish(claimed.lease, RunOutcome.failed("boom", None))
    stored = await world.monitor.item(item.id)
    assert stored is not None
    return stored


def row(item: WorkItem) -> str:
    """The start of an item's row on the page of a dedup key."""
    return (
        f'<td><a href="/items/{item.id}">#{item.id}</a></td>\n'
        f"        <td>{item.kind}</td>\n"
        f"        <td>{item.status.value}</td>"
    )


class TestLookUpByDedupKey:
    async def test_the_one_item_with_the_key_opens_its_page_whatever_its_status(
        self, world: WebWorld
    ) -> None:
        item = await keyed(world, kind="work_item_retention", ends="failed")
        await keyed(world, "invoice-8")

        async with world.client() as client:
            answer = await client.get("/find", params={"q": KEY})
            page = await client.get("/find", params={"q": KEY}, follow_redirects=True)

        assert answer.status_code == 303
        assert answer.headers["location"] == f"/items/{item.id}"
        assert page.status_code == 200
        assert f"Item #{item.id}: work_item_retention" in page.text

    async def test_several_items_with_the_key_are_listed_newest_first_with_readable_times(
        self, world: WebWorld
    ) -> None:
        failed = await keyed(world, ends="failed")
        await world.clock.advance(4)
        queued = await keyed(world, kind="work_item_retention")
        await world.clock.advance(3)
        running = await keyed(world, ends="running")
        await keyed(world, "invoice-70")
        await world.clock.advance(2)

        async with world.client() as client:
            page = await client.get("/find", params={"q": KEY})

        assert page.status_code == 200
        assert "<title>Dedup key invoice-7 · workqueue</title>" in page.text
        listed = section(page.text, "found") or ""
        assert "<h2>Items with dedup key <code>invoice-7</code>, newest first</h2>" in listed
        rows = [listed.index(row(item)) for item in (running, queued, failed)]
        assert rows == sorted(rows)
        assert listed.count('<a href="/items/') == 3
        assert ">9 s ago</time></td>" in listed  # the failed item's enqueue
        assert ">2 s ago</time></td>" in listed  # the running item's enqueue
        assert "<td>\u2013</td>" in listed  # the queued item has not finished
        assert "more items have this key" not in listed

    async def test_no_item_with_the_id_or_key_is_a_404_saying_so_escaped(
        self, world: WebWorld
    ) -> None:
        await keyed(world)

        async with world.client() as client:
            plain = await client.get("/find", params={"q": "invoice"})
            hostile = await client.get("/find", params={"q": "<script>x</script>"})

        assert plain.status_code == 404
        assert "<p>No item has the id or dedup key \u201cinvoice\u201d.</p>" in plain.text
        assert hostile.status_code == 404
        assert "\u201c&lt;script&gt;x&lt;/script&gt;\u201d" in hostile.text
        assert "<script>x" not in hostile.text

    @pytest.mark.parametrize(
        "query", ["Invoice-7", "invoice-", "invoice-7 ", " invoice-7", "invoice%"]
    )
    async def test_only_the_exact_key_is_found(self, world: WebWorld, query: str) -> None:
        await keyed(world)
        await keyed(world, ends="running")

        async with world.client() as client:
            answer = await client.get("/find", params={"q": query})

        assert answer.status_code == 404

    async def test_a_key_of_several_items_is_escaped_in_their_list(self, world: WebWorld) -> None:
        key = '<b>"x"</b>'
        await keyed(world, key, ends="running")
        await keyed(world, key)

        async with world.client() as client:
            page = (await client.get("/find", params={"q": key})).text

        assert "<code>&lt;b&gt;&#34;x&#34;&lt;/b&gt;</code>" in page
        assert "<b>" not in page

    async def test_the_newest_are_listed_when_more_items_have_the_key(
        self, world: WebWorld
    ) -> None:
        items = [await keyed(world, ends="cancelled") for _ in range(FOUND_SHOWN + 1)]

        async with world.client() as client:
            page = (await client.get("/find", params={"q": KEY})).text

        listed = section(page, "found") or ""
        assert listed.count('<a href="/items/') == FOUND_SHOWN
        assert row(items[-1]) in listed
        assert f'href="/items/{items[0].id}"' not in listed
        assert (
            '<p class="note">The newest 50; more items have this key (<a href="/api/items?'
            'dedup_key=invoice-7&amp;limit=500">the newest 500 as JSON</a>).</p>'
        ) in listed

    async def test_as_many_items_as_are_listed_are_all_listed_with_no_note_of_more(
        self, world: WebWorld
    ) -> None:
        items = [await keyed(world, ends="cancelled") for _ in range(FOUND_SHOWN)]

        async with world.client() as client:
            page = (await client.get("/find", params={"q": KEY})).text

        listed = section(page, "found") or ""
        assert listed.count('<a href="/items/') == FOUND_SHOWN
        assert f'href="/items/{items[0].id}"' in listed
        assert "more items have this key" not in listed

    async def test_a_key_that_is_all_digits_reads_as_an_id_and_the_api_finds_it(
        self, world: WebWorld
    ) -> None:
        item = await keyed(world, "2024")

        async with world.client() as client:
            answer = await client.get("/find", params={"q": "2024"})
            found = (await client.get("/api/items", params={"dedup_key": "2024"})).json()

        assert answer.headers["location"] == "/items/2024"
        assert [entry["id"] for entry in found["items"]] == [item.id]


class TestTheItemsOfADedupKeyAsJson:
    async def test_they_are_the_item_documents_newest_first(self, world: WebWorld) -> None:
        failed = await keyed(world, ends="failed")
        queued = await keyed(world, kind="work_item_retention")
        await keyed(world, "invoice-70")

        async with world.client() as client:
            answer = await client.get("/api/items", params={"dedup_key": KEY})
            one = (await client.get(f"/api/items/{failed.id}")).json()

        assert answer.status_code == 200
        found = answer.json()
        assert found["dedup_key"] == KEY
        assert found["now"] == one["now"]
        assert [entry["id"] for entry in found["items"]] == [queued.id, failed.id]
        assert found["items"][1] == one["item"]

    async def test_the_limit_keeps_the_newest(self, world: WebWorld) -> None:
        items = [await keyed(world, ends="cancelled") for _ in range(3)]

        async with world.client() as client:
            found = (await client.get("/api/items", params={"dedup_key": KEY, "limit": 2})).json()

        assert [entry["id"] for entry in found["items"]] == [items[2].id, items[1].id]

    async def test_a_key_no_item_has_is_an_empty_list_not_a_404(self, world: WebWorld) -> None:
        async with world.client() as client:
            answer = await client.get("/api/items", params={"dedup_key": " invoice-7"})

        assert answer.status_code == 200
        assert answer.json()["items"] == []
        assert answer.json()["dedup_key"] == " invoice-7"

    @pytest.mark.parametrize(
        ("params", "error"),
        [
            ({}, "dedup_key must be given: the dedup key of the items to find"),
            ({"dedup_key": ""}, "dedup_key: dedup key must not be empty or blank"),
            ({"dedup_key": "a\x00b"}, "dedup_key: dedup key must not contain a NUL character"),
            ({"dedup_key": KEY, "limit": "501"}, "limit must be from 1 to 500"),
        ],
    )
    async def test_a_bad_parameter_is_a_400_saying_what_it_takes(
        self, world: WebWorld, params: dict[str, str], error: str
    ) -> None:
        async with world.client() as client:
            answer = await client.get("/api/items", params=params)

        assert answer.status_code == 400
        assert answer.json() == {"error": error}


class TestTheStatusFilter:
    def test_the_listed_statuses_are_the_live_and_unsuccessful_ones(self) -> None:
        assert [status.value for status in LISTED_STATUSES] == [
            "queued",
            "running",
            "failed",
            "cancelled",
        ]

    @pytest.mark.parametrize(
        ("status", "shown"),
        [
            (None, ShownLists(running=True, queued=True, unsuccessful=True)),
            (WorkStatus.QUEUED, ShownLists(running=False, queued=True, unsuccessful=False)),
            (WorkStatus.RUNNING, ShownLists(running=True, queued=False, unsuccessful=False)),
            (WorkStatus.FAILED, ShownLists(running=False, queued=False, unsuccessful=True)),
            (WorkStatus.CANCELLED, ShownLists(running=False, queued=False, unsuccessful=True)),
        ],
    )
    def test_a_status_shows_only_the_list_that_holds_it(
        self, status: WorkStatus | None, shown: ShownLists
    ) -> None:
        assert shown_lists(status) == shown

    @pytest.mark.parametrize("status", ["succeeded", "done", "QUEUED", "<b>x</b>", "\x00"])
    async def test_a_status_not_listed_is_a_400_naming_those_that_are(
        self, world: WebWorld, status: str
    ) -> None:
        async with world.client() as client:
            page = await client.get("/", params={"status": status})
            fragment = await client.get("/fragments/overview", params={"status": status})

        assert (page.status_code, fragment.status_code) == (400, 400)
        assert "<p>status must be one of queued, running, failed, cancelled</p>" in page.text
        assert "<b>x" not in page.text

    @pytest.mark.parametrize("status", ["", " "])
    async def test_a_blank_status_is_no_filter(self, world: WebWorld, status: str) -> None:
        async with world.client() as client:
            html = (await client.get("/", params={"status": status})).text

        for list_id in ("running", "queued", "failures"):
            assert section(html, list_id) is not None
        assert "Chosen from the latest" not in html

    async def test_running_shows_only_the_running_items(self, world: WebWorld) -> None:
        running = await world.running()
        queued = await world.queue.enqueue(TokenCleanup())

        async with world.client() as client:
            html = (await client.get("/", params={"status": " running "})).text

        assert f'id="running-{running.id}"' in html
        assert section(html, "queued") is None
        assert section(html, "failures") is None
        queued_row = f'href="/items/{queued.id}">#{queued.id}</a></td>\n        <td>token_cleanup'
        assert queued_row not in html
        assert '<option value="running" selected>running</option>' in html
        assert (
            'data-live-src="/fragments/overview?kind=&amp;status=running&amp;after=0&amp;window=hour"'
            in html
        )

    async def test_queued_shows_only_the_queued_items(self, world: WebWorld) -> None:
        await world.running()
        queued = await world.queue.enqueue(TokenCleanup())

        async with world.client() as client:
            html = (await client.get("/", params={"status": "queued"})).text

        assert section(html, "running") is None
        assert section(html, "failures") is None
        assert f'href="/items/{queued.id}"' in (section(html, "queued") or "")

    @pytest.mark.parametrize("status", [WorkStatus.FAILED, WorkStatus.CANCELLED])
    async def test_an_unsuccessful_status_shows_its_items_alone(
        self, world: WebWorld, status: WorkStatus
    ) -> None:
        failed = await world.failed("boom")
        cancelled = await world.queue.enqueue(TokenCleanup())
        await world.store.cancel(cancelled.id, reason="no longer wanted")

        async with world.client() as client:
            html = (await client.get("/", params={"status": status.value})).text

        listed = section(html, "failures") or ""
        shown, hidden = (failed.id, cancelled.id)
        if status is WorkStatus.CANCELLED:
            shown, hidden = hidden, shown
        assert f'href="/items/{shown}"' in listed
        assert f'href="/items/{hidden}"' not in listed
        assert f"<h2>Latest unsuccessful, {status.value}</h2>" in listed
        assert '<p class="note">Chosen from the latest 500 unsuccessful items.</p>' in listed
        assert section(html, "running") is None
        assert section(html, "queued") is None


class TestTheKindFilter:
    async def test_every_list_shows_only_the_kinds_items(self, world: WebWorld) -> None:
        cleanup = await world.running(kind="token_cleanup")
        retention = await world.running(kind="work_item_retention")
        await world.store.finish(cleanup.lease, RunOutcome.failed("cleanup broke", None))
        await world.store.finish(retention.lease, RunOutcome.failed("retention broke", None))
        running = await world.running(kind="work_item_retention")
        other_running = await world.running(kind="token_cleanup")
        queued = await world.queue.enqueue(WorkItemRetention())
        other_queued = await world.queue.enqueue(TokenCleanup())

        async with world.client() as client:
            html = (
                await client.get("/", params={"kind": "work_item_retention", "status": ""})
            ).text

        running_list = section(html, "running") or ""
        assert f'id="running-{running.id}"' in running_list
        assert f'id="running-{other_running.id}"' not in running_list
        assert "<h2>Running of kind work_item_retention (1)</h2>" in running_list
        queued_list = section(html, "queued") or ""
        assert f'href="/items/{queued.id}"' in queued_list
        assert f'href="/items/{other_queued.id}"' not in queued_list
        failures = section(html, "failures") or ""
        assert f'href="/items/{retention.id}"' in failures
        assert f'href="/items/{cleanup.id}"' not in failures
        assert "<h2>Latest unsuccessful of kind work_item_retention</h2>" in failures
        assert "Chosen from the latest 500 unsuccessful items." in failures
        assert '<option value="work_item_retention" selected>' in html

    async def test_kind_and_status_together(self, world: WebWorld) -> None:
        retention = await world.running(kind="work_item_retention")
        await world.store.finish(retention.lease, RunOutcome.failed("broke", None))
        cleanup = await world.failed("boom")
        cancelled = await world.queue.enqueue(WorkItemRetention())
        await world.store.cancel(cancelled.id, reason="no")

        async with world.client() as client:
            html = (
                await client.get("/", params={"kind": "work_item_retention", "status": "failed"})
            ).text

        failures = section(html, "failures") or ""
        assert f'href="/items/{retention.id}"' in failures
        assert f'href="/items/{cleanup.id}"' not in failures
        assert f'href="/items/{cancelled.id}"' not in failures
        assert "<h2>Latest unsuccessful of kind work_item_retention, failed</h2>" in failures

    async def test_the_pages_of_a_filtered_list_keep_the_filter(self, world: WebWorld) -> None:
        ids = [(await world.queue.enqueue(TokenCleanup())).id for _ in range(51)]

        async with world.client() as client:
            first = await client.get("/", params={"kind": "token_cleanup", "status": "queued"})
            second = await client.get(
                "/", params={"kind": "token_cleanup", "status": "queued", "after": ids[49]}
            )

        assert (
            'href="/?kind=token_cleanup&amp;status=queued&amp;window=hour'
            f'&amp;after={ids[49]}">Next page'
        ) in first.text
        assert (
            'href="/?kind=token_cleanup&amp;status=queued&amp;window=hour">First page'
            in second.text
        )

    async def test_the_filter_form_sits_outside_the_live_region_with_a_way_back(
        self, world: WebWorld
    ) -> None:
        async with world.client() as client:
            plain = (await client.get("/")).text
            fragment = (await client.get("/fragments/overview", params={"status": "queued"})).text
            filtered = (await client.get("/", params={"status": "queued"})).text

        form = plain.index('<form method="get" action="/" id="filter-form">')
        assert form < plain.index('<div id="live"')
        assert "filter-form" not in fragment
        assert "Clear the filter" not in plain
        assert '<a href="/">Clear the filter</a>' in filtered
        assert '<option value="">every status</option>' in plain
        for name in ("queued", "running", "failed", "cancelled"):
            assert f'<option value="{name}">{name}</option>' in plain


class AskedUnsuccessful:
    """A monitor answering only recent_unsuccessful, recording the limits asked."""

    def __init__(self, items: Sequence[Any]) -> None:
        self.items = list(items)
        self.limits: list[int] = []

    async def recent_unsuccessful(self, *, limit: int) -> list[Any]:
        self.limits.append(limit)
        return self.items[:limit]


class AskedByKey:
    """A monitor answering only items_by_dedup_key, recording the limits asked."""

    def __init__(self, items: Sequence[Any]) -> None:
        self.items = list(items)
        self.limits: list[int] = []

    async def items_by_dedup_key(self, dedup_key: str, *, limit: int) -> list[Any]:
        self.limits.append(limit)
        return self.items[:limit]


class TestHowManyAreRead:
    async def test_a_dedup_keys_page_reads_one_item_more_than_it_lists(
        self, world: WebWorld
    ) -> None:
        for _ in range(FOUND_SHOWN + 3):
            await keyed(world, ends="cancelled")
        asked = AskedByKey(await world.monitor.items_by_dedup_key(KEY, limit=MAX_LIMIT))
        world.monitor.items_by_dedup_key = asked.items_by_dedup_key  # type: ignore[method-assign]

        async with world.client() as client:
            page = (await client.get("/find", params={"q": KEY})).text

        assert asked.limits == [FOUND_SHOWN + 1]
        assert (section(page, "found") or "").count('<a href="/items/') == FOUND_SHOWN

    async def test_without_a_filter_only_the_shown_unsuccessful_are_read(
        self, world: WebWorld
    ) -> None:
        for number in range(FAILURES_SHOWN + 2):
            await world.failed(f"error {number}")
        asked = AskedUnsuccessful(await world.monitor.recent_unsuccessful(limit=MAX_LIMIT))
        world.monitor.recent_unsuccessful = asked.recent_unsuccessful  # type: ignore[method-assign]

        async with world.client() as client:
            plain = (await client.get("/")).text
            filtered = (await client.get("/", params={"status": "failed"})).text

        assert asked.limits == [FAILURES_SHOWN, UNSUCCESSFUL_SCANNED]
        assert UNSUCCESSFUL_SCANNED == MAX_LIMIT
        # Both show the latest FAILURES_SHOWN: error 21 down to error 2.
        for html in (plain, filtered):
            failures = section(html, "failures") or ""
            assert "error 21<" in failures
            assert "error 2<" in failures
            assert "error 1<" not in failures

    def test_narrowing_keeps_the_order_and_the_first_limit(self) -> None:
        items = [
            SimpleNamespace(id=1, kind="a", status=WorkStatus.FAILED),
            SimpleNamespace(id=2, kind="b", status=WorkStatus.FAILED),
            SimpleNamespace(id=3, kind="a", status=WorkStatus.CANCELLED),
            SimpleNamespace(id=4, kind="a", status=WorkStatus.FAILED),
            SimpleNamespace(id=5, kind="a", status=WorkStatus.FAILED),
        ]
        typed: list[WorkItem] = items  # type: ignore[assignment]

        def ids(found: list[WorkItem]) -> list[int]:
            return [item.id for item in found]

        assert ids(narrowed(typed, kind=None, status=None)) == [1, 2, 3, 4, 5]
        assert ids(narrowed(typed, kind="a", status=None)) == [1, 3, 4, 5]
        assert ids(narrowed(typed, kind=None, status=WorkStatus.FAILED)) == [1, 2, 4, 5]
        assert ids(narrowed(typed, kind="a", status=WorkStatus.FAILED, limit=2)) == [1, 4]
        assert ids(narrowed(typed, kind="c", status=None)) == []
