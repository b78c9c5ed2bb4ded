"""The view's actions: cancel and requeue an item, pause and resume a kind, as POSTs that
need the admin token and this view's own origin; without a token the view is read-only and
says so."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

import pytest
from web_world import KINDS, LEASE, WebWorld

from workqueue.domain import CancelOutcome, KindPause, TokenCleanup, WorkStatus

TOKEN = "an-admin-token-of-some-length"
SAME_ORIGIN = {"origin": "http://view"}
ONLY_SELECT = (
    ">The view&#39;s database role may only read: cancel and requeue need UPDATE and "
    "INSERT on work_items (see the README&#39;s grants).<"
)


@pytest.fixture
def world() -> WebWorld:
    return WebWorld()


async def queued(world: WebWorld) -> int:
    return (await world.queue.enqueue(TokenCleanup())).id


def view_log(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the view itself logged, without other loggers' lines (httpx's requests)."""
    return [r.getMessage() for r in caplog.records if r.name == "workqueue.web"]


class TestWithoutAToken:
    async def test_the_page_is_read_only_says_so_and_shows_no_form(self, world: WebWorld) -> None:
        item_id = await queued(world)
        async with world.client() as client:
            html = (await client.get(f"/items/{item_id}")).text

        assert "Read-only." in html
        assert (
            "set <code>WORKQUEUE_WEB_TOKEN</code> to enable cancel, requeue, pause and resume"
            in html
        )
        assert "<form" not in html

    @pytest.mark.parametrize("verb", ["cancel", "requeue"])
    async def test_every_post_is_refused_and_nothing_changes(
        self, world: WebWorld, verb: str
    ) -> None:
        item_id = await queued(world)
        async with world.client() as client:
            response = await client.post(
                f"/items/{item_id}/{verb}", data={"token": TOKEN}, headers=SAME_ORIGIN
            )

        assert response.status_code == 403
        assert (
            ">This view is read-only: set WORKQUEUE_WEB_TOKEN to enable cancel, requeue, pause "
            "and resume.<" in response.text
        )
        assert [item.status for item in world.state.snapshot()] == [WorkStatus.QUEUED]


class TestCancel:
    async def test_a_live_item_has_the_cancel_form_and_no_read_only_banner(
        self, world: WebWorld
    ) -> None:
        item_id = await queued(world)
        async with world.client(token=TOKEN) as client:
            html = (await client.get(f"/items/{item_id}")).text

        assert f'action="/items/{item_id}/cancel"' in html
        assert 'type="password" name="token"' in html
        assert f'action="/items/{item_id}/requeue"' not in html
        assert "Read-only." not in html

    async def test_a_queued_item_is_cancelled_and_the_page_says_so(self, world: WebWorld) -> None:
        item_id = await queued(world)
        async with world.client(token=TOKEN) as client:
            response = await client.post(
                f"/items/{item_id}/cancel",
                data={"token": TOKEN, "reason": "wrong <b>customer</b>"},
                headers=SAME_ORIGIN,
            )

        assert response.status_code == 200
        assert f"Cancelled item {item_id} (it was queued)." in response.text
        item = world.state.read(item_id)
        assert item is not None
        assert (item.status, item.error) == (WorkStatus.CANCELLED, "wrong <b>customer</b>")
        assert "wrong &lt;b&gt;customer&lt;/b&gt;" in response.text

    async def test_each_action_is_logged_with_what_it_did(
        self, world: WebWorld, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.INFO, logger="workqueue.web")
        item_id = await queued(world)
        async with world.client(token=TOKEN) as client:
            await client.post(
                f"/items/{item_id}/cancel", data={"token": TOKEN}, headers=SAME_ORIGIN
            )

        records = [r for r in caplog.records if r.name == "workqueue.web"]
        assert [(r.levelname, r.getMessage()) for r in records] == [
            ("INFO", f"web cancel of item {item_id}: cancelled item {item_id} (it was queued)")
        ]
        assert getattr(records[0], "item_id", None) == item_id

    async def test_a_running_item_gets_the_request(self, world: WebWorld) -> None:
        running = await world.running()
        async with world.client(token=TOKEN) as client:
            response = await client.post(
                f"/items/{running.id}/cancel", data={"token": TOKEN}, headers=SAME_ORIGIN
            )

        assert response.status_code == 200
        assert f"Cancel of item {running.id} requested" in response.text
        item = world.state.read(running.id)
        assert item is not None
        assert (item.status, item.cancel_reason) == (
            WorkStatus.RUNNING,
            "cancelled by an operator",
        )

    async def test_a_finished_item_has_nothing_to_do(self, world: WebWorld) -> None:
        failed = await world.failed("boom")
        async with world.client(token=TOKEN) as client:
            response = await client.post(
                f"/items/{failed.id}/cancel", data={"token": TOKEN}, headers=SAME_ORIGIN
            )

        assert response.status_code == 409
        assert f"Nothing to do: item {failed.id} already finished (failed)." in response.text

    async def test_an_unknown_item_is_not_found(self, world: WebWorld) -> None:
        async with world.client(token=TOKEN) as client:
            response = await client.post(
                "/items/77/cancel", data={"token": TOKEN}, headers=SAME_ORIGIN
            )

        assert response.status_code == 404
        assert "Nothing to do: no item 77." in response.text
        assert "<title>Not found" in response.text

    @pytest.mark.parametrize("reason", ["a\x00b", "\x00"])
    async def test_a_reason_with_a_nul_character_is_a_400_and_nothing_is_written(
        self, world: WebWorld, reason: str
    ) -> None:
        item_id = await queued(world)
        running = await world.running()
        before = world.state.snapshot()

        async with world.client(token=TOKEN) as client:
            responses = [
                await client.post(
                    f"/items/{target}/cancel",
                    data={"token": TOKEN, "reason": reason},
                    headers=SAME_ORIGIN,
                )
                for target in (item_id, running.id)
            ]

        assert [response.status_code for response in responses] == [400, 400]
        for response in responses:
            assert (
                ">Refused: the reason contains a NUL character, which the database cannot store.<"
            ) in response.text
        assert world.state.snapshot() == before


