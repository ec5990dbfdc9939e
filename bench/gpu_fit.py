"""One training step per config on a GPU, its measured peak against accelconf's estimate.

Not a test: run it by hand on a machine with one CUDA GPU, ``python bench/gpu_fit.py`` (offline:
the models are built from the bundled ``config.json`` shapes of ``accelconf/data/models.json`` with
random weights, some at their real widths with fewer layers; nothing is downloaded). For each config
of the matrix (model, sequence length, micro batch, gradient checkpointing on/off, LoRA) it runs one
step as accelerate runs one process with ``mixed_precision: bf16`` (fp32 weights, bf16 autocast,
AdamW, SDPA), records ``torch.cuda.max_memory_allocated()`` and ``max_memory_reserved()``, and
compares them with :func:`accelconf.environment.memory.estimate` for the same config (the CUDA
context and NCCL terms left out: the allocator does not see them). It writes ``bench/FIT.md``: the
table, the median and worst ratio, and any config the estimate says fits that ran out of memory.
A time guard (``--budget``, seconds) stops the matrix early and says so in the file.

``--device cpu --dry-run`` builds the matrix, calls the estimator and writes the table without
running a step (the measured column reads "dry run"): ``tests/project/test_gpu_fit.py`` runs it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from accelconf.environment import memory, modelsize  # noqa: E402  (the repository first on sys.path)
from accelconf.environment.lora import Adapter  # noqa: E402

GiB = 1024**3
# (bundled model, layers kept or None for all): two families at real widths with few layers, and
# two small real models whole
MODELS: list[tuple[str, int | None]] = [
    ("meta-llama/Llama-3.1-8B", 4),
    ("Qwen/Qwen2.5-7B", 4),
    ("meta-llama/Llama-3.2-1B", None),
    ("Qwen/Qwen2.5-0.5B", None),
]
SHAPES = [(1024, 1), (2048, 2), (4096, 1)]  # (sequence length, micro batch)


@dataclass(frozen=True)
class Case:
    repo: str
    layers: int | None
    seq_len: int
    micro_batch: int
    checkpointing: bool
    lora_rank: int | None = None

    def name(self) -> str:
        short = self.repo.split("/")[-1] + (f" ({self.layers} layers)" if self.layers else "")
        extra = (" +ckpt" if self.checkpointing else "") + (f" LoRA r{self.lora_rank}" if self.lora_rank else "")
        return f"{short} s{self.seq_len} b{self.micro_batch}{extra}"


@dataclass(frozen=True)
class Result:
    case: Case
    estimate: float  # the allocator's share of the estimate: the peak less the CUDA context and NCCL
    fits: bool  # the estimate's verdict on this GPU
    allocated: float | None = None
    reserved: float | None = None
    error: str = ""

    @property
    def ratio(self) -> float | None:
        return None if not self.allocated else self.estimate / self.allocated


def matrix() -> list[Case]:
    """Every model at every shape, with and without checkpointing; LoRA (rank 16) on the first two."""
    cases = []
    for repo, layers in MODELS:
        for seq, batch in SHAPES:
            for ckpt in (False, True):
                cases.append(Case(repo, layers, seq, batch, ckpt))
    for repo, layers in MODELS[:2]:
        cases.append(Case(repo, layers, 2048, 1, False, 16))
        cases.append(Case(repo, layers, 2048, 1, True, 16))
    return cases


def config_of(case: Case) -> dict[str, Any]:
    """The bundled config.json of the case's model, with its layers cut to ``case.layers``."""
    data = dict(modelsize.known_models()[case.repo]["config"])
    if case.layers:
        data["num_hidden_layers"] = case.layers
    data["use_cache"] = False  # as Trainer and TRL train: no cache in a training forward
    return data


def estimate_of(case: Case, gpu_bytes: float) -> tuple[float, bool]:
    """accelconf's figure for the case on one GPU (one process, bf16) and whether it says it fits."""
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "config.json").write_text(json.dumps(config_of(case)))
        size = modelsize.from_model_dir(tmp)
    strategy = memory.Strategy("single", "bf16", activation_checkpointing=case.checkpointing)
    adapter = Adapter(case.lora_rank) if case.lora_rank else None
    est = memory.estimate(
        strategy, memory.Layout(1), size, seq_len=case.seq_len, micro_batch=case.micro_batch, lora=adapter
    )
    return est.per_gpu - est.cuda_context - est.nccl, memory.verdict(est.per_gpu / gpu_bytes) == "fits"


