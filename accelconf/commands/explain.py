"""``accelconf explain CONFIG``: the table (or JSON) of :func:`accelconf.precedence.explain`'s rows for
a config, a launch script's launches, ``--launch-args``, ``--env-file`` and ``--kwargs``; the findings
to-env reports for the same inputs go to stderr. The precedence model itself lives in
:mod:`accelconf.precedence` (public as ``accelconf.api.explain``)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from accelconf.accelerate.model import Config
from accelconf.errors import InputError, UsageError
from accelconf.findings import Finding
from accelconf.precedence import Row, explain, launch_process_env, mark_errors
from accelconf.text.document import read_text


def _shell_env(path: str) -> dict[str, tuple[str, str]]:
    from accelconf.formats.env import assignments

    text, source = read_text(path)
    return {name: (value, f"{source}:{lineno}") for name, value, lineno, _ in assignments(text, source)}


def add_parser(sub: Any, name: str, help_text: str) -> None:
    from accelconf.commands import add_trainer_version_options, help_texts

    p = sub.add_parser(
        name,
        help=help_text,
        **help_texts(
            """Show the effective value of every setting the training process sees, and where it comes
        from (config line, launch flag, shell env, Python kwarg or default), following accelerate's
        precedence. The ENV column names the variable that carries the value to the process.
        The findings to-env reports for the same inputs are printed on stderr, and a row whose
        value has an error says so.""",
            [
                ("accelconf explain config.yaml", ""),
                (
                    "accelconf explain config.yaml --launch-args '--num_processes 4 --mixed_precision fp16'",
                    "flags given to accelerate launch beside --config_file",
                ),
                (
                    "accelconf explain config.yaml --env-file .env --kwargs train.py --format json",
                    "with the shell's variables and the script's Accelerator arguments",
                ),
            ],
            "0 shown, 1 shown with an error finding (the same findings as to-env, on stderr), 2 unreadable "
            "or empty input, a launch accelerate would refuse, a --machine_rank outside 0..num_machines-1, "
            "or bad arguments",
        ),
    )
    p.add_argument("config", metavar="CONFIG", help="accelerate config in any format accelconf reads ('-' for stdin)")
    p.add_argument("--env-file", metavar="F", help="the shell environment (KEY=VALUE lines) the launch starts from")
    p.add_argument(
        "--launch-args", metavar="'...'", default="", help="flags given to accelerate launch besides --config_file"
    )
    p.add_argument("--kwargs", metavar="train.py", help="the training script: its literal Accelerator/plugin arguments")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    p.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="bold table header (default: only on a TTY; NO_COLOR turns it off)",
    )
    p.add_argument(
        "--accelerate-version", metavar="V", help="accelerate version to model (default: installed, else newest known)"
    )
    p.add_argument(
        "--config",
        dest="accelerate_config",
        metavar="ACCEL.yaml",
        help="with Trainer arguments: the accelerate config the launcher gets (a launch script names its own)",
    )
    p.add_argument(
        "--model",
        metavar="DIR",
        help="with Trainer arguments: a model folder whose config.json gives the "
        'hidden size DeepSpeed\'s model-size "auto" entries are filled from',
    )
    add_trainer_version_options(p)
    p.set_defaults(func=run)


def _short(text: str, width: int = 32) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def render_table(rows: list[Row], color: bool = False) -> str:
    head = ("SETTING", "VALUE", "FROM", "ENV")
    # ENV is the last column: a row without a variable shows its note there, not two spaces in
    data = [
        (
            r.setting,
            _short(str(r.value)),
            f"{r.source}: {r.where}" if r.where else r.source,
            "  ".join(x for x in (r.env, f"({r.note})" if r.note else "") if x),
        )
        for r in rows
    ]
    widths = [max(len(head[i]), *(len(d[i]) for d in data)) if data else len(head[i]) for i in range(3)]
    lines = ["  ".join(h.ljust(widths[i]) if i < 3 else h for i, h in enumerate(head))]
    for d in data:
        lines.append("  ".join(d[i].ljust(widths[i]) if i < 3 else d[i] for i in range(4)).rstrip())
    if color:
        lines[0] = f"\033[1m{lines[0]}\033[0m"
    return "\n".join(lines) + "\n"


def _launches(text: str, source: str, ver: str) -> list[Any]:
    """Every launch of a launch script or command line; raises :class:`InputError` (exit 2) when
    accelerate launch refuses any of them, after reporting every finding about its flags on stderr.
    Otherwise their findings are the caller's to report (:func:`run`, with the others, once)."""
    from accelconf.commands.convert import print_findings
    from accelconf.formats.cli import read_launches, refusals

    launches = read_launches(text, source, ver)
    refused = [f for la in launches for f in refusals(la)]
    if refused:
        print_findings([f for la in launches for f in la.findings], source, quiet=True)
        raise InputError(
            f"accelerate launch refuses {len(refused)} flag{'s' if len(refused) > 1 else ''} (each reported above)",
            source,
        )
    return launches


