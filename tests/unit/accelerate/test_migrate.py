"""accelconf.accelerate.migrate: FSDP1 -> FSDP2 as ``accelerate to-fsdp2`` does it, with edits that keep
the rest of the file byte for byte, and a note for every change or loss."""

from __future__ import annotations

import json

import yaml

from accelconf.accelerate.migrate import migrate_text
from accelconf.accelerate.model import from_document
from accelconf.text.document import load_text

FSDP1 = """# my config
distributed_type: FSDP
fsdp_config:
  fsdp_sharding_strategy: SHARD_GRAD_OP  # zero-2 like
  fsdp_backward_prefetch: BACKWARD_PRE
  fsdp_state_dict_type: LOCAL_STATE_DICT
num_processes: 8
"""


def test_fsdp1_to_fsdp2() -> None:
    out, notes = migrate_text(FSDP1, "x.yaml")
    assert out == (
        "# my config\ndistributed_type: FSDP\nfsdp_config:\n  fsdp_version: 2\n"
        "  fsdp_reshard_after_forward: false          # zero-2 like\n  fsdp_state_dict_type: SHARDED_STATE_DICT\n"
        "num_processes: 8\n"
    )
    assert notes == [
        "fsdp_sharding_strategy: SHARD_GRAD_OP -> fsdp_reshard_after_forward: false",
        "removed fsdp_backward_prefetch: FSDP2 has no backward prefetch setting (the plugin forces it to None)",
        "fsdp_state_dict_type: LOCAL_STATE_DICT is not supported by FSDP2 -> SHARDED_STATE_DICT",
        "fsdp_version: 2 (needs torch 2.6 or newer)",
    ]
    cfg = from_document(load_text(out, "x.yaml"))
    assert cfg.fsdp_version() == 2 and cfg.get("fsdp_config.fsdp_reshard_after_forward") is False


def test_nothing_to_do() -> None:
    done = "distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 2\n"
    assert migrate_text(done) == (done, ["already FSDP2 (fsdp_version: 2); nothing to do"])
    assert migrate_text("a: 1\n") == ("a: 1\n", ["no fsdp_config to migrate"])


def test_hybrid_shard_loses_meaning_and_says_so() -> None:
    _, notes = migrate_text("distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: HYBRID_SHARD\n")
    assert any(n.startswith("warning: HYBRID_SHARD shards within a node") for n in notes)


def test_flow_style_yaml_is_left_for_the_user() -> None:
    out, notes = migrate_text("distributed_type: MULTI_GPU\nfsdp_config: {fsdp_sharding_strategy: FULL_SHARD}\n")
    assert out == "distributed_type: MULTI_GPU\nfsdp_config: {fsdp_reshard_after_forward: true}\n"
    assert notes[0].startswith("note: distributed_type is 'MULTI_GPU', not FSDP")
    assert "fsdp_config is in flow style: add fsdp_version: 2 by hand" in notes
    assert yaml.safe_load(out) == {"distributed_type": "MULTI_GPU", "fsdp_config": {"fsdp_reshard_after_forward": True}}


def test_json_on_one_line_and_on_many_stays_json() -> None:
    one = '{"distributed_type": "FSDP", "fsdp_config": {"fsdp_sharding_strategy": "FULL_SHARD"}}'
    out, _ = migrate_text(one, "x.json")
    assert json.loads(out) == {
        "distributed_type": "FSDP",
        "fsdp_config": {"fsdp_version": 2, "fsdp_reshard_after_forward": True},
    }
    many = '{\n  "distributed_type": "FSDP",\n  "fsdp_config": {\n    "fsdp_sharding_strategy": "FULL_SHARD"\n  }\n}\n'
    out, _ = migrate_text(many, "x.json")
    assert out == (
        '{\n  "distributed_type": "FSDP",\n  "fsdp_config": {\n    "fsdp_version": 2,\n'
        '    "fsdp_reshard_after_forward": true\n  }\n}\n'
    )


def test_a_release_without_fsdp2_gets_the_file_back_with_the_reason() -> None:
    """accelerate before 1.6 has no --fsdp_version (commands/launch.py): fsdp_version: 2 would be ignored
    there and FSDP1 would run without the removed keys (tests/oracle/test_release_matrix.py launches both)."""
    out, notes = migrate_text(FSDP1, "x.yaml", version="1.5")
    assert out == FSDP1
    assert notes == ["accelerate 1.5 has no FSDP2 (fsdp_version is read from 1.6 on): nothing migrated"]
    assert migrate_text(FSDP1, "x.yaml", version="1.6")[0] == migrate_text(FSDP1, "x.yaml")[0] != FSDP1


def test_cli_migrate_for_an_older_release(tmp_path, capsys) -> None:
    from accelconf.cli import main

    path = tmp_path / "fsdp.yaml"
    path.write_text(FSDP1)
    assert main(["migrate", "--to", "fsdp2", "--accelerate-version", "1.2", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out == FSDP1 and "has no FSDP2" in err
