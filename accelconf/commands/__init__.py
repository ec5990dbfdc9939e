"""One module per CLI command: ``add_parser(subparsers, name, help)`` and ``run(args) -> int``.

:func:`help_texts` gives every command the same ``--help`` shape: a description wrapped to 88
columns, then examples, then the exit codes.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Sequence
from typing import Any

WIDTH = 88


def help_texts(
    description: str, examples: Sequence[tuple[str, str]], exit_codes: str, extra: str = ""
) -> dict[str, Any]:
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

    problem = catalogue.unknown_message([value], "")
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return value


def _release(part: str, allow_range: bool) -> Any:
    """An argparse ``type``: the known minor release a version names (``5.24.0`` -> ``5.24``), or
    ``A..B`` for two; an unknown one is a usage error (exit 2) naming the known ones."""

    def parse(value: str) -> str:
        from accelconf.trainer import releases

        sides = value.split("..") if allow_range and ".." in value else [value]
        try:
            return "..".join(releases.resolve(v, part) for v in sides)
        except releases.UnknownRelease as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = f"{part} version"
    return parse


def add_trainer_version_options(p: argparse.ArgumentParser, allow_range: bool = False) -> None:
    """``--transformers-version V`` and ``--trl-version V``: the releases whose TrainingArguments and
    TRL configs arguments files are checked against (default: the installed ones, read from their
    metadata, never imported; else the newest known). With ``allow_range``, ``A..B`` compares two."""
    span = " (A..B: across two releases)" if allow_range else ""
    p.add_argument(
        "--transformers-version",
        metavar="V",
        type=_release("transformers", allow_range),
        help=f"transformers release for Trainer arguments{span} (default: installed, else newest known)",
    )
    p.add_argument(
        "--trl-version",
        metavar="V",
        type=_release("trl", allow_range),
        help=f"TRL release for TRL config classes{span} (default: installed, else newest known)",
    )


def trainer_versions(args: Any) -> dict[str, Any]:
    """The ``transformers_version``/``trl_version`` options of the API for parsed arguments: the
    given releases, else the installed ones (read from metadata), else the newest known."""
    from accelconf.trainer import releases

    return {
        "transformers_version": getattr(args, "transformers_version", None) or releases.resolve(None),
        "trl_version": getattr(args, "trl_version", None) or releases.resolve(None, "trl"),
    }