def _script_launch(launch: Any, source: str, ver: str, cli: Config | None) -> tuple[Config, Config | None, Any]:
    """(config, flags, launch) of a script's launch: with ``--config_file`` found (as accelerate
    resolves it, from the working directory; else beside the script), that file with the launch's
    flags (and ``--launch-args`` after them) as explicit flags; else the flags alone."""
    import os

    from accelconf import formats

    flags = launch.config
    if cli is not None:
        flags = Config(
            entries={**flags.entries, **cli.entries},
            unknown={**flags.unknown, **cli.unknown},
            source=flags.source,
            format="cli",
        )
    if launch.config_file is None:
        return flags, None, launch
    beside = os.path.join(os.path.dirname(source), launch.config_file)
    found = next((p for p in (launch.config_file, beside) if os.path.isfile(p)), None)
    if found is None:
        from accelconf.commands.convert import print_findings
        from accelconf.findings import Finding

        print_findings(
            [
                Finding(
                    "cli.config-file",
                    "info",
                    f"--config_file {launch.config_file!r} not found from here or beside "
                    "the script: the launch is explained without it",
                    "",
                    launch.line,
                    launch.column,
                )
            ],
            source,
        )
        return flags, None, launch
    text, path = read_text(found)
    return formats.read(text, None, path, ver), flags, launch


def _script_shell(launch: Any, source: str) -> dict[str, tuple[str, str]]:
    """A launch's own environment (the script's exports and ``VAR=x`` in front), the values the script knows."""
    return {name: (value, f"{source}:{line}") for name, (value, line, _) in launch.env.items() if value is not None}


def _input_findings(ver: str, *configs: Config | None) -> list[Finding]:
    """The findings to-env reports for each input read whole (the config, the script's arguments),
    each at its own file; the flags of a launch bring theirs with them (``Launch.findings``)."""
    from accelconf.api import input_findings

    out: list[Finding] = []
    for c in configs:
        if c is not None:
            out += [f if f.path else f.replace(path=c.source) for f in input_findings(c, ver)]
    return out


def _refuse_machine_rank(result: Any, cfg: Config, cli: Config | None) -> None:
    """``--launch-args '--machine_rank N'`` names a machine of the job, as ``to-env --machine-rank`` must
    (a rank in the input itself is validate's finding, as in to-env)."""
    from accelconf.accelerate.launch import refuse_machine_rank
    from accelconf.commands.convert import where_set

    if cli is None or "machine_rank" not in cli.entries:
        return
    where = "--launch-args" if "num_machines" in cli.entries else where_set(cfg, "num_machines")
    refuse_machine_rank(
        result.namespace.get("machine_rank"), result.namespace.get("num_machines"), where, "--machine_rank"
    )


