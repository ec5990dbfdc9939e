"""The generator of ``accelconf/data/transformers_releases.json`` (and of ``transformers_help.json``,
each field's help text): the fields of every transformers
release's ``TrainingArguments``/``Seq2SeqTrainingArguments`` and TRL's config classes, read by each
release's own dataclasses in its own process (tests/oracle/transformers_release_worker.py), merged
into one entry per field form with the first release that has it (``since``) and the first that
no longer does (``until``).

    python tests/oracle/transformers_releases_gen.py              # every release (installs the missing ones)
    python tests/oracle/transformers_releases_gen.py --installed  # only the venv's transformers/TRL
    python tests/oracle/transformers_releases_gen.py --renames    # only the renames, from the cached releases

``renames``: for a removed field, the field its deprecation message (in the last release that had it)
says to use instead, where the release that removed it has that field; read from that release's
``training_args.py`` (its warnings and the field's help text), never listed by hand.

A release that does not import here is listed with the reason, not skipped silently.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from tests.oracle import transformers_releases as tr  # noqa: E402

OUT = ROOT / "accelconf" / "data" / "transformers_releases.json"
HELP_OUT = ROOT / "accelconf" / "data" / "transformers_help.json"
WORKER = HERE / "transformers_release_worker.py"
Seg = dict[str, Any]


def run_worker(mode: str, dirs: list[str], stdin: str | None = None, timeout: float = 600) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, str(WORKER), mode, *dirs], input=stdin, capture_output=True, text=True, timeout=timeout
    )
    lines = proc.stdout.strip().splitlines()
    if not lines:
        return {"error": (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1][:500]}
    return json.loads(lines[-1])  # type: ignore[no-any-return]


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def merge(per_release: list[tuple[str, list[dict[str, Any]]]]) -> dict[str, list[Seg]]:
    """One segment per field form: releases in order, a field unchanged from the previous release
    extends its segment, a changed or returning one starts a new one."""
    out: dict[str, list[Seg]] = {}
    previous: set[str] = set()
    for _i, (minor, fields) in enumerate(per_release):
        present = set()
        for f in fields:
            present.add(f["name"])
            form = {
                "type": f["type"],
                "default": f["default"],
                "choices": f["choices"],
                **({"required": True} if f.get("required") else {}),
            }
            segs = out.setdefault(f["name"], [])
            last = segs[-1] if segs else None
            if (
                last
                and last["until"] is None
                and {k: v for k, v in last.items() if k not in ("since", "until")} == form
            ):
                continue
            if last and last["until"] is None:
                last["until"] = minor
            segs.append({"since": minor, "until": None, **form})
        for name in previous - present:
            out[name][-1]["until"] = minor
        previous = present
    return dict(sorted(out.items()))


def merge_keys(per_release: list[tuple[str, list[str]]]) -> dict[str, list[Seg]]:
    as_fields = [
        (m, [{"name": k, "type": None, "default": None, "choices": None} for k in keys]) for m, keys in per_release
    ]
    return {k: [{"since": s["since"], "until": s["until"]} for s in segs] for k, segs in merge(as_fields).items()}


def _form(f: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if f is None else {k: v for k, v in f.items() if k != "help"}


def _own(cls_fields: list[dict[str, Any]], base: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The fields a TRL config adds to, or changes in, TrainingArguments (its help text aside)."""
    return [f for f in cls_fields if _form(base.get(f["name"])) != _form(f)]


def helps(per_release: list[tuple[str, list[dict[str, Any]]]]) -> dict[str, str]:
    """Each field's help text (``metadata["help"]``) as the newest release that has the field words it."""
    out: dict[str, str] = {}
    for _minor, fields in per_release:
        for f in fields:
            if f.get("help"):
                out[f["name"]] = f["help"]
    return dict(sorted(out.items()))


# A replacement clause of a deprecation message: "Use `eval_strategy` instead", "use `--optim adafactor`",
# "Using `--per_device_train_batch_size` is preferred", "Use fsdp_config instead".
_USE = re.compile(r"\b(?:[Uu]se|[Uu]sing)\s+(`)?(?:--)?([A-Za-z_]\w*)([^`]*)")
_DEPRECATED = re.compile(r"deprecat", re.I)
_WARNS = ("warn", "warning", "warning_once")


