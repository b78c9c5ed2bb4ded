"""The view's bulk actions on a kind (docs/adr/0041): a page counts what a requeue of its
failed items, or a cancel of its queued ones, would take and the highest id among them;
its form, with the admin token, does it for those items only, and the page after says
what was done and what was left."""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from datetime import timedelta
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from web_world import KINDS, LEASE, WebWorld

from workqueue.domain import (
    BulkAction,
    BulkBatch,
    EnqueueRequest,
    RunOutcome,
    TokenCleanup,
    WorkItemRetention,
    WorkStatus,
)

TOKEN = "an-admin-token-of-some-length"
SAME_ORIGIN = {"origin": "http://view"}
LARGEST = 2**63 - 1
ONLY_SELECT = (
    ">The view&#39;s database role may only read: a bulk requeue or cancel needs UPDATE and "
    "INSERT on work_items (see the README&#39;s grants).<"
)
REQUEUE_CHANGED = (
    "left as they changed meanwhile (requeued by another press, or deleted by retention)"
)
CANCEL_CHANGED = "left as they changed meanwhile (claimed by a worker, or cancelled)"


@pytest.fixture
def world() -> WebWorld:
    return WebWorld()


async def failed_items(world: WebWorld, count: int, *, kind: str = "token_cleanup") -> list[int]:
    """``count`` items of ``kind`` that ran and failed, oldest first (before any is queued)."""
    ids = []
    for number in range(count):
        item = await world.running(worker_id="w-old", kind=kind)
        await world.store.finish(item.lease, RunOutcome.failed(f"boom {number}", None))
        ids.append(item.id)
    return ids


async def queued_items(world: WebWorld, count: int) -> list[int]:
    results = await world.queue.enqueue_many([EnqueueRequest(TokenCleanup())] * count)
    return [result.id for result in results]


def fields_of(html: str) -> dict[str, str]:
    """The hidden fields of the page's bulk form."""
    form = html.split('id="bulk-form"', 1)[1].split("</form>", 1)[0]
    return dict(re.findall(r'<input type="hidden" name="([a-z_]+)" value="([^"]*)">', form))


async def confirmed(client: httpx.AsyncClient, path: str) -> dict[str, str]:
    """What the confirmation at ``path`` posts, the token typed in."""
    page = await client.get(path)
    assert page.status_code == 200
    return {**fields_of(page.text), "token": TOKEN}


async def press(client: httpx.AsyncClient, path: str, form: dict[str, str]) -> httpx.Response:
    return await client.post(path, data=form, headers=SAME_ORIGIN)


def result_rows(html: str) -> list[tuple[str, str]]:
    table = html.split('id="bulk-result"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<th scope="row">([^<]*)</th><td class="number">([^<]*)</td>', table)


def notice(html: str) -> str:
    return html.split('<p class="notice" id="notice" role="status">', 1)[1].split("</p>", 1)[0]


def view_log(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "workqueue.web"]


