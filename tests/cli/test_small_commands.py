"""The small commands' wiring: what ``schema`` prints or writes, and what ``lsp`` starts the server
with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def test_schema_prints_the_accelerate_schema_by_default_and_deepspeed_on_request(cli) -> None:
    from accelconf.accelerate.schema import accelerate_schema, dumps
    from accelconf.deepspeed.schema import deepspeed_schema

    default = cli("schema")
    assert (default.code, default.out) == (0, dumps(accelerate_schema(None)))
    assert cli("schema", "accelerate").out == default.out
    old = cli("schema", "--accelerate-version", "0.20")
    assert old.code == 0 and old.out == dumps(accelerate_schema("0.20")) != default.out
    ds = cli("schema", "deepspeed")
    assert (ds.code, ds.out) == (0, dumps(deepspeed_schema()))
    assert json.loads(ds.out)["type"] == "object" and ds.out != default.out
    assert cli("schema", "hydra").code == 2


def test_schema_write_names_each_file_it_wrote(cli, tmp_path: Path) -> None:
    from accelconf.schemas import write_all

    r = cli("schema", "--write", str(tmp_path / "s"))
    assert r.code == 0 and r.out == ""
    written = sorted(str(p) for p in (tmp_path / "s").rglob("*") if p.is_file())
    assert written and sorted(r.err.splitlines()) == [f"wrote {p}" for p in written]
    assert list(write_all(str(tmp_path / "s"))) == []  # a second write finds nothing to change
    again = cli("schema", "--write", str(tmp_path / "s"))
    assert (again.code, again.err) == (0, "")


@pytest.mark.parametrize(
    "argv, expected",
    [
        ((), {"tcp": False, "host": "127.0.0.1", "port": 2087}),
        (("--stdio",), {"tcp": False, "host": "127.0.0.1", "port": 2087}),
        (("--tcp", "--host", "0.0.0.0", "--port", "2090"), {"tcp": True, "host": "0.0.0.0", "port": 2090}),
    ],
)
def test_lsp_starts_the_server_with_its_options(cli, monkeypatch, argv, expected) -> None:
    import accelconf_lsp

    started = []
    monkeypatch.setattr(accelconf_lsp, "main", lambda **kw: started.append(kw) or 0)
    assert cli("lsp", *argv).code == 0
    assert started == [expected] and type(started[0]["tcp"]) is bool


def test_preflight_hands_the_node_its_rank_as_a_number(cli, monkeypatch, tmp_path: Path) -> None:
    from accelconf.preflight import node

    seen = []
    monkeypatch.setattr(node, "run", lambda args: seen.append(args.machine_rank) or 0)
    config = tmp_path / "c.yaml"
    config.write_text("distributed_type: MULTI_GPU\nnum_processes: 2\n")
    assert cli("preflight", str(config), "--machine-rank", "1").code == 0 and seen == [1]
    assert cli("preflight", str(config), "--machine-rank", "one").code == 2
    assert cli("preflight", str(config)).code == 2  # the rank is required
