"""Validation of a DeepSpeed config, key by key against the table: unknown keys, types, enums,
ranges, versions, "auto" and who fills it. The rules between keys live in :mod:`.rules`.

Findings are 1-based (end exclusive); :class:`accelconf.text.document.Node` positions are 0-based
and converted here. Never imports deepspeed.
"""

from __future__ import annotations

from typing import Any

from packaging.version import Version

from accelconf.deepspeed import signatures
from accelconf.deepspeed.context import Context as _Ctx
from accelconf.deepspeed.keys import (
    _OPT_PARAMS_AUTO,
    _REMOVED_TOP,
    _UNSET,
    ISSUE_8489,
    OLDEST,
    RUNTIMES,
    TOP,
    ZERO,
    Key,
    _child,
    _ver,
    iter_keys,
)
from accelconf.deepspeed.rules import rules as _rules
from accelconf.deepspeed.values import _coerce, _fmt, _json_type, _lax_ok, _strict_ok, lax_bool
from accelconf.errors import UsageError
from accelconf.findings import Finding, Severity
from accelconf.text import suggest
from accelconf.text.document import Document, Node


def _suggest(name: str, section: Key) -> list[str]:
    names: list[str] = []
    for canon, k in (section.children or {}).items():
        if k.removed is None:
            names.append(canon)
            names.extend(k.aliases)
    lowered = {n.lower(): n for n in names}
    return suggest.ranked(name, names) or [lowered[m] for m in suggest.ranked(name.lower(), lowered)]


def _where_else(name: str) -> list[str]:
    """Other sections that know a key of this name (for a key at the wrong level)."""
    return [p for p, k in iter_keys() if p.rsplit(".", 1)[-1] == name and k.removed is None]


def _strict_here(ctx: _Ctx, section: Key) -> bool | None:
    """Whether unknown keys of this section raise in the target version (None: depends on the version)."""
    if section.strict_since is None:
        return False
    since = _ver(section.strict_since)
    if ctx.version is None:
        return True if since is None or since <= Version(OLDEST) else None
    return since is None or ctx.version >= since


def validate_deepspeed(
    doc: Document, *, world_size: int | None = None, runtime: str = "accelerate", deepspeed_version: str | None = None
) -> list[Finding]:
    """Check a DeepSpeed config. Returns findings (1-based positions), never raises on content.

    ``runtime`` is who runs the file: ``deepspeed`` (plain ``deepspeed.initialize``),
    ``accelerate`` (``Accelerator.prepare``) or ``transformers`` (the HF Trainer, which fills
    more ``"auto"`` values). ``deepspeed_version`` turns version-dependent warnings (removed
    blocks, keys newer than the version) into errors; ``world_size`` enables the batch equation.
    Raises :class:`accelconf.errors.UsageError` for an unknown runtime or an unparsable version.
    """
    if runtime not in RUNTIMES:
        raise UsageError(f"runtime must be one of {', '.join(RUNTIMES)}, not {runtime!r}")
    version = _ver(deepspeed_version) if deepspeed_version else None
    if deepspeed_version and version is None:
        raise UsageError(f"not a DeepSpeed version: {deepspeed_version!r}")
    ctx = _Ctx(doc, runtime, version)
    ctx.autotuning = (
        isinstance(doc.data, dict)
        and isinstance(doc.data.get("autotuning"), dict)
        and doc.data["autotuning"].get("enabled") is True
    )
    portability: dict[str, list[Any]] = {}
    for q in doc.quirks:
        if q.kind == "duplicate-key":
            # DeepSpeed's file loader raises on duplicates; json.load (accelerate, transformers) keeps the last
            ctx.findings.append(
                Finding(
                    "ds-duplicate-key",
                    "error" if runtime == "deepspeed" else "warning",
                    q.message + "; DeepSpeed's own file loader rejects duplicate keys, "
                    "accelerate and transformers silently keep the last one",
                    "",
                    q.line + 1,
                    q.col + 1,
                )
            )
        else:
            portability.setdefault(q.kind, []).append(q)
    # one finding per kind and file (the first place, and how many more), not one per comment line
    for qs in portability.values():
        q = qs[0]
        more = f" ({len(qs)} in this file, on lines {_lines([x.line + 1 for x in qs])})" if len(qs) > 1 else ""
        ctx.findings.append(
            Finding(
                "ds-json-portability",
                "warning",
                q.message
                + more
                + (
                    "; DeepSpeed's hjson loader reads it, other tools may not"
                    if runtime == "deepspeed"
                    else f"; {runtime} reads this file with json.load and fails"
                ),
                "",
                q.line + 1,
                q.col + 1,
            )
        )
    root = doc.root
    if root is None or root.kind != "map":
        ctx.add("ds-type", "error", "a DeepSpeed config must be a JSON object", "", root)
        return ctx.findings
    _walk(ctx, TOP, root, ())
    data = doc.data if isinstance(doc.data, dict) else {}
    _rules(ctx, data, world_size)
    return ctx.findings