class TestTheConfirmation:
    async def test_it_shows_how_many_failed_items_a_requeue_takes_and_the_highest_id(
        self, world: WebWorld
    ) -> None:
        ids = await failed_items(world, 3)
        await queued_items(world, 1)

        async with world.client(token=TOKEN) as client:
            response = await client.get("/kinds/token_cleanup/requeue-failed")

        html = response.text
        assert response.status_code == 200
        assert "<title>Requeue the failed items of token_cleanup · workqueue</title>" in html
        assert (
            f'<p id="bulk-scope">3 failed items of token_cleanup will be queued again '
            f"(ids up to {ids[-1]}).</p>"
        ) in html
        assert '<form method="post" action="/kinds/token_cleanup/requeue-failed"' in html
        assert fields_of(html) == {"up_to_id": str(ids[-1]), "shown": "3"}
        assert 'type="password" name="token" id="bulk-token"' in html
        assert 'name="reason"' not in html
        assert '<button type="submit" id="bulk-button">Requeue 3 failed items</button>' in html
        assert (
            '<p class="note">Each runs again as a new queued item with its payload and dedup '
            "key; the failed one stays failed, marked as requeued, and no later bulk requeue "
            "takes it again (the overview still counts it failed). Items that fail after this "
            "count was read are left.</p>"
        ) in html

    async def test_a_cancel_counts_the_queued_items_delayed_ones_too_and_asks_a_reason(
        self, world: WebWorld
    ) -> None:
        await world.running()
        first = (await world.queue.enqueue(TokenCleanup())).id
        delayed = (await world.queue.enqueue(TokenCleanup(), delay=timedelta(hours=1))).id
        await world.queue.enqueue(WorkItemRetention())

        async with world.client(token=TOKEN) as client:
            html = (await client.get("/kinds/token_cleanup/cancel-queued")).text

        assert (f"2 queued items of token_cleanup will be cancelled (ids up to {delayed}).") in html
        assert delayed > first
        assert fields_of(html) == {"up_to_id": str(delayed), "shown": "2"}
        assert 'type="text" name="reason" id="bulk-reason" maxlength="1000"' in html
        assert "Cancel 2 queued items</button>" in html
        assert "<title>Cancel the queued items of token_cleanup · workqueue</title>" in html
        assert (
            '<p class="note">Each ends cancelled at once, delayed ones too; no worker runs it. '
            "Items enqueued after this count was read are left.</p>"
        ) in html

    async def test_counts_read_with_thousands_separators_and_one_item_in_the_singular(
        self, world: WebWorld
    ) -> None:
        (failed,) = await failed_items(world, 1)
        ids = await queued_items(world, 1234)

        async with world.client(token=TOKEN) as client:
            cancel = (await client.get("/kinds/token_cleanup/cancel-queued")).text
            requeue = (await client.get("/kinds/token_cleanup/requeue-failed")).text
            form = {**fields_of(cancel), "token": TOKEN}
            cancelled = await press(client, "/kinds/token_cleanup/cancel-queued", form)

        assert (
            f"1,234 queued items of token_cleanup will be cancelled (ids up to {ids[-1]})."
        ) in cancel
        assert "Cancel 1,234 queued items</button>" in cancel
        assert f"1 failed item of token_cleanup will be queued again (ids up to {failed})." in (
            requeue
        )
        assert "Requeue 1 failed item</button>" in requeue
        assert notice(cancelled.text) == "Cancelled 1,234 queued items of token_cleanup."
        assert result_rows(cancelled.text) == [
            ("Cancelled", "1,234"),
            (f"Of the 1,234 shown, {CANCEL_CHANGED}", "0"),
        ]

    @pytest.mark.parametrize(
        ("action", "line"),
        [
            (
                "requeue-failed",
                "Nothing to do: no failed item of token_cleanup is left to requeue.",
            ),
            ("cancel-queued", "Nothing to do: no queued item of token_cleanup is left to cancel."),
        ],
    )
    async def test_with_nothing_to_do_it_says_so_and_has_no_form(
        self, world: WebWorld, action: str, line: str
    ) -> None:
        await failed_items(world, 1, kind="work_item_retention")
        await world.running()

        async with world.client(token=TOKEN) as client:
            response = await client.get(f"/kinds/token_cleanup/{action}")

        assert response.status_code == 200
        assert f'<p id="bulk-scope">{line}</p>' in response.text
        assert '<form method="post"' not in response.text

    async def test_a_read_only_view_shows_the_count_and_no_form(self, world: WebWorld) -> None:
        await failed_items(world, 2)

        async with world.client() as client:
            html = (await client.get("/kinds/token_cleanup/requeue-failed")).text

        assert "2 failed items of token_cleanup will be queued again" in html
        assert "Read-only." in html
        assert '<form method="post"' not in html


