"""The command line: exit codes, output formats, bad input never gives a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_validate_clean_file_exits_0(cli):
    r = cli("validate", str(EXAMPLES / "fsdp2.yaml"))
    assert r.code == 0


def test_validate_errors_exit_1_with_file_line_col(cli):
    r = cli("validate", str(EXAMPLES / "mistakes.yaml"))
    assert r.code == 1
    assert f"{EXAMPLES / 'mistakes.yaml'}:4:18: error: unquoted `no`" in r.out
    assert "[yaml-bool-value]" in r.out and "3 errors" in r.out


def test_validate_json_format(cli):
    r = cli("validate", "--format", "json", str(EXAMPLES / "mistakes.yaml"), str(EXAMPLES / "fsdp2.yaml"))
    data = json.loads(r.out)
    assert [f["path"] for f in data["files"]] == [str(EXAMPLES / "mistakes.yaml"), str(EXAMPLES / "fsdp2.yaml")]
    first = data["files"][0]["findings"][0]
    assert set(first) >= {"rule", "severity", "message", "key", "line", "column", "suggestion"}


def test_validate_github_format(cli):
    r = cli("validate", "--format", "github", str(EXAMPLES / "mistakes.yaml"))
    assert f"::error file={EXAMPLES / 'mistakes.yaml'},line=4,col=18,title=yaml-bool-value::" in r.out


def test_strict_turns_warnings_into_exit_1(cli, tmp_path):
    f = tmp_path / "w.yaml"
    f.write_text("distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_cpu_offload: true\n")
    assert cli("validate", str(f)).code == 0
    assert cli("validate", "--strict", str(f)).code == 1


@pytest.mark.parametrize(
    "content, needle",
    [
        (b"a: [1,\n", "invalid YAML"),
        (b"", "empty"),
        (b"\x00\x01\x02", "binary"),
        (b"a: !!python/object/apply:os.system [ls]\n", "!!python/object/apply:os.system"),
        (b'{"a": ', "invalid JSON"),
    ],
)
def test_bad_input_exits_2_and_other_files_still_run(cli, tmp_path, content, needle):
    bad = tmp_path / ("bad.json" if content.startswith(b"{") else "bad.yaml")
    bad.write_bytes(content)
    r = cli("validate", str(bad), str(EXAMPLES / "mistakes.yaml"))
    assert r.code == 2
    assert needle in r.out and "Traceback" not in r.out + r.err
    assert "mistakes.yaml:4:18" in r.out  # the good file was still checked


def test_missing_file_and_directory_exit_2(cli, tmp_path):
    assert cli("validate", str(tmp_path / "nope.yaml")).code == 2
    assert cli("validate", str(tmp_path)).code == 2
    assert cli("fmt", str(tmp_path / "nope.yaml")).code == 2


def test_stdin(cli):
    r = cli("validate", "-", stdin=b"distributed_type: multi_gpu\nnum_processes: 2\n")
    assert r.code == 1 and "<stdin>:1:19" in r.out


def test_fmt_check_diff_and_in_place(cli, tmp_path):
    f = tmp_path / "c.yaml"
    original = "# keep me\ndistributed_type: multi_gpu\nnum_processes: 2\nmixed_precision: BF16  # precision\n"
    f.write_text(original)
    r = cli("fmt", "--check", str(f))
    assert r.code == 1 and "would reformat" in r.out
    r = cli("fmt", "--diff", str(f))
    assert "-distributed_type: multi_gpu\n+distributed_type: MULTI_GPU" in r.out
    assert f.read_text() == original
    r = cli("fmt", "--in-place", str(f))
    assert r.code == 0
    assert (
        f.read_text()
        == "# keep me\ndistributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: bf16  # precision\n"
    )
    assert cli("fmt", "--check", str(f)).code == 0
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".accelconf-")]  # no temp file left


def test_fmt_in_place_leaves_unparseable_file_untouched(cli, tmp_path):
    f = tmp_path / "c.yaml"
    f.write_bytes(b"a: [1,\n")
    assert cli("fmt", "-i", str(f)).code == 2
    assert f.read_bytes() == b"a: [1,\n"


def test_fmt_to_stdout_keeps_bom_and_crlf(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_bytes(b"\xef\xbb\xbfdistributed_type: 'NO'\r\nmixed_precision: BF16\r\n")
    out = subprocess.run([sys.executable, "-m", "accelconf", "fmt", str(f)], capture_output=True, check=True).stdout
    assert out == b"\xef\xbb\xbfdistributed_type: 'NO'\r\nmixed_precision: bf16\r\n"


def test_migrate_command(cli, tmp_path):
    f = tmp_path / "f.yaml"
    f.write_text(
        "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_sharding_strategy: SHARD_GRAD_OP  # zero2\n"
    )
    r = cli("migrate", "--to", "fsdp2", "--diff", str(f))
    assert "+  fsdp_reshard_after_forward: false" in r.out and r.code == 0
    assert "fsdp_reshard_after_forward: false" in r.err


def test_schema_command(cli):
    r = cli("schema", "accelerate", "--accelerate-version", "1.4")
    schema = json.loads(r.out)
    assert schema["$id"] == "urn:accelconf:schema:accelerate-config:1.4"


def test_help_teaches(cli):
    r = cli("--help")
    assert "examples:" in r.out and "exit codes" in r.out
    r = cli("fmt", "--help")
    assert "--check" in r.out and "example" in r.out


def test_validate_does_not_import_heavy_modules():
    code = (
        "import sys; from accelconf.cli import main; main(['validate', {!r}]); "
        "bad = [m for m in ('torch', 'accelerate', 'deepspeed', 'pygls') if m in sys.modules]; print(bad)"
    ).format(str(EXAMPLES / "fsdp2.yaml"))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"}
    ).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_no_color_unless_tty(cli):
    r = cli("validate", str(EXAMPLES / "mistakes.yaml"))
    assert "\033[" not in r.out
    r = cli("validate", "--color", "always", str(EXAMPLES / "mistakes.yaml"))
    assert "\033[31m" in r.out