class TestRequeue:
    async def test_a_failed_item_has_the_requeue_form_and_is_requeued(
        self, world: WebWorld, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.INFO, logger="workqueue.web")
        failed = await world.failed("boom")
        async with world.client(token=TOKEN) as client:
            html = (await client.get(f"/items/{failed.id}")).text
            response = await client.post(
                f"/items/{failed.id}/requeue", data={"token": TOKEN}, headers=SAME_ORIGIN
            )

        assert f'action="/items/{failed.id}/requeue"' in html
        assert f'action="/items/{failed.id}/cancel"' not in html
        assert response.status_code == 200
        assert f"Requeued failed item {failed.id} as item {failed.id + 1}." in response.text
        again = world.state.read(failed.id + 1)
        assert again is not None
        assert (again.status, again.kind) == (WorkStatus.QUEUED, "token_cleanup")
        assert view_log(caplog) == [
            f"web requeue of item {failed.id}: requeued failed item {failed.id} "
            f"as item {failed.id + 1}"
        ]

    async def test_a_queued_item_is_refused(self, world: WebWorld) -> None:
        item_id = await queued(world)
        async with world.client(token=TOKEN) as client:
            response = await client.post(
                f"/items/{item_id}/requeue", data={"token": TOKEN}, headers=SAME_ORIGIN
            )

        assert response.status_code == 409
        assert "only failed or cancelled items requeue" in response.text
        assert len(world.state.items) == 1

    async def test_an_unknown_item_is_not_found(self, world: WebWorld) -> None:
        async with world.client(token=TOKEN) as client:
            response = await client.post(
                "/items/77/requeue", data={"token": TOKEN}, headers=SAME_ORIGIN
            )

        assert response.status_code == 404
        assert "Nothing to do: no item 77." in response.text
        assert world.state.items == {}

    async def test_a_requeue_takes_no_reason_so_a_nul_in_one_is_no_matter(
        self, world: WebWorld
    ) -> None:
        failed = await world.failed("boom")
        async with world.client(token=TOKEN) as client:
            response = await client.post(
                f"/items/{failed.id}/requeue",
                data={"token": TOKEN, "reason": "a\x00b"},
                headers=SAME_ORIGIN,
            )

        assert response.status_code == 200
        assert f"Requeued failed item {failed.id} as item {failed.id + 1}." in response.text

    async def test_an_item_whose_payload_no_longer_validates_is_a_422_naming_the_field(
        self, world: WebWorld
    ) -> None:
        stale = await world.failed_with_a_stale_payload()
        before = world.state.snapshot()

        async with world.client(token=TOKEN) as client:
            response = await client.post(
                f"/items/{stale.id}/requeue", data={"token": TOKEN}, headers=SAME_ORIGIN
            )

        assert response.status_code == 422
        assert (
            f">Cannot requeue item {stale.id}: invalid payload for kind "
            "&#39;work_item_retention&#39;: retention_days: Input should be a valid number, "
            "unable to parse string as a number.<"
        ) in response.text
        assert world.state.snapshot() == before

    async def test_an_item_of_a_kind_this_view_does_not_serve_is_a_422(
        self, world: WebWorld
    ) -> None:
        failed = world.state.read((await world.failed("boom")).id)
        assert failed is not None
        world.state.write(replace(failed, kind="legacy"))
        before = world.state.snapshot()

        async with world.client(token=TOKEN) as client:
            response = await client.post(
                f"/items/{failed.id}/requeue", data={"token": TOKEN}, headers=SAME_ORIGIN
            )

        assert response.status_code == 422
        assert (
            f">Cannot requeue item {failed.id}: unknown kind &#39;legacy&#39; "
            "(known kinds: token_cleanup, work_item_retention).<"
        ) in response.text
        assert world.state.snapshot() == before

    async def test_a_refused_requeue_is_logged_with_the_reason(
        self, world: WebWorld, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.INFO, logger="workqueue.web")
        stale = await world.failed_with_a_stale_payload()

        async with world.client(token=TOKEN) as client:
            await client.post(
                f"/items/{stale.id}/requeue", data={"token": TOKEN}, headers=SAME_ORIGIN
            )

        assert [
            (r.levelname, r.getMessage()) for r in caplog.records if r.name == "workqueue.web"
        ] == [
            (
                "WARNING",
                f"web requeue of item {stale.id}: cannot requeue item {stale.id}: invalid "
                "payload for kind 'work_item_retention': retention_days: Input should be a "
                "valid number, unable to parse string as a number",
            )
        ]


