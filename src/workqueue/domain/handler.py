"""The WorkHandler port: the code that does one kind of work."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Generic, Protocol, TypeVar, get_args, get_origin

from pydantic import JsonValue

from workqueue.domain.payload import WorkPayload
from workqueue.domain.policy import DEFAULT_POLICY, KindPolicy

__all__ = ["WorkContext", "WorkHandler"]

P = TypeVar("P", bound=WorkPayload)


class WorkContext(Protocol):
    """What a running handler may know and say about its item."""

    @property
    def item_id(self) -> int:
        """The id of the item being handled."""
        ...

    @property
    def attempt(self) -> int:
        """Which attempt this is (1 for the first claim)."""
        ...

    @property
    def progress(self) -> JsonValue:
        """The latest progress snapshot: this attempt's, else the one an earlier attempt left."""
        ...

    def report_progress(self, snapshot: JsonValue) -> None:
        """Replace the progress snapshot; the next heartbeat writes it to the item.

        :raises ValueError: if the snapshot is not JSON or exceeds the configured size.
        """
        ...


class WorkHandler(ABC, Generic[P]):
    """Handles the items of one kind, the kind of its payload type.

    Subclass it with the payload type as the type argument; the registry reads the
    kind from there::

        class TokenCleanupHandler(WorkHandler[TokenCleanup]):
            async def handle(self, payload: TokenCleanup, ctx: WorkContext) -> None: ...

    A handler that returns has succeeded, and what it returns (JSON, or None) is
    the item's result; one that raises has failed, and runs again if its kind's
    ``policy`` has attempts left; one that raises :class:`~workqueue.domain.Snooze`
    runs again after the snooze's delay, without a failure (ADR 0031).
    It may be cancelled at any await when its lease is lost or the worker stops.
    In src/, handlers live only in ``entrypoints/worker/handlers``.
    """

    payload_type: ClassVar[type[WorkPayload]]
    policy: ClassVar[KindPolicy] = DEFAULT_POLICY
    """The kind's policy (:class:`~workqueue.domain.KindPolicy`), declared by its handler."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Only the class's own bases: a subclass of a concrete handler inherits payload_type.
        for base in vars(cls).get("__orig_bases__", ()):
            if get_origin(base) is WorkHandler:
                (argument,) = get_args(base)
                if isinstance(argument, type) and issubclass(argument, WorkPayload):
                    cls.payload_type = argument

    @abstractmethod
    async def handle(self, payload: P, ctx: WorkContext) -> JsonValue:
        """Do the work described by ``payload``; return its result, if it has one."""
