"""``from workqueue import ...``: one name per thing a producer or an application needs, each
the object its layer defines, loaded on first use; a name whose extra is missing says which
extra to install."""

from __future__ import annotations

import importlib
import io
import sys
import tomllib
from pathlib import Path

import pytest

import workqueue
from workqueue.entrypoints.extras import (
    DISTRIBUTION,
    MissingExtraError,
    extra_for,
    missing_extra,
)

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# The extras that bring a third-party package some part of workqueue imports on demand.
EXTRAS_OF_OPTIONAL_PARTS = ("embedded", "uvloop", "psycopg", "web")


def never_imported(monkeypatch: pytest.MonkeyPatch, package: str) -> None:
    """As if ``package`` and its modules had never been imported, for this test alone.

    Besides their entries in ``sys.modules``, the attribute that names each on its parent
    package is put back afterwards: an import during the test rebinds it to a new module
    object, which would hide the old one's submodules from every later test.
    """
    for name in [m for m in sys.modules if m == package or m.startswith(f"{package}.")]:
        parent, _, child = name.rpartition(".")
        if parent in sys.modules and child in vars(sys.modules[parent]):
            monkeypatch.setattr(sys.modules[parent], child, getattr(sys.modules[parent], child))
        monkeypatch.delitem(sys.modules, name)


def module_of(requirement: str) -> str:
    """The import name of a requirement's distribution ("prometheus-client>=0.20" -> ...)."""
    name = requirement.split("[")[0].split(">")[0].split("<")[0].split("=")[0].strip()
    return name.replace("-", "_")


class TestTheNamesOfTheFace:
    @pytest.mark.parametrize("name", sorted(set(workqueue.__all__) - {"__version__"}))
    def test_each_public_name_is_the_object_its_layer_defines(self, name: str) -> None:
        value = getattr(workqueue, name)

        home = importlib.import_module(value.__module__)
        assert value.__module__.startswith("workqueue.")
        assert getattr(home, name) is value

    def test_a_producer_and_an_application_find_what_the_issue_of_one_root_names(self) -> None:
        assert {
            "WorkPayload",
            "WorkQueue",
            "PostgresWorkQueue",
            "PsycopgWorkQueue",
            "WorkHandler",
            "WorkContext",
            "WorkSchedule",
            "WorkQueueApp",
            "WorkQueueError",
            "EnqueueFailedError",
            "InvalidPayloadError",
            "__version__",
        } <= set(workqueue.__all__)

    def test_every_name_is_kept_once_it_is_read(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delattr(workqueue, "WorkSchedule", raising=False)

        value = workqueue.WorkSchedule

        assert vars(workqueue)["WorkSchedule"] is value

    def test_an_unknown_name_is_an_attribute_error_naming_it(self) -> None:
        with pytest.raises(AttributeError) as missing:
            workqueue.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018

        assert str(missing.value) == "module 'workqueue' has no attribute 'NoSuchThing'"

    def test_dir_lists_every_public_name(self) -> None:
        assert set(workqueue.__all__) <= set(dir(workqueue))
        assert dir(workqueue) == sorted(dir(workqueue))

    def test_the_version_is_the_one_the_distribution_is_built_with(self) -> None:
        from workqueue._version import __version__

        assert workqueue.__version__ == __version__
        assert PROJECT["name"] == DISTRIBUTION
        assert "version" in PROJECT["dynamic"]


class TestANameWhoseExtraIsMissing:
    def test_says_which_extra_to_install_in_one_line(self, monkeypatch: pytest.MonkeyPatch) -> None:
        # As if psycopg (the psycopg extra) were not installed, and nothing imported it yet.
        monkeypatch.setitem(sys.modules, "psycopg", None)
        never_imported(monkeypatch, "workqueue.adapters.psycopg")
        # Forgotten if an earlier test loaded it (asking hasattr would load it now).
        if "PsycopgWorkQueue" in vars(workqueue):
            monkeypatch.delattr(workqueue, "PsycopgWorkQueue")

        with pytest.raises(MissingExtraError) as missing:
            workqueue.PsycopgWorkQueue  # noqa: B018

        assert str(missing.value) == (
            "workqueue.PsycopgWorkQueue needs the 'psycopg' extra (psycopg is not installed): "
            "pip install 'workqueue-pg[psycopg]'"
        )
        assert isinstance(missing.value, ImportError)

    def test_leaves_other_import_errors_as_they_are(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setitem(workqueue._HOME, "Nowhere", "workqueue.no_such_module")

        with pytest.raises(ModuleNotFoundError) as missing:
            workqueue.Nowhere  # type: ignore[attr-defined]  # noqa: B018

        assert not isinstance(missing.value, MissingExtraError)
        assert missing.value.name == "workqueue.no_such_module"


class TestWhichExtraBringsWhat:
    @pytest.mark.parametrize("extra", EXTRAS_OF_OPTIONAL_PARTS)
    def test_every_package_of_an_optional_extra_is_named_with_its_extra(self, extra: str) -> None:
        for requirement in PROJECT["optional-dependencies"][extra]:
            assert extra_for(module_of(requirement)) == extra, requirement

    def test_a_submodule_counts_as_its_package(self) -> None:
        assert extra_for("starlette.routing") == "web"

    def test_a_package_of_no_extra_is_none(self) -> None:
        assert extra_for("asyncpg") is None
        assert extra_for(None) is None

    def test_the_error_names_what_needed_the_extra_and_how_to_install_it(self) -> None:
        error = missing_extra(ModuleNotFoundError(name="jinja2"), "workqueue web")

        assert str(error) == (
            "workqueue web needs the 'web' extra (jinja2 is not installed): "
            "pip install 'workqueue-pg[web]'"
        )

    def test_no_error_when_no_extra_would_help(self) -> None:
        assert missing_extra(ModuleNotFoundError(name="orders"), "--app") is None


def test_the_command_prints_the_bare_version(capsys: pytest.CaptureFixture[str]) -> None:
    from workqueue.entrypoints.cli import main

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"{workqueue.__version__}\n"


def test_workqueue_web_without_the_web_extra_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from workqueue.entrypoints.cli import main

    # As if uvicorn (the web extra) were not installed, and the view never imported.
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    never_imported(monkeypatch, "workqueue.entrypoints.web")
    monkeypatch.setenv("WORKQUEUE_DATABASE_URL", "postgresql://nobody@127.0.0.1:1/x")
    err = io.StringIO()

    assert main(["web"], err=err) == 1
    assert err.getvalue() == (
        "workqueue: workqueue web needs the 'web' extra (uvicorn is not installed): "
        "pip install 'workqueue-pg[web]'\n"
    )


def test_workqueue_web_lets_other_import_errors_through(monkeypatch: pytest.MonkeyPatch) -> None:
    from workqueue.entrypoints.cli import main

    # A module of our own that is missing is a broken install, not a missing extra.
    monkeypatch.setitem(sys.modules, "workqueue.entrypoints.web.run", None)
    monkeypatch.setenv("WORKQUEUE_DATABASE_URL", "postgresql://nobody@127.0.0.1:1/x")
    err = io.StringIO()

    assert main(["web"], err=err) == 1
    assert "web extra" not in err.getvalue()
    assert err.getvalue().startswith("workqueue: import of workqueue.entrypoints.web.run halted")
