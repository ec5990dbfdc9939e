"""The package as people get it: honest dependencies, a complete sdist, a wheel with the licence and
the target profiles, `--help` that teaches for every command, and the installed wheel working in a
fresh venv. Builds use setuptools' PEP 517 backend in this interpreter (no build isolation, so no
package index is needed except for the fresh-venv smoke test)."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from accelconf.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[2]
# Imported only on request and never needed at run time: the probe asks torch/pynvml when the user
# does; deepspeed and accelerate only by the generators of committed data (a developer step):
# accelconf/deepspeed/signatures.py and accelconf/formats/pynames_spec.py, each in generate().
OPTIONAL_IMPORTS = {"torch", "pynvml", "deepspeed", "accelerate"}
BUILD_JUNK = (".venv", "build/", "dist/", ".egg-info", "__pycache__", "node_modules", ".pyc", ".vsix", "bench/.tmp")


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


# -- dependencies -------------------------------------------------------------------------------


def _declared_dependencies() -> set[str]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M)
    assert block, "no dependencies list in pyproject.toml"
    names = re.findall(r'^\s*"([A-Za-z0-9_.\-]+)', block.group(1), re.M)
    return {re.sub(r"[-_.]+", "-", n).lower() for n in names}


def _imported_top_level_modules() -> set[str]:
    mods: set[str] = set()
    for folder in (ROOT / "accelconf", ROOT / "lsp" / "accelconf_lsp"):
        for path in folder.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    mods |= {a.name.split(".")[0] for a in node.names}
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    mods.add(node.module.split(".")[0])
    return mods - set(sys.stdlib_module_names) - {"accelconf", "accelconf_lsp", "__future__"}


def test_runtime_dependencies_are_what_the_code_imports():
    import importlib.metadata as md

    to_dist = md.packages_distributions()
    imported = _imported_top_level_modules() - OPTIONAL_IMPORTS
    needed = set()
    for mod in imported:
        dists = to_dist.get(mod)
        assert dists, f"{mod} is imported but no installed distribution provides it"
        needed.add(re.sub(r"[-_.]+", "-", dists[0]).lower())
    declared = _declared_dependencies()
    assert needed == declared, (
        f"imported but not declared: {needed - declared}; declared but not imported: {declared - needed}"
    )
    # the judges of accelconf are test extras, never runtime
    assert not declared & {"jsonschema", "deepdiff", "torch", "accelerate", "deepspeed"}


def test_optional_imports_stay_lazy():
    """torch and pynvml appear only inside functions (imported when asked), never at module level."""
    for path in (ROOT / "accelconf").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = (
                    {a.name.split(".")[0] for a in node.names}
                    if isinstance(node, ast.Import)
                    else {(node.module or "").split(".")[0]}
                )
                assert not names & OPTIONAL_IMPORTS, (
                    f"{path.relative_to(ROOT)} imports {names & OPTIONAL_IMPORTS} at module level"
                )


# -- building -----------------------------------------------------------------------------------


def _tracked_files() -> list[str] | None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return None
    r = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    if r.returncode != 0:
        return None
    return [f for f in r.stdout.decode().split("\0") if f and (ROOT / f).is_file()]


def _copy_tree(dest: Path) -> Path:
    """The source tree without build outputs (what a fresh clone, or an unpacked sdist, holds)."""
    tracked = _tracked_files()
    if tracked is None:  # running from an unpacked sdist: copy it minus junk
        shutil.copytree(
            ROOT,
            dest,
            ignore=shutil.ignore_patterns(
                ".venv",
                "build",
                "dist",
                "*.egg-info",
                "__pycache__",
                "node_modules",
                ".tmp",
                ".pytest_cache",
                ".hypothesis",
            ),
        )
        return dest
    for rel in tracked:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dest / rel)
    return dest


def _build(src: Path, out: Path, what: str) -> Path:
    code = f"import sys; from setuptools import build_meta as b; print(b.build_{what}(sys.argv[1]))"
    r = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", code, str(out)],
        cwd=src,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    # setuptools prints SetuptoolsDeprecationWarning (licence tables, classifiers) on stderr
    assert "Deprecat" not in r.stderr and "deprecat" not in r.stderr, r.stderr[-3000:]
    return out / r.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    pytest.importorskip("setuptools", reason="setuptools (test extras) builds the sdist and wheel")
    src = _copy_tree(tmp_path_factory.mktemp("src") / "accelconf")
    out = tmp_path_factory.mktemp("dist")
    return src, _build(src, out, "sdist"), _build(src, out, "wheel")


def test_sdist_holds_every_tracked_file_and_no_build_output(built):
    src, sdist, _ = built
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n and tar.getmember(n).isfile()}
    expected = _tracked_files()
    if expected is None:
        expected = [p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file()]
    expected_set = set(expected) - {".gitignore", ".gitattributes"}
    missing = sorted(expected_set - names)
    assert not missing, f"tracked files missing from the sdist: {missing[:20]}"
    for must in (
        "LICENSE",
        "README.md",
        "pyproject.toml",
        "tests/conftest.py",
        "tests/oracle/harness.py",
        "examples/fsdp2.yaml",
        "schemas/accelerate-config.schema.json",
        "schemas/catalog.json",
        "accelconf/environment/profiles/h100-node.yaml",
    ):
        assert must in names, must
    assert any(n.startswith("tests/data/") for n in names)
    assert any(n.startswith("schemas/versions/") for n in names)
    # setuptools' own metadata (accelconf.egg-info/, PKG-INFO) belongs in an sdist; anything else built does not
    junk = sorted(n for n in names if any(j in n for j in BUILD_JUNK) and not n.startswith("accelconf.egg-info/"))
    assert not junk, junk


def test_wheel_holds_the_licence_profiles_and_both_packages(built):
    _, _, wheel = built
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = zf.read(meta_name).decode()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), sorted(n for n in names if "dist-info" in n)
    assert "License-Expression: Apache-2.0" in meta and "License-File: LICENSE" in meta
    assert {f"accelconf/environment/profiles/{p}.yaml" for p in ("h100-node", "v100-node", "a10g-g5")} <= names
    assert "accelconf/py.typed" in names and "accelconf_lsp/__init__.py" in names
    # every data file the package reads at run time is in the wheel
    data = {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "accelconf").rglob("*")
        if p.is_file() and p.suffix in (".json", ".yaml", ".yml", ".txt") and "__pycache__" not in p.parts
    }
    assert data and data <= names, sorted(data - names)
    requires = sorted(
        line.split(":", 1)[1].strip()
        for line in meta.splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    )
    assert not [r for r in requires if r.startswith(("jsonschema", "deepdiff", "torch"))], requires


@pytest.mark.slow
def test_pytest_runs_from_the_unpacked_sdist(built, tmp_path):
    """conftest.py, tests/data and the package are all in the sdist: a test file runs from it alone."""
    _, sdist, _ = built
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path, filter="data")
    root = next(tmp_path.iterdir())
    env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{root / 'lsp'}"}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/unit/accelerate/test_fmt.py",
            "tests/cli/test_cli.py",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and "error" not in r.stdout.splitlines()[-1]


@pytest.mark.slow
def test_readme_install_builds_a_wheel_as_written(tmp_path):
    """The README's first install command, run as written in a clean copy of the tree (pip builds in
    an isolated environment, so it needs the package index for setuptools)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Install") :]
    section = section[: section.index("\n## ", 3)]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    build = blocks[1].splitlines()[0].split("#")[0].strip()
    assert build == "python -m pip wheel --no-deps -w dist ."
    src = _copy_tree(tmp_path / "src")
    argv = [sys.executable if a == "python" else a for a in build.split()]
    r = subprocess.run(
        argv + ["--timeout", "20", "--retries", "1"], cwd=src, capture_output=True, text=True, timeout=600
    )
    if (
        r.returncode != 0
        and not _in_ci()
        and ("Could not find a version" in r.stdout + r.stderr or "connection" in (r.stdout + r.stderr).lower())
    ):
        pytest.skip("package index unreachable: pip cannot fetch setuptools to build the wheel")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert [p.name for p in (src / "dist").glob("accelconf-*.whl")], list((src / "dist").iterdir())
    assert "Deprecat" not in r.stdout + r.stderr


