"""Every line of the hover markdown for a reviewed set of keys and values: DeepSpeed keys (default,
allowed values, since, removed, deprecated, several types, "auto"), enum values with their meaning,
accelerate settings in YAML and JSON (launcher and plugin defaults, versions, FSDP, alias, sections,
the effective value with its YAML 1.1 note or validate's refusal, the default when nothing is written).

The records live in ``tests/data/assist/hover.golden`` (``tests/golden.py``): after a deliberate
change, ``ACCELCONF_UPDATE_EXPECTED=1`` rewrites them; read the diff before committing it."""

from __future__ import annotations

import re

import pytest

from accelconf import assist
from accelconf.accelerate import registry
from accelconf.assist.hover import _before
from tests import golden
from tests.conftest import DATA
from tests.unit.assist.test_assist import cursor

GOLDEN = DATA / "assist" / "hover.golden"
DS, JSON = {"path": "ds.json"}, {"path": "a.json"}
CASES: list[tuple[str, dict[str, str]]] = [
    ('{"train_batch_size": 8, "zero_optimization": {"st|age": 3}}', DS),
    ('{"train_batch_size": 8, "zero_optimization": {"stage": 3|}}', DS),
    ('{"train_batch_size": 8, "checkpoint": {"tag_validation": "Wa|rn"}}', DS),
    ('{"train_batch_size": 8, "zero_optimization": {"cpu_off|load": true}}', DS),
    ('{"train_batch_size": 8, "sparse_gra|dients": true}', DS),
    ('{"train_batch_size": 8, "gradient_cli|pping": "auto"}', DS),
    ('{"train_batch_size": 8, "gradient_allreduce_op": "s|um"}', DS),
    ("use_cpu: y|es\n", {}),
    ('use_cpu: "y|es"\n', {}),
    ("mixed_precision: n|o\n", {}),
    ("mixed_precision: 'f|p16'\n", {}),
    ('{"mixed_precision": "f|p16", "distributed_type": "FSDP"}', JSON),
    ('{"use_c|pu": true}', JSON),
    ("distributed_type: FSDP\nfsdp_config:\n  fsdp_use_orig_p|arams: false\n", {}),
    ("ipex_con|fig:\n  ipex: true\n", {}),
    ("tp_con|fig:\n  tp_size: 2\n", {}),
    ("fp8_config:\n  fp8_back|end: TE\n", {}),
    ("distributed_type: T|PU\n", {"version": "1.5"}),
    ("use_c|pu:\n  - [\n", {}),  # a document that does not parse: the default, nothing written
    ('{"distributed_type": "FSDP", "fsdp_config": {"fsdp_use_orig_p|arams": false}}', JSON),
    ('{"mixed_precision": "n|o"}', JSON),
    ('{"use_cpu": "y|es"}', JSON),
    ('{"fp8_config": {"fp8_back|end": "TE"}}', JSON),
    ("fp1|6: true\n", {}),
    ("distributed_type: FSDP\nfsdp_config:\n  fsdp_activation_checkpointing_off|load: true\n", {}),
    ("same_netw|ork: true\n", {}),
    ('num_processes: "8|"\n', {}),
    ("mixed_precision: FP1|6\n", {}),
    ("use_cpu: TR|UE\n", {}),
    ("not_a_se|tting: 1\n", {}),
    ("use_cpu: true\n\n|", {}),
    ("fsdp_config:\n  not_a_se|tting: 1\n", {}),
    # documents that do not parse (typing in progress): the effective value comes from the line itself
    ("use_c|pu: yes  # on the CPU\nbad: [\n", {}),
    ('num_proc|esses: "8"\nbad: [\n', {}),
    ("mixed_precision: FP1|6\nbad: [\n", {}),
    ("mixed_precision: 'n|o'\nbad: [\n", {}),
    ('{\n  "mixed_precision": "f|p16",\n', JSON),
    ('{"train_batch_size": 8, "checkpoint": {"tag_validation": "Wa|rn"', DS),
    ('{\n  "train_batch_size": 8,\n  "zero_optimiz|ation": {"stage": 3', DS),
    # nothing written: the default, launcher and plugin apart, plugin alone, launcher alone
    ("distributed_type: FSDP\nfsdp_config:\n  fsdp_min_num_par|ams:\n    - [\n", {}),
    ("distributed_type: FSDP\nfsdp_config:\n  fsdp_state_dict_t|ype:\n    - [\n", {}),
    ("num_machi|nes:\n  - [\n", {}),
    ('{"distributed_type": "FSDP", "fsdp_config": {"fsdp_min_num_par|ams": 0}}', JSON),
    ('{"distributed_type": "FSDP", "fsdp_config": {"fsdp_version": 2, "fsdp_reshard_after_forw|ard": true}}', JSON),
    ("fsdp_con|fig:\n  fsdp_version: 2\n", {}),
    # a spelling only a later release reads: ignored, the default applies
    ('distributed_type: "NO"\ndynamo_config:\n  back|end: inductor\n', {"version": "1.13"}),
    ('distributed_type: "NO"\ndynamo_config:\n  back|end: inductor\n', {}),
    ('distributed_type: "NO"\nuse_cpu: true  # a co|mment\n', {}),  # in a comment: nothing
    ("tp_con|fig:\n  tp_size: 2\n", {"version": "1.5"}),  # an old release: the versions row
    ('distributed_type: "X|LA"\nbad: [\n', {}),
    ('{"train_batch_size": 8, "zero_optimization": {"stage": "3|"}}', DS),  # an integer enum written as a string
    ('{"train_batch_size": 8, "zero_optimization": {"stage": nu|ll}}', DS),
    ("distributed_type: MEGATRON_LM\nmegatron_lm_config:\n  megatron_lm_sequence_parall|elism: true\n", {}),  # boolish
]


def _title(marked: str, kw: dict[str, str]) -> str:
    return f"{marked!r} {' '.join(f'{k}={v}' for k, v in sorted(kw.items()))}".rstrip()


def _section(marked: str, kw: dict[str, str]) -> list[str]:
    text, line, col = cursor(marked)
    md = assist.hover(text, line, col, **kw)  # type: ignore[arg-type]
    return [f"== {_title(marked, kw)} @ {kw.get('version', registry.NEWEST)}", *(md or "(none)").splitlines()]


if golden.update_requested():  # rewrite the records once, before the tests read them
    golden.write(GOLDEN, (_section(m, kw) for m, kw in CASES))


# plain ids: mutmut selects tests by node id, which quotes and brackets in an id break
@pytest.mark.parametrize(("marked", "kw"), CASES, ids=[re.sub(r"\W+", "-", m).strip("-") for m, _ in CASES])
def test_hover_markdown_is_the_reviewed_record(marked: str, kw: dict[str, str]) -> None:
    golden.check(GOLDEN, _title(marked, kw), _section(marked, kw), "hover markdown")


def test_the_records_are_the_cases() -> None:
    assert sorted(golden.sections(GOLDEN)) == sorted(_title(m, kw) for m, kw in CASES)


def test_before_names_the_release_before_or_says_before() -> None:
    first, second, third = registry.KNOWN_VERSIONS[:3]
    assert (_before(second), _before(third)) == (first, second)
    assert _before(first) == f"before {first}" and _before("0.1") == "before 0.1"