def _lines(lines: list[int]) -> str:
    shown = ", ".join(str(n) for n in sorted(set(lines))[:8])
    return shown + (", ..." if len(set(lines)) > 8 else "")


def _auto_severity(ctx: _Ctx, k: Key, strict_section: bool) -> tuple[Severity, str] | None:
    """Severity and reason of an "auto" value for the runtime, or None when it will be filled."""
    fill = k.fillers()
    if "native" in fill or ("autotuner" in fill and ctx.autotuning):
        return None
    if ctx.runtime == "transformers" and ("transformers" in fill or "accelerate" in fill):
        return None
    if ctx.runtime == "accelerate" and "accelerate" in fill:
        return None
    if ctx.runtime == "deepspeed":
        if strict_section:
            d = "null" if k.default is _UNSET else _fmt(k.default)
            return "warning", f'plain DeepSpeed silently drops "auto" here and uses the default {d}'
        return "error", 'plain DeepSpeed does not fill "auto": it keeps the string and fails when it uses the value'
    who = "the HF Trainer" if ctx.runtime == "transformers" else "accelerate"
    others = [w for w in fill if w in ("accelerate", "transformers")]
    hint = (
        f" (only {' and '.join('the HF Trainer' if w == 'transformers' else w for w in others)} fills it)"
        if others
        else ""
    )
    return "error", f'{who} does not fill "auto" here{hint}: accelerator.prepare() raises ValueError'


def _walk(ctx: _Ctx, section: Key, node: Node, path: tuple[str, ...]) -> None:
    strict = _strict_here(ctx, section)
    seen: dict[str, tuple[str, Node]] = {}
    for knode, vnode in node.pairs:
        name = knode.value
        if not isinstance(name, str):
            continue
        dotted = ".".join(path + (name,))
        canon, spec = _child(section, name)
        if spec is None:
            if section.open:
                continue
            auto = vnode.kind == "scalar" and vnode.value == "auto"
            _unknown(ctx, section, False if auto and section.strict_since is not None else strict, name, dotted, knode)
            continue
        if canon in seen and seen[canon][0] != name:
            ctx.add(
                "ds-alias-conflict",
                "error",
                f"`{name}` and `{seen[canon][0]}` are the same setting; DeepSpeed rejects both together",
                dotted,
                knode,
            )
        seen[canon] = (name, knode)
        if not path and name == "bfloat16" and _non_null(node, "bf16"):
            # DeepSpeed reads `bf16` and never looks at this block (get_bfloat16_config): only its name is said
            if spec.deprecated:
                ctx.add("ds-deprecated", "warning", spec.deprecated, dotted, knode, spec.replaced_by)
            continue
        _check_value(ctx, section, spec, knode, vnode, path + (name,), strict)


def _non_null(node: Node, name: str) -> bool:
    """``name`` is a key of the mapping ``node`` with a value other than null."""
    return any(k.value == name and not (v.kind == "scalar" and v.value is None) for k, v in node.pairs)