def _explain_launch(
    cfg: Config,
    flags: Config | None,
    launch: Any,
    shell: dict[str, tuple[str, str]] | None,
    kwargs: Config | None,
    ver: str,
    source: str,
    cli: Config | None,
) -> tuple[list[Row], Any, list[Finding]]:
    """(rows, launch result, findings) of one launch (``cli``: the --launch-args): to-env's findings
    for the same inputs."""
    from accelconf.accelerate.launch import LaunchError

    env = {**(shell or {}), **(_script_shell(launch, source) if launch is not None else {})}
    try:
        rows, result = explain(cfg, ver, flags, env or None, kwargs)
    except LaunchError as exc:
        raise InputError(
            f"accelerate launch would fail: {exc.message}",
            source,
            launch.line if launch is not None else 0,
            launch.column if launch is not None else 0,
        ) from exc
    _refuse_machine_rank(result, cfg, cli)
    findings = _input_findings(ver, None if cfg.format == "cli" else cfg, kwargs)
    findings += [f for f in result.findings if f not in findings and f.severity != "info"]
    return rows, result, findings


def run(args: argparse.Namespace) -> int:
    from accelconf import formats
    from accelconf.accelerate.launch import resolve
    from accelconf.commands.convert import print_findings

    ver = resolve(args.accelerate_version)
    text, source = read_text(args.config)
    flag_findings: list[Finding] = []
    cli = None
    if args.launch_args.strip():
        given = _launches(args.launch_args, "--launch-args", ver)[0]
        cli, flag_findings = given.config, [f.with_path("--launch-args") for f in given.findings]
    groups = _trainer_groups(text, source, args)
    if groups:
        return _run_trainer(args, groups, ver, cli, flag_findings)
    if getattr(args, "accelerate_config", None) or getattr(args, "model", None):
        raise UsageError(
            "--config and --model explain Trainer arguments: give an arguments file, or a launch "
            "script whose training script takes them"
        )
    if formats.detect_format(text, source) == "cli":
        read = _launches(text, source, ver)
        flag_findings += [f for la in read for f in la.findings]
        launches = [_script_launch(la, source, ver, cli) for la in read]
    else:
        launches = [(formats.read(text, None, source, ver), cli, None)]
    shell = _shell_env(args.env_file) if args.env_file else None
    kwargs = None
    if args.kwargs:
        ktext, ksource = read_text(args.kwargs)
        kwargs = formats.read(ktext, "kwargs", ksource, ver)
    explained, findings = [], [f for f in flag_findings if f.severity != "info"]
    for cfg, flags, launch in launches:
        rows, result, found = _explain_launch(cfg, flags, launch, shell, kwargs, ver, source, cli)
        explained.append((launch, rows, result))
        findings += [f for f in found if f not in findings]
    for _, rows, _ in explained:
        mark_errors(rows, findings)
    _print(explained, ver, source, args, findings)
    print_findings(findings, source)
    return 1 if any(f.severity == "error" for f in findings) else 0


def _print(
    explained: list[tuple[Any, list[Row], Any]],
    ver: str,
    source: str,
    args: argparse.Namespace,
    findings: list[Finding],
) -> None:
    """One table (or JSON object) per launch; a script with several launches names each one's line."""
    several = len(explained) > 1
    if args.format == "json":
        from accelconf.report import findings_json

        blocks = [
            {
                **({"line": la.line} if several else {}),
                "mode": result.mode,
                "settings": [r.as_dict() for r in rows],
                "torchrun": result.torchrun,
            }
            for la, rows, result in explained
        ]
        first = {k: v for k, v in blocks[0].items() if k != "line"}
        out = {
            "accelerate_version": ver,
            **first,
            **({"launches": blocks} if several else {}),
            "findings": findings_json(findings, source),
        }
        print(json.dumps(out, indent=2, default=str))
        return
    from accelconf.report import use_color

    for n, (la, rows, _) in enumerate(explained):
        if several:
            sys.stdout.write(("\n" if n else "") + f"# {source}:{la.line}: accelerate launch\n")
        sys.stdout.write(render_table(rows, use_color(sys.stdout, args.color)))


# ---- Trainer arguments: what the Trainer's Accelerator is built with --------------------------------


