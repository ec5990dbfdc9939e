"""The tests' own layout (CONTRIBUTING.md, "Where a test goes"): every test file sits in the folder of
what it tests, and the ``oracle`` mark agrees with tests/oracle/.

tests/unit/AREA/ holds the unit tests of the package accelconf/AREA (or the module accelconf/AREA.py),
tests/cli/ the command line, tests/lsp/ the language server, tests/oracle/ the tests that run the real
accelerate, DeepSpeed, transformers, peft or torch, tests/e2e/ real editors, a browser or several
processes, tests/project/ checks of the repository as a whole."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

from tests import conftest

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
TOP = ("cli", "lsp", "oracle", "e2e", "project")
# what only an oracle (or end-to-end) test may import or ask pytest.importorskip for
HEAVY = ("torch", "accelerate", "deepspeed", "transformers", "trl", "peft", "bitsandbytes")
RUNNERS = ("tests.oracle.run", "tests.oracle.harness", "tests.oracle.ds_oracle")


def _test_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("test_*.py") if "data" not in p.relative_to(TESTS).parts)


def _folder_is_in_the_layout(rel: Path) -> bool:
    parts = rel.parts[:-1]
    if len(parts) == 1:
        return parts[0] in TOP
    if len(parts) == 2 and parts[0] == "unit":
        area = parts[1]
        return (ROOT / "accelconf" / area / "__init__.py").is_file() or (ROOT / "accelconf" / f"{area}.py").is_file()
    return False


def test_no_test_file_sits_directly_under_tests() -> None:
    assert [p.name for p in TESTS.glob("test_*.py")] == [], "move it into its folder (CONTRIBUTING.md)"


def test_every_test_file_is_in_a_folder_of_the_layout() -> None:
    files = _test_files()
    assert len(files) > 90  # the scan finds the suite: the test can fail
    wrong = [str(p.relative_to(TESTS)) for p in files if not _folder_is_in_the_layout(p.relative_to(TESTS))]
    assert wrong == [], f"not in tests/unit/<accelconf package>/ or tests/{{{','.join(TOP)}}}/: {wrong}"


def test_every_test_folder_is_a_package_so_equal_basenames_import_apart() -> None:
    missing = sorted(
        str(folder.relative_to(TESTS))
        for p in _test_files()
        for folder in p.relative_to(TESTS).parents
        if folder != Path(".") and not (TESTS / folder / "__init__.py").is_file()
    )
    assert missing == [], f"no __init__.py in {sorted(set(missing))}"


def _marks_and_imports(path: Path) -> tuple[list[int], list[str]]:
    """Lines that write pytest.mark.oracle; heavy or oracle-runner modules imported or importorskip'ed."""
    marks, imports = [], []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr == "oracle" and ast.unparse(node.value) == "pytest.mark":
            marks.append(node.lineno)
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call) and ast.unparse(node.func) == "pytest.importorskip" and node.args:
            arg = node.args[0]
            names = [arg.value] if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else []
        imports += [f"{n}:{node.lineno}" for n in names if n.split(".")[0] in HEAVY or n.startswith(RUNNERS)]
    return marks, imports


def test_oracle_tests_are_in_tests_oracle_and_only_there() -> None:
    """A test outside tests/oracle/ neither carries the oracle mark nor runs a release (tests/e2e/ may run
    one: a launcher across processes); the folder hook gives every test in tests/oracle/ the mark."""
    marked, running = [], []
    for path in _test_files():
        folder = path.relative_to(TESTS).parts[0]
        if folder == "oracle":
            continue
        marks, imports = _marks_and_imports(path)
        rel = str(path.relative_to(TESTS))
        marked += [f"{rel}:{line}" for line in marks]
        if folder != "e2e":
            running += [f"{rel} {name}" for name in imports]
    assert marked == [], f"oracle-marked tests outside tests/oracle/ (move them there): {marked}"
    assert running == [], f"tests outside tests/oracle/ that run the real releases (move them there): {running}"


def test_the_folder_hook_marks_oracle_and_e2e_tests_and_no_others() -> None:
    items = {}
    for rel in ("oracle/test_x.py", "e2e/test_x.py", "unit/diff/test_x.py", "cli/test_x.py"):
        added: list[str] = []
        item = SimpleNamespace(path=TESTS / rel, add_marker=added.append, get_closest_marker=lambda name: None)
        items[rel] = item, added
    conftest.pytest_collection_modifyitems([item for item, _ in items.values()])
    names = {rel: [m if isinstance(m, str) else m.name for m in added] for rel, (_, added) in items.items()}
    assert {rel: [m for m in marks if m != "filterwarnings"] for rel, marks in names.items()} == {
        "oracle/test_x.py": ["oracle"],
        "e2e/test_x.py": ["e2e"],
        "unit/diff/test_x.py": [],
        "cli/test_x.py": [],
    }


def test_only_the_unmeasured_folders_and_slow_tests_keep_whole_warning_categories_ignored() -> None:
    got = {}
    cases = {"e2e/test_x.py": False, "oracle/test_release_matrix.py": False, "oracle/test_x.py": False}
    cases |= {"unit/diff/test_x.py": True, "unit/diff/test_y.py": False}  # True: marked slow
    for rel, slow in cases.items():
        added: list[object] = []
        item = SimpleNamespace(
            path=TESTS / rel, add_marker=added.append, get_closest_marker=lambda name, slow=slow: slow or None
        )
        conftest.pytest_collection_modifyitems([item])
        got[rel] = sorted(m.args[0] for m in added if not isinstance(m, str))
    every = sorted(f"ignore::{c}" for c in conftest.CATEGORY_IGNORES)
    assert got == {
        "e2e/test_x.py": every,
        "oracle/test_release_matrix.py": every,
        "oracle/test_x.py": [],
        "unit/diff/test_x.py": every,
        "unit/diff/test_y.py": [],
    }


def test_every_unmeasured_entry_names_a_folder_or_file_that_exists() -> None:
    assert [u for u in conftest.UNMEASURED if not (TESTS / u).exists()] == []
