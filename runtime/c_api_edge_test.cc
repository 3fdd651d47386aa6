// The C API at the edges of its integer arguments: SIZE_MAX, SIZE_MAX / 2 + 1, sums that
// wrap past SIZE_MAX, negative ints, INT32_MAX, for each entry that takes a size, count,
// index or position. Each is refused with a status and a message (or clamped where
// ember.h says so), never a crash, a wrapped size or a read past the caller's memory
// (ASan and UBSan builds run this too). A tiny model from memory: no model files needed.
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "gtest/gtest.h"
#include "tests/testing.h"
#include "tools/template/chat_program.h"

namespace ember {
namespace {

constexpr size_t kHalfPlusOne = SIZE_MAX / 2 + 1;

std::string LastError() { return ember_last_error(); }

// The tiny model with a chat template, loaded through the C API.
class CApiEdgeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ModelSpec spec = testing::TinyModelSpec();
    spec.tokenizer.chat_template =
        "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"
        "{% if add_generation_prompt %}[assistant]{% endif %}";
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

// keep + discard past the position, or wrapping past SIZE_MAX to a small sum, is refused
// and the session is as before (the wrapped sum once passed the check, moved rows from
// far outside the cache and corrupted the heap).
TEST_F(CApiEdgeTest, ShiftContextRangesThatWrap) {
  Prefill(10);
  struct Range {
    size_t keep, discard;
  };
  for (const Range& r :
       {Range{SIZE_MAX, 2}, Range{2, SIZE_MAX}, Range{SIZE_MAX, SIZE_MAX},
        Range{kHalfPlusOne, kHalfPlusOne}, Range{kHalfPlusOne + 3, kHalfPlusOne},
        Range{SIZE_MAX - 4, 8}, Range{11, 1}, Range{0, 11}, Range{10, 1}, Range{5, 0}}) {
    EXPECT_EQ(ember_session_shift_context(session_, r.keep, r.discard),
              EMBER_INVALID_ARGUMENT)
        << r.keep << " + " << r.discard;
    EXPECT_NE(LastError().find("context shift: cannot drop"), std::string::npos)
        << LastError();
    EXPECT_EQ(ember_session_position(session_), 10u);
  }
  EXPECT_EQ(ember_session_shift_context(session_, 0, 10), EMBER_OK) << LastError();
  EXPECT_EQ(ember_session_position(session_), 0u);
  Prefill(4);
  EXPECT_EQ(ember_session_shift_context(session_, 1, 3), EMBER_OK) << LastError();
  EXPECT_EQ(ember_session_position(session_), 1u);
}

}  // namespace
}  // namespace ember