class TestABulkRequeue:
    async def test_with_the_token_each_failed_item_is_requeued_and_the_page_says_so(
        self, world: WebWorld, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.INFO, logger="workqueue.web")
        ids = await failed_items(world, 3)
        path = "/kinds/token_cleanup/requeue-failed"

        async with world.client(token=TOKEN) as client:
            response = await press(client, path, await confirmed(client, path))

        assert response.status_code == 200
        assert notice(response.text) == "Requeued 3 failed items of token_cleanup."
        assert result_rows(response.text) == [
            ("Queued again as new items", "3"),
            ("Absorbed by a queued item of the same dedup key", "0"),
            ("Left failed, as their payload no longer validates", "0"),
            (f"Of the 3 shown, {REQUEUE_CHANGED}", "0"),
        ]
        assert 'id="bulk-invalid"' not in response.text
        assert 'id="bulk-form"' not in response.text
        new = [item for item in world.state.snapshot() if item.status is WorkStatus.QUEUED]
        assert [(item.kind, item.attempt) for item in new] == [("token_cleanup", 0)] * 3
        assert [world.state.items[item_id].status for item_id in ids] == [WorkStatus.FAILED] * 3
        assert [world.state.items[item_id].requeued_as for item_id in ids] == [
            item.id for item in new
        ]
        assert view_log(caplog) == [
            (
                "INFO",
                "web requeue-failed of kind token_cleanup: Requeued 3 failed items of "
                "token_cleanup. Queued again as new items: 3; Absorbed by a queued item of the "
                "same dedup key: 0; Left failed, as their payload no longer validates: 0; "
                f"Of the 3 shown, {REQUEUE_CHANGED}: 0.",
            )
        ]
        assert getattr(caplog.records[-1], "kind", None) == "token_cleanup"

    async def test_a_requeued_item_links_the_item_that_replaced_it_on_its_page_and_in_the_api(
        self, world: WebWorld
    ) -> None:
        [failed] = await failed_items(world, 1)
        path = "/kinds/token_cleanup/requeue-failed"

        async with world.client(token=TOKEN) as client:
            await press(client, path, await confirmed(client, path))
            page = (await client.get(f"/items/{failed}")).text
            document = (await client.get(f"/api/items/{failed}")).json()["item"]
            new = world.state.items[failed].requeued_as
            new_page = (await client.get(f"/items/{new}")).text

        assert new is not None
        assert document["requeued_as"] == new
        assert (
            f'<td id="requeued-as"><a href="/items/{new}">item #{new}</a> (a bulk requeue)</td>'
            in page
        )
        assert 'id="requeued-as"' not in new_page

    async def test_pressed_twice_the_second_requeues_nothing(self, world: WebWorld) -> None:
        ids = await failed_items(world, 3)
        path = "/kinds/token_cleanup/requeue-failed"

        async with world.client(token=TOKEN) as client:
            form = await confirmed(client, path)
            first = await press(client, path, form)
            second = await press(client, path, form)
            again = (await client.get(path)).text

        assert (first.status_code, second.status_code) == (200, 409)
        assert notice(second.text) == (
            f"Nothing to do: no failed item of token_cleanup up to id {ids[-1]} is left to requeue."
        )
        assert result_rows(second.text)[0] == ("Queued again as new items", "0")
        assert result_rows(second.text)[-1] == (f"Of the 3 shown, {REQUEUE_CHANGED}", "3")
        assert len(world.state.items) == 6
        assert "Nothing to do: no failed item of token_cleanup is left to requeue." in again

    async def test_items_failed_after_the_count_was_read_are_left(self, world: WebWorld) -> None:
        shown = await failed_items(world, 2)
        path = "/kinds/token_cleanup/requeue-failed"

        async with world.client(token=TOKEN) as client:
            form = await confirmed(client, path)
            later = await failed_items(world, 2)
            response = await press(client, path, form)
            again = (await client.get(path)).text

        assert notice(response.text) == "Requeued 2 failed items of token_cleanup."
        assert [world.state.items[i].requeued_as is None for i in shown + later] == [
            False,
            False,
            True,
            True,
        ]
        assert f"2 failed items of token_cleanup will be queued again (ids up to {later[-1]})" in (
            again
        )

    async def test_a_failed_item_with_a_queued_twin_is_absorbed_by_it(
        self, world: WebWorld
    ) -> None:
        await world.queue.enqueue(TokenCleanup(), dedup_key="nightly")
        item = await world.store.claim(["token_cleanup"], worker_id="w", lease_duration=LEASE)
        assert item is not None
        await world.store.finish(item.lease, RunOutcome.failed("boom", None))
        (plain,) = await failed_items(world, 1)
        twin = (await world.queue.enqueue(TokenCleanup(), dedup_key="nightly")).id
        path = "/kinds/token_cleanup/requeue-failed"

        async with world.client(token=TOKEN) as client:
            response = await press(client, path, await confirmed(client, path))

        assert response.status_code == 200
        assert notice(response.text) == "Requeued 2 failed items of token_cleanup."
        assert result_rows(response.text)[:2] == [
            ("Queued again as new items", "1"),
            ("Absorbed by a queued item of the same dedup key", "1"),
        ]
        assert world.state.items[item.id].requeued_as == twin
        assert world.state.items[plain].requeued_as == twin + 1

    async def test_one_requeued_item_is_said_in_the_singular(self, world: WebWorld) -> None:
        await failed_items(world, 1)
        path = "/kinds/token_cleanup/requeue-failed"

        async with world.client(token=TOKEN) as client:
            response = await press(client, path, await confirmed(client, path))

        assert notice(response.text) == "Requeued 1 failed item of token_cleanup."

    async def test_a_failed_item_whose_payload_no_longer_validates_is_left_and_linked(
        self, world: WebWorld, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.INFO, logger="workqueue.web")
        stale = await world.failed_with_a_stale_payload()
        (valid,) = await failed_items(world, 1, kind="work_item_retention")
        path = "/kinds/work_item_retention/requeue-failed"

        async with world.client(token=TOKEN) as client:
            response = await press(client, path, await confirmed(client, path))

        assert response.status_code == 200
        assert notice(response.text) == "Requeued 1 failed item of work_item_retention."
        assert result_rows(response.text)[2] == (
            "Left failed, as their payload no longer validates",
            "1",
        )
        assert (
            '<p id="bulk-invalid">Left failed, as their payload no longer validates: '
            f'<a href="/items/{stale.id}">#{stale.id}</a>.</p>'
        ) in response.text
        assert world.state.items[stale.id].requeued_as is None
        assert world.state.items[valid].requeued_as is not None
        ((level, line),) = view_log(caplog)
        assert level == "WARNING"
        assert line.endswith(f"; Left failed: items {stale.id}.")

    async def test_requeued_absorbed_left_and_changed_items_are_each_counted_and_logged(
        self, world: WebWorld, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.INFO, logger="workqueue.web")
        await world.queue.enqueue(WorkItemRetention(), dedup_key="nightly")
        twin_failed = await world.store.claim(
            ["work_item_retention"], worker_id="w", lease_duration=LEASE
        )
        assert twin_failed is not None
        await world.store.finish(twin_failed.lease, RunOutcome.failed("boom", None))
        stale = [(await world.failed_with_a_stale_payload()).id for _ in range(2)]
        plain, taken_meanwhile = await failed_items(world, 2, kind="work_item_retention")
        await world.queue.enqueue(WorkItemRetention(), dedup_key="nightly")
        path = "/kinds/work_item_retention/requeue-failed"

        async with world.client(token=TOKEN) as client:
            form = await confirmed(client, path)
            other = world.state.items[taken_meanwhile]
            world.state.write(replace(other, requeued_as=LARGEST))
            response = await press(client, path, form)

        assert response.status_code == 200
        assert notice(response.text) == "Requeued 2 failed items of work_item_retention."
        assert result_rows(response.text) == [
            ("Queued again as new items", "1"),
            ("Absorbed by a queued item of the same dedup key", "1"),
            ("Left failed, as their payload no longer validates", "2"),
            (f"Of the 5 shown, {REQUEUE_CHANGED}", "1"),
        ]
        assert world.state.items[plain].requeued_as is not None
        assert view_log(caplog) == [
            (
                "WARNING",
                "web requeue-failed of kind work_item_retention: Requeued 2 failed items of "
                "work_item_retention. Queued again as new items: 1; Absorbed by a queued item "
                "of the same dedup key: 1; Left failed, as their payload no longer validates: "
                f"2; Of the 5 shown, {REQUEUE_CHANGED}: 1; Left failed: items "
                f"{stale[0]}, {stale[1]}.",
            )
        ]

    async def test_only_items_whose_payload_no_longer_validates_is_a_422_listing_each(
        self, world: WebWorld
    ) -> None:
        stale = [(await world.failed_with_a_stale_payload()).id for _ in range(2)]
        path = "/kinds/work_item_retention/requeue-failed"

        async with world.client(token=TOKEN) as client:
            response = await press(client, path, await confirmed(client, path))

        assert response.status_code == 422
        assert notice(response.text) == "Requeued 0 failed items of work_item_retention."
        assert (
            f'<a href="/items/{stale[0]}">#{stale[0]}</a>, '
            f'<a href="/items/{stale[1]}">#{stale[1]}</a>.</p>'
        ) in response.text
        assert all(item.status is WorkStatus.FAILED for item in world.state.snapshot())

    async def test_items_of_a_kind_this_view_has_no_model_for_are_a_400_naming_it(
        self, world: WebWorld
    ) -> None:
        (failed,) = await failed_items(world, 1)
        world.state.write(replace(world.state.items[failed], kind="legacy"))
        before = world.state.snapshot()
        path = "/kinds/legacy/requeue-failed"

        async with world.client(token=TOKEN) as client:
            response = await press(client, path, await confirmed(client, path))

        assert response.status_code == 400
        assert notice(response.text) == (
            "Refused: unknown kind &#39;legacy&#39; (known kinds: token_cleanup, "
            "work_item_retention); this view has no payload model to requeue its items with."
        )
        assert world.state.snapshot() == before


