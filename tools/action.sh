#!/usr/bin/env bash
# The GitHub Action's validate step (action.yml), runnable anywhere: INPUT_FILES (globs, `**` crosses
# folders), INPUT_FORMAT (github | sarif), INPUT_SARIF_FILE, INPUT_ARGS. Exits with validate's code;
# writes it to $GITHUB_OUTPUT when set. No file matching the globs is a warning, not a failure (as ruff
# does when it finds no Python file), so a workflow can run on repositories without configs.
set -uo pipefail
shopt -s globstar nullglob

format="${INPUT_FORMAT:-github}"
case "$format" in
  github|sarif) ;;
  *) echo "::error title=accelconf::format must be github or sarif, not '$format'"; exit 2 ;;
esac

files=()
# shellcheck disable=SC2206  # word splitting and globbing of the patterns is the point
for pattern in ${INPUT_FILES:-}; do
  files+=($pattern)
done
if [ ${#files[@]} -eq 0 ]; then
  echo "::warning title=accelconf::no file matches '${INPUT_FILES:-}'"
  [ -n "${GITHUB_OUTPUT:-}" ] && echo "exit-code=0" >> "$GITHUB_OUTPUT"
  exit 0
fi

# shellcheck disable=SC2086  # INPUT_ARGS is a list of arguments
if [ "$format" = sarif ]; then
  accelconf validate --format sarif ${INPUT_ARGS:-} "${files[@]}" > "${INPUT_SARIF_FILE:-accelconf.sarif}"
  code=$?
  echo "accelconf: ${#files[@]} file(s) checked, SARIF written to ${INPUT_SARIF_FILE:-accelconf.sarif} (exit $code)"
else
  accelconf validate --format github ${INPUT_ARGS:-} "${files[@]}"
  code=$?
fi
[ -n "${GITHUB_OUTPUT:-}" ] && echo "exit-code=$code" >> "$GITHUB_OUTPUT"
exit "$code"
