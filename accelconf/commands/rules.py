"""``accelconf rules [ID]``: the rule catalogue, every finding id with what it is about."""

from __future__ import annotations

import json
import sys
from typing import Any

from accelconf.catalogue import Rule


def add_parser(sub: Any, name: str, help_text: str) -> None:
    from accelconf.commands import help_texts

    p = sub.add_parser(
        name,
        help=help_text,
        **help_texts(
            """List every rule id accelconf reports (the ids `--disable` and the language server's
        `accelconf.disabledRules` take), or explain one: what it catches, why, its default severity,
        whether `accelconf fmt` fixes it, and an example with its fix.""",
            [
                ("accelconf rules", "every rule: id, area, default severity, fmt, summary"),
                ("accelconf rules yaml11-scalar", "one rule in full"),
                ("accelconf rules --format json", "the catalogue as JSON"),
            ],
            "0 printed, 2 an unknown rule id",
        ),
    )
    p.add_argument("rule", nargs="?", metavar="ID", help="one rule id")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    p.set_defaults(func=run)


def rule_json(r: Rule) -> dict[str, Any]:
    return {
        "id": r.id,
        "area": r.area,
        "severity": r.severity,
        "summary": r.summary,
        "why": r.why,
        "fmt_safe": r.fmt_safe,
        "docs": r.doc_path,
        "examples": [
            {
                "case": e.case,
                "file": e.file,
                "text": e.text,
                "fixed": e.fixed,
                "severity": e.severity,
                "accelerate": e.accelerate,
            }
            for e in r.examples
        ],
    }


def rule_text(r: Rule) -> str:
    lines = [f"{r.id} ({r.area})", "", r.summary]
    if r.why:
        lines += ["", r.why]
    lines += ["", f"Default severity: {r.severity}. Fixed by `accelconf fmt`: {'yes' if r.fmt_safe else 'no'}."]
    example = next((e for e in r.examples if e.fixed is not None), r.examples[0] if r.examples else None)
    if example is not None:
        lines += [
            "",
            f"Example ({example.file}{', accelerate ' + example.accelerate if example.accelerate else ''}):",
            *("    " + ln for ln in example.text.splitlines()),
        ]
        if example.fixed is not None:
            lines += ["", "Fixed:", *("    " + ln for ln in example.fixed.splitlines())]
    return "\n".join(lines) + "\n"


def run(args: Any) -> int:
    from accelconf import catalogue

    if args.rule:
        r = catalogue.get(args.rule)
        if r is None:
            near = catalogue.nearest(args.rule)
            print(
                f"accelconf rules: unknown rule id {args.rule!r}" + (f" (did you mean {near!r}?)" if near else ""),
                file=sys.stderr,
            )
            return 2
        sys.stdout.write(json.dumps(rule_json(r), indent=2) + "\n" if args.format == "json" else rule_text(r))
        return 0
    rules = catalogue.all_rules()
    if args.format == "json":
        sys.stdout.write(json.dumps([rule_json(r) for r in rules], indent=2) + "\n")
        return 0
    width = max(len(r.id) for r in rules)
    for r in rules:
        sys.stdout.write(
            f"{r.id:<{width}}  {r.area:<11}  {r.severity:<7}  {'fmt' if r.fmt_safe else '   '}  {r.summary}\n"
        )
    return 0
