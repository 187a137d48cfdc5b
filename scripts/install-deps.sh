#!/usr/bin/env bash
# Installs what cloudfit needs to build and run, from Debian's package archive only. The test
# suite's extra tools (Chromium and Node.js for the browser test, zsh and fish to check the
# completions) are installed by scripts/install-test-deps.sh, which scripts/test.sh runs.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config
  libcli11-dev nlohmann-json3-dev libfmt-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcpp-httplib-dev
  # `catalog refresh` fetches prices with libcurl (opened at run time; the headers are for the
  # build) and signs requests with OpenSSL's libcrypto.
  libcurl4-openssl-dev libssl-dev
  # `cloudfit probe` measures CPU GEMM through OpenBLAS when present (opened at run time).
  libopenblas0-pthread
  # tools/derive_operators.py (standard library only) checks data/operators.csv in ctest.
  python3
  # The clang build and the libFuzzer harnesses (scripts/fuzz.sh): clang and its runtimes.
  clang libclang-rt-dev
)
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
