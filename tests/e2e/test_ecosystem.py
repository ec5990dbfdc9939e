"""The ecosystem: pre-commit hooks run by the real pre-commit, the schema catalog, and
yaml-language-server 1.25.0 given accelconf's schema over the corpus."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from accelconf.accelerate.schema import catalog
from tests.conftest import corpus_files

ROOT = Path(__file__).resolve().parents[2]


def test_catalog_entries_are_schemastore_shaped():
    cat = catalog()
    names = [s["name"] for s in cat["schemas"]]
    assert names == ["Hugging Face Accelerate config", "DeepSpeed config"]
    acc = cat["schemas"][0]
    assert (
        acc["url"].endswith("/accelerate-config.schema.json") and "1.4" in acc["versions"] and "0.20" in acc["versions"]
    )
    for pattern in acc["fileMatch"]:
        assert pattern not in ("*.yaml", "**/*.yaml", "*.json")  # narrow patterns only
    # the urls are the planned public address, marked as not live; each names a committed file
    assert "NOT LIVE YET" in cat["$comment"]
    for version, url in acc["versions"].items():
        rel = url.split("/schemas/", 1)[1]
        local = json.loads((ROOT / "schemas" / rel).read_text())
        assert local["$id"] == f"urn:accelconf:schema:accelerate-config:{version}", version


def test_no_committed_file_points_at_the_planned_address():
    """accelconf.dev is not live: only the catalog (marked) and the one constant defining it may name it."""
    allowed = {"schemas/catalog.json", "accelconf/catalogue/__init__.py", "tests/e2e/test_ecosystem.py"}
    offenders = []
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT).as_posix()
        if (
            not path.is_file()
            or rel in allowed
            or rel.startswith((".git", ".venv", "build/", "bench/.tmp/"))
            or "node_modules" in rel
            or path.suffix not in (".py", ".json", ".yaml", ".yml", ".md", ".lua", ".js", ".toml")
        ):
            continue
        if "accelconf.dev" in path.read_text(encoding="utf-8", errors="replace"):
            offenders.append(rel)
    assert not offenders, offenders


# -- pre-commit ---------------------------------------------------------------------------------


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def _index_unreachable(tmp: Path) -> str | None:
    """Why pip cannot fetch from the package index (None when it can). `pre-commit try-repo` builds
    the hook's environment with pip: setuptools (the build backend) and the runtime dependencies."""
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--quiet",
            "--timeout",
            "10",
            "--retries",
            "0",
            "--dest",
            str(tmp),
            "setuptools>=77",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if r.returncode == 0:
        return None
    last = (r.stderr.strip().splitlines() or ["pip download failed"])[-1]
    return last[:200]


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    """A snapshot of this working tree as a git repository that `pre-commit try-repo` can clone."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    pre_commit = Path(sys.executable).with_name("pre-commit")
    if not pre_commit.exists():
        pytest.skip("pre-commit is not installed (test extras)")
    why = _index_unreachable(tmp_path_factory.mktemp("pipcheck"))
    if why is not None:
        if _in_ci():  # `make test` in CI has the index: a failure there is a real failure
            pytest.fail(f"package index unreachable in CI: {why}")
        pytest.skip(f"package index unreachable, pre-commit cannot build the hook environment: {why}")
    snap = tmp_path_factory.mktemp("hookrepo")
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy(ROOT / name, snap / name)
    for folder in ("accelconf", "lsp"):
        shutil.copytree(ROOT / folder, snap / folder, ignore=shutil.ignore_patterns("__pycache__"))
    _git(snap, "init", "-q")
    _git(snap, "add", "-A")
    _git(snap, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "snapshot")
    return pre_commit, snap


def _try(pre_commit: Path, snap: Path, work: Path, hook: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(snap.parent / "pre-commit-home"), "NO_COLOR": "1"}
    return subprocess.run(
        [str(pre_commit), "try-repo", str(snap), hook, "--all-files", "--color", "never"],
        cwd=work,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


@pytest.fixture
def work(tmp_path):
    _git(tmp_path, "init", "-q")
    return tmp_path


def test_pre_commit_validate_hook(hook_repo, work):
    pre_commit, snap = hook_repo
    good = work / "accelerate_config.yaml"
    good.write_text("distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: bf16\n")
    (work / "unrelated.yaml").write_text("mixed_precision: no\n")  # not matched by the narrow pattern
    _git(work, "add", "-A")
    r = _try(pre_commit, snap, work, "accelconf-validate")
    assert r.returncode == 0, r.stdout + r.stderr
    good.write_text("distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: no\n")
    _git(work, "add", "-A")
    r = _try(pre_commit, snap, work, "accelconf-validate")
    assert r.returncode == 1
    assert "accelerate_config.yaml:3:18: error:" in r.stdout


def test_pre_commit_fmt_hook_fixes_in_place(hook_repo, work):
    pre_commit, snap = hook_repo
    cfg = work / "accelerate_config.yaml"
    cfg.write_text("# mine\ndistributed_type: multi_gpu\nnum_processes: 2\n")
    _git(work, "add", "-A")
    r = _try(pre_commit, snap, work, "accelconf-fmt")
    assert r.returncode == 1 and "files were modified by this hook" in r.stdout
    assert cfg.read_text() == "# mine\ndistributed_type: MULTI_GPU\nnum_processes: 2\n"
    _git(work, "add", "-A")
    assert _try(pre_commit, snap, work, "accelconf-fmt").returncode == 0


def _readme_block(after: str, lang: str, page: str) -> str:
    """The first ```lang block after the heading ``after`` of a documentation page."""
    readme = (ROOT / "docs" / page).read_text(encoding="utf-8")
    start = readme.index(after)
    begin = readme.index(f"```{lang}\n", start) + len(lang) + 4
    return readme[begin : readme.index("```", begin)]


