"""``accelconf convert`` and its shortcuts ``to-env``, ``to-cli``, ``to-kwargs``, ``to-yaml``, ``to-json``.

Reads one input (a file, or ``-`` for stdin) in any format, writes it in another on stdout, and
prints the findings of lossy steps on stderr as ``FILE:LINE:COL: severity: message [rule]``.
Multi-node: ``--machine-rank N`` prints the block of one node, ``--all-ranks`` one block per node
(they differ only in the machine rank). Exit codes follow :func:`accelconf.report.exit_code`, as
for every command: 1 when an error finding is reported (or a warning with ``--strict``), 2 when the
input cannot be read or accelerate refuses to launch it, else 0.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from accelconf.accelerate.launch import refuse_machine_rank
from accelconf.accelerate.model import Config
from accelconf.errors import InputError, UsageError
from accelconf.findings import Finding

SHORTCUTS = {
    "to-env": "env",
    "to-cli": "cli",
    "to-kwargs": "kwargs",
    "to-yaml": "yaml",
    "to-json": "json",
    "to-args": "args",
}


# What each output is, and the examples of its --help (convert's own help shows them all).
_OUTPUTS = {
    "env": (
        "the environment variables `accelerate launch` would give the training process, as KEY=VALUE lines",
        [
            ("accelconf to-env config.yaml", ""),
            ("accelconf to-env --export config.yaml > job.env", "a file to source"),
            ("accelconf to-env --machine-rank 1 multinode.yaml", "the variables of node 1"),
        ],
    ),
    "cli": (
        "the `accelerate launch` command line with the flags that reproduce the config",
        [
            ("accelconf to-cli config.yaml", ""),
            ("accelconf to-cli --all-ranks -q multinode.yaml", "one command per node"),
            (
                'cmd="$(accelconf to-cli -q --machine-rank $SLURM_NODEID cfg.yaml)" && eval "$cmd train.py"',
                "in a SLURM job (with an error nothing is printed and the assignment fails)",
            ),
        ],
    ),
    "kwargs": (
        "a Python snippet with the Accelerator and plugin arguments (real class and field names)",
        [("accelconf to-kwargs config.yaml", ""), ("accelconf to-kwargs launch.env", "from a job's environment")],
    ),
    "yaml": (
        "an accelerate config file (YAML) that accelerate launch reads the same way",
        [
            ("accelconf to-yaml launch.env > config.yaml", "the config behind a job's environment"),
            ("accelconf to-yaml --from cli launch.sh", "from an accelerate launch command line"),
        ],
    ),
    "args": (
        (
            "the Hugging Face TrainingArguments fields (fsdp, fsdp_config, deepspeed, bf16/fp16) that build the "
            "Accelerator the accelerate config launches, as an arguments YAML"
        ),
        [
            ("accelconf to-args fsdp.yaml > args.yaml", ""),
            ("accelconf to-yaml args.yaml", "the other way: the accelerate config of an arguments file"),
            ("accelconf to-cli args.yaml", "from Trainer arguments: a torchrun command without accelerate launch"),
        ],
    ),
    "json": (
        "an accelerate config file in JSON",
        [
            ("accelconf to-json config.yaml", ""),
            ("echo 'ACCELERATE_USE_FSDP=true' | accelconf to-json --from env -", ""),
        ],
    ),
}
_RANKED = ("env", "cli")  # the writers whose output differs per node (machine rank)


def _exit_codes(target: str | None) -> str:
    """The exit codes of convert or a shortcut: only the per-node outputs take --machine-rank."""
    rank = "a --machine-rank outside 0..num_machines-1, " if target is None or target in _RANKED else ""
    cli = {None: "--to cli then prints no command; ", "cli": "then no command is printed; "}.get(target, "")
    return (
        "0 converted (lossy steps are reported on stderr as FILE:LINE:COL: severity: message [rule]), "
        f"1 an error finding ({cli}with --strict a warning too), 2 unreadable or empty input, a launch "
        f"accelerate would refuse, {rank}or bad arguments"
    )


def add_parser(sub: Any, name: str, help_text: str) -> None:
    from accelconf.commands import add_trainer_version_options, help_texts
    from accelconf.formats import FORMATS

    target = SHORTCUTS.get(name)
    reads = (
        "Reads an accelerate config (YAML/JSON), a .env file (KEY=VALUE), an `accelerate launch` "
        "command line or a Python file with Accelerator(...) arguments; the format comes from the "
        "suffix or the content unless --from says."
    )
    if target:
        what, examples = _OUTPUTS[target]
        texts = help_texts(f"Convert INPUT to {what}. {reads}", examples, _exit_codes(target))
    else:
        texts = help_texts(
            f"Convert INPUT from one way of passing accelerate settings to another. {reads} "
            "Outputs: " + "; ".join(f"{k}: {v[0]}" for k, v in _OUTPUTS.items()) + ". The shortcuts "
            "to-env, to-cli, to-kwargs, to-yaml and to-json are convert --to FORMAT.",
            [
                ("accelconf convert --to env config.yaml", "same as to-env"),
                ("accelconf convert --from cli --to yaml launch.sh", ""),
                ("accelconf convert --to cli --all-ranks multinode.yaml", ""),
            ],
            _exit_codes(target),
        )
    p = sub.add_parser(name, help=help_text, **texts)
    p.add_argument(
        "input",
        metavar="INPUT",
        help="config (yaml/json), .env, accelerate launch command line or Python file; '-' is stdin",
    )
    if target is None:
        p.add_argument("--to", dest="target_format", required=True, choices=(*FORMATS, "args"), help="output format")
    p.add_argument(
        "--from", dest="source_format", choices=FORMATS, help="input format (default: from the suffix or content)"
    )
    p.add_argument(
        "--accelerate-version", metavar="V", help="accelerate version to model (default: installed, else newest known)"
    )
    add_trainer_version_options(p)
    # options offered only where they mean something: ranks for per-node outputs, export for env
    if target is None or target in _RANKED:
        ranks = p.add_mutually_exclusive_group()
        only = "" if target else " (env and cli only)"
        ranks.add_argument("--machine-rank", type=int, metavar="N", help=f"multi-node: the output of node N{only}")
        ranks.add_argument("--all-ranks", action="store_true", help=f"multi-node: one block per node{only}")
    if target is None or target == "cli":
        p.add_argument(
            "--preflight",
            action="store_true",
            help="end each command with `-m accelconf.preflight INPUT`: the check, started as training is"
            + ("" if target else " (cli only)"),
        )
    if target is None or target == "env":
        p.add_argument(
            "--export", action="store_true", help="prefix lines with 'export '" + ("" if target else " (env only)")
        )
    p.add_argument("--strict", action="store_true", help="exit 1 on a warning too (an error always exits 1)")
    p.add_argument("--quiet", "-q", action="store_true", help="do not print info findings")
    p.set_defaults(machine_rank=None, all_ranks=False, export=False, preflight=False)
    if target:
        p.set_defaults(target_format=target)
    p.set_defaults(func=run)


def print_findings(findings: list[Finding], source: str, quiet: bool = False, stream: Any = None) -> None:
    """Each finding once, as ``validate`` prints them (``FILE: ...`` for a whole-file finding)."""
    from accelconf.report import finding_line, unique

    stream = stream or sys.stderr
    for f in unique(findings):
        if quiet and f.severity == "info":
            continue
        print(finding_line(f, source), file=stream)


def num_machines(cfg: Config) -> int:
    """The machines a config launches on: its ``num_machines``, else accelerate launch's default 1."""
    try:
        return int(cfg.get("num_machines", 1) or 1)
    except (TypeError, ValueError):
        return 1


