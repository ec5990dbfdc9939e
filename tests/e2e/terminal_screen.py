"""A terminal editor run for real in a tmux pane, read back as text and kept as an SVG picture.

tmux is the terminal emulator: the editor draws into a pane of a fixed size, ``capture-pane``
gives the screen as the user sees it (``-e``: with its colours and attributes), and rich turns
those escape sequences into an SVG terminal picture. Each test gets its own tmux server socket,
so nothing touches a user's tmux sessions.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path


def have_tmux() -> bool:
    return shutil.which("tmux") is not None


class TmuxScreen:
    """One editor in a detached tmux session of ``width`` x ``height`` cells."""

    def __init__(self, socket: Path, command: list[str], env: dict[str, str], cwd: Path, width: int, height: int):
        self.socket = socket
        self.width = width
        shell_env = [f"{k}={v}" for k, v in env.items()]
        self._tmux(
            "new-session",
            "-d",
            "-s",
            "editor",
            "-x",
            str(width),
            "-y",
            str(height),
            "-c",
            str(cwd),
            "env",
            *shell_env,
            *command,
        )

    def _tmux(self, *args: str) -> str:
        proc = subprocess.run(
            ["tmux", "-S", str(self.socket), *args],
            capture_output=True,
            text=True,
            timeout=30,
            env={**os.environ, "TMUX": ""},
        )
        if proc.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args[:2])}: {proc.stderr.strip()}")
        return proc.stdout

    def send(self, *keys: str) -> None:
        """Keys as tmux names them (``Escape``, ``C-x``) or literal words, in order."""
        for key in keys:
            self._tmux("send-keys", "-t", "editor", key)
            time.sleep(0.15)

    def text(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "editor")

    def wait_for(self, *needles: str, timeout: float = 60) -> str:
        """The screen once every needle shows on it; AssertionError with the last screen otherwise."""
        deadline = time.time() + timeout
        screen = self.text()
        while not all(n in screen for n in needles):
            if time.time() > deadline:
                raise AssertionError(f"{needles} never showed on the screen:\n{screen}")
            time.sleep(0.3)
            screen = self.text()
        return screen

    def save_svg(self, path: Path, title: str) -> None:
        """The screen, colours included, as an SVG terminal picture."""
        from rich.console import Console
        from rich.text import Text

        ansi = self._tmux("capture-pane", "-p", "-e", "-t", "editor").rstrip("\n")
        with open(os.devnull, "w", encoding="utf-8") as sink:
            console = Console(record=True, width=self.width, file=sink, color_system="truecolor", force_terminal=True)
            console.print(Text.from_ansi(ansi), soft_wrap=True)
        # rich links its font from a CDN; the picture names none, so it loads nothing (the site works offline)
        svg = re.sub(r"@font-face \{.*?\}\s*", "", console.export_svg(title=title), flags=re.DOTALL)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(svg, encoding="utf-8")

    def close(self) -> None:
        subprocess.run(["tmux", "-S", str(self.socket), "kill-server"], capture_output=True, timeout=30)
