#!/usr/bin/env bash
# Package the accelconf VS Code extension into a .vsix.
#
#   bash editors/vscode/build.sh [OUTPUT.vsix]
#
# Default output: editors/vscode/accelconf-<version>.vsix (version from package.json); the path is
# printed as the last line. Steps: copy the generated JSON Schemas from the repository's schemas/
# into editors/vscode/schemas/, install the pinned npm packages (package-lock.json) when
# node_modules is missing, and run the pinned @vscode/vsce. ACCELCONF_SCHEMA_DIR overrides where
# the schemas are taken from. vsce bundles the production
# dependencies (vscode-languageclient), so the .vsix runs without a build step.
# Needs Node >= 20 and npm; reaches the npm registry only when node_modules is missing.
set -euo pipefail

caller="$PWD"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
schema_dir="${ACCELCONF_SCHEMA_DIR:-$root/schemas}"
cd "$here"

for tool in node npm; do
    command -v "$tool" >/dev/null || { echo "build.sh: $tool not found (Node >= 20 is needed)" >&2; exit 2; }
done

schemas=(accelerate-config.schema.json deepspeed-config.schema.json)
mkdir -p schemas
for name in "${schemas[@]}"; do
    if [[ ! -f "$schema_dir/$name" ]]; then
        echo "build.sh: $schema_dir/$name is missing; generate the schemas first" >&2
        exit 2
    fi
    cp "$schema_dir/$name" "schemas/$name"
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
