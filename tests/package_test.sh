#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then builds tests/package/example.c
# against it twice, through find_package(ember) (shared and static) and through
# pkg-config, and checks each prints the stories260K golden story; and that the installed
# libember.so exports the C API (ember_*) and nothing else.
# usage: package_test.sh BUILD_DIR SOURCE_DIR MODEL.ember
set -euo pipefail
build="$1" source="$2" model="$3"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
expected="Once upon a time, there was a little girl named Lily."

check() {  # check NAME BINARY
  local out
  out=$("$2" "$model" 40)
  if [[ "$out" != "$expected"* ]]; then
    echo "FAIL: $1 printed: $out"
    exit 1
  fi
  echo "ok: $1: ${out:0:60}..."
}

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$source/tests/package" -B "$tmp/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
check "find_package, shared" "$tmp/consumer/example_shared"
check "find_package, static" "$tmp/consumer/example_static"

pc_dir=$(dirname "$(find "$tmp/prefix" -name ember.pc)")
export PKG_CONFIG_PATH="$pc_dir"
cc -std=c99 -Wall -Werror "$source/tests/package/example.c" -o "$tmp/example_pc" \
  $(pkg-config --cflags --libs ember) -Wl,-rpath,"$(pkg-config --variable=libdir ember)"
check "pkg-config, shared" "$tmp/example_pc"
cc -std=c99 -Wall -Werror -static-libstdc++ "$source/tests/package/example.c" \
  -o "$tmp/example_pc_static" $(pkg-config --cflags ember) \
  "$(pkg-config --variable=libdir ember)/libember.a" \
  $(pkg-config --libs-only-l --static ember | sed 's/-lember//')
check "pkg-config, static" "$tmp/example_pc_static"

lib=$(find "$tmp/prefix" -name 'libember.so.*.*' | head -1)
others=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^ember_' || true)
if [[ -n "$others" ]]; then
  echo "FAIL: $lib exports more than the C API: $(echo "$others" | head -5 | tr '\n' ' ')"
  exit 1
fi
echo "ok: libember.so exports $(nm -D --defined-only "$lib" | grep -c ' ember_') ember_* symbols, nothing else"
