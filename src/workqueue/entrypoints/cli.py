"""The ``workqueue`` command: ``worker``, ``migrate``, ``status``, ``enqueue``, ``cancel``,
``requeue``, ``pause``, ``resume``, ``cap``, ``web``.

``main`` is the console script. It reads the settings (``WORKQUEUE_*``), builds
the container and runs one command, and turns every expected failure into ONE
line on stderr and an exit status (see :mod:`workqueue.entrypoints.exit_status`): 0 done,
1 runtime failure (or, for ``cancel ID``, ``requeue ID`` and ``resume``, nothing to do; for
``cancel --kind`` and ``requeue --kind``, a question answered no), 2 bad usage or input,
128 + the signal when interrupted (``workqueue: interrupted``; 130 for Ctrl-C, also a
worker's start-up cut short by SIGINT, 143 by SIGTERM). Command output goes to stdout,
log lines to stderr.

Tests and tools run the same path with a container of their own::

    main(["status"], container_factory=lambda settings: my_container(settings))
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TextIO

from workqueue._version import __version__
from workqueue.domain import MAX_CAP, UnknownKindError
from workqueue.entrypoints.commands import (
    BULK_FLAGS,
    bulk_arguments_problem,
    cancel_item,
    cancel_queued_of_kind,
    cap_text,
    cap_work,
    delay_text,
    enqueue_work,
    list_schedules,
    migrate_database,
    pause_work,
    payload_file_text,
    requeue_failed_of_kind,
    requeue_item,
    resume_work,
    run_at_text,
    show_item,
    show_status,
)
from workqueue.entrypoints.commands.cap import NO_CAP
from workqueue.entrypoints.console import take_noted_stop_signal
from workqueue.entrypoints.exit_status import ExitStatus, exit_status_for, interrupted_status
from workqueue.entrypoints.extras import missing_extra
from workqueue.entrypoints.worker.container import (
    WorkerContainer,
    build_container,
    shutdown_resources,
)
from workqueue.entrypoints.worker.log_format import configure_logging, mask_url_passwords
from workqueue.entrypoints.worker.run import run_worker
from workqueue.entrypoints.worker.settings import SettingsError, WorkerSettings, load_settings

__all__ = ["ContainerFactory", "build_parser", "main"]

logger = logging.getLogger("workqueue.cli")

ContainerFactory = Callable[[WorkerSettings], WorkerContainer]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command (settings come from the environment)."""
    parser = argparse.ArgumentParser(
        prog="workqueue",
        description="A durable work queue on PostgreSQL. Settings come from WORKQUEUE_* "
        "environment variables; with WORKQUEUE_DATABASE_URL unset an embedded "
        "PostgreSQL is started.",
    )
    # The bare version, as `pip show workqueue-pg` and workqueue.__version__ give it.
    parser.add_argument("--version", action="version", version=__version__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    worker = commands.add_parser(
        "worker", help="run a worker until SIGTERM or SIGINT (twice forces exit)"
    )
    worker.add_argument(
        "--no-migrate",
        action="store_true",
        help="do not apply pending migrations; refuse to start if any is pending",
    )
    worker.add_argument(
        "--log-format",
        choices=["text", "json"],
        help="log line format (default: WORKQUEUE_LOG_FORMAT, else text)",
    )
    worker.add_argument(
        "--concurrency",
        metavar="N",
        help="run N items at a time in this process (default: WORKQUEUE_CONCURRENCY, else 1)",
    )
    worker.add_argument(
        "--kinds",
        metavar="KIND,...",
        help="claim and schedule only these kinds (default: WORKQUEUE_KINDS, else all)",
    )

    commands.add_parser("migrate", help="apply pending migrations and say which")
    _app_option(worker)

    status = commands.add_parser("status", help="show counts, live items and recent failures")
    status.add_argument("--json", action="store_true", help="print one JSON document")
    _app_option(status)

    show = commands.add_parser(
        "show", help="show item ID in full: its result and every failure included"
    )
    show.add_argument("item_id", type=item_id, metavar="ID", help="the item's id")
    show.add_argument("--json", action="store_true", help="print one JSON document")

    schedules = commands.add_parser(
        "schedules", help="list the periodic kinds, each with its last and next run"
    )
    schedules.add_argument("--json", action="store_true", help="print one JSON document")
    _app_option(schedules)

    enqueue = commands.add_parser("enqueue", help="enqueue one item of KIND")
    enqueue.add_argument("kind", metavar="KIND", help="the kind, e.g. token_cleanup")
    payload = enqueue.add_mutually_exclusive_group()
    payload.add_argument(
        "--payload", default="{}", metavar="JSON", help="the payload as JSON (default: {})"
    )
    payload.add_argument(
        "--payload-file",
        metavar="PATH",
        help="read the payload's JSON from PATH (- for standard input)",
    )
    enqueue.add_argument(
        "--dedup-key",
        metavar="KEY",
        help="absorb this enqueue into a queued item of KIND with the same key",
    )
    enqueue.add_argument(
        "--priority",
        type=int,
        default=0,
        metavar="P",
        help="from -100 to 100, larger runs sooner (default: 0)",
    )
    when = enqueue.add_mutually_exclusive_group()
    when.add_argument(
        "--run-at",
        metavar="TIME",
        help="not before TIME, ISO 8601 with its time zone (e.g. 2026-12-24T18:00:00+01:00)",
    )
    when.add_argument(
        "--delay",
        metavar="DURATION",
        help="not before DURATION from now (e.g. 90, 30s, 5m, 2h, 1d)",
    )
    _app_option(enqueue)

    cancel = commands.add_parser(
        "cancel",
        help="cancel item ID (queued at once, running through its worker), or KIND's queued items",
    )
    cancel.add_argument("item_id", type=item_id, nargs="?", metavar="ID", help="the item's id")
    cancel.add_argument(
        "--reason",
        metavar="TEXT",
        help="stored as the item's error (default: 'cancelled by an operator')",
    )
    _kind_options(cancel, "--queued", "with --kind: cancel its queued items, delayed ones too")

    requeue = commands.add_parser(
        "requeue",
        help="enqueue failed or cancelled item ID again as a new item, or KIND's failed items",
    )
    requeue.add_argument("item_id", type=item_id, nargs="?", metavar="ID", help="the item's id")
    _kind_options(
        requeue, "--failed", "with --kind: requeue its failed items no bulk requeue took yet"
    )
    _app_option(requeue)

    pause = commands.add_parser("pause", help="claim no item of KIND until it is resumed")
    pause.add_argument("kind", metavar="KIND", help="the kind, e.g. token_cleanup")
    pause.add_argument("--reason", metavar="TEXT", help="why, shown with the pause")
    _app_option(pause)

    resume = commands.add_parser("resume", help="resume KIND: workers claim its items again")
    resume.add_argument("kind", metavar="KIND", help="the kind")

    cap = commands.add_parser("cap", help="at most N items of KIND run at once across every worker")
    cap.add_argument("kind", metavar="KIND", help="the kind, e.g. token_cleanup")
    cap.add_argument(
        "max_running", metavar="N", help=f"from 1 to {MAX_CAP}, or {NO_CAP} to clear the cap"
    )
    _app_option(cap)

    web = commands.add_parser("web", help="serve the admin page, its JSON API, /metrics, /healthz")
    web.add_argument(
        "--host", help="address to listen on (default: WORKQUEUE_WEB_HOST, else 127.0.0.1)"
    )
    web.add_argument(
        "--port", type=int, help="port to listen on (default: WORKQUEUE_WEB_PORT, else 8080)"
    )
    _app_option(web)
    return parser


def _kind_options(command: argparse.ArgumentParser, flag: str, takes: str) -> None:
    """``--kind KIND``, ``flag`` (which of its items) and ``--yes``: a bulk action on a kind."""
    command.add_argument(
        "--kind", metavar="KIND", help=f"act on items of KIND instead of item ID (with {flag})"
    )
    command.add_argument(flag, dest="bulk", action="store_true", help=takes)
    command.add_argument("--yes", action="store_true", help="with --kind: act without asking first")


def _arguments_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with a ``cancel``'s or ``requeue``'s arguments, in one line; None if
    nothing is (or the command is another)."""
    if args.command not in BULK_FLAGS:
        return None
    return bulk_arguments_problem(
        args.command,
        item_id=args.item_id,
        kind=args.kind,
        bulk=args.bulk,
        yes=args.yes,
        answers=sys.stdin,
    )


def _answers(args: argparse.Namespace) -> TextIO | None:
    """Where a bulk action reads the answer to its question; None with ``--yes``: not asked."""
    return None if args.yes else sys.stdin


def _app_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--app",
        metavar="MODULE[:ATTRIBUTE]",
        help="the application (a WorkQueueApp) whose kinds join the built-in ones "
        "(default: WORKQUEUE_APP)",
    )


def _settings_overrides(args: argparse.Namespace) -> dict[str, object]:
    """The options that are settings (--log-format, --app) and were given: each wins
    over its WORKQUEUE_* variable. An option is a setting when its name is a field's."""
    return {
        name: value
        for name, value in vars(args).items()
        if name in WorkerSettings.model_fields and value is not None
    }


def _command(
    args: argparse.Namespace, container: WorkerContainer, settings: WorkerSettings, out: TextIO
) -> Coroutine[Any, Any, object]:
    if args.command == "worker":
        return run_worker(container, migrate=settings.migrate_on_start and not args.no_migrate)
    if args.command == "migrate":
        return migrate_database(container, out)
    if args.command == "status":
        return show_status(container, out, as_json=args.json)
    if args.command == "show":
        return show_item(container, out, item_id=args.item_id, as_json=args.json)
    if args.command == "schedules":
        return list_schedules(container, out, as_json=args.json)
    if args.command == "web":
        return _serve_web(container, host=args.host, port=args.port)
    if args.command == "cancel" and args.kind is not None:
        return cancel_queued_of_kind(
            container, out, kind=args.kind, reason=args.reason, answers=_answers(args)
        )
    if args.command == "cancel":
        return cancel_item(container, out, item_id=args.item_id, reason=args.reason)
    if args.command == "requeue" and args.kind is not None:
        return requeue_failed_of_kind(container, out, kind=args.kind, answers=_answers(args))
    if args.command == "requeue":
        return requeue_item(container, out, item_id=args.item_id)
    if args.command == "pause":
        return pause_work(container, out, kind=args.kind, reason=args.reason)
    if args.command == "resume":
        return resume_work(container, out, kind=args.kind)
    if args.command == "cap":
        return cap_work(container, out, kind=args.kind, max_running=cap_text(args.max_running))
    return enqueue_work(
        container,
        out,
        kind=args.kind,
        payload_json=(
            args.payload
            if args.payload_file is None
            else payload_file_text(args.payload_file, args.kind)
        ),
        dedup_key=args.dedup_key,
        priority=args.priority,
        run_at=None if args.run_at is None else run_at_text(args.run_at),
        delay=None if args.delay is None else delay_text(args.delay),
    )


async def _serve_web(container: WorkerContainer, *, host: str | None, port: int | None) -> None:
    # Imported here: the web view needs the `web` extra, the other commands do not.
    try:
        from workqueue.entrypoints.web.run import serve_web
        from workqueue.entrypoints.web.settings import load_web_settings
    except ModuleNotFoundError as error:
        missing = missing_extra(error, "workqueue web")
        if missing is None:
            raise
        raise missing from error

    await serve_web(container, load_web_settings(host=host, port=port))


def item_id(text: str) -> int:
    """An item id as typed: a positive whole number.

    :raises argparse.ArgumentTypeError: otherwise (argparse then exits with 2).
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an item id: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"not an item id: {text!r} (ids start at 1)")
    return value


async def _run(
    args: argparse.Namespace, container: WorkerContainer, settings: WorkerSettings, out: TextIO
) -> object:
    try:
        return await _command(args, container, settings, out)
    finally:
        # run_worker closes its own; closing twice is harmless.
        await shutdown_resources(container)


def _worker_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop when the `uvloop` extra is installed, else None: the default loop."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


# Said after an unknown kind when no application was named: the kind may be one of it.
_APP_HINT = (
    "not a built-in kind; if it is your application's, pass --app MODULE or set WORKQUEUE_APP"
)


def _error_text(error: Exception, settings: WorkerSettings) -> str:
    """What the one line says of ``error``: its message, and for an unknown kind while
    no application is named (``--app``, ``WORKQUEUE_APP``), where its kind may come from."""
    text = str(error) or type(error).__name__
    if isinstance(error, UnknownKindError) and settings.app is None:
        # Without an application every kind served is a built-in one.
        return f"{text}: {_APP_HINT}"
    return text


def _fail(message: str, err: TextIO) -> None:
    # One line, whatever the error said: an operator greps for it, a script reads it.
    line = " ".join(mask_url_passwords(message).split())
    print(f"workqueue: {line}", file=err)


def _hears_its_own_stop_signals(command: str) -> bool:
    """Whether ``command`` takes over a stop signal the console script noted itself: the
    worker does, in its run (as one during its start-up); the others end at once."""
    return command == "worker"


def main(
    argv: Sequence[str] | None = None,
    *,
    container_factory: ContainerFactory = build_container,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run the ``workqueue`` command line; return the exit status.

    :param argv: the arguments after the program name (default: ``sys.argv[1:]``).
    :param container_factory: builds the container from the settings; tests pass
        one that overrides providers (in-memory stores, extra kinds).
    :param out: where command output goes (default: stdout).
    :param err: where the one-line error goes (default: stderr).
    """
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exit_:
        # argparse has printed usage (or help); keep its status, 2 or 0.
        return ExitStatus(int(exit_.code or 0))
    if not _hears_its_own_stop_signals(args.command):
        noted = take_noted_stop_signal()
        if noted is not None:
            _fail("interrupted", err)
            return interrupted_status(noted)
    problem = _arguments_problem(args)
    if problem is not None:
        _fail(problem, err)
        return ExitStatus.USAGE

    try:
        settings = load_settings(**_settings_overrides(args))
    except SettingsError as error:
        _fail(str(error), err)
        return ExitStatus.USAGE
    configure_logging(settings.log_format, settings.log_level)

    try:
        container = container_factory(settings)
        # The worker runs on uvloop: each item is a few database round trips, and
        # asyncpg spends about half the client time per round trip there that it
        # does on the default loop. The short commands keep the default loop.
        loop_factory = _worker_loop_factory() if args.command == "worker" else None
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            done = runner.run(_run(args, container, settings, out))
    except BrokenPipeError:
        # The reader went away (`workqueue status | head`): nothing is wrong, and
        # nothing more can be said. Point stdout at devnull so the interpreter's
        # final flush does not complain either (the Python docs' recipe).
        if out is sys.stdout:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return ExitStatus.OK
    except KeyboardInterrupt:
        # Only the short commands get here: the worker handles SIGINT itself.
        _fail("interrupted", err)
        return interrupted_status(signal.SIGINT)
    except Exception as error:
        status = exit_status_for(error)
        if status is None:
            logger.exception("unexpected error in %s", args.command)
            status = ExitStatus.FAILURE
        _fail(_error_text(error, settings), err)
        return status
    if isinstance(done, signal.Signals):
        # A worker whose start-up a stop signal cut short: it never ran.
        _fail("interrupted", err)
        return interrupted_status(done)
    # cancel ID, requeue ID and resume say 1 when they found nothing to do, a bulk cancel or
    # requeue when its question was answered no; the others end in 0.
    return done if isinstance(done, ExitStatus) else ExitStatus.OK


if __name__ == "__main__":
    sys.exit(main())
