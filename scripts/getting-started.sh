#!/usr/bin/env bash
# Runs every ```bash block of Docs/getting-started.md, as written and in order, in one shell
# with -euo pipefail, the built `burrow` first on PATH: the guide is followed verbatim by the
# test suite (BurrowCLITests/GettingStartedTests), so it cannot drift from what works.
#   scripts/getting-started.sh [BURROW_BINARY_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bin_dir=${1:-${BURROW_BIN_DIR:-$PWD/.build/release}}
[ -x "$bin_dir/burrow" ] || { echo "no burrow in $bin_dir (make build first)" >&2; exit 2; }
walk=$(mktemp)
trap 'rm -f "$walk"' EXIT
{
  echo 'set -euo pipefail'
  # A walk that stops half way must not leave its `burrow run` behind.
  echo 'trap '"'"'kill $(jobs -p) 2>/dev/null || true'"'"' EXIT'
  echo 'set -x'
  awk '/^```bash$/ { inside = 1; next } /^```/ { inside = 0 } inside { print }' Docs/getting-started.md
} > "$walk"
PATH="$bin_dir:$PATH" bash "$walk"