def _unknown(ctx: _Ctx, section: Key, strict: bool | None, name: str, dotted: str, knode: Node) -> None:
    ranked = _suggest(name, section)
    elsewhere = [p for p in _where_else(name) if p != dotted]
    where = ".".join(dotted.split(".")[:-1]) or "the top level"
    if strict is True:
        severity: Severity = "error"
        effect = "DeepSpeed rejects it (extra_forbidden)"
    elif strict is None:
        severity = "warning"
        effect = f"DeepSpeed {section.strict_since} and newer reject it; older versions ignore it"
    else:
        severity = "warning"
        effect = "DeepSpeed silently ignores it"
    message = f"unknown key `{name}` in {where}: {effect}"
    suggestion = None
    if name.startswith(("_", "//", "#")):
        ranked, elsewhere = [], []
        message += " (a comment key?)"
    if ranked:
        suggestion = ranked[0]
        message += "; did you mean " + " or ".join(f"`{r}`" for r in ranked) + "?"
    elif elsewhere:
        suggestion = elsewhere[0]
        message += (
            f"; `{name}` belongs in `{elsewhere[0].rsplit('.', 1)[0] if '.' in elsewhere[0] else 'the top level'}`"
        )
    ctx.add("ds-unknown-key", severity, message, dotted, knode, suggestion)


def _check_value(
    ctx: _Ctx, section: Key, spec: Key, knode: Node, vnode: Node, path: tuple[str, ...], strict: bool | None
) -> None:
    dotted = ".".join(path)
    # versions: removed / newer than the target
    # DeepSpeedConfigModel drops "auto" values before pydantic sees them (deepspeed/runtime/config_utils.py),
    # so a removed, too new or unknown key set to "auto" in a pydantic section is ignored, not rejected
    dropped = section.strict_since is not None and vnode.kind == "scalar" and vnode.value == "auto"
    if spec.removed and _removed_key(ctx, section, spec, knode, path, dropped):
        return
    if spec.since and ctx.active(spec.since, None) is False:
        rejects = strict and not dropped
        ctx.add(
            "ds-version",
            "error" if rejects else "warning",
            f"`{dotted}` needs DeepSpeed {spec.since} or newer; {ctx.version} {'rejects' if rejects else 'ignores'} it",
            dotted,
            knode,
        )
        if not rejects:
            return  # that release never reads it: its value does not matter there
    if spec.deprecated:
        ctx.add("ds-deprecated", "warning", spec.deprecated, dotted, knode, spec.replaced_by)
        _deprecated_with_replacement(ctx, section, spec, knode, vnode, path)
    pydantic_section = section.strict_since is not None and strict is not False
    if vnode.kind == "scalar" and vnode.value == "auto":
        result = _auto_severity(ctx, spec, pydantic_section)
        if result is not None:
            sev, why = result
            ctx.add("ds-auto", sev, f'`{dotted}` is "auto": {why}', dotted, vnode)
    elif spec.children is not None:
        _check_section_value(ctx, spec, vnode, path)
    elif spec.open:
        _check_open_value(ctx, spec, vnode, path)
    else:
        before = len(ctx.findings)
        _check_scalar(ctx, spec, vnode, dotted, pydantic_section)
        if strict is None:
            _errors_become_warnings(ctx, before, section)


def _removed_key(ctx: _Ctx, section: Key, spec: Key, knode: Node, path: tuple[str, ...], dropped: bool) -> bool:
    """The finding on a key DeepSpeed removed; True when nothing more is to be said about its value."""
    dotted, name = ".".join(path), path[-1]
    raises = (section is TOP and name in _REMOVED_TOP) or (section.strict_since is not None and not dropped)
    effect = "reject" if raises else "ignore"
    pointer = f" (see {ISSUE_8489})" if section is TOP and name in _REMOVED_TOP else ""
    if ctx.active(None, spec.removed) is False:
        ctx.add(
            "ds-removed",
            "error" if raises else "warning",
            f"`{dotted}`: {spec.removed_message}; DeepSpeed {spec.removed} and newer {effect} it, "
            f"and the target is {ctx.version}{pointer}",
            dotted,
            knode,
            spec.replaced_by,
        )
    elif ctx.version is None:
        ctx.add(
            "ds-removed",
            "warning",
            f"`{dotted}`: {spec.removed_message}; DeepSpeed {spec.removed} and newer {effect} it{pointer}",
            dotted,
            knode,
            spec.replaced_by,
        )
    return ctx.active(None, spec.removed) is False or not raises


