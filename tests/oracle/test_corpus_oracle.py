"""The real-world corpus against accelerate's launcher: validation agrees with it, and fmt never changes what it
launches."""

from __future__ import annotations

from accelconf.accelerate.fmt import format_document
from accelconf.accelerate.validate import validate_document
from accelconf.text.document import load_file
from tests.conftest import need_corpus
from tests.oracle.run import oracle


def test_validation_agrees_with_accelerates_launcher():
    files = need_corpus("accelerate")
    verdicts = oracle(files)
    disagreements = []
    for path in files:
        errors = [f for f in validate_document(load_file(path)) if f.severity == "error"]
        ok = verdicts[str(path)]["ok"]
        if ok and errors:
            disagreements.append(f"{path.name}: accelerate launches it, accelconf says {errors[0].message}")
        if not ok and not errors:
            disagreements.append(
                f"{path.name}: accelerate fails ({verdicts[str(path)]['error'][:120]}), accelconf reports no error"
            )
    assert not disagreements, "\n".join(disagreements)
    assert sum(1 for v in verdicts.values() if not v["ok"]) >= 1  # the corpus has rejected files: the test can fail


def test_fmt_never_changes_what_accelerate_launches(tmp_path):
    files = need_corpus("accelerate")
    pairs = []
    for path in files:
        doc = load_file(path)
        res = format_document(doc)
        if res.changed:
            out = tmp_path / path.name
            out.write_text(res.text, encoding="utf-8")
            pairs.append((path, out))
    assert pairs, "fmt changes nothing in the corpus: the property is vacuous"
    verdicts = oracle([p for pair in pairs for p in pair])
    for before, after in pairs:
        a, b = verdicts[str(before)], verdicts[str(after)]
        if not a["ok"]:
            continue  # fmt may repair a config accelerate rejects
        assert b["ok"], f"{before.name}: fmt broke it: {b.get('error')}"
        assert _meaning(a["env"]) == _meaning(b["env"]), before.name


def _meaning(env: dict[str, str]) -> dict[str, object]:
    """Env values as the plugins read them: FSDP_SHARDING_STRATEGY=1 is FULL_SHARD."""
    from accelconf.accelerate import registry
    from accelconf.accelerate.model import canonical

    out: dict[str, object] = {}
    for k, v in env.items():
        s = registry.by_env(k)
        out[k] = canonical(s, v) if s is not None else v
    return out
