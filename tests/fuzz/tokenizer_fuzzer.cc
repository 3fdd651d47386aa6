// Fuzzes the tokenizer on arbitrary bytes, over real vocabularies in models ember wrote
// itself: stories260K's and Llama 2's SentencePiece BPE (llama2.c tokenizer files),
// GPT-2's byte-level BPE (encoder.json + vocab.bpe), and the tokenizer.json of Llama 3,
// Qwen3 (NFC) and Gemma 3 (SentencePiece by rank, thousands of added tokens), from
// $EMBER_MODELS (a small byte-fallback vocabulary stands in when they are missing).
// Encoding must refuse invalid UTF-8 with a status and round-trip valid text (as each
// tokenizer normalizes it); decoding any id must be safe.
//
// Input: byte 0 picks the vocabulary (low 6 bits), special-token parsing (bit 6) and BOS
// (bit 7); the rest is the text.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "runtime/model/model.h"
#include "runtime/text/normalizer.h"
#include "runtime/text/utf8.h"
#include "tests/fuzz/fuzz_common.h"
#include "tools/convert/hf/hf_tokenizer.h"
#include "tools/convert/llama2c/llama2c_import.h"
#include "tools/util/files.h"

namespace {

using ember::Model;
using ember::Tokenizer;

struct Loaded {
  std::string name;
  std::unique_ptr<ember::fuzz::AlignedCopy> bytes;
  std::unique_ptr<Model> model;
  std::unique_ptr<ember::LoadedTokenizer> hf;  // a tokenizer.json, without a model
  const Tokenizer* tok = nullptr;
};

std::vector<Loaded>* vocabularies = nullptr;

void AddVocabulary(const std::string& name, const ember::TokenizerSpec& tokenizer) {
  std::vector<uint8_t> bytes;
  ember::Status s =
      ember::SerializeModel(ember::fuzz::ModelAroundTokenizer(tokenizer), &bytes);
  Loaded l;
  l.name = name;
  l.bytes = std::make_unique<ember::fuzz::AlignedCopy>(bytes.data(), bytes.size());
  if (s.ok()) {
    auto model = Model::FromMemory(l.bytes->data(), l.bytes->size());
    if (model.ok()) {
      l.model = std::move(*model);
    } else {
      s = model.status();
    }
  }
  if (!s.ok()) {
    fprintf(stderr, "tokenizer_fuzzer: %s: %s\n", name.c_str(), s.message());
    abort();
  }
  l.tok = &l.model->tokenizer();
  vocabularies->push_back(std::move(l));
}

void AddHfTokenizer(const std::string& dir, const std::string& name) {
  if (access((dir + "/tokenizer.json").c_str(), R_OK) != 0) return;
  Loaded l;
  l.name = name;
  l.hf = std::make_unique<ember::LoadedTokenizer>();
  const ember::Status s = ember::tools::LoadHfTokenizer(dir, l.hf.get());
  if (!s.ok()) {
    fprintf(stderr, "tokenizer_fuzzer: %s: %s\n", dir.c_str(), s.message());
    abort();
  }
  l.tok = &l.hf->tokenizer;
  vocabularies->push_back(std::move(l));
}

void LoadVocabularies() {
  vocabularies = new std::vector<Loaded>();
  const char* env = getenv("EMBER_MODELS");
  const std::string dir = env && *env ? env : EMBER_DEFAULT_MODELS_DIR;
  std::vector<uint8_t> bytes;
  for (const auto& [file, vocab] :
       {std::pair<const char*, uint32_t>{"llama2c/stories260K/tok512.bin", 512},
        {"llama2c/tokenizer.bin", 32000}}) {
    ember::TokenizerSpec tok;
    if (ember::tools::ReadFile(dir + "/" + file, &bytes).ok() &&
        ember::tools::ParseLlama2cTokenizer(bytes, vocab, &tok).ok()) {
      AddVocabulary(file, tok);
    }
  }
  ember::TokenizerSpec gpt2;
  if (ember::tools::ReadVocabAndMerges(dir + "/gpt2-bpe/encoder.json",
                                       dir + "/gpt2-bpe/vocab.bpe",
                                       ember::tools::SpecialTokens(), &gpt2)
          .ok()) {
    AddVocabulary("gpt2-bpe", gpt2);
  }
  for (const char* name : {"llama3", "qwen3", "gemma3"}) {
    AddHfTokenizer(dir + "/hf-tokenizers/" + name, name);
  }
  if (vocabularies->empty()) {
    fprintf(stderr, "tokenizer_fuzzer: no vocabularies under %s; using a small one\n",
            dir.c_str());
  }
  AddVocabulary("small", ember::fuzz::SmallModelSpec().tokenizer);
  if (getenv("EMBER_FUZZ_VERBOSE")) {
    for (const Loaded& l : *vocabularies) {
      fprintf(stderr, "tokenizer_fuzzer: vocabulary %s (%u pieces)\n", l.name.c_str(),
              l.tok->vocab_size());
    }
  }
}

[[noreturn]] void Fail(const Loaded& l, const std::string& text, const char* what,
                       const std::string& got) {
  fprintf(stderr, "tokenizer_fuzzer: %s: %s\n  text (%zu bytes) and got (%zu bytes):\n",
          l.name.c_str(), what, text.size(), got.size());
  for (const std::string* s : {&text, &got}) {
    for (unsigned char c : *s) fprintf(stderr, "%02x", c);
    fprintf(stderr, "\n");
  }
  abort();
}

// The text as the tokenizer reads it, when that is known without normalizing: U+2581 is
// a space to a SentencePiece tokenizer from tokenizer.json.
std::string AsRead(const Tokenizer& tok, const std::string& text) {
  std::string out = text;
  if (!tok.tables().metaspace_is_space) return out;
  for (size_t at; (at = out.find("\xE2\x96\x81")) != std::string::npos;)
    out.replace(at, 3, " ");
  return out;
}

bool Strips(const Tokenizer& tok) {
  const ember::TokenizerTables& t = tok.tables();
  for (size_t i = 0; i < t.num_added; ++i) {
    if (t.added_flags[i] & (ember::kAddedLstrip | ember::kAddedRstrip)) return true;
  }
  return false;
}

}  // namespace

