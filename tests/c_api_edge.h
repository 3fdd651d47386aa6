// The fixture of the C API's edge tests (c_api_edge_test.cc, c_api_chat_edge_test.cc):
// a tiny model from memory with a chat template, and the sizes they try.
#ifndef EMBER_TESTS_C_API_EDGE_H_
#define EMBER_TESTS_C_API_EDGE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "gtest/gtest.h"
#include "testing/testing.h"
#include "tools/template/chat_program.h"

namespace ember {
namespace c_api_edge {

constexpr size_t kHalfPlusOne = SIZE_MAX / 2 + 1;

// AddressSanitizer and ThreadSanitizer end the process when an allocation of absurd
// size fails (unless allocator_may_return_null), where the library would return a
// status: such rows are left out under them.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizedAllocator = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitizedAllocator = true;
#else
constexpr bool kSanitizedAllocator = false;
#endif
#else
constexpr bool kSanitizedAllocator = false;
#endif

inline std::string LastError() { return ember_last_error(); }

// The tiny model with a chat template, loaded through the C API.
class CApiEdgeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ModelSpec spec = testing::TinyModelSpec();
    spec.tokenizer.chat_template =
        "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"
        "{% if add_generation_prompt %}[assistant]{% endif %}"
        "{% if strftime_now is defined %} {{ strftime_now('%Y-%m-%d %j %a') }}{% endif "
        "%}";
    ASSERT_TRUE(tools::CompileChatTemplate(&spec.tokenizer).ok());
    std::vector<uint8_t> raw;
    ASSERT_TRUE(SerializeModel(spec, &raw).ok());
    bytes_ = testing::AlignedBytes(raw);
    ASSERT_EQ(ember_model_from_memory(bytes_.data(), bytes_.size(), &model_), EMBER_OK)
        << LastError();
    ASSERT_EQ(ember_session_create(model_, nullptr, nullptr, nullptr, 0, &session_),
              EMBER_OK)
        << LastError();
  }
  void TearDown() override {
    ember_session_free(session_);
    ember_model_free(model_);
  }
  // Prefills n tokens (ids 3, 4, ...) at the session's position.
  void Prefill(size_t n) {
    std::vector<int32_t> ids(n);
    for (size_t i = 0; i < n; ++i) ids[i] = static_cast<int32_t>(3 + i);
    ASSERT_EQ(ember_prefill(session_, ids.data(), n), EMBER_OK) << LastError();
  }

  testing::AlignedBytes bytes_;
  ember_model* model_ = nullptr;
  ember_session* session_ = nullptr;
};

// Counts tokens; stops after `limit` (0: never).
struct Counter {
  size_t seen = 0, limit = 0;
};
inline int Count(void* user, int32_t, const char*, size_t) {
  auto* c = static_cast<Counter*>(user);
  ++c->seen;
  return c->limit == 0 || c->seen < c->limit;
}

}  // namespace c_api_edge
}  // namespace ember

#endif  // EMBER_TESTS_C_API_EDGE_H_
