"""``migrate --to fsdp2``: turn an FSDP1 ``fsdp_config`` into FSDP2, keeping comments.

Follows the mapping of accelerate's own ``accelerate to-fsdp2`` (1.15): ``fsdp_sharding_strategy``
becomes a boolean ``fsdp_reshard_after_forward`` (FULL_SHARD and HYBRID_SHARD -> true,
SHARD_GRAD_OP, HYBRID_SHARD_ZERO2 and NO_SHARD -> false), the FSDP1-only keys are removed with a
reason, and ``fsdp_version: 2`` is set. Unlike ``to-fsdp2`` it works by text edits, so comments and
order survive, and it reports unknown keys instead of carrying typos over silently.
"""

from __future__ import annotations

from accelconf.accelerate import registry
from accelconf.accelerate.fmt import apply_edits
from accelconf.accelerate.model import Entry, from_document
from accelconf.accelerate.validate import Context, did_you_mean, scalar_text
from accelconf.text.document import Document, load_text

_TO_BOOL = registry.FSDP2_RESHARD_OF_STRATEGY
# Why each FSDP1-only key (registry: fsdp_versions == (1,)) goes; the list itself is the registry's.
_WHY = {
    "fsdp_backward_prefetch": "FSDP2 has no backward prefetch setting (the plugin forces it to None)",
    "fsdp_backward_prefetch_policy": "legacy key, ignored since accelerate 1.0, and FSDP2 has no backward prefetch",
    "fsdp_sync_module_states": "FSDP2 always broadcasts from rank 0 when loading efficiently; the key is FSDP1-only",
    "fsdp_use_orig_params": "FSDP2 always uses the original parameters",
    "fsdp_forward_prefetch": "not implemented for FSDP2 in accelerate",
}


Edit = tuple[int, int, str]


def migrate_document(doc: Document, version: str | None = None) -> tuple[str, list[str]]:
    """The migrated text and one note per change (with its reason). ``version``: the accelerate the
    result is for (None: the newest known); a release without FSDP2 gets the text back unchanged."""
    notes: list[str] = []
    data = doc.data
    if not isinstance(data, dict):
        return doc.text, ["not an accelerate config"]
    fsdp = data.get("fsdp_config")
    if not isinstance(fsdp, dict) or not fsdp:
        return doc.text, ["no fsdp_config to migrate"]
    fsdp_version = registry.get("fsdp_config", "fsdp_version")
    assert fsdp_version is not None
    if version is not None and not fsdp_version.exists_in(version):
        # before 1.6, accelerate/commands/launch.py has no --fsdp_version: fsdp_version: 2 would be
        # ignored and FSDP1 would run without the keys migrate removes
        return doc.text, [
            f"accelerate {version} has no FSDP2 (fsdp_version is read from {fsdp_version.since} on): nothing migrated"
        ]
    cfg = from_document(doc)
    ctx = Context(doc, cfg, registry.NEWEST)
    if cfg.fsdp_version() == 2:
        return doc.text, ["already FSDP2 (fsdp_version: 2); nothing to do"]
    if data.get("distributed_type") != "FSDP":
        notes.append(
            f"note: distributed_type is {data.get('distributed_type')!r}, not FSDP: fsdp_config has no effect until "
            "it is"
        )
    written = {e.setting.key: e for p, e in cfg.entries.items() if p.startswith("fsdp_config.") and e.setting}
    edits: list[Edit] = []
    edits += _strategy_to_reshard(ctx, written, notes)
    edits += _remove_fsdp1_only(ctx, written, notes)
    sdt = written.get("fsdp_state_dict_type")
    if (
        sdt is not None
        and str(registry.get("fsdp_config", "fsdp_state_dict_type").canonical_value(sdt.value))  # type: ignore[union-attr]
        == "LOCAL_STATE_DICT"
    ):
        edits += ctx.replace_value(("fsdp_config", sdt.written_key), "SHARDED_STATE_DICT")
        notes.append("fsdp_state_dict_type: LOCAL_STATE_DICT is not supported by FSDP2 -> SHARDED_STATE_DICT")
    for path in cfg.unknown:
        if path.startswith("fsdp_config."):
            key = path.split(".", 1)[1]
            guess = did_you_mean("fsdp_config", key)
            notes.append(
                f"unknown key {key} kept as is (accelerate ignores "
                f"it){'; did you mean ' + guess + '?' if guess else ''}"
            )
    edits += _set_fsdp_version(doc, ctx, written, notes)
    notes.append("fsdp_version: 2 (needs torch 2.6 or newer)")
    return apply_edits(doc.text, edits), notes


