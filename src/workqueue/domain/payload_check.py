"""The payload check an enqueue makes before it writes anything."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError, to_json

from workqueue.domain.errors import InvalidPayloadError
from workqueue.domain.payload import WorkPayload
from workqueue.domain.storable import unstorable_character

__all__ = ["checked_payload_json", "checked_payload_text", "checked_payloads_json"]

# What the check of one payload calls on its model; a payload is checked by pydantic's
# core directly, and a batch together, only for models that take all of them from
# pydantic (and to_json from WorkPayload).
_CHECK_METHODS = ("model_dump", "model_validate", "to_json")

# How JSON text holds a NUL character: pydantic's to_json writes it as this escape (a
# NUL cannot stand in JSON text as it is), so text without it holds none. Text with it
# may not hold one either (a backslash followed by "u0000"): the step-by-step check
# then says. A number JSON cannot hold, pydantic's to_json writes as NaN or Infinity
# (-Infinity too); text without those words holds none.
_SUSPECT = (b"\\u0000", b"NaN", b"Infinity")


def _suspect(text: bytes) -> bool:
    """Whether JSON text from to_json may hold what no store can: a NUL, NaN or Infinity."""
    return any(word in text for word in _SUSPECT)


def checked_payload_json(payload: WorkPayload) -> dict[str, Any]:
    """The JSON object to store for ``payload``, after validating it again.

    A payload built with ``model_construct`` skipped validation, so it is dumped and
    validated afresh against its own model; what gets stored is the validated
    model's JSON.

    :raises InvalidPayloadError: naming the kind and the offending field, if the
        payload cannot be dumped as JSON, does not validate against its model,
        holds text no store can hold (a NUL character, a lone surrogate) or a
        number JSON cannot (NaN, Infinity); or, naming the kind, if its JSON is
        larger than its model's ``max_payload_bytes``.
    """
    return _checked(payload)[0]


def checked_payload_text(payload: WorkPayload) -> str:
    """What :func:`checked_payload_json` returns, as compact JSON text.

    pydantic's serializer writes the same compact JSON as ``json.dumps`` with tight
    separators, several times faster. The check usually writes it anyway, to look
    for a NUL, and then it is not written twice.

    :raises InvalidPayloadError: as :func:`checked_payload_json` does.
    """
    return _checked(payload)[1].decode()


def _checked(payload: WorkPayload) -> tuple[dict[str, Any], bytes]:
    """The JSON object to store for ``payload`` and its JSON text, once checked."""
    checked = _checked_by_core(payload)
    if checked is None:
        stored = _checked_step_by_step(payload)
        checked = stored, to_json(stored)
    _check_size(type(payload), len(checked[1]))
    return checked


def _check_size(model: type[WorkPayload], size: int) -> None:
    """:raises InvalidPayloadError: if ``size`` bytes of JSON are more than ``model`` takes."""
    if size > model.max_payload_bytes:
        raise InvalidPayloadError(
            model.kind_name(),
            f"its JSON is {size} bytes, more than the {model.max_payload_bytes} its model"
            " takes (max_payload_bytes)",
        )


def _checked_by_core(payload: WorkPayload) -> tuple[dict[str, Any], bytes] | None:
    """What :func:`checked_payload_json` returns and its JSON text, or None.

    The steps of :func:`_checked_step_by_step`, called on pydantic's core without
    the model's methods around them, with the payload looked at for unstorable
    text in JSON text instead of walked. None when a step fails (whatever it
    raises), when the text shows a NUL, when the model overrides a method the check
    calls, or when validating it makes an object of another class: then the
    step-by-step check runs and says what is wrong, if anything.
    """
    model = type(payload)
    try:
        if not _checked_by_pydantic(model):
            return None
        serializer = model.__pydantic_serializer__
        dumped = serializer.to_python(payload, mode="json", warnings=False)
        validated = model.__pydantic_validator__.validate_python(dumped)
        if type(validated) is not model:
            # A validator made something else, whose own to_json is what gets stored.
            return None
        stored: dict[str, Any] = serializer.to_python(validated, mode="json")
        # to_json refuses a lone surrogate, in a key as in a value, and writes a NUL
        # as its escape; so clean text means a clean stored form.
        text = to_json(stored)
        if _suspect(text):
            return None
        # The payload as given, too: dumping to JSON silently rewrites a dict key that
        # holds a lone surrogate, so only the original still shows it. Most payloads
        # dump alike both ways, and then the stored text answers for both.
        given = serializer.to_python(payload, warnings=False)
        if given != stored and _suspect(to_json(given)):
            return None
    except Exception:
        # Whatever it was, the step-by-step check says what went wrong.
        return None
    return stored, text


def _checked_step_by_step(payload: WorkPayload) -> dict[str, Any]:
    """What :func:`checked_payload_json` returns, by the model's own methods.

    :raises InvalidPayloadError: as :func:`checked_payload_json` does.
    """
    kind = payload.kind_name()
    try:
        # warnings=False: a mistyped field is reported below as a validation error,
        # not as a serializer warning.
        dumped = payload.model_dump(mode="json", warnings=False)
    except PydanticSerializationError as error:
        raise InvalidPayloadError(kind, f"not serialisable as JSON: {error}") from error
    try:
        validated = type(payload).model_validate(dumped)
    except ValidationError as error:
        detail = "; ".join(
            f"{'.'.join(str(part) for part in problem['loc']) or '<payload>'}: {problem['msg']}"
            for problem in error.errors()
        )
        raise InvalidPayloadError(kind, detail) from error
    stored = validated.to_json()
    # The payload as given, too: dumping to JSON silently rewrites a dict key that
    # holds a lone surrogate, so only the original still shows it. Most payloads
    # dump alike both ways, and then one walk answers for both.
    given = payload.model_dump(warnings=False)
    problem = _unstorable(given, ())
    if problem is None and given != stored:
        problem = _unstorable(stored, ())
    if problem is not None:
        raise InvalidPayloadError(kind, problem)
    return stored


def checked_payloads_json(payloads: Sequence[WorkPayload]) -> list[dict[str, Any]]:
    """The JSON objects to store for ``payloads``, in order: each what
    :func:`checked_payload_json` returns for it.

    The payloads of one model are dumped, validated again and dumped once more
    together, a few calls into pydantic's core for the whole batch instead of
    several per payload. That answers for every payload only when the batch passes
    cleanly: when any step fails, when the stored JSON might hold unstorable text,
    or when a model overrides a method the check calls, the payloads are checked one
    by one with :func:`checked_payload_json`, which finds the first problem in order
    and says what it is.

    A batch that passes is measured last: the payloads of a model whose JSON
    together is larger than one payload of it may be are measured one by one, in
    order, and the first too large is refused (nothing else is wrong with the
    batch by then, so it is the one separate checks would refuse).

    :raises InvalidPayloadError: as :func:`checked_payload_json` does, for the first
        payload it refuses.
    """
    together = _checked_together(payloads)
    if together is None:
        return [checked_payload_json(payload) for payload in payloads]
    stored, measured = together
    for index, payload in enumerate(payloads):
        model = type(payload)
        if model in measured:
            _check_size(model, len(to_json(stored[index])))
    return stored


def _checked_together(
    payloads: Sequence[WorkPayload],
) -> tuple[list[dict[str, Any]], set[type[WorkPayload]]] | None:
    """What :func:`checked_payloads_json` returns and the models whose payloads are to be
    measured one by one, or None to check the batch one by one."""
    stored_by_model = {}
    measured = set()
    for model in {type(payload) for payload in payloads}:
        alike = _checked_alike(model, [payload for payload in payloads if type(payload) is model])
        if alike is None:
            return None
        stored, size = alike
        stored_by_model[model] = iter(stored)
        # Only a speed-up: measuring every model's payloads would say the same.
        if size > model.max_payload_bytes:  # pragma: no mutate
            measured.add(model)
    return [next(stored_by_model[type(payload)]) for payload in payloads], measured


def _checked_alike(
    model: type[WorkPayload], payloads: list[WorkPayload]
) -> tuple[list[dict[str, Any]], int] | None:
    """The stored JSON of ``payloads``, all of exactly ``model``, and its size, or None.

    The steps of :func:`checked_payload_json`, each over the whole list, but the
    size of each. None when one of them fails (whatever it raises: one by one, an
    earlier payload may be refused first), when validating makes an object of
    another class, or when a payload might hold text no store can hold.
    """
    try:
        if not _checked_by_pydantic(model):
            return None
        payloads_of_model = _payload_list(model)
        dumped = payloads_of_model.dump_python(payloads, mode="json", warnings=False)
        validated = payloads_of_model.validate_python(dumped)
        if any(type(item) is not model for item in validated):
            return None
        stored: list[dict[str, Any]] = payloads_of_model.dump_python(validated, mode="json")
        # As for one payload: the stored form's JSON text shows all its text, and the
        # payloads as given need looking at only where they dump unlike it.
        text = to_json(stored)
        if _suspect(text):
            return None
        given = payloads_of_model.dump_python(payloads, warnings=False)
        if given != stored and _suspect(to_json(given)):
            return None
    except Exception:
        # Whatever it was, the one-by-one check says what went wrong, and for which.
        return None
    return stored, len(text)


# Each model is looked at once. The cached functions only pass the model on, so
# that mutmut, which skips decorated functions, mutates what they compute.


@cache
def _checked_by_pydantic(model: type[WorkPayload]) -> bool:
    """Whether no class from ``model`` up to WorkPayload overrides a method the check calls."""
    return _overrides_no_check_method(model)


def _overrides_no_check_method(model: type[WorkPayload]) -> bool:
    own_classes = model.__mro__[: model.__mro__.index(WorkPayload)]
    return not any(name in vars(cls) for cls in own_classes for name in _CHECK_METHODS)


@cache
def _payload_list(model: type[WorkPayload]) -> TypeAdapter[list[Any]]:
    """Validation and serialisation of a list of ``model``, by ``model``'s own schema."""
    return _list_adapter(model)


