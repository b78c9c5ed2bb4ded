"""The view answers only requests that name a host it serves: a page of another site
whose name was rebound to this machine (DNS rebinding) can neither read it nor act."""

from __future__ import annotations

import logging

import pytest
from starlette.types import Message, Receive, Scope, Send
from web_world import HOST, WebWorld

from workqueue.domain import TokenCleanup, WorkStatus
from workqueue.entrypoints.web.app import SECURITY_HEADERS
from workqueue.entrypoints.web.hosts import LOCAL_HOSTS, AllowedHosts, host_name, served_hosts

TOKEN = "an-admin-token-of-some-length"
REFUSED = (
    "Refused: the Host header names no host this view serves (see WORKQUEUE_WEB_ALLOWED_HOSTS).\n"
)
EVERY_ROUTE = [
    "/",
    "/items/1",
    "/fragments/overview",
    "/fragments/items/1",
    "/api/overview",
    "/api/running",
    "/api/queued",
    "/api/failures",
    "/api/items/1",
    "/api/schedules",
    "/metrics",
    "/healthz",
    "/static/live.js",
    "/nowhere",
]


@pytest.fixture
def world() -> WebWorld:
    return WebWorld()


class TestAnotherHost:
    @pytest.mark.parametrize("path", EVERY_ROUTE)
    async def test_every_route_is_a_400_saying_why_in_one_line(
        self, world: WebWorld, path: str
    ) -> None:
        await world.queue.enqueue(TokenCleanup())

        async with world.client() as client:
            response = await client.get(path, headers={"host": "evil.example"})

        assert response.status_code == 400
        assert response.text == REFUSED
        assert response.headers["content-type"] == "text/plain; charset=utf-8"
        for name, value in SECURITY_HEADERS.items():
            assert response.headers[name] == value

    @pytest.mark.parametrize("verb", ["cancel", "requeue"])
    async def test_a_post_with_the_token_and_its_own_origin_changes_nothing(
        self, world: WebWorld, verb: str
    ) -> None:
        queued = (await world.queue.enqueue(TokenCleanup())).id
        failed = await world.failed("boom")
        item_id = queued if verb == "cancel" else failed.id
        before = world.state.snapshot()

        async with world.client(token=TOKEN) as client:
            response = await client.post(
                f"/items/{item_id}/{verb}",
                data={"token": TOKEN},
                headers={"host": "evil.example:8080", "origin": "http://evil.example:8080"},
            )

        assert response.status_code == 400
        assert response.text == REFUSED
        assert world.state.snapshot() == before

    @pytest.mark.parametrize(
        "host",
        ["", "evil.example", "view.evil.example", "evilview", "vie", "[::1", "::1", "xview]"],
    )
    async def test_a_host_that_is_not_exactly_a_served_one_is_refused(
        self, world: WebWorld, host: str
    ) -> None:
        async with world.client(allowed_hosts=(HOST, "::1")) as client:
            response = await client.get("/api/overview", headers={"host": host})

        assert response.status_code == 400

    async def test_the_refusal_is_logged_with_the_host_named(
        self, world: WebWorld, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.WARNING, logger="workqueue.web")

        async with world.client() as client:
            await client.get("/", headers={"host": "evil.example:8080"})

        assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
            (
                "WARNING",
                "refused a request for host 'evil.example:8080': not a host this view "
                "serves (WORKQUEUE_WEB_ALLOWED_HOSTS)",
            )
        ]

    async def test_a_long_host_is_logged_cut_short(
        self, world: WebWorld, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.WARNING, logger="workqueue.web")

        async with world.client() as client:
            await client.get("/", headers={"host": "x" * 500})

        assert f"'{'x' * 100}'" in caplog.messages[0]
        assert "x" * 101 not in caplog.messages[0]