def _check_section_value(ctx: _Ctx, spec: Key, vnode: Node, path: tuple[str, ...]) -> None:
    """A section: walked when it is an object; null where allowed; the legacy `zero_optimization: true`."""
    dotted = ".".join(path)
    value = vnode.value if vnode.kind == "scalar" else None
    if vnode.kind == "map":
        _walk(ctx, spec, vnode, path)
    elif vnode.kind == "scalar" and value is None and spec.nullable:
        return
    elif spec is ZERO and vnode.kind == "scalar" and isinstance(value, bool):
        ctx.add(
            "ds-deprecated",
            "warning",
            '`"zero_optimization": true` is the legacy form (stage 1); write `{"stage": 1}`',
            dotted,
            vnode,
            '{"stage": 1}',
        )
    else:
        ctx.add(
            "ds-type", "error", f"`{dotted}` must be an object, not {_json_type(_node_value(vnode))}", dotted, vnode
        )


def _check_open_value(ctx: _Ctx, spec: Key, vnode: Node, path: tuple[str, ...]) -> None:
    """A key whose keys are free (optimizer params, ...): its type only, and the optimizer's params."""
    dotted = ".".join(path)
    types = [spec.type] if isinstance(spec.type, str) else list(spec.type)
    v = _node_value(vnode)
    if not any(_strict_ok(v, t) for t in types) and not (v is None and spec.nullable):
        ctx.add("ds-type", "error", f"`{dotted}` must be {_type_words(spec)}, not {_json_type(v)}", dotted, vnode)
    if path[-1] == "params" and path[:1] == ("optimizer",) and vnode.kind == "map":
        _optimizer_params(ctx, vnode, path)


def _errors_become_warnings(ctx: _Ctx, before: int, section: Key) -> None:
    """The section became a strict pydantic model inside the supported range: not an error for every version."""
    for i in range(before, len(ctx.findings)):
        f = ctx.findings[i]
        if f.severity == "error":
            ctx.findings[i] = f.replace(
                severity="warning",
                message=f.message + f" (DeepSpeed {section.strict_since} and newer reject it)",
            )


def _deprecated_with_replacement(
    ctx: _Ctx, section: Key, spec: Key, knode: Node, vnode: Node, path: tuple[str, ...]
) -> None:
    """A deprecated pydantic field given together with its replacement: DeepSpeed asserts."""
    if not spec.replaced_by or section.strict_since is None or (vnode.kind == "scalar" and vnode.value == "auto"):
        return
    parent = ctx.doc.node(path[:-1])
    target = spec.replaced_by.rsplit(".", 1)[-1]
    spellings = {target}
    replacement = (section.children or {}).get(target)
    if replacement is not None:
        spellings |= set(replacement.aliases)
    if parent is None or parent.kind != "map":
        return
    for k, v in parent.pairs:
        if k.value in spellings and not (v.kind == "scalar" and v.value == "auto"):
            ctx.add(
                "ds-alias-conflict",
                "error",
                f"cannot give the deprecated `{path[-1]}` together with its replacement "
                f"`{k.value}`; DeepSpeed raises AssertionError",
                ".".join(path),
                knode,
                None,
            )
            return


def _node_value(node: Node) -> Any:
    if node.kind == "scalar":
        return node.value
    if node.kind == "seq":
        return [_node_value(i) for i in node.items]
    return {k.value: _node_value(v) for k, v in node.pairs}


