#!/usr/bin/env bash
# ember tokenize --tokenizer DIR: Qwen3's and Gemma 3's Hugging Face tokenizer directories
# tokenized without a model (ids as transformers.js gives them), --parse-special, and bad
# directories refused with a message.
# usage: cli_tokenize_dir_test.sh EMBER_BINARY MODELS_DIR
set -uo pipefail
ember="$1"
models="${EMBER_MODELS:-$2}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# expect STATUS FRAGMENT -- command... (counts failures).
source "$(dirname "$0")/cli_expect.sh"

qwen="$models/hf-tokenizers/qwen3"
gemma="$models/hf-tokenizers/gemma3"
skip_without "$qwen/tokenizer.json" "$gemma/tokenizer.json"

chat=$'<|im_start|>user\nHi<|im_end|>'
expect 0 "151644 872 198 13048 151645" -- "$ember" tokenize --tokenizer "$qwen" -p "$chat" \
  --parse-special
expect 0 "27 91 318 4906 91 29 872 198 13048 27 91 318 6213 91 29" -- \
  "$ember" tokenize --tokenizer "$qwen" -p "$chat"
# NFC: e + U+0301 is U+00E9; Qwen's digits one by one.
expect 0 "924 58858 220 16 17 18 19 20" -- "$ember" tokenize --tokenizer "$qwen" \
  -p $'cafe\xcc\x81 12345'
# Gemma 3 adds <bos>; --pieces prints each piece.
expect 0 $'105\t"<start_of_turn>"' -- "$ember" tokenize --tokenizer "$gemma" \
  -p $'<start_of_turn>user\nHi<end_of_turn>' --parse-special --pieces

expect 1 "give either -m MODEL or --tokenizer DIR" -- "$ember" tokenize -p "x"
expect 1 "give either -m MODEL or --tokenizer DIR" -- "$ember" tokenize -m "$tmp/m" \
  --tokenizer "$qwen" -p "x"
expect 1 "no tokenizer" -- "$ember" tokenize --tokenizer "$tmp" -p "x"
mkdir "$tmp/bad"
cat >"$tmp/bad/tokenizer.json" <<'JSON'
{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
 "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
   {"type": "Split", "pattern": {"Regex": "\\p{L}+|\\d{1,4}"}, "behavior": "Isolated",
    "invert": false},
   {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]}}
JSON
expect 1 "the pre-tokenizer pattern '\\p{L}+|\\d{1,4}' is not one ember runs" -- \
  "$ember" tokenize --tokenizer "$tmp/bad" -p "x"

if [ "$failures" != 0 ]; then echo "$failures failed"; exit 1; fi
echo "all passed"
