"""``workqueue.django``: the backend's name in TASKS, and the application a worker serves."""

from __future__ import annotations

import pytest
from django.test.utils import override_settings
from django_unit_backend import UNIT_TASKS

import workqueue.django
from workqueue.entrypoints.django.backend import WorkQueueBackend
from workqueue.entrypoints.worker.app import AppLoadError, WorkQueueApp


def test_the_backend_is_named_under_workqueue_django() -> None:
    assert workqueue.django.WorkQueueBackend is WorkQueueBackend


def test_the_app_serves_the_queues_of_the_settings_backends() -> None:
    with override_settings(TASKS={"default": UNIT_TASKS["default"]}):
        app = workqueue.django.app

    assert isinstance(app, WorkQueueApp)
    assert [payload.kind_name() for payload in app.payloads] == ["django.default", "django.mail"]


def test_the_app_of_settings_without_a_workqueue_backend_is_an_error() -> None:
    with (
        override_settings(TASKS={"default": UNIT_TASKS["other"]}),
        pytest.raises(AppLoadError, match="no TASKS backend"),
    ):
        _ = workqueue.django.app


def test_any_other_name_is_not_there() -> None:
    with pytest.raises(
        AttributeError, match=r"^module 'workqueue\.django' has no attribute 'Backend'$"
    ):
        _ = workqueue.django.Backend  # type: ignore[attr-defined]