def _type_words(spec: Key) -> str:
    types = [spec.type] if isinstance(spec.type, str) else list(spec.type)
    words = {
        "boolean": "a boolean",
        "integer": "an integer",
        "number": "a number",
        "string": "a string",
        "array": "a list",
        "object": "an object",
        "null": "null",
    }
    if spec.nullable:
        types = types + ["null"]
    return " or ".join(words[t] for t in types)


def _check_scalar(ctx: _Ctx, spec: Key, vnode: Node, dotted: str, pydantic_section: bool) -> None:
    v = _node_value(vnode)
    types = [spec.type] if isinstance(spec.type, str) else list(spec.type)
    if v is None:
        if spec.nullable or any(t in ("object", "null") for t in types):
            return
        sev: Severity = "error" if (pydantic_section and spec.lax) or _hand_type_fatal(dotted, v, spec) else "warning"
        ctx.add("ds-type", sev, f"`{dotted}` must be {_type_words(spec)}, not null", dotted, vnode)
        return
    lax = pydantic_section and spec.lax
    if spec.no_bool and isinstance(v, bool):
        ctx.add(
            "ds-type",
            "error" if lax else "warning",
            f"`{dotted}` must be {_type_words(spec)}, not a boolean",
            dotted,
            vnode,
        )
        return
    if not any(_strict_ok(v, t) for t in types):
        t = next((t for t in types if lax and _lax_ok(v, t)), None)
        if t is None:
            _wrong_type(ctx, spec, vnode, v, dotted, lax)
            return
        ctx.add(
            "ds-type",
            "warning",
            f"`{dotted}` should be {_type_words(spec)}; DeepSpeed converts {_fmt(v)} but other tools will not",
            dotted,
            vnode,
        )
        v = _coerce(v, t)
    if isinstance(v, list) and spec.items:
        _check_items(ctx, spec, vnode, dotted, lax)
        return
    if dotted == "data_types.keep_in_fp32_modules" and isinstance(v, str) and v != "auto":
        ctx.add(
            "ds-enum",
            "error",
            f'`{dotted}` must be "auto" or a list of module-name patterns, not {_fmt(v)}',
            dotted,
            vnode,
            "auto",
        )
        return
    if dotted == "aio.use_gds" and lax_bool(v):
        ctx.add(
            "ds-enum",
            "warning",
            "`aio.use_gds` (GPUDirect Storage) works only on CUDA machines; DeepSpeed's config "
            "parser raises on any other accelerator",
            dotted,
            vnode,
        )
    if spec.enum and not isinstance(v, (list, dict)):
        _check_enum(ctx, spec, vnode, v, dotted, lax)
    _check_range(ctx, spec, vnode, v, dotted, lax)


def _wrong_type(ctx: _Ctx, spec: Key, vnode: Node, v: Any, dotted: str, lax: bool) -> None:
    """A value of the wrong type: an error where DeepSpeed rejects or reads it, else a warning."""
    sev: Severity = "error" if lax or _hand_type_fatal(dotted, v, spec) or _dtype_read(ctx, dotted) else "warning"
    extra = "" if sev == "error" else " (DeepSpeed does not check it here; expect a failure when it is used)"
    ctx.add(
        "ds-type",
        sev,
        f"`{dotted}` must be {_type_words(spec)}, not {_json_type(v)} {_fmt(v)}{extra}",
        dotted,
        vnode,
    )


def _check_items(ctx: _Ctx, spec: Key, vnode: Node, dotted: str, lax: bool) -> None:
    """The items of a list: their type, and the names of compile passes."""
    assert spec.items is not None
    for item_node in vnode.items:
        if not _strict_ok(_node_value(item_node), spec.items):
            sev: Severity = (
                "error"
                if lax or spec.items == "string" and dotted.startswith(("data_types.", "torch_autocast."))
                else "warning"
            )
            ctx.add("ds-type", sev, f"items of `{dotted}` must be {_type_words(Key(spec.items))}", dotted, item_node)
    if spec.enum is not None and dotted == "compile.passes":
        for item_node in vnode.items:
            if item_node.value not in ("z1", "z3", "autosp", "autotp"):
                ctx.add(
                    "ds-enum",
                    "error",
                    f"unknown compile pass {_fmt(item_node.value)}; expected one of z1, z3, autosp, autotp",
                    dotted,
                    item_node,
                )


