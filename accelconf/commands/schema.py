"""``accelconf schema accelerate|deepspeed``: print a generated JSON Schema."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_parser(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description="Print the JSON Schema accelconf generates from its settings registry.",
                       epilog="examples:\n  accelconf schema accelerate > accelerate.schema.json\n  accelconf schema accelerate --accelerate-version 1.4\n"
                              "  accelconf schema --write schemas/   (regenerate the committed schemas)",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", nargs="?", choices=("accelerate", "deepspeed"), default="accelerate")
    p.add_argument("--accelerate-version", metavar="V", help="schema for this accelerate version (default: newest known)")
    p.add_argument("--write", metavar="DIR", help="write every generated schema into DIR instead of printing")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from accelconf.accelerate.schema import accelerate_schema, dumps, write_all

    if args.write:
        for path in write_all(args.write):
            print(f"wrote {path}", file=sys.stderr)
        return 0
    if args.kind == "deepspeed":
        from accelconf.deepspeed import deepspeed_schema

        sys.stdout.write(dumps(deepspeed_schema()))
    else:
        sys.stdout.write(dumps(accelerate_schema(args.accelerate_version)))
    return 0
