"""Readers of Trainer / TRL arguments: a YAML/JSON document, a launch script, a Python script.

Each reads through the project's one reader of its format: YAML/JSON through
:mod:`accelconf.text.document` (its values are PyYAML ``safe_load``'s, exactly what
``HfArgumentParser.parse_yaml_file`` hands the dataclass: an unquoted ``5e-5`` is a string), shell
words through :mod:`accelconf.formats.shell`, Python through :mod:`ast` and the literal evaluation of
:mod:`accelconf.formats.kwargs`. Positions are 1-based.
"""

from __future__ import annotations

import ast
from typing import Any

from accelconf.errors import InputError
from accelconf.formats import shell
from accelconf.formats.pyvalues import _call_name, _evaluate, _NotRead
from accelconf.kinds import text_format
from accelconf.kinds.references import Reference, in_document
from accelconf.text.document import Document, Node, load_text, to_python
from accelconf.trainer import fields
from accelconf.trainer.args import Arg, TrainerArgs

# The launchers after which a training script and its arguments stand.
LAUNCHERS = ("torchrun", "deepspeed", "accelerate", "accelerate-launch", "python", "python3")
# Calls whose keyword arguments are Trainer arguments: transformers' classes and TRL's configs.
ARGS_CLASSES = frozenset(
    {
        "TrainingArguments",
        "Seq2SeqTrainingArguments",
        "SFTConfig",
        "DPOConfig",
        "GRPOConfig",
        "KTOConfig",
        "ORPOConfig",
        "CPOConfig",
        "PPOConfig",
        "RewardConfig",
        "RLOOConfig",
        "OnlineDPOConfig",
        "GKDConfig",
        "PRMConfig",
        "XPOConfig",
        "NashMDConfig",
        "BCOConfig",
        "AlignPropConfig",
        "DDPOConfig",
        "IterativeSFTConfig",
    }
)


def _node_arg(name: str, key: Node, value: Node, text: str, source: str) -> Arg:
    children: tuple[Arg, ...] = ()
    if value.kind == "map":
        children = tuple(_node_arg(str(k.value), k, v, text, source) for k, v in value.pairs if k.kind == "scalar")
    return Arg(
        name,
        to_python(value),
        key.line + 1,
        key.col + 1,
        value.end_line + 1,
        value.end_col + 1,
        text[key.start : value.end],
        source,
        value.line + 1,
        value.col + 1,
        True,
        children,
    )


def from_document(text: str, path: str, kind: str, doc: Document | None = None) -> TrainerArgs:
    """A YAML/JSON arguments file, framework YAML or ``fsdp_config`` JSON: each top-level key an
    argument. A framework's own keys (not Trainer fields) go to ``ignored``."""
    if doc is None:
        doc = load_text(text, path, text_format(text, path))  # type: ignore[arg-type]
    source = kind if kind in ("llama-factory", "axolotl") else doc.format
    out = TrainerArgs(path, kind, references=list(in_document(doc)))
    root = doc.root
    if root is None or root.kind != "map":
        return out
    known = fields.names()
    for k, v in root.pairs:
        if k.kind != "scalar":
            continue
        arg = _node_arg(str(k.value), k, v, doc.text, source)
        if kind in ("llama-factory", "axolotl") and arg.name not in known:
            out.ignored.append(arg)
        else:
            out.args.append(arg)
    return out


# -- launch scripts --------------------------------------------------------------------------

# TRL's command line (trl/cli.py): `trl sft --config recipe.yaml ...` launches its own script.
TRL_COMMANDS = ("sft", "dpo", "grpo", "kto", "reward", "rloo", "env", "vllm-serve")


def _script_index(words: list[str | None]) -> tuple[str, int] | None:
    """The launcher of a command and the index of its training script (the first ``.py`` word,
    or TRL's subcommand)."""
    launcher = None
    for i, w in enumerate(words):
        if w is None:
            continue
        base = w.rsplit("/", 1)[-1]
        if launcher is None and base == "trl" and i + 1 < len(words) and words[i + 1] in TRL_COMMANDS:
            return "trl", i + 1
        if launcher is None and (base in LAUNCHERS or base.startswith("python3.")):
            launcher = "python" if base.startswith("python") else base
            continue
        if launcher is not None and w.endswith(".py") and not w.startswith("-"):
            if i > 0 and words[i - 1] in ("--config_file", "--config-file"):
                continue
            return launcher, i
    return None


