#!/usr/bin/env bash
# ember convert --synthetic and ember bench: a small synthetic model (and the stories15M
# preset's shape) converts, runs, and benchmarks in every output format; bench_check.py
# validates the fields and figures. Bad input gets a clear message and exit status 1.
# usage: bench_cli_test.sh [--emulated] EMBER_BINARY... (the binary, possibly after an
# emulator). --emulated (cross builds, under qemu) runs the checks that the CPU could
# change with work sized for emulation: the small model converts, runs and benchmarks in
# one format at 1 and 2 threads, and bad input is refused; the output-format matrix and
# the stories15M-sized runs stay native (they check formatting, not arithmetic).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
emulated=0
if [ "${1:-}" = --emulated ]; then
  emulated=1
  shift
fi
ember=("$@")
python=/usr/bin/python3
source "$(dirname "$0")/cli_expect.sh"

small="$tmp/small.ember"
expect 0 "2 layers, d_model 64, vocab 512, 20 tensors, 106816 parameters" -- \
  "${ember[@]}" convert --synthetic custom --dim 64 --hidden 128 --layers 2 --heads 4 \
  --kv-heads 2 --vocab 512 --ctx 64 --seed 7 -o "$small"
# The same seed writes the same file; another seed does not.
expect 0 "wrote" -- "${ember[@]}" convert --synthetic custom --dim 64 --hidden 128 \
  --layers 2 --heads 4 --kv-heads 2 --vocab 512 --ctx 64 --seed 7 -o "$tmp/again.ember"
cmp -s "$small" "$tmp/again.ember" || fail "the same seed wrote different files"
expect 0 "wrote" -- "${ember[@]}" convert --synthetic custom --dim 64 --hidden 128 \
  --layers 2 --heads 4 --kv-heads 2 --vocab 512 --ctx 64 --seed 8 -o "$tmp/other.ember"
cmp -s "$small" "$tmp/other.ember" && fail "seeds 7 and 8 wrote the same file"

# Under emulation: the small model runs and benchmarks once, then the bad input below.
if [ "$emulated" = 1 ]; then
  expect 0 "generated 8 tokens" -- "${ember[@]}" run -m "$small" -p "héllo wörld" -n 8 \
    --temp 0
  expect 0 "repetition 1 of 1" -- "${ember[@]}" bench -m "$small" -p 8 -n 2 -t 1,2 -r 1 \
    -o json --probe-mib 16 --profile
  "$python" "$here/bench_check.py" json "$tmp/stdout" --reps 1 --tests pp8,tg2 \
    --threads 1,2 --profile || fail "bench -o json under emulation"
fi

# Under a grammar: the masks' cost after the report, and no heap call in the tests (-1
# where the allocation counter is off: a sanitizer build keeps its own allocator, and
# bench says so).
"${ember[@]}" bench -m "$small" -p 0 -n 16 -r 1 --json --probe-mib 16 >"$tmp/gbench.out" \
  2>"$tmp/gbench.err" || fail "bench --json: $(cat "$tmp/gbench.err")"
want_allocs=0
grep -q "allocation counter is not active" "$tmp/gbench.err" && want_allocs=-1
grep -q "tg16 under --json: 16 masks, .* heap allocations $want_allocs\$" "$tmp/gbench.out" ||
  fail "bench --json: $(tail -1 "$tmp/gbench.out") (want heap allocations $want_allocs)"
expect 1 "--grammar, --json-schema and --json: use one" -- "${ember[@]}" bench -m "$small" \
  --json --grammar "$small"

# Both backends side by side, in run order (model, backend, threads).
expect 0 "repetition 1 of 1" -- "${ember[@]}" bench -m "$small" -p 8 -n 2 -t 1,2 -r 1 \
  --backend highway,xnnpack -o jsonl --probe-mib 16
"$python" "$here/bench_check.py" jsonl "$tmp/stdout" --reps 1 --tests pp8,tg2 \
  --threads 1,2 --backends CPU,XNNPACK || fail "bench --backend highway,xnnpack"
expect 1 "--backend gpu: not highway or xnnpack" -- "${ember[@]}" bench -m "$small" \
  --backend highway,gpu
# KV cache types and depths (the cache filled untimed first), in run order (model,
# backend, KV type, threads, depth).
expect 0 "repetition 1 of 1" -- "${ember[@]}" bench -m "$small" -p 8 -n 4 -d 0,16 -r 1 \
  --kv-type f32,q8 -o json --probe-mib 16
"$python" "$here/bench_check.py" json "$tmp/stdout" --reps 1 --tests pp8,tg4 \
  --threads 1 --kv-types f32,q8 --depths 0,16 || fail "bench -d 0,16 --kv-type f32,q8"
expect 1 "--kv-type q4: not f32, f16 or q8" -- "${ember[@]}" bench -m "$small" \
  --kv-type f32,q4
