"""Editor help checked whole, not by sample: completion lists complete for their position, hover
over every accepted (and refused) spelling of every enum value.

The oracle is validate: a value completion offers exactly the values validate accepts at that
position and release, and hover's "Effective value" agrees with validate's verdict on the written
spelling (``multi_gpu``, ``full_shard``, ``BF16``, ``'1'``, a bare ``no``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from accelconf import assist
from accelconf import deepspeed as ds
from accelconf.accelerate import registry
from accelconf.accelerate.registry import Setting
from accelconf.accelerate.validate import validate_document
from accelconf.deepspeed.validate import validate_deepspeed
from accelconf.text.document import load_text
from accelconf.text.scalars import json_scalar, yaml_scalar

VERSIONS = ("0.30", "1.5", "1.15")
# Rules that refuse a value only together with other keys or with a whole kind of config (SageMaker
# on 1.10+, compute_grad_norm false at stage 0, a bf16 optimizer without bf16 master weights): the
# value itself is a valid one to offer, so these do not count against a completion.
COMBINATION_RULES = frozenset({"sagemaker-broken", "ds-stage-requirement", "ds-data-types"})
ENUMS = [s for s in registry.SETTINGS if s.choices and s.type != "section"]


def _yaml_at(s: Setting, written: str) -> tuple[str, int, int]:
    """A document holding ``s`` with the written value; the 0-based position of the value."""
    if s.section:
        return f"{s.section}:\n  {s.key}: {written}\n", 1, len(f"  {s.key}: ")
    return f"{s.key}: {written}\n", 0, len(f"{s.key}: ")


def _value_errors(
    text: str, path: str, s: Setting, line: int, col: int, version: str, *, alone: bool = True
) -> list[str]:
    """validate's errors about the value at (line, col); ``alone``: only those about the value itself."""
    doc = load_text(text, path)
    return [
        f.message
        for f in validate_document(doc, accelerate_version=version)
        if f.severity == "error"
        and f.key == s.path
        and (f.line, f.column) == (line + 1, col + 1)
        and not (alone and f.rule in COMBINATION_RULES)
    ]


def _spellings(choice: Any) -> list[str]:
    text = str(choice)
    return sorted(
        {text, text.lower(), text.upper(), text.title(), f"'{text}'", f"'{text.lower()}'", f'"{text.upper()}"'}
    )


def _effective_line(md: str) -> str:
    return next((ln for ln in md.splitlines() if ln.startswith("- **Effective value:**")), "")


@pytest.mark.parametrize("s", ENUMS, ids=lambda s: s.path)
@pytest.mark.parametrize("version", ("0.30", "1.15"))
def test_hover_effective_value_agrees_with_validate_for_every_spelling(s: Setting, version: str) -> None:
    if not s.exists_in(version):
        pytest.skip(f"{s.path} does not exist in accelerate {version}")
    checked = 0
    for choice in s.choices or ():
        for written in _spellings(choice):
            text, line, col = _yaml_at(s, written)
            md = assist.hover(text, line, col + 1, version=version, path="train.yaml")
            assert md is not None, (s.path, written)
            errors = _value_errors(text, "train.yaml", s, line, col, version, alone=False)
            eff = _effective_line(md)
            if errors:
                assert eff == f"- **Effective value:** none: {errors[0]}", (s.path, written, version, eff)
                assert not md.startswith("`"), (s.path, written, "a refused spelling gets no meaning of a value")
                continue
            read = load_text(text, "train.yaml").node((s.section, s.key) if s.section else (s.key,)).value  # type: ignore[union-attr]
            canon = s.canonical_value(read)
            assert eff.startswith(f"- **Effective value:** `{yaml_scalar(canon)}`"), (s.path, written, version, eff)
            meaning = registry.ENUM_DOCS.get(str(canon))
            if meaning and isinstance(read, str):
                assert md.startswith(f"`{canon}`: {meaning}"), (s.path, written)
            checked += 1
    assert checked, f"no spelling of {s.path} is accepted at {version}"


@pytest.mark.parametrize("written, refused", [('"multi_gpu"', True), ('"MULTI_GPU"', False)])
def test_hover_in_json_agrees_with_validate(written: str, refused: bool) -> None:
    text = f'{{"distributed_type": {written}, "num_processes": 2}}'
    col = text.index(written) + 1
    md = assist.hover(text, 0, col, version="1.15", path="accelerate.json")
    assert md is not None
    eff = _effective_line(md)
    assert eff.startswith("- **Effective value:** none:") is refused, eff
    assert ("`MULTI_GPU`: " in md) is not refused


def _value_labels(text: str, line: int, col: int, path: str, version: str | None, kind: str | None = None) -> list[str]:
    return [
        c.label
        for c in assist.complete(text, line, col, version=version, path=path, kind=kind)  # type: ignore[arg-type]
        if c.kind == "value"
    ]


