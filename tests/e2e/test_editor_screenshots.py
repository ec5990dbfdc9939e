"""Neovim and Emacs as a user sees them: each runs in a terminal (a tmux pane), attached to
``accelconf lsp`` through the setups in editors/, and the test reads the screen for the server's
diagnostics, hover and completion, then keeps the screen as an SVG picture in the artifacts folder
(`make e2e`: build/e2e/). ``tools/editor_screenshots.py`` copies the pictures docs/editors.md shows.

The screenshot names are the ones ``tools/editor_screenshots.py`` lists; a docs test checks that
every picture the editors page shows is still written by an end-to-end test.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.terminal_screen import TmuxScreen, have_tmux
from tests.e2e.test_editors import NVIM_DIR, RECOGNIZE, ROOT, SERVER, emacs, nvim  # noqa: F401 - fixtures

WIDTH, HEIGHT = 100, 24


@pytest.fixture
def artifacts(tmp_path: Path) -> Path:
    """`make e2e` sets ACCELCONF_E2E_ARTIFACTS: the pictures land there."""
    return Path(os.environ.get("ACCELCONF_E2E_ARTIFACTS") or tmp_path / "artifacts")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project holding train.yaml: an accelerate config with a bare `no` and a misspelt FSDP key."""
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    shutil.copyfile(RECOGNIZE / "config" / "train.yaml", proj / "train.yaml")
    return proj


def _base_env(home: Path) -> dict[str, str]:
    env = {"HOME": str(home), "TERM": "xterm-256color", "PATH": os.environ.get("PATH", "")}
    if os.environ.get("PYTHONPATH"):  # the server runs this checkout's accelconf, as the tests do
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def _screen(tmp_path: Path, command: list[str], env: dict[str, str], cwd: Path) -> Iterator[TmuxScreen]:
    if not have_tmux():
        reason = "no tmux, the terminal the editors are drawn in (Debian: apt-get install tmux)"
        print(reason)
        pytest.skip(reason)
    screen = TmuxScreen(tmp_path / "tmux.sock", command, env, cwd, WIDTH, HEIGHT)
    try:
        yield screen
    finally:
        screen.close()


NVIM_INIT = """
vim.opt.rtp:prepend(os.getenv("ACCELCONF_NVIM_RTP"))
vim.cmd("filetype on")
vim.o.number = true
vim.o.shortmess = vim.o.shortmess .. "I"
-- Neovim 0.11 shows no virtual text by default; the README of editors/nvim suggests turning it on.
vim.diagnostic.config({ virtual_text = true })
require("accelconf").setup({ cmd = vim.json.decode(os.getenv("ACCELCONF_CMD")) })
"""


@pytest.fixture
def nvim_screen(nvim: tuple[str, tuple[int, int, int]], tmp_path: Path, project: Path) -> Iterator[TmuxScreen]:
    exe, _ = nvim
    init = tmp_path / "init.lua"
    init.write_text(NVIM_INIT, encoding="utf-8")
    home = tmp_path / "home"
    env = _base_env(home)
    for sub in ("config", "data", "state", "cache"):
        (home / sub).mkdir(parents=True, exist_ok=True)
        env[f"XDG_{sub.upper()}_HOME"] = str(home / sub)
    env.update({"ACCELCONF_NVIM_RTP": str(NVIM_DIR), "ACCELCONF_CMD": json.dumps(SERVER)})
    command = [exe, "--clean", "-n", "-i", "NONE", "-u", str(init), "train.yaml"]
    yield from _screen(tmp_path, command, env, project)


def test_nvim_screen_shows_diagnostics_hover_and_completion(nvim_screen: TmuxScreen, artifacts: Path) -> None:
    screen = nvim_screen
    # Diagnostics as virtual text, then the float of line 4 (CTRL-W d) with the whole message.
    screen.wait_for("unquoted `no` is the YAML boolean", "unknown key `fsdp_cpu_offload`")
    screen.send("4G", "C-w", "d")
    screen.wait_for("Diagnostics:", "[yaml-bool-value]")
    screen.save_svg(artifacts / "nvim-diagnostics.svg", "Neovim: train.yaml")
    # Hover on distributed_type (K).
    screen.send("3G", "K")
    screen.wait_for("distributed_type", "Effective value: FSDP")
    screen.save_svg(artifacts / "nvim-hover.svg", "Neovim: train.yaml")
    # Completion on a new last line (omnifunc, CTRL-X CTRL-O): the top-level keys not yet written.
    screen.send("G", "o", "C-x", "C-o")
    screen.wait_for("machine_rank", "main_process_port")
    screen.save_svg(artifacts / "nvim-completion.svg", "Neovim: train.yaml")


EMACS_INIT = """
(package-activate-all)
(setq inhibit-startup-screen t confirm-kill-processes nil warning-minimum-level :error)
(setq native-comp-async-report-warnings-errors 'silent)
(setq accelconf-eglot-command (read (getenv "ACCELCONF_CMD")))
(load (getenv "ACCELCONF_SNIPPET"))
(global-display-line-numbers-mode 1)
"""


@pytest.fixture
def emacs_screen(emacs: str, tmp_path: Path, project: Path) -> Iterator[TmuxScreen]:
    init = tmp_path / "init.el"
    init.write_text(EMACS_INIT, encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    env = _base_env(home)
    env["ACCELCONF_CMD"] = "(" + " ".join(json.dumps(p) for p in SERVER) + ")"
    env["ACCELCONF_SNIPPET"] = str(ROOT / "editors" / "emacs" / "accelconf-eglot.el")
    yield from _screen(tmp_path, [emacs, "-nw", "-q", "-l", str(init), "train.yaml"], env, project)


def test_emacs_screen_shows_flymake_diagnostics_and_completion(emacs_screen: TmuxScreen, artifacts: Path) -> None:
    screen = emacs_screen
    screen.wait_for("eglot:proj", "Flymake[")
    # The buffer's diagnostics listed under the file (M-x flymake-show-buffer-diagnostics).
    screen.send("M-x", "flymake-show-buffer-diagnostics", "Enter")
    screen.wait_for("unquoted `no` is the YAML boolean", "unknown key `fsdp_cpu_offload`")
    screen.save_svg(artifacts / "emacs-diagnostics.svg", "Emacs: train.yaml")
    # Completion at point (M-x completion-at-point) on a new last line: the keys not yet written.
    screen.send("C-x", "1", "M->", "Enter", "M-x", "completion-at-point", "Enter")
    screen.wait_for("*Completions*", "machine_rank")
    screen.save_svg(artifacts / "emacs-completion.svg", "Emacs: train.yaml")