class TestAnIdNoRowCanHave:
    """Ids are bigint: one from 2**63 up names no item, and is never sent to the database."""

    @pytest.mark.parametrize("verb", ["cancel", "requeue"])
    @pytest.mark.parametrize("item_id", [2**63, 10**30])
    @pytest.mark.parametrize("read_only", [False, True])
    async def test_an_action_on_it_is_a_404_and_nothing_changes(
        self, world: WebWorld, verb: str, item_id: int, read_only: bool
    ) -> None:
        await queued(world)
        await world.failed("boom")
        before = world.state.snapshot()

        async with world.client(token=TOKEN, read_only=read_only) as client:
            response = await client.post(
                f"/items/{item_id}/{verb}", data={"token": TOKEN}, headers=SAME_ORIGIN
            )

        assert response.status_code == 404
        assert "<title>Not found" in response.text
        assert f">Nothing to do: no item {item_id}.<" in response.text
        assert world.state.snapshot() == before

    async def test_the_largest_bigint_is_asked_for(
        self, world: WebWorld, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.INFO, logger="workqueue.web")
        largest = 2**63 - 1

        async with world.client(token=TOKEN) as client:
            response = await client.post(
                f"/items/{largest}/cancel", data={"token": TOKEN}, headers=SAME_ORIGIN
            )

        assert response.status_code == 404
        assert f">Nothing to do: no item {largest}.<" in response.text
        # Sent to the store, which found no such item.
        assert view_log(caplog) == [
            f"web cancel of item {largest}: nothing to do: no item {largest}"
        ]

    async def test_the_token_and_origin_are_checked_first(self, world: WebWorld) -> None:
        async with world.client(token=TOKEN) as client:
            response = await client.post(f"/items/{2**63}/cancel", data={"token": "wrong"})

        assert response.status_code == 403