expect 1 "at depth 60 needs a context of 68" -- "${ember[@]}" bench -m "$small" -p 8 \
  -n 4 -d 60

# --image: the image encoded -r times (no heap call), then each pp test prefills its
# prompt before the random tokens (pp8 becomes pp20: "\n<boi>", 4 rows, "<eoi>\n").
vision="$tmp/vision.ember"
expect 0 "wrote" -- "${ember[@]}" convert --synthetic custom --dim 64 --hidden 128 \
  --layers 2 --heads 4 --kv-heads 2 --vocab 512 --ctx 64 --seed 7 --vision tiny \
  -o "$vision"
"$python" -c "
import sys; from PIL import Image
Image.new('RGB', (40, 30), (200, 40, 90)).save(sys.argv[1])" "$tmp/red.png" ||
  fail "writing a PNG with Pillow"
"${ember[@]}" bench -m "$vision" --image "$tmp/red.png" -p 8 -n 2 -r 2 -o json \
  --probe-mib 16 >"$tmp/ibench.out" 2>"$tmp/ibench.err" ||
  fail "bench --image: $(cat "$tmp/ibench.err")"
grep -q "vision.ember, 1 thread, 1 image: 1 tile, 4 rows (a prompt of 12 tokens) encoded in .* (median of 2, .*; heap allocations $want_allocs\$" \
  "$tmp/ibench.out" || fail "bench --image: $(tail -1 "$tmp/ibench.out")"
sed '$d' "$tmp/ibench.out" >"$tmp/ibench.json"
"$python" "$here/bench_check.py" json "$tmp/ibench.json" --reps 2 --tests pp20,tg2 \
  --threads 1 || fail "bench --image -o json"
expect 1 "--image: the model has no vision tower" -- "${ember[@]}" bench -m "$small" \
  --image "$tmp/red.png" -p 8 -n 2 -r 1 --probe-mib 16
expect 1 "--image: not with --embed" -- "${ember[@]}" bench -m "$vision" \
  --image "$tmp/red.png" --embed 2
echo "not an image" >"$tmp/not.png"
expect 1 "not.png: " -- "${ember[@]}" bench -m "$vision" --image "$tmp/not.png" -p 8 \
  -n 2 -r 1 --probe-mib 16

if [ "$emulated" = 0 ]; then
# The stories15M preset: llama2.c's shape (inspect reads it back from the file).
s15="$tmp/stories15M.ember"
expect 0 "6 layers, d_model 288, vocab 32000, 56 tensors, 15191712 parameters" -- \
  "${ember[@]}" convert --synthetic stories15M -o "$s15"
expect 0 "" -- "${ember[@]}" inspect -m "$s15"
grep -qF "6 layers, d_model 288, 6 heads (6 kv heads, head_dim 48), ffn 768, vocab 32000, context 256" \
  "$tmp/stdout" || fail "stories15M shape: $(grep architecture "$tmp/stdout")"
# Presets take overrides: 12 heads of 24, 3 kv heads.
expect 0 "3 layers, d_model 288" -- "${ember[@]}" convert --synthetic stories15M \
  --layers 3 --heads 12 --kv-heads 3 -o "$tmp/s15_gqa.ember"

# The byte-fallback tokenizer and the model run: text, non-ASCII bytes, greedy decode.
expect 0 "generated 8 tokens" -- "${ember[@]}" run -m "$small" -p "héllo wörld" -n 8 --temp 0
grep -qa "^héllo wörld" "$tmp/stdout" || fail "run did not echo the prompt: $(cat "$tmp/stdout")"
expect 0 "generated 8 tokens" -- "${ember[@]}" run -m "$s15" -p "Once upon a time" -n 8 --temp 0
# Logits are finite and spread out (not all equal, not exploding).
expect 0 "" -- "${ember[@]}" logits -m "$s15" -p "Once upon a time" --all -o "$tmp/logits.npy"
"$python" - "$tmp/logits.npy" <<'PY' || fail "stories15M logits are degenerate"
import sys, numpy as np
x = np.load(sys.argv[1])
std = x.std(axis=-1)
print(f"logits {x.shape}: std per position {std.min():.3f}..{std.max():.3f}, "
      f"max |x| {np.abs(x).max():.2f}")
assert np.isfinite(x).all() and std.min() > 0.2 and np.abs(x).max() < 100
PY