def _strategy_to_reshard(ctx: Context, written: dict[str, Entry], notes: list[str]) -> list[Edit]:
    """``fsdp_sharding_strategy`` (or a strategy name under ``fsdp_reshard_after_forward``) -> the boolean."""
    strategy = written.get("fsdp_sharding_strategy")
    raf = written.get("fsdp_reshard_after_forward")
    source = (
        strategy
        if strategy is not None
        else (raf if raf is not None and isinstance(raf.value, str) and raf.value.upper() in _TO_BOOL else None)
    )
    if source is None:
        return []
    name = str(registry.get("fsdp_config", "fsdp_sharding_strategy").canonical_value(source.value)).upper()  # type: ignore[union-attr]
    value = _TO_BOOL.get(name)
    if value is None:
        notes.append(f"fsdp_sharding_strategy {source.value!r} is not a known strategy; left as is")
        return []
    edits: list[Edit] = []
    kp = ("fsdp_config", source.written_key)
    if source is strategy and raf is not None:
        edits += ctx.replace_value(("fsdp_config", raf.written_key), scalar_text(ctx.doc, value))
        edits += ctx.delete_key(kp)
    else:
        edits += ctx.rename_key(kp, "fsdp_reshard_after_forward")
        edits += ctx.replace_value(kp, scalar_text(ctx.doc, value))
    notes.append(f"{source.written_key}: {source.value} -> fsdp_reshard_after_forward: {str(value).lower()}")
    if name.startswith("HYBRID_SHARD"):
        notes.append(
            f"warning: {name} shards within a node and replicates across nodes; FSDP2 expresses that with "
            "parallelism_config (dp_replicate_size x dp_shard_size), not with fsdp_reshard_after_forward: the mapping "
            "loses meaning"
        )
    return edits


def _remove_fsdp1_only(ctx: Context, written: dict[str, Entry], notes: list[str]) -> list[Edit]:
    """Delete the FSDP1-only keys (the registry's list), each with the reason."""
    edits: list[Edit] = []
    fsdp1_only = [
        st.key
        for st in registry.settings_in("fsdp_config")
        if st.fsdp_versions == (1,) and st.key != "fsdp_sharding_strategy"
    ]
    for key in fsdp1_only:
        why = _WHY.get(key, "FSDP1 only")
        e = written.get(key)
        if e is None:
            continue
        d = ctx.delete_key(("fsdp_config", e.written_key))
        if d:
            edits += d
            notes.append(f"removed {e.written_key}: {why}")
        else:
            notes.append(f"could not remove {e.written_key} (not a one-line entry): {why}")
    return edits


def _set_fsdp_version(doc: Document, ctx: Context, written: dict[str, Entry], notes: list[str]) -> list[Edit]:
    """``fsdp_version: 2``: the existing entry's value, else a new first key of ``fsdp_config``."""
    version_entry = written.get("fsdp_version")
    if version_entry is not None:
        return list(ctx.replace_value(("fsdp_config", version_entry.written_key), "2"))
    block = doc.node(("fsdp_config",))
    assert block is not None
    if block.flow or not block.pairs:
        notes.append("fsdp_config is in flow style: add fsdp_version: 2 by hand")
        return []
    first_key = block.pairs[0][0]
    line_start = doc.text.rfind("\n", 0, first_key.start) + 1
    indent = doc.text[line_start : first_key.start]
    if doc.format == "json":
        # before the first key: on its own line when the key starts one, else on the same line
        sep = doc.newline + indent if not indent.strip() else " "
        return [(first_key.start, first_key.start, '"fsdp_version": 2,' + sep)]
    return [(line_start, line_start, f"{indent}fsdp_version: 2{doc.newline}")]


def migrate_text(text: str, path: str = "<text>", version: str | None = None) -> tuple[str, list[str]]:
    return migrate_document(load_text(text, path), version)
