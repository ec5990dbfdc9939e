"""dotenv ``KEY=VALUE`` lines: the environment ``accelerate launch`` gives the training process.

Writer: :func:`accelconf.accelerate.launch.launch_env` (exactly the variables the launcher writes, nothing
invented), one ``KEY=VALUE`` per line, sorted, values quoted only when a shell would need it. What
env cannot carry (process counts, machines, rendezvous) comes back as findings with the equivalent
torchrun/launcher flags.

Reader: accepts ``export``, single/double quotes and ``#`` comments; ``$VAR`` of a variable the file
assigned once before is substituted, any other expansion is not read (an ``env.not-read`` note,
never an error); maps each variable to its
setting through the registry (``by_env``) and decodes the value the way the plugin reads it.
``OMP_NUM_THREADS`` is the launch flag ``--num_cpu_threads_per_process`` (no config-file key): kept in
``Config.unknown`` under that flag's name, as the cli reader keeps launcher-only flags, and reported
as launcher-only; ``1``, what the launcher writes without the flag, reads as nothing set. Names
accelerate never reads (``ACCELERATE_NUM_PROCESSES`` and friends) are warned about and kept in
``Config.unknown``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from typing import Any

from accelconf.accelerate import registry
from accelconf.accelerate.launch import TYPE_OF_PARADIGM, accelerator_env_entries, launch_env
from accelconf.accelerate.model import Config, Entry
from accelconf.errors import InputError
from accelconf.findings import Finding
from accelconf.formats import shell
from accelconf.text import suggest

# Variables the launcher writes that are not settings of their own.
PARADIGM_ENV = {var: dt for dt, var in registry.USE_ENV.items()}
LAUNCHER_ENV = {
    registry.CONFIG_DS_FIELDS_ENV,
    "PYTHONPATH",
    "KMP_AFFINITY",
    "KMP_BLOCKTIME",
    registry.USE_PARALLELISM_CONFIG_ENV,
    registry.USE_SAGEMAKER_ENV,
}
# Names blogs and scripts use that no accelerate code reads (accelerate 1.15: no os.environ lookup of
# them in accelerate/; tests/oracle/test_readers_oracle.py checks the list against the installed source).
NEVER_READ = {
    "ACCELERATE_NUM_PROCESSES": "torchrun --nproc_per_node / accelerate launch --num_processes",
    "ACCELERATE_GPU_IDS": "CUDA_VISIBLE_DEVICES",
    "ACCELERATE_DISTRIBUTED_TYPE": (
        "ACCELERATE_USE_FSDP / ACCELERATE_USE_DEEPSPEED / ACCELERATE_USE_MEGATRON_LM, or a launcher"
    ),
    "ACCELERATE_FSDP_CONFIG_FILE": "the individual FSDP_* variables",
    "ACCELERATE_NUM_MACHINES": "torchrun --nnodes",
    "ACCELERATE_MACHINE_RANK": "torchrun --node_rank",
    "ACCELERATE_MAIN_PROCESS_IP": "torchrun --master_addr / --rdzv_endpoint",
    "ACCELERATE_MAIN_PROCESS_PORT": "torchrun --master_port",
    "ACCELERATE_LOG_WITH": "Accelerator(log_with=...)",
    "ACCELERATE_CONFIG_FILE": "accelerate launch --config_file",
    "ACCELERATE_SEED": "accelerate.utils.set_seed(...) in the script",
    "MIXED_PRECISION": "ACCELERATE_MIXED_PRECISION",
}
LAUNCHER_THREADS = "--num_cpu_threads_per_process"  # the launch flag behind OMP_NUM_THREADS
_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


def _unquote(raw: str, path: str, lineno: int) -> str:
    if raw[:1] in ("'", '"'):
        q = raw[0]
        end = raw.find(q, 1)
        while q == '"' and end > 0 and raw[end - 1] == "\\":
            end = raw.find(q, end + 1)
        if end < 0:
            raise InputError(f"unterminated quote in {raw!r}", path, lineno, 1)
        inner = raw[1:end]
        return inner.replace('\\"', '"') if q == '"' else inner
    return re.split(r"\s+#", raw, maxsplit=1)[0].strip()


def decode(setting: registry.Setting, raw: str) -> Any:
    """The value a plugin reads from an env string, in config-file spelling."""
    t = setting.type
    low = raw.strip().lower()
    if raw == "None" and t in ("int", "float"):
        return None  # str(None): the launcher exports an unset number this way (PARALLELISM_CONFIG_SP_SEQ_LENGTH)
    if t == "bool" and low in registry.TRUE_WORDS | registry.FALSE_WORDS:
        return low in registry.TRUE_WORDS
    if t == "int" or (t == "enum" and setting.choices and all(isinstance(c, int) for c in setting.choices)):
        try:
            return int(raw)
        except ValueError:
            return raw
    if t == "float":
        try:
            return float(raw)
        except ValueError:
            return raw
    return raw


def _lines(text: str, path: str) -> Iterator[tuple[str, str, int, int]]:
    """``(name, value as written, line, column)`` of every ``KEY=VALUE`` line."""
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        m = _LINE.match(line)
        if not m:
            raise InputError(f"not a KEY=VALUE line: {stripped!r}", path, lineno, 1)
        name = m.group(1)
        yield name, m.group(2), lineno, line.index(name) + 1


def assignments(text: str, path: str = "<text>") -> Iterator[tuple[str, str, int, int]]:
    """``(name, value, line, column)`` of every ``KEY=VALUE`` line (1-based; quotes removed, ``export``
    allowed; blank and ``#`` lines skipped). Raises :class:`InputError` at any other line."""
    for name, raw, lineno, col in _lines(text, path):
        yield name, _unquote(raw, path, lineno), lineno, col


_EXPANSION = re.compile(r"\$[A-Za-z_{(]|`")


def expanded(raw: str, known: dict[str, str], path: str, lineno: int) -> str | None:
    """A value as written with ``$VAR``/``${VAR}`` of ``known`` substituted, as a shell sourcing the
    file would; None when it holds an expansion that cannot be known (another variable, ``$(...)``)."""
    if raw[:1] == "'" or not _EXPANSION.search(raw):
        return _unquote(raw, path, lineno)

    words = [w for cmd in shell.commands(re.split(r"\s+#", raw, maxsplit=1)[0], path) for w in cmd]
    return shell.resolve(words[0], known) if len(words) == 1 else None


def read(text: str, *, path: str = "<text>", version: str | None = None, fmt: str = "env") -> Config:
    cfg = Config(source=path, format="env")
    override: dict[int, bool] = {}
    override_entry: Entry | None = None
    seen: dict[str, list[str | None]] = {}
    for name, written, lineno, col in _lines(text, path):
        known = {n: v[0] for n, v in seen.items() if len(v) == 1 and v[0] is not None}
        raw_or_none = expanded(written, known, path, lineno)
        seen.setdefault(name, []).append(raw_or_none)
        if raw_or_none is None:
            cfg.note(
                f"{name}={written}: the value cannot be known from this file; not read",
                rule="env.not-read",
                key=name,
                line=lineno,
                column=col,
            )
            continue
        raw = raw_or_none
        kw = dict(line=lineno, column=col, origin="env", where=name)
        if name in PARADIGM_ENV:
            if raw.lower() == "true":
                cfg.set("distributed_type", PARADIGM_ENV[name], written_key=name, **kw)
            continue
        if name.startswith(registry.FP8_OVERRIDE_PREFIX) and name.rsplit("_", 1)[1] in registry.FP8_OVERRIDE_PARTS:
            override[registry.FP8_OVERRIDE_PARTS.index(name.rsplit("_", 1)[1])] = raw.lower() in registry.TRUE_WORDS
            s = registry.get("fp8_config", "override_linear_precision")
            if s is not None and override_entry is None:
                override_entry = cfg.set(s.path, (False, False, False), written_key=name, **kw)
            continue
        if name in ("MASTER_ADDR", "MASTER_PORT"):
            key = "main_process_ip" if name == "MASTER_ADDR" else "main_process_port"
            s = registry.get("", key)
            cfg.set(key, decode(s, raw) if s else raw, written_key=name, **kw)
            continue
        if name == "OMP_NUM_THREADS":
            # Written by the launcher from --num_cpu_threads_per_process (a launch flag, no config-file key);
            # 1 is what it writes when the flag is not given, so that reads as no setting at all.
            if raw.strip() != "1":
                threads = int(raw) if raw.isdigit() else raw
                cfg.unknown[LAUNCHER_THREADS] = Entry(LAUNCHER_THREADS, threads, None, name, lineno, col, "env", name)
                cfg.note(
                    f"{name}={threads} is what accelerate launch {LAUNCHER_THREADS} sets (a launch flag with no "
                    "config-file key)",
                    rule="env.launcher-only",
                    key=LAUNCHER_THREADS,
                    line=lineno,
                    column=col,
                )
            continue
        if name in LAUNCHER_ENV:
            continue
        s = registry.by_env(name)
        if s is not None:
            value: Any = decode(s, raw)
            if s.key == "use_cpu" and value is False:
                continue
            if value is None:
                continue  # an unset number, as the launcher spells it: no setting
            cfg.set(s.path, value, written_key=name, **kw)
            continue
        cfg.unknown[name] = Entry(name, raw, None, name, lineno, col, "env", name)
        why = never_read(name)
        if why:
            cfg.note(f"{name} is {why}", "warning", rule="env.never-read", key=name, line=lineno, column=col)
    if override_entry is not None:
        override_entry.value = tuple(override.get(i, False) for i in range(3))
    return cfg


READ_PREFIXES = registry.READ_PREFIXES


def never_read(name: str) -> str:
    """``read by nothing; ...`` for a variable that looks like accelerate's but that no accelerate code
    reads (with what to use instead, or the closest name it does read); ``""`` for any other name."""
    if name in NEVER_READ:
        return f"read by nothing; use {NEVER_READ[name]}"
    if registry.by_env(name) is not None or not name.startswith(READ_PREFIXES):
        return ""
    names = [s.env for s in registry.SETTINGS if s.env] + list(registry.USE_ENV.values()) + sorted(LAUNCHER_ENV)
    stripped = name.removeprefix("ACCELERATE_")
    guess = [n for n in names if n == stripped] or suggest.ranked(
        name, names, 1, fold_case=True, abbreviations=True
    )  # ACCELERATE_FSDP_X -> FSDP_X
    return "read by nothing" + (f"; did you mean {guess[0]}?" if guess else "")


def reader_findings(cfg: Config) -> list[Finding]:
    """What the reader recorded about names (``Config.notes``): launcher-only variables, names
    accelerate never reads, values the file cannot know."""
    return [f for f in cfg.notes if f.rule in ("env.launcher-only", "env.never-read", "env.not-read")]


def format_env(env: dict[str, str], export: bool = False) -> str:
    prefix = "export " if export else ""
    return "".join(
        f"{prefix}{k}={shlex.quote(v)}\n" for k, v in sorted(env.items())
    )  # quoted only where a shell needs it


def write(
    cfg: Config,
    *,
    version: str | None = None,
    fmt: str = "env",
    machine_rank: int | None = None,
    cwd: str | None = None,
    export: bool = False,
    **_: Any,
) -> tuple[str, list[Finding]]:
    result = launch_env(cfg, version=version, machine_rank=machine_rank, cwd=cwd)
    findings = list(result.findings)
    for e, _arg in accelerator_env_entries(cfg):  # the launcher passes the shell's environment on
        if e.setting is not None and e.setting.env:
            result.env.setdefault(e.setting.env, str(e.value))
    if "PYTHONPATH" in result.env:
        findings.append(
            Finding(
                "launch.cwd",
                "info",
                "PYTHONPATH is the directory accelerate launch runs in (written as the current "
                "directory; accelerate appends it to any PYTHONPATH the shell has)",
                "distributed_type",
            )
        )
    head = ""
    if "nnodes" in result.torchrun:
        layout = " ".join(f"--{k}={v}" for k, v in result.torchrun.items() if v is not None)
        head = f"# not in env: accelerate launch runs torchrun {layout}\n"
    elif result.cmd:
        head = "# not in env: accelerate launch runs " + " ".join(result.cmd) + "\n"
    return head + format_env(result.env, export), findings


__all__ = ["NEVER_READ", "TYPE_OF_PARADIGM", "assignments", "decode", "format_env", "read", "reader_findings", "write"]
