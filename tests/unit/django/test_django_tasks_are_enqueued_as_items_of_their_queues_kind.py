"""Enqueueing a Django task: one item of its queue's kind, checked before anything is written."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import ModuleType
from typing import Any

import pytest
from django_unit_backend import CLOCK, RETRIED, MemoryBackend

from workqueue.domain import DEFAULT_POLICY, LARGEST_ITEM_ID, WorkStatus
from workqueue.entrypoints.django.backend import WorkQueueBackend, item_id_of, policies_of
from workqueue.entrypoints.django.kinds import (
    KIND_PREFIX,
    TaskPayload,
    kind_of,
    payload_model,
    queue_of,
    task_payload,
)
from workqueue.entrypoints.django.tasks_api import (
    InvalidTask,
    TaskResultStatus,
    task_backends,
)


class TestKinds:
    def test_a_queue_is_the_kind_named_django_dot_queue(self) -> None:
        assert KIND_PREFIX == "django."
        assert kind_of("mail") == "django.mail"
        assert queue_of("django.mail") == "mail"
        assert queue_of("django.") == ""

    def test_a_kind_of_no_queue_has_no_queue(self) -> None:
        assert queue_of("token_cleanup") is None
        assert queue_of("xdjango.mail") is None

    def test_each_queue_has_one_payload_model_of_its_kind(self) -> None:
        model = payload_model("mail")

        assert payload_model("mail") is model
        assert issubclass(model, TaskPayload)
        assert model.kind_name() == "django.mail"
        assert payload_model("other").kind_name() == "django.other"
        assert model.__name__ == "TaskPayload[mail]"
        assert model.__module__ == "workqueue.entrypoints.django.kinds"
        assert type(model.kind).__name__ == "TaskQueue[mail]"
        assert model.kind.name == "QUEUE"

    def test_a_payload_names_the_task_and_carries_its_arguments_as_json(self) -> None:
        payload = task_payload("mail", "shop.tasks.send", (1, (2, 3)), {"copy": b"yes"})

        assert payload.kind_name() == "django.mail"
        assert payload.to_json() == {
            "task": "shop.tasks.send",
            "args": [1, [2, 3]],
            "kwargs": {"copy": "yes"},
        }

    @pytest.mark.parametrize(
        ("args", "kwargs", "error", "message"),
        [
            ([object()], {}, TypeError, "Unsupported type"),
            ([], {"when": datetime(2026, 1, 1, tzinfo=UTC)}, TypeError, "Unsupported type"),
            ([float("nan")], {}, ValueError, "^task arguments must be JSON: Out of range float"),
            ([], {"x": float("inf")}, ValueError, "^task arguments must be JSON: "),
        ],
    )
    def test_arguments_that_are_not_json_are_refused(
        self, args: list[Any], kwargs: dict[str, Any], error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=message) as raised:
            task_payload("mail", "shop.tasks.send", args, kwargs)
        assert raised.value.__cause__ is None


class TestEnqueue:
    def test_the_backend_says_it_supports_what_workqueue_does(self) -> None:
        assert WorkQueueBackend.supports_defer is True
        assert WorkQueueBackend.supports_async_task is True
        assert WorkQueueBackend.supports_get_result is True
        assert WorkQueueBackend.supports_priority is True

    def test_an_enqueue_is_a_queued_item_and_reads_back_ready(self, tasks: ModuleType) -> None:
        result = tasks.add.enqueue(2, b=3)

        [item] = MemoryBackend.items.values()
        assert (item.kind, item.status, item.priority) == ("django.default", WorkStatus.QUEUED, 0)
        assert item.payload == {
            "task": "django_unit_tasks.add",
            "args": [2],
            "kwargs": {"b": 3},
        }
        assert (result.id, result.status, result.backend) == (
            "1",
            TaskResultStatus.READY,
            "default",
        )
        assert (result.args, result.kwargs) == ([2], {"b": 3})
        assert result.enqueued_at == CLOCK.now()

    def test_the_tasks_priority_and_run_after_are_the_items(self, tasks: ModuleType) -> None:
        later = CLOCK.now() + timedelta(hours=1)

        result = tasks.send.using(run_after=later).enqueue("ada@example.com")

        item = MemoryBackend.items[1]
        assert (item.kind, item.priority, item.run_at) == ("django.mail", 5, later)
        assert (result.task.priority, result.task.run_after, result.task.queue_name) == (
            5,
            later,
            "mail",
        )

    def test_an_unknown_queue_is_refused_and_nothing_is_enqueued(self, tasks: ModuleType) -> None:
        with pytest.raises(InvalidTask, match="Queue 'nowhere' is not valid for backend"):
            tasks.add.using(queue_name="nowhere").enqueue(1, 1)
        assert MemoryBackend.items == {}

    def test_a_priority_out_of_range_is_refused_and_nothing_is_enqueued(
        self, tasks: ModuleType
    ) -> None:
        with pytest.raises(InvalidTask, match="priority must be a whole number"):
            tasks.add.using(priority=-101).enqueue(1, 1)
        assert MemoryBackend.items == {}

    def test_arguments_that_are_not_json_enqueue_nothing(self, tasks: ModuleType) -> None:
        with pytest.raises(TypeError):
            tasks.add.enqueue(object(), 1)
        with pytest.raises(ValueError, match="task arguments must be JSON"):
            tasks.add.enqueue(float("nan"), 1)
        assert MemoryBackend.items == {}

    def test_a_naive_run_after_is_refused(self, tasks: ModuleType) -> None:
        with pytest.raises(InvalidTask, match="aware"):
            tasks.add.using(run_after=datetime(2026, 1, 1)).enqueue(1, 1)
        assert MemoryBackend.items == {}


class TestOptions:
    def test_each_queue_has_its_policy_and_one_attempt_without_one(self) -> None:
        backend = task_backends["default"]

        assert isinstance(backend, WorkQueueBackend)
        assert backend.policy("mail") is RETRIED
        assert backend.policy("default") is DEFAULT_POLICY
        assert backend.database == "default"

    def test_the_database_is_an_option(self) -> None:
        backend = WorkQueueBackend("x", {"OPTIONS": {"DATABASE": "queue"}})
        assert (backend.database, backend.policies) == ("queue", {})

    def test_a_policy_that_is_not_a_kind_policy_is_refused(self) -> None:
        with pytest.raises(
            TypeError, match=r"^TASKS OPTIONS POLICIES\['mail'\] must be a KindPolicy, not dict$"
        ):
            policies_of({"POLICIES": {"mail": {"max_attempts": 3}}})

    def test_no_policies_is_none(self) -> None:
        assert policies_of({}) == {}
        assert policies_of({"POLICIES": {"mail": RETRIED}}) == {"mail": RETRIED}


class TestResultIds:
    @pytest.mark.parametrize(
        ("result_id", "item_id"),
        [
            ("1", 1),
            ("42", 42),
            (str(LARGEST_ITEM_ID), LARGEST_ITEM_ID),
            (str(LARGEST_ITEM_ID + 1), None),
            ("0", None),
            ("-1", None),
            ("+1", None),
            (" 1", None),
            ("x", None),
            ("", None),
            ("\u0661", None),  # ARABIC-INDIC DIGIT ONE: a digit, not an id
        ],
    )
    def test_a_result_id_is_an_item_id_in_range(self, result_id: str, item_id: int | None) -> None:
        assert item_id_of(result_id) == item_id
