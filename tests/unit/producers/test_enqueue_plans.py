"""What both PostgreSQL queues send for an enqueue, and what they make of the answers.

The plans of ``workqueue.adapters.postgres.enqueue_plan`` are driven here as a queue drives
them, with rows written by the test instead of a server: which statement goes out,
with which parameters, how many passes a racing twin costs, and when it gives up.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, TypeVar

import pytest
from pydantic_core import to_json

from workqueue.adapters.postgres.channel import CHANNEL
from workqueue.adapters.postgres.enqueue_plan import (
    MAX_DEDUP_PASSES,
    Plan,
    Rows,
    Statement,
    batch_enqueue,
    check_batch,
    check_request,
    context_text,
    due_enqueue,
    fired_enqueue,
    plain_insert,
    single_enqueue,
)
from workqueue.adapters.postgres.queue_sql import STATEMENTS
from workqueue.adapters.testing import FakeClock
from workqueue.domain import (
    EnqueueFailedError,
    EnqueueRequest,
    EnqueueResult,
    TokenCleanup,
    WorkItemRetention,
)

T = TypeVar("T")

NO_ROW: tuple[Any, ...] = (None, False)


class Exchange:
    """Drives a plan, answering each statement it yields with the next given rows."""

    def __init__(self, plan: Plan[T], answers: list[Rows]) -> None:
        self.sent: list[Statement] = []
        self._plan = plan
        self._answers = list(answers)

    def run(self) -> Any:
        rows: Rows | None = None
        while True:
            try:
                statement = next(self._plan) if rows is None else self._plan.send(rows)
            except StopIteration as done:
                return done.value
            self.sent.append(statement)
            rows = self._answers.pop(0)


def retention(days: float = 7) -> WorkItemRetention:
    return WorkItemRetention(retention_days=days)


class TestOneEnqueue:
    def test_without_a_key_it_is_one_plain_insert_stamped_now_on_the_channel(self) -> None:
        clock = FakeClock()
        exchange = Exchange(
            single_enqueue(check_request(EnqueueRequest(retention())), clock),
            [[(41,)]],
        )

        assert exchange.run() == EnqueueResult(id=41, created=True)
        assert exchange.sent == [
            Statement(
                "enqueue_one_without_key",
                (
                    "work_item_retention",
                    '{"retention_days":7.0}',
                    clock.now(),
                    CHANNEL,
                    0,
                    clock.now(),
                    None,  # no trace context: nothing recorded
                ),
            )
        ]

    @pytest.mark.parametrize("created", [True, False], ids=["created", "absorbed"])
    def test_with_a_key_the_answer_says_whether_it_created_or_was_absorbed(
        self, created: bool
    ) -> None:
        clock = FakeClock()
        exchange = Exchange(
            single_enqueue(check_request(EnqueueRequest(TokenCleanup(), "nightly")), clock),
            [[(8, created)]],
        )

        assert exchange.run() == EnqueueResult(id=8, created=created)
        assert exchange.sent == [
            Statement(
                "enqueue_one",
                ("token_cleanup", "{}", clock.now(), CHANNEL, "nightly", 0, clock.now(), None),
            )
        ]

    async def test_a_twin_it_could_not_read_costs_a_pass_stamped_with_the_time_of_that_pass(
        self,
    ) -> None:
        clock = FakeClock()
        plan = single_enqueue(check_request(EnqueueRequest(TokenCleanup(), "k")), clock)

        first = next(plan)
        await clock.advance(3)
        second = plan.send([NO_ROW])
        with pytest.raises(StopIteration) as done:
            plan.send([(12, False)])

        assert first.arguments[2] == clock.now() - timedelta(seconds=3)
        assert second == Statement(
            "enqueue_one",
            ("token_cleanup", "{}", clock.now(), CHANNEL, "k", 0, clock.now(), None),
        )
        assert done.value.value == EnqueueResult(id=12, created=False)

    def test_the_last_allowed_pass_still_answers(self) -> None:
        exchange = Exchange(
            single_enqueue(check_request(EnqueueRequest(TokenCleanup(), "k")), FakeClock()),
            [[NO_ROW]] * 4 + [[(5, True)]],
        )

        assert exchange.run() == EnqueueResult(id=5, created=True)
        assert len(exchange.sent) == 5

    def test_it_gives_up_after_five_passes_naming_kind_and_key(self) -> None:
        exchange = Exchange(
            single_enqueue(check_request(EnqueueRequest(TokenCleanup(), "k")), FakeClock()),
            [[NO_ROW]] * 6,
        )

        with pytest.raises(EnqueueFailedError) as raised:
            exchange.run()

        assert MAX_DEDUP_PASSES == 5
        assert len(exchange.sent) == 5
        assert str(raised.value) == (
            "gave up enqueueing kind 'token_cleanup' with dedup key 'k': 5 passes in a row "
            "found a queued twin and could not read it (claimed, or committed by another "
            "transaction, between the insert and the lookup)"
        )
        assert raised.value.sqlstate is None


class TestPriorityAndRunAt:
    def test_a_single_enqueue_sends_its_priority_and_run_at(self) -> None:
        clock = FakeClock()
        later = clock.now() + timedelta(hours=2)
        plain = check_request(EnqueueRequest(retention(), priority=7, run_at=later))
        keyed = check_request(
            EnqueueRequest(TokenCleanup(), "k", priority=-7, delay=timedelta(minutes=1))
        )

        soon = check_request(EnqueueRequest(retention(), delay=timedelta(seconds=9)))
        sent_soon = Exchange(single_enqueue(soon, clock), [[(3,)]])
        sent_soon.run()
        assert sent_soon.sent[0].arguments[4:] == (0, clock.now() + timedelta(seconds=9), None)
        sent_plain = Exchange(single_enqueue(plain, clock), [[(1,)]])
        sent_keyed = Exchange(single_enqueue(keyed, clock), [[(2, True)]])
        sent_plain.run()
        sent_keyed.run()

        assert sent_plain.sent[0].arguments[4:] == (7, later, None)
        assert sent_keyed.sent[0].arguments[4:] == (
            "k",
            -7,
            clock.now() + timedelta(minutes=1),
            None,
        )

    def test_a_batch_sends_priorities_and_run_ats_as_arrays_once_any_request_has_one(
        self,
    ) -> None:
        clock = FakeClock()
        later = clock.now() + timedelta(hours=2)
        prioritised = check_batch(
            [EnqueueRequest(retention(1)), EnqueueRequest(retention(2), priority=-1)]
        )
        delayed = check_batch(
            [EnqueueRequest(retention(1), run_at=later), EnqueueRequest(retention(2))]
        )

        first = Exchange(batch_enqueue(prioritised, clock), [[("[1, 2]",)]])
        second = Exchange(batch_enqueue(delayed, clock), [[("[3, 4]",)]])
        first.run()
        second.run()

        assert first.sent[0].arguments[5:] == ("[0,-1]", None, None)
        assert second.sent[0].arguments[5:] == (
            None,
            f'["{later.isoformat().replace("+00:00", "Z")}",null]',
            None,
        )

    async def test_a_batch_counts_each_delay_from_the_time_it_stamps_on_its_items(
        self,
    ) -> None:
        clock = FakeClock()
        batch = check_batch(
            [
                EnqueueRequest(retention(1), delay=timedelta(seconds=90)),
                EnqueueRequest(retention(2)),
            ]
        )
        plan = batch_enqueue(batch, clock)
        await clock.advance(5)  # between the checks and the statement

        statement = next(plan)

        assert statement.arguments[2] == clock.now()
        assert (
            statement.arguments[6] == to_json([clock.now() + timedelta(seconds=90), None]).decode()
        )

    async def test_each_pass_of_a_keyed_batch_counts_its_delays_from_its_own_stamp(
        self,
    ) -> None:
        clock = FakeClock()
        batch = check_batch([EnqueueRequest(TokenCleanup(), "k", delay=timedelta(minutes=1))])
        plan = batch_enqueue(batch, clock)

        first = next(plan)
        await clock.advance(3)
        second = plan.send([(1, None, False)])

        assert first.arguments[6] == to_json([first.arguments[2] + timedelta(minutes=1)]).decode()
        assert second.arguments[2] == clock.now()
        assert second.arguments[6] == to_json([clock.now() + timedelta(minutes=1)]).decode()

    async def test_a_second_pass_sends_the_timing_of_the_requests_left(self) -> None:
        clock = FakeClock()
        later = clock.now() + timedelta(hours=2)
        batch = check_batch(
            [
                EnqueueRequest(retention(1), "a", priority=5),
                EnqueueRequest(TokenCleanup(), "b", run_at=later),
                EnqueueRequest(retention(3), "c", priority=-5),
            ]
        )
        plan = batch_enqueue(batch, clock)

        first = next(plan)
        second = plan.send([(1, None, False), (2, 31, True), (3, None, False)])

        assert first.arguments[5] == "[5,0,-5]"
        assert second.arguments[5:] == ("[5,-5]", None, None)


class TestABatch:
    def test_an_empty_batch_sends_nothing(self) -> None:
        exchange = Exchange(batch_enqueue(check_batch([]), FakeClock()), [])

        assert exchange.run() == []
        assert exchange.sent == []

    def test_a_batch_without_keys_is_one_insert_of_json_arrays_notifying_each_kind_once(
        self,
    ) -> None:
        clock = FakeClock()
        batch = check_batch(
            [
                EnqueueRequest(retention(1)),
                EnqueueRequest(TokenCleanup()),
                EnqueueRequest(retention(2)),
            ]
        )
        exchange = Exchange(batch_enqueue(batch, clock), [[("[3, 4, 9]",)]])

        assert exchange.run() == [
            EnqueueResult(id=3, created=True),
            EnqueueResult(id=4, created=True),
            EnqueueResult(id=9, created=True),
        ]
        assert exchange.sent == [
            Statement(
                "enqueue_without_keys",
                (
                    '["work_item_retention","token_cleanup","work_item_retention"]',
                    '[{"retention_days":1.0},{},{"retention_days":2.0}]',
                    clock.now(),
                    CHANNEL,
                    '["token_cleanup","work_item_retention"]',
                    None,
                    None,
                    None,
                ),
            )
        ]

    def test_a_batch_with_a_key_is_answered_row_by_row_in_request_order(self) -> None:
        clock = FakeClock()
        batch = check_batch([EnqueueRequest(TokenCleanup(), "k"), EnqueueRequest(retention())])
        exchange = Exchange(batch_enqueue(batch, clock), [[(1, 20, False), (2, 21, True)]])

        assert exchange.run() == [
            EnqueueResult(id=20, created=False),
            EnqueueResult(id=21, created=True),
        ]
        assert exchange.sent == [
            Statement(
                "enqueue",
                (
                    '["token_cleanup","work_item_retention"]',
                    '[{},{"retention_days":7.0}]',
                    clock.now(),
                    CHANNEL,
                    '["k",null]',
                    None,
                    None,
                    None,
                ),
            )
        ]

    async def test_only_the_requests_left_unanswered_go_again_in_the_next_pass(self) -> None:
        clock = FakeClock()
        batch = check_batch(
            [
                EnqueueRequest(retention(1), "a"),
                EnqueueRequest(TokenCleanup(), "b"),
                EnqueueRequest(retention(3), "c"),
            ]
        )
        plan = batch_enqueue(batch, clock)

        next(plan)
        await clock.advance(2)
        second = plan.send([(1, None, False), (2, 31, True), (3, None, False)])
        with pytest.raises(StopIteration) as done:
            plan.send([(1, 30, False), (2, 32, True)])

        assert second == Statement(
            "enqueue",
            (
                '["work_item_retention","work_item_retention"]',
                '[{"retention_days":1.0},{"retention_days":3.0}]',
                clock.now(),
                CHANNEL,
                '["a","c"]',
                None,
                None,
                None,
            ),
        )
        assert done.value.value == [
            EnqueueResult(id=30, created=False),
            EnqueueResult(id=31, created=True),
            EnqueueResult(id=32, created=True),
        ]

    def test_the_last_allowed_pass_still_answers_a_batch(self) -> None:
        batch = check_batch([EnqueueRequest(TokenCleanup(), "k")])
        exchange = Exchange(
            batch_enqueue(batch, FakeClock()), [[(1, None, False)]] * 4 + [[(1, 6, False)]]
        )

        assert exchange.run() == [EnqueueResult(id=6, created=False)]
        assert len(exchange.sent) == 5

    def test_a_batch_gives_up_after_five_passes_saying_how_many_were_left(self) -> None:
        batch = check_batch([EnqueueRequest(TokenCleanup(), "k"), EnqueueRequest(retention())])
        exchange = Exchange(
            batch_enqueue(batch, FakeClock()),
            [[(1, None, False), (2, 7, True)]] + [[(1, None, False)]] * 5,
        )

        with pytest.raises(EnqueueFailedError) as raised:
            exchange.run()

        assert len(exchange.sent) == 5
        assert str(raised.value).startswith(
            "gave up enqueueing 1 of a batch of 2 requests: 5 passes in a row found a queued "
            "twin and could not read it"
        )

    def test_rows_that_do_not_answer_every_request_are_refused(self) -> None:
        batch = check_batch([EnqueueRequest(TokenCleanup(), "k"), EnqueueRequest(retention())])
        exchange = Exchange(batch_enqueue(batch, FakeClock()), [[(1, 5, True)]])

        with pytest.raises(ValueError, match="zip"):
            exchange.run()


class TestAPeriodicEnqueue:
    async def test_the_due_insert_follows_the_lock_and_reads_the_clock_once_it_is_granted(
        self,
    ) -> None:
        clock = FakeClock()
        request = check_request(EnqueueRequest(TokenCleanup(), "periodic"))
        plan = due_enqueue(request, timedelta(hours=1), clock)

        lock = next(plan)
        await clock.advance(30)
        insert = plan.send([(None,)])
        with pytest.raises(StopIteration) as done:
            plan.send([(17,)])

        assert lock == Statement("lock_periodic_kind", ("token_cleanup",))
        assert insert == Statement(
            "enqueue_if_due",
            (
                "token_cleanup",
                "{}",
                clock.now(),
                CHANNEL,
                "periodic",
                clock.now() - timedelta(hours=1),
            ),
        )
        assert done.value.value == EnqueueResult(id=17, created=True)

    def test_no_row_means_the_kind_was_not_due(self) -> None:
        request = check_request(EnqueueRequest(TokenCleanup(), "periodic"))
        exchange = Exchange(due_enqueue(request, timedelta(hours=1), FakeClock()), [[], []])

        assert exchange.run() is None


class TestACalendarsTurn:
    def test_is_one_statement_with_the_fire_time_and_whether_to_skip_while_busy(self) -> None:
        clock = FakeClock()
        fire = clock.now() - timedelta(hours=2)
        request = check_request(EnqueueRequest(TokenCleanup(), "periodic@fire"))
        plan = fired_enqueue(request, fire, True, clock)

        turn = next(plan)
        with pytest.raises(StopIteration) as done:
            plan.send([(23,)])

        assert turn == Statement(
            "enqueue_if_fired",
            ("token_cleanup", "{}", clock.now(), CHANNEL, "periodic@fire", fire, True),
        )
        assert done.value.value == EnqueueResult(id=23, created=True)

    def test_no_row_means_the_turn_was_taken_already_or_skipped(self) -> None:
        request = check_request(EnqueueRequest(TokenCleanup(), "periodic@fire"))
        plan = fired_enqueue(request, FakeClock().now(), False, FakeClock())
        exchange = Exchange(plan, [[]])

        assert exchange.run() is None


def test_every_statement_a_plan_sends_is_one_of_queue_sql() -> None:
    names = {"enqueue", "enqueue_without_keys", "enqueue_one", "enqueue_one_without_key"}
    names |= {"lock_periodic_kind", "enqueue_if_due", "enqueue_if_fired"}

    assert set(STATEMENTS) == names


class TestTraceContext:
    CARRIED = '{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}'

    def test_a_context_travels_as_compact_json_text_and_none_as_null(self) -> None:
        assert context_text(None) is None
        assert context_text({"traceparent": "00-ab-cd-01", "tracestate": "v=1"}) == (
            '{"traceparent":"00-ab-cd-01","tracestate":"v=1"}'
        )

    def test_every_insert_of_an_enqueue_sends_it_last(self) -> None:
        clock = FakeClock()
        plain = check_request(EnqueueRequest(retention()))
        keyed = check_request(EnqueueRequest(TokenCleanup(), "k"))
        keyless = check_batch([EnqueueRequest(retention())])
        with_keys = check_batch([EnqueueRequest(TokenCleanup(), "k")])

        sent = [
            plain_insert(plain, clock, self.CARRIED),
            next(single_enqueue(plain, clock, self.CARRIED)),
            next(single_enqueue(keyed, clock, self.CARRIED)),
            next(batch_enqueue(keyless, clock, self.CARRIED)),
            next(batch_enqueue(with_keys, clock, self.CARRIED)),
        ]

        assert [statement.arguments[-1] for statement in sent] == [self.CARRIED] * 5

    async def test_each_pass_of_a_keyed_enqueue_sends_it_again(self) -> None:
        clock = FakeClock()
        single = single_enqueue(check_request(EnqueueRequest(TokenCleanup(), "k")), clock, "{}")
        batch = batch_enqueue(check_batch([EnqueueRequest(TokenCleanup(), "k")]), clock, "{}")

        next(single)
        next(batch)

        assert single.send([NO_ROW]).arguments[-1] == "{}"
        assert batch.send([(1, None, False)]).arguments[-1] == "{}"
