"""One module per CLI command: ``add_parser(subparsers, name, help)`` and ``run(args) -> int``.

:func:`help_texts` gives every command the same ``--help`` shape: a description wrapped to 88
columns, then examples, then the exit codes.
"""

from __future__ import annotations

import argparse
import textwrap
from typing import Any, Sequence

WIDTH = 88


def help_texts(description: str, examples: Sequence[tuple[str, str]], exit_codes: str,
               extra: str = "") -> dict[str, Any]:
    """Keyword arguments for ``add_parser``: ``description`` (paragraphs split on blank lines,
    wrapped), ``epilog`` (``extra`` text, ``examples`` as (command, what it does), exit codes)."""
    desc = "\n\n".join(textwrap.fill(" ".join(par.split()), WIDTH) for par in description.strip().split("\n\n"))
    lines: list[str] = []
    if extra:
        lines += [extra.rstrip(), ""]
    lines.append("examples:")
    for command, what in examples:
        lines.append(f"  {command}")
        if what:
            lines += textwrap.wrap(what, WIDTH, initial_indent="      ", subsequent_indent="      ")
    lines += ["", textwrap.fill("exit codes: " + exit_codes, WIDTH, subsequent_indent="  ")]
    return {"description": desc, "epilog": "\n".join(lines), "formatter_class": argparse.RawDescriptionHelpFormatter}


def rule_id(value: str) -> str:
    """The argparse type of ``--disable``: an id the rule catalogue knows. An unknown one is refused
    (exit 2) with the nearest known id, as a typo would otherwise turn nothing off."""
    from accelconf import catalogue

    if catalogue.get(value) is None:
        near = catalogue.nearest(value)
        raise argparse.ArgumentTypeError(f"unknown rule id {value!r}" + (f" (did you mean {near!r}?)" if near else "")
                                         + "; `accelconf rules` lists them")
    return value
