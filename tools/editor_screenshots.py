"""Copy the editor screenshots docs/editors.md shows from an end-to-end run into docs/images/editors/.

    python tools/editor_screenshots.py [ARTIFACTS]        # default build/e2e (where `make e2e` puts them)

The end-to-end tests (tests/e2e/test_editors.py for VS Code, tests/e2e/test_editor_screenshots.py for
Neovim and Emacs) write the screenshots; SHOTS below maps each picture the page shows, under a
stable name, to the file the tests write. Every source must be there: a missing one exits 2 and
nothing is copied. A docs test checks that each picture the page shows is listed here, exists, and
is still written by an end-to-end test.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEST = ROOT / "docs" / "images" / "editors"
# name under docs/images/editors/ -> name the end-to-end test writes into the artifacts folder
SHOTS: dict[str, str] = {
    "vscode-problems.png": "vscode-problems.png",
    "vscode-quickfix.png": "vscode-quickfix-menu.png",
    "vscode-after-fix.png": "vscode-after-fix.png",
    "vscode-completion.png": "vscode-completion.png",
    "nvim-diagnostics.svg": "nvim-diagnostics.svg",
    "nvim-hover.svg": "nvim-hover.svg",
    "nvim-completion.svg": "nvim-completion.svg",
    "emacs-diagnostics.svg": "emacs-diagnostics.svg",
    "emacs-completion.svg": "emacs-completion.svg",
}


def copy_shots(artifacts: Path, dest: Path = DEST) -> list[Path]:
    """Copy every SHOTS source from ``artifacts`` to ``dest``; FileNotFoundError naming the missing ones."""
    missing = [src for src in SHOTS.values() if not (artifacts / src).is_file()]
    if missing:
        raise FileNotFoundError(f"{artifacts}: no {', '.join(missing)} (run `make e2e` first)")
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for name, src in SHOTS.items():
        target = dest / name
        tmp = target.with_suffix(target.suffix + ".tmp")
        shutil.copyfile(artifacts / src, tmp)
        tmp.replace(target)  # atomic: a reader never sees half a picture
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("artifacts", nargs="?", type=Path, default=ROOT / "build" / "e2e")
    args = parser.parse_args(argv)
    try:
        written = copy_shots(args.artifacts)
    except FileNotFoundError as exc:
        print(f"editor_screenshots.py: {exc}", file=sys.stderr)
        return 2
    total = sum(p.stat().st_size for p in written)
    print(f"{len(written)} screenshots, {total // 1024} KiB, in {DEST.relative_to(ROOT)}/")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
