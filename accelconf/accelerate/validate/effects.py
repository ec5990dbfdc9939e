"""Rules about settings a config file cannot apply: ignored in a file, or never reaching the training process."""

from __future__ import annotations

from accelconf.accelerate.model import canonical
from accelconf.accelerate.validate.context import Context, rule


@rule("no-effect")
def _file_ignored(ctx: Context) -> None:
    for _path, e in ctx.cfg.entries.items():
        s = e.setting
        if s is None or not s.file_ignored:
            continue
        same_as_default = canonical(s, e.value) == s.launcher_default
        node = ctx.value_node(e.written_key)
        shown = node.raw if node is not None and node.kind == "scalar" else repr(e.value)
        machines = ctx.doc.data.get("num_machines", 1)
        irrelevant = (
            s.key in ("same_network", "rdzv_backend") and not (isinstance(machines, int) and machines > 1)
        ) or (s.key in ("downcast_bf16", "tpu_use_sudo") and ctx.doc.data.get("distributed_type") != "XLA")
        if same_as_default or irrelevant:
            ctx.finding(
                "no-effect",
                "info",
                f"`{s.key}` in a config file is never applied by `accelerate launch` (here it would make no "
                "difference)",
                (e.written_key,),
            )
        else:
            ctx.finding(
                "no-effect",
                "warning",
                f"`{s.key}: {shown}` is ignored: `accelerate launch` always uses its flag default "
                f"({s.launcher_default!r}); pass `{s.cli_flag}` on the command line",
                (e.written_key,),
                suggestion=f"{s.cli_flag}",
            )


@rule("no-effect")
def _lost(ctx: Context) -> None:
    for _path, e in ctx.cfg.entries.items():
        s = e.setting
        if s is None or not s.lost:
            continue
        keypath = (s.section, e.written_key)
        if s.section == "deepspeed_config":
            ctx.finding(
                "no-effect",
                "warning",
                f"`{s.key}` never reaches the training process (the launcher does not export it; the plugin sees "
                "'none'); set the NVMe path in a DeepSpeed JSON file",
                keypath,
            )
        else:
            target = {
                "amax_history_length": "amax_history_len",
                "amax_compute_algorithm": "amax_compute_algo",
                "optimization_level": "opt_level",
            }.get(s.key)
            ctx.finding(
                "no-effect",
                "warning",
                f"`{s.key}` is exported under a name nothing reads; use `{target}`",
                keypath,
                suggestion=target,
                fix=ctx.rename_key(keypath, target) if target else (),
            )