# -- the installed wheel in a fresh venv --------------------------------------------------------

SMOKE = [  # (argv, expected exit code, text the output must contain)
    (["--version"], 0, "accelconf "),
    (["validate", "{ex}/mistakes.yaml"], 1, "error"),
    (["validate", "{ex}/zero3.yaml", "{ex}/ds_zero3.json"], 0, "checked"),
    (["fmt", "--diff", "{ex}/legacy.yaml"], 0, "+++ b/"),
    (["fmt", "--check", "{ex}/legacy.yaml"], 1, "would reformat"),
    (["migrate", "--to", "fsdp2", "{ex}/legacy.yaml"], 0, "distributed_type"),
    (["schema", "accelerate"], 0, "urn:accelconf:schema:accelerate-config"),
    (["schema", "deepspeed"], 0, "urn:accelconf:schema:deepspeed-config"),
    (["convert", "--to", "json", "{ex}/fsdp2.yaml"], 0, '"distributed_type"'),
    (["to-env", "{ex}/fsdp2.yaml"], 0, "ACCELERATE_USE_FSDP=true"),
    (["to-cli", "{ex}/fsdp2.yaml"], 0, "accelerate launch"),
    (["to-kwargs", "{ex}/fsdp2.yaml"], 0, "Accelerator"),
    (["to-yaml", "{ex}/fsdp2.yaml"], 0, "distributed_type: FSDP"),
    (["to-json", "{ex}/zero3.yaml"], 0, '"DEEPSPEED"'),
    (["explain", "{ex}/fsdp2.yaml"], 0, "SETTING"),
    (["diff", "{ex}/fsdp2.yaml", "{ex}/fsdp2.yaml"], 0, ""),
    (["diff", "{ex}/fsdp2.yaml", "{ex}/zero3.yaml"], 1, "distributed_type"),
    (["check", "--target", "h100-node", "{ex}/fsdp2.yaml"], None, "target h100-node.yaml"),
    (["env", "--probe", "none"], 0, "accelconf env"),
    (["check", "--probe", "none", "{ex}/fsdp2.yaml"], None, "no accelerate among the packages of"),
    (["lsp", "--help"], 0, "accelconf lsp"),
    (
        ["fit", "--model", "{ex}/memory/qwen2-7b", "--gpus", "8", "--gpu", "H100-80GB", "--write-config", "fit.yaml"],
        0,
        "cheapest that fits",
    ),
    (["preflight", "{ex}/fsdp2.yaml", "--machine-rank", "0"], 2, "torch is not installed"),
    (["to-args", "{ex}/fsdp2.yaml"], 0, "fsdp_config:"),
    (["rules", "unknown-key"], 0, "unknown-key (accelerate)"),
]


