"""Every transformers release (and the TRL releases) against the releases data: the release matrix.

For each release, one process (tests/oracle/transformers_release_worker.py ``construct``) builds
``TrainingArguments`` from the corpus arguments files (``../shared/corpus/trainer``, kind ``args``,
read by ``HfArgumentParser.parse_yaml_file``/``parse_json_file`` with extra keys refused) and from
generated cases: a field some release lacks (removed, or added later), an unknown field, a
wrong-type value, an enum value outside its choices and every documented choice. What each release
raised is compared with the verdict of :mod:`accelconf.trainer.releases` for that release
(:func:`verdict`); then each release's Trainer init (tests/oracle/transformers_runs_matrix.py);
:func:`table` writes bench/TRANSFORMERS.md.

    python tests/oracle/transformers_matrix.py --write bench/TRANSFORMERS.md --jobs 2
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from accelconf.trainer import releases as data  # noqa: E402
from tests.oracle import transformers_releases as tr  # noqa: E402
from tests.oracle.transformers_releases_gen import run_worker  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "trainer"
CLS = "TrainingArguments"
SEQ2SEQ = "Seq2SeqTrainingArguments"
BAD_CHOICE = "not_a_choice"
# What a release refuses at construction for the number of processes (one here), which the releases
# data does not judge: GRPO's batch divisibility by num_generations.
WORLD_SIZE_REFUSALS = (
    "The global eval batch size",
    "The global train batch size",
    "must be divisible by the global batch size",
    "must be divisible by num_generations",
)
# TRL's config class for an arguments file, from the trainer its path names.
TRL_BY_WORD = {
    "sft": "SFTConfig",
    "dpo": "DPOConfig",
    "grpo": "GRPOConfig",
    "orpo": "ORPOConfig",
    "kto": "KTOConfig",
    "reward": "RewardConfig",
}


@dataclass
class Case:
    id: str
    kind: str  # kwargs | yaml | json
    group: str  # corpus | removed | unknown | wrong-type | bad-choice | choice
    args: dict[str, Any]  # what the case sets (a corpus file's top-level mapping)
    cls: str = CLS
    output_dir: bool = True  # give it an output_dir (a corpus file keeps its own, or none)
    trl: bool = False  # a TRL config class, judged by the TRL release

    def request(self) -> dict[str, Any]:
        return {"id": self.id, "cls": self.cls, "kind": self.kind, "args": self.args, "output_dir": self.output_dir}


@dataclass
class Verdict:
    unknown: list[str]
    missing: list[str]
    bad_choice: list[str]
    wrong_type: list[str]


@dataclass
class Outcome:
    case: Case
    verdict: Verdict
    got: dict[str, Any]
    problem: str = ""


@dataclass
class ReleaseResult:
    minor: str
    version: str
    error: str = ""
    outcomes: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0

    def count(self, group: str) -> tuple[int, int]:
        mine = [o for o in self.outcomes if o.case.group == group]
        return sum(1 for o in mine if not o.problem), len(mine)


def corpus_args() -> list[tuple[str, Path]]:
    manifest = CORPUS / "MANIFEST.tsv"
    if not manifest.is_file():
        return []
    with manifest.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    return [(r["file"], CORPUS / r["file"]) for r in rows if r.get("kind") == "args"]


def read_args(path: Path) -> dict[str, Any]:
    """The top-level mapping of an arguments file, as the release's parser gets it."""
    import yaml

    text = path.read_text(encoding="utf-8")
    got = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    return got if isinstance(got, dict) else {}


def trl_class(name: str) -> str | None:
    words = set(name.lower().replace("-", "_").replace(".", "_").replace("/", "_").split("_"))
    return next((cls for word, cls in TRL_BY_WORD.items() if word in words), None)


def dated_fields() -> list[str]:
    """The TrainingArguments fields that some known release lacks (added later, or removed)."""
    first = data.RELEASES[0]
    out = []
    for name in sorted(data.all_field_names()):
        history = data.field_history(name)
        if name in data.fields(data.NEWEST, cls=SEQ2SEQ) and name not in data.fields(data.NEWEST, cls=CLS):
            continue  # Seq2SeqTrainingArguments' own
        if history[0].since != first or history[-1].until is not None:
            out.append(name)
    return out


