// Tests multi-head attention over a strided KV cache on every compiled target: each head
// against the scalar reference, and any split of the heads against one call over all.
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

void TestAttendHeads() {
  uint32_t seed = 41;
  struct Heads {
    size_t n_heads, n_kv_heads;
  };
  for (const Heads heads : {Heads{1, 1}, Heads{3, 3}, Heads{4, 2}, Heads{6, 1}}) {
    for (size_t head_dim : {1, 3, 8, 16, 20, 64, 65}) {
      for (size_t n_pos : {1, 2, 7, 33, 100}) {
        const size_t group = heads.n_heads / heads.n_kv_heads;
        // One extra column so rows do not start on a vector boundary.
        const size_t kv_stride = heads.n_kv_heads * head_dim + 1;
        const size_t probs_stride = n_pos + 3;
        test::Buffer q(heads.n_heads * head_dim, 1, seed++);
        test::Buffer keys(n_pos * kv_stride, 2, seed++, 2.0f);
        test::Buffer values(n_pos * kv_stride, 3, seed++);
        test::Buffer probs(heads.n_heads * probs_stride, 1, seed++);
        test::Buffer out(heads.n_heads * head_dim, 0, seed++);
        const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
        AttendHeads(q.data(), keys.data(), values.data(), kv_stride, n_pos, head_dim,
                    group, 0, heads.n_heads, scale, probs.data(), probs_stride,
                    out.data());
        for (size_t h = 0; h < heads.n_heads; ++h) {
          std::vector<float> expected_probs(n_pos), expected(head_dim);
          const size_t kv_col = h / group * head_dim;
          reference::Attend(q.data() + h * head_dim, keys.data() + kv_col,
                            values.data() + kv_col, kv_stride, n_pos, head_dim, scale,
                            expected_probs.data(), expected.data());
          test::ExpectClose(probs.data() + h * probs_stride, expected_probs.data(), n_pos,
                            1e-6f, 1e-5f, "probs");
          test::ExpectClose(out.data() + h * head_dim, expected.data(), head_dim, 1e-5f,
                            1e-4f, "out");
        }
        // Heads one at a time, then in blocks of two: bitwise the same as all at once.
        for (size_t block : {size_t{1}, size_t{2}}) {
          test::Buffer split_probs(heads.n_heads * probs_stride, 1, seed++);
          test::Buffer split_out(heads.n_heads * head_dim, 0, seed++);
          for (size_t h = 0; h < heads.n_heads; h += block) {
            const size_t n = heads.n_heads - h < block ? heads.n_heads - h : block;
            AttendHeads(q.data(), keys.data(), values.data(), kv_stride, n_pos, head_dim,
                        group, h, n, scale, split_probs.data() + h * probs_stride,
                        probs_stride, split_out.data());
          }
          for (size_t h = 0; h < heads.n_heads; ++h) {
            for (size_t t = 0; t < n_pos; ++t) {
              ASSERT_EQ(split_probs[h * probs_stride + t], probs[h * probs_stride + t]);
            }
          }
          for (size_t i = 0; i < heads.n_heads * head_dim; ++i) {
            ASSERT_EQ(split_out[i], out[i]) << "block " << block << " index " << i;
          }
        }
      }
    }
  }
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_BEFORE_TEST(AttentionTest);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestAttendHeads);
}  // namespace ember::kernels
#endif
