"""The kind registry: which payload model and which handler serve each kind.

Built once at startup from the kinds (one kind enum or several: the built-in
maintenance kinds beside an application's own), the payload classes and the
handlers; it refuses to exist unless every kind has exactly one of each, no two
kinds share a name, and every schedule's kind is served. After that, turning a
stored ``(kind, payload)`` into a typed payload and its handler is a dict lookup,
never a switch on the kind.

:class:`KindCatalog` is the payload half on its own: what validating an enqueue
needs, with no handler (and so no database) built.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import Enum
from typing import Any, Generic, NamedTuple, TypeVar

from pydantic import ValidationError

from workqueue.domain import (
    InvalidPayloadError,
    KindPolicy,
    KindRegistryError,
    UnknownKindError,
    WorkHandler,
    WorkPayload,
    WorkSchedule,
    kind_name,
)

__all__ = ["Dispatch", "KindCatalog", "KindRegistry", "Kinds", "describe_validation_error"]

K = TypeVar("K", bound=Enum)

Kinds = type[K] | Iterable[K | type[K]]
"""The kinds served: a kind enum, or kind enums and single members (``[WorkKind, MyKind]``)."""


class _Declared:
    """The kinds as given: their members by name, and what is wrong with them."""

    __slots__ = ("enums", "members", "problems", "source")

    def __init__(self, kinds: Kinds[Any]) -> None:
        self.problems: list[str] = []
        self.members: dict[str, Enum] = {}
        self.enums: list[type[Enum]] = []
        given: Iterable[Any] = [kinds] if isinstance(kinds, type) else kinds
        for entry in given:
            if isinstance(entry, type) and issubclass(entry, Enum):
                self._add_enum(entry)
                for member in entry:
                    self._add(member)
            elif isinstance(entry, Enum):
                self._add_enum(type(entry))
                self._add(entry)
            else:
                self.problems.append(f"{entry!r} is neither a kind enum nor one of its members")
        self.source = " or ".join(enum.__qualname__ for enum in self.enums) or "no kind enum"

    def _add_enum(self, enum: type[Enum]) -> None:
        if enum not in self.enums:
            self.enums.append(enum)

    def _add(self, member: Enum) -> None:
        try:
            name = kind_name(member)
        except TypeError as error:
            self.problems.append(str(error))
            return
        seen = self.members.setdefault(name, member)
        if seen is not member:
            # Two enums, one stored name: their items could not be told apart in the table.
            self.problems.append(
                f"kind {name!r} is declared twice: {_member_text(seen)} and {_member_text(member)}"
            )

    def served(self, kind: object) -> str | None:
        """The name of ``kind`` if it is one of the members given (the very member), else None."""
        if not isinstance(kind, Enum):
            return None
        name = kind.value
        if isinstance(name, str) and self.members.get(name) is kind:
            return name
        return None


def _member_text(member: Enum) -> str:
    return f"{type(member).__qualname__}.{member.name}"


class KindCatalog(Generic[K]):
    """The payload model of every kind served: what producing and the CLI validate against.

    :param kinds: the kinds served (see :data:`Kinds`); every member must have a payload.
    :param payloads: one :class:`~workqueue.domain.WorkPayload` subclass per kind.
    :raises KindRegistryError: unless every kind has exactly one payload class, every
        payload belongs to a kind served, and no two kinds share a name. The one
        message lists every problem, each naming its kind or class.
    """

    __slots__ = ("_declared", "_known", "_names", "_payload_types")

    def __init__(self, kinds: Kinds[K], payloads: Iterable[type[WorkPayload]]) -> None:
        declared = _Declared(kinds)
        payloads_by_kind = _payloads_by_kind(declared, payloads)
        problems = declared.problems
        for name, payload_types in payloads_by_kind.items():
            problems.extend(_payload_problems(name, payload_types))
        self._accept(declared, payloads_by_kind)
        _refuse_if_any(declared, problems)

    def _accept(
        self, declared: _Declared, payloads_by_kind: dict[str, list[type[WorkPayload]]]
    ) -> None:
        self._declared = declared
        self._names = frozenset(declared.members)
        self._known = sorted(declared.members)
        self._payload_types = {
            name: found[0] for name, found in payloads_by_kind.items() if len(found) == 1
        }

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
        return f"{type(self).__name__}({self._declared.source}, kinds={self._known!r})"


class KindRegistry(KindCatalog[K]):
    """The payload model and the handler of every kind served.

    A handler's kind is its class's ``payload_type.kind`` (set by subclassing
    ``WorkHandler[SomePayload]``), and it must handle that kind's registered
    payload class.

    :param kinds: the kinds served (see :data:`Kinds`); every member must be served.
    :param payloads: one :class:`~workqueue.domain.WorkPayload` subclass per kind.
    :param handlers: one :class:`~workqueue.domain.WorkHandler` instance per kind.
    :param schedules: the periodic kinds; each must be a kind served here, with its
        registered payload class (else its items would wait forever).
    :raises KindRegistryError: unless every kind has exactly one payload class and
        exactly one handler, every payload and handler belongs to a kind served, no
        two kinds share a name and every schedule's kind is served. The one message
        lists every problem, each naming its kind or class.
    """

    __slots__ = ("_handlers",)

    def __init__(
        self,
        kinds: Kinds[K],
        payloads: Iterable[type[WorkPayload]],
        handlers: Iterable[WorkHandler[Any]],
        schedules: Iterable[WorkSchedule] = (),
    ) -> None:
        declared = _Declared(kinds)
        problems = declared.problems
        payloads_by_kind = _payloads_by_kind(declared, payloads)
        handlers_by_kind: dict[str, list[WorkHandler[Any]]] = {
            name: [] for name in declared.members
        }
        for handler in handlers:
            kind = _handler_kind(handler, declared)
            if kind is not None:
                handlers_by_kind[kind].append(handler)
        for name in declared.members:
            problems.extend(_payload_problems(name, payloads_by_kind[name]))
            problems.extend(_handler_problems(name, payloads_by_kind[name], handlers_by_kind[name]))
        self._accept(declared, payloads_by_kind)
        problems.extend(_schedule_problems(schedules, self._payload_types))
        _refuse_if_any(declared, problems)
        self._handlers = {name: found[0] for name, found in handlers_by_kind.items()}

    def handler(self, kind: str) -> WorkHandler[Any]:
        """The handler of ``kind``.

        :raises UnknownKindError: if ``kind`` is not served here.
        """
        try:
            return self._handlers[kind]
        except KeyError:
            raise UnknownKindError(kind, self._known) from None

    def dispatch(self, kind: str, payload: Mapping[str, Any]) -> Dispatch:
        """What running a stored item takes: its handler, ``payload`` decoded for it, and
        the kind's policy (declared by the handler).

        :raises UnknownKindError: if ``kind`` is not served here.
        :raises InvalidPayloadError: if the payload does not validate (see :meth:`decode`).
        """
        decoded = self.decode(kind, payload)
        handler = self._handlers[kind]
        return Dispatch(handler, decoded, handler.policy)


class Dispatch(NamedTuple):
    """What :meth:`KindRegistry.dispatch` finds for a stored item."""

    handler: WorkHandler[Any]
    payload: WorkPayload
    policy: KindPolicy


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


def _refuse_if_any(declared: _Declared, problems: list[str]) -> None:
    if problems:
        raise KindRegistryError(
            f"cannot build the kind registry for {declared.source}: " + "; ".join(problems)
        )


def _payloads_by_kind(
    declared: _Declared, payloads: Iterable[type[WorkPayload]]
) -> dict[str, list[type[WorkPayload]]]:
    payloads_by_kind: dict[str, list[type[WorkPayload]]] = {name: [] for name in declared.members}
    for payload_type in payloads:
        kind = _payload_kind(payload_type, declared)
        if kind is not None:
            payloads_by_kind[kind].append(payload_type)
    return payloads_by_kind


def _payload_kind(payload_type: object, declared: _Declared) -> str | None:
    """The kind name ``payload_type`` serves, or None after noting why it serves none."""
    if not (isinstance(payload_type, type) and issubclass(payload_type, WorkPayload)):
        declared.problems.append(f"{payload_type!r} is not a WorkPayload subclass")
        return None
    kind = payload_type.kind
    name = declared.served(kind)
    if name is None:
        declared.problems.append(
            f"payload {payload_type.__qualname__} is of kind {kind!r}, "
            f"which is not a member of {declared.source}"
        )
    return name


def _handler_kind(handler: object, declared: _Declared) -> str | None:
    """The kind name ``handler`` serves, or None after noting why it serves none."""
    handler_class = type(handler)
    if not isinstance(handler, WorkHandler):
        declared.problems.append(f"{handler!r} is not a WorkHandler")
        return None
    payload_type = getattr(handler_class, "payload_type", None)
    if not (isinstance(payload_type, type) and issubclass(payload_type, WorkPayload)):
        declared.problems.append(
            f"handler {handler_class.__qualname__} has no payload_type; "
            "declare it as a subclass of WorkHandler[SomePayload]"
        )
        return None
    kind = payload_type.kind
    name = declared.served(kind)
    if name is None:
        declared.problems.append(
            f"handler {handler_class.__qualname__} handles kind {kind!r}, "
            f"which is not a member of {declared.source}"
        )
    return name


def _payload_problems(kind: str, payload_types: list[type[WorkPayload]]) -> list[str]:
    """What is wrong with one kind's payload classes; empty when nothing is."""
    if not payload_types:
        return [f"kind {kind!r} has no payload class"]
    if len(payload_types) > 1:
        names = ", ".join(payload_type.__qualname__ for payload_type in payload_types)
        return [f"kind {kind!r} has {len(payload_types)} payload classes: {names}"]
    return []


