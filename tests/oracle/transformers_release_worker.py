"""One transformers (or TRL) release's own argument dataclasses, read in their own process.

Run as ``python transformers_release_worker.py fields DIR [DIR...]`` with the release's cache
directory (and, for TRL, the transformers directory after it) as the arguments: they go first on
``sys.path``, the rest (torch, accelerate, tokenizers, huggingface_hub) comes from the venv. Prints
one JSON object on stdout:

- ``fields``: ``{"version", "classes": {class: [field...]}, "fsdp_config_keys": [...]}`` for
  transformers (``TrainingArguments``, ``Seq2SeqTrainingArguments``), ``{"version", "classes"}`` for TRL
  (every ``*Config`` dataclass the package exports that derives from ``TrainingArguments``);
  each field is ``{"name", "type", "default", "choices", "help"}``, its type as ``HfArgumentParser`` reads it
  and its help the dataclass field's ``metadata["help"]`` (whitespace folded).
- ``construct``: reads a JSON list of cases on stdin, each ``{"id", "cls", "kind", "args"}`` with kind
  ``kwargs`` (``cls(**args)``) or ``yaml``/``json`` (``HfArgumentParser(cls).parse_yaml_file`` /
  ``parse_json_file`` of a file holding ``args``, or of ``path``; ``output_dir: true`` adds one),
  and answers ``{"version", "results": {id: {"ok", "error",
  "message"}}}``: whether that release raised, and with which exception.

Nothing here is imported by accelconf: the library reads the JSON this generates.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import json
import os
import re
import sys
import tempfile
import types
import typing
import warnings
from typing import Any

# How training_args.py and trainer.py read a key of ``fsdp_config``: .get("k"), ["k"] (not as the
# target of an assignment: the XLA branch writes keys of its own), .setdefault("k"), .pop("k"), and
# a loop over names (``for param in ["limit_all_gathers", ...]: ... fsdp_config.get(param``).
FSDP_KEY = re.compile(
    r"""(?<!\w)fsdp_config(?:(?:\.get\(|\.setdefault\(|\.pop\()\s*["'](\w+)["']|\[\s*["'](\w+)["']\s*\](?!\s*=[^=]))"""
)
FSDP_LOOP = re.compile(r"""for (\w+) in [\[(]([^\])]+)[\])]:\s*\n[^\n]*fsdp_config\.get\(\1\b""")
FSDP_SOURCES = ("training_args.py", "trainer.py")
TRANSFORMERS_CLASSES = ("TrainingArguments", "Seq2SeqTrainingArguments")
SCALARS = {bool: "bool", int: "int", float: "float", str: "str"}


def _members(tp: Any) -> list[Any]:
    origin = typing.get_origin(tp)
    if origin is typing.Union or (hasattr(types, "UnionType") and isinstance(tp, types.UnionType)):
        return [m for a in typing.get_args(tp) for m in _members(a)]
    return [tp]


def _enum_class(tp: Any) -> type[enum.Enum] | None:
    return tp if isinstance(tp, type) and issubclass(tp, enum.Enum) else None


def _jsonable(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return _jsonable(value.value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return repr(value)


def classify(tp: Any, metadata: Any) -> tuple[str, list[Any] | None]:
    """The field's kind and its choices, as HfArgumentParser treats the annotation: ``None`` in a
    union makes it ``optional-``; an Enum or Literal member (or metadata choices) makes it an enum."""
    members = _members(tp)
    optional = any(m is type(None) for m in members)
    members = [m for m in members if m is not type(None)]
    choices: list[Any] | None = None
    enums = [e for e in map(_enum_class, members) if e is not None]
    literals = [v for m in members if typing.get_origin(m) is typing.Literal for v in typing.get_args(m)]
    if enums:
        choices = [_jsonable(v) for e in enums for v in e]
        kind = "enum"
    elif (
        literals
        and len(literals) == len([m for m in members if typing.get_origin(m) is typing.Literal])
        and all(typing.get_origin(m) is typing.Literal for m in members)
    ):
        choices, kind = [_jsonable(v) for v in literals], "enum"
    elif metadata.get("choices"):
        choices, kind = [_jsonable(v) for v in metadata["choices"]], "enum"
    else:
        kind = _plain_kind(members)
    return ("optional-" + kind if optional else kind), choices


def _plain_kind(members: list[Any]) -> str:
    bases = {typing.get_origin(m) or m for m in members}
    if bases and bases <= {dict, str} and dict in bases:
        return "dict"  # a dict field also takes a JSON string
    if list in bases and bases <= {list, str}:
        return "list"  # a list field also takes one string (report_to, optim_target_modules)
    if len(members) == 1:
        m = members[0]
        if m in SCALARS:
            return SCALARS[m]
        if (typing.get_origin(m) or m) in (list, tuple):
            return "list"
        if (typing.get_origin(m) or m) is dict:
            return "dict"
        return "object"
    return "union"


def _default(f: dataclasses.Field) -> Any:  # type: ignore[type-arg]
    if f.default is not dataclasses.MISSING:
        return _jsonable(f.default)
    if f.default_factory is not dataclasses.MISSING:
        return _jsonable(f.default_factory())
    return None


def describe(cls: type) -> list[dict[str, Any]]:
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # an annotation naming something the release does not import
        hints = {}
    out = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        kind, choices = classify(hints.get(f.name, f.type), f.metadata)
        entry = {"name": f.name, "type": kind, "default": _default(f), "choices": choices}
        if isinstance(f.metadata.get("help"), str):
            entry["help"] = " ".join(f.metadata["help"].split())  # the text `--help` prints, one line
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            entry["required"] = True
        out.append(entry)
    return out


def report_to_choices() -> list[str] | None:
    """The reporting integrations the release knows (``report_to``'s accepted names)."""
    try:
        utils = importlib.import_module("transformers.integrations.integration_utils")
    except ImportError:
        return None
    names = getattr(utils, "INTEGRATION_TO_CALLBACK", None)
    return sorted(names) + ["all", "none"] if isinstance(names, dict) else None


def transformers_fields() -> dict[str, Any]:
    import transformers
    import transformers.training_args as training_args

    classes = {name: describe(getattr(transformers, name)) for name in TRANSFORMERS_CLASSES}
    reporters = report_to_choices()
    for fields in classes.values():
        for f in fields:
            if f["name"] == "report_to" and reporters:
                f["choices"] = reporters
    return {
        "version": transformers.__version__,
        "classes": classes,
        "fsdp_config_keys": fsdp_config_keys(os.path.dirname(training_args.__file__)),
    }


def fsdp_config_keys(package_dir: str) -> list[str]:
    """The keys of ``fsdp_config`` the release reads, from its own source."""
    keys: set[str] = set()
    for name in FSDP_SOURCES:
        path = os.path.join(package_dir, name)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as fh:
            source = fh.read()
        keys.update(a or b for a, b in FSDP_KEY.findall(source))
        for _, names in FSDP_LOOP.findall(source):
            keys.update(re.findall(r"""["'](\w+)["']""", names))
    return sorted(keys)


def trl_fields() -> dict[str, Any]:
    import transformers
    import trl

    classes: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    for name in sorted(n for n in dir(trl) if n.endswith("Config") and not n.startswith("_")):
        try:
            cls = getattr(trl, name)
        except Exception as exc:  # an optional dependency the config's module needs
            skipped[name] = f"{type(exc).__name__}: {exc}"[:200]
            continue
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and issubclass(cls, transformers.TrainingArguments):
            classes[name] = describe(cls)
    return {
        "version": trl.__version__,
        "transformers": transformers.__version__,
        "classes": classes,
        "skipped": skipped,
    }


def _resolve(cls_name: str) -> type:
    for mod in ("transformers", "trl"):
        try:
            return getattr(importlib.import_module(mod), cls_name)
        except (ImportError, AttributeError):
            continue
    raise LookupError(cls_name)


UNUSED = re.compile(r"Some keys are not used by the HfArgumentParser: (\[.*\])", re.S)
UNEXPECTED = re.compile(r"unexpected keyword argument '(\w+)'")


def construct_one(case: dict[str, Any], tmp: str) -> dict[str, Any]:
    """``cls(**args)`` (kind ``kwargs``) or HfArgumentParser's own reading of a YAML/JSON file
    (``yaml``/``json``: ``path``, or ``args`` written to a file): what the release raised."""
    import ast

    try:
        cls = _resolve(case["cls"])
        args = case.get("args")
        if args is not None and case.get("output_dir"):
            args = {"output_dir": os.path.join(tmp, "out"), **args}
        if case["kind"] == "kwargs":
            cls(**args)
        else:
            import transformers
            import yaml

            path = case.get("path")
            if path is None:
                path = os.path.join(tmp, f"case.{case['kind']}")
                with open(path, "w", encoding="utf-8") as fh:
                    if case["kind"] == "json":
                        json.dump(args, fh)
                    else:
                        yaml.safe_dump(args, fh)
            parser = transformers.HfArgumentParser(cls)
            read = parser.parse_json_file if case["kind"] == "json" else parser.parse_yaml_file
            read(path, allow_extra_keys=False)
        return {"ok": True, "error": None, "message": "", "unused": None}
    except BaseException as exc:  # the oracle records what the release raised, SystemExit included
        m, kw = UNUSED.search(str(exc)), UNEXPECTED.search(str(exc))
        unused = sorted(ast.literal_eval(m.group(1))) if m else [kw.group(1)] if kw else None
        return {"ok": False, "error": type(exc).__name__, "message": str(exc)[:300], "unused": unused}


def construct() -> dict[str, Any]:
    import transformers

    cases = json.load(sys.stdin)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # an output_dir or logging_dir a release creates lands here
        for case in cases:
            results[case["id"]] = construct_one(case, tmp)
    return {"version": transformers.__version__, "results": results}


def main(argv: list[str]) -> None:
    mode, dirs = argv[0], argv[1:]
    sys.path[:0] = dirs
    warnings.simplefilter("ignore")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # a release that prints on import must not spoil the JSON
    try:
        if mode == "fields":
            out = transformers_fields()
        elif mode == "trl":
            out = trl_fields()
        else:
            out = construct()
    except Exception as exc:
        out = {"error": f"{type(exc).__name__}: {exc}"[:500]}
    real_stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
