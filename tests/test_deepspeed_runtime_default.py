"""Which program reads a DeepSpeed JSON when nothing says so, and what follows from it.

With no ``runtime`` given, a file with an ``"auto"`` value is read by a Hugging Face runtime (the
Trainer fills ``"auto"``), and a file without one by DeepSpeed itself. The two differ on a
duplicate key: DeepSpeed's loader refuses it (an error), ``json.load`` keeps the last (a warning).
Each default is checked through the API and the CLI, next to an explicit ``runtime`` that must win.
"""

from __future__ import annotations

import json

import pytest

from accelconf.api import validate_any
from accelconf.text.document import load_text

PLAIN = '{\n  "train_micro_batch_size_per_gpu": 2,\n  "train_micro_batch_size_per_gpu": 2\n}\n'
AUTO = '{\n  "train_micro_batch_size_per_gpu": "auto",\n  "gradient_clipping": 1.0,\n  "gradient_clipping": 1.0\n}\n'


def _severity(text: str, **kw: str) -> str:
    found = [f for f in validate_any(load_text(text, "ds_config.json"), **kw) if f.rule == "ds-duplicate-key"]
    assert len(found) == 1, found
    return found[0].severity


@pytest.mark.parametrize(
    "text, runtime, severity",
    [
        (PLAIN, None, "error"),  # no "auto": DeepSpeed reads it
        (AUTO, None, "warning"),  # "auto": the Trainer reads it
        (PLAIN, "transformers", "warning"),
        (AUTO, "deepspeed", "error"),
        (PLAIN, "accelerate", "warning"),
    ],
)
def test_duplicate_key_severity_follows_the_runtime_read_or_given(
    text: str, runtime: str | None, severity: str
) -> None:
    kw = {"runtime": runtime} if runtime else {}
    assert _severity(text, **kw) == severity


@pytest.mark.parametrize("text, severity", [(PLAIN, "error"), (AUTO, "warning")])
def test_cli_infers_the_same_runtime(cli, tmp_path, text: str, severity: str) -> None:
    path = tmp_path / "ds_config.json"
    path.write_text(text)
    r = cli("validate", "--format", "json", str(path))
    found = [f for f in json.loads(r.out)["files"][0]["findings"] if f["rule"] == "ds-duplicate-key"]
    assert [f["severity"] for f in found] == [severity]
