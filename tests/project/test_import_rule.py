"""Where accelconf imports accelconf: at the top of each module, except in the command layer and a
few reasoned places (CONTRIBUTING.md, "Imports"); every module imports on its own (no cycle hides
behind a lazy import); the hot commands import no heavy package; ``disabled=`` is checked."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from accelconf.api import check_document, validate_config
from accelconf.errors import UsageError
from accelconf.text.document import load_text

ROOT = Path(__file__).resolve().parents[2]

# Lazy imports are the command layer's (accelconf/commands/, accelconf/cli.py: a command imports
# only what it runs) and the public facade's (accelconf/api.py: every command imports it, few need
# the environment, the diff or the memory estimate; with its imports at the top, `to-env` loaded
# 94 accelconf modules instead of 63). Elsewhere, (module, function) -> why the import waits.
ALLOWED: dict[tuple[str, str], str] = {
    ("accelconf/accelerate/validate/deepspeed.py", "_deepspeed_file"): "DeepSpeed's key table and validator "
    "load only for a config that names a DeepSpeed JSON (10 modules `to-env` and `validate` otherwise skip)",
    ("accelconf/formats/yamljson.py", "_from_deepspeed"): "the DeepSpeed key mapping loads only when the "
    "text read is a DeepSpeed JSON",
    ("accelconf/catalogue/__init__.py", "_load"): "the rule data (seven area modules) loads on first use; "
    "the area modules import Rule and Example from this package",
    ("accelconf/formats/__init__.py", "_refuse_unlaunchable"): "every formats module (the shell lexer the "
    "Trainer readers use) imports this package; the launcher's refusal loads when a config is written",
    ("accelconf/formats/__init__.py", "value_findings"): "the accelerate validator and the YAML writer load "
    "when a conversion judges what it wrote, not for a Trainer arguments file",
    ("accelconf/kinds/__init__.py", "_deepspeed_top"): "the DeepSpeed key table loads when a mapping is "
    "judged as DeepSpeed JSON, not for a YAML config or an env file",
    ("accelconf/kinds/__init__.py", "is_deepspeed_data"): "as _deepspeed_top",
    ("accelconf/kinds/__init__.py", "fsdp_config_keys"): "the Trainer releases data (a 63 KB JSON file parsed "
    "at import, about 2.5 ms) loads when a mapping may be Trainer arguments, not on `to-env` of an accelerate config",
    ("accelconf/kinds/__init__.py", "_is_trainer_args"): "as fsdp_config_keys",
    ("accelconf/kinds/__init__.py", "_only_trainer_fields"): "as fsdp_config_keys",
    ("accelconf/report.py", "render"): "the SARIF writer and the rule catalogue load for --format sarif only",
    ("accelconf/trainer/runs.py", "model_hidden_size"): "the model-size reader and its activation tables "
    "load only with --model DIR (`explain` of an arguments file otherwise skips them)",
    ("accelconf/trainer/validate.py", "_context"): "the Trainer's run model (DeepSpeed fill, model sizes) "
    "loads only for an arguments file that names a DeepSpeed JSON",
}


def _lazy_imports() -> list[tuple[str, str, int, str]]:
    """(file, function, line, module) of every accelconf import inside a function, outside the
    command layer and the facade."""
    out = []
    for path in sorted((ROOT / "accelconf").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("accelconf/commands/") or rel in ("accelconf/cli.py", "accelconf/api.py"):
            continue
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    names = ["." * node.level + (node.module or "")]
                else:
                    continue
                out += [(rel, fn.name, node.lineno, n) for n in names if n.startswith(("accelconf", "."))]
    return out


def test_accelconf_imports_accelconf_at_module_top_outside_the_allowed_places() -> None:
    stray = [f"{p}:{line}: {fn}() imports {m}" for p, fn, line, m in _lazy_imports() if (p, fn) not in ALLOWED]
    assert not stray, "move these imports to the module's top (or give the name a lower home):\n" + "\n".join(stray)


def test_every_allowed_lazy_import_still_exists() -> None:
    seen = {(p, fn) for p, fn, _, _ in _lazy_imports()}
    assert set(ALLOWED) <= seen, f"stale entries: {sorted(set(ALLOWED) - seen)}"


def test_the_scan_sees_a_lazy_import() -> None:
    assert ("accelconf/report.py", "render", "accelconf.sarif") in {(p, f, m) for p, f, _, m in _lazy_imports()}


def _modules() -> list[str]:
    found = []
    for base, prefix in ((ROOT / "accelconf", "accelconf"), (ROOT / "lsp" / "accelconf_lsp", "accelconf_lsp")):
        for path in sorted(base.rglob("*.py")):
            parts = (prefix, *path.relative_to(base).with_suffix("").parts)
            if parts[-1] != "__main__":
                found.append(".".join(parts).removesuffix(".__init__"))
    return found


# Each module imported first, in a forked child of an interpreter that has imported no accelconf
# module: an import cycle fails whichever module of it is imported first.
_IMPORT_EACH = """
import importlib, os, sys
failed = []
for name in sys.argv[1:]:
    pid = os.fork()
    if pid == 0:
        try:
            importlib.import_module(name)
        except BaseException as exc:
            print(f"{name}: {type(exc).__name__}: {exc}", flush=True)
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    failed += [name] if status else []
sys.exit(1 if failed else 0)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks one child per module")
def test_every_module_imports_first_on_its_own() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "lsp")])}
    r = subprocess.run(
        [sys.executable, "-c", _IMPORT_EACH, *_modules()], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert r.returncode == 0, r.stdout + r.stderr


ARGS_YAML = """\
model_name_or_path: Qwen/Qwen2.5-0.5B
bf16: true
per_device_train_batch_size: 4
gradient_accumulation_steps: 2
learning_rate: 2.0e-05
fsdp: full_shard auto_wrap
fsdp_config:
  backward_prefetch: backward_pre
  use_orig_params: true
output_dir: out
"""
ACCELERATE_YAML = """\
compute_environment: LOCAL_MACHINE
distributed_type: FSDP
mixed_precision: bf16
num_processes: 8
fsdp_config:
  fsdp_version: 2
  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
"""
HEAVY = ("torch", "transformers", "accelerate", "deepspeed", "trl", "pygls", "importlib.metadata")


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "{args}"],
        ["explain", "{args}"],
        ["validate", "{config}"],
        ["to-env", "{config}"],
        ["explain", "{config}"],
    ],
    ids=["validate-args", "explain-args", "validate-config", "to-env", "explain-config"],
)
def test_hot_commands_import_no_heavy_package(tmp_path: Path, argv: list[str]) -> None:
    (tmp_path / "args.yaml").write_text(ARGS_YAML)
    (tmp_path / "config.yaml").write_text(ACCELERATE_YAML)
    argv = [a.format(args=tmp_path / "args.yaml", config=tmp_path / "config.yaml") for a in argv]
    code = textwrap.dedent(
        f"""
        import sys
        from accelconf.cli import main
        code = main({argv!r})
        print(code, [m for m in {HEAVY!r} if m in sys.modules])
        """
    )
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "lsp")])}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    exit_code, heavy = r.stdout.strip().splitlines()[-1].split(" ", 1)
    assert exit_code in ("0", "1") and heavy == "[]", r.stdout + r.stderr