# Every output format, with and without --profile, at 1 and 2 threads.
run_bench() {  # FORMAT PROFILE(0/1) EXTRA...
  local format="$1" profile="$2"
  shift 2
  local flags=()
  [ "$profile" = 1 ] && flags=(--profile)
  expect 0 "repetition 3 of 3" -- "${ember[@]}" bench -m "$small" -p 16,32 -n 8 -t 1,2 \
    -r 3 -o "$format" --probe-mib 16 "${flags[@]}" "$@"
  cp "$tmp/stdout" "$tmp/bench.$format"
  "$python" "$here/bench_check.py" "$format" "$tmp/bench.$format" --reps 3 \
    --tests pp16,pp32,tg8 --threads 1,2 "${flags[@]}" || fail "bench -o $format (profile $profile)"
}
for format in json jsonl csv md; do run_bench "$format" 0; done
for format in json csv md; do run_bench "$format" 1; done
# Two models, and the defaults' format (md).
expect 0 "bandwidth probe" -- "${ember[@]}" bench -m "$small" -m "$tmp/other.ember" -p 8 \
  -n 4 -r 2 --probe-mib 16 -o jsonl
"$python" "$here/bench_check.py" jsonl "$tmp/stdout" --reps 2 --tests pp8,tg4 --threads 1 \
  --models 2 || fail "bench with two models"
# A file too small for the file read at this thread count (under 64 words a thread): the
# roofline falls back to the buffer probe (bench_check.py checks which applies).
expect 0 "wrote" -- "${ember[@]}" convert --synthetic custom --dim 16 --hidden 32 \
  --layers 1 --heads 2 --kv-heads 1 --vocab 260 --ctx 16 --seed 7 -o "$tmp/tiny.ember"
[ "$(wc -c <"$tmp/tiny.ember")" -lt $((64 * 512)) ] || fail "tiny.ember is 32 KiB or more"
expect 0 "tg1" -- "${ember[@]}" bench -m "$tmp/tiny.ember" -p 0 -n 1 -t 1,64 -r 1 \
  --probe-mib 16 -o json
"$python" "$here/bench_check.py" json "$tmp/stdout" --reps 1 --tests tg1 \
  --threads 1,64 || fail "bench on a file smaller than the threads' file read"
# The preset itself, as the demo runs it.
expect 0 "tg4" -- "${ember[@]}" bench -m "$s15" -p 16 -n 4 -r 2 --probe-mib 16 --profile
"$python" "$here/bench_check.py" md "$tmp/stdout" --reps 2 --tests pp16,tg4 --threads 1 \
  --profile || fail "bench on stories15M"
# stories15M's matrices split across 2 threads: the profile's thread columns are filled.
expect 0 "tg4" -- "${ember[@]}" bench -m "$s15" -p 16 -n 4 -t 2 -r 2 --probe-mib 16 \
  --profile -o json
"$python" "$here/bench_check.py" json "$tmp/stdout" --reps 2 --tests pp16,tg4 --threads 2 \
  --profile --regions || fail "bench --profile on 2 threads"
fi

# Bad input.
expect 1 "-o xml: unknown output format (md, json, jsonl, csv or svg)" -- \
  "${ember[@]}" bench -m "$small" -o xml
expect 1 "-r: 0 is outside" -- "${ember[@]}" bench -m "$small" -r 0
expect 1 "-t: 0 is outside" -- "${ember[@]}" bench -m "$small" -t 1,0
expect 1 "-p: 'x' is not a whole number" -- "${ember[@]}" bench -m "$small" -p x
expect 1 "cannot open '$tmp/missing.ember'" -- "${ember[@]}" bench -m "$small" \
  -m "$tmp/missing.ember"
expect 1 "missing -m MODEL" -- "${ember[@]}" bench
expect 1 "nothing to run" -- "${ember[@]}" bench -m "$small" -p 0 -n 0
expect 1 "needs a context of 128; the model holds 64" -- "${ember[@]}" bench -m "$small" \
  -p 128
expect 1 "unknown option '--frob'" -- "${ember[@]}" bench -m "$small" --frob
expect 1 "no synthetic preset 'stories7B'" -- "${ember[@]}" convert --synthetic stories7B \
  -o "$tmp/x.ember"
expect 1 "--synthetic custom needs --dim" -- "${ember[@]}" convert --synthetic custom \
  -o "$tmp/x.ember"
expect 1 "must split into --heads 5 heads of an even size" -- "${ember[@]}" convert \
  --synthetic stories15M --heads 5 -o "$tmp/x.ember"
expect 1 "--kv-heads 4 must divide --heads 6" -- "${ember[@]}" convert \
  --synthetic stories15M --kv-heads 4 -o "$tmp/x.ember"
expect 1 "--vocab 100 is too small" -- "${ember[@]}" convert --synthetic stories15M \
  --vocab 100 -o "$tmp/x.ember"
expect 1 "--layers: 0 is outside" -- "${ember[@]}" convert --synthetic stories15M \
  --layers 0 -o "$tmp/x.ember"
expect 1 "--dim needs --synthetic" -- "${ember[@]}" convert --llama2c x.bin --tokenizer t.bin \
  --dim 64 -o "$tmp/x.ember"
expect 1 "--dtype q3 is not a weight type" -- "${ember[@]}" convert --synthetic stories15M \
  --dtype q3 -o "$tmp/x.ember"

if [ "$failures" != 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "all bench checks passed"
