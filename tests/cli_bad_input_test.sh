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
mkdir "$tmp/dir" "$tmp/hf"
# A Hugging Face tokenizer whose merges are a string, not a list (once read as no merges).
printf '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": "a b"}}' >"$tmp/hf/tokenizer.json"
# Inputs that an output option might name: the model (also through links) and a bench
# file, with copies to check them against after the table.
ln -s "$m" "$tmp/model.link"
ln "$m" "$tmp/model.hard"
cp "$m" "$tmp/model.copy"
if ! "$ember" bench -m "$m" -p 4 -n 2 -r 1 -o jsonl >"$tmp/bench.jsonl" 2>/dev/null; then
  echo "FAIL: cannot bench $m"; exit 1
fi
ln -s "$tmp/bench.jsonl" "$tmp/bench.link"
cp "$tmp/bench.jsonl" "$tmp/bench.copy"
bench="bench${S}-m${S}$m${S}-p${S}4${S}-n${S}2${S}-r${S}1"

# STATUS | MESSAGE FRAGMENT | ARGUMENTS separated by \x1f ("${S}"), so that prompts may
# hold spaces and any byte but that one
rows=(
  # token ids out of range
  "1|--tokens: 512 is outside [0, 511]|logits${S}-m${S}$m${S}--tokens${S}1,512${S}-o${S}$o"
  # embed: a language model, no texts, contradicting flags, a bad output
  "1|is not an embedding model|embed${S}-m${S}$m${S}-p${S}hi"
  "1|no texts: give -p TEXT or --file|embed${S}-m${S}$m"
  "1|--normalize and --no-normalize contradict|embed${S}-m${S}$m${S}-p${S}x${S}--normalize${S}--no-normalize"
  "1|--dims: 0 is outside|embed${S}-m${S}$m${S}-p${S}x${S}--dims${S}0"
  "1|--tokens: -1 is outside [0, 511]|logits${S}-m${S}$m${S}--tokens${S}-1${S}-o${S}$o"
  "1|--tokens: '99999999999999999999' is not a whole number|logits${S}-m${S}$m${S}--tokens${S}99999999999999999999${S}-o${S}$o"
  "1|--tokens: '' is not a whole number|logits${S}-m${S}$m${S}--tokens${S}1,,2${S}-o${S}$o"
  "1|--tokens: 2147483648 is outside [0, 511]|attn${S}-m${S}$m${S}--tokens${S}2147483648"
  # prompts longer than the context
  "1|longer than the context of 16|run${S}-m${S}$m${S}-c${S}16${S}-p${S}$long_prompt"
  "1|longer than the context of 1|run${S}-m${S}$m${S}-c${S}1${S}-p${S}a"
  "1|the prompt of 5000 bytes cannot fit a context of 512 positions|run${S}-m${S}$m${S}-p${S}$(head -c 5000 /dev/zero | tr '\0' a)"
  "1|cannot fit a context of 16 positions|run${S}-m${S}$m${S}-c${S}16${S}-p${S}$(head -c 200 /dev/zero | tr '\0' a)"
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
  "1|top_p 0: outside (0, 1]|run${S}-m${S}$m${S}--top-p${S}0"
  # ISA tiers: unknown ones, from the option or the environment (the env rows below)
  "1|unknown ISA tier \"avx1024\"|run${S}-m${S}$m${S}--isa${S}avx1024${S}-n${S}1"
  "1|--isa avx1024: unknown tier|bench${S}-m${S}$m${S}--isa${S}avx1024"
  "1|--isa: an empty tier name|bench${S}-m${S}$m${S}--isa${S}native,"
  "0|generated 2 tokens|run${S}-m${S}$m${S}--isa${S}native${S}-n${S}2${S}-s${S}1"
  "1|--show-top: -1 is outside|run${S}-m${S}$m${S}--show-top${S}-1"
  "1|-s: -1 is outside|run${S}-m${S}$m${S}-s${S}-1"
  "1|-b: 0 is outside|inspect${S}-m${S}$m${S}-b${S}0"
  "1|-c: -5 is outside|inspect${S}-m${S}$m${S}-c${S}-5"
  "0|every value finite|inspect${S}-m${S}$m${S}--check-weights"
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
  "1|model.merges is string, not a list|tokenize${S}--tokenizer${S}$tmp/hf${S}-p${S}a"
  "1|'$tmp/dir' is not a readable regular file|convert${S}--gguf${S}$tmp/dir${S}-o${S}$tmp/x.ember"
  "1|GGUF: not a GGUF file (it starts with \"|convert${S}--gguf${S}$m${S}-o${S}$tmp/x.ember"
  "1|--ctx: 0 is outside|convert${S}--gguf${S}$models/gguf/stories260K.gguf${S}--ctx${S}0${S}-o${S}$tmp/x.ember"
  "1|--ctx needs --synthetic or --gguf|convert${S}--llama2c${S}$bin${S}--tokenizer${S}$tok${S}--ctx${S}9${S}-o${S}$tmp/x.ember"
  "1|--mmproj needs --gguf MODEL.gguf|convert${S}--llama2c${S}$bin${S}--tokenizer${S}$tok${S}--mmproj${S}$tmp/x.gguf${S}-o${S}$tmp/x.ember"
  "1|$m: GGUF: not a GGUF file|convert${S}--gguf${S}$models/gguf/stories260K.gguf${S}--mmproj${S}$m${S}-o${S}$tmp/x.ember"
  "1|stories260K.gguf: GGUF mmproj: general.architecture is 'llama': not a projector file ('clip')|convert${S}--gguf${S}$models/gguf/stories260K.gguf${S}--mmproj${S}$models/gguf/stories260K.gguf${S}-o${S}$tmp/x.ember"
  "1|cannot create '$tmp/dir': Is a directory|convert${S}--llama2c${S}$bin${S}--tokenizer${S}$tok${S}-o${S}$tmp/dir"
  "1|cannot create|logits${S}-m${S}$m${S}--tokens${S}1${S}-o${S}$tmp/dir"
  "1|cannot create|attn${S}-m${S}$m${S}--tokens${S}1${S}-o${S}$tmp/missing/a.json"
  # an output that is an input of the same command (the same device and inode, under any
  # name): refused before anything is written
  "1|refusing to write '$m': it is the model '$m'|$bench${S}--history${S}$m"
  "1|it is the model '$m' (the same file under another name)|$bench${S}--chart${S}$tmp/model.link"
  "1|it is the --history file|$bench${S}--history${S}$tmp/h.jsonl${S}--chart${S}$tmp/h.jsonl"
  "1|it is the input '$tmp/bench.jsonl'|bench-compare${S}$tmp/bench.jsonl${S}$tmp/bench.copy${S}--chart${S}$tmp/bench.jsonl"
  "1|it is the input '$tmp/bench.jsonl'|bench-chart${S}$tmp/bench.jsonl${S}-o${S}$tmp/bench.jsonl"
  "1|(the same file under another name)|bench-chart${S}$tmp/bench.jsonl${S}--format${S}md${S}-o${S}$tmp/bench.link"
  "1|it is the model '$m' (the same file under another name)|logits${S}-m${S}$m${S}--tokens${S}1${S}-o${S}$tmp/model.hard"
  "1|it is the model '$m' (the same file under another name)|attn${S}-m${S}$m${S}--tokens${S}1${S}-o${S}$tmp/model.link"
  "1|it is the model '$m' (the same file under another name)|bake${S}-m${S}$m${S}-p${S}x${S}-o${S}$tmp/model.hard"
  "1|it is the model '$m' (the same file under another name)|run${S}-m${S}$m${S}-n${S}1${S}--prompt-cache${S}$tmp/model.link"
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
for kept in model bench; do
  case $kept in model) file="$m" ;; bench) file="$tmp/bench.jsonl" ;; esac
  if ! cmp -s "$file" "$tmp/$kept.copy"; then
    echo "FAIL: an output option changed its command's input $file"
    failures=$((failures + 1))
  fi
