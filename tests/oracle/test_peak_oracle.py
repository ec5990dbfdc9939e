"""The peak's terms beyond the model states, against the real thing: the optimizer step's
temporaries measured (PyTorch's AdamW, foreach as on CUDA, run on CPU under a dispatch mode that
counts the bytes of every tensor an op creates and how many are alive at once), and the buckets'
sizes from DeepSpeed's and accelerate's own defaults."""

from __future__ import annotations

import weakref
from pathlib import Path

import pytest

from accelconf.environment import memory
from accelconf.environment.memory import Layout, Strategy
from accelconf.environment.modelsize import from_count, from_model_dir
from accelconf.text.document import load_text

torch = pytest.importorskip("torch")


class _LiveBytes(torch.utils._python_dispatch.TorchDispatchMode):
    """The most bytes alive at once among the tensors created inside the mode (in-place results and
    views of existing storages are not new memory)."""

    def __init__(self) -> None:
        super().__init__()
        self.live = 0
        self.peak = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        inputs = {
            t.untyped_storage().data_ptr()
            for t in torch.utils._pytree.tree_leaves((args, kwargs or {}))
            if isinstance(t, torch.Tensor)
        }
        out = func(*args, **(kwargs or {}))
        seen: set[int] = set()
        for t in torch.utils._pytree.tree_leaves(out):
            if not isinstance(t, torch.Tensor) or t.dim() == 0:
                continue
            ptr = t.untyped_storage().data_ptr()
            if ptr in inputs or ptr in seen:
                continue
            seen.add(ptr)
            size = t.untyped_storage().nbytes()
            self.live += size
            self.peak = max(self.peak, self.live)
            weakref.finalize(t, self._free, size)
        return out

    def _free(self, size: int) -> None:
        self.live -= size


@pytest.mark.parametrize("shapes", [[(256, 512), (512,), (1024, 256)], [(4096, 64)] * 6])
def test_adamw_step_temporaries_are_one_copy_of_the_local_parameters(shapes):
    params = [torch.nn.Parameter(torch.randn(*s)) for s in shapes]
    opt = torch.optim.AdamW(params, lr=1e-3, foreach=True)
    for p in params:
        p.grad = torch.randn_like(p)
    opt.step()  # the first step creates the state (counted as optimizer state, not as temporaries)
    tracker = _LiveBytes()
    with tracker:
        opt.step()
    n = sum(p.numel() for p in params)
    est = memory.estimate(Strategy("ddp", "bf16"), Layout(1), from_count(n))
    assert tracker.peak == est.step_temporaries == 4 * n
    sharded = memory.estimate(Strategy("fsdp2", "bf16"), Layout(4), from_count(4 * n))
    assert sharded.step_temporaries == est.step_temporaries  # the rank's shard: 4 * n / 4 parameters each


@pytest.mark.oracle
@pytest.mark.parametrize("stage", [1, 2, 3])
def test_deepspeed_bucket_defaults_are_deepspeeds_own(stage):
    config = pytest.importorskip("deepspeed.runtime.zero.config")
    z = config.DeepSpeedZeroConfig(stage=stage)
    assert (z.reduce_bucket_size, z.prefetch_bucket_size) == (memory.DS_REDUCE_BUCKET, memory.DS_PREFETCH_BUCKET)
    assert z.contiguous_gradients  # the reduce bucket is a preallocated buffer
    P = 8_000_000_000
    est = memory.estimate(Strategy("deepspeed", "bf16", stage, zero3_init=stage == 3), Layout(8), from_count(P))
    # overlap_comm's default (true only for stage 3) decides the second buffer of stages 1-2
    assert z.overlap_comm == (stage == 3)
    expected = 2 * z.reduce_bucket_size + (2 * z.prefetch_bucket_size if stage == 3 else 0)
    assert est.buckets == expected
    overlapped = memory.estimate(Strategy("deepspeed", "bf16", stage, overlap_comm=True), Layout(8), from_count(P))
    assert overlapped.buckets == (2 * expected if stage < 3 else expected)


@pytest.mark.oracle
def test_ddp_keeps_a_bucket_copy_of_the_gradients_under_accelerates_default():
    kwargs = pytest.importorskip("accelerate.utils").DistributedDataParallelKwargs()
    assert kwargs.gradient_as_bucket_view is False  # so the reducer's buckets are a second copy of the gradients
    est = memory.estimate(Strategy("ddp", "bf16"), Layout(8), from_count(1_000_000))
    assert est.buckets == est.step_buckets == est.grads == 4 * 1_000_000


def test_a_deepspeed_json_sets_the_buckets_and_auto_is_hidden_squared():
    qwen = from_model_dir(str(Path(__file__).resolve().parents[2] / "examples" / "memory" / "qwen2-7b"))
    s, _ = memory.strategy_of(
        load_text(
            '{"zero_optimization": {"stage": 2, "reduce_bucket_size": "auto", '
            '"overlap_comm": true}, "bf16": {"enabled": true}}'
        ).data
    )
    assert (s.reduce_bucket, s.overlap_comm) == ("auto", True)
    # accelerate fills "auto" with hidden_size * hidden_size (accelerator.py), two 16-bit buffers under overlap_comm
    assert memory.estimate(s, Layout(8), qwen).buckets == 2 * 2 * 3584 * 3584
    s, _ = memory.strategy_of(load_text('{"zero_optimization": {"stage": 2, "reduce_bucket_size": 2e8}}').data)
    assert memory.estimate(s, Layout(8), qwen).buckets == 4 * 200_000_000  # fp32: no bf16/fp16 section


def test_zero3_prefetch_auto_is_nine_tenths_of_hidden_squared():
    qwen = from_model_dir(str(Path(__file__).resolve().parents[2] / "examples" / "memory" / "qwen2-7b"))
    s, _ = memory.strategy_of(
        load_text(
            '{"zero_optimization": {"stage": 3, "reduce_bucket_size": "auto", '
            '"stage3_prefetch_bucket_size": "auto"}, "bf16": {"enabled": true}}'
        ).data
    )
    assert (s.reduce_bucket, s.prefetch_bucket) == ("auto", "auto")
    h = 3584
    assert memory.estimate(s, Layout(8), qwen).buckets == 2 * h * h + 2 * int(0.9 * h * h)
