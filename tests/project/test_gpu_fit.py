"""bench/gpu_fit.py without a GPU: the matrix, the estimator's figures and FIT.md's format.

The measured columns need CUDA; here the script's ``--device cpu --dry-run`` path runs, as it would
be started unattended, and what it writes is read back."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "gpu_fit.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpu_fit", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gpu_fit"] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def test_the_matrix_covers_two_families_shapes_checkpointing_and_lora() -> None:
    gf = _load()
    cases = gf.matrix()
    families = {gf.config_of(c)["model_type"] for c in cases}
    assert {"llama", "qwen2"} <= families
    assert {c.checkpointing for c in cases} == {False, True}
    assert any(c.lora_rank for c in cases) and len({(c.seq_len, c.micro_batch) for c in cases}) >= 3
    cut = next(c for c in cases if c.layers)
    assert gf.config_of(cut)["num_hidden_layers"] == cut.layers
    assert gf.config_of(cut)["hidden_size"] == 4096  # the real width


def test_dry_run_on_cpu_writes_the_table_with_the_estimates(tmp_path: Path) -> None:
    gf = _load()
    out = tmp_path / "FIT.md"
    assert gf.main(["--device", "cpu", "--dry-run", "--out", str(out)]) == 0
    text = out.read_text()
    assert "only meaningful on CUDA" in text and "verified on CPU only" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and "dry run" in line]
    assert len(rows) == len(gf.matrix())
    est = {r.split("|")[1].strip(): float(r.split("|")[2]) for r in rows}
    assert all(v > 0 for v in est.values())
    plain, ckpt = est["Llama-3.2-1B s4096 b1"], est["Llama-3.2-1B s4096 b1 +ckpt"]
    assert ckpt < plain  # the estimator ran with the case's checkpointing
    assert est["Qwen2.5-7B (4 layers) s2048 b1 LoRA r16"] < est["Qwen2.5-7B (4 layers) s2048 b2"]
    assert "no step ran (dry run)" in text and "said to fit but ran out of memory: none" in text


def test_the_summary_gives_median_worst_and_the_fits_that_ran_out_of_memory() -> None:
    gf = _load()
    cases = gf.matrix()[:3]
    gib = gf.GiB
    results = [
        gf.Result(cases[0], 10 * gib, True, 10.5 * gib, 11 * gib),
        gf.Result(cases[1], 10 * gib, True, 8 * gib, 9 * gib),
        gf.Result(cases[2], 30 * gib, True, error="out of memory: CUDA out of memory"),
    ]
    lines = gf.summary(results)
    assert re.match(r"median estimate / allocated: 1\.\d{3}; worst: 1\.250 \(2 runs\)", lines[0])
    assert lines[1] == f"said to fit but ran out of memory: {cases[2].name()}"
    table = gf.table(results)
    assert table[0].startswith("| config | estimate GiB | max allocated GiB")
    assert "| 0.952 |" in table[2] and "out of memory" in table[4]