def generated_cases(minor: str) -> list[Case]:
    out = [
        Case("unknown/no_such_field", "yaml", "unknown", {"no_such_field": 1}),
        Case("unknown/json", "json", "unknown", {"no_such_field": 1, "seed": 1}),
        Case("unknown/kwargs", "kwargs", "unknown", {"no_such_field": 1}),
        Case("wrong-type/learning_rate-string", "yaml", "wrong-type", {"learning_rate": "5e-5"}),
        Case("wrong-type/bf16-auto", "yaml", "wrong-type", {"bf16": "auto"}),
    ]
    mine = data.fields(minor, cls=CLS)
    for name in dated_fields():
        # the field's own default: the case asks whether the release takes the key, not the value
        f = mine.get(name) or data.field_history(name)[-1]
        out.append(Case(f"dated/{name}", "yaml", "removed", {name: f.default}))
    for name, f in sorted(mine.items()):
        if f.base_type != "enum" or not f.choices:
            continue
        out.append(Case(f"bad-choice/{name}", "kwargs", "bad-choice", {name: BAD_CHOICE}))
        for choice in f.choices:
            if isinstance(choice, str):
                out.append(Case(f"choice/{name}={choice}", "kwargs", "choice", {name: choice}))
    return out


def corpus_cases() -> list[Case]:
    """Each corpus arguments file, written back as the release's parser reads it; ``use_cpu`` is
    added where the file does not set it, so that bf16/fp16 are judged as on a CPU-only machine
    (the release refuses bf16 on a machine that has neither a GPU nor ``use_cpu``)."""
    out = []
    for name, path in corpus_args():
        kind = "json" if path.suffix == ".json" else "yaml"
        args = read_args(path)
        out.append(Case(f"corpus/{name}", kind, "corpus", {"use_cpu": True, **args}, output_dir=False))
    return out


def verdict(case: Case, minor: str) -> Verdict:
    """What the releases data says of the case in that release."""
    fields = data.trl_fields(case.cls, minor) if case.trl else data.fields(minor, cls=case.cls)
    args = dict(case.args)
    if case.output_dir:
        args.setdefault("output_dir", "out")
    unknown = sorted(k for k in args if k not in fields)
    missing = sorted(n for n, f in fields.items() if f.required and n not in args)
    bad = sorted(
        k
        for k, v in args.items()
        if k in fields
        and fields[k].base_type == "enum"
        and isinstance(v, str)
        and fields[k].choices
        and v not in fields[k].choices
    )
    wrong = sorted(k for k, v in args.items() if k in fields and not _fits(fields[k], v))
    return Verdict(unknown, missing, bad, wrong)


def _fits(f: data.Field, value: Any) -> bool:
    if value is None:
        return f.optional
    kind = f.base_type
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "str":
        return isinstance(value, str)
    if kind == "list":
        return isinstance(value, (list, str))
    if kind == "dict":
        return isinstance(value, (dict, str))
    return True


def judge(case: Case, v: Verdict, got: dict[str, Any]) -> str:
    """Where the release and the data disagree, why; empty when they agree. The release builds the
    dataclass before it refuses extra keys, so a missing required field or a refused value is what
    it raises first."""
    if v.missing:
        if got["ok"] or got["error"] != "TypeError" or not all(m in got["message"] for m in v.missing):
            return f"the data says {v.missing} are required; the release: {_said(got)}"
        return ""
    if v.bad_choice:
        return ""  # refused at construction or only later (Trainer init): the table says which
    if got["unused"] is not None:
        # a keyword call names the first unexpected argument only
        same = set(got["unused"]) <= set(v.unknown) if case.kind == "kwargs" else got["unused"] == v.unknown
        return "" if same else f"unknown {v.unknown}; the release refused {got['unused']}"
    if not got["ok"] and any(m in got["message"] for m in WORLD_SIZE_REFUSALS):
        return ""
    if v.unknown:
        return f"the data says {v.unknown} are unknown; the release: {_said(got)}"
    if got["ok"] or case.group == "wrong-type":
        return ""
    if case.group == "choice" and "is not a valid" not in got["message"]:
        return ""  # a documented value the release refuses for another reason (a missing package)
    return f"the data finds nothing wrong; the release: {_said(got)}"


