// The Hugging Face tokenizer oracle: encodes texts with transformers.js' tokenizers (the
// npm package @lenml/tokenizers, installed by tools/scripts/setup.sh all) for
// tests/hf_tokenizer_oracle_test.cc, which compares ember's ids with these.
//
//   node hf_tokenizer_oracle.js NODE_MODULES TOKENIZER_DIR TEXTS.json OUT.json
//
// TEXTS.json is a list of strings. OUT.json gets, per text:
//   parse:    ids with added tokens matched (as transformers.js always does),
//             without the template's special tokens (add_special_tokens false);
//   no_parse: ids with special added tokens read as text (Hugging Face's
//             split_special_tokens: they are left out of the added-token list);
//   bos:      ids with add_special_tokens true, for the first few texts.
'use strict';
const fs = require('fs');
const path = require('path');

const [modules, dir, textsPath, outPath] = process.argv.slice(2);
if (!outPath) {
  console.error(
      'usage: node hf_tokenizer_oracle.js NODE_MODULES TOKENIZER_DIR TEXTS OUT');
  process.exit(2);
}
const {TokenizerLoader} = require(path.join(modules, '@lenml/tokenizers'));
const readJson = (name) => JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8'));
const tokenizerJSON = readJson('tokenizer.json');
const tokenizerConfig = readJson('tokenizer_config.json');
const texts = JSON.parse(fs.readFileSync(textsPath, 'utf8'));

// One known departure of the port from Hugging Face's Rust code, undone here: its Digits
// pre-tokenizer matches JavaScript's \d (ASCII digits only) where the Rust code splits
// on char::is_numeric (Unicode's Nd, Nl and No: \p{N}), as llama.cpp's "smollm" does.
function numericDigits(tok) {
  let patched = 0;
  const visit = (pre) => {
    if (!pre) return;
    if (pre.constructor.name === 'DigitsPreTokenizer') {
      const more = pre.config.individual_digits ? '' : '+';
      pre.pattern = new RegExp(`[^\\p{N}]+|\\p{N}${more}`, 'gu');
      ++patched;
    }
    (pre.tokenizers || []).forEach(visit);
  };
  visit(tok.pre_tokenizer);
  if (JSON.stringify(tokenizerJSON.pre_tokenizer || null).includes('"Digits"') &&
      !patched) {
    throw new Error('the Digits pre-tokenizer was not found to correct');
  }
  return tok;
}

// Three departures of the port's BertNormalizer from the Rust code (normalizers/bert.rs),
// undone here with the port's own steps: it lowercases the whole string (JavaScript's
// toLowerCase applies Final_Sigma; Rust's char::to_lowercase, code point by code point,
// does not); it lowercases before stripping accents (Rust strips first); and it spaces
// CJK ideographs by UTF-16 unit (missing those above U+FFFF) with BERT's Python ranges
// (Rust's fifth range starts at U+2B920, not U+2B820).
function rustBertNormalizer(tok) {
  const n = tok.normalizer;
  if (!n || n.constructor.name !== 'BertNormalizer') {
    if (JSON.stringify(tokenizerJSON.normalizer || null).includes('"BertNormalizer"')) {
      throw new Error('the BertNormalizer was not found to correct');
    }
    return tok;
  }
  const cjk = (cp) => (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0x3400 && cp <= 0x4dbf) ||
      (cp >= 0x20000 && cp <= 0x2a6df) || (cp >= 0x2a700 && cp <= 0x2b73f) ||
      (cp >= 0x2b740 && cp <= 0x2b81f) || (cp >= 0x2b920 && cp <= 0x2ceaf) ||
      (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0x2f800 && cp <= 0x2fa1f);
  n._tokenize_chinese_chars = (text) =>
      Array.from(text, (c) => (cjk(c.codePointAt(0)) ? ` ${c} ` : c)).join('');
  n.normalize = function(text) {
    const config = this.config;
    if (config.clean_text) text = this._clean_text(text);
    if (config.handle_chinese_chars) text = this._tokenize_chinese_chars(text);
    if (config.strip_accents ?? config.lowercase) text = this.stripAccents(text);
    if (config.lowercase) text = Array.from(text, (c) => c.toLowerCase()).join('');
    return text;
  };
  return tok;
}

const load = (json) => rustBertNormalizer(
    numericDigits(TokenizerLoader.fromPreTrained({tokenizerJSON: json, tokenizerConfig})));
const parsing = load(tokenizerJSON);
// The same tokenizer with its special added tokens removed from the list it splits on:
// their text goes through normalization, pre-tokenization and BPE like any other.
const plainJSON = {
  ...tokenizerJSON,
  added_tokens: tokenizerJSON.added_tokens.filter((t) => !t.special),
};
const plain = load(plainJSON);

const encode = (tok, text, add_special_tokens) =>
    Array.from(tok.encode(text, {add_special_tokens}));
const out = {
  parse: texts.map((t) => encode(parsing, t, false)),
  no_parse: texts.map((t) => encode(plain, t, false)),
  bos: texts.slice(0, 8).map((t) => encode(parsing, t, true)),
};
fs.writeFileSync(outPath, JSON.stringify(out));