def from_script(text: str, path: str, kind: str) -> list[TrainerArgs]:
    """One group per launch of a training script with arguments after it (``torchrun ... train.py
    --bf16 True``): argparse's spellings (``--x v``, ``--x=v``, a bare ``--flag``, ``--no_x``);
    each value a string until typed as HfArgumentParser types it (:func:`accelconf.trainer.fields.from_cli`).
    The launcher's own ``--config_file`` and the variables the script exports are kept for the rules."""
    variables = shell.Variables()
    out: list[TrainerArgs] = []
    for words in shell.commands(text, path):
        while len(words) > 1 and words[0].literal in shell.RESERVED:
            words = words[1:]
        known = variables.known()
        texts = [shell.resolve(w, known) for w in words]
        found = _script_index(texts)
        if found is None:
            if words[0].literal in shell.DECLARE or all(shell.ASSIGNMENT.match(w.literal or w.raw) for w in words):
                variables.record(words)
            continue
        launcher, at = found
        group = TrainerArgs(path, kind, group=f"{launcher} {texts[at]}", line=words[0].line, column=words[0].column)
        group.launcher = _launcher_args(words[:at], texts[:at])
        for name, (value, line, col) in variables.environment().items():
            group.env[name] = Arg(name, value, line, col, line, col, name, "cli", typed=False)
        for w, t in zip(words, texts):
            m = shell.ASSIGNMENT.match(w.literal or w.raw)
            if m is None:
                break
            value = t.partition("=")[2] if t is not None else None
            group.env[m.group(1)] = Arg(
                m.group(1), value, w.line, w.column, w.line, w.column + len(w.raw), w.raw, "cli", typed=False
            )
        group.args = _cli_args(words[at + 1 :], texts[at + 1 :])
        first = texts[at + 1] if len(texts) > at + 1 else None
        if first is not None and first.endswith((".yaml", ".yml", ".json")) and not first.startswith("-"):
            # `train.py args.yaml`: the script hands the file to HfArgumentParser.parse_yaml_file (LLaMA-Factory, TRL)
            w = words[at + 1]
            group.references.append(Reference("arguments", first, w.line, w.column, "arguments"))
        group.references += [
            Reference(a.name, a.value, a.value_line, a.value_column, role)
            for a in group.args
            for key, role in {**_REF_ROLES, "config": "arguments"}.items()
            if a.name == key and isinstance(a.value, str) and a.value.endswith((".json", ".yaml", ".yml"))
        ]
        # TRL's `--config FILE` is the parser's own option (TrlParser), not an argument
        group.args = [
            a for a in group.args if not (a.name == "config" and any(r.key == "config" for r in group.references))
        ]
        out.append(group)
    return out


_REF_ROLES = {"deepspeed": "deepspeed", "fsdp_config": "fsdp", "accelerate_config": "accelerate"}


def _launcher_args(words: list[shell.Word], texts: list[str | None]) -> dict[str, Arg]:
    # accelerate launch's own flags the rules compare with the arguments (it exports them to the script)
    return {a.name: a for a in _cli_args(words, texts) if a.name in ("config_file", "mixed_precision")}


def _cli_args(words: list[shell.Word], texts: list[str | None]) -> list[Arg]:
    """``--name value`` / ``--name=value`` / bare ``--flag`` words, in order; an unknown value is None."""
    out: list[Arg] = []
    i = 0
    while i < len(words):
        w, t = words[i], texts[i]
        i += 1
        if t is None or not t.startswith("--") or t == "--":
            continue
        name, eq, inline = t[2:].partition("=")
        name = name.replace("-", "_")
        value: str | None
        if eq:
            vline, vcol, value, end = w.line, w.column + len(name) + 3, inline, w.column + len(w.raw)
        elif i < len(words) and not (texts[i] or "").startswith("--") and not _bare_flag(name):
            v = words[i]
            vline, vcol, value, end = v.line, v.column, texts[i], v.column + len(v.raw)
            i += 1
        else:
            vline, vcol, value, end = w.line, w.column, None, w.column + len(w.raw)
        out.append(Arg(name, value, w.line, w.column, vline, end, w.raw, "cli", vline, vcol, typed=False))
        if not eq and value is None and end == w.column + len(w.raw):
            # a bare flag: HfArgumentParser's const for a bool (``--bf16`` is True, ``--no_x`` False)
            out[-1] = _bare(out[-1])
    return out


