"""``accelconf schema accelerate|deepspeed``: print a generated JSON Schema."""

from __future__ import annotations

import sys
from typing import Any


def add_parser(sub: Any, name: str, help_text: str) -> None:
    from accelconf.commands import help_texts

    p = sub.add_parser(
        name,
        help=help_text,
        **help_texts(
            """Print the JSON Schema (draft-07) accelconf generates from its settings registry, for
        editors without the language server (a yaml-language-server modeline) and for schema
        catalogs. Its $id is a name (urn:accelconf:schema:...), not an address: editors load the
        file itself.""",
            [
                (
                    "accelconf schema accelerate > accelerate-config.schema.json",
                    "then, in a config: # yaml-language-server: $schema=./accelerate-config.schema.json",
                ),
                ("accelconf schema accelerate --accelerate-version 1.4", "the schema of an older release"),
                ("accelconf schema deepspeed", "the DeepSpeed JSON schema"),
                (
                    "accelconf schema --write DIR",
                    "every schema (each accelerate release, DeepSpeed, a catalog) into DIR",
                ),
            ],
            "0 printed or written, 2 bad arguments",
        ),
    )
    p.add_argument(
        "kind",
        nargs="?",
        choices=("accelerate", "deepspeed"),
        default="accelerate",
        help="which schema (default: accelerate)",
    )
    p.add_argument(
        "--accelerate-version", metavar="V", help="schema for this accelerate version (default: newest known)"
    )
    p.add_argument("--write", metavar="DIR", help="write every generated schema into DIR instead of printing")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from accelconf.accelerate.schema import accelerate_schema, dumps
    from accelconf.schemas import write_all

    if args.write:
        for path in write_all(args.write):
            print(f"wrote {path}", file=sys.stderr)
        return 0
    if args.kind == "deepspeed":
        from accelconf.deepspeed.schema import deepspeed_schema

        sys.stdout.write(dumps(deepspeed_schema()))
    else:
        sys.stdout.write(dumps(accelerate_schema(args.accelerate_version)))
    return 0
