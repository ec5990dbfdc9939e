"""``accelconf migrate --to fsdp2 FILE``: FSDP1 to FSDP2 with comments kept."""

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
            """Migrate an FSDP1 fsdp_config to FSDP2, like `accelerate to-fsdp2`, but comments and key
        order are kept and every removed or renamed key is reported on stderr with its reason.
        Without --diff or --in-place the migrated file is printed.""",
            [
                ("accelconf migrate --to fsdp2 --diff fsdp.yaml", "show the migration as a diff"),
                ("accelconf migrate --to fsdp2 -i fsdp.yaml", "rewrite the file in place"),
            ],
            "0 migrated (or nothing to migrate), 2 unreadable or empty input, or bad arguments",
        ),
    )
    p.add_argument(
        "file",
        metavar="FILE",
        help="an accelerate config file (YAML or JSON) with an FSDP1 fsdp_config; '-' reads standard input",
    )
    p.add_argument("--to", choices=("fsdp2",), required=True, help="migration target")
    p.add_argument(
        "--accelerate-version",
        metavar="V",
        help="the accelerate the result is for (default: installed, else newest known); "
        "before 1.6 there is no FSDP2 and nothing is migrated",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--diff", action="store_true", help="print a unified diff")
    mode.add_argument("-i", "--in-place", action="store_true", help="rewrite the file (atomically)")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from accelconf.accelerate import registry
    from accelconf.accelerate.migrate import migrate_document
    from accelconf.atomic import write_atomic
    from accelconf.text.document import load_source

    doc = load_source(args.file)
    text, notes = migrate_document(doc, registry.resolve_version(args.accelerate_version))
    for n in notes:
        print(f"{doc.path}: {n}", file=sys.stderr)
    if args.diff:
        name = doc.path.lstrip("/")
        sys.stdout.writelines(
            difflib.unified_diff(
                doc.text.splitlines(keepends=True), text.splitlines(keepends=True), f"a/{name}", f"b/{name}"
            )
        )
    elif args.in_place and args.file != "-":  # `--in-place -` prints, as fmt does
        if text != doc.text:
            write_atomic(args.file, (b"\xef\xbb\xbf" if doc.bom else b"") + text.encode("utf-8"))
    else:
        sys.stdout.write(text)
    return 0
