#!/usr/bin/env bash
# Sets up, builds and runs every test: natively, then cross-built for aarch64 and armhf
# under qemu-user on a matrix of emulated CPUs, then the firmware example for both, then
# the Cortex-M55 image under qemu-system-arm. This is what CI runs (.ci/run). Prints each
# stage's duration and the Highway target each CPU chose.
#
#   EMBER_BUILD_DIR=build   native build directory; cross ones get -aarch64, -armhf,
#                           -fw-aarch64, -fw-armhf, -mcu appended
#   EMBER_CROSS=0           native stages only (a quick local run; CI runs everything)
#   EMBER_REQUIRE_MODELS=0  let tests that need ../shared/models skip instead of fail
#   EMBER_HARDEN=0          skip the sanitizer and fuzzing stages (-asan, -tsan dirs)
#   EMBER_FUZZ_STAGE_SECONDS=90  the fuzzing stage's time: the fuzzers run two at a
#                           time, each for this over the number of rounds
#   EMBER_FUZZ_SECONDS=N    how long each fuzzer runs instead (the stage then takes N
#                           times the rounds)
set -euo pipefail
cd "$(dirname "$0")/../.."
build_dir="${EMBER_BUILD_DIR:-build}"
jobs="$(nproc)"
cross="${EMBER_CROSS:-1}"
harden="${EMBER_HARDEN:-1}"
fuzz_stage_seconds="${EMBER_FUZZ_STAGE_SECONDS:-90}"
fuzz_seconds="${EMBER_FUZZ_SECONDS:-}"  # set from the stage's time in harden_stages
# CI must not skip the tests that need ../shared/models.
export EMBER_REQUIRE_MODELS="${EMBER_REQUIRE_MODELS:-1}"

# The emulated CPUs. Each line: QEMU_CPU | Highway target it must select | Arm dot product
# and int8 matrix multiply (sdot, smmla: 1/0 each, checked by kernel_table_test, so the
# i8mm tests cannot be skipped unnoticed) | tests to run | GTEST_FILTER. Tests to run: all
# (every test but the native-only ones and the oracles), kernels (the kernels/ tests), cpu
# (what the CPU changes: the kernel tests and the forward pass end to end, labels kernel
# and forward) or oracles (label oracle-qemu: the embedding, reranker and vision families'
# PyTorch oracles, about three minutes a CPU). An emulated stage runs work sized for
# emulation: no benchmark loops (the bench CLI test runs its emulated variant) and no
# timing assertions. The other PyTorch oracles (label oracle) run natively only: they check
# model arithmetic that the golden and the kernel tests already cover per ISA, and all of
# them under qemu would cost minutes a CPU.
# - cortex-a72 is NEON without dotprod (Raspberry Pi 4); neoverse-n1 is NEON with dotprod
#   and no SVE (Graviton2, Raspberry Pi 5's A76), for the int8 dot-product kernels.
# - max is SVE2 with dotprod and i8mm (the smmla prefill) at the vector length given; Highway picks its 128-bit and
#   256-bit specialisations at 16 and 32 bytes and generic SVE2 at 64. The NEON kernel
#   tests are left out there (GTEST_FILTER): NEON code runs the same on every CPU and
#   cortex-a72 already ran it; the SVE targets are what the vector length changes: 128
#   bits (the phones' SVE2) runs the cpu scope (the tokenizers, importers and CLI ran on
#   cortex-a72), 256 (Graviton3) and 512 bits the kernel tests (each kernel against its
#   scalar reference on every target the CPU runs), which is where the width matters.
aarch64_cpus=(
  "cortex-a72|NEON|0,0|all|"
  "neoverse-n1|NEON|1,0|kernels|"
  "max,sve-default-vector-length=16|SVE2_128|1,1|cpu|-*/NEON"
  "max,sve-default-vector-length=32|SVE_256|1,1|kernels|-*/NEON"
  "max,sve-default-vector-length=64|SVE2|1,1|kernels|-*/NEON"
  "cortex-a72|NEON|0,0|oracles|"
  "max,sve-default-vector-length=16|SVE2_128|1,1|oracles|"
)
# armv7 with NEON and VFPv4 (the armhf build's baseline: toolchains/arm-linux-gnueabihf.cmake).
armhf_cpus=(
  "cortex-a7|NEON||all|"
)

