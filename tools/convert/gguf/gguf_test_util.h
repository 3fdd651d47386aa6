// Helpers of the GGUF importer's tests: import a file held in memory, find a tensor of a
// spec, and run a spec's model over a prompt.
#ifndef EMBER_TOOLS_CONVERT_GGUF_GGUF_TEST_UTIL_H_
#define EMBER_TOOLS_CONVERT_GGUF_GGUF_TEST_UTIL_H_

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/session.h"
#include "testing/testing.h"
#include "tools/convert/gguf/gguf_import.h"

namespace ember::tools::gguf_test {

inline Status Import(const std::string& bytes, const GgufImportOptions& options,
                     ModelSpec* spec, std::vector<std::string>* sources = nullptr) {
  auto file =
      GgufFile::Parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (!file.ok()) return file.status();
  return ImportGgufFile(**file, "test.gguf", options, spec, sources);
}

inline const TensorSpec& Find(const ModelSpec& spec, const std::string& name) {
  for (const TensorSpec& t : spec.tensors) {
    if (t.name == name) return t;
  }
  static const TensorSpec kNone;
  ADD_FAILURE() << "no tensor " << name;
  return kNone;
}

// The last position's logits after a prefill of `tokens`.
inline std::vector<float> Logits(const ModelSpec& spec,
                                 const std::vector<int32_t>& tokens) {
  testing::LoadedModel loaded = testing::LoadSpec(spec);
  if (!loaded.model) return {};
  auto session = Session::Create(*loaded.model, SessionOptions(), nullptr);
  EXPECT_TRUE(session.ok());
  EXPECT_TRUE(session->Prefill(tokens.data(), tokens.size()).ok());
  return std::vector<float>(session->logits(),
                            session->logits() + spec.config.vocab_size);
}

}  // namespace ember::tools::gguf_test

#endif  // EMBER_TOOLS_CONVERT_GGUF_GGUF_TEST_UTIL_H_
