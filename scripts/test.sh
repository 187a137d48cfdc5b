#!/usr/bin/env bash
# Builds cloudfit and runs the whole test suite through ctest.
# --sanitize builds and runs it under AddressSanitizer + UndefinedBehaviorSanitizer instead.
# The test suite's own tools (Chromium, Node.js, zsh, fish, pinned npm packages) are installed
# first by scripts/install-test-deps.sh, so the CLI-only setup (scripts/install-deps.sh) needs none.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-test-deps.sh
scripts/build.sh "$@"
dir=build
[ "${1:-}" = "--sanitize" ] && dir=build-asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)"
