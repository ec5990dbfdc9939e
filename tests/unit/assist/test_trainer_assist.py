"""Editor help for Trainer / TRL arguments files and ``fsdp_config``, checked whole: the completion
list at a position is exactly what the target release takes (fields, TRL fields, ``fsdp_config`` keys
in both spellings, choices), and hover over every field says what the releases data says. The
release's own code judges the values offered in tests/oracle/test_trainer_assist_oracle.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from accelconf.assist.trainer import (
    arguments_fields,
    complete_trainer,
    field_markdown,
    field_values,
    fsdp_key_markdown,
    hover_trainer,
    release_setting,
)
from accelconf.text.scalars import yaml_scalar
from accelconf.trainer import fields, fsdp, releases

ROOT = Path(__file__).resolve().parents[3]
HEAD = "output_dir: out\n"


def _labels(text: str, line: int, col: int, kind: str = "trainer-args", **kw: Any) -> set[str]:
    return {c.label for c in complete_trainer(text, line, col, kind, **kw)}


@pytest.mark.parametrize("release", releases.RELEASES)
def test_top_level_completion_is_exactly_the_fields_the_release_takes(release: str) -> None:
    got = _labels(HEAD + "\n", 1, 0, transformers_version=release)
    assert got == set(releases.fields(release)) - {"output_dir"}
    for name in releases.all_field_names() - set(releases.fields(release)):
        assert name not in got  # a field the release removed (or does not have yet) is never offered


def test_completion_leaves_out_the_fields_already_given_and_replaces_the_typed_word() -> None:
    text = HEAD + "learning_rate: 1.0e-5\nlr_sch\n"
    cands = complete_trainer(text, 2, 6, "trainer-args")
    assert "learning_rate" not in {c.label for c in cands} and "output_dir" not in {c.label for c in cands}
    sched = next(c for c in cands if c.label == "lr_scheduler_type")
    assert (sched.start, sched.end, sched.insert) == (0, 6, "lr_scheduler_type: ")
    f = releases.fields()["lr_scheduler_type"]
    assert sched.detail == f"{f.type} = {yaml_scalar(f.default)}"


def test_a_file_with_a_trl_field_completes_the_fields_of_the_trl_classes_that_take_it() -> None:
    trl = releases.TRL_NEWEST
    text = HEAD + "dataset_text_field: text\n\n"
    classes = fields.trl_classes_for({"output_dir", "dataset_text_field"}, None, trl)
    assert classes == ("SFTConfig",)
    want = set(releases.trl_fields("SFTConfig", trl, releases.NEWEST)) - {"output_dir", "dataset_text_field"}
    assert _labels(text, 2, 0, trl_version=trl) == want
    cands = {c.label: c for c in complete_trainer(text, 2, 0, "trainer-args", trl_version=trl)}
    assert cands["packing"].detail.endswith("· SFTConfig")
    # a key several classes take keeps every one of them
    both = fields.trl_classes_for({"beta"}, None, trl)
    assert len(both) > 1 and all("beta" in releases.trl_fields(c, trl) for c in both)


def _yaml_values(text: str, line: int, col: int, **kw: Any) -> list[Any]:
    """The values completion offers, read back as PyYAML (HfArgumentParser's reader) reads them."""
    return [yaml.safe_load(c.insert) for c in complete_trainer(text, line, col, "trainer-args", **kw)]


@pytest.mark.parametrize("release", [releases.RELEASES[0], "5.0", releases.NEWEST])
def test_value_completion_offers_the_choices_and_booleans_of_every_field(release: str) -> None:
    for name, f in releases.fields(release).items():
        line = f"{name}: "
        got = _yaml_values(line + "\n", 0, len(line), transformers_version=release)
        if name == "fsdp":  # FSDP2 (5.x without a version) takes two of the sharding strategies
            fsdp2 = "version" in fields.fsdp_keys(release)
            dropped = set(fsdp.SHARDING) - set(fsdp.FSDP2_SHARDING) if fsdp2 else set()
            assert got[0] is True and set(got[1:]) == set(fsdp.OPTIONS) - dropped, release
        elif f.base_type == "bool":
            assert got == [True, False], name
        else:
            assert got == list(f.choices or ()), name  # 'no' quoted: a bare no would be False


def test_fsdp_config_keys_are_the_ones_the_release_reads_in_both_spellings_fsdp_version_aware() -> None:
    for release in releases.RELEASES:
        keys = fields.fsdp_keys(release)
        for version_line, version in (("", 2), ("  version: 1\n", 1)):
            text = "fsdp: true\nfsdp_config:\n" + version_line + "  \n"
            line = text.count("\n") - 1
            got = _labels(text, line, 2, transformers_version=release)
            # 4.x reads no `version`: it builds FSDP1, every key it reads is offered
            v = version if "version" in keys else 1
            read = {k for k in keys if v == 1 or k not in fields.FSDP1_ONLY} - ({"version"} if version_line else set())
            assert got == read | {"fsdp_" + k for k in read}, (release, version)


def test_fsdp_config_json_completes_keys_and_a_key_given_in_one_spelling_is_not_offered_in_the_other() -> None:
    text = '{\n  "fsdp_cpu_offload": true,\n  ""\n}\n'
    got = _labels(text, 2, 3, kind="fsdp-config")
    assert "cpu_offload" not in got and "fsdp_cpu_offload" not in got
    assert {"reshard_after_forward", "fsdp_reshard_after_forward"} <= got
    assert not got & fields.FSDP1_ONLY  # no version: FSDP2
    values = complete_trainer('{\n  "version": 1,\n  "backward_prefetch": \n}\n', 2, 23, "fsdp-config")
    assert [json.loads(c.insert) for c in values] == list(fsdp.key_values("backward_prefetch", 1))


# -- hover ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("release", [releases.RELEASES[0], releases.NEWEST])
def test_hover_over_every_field_says_its_type_default_help_and_releases(release: str) -> None:
    for name, f in releases.fields(release).items():
        md = hover_trainer(f"{name}: x\n", 0, 1, "trainer-args", transformers_version=release)
        assert md is not None and md.startswith(f"**{name}** · {releases.field_class(name)} · {f.type}"), name
        default = "none: required" if f.required else f"`{yaml_scalar(f.default)}`"
        assert f"- **Default:** {default}" in md, name
        assert (releases.field_help(name) or "") in md, name
        history = releases.field_history(name)
        assert f"transformers {history[0].since}" in md, name
        if history[-1].until is not None:
            assert f"removed in {history[-1].until}" in md, name


def test_hover_over_a_removed_field_names_the_release_that_removed_it() -> None:
    gone = [n for n in releases.all_field_names() if releases.removed(n)]
    assert gone
    for name in gone:
        last, first_without = releases.removed(name) or ("", "")
        md = hover_trainer(f"{name}: 1\n", 0, 1, "trainer-args") or ""
        assert f"removed in transformers {first_without} (last in {last})" in md, name


def test_hover_over_a_renamed_field_names_its_replacement() -> None:
    md = field_markdown("evaluation_strategy", None, None) or ""
    assert "write `eval_strategy`" in md and "- **Renamed:** `eval_strategy` from transformers 4.51" in md
    # in a release that still has it, the rename to come is said too
    old = field_markdown("no_cuda", "4.57", None) or ""
    assert "Not a field" not in old and "- **Renamed:** `use_cpu` from transformers 5.0" in old
    assert "- **Replaced by:** `optim`" in (field_markdown("adafactor", "4.57", None) or "")
    assert "Renamed" not in (field_markdown("use_ipex", None, None) or "")


def test_hover_over_fsdp_config_keys_says_what_transformers_does_with_them() -> None:
    for version in (1, 2):
        for key in fields.fsdp_keys():
            md = fsdp_key_markdown(key, version, None)
            sets = fsdp.plugin_fields_set(key, version)
            for f in sets:
                assert f"`FullyShardedDataParallelPlugin.{f}`" in md
            if key in fields.FSDP1_ONLY:
                assert bool(sets) == (version == 1)
                assert ("Ignored under FSDP2" in md) == (version == 2)
            assert "Read as" in fsdp_key_markdown("fsdp_" + key, version, None)
    text = "fsdp: true\nfsdp_config:\n  fsdp_offload_params: true\n  use_orig_params: true\n"
    offload = hover_trainer(text, 2, 4, "trainer-args") or ""
    assert "accelerate's name" in offload and "`cpu_offload`" in offload and "trainer-fsdp-accelerate-name" in offload
    assert "Ignored under FSDP2" in (hover_trainer(text, 3, 4, "trainer-args") or "")
    assert "FullyShardedDataParallelPlugin.use_orig_params" in (
        hover_trainer(text.replace("fsdp_config:\n", "fsdp_config:\n  version: 1\n"), 4, 4, "trainer-args") or ""
    )


# -- settings and start-up ------------------------------------------------------------------------


def test_release_settings_name_a_known_release_or_fall_back_to_the_default_with_a_message() -> None:
    assert release_setting("transformersVersion", f"{releases.NEWEST}.0") == (releases.NEWEST, None)
    assert release_setting("trlVersion", releases.TRL_NEWEST) == (releases.TRL_NEWEST, None)
    assert release_setting("transformersVersion", None) == (None, None)
    minor, problem = release_setting("transformersVersion", "3.1")
    assert minor is None and problem is not None and "3.1" in problem and releases.NEWEST in problem
    assert release_setting("trlVersion", 5)[1] is not None


def test_an_older_release_setting_completes_that_releases_fields() -> None:
    old = releases.RELEASES[0]
    gone = [n for n in releases.fields(old) if n not in releases.fields(releases.NEWEST)]
    assert gone and set(gone) <= _labels(HEAD + "\n", 1, 0, transformers_version=old)
    assert not set(gone) & _labels(HEAD + "\n", 1, 0, transformers_version=releases.NEWEST)


def test_completion_and_hover_import_no_training_library() -> None:
    code = (
        "import sys\n"
        "from accelconf_lsp import server\n"
        "from accelconf.assist.trainer import complete_trainer, hover_trainer\n"
        "server.parse_settings({'transformersVersion': '4.57', 'trlVersion': '1.16'})\n"
        "text = 'output_dir: o\\nfsdp: true\\nfsdp_config:\\n  cpu_offload: true\\n'\n"
        "assert complete_trainer(text + 'lr\\n', 4, 2, 'trainer-args')\n"
        "assert complete_trainer(text + '  \\n', 4, 2, 'trainer-args')\n"
        "assert hover_trainer(text, 3, 4, 'trainer-args') and hover_trainer(text, 1, 1, 'trainer-args')\n"
        "print(sorted(m for m in ('transformers', 'torch', 'trl', 'accelerate', 'deepspeed') if m in sys.modules))\n"
    )
    env = {"PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'lsp'}"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={**os.environ, **env}
    )
    assert out.stdout.strip() == "[]"


def test_field_values_of_fsdp_under_fsdp1_include_every_sharding_strategy() -> None:
    f = releases.fields()["fsdp"]
    assert set(field_values(f, 1)) == {True, *fsdp.OPTIONS}
    assert arguments_fields(frozenset(), None, None)["fsdp"] == (f, releases.SEQ2SEQ_CLASS)


def test_a_json_arguments_file_completes_quoted_fields_and_json_values() -> None:
    text = '{\n  "output_dir": "out",\n  ""\n}\n'
    cands = complete_trainer(text, 2, 3, "trainer-args", path="args.json")
    assert {c.label for c in cands} == set(releases.fields()) - {"output_dir"}
    assert next(c for c in cands if c.label == "bf16").insert == '"bf16": '
    values = complete_trainer('{\n  "save_strategy": ""\n}\n', 1, 20, "trainer-args", path="args.json")
    assert [json.loads(c.insert) for c in values] == list(releases.fields()["save_strategy"].choices or ())


def test_the_fsdp_version_of_a_half_typed_fsdp_config_is_read_from_its_text() -> None:
    """A key being typed breaks the parse; the version written in the text still decides."""
    text = '{\n  "output_dir": "out",\n  "fsdp_config": {\n    "fsdp_version": 1,\n    ""\n  }\n}\n'
    assert (hover_trainer(text, 3, 7, "trainer-args", path="args.json") or "").startswith(
        "**fsdp_version** · `fsdp_config` · FSDP1"
    )
    got = _labels(text, 4, 5, path="args.json")
    assert fields.FSDP1_ONLY <= got  # FSDP1: its own keys are offered


def test_the_hover_shown_in_the_editors_page_is_what_hover_says() -> None:
    page = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    text = "output_dir: out\nfsdp: true\nfsdp_config:\n  use_orig_params: true\n"
    md = hover_trainer(text, 3, 4, "trainer-args", transformers_version=releases.NEWEST) or ""
    assert f"```\n{md}\n```" in page
    assert f"(transformers {releases.NEWEST}, no `version`: FSDP2)" in page
