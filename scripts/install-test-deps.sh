#!/usr/bin/env bash
# Installs what the test suite needs beyond the build: Debian's Chromium and Node.js for the web
# page's browser test, zsh and fish to parse the generated completions, and the pinned npm
# packages of tests/e2e (playwright-core, which drives the system Chromium and downloads no
# browser) and tests/formats (HashiCorp's HCL parser and the Kubernetes schema validators), and
# wrk and curl for the server benchmarks' small runs. Without the registry those tests skip
# (exit 77).
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(chromium nodejs zsh fish wrk curl)
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

for dir in tests/e2e tests/formats; do
  first=$(node -e "console.log(Object.keys(require('./$dir/package.json').dependencies)[0])")
  if [ ! -d "$dir/node_modules/$first" ]; then
    (cd "$dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --silent) ||
      echo "warning: npm ci in $dir failed; its tests will be skipped" >&2
  fi
done
