"""Django's Tasks framework on workqueue (the ``django`` extra).

- :mod:`~workqueue.entrypoints.django.tasks_api`: the framework's names, from Django 6's
  ``django.tasks`` or the ``django_tasks`` backport (docs/adr/0037).
- :mod:`~workqueue.entrypoints.django.kinds`: one kind per task queue, ``django.<queue>``,
  and its payload (the task's path and JSON arguments).
- :mod:`~workqueue.entrypoints.django.backend`: ``WorkQueueBackend``, what ``TASKS`` names.
- :mod:`~workqueue.entrypoints.django.results`: an item as a ``TaskResult``.
- :mod:`~workqueue.entrypoints.django.failures`: a task's exception as a failure, and back.
- :mod:`~workqueue.entrypoints.django.worker`: the application ``workqueue worker --app
  workqueue.django`` serves; the handler is in ``entrypoints/worker/handlers/django_tasks.py``.

The public face is :mod:`workqueue.django`.
"""
