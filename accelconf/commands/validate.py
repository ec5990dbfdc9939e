"""``accelconf validate FILE...``: schema and semantic checks, many files per call."""

from __future__ import annotations

import sys
from typing import Any

from accelconf.commands import add_trainer_version_options, trainer_versions
from accelconf.report import FileResult, add_output_options, exit_code, render


def add_parser(sub: Any, name: str, help_text: str) -> None:
    from accelconf.commands import help_texts, rule_id

    p = sub.add_parser(
        name,
        help=help_text,
        **help_texts(
            """Check accelerate config files (YAML or JSON) and DeepSpeed JSON files against accelerate's
        own rules: unknown or misspelled keys, values accelerate rejects or misreads (an unquoted
        `no` is the boolean False), settings that the chosen accelerate version does not know, and
        DeepSpeed keys, types and batch arithmetic. Env files, launch scripts and Python scripts are
        recognised by name and content and read as `to-yaml` reads them. A file that is none of
        these (Trainer or TRL arguments, a LLaMA-Factory or axolotl YAML, a Trainer fsdp_config) is
        named, and the DeepSpeed and accelerate files it references are checked. Each finding is
        printed as FILE:LINE:COL: severity: message [rule], with a suggestion when there is one.""",
            [
                ("accelconf validate default_config.yaml", "one file"),
                ("accelconf validate --accelerate-version 1.4 configs/*.yaml", "as accelerate 1.4 reads them"),
                ("accelconf validate --format github configs/*.yaml", "GitHub Actions annotations"),
                (
                    "accelconf validate --transformers-version 4.57 train_args.yaml",
                    "Trainer arguments as transformers 4.57 reads them",
                ),
                ("accelconf validate --world-size 16 ds_config.json", "DeepSpeed batch arithmetic for 16 ranks"),
                ("accelconf validate train.sh launch.env", "a launch script's flags, an env file's variables"),
                ("cat config.yaml | accelconf validate -", "standard input"),
            ],
            "0 no errors (warnings allowed unless --strict), 1 errors (or warnings with --strict), "
            "2 a file could not be read or parsed, or bad arguments",
        ),
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="config files; '-' reads standard input")
    p.add_argument(
        "--accelerate-version",
        metavar="V",
        help="accelerate version to check against (default: installed, else newest known)",
    )
    p.add_argument(
        "--deepspeed-version",
        metavar="V",
        help=(
            "DeepSpeed version for DeepSpeed JSON files (default: the installed DeepSpeed, read from its metadata; "
            "keys it rejects are errors)"
        ),
    )
    add_trainer_version_options(p)
    p.add_argument("--world-size", type=int, metavar="N", help="world size for DeepSpeed batch arithmetic")
    p.add_argument(
        "--runtime",
        choices=("deepspeed", "accelerate", "transformers"),
        default=None,
        help=(
            'who reads a DeepSpeed JSON (decides where "auto" is filled; default: transformers when the file uses '
            '"auto", else deepspeed)'
        ),
    )
    p.add_argument(
        "--disable",
        action="append",
        default=[],
        metavar="RULE",
        type=rule_id,
        help="turn a rule off (repeatable; `accelconf rules` lists the ids)",
    )
    add_output_options(p)
    p.set_defaults(func=run)


def validate_path(path: str, args: Any) -> FileResult:
    from accelconf.api import validate_source
    from accelconf.errors import InputError
    from accelconf.text.document import STDIN, decode, read_source, refuse_empty

    try:
        raw, name = read_source(path)
        text = decode(raw, name)[0]
        refuse_empty(text, name)
        findings = validate_source(
            text,
            name,
            raw=raw,
            accelerate_version=args.accelerate_version,
            deepspeed_version=args.deepspeed_version,
            world_size=args.world_size,
            runtime=args.runtime,
            disabled=args.disable,
            **trainer_versions(args),
        )
    except InputError as exc:
        return FileResult(STDIN if path == "-" else path, error=exc)
    return FileResult(name, findings)


def run(args: Any) -> int:
    results = []
    show_progress = len(args.files) > 50 and sys.stderr.isatty()
    for i, path in enumerate(args.files):
        results.append(validate_path(path, args))
        if show_progress and i % 20 == 0:
            print(f"\r{i + 1}/{len(args.files)}", end="", file=sys.stderr)
    if show_progress:
        print("\r", end="", file=sys.stderr)
    sys.stdout.write(render(results, args.format, sys.stdout, args.color))
    return exit_code(results, args.strict)
