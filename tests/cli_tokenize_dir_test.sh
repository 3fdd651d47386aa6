#!/usr/bin/env bash
# ember tokenize --tokenizer DIR: a WordPiece directory written here, Qwen3's and Gemma
# 3's Hugging Face tokenizer directories tokenized without a model (ids as
# transformers.js gives them), --parse-special, and bad directories refused with a
# message.
# usage: cli_tokenize_dir_test.sh EMBER_BINARY MODELS_DIR
set -uo pipefail
ember="$1"
models="${EMBER_MODELS:-$2}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# expect STATUS FRAGMENT -- command... (counts failures).
source "$(dirname "$0")/cli_expect.sh"

# A WordPiece (BERT) tokenizer written here: [CLS] text [SEP], lowercase and accents
# stripped, "##" continuations, [UNK] for a word it cannot split; --pieces shows each
# piece as it decodes (a word's first with its space).
mkdir "$tmp/bert"
cat >"$tmp/bert/tokenizer.json" <<'JSON'
{"added_tokens": [
  {"id": 0, "content": "[PAD]", "special": true, "normalized": false},
  {"id": 1, "content": "[UNK]", "special": true, "normalized": false},
  {"id": 2, "content": "[CLS]", "special": true, "normalized": false},
  {"id": 3, "content": "[SEP]", "special": true, "normalized": false}],
 "normalizer": {"type": "BertNormalizer", "clean_text": true,
                "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
 "pre_tokenizer": {"type": "BertPreTokenizer"},
 "post_processor": {"type": "TemplateProcessing",
   "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
              {"Sequence": {"id": "A", "type_id": 0}},
              {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
   "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                      "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
 "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
   "max_input_chars_per_word": 100,
   "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "un": 4, "##aff": 5,
             "##able": 6, "cafe": 7, "!": 8}}}
JSON
echo '{}' >"$tmp/bert/tokenizer_config.json"
expect 0 "2 4 5 6 7 8 1 3" -- "$ember" tokenize --tokenizer "$tmp/bert" \
  -p $'Unaffable CAF\xc3\x89! xyz'
expect 0 "4 5 6" -- "$ember" tokenize --tokenizer "$tmp/bert" -p "unaffable" --no-bos
expect 0 $'5\t"aff"' -- "$ember" tokenize --tokenizer "$tmp/bert" -p "unaffable" --pieces
sed -i 's/"BertPreTokenizer"/"Whitespace"/' "$tmp/bert/tokenizer.json"
expect 1 "the pre-tokenizer 'Whitespace' is not supported with WordPiece" -- \
  "$ember" tokenize --tokenizer "$tmp/bert" -p "x"

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
