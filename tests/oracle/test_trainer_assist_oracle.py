"""The release's own code as the oracle of the Trainer editor help: every value completion offers
constructs with that release's TrainingArguments (HfArgumentParser reading the YAML as completion
writes it), the help text in the releases data is the installed release's own, and the plugin
fields hover says an ``fsdp_config`` key sets are the ones transformers' ``_process_fsdp_args`` sets.
Each release runs in its own process (tests/oracle/transformers_release_worker.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from accelconf.assist.trainer import complete_trainer
from accelconf.trainer import fields, fsdp, releases

pytestmark = pytest.mark.oracle


def _construct(dirs: list[str], cases: list[dict[str, Any]]) -> dict[str, Any]:
    from tests.oracle.transformers_releases_gen import run_worker

    answer = run_worker("construct", dirs, json.dumps(cases), timeout=900)
    assert "error" not in answer, answer
    return answer["results"]  # type: ignore[no-any-return]


def _value_cases(tmp: Path, release: str) -> list[dict[str, Any]]:
    """One arguments YAML per value completion offers (written as it inserts it), parsed by
    HfArgumentParser.parse_yaml_file of the release."""
    cases = []
    for name in releases.fields(release):
        for cand in complete_trainer(f"{name}: \n", 0, len(name) + 2, "trainer-args", transformers_version=release):
            path = tmp / f"{len(cases)}.yaml"
            extra = "eval_strategy: steps\n" if name != "eval_strategy" else ""  # reduce_lr_on_plateau needs one
            path.write_text(f"output_dir: {tmp / 'out'}\n{extra}{name}: {cand.insert}\n", encoding="utf-8")
            cases.append(
                {"id": f"{name}={cand.label}", "cls": "Seq2SeqTrainingArguments", "kind": "yaml", "path": str(path)}
            )
    return cases


# What a value's refusal says when the value itself is wrong (an enum's ValueError, the legacy fsdp
# option check); other refusals are about the machine (no GPU for bf16, a missing optional package).
WRONG_VALUE = ("is not a valid", "Unknown `fsdp` option", "invalid truth value", "only available with FSDP1")


def _refused(results: dict[str, Any]) -> dict[str, str]:
    return {k: r["message"] for k, r in results.items() if not r["ok"] and any(w in r["message"] for w in WRONG_VALUE)}


def test_every_value_offered_is_one_the_installed_transformers_accepts(tmp_path: Path) -> None:
    pytest.importorskip("transformers", reason="the installed transformers' own TrainingArguments is the oracle")
    installed = releases.minor_of(releases.installed_version() or "")
    results = _construct([], _value_cases(tmp_path, installed))
    assert len(results) > 100
    assert _refused(results) == {}


@pytest.mark.parametrize("release", [releases.RELEASES[0], "5.0"])
def test_every_value_offered_is_one_an_older_release_accepts(tmp_path: Path, release: str) -> None:
    from tests.oracle import transformers_releases as tr

    if not tr.CACHE.installed(release):
        pytest.skip(
            f"transformers {release} is not in the release cache (python tests/oracle/transformers_releases.py)"
        )
    results = _construct(tr.sys_path(tr.path_of(release)), _value_cases(tmp_path, release))
    assert _refused(results) == {}


def test_every_fsdp_config_value_offered_constructs_with_the_installed_transformers(tmp_path: Path) -> None:
    pytest.importorskip("transformers", reason="the installed transformers' own TrainingArguments is the oracle")
    cases = []
    for version in (1, 2):
        for key in fields.fsdp_keys():
            for v in fsdp.key_values(key, version):
                cfg = {"version": version, key: v}
                args = {"fsdp": True, "fsdp_config": cfg}
                cases.append(
                    {
                        "id": f"{version}:{key}={v}",
                        "cls": "TrainingArguments",
                        "kind": "yaml",
                        "args": args,
                        "output_dir": True,
                    }
                )
    results = _construct([], cases)
    assert {k: r["message"] for k, r in results.items() if not r["ok"]} == {}


def test_every_field_help_is_the_dataclass_help_of_the_installed_release() -> None:
    """The help text in the releases data is the installed release's own ``metadata["help"]``
    (regenerate on drift: python tests/oracle/transformers_releases_gen.py)."""
    pytest.importorskip("transformers", reason="the drift check compares with the installed transformers")
    from tests.oracle.transformers_releases_gen import run_worker

    theirs = run_worker("fields", [])
    if releases.minor_of(theirs["version"]) != releases.NEWEST:
        pytest.skip(f"installed transformers {theirs['version']} is not the newest the data knows")
    for cls in ("TrainingArguments", "Seq2SeqTrainingArguments"):
        for f in theirs["classes"][cls]:
            assert releases.field_help(f["name"]) == f.get("help"), f["name"]


def test_the_fsdp_plugin_fields_a_key_sets_are_the_ones_the_installed_transformers_builds() -> None:
    """plugin_fields_set reads the model of _process_fsdp_args; the real one, given each value the
    key takes, changes exactly those plugin arguments, and reads the ``fsdp_`` spelling the same."""
    pytest.importorskip("transformers", reason="the installed transformers' own _process_fsdp_args is the oracle")
    code = (
        "import json, sys, warnings; warnings.simplefilter('ignore'); from transformers import TrainingArguments\n"
        "def build(cfg): return TrainingArguments('o', fsdp=True, fsdp_config=cfg)._process_fsdp_args() or {}\n"
        "out = []\n"
        "for v, key, value in json.load(sys.stdin):\n"
        "    cfg = {'version': v}\n"
        "    if key == 'min_num_params': cfg['auto_wrap_policy'] = 'SIZE_BASED_WRAP'\n"
        "    base, got = build(dict(cfg)), build({**cfg, key: value})\n"
        "    changed = sorted(k for k in got if k not in base or got[k] != base[k])\n"
        "    out.append([v, key, changed, build({**cfg, 'fsdp_' + key: value}) == got])\n"
        "print(json.dumps(out))\n"
    )
    probes = []
    for v in (1, 2):
        for key in sorted(
            fields.fsdp_keys() - {"version", "xla", "xla_fsdp_v2", "xla_fsdp_grad_ckpt", "xla_fsdp_settings"}
        ):
            given = {"min_num_params": (7,), "transformer_layer_cls_to_wrap": (["Block"],)}.get(key)
            probes += [(v, key, value) for value in given or fsdp.key_values(key, v) or (True,)]
    out = subprocess.run(
        [sys.executable, "-c", code], input=json.dumps(probes), capture_output=True, text=True, check=True
    )
    theirs: dict[tuple[int, str], set[str]] = {}
    for v, key, changed, same_spelled in json.loads(out.stdout.strip().splitlines()[-1]):
        theirs.setdefault((v, key), set()).update(changed)
        assert same_spelled, f"fsdp_{key} is not read as {key} (FSDP{v})"
    for (v, key), changed in theirs.items():
        assert changed == set(fsdp.plugin_fields_set(key, v)), (v, key, changed)
    assert theirs[(2, "use_orig_params")] == set() and theirs[(1, "use_orig_params")] == {"use_orig_params"}