def test_ci_page_local_hooks_work_as_written(tmp_path):
    """The CI page's `repo: local` snippet, copied as is: same entry/files as .pre-commit-hooks.yaml,
    and the real pre-commit runs it (language: system needs no package index)."""
    import yaml

    pre_commit = Path(sys.executable).with_name("pre-commit")
    if shutil.which("git") is None or not pre_commit.exists():
        pytest.skip("git or pre-commit (test extras) is not installed")
    snippet = _readme_block("# pre-commit, CI and schema catalogs", "yaml", "ci.md")
    config = yaml.safe_load(snippet)
    published = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    hooks = config["repos"][0]["hooks"]
    assert config["repos"][0]["repo"] == "local" and {h["id"] for h in hooks} == set(published)
    for hook in hooks:
        for key in ("entry", "files", "types", "types_or", "name"):
            assert hook.get(key) == published[hook["id"]].get(key), (hook["id"], key)
    work = tmp_path / "work"
    work.mkdir()
    _git(work, "init", "-q")
    (work / ".pre-commit-config.yaml").write_text(snippet)
    cfg = work / "accelerate_config.yaml"
    cfg.write_text("distributed_type: multi_gpu\nnum_processes: 2\nmixed_precision: no\n")
    _git(work, "add", "-A")
    # `accelconf` on PATH is the one of this interpreter (what "installed in the environment" means)
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "home"),
        "NO_COLOR": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    r = subprocess.run(
        [str(pre_commit), "run", "--all-files", "--color", "never"],
        cwd=work,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    assert "accelerate_config.yaml:3:18: error:" in r.stdout, r.stdout
    assert "distributed_type: MULTI_GPU" in cfg.read_text()  # fmt fixed the case in place


# -- yaml-language-server ------------------------------------------------------------------------

YLS_VERSION = "1.25.0"


@pytest.fixture(scope="module")
def yls(tmp_path_factory):
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node/npm are not installed: yaml-language-server cannot run here")
    cache = Path(os.environ.get("ACCELCONF_YLS_DIR", ROOT / "bench" / ".tmp" / "yls"))
    server = cache / "node_modules" / "yaml-language-server" / "bin" / "yaml-language-server"
    if not server.exists():
        cache.mkdir(parents=True, exist_ok=True)
        r = subprocess.run(
            [
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(cache),
                f"yaml-language-server@{YLS_VERSION}",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if r.returncode != 0 or not server.exists():
            pytest.skip(f"npm could not install yaml-language-server@{YLS_VERSION}: {r.stderr[-300:]}")
    return server


def test_yaml_language_server_finds_no_false_errors_in_the_corpus(yls, tmp_path):
    from accelconf.accelerate.validate import validate_document
    from accelconf.text.document import load_file
    from tests.e2e.ylsp import diagnostics_for

    files = [p for p in corpus_files("accelerate") if p.suffix in (".yaml", ".yml")]
    if not files:
        pytest.skip("shared corpus not found")
    bad = tmp_path / "bad_accelerate_config.yaml"
    bad.write_text("distributed_type: MULTI_GPU\nnum_gpus: 2\n")
    schema = ROOT / "schemas" / "accelerate-config.schema.json"
    results = diagnostics_for(yls, schema, files + [bad])
    assert len(results) == len(files) + 1
    # the schema really is applied: the known-bad file gets a diagnostic on its unknown key
    assert any("num_gpus" in d["message"] for d in results[bad]), results[bad]
    for path in files:
        schema_errors = [d for d in results[path] if d.get("severity", 1) == 1]
        if schema_errors:
            ours = [f for f in validate_document(load_file(path)) if f.severity in ("error", "warning")]
            assert ours, (
                f"{path.name}: yaml-language-server says {schema_errors[0]['message']!r}; accelconf finds nothing"
            )


def test_editors_page_modeline_works_as_written(yls, tmp_path):
    """The editors page's modeline pair: the schema written by the command shown, a relative $schema path."""
    from tests.e2e.ylsp import diagnostics_for

    command = _readme_block("## Without the server: a schema modeline", "sh", "editors.md").strip()
    assert command == "accelconf schema accelerate > accelerate-config.schema.json"
    r = subprocess.run(
        [sys.executable, "-m", "accelconf", "schema", "accelerate"], capture_output=True, text=True, check=True
    )
    (tmp_path / "accelerate-config.schema.json").write_text(r.stdout)
    modeline = _readme_block("## Without the server: a schema modeline", "yaml", "editors.md").splitlines()[0]
    config = tmp_path / "train.yaml"
    config.write_text(modeline + "\ndistributed_type: MULTI_GPU\nnum_gpus: 2\n")
    permissive = tmp_path / "anything.json"
    permissive.write_text("{}")  # the settings' schema accepts anything: only the modeline can complain
    results = diagnostics_for(yls, permissive, [config])
    assert any("num_gpus" in d["message"] for d in results[config]), results


# -- the SchemaStore catalog ---------------------------------------------------------------------


def _corpus_paths(kind: str) -> list[tuple[Path, str]]:
    """(file, its path in the repository it came from) for the corpus files of ``kind``."""
    manifest = ROOT.parent / "shared" / "corpus" / "MANIFEST.tsv"
    if not manifest.is_file():
        pytest.skip(f"the shared corpus manifest is not at {manifest}")
    with manifest.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    return [(manifest.parent / r["file"], r["path"]) for r in rows if r["file"].startswith(kind + "/")]


def _glob_regex(glob: str) -> re.Pattern[str]:
    """A fileMatch glob as SchemaStore documents them: ``**/`` is any number of folders, ``*`` no slash."""
    out, i = "", 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif glob[i] == "*":
            out, i = out + "[^/]*", i + 1
        else:
            out, i = out + re.escape(glob[i]), i + 1
    return re.compile(out + "$")


def _matched(entry: dict, path: str) -> bool:
    return any(_glob_regex(g).match(path) for g in entry["fileMatch"])


def test_catalog_globs_match_real_config_paths_and_no_trainer_file():
    """The globs, on the paths the corpus files have in their own repositories: at least half of each
    kind is matched (the rest are named only `fsdp.yaml` and the like), and no Trainer-path file that is
    not itself a DeepSpeed JSON."""
    accel, ds = catalog()["schemas"]
    for entry, kind, least in ((accel, "accelerate", 46), (ds, "deepspeed", 49)):
        paths = [p for _, p in _corpus_paths(kind)]
        hits = [p for p in paths if _matched(entry, p)]
        assert len(hits) >= least, (kind, len(hits), sorted(set(paths) - set(hits))[:10])
    trainer = ROOT.parent / "shared" / "corpus" / "trainer" / "MANIFEST.tsv"
    with trainer.open(encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh, delimiter="\t") if r["kind"] != "refs"]
    for entry in (accel, ds):
        wrong = [r["path"] for r in rows if _matched(entry, r["path"])]
        assert not wrong, (entry["name"], wrong)


def test_yaml_language_server_applies_the_catalog_by_file_name(yls, tmp_path):
    """The catalog served over HTTP as SchemaStore serves its own: yaml-language-server, told only the
    catalog's address, puts the accelerate schema on a config under its real repository path (an unknown
    key is reported) and no schema on a YAML the globs do not name (a LLaMA-Factory training file)."""
    import functools
    import http.server
    import threading

    from tests.e2e.ylsp import diagnostics_for

    root = tmp_path / "site"
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    )
    base = f"http://127.0.0.1:{server.server_address[1]}"
    shutil.copytree(ROOT / "schemas", root)
    from accelconf.accelerate.schema import FUTURE_BASE_URL

    (root / "catalog.json").write_text((ROOT / "schemas" / "catalog.json").read_text().replace(FUTURE_BASE_URL, base))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        work = tmp_path / "repo"
        src, rel = next((f, p) for f, p in _corpus_paths("accelerate") if p.endswith("accelerate_configs/fsdp.yaml"))
        config = work / rel
        config.parent.mkdir(parents=True)
        config.write_text(src.read_text(encoding="utf-8") + "num_gpus: 2\n", encoding="utf-8")
        other = work / "examples" / "train_lora" / "llama3_lora_sft.yaml"
        other.parent.mkdir(parents=True)
        other.write_text("model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\nstage: sft\nnum_gpus: 2\n")
        results = diagnostics_for(yls, None, [config, other], catalog_url=f"{base}/catalog.json")
    finally:
        server.shutdown()
    assert any("num_gpus" in d["message"] for d in results[config]), results[config]
    assert results[other] == [], results[other]