done
# EMBER_ISA, when --isa is not given: an unknown tier is an error naming the variable.
out=$(EMBER_ISA=avx1024 "$ember" run -m "$m" -n 1 2>&1)
status=$?
if [ "$status" != 1 ] || ! grep -qF 'EMBER_ISA: unknown ISA tier "avx1024"' <<<"$out"; then
  echo "FAIL: EMBER_ISA=avx1024 ember run -> status $status: ${out:0:300}"
  failures=$((failures + 1))
else
  echo "ok: EMBER_ISA=avx1024 ember run -> 1: $(head -c 140 <<<"$out" | tr '\n' ' ')"
fi
# Text from a model file reaches the terminal escaped: a GGUF whose general.name is an
# escape sequence (the same length as "llama", patched in place) converts, and inspect
# prints the name with \x1B, not the byte a terminal obeys.
gguf="$models/gguf/stories260K.gguf"
if [ -f "$gguf" ]; then
  python3 - "$gguf" "$tmp/evil.gguf" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
key = b"general.name" + bytes([8, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0]) + b"llama"
assert data.count(key) == 1
open(sys.argv[2], "wb").write(data.replace(key, key[:-5] + b"\x1b[31m"))
PY
  "$ember" convert --gguf "$tmp/evil.gguf" -o "$tmp/evil.ember" >"$tmp/evil.out" 2>&1
  "$ember" inspect -m "$tmp/evil.ember" >>"$tmp/evil.out" 2>&1
  if ! grep -qF 'description  GGUF evil.gguf (\x1B[31m)' "$tmp/evil.out" ||
    grep -q $'\x1b' "$tmp/evil.out"; then
    echo "FAIL: a GGUF's general.name reached the terminal raw: $(grep -a description "$tmp/evil.out" | od -c | head -3)"
    failures=$((failures + 1))
  else
    echo "ok: inspect escapes a GGUF's general.name: $(grep -a description "$tmp/evil.out")"
  fi
