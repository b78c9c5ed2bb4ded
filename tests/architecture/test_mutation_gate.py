"""The mutation gate judges again every function a change since the recorded full run can have
touched, and refuses when the record is stale (scripts/mutation_gate.py, ADR 0006)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load_gate() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "mutation_gate", ROOT / "scripts" / "mutation_gate.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutation_gate"] = module
    spec.loader.exec_module(module)
    return module


gate = load_gate()

F = "workqueue.application.verdict.x_verdict"
G = "workqueue.application.outcome.xǁOutcomeWriterǁwrite"
H = "workqueue.domain.dedup.x_check_dedup_key"
T1 = "tests/unit/test_a.py"
T2 = "tests/unit/test_b.py"
T3 = "tests/unit/test_c.py"


def record(**changes: Any) -> Any:
    values: dict[str, Any] = {
        "mutmut": "3.8.1",
        "infrastructure": "infra",
        "functions": {F: ("f1", 10, 20.0), G: ("g1", 5, 8.0), H: ("h1", 4, 2.0)},
        "modules": {
            "workqueue.application.verdict": "m1",
            "workqueue.application.outcome": "m2",
            "workqueue.domain.dedup": "m3",
        },
        "data": {"src/workqueue/adapters/postgres/sql/store.sql": "d1"},
        "tests": {T1: "t1", T2: "t2", T3: "t3", "tests/unit/bench.py": "b1"},
        "reach": {T1: [F], T2: [G], T3: [H]},
    }
    values.update(changes)
    return gate.Record(**values)


def tree(**changes: Any) -> Any:
    base = record()
    values: dict[str, Any] = {
        "mutmut": base.mutmut,
        "infrastructure": base.infrastructure,
        "functions": dict(base.functions),
        "modules": dict(base.modules),
        "data": dict(base.data),
        "tests": dict(base.tests),
        "imports": {T1: set(), T2: {"tests/unit/bench.py"}, T3: set()},
        "tests_by_function": {F: {f"{T1}::test_f"}, G: {f"{T2}::test_g"}, H: {f"{T3}::test_h"}},
        "durations": {f"{T1}::test_f": 0.5, f"{T2}::test_g": 0.1, f"{T3}::test_h": 0.2},
    }
    values.update(changes)
    return gate.Tree(**values)


class TestNothingChanged:
    def test_judges_nothing(self) -> None:
        change = gate.functions_to_judge(record(), tree())

        assert (change.functions, change.test_files, change.judged) == (set(), set(), set())
        assert (change.mutants, change.seconds) == (0, 0.0)


class TestAChangedFunction:
    def test_is_judged_again_with_every_function_its_tests_reach(self) -> None:
        functions = {**record().functions, F: ("f2", 10, 20.0)}
        reaching = {F: {f"{T1}::test_f"}, G: {f"{T2}::test_g", f"{T1}::test_both"}, H: set()}

        change = gate.functions_to_judge(
            record(), tree(functions=functions, tests_by_function=reaching)
        )

        assert change.functions == {F}
        assert change.judged == {F, G}
        assert (change.mutants, change.seconds) == (15, 28.0)

    def test_that_is_new_is_judged_with_an_estimate_from_its_tests(self) -> None:
        new = "workqueue.domain.dedup.x_new_rule"
        functions = {**record().functions, new: ("n1", 3, 0.0)}
        reaching = {**tree().tests_by_function, new: {f"{T3}::test_h"}}

        change = gate.functions_to_judge(
            record(), tree(functions=functions, tests_by_function=reaching)
        )

        assert change.functions == {new}
        assert change.judged == {new, H}
        assert change.seconds == pytest.approx(3 * (gate.MUTANT_OVERHEAD + 0.2) + 2.0)

    def test_judges_what_its_recorded_tests_reached_too(self) -> None:
        # Its tests no longer reach G, but did: G's mutants may have lost their killer.
        functions = {**record().functions, F: ("f2", 10, 20.0)}
        before = record(reach={T1: [F, G], T2: [G], T3: [H]})

        change = gate.functions_to_judge(before, tree(functions=functions))

        assert change.judged == {F, G}

    def test_a_deleted_function_is_judged_no_more(self) -> None:
        functions = {F: ("f1", 10, 20.0), H: ("h1", 4, 2.0)}

        change = gate.functions_to_judge(record(), tree(functions=functions))

        assert change.judged == set()


class TestAChangeOutsideTheFunctions:
    def test_in_a_modules_other_text_judges_its_functions(self) -> None:
        modules = {**record().modules, "workqueue.application.outcome": "m2-changed"}

        change = gate.functions_to_judge(record(), tree(modules=modules))

        assert change.functions == {G}

    def test_in_a_non_python_file_judges_the_functions_of_its_package(self) -> None:
        sql = "src/workqueue/adapters/postgres/sql/store.sql"
        store = "workqueue.adapters.postgres.store.x_recovered_list"
        functions = {**record().functions, store: ("s1", 2, 1.0)}
        modules = {**record().modules, "workqueue.adapters.postgres.store": "s"}
        before = record(functions=functions, modules=modules)

        change = gate.functions_to_judge(
            before, tree(functions=functions, modules=modules, data={sql: "d2"})
        )

        assert change.functions == {store}


class TestAChangedTest:
    def test_judges_every_function_it_reaches(self) -> None:
        tests = {**record().tests, T3: "t3-changed"}

        change = gate.functions_to_judge(record(), tree(tests=tests))

        assert (change.test_files, change.judged) == ({T3}, {H})

    def test_a_changed_helper_changes_the_tests_that_import_it(self) -> None:
        tests = {**record().tests, "tests/unit/bench.py": "b2"}

        assert gate.changed_test_files(record(), tree(tests=tests)) == {"tests/unit/bench.py", T2}

    def test_a_changed_conftest_changes_every_test_under_it(self) -> None:
        conftest = "tests/unit/conftest.py"
        tests = {**record().tests, conftest: "c2"}

        assert gate.changed_test_files(
            record(tests={**record().tests, conftest: "c1"}), tree(tests=tests)
        ) >= {T1, T2, T3}

    def test_a_deleted_test_judges_what_it_reached_in_the_recorded_run(self) -> None:
        tests = {path: value for path, value in record().tests.items() if path != T3}
        reaching = {F: {f"{T1}::test_f"}, G: {f"{T2}::test_g"}, H: set()}

        change = gate.functions_to_judge(record(), tree(tests=tests, tests_by_function=reaching))

        assert (change.test_files, change.judged) == ({T3}, {H})


class TestTheRecord:
    def test_reads_back_what_it_wrote(self) -> None:
        written = record()

        assert gate.Record.from_json(written.to_json()) == written

    def test_lists_one_function_per_line(self) -> None:
        text = record().to_json()

        assert f'  ["{F}", "f1", 10, 20.0],' in text.splitlines()

    def test_is_stale_when_mutmut_or_how_mutants_are_judged_changed(self) -> None:
        assert gate._stale(record(), tree()) == ""
        assert "mutmut 3.8.1 made it" in gate._stale(record(), tree(mutmut="3.9.0"))
        assert "how mutants are judged changed" in gate._stale(
            record(), tree(infrastructure="other")
        )

    def test_of_the_real_tree_names_its_settings_scripts_and_conftest(self) -> None:
        first = gate.infrastructure(ROOT, "3.8.1")

        assert gate.infrastructure(ROOT, "3.8.2") != first
        assert set(gate.INFRASTRUCTURE_FILES) == {
            "tests/conftest.py",
            "scripts/mutation",
            "scripts/mutation_gate.py",
        }


class TestNamesAndText:
    def test_a_function_and_a_method_are_named_as_mutmut_names_them(self) -> None:
        assert gate.mangled("workqueue.a", "f") == "workqueue.a.x_f"
        assert gate.mangled("workqueue.a", "C.m") == "workqueue.a.xǁCǁm"

    def test_a_module_is_named_from_its_path(self) -> None:
        src = Path("src")

        assert gate.module_of(src / "workqueue/domain/store.py", src) == "workqueue.domain.store"
        assert gate.module_of(src / "workqueue/__init__.py", src) == "workqueue"

    def test_a_modules_other_text_ignores_its_mutated_functions_only(self) -> None:
        source = (
            "X = 1\n\ndef f():\n    return 1\n\n"
            "class C:\n    Y = 2\n    def m(self):\n        return 2\n"
        )
        mutated = ["workqueue.a.x_f", "workqueue.a.xǁCǁm"]
        base = gate.remainder(source, "workqueue.a", mutated)

        assert (
            gate.remainder(source.replace("return 1", "return 9"), "workqueue.a", mutated) == base
        )
        assert (
            gate.remainder(source.replace("return 2", "return 9"), "workqueue.a", mutated) == base
        )
        assert gate.remainder(source.replace("X = 1", "X = 9"), "workqueue.a", mutated) != base
        assert gate.remainder(source.replace("Y = 2", "Y = 9"), "workqueue.a", mutated) != base
        # A function mutmut does not mutate (decorated) is the module's other text.
        assert gate.remainder(source.replace("return 1", "return 9"), "workqueue.a", []) != base

    def test_the_mutants_of_a_function_are_one_pattern(self) -> None:
        assert gate.judged_patterns([G, F]) == [f"{G}__mutmut_*", f"{F}__mutmut_*"]

    def test_a_test_file_is_the_first_part_of_a_node_id(self) -> None:
        assert gate.test_file("tests/unit/test_a.py::TestX::test_y[1]") == "tests/unit/test_a.py"

    def test_local_imports_resolve_beside_the_test_from_the_root_and_from_src(
        self, tmp_path: Path
    ) -> None:
        (tmp_path / "tests/unit").mkdir(parents=True)
        (tmp_path / "src/workqueue/kit").mkdir(parents=True)
        test = tmp_path / "tests/unit/test_a.py"
        test.write_text(
            "import os\nfrom bench import B\nfrom tests.unit import helper\n"
            "from workqueue.kit import suite\n"
        )
        known = {
            "tests/unit/bench.py",
            "tests/unit/helper.py",
            "src/workqueue/kit/suite.py",
            "tests/unit/test_a.py",
        }

        assert gate.local_imports(test, tmp_path, known) == known - {"tests/unit/test_a.py"}


def test_a_non_python_file_belongs_to_the_nearest_package_above_it() -> None:
    modules = ["workqueue.adapters.postgres.sql", "workqueue.adapters.postgres.store"]

    assert (
        gate.package_of("src/workqueue/adapters/postgres/sql/store.sql", modules)
        == "workqueue.adapters.postgres"
    )
    assert gate.package_of("src/elsewhere/x.sql", modules) == ""


def test_the_fake_clocks_functions_are_judged_by_its_own_tests_only() -> None:
    clock = "workqueue.adapters.testing.clock.xǁFakeClockǁnow"
    reaching = {
        clock: ["tests/unit/test_fake_clock.py::test_now", "tests/unit/test_a.py::test_f"],
        F: ["tests/unit/test_a.py::test_f"],
        "workqueue.adapters.testing.clock.x__lonely": ["tests/unit/test_a.py::test_f"],
    }

    assert gate.narrowed(reaching) == {
        clock: ["tests/unit/test_fake_clock.py::test_now"],
        F: ["tests/unit/test_a.py::test_f"],
        # No test of its own reaches it: it keeps the ones that do.
        "workqueue.adapters.testing.clock.x__lonely": ["tests/unit/test_a.py::test_f"],
    }
