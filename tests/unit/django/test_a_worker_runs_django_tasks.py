"""A worker runs Django's tasks: sync ones in a thread, async ones on the loop, with context."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import pytest
from django_unit_backend import RETRIED
from pydantic import JsonValue

from workqueue.domain import DEFAULT_POLICY
from workqueue.entrypoints.django.failures import TaskRaised
from workqueue.entrypoints.django.kinds import payload_model, task_payload
from workqueue.entrypoints.django.tasks_api import InvalidTask, task_backends
from workqueue.entrypoints.django.worker import app_for
from workqueue.entrypoints.worker.app import AppLoadError
from workqueue.entrypoints.worker.handlers.django_tasks import (
    TaskHandler,
    run_sync,
    task_handler,
)


@dataclass
class Context:
    item_id: int = 7
    attempt: int = 1
    progress: JsonValue = None
    reported: list[JsonValue] = field(default_factory=list)

    def report_progress(self, snapshot: JsonValue) -> None:
        self.reported.append(snapshot)


def handler(queue_name: str = "default") -> TaskHandler:
    return task_handler(queue_name, DEFAULT_POLICY, "default", "w-1")


async def run(task_path: str, *args: Any, ctx: Context | None = None, **kwargs: Any) -> Any:
    payload = task_payload("default", task_path, args, kwargs)
    return await handler().handle(payload, ctx or Context())


class TestRunningTasks:
    async def test_a_sync_task_runs_off_the_loop_and_returns_its_value(
        self, tasks: ModuleType
    ) -> None:
        assert await run("django_unit_tasks.add", 2, b=3) == 5
        thread = await run("django_unit_tasks.thread_name")
        assert thread != threading.current_thread().name

    async def test_sync_tasks_run_side_by_side(self, tasks: ModuleType) -> None:
        both = await asyncio.gather(run("django_unit_tasks.meet"), run("django_unit_tasks.meet"))
        assert both == ["met", "met"]

    async def test_an_async_task_runs_on_the_loop(self, tasks: ModuleType) -> None:
        assert await run("django_unit_tasks.add_later", 2, b=3) == {
            "sum": 5,
            "thread": threading.current_thread().name,
        }

    async def test_what_a_task_returns_is_normalised_to_json(self, tasks: ModuleType) -> None:
        payload = task_payload("mail", "django_unit_tasks.send", ["ada"], {})
        assert await handler("mail").handle(payload, Context()) == ["sent", "ada"]

    async def test_a_return_value_that_is_not_json_fails_the_run(self, tasks: ModuleType) -> None:
        with pytest.raises(TypeError, match="Unsupported type"):
            await run("django_unit_tasks.returns_a_set")

    async def test_a_task_with_context_gets_its_attempt_and_id(self, tasks: ModuleType) -> None:
        assert await run("django_unit_tasks.which_attempt", "x", ctx=Context(9, 3), y=1) == {
            "label": "x",
            "task": "django_unit_tasks.which_attempt",
            "kwargs": {"y": 1},
            "errors": [],
            "attempt": 3,
            "id": "9",
            "workers": ["w-1", "w-1", "w-1"],
            "args": ["x"],
            "backend": "default",
            "status": "RUNNING",
        }

    @pytest.mark.parametrize(
        "task_path", ["django_unit_tasks.fails", "django_unit_tasks.fails_later"]
    )
    async def test_what_a_task_raises_fails_the_attempt_with_its_path_and_traceback(
        self, tasks: ModuleType, task_path: str
    ) -> None:
        with pytest.raises(TaskRaised) as raised:
            await run(task_path, "no such order")

        path, traceback = str(raised.value).split("\n", 1)
        assert path == "builtins.LookupError"
        assert traceback.endswith("LookupError: no such order\n")
        assert isinstance(raised.value.__cause__, LookupError)

    async def test_a_path_that_names_no_task_fails_the_attempt(self, tasks: ModuleType) -> None:
        with pytest.raises(InvalidTask, match="is not a task"):
            await run("django_unit_tasks.NOT_A_TASK")


class TestConnections:
    def test_old_connections_are_closed_before_and_after_a_sync_task(self) -> None:
        calls: list[str] = []

        def work(a: int, b: int) -> int:
            calls.append("task")
            return a + b

        assert run_sync(work, [1], {"b": 2}, tidy=lambda: calls.append("tidy")) == 3
        assert calls == ["tidy", "task", "tidy"]

    def test_they_are_closed_after_a_task_that_raised_too(self) -> None:
        calls: list[str] = []

        def work() -> None:
            raise OSError("down")

        with pytest.raises(OSError, match="down"):
            run_sync(work, [], {}, tidy=lambda: calls.append("tidy"))
        assert calls == ["tidy", "tidy"]

    def test_by_default_djangos_own_close_old_connections_tidies(self) -> None:
        assert run_sync(lambda x: x, [4], {}) == 4


class TestHandlers:
    def test_each_queue_has_a_handler_of_its_kind_with_its_policy(self) -> None:
        made = task_handler("mail", RETRIED, "default", "w-1")

        assert isinstance(made, TaskHandler)
        assert type(made).payload_type is payload_model("mail")
        assert type(made).policy is RETRIED
        assert type(made).__name__ == "TaskHandler[mail]"


class TestTheWorkersApplication:
    def test_it_serves_every_queue_of_the_workqueue_backends(self, tasks: ModuleType) -> None:
        default = task_backends["default"]
        app = app_for([task_backends["other"], default])

        assert [payload.kind_name() for payload in app.payloads] == [
            "django.default",
            "django.mail",
        ]
        assert [kind.value for kind in app.kinds] == ["django.default", "django.mail"]  # type: ignore[union-attr]
        assert app.token_cleanup is False
        assert app.schedules == ()

    def test_its_handlers_have_each_queues_policy_and_the_workers_id(
        self, tasks: ModuleType
    ) -> None:
        from workqueue.entrypoints.worker.settings import WorkerSettings

        app = app_for([task_backends["default"]])
        resources: Any = type("Resources", (), {"settings": WorkerSettings(worker_id="w-9")})()

        built = app.build_handlers(resources)

        assert [type(made).payload_type.kind_name() for made in built] == [
            "django.default",
            "django.mail",
        ]
        assert [type(made).policy for made in built] == [DEFAULT_POLICY, RETRIED]
        assert [made._worker_id for made in built] == ["w-9", "w-9"]  # type: ignore[attr-defined]
        assert [made._alias for made in built] == ["default", "default"]  # type: ignore[attr-defined]

    def test_a_queue_of_two_backends_is_served_with_the_first_ones_policy(self) -> None:
        from workqueue.entrypoints.django.backend import WorkQueueBackend

        first = WorkQueueBackend(
            "first", {"QUEUES": ["mail"], "OPTIONS": {"POLICIES": {"mail": RETRIED}}}
        )
        second = WorkQueueBackend("second", {"QUEUES": ["mail", "b"]})

        app = app_for([first, second])
        resources: Any = type("Resources", (), {"settings": type("S", (), {"worker_id": "w"})()})()

        built = app.build_handlers(resources)
        assert [(type(made).payload_type.kind_name(), type(made).policy) for made in built] == [
            ("django.mail", RETRIED),
            ("django.b", DEFAULT_POLICY),
        ]

    def test_no_workqueue_backend_is_an_error(self) -> None:
        with pytest.raises(
            AppLoadError, match=r"^no TASKS backend is a workqueue\.django\.WorkQueueBackend$"
        ):
            app_for([task_backends["other"]])

    def test_a_backend_without_queues_is_an_error(self) -> None:
        with pytest.raises(
            AppLoadError,
            match=(
                r"^the TASKS backend 'anywhere' names no QUEUES: "
                r"a worker serves the queues it is told of$"
            ),
        ):
            app_for([task_backends["default"], task_backends["anywhere"]])