def _bare_flag(name: str) -> bool:
    """A ``--no_x`` complement never takes a value (argparse store_false)."""
    return name.startswith("no_") and name[3:] in fields.names()


def _bare(a: Arg) -> Arg:
    if a.name.startswith("no_") and a.name[3:] in fields.names():
        return a.replace(name=a.name[3:], value=False, typed=True)
    return a.replace(value=True, typed=True)


# -- Python scripts --------------------------------------------------------------------------


def from_python(text: str, path: str, kind: str) -> list[TrainerArgs]:
    """One group per ``TrainingArguments(...)``/TRL config call: its literal keyword arguments
    (a value that is not a literal is kept as None with ``typed=False``)."""
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        raise InputError(f"not Python: {exc.msg}", path, exc.lineno or 0, exc.offset or 0) from exc
    lines = text.splitlines()
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _call_name(node) in ARGS_CLASSES:
            group = TrainerArgs(
                path, kind, group=_call_name(node), cls=_call_name(node), line=node.lineno, column=node.col_offset + 1
            )
            group.args = [_kw_arg(kw, lines) for kw in node.keywords if kw.arg is not None]
            group.references = [
                Reference(a.name, a.value, a.value_line, a.value_column, _REF_ROLES[a.name])
                for a in group.args
                if a.name in _REF_ROLES and isinstance(a.value, str) and a.value.endswith((".json", ".yaml", ".yml"))
            ]
            out.append(group)
    return sorted(out, key=lambda g: (g.line, g.column))


def _kw_arg(kw: ast.keyword, lines: list[str]) -> Arg:
    v = kw.value
    typed = True
    try:
        value: Any = _evaluate(v)
    except _NotRead:
        value, typed = None, False
    children: tuple[Arg, ...] = ()
    if isinstance(v, ast.Dict):
        children = tuple(
            _kw_child(k, val, lines)
            for k, val in zip(v.keys, v.values)
            if isinstance(k, ast.Constant) and isinstance(k.value, str)
        )
    raw = ast.get_source_segment("\n".join(lines), kw) or kw.arg or ""
    return Arg(
        kw.arg or "",
        value,
        kw.lineno,
        kw.col_offset + 1,
        v.end_lineno or v.lineno,
        (v.end_col_offset or 0) + 1,
        raw,
        "python",
        v.lineno,
        v.col_offset + 1,
        typed,
        children,
    )


def _kw_child(k: ast.Constant, v: ast.expr, lines: list[str]) -> Arg:
    try:
        value: Any = _evaluate(v)
    except _NotRead:
        value = None
    return Arg(
        str(k.value),
        value,
        k.lineno,
        k.col_offset + 1,
        v.end_lineno or v.lineno,
        (v.end_col_offset or 0) + 1,
        str(k.value),
        "python",
        v.lineno,
        v.col_offset + 1,
    )


def read_args(text: str, path: str, kind: str) -> TrainerArgs:
    """The arguments of the first group a file of ``kind`` gives (see :func:`read_all`)."""
    groups = read_all(text, path, kind)
    return groups[0] if groups else TrainerArgs(path, kind)


def read_all(text: str, path: str, kind: str) -> list[TrainerArgs]:
    """Every group of Trainer arguments a file gives: one for an arguments file, a framework YAML
    or a ``fsdp_config`` JSON; one per training-script launch of a shell script; one per
    ``TrainingArguments(...)``-like call of a Python script. Raises :class:`InputError` for text
    its reader refuses."""
    if kind in ("launch", "other-launch") or path.endswith((".sh", ".bash", ".sbatch", ".slurm")):
        return from_script(text, path, kind)
    if kind in ("python", "other-python") or path.endswith(".py"):
        return from_python(text, path, kind)
    return [from_document(text, path, kind)]