class TestARoleThatMayOnlyRead:
    """The view's database role without UPDATE and INSERT on work_items (README's grants)."""

    async def test_a_cancel_is_a_403_saying_so_and_nothing_changes(self, world: WebWorld) -> None:
        item_id = await queued(world)
        running = await world.running()
        before = world.state.snapshot()

        async with world.client(token=TOKEN, read_only=True) as client:
            responses = [
                await client.post(
                    f"/items/{target}/cancel", data={"token": TOKEN}, headers=SAME_ORIGIN
                )
                for target in (item_id, running.id)
            ]

        assert [response.status_code for response in responses] == [403, 403]
        for response in responses:
            assert ONLY_SELECT in response.text
        assert world.state.snapshot() == before

    async def test_a_requeue_is_a_403_saying_so_and_nothing_is_enqueued(
        self, world: WebWorld
    ) -> None:
        failed = await world.failed("boom")
        before = world.state.snapshot()

        async with world.client(token=TOKEN, read_only=True) as client:
            response = await client.post(
                f"/items/{failed.id}/requeue", data={"token": TOKEN}, headers=SAME_ORIGIN
            )

        assert response.status_code == 403
        assert ONLY_SELECT in response.text
        assert world.state.snapshot() == before

    async def test_what_the_view_refuses_before_writing_is_answered_as_for_any_role(
        self, world: WebWorld
    ) -> None:
        stale = await world.failed_with_a_stale_payload()
        item_id = await queued(world)
        before = world.state.snapshot()

        async with world.client(token=TOKEN, read_only=True) as client:
            requeue = await client.post(
                f"/items/{stale.id}/requeue", data={"token": TOKEN}, headers=SAME_ORIGIN
            )
            cancel = await client.post(
                f"/items/{item_id}/cancel",
                data={"token": TOKEN, "reason": "a\x00b"},
                headers=SAME_ORIGIN,
            )

        assert (requeue.status_code, cancel.status_code) == (422, 400)
        assert f">Cannot requeue item {stale.id}: invalid payload" in requeue.text
        assert ">Refused: the reason contains a NUL character" in cancel.text
        assert world.state.snapshot() == before


class TestTheChecks:
    @pytest.mark.parametrize(
        "form", [{}, {"token": ""}, {"token": "wrong"}, {"token": TOKEN + "x"}]
    )
    async def test_a_missing_or_wrong_token_is_refused(
        self, world: WebWorld, form: dict[str, str]
    ) -> None:
        item_id = await queued(world)
        async with world.client(token=TOKEN) as client:
            response = await client.post(f"/items/{item_id}/cancel", data=form, headers=SAME_ORIGIN)

        assert response.status_code == 403
        assert ">Refused: the admin token is missing or wrong.<" in response.text
        assert world.state.items[item_id].status is WorkStatus.QUEUED

    @pytest.mark.parametrize(
        "headers",
        [
            {},
            {"origin": "http://evil.example"},
            {"origin": "https://view"},
            {"origin": "http://view:8081"},
            {"referer": "http://evil.example/items/1"},
            {"origin": "null"},
        ],
    )
    async def test_a_post_from_another_origin_is_refused_even_with_the_token(
        self, world: WebWorld, headers: dict[str, str]
    ) -> None:
        item_id = await queued(world)
        async with world.client(token=TOKEN) as client:
            response = await client.post(
                f"/items/{item_id}/cancel", data={"token": TOKEN}, headers=headers
            )

        assert response.status_code == 403
        assert ">Refused: the request did not come from this view&#39;s own page.<" in (
            response.text
        )
        assert world.state.items[item_id].status is WorkStatus.QUEUED

    async def test_a_referer_of_this_view_will_do_without_an_origin(self, world: WebWorld) -> None:
        item_id = await queued(world)
        async with world.client(token=TOKEN) as client:
            response = await client.post(
                f"/items/{item_id}/cancel",
                data={"token": TOKEN},
                headers={"referer": f"http://view/items/{item_id}"},
            )

        assert response.status_code == 200

    async def test_a_form_with_a_charset_or_without_a_content_type_is_read(
        self, world: WebWorld
    ) -> None:
        first, second = await queued(world), await queued(world)
        body = f"token={TOKEN}&reason=r"
        async with world.client(token=TOKEN) as client:
            with_charset = await client.post(
                f"/items/{first}/cancel",
                content=body,
                headers={
                    **SAME_ORIGIN,
                    "content-type": "application/x-www-form-urlencoded; charset=utf-8",
                },
            )
            untyped = await client.post(
                f"/items/{second}/cancel", content=body, headers=SAME_ORIGIN
            )

        assert (with_charset.status_code, untyped.status_code) == (200, 200)
        assert world.state.items[first].error == "r"

    @pytest.mark.parametrize(
        ("content_type", "body"),
        [
            ("application/json", f'{{"token": "{TOKEN}"}}'.encode()),
            ("multipart/form-data; boundary=x", f"token={TOKEN}".encode()),
            ("application/x-www-form-urlencoded", f"token={TOKEN}".encode() + b"&r=\xff"),
        ],
    )
    async def test_a_body_that_is_no_url_encoded_text_form_carries_no_token(
        self, world: WebWorld, content_type: str, body: bytes
    ) -> None:
        item_id = await queued(world)
        async with world.client(token=TOKEN) as client:
            response = await client.post(
                f"/items/{item_id}/cancel",
                content=body,
                headers={**SAME_ORIGIN, "content-type": content_type},
            )

        assert response.status_code == 403
        assert world.state.items[item_id].status is WorkStatus.QUEUED

    @pytest.mark.parametrize("verb", ["cancel", "requeue"])
    async def test_a_get_does_nothing(self, world: WebWorld, verb: str) -> None:
        item_id = await queued(world)
        async with world.client(token=TOKEN) as client:
            response = await client.get(f"/items/{item_id}/{verb}")

        assert response.status_code == 405
        assert world.state.items[item_id].status is WorkStatus.QUEUED
        assert len(world.state.items) == 1

    async def test_a_role_that_may_only_read_gets_a_clear_refusal(self, world: WebWorld) -> None:
        class Denied(Exception):
            sqlstate = "42501"

        class ReadOnlyRole:
            def __getattr__(self, name: str) -> Any:
                async def refuse(*args: Any, **kwargs: Any) -> CancelOutcome:
                    raise Denied("permission denied for table work_items")

                return refuse

        item_id = await queued(world)
        store: Any = ReadOnlyRole()
        async with world.client(token=TOKEN, store=store) as client:
            response = await client.post(
                f"/items/{item_id}/cancel", data={"token": TOKEN}, headers=SAME_ORIGIN
            )

        assert response.status_code == 403
        assert "The view&#39;s database role may only read" in response.text

    async def test_another_error_of_the_store_is_not_taken_for_a_refusal(
        self, world: WebWorld
    ) -> None:
        item_id = await queued(world)
        store: Any = type("Broken", (), {"cancel": _raises_runtime_error})()
        async with world.client(token=TOKEN, store=store) as client:
            with pytest.raises(RuntimeError, match="disk on fire"):
                await client.post(
                    f"/items/{item_id}/cancel", data={"token": TOKEN}, headers=SAME_ORIGIN
                )


