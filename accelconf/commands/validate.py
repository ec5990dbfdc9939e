"""``accelconf validate FILE...``: schema and semantic checks, many files per call."""

from __future__ import annotations

import sys
from typing import Any

from accelconf.report import FileResult, add_output_options, exit_code, render


def add_parser(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(
        name, help=help_text,
        description="Check accelerate config files (YAML or JSON) and DeepSpeed JSON files against accelerate's own rules.",
        epilog="exit codes: 0 no errors (warnings allowed unless --strict), 1 errors, 2 a file could not be read or parsed\n"
               "example: accelconf validate --format github configs/*.yaml",
        formatter_class=__import__("argparse").RawDescriptionHelpFormatter,
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="config files; '-' reads standard input")
    p.add_argument("--accelerate-version", metavar="V", help="accelerate version to check against (default: installed, else newest known)")
    p.add_argument("--deepspeed-version", metavar="V", help="DeepSpeed version for DeepSpeed JSON files")
    p.add_argument("--world-size", type=int, metavar="N", help="world size for DeepSpeed batch arithmetic")
    p.add_argument("--runtime", choices=("deepspeed", "accelerate", "transformers"), default=None,
                   help="who reads a DeepSpeed JSON (decides where \"auto\" is filled; default: transformers when the file uses \"auto\", else deepspeed)")
    p.add_argument("--disable", action="append", default=[], metavar="RULE", help="turn a rule off (repeatable)")
    add_output_options(p)
    p.set_defaults(func=run)


def validate_path(path: str, args: Any) -> FileResult:
    from accelconf.text.document import load_bytes, load_file
    from accelconf.errors import InputError
    from accelconf.api import check_document

    if path == "-":
        path = "<stdin>"
    try:
        doc = load_bytes(sys.stdin.buffer.read(), path) if path == "<stdin>" else load_file(path)
    except InputError as exc:
        return FileResult(path, error=exc)
    if doc.root is None:
        return FileResult(path, error=InputError("empty document: nothing to validate", path, 1, 1))
    findings = check_document(doc, None, accelerate_version=args.accelerate_version, deepspeed_version=args.deepspeed_version,
                              world_size=args.world_size, runtime=args.runtime, disabled=args.disable)
    return FileResult(path, findings)


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