class TestAServedHost:
    @pytest.mark.parametrize("host", [HOST, f"{HOST}:8080", "VIEW", f"{HOST}.", f"{HOST}.:80"])
    async def test_is_served_whatever_its_port_case_or_final_dot(
        self, world: WebWorld, host: str
    ) -> None:
        async with world.client() as client:
            response = await client.get("/api/overview", headers={"host": host})

        assert response.status_code == 200

    @pytest.mark.parametrize("host", ["[::1]", "[::1]:8080"])
    async def test_an_ipv6_address_is_named_in_brackets(self, world: WebWorld, host: str) -> None:
        async with world.client(allowed_hosts=("::1",)) as client:
            response = await client.get("/api/overview", headers={"host": host})

        assert response.status_code == 200

    async def test_a_post_from_its_own_page_still_acts(self, world: WebWorld) -> None:
        item_id = (await world.queue.enqueue(TokenCleanup())).id

        async with world.client(token=TOKEN, allowed_hosts=("admin.example",)) as client:
            response = await client.post(
                f"/items/{item_id}/cancel",
                data={"token": TOKEN},
                headers={"host": "admin.example", "origin": "http://admin.example"},
            )

        assert response.status_code == 200
        assert world.state.items[item_id].status is WorkStatus.CANCELLED

    async def test_the_hosts_given_are_written_as_a_host_header_is_read(
        self, world: WebWorld
    ) -> None:
        async with world.client(allowed_hosts=("View.", "[::1]")) as client:
            named = await client.get("/api/overview")
            bracketed = await client.get("/api/overview", headers={"host": "[::1]:8080"})

        assert (named.status_code, bracketed.status_code) == (200, 200)

    async def test_a_star_serves_every_host(self, world: WebWorld) -> None:
        async with world.client(allowed_hosts=("*",)) as client:
            response = await client.get("/api/overview", headers={"host": "anything.example"})

        assert response.status_code == 200


class TestWhichHostsAreServed:
    def test_the_bound_host_and_this_machines_own_names(self) -> None:
        assert LOCAL_HOSTS == ("127.0.0.1", "localhost", "::1")
        assert served_hosts("192.0.2.7", ()) == {"192.0.2.7", "127.0.0.1", "localhost", "::1"}

    def test_and_the_names_a_deployment_adds(self) -> None:
        assert served_hosts("127.0.0.1", ("admin.example", "10.0.0.5")) == {
            "127.0.0.1",
            "localhost",
            "::1",
            "admin.example",
            "10.0.0.5",
        }

    def test_a_bound_name_is_compared_as_a_host_header_is(self) -> None:
        assert served_hosts("Admin.Example.", ()) == {"admin.example", *LOCAL_HOSTS}


async def receive_nothing() -> Message:
    return {"type": "lifespan.startup"}


async def send_nothing(message: Message) -> None:
    raise AssertionError(f"nothing is sent: {message}")


@pytest.mark.parametrize(
    ("scope", "hosts"),
    [
        pytest.param({"type": "lifespan"}, (), id="a lifespan event, which has no host"),
        pytest.param(
            {"type": "http", "headers": [(b"host", b"view:8080")]}, ("view",), id="a served host"
        ),
        pytest.param(
            {"type": "http", "headers": [(b"host", b"anything")]}, ("*",), id="any host served"
        ),
    ],
)
async def test_what_passes_goes_on_to_the_app_with_its_receive_and_send(
    scope: Scope, hosts: tuple[str, ...]
) -> None:
    seen: list[tuple[str, Receive, Send]] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append((scope["type"], receive, send))

    await AllowedHosts(app, hosts=hosts)(scope, receive_nothing, send_nothing)

    assert seen == [(scope["type"], receive_nothing, send_nothing)]


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("view", "view"),
        ("View.Example.:8080", "view.example"),
        ("[::1]", "::1"),
        ("[::1]:8080", "::1"),
        ("[::1", ""),
        ("[::1]]", ""),
        ("[::1]x", ""),
        ("", ""),
    ],
)
def test_a_host_header_names_its_host_without_port_or_brackets(header: str, name: str) -> None:
    assert host_name(header) == name


async def test_a_request_without_a_host_header_is_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="workqueue.web")
    sent: list[Message] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        raise AssertionError("a request without a host reaches nothing")

    async def receive() -> Message:
        return {"type": "http.request", "body": b""}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/", "headers": []}
    await AllowedHosts(app, hosts=LOCAL_HOSTS)(scope, receive, send)

    assert sent[0]["status"] == 400
    assert sent[1]["body"] == REFUSED.encode()
    assert caplog.messages == [
        "refused a request for host '': not a host this view serves (WORKQUEUE_WEB_ALLOWED_HOSTS)"
    ]


async def test_a_host_header_that_is_not_utf8_names_no_host_and_is_refused() -> None:
    sent: list[Message] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        raise AssertionError("refused requests never reach the app")

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {"type": "http", "headers": [(b"host", b"\xffview")]}
    await AllowedHosts(app, hosts=("view",))(scope, receive_nothing, send)

    assert sent[0]["status"] == 400
