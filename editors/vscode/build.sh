#!/usr/bin/env bash
# Package the accelconf VS Code extension into a .vsix.
#
#   bash editors/vscode/build.sh [OUTPUT.vsix]
#
# Default output: editors/vscode/accelconf-<version>.vsix (version from package.json); the path is
# printed as the last line. Steps: install the pinned npm packages (package-lock.json) when
# node_modules is missing, and run the pinned @vscode/vsce. vsce bundles the production
# dependencies (vscode-languageclient), so the .vsix runs without a build step. No Python and no
# schemas are needed: the extension contributes no JSON/YAML schema (the language server is the
# one checker, so VS Code's JSON support does not report the same problems a second time).
# Needs Node >= 20 and npm; reaches the npm registry only when node_modules is missing.
set -euo pipefail

caller="$PWD"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

for tool in node npm; do
    command -v "$tool" >/dev/null || { echo "build.sh: $tool not found (Node >= 20 is needed)" >&2; exit 2; }
done

if [[ ! -d node_modules/vscode-languageclient || ! -d node_modules/@vscode/vsce ]]; then
    if [[ -f package-lock.json ]]; then
        npm ci --no-audit --no-fund >&2
    else
        npm install --no-audit --no-fund >&2
    fi
fi

version="$(node -p 'require("./package.json").version')"
out="${1:-$here/accelconf-$version.vsix}"
case "$out" in /*) ;; *) out="$caller/$out" ;; esac

# --allow-missing-repository: the package.json has no public repository URL to name.
npx --no-install vsce package --allow-missing-repository --out "$out" >&2

# A .vsix without the client library would install but fail to activate.
listing="$(unzip -l "$out")"
if [[ "$listing" != *extension/node_modules/vscode-languageclient/package.json* ]]; then
    echo "build.sh: $out lacks node_modules/vscode-languageclient" >&2
    exit 1
fi
echo "$out"
