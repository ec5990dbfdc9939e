"""``accelconf diff A B``: what two configs mean differently, in any formats.

Reading and comparing live in :mod:`accelconf.diff`; this module parses options, prints text
(grouped by section, colored only on a TTY) or JSON, and picks the exit code: 0 equivalent,
1 different, 2 unreadable input.

It is also a git external diff driver (``--git-driver``): git calls it with seven arguments,
``path old-file old-hex old-mode new-file new-hex new-mode``, and it prints the change in meaning
under git's ``a/`` and ``b/`` names, falling back to a plain text diff for a file it cannot read.
Setup::

    # .gitattributes
    *.yaml diff=accelconf
    # once per clone
    git config diff.accelconf.command "accelconf diff --git-driver"
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import json
import os
import sys
from typing import IO, TYPE_CHECKING, Any

from accelconf.errors import InputError, UsageError
from accelconf.report import use_color

# By module path: the package may also export a function named ``diff``.
if TYPE_CHECKING:
    from accelconf import diff as semdiff
else:
    semdiff = importlib.import_module("accelconf.diff")

_GREEN, _RED, _YELLOW, _CYAN, _DIM, _BOLD, _RESET = (
    "\033[32m",
    "\033[31m",
    "\033[33m",
    "\033[36m",
    "\033[2m",
    "\033[1m",
    "\033[0m",
)
_MARK = {"changed": "~", "added": "+", "removed": "-", "not_comparable": "?"}
_MARK_COLOR = {"changed": _YELLOW, "added": _GREEN, "removed": _RED, "not_comparable": _CYAN}
SECTION_TITLES = {
    "": "top level",
    "arguments": "fields the file sets",
    "defaults": "defaults of fields the file does not set",
    "raises": "refused",
}


def add_parser(subparsers: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    from accelconf.commands import add_trainer_version_options, help_texts

    p: argparse.ArgumentParser = subparsers.add_parser(
        name,
        help=help_text,
        **help_texts(
            """Compare two configs by meaning for one accelerate version: key order, quoting, comments,
        explicit defaults and legacy spellings are not differences. A and B may be accelerate
        YAML/JSON, env, cli or kwargs text, or DeepSpeed JSON, also mixed. Each difference says
        what it changes for the training process.""",
            [
                ("accelconf diff a.yaml b.yaml", "what differs in meaning"),
                ("accelconf diff config.yaml launch.env", "a config against the env a job really had"),
                ("accelconf diff --ignore num_processes --format json a.yaml b.yaml", ""),
                (
                    "accelconf diff train_args.yaml --transformers-version 4.57..5.24",
                    "one arguments file under two transformers releases",
                ),
                (
                    "git config diff.accelconf.command 'accelconf diff --git-driver'",
                    "use it for `git diff` (with `*accelerate*.yaml diff=accelconf` in .gitattributes)",
                ),
            ],
            "0 equivalent, 1 different, 2 unreadable or empty input, or bad arguments",
        ),
    )
    p.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="A and B, one of them '-' for standard input (with --git-driver: git's seven arguments)",
    )
    p.add_argument(
        "--accelerate-version",
        metavar="V",
        default=None,
        help="compare for this accelerate version (default: installed, else newest known)",
    )
    add_trainer_version_options(p, allow_range=True)
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    p.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="KEY",
        help="leave out a key: full path, last part, section name or glob (repeatable)",
    )
    p.add_argument(
        "--color", choices=("auto", "always", "never"), default="auto", help="colors (default: only on a TTY)"
    )
    p.add_argument(
        "--git-driver",
        action="store_true",
        help="run as git's external diff driver (git passes path old-file old-hex old-mode new-file new-hex new-mode)",
    )
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    if args.git_driver:
        return run_git_driver(args, sys.stdout)
    ranged = ".." in str(getattr(args, "transformers_version", None) or "")
    if len(args.files) == 1 and ranged:
        args.files = args.files * 2  # one arguments file under two releases
    if len(args.files) != 2:
        raise UsageError("diff needs two files, A and B (one file with --transformers-version A..B)")
    if args.files.count("-") > 1:
        raise UsageError("only one of A and B can be '-' (standard input)")
    from accelconf.text.document import read_text

    texts = [read_text(path) for path in args.files]  # once: a side may be standard input
    result = _trainer_diff(args, texts)
    if result is None:
        sa, sb = (semdiff.read_side(name, args.accelerate_version, text=text) for text, name in texts)
        result = semdiff.diff_sides(sa, sb, version=args.accelerate_version, ignore=args.ignore)
    out = sys.stdout
    if args.format == "json":
        out.write(render_json(result))
    else:
        out.write(render_text(result, use_color(out, args.color)))
    return 0 if result.equivalent else 1


def _trainer_diff(args: argparse.Namespace, texts: list[tuple[str, str]]) -> semdiff.DiffResult | None:
    """Where a side is Trainer arguments: both compared by what the Accelerator is built with
    (:mod:`accelconf.trainer.diff`); ``None`` for two accelerate-side files."""
    from accelconf import kinds
    from accelconf.kinds import TRAINER_KINDS
    from accelconf.trainer import diff as tdiff

    tver = getattr(args, "transformers_version", None)
    if not any(kinds.recognise(t, n).kind in TRAINER_KINDS for t, n in texts):
        if tver and ".." in str(tver):
            raise UsageError("--transformers-version A..B compares Trainer arguments files: neither side is one")
        return None
    if tver and ".." in str(tver):
        try:
            versions = tuple(str(tver).split("..", 1))
            return tdiff.release_diff(texts[0], texts[1], versions, args.ignore)  # type: ignore[arg-type]
        except ValueError as exc:
            raise UsageError(f"{exc}: diff compares what the Accelerator is built with from each") from exc
    sides = [tdiff.side(t, n, tver, args.accelerate_version) for t, n in texts]
    for (_t, n), s in zip(texts, sides):
        if s is None:
            raise UsageError(
                f"{n}: neither Trainer arguments nor an accelerate config: diff compares what the "
                "Accelerator is built with from each"
            )
    return tdiff.compare(sides[0], sides[1], texts[0][1], texts[1][1], args.ignore)  # type: ignore[arg-type]


def read_input(path: str, version: str | None) -> semdiff.Side:
    """One side of the diff, read as every command reads its input (``-`` is standard input)."""
    from accelconf.text.document import read_text

    text, name = read_text(path)
    return semdiff.read_side(name, version, text=text)


# -- rendering ----------------------------------------------------------------------------------


def render_json(result: semdiff.DiffResult) -> str:
    return json.dumps(result.to_json(), indent=2) + "\n"


def _show(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "(unset)"
    if isinstance(v, str):
        return (
            v
            if v and v.strip() == v and v.lower() not in ("true", "false", "null", "no", "yes", "on", "off")
            else repr(v)
        )
    if isinstance(v, (list, dict)):
        return json.dumps(v)
    return str(v)


def _where(where: str, line: int) -> str:
    if where:
        return where
    return f"line {line}" if line else ""


def _side(key: str, value: Any, where: str, line: int) -> str:
    text = f"{key.rsplit('.', 1)[-1]}: {_show(value)}" if key else _show(value)
    loc = _where(where, line)
    return f"{text} ({loc})" if loc else text


def _value_at(value: Any, where: str, line: int) -> str:
    loc = _where(where, line)
    if value is None and not loc:
        return "(absent)"
    if value is None and loc == "default":
        return "(unset)"  # absent, and accelerate has no default for it
    return f"{_show(value)} ({loc})" if loc else _show(value)


def _change_line(c: semdiff.Change, color: bool) -> list[str]:
    mark = _MARK[c.kind]
    if color:
        mark = f"{_MARK_COLOR[c.kind]}{mark}{_RESET}"
    name = c.key.split(".", 1)[1] if c.section else c.key
    if c.a_key or c.b_key:  # one setting, two spellings: show both keys
        body = f"{_side(c.a_key, c.a, c.a_where, c.a_line)}  ->  {_side(c.b_key, c.b, c.b_where, c.b_line)}"
    else:
        body = f"{name}: {_value_at(c.a, c.a_where, c.a_line)}  ->  {_value_at(c.b, c.b_where, c.b_line)}"
    lines = [f"  {mark} {body}"]
    if c.note and c.kind != "not_comparable":  # its "where" already says which side cannot
        note = f"      {c.note}"
        lines.append(f"{_DIM}{note}{_RESET}" if color else note)
    return lines


def render_text(result: semdiff.DiffResult, color: bool = False, header: bool = True) -> str:
    lines: list[str] = []
    what = {
        "accelerate": f"accelerate {result.version}",
        "deepspeed": "DeepSpeed JSON",
        "accelerate-deepspeed": f"accelerate {result.version} vs DeepSpeed JSON, shared settings",
        "trainer": "what the Accelerator is built with (Trainer arguments)",
        "trainer-releases": f"transformers {result.version.replace('..', ' -> ')}: fields, defaults and what the "
        "Accelerator is built with",
    }[result.mode]
    if header:
        title = f"--- {result.a_source}\n+++ {result.b_source}\n({what})"
        lines.append(f"{_BOLD}{title}{_RESET}" if color else title)
    groups: dict[str, list[semdiff.Change]] = {"": []}  # top level first
    for c in result.differences:
        groups.setdefault(c.section, []).append(c)
    for section, changes in groups.items():
        if not changes:
            continue
        title = SECTION_TITLES.get(section, section)
        lines.append(f"{_BOLD}{title}{_RESET}" if color else title)
        for c in changes:
            lines.extend(_change_line(c, color))
    if result.not_comparable:
        lines.append("not comparable (one side's format cannot express it)")
        for c in result.not_comparable:
            lines.extend(_change_line(c, color))
    if result.ignored:
        lines.append(f"written differently, no effect in {what}")
        for c in result.ignored:
            name = c.key
            lines.append(
                f"  = {name}: {_value_at(c.a, c.a_where, c.a_line)}  ->  {_value_at(c.b, c.b_where, c.b_line)}"
            )
            lines.append(f"      {c.note}")
    if result.notes:
        lines.append("consequences")
        for note in result.notes:
            lines.append(f"  * {note}")
    n = len(result.differences)
    summary = "equivalent: no difference in meaning" if n == 0 else f"{n} difference{'s' if n != 1 else ''}"
    if result.not_comparable:
        summary += f", {len(result.not_comparable)} not comparable"
    lines.append(summary)
    return "\n".join(lines) + "\n"


# -- git external diff driver -------------------------------------------------------------------


def _read_for_git(path: str, label: str, version: str | None) -> semdiff.Side | None:
    """One side of a git diff; ``None`` for /dev/null (the file is added or deleted)."""
    if path == os.devnull or not os.path.exists(path):
        return None
    from accelconf.text.document import decode

    with open(path, "rb") as fh:
        text, _ = decode(fh.read(), label)
    return semdiff.read_side(label, version, text=text)


def _plain(path: str, old: str, new: str, out: IO[str]) -> None:
    def lines(p: str) -> list[str]:
        if p == os.devnull or not os.path.exists(p):
            return []
        with open(p, encoding="utf-8", errors="replace") as fh:
            return fh.readlines()

    out.writelines(difflib.unified_diff(lines(old), lines(new), f"a/{path}", f"b/{path}"))


def run_git_driver(args: argparse.Namespace, out: IO[str]) -> int:
    """git's external diff: always exit 0 (a non-zero exit makes git stop the whole diff)."""
    files = args.files
    if len(files) not in (7, 9):  # 9: git passes a rename's new name and a "similarity" line too
        raise UsageError(f"--git-driver expects git's 7 arguments, got {len(files)}")
    path, old, _old_hex, _old_mode, new = files[:5]
    new_path = files[7] if len(files) == 9 else path
    color = use_color(out, args.color)
    out.write(
        f"{_BOLD}diff --accelconf a/{path} b/{new_path}{_RESET}\n"
        if color
        else f"diff --accelconf a/{path} b/{new_path}\n"
    )
    try:
        sa = _read_for_git(old, f"a/{path}", args.accelerate_version)
        sb = _read_for_git(new, f"b/{new_path}", args.accelerate_version)
    except InputError as exc:
        out.write(f"(not a config accelconf can read: {exc}; text diff follows)\n")
        _plain(path, old, new, out)
        return 0
    if sa is None or sb is None:
        out.write(f"{'new' if sa is None else 'deleted'} file\n")
        _plain(path, old, new, out)
        return 0
    if all(side.config is not None and not side.config.entries for side in (sa, sb)):
        out.write("(not an accelerate or DeepSpeed config; text diff follows)\n")
        _plain(path, old, new, out)
        return 0
    result = semdiff.diff_sides(sa, sb, version=args.accelerate_version, ignore=args.ignore)
    if args.format == "json":
        out.write(render_json(result))
    else:
        out.write(render_text(result, color, header=False))
    return 0