async def _raises_runtime_error(*args: Any, **kwargs: Any) -> CancelOutcome:
    raise RuntimeError("disk on fire")


ONLY_SELECT_PAUSES = (
    ">The view&#39;s database role may only read: pause and resume need INSERT, UPDATE and "
    "DELETE on work_kind_controls (see the README&#39;s grants).<"
)
PAUSED_LINE = (
    "token_cleanup is paused since 2026-01-01T00:00:00Z: no worker claims it until "
    "`workqueue resume token_cleanup`; its running items finish"
)


def pause_now(world: WebWorld, kind: str, reason: str | None = None) -> KindPause:
    """A pause as ``workqueue pause`` leaves it, written beside the view."""
    pause = KindPause(kind=kind, paused_at=world.clock.now(), reason=reason)
    world.state.pauses[kind] = pause
    return pause


def section(html: str, start: str, end: str) -> str:
    return html.split(start, 1)[1].split(end, 1)[0]


def kind_row(html: str, kind: str) -> str:
    """The row of ``kind`` in the overview's table of kinds."""
    return section(html, f'<th scope="row"><a href="/?kind={kind}">{kind}</a>', "</tr>")


class TestPauseWithoutAToken:
    async def test_the_overview_shows_no_pause_form_and_no_button(self, world: WebWorld) -> None:
        pause_now(world, "token_cleanup")
        async with world.client() as client:
            html = (await client.get("/")).text

        assert "set <code>WORKQUEUE_WEB_TOKEN</code> to enable cancel, requeue, pause" in html
        assert 'id="kind-actions"' not in html
        assert "formaction=" not in html
        assert '<th scope="col">action</th>' not in html
        assert 'paused <time datetime="2026-01-01T00:00:00Z"' in kind_row(html, "token_cleanup")

    @pytest.mark.parametrize("verb", ["pause", "resume"])
    async def test_a_pause_or_a_resume_is_refused_and_no_kind_changes(
        self, world: WebWorld, verb: str
    ) -> None:
        pause_now(world, "work_item_retention")
        before = dict(world.state.pauses)
        async with world.client() as client:
            responses = [
                await client.post(
                    f"/kinds/{kind}/{verb}", data={"token": TOKEN}, headers=SAME_ORIGIN
                )
                for kind in KINDS
            ]

        assert [response.status_code for response in responses] == [403, 403]
        for response in responses:
            assert ">This view is read-only: set WORKQUEUE_WEB_TOKEN to enable cancel" in (
                response.text
            )
        assert world.state.pauses == before