def _trainer_groups(text: str, source: str, args: argparse.Namespace) -> list[Any]:
    """The groups of Trainer arguments a file gives (none: the file is explained as an accelerate config)."""
    from accelconf import kinds
    from accelconf.kinds import TRAINER_KINDS
    from accelconf.trainer.read import read_all
    from accelconf.trainer.releases import all_field_names

    kind = kinds.recognise(text, source).kind
    if kind in TRAINER_KINDS:
        return read_all(text, source, kind)
    if kind in ("launch", "other-launch"):
        names = all_field_names()
        groups = [g for g in read_all(text, source, kind) if any(a.name in names for a in g.args)]
        if groups and kind == "launch":
            _launches(text, source, accelerate_resolve(args.accelerate_version))  # accelerate launch's refusals: exit 2
        return groups
    return []


def accelerate_resolve(version: str | None) -> str:
    from accelconf.accelerate.launch import resolve

    return resolve(version)


def _trainer_launcher(
    group: Any, args: argparse.Namespace, ver: str, cli: Config | None, shell: dict[str, tuple[str, str]]
) -> tuple[list[Row], Any, dict[str, tuple[str, str, str]]]:
    """The accelerate side of one group: ``--config`` or the launch line's ``--config_file``, explained as
    for an accelerate config; (rows, launch result, the process environment with where each variable came from)."""
    from accelconf import formats
    from accelconf.accelerate.launch import LaunchError

    name = getattr(args, "accelerate_config", None)
    launch = _accelerate_launch_of(group, ver)
    if name:
        text, src = read_text(name)
        cfg, flags = formats.read(text, None, src, ver), cli
    elif launch is not None:  # `accelerate launch [--config_file X] FLAGS train.py ARGS`: its file and flags
        cfg, flags, _ = _script_launch(launch, group.path, ver, cli)
        src = group.path
    else:
        return [], None, {k: (v, "shell", w) for k, (v, w) in shell.items()}
    try:
        rows, result = explain(cfg, ver, flags, shell or None)
    except LaunchError as exc:
        raise InputError(f"accelerate launch would fail: {exc.message}", src) from exc
    where = {r.env: r.where for r in rows if r.env}
    env, _ = launch_process_env(result, shell)
    return rows, result, {k: (v, how, w or where.get(k, "")) for k, (v, how, w) in env.items()}


def _accelerate_launch_of(group: Any, ver: str) -> Any:
    """The ``accelerate launch`` command of a launch script's group (None: torchrun, deepspeed, a file of arguments)."""
    if group.kind not in ("launch", "other-launch"):
        return None
    from accelconf.formats.cli import read_launches

    text, _ = read_text(group.path)
    found = [la for la in read_launches(text, group.path, ver) if la.line == group.line]
    return found[0] if found and (found[0].config_file or found[0].config.entries) else None


def _prov_rows(prefix: str, items: Any) -> list[Row]:
    return [
        Row(
            f"{prefix}{p.name}",
            p.value,
            p.source,
            p.where,
            "",
            "; ".join(x for x in (f"overrides {p.overrode}" if p.overrode else "", p.note) if x),
        )
        for p in items
    ]


def _ds_rows(runs: Any, ds_doc: Any) -> list[Row]:
    """Every entry of the DeepSpeed config the Trainer runs with: filled ones with their source,
    the rest from the JSON."""
    rows: list[Row] = []

    def walk(node: Any, path: tuple[str, ...]) -> None:
        for k, v in node.items():
            if isinstance(v, dict) and v:
                walk(v, path + (k,))
                continue
            key = ".".join(path + (k,))
            if key == "gradient_accumulation_steps":
                continue  # shown with the other accumulation rows
            p = runs.deepspeed.provenance.get(key)
            if p is not None:
                rows.extend(_prov_rows("deepspeed.", [p]))
            elif ds_doc.node(path + (k,)) is not None:
                rows.append(
                    Row(f"deepspeed.{key}", v, "deepspeed json", f"{ds_doc.path}:{ds_doc.position(path + (k,))[0]}")
                )
            else:
                rows.append(Row(f"deepspeed.{key}", v, "plugin default", "DeepSpeedPlugin", "", "added by accelerate"))

    walk(runs.deepspeed.config, ())
    return rows