def _list_adapter(model: type[WorkPayload]) -> TypeAdapter[list[Any]]:
    return TypeAdapter(list[model])  # type: ignore[valid-type]


def _unstorable(value: object, path: tuple[object, ...]) -> str | None:
    """``"<field path>: why"`` for the first text or number in ``value`` no store can
    hold (a NUL, a lone surrogate; NaN, Infinity), else None.

    Runs for every enqueued payload, so the field path is spelled out only for a
    problem found, never on the way down.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return f"{_spelled_path(path)}: {value} is not a number JSON can hold"
    if isinstance(value, str):
        character = unstorable_character(value)
        return None if character is None else f"{_spelled_path(path)}: text holds {character}"
    if isinstance(value, dict):
        for key, item in value.items():
            # Only a text key can hold text; JSON writes other keys (numbers) as digits.
            character = unstorable_character(key) if isinstance(key, str) else None
            if character is not None:
                return f"{_spelled_path(path)}: a key holds {character}"
            problem = _unstorable(item, (*path, key))
            if problem is not None:
                return problem
    if isinstance(value, list | tuple | set | frozenset):
        for index, item in enumerate(value):
            problem = _unstorable(item, (*path, index))
            if problem is not None:
                return problem
    return None


def _spelled_path(path: tuple[object, ...]) -> str:
    return ".".join(str(part) for part in path) or "<payload>"
