"""A built-in table of common accelerators and a forgiving name lookup.

This module owns the facts ``accelconf check`` needs about a GPU model it may not be running on:
vendor, compute capability (NVIDIA) or gfx architecture (AMD), memory, and whether the hardware
does bf16 and fp8. :func:`lookup` accepts the spellings people type (``h100``, ``A100-40GB``) and
the names ``nvidia-smi`` / ``rocm-smi`` print (``NVIDIA H100 80GB HBM3``, ``Tesla V100-SXM2-16GB``,
``AMD Instinct MI300X``). Detecting the GPUs of this machine is left to :mod:`accelconf.environment.probe`.

Memory is the usable size in GiB as the vendor sells the part, rounded; it only picks a variant.
bf16 means native bf16 arithmetic (NVIDIA compute capability 8.0 or higher); fp8 means fp8 tensor
cores (compute capability 8.9 or higher, or CDNA3 on AMD).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Vendor = Literal["nvidia", "amd"]


@dataclass(frozen=True)
class GPUModel:
    """One accelerator model. ``compute_capability`` is ``None`` for AMD parts (see ``arch``)."""

    key: str
    vendor: Vendor
    family: str
    arch: str
    compute_capability: tuple[int, int] | None
    memory_gib: int
    bf16: bool
    fp8: bool

    @property
    def cc_text(self) -> str:
        cc = self.compute_capability
        return f"{cc[0]}.{cc[1]}" if cc else self.arch


def _nv(key: str, family: str, arch: str, cc: tuple[int, int], mem: int) -> GPUModel:
    return GPUModel(key, "nvidia", family, arch, cc, mem, bf16=cc >= (8, 0), fp8=cc >= (8, 9))


# Ordered: within a family, the first entry is the default when a name gives no memory size.
MODELS: tuple[GPUModel, ...] = (
    _nv("V100-16GB", "v100", "Volta", (7, 0), 16),
    _nv("V100-32GB", "v100", "Volta", (7, 0), 32),
    _nv("T4", "t4", "Turing", (7, 5), 16),
    _nv("A10G", "a10g", "Ampere", (8, 6), 24),
    _nv("A10", "a10", "Ampere", (8, 6), 24),
    _nv("RTX-3090", "3090", "Ampere", (8, 6), 24),
    _nv("RTX-A6000", "a6000", "Ampere", (8, 6), 48),
    _nv("A100-80GB", "a100", "Ampere", (8, 0), 80),
    _nv("A100-40GB", "a100", "Ampere", (8, 0), 40),
    _nv("L4", "l4", "Ada", (8, 9), 24),
    _nv("L40S", "l40s", "Ada", (8, 9), 48),
    _nv("RTX-4090", "4090", "Ada", (8, 9), 24),
    _nv("H100-80GB", "h100", "Hopper", (9, 0), 80),
    _nv("H100-NVL", "h100", "Hopper", (9, 0), 94),
    _nv("H200", "h200", "Hopper", (9, 0), 141),
    _nv("B200", "b200", "Blackwell", (10, 0), 180),
    GPUModel("MI250", "amd", "mi250", "gfx90a", None, 128, bf16=True, fp8=False),
    GPUModel("MI300X", "amd", "mi300x", "gfx942", None, 192, bf16=True, fp8=True),
)

_BY_KEY = {m.key.lower(): m for m in MODELS}

# Words that name a vendor, a brand, a form factor or a memory type, not a model.
_NOISE = {
    "nvidia",
    "tesla",
    "geforce",
    "rtx",
    "amd",
    "instinct",
    "radeon",
    "hbm2",
    "hbm2e",
    "hbm3",
    "hbm3e",
    "pcie",
    "sxm",
    "sxm2",
    "sxm3",
    "sxm4",
    "sxm5",
    "gpu",
    "accelerator",
    "oam",
}
_ALIASES = {"mi250x": "mi250", "rtxa6000": "a6000"}
_FAMILIES = {m.family for m in MODELS}


@dataclass(frozen=True)
class Match:
    """The result of :func:`resolve`: the model, and a note when the name was ambiguous."""

    model: GPUModel
    note: str | None = None


def _parse(name: str) -> tuple[str, int | None, bool]:
    """(family, memory in GB or None, nvl) from a free-form name."""
    text = name.lower().replace("_", " ").replace("-", " ").replace("/", " ")
    mem = None
    m = re.search(r"\b(\d+)\s*gb\b", text)
    if m:
        mem = int(m.group(1))
        text = text[: m.start()] + " " + text[m.end() :]
    words = [w for w in text.split() if w not in _NOISE]
    nvl = "nvl" in words
    words = [w for w in words if w != "nvl"]
    family = "".join(words)
    if family not in _FAMILIES:
        # "MI250X / MI250", "H100 80GB HBM3 something": the first word that names a family
        family = next((_ALIASES.get(w, w) for w in words if _ALIASES.get(w, w) in _FAMILIES), family)
    return _ALIASES.get(family, family), mem, nvl


def resolve(name: str, memory_gib: float | None = None) -> Match | None:
    """Find the model a name means, saying which variant was assumed when the name is ambiguous.

    ``memory_gib`` (from a probe) picks a variant when the name does not. Returns ``None`` for a
    name that is not in the table.
    """
    if not name or not name.strip():
        return None
    exact = _BY_KEY.get(name.strip().lower())
    if exact is not None:
        return Match(exact)
    family, mem, nvl = _parse(name)
    candidates = [m for m in MODELS if m.family == family]
    if not candidates:
        return None
    size = mem if mem is not None else memory_gib
    if nvl or size is None:
        # NVL parts say so in their name; a bare "H100" is the common 80 GB part.
        picked = [m for m in candidates if m.key.endswith("NVL") == nvl]
        candidates = picked or candidates
    if len(candidates) == 1:
        return Match(candidates[0])
    if size is not None:
        best = min(candidates, key=lambda m: abs(m.memory_gib - size))
        return Match(best)
    chosen = candidates[0]
    others = ", ".join(m.key for m in candidates[1:])
    same = all(
        (m.compute_capability, m.bf16, m.fp8) == (chosen.compute_capability, chosen.bf16, chosen.fp8)
        for m in candidates
    )
    note = f"{name!r} could be {chosen.key} or {others}; assuming {chosen.key}"
    if same:
        note += " (the checks give the same answer for both)"
    return Match(chosen, note)


def lookup(name: str, memory_gib: float | None = None) -> GPUModel | None:
    """The model a name means, or ``None``. See :func:`resolve` for the ambiguity note."""
    match = resolve(name, memory_gib)
    return match.model if match else None


def known_models() -> list[str]:
    """The table's model keys, in table order (oldest architecture first)."""
    return [m.key for m in MODELS]


def describe(model: GPUModel) -> str:
    """A one-line summary: ``H100-80GB (NVIDIA Hopper, CC 9.0, 80 GiB, bf16, fp8)``."""
    feats = [f for f, on in (("bf16", model.bf16), ("fp8", model.fp8)) if on]
    if model.vendor == "amd":
        kind = f"AMD {model.arch}"
    else:
        kind = f"NVIDIA {model.arch}, CC {model.cc_text}"
    return f"{model.key} ({kind}, {model.memory_gib} GiB{', ' + ', '.join(feats) if feats else ''})"