@pytest.mark.parametrize(
    "s",
    [s for s in registry.SETTINGS if (s.choices or s.type in ("bool", "boolish")) and s.type != "section"],
    ids=lambda s: s.path,
)
@pytest.mark.parametrize("version", VERSIONS)
def test_value_completion_offers_exactly_what_validate_accepts(s: Setting, version: str) -> None:
    if not s.exists_in(version):
        pytest.skip(f"{s.path} does not exist in accelerate {version}")
    text, line, col = _yaml_at(s, "")
    offered = _value_labels(text, line, col, "train.yaml", version)
    assert len(offered) == len(set(offered)), offered
    for label in offered:
        t, ln, c = _yaml_at(s, label)
        assert not _value_errors(t, "train.yaml", s, ln, c, version), (s.path, label, version)
    candidates = [True, False] if s.type in ("bool", "boolish") else list(s.choices or ())
    for value in candidates:
        t, ln, c = _yaml_at(s, yaml_scalar(value))
        if not _value_errors(t, "train.yaml", s, ln, c, version):
            assert yaml_scalar(value) in offered, (s.path, value, version, offered)


@pytest.mark.parametrize("section", sorted(registry.SECTIONS) + [""])
@pytest.mark.parametrize("version", VERSIONS)
def test_key_completion_lists_every_key_of_the_section(section: str, version: str) -> None:
    if section and not registry.version_in(version, registry.SECTIONS[section].since, registry.SECTIONS[section].until):
        pytest.skip(f"section {section} does not exist in accelerate {version}")
    text = f"{section}:\n  \n" if section else "\n"
    line, col = (1, 2) if section else (0, 0)
    got = {
        c.label
        for c in assist.complete(text, line, col, version=version, path="train.yaml")
        if c.kind in ("key", "section")
    }
    expected = {s.key for s in registry.settings_in(section, version) if not s.deprecated and not s.lost}
    if section == "":
        expected -= registry.SAGEMAKER_KEYS - registry.CLUSTER_ONLY_KEYS
    assert got == expected
    for key in sorted(got):  # each offered key is one validate knows at that release
        s, _ = registry.lookup(section, key, version)
        assert s is not None and s.exists_in(version), key


def test_key_completion_leaves_out_the_keys_present() -> None:
    text = "fsdp_config:\n  fsdp_version: 2\n  \n  fsdp_offload_params: true\n"
    got = {c.label for c in assist.complete(text, 2, 2, version="1.15", path="train.yaml")}
    assert "fsdp_version" not in got and "fsdp_offload_params" not in got
    assert got >= {s.key for s in registry.settings_in("fsdp_config", "1.15") if not s.deprecated and not s.lost} - {
        "fsdp_version",
        "fsdp_offload_params",
    }


# -- DeepSpeed ----------------------------------------------------------------------------------


def _nest(path: tuple[str, ...], leaf: str) -> tuple[str, int, int]:
    """A DeepSpeed JSON with ``leaf`` inside ``path``; the 0-based position right after the leaf's ``|``."""
    text = leaf
    for name in reversed(path):
        text = f"{{{json.dumps(name)}: {text}}}"
    text = text if path else leaf
    col = text.index("|")
    return text.replace("|", ""), 0, col


SECTIONS_DS = [
    (p, k)
    for p, k in ds.iter_keys()
    if k.children is not None and k.children and not k.removed and not getattr(k, "open", False)
]
LEAVES_DS = [
    (p, k)
    for p, k in ds.iter_keys()
    if k.children is None
    and not k.removed
    and (k.enum or k.type == "boolean" or (isinstance(k.type, tuple) and "boolean" in k.type) or k.auto)
]


@pytest.mark.parametrize("dotted, key", SECTIONS_DS, ids=[p for p, _ in SECTIONS_DS])
def test_deepspeed_key_completion_lists_every_key_of_the_section(dotted: str, key: ds.Key) -> None:
    path = tuple(dotted.split("."))
    text, line, col = _nest(path, '{"|"}')
    got = {c.label for c in assist.complete(text, line, col, path="ds_config.json", kind="deepspeed")}
    expected = {name for name, k in (key.children or {}).items() if not k.removed}
    assert got == expected


def test_deepspeed_top_level_key_completion_lists_every_key() -> None:
    got = {
        c.label for c in assist.complete('{"train_batch_size": 8, "|"}', 0, 26, path="ds_config.json", kind="deepspeed")
    }
    expected = {name for name, k in (ds.TOP.children or {}).items() if not k.removed} - {"train_batch_size"}
    assert got == expected


@pytest.mark.parametrize("dotted, key", LEAVES_DS, ids=[p for p, _ in LEAVES_DS])
def test_deepspeed_value_completion_offers_every_value_and_auto_where_deepspeed_takes_it(
    dotted: str, key: ds.Key
) -> None:
    path = tuple(dotted.split("."))
    text, line, col = _nest(path[:-1], f"{{{json.dumps(path[-1])}: |}}")
    offered = _value_labels(text, line, col, "ds_config.json", None, kind="deepspeed")
    expected = [json_scalar(v) for v in key.enum] if key.enum else []
    if not key.enum and (key.type == "boolean" or (isinstance(key.type, tuple) and "boolean" in key.type)):
        expected = ["true", "false"]
    if key.auto and '"auto"' not in expected:
        expected.append('"auto"')
    assert offered == expected
    for label in offered:  # each offered value is one DeepSpeed's own rules take at that key
        filled = text[:col] + label + text[col:]
        errors = [
            f
            for f in validate_deepspeed(load_text(filled, "ds_config.json"))
            if f.severity == "error" and f.key == dotted and f.rule not in COMBINATION_RULES
        ]
        assert not errors, (dotted, label, [f.message for f in errors])