start=$(date +%s)
stage_names=()
stage_secs=()
stage_start=$start
current=""
failures=()
end_stage() {
  if [ -n "$current" ]; then
    stage_names+=("$current")
    stage_secs+=($(($(date +%s) - stage_start)))
  fi
}
stage() {
  end_stage
  current="$*"
  stage_start=$(date +%s)
  echo
  echo "=== [$((stage_start - start))s] $*"
}
# The lines tests print for the log ("[ember] Highway target: ..."), from the last ctest.
report_targets() {
  grep -h "^\[ember\]" "$1/Testing/Temporary/LastTest.log" | sort -u | sed 's/^/    /' || true
}
summary() {
  end_stage
  current=""
  echo
  echo "=== stage durations (s)"
  for i in "${!stage_names[@]}"; do
    printf '  %5d  %s\n' "${stage_secs[$i]}" "${stage_names[$i]}"
  done
  printf '  %5d  total\n' $(($(date +%s) - start))
}

stage "set-up"
tools/scripts/setup.sh all

stage "native build ($build_dir)"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" -j "$jobs"

stage "native tests"
if ! ctest --test-dir "$build_dir" -j "$jobs" --output-on-failure; then
  failures+=("native tests")
fi
report_targets "$build_dir"

# Every x86 tier this CPU runs, capped with EMBER_ISA (kernels/isa.h): the kernel tests
# and the forward pass again with each tier's Highway target and int8 path, as a lesser
# CPU would pick them (a few seconds a tier). kernel_table_test lists the tiers the CPU
# runs.
if [ "$(uname -m)" = x86_64 ]; then
  tiers=$("$build_dir/kernels/kernel_table_test" \
    --gtest_filter=KernelTableTest.EveryTierBuildsItsKernels |
    sed -n 's/^\[ember\] tier \([^:]*\): Highway.*/\1/p') || true
  [ -z "$tiers" ] && failures+=("ISA tiers: kernel_table_test listed none")
  for tier in $tiers; do
    stage "native tests at ISA tier $tier (EMBER_ISA, labels kernel and forward)"
    if ! EMBER_ISA="$tier" ctest --test-dir "$build_dir" -j "$jobs" --output-on-failure \
      -L "kernel|forward"; then
      failures+=("native tests, EMBER_ISA=$tier")
    fi
    report_targets "$build_dir"
  done
fi

# Runs one libFuzzer binary for fuzz_seconds from its seeds (plus the corpus of earlier
# local runs), and prints its final stats. A crash, leak, sanitizer report, timeout or
# out-of-memory fails the stage; the input is kept in $dir/fuzz-artifacts/.
run_fuzzer() {  # run_fuzzer BUILD_DIR NAME
  local dir="$1" name="$2"
  local corpus="$dir/fuzz-corpus/$name" log="$dir/fuzz-logs/$name.log"
  mkdir -p "$corpus" "$dir/fuzz-logs" "$dir/fuzz-artifacts"
  local rc=0
  EMBER_MODELS="${EMBER_MODELS:-$PWD/../shared/models}" \
    "$dir/tests/fuzz/${name}_fuzzer" -max_total_time="$fuzz_seconds" -print_final_stats=1 \
    -timeout=20 -rss_limit_mb=2048 -artifact_prefix="$dir/fuzz-artifacts/$name-" \
    "$corpus" "$dir/tests/fuzz/seeds/$name" >"$log" 2>&1 || rc=$?
  local execs
  execs=$(grep -a '^stat::number_of_executed_units' "$log" | awk '{print $2}' || true)
  printf '    %-12s exit %d, %s executions in %ss, corpus %d files\n' "$name" "$rc" \
    "${execs:-?}" "$fuzz_seconds" "$(find "$corpus" -type f | wc -l)"
  if [ "$rc" != 0 ]; then
    grep -a -A30 -m1 'ERROR\|==ERROR\|deadly signal\|Timeout\|out-of-memory' "$log" | \
      sed 's/^/      /' | head -40
    return 1
  fi
}