class TestABulkCancel:
    async def test_with_the_token_each_queued_item_is_cancelled_with_the_reason(
        self, world: WebWorld, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.INFO, logger="workqueue.web")
        running = await world.running()
        ids = await queued_items(world, 3)
        other = (await world.queue.enqueue(WorkItemRetention())).id
        path = "/kinds/token_cleanup/cancel-queued"

        async with world.client(token=TOKEN) as client:
            form = await confirmed(client, path)
            response = await press(client, path, {**form, "reason": "  partner <b>gone</b> "})

        assert response.status_code == 200
        assert notice(response.text) == "Cancelled 3 queued items of token_cleanup."
        assert result_rows(response.text) == [
            ("Cancelled", "3"),
            (f"Of the 3 shown, {CANCEL_CHANGED}", "0"),
        ]
        assert [(world.state.items[i].status, world.state.items[i].error) for i in ids] == [
            (WorkStatus.CANCELLED, "partner <b>gone</b>")
        ] * 3
        assert world.state.items[running.id].status is WorkStatus.RUNNING
        assert world.state.items[other].status is WorkStatus.QUEUED
        assert view_log(caplog) == [
            (
                "INFO",
                "web cancel-queued of kind token_cleanup: Cancelled 3 queued items of "
                f"token_cleanup. Cancelled: 3; Of the 3 shown, {CANCEL_CHANGED}: 0.",
            )
        ]

    @pytest.mark.parametrize("form", [{}, {"reason": ""}, {"reason": "   "}])
    async def test_without_a_reason_the_items_say_an_operator_cancelled_them(
        self, world: WebWorld, form: dict[str, str]
    ) -> None:
        (item_id,) = await queued_items(world, 1)
        path = "/kinds/token_cleanup/cancel-queued"

        async with world.client(token=TOKEN) as client:
            response = await press(client, path, {**await confirmed(client, path), **form})

        assert notice(response.text) == "Cancelled 1 queued item of token_cleanup."
        assert world.state.items[item_id].error == "cancelled by an operator"

    async def test_items_enqueued_or_claimed_after_the_count_was_read_are_left(
        self, world: WebWorld
    ) -> None:
        ids = await queued_items(world, 3)
        path = "/kinds/token_cleanup/cancel-queued"

        async with world.client(token=TOKEN) as client:
            form = await confirmed(client, path)
            claimed = await world.store.claim(KINDS, worker_id="w", lease_duration=LEASE)
            later = await queued_items(world, 1)
            response = await press(client, path, form)
            second = await press(client, path, form)

        assert claimed is not None
        assert claimed.id == ids[0]
        assert notice(response.text) == "Cancelled 2 queued items of token_cleanup."
        assert result_rows(response.text)[-1] == (f"Of the 3 shown, {CANCEL_CHANGED}", "1")
        assert [world.state.items[i].status for i in [*ids, *later]] == [
            WorkStatus.RUNNING,
            WorkStatus.CANCELLED,
            WorkStatus.CANCELLED,
            WorkStatus.QUEUED,
        ]
        assert second.status_code == 409
        assert notice(second.text) == (
            f"Nothing to do: no queued item of token_cleanup up to id {ids[-1]} is left to cancel."
        )

    @pytest.mark.parametrize(
        ("reason", "refusal"),
        [
            ("a\x00b", "Refused: a cancel reason cannot hold a NUL character."),
            ("x" * 1001, "Refused: a cancel reason is at most 1000 characters, not 1001."),
        ],
    )
    @pytest.mark.parametrize("read_only", [False, True])
    async def test_a_reason_no_store_can_hold_is_a_400_and_nothing_is_cancelled(
        self, world: WebWorld, reason: str, refusal: str, read_only: bool
    ) -> None:
        await queued_items(world, 2)
        before = world.state.snapshot()
        path = "/kinds/token_cleanup/cancel-queued"

        async with world.client(token=TOKEN, read_only=read_only) as client:
            form = await confirmed(client, path)
            response = await press(client, path, {**form, "reason": reason})

        assert response.status_code == 400
        assert notice(response.text) == refusal
        assert world.state.snapshot() == before