def where_set(cfg: Config, path: str) -> str:
    """Where the input sets a setting (``FILE:LINE``), or that it does not (its default applies)."""
    e = cfg.entries.get(path)
    if e is None:
        return f"{cfg.source} does not set it"
    return f"{cfg.source}:{e.line}" if e.line else cfg.source


def convert_text(
    text: str,
    source: str,
    target: str,
    source_format: str | None = None,
    version: str | None = None,
    machine_rank: int | None = None,
    all_ranks: bool = False,
    export: bool = False,
) -> tuple[str, list[Finding]]:
    """The converted text and its findings: :func:`accelconf.api.convert_text` once per rank."""
    from accelconf import formats
    from accelconf.accelerate.launch import LaunchError, resolve
    from accelconf.api import convert_text as convert_one

    ver = resolve(version)
    findings: list[Finding] = []
    ranks: list[int | None] = [machine_rank]
    if machine_rank is not None:
        cfg = formats.read(text, source_format, source, ver)
        refuse_machine_rank(machine_rank, num_machines(cfg), where_set(cfg, "num_machines"))
    if all_ranks:
        n = num_machines(formats.read(text, source_format, source, ver))
        ranks = list(range(n)) if n > 1 else [None]
        if n <= 1:
            findings.append(
                Finding("convert.ranks", "info", "--all-ranks: single-node configuration, one block", "num_machines")
            )
    blocks: list[str] = []
    for rank in ranks:
        try:
            out, found = convert_one(
                text, target, fmt=source_format, path=source, version=ver, machine_rank=rank, export=export
            )
        except LaunchError as exc:
            raise InputError(f"accelerate launch would fail: {exc.message}", source, exc.line, exc.column) from exc
        findings += [f for f in found if f not in findings]
        if len(ranks) > 1:
            out = f"# machine_rank {rank}\n" + out
        blocks.append(out)
    return "\n".join(blocks), findings


