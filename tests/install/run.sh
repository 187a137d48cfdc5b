#!/usr/bin/env bash
# Installs the build into a temporary prefix, checks what `cmake --install` put there, and
# builds a small consumer against it twice: with find_package(cloudfit) and with pkg-config.
# Usage: run.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/cloudfit include/cloudfit/export.h include/cloudfit/recommend.h \
         lib/libcloudfit.a lib/cmake/cloudfit/cloudfitConfig.cmake \
         lib/cmake/cloudfit/cloudfitConfigVersion.cmake lib/pkgconfig/cloudfit.pc \
         share/man/man1/cloudfit.1 share/bash-completion/completions/cloudfit \
         share/zsh/site-functions/_cloudfit share/fish/vendor_completions.d/cloudfit.fish; do
  [ -f "$prefix/$f" ] || { echo "FAIL: cmake --install did not install $f"; exit 1; }
done
"$prefix/bin/cloudfit" --version | grep -q "[0-9]" || { echo "FAIL: installed cloudfit --version"; exit 1; }

# find_package(cloudfit) and the imported target cloudfit::cloudfit.
cmake -S "$src/tests/install/consumer" -B "$tmp/with-cmake" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/with-cmake" >/dev/null
out=$("$tmp/with-cmake/consumer")
grep -q "instance types; best: " <<<"$out" || { echo "FAIL: CMake consumer printed: $out"; exit 1; }
grep -q "^  accelerators: " <<<"$out" || { echo "FAIL: CMake consumer's export: $out"; exit 1; }

# pkg-config (the .pc file finds its prefix from where it is installed).
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs cloudfit)
"${CXX:-c++}" "$src/tests/install/consumer/main.cc" $flags -o "$tmp/with-pkg-config"
out=$("$tmp/with-pkg-config")
grep -q "instance types; best: " <<<"$out" || { echo "FAIL: pkg-config consumer printed: $out"; exit 1; }

echo "installed, and built against with find_package and pkg-config"
echo "2 passed, 0 failed"