def run_step(case: Case, device: str) -> tuple[float, float]:
    """One step of the case on ``device``: (max allocated, max reserved) bytes."""
    import torch
    import transformers

    cfg = transformers.AutoConfig.for_model(**config_of(case))
    cfg._attn_implementation = "sdpa"
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    with torch.device(device):
        model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    if case.checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if case.lora_rank:
        import peft

        model = peft.get_peft_model(model, peft.LoraConfig(r=case.lora_rank, target_modules="all-linear"))
    model.train()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
    ids = torch.randint(0, cfg.vocab_size, (case.micro_batch, case.seq_len), device=device)
    try:
        with torch.autocast(device, dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        return float(torch.cuda.max_memory_allocated()), float(torch.cuda.max_memory_reserved())
    finally:
        del model, opt
        torch.cuda.empty_cache()


def measure(case: Case, device: str, gpu_bytes: float, dry_run: bool) -> Result:
    est, fits = estimate_of(case, gpu_bytes)
    if dry_run:
        return Result(case, est, fits)
    import torch

    try:
        allocated, reserved = run_step(case, device)
    except torch.cuda.OutOfMemoryError as exc:
        return Result(case, est, fits, error=f"out of memory: {str(exc).splitlines()[0][:80]}")
    return Result(case, est, fits, allocated, reserved)


def _gib(x: float | None) -> str:
    return "dry run" if x is None else f"{x / GiB:.2f}"


def table(results: list[Result]) -> list[str]:
    """The Markdown table: the estimate, the measured peaks, the ratio estimate / allocated."""
    out = [
        "| config | estimate GiB | max allocated GiB | max reserved GiB | estimate / allocated | verdict |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for r in results:
        ratio = "" if r.ratio is None else f"{r.ratio:.3f}"
        verdict = "fits" if r.fits else "does not fit"
        measured = r.error or _gib(r.allocated)
        out.append(
            f"| {r.case.name()} | {r.estimate / GiB:.2f} | {measured} | {_gib(r.reserved)} | {ratio} | {verdict} |"
        )
    return out


def summary(results: list[Result]) -> list[str]:
    ratios = [r.ratio for r in results if r.ratio is not None]
    out = []
    if ratios:
        worst = max(ratios, key=lambda x: abs(x - 1))
        out.append(
            f"median estimate / allocated: {statistics.median(ratios):.3f}; worst: {worst:.3f} ({len(ratios)} runs)"
        )
    else:
        out.append("no step ran (dry run): no ratio")
    oom = [r.case.name() for r in results if r.fits and r.error.startswith("out of memory")]
    out.append("said to fit but ran out of memory: " + (", ".join(oom) if oom else "none"))
    return out


def write_report(path: Path, results: list[Result], header: dict[str, str], skipped: int) -> None:
    lines = [
        "# accelconf's estimate against one training step on a GPU",
        "",
        "Written by `bench/gpu_fit.py`. The numbers are only meaningful on CUDA (a `--dry-run` or",
        "`--device cpu` run writes the table's format with the estimate alone); until this file holds",
        "a CUDA run, the peak is verified on CPU only (the saved-tensor oracles in tests/).",
        "",
        *(f"- {k}: {v}" for k, v in header.items()),
        "",
        *summary(results),
        *([f"time guard: {skipped} configs not run"] if skipped else []),
        "",
        *table(results),
        "",
    ]
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(lines), encoding="utf-8")
    os.replace(tmp, path)


def _header(device: str, dry_run: bool) -> dict[str, str]:
    out = {
        "device": device,
        "dry run": str(dry_run).lower(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    if device == "cuda" and not dry_run:
        import torch
        import transformers

        out.update(gpu=torch.cuda.get_device_name(0), torch=torch.__version__, transformers=transformers.__version__)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--dry-run", action="store_true", help="build the matrix and the estimates, run no step")
    p.add_argument("--budget", type=float, default=270.0, help="seconds before the remaining configs are skipped")
    p.add_argument("--gpu-memory-gib", type=float, default=None, help="the GPU's memory (default: what CUDA says)")
    p.add_argument("--out", type=Path, default=REPO / "bench" / "FIT.md")
    p.add_argument("--limit", type=int, default=None, help="run the first N configs only")
    args = p.parse_args(argv)
    dry = args.dry_run or args.device == "cpu"
    gpu_bytes = (args.gpu_memory_gib or _cuda_memory_gib(dry)) * GiB
    cases = matrix()[: args.limit]
    start, results = time.monotonic(), []
    for case in cases:
        if time.monotonic() - start > args.budget:
            break
        results.append(measure(case, args.device, gpu_bytes, dry))
        print(table(results[-1:])[-1], flush=True)
    write_report(args.out, results, _header(args.device, dry), len(cases) - len(results))
    return 0


def _cuda_memory_gib(dry: bool) -> float:
    if dry:
        return 141.0  # an H200's, for the verdict column of a dry run
    import torch

    return torch.cuda.get_device_properties(0).total_memory / GiB


if __name__ == "__main__":
    sys.exit(main())
