"""A Django project whose tasks run on workqueue: the settings and tasks the Django tests use.

Importable as ``django_tasks_app`` (its parent folder on the path), in the test
process and in the worker processes the tests start, so a task's dotted path is
the same in both.
"""
