"""The kind registry: which payload model and which handler serve each kind.

Built once at startup from a kind enum, the payload classes and the handlers; it
refuses to exist unless every kind has exactly one of each. After that, turning a
stored ``(kind, payload)`` into a typed payload and its handler is a dict lookup,
never a switch on the kind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import Enum
from typing import Any, Generic, TypeVar

from pydantic import ValidationError

from domain import (
    InvalidPayloadError,
    KindRegistryError,
    UnknownKindError,
    WorkHandler,
    WorkPayload,
    kind_name,
)

__all__ = ["KindRegistry", "describe_validation_error"]

K = TypeVar("K", bound=Enum)


class KindRegistry(Generic[K]):
    """The payload model and the handler of every member of one kind enum.

    A handler's kind is its class's ``payload_type.kind`` (set by subclassing
    ``WorkHandler[SomePayload]``), and it must handle that kind's registered
    payload class.

    :param kinds: the kind enum; every member must be served.
    :param payloads: one :class:`~domain.WorkPayload` subclass per kind.
    :param handlers: one :class:`~domain.WorkHandler` instance per kind.
    :raises KindRegistryError: unless every kind has exactly one payload class and
        exactly one handler, and every payload and handler belongs to a kind of the
        enum. The one message lists every problem, each naming its kind or class.
    """

    __slots__ = ("_enum", "_handlers", "_known", "_names", "_payload_types")

    def __init__(
        self,
        kinds: type[K],
        payloads: Iterable[type[WorkPayload]],
        handlers: Iterable[WorkHandler[Any]],
    ) -> None:
        problems: list[str] = []
        names: list[str] = []
        for member in kinds:
            try:
                names.append(kind_name(member))
            except TypeError as error:
                problems.append(str(error))
        payloads_by_kind: dict[str, list[type[WorkPayload]]] = {name: [] for name in names}
        handlers_by_kind: dict[str, list[WorkHandler[Any]]] = {name: [] for name in names}

        for payload_type in payloads:
            kind = _payload_kind(payload_type, kinds, problems)
            if kind is not None:
                payloads_by_kind[kind].append(payload_type)
        for handler in handlers:
            kind = _handler_kind(handler, kinds, problems)
            if kind is not None:
                handlers_by_kind[kind].append(handler)

        for name in names:
            problems.extend(_kind_problems(name, payloads_by_kind[name], handlers_by_kind[name]))
        if problems:
            raise KindRegistryError(
                f"cannot build the kind registry for {kinds.__qualname__}: " + "; ".join(problems)
            )

        self._enum = kinds
        self._names = frozenset(names)
        self._known = sorted(names)
        self._payload_types = {name: payloads_by_kind[name][0] for name in names}
        self._handlers = {name: handlers_by_kind[name][0] for name in names}

    @property
    def kind_enum(self) -> type[K]:
        """The kind enum this registry serves."""
        return self._enum

    @property
    def kinds(self) -> frozenset[str]:
        """The names of every kind served: what a worker claims."""
        return self._names

    def __contains__(self, kind: object) -> bool:
        return kind in self._names

    def payload_type(self, kind: str) -> type[WorkPayload]:
        """The payload model of ``kind``.

        :raises UnknownKindError: if ``kind`` is not served here.
        """
        try:
            return self._payload_types[kind]
        except KeyError:
            raise UnknownKindError(kind, self._known) from None

    def handler(self, kind: str) -> WorkHandler[Any]:
        """The handler of ``kind``.

        :raises UnknownKindError: if ``kind`` is not served here.
        """
        try:
            return self._handlers[kind]
        except KeyError:
            raise UnknownKindError(kind, self._known) from None

    def decode(self, kind: str, payload: Mapping[str, Any]) -> WorkPayload:
        """Validate a stored payload against its kind's model.

        :raises UnknownKindError: if ``kind`` is not served here.
        :raises InvalidPayloadError: if the payload does not validate; the message
            names the kind and each failing field with pydantic's reason, on one line.
        """
        payload_type = self.payload_type(kind)
        try:
            return payload_type.model_validate(payload)
        except ValidationError as error:
            raise InvalidPayloadError(kind, describe_validation_error(error)) from error

    def dispatch(
        self, kind: str, payload: Mapping[str, Any]
    ) -> tuple[WorkHandler[Any], WorkPayload]:
        """The handler of ``kind`` and ``payload`` decoded for it: what running a stored item takes.

        :raises UnknownKindError: if ``kind`` is not served here.
        :raises InvalidPayloadError: if the payload does not validate (see :meth:`decode`).
        """
        decoded = self.decode(kind, payload)
        return self._handlers[kind], decoded

    def parse_json(self, kind: str, text: str) -> WorkPayload:
        """Parse and validate a payload given as JSON text (what the CLI receives).

        :raises UnknownKindError: if ``kind`` is not served here.
        :raises InvalidPayloadError: if ``text`` is not JSON or does not validate.
        """
        payload_type = self.payload_type(kind)
        try:
            return payload_type.model_validate_json(text)
        except ValidationError as error:
            raise InvalidPayloadError(kind, describe_validation_error(error)) from error

    def __repr__(self) -> str:
        return f"KindRegistry({self._enum.__qualname__}, kinds={self._known!r})"


def describe_validation_error(error: ValidationError) -> str:
    """Pydantic's errors as one compact line: ``field.path: reason; other: reason``.

    An error about the payload as a whole (not a field) is labelled ``payload``.
    """
    parts = []
    for detail in error.errors():
        location = ".".join(str(part) for part in detail["loc"]) or "payload"
        reason = " ".join(str(detail["msg"]).split())
        parts.append(f"{location}: {reason}")
    return "; ".join(parts)


def _payload_kind(payload_type: object, kinds: type[Enum], problems: list[str]) -> str | None:
    """The kind name ``payload_type`` serves, or None after noting why it serves none."""
    if not (isinstance(payload_type, type) and issubclass(payload_type, WorkPayload)):
        problems.append(f"{payload_type!r} is not a WorkPayload subclass")
        return None
    kind = payload_type.kind
    if not isinstance(kind, kinds):
        problems.append(
            f"payload {payload_type.__qualname__} is of kind {kind!r}, "
            f"which is not a member of {kinds.__qualname__}"
        )
        return None
    return kind_name(kind)


def _handler_kind(handler: object, kinds: type[Enum], problems: list[str]) -> str | None:
    """The kind name ``handler`` serves, or None after noting why it serves none."""
    handler_class = type(handler)
    if not isinstance(handler, WorkHandler):
        problems.append(f"{handler!r} is not a WorkHandler")
        return None
    payload_type = getattr(handler_class, "payload_type", None)
    if not (isinstance(payload_type, type) and issubclass(payload_type, WorkPayload)):
        problems.append(
            f"handler {handler_class.__qualname__} has no payload_type; "
            "declare it as a subclass of WorkHandler[SomePayload]"
        )
        return None
    kind = payload_type.kind
    if not isinstance(kind, kinds):
        problems.append(
            f"handler {handler_class.__qualname__} handles kind {kind!r}, "
            f"which is not a member of {kinds.__qualname__}"
        )
        return None
    return kind_name(kind)


def _kind_problems(
    kind: str, payload_types: list[type[WorkPayload]], handlers: list[WorkHandler[Any]]
) -> list[str]:
    """What is wrong with one kind's payload classes and handlers; empty when nothing is."""
    problems = []
    if not payload_types:
        problems.append(f"kind {kind!r} has no payload class")
    elif len(payload_types) > 1:
        names = ", ".join(payload_type.__qualname__ for payload_type in payload_types)
        problems.append(f"kind {kind!r} has {len(payload_types)} payload classes: {names}")
    if not handlers:
        problems.append(f"kind {kind!r} has no handler")
    elif len(handlers) > 1:
        names = ", ".join(type(handler).__qualname__ for handler in handlers)
        problems.append(f"kind {kind!r} has {len(handlers)} handlers: {names}")
    if len(payload_types) == 1 and len(handlers) == 1:
        expected = type(handlers[0]).payload_type
        if expected is not payload_types[0]:
            # decode() builds the registered class: a handler typed for another gets the wrong one
            problems.append(
                f"kind {kind!r}: handler {type(handlers[0]).__qualname__} handles payload "
                f"{expected.__qualname__}, but the kind's payload class is "
                f"{payload_types[0].__qualname__}"
            )
    return problems