def _handler_problems(
    kind: str, payload_types: list[type[WorkPayload]], handlers: list[WorkHandler[Any]]
) -> list[str]:
    """What is wrong with one kind's handlers; empty when nothing is."""
    if not handlers:
        return [f"kind {kind!r} has no handler"]
    if len(handlers) > 1:
        names = ", ".join(type(handler).__qualname__ for handler in handlers)
        return [f"kind {kind!r} has {len(handlers)} handlers: {names}"]
    expected = type(handlers[0]).payload_type
    if len(payload_types) == 1 and expected is not payload_types[0]:
        # decode() builds the registered class: a handler typed for another gets the wrong one
        return [
            f"kind {kind!r}: handler {type(handlers[0]).__qualname__} handles payload "
            f"{expected.__qualname__}, but the kind's payload class is "
            f"{payload_types[0].__qualname__}"
        ]
    return []


def _schedule_problems(
    schedules: Iterable[WorkSchedule], payload_types: Mapping[str, type[WorkPayload]]
) -> list[str]:
    """What is wrong with the schedules: each must enqueue a kind served, as its payload class."""
    problems = []
    for schedule in schedules:
        served = payload_types.get(schedule.kind)
        if served is None:
            problems.append(
                f"schedule of kind {schedule.kind!r} has no handler: "
                "its items would never be claimed"
            )
        elif type(schedule.payload) is not served:
            problems.append(
                f"schedule of kind {schedule.kind!r} enqueues payload "
                f"{type(schedule.payload).__qualname__}, but the kind's payload class is "
                f"{served.__qualname__}"
            )
    return problems
