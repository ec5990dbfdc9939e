"""Benchmark of ``accelconf lsp`` (not a test): diagnostics latency, completion latency, memory.

For each server, over stdio with a small JSON-RPC client:

- the median and 90th percentile time from a ``didChange`` to the ``publishDiagnostics`` that
  follows it, on a 60-line accelerate config (whatever debounce the server applies counts), with
  edits 100 ms apart as when typing;
- the median latency of ``completion`` inside ``fsdp_config`` and of ``hover`` on a key;
- the server's resident memory (VmRSS from ``/proc``) after the run.

When node and npm are available, the same is measured for yaml-language-server 1.25.0 (installed
with npm into a temporary folder) given accelconf's schema (``schemas/accelerate-config.schema.json``).
Prints a table and writes ``bench/results-lsp.json``. Run: ``python bench/bench_lsp.py [--rounds N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schemas" / "accelerate-config.schema.json"
YAMLLS_VERSION = "1.25.0"

CONFIG_60 = """\
# Accelerate config for an 8-GPU FSDP run.
# Written by `accelerate config`, then edited by hand.
compute_environment: LOCAL_MACHINE
debug: false
distributed_type: FSDP
downcast_bf16: 'no'
enable_cpu_affinity: false
# Precision: bf16 on A100/H100.
mixed_precision: no
machine_rank: 0
main_training_function: main
num_machines: 1
num_processes: 8
rdzv_backend: static
same_network: true
tpu_env: []
tpu_use_cluster: false
tpu_use_sudo: false
use_cpu: false
gpu_ids: all
main_process_port: 29500
fsdp_config:
  # FSDP1 settings
  fsdp_version: 1
  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
  fsdp_backward_prefetch: BACKWARD_PRE
  fsdp_cpu_offload: true   # typo: accelerate ignores it
  fsdp_cpu_ram_efficient_loading: true
  fsdp_forward_prefetch: false
  fsdp_offload_params: false
  fsdp_sharding_strategy: FULL_SHARD
  fsdp_state_dict_type: SHARDED_STATE_DICT
  fsdp_sync_module_states: true
  fsdp_transformer_layer_cls_to_wrap: LlamaDecoderLayer
  fsdp_use_orig_params: true
  fsdp_activation_checkpointing: false
  fsdp_min_num_params: 100000000
dynamo_config:
  dynamo_backend: INDUCTOR
  dynamo_mode: default
  dynamo_use_fullgraph: false
  dynamo_use_dynamic: false
# Parallelism (accelerate 1.10+)
parallelism_config:
  parallelism_config_dp_replicate_size: 1
  parallelism_config_dp_shard_size: 8
  parallelism_config_tp_size: 1
  parallelism_config_cp_size: 1
# Notes
# - keep gpu_ids a string
# - main_process_ip is only for multi-node
#
#
#
#
#
#
#
#
#
"""

COMPLETION_AT = (23, 2)  # the blank line inserted under "  # FSDP1 settings" in fsdp_config
HOVER_AT = (30, 6)  # fsdp_offload_params


class Client:
    """A minimal LSP client over a subprocess's stdio."""

    def __init__(self, cmd: list[str], settings: dict[str, Any], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd
        )
        self.settings = settings
        self.next_id = 0
        self.responses: dict[int, queue.Queue[Any]] = {}
        self.notes: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _send(self, msg: dict[str, Any]) -> None:
        body = json.dumps(msg).encode()
        with self.lock:
            assert self.proc.stdin is not None
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            msg = json.loads(out.read(length))
            now = time.perf_counter()
            if "id" in msg and "method" in msg:
                self._answer(msg)
            elif "id" in msg:
                self.responses.setdefault(msg["id"], queue.Queue()).put(msg)
            else:
                self.notes.put((now, msg))

    def _answer(self, msg: dict[str, Any]) -> None:
        result: Any = None
        if msg["method"] == "workspace/configuration":
            result = [self.settings.get(item.get("section", ""), None) for item in msg["params"]["items"]]
        self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})

    def request(self, method: str, params: Any, timeout: float = 30) -> Any:
        self.next_id += 1
        rid = self.next_id
        q = self.responses.setdefault(rid, queue.Queue())
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        msg = q.get(timeout=timeout)
        return msg.get("result")

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_diagnostics(self, uri: str, timeout: float = 10) -> tuple[float, list[Any]]:
        end = time.perf_counter() + timeout
        while True:
            at, msg = self.notes.get(timeout=max(0.001, end - time.perf_counter()))
            if msg.get("method") == "textDocument/publishDiagnostics" and msg["params"]["uri"] == uri:
                return at, msg["params"]["diagnostics"]

    def drain(self) -> None:
        while True:
            try:
                self.notes.get_nowait()
            except queue.Empty:
                return

    def rss_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=5)
            self.notify("exit", None)
            self.proc.wait(timeout=5)
        except Exception:  # noqa: BLE001
            self.proc.kill()


CAPS = {
    "workspace": {"configuration": True, "didChangeConfiguration": {"dynamicRegistration": True}},
    "textDocument": {
        "synchronization": {"didSave": True},
        "publishDiagnostics": {"relatedInformation": True, "versionSupport": True},
        "completion": {"completionItem": {"snippetSupport": True, "documentationFormat": ["markdown", "plaintext"]}},
        "hover": {"contentFormat": ["markdown", "plaintext"]},
    },
}


