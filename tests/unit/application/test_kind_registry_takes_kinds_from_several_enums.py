"""The kind registry serves the kinds of several enums at once (the built-in ones beside an
application's), or single members of one; it refuses two kinds of one name and a schedule
whose kind it does not serve."""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum

import pytest

from workqueue.application import KindCatalog, KindRegistry
from workqueue.domain import KindRegistryError, WorkContext, WorkHandler, WorkPayload, WorkSchedule


class House(StrEnum):
    SWEEP = "sweep"
    MOP = "mop"


class Garden(StrEnum):
    MOW = "mow"


class Neighbour(StrEnum):
    SWEEP = "sweep"


class Sweep(WorkPayload):
    kind = House.SWEEP


class Mop(WorkPayload):
    kind = House.MOP


class Mow(WorkPayload):
    kind = Garden.MOW


class NeighbourSweep(WorkPayload):
    kind = Neighbour.SWEEP


class SweepHandler(WorkHandler[Sweep]):
    async def handle(self, payload: Sweep, ctx: WorkContext) -> None:
        return None


class MopHandler(WorkHandler[Mop]):
    async def handle(self, payload: Mop, ctx: WorkContext) -> None:
        return None


class MowHandler(WorkHandler[Mow]):
    async def handle(self, payload: Mow, ctx: WorkContext) -> None:
        return None


class NeighbourSweepHandler(WorkHandler[NeighbourSweep]):
    async def handle(self, payload: NeighbourSweep, ctx: WorkContext) -> None:
        return None


def every_hour(payload: WorkPayload) -> WorkSchedule:
    return WorkSchedule(payload=payload, interval=timedelta(hours=1))


class TestSeveralEnums:
    def test_a_registry_serves_the_kinds_of_every_enum_given(self) -> None:
        registry = KindRegistry(
            [House, Garden], [Sweep, Mop, Mow], [SweepHandler(), MopHandler(), MowHandler()]
        )

        assert registry.kinds == frozenset({"sweep", "mop", "mow"})
        assert isinstance(registry.handler("mow"), MowHandler)
        assert repr(registry) == "KindRegistry(House or Garden, kinds=['mop', 'mow', 'sweep'])"

    def test_single_members_serve_only_those_kinds(self) -> None:
        registry = KindRegistry([House.SWEEP, Garden], [Sweep, Mow], [SweepHandler(), MowHandler()])

        assert registry.kinds == frozenset({"sweep", "mow"})

    def test_a_payload_of_a_member_left_out_is_refused_naming_the_enums(self) -> None:
        with pytest.raises(KindRegistryError) as refused:
            KindRegistry([House.SWEEP, Garden], [Sweep, Mop, Mow], [SweepHandler(), MowHandler()])

        assert "payload Mop is of kind <House.MOP: 'mop'>" in str(refused.value)
        assert "not a member of House or Garden" in str(refused.value)

    def test_an_enum_given_twice_serves_its_kinds_once(self) -> None:
        registry = KindRegistry([House, House.MOP], [Sweep, Mop], [SweepHandler(), MopHandler()])

        assert registry.kinds == frozenset({"sweep", "mop"})

    def test_two_kinds_of_one_name_from_different_enums_are_refused_naming_both(self) -> None:
        with pytest.raises(KindRegistryError) as refused:
            KindRegistry(
                [House, Neighbour],
                [Sweep, Mop, NeighbourSweep],
                [SweepHandler(), MopHandler(), NeighbourSweepHandler()],
            )

        assert str(refused.value) == (
            "cannot build the kind registry for House or Neighbour: "
            "kind 'sweep' is declared twice: House.SWEEP and Neighbour.SWEEP; "
            "payload NeighbourSweep is of kind <Neighbour.SWEEP: 'sweep'>, "
            "which is not a member of House or Neighbour; "
            "handler NeighbourSweepHandler handles kind <Neighbour.SWEEP: 'sweep'>, "
            "which is not a member of House or Neighbour"
        )

    def test_something_that_is_no_kind_is_refused_by_its_repr(self) -> None:
        with pytest.raises(KindRegistryError, match="'sweep' is neither a kind enum nor one"):
            KindRegistry([Garden, "sweep"], [Mow], [MowHandler()])  # type: ignore[list-item]

    def test_an_enum_without_members_is_still_the_enum_served(self) -> None:
        class Empty(StrEnum):
            pass

        registry = KindRegistry(Empty, [], [])

        assert (registry.kinds, repr(registry)) == (
            frozenset(),
            f"KindRegistry({Empty.__qualname__}, kinds=[])",
        )

    def test_no_kinds_at_all_refuses_every_payload_saying_so(self) -> None:
        with pytest.raises(KindRegistryError) as refused:
            KindRegistry([], [Mow], [])

        assert str(refused.value) == (
            "cannot build the kind registry for no kind enum: payload Mow is of kind "
            "<Garden.MOW: 'mow'>, which is not a member of no kind enum"
        )


class TestSchedules:
    def test_a_schedule_of_a_kind_served_is_accepted(self) -> None:
        registry = KindRegistry(Garden, [Mow], [MowHandler()], [every_hour(Mow())])

        assert registry.kinds == frozenset({"mow"})

    def test_a_schedule_whose_kind_no_handler_serves_is_refused_naming_the_kind(self) -> None:
        with pytest.raises(KindRegistryError) as refused:
            KindRegistry(Garden, [Mow], [MowHandler()], [every_hour(Sweep())])

        assert str(refused.value) == (
            "cannot build the kind registry for Garden: schedule of kind 'sweep' has no "
            "handler: its items would never be claimed"
        )

    def test_a_schedule_of_another_enums_kind_of_the_same_name_is_refused(self) -> None:
        with pytest.raises(KindRegistryError) as refused:
            KindRegistry(
                House, [Sweep, Mop], [SweepHandler(), MopHandler()], [every_hour(NeighbourSweep())]
            )

        assert "schedule of kind 'sweep' enqueues payload NeighbourSweep" in str(refused.value)
        assert "the kind's payload class is Sweep" in str(refused.value)


class TestTheCatalog:
    def test_a_catalog_validates_payloads_without_any_handler(self) -> None:
        catalog = KindCatalog([House, Garden], [Sweep, Mop, Mow])

        assert catalog.kinds == frozenset({"sweep", "mop", "mow"})
        assert catalog.parse_json("mow", "{}") == Mow()
        assert repr(catalog) == "KindCatalog(House or Garden, kinds=['mop', 'mow', 'sweep'])"

    def test_a_catalog_refuses_a_kind_without_a_payload(self) -> None:
        with pytest.raises(KindRegistryError) as refused:
            KindCatalog([House, Garden], [Sweep, Mow])

        assert str(refused.value) == (
            "cannot build the kind registry for House or Garden: kind 'mop' has no payload class"
        )

    def test_a_catalog_refuses_two_kinds_of_one_name(self) -> None:
        with pytest.raises(KindRegistryError, match="kind 'sweep' is declared twice"):
            KindCatalog([House, Neighbour], [Sweep, Mop])
