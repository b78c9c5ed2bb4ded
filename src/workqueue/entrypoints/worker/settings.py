"""The worker's settings, read from ``WORKQUEUE_*`` environment variables.

Every setting says who reads it. Durations accept plain seconds
(``WORKQUEUE_LEASE_DURATION=60``) or a suffix (``500ms``, ``24h``, ``30d``).
Values that cannot work together fail at startup with one line naming the
setting, raised as :class:`SettingsError`; a database password never appears in
that line, nor in the settings' repr.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
)
from pydantic_core import ErrorDetails
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from workqueue.adapters.postgres import DEFAULT_POOL_MIN_SIZE
from workqueue.application import (
    DEFAULT_CONCURRENCY,
    DEFAULT_EXECUTOR_SETTINGS,
    DEFAULT_MAX_STALLS,
    DEFAULT_POLL_INTERVAL,
)
from workqueue.domain import CronCalendar, WorkQueueError, time_zone, unstorable_character
from workqueue.entrypoints.worker.durations import PositiveDuration, seconds_text
from workqueue.entrypoints.worker.handlers import DEFAULT_DELETE_BATCH_SIZE

__all__ = [
    "ENV_PREFIX",
    "SettingsError",
    "WorkerSettings",
    "checked_host",
    "checked_port",
    "default_embedded_data_dir",
    "default_worker_id",
    "env_name",
    "load_settings",
]

ENV_PREFIX = "WORKQUEUE_"

_DATABASE_SCHEMES = frozenset({"postgresql", "postgres"})


class SettingsError(WorkQueueError, ValueError):
    """The settings cannot be used; the message is one line naming the setting."""


def env_name(field: str) -> str:
    """The environment variable that sets ``field``, e.g. ``WORKQUEUE_LEASE_DURATION``."""
    return f"{ENV_PREFIX}{field.upper()}"


def default_worker_id() -> str:
    """``host:pid:random``: unique per process, and readable in ``workqueue status``.

    The random part keeps two workers apart when a container runtime gives them
    the same hostname and pid.
    """
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


def default_embedded_data_dir() -> Path:
    """Where the embedded PostgreSQL keeps its data when none is configured.

    The data must outlive a run (it is the queue), so ``/tmp`` is out: it is wiped
    on reboot. The other hazard is pgserver itself: when run as root it starts the
    server as a ``pgserver`` system user and, so that user can reach the data, adds
    ``o+rx`` to EVERY parent directory of the data directory. Hence:

    - as root: ``/var/lib/workqueue/pgdata``. ``/var/lib`` is where system services
      keep persistent state, and ``/``, ``/var`` and ``/var/lib`` are already
      world-traversable, so pgserver's chmod changes nothing; a home directory is
      never involved.
    - as any other user: ``$XDG_STATE_HOME/workqueue/pgdata`` (by default
      ``~/.local/state/workqueue/pgdata``), the XDG place for state that persists
      across restarts. pgserver only loosens parents when it runs as root, so an
      ordinary user's home keeps its permissions.

    :mod:`workqueue.entrypoints.worker.embedded` checks again at startup, for any configured
    directory, and refuses one whose parents pgserver would loosen.
    """
    if os.geteuid() == 0:
        return Path("/var/lib/workqueue/pgdata")
    state_home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state_home) / "workqueue" / "pgdata"


# Counts reach PostgreSQL as integer parameters (the stall limit, batch sizes).
_LARGEST_COUNT = 2**31 - 1


# The checks are plain functions named in the fields' types, not decorated
# methods: mutmut cannot mutate a decorated method (docs/adr/0006).

# The settings a check compares with, as an operator writes them.
_LEASE_DURATION = env_name("lease_duration")
_POOL_MIN_SIZE = env_name("pool_min_size")


def _checked_database_url(value: SecretStr | None) -> SecretStr | None:
    # The messages never quote the URL: it may carry a password.
    if value is None:
        return None
    url = value.get_secret_value().strip()
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - reading it is the check: a bad port raises ValueError
    except ValueError:
        raise ValueError("is not a parsable database URL") from None
    if parts.scheme not in _DATABASE_SCHEMES:
        raise ValueError("must be a postgresql:// URL")
    if any(character.isspace() for character in url):
        raise ValueError("must not contain whitespace")
    return SecretStr(url)


def _count_in_range(value: int) -> int:
    if value < 1:
        raise ValueError("must be at least 1")
    if value > _LARGEST_COUNT:
        raise ValueError(f"must be at most {_LARGEST_COUNT}")
    return value


def _heartbeat_renews_before_the_lease_ends(value: timedelta, info: ValidationInfo) -> timedelta:
    lease = info.data.get("lease_duration")
    # A heartbeat no sooner than the lease's end lets every lease expire mid-run.
    if lease is not None and value >= lease:
        raise ValueError(f"must be less than {_LEASE_DURATION} ({seconds_text(lease)})")
    return value


def _pool_holds_its_minimum(value: int, info: ValidationInfo) -> int:
    # Unset, the pool is sized for the concurrency, never below its minimum.
    minimum = info.data.get("pool_min_size")
    if minimum is not None and value < minimum:
        raise ValueError(f"must be at least {_POOL_MIN_SIZE} ({minimum})")
    return value


def _known_log_level(value: str) -> str:
    level = value.strip().upper()
    if level not in logging.getLevelNamesMapping():
        raise ValueError("must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL")
    return level


def _storable_worker_id(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    # Every claim writes it to the database, which cannot store such text.
    character = unstorable_character(value)
    if character is not None:
        raise ValueError(f"must be UTF-8 text (it holds {character})")
    return value


_HIGHEST_PORT = 65535


def checked_host(value: str) -> str:
    """``value`` stripped, if it can name a host to listen on."""
    host = value.strip()
    if not host or any(character.isspace() for character in host):
        raise ValueError("must be a host name or address")
    return host


def checked_port(value: int) -> int:
    """``value``, if it is a TCP port."""
    if not 1 <= value <= _HIGHEST_PORT:
        raise ValueError(f"must be a port from 1 to {_HIGHEST_PORT}")
    return value


def _cron_or_none(value: str | None) -> str | None:
    if value is not None:
        CronCalendar(value)  # raises InvalidScheduleError, a ValueError, saying why
    return value


def _known_time_zone(value: str) -> str:
    time_zone(value)  # raises InvalidScheduleError, a ValueError
    return value


def _kind_names_in_text(value: object) -> object:
    # WORKQUEUE_KINDS and --kinds name the kinds in one text, separated by commas;
    # a blank one names none. Given as a collection (in code), it is taken as it is.
    if isinstance(value, str):
        return value.split(",") if value.strip() else []
    return value


def _named_kinds(value: frozenset[str]) -> frozenset[str]:
    names = frozenset(name.strip() for name in value)
    if "" in names:
        raise ValueError("names an empty kind: separate the kinds by single commas, e.g. a,b")
    return names


def _port_or_none(value: int | None) -> int | None:
    return None if value is None else checked_port(value)


def _module_and_attribute(value: str | None) -> str | None:
    if value is None:
        return None
    module, colon, attribute = value.strip().partition(":")
    names = [*module.split("."), *([attribute] if colon else [])]
    if not all(name.isidentifier() for name in names):
        raise ValueError("must be MODULE[:ATTRIBUTE], e.g. myapp.work:app")
    return value.strip()


_DatabaseUrl = Annotated[SecretStr | None, AfterValidator(_checked_database_url)]
_Count = Annotated[int, AfterValidator(_count_in_range)]
_Heartbeat = Annotated[PositiveDuration, AfterValidator(_heartbeat_renews_before_the_lease_ends)]
_PoolMaxSize = Annotated[_Count, AfterValidator(_pool_holds_its_minimum)]
_LogLevel = Annotated[str, AfterValidator(_known_log_level)]
_WorkerId = Annotated[str, AfterValidator(_storable_worker_id)]
_Host = Annotated[str, AfterValidator(checked_host)]
_OptionalPort = Annotated[int | None, AfterValidator(_port_or_none)]
_OptionalCron = Annotated[str | None, AfterValidator(_cron_or_none)]
_TimeZone = Annotated[str, AfterValidator(_known_time_zone)]


_AppReference = Annotated[str | None, AfterValidator(_module_and_attribute)]
# NoDecode: the environment's text reaches the checks as it is, not read as JSON.
_KindNames = Annotated[
    frozenset[str],
    NoDecode,
    BeforeValidator(_kind_names_in_text),
    AfterValidator(_named_kinds),
]


class WorkerSettings(BaseSettings):
    """Everything the worker and the CLI can be told, with the documented defaults.

    Each default is the constant of the code that reads the setting (the
    executor's, the worker loop's, the pool's, ...), so it is written once. Every
    value, a default too, passes the same checks, once, here; the container hands
    this object on as it is, so a duration reaches its reader as a timedelta.

    Field order matters: a field's consistency check may only look at fields
    declared before it (pydantic validates in order).
    """

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_ignore_empty=True,  # WORKQUEUE_DATABASE_URL= means unset: the embedded database
        extra="forbid",
        frozen=True,
        validate_default=True,
    )

    # Read by the container (workqueue.entrypoints.worker.app.load_app): the application whose
    # kinds the worker, `enqueue` and `status` serve beside the built-in ones.
    app: _AppReference = None
    # Read by the CLI to choose the database: unset starts the embedded PostgreSQL.
    database_url: _DatabaseUrl = None
    # Read by the pool: database_url is a pooler in transaction mode (PgBouncer),
    # so no statement cache, and no LISTEN there (ADR 0021).
    transaction_pooling: bool = False
    # Read by the listener: where it LISTENs instead of database_url (a direct
    # connection beside a pooler); unset, database_url, or polling when pooled.
    listen_database_url: _DatabaseUrl = None
    # Read by the embedded PostgreSQL (workqueue.entrypoints.worker.embedded) when database_url is
    # unset.
    embedded_data_dir: Path = Field(default_factory=default_embedded_data_dir)
    # Read by `workqueue worker`: apply pending migrations before the first claim.
    migrate_on_start: bool = True
    # Read by the CLI when it opens the pool: how often to try an unreachable database.
    connect_attempts: _Count = 5
    # Read by the asyncpg pool: connections held open and the most it may open
    # (unset: sized for the concurrency, see
    # workqueue.entrypoints.worker.database.pool_max_size_for).
    pool_min_size: _Count = DEFAULT_POOL_MIN_SIZE
    pool_max_size: _PoolMaxSize | None = None
    # Read by the container: how many executors (lanes) the worker process runs,
    # each one item at a time.
    concurrency: _Count = DEFAULT_CONCURRENCY
    # Read by the container and the worker's start-up: the only kinds `workqueue worker`
    # claims and schedules (WORKQUEUE_KINDS=a,b, --kinds a,b), each refused unless a
    # handler serves it; empty, every kind served. The other commands never read it.
    kinds: _KindNames = frozenset()

    # Read by the worker loop: the sleep between cycles when nothing is claimable.
    poll_interval: PositiveDuration = DEFAULT_POLL_INTERVAL
    # Read by the executor (claim and heartbeat): how long a lease lasts unrenewed.
    lease_duration: PositiveDuration = DEFAULT_EXECUTOR_SETTINGS.lease_duration
    # Read by the executor: how often a running item's lease is renewed.
    heartbeat_interval: _Heartbeat = DEFAULT_EXECUTOR_SETTINGS.heartbeat_interval
    # Read by lease recovery: the stall that fails an item instead of requeueing it.
    max_stalls: _Count = DEFAULT_MAX_STALLS
    # Read by the executor: the longest error text stored on a failed item.
    max_error_length: _Count = DEFAULT_EXECUTOR_SETTINGS.max_error_length
    # Read by the executor: the largest progress snapshot a handler may report.
    max_progress_bytes: _Count = DEFAULT_EXECUTOR_SETTINGS.max_progress_bytes

    # Read by the retention handler: finished items older than this are deleted.
    retention: PositiveDuration = timedelta(days=30)
    # Read by the scheduler: how often work_item_retention becomes due.
    retention_interval: PositiveDuration = timedelta(hours=24)
    # Read by the scheduler: a cron expression work_item_retention runs on instead
    # of its interval, read in retention_timezone (docs/adr/0032).
    retention_cron: _OptionalCron = None
    retention_timezone: _TimeZone = "UTC"
    # Read by the retention handler: items deleted per statement.
    retention_batch_size: _Count = DEFAULT_DELETE_BATCH_SIZE
    # Read by the scheduler: how often token_cleanup becomes due.
    token_cleanup_interval: PositiveDuration = timedelta(hours=24)
    # Read by the scheduler: a cron expression token_cleanup runs on instead of its
    # interval, read in token_cleanup_timezone.
    token_cleanup_cron: _OptionalCron = None
    token_cleanup_timezone: _TimeZone = "UTC"  # noqa: S105 - a time zone, not a secret
    # Read by the token cleanup handler: tokens deleted per statement.
    token_cleanup_batch_size: _Count = DEFAULT_DELETE_BATCH_SIZE

    # Read by the logging set-up: text lines for people, JSON lines for collectors.
    log_format: Literal["text", "json"] = "text"
    # Read by the logging set-up: the least severe level written.
    log_level: _LogLevel = "INFO"
    # Read by the executor: stamped on every item this worker claims.
    worker_id: _WorkerId = Field(default_factory=default_worker_id)

    # Read by `workqueue worker`: the port of its own /metrics and /healthz (needs the
    # web extra); unset, it serves none.
    metrics_port: _OptionalPort = None
    # Read by `workqueue worker`: the address that port listens on.
    metrics_host: _Host = "127.0.0.1"


def _describe(error: ErrorDetails) -> str:
    location = error["loc"]
    message = error["msg"].removeprefix("Value error, ")
    if location and isinstance(location[0], str):
        return f"invalid setting {env_name(location[0])}: {message}"
    return f"invalid settings: {message}"


def load_settings(**overrides: Any) -> WorkerSettings:
    """Read the settings from the environment; ``overrides`` win (e.g. CLI flags).

    :raises SettingsError: when a value cannot be parsed or contradicts another;
        the message is one line naming each bad setting, never quoting its value.
    """
    try:
        return WorkerSettings(**overrides)
    except ValidationError as error:
        raise SettingsError("; ".join(_describe(detail) for detail in error.errors())) from None
