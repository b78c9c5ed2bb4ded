"""The kit's own kinds and payloads: stores accept any kind name, so the kit brings its own."""

from __future__ import annotations

from enum import StrEnum
from typing import cast

from workqueue.domain import WorkPayload

__all__ = ["AlphaJob", "BetaJob", "ContractKind", "GammaJob", "unvalidated_alpha_job"]


class ContractKind(StrEnum):
    """Three kinds, enough to show that claims, dedup and due-ness keep kinds apart."""

    ALPHA = "contract_alpha"
    BETA = "contract_beta"
    GAMMA = "contract_gamma"


class AlphaJob(WorkPayload):
    """A payload with a typed field, so an unvalidated one can be built and refused."""

    kind = ContractKind.ALPHA

    number: int = 0


class BetaJob(WorkPayload):
    """A second kind, with a text field."""

    kind = ContractKind.BETA

    label: str = ""


class GammaJob(WorkPayload):
    """A third kind, with no fields at all."""

    kind = ContractKind.GAMMA


def unvalidated_alpha_job() -> AlphaJob:
    """An AlphaJob whose ``number`` is text: built without validation, as a bug might."""
    return AlphaJob.model_construct(number=cast(int, "not a number"))