def _said(got: dict[str, Any]) -> str:
    return "accepted it" if got["ok"] else f"{got['error']}: {got['message'][:160]}"


def run_release(minor: str, corpus: list[Case]) -> ReleaseResult:
    start = time.monotonic()
    cases = corpus + generated_cases(minor)
    answer = run_worker("construct", tr.sys_path(tr.path_of(minor)), json.dumps([c.request() for c in cases]))
    result = ReleaseResult(minor, answer.get("version", tr.RELEASES[minor]), answer.get("error", ""))
    for case in cases if not result.error else []:
        got = answer["results"][case.id]
        v = verdict(case, minor)
        result.outcomes.append(Outcome(case, v, got, judge(case, v, got)))
    result.seconds = time.monotonic() - start
    return result


def run_matrix(minors: list[str], jobs: int = 2) -> list[ReleaseResult]:
    corpus = corpus_cases()
    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(lambda m: run_release(m, corpus), minors))


def trl_cases(minor: str) -> list[Case]:
    """Per TRL config class of that release: an unknown field and its own fields (each with its
    default); each corpus arguments file whose path names a trainer, with that trainer's config."""
    out = []
    for cls in data.trl_classes(minor):
        # use_cpu: TRL's configs default to bf16, which a release refuses on a machine without a GPU
        out.append(
            Case(f"trl/{cls}/unknown", "yaml", "unknown", {"use_cpu": True, "no_such_field": 1}, cls=cls, trl=True)
        )
        base = data.fields(data.trl_transformers_version(), cls=CLS)
        own = {n: f for n, f in data.trl_fields(cls, minor).items() if n not in base and not f.required}
        if own:
            out.append(
                Case(
                    f"trl/{cls}/own",
                    "yaml",
                    "removed",
                    {"use_cpu": True, **{n: f.default for n, f in own.items()}},
                    cls=cls,
                    trl=True,
                )
            )
    for case in corpus_cases():
        cls = trl_class(case.id)
        if cls in data.trl_classes(minor):
            out.append(
                Case(f"trl/{cls}/{case.id}", case.kind, "corpus", case.args, cls=cls, output_dir=False, trl=True)
            )
    return out


def run_trl_release(minor: str) -> ReleaseResult:
    start = time.monotonic()
    cases = trl_cases(minor)
    dirs = [str(tr.TRL_CACHE.path_of(minor)), *tr.sys_path(tr.path_of(data.minor_of(data.trl_transformers_version())))]
    answer = run_worker("construct", dirs, json.dumps([c.request() for c in cases]))
    result = ReleaseResult(minor, tr.TRL_RELEASES[minor], answer.get("error", ""))
    for case in cases if not result.error else []:
        got = answer["results"][case.id]
        v = verdict(case, minor)
        result.outcomes.append(Outcome(case, v, got, judge(case, v, got)))
    result.seconds = time.monotonic() - start
    return result


def run_trl_matrix(minors: list[str], jobs: int = 2) -> list[ReleaseResult]:
    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(run_trl_release, minors))


def _raised(r: ReleaseResult, group: str) -> str:
    mine = [o for o in r.outcomes if o.case.group == group]
    return f"{sum(1 for o in mine if not o.got['ok'])}/{len(mine)}"


def _wrong_type(r: ReleaseResult) -> str:
    out = []
    for o in r.outcomes:
        if o.case.group == "wrong-type":
            key, value = next(iter(o.case.args.items()))
            out.append(f"`{key}: {value}` {'kept' if o.got['ok'] else o.got['error']}")
    return "; ".join(out)


