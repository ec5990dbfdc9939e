"""The probe, the GPU table and ``accelconf env``, with fakes for every outside call.

No test needs a GPU, NVML, nvidia-smi or rocm-smi; the one that runs the real probe on this
machine only checks that it answers, quickly and without importing torch.
"""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from accelconf.cli import main
from accelconf.environment.gpus import MODELS, describe, known_models, lookup, resolve
from accelconf.environment.probe import (
    GPU,
    Environment,
    parse_nvidia_smi,
    parse_rocm_smi,
    probe,
    read_versions,
    torch_build,
)

H100_SMI = "0, NVIDIA H100 80GB HBM3, 9.0, 81559, 550.54.15\n1, NVIDIA H100 80GB HBM3, 9.0, 81559, 550.54.15\n"
V100_SMI_OLD = "0, Tesla V100-SXM2-16GB, 16384, 470.82.01\n"


# -- the GPU table ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, key",
    [
        ("h100", "H100-80GB"),
        ("H100-80GB", "H100-80GB"),
        ("NVIDIA H100 80GB HBM3", "H100-80GB"),
        ("NVIDIA H100 PCIe", "H100-80GB"),
        ("NVIDIA H100 NVL", "H100-NVL"),
        ("Tesla V100-SXM2-16GB", "V100-16GB"),
        ("Tesla V100-SXM2-32GB", "V100-32GB"),
        ("NVIDIA A100-SXM4-80GB", "A100-80GB"),
        ("NVIDIA A100-PCIE-40GB", "A100-40GB"),
        ("a100-40gb", "A100-40GB"),
        ("Tesla T4", "T4"),
        ("NVIDIA A10G", "A10G"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA L40S", "L40S"),
        ("NVIDIA H200", "H200"),
        ("NVIDIA B200", "B200"),
        ("NVIDIA GeForce RTX 4090", "RTX-4090"),
        ("NVIDIA GeForce RTX 3090", "RTX-3090"),
        ("AMD Instinct MI300X", "MI300X"),
        ("AMD Instinct MI250X / MI250", "MI250"),
        ("mi250x", "MI250"),
    ],
)
def test_lookup_accepts_common_spellings(name: str, key: str) -> None:
    model = lookup(name)
    assert model is not None and model.key == key


@pytest.mark.parametrize("name", ["", "  ", "Z80", "NVIDIA GeForce GTX 1080", "H1000"])
def test_lookup_unknown_is_none(name: str) -> None:
    assert lookup(name) is None


def test_ambiguous_name_says_what_it_assumed() -> None:
    match = resolve("a100")
    assert match is not None and match.model.key == "A100-80GB"
    assert match.note and "A100-40GB" in match.note and "assuming A100-80GB" in match.note
    assert resolve("A100-SXM4-40GB").note is None  # type: ignore[union-attr]
    assert lookup("a100", memory_gib=39.4).key == "A100-40GB"  # type: ignore[union-attr]


def test_table_facts() -> None:
    required = {
        "V100-16GB",
        "T4",
        "A10G",
        "L4",
        "L40S",
        "A100-40GB",
        "A100-80GB",
        "H100-80GB",
        "H200",
        "B200",
        "MI250",
        "MI300X",
    }
    assert required <= set(known_models())
    for m in MODELS:
        if m.compute_capability:
            assert m.bf16 == (m.compute_capability >= (8, 0)) and m.fp8 == (m.compute_capability >= (8, 9))
    assert describe(lookup("H100")) == "H100-80GB (NVIDIA Hopper, CC 9.0, 80 GiB, bf16, fp8)"  # type: ignore[arg-type]
    assert describe(lookup("MI250")) == "MI250 (AMD gfx90a, 128 GiB, bf16)"  # type: ignore[arg-type]


# -- parsers ----------------------------------------------------------------------------------


def test_parse_nvidia_smi() -> None:
    gpus, driver = parse_nvidia_smi(H100_SMI)
    assert driver == "550.54.15" and len(gpus) == 2
    g = gpus[1]
    assert (g.index, g.model, g.compute_capability, g.memory_gib, g.bf16, g.fp8) == (
        1,
        "H100-80GB",
        (9, 0),
        79.6,
        True,
        True,
    )