def _hand_type_fatal(dotted: str, v: Any, spec: Key) -> bool:
    """Hand-parsed keys whose wrong type DeepSpeed's config parser itself trips over."""
    if dotted in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"):
        return True
    if dotted in ("wall_clock_breakdown", "flops_profiler.enabled"):
        # combined with `|` in DeepSpeedConfig: an integer passes (0 | False), anything else raises TypeError
        return not isinstance(v, int)
    if dotted == "torch_autocast.lower_precision_safe_modules":
        # get_lower_precision_safe_modules only iterates it: a string or an object of string keys passes
        return not isinstance(v, (str, dict))
    if dotted in (
        "communication_data_type",
        "seq_parallel_communication_data_type",
        "seq_parallel_comm_data_type",
        "gradient_allreduce_op",
        "checkpoint.tag_validation",
        "checkpoint.parallel_write.pipeline_stage",
        "data_types.keep_in_fp32_modules",
        "torch_autocast.dtype",
        "gradient_clipping",
        "optimizer.type",
        "checkpoint.writer.type",
        "checkpoint.writer.data_parallel",
        # the world size is divided by it
        "sequence_parallel_size",
    ):
        return True
    return False


def _check_enum(ctx: _Ctx, spec: Key, vnode: Node, v: Any, dotted: str, lax: bool) -> None:
    allowed = list(spec.enum)
    if spec.enum_case_insensitive and isinstance(v, str):
        ok = v.lower() in {str(a).lower() for a in allowed}
    elif lax and isinstance(v, (int, float, str)) and all(isinstance(a, int) for a in allowed):
        try:
            ok = float(v) in allowed
        except ValueError:
            ok = False
    else:
        ok = v in allowed
    if ok:
        return
    rule = "ds-zero-stage" if dotted == "zero_optimization.stage" else "ds-enum"
    fatal = (
        lax
        or _hand_type_fatal(dotted, v, spec)
        or dotted
        in ("tensor_parallel.dtype", "tensor_parallel.vocab_parallel_ce_backend", "weight_quantization.q_type")
    )
    if dotted.startswith(("scheduler.", "autotuning.")):
        fatal = True
    if dotted.startswith("data_types.") and not fatal:
        fatal = _dtype_read(ctx, dotted)
    suggestion = None
    if isinstance(v, str):
        lowered = {str(a).lower(): str(a) for a in allowed}
        folded = suggest.closest(v.lower(), lowered, 0.5)
        suggestion = suggest.closest(v, lowered.values(), 0.5) or (lowered[folded] if folded else None)
    what = (
        "ZeRO stage must be 0, 1, 2 or 3"
        if rule == "ds-zero-stage"
        else f"`{dotted}` must be one of {', '.join(_fmt(a) for a in allowed)}"
    )
    tail = "" if spec.enum_case_insensitive is False else " (case-insensitive)"
    ctx.add(rule, "error" if fatal else "warning", f"{what}{tail}, not {_fmt(v)}", dotted, vnode, suggestion)


def _dtype_read(ctx: _Ctx, dotted: str) -> bool:
    """Whether deepspeed.initialize reads this data_types key through DtypeEnum (raising ValueError on a
    spelling it does not know): param_dtype always (_assert_valid_mixed_precision_config),
    grad_accum_dtype with an optimizer (get_data_types), buffer_dtype in fp16/bf16 mode (_mixed_precision_dtypes)."""
    data = ctx.doc.data if isinstance(ctx.doc.data, dict) else {}
    if dotted == "data_types.param_dtype":
        return True
    if dotted == "data_types.grad_accum_dtype":
        return isinstance(data.get("optimizer"), dict) or ctx.runtime != "deepspeed"
    if dotted == "data_types.buffer_dtype":
        return any(
            lax_bool(b.get("enabled")) is True
            for b in (data.get("fp16"), data.get("bf16"), data.get("bfloat16"))
            if isinstance(b, dict)
        )
    return False


