"""The GitHub Action (action.yml): its inputs reach its script, and the script (tools/action.sh), run
here as the runner runs it, validates the globs it is given with the exit code and annotations of
`accelconf validate`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "action.sh"


@pytest.fixture(scope="module")
def action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))


def test_every_input_the_steps_use_is_declared_and_every_declared_one_is_used(action):
    text = (ROOT / "action.yml").read_text(encoding="utf-8")
    used = set(re.findall(r"inputs\.([\w-]+)", text))
    assert used == set(action["inputs"]), (used, set(action["inputs"]))
    assert action["runs"]["using"] == "composite"


def test_the_validate_step_passes_what_the_script_reads(action):
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "validate")
    assert step["run"] == 'bash "$GITHUB_ACTION_PATH/tools/action.sh"'
    read = set(re.findall(r"\$\{?(INPUT_\w+)", SCRIPT.read_text(encoding="utf-8")))
    assert read == set(step["env"]), (read, set(step["env"]))
    assert action["outputs"]["exit-code"]["value"] == "${{ steps.validate.outputs.exit-code }}"


def _run(tmp_path: Path, **inputs: str) -> tuple[int, str, str]:
    """tools/action.sh from the repository root, with this interpreter's accelconf as `accelconf`."""
    shim = tmp_path / "bin"
    shim.mkdir(exist_ok=True)
    (shim / "accelconf").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m accelconf "$@"\n')
    (shim / "accelconf").chmod(0o755)
    out_file = tmp_path / "github_output"
    out_file.unlink(missing_ok=True)
    env = {
        **os.environ,
        "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_OUTPUT": str(out_file),
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "lsp")]),
        "NO_COLOR": "1",
    }
    env.update({f"INPUT_{k.upper()}": v for k, v in inputs.items()})
    r = subprocess.run(["bash", str(SCRIPT)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    recorded = out_file.read_text() if out_file.exists() else ""
    assert recorded == f"exit-code={r.returncode}\n" or r.returncode == 2, recorded
    return r.returncode, r.stdout, r.stderr


def test_the_examples_give_annotations_and_fail_on_the_errors_in_mistakes_yaml(tmp_path):
    code, out, err = _run(tmp_path, files="examples/*.yaml examples/*.json", format="github")
    assert code == 1, out + err
    assert "::error file=examples/mistakes.yaml,line=3,col=19,title=enum-case::" in out, out
    assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in out.splitlines()), out


def test_a_clean_file_passes_with_no_annotation(tmp_path):
    assert _run(tmp_path, files="examples/fsdp2.yaml", format="github") == (0, "", "")


def test_double_star_crosses_folders(tmp_path):
    direct = _run(tmp_path, files="examples/memory/*.yaml examples/memory/*/*.json", format="github")
    deep = _run(tmp_path, files="examples/memory/**/*.yaml examples/memory/**/*.json", format="github")
    assert deep == direct


def test_no_matching_file_is_a_warning_and_passes(tmp_path):
    code, out, _ = _run(tmp_path, files="nowhere/**/*.yaml", format="github")
    assert (code, out) == (0, "::warning title=accelconf::no file matches 'nowhere/**/*.yaml'\n")


def test_an_unknown_format_is_a_usage_error(tmp_path):
    code, out, _ = _run(tmp_path, files="examples/fsdp2.yaml", format="junit")
    assert code == 2 and "format must be github or sarif" in out


def test_extra_arguments_reach_validate(tmp_path):
    """mistakes.yaml's only errors, disabled: it passes, the warning stays, and --strict fails on it."""
    off = "--disable enum-case --disable yaml-bool-value --disable invalid-type"
    code, out, _ = _run(tmp_path, files="examples/mistakes.yaml", format="github", args=off)
    assert code == 0 and "::error" not in out and "::warning" in out, out
    assert _run(tmp_path, files="examples/mistakes.yaml", format="github", args=off + " --strict")[0] == 1


def test_sarif_format_writes_the_report_file_code_scanning_uploads(tmp_path):
    import json

    out = tmp_path / "accelconf.sarif"
    code, stdout, _ = _run(tmp_path, files="examples/mistakes.yaml", format="sarif", sarif_file=str(out))
    assert code == 1 and f"SARIF written to {out}" in stdout, stdout
    report = json.loads(out.read_text())
    assert report["version"] == "2.1.0"
    results = report["runs"][0]["results"]
    assert {"enum-case", "yaml-bool-value", "invalid-type"} <= {r["ruleId"] for r in results}
    assert all(
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "examples/mistakes.yaml" for r in results
    )
