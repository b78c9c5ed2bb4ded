"""Every text from the table reaches the page as text: escaped, never as markup or script."""

from __future__ import annotations

import html as html_module
from dataclasses import replace
from pathlib import Path

import pytest
from markupsafe import escape
from web_world import WebWorld

from workqueue.domain import TokenCleanup

HOSTILE = "<script>alert('x')</script>&<b>\"bold\"</b>"
TEMPLATES = Path(__file__).parents[3] / "src" / "workqueue" / "entrypoints" / "web" / "templates"


@pytest.fixture
async def hostile_world() -> WebWorld:
    """Every text column of every item holds markup: kind, payload, progress, error, worker."""
    world = WebWorld()
    await world.queue.enqueue(TokenCleanup())
    running = await world.running(worker_id=HOSTILE)
    await world.store.heartbeat(
        running.lease,
        progress={HOSTILE: HOSTILE},
        lease_duration=running.lease_expires_at - world.clock.now(),
    )  # type: ignore[operator]
    failed = await world.failed(HOSTILE)
    queued = (await world.queue.enqueue(TokenCleanup(), dedup_key=HOSTILE)).id
    for item_id in (running.id, failed.id, queued):
        item = world.state.items[item_id]
        world.state.write(replace(item, kind=HOSTILE, payload={HOSTILE: HOSTILE}))
    world.hostile_ids = [running.id, failed.id, queued]  # type: ignore[attr-defined]
    return world


def assert_only_escaped(text: str) -> None:
    assert "<script>" not in text
    assert "<b>" not in text
    assert html_module.escape(HOSTILE, quote=True) in text or "&lt;script&gt;" in text


async def test_the_overview_escapes_every_text_from_the_table(hostile_world: WebWorld) -> None:
    async with hostile_world.client() as client:
        page = (await client.get("/")).text
        fragment = (await client.get("/fragments/overview")).text
        filtered = (await client.get("/", params={"kind": HOSTILE})).text

    for text in (page, fragment, filtered):
        assert_only_escaped(text)
        assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in text
    # The only script of the page is the static one.
    assert page.count("<script") == 1
    assert '<script src="/static/live.js" defer></script>' in page


async def test_an_item_page_escapes_its_payload_progress_and_error(
    hostile_world: WebWorld,
) -> None:
    async with hostile_world.client() as client:
        pages = [
            (await client.get(f"/items/{item_id}")).text
            for item_id in hostile_world.hostile_ids  # type: ignore[attr-defined]
        ]

    for text in pages:
        assert_only_escaped(text)
        assert text.count("<script") == 1


async def test_a_progress_bar_and_a_filtered_overview_escape_what_they_show(
    hostile_world: WebWorld,
) -> None:
    running_id = hostile_world.hostile_ids[0]  # type: ignore[attr-defined]
    item = hostile_world.state.items[running_id]
    progress = {"done": 1, "total": 2, HOSTILE: HOSTILE}
    hostile_world.state.write(replace(item, progress=progress))

    async with hostile_world.client() as client:
        pages = [
            (await client.get("/", params={"kind": HOSTILE, "status": "running"})).text,
            (await client.get(f"/items/{running_id}")).text,
        ]

    for text in pages:
        assert "<progress" in text
        assert_only_escaped(text)
        assert text.count("<script") == 1
    assert f'<option value="{escape(HOSTILE)}" selected>' in pages[0]


async def test_the_api_sends_the_texts_exactly_as_stored(hostile_world: WebWorld) -> None:
    _, failed_id, _ = hostile_world.hostile_ids  # type: ignore[attr-defined]

    async with hostile_world.client() as client:
        running = (await client.get("/api/running")).json()["items"][0]
        failed = (await client.get(f"/api/items/{failed_id}")).json()["item"]
        response = await client.get("/api/overview")

    assert running["worker_id"] == HOSTILE
    assert running["progress"] == {HOSTILE: HOSTILE}
    assert failed["error"] == HOSTILE
    assert failed["kind"] == HOSTILE
    assert response.headers["content-type"] == "application/json"
    assert HOSTILE in response.json()["counts"]


async def test_metrics_quote_a_kind_as_a_label_value(hostile_world: WebWorld) -> None:
    async with hostile_world.client() as client:
        text = (await client.get("/metrics")).text

    assert f'kind="{HOSTILE.replace(chr(34), chr(92) + chr(34))}"' in text


def test_no_template_marks_text_safe_or_puts_data_in_a_script() -> None:
    templates = sorted(TEMPLATES.glob("*.html"))
    assert "_progress.html" in [template.name for template in templates]
    for template in templates:
        source = template.read_text(encoding="utf-8")
        assert "|safe" not in source.replace(" ", ""), template.name
        assert "autoescape false" not in source, template.name
        assert "|tojson" not in source.replace(" ", ""), template.name
        # The one script element loads the static file; none holds data.
        for tag in source.split("<script")[1:]:
            assert tag.startswith(' src="/static/live.js" defer></script>'), template.name
