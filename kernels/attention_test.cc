// Tests single-head attention over a strided KV cache on every compiled target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/attention_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "kernels/attention-inl.h"
#include "kernels/reference.h"
#include "kernels/test_util.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {

void TestAttend() {
  uint32_t seed = 41;
  for (size_t head_dim : {1, 3, 8, 16, 20, 64, 65}) {
    for (size_t n_pos : {1, 2, 7, 33, 100}) {
      const size_t kv_stride = head_dim * 3 + 1;  // other heads interleaved in the cache
      test::Buffer q(head_dim, 1, seed++);
      test::Buffer keys(n_pos * kv_stride, 2, seed++, 2.0f);
      test::Buffer values(n_pos * kv_stride, 3, seed++);
      test::Buffer probs(n_pos, 1, seed++);
      test::Buffer out(head_dim, 0, seed++);
      std::vector<float> expected_probs(n_pos), expected(head_dim);
      const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
      reference::Attend(q.data(), keys.data(), values.data(), kv_stride, n_pos, head_dim,
                        scale, expected_probs.data(), expected.data());
      Attend(q.data(), keys.data(), values.data(), kv_stride, n_pos, head_dim, scale,
             probs.data(), out.data());
      test::ExpectClose(probs.data(), expected_probs.data(), n_pos, 1e-6f, 1e-5f,
                        "probs");
      test::ExpectClose(out.data(), expected.data(), head_dim, 1e-5f, 1e-4f, "out");
    }
  }
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_BEFORE_TEST(AttentionTest);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestAttend);
}  // namespace ember::kernels
#endif