class TestPause:
    async def test_the_overview_has_the_token_form_and_a_pause_button_for_each_served_kind(
        self, world: WebWorld
    ) -> None:
        await world.queue.enqueue(TokenCleanup())
        world.state.write(replace(world.state.items[1], kind="legacy"))

        async with world.client(token=TOKEN) as client:
            html = (await client.get("/")).text
            fragment = (await client.get("/fragments/overview")).text

        form = section(html, '<form method="post" id="kind-actions"', "</form>")
        assert 'type="password" name="token" id="kind-token"' in form
        assert 'name="reason" id="pause-reason" maxlength="1000"' in form
        # Enter in a field presses this one, which does nothing, not the first kind's Pause.
        assert form.index('<button type="submit" hidden disabled>') < form.index("<label>")
        assert '<th scope="col">action</th>' in html
        for kind in KINDS:
            assert (
                f'<button type="submit" form="kind-actions" formaction="/kinds/{kind}/pause"'
            ) in kind_row(html, kind)
        assert "formaction" not in kind_row(html, "legacy")
        assert "/resume" not in html
        assert "Read-only." not in html
        # The form is outside the live region, so a refresh leaves what was typed.
        assert 'id="kind-actions"' not in fragment
        assert 'form="kind-actions" formaction="/kinds/token_cleanup/pause"' in fragment

    async def test_a_kind_is_paused_with_its_reason_and_the_overview_says_so(
        self, world: WebWorld
    ) -> None:
        async with world.client(token=TOKEN) as client:
            response = await client.post(
                "/kinds/token_cleanup/pause",
                data={"token": TOKEN, "reason": "partner <b>down</b>"},
                headers=SAME_ORIGIN,
            )

        assert response.status_code == 200
        assert world.state.pauses == {
            "token_cleanup": KindPause(
                kind="token_cleanup", paused_at=world.clock.now(), reason="partner <b>down</b>"
            )
        }
        assert await world.store.claim(KINDS, worker_id="w", lease_duration=LEASE) is None
        html = response.text
        assert (
            f'<p class="notice" id="notice" role="status">{PAUSED_LINE} '
            "(reason: partner &lt;b&gt;down&lt;/b&gt;).</p>"
        ) in html
        row = kind_row(html, "token_cleanup")
        assert 'formaction="/kinds/token_cleanup/resume"' in row
        assert "/pause" not in row
        assert 'formaction="/kinds/work_item_retention/pause"' in html
        assert (
            'data-live-src="/fragments/overview?kind=&amp;status=&amp;after=0&amp;window=hour"'
            in html
        )

    async def test_a_pause_is_logged_with_what_it_did(
        self, world: WebWorld, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.INFO, logger="workqueue.web")
        async with world.client(token=TOKEN) as client:
            await client.post(
                "/kinds/token_cleanup/pause", data={"token": TOKEN}, headers=SAME_ORIGIN
            )

        records = [r for r in caplog.records if r.name == "workqueue.web"]
        assert [(r.levelname, r.getMessage()) for r in records] == [
            ("INFO", f"web pause of kind token_cleanup: {PAUSED_LINE}")
        ]
        assert getattr(records[0], "kind", None) == "token_cleanup"

    @pytest.mark.parametrize("form", [{}, {"reason": ""}, {"reason": "  "}])
    async def test_without_a_reason_the_pause_has_none(
        self, world: WebWorld, form: dict[str, str]
    ) -> None:
        async with world.client(token=TOKEN) as client:
            response = await client.post(
                "/kinds/token_cleanup/pause", data={"token": TOKEN, **form}, headers=SAME_ORIGIN
            )

        assert response.status_code == 200
        assert f">{PAUSED_LINE}.<" in response.text
        assert world.state.pauses["token_cleanup"].reason is None

    async def test_a_paused_kind_stays_paused_since_its_first_pause_and_the_page_says_so(
        self, world: WebWorld
    ) -> None:
        first = pause_now(world, "token_cleanup", "first")
        await world.clock.advance(60)

        async with world.client(token=TOKEN) as client:
            response = await client.post(
                "/kinds/token_cleanup/pause",
                data={"token": TOKEN, "reason": "second"},
                headers=SAME_ORIGIN,
            )

        assert response.status_code == 200
        assert f">{PAUSED_LINE} (reason: first).<" in response.text
        assert world.state.pauses == {"token_cleanup": first}

    async def test_a_kind_this_view_does_not_serve_is_not_found_and_nothing_is_paused(
        self, world: WebWorld
    ) -> None:
        async with world.client(token=TOKEN) as client:
            response = await client.post(
                "/kinds/legacy/pause", data={"token": TOKEN}, headers=SAME_ORIGIN
            )

        assert response.status_code == 404
        assert "<title>Not found" in response.text
        assert (
            ">Unknown kind &#39;legacy&#39; (known kinds: token_cleanup, work_item_retention).<"
        ) in response.text
        assert world.state.pauses == {}

    @pytest.mark.parametrize(
        ("reason", "refusal"),
        [
            ("a\x00b", "Refused: a pause reason cannot hold a NUL character."),
            ("x" * 1001, "Refused: a pause reason is at most 1000 characters, not 1001."),
        ],
    )
    async def test_a_reason_no_store_can_hold_is_a_400_and_nothing_is_paused(
        self, world: WebWorld, reason: str, refusal: str
    ) -> None:
        async with world.client(token=TOKEN) as client:
            response = await client.post(
                "/kinds/token_cleanup/pause",
                data={"token": TOKEN, "reason": reason},
                headers=SAME_ORIGIN,
            )

        assert response.status_code == 400
        assert f'<p class="notice" id="notice" role="status">{refusal}</p>' in response.text
        assert world.state.pauses == {}

    @pytest.mark.parametrize("verb", ["pause", "resume"])
    async def test_a_kind_with_a_nul_character_is_a_400_and_never_sent_to_the_database(
        self, world: WebWorld, verb: str
    ) -> None:
        async with world.client(token=TOKEN) as client:
            response = await client.post(
                f"/kinds/token_cleanup%00/{verb}", data={"token": TOKEN}, headers=SAME_ORIGIN
            )

        assert response.status_code == 400
        assert (
            ">Refused: the kind contains a NUL character, which the database cannot store.<"
        ) in response.text
        assert world.state.pauses == {}