def test_parse_nvidia_smi_without_compute_cap_uses_the_table() -> None:
    [g], driver = parse_nvidia_smi(V100_SMI_OLD)
    assert g.model == "V100-16GB" and g.compute_capability == (7, 0) and g.bf16 is False and driver == "470.82.01"


def test_parse_nvidia_smi_unknown_model_keeps_cc() -> None:
    [g], _ = parse_nvidia_smi("0, NVIDIA RTX PRO 6000 Blackwell, 12.0, 97887, 575.51\n")
    assert g.model is None and g.compute_capability == (12, 0) and g.bf16 and g.fp8


def test_parse_nvidia_smi_garbage() -> None:
    with pytest.raises(ValueError):
        parse_nvidia_smi("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n")


def test_parse_rocm_smi() -> None:
    text = json.dumps(
        {
            "card0": {
                "Card Series": "AMD Instinct MI300X",
                "GFX Version": "gfx942",
                "VRAM Total Memory (B)": "206141652992",
            },
            "card1": {
                "Card Series": "AMD Instinct MI300X",
                "GFX Version": "gfx942",
                "VRAM Total Memory (B)": "206141652992",
            },
            "system": {"Driver version": "6.8.5"},
        }
    )
    gpus = parse_rocm_smi(text)
    assert [g.model for g in gpus] == ["MI300X", "MI300X"]
    assert gpus[0].vendor == "amd" and gpus[0].arch == "gfx942" and gpus[0].fp8 and gpus[0].memory_gib == 192.0


# -- probe with fakes -------------------------------------------------------------------------


class FakeNVML:
    """Enough of pynvml for the probe: two H100s, driver 550, CUDA 12.4."""

    def __init__(self, fail: Exception | None = None) -> None:
        self.fail = fail
        self.shut = False

    def nvmlInit(self) -> None:
        if self.fail:
            raise self.fail

    def nvmlShutdown(self) -> None:
        self.shut = True

    def nvmlSystemGetDriverVersion(self) -> bytes:
        return b"550.54.15"

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return 12040

    def nvmlDeviceGetCount(self) -> int:
        return 2

    def nvmlDeviceGetHandleByIndex(self, i: int) -> int:
        return i

    def nvmlDeviceGetName(self, h: int) -> str:
        return "NVIDIA H100 80GB HBM3"

    def nvmlDeviceGetCudaComputeCapability(self, h: int) -> tuple[int, int]:
        return (9, 0)

    def nvmlDeviceGetMemoryInfo(self, h: int) -> types.SimpleNamespace:
        return types.SimpleNamespace(total=85520809984)


class LibraryNotFound(Exception):
    pass


LibraryNotFound.__name__ = "NVMLError_LibraryNotFound"

VERSIONS = {"torch": "2.7.1", "accelerate": "1.15.0", "deepspeed": "0.17.2", "transformer-engine": "2.4.0"}


def fake_probe(mode: str = "auto", **kw):  # type: ignore[no-untyped-def]
    kw.setdefault("versions", VERSIONS.get)
    kw.setdefault("environ", {})
    kw.setdefault("build", ("12.6", None))
    return probe(mode, **kw)


def test_probe_nvml() -> None:
    nvml = FakeNVML()
    env = fake_probe(nvml=nvml, runner=lambda argv, t: pytest.fail("nvidia-smi must not run"))
    assert env.source == "detected via nvml" and env.problems == ()
    assert env.gpu_count == 2 and env.gpus[0].model == "H100-80GB" and env.gpus[0].memory_gib == 79.6
    assert env.driver_version == "550.54.15" and env.driver_cuda_version == "12.4" and nvml.shut
    assert env.torch_version == "2.7.1" and env.transformers_version is None
    assert env.fp8_backends == ("transformer-engine",) and env.cuda_version == "12.6"


def test_probe_falls_back_to_nvidia_smi_quietly_when_nvml_is_absent() -> None:
    calls = []

    def runner(argv: list[str], timeout: float) -> str:
        calls.append((argv, timeout))
        return H100_SMI

    env = fake_probe(nvml=FakeNVML(LibraryNotFound("NVML Shared Library Not Found")), runner=runner, timeout=0.5)
    assert env.source == "detected via nvidia-smi" and env.problems == () and env.gpu_count == 2
    argv, timeout = calls[0]
    assert argv[1] == "--query-gpu=index,name,compute_cap,memory.total,driver_version" and timeout == 0.5


