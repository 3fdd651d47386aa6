#!/usr/bin/env bash
# The long-context options on the command line: --kv-type on run and logits, generation
# past the context with --context-shift, and inspect's arena for a context and the
# longest context a --budget holds (the number a session of that context then needs).
# usage: kv_cli_test.sh EMBER_BINARY... MODEL (stories260K.ember; the binary may be
# preceded by an emulator)
set -uo pipefail
args=("$@")
model="${args[-1]}"
unset 'args[-1]'
ember=("${args[@]}")
source "$(dirname "$0")/cli_expect.sh"

# Every cache type tells the golden story's opening.
for type in f32 f16 q8; do
  expect 0 "$type KV cache" -- "${ember[@]}" run -m "$model" --temp 0 -n 30 --kv-type "$type"
  grep -q "^Once upon a time, there was a little girl named Lily" "$tmp/stdout" ||
    fail "--kv-type $type printed: $(cat "$tmp/stdout")"
done
expect 1 "--kv-type q4: not f32, f16 or q8" -- "${ember[@]}" run -m "$model" --kv-type q4

# Past the context: 100 tokens in a context of 32, shifting as it fills.
for type in f32 q8; do
  expect 0 "context shifts (context 32, keeping 4)" -- "${ember[@]}" run -m "$model" \
    --temp 0 -n 100 -c 32 --context-shift --keep 4 --kv-type "$type"
  grep -q "^Once upon a time, there was a little girl named Lily" "$tmp/stdout" ||
    fail "--context-shift ($type) printed: $(cat "$tmp/stdout")"
done
expect 1 "context full" -- "${ember[@]}" run -m "$model" --temp 0 -n 100 -c 32
expect 1 "--keep is for --context-shift" -- "${ember[@]}" run -m "$model" -n 4 --keep 4
expect 1 "context shift keeps 40 positions of a context of 32" -- "${ember[@]}" run \
  -m "$model" -n 100 -c 32 --context-shift --keep 40

expect 0 "wrote [1, 512]" -- "${ember[@]}" logits -m "$model" -p "Once upon a time" \
  --kv-type q8 -o "$tmp/q8.npy"

# inspect: the arena of a q8 cache at 256 positions, then the budget of exactly those
# bytes holds 256 positions and one byte less holds 255.
expect 0 "" -- "${ember[@]}" inspect -m "$model" -c 256 --kv-type q8
grep -q "context 256, batch 64, 1 thread, highway backend, q8 KV cache" "$tmp/stdout" ||
  fail "inspect --kv-type q8: $(grep 'arena plan' "$tmp/stdout")"
arena=$(sed -nE 's/^  arena +([0-9]+) bytes.*/\1/p' "$tmp/stdout")
[ -n "$arena" ] || fail "inspect printed no arena: $(cat "$tmp/stdout")"
expect 0 "" -- "${ember[@]}" inspect -m "$model" --budget "$arena" --kv-type q8
grep -q "the longest context is 256 positions (arena $arena bytes)" "$tmp/stdout" ||
  fail "--budget $arena: $(grep budget "$tmp/stdout")"
grep -qE "^  arena +$arena bytes" "$tmp/stdout" || fail "--budget plans another arena"
expect 0 "" -- "${ember[@]}" inspect -m "$model" --budget "$((arena - 1))B" --kv-type q8
grep -q "the longest context is 255 positions" "$tmp/stdout" ||
  fail "--budget $((arena - 1))B: $(grep budget "$tmp/stdout")"
# A q8 cache holds more context in a budget than f32; 64 MiB holds the whole context.
expect 0 "" -- "${ember[@]}" inspect -m "$model" --budget 600KiB
f32=$(sed -nE 's/.*the longest context is ([0-9]+) positions.*/\1/p' "$tmp/stdout")
expect 0 "" -- "${ember[@]}" inspect -m "$model" --budget 600KiB --kv-type q8
q8=$(sed -nE 's/.*the longest context is ([0-9]+) positions.*/\1/p' "$tmp/stdout")
[ -n "$f32" ] && [ -n "$q8" ] && [ "$q8" -gt "$f32" ] ||
  fail "600KiB: f32 context '$f32', q8 '$q8'"
expect 0 "" -- "${ember[@]}" inspect -m "$model" --budget 64MiB
grep -q "the longest context is 512 positions, the model's whole context" "$tmp/stdout" ||
  fail "--budget 64MiB: $(grep budget "$tmp/stdout")"
expect 1 "not even one position fits in 1024 bytes" -- "${ember[@]}" inspect -m "$model" \
  --budget 1KiB
expect 1 "--budget: '64XB' has an unknown unit" -- "${ember[@]}" inspect -m "$model" \
  --budget 64XB
expect 1 "give -c or --budget, not both" -- "${ember[@]}" inspect -m "$model" -c 64 \
  --budget 1MiB

if [ "$failures" != 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "all KV cache CLI checks passed"