class TestTheChecks:
    @pytest.mark.parametrize("action", ["requeue-failed", "cancel-queued"])
    @pytest.mark.parametrize(
        ("client_token", "form", "headers", "refusal"),
        [
            (TOKEN, {}, SAME_ORIGIN, "Refused: the admin token is missing or wrong."),
            (
                TOKEN,
                {"token": "wrong"},
                SAME_ORIGIN,
                "Refused: the admin token is missing or wrong.",
            ),
            (
                TOKEN,
                {"token": TOKEN},
                {"origin": "http://evil.example"},
                "Refused: the request did not come from this view&#39;s own page.",
            ),
            (
                TOKEN,
                {"token": TOKEN},
                {},
                "Refused: the request did not come from this view&#39;s own page.",
            ),
            (
                None,
                {"token": TOKEN},
                SAME_ORIGIN,
                "This view is read-only: set WORKQUEUE_WEB_TOKEN to enable cancel, requeue, "
                "pause and resume.",
            ),
        ],
    )
    async def test_a_post_without_the_token_or_from_another_origin_is_refused_and_nothing_changes(
        self,
        world: WebWorld,
        action: str,
        client_token: str | None,
        form: dict[str, str],
        headers: dict[str, str],
        refusal: str,
    ) -> None:
        failed = await failed_items(world, 2)
        queued = await queued_items(world, 2)
        before = world.state.snapshot()
        up_to = {"up_to_id": str(max(*failed, *queued)), "shown": "2"}

        async with world.client(token=client_token) as client:
            response = await client.post(
                f"/kinds/token_cleanup/{action}", data={**up_to, **form}, headers=headers
            )

        assert response.status_code == 403
        assert notice(response.text) == refusal
        assert world.state.snapshot() == before

    async def test_a_refused_post_shows_the_confirmation_again_as_it_reads_now(
        self, world: WebWorld
    ) -> None:
        ids = await failed_items(world, 2)

        async with world.client(token=TOKEN) as client:
            response = await client.post(
                "/kinds/token_cleanup/requeue-failed",
                data={"up_to_id": str(ids[0]), "shown": "1", "token": "wrong"},
                headers=SAME_ORIGIN,
            )

        assert f"2 failed items of token_cleanup will be queued again (ids up to {ids[1]})" in (
            response.text
        )
        assert fields_of(response.text) == {"up_to_id": str(ids[1]), "shown": "2"}

    @pytest.mark.parametrize("action", ["requeue-failed", "cancel-queued"])
    @pytest.mark.parametrize(
        "up_to_id", [None, "", " ", "0", "-1", "+3", "1.5", "1_000", "abc", "\uff13", str(2**63)]
    )
    async def test_an_up_to_id_that_is_no_id_is_a_400_and_nothing_changes(
        self, world: WebWorld, action: str, up_to_id: str | None
    ) -> None:
        await failed_items(world, 3)
        await queued_items(world, 3)
        before = world.state.snapshot()
        form = {"token": TOKEN, "shown": "3"}
        if up_to_id is not None:
            form["up_to_id"] = up_to_id

        async with world.client(token=TOKEN) as client:
            response = await press(client, f"/kinds/token_cleanup/{action}", form)

        assert response.status_code == 400
        assert notice(response.text) == (
            f"Refused: up_to_id must be a whole number from 1 to {LARGEST}: the highest id "
            "the confirmation showed."
        )
        assert world.state.snapshot() == before

    @pytest.mark.parametrize("shown", [None, "", "-1", "x", "2.0", str(2**63)])
    async def test_a_shown_count_that_is_no_count_is_a_400_and_nothing_changes(
        self, world: WebWorld, shown: str | None
    ) -> None:
        await queued_items(world, 2)
        before = world.state.snapshot()
        form = {"token": TOKEN, "up_to_id": "2"}
        if shown is not None:
            form["shown"] = shown

        async with world.client(token=TOKEN) as client:
            response = await press(client, "/kinds/token_cleanup/cancel-queued", form)

        assert response.status_code == 400
        assert notice(response.text) == (
            f"Refused: shown must be a whole number from 0 to {LARGEST}: the count the "
            "confirmation showed."
        )
        assert world.state.snapshot() == before

    @pytest.mark.parametrize(
        ("up_to_id", "shown", "cancelled"), [(" 2 ", "0", 2), (str(LARGEST), "9", 3), ("1", "1", 1)]
    )
    async def test_any_id_and_count_within_a_bigint_will_do(
        self, world: WebWorld, up_to_id: str, shown: str, cancelled: int
    ) -> None:
        await queued_items(world, 3)
        form = {"token": TOKEN, "up_to_id": up_to_id, "shown": shown}

        async with world.client(token=TOKEN) as client:
            response = await press(client, "/kinds/token_cleanup/cancel-queued", form)

        assert response.status_code == 200
        statuses = [item.status for item in world.state.snapshot()]
        assert statuses.count(WorkStatus.CANCELLED) == cancelled
        rows = result_rows(response.text)
        assert rows[-1][0] == f"Of the {shown} shown, {CANCEL_CHANGED}"
        assert rows[-1][1] == str(max(int(shown) - cancelled, 0))

    @pytest.mark.parametrize("action", ["requeue-failed", "cancel-queued"])
    async def test_a_kind_with_a_nul_character_is_a_400_and_never_sent_to_the_database(
        self, world: WebWorld, action: str
    ) -> None:
        async with world.client(token=TOKEN) as client:
            response = await press(
                client,
                f"/kinds/token_cleanup%00/{action}",
                {"token": TOKEN, "up_to_id": "5", "shown": "1"},
            )

        assert response.status_code == 400
        assert notice(response.text) == (
            "Refused: the kind contains a NUL character, which the database cannot store."
        )

    @pytest.mark.parametrize("action", ["requeue-failed", "cancel-queued"])
    async def test_the_token_and_origin_are_checked_before_the_fields(
        self, world: WebWorld, action: str
    ) -> None:
        async with world.client(token=TOKEN) as client:
            response = await client.post(
                f"/kinds/a%00/{action}", data={"token": "wrong", "up_to_id": "x"}
            )

        assert response.status_code == 403

    @pytest.mark.parametrize("action", ["requeue-failed", "cancel-queued"])
    async def test_a_role_that_may_only_read_is_a_403_saying_so_and_nothing_changes(
        self, world: WebWorld, action: str
    ) -> None:
        await failed_items(world, 2)
        await queued_items(world, 2)
        before = world.state.snapshot()
        path = f"/kinds/token_cleanup/{action}"

        async with world.client(token=TOKEN, read_only=True) as client:
            response = await press(client, path, await confirmed(client, path))

        assert response.status_code == 403
        assert ONLY_SELECT in response.text
        assert world.state.snapshot() == before

    @pytest.mark.parametrize("action", list(BulkAction))
    async def test_another_error_of_the_store_is_not_taken_for_a_refusal(
        self, world: WebWorld, action: BulkAction
    ) -> None:
        store: Any = type(
            "Broken",
            (),
            {"requeue_failed": _raises_runtime_error, "cancel_queued": _raises_runtime_error},
        )()
        async with world.client(token=TOKEN, store=store) as client:
            with pytest.raises(RuntimeError, match="disk on fire"):
                await press(
                    client,
                    f"/kinds/token_cleanup/{action.value}",
                    {"token": TOKEN, "up_to_id": "5", "shown": "1"},
                )


