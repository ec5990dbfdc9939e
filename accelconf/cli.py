"""The ``accelconf`` command line: parse options, call the library, report, exit.

Exit codes, for every command: 0 clean, 1 findings that matter (errors, or warnings with
``--strict``; differences for ``diff``; changes needed for ``fmt --check``), 2 bad input (a file
that cannot be read or parsed, or bad arguments). Each command lives in
``accelconf/commands/<name>.py`` with ``add_parser(subparsers)`` and ``run(args) -> int``; this
module only dispatches, imports them lazily, and turns stray errors into exit 2 without a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# name -> (module, one-line help). Adding a command is adding one entry here and one module.
COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("validate", "check config files against accelerate's rules and the schema"),
    "fmt": ("fmt", "normalize spelling (legacy values, enum case) keeping comments"),
    "migrate": ("migrate", "migrate an FSDP1 config to FSDP2, keeping comments"),
    "schema": ("schema", "print a generated JSON Schema"),
    "convert": ("convert", "convert between yaml, json, env, cli and kwargs"),
    "to-env": ("convert", "shortcut: convert --to env"),
    "to-cli": ("convert", "shortcut: convert --to cli"),
    "to-kwargs": ("convert", "shortcut: convert --to kwargs"),
    "to-yaml": ("convert", "shortcut: convert --to yaml"),
    "to-json": ("convert", "shortcut: convert --to json"),
    "to-args": ("convert", "shortcut: convert --to args (an accelerate config to Trainer arguments)"),
    "explain": ("explain", "show every effective setting and where it comes from"),
    "diff": ("diff", "semantic diff of two configs, in any formats"),
    "check": ("check", "check a config against installed versions and GPUs, or a target machine"),
    "fit": ("fit", "every training strategy for a model on a machine: memory per GPU, verdict, cost"),
    "env": ("env", "print the detected environment (versions, GPUs)"),
    "preflight": ("preflight", "check every node of a multi-node job through torch.distributed before it trains"),
    "lsp": ("lsp", "run the language server (stdio, or --tcp)"),
    "rules": ("rules", "list the rule ids accelconf reports, or explain one"),
}

EPILOG = """\
examples:
  accelconf validate default_config.yaml        check one file (exit 1 on errors)
  accelconf validate --format json configs/*.yaml
  accelconf fmt --diff config.yaml              show what fmt would change
  accelconf to-env config.yaml                  the env accelerate launch would set
  accelconf diff a.yaml b.yaml                  what differs in meaning
  accelconf check --target h100-node config.yaml
  accelconf fit --model ./Llama-3.1-8B --gpus 8 --gpu H100-80GB   which strategies fit, cheapest first
  accelconf explain config.yaml                 every setting the process sees, and from where
  accelconf schema accelerate > accelerate-config.schema.json
  accelconf rules yaml11-scalar                 what a rule catches, and its fix

Every command has --help with examples and its exit codes: accelconf COMMAND --help

exit codes: 0 clean, 1 findings or differences, 2 unreadable input or bad arguments
"""


def _available() -> dict[str, tuple[str, str]]:
    import importlib.util

    return {
        name: spec
        for name, spec in COMMANDS.items()
        if importlib.util.find_spec(f"accelconf.commands.{spec[0]}") is not None
    }


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    from accelconf import __version__

    parser = argparse.ArgumentParser(
        prog="accelconf",
        description="Check, compare and convert Hugging Face Accelerate, FSDP and DeepSpeed configs.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"accelconf {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # With the command known, only its sub-parser is built: each argparse parser costs a few gettext
    # look-ups (file-system calls), and the others' options are never read.
    for name, (module, help_text) in (_available() if only is None else {only: COMMANDS[only]}).items():
        mod = importlib.import_module(f"accelconf.commands.{module}")
        mod.add_parser(sub, name, help_text)
    return parser


# Options whose value is itself a command line: `--launch-args --use_fsdp` would otherwise be refused
# by argparse, which reads a lone value starting with "-" as the next option.
COMMAND_LINE_OPTIONS = ("--launch-args",)


def _glue_values(argv: list[str]) -> list[str]:
    """``["--launch-args", "--use_fsdp"]`` -> ``["--launch-args=--use_fsdp"]`` (argparse's own spelling)."""
    out: list[str] = []
    args = iter(argv)
    for a in args:
        if a == "--":
            out += [a, *args]
            break
        value = next(args, None) if a in COMMAND_LINE_OPTIONS else None
        out.append(a if value is None else f"{a}={value}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    from accelconf.errors import AccelconfError

    argv = _glue_values(list(sys.argv[1:] if argv is None else argv))
    # Build only the sub-parser that is asked for: importing every command costs start-up time.
    first = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(first if first in COMMANDS else None)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) if isinstance(exc.code, int) else 2
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except AccelconfError as exc:
        print(f"accelconf: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


def run() -> None:
    sys.exit(main())
