"""The kit's own machinery, seen as a third party sees it: hangs fail, skips say why.

Each check runs the kit in a pytest process of its own, in a directory of its
own with no conftest, so none of this project's settings or guards take part.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

CHECKS = """
import asyncio

from workqueue.adapters.memory import InMemoryWorkStore
from workqueue.adapters.testing.contract import (
    ClaimContract,
    HangGuard,
    MemoryContractFixtures,
    RefreshTokenContract,
    StoreCapabilities,
)


class NeverAnswers(InMemoryWorkStore):
    async def claim(self, kinds, *, worker_id, lease_duration):
        await asyncio.Event().wait()


class Spins(InMemoryWorkStore):
    async def claim(self, kinds, *, worker_id, lease_duration):
        while True:
            pass


class TestAStoreCallThatNeverReturns(ClaimContract, HangGuard, MemoryContractFixtures):
    hang_after_seconds = 1

    def make_store(self, state, clock):
        return NeverAnswers(state, clock)


class TestALoopThatNeverYields(ClaimContract, HangGuard, MemoryContractFixtures):
    hang_after_seconds = 1

    def make_store(self, state, clock):
        return Spins(state, clock)


class TestNoRefreshTokens(RefreshTokenContract, MemoryContractFixtures):
    store_capabilities = StoreCapabilities(refresh_tokens=False)
"""


@pytest.fixture(scope="module")
def checks(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    tmp_path = tmp_path_factory.mktemp("third_party_run")
    (tmp_path / "test_checks.py").write_text(CHECKS)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "test_checks.py",
            "-p",
            "no:cacheprovider",
            "-ra",
            "-o",
            "asyncio_mode=auto",
            "-o",
            "asyncio_default_fixture_loop_scope=function",
            "-o",
            "asyncio_default_test_loop_scope=function",
            "-k",
            "oldest_queued_item_first or TestNoRefreshTokens",
        ],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HYPOTHESIS_STORAGE_DIRECTORY": str(tmp_path / "hyp")},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_kit_test_that_hangs_fails_naming_itself_and_the_run_goes_on(
    checks: subprocess.CompletedProcess[str],
) -> None:
    output = checks.stdout + checks.stderr
    assert checks.returncode == 1, output
    for test_class in ("TestAStoreCallThatNeverReturns", "TestALoopThatNeverYields"):
        name = f"test_checks.py::{test_class}::test_a_claim_takes_the_oldest_queued_item_first"
        assert f"FAILED {name}" in output, output
        assert f"TimeoutError: {name} ran for 1 s: it hung" in output, output
    assert "2 failed" in output, output


def test_a_contract_an_adapter_declares_it_lacks_is_skipped_with_the_reason(
    checks: subprocess.CompletedProcess[str],
) -> None:
    output = checks.stdout
    assert "4 skipped" in output, output
    assert output.count("the adapter declares no refresh tokens") == 4, output
