"""The documentation: README length, generated reference pages fresh, every example runs as shown,
and the MkDocs site builds with --strict.

An example is a ```console block: each `$ accelconf ...` line is run from the repository root and
what follows it, up to the next `$` line, is what it must print (stdout and stderr interleaved as a
terminal shows them). A line `...` in the shown output stands for lines left out of an excerpt.
Output that depends on the machine (`accelconf env`) is shown in ```text blocks, which are not run.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _docs_pages_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_pages", ROOT / "tools" / "docs_pages.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _in_ci() -> bool:
    return bool(os.environ.get("CI"))


def test_readme_is_at_most_200_lines() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, len(lines)


def test_readme_starts_with_the_two_set_up_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first_block = re.search(r"```sh\n(.*?)```", text, re.S)
    assert first_block is not None
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines()]
    assert commands[:2] == ["make demo", "make test"]


def test_generated_pages_are_fresh() -> None:
    """Every page tools/docs_pages.py renders (the reference pages, one per rule where the checkout has
    a rule catalogue) is committed as rendered, and no page it no longer renders is left behind."""
    generated = _docs_pages_module().generated_pages()
    assert "reference/settings.md" in generated and "reference/releases.md" in generated
    stale = [
        name
        for name, text in sorted(generated.items())
        if not (DOCS / name).exists() or (DOCS / name).read_text(encoding="utf-8") != text
    ]
    assert not stale, f"stale pages under docs/: {stale[:10]}: run `make docs` (python tools/docs_pages.py --write)"
    leftover = sorted(
        str(p.relative_to(DOCS)) for p in (DOCS / "rules").glob("*.md") if str(p.relative_to(DOCS)) not in generated
    )
    assert not leftover, f"pages of rules the catalogue no longer has: {leftover}"


def test_settings_reference_has_one_row_per_registry_setting() -> None:
    from accelconf.accelerate import registry

    page = (DOCS / "reference" / "settings.md").read_text(encoding="utf-8")
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    assert len(rows) == len(registry.SETTINGS)
    for setting in registry.SETTINGS:
        assert any(row.startswith(f"| `{setting.key}` |") for row in rows), setting.path
    fsdp_version = next(r for r in rows if r.startswith("| `fsdp_version` |"))
    assert "`--fsdp_version`" in fsdp_version and "`FSDP_VERSION`" in fsdp_version and "| 1.6 | 1.15 |" in fsdp_version


def test_release_changes_page_names_every_launcher_change() -> None:
    from accelconf.accelerate.launch import CHANGES

    page = (DOCS / "reference" / "releases.md").read_text(encoding="utf-8")
    for name in CHANGES:
        assert f"(`{name}`," in page, name
    assert "### DeepSpeed 0.19.8" in page and "### accelerate 1.6" in page


# -- examples ---------------------------------------------------------------------------------


def _doc_files() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted(DOCS.rglob("*.md"))]


def _examples() -> list[tuple[str, str, list[str]]]:
    """(where, command line, shown output lines) for every `$ accelconf` line of a console block."""
    out = []
    for path in _doc_files():
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"^```console\n(.*?)^```", text, re.S | re.M):
            line_no = text.count("\n", 0, match.start()) + 2
            command, shown = None, []
            for i, line in enumerate(match.group(1).splitlines()):
                if line.startswith("$ "):
                    if command is not None:
                        out.append(command + (shown,))
                    command, shown = (f"{path.relative_to(ROOT)}:{line_no + i}", line[2:]), []
                else:
                    shown.append(line)
            if command is not None:
                out.append(command + (shown,))
    return out


def _argv_env(command: str) -> tuple[list[str], dict[str, str]]:
    words = shlex.split(command, comments=True)
    env = {}
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    assert words and words[0] == "accelconf", f"a console example runs accelconf: {command!r}"
    return [sys.executable, "-m", "accelconf", *words[1:]], env


def _matches(shown: list[str], stdout: list[str], stderr: list[str]) -> bool:
    """``shown`` is stdout and stderr interleaved, each in order; `...` skips stdout lines."""

    @functools.cache
    def match(i: int, j: int, k: int) -> bool:
        if i == len(shown):
            return j == len(stdout) and k == len(stderr)
        if shown[i] == "...":
            return any(match(i + 1, j2, k) for j2 in range(j, len(stdout) + 1))
        return (j < len(stdout) and shown[i] == stdout[j] and match(i + 1, j + 1, k)) or (
            k < len(stderr) and shown[i] == stderr[k] and match(i + 1, j, k + 1)
        )

    return match(0, 0, 0)


EXAMPLES = _examples()


def test_the_docs_have_examples_to_run() -> None:
    where = {w.split(":")[0] for w, _, _ in EXAMPLES}
    assert len(EXAMPLES) >= 20 and "README.md" in where, sorted(where)


@pytest.mark.parametrize(("where", "command", "shown"), EXAMPLES, ids=[w for w, _, _ in EXAMPLES])
def test_docs_example_prints_what_the_docs_show(where: str, command: str, shown: list[str]) -> None:
    argv, extra_env = _argv_env(command)
    env = {**os.environ, "NO_COLOR": "1", **extra_env}
    env.pop("FORCE_COLOR", None)
    r = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)
    # the one placeholder: the checkout's own path (PYTHONPATH on the DeepSpeed path, for one) is
    # shown as /path/to/accelconf
    stdout, stderr = (s.replace(str(ROOT), "/path/to/accelconf").splitlines() for s in (r.stdout, r.stderr))
    assert _matches(shown, stdout, stderr), (
        f"{where}: `{command}` (exit {r.returncode}) printed\n--- stdout\n{r.stdout}--- stderr\n{r.stderr}"
        f"--- the docs show\n" + "\n".join(shown)
    )


def test_example_matcher_interleaves_streams_and_skips_excerpts() -> None:
    assert _matches(["a", "E", "b"], ["a", "b"], ["E"])
    assert _matches(["a", "...", "d"], ["a", "b", "c", "d"], [])
    assert not _matches(["a", "b"], ["b", "a"], [])
    assert not _matches(["a"], ["a"], ["unshown warning"])


# -- the site ---------------------------------------------------------------------------------


def _mkdocs() -> Path | None:
    exe = Path(sys.executable).with_name("mkdocs")
    return exe if exe.exists() else (Path(p) if (p := shutil.which("mkdocs")) else None)


def build_site(dest: Path) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` into ``dest`` (what `make docs` runs, without the page refresh)."""
    mkdocs = _mkdocs()
    if mkdocs is None:
        if _in_ci():
            pytest.fail("mkdocs is not installed in CI (test extras)")
        pytest.skip("mkdocs is not installed (test extras: mkdocs, mkdocs-material)")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's end-of-life banner
    return subprocess.run(
        [str(mkdocs), "build", "--strict", "--site-dir", str(dest)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def test_site_builds_strict_with_every_page_in_the_nav(tmp_path: Path) -> None:
    import yaml

    r = build_site(tmp_path / "site")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "WARNING" not in r.stderr, r.stderr[-3000:]
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]

    def pages(items: list) -> list[str]:
        out: list[str] = []
        for item in items:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            out += pages(value) if isinstance(value, list) else [value]
        return out

    made_at_build = list(_docs_pages_module().SITE_COPIES)  # README.md, CONTRIBUTING.md, CHANGELOG.md
    on_disk = sorted([str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")] + made_at_build)
    rule_pages = [p for p in on_disk if p.startswith("rules/") or p == "reference/memory.md"]  # the hook adds them
    assert sorted(pages(nav) + rule_pages) == on_disk
    for page in rule_pages:
        assert (tmp_path / "site" / page.removesuffix(".md").removesuffix("index")).is_dir(), page
    assert (tmp_path / "site" / "reference" / "settings" / "index.html").exists()


def test_changelog_keeps_a_changelog_form() -> None:
    import accelconf

    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## (.*)$", text, re.M)
    assert releases[0] == "[Unreleased]"
    dated = [re.fullmatch(r"\[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})", r) for r in releases[1:]]
    assert all(dated), releases
    versions = [tuple(int(n) for n in m.group(1).split(".")) for m in dated if m]
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions)
    assert dated[0] is not None and dated[0].group(1) == accelconf.__version__
    sections = set(re.findall(r"^### (.*)$", text, re.M))
    assert sections <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}, sections
    for block in re.split(r"^###? .*$", text, flags=re.M)[1:]:
        items = block.strip("\n")
        assert "\n\n-" not in items, "a blank line inside a section's list"
