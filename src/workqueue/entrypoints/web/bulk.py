"""The bulk actions on a kind: requeue its failed items, cancel its queued ones (docs/adr/0041).

``GET /kinds/{kind}/requeue-failed`` and ``GET /kinds/{kind}/cancel-queued`` read what
the action would take now (:meth:`~workqueue.domain.WorkMonitor.bulk_scope`: how many
items, and the highest id among them) and show it, with the form that confirms it
when the view has its admin token. The form POSTs to the same path: the token, that
id (``up_to_id``), the count shown (``shown``) and, for a cancel, a reason.

The POST is checked as every action is (:func:`~workqueue.entrypoints.web.actions.refusal`:
this view's own origin, the admin token), then runs
:func:`~workqueue.application.requeue_failed` or :func:`~workqueue.application.cancel_queued`
on the items up to ``up_to_id``: nothing enqueued, or failed, after the count was read is
touched, and a second press finds nothing more to do. Its page says how many items were
requeued (as new items, or absorbed by a queued twin) or cancelled, which were left
failed as their payload no longer validates, and how many of those shown were left as
they changed meanwhile.

Answers: 200 items requeued or cancelled; 409 nothing to do; 422 a requeue that took
only items whose payload no longer validates; 400 an ``up_to_id`` or ``shown`` that
is no whole number in its range, a kind or a cancel reason no store can hold, a requeue
of a kind the view has no payload model for; 403 refused, as every action.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from workqueue.application import cancel_queued, requeue_failed
from workqueue.domain import (
    BulkAction,
    BulkResult,
    BulkScope,
    InvalidCancelReasonError,
    UnknownKindError,
    cancel_reason_text,
    unstorable_character,
)
from workqueue.entrypoints.web.actions import (
    WebActions,
    is_insufficient_privilege,
    read_form,
    refusal,
)
from workqueue.entrypoints.web.pages import render
from workqueue.entrypoints.web.readable import thousands
from workqueue.entrypoints.web.reads import LARGEST_ID, services

__all__ = [
    "BulkAnswer",
    "BulkReport",
    "act_in_bulk",
    "bulk_report",
    "cancel_queued_kind",
    "cancel_queued_page",
    "requeue_failed_kind",
    "requeue_failed_page",
    "scope_line",
]

logger = logging.getLogger("workqueue.web")

_ONLY_SELECT = (
    "The view's database role may only read: a bulk requeue or cancel needs UPDATE and "
    "INSERT on work_items (see the README's grants)."
)
# A whole number as a form sends it: digits only (no sign, no "_"), as many as a bigint has.
_DIGITS = re.compile(r"[0-9]{1,19}")


@dataclass(frozen=True, slots=True)
class _Wording:
    """How the pages of one bulk action speak."""

    title: str
    verb: str
    items: str
    future: str
    nothing: str
    note: str
    changed: str
    asks_reason: bool


_WORDING = {
    BulkAction.REQUEUE_FAILED: _Wording(
        title="Requeue the failed items",
        verb="Requeue",
        items="failed",
        future="will be queued again",
        nothing="is left to requeue",
        note=(
            "Each runs again as a new queued item with its payload and dedup key; the failed "
            "one stays failed, marked as requeued, and no later bulk requeue takes it again "
            "(the overview still counts it failed). Items that fail after this count was "
            "read are left."
        ),
        changed="requeued by another press, or deleted by retention",
        asks_reason=False,
    ),
    BulkAction.CANCEL_QUEUED: _Wording(
        title="Cancel the queued items",
        verb="Cancel",
        items="queued",
        future="will be cancelled",
        nothing="is left to cancel",
        note=(
            "Each ends cancelled at once, delayed ones too; no worker runs it. Items enqueued "
            "after this count was read are left."
        ),
        changed="claimed by a worker, or cancelled",
        asks_reason=True,
    ),
}


def _items(count: int, which: str) -> str:
    """``3 failed items``, ``1 queued item``: a count of items, its separators written."""
    return f"{thousands(count)} {which} item{'' if count == 1 else 's'}"


def scope_line(action: BulkAction, kind: str, scope: BulkScope) -> str:
    """What the confirmation says ``action`` on ``kind`` would take: the count and highest id."""
    wording = _WORDING[action]
    if scope.up_to_id is None:
        return f"Nothing to do: no {wording.items} item of {kind} {wording.nothing}."
    return (
        f"{_items(scope.count, wording.items)} of {kind} {wording.future} "
        f"(ids up to {scope.up_to_id})."
    )


@dataclass(frozen=True, slots=True)
class BulkReport:
    """What a bulk action did, as its page shows it.

    ``headline`` is the sentence said first, ``rows`` each count under its label, and
    ``invalid`` the ids of the failed items left failed (their payload no longer valid).
    """

    headline: str
    rows: tuple[tuple[str, int], ...]
    invalid: tuple[int, ...]
    status: int

    def line(self) -> str:
        """The report on one line, for the log."""
        counts = "; ".join(f"{label}: {count}" for label, count in self.rows)
        if self.invalid:
            counts += f"; Left failed: items {', '.join(map(str, self.invalid))}"
        return f"{self.headline} {counts}."


def bulk_report(
    action: BulkAction, kind: str, result: BulkResult, *, up_to_id: int, shown: int
) -> BulkReport:
    """What ``action`` on ``kind`` up to ``up_to_id`` did, ``result``, told against the
    ``shown`` count.

    The items of those shown that it did not take (neither requeued, absorbed, left
    invalid, nor cancelled) changed meanwhile. Its status: 200 when it requeued or
    cancelled any item; else 422 when it left items whose payload no longer validates
    (a person must look at them); else 409, nothing to do.
    """
    wording = _WORDING[action]
    taken = result.done + result.absorbed + len(result.invalid)
    rows: tuple[tuple[str, int], ...]
    changed = (
        f"Of the {thousands(shown)} shown, left as they changed meanwhile ({wording.changed})",
        max(shown - taken, 0),
    )
    if action is BulkAction.REQUEUE_FAILED:
        acted = result.done + result.absorbed
        headline = f"Requeued {_items(acted, wording.items)} of {kind}."
        rows = (
            ("Queued again as new items", result.done),
            ("Absorbed by a queued item of the same dedup key", result.absorbed),
            ("Left failed, as their payload no longer validates", len(result.invalid)),
            changed,
        )
    else:
        acted = result.done
        headline = f"Cancelled {_items(acted, wording.items)} of {kind}."
        rows = (("Cancelled", result.done), changed)
    status = 200 if acted else 422 if result.invalid else 409
    if status == 409:
        headline = (
            f"Nothing to do: no {wording.items} item of {kind} up to id {up_to_id} "
            f"{wording.nothing}."
        )
    return BulkReport(headline, rows, result.invalid, status)


@dataclass(frozen=True, slots=True)
class BulkAnswer:
    """What a bulk POST answers: a sentence and a status; ``report`` once the action ran."""

    notice: str
    status: int
    report: BulkReport | None = None


def _whole_number(form: dict[str, str], name: str, lowest: int) -> int | None:
    """The field ``name`` as a whole number from ``lowest`` to the largest id; None otherwise."""
    text = form.get(name, "").strip()
    if _DIGITS.fullmatch(text) is None or not lowest <= int(text) <= LARGEST_ID:
        return None
    return int(text)


def _refused_field(name: str, lowest: int, what: str) -> BulkAnswer:
    return BulkAnswer(
        f"Refused: {name} must be a whole number from {lowest} to {LARGEST_ID}: {what}.", 400
    )


async def act_in_bulk(
    request: Request, actions: WebActions | None, action: BulkAction
) -> BulkAnswer:
    """Check the POST, then run ``action`` on the kind of the path up to the form's ``up_to_id``.

    :returns: the answer (see the module): 200, 409, 422, 400 or 403.
    """
    kind: str = request.path_params["kind"]
    form = await read_form(request)
    refused = refusal(actions, request, form)
    if refused is not None:
        return BulkAnswer(refused, 403)
    assert actions is not None  # refusal() says so otherwise
    up_to_id = _whole_number(form, "up_to_id", 1)
    if up_to_id is None:
        return _refused_field("up_to_id", 1, "the highest id the confirmation showed")
    shown = _whole_number(form, "shown", 0)
    if shown is None:
        return _refused_field("shown", 0, "the count the confirmation showed")
    character = unstorable_character(kind)
    if character is not None:
        return BulkAnswer(
            f"Refused: the kind contains {character}, which the database cannot store.", 400
        )
    try:
        if action is BulkAction.REQUEUE_FAILED:
            result = await requeue_failed(
                kind, up_to_id=up_to_id, store=actions.store, decode=actions.decode
            )
        else:
            reason = cancel_reason_text(form.get("reason"))
            result = await cancel_queued(
                kind, up_to_id=up_to_id, store=actions.store, reason=reason
            )
    except InvalidCancelReasonError as error:
        return BulkAnswer(f"Refused: {error}.", 400)
    except UnknownKindError as error:
        return BulkAnswer(
            f"Refused: {error}; this view has no payload model to requeue its items with.", 400
        )
    except Exception as error:
        if not is_insufficient_privilege(error):
            raise
        return BulkAnswer(_ONLY_SELECT, 403)
    report = bulk_report(action, kind, result, up_to_id=up_to_id, shown=shown)
    level = logging.WARNING if report.invalid else logging.INFO
    logger.log(
        level, "web %s of kind %s: %s", action.value, kind, report.line(), extra={"kind": kind}
    )
    return BulkAnswer(report.headline, report.status, report)


async def _confirmation(
    request: Request, action: BulkAction, notice: str | None = None, status: int = 200
) -> Response:
    """The page that shows what ``action`` would take now, and its form."""
    kind: str = request.path_params["kind"]
    scope = await services(request).monitor.bulk_scope(kind, action)
    wording = _WORDING[action]
    context = {
        "kind": kind,
        "action": action.value,
        "wording": wording,
        "scope": scope,
        "scope_line": scope_line(action, kind, scope),
        "button": f"{wording.verb} {_items(scope.count, wording.items)}",
        "notice": notice,
        "report": None,
    }
    return render(request, "bulk.html", context, status)


async def _after_bulk_action(request: Request, action: BulkAction) -> Response:
    answer = await act_in_bulk(request, services(request).actions, action)
    if answer.report is None:
        # Refused: the confirmation as it reads now, saying why.
        return await _confirmation(request, action, answer.notice, answer.status)
    context = {
        "kind": request.path_params["kind"],
        "action": action.value,
        "wording": _WORDING[action],
        "notice": answer.notice,
        "report": answer.report,
    }
    return render(request, "bulk.html", context, answer.status)


async def requeue_failed_page(request: Request) -> Response:
    """``GET /kinds/{kind}/requeue-failed``: how many failed items a requeue would take."""
    return await _confirmation(request, BulkAction.REQUEUE_FAILED)


async def cancel_queued_page(request: Request) -> Response:
    """``GET /kinds/{kind}/cancel-queued``: how many queued items a cancel would take."""
    return await _confirmation(request, BulkAction.CANCEL_QUEUED)


async def requeue_failed_kind(request: Request) -> Response:
    """``POST /kinds/{kind}/requeue-failed``: the page saying what the requeue did."""
    return await _after_bulk_action(request, BulkAction.REQUEUE_FAILED)


async def cancel_queued_kind(request: Request) -> Response:
    """``POST /kinds/{kind}/cancel-queued``: the page saying what the cancel did."""
    return await _after_bulk_action(request, BulkAction.CANCEL_QUEUED)
