"""Run under torchrun (gloo, CPU): shard a small model with FSDP2, take one AdamW step, and write
each rank's local parameter, gradient and optimizer-state elements and bytes to OUT/rank<N>.json.
Rank 0 also saves the model's weights to OUT/model/model.safetensors for accelconf to size. A second
argument ``offload`` shards with ``CPUOffloadPolicy`` (what ``fsdp_offload_params: true`` sets), and
each row then also says on which device the states live."""

import json
import os
import sys

import torch
import torch.distributed as dist
from safetensors.torch import save_file
from torch.distributed.fsdp import CPUOffloadPolicy, fully_shard


class Block(torch.nn.Module):
    def __init__(self, h: int, inner: int) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(h)
        self.up = torch.nn.Linear(h, inner)
        self.down = torch.nn.Linear(inner, h, bias=False)

    def forward(self, x):
        return x + self.down(torch.relu(self.up(self.norm(x))))


class Tiny(torch.nn.Module):
    # odd sizes so that dim-0 chunks are uneven across 2 and 3 ranks
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(101, 24)
        self.layers = torch.nn.ModuleList(Block(24, 37) for _ in range(3))
        self.head = torch.nn.Linear(24, 101, bias=False)

    def forward(self, x):
        x = self.embed(x)
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def main(out: str, offload: bool = False) -> None:
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = Tiny()
    if rank == 0:
        os.makedirs(os.path.join(out, "model"), exist_ok=True)
        save_file({k: v.contiguous() for k, v in model.state_dict().items()},
                  os.path.join(out, "model", "model.safetensors"))
    # pin_memory needs an accelerator; on a CPU-only machine the states are host memory either way
    kw = {"offload_policy": CPUOffloadPolicy(pin_memory=False)} if offload else {}
    for layer in model.layers:
        fully_shard(layer, **kw)
    fully_shard(model, **kw)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randint(0, 101, (2, 5))
    model(x).float().sum().backward()
    opt.step()

    def local(t):
        return t.to_local() if hasattr(t, "to_local") else t

    params = [local(p) for p in model.parameters()]
    grads = [local(p.grad) for p in model.parameters()]
    states = [local(v) for st in opt.state.values() for v in st.values() if torch.is_tensor(v)]
    row = {
        "rank": rank, "world": world,
        "param_elements": sum(t.numel() for t in params), "param_bytes": sum(t.numel() * t.element_size() for t in params),
        "grad_elements": sum(t.numel() for t in grads), "grad_bytes": sum(t.numel() * t.element_size() for t in grads),
        "optimizer_elements": sum(t.numel() for t in states),
        "optimizer_bytes": sum(t.numel() * t.element_size() for t in states),
        "devices": sorted({str(t.device.type) for t in params + grads + states}),
    }
    with open(os.path.join(out, f"rank{rank}.json"), "w") as fh:
        json.dump(row, fh)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], offload=sys.argv[2:] == ["offload"])