class TestResume:
    async def test_a_paused_kind_is_resumed_and_the_overview_says_so(
        self, world: WebWorld, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.INFO, logger="workqueue.web")
        pause_now(world, "token_cleanup", "partner down")
        item_id = await queued(world)

        async with world.client(token=TOKEN) as client:
            response = await client.post(
                "/kinds/token_cleanup/resume", data={"token": TOKEN}, headers=SAME_ORIGIN
            )

        assert response.status_code == 200
        assert (
            '<p class="notice" id="notice" role="status">'
            "Resumed token_cleanup: workers claim its items again.</p>"
        ) in response.text
        assert world.state.pauses == {}
        row = kind_row(response.text, "token_cleanup")
        assert 'formaction="/kinds/token_cleanup/pause"' in row
        assert 'class="paused"' not in row
        claimed = await world.store.claim(KINDS, worker_id="w", lease_duration=LEASE)
        assert claimed is not None
        assert claimed.id == item_id
        assert view_log(caplog) == [
            "web resume of kind token_cleanup: resumed token_cleanup: workers claim its items again"
        ]

    async def test_a_kind_that_is_not_paused_has_nothing_to_do(
        self, world: WebWorld, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.INFO, logger="workqueue.web")
        async with world.client(token=TOKEN) as client:
            response = await client.post(
                "/kinds/token_cleanup/resume", data={"token": TOKEN}, headers=SAME_ORIGIN
            )

        assert response.status_code == 409
        assert ">Nothing to do: token_cleanup is not paused.<" in response.text
        assert "<title>workqueue</title>" in response.text
        assert view_log(caplog) == [
            "web resume of kind token_cleanup: nothing to do: token_cleanup is not paused"
        ]

    async def test_any_kind_may_be_resumed_one_this_view_does_not_serve_too(
        self, world: WebWorld
    ) -> None:
        pause_now(world, "night batch/v2")

        async with world.client(token=TOKEN) as client:
            html = (await client.get("/")).text
            response = await client.post(
                "/kinds/night%20batch/v2/resume", data={"token": TOKEN}, headers=SAME_ORIGIN
            )

        assert 'formaction="/kinds/night%20batch/v2/resume"' in html
        assert response.status_code == 200
        assert ">Resumed night batch/v2: workers claim its items again.<" in response.text
        assert world.state.pauses == {}


