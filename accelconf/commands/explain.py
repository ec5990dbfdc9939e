"""``accelconf explain CONFIG``: the table (or JSON) of :func:`accelconf.precedence.explain`'s rows for
a config, a launch script's launches, ``--launch-args``, ``--env-file`` and ``--kwargs``; the findings
to-env reports for the same inputs go to stderr. The precedence model itself lives in
:mod:`accelconf.precedence` (public as ``accelconf.api.explain``)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import Any

from accelconf.errors import InputError
from accelconf.accelerate.model import Config
from accelconf.findings import Finding
from accelconf.precedence import Row, explain, mark_errors
from accelconf.text.document import read_text

def _shell_env(path: str) -> dict[str, tuple[str, str]]:
    from accelconf.formats.env import assignments

    text, source = read_text(path)
    return {name: (value, f"{source}:{lineno}") for name, value, lineno, _ in assignments(text, source)}


def add_parser(sub: Any, name: str, help_text: str) -> None:
    from accelconf.commands import add_trainer_version_options, help_texts

    p = sub.add_parser(name, help=help_text, **help_texts(
        """Show the effective value of every setting the training process sees, and where it comes
        from (config line, launch flag, shell env, Python kwarg or default), following accelerate's
        precedence. The ENV column names the variable that carries the value to the process.
        The findings to-env reports for the same inputs are printed on stderr, and a row whose
        value has an error says so.""",
        [("accelconf explain config.yaml", ""),
         ("accelconf explain config.yaml --launch-args '--num_processes 4 --mixed_precision fp16'",
          "flags given to accelerate launch beside --config_file"),
         ("accelconf explain config.yaml --env-file .env --kwargs train.py --format json",
          "with the shell's variables and the script's Accelerator arguments")],
        "0 shown, 1 shown with an error finding (the same findings as to-env, on stderr), 2 unreadable "
        "or empty input, a launch accelerate would refuse, a --machine_rank outside 0..num_machines-1, "
        "or bad arguments"))
    p.add_argument("config", metavar="CONFIG", help="accelerate config in any format accelconf reads ('-' for stdin)")
    p.add_argument("--env-file", metavar="F", help="the shell environment (KEY=VALUE lines) the launch starts from")
    p.add_argument("--launch-args", metavar="'...'", default="", help="flags given to accelerate launch besides --config_file")
    p.add_argument("--kwargs", metavar="train.py", help="the training script: its literal Accelerator/plugin arguments")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="bold table header (default: only on a TTY; NO_COLOR turns it off)")
    p.add_argument("--accelerate-version", metavar="V", help="accelerate version to model (default: installed, else newest known)")
    add_trainer_version_options(p)
    p.set_defaults(func=run)


def _short(text: str, width: int = 32) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def render_table(rows: list[Row], color: bool = False) -> str:
    head = ("SETTING", "VALUE", "FROM", "ENV")
    # ENV is the last column: a row without a variable shows its note there, not two spaces in
    data = [(r.setting, _short(str(r.value)), f"{r.source}: {r.where}" if r.where else r.source,
             "  ".join(x for x in (r.env, f"({r.note})" if r.note else "") if x))
            for r in rows]
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
        raise InputError(f"accelerate launch refuses {len(refused)} flag{'s' if len(refused) > 1 else ''} "
                         "(each reported above)", source)
    return launches


def _script_launch(launch: Any, source: str, ver: str, cli: Config | None) -> tuple[Config, Config | None, Any]:
    """(config, flags, launch) of a script's launch: with ``--config_file`` found (as accelerate
    resolves it, from the working directory; else beside the script), that file with the launch's
    flags (and ``--launch-args`` after them) as explicit flags; else the flags alone."""
    import os

    from accelconf import formats

    flags = launch.config
    if cli is not None:
        flags = Config(entries={**flags.entries, **cli.entries}, unknown={**flags.unknown, **cli.unknown},
                       source=flags.source, format="cli")
    if launch.config_file is None:
        return flags, None, launch
    beside = os.path.join(os.path.dirname(source), launch.config_file)
    found = next((p for p in (launch.config_file, beside) if os.path.isfile(p)), None)
    if found is None:
        from accelconf.commands.convert import print_findings
        from accelconf.findings import Finding

        print_findings([Finding("cli.config-file", "info", f"--config_file {launch.config_file!r} not found from here or beside "
                                "the script: the launch is explained without it", "", launch.line, launch.column)], source)
        return flags, None, launch
    text, path = read_text(found)
    return formats.read(text, None, path, ver), flags, launch


def _script_shell(launch: Any, source: str) -> dict[str, tuple[str, str]]:
    """A launch's own environment (the script's exports and ``VAR=x`` in front), the values the script knows."""
    return {name: (value, f"{source}:{line}") for name, (value, line, _) in launch.env.items() if value is not None}


def _input_findings(ver: str, *configs: Config | None) -> list[Finding]:
    """The findings to-env reports for each input read whole (the config, the script's arguments),
    each at its own file; the flags of a launch bring theirs with them (``Launch.findings``)."""
    from dataclasses import replace

    from accelconf.api import input_findings

    out: list[Finding] = []
    for c in configs:
        if c is not None:
            out += [f if f.path else replace(f, path=c.source) for f in input_findings(c, ver)]
    return out


def _refuse_machine_rank(result: Any, cfg: Config, cli: Config | None) -> None:
    """``--launch-args '--machine_rank N'`` names a machine of the job, as ``to-env --machine-rank`` must
    (a rank in the input itself is validate's finding, as in to-env)."""
    from accelconf.accelerate.launch import refuse_machine_rank
    from accelconf.commands.convert import where_set

    if cli is None or "machine_rank" not in cli.entries:
        return
    where = "--launch-args" if "num_machines" in cli.entries else where_set(cfg, "num_machines")
    refuse_machine_rank(result.namespace.get("machine_rank"), result.namespace.get("num_machines"), where, "--machine_rank")


def _explain_launch(cfg: Config, flags: Config | None, launch: Any, shell: dict[str, tuple[str, str]] | None,
                    kwargs: Config | None, ver: str, source: str, cli: Config | None) -> tuple[list[Row], Any, list[Finding]]:
    """(rows, launch result, findings) of one launch (``cli``: the --launch-args): to-env's findings
    for the same inputs."""
    from accelconf.accelerate.launch import LaunchError

    env = {**(shell or {}), **(_script_shell(launch, source) if launch is not None else {})}
    try:
        rows, result = explain(cfg, ver, flags, env or None, kwargs)
    except LaunchError as exc:
        raise InputError(f"accelerate launch would fail: {exc.message}", source,
                         launch.line if launch is not None else 0, launch.column if launch is not None else 0) from exc
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


def _print(explained: list[tuple[Any, list[Row], Any]], ver: str, source: str, args: argparse.Namespace,
           findings: list[Finding]) -> None:
    """One table (or JSON object) per launch; a script with several launches names each one's line."""
    several = len(explained) > 1
    if args.format == "json":
        from accelconf.report import findings_json

        blocks = [{**({"line": la.line} if several else {}), "mode": result.mode, "settings": [asdict(r) for r in rows],
                   "torchrun": result.torchrun} for la, rows, result in explained]
        first = {k: v for k, v in blocks[0].items() if k != "line"}
        out = {"accelerate_version": ver, **first, **({"launches": blocks} if several else {}),
               "findings": findings_json(findings, source)}
        print(json.dumps(out, indent=2, default=str))
        return
    from accelconf.report import use_color

    for n, (la, rows, _) in enumerate(explained):
        if several:
            sys.stdout.write(("\n" if n else "") + f"# {source}:{la.line}: accelerate launch\n")
        sys.stdout.write(render_table(rows, use_color(sys.stdout, args.color)))
