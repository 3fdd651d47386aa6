#!/usr/bin/env bash
# Sets up, builds and runs every test. This is what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${EMBER_BUILD_DIR:-build}"
jobs="$(nproc)"
# CI must not skip the tests that need ../shared/models; say EMBER_REQUIRE_MODELS=0 to
# let them skip when you have no models.
export EMBER_REQUIRE_MODELS="${EMBER_REQUIRE_MODELS:-1}"

start=$(date +%s)
stage() { echo; echo "=== [$(( $(date +%s) - start ))s] $*"; }

stage "set-up"
tools/setup.sh all

stage "native build ($build_dir)"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" -j "$jobs"

stage "native tests"
ctest --test-dir "$build_dir" -j "$jobs" --output-on-failure

stage "all tests passed in $(( $(date +%s) - start ))s"
