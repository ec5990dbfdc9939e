"""Every effective setting the training process sees, and where it came from (``accelconf explain``).

Precedence, as accelerate implements it (accelerate/commands/launch.py `_validate_launch_command` for
flags against the file; accelerate/accelerator.py and utils/dataclasses.py for arguments against env):

* at launch: an explicit ``accelerate launch`` flag > the config file > the flag default (from 1.5;
  up to 1.4 nested config keys beat explicit flags); the launcher overwrites the variables it writes,
  other variables of the shell reach the process unchanged;
* in the process: an explicit Python argument > the environment > the plugin default, except that
  ``ACCELERATE_USE_CPU`` (true) forces the CPU even with ``Accelerator(cpu=False)``,
  ``ACCELERATE_GRADIENT_ACCUMULATION_STEPS`` replaces ``Accelerator(gradient_accumulation_steps=)``,
  and a DeepSpeed JSON file beats both for every entry that is not ``"auto"``.

The work is :func:`explain`, a pure function returning rows (the command ``accelconf explain``,
:mod:`accelconf.commands.explain`, only reads files and prints); :func:`mark_errors` notes the rows
whose value has an error finding.
"""

from __future__ import annotations

from typing import Any

from accelconf import releases
from accelconf.accelerate import registry
from accelconf.accelerate.launch import launch_env, resolve
from accelconf.accelerate.model import Config
from accelconf.findings import Finding
from accelconf.formats.env import never_read
from accelconf.records import Record

PARADIGM_VARS = set(registry.USE_ENV.values()) | {registry.USE_PARALLELISM_CONFIG_ENV}
LAYOUT_KEYS = (
    "num_processes",
    "num_machines",
    "machine_rank",
    "main_process_ip",
    "main_process_port",
    "rdzv_backend",
    "same_network",
)


class Row(Record):
    _fields = ("setting", "value", "source", "where", "env", "note")

    def __init__(self, setting: str, value: Any, source: str, where: str, env: str = "", note: str = "") -> None:
        self.setting = setting  # registry path, or the variable name when no setting matches
        self.value = value
        self.source = source  # config | cli | shell | kwarg | default
        self.where = where  # config.yaml:12, --fsdp_version, train.py:8, FSDP_VERSION, ...
        self.env = env  # the variable that carries it to the process ("" if none)
        self.note = note


def _file_where(cfg: Config, path: str) -> str:
    e = cfg.entries.get(path)
    if e is None:
        return cfg.source
    return f"{cfg.source}:{e.line}" if e.line else cfg.source


def _launch_source(cfg: Config, result: Any, ver: str, s: registry.Setting | None) -> tuple[str, str]:
    """(source, where) of a value accelerate launch sets: a flag, the config file, or a default."""
    if s is None:
        return "default", "accelerate launch"
    origin = result.origins.get(s.namespace) if s.flag else ("file" if s.path in cfg.entries else "default")
    if s.key == "use_cpu":
        origin = "cli" if result.origins.get("cpu") == "cli" else ("file" if "use_cpu" in cfg.entries else "default")
    if origin == "cli":
        return "cli", f"--{s.flag}"
    if origin == "file" or s.path in cfg.entries:
        if s.flag and s.namespace in result.explicit and ver and releases.has(ver, "explicit-flags-win"):
            return "cli", f"--{s.flag}"
        return "config", _file_where(cfg, s.path)
    return "default", f"flag default of --{s.flag}" if s.flag else "accelerate launch"


def _layout_rows(cfg: Config, result: Any, ver: str) -> list[Row]:
    """The process layout (not in env) and the launcher path."""
    rows: list[Row] = []
    for key in LAYOUT_KEYS:
        s = registry.get("", key)
        value = result.namespace.get(key)
        src, where = _launch_source(cfg, result, ver, s)
        note = "ignored in a config file" if s is not None and s.file_ignored and key in cfg.entries else ""
        rows.append(Row(key, value, src, where, "", note or "torchrun/launcher argument, not env"))
    rows.append(
        Row(
            "(launcher)",
            result.mode,
            "config" if "distributed_type" in cfg.entries else "default",
            _file_where(cfg, "distributed_type"),
            "",
            "launch path",
        )
    )
    return rows


