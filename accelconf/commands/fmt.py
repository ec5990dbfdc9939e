"""``accelconf fmt FILE...``: normalize spelling, keeping comments and order."""

from __future__ import annotations

import difflib
import sys
from typing import Any


def add_parser(sub: Any, name: str, help_text: str) -> None:
    from accelconf.commands import help_texts

    p = sub.add_parser(
        name,
        help=help_text,
        **help_texts(
            """Normalize accelerate configs to the spelling accelerate writes itself: quoted 'no'/'NO',
        enum case, fsdp_ prefixes, sharding-strategy names instead of integers, dynamo_config instead
        of dynamo_backend, mixed_precision instead of fp16. Comments, key order and everything else
        stay byte for byte, and the environment accelerate gives the training process does not
        change. Without --check/--diff/--in-place the result is printed.""",
            [
                ("accelconf fmt --diff config.yaml", "show what would change"),
                ("accelconf fmt --in-place configs/*.yaml", "rewrite the files (atomically)"),
                ("accelconf fmt --check configs/*.yaml", "for CI and pre-commit: exit 1 when a file would change"),
            ],
            "0 done (or nothing to change), 1 --check found files to change, 2 unreadable or empty input, or bad "
            "arguments",
        ),
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="config files; '-' reads standard input")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file would change")
    mode.add_argument("--diff", action="store_true", help="print a unified diff instead of the files")
    mode.add_argument("-i", "--in-place", action="store_true", help="rewrite files in place (atomically)")
    p.add_argument(
        "--accelerate-version", metavar="V", help="target accelerate version (default: installed, else newest known)"
    )
    p.set_defaults(func=run)


def _encode(doc: Any, text: str) -> bytes:
    data = text.encode("utf-8")
    return (b"\xef\xbb\xbf" + data) if doc.bom else data


def run(args: Any) -> int:
    from accelconf.accelerate.fmt import format_document
    from accelconf.atomic import write_atomic
    from accelconf.errors import InputError
    from accelconf.text.document import load_source

    code = 0
    for path in args.files:
        try:
            doc = load_source(path)
        except InputError as exc:
            print(f"accelconf: {exc}", file=sys.stderr)
            code = 2
            continue
        if not isinstance(doc.data, dict):
            result_text, changes = doc.text, []
        else:
            res = format_document(doc, args.accelerate_version)
            result_text, changes = res.text, res.changes
        if args.check:
            if changes:
                print(f"{path}: would reformat ({len(changes)} change{'s' if len(changes) != 1 else ''})")
                for why in changes:
                    print(f"  - {why}")
                code = max(code, 1)
        elif args.diff:
            if changes:
                sys.stdout.writelines(
                    difflib.unified_diff(
                        doc.text.splitlines(keepends=True),
                        result_text.splitlines(keepends=True),
                        f"a/{path.lstrip('/')}",
                        f"b/{path.lstrip('/')}",
                    )
                )  # git's a/ b/, no a//
        elif args.in_place and path != "-":
            if changes:
                write_atomic(path, _encode(doc, result_text))
                print(f"{path}: reformatted ({len(changes)} change{'s' if len(changes) != 1 else ''})", file=sys.stderr)
        else:  # standard output; `--in-place -` too: the same bytes a file would get
            sys.stdout.flush()
            sys.stdout.buffer.write(_encode(doc, result_text))
            sys.stdout.flush()
    return code
