#!/usr/bin/env bash
# Install Emacs with Eglot and yaml-mode for the editor tests (tests/e2e/test_editors.py), idempotently.
#
#   bash tools/install-emacs.sh
#
# Debian/Ubuntu only: apt-get installs emacs-nox (Emacs 28.2 on bookworm, no X needed for the
# batch-mode test), elpa-eglot (Eglot 1.9), elpa-yaml-mode and tmux (the terminal the screenshot
# tests, tests/e2e/test_editor_screenshots.py, draw Emacs and Neovim in). Runs apt-get update first. Needs
# root or sudo. Exits 0 when they are already there; 1 with a reason when they cannot be had.
set -euo pipefail

have() {
    command -v tmux >/dev/null 2>&1 && command -v emacs >/dev/null 2>&1 &&
        emacs --batch --eval "(progn (require 'eglot) (require 'yaml-mode))" >/dev/null 2>&1
}

if have; then
    command -v emacs
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-emacs.sh: no apt-get here; install Emacs >= 28 with the eglot and yaml-mode packages yourself" >&2
    exit 1
fi
sudo=""
if [[ "$(id -u)" != 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
        echo "install-emacs.sh: apt-get needs root (or sudo)" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q >&2
$sudo apt-get install -y -q --no-install-recommends emacs-nox elpa-eglot elpa-yaml-mode tmux >&2
if have; then
    command -v emacs
    exit 0
fi
echo "install-emacs.sh: emacs, eglot, yaml-mode or tmux still missing after apt-get install" >&2
exit 1
