#!/usr/bin/env bash
# The ember command line on good and bad input: each bad input gets a clear message and
# exit status 1 (2 for usage errors), never a signal.
# usage: cli_test.sh EMBER_BINARY MODELS_DIR
set -uo pipefail
ember="$1"
models="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# expect STATUS MESSAGE_FRAGMENT -- command...
expect() {
  local want_status="$1" fragment="$2"
  shift 3
  local out status
  out=$("$@" 2>&1 >"$tmp/stdout")
  status=$?
  if [ "$status" != "$want_status" ] || ! grep -qF -- "$fragment" <<<"$out"; then
    echo "FAIL: $* -> status $status (want $want_status), stderr: $out (want '$fragment')"
    failures=$((failures + 1))
  else
    echo "ok: $* -> $status: $(head -c 160 <<<"$out" | tr '\n' ' ')"
  fi
}

bin="$models/llama2c/stories260K/stories260K.bin"
tok="$models/llama2c/stories260K/tok512.bin"
if [ ! -f "$bin" ]; then
  if [ "${EMBER_REQUIRE_MODELS:-0}" = 1 ]; then echo "FAIL: $bin missing"; exit 1; fi
  echo "SKIP: $bin missing"; exit 0
fi
model="$tmp/stories260K.ember"
expect 0 "wrote" -- "$ember" convert --llama2c "$bin" --tokenizer "$tok" -o "$model"

expect 2 "usage: ember" -- "$ember"
expect 2 "unknown command 'frobnicate'" -- "$ember" frobnicate
expect 1 "unknown option '--frob'" -- "$ember" run -m "$model" --frob
expect 1 "missing -m MODEL" -- "$ember" run
expect 1 "option -p needs a value" -- "$ember" run -m "$model" -p
expect 1 "cannot open '/nonexistent.ember'" -- "$ember" run -m /nonexistent.ember
expect 1 "not an ember model" -- "$ember" run -m "$tok"
: >"$tmp/empty.ember"
expect 1 "is empty" -- "$ember" run -m "$tmp/empty.ember"
expect 1 "is not a regular file" -- "$ember" run -m /dev/null
expect 1 "is not a regular file" -- "$ember" run -m "$tmp"
expect 1 "-t: 0 is outside" -- "$ember" run -m "$model" -t 0
expect 1 "-t: 100000 is outside" -- "$ember" run -m "$model" -t 100000
expect 1 "-t: 'two' is not a whole number" -- "$ember" run -m "$model" -t two
expect 1 "-n: -5 is outside" -- "$ember" run -m "$model" -n -5
expect 1 "--temp: 'hot' is not a number" -- "$ember" run -m "$model" --temp hot
expect 1 "--top-p: 2 is outside" -- "$ember" run -m "$model" --top-p 2
expect 1 "context 100000 exceeds the model's 512" -- "$ember" run -m "$model" -c 100000
expect 1 "not valid UTF-8" -- "$ember" run -m "$model" -p $'abc\xff'
expect 1 "longer than the context of 8" -- "$ember" run -m "$model" -c 8 \
  -p "Once upon a time there was a little girl who liked to play"
expect 1 "context full" -- "$ember" run -m "$model" -c 16 -n 100 --temp 0
expect 1 "cannot open '/nonexistent.bin'" -- "$ember" convert --llama2c /nonexistent.bin \
  --tokenizer "$tok" -o "$tmp/x.ember"
expect 1 "does not match the model's vocabulary" -- "$ember" convert --llama2c "$bin" \
  --tokenizer "$models/llama2c/tokenizer.bin" -o "$tmp/x.ember"
expect 1 "is this a llama2.c legacy (version 0) file?" -- "$ember" convert --llama2c "$tok" \
  --tokenizer "$tok" -o "$tmp/x.ember"
head -c 100000 "$bin" >"$tmp/truncated.bin"
expect 1 "truncated file or wrong format" -- "$ember" convert --llama2c "$tmp/truncated.bin" \
  --tokenizer "$tok" -o "$tmp/x.ember"
expect 1 "missing -o" -- "$ember" convert --llama2c "$bin" --tokenizer "$tok"

# Good runs: the golden story, and an empty prompt is fine.
expect 0 "generated 20 tokens" -- "$ember" run -m "$model" --temp 0 -n 20
if ! grep -q "^Once upon a time, there was a little girl named Lily" "$tmp/stdout"; then
  echo "FAIL: greedy run printed: $(cat "$tmp/stdout")"
  failures=$((failures + 1))
