"""A DeepSpeed config next to an accelerate config (the composition of :mod:`accelconf.accelerate` and
:mod:`accelconf.deepspeed`, so it lives above the DeepSpeed package, which never imports accelerate/): the cross-check
of an accelerate file with the
DeepSpeed file its ``deepspeed_config_file`` names, the conversion of a DeepSpeed JSON to an
accelerate ``deepspeed_config`` section, and :data:`DS_TO_ACCELERATE`, the one mapping of DeepSpeed
JSON keys to accelerate keys (from the settings registry, ``accelconf/accelerate/registry.py``).

Facts from accelerate 1.15.0 ``accelerate/utils/dataclasses.py`` (``DeepSpeedPlugin``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from accelconf.accelerate import registry as _registry
from accelconf.deepspeed.keys import _OPT_PARAMS_AUTO, lookup
from accelconf.deepspeed.values import _enabled, _fmt, _stage
from accelconf.findings import Finding, Severity
from accelconf.text.document import Document, Node

# accelerate config `deepspeed_config` keys that raise next to a deepspeed_config_file
# (DeepSpeedPlugin._deepspeed_config_checks, accelerate 1.15.0), with the DeepSpeed key they mirror.
# accelerate deepspeed_config key -> DeepSpeed JSON path, from the settings registry.
CONFLICTING_KEYS: dict[str, str] = _registry.deepspeed_json_keys()
# The same mapping the other way: DeepSpeed JSON path -> accelerate config path (``deepspeed_config.KEY``).
DS_TO_ACCELERATE: dict[str, str] = {ds: f"deepspeed_config.{key}" for key, ds in CONFLICTING_KEYS.items()}

_IGNORED_LIST = (
    "['gradient_accumulation_steps', 'gradient_clipping', 'zero_stage', 'offload_optimizer_device', "
    "'offload_param_device', 'offload_param_nvme_path', 'offload_optimizer_nvme_path', "
    "'zero3_save_16bit_model', 'mixed_precision']"
)


def _walk_values(node: Node, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Node]]:
    if node.kind == "map":
        for k, v in node.pairs:
            if isinstance(k.value, str):
                yield from _walk_values(v, path + (k.value,))
    elif node.kind == "scalar":
        yield path, node


def crosscheck(
    accel_data: dict[str, Any], accel_doc: Document | None, ds_doc: Document, *, key_conflicts: bool = True
) -> list[Finding]:
    """Check an accelerate config against the DeepSpeed file its ``deepspeed_config_file`` names.

    Reports (rule ``ds-accelerate-conflict``) the accelerate keys that make
    ``DeepSpeedPlugin._deepspeed_config_checks`` raise ValueError at training time, and (rule
    ``ds-accelerate-auto``, info) each ``"auto"`` in the DeepSpeed file that accelerate fills, with
    the source of the value. Findings carry ``path`` so that they can point into either file.
    ``key_conflicts=False`` leaves out the conflicts that need only the accelerate config (the keys
    themselves), for a caller that reports those already; what needs the JSON is always reported.
    """
    section = accel_data.get("deepspeed_config")
    ds_cfg: dict[str, Any] = section if isinstance(section, dict) else {}
    ds_data = ds_doc.data if isinstance(ds_doc.data, dict) else {}
    findings: list[Finding] = []
    if key_conflicts:
        findings += _section_key_conflicts(ds_cfg, ds_data, accel_doc)
    findings += _precision_conflicts(accel_data, ds_data, accel_doc, key_conflicts)
    findings += _zero3_init_conflict(ds_cfg, ds_data, accel_doc)
    findings += _missing_in_ds_file(ds_data, ds_doc.path)
    findings += _auto_fills(ds_doc, ds_cfg, accel_data)
    return findings


def _accel_conflict(
    accel_doc: Document | None, severity: Severity, message: str, key: str, related: str | None = None
) -> Finding:
    """A ``ds-accelerate-conflict`` finding at ``key`` of the accelerate file (no position without one)."""
    line, col, el, ec = accel_doc.span(key) if accel_doc is not None else (0, 0, 0, 0)
    return Finding(
        "ds-accelerate-conflict",
        severity,
        message,
        key,
        line,
        col,
        related,
        el,
        ec,
        path=accel_doc.path if accel_doc is not None else "",
    )


def _section_key_conflicts(
    ds_cfg: dict[str, Any], ds_data: dict[str, Any], accel_doc: Document | None
) -> list[Finding]:
    """The ``deepspeed_config`` keys accelerate refuses next to a ``deepspeed_config_file``."""
    findings: list[Finding] = []
    for ykey, dskey in CONFLICTING_KEYS.items():
        if ykey not in ds_cfg:
            continue
        file_value = _get(ds_data, dskey)
        have = (
            f"the DeepSpeed file has `{dskey}` = {_fmt(file_value)}"
            if file_value is not _MISSING
            else f"set `{dskey}` in the DeepSpeed file instead"
        )
        findings.append(
            _accel_conflict(
                accel_doc,
                "error",
                f"`deepspeed_config.{ykey}` cannot be used with `deepspeed_config_file`: accelerate raises "
                f'"When using `deepspeed_config_file`, the following accelerate config variables will be '
                f'ignored: {_IGNORED_LIST}"; {have}',
                f"deepspeed_config.{ykey}",
                dskey,
            )
        )
    return findings


def _precision_conflicts(
    accel_data: dict[str, Any], ds_data: dict[str, Any], accel_doc: Document | None, key_conflicts: bool
) -> list[Finding]:
    """A top-level ``mixed_precision``/``fp16`` next to the file, and a precision the file contradicts."""
    mp_key = "mixed_precision" if "mixed_precision" in accel_data else ("fp16" if accel_data.get("fp16") else None)
    if mp_key is None:
        return []
    findings: list[Finding] = []
    mp = accel_data.get("mixed_precision", "fp16")
    if key_conflicts:
        enabled = [b for b in ("fp16", "bf16") if _enabled(ds_data.get(b))]
        hint = (
            f"the DeepSpeed file enables {enabled[0]}"
            if enabled
            else (
                'control precision with `fp16.enabled`/`bf16.enabled` in the DeepSpeed file ("auto" takes '
                "--mixed_precision)"
            )
        )
        findings.append(
            _accel_conflict(
                accel_doc,
                "error",
                f"top-level `{mp_key}` ({_fmt(mp)}) cannot be used with `deepspeed_config_file`: accelerate "
                f"raises ValueError at launch; remove it and {hint}, or pass --mixed_precision on the command line",
                mp_key,
            )
        )
    if isinstance(mp, str) and mp in ("fp16", "bf16", "fp8"):
        other = "bf16" if mp == "fp16" else "fp16"
        if _enabled(ds_data.get(other)):
            findings.append(
                _accel_conflict(
                    accel_doc,
                    "error",
                    f"mixed_precision {mp} with `{other}.enabled: true` in the DeepSpeed file: accelerate raises "
                    f'"--mixed_precision arg cannot be set to {mp} when {other} is set in the DeepSpeed config file"',
                    mp_key,
                )
            )
    return findings


def _zero3_init_conflict(ds_cfg: dict[str, Any], ds_data: dict[str, Any], accel_doc: Document | None) -> list[Finding]:
    """``zero3_init_flag: true`` next to a file of another ZeRO stage (accelerate turns it off)."""
    stage = _stage(ds_data)
    if ds_cfg.get("zero3_init_flag") is True and stage is not None and stage != 3:
        return [
            _accel_conflict(
                accel_doc,
                "warning",
                f"`zero3_init_flag: true` but the DeepSpeed file uses ZeRO stage {stage}; accelerate turns it off "
                "with a warning",
                "deepspeed_config.zero3_init_flag",
            )
        ]
    return []


def _missing_in_ds_file(ds_data: dict[str, Any], ds_name: str) -> list[Finding]:
    """What the DeepSpeed file leaves out that accelerate needs or fills."""
    findings: list[Finding] = []
    if "zero_optimization" not in ds_data:
        findings.append(
            Finding(
                "ds-zero-missing",
                "error",
                "the DeepSpeed file has no `zero_optimization` section: accelerate raises "
                '"Please specify the ZeRO optimization config in the DeepSpeed config"',
                "",
                1,
                1,
                "zero_optimization",
                path=ds_name,
            )
        )
    if "gradient_accumulation_steps" not in ds_data:
        findings.append(
            Finding(
                "ds-accelerate-auto",
                "info",
                "no `gradient_accumulation_steps`: accelerate sets it to 1",
                "",
                1,
                1,
                path=ds_name,
            )
        )
    return findings


def _auto_fills(ds_doc: Document, ds_cfg: dict[str, Any], accel_data: dict[str, Any]) -> list[Finding]:
    """Each ``"auto"`` of the DeepSpeed file that accelerate fills, with where the value comes from."""
    findings: list[Finding] = []
    if ds_doc.root is None:
        return findings
    for path, node in _walk_values(ds_doc.root, ()):
        if node.value != "auto":
            continue
        dotted = ".".join(path)
        source = _accelerate_source(path, ds_cfg, accel_data)
        if source is None:
            continue
        findings.append(
            Finding(
                "ds-accelerate-auto",
                "info",
                f'`{dotted}` "auto" is filled by accelerate from {source}',
                dotted,
                node.line + 1,
                node.col + 1,
                None,
                node.end_line + 1,
                node.end_col + 1,
                path=ds_doc.path,
            )
        )
    return findings


_MISSING: Any = object()


def _get(data: Any, dotted: str) -> Any:
    cur = data
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return _MISSING
        cur = cur[part]
    return cur


def _accelerate_source(path: tuple[str, ...], ds_cfg: dict[str, Any], accel_data: dict[str, Any]) -> str | None:
    if path[:2] == ("optimizer", "params") and len(path) == 3:
        fill = dict(_OPT_PARAMS_AUTO.get(path[2], ()))
        return fill.get("accelerate")
    spec = lookup(path)
    if spec is None:
        return None
    source = spec.fillers().get("accelerate")
    if source is None:
        return None
    # say which value the plugin will actually carry when the YAML has it (it raises then, but say so)
    reverse = {v: k for k, v in CONFLICTING_KEYS.items()}
    ykey = reverse.get(".".join(path))
    if ykey and ykey in ds_cfg:
        source += f" (the YAML sets {_fmt(ds_cfg[ykey])}, which raises next to a file)"
    if path == ("fp16", "enabled") or path == ("bf16", "enabled"):
        source += "; --mixed_precision on the command line or ACCELERATE_MIXED_PRECISION"
    return source


def accelerate_world_size(accel_data: dict[str, Any]) -> int | None:
    """The world size an accelerate config launches (``num_processes``, the total over machines)."""
    n = accel_data.get("num_processes")
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None


@dataclass
class _Conversion:
    """The ``deepspeed_config`` section being built from a DeepSpeed config, and the notes on it."""

    out: dict[str, Any] = field(default_factory=dict)
    notes: list[Finding] = field(default_factory=list)

    def note(self, rule: str, message: str, key: str = "") -> None:
        self.notes.append(Finding(f"convert.ds-{rule}", "info", message, key))


# The zero_optimization keys and the top-level keys to_accelerate_section maps to an accelerate key.
_MAPPED_ZERO = {
    "stage",
    "offload_optimizer",
    "offload_param",
    "stage3_gather_16bit_weights_on_model_save",
    "gather_16bit_weights_on_model_save",
    "stage3_gather_fp16_weights_on_model_save",
}
_MAPPED_TOP = {"zero_optimization", "gradient_accumulation_steps", "gradient_clipping", "fp16", "bf16", "bfloat16"}


def to_accelerate_section(ds_data: dict[str, Any]) -> tuple[dict[str, Any], list[Finding]]:
    """The accelerate ``deepspeed_config`` keys equivalent to a DeepSpeed config, and notes on what does not map.

    The top-level ``mixed_precision`` (from fp16/bf16) is returned under the key
    ``"mixed_precision"``; the caller moves it out of the section. Values that are ``"auto"``
    are left to the plugin defaults, with a note. Notes are findings (``info``, no position), by
    rule: ``convert.ds-unmapped`` (no accelerate key), ``convert.ds-not-exported`` (a key accelerate
    never passes on), ``convert.ds-auto`` (left to accelerate's default), ``convert.ds-default-stage``,
    ``convert.ds-precision-conflict``.
    """
    conv = _Conversion()
    z = _zero_section(ds_data, conv)
    _convert_stage(z, conv)
    for which in ("optimizer", "param"):
        _convert_offload(z, which, conv)
    for k in ("gradient_accumulation_steps", "gradient_clipping"):
        _convert_top_value(ds_data, k, conv)
    save16 = z.get(
        "stage3_gather_16bit_weights_on_model_save",
        z.get("gather_16bit_weights_on_model_save", z.get("stage3_gather_fp16_weights_on_model_save")),
    )
    if save16 is not None and save16 != "auto":
        conv.out["zero3_save_16bit_model"] = bool(save16)
    if "zero_stage" in conv.out:
        conv.out["zero3_init_flag"] = conv.out["zero_stage"] == 3
    _convert_precision(ds_data, conv)
    _note_unmapped(ds_data, z, conv)
    return conv.out, conv.notes


def _zero_section(ds_data: dict[str, Any], conv: _Conversion) -> dict[str, Any]:
    """``zero_optimization`` as a mapping (``true`` is stage 1; none is noted)."""
    z = ds_data.get("zero_optimization")
    if z is True:
        z = {"stage": 1}
    if not isinstance(z, dict):
        z = {}
        conv.note(
            "default-stage",
            "no zero_optimization section: the accelerate plugin defaults to ZeRO stage 2, "
            "DeepSpeed to stage 0; zero_stage 0 written",
        )
    return z


def _convert_stage(z: dict[str, Any], conv: _Conversion) -> None:
    if z.get("stage", 0) == "auto":
        conv.note(
            "auto", 'zero_optimization.stage is "auto": left to the accelerate default (2)', "zero_optimization.stage"
        )
    else:
        conv.out["zero_stage"] = _stage({"zero_optimization": z})


def legacy_offload_key(z: dict[str, Any], which: str) -> str | None:
    """The deprecated boolean a ``zero_optimization`` section writes for ``offload_{which}``
    (``cpu_offload``, ``cpu_offload_param``: the DeepSpeed table's ``replaced_by``), or ``None``.
    DeepSpeed reads ``true`` as ``{"device": "cpu"}`` and ``false`` as no offload
    (``runtime/zero/config.py``, their ``new_param_fn``), and refuses it beside its replacement."""
    section = lookup("zero_optimization")
    target = f"zero_optimization.offload_{which}"
    for name, key in (section.children or {}).items() if section is not None else ():
        if name in z and key.replaced_by == target and key.type == "boolean":
            return name
    return None


def _convert_offload(z: dict[str, Any], which: str, conv: _Conversion) -> None:
    """``offload_{which}`` (optimizer or param): its device and NVMe path, or the deprecated boolean's."""
    off = z.get(f"offload_{which}")
    if not isinstance(off, dict):
        legacy = legacy_offload_key(z, which)
        conv.out[f"offload_{which}_device"] = "cpu" if legacy is not None and z[legacy] is True else "none"
        return
    device = off.get("device", "none")
    if device == "auto":
        conv.note(
            "auto",
            f'zero_optimization.offload_{which}.device is "auto": left to the accelerate default (none)',
            f"zero_optimization.offload_{which}.device",
        )
    else:
        conv.out[f"offload_{which}_device"] = device
    if off.get("nvme_path") not in (None, "auto"):
        conv.out[f"offload_{which}_nvme_path"] = off["nvme_path"]
        conv.note(
            "not-exported",
            f"offload_{which}_nvme_path: accelerate 1.15 does not export it to the training "
            "process (ACCELERATE_DEEPSPEED_OFFLOAD_*_NVME_PATH is never set); keep a deepspeed_config_file for NVMe",
        )
    extra = [k for k in off if k not in ("device", "nvme_path")]
    if extra:
        conv.note("unmapped", f"zero_optimization.offload_{which}: no accelerate key for {', '.join(extra)}")


def _convert_top_value(ds_data: dict[str, Any], k: str, conv: _Conversion) -> None:
    """A top-level number accelerate has a key of the same name for ("auto" is left to its default)."""
    v = ds_data.get(k)
    if v is None:
        return
    if v == "auto":
        conv.note("auto", f'{k} is "auto": left to the accelerate default', k)
    else:
        conv.out[k] = v


def _convert_precision(ds_data: dict[str, Any], conv: _Conversion) -> None:
    """fp16/bf16 ``enabled`` -> the top-level ``mixed_precision``."""
    fp16, bf16 = _enabled(ds_data.get("fp16")), _enabled(ds_data.get("bf16") or ds_data.get("bfloat16"))
    if fp16 and not bf16:
        conv.out["mixed_precision"] = "fp16"
    elif bf16 and not fp16:
        conv.out["mixed_precision"] = "bf16"
    elif not fp16 and not bf16:
        if any(isinstance(ds_data.get(b), dict) and ds_data[b].get("enabled") == "auto" for b in ("fp16", "bf16")):
            conv.note("auto", 'fp16/bf16 enabled is "auto": mixed_precision is left unset')
        else:
            conv.out["mixed_precision"] = "no"
    else:
        conv.note(
            "precision-conflict",
            "fp16 and bf16 are both enabled (DeepSpeed rejects this): mixed_precision is left unset",
        )


def _note_unmapped(ds_data: dict[str, Any], z: dict[str, Any], conv: _Conversion) -> None:
    """A note for each DeepSpeed key that has no accelerate key."""
    legacy = {legacy_offload_key(z, which) for which in ("optimizer", "param")}
    rest_zero = [k for k in z if k not in _MAPPED_ZERO and k not in legacy]
    if rest_zero:
        conv.note("unmapped", "zero_optimization keys with no accelerate key: " + ", ".join(rest_zero))
    for b in ("fp16", "bf16", "bfloat16"):
        block = ds_data.get(b)
        if isinstance(block, dict):
            extra = [k for k in block if k != "enabled"]
            if extra:
                conv.note("unmapped", f"{b}: no accelerate key for {', '.join(extra)}")
    for k in ds_data:
        if k in _MAPPED_TOP or k == "steps_per_print":
            continue
        if k in ("train_batch_size", "train_micro_batch_size_per_gpu"):
            conv.note("unmapped", f"{k}: no accelerate key (accelerate derives it from the dataloader batch size)")
        else:
            conv.note("unmapped", f"{k}: no accelerate key; keep a deepspeed_config_file to use it")
