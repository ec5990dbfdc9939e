"""explain() (the precedence model) is the library's: accelconf.precedence, public as accelconf.explain."""

from __future__ import annotations

import accelconf
from accelconf.api import read_config
from accelconf.text.document import load_text

CONFIG = "distributed_type: FSDP\nnum_processes: 2\nmixed_precision: bf16\nfsdp_config:\n  fsdp_version: 2\n"


def test_public_explain_says_where_each_value_comes_from() -> None:
    rows = {r.setting: r for r in accelconf.explain(load_text(CONFIG, "c.yaml"), version="1.15")}
    assert rows["mixed_precision"].source == "config" and rows["mixed_precision"].where == "c.yaml:3"
    assert rows["mixed_precision"].env == "ACCELERATE_MIXED_PRECISION"
    assert rows["num_processes"].value == 2


def test_an_explicit_flag_beats_a_nested_file_key_from_the_release_that_says_so() -> None:
    from accelconf.formats import read

    cfg = read_config(load_text(CONFIG + "  fsdp_offload_params: false\n", "c.yaml"))
    flags = read("--fsdp_offload_params true", "cli", "--launch-args", "1.15")
    new = {r.setting: r for r in accelconf.explain(cfg, version="1.5", cli=flags)}
    old = {r.setting: r for r in accelconf.explain(cfg, version="1.4", cli=flags)}
    assert new["fsdp_config.fsdp_offload_params"].source == "cli"
    assert old["fsdp_config.fsdp_offload_params"].source == "config"