def _text(node: ast.AST) -> str | None:
    """A string literal's text (an f-string's fields as ``{}``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def deprecation_messages(source: str, name: str) -> list[str]:
    """The deprecation messages of a ``training_args.py`` about field ``name``, in source order: the
    field's own help text when it says deprecated, and every warning that names the field and says so
    (``warnings.warn``, ``logger.warning``: not the class docstring, which names every field)."""
    out: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            for sub in ast.walk(node.value) if node.value is not None else ():
                text = _text(sub)
                if text and _DEPRECATED.search(text):
                    out.append(text)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _WARNS:
            text = _text(node.args[0]) if node.args else None
            if text and _DEPRECATED.search(text) and _names(text, {name}):
                out.append(text)
    return out


def _names(message: str, names: set[str]) -> set[str]:
    """The names the message spells as whole words (``--no_cuda`` and `` `no_cuda` `` both name it)."""
    return {n for n in names if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", message)}


def replacement(messages: list[str], old: Seg, after: dict[str, Seg], gone: set[str]) -> dict[str, Any] | None:
    """The field a deprecation message tells the user to write instead of a removed one: the first
    "use X" clause naming a field of the first release without it. ``value_carries``: the value
    moves as written: the clause names only the field (not ``--optim adafactor``), both take the
    same type, and the message is about no other removed field (``--push_to_hub_model_id and
    --push_to_hub_organization``: a full repository name goes in ``hub_model_id``)."""
    for message in messages:
        for m in _USE.finditer(message):
            new, rest = m.group(2), m.group(3) if m.group(1) else ""
            if new not in after:
                continue
            same_type = old["type"].removeprefix("optional-") == after[new]["type"].removeprefix("optional-")
            carries = not rest.strip() and same_type and len(_names(message, gone)) <= 1
            return {"new": new, "value_carries": carries, "message": " ".join(message.split())}
    return None


def renames(fields_table: dict[str, list[Seg]], sources: dict[str, str]) -> dict[str, dict[str, Any]]:
    """For each field a release removed: the field its deprecation message (in the last release that
    had it, ``sources``: minor -> that release's ``training_args.py``) names instead, where the release
    that removed it has that field. A removed field whose last release is not in ``sources`` is left out."""
    out: dict[str, dict[str, Any]] = {}
    order = list(tr.RELEASES)
    for name, segs in fields_table.items():
        until = segs[-1]["until"]
        if until is None or order[order.index(until) - 1] not in sources:
            continue
        after = {n: seg for n, ss in fields_table.items() for seg in ss if _seg_in(seg, until)}
        gone = {n for n, ss in fields_table.items() if ss[-1]["until"] == until}
        got = replacement(deprecation_messages(sources[order[order.index(until) - 1]], name), segs[-1], after, gone)
        if got is not None:
            out[name] = got
    return dict(sorted(out.items()))


def _release_key(minor: str) -> tuple[int, ...]:
    return tuple(int(p) for p in minor.split("."))


def _seg_in(seg: Seg, minor: str) -> bool:
    since, until = seg["since"], seg["until"]
    return _release_key(since) <= _release_key(minor) and (until is None or _release_key(minor) < _release_key(until))


def release_sources(minors: list[str]) -> dict[str, str]:
    """minor -> the cached release's ``training_args.py`` (releases not cached are left out)."""
    out = {}
    for m in minors:
        path = tr.path_of(m) / "transformers" / "training_args.py"
        if path.is_file():
            out[m] = path.read_text(encoding="utf-8")
    return out


def transformers_part(minors: list[str], jobs: int) -> dict[str, Any]:
    dirs = {m: tr.sys_path(tr.CACHE.ensure(m)) for m in minors}
    with ThreadPoolExecutor(jobs) as pool:
        got = dict(zip(minors, pool.map(lambda m: run_worker("fields", dirs[m]), minors)))
    ok = [m for m in minors if "error" not in got[m]]
    base = [(m, got[m]["classes"]["TrainingArguments"]) for m in ok]
    seq2seq = [
        (
            m,
            _own(
                got[m]["classes"]["Seq2SeqTrainingArguments"],
                {f["name"]: f for f in got[m]["classes"]["TrainingArguments"]},
            ),
        )
        for m in ok
    ]
    merged = merge(base)
    return {
        "releases": {m: got[m]["version"] for m in ok},
        "unavailable": {m: got[m]["error"] for m in minors if m not in ok},
        "renames": renames(merged, release_sources(ok)),
        "fields": {"TrainingArguments": merged, "Seq2SeqTrainingArguments": merge(seq2seq)},
        "help": {"TrainingArguments": helps(base), "Seq2SeqTrainingArguments": helps(seq2seq)},
        "fsdp_config_keys": merge_keys([(m, got[m]["fsdp_config_keys"]) for m in ok]),
    }


def trl_part(minors: list[str], jobs: int, transformers_dir: list[str]) -> dict[str, Any]:
    dirs = {m: str(tr.TRL_CACHE.ensure(m)) for m in minors}
    with ThreadPoolExecutor(jobs) as pool:
        got = dict(zip(minors, pool.map(lambda m: run_worker("trl", [dirs[m], *transformers_dir]), minors)))
    ok = [m for m in minors if "error" not in got[m]]
    base_fields = run_worker("fields", transformers_dir)
    base = {f["name"]: f for f in base_fields["classes"]["TrainingArguments"]}
    names = sorted({c for m in ok for c in got[m]["classes"]})
    classes: dict[str, Any] = {}
    for name in names:
        per = [(m, _own(got[m]["classes"][name], base)) for m in ok if name in got[m]["classes"]]
        have = [m for m in ok if name in got[m]["classes"]]
        gone = next((m for m in ok[ok.index(have[-1]) + 1 :]), None)
        classes[name] = {"since": have[0], "until": gone, "fields": merge(per), "help": helps(per)}
    return {
        "releases": {m: got[m]["version"] for m in ok},
        "transformers": base_fields["version"],
        "unavailable": {m: got[m]["error"] for m in minors if m not in ok},
        "classes": classes,
    }


def dump(data: dict[str, Any]) -> str:
    """One field per line, so a regenerated file diffs by field."""

    def block(obj: dict[str, Any], indent: str) -> str:
        rows = [f"{indent}{json.dumps(k)}: {json.dumps(v, sort_keys=True)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(rows) + "\n" + indent[:-1] + "}"

    tf = data["transformers"]
    parts = [
        f'"generated_by": {json.dumps(data["generated_by"])}',
        '"transformers": {\n  "releases": '
        + json.dumps(tf["releases"])
        + ',\n  "unavailable": '
        + json.dumps(tf["unavailable"], sort_keys=True)
        + ',\n  "fsdp_config_keys": '
        + block(tf["fsdp_config_keys"], "   ")
        + ',\n  "renames": '
        + block(tf["renames"], "   ")
        + ',\n  "fields": {\n'
        + ",\n".join(f"   {json.dumps(c)}: " + block(v, "    ") for c, v in tf["fields"].items())
        + "\n  }\n }",
    ]
    parts.append('"runs": ' + block(data["runs"], "  "))
    trl = data["trl"]
    parts.append(
        '"trl": {\n  "releases": '
        + json.dumps(trl["releases"])
        + ',\n  "transformers": '
        + json.dumps(trl["transformers"])
        + ',\n  "unavailable": '
        + json.dumps(trl["unavailable"], sort_keys=True)
        + ',\n  "classes": {\n'
        + ",\n".join(
            f'   {json.dumps(c)}: {{"since": {json.dumps(v["since"])}, "until": {json.dumps(v["until"])}, '
            f'"fields": ' + block(v["fields"], "    ") + "}"
            for c, v in trl["classes"].items()
        )
        + "\n  }\n }"
    )
    return "{\n" + ",\n".join(parts) + "\n}\n"


def kept_runs() -> dict[str, Any]:
    """The ``runs`` part is kept as it is: it is read from each release's ``training_args.py`` and
    ``trainer.py`` by hand, and the release matrix (tests/oracle/test_transformers_matrix.py) checks it by
    running each release's Trainer init."""
    if not OUT.is_file():
        return {}
    return json.loads(OUT.read_text(encoding="utf-8")).get("runs", {})  # type: ignore[no-any-return]


def split_help(data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The releases data without the help texts, and the help texts (their own file: only editor
    help reads them, so start-up never parses them)."""
    tf = {k: v for k, v in data["transformers"].items() if k != "help"}
    classes = {c: {k: v for k, v in spec.items() if k != "help"} for c, spec in data["trl"]["classes"].items()}
    helps = {
        "generated_by": data["generated_by"],
        "transformers": data["transformers"]["help"],
        "trl": {c: spec["help"] for c, spec in data["trl"]["classes"].items()},
    }
    return {**data, "transformers": tf, "trl": {**data["trl"], "classes": classes}}, helps


def dump_help(helps: dict[str, Any]) -> str:
    """One class per block, one field per line."""
    parts = [f'"generated_by": {json.dumps(helps["generated_by"])}']
    for part in ("transformers", "trl"):
        rows = [
            f"  {json.dumps(c)}: {{\n"
            + ",\n".join(f"   {json.dumps(k)}: {json.dumps(v)}" for k, v in t.items())
            + "\n  }"
            for c, t in helps[part].items()
        ]
        parts.append(f'"{part}": {{\n' + ",\n".join(rows) + "\n }")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def generate(jobs: int = 2, minors: list[str] | None = None, trl_minors: list[str] | None = None) -> tuple[str, str]:
    """The text of the releases data and of the help texts."""
    minors = minors or list(tr.RELEASES)
    trl_minors = trl_minors or list(tr.TRL_RELEASES)
    newest_dir = tr.sys_path(tr.CACHE.ensure(list(tr.RELEASES)[-1]))
    data = {
        "generated_by": "python tests/oracle/transformers_releases_gen.py",
        "transformers": transformers_part(minors, jobs),
        "runs": kept_runs(),
        "trl": trl_part(trl_minors, jobs, newest_dir),
    }
    fields, helps = split_help(data)
    return dump(fields), dump_help(helps)


def _write(path: Path, text: str) -> None:
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    print(f"wrote {path.relative_to(ROOT)} ({len(text)} bytes)")


def update_renames() -> str:
    """The committed data with only its ``renames`` part made again, from the cached releases (the
    last release before each removal must be cached: ``python tests/oracle/transformers_releases.py``)."""
    data = json.loads(OUT.read_text(encoding="utf-8"))
    tf = data["transformers"]
    tf["renames"] = renames(tf["fields"]["TrainingArguments"], release_sources(list(tf["releases"])))
    return dump(data)


def main(argv: list[str]) -> None:
    if argv[:1] == ["--renames"]:
        _write(OUT, update_renames())
        return
    text, helps = generate()
    _write(OUT, text)
    _write(HELP_OUT, helps)


if __name__ == "__main__":
    main(sys.argv[1:])
