#!/usr/bin/env bash
# Bad input at every door of the ember CLI, as a table: out-of-range token ids, prompts
# longer than the context, invalid UTF-8, empty prompts, zero/negative/absurd counts and
# thread numbers, unreadable and directory paths. Each row must exit with status 1 (not
# a signal: > 128) and print its message. A few rows are the valid edge (status 0).
# usage: cli_bad_input_test.sh EMBER_BINARY MODELS_DIR
set -uo pipefail
export LC_ALL=C  # bytes, not characters: the rows hold invalid UTF-8 on purpose
ember="$1"
models="${EMBER_MODELS:-$2}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

bin="$models/llama2c/stories260K/stories260K.bin"
tok="$models/llama2c/stories260K/tok512.bin"
if [ ! -f "$bin" ]; then
  if [ "${EMBER_REQUIRE_MODELS:-0}" = 1 ]; then echo "FAIL: $bin missing"; exit 1; fi
  echo "SKIP: $bin missing"; exit 0
fi
m="$tmp/stories260K.ember"
if ! "$ember" convert --llama2c "$bin" --tokenizer "$tok" -o "$m" 2>/dev/null; then
  echo "FAIL: cannot convert $bin"; exit 1
fi
S=$'\x1f'
long_prompt=$(printf 'Once upon a time %.0s' {1..5})  # 85 bytes, over 16 tokens
o="$tmp/out.npy"
mkdir "$tmp/dir"