async def _raises_runtime_error(*args: Any, **kwargs: Any) -> BulkBatch:
    raise RuntimeError("disk on fire")


def kind_row(html: str, kind: str) -> str:
    """The row of ``kind`` in the overview's table of kinds."""
    counts = html.split('<section id="counts">', 1)[1]
    return counts.split(f">{kind}</a>", 1)[1].split("</tr>", 1)[0]


def count_cell(row: str, status: str) -> str:
    return row.split(f'class="number status-{status}">', 1)[1].split("</td>", 1)[0]


class TestTheOverviewLinks:
    async def test_a_kind_with_failed_and_queued_items_has_a_link_beside_each_count(
        self, world: WebWorld
    ) -> None:
        await failed_items(world, 2)
        await queued_items(world, 1234)

        async with world.client(token=TOKEN) as client:
            html = (await client.get("/")).text
            fragment = (await client.get("/fragments/overview")).text

        for text in (html, fragment):
            row = kind_row(text, "token_cleanup")
            assert count_cell(row, "failed").startswith(
                '2 <a class="bulk" href="/kinds/token_cleanup/requeue-failed"'
            )
            assert count_cell(row, "failed").endswith(">Requeue failed…</a>")
            assert count_cell(row, "queued").startswith(
                '1,234 <a class="bulk" href="/kinds/token_cleanup/cancel-queued"'
            )
            assert count_cell(row, "queued").endswith(">Cancel queued…</a>")
            other = kind_row(text, "work_item_retention")
            assert "/requeue-failed" not in other
            assert "/cancel-queued" not in other

    async def test_a_read_only_view_has_no_link(self, world: WebWorld) -> None:
        await failed_items(world, 1)
        await queued_items(world, 1)

        async with world.client() as client:
            html = (await client.get("/")).text

        assert "/requeue-failed" not in html
        assert "/cancel-queued" not in html

    async def test_a_kind_the_view_has_no_model_for_may_have_its_queued_items_cancelled_only(
        self, world: WebWorld
    ) -> None:
        (failed,) = await failed_items(world, 1)
        (queued,) = await queued_items(world, 1)
        for item_id in (failed, queued):
            world.state.write(replace(world.state.items[item_id], kind="night batch/v2"))

        async with world.client(token=TOKEN) as client:
            html = (await client.get("/")).text

        row = kind_row(html, "night batch/v2")
        assert "requeue-failed" not in row
        assert 'href="/kinds/night%20batch/v2/cancel-queued"' in count_cell(row, "queued")
        assert count_cell(row, "failed") == "1"