class TestTheChecksOfAKindsActions:
    @pytest.mark.parametrize("verb", ["pause", "resume"])
    @pytest.mark.parametrize("form", [{}, {"token": ""}, {"token": "wrong"}])
    async def test_a_missing_or_wrong_token_is_refused_and_no_kind_changes(
        self, world: WebWorld, verb: str, form: dict[str, str]
    ) -> None:
        pause_now(world, "work_item_retention")
        before = dict(world.state.pauses)
        async with world.client(token=TOKEN) as client:
            responses = [
                await client.post(f"/kinds/{kind}/{verb}", data=form, headers=SAME_ORIGIN)
                for kind in KINDS
            ]

        assert [response.status_code for response in responses] == [403, 403]
        for response in responses:
            assert ">Refused: the admin token is missing or wrong.<" in response.text
        assert world.state.pauses == before

    @pytest.mark.parametrize("verb", ["pause", "resume"])
    @pytest.mark.parametrize(
        "headers", [{}, {"origin": "http://evil.example"}, {"referer": "http://evil.example/"}]
    )
    async def test_a_post_from_another_origin_is_refused_even_with_the_token(
        self, world: WebWorld, verb: str, headers: dict[str, str]
    ) -> None:
        pause_now(world, "work_item_retention")
        before = dict(world.state.pauses)
        async with world.client(token=TOKEN) as client:
            responses = [
                await client.post(f"/kinds/{kind}/{verb}", data={"token": TOKEN}, headers=headers)
                for kind in KINDS
            ]

        assert [response.status_code for response in responses] == [403, 403]
        for response in responses:
            assert ">Refused: the request did not come from this view&#39;s own page.<" in (
                response.text
            )
        assert world.state.pauses == before

    @pytest.mark.parametrize("verb", ["pause", "resume"])
    async def test_a_get_does_nothing(self, world: WebWorld, verb: str) -> None:
        pause_now(world, "work_item_retention")
        before = dict(world.state.pauses)
        async with world.client(token=TOKEN) as client:
            responses = [await client.get(f"/kinds/{kind}/{verb}") for kind in KINDS]

        assert [response.status_code for response in responses] == [405, 405]
        assert world.state.pauses == before

    @pytest.mark.parametrize("verb", ["pause", "resume"])
    async def test_another_error_of_the_store_is_not_taken_for_a_refusal(
        self, world: WebWorld, verb: str
    ) -> None:
        store: Any = type(
            "Broken",
            (),
            {"pause_kind": _raises_runtime_error, "resume_kind": _raises_runtime_error},
        )()
        async with world.client(token=TOKEN, store=store) as client:
            with pytest.raises(RuntimeError, match="disk on fire"):
                await client.post(
                    f"/kinds/token_cleanup/{verb}", data={"token": TOKEN}, headers=SAME_ORIGIN
                )


class TestARoleThatMayOnlyReadPausesNothing:
    """The view's role without INSERT, UPDATE and DELETE on work_kind_controls."""

    async def test_a_pause_and_a_resume_are_a_403_saying_so_and_nothing_changes(
        self, world: WebWorld
    ) -> None:
        pause_now(world, "work_item_retention")
        before = dict(world.state.pauses)

        async with world.client(token=TOKEN, read_only=True) as client:
            pause = await client.post(
                "/kinds/token_cleanup/pause",
                data={"token": TOKEN, "reason": "down"},
                headers=SAME_ORIGIN,
            )
            resumes = [
                await client.post(
                    f"/kinds/{kind}/resume", data={"token": TOKEN}, headers=SAME_ORIGIN
                )
                for kind in KINDS
            ]

        assert [r.status_code for r in (pause, *resumes)] == [403, 403, 403]
        for response in (pause, *resumes):
            assert ONLY_SELECT_PAUSES in response.text
        assert world.state.pauses == before

    async def test_what_the_view_refuses_before_writing_is_answered_as_for_any_role(
        self, world: WebWorld
    ) -> None:
        async with world.client(token=TOKEN, read_only=True) as client:
            unknown = await client.post(
                "/kinds/legacy/pause", data={"token": TOKEN}, headers=SAME_ORIGIN
            )
            too_long = await client.post(
                "/kinds/token_cleanup/pause",
                data={"token": TOKEN, "reason": "x" * 1001},
                headers=SAME_ORIGIN,
            )
            nul = await client.post(
                "/kinds/a%00/resume", data={"token": TOKEN}, headers=SAME_ORIGIN
            )

        assert (unknown.status_code, too_long.status_code, nul.status_code) == (404, 400, 400)
        assert ">Unknown kind &#39;legacy&#39;" in unknown.text
        assert ">Refused: a pause reason is at most 1000 characters" in too_long.text
        assert ">Refused: the kind contains a NUL character" in nul.text
        assert world.state.pauses == {}
