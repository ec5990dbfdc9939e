"""The transformers/TRL releases data: its interface, and its freshness against the installed
transformers' own dataclasses."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from accelconf.trainer import releases

ROOT = Path(__file__).resolve().parents[3]


def test_the_newest_release_is_the_last_of_the_known_ones_in_release_order() -> None:
    assert releases.NEWEST == releases.RELEASES[-1]
    keys = [tuple(int(p) for p in r.split(".")) for r in releases.RELEASES]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


def test_a_patch_or_dev_version_names_its_minor_release() -> None:
    newest = releases.NEWEST
    assert releases.resolve(newest + ".0") == newest
    assert releases.resolve(newest + ".0.dev0") == newest
    assert releases.fields(newest + ".1") is releases.fields(newest)


def test_an_unknown_version_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(releases.UnknownRelease) as err:
        releases.fields("3.0")
    assert releases.NEWEST in str(err.value) and "3.0" in str(err.value)


def test_every_field_has_one_form_per_release_and_the_forms_do_not_overlap() -> None:
    for name in releases.all_field_names():
        history = releases.field_history(name)
        for older, newer in zip(history, history[1:]):
            assert older.until is not None
            assert releases._key(older.until) <= releases._key(newer.since), name


def test_the_fields_of_a_release_carry_their_type_default_and_choices() -> None:
    got = releases.fields(releases.NEWEST)
    assert got["learning_rate"].type == "float" and got["learning_rate"].default == 5e-05
    assert got["bf16"].type == "bool"
    assert got["eval_strategy"].type == "enum" and set(got["eval_strategy"].choices or ()) >= {"no", "steps", "epoch"}
    assert "cosine" in (got["lr_scheduler_type"].choices or ())
    assert "adamw_torch" in (got["optim"].choices or ())
    assert {"wandb", "tensorboard", "none"} <= set(got["report_to"].choices or ())
    assert got["fsdp_config"].type == "optional-dict"
    # the generation fields are Seq2SeqTrainingArguments' own
    assert "predict_with_generate" in got
    assert "predict_with_generate" not in releases.fields(releases.NEWEST, cls="TrainingArguments")


def test_a_field_the_newest_release_lacks_is_removed_with_the_releases_around_it() -> None:
    gone = [n for n in releases.all_field_names() if releases.field_history(n)[-1].until is not None]
    if not gone:
        pytest.skip("no field of the known releases was removed before the newest")
    for name in gone:
        last, first_without = releases.removed(name) or ("", "")
        assert name in releases.fields(last) and name not in releases.fields(first_without)
    assert releases.removed("learning_rate") is None
    assert releases.removed("no_such_field") is None


def test_one_release_has_all_asks_for_one_release_with_every_field() -> None:
    assert releases.one_release_has_all(frozenset({"output_dir"}))
    assert releases.one_release_has_all(frozenset({"evaluation_strategy", "eval_strategy"}))  # both in 4.46-4.50
    # evaluation_strategy went in 4.51 and use_cache came in 5.0: no release had both
    assert not releases.one_release_has_all(frozenset({"evaluation_strategy", "use_cache"}))
    assert not releases.one_release_has_all(frozenset({"output_dir", "not_a_field"}))
    assert releases.one_release_has_all(frozenset({"predict_with_generate"}))  # Seq2SeqTrainingArguments' own


def test_the_fsdp_config_keys_of_the_newest_release_include_the_ones_it_reads() -> None:
    keys = releases.fsdp_config_keys()
    assert {"transformer_layer_cls_to_wrap", "min_num_params", "cpu_offload", "version"} <= keys
    assert "offload_params" not in keys


def test_trl_configs_add_their_own_fields_to_the_training_arguments() -> None:
    classes = releases.trl_classes(releases.TRL_NEWEST)
    assert {"SFTConfig", "DPOConfig", "GRPOConfig"} <= set(classes)
    sft = releases.trl_fields("SFTConfig", releases.TRL_NEWEST)
    assert "learning_rate" in sft and "per_device_train_batch_size" in sft
    assert set(sft) - set(releases.fields(releases.trl_transformers_version(), cls="TrainingArguments"))
    with pytest.raises(KeyError):
        releases.trl_fields("NoSuchConfig", releases.TRL_NEWEST)


def test_the_installed_versions_are_read_from_metadata_without_importing_transformers() -> None:
    code = (
        "import sys; from accelconf.trainer import releases; v = releases.installed_version(); "
        "t = releases.installed_trl_version(); print(v, t, 'transformers' in sys.modules, 'trl' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[2:] == ["False", "False"]
    if importlib.util.find_spec("transformers") is not None:
        import importlib.metadata as md

        assert out[0] == md.version("transformers")


def test_an_unknown_transformers_or_trl_version_is_a_usage_error_naming_the_known_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from accelconf.cli import main

    for command in ("validate", "explain", "diff", "convert"):
        assert main([command, "--transformers-version", "3.1", "x.yaml", "y.yaml"]) == 2
        err = capsys.readouterr().err
        assert "unknown transformers version '3.1'" in err and releases.NEWEST in err, command
    assert main(["validate", "--trl-version", "0.1", "x.yaml"]) == 2
    assert releases.TRL_NEWEST in capsys.readouterr().err


def test_validate_passes_the_given_or_installed_releases_to_validate_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from accelconf import api
    from accelconf.cli import main

    seen: list[dict[str, object]] = []
    real = api.validate_source

    def spy(text: str, path: str = "<text>", env: object = None, **opts: object) -> list[object]:
        seen.append(opts)
        return real(text, path, env, **opts)  # type: ignore[arg-type]

    monkeypatch.setattr(api, "validate_source", spy)
    f = tmp_path / "args.yaml"
    f.write_text("output_dir: out\nlearning_rate: 2.0e-5\nper_device_train_batch_size: 4\n", encoding="utf-8")
    newest = releases.NEWEST
    assert main(
        ["validate", "--transformers-version", f"{newest}.0", "--trl-version", releases.TRL_NEWEST, str(f)]
    ) in (0, 1)
    assert seen[-1]["transformers_version"] == newest and seen[-1]["trl_version"] == releases.TRL_NEWEST
    assert main(["validate", str(f)]) in (0, 1)
    assert seen[-1]["transformers_version"] == releases.resolve(releases.installed_version())
    assert seen[-1]["trl_version"] == releases.resolve(None, "trl")


def test_diff_takes_a_range_of_two_transformers_releases() -> None:
    from accelconf.cli import build_parser

    first, newest = releases.RELEASES[0], releases.NEWEST
    args = build_parser("diff").parse_args(["diff", "--transformers-version", f"{first}.0..{newest}", "a", "b"])
    assert args.transformers_version == f"{first}..{newest}"


def test_a_renamed_field_is_one_change_from_the_old_name_to_the_new_in_the_release_diff() -> None:
    from accelconf.trainer.diff import release_diff

    text = ("output_dir: out\nevaluation_strategy: steps\nadafactor: true\n", "args.yaml")
    got = {c.key: c for c in release_diff(text, text, ("4.50", "5.0")).changes if c.key.startswith("arguments.")}
    ev = got["arguments.evaluation_strategy"]
    assert (ev.a_key, ev.b_key, ev.a, ev.b) == (
        "arguments.evaluation_strategy",
        "arguments.eval_strategy",
        "steps",
        "steps",
    )
    assert ev.note.startswith("renamed: transformers 4.51 removed evaluation_strategy")
    assert "arguments.eval_strategy" not in got  # not a second change: eval_strategy is not in the file
    ada = got["arguments.adafactor"]  # replaced, the value does not carry: --optim adafactor
    assert (ada.b_key, ada.b) == ("arguments.optim", None) and "`--optim adafactor`" in ada.note
    # the other way round the sides swap: the newer release on A lacks the old name
    back = {c.key: c for c in release_diff(text, text, ("5.0", "4.50")).changes}["arguments.evaluation_strategy"]
    assert (back.kind, back.a_key, back.b_key, back.a) == (
        "added",
        "arguments.eval_strategy",
        "arguments.evaluation_strategy",
        "steps",
    )
    # a removed field whose message names no field stays a plain removal
    ipex = ("output_dir: out\nuse_ipex: true\n", "a.yaml")
    (plain,) = [c for c in release_diff(ipex, ipex, ("4.56", "4.57")).changes if c.key == "arguments.use_ipex"]
    assert (plain.kind, plain.a_key, plain.b_key) == ("removed", "", "") and "has no field use_ipex" in plain.note


def test_renamed_gives_the_replacement_with_the_releases_around_the_removal() -> None:
    r = releases.renamed("evaluation_strategy")
    assert r is not None and (r.new, r.value_carries, r.last, r.removed_in) == ("eval_strategy", True, "4.50", "4.51")
    assert releases.renamed("use_ipex") is None  # removed, with nothing named to use instead
    assert releases.renamed("eval_strategy") is None  # not removed


def test_the_release_diff_of_a_file_one_release_refuses_at_construction_names_the_stage() -> None:
    from accelconf.trainer.diff import release_diff

    # 4.x refuses a warmup_steps that is not an integer before any Trainer exists (no accumulation to show)
    text = ("output_dir: out\nwarmup_steps: 0.1\n", "args.yaml")
    keys = {c.key for c in release_diff(text, text, ("4.57", "5.0")).changes}
    assert "raises.construction" in keys
    both = ("output_dir: out\nfp16: true\nbf16: true\n", "args.yaml")  # both refuse: nothing runs differently
    assert not {c.key for c in release_diff(both, both, ("4.57", "5.0")).changes if c.key.startswith("raises.")}