def test_check_document_refuses_an_unknown_disabled_rule_with_the_nearest_one() -> None:
    doc = load_text("distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: no\n", "c.yaml")
    with pytest.raises(UsageError) as exc:
        check_document(doc, disabled=["yaml-bool-valu"])
    assert str(exc.value).startswith("disabled: unknown rule id 'yaml-bool-valu' (did you mean 'yaml-bool-value'?)")


def test_check_document_disables_a_known_rule() -> None:
    doc = load_text("distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: no\n", "c.yaml")
    assert "yaml-bool-value" in {f.rule for f in check_document(doc)}
    assert "yaml-bool-value" not in {f.rule for f in check_document(doc, disabled=iter(["yaml-bool-value"]))}


def test_validate_config_of_text_checks_disabled_as_check_document_does() -> None:
    with pytest.raises(UsageError, match="unknown rule id 'no-such-rule'"):
        validate_config("distributed_type: NO\nnum_processes: 1\n", disabled=("no-such-rule",))


# What the hottest commands must not load (each measured in milliseconds of start-up): the
# other commands' modules, the packages only other inputs need, and the stdlib modules they skip
# (dataclasses imports inspect, ast, dis and tokenize; the Trainer releases data is a JSON file
# parsed at import; packaging is asked only for a version that is not a plain release).
NOT_ON_PATH: dict[str, tuple[str, ...]] = {
    "to-env": (
        "accelconf.trainer", "accelconf.deepspeed", "accelconf.environment", "accelconf.diff",
        "accelconf.catalogue", "dataclasses", "inspect", "packaging", "json", "difflib",
    ),
    "validate-args": (
        "accelconf.deepspeed", "accelconf.environment", "accelconf.diff", "accelconf.catalogue",
        "accelconf.trainer.runs", "accelconf.trainer.ds_fill", "dataclasses", "inspect", "packaging",
    ),
    "explain-args": (
        "accelconf.deepspeed", "accelconf.environment", "accelconf.diff", "accelconf.catalogue", "dataclasses",
        "inspect", "packaging",
    ),
    # the Trainer model and DeepSpeed's key table load for the files that are theirs
    "validate-config": (
        "accelconf.trainer.validate", "accelconf.trainer.read", "accelconf.deepspeed", "accelconf.environment",
        "accelconf.diff", "accelconf.catalogue", "dataclasses", "inspect", "packaging",
    ),
}  # fmt: skip
# explain prints findings with convert's printer
COMMAND_MODULES = {
    "to-env": ["accelconf.commands.convert"],
    "validate-args": ["accelconf.commands.validate"],
    "explain-args": ["accelconf.commands.convert", "accelconf.commands.explain"],
    "validate-config": ["accelconf.commands.validate"],
}
ARGV = {
    "to-env": ["to-env", "config.yaml"],
    "validate-args": ["validate", "args.yaml"],
    "explain-args": ["explain", "args.yaml"],
    "validate-config": ["validate", "config.yaml"],
}


