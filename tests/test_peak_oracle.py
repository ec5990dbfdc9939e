"""The optimizer step's temporaries in the peak, measured: PyTorch's AdamW (foreach, the default on
CUDA) run on CPU under a dispatch mode that counts the bytes of every tensor an op creates and how
many of them are alive at once. The estimate's ``step_temporaries`` must equal that peak."""

from __future__ import annotations

import weakref

import pytest

from accelconf.environment import memory
from accelconf.environment.memory import Layout, Strategy
from accelconf.environment.modelsize import from_count

torch = pytest.importorskip("torch")


class _LiveBytes(torch.utils._python_dispatch.TorchDispatchMode):
    """The most bytes alive at once among the tensors created inside the mode (in-place results and
    views of existing storages are not new memory)."""

    def __init__(self) -> None:
        super().__init__()
        self.live = 0
        self.peak = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        inputs = {t.untyped_storage().data_ptr() for t in torch.utils._pytree.tree_leaves((args, kwargs or {}))
                  if isinstance(t, torch.Tensor)}
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