def measure(name: str, cmd: list[str], settings: dict[str, Any], rounds: int, workdir: Path) -> dict[str, Any]:
    path = workdir / "default_config.yaml"
    text = CONFIG_60.replace("  # FSDP1 settings\n", "  # FSDP1 settings\n  \n", 1)
    assert text.count("\n") == 61
    assert text.splitlines()[COMPLETION_AT[0]] == "  " and "fsdp_offload_params" in text.splitlines()[HOVER_AT[0]]
    path.write_text(text)
    uri = path.as_uri()
    t0 = time.perf_counter()
    c = Client(cmd, settings, workdir)
    c.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": workdir.as_uri(),
            "capabilities": CAPS,
            "initializationOptions": settings.get("init"),
            "workspaceFolders": [{"uri": workdir.as_uri(), "name": "bench"}],
        },
        timeout=60,
    )
    c.notify("initialized", {})
    startup = time.perf_counter() - t0
    if "yaml" in settings:
        c.notify("workspace/didChangeConfiguration", {"settings": {"yaml": settings["yaml"]}})
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}})
    c.wait_diagnostics(uri, timeout=60)
    time.sleep(0.5)  # let a server that validates twice on open settle
    c.drain()
    diag_ms: list[float] = []
    version = 1
    last: list[Any] = []
    for i in range(rounds):
        version += 1
        edited = text.replace("num_processes: 8", f"num_processes: {8 + (i % 2) * 8}")
        sent = time.perf_counter()
        c.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": edited}]},
        )
        at, diags = c.wait_diagnostics(uri)
        diag_ms.append((at - sent) * 1000)
        last = diags
        time.sleep(0.1)
        c.drain()
    doc = {"textDocument": {"uri": uri}}
    comp_ms, hover_ms = [], []
    n_items = 0
    for _ in range(rounds):
        t = time.perf_counter()
        res = c.request(
            "textDocument/completion", {**doc, "position": {"line": COMPLETION_AT[0], "character": COMPLETION_AT[1]}}
        )
        comp_ms.append((time.perf_counter() - t) * 1000)
        items = res.get("items", []) if isinstance(res, dict) else (res or [])
        n_items = len(items)
        t = time.perf_counter()
        c.request("textDocument/hover", {**doc, "position": {"line": HOVER_AT[0], "character": HOVER_AT[1]}})
        hover_ms.append((time.perf_counter() - t) * 1000)
    rss = c.rss_mb()
    c.close()
    q = statistics.quantiles(diag_ms, n=10)
    return {
        "server": name,
        "startup_ms": round(startup * 1000, 1),
        "diagnostics_median_ms": round(statistics.median(diag_ms), 2),
        "diagnostics_p90_ms": round(q[-1], 2),
        "diagnostics": len(last),
        "diagnostic_codes": sorted({str(d.get("code") or d.get("message", "")[:40]) for d in last}),
        "completion_median_ms": round(statistics.median(comp_ms), 2),
        "completion_items": n_items,
        "hover_median_ms": round(statistics.median(hover_ms), 2),
        "rss_mb": round(rss, 1),
        "rounds": rounds,
    }


def install_yamlls(into: Path) -> Path | None:
    npm = shutil.which("npm")
    node = shutil.which("node")
    if not npm or not node:
        print("yaml-language-server: skipped (node/npm not found)")
        return None
    proc = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--silent", f"yaml-language-server@{YAMLLS_VERSION}"],
        cwd=into,
        capture_output=True,
        text=True,
        timeout=300,
    )
    server = into / "node_modules" / "yaml-language-server" / "bin" / "yaml-language-server"
    if proc.returncode != 0 or not server.exists():
        print(f"yaml-language-server: skipped (npm install failed: {proc.stderr.strip()[:200]})")
        return None
    return server


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--no-yamlls", action="store_true", help="measure accelconf only")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results-lsp.json"))
    args = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "ws"
        work.mkdir()
        results.append(
            measure(
                "accelconf lsp",
                [sys.executable, "-m", "accelconf", "lsp"],
                {"accelconf": {}, "init": {"accelerateVersion": "1.15"}},
                args.rounds,
                work,
            )
        )
        if not args.no_yamlls:
            if not SCHEMA.exists():
                print(f"yaml-language-server: skipped ({SCHEMA.relative_to(ROOT)} is missing)")
            else:
                npm_dir = Path(tmp) / "npm"
                npm_dir.mkdir()
                server = install_yamlls(npm_dir)
                if server is not None:
                    yaml_settings = {
                        "validate": True,
                        "hover": True,
                        "completion": True,
                        "format": {"enable": True},
                        "schemaStore": {"enable": False},
                        "schemas": {SCHEMA.as_uri(): ["*.yaml"]},
                    }
                    results.append(
                        measure(
                            f"yaml-language-server {YAMLLS_VERSION}",
                            [shutil.which("node") or "node", str(server), "--stdio"],
                            {"yaml": yaml_settings, "init": None},
                            args.rounds,
                            work,
                        )
                    )
    cols = [
        ("server", "server", 26),
        ("diagnostics_median_ms", "diag median ms", 15),
        ("diagnostics_p90_ms", "diag p90 ms", 12),
        ("completion_median_ms", "completion ms", 14),
        ("hover_median_ms", "hover ms", 9),
        ("rss_mb", "RSS MB", 8),
        ("startup_ms", "startup ms", 11),
        ("diagnostics", "diagnostics", 11),
    ]
    print(" | ".join(h.ljust(w) for _, h, w in cols))
    print("-+-".join("-" * w for *_, w in cols))
    for r in results:
        print(" | ".join(str(r[k]).ljust(w) for k, _, w in cols))
    meta = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "config_lines": CONFIG_60.count("\n") + 1,
        "node": subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
        if shutil.which("node")
        else None,
    }
    Path(args.out).write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    print(f"wrote {os.path.relpath(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
