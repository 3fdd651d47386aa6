// Fuzzes the Hugging Face tokenizer reader: the input holds a tokenizer.json, an
// optional tokenizer_config.json and an optional text, split at kPartSeparator (an empty
// config part is a missing file; no text part: the input's first bytes are the text).
// The files are written to a private temporary directory and read as conversion reads
// them (ReadHfTokenizer, then CompileChatTemplate for the config's template); what they
// give is built into a small model and loaded, and that model's tokenizer encodes a
// fixed text and the input's text, with and without special-token parsing, and decodes
// what it made and a few arbitrary ids. Any crash, sanitizer report or abort is a bug.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/model/model.h"
#include "tests/fuzz/fuzz_common.h"
#include "tools/convert/hf/hf_tokenizer.h"
#include "tools/template/chat_program.h"

namespace {

constexpr const char* kFiles[] = {"tokenizer.json", "tokenizer_config.json"};

const std::string& Directory() {
  static const std::string* dir = [] {
    const char* tmp = getenv("TMPDIR");
    std::string path =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/ember_tokenizer_json_fuzz_XXXXXX";
    if (!mkdtemp(path.data())) {
      perror("tokenizer_json_fuzzer: mkdtemp");
      abort();
    }
    auto* p = new std::string(path);
    atexit([] {
      for (const char* f : kFiles) unlink((Directory() + "/" + f).c_str());
      rmdir(Directory().c_str());
    });
    return p;
  }();
  return *dir;
}

[[noreturn]] void Fail(const char* what, const std::string& text) {
  fprintf(stderr, "tokenizer_json_fuzzer: %s; text (%zu bytes):\n", what, text.size());
  for (unsigned char c : text) fprintf(stderr, "%02x", c);
  fprintf(stderr, "\n");
  abort();
}

// Encodes `text` into exactly EncodeCapacity ids (ASan sees a write past them) and
// decodes what came out.
void RoundTrip(const ember::Tokenizer& tok, const std::string& text, bool special,
               bool bos) {
  ember::EncodeOptions options;
  options.parse_special = special;
  options.add_bos = bos && tok.bos_id() >= 0;
  const size_t capacity = tok.EncodeCapacity(text.size());
  std::vector<int32_t> ids(capacity);
  size_t n = 0;
  const ember::Status s = tok.Encode(text, options, ids.data(), capacity, &n);
  if (!s.ok()) {
    if (s.message()[0] == '\0') Fail("Encode failed without a message", text);
    return;
  }
  if (n > capacity) Fail("Encode reported more ids than EncodeCapacity", text);
  int32_t prev = -1;
  for (size_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || static_cast<uint32_t>(ids[i]) >= tok.vocab_size()) {
      Fail("an id outside the vocabulary", text);
    }
    (void)tok.Decode(prev, ids[i]);
    prev = ids[i];
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = ember::fuzz::SplitParts(data, size, 3);
  for (size_t i = 0; i < 2; ++i) {
    const std::string path = Directory() + "/" + kFiles[i];
    if (i > 0 && parts[i].empty()) {
      unlink(path.c_str());
      continue;
    }
    FILE* f = fopen(path.c_str(), "wb");
    if (!f || fwrite(parts[i].data(), 1, parts[i].size(), f) != parts[i].size() ||
        fclose(f) != 0) {
      perror("tokenizer_json_fuzzer: writing the directory");
      abort();
    }
  }
  ember::TokenizerSpec tokenizer;
  if (!ember::tools::ReadHfTokenizer(Directory(), 0, ember::tools::SpecialTokens(),
                                     &tokenizer)
           .ok()) {
    return 0;
  }
  // Conversion refuses a model whose template does not compile; here the tokenizer
  // goes on without it.
  if (!ember::tools::CompileChatTemplate(&tokenizer).ok()) {
    tokenizer.chat_template.clear();
    tokenizer.chat_program = ember::ChatProgramSpec();
  }
  if (tokenizer.pieces.empty() || tokenizer.pieces.size() > (1u << 20)) return 0;
  std::vector<uint8_t> bytes;
  if (!ember::SerializeModel(ember::fuzz::ModelAroundTokenizer(tokenizer), &bytes).ok()) {
    return 0;
  }
  const ember::fuzz::AlignedCopy copy(bytes.data(), bytes.size());
  auto model = ember::Model::FromMemory(copy.data(), copy.size());
  if (!model.ok()) return 0;
  const ember::Tokenizer& tok = (*model)->tokenizer();

  const std::string text =
      parts[2].empty() && size > 0
          ? std::string(reinterpret_cast<const char*>(data), size < 64 ? size : 64)
          : std::string(parts[2]);
  const std::string fixed =
      "Hello world! caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac 123 <s></s><|endoftext|> "
      "\xe2\x96\x81x  \n\t\xf0\x9f\x98\x80";
  for (const std::string* t : {&fixed, &text}) {
    RoundTrip(tok, *t, /*special=*/false, /*bos=*/true);
    RoundTrip(tok, *t, /*special=*/true, /*bos=*/false);
  }
  // Any id decodes safely after any other: ids from the text's bytes.
  int32_t prev = -1;
  for (size_t i = 0; i + 1 < text.size(); i += 2) {
    const uint32_t raw = static_cast<uint8_t>(text[i]) |
                         static_cast<uint32_t>(static_cast<uint8_t>(text[i + 1])) << 8;
    const int32_t id = static_cast<int32_t>(raw % tok.vocab_size());
    (void)tok.Decode(prev, id);
    prev = id;
  }
  return 0;
}