def trl_table(results: list[ReleaseResult]) -> list[str]:
    lines = [
        "",
        f"TRL releases (with transformers {data.trl_transformers_version()}): each config class with an unknown",
        "field and with its own fields, and the corpus files whose path names a trainer (sft, dpo, grpo, orpo, kto,",
        "reward) read with that trainer's config.",
        "",
        "| TRL release | config classes | cases agree | s |",
        "|---|---|---|---|",
    ]
    for r in results:
        if r.error:
            lines.append(f"| {r.minor} ({r.version}) | does not import: {r.error.splitlines()[0][:120]} | | |")
            continue
        agree = sum(1 for o in r.outcomes if not o.problem)
        lines.append(
            f"| {r.minor} ({r.version}) | {', '.join(data.trl_classes(r.minor))} | {agree}/{len(r.outcomes)} "
            f"| {r.seconds:.1f} |"
        )
    return lines


def table(
    results: list[ReleaseResult],
    seconds: float,
    jobs: int,
    trl: list[ReleaseResult] = (),
    runs: list[Any] = (),
) -> str:
    lines = [
        "# transformers releases against the releases data",
        "",
        "Generated by `make versions` (`python tests/oracle/transformers_matrix.py --write bench/TRANSFORMERS.md`);",
        "do not edit. Each release runs its own `TrainingArguments` / `HfArgumentParser` in its own process",
        "(installed side by side under the venv, torch and accelerate from the venv) over the corpus arguments",
        f"files ({len(corpus_args())}, `../shared/corpus/trainer`, "
        "extra keys refused) and generated cases; a case agrees when",
        "the release raises exactly what accelconf's releases data predicts for that release (unknown and removed",
        "fields, missing required fields), or accepts what it accepts.",
        "",
        "| release | corpus agree | generated agree | bad enum value raises at construction | wrong types | s |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        if r.error:
            lines.append(f"| {r.minor} ({r.version}) | does not import: {r.error.splitlines()[0][:120]} | | | | |")
            continue
        c, g = r.count("corpus"), [r.count(x) for x in ("removed", "unknown", "wrong-type", "choice", "bad-choice")]
        gen = (sum(a for a, _ in g), sum(b for _, b in g))
        lines.append(
            f"| {r.minor} ({r.version}) | {c[0]}/{c[1]} | {gen[0]}/{gen[1]} | {_raised(r, 'bad-choice')} "
            f"| {_wrong_type(r)} | {r.seconds:.1f} |"
        )
    unavailable = data.unavailable()
    if unavailable:
        lines += ["", "Releases the releases data lists as not importable here:", ""]
        lines += [
            f"- {m}: {why.splitlines()[0]}" for m, why in sorted(unavailable.items(), key=lambda kv: data._key(kv[0]))
        ]
    lines += trl_table(list(trl)) if trl else []
    bad = [f"- {r.minor} `{o.case.id}`: {o.problem}" for r in [*results, *trl] for o in r.outcomes if o.problem]
    lines += ["", f"Disagreements: {len(bad)}", "", *bad[:50]]
    if runs:
        from tests.oracle.transformers_runs_matrix import table as runs_table

        lines += runs_table(list(runs))
    lines += ["", f"{len(results)} releases, {jobs} at a time, in {seconds:.0f} s."]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", metavar="FILE", help="write the table there (default: print it)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("minors", nargs="*", help="only these releases (default: every one the data knows)")
    args = ap.parse_args()
    minors = args.minors or list(data.RELEASES)
    for m in minors:
        tr.CACHE.ensure(m)
    trl_minors = [] if args.minors else list(data.TRL_RELEASES)
    for m in trl_minors:
        tr.TRL_CACHE.ensure(m)
    start = time.monotonic()
    results = run_matrix(minors, args.jobs)
    trl = run_trl_matrix(trl_minors, args.jobs)
    from tests.oracle.transformers_runs_matrix import run_matrix as run_runs_matrix

    runs = run_runs_matrix(tuple(minors), args.jobs)
    text = table(results, time.monotonic() - start, args.jobs, trl, list(runs))
    if args.write:
        Path(args.write).write_text(text, encoding="utf-8")
        print(f"wrote {args.write}")
    else:
        print(text, end="")


if __name__ == "__main__":
    main()