HOSTILE = "<b>\"bulk\"</b> & 'co'/v2"


class TestEscaping:
    async def test_a_kind_with_markup_is_text_on_every_page_and_in_every_link(
        self, world: WebWorld
    ) -> None:
        (failed,) = await failed_items(world, 1)
        (queued,) = await queued_items(world, 1)
        for item_id in (failed, queued):
            world.state.write(replace(world.state.items[item_id], kind=HOSTILE))
        escaped = "&lt;b&gt;&#34;bulk&#34;&lt;/b&gt; &amp; &#39;co&#39;/v2"
        in_path = quote(HOSTILE)

        async with world.client(token=TOKEN) as client:
            overview = (await client.get("/")).text
            page = (await client.get(f"/kinds/{in_path}/cancel-queued")).text
            form = {**fields_of(page), "token": TOKEN, "reason": "<i>r</i>"}
            cancel = await press(client, f"/kinds/{in_path}/cancel-queued", form)
            requeue = await press(
                client,
                f"/kinds/{in_path}/requeue-failed",
                {"token": TOKEN, "up_to_id": str(failed), "shown": "1"},
            )

        assert f'href="/kinds/{in_path}/cancel-queued"' in overview
        assert f'<h2 id="bulk-heading">Cancel the queued items of {escaped}</h2>' in page
        assert f"1 queued item of {escaped} will be cancelled (ids up to {queued})." in page
        assert f'action="/kinds/{in_path}/cancel-queued"' in page
        assert notice(cancel.text) == f"Cancelled 1 queued item of {escaped}."
        assert world.state.items[queued].status is WorkStatus.CANCELLED
        assert requeue.status_code == 400
        assert "unknown kind &#39;&lt;b&gt;" in notice(requeue.text)
        for text in (overview, page, cancel.text, requeue.text):
            assert "<b>" not in text
            assert "<i>" not in text