@pytest.mark.parametrize("case", sorted(NOT_ON_PATH))
def test_hot_commands_load_only_what_they_run(tmp_path: Path, case: str) -> None:
    (tmp_path / "args.yaml").write_text(ARGS_YAML)
    (tmp_path / "config.yaml").write_text(ACCELERATE_YAML)
    argv = ARGV[case]
    code = textwrap.dedent(
        f"""
        import sys
        from accelconf.cli import main
        code = main({argv!r})
        print(code, sorted(m for m in sys.modules if m.startswith("accelconf.commands.")))
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("dataclasses", "inspect", "packaging", "json",
              "difflib") or m.startswith(("accelconf.trainer", "accelconf.deepspeed", "accelconf.environment",
              "accelconf.diff", "accelconf.catalogue"))))
        """
    )
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "lsp")])}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    *_, first, second = r.stdout.strip().splitlines()
    exit_code, commands = first.split(" ", 1)
    loaded = ast.literal_eval(second)
    assert exit_code in ("0", "1"), r.stdout + r.stderr
    assert ast.literal_eval(commands) == COMMAND_MODULES[case], "another command's module loaded"
    stray = [m for m in loaded if any(m == n or m.startswith(n + ".") for n in NOT_ON_PATH[case])]
    assert not stray, f"{case} loads what it does not run: {stray}"
