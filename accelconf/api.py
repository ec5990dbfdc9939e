"""The public API's one path for each job: validate, check, convert, diff.

Each function accepts a path, a Document or text. :func:`check_document` is the one "validate,
then run the environment checks" path: the API (:func:`check_config`), ``accelconf check``,
``accelconf validate`` and the language server all call it, so they report the same findings for
the same document and options. :func:`convert_text` is the one conversion path (the API's
:func:`convert` and ``accelconf convert``). Rules live in :mod:`accelconf.accelerate.validate`,
:mod:`accelconf.deepspeed` and :mod:`accelconf.environment.checks`; this module only composes them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from accelconf.accelerate.model import Config, from_document
from accelconf.accelerate.registry import resolve_version
from accelconf.findings import Finding, sort_findings
from accelconf.text.document import Document, load_bytes, load_file, load_text, refuse_empty

if TYPE_CHECKING:
    from accelconf.environment.memory import Question
    from accelconf.environment.probe import Environment
    from accelconf.precedence import Row


def _doc(source: Document | str | os.PathLike[str]) -> Document:
    if isinstance(source, Document):
        return source
    s = os.fspath(source)
    if "\n" in s or not os.path.exists(s):
        return load_text(s)
    return load_file(s)


def validate_any(
    doc: Document,
    *,
    accelerate_version: str | None = None,
    deepspeed_version: str | None = None,
    world_size: int | None = None,
    runtime: str | None = None,
    disabled: Iterable[str] = (),
    cfg: Config | None = None,
) -> list[Finding]:
    """Validate an accelerate config, or a DeepSpeed JSON recognized by its content (the composition of
    :mod:`accelconf.accelerate.validate` and :mod:`accelconf.deepspeed`, which do not import each other's rules).
    ``cfg``: the document's Config at the resolved ``accelerate_version``, when the caller has read it."""
    # the rule packages load on first use: every command imports this module, few validate, and
    # DeepSpeed's (its key table) only for a DeepSpeed JSON
    from accelconf.accelerate import validate
    from accelconf.kinds import is_deepspeed

    if doc.format == "json" and doc.data is not None:
        # --runtime deepspeed / --deepspeed-version say the file is DeepSpeed JSON unless it has accelerate keys
        if is_deepspeed(doc, assume=runtime == "deepspeed" or deepspeed_version is not None):
            from accelconf import deepspeed as dsmod
            from accelconf.deepspeed.validate import validate_deepspeed

            off = set(disabled)
            if deepspeed_version is None:
                deepspeed_version = dsmod.installed_version()  # the installed DeepSpeed, from its metadata
            if runtime is None:
                # "auto" values only make sense for a Hugging Face runtime; a file without any is
                # read by DeepSpeed itself.
                runtime = "transformers" if '"auto"' in doc.text else "deepspeed"
            found = validate_deepspeed(doc, world_size=world_size, runtime=runtime, deepspeed_version=deepspeed_version)
            return [f for f in found if f.rule not in off]
    return validate.validate_document(doc, accelerate_version=accelerate_version, disabled=disabled, cfg=cfg)


def _known_rules(disabled: Iterable[str]) -> frozenset[str]:
    """The ids of ``disabled``, each one the rule catalogue knows; else a :class:`UsageError` naming
    the unknown ones and the nearest known ids (the check ``--disable`` and the server make): a typo
    would otherwise turn nothing off without a word."""
    ids = tuple(disabled)
    if not ids:
        return frozenset()
    from accelconf import catalogue  # the rule table loads only when rules are named
    from accelconf.errors import UsageError

    problem = catalogue.unknown_message(ids, "disabled")
    if problem:
        raise UsageError(problem)
    return frozenset(ids)


def check_document(
    doc: Document,
    env: Environment | None = None,
    *,
    accelerate_version: str | None = None,
    deepspeed_version: str | None = None,
    world_size: int | None = None,
    runtime: str | None = None,
    disabled: Iterable[str] = (),
    memory: Question | None = None,
    transformers_version: str | None = None,
    trl_version: str | None = None,
) -> list[Finding]:
    """validate's findings for one document and, when ``env`` is given, the ``env-*`` findings; with a
    ``memory`` question ("will it fit?"), the ``mem-*`` and ``model-wrap-class`` findings too.

    The accelerate version checked is ``accelerate_version``, else the one ``env`` knows, else the
    installed one (else the newest known); the DeepSpeed version likewise. An ``accelerate_version``
    given with an ``env`` is that environment's version too (laid over it as ``check
    --accelerate-version`` lays it, :func:`accelconf.environment.targets.target_from_args`), so
    validate and the environment checks judge one version. The environment checks
    run with ``validated=True``: the config-only multi-node checks are validate's, said once.
    Rules named in ``disabled`` are left out of both; an id the rule catalogue does not know raises
    :class:`~accelconf.errors.UsageError` (with the nearest known id). Sorted as the CLI prints them.
    ``transformers_version``/``trl_version`` are the Trainer path's (:mod:`accelconf.trainer`):
    accepted here so that one set of options serves every kind of file.
    """
    if env is not None:
        if accelerate_version is not None and not (
            env.knows("accelerate_version") and env.accelerate_version == accelerate_version
        ):
            from accelconf.environment.targets import target_from_args

            env = target_from_args(accelerate_version=accelerate_version, base=env)
        if accelerate_version is None and env.knows("accelerate_version"):
            accelerate_version = env.accelerate_version
        if deepspeed_version is None and env.knows("deepspeed_version"):
            deepspeed_version = env.deepspeed_version
    off = _known_rules(disabled)
    model_at = _one_model(doc, accelerate_version)
    found = list(
        validate_any(
            doc,
            accelerate_version=accelerate_version,
            deepspeed_version=deepspeed_version,
            world_size=world_size,
            runtime=runtime,
            disabled=off,
            cfg=model_at(accelerate_version),
        )
    )
    if env is not None:
        from accelconf.environment.checks import check_environment, target_release

        found += [
            f
            for f in check_environment(doc, env, validated=True, cfg=model_at(target_release(env)))
            if f.rule not in off
        ]
    if memory is not None:
        from accelconf.environment.checks import target_release
        from accelconf.environment.memory import document_findings
        from accelconf.environment.targets import unknown_environment

        machine = env if env is not None else unknown_environment()
        found += [
            f
            for f in document_findings(doc, machine, memory, cfg=model_at(target_release(machine)))
            if f.rule not in off
        ]
    return sort_findings(found)


def _one_model(doc: Document, accelerate_version: str | None) -> Callable[[str | None], Config | None]:
    """``model_at(release)``: the document's one :class:`Config`, read at validate's release the first
    time it is asked for, then the same object for every check that reads the document at that
    release (``None`` for a release that differs, which reads its own, and for a document that is
    not a mapping, which validate reports)."""
    version = resolve_version(accelerate_version)
    read: list[Config] = []

    def model_at(release: str | None) -> Config | None:
        if not isinstance(doc.data, dict) or resolve_version(release) != version:
            return None
        if not read:
            read.append(from_document(doc, version))
        return read[0]

    return model_at


def validate_source(
    text: str, path: str = "<text>", env: Environment | None = None, *, raw: bytes | None = None, **opts: Any
) -> list[Finding]:
    """validate's findings for any file accelconf reads, recognised by content and name
    (:func:`accelconf.kinds.recognise`): the one dispatch of ``validate``, the API and the server.

    An accelerate config, a DeepSpeed JSON, or a YAML/JSON mapping of no known kind goes to
    :func:`check_document`; an env file, a launch script with ``accelerate launch`` and a Python
    script with ``Accelerator(...)`` to their reader and validate's value rules. A file that holds
    distributed settings but is none of these (Trainer arguments, a LLaMA-Factory YAML, ...) is
    named in an info finding, and the DeepSpeed and accelerate files it references are checked.
    ``opts`` are :func:`check_document`'s. Raises :class:`InputError` for text that does not parse
    or is empty.
    """
    from accelconf.errors import InputError
    from accelconf.kinds import recognise
    from accelconf.kinds.references import in_document, in_script

    opts["disabled"] = _known_rules(opts.get("disabled", ()))
    assume = opts.get("runtime") == "deepspeed" or opts.get("deepspeed_version") is not None
    rec = recognise(text, path, assume_deepspeed=assume)
    if rec.format in ("env", "cli", "kwargs"):
        refuse_empty(text, path)
        found = _read_findings(text, rec.format, path, opts.get("accelerate_version")) if rec.checked else []
        trainer = _trainer_findings(text, path, rec.kind, opts) if rec.format in ("cli", "kwargs") else []
        if not rec.checked and not trainer and not _has_trainer_arguments(text, path, rec.kind):
            found.append(_named(rec))
        found += trainer + _check_references(in_script(text), path, env, opts)
    else:
        doc = load_bytes(raw, path, rec.format) if raw is not None else load_text(text, path, rec.format)  # type: ignore[arg-type]
        if doc.root is None:
            raise InputError("empty document: nothing to validate", path, 1, 1)
        trainer_kind = rec.kind in _trainer_kinds()
        if rec.checked and not trainer_kind or rec.kind == "unknown":
            return check_document(doc, env, **opts)
        found = _trainer_findings(doc.text, path, rec.kind, opts) if trainer_kind else [_named(rec)]
        found += _check_references(in_document(doc), path, env, opts)
    off = frozenset(opts.get("disabled", ()))
    return sort_findings(f for f in found if f.rule not in off)


def _trainer_kinds() -> frozenset[str]:
    """The kinds :mod:`accelconf.trainer` checks, named by the recogniser: the Trainer model (and
    its releases data) loads only for a file of one of them, never for an accelerate config."""
    from accelconf.kinds import TRAINER_KINDS

    return frozenset(TRAINER_KINDS)


def _trainer_findings(text: str, path: str, kind: str, opts: dict[str, Any]) -> list[Finding]:
    """The Trainer-arguments rules (:mod:`accelconf.trainer.validate`) of a file of any kind that
    can hold them; a script without any gives none."""
    from accelconf.trainer.validate import findings

    return findings(text, path, kind, opts)


def _has_trainer_arguments(text: str, path: str, kind: str) -> bool:
    from accelconf.trainer.validate import has_arguments

    return has_arguments(text, path, kind)


def _named(rec: Any) -> Finding:
    return Finding("file-kind", "info", f"{rec.label}: {rec.not_checked}", line=1, column=1)


def _read_findings(text: str, fmt: str, path: str, version: str | None) -> list[Finding]:
    """An env file, a launch script or a Python script read by its format's reader: what reading
    it says, and validate's value rules at the input's own positions."""
    from accelconf import formats

    if fmt == "cli":  # every launch of a script, each bad flag at its line:col (not only the first)
        from accelconf.formats.cli import read_launches

        return [f for la in read_launches(text, path, version) for f in la.config.notes + la.findings]
    cfg = formats.read(text, fmt, path, version)
    return list(cfg.notes) + formats.value_findings(cfg, version)


def _check_references(refs: Iterable[Any], path: str, env: Environment | None, opts: dict[str, Any]) -> list[Finding]:
    """The findings of the DeepSpeed and accelerate files a file names, reported against those files;
    a file that is missing or unreadable is a warning where it is named."""
    from accelconf.errors import InputError
    from accelconf.kinds import recognise
    from accelconf.kinds.references import locate

    out: list[Finding] = []
    for ref in refs:
        where = locate(ref.value, path)
        try:
            if where is None:
                raise InputError("not found next to this file or in the working directory", ref.value)
            doc = load_file(where)
        except InputError as exc:
            out.append(
                Finding(
                    "file-reference",
                    "warning",
                    f"`{ref.key}` names {ref.value!r}: {exc.message}; it is not checked",
                    ref.key,
                    ref.line,
                    ref.column,
                )
            )
            continue
        kind = recognise(doc.text, where, doc, assume_deepspeed=ref.role == "deepspeed").kind
        if kind not in ("accelerate", "deepspeed") or (ref.role == "fsdp" and kind != "accelerate"):
            continue  # a Trainer fsdp_config or another kind: nothing accelconf can judge yet
        ref_opts = dict(opts)
        if kind == "deepspeed" and not ref_opts.get("deepspeed_version"):
            from accelconf.deepspeed import NEWEST, installed_version

            ref_opts["deepspeed_version"] = installed_version() or NEWEST  # named as DeepSpeed's file: read as one
        out += [f.with_path(where) for f in check_document(doc, env, **ref_opts)]
    return out


def validate_config(
    source: Document | str | os.PathLike[str], *, accelerate_version: str | None = None, **kw: Any
) -> list[Finding]:
    """Findings for any file accelconf reads (a path, text or Document): an accelerate config, a
    DeepSpeed JSON, an env file, a launch script, a Python script, or a file of another kind, named
    (see :func:`validate_source`)."""
    if isinstance(source, Document):
        return check_document(source, None, accelerate_version=accelerate_version, **kw)
    s = os.fspath(source)
    if "\n" in s or not os.path.exists(s):
        return validate_source(s, "<text>", accelerate_version=accelerate_version, **kw)
    from accelconf.text.document import decode, read_bytes

    raw = read_bytes(s)
    return validate_source(decode(raw, s)[0], s, raw=raw, accelerate_version=accelerate_version, **kw)


def read_config(
    source: Document | str | os.PathLike[str], fmt: str | None = None, *, version: str | None = None
) -> Config:
    """Read any supported format (yaml, json, env, cli, kwargs) into the one model."""
    from accelconf import formats

    if isinstance(source, Document):
        return from_document(source, version)
    s = os.fspath(source)
    if "\n" not in s and os.path.exists(s):
        with open(s, encoding="utf-8") as fh:
            return formats.read(fh.read(), fmt, path=s, version=version)
    return formats.read(s, fmt, version=version)


def input_findings(cfg: Config, version: str | None = None) -> list[Finding]:
    """What a Config read from any format is reported with before it is used: the reader's notes
    (``Config.notes``, such as ``env.never-read``) and validate's value rules (an invalid value is an
    error in a converter and in ``explain`` as in validate)."""
    from accelconf import formats

    return list(cfg.notes) + formats.value_findings(cfg, version)


def convert_text(
    text: str,
    to: str,
    *,
    fmt: str | None = None,
    path: str = "<text>",
    version: str | None = None,
    machine_rank: int | None = None,
    export: bool = False,
) -> tuple[str, list[Finding]]:
    """Convert a text to another format: ``(text, findings)``, the reader's findings (``Config.notes``,
    such as ``env.never-read``) first, then the writer's lossy steps. Raises ``LaunchError`` when
    accelerate launch would refuse the config."""
    from accelconf import formats

    cfg = formats.read(text, fmt, path, version)
    findings = input_findings(cfg, version)
    out, written = formats.write(
        cfg, to, version, machine_rank=machine_rank, **({"export": export} if to == "env" else {})
    )
    findings += [f for f in written if f not in findings]
    return out, findings


def convert(
    source: Document | str | os.PathLike[str], to: str, *, fmt: str | None = None, version: str | None = None
) -> tuple[str, list[Finding]]:
    """Convert a config to another format: returns (text, the reader's and the writer's findings)."""
    if isinstance(source, Document):
        text, path = source.text, source.path
    else:
        text, path = os.fspath(source), "<text>"
        if "\n" not in text and os.path.exists(text):
            path = text
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
    return convert_text(text, to, fmt=fmt, path=path, version=version)


def explain(
    source: Config | Document | str | os.PathLike[str],
    *,
    version: str | None = None,
    cli: Config | None = None,
    shell: dict[str, tuple[str, str]] | None = None,
    kwargs: Config | None = None,
) -> list[Row]:
    """Every effective setting the training process sees and where it comes from (a flag, the file,
    the shell, a Python argument or a default), by accelerate's precedence: :func:`accelconf.precedence.explain`
    (``accelconf explain``). ``shell``: variable -> (value, where). Raises ``LaunchError`` when accelerate
    launch would refuse the config."""
    from accelconf.precedence import explain as explain_rows

    cfg = source if isinstance(source, Config) else read_config(source, version=version)
    return explain_rows(cfg, version, cli, shell, kwargs)[0]


def trainer_runs(
    text: str,
    path: str = "<text>",
    *,
    env: dict[str, str] | None = None,
    world_size: int = 1,
    hidden_size: int | None = None,
    transformers_version: str | None = None,
) -> list[tuple[Any, list[Finding]]]:
    """What the Accelerator of a Trainer is built with, for each group of Trainer arguments a text gives
    (an arguments YAML/JSON, a launch script's training-script arguments, a ``fsdp_config`` file):
    ``(Runs, findings)`` per group, with ``env`` the variables the training process sees (what
    ``accelerate launch`` writes from an accelerate config: ``to-env``'s output)."""
    from accelconf import kinds
    from accelconf.trainer.read import read_all
    from accelconf.trainer.runs_inputs import what_runs_group

    process = {k: (v, "launch", k) for k, v in (env or {}).items()}
    kind = kinds.recognise(text, path).kind
    out = []
    for group in read_all(text, path, kind):
        _, runs, found = what_runs_group(
            group, process, version=transformers_version, world=world_size, hidden_size=hidden_size
        )
        out.append((runs, found))
    return out


def diff_configs(a: Any, b: Any, *, version: str | None = None, ignore: tuple[str, ...] = ()) -> Any:
    """Semantic diff of two configs (paths, texts or Configs)."""
    from accelconf import diff as diffmod

    ca = a if isinstance(a, Config) else read_config(a, version=version)
    cb = b if isinstance(b, Config) else read_config(b, version=version)
    return diffmod.diff(ca, cb, version=version, ignore=ignore)


def check_config(source: Document | str | os.PathLike[str], env: Any = None, **kw: Any) -> list[Finding]:
    """Findings for a config against an environment (a probe result or target; default: detect).

    The same findings as ``accelconf check`` and the language server: see :func:`check_document`."""
    from accelconf.environment.probe import probe

    return check_document(_doc(source), env if env is not None else probe(), **kw)


def estimate_memory(
    config: Document | str | os.PathLike[str],
    *,
    params: int | str | None = None,
    model: str | os.PathLike[str] | None = None,
    target: Any = None,
    seq_len: int | None = None,
    micro_batch: int | None = None,
    host_ram_gib: float | None = None,
    lora_rank: int | None = None,
    lora_targets: Any = None,
    quant: str | None = None,
) -> Any:
    """Training memory per GPU and host RAM per node for a config and a model (``params="8B"`` or
    ``model=DIR`` or a well-known model's name, ``model="Llama-3.1-8B"``) on a ``target`` (an Environment from
    ``target_from_args``/``load_target``, a profile
    path, or ``None``: no machine, figures only). Returns :class:`accelconf.environment.memory.Report`
    (``.estimate``, ``.verdict``, ``.suggestion``, ``.to_json()``). ``lora_rank`` (with optional
    ``lora_targets``, a list or ``"q_proj,v_proj"``, and ``quant="4bit"|"8bit"``) estimates LoRA/QLoRA."""
    from accelconf.environment import memory, modelsize
    from accelconf.environment.probe import Environment
    from accelconf.errors import UsageError

    if (params is None) == (model is None):
        raise UsageError("estimate_memory needs params=... or model=..., not both")
    size = modelsize.resolve(model) if model is not None else modelsize.from_count(params)  # type: ignore[arg-type]
    if target is None:
        from accelconf.environment.targets import ALL_FACTS

        target = Environment(source="no target", unknown=ALL_FACTS)
    elif not isinstance(target, Environment):
        from accelconf.environment.targets import load_target

        target = load_target(target)
    from accelconf.environment.lora import adapter_of

    adapter = adapter_of(lora_rank, lora_targets, quant)
    return memory.check_memory(
        _doc(config), target, size, seq_len=seq_len, micro_batch=micro_batch, host_ram_gib=host_ram_gib, lora=adapter
    )[0]


def fit(model: Any, **kw: Any) -> Any:
    """Every strategy accelconf models for ``model`` (a :class:`~accelconf.environment.modelsize.ModelSize`,
    a model folder or a well-known model's name, or a parameter count such as ``"8B"``) on ``nodes`` x
    ``gpus`` GPUs of model ``gpu`` (or of ``gpu_memory_gib``): the table ``accelconf fit`` prints, as an
    :class:`accelconf.environment.fit.FitTable` (``.rows``, ``.cheapest``, ``.to_json()``). Keywords:
    ``gpu``, ``gpus``, ``nodes``, ``gpu_memory_gib``, ``seq_len``, ``micro_batch``, ``attn``,
    ``host_ram_gib``, ``mixed_precision`` (default: bf16 where the GPU has it, else fp16), and
    ``lora_rank`` with ``lora_targets`` and ``quant`` as :func:`estimate_memory`
    (:func:`accelconf.environment.fit.for_model`)."""
    from accelconf.environment.fit import for_model

    return for_model(model, **kw)