def run(args: argparse.Namespace) -> int:
    from accelconf.report import FileResult, exit_code
    from accelconf.text.document import read_text

    text, source = read_text(args.input)
    trainer = _trainer_convert(text, source, args)
    if trainer is not None:
        out, findings = trainer
        sys.stdout.write(out)
        print_findings(findings, source, args.quiet)
        return exit_code([FileResult(source, findings)], args.strict)
    out, findings = convert_text(
        text,
        source,
        args.target_format,
        args.source_format,
        args.accelerate_version,
        args.machine_rank,
        args.all_ranks,
        args.export,
    )
    if args.preflight and args.target_format == "cli":
        from accelconf.preflight.tocli import launcher_findings, with_preflight

        out, findings = with_preflight(out, args.input), findings + launcher_findings(text, source)
    # A command line is printed only when it launches what the config says: `eval "$(accelconf
    # to-cli ...)"` runs whatever was printed, and the substitution's exit status is lost in eval.
    withheld = args.target_format == "cli" and any(f.severity == "error" for f in findings)
    if not withheld:
        sys.stdout.write(out)
    print_findings(findings, source, args.quiet)
    if withheld:
        print(f"accelconf: {source}: no command printed: fix the errors above first", file=sys.stderr)
    return exit_code([FileResult(source, findings)], args.strict)


def _trainer_convert(text: str, source: str, args: argparse.Namespace) -> tuple[str, list[Finding]] | None:
    """Conversions on the Trainer path: Trainer arguments to an accelerate config (yaml/json) or a torchrun
    command (cli); an accelerate config to Trainer arguments (args). ``None``: not a Trainer conversion."""
    from accelconf import kinds

    kind = kinds.recognise(text, source).kind
    target = args.target_format
    # the Trainer model loads only for a conversion that reads or writes Trainer arguments
    if target == "args":
        return _to_arguments(text, source, kind, args)
    if kind not in kinds.TRAINER_KINDS or args.source_format:
        return None
    return _from_arguments(text, source, kind, args)


def _to_arguments(text: str, source: str, kind: str, args: argparse.Namespace) -> tuple[str, list[Finding]]:
    """An accelerate config to Trainer arguments (``to-args``)."""
    from accelconf import formats
    from accelconf.accelerate.launch import resolve
    from accelconf.api import input_findings
    from accelconf.kinds import TRAINER_KINDS
    from accelconf.trainer import convert as tconvert
    from accelconf.trainer.read import read_all

    scripted = kind in ("launch", "other-launch", "python", "other-python") and any(
        g.args for g in read_all(text, source, kind)
    )
    if kind in TRAINER_KINDS or scripted:
        raise UsageError(f"{source} holds Trainer arguments already; to-args converts an accelerate config")
    ver = resolve(args.accelerate_version)
    cfg = formats.read(text, args.source_format, source, ver)
    out, notes = tconvert.to_arguments(cfg)
    return out, input_findings(cfg, ver) + notes


def _from_arguments(text: str, source: str, kind: str, args: argparse.Namespace) -> tuple[str, list[Finding]]:
    """Trainer arguments to an accelerate config (yaml/json) or a torchrun command (cli)."""
    from accelconf.commands import trainer_versions
    from accelconf.trainer import convert as tconvert
    from accelconf.trainer.read import read_args
    from accelconf.trainer.runs_inputs import inputs, runs_of

    inp = inputs(read_args(text, source, kind), trainer_versions(args)["transformers_version"])
    runs = runs_of(inp, {})
    target = args.target_format
    if target == "cli":
        return tconvert.to_torchrun(dict(inp.args.values), "train.py")
    if target not in ("yaml", "json"):
        raise UsageError(
            f"Trainer arguments convert to yaml or json (an accelerate config) or cli (torchrun), not {target}"
        )
    ds = str(inp.args.get("deepspeed")) if isinstance(inp.args.get("deepspeed"), str) else ""
    out, notes = tconvert.to_accelerate(runs, ds)
    if target == "json":
        import json

        import yaml

        out = json.dumps(yaml.safe_load(out), indent=2) + "\n"
    return out, notes + [f for f in _raise_findings(inp, runs)]


def _raise_findings(inp: Any, runs: Any) -> list[Finding]:
    from accelconf.trainer.runs_inputs import findings

    return [f for f in findings(inp, runs) if f.rule == "trainer-raises"]