def _fresh_venv_with_wheel(wheel: Path, where: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, capture_output=True, timeout=300)
    py = where / ("Scripts" if os.name == "nt" else "bin") / "python"
    r = subprocess.run(
        [str(py), "-m", "pip", "install", "--quiet", "--timeout", "20", "--retries", "1", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if r.returncode != 0:
        why = (r.stderr.strip().splitlines() or ["pip install failed"])[-1][:200]
        if (
            _in_ci()
            or "No matching distribution" not in r.stderr
            and "connection" not in r.stderr.lower()
            and "Could not find" not in r.stderr
        ):
            pytest.fail(f"pip install of the wheel failed: {r.stderr[-3000:]}")
        pytest.skip(f"package index unreachable, the wheel's dependencies cannot be installed: {why}")
    return py


@pytest.mark.slow
def test_installed_wheel_runs_every_command_in_a_fresh_venv(built, tmp_path):
    _, _, wheel = built
    py = _fresh_venv_with_wheel(wheel, tmp_path / "venv")
    exe = py.with_name("accelconf")
    installed = subprocess.run(
        [str(py), "-m", "pip", "list", "--format", "freeze"], capture_output=True, text=True
    ).stdout
    assert not re.search(r"^(torch|accelerate|deepspeed|jsonschema|deepdiff)==", installed, re.M | re.I), installed
    examples = tmp_path / "examples"  # a user's own files, away from the checkout
    shutil.copytree(ROOT / "examples", examples)
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["HF_HOME"] = str(tmp_path / "hf")
    covered = set()
    for argv, code, text in SMOKE:
        argv = [a.replace("{ex}", str(examples)) for a in argv]
        r = subprocess.run([str(exe), *argv], cwd=work, capture_output=True, text=True, env=env, timeout=120)
        covered.add(argv[0])
        out = r.stdout + r.stderr
        assert "Traceback" not in out, (argv, out[-2000:])
        if code is not None:
            assert r.returncode == code, (argv, r.returncode, out[-2000:])
        else:
            assert r.returncode in (0, 1), (argv, r.returncode, out[-2000:])
        assert text in out, (argv, out[-2000:])
    assert set(COMMANDS) <= covered | {"--version"}, set(COMMANDS) - covered
    # --help of every command works from the wheel too
    for name in COMMANDS:
        r = subprocess.run([str(exe), name, "--help"], cwd=work, capture_output=True, text=True, env=env, timeout=60)
        assert r.returncode == 0 and "exit code" in r.stdout, (name, r.stdout[-500:], r.stderr[-500:])
    # the language server starts and answers initialize
    init = (
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}'
    )
    message = b"Content-Length: %d\r\n\r\n%s" % (len(init), init)
    proc = subprocess.Popen(
        [str(exe), "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(message)
        proc.stdin.flush()
        header = proc.stdout.readline()
        assert header.startswith(b"Content-Length:"), header
    finally:
        proc.kill()
        proc.wait()


# -- --help ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_help_teaches(cli, name):
    r = cli(name, "--help")
    assert r.code == 0
    text = r.out
    assert "examples:" in text and "exit code" in text, name
    example_lines = [
        ln.strip()
        for ln in text.split("examples:", 1)[1].splitlines()
        if ln.strip().startswith("accelconf ")
        or "accelconf " in ln
        and ln.startswith("  ")
        and not ln.startswith("      ")
    ]
    assert any(f"accelconf {name}" in ln for ln in example_lines) or name == "lsp", (name, example_lines)
    description = text.split("\n\n", 2)[1]
    assert all(len(line) <= 88 for line in description.splitlines()), (name, description)
    epilog = text.split("examples:", 1)[1]
    assert all(len(line) <= 100 for line in epilog.splitlines()), (name, epilog)
    # every argument and option is described
    from accelconf.cli import build_parser

    parser = build_parser(name)
    sub = next(a for a in parser._actions if a.dest == "command").choices[name]  # type: ignore[union-attr]
    for action in sub._actions:
        if action.dest not in ("help", "stdio"):
            assert action.help, (name, action.dest)
    assert "examples/targets" not in text  # a pip user does not have the checkout's examples/


def test_options_are_offered_only_where_they_mean_something(cli):
    for name, absent in (
        ("to-yaml", ("--export", "--all-ranks", "--machine-rank")),
        ("to-json", ("--export", "--all-ranks", "--machine-rank")),
        ("to-kwargs", ("--export", "--all-ranks")),
        ("to-cli", ("--export",)),
    ):
        text = cli(name, "--help").out
        for option in absent:
            assert option not in text, (name, option)
        assert cli(name, absent[0], "x.yaml").code == 2, (name, absent[0])
    assert "--all-ranks" in cli("to-cli", "--help").out and "--export" in cli("to-env", "--help").out


def test_migrate_and_check_describe_their_arguments(cli):
    assert "FILE" in cli("migrate", "--help").out and "FSDP1 fsdp_config" in cli("migrate", "--help").out
    text = cli("check", "--help").out
    from accelconf.environment.targets import profile_names

    assert profile_names() == ["a10g-g5", "h100-node", "v100-node"]
    for name in profile_names():
        assert f"  {name} " in text
    assert "--python PATH" in text


# -- expected files are never rewritten in CI -------------------------------------------


def test_expected_files_are_not_rewritten_in_ci():
    """ACCELCONF_UPDATE_EXPECTED rewrites expected files from accelconf's own output: fine on a
    developer's machine after a deliberate change, never in CI, where it would hide every regression."""
    if _in_ci():
        assert not os.environ.get("ACCELCONF_UPDATE_EXPECTED"), (
            "ACCELCONF_UPDATE_EXPECTED is set in CI: the expected files would be rewritten, not checked"
        )


# -- reports --------------------------------------------------------------------------------------

ABSOLUTE_PATH = re.compile(
    r"(?<![\w.~])(/(?:work|home|root|tmp|Users|opt|var|mnt|private)/[^\s`'\")]+|[A-Z]:\\\\[^\s`'\"]+)"
)


def test_bench_reports_name_inputs_relative_to_the_repository():
    reports = sorted(p for p in (ROOT / "bench").iterdir() if p.suffix in (".md", ".json", ".txt"))
    assert reports, "no committed benchmark report"
    for report in reports:
        found = ABSOLUTE_PATH.findall(report.read_text(encoding="utf-8"))
        assert not found, f"{report.relative_to(ROOT)} names machine paths: {found[:5]}"


def test_bench_shown_paths_are_relative():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from common import shown  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(ROOT / "bench"))
    assert shown(ROOT / "examples" / "fsdp2.yaml") == "examples/fsdp2.yaml"
    assert shown(ROOT.parent / "shared" / "corpus" / "x.yaml") == "../shared/corpus/x.yaml"


def test_the_suite_runs_in_random_order(request):
    """pytest-random-order (test extras, `addopts` in pyproject.toml) shuffles the whole suite on every
    run, so no test leans on another having run first; `-p no:random_order` turns it off for a local
    bisect, never in CI."""
    active = request.config.pluginmanager.hasplugin("random_order")
    if not active and not _in_ci():
        pytest.skip("pytest-random-order is off (-p no:random_order or not installed): tests run in file order")
    assert active, "pytest-random-order must be on in CI (it is in the test extras)"
    assert request.config.getoption("random_order_bucket") == "global"


def test_no_committed_file_carries_merge_conflict_markers():
    tracked = _tracked_files() or [
        p.relative_to(ROOT).as_posix()
        for p in ROOT.rglob("*")
        if p.is_file() and not any(j in p.as_posix() for j in BUILD_JUNK)
    ]
    marker = re.compile(r"^(<{7} |>{7} |={7}$)", re.M)
    bad = [
        rel
        for rel in tracked
        if rel.endswith((".py", ".md", ".toml", ".yaml", ".yml", ".json", ".lua", ".js", ".sh", ".in"))
        and marker.search((ROOT / rel).read_text(encoding="utf-8", errors="replace"))
    ]
    assert not bad, bad


def test_accelerate_and_deepspeed_are_imported_only_by_data_generators():
    """The oracles never serve a command: only a ``generate()`` that records committed data imports them."""
    offenders = []
    for path in list((ROOT / "accelconf").rglob("*.py")) + list((ROOT / "lsp").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))

        def visit(node: ast.AST, function: str | None, path: Path = path) -> None:
            for child in ast.iter_child_nodes(node):
                name = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
                if isinstance(child, ast.Import):
                    mods = {a.name.split(".")[0] for a in child.names}
                elif isinstance(child, ast.ImportFrom) and child.level == 0:
                    mods = {(child.module or "").split(".")[0]}
                else:
                    mods = set()
                if mods & {"accelerate", "deepspeed"} and function != "generate":
                    offenders.append(f"{path.relative_to(ROOT)}:{child.lineno}")
                visit(child, name)

        visit(tree, None)
    assert not offenders, offenders
