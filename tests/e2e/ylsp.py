"""A minimal LSP client for yaml-language-server: open files, collect published diagnostics."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any


class Client:
    def __init__(self, cmd: list[str]) -> None:
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.diagnostics: dict[str, list[dict[str, Any]]] = {}
        self.settings: dict[str, Any] = {}

    def send(self, msg: dict[str, Any]) -> None:
        body = json.dumps(msg).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        length = 0
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise EOFError("server closed")
            if line in (b"\r\n", b"\n"):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.proc.stdout.read(length))

    def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            msg = self.read()
            if msg.get("id") == rid and "method" not in msg:
                return msg.get("result")
            self.handle(msg)

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def handle(self, msg: dict[str, Any]) -> None:
        method = msg.get("method")
        if method == "textDocument/publishDiagnostics":
            self.diagnostics[msg["params"]["uri"]] = msg["params"]["diagnostics"]
        elif "id" in msg and method:  # a request from the server
            result: Any = None
            if method == "workspace/configuration":
                result = [self.settings.get(item.get("section", ""), None) for item in msg["params"]["items"]]
            self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})

    def pump(self, until: float) -> None:
        import select

        assert self.proc.stdout is not None
        while time.monotonic() < until:
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.05)
            if ready:
                self.handle(self.read())

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
        except Exception:
            pass
        self.proc.kill()
        self.proc.wait()


def diagnostics_for(
    server: Path, schema: Path | None, files: list[Path], timeout: float = 60.0, *, catalog_url: str | None = None
) -> dict[Path, list[dict[str, Any]]]:
    """Diagnostics yaml-language-server publishes for each file, with ``schema`` applied to all of them,
    or (``schema`` None) with the schemas a SchemaStore-style catalog at ``catalog_url`` assigns by name."""
    client = Client(["node", str(server), "--stdio"])
    try:
        schemas = {schema.resolve().as_uri(): ["*.yaml", "*.yml"]} if schema is not None else {}
        store = {"enable": True, "url": catalog_url} if catalog_url else {"enable": False}
        yaml_settings = {
            "validate": True,
            "hover": True,
            "completion": True,
            "yamlVersion": "1.1",
            "schemas": schemas,
            "schemaStore": store,
        }
        client.settings = {"yaml": yaml_settings}
        client.request(
            "initialize",
            {
                "processId": None,
                "rootUri": None,
                "capabilities": {"workspace": {"configuration": True}, "textDocument": {"publishDiagnostics": {}}},
            },
        )
        client.notify("initialized", {})
        client.notify("workspace/didChangeConfiguration", {"settings": {"yaml": yaml_settings}})
        uris = {}
        for path in files:
            uri = path.resolve().as_uri()
            uris[uri] = path
            client.notify(
                "textDocument/didOpen",
                {
                    "textDocument": {
                        "uri": uri,
                        "languageId": "yaml",
                        "version": 1,
                        "text": path.read_text(encoding="utf-8"),
                    }
                },
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and len(client.diagnostics) < len(uris):
            client.pump(min(deadline, time.monotonic() + 0.5))
            if deadline - time.monotonic() < timeout / 2:
                # yaml-language-server can drop a validation it started before the settings arrived
                # (seen once in 81 files on a loaded machine): ask again for those still silent.
                for uri in [u for u in uris if u not in client.diagnostics]:
                    client.notify(
                        "textDocument/didChange",
                        {
                            "textDocument": {"uri": uri, "version": 2},
                            "contentChanges": [{"text": uris[uri].read_text(encoding="utf-8")}],
                        },
                    )
                timeout = 0.0  # once
        client.pump(time.monotonic() + 1.0)
        return {p: client.diagnostics.get(u, []) for u, p in uris.items() if u in client.diagnostics}
    finally:
        client.close()
