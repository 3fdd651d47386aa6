// Helpers of the model loader's tests: a mutable, aligned copy of a model file, the
// message its load fails with, and the table-driven corruption test
// (model_corruption_test.cc, tokenizer_corruption_test.cc,
// family_config_corruption_test.cc).
#ifndef EMBER_RUNTIME_MODEL_MODEL_TEST_UTIL_H_
#define EMBER_RUNTIME_MODEL_MODEL_TEST_UTIL_H_

#include <cstdint>
#include <cstring>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model_generated.h"
#include "runtime/model/model.h"
#include "runtime/model/model_writer.h"

namespace ember::testing {

// A mutable, 16-byte aligned copy of a model file.
class Bytes {
 public:
  explicit Bytes(const std::vector<uint8_t>& bytes)
      : storage_((bytes.size() + 15) / 16 + 1), size_(bytes.size()) {
    memcpy(data(), bytes.data(), bytes.size());
  }
  uint8_t* data() { return reinterpret_cast<uint8_t*>(storage_.data()); }
  size_t size() const { return size_; }
  void Truncate(size_t size) { size_ = size; }
  fb::Model* root() { return fb::GetMutableSizePrefixedModel(data()); }
  fb::Tensor* tensor(const char* name) {
    auto* tensors = root()->mutable_tensors();
    for (flatbuffers::uoffset_t i = 0; i < tensors->size(); ++i) {
      if (strcmp(tensors->Get(i)->name()->c_str(), name) == 0) {
        return tensors->GetMutableObject(i);
      }
    }
    ADD_FAILURE() << "no tensor " << name;
    return nullptr;
  }

 private:
  struct alignas(16) Block {
    uint8_t b[16];
  };
  std::vector<Block> storage_;
  size_t size_;
};

inline std::string LoadError(Bytes& bytes) {
  auto model = Model::FromMemory(bytes.data(), bytes.size());
  return model.ok() ? std::string("loaded") : std::string(model.status().message());
}

struct Corruption {
  const char* name;
  std::function<void(Bytes&)> mutate;
  const char* expected_message;  // a fragment of the error
  std::function<void(ModelSpec&)> spec = nullptr;
};

inline void PrintTo(const Corruption& c, std::ostream* os) { *os << c.name; }

// TEST_P(CorruptionTest, IsRefusedWithItsOwnMessage) (model_corruption_test.cc) writes
// TinyModelSpec (changed by `spec`), changes its bytes by `mutate` and expects a load
// error containing `expected_message`.
class CorruptionTest : public ::testing::TestWithParam<Corruption> {};

// The tokenizer tables' cases (tokenizer_corruption_test.cc).
std::vector<Corruption> TokenizerCorruptions();

// The Config fields of current families (family_config_corruption_test.cc).
std::vector<Corruption> FamilyConfigCorruptions();

// Sets the element count a FlatBuffers vector declares (the uint32 before its data), as
// a writer with a bug would; the verifier only checks that the bytes exist.
template <typename V>
void SetLength(const V* vector, uint32_t length) {
  uint8_t* prefix =
      const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>(vector->Data())) -
      sizeof(uint32_t);
  memcpy(prefix, &length, sizeof(length));
}

}  // namespace ember::testing

#endif  // EMBER_RUNTIME_MODEL_MODEL_TEST_UTIL_H_