# The sanitizer and fuzzing stages (clang-14): the whole native suite under ASan+UBSan in
# one build that also makes the fuzzers; the fuzzers for a bounded time, two at a time;
# the threading tests under TSan. Both keep the EMBER_DCHECK precondition checks on.
harden_stages() {
  local asan="$build_dir-asan" tsan="$build_dir-tsan"
  stage "ASan+UBSan build with the fuzzers (clang-14, $asan)"
  # -O1 and line tables only (EMBER_SANITIZE's -g1): the build is the longest stage, and
  # reports still name file and line.
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$asan" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG" -DEMBER_FUZZ=ON -DEMBER_DCHECKS=ON >/dev/null
  cmake --build "$asan" -j "$jobs"

  # Left out: the PyTorch oracles (label oracle: they check arithmetic that the native
  # run already compared, and under ASan they take minutes). A sanitizer build has no
  # package_test (tests/CMakeLists.txt).
  stage "ASan+UBSan tests (all but the oracles)"
  if ! ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$asan" -j "$jobs" --output-on-failure -LE oracle; then
    failures+=("ASan+UBSan tests")
  fi

  # A harness added shortens each one's time, not the stage (15 fuzzers: 8 rounds of 11 s).
  local fuzzers=(model tokenizer llama2c safetensors hf gguf prompt_state template
    template_bytecode gbnf json_schema tool_calls tokenizer_json c_api image)
  local pids=() names=() i rounds=$(( (${#fuzzers[@]} + 1) / 2 ))
  if [ -z "$fuzz_seconds" ]; then
    fuzz_seconds=$(( fuzz_stage_seconds / rounds ))
    [ "$fuzz_seconds" -ge 10 ] || fuzz_seconds=10
  fi
  stage "fuzzers, ${fuzz_seconds}s each, two at a time (${rounds} rounds)"
  for i in "${!fuzzers[@]}"; do
    run_fuzzer "$asan" "${fuzzers[$i]}" &
    pids+=($!)
    names+=("${fuzzers[$i]}")
    if [ "${#pids[@]}" = 2 ] || [ "$i" = $((${#fuzzers[@]} - 1)) ]; then
      for j in "${!pids[@]}"; do
        wait "${pids[$j]}" || failures+=("fuzzer ${names[$j]}")
      done
      pids=()
      names=()
    fi
  done

  # The thread pool (runtime/pool/thread_pool.cc) hands tiles over through std::atomic and
  # std::mutex, which TSan sees; nothing is suppressed.
  local tsan_tests='^(ThreadsTest|GoldenTest|CApi|AttentionRecord)|^convert_stories260K$'
  stage "TSan build of the threading tests (clang-14, $tsan)"
  # The kernels for the baseline Highway target only (EMBER_HWY_STATIC): what TSan checks
  # is the pool and the sessions around them, not the ISA paths the other stages ran.
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$tsan" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG" -DEMBER_HWY_STATIC=ON \
    -DEMBER_SANITIZE=thread -DEMBER_DCHECKS=ON >/dev/null
  cmake --build "$tsan" -j "$jobs" --target threads_test golden_test c_api_test \
    c_api_stories_test c_api_edge_test c_api_chat_edge_test attention_record_test ember_cli
  stage "TSan tests (threads, golden thread counts, C API, attention record)"
  if ! TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    ctest --test-dir "$tsan" -j "$jobs" --output-on-failure -R "$tsan_tests"; then
    failures+=("TSan tests")
  fi
}

if [ "$harden" != 0 ]; then
  harden_stages
fi

# Extra configure options of a cross build, by ARCH. aarch64 builds the Java binding's
# libember_jni.so too (jni.h is the host JDK's), to prove it cross-builds for arm64 (as
# Android's arm64-v8a needs); it is not run: java_test is native-only.
cross_cmake_aarch64=(-DEMBER_BUILD_JAVA=ON)
cross_cmake_armhf=()

# Builds tests for a toolchain and runs them once per emulated CPU.
cross_tests() {  # cross_tests ARCH TOOLCHAIN CPU_LINE...
  local arch="$1" toolchain="$2"
  shift 2
  local dir="$build_dir-$arch"
  local -n extra="cross_cmake_$arch"
  stage "$arch build ($dir)"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE="toolchains/$toolchain" "${extra[@]}" >/dev/null
  cmake --build "$dir" -j "$jobs"
  if [[ " ${extra[*]} " == *" -DEMBER_BUILD_JAVA=ON "* ]]; then
    local jni="$dir/bindings/java/libember_jni.so"
    if [ -f "$jni" ]; then  # readelf: binutils, which the cross compilers bring
      echo "libember_jni.so: $(readelf -h "$jni" | sed -n 's/^ *Machine: *//p')"
    else
      failures+=("$arch libember_jni.so not built")
    fi
  fi
  local line cpu target dotprod scope filter test_dir env
  for line in "$@"; do
    IFS='|' read -r cpu target dotprod scope filter <<<"$line"
    test_dir="$dir"
    local select=(-LE "native-only|oracle")
    [ "$scope" = kernels ] && test_dir="$dir/kernels"
    [ "$scope" = cpu ] && select=(-L "kernel|forward")
    [ "$scope" = oracles ] && select=(-L oracle-qemu)
    stage "$arch tests, QEMU_CPU=$cpu ($scope${filter:+, GTEST_FILTER=$filter})"
    env=(QEMU_CPU="$cpu" EMBER_EXPECT_TARGET="$target")
    [ -n "$dotprod" ] && env+=(EMBER_EXPECT_DOTPROD="${dotprod%,*}")
    [[ "$dotprod" == *,* ]] && env+=(EMBER_EXPECT_I8MM="${dotprod#*,}")
    [ -n "$filter" ] && env+=(GTEST_FILTER="$filter")
    if ! env "${env[@]}" \
      ctest --test-dir "$test_dir" -j "$jobs" --output-on-failure "${select[@]}"; then
      failures+=("$arch tests, QEMU_CPU=$cpu")
    fi
    report_targets "$test_dir"
  done
}

# The firmware example: a static image with the model in .rodata, its story checked
# against the golden under qemu, and its size.
firmware() {  # firmware ARCH TOOLCHAIN TRIPLET QEMU_CPU
  local arch="$1" toolchain="$2" triplet="$3" cpu="$4"
  local dir="$build_dir-fw-$arch"
  stage "$arch firmware build and story ($dir, QEMU_CPU=$cpu)"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE="toolchains/$toolchain" -DEMBER_BUILD_FIRMWARE=ON \
    -DEMBER_HOST_EMBER="$PWD/$build_dir/tools/ember" >/dev/null
  cmake --build "$dir" -j "$jobs"
  if ! QEMU_CPU="$cpu" ctest --test-dir "$dir" --output-on-failure; then
    failures+=("$arch firmware")
  fi
  examples/firmware/size_report.py "$triplet-size" "$dir/examples/firmware/ember_firmware" \
    "$dir/examples/firmware/ember_firmware.map" "$arch"
}

# The Cortex-M55 image (examples/mcu): no operating system, run on qemu-system-arm's
# mps3-an547 board. Its stories are checked against the golden (f32 token for token with
# the text, q8 the first 100 tokens) by tools/scripts/mcu.sh, which also prints the
# image's sizes; then the Helium kernels' own test image runs.
mcu_image() {
  local dir="$build_dir-mcu"
  stage "Cortex-M55 image: build, f32 and q8 stories, Helium kernel test ($dir, qemu-system-arm)"
  local dtype
  for dtype in f32 q8; do
    if ! EMBER_BUILD_DIR="$build_dir" EMBER_MCU_BUILD_DIR="$dir" \
      tools/scripts/mcu.sh --dtype "$dtype" --check --timeout 300; then
      failures+=("Cortex-M55 $dtype story")
    fi
  done
  if ! ctest --test-dir "$dir" --output-on-failure -L kernel; then
    failures+=("Cortex-M55 Helium kernel test")
  fi
}

if [ "$cross" != 0 ] && [ "$(uname -m)" != x86_64 ]; then
  echo "the qemu matrix is set up for an x86-64 build machine: skipping the cross stages"
  cross=0
fi
if [ "$cross" != 0 ]; then
  cross_tests aarch64 aarch64-linux-gnu.cmake "${aarch64_cpus[@]}"
  cross_tests armhf arm-linux-gnueabihf.cmake "${armhf_cpus[@]}"
  firmware aarch64 aarch64-linux-gnu.cmake aarch64-linux-gnu cortex-a72
  firmware armhf arm-linux-gnueabihf.cmake arm-linux-gnueabihf cortex-a7
  mcu_image
fi

summary
if [ "${#failures[@]}" -gt 0 ]; then
  echo
  echo "FAILED: ${failures[*]}"
  exit 1
fi
echo
echo "all tests passed"
