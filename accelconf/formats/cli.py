"""``accelerate launch`` flags.

Reader: ``shlex``-splits a command line (a leading ``accelerate launch`` or ``accelerate-launch`` is
optional), accepts ``--a_b`` and ``--a-b``, ``--flag=value`` and ``--flag value``, stops at the
training script, and converts each value as accelerate's parser would (see
:func:`accelconf.accelerate.launch.flag_kind`), in config-file spelling: the 0/1 of ``str_to_bool`` flags are
booleans (:func:`accelconf.accelerate.launch.namespace_value` turns them back when launching). Paradigm flags
(``--use_fsdp``, ``--multi_gpu``, ...) become ``distributed_type``; ``--multi_gpu`` reads as
``MULTI_GPU`` with a note, since accelerate takes the device type (``MULTI_XPU``, ``MULTI_NPU``, ...)
from the hardware. Launcher-only flags (``--num_cpu_threads_per_process``, ...) are kept in
``Config.unknown`` under ``--name``.

Writer: ``accelerate launch`` followed by flags only (no script) that, launched **without** a config
file, give the training process the same environment as the file. The writer checks itself: it
launches both with :func:`accelconf.accelerate.launch.launch_env` and reports every variable that differs as a
lossy finding, and every key of the file it does not write (another device type than GPU behind
``--multi_gpu``, parallelism sizes without FSDP, sections the launch path does not use) is a finding
of its own. Launcher-only flags read from an environment are written back. Keys accelerate ignores
in files (``rdzv_backend``, ``same_network``, ``enable_cpu_affinity``, ``downcast_bf16``,
``tpu_use_sudo``) are not turned into flags: passing the flag would change what the file does.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from accelconf.accelerate import registry
from accelconf.accelerate.launch import (
    LAUNCHER_FLAGS,
    PARADIGM_OF_TYPE,
    TYPE_OF_PARADIGM,
    LaunchError,
    LaunchResult,
    changed,
    flag_kind,
    launch_env,
    parse_flag_value,
    resolve,
)
from accelconf.accelerate.model import Config, Entry, canonical
from accelconf.accelerate.registry import Setting
from accelconf.accelerate.validate import COMMON_MISTAKES
from accelconf.errors import InputError
from accelconf.findings import Finding, Severity
from accelconf.formats import shell, value_findings
from accelconf.formats.env import never_read
from accelconf.formats.yamljson import accelerator_env_lost
from accelconf.text import suggest

# argparse ``choices`` of the flags that restrict their values (accelerate 1.15 commands/launch.py;
# tests/oracle/test_oracle_launch.py compares them with the parser). The dynamo list comes from
# commands/config/config_utils.py, which misspells TORCHXLA_TRACE_ONCE ("TORHCHXLA") and lacks
# HPU_BACKEND and NEURON: those backends work in a config file but cannot be passed as a flag.
_NO_DYNAMO_FLAG = {"NO", "TORCHXLA_TRACE_ONCE", "HPU_BACKEND", "NEURON"}
FLAG_CHOICES: dict[str, tuple[str, ...]] = {
    "mixed_precision": registry.PRECISIONS,
    "dynamo_config.dynamo_backend": (
        "no",
        *(b.lower() for b in registry.DYNAMO_BACKENDS if b not in _NO_DYNAMO_FLAG),
        "torhchxla_trace_once",
    ),
    "dynamo_config.dynamo_mode": registry.DYNAMO_MODES,
    "fsdp_config.fsdp_version": ("1", "2"),
    "fp8_config.backend": tuple(b.lower() for b in registry.FP8_BACKENDS),
    "fp8_config.fp8_format": registry.FP8_FORMATS,
}
for _s in registry.SETTINGS:
    if (
        _s.flag
        and _s.section in ("fp8_config", "parallelism_config")
        and _s.type == "enum"
        and _s.path not in FLAG_CHOICES
    ):
        FLAG_CHOICES[_s.path] = tuple(str(c) for c in _s.choices or ())


def flag_choices(s: Setting, version: str) -> tuple[str, ...] | None:
    """The values a restricted flag accepts in that accelerate version (FLAG_CHOICES are 1.15's)."""
    choices = FLAG_CHOICES.get(s.path)
    if choices and s.path == "fp8_config.backend" and not changed(version, "fp8-backend-ao-flag"):
        choices = tuple(c for c in choices if c != "ao")
    return choices


# The spellings of the launch command; the first word may be a path, ``python`` any python3.x.
PREFIXES = (("accelerate", "launch"), ("accelerate-launch",), ("python", "-m", "accelerate.commands.launch"))
# accelerate launch's one-letter spellings (commands/launch.py: -q/--quiet, -m/--module, -t/--tee)
SHORT_FLAGS = {"q": "quiet", "m": "module", "t": "tee"}
_PYTHON = re.compile(r"python[0-9.]*")


@dataclass
class Launch:
    """One ``accelerate launch`` command of a script: its flags read into ``config``, the 1-based
    position of the command, the variables it starts with (``export`` lines before it and
    ``VAR=x`` words in front of it: name -> (value, line, column); value None when the script
    cannot know it), the ``--config_file`` it names, and every finding about it (each bad flag,
    each value validate refuses, each value not read) at its line and column in the script."""

    config: Config
    line: int
    column: int
    env: dict[str, tuple[str | None, int, int]] = field(default_factory=dict)
    config_file: str | None = None
    findings: list[Finding] = field(default_factory=list)


@dataclass(frozen=True)
class _Tok:
    """A word of the command: its text (None: an expansion the script cannot know), as written, where."""

    text: str | None
    raw: str
    line: int
    column: int


def _command_start(words: list[str | None]) -> tuple[int, int] | None:
    """The index of ``accelerate launch`` (or its other spellings) in a command and of the first word after it."""
    for i, w in enumerate(words):
        if w is None:
            continue
        base = w.rsplit("/", 1)[-1]
        base = "python" if _PYTHON.fullmatch(base) else base
        for prefix in PREFIXES:
            if base == prefix[0] and tuple(words[i + 1 : i + len(prefix)]) == prefix[1:]:
                return i, i + len(prefix)
    return None


def read_script(text: str, path: str = "<text>", version: str | None = None) -> list[Launch]:
    """Every ``accelerate launch`` of a shell or sbatch script, in order, each with its findings.

    Variables: a ``$VAR`` the script assigned once before the launch, to a literal, is substituted;
    any other expansion (a variable of the caller's environment, ``$(...)``, ``$1``, a variable
    assigned twice) cannot be known: its flag is not read (an info finding), never an error. An
    unknown word where the training script may stand is taken as the script, so the training
    script's arguments are never read as accelerate flags. Raises :class:`InputError` only for a
    script that cannot be split (an unterminated quote).
    """
    ver = resolve(version)
    variables = shell.Variables()
    launches: list[Launch] = []
    for words in shell.commands(text, path):
        while len(words) > 1 and words[0].literal in shell.RESERVED:
            words = words[1:]
        known = variables.known()
        texts = [shell.resolve(w, known) for w in words]
        found = _command_start(texts)
        if found is None:
            if words[0].literal in shell.DECLARE or all(shell.ASSIGNMENT.match(w.literal or w.raw) for w in words):
                variables.record(words)
            continue
        begin, start = found
        env = variables.environment()
        for w in words[:begin]:
            m = shell.ASSIGNMENT.match(w.literal or w.raw)
            if m is not None:  # `VAR=x accelerate launch`: the launch's own environment
                env[m.group(1)] = (shell.resolve(shell.after_equals(w), known), w.line, w.column)
        toks = [_Tok(t, w.raw, w.line, w.column) for w, t in zip(words[start:], texts[start:])]
        launch = Launch(Config(source=path, format="cli"), words[begin].line, words[begin].column, env)
        _read_flags(launch, toks, ver, path)
        for name, (_, line, col) in env.items():
            why = never_read(name)
            if why:
                launch.findings.append(Finding("env.never-read", "warning", f"{name} is {why}", name, line, col))
        launch.findings += value_findings(launch.config, ver)
        launches.append(launch)
    return launches


def read_launches(text: str, path: str = "<text>", version: str | None = None) -> list[Launch]:
    """:func:`read_script`, or, for a text without ``accelerate launch`` (flags only, as
    ``--launch-args`` gives them), that text read as the flags of one launch."""
    launches = read_script(text, path, version)
    if launches:
        return launches
    ver = resolve(version)
    words = [w for cmd in shell.commands(text, path) for w in cmd]
    launch = Launch(Config(source=path, format="cli"), words[0].line if words else 1, words[0].column if words else 1)
    _read_flags(launch, [_Tok(w.literal, w.raw, w.line, w.column) for w in words], ver, path)
    launch.findings += value_findings(launch.config, ver)
    return [launch]


def refusals(launch: Launch) -> list[Finding]:
    """The findings of a launch that make accelerate launch refuse its command line (argparse errors)."""
    return [f for f in launch.findings if f.severity == "error" and f.rule.startswith("cli.")]


def read(text: str, *, path: str = "<text>", version: str | None = None, **_: Any) -> Config:
    """The flags of one command line (``accelerate launch`` in front is optional), or of the first
    launch of a script. Raises :class:`InputError` at the first flag accelerate refuses (use
    :func:`read_script` for every finding)."""
    launches = read_launches(text, path, version)
    launch = launches[0]
    errors = refusals(launch)
    if errors:
        raise InputError(errors[0].message, path, errors[0].line, errors[0].column)
    if len(launches) > 1:
        launch.config.note(
            f"{len(launches)} accelerate launch commands: read the first (line {launch.line})",
            rule="cli.several-launches",
            line=launch.line,
            column=launch.column,
        )
    return launch.config


def _read_flags(launch: Launch, toks: list[_Tok], ver: str, path: str) -> None:
    """Read the flags of one launch into ``launch.config``; every refusal is a finding, reading goes on."""
    cfg = launch.config
    i = 0
    while i < len(toks):
        tok = toks[i]
        i += 1
        if tok.text is None and not tok.raw.startswith("-"):
            cfg.note(
                f"`{tok.raw}` cannot be known before the script runs: read as the training script, the words "
                "after it are not read",
                rule="cli.not-read",
                line=tok.line,
                column=tok.column,
            )
            break
        word = tok.text if tok.text is not None else tok.raw
        if word.startswith("-") and not word.startswith("--") and word[1:2] in SHORT_FLAGS and len(word) == 2:
            word = f"--{SHORT_FLAGS[word[1]]}"
        if not word.startswith("--"):
            cfg.note(f"training script {word!r} and its arguments are not settings: ignored")
            break
        name, eq, inline = word[2:].partition("=")
        if tok.text is None and (not eq or "$" in name or "`" in name):
            cfg.note(
                f"`{tok.raw}` cannot be known before the script runs: not read",
                rule="cli.not-read",
                line=tok.line,
                column=tok.column,
            )
            continue
        i = _read_flag(launch, name.replace("-", "_"), eq, inline, tok, toks, i, ver, path)


def _flag_error(launch: Launch, tok: _Tok, rule: str, message: str) -> None:
    launch.findings.append(Finding(rule, "error", message, tok.raw.partition("=")[0], tok.line, tok.column))


def _may_be_script(word: str) -> bool:
    return word.endswith((".py", ".sh")) or "/" in word


def _unknown_flag(name: str) -> str:
    """accelerate's refusal of a flag it does not have, with the flag meant when one is close: a
    YAML key's did-you-mean (a misspelling seen in real configs), else the closest flag name."""
    guess = None
    for (section, key), meant in COMMON_MISTAKES.items():
        s = registry.get(section, meant) if key == name and meant else None
        if s is not None and s.flag:
            guess = s.flag
    if guess is None:
        names = (
            [s.flag for s in registry.SETTINGS if s.flag]
            + list(LAUNCHER_FLAGS)
            + list(TYPE_OF_PARADIGM)
            + ["config_file"]
        )
        guess = suggest.closest(name, names)
    hint = f"; did you mean --{guess}?" if guess else ""
    return f"unknown accelerate launch flag --{name} (accelerate refuses the command line){hint}"


def _read_flag(
    launch: Launch, name: str, eq: str, inline: str, tok: _Tok, toks: list[_Tok], i: int, ver: str, path: str
) -> int:
    """Read one flag (and its value) at ``toks[i - 1]``; returns the index of the next word."""
    cfg = launch.config
    kw = dict(origin="cli", where=f"--{name}", line=tok.line, column=tok.column)
    s = registry.by_flag(name) if name not in TYPE_OF_PARADIGM and name not in LAUNCHER_FLAGS else None
    known = (
        name in TYPE_OF_PARADIGM or name in LAUNCHER_FLAGS or name in ("config_file", "no_tpu_cluster") or s is not None
    )
    if not known:
        _flag_error(launch, tok, "cli.unknown-flag", _unknown_flag(name))
        # the next word is taken as its value unless it is a flag or may be the training script: the
        # script's own arguments must never be read as accelerate flags
        nxt = (toks[i].text or toks[i].raw) if i < len(toks) else "-"
        return i + 1 if not eq and not nxt.startswith("-") and not _may_be_script(nxt) and i + 1 < len(toks) else i
    store_true = (
        name in TYPE_OF_PARADIGM
        or name == "no_tpu_cluster"
        or (LAUNCHER_FLAGS.get(name) == "store_true")
        or (s is not None and flag_kind(s) == "store_true")
    )
    raw: str | None = None
    if store_true and eq:
        _flag_error(launch, tok, "cli.bad-value", f"--{name} takes no value")
        return i
    if not store_true:
        if eq:
            raw = inline
            if tok.text is None:
                cfg.note(
                    f"`{tok.raw}`: the value cannot be known before the script runs; not read",
                    rule="cli.not-read",
                    line=tok.line,
                    column=tok.column,
                )
                return i
        elif i >= len(toks):
            _flag_error(launch, tok, "cli.bad-value", f"--{name} needs a value")
            return i
        else:
            given = toks[i]
            i += 1
            if given.text is None:
                cfg.note(
                    f"--{name} {given.raw}: the value cannot be known before the script runs; not read",
                    rule="cli.not-read",
                    line=given.line,
                    column=given.column,
                )
                return i
            raw = given.text
    _store(launch, name, s, raw, tok, kw, ver)
    return i


def _store(
    launch: Launch, name: str, s: Setting | None, raw: str | None, tok: _Tok, kw: dict[str, Any], ver: str
) -> None:
    """Put one flag's value into the config, or a finding saying why accelerate refuses it."""
    cfg = launch.config
    if name in TYPE_OF_PARADIGM:
        cfg.set("distributed_type", TYPE_OF_PARADIGM[name], written_key=f"--{name}", **kw)
        if name == "multi_gpu":
            cfg.entries["distributed_type"].where = "--multi_gpu (device type from the hardware)"
            cfg.note(
                f"--multi_gpu: read as distributed_type MULTI_GPU; accelerate takes the device type from the "
                f"hardware it runs on ({', '.join(t for t in registry.MULTI_GPU_TYPES if t != 'MULTI_GPU')} "
                "on other accelerators)"
            )
        return
    if name == "config_file":
        launch.config_file = raw
        cfg.note(f"--config_file {raw!r}: read that file separately", line=tok.line, column=tok.column)
        return
    if name == "no_tpu_cluster":
        tpu = registry.get("", "tpu_use_cluster")
        if tpu:
            cfg.set(tpu.path, False, written_key=f"--{name}", **kw)
        return
    kind = LAUNCHER_FLAGS[name] if s is None else flag_kind(s)
    try:
        v = parse_flag_value(s, kind, raw)
    except ValueError as exc:
        _flag_error(launch, tok, "cli.bad-value", f"--{name}: {exc}")
        return
    if s is None:
        cfg.unknown[f"--{name}"] = Entry(f"--{name}", v, None, f"--{name}", tok.line, tok.column, "cli", f"--{name}")
        return
    choices = flag_choices(s, ver)
    if choices and str(v) not in choices:  # argparse's own refusal, before anything is read
        _flag_error(
            launch,
            tok,
            "cli.invalid-choice",
            f"--{name}: invalid choice: {raw!r} (accelerate {ver} accepts {', '.join(choices)})",
        )
        return
    if not s.exists_in(ver):
        cfg.note(f"--{name} does not exist in accelerate {ver}", line=tok.line, column=tok.column)
    cfg.set(s.path, _config_value(kind, v), written_key=f"--{name}", **kw)


def _config_value(kind: str, value: Any) -> Any:
    """A parsed flag value in config-file spelling: accelerate's 0/1 (``str_to_bool``) are booleans in a file."""
    if kind == "str_to_bool" and isinstance(value, int):
        return bool(value)
    if kind == "list3" and isinstance(value, tuple):
        return tuple(bool(v) for v in value)
    return value


def _cli_string(s: Setting, value: Any) -> str | None:
    """The flag text for a value (``None``: the bare store_true flag)."""
    kind = flag_kind(s)
    if kind == "list3" and isinstance(value, (list, tuple)):
        return ",".join(str(v).lower() for v in value)
    if kind == "str_to_bool" and isinstance(value, bool):
        return str(value).lower()
    if kind == "bool":
        return "True" if value else ""
    if s.key in ("mixed_precision", "dynamo_backend") or (s.section == "fp8_config" and s.key == "backend"):
        return str(value).lower()
    if kind == "int" and isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _lossy(severity: Severity, message: str, path: str, e: Entry, rule: str = "convert.lossy") -> Finding:
    """A finding at a config entry that the flags cannot carry as written."""
    return Finding(rule, severity, message, path, e.line, e.column)


def _paradigm_flags(cfg: Config, mode: str, ns: dict[str, Any], findings: list[Finding]) -> list[str]:
    """--multi_gpu & co. and --cpu: what distributed_type and use_cpu become."""
    paradigm = _paradigm(cfg, mode, ns, findings)
    return ([f"--{paradigm}"] if paradigm else []) + _cpu_flag(cfg, mode, findings)


def _paradigm(cfg: Config, mode: str, ns: dict[str, Any], findings: list[Finding]) -> str | None:
    """The paradigm flag's name (multi_gpu, use_deepspeed...) for distributed_type, or None."""
    dtype = cfg.get("distributed_type")
    paradigm = PARADIGM_OF_TYPE.get(dtype) if isinstance(dtype, str) else None
    if paradigm != "multi_gpu":
        return paradigm
    if isinstance(ns.get("num_processes"), int) and ns["num_processes"] < 2:
        # a file may run one MULTI_GPU process under torchrun, the flag may not: commands/launch.py
        # refuses `--multi_gpu` with fewer than 2 processes before it reads any config file
        message = (
            f"`distributed_type: {dtype}` with one process cannot be given as "
            "--multi_gpu (accelerate refuses it with fewer than 2 processes): written without it, the "
            "script runs as one plain process instead of a one-process group under torchrun"
        )
        findings.append(_lossy("warning", message, "distributed_type", cfg.entries["distributed_type"]))
        return None
    if mode != "torchrun":
        # accelerate 0.20 sends only MULTI_GPU to the multi-GPU launcher (commands/launch.py
        # `args.multi_gpu = defaults.distributed_type == DistributedType.MULTI_GPU`): the file runs
        # the simple launcher there, and --multi_gpu would start torchrun
        message = (
            f"`distributed_type: {dtype}` runs the {mode} launcher in this "
            "accelerate version; written without --multi_gpu (which would start torchrun)"
        )
        findings.append(_lossy("info", message, "distributed_type", cfg.entries["distributed_type"]))
        return None
    if dtype != "MULTI_GPU":
        message = (
            f"`distributed_type: {dtype}` cannot be given as a flag: --multi_gpu "
            f"leaves the device type to the hardware accelerate runs on (read back as MULTI_GPU)"
        )
        findings.append(_lossy("warning", message, "distributed_type", cfg.entries["distributed_type"]))
    return paradigm


def _cpu_flag(cfg: Config, mode: str, findings: list[Finding]) -> list[str]:
    """--cpu on the simple path; elsewhere use_cpu is not written, with what it still does there."""
    use_cpu = cfg.get("use_cpu")
    if use_cpu and mode == "simple":
        return ["--cpu"]
    if use_cpu and "--num_cpu_threads_per_process" not in cfg.unknown and mode in ("torchrun", "deepspeed"):
        # _validate_launch_command (commands/launch.py) still reads use_cpu on these paths: without
        # --num_cpu_threads_per_process it sets OMP_NUM_THREADS from the launching machine's physical cores
        message = (
            f"use_cpu is not written as --cpu on the {mode} path (which would "
            "switch to the simple launcher), but in the file it sets OMP_NUM_THREADS from the physical "
            "cores of the machine that launches (per process from 0.34): add "
            "--num_cpu_threads_per_process N for that machine"
        )
        findings.append(_lossy("warning", message, "use_cpu", cfg.entries["use_cpu"]))
    elif use_cpu:
        message = (
            f"use_cpu is not used on the {mode} path; not written as --cpu (which would switch to the simple launcher)"
        )
        findings.append(_lossy("info", message, "use_cpu", cfg.entries["use_cpu"]))
    return []


def _flag_sections(mode: str, ns: dict[str, Any], out: list[str], findings: list[Finding]) -> tuple[set[str], bool]:
    """The sections whose settings this launch path reads, and whether parallelism_config was dropped."""
    sections = {"", "mpirun_config"}
    if mode == "torchrun" and ns.get("use_fsdp"):
        sections.add("fsdp_config")
    if mode == "torchrun" and ns.get("use_megatron_lm"):
        sections.add("megatron_lm_config")
    if mode == "deepspeed":
        sections.add("deepspeed_config")
    if mode in ("simple", "torchrun"):
        sections.add("dynamo_config")
    if registry.section_active("fp8_config", ns):
        sections.add("fp8_config")
    no_parallelism_flags = False
    if ns.get("use_parallelism_config"):
        if ns.get("use_fsdp"):
            out.append("--use_parallelism_config")
            sections.add("parallelism_config")
        else:
            no_parallelism_flags = True
            findings.append(
                Finding(
                    "convert.lossy",
                    "warning",
                    "parallelism_config without FSDP cannot be given as flags "
                    "(--use_parallelism_config requires --use_fsdp); dropped",
                    "parallelism_config",
                )
            )
    return sections, no_parallelism_flags


def _entry_flags(
    path: str,
    e: Entry,
    s: Setting,
    sections: set[str],
    no_parallelism_flags: bool,
    mode: str,
    ns: dict[str, Any],
    version: str,
    machine_rank: int | None,
    findings: list[Finding],
) -> list[str]:
    """The flag (and its value) for one config entry, or nothing with a finding saying why."""
    if s.section not in sections:
        _not_on_this_path(path, e, s, no_parallelism_flags, findings)
        return []
    if not s.flag:
        if s.section or mode == "tpu":
            findings.append(_lossy("warning", f"`{path}` has no accelerate launch flag; dropped", path, e))
        else:
            message = f"`{path}` is not used by accelerate launch on the {mode} path; not written"
            findings.append(_lossy("info", message, path, e))
        return []
    if s.file_ignored:
        if canonical(s, e.value) != canonical(s, s.launcher_default):
            message = (
                f"`{path}` is ignored by accelerate in a config file; "
                f"not written (passing --{s.flag} would change the launch)"
            )
            findings.append(_lossy("info", message, path, e, "convert.file-ignored"))
        return []
    if not s.exists_in(version):
        findings.append(_lossy("info", f"`{path}` is not read by accelerate {version}; not written", path, e))
        return []
    if s.section == "" and s.key in ("main_training_function", "tpu_use_cluster") and mode != "tpu":
        return []
    if s.section == "" and s.key == "machine_rank" and machine_rank is not None:
        return []
    value = ns.get(s.namespace) if s.section else e.value
    if s.section == "" and s.key == "gpu_ids" and value == "all":
        return []
    if value is None:
        return []
    if s.key == "fsdp_sharding_strategy" and isinstance(s.launcher_default_for(version), int):
        # until 0.25 commands/launch.py declares --fsdp_sharding_strategy with type=int (default 1):
        # argparse refuses a name there, so the flag carries the strategy's number
        value = _strategy_number(s, value)
    return _value_flags(path, e, s, value, version, findings)


def _not_on_this_path(path: str, e: Entry, s: Setting, no_parallelism_flags: bool, findings: list[Finding]) -> None:
    """Why a setting of a section this launch path does not read is not written."""
    if s.section == "parallelism_config" and no_parallelism_flags:
        message = (
            f"`{path}` is exported from the config file, but "
            "accelerate refuses --use_parallelism_config without --use_fsdp (FSDP2): no flag "
            "can carry it; dropped"
        )
        findings.append(_lossy("warning", message, path, e))
    elif s.section and path in registry.ACCELERATOR_ENV_ARGS and e.origin == "env":
        findings.append(accelerator_env_lost(e, registry.ACCELERATOR_ENV_ARGS[path][0], "a launch flag"))
    elif s.section:
        findings.append(_lossy("info", f"`{path}` is not used on this launch path; not written", path, e))


def _value_flags(path: str, e: Entry, s: Setting, value: Any, version: str, findings: list[Finding]) -> list[str]:
    """The flag for a value as its argparse action reads it, or nothing with a finding saying why."""
    kind = flag_kind(s)
    if kind == "store_true":
        if value is True:
            return [f"--{s.flag}"]
        if value not in (False, None):
            message = f"`{path}: {value!r}` cannot be given as the on/off flag --{s.flag}"
            findings.append(_lossy("warning", message, path, e))
        return []
    if kind == "bool" and not value and s.launcher_default is False:
        return []
    if kind == "list3" and not isinstance(value, (list, tuple)):
        message = (
            f"`{path}: {value!r}` is not a list of three booleans and cannot "
            f"be given as --{s.flag} (accelerate indexes the file's value as written); not written"
        )
        findings.append(_lossy("warning", message, path, e))
        return []
    text = _cli_string(s, value)
    if text is None:
        return []
    if s.path == "fp8_config.backend" and changed(version, "fp8-backend-enum"):
        # the flag takes only lowercase and exports it as given; from 1.9 Accelerator() raises on it
        # (accelerator.py: FP8BackendType(parse_choice_from_env("ACCELERATE_FP8_BACKEND", "NO")))
        message = (
            f"`{path}: {value}` cannot be given as --{s.flag}: the flag takes only "
            f"lowercase, which Accelerator() rejects in accelerate {version} (FP8BackendType); not written, "
            "so accelerate picks the backend itself (torchao, then TransformerEngine, then MS-AMP, "
            "whichever is installed)"
        )
        findings.append(_lossy("warning", message, path, e))
        return []
    choices = flag_choices(s, version)
    if choices and text not in choices:
        message = (
            f"`{path}: {value}` cannot be given as --{s.flag} (the flag accepts {', '.join(choices)}); not written"
        )
        findings.append(_lossy("warning", message, path, e))
        return []
    return [f"--{s.flag}", text]


def _strategy_number(s: Setting, value: Any) -> Any:
    """FULL_SHARD -> 1, ... (the number of a sharding strategy name; anything else unchanged)."""
    name = s.canonical_value(value)
    return registry.SHARDING_STRATEGIES.index(name) + 1 if name in registry.SHARDING_STRATEGIES else value


def _launcher_only_flags(cfg: Config, out: list[str]) -> list[str]:
    """Launcher-only flags read back from an environment or a command line."""
    extra: list[str] = []
    for path, e in cfg.unknown.items():
        name = path[2:]
        if not path.startswith("--") or name not in LAUNCHER_FLAGS or name in _out_names(out + extra):
            continue
        if LAUNCHER_FLAGS[name] == "store_true":
            extra += [path] if e.value is True else []
        else:
            extra += [path, str(e.value)]
    return extra


def _self_check(out: list[str], base: LaunchResult, version: str, findings: list[Finding]) -> None:
    """Launch the flags without a file and report every variable that differs."""
    try:
        again = launch_env(read(shlex.join(out)), version=version)  # (the reader's version only words notes)
    except (LaunchError, InputError) as exc:
        findings.append(Finding("convert.lossy", "error", f"these flags do not launch: {exc}", "distributed_type"))
        return
    for var in sorted(set(base.env) | set(again.env)):
        if base.env.get(var) != again.env.get(var):
            s = registry.by_env(var)
            key = s.path if s else var
            findings.append(
                Finding(
                    "convert.lossy",
                    "warning",
                    f"{var} differs without the config file: {base.env.get(var)!r} from the file, "
                    f"{again.env.get(var)!r} from the flags" + _why(var, again.env.get(var)),
                    key,
                )
            )


def flags_for(cfg: Config, version: str, machine_rank: int | None = None) -> tuple[list[str], list[Finding]]:
    """The flags (and findings) equivalent to a config file."""
    findings: list[Finding] = []
    base = launch_env(cfg, version=version, machine_rank=machine_rank)
    mode, ns = base.mode, base.namespace
    out = _paradigm_flags(cfg, mode, ns, findings)
    out += ["--num_processes", str(ns.get("num_processes"))]
    sections, no_parallelism_flags = _flag_sections(mode, ns, out, findings)
    items = sorted(cfg.items(), key=lambda pe: "." in pe[0])  # top level first, file order kept
    multinode = _int(ns.get("num_machines")) > 1
    if multinode and "machine_rank" not in cfg and machine_rank is None:
        out += ["--machine_rank", str(ns["machine_rank"])]  # (argparse default 0)
    for path, e in items:
        s = e.setting
        if path in ("distributed_type", "use_cpu", "num_processes", "compute_environment") or s is None:
            continue
        out += _entry_flags(path, e, s, sections, no_parallelism_flags, mode, ns, version, machine_rank, findings)
    out += _launcher_only_flags(cfg, out)
    if machine_rank is not None:
        out += ["--machine_rank", str(machine_rank)]
    _self_check(out, base, version, findings)  # launch the flags without a file and compare
    return out, findings


def _out_names(flags: list[str]) -> set[str]:
    return {f[2:] for f in flags if f.startswith("--")}


def _int(v: Any) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return 0


def _why(var: str, from_flags: str | None) -> str:
    if var == registry.CONFIG_DS_FIELDS_ENV:
        return (
            " (accelerate lists the file's deepspeed_config keys; without a file its DeepSpeed JSON conflict check is "
            "skipped)"
        )
    if var == registry.get("fsdp_config", "fsdp_sharding_strategy").env:  # type: ignore[union-attr]
        return (
            " (before accelerate 0.26 the flag takes only the strategy's number; the file's name passes through "
            "to FullyShardedDataParallelPlugin, which calls int() on it)"
        )
    if var == registry.get("fp8_config", "backend").env and from_flags is not None:  # type: ignore[union-attr]
        return (
            " (the flag only accepts lowercase; before 1.9 Accelerator() does not read it, only MS-AMP under "
            "DeepSpeed does)"
        )
    return ""


def write(
    cfg: Config, *, version: str | None = None, machine_rank: int | None = None, **_: Any
) -> tuple[str, list[Finding]]:
    ver = resolve(version)
    if cfg.format == "cli":
        flags = _tokens_of(cfg)
        return "accelerate launch " + shlex.join(flags) + "\n", []
    flags, findings = flags_for(cfg, ver, machine_rank)
    return format_flags(flags), findings


def _tokens_of(cfg: Config) -> list[str]:
    out: list[str] = []
    for path, e in cfg.items():
        if path == "distributed_type":
            flag = PARADIGM_OF_TYPE.get(str(e.value))
            if flag:
                out.append(f"--{flag}")
            continue
        s = e.setting
        if s is None or not s.flag:
            continue
        text = _cli_string(s, e.value)
        if flag_kind(s) == "store_true":
            if e.value:
                out.append(f"--{s.flag}")
            continue
        out += [f"--{s.flag}", text or ""]
    for path, e in cfg.unknown.items():
        if path.startswith("--"):
            out += [path] if e.value is True else [path, str(e.value)]
    return out


def format_flags(flags: list[str]) -> str:
    """``accelerate launch`` and the flags, one flag per line with backslash continuations."""
    lines = ["accelerate launch"]
    i = 0
    while i < len(flags):
        tok = flags[i]
        if i + 1 < len(flags) and not flags[i + 1].startswith("--"):
            lines.append(f"{shlex.quote(tok)} {shlex.quote(flags[i + 1])}")
            i += 2
        else:
            lines.append(shlex.quote(tok))
            i += 1
    return " \\\n    ".join(lines) + "\n"