def _check_range(ctx: _Ctx, spec: Key, vnode: Node, v: Any, dotted: str, lax: bool) -> None:
    if not isinstance(v, (int, float)) or isinstance(v, bool) and not lax:
        return
    x = float(v)
    problems = []
    if spec.minimum is not None and x < spec.minimum:
        problems.append(f">= {spec.minimum:g}")
    if spec.exclusive_minimum is not None and x <= spec.exclusive_minimum:
        problems.append(f"> {spec.exclusive_minimum:g}")
    if spec.maximum is not None and x > spec.maximum:
        problems.append(f"<= {spec.maximum:g}")
    if spec.exclusive_maximum is not None and x >= spec.exclusive_maximum:
        problems.append(f"< {spec.exclusive_maximum:g}")
    if not problems:
        return
    sched = _scheduler_taking(ctx, dotted)
    fatal = (
        lax
        or sched is not None
        or dotted
        in (
            "train_batch_size",
            "train_micro_batch_size_per_gpu",
            "gradient_accumulation_steps",
            "sequence_parallel_size",
        )
    )
    older = spec.minimum_since and ctx.version is not None and ctx.version < Version(spec.minimum_since)
    if older:
        fatal = False
    rule = (
        "ds-batch"
        if dotted in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")
        else "ds-range"
    )
    extra = ""
    if dotted == "zero_optimization.reduce_bucket_size":
        extra = " (0 divides by zero in the ZeRO backward even where the config accepts it)"
    elif sched is not None:
        extra = (
            f"; DeepSpeed {spec.minimum_since} and newer raise ValueError in {sched}, {ctx.version} does not check it"
            if older
            else f": {sched} raises ValueError at deepspeed.initialize"
        )
    ctx.add(
        rule,
        "error" if fatal else "warning",
        f"`{dotted}` must be {' and '.join(problems)}, not {_fmt(v)}{extra}",
        dotted,
        vnode,
    )


def _scheduler_taking(ctx: _Ctx, dotted: str) -> str | None:
    """The DeepSpeed scheduler (``deepspeed/runtime/lr_schedules.py``) deepspeed.initialize passes this
    ``scheduler.params`` key to, whose ``__init__`` checks its range; None when there is none."""
    if not dotted.startswith("scheduler.params.") or not isinstance(ctx.doc.data, dict):
        return None
    sched = ctx.doc.data.get("scheduler")
    t = sched.get("type") if isinstance(sched, dict) else None
    spec = signatures.load()["classes"].get(f"deepspeed.runtime.lr_schedules.{t}") if isinstance(t, str) else None
    return t if spec is not None and dotted.rsplit(".", 1)[1] in spec["params"] else None


def _optimizer_params(ctx: _Ctx, vnode: Node, path: tuple[str, ...]) -> None:
    for knode, pnode in vnode.pairs:
        dotted = ".".join(path + (knode.value,))
        if knode.value == "max_grad_norm":
            ctx.add(
                "ds-optimizer",
                "error",
                "`max_grad_norm` in optimizer params is rejected at deepspeed.initialize "
                "(ValueError); use the top-level `gradient_clipping`",
                dotted,
                knode,
                "gradient_clipping",
            )
        if pnode.kind == "scalar" and pnode.value == "auto":
            fill = dict(_OPT_PARAMS_AUTO.get(knode.value, ()))
            result = _auto_severity(ctx, Key("any", auto=tuple(fill.items())), False)
            if result is not None:
                ctx.add("ds-auto", result[0], f'`{dotted}` is "auto": {result[1]}', dotted, pnode)