def test_probe_nvml_broken_is_a_problem_not_an_exception() -> None:
    env = fake_probe(nvml=FakeNVML(RuntimeError("Driver/library version mismatch")), runner=lambda a, t: H100_SMI)
    assert env.gpu_count == 2 and env.problems == ()
    assert env.notes == ("NVML probe failed: Driver/library version mismatch (nvidia-smi answered)",)
    only = fake_probe("nvml", nvml=FakeNVML(RuntimeError("Driver/library version mismatch")))
    assert only.gpus == () and only.problems == ("NVML probe failed: Driver/library version mismatch",)


def test_probe_nvidia_smi_timeout() -> None:
    def runner(argv: list[str], timeout: float) -> str:
        raise subprocess.TimeoutExpired(argv, timeout)

    env = fake_probe("nvidia-smi", runner=runner)
    assert env.gpus == () and env.problems == ("nvidia-smi probe failed: timed out after 2s",)


def test_probe_nvidia_smi_old_driver_retries_without_compute_cap() -> None:
    def runner(argv: list[str], timeout: float) -> str:
        if "compute_cap" in argv[1]:
            raise RuntimeError('exit status 2: Field "compute_cap" is not a valid field to query.')
        return V100_SMI_OLD

    env = fake_probe("nvidia-smi", runner=runner)
    assert env.problems == () and env.gpus[0].model == "V100-16GB"


def test_probe_fake_file(tmp_path: Path) -> None:
    smi = tmp_path / "smi.txt"
    smi.write_text(H100_SMI)
    env = fake_probe(environ={"ACCELCONF_FAKE_NVIDIA_SMI": str(smi)}, nvml=FakeNVML())
    assert env.source == "detected via nvidia-smi" and env.gpu_count == 2  # NVML is not asked
    missing = fake_probe(environ={"ACCELCONF_FAKE_NVIDIA_SMI": str(tmp_path / "nope")})
    assert missing.gpus == () and missing.problems and "nvidia-smi probe failed" in missing.problems[0]


def test_probe_rocm_when_nvidia_finds_nothing() -> None:
    rocm = json.dumps({"card0": {"Card Series": "AMD Instinct MI250X / MI250", "GFX Version": "gfx90a"}})

    def runner(argv: list[str], timeout: float) -> str:
        if argv[0].endswith("nvidia-smi"):
            raise FileNotFoundError("nvidia-smi not found")
        return rocm

    env = fake_probe(nvml=FakeNVML(LibraryNotFound("not found")), runner=runner)
    assert env.source == "detected via rocm-smi" and env.gpus[0].model == "MI250" and env.problems == ()


def test_probe_none_and_unknown_mode() -> None:
    env = fake_probe("none", runner=lambda a, t: pytest.fail("no GPU probe in mode none"))
    assert env.gpus == () and not env.knows("gpus") and env.torch_version == "2.7.1"
    bad = fake_probe("cuda")
    assert bad.problems and "unknown probe mode" in bad.problems[0]


def test_probe_torch_mode_uses_torch_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    props = types.SimpleNamespace(name="NVIDIA L4", total_memory=23580639232)
    fake_torch = types.SimpleNamespace(
        version=types.SimpleNamespace(cuda="12.4", hip=None),
        cuda=types.SimpleNamespace(
            is_available=lambda: True,
            device_count=lambda: 1,
            get_device_properties=lambda i: props,
            get_device_capability=lambda i: (8, 9),
        ),
    )
    # The fake leaves sys.modules before the test ends: no teardown hook may meet a fake torch.
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "torch", fake_torch)
        env = fake_probe("torch")
    assert env.source == "detected via torch" and env.gpus[0].model == "L4" and env.gpus[0].fp8
    assert env.cuda_version == "12.4"