fi
# --temp below 1e-4 is greedy (1e-39 overflowed 1/T and sampled garbage): the same
# story as --temp 0.
greedy=$("$ember" run -m "$m" -n 40 --temp 0 2>/dev/null)
tiny=$("$ember" run -m "$m" -n 40 --temp 1e-39 -s 5 2>/dev/null)
if [ -z "$greedy" ] || [ "$greedy" != "$tiny" ]; then
  echo "FAIL: --temp 1e-39 is not greedy: '${tiny:0:200}' vs '${greedy:0:200}'"
  failures=$((failures + 1))
else
  echo "ok: --temp 1e-39 tells the greedy story"
fi

# A small file that declares a 2^24-position context: a run is sized for what it
# needs (the prompt and -n), one that asks for nothing is refused at once, and an
# allocation that fails is a message, not an abort. Natively (not under qemu or a
# sanitizer, which reserve address space of their own), memory is capped at 3 GB.
huge="$tmp/huge-context.ember"
"$ember" convert --synthetic custom --dim 64 --hidden 128 --layers 2 --heads 4 --vocab 300 \
  --ctx 16777216 -o "$huge" >/dev/null 2>&1 || { echo "FAIL: cannot make $huge"; exit 1; }
# The binary itself (behind the qemu wrapper of a cross build) and its ELF class.
binary="$ember"
if [ "$(head -c 2 "$ember")" = "#!" ]; then
  binary=$(grep -o '"/[^"]*"' "$ember" | head -n 1 | tr -d '"')
fi
elf_class=$(od -An -tu1 -j4 -N1 "$binary" | tr -d ' ')  # 1: 32-bit, 2: 64-bit
limit=unlimited
if [ "$binary" = "$ember" ] && ! grep -q -a -m1 Sanitizer "$ember"; then limit=3000000; fi
huge_rows=(
  "0|generated 8 tokens|run${S}-m${S}$huge${S}-p${S}hi${S}-n${S}8${S}-s${S}1"
  "1|the model's context of 16777216 positions needs|run${S}-m${S}$huge${S}-p${S}hi"
  "0|wrote [1, 300]|logits${S}-m${S}$huge${S}--tokens${S}1,2${S}-o${S}$tmp/huge.npy"
)
if [ "$elf_class" = 1 ]; then  # 17 GiB: past a 32-bit address space
  huge_rows+=("1|a context of 16777216 positions needs more memory than this target can address|inspect${S}-m${S}$huge")
else
  huge_rows+=("0|arena plan   context 16777216|inspect${S}-m${S}$huge")
fi
if [ "$limit" != unlimited ]; then
  huge_rows+=("1|cannot allocate the session's arena|run${S}-m${S}$huge${S}-c${S}16777216${S}-n${S}2")
fi
for row in "${huge_rows[@]}"; do
  want="${row%%|*}"
  rest="${row#*|}"
  fragment="${rest%%|*}"
  IFS="${S}" read -r -a args <<<"${rest#*|}"
  out=$(ulimit -v "$limit"; "$ember" "${args[@]}" 2>&1)
  status=$?
  if [ "$status" != "$want" ] || ! grep -qaF -- "$fragment" <<<"$out"; then
    echo "FAIL: ember ${args[*]} (memory $limit KiB) -> status $status (want $want): ${out:0:300} (want '$fragment')"
    failures=$((failures + 1))
  else
    echo "ok: ember ${args[*]} (memory $limit KiB) -> $status: $(tail -c 140 <<<"$out" | tr -c '[:print:]' ' ')"
  fi
done

echo "${#rows[@]} rows, $failures failure(s)"
[ "$failures" = 0 ]