def trainer_rows(runs: Any, ds_doc: Any) -> list[Row]:
    """The rows of what the Trainer's Accelerator is built with."""
    rows = _prov_rows("Accelerator.", [runs.mixed_precision])
    rows += _prov_rows("", runs.gradient_accumulation)
    if ds_doc is not None and rows[-1].source == "deepspeed json":
        rows[-1].where = f"{ds_doc.path}:{ds_doc.position(('gradient_accumulation_steps',))[0]}"
    if runs.fsdp is not None:
        rows += _prov_rows("fsdp_plugin.", runs.fsdp.values())
    if runs.deepspeed is not None:
        rows += _ds_rows(runs, ds_doc)
    rows += [Row("(note)", "", "", "", "", n) for n in runs.notes]
    return rows


def _hidden(args: argparse.Namespace) -> tuple[int | None, str]:
    if not getattr(args, "model", None):
        return None, ""
    from accelconf.trainer.runs import model_hidden_size

    return model_hidden_size(args.model)


def _run_trainer(
    args: argparse.Namespace, groups: list[Any], ver: str, cli: Config | None, findings: list[Finding]
) -> int:
    """``explain`` of Trainer arguments: the launcher's settings, then what the Trainer's Accelerator is built with."""
    from accelconf.commands import trainer_versions
    from accelconf.commands.convert import print_findings
    from accelconf.trainer import runs_inputs

    tver = trainer_versions(args)["transformers_version"]
    shell = _shell_env(args.env_file) if args.env_file else {}
    hidden, hidden_where = _hidden(args)
    blocks = []
    for group in groups:
        own = {
            **shell,
            **{n: (str(a.value), f"{group.path}:{a.line}") for n, a in group.env.items() if a.value is not None},
        }
        acc_rows, result, env = _trainer_launcher(group, args, ver, cli, own)
        world = runs_inputs.world_size(result, group)
        inp, runs, found = runs_inputs.what_runs_group(
            group, env, version=tver, world=world, hidden_size=hidden, hidden_where=hidden_where
        )
        findings += [f for f in found if f not in findings]
        blocks.append((group, acc_rows, runs, trainer_rows(runs, inp.ds_doc), result))
    _print_trainer(blocks, ver, tver, args, findings)
    print_findings(findings, groups[0].path)
    return 1 if any(f.severity == "error" for f in findings) else 0


def _print_trainer(blocks: list[Any], ver: str, tver: str, args: argparse.Namespace, findings: list[Finding]) -> None:
    source = blocks[0][0].path
    if args.format == "json":
        from accelconf.report import findings_json

        out = [
            {
                "line": g.line,
                "launch": g.group,
                "mode": result.mode if result is not None else "none",
                "settings": [r.as_dict() for r in acc],
                "torchrun": result.torchrun if result is not None else None,
                "trainer": runs.to_json(),
                "trainer_settings": [r.as_dict() for r in rows],
            }
            for g, acc, runs, rows, result in blocks
        ]
        print(
            json.dumps(
                {
                    "accelerate_version": ver,
                    "transformers_version": tver,
                    **{k: v for k, v in out[0].items() if k != "line"},
                    **({"launches": out} if len(out) > 1 else {}),
                    "findings": findings_json(findings, source),
                },
                indent=2,
                default=str,
            )
        )
        return
    from accelconf.report import use_color

    color = use_color(sys.stdout, args.color)
    for n, (g, acc, _, rows, _) in enumerate(blocks):
        if len(blocks) > 1 or g.group:
            sys.stdout.write(("\n" if n else "") + f"# {source}:{g.line}: {g.group or 'arguments'}\n")
        sys.stdout.write(render_table(acc + rows, color))
