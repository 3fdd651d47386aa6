#!/usr/bin/env bash
# ember tokenize / logits / run --show-top / convert --hf on good and bad input: bad input
# gets a clear message and exit status 1, never a signal.
# usage: cli_text_test.sh EMBER_BINARY MODELS_DIR
set -uo pipefail
ember="$1"
models="${EMBER_MODELS:-$2}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# expect STATUS FRAGMENT -- command... (counts failures).
source "$(dirname "$0")/cli_expect.sh"

bin="$models/llama2c/stories260K/stories260K.bin"
tok="$models/llama2c/stories260K/tok512.bin"
skip_without "$bin" "$tok"
model="$tmp/stories260K.ember"
expect 0 "wrote" -- "$ember" convert --llama2c "$bin" --tokenizer "$tok" -o "$model"

expect 0 "1 403 407 261 378" -- "$ember" tokenize -m "$model" -p "Once upon a time"
expect 0 "403 407 261 378" -- "$ember" tokenize -m "$model" -p "Once upon a time" --no-bos
expect 0 $'403\t" Once"' -- "$ember" tokenize -m "$model" -p "Once" --pieces
expect 1 "missing -p TEXT" -- "$ember" tokenize -m "$model"
expect 1 "not valid UTF-8" -- "$ember" tokenize -m "$model" -p $'\xc3'

expect 0 "wrote [1, 512]" -- "$ember" logits -m "$model" -p "Once upon" -o "$tmp/l.npy"
if [ "$(head -c 6 "$tmp/l.npy" | od -An -c | tr -d ' ')" != '223NUMPY' ]; then
  echo "FAIL: $tmp/l.npy is not a .npy file"
  failures=$((failures + 1))
fi
expect 0 "wrote [3, 512]" -- "$ember" logits -m "$model" --tokens 1,403,407 --all \
  -o "$tmp/l.npy" --attn "$tmp/a.npy"
expect 1 "give either -p PROMPT or --tokens" -- "$ember" logits -m "$model" -o "$tmp/l.npy"
expect 1 "give either -p PROMPT or --tokens" -- "$ember" logits -m "$model" -p x \
  --tokens 1 -o "$tmp/l.npy"
expect 1 "missing -o" -- "$ember" logits -m "$model" --tokens 1
expect 1 "--tokens: 512 is outside [0, 511]" -- "$ember" logits -m "$model" --tokens 1,512 \
  -o "$tmp/l.npy"
expect 1 "--tokens: 'x' is not a whole number" -- "$ember" logits -m "$model" --tokens 1,x \
  -o "$tmp/l.npy"
expect 1 "exceed the model's context of 512" -- "$ember" logits -m "$model" \
  --tokens "$(printf '1,%.0s' {1..512})1" -o "$tmp/l.npy"
expect 1 "cannot create" -- "$ember" logits -m "$model" --tokens 1 -o /nonexistent/l.npy

expect 0 '" a"' -- "$ember" run -m "$model" -p "Once upon" --temp 0 -n 3 --show-top 2
expect 1 "--show-top: -1 is outside" -- "$ember" run -m "$model" --show-top -1

mkdir "$tmp/hf"
expect 1 "cannot open '$tmp/hf/config.json'" -- "$ember" convert --hf "$tmp/hf" \
  -o "$tmp/x.ember"
echo '{"model_type": "bert"' >"$tmp/hf/config.json"
expect 1 "not valid JSON" -- "$ember" convert --hf "$tmp/hf" -o "$tmp/x.ember"
echo '{"model_type": "t5"}' >"$tmp/hf/config.json"
expect 1 "model_type 't5' is not supported" -- "$ember" convert --hf "$tmp/hf" \
  -o "$tmp/x.ember"
echo '{"model_type": "gpt2"}' >"$tmp/hf/config.json"
expect 1 "no model.safetensors" -- "$ember" convert --hf "$tmp/hf" -o "$tmp/x.ember"
: >"$tmp/hf/pytorch_model.bin"
expect 1 "pickle, which ember never reads" -- "$ember" convert --hf "$tmp/hf" \
  -o "$tmp/x.ember"
printf '\x08\0\0\0\0\0\0\0{}      ' >"$tmp/hf/model.safetensors"
expect 1 "config.json: 'n_embd' is missing" -- "$ember" convert --hf "$tmp/hf" \
  -o "$tmp/x.ember"
printf '\xff\xff\0\0\0\0\0\0{}' >"$tmp/hf/model.safetensors"
expect 1 "does not fit the 10-byte file" -- "$ember" convert --hf "$tmp/hf" \
  -o "$tmp/x.ember"

if [ "$failures" != 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "all checks passed"
