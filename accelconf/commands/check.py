"""``accelconf check``: configs against this machine, or against a named target machine.

The command gathers its options into :class:`CheckOptions`; :func:`environment_for` builds the
environment (a probe, a ``--target`` profile, flags on top) and :func:`check_file` runs
:func:`accelconf.api.check_document` (validate's rules for the accelerate version at hand, then the
``env-*`` rules of :mod:`accelconf.environment.checks`) on one file. Output formats and exit codes are
``validate``'s: 0 clean, 1 errors (or warnings with ``--strict``), 2 an unreadable file or a bad option.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from accelconf.commands.model_options import adapter_of_args, add_memory_options, model_size
from accelconf.environment.probe import PROBE_MODES, Environment
from accelconf.report import FileResult, add_output_options


@dataclass(frozen=True)
class CheckOptions:
    configs: tuple[str, ...]
    gpus: int | None = None
    gpu: str | None = None
    torch_version: str | None = None
    accelerate_version: str | None = None
    deepspeed_version: str | None = None
    num_machines: int | None = None
    target: str | None = None
    probe: str = "auto"
    timeout: float = 2.0
    python: str | None = None
    disabled: tuple[str, ...] = ()


def _epilog() -> str:
    from accelconf.environment.gpus import MODELS

    lines = ["known GPU models (--gpu, and gpu: in a --target profile; nvidia-smi spellings work too):"]
    for m in MODELS:
        feats = ", ".join(f for f, on in (("bf16", m.bf16), ("fp8", m.fp8)) if on) or "no bf16/fp8"
        arch = f"CC {m.cc_text}" if m.compute_capability else m.arch
        lines.append(f"  {m.key:<11} {arch:<8} {m.memory_gib:>4} GiB  {feats}")
    from accelconf.environment.targets import PROFILES_DIR, load_target, profile_names

    lines += ["", "shipped machine profiles (--target NAME; a YAML file of your own works too):"]
    for name in profile_names():
        try:
            env = load_target(name)
            facts = summary(env).split(": ", 1)[1]
        except Exception as exc:  # a help screen never fails
            facts = f"(unreadable: {exc})"
        lines.append(f"  {name:<11} {facts}")
    lines.append(f"  (files in {PROFILES_DIR})")
    return "\n".join(lines)


def _profile_names() -> list[str]:
    from accelconf.environment.targets import profile_names

    return profile_names()


def add_parser(subparsers: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    from accelconf.commands import help_texts, rule_id

    p: argparse.ArgumentParser = subparsers.add_parser(
        name,
        help=help_text,
        **help_texts(
            """Check accelerate config files against the environment that will train: this machine's
        GPUs with the packages of this interpreter (or of another one, --python), or a target
        machine given by flags or a --target profile. Each file gets validate's findings (for the
        accelerate version at hand) and the env-* findings (GPU count and model, bf16/fp8 support,
        torch/accelerate/DeepSpeed versions, multi-node layout). A summary line on stderr names
        what was checked against.""",
            [
                ("accelconf check config.yaml", "against this machine (detected)"),
                (
                    "accelconf check --python ~/venvs/train/bin/python config.yaml",
                    "with the packages of the venv that trains (when accelconf lives in pipx or its own venv)",
                ),
                ("accelconf check --target h100-node config.yaml", "against a shipped profile (listed above)"),
                ("accelconf check --target my-cluster.yaml config.yaml", "against a profile of your own"),
                ("accelconf check --gpus 8 --gpu H100 config.yaml", "against an 8-GPU H100 node"),
                ("accelconf check --torch-version 2.5.1 --deepspeed-version none config.yaml", ""),
                ("accelconf check --params 70B --gpus 8 --gpu H100-80GB config.yaml", "will it fit? memory per GPU"),
                (
                    "accelconf check --model ./Llama-3.1-8B --seq-len 4096 --micro-batch 1 config.yaml",
                    "with the model folder's real shapes, and activations",
                ),
            ],
            "0 clean, 1 errors (or warnings with --strict), 2 an unreadable or empty file, an unknown profile or "
            "interpreter, or a bad option",
            extra=_epilog(),
        ),
    )
    p.add_argument(
        "configs",
        nargs="*",
        metavar="CONFIG",
        help="accelerate config files (YAML or JSON), '-' for standard input; default: the file "
        "accelerate launch reads ($HF_HOME/accelerate/default_config.yaml)",
    )
    t = p.add_argument_group("target machine (each flag replaces the detected or profiled fact)")
    t.add_argument("--gpus", type=int, metavar="N", help="GPUs per node")
    t.add_argument("--gpu", metavar="MODEL", help="GPU model, e.g. H100, A100-40GB, 'Tesla V100-SXM2-16GB'")
    t.add_argument("--num-machines", type=int, metavar="N", help="machines (nodes) in the job")
    t.add_argument("--torch-version", metavar="V", help="torch version on the target")
    t.add_argument("--accelerate-version", metavar="V", help="also the version validate checks keys against")
    t.add_argument("--deepspeed-version", metavar="V|none", help="DeepSpeed version on the target, or none")
    t.add_argument(
        "--target",
        metavar="NAME|FILE",
        help="a machine profile: a shipped one by name (" + ", ".join(_profile_names()) + ") or a YAML file",
    )
    t.add_argument(
        "--python",
        metavar="PATH",
        help="read package versions from this interpreter's installed packages (its dist-info "
        "folders; nothing is imported there), e.g. the venv that runs accelerate launch",
    )
    p.add_argument(
        "--disable",
        action="append",
        default=[],
        metavar="RULE",
        type=rule_id,
        help="turn a rule off (repeatable; `accelconf rules` lists the ids)",
    )
    d = p.add_argument_group("detection")
    d.add_argument(
        "--probe",
        choices=PROBE_MODES,
        default="auto",
        help="GPU detection when no --gpu/--target is given (default: auto; torch only when asked)",
    )
    d.add_argument("--timeout", type=float, default=2.0, help="seconds to wait for nvidia-smi (default: 2)")
    add_memory_options(p)
    add_output_options(p)
    p.set_defaults(func=run)
    return p


def environment_for(opts: CheckOptions) -> Environment:
    """The environment to check against. Raises ``InputError``/``UsageError`` on a bad target."""
    from accelconf.environment.probe import probe
    from accelconf.environment.targets import load_target, target_from_args

    if opts.target:
        base = load_target(opts.target)
    elif opts.python:
        from accelconf.environment.interpreter import probe_interpreter

        base = probe_interpreter(opts.python, "none" if opts.gpu else opts.probe, opts.timeout)
    else:
        # with --gpu the GPUs are given: detect only the versions (cheap)
        base = probe("none" if opts.gpu else opts.probe, opts.timeout)
    flags = (
        opts.gpus,
        opts.gpu,
        opts.torch_version,
        opts.accelerate_version,
        opts.deepspeed_version,
        opts.num_machines,
    )
    if all(v is None for v in flags):
        return base
    return target_from_args(*flags, base=base)


def check_file(path: str, env: Environment, disabled: Sequence[str] = (), question: Any = None) -> FileResult:
    """validate's findings, the env-* findings and, with a memory ``question``, the mem-* ones for one
    file (:func:`accelconf.api.check_document`, the path the API and the language server take too);
    an unreadable file is a result."""
    from accelconf.api import check_document
    from accelconf.errors import InputError
    from accelconf.text.document import STDIN, load_source

    try:
        doc = load_source(path)
    except InputError as exc:
        return FileResult(STDIN if path == "-" else path, [], exc)
    # a finding in a referenced file (deepspeed_config_file) keeps its path
    return FileResult(doc.path, check_document(doc, env, disabled=disabled, memory=question), document=doc)


def summary(env: Environment) -> str:
    """One line naming what the configs were checked against."""

    def v(name: str, value: str | None) -> str | None:
        if not env.knows(f"{name}_version"):
            return None
        return f"{name} {value}" if value else f"no {name}"

    if not env.knows("gpus"):
        gpus = "GPUs not probed"
    elif not env.gpus:
        gpus = "no GPUs"
    else:
        models = sorted({g.model or g.name for g in env.gpus})
        count = f"{env.gpu_count}x " if env.knows("gpu_count") else ""
        gpus = f"{count}{'/'.join(models)}"
    parts = [gpus] + [
        p
        for p in (
            v("torch", env.torch_version),
            v("accelerate", env.accelerate_version),
            v("deepspeed", env.deepspeed_version),
        )
        if p
    ]
    if env.num_machines:
        parts.insert(0, f"{env.num_machines} machine{'s' if env.num_machines != 1 else ''}")
    return f"checking against {env.source}{_interpreter_note(env)}: {', '.join(parts)}"


def _interpreter_note(env: Environment) -> str:
    """Detected versions come from an interpreter: name it (``--python`` puts it in the source)."""
    if env.source.startswith("detected") and "packages of " not in env.source:
        return f", packages of {sys.executable}"
    return ""


def _no_accelerate_hint(env: Environment) -> str | None:
    if not env.source.startswith("detected") or not env.knows("accelerate_version") or env.accelerate_version:
        return None
    where = env.source.split("packages of ", 1)[1] if "packages of " in env.source else sys.executable
    return (
        f"no accelerate among the packages of {where}; if training runs in another environment, point "
        "at its interpreter with --python /path/to/venv/bin/python, or state --accelerate-version V"
    )


def run(args: argparse.Namespace) -> int:
    from accelconf.report import exit_code, render

    configs = list(args.configs)
    if not configs:
        from accelconf.environment.probe import default_config_file
        from accelconf.errors import UsageError

        default = default_config_file()
        if not os.path.isfile(default):
            raise UsageError(f"no CONFIG given and accelerate's default config {default} does not exist")
        configs = [default]
    opts = CheckOptions(
        tuple(configs),
        args.gpus,
        args.gpu,
        args.torch_version,
        args.accelerate_version,
        args.deepspeed_version,
        args.num_machines,
        args.target,
        args.probe,
        args.timeout,
        args.python,
        tuple(args.disable),
    )
    env = environment_for(opts)
    if args.format == "text":
        sys.stderr.write(summary(env) + "\n")
    hint = _no_accelerate_hint(env)
    for note in env.notes + ((hint,) if hint else ()):
        sys.stderr.write(f"accelconf: note: {note}\n")
    question = memory_question(args)
    results = [check_file(path, env, opts.disabled, question) for path in opts.configs]
    extra: dict[str, Any] = {"environment": env.to_json()}
    memory = memory_reports(args, env, results, question)
    if memory is not None:
        extra["memory"] = memory
    sys.stdout.write(render(results, args.format, sys.stdout, args.color, extra=extra))
    return exit_code(results, args.strict)


def memory_question(args: argparse.Namespace) -> Any:
    """The "will it fit?" question of --params/--model, the shapes and the LoRA adapter (an
    :class:`accelconf.environment.memory.Question`), ``None`` when no model was given."""
    from accelconf.environment import memory

    size = model_size(args)
    if size is None:
        return None
    from accelconf.environment.wrapclass import model_classes

    classes = model_classes(args.model) if args.model else None
    return memory.Question(size, args.seq_len, args.micro_batch, args.host_ram, classes, adapter_of_args(args))


def memory_reports(
    args: argparse.Namespace, env: Environment, results: list[FileResult], question: Any
) -> list[Any] | None:
    """With a memory question: print the tables (text format), with the strategies that fit when the
    config does not, and return the JSON data (the mem-* findings are check_document's). ``None`` when
    no model was given."""
    from accelconf.environment import fit, memory

    if question is None:
        return None
    out: list[Any] = []
    for r in results:
        if r.error is not None:
            continue
        report, _ = memory.check_memory(
            r.document,
            env,
            question.model,
            seq_len=question.seq_len,
            micro_batch=question.micro_batch,
            host_ram_gib=question.host_ram_gib,
            lora=question.lora,
        )
        entry = {"path": r.path, **report.to_json()}
        table = fit.table_for(report, question.lora)
        if table is not None:
            entry["strategies_that_fit"] = [row.to_json() for row in table.fitting[:5]]
        out.append(entry)
        if args.format == "text":
            head = f"{r.path}: " if len(results) > 1 else ""
            sys.stdout.write(head + memory.render_table(report) + _fitting_text(table))
    return out


def _fitting_text(table: Any) -> str:
    """The table's rows that fit, cheapest first (five), indented under check's memory table."""
    from accelconf.environment import fit

    if table is None:
        return ""
    return "  strategies that fit here, cheapest first (accelconf fit lists all):\n" + "".join(
        "  " + line + "\n" for line in fit.render(table, limit=5, only_fitting=True, legend=False).splitlines()[1:]
    )


def main(argv: Sequence[str]) -> int:
    """``accelconf check ARGS`` as a function (for tests and benchmarks)."""
    from accelconf.cli import main as cli_main

    return cli_main(["check", *argv])
