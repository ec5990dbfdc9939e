"""Rules about deepspeed_config and the DeepSpeed JSON file it names."""

from __future__ import annotations

from accelconf.accelerate import registry
from accelconf.accelerate.model import canonical
from accelconf.accelerate.validate.context import Context, rule, section_unused
from accelconf.errors import InputError
from accelconf.text.document import load_file


@rule(
    "deepspeed-config-file-conflict",
    "deepspeed-config-file-invalid",
    "deepspeed-config-file-missing",
    "deepspeed-offload-stage",
    "section-unused",
    "zero3-save-16bit",
)
def _deepspeed(ctx: Context) -> None:
    data = ctx.doc.data
    ds = data.get("deepspeed_config")
    if not isinstance(ds, dict) or not ds:
        return
    dt = data.get("distributed_type")
    if section_unused(data, "deepspeed_config"):
        ctx.finding(
            "section-unused",
            "info",
            f"`deepspeed_config` has no effect with distributed_type {dt!r}",
            ("deepspeed_config",),
        )
        return  # nothing in it is read: findings about its keys would be noise
    if ds.get("deepspeed_config_file"):
        conflicts = [k for k in registry.deepspeed_json_keys() if k in ds]
        for k in conflicts:
            ctx.finding(
                "deepspeed-config-file-conflict",
                "error",
                f"`{k}` together with `deepspeed_config_file`: accelerate raises ValueError at training time (set it "
                "in the JSON file instead)",
                ("deepspeed_config", k),
                fix=ctx.delete_key(("deepspeed_config", k)),
            )
        # process_config turns a truthy legacy fp16 into mixed_precision, which then counts too
        mp_key = "mixed_precision" if "mixed_precision" in data else ("fp16" if data.get("fp16") else None)
        if mp_key is not None and dt == "DEEPSPEED":
            ctx.finding(
                "deepspeed-config-file-conflict",
                "error",
                f"a top-level `{mp_key}` (even 'no') together with `deepspeed_config_file`: accelerate raises "
                "ValueError at training time; set fp16/bf16 in the JSON file",
                (mp_key,),
                fix=ctx.delete_key((mp_key,)),
            )
        _deepspeed_file(ctx, str(ds["deepspeed_config_file"]))
    stage = ds.get("zero_stage")
    for k in ("offload_param_device",):
        if (
            k in ds
            and str(ds[k]).lower() not in ("none",)
            and stage is not None
            and str(stage).isdigit()
            and int(stage) < 3
        ):
            ctx.finding(
                "deepspeed-offload-stage",
                "warning",
                f"`{k}: {ds[k]}` has an effect only with ZeRO stage 3",
                ("deepspeed_config", k),
            )
    if not ds.get("deepspeed_config_file"):  # with a file, the JSON's own setting counts (checked with it)
        _zero3_save(ctx)


def _zero3_save(ctx: Context) -> None:
    """ZeRO-3 shards the weights: without ``zero3_save_16bit_model`` (DeepSpeedPlugin writes it as
    ``stage3_gather_16bit_weights_on_model_save``) ``Accelerator.get_state_dict``/``save_model`` raise
    ValueError and the HF Trainer's ``save_model`` writes no weights, only a DeepSpeed checkpoint."""
    stage = ctx.cfg.entries.get("deepspeed_config.zero_stage")
    save = ctx.cfg.entries.get("deepspeed_config.zero3_save_16bit_model")
    if stage is None or canonical(stage.setting, stage.value) != 3:
        return
    value = canonical(save.setting, save.value) if save is not None else None
    if value is True:
        return
    path = ("deepspeed_config", save.written_key) if save is not None else ("deepspeed_config", "zero_stage")
    ctx.finding(
        "zero3-save-16bit",
        "warning",
        f"ZeRO stage 3 with `zero3_save_16bit_model` {'false' if save is not None else 'not set (default false)'}: "
        "saving the model writes no consolidated weights (accelerator.get_state_dict() and save_model() raise "
        "ValueError, the HF Trainer's save_model() saves a DeepSpeed checkpoint to convert with zero_to_fp32.py); "
        "set `zero3_save_16bit_model: true`",
        path,
        on_value=save is not None,
        suggestion="zero3_save_16bit_model: true",
        fix=ctx.replace_value(path, "true") if save is not None else (),
    )


def _deepspeed_file(ctx: Context, ref: str) -> None:
    """Open the referenced DeepSpeed JSON (found as :func:`accelconf.deepspeed.config_file_path` says)
    and cross-check it."""
    # DeepSpeed's key table and validator load only for a config that names a DeepSpeed JSON
    from accelconf import deepspeed as dsmod
    from accelconf.accelerate import deepspeed_file
    from accelconf.deepspeed.validate import validate_deepspeed

    path = dsmod.config_file_path(ref, ctx.doc.path)
    if path is None:
        ctx.finding(
            "deepspeed-config-file-missing",
            "info",
            f"`deepspeed_config_file` {ref!r} was not found next to the config (it is resolved against the launch "
            "directory at run time)",
            ("deepspeed_config", "deepspeed_config_file"),
            on_value=True,
        )
        return

    try:
        ds_doc = load_file(path, "json")
    except InputError as exc:
        ctx.finding(
            "deepspeed-config-file-invalid",
            "error",
            f"the DeepSpeed config {ref!r} cannot be read: {exc}",
            ("deepspeed_config", "deepspeed_config_file"),
            on_value=True,
        )
        return
    # The key conflicts need only this file and are reported above (with quick fixes); the
    # cross-check adds what needs the JSON (a dtype it contradicts, the "auto" values accelerate fills).
    ctx.findings.extend(deepspeed_file.crosscheck(ctx.doc.data, ctx.doc, ds_doc, key_conflicts=False))
    # The JSON itself, as accelerate will read it (its "auto" values are filled by accelerate).
    world = deepspeed_file.accelerate_world_size(ctx.doc.data)
    for f in validate_deepspeed(ds_doc, world_size=world, runtime="accelerate"):
        ctx.findings.append(f.with_path(ds_doc.path))
