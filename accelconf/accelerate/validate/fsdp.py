"""Rules about fsdp_config: FSDP1 against FSDP2, combinations the plugin refuses."""

from __future__ import annotations

from accelconf import releases
from accelconf.accelerate import registry
from accelconf.accelerate.model import Entry, canonical
from accelconf.accelerate.validate import valuerules
from accelconf.accelerate.validate.context import Context, _truthy_launch, rule, section_unused
from accelconf.accelerate.validate.values import _sharding_is_int, place


@rule(
    "fsdp-invalid-combination",
    "fsdp1-key-in-fsdp2",
    "fsdp1-strategy-ignored",
    "fsdp2-key-in-fsdp1",
    "fsdp2-local-state-dict",
    "fsdp2-reshard-bool",
    "section-unused",
    "unprefixed-key",
)
def _fsdp(ctx: Context) -> None:
    data = ctx.doc.data
    fsdp = data.get("fsdp_config")
    if not isinstance(fsdp, dict) or not fsdp:
        return
    dt = data.get("distributed_type")
    if section_unused(data, "fsdp_config"):
        ctx.finding(
            "section-unused", "info", f"`fsdp_config` has no effect with distributed_type {dt!r}", ("fsdp_config",)
        )
        return  # nothing in it is read: findings about its keys would be noise
    fv = _fsdp_version(ctx)
    written = {e.setting.key: e for p, e in ctx.cfg.entries.items() if p.startswith("fsdp_config.") and e.setting}
    _keys_of_the_other_version(ctx, fv, written)
    _reshard_after_forward(ctx, fv, written)
    _fsdp2_state_dict_type(ctx, fv, written)
    _offload_needs_checkpointing(ctx, written)
    if dt == "FSDP" and releases.has(ctx.version, "ram-efficient-needs-sync"):
        _ram_efficient_needs_sync(ctx, written)
    # the legacy fsdp_backward_prefetch_policy (ignored since 1.0) is the version rule's, with its
    # deprecation message
    _unprefixed_keys(ctx)


def _fsdp_version(ctx: Context) -> int:
    """The written fsdp_version as a number; 1 when absent or not a number."""
    version = ctx.cfg.get("fsdp_config.fsdp_version", 1)
    try:
        return int(version)
    except (TypeError, ValueError):
        return 1


def _keys_of_the_other_version(ctx: Context, fv: int, written: dict[str, Entry]) -> None:
    """An FSDP1-only key under FSDP2 is dropped; an FSDP2-only key under FSDP1 makes the plugin raise."""
    for key, e in written.items():
        s = e.setting
        assert s is not None
        if fv not in s.fsdp_versions and s.exists_in(ctx.version):
            kp = ("fsdp_config", e.written_key)
            if fv == 2:
                ctx.finding(
                    "fsdp1-key-in-fsdp2",
                    "warning",
                    f"`{key}` applies to FSDP1 only; FSDP2 ignores it (the plugin warns or drops it)",
                    kp,
                    fix=ctx.delete_key(kp),
                )
            elif canonical(s, e.value) != canonical(s, s.launcher_default):
                # the plugin raises only on a non-default value (dataclasses.py: ``if
                # self.activation_checkpointing_offload and self.fsdp_version != 2: raise``)
                ctx.finding("fsdp2-key-in-fsdp1", "error", f"`{key}` needs `fsdp_version: 2`", kp)


def _reshard_after_forward(ctx: Context, fv: int, written: dict[str, Entry]) -> None:
    """FSDP2 needs a boolean; FSDP1 reads a strategy only from fsdp_sharding_strategy."""
    raf = written.get("fsdp_reshard_after_forward")
    if raf is None:
        return
    kp = ("fsdp_config", raf.written_key)
    v = raf.value
    for problem in valuerules.reshard_problems(raf, fv):
        place(ctx, kp, problem)
    if (
        fv == 1
        and isinstance(v, str)
        and v.upper() in registry.SHARDING_STRATEGIES
        and "fsdp_sharding_strategy" not in written
    ):
        # before 0.26 the moved value must be the strategy's number (sharding-strategy-int)
        number = str(registry.SHARDING_STRATEGIES.index(v.upper()) + 1) if _sharding_is_int(ctx.version) else None
        ctx.finding(
            "fsdp1-strategy-ignored",
            "info" if v.upper() == "FULL_SHARD" else "warning",
            f"FSDP1 reads only `fsdp_sharding_strategy`; `fsdp_reshard_after_forward: {v}` is ignored and "
            "FULL_SHARD is used",
            kp,
            suggestion=f"fsdp_sharding_strategy: {number or v.upper()}",
            fix=ctx.rename_key(kp, "fsdp_sharding_strategy") + (ctx.replace_value(kp, number) if number else ()),
        )
    # a boolean under FSDP1 is harmless: the FSDP1 plugin never reads it from env


def _fsdp2_state_dict_type(ctx: Context, fv: int, written: dict[str, Entry]) -> None:
    sdt = written.get("fsdp_state_dict_type")
    if sdt is not None:
        for problem in valuerules.state_dict_problems(sdt, fv):
            place(ctx, ("fsdp_config", sdt.written_key), problem)


def _offload_needs_checkpointing(ctx: Context, written: dict[str, Entry]) -> None:
    aco = written.get("fsdp_activation_checkpointing_offload")
    if aco is not None and canonical(aco.setting, aco.value) is True:
        ac = written.get("fsdp_activation_checkpointing")
        if ac is None or canonical(ac.setting, ac.value) is not True:
            ctx.finding(
                "fsdp-invalid-combination",
                "error",
                "`fsdp_activation_checkpointing_offload` needs `fsdp_activation_checkpointing: true`",
                ("fsdp_config", aco.written_key),
            )


def _ram_efficient_needs_sync(ctx: Context, written: dict[str, Entry]) -> None:
    """`accelerate launch` refuses RAM-efficient loading without sync_module_states (both default to true)."""
    ram = written.get("fsdp_cpu_ram_efficient_loading")
    sync = written.get("fsdp_sync_module_states")
    ram_v = ram.value if ram is not None else "true"
    sync_v = sync.value if sync is not None else "true"
    if _truthy_launch(ram_v) and not _truthy_launch(sync_v):
        ctx.finding(
            "fsdp-invalid-combination",
            "error",
            "`fsdp_cpu_ram_efficient_loading` is on (it defaults to true) while `fsdp_sync_module_states` is "
            "false: `accelerate launch` raises ValueError",
            ("fsdp_config", sync.written_key if sync else "fsdp_sync_module_states"),
            on_value=True,
            suggestion="fsdp_sync_module_states: true",
        )


def _unprefixed_keys(ctx: Context) -> None:
    """Unprefixed keys are read, but accelerate writes the prefix."""
    for p, e in ctx.cfg.entries.items():
        if p.startswith("fsdp_config.") and e.setting and e.written_key != e.setting.key:
            ctx.finding(
                "unprefixed-key",
                "info",
                f"`{e.written_key}` is read as `{e.setting.key}`; accelerate writes the prefix",
                ("fsdp_config", e.written_key),
                suggestion=e.setting.key,
                fix=ctx.rename_key(("fsdp_config", e.written_key), e.setting.key),
            )
