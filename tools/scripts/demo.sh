#!/usr/bin/env bash
# Sets up, builds, and runs the demo: stories260K (llama2.c's 260K-parameter TinyStories
# model) writes a story, greedy, and ember prints its speed. Without stories260K, it says
# where to get it and benchmarks a synthetic model of stories15M's shape instead.
set -euo pipefail
cd "$(dirname "$0")/../.."
build_dir="${EMBER_BUILD_DIR:-build}"

tools/scripts/setup.sh build
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" --target ember_cli

models="${EMBER_MODELS:-../shared/models}"
bin="$models/llama2c/stories260K/stories260K.bin"
tok="$models/llama2c/stories260K/tok512.bin"
if [ ! -f "$bin" ] || [ ! -f "$tok" ]; then
  cat >&2 <<MSG
demo: stories260K not found (looked for $bin and $tok).
Download stories260K.bin and tok512.bin from the public karpathy/tinyllamas repository
(https://huggingface.co/karpathy/tinyllamas/tree/main/stories260K) into
<dir>/llama2c/stories260K/ and run again with EMBER_MODELS=<dir>.
Meanwhile: benchmarking a synthetic model of stories15M's shape (random weights).
MSG
  "$build_dir/tools/ember" convert --synthetic stories15M -o "$build_dir/stories15M-synthetic.ember"
  "$build_dir/tools/ember" bench -m "$build_dir/stories15M-synthetic.ember" -p 64 -n 32 -r 2
  exit 0
fi
"$build_dir/tools/ember" convert --llama2c "$bin" --tokenizer "$tok" \
  -o "$build_dir/stories260K.ember"
"$build_dir/tools/ember" run -m "$build_dir/stories260K.ember" --temp 0 -n 256
