"""Every finding of ``launch_env`` (what `to-env`, `to-cli` and `explain` print beside the values),
as a reviewed record (so a mutation of ``launch.py`` shows).

The launch values themselves are compared with accelerate's own launcher (``test_oracle_launch.py``,
the release matrix). The findings are accelconf's: which key is ignored, lost, unused, not read by the
release, which value depends on the machine that launches, and the refusal message. They are pinned
here, rule, severity, key, position and message, over:

- the hand-written cases of ``tests/data/launch`` (any input format) at three releases, command
  lines beside a file (``FLAGS``) and overrides that are not command-line flags (``OVERRIDES``);
- every launcher-boundary case (``tests/oracle/boundaries.py``) at the releases it was recorded at;
- every real accelerate config of the shared corpus at two releases.

The records live in ``tests/data/launch/findings.golden``. After a deliberate change, rewrite them with
``ACCELCONF_UPDATE_EXPECTED=1`` and read the diff before committing it: it is what users will see
change. (CI refuses to run with the variable set: ``test_packaging.py``.)
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from accelconf import formats
from accelconf.accelerate.launch import LaunchError, launch_env
from accelconf.errors import InputError
from tests import golden
from tests.conftest import CORPUS, corpus_files
from tests.oracle.boundaries import RECORDS

DATA = Path(__file__).parents[2] / "data" / "launch"
GOLDEN = DATA / "findings.golden"
CASE_RELEASES = ("0.21", "0.33", "1.15")
CORPUS_RELEASES = ("0.33", "1.15")


# overrides that are not command-line flags (the API's cli_overrides): (title, config, overrides, release)
OVERRIDES = [
    (
        "overrides without a flag, or newer than the release",
        "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: fp8\n",
        "tpu_name: x\nfp8_config:\n  amax_history_length: 16\n  backend: TE\n",
        "0.30",
    ),
]


# command lines beside a file: (title, config, flags, release)
FLAGS = [
    (
        "--same_network on two machines",
        "distributed_type: MULTI_GPU\nnum_processes: 16\nnum_machines: 2\nmachine_rank: 1\n"
        "main_process_ip: 10.0.0.1\nmain_process_port: 29400\n",
        ["--same_network"],
        "1.15",
    ),
]


def _inputs() -> list[tuple[str, str, list[str], str | None, str]]:
    """(title, config text, flags, overrides, release) for every input."""
    rows: list[tuple[str, str, list[str], str | None, str]] = []
    for path in sorted(p for p in DATA.iterdir() if p.suffix != ".golden"):
        rows += [(f"data/launch/{path.name}", path.read_text(encoding="utf-8"), [], None, v) for v in CASE_RELEASES]
    rows += [(f"overrides: {title}", text, [], over, v) for title, text, over, v in OVERRIDES]
    rows += [(f"flags: {title}", text, flags, None, v) for title, text, flags, v in FLAGS]
    for r in json.loads(RECORDS.read_text(encoding="utf-8")):
        title = f"boundary {r['change']}: {r['config']!r} {shlex.join(r['flags'])}".rstrip()
        rows.append((title, r["config"], r["flags"], None, r["version"]))
    for path in corpus_files("accelerate"):
        text = path.read_bytes().decode("utf-8", errors="replace")
        rows += [(f"corpus/accelerate/{path.name}", text, [], None, v) for v in CORPUS_RELEASES]
    return rows


def _section(title: str, text: str, flags: list[str], overrides: str | None, version: str) -> list[str]:
    """The records of one launch: each finding, or the refusal (the machine: no physical core count,
    the working directory /cwd)."""
    lines = [f"== {title} @ {version}"]
    try:
        cfg = formats.read(text, None, title.rsplit("/", 1)[-1] if title.startswith("data/") else "cfg.yaml", version)
        cli = formats.read(shlex.join(flags), "cli", "<flags>", version) if flags else None
        if overrides is not None:
            cli = formats.read(overrides, "yaml", "overrides.yaml", version)
        result = launch_env(cfg, version=version, cli_overrides=cli, cwd="/cwd")
    except (LaunchError, InputError) as exc:
        return lines + [f"refused: {exc}"]
    lines.append(f"mode {result.mode}")
    for f in result.findings:
        lines.append(f"{f.rule} {f.severity} {f.line}:{f.column} key={f.key!r}")
        lines.append(f"  message: {f.message}")
    return lines


if golden.update_requested():  # rewrite the records once, before the tests read them
    golden.write(GOLDEN, (_section(*row) for row in _inputs()))

TITLES = sorted({row[0] for row in _inputs()})


@pytest.mark.parametrize("title", TITLES)
def test_every_launch_finding_matches_the_reviewed_records(title: str) -> None:
    got = [ln for row in _inputs() if row[0] == title for ln in _section(*row)]
    golden.check(GOLDEN, title, got, "launch findings")


def test_the_launch_records_hold_every_input_and_every_rule() -> None:
    import re

    if not corpus_files("accelerate"):
        pytest.skip(f"the shared corpus is not at {CORPUS / 'accelerate'}: the records include it")
    assert sorted(golden.sections(GOLDEN)) == TITLES
    source = (Path(__file__).parents[3] / "accelconf" / "accelerate" / "launch.py").read_text(encoding="utf-8")
    rules = set(re.findall(r'(?:_finding|Finding)\("((?:launch|convert)\.[a-z-]+)"', source))
    recorded = {ln.split(" ", 1)[0] for ln in GOLDEN.read_text(encoding="utf-8").splitlines() if ln[:1].isalpha()}
    assert rules and rules - recorded == set(), "a launch finding no record shows"