// libFuzzer calls this once before the first input: reading the tokenizer.json files
// (seconds, more under ASan) is then not charged to an input's -timeout. The replay
// harness does not call it; the first input loads them there.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  LoadVocabularies();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!vocabularies) LoadVocabularies();
  if (size == 0) return 0;
  const Loaded& l = (*vocabularies)[(data[0] & 0x3F) % vocabularies->size()];
  const Tokenizer& tok = *l.tok;
  ember::EncodeOptions options;
  options.add_bos = (data[0] & 0x80) != 0 && tok.bos_id() >= 0;
  options.parse_special = (data[0] & 0x40) != 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);

  std::vector<int32_t> ids(tok.EncodeCapacity(text.size()) + 1, -7);
  size_t n = 0;
  const ember::Status s = tok.Encode(text, options, ids.data(), ids.size() - 1, &n);
  size_t bad = 0;
  const bool valid = ember::ValidUtf8(text, &bad);
  if (s.ok() != valid) Fail(l, text, s.ok() ? "invalid UTF-8 encoded" : s.message(), "");
  if (ids.back() != -7) Fail(l, text, "wrote past EncodeCapacity", "");

  if (s.ok()) {
    // Decoding the ids gives the text back, control tokens matched in it as their text
    // (SentencePiece: after its dummy-prefix space, which decoding drops only right after
    // BOS).
    std::string decoded;
    int32_t prev = -1;
    for (size_t i = 0; i < n; ++i) {
      if (ids[i] < 0 || static_cast<uint32_t>(ids[i]) >= tok.vocab_size()) {
        Fail(l, text, "id outside the vocabulary", std::to_string(ids[i]));
      }
      const bool control = tok.type(ids[i]) == ember::TokenType::kControl;
      decoded += control && (i > 0 || !options.add_bos) ? tok.piece(ids[i])
                                                        : tok.Decode(prev, ids[i]);
      prev = ids[i];
    }
    const bool sentencepiece_prefix =
        tok.kind() == ember::TokenizerKind::kSentencePieceBpe &&
        tok.tables().add_dummy_prefix;
    const bool nfc = tok.tables().normalizer == ember::Normalization::kNfc;
    if (nfc && !ember::IsNfcQuick(text)) {
      // Normalized: encoding what decoding gave changes nothing more.
      std::vector<int32_t> again(tok.EncodeCapacity(decoded.size()));
      size_t m = 0;
      ember::EncodeOptions plain = options;
      plain.add_bos = false;
      const size_t skip = options.add_bos ? 1 : 0;
      if (!tok.Encode(decoded, plain, again.data(), again.size(), &m).ok() ||
          m != n - skip ||
          !std::equal(again.begin(), again.begin() + m, ids.begin() + skip)) {
        Fail(l, text, "encode(decode(encode(text))) != encode(text)", decoded);
      }
    } else if (!(sentencepiece_prefix && options.parse_special) && !Strips(tok)) {
      std::string expected = AsRead(tok, text);
      if (sentencepiece_prefix && !options.add_bos && !text.empty())
        expected = " " + expected;
      if (decoded != expected) Fail(l, text, "decode(encode(text)) != text", decoded);
    }
  }

  // Any id sequence decodes safely: the text's bytes as little-endian 16-bit ids.
  int32_t prev = -1;
  for (size_t i = 1; i + 1 < size; i += 2) {
    const int32_t id =
        (data[i] | (data[i + 1] << 8) | (data[i] << 16)) % tok.vocab_size();
    const std::string_view piece = tok.Decode(prev, id);
    if (piece.size() > 256) Fail(l, text, "a piece longer than 256 bytes", "");
    prev = id;
  }
  return 0;
}
