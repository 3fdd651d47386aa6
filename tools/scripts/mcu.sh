#!/usr/bin/env bash
# Builds the Cortex-M55 image (examples/mcu: stories260K, no operating system) and runs it
# under qemu-system-arm's mps3-an547 machine with a timeout. Standard output is what the
# board's UART printed: the greedy story from BOS, its token ids, and the instructions,
# stack and heap it took; build logs go to standard error.
#
#   tools/scripts/mcu.sh [--dtype f32|q8] [--check] [--timeout SECONDS]
#
#   --dtype    weights embedded in flash (default f32; q8 is a quarter of the size)
#   --check    compare the story with llama2.c's golden output: f32 token for token with
#              the text, q8 its first 100 tokens; exit 1 if it differs, or if the image
#              links libstdc++'s exception machinery
#   --timeout  seconds qemu may run (default 300)
#
#   EMBER_BUILD_DIR=build        the host build; its tools/ember converts the model (built
#                                here if missing)
#   EMBER_MCU_BUILD_DIR=DIR      the images' build (default: <host build>-mcu; it makes both
#                                the f32 and the q8 image)
# Needs `tools/scripts/setup.sh all` (arm-none-eabi GCC, newlib, qemu-system-arm).
set -euo pipefail
cd "$(dirname "$0")/../.."

dtype=f32
check=0
timeout_s=300
while [ $# -gt 0 ]; do
  case "$1" in
    --dtype) dtype="${2:?--dtype needs f32 or q8}"; shift 2 ;;
    --check) check=1; shift ;;
    --timeout) timeout_s="${2:?--timeout needs seconds}"; shift 2 ;;
    *) echo "usage: $0 [--dtype f32|q8] [--check] [--timeout SECONDS]" >&2; exit 2 ;;
  esac
done
case "$dtype" in f32|q8) ;; *) echo "$0: --dtype is f32 or q8, not '$dtype'" >&2; exit 2 ;; esac

jobs="$(nproc)"
host_dir="${EMBER_BUILD_DIR:-build}"
mcu_dir="${EMBER_MCU_BUILD_DIR:-$host_dir-mcu}"
log() { echo "[mcu] $*" >&2; }

if [ ! -x "$host_dir/tools/ember" ]; then
  log "building the host's ember (for ember convert) in $host_dir"
  cmake -S . -B "$host_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >&2
  cmake --build "$host_dir" -j "$jobs" --target ember_cli >&2
fi
log "building the Cortex-M55 images in $mcu_dir"
cmake -S . -B "$mcu_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE=toolchains/cortex-m55.cmake \
  -DEMBER_HOST_EMBER="$PWD/$host_dir/tools/ember" >&2
cmake --build "$mcu_dir" -j "$jobs" >&2

image="$mcu_dir/examples/mcu/ember_mcu_$dtype.elf"
output="$mcu_dir/examples/mcu/ember_mcu_$dtype.out"
log "running $image on qemu-system-arm -machine mps3-an547 (timeout ${timeout_s}s)"
set +e
timeout "$timeout_s" "$mcu_dir/examples/mcu/ember_mcu_run" "$image" | tee "$output"
status="${PIPESTATUS[0]}"
set -e
if [ "$status" = 124 ]; then
  log "qemu timed out after ${timeout_s}s"
  exit 1
elif [ "$status" != 0 ]; then
  log "the image exited with status $status"
  exit 1
fi

examples/firmware/size_report.py arm-none-eabi-size "$image" \
  "$mcu_dir/examples/mcu/ember_mcu_$dtype.map" "cortex-m55, $dtype" >&2
if [ "$check" = 1 ]; then
  # examples/mcu/cxx_support.cc keeps libstdc++'s exception machinery out of the image
  # (its emergency pool would take heap at start-up); a guarded static (a function-local
  # static without constant initialization) or a throwing library call brings it back.
  map="$mcu_dir/examples/mcu/ember_mcu_$dtype.map"
  if grep -Eo 'libstdc\+\+\.a\((eh_[a-z_]+|guard)\.o\)' "$map" | sort -u | grep .; then
    log "the image links libstdc++'s exception machinery (above; who asked: $map)"
    exit 1
  fi
  tokens=()
  [ "$dtype" = q8 ] && tokens=(-DTOKENS=100)
  cmake -DOUTPUT_FILE="$output" -DTAG=mcu "${tokens[@]}" \
    -DGOLDEN_IDS=examples/firmware/stories260K_ids.txt \
    -DGOLDEN_STORY=examples/firmware/stories260K_story.txt \
    -P examples/firmware/check_story.cmake >&2
fi
