"""Rules about keys: unknown, misspelt, removed, or newer than the release."""

from __future__ import annotations

from accelconf.accelerate import registry
from accelconf.accelerate.model import Entry, canonical
from accelconf.accelerate.registry import Setting, version_in
from accelconf.accelerate.validate.context import Context, _is_sagemaker, _suits, did_you_mean, rule


@rule("key-too-new", "removed-key", "unknown-key")
def _unknown_keys(ctx: Context) -> None:
    data = ctx.doc.data
    sagemaker = _is_sagemaker(ctx)
    allowed_top = registry.SAGEMAKER_KEYS if sagemaker else registry.CLUSTER_ONLY_KEYS | {"fp16", "dynamo_backend"}
    for key in data:
        skey = str(key)
        setting = registry.get("", skey)
        if setting is not None and skey in allowed_top:
            if not setting.exists_in(ctx.version):
                removed = setting.until is not None and not version_in(ctx.version, None, setting.until)
                msg = (
                    (setting.deprecated or f"`{skey}` does not exist in accelerate {ctx.version}")
                    if removed
                    else f"`{skey}` needs accelerate {setting.since} or newer (checking against {ctx.version})"
                )
                fix = ctx.delete_key((skey,)) if removed else ()
                ctx.finding(
                    "removed-key" if removed else "key-too-new",
                    "error",
                    f"{msg.rstrip('.')}; accelerate refuses to load a config with unknown top-level keys",
                    (skey,),
                    fix=fix,
                )
            continue
        if sagemaker and setting is not None:
            continue  # reported by the sagemaker rule
        if setting is not None:  # a SageMaker key in a cluster config: no other spelling to suggest
            ctx.finding(
                "unknown-key",
                "error",
                f"`{skey}` is a SageMaker config key: a LOCAL_MACHINE config may not have it, accelerate refuses to "
                "load the file (ValueError: unknown keys)",
                (skey,),
            )
            continue
        guess = did_you_mean("", skey, ctx.version)
        fix = ctx.rename_key((skey,), guess) if guess and _suits(registry.get("", guess), data[key]) else ()
        ctx.finding(
            "unknown-key",
            "error",
            f"unknown top-level key `{skey}`: accelerate refuses to load the file (ValueError: unknown keys)",
            (skey,),
            suggestion=guess,
            fix=fix,
        )


@rule("alias-too-new", "unknown-nested-key")
def _unknown_nested(ctx: Context) -> None:
    for path, entry in ctx.cfg.unknown.items():
        if "." not in path:
            continue
        section, key = path.split(".", 1)
        setting, how = registry.lookup(section, key, ctx.version)
        if how == "alias-too-new" and setting is not None:
            sec = registry.SECTIONS[section]
            ctx.finding(
                "alias-too-new",
                "warning",
                f"`{key}` without the `{sec.prefix}` prefix is ignored before accelerate {sec.prefix_optional_since} "
                f"(checking against {ctx.version})",
                (section, key),
                suggestion=setting.key,
                fix=ctx.rename_key((section, key), setting.key),
            )
            continue
        guess = did_you_mean(section, key, ctx.version)
        fix = (
            ctx.rename_key((section, key), guess) if guess and _suits(registry.get(section, guess), entry.value) else ()
        )
        extra = f"; did you mean `{guess}`?" if guess else ""
        ctx.finding(
            "unknown-nested-key",
            "warning",
            f"unknown key `{key}` in `{section}`: accelerate ignores it silently{extra}",
            (section, key),
            suggestion=guess,
            fix=fix,
        )


@rule("key-too-new", "removed-key")
def _versions(ctx: Context) -> None:
    for _path, entry in list(ctx.cfg.entries.items()) + list(ctx.cfg.unknown.items()):
        s = entry.setting
        if s is None or not s.section or s.exists_in(ctx.version):
            continue
        sec = registry.SECTIONS.get(s.section)
        if sec is not None and not version_in(ctx.version, sec.since, sec.until):
            continue  # the whole section is reported at the top level
        keypath = (s.section, entry.written_key)
        if s.until is not None and not version_in(ctx.version, None, s.until):
            msg = s.deprecated or f"`{s.key}` was removed in accelerate {s.until}; it is ignored"
            ctx.finding("removed-key", "warning", msg, keypath, fix=ctx.delete_key(keypath))
        else:
            _too_new(ctx, s, entry, keypath)


def _too_new(ctx: Context, s: Setting, entry: Entry, keypath: tuple[str, ...]) -> None:
    """A key the target release does not know yet, judged per value: ignoring it matters only where the
    value differs from what that release does without it (Setting.before_since); then the registry says
    whether something else runs than written (Setting.too_new)."""
    head = f"`{s.key}` needs accelerate {s.since} or newer; accelerate {ctx.version} ignores it"
    value = canonical(s, entry.value)
    if s.runs_before_since(value):
        shown = "true" if value is True else "false" if value is False else value
        ctx.finding(
            "key-too-new", "info", f"{head}, which changes nothing: `{s.key}: {shown}` is what it runs anyway", keypath
        )
        return
    changes = s.too_new == "error"
    ctx.finding(
        "key-too-new",
        "error" if changes else "warning",
        head + (" and runs something else than written" if changes else ""),
        keypath,
    )