fi
expect 0 "generated 5 tokens" -- "$ember" run -m "$model" -p "" -n 5 -s 1
# The XNNPACK backend tells the same story; inspect plans its operators in the arena.
expect 0 "f32 matrices on XNNPACK" -- "$ember" run -m "$model" --temp 0 -n 20 -t 2 \
  --backend xnnpack
if ! grep -q "^Once upon a time, there was a little girl named Lily" "$tmp/stdout"; then
  echo "FAIL: greedy run on XNNPACK printed: $(cat "$tmp/stdout")"
  failures=$((failures + 1))
fi
expect 0 "" -- "$ember" inspect -m "$model" --backend xnnpack
if ! grep -q "xnnpack backend" "$tmp/stdout" || ! grep -qE "^  xnnpack +[0-9]+ +[1-9][0-9]* +xnnpack" "$tmp/stdout"; then
  echo "FAIL: inspect --backend xnnpack printed no xnnpack buffer: $(cat "$tmp/stdout")"
  failures=$((failures + 1))
fi
expect 1 "--backend gpu: not highway or xnnpack" -- "$ember" run -m "$model" --backend gpu
expect 0 "generated 16 tokens" -- "$ember" run -m "$model" -c 16 --temp 0

# Weight types: every --dtype converts and runs; q8 keeps the golden's opening, and
# --keep overrides one tensor (inspect shows its type).
for dtype in f16 bf16 q8 q4; do
  expect 0 "wrote" -- "$ember" convert --llama2c "$bin" --tokenizer "$tok" \
    --dtype "$dtype" -o "$tmp/$dtype.ember"
  expect 0 "generated 20 tokens" -- "$ember" run -m "$tmp/$dtype.ember" --temp 0 -n 20
  if ! grep -q "^Once upon a time" "$tmp/stdout"; then
    echo "FAIL: $dtype greedy run printed: $(cat "$tmp/stdout")"
    failures=$((failures + 1))
  fi
done
expect 0 "blk.2.ffn_down.weight        q8" -- "$ember" convert --llama2c "$bin" \
  --tokenizer "$tok" --dtype q4 --keep 'blk.2.ffn_*=f32' --keep 'blk.2.ffn_down.weight=q8' \
  -o "$tmp/mixed.ember"
expect 1 "--dtype q5 is not a weight type" -- "$ember" convert --llama2c "$bin" \
  --tokenizer "$tok" --dtype q5 -o "$tmp/x.ember"
expect 1 "--keep blk.9.*=q8 matches no tensor" -- "$ember" convert --llama2c "$bin" \
  --tokenizer "$tok" --keep 'blk.9.*=q8' -o "$tmp/x.ember"
expect 1 "is not a matrix" -- "$ember" convert --llama2c "$bin" \
  --tokenizer "$tok" --keep '*norm*=q4' -o "$tmp/x.ember"

# Speculative decoding: the greedy text of --lookup and of --draft (the q4 copy drafting
# for the q8 one) is plain decoding's; bad flags are refused.
expect 0 "generated 120 tokens" -- "$ember" run -m "$tmp/q8.ember" --temp 0 -n 120
cp "$tmp/stdout" "$tmp/plain.txt"
for flags in "--lookup 3" "--draft $tmp/q4.ember --draft-max 5" "--lookup 2 --draft-min 2"; do
  # shellcheck disable=SC2086
  expect 0 "drafted tokens accepted" -- "$ember" run -m "$tmp/q8.ember" --temp 0 -n 120 $flags
  if ! cmp -s "$tmp/plain.txt" "$tmp/stdout"; then
    echo "FAIL: run $flags printed another text than plain greedy decoding"
    failures=$((failures + 1))
  fi
done
expect 1 "--lookup" -- "$ember" run -m "$model" --lookup 9
expect 1 "--draft-max and --draft-min need --draft MODEL or --lookup N" -- \
  "$ember" run -m "$model" --draft-max 4
expect 1 "--draft $tmp/none.ember" -- "$ember" run -m "$model" --draft "$tmp/none.ember"
expect 0 "wrote" -- "$ember" convert --synthetic custom --dim 16 --hidden 32 --layers 1 \
  --heads 2 --vocab 300 --ctx 64 -o "$tmp/other.ember"
expect 1 "the draft model's vocabulary has 300 tokens" -- \
  "$ember" run -m "$model" --draft "$tmp/other.ember" --temp 0 -n 4
expect 1 "not with a grammar" -- "$ember" run -m "$model" --lookup 3 --json

if [ "$failures" != 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "all CLI checks passed"
