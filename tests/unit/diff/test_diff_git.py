"""``accelconf diff --git-driver`` as git's external diff driver, in a real temporary repository.

Setup under test (docs/diff.md documents the same two steps)::

    echo '*.yaml diff=accelconf' >> .gitattributes
    git config diff.accelconf.command "accelconf diff --git-driver"

git runs the command with seven arguments (path old-file old-hex old-mode new-file new-hex
new-mode); the driver must print the change in meaning and exit 0.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CASES = Path(__file__).resolve().parents[2] / "data" / "diff"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(repo),
        "NO_COLOR": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    env.pop("GIT_EXTERNAL_DIFF", None)
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q")
    (tmp_path / ".gitattributes").write_text("*.yaml diff=accelconf\n*.json diff=accelconf\n")
    driver = f"{shlex.quote(sys.executable)} -m accelconf diff --git-driver --accelerate-version 1.15"
    _git(tmp_path, "config", "diff.accelconf.command", driver)
    return tmp_path


def _commit(repo: Path, name: str, source: Path) -> None:
    shutil.copyfile(source, repo / name)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", f"{name} from {source.parent.name}")


def test_git_diff_shows_meaning(repo: Path) -> None:
    _commit(repo, "config.yaml", CASES / "fsdp1-to-fsdp2" / "a.yaml")
    shutil.copyfile(CASES / "fsdp1-to-fsdp2" / "b.yaml", repo / "config.yaml")
    out = _git(repo, "diff")
    assert out.startswith("diff --accelconf a/config.yaml b/config.yaml\n")
    assert (
        "fsdp_sharding_strategy: FULL_SHARD (a/config.yaml:6)  ->  fsdp_reshard_after_forward: false (b/config.yaml:6)"
    ) in out
    assert "less sharding, more memory per GPU" in out
    assert "@@" not in out  # no text hunks: the meaning replaces them


def test_git_diff_of_a_pure_rewrite_says_equivalent(repo: Path) -> None:
    _commit(repo, "config.yaml", CASES / "reorder-quote-comments" / "a.yaml")
    shutil.copyfile(CASES / "reorder-quote-comments" / "b.yaml", repo / "config.yaml")
    assert _git(repo, "diff", "--no-ext-diff").count("\n") > 5  # the text did change
    out = _git(repo, "diff")
    assert "equivalent: no difference in meaning" in out


def test_git_log_across_commits_and_new_files(repo: Path) -> None:
    _commit(repo, "ds.json", CASES / "deepspeed-json-auto" / "a.json")
    _commit(repo, "ds.json", CASES / "deepspeed-json-auto" / "b.json")
    out = _git(repo, "log", "-p", "--ext-diff", "--format=commit %s")
    assert "gradient_clipping: auto (a/ds.json:10)  ->  1.0 (b/ds.json:5)" in out
    assert "new file" in out  # the first commit adds the file: a plain text diff follows
    assert '+  "bf16": {"enabled": "auto"},' in out


def test_unreadable_side_falls_back_to_text(repo: Path) -> None:
    (repo / "broken.yaml").write_text("a: [1, 2\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "broken")
    (repo / "broken.yaml").write_text("a: [1, 2, 3]\n")
    out = _git(repo, "diff")
    assert "not a config accelconf can read" in out
    assert "+a: [1, 2, 3]" in out


def test_other_yaml_files_get_a_text_diff(repo: Path) -> None:
    (repo / "workflow.yaml").write_text("on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "workflow")
    (repo / "workflow.yaml").write_text("on: push\njobs:\n  test:\n    runs-on: ubuntu-24.04\n")
    out = _git(repo, "diff")
    assert "not an accelerate or DeepSpeed config" in out
    assert "+    runs-on: ubuntu-24.04" in out
