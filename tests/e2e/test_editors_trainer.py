"""A real editor on a Trainer arguments YAML: headless Neovim (editors/nvim's setup) starts the
server, and its own completion request at a position lists the fields of the installed release."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from accelconf.trainer import fields, releases

ROOT = Path(__file__).resolve().parents[2]
NVIM_DIR = ROOT / "editors" / "nvim"

LUA_COMPLETE = r"""
local result = { labels = {}, hover = vim.NIL }
local ok, err = pcall(function()
  vim.opt.rtp:prepend(os.getenv("ACCELCONF_NVIM_RTP"))
  vim.cmd("filetype on")
  require("accelconf").setup({ cmd = vim.json.decode(os.getenv("ACCELCONF_CMD")), settings = { accelconf = {} } })
  vim.cmd.edit(vim.fn.fnameescape(os.getenv("ACCELCONF_FILE")))
  local buf = vim.api.nvim_get_current_buf()
  local get_clients = vim.lsp.get_clients or vim.lsp.get_active_clients
  result.attached = vim.wait(20000, function() return #get_clients({ bufnr = buf }) > 0 end, 50)
  local client = get_clients({ bufnr = buf })[1]
  local uri = vim.uri_from_bufnr(buf)
  local line = tonumber(os.getenv("ACCELCONF_LINE"))
  local got = client:request_sync("textDocument/completion",
    { textDocument = { uri = uri }, position = { line = line, character = 0 } }, 20000, buf)
  local items = got and got.result and (got.result.items or got.result) or {}
  for _, item in ipairs(items) do table.insert(result.labels, item.label) end
  local hov = client:request_sync("textDocument/hover",
    { textDocument = { uri = uri }, position = { line = 1, character = 2 } }, 20000, buf)
  if hov and hov.result then result.hover = hov.result.contents.value end
end)
result.ok = ok
result.error = ok and vim.NIL or tostring(err)
vim.fn.writefile({ vim.json.encode(result) }, os.getenv("ACCELCONF_OUT"))
vim.cmd("qa!")
"""


def _nvim() -> str:
    for exe in (os.environ.get("ACCELCONF_NVIM"), str(Path(sys.executable).parent / "nvim"), shutil.which("nvim")):
        if exe and Path(exe).exists():
            return exe
    reason = "no Neovim found (run `bash tools/install-nvim.sh`, or set ACCELCONF_NVIM)"
    print(reason)
    pytest.skip(reason)


def test_nvim_completes_the_fields_of_a_trainer_arguments_yaml(tmp_path: Path) -> None:
    exe = _nvim()
    args = tmp_path / "sft.yaml"
    args.write_text("output_dir: out\nlearning_rate: 2.0e-5\nbf16: true\n\n", encoding="utf-8")
    script, out = tmp_path / "complete.lua", tmp_path / "out.json"
    script.write_text(LUA_COMPLETE, encoding="utf-8")
    home = tmp_path / "home"
    env = {
        **os.environ,
        **{f"XDG_{d.upper()}_HOME": str(home / d) for d in ("config", "data", "state", "cache")},
        "ACCELCONF_NVIM_RTP": str(NVIM_DIR),
        "ACCELCONF_CMD": json.dumps([sys.executable, "-m", "accelconf", "lsp"]),
        "ACCELCONF_FILE": str(args),
        "ACCELCONF_LINE": "3",
        "ACCELCONF_OUT": str(out),
    }
    proc = subprocess.run(
        [exe, "--headless", "--clean", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {script}"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert out.is_file(), f"nvim wrote no result\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["ok"], result["error"]
    assert result["attached"]
    want = set(releases.fields(fields.version())) - {"output_dir", "learning_rate", "bf16"}
    assert set(result["labels"]) == want
    assert str(result["hover"]).startswith("**learning_rate** · TrainingArguments · float")
