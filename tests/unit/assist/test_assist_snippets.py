"""The new-section snippets of completion: the snippet (LSP syntax) and the plain text insert the same
block, the block is settings accelerate knows with values it takes at that release, and validate
finds no error in a config made of it."""

from __future__ import annotations

import re

import pytest

from accelconf import assist
from accelconf.accelerate import registry
from accelconf.accelerate.validate import validate_document
from accelconf.text.document import load_text

CHOICE, PLACEHOLDER = re.compile(r"\$\{\d+\|([^,|]*)[^}]*\|\}"), re.compile(r"\$\{\d+:([^}]*)\}")


def _resolved(snippet: str) -> str:
    """The snippet as a client inserts it when every choice and placeholder is left at its first value."""
    return PLACEHOLDER.sub(r"\1", CHOICE.sub(r"\1", snippet)).replace("$0", "")


def _snippets(version: str | None) -> dict[str, assist.Candidate]:
    text = "distributed_type: FSDP\nfs"
    return {c.filter or "": c for c in assist.complete(text, 1, 2, version=version) if c.kind == "snippet"}


@pytest.mark.parametrize("version", [None, "1.5"])
@pytest.mark.parametrize("section", ["fsdp_config", "deepspeed_config"])
def test_a_snippet_is_its_plain_text_and_settings_of_the_release(version: str | None, section: str) -> None:
    c = _snippets(version)[section]
    assert c.snippet is not None and _resolved(c.snippet) == c.insert
    assert (c.start, c.end, c.sort, c.label) == (0, 2, "2", f"{section} block")
    assert c.doc.endswith(f"\n\n```yaml\n{c.insert}\n```") and f"`{section}`" in c.doc
    block = load_text(c.insert).data
    assert list(block) == [section]
    release = registry.resolve_version(version)
    for key, value in block[section].items():
        s, how = registry.lookup(section, key, release)
        assert s is not None and how == "canonical" and s.exists_in(release), key
        assert not s.choices or value in s.choices, (key, value)
    kind = "FSDP" if section == "fsdp_config" else "DEEPSPEED"
    doc = load_text(f"distributed_type: {kind}\nnum_processes: 2\n{c.insert}\n")
    assert [f for f in validate_document(doc, accelerate_version=release) if f.severity == "error"] == []


def test_fsdp_snippet_is_fsdp2_where_the_release_has_it_and_deepspeed_s_details() -> None:
    new, old = _snippets(None), _snippets("1.5")
    assert load_text(new["fsdp_config"].insert).data["fsdp_config"]["fsdp_version"] == 2
    assert "fsdp_version" not in old["fsdp_config"].insert and "FULL_SHARD" in old["fsdp_config"].insert
    assert (new["fsdp_config"].detail, new["deepspeed_config"].detail) == ("new FSDP section", "new DeepSpeed section")
    assert "FSDP2 where the accelerate version has it" in new["fsdp_config"].doc
    # each choice lists the value the plain text has first, then the others the setting takes
    assert "${1|2,3,1,0|}" in new["deepspeed_config"].snippet  # type: ignore[operator]
    assert "${1|FULL_SHARD,SHARD_GRAD_OP,HYBRID_SHARD,NO_SHARD|}" in old["fsdp_config"].snippet  # type: ignore[operator]


@pytest.mark.parametrize("version", [None, "1.5"])
def test_every_choice_a_snippet_offers_is_a_value_the_setting_takes(version: str | None) -> None:
    release = registry.resolve_version(version)
    for section, c in _snippets(version).items():
        for line in (c.snippet or "").splitlines()[1:]:
            key, _, rest = PLACEHOLDER.sub("", line).strip().partition(": ")
            group = re.fullmatch(r"\$\{\d+\|([^|]*)\|\}(\$0)?", rest)
            if group is None:
                continue
            s, _ = registry.lookup(section, key, release)
            assert s is not None, key
            for choice in group.group(1).split(","):
                value = load_text(f"{key}: {choice}").data[key]
                assert (value in s.choices) if s.choices else isinstance(value, (bool, int)), (key, choice)