def _plugin_default_rows(ver: str, process_env: dict[str, tuple[str, str, str]], seen: set[str]) -> list[Row]:
    """Plugin defaults of the plugins the process builds."""
    rows: list[Row] = []
    active = {
        registry.FSDP: registry.USE_ENV["FSDP"],
        registry.DS: registry.USE_ENV["DEEPSPEED"],
        registry.MEG: registry.USE_ENV["MEGATRON_LM"],
        registry.PAR: registry.USE_PARALLELISM_CONFIG_ENV,
    }
    for s in registry.SETTINGS:
        if not s.exists_in(ver) or not s.plugin or s.path in seen or s.lost:
            continue
        cls = s.plugin.split(".", 1)[0]
        if cls in active and process_env.get(active[cls], ("",))[0] == "true" and s.plugin_default is not None:
            rows.append(Row(s.path, s.plugin_default, "default", f"{cls} default", s.env or ""))
    return rows


# Variables shown although no setting reads them (besides PARADIGM_VARS).
_SHOWN_PREFIXES = registry.READ_PREFIXES
_SHOWN_VARS = (
    registry.THREADS_ENV,
    *registry.RENDEZVOUS_ENV,
    registry.PYTHONPATH_ENV,
    *(s.env for s in (registry.get("", "gpu_ids"),) if s is not None and s.env),
)
_DS_FILE_ENV = registry.get("deepspeed_config", "deepspeed_config_file").env  # type: ignore[union-attr]
_GA_ENV = registry.get("deepspeed_config", "gradient_accumulation_steps").env  # type: ignore[union-attr]


class _Launch(Record):
    """What a row of a process variable is explained from: the config, the launch and the script's kwargs."""

    _fields = ("cfg", "result", "ver", "process_env", "replaced", "kwargs")

    def __init__(
        self,
        cfg: Config,
        result: Any,  # accelconf.accelerate.launch.LaunchResult
        ver: str,
        process_env: dict[str, tuple[str, str, str]],  # variable -> (value, "shell"|"launch", where)
        replaced: dict[str, tuple[str, str]],  # shell variables the launcher overwrites -> (value, where)
        kwargs: Config | None,
    ) -> None:
        self.cfg, self.result, self.ver = cfg, result, ver
        self.process_env, self.replaced, self.kwargs = process_env, replaced, kwargs

    def variable_row(self, var: str) -> Row | None:
        """The row of one variable of the process (None: not one to show)."""
        value, how, where = self.process_env[var]
        s = registry.by_env(var)
        if s is None and var not in PARADIGM_VARS and not var.startswith(_SHOWN_PREFIXES) and var not in _SHOWN_VARS:
            return None
        src, wh = self.source(var, s, how, where)
        path = s.path if s else var
        note = self.replaced_note(var, src)
        if s is None and var not in PARADIGM_VARS and how == "shell":
            note = never_read(var)
        kw = self.kwargs.entries if self.kwargs is not None else {}
        if s is not None and path in kw:
            e = kw[path]
            if s.key == "use_cpu" and str(value).lower() in registry.TRUE_WORDS and e.value is False:
                note = f"{var}={value} forces the CPU even with cpu=False ({self.kwargs.source}:{e.line})"  # type: ignore[union-attr]
            else:
                return Row(path, e.value, "kwarg", f"{self.kwargs.source}:{e.line}", var, f"beats {var}={value}")  # type: ignore[union-attr]
        if (
            s is not None
            and s.section == "deepspeed_config"
            and s.key != "deepspeed_config_file"
            and _DS_FILE_ENV in self.process_env
        ):
            note = 'the DeepSpeed JSON file wins unless its entry is "auto"'
        return Row(path, value, src, wh, var, note)

    def source(self, var: str, s: registry.Setting | None, how: str, where: str) -> tuple[str, str]:
        """(source, where) of a variable's value: the shell, a flag, the config file or a default."""
        result = self.result
        if how == "shell":
            return "shell", where or var
        if var in PARADIGM_VARS or var == registry.CONFIG_DS_FIELDS_ENV:
            flag = next(
                (f for f in ("use_fsdp", "use_deepspeed", "use_megatron_lm") if result.origins.get(f) == "cli"), None
            )
            return ("cli", f"--{flag}") if flag else ("config", _file_where(self.cfg, "distributed_type"))
        if var == registry.THREADS_ENV:
            return (
                ("cli", "--num_cpu_threads_per_process")
                if "num_cpu_threads_per_process" in result.explicit
                else ("default", "accelerate launch (1, or cores / processes with use_cpu)")
            )
        return _launch_source(self.cfg, result, self.ver, s)

    def replaced_note(self, var: str, src: str) -> str:
        if var not in self.replaced:
            return ""
        old_value, old_where = self.replaced[var]
        return (
            f"replaces {var}={old_value} from {old_where}: accelerate launch writes this variable itself "
            f"(from {'the config' if src == 'config' else 'the flag' if src == 'cli' else 'its default'}), the shell "
            "value never reaches the process"
        )


