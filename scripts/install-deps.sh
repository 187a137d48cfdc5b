#!/usr/bin/env bash
# Installs what cloudfit needs to build and test, from Debian's package archive only.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config
  libcli11-dev nlohmann-json3-dev libfmt-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcpp-httplib-dev
  # The web page's end-to-end test drives Debian's Chromium with playwright-core from npm.
  chromium nodejs
  # `cloudfit probe` measures CPU GEMM through OpenBLAS when present (opened at run time).
  libopenblas0-pthread
  # The clang build and the libFuzzer harnesses (scripts/fuzz.sh): clang and its runtimes.
  clang libclang-rt-dev
)
# Some machines carry npm inside a nodejs build of their own; ask Debian for it only when absent.
command -v npm >/dev/null 2>&1 || packages+=(npm)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# playwright-core is the only npm package, pinned in tests/e2e/package.json. It drives the
# system Chromium and downloads no browser. Without the registry the e2e test skips (exit 77).
if [ ! -d "$(dirname "$0")/../tests/e2e/node_modules/playwright-core" ]; then
  (cd "$(dirname "$0")/../tests/e2e" &&
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --silent) ||
    echo "warning: npm install in tests/e2e failed; the browser test will be skipped" >&2
fi