def test_probe_never_raises() -> None:
    def versions(name: str) -> str:
        raise OSError("disk on fire")

    def runner(argv: list[str], timeout: float) -> str:
        raise PermissionError("denied")

    env = fake_probe(versions=versions, runner=runner, nvml=FakeNVML(MemoryError()))
    assert env.gpus == () and env.problems == (
        "reading package versions failed: OSError: disk on fire",
        "NVML probe failed: MemoryError",
        "nvidia-smi probe failed: PermissionError: denied",
        "rocm-smi probe failed: PermissionError: denied",
    )


def test_read_versions_fp8_backends() -> None:
    vers = {"torchao": "0.5.0", "ms-amp": "0.4.0"}
    assert read_versions(vers.get)["fp8_backends"] == ("ms-amp",)  # accelerate ignores torchao < 0.6.1
    vers["torchao"] = "0.13.0"
    assert read_versions(vers.get)["fp8_backends"] == ("torchao", "ms-amp")


def test_torch_build_reads_version_py(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "torch"
    pkg.mkdir()
    (pkg / "version.py").write_text(
        "from typing import Optional\n__version__ = '2.7.1+cu126'\n"
        "cuda: Optional[str] = '12.6'\nhip: Optional[str] = None\n"
    )
    import importlib.util

    spec = types.SimpleNamespace(submodule_search_locations=[str(pkg)])
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: spec)
    assert torch_build() == ("12.6", None)


def test_environment_json() -> None:
    env = Environment(gpus=(GPU(0, "NVIDIA L4", "L4", (8, 9), 22.0, True, True),), unknown=frozenset({"b", "a"}))
    data = env.to_json()
    assert data["gpus"][0]["compute_capability"] == "8.9" and data["unknown"] == ["a", "b"]
    json.dumps(data)


# -- this machine, for real -------------------------------------------------------------------


def test_real_probe_answers_without_importing_heavy_packages() -> None:
    code = (
        "import sys, time\n"
        "t = time.perf_counter()\n"
        "from accelconf.environment.probe import probe\n"
        "env = probe()\n"
        "from accelconf.cli import main\n"
        "import io, contextlib\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "    main(['env'])\n"
        "heavy = [m for m in ('torch', 'accelerate', 'deepspeed', 'transformers') if m in sys.modules]\n"
        "print(heavy, env.source, round(time.perf_counter() - t, 3))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.startswith("[] detected"), out


def test_check_path_does_not_import_heavy_packages(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nmixed_precision: bf16\n"
        "num_machines: 1\nnum_processes: 8\nfsdp_config:\n  fsdp_version: 2\n"
    )
    code = (
        "import sys, io, contextlib\n"
        "from accelconf.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        f"    main(['check', {str(cfg)!r}])\n"
        "print([m for m in ('torch', 'accelerate', 'deepspeed', 'transformers') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.strip() == "[]"


# -- accelconf env ----------------------------------------------------------------------------


def test_env_command_text_and_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    smi = tmp_path / "smi.txt"
    smi.write_text(H100_SMI)
    monkeypatch.setenv("ACCELCONF_FAKE_NVIDIA_SMI", str(smi))
    assert main(["env"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("accelconf env: detected via nvidia-smi")
    assert "NVIDIA H100 80GB HBM3 [H100-80GB] (CC 9.0, 79.6 GiB, bf16, fp8)" in out and "driver" in out
    assert main(["env", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["source"] == "detected via nvidia-smi" and len(data["gpus"]) == 2 and "probe_ms" in data


def test_env_command_probe_none(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["env", "--probe", "none"]) == 0
    out = capsys.readouterr().out
    assert "GPUs" in out and "not probed" in out and "GPU probe off" in out


def test_default_config_file() -> None:
    from accelconf.environment.probe import default_config_file

    assert default_config_file({"HF_HOME": "/h"}) == "/h/accelerate/default_config.yaml"
    assert default_config_file({"XDG_CACHE_HOME": "/x"}) == "/x/huggingface/accelerate/default_config.yaml"
    assert default_config_file({}).endswith("/.cache/huggingface/accelerate/default_config.yaml")


def test_env_shows_default_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    (tmp_path / "accelerate").mkdir()
    (tmp_path / "accelerate" / "default_config.yaml").write_text("distributed_type: 'NO'\n")
    assert main(["env", "--probe", "none"]) == 0
    assert f"default config  {tmp_path}/accelerate/default_config.yaml\n" in capsys.readouterr().out
