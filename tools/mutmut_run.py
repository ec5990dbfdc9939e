"""``mutmut`` (3.8) with one addition: functions registered by validate's ``@rule("name")`` are mutated.

mutmut skips every decorated function, and every validate rule is one (accelconf/accelerate/
validate.py registers rules with ``@rule``), so plain mutmut never mutates the rules at all. The
decorator is safe to keep on the trampoline: ``rule`` only appends the function to ``RULES``, and
the trampoline dispatches each call to the active mutant. The copies mutmut makes (the original and
each mutant) must not register themselves, so they lose the decorator. The decorator's own
arguments are still never mutated (mutmut skips ``cst.Decorator`` nodes).

Usage: python tools/mutmut_run.py run --max-children 1   (any mutmut command line)

ACCELCONF_MUTANTS_TESTS, when set, replaces ``pytest_add_cli_args_test_selection`` of
pyproject.toml for this run (pytest arguments, shell-quoted: test files and options such as
``-k``). Fewer tests can only kill fewer mutants, so a kill rate measured with a narrower
selection is a lower bound of the rate with the configured one; the narrow run is what makes a
full run of a large module fit in about 90 minutes (validate) when its survivors would otherwise each run every slow
end-to-end test that covers them.

ACCELCONF_MUTANTS_ONLY and ACCELCONF_MUTANTS_SOURCES (space-separated) replace ``only_mutate`` and
``source_paths`` the same way: tools/mutants_sample.py runs one pass per group of modules outside
the core with them. A source path under lsp/ is put first on ``sys.path`` (as mutmut does for
``mutants/``) so the tests import the mutated ``accelconf_lsp``.
"""

from __future__ import annotations

import os
import shlex
import sys

import libcst as cst
from mutmut.mutation import file_mutation as fm

_REGISTERING = {"rule"}


def _registering(node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.FunctionDef) or len(node.decorators) != 1:
        return False
    deco = node.decorators[0].decorator
    return isinstance(deco, cst.Call) and isinstance(deco.func, cst.Name) and deco.func.value in _REGISTERING


_skip = fm.MutationVisitor._skip_node_and_children


def _skip_node_and_children(self: fm.MutationVisitor, node: cst.CSTNode) -> bool:
    if _registering(node):
        return False  # what the stock check would say for an undecorated function
    return _skip(self, node)


_arrange = fm.function_trampoline_arrangement


def function_trampoline_arrangement(function: cst.FunctionDef, mutants, class_name):  # type: ignore[no-untyped-def]
    decl, methods, assign, names = _arrange(function, mutants, class_name)
    if _registering(function):
        methods = [methods[0]] + [m.with_changes(decorators=[]) for m in methods[1:]]
    return decl, methods, assign, names


def configure():  # type: ignore[no-untyped-def]
    """mutmut patched and configured (the overrides below applied); returns ``mutmut.__main__``."""
    if not hasattr(fm, "MutationVisitor") or not hasattr(fm, "function_trampoline_arrangement"):
        sys.exit("tools/mutmut_run.py: this mutmut version has a different layout; pin mutmut==3.8.1")
    fm.MutationVisitor._skip_node_and_children = _skip_node_and_children  # type: ignore[method-assign]
    fm.function_trampoline_arrangement = function_trampoline_arrangement
    overrides = {
        key: value.split() if key != "pytest_add_cli_args_test_selection" else shlex.split(value)
        for key, var in _OVERRIDES.items()
        if (value := os.environ.get(var, "").strip())
    }
    if overrides:
        from mutmut import configuration

        reader = configuration._config_reader

        def narrowed_reader():  # type: ignore[no-untyped-def]
            read = reader()
            return lambda key, default: overrides[key] if key in overrides else read(key, default)

        configuration._config_reader = narrowed_reader  # read again by every (re)load of mutmut's config
        configuration.reset_config()
    import mutmut.__main__ as mm

    _prepend_lsp(mm)
    return mm


def main() -> None:
    configure().cli()


_OVERRIDES = {
    "pytest_add_cli_args_test_selection": "ACCELCONF_MUTANTS_TESTS",
    "only_mutate": "ACCELCONF_MUTANTS_ONLY",
    "source_paths": "ACCELCONF_MUTANTS_SOURCES",
}


def _prepend_lsp(mm) -> None:  # type: ignore[no-untyped-def]
    """mutmut puts ``mutants/`` first on sys.path; the server package lives one folder down."""
    setup = mm.setup_source_paths

    def setup_source_paths() -> None:
        setup()
        if any(str(p).startswith("lsp") for p in mm.config().source_paths):
            sys.path.insert(0, os.path.abspath(os.path.join("mutants", "lsp")))

    mm.setup_source_paths = setup_source_paths


if __name__ == "__main__":
    main()