# STATUS | MESSAGE FRAGMENT | ARGUMENTS separated by \x1f ("${S}"), so that prompts may
# hold spaces and any byte but that one
rows=(
  # token ids out of range
  "1|--tokens: 512 is outside [0, 511]|logits${S}-m${S}$m${S}--tokens${S}1,512${S}-o${S}$o"
  "1|--tokens: -1 is outside [0, 511]|logits${S}-m${S}$m${S}--tokens${S}-1${S}-o${S}$o"
  "1|--tokens: '99999999999999999999' is not a whole number|logits${S}-m${S}$m${S}--tokens${S}99999999999999999999${S}-o${S}$o"
  "1|--tokens: '' is not a whole number|logits${S}-m${S}$m${S}--tokens${S}1,,2${S}-o${S}$o"
  "1|--tokens: 2147483648 is outside [0, 511]|attn${S}-m${S}$m${S}--tokens${S}2147483648"
  # prompts longer than the context
  "1|longer than the context of 16|run${S}-m${S}$m${S}-c${S}16${S}-p${S}$long_prompt"
  "1|longer than the context of 1|run${S}-m${S}$m${S}-c${S}1${S}-p${S}a"
  "1|exceeds the session's max_prompt_bytes|run${S}-m${S}$m${S}-p${S}$(head -c 5000 /dev/zero | tr '\0' a)"
  "1|exceed the model's context of 512|logits${S}-m${S}$m${S}--tokens${S}$(printf '1,%.0s' {1..600})1${S}-o${S}$o"
  # invalid UTF-8
  "1|not valid UTF-8|run${S}-m${S}$m${S}-p${S}$(printf 'abc\xff')"
  "1|not valid UTF-8|tokenize${S}-m${S}$m${S}-p${S}$(printf '\xc3')"
  "1|not valid UTF-8|logits${S}-m${S}$m${S}-p${S}$(printf '\xed\xa0\x80')${S}-o${S}$o"
  "1|not valid UTF-8|attn${S}-m${S}$m${S}-p${S}$(printf '\xf4\x90\x80\x80')"
  # empty prompts: nothing to run without BOS; with BOS they are valid
  "1|no tokens to run|logits${S}-m${S}$m${S}-p${S}$S--no-bos${S}-o${S}$o"
  "1|no tokens to run|attn${S}-m${S}$m${S}-p${S}$S--no-bos"
  "0|wrote [1, 512]|logits${S}-m${S}$m${S}-p${S}$S-o${S}$o"
  "0|generated 3 tokens|run${S}-m${S}$m${S}-p${S}$S-n${S}3${S}-s${S}1"
  # zero and negative counts
  "1|-n: -5 is outside|run${S}-m${S}$m${S}-n${S}-5"
  "1|-c: -1 is outside|run${S}-m${S}$m${S}-c${S}-1"
  "1|--top-k: -1 is outside|run${S}-m${S}$m${S}--top-k${S}-1"
  "1|--top-p: -0.5 is outside|run${S}-m${S}$m${S}--top-p${S}-0.5"
  "1|--temp: -1 is outside|run${S}-m${S}$m${S}--temp${S}-1"
  "1|--show-top: -1 is outside|run${S}-m${S}$m${S}--show-top${S}-1"
  "1|-s: -1 is outside|run${S}-m${S}$m${S}-s${S}-1"
  "1|-b: 0 is outside|inspect${S}-m${S}$m${S}-b${S}0"
  "1|-c: -5 is outside|inspect${S}-m${S}$m${S}-c${S}-5"
  "1|--head: '-1' is not 'all' or a head|attn${S}-m${S}$m${S}--tokens${S}1,2${S}--head${S}-1"
  "1|--layer: '5' is not 'all' or a layer in [0, 5)|attn${S}-m${S}$m${S}--tokens${S}1,2${S}--layer${S}5"
  "0|generated 0 tokens|run${S}-m${S}$m${S}-n${S}0"  # -n 0: prefill only, a valid request
  # absurd thread counts
  "1|-t: 0 is outside [1, 256]|run${S}-m${S}$m${S}-t${S}0"
  "1|-t: 100000 is outside [1, 256]|run${S}-m${S}$m${S}-t${S}100000"
  "1|-t: -3 is outside [1, 256]|logits${S}-m${S}$m${S}--tokens${S}1${S}-t${S}-3${S}-o${S}$o"
  "1|-t: 100000 is outside [1, 256]|attn${S}-m${S}$m${S}--tokens${S}1${S}-t${S}100000"
  "1|-t: 100000 is outside [1, 256]|inspect${S}-m${S}$m${S}-t${S}100000"
  "1|-t: '1e9' is not a whole number|run${S}-m${S}$m${S}-t${S}1e9"
  # absurd sizes
  "1|context 100000 exceeds the model's 512|run${S}-m${S}$m${S}-c${S}100000"
  "1|-c: 100000000 is outside|inspect${S}-m${S}$m${S}-c${S}100000000"
  "1|--top-k: 99999999999 is outside|run${S}-m${S}$m${S}--top-k${S}99999999999"
  # unreadable, missing and directory paths
  "1|is not a regular file|run${S}-m${S}$tmp/dir"
  "1|is not a regular file|tokenize${S}-m${S}$tmp/dir${S}-p${S}x"
  "1|is not a regular file|logits${S}-m${S}$tmp/dir${S}--tokens${S}1${S}-o${S}$o"
  "1|is not a regular file|attn${S}-m${S}$tmp/dir${S}--tokens${S}1"
  "1|is not a regular file|inspect${S}-m${S}$tmp/dir"
  "1|is not a regular file|run${S}-m${S}/dev/zero"
  "1|Not a directory|run${S}-m${S}$m/x"
  "1|No such file or directory|inspect${S}-m${S}$tmp/missing.ember"
  "1|cannot read '$tmp/dir': Is a directory|convert${S}--llama2c${S}$tmp/dir${S}--tokenizer${S}$tok${S}-o${S}$tmp/x.ember"
  "1|cannot read '$tmp/dir': Is a directory|convert${S}--llama2c${S}$bin${S}--tokenizer${S}$tmp/dir${S}-o${S}$tmp/x.ember"
  "1|config.json': Not a directory|convert${S}--hf${S}$m${S}-o${S}$tmp/x.ember"
  "1|cannot create '$tmp/dir': Is a directory|convert${S}--llama2c${S}$bin${S}--tokenizer${S}$tok${S}-o${S}$tmp/dir"
  "1|cannot create|logits${S}-m${S}$m${S}--tokens${S}1${S}-o${S}$tmp/dir"
  "1|cannot create|attn${S}-m${S}$m${S}--tokens${S}1${S}-o${S}$tmp/missing/a.json"
)

failures=0
for row in "${rows[@]}"; do
  want="${row%%|*}"
  rest="${row#*|}"
  fragment="${rest%%|*}"
  IFS="${S}" read -r -a args <<<"${rest#*|}"
  out=$("$ember" "${args[@]}" 2>&1 >"$tmp/stdout")
  status=$?
  out="$out$(cat "$tmp/stdout")"
  shown="ember ${args[*]}"
  shown="${shown:0:120}"
  if [ "$status" -gt 128 ]; then
    echo "FAIL: $shown -> killed by signal $((status - 128)): $out"
    failures=$((failures + 1))
  elif [ "$status" != "$want" ] || ! grep -qF -- "$fragment" <<<"$out"; then
    echo "FAIL: $shown -> status $status (want $want), output: ${out:0:300} (want '$fragment')"
    failures=$((failures + 1))
  else
    echo "ok: $shown -> $status: $(head -c 140 <<<"$out" | tr '\n' ' ')"
  fi
done
echo "${#rows[@]} rows, $failures failure(s)"
[ "$failures" = 0 ]