def launch_process_env(
    result: Any, shell: dict[str, tuple[str, str]]
) -> tuple[dict[str, tuple[str, str, str]], dict[str, tuple[str, str]]]:
    """Every variable of the process -> (value, "shell"|"launch", where), and the shell values the launcher replaces."""
    process_env = {k: (v, "shell", w) for k, (v, w) in shell.items()}
    # accelerate launch builds the process env as os.environ.copy() and then assigns its own
    # variables (utils/launch.py prepare_*_env: current_env[...] = ...): a shell value of one of
    # them is replaced, whatever the shell said
    replaced = {k: shell[k] for k in result.env if k in shell and shell[k][0] != result.env[k]}
    for k, v in result.env.items():
        process_env[k] = (v, "launch", "")
    return process_env, replaced


def explain(
    cfg: Config,
    version: str | None = None,
    cli: Config | None = None,
    shell: dict[str, tuple[str, str]] | None = None,
    kwargs: Config | None = None,
) -> tuple[list[Row], Any]:
    """Rows for every setting the process sees. ``shell``: variable -> (value, where)."""
    ver = resolve(version)
    result = launch_env(cfg, version=ver, cli_overrides=cli)
    seen: set[str] = set()
    rows: list[Row] = _layout_rows(cfg, result, ver)  # 1. the process layout (not in env)
    process_env, replaced = launch_process_env(result, shell or {})  # 2. every variable of the process
    launch = _Launch(cfg, result, ver, process_env, replaced, kwargs)
    for var in sorted(process_env):
        row = launch.variable_row(var)
        if row is not None:
            rows.append(row)
            seen.add(row.setting)
    if kwargs is not None:
        _add_kwarg_rows(rows, kwargs, process_env, seen)  # 3. explicit kwargs with no variable in the process
    rows += _plugin_default_rows(ver, process_env, seen)  # 4. plugin defaults of the plugins the process builds
    return rows, result


def _add_kwarg_rows(
    rows: list[Row], kwargs: Config, process_env: dict[str, tuple[str, str, str]], seen: set[str]
) -> None:
    """The script's explicit arguments that no variable of the process carries, and those accelconf does not model."""
    for path, e in kwargs.entries.items():
        if path in seen or path == "distributed_type":
            continue
        rows.append(
            Row(
                path,
                e.value,
                "kwarg",
                f"{kwargs.source}:{e.line}",
                e.setting.env if e.setting and e.setting.env else "",
            )
        )
        seen.add(path)
    for path, e in kwargs.unknown.items():
        if path == "Accelerator.gradient_accumulation_steps" and _GA_ENV in process_env:
            ga = next(r for r in rows if r.env == _GA_ENV)
            rows.append(
                Row(
                    path,
                    ga.value,
                    ga.source,
                    ga.where,
                    ga.env,
                    f"replaces gradient_accumulation_steps={e.value} ({kwargs.source}:{e.line})",
                )
            )
        else:
            rows.append(Row(path, e.value, "kwarg", f"{kwargs.source}:{e.line}", "", "not a setting accelconf models"))


def mark_errors(rows: list[Row], findings: list[Finding]) -> None:
    """A row whose value has an error finding says so: the process never runs with it as shown."""
    rules = {f.key: f.rule for f in findings if f.severity == "error"}
    for r in rows:
        if r.setting in rules:
            r.note = "; ".join(x for x in (f"error [{rules[r.setting]}]", r.note) if x)
