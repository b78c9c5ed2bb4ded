"""The view's actions: POSTs that need the admin token. An item is cancelled or
requeued, a kind paused or resumed.

Without ``WORKQUEUE_WEB_TOKEN`` set the view has no actions and says it is
read-only; every POST is refused. With it, ``POST /items/{id}/cancel`` and
``POST /items/{id}/requeue`` act on one item as ``workqueue cancel`` and
``workqueue requeue`` do, and ``POST /kinds/{kind}/pause`` (field ``reason``,
optional) and ``POST /kinds/{kind}/resume`` on one kind as ``workqueue pause``
and ``workqueue resume`` do (the same store calls, the same one-line answers).

A POST is taken only when (1) it comes from this view's own pages: its
``Origin`` (or, without one, its ``Referer``) is this server's, so another site
cannot make a logged-in browser post here; and (2) its form carries the admin
token, compared in constant time. A page of another origin can neither read the
token nor pass the origin check: the pair is what makes the actions CSRF-safe.

Then the answer says what happened (docs/adr/0033): 200 done; 409 nothing to do
(an item already finished, a resume of a kind not paused); 404 no such item (an
id beyond ``bigint`` too, never sent to the database), or a pause of a kind this
view does not serve (a typo would pause nothing that exists, as ``workqueue
pause`` says too; any kind may be resumed); 400 a reason or kind the database
cannot store, or a pause reason too long; 422 an item that cannot be requeued as
stored (its payload no longer validates, or its kind is not served); 403 refused
(no token, another origin, or a database role that may only read). What the view
finds before writing is answered the same for every role.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from starlette.requests import Request

from workqueue.application import requeue
from workqueue.domain import (
    MAX_CANCEL_REASON_LENGTH,
    CancelOutcome,
    InvalidPauseError,
    InvalidPayloadError,
    RequeueOutcome,
    UnknownKindError,
    WorkPayload,
    WorkQueue,
    WorkStore,
    cancel_reason_text,
    unstorable_character,
)
from workqueue.entrypoints.commands.cancel import (
    cancel_line,
    finished_status,
    no_item_line,
    requeue_line,
)
from workqueue.entrypoints.commands.pause import pause_line, resume_line
from workqueue.entrypoints.web.reads import LARGEST_ID

__all__ = [
    "INSUFFICIENT_PRIVILEGE",
    "WebActions",
    "act",
    "act_on_kind",
    "is_insufficient_privilege",
    "read_form",
    "refusal",
    "same_origin",
]

logger = logging.getLogger("workqueue.web")

INSUFFICIENT_PRIVILEGE = "42501"
"""The SQLSTATE of a statement the database role may not run."""

_ONLY_SELECT = (
    "The view's database role may only read: cancel and requeue need UPDATE and INSERT "
    "on work_items (see the README's grants)."
)
_ONLY_SELECT_PAUSES = (
    "The view's database role may only read: pause and resume need INSERT, UPDATE and "
    "DELETE on work_kind_controls (see the README's grants)."
)
_MAX_REASON = MAX_CANCEL_REASON_LENGTH
# What a requeue of an item that cannot be enqueued again as stored answers.
_CANNOT_REQUEUE = 422
_FORM_TYPE = "application/x-www-form-urlencoded"
# Header names, named once (Starlette's headers are case-insensitive).
_CONTENT_TYPE = "content-type"
_ORIGIN = "origin"
_REFERER = "referer"


@dataclass(frozen=True, slots=True)
class WebActions:
    """What the actions write through, and the token they need."""

    token: str
    store: WorkStore
    queue: WorkQueue
    decode: Callable[[str, Mapping[str, Any]], WorkPayload]


def same_origin(request: Request) -> bool:
    """Whether ``request`` says it comes from a page of this server (Origin, else Referer)."""
    claimed = request.headers.get(_ORIGIN) or request.headers.get(_REFERER)
    if not claimed:
        return False
    parts = urlsplit(claimed)
    return (parts.scheme, parts.netloc) == (request.url.scheme, request.url.netloc)


async def read_form(request: Request) -> dict[str, str]:
    """The fields of a URL-encoded form (each one's first value); empty for anything else.

    A body without a content type is read as such a form too: what it may do is
    decided by the token and origin checks, not by its type.
    """
    content_type = request.headers.get(_CONTENT_TYPE, _FORM_TYPE)
    if content_type.partition(";")[0].strip() != _FORM_TYPE:
        return {}
    try:
        text = (await request.body()).decode()
    except UnicodeDecodeError:
        return {}
    return {name: values[0] for name, values in parse_qs(text).items()}


def refusal(actions: WebActions | None, request: Request, form: dict[str, str]) -> str | None:
    """Why this POST is refused, or None when it may act."""
    if actions is None:
        return (
            "This view is read-only: set WORKQUEUE_WEB_TOKEN to enable cancel, requeue, "
            "pause and resume."
        )
    if not same_origin(request):
        return "Refused: the request did not come from this view's own page."
    given = form.get("token")
    if given is None or not hmac.compare_digest(given.encode(), actions.token.encode()):
        return "Refused: the admin token is missing or wrong."
    return None


def is_insufficient_privilege(error: BaseException) -> bool:
    """Whether the database refused ``error``'s statement for the role's lack of a grant."""
    return getattr(error, "sqlstate", None) == INSUFFICIENT_PRIVILEGE


async def act(request: Request, actions: WebActions | None, verb: str) -> tuple[str, int]:
    """Check the POST, then ``cancel`` or ``requeue`` the item of the path.

    :returns: the sentence the page shows, and the status it answers with (see the
        module): 200, 409, 404, 400, 422 or 403.
    """
    item_id: int = request.path_params["item_id"]
    form = await read_form(request)
    refused = refusal(actions, request, form)
    if refused is not None:
        return refused, 403
    assert actions is not None  # refusal() says so otherwise
    reason = form.get("reason", "")
    answer = _answer_before_writing(verb, item_id, reason)
    if answer is not None:
        return answer
    try:
        if verb == "cancel":
            line, status = await _cancel(actions, item_id, reason)
        else:
            line, status = await _requeue(actions, item_id)
    except Exception as error:
        if not is_insufficient_privilege(error):
            raise
        return _ONLY_SELECT, 403
    level = logging.WARNING if status == _CANNOT_REQUEUE else logging.INFO
    logger.log(level, "web %s of item %d: %s", verb, item_id, line, extra={"item_id": item_id})
    return _sentence(line), status


async def act_on_kind(
    request: Request, actions: WebActions | None, served: Collection[str], verb: str
) -> tuple[str, int]:
    """Check the POST, then ``pause`` or ``resume`` the kind of the path.

    :param served: the kinds this view serves: the only ones it pauses.
    :returns: the sentence the page shows, and the status it answers with (see the
        module): 200, 409, 404, 400 or 403.
    """
    kind: str = request.path_params["kind"]
    form = await read_form(request)
    refused = refusal(actions, request, form)
    if refused is not None:
        return refused, 403
    assert actions is not None  # refusal() says so otherwise
    answer = _kind_answer_before_writing(verb, kind, served)
    if answer is not None:
        return answer
    try:
        if verb == "pause":
            pause = await actions.store.pause_kind(kind, reason=form.get("reason"))
            line = pause_line(pause)
            # The line begins with the kind's name, which keeps its spelling: no capital.
            sentence, status = f"{line}.", 200
        else:
            resumed = await actions.store.resume_kind(kind)
            line = resume_line(kind, resumed)
            sentence, status = _sentence(line), 200 if resumed else 409
    except InvalidPauseError as error:
        return f"Refused: {error}.", 400
    except Exception as error:
        if not is_insufficient_privilege(error):
            raise
        return _ONLY_SELECT_PAUSES, 403
    logger.info("web %s of kind %s: %s", verb, kind, line, extra={"kind": kind})
    return sentence, status


def _kind_answer_before_writing(
    verb: str, kind: str, served: Collection[str]
) -> tuple[str, int] | None:
    """The answer to a request about a kind the database must not see, or None to go on."""
    character = unstorable_character(kind)
    if character is not None:
        return f"Refused: the kind contains {character}, which the database cannot store.", 400
    if verb == "pause" and kind not in served:
        return _sentence(str(UnknownKindError(kind, list(served)))), 404
    return None


def _answer_before_writing(verb: str, item_id: int, reason: str) -> tuple[str, int] | None:
    """The answer to a request the database must not see, or None to go on."""
    if item_id > LARGEST_ID:
        # No row has it: ids are bigint, and the database would refuse it as an argument.
        return _sentence(no_item_line(item_id)), 404
    character = unstorable_character(reason)
    if verb == "cancel" and character is not None:
        return f"Refused: the reason contains {character}, which the database cannot store.", 400
    return None


def _sentence(line: str) -> str:
    return line[0].upper() + line[1:] + "."


def _status(took_effect: bool, unknown: bool) -> int:
    """200 when the action took effect, 404 when there is no such item, else 409."""
    if took_effect:
        return 200
    return 404 if unknown else 409


async def _cancel(actions: WebActions, item_id: int, reason: str) -> tuple[str, int]:
    text = cancel_reason_text(reason[:_MAX_REASON])
    outcome = await actions.store.cancel(item_id, reason=text)
    status = await finished_status(actions.store, item_id)
    took_effect, unknown = outcome.took_effect(), outcome is CancelOutcome.UNKNOWN
    return cancel_line(item_id, outcome, status), _status(took_effect, unknown)


async def _requeue(actions: WebActions, item_id: int) -> tuple[str, int]:
    try:
        result = await requeue(
            item_id, store=actions.store, queue=actions.queue, decode=actions.decode
        )
    except (InvalidPayloadError, UnknownKindError) as error:
        # As stored, the item cannot be enqueued again; the error names why, on one line.
        return f"cannot requeue item {item_id}: {error}", _CANNOT_REQUEUE
    took_effect, unknown = result.outcome.took_effect(), result.outcome is RequeueOutcome.UNKNOWN
    return requeue_line(item_id, result), _status(took_effect, unknown)
